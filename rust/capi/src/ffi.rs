//! The exported functions of `include/evtx.h`: thin wrappers around `evtx_abi::front`, with
//! evtx-core behind its `Engine` trait. Their doc comments are the header's manual (cbindgen
//! copies them), so every change to a function's contract is written here.
//!
//! The reference shim (`compare/reference/src/ffi.rs`) exports the same wrappers over the evtx
//! crate, from the table of `evtx_abi::exports!`; `compare/capi-tests/smoke.c` calls every
//! function of every library through the header.
#![allow(non_camel_case_types)]

use crate::backend::Backend;
use evtx_abi::abi::{
    evtx_batch, evtx_batch_system, evtx_batch_texts, evtx_error_fn, evtx_options, evtx_record,
    evtx_stats, evtx_status, evtx_write_fn, EVTX_ABI_VERSION,
};
pub use evtx_abi::front::evtx_parser;
use evtx_abi::front::{self, Library};
use std::ffi::{c_char, c_void};

// Each function of the table every library exports (the reference shim's) is here with the
// same signature; `tests/abi.rs` holds the table to the header, so neither side adds one alone.
evtx_abi::exports!(check);

/// The ABI version the library implements (`EVTX_ABI_VERSION` of its header).
#[no_mangle]
pub extern "C" fn evtx_abi_version() -> u32 {
    EVTX_ABI_VERSION
}

/// The backend's name: `"rust"`, `"zig"` or `"reference"`. A static string.
#[no_mangle]
pub extern "C" fn evtx_backend_name() -> *const c_char {
    Backend::NAME.as_ptr()
}

/// The backend's version, such as `"0.1.0"` (the reference: the evtx crate's, `"0.15.1"`).
/// A static string.
#[no_mangle]
pub extern "C" fn evtx_backend_version() -> *const c_char {
    Backend::VERSION.as_ptr()
}

/// A static, NUL-terminated name for `status`: for error KINDs the exact KIND string of
/// `shared-fixtures/README.md` (`"bad chunk magic"`), otherwise a short phrase; `"unknown
/// status"` for values that are not an `evtx_status`.
#[no_mangle]
pub extern "C" fn evtx_status_name(status: u32) -> *const c_char {
    front::status_name(status)
}

/// The detail of the last call on this thread that failed (open, next, dump), NUL-terminated;
/// `""` before any failure. Valid until the next failing call on this thread.
#[no_mangle]
pub extern "C" fn evtx_last_error() -> *const c_char {
    front::last_error()
}

/// The CLI's defaults as `evtx_options` version 0: XML, indented, with `Record N` banners,
/// one thread per CPU, windows-1252, every record, `version` 0. Writes only the fields of
/// version 0 (up to `wevt_cache_path`), so a program built against the header before the
/// filters keeps working; a program that sets the filters calls `evtx_options_init_v1`.
/// Does nothing when `options` is NULL.
///
/// # Safety
/// `options` is NULL or points to writable memory for one version 0 `evtx_options` (the
/// bytes up to the end of `wevt_cache_path`).
#[no_mangle]
pub unsafe extern "C" fn evtx_options_init(options: *mut evtx_options) {
    // SAFETY: the caller's contract above, which `front::options_init` forwards.
    unsafe { front::options_init(options) }
}

/// The CLI's defaults as `evtx_options` version 1: those of `evtx_options_init`, no filter,
/// `version` `EVTX_OPTIONS_VERSION_1`. Does nothing when `options` is NULL.
///
/// # Safety
/// `options` is NULL or points to writable memory for one whole `evtx_options`.
#[no_mangle]
pub unsafe extern "C" fn evtx_options_init_v1(options: *mut evtx_options) {
    // SAFETY: the caller's contract above, which `front::options_init_v1` forwards.
    unsafe { front::options_init_v1(options) }
}

/// Opens the EVTX file at `path` (NUL-terminated, UTF-8 or the platform's bytes) with
/// `options` (NULL = defaults). On success `*out` is a new parser to release with
/// `evtx_parser_free`; on failure `*out` is NULL and `evtx_last_error()` tells why
/// (`EVTX_STATUS_IO`, `EVTX_STATUS_NOT_EVTX`, `EVTX_STATUS_INVALID_OPTIONS`, ...).
///
/// # Safety
/// `path` is NULL or NUL-terminated; `options` is NULL or a valid `evtx_options` (see its
/// fields); `out` is NULL or valid for one pointer write.
#[no_mangle]
pub unsafe extern "C" fn evtx_parser_open_path(
    path: *const c_char,
    options: *const evtx_options,
    out: *mut *mut evtx_parser,
) -> evtx_status {
    // SAFETY: the caller's contract above, which `front::parser_open_path` forwards.
    unsafe { front::parser_open_path::<Backend>(path, options, out) }
}

