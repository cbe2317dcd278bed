"""`Parser`: one EVTX input, read through one of the three libraries in batches."""

from __future__ import annotations

import ctypes
import itertools
import json
import os
import queue
import threading
import warnings
from datetime import datetime, timedelta, timezone
from itertools import repeat
from typing import Any, Iterator, NamedTuple

from . import _ffi
from ._filters import Filters

#: Entries per `evtx_parser_next_batch` call, and the rendered bytes after which a batch ends.
BATCH_ENTRIES = 8192
BATCH_BYTES = 16 << 20
#: Batches the read-ahead thread (threads != 1) may hold ready for the caller.
READ_AHEAD = 2
#: The read-ahead's first batch: ~1 ms of rendering, so the caller starts on it while the
#: helper renders the next, not after a whole `BATCH_ENTRIES` (PERF.md P14).
FIRST_ENTRIES = 1024

_FILETIME_EPOCH = datetime(1601, 1, 1, tzinfo=timezone.utc)

#: Records per call of the C helper (`_RECORD_DICTS`).
DICTS_STEP = 256
#: The keys of a record's dict, in order, and a dict of them that the C helper copies per record.
_KEYS = ("event_record_id", "timestamp", "data", "chunk", "offset", "recovered")
_TEMPLATE = dict.fromkeys(_KEYS)
#: `_ffi.record_dicts()`: the dicts of a batch without errors built in C (~3,400 instructions a
#: record fewer than the Python path below, PERF.md P17); None: the Python path.
_RECORD_DICTS = _ffi.record_dicts()


class EvtxError(Exception):
    """A failed open, a fatal failure, or (without `skip_errors`) a chunk or record error.

    Attributes: `file` (path or a description of the source), `kind` (the error KIND of
    shared-fixtures/README.md, such as ``"bad chunk magic"``), `detail` (the backend's
    message), `chunk`, `record` (the record identifier, None when unknown) and `offset`
    (file offset of the record, or of the chunk); the last three are None for failures of the
    whole input.
    """

    def __init__(self, file: str, kind: str, detail: str, chunk: int | None = None,
                 record: int | None = None, offset: int | None = None, status: int = 0):
        # Some backends start the detail with the KIND already.
        if detail.startswith(kind + ": "):
            detail = detail[len(kind) + 2:]
        self.file, self.kind, self.detail = file, kind, detail
        self.chunk, self.record, self.offset, self.status = chunk, record, offset, status
        if chunk is None:
            text = f"{file}: {kind}: {detail}"
        else:
            # The CLIs' error line, without its `error: ` prefix.
            rec = "-" if record is None else record
            text = f"{file}: chunk {chunk}, record {rec}, offset {offset:#x}: {kind}: {detail}"
        super().__init__(text)


class EvtxWarning(UserWarning):
    """A chunk or record error skipped under `skip_errors=True`; the text names the file,
    chunk, record and offset. `.error` is the `EvtxError` it stands for."""

    def __init__(self, error: EvtxError):
        super().__init__(str(error))
        self.error = error


class RawBatch(NamedTuple):
    """One `evtx_batch`, copied out of the library: `count` entries, `data` the entries'
    bytes back to back, the other fields the little-endian column buffers of the header."""

    count: int
    data: bytes
    offsets: bytes  # count + 1 x u64
    record_ids: bytes  # u64
    filetimes: bytes  # u64
    file_offsets: bytes  # u64
    chunk_indexes: bytes  # u32
    statuses: bytes  # u32
    recovered: bytes  # u8
    #: The batch's `RawSystem`, when asked for.
    system: "RawSystem | None" = None
    #: The batch's timestamp texts (`evtx_parser_batch_timestamps`) as (data, count + 1 u64
    #: offsets), when asked for.
    timestamps: "tuple | None" = None


class _Borrowed(NamedTuple):
    """A batch's texts left in the library's buffer: address and size in bytes."""

    address: int
    size: int


class RawSystem(NamedTuple):
    """One `evtx_batch_system`, copied out of the library: each string column as its data and
    its count + 1 u64 offsets, then the u32 event ids, u8 levels and u8 `present` bits."""

    provider: tuple  # (data, offsets)
    channel: tuple
    computer: tuple
    event_ids: bytes
    levels: bytes
    present: bytes


