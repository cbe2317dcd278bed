//! The driver: chunk order (3.3), rendering one chunk into a reusable buffer with one
//! entry per record (or error), and a multi-threaded pipeline that hands chunk results to
//! a consumer strictly in chunk order.
//!
//! Memory: each renderer owns a parser (per-chunk caches, reset with retained capacity)
//! and each in-flight result owns its output buffer; nothing is freed between chunks.
const std = @import("std");
const assert = std.debug.assert;
const Allocator = std.mem.Allocator;
const file_header = @import("file_header.zig");
const chunk = @import("chunk.zig");
const values = @import("values.zig");
const escape = @import("escape.zig");
const tokens = @import("tokens.zig");
const render_json = @import("render_json.zig");
const render_xml = @import("render_xml.zig");
const program = @import("program.zig");
const template = @import("template.zig");
const carve = @import("carve.zig");

pub const OutputFormat = enum { xml, json, jsonl };

/// A chunk's rendered text may not exceed this (12).
pub const chunk_bytes_max = 64 << 20;

pub const Range = struct { first: u64, last: u64 };

pub const Settings = struct {
    format: OutputFormat = .xml,
    indent: bool = true,
    show_record_number: bool = true,
    separate_attributes: bool = false,
    validate_checksums: bool = false,
    /// `--recover-records`: also carve stale records (5.4, carve.zig).
    recover_records: bool = false,
    ansi: values.Codec = values.default_codec,
    /// Records to print (by record header id); empty = all.
    events: []const Range = &.{},

    fn wanted(s: *const Settings, id: u64) bool {
        if (s.events.len == 0) return true;
        for (s.events) |r| {
            if (id >= r.first and id <= r.last) return true;
        }
        return false;
    }
};

/// One record (or chunk/record error) of a rendered chunk.
pub const Entry = struct {
    /// Record header id; null when unknown (chunk errors, unreadable record headers).
    record_id: ?u64,
    /// Record FILETIME (0 when unknown).
    filetime: u64,
    slot: u32,
    file_offset: u64,
    /// Byte range in the result's output: exactly what the CLI prints for this record.
    start: u32,
    len: u32,
    /// Null for a rendered record.
    kind: ?chunk.Kind,
    detail: [:0]const u8,
    /// False when the record was rendered but `--events` excludes it (len == 0).
    printed: bool,
    /// A carved record (`--recover-records`); carved records that fail are never entries.
    recovered: bool = false,
};

/// The rendered text and entries of one chunk slot.
pub const Result = struct {
    out: escape.Out,
    entries: std.ArrayList(Entry) = .empty,
    slot: u32 = 0,
    /// The detail of an `incomplete chunk` entry (how many bytes are missing).
    detail_buf: [48:0]u8 = undefined,

    pub fn init(gpa: Allocator) Result {
        return .{ .out = escape.Out.init(gpa) };
    }

    pub fn deinit(r: *Result) void {
        r.entries.deinit(r.out.gpa);
        r.out.deinit();
    }

    pub fn text(r: *const Result, e: *const Entry) []const u8 {
        return r.out.list.items[e.start..][0..e.len];
    }
};

