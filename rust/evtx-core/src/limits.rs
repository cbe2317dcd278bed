//! The engine's limits, as `usize`, each spelled `<WORDS>_MAX` after its header name
//! (`EVTX_LIMIT_RECORD_OUTPUT_BYTES` is [`RECORD_OUTPUT_BYTES_MAX`], the Zig engine's
//! `limits.record_output_bytes_max`). The shared ones are defined once, with their reasons, in
//! `rust/evtx-abi/src/limits.rs` (and so in `include/evtx.h`, which `zig/src/limits.zig` is held
//! to at compile time); the engine's own bounds follow, each with its reason. Modules import
//! them from here, under these names. Only crafted files reach them.

use evtx_abi::limits as abi;

/// See `EVTX_LIMIT_THREADS`.
pub const THREADS_MAX: usize = abi::EVTX_LIMIT_THREADS as usize;
/// See `EVTX_LIMIT_RECORD_OUTPUT_BYTES`.
pub const RECORD_OUTPUT_BYTES_MAX: usize = abi::EVTX_LIMIT_RECORD_OUTPUT_BYTES as usize;
/// See `EVTX_LIMIT_CHUNK_OUTPUT_BYTES`.
pub const CHUNK_OUTPUT_BYTES_MAX: usize = abi::EVTX_LIMIT_CHUNK_OUTPUT_BYTES as usize;
/// See `EVTX_LIMIT_RECORD_NODES`.
pub const RECORD_NODES_MAX: usize = abi::EVTX_LIMIT_RECORD_NODES as usize;
/// See `EVTX_LIMIT_ELEMENT_DEPTH`.
pub const ELEMENT_DEPTH_MAX: usize = abi::EVTX_LIMIT_ELEMENT_DEPTH as usize;
/// See `EVTX_LIMIT_STREAM_NESTING`.
pub const STREAM_NESTING_MAX: usize = abi::EVTX_LIMIT_STREAM_NESTING as usize;
/// See `EVTX_LIMIT_RENDER_DEPTH`.
pub const RENDER_DEPTH_MAX: usize = abi::EVTX_LIMIT_RENDER_DEPTH as usize;
/// See `EVTX_LIMIT_PROGRAMS`.
pub const PROGRAMS_MAX: usize = abi::EVTX_LIMIT_PROGRAMS as usize;
/// See `EVTX_LIMIT_PROGRAM_BYTES`.
pub const PROGRAM_BYTES_MAX: usize = abi::EVTX_LIMIT_PROGRAM_BYTES as usize;
/// See `EVTX_LIMIT_INSTANCE_VALUES`.
pub const INSTANCE_VALUES_MAX: usize = abi::EVTX_LIMIT_INSTANCE_VALUES as usize;
/// See `EVTX_LIMIT_PROGRAM_VALUES`.
pub const PROGRAM_VALUES_MAX: usize = abi::EVTX_LIMIT_PROGRAM_VALUES as usize;
/// See `EVTX_LIMIT_PROGRAM_ARRAY_ITEMS`.
pub const PROGRAM_ARRAY_ITEMS_MAX: u16 = abi::EVTX_LIMIT_PROGRAM_ARRAY_ITEMS as u16;
/// See `EVTX_LIMIT_DEFER_DEPTH`.
pub const DEFER_DEPTH_MAX: usize = abi::EVTX_LIMIT_DEFER_DEPTH as usize;

// The engine's own bounds (not in the C ABI: they change no output, or only the reference's).

/// Tree nodes all records of one chunk may build: past it the chunk's records fail (contract
/// 12; four records at the record bound, far above a real chunk's).
pub const CHUNK_NODES_MAX: usize = 4 * RECORD_NODES_MAX;
/// Template definition bytes parsed per chunk: a real chunk's definitions add up to less than
/// the chunk; a crafted one could make every record point at a new 64 KiB body.
pub const DEFINITION_BYTES_MAX: usize = 16 * crate::file_header::CHUNK_SIZE;
/// Definitions `template::Identities` keeps per GUID and size (each lookup tries them all).
pub const IDENTITY_VARIANTS_MAX: usize = 16;
/// Bytes `template::Identities` keeps (bodies and names); past it, no new identity is kept.
pub const IDENTITY_BYTES_MAX: usize = 16 << 20;
/// Nested instances a program signature describes; deeper records render the slow way, to
/// the same bytes (the Zig engine's scan stops at `STREAM_NESTING_MAX` instead).
pub const SIGNATURE_DEPTH_MAX: usize = 8;
/// Distinct names `program::FragmentNames` numbers; past it, fragments render the slow way.
pub const FRAGMENT_NAME_IDS_MAX: usize = 1 << 16;
/// Bytes of those names; past it, fragments render the slow way.
pub const FRAGMENT_NAME_BYTES_MAX: usize = 1 << 20;
/// Bytes a chunk grows to with translated `--wevt-cache` templates: the chunk plus far more
/// templates than one chunk's records can name (chunk offsets stay far below `u32`).
pub const CHUNK_EXTENSION_BYTES_MAX: usize = 16 << 20;
/// Nested instances (each a whole BinXML value of the one above) that the template
/// subcommands search for a value the reference cannot read (`template_instances`).
pub const INSTANCE_SCAN_DEPTH_MAX: usize = 8;

/// The output length past which the record whose text starts at `text_start` fails (contract
/// 12): its text, from after its `Record N` banner up to its newline (neither counted), may
/// hold `RECORD_OUTPUT_BYTES_MAX` bytes, as the reference counts it (`Budget::new` at the
/// text's start, checked before the newline); and the chunk's output may not pass
/// `CHUNK_OUTPUT_BYTES_MAX`. The Zig engine's `limits.recordOutputLimit`.
pub fn record_output_limit(text_start: usize) -> usize {
    (text_start + RECORD_OUTPUT_BYTES_MAX).min(CHUNK_OUTPUT_BYTES_MAX)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn record_output_limit_counts_the_text_alone_within_the_chunk() {
        // After a 9-byte banner, 16 MiB of text end exactly at the limit.
        assert_eq!(record_output_limit(9), 9 + RECORD_OUTPUT_BYTES_MAX);
        // Near the chunk's end the chunk bound is the lower one.
        let late = CHUNK_OUTPUT_BYTES_MAX - 10;
        assert_eq!(record_output_limit(late), CHUNK_OUTPUT_BYTES_MAX);
    }
}
