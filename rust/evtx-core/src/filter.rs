//! Record filters (`--event-id`, `--provider`, `--channel`, `--level`, `--since`, `--until`):
//! the [`Filter`], its parsing from the command line's texts, and the decision, made from the
//! parsed record before it is rendered (the rules: `shared-fixtures/README.md`, "Filters").
//!
//! The decision reads five fields of the record's `Event/System` element, each as the text the
//! reference's JSON shows for it: `EventID`'s and `Level`'s content as numbers (ASCII decimal
//! digits), `Provider/@Name` and `Channel` as names (whole, ASCII case-insensitive), and
//! `TimeCreated/@SystemTime` as a time (RFC 3339, to FILETIME ticks). On the slow path they
//! come from the record's tree ([`Filter::decide_tree`]); on the fast path from the program's
//! [`Plan`], learnt once from the tree of the first record of its signature, and the record's
//! value slots ([`Filter::decide_plan`]). The Zig engine's `zig/src/filter.zig`.

use crate::escape::{self, Mode};
use crate::tree::{Element, Names, Node, Tree};
use crate::values_decode::{ty, Value};
use crate::values_format::{self, Flavor};
use encoding_rs::Encoding;

/// What a run keeps: every constraint must hold (AND); a list holds when one of its entries
/// does (OR). Empty lists and `None` bounds constrain nothing, and an empty filter keeps every
/// record on exactly the path a run without one takes.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Filter {
    /// `--event-id`: inclusive ranges of `System/EventID` values.
    pub event_ids: Vec<(u32, u32)>,
    /// `--level`: inclusive ranges of `System/Level` values.
    pub levels: Vec<(u32, u32)>,
    /// `--provider`: `System/Provider/@Name`, whole, ASCII case-insensitive.
    pub providers: Vec<String>,
    /// `--channel`: `System/Channel`, whole, ASCII case-insensitive.
    pub channels: Vec<String>,
    /// `--since`: `System/TimeCreated/@SystemTime` at or after it (FILETIME ticks).
    pub since: Option<u64>,
    /// `--until`: `System/TimeCreated/@SystemTime` before it (FILETIME ticks).
    pub until: Option<u64>,
}

/// FILETIME ticks (100 ns) in a second.
const TICKS_PER_SECOND: u64 = 10_000_000;
/// FILETIME ticks of 10000-01-01T00:00:00Z: from there on a FILETIME's text has no
/// four-digit year, so no TIME.
pub(crate) const TICKS_YEAR_10000: u64 = 2_650_467_744_000_000_000;
/// Days from 0000-03-01 (the civil calendar's origin in [`days_from_civil`]) to 1601-01-01.
const DAYS_TO_1601: i64 = 584_694;

impl Filter {
    /// Whether the filter keeps every record.
    pub fn is_empty(&self) -> bool {
        self.event_ids.is_empty()
            && self.levels.is_empty()
            && self.providers.is_empty()
            && self.channels.is_empty()
            && self.since.is_none()
            && self.until.is_none()
    }

    /// Checks what no single option's parser can: `--since` before `--until`. The error is
    /// the text the CLIs print.
    pub fn check(&self) -> Result<(), String> {
        match (self.since, self.until) {
            (Some(since), Some(until)) if since >= until => {
                Err("--since must be earlier than --until".to_string())
            }
            _ => Ok(()),
        }
    }
}

/// The five `System` fields a filter reads, in [`Plan::fields`] order.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Field {
    /// `System/EventID`'s content (its `Qualifiers` attribute is not read).
    EventId,
    /// `System/Provider/@Name`.
    Provider,
    /// `System/Channel`'s content.
    Channel,
    /// `System/Level`'s content.
    Level,
    /// `System/TimeCreated/@SystemTime`.
    Time,
}

impl Field {
    /// Every field, in [`Plan::fields`] order.
    pub const ALL: [Field; 5] = [
        Field::EventId,
        Field::Provider,
        Field::Channel,
        Field::Level,
        Field::Time,
    ];
}

