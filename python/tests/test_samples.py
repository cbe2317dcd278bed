"""Every sample, both engines: the records, their JSON and XML bytes and their errors are the
CLI's, through records_json(), records(), batches() and to_arrow()."""

import json
import warnings

import pytest

import evtx_twin
from conftest import samples
from evtx_twin import _parser

ENGINES = ["rust", "zig"]
CASES = [
    pytest.param(engine, path, id=f"{engine}-{path.name}")
    for path in samples()
    for engine in ENGINES
]


def test_samples_are_there():
    # With EVTX_REQUIRE_SAMPLES=1 (make test) an empty corpus already failed in conftest.
    assert CASES or not samples()


@pytest.mark.parametrize("engine,path", CASES)
def test_records_json_and_arrow_equal_the_cli(engine, path, cli):
    expected = cli.jsonl(engine, path)
    expected_errors = cli.errors(engine, path)
    parser = evtx_twin.Parser(str(path), engine=engine, skip_errors=True)

    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        records = list(parser.records_json())
    assert [r["data"] for r in records] == expected
    errors = [str(w.message) for w in caught if w.category is evtx_twin.EvtxWarning]
    assert errors == expected_errors
    assert all(r["recovered"] is False for r in records)

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", evtx_twin.EvtxWarning)
        table = parser.to_arrow()
    assert table.num_rows == len(expected)
    assert table.column("json").to_pylist() == expected
    assert table.column("event_record_id").to_pylist() == [r["event_record_id"] for r in records]
    assert table.column("offset").to_pylist() == [r["offset"] for r in records]
    assert table.column("chunk").to_pylist() == [r["chunk"] for r in records]

    # The System columns against the CLI's JSON, parsed by Python's json module.
    systems = [json.loads(line)["Event"]["System"] for line in expected]
    assert table.column("provider").to_pylist() == [provider(s) for s in systems]
    assert table.column("event_id").to_pylist() == [number(event_id(s)) for s in systems]
    assert table.column("level").to_pylist() == [number(s.get("Level")) for s in systems]
    assert table.column("channel").to_pylist() == [s.get("Channel") for s in systems]
    assert table.column("computer").to_pylist() == [s.get("Computer") for s in systems]


def number(value):
    """The typed columns hold a number also where the JSON has it as a string (`"1"`)."""
    return int(value) if isinstance(value, str) and value.isdigit() else value


def provider(system):
    value = system.get("Provider")
    attributes = value.get("#attributes") if isinstance(value, dict) else None
    return attributes.get("Name") if isinstance(attributes, dict) else None


def event_id(system):
    value = system.get("EventID")
    return value["#text"] if isinstance(value, dict) else value


@pytest.mark.parametrize("engine,path", CASES)
def test_xml_bytes_equal_the_cli(engine, path, cli):
    stdout, _, _ = cli.run(engine, path, "-o", "xml", "--dont-show-record-number")
    parser = evtx_twin.Parser(path.read_bytes(), engine=engine)
    rendered = b"".join(
        b.data[int(off[i]):int(off[i + 1])]
        for b in parser.batches("xml")
        for off in [memoryview(b.offsets).cast("Q")]
        for i in range(b.count)
        if memoryview(b.statuses).cast("I")[i] == 0
    )
    assert rendered == stdout
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", evtx_twin.EvtxWarning)
        parser = evtx_twin.Parser(str(path), engine=engine, skip_errors=True)
        xml = [r["data"] for r in parser.records()]
    # Each XML record is printed as its text and a blank line.
    assert "".join(x + "\n\n" for x in xml).encode() == stdout
    assert len(xml) == len(cli.jsonl(engine, path))


SYSTEM = ["provider", "event_id", "level", "channel", "computer"]


