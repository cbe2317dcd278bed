//! The template subcommands of `evtx_dump` 0.15.1: `extract-wevt-templates`,
//! `dump-template-instances`, `apply-wevt-cache` (texts, options and exit statuses:
//! `shared-fixtures/generator/wevt-format.md`).

use crate::{fatal, help};
use clap::{ArgAction, Args};
use std::collections::{HashSet, VecDeque};
use std::fs;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

/// `extract-wevt-templates`' options (the reference's; texts in `help`).
#[derive(Debug, Args)]
#[command(about = help::EXTRACT_ABOUT, long_about = help::EXTRACT_LONG_ABOUT)]
#[group(skip)]
pub struct ExtractArgs {
    #[arg(
        short = 'i',
        long = "input",
        value_name = "PATH",
        action = ArgAction::Append,
        help = help::EXTRACT_INPUT
    )]
    input: Vec<String>,
    #[arg(
        long = "glob",
        value_name = "PATTERN",
        action = ArgAction::Append,
        help = help::EXTRACT_GLOB
    )]
    glob: Vec<String>,
    #[arg(short = 'r', long = "recursive", help = help::EXTRACT_RECURSIVE)]
    recursive: bool,
    #[arg(
        long = "extensions",
        value_name = "EXTS",
        default_value = "exe,dll,sys",
        help = help::EXTRACT_EXTENSIONS
    )]
    extensions: String,
    #[arg(
        short = 'o',
        long = "output",
        value_name = "WEVTCACHE",
        required = true,
        help = help::EXTRACT_OUTPUT
    )]
    output: String,
    #[arg(long = "overwrite", help = help::EXTRACT_OVERWRITE)]
    overwrite: bool,
}

/// `dump-template-instances`' options (the reference's; texts in `help`).
#[derive(Debug, Args)]
#[command(about = help::DUMP_ABOUT, long_about = help::DUMP_LONG_ABOUT)]
#[group(skip)]
pub struct DumpArgs {
    #[arg(
        short = 'i',
        long = "input",
        value_name = "EVTX",
        required = true,
        help = help::EVTX_INPUT
    )]
    input: String,
    #[arg(long = "record-id", value_name = "ID", help = help::DUMP_RECORD_ID)]
    record_id: Option<u64>,
    #[arg(
        long = "template-instance-index",
        value_name = "N",
        default_value_t = 0,
        help = help::DUMP_TEMPLATE_INSTANCE_INDEX
    )]
    template_instance_index: usize,
}

/// `apply-wevt-cache`'s options (the reference's; texts in `help`).
#[derive(Debug, Args)]
#[command(about = help::APPLY_ABOUT, long_about = help::APPLY_LONG_ABOUT)]
#[group(skip)]
pub struct ApplyArgs {
    #[arg(long = "cache", value_name = "PATH", required = true, help = help::APPLY_CACHE)]
    cache: String,
    #[arg(long = "template-guid", value_name = "GUID", help = help::APPLY_TEMPLATE_GUID)]
    template_guid: Option<String>,
    #[arg(long = "provider-guid", value_name = "GUID", help = help::APPLY_PROVIDER_GUID)]
    provider_guid: Option<String>,
    #[arg(long = "event-id", value_name = "ID", help = help::APPLY_EVENT_ID)]
    event_id: Option<u16>,
    #[arg(long = "version", value_name = "V", help = help::APPLY_VERSION)]
    version: Option<u8>,
    #[arg(long = "evtx", value_name = "PATH", help = help::APPLY_EVTX)]
    evtx: Option<String>,
    #[arg(long = "record-id", value_name = "ID", help = help::APPLY_RECORD_ID)]
    record_id: Option<u64>,
    #[arg(
        long = "template-instance-index",
        value_name = "N",
        default_value_t = 0,
        help = help::APPLY_TEMPLATE_INSTANCE_INDEX
    )]
    template_instance_index: usize,
    #[arg(long = "substitutions", value_name = "JSON", help = help::APPLY_SUBSTITUTIONS)]
    substitutions: Option<String>,
    #[arg(
        long = "substitutions-file",
        value_name = "PATH",
        help = help::APPLY_SUBSTITUTIONS_FILE
    )]
    substitutions_file: Option<String>,
    #[arg(short = 'o', long = "output", value_name = "PATH", help = help::APPLY_OUTPUT)]
    output: Option<String>,
}

// ---------------------------------------------------------------------------------------------
// extract-wevt-templates

