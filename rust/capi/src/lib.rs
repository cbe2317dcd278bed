//! The C ABI of evtx-twin (`include/evtx.h`, generated from this crate by cbindgen) over
//! evtx-core: `libevtx_rs.so` / `libevtx_rs.a`.
//!
//! The C types, status names and limits are the `evtx-abi` crate's (`evtx_abi::abi`,
//! `evtx_abi::limits`), and so is the front end every Rust-built library shares
//! (`evtx_abi::front`, written once over an `Engine` trait). Here: `ffi.rs`, the exported
//! functions as thin documented wrappers (cbindgen's input for the header's manual), and
//! `backend.rs`, evtx-core behind `Engine`. The reference shim (`compare/reference`) exports
//! the same wrappers over the evtx crate, from `evtx_abi::exports!`. Only this crate, evtx-abi
//! and the shim hold `unsafe`; each block says why it holds.
//!
//! Adding or changing anything in the header, in this order:
//! 1. the type in `rust/evtx-abi/src/abi.rs` (fixed-width fields, `u8` flags, `u32` for enums
//!    in structs), a limit in `rust/evtx-abi/src/limits.rs`, or the function in
//!    `evtx_abi::front` (panic boundary, NULL checks) with its wrapper in `ffi.rs` (a doc
//!    comment: it becomes the manual) and in the table of `evtx_abi::exports!` (the reference
//!    shim's exports; `ffi.rs` is checked against it);
//! 2. `zig/zigw build header` regenerates `include/evtx.h`; bump `EVTX_ABI_VERSION` when the
//!    change is incompatible; commit the header with the change (`make test` diffs it);
//! 3. the same declaration in `zig/src/capi.zig`, checked by `zig/zigw build test-abi-conformance`;
//! 4. a call in `compare/capi-tests/smoke.c` and, if it renders, in `tests/abi.rs`.
#![deny(unsafe_op_in_unsafe_fn)]

pub use evtx_abi::abi;
mod backend;
pub mod ffi;