/// Renders chunks; one per thread.
pub const Renderer = struct {
    gpa: Allocator,
    parser: tokens.Parser,
    json: render_json.Json,
    settings: *const Settings,
    visited: std.bit_set.ArrayBitSet(usize, chunk.size) = .initEmpty(),
    programs: program.Cache,
    /// A partial chunk slot's bytes, zero-padded to a whole chunk (allocated on first use).
    partial: ?*[chunk.size]u8 = null,
    /// Compiled programs (scan and replay); off only in tests, to compare with the full
    /// parse of every record.
    compiled: bool = true,

    /// `r` must not move after `init` (the JSON state points at its parser).
    pub fn init(r: *Renderer, gpa: Allocator, settings: *const Settings) void {
        r.* = .{
            .gpa = gpa,
            .parser = tokens.Parser.init(gpa),
            .json = undefined,
            .settings = settings,
            .programs = program.Cache.init(gpa),
        };
        r.parser.ansi = settings.ansi;
        r.json = render_json.Json.init(&r.parser, undefined, settings.ansi, settings.separate_attributes);
    }

    pub fn deinit(r: *Renderer) void {
        if (r.partial) |buf| r.gpa.destroy(buf);
        r.programs.deinit();
        r.json.deinit();
        r.parser.deinit();
    }

    fn chunkError(res: *Result, slot: u32, kind: chunk.Kind, detail: [:0]const u8) Allocator.Error!void {
        try res.entries.append(res.out.gpa, .{
            .record_id = null,
            .filetime = 0,
            .slot = slot,
            .file_offset = file_header.chunkOffset(slot),
            .start = @intCast(res.out.len()),
            .len = 0,
            .kind = kind,
            .detail = detail,
            .printed = false,
        });
    }

    /// Renders chunk slot `slot` of `file` into `res` (cleared first).
    pub fn renderChunk(r: *Renderer, file: []const u8, slot: u32, res: *Result) Allocator.Error!void {
        res.out.truncate(0);
        res.entries.clearRetainingCapacity();
        res.slot = slot;
        const bytes = file_header.chunkBytes(file, slot) orelse
            return r.renderPartialChunk(file_header.slotBytes(file, slot), slot, res);
        if (chunk.isEmpty(bytes)) return;
        if (!chunk.hasMagic(bytes)) return chunkError(res, slot, .bad_chunk_magic, "not ElfChnk");
        const header = chunk.Header.read(bytes);
        if (r.settings.validate_checksums) {
            if (chunk.validateChecksums(bytes, &header)) |kind| return chunkError(res, slot, kind, "checksum");
        }
        if (!chunk.stringTableValid(bytes, &r.visited)) return chunkError(res, slot, .bad_string_table, "unreadable name entry");
        try r.parser.resetChunk(bytes);
        r.programs.trim();
        var walker = chunk.Walker.init(bytes, r.settings.recover_records);
        return r.walk(res, slot, &walker);
    }

    /// A slot the file ends inside (shared-fixtures/README.md, "A log cut inside its last
    /// chunk"): one `incomplete chunk` error saying how many bytes are missing; with
    /// `--recover-records` (not with `--validate-checksums`, which cannot check it), its
    /// complete records carved from `[512, available)`. The parser sees only the bytes that
    /// are there, so a record that needs a name or definition past the cut fails and, carved,
    /// is dropped.
    fn renderPartialChunk(r: *Renderer, bytes: []const u8, slot: u32, res: *Result) Allocator.Error!void {
        assert(bytes.len < chunk.size);
        const detail = std.fmt.bufPrintZ(&res.detail_buf, "{d} bytes missing", .{chunk.size - bytes.len}) catch unreachable;
        try chunkError(res, slot, .incomplete_chunk, detail);
        if (!r.settings.recover_records or r.settings.validate_checksums) return;
        if (bytes.len < chunk.header_size or !chunk.hasMagic(bytes)) return;
        const padded = r.partial orelse blk: {
            const buf = try r.gpa.create([chunk.size]u8);
            r.partial = buf;
            break :blk buf;
        };
        @memcpy(padded[0..bytes.len], bytes);
        @memset(padded[bytes.len..], 0);
        try r.parser.resetChunk(padded[0..bytes.len]);
        r.programs.trim();
        var walker = chunk.Walker.carveOnly(padded, .{ .start = chunk.header_size, .end = @intCast(bytes.len) });
        return r.walk(res, slot, &walker);
    }

    fn walk(r: *Renderer, res: *Result, slot: u32, walker: *chunk.Walker) Allocator.Error!void {
        while (walker.next()) |step| switch (step) {
            .record => |rec| try r.renderRecord(res, slot, &rec, walker),
            .err => |e| try res.entries.append(res.out.gpa, .{
                .record_id = e.e.id,
                .filetime = 0,
                .slot = slot,
                .file_offset = file_header.chunkOffset(slot) + e.offset,
                .start = @intCast(res.out.len()),
                .len = 0,
                .kind = e.e.kind,
                .detail = "record header",
                .printed = false,
            }),
        };
    }

    fn renderRecord(r: *Renderer, res: *Result, slot: u32, rec: *const chunk.Record, walker: *chunk.Walker) Allocator.Error!void {
        const mark = res.out.len();
        const printed = r.settings.wanted(rec.id);
        var entry: Entry = .{
            .record_id = rec.id,
            .filetime = rec.filetime,
            .slot = slot,
            .file_offset = file_header.chunkOffset(slot) + rec.offset,
            .start = @intCast(mark),
            .len = 0,
            .kind = null,
            .detail = "",
            .printed = printed,
            .recovered = rec.recovered,
        };
        r.writeRecord(&res.out, rec) catch |e| {
            if (e == error.OutOfMemory) return error.OutOfMemory;
            res.out.truncate(mark);
            // Carved hits that fail are noise, not errors (5.4).
            if (rec.recovered) return walker.rejectCarved(rec);
            entry.kind = .bad_binxml;
            entry.detail = @errorName(e);
            entry.printed = false;
        };
        if (!printed) res.out.truncate(mark);
        entry.len = @intCast(res.out.len() - mark);
        try res.entries.append(res.out.gpa, entry);
    }

    fn writeRecord(r: *Renderer, out: *escape.Out, rec: *const chunk.Record) tokens.Error!void {
        const p = &r.parser;
        p.resetRecord();
        const start = rec.offset + chunk.record_header_size;
        const end = rec.binxmlEnd();
        // The reference refuses an empty BinXML window (a record of exactly 28 bytes).
        if (end == start) return error.EmptyBinXml;
        const s = r.settings;
        if (s.show_record_number and s.format != .jsonl) {
            try out.write("Record ");
            try values.writeUnsigned(out, rec.id);
            if (rec.recovered) try out.write(" (recovered)");
            try out.byte('\n');
        }
        const text_start = out.len();
        const format: values.Format = .{ .chunk = p.chunk, .ansi = s.ansi };
        // Fast path: a compiled program for the record's signature, read from the bytes.
        if (r.compiled and try r.programs.scan(p, start, end)) {
            if (r.programs.find()) |prog| return r.replayRecord(out, prog, format, rec, text_start);
        }
        p.resetRecord();
        // The reference compiles no program for JSON with separate attributes.
        p.defer_unused = rec.recovered and !(s.separate_attributes and s.format != .xml);
        const top = try p.parseStream(start, end, .record);
        if (p.deferred) |*d| try template.checkDeferred(p, d, start, end, top);
        var capture: ?*program.Capture = null;
        if (r.compiled and top.len > 0 and p.node(p.edges(top)[0]).kind == .instance) {
            if (try r.programs.sign(p, p.edges(top)[0])) {
                if (r.programs.find()) |prog| return r.replayRecord(out, prog, format, rec, text_start);
                capture = r.programs.beginCapture(text_start);
            }
        }
        const root = if (top.len > 0) try p.materialize(p.edges(top)[0]) else try p.newNode(.{ .kind = .element, .a = p.event_name });
        switch (s.format) {
            .xml => {
                var x: render_xml.Xml = .{ .p = p, .out = out, .ansi = s.ansi, .indent = s.indent, .capture = capture };
                try x.writeRecord(root);
            },
            .json, .jsonl => {
                r.json.out = out;
                r.json.capture = capture;
                defer r.json.capture = null;
                try r.json.writeRecord(root);
            },
        }
        if (capture != null) try r.programs.endCapture(out);
        try r.finishRecord(out, rec, text_start);
    }

    fn replayRecord(r: *Renderer, out: *escape.Out, prog: *const program.Program, format: values.Format, rec: *const chunk.Record, text_start: usize) tokens.Error!void {
        try r.programs.replay(prog, out, format);
        if (out.len() - text_start > render_json.record_bytes_max) return error.OutputTooLarge;
        return r.finishRecord(out, rec, text_start);
    }

    inline fn finishRecord(r: *Renderer, out: *escape.Out, rec: *const chunk.Record, text_start: usize) tokens.Error!void {
        _ = r;
        if (rec.recovered) try carve.markRecovered(out, text_start);
        try out.byte('\n');
        if (out.len() > chunk_bytes_max) return error.OutputTooLarge;
    }
};

