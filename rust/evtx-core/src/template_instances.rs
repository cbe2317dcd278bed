//! A log's records as the reference's record iterator reads them, and their template instances:
//! what `dump-template-instances` lists and `apply-wevt-cache --evtx` takes its values from
//! (`shared-fixtures/generator/wevt-format.md`). The CLIs parse arguments and print; the walk of
//! the records' BinXML, the reference's words for a record it fails on and the values' texts
//! are here.
//!
//! The Zig engine's twin is `zig/src/template_instances.zig`, name for name (`read_records` ↔
//! `readRecords`, `raw_values` ↔ `rawValues`):
//!
//! - [`read_records`]`(input, visit)` reads the log in file order and hands `visit` one
//!   [`Step`] per record or chunk the reference's iterator meets, until `visit` breaks. Records
//!   are read as the dump reads them in JSON with an empty `--mta` (the tree path: every value
//!   of a record is read, used or not, as the reference's iterator does; it builds each tree
//!   but renders nothing, so the XML writer's own failures are not its failures).
//! - [`Step::Failed`]`{ line, cause }`: a chunk or record the reference's iterator fails on:
//!   its one line (what `dump-template-instances` prints before it goes on) and, where the bytes
//!   tell it, the text below `Caused by:` (`apply-wevt-cache` ends with both). A record holding
//!   a value the reference's reader cannot read (an EvtHandle, EvtXml, Binary or SizeT array
//!   and the arrays of the first two: we render those, `shared-fixtures/README.md`) is one too:
//!   `Failed to parse record number N`, and the reference's `Value variant ... is
//!   unimplemented` where it names the type.
//! - [`Step::Record`]`(`[`Record`]`)`: a record it reads: `id`, `filetime` (its header's),
//!   `chunk` (its chunk's bytes) and `offset` (its header's, in `chunk`). A record refused only
//!   for its output size is one (the reference renders nothing); the error of a trailing
//!   partial chunk is no step (the reference's walk ends before it).
//! - [`Record::instances`]`()`: every top-level template instance of the record's stream, in
//!   order, as [`Instance`]s, the reference's `template_instances` walk: end of stream ends it,
//!   fragment headers are stepped over, so is every token of an element tree around instances
//!   (an instance inside one counts); an error when an instance's values do not read (never
//!   for a record the dump read: its instances were read the same way).
//! - [`Instance`]: `template_id`, `def_offset`, `guid` (the inline definition's, `None` when
//!   the definition is elsewhere) and `values`: each value's text as the reference's `Display`
//!   gives it, its JSON text unquoted (nothing for NULL and BinXML).
//! - [`Record::raw_values`]`(index)`: the values of the `index`-th top-level instance as
//!   `apply-wevt-cache` splices them, each its type and declared bytes (BinXML, EvtHandle and
//!   EvtXml values become NULL); `None` when the record has fewer. This walk steps over
//!   fragment headers and instances only (any other token ends it), as the reference's does.

use crate::bytes::{get_u16, get_u32};
use crate::dump::{ChunkResult, RecordResult};
use crate::error::{BinXmlError, ErrorKind, Failure};
use crate::input::{ChunkSlot, ChunkSource};
use crate::limits::INSTANCE_SCAN_DEPTH_MAX;
use crate::options::{Format, Options};
use crate::tokens::{read_instance_head, read_instance_values, InstanceHead, Source};
use crate::values_decode::{ty, Slot};
use crate::wevt_cache::RawValue;
use crate::{Cause, CauseKind, Outcome};
use encoding_rs::Encoding;
use std::ops::ControlFlow;

/// What the reference's record iterator meets next ([`read_records`]).
#[derive(Debug)]
pub enum Step<'a> {
    /// A chunk or record it fails on: the one line, and the cause below it where the bytes
    /// tell it.
    Failed { line: String, cause: Option<String> },
    /// A record it reads.
    Record(Record<'a>),
}

