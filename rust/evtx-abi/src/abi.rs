//! The types of the C ABI. Everything here is `#[repr(C)]` or `#[repr(u32)]` with fixed-width
//! fields, so `include/evtx.h` (generated from this crate by cbindgen) can be mirrored exactly by
//! the Zig library and read by ctypes/cffi/cgo without guessing at layouts.
//!
//! `rust/capi` (libevtx_rs) and the reference shim (`compare/reference`, libevtx_ref) both
//! depend on this crate, so the Rust-built libraries cannot drift apart on a type; the Zig
//! library is held to the header at compile time (`compare/harness/abi_conformance.zig`).
//!
//! [`evtx_status::name`] is the one table of status names and error KIND strings in Rust: the
//! engine's [`ErrorKind`] prints them, `evtx_status_name` returns them, and the Zig conformance
//! test reads this file to hold `zig/capi/capi.zig` to the same strings.
#![allow(non_camel_case_types)]

use std::ffi::{c_char, c_void, CStr};
use std::fmt;

/// The version of this ABI. It changes whenever a function, type, field or constant changes
/// incompatibly; `evtx_abi_version()` returns the value the library was built with.
pub const EVTX_ABI_VERSION: u32 = 3;

/// `evtx_record.record_id` of a chunk error: no record identifier is known.
pub const EVTX_RECORD_ID_UNKNOWN: u64 = u64::MAX;

/// `evtx_record.checksum`: the chunk's CRC32s were not checked (no `validate_checksums`, a
/// chunk that keeps none, the cut last chunk, an error entry, or a library that cannot tell).
pub const EVTX_CHECKSUM_UNCHECKED: u8 = 0;

/// `evtx_record.checksum`: the chunk's header and records CRC32s match.
pub const EVTX_CHECKSUM_OK: u8 = 1;

/// `evtx_record.checksum`: one of the chunk's CRC32s does not match.
pub const EVTX_CHECKSUM_BAD: u8 = 2;

/// Result of every `evtx_*` function that can fail, and the status of a pulled record.
///
/// `EVTX_STATUS_OK` and `EVTX_STATUS_END` are not errors. The values from
/// `EVTX_STATUS_INCOMPLETE_CHUNK` on are per-chunk or per-record errors (the KINDs of
/// `shared-fixtures/README.md`; `evtx_status_name` returns the KIND string): the input goes on
/// after them. The values in between are failures of the call itself.
#[repr(u32)]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum evtx_status {
    /// Success: a record was rendered, or the call did what it says.
    Ok = 0,
    /// `evtx_parser_next`: there are no more records.
    End = 1,
    /// A required pointer argument was NULL.
    NullArgument = 2,
    /// An option is out of range: unknown format, unknown or non-ASCII-compatible ANSI code
    /// page label, `event_ranges` NULL with a non-zero count, non-zero `reserved` bytes, a
    /// `version` newer than the library's, a bad filter (a list NULL with a non-zero count, a
    /// range whose `first` is greater than its `last`, a NULL, empty or non-UTF-8 name,
    /// `since` not before `until`), a damaged `mta_path` or `wevt_cache_path` file.
    InvalidOptions = 3,
    /// An option the backend does not implement (for example `recover_records`).
    Unsupported = 4,
    /// The path (or `mta_path`, `wevt_cache_path`) could not be opened or read. The message
    /// names the OS error.
    Io = 5,
    /// Not an EVTX file: shorter than the 4096-byte file header, or its magic is not
    /// `ElfFile\0`. Fatal, as for the CLI (exit status 1).
    NotEvtx = 6,
    /// `evtx_parser_dump`: a callback returned non-zero, so the dump stopped.
    CallbackAborted = 7,
    /// The parser is in a state that does not allow the call (a dump after a failed dump, a
    /// pull after the parser failed fatally).
    BadState = 8,
    /// The backend panicked or failed internally; the handle must only be freed.
    Internal = 9,
    /// The backend does not implement this function yet.
    NotImplemented = 10,
    /// A chunk slot inside the file shorter than 65536 bytes.
    IncompleteChunk = 16,
    /// Chunk magic is not `ElfChnk\0`.
    BadChunkMagic = 17,
    /// `validate_checksums`: the chunk header CRC does not match.
    BadChunkHeaderChecksum = 18,
    /// `validate_checksums`: the free space offset is outside 512..=65536.
    BadChunkFreeSpaceOffset = 19,
    /// `validate_checksums`: the records CRC does not match.
    BadChunkRecordsChecksum = 20,
    /// The chunk's string table cannot be read.
    BadStringTable = 21,
    /// Record magic is not `**\0\0`.
    BadRecordMagic = 22,
    /// Fewer than 24 bytes left in the chunk for a record header.
    TruncatedRecordHeader = 23,
    /// The record's FILETIME is beyond year 9999.
    BadRecordTimestamp = 24,
    /// Record size < 28, or the record would pass the chunk end.
    BadRecordSize = 25,
    /// Any BinXML parse or render error of the record.
    BadBinxml = 26,
}