/// An EVTX file held in memory (never copied) and its chunk slots in output order: the
/// entry point of the library. Render with `run` (all chunks, N threads, in order) or
/// chunk by chunk with a `Renderer`.
pub const File = struct {
    bytes: []const u8,
    header: file_header.FileHeader,
    /// Chunk slots in output order (3.3).
    order: []u32,

    pub fn open(gpa: Allocator, bytes: []const u8, settings: *const Settings) (file_header.Error || Allocator.Error)!File {
        const header = try file_header.parse(bytes);
        const order = try chunkOrder(gpa, bytes, &header, settings);
        return .{ .bytes = bytes, .header = header, .order = order };
    }

    pub fn deinit(f: *File, gpa: Allocator) void {
        gpa.free(f.order);
    }
};

/// The slots to process, in output order (3.3).
pub fn chunkOrder(gpa: Allocator, file: []const u8, header: *const file_header.FileHeader, settings: *const Settings) Allocator.Error![]u32 {
    const slots = header.chunk_slots;
    var oldest: u64 = 0;
    var oldest_id: ?u64 = null;
    var n: u64 = 0;
    while (n < slots) : (n += 1) {
        const start = file_header.chunkOffset(n);
        if (start > file.len or file.len - start < chunk.header_size) continue;
        const bytes = file[start..];
        if (!chunk.hasMagic(bytes)) continue;
        const first = std.mem.readInt(u64, bytes[24..32], .little);
        const last = std.mem.readInt(u64, bytes[32..40], .little);
        if (first > last) continue;
        if (oldest_id == null or first < oldest_id.?) {
            oldest_id = first;
            oldest = n;
        }
    }
    var order: std.ArrayList(u32) = .empty;
    errdefer order.deinit(gpa);
    n = oldest;
    while (n < std.math.maxInt(u32)) : (n += 1) {
        if (n >= slots) {
            const bytes = file_header.chunkBytes(file, n) orelse break;
            if (chunk.isEmpty(bytes)) continue;
            if (!chunk.hasMagic(bytes)) break;
            if (settings.validate_checksums) {
                const h = chunk.Header.read(bytes);
                if (chunk.validateChecksums(bytes, &h) != null) break;
            }
        }
        try order.append(gpa, @intCast(n));
    }
    if (partialSlot(file)) |partial| {
        if (partial >= slots) try order.append(gpa, partial);
    }
    n = 0;
    while (n < oldest) : (n += 1) try order.append(gpa, @intCast(n));
    return order.toOwnedSlice(gpa);
}

/// The slot right after the last complete one, when the file ends inside it and its bytes
/// start with the chunk magic: a log cut inside its last chunk (shared-fixtures/README.md).
/// It goes where the first pass of the chunk order ends.
pub fn partialSlot(file: []const u8) ?u32 {
    assert(file.len >= file_header.block_size);
    const slot = (file.len - file_header.block_size) / chunk.size;
    if (slot >= std.math.maxInt(u32)) return null;
    if (!chunk.hasMagic(file_header.slotBytes(file, slot))) return null;
    return @intCast(slot);
}

/// Receives chunk results in output order. Returning an error stops the dump.
pub const Consumer = struct {
    context: *anyopaque,
    consume: *const fn (context: *anyopaque, result: *const Result) anyerror!void,
};

/// Renders `order` with `threads` workers (>= 1) and feeds `consumer` in order.
pub fn run(gpa: Allocator, file: []const u8, order: []const u32, settings: *const Settings, threads: usize, consumer: Consumer) anyerror!void {
    assert(threads >= 1);
    if (threads == 1 or order.len <= 1) return runInline(gpa, file, order, settings, consumer);
    var pipeline: Pipeline = undefined;
    try pipeline.init(gpa, file, order, settings, threads);
    defer pipeline.deinit();
    return pipeline.drive(consumer);
}

