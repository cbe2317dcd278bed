//! Error types.
//!
//! Two families: [`FatalError`] ends the whole dump (the file cannot be read as EVTX at all),
//! [`Failure`] is attached to one chunk or one record and never stops the walk. A failure's
//! [`ErrorKind`] is one of the fixed strings of `shared-fixtures/README.md`, and so is its detail
//! (a template per kind, filled from the bytes): both engines print the same line for the same
//! fault, and the parity tool compares them whole.

use std::fmt;

/// An error over its cause as the reference's `anyhow` prints it after `Error: ` (the
/// template subcommands' texts, in both CLIs).
pub fn caused(context: impl fmt::Display, cause: impl fmt::Display) -> String {
    format!("{context}\n\nCaused by:\n    {cause}")
}

/// The fixed error kinds both engines print (see `shared-fixtures/README.md`): the C ABI's
/// status table (`evtx_abi::abi`) holds their values and strings, once for every Rust crate.
pub use evtx_abi::ErrorKind;

/// What the reference names as a failure's cause where the bytes tell it: the reference's
/// error and the offset it prints (the Zig engine's `Cause`). `apply-wevt-cache` prints it as
/// the reference's `Caused by:` chain; the dump's error lines do not use it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Cause {
    /// The reference's error.
    pub kind: CauseKind,
    /// The chunk offset (or value) the reference's error prints.
    pub offset: u32,
}

/// The reference's errors a [`Cause`] names (the Zig engine's `CauseKind`, the same order).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CauseKind {
    /// A string table bucket's head past the chunk (`cursor.position at offset N is past ...`).
    TableStartPastEnd,
    /// A string table entry's link past the chunk (`next xml string at offset N is past ...`).
    TableLinkPastEnd,
    /// A string table name that is not UTF-16 (`name at offset N: invalid data`, N its length
    /// field).
    TableNameInvalid,
    /// A BinXML token byte the reference does not know (`Offset 0x{N:08x}: Tried to read an
    /// invalid byte ...`, N the offset after the byte: the reference's cursor has read it).
    InvalidToken,
    /// A name reference whose length field is past the chunk (`cursor.position at offset N is
    /// past ...`, N the name's offset + 6, where the reference seeks).
    NamePastEnd,
    /// A template definition of no bytes (`Failed to create record model, reason: empty BinXML
    /// slice`, N the definition's offset, not printed).
    EmptyDefinition,
    /// A template definition whose data size runs past the chunk (`Failed to create record
    /// model, reason: template data out of bounds`, N the definition's offset, not printed).
    DefinitionPastEnd,
    /// The rest are a `.wevtcache` TEMP's BinXML (`apply-wevt-cache`), N from its start.
    /// A value type byte the reference does not know (`Offset 0x{N:08x}: Tried to read an
    /// invalid byte `0x{T:2x}` as binxml value variant`, N the offset after the byte).
    InvalidValueType,
    /// An inline name whose stored hash is not its units' (`Offset 0x{N:08x}: WEVT inline name
    /// hash mismatch (expected 0x{H:04x}, found 0x{S:04x})`, N the name's offset).
    NameHashMismatch,
    /// An inline name whose NUL unit is not 0 (`Offset 0x{N:08x}: WEVT inline name missing NUL
    /// terminator (found 0x{U:04x})`, N the name's offset).
    NameWithoutNul,
    /// A field cut by the BinXML's end (`buffer too small for {what} at offset N (need {need}
    /// bytes, have {L - N})`, L the BinXML's length).
    Truncated {
        /// The reference's name of the field.
        what: &'static str,
        /// The field's bytes.
        need: u32,
    },
    /// Tokens the reference's tree builder refuses (`Failed to create record model, reason:
    /// {0}`, N where it noticed, not printed).
    Model(&'static str),
}

/// A failed chunk or record: its kind and its detail (vocabulary in `shared-fixtures/README.md`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Failure {
    /// The fixed kind string.
    pub kind: ErrorKind,
    /// The detail after the kind, the same in both engines (may be empty).
    pub detail: String,
    /// The reference's cause, where the bytes tell it.
    pub cause: Option<Cause>,
}

