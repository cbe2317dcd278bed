//! `info`: what a file's header and chunk headers say, as `evtx_dump info` prints it
//! (byte-identical). Records are not parsed: this is the first look at a damaged log.
//!
//! Chunks are read at their fixed offsets (4096 + n * 65536) whatever the header says, a
//! trailing partial chunk is reported as trailing bytes, and a slot that is not a chunk is
//! one row saying why. Only a file shorter than the header block or without the `ElfFile\0`
//! magic fails (the CLI exits 1). Same module as the Rust engine's `info.rs`.
const std = @import("std");
const assert = std.debug.assert;
const Allocator = std.mem.Allocator;
const Writer = std.Io.Writer;
const file_header = @import("file_header.zig");
const chunk = @import("chunk.zig");
const crc32 = @import("crc32.zig");

pub const Error = error{ FileTooShort, BadFileMagic } || Allocator.Error;

const Flag = struct { bit: u32, name: []const u8 };
/// Flag bits named in the file header, in the order they are named.
const header_flags = [_]Flag{ .{ .bit = 0x1, .name = "DIRTY" }, .{ .bit = 0x2, .name = "FULL" }, .{ .bit = 0x4, .name = "NO_CRC32" } };
/// Flag bits named in chunk headers.
const chunk_flags = [_]Flag{ .{ .bit = 0x1, .name = "DIRTY" }, .{ .bit = 0x4, .name = "NO_CRC32" } };

const columns = [_][]const u8{ "Chunk", "Offset", "Record numbers", "Record IDs", "Flags", "Header CRC32", "Records CRC32" };
const cell_max = 64;

/// One row of the chunk table: seven cells, or (number, offset, note) for a slot that is
/// not a readable chunk.
const Row = struct {
    cells: [columns.len]Cell = undefined,
    /// Set for a note row: cells 0 and 1 hold number and offset.
    note: ?[]const u8 = null,
};

const Cell = struct {
    buf: [cell_max]u8 = undefined,
    len: usize = 0,

    fn set(c: *Cell, comptime fmt: []const u8, args: anytype) void {
        c.len = (std.fmt.bufPrint(&c.buf, fmt, args) catch unreachable).len;
    }

    fn text(c: *const Cell) []const u8 {
        return c.buf[0..c.len];
    }
};

const Totals = struct { used: u64 = 0, empty: u64 = 0, failing: u64 = 0, records: u64 = 0 };

/// Writes the `info` report for the whole file `file` to `out`.
pub fn write(gpa: Allocator, file: []const u8, out: *Writer) (Error || Writer.Error)!void {
    if (file.len < file_header.block_size) return error.FileTooShort;
    if (!std.mem.eql(u8, file[0..8], file_header.magic)) return error.BadFileMagic;
    try writeHeader(file, out);
    const slots = (file.len - file_header.block_size) / chunk.size;
    const rows = try gpa.alloc(Row, slots + 1);
    defer gpa.free(rows);
    for (&rows[0].cells, columns) |*c, name| c.set("{s}", .{name});
    rows[0].note = null;
    var totals: Totals = .{};
    for (rows[1..], 0..) |*row, slot| chunkRow(file, slot, row, &totals);
    try writeTable(rows, out);
    const unreadable = slots - totals.used - totals.empty;
    try out.print("\n{d} {s}: {d} with records, {d} empty, {d} unreadable. {d} records by the chunk headers. {d} {s} a CRC32 check.\n", .{
        slots,          if (slots == 1) "chunk" else "chunks",
        totals.used,    totals.empty,
        unreadable,     totals.records,
        totals.failing, if (totals.failing == 1) "chunk fails" else "chunks fail",
    });
}

fn readInt(comptime T: type, bytes: []const u8, at: usize) T {
    return std.mem.readInt(T, bytes[at..][0..@sizeOf(T)], .little);
}

