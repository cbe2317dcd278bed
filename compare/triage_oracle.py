"""The triage oracle: the report `triage --json` must print, from the reference's outputs alone.

No engine of ours is run or imported. For each log the reference `evtx_dump` 0.15.1 is run
three ways (`-t 1`): `info -i LOG` (file header, flags, header CRC32, each chunk's CRC32s),
`-o json` / `-o jsonl` (the live records, their banners' ids, its stderr error blocks) and the
same with `--recover-records` (the carved records, marked `Record N (recovered)`). The report is
computed from those texts by the rules of `shared-fixtures/README.md`, "Triage (beyond the
reference)"; the five fields of a record are read by `filter_oracle.py`'s `json_fields` and
`digits`/`parse_time`, so the field rules are read one way. Two facts the reference's outputs
do not give are computed from the log's bytes here (`struct` only): the chunk slot of each live
record (for `ids_backwards`) and whether a trailing partial slot starts with the chunk magic.

Where the engines deliberately print more than the reference (`shared-fixtures/known-gaps/`),
the oracle adds the same records by the rules the filter oracle uses: every record the XML run
renders and the JSON run lacks ("Unused BinXML values", "For oracles"); the records of the four
value types we render (their text from the manifest's `ours` output); the trailing partial
chunk's `incomplete chunk` error and, with recovery, its carved records (the reference's carving
of a twin whose cut slot is padded to a whole cleared chunk, checked against the known gaps).

    python3 compare/triage_oracle.py REFERENCE [--fixtures DIR] [--silence S] LOG...

prints the JSON document (compact, one line). `compare/triage_parity.py` imports it.
"""

import argparse
import difflib
import json
import os
import re
import struct
import subprocess
import sys
import tempfile
from collections import Counter
from pathlib import Path

import filter_oracle as fo
from filter_parity import gap_ids, load_gaps, rfc3339

SCHEMA = "evtx-twin triage 1"
HEADER_BLOCK = 4096
CHUNK = 65536
CHUNK_MAGIC = b"ElfChnk\0"
FLAGS = [("DIRTY", 0x1), ("FULL", 0x2), ("NO_CRC32", 0x4)]

# The log-event table (shared-fixtures/README.md, "Triage"): (provider, event id) -> what.
LOG_EVENTS = {
    ("microsoft-windows-eventlog", 1100): "event logging service shut down",
    ("microsoft-windows-eventlog", 1101): "audit events dropped by the transport",
    ("microsoft-windows-eventlog", 1102): "audit log cleared",
    ("microsoft-windows-eventlog", 1104): "security log full",
    ("microsoft-windows-eventlog", 1105): "event log automatic backup",
    ("microsoft-windows-eventlog", 1108): "event logging service error",
    ("microsoft-windows-eventlog", 104): "log cleared",
    ("eventlog", 6005): "event log service started",
    ("eventlog", 6006): "event log service stopped",
    ("eventlog", 6008): "unexpected shutdown",
    ("microsoft-windows-security-auditing", 4719): "system audit policy changed",
    ("security", 517): "audit log cleared (legacy)",
}

# The reference's error chains (its `Caused by:` messages) as our error-line KINDs
# (shared-fixtures/README.md, "Error lines"): the first pattern found in the chain wins, in
# this order. A chain none matches is an oracle failure, not a guess.
KINDS = [
    (r"Invalid EVTX chunk header magic", "bad chunk magic"),
    (r"Failed to build string cache", "bad string table"),
    (r"Failed to parse chunk header", "bad chunk magic"),
    (r"Invalid EVTX record header magic", "bad record magic"),
    (r"buffer too small for EVTX record header", "truncated record header"),
    (r"The record header's timestamp .* is out of range", "bad record timestamp"),
    (r"Invalid EVTX record data size", "bad record size"),
    # The size passes the chunk end: the reference finds it when it slices the BinXML.
    (r"record BinXML slice is out of bounds", "bad record size"),
    (r"^Failed to parse record number \d+", "bad binxml"),
]


class OracleError(Exception):
    """The reference's outputs cannot be read as the rules expect."""


def run(argv):
    env = dict(os.environ, RUST_BACKTRACE="0", RUST_LIB_BACKTRACE="0")
    p = subprocess.run(argv, capture_output=True, check=False, env=env,
                       stdin=subprocess.DEVNULL)
    return p.returncode, p.stdout, p.stderr


