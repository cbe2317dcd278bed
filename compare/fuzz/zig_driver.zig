//! libFuzzer driver for the Zig engine, through its own API (`api`), through the C ABI (`abi`),
//! both engines through the C ABI on the same input (`cross`: libevtx_rs.so, loaded at run
//! time, against the Zig exports linked in; any difference in a record's status, id, FILETIME,
//! offset, chunk or bytes is a finding), or the side readers (`readers`: the input as an
//! `.MTA`, a `.wevtcache`, a CRIM manifest and a PE image, the twin of rust_readers.rs). One
//! object holds all four, so the engine is compiled once; the binary's name picks the target
//! (`fuzz-zig-api`, `fuzz-zig-abi`, `fuzz-cross`, `fuzz-zig-readers`; compare/build_fuzz.zig
//! links one of each). The engine is compiled with `-ffuzz`, which
//! emits inline 8-bit coverage counters but no constructor registering them with a fuzzer
//! runtime, so `LLVMFuzzerInitialize` hands libFuzzer the counter section itself.
//!
//! A crash (safety panic in ReleaseSafe, segfault), a hang, a leak, or `EVTX_STATUS_INTERNAL`
//! from the ABI is a finding; every other outcome — errors included — is a normal run. Leaks:
//! the `api` and `readers` targets allocate through a `std.heap.DebugAllocator` per input and
//! panics when it reports one. The C ABI linked in here allocates through `evtx_capi_allocator`
//! below (capi.zig takes it from the root) instead of malloc: a `DebugAllocator` that counts every
//! allocation and free exactly, checked after each input once `evtx_parser_free` has run (`abi`,
//! `cross`).
const std = @import("std");
const evtx = @import("evtx");
const capi = @import("capi");

const Target = enum { api, abi, cross, readers };

/// Set once by `LLVMFuzzerInitialize` from the binary's name, before the first input.
var target: Target = .api;

/// The target a binary named `name` runs; null for a name no build gives.
fn targetOf(name: []const u8) ?Target {
    const names = [_]struct { []const u8, Target }{
        .{ "fuzz-zig-api", .api }, .{ "fuzz-zig-abi", .abi },
        .{ "fuzz-cross", .cross }, .{ "fuzz-zig-readers", .readers },
    };
    for (names) |entry| if (std.mem.eql(u8, name, entry[0])) return entry[1];
    return null;
}

/// The Zig C ABI's allocator in the fuzz build (see capi.zig's `gpa`). Thread-safe, as `-t 2`
/// workers allocate through it too.
var capi_debug: std.heap.DebugAllocator(.{ .thread_safe = true }) = .init;
pub const evtx_capi_allocator: std.mem.Allocator = capi_debug.allocator();

/// Panics when the C ABI left anything allocated after every parser of the input was freed,
/// then starts the count afresh for the next input.
fn expectNoCapiLeak() void {
    if (capi_debug.deinit() == .leak) @panic("the Zig C ABI leaked memory (see the report above)");
    capi_debug = .init;
}

extern const __start___sancov_cntrs: u8;
extern const __stop___sancov_cntrs: u8;
extern fn __sanitizer_cov_8bit_counters_init(start: [*]const u8, stop: [*]const u8) void;

export fn LLVMFuzzerInitialize(argc: *c_int, argv: *[*][*:0]u8) callconv(.c) c_int {
    std.debug.assert(argc.* >= 1);
    const name = std.fs.path.basename(std.mem.span(argv.*[0]));
    target = targetOf(name) orelse
        @panic("fuzz driver: name it fuzz-zig-api, -abi, -readers or fuzz-cross");
    const start: [*]const u8 = @ptrCast(&__start___sancov_cntrs);
    __sanitizer_cov_8bit_counters_init(start, @ptrCast(&__stop___sancov_cntrs));
    // One failing call up front: it allocates this thread's error-detail buffer (malloc, as
    // long as the thread lives), so no input is the first to pay for it.
    _ = capi.evtx_parser_open_buffer(null, 0, null, null);
    return 0;
}