impl evtx_status {
    /// Every status, in value order.
    ///
    /// cbindgen:ignore
    pub const ALL: [evtx_status; 22] = [
        evtx_status::Ok,
        evtx_status::End,
        evtx_status::NullArgument,
        evtx_status::InvalidOptions,
        evtx_status::Unsupported,
        evtx_status::Io,
        evtx_status::NotEvtx,
        evtx_status::CallbackAborted,
        evtx_status::BadState,
        evtx_status::Internal,
        evtx_status::NotImplemented,
        evtx_status::IncompleteChunk,
        evtx_status::BadChunkMagic,
        evtx_status::BadChunkHeaderChecksum,
        evtx_status::BadChunkFreeSpaceOffset,
        evtx_status::BadChunkRecordsChecksum,
        evtx_status::BadStringTable,
        evtx_status::BadRecordMagic,
        evtx_status::TruncatedRecordHeader,
        evtx_status::BadRecordTimestamp,
        evtx_status::BadRecordSize,
        evtx_status::BadBinxml,
    ];

    /// The status with this value, if there is one.
    pub fn from_u32(value: u32) -> Option<evtx_status> {
        evtx_status::ALL
            .into_iter()
            .find(|status| *status as u32 == value)
    }

    /// The status's name, what `evtx_status_name` returns: for the error KINDs the exact string
    /// of `shared-fixtures/README.md` that both engines print in their error lines.
    ///
    /// The one table of these strings. `compare/harness/abi_conformance.zig` reads the arms
    /// below as text (`evtx_status::Name => c"name",`), so keep one arm per line.
    pub const fn name(self) -> &'static CStr {
        match self {
            evtx_status::Ok => c"ok",
            evtx_status::End => c"end",
            evtx_status::NullArgument => c"null argument",
            evtx_status::InvalidOptions => c"invalid options",
            evtx_status::Unsupported => c"unsupported option",
            evtx_status::Io => c"i/o error",
            evtx_status::NotEvtx => c"not an evtx file",
            evtx_status::CallbackAborted => c"callback aborted",
            evtx_status::BadState => c"bad state",
            evtx_status::Internal => c"internal error",
            evtx_status::NotImplemented => c"not implemented",
            evtx_status::IncompleteChunk => c"incomplete chunk",
            evtx_status::BadChunkMagic => c"bad chunk magic",
            evtx_status::BadChunkHeaderChecksum => c"bad chunk header checksum",
            evtx_status::BadChunkFreeSpaceOffset => c"bad chunk free space offset",
            evtx_status::BadChunkRecordsChecksum => c"bad chunk records checksum",
            evtx_status::BadStringTable => c"bad string table",
            evtx_status::BadRecordMagic => c"bad record magic",
            evtx_status::TruncatedRecordHeader => c"truncated record header",
            evtx_status::BadRecordTimestamp => c"bad record timestamp",
            evtx_status::BadRecordSize => c"bad record size",
            evtx_status::BadBinxml => c"bad binxml",
        }
    }
}

/// What `evtx_status_name` returns for a value that is not an `evtx_status`.
pub const UNKNOWN_STATUS_NAME: &CStr = c"unknown status";

