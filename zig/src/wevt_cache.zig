//! The `.wevtcache` container (version 1), as `evtx_dump` 0.15.1 writes and reads it:
//! `WEVTCACH`, version (u32 LE) 1, entry count (u32 LE), then per entry a kind (u8; 1 is a
//! raw `WEVT_TEMPLATE` resource, the only kind) and a length (u64 LE) before its bytes.
//! `extract-wevt-templates` writes it; `--wevt-cache` and `apply-wevt-cache` read it.
const std = @import("std");
const assert = std.debug.assert;
const file_header = @import("file_header.zig");
const chunk_mod = @import("chunk.zig");
const input = @import("input.zig");
const options = @import("options.zig");
const dump = @import("dump.zig");
const pipeline = @import("pipeline.zig");
const values_format = @import("values_format.zig");

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

// ---------------------------------------------------------------------------------------------
// CRIM manifests (Rust's mirror: `rust/evtx-core/src/wevt_cache.rs`, `parse_crim`).

/// Size of a TEMP header; its BinXML follows.
pub const temp_header_size = 40;

/// A manifest error, written in the reference's words.
pub const CrimFault = union(enum) {
    signature: struct { offset: u32, expected: [4]u8, found: [4]u8 },
    truncated: struct { what: []const u8, offset: u32, need: usize, have: usize },
    offset: struct { what: []const u8, offset: u32, len: usize },
    size: struct { what: []const u8, offset: u32, size: u32 },
    count: struct { what: []const u8, offset: u32, count: u32 },
    utf16: struct { what: []const u8, offset: u32 },

    pub fn format(f: CrimFault, w: *std.Io.Writer) std.Io.Writer.Error!void {
        switch (f) {
            .signature => |s| {
                try w.print("invalid signature at offset {d}: expected ", .{s.offset});
                try writeBytes(w, &s.expected);
                try w.writeAll(", got ");
                try writeBytes(w, &s.found);
            },
            .truncated => |t| try w.print(
                "buffer too small for {s} at offset {d} (need {d} bytes, have {d})",
                .{ t.what, t.offset, t.need, t.have },
            ),
            .offset => |o| try w.print(
                "offset {d} out of bounds for {s} (len={d})",
                .{ o.offset, o.what, o.len },
            ),
            .size => |s| try w.print(
                "size {d} out of bounds for {s} at offset {d}",
                .{ s.size, s.what, s.offset },
            ),
            .count => |c| try w.print(
                "invalid count {d} for {s} at offset {d}",
                .{ c.count, c.what, c.offset },
            ),
            .utf16 => |u| try w.print(
                "invalid utf-16 string for {s} at offset {d}",
                .{ u.what, u.offset },
            ),
        }
    }

    /// Rust's `{:?}` of a byte array: `[67, 82, 73, 77]`.
    fn writeBytes(w: *std.Io.Writer, bytes: *const [4]u8) std.Io.Writer.Error!void {
        try w.print("[{d}, {d}, {d}, {d}]", .{ bytes[0], bytes[1], bytes[2], bytes[3] });
    }
};

/// One TEMP of a manifest: where it lies in the blob, its GUID, whether the cache indexes it
/// (only the templates of each provider's last `TTBL` element are, as in the reference).
pub const TempRef = struct {
    offset: usize,
    size: usize,
    guid: [16]u8,
    /// End of its BinXML (before the template items), relative to the TEMP.
    binxml_end: usize,
    provider: usize,
    indexed: bool,
};

const CrimError = error{ Crim, OutOfMemory };

