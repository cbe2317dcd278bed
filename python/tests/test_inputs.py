"""Sources (path, bytes, buffers, file objects), the lifetime of what Python passes in, bad
files, errors as exceptions or warnings, options."""

import builtins
import threading
import gc
import io
import os
import struct
import sys
import warnings

import pytest

import evtx_twin
from evtx_twin import _ffi, _parser
from conftest import FIXTURES, samples

DAMAGED = FIXTURES / "damaged"
ENGINES = ["rust", "zig", "reference"]


def some_sample():
    """The first public sample, else a fixture whose every record has a System section (the
    tests below read its provider and first record's System)."""
    found = samples()
    return found[0] if found else FIXTURES / "synthetic" / "basic.evtx"


def garbage():
    """Allocates and frees enough memory to reuse whatever a freed `bytes` occupied."""
    junk = [os.urandom(4096) for _ in range(4096)]
    del junk
    gc.collect()


def test_the_installed_package_bundles_three_libraries():
    if os.environ.get("EVTX_TWIN_LIB_DIR"):
        pytest.skip("EVTX_TWIN_LIB_DIR points at a build tree")
    names = sorted(p.name for p in _ffi.library_dir().glob("*.so"))
    # The three engines, and the C helper of records() (PERF.md P17), which CPython loads.
    assert names == ["libevtx_ref.so", "libevtx_rs.so", "libevtx_twin_records.so", "libevtx_zig.so"]
    assert _parser._RECORD_DICTS is not None
    assert [evtx_twin.backend_version(e) for e in ENGINES][2] == "0.15.1"


@pytest.mark.parametrize("engine", ENGINES)
def test_a_temporary_bytes_object_outlives_its_use(engine, cli):
    path = some_sample()
    expected = cli.jsonl("rust", path)
    # The only reference to the bytes is the parser's: raw ctypes over open_buffer segfaulted here.
    parser = evtx_twin.Parser(path.read_bytes(), engine=engine, skip_errors=True)
    garbage()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", evtx_twin.EvtxWarning)
        iterator = parser.records_json()
        first = next(iterator)
        del parser  # the open handle keeps the bytes alive on its own
        garbage()
        rest = [r["data"] for r in iterator]
    assert [first["data"], *rest] == expected


@pytest.mark.parametrize("engine", ENGINES)
def test_a_mutable_buffer_is_copied_at_construction(engine, cli):
    path = some_sample()
    expected = cli.jsonl("rust", path)
    buffer = bytearray(path.read_bytes())
    parser = evtx_twin.Parser(buffer, engine=engine, skip_errors=True)
    buffer[:] = b"\0" * len(buffer)
    del buffer
    garbage()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", evtx_twin.EvtxWarning)
        assert [r["data"] for r in parser.records_json()] == expected
        assert parser.to_arrow().column("json").to_pylist() == expected


@pytest.mark.parametrize("opener", ["file", "bytesio", "memoryview"])
def test_file_objects_and_buffers_read_like_the_path(opener, cli):
    path = some_sample()
    expected = cli.jsonl("zig", path)
    if opener == "file":
        with open(path, "rb") as f:
            parser = evtx_twin.Parser(f, engine="zig", skip_errors=True)
        assert parser.name == str(path)
    elif opener == "bytesio":
        parser = evtx_twin.Parser(io.BytesIO(path.read_bytes()), engine="zig", skip_errors=True)
    else:
        parser = evtx_twin.Parser(memoryview(path.read_bytes()), engine="zig", skip_errors=True)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", evtx_twin.EvtxWarning)
        assert [r["data"] for r in parser.records_json()] == expected


def test_a_text_file_object_is_refused():
    with open(some_sample(), "r", encoding="latin-1") as f, pytest.raises(TypeError):
        evtx_twin.Parser(f)


@pytest.mark.parametrize("engine", ENGINES)
@pytest.mark.parametrize("name", ["bad-file-magic.evtx", "short-file.evtx"])
def test_not_an_evtx_file_raises_at_iteration(engine, name):
    parser = evtx_twin.Parser(str(DAMAGED / name), engine=engine)
    with pytest.raises(evtx_twin.EvtxError) as failure:
        list(parser.records_json())
    assert failure.value.kind == "not an evtx file"
    assert failure.value.chunk is None
    with pytest.raises(evtx_twin.EvtxError):
        parser.to_arrow()
    with pytest.raises(evtx_twin.EvtxError):
        list(evtx_twin.Parser(b"", engine=engine).records())


@pytest.mark.parametrize("engine", ENGINES)
def test_a_missing_file_raises(engine, tmp_path):
    with pytest.raises(evtx_twin.EvtxError) as failure:
        list(evtx_twin.Parser(tmp_path / "absent.evtx", engine=engine).records())
    assert failure.value.kind == "i/o error"


