//! A log's records as the reference's record iterator reads them, and their template instances:
//! what `dump-template-instances` lists and `apply-wevt-cache --evtx` takes its values from
//! (`shared-fixtures/generator/wevt-format.md`). The CLIs parse arguments and print; the walk of
//! the records' BinXML, the reference's words for a record it fails on and the values' texts
//! are here.
//!
//! The twin of `rust/evtx-core/src/template_instances.rs`, name for name (`read_records` ↔
//! `readRecords`, `raw_values` ↔ `rawValues`):
//!
//! - `readRecords(gpa, log, visitor)` reads the log in file order and hands the visitor one
//!   `Step` per record or chunk the reference's iterator meets, until it answers `.stop`.
//!   Records are read as the dump reads them in JSON with an empty `--mta` (the tree path:
//!   every value of a record is read, used or not, as the reference's iterator does; it builds
//!   each tree but renders nothing, so the XML writer's own failures are not its failures).
//! - `Step.failed` (`line`, `cause`): a chunk or record the reference's iterator fails on: its
//!   one line (what `dump-template-instances` prints before it goes on) and, where the bytes
//!   tell it, the text below `Caused by:` (`apply-wevt-cache` ends with both). A record holding
//!   a value the reference's reader cannot read (an EvtHandle, EvtXml, Binary or SizeT array
//!   and the arrays of the first two: we render those, `shared-fixtures/README.md`) is one too:
//!   `Failed to parse record number N`, and the reference's `Value variant ... is
//!   unimplemented` where it names the type.
//! - `Step.record` (a `Record`): a record it reads: `id`, `filetime` (its header's), `chunk`
//!   (its chunk's bytes) and `offset` (its header's, in `chunk`). A record refused only for
//!   its output size is one (the reference renders nothing); the error of a trailing partial
//!   chunk is no step (the reference's walk ends before it).
//! - `Record.instances(arena)`: every top-level template instance of the record's stream, in
//!   order, as `Instance`s, the reference's `template_instances` walk: end of stream ends it,
//!   fragment headers are stepped over, so is every token of an element tree around instances
//!   (an instance inside one counts); an error when an instance's values do not read (never
//!   for a record the dump read: its instances were read the same way).
//! - `Instance`: `template_id`, `def_offset`, `guid` (the inline definition's, null when the
//!   definition is elsewhere) and `values`: each value's text as the reference's `Display`
//!   gives it, its JSON text unquoted (nothing for NULL and BinXML).
//! - `Record.rawValues(arena, index)`: the values of the `index`-th top-level instance as
//!   `apply-wevt-cache` splices them, each its type and declared bytes (BinXML, EvtHandle and
//!   EvtXml values become NULL); null when the record has fewer. This walk steps over fragment
//!   headers and instances only (any other token ends it), as the reference's does.
//!
//! The texts a visitor gets (`Step.failed`) live until it returns; everything `instances` and
//! `rawValues` return is allocated from the arena the caller passes.
const std = @import("std");
const assert = std.debug.assert;
const Allocator = std.mem.Allocator;
const bytes_le = @import("bytes.zig");
const dump = @import("dump.zig");
const errors = @import("error.zig");
const escape = @import("escape.zig");
const file_header = @import("file_header.zig");
const input = @import("input.zig");
const limits = @import("limits.zig");
const mta = @import("mta.zig");
const options = @import("options.zig");
const pipeline = @import("pipeline.zig");
const template = @import("template.zig");
const tokens = @import("tokens.zig");
const values_decode = @import("values_decode.zig");
const values_format = @import("values_format.zig");
const wevt_cache = @import("wevt_cache.zig");
const T = values_decode.T;
const RawValue = wevt_cache.RawValue;

/// What the reference's record iterator meets next (`readRecords`).
pub const Step = union(enum) {
    /// A chunk or record it fails on: the one line, and the cause below it where the bytes
    /// tell it.
    failed: struct { line: []const u8, cause: ?[]const u8 },
    /// A record it reads.
    record: Record,
};

