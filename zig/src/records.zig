//! Records (contract section 5): the record header, and the walk of a chunk's records with
//! resynchronisation after a bad one and, with `--recover-records`, carving of the spans it
//! skips (carve.zig). The twin of `rust/evtx-core/src/records.rs`.
const std = @import("std");
const assert = std.debug.assert;
const bytes_le = @import("bytes.zig");
const errors = @import("error.zig");
const chunk = @import("chunk.zig");
const carve = @import("carve.zig");
const ErrorKind = errors.ErrorKind;
const ChunkHeader = chunk.ChunkHeader;
const size = chunk.size;
const header_size = chunk.header_size;

pub const record_header_size = 24;
pub const record_magic = "\x2a\x2a\x00\x00";

comptime {
    assert(header_size + record_header_size < size);
}

/// A record header read from a chunk (5.1).
pub const RecordHeader = struct {
    offset: u32,
    size: u32,
    id: u64,
    filetime: u64,
    /// Carved from unallocated space (`--recover-records`, carve.zig), not walked.
    recovered: bool = false,

    /// Chunk bytes of the BinXML stream.
    pub fn binxmlEnd(r: *const RecordHeader) u32 {
        return r.offset + r.size - 4;
    }
};

/// A record read error: the kind, and whether it is "blank" (5.2).
pub const RecordReadError = struct {
    kind: ErrorKind,
    /// Zero magic or truncated header: a silent end when nothing live follows.
    blank: bool,
    /// Record id, when the header could be read.
    id: ?u64,
};

/// What reading a record header gives.
pub const RecordRead = union(enum) {
    ok: RecordHeader,
    err: RecordReadError,
};

const filetime_max: u64 = 2_650_466_808_009_999_999;

/// Reads the record header at chunk offset `pos` (5.1).
pub fn readRecordHeader(bytes: *const [size]u8, pos: u32) RecordRead {
    if (pos > size or size - pos < record_header_size) {
        return failed(.truncated_record_header, true, null);
    }
    const m = bytes[pos..][0..4];
    if (!std.mem.eql(u8, m, record_magic)) {
        return failed(.bad_record_magic, std.mem.allEqual(u8, m, 0), null);
    }
    const rsize = bytes_le.leU32(bytes, pos + 4);
    const id = bytes_le.leU64(bytes, pos + 8);
    const filetime = bytes_le.leU64(bytes, pos + 16);
    if (filetime > filetime_max) return failed(.bad_record_timestamp, false, id);
    if (rsize < 28) return failed(.bad_record_size, false, id);
    if (@as(u64, pos) + rsize - 4 > size) return failed(.bad_record_size, false, id);
    return .{ .ok = .{ .offset = pos, .size = rsize, .id = id, .filetime = filetime } };
}

fn failed(kind: ErrorKind, blank: bool, id: ?u64) RecordRead {
    return .{ .err = .{ .kind = kind, .blank = blank, .id = id } };
}

/// The next live record at or after `from` (5.3), or null.
pub fn resync(bytes: *const [size]u8, h: *const ChunkHeader, from: u32) ?u32 {
    const live_end = h.liveEnd();
    const limit: u64 = @min(@as(u64, live_end), @as(u64, h.last_record_offset) + 4);
    var q: u64 = from;
    while (q < limit) : (q += 1) {
        const i: u32 = @intCast(q);
        const window = bytes[0..@intCast(@min(limit + 3, size))];
        const found = std.mem.indexOfPos(u8, window, i, record_magic) orelse return null;
        if (found >= limit) return null;
        q = found;
        const r = switch (readRecordHeader(bytes, @intCast(found))) {
            .ok => |r| r,
            .err => continue,
        };
        if (@as(u64, found) + r.size > live_end) continue;
        const copy = bytes_le.leU32(bytes, found + r.size - 4);
        if (copy != r.size) continue;
        if (r.id < h.first_record_id or r.id > h.last_record_id) continue;
        return @intCast(found);
    }
    return null;
}

/// One step of the record walk: a record to render (walked, or carved when `recovered`), or
/// a record read error at a chunk offset.
pub const WalkItem = union(enum) {
    record: RecordHeader,
    /// A record read error at chunk offset `offset`; `id` when the header was readable.
    err: struct { offset: u32, kind: ErrorKind, id: ?u64 },
};