/// Where a manifest's fault is reported and its templates collected.
const Crim = struct {
    gpa: std.mem.Allocator,
    fault: *CrimFault,
    temps: *std.ArrayList(TempRef),

    fn fail(c: Crim, value: CrimFault) CrimError {
        c.fault.* = value;
        return error.Crim;
    }

    fn truncated(c: Crim, buf: []const u8, off: usize, need: usize, what: []const u8) CrimError {
        return c.fail(.{ .truncated = .{
            .what = what,
            .offset = toU32(off),
            .need = need,
            .have = buf.len -| off,
        } });
    }

    fn require(c: Crim, buf: []const u8, off: usize, need: usize, what: []const u8) CrimError!void {
        if (off > buf.len or buf.len - off < need) return c.truncated(buf, off, need, what);
    }

    fn u32At(c: Crim, buf: []const u8, off: usize, what: []const u8) CrimError!u32 {
        try c.require(buf, off, 4, what);
        return std.mem.readInt(u32, buf[off..][0..4], .little);
    }

    fn sigAt(c: Crim, buf: []const u8, off: usize, what: []const u8) CrimError![4]u8 {
        try c.require(buf, off, 4, what);
        return buf[off..][0..4].*;
    }

    fn offset(c: Crim, off: u32, what: []const u8, len: usize) CrimError!usize {
        if (off > len) return c.fail(.{ .offset = .{ .what = what, .offset = off, .len = len } });
        return off;
    }

    fn checkedEnd(c: Crim, len: usize, off: u32, size: u32, what: []const u8) CrimError!usize {
        const start = try c.offset(off, what, len);
        if (size > len - start)
            return c.fail(.{ .size = .{ .what = what, .offset = off, .size = size } });
        return start + size;
    }

    fn signature(c: Crim, at: u32, comptime expected: *const [4]u8, found: [4]u8) CrimError!void {
        if (!std.mem.eql(u8, &found, expected)) return c.fail(.{ .signature = .{
            .offset = at,
            .expected = expected.*,
            .found = found,
        } });
    }
};

fn toU32(v: usize) u32 {
    return std.math.cast(u32, v) orelse std.math.maxInt(u32);
}

/// Parses a CRIM manifest and appends its templates to `temps` in order (providers, then
/// tables), checking what the reference checks; on `error.Crim`, `fault` says why.
pub fn parseCrim(
    gpa: std.mem.Allocator,
    blob: []const u8,
    temps: *std.ArrayList(TempRef),
    fault: *CrimFault,
) CrimError!void {
    const c: Crim = .{ .gpa = gpa, .fault = fault, .temps = temps };
    try c.signature(0, "CRIM", try c.sigAt(blob, 0, "CRIM signature"));
    const size = try c.u32At(blob, 4, "CRIM.size");
    try c.require(blob, 8, 2, "CRIM.major_version");
    try c.require(blob, 10, 2, "CRIM.minor_version");
    const providers = try c.u32At(blob, 12, "CRIM.provider_count");
    if (size < 16 or size > blob.len)
        return c.fail(.{ .size = .{ .what = "CRIM.size", .offset = 0, .size = size } });
    const crim = blob[0..size];
    const n: usize = providers;
    const end = n *| 20 +| 16;
    if (end > crim.len) return c.fail(.{ .truncated = .{
        .what = "CRIM provider descriptor array",
        .offset = 16,
        .need = end - 16,
        .have = crim.len -| 16,
    } });
    for (0..n) |i| {
        const at = try c.u32At(crim, 16 + i * 20 + 16, "CRIM.provider.offset");
        try parseProvider(c, crim, at, i);
    }
}

fn parseProvider(c: Crim, crim: []const u8, at: u32, index: usize) CrimError!void {
    const o = try c.offset(at, "WEVT provider offset", crim.len);
    try c.require(crim, o, 20, "WEVT header");
    try c.signature(at, "WEVT", try c.sigAt(crim, o, "WEVT signature"));
    const descriptors: usize = try c.u32At(crim, o + 12, "WEVT.number_of_descriptors");
    const unknown2: usize = try c.u32At(crim, o + 16, "WEVT.number_of_unknown2");
    const desc_off = o + 20;
    try c.require(crim, desc_off, descriptors *| 8, "WEVT descriptor array");
    // Every element's offset and signature is checked before any element is parsed.
    for (0..descriptors) |i| {
        const eo = try c.u32At(crim, desc_off + i * 8, "WEVT.descriptor.element_offset");
        const e = try c.offset(eo, "WEVT element offset", crim.len);
        try c.require(crim, e, 4, "WEVT element signature");
    }
    try c.require(crim, desc_off + descriptors * 8, unknown2 *| 4, "WEVT unknown2 array");
    var last_table: ?[2]usize = null;
    for (0..descriptors) |i| {
        const eo = std.mem.readInt(u32, crim[desc_off + i * 8 ..][0..4], .little);
        const sig = crim[eo..][0..4];
        if (std.mem.eql(u8, sig, "TTBL")) {
            const start = c.temps.items.len;
            try parseTtbl(c, crim, eo, index);
            last_table = .{ start, c.temps.items.len };
        } else if (isKnownElement(sig)) {
            // Parsed and checked by the reference; located only here (wevt-format.md).
        } else {
            const e = try c.offset(eo, "provider element offset", crim.len);
            try c.require(crim, e, 8, "unknown element header");
            const size = try c.u32At(crim, e + 4, "provider element size");
            _ = try c.offset(eo +| size, "unknown element end", crim.len);
        }
    }
    if (last_table) |t| for (c.temps.items[t[0]..t[1]]) |*temp| {
        temp.indexed = true;
    };
}

