//! `evtx-zig dump-template-instances`: each record's N-th top-level template instance as one
//! JSON line (its substitution values' texts), as `evtx_dump` 0.15.1 prints them
//! (`shared-fixtures/generator/wevt-format.md`; Rust's mirror: `rust/cli/src/wevt.rs`).
//! Records are read as the dump reads them with an empty `--mta` (the tree path, which reads
//! every value of a record, used or not, as the reference's record iterator does).
const std = @import("std");
const evtx = @import("evtx");
const open_input = @import("open_input.zig");
const Input = open_input.Input;
const assert = std.debug.assert;
const T = evtx.values_decode.T;
const Out = evtx.escape.Out;
const arg_parser = @import("args.zig");
const commands = @import("commands.zig");

pub const Options = struct {
    input: []const u8 = "",
    record_id: ?u64 = null,
    template_instance_index: u64 = 0,
};

/// The options out of the parsed command line (`commands.dump_template_instances`).
pub fn optionsOf(m: *const arg_parser.Matches) Options {
    const c = &commands.dump_template_instances;
    assert(m.command == c);
    return .{
        .input = m.text(c.id("input")).?,
        .record_id = m.number(c.id("record-id")),
        .template_instance_index = m.number(c.id("template-instance-index")) orelse 0,
    };
}

/// Where the lines go.
pub const Report = struct {
    stdout: *std.Io.Writer,
    stderr: *std.Io.Writer,
};

/// Runs the command; returns the exit status (0, or 1 after `Error: ...`).
pub fn run(gpa: std.mem.Allocator, options: *const Options, report: Report) u8 {
    const status = runOrFail(gpa, options, report) catch fail(report, "out of memory", .{});
    report.stdout.flush() catch {};
    report.stderr.flush() catch {};
    return status;
}

fn fail(report: Report, comptime fmt: []const u8, args: anytype) u8 {
    report.stdout.flush() catch {};
    report.stderr.print("Error: " ++ fmt ++ "\n", args) catch {};
    report.stderr.flush() catch {};
    return 1;
}

fn runOrFail(gpa: std.mem.Allocator, options: *const Options, report: Report) !u8 {
    var failure: [2 * std.fs.max_path_bytes + 1024]u8 = undefined;
    var failure_writer: std.Io.Writer = .fixed(&failure);
    const in = open_input.openPath(options.input, null, &failure_writer) catch
        return fail(report, "{s}", .{failure_writer.buffered()});
    defer in.source.file.close();
    var mta_file: evtx.mta.MtaFile = .{ .arena = std.heap.ArenaAllocator.init(gpa) };
    defer mta_file.deinit();
    // JSON, as Rust's mirror asks: the reference's iterator builds each record's tree but
    // renders nothing, so the XML writer's own failures (`damaged/invalid-binxml` records 31
    // and 33: PI data without a target, a BinXml value in an attribute) are not its failures.
    var settings: evtx.options.Options = .{ .format = .jsonl };
    settings.mta = &mta_file;
    var evtx_file = evtx.dump.EvtxFile.open(gpa, in, &settings) catch |e| switch (e) {
        error.OutOfMemory => return error.OutOfMemory,
        error.FileTooShort, error.BadFileMagic => |header_error| {
            return openError(report, options.input, &in, header_error);
        },
    };
    defer evtx_file.deinit(gpa);
    var sink: Sink = .{
        .gpa = gpa,
        .options = options,
        .report = report,
        .in = &evtx_file.input,
        .codec = settings.ansi_codec,
    };
    defer sink.text.deinit();
    sink.text = Out.init(gpa);
    evtx.pipeline.run(gpa, &evtx_file.input, evtx_file.order, &settings, 1, .{
        .context = &sink,
        .consume = Sink.consume,
    }) catch |e| switch (e) {
        error.Stop => {},
        error.OutOfMemory => return error.OutOfMemory,
        else => {},
    };
    return 0;
}

