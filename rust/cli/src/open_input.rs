//! Opening an input log (the dump's INPUT, `dump-template-instances -i`, `apply-wevt-cache
//! --evtx`) read-only as chunk windows, and, when it cannot be, the reference's words for every
//! form of input, byte for byte (evtx-zig: `zig/cli/open_input.zig`, the same steps and words).
//!
//! The reference's `EvtxParser::from_path` canonicalizes the path, opens it, reads the 4096-byte
//! header block with `read_exact`, checks the magic, then seeks to the end for the length; anyhow
//! prints the failed step's chain under `Failed to open evtx file at: PATH`. We take the same
//! steps, so the same step fails with the same cause: a missing file or a symlink loop at the
//! canonicalization, a file without read permission at the open (named by its canonical path, as
//! the reference names it), a directory at the first read (`Is a directory`), an empty or short
//! file or `/dev/null` at `read_exact` (`failed to fill whole buffer`), a pipe (a FIFO, `<(...)`)
//! at the seek (`Illegal seek`). A regular file is then read through positioned reads; a
//! character or block device that seeks is spooled from its start, as standard input is.

use crate::platform;
use evtx_core::{FatalError, Input};
use std::fs::{self, File};
use std::io::{self, Read, Seek, SeekFrom};
use std::path::Path;

/// The first line when a path cannot be read as a log.
fn path_head(path: &str) -> String {
    format!("Failed to open evtx file at: {path}")
}

/// The first line when standard input's bytes are not a log.
const STDIN_HEAD: &str = "Failed to parse EVTX data from stdin";

/// The reference's error chains (its `InputError`, `DeserializationError` and `EvtxError::IO`).
const READ_INPUT: &str =
    "0: An error occurred while trying to read input.\n    1: Failed to open file";
const DESERIALIZE: &str = "0: An error occurred while trying to deserialize evtx stream.\n    1: ";
const HEADER_BLOCK: &str = "failed to read EVTX file header block: ";
const IO_ERROR: &str = "0: An IO error occured.\n    1: ";

/// `head` and its causes as anyhow prints them (after `Error: `).
#[cold]
fn chain(head: &str, causes: &str) -> String {
    format!("{head}\n\nCaused by:\n    {causes}")
}

/// The canonicalization or the open failed: the path the reference names (the canonical one
/// once it is known) and the OS error as Rust prints it (`... (os error N)`).
#[cold]
fn open_failed(path: &str, named: &Path, e: &io::Error) -> String {
    chain(
        &path_head(path),
        &format!(
            "{READ_INPUT} {}\n    2: {}",
            named.display(),
            platform::os_error(e)
        ),
    )
}

/// The header block could not be read whole: `read_exact`'s error (`failed to fill whole
/// buffer` at the end of the input).
#[cold]
fn header_unread(head: &str, e: &io::Error) -> String {
    chain(
        head,
        &format!("{DESERIALIZE}{HEADER_BLOCK}{}", platform::os_error(e)),
    )
}

/// The error of a header the engine refused, `magic` the input's first 8 bytes.
#[cold]
pub(crate) fn header_refused(head: &str, e: &FatalError, magic: [u8; 8]) -> String {
    match e {
        FatalError::TooShort(_) => chain(
            head,
            &format!("{DESERIALIZE}{HEADER_BLOCK}failed to fill whole buffer"),
        ),
        FatalError::BadMagic => {
            // The magic as the reference's `{:2X?}` shows a byte array.
            let bytes: Vec<String> = magic.iter().map(|b| format!("{b:2X}")).collect();
            chain(
                head,
                &format!(
                    "{DESERIALIZE}Invalid EVTX file header magic, expected `ElfFile0`, found \
                     `[{}]`",
                    bytes.join(", ")
                ),
            )
        }
        FatalError::ShorterThanHeaderBlock {
            len,
            header_block_size,
        } => chain(
            head,
            &format!(
                "Calculation Error, reason: Could not calculate valid chunk count because stream \
                 size is less than evtx header block size. (stream_size: {len}, \
                 header_block_size: {header_block_size})"
            ),
        ),
        FatalError::Other(message) => chain(head, message),
    }
}

