//! `--wevt-cache`: provider template definitions (`WEVT_TEMPLATE` CRIM manifests, collected in
//! a `.wevtcache` file) that stand in for a record's broken or missing embedded definition.
//! Layouts, error texts and the rules of use: `shared-fixtures/generator/wevt-format.md`.
//!
//! A cached TEMP is BinXML with inline names; the engine's trees refer to chunk bytes by offset.
//! So [`translate`] rewrites a TEMP into a chunk-style definition (header, body whose names are
//! offsets to string-table-shaped entries) appended after the chunk's bytes, and the chunk is
//! rendered again over `chunk ++ appended` with the failed definition's offset redirected there
//! ([`crate::template::Templates::fallback`]). Only chunks that need the cache pay for it.

use std::collections::HashMap;
use std::fmt;
use std::path::Path;

use crate::limits::ELEMENT_DEPTH_MAX;
use crate::reader_error::{ReaderError, ReaderKind};
use crate::{Cause, CauseKind};

/// Largest `.wevtcache` blob count or byte total is bounded by the file itself: an entry's
/// length is checked against the bytes left before it is allocated.
const HEADER_SIZE: usize = 16;
const ENTRY_HEADER_SIZE: u64 = 9;
const MAGIC: &[u8; 8] = b"WEVTCACH";
/// Size of a TEMP header; its BinXML follows.
pub const TEMP_HEADER_SIZE: usize = 40;

/// The templates of a `.wevtcache`, by GUID (the first TEMP with a GUID wins).
#[derive(Debug, Default)]
pub struct WevtCache {
    blobs: Vec<Vec<u8>>,
    by_guid: HashMap<[u8; 16], (usize, usize, usize)>,
}

impl WevtCache {
    /// Reads and indexes `path` (the `--wevt-cache` file); the error says why (its `Display`
    /// is the reference's text, `Caused by:` block included).
    pub fn load(path: &Path) -> Result<WevtCache, Diagnostic> {
        let mut cache = WevtCache::default();
        read_blobs(path, |_, blob| cache.add(blob))?;
        Ok(cache)
    }

    /// Indexes a cache file already in memory, `bytes`, read from `path` (named in errors):
    /// the same reads, checks and texts as [`WevtCache::load`] (the fuzz target's entry).
    pub fn parse(bytes: &[u8], path: &Path) -> Result<WevtCache, Diagnostic> {
        let mut cache = WevtCache::default();
        read_blobs_from(bytes, bytes.len() as u64, |_, blob| cache.add(blob))
            .map_err(|stop| diagnose(stop, path))?;
        Ok(cache)
    }

    /// Indexes one CRIM blob's templates (a GUID seen before keeps its first TEMP).
    fn add(&mut self, blob: Vec<u8>) -> Result<(), CrimError> {
        let temps = parse_crim(&blob)?;
        let index = self.blobs.len();
        for t in temps.iter().filter(|t| t.indexed) {
            self.by_guid
                .entry(t.guid)
                .or_insert((index, t.offset, t.offset + t.size));
        }
        self.blobs.push(blob);
        Ok(())
    }

    /// The whole TEMP (header included) of template `guid`.
    pub fn temp(&self, guid: &[u8; 16]) -> Option<&[u8]> {
        let &(blob, start, end) = self.by_guid.get(guid)?;
        self.blobs[blob].get(start..end)
    }

    /// Number of templates indexed.
    pub fn len(&self) -> usize {
        self.by_guid.len()
    }

    pub fn is_empty(&self) -> bool {
        self.by_guid.is_empty()
    }
}

/// Why the container could not be read, in the reference's `WevtCacheFileError` words
/// (`write`); each fault knows its file offset (`zig/src/wevt_cache.zig`'s `Fault`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Fault {
    /// A short read (`I/O error while ACTION ...: failed to fill whole buffer`) of the part that
    /// starts at `offset`.
    ShortRead {
        action: &'static str,
        offset: u64,
    },
    InvalidMagic,
    UnsupportedVersion(u32),
    /// The entry at `offset` has an unknown kind.
    UnknownKind {
        kind: u8,
        offset: u64,
    },
    /// The entry at `offset` claims more bytes than are left.
    LengthTooLarge {
        len: u64,
        offset: u64,
    },
}

impl Fault {
    /// The reference's text for the cache at `path` (after `Error: `, before any cause).
    pub fn write(&self, path: &str) -> String {
        match self {
            Fault::ShortRead { action, .. } => {
                format!("I/O error while {action} `{path}`: failed to fill whole buffer")
            }
            Fault::InvalidMagic => format!("invalid `.wevtcache` magic for `{path}`"),
            Fault::UnsupportedVersion(found) => {
                format!("unsupported `.wevtcache` version {found} for `{path}` (expected 1)")
            }
            Fault::UnknownKind { kind, .. } => {
                format!("unknown `.wevtcache` entry kind {kind} for `{path}`")
            }
            Fault::LengthTooLarge { len, .. } => {
                format!("`.wevtcache` entry length {len} is larger than the rest of `{path}`")
            }
        }
    }

    /// The same words without the path (the error line names it first).
    fn what(&self) -> String {
        match self {
            Fault::ShortRead { action, .. } => {
                format!("I/O error while {action}: failed to fill whole buffer")
            }
            Fault::InvalidMagic => "invalid `.wevtcache` magic".to_string(),
            Fault::UnsupportedVersion(found) => {
                format!("unsupported `.wevtcache` version {found} (expected 1)")
            }
            Fault::UnknownKind { kind, .. } => format!("unknown `.wevtcache` entry kind {kind}"),
            Fault::LengthTooLarge { len, .. } => {
                format!("`.wevtcache` entry length {len} is larger than the rest of the file")
            }
        }
    }

    /// Where the fault lies: the header's magic or version, or the entry's first byte.
    fn offset(&self) -> u64 {
        match self {
            Fault::InvalidMagic => 0,
            Fault::UnsupportedVersion(_) => VERSION_AT,
            Fault::ShortRead { offset, .. }
            | Fault::UnknownKind { offset, .. }
            | Fault::LengthTooLarge { offset, .. } => *offset,
        }
    }
}

/// Why a `.wevtcache` could not be used (`zig/src/wevt_cache.zig`'s `Diagnostic`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Diagnostic {
    /// The OS refused the file or its bytes (not damage): the reference's whole text.
    Io(String),
    /// Damage in the container.
    File { fault: Fault, path: String },
    /// A manifest's fault; `blob` is the file offset of the manifest's first byte.
    Crim { error: CrimError, blob: u64 },
}

