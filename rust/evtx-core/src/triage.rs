//! `triage`: what is in a log and whether anyone touched it, in one pass without printing a
//! record (the contract: `shared-fixtures/README.md`, "Triage"). The Zig engine's
//! `zig/src/triage.zig`.
//!
//! The log is walked as `-o jsonl --recover-records` walks it at `-t 1`, by the dump's own
//! [`Renderer`] in its field mode ([`Renderer::collect_fields`]): each record's five `System`
//! fields are read by the filters' rules (`crate::filter`), from a program's plan and the
//! record's values where the record is proven to render (no text is written), else from the
//! tree of a record rendered as the dump renders it. So counts and errors are the dump's, and
//! triage gets faster with the filter's skip path.
//!
//! Memory: the per-file lists grow with the log's anomalies, bounded by its record count (the
//! gaps need every live record's id and time: 16 bytes a record); the counts use maps.

use crate::bytes::FastMap;
use crate::chunk::{ChunkHeader, CHUNK_FLAG_NO_CRC32};
use crate::dump::{ChunkResult, Outcome, Renderer};
use crate::error::ErrorKind;
use crate::file_header::{FileHeader, CHUNK_SIZE, FILE_HEADER_BLOCK, FLAG_NO_CRC32};
use crate::filter::{self, Field, Plan, Source};
use crate::input::{ChunkSlot, ChunkSource};
use crate::options::{Format, Options};
use crate::tree::{Names, Tree};
use crate::values_decode::{ty, Value};
use encoding_rs::Encoding;
use std::collections::HashMap;
use std::ops::Range;

/// The document's `schema`.
pub const SCHEMA: &str = "evtx-twin triage 1";
/// `--silence`'s default, in seconds.
pub const SILENCE_DEFAULT: u64 = 3600;
/// `--silence`'s largest value (ten years).
pub const SILENCE_MAX: u64 = 315_360_000;
/// `--top`'s default.
pub const TOP_DEFAULT: usize = 10;
/// `--top`'s largest value.
pub const TOP_MAX: usize = 1_000_000;

/// FILETIME ticks (100 ns) in a second.
const TICKS_PER_SECOND: u64 = 10_000_000;

/// The log events: records a responder looks for first (a cleared log, a stopped service,
/// dropped audit events). Provider compared ASCII case-insensitively.
pub const LOG_EVENTS: [(&str, u32, &str); 12] = [
    // learn.microsoft.com, "1100(S): The event logging service has shut down."
    (
        "Microsoft-Windows-Eventlog",
        1100,
        "event logging service shut down",
    ),
    // learn.microsoft.com, "1101(S)": audit events have been dropped by the transport.
    (
        "Microsoft-Windows-Eventlog",
        1101,
        "audit events dropped by the transport",
    ),
    // learn.microsoft.com, "1102(S): The audit log was cleared."
    ("Microsoft-Windows-Eventlog", 1102, "audit log cleared"),
    // learn.microsoft.com, "1104(S): The security log is now full."
    ("Microsoft-Windows-Eventlog", 1104, "security log full"),
    // learn.microsoft.com, "1105(S): Event log automatic backup."
    (
        "Microsoft-Windows-Eventlog",
        1105,
        "event log automatic backup",
    ),
    // learn.microsoft.com, "1108(S): The event logging service encountered an error."
    (
        "Microsoft-Windows-Eventlog",
        1108,
        "event logging service error",
    ),
    // System log, event 104: "The <name> log file was cleared."
    ("Microsoft-Windows-Eventlog", 104, "log cleared"),
    // System log, EventLog 6005: "The Event log service was started."
    ("EventLog", 6005, "event log service started"),
    // System log, EventLog 6006: "The Event log service was stopped."
    ("EventLog", 6006, "event log service stopped"),
    // System log, EventLog 6008: "The previous system shutdown ... was unexpected."
    ("EventLog", 6008, "unexpected shutdown"),
    // learn.microsoft.com, "4719(S): System audit policy was changed."
    (
        "Microsoft-Windows-Security-Auditing",
        4719,
        "system audit policy changed",
    ),
    // Windows XP/2003 Security log, event 517: "The audit log was cleared."
    ("Security", 517, "audit log cleared (legacy)"),
];

/// The five fields of one record, as the filters read them: texts as ranges of
/// [`FieldLog::texts`].
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Fields {
    pub event_id: Option<u32>,
    pub level: Option<u32>,
    pub provider: Option<Range<u32>>,
    pub channel: Option<Range<u32>>,
    /// `TimeCreated/@SystemTime` in FILETIME ticks.
    pub time: Option<u64>,
}

/// The fields of one chunk's rendered records, in their entries' order
/// ([`Renderer::collect_fields`]).
#[derive(Debug, Default)]
pub struct FieldLog {
    fields: Vec<Fields>,
    texts: Vec<u8>,
    scratch: Vec<u8>,
}

impl FieldLog {
    /// Empties the log for the next chunk.
    pub(crate) fn clear(&mut self) {
        self.fields.clear();
        self.texts.clear();
    }

    /// Drops the last record's fields (it failed after they were read).
    pub(crate) fn pop(&mut self) {
        self.fields.pop();
    }

    /// The fields of the chunk's records.
    pub fn fields(&self) -> &[Fields] {
        &self.fields
    }

    /// The text of a field.
    pub fn text(&self, range: &Range<u32>) -> &[u8] {
        &self.texts[range.start as usize..range.end as usize]
    }

    /// Sets `field` of `f` from its text, `self.scratch`. An empty text is no text (the
    /// filters' rule: the JSON shows `null`).
    fn set_from_scratch(&mut self, f: &mut Fields, field: Field) {
        let text = &self.scratch[..];
        if text.is_empty() {
            return;
        }
        let number = || filter::digits(text).and_then(|n| u32::try_from(n).ok());
        match field {
            Field::EventId => f.event_id = number(),
            Field::Level => f.level = number(),
            Field::Time => f.time = filter::rfc3339(text).flatten(),
            Field::Provider | Field::Channel => {
                let start = self.texts.len() as u32;
                self.texts.extend_from_slice(text);
                let range = Some(start..self.texts.len() as u32);
                if field == Field::Provider {
                    f.provider = range;
                } else {
                    f.channel = range;
                }
            }
        }
    }
}

/// Adds the fields of the record tree whose root is `root` (`None`: no tree, no fields).
pub(crate) fn read_tree(
    chunk: &[u8],
    codec: &'static Encoding,
    names: &Names,
    tree: &Tree,
    root: Option<u32>,
    log: &mut FieldLog,
) {
    let mut f = Fields::default();
    if let Some(root) = root {
        let nodes = filter::system_fields(names, tree, root);
        for field in Field::ALL {
            let Some(nodes) = nodes[field as usize] else {
                continue;
            };
            log.scratch.clear();
            if filter::write_nodes_text(&mut log.scratch, chunk, codec, nodes) {
                log.set_from_scratch(&mut f, field);
            }
        }
    }
    log.fields.push(f);
}