/// The reference's words when the file header cannot be read (its `Caused by:` chain).
fn openError(report: Report, path: []const u8, in: *const Input, e: evtx.file_header.Error) u8 {
    report.stdout.flush() catch {};
    report.stderr.writeAll("Error: ") catch {};
    open_input.writeHeaderRefused(report.stderr, .{ .path = path }, in, e) catch {};
    report.stderr.writeAll("\n") catch {};
    report.stderr.flush() catch {};
    return 1;
}

/// Consumes chunk results in order and prints the selected instances.
const Sink = struct {
    gpa: std.mem.Allocator,
    options: *const Options,
    report: Report,
    in: *const evtx.input.Input,
    codec: evtx.values_format.Codec,
    window: evtx.input.ChunkSlot = .{},
    padded: [evtx.file_header.chunk_size]u8 = undefined,
    text: Out = undefined,

    fn consume(context: *anyopaque, result: *const evtx.dump.ChunkResult) anyerror!void {
        const s: *Sink = @ptrCast(@alignCast(context));
        const chunk_offset = evtx.file_header.chunkOffset(result.slot);
        const bytes: []const u8 = s.in.chunk(result.slot, &s.window) orelse blk: {
            @memset(&s.padded, 0);
            const got = s.in.read(chunk_offset, &s.padded);
            if (got.ptr != @as([*]const u8, &s.padded)) @memcpy(s.padded[0..got.len], got);
            break :blk &s.padded;
        };
        for (result.entries.items) |*r| {
            switch (r.outcome) {
                .failed => |f| if (!f.isOutputLimit()) {
                    // A trailing partial slot is ours alone: the reference's walk ends before it.
                    if (!(result.partial and r.record_id == null))
                        try failureLine(s.report.stderr, chunk_offset, r, f.kind);
                    continue;
                },
                .rendered => {},
            }
            const id = r.record_id orelse continue;
            const rec: usize = @intCast(r.file_offset - chunk_offset);
            if (hasUnreadableValue(bytes, rec)) {
                try s.report.stderr.print("Failed to parse record number {d}\n", .{id});
                continue;
            }
            if (s.options.record_id) |want| if (want != id) continue;
            // A record without the selected instance prints nothing, and the search goes on.
            if (!try s.printInstance(bytes, rec, id, r.filetime)) continue;
            if (s.options.record_id != null) return error.Stop;
        }
    }

    /// The selected instance of record `rec` as one line, when the record has it.
    fn printInstance(s: *Sink, chunk: []const u8, rec: usize, id: u64, filetime: u64) !bool {
        const inst = findInstance(chunk, rec, s.options.template_instance_index) orelse
            return false;
        const w = s.report.stdout;
        try w.writeAll("{\"source\":");
        try writeJsonString(w, s.options.input);
        try w.print(",\"record_id\":{d},\"timestamp\":\"", .{id});
        s.text.list.clearRetainingCapacity();
        try evtx.values_format.writeFiletime(&s.text, filetime);
        try writeTimestamp(w, s.text.list.items);
        try w.print("\",\"template_instance_index\":{d},\"template_id\":{d}," ++
            "\"template_def_offset\":{d},\"template_guid\":", .{
            s.options.template_instance_index,
            inst.template_id,
            inst.def_offset,
        });
        if (inst.guid) |g| {
            try w.writeByte('"');
            try writeGuidUpper(w, g);
            try w.writeByte('"');
        } else try w.writeAll("null");
        try w.writeAll(",\"substitutions\":[");
        var p = inst.values;
        for (0..inst.count) |i| {
            const size = std.mem.readInt(u16, chunk[inst.table + 4 * i ..][0..2], .little);
            const vtype = chunk[inst.table + 4 * i + 2];
            if (i > 0) try w.writeByte(',');
            s.text.list.clearRetainingCapacity();
            try s.valueText(chunk, @intCast(p), size, vtype);
            try writeJsonString(w, s.text.list.items);
            p = valueEnd(chunk, p, size, vtype);
        }
        try w.writeAll("]}\n");
        return true;
    }

    /// A value's text as the reference's `Display` gives it (its JSON value text).
    fn valueText(s: *Sink, chunk: []const u8, pos: u32, size: u16, vtype: u8) !void {
        // `.cut`, not the dump's `.declared`: the text is the same (the writer stops at the first
        // NUL either way), and a second caller of the `.declared` instance made LLVM stop inlining
        // it into the dump's hot `Programs.scanInstance`, +8.5 % instructions per record (H24).
        const decoded = evtx.values_decode.decodeSized(chunk, pos, size, vtype, .cut) catch
            return;
        const format: evtx.values_format.Format = .{ .chunk = chunk, .ansi = s.codec };
        evtx.values_format.writeValue(&s.text, format, decoded.value, .json) catch |e| switch (e) {
            error.OutOfMemory => return error.OutOfMemory,
            else => {},
        };
    }
};

