//! The C ABI of the Zig engine: every function, type and constant of include/evtx.h, with
//! the same names (checked at compile time by compare/harness/abi_conformance.zig).
//!
//! Thin layer: it converts C types, owns the parser handle and calls `dump`. Nothing here
//! panics; allocation failures become `EVTX_STATUS_INTERNAL`.
const std = @import("std");
const evtx = @import("evtx");
const dump = evtx.dump;
const chunk = evtx.chunk;

pub const EVTX_ABI_VERSION: u32 = 2;
pub const EVTX_RECORD_ID_UNKNOWN: u64 = std.math.maxInt(u64);

/// C: evtx_status
pub const evtx_status = enum(u32) {
    ok = 0,
    end = 1,
    null_argument = 2,
    invalid_options = 3,
    unsupported = 4,
    io = 5,
    not_evtx = 6,
    callback_aborted = 7,
    bad_state = 8,
    internal = 9,
    not_implemented = 10,
    incomplete_chunk = 16,
    bad_chunk_magic = 17,
    bad_chunk_header_checksum = 18,
    bad_chunk_free_space_offset = 19,
    bad_chunk_records_checksum = 20,
    bad_string_table = 21,
    bad_record_magic = 22,
    truncated_record_header = 23,
    bad_record_timestamp = 24,
    bad_record_size = 25,
    bad_binxml = 26,

    fn fromKind(kind: chunk.Kind) evtx_status {
        return @enumFromInt(16 + @as(u32, @intFromEnum(kind)));
    }
};

comptime {
    // The error KINDs are declared in the same order on both sides.
    std.debug.assert(@intFromEnum(evtx_status.fromKind(.bad_binxml)) == 26);
    std.debug.assert(@intFromEnum(evtx_status.fromKind(.incomplete_chunk)) == 16);
}

/// C: evtx_format
pub const evtx_format = enum(u32) { xml = 0, json = 1, jsonl = 2 };

/// C: evtx_parser (opaque handle)
pub const evtx_parser = opaque {};

/// C: evtx_event_range
pub const evtx_event_range = extern struct {
    first: u64,
    last: u64,
};

/// C: evtx_options
pub const evtx_options = extern struct {
    format: u32,
    threads: u32,
    indent: u8,
    separate_json_attributes: u8,
    show_record_number: u8,
    validate_checksums: u8,
    recover_records: u8,
    stop_after_error: u8,
    reserved: [2]u8,
    ansi_codec: ?[*:0]const u8,
    event_ranges: ?[*]const evtx_event_range,
    event_ranges_count: usize,
};

/// C: evtx_record
pub const evtx_record = extern struct {
    data: ?[*]const u8,
    data_len: usize,
    record_id: u64,
    filetime: u64,
    file_offset: u64,
    chunk_index: u32,
    status: u32,
    message: ?[*:0]const u8,
    recovered: u8,
};

/// C: evtx_batch
pub const evtx_batch = extern struct {
    count: usize,
    data: ?[*]const u8,
    offsets: ?[*]const u64,
    record_ids: ?[*]const u64,
    filetimes: ?[*]const u64,
    file_offsets: ?[*]const u64,
    chunk_indexes: ?[*]const u32,
    statuses: ?[*]const u32,
    recovered: ?[*]const u8,
};

/// C: evtx_stats
pub const evtx_stats = extern struct {
    records_ok: u64,
    records_failed: u64,
    bytes_written: u64,
};

/// C: evtx_write_fn
pub const evtx_write_fn = ?*const fn (?*anyopaque, ?[*]const u8, usize) callconv(.c) i32;
/// C: evtx_error_fn
pub const evtx_error_fn = ?*const fn (?*anyopaque, ?*const evtx_record) callconv(.c) i32;

const gpa = std.heap.c_allocator;

/// The detail of the last failing call, per thread as the header promises. The buffer hangs
/// off a pthread key rather than a Zig `threadlocal`: thread-local storage of a dlopen'ed Zig
/// library faulted under Python's ctypes (compare/capi-tests/smoke.py), a pthread key does not.
const ErrorBuffer = [256:0]u8;
var error_key: std.c.pthread_key_t = undefined;
var error_key_ready = false;
var error_key_once = std.once(createErrorKey);

