"""Benchmark (not a test): evtx_twin against pyevtx-rs (PyPI `evtx`) on one log.

    python python/bench.py target/fixtures/security-30mb.evtx [--rounds 15] [--only TEXT]

Run it in a throwaway venv holding `evtx`, `pyarrow` and evtx_twin. Each case reads the whole
log. The cases run in interleaved rounds: every round runs each case once, in an order shuffled
per round (seeded), so a phase of the machine's speed (other processes, frequency) falls on all
cases alike. The report gives each case's median wall and process CPU time, and the median of
the per-round ratios to pyevtx-rs's `records_json()` with one thread and with its default
threads (the wall of the pyevtx-rs case of the same round over the case's): ratios measured
within a round, not a ratio of medians taken at different moments (PERF.md P16).
"""

import argparse
import gc
import json
import os
import random
import statistics
import sys
import time

# Import the installed evtx_twin (with its libraries), not the source folder beside this file.
_HERE = os.path.dirname(os.path.abspath(__file__))
sys.path = [p for p in sys.path if os.path.abspath(p or ".") != _HERE]


def cases(path):
    import evtx
    import pyarrow as pa

    import evtx_twin

    def pyevtx(threads):
        def run():
            if threads is None:
                parser = evtx.PyEvtxParser(path)
            else:
                parser = evtx.PyEvtxParser(path, number_of_threads=threads)
            return sum(1 for _ in parser.records_json())
        return run

    def pyevtx_table():
        rows = [
            {"event_record_id": r["event_record_id"], "timestamp": r["timestamp"],
             "json": r["data"]}
            for r in evtx.PyEvtxParser(path).records_json()
        ]
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
                "provider": (
                    (provider.get("#attributes") or {}).get("Name")
                    if isinstance(provider, dict) else None
                ),
                "event_id": event_id.get("#text") if isinstance(event_id, dict) else event_id,
                "level": system.get("Level"), "channel": system.get("Channel"),
                "computer": system.get("Computer"), "json": r["data"],
            })
        return pa.Table.from_pylist(rows).num_rows

    def twin_json(engine, parsed=False, threads=1):
        def run():
            parser = evtx_twin.Parser(path, engine=engine, threads=threads)
            return sum(1 for _ in parser.records_json(parsed=parsed))
        return run

    def twin_json_python(engine, threads=1):
        # The Python dicts that the C helper replaced (PERF.md P17), for the paired comparison.
        def run():
            from evtx_twin import _parser
            saved, _parser._RECORD_DICTS = _parser._RECORD_DICTS, None
            try:
                return twin_json(engine, threads=threads)()
            finally:
                _parser._RECORD_DICTS = saved
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
        ("evtx_twin records_json() rust, Python dicts", twin_json_python("rust")),
        ("evtx_twin records_json() rust threads=2, Python dicts", twin_json_python("rust", 2)),
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


BASE = "pyevtx-rs records_json() (1 thread)"
BASE_DEFAULT = "pyevtx-rs records_json() (default threads)"
TYPED = "pyevtx-rs records_json() + json.loads -> typed table"


def run_rounds(selected, rounds: int, seed: int) -> dict:
    """{name: [(wall, cpu, count), ...]}, one entry per round; each round runs every case
    once in its own shuffled order, after a collection so no case pays another's garbage."""
    order = list(selected)
    shuffle = random.Random(seed).shuffle
    samples = {name: [] for name, _ in order}
    for r in range(rounds):
        shuffle(order)
        for name, run in order:
            gc.collect()
            start, cpu = time.perf_counter(), time.process_time()
            count = run()
            samples[name].append((time.perf_counter() - start, time.process_time() - cpu, count))
        print(f"round {r + 1}/{rounds} done, load {os.getloadavg()[0]:.1f}", file=sys.stderr,
              flush=True)
    return samples


def ratio(samples: dict, base: str, name: str, field: int = 0) -> float:
    """The median over rounds of base's time / name's time in the same round."""
    return statistics.median(b[field] / c[field] for b, c in zip(samples[base], samples[name]))


def main():
    args = argparse.ArgumentParser()
    args.add_argument("path")
    args.add_argument("--rounds", type=int, default=15)
    args.add_argument("--seed", type=int, default=15)
    args.add_argument("--only", help="run only the cases whose name contains one of these "
                                     "comma-separated texts (and the two pyevtx-rs "
                                     "records_json() cases)")
    args.add_argument("--no-check", action="store_true", help="skip the ids/timestamps check")
    a = args.parse_args()
    size = os.path.getsize(a.path)
    if not a.no_check:
        check(a.path)
    selected = [(name, run) for name, run in cases(a.path)
                if not a.only or any(text in name for text in a.only.split(","))
                or name in (BASE, BASE_DEFAULT)]
    # One warm-up pass (page cache, imports, first-call setup), not counted.
    for _, run in selected:
        run()
    load_start = os.getloadavg()
    samples = run_rounds(selected, a.rounds, a.seed)
    load_end = os.getloadavg()
    print(f"{a.rounds} interleaved rounds; load average at start {load_start[0]:.2f} "
          f"{load_start[1]:.2f} {load_start[2]:.2f}, at end {load_end[0]:.2f} {load_end[1]:.2f} "
          f"{load_end[2]:.2f}")
    print(f"{'case':58s} {'wall s':>7s} {'rec/s':>10s} {'MB/s':>6s} {'cpu s':>6s} "
          f"{'x1t':>5s} {'xdef':>5s} {'cpu x1t':>7s}")
    for name, runs in samples.items():
        wall = statistics.median(w for w, _, _ in runs)
        cpu = statistics.median(c for _, c, _ in runs)
        count = runs[-1][2]
        line = (f"{name:58s} {wall:7.3f} {count / wall:10,.0f} {size / 1e6 / wall:6.1f} "
                f"{cpu:6.3f} {ratio(samples, BASE, name):5.2f} "
                f"{ratio(samples, BASE_DEFAULT, name):5.2f} {ratio(samples, BASE, name, 1):7.2f}")
        if TYPED in samples and "to_arrow" in name:
            line += f"  (x typed table: {ratio(samples, TYPED, name):.2f})"
        print(line)
    print("x1t / xdef: median of per-round wall ratios, pyevtx-rs records_json() with 1 thread "
          "/ default threads over the case; cpu x1t: the same for process CPU time")


if __name__ == "__main__":
    main()