/// Adds the fields of a record that replays a program, from its `plan` and the record's
/// values `slots`; `false` (nothing added) when a field needs the tree.
pub(crate) fn read_plan(
    plan: &Plan,
    slots: &[Value],
    chunk: &[u8],
    codec: &'static Encoding,
    log: &mut FieldLog,
) -> bool {
    let sourced = plan.fields.iter().all(|s| match s {
        Source::Tree => false,
        Source::Slot(k) => usize::from(*k) < slots.len(),
        Source::Absent | Source::Fixed(_) => true,
    });
    if !sourced {
        return false;
    }
    let mut f = Fields::default();
    for field in Field::ALL {
        log.scratch.clear();
        let have = match &plan.fields[field as usize] {
            Source::Tree | Source::Absent => false,
            Source::Fixed(text) => {
                log.scratch.extend_from_slice(text);
                true
            }
            Source::Slot(k) => {
                let v = &slots[usize::from(*k)];
                if read_direct(&mut f, field, chunk, v) {
                    continue;
                }
                filter::write_value_text(&mut log.scratch, chunk, codec, v)
            }
        };
        if have {
            log.set_from_scratch(&mut f, field);
        }
    }
    log.fields.push(f);
    true
}

/// Sets `field` from value `v` without its text where the type allows (an unsigned integer's
/// text is its decimal number, a FILETIME's up to the year 9999 its RFC 3339 time): `false`
/// when the text must be read.
fn read_direct(f: &mut Fields, field: Field, chunk: &[u8], v: &Value) -> bool {
    let start = v.off as usize;
    let Some(bytes) = chunk.get(start..start.saturating_add(v.len as usize)) else {
        return false;
    };
    let le = |n: usize| -> Option<u64> {
        (bytes.len() == n).then(|| bytes.iter().rev().fold(0u64, |a, &b| a << 8 | u64::from(b)))
    };
    let number = match v.ty {
        ty::U8 => le(1),
        ty::U16 => le(2),
        ty::U32 => le(4),
        ty::U64 => le(8),
        _ => None,
    };
    match field {
        Field::EventId | Field::Level => {
            let Some(n) = number else {
                return false;
            };
            let n = u32::try_from(n).ok();
            if field == Field::EventId {
                f.event_id = n;
            } else {
                f.level = n;
            }
            true
        }
        Field::Time if v.ty == ty::FILETIME => {
            match le(8).filter(|&t| t < filter::TICKS_YEAR_10000) {
                Some(t) => {
                    f.time = Some(t);
                    true
                }
                None => false,
            }
        }
        _ => false,
    }
}

/// The file header's facts.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HeaderFacts {
    pub first_chunk: u64,
    pub last_chunk: u64,
    pub next_record_id: u64,
    pub chunks: u16,
    pub flags: u32,
    /// `ok`, `bad` or `none` (NO_CRC32).
    pub checksum: &'static str,
}

impl HeaderFacts {
    fn of(h: &FileHeader) -> HeaderFacts {
        let checksum = if h.flags & FLAG_NO_CRC32 != 0 {
            "none"
        } else if h.stored_checksum == h.computed_checksum {
            "ok"
        } else {
            "bad"
        };
        HeaderFacts {
            first_chunk: h.first_chunk_number,
            last_chunk: h.last_chunk_number,
            next_record_id: h.next_record_id,
            chunks: h.chunk_count,
            flags: h.flags,
            checksum,
        }
    }

    /// The names of the set flags among DIRTY, FULL and NO_CRC32, in that order.
    pub fn flag_names(&self) -> Vec<&'static str> {
        [(1, "DIRTY"), (2, "FULL"), (4, "NO_CRC32")]
            .into_iter()
            .filter(|&(bit, _)| self.flags & bit != 0)
            .map(|(_, name)| name)
            .collect()
    }
}

/// A live record's id and time (`before`/`after` of a gap, a silence's ends).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Point {
    pub record_id: u64,
    pub time: Option<u64>,
}

/// Record ids `first_missing..=last_missing` that no live record has.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Gap {
    pub first_missing: u64,
    pub last_missing: u64,
    pub before: Point,
    pub after: Point,
}

/// A live record whose id is not above the one before it in walk order.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct IdBackwards {
    pub record_id: u64,
    pub previous_record_id: u64,
    pub chunk: u32,
    pub chunk_boundary: bool,
}

/// A live record whose time is before the one before it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TimeBackwards {
    pub record_id: u64,
    pub time: u64,
    pub previous_record_id: u64,
    pub previous_time: u64,
}

/// Two neighbouring live records at least the silence apart.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Silence {
    pub after: (u64, u64),
    pub before: (u64, u64),
    pub seconds: u64,
}

/// A live record of [`LOG_EVENTS`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LogEvent {
    pub record_id: u64,
    pub time: Option<u64>,
    pub provider: String,
    pub event_id: u32,
    pub what: &'static str,
}

/// A carved record.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Carved {
    pub record_id: u64,
    pub time: Option<u64>,
    pub provider: Option<String>,
    pub event_id: Option<u32>,
}

/// An `event_ids` row's key: provider and event id.
pub type EventKey = (Option<String>, Option<u32>);

/// What was read of a log that opened.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Contents {
    pub size: u64,
    pub header: HeaderFacts,
    pub chunk_slots: u64,
    /// Slot and `header` or `records`.
    pub bad_checksums: Vec<(u32, &'static str)>,
    pub records: u64,
    pub recovered: u64,
    pub first_time: Option<u64>,
    pub last_time: Option<u64>,
    pub providers: Vec<(Option<String>, u64)>,
    pub event_ids: Vec<(EventKey, u64)>,
    pub channels: Vec<(Option<String>, u64)>,
    pub levels: Vec<(Option<u32>, u64)>,
    pub errors: Vec<(&'static str, u64)>,
    pub gaps: Vec<Gap>,
    pub ids_backwards: Vec<IdBackwards>,
    pub times_backwards: Vec<TimeBackwards>,
    pub silences: Vec<Silence>,
    pub log_events: Vec<LogEvent>,
    pub carved: Vec<Carved>,
}

/// The report of one log: its contents, or why it could not be read.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Report {
    /// The input as named.
    pub path: String,
    pub contents: Result<Contents, String>,
}

impl Report {
    /// The report of a log that could not be opened: the first line of `error`.
    pub fn unreadable(path: &str, error: &str) -> Report {
        let line = error.lines().next().unwrap_or("");
        Report {
            path: path.to_string(),
            contents: Err(line.to_string()),
        }
    }
}

/// The options of the walk: the jsonl dump's with `--recover-records`, at `-t 1`.
fn walk_options() -> Options {
    Options {
        format: Format::Jsonl,
        indent: false,
        show_record_number: false,
        recover_records: true,
        threads: 1,
        ..Options::default()
    }
}

/// Reads the log `src`, named `path`; `silence` is the silence threshold in seconds.
pub fn triage<S: ChunkSource + ?Sized>(path: &str, src: &S, silence: u64) -> Report {
    let mut walk = Walk::new(silence.saturating_mul(TICKS_PER_SECOND));
    let opts = walk_options();
    let mut renderer = Renderer::new(&opts);
    renderer.collect_fields();
    let mut out = ChunkResult::default();
    for slot in src.chunk_order(false).iter() {
        renderer.render_chunk_into(src, slot, &mut out);
        let Some(log) = renderer.fields() else {
            unreachable!("collect_fields made a log");
        };
        walk.chunk(&out, log);
    }
    let size = src.len();
    let body = size.saturating_sub(FILE_HEADER_BLOCK as u64);
    let chunk_slots = body.div_ceil(CHUNK_SIZE as u64);
    Report {
        path: path.to_string(),
        contents: Ok(walk.finish(
            size,
            HeaderFacts::of(src.header()),
            chunk_slots,
            bad_checksums(src),
        )),
    }
}

