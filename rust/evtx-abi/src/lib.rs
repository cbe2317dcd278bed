//! The C ABI of evtx-twin (`include/evtx.h`) as one crate that every Rust-built library
//! depends on: `rust/capi` (libevtx_rs, over evtx-core) and `compare/reference` (libevtx_ref,
//! over the evtx 0.15.1 crate). The engine (`evtx-core`) depends on it too, for its error kinds
//! and limits, so a string or a number said here is said once for all of them.
//!
//! - [`abi`]: the `#[repr(C)]` types, the status codes, the one table of status names and error
//!   KIND strings, [`ErrorKind`];
//! - [`limits`]: every explicit limit of the engines, each with its reason (the Zig engine's
//!   `zig/src/limits.zig` is held to the header's copies at compile time);
//! - [`front`]: the bodies of the exported functions, over the `Engine` trait;
//! - [`mod@exports`]: the list of exported functions as one table ([`macro@exports`]), which
//!   the reference shim defines its exports from and `rust/capi` is checked against;
//! - `system`: the System columns of a batch's JSON texts (`evtx_parser_batch_system`);
//! - `timestamps`: the timestamp texts of a batch (`evtx_parser_batch_timestamps`).
//!
//! cbindgen reads this crate (through `rust/capi`, `parse_deps`) to write the header. The
//! `unsafe` here is the front end's: each block says why it holds.
#![deny(unsafe_op_in_unsafe_fn)]

pub mod abi;
pub mod exports;
pub mod front;
pub mod limits;
mod system;
mod timestamps;

pub use abi::ErrorKind;