def _strings(data, offsets, n: int) -> tuple:
    raw = ctypes.string_at(offsets, 8 * (n + 1))
    total = memoryview(raw).cast("Q")[n]
    return (ctypes.string_at(data, total) if total else b"", raw)


def _seconds_text(seconds: int) -> str | None:
    """The FILETIME second `seconds` as ``YYYY-MM-DDTHH:MM:SS``, None past year 9999."""
    try:
        return f"{_FILETIME_EPOCH + timedelta(seconds=seconds):%Y-%m-%dT%H:%M:%S}"
    except OverflowError:
        return None


def timestamp_text(filetime: int) -> str | None:
    """A FILETIME as pyevtx-rs (0.14) gives `timestamp`: RFC 3339 with the 100 ns ticks, trailing
    zeros trimmed, then `` UTC`` (``2025-01-06T07:58:14.6210546Z UTC``); None for 0."""
    if filetime == 0:
        return None
    seconds, ticks = divmod(filetime, 10_000_000)
    text = _seconds_text(seconds)
    if text is None:
        return None
    return f"{text}.{ticks:07d}".rstrip("0") + "Z UTC" if ticks else f"{text}Z UTC"


def _stamp_texts(raw: tuple) -> list[str | None]:
    """The library's timestamp texts of one batch (ASCII, empty for None), as `str`s: one
    decode per batch and a slice per record."""
    data, offsets = raw
    text = data.decode("ascii")
    bounds = memoryview(offsets).cast("Q").tolist()
    return [text[start:end] or None for start, end in zip(bounds, bounds[1:])]


class _Records(itertools.chain):
    """The records of `records()` / `records_json()`: a C-level chain of per-batch iterators,
    with a generator's `close()` (it stops the read-ahead thread and frees the parser)."""

    _batches: Any = None

    def close(self) -> None:
        if self._batches is not None:
            self._batches.close()


class _Handle:
    """An open `evtx_parser`, owning everything the library reads through it: the source
    bytes (`open_buffer` does not copy them), the options and the codec label. Freed once."""

    def __init__(self, lib: ctypes.CDLL, parser: "Parser", fmt: int, workers: int):
        self.lib = lib
        self.ptr = _ffi.ParserHandle()
        self.options = _ffi.Options()
        lib.evtx_options_init_v1(ctypes.byref(self.options))
        o = self.options
        o.format = fmt
        o.threads = workers
        o.indent = 1
        o.show_record_number = 0
        o.separate_json_attributes = int(parser.separate_json_attributes)
        o.validate_checksums = int(parser.validate_checksums)
        o.recover_records = int(parser.recover_records)
        self.codec = parser.ansi_codec.encode("ascii")
        o.ansi_codec = self.codec
        o.mta_path = parser._mta
        o.wevt_cache_path = parser._wevt_cache
        # The arrays the filter fields point to live as long as the parser's `Filters`.
        self.filters = parser.filters
        self.filters.apply(o)
        # The bytes stay referenced by this handle until `close`, after the library is done.
        self.data = parser._data
        if self.data is not None:
            status = lib.evtx_parser_open_buffer(
                self.data, len(self.data), ctypes.byref(o), ctypes.byref(self.ptr)
            )
        else:
            status = lib.evtx_parser_open_path(
                parser._path, ctypes.byref(o), ctypes.byref(self.ptr)
            )
        if status != _ffi.STATUS_OK:
            self.ptr = None
            raise parser._failure(status)

    def close(self) -> None:
        if self.ptr:
            self.lib.evtx_parser_free(self.ptr)
        self.ptr = None
        self.data = None

    def __del__(self):
        self.close()


def _option_path(path: Any, name: str) -> bytes | None:
    """A path option as the C ABI takes it (NUL-terminated bytes), None when off."""
    if path is None:
        return None
    if not isinstance(path, (str, bytes, os.PathLike)):
        raise TypeError(f"{name} must be a path or None")
    encoded = os.fsencode(path)
    if b"\0" in encoded:
        raise ValueError(f"the {name} path contains a NUL byte")
    return encoded


