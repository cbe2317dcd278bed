//! `--mta FILE`: the localized strings of a log saved with display information
//! (`LocaleMetaData\<log>_<LCID>.MTA`), added to each record as a `RenderingInfo` element.
//!
//! The layout and the lookup rules are written down in
//! `shared-fixtures/generator/mta-format.md`; `zig/src/mta.zig` follows the same text.
//!
//! Invariants: every read is bounds-checked against the file; a page chain is followed at most
//! `section size / 888 + 1` pages; no allocation is sized by a number read from the file
//! before the bytes it claims are known to be there.

use std::collections::HashMap;
use std::fmt;

use crate::escape::{self, Mode};
use crate::reader_error::{ReaderError, ReaderKind};
use crate::tree::{Element, Names, Node, Tree};
use crate::values_decode::ty;

const MAGIC: &[u8; 8] = b"MTAFile\0";
const HEADER_SIZE: usize = 24;
const DESCRIPTOR_SIZE: usize = 20;
const PAGE_HEADER_SIZE: usize = 888;
const PAGE_NEXT: usize = 72;
const PAGE_SELF: usize = 80;
const PAGE_SLOTS: usize = 88;
const RECORD_HEADER_SIZE: usize = 8;

/// The publisher whose tables hold the standard names other publishers fall back to.
pub const DEFAULT_PUBLISHER: &str = "DEFAULT_PUBLISHER";

/// Why an `.MTA` file was refused. `Display` gives the reference's words.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum MtaError {
    InvalidMagic([u8; 8]),
    UnsupportedVersion {
        major: u32,
        minor: u32,
    },
    MissingSection(&'static str),
    /// `offset` is the reference's number (where the part should be); `at` is where the
    /// reader found the fault: the part itself, or the slot or descriptor whose pointer
    /// leads out of the section or file.
    Corrupt {
        what: &'static str,
        offset: u64,
        at: u64,
    },
    /// `at`: the section's first byte, where its page chain starts.
    PageLoop {
        name: &'static str,
        at: u64,
    },
}

/// Where the section descriptors start (a missing section is missing from that table).
const SECTION_TABLE: u64 = HEADER_SIZE as u64;
/// Where the major version lies.
const VERSION_AT: u64 = 8;

impl MtaError {
    /// The file offset of the fault (the rule in `crate::reader_error`).
    pub fn offset(&self) -> u64 {
        match self {
            MtaError::InvalidMagic(_) => 0,
            MtaError::UnsupportedVersion { .. } => VERSION_AT,
            MtaError::MissingSection(_) => SECTION_TABLE,
            MtaError::Corrupt { at, .. } | MtaError::PageLoop { at, .. } => *at,
        }
    }

    /// The error as the CLIs print it: offset and the reference's words.
    #[cold]
    pub fn reader_error(&self) -> ReaderError {
        ReaderError::new(ReaderKind::Mta, self.offset(), self)
    }
}

impl fmt::Display for MtaError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            MtaError::InvalidMagic(magic) => write!(f, "not an MTA file (magic {magic:02x?})"),
            MtaError::UnsupportedVersion { major, minor } => {
                write!(f, "unsupported MTA version {major}.{minor}")
            }
            MtaError::MissingSection(name) => write!(f, "MTA file has no {name} section"),
            MtaError::Corrupt { what, offset, .. } => {
                write!(
                    f,
                    "MTA {what} at offset {offset:#x} is truncated or out of bounds"
                )
            }
            MtaError::PageLoop { name, .. } => {
                write!(f, "MTA {name} section has a page chain that does not end")
            }
        }
    }
}

impl std::error::Error for MtaError {}

#[cold]
fn corrupt(what: &'static str, offset: u64) -> MtaError {
    MtaError::Corrupt {
        what,
        offset,
        at: offset,
    }
}

