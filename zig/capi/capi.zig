//! The C ABI of the Zig engine: every function, type and constant of include/evtx.h, with
//! the same names (checked at compile time by compare/harness/abi_conformance.zig).
//!
//! Thin layer: it converts C types, owns the parser handle and calls `dump`. Nothing here
//! panics; allocation failures become `EVTX_STATUS_INTERNAL`.
const std = @import("std");
const builtin = @import("builtin");
const root = @import("root");
const evtx = @import("evtx");
const dump = evtx.dump;
const chunk = evtx.chunk;
const system = @import("system.zig");
const timestamps = @import("timestamps.zig");

pub const EVTX_ABI_VERSION: u32 = 3;
pub const EVTX_RECORD_ID_UNKNOWN: u64 = std.math.maxInt(u64);
pub const EVTX_CHECKSUM_UNCHECKED: u8 = @intFromEnum(evtx.provenance.Checksum.unchecked);
pub const EVTX_CHECKSUM_OK: u8 = @intFromEnum(evtx.provenance.Checksum.ok);
pub const EVTX_CHECKSUM_BAD: u8 = @intFromEnum(evtx.provenance.Checksum.bad);

// The engine's limits under the header's names: the conformance test holds each to the value
// rust/evtx-abi/src/limits.rs gives it there.
pub const EVTX_LIMIT_THREADS = evtx.limits.threads_max;
pub const EVTX_LIMIT_RECORD_OUTPUT_BYTES = evtx.limits.record_output_bytes_max;
pub const EVTX_LIMIT_CHUNK_OUTPUT_BYTES = evtx.limits.chunk_output_bytes_max;
pub const EVTX_LIMIT_RECORD_NODES = evtx.limits.record_nodes_max;
pub const EVTX_LIMIT_ELEMENT_DEPTH = evtx.limits.element_depth_max;
pub const EVTX_LIMIT_STREAM_NESTING = evtx.limits.stream_nesting_max;
pub const EVTX_LIMIT_RENDER_DEPTH = evtx.limits.render_depth_max;
pub const EVTX_LIMIT_PROGRAMS = evtx.limits.programs_max;
pub const EVTX_LIMIT_PROGRAM_BYTES = evtx.limits.program_bytes_max;
pub const EVTX_LIMIT_INSTANCE_VALUES = evtx.limits.instance_values_max;
pub const EVTX_LIMIT_PROGRAM_VALUES = evtx.limits.program_values_max;
pub const EVTX_LIMIT_PROGRAM_ARRAY_ITEMS = evtx.limits.program_array_items_max;
pub const EVTX_LIMIT_DEFER_DEPTH = evtx.limits.defer_depth_max;

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

    /// The status of an engine error: the same name (the KINDs are statuses 16.. by name, so
    /// neither side counts).
    fn fromKind(kind: evtx.errors.ErrorKind) evtx_status {
        return switch (kind) {
            inline else => |k| comptime @field(evtx_status, @tagName(k)),
        };
    }

    /// The engine error this status reports, if it is one of the KINDs.
    fn toKind(status: evtx_status) ?evtx.errors.ErrorKind {
        return switch (status) {
            inline else => |s| comptime if (@hasField(evtx.errors.ErrorKind, @tagName(s)))
                @field(evtx.errors.ErrorKind, @tagName(s))
            else
                null,
        };
    }

    /// What `evtx_status_name` returns (rust/evtx-abi's `evtx_status::name`, held to it by
    /// compare/harness/abi_conformance.zig): for a KIND the engine's own words.
    fn name(status: evtx_status) [:0]const u8 {
        return switch (status) {
            .ok => "ok",
            .end => "end",
            .null_argument => "null argument",
            .invalid_options => "invalid options",
            .unsupported => "unsupported option",
            .io => "i/o error",
            .not_evtx => "not an evtx file",
            .callback_aborted => "callback aborted",
            .bad_state => "bad state",
            .internal => "internal error",
            .not_implemented => "not implemented",
            inline else => |s| comptime blk: {
                const text = evtx.errors.ErrorKind.text(s.toKind().?);
                break :blk (text ++ "\x00")[0..text.len :0];
            },
        };
    }
};

