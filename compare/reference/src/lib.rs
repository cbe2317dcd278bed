//! The reference crate (evtx 0.15.1) behind include/evtx.h: `libevtx_ref.so` / `libevtx_ref.a`,
//! backend name `reference`.
//!
//! The C types and the exported functions are rust/capi's own `abi.rs` and `ffi.rs`, compiled
//! here a second time over `backend.rs`, so the reference is measured through exactly the front
//! end the engines use, and its bytes (those of `evtx_dump` 0.15.1) are the oracle for both.
#![deny(unsafe_op_in_unsafe_fn)]

#[path = "../../../rust/capi/src/abi.rs"]
pub mod abi;
mod backend;
#[path = "../../../rust/capi/src/ffi.rs"]
pub mod ffi;
#[path = "../../../rust/capi/src/system.rs"]
mod system;