impl Diagnostic {
    /// The damage as the CLIs print it (`None` for an I/O failure, printed as the reference
    /// does). A manifest's fault lies at the blob's offset plus the place its text names.
    #[cold]
    pub fn reader_error(&self) -> Option<ReaderError> {
        match self {
            Diagnostic::Io(_) => None,
            Diagnostic::File { fault, .. } => Some(ReaderError::new(
                ReaderKind::Cache,
                fault.offset(),
                fault.what(),
            )),
            Diagnostic::Crim { error, blob } => Some(ReaderError::new(
                ReaderKind::Crim,
                blob.saturating_add(u64::from(error.place().unwrap_or(0))),
                format_args!("failed to parse CRIM/WEVT blob: {error}"),
            )),
        }
    }
}

/// The reference's text (after `Error: `), its `Caused by:` block included.
impl fmt::Display for Diagnostic {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Diagnostic::Io(text) => f.write_str(text),
            Diagnostic::File { fault, path } => {
                f.write_str(&fault.write(path))?;
                if matches!(fault, Fault::ShortRead { .. }) {
                    // anyhow's chain: the `io::Error` below the reference's message.
                    f.write_str("\n\nCaused by:\n    failed to fill whole buffer")?;
                }
                Ok(())
            }
            Diagnostic::Crim { error, .. } => write!(f, "failed to parse CRIM/WEVT blob: {error}"),
        }
    }
}

/// `apply-wevt-cache` words every failure as text.
impl From<Diagnostic> for String {
    fn from(d: Diagnostic) -> String {
        d.to_string()
    }
}

/// Where the version lies in the header.
const VERSION_AT: u64 = 8;

#[cold]
fn io_error(action: &str, path: &Path, e: &std::io::Error) -> Diagnostic {
    let reason = e.to_string();
    Diagnostic::Io(format!(
        "I/O error while {action} `{}`: {reason}\n\nCaused by:\n    {reason}",
        path.display()
    ))
}

/// Reads the entries of the `.wevtcache` at `path` in order, handing each CRIM blob and the
/// file offset of its first byte to `each` (a manifest's fault lies at that offset plus its
/// place). Stops at the first fault.
pub fn read_blobs(
    path: &Path,
    each: impl FnMut(u64, Vec<u8>) -> Result<(), CrimError>,
) -> Result<u32, Diagnostic> {
    let file = std::fs::File::open(path).map_err(|e| io_error("open", path, &e))?;
    let len = file
        .metadata()
        .map_err(|e| io_error("stat", path, &e))?
        .len();
    read_blobs_from(file, len, each).map_err(|stop| diagnose(stop, path))
}

#[cold]
fn diagnose(stop: Stop, path: &Path) -> Diagnostic {
    match stop {
        Stop::Fault(fault) => Diagnostic::File {
            fault,
            path: path.display().to_string(),
        },
        Stop::Io(action, e) => io_error(action, path, &e),
        Stop::Crim(error, blob) => Diagnostic::Crim { error, blob },
    }
}

/// How [`read_blobs_from`] stopped.
#[derive(Debug)]
enum Stop {
    Fault(Fault),
    /// An I/O failure other than a short read, while ACTION.
    Io(&'static str, std::io::Error),
    Crim(CrimError, u64),
}

/// `file.read_exact(buf)` for the part at `offset`: a short read is damage, others are I/O.
fn read_part(
    file: &mut impl std::io::Read,
    buf: &mut [u8],
    action: &'static str,
    offset: u64,
) -> Result<(), Stop> {
    file.read_exact(buf).map_err(|e| {
        if e.kind() == std::io::ErrorKind::UnexpectedEof {
            Stop::Fault(Fault::ShortRead { action, offset })
        } else {
            Stop::Io(action, e)
        }
    })
}

/// [`read_blobs`] over `file`, `len` bytes long.
fn read_blobs_from(
    mut file: impl std::io::Read,
    len: u64,
    mut each: impl FnMut(u64, Vec<u8>) -> Result<(), CrimError>,
) -> Result<u32, Stop> {
    let mut header = [0u8; HEADER_SIZE];
    read_part(&mut file, &mut header, "read header", 0)?;
    if &header[..8] != MAGIC {
        return Err(Stop::Fault(Fault::InvalidMagic));
    }
    let version = u32::from_le_bytes([header[8], header[9], header[10], header[11]]);
    if version != 1 {
        return Err(Stop::Fault(Fault::UnsupportedVersion(version)));
    }
    let count = u32::from_le_bytes([header[12], header[13], header[14], header[15]]);
    let mut at = HEADER_SIZE as u64;
    for _ in 0..count {
        let mut h = [0u8; ENTRY_HEADER_SIZE as usize];
        read_part(&mut file, &mut h, "read entry header", at)?;
        if h[0] != 1 {
            return Err(Stop::Fault(Fault::UnknownKind {
                kind: h[0],
                offset: at,
            }));
        }
        let size = u64::from_le_bytes(h[1..9].try_into().expect("8 bytes"));
        let payload = at + ENTRY_HEADER_SIZE;
        if size > len.saturating_sub(payload) {
            return Err(Stop::Fault(Fault::LengthTooLarge {
                len: size,
                offset: at,
            }));
        }
        // Bounded by the file's length (checked above).
        let mut blob = vec![0u8; size as usize];
        read_part(&mut file, &mut blob, "read entry payload", payload)?;
        each(payload, blob).map_err(|e| Stop::Crim(e, payload))?;
        at = payload + size;
    }
    Ok(count)
}

// ---------------------------------------------------------------------------------------------
// CRIM manifests.

/// A manifest error, displayed in the reference's words.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum CrimError {
    Signature {
        offset: u32,
        expected: [u8; 4],
        found: [u8; 4],
    },
    Truncated {
        what: &'static str,
        offset: u32,
        need: usize,
        have: usize,
    },
    Offset {
        what: &'static str,
        offset: u32,
        len: usize,
    },
    Size {
        what: &'static str,
        offset: u32,
        size: u32,
    },
    Count {
        what: &'static str,
        offset: u32,
        count: u32,
    },
    Utf16 {
        what: &'static str,
        offset: u32,
    },
}