/// A record the reference's iterator reads ([`Step::Record`]).
#[derive(Debug, Clone, Copy)]
pub struct Record<'a> {
    pub id: u64,
    /// The header's FILETIME.
    pub filetime: u64,
    /// The record's chunk (shorter than 64 KiB in a trailing partial chunk).
    pub chunk: &'a [u8],
    /// Where the record's header starts in `chunk`.
    pub offset: usize,
}

/// One top-level template instance of a record: what `dump-template-instances` prints.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Instance {
    pub template_id: u32,
    pub def_offset: u32,
    /// The inline definition's GUID (`None` when the definition is elsewhere).
    pub guid: Option<[u8; 16]>,
    /// Each value's text, as the reference's `Display` gives it (its JSON text, unquoted).
    pub values: Vec<String>,
}

/// Reads the log `input` as the reference's record iterator does, in file order, handing each
/// chunk's and record's [`Step`] to `visit` until it breaks.
pub fn read_records<S>(input: &S, mut visit: impl FnMut(Step<'_>) -> ControlFlow<()>)
where
    S: ChunkSource + ?Sized,
{
    let opts = Options {
        format: Format::Jsonl,
        threads: 1,
        // The reference's iterator reads every value of a record, used or not, as the dump
        // does with `--mta` (the tree path): an empty `.MTA` takes that path and adds no
        // rendering information.
        mta: Some(std::sync::Arc::new(crate::mta::MtaFile::default())),
        ..Options::default()
    };
    let mut window = ChunkSlot::default();
    crate::dump(input, &opts, |chunk: &ChunkResult| {
        let bytes = input.chunk(chunk.slot, &mut window);
        for r in &chunk.records {
            if let Some(step) = step(bytes, chunk, r) {
                visit(step)?;
            }
        }
        ControlFlow::Continue(())
    });
}

/// The step of entry `r` of `chunk` (its bytes `bytes`), if the reference's iterator meets it.
fn step<'a>(bytes: &'a [u8], chunk: &ChunkResult, r: &RecordResult) -> Option<Step<'a>> {
    if let Outcome::Failed(f) = &r.outcome {
        if !f.is_output_limit() {
            // A trailing partial slot is ours alone: the reference's walk ends before it.
            if chunk.partial && r.record_id.is_none() {
                return None;
            }
            let line = failure_line(chunk, r, f);
            return Some(Step::Failed {
                line,
                cause: failure_cause(bytes, chunk, r, f),
            });
        }
    }
    let record = Record {
        id: r.record_id?,
        filetime: r.filetime,
        chunk: bytes,
        offset: (r.file_offset - chunk.file_offset) as usize,
    };
    if let Some(value) = first_unreadable(&record) {
        return Some(Step::Failed {
            line: format!("Failed to parse record number {}", record.id),
            cause: value.cause(),
        });
    }
    Some(Step::Record(record))
}

/// The ANSI code page of the values' texts: the template subcommands take no `--ansi-codec`.
fn codec() -> &'static Encoding {
    Options::default().ansi_codec
}