fn createErrorKey() void {
    error_key_ready = std.c.pthread_key_create(&error_key, freeErrorBuffer) == .SUCCESS;
}

fn freeErrorBuffer(buffer: *anyopaque) callconv(.c) void {
    std.c.free(buffer);
}

/// This thread's buffer, or null when there is none yet and `create` is false (or creating
/// it failed: then the detail is dropped, the status still returned).
fn errorBuffer(create: bool) ?*ErrorBuffer {
    error_key_once.call();
    if (!error_key_ready) return null;
    if (std.c.pthread_getspecific(error_key)) |existing| return @ptrCast(@alignCast(existing));
    if (!create) return null;
    const raw = std.c.malloc(@sizeOf(ErrorBuffer)) orelse return null;
    const buffer: *ErrorBuffer = @ptrCast(@alignCast(raw));
    buffer.* = [_:0]u8{0} ** 256;
    if (std.c.pthread_setspecific(error_key, raw) != 0) {
        std.c.free(raw);
        return null;
    }
    return buffer;
}

fn fail(status: evtx_status, comptime fmt: []const u8, args: anytype) evtx_status {
    const buffer = errorBuffer(true) orelse return status;
    _ = std.fmt.bufPrintZ(buffer, fmt, args) catch {
        buffer[buffer.len - 1] = 0;
    };
    return status;
}

/// The state behind an `evtx_parser` handle.
const Parser = struct {
    /// Lent bytes (`open_buffer`) or a file read by chunk windows (`open_path`).
    input: dump.Input,
    /// Set when the parser opened the file itself (closed with the parser).
    owned: ?std.fs.File,
    settings: dump.Settings,
    events: []dump.Range,
    threads: usize,
    stop_after_error: bool,
    order: []u32,
    /// Next job (index in `order`) to render.
    job: usize = 0,
    /// Pull state: the current chunk's result and the next entry in it.
    renderer: ?*dump.Renderer = null,
    result: dump.Result,
    entry: usize = 0,
    failed: bool = false,
    /// The columns behind the last `evtx_batch`.
    batch: Columns = .{},
    /// A fatal failure met after a batch had entries: reported by the next call.
    pending: ?evtx_status = null,

    fn destroy(p: *Parser) void {
        p.batch.deinit();
        if (p.renderer) |r| {
            r.deinit();
            gpa.destroy(r);
        }
        p.result.deinit();
        gpa.free(p.order);
        gpa.free(p.events);
        if (p.owned) |f| f.close();
        gpa.destroy(p);
    }
};

fn handle(p: *Parser) *evtx_parser {
    return @ptrCast(p);
}

fn state(h: *evtx_parser) *Parser {
    return @ptrCast(@alignCast(h));
}

pub export fn evtx_abi_version() callconv(.c) u32 {
    return EVTX_ABI_VERSION;
}

pub export fn evtx_backend_name() callconv(.c) [*:0]const u8 {
    return "zig";
}

pub export fn evtx_backend_version() callconv(.c) [*:0]const u8 {
    return "0.1.0";
}

pub export fn evtx_status_name(status: u32) callconv(.c) [*:0]const u8 {
    if (status >= 16 and status <= 26) {
        const kind: chunk.Kind = @enumFromInt(status - 16);
        return kindName(kind);
    }
    return switch (status) {
        0 => "ok",
        1 => "end",
        2 => "null argument",
        3 => "invalid options",
        4 => "unsupported",
        5 => "io error",
        6 => "not an evtx file",
        7 => "callback aborted",
        8 => "bad state",
        9 => "internal error",
        10 => "not implemented",
        else => "unknown status",
    };
}

fn kindName(kind: chunk.Kind) [*:0]const u8 {
    return switch (kind) {
        inline else => |k| comptime blk: {
            const text = chunk.Kind.text(k);
            break :blk (text ++ "\x00")[0..text.len :0];
        },
    };
}