impl fmt::Display for CrimError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match *self {
            CrimError::Signature {
                offset,
                expected,
                found,
            } => write!(
                f,
                "invalid signature at offset {offset}: expected {expected:?}, got {found:?}"
            ),
            CrimError::Truncated {
                what,
                offset,
                need,
                have,
            } => write!(
                f,
                "buffer too small for {what} at offset {offset} (need {need} bytes, have {have})"
            ),
            CrimError::Offset { what, offset, len } => {
                write!(f, "offset {offset} out of bounds for {what} (len={len})")
            }
            CrimError::Size { what, offset, size } => {
                write!(f, "size {size} out of bounds for {what} at offset {offset}")
            }
            CrimError::Count {
                what,
                offset,
                count,
            } => write!(f, "invalid count {count} for {what} at offset {offset}"),
            CrimError::Utf16 { what, offset } => {
                write!(f, "invalid utf-16 string for {what} at offset {offset}")
            }
        }
    }
}

impl CrimError {
    /// The place in the blob the text names, where it names one: the part that is wrong or
    /// cut. An out-of-bounds offset names the value, and a name's UTF-16 its place in the TEMP,
    /// so these give `None` (the line then names the blob's first byte).
    pub fn place(&self) -> Option<u32> {
        match *self {
            CrimError::Signature { offset, .. }
            | CrimError::Truncated { offset, .. }
            | CrimError::Size { offset, .. }
            | CrimError::Count { offset, .. } => Some(offset),
            CrimError::Offset { .. } | CrimError::Utf16 { .. } => None,
        }
    }
}

type CrimResult<T> = Result<T, CrimError>;

fn to_u32(v: usize) -> u32 {
    u32::try_from(v).unwrap_or(u32::MAX)
}

#[cold]
fn truncated(buf: &[u8], offset: usize, need: usize, what: &'static str) -> CrimError {
    CrimError::Truncated {
        what,
        offset: to_u32(offset),
        need,
        have: buf.len().saturating_sub(offset),
    }
}

fn require(buf: &[u8], off: usize, need: usize, what: &'static str) -> CrimResult<()> {
    if off > buf.len() || buf.len() - off < need {
        return Err(truncated(buf, off, need, what));
    }
    Ok(())
}

fn u32_at(buf: &[u8], off: usize, what: &'static str) -> CrimResult<u32> {
    crate::bytes::get_u32(buf, off).ok_or_else(|| truncated(buf, off, 4, what))
}

fn sig_at(buf: &[u8], off: usize, what: &'static str) -> CrimResult<[u8; 4]> {
    buf.get(off..off.wrapping_add(4))
        .filter(|_| off.checked_add(4).is_some())
        .map(|b| b.try_into().expect("4 bytes"))
        .ok_or_else(|| truncated(buf, off, 4, what))
}

/// The signature at `at` (the field `what` for a cut buffer) must be `expected`: CRIM, WEVT,
/// TTBL and TEMP alike, the offset in the error the signature's.
fn expect_sig(buf: &[u8], at: usize, expected: &[u8; 4], what: &'static str) -> CrimResult<()> {
    let found = sig_at(buf, at, what)?;
    if &found != expected {
        return Err(CrimError::Signature {
            offset: to_u32(at),
            expected: *expected,
            found,
        });
    }
    Ok(())
}

fn offset(off: u32, what: &'static str, len: usize) -> CrimResult<usize> {
    if off as usize > len {
        return Err(CrimError::Offset {
            what,
            offset: off,
            len,
        });
    }
    Ok(off as usize)
}

fn checked_end(len: usize, off: u32, size: u32, what: &'static str) -> CrimResult<usize> {
    let start = offset(off, what, len)?;
    if size as usize > len - start {
        return Err(CrimError::Size {
            what,
            offset: off,
            size,
        });
    }
    Ok(start + size as usize)
}

/// One TEMP of a manifest: where it lies in the blob, its GUID, whether the cache indexes it
/// (only the templates of each provider's last `TTBL` element are, as in the reference).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TempRef {
    pub offset: usize,
    pub size: usize,
    pub guid: [u8; 16],
    /// End of its BinXML (before the template items), relative to the TEMP.
    pub binxml_end: usize,
    /// Its provider's index in the manifest.
    pub provider: usize,
    pub indexed: bool,
}

/// Parses a CRIM manifest and returns its templates in order (providers, then tables).
/// Checks what the reference checks for the header, providers, their element descriptors,
/// `TTBL` tables and unknown elements; see wevt-format.md for the elements not modelled.
pub fn parse_crim(blob: &[u8]) -> CrimResult<Vec<TempRef>> {
    expect_sig(blob, 0, b"CRIM", "CRIM signature")?;
    let size = u32_at(blob, 4, "CRIM.size")?;
    require(blob, 8, 2, "CRIM.major_version")?;
    require(blob, 10, 2, "CRIM.minor_version")?;
    let providers = u32_at(blob, 12, "CRIM.provider_count")?;
    if size < 16 {
        return Err(CrimError::Size {
            what: "CRIM.size",
            offset: 0,
            size,
        });
    }
    let crim = blob.get(..size as usize).ok_or(CrimError::Size {
        what: "CRIM.size",
        offset: 0,
        size,
    })?;
    let n = providers as usize;
    let end = n.saturating_mul(20).saturating_add(16);
    if end > crim.len() {
        return Err(CrimError::Truncated {
            what: "CRIM provider descriptor array",
            offset: 16,
            need: end - 16,
            have: crim.len().saturating_sub(16),
        });
    }
    let mut temps = Vec::new();
    for i in 0..n {
        let d = 16 + i * 20;
        let at = u32_at(crim, d + 16, "CRIM.provider.offset")?;
        parse_provider(crim, at, i, &mut temps)?;
    }
    Ok(temps)
}