class Parser:
    """One EVTX input (a path, ``bytes``, or a binary file object), read by one engine.

    Every iteration opens its own handle, so `records()`, `records_json()` and `to_arrow()`
    may be called any number of times. ``bytes`` are used in place (not copied) and kept alive
    by the parser and by every open handle; other buffers (``bytearray``, ``memoryview``) are
    copied once, since their contents could change under the library; a file object is read
    into memory (no temporary file).

    engine: ``"rust"``, ``"zig"`` or ``"reference"`` (evtx 0.15.1, for comparisons).
    threads: threads busy at once (0 = one per CPU); the output does not depend on it. 1: the
    engine renders on the caller's thread. Any other value: the batches are pulled on a
    read-ahead thread, so the engine renders while the caller's thread builds dicts or Arrow
    arrays (PERF.md P3), with ``threads - 1`` workers: threads=2 is the caller's thread and one
    rendering thread, not a third on two cores (P13).
    validate_checksums, recover_records, ansi_codec, separate_json_attributes: as the CLI's
    ``--validate-checksums``, ``--recover-records``, ``--ansi-codec``,
    ``--separate-json-attributes``.
    mta, wevt_cache: paths (or None), as the CLI's ``--mta FILE`` and ``--wevt-cache FILE``;
    a file that cannot be read or is refused raises `EvtxError` at the first iteration.
    skip_errors: chunk and record errors become `EvtxWarning` warnings instead of `EvtxError`
    exceptions (a file that cannot be opened at all still raises).
    event_ids, levels, providers, channels, since, until: record filters, as the CLI's
    ``--event-id``, ``--level``, ``--provider``, ``--channel``, ``--since``, ``--until``
    (AND between them, OR inside one), decided by the engine before rendering, so the records
    they drop cost little; errors are still reported. event_ids and levels: ints, ``(first,
    last)`` tuples, ranges or the CLI's LIST text (``"4624,4700-4799"``); providers and
    channels: a name or names (whole, ASCII case-insensitive); since (inclusive) and until
    (exclusive): aware datetimes, RFC 3339 text (``"2024-05-01T08:00:00Z"``) or FILETIME ints.
    Bad values raise ValueError or TypeError here.
    """

    def __init__(self, source: Any, *, engine: str = "rust", threads: int = 1,
                 validate_checksums: bool = False, recover_records: bool = False,
                 ansi_codec: str = "windows-1252", separate_json_attributes: bool = False,
                 skip_errors: bool = False, mta: Any = None, wevt_cache: Any = None,
                 event_ids: Any = None, levels: Any = None, providers: Any = None,
                 channels: Any = None, since: Any = None, until: Any = None):
        self.engine = engine
        self._lib = _ffi.load(engine)
        if not isinstance(threads, int) or not 0 <= threads <= 0xFFFFFFFF:
            raise ValueError("threads must be an int in 0..=2**32-1")
        self.threads = threads
        self.validate_checksums = bool(validate_checksums)
        self.recover_records = bool(recover_records)
        if not isinstance(ansi_codec, str) or not ansi_codec.isascii() or "\0" in ansi_codec:
            raise ValueError("ansi_codec must be an ASCII encoding label")
        self.ansi_codec = ansi_codec
        self.separate_json_attributes = bool(separate_json_attributes)
        self.skip_errors = bool(skip_errors)
        self._mta = _option_path(mta, "mta")
        self._wevt_cache = _option_path(wevt_cache, "wevt_cache")
        self.filters = Filters(event_ids, levels, providers, channels, since, until)
        self._path: bytes | None = None
        self._data: bytes | None = None
        if isinstance(source, (str, os.PathLike)):
            self._path = os.fsencode(source)
            if b"\0" in self._path:
                raise ValueError("the path contains a NUL byte")
            self.name = os.fsdecode(source)
        elif isinstance(source, bytes):
            self._data = source
            self.name = "<bytes>"
        elif isinstance(source, (bytearray, memoryview)):
            self._data = bytes(source)
            self.name = "<buffer>"
        elif hasattr(source, "read"):
            data = source.read()
            if not isinstance(data, (bytes, bytearray, memoryview)):
                raise TypeError("the file object must be opened in binary mode")
            self._data = bytes(data)
            self.name = str(getattr(source, "name", "<file object>"))
        else:
            raise TypeError(
                "source must be a path, bytes or a binary file object, "
                f"not {type(source).__name__}"
            )

    def __repr__(self) -> str:
        return f"Parser({self.name!r}, engine={self.engine!r})"

    # -- errors -------------------------------------------------------------------------

    def _failure(self, status: int) -> EvtxError:
        # Every library names every status alike (rust/evtx-abi's table, checked by evtx-bench).
        kind = self._lib.evtx_status_name(status).decode()
        detail = self._lib.evtx_last_error().decode("utf-8", "replace")
        return EvtxError(self.name, kind, detail, status=status)

    def _entry_error(
        self, status: int, message: bytes, chunk: int, record: int, offset: int
    ) -> EvtxError:
        kind = self._lib.evtx_status_name(status).decode()
        return EvtxError(self.name, kind, message.decode("utf-8", "replace"), chunk,
                         None if record == _ffi.RECORD_ID_UNKNOWN else record, offset, status)

    def _report(self, error: EvtxError) -> None:
        """Raises `error`, or warns with it under `skip_errors`."""
        if not self.skip_errors:
            raise error
        warnings.warn(EvtxWarning(error), stacklevel=4)

    # -- batches ------------------------------------------------------------------------

    def batches(self, format: str = "jsonl", system: bool = False,
                timestamps: bool = False) -> Iterator[RawBatch]:
        """The input as `RawBatch`es of up to 8192 entries (records and errors), rendered as
        ``"jsonl"``, ``"json"`` or ``"xml"`` (no ``Record N`` banner). Errors are entries
        here; they are neither raised nor warned about. With ``system=True`` (JSON formats)
        each batch carries its System columns from the library (`RawSystem`); with
        ``timestamps=True`` its `timestamp_text`s, formatted by the library."""
        fmt = {"xml": _ffi.FORMAT_XML, "json": _ffi.FORMAT_JSON, "jsonl": _ffi.FORMAT_JSONL}[format]
        if self.threads == 1:
            handle = _Handle(self._lib, self, fmt, 1)
            try:
                yield from self._pull(handle, system, timestamps)
            finally:
                handle.close()
            return
        # The read-ahead thread is one of `threads`: the engine renders with the others (one
        # when threads=2), so the caller's thread is not a third on two cores (PERF.md P13).
        total = self.threads or os.cpu_count() or 1
        handle = _Handle(self._lib, self, fmt, max(total - 1, 1))
        yield from self._read_ahead(handle, system, timestamps)

    def _pull(self, handle: "_Handle", system: bool, timestamps: bool = False,
              first: int = BATCH_ENTRIES, borrow: bool = False) -> Iterator[RawBatch]:
        """The batches of `handle`, each copied out of the library before the next call: the
        first of up to `first` entries, then `BATCH_ENTRIES`. With `borrow`, `data` is not
        copied but a `_Borrowed` address, valid until the generator is resumed."""
        entries = first
        batch = _ffi.Batch()
        fields = _ffi.BatchSystem()
        texts = _ffi.BatchTexts()
        next_batch = self._lib.evtx_parser_next_batch
        while True:
            status = next_batch(handle.ptr, entries, BATCH_BYTES, ctypes.byref(batch))
            entries = BATCH_ENTRIES
            if status == _ffi.STATUS_END:
                return
            if status != _ffi.STATUS_OK:
                raise self._failure(status)
            n = batch.count
            columns = None
            if system:
                status = self._lib.evtx_parser_batch_system(handle.ptr, ctypes.byref(fields))
                if status != _ffi.STATUS_OK:
                    raise self._failure(status)
                assert fields.count == n
                columns = RawSystem(
                    _strings(fields.provider_data, fields.provider_offsets, n),
                    _strings(fields.channel_data, fields.channel_offsets, n),
                    _strings(fields.computer_data, fields.computer_offsets, n),
                    ctypes.string_at(fields.event_ids, 4 * n),
                    ctypes.string_at(fields.levels, n),
                    ctypes.string_at(fields.present, n),
                )
            stamps = None
            if timestamps:
                status = self._lib.evtx_parser_batch_timestamps(handle.ptr, ctypes.byref(texts))
                if status != _ffi.STATUS_OK:
                    raise self._failure(status)
                assert texts.count == n
                stamps = _strings(texts.data, texts.offsets, n)
            offsets = ctypes.string_at(batch.offsets, 8 * (n + 1))
            total = memoryview(offsets).cast("Q")[n]
            if borrow and total:
                data: Any = _Borrowed(batch.data, total)
            else:
                data = ctypes.string_at(batch.data, total) if total else b""
            yield RawBatch(
                n,
                data,
                offsets,
                ctypes.string_at(batch.record_ids, 8 * n),
                ctypes.string_at(batch.filetimes, 8 * n),
                ctypes.string_at(batch.file_offsets, 8 * n),
                ctypes.string_at(batch.chunk_indexes, 4 * n),
                ctypes.string_at(batch.statuses, 4 * n),
                ctypes.string_at(batch.recovered, n),
                columns,
                stamps,
            )

    def _read_ahead(self, handle: "_Handle", system: bool, timestamps: bool) -> Iterator[RawBatch]:
        """`_pull` on a helper thread, up to `READ_AHEAD` batches ahead of the caller: the
        library renders (ctypes drops the GIL during the call) while the caller's Python code
        turns the previous batch into dicts or Arrow arrays. The handle is used by the helper
        thread only, and freed after it has stopped."""
        ready: queue.Queue = queue.Queue(READ_AHEAD)
        stop = threading.Event()

        def produce():
            try:
                for raw in self._pull(handle, system, timestamps, FIRST_ENTRIES):
                    while not stop.is_set():
                        try:
                            ready.put((raw, None), timeout=0.1)
                            break
                        except queue.Full:
                            continue
                    if stop.is_set():
                        return
                item = (None, None)
            except BaseException as error:  # handed to the caller, raised there
                item = (None, error)
            while not stop.is_set():
                try:
                    ready.put(item, timeout=0.1)
                    return
                except queue.Full:
                    continue

        worker = threading.Thread(target=produce, name="evtx_twin read-ahead", daemon=True)
        worker.start()
        try:
            while True:
                raw, error = ready.get()
                if error is not None:
                    raise error
                if raw is None:
                    return
                yield raw
        finally:
            stop.set()
            worker.join()
            handle.close()

    def _records(self, format: str) -> Iterator[dict]:
        # One iterator of dicts per batch, chained in C: no Python frame per record but the
        # dict display's own.
        batches = self._record_batches(format)
        records = _Records.from_iterable(batches)
        records._batches = batches
        return records

    def _record_batches(self, format: str) -> Iterator[Iterator[dict]]:
        # JSONL ends each record with one newline; XML with a blank line.
        trim = 1 if format == "jsonl" else 2
        dicts = _RECORD_DICTS
        for b in self._text_batches(format, dicts is not None):
            n = b.count
            data = b.data
            if isinstance(data, _Borrowed):
                if b.statuses.count(0) != len(b.statuses):
                    # The Python path below takes bytes.
                    b = b._replace(data=ctypes.string_at(data.address, data.size))
                else:
                    data = data.address, data.size
            else:
                data = data, len(data)
            if dicts is not None and b.statuses.count(0) == len(b.statuses):
                # No errors: the dicts made in C, `DICTS_STEP` a call (lists, chained like the
                # generators below; a few hundred at a time, so the dicts not yet consumed stay
                # in the cache, as the generators' one at a time did).
                stamp_data, stamp_offsets = b.timestamps
                for first in range(0, n, DICTS_STEP):
                    yield dicts(_TEMPLATE, _KEYS, first, min(DICTS_STEP, n - first), n, *data,
                                b.offsets, b.record_ids, stamp_data, stamp_offsets,
                                b.chunk_indexes, b.file_offsets, b.recovered, trim)
                continue
            ids = memoryview(b.record_ids).cast("Q").tolist()
            chunks = memoryview(b.chunk_indexes).cast("I").tolist()
            file_offsets = memoryview(b.file_offsets).cast("Q").tolist()
            stamps = _stamp_texts(b.timestamps)
            # `bytes.count` runs in C: no int object per entry to learn that none is flagged
            # (or failed), the common case.
            recovered = repeat(False) if b.recovered.count(0) == n else list(map(bool, b.recovered))
            if b.statuses.count(0) != len(b.statuses):
                yield self._mixed_batch(b, trim, ids, stamps, chunks, file_offsets,
                                        list(map(bool, b.recovered)))
                continue
            # No errors: every entry is a record, sliced inside the dict display (one generator
            # per batch, no list of texts: each dict and its text are freed as the caller
            # drops them, so the allocator reuses warm memory; PERF.md P11).
            offsets = memoryview(b.offsets).cast("Q").tolist()
            rows = zip(ids, stamps, offsets, offsets[1:], chunks, file_offsets, recovered)
            if b.data.isascii():
                # ASCII: character offsets are byte offsets, so one decode per batch and a str
                # slice per record. (`str.split` on the newline would be one call, but
                # CPython's one-character split scans per character and re-checks each part:
                # 8 instructions a byte, 3x the slices.)
                text = b.data.decode("ascii")
                yield ({"event_record_id": rid, "timestamp": stamp, "data": text[start:end - trim],
                        "chunk": chunk, "offset": offset, "recovered": flag}
                       for rid, stamp, start, end, chunk, offset, flag in rows)
            else:
                # Any other byte (most batches of real logs hold a few names with accents):
                # a bytes slice and a decode per record, cheaper than a memoryview's (P11).
                data = b.data
                yield ({"event_record_id": rid, "timestamp": stamp,
                        "data": data[start:end - trim].decode(), "chunk": chunk, "offset": offset,
                        "recovered": flag}
                       for rid, stamp, start, end, chunk, offset, flag in rows)

    def _text_batches(self, format: str, borrow: bool) -> Iterator[RawBatch]:
        """`batches(format, timestamps=True)`; with `borrow` and threads=1, the texts are not
        copied out of the library (`_Borrowed`): the C dicts of a batch are all made before the
        generator is resumed, so before the library's next call reuses the buffer. That copy
        was ~11 ms of ~100 on security-30mb, most of it page faults of fresh 9 MB `bytes`
        (PERF.md P17)."""
        if not borrow or self.threads != 1:
            yield from self.batches(format, timestamps=True)
            return
        fmt = {"xml": _ffi.FORMAT_XML, "json": _ffi.FORMAT_JSON, "jsonl": _ffi.FORMAT_JSONL}[format]
        handle = _Handle(self._lib, self, fmt, 1)
        try:
            yield from self._pull(handle, False, True, borrow=True)
        finally:
            handle.close()

    def _mixed_batch(self, b, trim, ids, stamps, chunks, file_offsets, recovered) -> Iterator[dict]:
        """A batch holding errors: its records, with each error raised or warned in order."""
        offsets = memoryview(b.offsets).cast("Q").tolist()
        statuses = memoryview(b.statuses).cast("I").tolist()
        whole = b.data.isascii()
        text = b.data.decode("ascii") if whole else ""
        for i in range(b.count):
            if statuses[i] != _ffi.STATUS_OK:
                raw = b.data[offsets[i]:offsets[i + 1]]
                error = self._entry_error(statuses[i], raw, chunks[i], ids[i], file_offsets[i])
                self._report(error)
                continue
            yield self._record(b, text, whole, offsets, i, trim, ids, stamps, chunks,
                               file_offsets, recovered)

    @staticmethod
    def _record(
        b, text, whole, offsets, i, trim, ids, stamps, chunks, file_offsets, recovered
    ) -> dict:
        start, end = offsets[i], offsets[i + 1] - trim
        return {
            "event_record_id": ids[i],
            "timestamp": stamps[i],
            "data": text[start:end] if whole else b.data[start:end].decode(),
            "chunk": chunks[i],
            "offset": file_offsets[i],
            "recovered": recovered[i],
        }

    def records(self) -> Iterator[dict]:
        """Every record as a dict: ``event_record_id``, ``timestamp`` (text, as pyevtx-rs),
        ``data`` (the record's XML, as the CLI's ``-o xml`` prints it, without the banner
        and the blank line after it), ``chunk``, ``offset`` (file offset) and ``recovered``."""
        return self._records("xml")

    def records_json(self, parsed: bool = False) -> Iterator[dict]:
        """Every record as `records()` does, with ``data`` the record's JSON: the line
        ``evtx-rs -o jsonl`` prints for it (without the newline), or with ``parsed=True`` that
        line already parsed by `json.loads`."""
        if not parsed:
            return self._records("jsonl")
        return ({**r, "data": json.loads(r["data"])} for r in self._records("jsonl"))

    def to_arrow(self):
        """The whole input as a `pyarrow.Table`, built batch by batch with Arrow kernels (no
        Python object per record); see `evtx_twin.arrow.SCHEMA` for the columns."""
        from . import arrow

        return arrow.table(self)