fn runInline(gpa: Allocator, file: []const u8, order: []const u32, settings: *const Settings, consumer: Consumer) anyerror!void {
    const renderer = try gpa.create(Renderer);
    defer gpa.destroy(renderer);
    renderer.init(gpa, settings);
    defer renderer.deinit();
    var result = Result.init(gpa);
    defer result.deinit();
    for (order) |slot| {
        try renderer.renderChunk(file, slot, &result);
        try consumer.consume(consumer.context, &result);
    }
}

/// Workers take jobs in order; results go to a window of 2 x threads slots that the
/// consumer drains strictly in job order.
const Pipeline = struct {
    gpa: Allocator,
    file: []const u8,
    order: []const u32,
    settings: *const Settings,
    mutex: std.Thread.Mutex = .{},
    cond: std.Thread.Condition = .{},
    next_job: usize = 0,
    /// Per window slot: the job it holds, and whether it is rendered.
    window_job: []usize,
    window_ready: []bool,
    results: []Result,
    renderers: []Renderer,
    workers: []std.Thread,
    stop: bool = false,
    failed: ?anyerror = null,

    fn init(pl: *Pipeline, gpa: Allocator, file: []const u8, order: []const u32, settings: *const Settings, threads: usize) !void {
        const window = 2 * threads;
        pl.* = .{
            .gpa = gpa,
            .file = file,
            .order = order,
            .settings = settings,
            .window_job = try gpa.alloc(usize, window),
            .window_ready = try gpa.alloc(bool, window),
            .results = try gpa.alloc(Result, window),
            .renderers = try gpa.alloc(Renderer, threads),
            .workers = try gpa.alloc(std.Thread, threads),
        };
        for (pl.window_job, pl.window_ready, pl.results, 0..) |*j, *rd, *res, i| {
            j.* = i; // Slot i first holds job i.
            rd.* = false;
            res.* = Result.init(gpa);
        }
        for (pl.renderers) |*r| r.init(gpa, settings);
    }

    fn deinit(pl: *Pipeline) void {
        for (pl.results) |*r| r.deinit();
        for (pl.renderers) |*r| r.deinit();
        pl.gpa.free(pl.window_job);
        pl.gpa.free(pl.window_ready);
        pl.gpa.free(pl.results);
        pl.gpa.free(pl.renderers);
        pl.gpa.free(pl.workers);
    }

    fn worker(pl: *Pipeline, r: *Renderer) void {
        const window = pl.results.len;
        while (true) {
            pl.mutex.lock();
            const job = pl.next_job;
            if (job >= pl.order.len or pl.stop) {
                pl.mutex.unlock();
                return;
            }
            pl.next_job += 1;
            const w = job % window;
            while (pl.window_job[w] != job and !pl.stop) pl.cond.wait(&pl.mutex);
            pl.mutex.unlock();
            if (pl.stop) return;
            const err = r.renderChunk(pl.file, pl.order[job], &pl.results[w]);
            pl.mutex.lock();
            if (err) |_| {} else |e| {
                pl.failed = e;
                pl.stop = true;
            }
            pl.window_ready[w] = true;
            pl.cond.broadcast();
            pl.mutex.unlock();
        }
    }

    fn drive(pl: *Pipeline, consumer: Consumer) anyerror!void {
        var spawned: usize = 0;
        defer {
            pl.mutex.lock();
            pl.stop = true;
            pl.cond.broadcast();
            pl.mutex.unlock();
            for (pl.workers[0..spawned]) |t| t.join();
        }
        for (pl.renderers, 0..) |*r, i| {
            pl.workers[i] = try std.Thread.spawn(.{}, worker, .{ pl, r });
            spawned += 1;
        }
        const window = pl.results.len;
        for (0..pl.order.len) |job| {
            const w = job % window;
            pl.mutex.lock();
            while (!pl.window_ready[w] and !pl.stop) pl.cond.wait(&pl.mutex);
            if (pl.failed) |e| {
                pl.mutex.unlock();
                return e;
            }
            pl.mutex.unlock();
            try consumer.consume(consumer.context, &pl.results[w]);
            pl.mutex.lock();
            pl.window_ready[w] = false;
            pl.window_job[w] = job + window;
            pl.cond.broadcast();
            pl.mutex.unlock();
        }
    }
};

// ---------------------------------------------------------------------------------------
const testing = @import("testing.zig");