# ---------------------------------------------------------------------------------------------
# The reference's texts


def read_info(reference, log):
    """`evtx_dump info -i LOG`: the header fields and each chunk's (slot, header, records)
    CRC32 words; None with the first line of the error when the reference refuses the file."""
    status, out, err = run([reference, "info", "-i", log])
    if status != 0:
        return None, first_error_line(err)
    text = out.decode("utf-8", "replace")
    field = dict(re.findall(r"^  (\S.*?)\s{2,}(.*)$", text, re.M))
    header = {
        "first_chunk": int(field["First chunk"]),
        "last_chunk": int(field["Last chunk"]),
        "next_record_id": int(field["Next record ID"]),
        "chunks": int(field["Chunk count"].split()[0]),
        "flags": [name for name, _ in FLAGS if name in field["Flags"].split(" | ")],
        "checksum": field["CRC32"].split()[0].lower(),
    }
    if header["checksum"] not in ("ok", "bad", "none"):
        raise OracleError(f"{log}: info's CRC32 line: {field['CRC32']}")
    chunks = []
    table = text.split("\n\n")[1].splitlines()[1:]
    for row in table:
        cells = row.split()
        if len(cells) == 7:
            chunks.append((int(cells[0]), cells[5], cells[6]))
    return header, chunks


def first_error_line(err):
    """The reference's fatal error, its first line without `Error: `."""
    line = err.decode("utf-8", "replace").split("\n", 1)[0]
    return line[len("Error: "):] if line.startswith("Error: ") else line


def error_blocks(stderr):
    """Each `Failed to dump the next record.` block as (KIND, the record id it names)."""
    text = stderr.decode("utf-8", "replace")
    out = []
    for block in text.split("Failed to dump the next record.")[1:]:
        chain = [m.group(1) for m in re.finditer(r"^\s+\d+: (.*)$", block, re.M)]
        kind = next((k for pattern, k in KINDS
                     if any(re.search(pattern, c) for c in chain)), None)
        if kind is None:
            raise OracleError(f"no KIND for the reference's error chain {chain}")
        named = re.search(r"Failed to parse record number (\d+)", block)
        out.append((kind, int(named.group(1)) if named else None))
    return out


def dump(reference, log, options):
    """The reference's records of LOG (`-o jsonl`, ids from `-o json`) and its error blocks."""
    recs = fo.records(reference, log, "jsonl", False, options)
    _, _, err = run([reference, "-t", "1", "-o", "jsonl", *options, log])
    return recs, error_blocks(err)


def xml_extras(reference, log, options, recs):
    """The records the reference's XML run renders and its JSON run lacks, merged into `recs`
    in walk order ("Unused BinXML values", "For oracles"); returns (records, added)."""
    # Not `fo.records`: its check that the XML's fields are the JSON's holds for the records
    # both render, and only the records the JSON lacks are taken from here.
    xml = fo.split_banners(run([reference, "-t", "1", "-o", "xml", *options, log])[1])
    for r in xml:
        r.fields = fo.xml_fields(fo.body(r))
    key = lambda r: (r.id, r.recovered)
    matcher = difflib.SequenceMatcher(None, [key(r) for r in recs], [key(r) for r in xml],
                                      autojunk=False)
    merged, added = [], []
    for op, a0, a1, b0, b1 in matcher.get_opcodes():
        merged += recs[a0:a1]
        if op in ("insert", "replace"):
            merged += xml[b0:b1]
            added += xml[b0:b1]
    return merged, added


# ---------------------------------------------------------------------------------------------
# The log's bytes: chunk order, record slots, the trailing partial slot


def chunk_walk(data):
    """The slots in the order the dump walks them (contract 3.3)."""
    slots = max(0, len(data) - HEADER_BLOCK) // CHUNK
    best = None
    for n in range(slots):
        c = data[HEADER_BLOCK + n * CHUNK:HEADER_BLOCK + n * CHUNK + 512]
        if c[:8] != CHUNK_MAGIC:
            continue
        first, last = struct.unpack_from("<QQ", c, 24)
        if first <= last and (best is None or first < best[0]):
            best = (first, n)
    oldest = best[1] if best else 0
    return list(range(oldest, slots)) + list(range(0, oldest))


