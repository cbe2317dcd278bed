"""`Parser.to_arrow()`: batches of `evtx_parser_next_batch` straight into Arrow arrays.

The library's column buffers become Arrow buffers as they are (one copy out of the library);
the `json` column is the batch's JSONL bytes without the newlines (one more copy, no UTF-8
re-validation) with per-record offsets, one chunk per batch; the System fields come
from the library too (`evtx_parser_batch_system`: string data plus offsets, integers, and
`present` bits that become the validity bitmaps). No Python object is made per record.
"""

from __future__ import annotations

import pyarrow as pa
import pyarrow.compute as pc

from . import _ffi, _parser

#: The columns of `to_arrow()` (the fleet runner adds `source_file`).
SCHEMA = pa.schema([
    ("event_record_id", pa.uint64()),
    ("timestamp", pa.timestamp("ns", tz="UTC")),
    ("provider", pa.string()),
    ("event_id", pa.uint32()),
    ("level", pa.uint8()),
    ("channel", pa.string()),
    ("computer", pa.string()),
    ("chunk", pa.uint32()),
    ("offset", pa.uint64()),
    ("recovered", pa.bool_()),
    ("json", pa.large_string()),
])

# FILETIME of 1970-01-01 and the FILETIME range a timestamp[ns] holds (1677..2262).
_UNIX_EPOCH_FILETIME = 116_444_736_000_000_000
_NS_MIN_FILETIME = _UNIX_EPOCH_FILETIME - (2**63 - 1) // 100
_NS_MAX_FILETIME = _UNIX_EPOCH_FILETIME + (2**63 - 1) // 100

# The kernels' constant operands as Arrow scalars, made once. A Python int passed to a kernel
# is converted to a scalar on every call, and each conversion (in pyarrow 26) tries to import
# `dateutil.relativedelta`, a whole failed search of sys.path when dateutil is not installed:
# 12 of them a batch (PERF.md P15). `pa.scalar(int)` is the int64 scalar the kernels were
# given before, so the dispatch and the results are unchanged.
_ZERO = pa.scalar(0)
_HUNDRED = pa.scalar(100)
_UNIX_EPOCH = pa.scalar(_UNIX_EPOCH_FILETIME)
_NS_MIN = pa.scalar(_NS_MIN_FILETIME)
_NS_MAX = pa.scalar(_NS_MAX_FILETIME)
_NULL_U64 = pa.scalar(None, pa.uint64())
_STATUS_OK = pa.scalar(_ffi.STATUS_OK)
_BITS = {bit: pa.scalar(bit, pa.uint8()) for bit in (
    _ffi.SYSTEM_PROVIDER, _ffi.SYSTEM_EVENT_ID, _ffi.SYSTEM_LEVEL, _ffi.SYSTEM_CHANNEL,
    _ffi.SYSTEM_COMPUTER)}


def _u64(buffer: bytes, n: int) -> pa.Array:
    return pa.Array.from_buffers(pa.uint64(), n, [None, pa.py_buffer(buffer)])


def _system(raw_system, n: int) -> dict:
    """The library's System columns as Arrow arrays; an absent field is null."""
    present = pa.Array.from_buffers(pa.uint8(), n, [None, pa.py_buffer(raw_system.present)])

    def validity(bit: int):
        # A boolean array's values are a bitmap: exactly Arrow's validity layout.
        return pc.not_equal(pc.bit_wise_and(present, _BITS[bit]), _ZERO).buffers()[1]

    def strings(column, bit):
        data, offsets = column
        return pa.Array.from_buffers(pa.large_string(), n, [validity(bit), pa.py_buffer(offsets),
                                                             pa.py_buffer(data)]).cast(pa.string())

    return {
        "provider": strings(raw_system.provider, _ffi.SYSTEM_PROVIDER),
        "event_id": pa.Array.from_buffers(pa.uint32(), n, [validity(_ffi.SYSTEM_EVENT_ID),
                                                           pa.py_buffer(raw_system.event_ids)]),
        "level": pa.Array.from_buffers(pa.uint8(), n, [validity(_ffi.SYSTEM_LEVEL),
                                                       pa.py_buffer(raw_system.levels)]),
        "channel": strings(raw_system.channel, _ffi.SYSTEM_CHANNEL),
        "computer": strings(raw_system.computer, _ffi.SYSTEM_COMPUTER),
    }


def _timestamps(filetimes: pa.Array) -> pa.Array:
    inside = pc.and_(pc.greater(filetimes, _ZERO),
                     pc.and_(pc.greater_equal(filetimes, _NS_MIN),
                             pc.less_equal(filetimes, _NS_MAX)))
    signed = pc.subtract(pc.cast(pc.if_else(inside, filetimes, _NULL_U64), pa.int64()),
                         _UNIX_EPOCH)
    return pc.multiply(signed, _HUNDRED).cast(pa.timestamp("ns", tz="UTC"))