/// Opens the EVTX file held in `data[0..len]`, without copying it: the buffer must stay
/// unchanged and alive until `evtx_parser_free`. `options` and `out` as for
/// `evtx_parser_open_path`. An empty buffer is `EVTX_STATUS_NOT_EVTX`.
///
/// # Safety
/// `data` is NULL or valid for `len` reads until the parser is freed, and not written to
/// meanwhile; `options` and `out` as for `evtx_parser_open_path`.
#[no_mangle]
pub unsafe extern "C" fn evtx_parser_open_buffer(
    data: *const u8,
    len: usize,
    options: *const evtx_options,
    out: *mut *mut evtx_parser,
) -> evtx_status {
    // SAFETY: the caller's contract above, which `front::parser_open_buffer` forwards.
    unsafe { front::parser_open_buffer::<Backend>(data, len, options, out) }
}

/// Pulls the next record in output order into `*record` and returns its status:
/// `EVTX_STATUS_OK` (rendered; `data`/`data_len` hold the CLI's bytes for it), an error KIND
/// (`EVTX_STATUS_BAD_CHUNK_MAGIC` ... `EVTX_STATUS_BAD_BINXML`: a chunk or record failed,
/// metadata and `message` say where; call again to go on), `EVTX_STATUS_END`, or a failure
/// of the call (`EVTX_STATUS_NULL_ARGUMENT`, `EVTX_STATUS_INTERNAL`, `EVTX_STATUS_BAD_STATE`).
/// Records outside the event ranges are skipped; errors are not. `*record` and what it points
/// to are valid until the next call on this parser.
///
/// # Safety
/// `parser` is NULL or a live handle from an open function, not used by another thread during
/// the call; `record` is NULL or valid for one `evtx_record` write.
#[no_mangle]
pub unsafe extern "C" fn evtx_parser_next(
    parser: *mut evtx_parser,
    record: *mut evtx_record,
) -> evtx_status {
    // SAFETY: the caller's contract above, which `front::parser_next` forwards.
    unsafe { front::parser_next(parser, record) }
}

/// Pulls up to `max_entries` entries (records and errors, as `evtx_parser_next` yields them one
/// by one) into `*batch`, stopping early once the rendered bytes reach `max_bytes` (0 = no
/// byte limit); at least one entry when any is left. Returns `EVTX_STATUS_OK` with
/// `batch->count > 0`, `EVTX_STATUS_END` with `batch->count == 0` when the input is done, or a
/// failure of the call (`EVTX_STATUS_NULL_ARGUMENT`, `EVTX_STATUS_INTERNAL`,
/// `EVTX_STATUS_BAD_STATE`); a fatal failure met after some entries were taken is returned by
/// the next call. Chunk and record errors are entries, not failures. Records outside the event
/// ranges are skipped; errors are not. `max_entries` 0 counts as 1. `*batch` and what it
/// points to are valid until the next call on this parser.
///
/// # Safety
/// `parser` as for `evtx_parser_next`; `batch` is NULL or valid for one `evtx_batch` write.
#[no_mangle]
pub unsafe extern "C" fn evtx_parser_next_batch(
    parser: *mut evtx_parser,
    max_entries: usize,
    max_bytes: usize,
    batch: *mut evtx_batch,
) -> evtx_status {
    // SAFETY: the caller's contract above, which `front::parser_next_batch` forwards.
    unsafe { front::parser_next_batch(parser, max_entries, max_bytes, batch) }
}

/// Fills `*system` with the System fields (provider, event id, level, channel, computer) of
/// the entries of the last `evtx_parser_next_batch`, read from their rendered JSON (see
/// `evtx_batch_system`), so a binding gets typed columns without searching the texts itself.
/// Returns `EVTX_STATUS_OK` (`system->count` is the batch's `count`, 0 before any batch or
/// after `EVTX_STATUS_END`), `EVTX_STATUS_UNSUPPORTED` when the format is XML, or
/// `EVTX_STATUS_NULL_ARGUMENT`. `*system` and what it points to are valid until the next call
/// on this parser.
///
/// # Safety
/// `parser` as for `evtx_parser_next`; `system` is NULL or valid for one `evtx_batch_system`
/// write.
#[no_mangle]
pub unsafe extern "C" fn evtx_parser_batch_system(
    parser: *mut evtx_parser,
    system: *mut evtx_batch_system,
) -> evtx_status {
    // SAFETY: the caller's contract above, which `front::parser_batch_system` forwards.
    unsafe { front::parser_batch_system(parser, system) }
}

