//! `info`: what a file's header and chunk headers say, as `evtx_dump info` prints it
//! (byte-identical). Records are not parsed: this is the first look at a damaged log.
//!
//! Chunks are read at their fixed offsets (4096 + n * 65536) whatever the header says, a
//! trailing partial chunk is reported as trailing bytes, and a slot that is not a chunk is
//! one row saying why. Only a file shorter than the header block or without the `ElfFile\0`
//! magic fails (the CLI exits 1).

use crate::bytes::{all_zero, le_u16, le_u32, le_u64};
use crate::chunk::{CHUNK_HEADER_SIZE, CHUNK_MAGIC, CHUNK_SIZE};
use crate::error::FatalError;
use crate::file_header::{FILE_HEADER_BLOCK, FILE_MAGIC, FLAG_NO_CRC32};
use std::fmt::Write;

/// Flag bits `info` names, in the order it names them (file header).
const HEADER_FLAGS: [(u32, &str); 3] = [(0x1, "DIRTY"), (0x2, "FULL"), (0x4, "NO_CRC32")];
/// Flag bits `info` names in chunk headers.
const CHUNK_FLAGS: [(u32, &str); 2] = [(0x1, "DIRTY"), (0x4, "NO_CRC32")];

const COLUMNS: [&str; 7] = [
    "Chunk",
    "Offset",
    "Record numbers",
    "Record IDs",
    "Flags",
    "Header CRC32",
    "Records CRC32",
];

/// One row of the chunk table.
enum Row {
    /// A chunk's header fields, one per column.
    Chunk([String; 7]),
    /// Slot number, offset, and why there are no header fields.
    Note(String, String, String),
}

/// The `info` report for the whole file `data`, ending with a newline.
pub fn info(data: &[u8]) -> Result<String, FatalError> {
    if data.len() < FILE_HEADER_BLOCK {
        return Err(FatalError::Other(format!(
            "Failed to read the file header: the file is {} bytes, shorter than the 4096-byte header block",
            data.len()
        )));
    }
    if &data[..8] != FILE_MAGIC {
        return Err(FatalError::Other(
            "Failed to read the file header: invalid magic (expected `ElfFile\\0`)".to_string(),
        ));
    }
    let mut out = String::new();
    write_header(data, &mut out);
    write_chunks(data, &mut out);
    Ok(out)
}

fn write_header(data: &[u8], out: &mut String) {
    let len = data.len() as u64;
    let body = len - FILE_HEADER_BLOCK as u64;
    let (chunks, trailing) = (body / CHUNK_SIZE as u64, body % CHUNK_SIZE as u64);
    let flags = le_u32(data, 120);
    let stored = le_u32(data, 124);
    let computed = crc32fast::hash(&data[..120]);
    let crc = if flags & FLAG_NO_CRC32 != 0 {
        "none (NO_CRC32)".to_string()
    } else if stored == computed {
        format!("ok (0x{stored:08x})")
    } else {
        format!("BAD (stored 0x{stored:08x}, computed 0x{computed:08x})")
    };
    let mut fields = vec![
        (
            "Version",
            format!("{}.{}", le_u16(data, 38), le_u16(data, 36)),
        ),
        ("Flags", flag_names(flags, &HEADER_FLAGS)),
        ("CRC32", crc),
        ("First chunk", le_u64(data, 8).to_string()),
        ("Last chunk", le_u64(data, 16).to_string()),
        ("Next record ID", le_u64(data, 24).to_string()),
        (
            "Chunk count",
            format!("{} (the file has room for {chunks})", le_u16(data, 42)),
        ),
        (
            "Header size",
            format!("{} (block {})", le_u32(data, 32), le_u16(data, 40)),
        ),
    ];
    if trailing > 0 {
        fields.push((
            "Trailing bytes",
            format!("{trailing}, after the last chunk"),
        ));
    }
    out.push_str("File header\n");
    for (name, value) in fields {
        let _ = writeln!(out, "  {name:<16} {value}");
    }
}

/// Counts for the summary line.
#[derive(Default)]
struct Totals {
    used: u64,
    empty: u64,
    failing: u64,
    records: u64,
}

fn write_chunks(data: &[u8], out: &mut String) {
    let chunks = (data.len() - FILE_HEADER_BLOCK) / CHUNK_SIZE;
    let mut rows = vec![Row::Chunk(COLUMNS.map(String::from))];
    let mut totals = Totals::default();
    for slot in 0..chunks {
        let offset = FILE_HEADER_BLOCK + slot * CHUNK_SIZE;
        let bytes = &data[offset..offset + CHUNK_SIZE];
        rows.push(chunk_row(slot, offset, bytes, &mut totals));
    }
    write_table(&rows, out);
    let chunks = chunks as u64;
    let unreadable = chunks - totals.used - totals.empty;
    let _ = writeln!(
        out,
        "\n{chunks} {}: {} with records, {} empty, {unreadable} unreadable. {} records by the chunk headers. {} {} a CRC32 check.",
        if chunks == 1 { "chunk" } else { "chunks" },
        totals.used,
        totals.empty,
        totals.records,
        totals.failing,
        if totals.failing == 1 { "chunk fails" } else { "chunks fail" },
    );
}

