//! The engine's limits. Each is defined, with its reason, in rust/evtx-abi/src/limits.rs, which
//! cbindgen copies into include/evtx.h as `EVTX_LIMIT_*`; capi.zig re-exports these under those
//! names, so the conformance test (compare/harness/abi_conformance.zig) fails to compile when
//! a value here differs from the header's. Only crafted files reach them.

/// `EVTX_LIMIT_THREADS`: worker threads at most.
pub const threads_max = 256;
/// `EVTX_LIMIT_RECORD_OUTPUT_BYTES`: rendered bytes of one record (contract 12).
pub const record_output_bytes_max = 16 << 20;
/// `EVTX_LIMIT_CHUNK_OUTPUT_BYTES`: rendered bytes of one chunk (contract 12).
pub const chunk_output_bytes_max = 64 << 20;
/// `EVTX_LIMIT_RECORD_NODES`: tree nodes one record may build (contract 12).
pub const record_nodes_max = 1 << 18;
/// `EVTX_LIMIT_ELEMENT_DEPTH`: open elements in one BinXML stream (contract 6.6).
pub const element_depth_max = 512;
/// `EVTX_LIMIT_STREAM_NESTING`: nested BinXML streams (contract 6.6).
pub const stream_nesting_max = 64;
/// `EVTX_LIMIT_RENDER_DEPTH`: elements the renderers nest across streams (the stack bound).
pub const render_depth_max = 512;
/// `EVTX_LIMIT_PROGRAMS`: compiled programs one renderer keeps; new shapes are refused past it.
pub const programs_max = 8192;
/// `EVTX_LIMIT_PROGRAM_BYTES`: their literal bytes plus 8 per operation; refused past it.
pub const program_bytes_max = 32 << 20;
/// `EVTX_LIMIT_INSTANCE_VALUES`: values one template instance may declare (the reference's
/// preflight limit).
pub const instance_values_max = 4096;
/// `EVTX_LIMIT_PROGRAM_VALUES`: substitution values one compiled program reads, one instance's
/// cap; a record with more (nested instances) renders the slow way, to the same bytes.
pub const program_values_max = 4096;
/// `EVTX_LIMIT_PROGRAM_ARRAY_ITEMS`: array items one signature describes one by one (their
/// emptiness is one 64-bit mask); a longer array renders the slow way, to the same bytes.
pub const program_array_items_max = 64;
/// `EVTX_LIMIT_DEFER_DEPTH`: nested BinXml values whose failure waits until the record uses
/// them (shared-fixtures/README.md, "Unused BinXML values"); deeper ones fail at once.
pub const defer_depth_max = 8;

/// The output length past which the record whose text starts at `text_start` fails (contract
/// 12): its text, from after its `Record N` banner up to its newline (neither counted), may hold
/// `record_output_bytes_max` bytes, as the reference counts it (`Budget::new` at the text's
/// start, checked before the newline); and the chunk's output may not pass
/// `chunk_output_bytes_max`. The Rust engine's `limits::record_output_limit`.
pub fn recordOutputLimit(text_start: usize) usize {
    return @min(text_start + record_output_bytes_max, chunk_output_bytes_max);
}

test "recordOutputLimit counts the text alone, within the chunk" {
    // After a 9-byte banner, 16 MiB of text end exactly at the limit.
    try @import("std").testing.expectEqual(9 + record_output_bytes_max, recordOutputLimit(9));
    // Near the chunk's end the chunk bound is the lower one.
    const late = chunk_output_bytes_max - 10;
    try @import("std").testing.expectEqual(chunk_output_bytes_max, recordOutputLimit(late));
}

comptime {
    // The element depth bounds one stream; rendering spans nested streams and never less.
    if (render_depth_max < element_depth_max) @compileError("render depth below element depth");
    if (record_output_bytes_max > chunk_output_bytes_max) @compileError(
        "record above chunk output",
    );
    // A program reads at most one instance's values, and array items fit the 64-bit mask.
    if (program_values_max > instance_values_max) @compileError("program values above instance");
    if (program_array_items_max > 64) @compileError("array items past the emptiness mask");
}
