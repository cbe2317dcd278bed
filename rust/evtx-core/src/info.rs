//! `info`: what a file's header and chunk headers say, as `evtx_dump info` prints it
//! (byte-identical). Records are not parsed: this is the first look at a damaged log.
//!
//! Chunks are read at their fixed offsets (4096 + n * 65536) whatever the header says, a
//! trailing partial chunk is reported as trailing bytes, and a slot that is not a chunk is
//! one row saying why. Only a file shorter than the header block or without the `ElfFile\0`
//! magic fails (the CLI exits 1; [`Input::open_lenient`], [`header_error`]).
//!
//! Memory is bounded whatever the file size: the input is read through a [`ChunkSource`], one
//! slot at a time, and the table is streamed. Its column widths depend on every row, so a
//! first pass reads only the first 40 bytes of each chunk header (the cells whose width
//! varies), the second reads each whole slot (for the CRC32s) and writes its row.
//!
//! [`Input::open_lenient`]: crate::Input::open_lenient

use crate::bytes::{all_zero, le_u32, le_u64};
use crate::chunk::{CHUNK_HEADER_SIZE, CHUNK_MAGIC};
use crate::error::FatalError;
use crate::file_header::{chunk_offset, FileHeader, CHUNK_SIZE, FILE_HEADER_BLOCK, FLAG_NO_CRC32};
use crate::input::{ChunkSlot, ChunkSource};
use std::fmt::Write as _;
use std::io;

/// Flag bits `info` names, in the order it names them (file header).
const HEADER_FLAGS: [(u32, &str); 3] = [(0x1, "DIRTY"), (0x2, "FULL"), (0x4, "NO_CRC32")];
/// Flag bits `info` names in chunk headers.
const CHUNK_FLAGS: [(u32, &str); 2] = [(0x1, "DIRTY"), (0x4, "NO_CRC32")];

/// The chunk table's column titles, one a line in `include/info_columns.txt`: the Zig
/// engine's `info.zig` reads the same file, so the two cannot drift apart.
pub const COLUMNS: [&str; 7] = lines(include_str!("../../../include/info_columns.txt"));

/// Bytes of a chunk header the width pass reads: the magic, record numbers, record IDs and
/// flags (at 120).
const WIDTH_BYTES: usize = 124;

/// One row of the chunk table.
enum Row {
    /// A chunk's header fields, one per column.
    Chunk([String; 7]),
    /// Slot number, offset, and why there are no header fields.
    Note(String, String, String),
}

/// The `info` message for a header that cannot be read (the file is too short or not EVTX),
/// in the words of the reference's `info`; other errors unchanged.
#[cold]
pub fn header_error(e: FatalError) -> FatalError {
    match e {
        FatalError::TooShort(len) => FatalError::Other(format!(
            "Failed to read the file header: the file is {len} bytes, shorter than the 4096-byte \
                header block"
        )),
        FatalError::BadMagic => FatalError::Other(
            "Failed to read the file header: invalid magic (expected `ElfFile\\0`)".to_string(),
        ),
        other => other,
    }
}

/// Writes the `info` report of `src` to `out`, ending with a newline.
pub fn info<S: ChunkSource + ?Sized>(src: &S, out: &mut dyn io::Write) -> io::Result<()> {
    let mut text = String::new();
    write_header(src.header(), src.len(), &mut text);
    out.write_all(text.as_bytes())?;
    write_chunks(src, out)
}