/// A part at `offset` that does not fit in `len` bytes, reached through the pointer at `from`:
/// cut short, it is named at its first byte; starting past the end, at the pointer.
#[cold]
fn corrupt_via(what: &'static str, offset: u64, len: u64, from: u64) -> MtaError {
    let at = if offset < len { offset } else { from };
    MtaError::Corrupt { what, offset, at }
}

/// A parsed `.MTA` file.
#[derive(Debug, Default)]
pub struct MtaFile {
    /// EVT entries (entry index, EventRecordID, MSG index), sorted by entry index, unique.
    events: Vec<(u32, u64, Option<u32>)>,
    /// The MSG index of the lowest-index EVT entry with each EventRecordID.
    first_message: HashMap<u64, Option<u32>>,
    /// MSG strings by entry index, sorted, unique.
    messages: Vec<(u32, Box<str>)>,
    publishers: Vec<Publisher>,
    by_name: HashMap<String, usize>,
    by_lowercase_name: HashMap<String, usize>,
    default_publisher: Option<usize>,
}

/// One publisher's name tables (values are MSG strings, possibly empty).
#[derive(Debug, Default)]
struct Publisher {
    name: String,
    levels: HashMap<u32, Box<str>>,
    tasks: HashMap<u32, Box<str>>,
    opcodes: HashMap<u32, Box<str>>,
    keywords: HashMap<u32, Box<str>>,
}

/// The `System` fields that select an event's strings.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct EventFields {
    pub provider: String,
    pub event_record_id: u64,
    pub qualifiers: u16,
    pub level: u8,
    pub task: u16,
    pub opcode: u8,
    pub keywords: u64,
}

/// The strings found for one event; `None` (or no keywords) where the file has none.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct RenderingInfo<'a> {
    pub message: Option<&'a str>,
    pub level: Option<&'a str>,
    pub task: Option<&'a str>,
    pub opcode: Option<&'a str>,
    pub keywords: Vec<&'a str>,
}

fn u32_at(b: &[u8], at: usize) -> Option<u32> {
    let s = b.get(at..at.checked_add(4)?)?;
    Some(u32::from_le_bytes(s.try_into().ok()?))
}

fn u64_at(b: &[u8], at: usize) -> Option<u64> {
    let s = b.get(at..at.checked_add(8)?)?;
    Some(u64::from_le_bytes(s.try_into().ok()?))
}

/// The section names the parser keeps, in the order of `MtaFile::parse`'s checks.
const SECTIONS: [&str; 3] = ["EVT", "MSG", "PUB"];

struct Section<'b> {
    name: &'static str,
    data: &'b [u8],
    base: u64,
}