pub export fn evtx_last_error() callconv(.c) [*:0]const u8 {
    const buffer = errorBuffer(false) orelse return "";
    return buffer;
}

pub export fn evtx_options_init(options: ?*evtx_options) callconv(.c) void {
    const o = options orelse return;
    o.* = .{
        .format = @intFromEnum(evtx_format.xml),
        .threads = 0,
        .indent = 1,
        .separate_json_attributes = 0,
        .show_record_number = 1,
        .validate_checksums = 0,
        .recover_records = 0,
        .stop_after_error = 0,
        .reserved = .{ 0, 0 },
        .ansi_codec = null,
        .event_ranges = null,
        .event_ranges_count = 0,
    };
}

pub export fn evtx_parser_open_path(path: ?[*:0]const u8, options: ?*const evtx_options, out: ?*?*evtx_parser) callconv(.c) u32 {
    const o = out orelse return @intFromEnum(fail(.null_argument, "out is NULL", .{}));
    o.* = null;
    const p = path orelse return @intFromEnum(fail(.null_argument, "path is NULL", .{}));
    // Read-only, and read by 64 KiB windows: never the whole file in memory (PERF.md H10).
    const file = std.fs.cwd().openFile(std.mem.span(p), .{}) catch |e|
        return @intFromEnum(fail(.io, "Failed to open file {s}: {s}", .{ p, @errorName(e) }));
    const in = dump.Input.fromFile(file) catch |e| {
        file.close();
        return @intFromEnum(fail(.io, "Failed to open file {s}: {s}", .{ p, @errorName(e) }));
    };
    return @intFromEnum(open(in, file, options, o));
}

pub export fn evtx_parser_open_buffer(data: ?[*]const u8, len: usize, options: ?*const evtx_options, out: ?*?*evtx_parser) callconv(.c) u32 {
    const o = out orelse return @intFromEnum(fail(.null_argument, "out is NULL", .{}));
    o.* = null;
    const d = data orelse return @intFromEnum(fail(.null_argument, "data is NULL", .{}));
    return @intFromEnum(open(dump.Input.fromBytes(d[0..len]), null, options, o));
}

fn open(in: dump.Input, owned: ?std.fs.File, options: ?*const evtx_options, out: *?*evtx_parser) evtx_status {
    var defaults: evtx_options = undefined;
    evtx_options_init(&defaults);
    const o = options orelse &defaults;
    const status = openChecked(in, owned, o, out);
    if (status != .ok) if (owned) |f| f.close();
    return status;
}

fn openChecked(in: dump.Input, owned: ?std.fs.File, o: *const evtx_options, out: *?*evtx_parser) evtx_status {
    if (o.format > 2) return fail(.invalid_options, "unknown format {d}", .{o.format});
    if (o.reserved[0] != 0 or o.reserved[1] != 0) return fail(.invalid_options, "reserved bytes must be zero", .{});
    if (o.event_ranges == null and o.event_ranges_count != 0) return fail(.invalid_options, "event_ranges is NULL", .{});
    var settings: dump.Settings = .{};
    if (o.ansi_codec) |label| {
        settings.ansi = evtx.code_pages.lookup(std.mem.span(label)) orelse
            return fail(.invalid_options, "unknown or unsupported ANSI code page `{s}`", .{label});
    }
    const format: evtx_format = @enumFromInt(o.format);
    settings.format = switch (format) {
        .xml => .xml,
        .json => .json,
        .jsonl => .jsonl,
    };
    settings.indent = o.indent != 0 and format != .jsonl;
    settings.show_record_number = o.show_record_number != 0 and format != .jsonl;
    settings.separate_attributes = o.separate_json_attributes != 0;
    settings.validate_checksums = o.validate_checksums != 0;
    settings.recover_records = o.recover_records != 0;
    var block: [evtx.file_header.block_size]u8 = undefined;
    const header = evtx.file_header.parseBlock(in.read(0, &block), in.size) catch |e|
        return fail(.not_evtx, "Failed to parse evtx file header: {s}", .{@errorName(e)});
    const events = gpa.alloc(dump.Range, o.event_ranges_count) catch return fail(.internal, "out of memory", .{});
    for (events, 0..) |*r, i| r.* = .{ .first = o.event_ranges.?[i].first, .last = o.event_ranges.?[i].last };
    settings.events = events;
    const order = dump.chunkOrder(gpa, &in, &header, &settings) catch {
        gpa.free(events);
        return fail(.internal, "out of memory", .{});
    };
    const p = gpa.create(Parser) catch {
        gpa.free(events);
        gpa.free(order);
        return fail(.internal, "out of memory", .{});
    };
    p.* = .{
        .input = in,
        .owned = owned,
        .settings = settings,
        .events = events,
        .threads = if (o.threads == 0) std.Thread.getCpuCount() catch 1 else o.threads,
        .stop_after_error = o.stop_after_error != 0,
        .order = order,
        .result = dump.Result.init(gpa),
    };
    p.settings.events = p.events;
    out.* = handle(p);
    return .ok;
}

