//! The C ABI of evtx-twin (`include/evtx.h`, generated from this crate by cbindgen) over
//! evtx-core: `libevtx_rs.so` / `libevtx_rs.a`.
//!
//! `abi.rs` holds the C types, `ffi.rs` the exported functions written once over an `Engine`
//! trait, `backend.rs` evtx-core behind that trait. The reference shim (`compare/reference`)
//! compiles the same `abi.rs` and `ffi.rs` over the evtx crate, so all libraries share one
//! front end. This is the only crate of the engine with `unsafe`; each block says why it holds.
//!
//! Adding or changing anything in the header, in this order:
//! 1. the type in `abi.rs` (fixed-width fields, `u8` flags, `u32` for enums in structs) or the
//!    function in `ffi.rs` (panic boundary, NULL checks, a doc comment: it becomes the manual);
//! 2. `zig/zigw build header` regenerates `include/evtx.h`; bump `EVTX_ABI_VERSION` when the
//!    change is incompatible; commit the header with the change (`make test` diffs it);
//! 3. the same declaration in `zig/src/capi.zig`, checked by `zig/zigw build test-abi-conformance`;
//! 4. a call in `compare/capi-tests/smoke.c` and, if it renders, in `tests/abi.rs`.
#![deny(unsafe_op_in_unsafe_fn)]

pub mod abi;
mod backend;
pub mod ffi;
mod system;