/// The fixed error kinds both engines print (`shared-fixtures/README.md`): the statuses from
/// `EVTX_STATUS_INCOMPLETE_CHUNK` on, under the engine's name. Values and strings are the
/// statuses'; only the set is said here.
///
/// cbindgen:ignore
#[repr(u32)]
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ErrorKind {
    /// A chunk slot inside the file shorter than 65536 bytes.
    IncompleteChunk = evtx_status::IncompleteChunk as u32,
    /// Chunk magic is not `ElfChnk\0`.
    BadChunkMagic = evtx_status::BadChunkMagic as u32,
    /// `--validate-checksums`: header CRC mismatch.
    BadChunkHeaderChecksum = evtx_status::BadChunkHeaderChecksum as u32,
    /// `--validate-checksums`: free space offset outside `512..=65536`.
    BadChunkFreeSpaceOffset = evtx_status::BadChunkFreeSpaceOffset as u32,
    /// `--validate-checksums`: records CRC mismatch.
    BadChunkRecordsChecksum = evtx_status::BadChunkRecordsChecksum as u32,
    /// The chunk's string table cannot be read.
    BadStringTable = evtx_status::BadStringTable as u32,
    /// Record magic is not `**\0\0`.
    BadRecordMagic = evtx_status::BadRecordMagic as u32,
    /// Fewer than 24 bytes left in the chunk.
    TruncatedRecordHeader = evtx_status::TruncatedRecordHeader as u32,
    /// Record FILETIME beyond year 9999.
    BadRecordTimestamp = evtx_status::BadRecordTimestamp as u32,
    /// Size < 28, or the record would pass the chunk end.
    BadRecordSize = evtx_status::BadRecordSize as u32,
    /// Any BinXML parse or render error of the record.
    BadBinxml = evtx_status::BadBinxml as u32,
}

impl ErrorKind {
    /// The status the C ABI reports for this kind (the same value).
    pub fn status(self) -> evtx_status {
        match evtx_status::from_u32(self as u32) {
            Some(status) => status,
            None => unreachable!("every ErrorKind value is an evtx_status"),
        }
    }

    /// The exact string printed in error lines.
    pub fn as_str(self) -> &'static str {
        match self.status().name().to_str() {
            Ok(text) => text,
            Err(_) => unreachable!("the status names are ASCII"),
        }
    }
}

impl fmt::Display for ErrorKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// Output format, as `-o` of the CLI.
#[repr(u32)]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum evtx_format {
    /// `-o xml`: `Record N` banner, indented XML, blank line between records.
    Xml = 0,
    /// `-o json`: `Record N` banner, compact JSON, one record per line.
    Json = 1,
    /// `-o jsonl`: JSON without banner; `indent` and `show_record_number` are ignored.
    Jsonl = 2,
}

/// One inclusive range of record header identifiers (`--events=first-last`).
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct evtx_event_range {
    pub first: u64,
    pub last: u64,
}

/// One inclusive range of `System/EventID` or `System/Level` values (`--event-id`, `--level`
/// `first-last`; a single value is `first == last`).
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct evtx_value_range {
    pub first: u32,
    pub last: u32,
}

/// `evtx_options.version` of the struct that ends at `wevt_cache_path`, the layout before the
/// filters (what `evtx_options_init` writes, and what a caller built against that header has).
pub const EVTX_OPTIONS_VERSION_0: u8 = 0;

/// `evtx_options.version` of the whole struct, the filters included (what
/// `evtx_options_init_v1` writes). The newest version this library reads.
pub const EVTX_OPTIONS_VERSION_1: u8 = 1;