impl Record<'_> {
    /// Chunk offsets of the record's BinXML stream (its window, cut at the chunk's end).
    fn stream(&self) -> Option<(usize, usize)> {
        let size = get_u32(self.chunk, self.offset + 4)? as usize;
        let end = (self.offset + size).saturating_sub(4).min(self.chunk.len());
        Some((self.offset + 24, end))
    }

    /// Every top-level template instance of the record's stream, in order (the module doc).
    pub fn instances(&self) -> Result<Vec<Instance>, BinXmlError> {
        let chunk = self.chunk;
        let (mut pos, end) = self
            .stream()
            .ok_or_else(|| BinXmlError::new("record out of bounds", self.offset))?;
        let cx = Source {
            chunk,
            codec: codec(),
        };
        let mut out = Vec::new();
        while pos < end {
            match chunk[pos] {
                0x00 => break,
                0x0F => pos += 4,
                0x0C => {
                    let at = pos + 1;
                    pos = at;
                    let mut slots: Vec<Slot> = Vec::new();
                    let (def_offset, _) = read_instance_values(cx, &mut pos, &mut slots)?;
                    // The inline definition's header follows the instance's (6.5).
                    let guid = (at + 9 == def_offset as usize)
                        .then(|| chunk[at + 13..at + 29].try_into().expect("16 bytes"));
                    out.push(Instance {
                        template_id: get_u32(chunk, at + 1).unwrap_or(0),
                        def_offset,
                        guid,
                        values: slots.iter().map(|s| value_text(chunk, s)).collect(),
                    });
                }
                // An element tree around instances (`synthetic/nested` record 5): its tokens
                // are stepped over; an instance anywhere in it is listed, as the reference's
                // walk does.
                t => match skip_token(chunk, pos, t) {
                    Some(next) => pos = next,
                    None => break,
                },
            }
        }
        Ok(out)
    }

    /// The values of the `index`-th top-level instance, as `apply-wevt-cache` splices them
    /// (the module doc).
    pub fn raw_values(&self, index: usize) -> Option<Vec<RawValue>> {
        let chunk = self.chunk;
        let (mut pos, end) = self.stream()?;
        let mut seen = 0;
        while pos < end {
            match chunk[pos] {
                0x0F => pos += 4,
                0x0C => {
                    let head = read_instance_head(chunk, pos + 1).ok()?;
                    let mut p = head.values();
                    let mut values = Vec::with_capacity(head.count);
                    for i in 0..head.count {
                        let (size, t) = descriptor(chunk, &head, i);
                        let bytes = chunk.get(p..p + usize::from(size))?;
                        p += usize::from(size);
                        values.push(match t {
                            ty::NULL | ty::EVT_HANDLE | ty::BINXML | ty::EVT_XML => {
                                (ty::NULL, Vec::new())
                            }
                            t => (t, bytes.to_vec()),
                        });
                    }
                    if seen == index {
                        return Some(values);
                    }
                    seen += 1;
                    pos = p;
                }
                _ => break,
            }
        }
        None
    }
}

/// The size and type of instance `head`'s `i`-th value descriptor (its table is in `chunk`).
fn descriptor(chunk: &[u8], head: &InstanceHead, i: usize) -> (u16, u8) {
    let d = &chunk[head.descriptors + 4 * i..][..4];
    (u16::from_le_bytes([d[0], d[1]]), d[2])
}

/// The offset after the record-stream token `t` at `pos` (not a template instance, end of
/// stream or fragment header), or `None` for a token this walk does not step over.
fn skip_token(chunk: &[u8], pos: usize, t: u8) -> Option<usize> {
    // A name reference (u32 chunk offset) at `at`, the name inline when it points just after.
    let name = |at: usize| -> Option<usize> {
        let off = get_u32(chunk, at)? as usize;
        if off != at + 4 {
            return Some(at + 4);
        }
        Some(off + 10 + 2 * usize::from(get_u16(chunk, off + 6)?))
    };
    // A count (u16) of UTF-16 units at `at`, and the units.
    let units = |at: usize| Some(at + 2 + 2 * usize::from(get_u16(chunk, at)?));
    match t {
        0x01 => name(pos + 5),
        0x41 => name(pos + 5).map(|p| p + 4),
        0x02..=0x04 => Some(pos + 1),
        0x05 | 0x45 if chunk.get(pos + 1) == Some(&ty::STRING) => units(pos + 2),
        0x06 | 0x46 | 0x09 | 0x49 | 0x0A => name(pos + 1),
        0x07 | 0x47 | 0x0B => units(pos + 1),
        0x08 | 0x48 => Some(pos + 3),
        _ => None,
    }
}

/// A value's text as the reference's `Display` gives it (its JSON value text: JSON string
/// escaping, unquoted; nothing for NULL and BinXML).
fn value_text(chunk: &[u8], slot: &Slot) -> String {
    use crate::escape::{write_utf16_in, Mode};
    use crate::values_format::{write_ansi, write_value, Flavor};
    let mut text = Vec::new();
    match *slot {
        Slot::Text16 { off, units } => {
            let o = off as usize;
            write_utf16_in(&mut text, chunk, o, o + 2 * units as usize, Mode::JsonUpper);
        }
        Slot::Ansi { off, len } => {
            let o = off as usize;
            write_ansi(
                &mut text,
                &chunk[o..o + len as usize],
                codec(),
                Flavor::Json,
            );
        }
        Slot::Value(v) => write_value(&mut text, chunk, &v, codec(), Flavor::Json),
        Slot::Null | Slot::BinXml { .. } | Slot::Fragment { .. } => {}
    }
    String::from_utf8_lossy(&text).into_owned()
}