/// Where a program's records take one field from, learnt once from the tree of the record the
/// program was recorded from (the program's signature fixes the record's shape, so every record
/// that replays it has the field in the same place).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub enum Source {
    /// The tree must be read: the field is made of several values, or of literal text and a
    /// value, or of an array item (or the plan was never learnt).
    #[default]
    Tree,
    /// The record has no such field (or its content is not text and values).
    Absent,
    /// The template's literal text, the same in every record.
    Fixed(Box<[u8]>),
    /// Substitution value `k` (record-wide, 0-based: the program's `slots[k]`), whole.
    Slot(u16),
}

/// A program's [`Source`] for each [`Field`].
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Plan {
    pub fields: [Source; 5],
}

/// The content nodes of each [`Field`] of the record tree whose root is `root`: `None` for a
/// field the record lacks. The root must be `Event`; the first `System` child element counts,
/// and in it the first element of each name, and of `Provider` and `TimeCreated` their first
/// attribute `Name` and `SystemTime`.
pub fn system_fields<'t>(names: &Names, tree: &'t Tree, root: u32) -> [Option<&'t [Node]>; 5] {
    let mut fields: [Option<&[Node]>; 5] = [None; 5];
    let Some(event) = tree.elems.get(root as usize) else {
        return fields;
    };
    if names.get(event.name) != "Event" {
        return fields;
    }
    let element = |node: &Node| match *node {
        Node::Element(id) => Some(&tree.elems[id as usize]),
        _ => None,
    };
    let Some(system) = tree
        .children(event)
        .iter()
        .filter_map(element)
        .find(|e| names.get(e.name) == "System")
    else {
        return fields;
    };
    let attribute = |e: &Element, name: &str| {
        let a = tree.attrs(e).iter().find(|a| names.get(a.name) == name)?;
        Some(tree.items(a))
    };
    let mut seen = [false; 5];
    for e in tree.children(system).iter().filter_map(element) {
        let (field, nodes) = match names.get(e.name) {
            "EventID" => (Field::EventId, Some(tree.children(e))),
            "Provider" => (Field::Provider, attribute(e, "Name")),
            "Channel" => (Field::Channel, Some(tree.children(e))),
            "Level" => (Field::Level, Some(tree.children(e))),
            "TimeCreated" => (Field::Time, attribute(e, "SystemTime")),
            _ => continue,
        };
        // The first element of the name decides, even when it lacks the attribute.
        if !std::mem::replace(&mut seen[field as usize], true) {
            fields[field as usize] = nodes;
        }
    }
    fields
}

impl Plan {
    /// The plan of the program recorded from the tree whose root is `root`.
    pub fn of_tree(
        chunk: &[u8],
        codec: &'static Encoding,
        names: &Names,
        tree: &Tree,
        root: u32,
    ) -> Plan {
        let fields = system_fields(names, tree, root);
        Plan {
            fields: fields.map(|nodes| source_of(chunk, codec, nodes)),
        }
    }
}

/// Where a field made of `nodes` comes from.
fn source_of(chunk: &[u8], codec: &'static Encoding, nodes: Option<&[Node]>) -> Source {
    let Some(nodes) = nodes else {
        return Source::Absent;
    };
    let origin = |node: &Node| match *node {
        Node::Text16 { src, item, .. } | Node::Ansi { src, item, .. } => Some((src, item)),
        Node::Value(v) => Some((v.src, v.item)),
        _ => None,
    };
    // No value of the record: the same text in every record that replays the program.
    if !nodes
        .iter()
        .any(|n| origin(n).is_some_and(|(src, _)| src != 0))
    {
        let mut text = Vec::new();
        return match write_nodes_text(&mut text, chunk, codec, nodes) {
            true => Source::Fixed(text.into()),
            false => Source::Absent,
        };
    }
    match nodes {
        [one] => match origin(one) {
            Some((src, 0)) if src != 0 => Source::Slot(src - 1),
            _ => Source::Tree,
        },
        _ => Source::Tree,
    }
}

