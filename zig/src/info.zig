//! `info`: what a file's header and chunk headers say, as `evtx_dump info` prints it
//! (byte-identical). Records are not parsed: this is the first look at a damaged log.
//!
//! Chunks are read at their fixed offsets (4096 + n * 65536) whatever the header says, a
//! trailing partial chunk is reported as trailing bytes, and a slot that is not a chunk is
//! one row saying why. Only a file shorter than the header block or without the `ElfFile\0`
//! magic fails (the CLI exits 1). Same module as the Rust engine's `info.rs`.
//!
//! Memory is bounded whatever the file size: the input is read through an `Input`, one slot
//! at a time into the caller's window, and the table is streamed. Its column widths depend
//! on every row, so a first pass reads only the first `width_bytes` of each chunk header
//! (the cells whose width varies), the second reads each whole slot (for the CRC32s) and
//! writes its row.
const std = @import("std");
const assert = std.debug.assert;
const Allocator = std.mem.Allocator;
const Writer = std.Io.Writer;
const file_header = @import("file_header.zig");
const chunk = @import("chunk.zig");
const crc32 = @import("crc32.zig");
const bytes_le = @import("bytes.zig");
const input = @import("input.zig");
const Input = input.Input;

pub const Error = error{ FileTooShort, BadFileMagic };

/// Bytes of a chunk header the width pass reads: the magic, record numbers, record IDs and
/// flags (at 120).
const width_bytes = 124;

const Flag = struct { bit: u32, name: []const u8 };
/// Flag bits named in the file header, in the order they are named.
const header_flags = [_]Flag{ .{ .bit = 0x1, .name = "DIRTY" }, .{ .bit = 0x2, .name = "FULL" }, .{
    .bit = 0x4,
    .name = "NO_CRC32",
} };
/// Flag bits named in chunk headers.
const chunk_flags = [_]Flag{ .{ .bit = 0x1, .name = "DIRTY" }, .{
    .bit = 0x4,
    .name = "NO_CRC32",
} };

/// The chunk table's column titles, one a line in `include/info_columns.txt`: the Rust
/// engine's `info.rs` reads the same file, so the two cannot drift apart.
const columns = lines(7, @embedFile("info_columns"));
const cell_max = 64;

