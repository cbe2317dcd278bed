//! Where chunk bytes come from: a file read through 64 KiB windows with positioned reads,
//! or bytes the caller lends (the C ABI's `evtx_parser_open_buffer`, tests), never copied.
//!
//! Why windows and not a mapping (PERF.md H10): a mapped input counts as resident memory
//! once touched (the order scan touches every chunk header, and fault-around maps the rest),
//! and a file that shrinks under a mapping kills the process with SIGBUS. A positioned read
//! of a slot that is gone comes back short: the chunk is reported `incomplete chunk` and
//! the run goes on. Memory per worker is one `ChunkSlot`, whatever the file's size.
//!
//! The size is fixed when the input is opened: bytes appended later are not read (a log
//! being written is read as it was), bytes cut later read short. The chunk order (3.3) is read
//! from here too: the chunk headers, and whole slots only past the header's count.
const std = @import("std");
const assert = std.debug.assert;
const file_header = @import("file_header.zig");
const chunk_mod = @import("chunk.zig");

pub const chunk_size = file_header.chunk_size;

/// One chunk window: the bytes of one slot, read by one worker.
pub const ChunkSlot = struct {
    bytes: [chunk_size]u8 align(64) = undefined,
};

/// Standard input is copied to the spool file in blocks of this size.
pub const spool_block_size = chunk_size;

pub const Input = struct {
    source: Source,
    /// Bytes of the input when it was opened; nothing past it is ever read.
    size: u64,

    pub const Source = union(enum) {
        /// Read with `pread`; the caller owns the handle (opened read-only).
        file: std.fs.File,
        /// Borrowed for the input's lifetime.
        bytes: []const u8,
    };

    pub fn fromBytes(bytes: []const u8) Input {
        return .{ .source = .{ .bytes = bytes }, .size = bytes.len };
    }

    /// A regular file (positioned reads need one); its size is taken now.
    pub fn fromFile(file: std.fs.File) error{ NotRegularFile, StatFailed }!Input {
        const stat = file.stat() catch return error.StatFailed;
        if (stat.kind != .file) return error.NotRegularFile;
        return .{ .source = .{ .file = file }, .size = stat.size };
    }

    /// Up to `buffer.len` bytes at `offset`, no further than `size`: a slice of the lent
    /// bytes, or of `buffer` after a positioned read. Shorter when the file shrank since it
    /// was opened or a read failed (an I/O error is a missing tail, reported by the caller
    /// as the chunk it cuts).
    pub fn read(in: *const Input, offset: u64, buffer: []u8) []const u8 {
        if (offset >= in.size) return buffer[0..0];
        const n: usize = @intCast(@min(@as(u64, buffer.len), in.size - offset));
        switch (in.source) {
            .bytes => |bytes| return bytes[@intCast(offset)..][0..n],
            .file => |file| {
                var done: usize = 0;
                while (done < n) {
                    const got = file.pread(buffer[done..n], offset + done) catch break;
                    if (got == 0) break;
                    done += got;
                }
                assert(done <= n);
                return buffer[0..done];
            },
        }
    }

    /// Whether `bytes`, read from slot `slot`, are the cut last chunk (shared-fixtures/README.md,
    /// "A log cut inside its last chunk"): the slot the input, as opened, ends inside, starting
    /// with the chunk magic. A slot that reads short because the file shrank since it was
    /// opened is not one (a plain `incomplete chunk`). The chunk order and the renderer both
    /// ask this, so they cannot disagree.
    pub fn isCutSlot(in: *const Input, slot: u64, bytes: []const u8) bool {
        return bytes.len < chunk_size and
            file_header.chunkOffset(slot) + chunk_size > in.size and
            chunk_mod.hasMagic(bytes);
    }

    /// The 64 KiB of slot `slot`, or null when fewer than that can be read.
    pub fn chunk(in: *const Input, slot: u64, window: *ChunkSlot) ?*const [chunk_size]u8 {
        const bytes = in.read(file_header.chunkOffset(slot), &window.bytes);
        if (bytes.len < chunk_size) return null;
        return bytes[0..chunk_size];
    }
};

/// The output order of the chunk slots (3.3): `oldest..first_end`, then `0..wrap_end`. Three
/// numbers instead of a list, so the order of a 20 GB log costs nothing (the Rust engine's
/// `ChunkOrder`).
pub const ChunkOrder = struct {
    oldest: u32,
    first_end: u32,
    wrap_end: u32,

    /// Number of slots in the order.
    pub fn len(o: ChunkOrder) usize {
        assert(o.wrap_end <= o.oldest and o.oldest <= o.first_end);
        return @as(usize, o.first_end - o.oldest) + o.wrap_end;
    }

    /// The `i`-th slot in output order, null past the end.
    pub fn get(o: ChunkOrder, i: usize) ?u32 {
        const first: usize = o.first_end - o.oldest;
        if (i < first) return o.oldest + @as(u32, @intCast(i));
        if (i - first < o.wrap_end) return @intCast(i - first);
        return null;
    }

    /// The order without its first `n` slots (`n <= len()`): the C ABI's dump of what its
    /// pulls left, on the pipeline.
    pub fn skip(o: ChunkOrder, n: usize) ChunkOrder {
        assert(n <= o.len());
        const first: usize = o.first_end - o.oldest;
        if (n <= first) return .{
            .oldest = o.oldest + @as(u32, @intCast(n)),
            .first_end = o.first_end,
            .wrap_end = o.wrap_end,
        };
        return .{ .oldest = @intCast(n - first), .first_end = o.wrap_end, .wrap_end = 0 };
    }

    /// The slots in output order.
    pub fn iterator(o: ChunkOrder) Iterator {
        return .{ .order = o };
    }

    pub const Iterator = struct {
        order: ChunkOrder,
        next_index: usize = 0,

        pub fn next(it: *Iterator) ?u32 {
            const slot = it.order.get(it.next_index) orelse return null;
            it.next_index += 1;
            return slot;
        }
    };
};