/// A Security-like record: a template with dependency ids, optional substitutions, an
/// attribute, an array and a nested BinXml instance.
fn buildSample(b: *testing.Builder) void {
    const T = values.T;
    b.start = 536;
    b.pos = 536;
    b.fragment();
    const size_at = b.beginInstance();
    b.fragment();
    b.open("Event", 0xFFFF, true);
    b.attribute("xmlns");
    b.text("urn:x");
    b.closeStart();
    b.open("System", 0xFFFF, false);
    b.closeStart();
    b.open("EventID", 0, true);
    b.attribute("Qualifiers");
    b.sub(1, true, T.uint16);
    b.closeStart();
    b.sub(0, true, T.uint16);
    b.end();
    b.open("Keywords", 0xFFFF, false);
    b.closeStart();
    b.sub(2, true, T.hex64);
    b.end();
    b.end();
    b.open("Data", 3, false);
    b.closeStart();
    b.sub(3, false, T.array | T.string);
    b.end();
    b.sub(4, true, T.binxml);
    b.end();
    b.byte(0x00);
    b.endDefinition(size_at);
    // Values; value 4 is a nested instance `<EventData><Data Name="N">%0</Data></EventData>`
    // built in place, its declared size patched afterwards.
    const list = [_]testing.Builder.Value{
        .{ .vtype = T.uint16, .bytes = &.{ 0x00, 0x12 } },
        .{ .vtype = T.null_type, .bytes = &.{} },
        .{ .vtype = T.hex64, .bytes = &.{ 0, 0, 0, 0, 0, 0, 0x20, 0x80 } },
        .{ .vtype = T.array | T.string, .bytes = &.{ 'a', 0, 0, 0, 'b', 0, 0, 0 } },
    };
    b.u32le(list.len + 1);
    for (list) |v| {
        b.u16le(@intCast(v.bytes.len));
        b.byte(v.vtype);
        b.byte(0);
    }
    const nested_descriptor = b.pos;
    b.u16le(0);
    b.byte(T.binxml);
    b.byte(0);
    for (list) |v| b.raw(v.bytes);
    const nested_start = b.pos;
    b.fragment();
    const nested_size_at = b.beginInstance();
    b.fragment();
    b.open("EventData", 0xFFFF, false);
    b.closeStart();
    b.open("Data", 0xFFFF, true);
    b.attribute("Name");
    b.text("N");
    b.closeStart();
    b.sub(0, false, T.uint32);
    b.end();
    b.end();
    b.byte(0x00);
    b.endDefinition(nested_size_at);
    b.valueList(&.{.{ .vtype = T.uint32, .bytes = &.{ 5, 0, 0, 0 } }});
    b.byte(0x00);
    std.mem.writeInt(u16, b.chunk[nested_descriptor..][0..2], @intCast(b.pos - nested_start), .little);
    b.byte(0x00);
}

test "renderChunk: one record in every format; mutated chunks never crash" {
    const gpa = std.testing.allocator;
    var b = try testing.Builder.init(gpa);
    defer b.deinit(gpa);
    buildSample(&b);
    const file = try testing.fileWithOneRecord(gpa, &b);
    defer gpa.free(file);

    var settings: Settings = .{ .format = .jsonl, .indent = false, .show_record_number = false };
    var f = try File.open(gpa, file, &settings);
    defer f.deinit(gpa);
    try std.testing.expectEqualSlices(u32, &.{0}, f.order);
    const renderer = try gpa.create(Renderer);
    defer gpa.destroy(renderer);
    renderer.init(gpa, &settings);
    defer renderer.deinit();
    var result = Result.init(gpa);
    defer result.deinit();
    // Twice: a renderer is reused across chunks.
    for (0..2) |_| {
        try renderer.renderChunk(file, 0, &result);
        try std.testing.expectEqual(@as(usize, 1), result.entries.items.len);
        try std.testing.expectEqualStrings(
            "{\"Event\":{\"#attributes\":{\"xmlns\":\"urn:x\"},\"System\":{\"EventID\":4608," ++
                "\"Keywords\":\"0x8020000000000000\"},\"Data\":\"a\",\"Data_1\":\"b\",\"EventData\":{\"N\":5}}}\n",
            result.text(&result.entries.items[0]),
        );
    }

    // Mutations: every outcome is fine except a crash, a leak or unbounded work. The
    // renderer is warm (compiled programs, known definitions: the scan path); a fresh one
    // for each mutant takes the full parse, and both must agree entry by entry.
    var prng = std.Random.DefaultPrng.init(0x5eed);
    const random = prng.random();
    const mutated = try gpa.dupe(u8, file);
    defer gpa.free(mutated);
    const formats = [_]OutputFormat{ .jsonl, .xml, .json };
    for (0..300) |round| {
        @memcpy(mutated, file);
        const flips = 1 + random.uintLessThan(usize, 8);
        for (0..flips) |_| {
            const at = 4096 + 512 + random.uintLessThan(usize, b.pos + 64 - 512);
            mutated[at] = random.int(u8);
        }
        settings.format = formats[round % formats.len];
        settings.separate_attributes = round % 2 == 0;
        // A renderer takes its settings at `init`: start one for these, warm it up.
        renderer.deinit();
        renderer.init(gpa, &settings);
        try renderer.renderChunk(file, 0, &result);
        try renderer.renderChunk(mutated, 0, &result);
        for (result.entries.items) |*e| {
            if (e.kind == null) try std.testing.expect(e.len > 0);
        }
        const cold = try gpa.create(Renderer);
        defer gpa.destroy(cold);
        cold.init(gpa, &settings);
        defer cold.deinit();
        var cold_result = Result.init(gpa);
        defer cold_result.deinit();
        try cold.renderChunk(mutated, 0, &cold_result);
        try std.testing.expectEqual(cold_result.entries.items.len, result.entries.items.len);
        for (cold_result.entries.items, result.entries.items) |*c, *w| {
            try std.testing.expectEqual(c.kind, w.kind);
            try std.testing.expectEqualStrings(c.detail, w.detail);
            try std.testing.expectEqualStrings(cold_result.text(c), result.text(w));
        }
    }
}