fn isKnownElement(sig: *const [4]u8) bool {
    const known = [_]*const [4]u8{ "CHAN", "EVNT", "KEYW", "LEVL", "MAPS", "OPCO", "TASK" };
    for (known) |k| if (std.mem.eql(u8, sig, k)) return true;
    return false;
}

fn parseTtbl(c: Crim, crim: []const u8, at: u32, provider: usize) CrimError!void {
    const o = try c.offset(at, "TTBL offset", crim.len);
    try c.require(crim, o, 12, "TTBL header");
    try c.signature(at, "TTBL", try c.sigAt(crim, o, "TTBL signature"));
    const size = try c.u32At(crim, o + 4, "TTBL.size");
    const count = try c.u32At(crim, o + 8, "TTBL.count");
    const end = switch (size) {
        0 => crim.len,
        1...11 => return c.fail(.{ .size = .{ .what = "TTBL.size", .offset = at, .size = size } }),
        else => try c.checkedEnd(crim.len, at, size, "TTBL.size"),
    };
    const table = crim[0..end];
    var cur = o + 12;
    for (0..count) |_| {
        try c.require(table, cur, temp_header_size, "TEMP header");
        const here = toU32(cur);
        try c.signature(here, "TEMP", crim[cur..][0..4].*);
        const temp_size = std.mem.readInt(u32, crim[cur + 4 ..][0..4], .little);
        if (temp_size < temp_header_size)
            return c.fail(.{ .size = .{ .what = "TEMP.size", .offset = here, .size = temp_size } });
        const temp_end = try c.checkedEnd(end, here, temp_size, "TEMP.size");
        const descriptors = std.mem.readInt(u32, crim[cur + 8 ..][0..4], .little);
        const names = std.mem.readInt(u32, crim[cur + 12 ..][0..4], .little);
        const items_at = std.mem.readInt(u32, crim[cur + 16 ..][0..4], .little);
        if (descriptors == 0 and names != 0) return c.fail(.{ .count = .{
            .what = "TEMP.item_name_count (expected 0 when item_descriptor_count == 0)",
            .offset = here + 12,
            .count = names,
        } });
        const temp = crim[cur..temp_end];
        const items_abs = if (descriptors == 0 and items_at == 0) here +| temp_size else items_at;
        var items_rel: u32 = temp_size;
        if (items_abs != 0) {
            if (items_abs < here) return c.fail(.{ .offset = .{
                .what = "TEMP.template_items_offset",
                .offset = items_abs,
                .len = crim.len,
            } });
            items_rel = items_abs - here;
        }
        const rel = try c.offset(items_rel, "TEMP.template_items_offset (relative)", temp.len);
        try parseItems(c, temp, here, descriptors, items_at);
        try c.temps.append(c.gpa, .{
            .offset = cur,
            .size = temp.len,
            .guid = crim[cur + 24 ..][0..16].*,
            .binxml_end = @max(rel, temp_header_size),
            .provider = provider,
            .indexed = false,
        });
        cur = temp_end;
    }
}

/// The item descriptors and names of a TEMP (checked, not kept: rendering needs neither).
fn parseItems(c: Crim, temp: []const u8, at: u32, count: u32, items_at: u32) CrimError!void {
    const end_abs = at +| toU32(temp.len);
    if (count == 0) {
        if (items_at != 0 and items_at != end_abs) return c.fail(.{ .offset = .{
            .what = "TEMP.template_items_offset (expected 0 or end-of-template when " ++
                "item_descriptor_count==0)",
            .offset = items_at,
            .len = end_abs,
        } });
        return;
    }
    const rel_what = "TEMP.template_items_offset (relative)";
    if (items_at < at) return c.fail(.{ .offset = .{
        .what = "TEMP.template_items_offset",
        .offset = items_at,
        .len = end_abs,
    } });
    const rel = try c.offset(items_at - at, rel_what, temp.len);
    if (rel < temp_header_size or rel >= temp.len)
        return c.fail(.{ .offset = .{ .what = rel_what, .offset = items_at, .len = end_abs } });
    const needed = @as(usize, count) *| 20;
    if (needed > temp.len - rel) return c.fail(.{ .truncated = .{
        .what = "template item descriptors",
        .offset = items_at,
        .need = needed,
        .have = temp.len - rel,
    } });
    const descriptors_end = rel + needed;
    var min_name: ?usize = null;
    for (0..count) |i| {
        const name_at = try c.u32At(temp, rel + i * 20 + 16, "TEMP.item.name_offset");
        if (name_at == 0) continue;
        if (name_at < at) return c.fail(.{ .offset = .{
            .what = "template item name_offset",
            .offset = name_at,
            .len = end_abs,
        } });
        const r = try c.offset(name_at - at, "template item name_offset (relative)", temp.len);
        min_name = @min(min_name orelse r, r);
    }
    if (min_name) |m| if (m < descriptors_end) return c.fail(.{ .offset = .{
        .what = "template item name_offset overlaps descriptor table",
        .offset = at +| toU32(m),
        .len = end_abs,
    } });
    for (0..count) |i| {
        const name_at = std.mem.readInt(u32, temp[rel + i * 20 + 16 ..][0..4], .little);
        if (name_at == 0) continue;
        try checkName(c, temp, name_at - at);
    }
}