DAMAGED_WITH_ERRORS = ["bad-chunks.evtx", "bad-offsets.evtx", "bad-records.evtx",
                       "invalid-binxml.evtx", "chunk-header-ids.evtx"]


@pytest.mark.parametrize("engine", ["rust", "zig"])
@pytest.mark.parametrize("name", DAMAGED_WITH_ERRORS)
def test_damaged_files_errors_raise_or_warn_as_the_cli_prints_them(engine, name, cli):
    path = DAMAGED / name
    expected, errors = cli.jsonl(engine, path), cli.errors(engine, path)
    assert errors, "the fixture has errors"
    # Default: the first error is an exception, after the records before it.
    seen = []
    with pytest.raises(evtx_twin.EvtxError) as failure:
        for record in evtx_twin.Parser(str(path), engine=engine).records_json():
            seen.append(record["data"])
    assert str(failure.value) == errors[0]
    assert seen == expected[: len(seen)]
    assert failure.value.chunk is not None and failure.value.offset is not None
    with pytest.raises(evtx_twin.EvtxError) as failure:
        evtx_twin.Parser(str(path), engine=engine).to_arrow()
    assert str(failure.value) == errors[0]
    # skip_errors: every error a warning naming file, chunk, record and offset; every record kept.
    parser = evtx_twin.Parser(str(path), engine=engine, skip_errors=True)
    for run in (lambda: [r["data"] for r in parser.records_json()],
                lambda: parser.to_arrow().column("json").to_pylist()):
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            assert run() == expected
        assert [str(w.message) for w in caught] == errors
        assert all(w.category is evtx_twin.EvtxWarning for w in caught)


@pytest.mark.parametrize("engine", ["rust", "zig"])
def test_options_reach_the_engine(engine, cli):
    path = some_sample()
    for option, kwargs in [("--separate-json-attributes", {"separate_json_attributes": True}),
                           ("--validate-checksums", {"validate_checksums": True}),
                           ("--recover-records", {"recover_records": True})]:
        expected = cli.jsonl(engine, path, option)
        parser = evtx_twin.Parser(str(path), engine=engine, skip_errors=True, threads=2, **kwargs)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", evtx_twin.EvtxWarning)
            assert [r["data"] for r in parser.records_json()] == expected, option
            table = parser.to_arrow()
        assert table.column("json").to_pylist() == expected, option
        assert table.column("provider").null_count < table.num_rows


def test_the_json_column_drops_only_the_separators():
    """`to_arrow()`'s json column leaves out the newline after each text: in one copy when the
    newlines are exactly the separators, by per-entry slices when a text holds one (no engine
    writes that; the check guards the one-copy path)."""
    pytest.importorskip("pyarrow")
    from evtx_twin import arrow
    from evtx_twin._parser import RawBatch

    cases = (
        [b'{"a":1}', '{"b":"\u00e9\u4e2d"}'.encode(), b"{}"],
        [b'{"a":"x\ny"}', b'{"b":2}'],
        [],
    )
    for texts in cases:
        ends = [0]
        for text in texts:
            ends.append(ends[-1] + len(text) + 1)
        data = b"".join(text + b"\n" for text in texts)
        raw = RawBatch(len(texts), data, struct.pack(f"<{len(ends)}Q", *ends), *[b""] * 6)
        column = arrow._json_column(raw)
        column.validate(full=True)
        assert column.to_pylist() == [text.decode() for text in texts]


def test_to_arrow_tries_no_import_per_batch(monkeypatch):
    """The Arrow kernels get their constants as scalars made once: a Python int converted per
    call made pyarrow try `import dateutil.relativedelta` each time, a failed search of
    sys.path per kernel call when dateutil is not installed (PERF.md P15)."""
    pytest.importorskip("pyarrow")
    path = some_sample()
    evtx_twin.Parser(path).to_arrow()  # imports evtx_twin.arrow and what pyarrow loads once
    attempts = []
    real = builtins.__import__

    def watch(name, *args, **kwargs):
        if name and name not in sys.modules:  # `from . import arrow` asks for ""
            attempts.append(name)
        return real(name, *args, **kwargs)

    monkeypatch.setattr(builtins, "__import__", watch)
    table = evtx_twin.Parser(path).to_arrow()
    monkeypatch.undo()
    assert table.num_rows > 0
    assert attempts == []


def test_bad_options_are_refused():
    with pytest.raises(ValueError):
        evtx_twin.Parser(b"", engine="python")
    with pytest.raises(evtx_twin.EvtxError) as failure:
        list(evtx_twin.Parser(some_sample(), ansi_codec="no-such-codec").records())
    assert failure.value.kind == "invalid options"