fn writeHeader(file: []const u8, out: *Writer) Writer.Error!void {
    const body = file.len - file_header.block_size;
    const flags = readInt(u32, file, 120);
    const stored = readInt(u32, file, 124);
    const computed = crc32.hash(file[0..120]);
    try out.writeAll("File header\n");
    try out.print("  {s:<16} {d}.{d}\n", .{ "Version", readInt(u16, file, 38), readInt(u16, file, 36) });
    try out.print("  {s:<16} ", .{"Flags"});
    try writeFlags(flags, &header_flags, out);
    try out.print("\n  {s:<16} ", .{"CRC32"});
    if (flags & file_header.flag_no_crc32 != 0) {
        try out.writeAll("none (NO_CRC32)\n");
    } else if (stored == computed) {
        try out.print("ok (0x{x:0>8})\n", .{stored});
    } else {
        try out.print("BAD (stored 0x{x:0>8}, computed 0x{x:0>8})\n", .{ stored, computed });
    }
    try out.print("  {s:<16} {d}\n", .{ "First chunk", readInt(u64, file, 8) });
    try out.print("  {s:<16} {d}\n", .{ "Last chunk", readInt(u64, file, 16) });
    try out.print("  {s:<16} {d}\n", .{ "Next record ID", readInt(u64, file, 24) });
    try out.print("  {s:<16} {d} (the file has room for {d})\n", .{ "Chunk count", readInt(u16, file, 42), body / chunk.size });
    try out.print("  {s:<16} {d} (block {d})\n", .{ "Header size", readInt(u32, file, 32), readInt(u16, file, 40) });
    if (body % chunk.size > 0) try out.print("  {s:<16} {d}, after the last chunk\n", .{ "Trailing bytes", body % chunk.size });
}

/// The names of the set flags joined by ` | `, then any other bits as `0x…` (lowercase
/// hex); `none` when no bit is set (the reference's bitflags text).
fn writeFlags(flags: u32, names: []const Flag, out: *Writer) Writer.Error!void {
    if (flags == 0) return out.writeAll("none");
    var rest = flags;
    var first = true;
    for (names) |f| {
        if (flags & f.bit == 0) continue;
        if (!first) try out.writeAll(" | ");
        try out.writeAll(f.name);
        first = false;
        rest &= ~f.bit;
    }
    if (rest != 0) {
        if (!first) try out.writeAll(" | ");
        try out.print("0x{x}", .{rest});
    }
}

/// The reference's words for a slot whose chunk header cannot be parsed (bad magic).
const unreadable_prefix = "unreadable: Failed to parse chunk header: Invalid EVTX chunk header magic, expected `ElfChnk0`, found `";

fn chunkRow(file: []const u8, slot: usize, row: *Row, totals: *Totals) void {
    const offset = file_header.block_size + slot * chunk.size;
    const bytes: *const [chunk.size]u8 = file[offset..][0..chunk.size];
    row.note = null;
    row.cells[0].set("{d}", .{slot});
    row.cells[1].set("0x{x:0>8}", .{offset});
    if (chunk.isEmpty(bytes)) {
        totals.empty += 1;
        row.note = "empty";
        return;
    }
    if (!chunk.hasMagic(bytes)) {
        // The note is built in cell 2: eight bytes as `{:2X}` (space-padded uppercase hex).
        var w: Writer = .fixed(&row.cells[2].buf);
        w.writeAll("[") catch unreachable;
        for (bytes[0..8], 0..) |b, i| {
            if (i > 0) w.writeAll(", ") catch unreachable;
            w.print("{X:>2}", .{b}) catch unreachable;
        }
        w.writeAll("]`") catch unreachable;
        row.cells[2].len = w.end;
        row.note = unreadable_prefix;
        return;
    }
    totals.used += 1;
    const flags = readInt(u32, bytes, 120);
    const no_crc = flags & chunk.flag_no_crc32 != 0;
    const header_ok = no_crc or readInt(u32, bytes, 124) == chunk.headerChecksum(bytes);
    const free_space = readInt(u32, bytes, 48);
    const records_ok = no_crc or (free_space >= chunk.header_size and free_space <= chunk.size and
        readInt(u32, bytes, 52) == crc32.hash(bytes[chunk.header_size..free_space]));
    if (!header_ok or !records_ok) totals.failing += 1;
    const first = readInt(u64, bytes, 8);
    const last = readInt(u64, bytes, 16);
    if (last >= first) totals.records +%= std.math.add(u64, last - first, 1) catch std.math.maxInt(u64);
    row.cells[2].set("{d}-{d}", .{ first, last });
    row.cells[3].set("{d}-{d}", .{ readInt(u64, bytes, 24), readInt(u64, bytes, 32) });
    var w: Writer = .fixed(&row.cells[4].buf);
    writeFlags(flags, &chunk_flags, &w) catch unreachable;
    row.cells[4].len = w.end;
    row.cells[5].set("{s}", .{crcWord(no_crc, header_ok)});
    row.cells[6].set("{s}", .{crcWord(no_crc, records_ok)});
}