/// The reference's one-line error for a failed record or chunk (its iterators' texts).
pub fn failureLine(
    w: *std.Io.Writer,
    chunk_offset: u64,
    r: *const evtx.dump.RecordResult,
    kind: evtx.errors.ErrorKind,
) !void {
    switch (kind) {
        .bad_string_table => try w.writeAll("Failed to build string cache\n"),
        .incomplete_chunk,
        .bad_chunk_magic,
        .bad_chunk_header_checksum,
        .bad_chunk_free_space_offset,
        .bad_chunk_records_checksum,
        => try w.print("Failed to parse chunk number {d}\n", .{r.slot}),
        else => if (kind == .bad_binxml and r.record_id != null) {
            try w.print("Failed to parse record number {d}\n", .{r.record_id.?});
        } else {
            try w.print(
                "Failed to read the record at offset 0x{x} of chunk {d} (file offset 0x{x})\n",
                .{ r.file_offset - chunk_offset, r.slot, r.file_offset },
            );
        },
    }
}

/// One top-level template instance of a record.
const Instance = struct {
    template_id: u32,
    def_offset: u32,
    /// The inline definition's GUID (null when the definition is elsewhere).
    guid: ?*const [16]u8,
    /// Chunk offset of the descriptors, their count, and the first value.
    table: usize,
    count: usize,
    values: usize,

    /// The offset after the last value, or null when a descriptor has an unknown type (the
    /// reference's reader fails there).
    fn end(inst: *const Instance, chunk: []const u8) ?usize {
        var p = inst.values;
        for (0..inst.count) |i| {
            const d = chunk[inst.table + 4 * i ..][0..4];
            if (!evtx.values_decode.isKnownType(d[2])) return null;
            p = valueEnd(chunk, p, std.mem.readInt(u16, d[0..2], .little), d[2]);
        }
        return p;
    }
};

/// The `index`-th instance of the record stream at `rec`, walking its BinXML window as the
/// reference's `template_instances` does: every token of the stream is stepped over, so an
/// instance inside an element tree counts (`synthetic/nested` record 5).
fn findInstance(chunk: []const u8, rec: usize, index: u64) ?Instance {
    const size = getU32(chunk, rec + 4) orelse return null;
    const end = @min((rec + size) -| 4, chunk.len);
    var pos = rec + 24;
    var seen: u64 = 0;
    while (pos < end) {
        switch (chunk[pos]) {
            0x00 => break,
            0x0F => pos += 4,
            0x0C => {
                const inst = readInstance(chunk, pos + 1) orelse return null;
                if (seen == index) return inst;
                seen += 1;
                pos = inst.end(chunk) orelse return null;
            },
            else => |t| pos = skipToken(chunk, pos, t) orelse break,
        }
    }
    return null;
}

/// The offset after the record-stream token `t` at `pos` (not a template instance, EOF or
/// fragment header), or null for a token this walk does not step over.
fn skipToken(chunk: []const u8, pos: usize, t: u8) ?usize {
    return switch (t) {
        0x01 => skipName(chunk, pos + 5),
        0x41 => (skipName(chunk, pos + 5) orelse return null) + 4,
        0x02...0x04 => pos + 1,
        0x05, 0x45 => if (pos + 1 < chunk.len and chunk[pos + 1] == 0x01)
            skipUnits(chunk, pos + 2)
        else
            null,
        0x06, 0x46, 0x09, 0x49, 0x0A => skipName(chunk, pos + 1),
        0x07, 0x47, 0x0B => skipUnits(chunk, pos + 1),
        0x08, 0x48 => pos + 3,
        else => null,
    };
}