comptime {
    // Every engine KIND is a status, and the KINDs are the statuses from incomplete_chunk on,
    // in the order of shared-fixtures/README.md's table.
    for (std.enums.values(evtx.errors.ErrorKind), 0..) |kind, index| {
        const status = @intFromEnum(evtx_status.fromKind(kind));
        std.debug.assert(status == @intFromEnum(evtx_status.incomplete_chunk) + index);
    }
    for (std.enums.values(evtx_status)) |status| {
        std.debug.assert((status.toKind() != null) ==
            (@intFromEnum(status) >= @intFromEnum(evtx_status.incomplete_chunk)));
    }
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

/// C: evtx_value_range
pub const evtx_value_range = extern struct {
    first: u32,
    last: u32,
};

/// C: EVTX_OPTIONS_VERSION_0, the struct up to `wevt_cache_path` (before the filters).
pub const EVTX_OPTIONS_VERSION_0: u8 = 0;
/// C: EVTX_OPTIONS_VERSION_1, the whole struct, the filters included.
pub const EVTX_OPTIONS_VERSION_1: u8 = 1;

/// C: evtx_options. It only grows at its end; `version` says how much of it the caller has.
pub const evtx_options = extern struct {
    format: u32,
    threads: u32,
    indent: u8,
    separate_json_attributes: u8,
    show_record_number: u8,
    validate_checksums: u8,
    recover_records: u8,
    stop_after_error: u8,
    version: u8,
    reserved: u8,
    ansi_codec: ?[*:0]const u8,
    event_ranges: ?[*]const evtx_event_range,
    event_ranges_count: usize,
    mta_path: ?[*:0]const u8,
    wevt_cache_path: ?[*:0]const u8,
    // Version 1.
    event_ids: ?[*]const evtx_value_range,
    event_ids_count: usize,
    levels: ?[*]const evtx_value_range,
    levels_count: usize,
    providers: ?[*]const ?[*:0]const u8,
    providers_count: usize,
    channels: ?[*]const ?[*:0]const u8,
    channels_count: usize,
    since: u64,
    until: u64,
    since_set: u8,
    until_set: u8,
    reserved_v1: [6]u8,
};

/// Bytes of a version 0 `evtx_options`: what a caller built before the filters has, and all
/// the library reads or writes of it.
const options_v0_size = @offsetOf(evtx_options, "event_ids");

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
    checksum: u8,
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

/// C: EVTX_SYSTEM_PROVIDER and the other `evtx_batch_system.present` bits.
pub const EVTX_SYSTEM_PROVIDER: u8 = system.PROVIDER;
pub const EVTX_SYSTEM_EVENT_ID: u8 = system.EVENT_ID;
pub const EVTX_SYSTEM_LEVEL: u8 = system.LEVEL;
pub const EVTX_SYSTEM_CHANNEL: u8 = system.CHANNEL;
pub const EVTX_SYSTEM_COMPUTER: u8 = system.COMPUTER;

/// C: evtx_batch_system
pub const evtx_batch_system = extern struct {
    count: usize,
    provider_data: ?[*]const u8,
    provider_offsets: ?[*]const u64,
    channel_data: ?[*]const u8,
    channel_offsets: ?[*]const u64,
    computer_data: ?[*]const u8,
    computer_offsets: ?[*]const u64,
    event_ids: ?[*]const u32,
    levels: ?[*]const u8,
    present: ?[*]const u8,
};

/// C: evtx_batch_texts
pub const evtx_batch_texts = extern struct {
    count: usize,
    data: ?[*]const u8,
    offsets: ?[*]const u64,
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

/// Where the library allocates: malloc, since it lives inside C processes. A program that
/// links this file into itself may pick another allocator by declaring
/// `pub const evtx_capi_allocator: std.mem.Allocator` in its root (the Zig fuzz driver's leak
/// check counts every byte through a `DebugAllocator`); the unit tests below use
/// `std.testing.allocator`, which fails a test that leaks. The per-thread error buffer is
/// not counted: it lives as long as its thread (malloc, freed by the pthread key).
const gpa: std.mem.Allocator = if (builtin.is_test)
    std.testing.allocator
else if (@hasDecl(root, "evtx_capi_allocator"))
    root.evtx_capi_allocator
else
    std.heap.c_allocator;

/// The detail of the last failing call, per thread as the header promises. The buffer hangs
/// off a pthread key (a fiber-local slot on Windows, whose callback frees it at the thread's
/// exit as the key's destructor does) rather than a Zig `threadlocal`: thread-local storage
/// of a dlopen'ed Zig library faulted under Python's ctypes (compare/capi-tests/smoke.py), a
/// pthread key does not.
const ErrorBuffer = [256:0]u8;
var error_key_ready = false;
var error_key_once = std.once(createErrorKey);

const thread_key = if (builtin.os.tag == .windows) struct {
    const w = std.os.windows;
    const Callback = *const fn (?*anyopaque) callconv(.winapi) void;
    extern "kernel32" fn FlsAlloc(callback: ?Callback) callconv(.winapi) w.DWORD;
    extern "kernel32" fn FlsGetValue(index: w.DWORD) callconv(.winapi) ?*anyopaque;
    extern "kernel32" fn FlsSetValue(index: w.DWORD, value: ?*anyopaque) callconv(.winapi) w.BOOL;
    const out_of_indexes = std.math.maxInt(w.DWORD);
    var key: w.DWORD = out_of_indexes;

    fn create() bool {
        key = FlsAlloc(free);
        return key != out_of_indexes;
    }
    fn free(buffer: ?*anyopaque) callconv(.winapi) void {
        std.c.free(buffer);
    }
    fn get() ?*anyopaque {
        return FlsGetValue(key);
    }
    fn set(value: *anyopaque) bool {
        return FlsSetValue(key, value) != 0;
    }
} else struct {
    var key: std.c.pthread_key_t = undefined;

    fn create() bool {
        return std.c.pthread_key_create(&key, free) == .SUCCESS;
    }
    fn free(buffer: *anyopaque) callconv(.c) void {
        std.c.free(buffer);
    }
    fn get() ?*anyopaque {
        return std.c.pthread_getspecific(key);
    }
    fn set(value: *anyopaque) bool {
        return std.c.pthread_setspecific(key, value) == 0;
    }
};

fn createErrorKey() void {
    error_key_ready = thread_key.create();
}

/// This thread's buffer, or null when there is none yet and `create` is false (or creating
/// it failed: then the detail is dropped, the status still returned).
fn errorBuffer(create: bool) ?*ErrorBuffer {
    error_key_once.call();
    if (!error_key_ready) return null;
    if (thread_key.get()) |existing| return @ptrCast(@alignCast(existing));
    if (!create) return null;
    const raw = std.c.malloc(@sizeOf(ErrorBuffer)) orelse return null;
    const buffer: *ErrorBuffer = @ptrCast(@alignCast(raw));
    buffer.* = [_:0]u8{0} ** 256;
    if (!thread_key.set(raw)) {
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
    settings: evtx.options.Options,
    event_ranges: []evtx.options.Range,
    /// The filter's lists, copied at open; `settings.filter` points here.
    filter: OwnedFilter = .{},
    threads: usize,
    stop_after_error: bool,
    order: dump.ChunkOrder,
    /// `mta_path`, read at open; `settings.mta` points here.
    mta: ?evtx.mta.MtaFile = null,
    /// `wevt_cache_path`, read at open; `settings.wevt_cache` points here.
    wevt_cache: ?evtx.wevt_cache.WevtCache = null,
    /// Next job (index in `order`) to render.
    job: usize = 0,
    /// Pull state: a renderer per worker (made on the first pull) and the last group of
    /// rendered chunks, `results[0..filled]`, handed out from `results[current]`, entry `entry`.
    renderers: []*dump.Renderer = &.{},
    results: []dump.ChunkResult = &.{},
    filled: usize = 0,
    current: usize = 0,
    entry: usize = 0,
    failed: bool = false,
    /// The columns behind the last `evtx_batch`.
    batch: Columns = .{},
    /// A fatal failure met after a batch had entries: reported by the next call.
    pending: ?evtx_status = null,
    /// The columns behind the last `evtx_batch_system`.
    system: system.Columns = .{},
    /// The texts behind the last `evtx_parser_batch_timestamps`.
    timestamps: timestamps.Timestamps = .{},

    fn destroy(p: *Parser) void {
        p.system.deinit(gpa);
        p.timestamps.deinit(gpa);
        p.batch.deinit();
        for (p.renderers) |r| {
            r.deinit();
            gpa.destroy(r);
        }
        gpa.free(p.renderers);
        for (p.results) |*res| res.deinit();
        gpa.free(p.results);
        gpa.free(p.event_ranges);
        p.filter.deinit();
        if (p.mta) |*m| m.deinit();
        if (p.wevt_cache) |*c| c.deinit(gpa);
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
    const known = std.meta.intToEnum(evtx_status, status) catch return "unknown status";
    return known.name();
}

pub export fn evtx_last_error() callconv(.c) [*:0]const u8 {
    const buffer = errorBuffer(false) orelse return "";
    return buffer;
}

/// The defaults of every field, as version 1.
const options_defaults: evtx_options = .{
    .format = @intFromEnum(evtx_format.xml),
    .threads = 0,
    .indent = 1,
    .separate_json_attributes = 0,
    .show_record_number = 1,
    .validate_checksums = 0,
    .recover_records = 0,
    .stop_after_error = 0,
    .version = EVTX_OPTIONS_VERSION_1,
    .reserved = 0,
    .ansi_codec = null,
    .event_ranges = null,
    .event_ranges_count = 0,
    .mta_path = null,
    .wevt_cache_path = null,
    .event_ids = null,
    .event_ids_count = 0,
    .levels = null,
    .levels_count = 0,
    .providers = null,
    .providers_count = 0,
    .channels = null,
    .channels_count = 0,
    .since = 0,
    .until = 0,
    .since_set = 0,
    .until_set = 0,
    .reserved_v1 = .{0} ** 6,
};

/// Version 0: only the bytes of the version 0 struct are written (a caller built before the
/// filters has no more).
pub export fn evtx_options_init(options: ?*evtx_options) callconv(.c) void {
    const o = options orelse return;
    var defaults = options_defaults;
    defaults.version = EVTX_OPTIONS_VERSION_0;
    const to: [*]u8 = @ptrCast(o);
    const from: [*]const u8 = @ptrCast(&defaults);
    @memcpy(to[0..options_v0_size], from[0..options_v0_size]);
}

pub export fn evtx_options_init_v1(options: ?*evtx_options) callconv(.c) void {
    const o = options orelse return;
    o.* = options_defaults;
}

/// A copy of the caller's options: the bytes its `version` says it has, the defaults after
/// them; null for a version newer than the library's.
fn optionsCopy(o: *const evtx_options) ?evtx_options {
    const version = @as(*const u8, @ptrCast(&o.version)).*;
    const size: usize = switch (version) {
        EVTX_OPTIONS_VERSION_0 => options_v0_size,
        EVTX_OPTIONS_VERSION_1 => @sizeOf(evtx_options),
        else => return null,
    };
    var copy = options_defaults;
    const to: [*]u8 = @ptrCast(&copy);
    const from: [*]const u8 = @ptrCast(o);
    @memcpy(to[0..size], from[0..size]);
    return copy;
}

/// The filter's lists, owned by the parser (the caller's may go away after the open).
const OwnedFilter = struct {
    event_ids: []evtx.filter.Range = &.{},
    levels: []evtx.filter.Range = &.{},
    providers: [][]const u8 = &.{},
    channels: [][]const u8 = &.{},
    since: ?u64 = null,
    until: ?u64 = null,

    fn view(f: *const OwnedFilter) evtx.filter.Filter {
        return .{
            .event_ids = f.event_ids,
            .levels = f.levels,
            .providers = f.providers,
            .channels = f.channels,
            .since = f.since,
            .until = f.until,
        };
    }

    fn deinit(f: *OwnedFilter) void {
        gpa.free(f.event_ids);
        gpa.free(f.levels);
        for (f.providers) |name| gpa.free(name);
        gpa.free(f.providers);
        for (f.channels) |name| gpa.free(name);
        gpa.free(f.channels);
        f.* = .{};
    }
};

/// Copies and checks the filter fields of `o` (version 1) into `out`: `.ok`, else the
/// failure (`out` then holds nothing).
fn filterFrom(o: *const evtx_options, out: *OwnedFilter) evtx_status {
    out.* = .{};
    const status = filterCopy(o, out);
    if (status != .ok) out.deinit();
    return status;
}

fn filterCopy(o: *const evtx_options, out: *OwnedFilter) evtx_status {
    if (o.since_set != 0 and o.until_set != 0 and o.since >= o.until) {
        return fail(.invalid_options, "evtx_options.since must be earlier than until", .{});
    }
    out.since = if (o.since_set != 0) o.since else null;
    out.until = if (o.until_set != 0) o.until else null;
    inline for (.{ "event_ids", "levels" }) |name| {
        const count = @field(o, name ++ "_count");
        if (count != 0) {
            const items = @field(o, name) orelse return fail(
                .invalid_options,
                "evtx_options." ++ name ++ " is NULL but its count is not 0",
                .{},
            );
            const ranges = gpa.alloc(evtx.filter.Range, count) catch
                return fail(.internal, "out of memory", .{});
            @field(out, name) = ranges;
            for (ranges, items[0..count]) |*r, given| {
                if (given.first > given.last) return fail(
                    .invalid_options,
                    "evtx_options." ++ name ++ ": the range {d}-{d} is empty",
                    .{ given.first, given.last },
                );
                r.* = .{ .first = given.first, .last = given.last };
            }
        }
    }
    inline for (.{ "providers", "channels" }) |name| {
        const count = @field(o, name ++ "_count");
        if (count != 0) {
            const items = @field(o, name) orelse return fail(
                .invalid_options,
                "evtx_options." ++ name ++ " is NULL but its count is not 0",
                .{},
            );
            const names = gpa.alloc([]const u8, count) catch
                return fail(.internal, "out of memory", .{});
            @memset(names, &.{});
            @field(out, name) = names;
            for (names, items[0..count]) |*copy, given| {
                const text = std.mem.span(given orelse return fail(
                    .invalid_options,
                    "evtx_options." ++ name ++ ": a name is NULL",
                    .{},
                ));
                if (text.len == 0) return fail(
                    .invalid_options,
                    "evtx_options." ++ name ++ ": a name is empty",
                    .{},
                );
                if (!std.unicode.utf8ValidateSlice(text)) return fail(
                    .invalid_options,
                    "evtx_options." ++ name ++ ": a name is not UTF-8",
                    .{},
                );
                copy.* = gpa.dupe(u8, text) catch return fail(.internal, "out of memory", .{});
            }
        }
    }
    return .ok;
}

pub export fn evtx_parser_open_path(
    path: ?[*:0]const u8,
    options: ?*const evtx_options,
    out: ?*?*evtx_parser,
) callconv(.c) u32 {
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

pub export fn evtx_parser_open_buffer(
    data: ?[*]const u8,
    len: usize,
    options: ?*const evtx_options,
    out: ?*?*evtx_parser,
) callconv(.c) u32 {
    const o = out orelse return @intFromEnum(fail(.null_argument, "out is NULL", .{}));
    o.* = null;
    const d = data orelse return @intFromEnum(fail(.null_argument, "data is NULL", .{}));
    return @intFromEnum(open(dump.Input.fromBytes(d[0..len]), null, options, o));
}

fn open(
    in: dump.Input,
    owned: ?std.fs.File,
    options: ?*const evtx_options,
    out: *?*evtx_parser,
) evtx_status {
    const copy = if (options) |given| optionsCopy(given) orelse {
        if (owned) |f| f.close();
        return fail(.invalid_options, "evtx_options.version is newer than this library's 1", .{});
    } else options_defaults;
    const status = openChecked(in, owned, &copy, out);
    if (status != .ok) if (owned) |f| f.close();
    return status;
}

/// The format and the flags of `o` (checked: a known format), as the engine's settings.
fn setFlags(settings: *evtx.options.Options, o: *const evtx_options) void {
    const format: evtx_format = @enumFromInt(o.format);
    settings.format = switch (format) {
        .xml => .xml,
        .json => .json,
        .jsonl => .jsonl,
    };
    settings.indent = o.indent != 0 and format != .jsonl;
    settings.show_record_number = o.show_record_number != 0 and format != .jsonl;
    settings.separate_json_attributes = o.separate_json_attributes != 0;
    settings.validate_checksums = o.validate_checksums != 0;
    settings.recover_records = o.recover_records != 0;
}

fn openChecked(
    in: dump.Input,
    owned: ?std.fs.File,
    o: *const evtx_options,
    out: *?*evtx_parser,
) evtx_status {
    if (o.format > 2) return fail(.invalid_options, "unknown format {d}", .{o.format});
    if (o.reserved != 0 or !std.mem.allEqual(u8, &o.reserved_v1, 0)) return fail(
        .invalid_options,
        "reserved bytes must be zero",
        .{},
    );
    if (o.event_ranges == null and o.event_ranges_count != 0) return fail(
        .invalid_options,
        "event_ranges is NULL",
        .{},
    );
    var settings: evtx.options.Options = .{};
    if (o.ansi_codec) |label| {
        settings.ansi_codec = evtx.code_pages.lookup(std.mem.span(label)) orelse
            return fail(.invalid_options, "unknown or unsupported ANSI code page `{s}`", .{label});
    }
    var filter: OwnedFilter = undefined;
    const filter_status = filterFrom(o, &filter);
    if (filter_status != .ok) return filter_status;
    // Handed to the parser at the end; freed on every failure before.
    var filter_kept = false;
    defer if (!filter_kept) filter.deinit();
    setFlags(&settings, o);
    var block: [evtx.file_header.block_size]u8 = undefined;
    const head = in.read(0, &block);
    const header = evtx.file_header.parseBlock(head, in.size) catch |e| {
        // The header block size field, for a file shorter than it says (as the CLI's line).
        const field = if (head.len >= 42) std.mem.readInt(u16, head[40..42], .little) else 0;
        const fatal = evtx.errors.FatalError.fromHeader(e, in.size, field);
        return fail(.not_evtx, "{f}", .{fatal});
    };
    // After the file header, the cache before the MTA, as the CLI reads them.
    var cache: ?evtx.wevt_cache.WevtCache = null;
    if (o.wevt_cache_path) |path| {
        cache = @as(evtx.wevt_cache.WevtCache, undefined);
        const status = loadWevtCache(std.mem.span(path), &cache.?);
        if (status != .ok) return status;
    }
    var mta: ?evtx.mta.MtaFile = null;
    if (o.mta_path) |path| {
        mta = @as(evtx.mta.MtaFile, undefined);
        const status = loadMta(std.mem.span(path), &mta.?);
        if (status != .ok) {
            if (cache) |*c| c.deinit(gpa);
            return status;
        }
    }
    const events = gpa.alloc(
        evtx.options.Range,
        o.event_ranges_count,
    ) catch return fail(.internal, "out of memory", .{});
    for (events, 0..) |*r, i| r.* = .{
        .first = o.event_ranges.?[i].first,
        .last = o.event_ranges.?[i].last,
    };
    settings.event_ranges = events;
    const validate = settings.validate_checksums;
    const order = evtx.input.chunkOrder(gpa, &in, header.chunk_slots, validate) catch {
        gpa.free(events);
        if (mta) |*m| m.deinit();
        if (cache) |*c| c.deinit(gpa);
        return fail(.internal, "out of memory", .{});
    };
    const p = gpa.create(Parser) catch {
        gpa.free(events);
        if (mta) |*m| m.deinit();
        if (cache) |*c| c.deinit(gpa);
        return fail(.internal, "out of memory", .{});
    };
    p.* = .{
        .input = in,
        .owned = owned,
        .settings = settings,
        .event_ranges = events,
        .filter = filter,
        .threads = if (o.threads == 0) std.Thread.getCpuCount() catch 1 else o.threads,
        .stop_after_error = o.stop_after_error != 0,
        .order = order,
        .mta = mta,
        .wevt_cache = cache,
    };
    p.settings.event_ranges = p.event_ranges;
    p.settings.filter = p.filter.view();
    filter_kept = true;
    if (p.mta) |*m| p.settings.mta = m;
    if (p.wevt_cache) |*c| p.settings.wevt_cache = c;
    out.* = handle(p);
    return .ok;
}

/// Reads and parses `mta_path` into `mta`: `.ok`, or the failure with the CLI's text as the
/// last error, `.io` when the file cannot be read and `.invalid_options` when it is refused.
fn loadMta(path: []const u8, mta: *evtx.mta.MtaFile) evtx_status {
    const bytes = std.fs.cwd().readFileAlloc(gpa, path, std.math.maxInt(usize)) catch |e| {
        if (e == error.OutOfMemory) return fail(.internal, "out of memory", .{});
        return fail(.io, "failed to read `{s}`\n\nCaused by:\n    {s}", .{ path, @errorName(e) });
    };
    defer gpa.free(bytes);
    var diag: evtx.mta.Diagnostic = undefined;
    mta.* = evtx.mta.parse(gpa, bytes, &diag) catch |e| return switch (e) {
        error.OutOfMemory => fail(.internal, "out of memory", .{}),
        error.Invalid => fail(.invalid_options, "{f}", .{diag}),
    };
    return .ok;
}

/// Reads and indexes `wevt_cache_path` into `cache`: `.ok`, or the failure with the CLI's text
/// as the last error, `.io` when the file cannot be read and `.invalid_options` when refused.
fn loadWevtCache(path: []const u8, cache: *evtx.wevt_cache.WevtCache) evtx_status {
    var diag: evtx.wevt_cache.Diagnostic = undefined;
    cache.* = evtx.wevt_cache.WevtCache.load(gpa, std.fs.cwd(), path, &diag) catch |e| switch (e) {
        error.OutOfMemory => return fail(.internal, "out of memory", .{}),
        error.Invalid => return fail(switch (diag) {
            .io => .io,
            .file, .crim => .invalid_options,
        }, "{f}", .{diag.text(path)}),
    };
    return .ok;
}

fn fillRecord(
    r: *evtx_record,
    res: *const dump.ChunkResult,
    e: *const dump.RecordResult,
) evtx_status {
    const status: evtx_status = if (e.kind()) |k| evtx_status.fromKind(k) else .ok;
    const text = res.text(e);
    r.* = .{
        .data = if (status == .ok) text.ptr else null,
        .data_len = text.len,
        .record_id = e.record_id orelse EVTX_RECORD_ID_UNKNOWN,
        .filetime = e.filetime,
        .file_offset = e.file_offset,
        .chunk_index = e.slot,
        .status = @intFromEnum(status),
        .message = switch (e.outcome) {
            .rendered => "",
            .failed => |f| f.detail.ptr,
        },
        .recovered = @intFromBool(status == .ok and e.recovered),
        .checksum = if (status == .ok) @intFromEnum(e.checksum) else EVTX_CHECKSUM_UNCHECKED,
    };
    return status;
}

pub export fn evtx_parser_next(parser: ?*evtx_parser, record: ?*evtx_record) callconv(.c) u32 {
    const h = parser orelse return @intFromEnum(fail(.null_argument, "parser is NULL", .{}));
    const r = record orelse return @intFromEnum(fail(.null_argument, "record is NULL", .{}));
    const p = state(h);
    if (p.failed) return @intFromEnum(fail(.bad_state, "the parser failed earlier", .{}));
    while (true) {
        while (p.current < p.filled) : ({
            p.current += 1;
            p.entry = 0;
        }) {
            const res = &p.results[p.current];
            while (p.entry < res.entries.items.len) {
                const e = &res.entries.items[p.entry];
                p.entry += 1;
                return @intFromEnum(fillRecord(r, res, e));
            }
        }
        if (p.job >= p.order.len()) return @intFromEnum(evtx_status.end);
        refill(p) catch {
            p.failed = true;
            return @intFromEnum(fail(.internal, "out of memory", .{}));
        };
    }
}

/// Chunks each pull worker renders per refill: enough to amortize starting the threads.
const chunks_per_worker = 4;

/// One worker's share of a refill: consecutive slots into consecutive results.
const PullWork = struct {
    renderer: *dump.Renderer,
    input: *const dump.Input,
    order: dump.ChunkOrder,
    /// The job (index in `order`) of `results[0]`.
    first_job: usize,
    results: []dump.ChunkResult,
    failed: bool = false,

    fn run(w: *PullWork) void {
        std.debug.assert(w.first_job + w.results.len <= w.order.len());
        for (w.results, w.first_job..) |*res, job| {
            w.renderer.renderChunk(w.input, w.order.get(job).?, res) catch {
                w.failed = true;
                return;
            };
        }
    }
};

/// Renders the next group of chunk slots into `results` (output order kept): one chunk on
/// the caller's thread with one worker, else `workers x chunks_per_worker` chunks on
/// threads, each with its own renderer and a contiguous share, all joined before return (as
/// the Rust engine's pull path does).
fn refill(p: *Parser) error{OutOfMemory}!void {
    std.debug.assert(p.job < p.order.len());
    if (p.renderers.len == 0) try makeWorkers(p);
    const workers = p.renderers.len;
    const group = @min(p.results.len, p.order.len() - p.job);
    const first_job = p.job;
    p.job += group;
    p.filled = group;
    p.current = 0;
    p.entry = 0;
    const share = (group + workers - 1) / workers;
    const works = try gpa.alloc(PullWork, workers);
    defer gpa.free(works);
    const threads = try gpa.alloc(?std.Thread, workers);
    defer gpa.free(threads);
    for (works, threads, 0..) |*w, *t, i| {
        const from = @min(i * share, group);
        const to = @min(from + share, group);
        w.* = .{
            .renderer = p.renderers[i],
            .input = &p.input,
            .order = p.order,
            .first_job = first_job + from,
            .results = p.results[from..to],
        };
        // The first share runs on this thread; a thread that cannot start runs here too.
        t.* = if (i == 0 or w.results.len == 0) null else std.Thread.spawn(
            .{},
            PullWork.run,
            .{w},
        ) catch null;
        if (t.* == null and i != 0) w.run();
    }
    works[0].run();
    for (threads) |t| if (t) |thread| thread.join();
    for (works) |w| if (w.failed) return error.OutOfMemory;
}

/// The pull workers: `threads` renderers (at most one per chunk and
/// `evtx.limits.threads_max`) and the results of one group.
fn makeWorkers(p: *Parser) error{OutOfMemory}!void {
    const workers = @max(1, @min(p.threads, evtx.limits.threads_max, p.order.len()));
    const renderers = try gpa.alloc(*dump.Renderer, workers);
    var made: usize = 0;
    errdefer {
        for (renderers[0..made]) |r| {
            r.deinit();
            gpa.destroy(r);
        }
        gpa.free(renderers);
    }
    for (renderers) |*slot| {
        const r = try gpa.create(dump.Renderer);
        r.init(gpa, &p.settings);
        slot.* = r;
        made += 1;
    }
    const results = try gpa.alloc(
        dump.ChunkResult,
        if (workers == 1) 1 else workers * chunks_per_worker,
    );
    for (results) |*res| res.* = dump.ChunkResult.init(gpa);
    p.renderers = renderers;
    p.results = results;
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
pub export fn evtx_parser_next_batch(
    parser: ?*evtx_parser,
    max_entries: usize,
    max_bytes: usize,
    batch: ?*evtx_batch,
) callconv(.c) u32 {
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
        if (status != @intFromEnum(evtx_status.ok) and status < @intFromEnum(
            evtx_status.incomplete_chunk,
        )) {
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

/// The System fields of the last batch's entries, read from their JSON (include/evtx.h,
/// zig/capi/system.zig); UNSUPPORTED for XML.
pub export fn evtx_parser_batch_system(
    parser: ?*evtx_parser,
    out: ?*evtx_batch_system,
) callconv(.c) u32 {
    const h = parser orelse return @intFromEnum(fail(.null_argument, "parser is NULL", .{}));
    const o = out orelse return @intFromEnum(fail(.null_argument, "system is NULL", .{}));
    const p = state(h);
    const status = fillSystem(p);
    if (status != .ok) p.system.clear(gpa) catch {};
    const c = &p.system;
    const empty = c.provider.offsets.items.len == 0;
    o.* = .{
        .count = c.len(),
        .provider_data = c.provider.data.items.ptr,
        .provider_offsets = if (empty) null else c.provider.offsets.items.ptr,
        .channel_data = c.channel.data.items.ptr,
        .channel_offsets = if (empty) null else c.channel.offsets.items.ptr,
        .computer_data = c.computer.data.items.ptr,
        .computer_offsets = if (empty) null else c.computer.offsets.items.ptr,
        .event_ids = c.event_ids.items.ptr,
        .levels = c.levels.items.ptr,
        .present = c.present.items.ptr,
    };
    return @intFromEnum(status);
}

fn fillSystem(p: *Parser) evtx_status {
    p.system.clear(gpa) catch return fail(.internal, "out of memory", .{});
    if (p.settings.format == .xml) return fail(
        .unsupported,
        "System columns need JSON output",
        .{},
    );
    const b = &p.batch;
    // Before any batch the offsets are empty: no entries.
    if (b.offsets.items.len == 0) return .ok;
    for (b.statuses.items, 0..) |st, i| {
        const text = b.data.items[b.offsets.items[i]..b.offsets.items[i + 1]];
        const ok = st == @intFromEnum(evtx_status.ok);
        p.system.push(gpa, if (ok) text else null) catch return fail(
            .internal,
            "out of memory",
            .{},
        );
    }
    std.debug.assert(p.system.len() == b.statuses.items.len);
    return .ok;
}

/// The timestamp text of each entry of the last batch (include/evtx.h,
/// zig/capi/timestamps.zig), empty for error entries; any output format.
pub export fn evtx_parser_batch_timestamps(
    parser: ?*evtx_parser,
    out: ?*evtx_batch_texts,
) callconv(.c) u32 {
    const h = parser orelse return @intFromEnum(fail(.null_argument, "parser is NULL", .{}));
    const o = out orelse return @intFromEnum(fail(.null_argument, "texts is NULL", .{}));
    const p = state(h);
    const status = fillTimestamps(p);
    if (status != .ok) p.timestamps.clear(gpa) catch {};
    const t = &p.timestamps;
    o.* = .{
        .count = t.len(),
        .data = t.data.items.ptr,
        .offsets = if (t.offsets.items.len == 0) null else t.offsets.items.ptr,
    };
    return @intFromEnum(status);
}

fn fillTimestamps(p: *Parser) evtx_status {
    p.timestamps.clear(gpa) catch return fail(.internal, "out of memory", .{});
    const b = &p.batch;
    for (b.statuses.items, b.filetimes.items) |st, filetime| {
        const ok = st == @intFromEnum(evtx_status.ok);
        p.timestamps.push(gpa, if (ok) filetime else null) catch
            return fail(.internal, "out of memory", .{});
    }
    std.debug.assert(p.timestamps.len() == b.statuses.items.len);
    return .ok;
}

const DumpContext = struct {
    write: *const fn (?*anyopaque, ?[*]const u8, usize) callconv(.c) i32,
    on_error: evtx_error_fn,
    user_data: ?*anyopaque,
    stop_after_error: bool,
    stats: evtx_stats = .{ .records_ok = 0, .records_failed = 0, .bytes_written = 0 },
    stopped_status: ?evtx_status = null,

    /// Writes entries `from..` of `res`, batching consecutive records into one call.
    fn entries(c: *DumpContext, res: *const dump.ChunkResult, from: usize) error{Stop}!void {
        var run_start: ?usize = null;
        var run_end: usize = 0;
        for (res.entries.items[from..]) |*e| {
            if (e.outcome == .rendered) {
                const span = e.outcome.rendered;
                if (run_start == null) run_start = span.start;
                run_end = span.start + span.len;
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
            if (c.stop_after_error and
                !(res.partial and e.outcome.failed.kind == .incomplete_chunk))
            {
                c.stopped_status = status;
                return error.Stop;
            }
        }
        try c.flush(res, &run_start, run_end);
    }

    fn flush(
        c: *DumpContext,
        res: *const dump.ChunkResult,
        run_start: *?usize,
        run_end: usize,
    ) error{Stop}!void {
        const start = run_start.* orelse return;
        run_start.* = null;
        const bytes = res.out.list.items[start..run_end];
        c.stats.bytes_written += bytes.len;
        if (c.write(c.user_data, bytes.ptr, bytes.len) != 0) {
            c.stopped_status = .callback_aborted;
            return error.Stop;
        }
    }

    fn consume(context: *anyopaque, result: *const dump.ChunkResult) anyerror!void {
        const c: *DumpContext = @ptrCast(@alignCast(context));
        try c.entries(result, 0);
    }
};

pub export fn evtx_parser_dump(
    parser: ?*evtx_parser,
    write: evtx_write_fn,
    on_error: evtx_error_fn,
    user_data: ?*anyopaque,
    stats: ?*evtx_stats,
) callconv(.c) u32 {
    var ctx: DumpContext = .{
        .write = undefined,
        .on_error = on_error,
        .user_data = user_data,
        .stop_after_error = false,
    };
    defer if (stats) |s| {
        s.* = ctx.stats;
    };
    const h = parser orelse return @intFromEnum(fail(.null_argument, "parser is NULL", .{}));
    ctx.write = write orelse return @intFromEnum(fail(.null_argument, "write is NULL", .{}));
    const p = state(h);
    if (p.failed) return @intFromEnum(
        fail(.bad_state, "the parser failed or was stopped earlier", .{}),
    );
    ctx.stop_after_error = p.stop_after_error;
    // First what remains of the chunks already pulled.
    while (p.current < p.filled) : ({
        p.current += 1;
        p.entry = 0;
    }) {
        const res = &p.results[p.current];
        if (p.entry < res.entries.items.len) {
            const from = p.entry;
            p.entry = res.entries.items.len;
            ctx.entries(res, from) catch {
                p.failed = true;
                return @intFromEnum(ctx.stopped_status.?);
            };
        }
    }
    const remaining = p.order.skip(p.job);
    p.job = p.order.len();
    evtx.pipeline.run(
        gpa,
        &p.input,
        remaining,
        &p.settings,
        p.threads,
        .{ .context = &ctx, .consume = DumpContext.consume },
    ) catch |e| {
        p.failed = true;
        if (ctx.stopped_status) |s| return @intFromEnum(s);
        return @intFromEnum(fail(.internal, "{s}", .{@errorName(e)}));
    };
    return @intFromEnum(evtx_status.ok);
}

/// The triage report of the log at `path` (shared-fixtures/README.md, "Triage"): the JSON
/// object of the document's `files` array, no newline, through one `write` call. Statuses as
/// `evtx_parser_open_path`'s for an input that cannot be read; `EVTX_STATUS_INVALID_OPTIONS`
/// for `silence_seconds` outside 1..=315360000; `EVTX_STATUS_CALLBACK_ABORTED` when `write`
/// returns non-zero.
pub export fn evtx_triage_path(
    path: ?[*:0]const u8,
    silence_seconds: u64,
    write: evtx_write_fn,
    user_data: ?*anyopaque,
) callconv(.c) u32 {
    return @intFromEnum(triagePath(path, silence_seconds, write, user_data));
}

fn triagePath(
    path: ?[*:0]const u8,
    silence_seconds: u64,
    write: evtx_write_fn,
    user_data: ?*anyopaque,
) evtx_status {
    const p = path orelse return fail(.null_argument, "path is NULL", .{});
    const w = write orelse return fail(.null_argument, "write is NULL", .{});
    const triage = evtx.triage;
    if (silence_seconds < 1 or silence_seconds > triage.silence_max) return fail(
        .invalid_options,
        "silence_seconds {d} is not in 1..={d}",
        .{ silence_seconds, triage.silence_max },
    );
    const file = std.fs.cwd().openFile(std.mem.span(p), .{}) catch |e|
        return fail(.io, "Failed to open file {s}: {s}", .{ p, @errorName(e) });
    defer file.close();
    const in = dump.Input.fromFile(file) catch |e|
        return fail(.io, "Failed to open file {s}: {s}", .{ p, @errorName(e) });
    var report = triage.triageInput(gpa, &in, silence_seconds) catch |e| switch (e) {
        error.OutOfMemory => return fail(.internal, "out of memory", .{}),
        error.FileTooShort, error.BadFileMagic => |header_error| {
            const field = headerField(&in);
            const fatal = evtx.errors.FatalError.fromHeader(header_error, in.size, field);
            return fail(.not_evtx, "{f}", .{fatal});
        },
    };
    defer report.deinit();
    var text: std.Io.Writer.Allocating = .init(gpa);
    defer text.deinit();
    triage.writeJson(&report, gpa, &text.writer, std.mem.span(p)) catch
        return fail(.internal, "out of memory", .{});
    const bytes = text.written();
    if (w(user_data, bytes.ptr, bytes.len) != 0)
        return fail(.callback_aborted, "the write callback returned non-zero", .{});
    return .ok;
}

/// The header block size field of `in`, for a file shorter than it says (0 when unread).
fn headerField(in: *const dump.Input) u16 {
    var block: [42]u8 = undefined;
    const head = in.read(0, &block);
    return if (head.len >= 42) std.mem.readInt(u16, head[40..42], .little) else 0;
}

pub export fn evtx_parser_free(parser: ?*evtx_parser) callconv(.c) void {
    const h = parser orelse return;
    state(h).destroy();
}

// Tests. The expected statuses and defaults are what include/evtx.h promises; the expected
// bytes are the reference's stdout (`shared-fixtures/expected/`, `evtx_dump -t 1`), the
// record and failure counts those of `shared-fixtures/manifest.json` (reference runs).

const testing = std.testing;

/// A shared fixture's bytes; caller frees.
fn readFixture(comptime path: []const u8) ![]u8 {
    const unit_test_options = @import("unit_test_options");
    var dir = try std.fs.cwd().openDir(unit_test_options.fixtures, .{});
    defer dir.close();
    return dir.readFileAlloc(testing.allocator, path, 1 << 20);
}

/// The path of a shared fixture, NUL-terminated, in `buffer`.
fn fixturePath(buffer: []u8, comptime path: []const u8) ![:0]const u8 {
    const unit_test_options = @import("unit_test_options");
    return std.fmt.bufPrintZ(buffer, "{s}/{s}", .{ unit_test_options.fixtures, path });
}

/// The reference's record and failure counts for a shared fixture, from
/// `shared-fixtures/manifest.json` (`evtx_dump -t 1`: records = stdout lines of `-o jsonl`,
/// failed = error blocks on stderr); `mode` names another run of it (`xml`, `sep_jsonl`,
/// `validate_checksums`). The oracle, so no count here comes from the engine under test.
const ReferenceCounts = struct { records: usize, failed: usize };

fn referenceCounts(path: []const u8, mode: ?[]const u8) !ReferenceCounts {
    const manifest = try readFixture("manifest.json");
    defer testing.allocator.free(manifest);
    const parsed = try std.json.parseFromSlice(std.json.Value, testing.allocator, manifest, .{});
    defer parsed.deinit();
    for (parsed.value.object.get("files").?.array.items) |file| {
        if (!std.mem.eql(u8, file.object.get("path").?.string, path)) continue;
        var counts = file.object.get("reference").?;
        if (mode) |m| counts = counts.object.get(m) orelse return error.ModeNotInManifest;
        return .{
            .records = @intCast(counts.object.get("records").?.integer),
            .failed = @intCast(counts.object.get("failed").?.integer),
        };
    }
    return error.FixtureNotInManifest;
}

fn testOptions(format: evtx_format) evtx_options {
    var o: evtx_options = undefined;
    evtx_options_init_v1(&o);
    o.format = @intFromEnum(format);
    o.threads = 1;
    return o;
}

fn openBuffer(bytes: []const u8, o: *const evtx_options) !*evtx_parser {
    var out: ?*evtx_parser = null;
    const status = evtx_parser_open_buffer(bytes.ptr, bytes.len, o, &out);
    if (status != @intFromEnum(evtx_status.ok)) {
        std.debug.print("open: {s}: {s}\n", .{ evtx_status_name(status), evtx_last_error() });
        return error.TestUnexpectedResult;
    }
    return out.?;
}

/// What pulling every record gives: the rendered bytes concatenated, and the statuses.
const Pulled = struct {
    text: std.ArrayList(u8) = .empty,
    records: usize = 0,
    recovered: usize = 0,
    failed: usize = 0,
    first_failure: ?evtx_record = null,

    fn deinit(p: *Pulled) void {
        p.text.deinit(testing.allocator);
    }
};

fn pullAll(parser: *evtx_parser) !Pulled {
    var pulled: Pulled = .{};
    errdefer pulled.deinit();
    var record: evtx_record = undefined;
    while (true) {
        const status = evtx_parser_next(parser, &record);
        if (status == @intFromEnum(evtx_status.end)) return pulled;
        if (status == @intFromEnum(evtx_status.ok)) {
            try testing.expectEqual(@intFromEnum(evtx_status.ok), record.status);
            try testing.expectEqualStrings("", std.mem.span(record.message.?));
            try pulled.text.appendSlice(testing.allocator, record.data.?[0..record.data_len]);
            pulled.records += 1;
            pulled.recovered += record.recovered;
            continue;
        }
        // An error KIND: the header's record shape for failures.
        try testing.expect(status >= 16 and status <= 26);
        try testing.expectEqual(status, record.status);
        try testing.expect(record.data == null);
        try testing.expectEqual(@as(usize, 0), record.data_len);
        try testing.expectEqual(@as(u8, 0), record.recovered);
        try testing.expect(std.mem.span(record.message.?).len > 0);
        if (pulled.first_failure == null) pulled.first_failure = record;
        pulled.failed += 1;
    }
}

fn expectStatus(expected: evtx_status, got: u32) !void {
    if (got != @intFromEnum(expected)) {
        std.debug.print(
            "status {d} ({s}), expected {s}; last error: {s}\n",
            .{ got, evtx_status_name(got), @tagName(expected), evtx_last_error() },
        );
        return error.TestUnexpectedResult;
    }
}

test "evtx_options_init: the CLI's defaults (header); NULL is ignored" {
    var o: evtx_options = undefined;
    @memset(std.mem.asBytes(&o), 0xAA);
    evtx_options_init(&o);
    try testing.expectEqual(@as(u32, 0), o.format); // EVTX_FORMAT_XML
    try testing.expectEqual(@as(u32, 0), o.threads);
    try testing.expectEqual(@as(u8, 1), o.indent);
    try testing.expectEqual(@as(u8, 1), o.show_record_number);
    try testing.expectEqual(@as(u8, 0), o.separate_json_attributes);
    try testing.expectEqual(@as(u8, 0), o.validate_checksums);
    try testing.expectEqual(@as(u8, 0), o.recover_records);
    try testing.expectEqual(@as(u8, 0), o.stop_after_error);
    try testing.expectEqual(EVTX_OPTIONS_VERSION_0, o.version);
    try testing.expectEqual(@as(u8, 0), o.reserved);
    try testing.expect(o.ansi_codec == null and o.event_ranges == null);
    try testing.expectEqual(@as(usize, 0), o.event_ranges_count);
    try testing.expect(o.mta_path == null and o.wevt_cache_path == null);
    // Version 0: nothing past `wevt_cache_path` is written (a caller built before the filters
    // has no more memory there).
    const bytes = std.mem.asBytes(&o);
    try testing.expect(std.mem.allEqual(u8, bytes[options_v0_size..], 0xAA));
    evtx_options_init(null);

    @memset(std.mem.asBytes(&o), 0xAA);
    evtx_options_init_v1(&o);
    try testing.expectEqual(EVTX_OPTIONS_VERSION_1, o.version);
    try testing.expectEqual(@as(u8, 1), o.indent);
    try testing.expect(o.event_ids == null and o.levels == null);
    try testing.expect(o.providers == null and o.channels == null);
    try testing.expectEqual(@as(usize, 0), o.event_ids_count + o.levels_count +
        o.providers_count + o.channels_count);
    try testing.expectEqual(@as(u8, 0), o.since_set | o.until_set);
    try testing.expect(std.mem.allEqual(u8, &o.reserved_v1, 0));
    evtx_options_init_v1(null);
}

test "evtx_options version 0: the bytes past it are never read" {
    const bytes = try readFixture("synthetic/filters.evtx");
    defer testing.allocator.free(bytes);
    var o: evtx_options = undefined;
    @memset(std.mem.asBytes(&o), 0xAA);
    evtx_options_init(&o);
    o.format = @intFromEnum(evtx_format.jsonl);
    o.threads = 1;
    // Garbage where version 1 has its filters: a version 0 caller's memory ends before them.
    const parser = try openBuffer(bytes, &o);
    defer evtx_parser_free(parser);
    var whole = testOptions(.jsonl);
    const plain = try openBuffer(bytes, &whole);
    defer evtx_parser_free(plain);
    var r: evtx_record = undefined;
    var q: evtx_record = undefined;
    var count: usize = 0;
    while (evtx_parser_next(parser, &r) != @intFromEnum(evtx_status.end)) : (count += 1) {
        try expectStatus(@enumFromInt(r.status), evtx_parser_next(plain, &q));
        try testing.expectEqual(q.record_id, r.record_id);
    }
    try expectStatus(.end, evtx_parser_next(plain, &q));
    try testing.expect(count > 0);
}

test "evtx_options filters: the records whose System columns match, errors kept" {
    const bytes = try readFixture("synthetic/filters.evtx");
    defer testing.allocator.free(bytes);
    // Every record's event id as `evtx_parser_batch_system` reads it from the unfiltered
    // JSON text, not from the parsed record the filter decides on.
    var all = testOptions(.jsonl);
    const plain = try openBuffer(bytes, &all);
    defer evtx_parser_free(plain);
    var batch: evtx_batch = undefined;
    try expectStatus(.ok, evtx_parser_next_batch(plain, 100000, 0, &batch));
    var columns: evtx_batch_system = undefined;
    try expectStatus(.ok, evtx_parser_batch_system(plain, &columns));
    const ranges = [_]evtx_value_range{
        .{ .first = 4624, .last = 4624 },
        .{ .first = 1, .last = 2 },
    };
    var want: std.ArrayList(u64) = .empty;
    defer want.deinit(testing.allocator);
    for (0..batch.count) |i| {
        const has = columns.present.?[i] & EVTX_SYSTEM_EVENT_ID != 0;
        const id = columns.event_ids.?[i];
        const kept = has and (id == 4624 or (id >= 1 and id <= 2));
        const id_of_record = batch.record_ids.?[i];
        if (batch.statuses.?[i] != 0 or kept) try want.append(testing.allocator, id_of_record);
    }
    try testing.expect(want.items.len > 0 and want.items.len < batch.count);

    var o = testOptions(.jsonl);
    o.event_ids = &ranges;
    o.event_ids_count = ranges.len;
    const parser = try openBuffer(bytes, &o);
    defer evtx_parser_free(parser);
    var got: std.ArrayList(u64) = .empty;
    defer got.deinit(testing.allocator);
    var r: evtx_record = undefined;
    while (evtx_parser_next(parser, &r) != @intFromEnum(evtx_status.end)) {
        try got.append(testing.allocator, r.record_id);
    }
    try testing.expectEqualSlices(u64, want.items, got.items);
}

test "identity: ABI version 3, backend name, status names are the README's KIND strings" {
    try testing.expectEqual(@as(u32, 3), evtx_abi_version());
    try testing.expectEqualStrings("zig", std.mem.span(evtx_backend_name()));
    // The oracle: the KIND column of shared-fixtures/README.md's table, in status order.
    const readme = try readFixture("README.md");
    defer testing.allocator.free(readme);
    const table = readme[(std.mem.indexOf(u8, readme, "| KIND | when | DETAIL |") orelse
        return error.NoKindTable)..];
    var lines = std.mem.splitScalar(u8, table, '\n');
    _ = lines.next();
    _ = lines.next();
    var value: u32 = @intFromEnum(evtx_status.incomplete_chunk);
    while (lines.next()) |line| : (value += 1) {
        if (!std.mem.startsWith(u8, line, "| `")) break;
        const kind = line[3 .. std.mem.indexOfScalarPos(
            u8,
            line,
            3,
            '`',
        ) orelse return error.BadRow];
        try testing.expectEqualStrings(kind, std.mem.span(evtx_status_name(value)));
    }
    try testing.expectEqual(@intFromEnum(evtx_status.bad_binxml) + 1, value);
    try testing.expectEqualStrings("i/o error", std.mem.span(evtx_status_name(5)));
    try testing.expectEqualStrings("ok", std.mem.span(evtx_status_name(0)));
    for ([_]u32{ 11, 15, 27, 1000, std.math.maxInt(u32) }) |status| {
        try testing.expectEqualStrings("unknown status", std.mem.span(evtx_status_name(status)));
    }
}

test "open: NULL arguments, bad options and non-EVTX input fail with *out NULL and a last error" {
    const basic = try readFixture("synthetic/basic.evtx");
    defer testing.allocator.free(basic);
    var out: ?*evtx_parser = null;
    try expectStatus(.null_argument, evtx_parser_open_buffer(basic.ptr, basic.len, null, null));
    try expectStatus(.null_argument, evtx_parser_open_path(null, null, null));
    out = @ptrFromInt(8);
    try expectStatus(.null_argument, evtx_parser_open_buffer(null, 4, null, &out));
    try testing.expect(out == null);
    out = @ptrFromInt(8);
    try expectStatus(.null_argument, evtx_parser_open_path(null, null, &out));
    try testing.expect(out == null);

    // Not EVTX: empty (the header says so), short of the 4096-byte header, bad magic.
    const short = try readFixture("damaged/short-file.evtx");
    defer testing.allocator.free(short);
    const magic = try readFixture("damaged/bad-file-magic.evtx");
    defer testing.allocator.free(magic);
    for ([_][]const u8{ basic[0..0], basic[0..4095], short, magic }) |bytes| {
        out = @ptrFromInt(8);
        try expectStatus(.not_evtx, evtx_parser_open_buffer(bytes.ptr, bytes.len, null, &out));
        try testing.expect(out == null);
    }
    // The last error is the CLI's fatal line, as libevtx_rs gives it (the reference's words).
    try testing.expectEqualStrings("An error occurred while trying to deserialize evtx stream: " ++
        "invalid EVTX file header magic, expected `ElfFile\\0`", std.mem.span(evtx_last_error()));

    // open_path: a missing file is an I/O error; a fixture opens.
    var path_buffer: [std.fs.max_path_bytes]u8 = undefined;
    const missing = try fixturePath(&path_buffer, "synthetic/no-such-file.evtx");
    out = @ptrFromInt(8);
    try expectStatus(.io, evtx_parser_open_path(missing.ptr, null, &out));
    try testing.expect(out == null);
    try testing.expect(
        std.mem.indexOf(u8, std.mem.span(evtx_last_error()), "no-such-file.evtx") != null,
    );
    const not_evtx = try fixturePath(&path_buffer, "damaged/bad-file-magic.evtx");
    try expectStatus(.not_evtx, evtx_parser_open_path(not_evtx.ptr, null, &out));
    try testing.expect(out == null);
}

test "open: options the header calls invalid fail with *out NULL and a last error" {
    const basic = try readFixture("synthetic/basic.evtx");
    defer testing.allocator.free(basic);
    var out: ?*evtx_parser = null;
    const ranges = [_]evtx_event_range{.{ .first = 1, .last = 2 }};
    const empty = [_]evtx_value_range{.{ .first = 5, .last = 4 }};
    const names = [_]?[*:0]const u8{ "Security", "" };
    const no_name = [_]?[*:0]const u8{null};
    var bad: [15]evtx_options = .{testOptions(.xml)} ** 15;
    bad[0].format = 3;
    bad[1].reserved = 1;
    bad[2].reserved_v1[5] = 0x80;
    bad[3].event_ranges_count = 1; // with event_ranges NULL
    bad[4].ansi_codec = "no-such-codec";
    bad[5].version = 2;
    bad[6].event_ids_count = 1; // with event_ids NULL
    bad[7].levels = &empty;
    bad[7].levels_count = 1;
    bad[8].event_ids = &empty;
    bad[8].event_ids_count = 1;
    bad[9].providers = &names;
    bad[9].providers_count = 2; // "" is no name
    bad[10].channels = &no_name;
    bad[10].channels_count = 1;
    bad[11].channels_count = 1; // with channels NULL
    bad[12].since_set = 1;
    bad[12].until_set = 1; // since 0 is not before until 0
    bad[13].since_set = 1;
    bad[13].since = 10;
    bad[13].until_set = 1;
    bad[13].until = 9;
    bad[14].providers = &names;
    bad[14].providers_count = 1;
    bad[14].version = 0xFF;
    for (&bad) |*o| {
        out = @ptrFromInt(8);
        try expectStatus(.invalid_options, evtx_parser_open_buffer(basic.ptr, basic.len, o, &out));
        try testing.expect(out == null);
        try testing.expect(std.mem.span(evtx_last_error()).len > 0);
    }
    var good = testOptions(.jsonl);
    good.event_ranges = &ranges;
    good.event_ranges_count = 0; // a pointer with count 0 is every record
    good.ansi_codec = "windows-1251";
    const parser = try openBuffer(basic, &good);
    evtx_parser_free(parser);
}

test "next: every format pulls the reference's stdout, record by record, then END (again)" {
    const basic = try readFixture("synthetic/basic.evtx");
    defer testing.allocator.free(basic);
    const cases = [_]struct {
        format: evtx_format,
        separate: bool,
        expected: []const u8,
        mode: ?[]const u8,
    }{
        .{ .format = .xml, .separate = false, .expected = "expected/basic.xml", .mode = "xml" },
        .{ .format = .jsonl, .separate = false, .expected = "expected/basic.jsonl", .mode = null },
        .{
            .format = .jsonl,
            .separate = true,
            .expected = "expected/basic.sep.jsonl",
            .mode = "sep_jsonl",
        },
    };
    inline for (cases) |case| {
        const expected = try readFixture(case.expected);
        defer testing.allocator.free(expected);
        var o = testOptions(case.format);
        o.separate_json_attributes = @intFromBool(case.separate);
        const parser = try openBuffer(basic, &o);
        defer evtx_parser_free(parser);
        var pulled = try pullAll(parser);
        defer pulled.deinit();
        try testing.expectEqualStrings(expected, pulled.text.items);
        const reference = try referenceCounts("synthetic/basic.evtx", case.mode);
        try testing.expectEqual(reference.records, pulled.records);
        try testing.expectEqual(reference.failed, pulled.failed);
        var record: evtx_record = undefined;
        try expectStatus(.end, evtx_parser_next(parser, &record));
    }
}

test "next: record fields; NULL arguments; jsonl ignores indent and banner (header)" {
    const basic = try readFixture("synthetic/basic.evtx");
    defer testing.allocator.free(basic);
    const expected = try readFixture("expected/basic.jsonl");
    defer testing.allocator.free(expected);
    var o = testOptions(.jsonl);
    o.indent = 1;
    o.show_record_number = 1;
    const parser = try openBuffer(basic, &o);
    defer evtx_parser_free(parser);
    var record: evtx_record = undefined;
    try expectStatus(.null_argument, evtx_parser_next(null, &record));
    try expectStatus(.null_argument, evtx_parser_next(parser, null));
    try expectStatus(.ok, evtx_parser_next(parser, &record));
    const first_line = expected[0 .. std.mem.indexOfScalar(u8, expected, '\n').? + 1];
    try testing.expectEqualStrings(first_line, record.data.?[0..record.data_len]);
    try testing.expectEqual(@as(u64, 1), record.record_id);
    try testing.expectEqual(@as(u32, 0), record.chunk_index);
    // The first record sits right after the chunk header (file header 4096 + 512).
    try testing.expectEqual(@as(u64, 4096 + 512), record.file_offset);
    // TimeCreated of record 1 (expected/basic.xml) is 2024-03-01T08:00:00.0000001Z and
    // the fixture writes the same FILETIME into the record header.
    try testing.expect(record.filetime != 0);
}

test "a truncated buffer: the cut chunk fails as one incomplete chunk, then END" {
    const basic = try readFixture("synthetic/basic.evtx");
    defer testing.allocator.free(basic);
    const cut = basic[0 .. 4096 + 30000];
    const parser = try openBuffer(cut, &testOptions(.jsonl));
    defer evtx_parser_free(parser);
    var record: evtx_record = undefined;
    var failures: usize = 0;
    while (true) {
        const status = evtx_parser_next(parser, &record);
        if (status == @intFromEnum(evtx_status.end)) break;
        if (status == @intFromEnum(evtx_status.ok)) continue;
        failures += 1;
        try expectStatus(.incomplete_chunk, status);
        try testing.expectEqual(EVTX_RECORD_ID_UNKNOWN, record.record_id);
        try testing.expectEqual(@as(u64, 4096), record.file_offset);
        // shared-fixtures/README.md: `<N> bytes missing`.
        try testing.expectEqualStrings("35536 bytes missing", std.mem.span(record.message.?));
    }
    try testing.expectEqual(@as(usize, 1), failures);
}

test "damaged records: reference records and failures, errors in place, 1 and 3 pull threads" {
    const cases = [_]struct { path: []const u8, expected: []const u8 }{
        .{ .path = "damaged/bad-records.evtx", .expected = "expected/bad-records.jsonl" },
        .{ .path = "damaged/bad-chunks.evtx", .expected = "expected/bad-chunks.jsonl" },
        .{ .path = "damaged/invalid-binxml.evtx", .expected = "expected/invalid-binxml.jsonl" },
    };
    inline for (cases) |case| {
        const bytes = try readFixture(case.path);
        defer testing.allocator.free(bytes);
        const expected = try readFixture(case.expected);
        defer testing.allocator.free(expected);
        for ([_]u32{ 1, 3 }) |threads| {
            var o = testOptions(.jsonl);
            o.threads = threads;
            const parser = try openBuffer(bytes, &o);
            defer evtx_parser_free(parser);
            var pulled = try pullAll(parser);
            defer pulled.deinit();
            const reference = try referenceCounts(case.path, null);
            try testing.expectEqual(reference.records, pulled.records);
            try testing.expectEqual(reference.failed, pulled.failed);
            try testing.expectEqualStrings(expected, pulled.text.items);
        }
    }
}

test "threaded pull: pull some of a group, dump the rest; together the reference's stdout" {
    const bytes = try readFixture("damaged/bad-chunks.evtx");
    defer testing.allocator.free(bytes);
    const expected = try readFixture("expected/bad-chunks.jsonl");
    defer testing.allocator.free(expected);
    var o = testOptions(.jsonl);
    o.threads = 3;
    const parser = try openBuffer(bytes, &o);
    defer evtx_parser_free(parser);
    var sink: Sink = .{};
    defer sink.text.deinit(testing.allocator);
    var record: evtx_record = undefined;
    for (0..3) |_| {
        const status = evtx_parser_next(parser, &record);
        if (status == @intFromEnum(evtx_status.ok)) {
            try sink.text.appendSlice(testing.allocator, record.data.?[0..record.data_len]);
        } else try testing.expect(status >= @intFromEnum(evtx_status.incomplete_chunk));
    }
    try expectStatus(.ok, evtx_parser_dump(parser, Sink.write, null, &sink, null));
    try testing.expectEqualStrings(expected, sink.text.items);
}

test "batch_system: NULL arguments, nothing before a batch, UNSUPPORTED for XML, none for errors" {
    const bytes = try readFixture("damaged/bad-chunks.evtx");
    defer testing.allocator.free(bytes);
    var system_out: evtx_batch_system = undefined;
    try expectStatus(.null_argument, evtx_parser_batch_system(null, &system_out));
    const xml = try openBuffer(bytes, &testOptions(.xml));
    defer evtx_parser_free(xml);
    try expectStatus(.unsupported, evtx_parser_batch_system(xml, &system_out));
    try testing.expectEqual(@as(usize, 0), system_out.count);
    const parser = try openBuffer(bytes, &testOptions(.jsonl));
    defer evtx_parser_free(parser);
    try expectStatus(.null_argument, evtx_parser_batch_system(parser, null));
    try expectStatus(.ok, evtx_parser_batch_system(parser, &system_out));
    try testing.expectEqual(@as(usize, 0), system_out.count);
    var batch: evtx_batch = undefined;
    try expectStatus(.ok, evtx_parser_next_batch(parser, 100, 0, &batch));
    try expectStatus(.ok, evtx_parser_batch_system(parser, &system_out));
    // The manifest's records and chunk errors; the reference's JSON of these records has no
    // System object (expected/bad-chunks.jsonl), so every field of every entry is absent.
    const bad_chunks = try referenceCounts("damaged/bad-chunks.evtx", null);
    try testing.expectEqual(bad_chunks.records + bad_chunks.failed, batch.count);
    try testing.expectEqual(batch.count, system_out.count);
    for (0..batch.count) |i| try testing.expectEqual(@as(u8, 0), system_out.present.?[i]);

    // basic.evtx: the reference's first record has Provider Evtx-Twin-Fixtures, EventID 1000,
    // Level 4, Channel Application, Computer twin.example (expected/basic.jsonl).
    const basic = try readFixture("synthetic/basic.evtx");
    defer testing.allocator.free(basic);
    const with_system = try openBuffer(basic, &testOptions(.jsonl));
    defer evtx_parser_free(with_system);
    try expectStatus(.ok, evtx_parser_next_batch(with_system, 1, 0, &batch));
    try expectStatus(.ok, evtx_parser_batch_system(with_system, &system_out));
    try testing.expectEqual(@as(usize, 1), system_out.count);
    try testing.expectEqual(@as(u8, 31), system_out.present.?[0]);
    try testing.expectEqual(@as(u32, 1000), system_out.event_ids.?[0]);
    try testing.expectEqual(@as(u8, 4), system_out.levels.?[0]);
    const strings = [_]struct { data: ?[*]const u8, offsets: ?[*]const u64, want: []const u8 }{
        .{
            .data = system_out.provider_data,
            .offsets = system_out.provider_offsets,
            .want = "Evtx-Twin-Fixtures",
        },
        .{
            .data = system_out.channel_data,
            .offsets = system_out.channel_offsets,
            .want = "Application",
        },
        .{
            .data = system_out.computer_data,
            .offsets = system_out.computer_offsets,
            .want = "twin.example",
        },
    };
    for (strings) |c| try testing.expectEqualStrings(
        c.want,
        c.data.?[c.offsets.?[0]..c.offsets.?[1]],
    );
}

test "batch_timestamps: NULL arguments, nothing before a batch, one text per entry" {
    const bytes = try readFixture("damaged/bad-chunks.evtx");
    defer testing.allocator.free(bytes);
    var texts: evtx_batch_texts = undefined;
    try expectStatus(.null_argument, evtx_parser_batch_timestamps(null, &texts));
    const parser = try openBuffer(bytes, &testOptions(.xml));
    defer evtx_parser_free(parser);
    try expectStatus(.null_argument, evtx_parser_batch_timestamps(parser, null));
    try expectStatus(.ok, evtx_parser_batch_timestamps(parser, &texts));
    try testing.expectEqual(@as(usize, 0), texts.count);
    var batch: evtx_batch = undefined;
    try expectStatus(.ok, evtx_parser_next_batch(parser, 100, 0, &batch));
    try expectStatus(.ok, evtx_parser_batch_timestamps(parser, &texts));
    try testing.expectEqual(batch.count, texts.count);
    var errors: usize = 0;
    for (0..batch.count) |i| {
        const text = texts.data.?[texts.offsets.?[i]..texts.offsets.?[i + 1]];
        if (batch.statuses.?[i] != @intFromEnum(evtx_status.ok)) {
            errors += 1;
            try testing.expectEqual(@as(usize, 0), text.len);
            continue;
        }
        // Each text is its FILETIME's (the formatter's own test holds the digits).
        var one: timestamps.Timestamps = .{};
        defer one.deinit(testing.allocator);
        try one.clear(testing.allocator);
        try one.push(testing.allocator, batch.filetimes.?[i]);
        try testing.expectEqualStrings(one.data.items, text);
        try testing.expect(text.len >= "2016-02-15T08:53:20Z UTC".len);
    }
    try testing.expect(errors > 0 and errors < batch.count);
}

const Sink = struct {
    text: std.ArrayList(u8) = .empty,
    errors: usize = 0,
    /// Stop (return non-zero) at this write or error call, when set.
    abort_write: ?usize = null,
    abort_error: ?usize = null,
    writes: usize = 0,
    oom: bool = false,

    fn write(user_data: ?*anyopaque, data: ?[*]const u8, len: usize) callconv(.c) i32 {
        const s: *Sink = @ptrCast(@alignCast(user_data.?));
        s.writes += 1;
        if (s.abort_write) |n| if (s.writes == n) return 1;
        s.text.appendSlice(testing.allocator, data.?[0..len]) catch {
            s.oom = true;
            return 1;
        };
        return 0;
    }

    fn onError(user_data: ?*anyopaque, record: ?*const evtx_record) callconv(.c) i32 {
        const s: *Sink = @ptrCast(@alignCast(user_data.?));
        const r = record.?;
        if (r.data != null or r.status < 16) return 1; // the test then fails on the status
        s.errors += 1;
        if (s.abort_error) |n| if (s.errors == n) return 1;
        return 0;
    }
};

test "dump: the reference's stdout at 1 and 2 threads, stats, NULL arguments" {
    const bytes = try readFixture("damaged/bad-records.evtx");
    defer testing.allocator.free(bytes);
    const expected = try readFixture("expected/bad-records.xml");
    defer testing.allocator.free(expected);
    for ([_]u32{ 1, 2 }) |threads| {
        var o = testOptions(.xml);
        o.threads = threads;
        const parser = try openBuffer(bytes, &o);
        defer evtx_parser_free(parser);
        var sink: Sink = .{};
        defer sink.text.deinit(testing.allocator);
        var stats: evtx_stats = undefined;
        try expectStatus(.ok, evtx_parser_dump(parser, Sink.write, Sink.onError, &sink, &stats));
        try testing.expect(!sink.oom);
        try testing.expectEqualStrings(expected, sink.text.items);
        const reference = try referenceCounts("damaged/bad-records.evtx", "xml");
        try testing.expectEqual(@as(u64, reference.records), stats.records_ok);
        try testing.expectEqual(@as(u64, reference.failed), stats.records_failed);
        try testing.expectEqual(reference.failed, sink.errors);
        try testing.expectEqual(@as(u64, expected.len), stats.bytes_written);
    }
    var stats: evtx_stats = undefined;
    try expectStatus(.null_argument, evtx_parser_dump(null, Sink.write, null, null, &stats));
    try testing.expectEqual(@as(u64, 0), stats.records_ok);
    const parser = try openBuffer(bytes, &testOptions(.xml));
    defer evtx_parser_free(parser);
    try expectStatus(.null_argument, evtx_parser_dump(parser, null, null, null, null));
}

test "pull some, dump the rest: together the reference's stdout" {
    const bytes = try readFixture("synthetic/basic.evtx");
    defer testing.allocator.free(bytes);
    const expected = try readFixture("expected/basic.xml");
    defer testing.allocator.free(expected);
    const parser = try openBuffer(bytes, &testOptions(.xml));
    defer evtx_parser_free(parser);
    var sink: Sink = .{};
    defer sink.text.deinit(testing.allocator);
    var record: evtx_record = undefined;
    for (0..2) |_| {
        try expectStatus(.ok, evtx_parser_next(parser, &record));
        try sink.text.appendSlice(testing.allocator, record.data.?[0..record.data_len]);
    }
    var stats: evtx_stats = undefined;
    try expectStatus(.ok, evtx_parser_dump(parser, Sink.write, null, &sink, &stats));
    try testing.expectEqualStrings(expected, sink.text.items);
    // Two pulled, the rest dumped.
    const reference = try referenceCounts("synthetic/basic.evtx", "xml");
    try testing.expectEqual(@as(u64, reference.records - 2), stats.records_ok);
    try expectStatus(.end, evtx_parser_next(parser, &record));
}

test "dump stops: callback non-zero, or stop_after_error with the error's status, then BAD_STATE" {
    const bytes = try readFixture("damaged/bad-records.evtx");
    defer testing.allocator.free(bytes);
    var record: evtx_record = undefined;
    {
        const parser = try openBuffer(bytes, &testOptions(.jsonl));
        defer evtx_parser_free(parser);
        var sink: Sink = .{ .abort_write = 1 };
        defer sink.text.deinit(testing.allocator);
        try expectStatus(
            .callback_aborted,
            evtx_parser_dump(parser, Sink.write, null, &sink, null),
        );
        try expectStatus(.bad_state, evtx_parser_next(parser, &record));
    }
    {
        const parser = try openBuffer(bytes, &testOptions(.jsonl));
        defer evtx_parser_free(parser);
        var sink: Sink = .{ .abort_error = 2 };
        defer sink.text.deinit(testing.allocator);
        var stats: evtx_stats = undefined;
        try expectStatus(
            .callback_aborted,
            evtx_parser_dump(parser, Sink.write, Sink.onError, &sink, &stats),
        );
        try testing.expectEqual(@as(u64, 2), stats.records_failed);
    }
    {
        // The first failure of bad-records.evtx is a record whose magic is zeroes (manifest).
        var o = testOptions(.jsonl);
        o.stop_after_error = 1;
        const parser = try openBuffer(bytes, &o);
        defer evtx_parser_free(parser);
        var sink: Sink = .{};
        defer sink.text.deinit(testing.allocator);
        var stats: evtx_stats = undefined;
        try expectStatus(
            .bad_record_magic,
            evtx_parser_dump(parser, Sink.write, Sink.onError, &sink, &stats),
        );
        try testing.expectEqual(@as(u64, 1), stats.records_failed);
        try expectStatus(.bad_state, evtx_parser_dump(parser, Sink.write, null, &sink, null));
    }
}

test "event ranges are copied at open; records outside them are skipped, errors are not" {
    const bytes = try readFixture("damaged/bad-records.evtx");
    defer testing.allocator.free(bytes);
    const parser = blk: {
        var ranges = [_]evtx_event_range{ .{ .first = 2, .last = 3 }, .{ .first = 9, .last = 8 } };
        var o = testOptions(.jsonl);
        o.event_ranges = &ranges;
        o.event_ranges_count = ranges.len;
        const parser = try openBuffer(bytes, &o);
        ranges = .{
            .{ .first = 0, .last = 100 },
            .{ .first = 0, .last = 100 },
        }; // copied: no effect
        break :blk parser;
    };
    defer evtx_parser_free(parser);
    var pulled = try pullAll(parser);
    defer pulled.deinit();
    // The reference prints one record for `--events 2-3,9-8` (record 3 is not there), and
    // every failure of the file, as without `--events`.
    try testing.expectEqual(@as(usize, 1), pulled.records);
    const reference = try referenceCounts("damaged/bad-records.evtx", null);
    try testing.expectEqual(reference.failed, pulled.failed);
    try testing.expect(std.mem.startsWith(u8, pulled.text.items, "{\"Event\""));
}

test "recover_records: carved records come marked, and only with the option" {
    // Reference counts (`evtx_dump -o jsonl [--recover-records]`): cleared-chunk.evtx gives
    // 5 records, and 119 with the flag; the 114 more are the carved ones.
    const bytes = try readFixture("carving/cleared-chunk.evtx");
    defer testing.allocator.free(bytes);
    var o = testOptions(.jsonl);
    var counts: [2]Pulled = undefined;
    for (&counts, [_]u8{ 0, 1 }) |*c, recover| {
        o.recover_records = recover;
        const parser = try openBuffer(bytes, &o);
        defer evtx_parser_free(parser);
        c.* = try pullAll(parser);
    }
    defer for (&counts) |*c| c.deinit();
    try testing.expectEqual(@as(usize, 5), counts[0].records);
    try testing.expectEqual(@as(usize, 0), counts[0].recovered);
    try testing.expectEqual(@as(usize, 119), counts[1].records);
    try testing.expectEqual(@as(usize, 114), counts[1].recovered);
}

test "mta_path: the reference's RenderingInfo on the records whose publisher it lists" {
    // Reference (`evtx_dump -t 1 [--mta events.full.MTA] events.evtx`): 16 records, 13 of
    // them with a RenderingInfo element (1, the log's own, without the file), one holding the
    // generator's "Beta message".
    const bytes = try readFixture("mta/events.evtx");
    defer testing.allocator.free(bytes);
    var path_buffer: [std.fs.max_path_bytes]u8 = undefined;
    const mta = try fixturePath(&path_buffer, "mta/events.full.MTA");
    var o = testOptions(.xml);
    var pulled: [3]Pulled = undefined;
    const paths = [_]?[*:0]const u8{ null, mta.ptr, mta.ptr };
    for (&pulled, paths, [_]u32{ 1, 1, 2 }) |*p, path, threads| {
        o.mta_path = path;
        o.threads = threads;
        const parser = try openBuffer(bytes, &o);
        defer evtx_parser_free(parser);
        p.* = try pullAll(parser);
    }
    defer for (&pulled) |*p| p.deinit();
    for (pulled) |p| try testing.expectEqual(@as(usize, 16), p.records);
    const tag = "<RenderingInfo>";
    try testing.expectEqual(@as(usize, 1), std.mem.count(u8, pulled[0].text.items, tag));
    try testing.expectEqual(@as(usize, 13), std.mem.count(u8, pulled[1].text.items, tag));
    const beta = "<Message>Beta message</Message>";
    try testing.expect(std.mem.indexOf(u8, pulled[1].text.items, beta) != null);
    try testing.expectEqualStrings(pulled[1].text.items, pulled[2].text.items);
}

test "mta_path: an unreadable file is an I/O error, a damaged one invalid, in the CLI's words" {
    const bytes = try readFixture("mta/events.evtx");
    defer testing.allocator.free(bytes);
    var path_buffer: [std.fs.max_path_bytes]u8 = undefined;
    var o = testOptions(.jsonl);
    var out: ?*evtx_parser = @ptrFromInt(8);
    o.mta_path = (try fixturePath(&path_buffer, "mta/no-such-file.MTA")).ptr;
    try expectStatus(.io, evtx_parser_open_buffer(bytes.ptr, bytes.len, &o, &out));
    try testing.expect(out == null);
    try testing.expect(std.mem.startsWith(u8, std.mem.span(evtx_last_error()), "failed to read `"));
    // The reference's messages for these two (`evtx_dump --mta ...`, stderr).
    o.mta_path = (try fixturePath(&path_buffer, "mta/events.damaged-magic.MTA")).ptr;
    try expectStatus(.invalid_options, evtx_parser_open_buffer(bytes.ptr, bytes.len, &o, &out));
    const magic = "not an MTA file (magic [58, 54, 41, 46, 69, 6c, 65, 00])";
    try testing.expectEqualStrings(magic, std.mem.span(evtx_last_error()));
    o.mta_path = (try fixturePath(&path_buffer, "mta/events.damaged-version.MTA")).ptr;
    try expectStatus(.invalid_options, evtx_parser_open_buffer(bytes.ptr, bytes.len, &o, &out));
    try testing.expectEqualStrings("unsupported MTA version 2.1", std.mem.span(evtx_last_error()));
    try testing.expect(out == null);
    // The file header is read first: a log that is not EVTX fails as such, whatever the MTA.
    try expectStatus(.not_evtx, evtx_parser_open_buffer(bytes.ptr, 100, &o, &out));
}

test "wevt_cache_path: records whose template is broken render from the cache" {
    // Reference (`evtx_dump -t 1 -o jsonl [--wevt-cache templates.wevtcache] events.evtx`):
    // 2 records and 8 errors without the cache, 8 records and 2 errors with it.
    const bytes = try readFixture("wevt/events.evtx");
    defer testing.allocator.free(bytes);
    var path_buffer: [std.fs.max_path_bytes]u8 = undefined;
    const cache = try fixturePath(&path_buffer, "wevt/templates.wevtcache");
    var o = testOptions(.jsonl);
    var pulled: [3]Pulled = undefined;
    const paths = [_]?[*:0]const u8{ null, cache.ptr, cache.ptr };
    for (&pulled, paths, [_]u32{ 1, 1, 2 }) |*p, path, threads| {
        o.wevt_cache_path = path;
        o.threads = threads;
        const parser = try openBuffer(bytes, &o);
        defer evtx_parser_free(parser);
        p.* = try pullAll(parser);
    }
    defer for (&pulled) |*p| p.deinit();
    try testing.expectEqual(@as(usize, 2), pulled[0].records);
    try testing.expectEqual(@as(usize, 8), pulled[0].failed);
    try testing.expectEqual(@as(usize, 8), pulled[1].records);
    try testing.expectEqual(@as(usize, 2), pulled[1].failed);
    const alice = "\"TargetUserName\":\"alice\"";
    try testing.expect(std.mem.indexOf(u8, pulled[1].text.items, alice) != null);
    try testing.expectEqualStrings(pulled[1].text.items, pulled[2].text.items);
}

test "wevt_cache_path: unreadable is an I/O error, damaged is invalid, in the CLI's words" {
    const bytes = try readFixture("wevt/events.evtx");
    defer testing.allocator.free(bytes);
    var path_buffer: [std.fs.max_path_bytes]u8 = undefined;
    var o = testOptions(.jsonl);
    var out: ?*evtx_parser = @ptrFromInt(8);
    // The reference's messages (`evtx_dump --wevt-cache ...`, stderr).
    const cases = [_]struct { name: []const u8, status: evtx_status, message: []const u8 }{
        .{
            .name = "wevt/no-such-file.wevtcache",
            .status = .io,
            .message = "I/O error while open `",
        },
        .{
            .name = "wevt/damaged-magic.wevtcache",
            .status = .invalid_options,
            .message = "invalid `.wevtcache` magic for `",
        },
        .{
            .name = "wevt/damaged-crim-magic.wevtcache",
            .status = .invalid_options,
            .message = "failed to parse CRIM/WEVT blob: invalid signature at offset 0",
        },
    };
    inline for (cases) |case| {
        o.wevt_cache_path = (try fixturePath(&path_buffer, case.name)).ptr;
        try expectStatus(case.status, evtx_parser_open_buffer(bytes.ptr, bytes.len, &o, &out));
        try testing.expect(out == null);
        try testing.expect(std.mem.startsWith(u8, std.mem.span(evtx_last_error()), case.message));
        // The file header is read first, as the CLI does.
        try expectStatus(.not_evtx, evtx_parser_open_buffer(bytes.ptr, 100, &o, &out));
    }
}

test "open_path reads the file by windows: same records as the buffer" {
    var path_buffer: [std.fs.max_path_bytes]u8 = undefined;
    const path = try fixturePath(&path_buffer, "damaged/wrapped.evtx");
    var out: ?*evtx_parser = null;
    const o = testOptions(.jsonl);
    try expectStatus(.ok, evtx_parser_open_path(path.ptr, &o, &out));
    defer evtx_parser_free(out);
    var pulled = try pullAll(out.?);
    defer pulled.deinit();
    const expected = try readFixture("expected/wrapped.jsonl");
    defer testing.allocator.free(expected);
    try testing.expectEqualStrings(expected, pulled.text.items);
    const reference = try referenceCounts("damaged/wrapped.evtx", null);
    try testing.expectEqual(reference.records, pulled.records);
}

test "a lent buffer stays the caller's: freed after the parser, with nothing kept or freed by it" {
    const bytes = try readFixture("synthetic/basic.evtx");
    // The parser reads the buffer in place (the header: not copied), and never frees it:
    // the testing allocator would report a double free below, and a leak if it copied.
    const parser = try openBuffer(bytes, &testOptions(.xml));
    var record: evtx_record = undefined;
    try expectStatus(.ok, evtx_parser_next(parser, &record));
    const data = record.data.?[0..record.data_len];
    try testing.expect(
        @intFromPtr(data.ptr) < @intFromPtr(
            bytes.ptr,
        ) or @intFromPtr(data.ptr) >= @intFromPtr(bytes.ptr) + bytes.len,
    );
    evtx_parser_free(parser);
    testing.allocator.free(bytes);
    evtx_parser_free(null);
}

test {
    _ = system;
    _ = timestamps;
}

test "evtx_triage_path: one file's report through one write; open statuses; bad silence" {
    const Collect = struct {
        text: std.ArrayList(u8) = .empty,
        calls: usize = 0,
        fn write(user: ?*anyopaque, data: ?[*]const u8, len: usize) callconv(.c) i32 {
            const c: *@This() = @ptrCast(@alignCast(user.?));
            c.calls += 1;
            c.text.appendSlice(testing.allocator, data.?[0..len]) catch return 1;
            return 0;
        }
        fn refuse(_: ?*anyopaque, _: ?[*]const u8, _: usize) callconv(.c) i32 {
            return 1;
        }
    };
    var buffer: [std.fs.max_path_bytes]u8 = undefined;
    const path = try fixturePath(&buffer, "carving/slack-and-gaps.evtx");
    var c: Collect = .{};
    defer c.text.deinit(testing.allocator);
    try expectStatus(.ok, evtx_triage_path(path.ptr, 3600, Collect.write, &c));
    try testing.expectEqual(@as(usize, 1), c.calls);
    const gpa_test = testing.allocator;
    const parsed = try std.json.parseFromSlice(std.json.Value, gpa_test, c.text.items, .{});
    defer parsed.deinit();
    const o = parsed.value.object;
    try testing.expectEqualStrings(path, o.get("path").?.string);
    // shared-fixtures/README.md, carving: 7 records without --recover-records, 11 with.
    try testing.expectEqual(@as(i64, 7), o.get("records").?.integer);
    try testing.expectEqual(@as(i64, 4), o.get("recovered").?.integer);
    try testing.expect(c.text.items[c.text.items.len - 1] == '}');
    try expectStatus(.callback_aborted, evtx_triage_path(path.ptr, 3600, Collect.refuse, null));
    try expectStatus(.invalid_options, evtx_triage_path(path.ptr, 0, Collect.write, &c));
    try expectStatus(.null_argument, evtx_triage_path(null, 3600, Collect.write, &c));
    try expectStatus(.null_argument, evtx_triage_path(path.ptr, 3600, null, &c));
    const missing = try fixturePath(&buffer, "no-such.evtx");
    try expectStatus(.io, evtx_triage_path(missing.ptr, 3600, Collect.write, &c));
    const not_evtx = try fixturePath(&buffer, "damaged/bad-file-magic.evtx");
    try expectStatus(.not_evtx, evtx_triage_path(not_evtx.ptr, 3600, Collect.write, &c));
    try testing.expectEqual(@as(usize, 1), c.calls);
}