/// Appends the text of a field's `nodes`, unescaped UTF-8 (what the reference's JSON shows,
/// string or number): `false` when one is neither text nor a value (an element, CDATA, a
/// character or entity reference), whose field never matches.
pub fn write_nodes_text(
    out: &mut Vec<u8>,
    chunk: &[u8],
    codec: &'static Encoding,
    nodes: &[Node],
) -> bool {
    for node in nodes {
        let ok = match *node {
            Node::Text16 { off, units, .. } => {
                let o = off as usize;
                let end = o + 2 * units as usize;
                chunk.get(o..end).is_some() && {
                    escape::write_utf16_in(out, chunk, o, end, Mode::Raw);
                    true
                }
            }
            Node::Ansi { off, len, .. } => write_ansi(out, chunk, codec, off, len),
            Node::Value(v) => write_value_text(out, chunk, codec, &v),
            _ => false,
        };
        if !ok {
            return false;
        }
    }
    true
}

/// Appends the text of value `v` (as [`write_nodes_text`]).
pub fn write_value_text(
    out: &mut Vec<u8>,
    chunk: &[u8],
    codec: &'static Encoding,
    v: &Value,
) -> bool {
    let o = v.off as usize;
    match v.ty {
        ty::STRING => {
            let end = o + 2 * v.len as usize;
            chunk.get(o..end).is_some() && {
                escape::write_utf16_in(out, chunk, o, end, Mode::Raw);
                true
            }
        }
        ty::ANSI => write_ansi(out, chunk, codec, v.off, v.len),
        ty::BINXML => false,
        _ => {
            if chunk.get(o..o + v.len as usize).is_none() {
                return false;
            }
            values_format::write_value(out, chunk, v, codec, Flavor::Json);
            true
        }
    }
}

/// ANSI text at `chunk[off..off + len]`, NULs removed, decoded with `codec`.
fn write_ansi(
    out: &mut Vec<u8>,
    chunk: &[u8],
    codec: &'static Encoding,
    off: u32,
    len: u32,
) -> bool {
    let Some(bytes) = chunk.get(off as usize..off as usize + len as usize) else {
        return false;
    };
    let bytes: Vec<u8> = bytes.iter().copied().filter(|&b| b != 0).collect();
    out.extend_from_slice(codec.decode_without_bom_handling(&bytes).0.as_bytes());
    true
}

impl Filter {
    /// Whether the filter constrains `field`.
    fn constrains(&self, field: Field) -> bool {
        match field {
            Field::EventId => !self.event_ids.is_empty(),
            Field::Provider => !self.providers.is_empty(),
            Field::Channel => !self.channels.is_empty(),
            Field::Level => !self.levels.is_empty(),
            Field::Time => self.since.is_some() || self.until.is_some(),
        }
    }

    /// Whether a field whose text is `text` holds the filter's constraint on it (`None`: the
    /// record has no such field, which holds only where nothing constrains it).
    pub fn holds(&self, field: Field, text: Option<&[u8]>) -> bool {
        let Some(text) = text else {
            return !self.constrains(field);
        };
        let in_ranges = |ranges: &[(u32, u32)]| {
            ranges.is_empty()
                || digits(text).is_some_and(|n| {
                    ranges
                        .iter()
                        .any(|&(a, b)| u64::from(a) <= n && n <= u64::from(b))
                })
        };
        let named = |names: &[String]| {
            names.is_empty()
                || names
                    .iter()
                    .any(|n| n.as_bytes().eq_ignore_ascii_case(text))
        };
        match field {
            Field::EventId => in_ranges(&self.event_ids),
            Field::Level => in_ranges(&self.levels),
            Field::Provider => named(&self.providers),
            Field::Channel => named(&self.channels),
            Field::Time => {
                if !self.constrains(Field::Time) {
                    return true;
                }
                let Some(Some(t)) = rfc3339(text) else {
                    return false;
                };
                self.since.is_none_or(|s| s <= t) && self.until.is_none_or(|u| t < u)
            }
        }
    }

