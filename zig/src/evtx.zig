//! evtx-zig: an EVTX (Windows XML Event Log) parser and renderer whose output is
//! byte-identical to `evtx_dump` 0.15.1 (see shared/docs/evtx-format.md).
//!
//! Library map: `file_header` (file header, chunk slots), `chunk` (chunk header, checksums,
//! string table, record walk), `carve` (`--recover-records`), `tokens` (BinXML token
//! parser, trees), `template` (template instances), `values` (value types), `render_json` /
//! `render_xml`, `escape` (UTF-16 to escaped UTF-8), `crc32`, `input` (chunk windows read
//! from a file, or lent bytes; the stdin spool), `dump` (chunk order, per-chunk rendering,
//! threads), `info` (the `info` report: file and chunk headers only).
pub const crc32 = @import("crc32.zig");
pub const escape = @import("escape.zig");
pub const values = @import("values.zig");
pub const code_pages = @import("code_pages.zig");
pub const file_header = @import("file_header.zig");
pub const input = @import("input.zig");
pub const limits = @import("limits.zig");
pub const chunk = @import("chunk.zig");
pub const carve = @import("carve.zig");
pub const tokens = @import("tokens.zig");
pub const template = @import("template.zig");
pub const render_json = @import("render_json.zig");
pub const render_xml = @import("render_xml.zig");
pub const program = @import("program.zig");
pub const mta = @import("mta.zig");
pub const dump = @import("dump.zig");
pub const info = @import("info.zig");
pub const pe = @import("pe.zig");
pub const wevt_cache = @import("wevt_cache.zig");

comptime {
    if (@import("builtin").is_test) _ = @import("testing.zig");
}

test {
    @import("std").testing.refAllDecls(@This());
}