/// The chunks `--validate-checksums` refuses, in slot order: `header` for the header CRC,
/// `records` for the free space offset or the records CRC. Whole slots with the chunk magic
/// whose flags keep CRCs.
fn bad_checksums<S: ChunkSource + ?Sized>(src: &S) -> Vec<(u32, &'static str)> {
    let slots = (src.len().saturating_sub(FILE_HEADER_BLOCK as u64) / CHUNK_SIZE as u64) as u32;
    let mut window = ChunkSlot::default();
    let mut bad = Vec::new();
    for slot in 0..slots {
        let chunk = src.chunk(slot, &mut window);
        if chunk.len() < CHUNK_SIZE {
            continue;
        }
        let Some(header) = ChunkHeader::parse(chunk) else {
            continue;
        };
        if header.flags & CHUNK_FLAG_NO_CRC32 != 0 {
            continue;
        }
        if let Err(f) = header.validate_checksums(chunk) {
            let what = match f.kind {
                ErrorKind::BadChunkHeaderChecksum => "header",
                _ => "records",
            };
            bad.push((slot, what));
        }
    }
    bad
}

/// The previous live record in walk order.
#[derive(Clone, Copy)]
struct Previous {
    id: u64,
    time: Option<u64>,
    slot: u32,
}

/// A live record's provider and channel (numbered by [`Texts`]), event id and level.
type Kind = (Option<u32>, Option<u32>, Option<u32>, Option<u32>);

/// What the walk gathers, record by record.
struct Walk {
    silence_ticks: u64,
    records: u64,
    recovered: u64,
    first_time: Option<u64>,
    last_time: Option<u64>,
    /// Provider and channel texts, each numbered once.
    texts: Texts,
    /// Live records by their [`Kind`]: one count a record, the four tables summed from it
    /// at the end; the last kind is remembered (records come in runs of one kind).
    kinds: FastMap<Kind, u64>,
    last_kind: Option<(Kind, u64)>,
    errors: HashMap<&'static str, u64>,
    /// Each live record's id, walk position and time (for the gaps).
    ids: Vec<(u64, u64, Option<u64>)>,
    previous: Option<Previous>,
    ids_backwards: Vec<IdBackwards>,
    times_backwards: Vec<TimeBackwards>,
    silences: Vec<Silence>,
    log_events: Vec<LogEvent>,
    carved: Vec<Carved>,
}

impl Walk {
    fn new(silence_ticks: u64) -> Walk {
        Walk {
            silence_ticks,
            records: 0,
            recovered: 0,
            first_time: None,
            last_time: None,
            texts: Texts::default(),
            kinds: FastMap::default(),
            last_kind: None,
            errors: HashMap::new(),
            ids: Vec::new(),
            previous: None,
            ids_backwards: Vec::new(),
            times_backwards: Vec::new(),
            silences: Vec::new(),
            log_events: Vec::new(),
            carved: Vec::new(),
        }
    }

    /// One chunk's entries and the fields of its rendered records.
    fn chunk(&mut self, out: &ChunkResult, log: &FieldLog) {
        let mut fields = log.fields().iter();
        for entry in &out.records {
            match &entry.outcome {
                Outcome::Failed(f) => *self.errors.entry(f.kind.as_str()).or_default() += 1,
                Outcome::Rendered(_) => {
                    let Some(f) = fields.next() else {
                        unreachable!("one field entry per rendered record");
                    };
                    let id = entry.record_id.unwrap_or_default();
                    if entry.recovered {
                        self.carve(id, f, log);
                    } else {
                        self.live(id, out.slot, f, log);
                    }
                }
            }
        }
        debug_assert!(fields.next().is_none(), "a field entry without its record");
    }

    fn carve(&mut self, id: u64, f: &Fields, log: &FieldLog) {
        self.recovered += 1;
        self.carved.push(Carved {
            record_id: id,
            time: f.time,
            provider: f.provider.as_ref().map(|r| lossy(log.text(r))),
            event_id: f.event_id,
        });
    }

    fn live(&mut self, id: u64, slot: u32, f: &Fields, log: &FieldLog) {
        self.records += 1;
        if let Some(t) = f.time {
            self.first_time = Some(self.first_time.map_or(t, |m| m.min(t)));
            self.last_time = Some(self.last_time.map_or(t, |m| m.max(t)));
        }
        let provider = f.provider.as_ref().map(|r| log.text(r));
        let provider_id = provider.map(|text| self.texts.id(text));
        let channel = f.channel.as_ref().map(|r| self.texts.id(log.text(r)));
        self.count_kind((provider_id, f.event_id, channel, f.level));
        self.ids.push((id, self.records, f.time));
        if let (Some(text), Some(event_id)) = (provider, f.event_id) {
            if let Some(what) = log_event(text, event_id) {
                self.log_events.push(LogEvent {
                    record_id: id,
                    time: f.time,
                    provider: lossy(text),
                    event_id,
                    what,
                });
            }
        }
        if let Some(p) = self.previous {
            self.neighbours(p, id, slot, f.time);
        }
        self.previous = Some(Previous {
            id,
            time: f.time,
            slot,
        });
    }

    /// Counts one live record of `kind`.
    fn count_kind(&mut self, kind: Kind) {
        match &mut self.last_kind {
            Some((last, n)) if *last == kind => *n += 1,
            last => {
                if let Some((k, n)) = last.replace((kind, 1)) {
                    *self.kinds.entry(k).or_default() += n;
                }
            }
        }
    }

    /// The facts of two neighbouring live records: `p`, then `id` at `time` in `slot`.
    fn neighbours(&mut self, p: Previous, id: u64, slot: u32, time: Option<u64>) {
        if id <= p.id {
            self.ids_backwards.push(IdBackwards {
                record_id: id,
                previous_record_id: p.id,
                chunk: slot,
                chunk_boundary: p.slot != slot,
            });
        }
        let (Some(pt), Some(t)) = (p.time, time) else {
            return;
        };
        if t < pt {
            self.times_backwards.push(TimeBackwards {
                record_id: id,
                time: t,
                previous_record_id: p.id,
                previous_time: pt,
            });
        } else if t - pt >= self.silence_ticks {
            self.silences.push(Silence {
                after: (p.id, pt),
                before: (id, t),
                seconds: (t - pt) / TICKS_PER_SECOND,
            });
        }
    }

