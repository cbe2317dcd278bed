//! `WEVT_TEMPLATE` resources of PE files (`extract-wevt-templates`): the PE headers, the
//! section table's RVA mapping and the resource directory, as the reference reads them
//! (`shared-fixtures/generator/wevt-format.md`, "PE"). Every read is bounds-checked; the only
//! allocations are the blobs returned, each a slice of the file.

use crate::bytes::{get_u16, get_u32};

/// An extraction error, displayed in the reference's words.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PeError {
    InvalidPe(&'static str),
    MalformedPe(&'static str),
    UnmappedRva(u32),
    MalformedResource(&'static str),
    ResourceName,
}

impl std::fmt::Display for PeError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            PeError::InvalidPe(m) => write!(f, "input is not a valid PE file: {m}"),
            PeError::MalformedPe(m) => write!(f, "malformed PE file: {m}"),
            PeError::UnmappedRva(rva) => {
                write!(f, "failed to map RVA 0x{rva:08x} to a file offset")
            }
            PeError::MalformedResource(m) => write!(f, "resource directory is malformed: {m}"),
            PeError::ResourceName => f.write_str("failed to decode UTF-16 resource name"),
        }
    }
}

type PeResult<T> = Result<T, PeError>;

/// One section header: what the RVA mapping needs.
#[derive(Debug, Clone, Copy)]
struct Section {
    virtual_size: u32,
    virtual_address: u32,
    raw_size: u32,
    raw_pointer: u32,
}

#[cold]
fn not_pe() -> PeError {
    PeError::InvalidPe("failed to parse PE via goblin")
}

/// The bytes of every `WEVT_TEMPLATE` resource of the PE image `pe`, in directory order
/// (resources, then languages). Empty when the image has none.
pub fn wevt_template_resources(pe: &[u8]) -> PeResult<Vec<&[u8]>> {
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
        return Err(PeError::InvalidPe("missing optional header"));
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
    if dir_count <= 2 {
        return Ok(Vec::new());
    }
    let rva = get_u32(pe, dirs_at + 16).ok_or_else(not_pe)?;
    let size = get_u32(pe, dirs_at + 20).ok_or_else(not_pe)?;
    if rva == 0 || size == 0 {
        return Ok(Vec::new());
    }
    let at = find_offset(rva, &secs, file_alignment).ok_or(PeError::UnmappedRva(rva))?;
    let rsrc = pe
        .get(at..at + size as usize)
        .ok_or(PeError::MalformedPe("resource directory out of bounds"))?;
    let mut out = Vec::new();
    let Some(wevt) = find_wevt_template(rsrc)? else {
        return Ok(out);
    };
    for (name, data) in entries(rsrc, wevt as usize)? {
        if data & 0x8000_0000 == 0 {
            continue;
        }
        if name & 0x8000_0000 != 0 {
            resource_name(rsrc, (name & 0x7FFF_FFFF) as usize)?;
        }
        for (lang, entry) in entries(rsrc, (data & 0x7FFF_FFFF) as usize)? {
            if lang & 0x8000_0000 != 0 || entry & 0x8000_0000 != 0 {
                continue;
            }
            let e = entry as usize;
            let header = rsrc
                .get(e..e.saturating_add(16))
                .ok_or(PeError::MalformedResource(
                    "resource data entry out of bounds",
                ))?;
            let data_rva = u32::from_le_bytes(header[0..4].try_into().expect("4 bytes"));
            let data_size = u32::from_le_bytes(header[4..8].try_into().expect("4 bytes")) as usize;
            if data_size == 0 {
                continue;
            }
            let d = find_offset(data_rva, &secs, file_alignment)
                .ok_or(PeError::UnmappedRva(data_rva))?;
            let bytes = pe
                .get(d..d + data_size)
                .ok_or(PeError::MalformedPe("resource data out of bounds"))?;
            out.push(bytes);
        }
    }
    Ok(out)
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

/// The entries (name-or-id, data-or-directory) of the directory at `at`.
fn entries(rsrc: &[u8], at: usize) -> PeResult<Vec<(u32, u32)>> {
    let header = rsrc
        .get(at..at.saturating_add(16))
        .ok_or(PeError::MalformedResource(
            "resource directory header out of bounds",
        ))?;
    let n = usize::from(u16::from_le_bytes([header[12], header[13]]))
        + usize::from(u16::from_le_bytes([header[14], header[15]]));
    let list = rsrc
        .get(at + 16..at + 16 + 8 * n)
        .ok_or(PeError::MalformedResource(
            "resource directory entries out of bounds",
        ))?;
    Ok(list
        .chunks_exact(8)
        .map(|e| {
            (
                u32::from_le_bytes(e[0..4].try_into().expect("4 bytes")),
                u32::from_le_bytes(e[4..8].try_into().expect("4 bytes")),
            )
        })
        .collect())
}

/// The resource name at `at`: u16 count, then UTF-16 units (lone surrogates refused).
fn resource_name(rsrc: &[u8], at: usize) -> PeResult<String> {
    let count = get_u16(rsrc, at).ok_or(PeError::MalformedResource(
        "resource name length out of bounds",
    ))? as usize;
    let units = rsrc
        .get(at + 2..at + 2 + 2 * count)
        .ok_or(PeError::MalformedResource("resource name out of bounds"))?;
    char::decode_utf16(
        units
            .chunks_exact(2)
            .map(|c| u16::from_le_bytes([c[0], c[1]])),
    )
    .collect::<Result<String, _>>()
    .map_err(|_| PeError::ResourceName)
}

/// The subdirectory offset of the root's first named entry `WEVT_TEMPLATE`, if it has one.
fn find_wevt_template(rsrc: &[u8]) -> PeResult<Option<u32>> {
    for (name, data) in entries(rsrc, 0)? {
        if name & 0x8000_0000 == 0 {
            continue;
        }
        if resource_name(rsrc, (name & 0x7FFF_FFFF) as usize)? == "WEVT_TEMPLATE" {
            return Ok((data & 0x8000_0000 != 0).then_some(data & 0x7FFF_FFFF));
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