impl<'b> Section<'b> {
    /// Calls `f(entry index, payload, file offset)` for every record of the page chain.
    fn each_record(
        &self,
        mut f: impl FnMut(u32, &'b [u8], u64) -> Result<(), MtaError>,
    ) -> Result<(), MtaError> {
        let data = self.data;
        if data.is_empty() {
            return Ok(());
        }
        let at = |offset: usize| self.base.saturating_add(offset as u64);
        let end = at(data.len());
        let mut page = 0usize;
        // Where the pointer to `page` lies: the section's start, then a page's next field.
        let mut from = self.base;
        // A chain longer than the pages that fit revisits one.
        for _ in 0..=data.len() / PAGE_HEADER_SIZE {
            let header = page
                .checked_add(PAGE_HEADER_SIZE)
                .and_then(|end| data.get(page..end))
                .ok_or_else(|| corrupt_via("page", at(page), end, from))?;
            if u32_at(header, 0) != Some(0) {
                for (k, slot) in header[PAGE_SLOTS..].chunks_exact(8).enumerate() {
                    let offset = u64::from_le_bytes(slot.try_into().expect("8 bytes"));
                    if offset == 0 {
                        continue;
                    }
                    let offset = usize::try_from(offset).unwrap_or(usize::MAX);
                    let slot_at = at(page + PAGE_SLOTS + 8 * k);
                    let (index, payload) = record(data, offset)
                        .ok_or_else(|| corrupt_via("record", at(offset), end, slot_at))?;
                    f(index, payload, at(offset))?;
                }
            }
            let next = u64_at(header, PAGE_NEXT).expect("in the page header");
            if next == u64_at(header, PAGE_SELF).expect("in the page header") {
                return Ok(());
            }
            from = at(page + PAGE_NEXT);
            page = usize::try_from(next).unwrap_or(usize::MAX);
        }
        Err(MtaError::PageLoop {
            name: self.name,
            at: self.base,
        })
    }
}

fn record(data: &[u8], offset: usize) -> Option<(u32, &[u8])> {
    let index = u32_at(data, offset)?;
    let size = u32_at(data, offset.checked_add(4)?)? as usize;
    let start = offset.checked_add(RECORD_HEADER_SIZE)?;
    let payload = data.get(start..start.checked_add(size)?)?;
    Some((index, payload))
}

/// UTF-16LE text: an odd last byte dropped, one trailing NUL dropped, lone surrogates replaced,
/// cut at the first NUL left.
pub fn decode_utf16(bytes: &[u8]) -> String {
    let mut units: Vec<u16> = bytes
        .chunks_exact(2)
        .map(|u| u16::from_le_bytes([u[0], u[1]]))
        .collect();
    if units.last() == Some(&0) {
        units.pop();
    }
    let mut text: String = char::decode_utf16(units)
        .map(|c| c.unwrap_or(char::REPLACEMENT_CHARACTER))
        .collect();
    if let Some(nul) = text.find('\0') {
        text.truncate(nul);
    }
    text
}

/// Whether UTF-16LE `bytes` spell ASCII `name`, one trailing NUL allowed.
fn utf16_is(bytes: &[u8], name: &str) -> bool {
    let mut units: Vec<[u8; 2]> = bytes.chunks_exact(2).map(|u| [u[0], u[1]]).collect();
    if units.last() == Some(&[0, 0]) {
        units.pop();
    }
    units.len() == name.len() && units.iter().zip(name.bytes()).all(|(u, b)| *u == [b, 0])
}

/// The header's magic and major version, which every later read relies on; returns how many
/// section descriptors follow.
fn read_header(bytes: &[u8]) -> Result<u32, MtaError> {
    let header = |at| u32_at(bytes, at).ok_or_else(|| corrupt("header", 0));
    let magic: [u8; 8] = bytes
        .get(..8)
        .and_then(|m| m.try_into().ok())
        .ok_or_else(|| corrupt("header", 0))?;
    if &magic != MAGIC {
        return Err(MtaError::InvalidMagic(magic));
    }
    let (major, minor) = (header(8)?, header(12)?);
    if major != 1 {
        return Err(MtaError::UnsupportedVersion { major, minor });
    }
    header(20)
}

/// The three sections the reader needs (EVT, MSG, PUB), the first of each name; the others are
/// skipped but their descriptors must still be whole.
fn read_sections(bytes: &[u8], count: u32) -> Result<[Section<'_>; 3], MtaError> {
    let mut sections: [Option<Section<'_>>; 3] = [None, None, None];
    let mut offset = HEADER_SIZE;
    for _ in 0..count {
        let at = offset as u64;
        let descriptor = || corrupt("section descriptor", at);
        let start = u64_at(bytes, offset).ok_or_else(descriptor)?;
        let size = u64_at(bytes, offset + 8).ok_or_else(descriptor)?;
        let name_len = u32_at(bytes, offset + 16).ok_or_else(descriptor)? as usize;
        let name_at = offset + DESCRIPTOR_SIZE;
        let name = name_at
            .checked_add(name_len)
            .and_then(|end| bytes.get(name_at..end))
            .ok_or_else(|| corrupt("section name", at))?;
        offset = name_at + name_len;
        let Some(slot) = SECTIONS.iter().position(|known| utf16_is(name, known)) else {
            continue;
        };
        let data = usize::try_from(start)
            .ok()
            .zip(usize::try_from(size).ok())
            .and_then(|(s, n)| bytes.get(s..s.checked_add(n)?))
            .ok_or_else(|| corrupt_via("section", start, bytes.len() as u64, at))?;
        sections[slot].get_or_insert(Section {
            name: SECTIONS[slot],
            data,
            base: start,
        });
    }
    let [evt, msg, publ] = sections;
    Ok([
        evt.ok_or(MtaError::MissingSection("EVT"))?,
        msg.ok_or(MtaError::MissingSection("MSG"))?,
        publ.ok_or(MtaError::MissingSection("PUB"))?,
    ])
}

/// The MSG section's texts by entry index, which PUB entries and events point into.
fn read_messages(msg: &Section<'_>) -> Result<Vec<(u32, Box<str>)>, MtaError> {
    let mut messages = Vec::new();
    msg.each_record(|index, payload, at| {
        let len = u32_at(payload, 0).ok_or_else(|| corrupt("MSG entry", at))? as usize;
        let text = payload
            .get(4..)
            .and_then(|t| t.get(..len))
            .ok_or_else(|| corrupt("MSG entry", at))?;
        messages.push((index, decode_utf16(text).into_boxed_str()));
        Ok(())
    })?;
    sort_unique(&mut messages, |m| m.0);
    Ok(messages)
}

/// The EVT section's (index, event id, message index) entries.
fn read_events(evt: &Section<'_>) -> Result<Vec<(u32, u64, Option<u32>)>, MtaError> {
    let mut events = Vec::new();
    evt.each_record(|index, payload, at| {
        let id = u64_at(payload, 0).ok_or_else(|| corrupt("EVT entry", at))?;
        let message = u64_at(payload, 8).ok_or_else(|| corrupt("EVT entry", at))?;
        events.push((index, id, u32::try_from(message).ok()));
        Ok(())
    })?;
    sort_unique(&mut events, |e| e.0);
    Ok(events)
}

/// The PUB section's publishers in entry order (their names resolved through `messages`).
fn read_publishers(
    publ: &Section<'_>,
    messages: &[(u32, Box<str>)],
) -> Result<Vec<Publisher>, MtaError> {
    let mut publishers = Vec::new();
    publ.each_record(|index, payload, at| {
        let p = parse_publisher(payload, messages).ok_or_else(|| corrupt("PUB entry", at))?;
        publishers.push((index, p));
        Ok(())
    })?;
    publishers.sort_by_key(|p| p.0);
    Ok(publishers.into_iter().map(|p| p.1).collect())
}

/// Sorts by entry index and keeps the first entry of each index (the sort is stable).
fn sort_unique<T>(entries: &mut Vec<T>, index: impl Fn(&T) -> u32) {
    entries.sort_by_key(&index);
    entries.dedup_by_key(|e| index(e));
}

fn find_by_index<T>(entries: &[T], index: u32, key: impl Fn(&T) -> u32) -> Option<&T> {
    entries
        .binary_search_by_key(&index, key)
        .ok()
        .map(|i| &entries[i])
}

fn non_empty(s: Option<&str>) -> Option<&str> {
    s.filter(|s| !s.is_empty())
}

impl MtaFile {
    /// Parses the bytes of an `.MTA` file; the first fault found is the error.
    pub fn parse(bytes: &[u8]) -> Result<MtaFile, MtaError> {
        let count = read_header(bytes)?;
        let [evt, msg, publ] = read_sections(bytes, count)?;
        let messages = read_messages(&msg)?;
        let events = read_events(&evt)?;
        let mut first_message = HashMap::with_capacity(events.len());
        for &(_, id, message) in &events {
            first_message.entry(id).or_insert(message);
        }
        let publishers = read_publishers(&publ, &messages)?;
        let mut by_name = HashMap::with_capacity(publishers.len());
        let mut by_lowercase_name = HashMap::with_capacity(publishers.len());
        for (i, p) in publishers.iter().enumerate() {
            by_name.entry(p.name.clone()).or_insert(i);
            by_lowercase_name
                .entry(p.name.to_ascii_lowercase())
                .or_insert(i);
        }
        let default_publisher = by_name.get(DEFAULT_PUBLISHER).copied();
        Ok(MtaFile {
            events,
            first_message,
            messages,
            publishers,
            by_name,
            by_lowercase_name,
            default_publisher,
        })
    }

    fn publisher(&self, name: &str) -> Option<&Publisher> {
        let i = match self.by_name.get(name) {
            Some(&i) => i,
            None => *self.by_lowercase_name.get(&name.to_ascii_lowercase())?,
        };
        self.publishers.get(i)
    }

    /// The strings of an event whose record header id is `record_number`, or `None` when its
    /// publisher is not in the file.
    pub fn rendering_info(
        &self,
        record_number: u64,
        event: &EventFields,
    ) -> Option<RenderingInfo<'_>> {
        let publisher = self.publisher(&event.provider)?;
        let default = self.default_publisher.and_then(|i| self.publishers.get(i));
        // The first table holding the key wins, even with an empty string.
        let find = |table: fn(&Publisher) -> &HashMap<u32, Box<str>>, key: u32| {
            table(publisher)
                .get(&key)
                .or_else(|| default.and_then(|d| table(d).get(&key)))
                .map(|s| &**s)
        };
        let opcode = if event.qualifiers == 0 {
            let key = u32::from(event.opcode) << 16;
            find(|p| &p.opcodes, key | u32::from(event.task)).or_else(|| find(|p| &p.opcodes, key))
        } else {
            None
        };
        let mut keywords = Vec::new();
        let mut mask = event.keywords;
        while mask != 0 {
            let bit = mask.trailing_zeros();
            mask &= mask - 1;
            keywords.extend(non_empty(find(|p| &p.keywords, bit)));
        }
        Some(RenderingInfo {
            message: self.message(record_number, event.event_record_id),
            level: non_empty(find(|p| &p.levels, u32::from(event.level))),
            task: non_empty(find(|p| &p.tasks, u32::from(event.task))),
            opcode: non_empty(opcode),
            keywords,
        })
    }

    fn message(&self, record_number: u64, event_record_id: u64) -> Option<&str> {
        let at_position = record_number
            .checked_sub(1)
            .and_then(|p| u32::try_from(p).ok())
            .and_then(|p| find_by_index(&self.events, p, |e| e.0))
            .filter(|e| e.1 == event_record_id);
        let message = match at_position {
            Some(e) => e.2,
            None => *self.first_message.get(&event_record_id)?,
        }?;
        let (_, text) = find_by_index(&self.messages, message, |m| m.0)?;
        non_empty(Some(text))
    }
}

/// A PUB payload: four tables (u32 count, count × (u32 key, u32 MSG index)), then the name.
fn parse_publisher(payload: &[u8], messages: &[(u32, Box<str>)]) -> Option<Publisher> {
    let mut offset = 0usize;
    let mut table = |mask: u32| -> Option<HashMap<u32, Box<str>>> {
        let count = u32_at(payload, offset)? as usize;
        let start = offset.checked_add(4)?;
        let entries = payload.get(start..start.checked_add(count.checked_mul(8)?)?)?;
        offset = start + entries.len();
        let mut map = HashMap::new();
        for entry in entries.chunks_exact(8) {
            let key = u32_at(entry, 0)? & mask;
            let message = u32_at(entry, 4)?;
            if let Some((_, text)) = find_by_index(messages, message, |m| m.0) {
                map.entry(key).or_insert_with(|| text.clone());
            }
        }
        Some(map)
    };
    let levels = table(u32::MAX)?;
    let tasks = table(0xffff)?;
    let opcodes = table(u32::MAX)?;
    let keywords = table(u32::MAX)?;
    let name_len = u32_at(payload, offset)? as usize;
    let start = offset.checked_add(4)?;
    let name = payload.get(start..start.checked_add(name_len)?)?;
    Some(Publisher {
        name: decode_utf16(name),
        levels,
        tasks,
        opcodes,
        keywords,
    })
}

/// Reads the `System` fields of a record tree whose root is `root`: `None` when the record gets
/// no `RenderingInfo` (the root is not `Event`, has no `System`, or has a `RenderingInfo`).
pub fn event_fields(
    chunk: &[u8],
    codec: &'static encoding_rs::Encoding,
    names: &Names,
    tree: &Tree,
    root: u32,
) -> Option<EventFields> {
    let root_element = tree.elems.get(root as usize)?;
    if names.get(root_element.name) != "Event" {
        return None;
    }
    let mut system = None;
    for node in tree.children(root_element) {
        if let Node::Element(id) = *node {
            match names.get(tree.elems[id as usize].name) {
                "System" => system = system.or(Some(id)),
                "RenderingInfo" => return None,
                _ => {}
            }
        }
    }
    let system = &tree.elems[system? as usize];
    let reader = Reader { chunk, codec, tree };
    let mut fields = EventFields::default();
    let (mut qualifiers, mut level, mut task, mut opcode) = (None, None, None, None);
    let (mut keywords, mut record_id) = (None, None);
    for node in tree.children(system) {
        let Node::Element(id) = *node else { continue };
        let element = &tree.elems[id as usize];
        let content = || reader.number(tree.children(element));
        match names.get(element.name) {
            "Provider" => {
                fields.provider = reader.text(reader.attribute(names, element, "Name"));
            }
            "EventID" => qualifiers = reader.number(reader.attribute(names, element, "Qualifiers")),
            "Level" => level = content(),
            "Task" => task = content(),
            "Opcode" => opcode = content(),
            "Keywords" => keywords = content(),
            "EventRecordID" => record_id = content(),
            _ => {}
        }
    }
    // A missing or out-of-range field counts as 0.
    fn narrow<T: TryFrom<u64> + Default>(v: Option<u64>) -> T {
        v.and_then(|v| T::try_from(v).ok()).unwrap_or_default()
    }
    fields.qualifiers = narrow(qualifiers);
    fields.level = narrow(level);
    fields.task = narrow(task);
    fields.opcode = narrow(opcode);
    fields.keywords = keywords.unwrap_or(0);
    fields.event_record_id = record_id.unwrap_or(0);
    Some(fields)
}

struct Reader<'a> {
    chunk: &'a [u8],
    codec: &'static encoding_rs::Encoding,
    tree: &'a Tree,
}