    fn finish(
        self,
        size: u64,
        header: HeaderFacts,
        chunk_slots: u64,
        bad_checksums: Vec<(u32, &'static str)>,
    ) -> Contents {
        let texts = &self.texts.texts;
        let name = |id: Option<u32>| id.map(|n| lossy(&texts[n as usize]));
        let mut kinds = self.kinds;
        if let Some((kind, n)) = self.last_kind {
            *kinds.entry(kind).or_default() += n;
        }
        let mut providers: FastMap<Option<u32>, u64> = FastMap::default();
        let mut event_ids: FastMap<(Option<u32>, Option<u32>), u64> = FastMap::default();
        let mut channels: FastMap<Option<u32>, u64> = FastMap::default();
        let mut levels: FastMap<Option<u32>, u64> = FastMap::default();
        for ((provider, event_id, channel, level), n) in kinds {
            *providers.entry(provider).or_default() += n;
            *event_ids.entry((provider, event_id)).or_default() += n;
            *channels.entry(channel).or_default() += n;
            *levels.entry(level).or_default() += n;
        }
        let providers = ranked(providers.into_iter().map(|(k, n)| (name(k), n)));
        let event_ids = ranked(event_ids.into_iter().map(|((p, e), n)| ((name(p), e), n)));
        let channels = ranked(channels.into_iter().map(|(k, n)| (name(k), n)));
        let levels = ranked(levels);
        let mut errors: Vec<(&'static str, u64)> = self.errors.into_iter().collect();
        errors.sort();
        Contents {
            size,
            header,
            chunk_slots,
            bad_checksums,
            records: self.records,
            recovered: self.recovered,
            first_time: self.first_time,
            last_time: self.last_time,
            providers,
            event_ids,
            channels,
            levels,
            errors,
            gaps: gaps(self.ids),
            ids_backwards: self.ids_backwards,
            times_backwards: self.times_backwards,
            silences: self.silences,
            log_events: self.log_events,
            carved: self.carved,
        }
    }
}

/// Texts numbered in the order first seen. Most records repeat the provider and channel of
/// the record before, so the last two numbered are compared first; the map's hash (SipHash)
/// holds against texts made to collide.
#[derive(Default)]
struct Texts {
    ids: HashMap<Box<[u8]>, u32>,
    texts: Vec<Box<[u8]>>,
    recent: [Option<u32>; 2],
}

impl Texts {
    fn id(&mut self, text: &[u8]) -> u32 {
        for n in self.recent.into_iter().flatten() {
            if *self.texts[n as usize] == *text {
                return n;
            }
        }
        let n = match self.ids.get(text) {
            Some(&n) => n,
            None => {
                let n = self.texts.len() as u32;
                self.texts.push(text.into());
                self.ids.insert(text.into(), n);
                n
            }
        };
        self.recent = [Some(n), self.recent[0]];
        n
    }
}

/// A field's text as a string (the fields are UTF-8 as the JSON shows them).
fn lossy(text: &[u8]) -> String {
    String::from_utf8_lossy(text).into_owned()
}

/// The table's text for `provider`'s `event_id`, if it is a log event.
fn log_event(provider: &[u8], event_id: u32) -> Option<&'static str> {
    LOG_EVENTS
        .iter()
        .find(|(p, e, _)| *e == event_id && p.as_bytes().eq_ignore_ascii_case(provider))
        .map(|&(_, _, what)| what)
}

/// Counts sorted by count descending, then key ascending with `None` after every value
/// (`Option`'s order puts it first: the key is compared as `(is_none, value)`).
fn ranked<K: NullLast>(counts: impl IntoIterator<Item = (K, u64)>) -> Vec<(K, u64)> {
    let mut rows: Vec<(K, u64)> = counts.into_iter().collect();
    rows.sort_by(|(ka, na), (kb, nb)| nb.cmp(na).then_with(|| ka.null_last_cmp(kb)));
    rows
}

/// Key order with `None` after every value, at every level of a key.
trait NullLast {
    fn null_last_cmp(&self, other: &Self) -> std::cmp::Ordering;
}

impl<T: Ord> NullLast for Option<T> {
    fn null_last_cmp(&self, other: &Self) -> std::cmp::Ordering {
        match (self, other) {
            (Some(a), Some(b)) => a.cmp(b),
            (Some(_), None) => std::cmp::Ordering::Less,
            (None, Some(_)) => std::cmp::Ordering::Greater,
            (None, None) => std::cmp::Ordering::Equal,
        }
    }
}

impl<A: NullLast, B: NullLast> NullLast for (A, B) {
    fn null_last_cmp(&self, other: &Self) -> std::cmp::Ordering {
        self.0
            .null_last_cmp(&other.0)
            .then_with(|| self.1.null_last_cmp(&other.1))
    }
}

/// The gaps between the distinct live record ids: `ids` holds each live record's id, walk
/// position and time; a gap's ends are the first records (in walk order) of its neighbours.
fn gaps(mut ids: Vec<(u64, u64, Option<u64>)>) -> Vec<Gap> {
    ids.sort_unstable_by_key(|&(id, at, _)| (id, at));
    ids.dedup_by_key(|&mut (id, _, _)| id);
    ids.windows(2)
        .filter(|w| w[1].0 > w[0].0.saturating_add(1))
        .map(|w| Gap {
            first_missing: w[0].0 + 1,
            last_missing: w[1].0 - 1,
            before: Point {
                record_id: w[0].0,
                time: w[0].2,
            },
            after: Point {
                record_id: w[1].0,
                time: w[1].2,
            },
        })
        .collect()
}

/// Appends `ticks` as `YYYY-MM-DDTHH:MM:SS.fffffffZ` (UTC): a FILETIME value's text, which
/// every time read (below the year 10000) has.
pub fn write_time(out: &mut Vec<u8>, ticks: u64) {
    crate::values_format::write_filetime(out, ticks);
}

/// Appends `text` as a JSON string, escaped as the provenance `file` field is.
fn write_json_string(out: &mut Vec<u8>, text: &str) {
    out.push(b'"');
    out.extend_from_slice(&crate::provenance::json_escaped(text));
    out.push(b'"');
}

/// A small JSON writer: members and items in the order written, commas placed.
struct Json<'o> {
    out: &'o mut Vec<u8>,
    /// Whether the next member or item needs a comma before it.
    comma: bool,
}

impl Json<'_> {
    fn open(&mut self, c: u8) {
        self.sep();
        self.out.push(c);
        self.comma = false;
    }

    fn close(&mut self, c: u8) {
        self.out.push(c);
        self.comma = true;
    }

    fn sep(&mut self) {
        if self.comma {
            self.out.push(b',');
        }
        self.comma = true;
    }

    /// A member's name (its value follows).
    fn key(&mut self, name: &str) {
        self.sep();
        write_json_string(self.out, name);
        self.out.push(b':');
        self.comma = false;
    }

    fn num(&mut self, n: u64) {
        self.sep();
        self.out.extend_from_slice(n.to_string().as_bytes());
    }

    fn opt_num(&mut self, n: Option<impl Into<u64>>) {
        match n {
            Some(n) => self.num(n.into()),
            None => self.raw("null"),
        }
    }

    fn str(&mut self, text: &str) {
        self.sep();
        write_json_string(self.out, text);
    }

    fn opt_str(&mut self, text: Option<&str>) {
        match text {
            Some(text) => self.str(text),
            None => self.raw("null"),
        }
    }

    fn time(&mut self, ticks: Option<u64>) {
        self.sep();
        match ticks {
            Some(t) => {
                self.out.push(b'"');
                write_time(self.out, t);
                self.out.push(b'"');
            }
            None => self.out.extend_from_slice(b"null"),
        }
    }

    fn raw(&mut self, text: &str) {
        self.sep();
        self.out.extend_from_slice(text.as_bytes());
    }

    fn point(&mut self, name: &str, id: u64, time: Option<u64>) {
        self.key(name);
        self.open(b'{');
        self.key("record_id");
        self.num(id);
        self.key("time");
        self.time(time);
        self.close(b'}');
    }
}