/// A template item's name: its size (at least 4, within the TEMP), then UTF-16 up to a NUL.
fn checkName(c: Crim, temp: []const u8, r: usize) CrimError!void {
    const what = "template item name";
    try c.require(temp, r, 4, what);
    const size = std.mem.readInt(u32, temp[r..][0..4], .little);
    if (size < 4) return c.fail(.{ .size = .{ .what = what, .offset = toU32(r), .size = size } });
    try c.require(temp, r, size, what);
    const bytes = temp[r + 4 .. r + size];
    const bad: CrimFault = .{ .utf16 = .{ .what = what, .offset = toU32(r) } };
    // Rust's `decode_utf16` over the units before the first NUL: a high surrogate must be
    // followed by a low one, a low one must follow a high one.
    var high = false;
    var i: usize = 0;
    while (i + 1 < bytes.len) : (i += 2) {
        const u = std.mem.readInt(u16, bytes[i..][0..2], .little);
        if (u == 0) break;
        const is_low = u >= 0xDC00 and u <= 0xDFFF;
        if (high != is_low) return c.fail(bad);
        high = u >= 0xD800 and u <= 0xDBFF;
    }
    if (high) return c.fail(bad);
}

// ---------------------------------------------------------------------------------------------
// TEMP BinXML → chunk-style definition.

/// Appends to `ext` a chunk-style template definition equivalent to the TEMP `temp` (header
/// included): first string-table-shaped name entries, then the 24-byte definition header (GUID
/// of the TEMP) and the body, whose names are offsets into `ext`. Returns the definition's
/// offset in `ext`, or null (nothing appended) when the TEMP's BinXML is one the reference
/// fails on (bad inline name, unknown token, template instance) or that this reader does not
/// model (a value token other than String text).
pub fn translate(
    gpa: std.mem.Allocator,
    temp: []const u8,
    ext: *std.ArrayList(u8),
) error{OutOfMemory}!?u32 {
    if (temp.len < temp_header_size) return null;
    var t: Translation = .{ .binxml = temp[temp_header_size..] };
    defer t.deinit(gpa);
    if (!try t.walk(gpa)) return null;
    const base = ext.items.len;
    var at: std.ArrayList(u32) = .empty;
    defer at.deinit(gpa);
    for (t.names.items) |n| {
        // Entry: next (0), then the inline name as it is (hash, count, units, NUL).
        try at.append(gpa, std.math.cast(u32, ext.items.len) orelse return null);
        try ext.appendNTimes(gpa, 0, 4);
        try ext.appendSlice(gpa, n);
    }
    const def = std.math.cast(u32, ext.items.len) orelse return null;
    const body_len = std.math.cast(u32, t.body.items.len) orelse return null;
    for (t.refs.items) |r|
        std.mem.writeInt(u32, t.body.items[r.pos..][0..4], at.items[r.name], .little);
    try ext.appendNTimes(gpa, 0, 4);
    try ext.appendSlice(gpa, temp[24..40]);
    var size: [4]u8 = undefined;
    std.mem.writeInt(u32, &size, body_len, .little);
    try ext.appendSlice(gpa, &size);
    try ext.appendSlice(gpa, t.body.items);
    assert(base <= def and ext.items.len == def + 24 + body_len);
    return def;
}