/// Whether `readRecords` goes on after a step (the Rust engine's `ControlFlow`).
pub const Flow = enum { next, stop };

/// What a visitor may fail with; the failure ends `readRecords` with it.
pub const VisitError = error{ OutOfMemory, WriteFailed };

/// Receives the steps of `readRecords` in file order.
pub const Visitor = struct {
    context: *anyopaque,
    visit: *const fn (context: *anyopaque, step: *const Step) VisitError!Flow,
};

/// Reads the log `log` as the reference's record iterator does, in file order, handing each
/// chunk's and record's `Step` to `visitor` until it answers `.stop`.
pub fn readRecords(gpa: Allocator, log: *const dump.EvtxFile, visitor: Visitor) VisitError!void {
    // The reference's iterator reads every value of a record, used or not, as the dump does
    // with `--mta` (the tree path): an empty `.MTA` takes that path and adds no rendering
    // information. JSON: the XML writer's own failures (`damaged/invalid-binxml` records 31
    // and 33: PI data without a target, a BinXml value in an attribute) are not its failures.
    var empty_mta: mta.MtaFile = .{ .arena = std.heap.ArenaAllocator.init(gpa) };
    defer empty_mta.deinit();
    var settings: options.Options = .{ .format = .jsonl };
    settings.mta = &empty_mta;
    // Two chunk windows: on the heap, not the stack.
    const reader = try gpa.create(Reader);
    defer gpa.destroy(reader);
    reader.log = log;
    reader.visitor = visitor;
    reader.text = .init(gpa);
    defer reader.text.deinit();
    const consumer: pipeline.Consumer = .{ .context = reader, .consume = Reader.consume };
    pipeline.run(gpa, &log.input, log.order, &settings, 1, consumer) catch |e| switch (e) {
        error.Stop => {},
        error.OutOfMemory => return error.OutOfMemory,
        error.WriteFailed => return error.WriteFailed,
        // One thread fails only as its renderer (out of memory) or `consume` does.
        else => unreachable,
    };
}