export fn LLVMFuzzerTestOneInput(data: [*]const u8, size: usize) callconv(.c) c_int {
    const input = data[0..size];
    switch (target) {
        .abi => {
            fuzzAbi(input);
            expectNoCapiLeak();
        },
        .cross => {
            fuzzCross(input);
            expectNoCapiLeak();
        },
        .api => {
            var debug: std.heap.DebugAllocator(.{ .enable_memory_limit = true }) = .init;
            debug.requested_memory_limit = api_memory_limit;
            fuzzApi(debug.allocator(), input);
            if (debug.deinit() == .leak) @panic("the Zig engine leaked memory (see above)");
        },
        .readers => {
            var debug: std.heap.DebugAllocator(.{ .enable_memory_limit = true }) = .init;
            debug.requested_memory_limit = api_memory_limit;
            fuzzReaders(debug.allocator(), input);
            if (debug.deinit() == .leak) @panic("the Zig readers leaked memory (see above)");
        },
    }
    return 0;
}

/// The smoke's memory bound for the Zig engine (memory stays bounded on any input): libFuzzer's
/// `-malloc_limit_mb` needs a sanitizer's malloc hooks, which this driver has not, so its own
/// allocator refuses past 64 MiB held at once, and `fuzzApi` turns the refusal into a finding.
const api_memory_limit: usize = 64 << 20;

/// Every output mode a user can pick that changes the code path.
const settings_list = [_]evtx.options.Options{
    .{ .format = .xml },
    .{ .format = .jsonl },
    .{ .format = .jsonl, .separate_json_attributes = true, .validate_checksums = true },
    .{ .format = .json, .recover_records = true },
};

fn fuzzApi(gpa: std.mem.Allocator, input: []const u8) void {
    const header = evtx.file_header.parse(input) catch return;
    const in = evtx.dump.Input.fromBytes(input);
    for (&settings_list) |*settings| {
        const validate = settings.validate_checksums;
        const order = evtx.input.chunkOrder(gpa, &in, header.chunk_slots, validate) catch
            @panic("out of memory");
        var renderer: evtx.dump.Renderer = undefined;
        renderer.init(gpa, settings);
        defer renderer.deinit();
        var result = evtx.dump.ChunkResult.init(gpa);
        defer result.deinit();
        // The same chunks through the full parse only: compiled programs (the scan, replay)
        // must never change an entry, so any difference is a finding.
        var parsed: evtx.dump.Renderer = undefined;
        parsed.init(gpa, settings);
        defer parsed.deinit();
        parsed.compiled = false;
        var parsed_result = evtx.dump.ChunkResult.init(gpa);
        defer parsed_result.deinit();
        var slots = order.iterator();
        while (slots.next()) |slot| {
            renderer.renderChunk(&in, slot, &result) catch @panic("out of memory");
            parsed.renderChunk(&in, slot, &parsed_result) catch @panic("out of memory");
            expectSameEntries(&result, &parsed_result);
        }
    }
}