/// Record `id` of the scan test: an instance of `E` (defined inline when `e_def` is null)
/// with values `A` (u32), `B` (ASCII `b_text` as UTF-16, declared size `b_size`) and `N`, a
/// BinXml value holding one instance of `U` per entry of `u_texts`. `trailer` follows the
/// instance.
fn scanTestRecord(b: *testing.Builder, id: u64, e_def: *?u32, u_def: *?u32, a: u8, b_text: []const u8, b_size: u16, u_texts: []const []const u8, trailer: []const u8) u32 {
    const T = values.T;
    const at = b.beginRecord();
    b.fragment();
    if (e_def.*) |d| b.instanceOf(d) else {
        const size_at = b.beginInstance();
        e_def.* = size_at - 20;
        b.fragment();
        b.open("E", 0xFFFF, false);
        b.closeStart();
        inline for (.{ "A", "B", "N" }, 0..) |label, i| {
            b.open(label, 0xFFFF, false);
            b.closeStart();
            b.sub(i, false, if (i == 0) T.uint32 else if (i == 1) T.string else T.binxml);
            b.end();
        }
        b.end();
        b.byte(0x00);
        b.endDefinition(size_at);
    }
    b.u32le(3);
    b.u16le(4);
    b.raw(&.{ T.uint32, 0 });
    b.u16le(b_size);
    b.raw(&.{ T.string, 0 });
    const n_size_at = b.pos;
    b.u16le(0);
    b.raw(&.{ T.binxml, 0 });
    b.raw(&.{ a, 0, 0, 0 });
    b.units(b_text);
    for (2 * b_text.len..@max(b_size, 2 * b_text.len)) |_| b.byte(0);
    const n_start = b.pos;
    for (u_texts) |u| {
        b.fragment();
        if (u_def.*) |d| b.instanceOf(d) else {
            const size_at = b.beginInstance();
            u_def.* = size_at - 20;
            b.fragment();
            b.open("U", 0xFFFF, false);
            b.closeStart();
            b.sub(0, false, T.string);
            b.end();
            b.byte(0x00);
            b.endDefinition(size_at);
        }
        b.u32le(1);
        b.u16le(@intCast(2 * u.len));
        b.raw(&.{ T.string, 0 });
        b.units(u);
    }
    b.byte(0x00);
    std.mem.writeInt(u16, b.chunk[n_size_at..][0..2], @intCast(b.pos - n_start), .little);
    b.raw(trailer);
    b.endRecord(at, id);
    return at;
}

test "the scan path agrees with the full parse, record by record" {
    const gpa = std.testing.allocator;
    var b = try testing.Builder.init(gpa);
    defer b.deinit(gpa);
    b.pos = 512;
    var e_def: ?u32 = null;
    var u_def: ?u32 = null;
    const in_u = [_][]const u8{"in"};
    const x_u = [_][]const u8{"x"};
    const two_u = [_][]const u8{ "p", "q" };
    const cases = .{
        // Compiles the program (inline definitions).
        .{ 7, "ok", 4, &in_u, "", "{\"E\":{\"A\":7,\"B\":\"ok\",\"N\":{\"U\":\"in\"}}}" },
        // Scan path: definitions by reference, a NUL inside B's declared size.
        .{ 8, "a\x00b", 6, &x_u, "", "{\"E\":{\"A\":8,\"B\":\"a\",\"N\":{\"U\":\"x\"}}}" },
        // An invalid token after the instance: the full parse fails the record.
        .{ 9, "ok", 4, &x_u, "\x4a", null },
        // An odd string size fails the record.
        .{ 10, "ok", 3, &x_u, "", null },
        // A fragment header after the instance: the scan gives up, the parse goes on.
        .{ 11, "ok", 4, &x_u, "\x0f\x01\x01\x00", "{\"E\":{\"A\":11,\"B\":\"ok\",\"N\":{\"U\":\"x\"}}}" },
        // Two instances in N: a signature the scan does not describe.
        .{ 12, "two", 6, &two_u, "", null },
        // An empty B: another signature, compiled on first use.
        .{ 13, "", 0, &x_u, "", "{\"E\":{\"A\":13,\"B\":null,\"N\":{\"U\":\"x\"}}}" },
        .{ 14, "", 0, &x_u, "", "{\"E\":{\"A\":14,\"B\":null,\"N\":{\"U\":\"x\"}}}" },
    };
    var last: u32 = 0;
    inline for (cases, 1..) |c, id| {
        last = scanTestRecord(&b, id, &e_def, &u_def, c[0], c[1], c[2], c[3], c[4]);
    }
    const file = try testing.fileWithRecords(gpa, &b, cases.len, last);
    defer gpa.free(file);

    for ([_]OutputFormat{ .jsonl, .xml }) |format| {
        const settings: Settings = .{ .format = format, .indent = false, .show_record_number = false };
        var results: [2]Result = .{ Result.init(gpa), Result.init(gpa) };
        defer for (&results) |*res| res.deinit();
        for ([_]bool{ true, false }, &results) |compiled, *res| {
            const renderer = try gpa.create(Renderer);
            defer gpa.destroy(renderer);
            renderer.init(gpa, &settings);
            defer renderer.deinit();
            renderer.compiled = compiled;
            // Twice: the second pass starts with every program and definition known.
            try renderer.renderChunk(file, 0, res);
            try renderer.renderChunk(file, 0, res);
        }
        const scanned = &results[0];
        const parsed = &results[1];
        try std.testing.expectEqual(@as(usize, cases.len), scanned.entries.items.len);
        for (scanned.entries.items, parsed.entries.items) |*s, *f| {
            try std.testing.expectEqual(f.kind, s.kind);
            try std.testing.expectEqualStrings(f.detail, s.detail);
            try std.testing.expectEqualStrings(parsed.text(f), scanned.text(s));
        }
        const e = scanned.entries.items;
        try std.testing.expectEqualStrings("InvalidToken", e[2].detail);
        try std.testing.expectEqualStrings("OddStringSize", e[3].detail);
        try std.testing.expectEqual(@as(?chunk.Kind, null), e[4].kind);
        try std.testing.expectEqual(@as(?chunk.Kind, null), e[5].kind);
        if (format == .jsonl) inline for (cases, 0..) |c, i| {
            if (@TypeOf(c[5]) != @TypeOf(null)) try std.testing.expectEqualStrings(c[5] ++ "\n", scanned.text(&e[i]));
        };
    }
}