/// One row of the chunk table: seven cells, or (number, offset, note) for a slot that is
/// not a readable chunk.
const Row = struct {
    cells: [columns.len]Cell = undefined,
    /// Set for a note row: cells 0 and 1 hold number and offset, the note continues with
    /// cell 2.
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

/// Writes the `info` report of `in` to `out`, reading its slots into `window`.
pub fn write(
    in: *const Input,
    window: *input.ChunkSlot,
    out: *Writer,
) (Error || Writer.Error)!void {
    var block: [file_header.block_size]u8 = undefined;
    const head = in.read(0, &block);
    if (head.len < file_header.block_size) return error.FileTooShort;
    if (!std.mem.eql(u8, head[0..8], file_header.magic)) return error.BadFileMagic;
    try writeHeader(head, in.size, out);
    const slots = (in.size - file_header.block_size) / chunk.size;
    const widths = columnWidths(in, slots);
    var row: Row = .{};
    for (&row.cells, columns) |*c, name| c.set("{s}", .{name});
    try out.writeAll("\n");
    try writeRow(&row, &widths, out);
    var totals: Totals = .{};
    for (0..slots) |slot| {
        chunkRow(in.read(file_header.chunkOffset(slot), &window.bytes), slot, &row, &totals);
        try writeRow(&row, &widths, out);
    }
    const unreadable = slots - totals.used - totals.empty;
    try out.print("\n{d} {s}: {d} with records, {d} empty, {d} unreadable. {d} records by the " ++
        "chunk headers. {d} {s} a CRC32 check.\n", .{
        slots,          if (slots == 1) "chunk" else "chunks",
        totals.used,    totals.empty,
        unreadable,     totals.records,
        totals.failing, if (totals.failing == 1) "chunk fails" else "chunks fail",
    });
}

/// The width of each column: the widest of its title and its cells. Number and offset grow
/// with the slot; the other cells that vary are in the first `width_bytes` of a chunk
/// header, so only those are read. (A file rewritten between the passes may give a row
/// wider than its column; it is printed whole, never cut.)
fn columnWidths(in: *const Input, slots: u64) [columns.len]usize {
    var widths: [columns.len]usize = undefined;
    for (&widths, columns) |*w, name| w.* = name.len;
    if (slots == 0) return widths;
    var cell: Cell = .{};
    cell.set("{d}", .{slots - 1});
    widths[0] = @max(widths[0], cell.len);
    cell.set("0x{x:0>8}", .{file_header.chunkOffset(slots - 1)});
    widths[1] = @max(widths[1], cell.len);
    var head: [width_bytes]u8 = undefined;
    for (0..slots) |slot| {
        const bytes = in.read(file_header.chunkOffset(slot), &head);
        if (bytes.len < width_bytes or !chunk.hasMagic(bytes)) continue;
        cell.set("{d}-{d}", .{ bytes_le.le(u64, bytes, 8), bytes_le.le(u64, bytes, 16) });
        widths[2] = @max(widths[2], cell.len);
        cell.set("{d}-{d}", .{ bytes_le.le(u64, bytes, 24), bytes_le.le(u64, bytes, 32) });
        widths[3] = @max(widths[3], cell.len);
        var w: Writer = .fixed(&cell.buf);
        writeFlags(bytes_le.le(u32, bytes, 120), &chunk_flags, &w) catch unreachable;
        widths[4] = @max(widths[4], w.end);
    }
    return widths;
}

fn writeHeader(file: []const u8, size: u64, out: *Writer) Writer.Error!void {
    assert(file.len == file_header.block_size);
    const body = size - file_header.block_size;
    const flags = bytes_le.le(u32, file, 120);
    const stored = bytes_le.le(u32, file, 124);
    const computed = crc32.hash(file[0..120]);
    try out.writeAll("File header\n");
    try out.print(
        "  {s:<16} {d}.{d}\n",
        .{ "Version", bytes_le.le(u16, file, 38), bytes_le.le(u16, file, 36) },
    );
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
    try out.print("  {s:<16} {d}\n", .{ "First chunk", bytes_le.le(u64, file, 8) });
    try out.print("  {s:<16} {d}\n", .{ "Last chunk", bytes_le.le(u64, file, 16) });
    try out.print("  {s:<16} {d}\n", .{ "Next record ID", bytes_le.le(u64, file, 24) });
    try out.print(
        "  {s:<16} {d} (the file has room for {d})\n",
        .{ "Chunk count", bytes_le.le(u16, file, 42), body / chunk.size },
    );
    try out.print(
        "  {s:<16} {d} (block {d})\n",
        .{ "Header size", bytes_le.le(u32, file, 32), bytes_le.le(u16, file, 40) },
    );
    if (body % chunk.size > 0) try out.print(
        "  {s:<16} {d}, after the last chunk\n",
        .{ "Trailing bytes", body % chunk.size },
    );
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
const unreadable_prefix = "unreadable: Failed to parse chunk header: Invalid EVTX chunk " ++
    "header magic, expected `ElfChnk0`, found `";

/// The row of slot `slot`, whose bytes are `got` (a whole slot, or shorter when the file
/// shrank since it was opened).
fn chunkRow(got: []const u8, slot: usize, row: *Row, totals: *Totals) void {
    row.note = null;
    row.cells[0].set("{d}", .{slot});
    row.cells[1].set("0x{x:0>8}", .{file_header.chunkOffset(slot)});
    row.cells[2].len = 0;
    if (got.len < chunk.size) {
        // The slot is gone (our words, as the dump's).
        row.cells[2].set("{d} bytes missing", .{chunk.size - got.len});
        row.note = "unreadable: incomplete chunk: ";
        return;
    }
    const bytes: *const [chunk.size]u8 = got[0..chunk.size];
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
    const flags = bytes_le.le(u32, bytes, 120);
    const no_crc = flags & chunk.flag_no_crc32 != 0;
    const header_ok = no_crc or bytes_le.le(u32, bytes, 124) == chunk.headerChecksum(bytes);
    const free_space = bytes_le.le(u32, bytes, 48);
    const records_ok = no_crc or (free_space >= chunk.header_size and free_space <= chunk.size and
        bytes_le.le(u32, bytes, 52) == crc32.hash(bytes[chunk.header_size..free_space]));
    if (!header_ok or !records_ok) totals.failing += 1;
    const first = bytes_le.le(u64, bytes, 8);
    const last = bytes_le.le(u64, bytes, 16);
    if (last >= first) totals.records +%= std.math.add(
        u64,
        last - first,
        1,
    ) catch std.math.maxInt(u64);
    row.cells[2].set("{d}-{d}", .{ first, last });
    row.cells[3].set("{d}-{d}", .{ bytes_le.le(u64, bytes, 24), bytes_le.le(u64, bytes, 32) });
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

/// One row, columns left-aligned two spaces apart, trailing spaces trimmed; a note row has
/// its number and offset, then the note.
fn writeRow(row: *const Row, widths: *const [columns.len]usize, out: *Writer) Writer.Error!void {
    if (row.note) |note| {
        try pad(out, row.cells[0].text(), widths[0]);
        try out.writeAll("  ");
        try pad(out, row.cells[1].text(), widths[1]);
        try out.writeAll("  ");
        try out.writeAll(note);
        try out.writeAll(row.cells[2].text());
        return out.writeAll("\n");
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

/// The `n` lines of `text`, each ending with a newline; split at compile time (a file with
/// another number of lines fails the build).
fn lines(comptime n: usize, comptime text: []const u8) [n][]const u8 {
    var out: [n][]const u8 = undefined;
    var count: usize = 0;
    var rest = text;
    while (rest.len > 0) : (count += 1) {
        const end = std.mem.indexOfScalar(u8, rest, '\n') orelse
            @compileError("the last line has no newline");
        if (count == n) @compileError("more lines than expected");
        out[count] = rest[0..end];
        rest = rest[end + 1 ..];
    }
    if (count != n) @compileError("fewer lines than expected");
    return out;
}

/// `text`, then spaces up to `width` (none when it is wider: a row is never cut).
fn pad(out: *Writer, text: []const u8, width: usize) Writer.Error!void {
    try out.writeAll(text);
    try out.splatByteAll(' ', width -| text.len);
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

test "info: the column titles are the reference's, in its order" {
    const unit_test_options = @import("unit_test_options");
    const gpa = std.testing.allocator;
    const run = try std.process.Child.run(.{ .allocator = gpa, .argv = &.{
        unit_test_options.reference,
        "info",
        "-i",
        unit_test_options.fixtures ++ "/synthetic/basic.evtx",
    } });
    defer gpa.free(run.stdout);
    defer gpa.free(run.stderr);
    try std.testing.expectEqual(std.process.Child.Term{ .Exited = 0 }, run.term);
    // The chunk table's title line follows the header block's blank line.
    const table = run.stdout[(std.mem.indexOf(u8, run.stdout, "\n\n") orelse
        return error.TestUnexpectedResult) + 2 ..];
    const header = table[0 .. std.mem.indexOfScalar(u8, table, '\n') orelse table.len];
    // Titles are two spaces apart at least; a title holds single spaces.
    var titles = std.mem.tokenizeSequence(u8, header, "  ");
    for (columns) |want| {
        const got = titles.next() orelse return error.TestUnexpectedResult;
        try std.testing.expectEqualStrings(want, std.mem.trim(u8, got, " "));
    }
    try std.testing.expectEqual(null, titles.next());
}

test "info: header-only file, short and foreign files" {
    var file = [_]u8{0} ** (file_header.block_size + 10);
    var buf: [2048]u8 = undefined;
    var w: Writer = .fixed(&buf);
    const window = try std.testing.allocator.create(input.ChunkSlot);
    defer std.testing.allocator.destroy(window);
    try std.testing.expectError(error.BadFileMagic, write(&Input.fromBytes(&file), window, &w));
    try std.testing.expectError(
        error.FileTooShort,
        write(&Input.fromBytes(file[0..100]), window, &w),
    );
    @memcpy(file[0..8], file_header.magic);
    try write(&Input.fromBytes(&file), window, &w);
    const text = w.buffered();
    try std.testing.expect(std.mem.startsWith(u8, text, "File header\n  Version          0.0\n"));
    try std.testing.expect(
        std.mem.indexOf(u8, text, "  Trailing bytes   10, after the last chunk\n") != null,
    );
    try std.testing.expect(
        std.mem.endsWith(
            u8,
            text,
            "\n0 chunks: 0 with records, 0 empty, 0 unreadable. 0 records by the chunk " ++
                "headers. 0 chunks fail a CRC32 check.\n",
        ),
    );
}

test "info: columns are as wide as their widest cell, read slot by slot" {
    const gpa = std.testing.allocator;
    // Slot 0 empty, slot 1 a chunk header with long record numbers, slot 2 not a chunk.
    const file = try gpa.alloc(u8, file_header.block_size + 3 * chunk.size);
    defer gpa.free(file);
    @memset(file, 0);
    @memcpy(file[0..8], file_header.magic);
    const c1 = file_header.chunkOffset(1);
    @memcpy(file[c1..][0..8], "ElfChnk\x00");
    std.mem.writeInt(u64, file[c1 + 8 ..][0..8], 1, .little);
    std.mem.writeInt(u64, file[c1 + 16 ..][0..8], 123_456_789_012_345, .little);
    std.mem.writeInt(u32, file[c1 + 120 ..][0..4], 0x5, .little);
    file[file_header.chunkOffset(2)] = 7;
    const window = try gpa.create(input.ChunkSlot);
    defer gpa.destroy(window);
    var buf: [4096]u8 = undefined;
    var w: Writer = .fixed(&buf);
    try write(&Input.fromBytes(file), window, &w);
    const text = w.buffered();
    const table_start = std.mem.indexOf(
        u8,
        text,
        "\n\nChunk",
    ) orelse return error.TestUnexpectedResult;
    const table_end = std.mem.lastIndexOf(u8, text, "\n\n").?;
    try std.testing.expectEqualStrings(
        \\Chunk  Offset      Record numbers     Record IDs  Flags             Header CRC32
    ++
        \\  Records CRC32
        \\0      0x00001000  empty
        \\1      0x00011000  1-123456789012345  0-0         DIRTY | NO_CRC32  none          none
        \\2      0x00021000  unreadable: Failed to parse chunk header: Invalid EVTX chunk header
    ++
        \\ magic, expected `ElfChnk0`, found `[ 7,  0,  0,  0,  0,  0,  0,  0]`
    , text[table_start + 2 .. table_end]);
}