/// The side readers on the same bytes as rust_readers.rs: every fault is an error value; a
/// safety panic, a leak or an allocation past `api_memory_limit` is a finding.
fn fuzzReaders(gpa: std.mem.Allocator, input: []const u8) void {
    var diag: evtx.mta.Diagnostic = undefined;
    if (evtx.mta.parse(gpa, input, &diag)) |parsed| {
        var m = parsed;
        defer m.deinit();
        // Lookups walk the tables the parse built: a few record numbers and names.
        const lookups = [_]struct { u64, []const u8 }{
            .{ 1, evtx.mta.default_publisher }, .{ 2, "Mta-Alpha" }, .{ 7, "mta-beta" },
        };
        for (lookups) |lookup| {
            const event: evtx.mta.EventFields = .{
                .provider = lookup[1],
                .event_record_id = lookup[0],
                .level = 4,
                .task = 1,
                .opcode = 1,
                .keywords = std.math.maxInt(u64),
            };
            std.mem.doNotOptimizeAway(m.renderingInfo(lookup[0], &event));
        }
    } else |e| if (e == error.OutOfMemory) @panic("mta: over the memory bound");

    // The cache owns its bytes once parsed.
    const owned = gpa.dupe(u8, input) catch @panic("out of memory");
    var cache_diag: evtx.wevt_cache.Diagnostic = undefined;
    if (evtx.wevt_cache.WevtCache.parse(gpa, owned, &cache_diag)) |parsed| {
        var cache = parsed;
        std.mem.doNotOptimizeAway(cache.count());
        cache.deinit(gpa);
    } else |e| {
        gpa.free(owned);
        if (e == error.OutOfMemory) @panic("wevt cache: over the memory bound");
    }

    crim(gpa, input);
    var blobs: std.ArrayList([]const u8) = .empty;
    defer blobs.deinit(gpa);
    var fault: evtx.pe.Failure = undefined;
    evtx.pe.wevtTemplates(gpa, input, &blobs, &fault) catch |e| switch (e) {
        error.OutOfMemory => @panic("pe: over the memory bound"),
        error.Fault => return,
    };
    for (blobs.items) |blob| crim(gpa, blob);
}

/// A CRIM manifest: its templates, each translated into a chunk-style definition.
fn crim(gpa: std.mem.Allocator, blob: []const u8) void {
    var temps: std.ArrayList(evtx.wevt_cache.TempRef) = .empty;
    defer temps.deinit(gpa);
    var fault: evtx.wevt_cache.CrimError = undefined;
    evtx.wevt_cache.parseCrim(gpa, blob, &temps, &fault) catch |e| switch (e) {
        error.OutOfMemory => @panic("crim: over the memory bound"),
        else => return,
    };
    var ext: std.ArrayList(u8) = .empty;
    defer ext.deinit(gpa);
    for (temps.items) |t| {
        std.debug.assert(t.offset + t.size <= blob.len);
        const temp = blob[t.offset..][0..t.size];
        const at = evtx.wevt_cache.translate(gpa, temp, &ext) catch
            @panic("translate: over the memory bound");
        std.mem.doNotOptimizeAway(at);
    }
}

fn expectSameEntries(
    compiled: *const evtx.dump.ChunkResult,
    parsed: *const evtx.dump.ChunkResult,
) void {
    if (compiled.entries.items.len != parsed.entries.items.len) {
        @panic("compiled programs changed the entry count");
    }
    for (compiled.entries.items, parsed.entries.items) |*c, *p| {
        if (c.kind() != p.kind()) @panic("compiled programs changed an entry's outcome");
        if (!std.mem.eql(u8, c.detail(), p.detail())) @panic("compiled programs changed an error");
        if (!std.mem.eql(u8, compiled.text(c), parsed.text(p))) {
            @panic("compiled programs changed a record's text");
        }
    }
}

/// The C ABI's variants: both APIs, and the options that allocate differently (event
/// ranges are copied at open, carving keeps its own scratch, `-t 2` runs workers, a record
/// filter skips records unrendered).
const AbiVariant = struct {
    format: u32,
    push: bool,
    recover: bool = false,
    threads: u32 = 1,
    events: bool = false,
    filter: bool = false,
};
const abi_variants = [_]AbiVariant{
    .{ .format = 0, .push = false },
    .{ .format = 2, .push = false, .recover = true, .events = true },
    .{ .format = 1, .push = true, .threads = 2 },
    .{ .format = 2, .push = true, .recover = true },
    .{ .format = 2, .push = false, .recover = true, .filter = true },
};

/// A filter on all five System fields (`shared-fixtures/README.md`, "Filters") that the
/// fixtures' Security and System records partly pass, so both the skip and the kept paths
/// run on mutated bytes.
const filter_event_ids = [_]capi.evtx_value_range{
    .{ .first = 0, .last = 4700 },
    .{ .first = 7000, .last = 7045 },
};
const filter_levels = [_]capi.evtx_value_range{.{ .first = 0, .last = 4 }};
const filter_providers = [_][*:0]const u8{
    "Microsoft-Windows-Security-Auditing",
    "service control manager",
    "Microsoft-Windows-Eventlog",
};
const filter_channels = [_][*:0]const u8{ "Security", "SYSTEM" };
/// 2000-01-01T00:00:00Z in FILETIME ticks.
const filter_since: u64 = 125_911_584_000_000_000;