impl Report {
    /// Appends the report as the JSON object of the document's `files` (compact, no newline).
    pub fn write_json(&self, out: &mut Vec<u8>) {
        let mut j = Json { out, comma: false };
        j.open(b'{');
        j.key("path");
        j.str(&self.path);
        j.key("error");
        let c = match &self.contents {
            Err(e) => {
                j.str(e);
                j.close(b'}');
                return;
            }
            Ok(c) => c,
        };
        j.raw("null");
        j.key("size");
        j.num(c.size);
        write_header_json(&mut j, &c.header);
        j.key("chunk_slots");
        j.num(c.chunk_slots);
        j.key("bad_checksums");
        j.open(b'[');
        for &(slot, what) in &c.bad_checksums {
            j.open(b'{');
            j.key("chunk");
            j.num(u64::from(slot));
            j.key("what");
            j.str(what);
            j.close(b'}');
        }
        j.close(b']');
        j.key("records");
        j.num(c.records);
        j.key("recovered");
        j.num(c.recovered);
        j.key("first_time");
        j.time(c.first_time);
        j.key("last_time");
        j.time(c.last_time);
        write_counts_json(&mut j, c);
        write_anomalies_json(&mut j, c);
        j.close(b'}');
    }
}

fn write_header_json(j: &mut Json<'_>, h: &HeaderFacts) {
    j.key("header");
    j.open(b'{');
    j.key("first_chunk");
    j.num(h.first_chunk);
    j.key("last_chunk");
    j.num(h.last_chunk);
    j.key("next_record_id");
    j.num(h.next_record_id);
    j.key("chunks");
    j.num(u64::from(h.chunks));
    j.key("flags");
    j.open(b'[');
    for name in h.flag_names() {
        j.str(name);
    }
    j.close(b']');
    j.key("checksum");
    j.str(h.checksum);
    j.close(b'}');
}

fn write_counts_json(j: &mut Json<'_>, c: &Contents) {
    j.key("providers");
    j.open(b'[');
    for (name, n) in &c.providers {
        j.open(b'{');
        j.key("name");
        j.opt_str(name.as_deref());
        j.key("count");
        j.num(*n);
        j.close(b'}');
    }
    j.close(b']');
    j.key("event_ids");
    j.open(b'[');
    for ((provider, event_id), n) in &c.event_ids {
        j.open(b'{');
        j.key("provider");
        j.opt_str(provider.as_deref());
        j.key("event_id");
        j.opt_num(*event_id);
        j.key("count");
        j.num(*n);
        j.close(b'}');
    }
    j.close(b']');
    j.key("channels");
    j.open(b'[');
    for (name, n) in &c.channels {
        j.open(b'{');
        j.key("name");
        j.opt_str(name.as_deref());
        j.key("count");
        j.num(*n);
        j.close(b'}');
    }
    j.close(b']');
    j.key("levels");
    j.open(b'[');
    for (level, n) in &c.levels {
        j.open(b'{');
        j.key("level");
        j.opt_num(*level);
        j.key("count");
        j.num(*n);
        j.close(b'}');
    }
    j.close(b']');
    j.key("errors");
    j.open(b'[');
    for (kind, n) in &c.errors {
        j.open(b'{');
        j.key("kind");
        j.str(kind);
        j.key("count");
        j.num(*n);
        j.close(b'}');
    }
    j.close(b']');
}

/// The gaps, ids and times backwards, then [`write_events_json`].
fn write_anomalies_json(j: &mut Json<'_>, c: &Contents) {
    j.key("gaps");
    j.open(b'[');
    for g in &c.gaps {
        j.open(b'{');
        j.key("first_missing");
        j.num(g.first_missing);
        j.key("last_missing");
        j.num(g.last_missing);
        j.key("missing");
        j.num(g.last_missing - g.first_missing + 1);
        j.point("before", g.before.record_id, g.before.time);
        j.point("after", g.after.record_id, g.after.time);
        j.close(b'}');
    }
    j.close(b']');
    j.key("ids_backwards");
    j.open(b'[');
    for b in &c.ids_backwards {
        j.open(b'{');
        j.key("record_id");
        j.num(b.record_id);
        j.key("previous_record_id");
        j.num(b.previous_record_id);
        j.key("chunk");
        j.num(u64::from(b.chunk));
        j.key("chunk_boundary");
        j.raw(if b.chunk_boundary { "true" } else { "false" });
        j.close(b'}');
    }
    j.close(b']');
    j.key("times_backwards");
    j.open(b'[');
    for b in &c.times_backwards {
        j.open(b'{');
        j.key("record_id");
        j.num(b.record_id);
        j.key("time");
        j.time(Some(b.time));
        j.key("previous_record_id");
        j.num(b.previous_record_id);
        j.key("previous_time");
        j.time(Some(b.previous_time));
        j.close(b'}');
    }
    j.close(b']');
    write_events_json(j, c);
}

/// The silences, log events and carved records.
fn write_events_json(j: &mut Json<'_>, c: &Contents) {
    j.key("silences");
    j.open(b'[');
    for s in &c.silences {
        j.open(b'{');
        j.point("after", s.after.0, Some(s.after.1));
        j.point("before", s.before.0, Some(s.before.1));
        j.key("seconds");
        j.num(s.seconds);
        j.close(b'}');
    }
    j.close(b']');
    j.key("log_events");
    j.open(b'[');
    for e in &c.log_events {
        j.open(b'{');
        j.key("record_id");
        j.num(e.record_id);
        j.key("time");
        j.time(e.time);
        j.key("provider");
        j.str(&e.provider);
        j.key("event_id");
        j.num(u64::from(e.event_id));
        j.key("what");
        j.str(e.what);
        j.close(b'}');
    }
    j.close(b']');
    j.key("carved");
    j.open(b'[');
    for r in &c.carved {
        j.open(b'{');
        j.key("record_id");
        j.num(r.record_id);
        j.key("time");
        j.time(r.time);
        j.key("provider");
        j.opt_str(r.provider.as_deref());
        j.key("event_id");
        j.opt_num(r.event_id);
        j.close(b'}');
    }
    j.close(b']');
}

/// The document's `totals`, summed report by report.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Totals {
    pub files: u64,
    pub unreadable: u64,
    pub records: u64,
    pub recovered: u64,
    pub errors: u64,
    pub gaps: u64,
    pub log_events: u64,
}

impl Totals {
    /// Counts `report` in.
    pub fn add(&mut self, report: &Report) {
        self.files += 1;
        match &report.contents {
            Err(_) => self.unreadable += 1,
            Ok(c) => {
                self.records += c.records;
                self.recovered += c.recovered;
                self.errors += error_sum(c);
                self.gaps += c.gaps.len() as u64;
                self.log_events += c.log_events.len() as u64;
            }
        }
    }

    /// Appends the `totals` object (compact).
    pub fn write_json(&self, out: &mut Vec<u8>) {
        let mut j = Json { out, comma: false };
        j.open(b'{');
        for (name, n) in self.members() {
            j.key(name);
            j.num(n);
        }
        j.close(b'}');
    }