fn crcWord(no_crc: bool, ok: bool) []const u8 {
    if (no_crc) return "none";
    return if (ok) "ok" else "BAD";
}

/// Left-aligned columns two spaces apart, trailing spaces trimmed; a note row has its
/// number and offset, then the note.
fn writeTable(rows: []const Row, out: *Writer) Writer.Error!void {
    var widths = [_]usize{0} ** columns.len;
    for (rows) |*row| {
        const n: usize = if (row.note != null) 2 else columns.len;
        for (row.cells[0..n], widths[0..n]) |*c, *w| w.* = @max(w.*, c.len);
    }
    try out.writeAll("\n");
    for (rows) |*row| {
        if (row.note) |note| {
            try pad(out, row.cells[0].text(), widths[0]);
            try out.writeAll("  ");
            try pad(out, row.cells[1].text(), widths[1]);
            try out.writeAll("  ");
            try out.writeAll(note);
            // A bad-magic note continues with the bytes kept in cell 2.
            if (note.ptr == unreadable_prefix.ptr) try out.writeAll(row.cells[2].text());
            try out.writeAll("\n");
            continue;
        }
        // Trailing spaces are trimmed: the last non-empty cell ends the line.
        var last: usize = columns.len;
        while (last > 0 and row.cells[last - 1].len == 0) last -= 1;
        for (row.cells[0..last], 0..) |*c, i| {
            if (i + 1 == last) {
                try out.writeAll(c.text());
            } else {
                try pad(out, c.text(), widths[i]);
                try out.writeAll("  ");
            }
        }
        try out.writeAll("\n");
    }
}

fn pad(out: *Writer, text: []const u8, width: usize) Writer.Error!void {
    assert(text.len <= width);
    try out.writeAll(text);
    try out.splatByteAll(' ', width - text.len);
}

test "info: flag names follow the reference's bitflags text" {
    var buf: [64]u8 = undefined;
    const cases = [_]struct { flags: u32, names: []const Flag, want: []const u8 }{
        .{ .flags = 0, .names = &header_flags, .want = "none" },
        .{ .flags = 3, .names = &header_flags, .want = "DIRTY | FULL" },
        .{ .flags = 0x1b97_0000, .names = &header_flags, .want = "0x1b970000" },
        .{ .flags = 0x12, .names = &chunk_flags, .want = "0x12" },
        .{ .flags = 0x105, .names = &chunk_flags, .want = "DIRTY | NO_CRC32 | 0x100" },
    };
    for (cases) |c| {
        var w: Writer = .fixed(&buf);
        try writeFlags(c.flags, c.names, &w);
        try std.testing.expectEqualStrings(c.want, w.buffered());
    }
}

test "info: header-only file, short and foreign files" {
    var file = [_]u8{0} ** (file_header.block_size + 10);
    var buf: [2048]u8 = undefined;
    var w: Writer = .fixed(&buf);
    try std.testing.expectError(error.BadFileMagic, write(std.testing.allocator, &file, &w));
    try std.testing.expectError(error.FileTooShort, write(std.testing.allocator, file[0..100], &w));
    @memcpy(file[0..8], file_header.magic);
    try write(std.testing.allocator, &file, &w);
    const text = w.buffered();
    try std.testing.expect(std.mem.startsWith(u8, text, "File header\n  Version          0.0\n"));
    try std.testing.expect(std.mem.indexOf(u8, text, "  Trailing bytes   10, after the last chunk\n") != null);
    try std.testing.expect(std.mem.endsWith(u8, text, "\n0 chunks: 0 with records, 0 empty, 0 unreadable. 0 records by the chunk headers. 0 chunks fail a CRC32 check.\n"));
}