#: 0, 1, 2, ... as offsets: entry i of a batch starts i newlines after its text (lazily built).
_ARANGE: list = []


def _json_column(raw) -> pa.Array:
    """The batch's JSONL texts without their newlines, as a `large_string` array: one copy of
    the bytes with every newline removed (`bytes.replace`, a memchr loop) and the offsets
    moved back by one per entry before it. A JSONL text holds no raw newline (JSON escapes
    control characters in strings, and the engines print no whitespace between tokens), so
    the newlines are exactly the `count` separators; the length check guards that, else the
    per-entry slice is taken. The engines write UTF-8, so the column is not re-validated
    (`binary_slice` + `cast` copied and validated all 45 MB of security-30mb; PERF.md P12)."""
    n = raw.count
    data = raw.data.replace(b"\n", b"")
    if len(data) != len(raw.data) - n:
        texts = pa.Array.from_buffers(pa.large_binary(), n, [None, pa.py_buffer(raw.offsets),
                                                             pa.py_buffer(raw.data)])
        return pc.binary_slice(texts, 0, -1).cast(pa.large_string())
    if not _ARANGE or len(_ARANGE[0]) < n + 1:
        _ARANGE[:] = [pa.array(range(max(n + 1, _parser.BATCH_ENTRIES + 1)), pa.uint64())]
    spans = pa.Array.from_buffers(pa.uint64(), n + 1, [None, pa.py_buffer(raw.offsets)])
    offsets = pc.subtract(spans, _ARANGE[0].slice(0, n + 1)).buffers()[1]
    # uint64 offsets below 2**63 have the bits of the int64 offsets `large_string` takes.
    return pa.Array.from_buffers(pa.large_string(), n, [None, offsets, pa.py_buffer(data)])


def batch_table(parser, raw) -> pa.Table:
    """One `RawBatch` (JSONL) as a table of `SCHEMA`; errors are reported through the
    parser (raised, or warned under skip_errors) and left out."""
    n = raw.count
    statuses = pa.Array.from_buffers(pa.uint32(), n, [None, pa.py_buffer(raw.statuses)])
    texts = pa.Array.from_buffers(
        pa.large_binary(), n, [None, pa.py_buffer(raw.offsets), pa.py_buffer(raw.data)]
    )
    ok = pc.equal(statuses, _STATUS_OK)
    failed = n - pc.sum(ok.cast(pa.int64())).as_py() if n else 0
    if failed:
        ids = memoryview(raw.record_ids).cast("Q")
        chunks = memoryview(raw.chunk_indexes).cast("I")
        offs = memoryview(raw.file_offsets).cast("Q")
        sts = memoryview(raw.statuses).cast("I")
        for i in pc.indices_nonzero(pc.invert(ok)).to_pylist():
            error = parser._entry_error(sts[i], texts[i].as_py(), chunks[i], ids[i], offs[i])
            parser._report(error)
    columns = {
        **_system(raw.system, n),
        "event_record_id": _u64(raw.record_ids, n),
        "filetime": _u64(raw.filetimes, n),
        "chunk": pa.Array.from_buffers(pa.uint32(), n, [None, pa.py_buffer(raw.chunk_indexes)]),
        "offset": _u64(raw.file_offsets, n),
        "recovered": pc.not_equal(
            pa.Array.from_buffers(pa.uint8(), n, [None, pa.py_buffer(raw.recovered)]), _ZERO),
        "text": texts,
    }
    if failed:
        columns = {k: pc.filter(v, ok) for k, v in columns.items()}
        # JSONL: every text ends with its one newline, which the column leaves out.
        json_col = pc.binary_slice(columns["text"], 0, -1).cast(pa.large_string())
    else:
        json_col = _json_column(raw)
    out = {
        "event_record_id": columns["event_record_id"],
        "timestamp": _timestamps(columns["filetime"]),
        "provider": columns["provider"],
        "event_id": columns["event_id"],
        "level": columns["level"],
        "channel": columns["channel"],
        "computer": columns["computer"],
        "chunk": columns["chunk"],
        "offset": columns["offset"],
        "recovered": columns["recovered"],
        "json": json_col,
    }
    return pa.Table.from_pydict(out, schema=SCHEMA)


def batches(parser):
    """The input as a stream of `pyarrow.Table`s of `SCHEMA`, one per library batch."""
    for raw in parser.batches("jsonl", system=True):
        yield batch_table(parser, raw)


def table(parser) -> pa.Table:
    """The whole input as one `pyarrow.Table` of `SCHEMA`, one chunk per library batch.

    The chunks are not combined: `combine_chunks()` copied every column again (the 45 MB of
    `json` on security-30mb) for nothing pyarrow, Parquet, pandas, Polars or DuckDB need; a
    caller who wants one chunk calls it (PERF.md P12)."""
    tables = list(batches(parser))
    if not tables:
        return SCHEMA.empty_table()
    return pa.concat_tables(tables) if len(tables) > 1 else tables[0]