/// After a name reference (u32 chunk offset) at `at`: the name too when it is inline (it
/// points just after the reference).
fn skipName(chunk: []const u8, at: usize) ?usize {
    const off: usize = getU32(chunk, at) orelse return null;
    if (off != at + 4) return at + 4;
    if (off + 8 > chunk.len) return null;
    const count = std.mem.readInt(u16, chunk[off + 6 ..][0..2], .little);
    return off + 10 + 2 * @as(usize, count);
}

/// After a count (u16) of UTF-16 units and the units.
fn skipUnits(chunk: []const u8, at: usize) ?usize {
    if (at + 2 > chunk.len) return null;
    return at + 2 + 2 * @as(usize, std.mem.readInt(u16, chunk[at..][0..2], .little));
}

/// The instance whose header starts at `at` (just after 0x0C), when it lies in the chunk.
fn readInstance(chunk: []const u8, at: usize) ?Instance {
    const template_id = getU32(chunk, at + 1) orelse return null;
    const def = getU32(chunk, at + 5) orelse return null;
    var p = at + 9;
    var guid: ?*const [16]u8 = null;
    if (p == def) {
        const data = getU32(chunk, p + 20) orelse return null;
        guid = chunk[at + 13 ..][0..16];
        p += 24 + @as(usize, data);
    }
    const n = getU32(chunk, p) orelse return null;
    const table = p + 4;
    if (n > (chunk.len -| table) / 4) return null;
    return .{
        .template_id = template_id,
        .def_offset = def,
        .guid = guid,
        .table = table,
        .count = n,
        .values = table + 4 * @as(usize, n),
    };
}

/// Value types the reference's record iterator cannot read (EvtHandle, EvtXml, Binary and
/// SizeT arrays, and the arrays of the first two): a record holding one fails there, though
/// the dump renders it under our rule (`shared-fixtures/README.md`).
const unreadable_types = [_]u8{ 0x20, 0x23, 0x8E, 0x90, 0xA0, 0xA3 };

/// How deep `firstUnreadable` follows nested instances.
const scan_depth_max = 8;

/// A value the reference's record iterator cannot read: where its bytes start in the chunk, its
/// type, and its declared size (null for a value text).
pub const Unreadable = struct {
    offset: usize,
    vtype: u8,
    size: ?u16,

    /// Writes the reference's cause, when it names the type (0xA0 and 0xA3 are not types to
    /// it); whether it did.
    pub fn writeCause(u: *const Unreadable, w: *std.Io.Writer) std.Io.Writer.Error!bool {
        const name = switch (u.vtype) {
            0x20 => "EvtHandle",
            0x23 => "EvtXmlType",
            0x8E => "BinaryArrayType",
            0x90 => "SizeTArrayType",
            else => return false,
        };
        try w.print("0: An error occurred while trying to deserialize evtx stream.\n    " ++
            "1: Offset {d}: Value variant `{s}` (size ", .{ u.offset, name });
        if (u.size) |size| try w.print("Some({d})", .{size}) else try w.writeAll("None");
        try w.writeAll(") is unimplemented");
        return true;
    }
};

/// Whether record `rec` has a value of an unreadable type (`firstUnreadable`).
pub fn hasUnreadableValue(chunk: []const u8, rec: usize) bool {
    return firstUnreadable(chunk, rec) != null;
}

