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
//! being written is read as it was), bytes cut later read short.
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

/// `$TMPDIR`, or `/tmp` when it is unset or empty.
pub fn tempDir() []const u8 {
    const dir = std.posix.getenv("TMPDIR") orelse return "/tmp";
    return if (dir.len == 0) "/tmp" else dir;
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
