"""`make test`'s triage gate: `triage` of both CLIs against the oracle no engine wrote.

    python3 compare/triage_parity.py --reference REF --fixtures shared-fixtures \
        --engine zig-out/bin/evtx-rs --engine zig-out/bin/evtx-zig [--samples DIR]

Six parts, each printing its counts; any failure prints its case and makes the exit status 1.

* planted: the oracle's own report of `shared-fixtures/triage/` holds what the generator
  planted there (values written here by hand from `generator/src/triage_fixtures.rs`), so the
  oracle is seen to find what the engines are held to.
* files: every committed log and every public sample (`--samples`): each engine's
  `triage --json FILE` parsed equals the oracle's document (`triage_oracle.py`), also with
  `--silence 60` on the triage fixtures and the samples; the two engines' stdout of
  `triage --json`, `triage` and `triage --top 1` the same bytes, stderr empty, exit 0 (1 for a
  file the reference cannot open, whose stderr is then the many-inputs line); the text's
  `records` line that of the oracle's numbers.
* inputs: a directory of fixtures, two files, and two files around a path that does not
  exist (exit 1): the JSON the oracle's document over those logs, paths as named; the text
  one line per log and the totals, those of the oracle; both engines the same bytes.
* help: `triage -h` and `triage --help` print `include/help_triage.txt` in both CLIs.
* mutants: damaged copies of a few fixtures (bit flips, cut files, zeroed and filled spans, a
  fixed seed): no crash or hang (60 s) in either engine; where the reference reads the mutant
  and the oracle can follow it, both engines' JSON equals the oracle's.
"""

import argparse
import json
import os
import random
import re
import subprocess
import sys
import tempfile
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import triage_oracle as oracle

failures = []
# Seconds one engine run may take before it counts as a hang.
HANG = 60
# The fixtures mutated (small, and between them every kind of chunk the walk meets).
MUTATED = ["triage/gaps-and-times.evtx", "triage/cleared-log.evtx", "damaged/bad-records.evtx",
           "carving/cleared-chunk.evtx", "carving/cut-last-chunk.evtx", "damaged/wrapped.evtx"]
MUTANTS_PER_FILE = 12


def fail(text):
    failures.append(text)
    print(f"triage-parity: FAIL {text}", file=sys.stderr)


def run(argv):
    try:
        p = subprocess.run(argv, capture_output=True, check=False, timeout=HANG,
                           stdin=subprocess.DEVNULL)
    except subprocess.TimeoutExpired:
        return None, b"", b""
    return p.returncode, p.stdout, p.stderr


def name(engine):
    return Path(engine).name


def parsed(out):
    try:
        return json.loads(out)
    except ValueError:
        return None


def first_difference(got, want, where="$"):
    """The first member where two parsed documents differ, as a path and both values."""
    if isinstance(got, dict) and isinstance(want, dict):
        for k in list(want) + [k for k in got if k not in want]:
            if k not in got or k not in want:
                return f"{where}.{k}: {got.get(k, '(absent)')!r} vs {want.get(k, '(absent)')!r}"
            d = first_difference(got[k], want[k], f"{where}.{k}")
            if d:
                return d
        return None
    if isinstance(got, list) and isinstance(want, list):
        for i, (g, w) in enumerate(zip(got, want)):
            d = first_difference(g, w, f"{where}[{i}]")
            if d:
                return d
        if len(got) != len(want):
            return f"{where}: {len(got)} entries vs the oracle's {len(want)}"
        return None
    return None if got == want and type(got) is type(want) else \
        f"{where}: {got!r} vs the oracle's {want!r}"


def stamp(t):
    return t if t is not None else "-"


def records_line(r):
    return (f"records {r['records']}, recovered {r['recovered']}, from {stamp(r['first_time'])} "
            f"to {stamp(r['last_time'])}")


def summary_line(r):
    if r["error"] is not None:
        return f"{r['path']}: error: {r['error']}"
    errors = sum(e["count"] for e in r["errors"])
    return (f"{r['path']}: records {r['records']}, recovered {r['recovered']}, errors {errors}, "
            f"gaps {len(r['gaps'])}, log events {len(r['log_events'])}, "
            f"from {stamp(r['first_time'])} to {stamp(r['last_time'])}")