/// How to render, mirroring the CLI's options. Always start from `evtx_options_init_v1` (or
/// `evtx_options_init`, see `version`), then change fields: a zeroed struct is not the
/// default (indent and banner would be off).
///
/// The flags are `uint8_t` 0/1 and the enums are `uint32_t`, so the layout is the same in C,
/// Zig, ctypes and cgo. A flag other than 0 counts as set.
///
/// Versions: the struct only grows at its end, and `version` says how much of it the caller
/// has. Version 0 ends at `wevt_cache_path` (the layout before the filters): a library never
/// reads or writes past it, so a program built against that header keeps working unchanged.
/// Version 1 adds the record filters (`event_ids` to `until_set`). A version newer than the
/// library's is `EVTX_STATUS_INVALID_OPTIONS`.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct evtx_options {
    /// An `evtx_format` value. Default `EVTX_FORMAT_XML`.
    pub format: u32,
    /// Worker threads; 0 = one per CPU (default). The output does not depend on it.
    pub threads: u32,
    /// XML indentation (off = `--no-indent`). Default 1. No effect on JSON.
    pub indent: u8,
    /// `--separate-json-attributes`. Default 0. No effect on XML.
    pub separate_json_attributes: u8,
    /// Print the `Record N` banner (off = `--dont-show-record-number`). Default 1.
    pub show_record_number: u8,
    /// `--validate-checksums`: chunks failing a CRC check are errors. Default 0.
    pub validate_checksums: u8,
    /// `--recover-records`: also render records carved from unallocated chunk space (cleared
    /// chunks, chunk slack); they come with `evtx_record.recovered` set. Default 0.
    pub recover_records: u8,
    /// `--stop-after-one-error`: `evtx_parser_dump` stops at the first chunk or record error
    /// and returns its status. Default 0. No effect on `evtx_parser_next`.
    pub stop_after_error: u8,
    /// `EVTX_OPTIONS_VERSION_0` or `EVTX_OPTIONS_VERSION_1`: which fields follow
    /// `wevt_cache_path` (none in version 0). Set by the init function, left as it is. It was
    /// the first of two reserved zero bytes, so callers from before it say version 0.
    pub version: u8,
    /// Must be zero.
    pub reserved: u8,
    /// `--ansi-codec`: a NUL-terminated WHATWG encoding label for AnsiString values; it must
    /// be ASCII-compatible. NULL = `windows-1252` (default). Copied at open.
    pub ansi_codec: *const c_char,
    /// `--events`: render only records whose header identifier is in one of these inclusive
    /// ranges; errors are still reported for the others. NULL with count 0 = every record
    /// (default). Copied at open.
    pub event_ranges: *const evtx_event_range,
    /// Number of entries in `event_ranges`.
    pub event_ranges_count: usize,
    /// `--mta`: the NUL-terminated path of an `.MTA` file (`LocaleMetaData\<log>_<LCID>.MTA`);
    /// records whose publisher it lists get a `RenderingInfo` element. NULL = none (default).
    /// Read at open, after the input's file header: an unreadable file fails the open with
    /// `EVTX_STATUS_IO`, a damaged one with `EVTX_STATUS_INVALID_OPTIONS`, the message being
    /// the CLI's error text.
    pub mta_path: *const c_char,
    /// `--wevt-cache`: the NUL-terminated path of a `.wevtcache` (`extract-wevt-templates`);
    /// records whose embedded template is missing or broken are rendered from it. NULL = none
    /// (default). Read at open, before `mta_path`, failing as it does.
    pub wevt_cache_path: *const c_char,
    /// Version 1. `--event-id`: render only records whose `System/EventID` is in one of these
    /// ranges (the rules of `shared-fixtures/README.md`, "Filters", as for the CLIs; every
    /// filter is decided by the engine before rendering, AND between filters and with
    /// `event_ranges`, OR inside one). NULL with count 0 = no constraint (default). Errors
    /// are still reported for the records a filter drops. Copied at open.
    pub event_ids: *const evtx_value_range,
    /// Number of entries in `event_ids`.
    pub event_ids_count: usize,
    /// Version 1. `--level`: `System/Level` in one of these ranges, as `event_ids`.
    pub levels: *const evtx_value_range,
    /// Number of entries in `levels`.
    pub levels_count: usize,
    /// Version 1. `--provider`: `System/Provider/@Name` equal to one of these NUL-terminated
    /// UTF-8 names, whole, ASCII letters case-insensitive. NULL with count 0 = no constraint
    /// (default). Copied at open.
    pub providers: *const *const c_char,
    /// Number of entries in `providers`.
    pub providers_count: usize,
    /// Version 1. `--channel`: `System/Channel`, as `providers`.
    pub channels: *const *const c_char,
    /// Number of entries in `channels`.
    pub channels_count: usize,
    /// Version 1. `--since`: `System/TimeCreated/@SystemTime` at or after this FILETIME
    /// (100 ns ticks since 1601-01-01 UTC), when `since_set`.
    pub since: u64,
    /// Version 1. `--until`: `System/TimeCreated/@SystemTime` before this FILETIME, when
    /// `until_set`. With both set, `since` must be less than `until`.
    pub until: u64,
    /// Version 1. Whether `since` constrains. Default 0.
    pub since_set: u8,
    /// Version 1. Whether `until` constrains. Default 0.
    pub until_set: u8,
    /// Version 1. Must be zero.
    pub reserved_v1: [u8; 6],
}

