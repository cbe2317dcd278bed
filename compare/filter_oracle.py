"""The filters' oracle: what a filtered dump must print, from the reference's full output alone.

No engine of ours is run or imported. The reference `evtx_dump` dumps the log in the mode asked
for (`-t 1`, its `--events` included); the output is cut into records at their `Record N`
banners (the `-o json` run of the same options gives a banner-less `jsonl` run its record ids,
record by record); each record is kept or dropped by the five `Event/System` fields its text
shows, and the kept records' exact bytes, in order, are the filtered output. The rules are
`shared-fixtures/README.md`, "Filters": a field is the text the reference's JSON shows for it
(the XML's text in `-o xml`, checked against the JSON where both hold the record);
`EventID` and `Level` give a number only when that text is ASCII decimal digits; names compare
whole, ASCII case-insensitive; `TimeCreated/@SystemTime` is read as RFC 3339; a missing field
matches no constraint on it; AND between options, OR inside one.

    python3 compare/filter_oracle.py REFERENCE LOG -o xml|json|jsonl [--separate-json-attributes]
        [--recover-records] [--events E] [--event-id L] [--provider N]... [--channel N]...
        [--level L] [--since T] [--until T]

writes the filtered output to stdout. `compare/filter_parity.py` imports it.
"""

import json
import re
import subprocess
import sys
from dataclasses import dataclass, field

# A banner line: the record's header id, and whether it was carved (`--recover-records`).
BANNER = re.compile(rb"^Record (\d+)( \(recovered\))?\n(?=<\?xml|\{)", re.M)
TICKS_PER_SECOND = 10_000_000


@dataclass
class Filter:
    """The constraints, as the CLIs read them; empty lists and `None` constrain nothing."""

    event_ids: list = field(default_factory=list)
    levels: list = field(default_factory=list)
    providers: list = field(default_factory=list)
    channels: list = field(default_factory=list)
    since: int | None = None
    until: int | None = None

    @staticmethod
    def from_args(args):
        """The filter of a command line's filter options (the values known to be valid)."""
        f = Filter()
        it = iter(args)
        for a in it:
            if a == "--event-id":
                f.event_ids += parse_list(next(it))
            elif a == "--level":
                f.levels += parse_list(next(it))
            elif a == "--provider":
                f.providers.append(next(it))
            elif a == "--channel":
                f.channels.append(next(it))
            elif a == "--since":
                f.since = parse_time(next(it))
            elif a == "--until":
                f.until = parse_time(next(it))
            else:
                raise ValueError(f"not a filter option: {a}")
        return f

    def keeps(self, fields):
        """Whether a record whose System fields are `fields` (None: no System) is kept."""
        if fields is None:
            return not (self.event_ids or self.levels or self.providers or self.channels
                        or self.since is not None or self.until is not None)
        if self.event_ids and not in_ranges(digits(fields.get("event_id")), self.event_ids):
            return False
        if self.levels and not in_ranges(digits(fields.get("level")), self.levels):
            return False
        if self.providers and not named(fields.get("provider"), self.providers):
            return False
        if self.channels and not named(fields.get("channel"), self.channels):
            return False
        if self.since is not None or self.until is not None:
            t = parse_time(fields.get("time") or "")
            if t is None:
                return False
            if self.since is not None and t < self.since:
                return False
            if self.until is not None and t >= self.until:
                return False
        return True


def parse_list(text):
    """`4624,4700-4799` as inclusive ranges (the CLIs refuse anything else)."""
    out = []
    for part in text.split(","):
        a, _, b = part.partition("-")
        out.append((int(a), int(b or a)))
    return out


def digits(text):
    """The number a field's text gives: ASCII decimal digits only, else None."""
    if text is None or not re.fullmatch(r"[0-9]+", text):
        return None
    return int(text)


def in_ranges(n, ranges):
    return n is not None and any(a <= n <= b for a, b in ranges)


def named(text, names):
    """Whole-text ASCII case-insensitive comparison (non-ASCII letters compare exactly)."""
    if text is None:
        return False
    low = text.encode("utf-8", "surrogatepass").lower()
    return any(low == n.encode("utf-8").lower() for n in names)


