//! Chunks: header (contract section 4), checksums (4.2) and the string table check (4.3). The
//! records inside a chunk are walked by [`crate::records`].

use crate::bytes::{get_u16, get_u32, le_u32, le_u64};
use crate::error::{Cause, CauseKind, ErrorKind, Failure};
use crate::file_header::CHUNK_SIZE;

/// Chunk header length; records start here.
pub const CHUNK_HEADER_SIZE: usize = 512;
/// `ElfChnk\0`.
pub const CHUNK_MAGIC: &[u8; 8] = b"ElfChnk\0";
/// Chunk flag: no CRCs maintained.
pub const CHUNK_FLAG_NO_CRC32: u32 = 0x4;

/// The chunk header fields (section 4).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ChunkHeader {
    pub first_record_number: u64,
    pub last_record_number: u64,
    pub first_record_id: u64,
    pub last_record_id: u64,
    pub header_size: u32,
    pub last_record_data_offset: u32,
    pub free_space_offset: u32,
    pub records_checksum: u32,
    pub flags: u32,
    pub header_checksum: u32,
}

impl ChunkHeader {
    /// Reads the header fields of `chunk`, or `None` when it is shorter than 512 bytes or the
    /// magic is wrong.
    pub fn parse(chunk: &[u8]) -> Option<ChunkHeader> {
        if chunk.len() < CHUNK_HEADER_SIZE || &chunk[..8] != CHUNK_MAGIC {
            return None;
        }
        Some(ChunkHeader {
            first_record_number: le_u64(chunk, 8),
            last_record_number: le_u64(chunk, 16),
            first_record_id: le_u64(chunk, 24),
            last_record_id: le_u64(chunk, 32),
            header_size: le_u32(chunk, 40),
            last_record_data_offset: le_u32(chunk, 44),
            free_space_offset: le_u32(chunk, 48),
            records_checksum: le_u32(chunk, 52),
            flags: le_u32(chunk, 120),
            header_checksum: le_u32(chunk, 124),
        })
    }

    /// The `--validate-checksums` checks of section 4.2, in order. `chunk` is the full chunk.
    pub fn validate_checksums(&self, chunk: &[u8]) -> Result<(), Failure> {
        if self.flags & CHUNK_FLAG_NO_CRC32 != 0 {
            return Ok(());
        }
        let mut hasher = crc32fast::Hasher::new();
        hasher.update(&chunk[..120]);
        hasher.update(&chunk[128..512]);
        let computed = hasher.finalize();
        if computed != self.header_checksum {
            return Err(Failure::new(
                ErrorKind::BadChunkHeaderChecksum,
                format!(
                    "stored 0x{:08x}, computed 0x{computed:08x}",
                    self.header_checksum
                ),
            ));
        }
        let free = self.free_space_offset as usize;
        if !(CHUNK_HEADER_SIZE..=CHUNK_SIZE).contains(&free) || free > chunk.len() {
            return Err(Failure::new(
                ErrorKind::BadChunkFreeSpaceOffset,
                format!("free space offset {free} is outside 512..=65536"),
            ));
        }
        let computed = crc32fast::hash(&chunk[CHUNK_HEADER_SIZE..free]);
        if computed != self.records_checksum {
            return Err(Failure::new(
                ErrorKind::BadChunkRecordsChecksum,
                format!(
                    "stored 0x{:08x}, computed 0x{computed:08x}",
                    self.records_checksum
                ),
            ));
        }
        Ok(())
    }
}

/// The string-table entries [`check_string_table`] has seen in the current chunk: one bit per
/// possible entry offset, and the words it set, so the next chunk clears only those words (a
/// chunk's table touches a few dozen; clearing all 1,025 cost ~90 instructions per record).
/// Invariant between calls: every set bit lies in a word listed in `touched`.
#[derive(Debug, Default)]
pub struct Visited {
    bits: Vec<u64>,
    touched: Vec<u32>,
}

impl Visited {
    /// Empties the set: the touched words only.
    fn reset(&mut self) {
        if self.bits.is_empty() {
            self.bits.resize(CHUNK_SIZE / 64 + 1, 0);
        }
        for &word in &self.touched {
            self.bits[word as usize] = 0;
        }
        self.touched.clear();
    }