fn fillRecord(r: *evtx_record, res: *const dump.Result, e: *const dump.Entry) evtx_status {
    const status: evtx_status = if (e.kind) |k| evtx_status.fromKind(k) else .ok;
    r.* = .{
        .data = if (status == .ok) res.out.list.items.ptr + e.start else null,
        .data_len = if (status == .ok) e.len else 0,
        .record_id = e.record_id orelse EVTX_RECORD_ID_UNKNOWN,
        .filetime = e.filetime,
        .file_offset = e.file_offset,
        .chunk_index = e.slot,
        .status = @intFromEnum(status),
        .message = if (status == .ok) "" else e.detail.ptr,
        .recovered = @intFromBool(status == .ok and e.recovered),
    };
    return status;
}

pub export fn evtx_parser_next(parser: ?*evtx_parser, record: ?*evtx_record) callconv(.c) u32 {
    const h = parser orelse return @intFromEnum(fail(.null_argument, "parser is NULL", .{}));
    const r = record orelse return @intFromEnum(fail(.null_argument, "record is NULL", .{}));
    const p = state(h);
    if (p.failed) return @intFromEnum(fail(.bad_state, "the parser failed earlier", .{}));
    while (true) {
        while (p.entry < p.result.entries.items.len) {
            const e = &p.result.entries.items[p.entry];
            p.entry += 1;
            if (e.kind == null and !e.printed) continue;
            return @intFromEnum(fillRecord(r, &p.result, e));
        }
        if (p.job >= p.order.len) return @intFromEnum(evtx_status.end);
        const renderer = p.renderer orelse blk: {
            const new = gpa.create(dump.Renderer) catch {
                p.failed = true;
                return @intFromEnum(fail(.internal, "out of memory", .{}));
            };
            new.init(gpa, &p.settings);
            p.renderer = new;
            break :blk new;
        };
        renderer.renderChunk(&p.input, p.order[p.job], &p.result) catch {
            p.failed = true;
            return @intFromEnum(fail(.internal, "out of memory", .{}));
        };
        p.job += 1;
        p.entry = 0;
    }
}