    /// [`Filter::holds`] for value `v` without its text, where the type allows: an unsigned
    /// integer's number (its text is its decimal digits), a FILETIME's ticks (its text is
    /// their RFC 3339 form up to the year 9999). `None`: ask its text.
    fn holds_direct(&self, field: Field, chunk: &[u8], v: &Value) -> Option<bool> {
        let bytes = chunk.get(v.off as usize..(v.off as usize).checked_add(v.len as usize)?)?;
        let le = |n: usize| -> Option<u64> {
            let b = bytes.get(..n).filter(|_| bytes.len() == n)?;
            Some(b.iter().rev().fold(0u64, |acc, &x| acc << 8 | u64::from(x)))
        };
        let number = || match v.ty {
            ty::U8 => le(1),
            ty::U16 => le(2),
            ty::U32 => le(4),
            ty::U64 => le(8),
            _ => None,
        };
        let in_ranges = |ranges: &[(u32, u32)], n: u64| {
            ranges
                .iter()
                .any(|&(a, b)| u64::from(a) <= n && n <= u64::from(b))
        };
        match field {
            Field::EventId => Some(in_ranges(&self.event_ids, number()?)),
            Field::Level => Some(in_ranges(&self.levels, number()?)),
            Field::Time if v.ty == ty::FILETIME => {
                let t = le(8).filter(|&t| t < TICKS_YEAR_10000)?;
                Some(self.since.is_none_or(|s| s <= t) && self.until.is_none_or(|u| t < u))
            }
            _ => None,
        }
    }

    /// The slow path's decision, from the record tree whose root is `root`. `scratch` holds
    /// each field's text in turn.
    pub fn decide_tree(
        &self,
        chunk: &[u8],
        codec: &'static Encoding,
        names: &Names,
        tree: &Tree,
        root: u32,
        scratch: &mut Vec<u8>,
    ) -> bool {
        let fields = system_fields(names, tree, root);
        Field::ALL.iter().all(|&field| {
            if !self.constrains(field) {
                return true;
            }
            scratch.clear();
            let text = fields[field as usize]
                .filter(|nodes| write_nodes_text(scratch, chunk, codec, nodes));
            self.holds(field, text.map(|_| &scratch[..]))
        })
    }

    /// The fast path's decision, from the program's `plan` and the record's substitution
    /// values `slots`; `None` when a field needs the tree ([`Source::Tree`]).
    pub fn decide_plan(
        &self,
        plan: &Plan,
        slots: &[Value],
        chunk: &[u8],
        codec: &'static Encoding,
        scratch: &mut Vec<u8>,
    ) -> Option<bool> {
        for field in Field::ALL {
            if !self.constrains(field) {
                continue;
            }
            let holds = match &plan.fields[field as usize] {
                Source::Tree => return None,
                Source::Absent => false,
                Source::Fixed(text) => self.holds(field, Some(text)),
                Source::Slot(k) => {
                    let v = slots.get(usize::from(*k))?;
                    match self.holds_direct(field, chunk, v) {
                        Some(holds) => holds,
                        None => {
                            scratch.clear();
                            let ok = write_value_text(scratch, chunk, codec, v);
                            self.holds(field, ok.then_some(&scratch[..]))
                        }
                    }
                }
            };
            if !holds {
                return Some(false);
            }
        }
        Some(true)
    }
}

/// Parses a LIST (`--event-id`, `--level`): comma-separated numbers from 0 to 4294967295 and
/// inclusive ranges `A-B` of them (`4624,4625,4700-4799`), ASCII digits only (no sign, no
/// space). A range whose first number is greater than its last is refused. The error is the
/// text the CLIs print after clap's `invalid value` prefix.
pub fn parse_list(text: &str) -> Result<Vec<(u32, u32)>, String> {
    let mut ranges = Vec::new();
    for part in text.split(',') {
        let (a, b) = part.split_once('-').unwrap_or((part, part));
        let (Some(a), Some(b)) = (digits_u32(a.as_bytes()), digits_u32(b.as_bytes())) else {
            return Err(format!(
                "expected a number from 0 to 4294967295 or a range such as 4700-4799, \
                 got '{part}'"
            ));
        };
        if a > b {
            return Err(format!(
                "the range '{part}' is empty: its first number is greater than its last"
            ));
        }
        ranges.push((a, b));
    }
    Ok(ranges)
}

/// Parses a NAME (`--provider`, `--channel`): any text but the empty one.
pub fn parse_name(text: &str) -> Result<String, String> {
    if text.is_empty() {
        return Err("a name cannot be empty".to_string());
    }
    Ok(text.to_string())
}

