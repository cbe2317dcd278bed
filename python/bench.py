"""Benchmark (not a test): evtx_twin against pyevtx-rs (PyPI `evtx`) on one log.

    python python/bench.py target/fixtures/security-30mb.evtx [--runs 3]

Run it in a throwaway venv holding `evtx`, `pyarrow` and evtx_twin. Each case reads the whole
log; the median wall time of --runs runs is printed with records/s and MB/s, and the ratio to
pyevtx-rs's `records_json()` (with its default threads and with one thread).
"""

import argparse
import json
import os
import statistics
import sys
import time

# Import the installed evtx_twin (with its libraries), not the source folder beside this file.
sys.path = [p for p in sys.path if os.path.abspath(p or ".") != os.path.dirname(os.path.abspath(__file__))]


def cases(path):
    import evtx
    import pyarrow as pa

    import evtx_twin

    def pyevtx(threads):
        def run():
            parser = evtx.PyEvtxParser(path) if threads is None else evtx.PyEvtxParser(path, number_of_threads=threads)
            return sum(1 for _ in parser.records_json())
        return run

    def pyevtx_table():
        rows = [{"event_record_id": r["event_record_id"], "timestamp": r["timestamp"], "json": r["data"]}
                for r in evtx.PyEvtxParser(path).records_json()]
        return pa.Table.from_pylist(rows).num_rows

    def pyevtx_parsed():
        return sum(1 for r in evtx.PyEvtxParser(path).records_json() if json.loads(r["data"]))

    def pyevtx_typed_table():
        # What to_arrow() gives, the way a pyevtx-rs user gets it: parse each record's JSON
        # for the System fields, then one table.
        rows = []
        for r in evtx.PyEvtxParser(path, number_of_threads=1).records_json():
            system = json.loads(r["data"])["Event"]["System"]
            provider = system.get("Provider")
            event_id = system.get("EventID")
            rows.append({
                "event_record_id": r["event_record_id"], "timestamp": r["timestamp"],
                "provider": (provider.get("#attributes") or {}).get("Name") if isinstance(provider, dict) else None,
                "event_id": event_id.get("#text") if isinstance(event_id, dict) else event_id,
                "level": system.get("Level"), "channel": system.get("Channel"),
                "computer": system.get("Computer"), "json": r["data"],
            })
        return pa.Table.from_pylist(rows).num_rows

    def twin_json(engine, parsed=False, threads=1):
        def run():
            return sum(1 for _ in evtx_twin.Parser(path, engine=engine, threads=threads).records_json(parsed=parsed))
        return run

    def twin_arrow(engine, threads=1):
        def run():
            return evtx_twin.Parser(path, engine=engine, threads=threads).to_arrow().num_rows
        return run

    return [
        ("pyevtx-rs records_json() (default threads)", pyevtx(None)),
        ("pyevtx-rs records_json() (1 thread)", pyevtx(1)),
        ("pyevtx-rs records_json() + json.loads", pyevtx_parsed),
        ("pyevtx-rs records_json() -> pyarrow.Table.from_pylist", pyevtx_table),
        ("pyevtx-rs records_json() + json.loads -> typed table", pyevtx_typed_table),
        ("evtx_twin records_json() rust", twin_json("rust")),
        ("evtx_twin records_json() zig", twin_json("zig")),
        ("evtx_twin records_json() rust threads=2", twin_json("rust", threads=2)),
        ("evtx_twin records_json() zig threads=2", twin_json("zig", threads=2)),
        ("evtx_twin records_json() rust threads=3", twin_json("rust", threads=3)),
        ("evtx_twin records_json(parsed=True) rust", twin_json("rust", True)),
        ("evtx_twin to_arrow() rust", twin_arrow("rust")),
        ("evtx_twin to_arrow() zig", twin_arrow("zig")),
        ("evtx_twin to_arrow() rust threads=2", twin_arrow("rust", 2)),
        ("evtx_twin to_arrow() zig threads=2", twin_arrow("zig", 2)),
        ("evtx_twin to_arrow() rust threads=3", twin_arrow("rust", 3)),
    ]


def check(path):
    """evtx_twin's dicts against pyevtx-rs's: the same record ids and timestamps."""
    import evtx

    import evtx_twin

    theirs = list(evtx.PyEvtxParser(path, number_of_threads=1).records_json())
    ours = list(evtx_twin.Parser(path).records_json())
    assert [r["event_record_id"] for r in ours] == [r["event_record_id"] for r in theirs]
    assert [r["timestamp"] for r in ours] == [r["timestamp"] for r in theirs]
    # (The JSON itself is evtx 0.15.1's here, pyevtx-rs 0.14 renders with an older evtx crate.)
    print(f"check: {len(ours)} records, ids and timestamps equal pyevtx-rs's")


def main():
    args = argparse.ArgumentParser()
    args.add_argument("path")
    args.add_argument("--runs", type=int, default=3)
    args.add_argument("--only", help="run only the cases whose name contains this text")
    a = args.parse_args()
    size = os.path.getsize(a.path)
    check(a.path)
    results = {}
    print(f"load average at start: {os.getloadavg()}")
    for name, run in cases(a.path):
        if a.only and a.only not in name and "pyevtx-rs records_json() (" not in name:
            continue
        times, cpus, count = [], [], None
        for _ in range(a.runs):
            start, cpu = time.perf_counter(), time.process_time()
            count = run()
            times.append(time.perf_counter() - start)
            cpus.append(time.process_time() - cpu)
        results[name] = (statistics.median(times), count, statistics.median(cpus))
        t = results[name][0]
        print(f"{name:58s} {t:7.3f} s  {count / t:10,.0f} rec/s  {size / 1e6 / t:6.1f} MB/s  "
              f"cpu {statistics.median(cpus):6.3f} s  ({count} records)", flush=True)
    print(f"load average at end: {os.getloadavg()}")
    base, _, _ = results["pyevtx-rs records_json() (default threads)"]
    base1, _, cpu1 = results["pyevtx-rs records_json() (1 thread)"]
    typed = results.get("pyevtx-rs records_json() + json.loads -> typed table")
    for name, (t, _, cpu) in results.items():
        if name.startswith("evtx_twin"):
            line = (f"{name:58s} wall {base / t:5.2f}x pyevtx-rs default, {base1 / t:5.2f}x 1 thread; "
                    f"cpu {cpu1 / cpu:5.2f}x 1 thread")
            if typed and "to_arrow" in name:
                line += f"; vs the typed table: wall {typed[0] / t:5.2f}x, cpu {typed[2] / cpu:5.2f}x"
            print(line)


if __name__ == "__main__":
    main()