@pytest.mark.parametrize("path", samples(), ids=lambda p: p.name)
def test_system_columns_and_threads_equal_the_reference(path):
    """`evtx_parser_batch_system` of both engines equals the reference library's on the same
    bytes, and pulling on a read-ahead thread (threads=2) whose engine renders with 2 workers
    (threads=3) gives what the reference gives with 1 (the threaded pull keeps the order)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", evtx_twin.EvtxWarning)
        def table(engine, threads):
            return evtx_twin.Parser(str(path), engine=engine, skip_errors=True,
                                    threads=threads).to_arrow()

        reference = table("reference", 1)
        for engine in ENGINES:
            for threads in (1, 2, 3):
                got = table(engine, threads)
                for name in SYSTEM + ["json", "event_record_id", "chunk", "offset"]:
                    assert got.column(name).equals(reference.column(name)), (engine, threads, name)


def typed(value, limit):
    """The scan's rule for EventID and Level: a JSON integer, or a string of 1 to 19 ASCII
    digits, from 0 to `limit`; anything else is absent."""
    if isinstance(value, str) and value.isascii() and value.isdigit() and len(value) <= 19:
        value = int(value)
    if isinstance(value, int) and not isinstance(value, bool) and 0 <= value <= limit:
        return value
    return None


def expected_system(system):
    """What `evtx_parser_batch_system` documents for one parsed `Event.System`, member by
    member in text order (include/evtx.h): `Provider.#attributes.Name` or
    `Provider_attributes.Name`, `EventID` or `EventID.#text`, `Level`, `Channel`, `Computer`."""
    provider = event = level = channel = computer = None
    for key, value in system.items():
        if key in ("Provider", "Provider_attributes"):
            holder = value
            if key == "Provider" and isinstance(value, dict):
                holder = value.get("#attributes")
            if isinstance(holder, dict) and "Name" in holder:
                provider = holder["Name"] if isinstance(holder["Name"], str) else None
        elif key == "EventID":
            event = typed(value.get("#text") if isinstance(value, dict) else value, 2**32 - 1)
        elif key == "Level":
            level = typed(value, 255)
        elif key == "Channel":
            channel = value if isinstance(value, str) else None
        elif key == "Computer":
            computer = value if isinstance(value, str) else None
    return (provider, event, level, channel, computer)


def system_rows(raw):
    """One `RawBatch`'s System columns as a tuple per entry, None where a field is absent."""
    system, n = raw.system, raw.count

    def strings(column):
        data, offsets = column
        o = memoryview(offsets).cast("Q")
        return [data[o[i]:o[i + 1]].decode() for i in range(n)]

    provider, channel, computer = (
        strings(c) for c in (system.provider, system.channel, system.computer)
    )
    event_ids = memoryview(system.event_ids).cast("I")
    ffi = evtx_twin._ffi
    bits = (ffi.SYSTEM_PROVIDER, ffi.SYSTEM_EVENT_ID, ffi.SYSTEM_LEVEL, ffi.SYSTEM_CHANNEL,
            ffi.SYSTEM_COMPUTER)
    rows = []
    for i in range(n):
        values = (provider[i], event_ids[i], system.levels[i], channel[i], computer[i])
        rows.append(tuple(v if system.present[i] & bit else None for v, bit in zip(values, bits)))
    return rows


@pytest.mark.parametrize("path", samples(), ids=lambda p: p.name)
def test_system_columns_of_json_and_separate_attributes(path):
    """The System scan of both engines reads the `json` format's text and the
    `separate_json_attributes` layout (`Provider_attributes`, `EventID_attributes`) as
    `json.loads` does, entry by entry, and both engines give the same columns. (The engines
    print no whitespace between tokens; the scanners' unit tests read indented text.)"""
    checked = 0
    for separate in (False, True):
        rows = {}
        for engine in ENGINES:
            parser = evtx_twin.Parser(str(path), engine=engine, separate_json_attributes=separate)
            rows[engine] = []
            for raw in parser.batches("json", system=True):
                offsets = memoryview(raw.offsets).cast("Q")
                statuses = memoryview(raw.statuses).cast("I")
                for i, row in enumerate(system_rows(raw)):
                    if statuses[i] != 0:
                        assert row == (None,) * 5
                        continue
                    text = raw.data[offsets[i]:offsets[i + 1]]
                    assert row == expected_system(json.loads(text)["Event"]["System"]), (engine, i)
                    checked += 1
                rows[engine].extend(system_rows(raw))
        assert rows["rust"] == rows["zig"]
    assert checked > 0