/// The chunk slots of `in` in output order (3.3), `chunk_slots` the file header's count:
/// failing slots inside the file are in it (they become chunk errors), slots past
/// `chunk_slots` that fail are not. Only slots past `chunk_slots` (at most a couple, when the
/// header block size is not 4096) are read whole, into a window allocated for them.
pub fn chunkOrder(
    gpa: std.mem.Allocator,
    in: *const Input,
    chunk_slots: u64,
    validate_checksums: bool,
) std.mem.Allocator.Error!ChunkOrder {
    const slots = slotLimit(chunk_slots);
    const oldest = oldestSlot(in, slots);
    var window: ?*ChunkSlot = null;
    defer if (window) |w| gpa.destroy(w);
    var end = @max(slots, oldest);
    // First pass: to the end of the file. Past `chunk_slots`, a slot that fails steps 1-4
    // ends the pass silently (an all-zero slot does not fail: it renders nothing).
    while (end < std.math.maxInt(u32)) : (end += 1) {
        // A slot the input ends inside reads short: it fails unread.
        if (file_header.chunkOffset(end) + chunk_size > in.size) break;
        const w = window orelse try gpa.create(ChunkSlot);
        window = w;
        if (slotFails(in.chunk(end, w), validate_checksums)) break;
    }
    // A trailing partial slot that starts like a chunk ends the first pass with an error
    // line (our rule, `shared-fixtures/README.md`), where the reference is silent.
    var magic: [8]u8 = undefined;
    if (end < std.math.maxInt(u32) and
        in.isCutSlot(end, in.read(file_header.chunkOffset(end), &magic))) end += 1;
    return .{ .oldest = oldest, .first_end = end, .wrap_end = @min(oldest, slots) };
}

/// The oldest chunk (3.3 step 1), from the 512-byte chunk headers only. The scan stops at the
/// first header that cannot be read whole (the file shrank), as the reference's does.
fn oldestSlot(in: *const Input, slots: u32) u32 {
    var best: ?struct { first: u64, slot: u32 } = null;
    var head: [chunk_mod.header_size]u8 = undefined;
    for (0..slots) |slot| {
        const bytes = in.read(file_header.chunkOffset(slot), &head);
        if (bytes.len < chunk_mod.header_size) break;
        if (!chunk_mod.hasMagic(bytes)) continue;
        const first = std.mem.readInt(u64, bytes[24..32], .little);
        const last = std.mem.readInt(u64, bytes[32..40], .little);
        if (first > last) continue;
        if (best == null or first < best.?.first) {
            best = .{ .first = first, .slot = @intCast(slot) };
        }
    }
    return if (best) |b| b.slot else 0;
}

/// Whether a slot's 64 KiB (null: fewer could be read) fail steps 1-4 of 3.2; an all-zero
/// slot does not.
fn slotFails(bytes: ?*const [chunk_size]u8, validate_checksums: bool) bool {
    const b = bytes orelse return true;
    if (!chunk_mod.hasMagic(b)) return !chunk_mod.isEmpty(b);
    if (!validate_checksums) return false;
    const h = chunk_mod.ChunkHeader.read(b);
    return chunk_mod.validateChecksums(b, &h) != null;
}

/// Slot numbers are `u32` (2^32 slots is 256 TiB).
fn slotLimit(slots: u64) u32 {
    return std.math.cast(u32, slots) orelse std.math.maxInt(u32);
}

/// Copies `source` to its end into a new, already unlinked file in `dir_path` (mode 0600),
/// `block` bytes at a time, and returns that file (read and write, at offset 0 for
/// `pread`). The name exists only between create and unlink; nothing is left behind, even
/// when the process is killed during the copy.
pub fn spool(source: std.fs.File, dir_path: []const u8, block: []u8) !std.fs.File {
    assert(block.len > 0);
    var dir = try std.fs.cwd().openDir(dir_path, .{});
    defer dir.close();
    var name_buf: [64]u8 = undefined;
    const attempts_max = 16;
    const file = for (0..attempts_max) |_| {
        const name = std.fmt.bufPrint(
            &name_buf,
            ".evtx-spool-{x:0>16}",
            .{std.crypto.random.int(u64)},
        ) catch unreachable;
        const f = dir.createFile(
            name,
            .{ .read = true, .exclusive = true, .mode = 0o600 },
        ) catch |e| switch (e) {
            error.PathAlreadyExists => continue,
            else => return e,
        };
        dir.deleteFile(name) catch |e| {
            f.close();
            return e;
        };
        break f;
    } else return error.PathAlreadyExists;
    errdefer file.close();
    while (true) {
        const n = try source.read(block);
        if (n == 0) break;
        try file.writeAll(block[0..n]);
    }
    return file;
}

