//! The engine's limits, as `usize`: each is defined once, with its reason, in
//! `rust/evtx-abi/src/limits.rs` (and so in `include/evtx.h`, which the Zig engine's
//! `zig/src/limits.zig` is held to at compile time).

use evtx_abi::limits as abi;

/// See `EVTX_LIMIT_THREADS`.
pub const MAX_THREADS: usize = abi::EVTX_LIMIT_THREADS as usize;
/// See `EVTX_LIMIT_RECORD_OUTPUT_BYTES`.
pub const MAX_RECORD_OUTPUT: usize = abi::EVTX_LIMIT_RECORD_OUTPUT_BYTES as usize;
/// See `EVTX_LIMIT_CHUNK_OUTPUT_BYTES`.
pub const MAX_CHUNK_OUTPUT: usize = abi::EVTX_LIMIT_CHUNK_OUTPUT_BYTES as usize;
/// See `EVTX_LIMIT_RECORD_NODES`.
pub const MAX_RECORD_NODES: usize = abi::EVTX_LIMIT_RECORD_NODES as usize;
/// See `EVTX_LIMIT_ELEMENT_DEPTH`.
pub const MAX_ELEMENT_DEPTH: usize = abi::EVTX_LIMIT_ELEMENT_DEPTH as usize;
/// See `EVTX_LIMIT_STREAM_NESTING`.
pub const MAX_STREAM_NESTING: usize = abi::EVTX_LIMIT_STREAM_NESTING as usize;
/// See `EVTX_LIMIT_RENDER_DEPTH`.
pub const MAX_RENDER_DEPTH: usize = abi::EVTX_LIMIT_RENDER_DEPTH as usize;
/// See `EVTX_LIMIT_PROGRAMS`.
pub const MAX_PROGRAMS: usize = abi::EVTX_LIMIT_PROGRAMS as usize;
/// See `EVTX_LIMIT_PROGRAM_BYTES`.
pub const MAX_PROGRAM_BYTES: usize = abi::EVTX_LIMIT_PROGRAM_BYTES as usize;
/// See `EVTX_LIMIT_INSTANCE_VALUES`.
pub const MAX_INSTANCE_VALUES: usize = abi::EVTX_LIMIT_INSTANCE_VALUES as usize;
/// See `EVTX_LIMIT_PROGRAM_VALUES`.
pub const MAX_PROGRAM_VALUES: usize = abi::EVTX_LIMIT_PROGRAM_VALUES as usize;
/// See `EVTX_LIMIT_PROGRAM_ARRAY_ITEMS`.
pub const MAX_PROGRAM_ARRAY_ITEMS: u16 = abi::EVTX_LIMIT_PROGRAM_ARRAY_ITEMS as u16;
/// See `EVTX_LIMIT_DEFER_DEPTH`.
pub const MAX_DEFER_DEPTH: usize = abi::EVTX_LIMIT_DEFER_DEPTH as usize;