/// `readRecords`' state: the chunk's bytes read again for its records, and the texts of a
/// failed step.
const Reader = struct {
    log: *const dump.EvtxFile,
    visitor: Visitor,
    window: input.ChunkSlot,
    /// A chunk that reads short, zero-padded to its 64 KiB.
    padded: [file_header.chunk_size]u8,
    text: std.Io.Writer.Allocating,

    fn consume(context: *anyopaque, result: *const dump.ChunkResult) anyerror!void {
        const r: *Reader = @ptrCast(@alignCast(context));
        const chunk = r.chunkBytes(result.slot);
        for (result.entries.items) |*entry| {
            const met = try r.step(chunk, result, entry) orelse continue;
            if (try r.visitor.visit(r.visitor.context, &met) == .stop) return error.Stop;
        }
    }

    /// The 64 KiB of chunk slot `slot`, zero-padded where the file ends inside it.
    fn chunkBytes(r: *Reader, slot: u32) []const u8 {
        const in = &r.log.input;
        if (in.chunk(slot, &r.window)) |bytes| return bytes;
        @memset(&r.padded, 0);
        const got = in.read(file_header.chunkOffset(slot), &r.padded);
        if (got.ptr != @as([*]const u8, &r.padded)) @memcpy(r.padded[0..got.len], got);
        return &r.padded;
    }

    /// The step of `entry` of `result` (its chunk's bytes `chunk`), if the reference's
    /// iterator meets it.
    fn step(
        r: *Reader,
        chunk: []const u8,
        result: *const dump.ChunkResult,
        entry: *const dump.RecordResult,
    ) Allocator.Error!?Step {
        const chunk_offset = file_header.chunkOffset(result.slot);
        switch (entry.outcome) {
            .failed => |f| if (!f.isOutputLimit()) {
                // A trailing partial slot is ours alone: the reference's walk ends before it.
                if (result.partial and entry.record_id == null) return null;
                return try r.failed(chunk, chunk_offset, entry, &f);
            },
            .rendered => {},
        }
        const record: Record = .{
            .id = entry.record_id orelse return null,
            .filetime = entry.filetime,
            .chunk = chunk,
            .offset = @intCast(entry.file_offset - chunk_offset),
        };
        const value = firstUnreadable(&record) orelse return .{ .record = record };
        r.text.clearRetainingCapacity();
        const w = &r.text.writer;
        w.print("Failed to parse record number {d}", .{record.id}) catch return error.OutOfMemory;
        const line_end = w.end;
        const named = value.writeCause(w) catch return error.OutOfMemory;
        return r.texts(line_end, named);
    }

    /// The failed step of `entry` (failure `f`): its line and cause.
    fn failed(
        r: *Reader,
        chunk: []const u8,
        chunk_offset: u64,
        entry: *const dump.RecordResult,
        f: *const errors.Failure,
    ) Allocator.Error!Step {
        @branchHint(.cold);
        r.text.clearRetainingCapacity();
        const w = &r.text.writer;
        writeFailureLine(w, chunk_offset, entry, f.kind) catch return error.OutOfMemory;
        const line_end = w.end;
        const rec: usize = @intCast(entry.file_offset - chunk_offset);
        const told = writeFailureCause(w, chunk, rec, f) catch return error.OutOfMemory;
        return r.texts(line_end, told);
    }

    /// The failed step whose line is `text[0..line_end]`, its cause the rest when `caused`.
    fn texts(r: *Reader, line_end: usize, caused: bool) Step {
        const written = r.text.written();
        assert(line_end <= written.len);
        assert(caused or line_end == written.len);
        return .{ .failed = .{
            .line = written[0..line_end],
            .cause = if (caused) written[line_end..] else null,
        } };
    }
};

/// A record the reference's iterator reads (`Step.record`).
pub const Record = struct {
    id: u64,
    /// The header's FILETIME.
    filetime: u64,
    /// The record's chunk (zero-padded to 64 KiB in a trailing partial chunk).
    chunk: []const u8,
    /// Where the record's header starts in `chunk`.
    offset: usize,

    /// Chunk offsets of the record's BinXML stream (its window, cut at the chunk's end).
    fn stream(r: *const Record) ?struct { start: usize, end: usize } {
        const size = bytes_le.getU32(r.chunk, r.offset + 4) orelse return null;
        return .{ .start = r.offset + 24, .end = @min((r.offset + size) -| 4, r.chunk.len) };
    }

    /// Every top-level template instance of the record's stream, in order (the module doc),
    /// allocated from `arena`.
    pub fn instances(r: *const Record, arena: Allocator) tokens.Error![]const Instance {
        const chunk = r.chunk;
        const window = r.stream() orelse return error.OutOfBounds;
        var list: std.ArrayList(Instance) = .empty;
        var pos = window.start;
        while (pos < window.end) {
            switch (chunk[pos]) {
                0x00 => break,
                0x0F => pos += 4,
                0x0C => {
                    const read = try readInstance(arena, chunk, pos + 1);
                    try list.append(arena, read.instance);
                    pos = read.end;
                },
                // An element tree around instances (`synthetic/nested` record 5): its tokens
                // are stepped over; an instance anywhere in it is listed, as the reference's
                // walk does.
                else => |t| pos = skipToken(chunk, pos, t) orelse break,
            }
        }
        return list.items;
    }

    /// The values of the `index`-th top-level instance, as `apply-wevt-cache` splices them
    /// (the module doc), allocated from `arena`; null when the record has fewer.
    pub fn rawValues(r: *const Record, arena: Allocator, index: u64) Allocator.Error!?[]RawValue {
        const chunk = r.chunk;
        const window = r.stream() orelse return null;
        var pos = window.start;
        var seen: u64 = 0;
        while (pos < window.end) {
            switch (chunk[pos]) {
                0x0F => pos += 4,
                0x0C => {
                    var p: u32 = @intCast(pos + 1);
                    const head = template.instanceHead(chunk, &p) catch return null;
                    const values = try arena.alloc(RawValue, head.count);
                    for (values, 0..) |*v, i| {
                        const size = head.size(chunk, @intCast(i));
                        if (size > chunk.len - p) return null;
                        v.* = switch (head.vtype(chunk, @intCast(i))) {
                            T.null_type, T.evt_handle, T.binxml, T.evt_xml => .{
                                .type = T.null_type,
                                .bytes = "",
                            },
                            else => |t| .{ .type = t, .bytes = chunk[p..][0..size] },
                        };
                        p += size;
                    }
                    if (seen == index) return values;
                    seen += 1;
                    pos = p;
                },
                else => break,
            }
        }
        return null;
    }
};

