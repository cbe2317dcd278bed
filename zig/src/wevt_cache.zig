//! The `.wevtcache` container (version 1), as `evtx_dump` 0.15.1 writes and reads it:
//! `WEVTCACH`, version (u32 LE) 1, entry count (u32 LE), then per entry a kind (u8; 1 is a
//! raw `WEVT_TEMPLATE` resource, the only kind) and a length (u64 LE) before its bytes.
//! `extract-wevt-templates` writes it; `--wevt-cache` and `apply-wevt-cache` read it.
//!
//! With `--wevt-cache` (the twin of `rust/evtx-core/src/wevt_cache.rs`): every blob is parsed
//! as a CRIM manifest (`parseCrim`) and its templates (TEMPs) indexed by GUID (`WevtCache`).
//! A cached TEMP is BinXML with inline names, while the engine's trees refer to chunk bytes by
//! offset; so `translate` rewrites a TEMP into a chunk-style definition appended after the
//! chunk's bytes, and `walkChunkWevt` renders the chunk again over `chunk ++ appended` with the
//! failed definition's offset redirected there (`Parser.wevt_fallback`, template.zig). Only
//! chunks whose definitions fail pay for it. Layouts, error texts and the rules of use:
//! `shared-fixtures/generator/wevt-format.md`.
const std = @import("std");
const ReaderError = @import("reader_error.zig").ReaderError;
const OsError = @import("os_error.zig").OsError;
const assert = std.debug.assert;
const Allocator = std.mem.Allocator;
const escape = @import("escape.zig");
const chunk = @import("chunk.zig");
const records = @import("records.zig");
const tokens = @import("tokens.zig");
const dump = @import("dump.zig");
const file_header = @import("file_header.zig");
const input = @import("input.zig");
const options = @import("options.zig");
const pipeline = @import("pipeline.zig");
const values_format = @import("values_format.zig");
const values_decode = @import("values_decode.zig");
const errors = @import("error.zig");
const limits = @import("limits.zig");

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

/// Why a cache could not be read, in the reference's `WevtCacheFileError` words; each fault
/// knows its file offset (`rust/evtx-core/src/wevt_cache.rs`'s `Fault`).
pub const Fault = union(enum) {
    /// A short read (`I/O error while ACTION ...: failed to fill whole buffer`) of the part
    /// that starts at `offset`.
    short_read: struct { action: []const u8, offset: u64 },
    invalid_magic,
    unsupported_version: u32,
    /// The entry at `offset` has an unknown kind.
    unknown_kind: struct { kind: u8, offset: u64 },
    /// The entry at `offset` claims more bytes than are left.
    length_too_large: struct { len: u64, offset: u64 },

    /// The line after `Error: ` (the caller adds anyhow's `Caused by:` for a short read).
    pub fn write(fault: Fault, w: *std.Io.Writer, path: []const u8) std.Io.Writer.Error!void {
        switch (fault) {
            .short_read => |s| try w.print(
                "I/O error while {s} `{s}`: failed to fill whole buffer",
                .{ s.action, path },
            ),
            .invalid_magic => try w.print("invalid `.wevtcache` magic for `{s}`", .{path}),
            .unsupported_version => |found| try w.print(
                "unsupported `.wevtcache` version {d} for `{s}` (expected {d})",
                .{ found, path, version },
            ),
            .unknown_kind => |k| try w.print(
                "unknown `.wevtcache` entry kind {d} for `{s}`",
                .{ k.kind, path },
            ),
            .length_too_large => |l| try w.print(
                "`.wevtcache` entry length {d} is larger than the rest of `{s}`",
                .{ l.len, path },
            ),
        }
    }

    /// The same words without the path (the error line names it first), for `{f}`.
    pub fn format(fault: Fault, w: *std.Io.Writer) std.Io.Writer.Error!void {
        switch (fault) {
            .short_read => |s| try w.print(
                "I/O error while {s}: failed to fill whole buffer",
                .{s.action},
            ),
            .invalid_magic => try w.writeAll("invalid `.wevtcache` magic"),
            .unsupported_version => |found| try w.print(
                "unsupported `.wevtcache` version {d} (expected {d})",
                .{ found, version },
            ),
            .unknown_kind => |k| try w.print("unknown `.wevtcache` entry kind {d}", .{k.kind}),
            .length_too_large => |l| try w.print(
                "`.wevtcache` entry length {d} is larger than the rest of the file",
                .{l.len},
            ),
        }
    }

    /// Where the fault lies: the header's magic or version, or the entry's first byte.
    pub fn offset(fault: Fault) u64 {
        return switch (fault) {
            .invalid_magic => 0,
            .unsupported_version => version_at,
            .short_read => |s| s.offset,
            .unknown_kind => |k| k.offset,
            .length_too_large => |l| l.offset,
        };
    }
};

/// Where the version lies in the header.
const version_at = 8;