def days_from_civil(y, m, d):
    """Days from 1970-01-01 (H. Hinnant's algorithm)."""
    y -= m <= 2
    era = y // 400
    yoe = y - era * 400
    doy = (153 * ((m + 9) % 12) + 2) // 5 + d - 1
    doe = yoe * 365 + yoe // 4 - yoe // 100 + doy
    return era * 146097 + doe - 719468


DAYS_1601_TO_1970 = -days_from_civil(1601, 1, 1)
TIME = re.compile(r"(\d{4})-(\d{2})-(\d{2})[Tt](\d{2}):(\d{2}):(\d{2})(?:\.(\d{1,7}))?"
                  r"(?:([Zz])|([+-])(\d{2}):(\d{2}))")


def parse_time(text):
    """RFC 3339 (0-7 fraction digits, `Z` or an offset) as FILETIME ticks, else None."""
    m = TIME.fullmatch(text)
    if not m:
        return None
    y, mo, d, h, mi, s = (int(m.group(i)) for i in range(1, 7))
    leap = y % 4 == 0 and (y % 100 != 0 or y % 400 == 0)
    month_days = [31, 29 if leap else 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31]
    if not (1 <= mo <= 12 and 1 <= d <= month_days[mo - 1] and h < 24 and mi < 60 and s < 60):
        return None
    offset = 0
    if m.group(9):
        oh, om = int(m.group(10)), int(m.group(11))
        if oh > 23 or om > 59:
            return None
        offset = (oh * 60 + om) * (1 if m.group(9) == "+" else -1)
    fraction = int((m.group(7) or "0").ljust(7, "0"))
    days = days_from_civil(y, mo, d) + DAYS_1601_TO_1970
    ticks = ((days * 86400 + h * 3600 + mi * 60 + s - offset * 60) * TICKS_PER_SECOND
             + fraction)
    return ticks if ticks >= 0 else None


def json_text(value):
    """The text the JSON shows for a scalar (a number's digits; not a bool, null or object)."""
    if isinstance(value, bool) or value is None:
        return None
    if isinstance(value, int):
        return str(value)
    if isinstance(value, str):
        return value or None
    return None


def json_fields(body, separate):
    """The five System fields of a record's JSON text, or None when it has no System."""
    try:
        event = json.loads(body).get("Event")
    except (ValueError, AttributeError):
        return None
    system = event.get("System") if isinstance(event, dict) else None
    if not isinstance(system, dict):
        return None

    def attribute(element, name):
        if separate:
            attrs = system.get(f"{element}_attributes")
        else:
            value = system.get(element)
            attrs = value.get("#attributes") if isinstance(value, dict) else None
        return json_text(attrs.get(name)) if isinstance(attrs, dict) else None

    def text(element):
        value = system.get(element)
        if isinstance(value, dict):
            value = value.get("#text")
        return json_text(value)

    return {
        "event_id": text("EventID"),
        "level": text("Level"),
        "provider": attribute("Provider", "Name"),
        "channel": text("Channel"),
        "time": attribute("TimeCreated", "SystemTime"),
    }


ENTITY = re.compile(r"&(amp|lt|gt|quot|apos|#x[0-9a-fA-F]+|#[0-9]+);")


def xml_unescape(text):
    def one(m):
        e = m.group(1)
        named_entities = {"amp": "&", "lt": "<", "gt": ">", "quot": '"', "apos": "'"}
        if e in named_entities:
            return named_entities[e]
        return chr(int(e[2:], 16) if e.startswith("#x") else int(e[1:]))

    return ENTITY.sub(one, text)


def xml_fields(body):
    """The five System fields of a record's XML text, or None when it has no System."""
    text = body.decode("utf-8", "surrogateescape")
    # The root is Event (after the declaration and our comment lines), System its child.
    if not re.match(r"(?:<\?xml[^>]*>\n)?(?:<!--[^\n]*-->\n)*<Event[\s>]", text):
        return None
    m = re.search(r"<System>(.*?)</System>", text, re.S)
    if not m:
        return None
    system = m.group(1)

    def element(name):
        e = re.search(rf"<{name}(?:\s[^>]*)?>([^<]*)</{name}>", system)
        return xml_unescape(e.group(1)) or None if e else None

    def attribute(name, attr):
        e = re.search(rf"<{name}\s[^>]*?\b{attr}=\"([^\"]*)\"", system)
        return xml_unescape(e.group(1)) or None if e else None

    return {
        "event_id": element("EventID"),
        "level": element("Level"),
        "provider": attribute("Provider", "Name"),
        "channel": element("Channel"),
        "time": attribute("TimeCreated", "SystemTime"),
    }