fn parse_provider(crim: &[u8], at: u32, index: usize, temps: &mut Vec<TempRef>) -> CrimResult<()> {
    let o = offset(at, "WEVT provider offset", crim.len())?;
    require(crim, o, 20, "WEVT header")?;
    expect_sig(crim, o, b"WEVT", "WEVT signature")?;
    let descriptors = u32_at(crim, o + 12, "WEVT.number_of_descriptors")? as usize;
    let unknown2 = u32_at(crim, o + 16, "WEVT.number_of_unknown2")? as usize;
    let desc_off = o + 20;
    require(
        crim,
        desc_off,
        descriptors.saturating_mul(8),
        "WEVT descriptor array",
    )?;
    let mut elements = Vec::with_capacity(descriptors);
    for i in 0..descriptors {
        let d = desc_off + i * 8;
        let eo = u32_at(crim, d, "WEVT.descriptor.element_offset")?;
        let e = offset(eo, "WEVT element offset", crim.len())?;
        require(crim, e, 4, "WEVT element signature")?;
        elements.push((eo, sig_at(crim, e, "WEVT element signature")?));
    }
    require(
        crim,
        desc_off + descriptors * 8,
        unknown2.saturating_mul(4),
        "WEVT unknown2 array",
    )?;
    let mut last_table: Option<(usize, usize)> = None;
    for (eo, sig) in elements {
        match &sig {
            b"TTBL" => {
                let start = temps.len();
                parse_ttbl(crim, eo, index, temps)?;
                last_table = Some((start, temps.len()));
            }
            // Parsed and checked by the reference; located only here (wevt-format.md).
            b"CHAN" | b"EVNT" | b"KEYW" | b"LEVL" | b"MAPS" | b"OPCO" | b"TASK" => {}
            _ => {
                let e = offset(eo, "provider element offset", crim.len())?;
                require(crim, e, 8, "unknown element header")?;
                let size = u32_at(crim, e + 4, "provider element size")?;
                offset(eo.saturating_add(size), "unknown element end", crim.len())?;
            }
        }
    }
    if let Some((a, b)) = last_table {
        for t in &mut temps[a..b] {
            t.indexed = true;
        }
    }
    Ok(())
}

fn parse_ttbl(crim: &[u8], at: u32, provider: usize, temps: &mut Vec<TempRef>) -> CrimResult<()> {
    let o = offset(at, "TTBL offset", crim.len())?;
    require(crim, o, 12, "TTBL header")?;
    expect_sig(crim, o, b"TTBL", "TTBL signature")?;
    let size = u32_at(crim, o + 4, "TTBL.size")?;
    let count = u32_at(crim, o + 8, "TTBL.count")?;
    let end = match size {
        0 => crim.len(),
        s if s < 12 => {
            return Err(CrimError::Size {
                what: "TTBL.size",
                offset: at,
                size,
            })
        }
        _ => checked_end(crim.len(), at, size, "TTBL.size")?,
    };
    let table = &crim[..end];
    let mut cur = o + 12;
    // Each TEMP takes at least its header inside the table: the loop is bounded by it.
    for _ in 0..count {
        require(table, cur, TEMP_HEADER_SIZE, "TEMP header")?;
        let here = to_u32(cur);
        let temp_end = parse_temp(crim, end, here)?;
        let temp = &crim[cur..temp_end];
        let mut t = temp_ref(crim, temp, here)?;
        t.provider = provider;
        temps.push(t);
        cur = temp_end;
    }
    Ok(())
}

/// Checks the TEMP header at `here` (inside the table ending at `end`); returns its end.
fn parse_temp(crim: &[u8], end: usize, here: u32) -> CrimResult<usize> {
    let cur = here as usize;
    expect_sig(crim, cur, b"TEMP", "TEMP signature")?;
    let temp_size = u32_at(crim, cur + 4, "TEMP.size")?;
    if (temp_size as usize) < TEMP_HEADER_SIZE {
        return Err(CrimError::Size {
            what: "TEMP.size",
            offset: here,
            size: temp_size,
        });
    }
    let temp_end = checked_end(end, here, temp_size, "TEMP.size")?;
    let descriptors = u32_at(crim, cur + 8, "TEMP.item_descriptor_count")?;
    let names = u32_at(crim, cur + 12, "TEMP.item_name_count")?;
    if descriptors == 0 && names != 0 {
        return Err(CrimError::Count {
            what: "TEMP.item_name_count (expected 0 when item_descriptor_count == 0)",
            offset: here + 12,
            count: names,
        });
    }
    Ok(temp_end)
}

/// The TEMP `temp` at `here` (its header checked): its items checked, where its BinXML ends,
/// its GUID (provider 0: the caller's to set).
fn temp_ref(crim: &[u8], temp: &[u8], here: u32) -> CrimResult<TempRef> {
    let descriptors = u32::from_le_bytes(temp[8..12].try_into().expect("4 bytes"));
    let items_at = u32::from_le_bytes(temp[16..20].try_into().expect("4 bytes"));
    let items_abs = if descriptors == 0 && items_at == 0 {
        here.saturating_add(to_u32(temp.len()))
    } else {
        items_at
    };
    let items_rel = if items_abs == 0 {
        to_u32(temp.len())
    } else if items_abs < here {
        return Err(CrimError::Offset {
            what: "TEMP.template_items_offset",
            offset: items_abs,
            len: crim.len(),
        });
    } else {
        items_abs - here
    };
    let items_rel = offset(
        items_rel,
        "TEMP.template_items_offset (relative)",
        temp.len(),
    )?;
    parse_items(temp, here, descriptors, items_at)?;
    let mut guid = [0u8; 16];
    guid.copy_from_slice(&temp[24..40]);
    Ok(TempRef {
        offset: here as usize,
        size: temp.len(),
        guid,
        binxml_end: items_rel.max(TEMP_HEADER_SIZE),
        provider: 0,
        indexed: false,
    })
}

/// The item descriptors and names of a TEMP (checked, not kept: rendering needs neither).
fn parse_items(temp: &[u8], at: u32, count: u32, items_at: u32) -> CrimResult<()> {
    let end_abs = at.saturating_add(to_u32(temp.len()));
    if count == 0 {
        if items_at != 0 && items_at != end_abs {
            return Err(CrimError::Offset {
                what: "TEMP.template_items_offset (expected 0 or end-of-template when \
                       item_descriptor_count==0)",
                offset: items_at,
                len: end_abs as usize,
            });
        }
        return Ok(());
    }
    let rel = items_start(temp, at, count, items_at)?;
    let descriptors_end = rel + count as usize * 20;
    let names = item_names(temp, at, count, rel, descriptors_end)?;
    for r in names {
        parse_item_name(temp, r)?;
    }
    Ok(())
}