/// Record `id` of the recovery tests: an instance of `<E><A>%0</A></E>` (defined inline
/// when `def` is null) with value `id` as UInt32.
fn carveTestRecord(b: *testing.Builder, id: u32, def: *?u32) u32 {
    const at = b.beginRecord();
    b.fragment();
    if (def.*) |d| b.instanceOf(d) else {
        const size_at = b.beginInstance();
        def.* = size_at - 20;
        b.fragment();
        b.open("E", 0xFFFF, false);
        b.closeStart();
        b.open("A", 0xFFFF, false);
        b.closeStart();
        b.sub(0, false, values.T.uint32);
        b.end();
        b.end();
        b.byte(0x00);
        b.endDefinition(size_at);
    }
    var value: [4]u8 = undefined;
    std.mem.writeInt(u32, &value, id, .little);
    b.valueList(&.{.{ .vtype = values.T.uint32, .bytes = &value }});
    b.byte(0x00);
    b.endRecord(at, id);
    return at;
}

fn renderSlot(gpa: Allocator, file: []const u8, slot: u32, settings: *const Settings, res: *Result) !void {
    const renderer = try gpa.create(Renderer);
    defer gpa.destroy(renderer);
    renderer.init(gpa, settings);
    defer renderer.deinit();
    try renderer.renderChunk(file, slot, res);
}

test "recover records: slack carved after the last live record, noise skipped, marks" {
    const gpa = std.testing.allocator;
    var b = try testing.Builder.init(gpa);
    defer b.deinit(gpa);
    var def: ?u32 = null;
    _ = carveTestRecord(&b, 1, &def);
    const last = carveTestRecord(&b, 2, &def);
    const live_end = b.pos;
    // Stale bytes past the chunk's last record: record 3, then record 4 whose BinXML is
    // invalid and whose span holds record 5, then a record magic with a wrong size copy.
    _ = carveTestRecord(&b, 3, &def);
    const noise = b.beginRecord();
    b.byte(0x4A);
    b.raw("pad.");
    _ = carveTestRecord(&b, 5, &def);
    b.raw("tail");
    b.endRecord(noise, 4);
    const bad_copy = carveTestRecord(&b, 6, &def);
    std.mem.writeInt(u32, b.chunk[b.pos - 4 ..][0..4], 7, .little);
    _ = bad_copy;
    const file = try testing.fileWithRecords(gpa, &b, 2, last);
    defer gpa.free(file);
    // The chunk header says the live area ends after record 2.
    std.mem.writeInt(u32, file[4096 + 48 ..][0..4], live_end, .little);

    var settings: Settings = .{ .format = .jsonl, .indent = false, .show_record_number = false };
    var res = Result.init(gpa);
    defer res.deinit();
    try renderSlot(gpa, file, 0, &settings, &res);
    try std.testing.expectEqual(@as(usize, 2), res.entries.items.len);

    settings.recover_records = true;
    try renderSlot(gpa, file, 0, &settings, &res);
    const expected = [_]struct { id: u64, recovered: bool, text: []const u8 }{
        .{ .id = 1, .recovered = false, .text = "{\"E\":{\"A\":1}}\n" },
        .{ .id = 2, .recovered = false, .text = "{\"E\":{\"A\":2}}\n" },
        .{ .id = 3, .recovered = true, .text = "{\"recovered\":true,\"E\":{\"A\":3}}\n" },
        .{ .id = 5, .recovered = true, .text = "{\"recovered\":true,\"E\":{\"A\":5}}\n" },
    };
    try std.testing.expectEqual(expected.len, res.entries.items.len);
    for (expected, res.entries.items) |x, *e| {
        try std.testing.expectEqual(@as(?chunk.Kind, null), e.kind);
        try std.testing.expectEqual(@as(?u64, x.id), e.record_id);
        try std.testing.expectEqual(x.recovered, e.recovered);
        try std.testing.expectEqualStrings(x.text, res.text(e));
    }

    settings.format = .xml;
    settings.indent = true;
    settings.show_record_number = true;
    try renderSlot(gpa, file, 0, &settings, &res);
    try std.testing.expectEqual(@as(usize, 4), res.entries.items.len);
    try std.testing.expect(std.mem.startsWith(u8, res.text(&res.entries.items[1]), "Record 2\n" ++ render_xml.declaration ++ "<E>"));
    try std.testing.expect(std.mem.startsWith(u8, res.text(&res.entries.items[2]), "Record 3 (recovered)\n" ++ render_xml.declaration ++ "<!-- recovered -->\n<E>"));
}

