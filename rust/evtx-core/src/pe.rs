//! `WEVT_TEMPLATE` resources of PE files (`extract-wevt-templates`): the PE headers, the
//! section table's RVA mapping and the resource directory, as the reference reads them
//! (`shared-fixtures/generator/wevt-format.md`, "PE"). Every read is bounds-checked; the only
//! allocations are the blobs returned, each a slice of the file.

use crate::bytes::{get_u16, get_u32};
use crate::reader_error::{ReaderError, ReaderKind};

/// Why a file gave no blobs, displayed in the reference's words (`zig/src/pe.zig`'s `Fault`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Fault {
    InvalidPe(&'static str),
    MalformedPe(&'static str),
    UnmappedRva(u32),
    MalformedResource(&'static str),
    ResourceName,
}

impl std::fmt::Display for Fault {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Fault::InvalidPe(m) => write!(f, "input is not a valid PE file: {m}"),
            Fault::MalformedPe(m) => write!(f, "malformed PE file: {m}"),
            Fault::UnmappedRva(rva) => {
                write!(f, "failed to map RVA 0x{rva:08x} to a file offset")
            }
            Fault::MalformedResource(m) => write!(f, "resource directory is malformed: {m}"),
            Fault::ResourceName => f.write_str("failed to decode UTF-16 resource name"),
        }
    }
}

/// A fault and its file offset: the headers (0) when goblin refuses them, else the field
/// whose value leads nowhere or the first byte of the part that is cut or wrong.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Failure {
    pub fault: Fault,
    pub offset: u64,
}

impl Failure {
    /// The error as the CLIs print it.
    #[cold]
    pub fn reader_error(&self) -> ReaderError {
        ReaderError::new(ReaderKind::Pe, self.offset, &self.fault)
    }
}

/// The reference's words.
impl std::fmt::Display for Failure {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        self.fault.fmt(f)
    }
}

type PeResult<T> = Result<T, Failure>;

#[cold]
fn fail<T>(fault: Fault, offset: usize) -> PeResult<T> {
    Err(Failure {
        fault,
        offset: offset as u64,
    })
}

/// One section header: what the RVA mapping needs.
#[derive(Debug, Clone, Copy)]
struct Section {
    virtual_size: u32,
    virtual_address: u32,
    raw_size: u32,
    raw_pointer: u32,
}

#[cold]
fn not_pe() -> Failure {
    // goblin refuses the headers as a whole: the line names their start.
    Failure {
        fault: Fault::InvalidPe("failed to parse PE via goblin"),
        offset: 0,
    }
}

/// What the headers give: the section table's mapping and the resource table's directory.
struct Image {
    file_alignment: u32,
    sections: Vec<Section>,
    /// Where the resource table's data directory entry (RVA, size) lies; `None` when the
    /// optional header has no such entry.
    resource_entry: Option<usize>,
}

impl Image {
    /// goblin's `find_offset` (below) over this image's sections.
    fn file_offset(&self, rva: u32) -> Option<usize> {
        find_offset(rva, &self.sections, self.file_alignment)
    }
}

/// The bytes of every `WEVT_TEMPLATE` resource of the PE image `pe`, in directory order
/// (resources, then languages). Empty when the image has none.
pub fn wevt_template_resources(pe: &[u8]) -> PeResult<Vec<&[u8]>> {
    let image = parse_headers(pe)?;
    let Some(entry) = image.resource_entry else {
        return Ok(Vec::new());
    };
    let rva = get_u32(pe, entry).ok_or_else(not_pe)?;
    let size = get_u32(pe, entry + 4).ok_or_else(not_pe)?;
    if rva == 0 || size == 0 {
        return Ok(Vec::new());
    }
    let Some(at) = image.file_offset(rva) else {
        return fail(Fault::UnmappedRva(rva), entry);
    };
    let Some(bytes) = pe.get(at..at + size as usize) else {
        return fail(
            Fault::MalformedPe("resource directory out of bounds"),
            entry,
        );
    };
    let rsrc = Rsrc { bytes, at };
    let mut out = Vec::new();
    walk(pe, &image, &rsrc, &mut out)?;
    Ok(out)
}