/// Arrays of these types (`ty::ARRAY` set) the reference's reader cannot read either.
const BINARY_ARRAY: u8 = ty::ARRAY | ty::BINARY;
const SIZET_ARRAY: u8 = ty::ARRAY | ty::SIZET;
const EVT_HANDLE_ARRAY: u8 = ty::ARRAY | ty::EVT_HANDLE;
const EVT_XML_ARRAY: u8 = ty::ARRAY | ty::EVT_XML;

/// Value types the reference's record iterator cannot read: a record holding one fails there,
/// though the dump renders it under our rule (`shared-fixtures/README.md`,
/// `damaged/unsupported-types`).
fn is_unreadable(t: u8) -> bool {
    matches!(
        t,
        ty::EVT_HANDLE
            | ty::EVT_XML
            | BINARY_ARRAY
            | SIZET_ARRAY
            | EVT_HANDLE_ARRAY
            | EVT_XML_ARRAY
    )
}

/// A value the reference's record iterator cannot read: where its bytes start in the chunk, its
/// type, and its declared size (none for a value text).
#[derive(Debug)]
struct Unreadable {
    offset: usize,
    vtype: u8,
    size: Option<u16>,
}

impl Unreadable {
    /// The reference's cause, when it names the type (the arrays of EvtHandle and EvtXml are
    /// not types to it).
    fn cause(&self) -> Option<String> {
        let name = match self.vtype {
            ty::EVT_HANDLE => "EvtHandle",
            ty::EVT_XML => "EvtXmlType",
            BINARY_ARRAY => "BinaryArrayType",
            SIZET_ARRAY => "SizeTArrayType",
            _ => return None,
        };
        let size = self
            .size
            .map_or("None".to_string(), |s| format!("Some({s})"));
        Some(format!(
            "{STREAM}Offset {}: Value variant `{name}` (size {size}) is unimplemented",
            self.offset
        ))
    }
}

/// The first value of `record` of an unreadable type: in a template instance of its stream (and
/// those that are a whole BinXML value of one, as deep as `INSTANCE_SCAN_DEPTH_MAX`) or as a
/// value text of the stream itself.
fn first_unreadable(record: &Record<'_>) -> Option<Unreadable> {
    let chunk = record.chunk;
    let (mut pos, end) = record.stream()?;
    let cx = Source {
        chunk,
        codec: codec(),
    };
    let mut slots = Vec::new();
    while pos < end {
        match chunk[pos] {
            0x00 => break,
            0x0F => pos += 4,
            0x0C => {
                if let Some(found) = instance_unreadable(chunk, pos + 1, 0) {
                    return Some(found);
                }
                pos += 1;
                slots.clear();
                if read_instance_values(cx, &mut pos, &mut slots).is_err() {
                    break;
                }
            }
            // A value text of such a type (`damaged/unsupported-types` record 8).
            0x05 | 0x45 if chunk.get(pos + 1).is_some_and(|&t| is_unreadable(t)) => {
                return Some(Unreadable {
                    offset: pos + 2,
                    vtype: chunk[pos + 1],
                    size: None,
                });
            }
            t => match skip_token(chunk, pos, t) {
                Some(next) => pos = next,
                None => break,
            },
        }
    }
    None
}