def record_slots(data, ids):
    """The chunk slot of each live record (ids in walk order): the slots are taken in walk
    order, and a record is in the current slot when a record header with its id lies there
    after the previous record's, else in the next slot that holds one."""
    order = chunk_walk(data)
    where = {}
    for n in order:
        base = HEADER_BLOCK + n * CHUNK
        c = data[base:base + CHUNK]
        for m in re.finditer(rb"\*\*\0\0", c):
            if m.start() + 16 <= len(c):
                rid = struct.unpack_from("<Q", c, m.start() + 8)[0]
                where.setdefault((n, rid), []).append(m.start())
    out, at, pos = [], 0, -1
    for rid in ids:
        here = [o for o in where.get((order[at], rid), []) if o > pos] if order else []
        if here:
            pos = here[0]
        else:
            for k in range(at + 1, len(order)):
                if (order[k], rid) in where:
                    at, pos = k, where[(order[k], rid)][0]
                    break
            else:
                raise OracleError(f"record {rid}: no slot after slot {order[at]} holds it")
        out.append(order[at])
    return out


def partial_slot(data):
    """The trailing partial slot's offset when its bytes start with the chunk magic (README,
    "A log cut inside its last chunk"), else None."""
    start = HEADER_BLOCK + max(0, len(data) - HEADER_BLOCK) // CHUNK * CHUNK
    if start < len(data) and data[start:start + 8] == CHUNK_MAGIC:
        return start
    return None


def partial_twin(data, start, tmp, name):
    """A twin of the log for the records the engines carve from its trailing partial slot: the
    cut slot padded with zeros to a whole chunk, cleared (free space 512, first id 1 > last id
    0, so the order scan ignores it and it comes where the first pass ends, as our rule puts
    it) and without string or template table (names and definitions are then read by offset;
    the engines skip the table check there). The reference's `--recover-records` run of the
    twin is the log's with that slot's carved records in their place."""
    twin = bytearray(data[start:] + bytes(CHUNK - (len(data) - start)))
    struct.pack_into("<QQ", twin, 8, 1, 0)
    struct.pack_into("<QQ", twin, 24, 1, 0)
    struct.pack_into("<I", twin, 48, 512)
    twin[128:512] = bytes(384)
    path = Path(tmp) / name
    path.write_bytes(bytes(data[:start]) + bytes(twin))
    return str(path)


# ---------------------------------------------------------------------------------------------
# The known gaps of one log


class Gaps:
    """What `shared-fixtures/known-gaps/` and the manifest's `ours` outputs say of a log."""

    def __init__(self, fixtures):
        self.entries = load_gaps(fixtures) if fixtures and (fixtures / "known-gaps").is_dir() \
            else []
        self.ours = {}
        if fixtures and (fixtures / "manifest.json").is_file():
            manifest = json.loads((fixtures / "manifest.json").read_text())
            for f in manifest["files"]:
                if "ours" in f:
                    self.ours[Path(f["path"]).name] = (fixtures / f["ours"]["jsonl"],
                                                       fixtures / f["ours"]["xml_file"])

    def ids(self, name, mode):
        return gap_ids(self.entries, name, mode)


def with_value_types(recs, blocks, ids, ours):
    """The records of the four value types the engines render (known-gap ids `ids`), taken from
    the engines' expected output `ours` (the reference's jsonl and xml on a twin: the same
    records in the same walk order, those records rendered; the xml's banners give the ids)
    and put where `ours` has them; each replaces the reference's error block that names it."""
    if not ids or not ours:
        return recs, blocks
    lines = ours[0].read_bytes().splitlines(keepends=True)
    banners = [r.id for r in fo.split_banners(ours[1].read_bytes())]
    if len(banners) != len(lines):
        raise OracleError(f"{ours[0]}: {len(lines)} records, its xml {len(banners)}")
    matcher = difflib.SequenceMatcher(None, [r.text for r in recs], lines, autojunk=False)
    merged = []
    for op, a0, a1, b0, b1 in matcher.get_opcodes():
        if op in ("insert", "replace"):
            for line, rid in zip(lines[b0:b1], banners[b0:b1]):
                if rid in ids:
                    merged.append(fo.Record(rid, False, line, fo.json_fields(line, False)))
                    blocks = drop_block(blocks, rid)
        merged += recs[a0:a1]
    return merged, blocks


