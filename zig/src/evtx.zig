//! evtx-zig: an EVTX (Windows XML Event Log) parser and renderer whose output is
//! byte-identical to `evtx_dump` 0.15.1 (see shared/docs/evtx-format.md).
//!
//! Library map (the same file stems as rust/evtx-core/src, ARCHITECTURE.md): `bytes`
//! (little-endian reads), `file_header` (file header, chunk slots), `chunk` (chunk header,
//! checksums, string table), `records` (record header, walk, resync), `carve`
//! (`--recover-records`), `tree` (element trees), `tokens` (BinXML token parser), `template`
//! (template instances), `values_decode` / `values_format` (value types), `program` (compiled
//! record programs), `render_json` / `render_xml`, `escape` (UTF-16 to escaped UTF-8),
//! `crc32`, `input` (chunk windows read from a file, or lent bytes; the stdin spool),
//! `error` (error kinds, failure details; imported as `errors`), `options`, `filter` (record
//! filters, decided before rendering), `limits`, `dump` (an EVTX file, its chunk order,
//! per-chunk rendering), `pipeline` (threads, in-order results), `info` (the `info` report:
//! file and chunk headers only), `mta` (`--mta`), `wevt_cache` and `pe` (provider templates,
//! `--wevt-cache`), `template_instances` (records and their template instances as the
//! reference's template subcommands read them), `os_error` (OS errors in Rust's words),
//! `provenance` (`--provenance`), `triage` (what a log holds and whether it was touched).
pub const bytes = @import("bytes.zig");
pub const crc32 = @import("crc32.zig");
pub const escape = @import("escape.zig");
pub const values_decode = @import("values_decode.zig");
pub const values_format = @import("values_format.zig");
pub const code_pages = @import("code_pages.zig");
pub const file_header = @import("file_header.zig");
pub const input = @import("input.zig");
pub const limits = @import("limits.zig");
pub const chunk = @import("chunk.zig");
/// `error.zig` (`error` is a keyword).
pub const errors = @import("error.zig");
pub const records = @import("records.zig");
pub const carve = @import("carve.zig");
pub const provenance = @import("provenance.zig");
pub const tree = @import("tree.zig");
pub const tokens = @import("tokens.zig");
pub const template = @import("template.zig");
pub const render_json = @import("render_json.zig");
pub const render_xml = @import("render_xml.zig");
pub const program = @import("program.zig");
pub const mta = @import("mta.zig");
pub const options = @import("options.zig");
pub const filter = @import("filter.zig");
pub const skip = @import("skip.zig");
pub const dump = @import("dump.zig");
pub const pipeline = @import("pipeline.zig");
pub const info = @import("info.zig");
pub const triage = @import("triage.zig");
pub const pe = @import("pe.zig");
pub const reader_error = @import("reader_error.zig");
pub const wevt_cache = @import("wevt_cache.zig");
pub const template_instances = @import("template_instances.zig");
pub const os_error = @import("os_error.zig");

comptime {
    if (@import("builtin").is_test) _ = @import("testing.zig");
}

test {
    @import("std").testing.refAllDecls(@This());
}