/// Parses a TIME (`--since`, `--until`) into FILETIME ticks: RFC 3339
/// (`2024-05-01T08:00:00Z`, `2024-05-01T10:00:00.1234567+02:00`) with at most 7 fraction
/// digits, at or after 1601-01-01T00:00:00Z.
pub fn parse_time(text: &str) -> Result<u64, String> {
    match rfc3339(text.as_bytes()) {
        Some(Some(ticks)) => Ok(ticks),
        Some(None) => {
            Err("the time is before 1601-01-01T00:00:00Z, where EVTX times begin".to_string())
        }
        None => Err("expected an RFC 3339 time such as 2024-05-01T08:00:00Z or \
             2024-05-01T10:00:00.1234567+02:00 (at most 7 fraction digits)"
            .to_string()),
    }
}

/// One or more ASCII digits as a number, `None` for anything else or past `u32::MAX`.
fn digits_u32(text: &[u8]) -> Option<u32> {
    u32::try_from(digits(text)?).ok()
}

/// One or more ASCII digits as a number (saturating at `u64::MAX`, which no `u32` range holds),
/// `None` for anything else: the number a field's text gives.
pub(crate) fn digits(text: &[u8]) -> Option<u64> {
    if text.is_empty() {
        return None;
    }
    let mut n: u64 = 0;
    for &c in text {
        if !c.is_ascii_digit() {
            return None;
        }
        n = n.saturating_mul(10).saturating_add(u64::from(c - b'0'));
    }
    Some(n)
}

/// Days from 0000-03-01 to `y-m-d` in the proleptic Gregorian calendar (H. Hinnant's
/// `days_from_civil`, counted from its era origin instead of 1970).
fn days_from_civil(y: i64, m: i64, d: i64) -> i64 {
    let y = if m <= 2 { y - 1 } else { y };
    let era = (y + 400).div_euclid(400) - 1;
    let yoe = y - era * 400;
    let mp = (m + 9) % 12;
    let doy = (153 * mp + 2) / 5 + d - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era * 146_097 + doe
}

/// Days in month `m` of year `y`.
fn month_days(y: i64, m: i64) -> i64 {
    match m {
        2 if y % 4 == 0 && (y % 100 != 0 || y % 400 == 0) => 29,
        2 => 28,
        4 | 6 | 9 | 11 => 30,
        _ => 31,
    }
}

/// `n` ASCII digits at `text[at..]` as a number.
fn fixed_digits(text: &[u8], at: usize, n: usize) -> Option<i64> {
    let part = text.get(at..at + n)?;
    part.iter().try_fold(0i64, |acc, &c| {
        c.is_ascii_digit().then(|| acc * 10 + i64::from(c - b'0'))
    })
}

/// RFC 3339 `date-time` (`T` or `t`, `Z`, `z` or `±HH:MM`, 1-7 fraction digits after a `.`)
/// as FILETIME ticks: `None` when the text is not one, `Some(None)` when it is one before
/// 1601-01-01T00:00:00Z. Seconds run to 59 (no leap second).
pub(crate) fn rfc3339(text: &[u8]) -> Option<Option<u64>> {
    let at = |i: usize, c: u8| text.get(i) == Some(&c);
    let num = |i: usize, n: usize| fixed_digits(text, i, n);
    let (y, mo, d) = (num(0, 4)?, num(5, 2)?, num(8, 2)?);
    let (h, mi, s) = (num(11, 2)?, num(14, 2)?, num(17, 2)?);
    let syntax = at(4, b'-') && at(7, b'-') && (at(10, b'T') || at(10, b't'));
    if !syntax || !at(13, b':') || !at(16, b':') {
        return None;
    }
    if !(1..=12).contains(&mo) || d < 1 || d > month_days(y, mo) || h > 23 || mi > 59 || s > 59 {
        return None;
    }
    let mut i = 19;
    let mut fraction = 0i64;
    if at(i, b'.') {
        let n = text[i + 1..]
            .iter()
            .take_while(|c| c.is_ascii_digit())
            .count();
        if !(1..=7).contains(&n) {
            return None;
        }
        fraction = num(i + 1, n)? * 10i64.pow(7 - n as u32);
        i += 1 + n;
    }
    let offset = match text.get(i..)? {
        b"Z" | b"z" => 0,
        [sign @ (b'+' | b'-'), ..] if text.len() == i + 6 && at(i + 3, b':') => {
            let (oh, om) = (num(i + 1, 2)?, num(i + 4, 2)?);
            if oh > 23 || om > 59 {
                return None;
            }
            let minutes = oh * 60 + om;
            if *sign == b'+' {
                minutes
            } else {
                -minutes
            }
        }
        _ => return None,
    };
    let days = days_from_civil(y, mo, d) - DAYS_TO_1601;
    let seconds = days * 86_400 + h * 3600 + mi * 60 + s - offset * 60;
    let ticks = seconds * TICKS_PER_SECOND as i64 + fraction;
    Some(u64::try_from(ticks).ok())
}