/// `extract-wevt-templates`: every input's `WEVT_TEMPLATE` blobs into one `.wevtcache`.
pub fn extract(args: &ExtractArgs) -> ExitCode {
    let output = PathBuf::from(&args.output);
    if output.extension().and_then(|s| s.to_str()) != Some("wevtcache") {
        return fatal("output must have `.wevtcache` extension");
    }
    let allowed: HashSet<String> = args
        .extensions
        .split(',')
        .map(|s| s.trim().trim_start_matches('.').to_ascii_lowercase())
        .filter(|s| !s.is_empty())
        .collect();
    let mut inputs: Vec<PathBuf> = args.input.iter().map(PathBuf::from).collect();
    for pattern in &args.glob {
        let paths = match glob::glob(pattern) {
            Ok(paths) => paths,
            Err(e) => {
                return fatal(format!(
                    "invalid glob pattern `{pattern}`\n\nCaused by:\n    {e}"
                ))
            }
        };
        for entry in paths {
            match entry {
                Ok(p) => inputs.push(p),
                Err(e) => eprintln!("glob entry error: {e}"),
            }
        }
    }
    if inputs.is_empty() {
        return fatal("No inputs provided. Use --input and/or --glob.");
    }
    let mut files = Vec::new();
    let mut seen = HashSet::new();
    for input in &inputs {
        if let Err(e) = collect(input, args.recursive, &allowed, &mut seen, &mut files) {
            return fatal(e);
        }
    }
    files.sort();
    match write(&files, &output, args.overwrite) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => fatal(e),
    }
}

/// Writes the cache at `output` from `files`, one stderr line per file that gives no blobs
/// (Zig `write`).
fn write(files: &[PathBuf], output: &Path, overwrite: bool) -> Result<(), String> {
    if output.exists() && !overwrite {
        return Err(format!(
            "refusing to overwrite existing output file `{}` (pass overwrite=true)",
            output.display()
        ));
    }
    let io_error = |what: &str, e: std::io::Error| {
        format!(
            "I/O error while {what} `{}`: {e}\n\nCaused by:\n    {e}",
            output.display()
        )
    };
    let mut cache = fs::File::create(output).map_err(|e| io_error("create", e))?;
    let mut blobs: Vec<Vec<u8>> = Vec::new();
    let mut errors = 0usize;
    for path in files {
        let bytes = match fs::read(path) {
            Ok(b) => b,
            Err(e) => {
                errors += 1;
                eprintln!("failed to read `{}`: {e}", path.to_string_lossy());
                continue;
            }
        };
        match evtx_core::pe::wevt_template_resources(&bytes) {
            Ok(found) => blobs.extend(found.into_iter().map(<[u8]>::to_vec)),
            Err(e) => {
                // The reference's `failed to extract WEVT_TEMPLATE from ...` line, with the
                // offset (shared-fixtures/README.md, "Damaged side files"); the next file goes on.
                errors += 1;
                eprintln!("{}", e.reader_error().line(&path.to_string_lossy()));
            }
        }
    }
    let mut bytes = b"WEVTCACH".to_vec();
    bytes.extend(1u32.to_le_bytes());
    bytes.extend((blobs.len() as u32).to_le_bytes());
    for b in &blobs {
        bytes.push(1);
        bytes.extend((b.len() as u64).to_le_bytes());
        bytes.extend(b);
    }
    cache
        .write_all(&bytes)
        .and_then(|()| cache.flush())
        .map_err(|e| io_error("write entry payload", e))?;
    if errors > 0 {
        return Err(format!(
            "extract-wevt-templates completed with {errors} error(s)"
        ));
    }
    eprintln!(
        "wrote {} resource blob(s) to `{}`",
        blobs.len(),
        output.display()
    );
    Ok(())
}

/// The reference's input expansion: files as they are, directories only with `-r` (breadth
/// first, by extension), each path once.
fn collect(
    input: &Path,
    recursive: bool,
    allowed: &HashSet<String>,
    seen: &mut HashSet<PathBuf>,
    out: &mut Vec<PathBuf>,
) -> Result<(), String> {
    if !input.exists() {
        return Ok(());
    }
    if input.is_file() {
        if seen.insert(input.to_path_buf()) {
            out.push(input.to_path_buf());
        }
        return Ok(());
    }
    if !input.is_dir() || !recursive {
        return Ok(());
    }
    let mut queue = VecDeque::from([input.to_path_buf()]);
    while let Some(dir) = queue.pop_front() {
        let entries = fs::read_dir(&dir).map_err(|e| {
            format!(
                "failed to read directory `{}`\n\nCaused by:\n    {e}",
                dir.display()
            )
        })?;
        for entry in entries {
            let p = entry.map_err(|e| e.to_string())?.path();
            if p.is_dir() {
                queue.push_back(p);
            } else if p.is_file() && keep(&p, allowed) && seen.insert(p.clone()) {
                out.push(p);
            }
        }
    }
    Ok(())
}

fn keep(path: &Path, allowed: &HashSet<String>) -> bool {
    path.extension()
        .and_then(|s| s.to_str())
        .is_some_and(|e| allowed.contains(&e.to_ascii_lowercase()))
}

// ---------------------------------------------------------------------------------------------
// dump-template-instances and apply-wevt-cache