def totals_line(t):
    return (f"total: files {t['files']}, unreadable {t['unreadable']}, records {t['records']}, "
            f"recovered {t['recovered']}, errors {t['errors']}, gaps {t['gaps']}, "
            f"log events {t['log_events']}")


# ---------------------------------------------------------------------------------------------
# Planted: what the generator put into shared-fixtures/triage, by hand.

PLANTED = {
    "gaps-and-times.evtx": {
        "records": 33, "recovered": 0, "errors": [],
        "bad_checksums": [{"chunk": 1, "what": "records"}],
        "gaps": [(8, 10, 7, 11), (21, 24, 20, 25)],
        "ids_backwards": [],
        "times_backwards": [(15, 14)],
        "silences": [(18, 19, 7260)],
        "log_events": [(18, "EventLog", 6006), (19, "EVENTLOG", 6008), (20, "EventLog", 6005),
                       (30, "Microsoft-Windows-Security-Auditing", 4719)],
        "carved": [],
    },
    "cleared-log.evtx": {
        "records": 16, "recovered": 4, "errors": [], "bad_checksums": [],
        "gaps": [],
        "ids_backwards": [{"record_id": 1, "previous_record_id": 12, "chunk": 0,
                           "chunk_boundary": False}],
        "times_backwards": [], "silences": [],
        "log_events": [(1, "Microsoft-Windows-Eventlog", 1102)],
        "carved": [13, 14, 15, 16],
    },
    "wrapped-out-of-order.evtx": {
        "records": 30, "recovered": 0, "errors": [], "bad_checksums": [],
        "gaps": [(11, 20, 10, 21)],
        "ids_backwards": [{"record_id": 21, "previous_record_id": 40, "chunk": 0,
                           "chunk_boundary": True}],
        "times_backwards": [(21, 40)], "silences": [],
        "log_events": [], "carved": [],
    },
}


def check_planted(reference, fixtures, gaps):
    """The oracle's reports of the triage fixtures hold the planted values."""
    checked = 0
    for file, want in PLANTED.items():
        log = fixtures / "triage" / file
        if not log.is_file():
            fail(f"planted: {log} is missing")
            continue
        r = oracle.report(reference, str(log), str(log), gaps, 3600)
        got = {
            "records": r["records"], "recovered": r["recovered"], "errors": r["errors"],
            "bad_checksums": r["bad_checksums"],
            "gaps": [(g["first_missing"], g["last_missing"], g["before"]["record_id"],
                      g["after"]["record_id"]) for g in r["gaps"]],
            "ids_backwards": r["ids_backwards"],
            "times_backwards": [(b["record_id"], b["previous_record_id"])
                                for b in r["times_backwards"]],
            "silences": [(s["after"]["record_id"], s["before"]["record_id"], s["seconds"])
                         for s in r["silences"]],
            "log_events": [(e["record_id"], e["provider"], e["event_id"])
                           for e in r["log_events"]],
            "carved": [c["record_id"] for c in r["carved"]],
        }
        for k in want:
            if got[k] != want[k]:
                fail(f"planted: {file} {k}: the oracle finds {got[k]}, planted {want[k]}")
        checked += 1
    return checked


# ---------------------------------------------------------------------------------------------
# Files