impl<'a> Reader<'a> {
    /// The items of the first attribute `name` that has content (the reference's tree leaves
    /// out attributes whose substitutions are empty); none when there is none.
    fn attribute(&self, names: &Names, element: &Element, name: &str) -> &'a [Node] {
        self.tree
            .attrs(element)
            .iter()
            .filter(|a| names.get(a.name) == name)
            .map(|a| self.tree.items(a))
            .find(|items| items.iter().any(Node::has_content))
            .unwrap_or(&[])
    }

    fn bytes(&self, off: u32, len: usize) -> &'a [u8] {
        let start = off as usize;
        start
            .checked_add(len)
            .and_then(|end| self.chunk.get(start..end))
            .unwrap_or(&[])
    }

    /// The concatenated string text of `nodes` (other nodes read as nothing).
    fn text(&self, nodes: &[Node]) -> String {
        let mut text = String::new();
        for node in nodes {
            match *node {
                Node::Text16 { off, units, .. } => {
                    text.push_str(&decode_utf16(self.bytes(off, units as usize * 2)));
                }
                Node::Ansi { off, len, .. } => {
                    let bytes: Vec<u8> = self
                        .bytes(off, len as usize)
                        .iter()
                        .copied()
                        .filter(|&b| b != 0)
                        .collect();
                    text.push_str(&self.codec.decode_without_bom_handling(&bytes).0);
                }
                _ => {}
            }
        }
        text
    }

    /// One integer value, or else the text in decimal or `0x` hex.
    fn number(&self, nodes: &[Node]) -> Option<u64> {
        if let [Node::Value(v)] = nodes {
            let b = self.bytes(v.off, v.len as usize);
            let u = |n: usize| -> Option<u64> {
                let mut buf = [0u8; 8];
                buf[..n].copy_from_slice(b.get(..n)?);
                Some(u64::from_le_bytes(buf))
            };
            let signed = |n: usize| -> Option<u64> {
                let raw = u(n)?;
                let shift = 64 - 8 * n as u32;
                u64::try_from(((raw << shift) as i64) >> shift).ok()
            };
            let number = match v.ty {
                ty::U8 => u(1),
                ty::U16 => u(2),
                ty::U32 | ty::HEX32 => u(4),
                ty::U64 | ty::HEX64 => u(8),
                ty::I8 => signed(1),
                ty::I16 => signed(2),
                ty::I32 => signed(4),
                ty::I64 => signed(8),
                _ => None,
            };
            if number.is_some() {
                return number;
            }
        }
        let text = self.text(nodes);
        let text = text.trim();
        match text.strip_prefix("0x").or_else(|| text.strip_prefix("0X")) {
            Some(hex) => u64::from_str_radix(hex, 16).ok(),
            None => text.parse().ok(),
        }
    }
}