/// The DOS, COFF and optional headers and the section table, as goblin reads them.
fn parse_headers(pe: &[u8]) -> PeResult<Image> {
    let e_lfanew = get_u32(pe, 0x3C).ok_or_else(not_pe)? as usize;
    if pe.get(..2) != Some(b"MZ") || pe.get(e_lfanew..e_lfanew.saturating_add(4)) != Some(b"PE\0\0")
    {
        return Err(not_pe());
    }
    let coff = e_lfanew + 4;
    let sections = usize::from(get_u16(pe, coff + 2).ok_or_else(not_pe)?);
    let opt_size = usize::from(get_u16(pe, coff + 16).ok_or_else(not_pe)?);
    let opt = coff + 20;
    if opt_size == 0 {
        return fail(Fault::InvalidPe("missing optional header"), 0);
    }
    let magic = get_u16(pe, opt).ok_or_else(not_pe)?;
    let pe64 = match magic {
        0x10B => false,
        0x20B => true,
        _ => return Err(not_pe()),
    };
    // Standard (24/28) and Windows-specific (68/88) fields, then the data directories.
    let dirs_at = opt + if pe64 { 112 } else { 96 };
    if pe.len() < dirs_at {
        return Err(not_pe());
    }
    let file_alignment = get_u32(pe, opt + 36).ok_or_else(not_pe)?;
    let dir_count = get_u32(pe, dirs_at - 4).ok_or_else(not_pe)? as usize;
    let table = opt + opt_size;
    let mut secs = Vec::with_capacity(sections.min(96));
    for i in 0..sections {
        let s = table + 40 * i;
        let field = |o: usize| get_u32(pe, s + o).ok_or_else(not_pe);
        secs.push(Section {
            virtual_size: field(8)?,
            virtual_address: field(12)?,
            raw_size: field(16)?,
            raw_pointer: field(20)?,
        });
    }
    Ok(Image {
        file_alignment,
        sections: secs,
        resource_entry: (dir_count > 2).then_some(dirs_at + 16),
    })
}

/// The resource section's bytes and their file offset (for the offsets of faults).
struct Rsrc<'a> {
    bytes: &'a [u8],
    at: usize,
}

impl Rsrc<'_> {
    /// `fault` of the part at `place` (in the section), reached through the pointer at `from`:
    /// the part's first byte when it starts inside the section, else the pointer.
    #[cold]
    fn fail<T>(&self, fault: Fault, place: usize, from: usize) -> PeResult<T> {
        let inside = if place < self.bytes.len() {
            place
        } else {
            from
        };
        fail(fault, self.at + inside)
    }
}

/// The resource tree: root → `WEVT_TEMPLATE` → resource → language → data entry.
fn walk<'a>(pe: &'a [u8], image: &Image, rsrc: &Rsrc<'_>, out: &mut Vec<&'a [u8]>) -> PeResult<()> {
    let Some(wevt) = find_wevt_template(rsrc)? else {
        return Ok(());
    };
    for res in entries(rsrc, wevt.target as usize & 0x7FFF_FFFF, wevt.at + 4)? {
        if res.target & 0x8000_0000 == 0 {
            continue;
        }
        if res.name & 0x8000_0000 != 0 {
            resource_name(rsrc, (res.name & 0x7FFF_FFFF) as usize, res.at)?;
        }
        for lang in entries(rsrc, (res.target & 0x7FFF_FFFF) as usize, res.at + 4)? {
            if lang.name & 0x8000_0000 != 0 || lang.target & 0x8000_0000 != 0 {
                continue;
            }
            if let Some(bytes) = blob(pe, image, rsrc, lang.target as usize, lang.at + 4)? {
                out.push(bytes);
            }
        }
    }
    Ok(())
}

/// The bytes named by the data entry at `e` (pointed to from `from`); `None` when empty.
fn blob<'a>(
    pe: &'a [u8],
    image: &Image,
    rsrc: &Rsrc<'_>,
    e: usize,
    from: usize,
) -> PeResult<Option<&'a [u8]>> {
    let Some(header) = rsrc.bytes.get(e..e.saturating_add(16)) else {
        let fault = Fault::MalformedResource("resource data entry out of bounds");
        return rsrc.fail(fault, e, from);
    };
    let data_rva = u32::from_le_bytes(header[0..4].try_into().expect("4 bytes"));
    let data_size = u32::from_le_bytes(header[4..8].try_into().expect("4 bytes")) as usize;
    if data_size == 0 {
        return Ok(None);
    }
    let Some(d) = image.file_offset(data_rva) else {
        return rsrc.fail(Fault::UnmappedRva(data_rva), e, from);
    };
    match pe.get(d..d + data_size) {
        Some(bytes) => Ok(Some(bytes)),
        None => rsrc.fail(Fault::MalformedPe("resource data out of bounds"), e, from),
    }
}

/// goblin's `find_offset`: the first section whose file-backed span (read size rounded as the
/// loader does) holds `rva`.
fn find_offset(rva: u32, sections: &[Section], file_alignment: u32) -> Option<usize> {
    if file_alignment == 0 || !file_alignment.is_power_of_two() {
        return None;
    }
    let rva = rva as usize;
    let round = |n: usize| (n + 0xFFF) & !0xFFF;
    for s in sections {
        let raw = s.raw_size as usize;
        let read = if raw == 0 {
            0
        } else {
            let fa = file_alignment as usize;
            let end = (s.raw_pointer as usize + raw + fa - 1) & !(fa - 1);
            let r = (end - (s.raw_pointer as usize & !0x1FF)).min(round(raw));
            if s.virtual_size == 0 {
                r
            } else {
                r.min(round(s.virtual_size as usize))
            }
        };
        let va = s.virtual_address as usize;
        if va <= rva && rva < va + read {
            return Some(s.raw_pointer as usize + (rva - va));
        }
    }
    None
}

