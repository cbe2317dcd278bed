"""`make test`'s filter gate: the extensions of both CLIs against what no engine wrote.

    python3 compare/filter_parity.py --reference REF --fixtures shared-fixtures \
        --engine zig-out/bin/evtx-rs --engine zig-out/bin/evtx-zig [--samples DIR]

Three parts, each printing its counts; any failure prints its case and makes the exit status 1.

* filters: every committed log (and a few public samples, when `--samples` names a folder that
  holds them) in five modes (xml, json, jsonl, and the JSON ones with
  `--separate-json-attributes`), with and without `--recover-records`, under a table of
  filters built from the log's own records (`filter_table`). Each engine's stdout at `-t 1`
  and `-t 2` must be the oracle's (`filter_oracle.py`: the reference's full output, filtered),
  but for the records `shared-fixtures/known-gaps/` lets the engines print beyond the
  reference; its stderr and exit status those of its own run without the filter (a record's
  error does not depend on the filter), and the two engines' stdout the same bytes.
* provenance: `--provenance` on every committed log: each mark's chunk, offset, recovered
  flag and checksum status as computed here from the log's bytes, the record at that offset
  the one the banner names, the output without the marks the output without the option, and
  both engines the same bytes.
* inputs: two or more INPUTs and directories: each log's output is what a run on it alone
  gives, in argument order (a directory's `*.evtx`, any case, in path order); a log that
  cannot be opened is its error and the others still convert, exit 1.
* help: `help extensions` prints `include/help_extensions.txt`; `-h` and `--help` beside an
  extension print the reference's page.
"""

import argparse
import json
import os
import re
import struct
import subprocess
import sys
import tempfile
import zlib
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import filter_oracle as oracle

# Mode name (as `known-gaps` names them), its dump arguments, its format, separate attributes.
MODES = [
    ("xml", "xml", False),
    ("json", "json", False),
    ("jsonl", "jsonl", False),
    ("json-separate-attributes", "json", True),
    ("jsonl-separate-attributes", "jsonl", True),
]
# The public samples the filters run on (all of them would cost minutes): small logs of several
# providers and channels, a wrapped Security log and a System log with carved records.
SAMPLES = [
    "Security_short_selected.evtx",
    "new-user-security.evtx",
    "MSExchange_Management_wec.evtx",
    "Microsoft-Windows-HelloForBusiness%4Operational.evtx",
    "Application_no_crc32.evtx",
    "2-vss_7-System.evtx",
    "security.evtx",
]
# The modes of the samples (each log in all five with and without recovery is the fixtures').
SAMPLE_MODES = ["xml", "jsonl", "json-separate-attributes"]
NO_CRC32 = 0x4
failures = []


def fail(text):
    failures.append(text)
    print(f"filter-parity: FAIL {text}", file=sys.stderr)


def run(argv):
    p = subprocess.run(argv, capture_output=True, check=False)
    return p.returncode, p.stdout, p.stderr


# ---------------------------------------------------------------------------------------------
# Known gaps: the records the engines print beyond the reference.


def load_gaps(fixtures):
    """(file name, mode) → the record ids the engines may print beyond the reference."""
    entries = []
    for path in sorted((fixtures / "known-gaps").glob("*.json")):
        entries += json.loads(path.read_text())
    return [e for e in entries if e.get("category") == "extra-record"]


def gap_ids(gaps, name, mode):
    # A JSON mode with banners has its jsonl twin's gaps.
    if mode.startswith("json-separate-attributes"):
        mode = "jsonl" + mode[len("json"):]
    ids = set()
    for e in gaps:
        if e["file"] != name:
            continue
        modes = e.get("modes") or [e["mode"]]
        if any(m == mode or m == "*" or (m.startswith("*") and mode.endswith(m[1:]))
               for m in modes):
            ids.update(e.get("records") or [e.get("record")])
    return ids