/// [`first_unreadable`] for the instance whose header starts at `at` (after its token),
/// `depth` instances below the record's.
fn instance_unreadable(chunk: &[u8], at: usize, depth: usize) -> Option<Unreadable> {
    debug_assert!(depth <= INSTANCE_SCAN_DEPTH_MAX);
    let head = read_instance_head(chunk, at).ok()?;
    let mut value = head.values();
    for i in 0..head.count {
        let (size, t) = descriptor(chunk, &head, i);
        if is_unreadable(t) {
            return Some(Unreadable {
                offset: value,
                vtype: t,
                size: Some(size),
            });
        }
        if t == ty::BINXML && size > 0 && depth < INSTANCE_SCAN_DEPTH_MAX {
            // A BinXML value that is one whole instance, after its fragment header if any.
            let mut q = value;
            if chunk.get(q) == Some(&0x0F) {
                q += 4;
            }
            if chunk.get(q) == Some(&0x0C) {
                if let Some(found) = instance_unreadable(chunk, q + 1, depth + 1) {
                    return Some(found);
                }
            }
        }
        value += usize::from(size);
    }
    None
}

/// The chain of the reference's deserializer errors below a record's line.
const STREAM: &str = "0: An error occurred while trying to deserialize evtx stream.\n    1: ";

/// A failed record or chunk as the reference's chunk and record iterators display it (their
/// error's own text, no `Caused by:` chain).
#[cold]
fn failure_line(chunk: &ChunkResult, r: &RecordResult, f: &Failure) -> String {
    use ErrorKind as K;
    match (f.kind, r.record_id) {
        (K::BadStringTable, _) => "Failed to build string cache".to_string(),
        (
            K::IncompleteChunk
            | K::BadChunkMagic
            | K::BadChunkHeaderChecksum
            | K::BadChunkFreeSpaceOffset
            | K::BadChunkRecordsChecksum,
            _,
        ) => format!("Failed to parse chunk number {}", r.chunk_slot),
        (K::BadBinxml, Some(id)) => format!("Failed to parse record number {id}"),
        _ => {
            let offset = r.file_offset - chunk.file_offset;
            format!(
                "Failed to read the record at offset {offset:#x} of chunk {} (file offset {:#x})",
                r.chunk_slot, r.file_offset
            )
        }
    }
}

/// The `Caused by:` text below [`failure_line`] where the bytes tell it: the engine's
/// [`Cause`] (a chunk's string table, a record's BinXML), else the header field that failed
/// (a record header's magic, size or timestamp, a chunk's magic). Other failures have none
/// (`shared-fixtures/README.md`).
#[cold]
fn failure_cause(
    chunk_bytes: &[u8],
    chunk: &ChunkResult,
    r: &RecordResult,
    f: &Failure,
) -> Option<String> {
    use ErrorKind as K;
    let rec = (r.file_offset - chunk.file_offset) as usize;
    let field = |at: usize, n: usize| chunk_bytes.get(at..at + n);
    match f.kind {
        _ if f.cause.is_some() => f.cause.and_then(|c| cause_text(c, chunk_bytes)),
        K::BadRecordMagic => field(rec, 4).map(|m| {
            format!(
                "{STREAM}Invalid EVTX record header magic, expected `2a2a0000`, found `{}`",
                magic_text(m)
            )
        }),
        K::BadRecordSize => get_u32(chunk_bytes, rec + 4)
            .filter(|size| *size < 28)
            .map(|size| {
                format!(
                    "Invalid EVTX record data size, should be equals or greater than 28, \
                     found `{size}`"
                )
            }),
        K::BadRecordTimestamp => field(rec + 16, 8).map(|t| {
            let t = u64::from_le_bytes(t.try_into().expect("8 bytes"));
            format!("{STREAM}The record header's timestamp (FILETIME {t:#018x}) is out of range")
        }),
        K::BadChunkMagic => field(0, 8).map(|m| {
            format!(
                "0: Failed to parse chunk header\n    1: Invalid EVTX chunk header magic, \
                 expected `ElfChnk0`, found `{}`",
                magic_text(m)
            )
        }),
        _ => None,
    }
}