/// One directory entry: name-or-id, data-or-directory, and where it lies in the section.
struct Entry {
    name: u32,
    target: u32,
    at: usize,
}

/// The entries of the directory at `at` (pointed to from `from`).
fn entries(rsrc: &Rsrc<'_>, at: usize, from: usize) -> PeResult<Vec<Entry>> {
    let Some(header) = rsrc.bytes.get(at..at.saturating_add(16)) else {
        let fault = Fault::MalformedResource("resource directory header out of bounds");
        return rsrc.fail(fault, at, from);
    };
    let n = usize::from(u16::from_le_bytes([header[12], header[13]]))
        + usize::from(u16::from_le_bytes([header[14], header[15]]));
    let Some(list) = rsrc.bytes.get(at + 16..at + 16 + 8 * n) else {
        let fault = Fault::MalformedResource("resource directory entries out of bounds");
        return rsrc.fail(fault, at, from);
    };
    Ok(list
        .chunks_exact(8)
        .enumerate()
        .map(|(k, e)| Entry {
            name: u32::from_le_bytes(e[0..4].try_into().expect("4 bytes")),
            target: u32::from_le_bytes(e[4..8].try_into().expect("4 bytes")),
            at: at + 16 + 8 * k,
        })
        .collect())
}

/// The resource name at `at` (pointed to from `from`): u16 count, then UTF-16 units (lone
/// surrogates refused).
fn resource_name(rsrc: &Rsrc<'_>, at: usize, from: usize) -> PeResult<String> {
    let Some(count) = get_u16(rsrc.bytes, at) else {
        let fault = Fault::MalformedResource("resource name length out of bounds");
        return rsrc.fail(fault, at, from);
    };
    let Some(units) = rsrc.bytes.get(at + 2..at + 2 + 2 * count as usize) else {
        return rsrc.fail(
            Fault::MalformedResource("resource name out of bounds"),
            at,
            from,
        );
    };
    match char::decode_utf16(
        units
            .chunks_exact(2)
            .map(|c| u16::from_le_bytes([c[0], c[1]])),
    )
    .collect::<Result<String, _>>()
    {
        Ok(name) => Ok(name),
        Err(_) => rsrc.fail(Fault::ResourceName, at, from),
    }
}

/// The root's first named entry `WEVT_TEMPLATE` when it is a directory.
fn find_wevt_template(rsrc: &Rsrc<'_>) -> PeResult<Option<Entry>> {
    for entry in entries(rsrc, 0, 0)? {
        if entry.name & 0x8000_0000 == 0 {
            continue;
        }
        if resource_name(rsrc, (entry.name & 0x7FFF_FFFF) as usize, entry.at)? == "WEVT_TEMPLATE" {
            return Ok((entry.target & 0x8000_0000 != 0).then_some(entry));
        }
    }
    Ok(None)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fixture(name: &str) -> Vec<u8> {
        let dir =
            std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../shared-fixtures/wevt");
        std::fs::read(dir.join(name)).unwrap()
    }

    #[test]
    fn blobs_of_both_pe_kinds_in_directory_order() {
        let pe64 = fixture("providers64.dll");
        let blobs = wevt_template_resources(&pe64).unwrap();
        assert_eq!(blobs.len(), 1);
        assert_eq!(&blobs[0][..4], b"CRIM");
        // PE32: the named resource EXTRA (manifest A) first, then id 1 in two languages (B).
        let pe32 = fixture("providers32.dll");
        let blobs = wevt_template_resources(&pe32).unwrap();
        assert_eq!(blobs.len(), 3);
        assert_eq!(blobs[0], wevt_template_resources(&pe64).unwrap()[0]);
        assert_eq!(blobs[1], blobs[2]);
        assert!(wevt_template_resources(&fixture("no-resources.exe"))
            .unwrap()
            .is_empty());
    }

    /// The reference's texts (`failed to extract WEVT_TEMPLATE from ...: TEXT`).
    #[test]
    fn damaged_files_fail_in_the_reference_words() {
        let cases = [
            (
                "damaged-mz.dll",
                "input is not a valid PE file: failed to parse PE via goblin",
            ),
            (
                "damaged-short.dll",
                "input is not a valid PE file: failed to parse PE via goblin",
            ),
            (
                "damaged-data-rva.dll",
                "failed to map RVA 0x00009000 to a file offset",
            ),
            (
                "damaged-data-size.dll",
                "malformed PE file: resource data out of bounds",
            ),
            (
                "damaged-dir.dll",
                "resource directory is malformed: resource directory header out of bounds",
            ),
        ];
        for (name, text) in cases {
            let err = wevt_template_resources(&fixture(name)).unwrap_err();
            assert_eq!(err.to_string(), text, "{name}");
        }
        // Blobs are not parsed: a resource that is not CRIM is extracted as it is.
        assert_eq!(
            wevt_template_resources(&fixture("damaged-crim.dll"))
                .unwrap()
                .len(),
            3
        );
    }
}