def check_file(job):
    """One log: both engines' JSON against the oracle's, text and JSON Rust == Zig."""
    reference, engines, log, gaps, silences = job
    runs = 0
    for silence in silences:
        try:
            want = oracle.document([oracle.report(reference, str(log), str(log), gaps, silence)])
        except oracle.OracleError as e:
            fail(f"{log}: the oracle cannot read the reference's outputs: {e}")
            return runs
        report = want["files"][0]
        status_want = 0 if report["error"] is None else 1
        extra = [] if silence == 3600 else ["--silence", str(silence)]
        for form in (["--json"], [], ["--top", "1"]):
            outs = []
            for engine in engines:
                got = run([engine, "triage", *form, *extra, str(log)])
                runs += 1
                label = f"{name(engine)} triage {' '.join(form + extra)} {log}"
                if got[0] is None:
                    fail(f"{label}: no answer in {HANG} s")
                    continue
                if got[0] != status_want:
                    fail(f"{label}: exit {got[0]}, want {status_want}: {got[2][:200]!r}")
                if status_want == 0 and got[2]:
                    fail(f"{label}: stderr {got[2][:200]!r}")
                if form == ["--json"]:
                    doc = parsed(got[1])
                    d = "not JSON" if doc is None else first_difference(doc, want)
                    if d:
                        fail(f"{label}: differs from the oracle at {d}")
                elif report["error"] is None:
                    lines = got[1].decode("utf-8", "replace").split("\n")
                    if len(lines) < 3 or lines[2] != records_line(report):
                        fail(f"{label}: line 3 is {lines[2:3]}, the oracle's "
                             f"{records_line(report)!r}")
                outs.append(got)
            if len(outs) == len(engines) and len(set(map(repr, outs))) != 1:
                fail(f"triage {' '.join(form + extra)} {log}: the engines differ")
    return runs


# ---------------------------------------------------------------------------------------------
# Many inputs