test "a log cut inside its last chunk: one incomplete chunk error, complete records carved" {
    const gpa = std.testing.allocator;
    var b = try testing.Builder.init(gpa);
    defer b.deinit(gpa);
    var def: ?u32 = null;
    _ = carveTestRecord(&b, 1, &def);
    _ = carveTestRecord(&b, 2, &def);
    const last = carveTestRecord(&b, 3, &def);
    const cut = last + 10; // Inside record 3.
    const one = try testing.fileWithRecords(gpa, &b, 3, last);
    defer gpa.free(one);
    const file = try std.mem.concat(gpa, u8, &.{ one, one[4096..][0..cut] });
    defer gpa.free(file);

    var settings: Settings = .{ .format = .jsonl, .indent = false, .show_record_number = false };
    var f = try File.open(gpa, file, &settings);
    defer f.deinit(gpa);
    try std.testing.expectEqualSlices(u32, &.{ 0, 1 }, f.order);
    var res = Result.init(gpa);
    defer res.deinit();
    for ([_]bool{ false, true }) |recover| {
        settings.recover_records = recover;
        try renderSlot(gpa, file, 1, &settings, &res);
        const e = res.entries.items;
        try std.testing.expectEqual(@as(usize, if (recover) 3 else 1), e.len);
        try std.testing.expectEqual(@as(?chunk.Kind, .incomplete_chunk), e[0].kind);
        try std.testing.expectEqual(file_header.chunkOffset(1), e[0].file_offset);
        var missing: [32]u8 = undefined;
        try std.testing.expectEqualStrings(try std.fmt.bufPrint(&missing, "{d} bytes missing", .{chunk.size - cut}), e[0].detail);
        if (recover) {
            try std.testing.expectEqualStrings("{\"recovered\":true,\"E\":{\"A\":1}}\n", res.text(&e[1]));
            try std.testing.expectEqualStrings("{\"recovered\":true,\"E\":{\"A\":2}}\n", res.text(&e[2]));
        }
    }
    // `--validate-checksums` cannot check a partial chunk: the error alone.
    settings.validate_checksums = true;
    try renderSlot(gpa, file, 1, &settings, &res);
    try std.testing.expectEqual(@as(usize, 1), res.entries.items.len);
    // Bytes without the chunk magic there are ignored, as the reference ignores them.
    const junk = try std.mem.concat(gpa, u8, &.{ one, "not a chunk" });
    defer gpa.free(junk);
    var g = try File.open(gpa, junk, &settings);
    defer g.deinit(gpa);
    try std.testing.expectEqualSlices(u32, &.{0}, g.order);
}

test "a carved record's BinXml value that fails is read only if its template uses it" {
    const gpa = std.testing.allocator;
    const T = values.T;
    var b = try testing.Builder.init(gpa);
    defer b.deinit(gpa);
    var def: ?u32 = null;
    _ = carveTestRecord(&b, 1, &def);
    // A nested instance whose definition lies outside the chunk: it cannot be parsed.
    const broken = [_]u8{ 0x0F, 0x01, 0x01, 0x00, 0x0C, 0x01, 0, 0, 0, 0, 0x00, 0xFF, 0xFF, 0xFF, 0x00 };
    const two = [_]u8{ 2, 0, 0, 0 };
    // Records 2 (live) and 3 (stale) use `<E><A>%0</A></E>` with that value as value 1.
    var last: u32 = 0;
    inline for (.{ 2, 3 }) |id| {
        const at = b.beginRecord();
        b.fragment();
        b.instanceOf(def.?);
        b.valueList(&.{ .{ .vtype = T.uint32, .bytes = &two }, .{ .vtype = T.binxml, .bytes = &broken } });
        b.byte(0x00);
        b.endRecord(at, id);
        if (id == 2) last = at;
    }
    // Record 4 (stale) uses it: `<F>%1</F>`.
    const at = b.beginRecord();
    b.fragment();
    const size_at = b.beginInstance();
    b.fragment();
    b.open("F", 0xFFFF, false);
    b.closeStart();
    b.sub(1, false, T.binxml);
    b.end();
    b.byte(0x00);
    b.endDefinition(size_at);
    b.valueList(&.{ .{ .vtype = T.uint32, .bytes = &two }, .{ .vtype = T.binxml, .bytes = &broken } });
    b.byte(0x00);
    b.endRecord(at, 4);
    const file = try testing.fileWithRecords(gpa, &b, 2, last);
    defer gpa.free(file);

    var settings: Settings = .{ .format = .jsonl, .indent = false, .show_record_number = false, .recover_records = true };
    var res = Result.init(gpa);
    defer res.deinit();
    try renderSlot(gpa, file, 0, &settings, &res);
    var e = res.entries.items;
    try std.testing.expectEqual(@as(usize, 3), e.len);
    try std.testing.expectEqualStrings("{\"E\":{\"A\":1}}\n", res.text(&e[0]));
    // A live record fails as before: the reference's full parse reads every value.
    try std.testing.expectEqual(@as(?chunk.Kind, .bad_binxml), e[1].kind);
    try std.testing.expectEqualStrings("{\"recovered\":true,\"E\":{\"A\":2}}\n", res.text(&e[2]));
    // JSON with separate attributes: the reference has no compiled lane, record 3 fails.
    settings.separate_attributes = true;
    try renderSlot(gpa, file, 0, &settings, &res);
    e = res.entries.items;
    try std.testing.expectEqual(@as(usize, 2), e.len);
}
