//! `--recover-records` (contract 5.4): carving stale records out of the unallocated space
//! of a chunk — between a bad record and the resync point, after the last live record, and
//! the whole data area of a cleared chunk. The walker (chunk.zig) decides which span to carve;
//! this module finds the records in it.
//!
//! A carved hit is a record magic whose header reads (5.1), whose trailing size copy equals
//! its size, and which ends inside the span. The next search starts where the hit ends, or,
//! when the hit turns out to be noise (it fails to parse or render, the caller says so with
//! `rescanAfter`), one byte after its magic: real records may sit inside the span it claimed.
const std = @import("std");
const assert = std.debug.assert;
const chunk = @import("chunk.zig");
const records = @import("records.zig");
const escape = @import("escape.zig");
const render_xml = @import("render_xml.zig");

/// Chunk offsets `[start, end)` still to carve; empty when `start >= end`.
pub const Span = struct {
    start: u32 = 0,
    end: u32 = 0,

    pub const empty: Span = .{};

    pub fn isEmpty(s: *const Span) bool {
        return s.start >= s.end;
    }
};

/// The next carved record in `span` (marked `recovered`), moving `span.start` past it; null
/// when the span holds no more (the span is then empty).
pub fn next(bytes: *const [chunk.size]u8, span: *Span) ?records.RecordHeader {
    assert(span.end <= chunk.size);
    while (span.start < span.end) {
        // The magic must lie inside the span, as all of the record must.
        const at = std.mem.indexOfPos(
            u8,
            bytes[0..span.end],
            span.start,
            records.record_magic,
        ) orelse break;
        if (recordAt(bytes, @intCast(at))) |r| {
            if (r.offset + r.size <= span.end) {
                span.start = r.offset + r.size;
                return r;
            }
        }
        span.start = @intCast(at + 1);
    }
    span.start = span.end;
    return null;
}

/// Resume carving one byte after the magic of `r`, a carved hit that turned out to be noise.
pub fn rescanAfter(span: *Span, r: *const records.RecordHeader) void {
    assert(r.recovered);
    span.start = r.offset + 1;
}

/// Marks the record text rendered at `out[start..]` as carved: `<!-- recovered -->` on the
/// line after the XML declaration, `"recovered":true` first in the top-level JSON object
/// (indented like the other members in `-o json`).
pub fn markRecovered(out: *escape.Out, start: usize) escape.Error!void {
    const text = out.list.items[start..];
    if (std.mem.startsWith(u8, text, render_xml.declaration)) {
        return out.list.insertSlice(
            out.gpa,
            start + render_xml.declaration.len,
            "<!-- recovered -->\n",
        );
    }
    if (text.len == 0 or text[0] != '{') return;
    const mark =
        if (text.len > 1 and text[1] == '\n') "\n  \"recovered\": true," else "\"recovered\":true,";
    return out.list.insertSlice(out.gpa, start + 1, mark);
}

/// The record at `pos` when it reads and ends with the copy of its size.
fn recordAt(bytes: *const [chunk.size]u8, pos: u32) ?records.RecordHeader {
    var r = switch (records.readRecordHeader(bytes, pos)) {
        .ok => |r| r,
        .err => return null,
    };
    const copy_at = r.binxmlEnd();
    if (copy_at > chunk.size - 4) return null;
    if (std.mem.readInt(u32, bytes[copy_at..][0..4], .little) != r.size) return null;
    r.recovered = true;
    return r;
}

// ---------------------------------------------------------------------------------------

/// Writes a record header at `pos`: magic, `size`, `id`, a zero FILETIME, and the size copy
/// `copy` at the end.
fn putRecord(bytes: *[chunk.size]u8, pos: u32, size: u32, id: u64, copy: u32) void {
    @memcpy(bytes[pos..][0..4], records.record_magic);
    std.mem.writeInt(u32, bytes[pos + 4 ..][0..4], size, .little);
    std.mem.writeInt(u64, bytes[pos + 8 ..][0..8], id, .little);
    std.mem.writeInt(u32, bytes[pos + size - 4 ..][0..4], copy, .little);
}

test "carving: size copy, span end, overlapping hits, rescan" {
    const bytes = try std.testing.allocator.create([chunk.size]u8);
    defer std.testing.allocator.destroy(bytes);
    @memset(bytes, 0);
    putRecord(bytes, 600, 100, 1, 100); // good
    putRecord(bytes, 700, 100, 2, 99); // size copy wrong: skipped
    putRecord(bytes, 900, 100, 3, 100); // good, but a noise hit claims it below
    putRecord(bytes, 1000, 200, 4, 200); // ends at 1200, past the span end 1150
    putRecord(bytes, 1040, 60, 5, 60); // inside record 4's claimed bytes
    var span: Span = .{ .start = 512, .end = 1150 };
    const a = next(bytes, &span).?;
    try std.testing.expectEqual(@as(u64, 1), a.id);
    try std.testing.expect(a.recovered);
    try std.testing.expectEqual(@as(u32, 700), span.start);
    const b = next(bytes, &span).?;
    try std.testing.expectEqual(@as(u64, 3), b.id);
    // Say record 3 failed to render: carving resumes one byte after its magic.
    rescanAfter(&span, &b);
    try std.testing.expectEqual(@as(u32, 901), span.start);
    try std.testing.expectEqual(@as(u64, 5), next(bytes, &span).?.id);
    try std.testing.expect(next(bytes, &span) == null);
    try std.testing.expect(span.isEmpty());
    // A record magic whose last bytes pass the span end is not a hit.
    span = .{ .start = 1000, .end = 1002 };
    try std.testing.expect(next(bytes, &span) == null);
    // A size copy that would lie past the chunk end.
    putRecord(bytes, chunk.size - 100, 100, 6, 100);
    std.mem.writeInt(u32, bytes[chunk.size - 96 ..][0..4], 104, .little);
    span = .{ .start = chunk.size - 200, .end = chunk.size };
    try std.testing.expect(next(bytes, &span) == null);
}

test "markRecovered: XML comment after the declaration, first JSON member" {
    const gpa = std.testing.allocator;
    var out = escape.Out.init(gpa);
    defer out.deinit();
    const cases = .{
        .{
            render_xml.declaration ++ "<Event/>",
            render_xml.declaration ++ "<!-- recovered -->\n<Event/>",
        },
        .{ "{\"Event\":null}", "{\"recovered\":true,\"Event\":null}" },
        .{ "{\n  \"Event\": null\n}", "{\n  \"recovered\": true,\n  \"Event\": null\n}" },
    };
    inline for (cases) |c| {
        out.truncate(0);
        try out.write("Record 7 (recovered)\n");
        const start = out.len();
        try out.write(c[0]);
        try markRecovered(&out, start);
        try std.testing.expectEqualStrings("Record 7 (recovered)\n" ++ c[1], out.list.items);
    }
}