#[cfg(test)]
mod tests {
    use super::*;

    use crate::dump::{dump, EvtxFile, Outcome};
    use crate::options::{Format, Options};
    use std::ops::ControlFlow;

    /// A fixture's bytes (`shared-fixtures/<rel>`).
    fn fixture(rel: &str) -> Vec<u8> {
        let root = concat!(env!("CARGO_MANIFEST_DIR"), "/../../shared-fixtures/");
        std::fs::read(format!("{root}{rel}")).unwrap()
    }

    /// A run's records: each rendered one's id and text, and each error (id, offset, words).
    type Run = (Vec<(u64, String)>, Vec<String>);

    fn run(data: &[u8], opts: &Options) -> Run {
        let (mut records, mut errors) = (Vec::new(), Vec::new());
        let file = EvtxFile::open(data).unwrap();
        dump(&file, opts, |c| {
            for r in &c.records {
                match &r.outcome {
                    Outcome::Rendered(range) => {
                        let text = String::from_utf8_lossy(&c.bytes[range.clone()]).into_owned();
                        records.push((r.record_id.unwrap(), text));
                    }
                    Outcome::Failed(f) => {
                        errors.push(format!("{:?} {} {f}", r.record_id, r.file_offset))
                    }
                }
            }
            ControlFlow::Continue(())
        });
        (records, errors)
    }

    fn options(format: Format, threads: usize, filter: Filter) -> Options {
        Options {
            format,
            show_record_number: format != Format::Jsonl,
            indent: format == Format::Xml,
            threads,
            filter,
            ..Options::default()
        }
    }

    /// A filter from `option=value` words (times as ticks after `t0`).
    fn filter_of(spec: &str, t0: u64) -> Filter {
        let mut f = Filter::default();
        for (option, value) in spec.split(' ').filter_map(|w| w.split_once('=')) {
            let ticks = || Some(t0 + value.parse::<u64>().unwrap());
            match option {
                "event-id" => f.event_ids = parse_list(value).unwrap(),
                "level" => f.levels = parse_list(value).unwrap(),
                "provider" => f.providers.push(parse_name(value).unwrap()),
                "channel" => f.channels.push(parse_name(value).unwrap()),
                "since" => f.since = ticks(),
                "until" => f.until = ticks(),
                _ => panic!("{option}"),
            }
        }
        f
    }

