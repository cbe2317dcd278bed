//! The exports of include/evtx.h over the evtx crate: the same thin wrappers around
//! `evtx_abi::front` as `rust/capi/src/ffi.rs`, whose doc comments are their contracts.
#![allow(clippy::missing_safety_doc)] // The contracts are rust/capi/src/ffi.rs's.

use crate::backend::Backend;
use evtx_abi::abi::{
    evtx_batch, evtx_batch_system, evtx_batch_texts, evtx_error_fn, evtx_options, evtx_record,
    evtx_stats, evtx_status, evtx_write_fn, EVTX_ABI_VERSION,
};
pub use evtx_abi::front::evtx_parser;
use evtx_abi::front::{self, Library};
use std::ffi::{c_char, c_void};

#[no_mangle]
pub extern "C" fn evtx_abi_version() -> u32 {
    EVTX_ABI_VERSION
}

#[no_mangle]
pub extern "C" fn evtx_backend_name() -> *const c_char {
    Backend::NAME.as_ptr()
}

#[no_mangle]
pub extern "C" fn evtx_backend_version() -> *const c_char {
    Backend::VERSION.as_ptr()
}

#[no_mangle]
pub extern "C" fn evtx_status_name(status: u32) -> *const c_char {
    front::status_name(status)
}

#[no_mangle]
pub extern "C" fn evtx_last_error() -> *const c_char {
    front::last_error()
}

#[no_mangle]
pub unsafe extern "C" fn evtx_options_init(options: *mut evtx_options) {
    // SAFETY: the caller's contract above, which `front::options_init` forwards.
    unsafe { front::options_init(options) }
}

#[no_mangle]
pub unsafe extern "C" fn evtx_parser_open_path(
    path: *const c_char,
    options: *const evtx_options,
    out: *mut *mut evtx_parser,
) -> evtx_status {
    // SAFETY: the caller's contract above, which `front::parser_open_path` forwards.
    unsafe { front::parser_open_path::<Backend>(path, options, out) }
}

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

#[no_mangle]
pub unsafe extern "C" fn evtx_parser_next(
    parser: *mut evtx_parser,
    record: *mut evtx_record,
) -> evtx_status {
    // SAFETY: the caller's contract above, which `front::parser_next` forwards.
    unsafe { front::parser_next(parser, record) }
}

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

#[no_mangle]
pub unsafe extern "C" fn evtx_parser_batch_system(
    parser: *mut evtx_parser,
    system: *mut evtx_batch_system,
) -> evtx_status {
    // SAFETY: the caller's contract above, which `front::parser_batch_system` forwards.
    unsafe { front::parser_batch_system(parser, system) }
}

#[no_mangle]
pub unsafe extern "C" fn evtx_parser_batch_timestamps(
    parser: *mut evtx_parser,
    texts: *mut evtx_batch_texts,
) -> evtx_status {
    // SAFETY: the caller's contract (rust/capi), which `front::parser_batch_timestamps` forwards.
    unsafe { front::parser_batch_timestamps(parser, texts) }
}

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

#[no_mangle]
pub unsafe extern "C" fn evtx_parser_free(parser: *mut evtx_parser) {
    // SAFETY: the caller's contract above, which `front::parser_free` forwards.
    unsafe { front::parser_free(parser) }
}