/// Fills `*texts` with the timestamp text of each entry of the last `evtx_parser_next_batch`
/// (see `evtx_batch_texts`: pyevtx-rs's `timestamp`, empty for an error entry, a FILETIME of 0
/// or a year past 9999), so a binding does not format FILETIMEs itself. Any output format.
/// Returns `EVTX_STATUS_OK` (`texts->count` is the batch's `count`, 0 before any batch or after
/// `EVTX_STATUS_END`) or `EVTX_STATUS_NULL_ARGUMENT`. `*texts` and what it points to are valid
/// until the next call on this parser.
///
/// # Safety
/// `parser` as for `evtx_parser_next`; `texts` is NULL or valid for one `evtx_batch_texts`
/// write.
#[no_mangle]
pub unsafe extern "C" fn evtx_parser_batch_timestamps(
    parser: *mut evtx_parser,
    texts: *mut evtx_batch_texts,
) -> evtx_status {
    // SAFETY: the caller's contract above, which `front::parser_batch_timestamps` forwards.
    unsafe { front::parser_batch_timestamps(parser, texts) }
}

/// Renders every record not pulled yet into `write`, in output order: the concatenated bytes
/// equal the CLI's stdout for the same options. Chunk and record errors go to `on_error`
/// (may be NULL) and are counted; they do not fail the dump unless `stop_after_error` is set
/// (then their status is returned). Returns `EVTX_STATUS_OK` when the input is done,
/// `EVTX_STATUS_CALLBACK_ABORTED` when a callback returned non-zero. `*stats` (may be NULL)
/// receives the totals in every case.
///
/// # Safety
/// `parser` as for `evtx_parser_next`; `write` and `on_error` are safe to call with
/// `user_data` from this thread; `stats` is NULL or valid for one `evtx_stats` write.
#[no_mangle]
pub unsafe extern "C" fn evtx_parser_dump(
    parser: *mut evtx_parser,
    write: evtx_write_fn,
    on_error: evtx_error_fn,
    user_data: *mut c_void,
    stats: *mut evtx_stats,
) -> evtx_status {
    // SAFETY: the caller's contract above, which `front::parser_dump` forwards.
    unsafe { front::parser_dump(parser, write, on_error, user_data, stats) }
}

/// Releases a parser and everything it holds. NULL is ignored.
///
/// # Safety
/// `parser` is NULL or a handle from an open function that has not been freed yet.
#[no_mangle]
pub unsafe extern "C" fn evtx_parser_free(parser: *mut evtx_parser) {
    // SAFETY: the caller's contract above, which `front::parser_free` forwards.
    unsafe { front::parser_free(parser) }
}

/// Writes the triage report of the EVTX file at `path` through `write`, in one call: the JSON
/// object of one file of `triage --json`'s `files` (compact, no newline; the contract is
/// `shared-fixtures/README.md`, "Triage"). The log is read as the jsonl dump with
/// `recover_records` reads it with one thread; `silence_seconds` (1 to 315360000, the CLI's
/// `--silence`, 3600 by default there) is the gap between two records' times that counts as a
/// silence. Returns `EVTX_STATUS_OK`; for an input that cannot be read the status
/// `evtx_parser_open_path` gives (`EVTX_STATUS_IO`, `EVTX_STATUS_NOT_EVTX`, the detail in
/// `evtx_last_error`) and nothing is written; `EVTX_STATUS_INVALID_OPTIONS` for
/// `silence_seconds` out of range; `EVTX_STATUS_CALLBACK_ABORTED` when `write` returned
/// non-zero; `EVTX_STATUS_NOT_IMPLEMENTED` from a library without triage (the reference's).
///
/// # Safety
/// `path` is NULL or a NUL-terminated string; `write` is safe to call with `user_data` from
/// this thread.
#[no_mangle]
pub unsafe extern "C" fn evtx_triage_path(
    path: *const c_char,
    silence_seconds: u64,
    write: evtx_write_fn,
    user_data: *mut c_void,
) -> evtx_status {
    // SAFETY: the caller's contract above, which `front::triage_path` forwards.
    unsafe { front::triage_path::<Backend>(path, silence_seconds, write, user_data) }
}
