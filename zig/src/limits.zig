//! The engine's limits, each spelled `<words>_max` after its header name
//! (`EVTX_LIMIT_RECORD_OUTPUT_BYTES` is `record_output_bytes_max`, the Rust engine's
//! `limits::RECORD_OUTPUT_BYTES_MAX`). The shared ones are defined, with their reasons, in
//! rust/evtx-abi/src/limits.rs, which cbindgen copies into include/evtx.h as `EVTX_LIMIT_*`;
//! capi.zig re-exports these under those names, so the conformance test
//! (compare/harness/abi_conformance.zig) fails to compile when a value here differs from the
//! header's. The engine's own bounds follow, each with its reason. Modules import them from
//! here, under these names (`limits.record_output_bytes_max`), never a local alias. Only
//! crafted files reach them.

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

// The engine's own bounds (not in the C ABI: they change no output, or only the reference's),
// first those with a twin of the same name in rust/evtx-core/src/limits.rs.

/// Distinct names `program.FragmentNames` numbers; past it, fragments render the slow way.
pub const fragment_name_ids_max = 1 << 16;
/// Bytes of those names; past it, fragments render the slow way.
pub const fragment_name_bytes_max = 1 << 20;
/// Bytes a chunk grows to with translated `--wevt-cache` templates: the chunk plus far more
/// templates than one chunk's records can name (chunk offsets stay far below `u32`).
pub const chunk_extension_bytes_max = 16 << 20;
/// Nested instances (each a whole BinXML value of the one above) that the template
/// subcommands search for a value the reference cannot read (`template_instances`).
pub const instance_scan_depth_max = 8;

// The Rust engine's other bounds have no twin here, each for its reason: its
// `SIGNATURE_DEPTH_MAX` is `stream_nesting_max` (the program scan stops at the stream depth:
// fast-path reach only, the same bytes; ARCHITECTURE.md); its `IDENTITY_VARIANTS_MAX` and
// `IDENTITY_BYTES_MAX` bound `Identities`, which keeps several variants per GUID and size
// where `template.Bodies` keeps one entry (`bodies_max`, `body_bytes_max` below); its
// `CHUNK_NODES_MAX` and `DEFINITION_BYTES_MAX` bound a chunk's tree nodes and definition
// bytes, where this engine bounds only each record's nodes and edges, the definitions it
// parses counted in (`record_nodes_max`, `record_edges_max`): a chunk's definition store
// grows with its records.

// The Zig engine's own bounds (no Rust twin).

/// Child-list entries one record may create, in either store (shared fragments multiply
/// them): the work budget beside `record_nodes_max`.
pub const record_edges_max = 1 << 22;
/// Texts `tree.Names` keeps across chunks (PERF.md H123): past it, the next chunk starts
/// afresh (ids are only ever compared inside one chunk's records and definitions).
pub const names_max = 1 << 16;
/// Bytes of those texts: past it, the next chunk starts afresh.
pub const name_bytes_max = 1 << 20;
/// Run-wide fingerprints of definitions a parser keeps (`template.fingerprintAt`); past this
/// many it starts over.
pub const known_definitions_max = 1 << 16;
/// Definition bodies `template.Bodies` keeps across chunks (PERF.md H124): past it, or past
/// `body_bytes_max`, it starts afresh (a body not kept is walked again, the same
/// fingerprint).
pub const bodies_max = 1 << 14;
/// Bytes of those bodies and their name texts.
pub const body_bytes_max = 4 << 20;
/// Resources one PE file may yield (`extract-wevt-templates`). Nested directories may share
/// sub-directories, so a crafted file could name one blob billions of times; past this it is
/// a fault, not an allocation.
pub const resources_max = 1 << 16;
/// Input paths `extract-wevt-templates` may collect (files named or found); past it: an error.
pub const input_files_max = 1 << 20;
/// Bytes of a `.wevtcache`, PE or substitutions file the template subcommands read whole (past
/// this: a read error); Rust's `std::fs::read` is bounded by memory alone.
pub const whole_file_bytes_max = 1 << 31;
/// How deep a substitutions JSON value may nest: serde_json's recursion limit, which evtx-rs's
/// `apply-wevt-cache` reader has built in.
pub const json_depth_max = 128;

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