/// Reads the entries of a whole cache file held in memory, in order, as the reference's
/// reader does: a fault ends the read (the blobs before it were already handed out).
pub const Reader = struct {
    bytes: []const u8,
    at: usize = header_size,
    remaining: u32,

    pub fn init(bytes: []const u8, fault: *Fault) error{Fault}!Reader {
        if (bytes.len < header_size)
            return fail(fault, .{ .short_read = .{ .action = "read header", .offset = 0 } });
        if (!std.mem.eql(u8, bytes[0..8], magic)) return fail(fault, .invalid_magic);
        const found = std.mem.readInt(u32, bytes[8..12], .little);
        if (found != version) return fail(fault, .{ .unsupported_version = found });
        return .{ .bytes = bytes, .remaining = std.mem.readInt(u32, bytes[12..16], .little) };
    }

    /// The next blob, or null after the header's count.
    pub fn next(r: *Reader, fault: *Fault) error{Fault}!?[]const u8 {
        assert(r.at <= r.bytes.len);
        if (r.remaining == 0) return null;
        const entry = r.at;
        if (r.bytes.len - entry < entry_header_size)
            return fail(fault, .{ .short_read = .{
                .action = "read entry header",
                .offset = entry,
            } });
        const kind = r.bytes[entry];
        if (kind != kind_crim)
            return fail(fault, .{ .unknown_kind = .{ .kind = kind, .offset = entry } });
        const len = std.mem.readInt(u64, r.bytes[entry + 1 ..][0..8], .little);
        if (len > r.bytes.len - entry - entry_header_size)
            return fail(fault, .{ .length_too_large = .{ .len = len, .offset = entry } });
        r.at = entry + entry_header_size;
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

// ---------------------------------------------------------------------------------------------
// CRIM manifests.

/// Size of a TEMP header; its BinXML follows.
pub const temp_header_size = 40;
const provider_descriptor_size = 20;
const item_descriptor_size = 20;

/// A manifest fault, printed in the reference's words (`format`).
pub const CrimError = union(enum) {
    signature: struct { offset: u32, expected: [4]u8, found: [4]u8 },
    truncated: struct { what: []const u8, offset: u32, need: usize, have: usize },
    offset: struct { what: []const u8, offset: u32, len: usize },
    size: struct { what: []const u8, offset: u32, size: u32 },
    count: struct { what: []const u8, offset: u32, count: u32 },
    utf16: struct { what: []const u8, offset: u32 },

    pub fn format(e: CrimError, w: *std.Io.Writer) std.Io.Writer.Error!void {
        switch (e) {
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

    /// The place in the blob the text names, where it names one: the part that is wrong or
    /// cut. An out-of-bounds offset names the value, and a name's UTF-16 its place in the
    /// TEMP, so these give null (the line then names the blob's first byte).
    pub fn place(e: CrimError) ?u32 {
        return switch (e) {
            .signature => |x| x.offset,
            .truncated => |x| x.offset,
            .size => |x| x.offset,
            .count => |x| x.offset,
            .offset, .utf16 => null,
        };
    }

    /// Rust's `{:?}` of a byte array: `[67, 82, 73, 77]`.
    fn writeBytes(w: *std.Io.Writer, bytes: []const u8) std.Io.Writer.Error!void {
        try w.writeByte('[');
        for (bytes, 0..) |b, i| {
            if (i > 0) try w.writeAll(", ");
            try w.print("{d}", .{b});
        }
        try w.writeByte(']');
    }
};

const CrimFault = error{Crim};

/// One TEMP of a manifest: where it lies in the blob, its GUID, whether the cache indexes it
/// (only the templates of each provider's last `TTBL` element are, as in the reference).
pub const TempRef = struct {
    offset: usize,
    size: usize,
    guid: [16]u8,
    /// End of its BinXML (before the template items), relative to the TEMP.
    binxml_end: usize,
    /// Its provider's index in the manifest.
    provider: usize,
    indexed: bool = false,
};

/// Parses the CRIM manifest `blob` and appends its templates to `temps` in order (providers,
/// then tables). Checks what the reference checks for the header, providers, their element
/// descriptors, `TTBL` tables and unknown elements (wevt-format.md, "Not modelled").
pub fn parseCrim(
    gpa: Allocator,
    blob: []const u8,
    temps: *std.ArrayList(TempRef),
    fault: *CrimError,
) (CrimFault || Allocator.Error)!void {
    const c: Crim = .{ .fault = fault };
    try c.expectSig(blob, 0, "CRIM", "CRIM signature");
    const size = try c.u32At(blob, 4, "CRIM.size");
    try c.require(blob, 8, 2, "CRIM.major_version");
    try c.require(blob, 10, 2, "CRIM.minor_version");
    const providers = try c.u32At(blob, 12, "CRIM.provider_count");
    if (size < 16 or size > blob.len) return c.fail(.{ .size = .{
        .what = "CRIM.size",
        .offset = 0,
        .size = size,
    } });
    const crim = blob[0..size];
    const end = @as(u64, providers) * provider_descriptor_size + 16;
    if (end > crim.len) return c.fail(.{ .truncated = .{
        .what = "CRIM provider descriptor array",
        .offset = 16,
        .need = @intCast(end - 16),
        .have = crim.len - 16,
    } });
    for (0..providers) |i| {
        const d = 16 + i * provider_descriptor_size;
        const at = try c.u32At(crim, d + 16, "CRIM.provider.offset");
        try c.provider(gpa, crim, at, i, temps);
    }
}

/// The checks of one manifest, each failing with the reference's fault.
const Crim = struct {
    fault: *CrimError,

    fn fail(c: Crim, value: CrimError) CrimFault {
        @branchHint(.cold);
        c.fault.* = value;
        return error.Crim;
    }

    fn truncated(c: Crim, buf: []const u8, off: usize, need: usize, what: []const u8) CrimFault {
        return c.fail(.{ .truncated = .{
            .what = what,
            .offset = toU32(off),
            .need = need,
            .have = buf.len -| off,
        } });
    }

    fn require(c: Crim, buf: []const u8, off: usize, need: usize, what: []const u8) CrimFault!void {
        if (off > buf.len or buf.len - off < need) return c.truncated(buf, off, need, what);
    }

    fn u32At(c: Crim, buf: []const u8, off: usize, what: []const u8) CrimFault!u32 {
        try c.require(buf, off, 4, what);
        return std.mem.readInt(u32, buf[off..][0..4], .little);
    }

    fn sigAt(c: Crim, buf: []const u8, off: usize, what: []const u8) CrimFault![4]u8 {
        try c.require(buf, off, 4, what);
        return buf[off..][0..4].*;
    }

    /// The signature at `off` (the field `what` for a cut buffer) must be `expected`: CRIM,
    /// WEVT, TTBL and TEMP alike, the offset in the error the signature's.
    fn expectSig(
        c: Crim,
        buf: []const u8,
        off: usize,
        expected: *const [4]u8,
        what: []const u8,
    ) CrimFault!void {
        const found = try c.sigAt(buf, off, what);
        if (!std.mem.eql(u8, &found, expected)) return c.fail(.{ .signature = .{
            .offset = toU32(off),
            .expected = expected.*,
            .found = found,
        } });
    }

    fn offset(c: Crim, off: u32, what: []const u8, len: usize) CrimFault!usize {
        if (off > len) return c.fail(.{ .offset = .{ .what = what, .offset = off, .len = len } });
        return off;
    }

    fn checkedEnd(c: Crim, len: usize, off: u32, size: u32, what: []const u8) CrimFault!usize {
        const start = try c.offset(off, what, len);
        if (size > len - start) return c.fail(.{ .size = .{
            .what = what,
            .offset = off,
            .size = size,
        } });
        return start + size;
    }

    fn provider(
        c: Crim,
        gpa: Allocator,
        crim: []const u8,
        at: u32,
        index: usize,
        temps: *std.ArrayList(TempRef),
    ) (CrimFault || Allocator.Error)!void {
        const o = try c.offset(at, "WEVT provider offset", crim.len);
        try c.require(crim, o, 20, "WEVT header");
        try c.expectSig(crim, o, "WEVT", "WEVT signature");
        const descriptors = try c.u32At(crim, o + 12, "WEVT.number_of_descriptors");
        const unknown2 = try c.u32At(crim, o + 16, "WEVT.number_of_unknown2");
        const desc_off = o + 20;
        try c.require(crim, desc_off, @as(usize, descriptors) * 8, "WEVT descriptor array");
        // Every element's signature is read before any element is parsed, as the reference.
        for (0..descriptors) |i| {
            const eo = try c.u32At(crim, desc_off + i * 8, "WEVT.descriptor.element_offset");
            const e = try c.offset(eo, "WEVT element offset", crim.len);
            try c.require(crim, e, 4, "WEVT element signature");
        }
        const unknown2_bytes = @as(usize, unknown2) * 4;
        const unknown2_at = desc_off + @as(usize, descriptors) * 8;
        try c.require(crim, unknown2_at, unknown2_bytes, "WEVT unknown2 array");
        var last_table: ?[2]usize = null;
        for (0..descriptors) |i| {
            const eo = std.mem.readInt(u32, crim[desc_off + i * 8 ..][0..4], .little);
            const sig_e = crim[eo..][0..4];
            if (std.mem.eql(u8, sig_e, "TTBL")) {
                const start = temps.items.len;
                try c.table(gpa, crim, eo, index, temps);
                last_table = .{ start, temps.items.len };
            } else if (!isKnownElement(sig_e)) {
                const e = try c.offset(eo, "provider element offset", crim.len);
                try c.require(crim, e, 8, "unknown element header");
                const size = try c.u32At(crim, e + 4, "provider element size");
                _ = try c.offset(eo +| size, "unknown element end", crim.len);
            }
        }
        if (last_table) |span| {
            for (temps.items[span[0]..span[1]]) |*t| t.indexed = true;
        }
    }

    fn table(
        c: Crim,
        gpa: Allocator,
        crim: []const u8,
        at: u32,
        provider_index: usize,
        temps: *std.ArrayList(TempRef),
    ) (CrimFault || Allocator.Error)!void {
        const o = try c.offset(at, "TTBL offset", crim.len);
        try c.require(crim, o, 12, "TTBL header");
        try c.expectSig(crim, o, "TTBL", "TTBL signature");
        const size = try c.u32At(crim, o + 4, "TTBL.size");
        const count = try c.u32At(crim, o + 8, "TTBL.count");
        const end = if (size == 0)
            crim.len
        else if (size < 12)
            return c.fail(.{ .size = .{ .what = "TTBL.size", .offset = at, .size = size } })
        else
            try c.checkedEnd(crim.len, at, size, "TTBL.size");
        const bytes = crim[0..end];
        var cur = o + 12;
        // Each TEMP takes at least its header inside the table: the loop is bounded by it.
        for (0..count) |_| {
            try c.require(bytes, cur, temp_header_size, "TEMP header");
            const here = toU32(cur);
            const temp_end = try c.temp(crim, end, here);
            var t = try c.tempRef(gpa, crim, crim[cur..temp_end], here);
            t.provider = provider_index;
            try temps.append(gpa, t);
            cur = temp_end;
        }
    }

    /// The TEMP `t` at `here` (its header checked): its items checked, where its BinXML
    /// ends, its GUID (provider 0: the caller's to set).
    fn tempRef(
        c: Crim,
        gpa: Allocator,
        crim: []const u8,
        t: []const u8,
        here: u32,
    ) (CrimFault || Allocator.Error)!TempRef {
        const descriptors = std.mem.readInt(u32, t[8..12], .little);
        const items_at = std.mem.readInt(u32, t[16..20], .little);
        const items_abs = if (descriptors == 0 and items_at == 0)
            here +| toU32(t.len)
        else
            items_at;
        const items_rel = if (items_abs == 0)
            toU32(t.len)
        else if (items_abs < here)
            return c.fail(.{ .offset = .{
                .what = "TEMP.template_items_offset",
                .offset = items_abs,
                .len = crim.len,
            } })
        else
            items_abs - here;
        const rel = try c.offset(items_rel, "TEMP.template_items_offset (relative)", t.len);
        try c.items(gpa, t, here, descriptors, items_at);
        return .{
            .offset = here,
            .size = t.len,
            .guid = t[24..40].*,
            .binxml_end = @max(rel, temp_header_size),
            .provider = 0,
        };
    }

    /// Checks the TEMP header at `here` (inside the table ending at `end`); returns its end.
    fn temp(c: Crim, crim: []const u8, end: usize, here: u32) CrimFault!usize {
        try c.expectSig(crim, here, "TEMP", "TEMP signature");
        const size = std.mem.readInt(u32, crim[here + 4 ..][0..4], .little);
        if (size < temp_header_size) return c.fail(.{ .size = .{
            .what = "TEMP.size",
            .offset = here,
            .size = size,
        } });
        const temp_end = try c.checkedEnd(end, here, size, "TEMP.size");
        const descriptors = std.mem.readInt(u32, crim[here + 8 ..][0..4], .little);
        const names = std.mem.readInt(u32, crim[here + 12 ..][0..4], .little);
        if (descriptors == 0 and names != 0) return c.fail(.{ .count = .{
            .what = "TEMP.item_name_count (expected 0 when item_descriptor_count == 0)",
            .offset = here +% 12,
            .count = names,
        } });
        return temp_end;
    }

    /// The item descriptors and names of a TEMP (checked, not kept: rendering needs neither).
    fn items(
        c: Crim,
        gpa: Allocator,
        t: []const u8,
        at: u32,
        count: u32,
        items_at: u32,
    ) (CrimFault || Allocator.Error)!void {
        const end_abs: usize = at +| toU32(t.len);
        if (count == 0) {
            if (items_at != 0 and items_at != end_abs) return c.fail(.{ .offset = .{
                .what = "TEMP.template_items_offset (expected 0 or end-of-template when " ++
                    "item_descriptor_count==0)",
                .offset = items_at,
                .len = end_abs,
            } });
            return;
        }
        const rel = try c.itemsStart(t, at, count, items_at);
        const descriptors_end = rel + @as(usize, count) * item_descriptor_size;
        // Bounded by the descriptors, which fit in the TEMP (`itemsStart`).
        var names: std.ArrayList(usize) = try .initCapacity(gpa, count);
        defer names.deinit(gpa);
        try c.itemNames(t, at, count, rel, descriptors_end, &names);
        for (names.items) |r| try c.itemName(t, r);
    }

    /// Where the `count` item descriptors start in the TEMP (`items_at`, absolute), checked
    /// to lie after the header and to hold them all.
    fn itemsStart(c: Crim, t: []const u8, at: u32, count: u32, items_at: u32) CrimFault!usize {
        const end_abs: usize = at +| toU32(t.len);
        const what_rel = "TEMP.template_items_offset (relative)";
        if (items_at < at) return c.fail(.{ .offset = .{
            .what = "TEMP.template_items_offset",
            .offset = items_at,
            .len = end_abs,
        } });
        const rel = try c.offset(items_at - at, what_rel, t.len);
        if (rel < temp_header_size or rel >= t.len) return c.fail(.{ .offset = .{
            .what = what_rel,
            .offset = items_at,
            .len = end_abs,
        } });
        const needed = @as(usize, count) * item_descriptor_size;
        if (needed > t.len - rel) return c.fail(.{ .truncated = .{
            .what = "template item descriptors",
            .offset = items_at,
            .need = needed,
            .have = t.len - rel,
        } });
        return rel;
    }

    /// The items' name offsets (relative to the TEMP) into `names`, each inside it and none
    /// inside the descriptor table (which ends at `descriptors_end`).
    fn itemNames(
        c: Crim,
        t: []const u8,
        at: u32,
        count: u32,
        rel: usize,
        descriptors_end: usize,
        names: *std.ArrayList(usize),
    ) CrimFault!void {
        assert(names.capacity >= count);
        const end_abs: usize = at +| toU32(t.len);
        var min_name: ?usize = null;
        for (0..count) |i| {
            const at_name = rel + i * item_descriptor_size + 16;
            const name_at = try c.u32At(t, at_name, "TEMP.item.name_offset");
            if (name_at == 0) continue;
            if (name_at < at) return c.fail(.{ .offset = .{
                .what = "template item name_offset",
                .offset = name_at,
                .len = end_abs,
            } });
            const r = try c.offset(name_at - at, "template item name_offset (relative)", t.len);
            min_name = @min(min_name orelse r, r);
            names.appendAssumeCapacity(r);
        }
        if (min_name) |m| if (m < descriptors_end) return c.fail(.{ .offset = .{
            .what = "template item name_offset overlaps descriptor table",
            .offset = at +| toU32(m),
            .len = end_abs,
        } });
    }

    /// One item name at `r` in the TEMP: u32 size (4 and up, inside the TEMP), UTF-16 up to
    /// a NUL.
    fn itemName(c: Crim, t: []const u8, r: usize) CrimFault!void {
        const what = "template item name";
        try c.require(t, r, 4, what);
        const size = try c.u32At(t, r, what);
        if (size < 4)
            return c.fail(.{ .size = .{ .what = what, .offset = toU32(r), .size = size } });
        try c.require(t, r, size, what);
        const bytes = t[r + 4 .. r + size];
        const units = bytes[0 .. 2 * escape.unitsBeforeNul(bytes)];
        if (!escape.isValidUtf16(units))
            return c.fail(.{ .utf16 = .{ .what = what, .offset = toU32(r) } });
    }
};

/// The provider elements the reference parses and checks; located only here (wevt-format.md).
fn isKnownElement(sig: *const [4]u8) bool {
    const known = [_]*const [4]u8{ "CHAN", "EVNT", "KEYW", "LEVL", "MAPS", "OPCO", "TASK" };
    for (known) |k| if (std.mem.eql(u8, sig, k)) return true;
    return false;
}

fn toU32(v: usize) u32 {
    return std.math.cast(u32, v) orelse std.math.maxInt(u32);
}

// ---------------------------------------------------------------------------------------------
// `--wevt-cache`: the templates of a cache file, by GUID.

/// Why `WevtCache.load` failed; `write` prints the reference's text (after `Error: `).
pub const Diagnostic = union(enum) {
    /// The OS refused the file (`open`) or its bytes (`read header`).
    io: struct { action: []const u8, err: anyerror },
    file: Fault,
    /// A manifest's fault; `blob` is the file offset of the manifest's first byte.
    crim: struct { err: CrimError, blob: u64 },

    /// The damage as the CLIs print it (null for an I/O failure, printed as the reference
    /// does). A manifest's fault lies at the blob's offset plus the place its text names.
    pub fn readerError(d: Diagnostic) ?ReaderError {
        return switch (d) {
            .io => null,
            .file => |fault| .init(.cache, fault.offset(), fault),
            .crim => |c| .init(
                .crim,
                c.blob +| (c.err.place() orelse 0),
                CrimText{ .err = c.err },
            ),
        };
    }

    /// A manifest's fault in the reference's words, for `{f}`.
    const CrimText = struct {
        err: CrimError,

        pub fn format(t: CrimText, w: *std.Io.Writer) std.Io.Writer.Error!void {
            try w.print("failed to parse CRIM/WEVT blob: {f}", .{t.err});
        }
    };

    pub fn write(d: Diagnostic, w: *std.Io.Writer, path: []const u8) std.Io.Writer.Error!void {
        switch (d) {
            .io => |io| {
                const os = OsError.orIo(io.err);
                try w.print("I/O error while {s} `{s}`: {f}", .{ io.action, path, os });
                try w.print("\n\nCaused by:\n    {f}", .{os});
            },
            .file => |fault| {
                try fault.write(w, path);
                // anyhow's chain: the `io::Error` below the reference's message.
                if (fault == .short_read)
                    try w.writeAll("\n\nCaused by:\n    failed to fill whole buffer");
            },
            .crim => |c| try (CrimText{ .err = c.err }).format(w),
        }
    }

    /// The diagnostic of `path`, for `{f}`.
    pub fn text(d: Diagnostic, path: []const u8) Text {
        return .{ .diagnostic = d, .path = path };
    }

    pub const Text = struct {
        diagnostic: Diagnostic,
        path: []const u8,

        pub fn format(t: Text, w: *std.Io.Writer) std.Io.Writer.Error!void {
            return t.diagnostic.write(w, t.path);
        }
    };
};

/// The templates of a `.wevtcache`, by GUID: the first TEMP with a GUID wins (blob order,
/// provider order, table order). Read-only once loaded, so threads share one.
pub const WevtCache = struct {
    /// The file's bytes; every template is a slice of them.
    bytes: []const u8,
    by_guid: std.AutoHashMapUnmanaged([16]u8, Span),

    const Span = struct { start: usize, end: usize };

    pub const Error = error{Invalid} || Allocator.Error;

    /// Reads and indexes the cache file at `path` (the `--wevt-cache` file); on
    /// `error.Invalid`, `diag` says why in the reference's words.
    pub fn load(
        gpa: Allocator,
        dir: std.fs.Dir,
        path: []const u8,
        diag: *Diagnostic,
    ) Error!WevtCache {
        const file = dir.openFile(path, .{}) catch |e| {
            if (e == error.OutOfMemory) return error.OutOfMemory;
            diag.* = .{ .io = .{ .action = "open", .err = e } };
            return error.Invalid;
        };
        defer file.close();
        // The whole file: blobs are bounded by it (the reader checks every length first).
        const bytes = file.readToEndAlloc(gpa, std.math.maxInt(usize)) catch |e| {
            if (e == error.OutOfMemory) return error.OutOfMemory;
            diag.* = .{ .io = .{ .action = "read header", .err = e } };
            return error.Invalid;
        };
        errdefer gpa.free(bytes);
        return parse(gpa, bytes, diag);
    }

    /// Indexes the cache file's `bytes` (owned from here on, freed by `deinit`); the reader's
    /// and the manifests' faults in file order, as the reference meets them.
    pub fn parse(gpa: Allocator, bytes: []const u8, diag: *Diagnostic) Error!WevtCache {
        var cache: WevtCache = .{ .bytes = bytes, .by_guid = .empty };
        errdefer cache.by_guid.deinit(gpa);
        var temps: std.ArrayList(TempRef) = .empty;
        defer temps.deinit(gpa);
        var fault: Fault = undefined;
        var reader = Reader.init(bytes, &fault) catch return failFile(diag, fault);
        while (reader.next(&fault) catch return failFile(diag, fault)) |blob| {
            temps.clearRetainingCapacity();
            var crim: CrimError = undefined;
            const base = @intFromPtr(blob.ptr) - @intFromPtr(bytes.ptr);
            parseCrim(gpa, blob, &temps, &crim) catch |e| switch (e) {
                error.OutOfMemory => return error.OutOfMemory,
                error.Crim => {
                    diag.* = .{ .crim = .{ .err = crim, .blob = base } };
                    return error.Invalid;
                },
            };
            for (temps.items) |t| {
                if (!t.indexed) continue;
                const gop = try cache.by_guid.getOrPut(gpa, t.guid);
                if (gop.found_existing) continue;
                gop.value_ptr.* = .{ .start = base + t.offset, .end = base + t.offset + t.size };
            }
        }
        return cache;
    }

    pub fn deinit(c: *WevtCache, gpa: Allocator) void {
        c.by_guid.deinit(gpa);
        gpa.free(c.bytes);
        c.* = undefined;
    }

    /// The whole TEMP (header included) of template `guid`.
    pub fn temp(c: *const WevtCache, guid: [16]u8) ?[]const u8 {
        const span = c.by_guid.get(guid) orelse return null;
        assert(span.start + temp_header_size <= span.end and span.end <= c.bytes.len);
        return c.bytes[span.start..span.end];
    }

    /// Number of templates indexed.
    pub fn count(c: *const WevtCache) usize {
        return c.by_guid.count();
    }
};

fn failFile(diag: *Diagnostic, fault: Fault) error{Invalid} {
    diag.* = .{ .file = fault };
    return error.Invalid;
}

// ---------------------------------------------------------------------------------------------
// TEMP BinXML → chunk-style definition.

/// Appends to `ext` a chunk-style template definition equivalent to the TEMP `temp` (header
/// included): first string-table-shaped name entries, then the 24-byte definition header (GUID
/// of the TEMP) and the body, whose names are offsets into `ext`. Returns the definition's
/// offset in `ext`, or null (nothing appended) when the TEMP's BinXML is one the reference
/// fails on (bad inline name, unknown token, tokens its tree builder refuses, template
/// instance) or that this reader does not model (a value token other than String text); the
/// embedded definition's error then stands.
pub fn translate(gpa: Allocator, temp: []const u8, ext: *std.ArrayList(u8)) Allocator.Error!?u32 {
    return switch (try translateOrCause(gpa, temp, ext)) {
        .def => |def| def,
        .failed => null,
    };
}

/// `translate`'s result with why not: the reference's error for the TEMP's BinXML where this
/// reader tells it (a `Cause` at an offset from the BinXML's start), null where it does not.
pub const Translated = union(enum) { def: u32, failed: ?errors.Cause };

/// `translate`, or why not (the Rust engine's `translate_or_cause`).
pub fn translateOrCause(
    gpa: Allocator,
    temp: []const u8,
    ext: *std.ArrayList(u8),
) Allocator.Error!Translated {
    if (temp.len < temp_header_size) return .{ .failed = null };
    var t: Translation = .{ .binxml = temp[temp_header_size..] };
    defer t.deinit(gpa);
    if (!try t.body(gpa)) return .{ .failed = t.fault };
    const total = ext.items.len + t.names_bytes + 4 * t.refs.items.len + 24 + t.out.items.len;
    if (total > std.math.maxInt(u32)) return .{ .failed = null };
    try ext.ensureUnusedCapacity(gpa, total - ext.items.len);
    // Entry: next (0), then the inline name as it is (hash, count, units, NUL): the layout of
    // a string table entry (6.3) after its link.
    var name_at: std.ArrayList(u32) = try .initCapacity(gpa, t.names.items.len);
    defer name_at.deinit(gpa);
    for (t.names.items) |name| {
        name_at.appendAssumeCapacity(@intCast(ext.items.len));
        ext.appendSliceAssumeCapacity(&.{ 0, 0, 0, 0 });
        ext.appendSliceAssumeCapacity(t.binxml[name.start..name.end]);
    }
    const def: u32 = @intCast(ext.items.len);
    for (t.refs.items) |ref| {
        std.mem.writeInt(u32, t.out.items[ref.at..][0..4], name_at.items[ref.name], .little);
    }
    ext.appendSliceAssumeCapacity(&.{ 0, 0, 0, 0 });
    ext.appendSliceAssumeCapacity(temp[24..40]);
    var size: [4]u8 = undefined;
    std.mem.writeInt(u32, &size, @intCast(t.out.items.len), .little);
    ext.appendSliceAssumeCapacity(&size);
    ext.appendSliceAssumeCapacity(t.out.items);
    assert(ext.items.len == def + 24 + t.out.items.len);
    return .{ .def = def };
}

/// The walk of one TEMP's BinXML: tokens copied to `out`, inline names cut out (`names`) and
/// their places in `out` remembered (`refs`). The element state is the reference's tree
/// builder's (an open start tag, the open elements, the roots), so the walk refuses what it
/// refuses, and `fault` says why where the reference's words are known.
const Translation = struct {
    binxml: []const u8,
    pos: usize = 0,
    out: std.ArrayList(u8) = .empty,
    names: std.ArrayList(struct { start: usize, end: usize }) = .empty,
    /// Bytes of every inline name (the entries `translate` writes, less their links).
    names_bytes: usize = 0,
    refs: std.ArrayList(struct { at: usize, name: usize }) = .empty,
    fault: ?errors.Cause = null,
    /// A token the translation does not model was met (a Null value text).
    unmodelled: bool = false,
    in_start: bool = false,
    depth: u32 = 0,
    roots: u32 = 0,

    fn deinit(t: *Translation, gpa: Allocator) void {
        t.out.deinit(gpa);
        t.names.deinit(gpa);
        t.refs.deinit(gpa);
    }

    /// Records the reference's error `kind` at `offset` and fails the walk.
    fn fail(t: *Translation, kind: errors.CauseKind, offset: usize) bool {
        @branchHint(.cold);
        const at = std.math.cast(u32, offset) orelse std.math.maxInt(u32);
        t.fault = .{ .kind = kind, .offset = at };
        return false;
    }

    /// `n` bytes of the field `what` (the reference's name for it, in its error).
    fn take(t: *Translation, n: usize, what: []const u8) ?[]const u8 {
        assert(t.pos <= t.binxml.len);
        if (n > t.binxml.len - t.pos) {
            const need = std.math.cast(u32, n) orelse std.math.maxInt(u32);
            _ = t.fail(.{ .truncated = .{ .what = what, .need = need } }, t.pos);
            return null;
        }
        defer t.pos += n;
        return t.binxml[t.pos..][0..n];
    }

    fn readU16(t: *Translation, what: []const u8) ?u16 {
        return std.mem.readInt(u16, (t.take(2, what) orelse return null)[0..2], .little);
    }

    fn copy(t: *Translation, gpa: Allocator, n: usize, what: []const u8) Allocator.Error!bool {
        try t.out.appendSlice(gpa, t.take(n, what) orelse return false);
        return true;
    }

    /// A u16 count then that many UTF-16 units, copied.
    fn copyCounted(t: *Translation, gpa: Allocator, what: []const u8) Allocator.Error!bool {
        const count = t.take(2, what) orelse return false;
        try t.out.appendSlice(gpa, count);
        const units = 2 * @as(usize, std.mem.readInt(u16, count[0..2], .little));
        return t.copy(gpa, units, what);
    }

    /// An inline name (hash, count, units, NUL): checked as the reference does (the string
    /// table's hash, a NUL), replaced in `out` by a 4-byte offset patched later.
    fn name(t: *Translation, gpa: Allocator) Allocator.Error!bool {
        const at = t.pos;
        const stored = t.readU16("wevt_inline_name_hash") orelse return false;
        const count = t.readU16("wevt_inline_name_character_count") orelse return false;
        var h: u32 = 0;
        for (0..count) |_| {
            const unit = t.readU16("wevt_inline_name_code_unit") orelse return false;
            h = h *% 65599 +% unit;
        }
        const nul = t.readU16("wevt_inline_name_nul") orelse return false;
        if (nul != 0) return t.fail(.name_without_nul, at);
        if (stored != @as(u16, @truncate(h))) return t.fail(.name_hash_mismatch, at);
        try t.refs.append(gpa, .{ .at = t.out.items.len, .name = t.names.items.len });
        try t.names.append(gpa, .{ .start = at, .end = t.pos });
        t.names_bytes += 4 + t.pos - at;
        try t.out.appendSlice(gpa, &.{ 0, 0, 0, 0 });
        return true;
    }

    /// The reference's tree builder refuses the token read at `at`.
    fn refuse(t: *Translation, reason: []const u8, at: usize) bool {
        return t.fail(.{ .model = reason }, at);
    }

    /// A node (text, value, reference): in the open start tag, an attribute's; else the open
    /// element's child, and there must be one.
    fn node(t: *Translation, at: usize) bool {
        if (!t.in_start and t.depth == 0) return t.refuse("value outside of element", at);
        return true;
    }

    /// A closed element: a child of the open one, else a root.
    fn attach(t: *Translation) void {
        if (t.depth == 0) t.roots += 1;
    }

    /// A value type byte, copied: known to the reference, else its error.
    fn valueType(t: *Translation, gpa: Allocator) Allocator.Error!?u8 {
        const ty = (t.take(1, "u8") orelse return null)[0];
        try t.out.append(gpa, ty);
        if (!values_decode.isKnownType(ty)) {
            _ = t.fail(.invalid_value_type, t.pos);
            return null;
        }
        return ty;
    }

    /// The tokens up to the first EOF (or the end), then the tree's shape; false when the
    /// reference would refuse them or they are not modelled.
    fn body(t: *Translation, gpa: Allocator) Allocator.Error!bool {
        while (t.pos < t.binxml.len) {
            const at = t.pos;
            const token = t.binxml[t.pos];
            t.pos += 1;
            try t.out.append(gpa, token);
            const ok = switch (token) {
                0x00 => break,
                0x01, 0x41 => try t.openStart(gpa, token, at),
                0x02 => t.closeStart(at),
                0x03 => t.closeEmpty(at),
                0x04 => t.closeElement(at),
                // Value text: String only.
                0x05, 0x45 => if (try t.valueType(gpa)) |ty| switch (ty) {
                    0x01 => try t.copyCounted(gpa, "<string_value>") and t.node(at),
                    // Not modelled, but of no bytes: the walk goes on to the reference's fault
                    // after it, if any.
                    0x00 => unmodelled: {
                        t.unmodelled = true;
                        break :unmodelled t.node(at);
                    },
                    else => false,
                } else false,
                0x06, 0x46 => try t.name(gpa) and
                    (t.in_start or t.refuse("attribute - Bad parser state", at)),
                0x09, 0x49, 0x0A => try t.name(gpa) and t.node(at),
                0x07, 0x47 => try t.copyCounted(gpa, "cdata") and t.node(at),
                0x0B => try t.copyCounted(gpa, "pi_data") and t.node(at),
                0x08, 0x48 => try t.copy(gpa, 2, "char_ref") and t.node(at),
                0x0D, 0x0E => try t.copy(gpa, 2, "u16") and
                    try t.valueType(gpa) != null and t.node(at),
                0x0F => try t.copy(gpa, 1, "fragment_header_major_version") and
                    try t.copy(gpa, 1, "fragment_header_minor_version") and
                    try t.copy(gpa, 1, "fragment_header_flags"),
                0x0C => false,
                else => t.fail(.invalid_token, t.pos),
            };
            if (!ok) return false;
        }
        return t.finish();
    }

    fn openStart(t: *Translation, gpa: Allocator, token: u8, at: usize) Allocator.Error!bool {
        if (!try t.copy(gpa, 2, "open_start_element_dependency_identifier")) return false;
        if (!try t.copy(gpa, 4, "open_start_element_data_size")) return false;
        if (!try t.name(gpa)) return false;
        if (token == 0x41 and
            !try t.copy(gpa, 4, "open_start_element_attribute_list_data_size")) return false;
        if (t.in_start) return t.refuse("open start - Bad parser state", at);
        t.in_start = true;
        return true;
    }

    fn closeStart(t: *Translation, at: usize) bool {
        if (t.depth >= limits.element_depth_max)
            return t.refuse("BinXML elements nested too deeply", at);
        if (!t.in_start) return t.refuse("close start - Bad parser state", at);
        t.in_start = false;
        t.depth += 1;
        return true;
    }

    fn closeEmpty(t: *Translation, at: usize) bool {
        if (!t.in_start) return t.refuse("close empty - Bad parser state", at);
        t.in_start = false;
        t.attach();
        return true;
    }

    fn closeElement(t: *Translation, at: usize) bool {
        if (t.depth == 0) return t.refuse("close element - Bad parser state", at);
        t.depth -= 1;
        t.attach();
        return true;
    }

    /// The tree's shape at the stream's end, as the reference's builder checks it.
    fn finish(t: *Translation) bool {
        if (t.in_start) return t.refuse("unfinished element start", t.pos);
        if (t.depth != 0) return t.refuse("unbalanced element stack", t.pos);
        return switch (t.roots) {
            0 => t.refuse("missing root element", t.pos),
            1 => !t.unmodelled,
            else => t.refuse("multiple root elements", t.pos),
        };
    }
};

// ---------------------------------------------------------------------------------------------
// The dump's fallback.

/// Renders the whole chunk `bytes` (slot `slot`) into `res` with `cache` standing in for the
/// definitions that fail (dump.zig's hook, the Rust engine's `Renderer::walk_chunk_wevt`):
/// walks the chunk; when definitions failed whose GUIDs the cache holds, appends their
/// translations after the chunk's bytes and walks it again over `chunk ++ appended`, those
/// offsets redirected. Each round adds at least one template, so it ends.
pub fn walkChunkWevt(
    r: *dump.Renderer,
    cache: *const WevtCache,
    bytes: *const [chunk.size]u8,
    slot: u32,
    res: *dump.ChunkResult,
) Allocator.Error!void {
    @branchHint(.cold);
    const gpa = r.gpa;
    var ext: std.ArrayList(u8) = .empty;
    defer ext.deinit(gpa);
    var fallback: std.AutoHashMapUnmanaged(u32, u32) = .empty;
    defer fallback.deinit(gpa);
    var tried: std.AutoHashMapUnmanaged(u32, void) = .empty;
    defer tried.deinit(gpa);
    var failed: std.ArrayList(u32) = .empty;
    defer failed.deinit(gpa);
    const p = &r.parser;
    p.wevt_fallback = &fallback;
    defer p.wevt_fallback = null;
    while (true) {
        const data: []const u8 = if (ext.items.len == 0) bytes else ext.items;
        res.out.truncate(0);
        res.entries.clearRetainingCapacity();
        res.details.clear();
        try p.resetChunk(data);
        var walker = records.RecordWalker.init(bytes, r.settings.recover_records);
        try r.walkChunk(res, slot, &walker);
        try failedOffsets(gpa, p, &failed);
        const before = fallback.count();
        for (failed.items) |off| {
            if ((try tried.getOrPut(gpa, off)).found_existing) continue;
            // The GUID of the definition header, which must lie inside the chunk.
            if (off > chunk.size - 24) continue;
            const t = cache.temp(bytes[off + 4 ..][0..16].*) orelse continue;
            if (ext.items.len == 0) try ext.appendSlice(gpa, bytes);
            if (ext.items.len + 2 * t.len > limits.chunk_extension_bytes_max) continue;
            if (try translate(gpa, t, &ext)) |def| try fallback.put(gpa, off, def);
        }
        if (fallback.count() == before) break;
    }
    // The parser must not keep `ext`'s bytes past this chunk.
    try p.resetChunk(bytes);
}

/// The offsets of the definitions that failed in the chunk, ascending (the parser's cache).
fn failedOffsets(
    gpa: Allocator,
    p: *const tokens.Parser,
    out: *std.ArrayList(u32),
) Allocator.Error!void {
    out.clearRetainingCapacity();
    var it = p.templates.iterator();
    while (it.next()) |entry| switch (entry.value_ptr.*) {
        .failed => try out.append(gpa, entry.key_ptr.*),
        .root, .known => {},
    };
    std.mem.sort(u32, out.items, {}, std.sort.asc(u32));
}

// ---------------------------------------------------------------------------------------------
// `apply-wevt-cache`: a TEMP rendered with given values.

/// A substitution value for `renderWithValues`: its type byte and its bytes.
pub const RawValue = struct { type: u8, bytes: []const u8 };

/// `renderWithValues`'s result: the XML, or an error when the template or the record does not
/// render or does not fit one chunk: the reference's error for the TEMP's BinXML where it is
/// known (`translateOrCause`, offsets from the BinXML's start; the caller words it), else null.
pub const Rendered = union(enum) { xml: []u8, failed: ?errors.Cause };

/// Renders template `temp` (a TEMP, header included, cut where its BinXML ends) with `values`
/// as one XML record (declaration, indented), as `apply-wevt-cache` prints it: the template
/// and the values are laid out as a one-chunk log (definition, then a record of one instance)
/// and rendered by the dump itself. The text is `gpa`'s.
pub fn renderWithValues(
    gpa: std.mem.Allocator,
    temp: []const u8,
    values: []const RawValue,
    codec: values_format.Codec,
) error{OutOfMemory}!Rendered {
    const chunk_size = file_header.chunk_size;
    var file: std.ArrayList(u8) = .empty;
    defer file.deinit(gpa);
    try file.appendNTimes(gpa, 0, file_header.block_size);
    var page: std.ArrayList(u8) = .empty;
    defer page.deinit(gpa);
    try page.appendNTimes(gpa, 0, 512);
    const def = switch (try translateOrCause(gpa, temp, &page)) {
        .def => |def| def,
        .failed => |cause| return .{ .failed = cause },
    };
    const rec = page.items.len;
    const count = std.math.cast(u32, values.len) orelse return .{ .failed = null };
    try page.appendSlice(gpa, "**\x00\x00" ++ "\x00" ** 4); // size, below
    try appendInt(gpa, &page, u64, 1);
    try page.appendNTimes(gpa, 0, 8); // FILETIME 1601
    try page.appendSlice(gpa, &.{ 0x0F, 0x01, 0x01, 0x00, 0x0C, 0x01 });
    try page.appendSlice(gpa, temp[24..28]);
    try appendInt(gpa, &page, u32, def);
    try appendInt(gpa, &page, u32, count);
    for (values) |v| {
        const len = std.math.cast(u16, v.bytes.len) orelse return .{ .failed = null };
        try appendInt(gpa, &page, u16, len);
        try page.appendSlice(gpa, &.{ v.type, 0 });
    }
    for (values) |v| try page.appendSlice(gpa, v.bytes);
    try page.append(gpa, 0x00);
    const size: u32 = @intCast(page.items.len + 4 - rec);
    try appendInt(gpa, &page, u32, size);
    if (page.items.len > chunk_size) return .{ .failed = null };
    std.mem.writeInt(u32, page.items[rec + 4 ..][0..4], size, .little);
    const free: u32 = @intCast(page.items.len);
    try page.appendNTimes(gpa, 0, chunk_size - page.items.len);
    const c = page.items;
    c[0..8].* = chunk.magic.*;
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
    const xml = try renderOne(gpa, file.items, codec) orelse return .{ .failed = null };
    return .{ .xml = xml };
}

/// The reference's error for the TEMP BinXML `binxml` that does not build, `cause` at an
/// offset from its start (`renderWithValues`' failure, `apply-wevt-cache`'s text): the tree
/// builder's refusal, or the reader's error below the deserializer's line. False (nothing
/// written) for a cause whose words are not known. The Rust engine's `temp_error`.
pub fn writeTempError(
    w: *std.Io.Writer,
    cause: errors.Cause,
    binxml: []const u8,
) std.Io.Writer.Error!bool {
    @branchHint(.cold);
    const at: usize = cause.offset;
    const deserialize = "An error occurred while trying to deserialize evtx stream." ++
        errors.caused_by;
    switch (cause.kind) {
        .model => |reason| {
            try w.print("Failed to create record model, reason: {s}", .{reason});
            return true;
        },
        .invalid_token => {
            if (at < 1 or at > binxml.len) return false;
            try w.print(deserialize ++ "Offset 0x{x:0>8}: Tried to read an invalid byte " ++
                "`0x{x:0>2}` as binxml token", .{ at, binxml[at - 1] });
            return true;
        },
        .invalid_value_type => {
            if (at < 1 or at > binxml.len) return false;
            try w.print(deserialize ++ "Offset 0x{x:0>8}: Tried to read an invalid byte " ++
                "`0x{x:>2}` as binxml value variant", .{ at, binxml[at - 1] });
            return true;
        },
        .name_hash_mismatch => {
            const name = inlineName(binxml, at) orelse return false;
            try w.print(deserialize ++ "Offset 0x{x:0>8}: WEVT inline name hash mismatch " ++
                "(expected 0x{x:0>4}, found 0x{x:0>4})", .{ at, name.hash, name.stored });
            return true;
        },
        .name_without_nul => {
            const name = inlineName(binxml, at) orelse return false;
            try w.print(deserialize ++ "Offset 0x{x:0>8}: WEVT inline name missing NUL " ++
                "terminator (found 0x{x:0>4})", .{ at, name.nul });
            return true;
        },
        .truncated => |field| {
            try w.print(deserialize ++ "buffer too small for {s} at offset {d} (need {d} " ++
                "bytes, have {d})", .{ field.what, at, field.need, binxml.len -| at });
            return true;
        },
        else => return false,
    }
}

/// The inline name at `at` of a TEMP's BinXML (6.3, without its link): its stored hash, its
/// units' hash, its NUL unit.
fn inlineName(binxml: []const u8, at: usize) ?struct { stored: u16, hash: u16, nul: u16 } {
    if (at > binxml.len or binxml.len - at < 4) return null;
    const count: usize = std.mem.readInt(u16, binxml[at + 2 ..][0..2], .little);
    if (binxml.len - at - 4 < 2 * count + 2) return null;
    var h: u32 = 0;
    for (0..count) |i| {
        h = h *% 65599 +% std.mem.readInt(u16, binxml[at + 4 + 2 * i ..][0..2], .little);
    }
    return .{
        .stored = std.mem.readInt(u16, binxml[at..][0..2], .little),
        .hash = @truncate(h),
        .nul = std.mem.readInt(u16, binxml[at + 4 + 2 * count ..][0..2], .little),
    };
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
    var settings: options.Options = .{ .show_record_number = false, .ansi_codec = codec };
    const log = dump.EvtxFile.open(gpa, input.Input.fromBytes(bytes), &settings) catch |e|
        switch (e) {
            error.OutOfMemory => return error.OutOfMemory,
            else => return null,
        };
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
    try std.testing.expectEqual(@as(u64, 0xffff_fff0), fault.length_too_large.len);
    // The third entry's first byte: header 16, then 9 + 3 and 9 + 0.
    try std.testing.expectEqual(@as(u64, 16 + 12 + 9), fault.offset());
    // The reference's 16 bytes for an empty cache (`extract-wevt-templates` on no blob).
    try std.testing.expectEqualSlices(u8, "WEVTCACH\x01\x00\x00\x00\x00\x00\x00\x00", &header(0));
}

// Tests. Expected texts are the reference's (`evtx_dump --wevt-cache` on the generator's
// fixtures, `shared-fixtures/wevt`); expected outcomes and bytes are the generator's design
// (`shared-fixtures/generator/src/wevt.rs`) and the layouts of wevt-format.md.

const testing = @import("testing.zig");

/// The generator's `guid_of`: the fixtures' template GUIDs (FNV-1a, two rounds).
fn guidOf(key: []const u8) [16]u8 {
    var h: u64 = 0xcbf29ce484222325;
    var out: [16]u8 = undefined;
    for (0..2) |round| {
        for (key) |b| h = (h ^ b) *% 0x100000001b3;
        h = (h ^ @as(u8, @intCast(round))) *% 0x100000001b3;
        std.mem.writeInt(u64, out[round * 8 ..][0..8], h, .little);
    }
    return out;
}

fn loadFixture(path: []const u8, diag: *Diagnostic) WevtCache.Error!WevtCache {
    var dir = std.fs.cwd().openDir(@import("unit_test_options").fixtures, .{}) catch
        return error.Invalid;
    defer dir.close();
    return WevtCache.load(std.testing.allocator, dir, path, diag);
}

fn utf16(comptime s: []const u8) [2 * s.len]u8 {
    var out: [2 * s.len]u8 = undefined;
    for (s, 0..) |c, i| out[2 * i ..][0..2].* = .{ c, 0 };
    return out;
}

test "the cache indexes every GUID once, the first blob's TEMP wins" {
    const gpa = std.testing.allocator;
    var diag: Diagnostic = undefined;
    var cache = try loadFixture("wevt/templates.wevtcache", &diag);
    defer cache.deinit(gpa);
    // Manifest A: logon, nested-data, bad-hash; B: service, the zero GUID (B's logon is a
    // second copy).
    try std.testing.expectEqual(@as(usize, 5), cache.count());
    const logon = cache.temp(guidOf("wevt-logon")).?;
    try std.testing.expectEqualStrings("TEMP", logon[0..4]);
    try std.testing.expectEqualSlices(u8, &guidOf("wevt-logon"), logon[24..40]);
    try std.testing.expect(std.mem.indexOf(u8, logon, &utf16("TargetUserSid")) != null);
    try std.testing.expect(cache.temp(@splat(0)) != null);
    try std.testing.expect(cache.temp(guidOf("wevt-unknown")) == null);
    var b_first = try loadFixture("wevt/templates-b-first.wevtcache", &diag);
    defer b_first.deinit(gpa);
    const shadowed = b_first.temp(guidOf("wevt-logon")).?;
    try std.testing.expect(std.mem.indexOf(u8, shadowed, &utf16("Shadowed")) != null);
    var empty = try loadFixture("wevt/empty.wevtcache", &diag);
    defer empty.deinit(gpa);
    try std.testing.expectEqual(@as(usize, 0), empty.count());
}

test "damaged caches fail in the reference's words" {
    const cases = [_][2][]const u8{
        .{ "damaged-magic", "invalid `.wevtcache` magic for `{s}`" },
        .{ "damaged-version", "unsupported `.wevtcache` version 2 for `{s}` (expected 1)" },
        .{ "damaged-kind", "unknown `.wevtcache` entry kind 7 for `{s}`" },
        .{ "damaged-length", "`.wevtcache` entry length 4294967280 is larger than the rest " ++
            "of `{s}`" },
        .{ "damaged-truncated", "`.wevtcache` entry length 1232 is larger than the rest of `{s}`" },
        .{ "damaged-short", "I/O error while read header `{s}`: failed to fill whole buffer" ++
            "\n\nCaused by:\n    failed to fill whole buffer" },
        .{ "damaged-crim-magic", "failed to parse CRIM/WEVT blob: invalid signature at " ++
            "offset 0: expected [67, 82, 73, 77], got [67, 82, 73, 88]" },
        .{ "damaged-temp-size", "failed to parse CRIM/WEVT blob: size 65535 out of bounds for " ++
            "TEMP.size at offset 104" },
        .{ "damaged-ttbl-count", "failed to parse CRIM/WEVT blob: buffer too small for TEMP " ++
            "header at offset 1304 (need 40 bytes, have 0)" },
        .{ "missing", "I/O error while open `{s}`: No such file or directory (os error 2)" ++
            "\n\nCaused by:\n    No such file or directory (os error 2)" },
    };
    inline for (cases) |case| {
        const path = "wevt/" ++ case[0] ++ ".wevtcache";
        var diag: Diagnostic = undefined;
        try std.testing.expectError(error.Invalid, loadFixture(path, &diag));
        const want = try std.mem.replaceOwned(u8, std.testing.allocator, case[1], "{s}", path);
        defer std.testing.allocator.free(want);
        var got: [512]u8 = undefined;
        const text = try std.fmt.bufPrint(&got, "{f}", .{diag.text(path)});
        try std.testing.expectEqualStrings(want, text);
    }
}

test "a cache that cannot be opened: the OS error's own words, as the reference's" {
    // Before the one errno table this was `Input/output error (os error 5)`.
    var tmp = std.testing.tmpDir(.{});
    defer tmp.cleanup();
    try tmp.dir.symLink("loop-b", "loop-a", .{});
    try tmp.dir.symLink("loop-a", "loop-b", .{});
    var diag: Diagnostic = undefined;
    const gpa = std.testing.allocator;
    try std.testing.expectError(error.Invalid, WevtCache.load(gpa, tmp.dir, "loop-a", &diag));
    var got: [256]u8 = undefined;
    const text = try std.fmt.bufPrint(&got, "{f}", .{diag.text("loop-a")});
    const loop = "Too many levels of symbolic links (os error 40)";
    try std.testing.expectEqualStrings("I/O error while open `loop-a`: " ++ loop ++
        "\n\nCaused by:\n    " ++ loop, text);
}

test "a TEMP becomes a name entry, a definition header and a body naming it by offset" {
    const gpa = std.testing.allocator;
    const guid: [16]u8 = .{ 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16 };
    const head = "TEMP" ++ [_]u8{0} ** 20 ++ guid;
    // Fragment header; <A/> (dependency none, element size 16, inline name: hash of "A"
    // (0x41), one unit, NUL); EOF; then bytes that are not BinXML (the item descriptors).
    const binxml = [_]u8{ 0x0F, 1, 1, 0, 0x01, 0xFF, 0xFF, 16, 0, 0, 0 } ++
        [_]u8{ 0x41, 0, 1, 0, 0x41, 0, 0, 0, 0x03, 0x00, 0xEE, 0xEE };
    var ext: std.ArrayList(u8) = .empty;
    defer ext.deinit(gpa);
    try ext.appendSlice(gpa, "abc");
    try std.testing.expectEqual(@as(?u32, 15), try translate(gpa, head ++ binxml, &ext));
    const want = "abc" ++
        // The name entry at 3: next offset, hash, count, units, NUL (6.3).
        [_]u8{ 0, 0, 0, 0, 0x41, 0, 1, 0, 0x41, 0, 0, 0 } ++
        // The definition at 15: next offset, GUID, data size 17 (6.5).
        [_]u8{ 0, 0, 0, 0 } ++ guid ++ [_]u8{ 17, 0, 0, 0 } ++
        // The body: the name is chunk offset 3; the EOF ends it.
        [_]u8{ 0x0F, 1, 1, 0, 0x01, 0xFF, 0xFF, 16, 0, 0, 0, 3, 0, 0, 0, 0x03, 0x00 };
    try std.testing.expectEqualSlices(u8, want, ext.items);
    // A wrong hash, a value text other than String, a template instance: refused, nothing
    // appended.
    var bad_hash = binxml;
    bad_hash[11] = 0x42;
    const not_string = [_]u8{ 0x0F, 1, 1, 0, 0x05, 0x04, 1, 0, 0x41, 0, 0x00 };
    const instance = [_]u8{ 0x0F, 1, 1, 0, 0x0C, 0x00 };
    for ([_][]const u8{ &bad_hash, &not_string, &instance }) |body| {
        const temp = try std.mem.concat(gpa, u8, &.{ head, body });
        defer gpa.free(temp);
        try std.testing.expectEqual(@as(?u32, null), try translate(gpa, temp, &ext));
        try std.testing.expectEqual(want.len, ext.items.len);
    }
}

/// Renders chunk 0 of `log` as JSON lines with `cache` and checks its entries: per record,
/// its id, a text its rendering holds (null: it failed), and the failure's detail or a text
/// the rendering must not hold.
fn expectRecords(
    log: []const u8,
    cache: ?*const WevtCache,
    recover: bool,
    comptime expected: []const struct { u64, ?[]const u8, ?[]const u8 },
) !void {
    const gpa = std.testing.allocator;
    const settings: options.Options = .{
        .format = .jsonl,
        .indent = false,
        .show_record_number = false,
        .recover_records = recover,
        .wevt_cache = cache,
    };
    var res = dump.ChunkResult.init(gpa);
    defer res.deinit();
    try testing.renderSlot(gpa, log, 0, &settings, &res);
    try std.testing.expectEqual(expected.len, res.entries.items.len);
    for (expected, res.entries.items) |want, *e| {
        errdefer std.debug.print("record {d}: {s}{s}\n", .{ want[0], e.detail(), res.text(e) });
        try std.testing.expectEqual(@as(?u64, want[0]), e.record_id);
        // Rendered with this text in it, or failed with this detail.
        if (want[1]) |text| {
            try std.testing.expect(std.mem.indexOf(u8, res.text(e), text) != null);
        } else try std.testing.expectEqualStrings(want[2].?, e.detail());
        if (want[1] != null and want[2] != null)
            try std.testing.expect(std.mem.indexOf(u8, res.text(e), want[2].?) == null);
    }
}

test "events.evtx: the records whose definitions fail render from the cache" {
    const gpa = std.testing.allocator;
    const log = try testing.readFixture(gpa, "wevt/events.evtx");
    defer gpa.free(log);
    var diag: Diagnostic = undefined;
    var cache = try loadFixture("wevt/templates.wevtcache", &diag);
    defer cache.deinit(gpa);
    const invalid = "invalid token";
    const no_root = "template definition without exactly one root element";
    try expectRecords(log, null, false, &.{
        .{ 1, "embedded template", null }, .{ 2, null, invalid },
        .{ 3, null, invalid },             .{ 4, null, invalid },
        .{ 5, null, invalid },             .{ 6, null, invalid },
        .{ 7, null, invalid },             .{ 8, null, no_root },
        .{ 9, null, invalid },             .{ 10, "embedded template", null },
    });
    // 6 is in no cache, 7's cached copy is damaged; 5's NULL drops the element of
    // dependency 4 (State); 8 names the zero GUID; 9's inner instance is cached.
    try expectRecords(log, &cache, false, &.{
        .{ 1, "embedded template", null },  .{ 2, "alice", null },
        .{ 3, "bob", null },                .{ 4, "disabled", null },
        .{ 5, "Spooler <print>", "State" }, .{ 6, null, invalid },
        .{ 7, null, invalid },              .{ 8, "from the zero GUID", null },
        .{ 9, "notepad.exe", null },        .{ 10, "embedded template", null },
    });
    var b_first = try loadFixture("wevt/templates-b-first.wevtcache", &diag);
    defer b_first.deinit(gpa);
    try expectRecords(log, &b_first, false, &.{
        .{ 1, "embedded template", null },  .{ 2, "manifest B's copy", "alice" },
        .{ 3, "manifest B's copy", null },  .{ 4, "disabled", null },
        .{ 5, "Spooler <print>", "State" }, .{ 6, null, invalid },
        .{ 7, null, invalid },              .{ 8, "from the zero GUID", null },
        .{ 9, "notepad.exe", null },        .{ 10, "embedded template", null },
    });
}

test "carved.evtx: stale records with broken definitions render from the cache" {
    const gpa = std.testing.allocator;
    const log = try testing.readFixture(gpa, "wevt/carved.evtx");
    defer gpa.free(log);
    var diag: Diagnostic = undefined;
    var cache = try loadFixture("wevt/templates.wevtcache", &diag);
    defer cache.deinit(gpa);
    // Without a cache the carved records fail, and carved failures are no entries.
    try expectRecords(log, null, true, &.{
        .{ 1, "embedded template", null }, .{ 2, null, "invalid token" },
    });
    try expectRecords(log, &cache, true, &.{
        .{ 1, "embedded template", null },   .{ 2, "carol", null },
        .{ 20, "\"recovered\":true", null }, .{ 21, "notepad.exe", null },
    });
}
