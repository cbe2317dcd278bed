#!/usr/bin/env python3
"""A stand-in engine: runs the real CLI, then plants one corruption in what it printed.

    stand_in.py REAL CORRUPTION ARGS...

compare/gates/run.sh passes it (through a wrapper script) to evtx-compare as an engine binary, or
as the reference, and checks that the gate goes red. Each corruption is one an audit of the gates
found a gate passing.
"""
import re
import subprocess
import sys

BANNER = re.compile(rb"^Record [0-9]+\n", re.M)


def split(out: bytes, banner: bool):
    """(text before the first record, [record bytes, banner included])."""
    if not banner:
        lines = out.splitlines(keepends=True)
        return b"", lines
    starts = [m.start() for m in BANNER.finditer(out)]
    if not starts:
        return out, []
    bounds = starts + [len(out)]
    return out[: starts[0]], [out[a:b] for a, b in zip(bounds, bounds[1:])]


# damaged/unused-binxml-json.evtx: the records the reference's JSON fails (2-5) or drops (their
# stale copies 21-24) for an unused broken BinXML value, which our engines render (known gap).
UNUSED_BINXML = {2, 3, 4, 5, 21, 22, 23, 24}
RECORD = re.compile(rb"^Record ([0-9]+)(?: \(recovered\))?\n", re.M)
EVENT_RECORD_ID = re.compile(rb'"EventRecordID":([0-9]+)[,}]')


def records_by_id(out: bytes, banner: bool):
    """(text before the first record, [(record id, record bytes, banner included)])."""
    if not banner:
        return b"", [(record_id(l), l) for l in out.splitlines(keepends=True)]
    starts = [m.start() for m in RECORD.finditer(out)]
    if not starts:
        return out, []
    bounds = starts + [len(out)]
    return out[: starts[0]], [
        (int(RECORD.match(out, a).group(1)), out[a:b]) for a, b in zip(bounds, bounds[1:])
    ]


def record_id(line: bytes):
    m = EVENT_RECORD_ID.search(line)
    return int(m.group(1)) if m else None


def option(args, name, default):
    return args[args.index(name) + 1] if name in args else default


def main():
    real, corruption, args = sys.argv[1], sys.argv[2], sys.argv[3:]
    run = subprocess.run([real] + args, capture_output=True)
    out, err, code = run.stdout, run.stderr, run.returncode
    fmt = option(args, "-o", "xml")
    threads = option(args, "-t", "0")
    path = args[-1].encode()
    banner = fmt != "jsonl"
    xml = fmt == "xml"

    if corruption == "none":
        pass
    elif corruption == "reverse-records":
        pre, records = split(out, banner)
        out = pre + b"".join(reversed(records))
    elif corruption == "junk-before-first-record":
        out = b"junk\n" + out
    elif corruption == "jsonl-trailing-space":
        if fmt == "jsonl":
            out = out.replace(b"\n", b" \n")
    elif corruption == "exit-134":
        code = 134
    elif corruption == "exit-134-at-t2":
        if threads == "2":
            code = 134
    elif corruption == "drop-error-line":
        lines = err.splitlines(keepends=True)
        first = next((i for i, l in enumerate(lines) if l.startswith(b"error: ")), None)
        if first is not None:
            del lines[first]
        err = b"".join(lines)
    elif corruption == "invent-error-lines":
        for record in (98, 99):
            line = b"error: %s: chunk 0, record %d, offset 0x200: invented record error\n"
            err += line % (path, record)
    elif corruption == "drop-error-invent-another":
        lines = err.splitlines(keepends=True)
        first = next((i for i, l in enumerate(lines) if l.startswith(b"error: ")), None)
        if first is not None:
            del lines[first]
        lines.append(b"error: %s: chunk 0, record 99, offset 0x200: invented record error\n" % path)
        err = b"".join(lines)
    elif corruption == "xml-only-fail-record-2":
        if xml:
            pre, records = split(out, True)
            out = pre + b"".join(r for r in records if not r.startswith(b"Record 2\n"))
            line = b"error: %s: chunk 0, record 2, offset 0x200: invented record error\n"
            err = line % path + err
    elif corruption in ("json-drop-unused-binxml", "separate-drop-unused-binxml"):
        # An engine that drops them as the reference does: in every JSON flavour, or only with
        # --separate-json-attributes (as both engines did before the rule).
        everywhere = corruption == "json-drop-unused-binxml"
        if not xml and (everywhere or "--separate-json-attributes" in args):
            pre, records = records_by_id(out, banner)
            out = pre + b"".join(r for i, r in records if i not in UNUSED_BINXML)
    elif corruption == "json-drop-record-7":
        # Passed as the reference: its JSON count changes (one record fewer).
        if not xml:
            pre, records = records_by_id(out, banner)
            out = pre + b"".join(r for i, r in records if i != 7)
    elif corruption == "json-render-record-6":
        # An engine that renders what no rule lets it: record 6 of unused-binxml-json, whose
        # template uses the broken value, as a copy of record 1 instead of its error line.
        if not xml:
            pre, records = records_by_id(out, banner)
            one = next((r for i, r in records if i == 1), None)
            if one is not None:
                six = one.replace(b'"EventRecordID":1,', b'"EventRecordID":6,')
                six = six.replace(b"Record 1\n", b"Record 6\n")
                out = pre + b"".join(r + (six if i == 5 else b"") for i, r in records)
                err = b"".join(
                    l for l in err.splitlines(keepends=True) if b", record 6, " not in l
                )
    elif corruption == "info-trailing-space":
        if "info" in args:
            out = out.replace(b"\n", b" \n", 1)
    elif corruption == "info-exit-1":
        if "info" in args:
            code = 1
    elif corruption == "triage-records-plus-one":
        # One record more in the first report, in the JSON and in the text.
        if args[:1] == ["triage"]:
            out = re.sub(rb'"records":([0-9]+)',
                         lambda m: b'"records":%d' % (int(m.group(1)) + 1), out, count=1)
            out = re.sub(rb"^records ([0-9]+),",
                         lambda m: b"records %d," % (int(m.group(1)) + 1), out, count=1,
                         flags=re.M)
    elif corruption == "triage-gap-dropped":
        # The last id gap of the first report left out (its count in the totals kept).
        if args[:1] == ["triage"] and "--json" in args:
            out = re.sub(rb',\{"first_missing":[^]]*?\}\}\]', b"]", out, count=1)
    elif corruption == "garbage":
        out, err, code = b"garbage\n", b"", 0
    else:
        sys.exit(f"stand_in.py: unknown corruption {corruption}")

    sys.stdout.buffer.write(out)
    sys.stderr.buffer.write(err)
    sys.exit(code)


if __name__ == "__main__":
    main()
