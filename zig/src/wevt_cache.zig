//! The `.wevtcache` container (version 1), as `evtx_dump` 0.15.1 writes and reads it:
//! `WEVTCACH`, version (u32 LE) 1, entry count (u32 LE), then per entry a kind (u8; 1 is a
//! raw `WEVT_TEMPLATE` resource, the only kind) and a length (u64 LE) before its bytes.
//! `extract-wevt-templates` writes it; `--wevt-cache` and `apply-wevt-cache` read it.
const std = @import("std");
const assert = std.debug.assert;

pub const magic = "WEVTCACH";
pub const version: u32 = 1;
pub const header_size = 16;
pub const entry_header_size = 9;
const count_offset = 12;
/// The one entry kind: raw `WEVT_TEMPLATE` resource bytes (a CRIM blob).
pub const kind_crim: u8 = 1;

/// The header as the writer starts it; the count is patched by `finish`.
pub fn header(count: u32) [header_size]u8 {
    var h: [header_size]u8 = undefined;
    h[0..8].* = magic.*;
    std.mem.writeInt(u32, h[8..12], version, .little);
    std.mem.writeInt(u32, h[12..16], count, .little);
    return h;
}

/// One entry's header: kind 1 and the payload's length.
pub fn entryHeader(len: u64) [entry_header_size]u8 {
    var h: [entry_header_size]u8 = undefined;
    h[0] = kind_crim;
    std.mem.writeInt(u64, h[1..9], len, .little);
    return h;
}

/// Writes a cache to a file: `create`, `add` per blob, then `finish` (which patches the count).
pub const Writer = struct {
    file: std.fs.File,
    writer: std.fs.File.Writer,
    count: u32 = 0,

    pub fn init(file: std.fs.File, buffer: []u8) std.Io.Writer.Error!Writer {
        var w: Writer = .{ .file = file, .writer = file.writerStreaming(buffer) };
        try w.writer.interface.writeAll(&header(0));
        return w;
    }

    pub fn add(w: *Writer, blob: []const u8) std.Io.Writer.Error!void {
        assert(w.count < std.math.maxInt(u32));
        try w.writer.interface.writeAll(&entryHeader(blob.len));
        try w.writer.interface.writeAll(blob);
        w.count += 1;
    }

    pub fn finish(w: *Writer) !u32 {
        try w.writer.interface.flush();
        var count: [4]u8 = undefined;
        std.mem.writeInt(u32, &count, w.count, .little);
        try w.file.pwriteAll(&count, count_offset);
        return w.count;
    }
};

/// Why a cache could not be read, in the reference's `WevtCacheFileError` words.
pub const Fault = union(enum) {
    /// A short read: `I/O error while ACTION `PATH`: failed to fill whole buffer`.
    short_read: []const u8,
    invalid_magic,
    unsupported_version: u32,
    unknown_kind: u8,
    length_too_large: u64,

    /// The line after `Error: ` (the caller adds anyhow's `Caused by:` for a short read).
    pub fn write(fault: Fault, w: *std.Io.Writer, path: []const u8) std.Io.Writer.Error!void {
        switch (fault) {
            .short_read => |action| try w.print(
                "I/O error while {s} `{s}`: failed to fill whole buffer",
                .{ action, path },
            ),
            .invalid_magic => try w.print("invalid `.wevtcache` magic for `{s}`", .{path}),
            .unsupported_version => |found| try w.print(
                "unsupported `.wevtcache` version {d} for `{s}` (expected {d})",
                .{ found, path, version },
            ),
            .unknown_kind => |kind| try w.print(
                "unknown `.wevtcache` entry kind {d} for `{s}`",
                .{ kind, path },
            ),
            .length_too_large => |len| try w.print(
                "`.wevtcache` entry length {d} is larger than the rest of `{s}`",
                .{ len, path },
            ),
        }
    }
};

/// Reads the entries of a whole cache file held in memory, in order, as the reference's
/// reader does: a fault ends the read (the blobs before it were already handed out).
pub const Reader = struct {
    bytes: []const u8,
    at: usize = header_size,
    remaining: u32,

    pub fn init(bytes: []const u8, fault: *Fault) error{Fault}!Reader {
        if (bytes.len < header_size) return fail(fault, .{ .short_read = "read header" });
        if (!std.mem.eql(u8, bytes[0..8], magic)) return fail(fault, .invalid_magic);
        const found = std.mem.readInt(u32, bytes[8..12], .little);
        if (found != version) return fail(fault, .{ .unsupported_version = found });
        return .{ .bytes = bytes, .remaining = std.mem.readInt(u32, bytes[12..16], .little) };
    }

    /// The next blob, or null after the header's count.
    pub fn next(r: *Reader, fault: *Fault) error{Fault}!?[]const u8 {
        assert(r.at <= r.bytes.len);
        if (r.remaining == 0) return null;
        if (r.bytes.len - r.at < entry_header_size)
            return fail(fault, .{ .short_read = "read entry header" });
        const kind = r.bytes[r.at];
        if (kind != kind_crim) return fail(fault, .{ .unknown_kind = kind });
        const len = std.mem.readInt(u64, r.bytes[r.at + 1 ..][0..8], .little);
        r.at += entry_header_size;
        if (len > r.bytes.len - r.at) return fail(fault, .{ .length_too_large = len });
        const blob = r.bytes[r.at..][0..@intCast(len)];
        r.at += blob.len;
        r.remaining -= 1;
        return blob;
    }
};

fn fail(fault: *Fault, value: Fault) error{Fault} {
    fault.* = value;
    return error.Fault;
}

test "the reader takes what the writer's layout gives and stops at a lying length" {
    var bytes: std.ArrayList(u8) = .empty;
    defer bytes.deinit(std.testing.allocator);
    const gpa = std.testing.allocator;
    try bytes.appendSlice(gpa, &header(3));
    try bytes.appendSlice(gpa, &entryHeader(3));
    try bytes.appendSlice(gpa, "abc");
    try bytes.appendSlice(gpa, &entryHeader(0));
    try bytes.appendSlice(gpa, &entryHeader(0xffff_fff0));
    var fault: Fault = undefined;
    var r = try Reader.init(bytes.items, &fault);
    try std.testing.expectEqualStrings("abc", (try r.next(&fault)).?);
    try std.testing.expectEqual(@as(usize, 0), (try r.next(&fault)).?.len);
    try std.testing.expectError(error.Fault, r.next(&fault));
    try std.testing.expectEqual(@as(u64, 0xffff_fff0), fault.length_too_large);
    // The reference's 16 bytes for an empty cache (`extract-wevt-templates` on no blob).
    try std.testing.expectEqualSlices(u8, "WEVTCACH\x01\x00\x00\x00\x00\x00\x00\x00", &header(0));
}
