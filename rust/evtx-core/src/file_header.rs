//! The 4096-byte file header block (contract section 2).

use crate::bytes::{le_u16, le_u32, le_u64};
use crate::error::FatalError;

/// Size of the file header block used to locate chunks (always 4096, section 1).
pub const FILE_HEADER_BLOCK: usize = 4096;
/// Every chunk slot is exactly this long (section 3.1).
pub const CHUNK_SIZE: usize = 65536;
/// `ElfFile\0`.
pub const FILE_MAGIC: &[u8; 8] = b"ElfFile\0";
/// File flag: the header and chunk CRCs are not maintained.
pub const FLAG_NO_CRC32: u32 = 0x4;

/// The fields of the file header. Only `header_block_size` and the CRC matter for output.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FileHeader {
    pub first_chunk_number: u64,
    pub last_chunk_number: u64,
    pub next_record_id: u64,
    pub header_size: u32,
    pub minor_version: u16,
    pub major_version: u16,
    pub header_block_size: u16,
    pub chunk_count: u16,
    pub flags: u32,
    pub stored_checksum: u32,
    pub computed_checksum: u32,
}

impl FileHeader {
    /// Parses and checks the header of `data` (the whole file).
    ///
    /// Fatal when the file is shorter than 4096 bytes, the magic is wrong, or the file is shorter
    /// than the header block size field.
    pub fn parse(data: &[u8]) -> Result<FileHeader, FatalError> {
        if data.len() < FILE_HEADER_BLOCK {
            return Err(FatalError::TooShort(data.len()));
        }
        FileHeader::parse_block(&data[..FILE_HEADER_BLOCK], data.len() as u64)
    }

    /// Parses and checks the first 4096 bytes `block` of a file of `file_len` bytes (the same
    /// checks as [`FileHeader::parse`], for input read through windows).
    pub fn parse_block(block: &[u8], file_len: u64) -> Result<FileHeader, FatalError> {
        let header = FileHeader::read_block(block)?;
        if file_len < u64::from(header.header_block_size) {
            return Err(FatalError::ShorterThanHeaderBlock {
                len: file_len as usize,
                header_block_size: header.header_block_size,
            });
        }
        Ok(header)
    }

    /// The fields of the first 4096 bytes `block` of a file, checking only its length and
    /// magic (`info` reads a header that the dump would refuse).
    pub fn read_block(block: &[u8]) -> Result<FileHeader, FatalError> {
        if block.len() < FILE_HEADER_BLOCK {
            return Err(FatalError::TooShort(block.len()));
        }
        let data = block;
        if &data[..8] != FILE_MAGIC {
            return Err(FatalError::BadMagic);
        }
        let header = FileHeader {
            first_chunk_number: le_u64(data, 8),
            last_chunk_number: le_u64(data, 16),
            next_record_id: le_u64(data, 24),
            header_size: le_u32(data, 32),
            minor_version: le_u16(data, 36),
            major_version: le_u16(data, 38),
            header_block_size: le_u16(data, 40),
            chunk_count: le_u16(data, 42),
            flags: le_u32(data, 120),
            stored_checksum: le_u32(data, 124),
            computed_checksum: crc32fast::hash(&data[..120]),
        };
        Ok(header)
    }

    /// Whether the CRC warning of section 2 applies.
    pub fn checksum_mismatch(&self) -> bool {
        self.flags & FLAG_NO_CRC32 == 0 && self.stored_checksum != self.computed_checksum
    }

    /// The warning line printed when [`FileHeader::checksum_mismatch`] holds (without newline).
    pub fn checksum_warning(&self) -> String {
        format!(
            "warning: the file header's CRC32 is invalid (stored 0x{:08x}, computed 0x{:08x}); \
                reading the file anyway",
            self.stored_checksum, self.computed_checksum
        )
    }

    /// Number of chunk slots for a file of `file_len` bytes (section 3.1).
    pub fn chunk_slots(&self, file_len: usize) -> usize {
        (file_len - usize::from(self.header_block_size)) / CHUNK_SIZE
    }
}

/// File offset of chunk slot `slot` (the header block is always 4096 bytes here, section 1).
pub fn chunk_offset(slot: u32) -> u64 {
    FILE_HEADER_BLOCK as u64 + u64::from(slot) * CHUNK_SIZE as u64
}

#[cfg(test)]
mod tests {
    use super::*;

    fn header() -> Vec<u8> {
        let mut data = vec![0u8; 4096];
        data[..8].copy_from_slice(FILE_MAGIC);
        data[40..42].copy_from_slice(&4096u16.to_le_bytes());
        let crc = crc32fast::hash(&data[..120]);
        data[124..128].copy_from_slice(&crc.to_le_bytes());
        data
    }

    #[test]
    fn short_file_is_fatal() {
        assert_eq!(FileHeader::parse(&[0; 100]), Err(FatalError::TooShort(100)));
    }

    #[test]
    fn bad_magic_is_fatal() {
        let mut data = header();
        data[0] = b'X';
        assert_eq!(FileHeader::parse(&data), Err(FatalError::BadMagic));
    }

    #[test]
    fn crc_mismatch_is_a_warning_unless_no_crc32() {
        let mut data = header();
        assert!(!FileHeader::parse(&data).unwrap().checksum_mismatch());
        data[124] ^= 1;
        let h = FileHeader::parse(&data).unwrap();
        assert!(h.checksum_mismatch());
        assert!(h
            .checksum_warning()
            .starts_with("warning: the file header's CRC32 is invalid (stored 0x"));
        data[120] = 4; // NO_CRC32 (changes the computed CRC too, still no warning)
        assert!(!FileHeader::parse(&data).unwrap().checksum_mismatch());
    }

    #[test]
    fn chunk_slots_ignore_partial_chunk() {
        let h = FileHeader::parse(&header()).unwrap();
        assert_eq!(h.chunk_slots(4096 + 65536 * 2 + 100), 2);
    }
}