def check_inputs(reference, engines, fixtures, logs, gaps):
    """Directories and several files: JSON against the oracle, text lines, Rust == Zig."""
    tree = fixtures / "triage" if (fixtures / "triage").is_dir() else fixtures
    in_tree = sorted((p for p in tree.rglob("*") if p.suffix.lower() == ".evtx"),
                     key=lambda p: str(p.relative_to(tree)).encode())
    a, b = logs[0], logs[len(logs) // 2]
    missing = fixtures / "no-such-file.evtx"
    named = lambda p: f"{tree}/{p.relative_to(tree)}"
    cases = [
        ([tree], [(p, named(p)) for p in in_tree], 0),
        ([a, b], [(a, str(a)), (b, str(b))], 0),
        ([a, missing, b], [(a, str(a)), (missing, str(missing)), (b, str(b))], 1),
    ]
    runs = 0
    for inputs, logs, status_want in cases:
        reports = [oracle.report(reference, str(log), path, gaps, 3600) for log, path in logs]
        want = oracle.document(reports)
        text_want = "".join(summary_line(r) + "\n" for r in want["files"])
        text_want += totals_line(want["totals"]) + "\n"
        for form in (["--json"], []):
            outs = []
            for engine in engines:
                got = run([engine, "triage", *form, *map(str, inputs)])
                runs += 1
                label = f"{name(engine)} triage {' '.join(form)} {' '.join(map(str, inputs))}"
                if got[0] != status_want:
                    fail(f"{label}: exit {got[0]}, want {status_want}")
                if form:
                    doc = parsed(got[1])
                    d = "not JSON" if doc is None else first_difference(doc, want)
                    if d:
                        fail(f"{label}: differs from the oracle at {d}")
                elif got[1].decode("utf-8", "replace") != text_want:
                    fail(f"{label}: the text is not one line per log and the totals of the "
                         f"oracle's numbers")
                outs.append(got)
            if len(set(map(repr, outs))) != 1:
                fail(f"triage {' '.join(form)} {' '.join(map(str, inputs))}: the engines differ")
    return runs


# ---------------------------------------------------------------------------------------------
# Help


def check_help(engines, fixtures):
    """`triage -h` and `triage --help` print `include/help_triage.txt` (the reference prints its
    own help there: a deliberate difference the exit table cannot compare). Returns the runs."""
    page = fixtures.parent / "include" / "help_triage.txt"
    if not page.is_file():
        return 0
    runs = 0
    for engine in engines:
        for form in (["-h"], ["--help"], ["--json", "--help"]):
            if run([engine, "triage", *form]) != (0, page.read_bytes(), b""):
                fail(f"{name(engine)} triage {' '.join(form)}: not include/help_triage.txt")
            runs += 1
    return runs


# ---------------------------------------------------------------------------------------------
# Mutants


def mutants(data, rng):
    """Damaged copies of `data`: a few bit flips, a cut, a zeroed span, a 0xFF span."""
    out = []
    for k in range(MUTANTS_PER_FILE):
        m = bytearray(data)
        kind = k % 4
        if kind == 0:
            for _ in range(rng.randint(1, 8)):
                i = rng.randrange(len(m))
                m[i] ^= 1 << rng.randrange(8)
        elif kind == 1:
            m = m[:rng.randrange(4096, len(m))]
        else:
            start = rng.randrange(4096, len(m))
            end = min(len(m), start + rng.randint(1, 4096))
            m[start:end] = bytes([0 if kind == 2 else 0xFF]) * (end - start)
        out.append(bytes(m))
    return out


def check_mutant(job):
    """One mutant: no crash or hang; the oracle's document where it can follow the reference."""
    reference, engines, path, gaps = job
    outs, crashed = [], False
    for engine in engines:
        got = run([engine, "triage", "--json", str(path)])
        if got[0] is None or got[0] not in (0, 1):
            fail(f"mutant {path.name}: {name(engine)} "
                 f"{'hangs' if got[0] is None else f'exits {got[0]}'}")
            crashed = True
        outs.append(got)
    if crashed:
        return "crash"
    if len(set(map(repr, outs))) != 1:
        fail(f"mutant {path.name}: the engines differ")
    try:
        want = oracle.document([oracle.report(reference, str(path), str(path), gaps, 3600)])
    except (oracle.OracleError, ValueError, KeyError, IndexError):
        return "unread"
    d = first_difference(parsed(outs[0][1]), want)
    if d:
        fail(f"mutant {path.name}: {name(engines[0])} differs from the oracle at {d}")
    return "compared"


# ---------------------------------------------------------------------------------------------


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--reference", required=True)
    ap.add_argument("--fixtures", type=Path, required=True)
    ap.add_argument("--engine", action="append", required=True)
    ap.add_argument("--samples", type=Path)
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--no-mutants", action="store_true")
    a = ap.parse_args()
    gaps = oracle.Gaps(a.fixtures)
    logs = sorted(a.fixtures.rglob("*.evtx"), key=lambda p: str(p).encode())
    samples = []
    if a.samples and a.samples.is_dir():
        samples = sorted(a.samples.glob("*.evtx"))
    elif os.environ.get("EVTX_REQUIRE_SAMPLES") == "1":
        fail(f"no public samples at {a.samples} (EVTX_REQUIRE_SAMPLES=1)")
    else:
        print(f"triage-parity: SKIPPED the public samples (none at {a.samples})")
    planted = check_planted(a.reference, a.fixtures, gaps) if (a.fixtures / "triage").is_dir() \
        else 0
    jobs = [(a.reference, a.engine, log, gaps,
             [3600, 60] if "triage" in log.parts or log in samples else [3600])
            for log in logs + samples]
    with ThreadPoolExecutor(a.jobs) as pool:
        runs = sum(pool.map(check_file, jobs))
        print(f"triage-parity: planted: {planted} fixtures hold what the generator planted")
        print(f"triage-parity: files: {len(logs)} fixtures and {len(samples)} samples, {runs} "
              f"runs against the oracle and each other")
        print(f"triage-parity: inputs: "
              f"{check_inputs(a.reference, a.engine, a.fixtures, logs, gaps)} runs of many inputs")
        print(f"triage-parity: help: {check_help(a.engine, a.fixtures)} pages")
        if not a.no_mutants:
            with tempfile.TemporaryDirectory() as tmp:
                rng = random.Random(1)
                paths = []
                for rel in MUTATED:
                    src = a.fixtures / rel
                    if not src.is_file():
                        continue
                    for k, m in enumerate(mutants(src.read_bytes(), rng)):
                        p = Path(tmp) / f"{src.stem}-{k}.evtx"
                        p.write_bytes(m)
                        paths.append(p)
                verdicts = list(pool.map(check_mutant,
                                         [(a.reference, a.engine, p, gaps) for p in paths]))
            print(f"triage-parity: mutants: {len(paths)} mutants, "
                  f"{verdicts.count('compared')} compared with the oracle, "
                  f"{verdicts.count('unread')} the oracle cannot follow, "
                  f"{verdicts.count('crash')} crashes or hangs")
    print(f"triage-parity: {len(failures)} failures")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
