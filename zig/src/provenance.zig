//! `--provenance`: where each record came from, written into its text by the engine (as the
//! recovered mark of `carve.zig`): the input as named, the chunk slot, the record's file
//! offset, whether it was carved, and its chunk's checksum status. The format is in
//! `shared-fixtures/README.md`, "Provenance"; the Rust engine's `provenance.rs` writes the
//! same bytes.
//!
//! JSON gets a first member, `{"provenance":{"file":"F","chunk":N,"offset":N,"recovered":B,
//! "checksum":"S"},...`, XML a comment line right after the declaration, `<!-- provenance
//! file="F" chunk="N" offset="0xH" recovered="B" checksum="S" -->`. Both come before a carved
//! record's own mark, so a record's text with provenance is its text without, plus one
//! member or line.
const std = @import("std");
const assert = std.debug.assert;
const chunk = @import("chunk.zig");
const escape = @import("escape.zig");
const render_xml = @import("render_xml.zig");

/// The checksum status of the chunk a record was read from (`evtx_record.checksum` in the C
/// ABI, `EVTX_CHECKSUM_*`).
pub const Checksum = enum(u8) {
    /// Not checked: the chunk keeps no CRC32s (flag NO_CRC32), it is the cut last chunk of
    /// the file, or neither `--provenance` nor `--validate-checksums` asked.
    unchecked = 0,
    /// The header CRC32 and the records CRC32 both match (contract 4.2).
    ok = 1,
    /// One of them does not, or the free space offset is out of range.
    bad = 2,

    /// The status of a whole chunk: the checks of `--validate-checksums`, in its order.
    pub fn ofChunk(bytes: *const [chunk.size]u8, header: *const chunk.ChunkHeader) Checksum {
        if (header.flags & chunk.flag_no_crc32 != 0) return .unchecked;
        return if (chunk.validateChecksums(bytes, header) == null) .ok else .bad;
    }
};

/// Where a record came from, as its mark says it.
pub const Origin = struct {
    chunk: u32,
    offset: u64,
    recovered: bool,
    checksum: Checksum,
};

/// The input's name as the marks write it (the path as given; `-` for standard input).
pub const Provenance = struct {
    file: []const u8,

    /// Marks the record text at `out[start..]` with `origin`: a comment line after the XML
    /// declaration, or a first JSON member. Text of another shape is left alone.
    pub fn mark(p: *const Provenance, out: *escape.Out, start: usize, origin: Origin) !void {
        @branchHint(.cold);
        const text = out.list.items[start..];
        var buffer: [160]u8 = undefined;
        var tail: std.Io.Writer = .fixed(&buffer);
        var mark_text: std.Io.Writer.Allocating = .init(out.gpa);
        defer mark_text.deinit();
        const w = &mark_text.writer;
        const at = if (std.mem.startsWith(u8, text, render_xml.declaration)) at: {
            w.writeAll("<!-- provenance file=\"") catch return error.OutOfMemory;
            writeXmlEscaped(w, p.file) catch return error.OutOfMemory;
            const format = "\" chunk=\"{d}\" offset=\"0x{x}\" recovered=\"{}\"" ++
                " checksum=\"{s}\" -->\n";
            tail.print(format, .{
                origin.chunk, origin.offset, origin.recovered, @tagName(origin.checksum),
            }) catch unreachable;
            break :at start + render_xml.declaration.len;
        } else if (text.len > 0 and text[0] == '{') at: {
            w.writeAll("\"provenance\":{\"file\":\"") catch return error.OutOfMemory;
            writeJsonEscaped(w, p.file) catch return error.OutOfMemory;
            const format = "\",\"chunk\":{d},\"offset\":{d},\"recovered\":{}," ++
                "\"checksum\":\"{s}\"}},";
            tail.print(format, .{
                origin.chunk, origin.offset, origin.recovered, @tagName(origin.checksum),
            }) catch unreachable;
            break :at start + 1;
        } else return;
        w.writeAll(tail.buffered()) catch return error.OutOfMemory;
        try out.list.insertSlice(out.gpa, at, mark_text.written());
    }
};