/// One top-level template instance of a record: what `dump-template-instances` prints.
pub const Instance = struct {
    template_id: u32,
    def_offset: u32,
    /// The inline definition's GUID (null when the definition is elsewhere).
    guid: ?[16]u8,
    /// Each value's text, as the reference's `Display` gives it (its JSON text, unquoted).
    values: []const []const u8,
};

/// The instance whose header starts at `at` (just after its 0x0C byte), its values' texts
/// allocated from `arena`, and the chunk offset after its last value.
fn readInstance(
    arena: Allocator,
    chunk: []const u8,
    at: usize,
) tokens.Error!struct { instance: Instance, end: usize } {
    var pos: u32 = std.math.cast(u32, at) orelse return error.OutOfBounds;
    const head = try template.instanceHead(chunk, &pos);
    // All descriptors are checked before any value is read (6.4 step 1).
    try head.checkTypes(chunk, 0);
    const values = try arena.alloc([]const u8, head.count);
    for (values, 0..) |*text, i| {
        const value = try readValue(chunk, &head, @intCast(i), &pos);
        text.* = try valueText(arena, chunk, value);
    }
    // The inline definition's header follows the instance's (6.5).
    const inline_definition = at + 9 == head.definition;
    const instance: Instance = .{
        .template_id = bytes_le.leU32(chunk, at + 1),
        .def_offset = head.definition,
        .guid = if (inline_definition) chunk[at + 13 ..][0..16].* else null,
        .values = values,
    };
    return .{ .instance = instance, .end = pos };
}

/// Value `i` of the instance `head`, at `pos.*`, which moves past it as the reference's reader
/// reads it: past its declared size, a fixed-width scalar's width (`synthetic/empty-null`
/// record 4: a UInt32 declared 3 bytes) and what its decoder read (a string array past its
/// declared size, `synthetic/empty-null` record 5).
fn readValue(
    chunk: []const u8,
    head: *const template.InstanceHead,
    i: u32,
    pos: *u32,
) tokens.Error!values_decode.Value {
    const size = head.size(chunk, i);
    const start = pos.*;
    // `.cut`, not the dump's `.declared`: the text is the same (the writer stops at the first
    // NUL either way), and a second caller of the `.declared` instance made LLVM stop inlining
    // it into the dump's hot `Programs.scanInstance`, +8.5 % instructions per record (H24).
    const decoded = try values_decode.decodeSized(chunk, start, size, head.vtype(chunk, i), .cut);
    pos.* = @max(decoded.end, start + size);
    if (pos.* > chunk.len) return error.OutOfBounds;
    return decoded.value;
}

/// A value's text as the reference's `Display` gives it (its JSON value text: JSON string
/// escaping, unquoted; nothing for NULL and BinXML), allocated from `arena`.
fn valueText(
    arena: Allocator,
    chunk: []const u8,
    value: values_decode.Value,
) Allocator.Error![]const u8 {
    var out = escape.Out.init(arena);
    // The template subcommands take no `--ansi-codec`.
    const format: values_format.Format = .{ .chunk = chunk, .ansi = values_format.default_codec };
    values_format.writeValue(&out, format, value, .json) catch |e| switch (e) {
        error.OutOfMemory => return error.OutOfMemory,
        // An ANSI text the code page refuses: what was written (the dump read the record).
        else => {},
    };
    return out.list.items;
}