    /// Marks entry `offset` (offsets past the chunk share the last word; they fail when read).
    /// Returns whether it was marked already.
    fn mark(&mut self, offset: u32) -> bool {
        let word = (offset as usize / 64).min(CHUNK_SIZE / 64);
        let bit = 1u64 << (offset % 64);
        let seen = self.bits[word] & bit != 0;
        if self.bits[word] == 0 {
            self.touched.push(word as u32);
        }
        self.bits[word] |= bit;
        seen
    }
}

/// Checks that every entry of the chunk's string table can be read (section 4.3): walks all 64
/// bucket chains, each entry must lie in the chunk and hold valid UTF-16. The failure names the
/// first entry that does not, with the reference's cause where the bytes tell it. `visited` is
/// scratch (reused between chunks).
pub fn check_string_table(chunk: &[u8], visited: &mut Visited) -> Result<(), Failure> {
    visited.reset();
    for bucket in 0..64 {
        let mut offset = le_u32(chunk, 128 + bucket * 4);
        let mut linked = false;
        while offset != 0 {
            if visited.mark(offset) && (offset as usize) < CHUNK_SIZE {
                break;
            }
            let Some(next) = read_name_entry_check(chunk, offset as usize) else {
                return Err(table_fault(chunk, offset, linked));
            };
            offset = next;
            linked = true;
        }
    }
    Ok(())
}

/// The failure of the entry at `offset` (reached through a link when `linked`), with the
/// reference's cause: its walk moves past the chunk (`cursor.position` for a bucket's head,
/// `next xml string` for a link) or reads a name that is not UTF-16 (at its length field). A
/// read the chunk's end cuts short is not told.
#[cold]
fn table_fault(chunk: &[u8], offset: u32, linked: bool) -> Failure {
    let at = offset as usize;
    let cause = if at > chunk.len() {
        let kind = if linked {
            CauseKind::TableLinkPastEnd
        } else {
            CauseKind::TableStartPastEnd
        };
        Some(Cause { kind, offset })
    } else {
        // Readable to the name's end: then the name is what failed.
        get_u16(chunk, at + 6)
            .filter(|count| at + 8 + 2 * usize::from(*count) + 2 <= chunk.len())
            .map(|_| Cause {
                kind: CauseKind::TableNameInvalid,
                offset: offset + 6,
            })
    };
    Failure::new(
        ErrorKind::BadStringTable,
        format!("unreadable string table entry at chunk offset 0x{offset:x}"),
    )
    .with_cause(cause)
}