/// Opens the log at `path`, or the reference's text of the step that failed. `output` (`-f`)
/// naming the same file is refused before anything is read.
pub(crate) fn open_path(path: &str, output: Option<&Path>) -> Result<Input, String> {
    let named = fs::canonicalize(path).map_err(|e| open_failed(path, Path::new(path), &e))?;
    let file = platform::open_read_only(path).map_err(|e| open_failed(path, &named, &e))?;
    if let Some(output) = output {
        refuse_output_on_input(&file, output, path)?;
    }
    let head = path_head(path);
    if file.metadata().is_ok_and(|m| m.is_dir()) {
        // The reference's first read of a directory fails with `EISDIR`; Windows opens none
        // as a file, so the kind decides, in the same words on both.
        let is_dir = platform::IS_A_DIRECTORY;
        return Err(chain(
            &head,
            &format!("{DESERIALIZE}{HEADER_BLOCK}{is_dir}"),
        ));
    }
    if evtx_core::input::is_regular(&file) {
        return open_checked(file, &head);
    }
    // Not a regular file: the header block first, as the reference reads it.
    let mut block = [0u8; evtx_core::file_header::FILE_HEADER_BLOCK];
    (&file)
        .read_exact(&mut block)
        .map_err(|e| header_unread(&head, &e))?;
    if let Err(e) = evtx_core::file_header::FileHeader::read_block(&block) {
        return Err(header_refused(&head, &e, magic_of(&block)));
    }
    let io_failed = |e: io::Error| chain(&head, &format!("{IO_ERROR}{}", platform::os_error(&e)));
    (&file).seek(SeekFrom::End(0)).map_err(io_failed)?;
    (&file).seek(SeekFrom::Start(0)).map_err(io_failed)?;
    let spooled = evtx_core::input::spool(&mut &file, &std::env::temp_dir()).map_err(|e| {
        let e = platform::os_error(&e);
        chain(&head, &format!("failed to copy the input: {e}"))
    })?;
    open_checked(spooled.ok_or_else(|| header_unread(&head, &eof()))?, &head)
}

/// Opens standard input, spooled to a temporary file, or the reference's text.
pub(crate) fn open_stdin(output: Option<&Path>, name: &str) -> Result<Input, String> {
    let stdin = platform::stdin_file().map_err(|e| {
        chain(
            "Failed to read EVTX data from stdin",
            &platform::os_error(&e),
        )
    })?;
    if let Some(output) = output {
        refuse_output_on_input(&stdin, output, name)?;
    }
    match evtx_core::input::spool(&mut &stdin, &std::env::temp_dir()) {
        Err(e) => Err(chain(
            "Failed to read EVTX data from stdin",
            &platform::os_error(&e),
        )),
        Ok(None) => Err("No input received on stdin".to_string()),
        Ok(Some(spooled)) => open_checked(spooled, STDIN_HEAD),
    }
}

/// The engine's header checks on a file read through positioned reads.
fn open_checked(file: File, head: &str) -> Result<Input, String> {
    // A second handle, to quote the magic if the header is refused.
    let probe = file.try_clone().ok();
    Input::open(file).map_err(|e| {
        let mut magic = [0u8; 8];
        if let Some(probe) = probe {
            let _ = platform::read_at(&probe, &mut magic, 0);
        }
        header_refused(head, &e, magic)
    })
}

fn magic_of(block: &[u8]) -> [u8; 8] {
    let mut magic = [0u8; 8];
    magic.copy_from_slice(&block[..8]);
    magic
}

/// `read_exact`'s error at the end of the input (its own text, which `io::Error::from` of the
/// kind is not).
fn eof() -> io::Error {
    let mut empty: &[u8] = &[];
    match empty.read_exact(&mut [0]) {
        Err(e) => e,
        Ok(()) => unreachable!("an empty reader ends before one byte"),
    }
}

/// Fails when `output` exists and is the same file as `input_file` (through any path or link):
/// the input is evidence, never overwritten.
fn refuse_output_on_input(input_file: &File, output: &Path, input: &str) -> Result<(), String> {
    let (Some(out), Some(inp)) = (
        platform::identity_at(output),
        platform::identity_of(input_file),
    ) else {
        return Ok(());
    };
    if out == inp {
        return Err(format!(
            "refusing to write the output to `{}`: it is the input file `{input}`",
            output.display()
        ));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn read_exact_at_the_end_says_what_the_reference_says() {
        // The reference's text for an empty or short input is `read_exact`'s own error.
        let mut short: &[u8] = &[1, 2, 3];
        let e = short.read_exact(&mut [0; 8]).unwrap_err();
        assert_eq!(e.to_string(), eof().to_string());
        assert_eq!(e.to_string(), "failed to fill whole buffer");
    }

    #[test]
    fn header_errors_in_the_reference_words() {
        let magic = *b"ElfFilX\0";
        assert_eq!(
            header_refused("H", &FatalError::BadMagic, magic),
            "H\n\nCaused by:\n    0: An error occurred while trying to deserialize evtx \
             stream.\n    1: Invalid EVTX file header magic, expected `ElfFile0`, found \
             `[45, 6C, 66, 46, 69, 6C, 58,  0]`"
        );
        assert_eq!(
            header_refused("H", &FatalError::TooShort(7), magic),
            "H\n\nCaused by:\n    0: An error occurred while trying to deserialize evtx \
             stream.\n    1: failed to read EVTX file header block: failed to fill whole buffer"
        );
    }
}