    fn members(&self) -> [(&'static str, u64); 7] {
        [
            ("files", self.files),
            ("unreadable", self.unreadable),
            ("records", self.records),
            ("recovered", self.recovered),
            ("errors", self.errors),
            ("gaps", self.gaps),
            ("log_events", self.log_events),
        ]
    }

    /// Appends the many-inputs form's last line.
    pub fn write_text(&self, out: &mut Vec<u8>) {
        let line = format!(
            "total: files {}, unreadable {}, records {}, recovered {}, errors {}, gaps {}, \
             log events {}\n",
            self.files,
            self.unreadable,
            self.records,
            self.recovered,
            self.errors,
            self.gaps,
            self.log_events
        );
        out.extend_from_slice(line.as_bytes());
    }
}

/// The sum of a log's error counts.
fn error_sum(c: &Contents) -> u64 {
    c.errors.iter().map(|(_, n)| n).sum()
}

/// The document's opening, up to the first file's report.
pub fn write_document_start(out: &mut Vec<u8>) {
    out.extend_from_slice(b"{\"schema\":");
    write_json_string(out, SCHEMA);
    out.extend_from_slice(b",\"files\":[");
}

/// The document's end after its last file: the totals, the closing and the newline.
pub fn write_document_end(totals: &Totals, out: &mut Vec<u8>) {
    out.extend_from_slice(b"],\"totals\":");
    totals.write_json(out);
    out.extend_from_slice(b"}\n");
}

/// `ticks` as text, `-` for none.
fn time_text(ticks: Option<u64>) -> String {
    let mut out = Vec::with_capacity(28);
    match ticks {
        Some(t) => write_time(&mut out, t),
        None => out.push(b'-'),
    }
    lossy(&out)
}

/// A list's lines: at most `top`, then `  ... <k> more`.
fn write_rows<T>(out: &mut String, rows: &[T], top: usize, line: impl Fn(&T) -> String) {
    for row in rows.iter().take(top) {
        out.push_str("  ");
        out.push_str(&line(row));
        out.push('\n');
    }
    if rows.len() > top {
        out.push_str(&format!("  ... {} more\n", rows.len() - top));
    }
}

/// `label: <cells, at most top>` or `label: none`.
fn write_cells(out: &mut String, label: &str, cells: Vec<String>, top: usize) {
    out.push_str(label);
    out.push_str(": ");
    if cells.is_empty() {
        out.push_str("none");
    }
    let shown: Vec<&str> = cells.iter().take(top).map(String::as_str).collect();
    out.push_str(&shown.join(", "));
    out.push('\n');
}

impl Report {
    /// Appends the one-file text form; `top` rows per table, `silence` in seconds. A log that
    /// could not be read has its many-inputs line.
    pub fn write_text(&self, top: usize, silence: u64, out: &mut Vec<u8>) {
        let Ok(c) = &self.contents else {
            return self.write_line(out);
        };
        let mut s = format!("file {}\n", self.path);
        let h = &c.header;
        let flags = h.flag_names();
        let flags = if flags.is_empty() {
            "none".to_string()
        } else {
            flags.join("|")
        };
        s.push_str(&format!(
            "size {} bytes, {} chunk slots; header: chunks {}, next record id {}, flags {flags}, \
             checksum {}\n",
            c.size, c.chunk_slots, h.chunks, h.next_record_id, h.checksum
        ));
        s.push_str(&format!(
            "records {}, recovered {}, from {} to {}\n",
            c.records,
            c.recovered,
            time_text(c.first_time),
            time_text(c.last_time)
        ));
        let name = |n: &Option<String>| n.clone().unwrap_or_else(|| "-".to_string());
        let number = |n: &Option<u32>| n.map_or_else(|| "-".to_string(), |n| n.to_string());
        let all = usize::MAX;
        let errors = c.errors.iter().map(|(k, n)| format!("{k} {n}")).collect();
        write_cells(&mut s, "errors", errors, all);
        let bad = c.bad_checksums.iter();
        let bad = bad
            .map(|(slot, what)| format!("chunk {slot} {what}"))
            .collect();
        write_cells(&mut s, "bad checksums", bad, all);
        let rows = c.providers.iter().map(|(k, n)| format!("{} {n}", name(k)));
        write_cells(&mut s, "providers", rows.collect(), top);
        let rows = c.event_ids.iter();
        let rows = rows.map(|((p, e), n)| format!("{}/{} {n}", name(p), number(e)));
        write_cells(&mut s, "event ids", rows.collect(), top);
        let rows = c.channels.iter().map(|(k, n)| format!("{} {n}", name(k)));
        write_cells(&mut s, "channels", rows.collect(), top);
        let rows = c.levels.iter().map(|(k, n)| format!("{} {n}", number(k)));
        write_cells(&mut s, "levels", rows.collect(), top);
        write_anomalies_text(&mut s, c, top, silence);
        out.extend_from_slice(s.as_bytes());
    }