/// One pulled record, filled by `evtx_parser_next`. Every pointer in it stays valid until the
/// next call on the same parser (or its free).
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct evtx_record {
    /// The rendered bytes: exactly what the CLI prints on stdout for this record (banner when
    /// shown, the text, its trailing newline(s)). NULL when `status` is not OK.
    pub data: *const u8,
    /// Number of bytes at `data`; 0 when `status` is not OK.
    pub data_len: usize,
    /// The record header's identifier, or `EVTX_RECORD_ID_UNKNOWN` for chunk errors and
    /// records whose header could not be read.
    pub record_id: u64,
    /// The record header's FILETIME (100 ns since 1601-01-01 UTC); 0 when unknown.
    pub filetime: u64,
    /// File offset of the record's first byte, or of the chunk for chunk errors.
    pub file_offset: u64,
    /// The chunk's slot number in the file, 0-based.
    pub chunk_index: u32,
    /// An `evtx_status`: `EVTX_STATUS_OK` for a rendered record, else the error KIND.
    pub status: u32,
    /// NUL-terminated error detail (backend-specific); "" when OK. Never NULL after a call
    /// that returned OK or an error KIND.
    pub message: *const c_char,
    /// 1 when the record was carved from unallocated chunk space (`recover_records`), else 0
    /// (always 0 when `status` is not OK).
    pub recovered: u8,
    /// An `EVTX_CHECKSUM_*` value: the CRC32 status of the record's chunk, checked with
    /// `validate_checksums` (`EVTX_CHECKSUM_UNCHECKED` otherwise, and when `status` is not
    /// OK). Added in the struct's padding after `recovered`: its size and every other field's
    /// offset are those of the ABI before it, so callers built before it are unaffected.
    pub checksum: u8,
}

/// Many pulled entries at once, filled by `evtx_parser_next_batch`, as columns (struct of
/// arrays), so a binding (Python, Arrow) takes whole columns without one call per record.
/// Every pointer in it stays valid until the next call on the same parser (or its free).
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct evtx_batch {
    /// Number of entries: rendered records and chunk/record errors, in output order.
    pub count: usize,
    /// The bytes of every entry back to back: a record's rendered bytes (as
    /// `evtx_record.data`), an error's message (as `evtx_record.message`, without its NUL).
    pub data: *const u8,
    /// `count + 1` offsets into `data`, starting at 0: entry `i` is
    /// `data[offsets[i]..offsets[i + 1]]`.
    pub offsets: *const u64,
    /// `count` record identifiers, as `evtx_record.record_id`.
    pub record_ids: *const u64,
    /// `count` FILETIMEs, as `evtx_record.filetime`.
    pub filetimes: *const u64,
    /// `count` file offsets, as `evtx_record.file_offset`.
    pub file_offsets: *const u64,
    /// `count` chunk slot numbers, as `evtx_record.chunk_index`.
    pub chunk_indexes: *const u32,
    /// `count` statuses, as `evtx_record.status`.
    pub statuses: *const u32,
    /// `count` carved flags, as `evtx_record.recovered`.
    pub recovered: *const u8,
}

/// Totals of one `evtx_parser_dump`.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct evtx_stats {
    /// Records rendered and written (after the event-range filter).
    pub records_ok: u64,
    /// Chunk and record errors (each reported once, as the CLI prints one error each).
    pub records_failed: u64,
    /// Bytes passed to the write callback.
    pub bytes_written: u64,
}

/// Receives rendered bytes, in output order. `data` is valid only during the call. Return 0 to
/// go on, anything else to stop the dump (`EVTX_STATUS_CALLBACK_ABORTED`). The bytes of one
/// record are never split across calls, but one call may carry many records.
pub type evtx_write_fn =
    Option<unsafe extern "C" fn(user_data: *mut c_void, data: *const u8, len: usize) -> i32>;