/// Walks a chunk's records (5.2). With `recover`, also carves the stale records (5.4) of
/// the span the walk skips (a bad record up to the resync point) or leaves (after the live
/// area or the chunk's last record, up to the chunk end), before walking on.
pub const RecordWalker = struct {
    bytes: *const [size]u8,
    header: ChunkHeader,
    recover: bool = false,
    pos: u32 = header_size,
    /// Set after the record whose id is the chunk's last id, or when nothing live is left.
    done: bool = false,
    /// What is left to carve before walking on (empty unless `recover`).
    carving: carve.Span = .empty,

    pub fn init(bytes: *const [size]u8, recover: bool) RecordWalker {
        return .{ .bytes = bytes, .header = ChunkHeader.read(bytes), .recover = recover };
    }

    /// No walk, only `span` carved: a partial chunk slot (dump.zig).
    pub fn carveOnly(bytes: *const [size]u8, span: carve.Span) RecordWalker {
        assert(span.end <= size);
        const header = ChunkHeader.read(bytes);
        return .{
            .bytes = bytes,
            .header = header,
            .recover = true,
            .done = true,
            .carving = span,
        };
    }

    /// The next record or read error of the walk; null at its end.
    pub fn next(w: *RecordWalker) ?WalkItem {
        const live_end = w.header.liveEnd();
        while (true) {
            if (!w.carving.isEmpty()) {
                if (carve.next(w.bytes, &w.carving)) |r| return .{ .record = r };
            }
            if (w.done) return null;
            const pos = w.pos;
            if (pos >= live_end) {
                w.skipTo(pos, null);
                continue;
            }
            switch (readRecordHeader(w.bytes, pos)) {
                .ok => |r| {
                    w.pos = pos + r.size;
                    if (r.id == w.header.last_record_id) w.skipTo(w.pos, null);
                    return .{ .record = r };
                },
                .err => |e| {
                    const next_pos = resync(w.bytes, &w.header, pos + 1);
                    w.skipTo(pos, next_pos);
                    if (next_pos != null or !e.blank) {
                        return .{ .err = .{ .offset = pos, .kind = e.kind, .id = e.id } };
                    }
                },
            }
        }
    }

    /// A carved record `r` turned out to be noise (it failed to parse or render): carve on
    /// one byte after its magic.
    pub fn rejectCarved(w: *RecordWalker, r: *const RecordHeader) void {
        carve.rescanAfter(&w.carving, r);
    }

    /// Walk on at `next_pos` (null: nothing live is left); with `recover`, carve from
    /// `from` up to it, or to the chunk end, first.
    fn skipTo(w: *RecordWalker, from: u32, next_pos: ?u32) void {
        if (next_pos) |n| w.pos = n else w.done = true;
        if (w.recover) w.carving = .{ .start = @min(from, size), .end = next_pos orelse size };
    }
};

test "record header checks (5.1)" {
    var bytes = [_]u8{0} ** size;
    try std.testing.expect(readRecordHeader(&bytes, 512).err.blank);
    @memcpy(bytes[512..516], record_magic);
    std.mem.writeInt(u32, bytes[516..520], 0, .little);
    try std.testing.expectEqual(ErrorKind.bad_record_size, readRecordHeader(&bytes, 512).err.kind);
    std.mem.writeInt(u32, bytes[516..520], 40, .little);
    std.mem.writeInt(u64, bytes[528..536], filetime_max + 1, .little);
    const timestamp = readRecordHeader(&bytes, 512).err.kind;
    try std.testing.expectEqual(ErrorKind.bad_record_timestamp, timestamp);
    std.mem.writeInt(u64, bytes[528..536], filetime_max, .little);
    try std.testing.expectEqual(@as(u32, 40), readRecordHeader(&bytes, 512).ok.size);
    try std.testing.expect(readRecordHeader(&bytes, size - 10).err.blank);
}

test "walker resyncs past a bad record and ends silently at zeroed space" {
    var bytes = [_]u8{0} ** size;
    @memcpy(bytes[0..8], chunk.magic);
    std.mem.writeInt(u64, bytes[24..32], 1, .little); // first id
    std.mem.writeInt(u64, bytes[32..40], 9, .little); // last id
    std.mem.writeInt(u32, bytes[44..48], 600, .little); // last record offset
    std.mem.writeInt(u32, bytes[48..52], 2000, .little); // free space
    // A record at 512 with size 0 (error), then a live record at 600 with id 2.
    @memcpy(bytes[512..516], record_magic);
    @memcpy(bytes[600..604], record_magic);
    std.mem.writeInt(u32, bytes[604..608], 40, .little);
    std.mem.writeInt(u64, bytes[608..616], 2, .little);
    std.mem.writeInt(u32, bytes[636..640], 40, .little);
    var w = RecordWalker.init(&bytes, false);
    const first = w.next().?;
    try std.testing.expectEqual(ErrorKind.bad_record_size, first.err.kind);
    try std.testing.expectEqual(@as(u32, 512), first.err.offset);
    try std.testing.expectEqual(@as(u64, 2), w.next().?.record.id);
    try std.testing.expect(w.next() == null);
}
