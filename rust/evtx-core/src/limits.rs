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

/// The output length past which the record whose text starts at `text_start` fails (contract
/// 12): its text, from after its `Record N` banner up to its newline (neither counted), may
/// hold `MAX_RECORD_OUTPUT` bytes, as the reference counts it (`Budget::new` at the text's
/// start, checked before the newline); and the chunk's output may not pass `MAX_CHUNK_OUTPUT`.
/// The Zig engine's `limits.recordOutputLimit`.
pub fn record_output_limit(text_start: usize) -> usize {
    (text_start + MAX_RECORD_OUTPUT).min(MAX_CHUNK_OUTPUT)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn record_output_limit_counts_the_text_alone_within_the_chunk() {
        // After a 9-byte banner, 16 MiB of text end exactly at the limit.
        assert_eq!(record_output_limit(9), 9 + MAX_RECORD_OUTPUT);
        // Near the chunk's end the chunk bound is the lower one.
        let late = MAX_CHUNK_OUTPUT - 10;
        assert_eq!(record_output_limit(late), MAX_CHUNK_OUTPUT);
    }
}