    /// The filters of the table the tests share with the Zig engine (`filterCases`), each
    /// with the records of `synthetic/filters.evtx` it keeps (`t0`: 2024-05-01T08:00:00Z).
    fn filter_cases(t0: u64) -> Vec<(Filter, &'static [u64])> {
        let table: [(&str, &'static [u64]); 14] = [
            ("event-id=4624", &[1, 3, 5, 6, 9]),
            ("event-id=4625,4624", &[1, 2, 3, 5, 6, 9, 10]),
            ("event-id=4700-7045", &[4]),
            ("event-id=1-4623,4626-7044,7046-4294967295", &[]),
            (
                "provider=microsoft-windows-security-auditing provider=nobody",
                &[1, 2, 3],
            ),
            ("provider=Pr\u{f6}vider", &[8]),
            ("provider=PR\u{d6}VIDER", &[]),
            ("channel=SECURITY", &[1, 2, 3, 6, 8, 9, 10]),
            ("level=4", &[3, 4, 6, 9, 10]),
            ("level=0-2", &[1, 2, 5]),
            ("since=0", &[1, 2, 3, 4, 8, 9, 10]),
            ("until=1", &[1, 5]),
            ("since=10000000 until=36000000000", &[3]),
            ("event-id=4624 channel=security", &[1, 3, 6, 9]),
        ];
        table
            .into_iter()
            .map(|(spec, want)| (filter_of(spec, t0), want))
            .collect()
    }

    /// `filters.evtx` (its description in `shared-fixtures/README.md` says what each record
    /// holds) under each filter keeps exactly the records the rules pick, with the text the
    /// unfiltered run gives them, in every format and on one and two threads.
    #[test]
    fn filters_keep_the_records_the_rules_pick() {
        let data = fixture("synthetic/filters.evtx");
        let t0 = parse_time("2024-05-01T08:00:00Z").unwrap();
        let cases = filter_cases(t0);
        for format in [Format::Jsonl, Format::Json, Format::Xml] {
            let (all, errors) = run(&data, &options(format, 1, Filter::default()));
            assert!(
                errors.is_empty() && all.len() == 10,
                "{format:?}: {errors:?}"
            );
            for (filter, want) in &cases {
                let expected: Vec<_> = all.iter().filter(|(id, _)| want.contains(id)).collect();
                for threads in [1, 2] {
                    let (got, errors) = run(&data, &options(format, threads, filter.clone()));
                    assert!(errors.is_empty(), "{filter:?}: {errors:?}");
                    let got: Vec<_> = got.iter().collect();
                    assert_eq!(got, expected, "{format:?} -t {threads} {filter:?}");
                }
            }
            // `--events` composes (AND).
            let mut opts = options(format, 1, cases[0].0.clone());
            opts.event_ranges = Some(vec![(1, 3), (9, 9)]);
            let got: Vec<u64> = run(&data, &opts).0.iter().map(|r| r.0).collect();
            assert_eq!(got, [1, 3, 9], "{format:?}: --events and --event-id");
        }
    }

    /// Every damaged and carving fixture, with and without `--recover-records`: a filter that
    /// keeps nothing, and one that keeps most, give the unfiltered run's error lines, and the
    /// records they keep with the unfiltered run's text.
    #[test]
    fn filtered_runs_fail_as_unfiltered_runs() {
        let root = concat!(env!("CARGO_MANIFEST_DIR"), "/../../shared-fixtures/");
        let mut paths = Vec::new();
        for dir in ["damaged", "carving", "synthetic", "regressions"] {
            for entry in std::fs::read_dir(format!("{root}{dir}")).unwrap() {
                let path = entry.unwrap().path();
                if path.extension().is_some_and(|e| e == "evtx") {
                    paths.push(path);
                }
            }
        }
        paths.sort();
        let filters = [
            Filter {
                event_ids: vec![(u32::MAX, u32::MAX)],
                ..Filter::default()
            },
            Filter {
                levels: vec![(0, 5)],
                since: Some(0),
                ..Filter::default()
            },
        ];
        let mut errors_seen = 0;
        for path in &paths {
            let data = std::fs::read(path).unwrap();
            if EvtxFile::open(&data).is_err() {
                continue;
            }
            for (format, recover) in [(Format::Jsonl, false), (Format::Xml, true)] {
                let mut opts = options(format, 1, Filter::default());
                opts.recover_records = recover;
                let (all, errors) = run(&data, &opts);
                errors_seen += errors.len();
                for filter in &filters {
                    opts.filter = filter.clone();
                    let (kept, filtered_errors) = run(&data, &opts);
                    assert_eq!(filtered_errors, errors, "{path:?} {format:?} {filter:?}");
                    assert!(
                        kept.iter().all(|r| all.contains(r)),
                        "{path:?} {format:?} {filter:?}: a kept record differs"
                    );
                }
            }
        }
        assert!(
            errors_seen > 100,
            "{errors_seen} error lines: the fixtures are not there"
        );
    }

    #[test]
    fn lists() {
        let list = parse_list("4624,4625,4700-4799,0,4294967295").unwrap();
        let want = [
            (4624, 4624),
            (4625, 4625),
            (4700, 4799),
            (0, 0),
            (u32::MAX, u32::MAX),
        ];
        assert_eq!(list, want);
        for bad in [
            "",
            "1,",
            ",1",
            "1,,2",
            "+1",
            "-1",
            "1-",
            "-",
            " 1",
            "1 ",
            "0x10",
            "4294967296",
        ] {
            let e = parse_list(bad).unwrap_err();
            assert!(e.starts_with("expected a number"), "{bad:?}: {e}");
        }
        assert_eq!(
            parse_list("1,5-3").unwrap_err(),
            "the range '5-3' is empty: its first number is greater than its last"
        );
        assert_eq!(
            parse_list("1-2-3").unwrap_err(),
            "expected a number from 0 to 4294967295 or a range such as 4700-4799, got '1-2-3'"
        );
    }

    #[test]
    fn names() {
        assert_eq!(parse_name("Security").unwrap(), "Security");
        assert_eq!(parse_name(" é ").unwrap(), " é ");
        assert_eq!(parse_name("").unwrap_err(), "a name cannot be empty");
    }

    /// The FILETIME of a UTC date and time, from the contract's worked example and its
    /// arithmetic (864000000000 ticks a day).
    #[test]
    fn times() {
        // 2016-07-08T18:12:51.6816408Z is 131_124_751_716_816_408 (Python's datetime).
        let t = parse_time("2016-07-08T18:12:51.6816408Z").unwrap();
        assert_eq!(t, 131_124_751_716_816_408);
        assert_eq!(parse_time("2016-07-08t20:12:51.6816408+02:00").unwrap(), t);
        assert_eq!(parse_time("2016-07-08T17:42:51.6816408-00:30").unwrap(), t);
        assert_eq!(parse_time("1601-01-01T00:00:00Z").unwrap(), 0);
        assert_eq!(parse_time("1601-01-01T00:00:00.0000001z").unwrap(), 1);
        assert_eq!(
            parse_time("1601-01-02T00:00:00.5Z").unwrap(),
            864_000_000_000 + 5_000_000
        );
        assert_eq!(
            parse_time("2000-02-29T00:00:00Z").unwrap() % 864_000_000_000,
            0
        );
        let last = parse_time("9999-12-31T23:59:59.9999999Z").unwrap();
        assert_eq!(last + 1, TICKS_YEAR_10000);
        assert_eq!(last + 1, parse_time("9999-12-31T23:00:00-01:00").unwrap());
        let early = "the time is before 1601-01-01T00:00:00Z, where EVTX times begin";
        assert_eq!(parse_time("1601-01-01T00:30:00+01:00").unwrap_err(), early);
        assert_eq!(parse_time("0000-01-01T00:00:00Z").unwrap_err(), early);
        for bad in [
            "",
            "2016-07-08",
            "2016-07-08T18:12:51",
            "2016-07-08 18:12:51Z",
            "2016-07-08T18:12:51.Z",
            "2016-07-08T18:12:51.12345678Z",
            "2016-07-08T18:12:60Z",
            "2016-07-08T24:00:00Z",
            "2016-13-08T18:12:51Z",
            "2016-02-30T18:12:51Z",
            "2100-02-29T00:00:00Z",
            "2016-07-08T18:12:51+0200",
            "2016-07-08T18:12:51+24:00",
            "2016-07-08T18:12:51Z ",
            "+016-07-08T18:12:51Z",
            "2016-07-08T18:12:51.6816408ZZ",
        ] {
            assert!(
                parse_time(bad)
                    .unwrap_err()
                    .starts_with("expected an RFC 3339"),
                "{bad}"
            );
        }
    }

    #[test]
    fn bounds() {
        let mut f = Filter::default();
        assert!(f.is_empty() && f.check().is_ok());
        f.since = Some(5);
        assert!(!f.is_empty() && f.check().is_ok());
        f.until = Some(6);
        assert!(f.check().is_ok());
        f.until = Some(5);
        assert_eq!(
            f.check().unwrap_err(),
            "--since must be earlier than --until"
        );
    }
}