/// The walk of one TEMP's BinXML: the body with name references zeroed, where they are, and
/// the inline names they stand for.
const Translation = struct {
    binxml: []const u8,
    p: usize = 0,
    body: std.ArrayList(u8) = .empty,
    refs: std.ArrayList(struct { pos: usize, name: usize }) = .empty,
    names: std.ArrayList([]const u8) = .empty,

    fn deinit(t: *Translation, gpa: std.mem.Allocator) void {
        t.body.deinit(gpa);
        t.refs.deinit(gpa);
        t.names.deinit(gpa);
    }

    fn take(t: *Translation, n: usize) ?[]const u8 {
        if (n > t.binxml.len - t.p) return null;
        defer t.p += n;
        return t.binxml[t.p..][0..n];
    }

    /// Copies `n` bytes to the body; false when the BinXML ends first.
    fn copy(t: *Translation, gpa: std.mem.Allocator, n: usize) error{OutOfMemory}!bool {
        try t.body.appendSlice(gpa, t.take(n) orelse return false);
        return true;
    }

    /// A count (u16) and that many UTF-16 units, copied.
    fn units(t: *Translation, gpa: std.mem.Allocator) error{OutOfMemory}!bool {
        const count = t.take(2) orelse return false;
        try t.body.appendSlice(gpa, count);
        return t.copy(gpa, 2 * @as(usize, std.mem.readInt(u16, count[0..2], .little)));
    }

    /// An inline name (hash, count, units, NUL): checked, kept, and a zeroed reference.
    fn name(t: *Translation, gpa: std.mem.Allocator) error{OutOfMemory}!bool {
        const at = t.p;
        const stored = std.mem.readInt(u16, (t.take(2) orelse return false)[0..2], .little);
        const count = std.mem.readInt(u16, (t.take(2) orelse return false)[0..2], .little);
        const text = t.take(2 * @as(usize, count)) orelse return false;
        const nul = t.take(2) orelse return false;
        if (nul[0] != 0 or nul[1] != 0) return false;
        var h: u32 = 0;
        var i: usize = 0;
        while (i < text.len) : (i += 2)
            h = h *% 65599 +% std.mem.readInt(u16, text[i..][0..2], .little);
        if (stored != @as(u16, @truncate(h))) return false;
        try t.refs.append(gpa, .{ .pos = t.body.items.len, .name = t.names.items.len });
        try t.names.append(gpa, t.binxml[at..t.p]);
        try t.body.appendNTimes(gpa, 0, 4);
        return true;
    }

    /// Walks every token to the end-of-stream; false for what `translate` refuses.
    fn walk(t: *Translation, gpa: std.mem.Allocator) error{OutOfMemory}!bool {
        while (t.p < t.binxml.len) {
            const token = t.binxml[t.p];
            t.p += 1;
            try t.body.append(gpa, token);
            const ok = switch (token) {
                0x00 => return true,
                0x01, 0x41 => try t.copy(gpa, 6) and try t.name(gpa) and
                    (token == 0x01 or try t.copy(gpa, 4)),
                0x02...0x04 => true,
                0x05, 0x45 => ok: {
                    const ty = t.take(1) orelse break :ok false;
                    if (ty[0] != 0x01) break :ok false;
                    try t.body.append(gpa, ty[0]);
                    break :ok try t.units(gpa);
                },
                0x06, 0x46, 0x09, 0x49, 0x0A => try t.name(gpa),
                0x07, 0x47, 0x0B => try t.units(gpa),
                0x08, 0x48 => try t.copy(gpa, 2),
                0x0D...0x0F => try t.copy(gpa, 3),
                else => false,
            };
            if (!ok) return false;
        }
        return true;
    }
};

// ---------------------------------------------------------------------------------------------
// `apply-wevt-cache`: a TEMP rendered with given values.

/// A substitution value for `renderWithValues`: its type byte and its bytes.
pub const RawValue = struct { type: u8, bytes: []const u8 };