/// Where the `count` item descriptors start in the TEMP (`items_at`, absolute), checked to
/// lie after the header and to hold them all.
fn items_start(temp: &[u8], at: u32, count: u32, items_at: u32) -> CrimResult<usize> {
    let end_abs = at.saturating_add(to_u32(temp.len()));
    let off_err = |what, offset| CrimError::Offset {
        what,
        offset,
        len: end_abs as usize,
    };
    if items_at < at {
        return Err(off_err("TEMP.template_items_offset", items_at));
    }
    let what_rel = "TEMP.template_items_offset (relative)";
    let rel = offset(items_at - at, what_rel, temp.len())?;
    if rel < TEMP_HEADER_SIZE || rel >= temp.len() {
        return Err(off_err(what_rel, items_at));
    }
    let needed = (count as usize).saturating_mul(20);
    if needed > temp.len() - rel {
        return Err(CrimError::Truncated {
            what: "template item descriptors",
            offset: items_at,
            need: needed,
            have: temp.len() - rel,
        });
    }
    Ok(rel)
}

/// The items' name offsets (relative to the TEMP), each inside it and none inside the
/// descriptor table (which ends at `descriptors_end`).
fn item_names(
    temp: &[u8],
    at: u32,
    count: u32,
    rel: usize,
    descriptors_end: usize,
) -> CrimResult<Vec<usize>> {
    let end_abs = at.saturating_add(to_u32(temp.len()));
    let off_err = |what, offset| CrimError::Offset {
        what,
        offset,
        len: end_abs as usize,
    };
    let mut min_name: Option<usize> = None;
    // Bounded by the descriptors, which fit in the TEMP (`items_start`).
    let mut names = Vec::with_capacity(count as usize);
    for i in 0..count as usize {
        let name_at = u32_at(temp, rel + i * 20 + 16, "TEMP.item.name_offset")?;
        if name_at == 0 {
            continue;
        }
        if name_at < at {
            return Err(off_err("template item name_offset", name_at));
        }
        let what = "template item name_offset (relative)";
        let r = offset(name_at - at, what, temp.len())?;
        min_name = Some(min_name.map_or(r, |m| m.min(r)));
        names.push(r);
    }
    if let Some(m) = min_name.filter(|&m| m < descriptors_end) {
        return Err(off_err(
            "template item name_offset overlaps descriptor table",
            at.saturating_add(to_u32(m)),
        ));
    }
    Ok(names)
}

/// One item name at `r` in the TEMP: u32 size (4 and up, inside the TEMP), UTF-16 up to a NUL.
fn parse_item_name(temp: &[u8], r: usize) -> CrimResult<()> {
    let what = "template item name";
    require(temp, r, 4, what)?;
    let size = u32_at(temp, r, what)?;
    if size < 4 {
        return Err(CrimError::Size {
            what,
            offset: to_u32(r),
            size,
        });
    }
    require(temp, r, size as usize, what)?;
    let bytes = &temp[r + 4..r + size as usize];
    let units = bytes
        .chunks_exact(2)
        .map(|c| u16::from_le_bytes([c[0], c[1]]))
        .take_while(|&u| u != 0);
    if char::decode_utf16(units).any(|c| c.is_err()) {
        return Err(CrimError::Utf16 {
            what,
            offset: to_u32(r),
        });
    }
    Ok(())
}

// ---------------------------------------------------------------------------------------------
// TEMP BinXML → chunk-style definition.

/// Appends to `ext` a chunk-style template definition equivalent to the TEMP `temp` (header
/// included): first string-table-shaped name entries, then the 24-byte definition header (GUID
/// of the TEMP) and the body, whose names are offsets into `ext`. Returns the definition's
/// offset in `ext`, or `None` (nothing appended) when the TEMP's BinXML is one the reference
/// fails on (bad inline name, unknown token, tokens its tree builder refuses, template
/// instance) or that this reader does not model (a value token other than String text); the
/// embedded definition's error then stands.
pub fn translate(temp: &[u8], ext: &mut Vec<u8>) -> Option<u32> {
    translate_or_cause(temp, ext).ok()
}

/// [`translate`], or why not: the reference's error for the TEMP's BinXML where this reader
/// tells it (a [`Cause`] at an offset from the BinXML's start), `None` where it does not.
pub fn translate_or_cause(temp: &[u8], ext: &mut Vec<u8>) -> Result<u32, Option<Cause>> {
    let mut t = Translation {
        binxml: temp.get(TEMP_HEADER_SIZE..).ok_or(None)?,
        pos: 0,
        out: Vec::new(),
        names: Vec::new(),
        refs: Vec::new(),
        fault: None,
        unmodelled: false,
        in_start: false,
        depth: 0,
        roots: 0,
    };
    t.out.reserve(t.binxml.len());
    if t.body().is_none() {
        return Err(t.fault);
    }
    let base = ext.len();
    let mut at = Vec::with_capacity(t.names.len());
    for &(start, end) in &t.names {
        // Entry: next (0), hash, count, units, NUL: the inline name is hash, count, units, NUL.
        at.push(u32::try_from(ext.len()).map_err(|_| None)?);
        ext.extend_from_slice(&[0; 4]);
        ext.extend_from_slice(&t.binxml[start..end]);
    }
    let def = u32::try_from(ext.len()).map_err(|_| None)?;
    for &(pos, i) in &t.refs {
        t.out[pos..pos + 4].copy_from_slice(&at[i].to_le_bytes());
    }
    ext.extend_from_slice(&[0; 4]);
    ext.extend_from_slice(&temp[24..40]);
    let size = u32::try_from(t.out.len()).map_err(|_| None)?;
    ext.extend_from_slice(&size.to_le_bytes());
    let body_at = ext.len();
    ext.extend_from_slice(&t.out);
    debug_assert!(body_at == def as usize + 24 && base <= def as usize);
    Ok(def)
}

/// The walk of one TEMP's BinXML: tokens copied to `out`, inline names cut out (`names`,
/// ranges of `binxml`) and their places in `out` remembered (`refs`). The element state is
/// the reference's tree builder's (an open start tag, the open elements, the roots), so the
/// walk refuses what it refuses, and `fault` says why where the reference's words are known.
struct Translation<'a> {
    binxml: &'a [u8],
    pos: usize,
    out: Vec<u8>,
    names: Vec<(usize, usize)>,
    refs: Vec<(usize, usize)>,
    fault: Option<Cause>,
    /// A token the translation does not model was met (a Null value text).
    unmodelled: bool,
    in_start: bool,
    /// Open elements: the reference's tree builder refuses more than `ELEMENT_DEPTH_MAX`, its
    /// one limit for a record stream and a template alike.
    depth: usize,
    roots: u32,
}