def test_records_json_parsed_and_timestamps():
    path = some_sample()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", evtx_twin.EvtxWarning)
        parser = evtx_twin.Parser(path, skip_errors=True)
        parsed = next(parser.records_json(parsed=True))
        table = parser.to_arrow()
    assert set(parsed) == {"event_record_id", "timestamp", "data", "chunk", "offset", "recovered"}
    assert "System" in parsed["data"]["Event"]
    # The header FILETIME as pyevtx-rs 0.14 prints it (values computed by hand; python/bench.py
    # compares every record of the 30 MB log with pyevtx-rs itself).
    assert evtx_twin.timestamp_text(131_000_000_000_000_000) == "2016-02-15T08:53:20Z UTC"
    assert evtx_twin.timestamp_text(131_000_000_000_000_001) == "2016-02-15T08:53:20.0000001Z UTC"
    assert evtx_twin.timestamp_text(131_000_000_000_010_000) == "2016-02-15T08:53:20.001Z UTC"
    assert evtx_twin.timestamp_text(131_000_000_000_000_010) == "2016-02-15T08:53:20.000001Z UTC"
    assert evtx_twin.timestamp_text(0) is None
    assert parsed["timestamp"] == evtx_twin.timestamp_text(parser_filetime(parser))
    stamp = table.column("timestamp")[0].value  # ns since 1970
    assert stamp == (parser_filetime(parser) - 116_444_736_000_000_000) * 100


def parser_filetime(parser):
    batch = next(parser.batches())
    return memoryview(batch.filetimes).cast("Q")[0]


@pytest.mark.parametrize("engine", ["rust", "zig"])
def test_the_read_ahead_starts_with_a_small_batch(engine, cli):
    """threads=2 asks for `FIRST_ENTRIES` first, so the caller starts after ~1 ms of rendering
    (PERF.md P14), then for `BATCH_ENTRIES`; the records are the CLI's either way."""
    from evtx_twin import _parser

    path = max(samples() or sorted((FIXTURES / "synthetic").glob("*.evtx")),
               key=lambda p: p.stat().st_size)
    lines = cli.jsonl(engine, path)
    if len(lines) <= _parser.FIRST_ENTRIES:
        pytest.skip(f"{path.name} has {len(lines)} records, no more than one small batch")
    for threads, first in ((1, _parser.BATCH_ENTRIES), (2, _parser.FIRST_ENTRIES)):
        parser = evtx_twin.Parser(str(path), engine=engine, skip_errors=True, threads=threads)
        counts = [b.count for b in parser.batches()]
        assert counts[0] == min(first, sum(counts)), threads
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", evtx_twin.EvtxWarning)
            assert [r["data"] for r in parser.records_json()] == lines, threads


@pytest.mark.parametrize("engine", ["rust", "zig"])
def test_read_ahead_stops_when_the_caller_does(engine, cli):
    """threads=2 pulls on a helper thread: the records equal the CLI's, and a generator closed
    after one record (or dropped) stops the thread and frees the parser without hanging."""
    path = some_sample()
    parser = evtx_twin.Parser(str(path), engine=engine, skip_errors=True, threads=2)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", evtx_twin.EvtxWarning)
        assert [r["data"] for r in parser.records_json()] == cli.jsonl(engine, path)
        before = threading.active_count()
        for _ in range(20):
            records = parser.records_json()
            next(records)
            records.close()
        assert threading.active_count() == before


@pytest.mark.parametrize("engine", ["rust", "zig"])
def test_mta_reaches_the_engine(engine, cli):
    path = FIXTURES / "mta" / "events.evtx"
    mta = FIXTURES / "mta" / "events.full.MTA"
    expected = cli.jsonl(engine, path, "--mta", str(mta))
    assert any("RenderingInfo" in line for line in expected)
    parser = evtx_twin.Parser(path, engine=engine, threads=2, mta=mta)
    assert [r["data"] for r in parser.records_json()] == expected
    with pytest.raises(evtx_twin.EvtxError) as failure:
        damaged = FIXTURES / "mta" / "events.damaged-magic.MTA"
        list(evtx_twin.Parser(path, engine=engine, mta=damaged).records())
    assert failure.value.kind == "invalid options"


@pytest.mark.parametrize("engine", ["rust", "zig", "reference"])
def test_wevt_cache_reaches_the_engine(engine, cli):
    path = FIXTURES / "wevt" / "events.evtx"
    cache = FIXTURES / "wevt" / "templates.wevtcache"
    expected = cli.jsonl("rust", path, "--wevt-cache", str(cache))
    parser = evtx_twin.Parser(path, engine=engine, skip_errors=True, wevt_cache=cache)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", evtx_twin.EvtxWarning)
        assert [r["data"] for r in parser.records_json()] == expected
    with pytest.raises(evtx_twin.EvtxError) as failure:
        missing = FIXTURES / "no-such.wevtcache"
        list(evtx_twin.Parser(path, engine=engine, wevt_cache=missing).records())
    assert failure.value.kind == "i/o error"