impl Failure {
    /// A failure of `kind` with `detail`.
    #[cold]
    pub fn new(kind: ErrorKind, detail: impl Into<String>) -> Failure {
        Failure {
            kind,
            detail: detail.into(),
            cause: None,
        }
    }

    /// The failure with the reference's `cause`.
    #[cold]
    pub fn with_cause(self, cause: Option<Cause>) -> Failure {
        Failure { cause, ..self }
    }

    /// A record refused only for its rendered size (contract 12, `record output too large`):
    /// its tree was read whole. The template subcommands read records as the reference's
    /// iterator does, which renders nothing, so this is no failure of theirs.
    pub fn is_output_limit(&self) -> bool {
        self.kind == ErrorKind::BadBinxml && self.detail == binxml_detail("record output too large")
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

    /// The record-level failure for this error, in a chunk of `chunk_len` bytes: with the
    /// reference's cause where the reference names the same fault at the same offset.
    #[cold]
    pub fn into_failure(self, chunk_len: usize) -> Failure {
        let at = self.offset;
        let cause = match self.what {
            // The reference's cursor is past the byte it read.
            "invalid token" => Some((CauseKind::InvalidToken, at + 1)),
            // The reference seeks to the name's length field, past its link (6 bytes).
            "name out of bounds" => at
                .checked_add(6)
                .filter(|&field| field as usize > chunk_len)
                .map(|field| (CauseKind::NamePastEnd, field)),
            "empty template definition" => Some((CauseKind::EmptyDefinition, at)),
            "template data out of bounds" => Some((CauseKind::DefinitionPastEnd, at)),
            _ => None,
        };
        let cause = cause.map(|(kind, offset)| Cause { kind, offset });
        Failure::binxml(self.what).with_cause(cause)
    }
}

impl Failure {
    /// A `bad binxml` failure for the fault `what` (one of this crate's BinXML error texts),
    /// with the shared detail of its class.
    #[cold]
    pub fn binxml(what: &str) -> Failure {
        Failure::new(ErrorKind::BadBinxml, binxml_detail(what))
    }
}

/// The `bad binxml` detail vocabulary (shared-fixtures/README.md): one phrase per class of
/// fault, the classes the Zig engine's error set draws (its `dump.binxmlDetail` has the same
/// phrases). Finer texts here fold into them so both engines print the same line.
pub fn binxml_detail(what: &str) -> &'static str {
    match what {
        "invalid token" | "substitution outside a template definition" => "invalid token",
        "start tag inside a start tag"
        | "close start without start"
        | "close empty without start"
        | "end element without open element"
        | "attribute outside a start tag"
        | "BinXML value inside a start tag"
        | "template instance inside a start tag"
        | "unclosed element at end of stream" => "token out of place",
        "BinXML nested too deeply"
        | "elements nested too deeply"
        | "template elements nested too deeply" => "nested too deeply",
        "value outside of element" => "value outside an element",
        "template definition without exactly one root element" | "empty template definition" => {
            "template definition without exactly one root element"
        }
        "template instance inside a template definition" => {
            "template instance inside a template definition"
        }
        "too many nodes"
        | "too many nodes in record"
        | "too many nodes in chunk"
        | "too many template definitions in chunk" => "too many nodes",
        "name is not valid UTF-16" => "name is not valid UTF-16",
        "element or PI inside an attribute value" => "element or PI inside an attribute value",
        "PI data without target" => "PI data without target",
        "record output too large" | "record output too large or too deep" => {
            "record output too large"
        }
        "empty BinXML window" => "empty BinXML",
        "invalid value type" | "invalid substitution type" | "invalid value type in descriptor" => {
            "invalid value type"
        }
        "odd-sized UTF-16 string" => "odd-sized UTF-16 string",
        "unsupported SizeT/EvtHandle size" | "misaligned SizeT array" => {
            "bad SizeT or EvtHandle size"
        }
        "misaligned array" => "misaligned array",
        "invalid ANSI sequence" => "invalid ANSI sequence",
        "unsupported value type" | "unsupported value type in value text" => {
            "unsupported value type"
        }
        // Everything else is a read past the chunk or a definition: "unexpected end of chunk",
        // "... past the end of the chunk", "... out of bounds", "truncated ...".
        _ => "out of bounds",
    }
}