def without_gaps(records, ids, expected):
    """`records` (id, text) with gap records taken out where they are not the next expected
    one (a gap id may also be a live record the reference prints)."""
    out, want = [], iter(expected)
    nxt = next(want, None)
    for rid, text in records:
        if nxt is not None and text == nxt:
            out.append(text)
            nxt = next(want, None)
        elif rid in ids:
            continue
        else:
            out.append(text)
    return b"".join(out)


def engine_records(engine, log, fmt, args, out):
    """An engine's output cut into (header id, text); a banner-less one takes its ids from the
    engine's `-o json` run of the same arguments."""
    if fmt != "jsonl":
        return [(r.id, r.text) for r in oracle.split_banners(out)]
    _, banners, _ = run([engine, *args_as(args, "json"), log])
    lines = out.splitlines(keepends=True)
    ids = [r.id for r in oracle.split_banners(banners)]
    return list(zip(ids, lines)) if len(ids) == len(lines) else [(None, t) for t in lines]


def args_as(args, fmt):
    out = list(args)
    out[out.index("-o") + 1] = fmt
    return out


# ---------------------------------------------------------------------------------------------
# Filters


def rfc3339(ticks):
    """FILETIME ticks as RFC 3339 with 7 fraction digits, UTC."""
    seconds, fraction = divmod(ticks, oracle.TICKS_PER_SECOND)
    days, rest = divmod(seconds, 86400)
    days -= oracle.DAYS_1601_TO_1970
    # civil_from_days (H. Hinnant), from 1970-01-01.
    z = days + 719468
    era = z // 146097
    doe = z - era * 146097
    yoe = (doe - doe // 1460 + doe // 36524 - doe // 146096) // 365
    doy = doe - (365 * yoe + yoe // 4 - yoe // 100)
    mp = (5 * doy + 2) // 153
    d = doy - (153 * mp + 2) // 5 + 1
    m = mp + 3 if mp < 10 else mp - 9
    y = yoe + era * 400 + (m <= 2)
    h, rest = divmod(rest, 3600)
    mi, s = divmod(rest, 60)
    return f"{y:04}-{m:02}-{d:02}T{h:02}:{mi:02}:{s:02}.{fraction:07}Z"


def swapped(name):
    """ASCII letters in the other case: the match is case-insensitive."""
    return "".join(c.swapcase() if c.isascii() else c for c in name)


def filter_table(records):
    """Filters for a log, from its records' fields: each option alone, combinations, an empty
    result, everything, boundary times, `--events` composed. (name, arguments) pairs."""
    fields = [r.fields for r in records if r.fields]
    ids = [oracle.digits(f["event_id"]) for f in fields]
    levels = [oracle.digits(f["level"]) for f in fields if oracle.digits(f["level"]) is not None]
    providers = [f["provider"] for f in fields if f["provider"]]
    times = sorted(t for t in (oracle.parse_time(f["time"] or "") for f in fields) if t is not None)
    known = sorted(set(i for i in ids if i is not None))
    common = max(known, key=ids.count) if known else 4624
    rare = min(known, key=ids.count) if known else 1
    # The first record of the commonest id: the combination keeps it.
    pivot = fields[ids.index(common)] if known else {}
    mid = times[len(times) // 2] if times else 131_000_000_000_000_000
    provider = swapped(providers[-1]) if providers else "No-Such-Provider"
    channel = (pivot.get("channel") or "security").lower()
    first = oracle.parse_time(pivot.get("time") or "") or 0
    table = [
        ("event-id", ["--event-id", str(common)]),
        ("event-id list", ["--event-id", f"{rare},{common + 1}-{common + 100},0"]),
        ("event-id all", ["--event-id", "0-4294967295"]),
        ("provider", ["--provider", provider]),
        ("providers", ["--provider", "nobody", "--provider", provider.upper()]),
        ("channel", ["--channel", channel]),
        ("level", ["--level", f"{levels[0] if levels else 4},0-2"]),
        ("since", ["--since", rfc3339(mid)]),
        ("until", ["--until", rfc3339(mid)]),
        ("one instant", ["--since", rfc3339(mid), "--until", rfc3339(mid + 1)]),
        ("one tick after", ["--since", rfc3339(mid + 1)]),
        ("offset time", ["--until", rfc3339(mid)[:-1] + "+00:00"]),
        ("combined", ["--event-id", str(common), "--channel", channel,
                      "--since", rfc3339(first)]),
        ("empty", ["--event-id", "4294967295", "--provider", provider]),
    ]
    # Only ASCII letters compare case-insensitively: `Ö` is not `ö`.
    odd = next((p for p in providers if not p.isascii()), None)
    if odd:
        table += [("provider, ASCII case swapped", ["--provider", swapped(odd)]),
                  ("provider, every case changed", ["--provider", odd.upper()])]
    return table


def check_filters(job):
    """One log in one mode: every filter, both engines, both thread counts."""
    reference, engines, log, gaps, (mode, fmt, sep), recover, table_of = job
    options = ["--recover-records"] if recover else []
    name = f"{log.name} {mode}{' recover' if recover else ''}"
    try:
        records = oracle.records(reference, str(log), fmt, sep, options)
    except ValueError as e:
        fail(f"{name}: the oracle cannot read the reference's output: {e}")
        return 0
    table = table_of(log)
    events = ["--events", "1-3,7"]
    try:
        with_events = oracle.records(reference, str(log), fmt, sep, options + events)
    except ValueError as e:
        fail(f"{name}: the oracle cannot read the reference's --events output: {e}")
        return 0
    ids = gap_ids(gaps, log.name, mode + ("-recover" if recover else ""))
    base = ["-o", fmt] + (["--separate-json-attributes"] if sep else []) + options
    cases = [(n, a, records, []) for n, a in table]
    cases += [(f"--events and {n}", a, with_events, events) for n, a in table[:1] + table[7:8]]
    checked = 0
    for threads in ("1", "2"):
        plain = {e: run([e, "-t", threads, *base, str(log)]) for e in engines}
        for case, filter_args, recs, extra in cases:
            kept = [r.text for r in recs if oracle.Filter.from_args(filter_args).keeps(r.fields)]
            want = b"".join(kept)
            outs = []
            for engine in engines:
                args = ["-t", threads, *base, *extra, *filter_args]
                status, out, err = run([engine, *args, str(log)])
                label = f"{name} -t {threads} [{case}: {' '.join(extra + filter_args)}] " \
                        f"{Path(engine).name}"
                got = out
                if ids:
                    got = without_gaps(engine_records(engine, str(log), fmt, args, out), ids, kept)
                if got != want:
                    fail(f"{label}: stdout differs from the oracle's "
                         f"({len(got)} bytes, the oracle's {len(want)})")
                p_status, _, p_err = plain[engine]
                if extra:
                    p_status, _, p_err = run([engine, "-t", threads, *base, *extra, str(log)])
                if (status, err) != (p_status, p_err):
                    fail(f"{label}: stderr or status differ from the run without the filter "
                         f"(status {status}, without {p_status})")
                outs.append((status, out, err))
                checked += 1
            if len(set(map(repr, outs))) != 1:
                fail(f"{name} -t {threads} [{case}]: the engines differ")
    return checked


# ---------------------------------------------------------------------------------------------
# Provenance


MARK_JSON = re.compile(rb'"provenance":\{"file":"((?:[^"\\]|\\.)*)","chunk":(\d+),'
                       rb'"offset":(\d+),"recovered":(true|false),"checksum":"(\w+)"\},')
MARK_XML = re.compile(rb'<!-- provenance file="([^"]*)" chunk="(\d+)" offset="0x([0-9a-f]+)" '
                      rb'recovered="(true|false)" checksum="(\w+)" -->\n')


def checksum_status(data, chunk):
    """The chunk's checksum status from the file's bytes: `unchecked` for a cut chunk or one
    flagged NO_CRC32, else `ok` when the header and records CRC32s match."""
    start = 4096 + chunk * 65536
    c = data[start:start + 65536]
    if len(c) < 65536:
        return "unchecked"
    flags, header_crc = struct.unpack_from("<II", c, 120)
    if flags & NO_CRC32:
        return "unchecked"
    if zlib.crc32(c[:120] + c[128:512]) != header_crc:
        return "bad"
    free, records_crc = struct.unpack_from("<II", c, 48)
    if not 512 <= free <= 65536 or zlib.crc32(c[512:free]) != records_crc:
        return "bad"
    return "ok"


def check_provenance(job):
    """One log in one mode: the marks' values from the bytes, the rest unchanged, Rust ≡ Zig."""
    engines, log, fmt, recover = job
    options = ["--recover-records"] if recover else []
    name = f"{log.name} -o {fmt}{' recover' if recover else ''} --provenance"
    data = log.read_bytes()
    outs, marks = [], 0
    for engine in engines:
        for threads in ("1", "2"):
            args = ["-t", threads, "-o", fmt, *options]
            plain = run([engine, *args, str(log)])
            marked = run([engine, *args, "--provenance", str(log)])
            outs.append(marked)
            pattern = MARK_XML if fmt == "xml" else MARK_JSON
            if (marked[0], pattern.sub(b"", marked[1]), marked[2]) != plain:
                fail(f"{name} {Path(engine).name}: without its marks, not the run without it")
            if fmt == "jsonl":
                continue
            for r in oracle.split_banners(marked[1]):
                m = pattern.search(r.text)
                if m is None:
                    fail(f"{name}: record {r.id} has no mark")
                    continue
                marks += 1
                file_, chunk, offset = m.group(1), int(m.group(2)), m.group(3)
                offset = int(offset, 16 if fmt == "xml" else 10)
                want = (str(log).encode(), (offset - 4096) // 65536, r.recovered,
                        checksum_status(data, (offset - 4096) // 65536))
                got = (file_, chunk, m.group(4) == b"true", m.group(5).decode())
                head = data[offset:offset + 16]
                if got != want or head[:4] != b"**\0\0" or \
                        struct.unpack_from("<Q", head, 8)[0] != r.id:
                    fail(f"{name}: record {r.id}: mark {got}, from the bytes {want}, "
                         f"record header {head.hex()}")
    if len(set(map(repr, outs[::2]))) != 1 or len(set(map(repr, outs[1::2]))) != 1:
        fail(f"{name}: the engines or thread counts differ")
    return marks


# ---------------------------------------------------------------------------------------------
# Many inputs


def check_inputs(engines, fixtures):
    """Many inputs against runs on each alone; returns the number of cases checked."""
    a = fixtures / "synthetic" / "basic.evtx"
    b = fixtures / "damaged" / "bad-records.evtx"
    c = fixtures / "synthetic" / "data-shapes.evtx"
    missing = fixtures / "no-such-file.evtx"
    checked = 0
    with tempfile.TemporaryDirectory() as tmp:
        tree = Path(tmp) / "logs"
        for rel, src in [("b/x.EVTX", a), ("a.evtx", b), ("b/c/y.evTx", c), ("notes.txt", a),
                         ("z.evtx.bak", a), ("b/d.evtx", c)]:
            (tree / rel).parent.mkdir(parents=True, exist_ok=True)
            os.symlink(src.resolve(), tree / rel)
        in_tree = [tree / p for p in ["a.evtx", "b/c/y.evTx", "b/d.evtx", "b/x.EVTX"]]
        cases = [
            ([a, b], [a, b], 0),
            ([b, a, c], [b, a, c], 0),
            ([a, missing, b], [a, missing, b], 1),
            ([tree, a], in_tree + [a], 0),
        ]
        outs = []
        for engine in engines:
            for fmt in ("xml", "jsonl"):
                for inputs, alone, status_want in cases:
                    for extra in ([], ["--provenance"]):
                        args = [engine, "-t", "2", "-o", fmt, *extra]
                        got = run([*args, *map(str, inputs)])
                        singles = [run([*args, str(p)]) for p in alone]
                        want = (status_want, b"".join(s[1] for s in singles),
                                b"".join(s[2] for s in singles))
                        label = f"{Path(engine).name} -o {fmt} {' '.join(extra)} " \
                                f"{' '.join(p.name for p in inputs)}"
                        if got != want:
                            fail(f"inputs {label}: status {got[0]} (want {want[0]}), "
                                 f"stdout {'same' if got[1] == want[1] else 'differs'}, "
                                 f"stderr {'same' if got[2] == want[2] else 'differs'}")
                        outs.append(got)
                        checked += 1
    half = len(outs) // 2
    if outs[:half] != outs[half:]:
        fail("inputs: the engines differ")
    return checked


# ---------------------------------------------------------------------------------------------
# Help


def check_help(reference, engines, fixtures):
    """`help extensions` is the page's file; `-h`/`--help` beside an extension option the
    reference's page (the program's name aside). Returns the number of cases checked."""
    page = (fixtures.parent / "include" / "help_extensions.txt").read_bytes()
    checked = 0
    for engine in engines:
        name = Path(engine).name.encode()
        if run([engine, "help", "extensions"]) != (0, page, b""):
            fail(f"{name.decode()} help extensions: not include/help_extensions.txt")
        for form in ("-h", "--help"):
            want = run([reference, form])
            usage = want[1].replace(b"Usage: evtx_dump", b"Usage: " + name)
            want = (want[0], usage, want[2])
            for line in (["--provenance", form], ["--event-id", "1", form, "a", "b"]):
                if run([engine, *line]) != want:
                    fail(f"{name.decode()} {' '.join(line)}: not the reference's help page")
                checked += 1
        checked += 1
    return checked


# ---------------------------------------------------------------------------------------------


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--reference", required=True)
    ap.add_argument("--fixtures", type=Path, required=True)
    ap.add_argument("--engine", action="append", required=True)
    ap.add_argument("--samples", type=Path)
    ap.add_argument("--jobs", type=int, default=2)
    a = ap.parse_args()
    gaps = load_gaps(a.fixtures)
    logs = sorted(a.fixtures.rglob("*.evtx"))
    samples = []
    if a.samples and a.samples.is_dir():
        samples = [a.samples / s for s in SAMPLES if (a.samples / s).is_file()]
    elif os.environ.get("EVTX_REQUIRE_SAMPLES") == "1":
        fail(f"no public samples at {a.samples} (EVTX_REQUIRE_SAMPLES=1)")
    else:
        print(f"filter-parity: SKIPPED the public samples (none at {a.samples})")
    tables = {}

    def table_of(log):
        if log not in tables:
            tables[log] = filter_table(oracle.records(a.reference, str(log), "json", False, []))
        return tables[log]

    jobs = [(a.reference, a.engine, log, gaps, mode, recover, table_of)
            for log in logs for mode in MODES for recover in (False, True)]
    jobs += [(a.reference, a.engine, log, gaps, mode, recover, table_of)
             for log in samples for mode in MODES if mode[0] in SAMPLE_MODES
             for recover in (False, True)]
    for log in logs + samples:
        table_of(log)
    with ThreadPoolExecutor(a.jobs) as pool:
        filtered = sum(pool.map(check_filters, jobs))
        prov = [(a.engine, log, fmt, recover) for log in logs
                for fmt in ("xml", "json", "jsonl") for recover in (False, True)]
        marks = sum(pool.map(check_provenance, prov))
    print(f"filter-parity: filters: {len(logs)} logs and {len(samples)} samples, "
          f"{len(jobs)} log-mode pairs, {filtered} filtered runs against the oracle")
    print(f"filter-parity: provenance: {len(prov)} log-mode pairs, {marks} marks checked "
          f"against the logs' bytes")
    print(f"filter-parity: inputs: {check_inputs(a.engine, a.fixtures)} runs of many inputs")
    print(f"filter-parity: help: {check_help(a.reference, a.engine, a.fixtures)} pages")
    print(f"filter-parity: {len(failures)} failures")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