/// Receives each chunk or record error in output order (`record.data` is NULL). `record` is
/// valid only during the call. Return 0 to go on, anything else to stop the dump.
pub type evtx_error_fn =
    Option<unsafe extern "C" fn(user_data: *mut c_void, record: *const evtx_record) -> i32>;

/// `evtx_batch_system.present` bit: the entry has a provider name.
pub const EVTX_SYSTEM_PROVIDER: u8 = 1;
/// `evtx_batch_system.present` bit: the entry has an event identifier.
pub const EVTX_SYSTEM_EVENT_ID: u8 = 2;
/// `evtx_batch_system.present` bit: the entry has a level.
pub const EVTX_SYSTEM_LEVEL: u8 = 4;
/// `evtx_batch_system.present` bit: the entry has a channel.
pub const EVTX_SYSTEM_CHANNEL: u8 = 8;
/// `evtx_batch_system.present` bit: the entry has a computer name.
pub const EVTX_SYSTEM_COMPUTER: u8 = 16;

/// The System fields of the entries of the last `evtx_batch`, as columns, filled by
/// `evtx_parser_batch_system`: what `Event.System` of each record's JSON holds, read from the
/// rendered text (`Provider.#attributes.Name` or `Provider_attributes.Name`, `EventID` or
/// `EventID.#text`, `Level`, `Channel`, `Computer`). Strings are UTF-8, JSON-unescaped. A
/// field that is missing, not of its type or out of range (event id past `UINT32_MAX`, level
/// past 255) is absent: its `present` bit is 0, its string empty, its number 0. Error entries
/// have every field absent. Every pointer stays valid until the next call on the same parser.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct evtx_batch_system {
    /// Number of entries, `count` of the batch.
    pub count: usize,
    /// Provider names back to back; entry `i` is
    /// `provider_data[provider_offsets[i]..provider_offsets[i + 1]]`.
    pub provider_data: *const u8,
    /// `count + 1` offsets into `provider_data`, starting at 0.
    pub provider_offsets: *const u64,
    /// Channels, as `provider_data`.
    pub channel_data: *const u8,
    /// `count + 1` offsets into `channel_data`, starting at 0.
    pub channel_offsets: *const u64,
    /// Computer names, as `provider_data`.
    pub computer_data: *const u8,
    /// `count + 1` offsets into `computer_data`, starting at 0.
    pub computer_offsets: *const u64,
    /// `count` event identifiers.
    pub event_ids: *const u32,
    /// `count` levels.
    pub levels: *const u8,
    /// `count` sets of `EVTX_SYSTEM_*` bits: which fields the entry has.
    pub present: *const u8,
}

/// One text per entry of the last `evtx_batch`, filled by `evtx_parser_batch_timestamps`:
/// each record's FILETIME as pyevtx-rs 0.14 gives `timestamp`, RFC 3339 in UTC with the 100 ns
/// ticks, trailing zeros trimmed (no `.` when they are 0), then `Z UTC`
/// (`2025-01-06T07:58:14.6210546Z UTC`). The text is empty for an error entry, a FILETIME of 0
/// or a year past 9999. Every pointer stays valid until the next call on the same parser.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct evtx_batch_texts {
    /// Number of entries, `count` of the batch.
    pub count: usize,
    /// The texts back to back (ASCII); entry `i` is `data[offsets[i]..offsets[i + 1]]`.
    pub data: *const u8,
    /// `count + 1` offsets into `data`, starting at 0.
    pub offsets: *const u64,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_value_maps_back_to_its_status_and_nothing_else_does() {
        for value in 0..64 {
            match evtx_status::from_u32(value) {
                Some(status) => assert_eq!(status as u32, value),
                None => assert!((11..16).contains(&value) || value > 26, "{value}"),
            }
        }
        assert_eq!(evtx_status::from_u32(u32::MAX), None);
    }

    #[test]
    fn error_kinds_are_the_statuses_from_incomplete_chunk_on() {
        assert_eq!(
            ErrorKind::IncompleteChunk.status(),
            evtx_status::IncompleteChunk
        );
        assert_eq!(ErrorKind::BadBinxml.status(), evtx_status::BadBinxml);
        assert_eq!(ErrorKind::BadRecordSize.to_string(), "bad record size");
    }
}