/// The storage of `evtx_batch`, reused from batch to batch. Invariant: `offsets` has one
/// entry more than each per-entry column, and its last entry is `data.items.len`.
const Columns = struct {
    data: std.ArrayList(u8) = .empty,
    offsets: std.ArrayList(u64) = .empty,
    record_ids: std.ArrayList(u64) = .empty,
    filetimes: std.ArrayList(u64) = .empty,
    file_offsets: std.ArrayList(u64) = .empty,
    chunk_indexes: std.ArrayList(u32) = .empty,
    statuses: std.ArrayList(u32) = .empty,
    recovered: std.ArrayList(u8) = .empty,

    fn deinit(c: *Columns) void {
        c.data.deinit(gpa);
        c.offsets.deinit(gpa);
        c.record_ids.deinit(gpa);
        c.filetimes.deinit(gpa);
        c.file_offsets.deinit(gpa);
        c.chunk_indexes.deinit(gpa);
        c.statuses.deinit(gpa);
        c.recovered.deinit(gpa);
    }

    fn clear(c: *Columns) error{OutOfMemory}!void {
        c.data.clearRetainingCapacity();
        c.offsets.clearRetainingCapacity();
        c.record_ids.clearRetainingCapacity();
        c.filetimes.clearRetainingCapacity();
        c.file_offsets.clearRetainingCapacity();
        c.chunk_indexes.clearRetainingCapacity();
        c.statuses.clearRetainingCapacity();
        c.recovered.clearRetainingCapacity();
        try c.offsets.append(gpa, 0);
    }

    /// Appends one pulled record (`evtx_parser_next`'s output) with its status.
    fn push(c: *Columns, r: *const evtx_record) error{OutOfMemory}!void {
        if (r.status == @intFromEnum(evtx_status.ok)) {
            if (r.data) |data| try c.data.appendSlice(gpa, data[0..r.data_len]);
        } else {
            try c.data.appendSlice(gpa, std.mem.span(r.message orelse ""));
        }
        try c.offsets.append(gpa, c.data.items.len);
        try c.record_ids.append(gpa, r.record_id);
        try c.filetimes.append(gpa, r.filetime);
        try c.file_offsets.append(gpa, r.file_offset);
        try c.chunk_indexes.append(gpa, r.chunk_index);
        try c.statuses.append(gpa, r.status);
        try c.recovered.append(gpa, r.recovered);
        std.debug.assert(c.offsets.items.len == c.statuses.items.len + 1);
    }

    fn view(c: *const Columns) evtx_batch {
        std.debug.assert(c.offsets.items.len == c.statuses.items.len + 1);
        return .{
            .count = c.statuses.items.len,
            .data = c.data.items.ptr,
            .offsets = c.offsets.items.ptr,
            .record_ids = c.record_ids.items.ptr,
            .filetimes = c.filetimes.items.ptr,
            .file_offsets = c.file_offsets.items.ptr,
            .chunk_indexes = c.chunk_indexes.items.ptr,
            .statuses = c.statuses.items.ptr,
            .recovered = c.recovered.items.ptr,
        };
    }
};

const empty_batch: evtx_batch = .{
    .count = 0,
    .data = null,
    .offsets = null,
    .record_ids = null,
    .filetimes = null,
    .file_offsets = null,
    .chunk_indexes = null,
    .statuses = null,
    .recovered = null,
};

/// Many `evtx_parser_next` results at once, as columns (include/evtx.h). Built on
/// `evtx_parser_next`, so the two cannot disagree on order, filtering or errors.
pub export fn evtx_parser_next_batch(parser: ?*evtx_parser, max_entries: usize, max_bytes: usize, batch: ?*evtx_batch) callconv(.c) u32 {
    const h = parser orelse return @intFromEnum(fail(.null_argument, "parser is NULL", .{}));
    const out = batch orelse return @intFromEnum(fail(.null_argument, "batch is NULL", .{}));
    out.* = empty_batch;
    const p = state(h);
    if (p.pending) |status| {
        p.pending = null;
        return @intFromEnum(status);
    }
    p.batch.clear() catch {
        p.failed = true;
        return @intFromEnum(fail(.internal, "out of memory", .{}));
    };
    out.* = p.batch.view();
    const entries_limit = @max(max_entries, 1);
    const bytes_limit = if (max_bytes == 0) std.math.maxInt(usize) else max_bytes;
    while (p.batch.statuses.items.len < entries_limit and p.batch.data.items.len < bytes_limit) {
        var r: evtx_record = undefined;
        const status = evtx_parser_next(h, &r);
        if (status == @intFromEnum(evtx_status.end)) break;
        if (status != @intFromEnum(evtx_status.ok) and status < @intFromEnum(evtx_status.incomplete_chunk)) {
            // A failure of the call: the entries taken so far are returned first.
            if (p.batch.statuses.items.len == 0) return status;
            p.pending = @enumFromInt(status);
            break;
        }
        p.batch.push(&r) catch {
            p.failed = true;
            p.batch.clear() catch {};
            out.* = empty_batch;
            return @intFromEnum(fail(.internal, "out of memory", .{}));
        };
    }
    out.* = p.batch.view();
    return @intFromEnum(if (out.count == 0) evtx_status.end else evtx_status.ok);
}