@pytest.mark.parametrize("engine", ENGINES + ["reference"])
def test_system_columns_of_xml_are_unsupported_and_errors_have_none(engine):
    """XML output has no System columns (UNSUPPORTED, raised); error entries have every
    field absent (the fixture's bad chunks)."""
    path = next(iter(samples()), None)
    if path is None:
        pytest.skip("no samples")
    parser = evtx_twin.Parser(str(path), engine=engine)
    with pytest.raises(evtx_twin.EvtxError, match="unsupported"):
        next(parser.batches("xml", system=True))
    for raw in parser.batches("json", system=True):
        statuses = memoryview(raw.statuses).cast("I")
        present = raw.system.present
        assert len(present) == raw.count
        assert all(present[i] == 0 for i in range(raw.count) if statuses[i] != 0)
        assert any(present)


@pytest.mark.parametrize("path", samples(), ids=lambda p: p.name)
def test_timestamps_of_every_engine_are_the_filetimes_texts(path):
    """`evtx_parser_batch_timestamps` of all three libraries: each entry's text is
    `timestamp_text` (Python's `datetime`) of the batch's FILETIME, empty (None) for errors,
    and `records_json()`'s `timestamp` is that text."""
    checked = 0
    for engine in ENGINES + ["reference"]:
        parser = evtx_twin.Parser(str(path), engine=engine, skip_errors=True)
        expected = []
        for raw in parser.batches("xml", timestamps=True):
            data, offsets = raw.timestamps
            bounds = memoryview(offsets).cast("Q")
            statuses = memoryview(raw.statuses).cast("I")
            filetimes = memoryview(raw.filetimes).cast("Q")
            for i in range(raw.count):
                text = data[bounds[i]:bounds[i + 1]].decode("ascii") or None
                want = evtx_twin.timestamp_text(filetimes[i]) if statuses[i] == 0 else None
                assert text == want, (engine, i, filetimes[i])
                if statuses[i] == 0:
                    expected.append(want)
                    checked += text is not None
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", evtx_twin.EvtxWarning)
            assert [r["timestamp"] for r in parser.records_json()] == expected, engine
    assert checked > 0


@pytest.mark.parametrize("engine,path", CASES)
def test_the_c_dicts_equal_the_python_dicts(engine, path, monkeypatch):
    """records() and records_json() build the dicts of a batch without errors in C
    (`_records.c`, PERF.md P17); the Python path gives the same dicts: keys in the same order,
    values of the same types, with and without recovered records, JSON and XML."""
    assert _parser._RECORD_DICTS is not None

    def dicts(method, options):
        parser = evtx_twin.Parser(str(path), engine=engine, skip_errors=True, **options)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", evtx_twin.EvtxWarning)
            return list(getattr(parser, method)())

    for method in ("records_json", "records"):
        for options in ({}, {"recover_records": True}):
            fast = dicts(method, options)
            with monkeypatch.context() as python_path:
                python_path.setattr(_parser, "_RECORD_DICTS", None)
                slow = dicts(method, options)
            assert fast == slow, (method, options)
            assert [list(r.items()) for r in fast] == [list(r.items()) for r in slow]
            assert [[type(v) for v in r.values()] for r in fast] == \
                [[type(v) for v in r.values()] for r in slow]
    # The C helper's calls over ranges that do not divide the batch.
    with monkeypatch.context() as odd:
        odd.setattr(_parser, "DICTS_STEP", 7)
        stepped = dicts("records_json", {})
    # threads=1 reads the texts in the library's buffer (borrowed), threads=2 from a copy.
    copied = dicts("records_json", {"threads": 2})
    with monkeypatch.context() as python_path:
        python_path.setattr(_parser, "_RECORD_DICTS", None)
        slow = dicts("records_json", {})
    assert stepped == slow
    assert copied == slow