fn chunk_row(slot: usize, offset: usize, bytes: &[u8], totals: &mut Totals) -> Row {
    let (number, offset) = (slot.to_string(), format!("0x{offset:08x}"));
    if all_zero(bytes) {
        totals.empty += 1;
        return Row::Note(number, offset, "empty".into());
    }
    if &bytes[..8] != CHUNK_MAGIC {
        // The reference's words for a chunk header it cannot parse.
        let found: Vec<String> = bytes[..8].iter().map(|b| format!("{b:2X}")).collect();
        let note = format!(
            "unreadable: Failed to parse chunk header: Invalid EVTX chunk header magic, expected `ElfChnk0`, found `[{}]`",
            found.join(", ")
        );
        return Row::Note(number, offset, note);
    }
    totals.used += 1;
    let flags = le_u32(bytes, 120);
    let crc = |valid: bool| match (flags & FLAG_NO_CRC32 != 0, valid) {
        (true, _) => "none",
        (false, true) => "ok",
        (false, false) => "BAD",
    };
    let mut hasher = crc32fast::Hasher::new();
    hasher.update(&bytes[..120]);
    hasher.update(&bytes[128..CHUNK_HEADER_SIZE]);
    let header_crc = crc(le_u32(bytes, 124) == hasher.finalize());
    let free_space = le_u32(bytes, 48) as usize;
    let records_ok = bytes
        .get(CHUNK_HEADER_SIZE..free_space)
        .is_some_and(|records| le_u32(bytes, 52) == crc32fast::hash(records));
    let records_crc = crc(records_ok);
    if header_crc == "BAD" || records_crc == "BAD" {
        totals.failing += 1;
    }
    let (first_number, last_number) = (le_u64(bytes, 8), le_u64(bytes, 16));
    let count = last_number.checked_sub(first_number);
    totals.records += count.map_or(0, |count| count.saturating_add(1));
    Row::Chunk([
        number,
        offset,
        format!("{first_number}-{last_number}"),
        format!("{}-{}", le_u64(bytes, 24), le_u64(bytes, 32)),
        flag_names(flags, &CHUNK_FLAGS),
        header_crc.into(),
        records_crc.into(),
    ])
}

/// Left-aligned columns two spaces apart, trailing spaces trimmed; a note row fills the
/// columns after the offset with its text.
fn write_table(rows: &[Row], out: &mut String) {
    let mut widths = [0usize; COLUMNS.len()];
    for row in rows {
        let cells: Vec<&String> = match row {
            Row::Chunk(cells) => cells.iter().collect(),
            Row::Note(number, offset, _) => vec![number, offset],
        };
        for (width, cell) in widths.iter_mut().zip(cells) {
            *width = (*width).max(cell.len());
        }
    }
    out.push('\n');
    for row in rows {
        let mut line = String::new();
        match row {
            Row::Chunk(cells) => {
                for (cell, width) in cells.iter().zip(widths) {
                    let _ = write!(line, "{cell:<width$}  ");
                }
            }
            Row::Note(number, offset, note) => {
                let _ = write!(
                    line,
                    "{number:<w0$}  {offset:<w1$}  {note}",
                    w0 = widths[0],
                    w1 = widths[1]
                );
            }
        }
        out.push_str(line.trim_end());
        out.push('\n');
    }
}

/// The names of the set flags joined by ` | `, then any other bits as `0x…` (lowercase hex);
/// `none` when no bit is set.
fn flag_names(flags: u32, names: &[(u32, &str)]) -> String {
    let mut parts: Vec<String> = Vec::new();
    let mut rest = flags;
    for &(bit, name) in names {
        if flags & bit != 0 {
            parts.push(name.to_string());
            rest &= !bit;
        }
    }
    if rest != 0 {
        parts.push(format!("0x{rest:x}"));
    }
    if parts.is_empty() {
        return "none".to_string();
    }
    parts.join(" | ")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn flag_names_follow_bitflags() {
        assert_eq!(flag_names(0, &HEADER_FLAGS), "none");
        assert_eq!(flag_names(0x3, &HEADER_FLAGS), "DIRTY | FULL");
        assert_eq!(flag_names(0x1b97_0000, &HEADER_FLAGS), "0x1b970000");
        assert_eq!(flag_names(0x2 | 0x10, &CHUNK_FLAGS), "0x12");
        assert_eq!(
            flag_names(0x5 | 0x100, &CHUNK_FLAGS),
            "DIRTY | NO_CRC32 | 0x100"
        );
    }

    #[test]
    fn short_or_foreign_files_fail() {
        assert!(info(&[0; 100]).is_err());
        assert!(info(&[0; 4096]).is_err());
    }

    #[test]
    fn header_only_file() {
        let mut data = vec![0u8; 4096 + 10];
        data[..8].copy_from_slice(FILE_MAGIC);
        let text = info(&data).unwrap();
        assert!(text.starts_with("File header\n  Version          0.0\n"));
        assert!(text.contains("  Trailing bytes   10, after the last chunk\n"));
        assert!(text.ends_with("\n0 chunks: 0 with records, 0 empty, 0 unreadable. 0 records by the chunk headers. 0 chunks fail a CRC32 check.\n"));
    }
}