    /// Appends the many-inputs form's line for this log.
    pub fn write_line(&self, out: &mut Vec<u8>) {
        let line = match &self.contents {
            Err(e) => format!("{}: error: {e}\n", self.path),
            Ok(c) => format!(
                "{}: records {}, recovered {}, errors {}, gaps {}, log events {}, from {} to {}\n",
                self.path,
                c.records,
                c.recovered,
                error_sum(c),
                c.gaps.len(),
                c.log_events.len(),
                time_text(c.first_time),
                time_text(c.last_time)
            ),
        };
        out.extend_from_slice(line.as_bytes());
    }
}

/// The lines of the gaps, ids and times backwards, then [`write_events_text`].
fn write_anomalies_text(s: &mut String, c: &Contents, top: usize, silence: u64) {
    let missing: u64 = c
        .gaps
        .iter()
        .map(|g| g.last_missing - g.first_missing + 1)
        .sum();
    s.push_str(&format!("gaps: {} ({missing} ids missing)\n", c.gaps.len()));
    write_rows(s, &c.gaps, top, |g| {
        let span = if g.first_missing == g.last_missing {
            g.first_missing.to_string()
        } else {
            format!("{}-{}", g.first_missing, g.last_missing)
        };
        format!(
            "{span} ({}) after record {} at {}, before record {} at {}",
            g.last_missing - g.first_missing + 1,
            g.before.record_id,
            time_text(g.before.time),
            g.after.record_id,
            time_text(g.after.time)
        )
    });
    s.push_str(&format!("ids backwards: {}\n", c.ids_backwards.len()));
    write_rows(s, &c.ids_backwards, top, |b| {
        let boundary = if b.chunk_boundary {
            ", at a chunk boundary"
        } else {
            ""
        };
        format!(
            "record {} after {} in chunk {}{boundary}",
            b.record_id, b.previous_record_id, b.chunk
        )
    });
    s.push_str(&format!("times backwards: {}\n", c.times_backwards.len()));
    write_rows(s, &c.times_backwards, top, |b| {
        format!(
            "record {} at {}, after record {} at {}",
            b.record_id,
            time_text(Some(b.time)),
            b.previous_record_id,
            time_text(Some(b.previous_time))
        )
    });
    write_events_text(s, c, top, silence);
}

/// The lines of the silences, log events and carved records.
fn write_events_text(s: &mut String, c: &Contents, top: usize, silence: u64) {
    s.push_str(&format!(
        "silences of {silence} s or more: {}\n",
        c.silences.len()
    ));
    write_rows(s, &c.silences, top, |q| {
        format!(
            "{} s after record {} at {}, before record {} at {}",
            q.seconds,
            q.after.0,
            time_text(Some(q.after.1)),
            q.before.0,
            time_text(Some(q.before.1))
        )
    });
    s.push_str(&format!("log events: {}\n", c.log_events.len()));
    write_rows(s, &c.log_events, top, |e| {
        format!(
            "record {} at {}: {}/{} {}",
            e.record_id,
            time_text(e.time),
            e.provider,
            e.event_id,
            e.what
        )
    });
    s.push_str(&format!("carved: {}\n", c.carved.len()));
    write_rows(s, &c.carved, top, |r| {
        format!(
            "record {} at {}: {}/{}",
            r.record_id,
            time_text(r.time),
            r.provider.as_deref().unwrap_or("-"),
            r.event_id
                .map_or_else(|| "-".to_string(), |n| n.to_string())
        )
    });
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::dump::EvtxFile;
    use evtx_fixture_gen::dsl::{e, inst_record, v_filetime, v_null, v_str, v_u16};
    use evtx_fixture_gen::writer::{file_of, ty, Chunk, ChunkOverrides};

    /// 2024-03-01T08:00:00Z in FILETIME ticks.
    const T0: u64 = evtx_fixture_gen::log::BASE_TIME;
    const SECOND: u64 = 10_000_000;

    fn report_of(data: &[u8], silence: u64) -> Contents {
        let file = EvtxFile::open(data).unwrap();
        triage("log", &file, silence).contents.unwrap()
    }

    /// A record of the Windows shape: Provider/@Name, EventID, TimeCreated/@SystemTime
    /// (omitted when `time` is `None`), Channel.
    fn record(
        provider: &str,
        event_id: u16,
        time: Option<u64>,
    ) -> Vec<evtx_fixture_gen::writer::Tok> {
        let def = e("Event").kid(
            e("System")
                .kid(e("Provider").attr_sub("Name", 0, ty::STRING))
                .kid(e("EventID").sub(1, ty::U16))
                .kid(e("TimeCreated").attr_opt("SystemTime", 2, ty::FILETIME))
                .kid(e("Channel").sub(3, ty::STRING)),
        );
        let time = time.map_or_else(v_null, v_filetime);
        let values = vec![v_str(provider), v_u16(event_id), time, v_str("Security")];
        inst_record("sys", def, values)
    }

    /// The chunk of `records` (id, provider, event id, time); `last` overrides the header's
    /// last record id.
    fn chunk(records: &[(u64, &str, u16, Option<u64>)], last: Option<u64>) -> Vec<u8> {
        let mut c = Chunk::new();
        for &(id, provider, event_id, time) in records {
            c.record(id, T0, &record(provider, event_id, time)).unwrap();
        }
        let ov = ChunkOverrides {
            last_id: last,
            ..ChunkOverrides::default()
        };
        c.finish(&ov)
    }

    /// A wrapped log of three slots, each record of its (id, provider, event id, time).
    fn wrapped_log() -> Vec<u8> {
        // Slot 2 holds the oldest chunk (ids 1-3), so the walk is slots 2, 0, 1 (contract
        // 3.3): ids 1 2 3 | 20 21 22 25 26 | 6 5. Slot 1's header says first 6, last 5 (its
        // walk ends at 5, and the oldest-chunk scan skips it).
        let p = "P";
        let slot0 = chunk(
            &[
                (20, p, 1, Some(T0 + 1200 * SECOND)),
                (21, p, 1, Some(T0 + SECOND)),
                (
                    22,
                    "microsoft-windows-EVENTLOG",
                    1102,
                    Some(T0 + 1300 * SECOND),
                ),
                (25, p, 2, None),
                (26, p, 2, Some(T0 + 9000 * SECOND)),
            ],
            None,
        );
        let slot1 = chunk(
            &[
                (6, p, 1, Some(T0 + 9001 * SECOND)),
                (5, "EventLog", 6005, Some(T0 + 9002 * SECOND)),
            ],
            Some(5),
        );
        let slot2 = chunk(
            &[
                (1, p, 1, Some(T0 + 60 * SECOND)),
                (2, p, 1, Some(T0 + 120 * SECOND)),
                (3, p, 1, Some(T0 + 180 * SECOND)),
            ],
            None,
        );
        file_of(&[slot0, slot1, slot2])
    }

    #[test]
    fn gaps_and_ids_backwards_of_a_wrapped_log() {
        let c = report_of(&wrapped_log(), 3600);
        assert_eq!((c.records, c.recovered), (10, 0));
        assert_eq!(c.chunk_slots, 3);
        assert_eq!(
            (c.first_time, c.last_time),
            (Some(T0 + SECOND), Some(T0 + 9002 * SECOND))
        );
        let missing: Vec<(u64, u64, u64, u64)> = c
            .gaps
            .iter()
            .map(|g| {
                (
                    g.first_missing,
                    g.last_missing,
                    g.before.record_id,
                    g.after.record_id,
                )
            })
            .collect();
        assert_eq!(missing, [(4, 4, 3, 5), (7, 19, 6, 20), (23, 24, 22, 25)]);
        assert_eq!(c.gaps[2].after.time, None, "record 25 has no time");
        let back: Vec<(u64, u64, u32, bool)> = c
            .ids_backwards
            .iter()
            .map(|b| (b.record_id, b.previous_record_id, b.chunk, b.chunk_boundary))
            .collect();
        assert_eq!(back, [(6, 26, 1, true), (5, 6, 1, false)]);
        assert!(c.errors.is_empty() && c.bad_checksums.is_empty() && c.carved.is_empty());
    }

    #[test]
    fn times_silences_log_events_and_counts_of_a_wrapped_log() {
        let data = wrapped_log();
        let c = report_of(&data, 3600);
        let times: Vec<(u64, u64)> = c
            .times_backwards
            .iter()
            .map(|b| (b.record_id, b.previous_record_id))
            .collect();
        assert_eq!(times, [(21, 20)]);
        // Neighbours with times (22 -> 25 has none; 26 -> 6 is 1 s): 3 -> 20 is 1020 s and
        // 21 -> 22 1299 s, none 3600 s; both reach 1000 s.
        assert!(c.silences.is_empty());
        let c1000 = report_of(&data, 1000);
        let silences: Vec<(u64, u64, u64)> = c1000
            .silences
            .iter()
            .map(|s| (s.after.0, s.before.0, s.seconds))
            .collect();
        assert_eq!(silences, [(3, 20, 1020), (21, 22, 1299)]);
        let events: Vec<(u64, &str, u32, &str)> = c
            .log_events
            .iter()
            .map(|e| (e.record_id, e.provider.as_str(), e.event_id, e.what))
            .collect();
        assert_eq!(
            events,
            [
                (22, "microsoft-windows-EVENTLOG", 1102, "audit log cleared"),
                (5, "EventLog", 6005, "event log service started"),
            ]
        );
        let providers: Vec<(Option<&str>, u64)> = c
            .providers
            .iter()
            .map(|(k, n)| (k.as_deref(), *n))
            .collect();
        assert_eq!(
            providers,
            [
                (Some("P"), 8),
                (Some("EventLog"), 1),
                (Some("microsoft-windows-EVENTLOG"), 1)
            ]
        );
        let ids: Vec<(Option<&str>, Option<u32>, u64)> = c
            .event_ids
            .iter()
            .map(|((p, e), n)| (p.as_deref(), *e, *n))
            .collect();
        assert_eq!(
            ids,
            [
                (Some("P"), Some(1), 6),
                (Some("P"), Some(2), 2),
                (Some("EventLog"), Some(6005), 1),
                (Some("microsoft-windows-EVENTLOG"), Some(1102), 1),
            ]
        );
        assert!(c.errors.is_empty() && c.bad_checksums.is_empty() && c.carved.is_empty());
    }

    /// `shared-fixtures/<rel>`.
    fn fixture(rel: &str) -> Vec<u8> {
        let root = concat!(env!("CARGO_MANIFEST_DIR"), "/../../shared-fixtures/");
        std::fs::read(format!("{root}{rel}")).unwrap()
    }

    /// The number after `"key":` in `text` (the manifest's flat counts).
    fn number_after(text: &str, key: &str) -> u64 {
        let at = text.find(key).unwrap_or_else(|| panic!("{key}")) + key.len();
        let digits: String = text[at..]
            .chars()
            .take_while(char::is_ascii_digit)
            .collect();
        digits.parse().unwrap()
    }

    #[test]
    fn records_and_errors_are_the_manifests() {
        // The manifest's JSON counts of each fixture (the reference's, or `ours` where our rule
        // differs): live records and error lines, and our one `incomplete chunk` line for a
        // trailing partial slot (shared-fixtures/README.md). Carving never adds live records.
        let manifest = String::from_utf8(fixture("manifest.json")).unwrap();
        let mut checked = 0;
        // Each file's object starts with its first key, `chunk_slots` (keys sorted).
        for entry in manifest.split("\"chunk_slots\": ").skip(1) {
            let path = entry.split("\"path\": \"").nth(1).unwrap();
            let path = &path[..path.find('"').unwrap()];
            let data = fixture(path);
            let Ok(file) = EvtxFile::open(&data) else {
                continue;
            };
            let counts = match entry.find("\"ours\": {") {
                Some(at) if at < entry.find("\"reference\"").unwrap_or(usize::MAX) => &entry[at..],
                _ => &entry[entry.find("\"reference\": {").unwrap()..],
            };
            let c = triage(path, &file, 3600).contents.unwrap();
            let errors: u64 = c.errors.iter().map(|(_, n)| n).sum();
            let partial = u64::from(!(data.len() - 4096).is_multiple_of(65536));
            let records = number_after(counts, "\"records\": ");
            let want = (records, number_after(counts, "\"failed\": ") + partial);
            assert_eq!((c.records, errors), want, "{path}");
            let counted: u64 = c.providers.iter().map(|(_, n)| n).sum();
            assert_eq!(counted, c.records, "{path}: providers");
            checked += 1;
        }
        assert!(checked >= 20, "{checked} fixtures");
    }

    #[test]
    fn checksums_as_validate_checksums_refuses_them() {
        // `damaged/wrapped.evtx` (manifest): slot 0's header CRC is wrong, slot 3's free space
        // offset is 70000; the header is DIRTY with a wrong CRC; slot 2 is all zero.
        let c = report_of(&fixture("damaged/wrapped.evtx"), 3600);
        assert_eq!(c.bad_checksums, [(0, "header"), (3, "records")]);
        assert_eq!(
            (c.header.checksum, c.header.flag_names()),
            ("bad", vec!["DIRTY"])
        );
        assert_eq!((c.records, c.chunk_slots, c.header.chunks), (90, 4, 1));
        assert!(c.gaps.is_empty() && c.ids_backwards.is_empty());
        // `damaged/header-count-large.evtx`: NO_CRC32 with zero CRCs, a partial trailing slot.
        let c = report_of(&fixture("damaged/header-count-large.evtx"), 3600);
        assert_eq!(c.header.checksum, "none");
        assert!(c.bad_checksums.is_empty());
        assert_eq!(c.chunk_slots, 2, "the partial slot counts");
    }

    #[test]
    fn carved_records_are_not_live() {
        // `carving/slack-and-gaps.evtx`: the reference's jsonl with --recover-records adds the
        // records marked recovered to the live ones.
        let data = fixture("carving/slack-and-gaps.evtx");
        let c = report_of(&data, 3600);
        assert!(c.recovered > 0, "the fixture has carved records");
        assert_eq!(c.carved.len() as u64, c.recovered);
        let opts = Options {
            recover_records: true,
            ..walk_options()
        };
        let file = EvtxFile::open(&data).unwrap();
        let (mut live, mut carved) = (0, 0);
        crate::dump::dump(&file, &opts, |chunk| {
            for r in &chunk.records {
                if let Outcome::Rendered(range) = &r.outcome {
                    let text = &chunk.bytes[range.clone()];
                    if text.windows(11).any(|w| w == b"\"recovered\"") {
                        carved += 1;
                    } else {
                        live += 1;
                    }
                }
            }
            std::ops::ControlFlow::Continue(())
        });
        assert_eq!((c.records, c.recovered), (live, carved));
    }

    #[test]
    fn records_replayed_from_a_plan_write_no_text() {
        // `synthetic/filters.evtx`: records 2-5 replay the program of record 1's template; in
        // field mode they are counted and read without their text. Record 5's EventID has
        // Qualifiers (another shape: recorded itself), and record 10 replays record 9's
        // program, whose plan reads EventID (literal text and a value) from the tree.
        let data = fixture("synthetic/filters.evtx");
        let file = EvtxFile::open(&data).unwrap();
        let mut r = Renderer::new(&walk_options());
        r.collect_fields();
        let out = r.render_chunk(&file, 0);
        let empty: Vec<u64> = out
            .records
            .iter()
            .filter(|e| matches!(&e.outcome, Outcome::Rendered(x) if x.is_empty()))
            .filter_map(|e| e.record_id)
            .collect();
        assert_eq!(empty, [2, 3, 4, 10]);
        let log = r.fields().unwrap();
        assert_eq!(log.fields().len(), 10);
        let f = &log.fields()[2];
        assert_eq!(
            log.text(f.provider.as_ref().unwrap()),
            b"MICROSOFT-windows-security-AUDITING"
        );
        assert_eq!(f.event_id, Some(4624));
    }

    #[test]
    fn times_are_written_with_seven_fraction_digits() {
        let mut out = Vec::new();
        write_time(&mut out, 0);
        out.push(b' ');
        write_time(&mut out, T0 + 5);
        out.push(b' ');
        // 9999-12-31T23:59:59.9999999Z, the last tick a time can have.
        write_time(&mut out, filter::TICKS_YEAR_10000 - 1);
        assert_eq!(
            String::from_utf8(out).unwrap(),
            "1601-01-01T00:00:00.0000000Z 2024-03-01T08:00:00.0000005Z \
             9999-12-31T23:59:59.9999999Z"
        );
    }

    #[test]
    fn json_strings_are_escaped_as_the_provenance_file() {
        let mut out = Vec::new();
        write_json_string(&mut out, "a\"b\\c\u{8}\u{c}\n\r\t\u{1}é");
        assert_eq!(out, b"\"a\\\"b\\\\c\\b\\f\\n\\r\\t\\u0001\xc3\xa9\"");
    }
}