def drop_block(blocks, rid):
    """`blocks` without the reference's `bad binxml` block for record `rid`."""
    i = next((i for i, b in enumerate(blocks) if b == ("bad binxml", rid)), None)
    if i is None:
        raise OracleError(f"record {rid}: the engines render it, the reference has no error "
                          "block for it")
    return blocks[:i] + blocks[i + 1:]


# ---------------------------------------------------------------------------------------------
# The report


def number(text):
    n = fo.digits(text)
    return n if n is not None and n <= 0xFFFFFFFF else None


def ascii_lower(text):
    """ASCII letters in lower case, every other character as it is."""
    return text.encode("utf-8", "surrogatepass").lower().decode("utf-8", "surrogatepass")


def ticks(fields):
    return fo.parse_time((fields or {}).get("time") or "")


def field(fields, name):
    return (fields or {}).get(name)


def text_key(t):
    return t.encode("utf-8", "surrogatepass")


def table(counts, key_name, sort_key):
    """Rows {key_name: key, count} by count descending, then key ascending, null last."""
    rows = sorted(counts.items(), key=lambda kv: (-kv[1], sort_key(kv[0])))
    return [{key_name: k, "count": n} for k, n in rows]


def null_last(k, f=lambda x: x):
    return (1, 0) if k is None else (0, f(k))


