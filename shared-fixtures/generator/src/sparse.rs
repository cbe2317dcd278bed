//! The sparse log over 4 GiB (not committed; written to `target/` at test time): a wrapped log
//! whose oldest chunk lies past the 4 GiB offset, with more than 65,536 empty slots between.
//!
//! The empty slots are holes: the writer seeks over them and never writes zeros, so the file
//! takes about 1 MiB of disk while its length is 4,296,019,968 bytes, and a reader sees them as
//! all-zero slots (which render nothing, contract 3.2). What it exercises: chunk offsets and
//! slot numbers past 32 bits, more slots than the header's 16-bit chunk count, a chunk that
//! straddles the 4 GiB offset, and the wrapped-log order (3.3) across all of it.
//!
//! Layout (slot: content), 65,552 slots in all:
//! * 0..=8: chunks 5..=13 of a 1 MiB `bench` log (seed 1);
//! * 9..=65534: holes;
//! * 65535: chunk 14 (file offset 0xFFFF1000, ends past 4 GiB);
//! * 65536..=65546: holes (65,537 holes in all);
//! * 65547..=65551: chunks 0..=4, the oldest records: the order starts here, past 4 GiB, and
//!   wraps to slot 0.

use std::fs::{File, OpenOptions};
use std::io::{Seek, SeekFrom, Write};
use std::path::Path;

use crate::writer::{FileHeader, CHUNK_SIZE, FILE_HEADER_BLOCK};

/// Slot of the oldest chunk (past 4 GiB).
pub const OLDEST_SLOT: u64 = 65_547;
/// Number of chunk slots in the file.
pub const SLOTS: u64 = 65_552;
/// File length in bytes.
pub const LEN: u64 = FILE_HEADER_BLOCK as u64 + SLOTS * CHUNK_SIZE as u64;

/// The (slot, chunk index) pairs of the real chunks, in slot order.
pub fn layout() -> Vec<(u64, usize)> {
    let mut slots: Vec<(u64, usize)> = (0..9).map(|i| (i, 5 + i as usize)).collect();
    slots.push((65_535, 14));
    slots.extend((0..5).map(|i| (OLDEST_SLOT + i, i as usize)));
    slots
}

/// Number of hole slots (all-zero, never written).
pub fn holes() -> u64 {
    SLOTS - layout().len() as u64
}

/// Writes the sparse log to `out` (replacing it).
pub fn write(out: &Path) -> std::io::Result<()> {
    let log = crate::bench::build(1, 1);
    let chunks: Vec<&[u8]> = log[FILE_HEADER_BLOCK..].chunks_exact(CHUNK_SIZE).collect();
    assert!(chunks.len() >= 15, "the 1 MiB bench log has 15 chunks");
    let owned: Vec<Vec<u8>> = chunks[..15].iter().map(|c| c.to_vec()).collect();
    let mut header = FileHeader::for_chunks(&owned);
    // As Windows leaves a wrapped log: the oldest chunk first, the newest last (the header's
    // 16-bit chunk count cannot say how many slots there are; readers count them).
    header.first_chunk = OLDEST_SLOT;
    header.last_chunk = 65_535;
    if let Some(dir) = out.parent() {
        std::fs::create_dir_all(dir)?;
    }
    let mut file: File = OpenOptions::new()
        .write(true)
        .create(true)
        .truncate(true)
        .open(out)?;
    file.write_all(&header.bytes())?;
    for (slot, index) in layout() {
        file.seek(SeekFrom::Start(
            FILE_HEADER_BLOCK as u64 + slot * CHUNK_SIZE as u64,
        ))?;
        file.write_all(&owned[index])?;
    }
    // The file already ends with the last real chunk; say its length explicitly anyway.
    file.set_len(LEN)?;
    eprintln!(
        "wrote {} ({LEN} bytes, {SLOTS} slots: {} chunks, {} holes; oldest slot {OLDEST_SLOT})",
        out.display(),
        layout().len(),
        holes()
    );
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn layout_is_past_four_gib_with_more_than_65536_holes() {
        let offset = |slot: u64| FILE_HEADER_BLOCK as u64 + slot * CHUNK_SIZE as u64;
        assert!(holes() > 65_536);
        assert!(offset(OLDEST_SLOT) > 1 << 32);
        assert!(offset(65_535) < 1 << 32 && offset(65_536) > 1 << 32);
        assert_eq!(LEN, offset(SLOTS));
        let mut indexes: Vec<usize> = layout().iter().map(|&(_, i)| i).collect();
        indexes.sort_unstable();
        assert_eq!(indexes, (0..15).collect::<Vec<_>>());
        assert_eq!(layout().last().unwrap().0, SLOTS - 1);
    }
}
