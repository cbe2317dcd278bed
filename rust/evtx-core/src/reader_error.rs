//! The one error of the side readers (`.MTA`, `.wevtcache`, the CRIM/WEVT blobs inside a cache,
//! PE files): which reader refused the file, where, and why. The CLIs print it as one line,
//! `error: <PATH>: offset 0x<O>: <what>`, as the dump's own failures name path and offset
//! (shared-fixtures/README.md, "Damaged side files"); `zig/src/reader_error.zig` is the twin.

use std::fmt;

/// The reader that found the damage.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ReaderKind {
    /// An `.MTA` file (`--mta`).
    Mta,
    /// The `.wevtcache` container: header and entry headers.
    Cache,
    /// A CRIM/WEVT manifest, one entry of a `.wevtcache`.
    Crim,
    /// A PE file (`extract-wevt-templates`).
    Pe,
}

/// Damage in a side file. Invariant: `offset` is a byte offset in the file the user named
/// (never relative to a blob or section), the place of the value the reader could not follow
/// or the first byte of the structure it could not read; `what` is one line (the reference's
/// words, without the file's path).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ReaderError {
    pub kind: ReaderKind,
    pub offset: u64,
    pub what: String,
}

impl ReaderError {
    #[cold]
    pub fn new(kind: ReaderKind, offset: u64, what: impl fmt::Display) -> ReaderError {
        let what = what.to_string();
        debug_assert!(!what.contains('\n'), "one line: {what}");
        ReaderError { kind, offset, what }
    }

    /// The stderr line for the file at `path` (as given on the command line), no newline.
    pub fn line(&self, path: &str) -> String {
        format!("error: {path}: offset 0x{:x}: {}", self.offset, self.what)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn line_names_path_and_hex_offset() {
        let e = ReaderError::new(ReaderKind::Pe, 0x1a2, "malformed PE file: x");
        assert_eq!(
            e.line("a b.dll"),
            "error: a b.dll: offset 0x1a2: malformed PE file: x"
        );
    }
}