/// The first value of record `rec` of an unreadable type: in a template instance of its stream
/// (and those that are a whole BinXML value of one, as deep as `scan_depth_max`) or as a value
/// text of the stream itself (`damaged/unsupported-types` record 8).
pub fn firstUnreadable(chunk: []const u8, rec: usize) ?Unreadable {
    const size = getU32(chunk, rec + 4) orelse return null;
    const end = @min((rec + size) -| 4, chunk.len);
    var pos = rec + 24;
    while (pos < end) {
        switch (chunk[pos]) {
            0x00 => break,
            0x0F => pos += 4,
            0x0C => {
                if (instanceUnreadable(chunk, pos + 1, 0)) |found| return found;
                const inst = readInstance(chunk, pos + 1) orelse break;
                pos = inst.end(chunk) orelse break;
            },
            0x05, 0x45 => |t| {
                const vtype = if (pos + 1 < chunk.len) chunk[pos + 1] else break;
                if (std.mem.indexOfScalar(u8, &unreadable_types, vtype) != null)
                    return .{ .offset = pos + 2, .vtype = vtype, .size = null };
                pos = skipToken(chunk, pos, t) orelse break;
            },
            else => |t| pos = skipToken(chunk, pos, t) orelse break,
        }
    }
    return null;
}

fn instanceUnreadable(chunk: []const u8, at: usize, depth: usize) ?Unreadable {
    assert(depth <= scan_depth_max);
    const inst = readInstance(chunk, at) orelse return null;
    var value = inst.values;
    for (0..inst.count) |i| {
        const d = chunk[inst.table + 4 * i ..][0..4];
        const size = std.mem.readInt(u16, d[0..2], .little);
        if (std.mem.indexOfScalar(u8, &unreadable_types, d[2]) != null)
            return .{ .offset = value, .vtype = d[2], .size = size };
        if (d[2] == T.binxml and size > 0 and depth < scan_depth_max) {
            var q = value;
            if (q < chunk.len and chunk[q] == 0x0F) q += 4;
            if (q < chunk.len and chunk[q] == 0x0C) {
                if (instanceUnreadable(chunk, q + 1, depth + 1)) |found| return found;
            }
        }
        value += size;
    }
    return null;
}

/// How far a value of type `vtype` declared `size` bytes reaches: a fixed-width scalar (not
/// Boolean) always takes its width, as the reference's reader reads it (`synthetic/empty-null`
/// record 4: a UInt32 declared 3 bytes).
fn advance(vtype: u8, size: u16) usize {
    const width: usize = switch (vtype) {
        T.int8, T.uint8 => 1,
        T.int16, T.uint16 => 2,
        T.int32, T.uint32, T.real32, T.hex32 => 4,
        T.int64, T.uint64, T.real64, T.filetime, T.hex64 => 8,
        T.guid, T.systime => 16,
        else => 0,
    };
    return @max(width, size);
}

/// Where the value at `p` ends as the reference's reader reads it: past its declared size, its
/// fixed width, and what its decoder read (a string array past its declared size,
/// `synthetic/empty-null` record 5).
fn valueEnd(chunk: []const u8, p: usize, size: u16, vtype: u8) usize {
    const fixed = p + advance(vtype, size);
    const pos = std.math.cast(u32, p) orelse return fixed;
    const decoded = evtx.values_decode.decodeSized(chunk, pos, size, vtype, .cut) catch
        return fixed;
    return @max(fixed, decoded.end);
}

fn getU32(b: []const u8, at: usize) ?u32 {
    if (at > b.len or b.len - at < 4) return null;
    return std.mem.readInt(u32, b[at..][0..4], .little);
}

/// A record timestamp as the reference displays it: the fraction without trailing zeros (none
/// when zero).
fn writeTimestamp(w: *std.Io.Writer, text: []const u8) !void {
    const dot = std.mem.indexOfScalar(u8, text, '.') orelse return w.writeAll(text);
    assert(text.len > dot + 1 and text[text.len - 1] == 'Z');
    const digits = std.mem.trimRight(u8, text[dot + 1 .. text.len - 1], "0");
    try w.writeAll(text[0..dot]);
    if (digits.len > 0) {
        try w.writeByte('.');
        try w.writeAll(digits);
    }
    try w.writeByte('Z');
}

/// A GUID as the reference's `Guid` displays it: upper case, no braces.
fn writeGuidUpper(w: *std.Io.Writer, g: *const [16]u8) !void {
    try w.print("{X:0>8}-{X:0>4}-{X:0>4}-", .{
        std.mem.readInt(u32, g[0..4], .little),
        std.mem.readInt(u16, g[4..6], .little),
        std.mem.readInt(u16, g[6..8], .little),
    });
    for (g[8..10]) |b| try w.print("{X:0>2}", .{b});
    try w.writeByte('-');
    for (g[10..16]) |b| try w.print("{X:0>2}", .{b});
}