fn setFilter(options: *capi.evtx_options) void {
    options.event_ids = &filter_event_ids;
    options.event_ids_count = filter_event_ids.len;
    options.levels = &filter_levels;
    options.levels_count = filter_levels.len;
    options.providers = @ptrCast(&filter_providers);
    options.providers_count = filter_providers.len;
    options.channels = @ptrCast(&filter_channels);
    options.channels_count = filter_channels.len;
    options.since = filter_since;
    options.since_set = 1;
}

fn fuzzAbi(input: []const u8) void {
    for (&abi_variants) |*variant| abiRun(input, variant);
}

fn abiRun(input: []const u8, variant: *const AbiVariant) void {
    const internal: u32 = @intFromEnum(capi.evtx_status.internal);
    const end: u32 = @intFromEnum(capi.evtx_status.end);
    const ranges = [_]capi.evtx_event_range{
        .{ .first = 1, .last = 3 },
        .{ .first = 5, .last = 5 },
    };
    var options: capi.evtx_options = undefined;
    capi.evtx_options_init_v1(&options);
    options.format = variant.format;
    options.threads = variant.threads;
    options.recover_records = @intFromBool(variant.recover);
    if (variant.events) {
        options.event_ranges = &ranges;
        options.event_ranges_count = ranges.len;
    }
    if (variant.filter) setFilter(&options);
    var parser: ?*capi.evtx_parser = null;
    const opened = capi.evtx_parser_open_buffer(input.ptr, input.len, &options, &parser);
    if (opened == internal) @panic("evtx_parser_open_buffer: EVTX_STATUS_INTERNAL");
    defer capi.evtx_parser_free(parser);
    if (parser == null) return;
    if (variant.push) {
        var stats: capi.evtx_stats = undefined;
        const status = capi.evtx_parser_dump(parser, discard, null, null, &stats);
        if (status == internal) @panic("evtx_parser_dump: EVTX_STATUS_INTERNAL");
        return;
    }
    var record: capi.evtx_record = undefined;
    while (true) {
        const status = capi.evtx_parser_next(parser, &record);
        if (status == internal) @panic("evtx_parser_next: EVTX_STATUS_INTERNAL");
        if (status == end or status < 16 and status != 0) break;
    }
}

fn discard(user_data: ?*anyopaque, data: ?[*]const u8, len: usize) callconv(.c) i32 {
    _ = user_data;
    _ = data;
    _ = len;
    return 0;
}

/// The functions of libevtx_rs.so the `cross` target calls.
const RustAbi = struct {
    options_init_v1: *const fn (*capi.evtx_options) callconv(.c) void,
    parser_open_buffer: *const fn (
        [*]const u8,
        usize,
        *const capi.evtx_options,
        *?*anyopaque,
    ) callconv(.c) u32,
    parser_next: *const fn (?*anyopaque, *capi.evtx_record) callconv(.c) u32,
    parser_free: *const fn (?*anyopaque) callconv(.c) void,
};

var rust_abi: ?RustAbi = null;

