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
//! Adding or changing anything in the header: CONTRIBUTING.md, "Adding a C function" (the
//! type or limit in evtx-abi, the front end and its wrapper here, the exports table, the header
//! regenerated, the Zig declaration, the smoke tests).
#![deny(unsafe_op_in_unsafe_fn)]

pub use evtx_abi::abi;
mod backend;
pub mod ffi;
