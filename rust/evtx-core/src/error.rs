//! Error types.
//!
//! Two families: [`FatalError`] ends the whole dump (the file cannot be read as EVTX at all),
//! [`Failure`] is attached to one chunk or one record and never stops the walk. A failure's
//! [`ErrorKind`] is one of the fixed strings of `shared-fixtures/README.md`; its detail is free
//! text for humans and is not compared between engines.

use std::fmt;

/// The fixed error kinds both engines print (see `shared-fixtures/README.md`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ErrorKind {
    /// A chunk slot inside the file shorter than 65536 bytes.
    IncompleteChunk,
    /// Chunk magic is not `ElfChnk\0`.
    BadChunkMagic,
    /// `--validate-checksums`: header CRC mismatch.
    BadChunkHeaderChecksum,
    /// `--validate-checksums`: free space offset outside `512..=65536`.
    BadChunkFreeSpaceOffset,
    /// `--validate-checksums`: records CRC mismatch.
    BadChunkRecordsChecksum,
    /// The chunk's string table cannot be read.
    BadStringTable,
    /// Record magic is not `**\0\0`.
    BadRecordMagic,
    /// Fewer than 24 bytes left in the chunk.
    TruncatedRecordHeader,
    /// Record FILETIME beyond year 9999.
    BadRecordTimestamp,
    /// Size < 28, or the record would pass the chunk end.
    BadRecordSize,
    /// Any BinXML parse or render error of the record.
    BadBinxml,
}

impl ErrorKind {
    /// The exact string printed in error lines.
    pub fn as_str(self) -> &'static str {
        match self {
            ErrorKind::IncompleteChunk => "incomplete chunk",
            ErrorKind::BadChunkMagic => "bad chunk magic",
            ErrorKind::BadChunkHeaderChecksum => "bad chunk header checksum",
            ErrorKind::BadChunkFreeSpaceOffset => "bad chunk free space offset",
            ErrorKind::BadChunkRecordsChecksum => "bad chunk records checksum",
            ErrorKind::BadStringTable => "bad string table",
            ErrorKind::BadRecordMagic => "bad record magic",
            ErrorKind::TruncatedRecordHeader => "truncated record header",
            ErrorKind::BadRecordTimestamp => "bad record timestamp",
            ErrorKind::BadRecordSize => "bad record size",
            ErrorKind::BadBinxml => "bad binxml",
        }
    }
}

impl fmt::Display for ErrorKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A failed chunk or record: its kind and a free-text detail.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Failure {
    /// The fixed kind string.
    pub kind: ErrorKind,
    /// Engine-specific detail (may be empty).
    pub detail: String,
}

impl Failure {
    /// A failure of `kind` with `detail`.
    #[cold]
    pub fn new(kind: ErrorKind, detail: impl Into<String>) -> Failure {
        Failure {
            kind,
            detail: detail.into(),
        }
    }
}

impl fmt::Display for Failure {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.detail.is_empty() {
            write!(f, "{}", self.kind)
        } else {
            write!(f, "{}: {}", self.kind, self.detail)
        }
    }
}

/// A BinXML error inside one record. Kept small (a static message and an offset) so the
/// success path never builds strings; turned into a [`Failure`] of kind
/// [`ErrorKind::BadBinxml`] at the record boundary.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct BinXmlError {
    /// What went wrong.
    pub what: &'static str,
    /// Chunk offset where it was noticed.
    pub offset: u32,
}

impl BinXmlError {
    /// Builds the error. Cold: errors are rare and must not bloat the hot path.
    #[cold]
    #[inline(never)]
    pub fn new(what: &'static str, offset: usize) -> BinXmlError {
        BinXmlError {
            what,
            offset: offset as u32,
        }
    }

    /// The record-level failure for this error.
    #[cold]
    pub fn into_failure(self) -> Failure {
        Failure::new(
            ErrorKind::BadBinxml,
            format!("{} at chunk offset 0x{:x}", self.what, self.offset),
        )
    }
}

/// Result of BinXML parsing and rendering.
pub type BinXmlResult<T> = Result<T, BinXmlError>;

/// An error that stops the dump (exit status 1 in the CLI).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum FatalError {
    /// The file is shorter than the 4096-byte header block.
    TooShort(usize),
    /// The header magic is not `ElfFile\0`.
    BadMagic,
    /// The file is shorter than the header block size field says.
    ShorterThanHeaderBlock { len: usize, header_block_size: u16 },
    /// Any other fatal problem (input, output, options).
    Other(String),
}

impl fmt::Display for FatalError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            FatalError::TooShort(len) => write!(
                f,
                "An error occurred while trying to deserialize evtx stream: the file is {len} bytes, shorter than the 4096-byte file header"
            ),
            FatalError::BadMagic => write!(
                f,
                "An error occurred while trying to deserialize evtx stream: invalid EVTX file header magic, expected `ElfFile\\0`"
            ),
            FatalError::ShorterThanHeaderBlock {
                len,
                header_block_size,
            } => write!(
                f,
                "the file is {len} bytes, shorter than its header block size {header_block_size}"
            ),
            FatalError::Other(message) => f.write_str(message),
        }
    }
}

impl std::error::Error for FatalError {}