/// One top-level template instance of a record: what `dump-template-instances` prints.
struct Instance {
    template_id: u32,
    def_offset: u32,
    /// The inline definition's GUID (`None` when the definition is elsewhere).
    guid: Option<[u8; 16]>,
    /// Each value's text (the reference's JSON value text).
    values: Vec<String>,
}

/// The record `rec` of `chunk` (offset within the chunk)'s top-level template instances,
/// walking its BinXML window as the reference's `template_instances` does.
fn record_instances(chunk: &[u8], rec: usize) -> Result<Vec<Instance>, String> {
    use evtx_core::tokens::{read_instance_values, Source};
    use evtx_core::values_decode::Slot;
    let size = le32(chunk, rec + 4).ok_or("record out of bounds")? as usize;
    let (start, end) = (rec + 24, (rec + size).saturating_sub(4).min(chunk.len()));
    let cx = Source {
        chunk,
        codec: evtx_core::Options::default().ansi_codec,
    };
    let mut out = Vec::new();
    let mut pos = start;
    while pos < end {
        match chunk[pos] {
            0x00 => break,
            0x0F => pos += 4,
            0x0C => {
                let at = pos + 1;
                pos = at;
                let mut slots: Vec<Slot> = Vec::new();
                let (def_offset, _) =
                    read_instance_values(cx, &mut pos, &mut slots).map_err(|e| format!("{e:?}"))?;
                let template_id = le32(chunk, at + 1).unwrap_or(0);
                let guid = (at + 9 == def_offset as usize)
                    .then(|| chunk[at + 13..at + 29].try_into().expect("16 bytes"));
                let values = slots
                    .iter()
                    .map(|slot| {
                        let mut text = Vec::new();
                        slot_text(&mut text, chunk, slot, cx.codec);
                        String::from_utf8_lossy(&text).into_owned()
                    })
                    .collect();
                out.push(Instance {
                    template_id,
                    def_offset,
                    guid,
                    values,
                });
            }
            // An element tree around instances (`synthetic/nested` record 5): its tokens are
            // stepped over; an instance anywhere in it is listed, as the reference's walk does.
            t => match skip_token(chunk, pos, t) {
                Some(next) => pos = next,
                None => break,
            },
        }
    }
    Ok(out)
}

/// The offset after the record-stream token `t` at `pos` (not a template instance, EOF or
/// fragment header), or `None` for a token this walk does not step over.
fn skip_token(chunk: &[u8], pos: usize, t: u8) -> Option<usize> {
    // A name reference (u32 chunk offset) at `at`, the name inline when it points just after.
    let name = |at: usize| -> Option<usize> {
        let off = le32(chunk, at)? as usize;
        if off != at + 4 {
            return Some(at + 4);
        }
        let count = usize::from(u16::from_le_bytes(
            chunk.get(off + 6..off + 8)?.try_into().ok()?,
        ));
        Some(off + 10 + 2 * count)
    };
    let units = |at: usize| -> Option<usize> {
        let count = u16::from_le_bytes(chunk.get(at..at + 2)?.try_into().ok()?);
        Some(at + 2 + 2 * usize::from(count))
    };
    match t {
        0x01 => name(pos + 5),
        0x41 => name(pos + 5).map(|p| p + 4),
        0x02..=0x04 => Some(pos + 1),
        0x05 | 0x45 if chunk.get(pos + 1) == Some(&0x01) => units(pos + 2),
        0x06 | 0x46 | 0x09 | 0x49 | 0x0A => name(pos + 1),
        0x07 | 0x47 | 0x0B => units(pos + 1),
        0x08 | 0x48 => Some(pos + 3),
        _ => None,
    }
}

/// Value types the reference's record iterator cannot read (EvtHandle, EvtXml, Binary and SizeT
/// arrays, and the arrays of the first two): a record holding one fails there, though the dump
/// renders it under our rule (`shared-fixtures/README.md`, `damaged/unsupported-types`).
const UNREADABLE_TYPES: [u8; 6] = [0x20, 0x23, 0x8E, 0x90, 0xA0, 0xA3];

/// A value the reference's record iterator cannot read: where its bytes start in the chunk, its
/// type, and its declared size (none for a value text).
struct Unreadable {
    offset: usize,
    vtype: u8,
    size: Option<u16>,
}

impl Unreadable {
    /// The reference's cause, when it names the type (0xA0 and 0xA3 are not types to it).
    fn cause(&self) -> Option<String> {
        let name = match self.vtype {
            0x20 => "EvtHandle",
            0x23 => "EvtXmlType",
            0x8E => "BinaryArrayType",
            0x90 => "SizeTArrayType",
            _ => return None,
        };
        let size = self
            .size
            .map_or("None".to_string(), |s| format!("Some({s})"));
        Some(format!(
            "0: An error occurred while trying to deserialize evtx stream.\n    \
             1: Offset {}: Value variant `{name}` (size {size}) is unimplemented",
            self.offset
        ))
    }
}