/// `text` as serde_json writes a string.
fn writeJsonString(w: *std.Io.Writer, text: []const u8) !void {
    try w.writeByte('"');
    for (text) |c| switch (c) {
        '"' => try w.writeAll("\\\""),
        '\\' => try w.writeAll("\\\\"),
        '\n' => try w.writeAll("\\n"),
        '\r' => try w.writeAll("\\r"),
        '\t' => try w.writeAll("\\t"),
        0x08 => try w.writeAll("\\b"),
        0x0C => try w.writeAll("\\f"),
        0...0x07, 0x0B, 0x0E...0x1F => try w.print("\\u{x:0>4}", .{c}),
        else => try w.writeByte(c),
    };
    try w.writeByte('"');
}

test "record 1 of instances.evtx: its instance as the reference lists it" {
    const gpa = std.testing.allocator;
    var dir = try std.fs.cwd().openDir(@import("unit_test_options").fixtures, .{});
    defer dir.close();
    const bytes = try dir.readFileAlloc(gpa, "wevt/instances.evtx", 1 << 20);
    defer gpa.free(bytes);
    const chunk = bytes[evtx.file_header.block_size..][0..evtx.file_header.chunk_size];
    const rec = 512; // The first record of the first chunk.
    try std.testing.expect(!hasUnreadableValue(chunk, rec));
    const inst = findInstance(chunk, rec, 0).?;
    // The reference: "template_id":1596729923,"template_def_offset":550, 11 substitutions.
    try std.testing.expectEqual(@as(u32, 1596729923), inst.template_id);
    try std.testing.expectEqual(@as(u32, 550), inst.def_offset);
    try std.testing.expectEqual(@as(usize, 11), inst.count);
    try std.testing.expect(findInstance(chunk, rec, 1) == null);
    var text: [128]u8 = undefined;
    var w: std.Io.Writer = .fixed(&text);
    try writeGuidUpper(&w, inst.guid.?);
    try std.testing.expectEqualStrings("5F2C2A43-AA86-2481-02F3-ECE817383695", w.buffered());
    w = .fixed(&text);
    try writeTimestamp(&w, "2024-03-01T08:00:01.0000000Z");
    try writeJsonString(&w, "a\"\\\t\x01");
    try std.testing.expectEqualStrings(
        "2024-03-01T08:00:01Z\"a\\\"\\\\\\t\\u0001\"",
        w.buffered(),
    );
}

test "unsupported-types: the reference's causes of records 2 and 8" {
    const gpa = std.testing.allocator;
    var dir = try std.fs.cwd().openDir(@import("unit_test_options").fixtures, .{});
    defer dir.close();
    const bytes = try dir.readFileAlloc(gpa, "damaged/unsupported-types.evtx", 1 << 20);
    defer gpa.free(bytes);
    const chunk = bytes[evtx.file_header.block_size..][0..evtx.file_header.chunk_size];
    try std.testing.expect(firstUnreadable(chunk, 512) == null);
    var text: [256]u8 = undefined;
    var w: std.Io.Writer = .fixed(&text);
    // Record 2 at chunk offset 794: an EvtHandle of 4 bytes (the reference's text).
    try std.testing.expect(try firstUnreadable(chunk, 794).?.writeCause(&w));
    try std.testing.expectEqualStrings(
        "0: An error occurred while trying to deserialize evtx stream.\n    " ++
            "1: Offset 1073: Value variant `EvtHandle` (size Some(4)) is unimplemented",
        w.buffered(),
    );
    // Record 8 at 2185: an EvtXml value text, no size.
    w = .fixed(&text);
    try std.testing.expect(try firstUnreadable(chunk, 2185).?.writeCause(&w));
    try std.testing.expect(std.mem.endsWith(
        u8,
        w.buffered(),
        "1: Offset 2249: Value variant `EvtXmlType` (size None) is unimplemented",
    ));
}