/// Renders template `temp` (a TEMP, header included, cut where its BinXML ends) with `values`
/// as one XML record (declaration, indented), as `apply-wevt-cache` prints it: the template
/// and the values are laid out as a one-chunk log (definition, then a record of one instance)
/// and rendered by the dump itself. Null when the template or the record does not render or
/// does not fit one chunk. The text is `gpa`'s.
pub fn renderWithValues(
    gpa: std.mem.Allocator,
    temp: []const u8,
    values: []const RawValue,
    codec: values_format.Codec,
) error{OutOfMemory}!?[]u8 {
    const chunk_size = file_header.chunk_size;
    var file: std.ArrayList(u8) = .empty;
    defer file.deinit(gpa);
    try file.appendNTimes(gpa, 0, file_header.block_size);
    var chunk: std.ArrayList(u8) = .empty;
    defer chunk.deinit(gpa);
    try chunk.appendNTimes(gpa, 0, 512);
    const def = try translate(gpa, temp, &chunk) orelse return null;
    const rec = chunk.items.len;
    const count = std.math.cast(u32, values.len) orelse return null;
    try chunk.appendSlice(gpa, "**\x00\x00" ++ "\x00" ** 4); // size, below
    try appendInt(gpa, &chunk, u64, 1);
    try chunk.appendNTimes(gpa, 0, 8); // FILETIME 1601
    try chunk.appendSlice(gpa, &.{ 0x0F, 0x01, 0x01, 0x00, 0x0C, 0x01 });
    try chunk.appendSlice(gpa, temp[24..28]);
    try appendInt(gpa, &chunk, u32, def);
    try appendInt(gpa, &chunk, u32, count);
    for (values) |v| {
        try appendInt(gpa, &chunk, u16, std.math.cast(u16, v.bytes.len) orelse return null);
        try chunk.appendSlice(gpa, &.{ v.type, 0 });
    }
    for (values) |v| try chunk.appendSlice(gpa, v.bytes);
    try chunk.append(gpa, 0x00);
    const size: u32 = @intCast(chunk.items.len + 4 - rec);
    try appendInt(gpa, &chunk, u32, size);
    if (chunk.items.len > chunk_size) return null;
    std.mem.writeInt(u32, chunk.items[rec + 4 ..][0..4], size, .little);
    const free: u32 = @intCast(chunk.items.len);
    try chunk.appendNTimes(gpa, 0, chunk_size - chunk.items.len);
    const c = chunk.items;
    c[0..8].* = chunk_mod.magic.*;
    for ([_]usize{ 8, 16, 24, 32 }) |at| std.mem.writeInt(u64, c[at..][0..8], 1, .little);
    std.mem.writeInt(u32, c[40..44], 128, .little);
    std.mem.writeInt(u32, c[44..48], @intCast(rec), .little);
    std.mem.writeInt(u32, c[48..52], free, .little);
    const f = file.items;
    f[0..8].* = file_header.magic.*;
    std.mem.writeInt(u16, f[32..34], 128, .little);
    std.mem.writeInt(u16, f[36..38], 1, .little);
    std.mem.writeInt(u16, f[38..40], 3, .little);
    std.mem.writeInt(u16, f[40..42], 4096, .little);
    std.mem.writeInt(u16, f[42..44], 1, .little);
    try file.appendSlice(gpa, c);
    return renderOne(gpa, file.items, codec);
}

fn appendInt(gpa: std.mem.Allocator, list: *std.ArrayList(u8), comptime T: type, v: T) !void {
    var b: [@sizeOf(T)]u8 = undefined;
    std.mem.writeInt(T, &b, v, .little);
    try list.appendSlice(gpa, &b);
}

/// The text of the one record of the log `bytes` (XML, no record banner, no last newline).
fn renderOne(
    gpa: std.mem.Allocator,
    bytes: []const u8,
    codec: values_format.Codec,
) error{OutOfMemory}!?[]u8 {
    var settings: options.Options = .{ .show_record_number = false, .ansi = codec };
    var log = dump.EvtxFile.open(gpa, input.Input.fromBytes(bytes), &settings) catch |e|
        switch (e) {
            error.OutOfMemory => return error.OutOfMemory,
            else => return null,
        };
    defer log.deinit(gpa);
    const Take = struct {
        gpa: std.mem.Allocator,
        text: ?[]u8 = null,

        fn consume(context: *anyopaque, result: *const dump.ChunkResult) anyerror!void {
            const t: *@This() = @ptrCast(@alignCast(context));
            for (result.entries.items) |*e| if (e.outcome == .rendered) {
                // The dump ends a record with an empty line; the reference's text has none.
                const text = result.text(e);
                const cut = if (std.mem.endsWith(u8, text, "\n")) text[0 .. text.len - 1] else text;
                if (t.text) |old| t.gpa.free(old);
                t.text = try t.gpa.dupe(u8, cut);
            };
        }
    };
    var take: Take = .{ .gpa = gpa };
    pipeline.run(gpa, &log.input, log.order, &settings, 1, .{
        .context = &take,
        .consume = Take.consume,
    }) catch |e| switch (e) {
        error.OutOfMemory => return error.OutOfMemory,
        else => {},
    };
    return take.text;
}