/// libevtx_rs.so from $EVTX_FUZZ_RS_LIB, else ../lib/libevtx_rs.so beside the driver
/// (zig-out/fuzz/ → zig-out/lib/). Loaded once, never closed.
fn loadRust() RustAbi {
    if (rust_abi) |abi| return abi;
    var buffer: [std.fs.max_path_bytes]u8 = undefined;
    const path: []const u8 = std.posix.getenv("EVTX_FUZZ_RS_LIB") orelse blk: {
        const dir = std.fs.selfExeDirPath(&buffer) catch @panic("cross: no executable path");
        const tail = "/../lib/libevtx_rs.so";
        if (dir.len + tail.len > buffer.len) @panic("cross: path too long");
        @memcpy(buffer[dir.len..][0..tail.len], tail);
        break :blk buffer[0 .. dir.len + tail.len];
    };
    var library = std.DynLib.open(path) catch {
        std.debug.print("cross: cannot load {s} (set EVTX_FUZZ_RS_LIB)\n", .{path});
        @panic("cross: no libevtx_rs.so");
    };
    var abi: RustAbi = undefined;
    inline for (@typeInfo(RustAbi).@"struct".fields) |field| {
        @field(abi, field.name) = library.lookup(field.type, "evtx_" ++ field.name) orelse
            @panic("cross: libevtx_rs.so lacks a symbol");
    }
    rust_abi = abi;
    return abi;
}

/// Both engines through the C ABI, pull API, in XML and jsonl, and in jsonl with the record
/// filter and carving: the same open status, then the same records (status, id, FILETIME,
/// offset, chunk, bytes) in the same order.
fn fuzzCross(input: []const u8) void {
    const rust = loadRust();
    const end: u32 = @intFromEnum(capi.evtx_status.end);
    for ([_]u32{ 0, 2, 2 }, [_]bool{ false, false, true }) |format, filter| {
        var zig_options: capi.evtx_options = undefined;
        capi.evtx_options_init_v1(&zig_options);
        zig_options.format = format;
        zig_options.threads = 1;
        var rust_options: capi.evtx_options = undefined;
        rust.options_init_v1(&rust_options);
        rust_options.format = format;
        rust_options.threads = 1;
        if (filter) {
            setFilter(&zig_options);
            setFilter(&rust_options);
            zig_options.recover_records = 1;
            rust_options.recover_records = 1;
        }

        var zig_parser: ?*capi.evtx_parser = null;
        var rust_parser: ?*anyopaque = null;
        const zig_opened: u32 =
            capi.evtx_parser_open_buffer(input.ptr, input.len, &zig_options, &zig_parser);
        const rust_opened =
            rust.parser_open_buffer(input.ptr, input.len, &rust_options, &rust_parser);
        defer capi.evtx_parser_free(zig_parser);
        defer rust.parser_free(rust_parser);
        if (zig_opened != rust_opened) @panic("cross: the engines open the input differently");
        if (zig_parser == null or rust_parser == null) {
            if ((zig_parser == null) != (rust_parser == null)) {
                @panic("cross: one engine opened the input");
            }
            continue;
        }
        var zig_record: capi.evtx_record = undefined;
        var rust_record: capi.evtx_record = undefined;
        // Bounded: a parser that never ends is a hang, which libFuzzer's -timeout reports.
        while (true) {
            const zig_status: u32 = capi.evtx_parser_next(zig_parser, &zig_record);
            const rust_status = rust.parser_next(rust_parser, &rust_record);
            if (zig_status != rust_status) @panic("cross: the engines return different statuses");
            if (zig_status == end) break;
            if (zig_status != 0 and zig_status < 16) break; // a failure of the call, alike
            if (zig_record.record_id != rust_record.record_id) @panic("cross: record ids differ");
            if (zig_record.filetime != rust_record.filetime) @panic("cross: FILETIMEs differ");
            if (zig_record.file_offset != rust_record.file_offset) @panic("cross: offsets differ");
            if (zig_record.chunk_index != rust_record.chunk_index) @panic("cross: chunks differ");
            if (zig_record.status != rust_record.status) @panic("cross: record statuses differ");
            if (zig_record.data_len != rust_record.data_len) @panic("cross: record lengths differ");
            if (zig_record.data_len > 0) {
                const zig_data = zig_record.data orelse @panic("cross: no data");
                const rust_data = rust_record.data orelse @panic("cross: no data");
                const left = zig_data[0..zig_record.data_len];
                const right = rust_data[0..rust_record.data_len];
                if (!std.mem.eql(u8, left, right)) @panic("cross: record bytes differ");
            }
        }
    }
}