impl<'a> Translation<'a> {
    /// Records the reference's error `kind` at `offset` and fails the walk.
    #[cold]
    fn fail<T>(&mut self, kind: CauseKind, offset: usize) -> Option<T> {
        let offset = u32::try_from(offset).unwrap_or(u32::MAX);
        self.fault = Some(Cause { kind, offset });
        None
    }

    /// `n` bytes of the field `what` (the reference's name for it, in its error).
    fn take(&mut self, n: usize, what: &'static str) -> Option<&'a [u8]> {
        let end = self.pos.checked_add(n).filter(|&e| e <= self.binxml.len());
        let Some(end) = end else {
            let need = u32::try_from(n).unwrap_or(u32::MAX);
            return self.fail(CauseKind::Truncated { what, need }, self.pos);
        };
        let s = &self.binxml[self.pos..end];
        self.pos = end;
        Some(s)
    }

    fn u16(&mut self, what: &'static str) -> Option<u16> {
        let b = self.take(2, what)?;
        Some(u16::from_le_bytes([b[0], b[1]]))
    }

    fn copy(&mut self, n: usize, what: &'static str) -> Option<()> {
        let s = self.take(n, what)?;
        self.out.extend_from_slice(s);
        Some(())
    }

    /// A u16 count then that many UTF-16 units, copied.
    fn copy_counted(&mut self, what: &'static str) -> Option<()> {
        let count = self.u16(what)?;
        self.out.extend_from_slice(&count.to_le_bytes());
        self.copy(count as usize * 2, what)
    }

    /// An inline name (hash, count, units, NUL): checked as the reference does (the string
    /// table's hash, a NUL), replaced in `out` by a 4-byte offset patched later.
    fn name(&mut self) -> Option<()> {
        let at = self.pos;
        let stored = self.u16("wevt_inline_name_hash")?;
        let count = self.u16("wevt_inline_name_character_count")?;
        let mut h: u32 = 0;
        for _ in 0..count {
            let unit = self.u16("wevt_inline_name_code_unit")?;
            h = h.wrapping_mul(65599).wrapping_add(u32::from(unit));
        }
        if self.u16("wevt_inline_name_nul")? != 0 {
            return self.fail(CauseKind::NameWithoutNul, at);
        }
        if stored != h as u16 {
            return self.fail(CauseKind::NameHashMismatch, at);
        }
        self.refs.push((self.out.len(), self.names.len()));
        self.names.push((at, self.pos));
        self.out.extend_from_slice(&[0; 4]);
        Some(())
    }

    /// The reference's tree builder refuses the token read at `at`.
    #[cold]
    fn refuse<T>(&mut self, reason: &'static str, at: usize) -> Option<T> {
        self.fail(CauseKind::Model(reason), at)
    }

    /// A node (text, value, reference): in the open start tag, an attribute's; else the open
    /// element's child, and there must be one.
    fn node(&mut self, at: usize) -> Option<()> {
        if !self.in_start && self.depth == 0 {
            return self.refuse("value outside of element", at);
        }
        Some(())
    }

    /// A closed element: a child of the open one, else a root.
    fn attach(&mut self) {
        if self.depth == 0 {
            self.roots += 1;
        }
    }

    /// A value type byte, copied: known to the reference, else its error.
    fn value_type(&mut self) -> Option<u8> {
        let ty = self.take(1, "u8")?[0];
        self.out.push(ty);
        if !crate::values_decode::is_known_type(ty) {
            return self.fail(CauseKind::InvalidValueType, self.pos);
        }
        Some(ty)
    }

    /// The tokens up to the first EOF (or the end), then the tree's shape; `None` when the
    /// reference would refuse them or they are not modelled.
    fn body(&mut self) -> Option<()> {
        while self.pos < self.binxml.len() {
            let at = self.pos;
            let token = self.binxml[self.pos];
            self.pos += 1;
            self.out.push(token);
            match token {
                0x00 => break,
                0x01 | 0x41 => self.open_start(token, at)?,
                0x02 => self.close_start(at)?,
                0x03 => self.close_empty(at)?,
                0x04 => self.close_element(at)?,
                // Value text: String only.
                0x05 | 0x45 => match self.value_type()? {
                    0x01 => {
                        self.copy_counted("<string_value>")?;
                        self.node(at)?;
                    }
                    // Not modelled, but of no bytes: the walk goes on to the reference's
                    // fault after it, if any.
                    0x00 => {
                        self.unmodelled = true;
                        self.node(at)?;
                    }
                    _ => return None,
                },
                0x06 | 0x46 => {
                    self.name()?;
                    if !self.in_start {
                        return self.refuse("attribute - Bad parser state", at);
                    }
                }
                0x09 | 0x49 | 0x0A => self.name().and_then(|()| self.node(at))?,
                0x07 | 0x47 => self.copy_counted("cdata").and_then(|()| self.node(at))?,
                0x0B => self.copy_counted("pi_data").and_then(|()| self.node(at))?,
                0x08 | 0x48 => self.copy(2, "char_ref").and_then(|()| self.node(at))?,
                0x0D | 0x0E => {
                    self.copy(2, "u16")?;
                    self.value_type()?;
                    self.node(at)?;
                }
                0x0F => {
                    self.copy(1, "fragment_header_major_version")?;
                    self.copy(1, "fragment_header_minor_version")?;
                    self.copy(1, "fragment_header_flags")?;
                }
                0x0C => return None,
                _ => return self.fail(CauseKind::InvalidToken, self.pos),
            }
        }
        self.finish()
    }

    fn open_start(&mut self, token: u8, at: usize) -> Option<()> {
        self.copy(2, "open_start_element_dependency_identifier")?;
        self.copy(4, "open_start_element_data_size")?;
        self.name()?;
        if token == 0x41 {
            self.copy(4, "open_start_element_attribute_list_data_size")?;
        }
        if self.in_start {
            return self.refuse("open start - Bad parser state", at);
        }
        self.in_start = true;
        Some(())
    }

    fn close_start(&mut self, at: usize) -> Option<()> {
        if self.depth >= ELEMENT_DEPTH_MAX {
            return self.refuse("BinXML elements nested too deeply", at);
        }
        if !self.in_start {
            return self.refuse("close start - Bad parser state", at);
        }
        self.in_start = false;
        self.depth += 1;
        Some(())
    }

    fn close_empty(&mut self, at: usize) -> Option<()> {
        if !self.in_start {
            return self.refuse("close empty - Bad parser state", at);
        }
        self.in_start = false;
        self.attach();
        Some(())
    }

    fn close_element(&mut self, at: usize) -> Option<()> {
        if self.depth == 0 {
            return self.refuse("close element - Bad parser state", at);
        }
        self.depth -= 1;
        self.attach();
        Some(())
    }

    /// The tree's shape at the stream's end, as the reference's builder checks it.
    fn finish(&mut self) -> Option<()> {
        let end = self.pos;
        if self.in_start {
            return self.refuse("unfinished element start", end);
        }
        if self.depth != 0 {
            return self.refuse("unbalanced element stack", end);
        }
        match self.roots {
            0 => self.refuse("missing root element", end),
            1 if self.unmodelled => None,
            1 => Some(()),
            _ => self.refuse("multiple root elements", end),
        }
    }
}

// ---------------------------------------------------------------------------------------------
// `apply-wevt-cache`: a TEMP rendered with given values.

/// A substitution value for [`render_with_values`]: its type byte and its bytes (6.4).
pub type RawValue = (u8, Vec<u8>);

/// Renders template `temp` (a TEMP, header included, cut where its BinXML ends) with `values`
/// as one XML record (declaration, indented), as `apply-wevt-cache` prints it. The template and
/// the values are laid out as a one-chunk log (definition, then a record of one instance) and
/// rendered by the dump itself. An error when the template or the record does not render or
/// does not fit one chunk: the reference's error for the TEMP's BinXML where it is known
/// ([`translate_or_cause`], offsets from the BinXML's start; the caller words it), else `None`.
pub fn render_with_values(
    temp: &[u8],
    values: &[RawValue],
    codec: &'static encoding_rs::Encoding,
) -> Result<Vec<u8>, Option<Cause>> {
    let mut chunk = vec![0u8; 512];
    let def = translate_or_cause(temp, &mut chunk)?;
    render_translated(chunk, def, temp, values, codec).ok_or(None)
}

/// The reference's error for the TEMP BinXML `binxml` that does not build, `cause` at an
/// offset from its start ([`render_with_values`]'s error, `apply-wevt-cache`'s text): the
/// tree builder's refusal, or the reader's error below the deserializer's line. `None` for a
/// cause whose words are not known. The Zig engine's `writeTempError`.
#[cold]
pub fn temp_error(cause: Cause, binxml: &[u8]) -> Option<String> {
    let at = cause.offset as usize;
    let u16_at = |o: usize| crate::bytes::get_u16(binxml, o);
    // An inline name at `at` (6.3, without its link): its stored hash, its units' hash and
    // its NUL unit.
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
        CauseKind::Model(reason) => {
            return Some(format!("Failed to create record model, reason: {reason}"));
        }
        CauseKind::InvalidToken => format!(
            "Offset {at:#010x}: Tried to read an invalid byte `{:#04x}` as binxml token",
            byte_before()?
        ),
        CauseKind::InvalidValueType => format!(
            "Offset {at:#010x}: Tried to read an invalid byte `0x{:2x}` as binxml value variant",
            byte_before()?
        ),
        CauseKind::NameHashMismatch => {
            let (stored, hash, _) = name()?;
            format!(
                "Offset {at:#010x}: WEVT inline name hash mismatch (expected {hash:#06x}, found \
                 {stored:#06x})"
            )
        }
        CauseKind::NameWithoutNul => format!(
            "Offset {at:#010x}: WEVT inline name missing NUL terminator (found {:#06x})",
            name()?.2
        ),
        CauseKind::Truncated { what, need } => format!(
            "buffer too small for {what} at offset {at} (need {need} bytes, have {})",
            binxml.len().saturating_sub(at)
        ),
        _ => return None,
    };
    Some(crate::error::caused(
        "An error occurred while trying to deserialize evtx stream.",
        reason,
    ))
}

