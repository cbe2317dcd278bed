//! The reference crate (evtx 0.15.1) behind include/evtx.h: `libevtx_ref.so` / `libevtx_ref.a`,
//! backend name `reference`.
//!
//! The C types and the front end are the `evtx-abi` crate's, as for libevtx_rs; `ffi.rs` defines
//! from the table of `evtx_abi::exports!` the same thin exported wrappers as
//! `rust/capi/src/ffi.rs` (whose doc comments are the contract) over `backend.rs`. So the
//! reference is measured through exactly the front end the engines use, and its bytes (those
//! of `evtx_dump` 0.15.1) are the oracle for both.
#![deny(unsafe_op_in_unsafe_fn)]

pub use evtx_abi::abi;
mod backend;
pub mod ffi;
mod filter;