@dataclass
class Record:
    """One record of an output: its header id, whether carved, its bytes, its System fields."""

    id: int | None
    recovered: bool
    text: bytes
    fields: dict | None = None


def split_banners(out):
    """The records of a bannered output (`-o json`, `-o xml`), each with its banner."""
    starts = [m for m in BANNER.finditer(out)]
    if (starts[0].start() if starts else len(out)) != 0:
        raise ValueError("the output does not start with a record banner")
    records = []
    for n, m in enumerate(starts):
        end = starts[n + 1].start() if n + 1 < len(starts) else len(out)
        records.append(Record(int(m.group(1)), bool(m.group(2)), out[m.start():end]))
    return records


def body(record):
    """A record's text without its banner."""
    return record.text.split(b"\n", 1)[1]


def run_reference(reference, log, args):
    """The reference's stdout for `log` under `args` at one thread."""
    p = subprocess.run([reference, "-t", "1", *args, log], capture_output=True, check=False)
    return p.stdout


def records(reference, log, fmt, separate, options):
    """The reference's records of `log` in format `fmt`, each with its System fields.

    `options`: `--recover-records`, `--events E` as given. A `jsonl` output takes its records'
    ids from the `-o json` run of the same options (the same records, one line each)."""
    sep = ["--separate-json-attributes"] if separate else []
    out = run_reference(reference, log, ["-o", fmt, *sep, *options])
    if fmt == "jsonl":
        bannered = split_banners(run_reference(reference, log, ["-o", "json", *sep, *options]))
        lines = out.splitlines(keepends=True)
        if len(lines) != len(bannered):
            raise ValueError(f"{log}: jsonl has {len(lines)} records, json {len(bannered)}")
        result = []
        for line, b in zip(lines, bannered):
            if json.loads(line) != json.loads(body(b)):
                raise ValueError(f"{log}: record {b.id}: jsonl and json differ")
            result.append(Record(b.id, b.recovered, line, json_fields(line, separate)))
        return result
    result = split_banners(out)
    for r in result:
        r.fields = xml_fields(body(r)) if fmt == "xml" else json_fields(body(r), separate)
    if fmt == "xml":
        check_against_json(reference, log, result, options)
    return result


def check_against_json(reference, log, xml_records, options):
    """The XML's fields of each record equal its JSON's where the JSON run holds it (the k-th
    record of an id and carved flag in each), so reading the XML is reading the JSON."""
    json_records = split_banners(run_reference(reference, log, ["-o", "json", *options]))
    seen = {}
    by_key = {}
    for r in json_records:
        key = (r.id, r.recovered)
        seen[key] = seen.get(key, 0) + 1
        by_key[(key, seen[key])] = json_fields(body(r), False)
    seen = {}
    for r in xml_records:
        key = (r.id, r.recovered)
        seen[key] = seen.get(key, 0) + 1
        want = by_key.get((key, seen[key]), r.fields)
        if want != r.fields:
            raise ValueError(f"{log}: record {r.id}: XML fields {r.fields}, JSON's {want}")


def filtered(records_, filter_):
    """The bytes of the records `filter_` keeps, in order."""
    return b"".join(r.text for r in records_ if filter_.keeps(r.fields))


def main(argv):
    reference, log, rest = argv[0], argv[1], argv[2:]
    fmt, separate, options, filter_args = "xml", False, [], []
    it = iter(rest)
    for a in it:
        if a == "-o":
            fmt = next(it)
        elif a == "--separate-json-attributes":
            separate = True
        elif a == "--recover-records":
            options.append(a)
        elif a == "--events":
            options += [a, next(it)]
        else:
            filter_args += [a, next(it)]
    out = filtered(records(reference, log, fmt, separate, options), Filter.from_args(filter_args))
    sys.stdout.buffer.write(out)


if __name__ == "__main__":
    main(sys.argv[1:])