/// [`render_with_values`] once the TEMP is translated: `chunk` a 512-byte chunk header and the
/// translation, its definition at `def`.
fn render_translated(
    mut chunk: Vec<u8>,
    def: u32,
    temp: &[u8],
    values: &[RawValue],
    codec: &'static encoding_rs::Encoding,
) -> Option<Vec<u8>> {
    const CHUNK: usize = crate::file_header::CHUNK_SIZE;
    let rec = chunk.len();
    chunk.extend_from_slice(b"**\0\0");
    chunk.extend_from_slice(&[0; 4]); // size, below
    chunk.extend_from_slice(&1u64.to_le_bytes());
    chunk.extend_from_slice(&[0; 8]); // FILETIME 1601
    chunk.extend_from_slice(&[0x0F, 0x01, 0x01, 0x00, 0x0C, 0x01]);
    chunk.extend_from_slice(&temp[24..28]);
    chunk.extend_from_slice(&def.to_le_bytes());
    chunk.extend_from_slice(&u32::try_from(values.len()).ok()?.to_le_bytes());
    for (t, bytes) in values {
        chunk.extend_from_slice(&u16::try_from(bytes.len()).ok()?.to_le_bytes());
        chunk.extend_from_slice(&[*t, 0]);
    }
    for (_, bytes) in values {
        chunk.extend_from_slice(bytes);
    }
    chunk.push(0x00);
    let size = u32::try_from(chunk.len() + 4 - rec).ok()?;
    chunk.extend_from_slice(&size.to_le_bytes());
    chunk[rec + 4..rec + 8].copy_from_slice(&size.to_le_bytes());
    if chunk.len() > CHUNK {
        return None;
    }
    let free = chunk.len() as u32;
    chunk.resize(CHUNK, 0);
    chunk[..8].copy_from_slice(crate::chunk::CHUNK_MAGIC);
    for at in [8, 16, 24, 32] {
        chunk[at..at + 8].copy_from_slice(&1u64.to_le_bytes());
    }
    chunk[40..44].copy_from_slice(&128u32.to_le_bytes());
    chunk[44..48].copy_from_slice(&(rec as u32).to_le_bytes());
    chunk[48..52].copy_from_slice(&free.to_le_bytes());
    let mut file = vec![0u8; 4096];
    file[..8].copy_from_slice(b"ElfFile\0");
    file[32..34].copy_from_slice(&128u16.to_le_bytes());
    file[36..38].copy_from_slice(&1u16.to_le_bytes());
    file[38..40].copy_from_slice(&3u16.to_le_bytes());
    file[40..42].copy_from_slice(&4096u16.to_le_bytes());
    file[42..44].copy_from_slice(&1u16.to_le_bytes());
    file.extend_from_slice(&chunk);
    let log = crate::EvtxFile::open(&file).ok()?;
    let opts = crate::Options {
        show_record_number: false,
        threads: 1,
        ansi_codec: codec,
        ..crate::Options::default()
    };
    let mut text = None;
    crate::dump(&log, &opts, |c: &crate::ChunkResult| {
        for r in &c.records {
            if let crate::Outcome::Rendered(range) = &r.outcome {
                // The dump ends a record with an empty line; the reference's text has none.
                let t = &c.bytes[range.clone()];
                text = Some(t.strip_suffix(b"\n").unwrap_or(t).to_vec());
            }
        }
        std::ops::ControlFlow::Continue(())
    });
    text
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::path::PathBuf;

    /// The generator's fixtures (`shared-fixtures/wevt`, `evtx-fixture-gen wevt`).
    fn fixture(name: &str) -> PathBuf {
        Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("../../shared-fixtures/wevt")
            .join(name)
    }

    /// The generator's `guid_of`: the fixtures' template GUIDs.
    fn guid_of(key: &str) -> [u8; 16] {
        let mut h: u64 = 0xcbf29ce484222325;
        let mut out = [0u8; 16];
        for round in 0..2u64 {
            for b in key.bytes().chain(std::iter::once(round as u8)) {
                h ^= b as u64;
                h = h.wrapping_mul(0x100000001b3);
            }
            out[(round as usize) * 8..(round as usize) * 8 + 8].copy_from_slice(&h.to_le_bytes());
        }
        out
    }

    fn utf16(s: &str) -> Vec<u8> {
        s.encode_utf16().flat_map(u16::to_le_bytes).collect()
    }

    fn contains(hay: &[u8], needle: &[u8]) -> bool {
        hay.windows(needle.len()).any(|w| w == needle)
    }

    #[test]
    fn cache_indexes_every_guid_once_first_blob_wins() {
        let cache = WevtCache::load(&fixture("templates.wevtcache")).unwrap();
        // logon, nested-data, bad-hash (manifest A); service, zero GUID (B; B's logon is a
        // second copy).
        assert_eq!(cache.len(), 5);
        let logon = cache.temp(&guid_of("wevt-logon")).unwrap();
        assert_eq!(&logon[..4], b"TEMP");
        assert_eq!(&logon[24..40], &guid_of("wevt-logon"));
        assert!(contains(logon, &utf16("TargetUserSid")));
        let b_first = WevtCache::load(&fixture("templates-b-first.wevtcache")).unwrap();
        let logon = b_first.temp(&guid_of("wevt-logon")).unwrap();
        assert!(contains(logon, &utf16("Shadowed")));
        assert!(cache.temp(&[0; 16]).is_some());
        assert!(cache.temp(&guid_of("wevt-unknown")).is_none());
        assert!(WevtCache::load(&fixture("empty.wevtcache"))
            .unwrap()
            .is_empty());
    }

    /// The reference's texts for the damaged caches (as `evtx_dump --wevt-cache` prints them).
    #[test]
    fn damaged_caches_fail_in_the_reference_words() {
        let cases = [
            (
                "damaged-magic.wevtcache",
                "invalid `.wevtcache` magic for `{}`".to_string(),
            ),
            (
                "damaged-version.wevtcache",
                "unsupported `.wevtcache` version 2 for `{}` (expected 1)".to_string(),
            ),
            (
                "damaged-kind.wevtcache",
                "unknown `.wevtcache` entry kind 7 for `{}`".to_string(),
            ),
            (
                "damaged-length.wevtcache",
                "`.wevtcache` entry length 4294967280 is larger than the rest of `{}`".to_string(),
            ),
            (
                "damaged-short.wevtcache",
                "I/O error while read header `{}`: failed to fill whole buffer\n\nCaused by:\n    \
                 failed to fill whole buffer"
                    .to_string(),
            ),
            (
                "damaged-crim-magic.wevtcache",
                "failed to parse CRIM/WEVT blob: invalid signature at offset 0: expected [67, 82, \
                 73, 77], got [67, 82, 73, 88]"
                    .to_string(),
            ),
            (
                "damaged-temp-size.wevtcache",
                "failed to parse CRIM/WEVT blob: size 65535 out of bounds for TEMP.size at offset \
                 104"
                .to_string(),
            ),
            (
                "damaged-ttbl-count.wevtcache",
                "failed to parse CRIM/WEVT blob: buffer too small for TEMP header at offset 1304 \
                 (need 40 bytes, have 0)"
                    .to_string(),
            ),
            (
                "damaged-truncated.wevtcache",
                "`.wevtcache` entry length 1232 is larger than the rest of `{}`".to_string(),
            ),
        ];
        for (name, text) in cases {
            let path = fixture(name);
            let want = text.replace("{}", &path.display().to_string());
            let loaded = WevtCache::load(&path).unwrap_err();
            assert_eq!(loaded.to_string(), want, "{name}");
            // The fuzz target's entry: the same bytes in memory, the same error.
            let bytes = std::fs::read(&path).unwrap();
            assert_eq!(
                WevtCache::parse(&bytes, &path).unwrap_err(),
                loaded,
                "{name} in memory"
            );
        }
        let path = fixture("templates.wevtcache");
        let bytes = std::fs::read(&path).unwrap();
        let (parsed, loaded) = (WevtCache::parse(&bytes, &path), WevtCache::load(&path));
        assert_eq!(parsed.unwrap().len(), loaded.unwrap().len());
    }

    #[test]
    fn translation_keeps_names_and_refuses_a_bad_hash() {
        let cache = WevtCache::load(&fixture("templates.wevtcache")).unwrap();
        let mut ext = vec![0u8; 100];
        let def = translate(cache.temp(&guid_of("wevt-service")).unwrap(), &mut ext).unwrap();
        let def = def as usize;
        assert_eq!(&ext[def + 4..def + 20], &guid_of("wevt-service"));
        let size = u32::from_le_bytes(ext[def + 20..def + 24].try_into().unwrap()) as usize;
        assert_eq!(ext.len(), def + 24 + size);
        // Names are string-table entries before the definition, the body refers to them.
        assert!(contains(&ext[100..def], &utf16("ServiceChange")));
        assert!(!contains(&ext[def..], &utf16("ServiceChange")));
        let before = ext.len();
        assert_eq!(
            translate(cache.temp(&guid_of("wevt-bad-hash")).unwrap(), &mut ext),
            None
        );
        assert_eq!(ext.len(), before);
    }
}