/// The offset after the record-stream token `t` at `pos` (not a template instance, end of
/// stream or fragment header), or null for a token this walk does not step over.
fn skipToken(chunk: []const u8, pos: usize, t: u8) ?usize {
    return switch (t) {
        0x01 => skipName(chunk, pos + 5),
        0x41 => (skipName(chunk, pos + 5) orelse return null) + 4,
        0x02...0x04 => pos + 1,
        0x05, 0x45 => if (pos + 1 < chunk.len and chunk[pos + 1] == T.string)
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
    const off: usize = bytes_le.getU32(chunk, at) orelse return null;
    if (off != at + 4) return at + 4;
    const units = bytes_le.getU16(chunk, off + 6) orelse return null;
    return off + 10 + 2 * @as(usize, units);
}

/// After a count (u16) of UTF-16 units at `at` and the units.
fn skipUnits(chunk: []const u8, at: usize) ?usize {
    const units = bytes_le.getU16(chunk, at) orelse return null;
    return at + 2 + 2 * @as(usize, units);
}

// ---------------------------------------------------------------------------------------------
// Values the reference's record iterator cannot read.

/// Arrays of these types (`T.array` set) the reference's reader cannot read either.
const binary_array = T.array | T.binary;
const size_t_array = T.array | T.size_t;
const evt_handle_array = T.array | T.evt_handle;
const evt_xml_array = T.array | T.evt_xml;

/// Value types the reference's record iterator cannot read: a record holding one fails there,
/// though the dump renders it under our rule (`shared-fixtures/README.md`,
/// `damaged/unsupported-types`).
fn isUnreadable(t: u8) bool {
    return switch (t) {
        T.evt_handle,
        T.evt_xml,
        binary_array,
        size_t_array,
        evt_handle_array,
        evt_xml_array,
        => true,
        else => false,
    };
}

/// A value the reference's record iterator cannot read: where its bytes start in the chunk, its
/// type, and its declared size (null for a value text).
const Unreadable = struct {
    offset: usize,
    vtype: u8,
    size: ?u16,

    /// Writes the reference's cause, when it names the type (the arrays of EvtHandle and
    /// EvtXml are not types to it); whether it did.
    fn writeCause(u: *const Unreadable, w: *std.Io.Writer) std.Io.Writer.Error!bool {
        const name = switch (u.vtype) {
            T.evt_handle => "EvtHandle",
            T.evt_xml => "EvtXmlType",
            binary_array => "BinaryArrayType",
            size_t_array => "SizeTArrayType",
            else => return false,
        };
        try w.print(stream_chain ++ "Offset {d}: Value variant `{s}` (size ", .{ u.offset, name });
        if (u.size) |size| try w.print("Some({d})", .{size}) else try w.writeAll("None");
        try w.writeAll(") is unimplemented");
        return true;
    }
};

/// The first value of `record` of an unreadable type: in a template instance of its stream
/// (and those that are a whole BinXML value of one, as deep as
/// `limits.instance_scan_depth_max`) or as a value text of the stream itself.
fn firstUnreadable(record: *const Record) ?Unreadable {
    const chunk = record.chunk;
    const window = record.stream() orelse return null;
    var pos = window.start;
    while (pos < window.end) {
        switch (chunk[pos]) {
            0x00 => break,
            0x0F => pos += 4,
            0x0C => {
                if (instanceUnreadable(chunk, pos + 1, 0)) |found| return found;
                pos = instanceEnd(chunk, pos + 1) orelse break;
            },
            // A value text of such a type (`damaged/unsupported-types` record 8).
            0x05, 0x45 => |t| {
                const vtype = if (pos + 1 < chunk.len) chunk[pos + 1] else break;
                if (isUnreadable(vtype))
                    return .{ .offset = pos + 2, .vtype = vtype, .size = null };
                pos = skipToken(chunk, pos, t) orelse break;
            },
            else => |t| pos = skipToken(chunk, pos, t) orelse break,
        }
    }
    return null;
}

/// `firstUnreadable` for the instance whose header starts at `at` (after its token), `depth`
/// instances below the record's.
fn instanceUnreadable(chunk: []const u8, at: usize, depth: usize) ?Unreadable {
    assert(depth <= limits.instance_scan_depth_max);
    var pos: u32 = std.math.cast(u32, at) orelse return null;
    const head = template.instanceHead(chunk, &pos) catch return null;
    var value: usize = pos;
    for (0..head.count) |i| {
        const size = head.size(chunk, @intCast(i));
        const vtype = head.vtype(chunk, @intCast(i));
        if (isUnreadable(vtype)) return .{ .offset = value, .vtype = vtype, .size = size };
        if (vtype == T.binxml and size > 0 and depth < limits.instance_scan_depth_max) {
            // A BinXML value that is one whole instance, after its fragment header if any.
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

/// The chunk offset after the values of the instance whose header starts at `at`, or null
/// where the reference's reader fails on it.
fn instanceEnd(chunk: []const u8, at: usize) ?usize {
    var pos: u32 = std.math.cast(u32, at) orelse return null;
    const head = template.instanceHead(chunk, &pos) catch return null;
    head.checkTypes(chunk, 0) catch return null;
    for (0..head.count) |i| _ = readValue(chunk, &head, @intCast(i), &pos) catch return null;
    return pos;
}

// ---------------------------------------------------------------------------------------------
// The reference's words for a chunk or record it fails on.

/// The chain of the reference's deserializer errors below a record's line.
const stream_chain = "0: An error occurred while trying to deserialize evtx stream.\n    1: ";

/// A failed record or chunk as the reference's chunk and record iterators display it (their
/// error's own text, no `Caused by:` chain).
fn writeFailureLine(
    w: *std.Io.Writer,
    chunk_offset: u64,
    entry: *const dump.RecordResult,
    kind: errors.ErrorKind,
) std.Io.Writer.Error!void {
    switch (kind) {
        .bad_string_table => try w.writeAll("Failed to build string cache"),
        .incomplete_chunk,
        .bad_chunk_magic,
        .bad_chunk_header_checksum,
        .bad_chunk_free_space_offset,
        .bad_chunk_records_checksum,
        => try w.print("Failed to parse chunk number {d}", .{entry.slot}),
        else => if (kind == .bad_binxml and entry.record_id != null) {
            try w.print("Failed to parse record number {d}", .{entry.record_id.?});
        } else {
            try w.print(
                "Failed to read the record at offset 0x{x} of chunk {d} (file offset 0x{x})",
                .{ entry.file_offset - chunk_offset, entry.slot, entry.file_offset },
            );
        },
    }
}

/// The `Caused by:` text below `writeFailureLine`'s, where the bytes tell it: the engine's
/// `Cause` (a chunk's string table, a record's BinXML), else the header field that failed (a
/// record header's magic, size or timestamp, a chunk's magic), the record's header at `rec`.
/// Other failures have none (`shared-fixtures/README.md`); whether it wrote one.
fn writeFailureCause(
    w: *std.Io.Writer,
    chunk: []const u8,
    rec: usize,
    f: *const errors.Failure,
) std.Io.Writer.Error!bool {
    @branchHint(.cold);
    if (f.cause) |cause| return writeCauseText(w, cause, chunk);
    switch (f.kind) {
        .bad_record_magic => if (rec + 4 <= chunk.len) {
            try w.writeAll(stream_chain ++ "Invalid EVTX record header magic, expected " ++
                "`2a2a0000`, found `");
            try writeMagic(w, chunk[rec..][0..4]);
            try w.writeByte('`');
            return true;
        },
        .bad_record_size => if (bytes_le.getU32(chunk, rec + 4)) |size| if (size < 28) {
            try w.print("Invalid EVTX record data size, should be equals or greater than 28, " ++
                "found `{d}`", .{size});
            return true;
        },
        .bad_record_timestamp => if (bytes_le.getU64(chunk, rec + 16)) |t| {
            try w.print(stream_chain ++ "The record header's timestamp (FILETIME 0x{x:0>16}) " ++
                "is out of range", .{t});
            return true;
        },
        .bad_chunk_magic => if (chunk.len >= 8) {
            try w.writeAll("0: Failed to parse chunk header\n    1: Invalid EVTX chunk header " ++
                "magic, expected `ElfChnk0`, found `");
            try writeMagic(w, chunk[0..8]);
            try w.writeByte('`');
            return true;
        },
        else => {},
    }
    return false;
}

/// The reference's words for an engine's `cause` in `chunk` (a string table's are the chunk's
/// own, a record's BinXML's come below `stream_chain`); whether it has them.
fn writeCauseText(
    w: *std.Io.Writer,
    cause: errors.Cause,
    chunk: []const u8,
) std.Io.Writer.Error!bool {
    @branchHint(.cold);
    const past = " is past the end of the data ({d} bytes)";
    const at = cause.offset;
    switch (cause.kind) {
        .table_start_past_end => try w.print("cursor.position at offset {d}" ++ past, .{
            at,
            chunk.len,
        }),
        .table_link_past_end => try w.print("next xml string at offset {d}" ++ past, .{
            at,
            chunk.len,
        }),
        .table_name_invalid => try w.print("name at offset {d}: invalid data", .{at}),
        // The byte before the reference's cursor.
        .invalid_token => {
            if (at < 1 or at > chunk.len) return false;
            try w.print(stream_chain ++ "Offset 0x{x:0>8}: Tried to read an invalid byte " ++
                "`0x{x:0>2}` as binxml token", .{ at, chunk[at - 1] });
        },
        .name_past_end => try w.print(stream_chain ++ "cursor.position at offset {d}" ++ past, .{
            at,
            chunk.len,
        }),
        .empty_definition => try w.writeAll("Failed to create record model, reason: empty " ++
            "BinXML slice"),
        .definition_past_end => try w.writeAll("Failed to create record model, reason: " ++
            "template data out of bounds"),
        // A TEMP's, not a chunk's (`wevt_cache.writeTempError`).
        .invalid_value_type, .name_hash_mismatch, .name_without_nul, .truncated, .model => {
            return false;
        },
    }
    return true;
}

/// Magic bytes as the reference's `{:2X?}` shows them: `[ 0, 6E, 2A,  0]`.
fn writeMagic(w: *std.Io.Writer, magic: []const u8) std.Io.Writer.Error!void {
    try w.writeByte('[');
    for (magic, 0..) |b, i| {
        if (i > 0) try w.writeAll(", ");
        try w.print("{X:>2}", .{b});
    }
    try w.writeByte(']');
}

// ---------------------------------------------------------------------------------------------

/// The first chunk of a committed fixture; caller frees.
fn firstChunk(gpa: Allocator, name: []const u8) ![]u8 {
    var dir = try std.fs.cwd().openDir(@import("unit_test_options").fixtures, .{});
    defer dir.close();
    const file = try dir.readFileAlloc(gpa, name, 1 << 20);
    defer gpa.free(file);
    return gpa.dupe(u8, file[file_header.block_size..][0..file_header.chunk_size]);
}

test "unreadable values have the reference's causes" {
    const gpa = std.testing.allocator;
    const chunk = try firstChunk(gpa, "damaged/unsupported-types.evtx");
    defer gpa.free(chunk);
    var text: [256]u8 = undefined;
    var w: std.Io.Writer = .fixed(&text);
    // Record 1 (the first of the chunk) holds no such value.
    const record1: Record = .{ .id = 1, .filetime = 0, .chunk = chunk, .offset = 512 };
    try std.testing.expect(firstUnreadable(&record1) == null);
    // The reference's causes for records 2 (at chunk offset 794, an EvtHandle of 4 bytes) and
    // 8 (at 2185, an EvtXml value text).
    const record2: Record = .{ .id = 2, .filetime = 0, .chunk = chunk, .offset = 794 };
    try std.testing.expect(try firstUnreadable(&record2).?.writeCause(&w));
    try std.testing.expectEqualStrings(
        "0: An error occurred while trying to deserialize evtx stream.\n    " ++
            "1: Offset 1073: Value variant `EvtHandle` (size Some(4)) is unimplemented",
        w.buffered(),
    );
    w = .fixed(&text);
    const record8: Record = .{ .id = 8, .filetime = 0, .chunk = chunk, .offset = 2185 };
    try std.testing.expect(try firstUnreadable(&record8).?.writeCause(&w));
    try std.testing.expect(std.mem.endsWith(
        u8,
        w.buffered(),
        "1: Offset 2249: Value variant `EvtXmlType` (size None) is unimplemented",
    ));
}

test "a record's instance as the reference lists it; one that does not read fails" {
    const gpa = std.testing.allocator;
    const chunk = try firstChunk(gpa, "wevt/instances.evtx");
    defer gpa.free(chunk);
    var arena = std.heap.ArenaAllocator.init(gpa);
    defer arena.deinit();
    const record: Record = .{ .id = 1, .filetime = 0, .chunk = chunk, .offset = 512 };
    // The reference: "template_id":1596729923,"template_def_offset":550, its GUID
    // 5F2C2A43-AA86-2481-02F3-ECE817383695, 11 substitutions.
    const found = try record.instances(arena.allocator());
    try std.testing.expectEqual(@as(usize, 1), found.len);
    const inst = found[0];
    try std.testing.expectEqual(@as(u32, 1596729923), inst.template_id);
    try std.testing.expectEqual(@as(u32, 550), inst.def_offset);
    var guid = escape.Out.init(gpa);
    defer guid.deinit();
    try values_format.writeGuidUpper(&guid, &inst.guid.?);
    try std.testing.expectEqualStrings("5F2C2A43-AA86-2481-02F3-ECE817383695", guid.list.items);
    try std.testing.expectEqual(@as(usize, 11), inst.values.len);
    // The same instance's values for `apply-wevt-cache`, and no second instance.
    const raw = try record.rawValues(arena.allocator(), 0);
    try std.testing.expectEqual(@as(usize, 11), raw.?.len);
    try std.testing.expect(try record.rawValues(arena.allocator(), 1) == null);
    // A value that does not read is an error, not a shorter list: the instance (its 0x0C at
    // chunk offset 540, after the record header and a fragment header) with its first
    // descriptor's type made one no reader knows.
    try std.testing.expectEqual(@as(u8, 0x0F), chunk[536]);
    try std.testing.expectEqual(@as(u8, 0x0C), chunk[540]);
    var pos: u32 = 540 + 1;
    const head = try template.instanceHead(chunk, &pos);
    chunk[head.descriptors + 2] = 0x16;
    try std.testing.expectError(error.InvalidValueType, record.instances(arena.allocator()));
}

test "magic bytes as the reference shows them" {
    var text: [64]u8 = undefined;
    var w: std.Io.Writer = .fixed(&text);
    // From the reference's record header magic errors on samples.
    try writeMagic(&w, &.{ 0, 0x6E, 0, 0x64 });
    try writeMagic(&w, &.{ 0x3D, 0x13, 0x6A, 0 });
    try std.testing.expectEqualStrings("[ 0, 6E,  0, 64][3D, 13, 6A,  0]", w.buffered());
}
