//! The C ABI of evtx-twin (`include/evtx.h`, generated from this crate by cbindgen) over
//! evtx-core: `libevtx_rs.so` / `libevtx_rs.a`.
//!
//! `abi.rs` holds the C types, `ffi.rs` the exported functions written once over an `Engine`
//! trait, `backend.rs` evtx-core behind that trait. The reference shim (`compare/reference`)
//! compiles the same `abi.rs` and `ffi.rs` over the evtx crate, so all libraries share one
//! front end. This is the only crate of the engine with `unsafe`; each block says why it holds.
#![deny(unsafe_op_in_unsafe_fn)]

pub mod abi;
mod backend;
pub mod ffi;