test "input: lent bytes and a file read the same; reads stop at the size seen at open" {
    const gpa = std.testing.allocator;
    const total = file_header.block_size + 2 * chunk_size + 100;
    const bytes = try gpa.alloc(u8, total);
    defer gpa.free(bytes);
    for (bytes, 0..) |*b, i| b.* = @truncate(i *% 7);
    var tmp = std.testing.tmpDir(.{});
    defer tmp.cleanup();
    try tmp.dir.writeFile(.{ .sub_path = "in.evtx", .data = bytes });
    const file = try tmp.dir.openFile("in.evtx", .{});
    defer file.close();
    const window = try gpa.create(ChunkSlot);
    defer gpa.destroy(window);

    const lent = Input.fromBytes(bytes);
    const read = try Input.fromFile(file);
    try std.testing.expectEqual(@as(u64, total), read.size);
    for ([_]*const Input{ &lent, &read }) |in| {
        const c1 = in.chunk(1, window) orelse return error.TestUnexpectedResult;
        try std.testing.expectEqualSlices(
            u8,
            bytes[file_header.chunkOffset(1)..][0..chunk_size],
            c1,
        );
        try std.testing.expect(in.chunk(2, window) == null);
        var small: [512]u8 = undefined;
        try std.testing.expectEqual(
            @as(usize, 100),
            in.read(file_header.chunkOffset(2), &small).len,
        );
        try std.testing.expectEqual(@as(usize, 0), in.read(total, &small).len);
    }
    // Lent bytes are not copied.
    try std.testing.expect(
        lent.chunk(0, window).? == bytes[file_header.block_size..][0..chunk_size],
    );

    // Growth is ignored, a shrink reads short.
    {
        const w = try tmp.dir.openFile("in.evtx", .{ .mode = .write_only });
        defer w.close();
        try w.seekFromEnd(0);
        try w.writeAll(&([_]u8{1} ** chunk_size));
    }
    try std.testing.expect(read.chunk(2, window) == null);
    {
        const w = try tmp.dir.openFile("in.evtx", .{ .mode = .write_only });
        defer w.close();
        try w.setEndPos(file_header.chunkOffset(1) + 10);
    }
    try std.testing.expect(read.chunk(0, window) != null);
    try std.testing.expect(read.chunk(1, window) == null);
}

test "a chunk order: the first pass from the oldest slot, then the wrap, and what is left" {
    // A wrapped log of five slots whose oldest chunk is in slot 3.
    const order: ChunkOrder = .{ .oldest = 3, .first_end = 5, .wrap_end = 3 };
    try std.testing.expectEqual(@as(usize, 5), order.len());
    const want = [_]u32{ 3, 4, 0, 1, 2 };
    var it = order.iterator();
    for (want, 0..) |slot, i| {
        try std.testing.expectEqual(@as(?u32, slot), order.get(i));
        try std.testing.expectEqual(@as(?u32, slot), it.next());
    }
    try std.testing.expectEqual(@as(?u32, null), order.get(5));
    try std.testing.expectEqual(@as(?u32, null), it.next());
    // Each suffix holds the rest of the slots, in order.
    for (0..want.len + 1) |n| {
        const rest = order.skip(n);
        try std.testing.expectEqual(want.len - n, rest.len());
        for (want[n..], 0..) |slot, i| try std.testing.expectEqual(@as(?u32, slot), rest.get(i));
    }
}

test "spool: a pipe's bytes land in an unlinked file, block by block" {
    const gpa = std.testing.allocator;
    var tmp = std.testing.tmpDir(.{ .iterate = true });
    defer tmp.cleanup();
    const dir_path = try tmp.dir.realpathAlloc(gpa, ".");
    defer gpa.free(dir_path);
    const fds = try std.posix.pipe();
    const reader: std.fs.File = .{ .handle = fds[0] };
    defer reader.close();
    const payload = "ElfFile\x00" ++ ("x" ** 3000);
    {
        const writer: std.fs.File = .{ .handle = fds[1] };
        defer writer.close();
        try writer.writeAll(payload);
    }
    var block: [7]u8 = undefined;
    const spooled = try spool(reader, dir_path, &block);
    defer spooled.close();
    const in = try Input.fromFile(spooled);
    try std.testing.expectEqual(@as(u64, payload.len), in.size);
    var back: [payload.len]u8 = undefined;
    try std.testing.expectEqualStrings(payload, in.read(0, &back));
    // Nothing left in the directory.
    var it = tmp.dir.iterate();
    try std.testing.expect(try it.next() == null);
}