/// The reference's words for an engine's `cause` in `chunk` (a string table's are the chunk's
/// own, a record's BinXML's come below [`STREAM`]).
#[cold]
fn cause_text(cause: Cause, chunk: &[u8]) -> Option<String> {
    use CauseKind as C;
    let (at, len) = (cause.offset, chunk.len());
    let past =
        |what: &str| format!("{what} at offset {at} is past the end of the data ({len} bytes)");
    Some(match cause.kind {
        C::TableStartPastEnd => past("cursor.position"),
        C::TableLinkPastEnd => past("next xml string"),
        C::TableNameInvalid => format!("name at offset {at}: invalid data"),
        C::InvalidToken => {
            // The byte before the reference's cursor.
            let token = chunk.get((at as usize).checked_sub(1)?)?;
            format!(
                "{STREAM}Offset {at:#010x}: Tried to read an invalid byte `{token:#04x}` as \
                 binxml token"
            )
        }
        C::NamePastEnd => format!("{STREAM}{}", past("cursor.position")),
        C::EmptyDefinition => "Failed to create record model, reason: empty BinXML slice".into(),
        C::DefinitionPastEnd => {
            "Failed to create record model, reason: template data out of bounds".into()
        }
        // A TEMP's, not a chunk's (`wevt_cache::temp_error`).
        C::InvalidValueType
        | C::NameHashMismatch
        | C::NameWithoutNul
        | C::Truncated { .. }
        | C::Model(_) => return None,
    })
}

/// Magic bytes as the reference's `{:2X?}` shows them: `[ 0, 6E, 2A,  0]`.
fn magic_text(bytes: &[u8]) -> String {
    let items: Vec<String> = bytes.iter().map(|b| format!("{b:>2X}")).collect();
    format!("[{}]", items.join(", "))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The first chunk of a committed fixture.
    fn first_chunk(name: &str) -> Vec<u8> {
        let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("../../shared-fixtures")
            .join(name);
        let bytes = std::fs::read(path).expect("the fixture is committed");
        bytes[4096..4096 + 65536].to_vec()
    }

    #[test]
    fn unreadable_values_have_the_reference_causes() {
        let chunk = first_chunk("damaged/unsupported-types.evtx");
        let at = |offset| Record {
            id: 0,
            filetime: 0,
            chunk: &chunk,
            offset,
        };
        // The reference's causes for records 2 (at chunk offset 794, an EvtHandle of 4 bytes)
        // and 8 (at 2185, an EvtXml value text).
        let cause = |rec| first_unreadable(&at(rec)).and_then(|u| u.cause());
        assert_eq!(
            cause(794).as_deref(),
            Some(
                "0: An error occurred while trying to deserialize evtx stream.\n    \
                 1: Offset 1073: Value variant `EvtHandle` (size Some(4)) is unimplemented"
            )
        );
        assert!(cause(2185)
            .unwrap()
            .ends_with("1: Offset 2249: Value variant `EvtXmlType` (size None) is unimplemented"));
        // Record 1 (the first of the chunk) holds no such value.
        assert!(first_unreadable(&at(512)).is_none());
    }

    #[test]
    fn a_record_instance_as_the_reference_lists_it() {
        let chunk = first_chunk("wevt/instances.evtx");
        let record = Record {
            id: 1,
            filetime: 0,
            chunk: &chunk,
            offset: 512,
        };
        // The reference: "template_id":1596729923,"template_def_offset":550, its GUID
        // 5F2C2A43-AA86-2481-02F3-ECE817383695, 11 substitutions.
        let instances = record.instances().unwrap();
        assert_eq!(instances.len(), 1);
        let inst = &instances[0];
        assert_eq!((inst.template_id, inst.def_offset), (1596729923, 550));
        let mut guid = Vec::new();
        crate::values_format::write_guid_upper(&mut guid, &inst.guid.unwrap());
        assert_eq!(guid, b"5F2C2A43-AA86-2481-02F3-ECE817383695");
        assert_eq!(inst.values.len(), 11);
        // The same instance's values for `apply-wevt-cache`, and no second instance.
        assert_eq!(record.raw_values(0).map(|v| v.len()), Some(11));
        assert!(record.raw_values(1).is_none());
    }

    #[test]
    fn magic_bytes_as_the_reference_shows_them() {
        // From the reference's record header magic error on a sample.
        assert_eq!(magic_text(&[0, 0x6E, 0, 0x64]), "[ 0, 6E,  0, 64]");
        assert_eq!(magic_text(&[0x3D, 0x13, 0x6A, 0]), "[3D, 13, 6A,  0]");
    }
}