/// Appends `info` as the last child of the rendered record `body` (its root `Event` closes at
/// the end): XML before `</Event>`, JSON before the root object's last two braces.
/// Returns `false`, writing nothing, when `body` does not end as a rendered `Event` does.
pub fn splice(
    out: &mut Vec<u8>,
    body: usize,
    info: &RenderingInfo<'_>,
    json: bool,
    indent: bool,
) -> bool {
    let mut fragment = Vec::with_capacity(256);
    let at = if json {
        if !out[body..].ends_with(b"}}") {
            return false;
        }
        write_json(&mut fragment, info);
        out.len() - 2
    } else {
        let close: &[u8] = if indent { b"</Event>\n" } else { b"</Event>" };
        if !out[body..].ends_with(close) {
            return false;
        }
        write_xml(&mut fragment, info, indent);
        out.len() - close.len()
    };
    out.splice(at..at, fragment);
    true
}

fn fields<'a>(info: &RenderingInfo<'a>) -> [(&'static str, Option<&'a str>); 4] {
    [
        ("Message", info.message),
        ("Level", info.level),
        ("Task", info.task),
        ("Opcode", info.opcode),
    ]
}

fn write_xml(out: &mut Vec<u8>, info: &RenderingInfo<'_>, indent: bool) {
    let line = |out: &mut Vec<u8>, depth: usize, name: &str, text: &str| {
        if indent {
            out.resize(out.len() + 2 * depth, b' ');
        }
        out.extend_from_slice(format!("<{name}>").as_bytes());
        escape::write_str(out, text, Mode::XmlText);
        out.extend_from_slice(format!("</{name}>").as_bytes());
        if indent {
            out.push(b'\n');
        }
    };
    let tag = |out: &mut Vec<u8>, depth: usize, tag: &str| {
        if indent {
            out.resize(out.len() + 2 * depth, b' ');
        }
        out.extend_from_slice(tag.as_bytes());
        if indent {
            out.push(b'\n');
        }
    };
    let present = fields(info);
    if present.iter().all(|f| f.1.is_none()) && info.keywords.is_empty() {
        tag(out, 1, "<RenderingInfo></RenderingInfo>");
        return;
    }
    tag(out, 1, "<RenderingInfo>");
    for (name, text) in present {
        if let Some(text) = text {
            line(out, 2, name, text);
        }
    }
    if !info.keywords.is_empty() {
        tag(out, 2, "<Keywords>");
        for keyword in &info.keywords {
            line(out, 3, "Keyword", keyword);
        }
        tag(out, 2, "</Keywords>");
    }
    tag(out, 1, "</RenderingInfo>");
}

