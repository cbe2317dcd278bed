"""`Parser`'s record filters and the fleet's filter options, on synthetic/filters.evtx (EventIDs
with Qualifiers and as strings, odd providers, a record without TimeCreated, one without
System): each engine's records are the CLI's filtered output (the CLIs are held to an oracle
built from the reference's full output, compare/filter_parity.py)."""

import re
import warnings
from datetime import datetime, timedelta, timezone

import pytest

import evtx_twin
from conftest import FIXTURES, Cli
from evtx_twin import fleet

LOG = FIXTURES / "synthetic" / "filters.evtx"
ENGINES = ["rust", "zig", "reference"]

#: Parser keyword arguments, and the CLI options that say the same.
CASES = [
    ({"event_ids": 4624}, ["--event-id", "4624"]),
    ({"event_ids": "4624,4700-4799"}, ["--event-id", "4624,4700-4799"]),
    ({"event_ids": [(4625, 4625), range(7045, 7046)]}, ["--event-id", "4625,7045"]),
    ({"levels": [0, (2, 3)]}, ["--level", "0,2-3"]),
    ({"providers": "microsoft-windows-security-auditing"},
     ["--provider", "microsoft-windows-security-auditing"]),
    ({"providers": ["Plain", "split"], "channels": "SECURITY"},
     ["--provider", "Plain", "--provider", "split", "--channel", "SECURITY"]),
    ({"since": "2024-05-01T08:00:00Z", "until": "2024-05-01T10:00:00.0000002+02:00"},
     ["--since", "2024-05-01T08:00:00Z", "--until", "2024-05-01T10:00:00.0000002+02:00"]),
    ({"since": datetime(2024, 5, 1, 9, tzinfo=timezone.utc)},
     ["--since", "2024-05-01T09:00:00Z"]),
    ({"until": datetime(2024, 5, 1, 10, tzinfo=timezone(timedelta(hours=2)))},
     ["--until", "2024-05-01T08:00:00Z"]),
    ({"event_ids": 4624, "levels": 4, "channels": "security"},
     ["--event-id", "4624", "--level", "4", "--channel", "security"]),
    ({"event_ids": 1}, ["--event-id", "1"]),  # nothing
]


def records(parser, method="records_json"):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", evtx_twin.EvtxWarning)
        return [r["data"] for r in getattr(parser, method)()]


@pytest.mark.parametrize("engine", ENGINES)
@pytest.mark.parametrize("kwargs,args", CASES, ids=[" ".join(a) for _, a in CASES])
def test_records_are_the_clis_filtered_output(engine, kwargs, args, cli):
    expected = cli.jsonl("rust", LOG, *args)
    assert expected == cli.jsonl("zig", LOG, *args)
    assert len(expected) < len(cli.jsonl("rust", LOG)), "the filter drops records"
    parser = evtx_twin.Parser(LOG, engine=engine, skip_errors=True, **kwargs)
    assert records(parser) == expected
    # The same records in the other outputs: Arrow and XML.
    assert parser.to_arrow().column("json").to_pylist() == expected
    xml = cli.run("rust", LOG, "-o", "xml", *args)[0].decode()
    ids = [int(n) for n in re.findall(r"^Record (\d+)$", xml, re.M)]
    assert [r["event_record_id"] for r in parser.records()] == ids


@pytest.mark.parametrize("engine", ["rust", "zig"])
def test_a_filter_keeps_every_error(engine, cli):
    # bad-records.evtx: 11 record errors among 43 records. A filter that keeps no record still
    # reports each error as the unfiltered run does (and as the CLI prints them).
    path = FIXTURES / "damaged" / "bad-records.evtx"
    expected = cli.errors("rust", path, "--event-id", "1")
    assert len(expected) == len(cli.errors("rust", path)) == 11
    for threads in (1, 2):
        parser = evtx_twin.Parser(path, engine=engine, threads=threads, skip_errors=True,
                                  event_ids=1)
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always", evtx_twin.EvtxWarning)
            assert [r["data"] for r in parser.records_json()] == []
        got = [str(w.message) for w in caught if isinstance(w.message, evtx_twin.EvtxWarning)]
        assert got == expected


@pytest.mark.parametrize("kwargs", [
    {"event_ids": "5-4"}, {"event_ids": "x"}, {"event_ids": -1}, {"levels": (3, 2)},
    {"event_ids": 2**32}, {"providers": ""}, {"channels": ["a\0b"]}, {"providers": 4},
    {"since": "2024-05-01"}, {"since": "2024-05-01T08:00:00.12345678Z"},
    {"since": datetime(2024, 5, 1)}, {"since": "1600-12-31T23:59:59Z"},
    {"since": "2024-05-01T08:00:00Z", "until": "2024-05-01T08:00:00Z"}, {"event_ids": True},
])
def test_bad_filters_are_refused_at_construction(kwargs):
    with pytest.raises((ValueError, TypeError)):
        evtx_twin.Parser(LOG, **kwargs)


@pytest.mark.parametrize("engine", ["rust", "zig"])
def test_the_fleet_converts_the_filtered_records(engine, tmp_path, cli):
    args = ["--event-id", "4624", "--provider", "split", "--provider", "Plain"]
    filters = {"event_ids": ["4624"], "providers": ["split", "Plain"]}
    result = fleet.convert(fleet.Task(str(LOG), 0), str(tmp_path), "jsonl", engine,
                           filters=filters)
    assert result.fatal is None
    (part,) = tmp_path.glob("*/part-*.jsonl")
    got = part.read_text().split("\n")[:-1]
    assert got == cli.jsonl("rust", LOG, *args) and result.records == len(got) > 0


def test_the_fleets_options_reach_the_run(monkeypatch, tmp_path):
    seen = {}

    def run(paths, out, *args, filters=None, **kwargs):
        seen.update(filters)
        return {"files_failed": 0, "per_file": {}, "files": 1, "records": 0,
                "failed_records": 0, "bytes": 0, "seconds": 1, "mb_per_second": 0}

    monkeypatch.setattr(fleet, "run", run)
    code = fleet.main([str(LOG), "--out", str(tmp_path), "--event-id", "4624,4700-4799",
                       "--level", "4", "--provider", "A", "--provider", "B", "--channel", "C",
                       "--since", "2024-05-01T08:00:00Z", "--until", "2024-05-02T00:00:00Z"])
    assert code == 0
    assert seen == {"event_ids": ["4624,4700-4799"], "levels": ["4"], "providers": ["A", "B"],
                    "channels": ["C"], "since": "2024-05-01T08:00:00Z",
                    "until": "2024-05-02T00:00:00Z"}
    with pytest.raises(SystemExit) as exit_:
        fleet.main([str(LOG), "--out", str(tmp_path), "--since", "yesterday"])
    assert exit_.value.code == 2