/// The detail of a record header error of `kind` at chunk offset `pos` (templates in
/// shared-fixtures/README.md), read from the header bytes.
#[cold]
pub fn record_detail(kind: ErrorKind, chunk: &[u8], pos: usize) -> String {
    let bytes = chunk.get(pos..).unwrap_or(&[]);
    let le = |at: usize, n: usize| {
        bytes.get(at..at + n).map_or(0, |b| {
            b.iter().rev().fold(0u64, |v, &x| v << 8 | u64::from(x))
        })
    };
    match kind {
        ErrorKind::BadRecordMagic => format!("found {}", hex(&bytes[..bytes.len().min(4)])),
        ErrorKind::TruncatedRecordHeader => format!("{} bytes left in the chunk", bytes.len()),
        ErrorKind::BadRecordTimestamp => format!("FILETIME 0x{:016x}", le(16, 8)),
        ErrorKind::BadRecordSize => format!("size {}", le(4, 4)),
        _ => String::new(),
    }
}

/// Lowercase hex of `bytes`, no separators.
pub fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
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
                "An error occurred while trying to deserialize evtx stream: the file is {len} \
                    bytes, shorter than the 4096-byte file header"
            ),
            FatalError::BadMagic => write!(
                f,
                "An error occurred while trying to deserialize evtx stream: invalid EVTX file \
                    header magic, expected `ElfFile\\0`"
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_the_output_size_is_an_output_limit_failure() {
        // The template subcommands read on past exactly this failure (the reference's
        // iterator renders nothing); any other keeps failing the record there.
        assert!(Failure::binxml("record output too large or too deep").is_output_limit());
        assert!(Failure::binxml("record output too large").is_output_limit());
        assert!(!Failure::binxml("invalid token").is_output_limit());
        assert!(
            !Failure::new(ErrorKind::BadRecordSize, "record output too large").is_output_limit()
        );
    }

    #[test]
    fn binxml_failures_carry_the_reference_causes() {
        let cause = |what, at| BinXmlError::new(what, at).into_failure(65536).cause;
        let told = |kind, offset| Some(Cause { kind, offset });
        // `damaged/invalid-binxml` record 1: the token at 0x236, the reference's `Offset
        // 0x00000237` (its cursor is past the byte).
        assert_eq!(
            cause("invalid token", 0x236),
            told(CauseKind::InvalidToken, 0x237)
        );
        // `damaged/bad-offsets` record 2: the name at 0x123450, the reference's `cursor.position
        // at offset 1193046` (its length field).
        assert_eq!(
            cause("name out of bounds", 0x12_3450),
            told(CauseKind::NamePastEnd, 1_193_046)
        );
        // Its length field in the chunk (cut short), or past `u32` (the reference's overflow
        // error): not told.
        assert_eq!(cause("name out of bounds", 65530), None);
        assert_eq!(cause("name out of bounds", u32::MAX as usize - 2), None);
        assert_eq!(
            cause("empty template definition", 0),
            told(CauseKind::EmptyDefinition, 0)
        );
        // `damaged/unused-binxml-json` record 2 (JSON, the tree path): the definition at 0xff00.
        assert_eq!(
            cause("template data out of bounds", 0xFF00),
            told(CauseKind::DefinitionPastEnd, 0xFF00)
        );
        // Both definition faults have the same line.
        let empty = BinXmlError::new("empty template definition", 0).into_failure(65536);
        assert_eq!(
            empty.detail,
            "template definition without exactly one root element"
        );
        assert_eq!(cause("value past the end of the chunk", 700), None);
    }
}