fn write_json(out: &mut Vec<u8>, info: &RenderingInfo<'_>) {
    let member = |out: &mut Vec<u8>, first: bool, key: &str, text: &str| {
        if !first {
            out.push(b',');
        }
        out.push(b'"');
        out.extend_from_slice(key.as_bytes());
        out.extend_from_slice(b"\":\"");
        escape::write_str(out, text, Mode::JsonLower);
        out.push(b'"');
    };
    out.extend_from_slice(b",\"RenderingInfo\":");
    let present = fields(info);
    if present.iter().all(|f| f.1.is_none()) && info.keywords.is_empty() {
        out.extend_from_slice(b"null");
        return;
    }
    out.push(b'{');
    let mut first = true;
    for (name, text) in present {
        if let Some(text) = text {
            member(out, first, name, text);
            first = false;
        }
    }
    if !info.keywords.is_empty() {
        if !first {
            out.push(b',');
        }
        out.extend_from_slice(b"\"Keywords\":{");
        for (i, keyword) in info.keywords.iter().enumerate() {
            let key = if i == 0 {
                "Keyword".to_string()
            } else {
                format!("Keyword_{i}")
            };
            member(out, i == 0, &key, keyword);
        }
        out.push(b'}');
    }
    out.push(b'}');
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn error_texts_are_the_references() {
        // Words and number forms from evtx 0.15.1's `MtaError` (src/mta.rs).
        assert_eq!(
            MtaFile::parse(b"").unwrap_err().to_string(),
            "MTA header at offset 0x0 is truncated or out of bounds"
        );
        assert_eq!(
            MtaFile::parse(b"XTAFile\0\x01\0\0\0\x01\0\0\0\0\0\0\0\0\0\0\0")
                .unwrap_err()
                .to_string(),
            "not an MTA file (magic [58, 54, 41, 46, 69, 6c, 65, 00])"
        );
        assert_eq!(
            MtaFile::parse(b"MTAFile\0\x02\0\0\0\x07\0\0\0\0\0\0\0\0\0\0\0")
                .unwrap_err()
                .to_string(),
            "unsupported MTA version 2.7"
        );
        assert_eq!(
            MtaFile::parse(b"MTAFile\0\x01\0\0\0\x01\0\0\0\0\0\0\0\0\0\0\0")
                .unwrap_err()
                .to_string(),
            "MTA file has no EVT section"
        );
    }

    #[test]
    fn utf16_text_rules() {
        let bytes: Vec<u8> = [b'a' as u16, 0xd800, b'b' as u16, 0, b'c' as u16]
            .iter()
            .flat_map(|u| u.to_le_bytes())
            .collect();
        assert_eq!(decode_utf16(&bytes), "a\u{fffd}b");
        assert_eq!(decode_utf16(b"E\0V\0T\0\0\0x"), "EVT");
        assert!(utf16_is(b"E\0V\0T\0\0\0", "EVT") && !utf16_is(b"E\0V\0", "EVT"));
    }

    #[test]
    fn json_keywords_are_numbered() {
        let info = RenderingInfo {
            level: Some("L\"1"),
            keywords: vec!["a", "b", "c"],
            ..Default::default()
        };
        let mut out = Vec::new();
        write_json(&mut out, &info);
        assert_eq!(
            String::from_utf8(out).unwrap(),
            ",\"RenderingInfo\":{\"Level\":\"L\\\"1\",\"Keywords\":{\"Keyword\":\"a\",\"Keyword_1\
                \":\"b\",\"Keyword_2\":\"c\"}}"
        );
    }
}