/// The first value of record `rec` of an unreadable type: in a template instance of its stream
/// (and those that are a whole BinXML value of one, as deep as [`MAX_SCAN_DEPTH`]) or as a
/// value text of the stream itself.
fn first_unreadable(chunk: &[u8], rec: usize) -> Option<Unreadable> {
    let size = le32(chunk, rec + 4)?;
    let end = (rec + size as usize).saturating_sub(4).min(chunk.len());
    let cx = evtx_core::tokens::Source {
        chunk,
        codec: evtx_core::Options::default().ansi_codec,
    };
    let mut pos = rec + 24;
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
                if evtx_core::tokens::read_instance_values(cx, &mut pos, &mut slots).is_err() {
                    break;
                }
            }
            // A value text of such a type (`damaged/unsupported-types` record 8).
            0x05 | 0x45
                if chunk
                    .get(pos + 1)
                    .is_some_and(|t| UNREADABLE_TYPES.contains(t)) =>
            {
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

/// Whether record `rec` has a value of an unreadable type ([`first_unreadable`]).
fn has_unreadable_value(chunk: &[u8], rec: usize) -> bool {
    first_unreadable(chunk, rec).is_some()
}

/// How deep [`first_unreadable`] follows nested instances.
const MAX_SCAN_DEPTH: usize = 8;

/// [`first_unreadable`] for the instance whose header starts at `at` (after 0x0C).
fn instance_unreadable(chunk: &[u8], at: usize, depth: usize) -> Option<Unreadable> {
    let def = le32(chunk, at + 5)?;
    let mut p = at + 9;
    if p == def as usize {
        p = p.saturating_add(24 + le32(chunk, p + 20)? as usize);
    }
    let n = le32(chunk, p)?;
    let table = p + 4;
    let descriptors = table
        .checked_add(4 * n as usize)
        .and_then(|e| chunk.get(table..e))?;
    let mut value = table + descriptors.len();
    for d in descriptors.chunks_exact(4) {
        let size = u16::from_le_bytes([d[0], d[1]]);
        if UNREADABLE_TYPES.contains(&d[2]) {
            return Some(Unreadable {
                offset: value,
                vtype: d[2],
                size: Some(size),
            });
        }
        if d[2] == 0x21 && size > 0 && depth < MAX_SCAN_DEPTH {
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

fn le32(b: &[u8], at: usize) -> Option<u32> {
    Some(u32::from_le_bytes(
        b.get(at..at.checked_add(4)?)?.try_into().ok()?,
    ))
}

/// A value's text as the reference's `Display` gives it (its JSON value text: JSON string
/// escaping, lists joined by commas; nothing for NULL and BinXML).
fn slot_text(
    out: &mut Vec<u8>,
    chunk: &[u8],
    slot: &evtx_core::values_decode::Slot,
    codec: &'static evtx_core::Encoding,
) {
    use evtx_core::values_decode::Slot;
    use evtx_core::values_format::{write_ansi, write_value, Flavor};
    match *slot {
        Slot::Text16 { off, units } => {
            let o = off as usize;
            evtx_core::escape::write_utf16_in(
                out,
                chunk,
                o,
                o + 2 * units as usize,
                evtx_core::escape::Mode::JsonUpper,
            )
        }
        Slot::Ansi { off, len } => {
            let o = off as usize;
            write_ansi(out, &chunk[o..o + len as usize], codec, Flavor::Json)
        }
        Slot::Value(v) => write_value(out, chunk, &v, codec, Flavor::Json),
        Slot::Null | Slot::BinXml { .. } | Slot::Fragment { .. } => {}
    }
}

/// A GUID as the reference's `Guid` displays it: upper case, no braces.
fn guid_upper(b: &[u8; 16]) -> String {
    let mut text = Vec::new();
    evtx_core::values_format::write_guid(&mut text, b);
    String::from_utf8_lossy(&text)
        .trim_matches(|c| c == '{' || c == '}')
        .to_ascii_uppercase()
}

/// A record FILETIME as the reference's timestamp displays it: RFC 3339 in UTC, the fraction
/// without trailing zeros (none when zero).
fn timestamp(ft: u64) -> String {
    let mut text = Vec::new();
    evtx_core::values_format::write_filetime(&mut text, ft);
    let t = String::from_utf8_lossy(&text).into_owned();
    match t.split_once('.') {
        Some((secs, frac)) => {
            let digits = frac.trim_end_matches('Z').trim_end_matches('0');
            if digits.is_empty() {
                format!("{secs}Z")
            } else {
                format!("{secs}.{digits}Z")
            }
        }
        None => t,
    }
}

/// A failed record or chunk as the reference's chunk and record iterators display it (their
/// error's own text, no `Caused by:` chain).
#[cold]
fn failure_line(
    chunk: &evtx_core::ChunkResult,
    r: &evtx_core::RecordResult,
    f: &evtx_core::Failure,
) -> String {
    use evtx_core::ErrorKind as K;
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

/// `dump-template-instances`: one JSON line per record holding the selected instance.
pub fn dump_instances(args: &DumpArgs) -> ExitCode {
    use evtx_core::{ChunkSource, Outcome};
    let input = match crate::open_input::open_path(&args.input, None) {
        Ok(i) => i,
        Err(e) => return fatal(e),
    };
    let opts = evtx_core::Options {
        format: evtx_core::Format::Jsonl,
        threads: 1,
        // The reference's record iterator reads every value of a record, used or not, as its
        // dump does with `--mta` (the tree path): an empty `.MTA` takes that path and adds
        // no rendering information.
        mta: Some(std::sync::Arc::new(evtx_core::mta::MtaFile::default())),
        ..evtx_core::Options::default()
    };
    let mut out = std::io::stdout().lock();
    let mut window = evtx_core::ChunkSlot::default();
    let mut result: Result<(), String> = Ok(());
    evtx_core::dump(&input, &opts, |chunk: &evtx_core::ChunkResult| {
        let bytes = input.chunk(chunk.slot, &mut window);
        for r in &chunk.records {
            if let Outcome::Failed(f) = &r.outcome {
                if !f.is_output_limit() {
                    // A trailing partial slot is ours alone: the reference's walk ends before it.
                    if !(chunk.partial && r.record_id.is_none()) {
                        eprintln!("{}", failure_line(chunk, r, f));
                    }
                    continue;
                }
            }
            let Some(id) = r.record_id else {
                continue;
            };
            let rec = (r.file_offset - chunk.file_offset) as usize;
            if has_unreadable_value(bytes, rec) {
                eprintln!("Failed to parse record number {id}");
                continue;
            }
            if args.record_id.is_some_and(|want| want != id) {
                continue;
            }
            match print_instance(&mut out, args, bytes, rec, id, r.filetime) {
                // A record without the selected instance prints nothing, and the search goes on.
                Ok(false) => continue,
                Ok(true) => {}
                Err(e) => {
                    result = e.map_or(Ok(()), Err);
                    return std::ops::ControlFlow::Break(());
                }
            }
            if args.record_id.is_some() {
                return std::ops::ControlFlow::Break(());
            }
        }
        std::ops::ControlFlow::Continue(())
    });
    let _ = out.flush();
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => fatal(e),
    }
}

/// The selected instance of record `rec` as one line, when the record has it (Zig
/// `printInstance`). Fails with the error that ends the dump, or none when stdout is closed.
fn print_instance(
    out: &mut impl Write,
    args: &DumpArgs,
    chunk: &[u8],
    rec: usize,
    id: u64,
    filetime: u64,
) -> Result<bool, Option<String>> {
    let instances = record_instances(chunk, rec).map_err(Some)?;
    let Some(t) = instances.get(args.template_instance_index) else {
        return Ok(false);
    };
    let json = |s: &str| serde_json::to_string(s).expect("a string serializes");
    let subs: Vec<String> = t.values.iter().map(|v| json(v)).collect();
    let line = format!(
        "{{\"source\":{},\"record_id\":{id},\"timestamp\":{},\
         \"template_instance_index\":{},\"template_id\":{},\
         \"template_def_offset\":{},\"template_guid\":{},\"substitutions\":[{}]}}",
        json(&args.input),
        json(&timestamp(filetime)),
        args.template_instance_index,
        t.template_id,
        t.def_offset,
        t.guid.map_or("null".to_string(), |g| json(&guid_upper(&g))),
        subs.join(","),
    );
    writeln!(out, "{line}").map_err(|_| None)?;
    Ok(true)
}

/// The reference's `normalize_guid`: trimmed, braces stripped, lower case.
fn normalize_guid(s: &str) -> String {
    s.trim()
        .trim_start_matches('{')
        .trim_end_matches('}')
        .to_ascii_lowercase()
}

/// A template GUID's normalized text.
fn guid_lower(b: &[u8; 16]) -> String {
    guid_upper(b).to_ascii_lowercase()
}

/// An error with its cause, as anyhow prints a context over an error.
fn caused(context: impl std::fmt::Display, cause: impl std::fmt::Display) -> String {
    format!("{context}\n\nCaused by:\n    {cause}")
}

/// JSON substitution values as the reference converts them: null, bool, integer (i64, else
/// u64), float, string; anything else as its JSON text.
fn json_values(v: &serde_json::Value) -> Result<Vec<evtx_core::wevt_cache::RawValue>, String> {
    use evtx_core::values_decode::ty;
    use serde_json::Value as J;
    let Some(items) = v.as_array() else {
        return Err("substitutions JSON must be an array".to_string());
    };
    let text = |s: &str| -> evtx_core::wevt_cache::RawValue {
        let bytes = s.encode_utf16().flat_map(u16::to_le_bytes).collect();
        (ty::STRING, bytes)
    };
    Ok(items
        .iter()
        .map(|v| match v {
            J::Null => (ty::NULL, Vec::new()),
            J::Bool(b) => (ty::BOOL, u32::from(*b).to_le_bytes().to_vec()),
            J::Number(n) => {
                if let Some(i) = n.as_i64() {
                    (ty::I64, i.to_le_bytes().to_vec())
                } else if let Some(u) = n.as_u64() {
                    (ty::U64, u.to_le_bytes().to_vec())
                } else if let Some(f) = n.as_f64() {
                    (ty::F64, f.to_le_bytes().to_vec())
                } else {
                    (ty::NULL, Vec::new())
                }
            }
            J::String(s) => text(s),
            other => text(&other.to_string()),
        })
        .collect())
}

/// The raw values of the `index`-th top-level instance of the record at `rec` in `chunk`;
/// BinXML, handles and EvtXml become NULL (the reference does not splice them here).
fn record_raw_values(
    chunk: &[u8],
    rec: usize,
    index: usize,
) -> Option<Vec<evtx_core::wevt_cache::RawValue>> {
    use evtx_core::values_decode::ty;
    let size = le32(chunk, rec + 4)? as usize;
    let end = (rec + size).saturating_sub(4).min(chunk.len());
    let mut pos = rec + 24;
    let mut seen = 0;
    while pos < end {
        match chunk[pos] {
            0x0F => pos += 4,
            0x0C => {
                let at = pos + 1;
                let def = le32(chunk, at + 5)? as usize;
                let mut p = at + 9;
                if p == def {
                    p += 24 + le32(chunk, p + 20)? as usize;
                }
                let n = le32(chunk, p)? as usize;
                p += 4;
                let table = chunk.get(p..p.checked_add(n.checked_mul(4)?)?)?;
                p += 4 * n;
                let mut values = Vec::with_capacity(n);
                for d in table.chunks_exact(4) {
                    let len = usize::from(u16::from_le_bytes([d[0], d[1]]));
                    let bytes = chunk.get(p..p + len)?;
                    p += len;
                    values.push(match d[2] {
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

/// `apply-wevt-cache`: one cached template rendered with JSON values or a record's values.
/// A damaged cache gives the one line of `--wevt-cache` for the same file (shared-fixtures/
/// README.md, "Damaged side files"), before anything else is read, as the reference stops.
pub fn apply(args: &ApplyArgs) -> ExitCode {
    let cache = match CacheTemplates::load(Path::new(&args.cache)) {
        Ok(cache) => cache,
        Err(e) => {
            return match e.reader_error() {
                Some(damage) => crate::side_file_error(Path::new(&args.cache), &damage),
                None => fatal(e),
            }
        }
    };
    match apply_inner(args, &cache) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => fatal(e),
    }
}

/// The CRIM blobs of a cache and their indexed templates (blob index, template).
struct CacheTemplates {
    blobs: Vec<Vec<u8>>,
    temps: Vec<(usize, evtx_core::wevt_cache::TempRef)>,
}

impl CacheTemplates {
    /// Every blob is read before any is parsed, in the reference's order: a container fault
    /// after a damaged manifest is the one reported.
    fn load(path: &Path) -> Result<CacheTemplates, evtx_core::wevt_cache::Diagnostic> {
        use evtx_core::wevt_cache::{parse_crim, read_blobs, Diagnostic};
        let mut read = Vec::new();
        read_blobs(path, |at, b| {
            read.push((at, b));
            Ok(())
        })?;
        let mut cache = CacheTemplates {
            blobs: Vec::with_capacity(read.len()),
            temps: Vec::new(),
        };
        for (i, (at, b)) in read.into_iter().enumerate() {
            let found = parse_crim(&b).map_err(|error| Diagnostic::Crim { error, blob: at })?;
            cache
                .temps
                .extend(found.into_iter().filter(|t| t.indexed).map(|t| (i, t)));
            cache.blobs.push(b);
        }
        Ok(cache)
    }
}

fn apply_inner(args: &ApplyArgs, cache: &CacheTemplates) -> Result<(), String> {
    let cache_path = PathBuf::from(&args.cache);
    let (blobs, temps) = (&cache.blobs, &cache.temps);
    let evtx = args.evtx.as_ref().zip(args.record_id);
    let json = if evtx.is_some() {
        None
    } else if let Some(s) = &args.substitutions {
        Some(
            serde_json::from_str::<serde_json::Value>(s)
                .map_err(|e| caused("failed to parse --substitutions as JSON", e))?,
        )
    } else if let Some(p) = &args.substitutions_file {
        let text = fs::read_to_string(p)
            .map_err(|e| caused(format!("failed to read substitutions file `{p}`"), e))?;
        Some(
            serde_json::from_str::<serde_json::Value>(&text)
                .map_err(|e| caused("failed to parse substitutions file as JSON", e))?,
        )
    } else {
        None
    };
    if evtx.is_none() && json.is_none() {
        return Err("Must provide substitutions via --evtx+--record-id or \
                    --substitutions/--substitutions-file"
            .to_string());
    }
    let guid = if let Some(g) = &args.template_guid {
        normalize_guid(g)
    } else if let (Some(p), Some(id), Some(v)) = (&args.provider_guid, args.event_id, args.version)
    {
        // Event definitions (EVNT) are not read (wevt-format.md): no event maps to a template.
        return Err(format!(
            "no template_guid found in cache index for provider_guid={p} event_id={id} \
             version={v}"
        ));
    } else {
        return Err(
            "Must provide either --template-guid or (--provider-guid, --event-id, --version)"
                .to_string(),
        );
    };
    let Some((blob, temp)) = temps.iter().find(|(_, t)| guid_lower(&t.guid) == guid) else {
        return Err(format!(
            "template GUID `{guid}` not found in cache `{}`",
            cache_path.display()
        ));
    };
    let temp_bytes = &blobs[*blob][temp.offset..temp.offset + temp.binxml_end];
    let values = match (evtx, json) {
        (Some((path, id)), _) => values_from_record(path, id, args.template_instance_index)?,
        (None, Some(json)) => json_values(&json)?,
        (None, None) => unreachable!("checked above"),
    };
    let codec = evtx_core::Options::default().ansi_codec;
    let xml =
        evtx_core::wevt_cache::render_with_values(temp_bytes, &values, codec).map_err(|cause| {
            let binxml = &temp_bytes[evtx_core::wevt_cache::TEMP_HEADER_SIZE..];
            cause
                .and_then(|c| temp_error(c, binxml))
                .unwrap_or_else(|| "failed to render the template".to_string())
        })?;
    if let Some(out) = &args.output {
        fs::write(out, &xml).map_err(|e| caused(format!("failed to write output `{out}`"), e))?;
    } else {
        let mut out = std::io::stdout().lock();
        let _ = out.write_all(&xml).and_then(|()| out.flush());
    }
    Ok(())
}

/// The values of record `id`'s `index`-th instance in the log at `path` (the first record
/// with that id). The search reads the log as `dump-template-instances` does, and the first
/// failure before the record ends it, as the reference's `?` on each chunk and record does:
/// `Error:` with the failure's line and, where it can be told from the bytes, its cause.
fn values_from_record(
    path: &str,
    id: u64,
    index: usize,
) -> Result<Vec<evtx_core::wevt_cache::RawValue>, String> {
    use evtx_core::{ChunkSource, Outcome};
    let input = crate::open_input::open_path(path, None)?;
    let opts = evtx_core::Options {
        format: evtx_core::Format::Jsonl,
        threads: 1,
        // The tree path, as `dump_instances` reads records (see there).
        mta: Some(std::sync::Arc::new(evtx_core::mta::MtaFile::default())),
        ..evtx_core::Options::default()
    };
    let mut window = evtx_core::ChunkSlot::default();
    let mut found: Option<Result<Vec<_>, String>> = None;
    evtx_core::dump(&input, &opts, |chunk: &evtx_core::ChunkResult| {
        let bytes = input.chunk(chunk.slot, &mut window);
        for r in &chunk.records {
            if let Outcome::Failed(f) = &r.outcome {
                if !f.is_output_limit() {
                    // A trailing partial slot is ours alone: the reference's walk ends before it.
                    if chunk.partial && r.record_id.is_none() {
                        continue;
                    }
                    found = Some(Err(failure_chain(bytes, chunk, r, f)));
                    return std::ops::ControlFlow::Break(());
                }
            }
            let Some(rid) = r.record_id else {
                continue;
            };
            let rec = (r.file_offset - chunk.file_offset) as usize;
            if let Some(value) = first_unreadable(bytes, rec) {
                let line = format!("Failed to parse record number {rid}");
                found = Some(Err(match value.cause() {
                    Some(cause) => caused(line, cause),
                    None => line,
                }));
                return std::ops::ControlFlow::Break(());
            }
            if rid != id {
                continue;
            }
            found =
                Some(record_raw_values(bytes, rec, index).ok_or_else(|| {
                    format!("record {rid} has no TemplateInstance at index {index}")
                }));
            return std::ops::ControlFlow::Break(());
        }
        std::ops::ControlFlow::Continue(())
    });
    found.unwrap_or_else(|| Err(format!("record_id {id} not found in {path}")))
}

/// A failure as the reference's anyhow error shows it: [`failure_line`] and, where the bytes
/// tell it, its `Caused by:` chain: the engine's [`evtx_core::Cause`] (a chunk's string table,
/// a record's BinXML), else the header field that failed (a record header's magic, size or
/// timestamp, a chunk's magic). Other failures give the line alone
/// (`shared-fixtures/README.md`).
#[cold]
fn failure_chain(
    chunk_bytes: &[u8],
    chunk: &evtx_core::ChunkResult,
    r: &evtx_core::RecordResult,
    f: &evtx_core::Failure,
) -> String {
    use evtx_core::ErrorKind as K;
    let line = failure_line(chunk, r, f);
    let rec = (r.file_offset - chunk.file_offset) as usize;
    let field = |at: usize, n: usize| chunk_bytes.get(at..at + n);
    let cause = match f.kind {
        _ if f.cause.is_some() => f.cause.and_then(|c| cause_text(c, chunk_bytes)),
        K::BadRecordMagic => field(rec, 4).map(|m| {
            format!(
                "{STREAM}Invalid EVTX record header magic, expected `2a2a0000`, found `{}`",
                magic_text(m)
            )
        }),
        K::BadRecordSize => le32(chunk_bytes, rec + 4)
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
    };
    match cause {
        Some(cause) => caused(line, cause),
        None => line,
    }
}

/// The chain of the reference's deserializer errors below a record's line.
const STREAM: &str = "0: An error occurred while trying to deserialize evtx stream.\n    1: ";

/// The reference's words for an engine's `cause` in `chunk` (a string table's are the chunk's
/// own, a record's BinXML's come below [`STREAM`]).
#[cold]
fn cause_text(cause: evtx_core::Cause, chunk: &[u8]) -> Option<String> {
    use evtx_core::CauseKind as C;
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
        // A TEMP's, not a chunk's ([`temp_error`]).
        C::InvalidValueType
        | C::NameHashMismatch
        | C::NameWithoutNul
        | C::Truncated { .. }
        | C::Model(_) => return None,
    })
}

/// The reference's error for the TEMP BinXML `binxml` that does not build, `cause` at an
/// offset from its start: the tree builder's refusal, or the reader's error below the
/// deserializer's line.
#[cold]
fn temp_error(cause: evtx_core::Cause, binxml: &[u8]) -> Option<String> {
    use evtx_core::CauseKind as C;
    let at = cause.offset as usize;
    let u16_at = |o: usize| Some(u16::from_le_bytes(binxml.get(o..o + 2)?.try_into().ok()?));
    // An inline name at `at`: its stored hash, its units' hash and its NUL unit.
    let name = || {
        let count = usize::from(u16_at(at + 2)?);
        let units = binxml.get(at + 4..at + 4 + count * 2)?;
        let hash = units.chunks_exact(2).fold(0u32, |h, c| {
            h.wrapping_mul(65599)
                .wrapping_add(u32::from(u16::from_le_bytes([c[0], c[1]])))
        });
        Some((u16_at(at)?, hash as u16, u16_at(at + 4 + count * 2)?))
    };
    let byte_before = || binxml.get(at.checked_sub(1)?).copied();
    let reason = match cause.kind {
        C::Model(reason) => {
            return Some(format!("Failed to create record model, reason: {reason}"));
        }
        C::InvalidToken => format!(
            "Offset {at:#010x}: Tried to read an invalid byte `{:#04x}` as binxml token",
            byte_before()?
        ),
        C::InvalidValueType => format!(
            "Offset {at:#010x}: Tried to read an invalid byte `0x{:2x}` as binxml value variant",
            byte_before()?
        ),
        C::NameHashMismatch => {
            let (stored, hash, _) = name()?;
            format!(
                "Offset {at:#010x}: WEVT inline name hash mismatch (expected {hash:#06x}, found \
                 {stored:#06x})"
            )
        }
        C::NameWithoutNul => format!(
            "Offset {at:#010x}: WEVT inline name missing NUL terminator (found {:#06x})",
            name()?.2
        ),
        C::Truncated { what, need } => format!(
            "buffer too small for {what} at offset {at} (need {need} bytes, have {})",
            binxml.len().saturating_sub(at)
        ),
        _ => return None,
    };
    Some(caused(
        "An error occurred while trying to deserialize evtx stream.",
        reason,
    ))
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
        let path = Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("../../shared-fixtures")
            .join(name);
        let bytes = fs::read(path).expect("the fixture is committed");
        bytes[4096..4096 + 65536].to_vec()
    }

    #[test]
    fn unreadable_values_have_the_reference_causes() {
        let chunk = first_chunk("damaged/unsupported-types.evtx");
        // The reference's causes for records 2 (at chunk offset 794, an EvtHandle of 4 bytes)
        // and 8 (at 2185, an EvtXml value text).
        let cause = |rec| first_unreadable(&chunk, rec).and_then(|u| u.cause());
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
        assert!(first_unreadable(&chunk, 512).is_none());
    }

    #[test]
    fn magic_bytes_as_the_reference_shows_them() {
        // From the reference's record header magic error on a sample.
        assert_eq!(magic_text(&[0, 0x6E, 0, 0x64]), "[ 0, 6E,  0, 64]");
        assert_eq!(magic_text(&[0x3D, 0x13, 0x6A, 0]), "[3D, 13, 6A,  0]");
    }
}