fn write_header(header: &FileHeader, len: u64, out: &mut String) {
    let body = len - FILE_HEADER_BLOCK as u64;
    let (chunks, trailing) = (body / CHUNK_SIZE as u64, body % CHUNK_SIZE as u64);
    let (flags, stored, computed) = (
        header.flags,
        header.stored_checksum,
        header.computed_checksum,
    );
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
            format!("{}.{}", header.major_version, header.minor_version),
        ),
        ("Flags", flag_names(flags, &HEADER_FLAGS)),
        ("CRC32", crc),
        ("First chunk", header.first_chunk_number.to_string()),
        ("Last chunk", header.last_chunk_number.to_string()),
        ("Next record ID", header.next_record_id.to_string()),
        (
            "Chunk count",
            format!("{} (the file has room for {chunks})", header.chunk_count),
        ),
        (
            "Header size",
            format!(
                "{} (block {})",
                header.header_size, header.header_block_size
            ),
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

fn write_chunks<S: ChunkSource + ?Sized>(src: &S, out: &mut dyn io::Write) -> io::Result<()> {
    let chunks = (src.len() - FILE_HEADER_BLOCK as u64) / CHUNK_SIZE as u64;
    let slots = u32::try_from(chunks).unwrap_or(u32::MAX);
    let mut window = ChunkSlot::default();
    let widths = column_widths(src, slots, &mut window);
    let mut line = String::from("\n");
    write_row(&Row::Chunk(COLUMNS.map(String::from)), &widths, &mut line);
    out.write_all(line.as_bytes())?;
    let mut totals = Totals::default();
    for slot in 0..slots {
        let row = chunk_row(slot, src.chunk(slot, &mut window), &mut totals);
        line.clear();
        write_row(&row, &widths, &mut line);
        out.write_all(line.as_bytes())?;
    }
    let chunks = u64::from(slots);
    let unreadable = chunks - totals.used - totals.empty;
    line.clear();
    let _ = writeln!(
        line,
        "\n{chunks} {}: {} with records, {} empty, {unreadable} unreadable. {} records by the \
            chunk headers. {} {} a CRC32 check.",
        if chunks == 1 { "chunk" } else { "chunks" },
        totals.used,
        totals.empty,
        totals.records,
        totals.failing,
        if totals.failing == 1 {
            "chunk fails"
        } else {
            "chunks fail"
        },
    );
    out.write_all(line.as_bytes())
}

/// The width of each column: the widest of its title and its cells. Number and offset grow
/// with the slot; the other cells that vary are in the first [`WIDTH_BYTES`] of a chunk
/// header, so only those are read. (A file rewritten between the passes may give a row wider
/// than its column; it is printed whole, never cut.)
fn column_widths<S: ChunkSource + ?Sized>(
    src: &S,
    slots: u32,
    window: &mut ChunkSlot,
) -> [usize; 7] {
    let mut widths = COLUMNS.map(str::len);
    if let Some(last) = slots.checked_sub(1) {
        widths[0] = widths[0].max(last.to_string().len());
        widths[1] = widths[1].max(format!("0x{:08x}", chunk_offset(last)).len());
    }
    for slot in 0..slots {
        let head = src.slot_bytes(slot, WIDTH_BYTES, window);
        if head.len() < WIDTH_BYTES || &head[..8] != CHUNK_MAGIC {
            continue;
        }
        let cells = [
            format!("{}-{}", le_u64(head, 8), le_u64(head, 16)).len(),
            format!("{}-{}", le_u64(head, 24), le_u64(head, 32)).len(),
            flag_names(le_u32(head, 120), &CHUNK_FLAGS).len(),
        ];
        for (width, cell) in widths[2..5].iter_mut().zip(cells) {
            *width = (*width).max(cell);
        }
    }
    widths
}

fn chunk_row(slot: u32, bytes: &[u8], totals: &mut Totals) -> Row {
    let offset = chunk_offset(slot);
    let (number, offset) = (slot.to_string(), format!("0x{offset:08x}"));
    if bytes.len() < CHUNK_SIZE {
        // The file shrank since it was opened: the slot is gone (our words, as the dump's).
        let note = format!(
            "unreadable: incomplete chunk: {} bytes missing",
            CHUNK_SIZE - bytes.len()
        );
        return Row::Note(number, offset, note);
    }
    if all_zero(bytes) {
        totals.empty += 1;
        return Row::Note(number, offset, "empty".into());
    }
    if &bytes[..8] != CHUNK_MAGIC {
        // The reference's words for a chunk header it cannot parse.
        let found: Vec<String> = bytes[..8].iter().map(|b| format!("{b:2X}")).collect();
        let note = format!(
            "unreadable: Failed to parse chunk header: Invalid EVTX chunk header magic, expected \
                `ElfChnk0`, found `[{}]`",
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

/// One row, columns left-aligned two spaces apart, trailing spaces trimmed; a note row fills
/// the columns after the offset with its text.
fn write_row(row: &Row, widths: &[usize; 7], out: &mut String) {
    let start = out.len();
    match row {
        Row::Chunk(cells) => {
            for (cell, width) in cells.iter().zip(widths) {
                let _ = write!(out, "{cell:<width$}  ");
            }
        }
        Row::Note(number, offset, note) => {
            let _ = write!(
                out,
                "{number:<w0$}  {offset:<w1$}  {note}",
                w0 = widths[0],
                w1 = widths[1]
            );
        }
    }
    let end = start + out[start..].trim_end().len();
    out.truncate(end);
    out.push('\n');
}

/// The `N` lines of `text`, each ending with a newline; split at compile time (a file with
/// another number of lines fails the build).
const fn lines<const N: usize>(text: &'static str) -> [&'static str; N] {
    let mut out = [""; N];
    let (mut n, mut rest) = (0, text.as_bytes());
    while !rest.is_empty() {
        let mut end = 0;
        while end < rest.len() && rest[end] != b'\n' {
            end += 1;
        }
        assert!(end < rest.len(), "the last line has no newline");
        assert!(n < N, "more lines than expected");
        let (line, tail) = rest.split_at(end);
        out[n] = match std::str::from_utf8(line) {
            Ok(line) => line,
            Err(_) => panic!("not UTF-8"),
        };
        (n, rest) = (n + 1, tail.split_at(1).1);
    }
    assert!(n == N, "fewer lines than expected");
    out
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
    use crate::dump::EvtxFile;
    use crate::file_header::FILE_MAGIC;

    fn report(data: &[u8]) -> String {
        let mut out = Vec::new();
        info(&EvtxFile::open(data).unwrap(), &mut out).unwrap();
        String::from_utf8(out).unwrap()
    }

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
    fn header_errors_in_the_words_of_info() {
        assert_eq!(
            header_error(FatalError::TooShort(100)).to_string(),
            "Failed to read the file header: the file is 100 bytes, shorter than the 4096-byte \
                header block"
        );
        assert_eq!(
            header_error(FatalError::BadMagic).to_string(),
            "Failed to read the file header: invalid magic (expected `ElfFile\\0`)"
        );
    }

    #[test]
    fn header_only_file() {
        let mut data = vec![0u8; 4096 + 10];
        data[..8].copy_from_slice(FILE_MAGIC);
        let text = report(&data);
        assert!(text.starts_with("File header\n  Version          0.0\n"));
        assert!(text.contains("  Trailing bytes   10, after the last chunk\n"));
        assert!(text.ends_with(
            "\n0 chunks: 0 with records, 0 empty, 0 unreadable. 0 records by \
            the chunk headers. 0 chunks fail a CRC32 check.\n"
        ));
    }

    #[test]
    fn columns_are_as_wide_as_their_widest_cell() {
        // Slot 0 empty, slot 1 a chunk header with long record numbers, slot 2 not a chunk.
        let mut data = vec![0u8; 4096 + 3 * CHUNK_SIZE];
        data[..8].copy_from_slice(FILE_MAGIC);
        let c1 = 4096 + CHUNK_SIZE;
        data[c1..c1 + 8].copy_from_slice(CHUNK_MAGIC);
        data[c1 + 8..c1 + 16].copy_from_slice(&1u64.to_le_bytes());
        data[c1 + 16..c1 + 24].copy_from_slice(&123_456_789_012_345u64.to_le_bytes());
        data[c1 + 120..c1 + 124].copy_from_slice(&0x5u32.to_le_bytes());
        data[4096 + 2 * CHUNK_SIZE] = 7;
        let text = report(&data);
        let table: Vec<&str> = text.split("\n\n").nth(1).unwrap().lines().collect();
        assert_eq!(
            table,
            [
                "Chunk  Offset      Record numbers     Record IDs  Flags             Header \
                    CRC32  Records CRC32",
                "0      0x00001000  empty",
                "1      0x00011000  1-123456789012345  0-0         DIRTY | NO_CRC32  \
                    none          none",
                "2      0x00021000  unreadable: Failed to parse chunk header: Invalid EVTX chunk \
                    header magic, expected `ElfChnk0`, found `[ 7,  0,  0,  0,  0,  0,  0,  0]`",
            ]
        );
    }
}