const DumpContext = struct {
    write: *const fn (?*anyopaque, ?[*]const u8, usize) callconv(.c) i32,
    on_error: evtx_error_fn,
    user_data: ?*anyopaque,
    stop_after_error: bool,
    stats: evtx_stats = .{ .records_ok = 0, .records_failed = 0, .bytes_written = 0 },
    stopped_status: ?evtx_status = null,

    /// Writes entries `from..` of `res`, batching consecutive records into one call.
    fn entries(c: *DumpContext, res: *const dump.Result, from: usize) error{Stop}!void {
        var run_start: ?usize = null;
        var run_end: usize = 0;
        for (res.entries.items[from..]) |*e| {
            if (e.kind == null) {
                if (!e.printed) continue;
                if (run_start == null) run_start = e.start;
                run_end = e.start + e.len;
                c.stats.records_ok += 1;
                continue;
            }
            try c.flush(res, &run_start, run_end);
            c.stats.records_failed += 1;
            var rec: evtx_record = undefined;
            const status = fillRecord(&rec, res, e);
            if (c.on_error) |cb| {
                if (cb(c.user_data, &rec) != 0) {
                    c.stopped_status = .callback_aborted;
                    return error.Stop;
                }
            }
            if (c.stop_after_error and !(res.partial and e.kind == .incomplete_chunk)) {
                c.stopped_status = status;
                return error.Stop;
            }
        }
        try c.flush(res, &run_start, run_end);
    }

    fn flush(c: *DumpContext, res: *const dump.Result, run_start: *?usize, run_end: usize) error{Stop}!void {
        const start = run_start.* orelse return;
        run_start.* = null;
        const bytes = res.out.list.items[start..run_end];
        c.stats.bytes_written += bytes.len;
        if (c.write(c.user_data, bytes.ptr, bytes.len) != 0) {
            c.stopped_status = .callback_aborted;
            return error.Stop;
        }
    }

    fn consume(context: *anyopaque, result: *const dump.Result) anyerror!void {
        const c: *DumpContext = @ptrCast(@alignCast(context));
        try c.entries(result, 0);
    }
};

pub export fn evtx_parser_dump(parser: ?*evtx_parser, write: evtx_write_fn, on_error: evtx_error_fn, user_data: ?*anyopaque, stats: ?*evtx_stats) callconv(.c) u32 {
    var ctx: DumpContext = .{ .write = undefined, .on_error = on_error, .user_data = user_data, .stop_after_error = false };
    defer if (stats) |s| {
        s.* = ctx.stats;
    };
    const h = parser orelse return @intFromEnum(fail(.null_argument, "parser is NULL", .{}));
    ctx.write = write orelse return @intFromEnum(fail(.null_argument, "write is NULL", .{}));
    const p = state(h);
    if (p.failed) return @intFromEnum(fail(.bad_state, "the parser failed or was stopped earlier", .{}));
    ctx.stop_after_error = p.stop_after_error;
    // First what remains of a chunk that was partly pulled.
    if (p.entry < p.result.entries.items.len) {
        const from = p.entry;
        p.entry = p.result.entries.items.len;
        ctx.entries(&p.result, from) catch {
            p.failed = true;
            return @intFromEnum(ctx.stopped_status.?);
        };
    }
    const remaining = p.order[p.job..];
    p.job = p.order.len;
    dump.run(gpa, &p.input, remaining, &p.settings, p.threads, .{ .context = &ctx, .consume = DumpContext.consume }) catch |e| {
        p.failed = true;
        if (ctx.stopped_status) |s| return @intFromEnum(s);
        return @intFromEnum(fail(.internal, "{s}", .{@errorName(e)}));
    };
    return @intFromEnum(evtx_status.ok);
}

pub export fn evtx_parser_free(parser: ?*evtx_parser) callconv(.c) void {
    const h = parser orelse return;
    state(h).destroy();
}