/// `text` as the inside of a JSON string: `"` and `\` escaped, `\b \f \n \r \t` by their
/// short forms, other controls below 0x20 as `\u00xx` (lowercase hex), the rest as is.
pub fn writeJsonEscaped(w: *std.Io.Writer, text: []const u8) std.Io.Writer.Error!void {
    for (text) |b| switch (b) {
        '"' => try w.writeAll("\\\""),
        '\\' => try w.writeAll("\\\\"),
        0x08 => try w.writeAll("\\b"),
        0x0c => try w.writeAll("\\f"),
        '\n' => try w.writeAll("\\n"),
        '\r' => try w.writeAll("\\r"),
        '\t' => try w.writeAll("\\t"),
        0...0x07, 0x0b, 0x0e...0x1f => try w.print("\\u{x:0>4}", .{b}),
        else => try w.writeByte(b),
    };
}

/// `text` as the inside of a double-quoted attribute in an XML comment: `& < > "` as entity
/// references, controls below 0x20 as `&#xH;`, and a `-` right after another `-` as `&#45;`
/// (a comment may not hold `--`).
fn writeXmlEscaped(w: *std.Io.Writer, text: []const u8) std.Io.Writer.Error!void {
    var dash = false;
    for (text) |b| {
        switch (b) {
            '&' => try w.writeAll("&amp;"),
            '<' => try w.writeAll("&lt;"),
            '>' => try w.writeAll("&gt;"),
            '"' => try w.writeAll("&quot;"),
            '-' => try w.writeAll(if (dash) "&#45;" else "-"),
            0...0x1f => try w.print("&#x{x};", .{b}),
            else => try w.writeByte(b),
        }
        dash = b == '-' and !dash;
    }
}

const origin_example: Origin = .{
    .chunk = 3,
    .offset = 0x31a08,
    .recovered = true,
    .checksum = .bad,
};

test "mark: the first JSON member, before a carved record's own" {
    const gpa = std.testing.allocator;
    var out = escape.Out.init(gpa);
    defer out.deinit();
    try out.write("Record 9\n{\"recovered\":true,\"Event\":1}\n");
    const p: Provenance = .{ .file = "logs/a \"b\"\\c\t.evtx" };
    try p.mark(&out, 9, origin_example);
    try std.testing.expectEqualStrings("Record 9\n{\"provenance\":{\"file\":" ++
        "\"logs/a \\\"b\\\"\\\\c\\t.evtx\",\"chunk\":3,\"offset\":203272,\"recovered\":true," ++
        "\"checksum\":\"bad\"},\"recovered\":true,\"Event\":1}\n", out.list.items);
}

test "mark: a comment line after the XML declaration, dashes and markup escaped" {
    const gpa = std.testing.allocator;
    var out = escape.Out.init(gpa);
    defer out.deinit();
    try out.write(render_xml.declaration ++ "<!-- recovered -->\n<Event/>\n");
    const p: Provenance = .{ .file = "a--b<&>\"-\x01.evtx" };
    try p.mark(&out, 0, origin_example);
    try std.testing.expectEqualStrings(render_xml.declaration ++ "<!-- provenance file=" ++
        "\"a-&#45;b&lt;&amp;&gt;&quot;-&#x1;.evtx\" chunk=\"3\" offset=\"0x31a08\" " ++
        "recovered=\"true\" checksum=\"bad\" -->\n<!-- recovered -->\n<Event/>\n", out.list.items);
    var buffer: [32]u8 = undefined;
    var w: std.Io.Writer = .fixed(&buffer);
    try writeXmlEscaped(&w, "a---b");
    try std.testing.expectEqualStrings("a-&#45;-b", w.buffered());
    w = .fixed(&buffer);
    try writeJsonEscaped(&w, "\x1f\u{e9}");
    try std.testing.expectEqualStrings("\\u001f\u{e9}", w.buffered());
}
