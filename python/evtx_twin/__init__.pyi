from datetime import datetime
from os import PathLike
from typing import (Any, BinaryIO, Iterable, Iterator, Literal, NamedTuple, TypedDict, Union,
                    overload)

import pyarrow

__version__: str

Engine = Literal["rust", "zig", "reference"]
Source = Union[str, PathLike[str], bytes, bytearray, memoryview, BinaryIO]
#: An event id or level filter item: an id, an inclusive (first, last), a range, LIST text.
Ids = Union[int, tuple[int, int], range, str]
#: A time bound: an aware datetime, RFC 3339 text, a FILETIME.
Time = Union[datetime, str, int]

class Record(TypedDict):
    event_record_id: int
    timestamp: str | None
    data: str
    chunk: int
    offset: int
    recovered: bool

class ParsedRecord(TypedDict):
    event_record_id: int
    timestamp: str | None
    data: dict[str, Any]
    chunk: int
    offset: int
    recovered: bool

class RawSystem(NamedTuple):
    provider: tuple[bytes, bytes]
    channel: tuple[bytes, bytes]
    computer: tuple[bytes, bytes]
    event_ids: bytes
    levels: bytes
    present: bytes

class RawBatch(NamedTuple):
    count: int
    data: bytes
    offsets: bytes
    record_ids: bytes
    filetimes: bytes
    file_offsets: bytes
    chunk_indexes: bytes
    statuses: bytes
    recovered: bytes
    system: RawSystem | None
    timestamps: tuple[bytes, bytes] | None

class EvtxError(Exception):
    file: str
    kind: str
    detail: str
    chunk: int | None
    record: int | None
    offset: int | None
    status: int
    def __init__(self, file: str, kind: str, detail: str, chunk: int | None = ..., record: int | None = ...,
                 offset: int | None = ..., status: int = ...) -> None: ...

class EvtxWarning(UserWarning):
    error: EvtxError
    def __init__(self, error: EvtxError) -> None: ...

class Parser:
    engine: Engine
    name: str
    threads: int
    validate_checksums: bool
    recover_records: bool
    ansi_codec: str
    separate_json_attributes: bool
    skip_errors: bool
    def __init__(self, source: Source, *, engine: Engine = "rust", threads: int = 1,
                 validate_checksums: bool = False, recover_records: bool = False,
                 ansi_codec: str = "windows-1252", separate_json_attributes: bool = False,
                 skip_errors: bool = False, mta: str | PathLike[str] | None = None,
                 wevt_cache: str | PathLike[str] | None = None,
                 event_ids: Ids | Iterable[Ids] | None = None,
                 levels: Ids | Iterable[Ids] | None = None,
                 providers: str | Iterable[str] | None = None,
                 channels: str | Iterable[str] | None = None,
                 since: Time | None = None, until: Time | None = None) -> None: ...
    def batches(self, format: Literal["jsonl", "json", "xml"] = "jsonl", system: bool = False,
                timestamps: bool = False) -> Iterator[RawBatch]: ...
    def records(self) -> Iterator[Record]: ...
    @overload
    def records_json(self, parsed: Literal[False] = False) -> Iterator[Record]: ...
    @overload
    def records_json(self, parsed: Literal[True]) -> Iterator[ParsedRecord]: ...
    def to_arrow(self) -> pyarrow.Table: ...

def timestamp_text(filetime: int) -> str | None: ...
def backend_version(engine: Engine = "rust") -> str: ...
def triage(
    paths: Union[str, PathLike[str], Iterable[Union[str, PathLike[str]]]],
    silence: int = 3600,
    engine: Engine = "rust",
) -> dict[str, Any]: ...