/// Validates the name entry at `offset` and returns its "next" link.
fn read_name_entry_check(chunk: &[u8], offset: usize) -> Option<u32> {
    let next = get_u32(chunk, offset)?;
    let count = usize::from(get_u16(chunk, offset.checked_add(6)?)?);
    let start = offset + 8;
    let end = start + 2 * count + 2;
    if end > chunk.len() {
        return None;
    }
    crate::escape::utf16_until_nul_is_valid(&chunk[start..start + 2 * count]).then_some(next)
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use crate::records::RECORD_MAGIC;

    /// A chunk holding records of the given `(size, id)` (headers and trailing sizes only).
    pub(crate) fn chunk_with(records: &[(u32, u64)], free: u32, last_id: u64) -> Vec<u8> {
        let mut c = vec![0u8; CHUNK_SIZE];
        c[..8].copy_from_slice(CHUNK_MAGIC);
        c[24..32].copy_from_slice(&1u64.to_le_bytes());
        c[32..40].copy_from_slice(&last_id.to_le_bytes());
        c[48..52].copy_from_slice(&free.to_le_bytes());
        let mut pos = 512;
        let mut last = 512;
        for &(size, id) in records {
            c[pos..pos + 4].copy_from_slice(&RECORD_MAGIC);
            c[pos + 4..pos + 8].copy_from_slice(&size.to_le_bytes());
            c[pos + 8..pos + 16].copy_from_slice(&id.to_le_bytes());
            let end = pos + size as usize;
            c[end - 4..end].copy_from_slice(&size.to_le_bytes());
            last = pos;
            pos = end;
        }
        c[44..48].copy_from_slice(&(last as u32).to_le_bytes());
        c
    }

    #[test]
    fn string_table_with_lone_surrogate_fails() {
        let mut c = chunk_with(&[], 512, 0);
        c[128..132].copy_from_slice(&600u32.to_le_bytes());
        c[606..608].copy_from_slice(&1u16.to_le_bytes());
        c[608..610].copy_from_slice(&0xd800u16.to_le_bytes());
        let mut v = Visited::default();
        assert_eq!(
            check_string_table(&c, &mut v).unwrap_err().kind,
            ErrorKind::BadStringTable
        );
        c[608..610].copy_from_slice(&0x41u16.to_le_bytes());
        assert!(check_string_table(&c, &mut v).is_ok());
        // The marks of the good chunk must not make the next chunk skip the same offset.
        c[608..610].copy_from_slice(&0xdc00u16.to_le_bytes());
        assert!(check_string_table(&c, &mut v).is_err());
    }

    #[test]
    fn string_table_failures_carry_the_reference_causes() {
        let bytes = std::fs::read(
            std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
                .join("../../shared-fixtures/damaged/bad-chunks.evtx"),
        )
        .expect("the fixture is committed");
        let chunk = |n: usize| &bytes[4096 + n * CHUNK_SIZE..4096 + (n + 1) * CHUNK_SIZE];
        let cause = |n: usize| {
            check_string_table(chunk(n), &mut Visited::default())
                .err()
                .and_then(|f| f.cause)
        };
        // The reference's causes for chunks 1 and 2 of the fixture: `cursor.position at offset
        // 131072 is past the end ...` and `name at offset 1082: invalid data`.
        let start = CauseKind::TableStartPastEnd;
        assert_eq!(
            cause(1),
            Some(Cause {
                kind: start,
                offset: 131072
            })
        );
        let name = CauseKind::TableNameInvalid;
        assert_eq!(
            cause(2),
            Some(Cause {
                kind: name,
                offset: 1082
            })
        );
        // Chunk 3's string table is whole.
        assert_eq!(cause(3), None);
        // A valid entry linking past the chunk, and a name the chunk's end cuts short.
        let mut c = chunk_with(&[], 512, 0);
        c[128..132].copy_from_slice(&600u32.to_le_bytes());
        c[600..604].copy_from_slice(&0x1_0001u32.to_le_bytes());
        c[606..608].copy_from_slice(&1u16.to_le_bytes());
        c[608..610].copy_from_slice(&0x41u16.to_le_bytes());
        let link = CauseKind::TableLinkPastEnd;
        let fault = check_string_table(&c, &mut Visited::default()).unwrap_err();
        assert_eq!(
            fault.cause,
            Some(Cause {
                kind: link,
                offset: 0x1_0001
            })
        );
        let cut = (CHUNK_SIZE - 8) as u32;
        c[600..604].copy_from_slice(&cut.to_le_bytes());
        c[CHUNK_SIZE - 2..].copy_from_slice(&4u16.to_le_bytes());
        let fault = check_string_table(&c, &mut Visited::default()).unwrap_err();
        assert_eq!(fault.cause, None);
    }

    #[test]
    fn string_table_cycle_ends_the_walk() {
        // Bucket 0: 600 -> 700 -> 600; bucket 1: 700 (seen). Both names valid ("A").
        let mut c = chunk_with(&[], 512, 0);
        c[128..132].copy_from_slice(&600u32.to_le_bytes());
        c[132..136].copy_from_slice(&700u32.to_le_bytes());
        for (at, next) in [(600usize, 700u32), (700, 600)] {
            c[at..at + 4].copy_from_slice(&next.to_le_bytes());
            c[at + 6..at + 8].copy_from_slice(&1u16.to_le_bytes());
            c[at + 8..at + 10].copy_from_slice(&0x41u16.to_le_bytes());
        }
        let mut v = Visited::default();
        assert!(check_string_table(&c, &mut v).is_ok());
        assert!(check_string_table(&c, &mut v).is_ok());
    }

    #[test]
    fn checksums() {
        let mut c = chunk_with(&[(32, 1)], 512 + 32, 1);
        let records = crc32fast::hash(&c[512..544]);
        c[52..56].copy_from_slice(&records.to_le_bytes());
        let mut hasher = crc32fast::Hasher::new();
        hasher.update(&c[..120]);
        hasher.update(&c[128..512]);
        let head = hasher.finalize();
        c[124..128].copy_from_slice(&head.to_le_bytes());
        assert!(ChunkHeader::parse(&c)
            .unwrap()
            .validate_checksums(&c)
            .is_ok());
        c[520] ^= 1;
        assert_eq!(
            ChunkHeader::parse(&c)
                .unwrap()
                .validate_checksums(&c)
                .unwrap_err()
                .kind,
            ErrorKind::BadChunkRecordsChecksum
        );
    }
}