def report(reference, log, path, gaps, silence):
    """The report of one log (a dict in the spec's member order)."""
    status, _, err = run([reference, "-t", "1", "-o", "jsonl", log])
    if status != 0 and b"Failed to open evtx file" in err:
        # The dump's own words (what the many-inputs run prints for the file).
        return {"path": path, "error": first_error_line(err)}
    header, chunks = read_info(reference, log)
    if header is None:
        raise OracleError(f"{log}: the dump reads it, info does not: {chunks}")
    data = Path(log).read_bytes()
    name = Path(log).name
    live, blocks = dump(reference, log, [])
    live, added = xml_extras(reference, log, [], live)
    drop = [r.id for r in added if not r.recovered]
    for rid in drop:
        blocks = drop_block(blocks, rid)
    types = gaps.ids(name, "jsonl") - set(drop)
    live, blocks = with_value_types(live, blocks, types, gaps.ours.get(name))

    partial = partial_slot(data)
    with tempfile.TemporaryDirectory() as tmp:
        walked = log if partial is None else partial_twin(data, partial, tmp, name)
        recovered, _ = dump(reference, walked, ["--recover-records"])
        recovered, _ = xml_extras(reference, walked, ["--recover-records"], recovered)
    carved = [r for r in recovered if r.recovered]
    types = gaps.ids(name, "jsonl-recover") - set(drop) - {r.id for r in added}
    recovered, _ = with_value_types(recovered, [("bad binxml", i) for i in types], types,
                                    gaps.ours.get(name))
    if [r.id for r in recovered if not r.recovered] != [r.id for r in live]:
        raise OracleError(f"{log}: the recover run's live records are not the dump's")
    if partial is not None:
        blocks.append(("incomplete chunk", None))
        # Where the known gaps name the cut slot's records, the twin must carve exactly those.
        plain = Counter(r.id for r in dump(reference, log, ["--recover-records"])[0]
                        if r.recovered)
        extra = Counter(r.id for r in carved)
        if plain - extra:
            raise OracleError(f"{log}: the twin lacks carved records {sorted(plain - extra)}")
        want = gaps.ids(name, "jsonl-recover")
        if want and sorted((extra - plain).elements()) != sorted(want):
            raise OracleError(f"{log}: the cut slot's twin carves "
                              f"{sorted((extra - plain).elements())}, the known gaps list "
                              f"{sorted(want)}")

    size = len(data)
    slots = (size - HEADER_BLOCK + CHUNK - 1) // CHUNK
    bad = []
    for slot, head, recs in chunks:
        if head == "BAD":
            bad.append({"chunk": slot, "what": "header"})
        elif recs == "BAD":
            bad.append({"chunk": slot, "what": "records"})

    fields = [r.fields for r in live]
    times = [ticks(f) for f in fields]
    known = [t for t in times if t is not None]

    def count(values):
        out = {}
        for v in values:
            out[v] = out.get(v, 0) + 1
        return out

    providers = count(field(f, "provider") for f in fields)
    event_ids = count((field(f, "provider"), number(field(f, "event_id"))) for f in fields)
    channels = count(field(f, "channel") for f in fields)
    levels = count(number(field(f, "level")) for f in fields)
    errors = count(kind for kind, _ in blocks)

    def stamp(i):
        return rfc3339(times[i]) if times[i] is not None else None

    first_of = {}
    for i, r in enumerate(live):
        first_of.setdefault(r.id, i)
    ids = sorted(first_of)
    gaps_out = []
    for x, y in zip(ids, ids[1:]):
        if y > x + 1:
            gaps_out.append({
                "first_missing": x + 1, "last_missing": y - 1, "missing": y - x - 1,
                "before": {"record_id": x, "time": stamp(first_of[x])},
                "after": {"record_id": y, "time": stamp(first_of[y])},
            })
    slot_of = record_slots(data, [r.id for r in live]) if live else []
    backwards, back_times, silences = [], [], []
    for i in range(1, len(live)):
        p, r = live[i - 1], live[i]
        if r.id <= p.id:
            backwards.append({"record_id": r.id, "previous_record_id": p.id,
                              "chunk": slot_of[i], "chunk_boundary": slot_of[i] != slot_of[i - 1]})
        pt, t = times[i - 1], times[i]
        if pt is not None and t is not None:
            if t < pt:
                back_times.append({"record_id": r.id, "time": rfc3339(t),
                                   "previous_record_id": p.id, "previous_time": rfc3339(pt)})
            if t - pt >= silence * fo.TICKS_PER_SECOND:
                silences.append({"after": {"record_id": p.id, "time": rfc3339(pt)},
                                 "before": {"record_id": r.id, "time": rfc3339(t)},
                                 "seconds": (t - pt) // fo.TICKS_PER_SECOND})
    log_events = []
    for i, r in enumerate(live):
        provider, eid = field(r.fields, "provider"), number(field(r.fields, "event_id"))
        what = LOG_EVENTS.get((ascii_lower(provider), eid)) if provider else None
        if what:
            log_events.append({"record_id": r.id, "time": stamp(i), "provider": provider,
                               "event_id": eid, "what": what})
    carved_out = []
    for r in carved:
        t = ticks(r.fields)
        carved_out.append({"record_id": r.id, "time": rfc3339(t) if t is not None else None,
                           "provider": field(r.fields, "provider"),
                           "event_id": number(field(r.fields, "event_id"))})
    return {
        "path": path,
        "error": None,
        "size": size,
        "header": header,
        "chunk_slots": slots,
        "bad_checksums": bad,
        "records": len(live),
        "recovered": len(carved),
        "first_time": rfc3339(min(known)) if known else None,
        "last_time": rfc3339(max(known)) if known else None,
        "providers": table(providers, "name", lambda k: null_last(k, text_key)),
        "event_ids": [{"provider": p, "event_id": e, "count": n} for (p, e), n in sorted(
            event_ids.items(),
            key=lambda kv: (-kv[1], null_last(kv[0][0], text_key), null_last(kv[0][1])))],
        "channels": table(channels, "name", lambda k: null_last(k, text_key)),
        "levels": table(levels, "level", null_last),
        "errors": [{"kind": k, "count": n} for k, n in sorted(errors.items())],
        "gaps": gaps_out,
        "ids_backwards": backwards,
        "times_backwards": back_times,
        "silences": silences,
        "log_events": log_events,
        "carved": carved_out,
    }


def document(reports):
    """The whole document of a run over these reports."""
    ok = [r for r in reports if r["error"] is None]
    return {
        "schema": SCHEMA,
        "files": reports,
        "totals": {
            "files": len(reports),
            "unreadable": len(reports) - len(ok),
            "records": sum(r["records"] for r in ok),
            "recovered": sum(r["recovered"] for r in ok),
            "errors": sum(e["count"] for r in ok for e in r["errors"]),
            "gaps": sum(len(r["gaps"]) for r in ok),
            "log_events": sum(len(r["log_events"]) for r in ok),
        },
    }


def main(argv):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("reference")
    ap.add_argument("logs", nargs="+")
    ap.add_argument("--fixtures", type=Path)
    ap.add_argument("--silence", type=int, default=3600)
    a = ap.parse_args(argv)
    gaps = Gaps(a.fixtures)
    doc = document([report(a.reference, log, log, gaps, a.silence) for log in a.logs])
    sys.stdout.write(json.dumps(doc, ensure_ascii=False, separators=(",", ":")) + "\n")


if __name__ == "__main__":
    main(sys.argv[1:])
