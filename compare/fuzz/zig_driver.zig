//! libFuzzer driver for the Zig engine, through its own API (`api`) or through the C ABI
//! (`abi`), chosen at build time. The engine is compiled with `-ffuzz`, which emits inline
//! 8-bit coverage counters but no constructor registering them with a fuzzer runtime, so
//! `LLVMFuzzerInitialize` hands libFuzzer the counter section itself.
//!
//! A crash (safety panic in ReleaseSafe, segfault), a leak-free hang, or `EVTX_STATUS_INTERNAL`
//! from the ABI is a finding; every other outcome — errors included — is a normal run.
const std = @import("std");
const evtx = @import("evtx");
const capi = @import("capi");
const fuzz_options = @import("fuzz_options");

extern const __start___sancov_cntrs: u8;
extern const __stop___sancov_cntrs: u8;
extern fn __sanitizer_cov_8bit_counters_init(start: [*]const u8, stop: [*]const u8) void;

export fn LLVMFuzzerInitialize(argc: *c_int, argv: *[*][*:0]u8) callconv(.c) c_int {
    _ = argc;
    _ = argv;
    __sanitizer_cov_8bit_counters_init(@ptrCast(&__start___sancov_cntrs), @ptrCast(&__stop___sancov_cntrs));
    return 0;
}

export fn LLVMFuzzerTestOneInput(data: [*]const u8, size: usize) callconv(.c) c_int {
    const input = data[0..size];
    if (std.mem.eql(u8, fuzz_options.target, "abi")) fuzzAbi(input) else fuzzApi(input);
    return 0;
}

/// Every output mode a user can pick that changes the code path.
const settings_list = [_]evtx.dump.Settings{
    .{ .format = .xml },
    .{ .format = .jsonl },
    .{ .format = .jsonl, .separate_attributes = true, .validate_checksums = true },
    .{ .format = .json, .recover_records = true },
};

fn fuzzApi(input: []const u8) void {
    const gpa = std.heap.c_allocator;
    const header = evtx.file_header.parse(input) catch return;
    for (&settings_list) |*settings| {
        const order = evtx.dump.chunkOrder(gpa, input, &header, settings) catch @panic("out of memory");
        defer gpa.free(order);
        var renderer: evtx.dump.Renderer = undefined;
        renderer.init(gpa, settings);
        defer renderer.deinit();
        var result = evtx.dump.Result.init(gpa);
        defer result.deinit();
        // The same chunks through the full parse only: compiled programs (the scan, replay)
        // must never change an entry, so any difference is a finding.
        var parsed: evtx.dump.Renderer = undefined;
        parsed.init(gpa, settings);
        defer parsed.deinit();
        parsed.compiled = false;
        var parsed_result = evtx.dump.Result.init(gpa);
        defer parsed_result.deinit();
        for (order) |slot| {
            renderer.renderChunk(input, slot, &result) catch @panic("out of memory");
            parsed.renderChunk(input, slot, &parsed_result) catch @panic("out of memory");
            expectSameEntries(&result, &parsed_result);
        }
    }
}

fn expectSameEntries(compiled: *const evtx.dump.Result, parsed: *const evtx.dump.Result) void {
    if (compiled.entries.items.len != parsed.entries.items.len) @panic("compiled programs changed the entry count");
    for (compiled.entries.items, parsed.entries.items) |*c, *p| {
        if (c.kind != p.kind) @panic("compiled programs changed an entry's outcome");
        if (!std.mem.eql(u8, c.detail, p.detail)) @panic("compiled programs changed an error");
        if (!std.mem.eql(u8, compiled.text(c), parsed.text(p))) @panic("compiled programs changed a record's text");
    }
}

fn fuzzAbi(input: []const u8) void {
    const internal: u32 = @intFromEnum(capi.evtx_status.internal);
    const end: u32 = @intFromEnum(capi.evtx_status.end);
    for ([_]u32{ 0, 2 }) |format| {
        var options: capi.evtx_options = undefined;
        capi.evtx_options_init(&options);
        options.format = format;
        options.threads = 1;
        var parser: ?*capi.evtx_parser = null;
        const opened = capi.evtx_parser_open_buffer(input.ptr, input.len, &options, &parser);
        if (opened == internal) @panic("evtx_parser_open_buffer: EVTX_STATUS_INTERNAL");
        defer capi.evtx_parser_free(parser);
        if (parser == null) continue;
        var record: capi.evtx_record = undefined;
        while (true) {
            const status = capi.evtx_parser_next(parser, &record);
            if (status == internal) @panic("evtx_parser_next: EVTX_STATUS_INTERNAL");
            if (status == end or status < 16 and status != 0) break;
        }
    }
}
