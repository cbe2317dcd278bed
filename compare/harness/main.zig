//! evtx-bench: one benchmark driver for every library behind include/evtx.h.
//!
//! Built once per backend (evtx-bench-rs, evtx-bench-zig, evtx-bench-ref link one library
//! statically) and once as evtx-bench, which dlopens any number of libraries given with --lib.
//! Each input is read into memory once; then N timed rounds, each running every backend once
//! (open + render + free through the C ABI into a sink that only hashes the bytes; no I/O in
//! the timed region), so load changes on a shared machine hit all backends alike.
//! Prints records, failed records, output bytes, output hash, median and min time, MB/s of
//! input, ns per record and the ratio to the reference; --json writes the same for the gap
//! report. Exits 1 when backends disagree on the output hash or counts, or a backend fails.
//! Besides the bytes, each backend hashes every error record's fields (record id, FILETIME,
//! file offset, chunk, status) and, with --api pull, every record's: they are compared too.
//! Before any input, every library must give every status the same name (`evtx_status_name`).
//! --parity (make abi-parity) makes every skip a failure: a --lib that is not there, a
//! backend answering NOT_IMPLEMENTED, fewer than two backends.
//! --sources measures each backend once per way of handing it the input, in the same rounds:
//! `heap` (the bytes read before timing, `open_buffer`), `map` (the file mapped afresh each run,
//! `open_buffer` over the mapping: what the CLIs did before PERF.md H10a and H10b), `path`
//! (`open_path`: the library reads the file through its chunk windows). `map` against `path` is
//! what the windows cost, with the same engine code on both sides (PERF.md H10e).
const std = @import("std");
const c = @import("evtx_h");
const build_options = @import("harness_options");

/// "dynamic" for evtx-bench, else the name of the statically linked backend.
const linked_backend: []const u8 = build_options.backend;
const dynamic = std.mem.eql(u8, linked_backend, "dynamic");

const usage =
    \\usage: evtx-bench [options] FILE.evtx...
    \\
    \\  --lib PATH        a library implementing evtx.h (evtx-bench only; repeatable; default:
    \\                    libevtx_ref, libevtx_rs, libevtx_zig .so in ../lib beside the binary)
    \\  --format F        xml | json | jsonl (default jsonl)
    \\  --threads N       worker threads passed to the library (default 1; 0 = one per CPU)
    \\  --runs N          timed runs per input and backend (default 5)
    \\  --warmup N        untimed runs before them (default 1)
    \\  --api A           push (evtx_parser_dump, default) | pull (evtx_parser_next)
    \\  --json PATH       also write the results as JSON
    \\  --option O        no-indent | separate-json-attributes | dont-show-record-number |
    \\                    validate-checksums | stop-after-one-error | events (2-4,7) |
    \\                    recover-records
    \\                    (repeatable; the evtx_options field, as the CLI flag of that name)
    \\  --mta FILE        evtx_options.mta_path (the CLI's --mta FILE)
    \\  --wevt-cache FILE evtx_options.wevt_cache_path (the CLI's --wevt-cache FILE)
    \\  --event-id LIST   evtx_options.event_ids, LIST as the CLI's (4624,4700-4799)
    \\  --level LIST      evtx_options.levels
    \\  --provider NAME   evtx_options.providers (repeatable)
    \\  --channel NAME    evtx_options.channels (repeatable)
    \\  --since TICKS     evtx_options.since, a FILETIME (100 ns ticks since 1601)
    \\  --until TICKS     evtx_options.until, a FILETIME
    \\  --sources S       heap | map | path, comma-separated (default heap): how the input
    \\                    reaches each backend; every backend is run once per source per round
    \\  --parity          fail on any skip: a missing --lib, NOT_IMPLEMENTED, under two backends
    \\
;

/// The functions of evtx.h the harness calls, from a linked or a loaded library. The types are
/// spelled out (not `@TypeOf` of the header's externs, which would make evtx-bench reference the
/// symbols); `linked()` proves they match the header.
const Api = struct {
    abi_version: *const fn () callconv(.c) u32,
    backend_name: *const fn () callconv(.c) [*c]const u8,
    backend_version: *const fn () callconv(.c) [*c]const u8,
    status_name: *const fn (u32) callconv(.c) [*c]const u8,
    last_error: *const fn () callconv(.c) [*c]const u8,
    options_init_v1: *const fn ([*c]c.evtx_options) callconv(.c) void,
    parser_open_buffer: *const fn (
        [*c]const u8,
        usize,
        [*c]const c.evtx_options,
        [*c]?*c.evtx_parser,
    ) callconv(.c) c.evtx_status,
    parser_open_path: *const fn (
        [*c]const u8,
        [*c]const c.evtx_options,
        [*c]?*c.evtx_parser,
    ) callconv(.c) c.evtx_status,
    parser_next: *const fn (?*c.evtx_parser, [*c]c.evtx_record) callconv(.c) c.evtx_status,
    parser_dump: *const fn (
        ?*c.evtx_parser,
        c.evtx_write_fn,
        c.evtx_error_fn,
        ?*anyopaque,
        [*c]c.evtx_stats,
    ) callconv(.c) c.evtx_status,
    parser_free: *const fn (?*c.evtx_parser) callconv(.c) void,

    fn linked() Api {
        if (dynamic) unreachable;
        var api: Api = undefined;
        inline for (@typeInfo(Api).@"struct".fields) |field| {
            @field(api, field.name) = &@field(c, "evtx_" ++ field.name);
        }
        return api;
    }

    fn load(library: *std.DynLib) error{MissingSymbol}!Api {
        var api: Api = undefined;
        inline for (@typeInfo(Api).@"struct".fields) |field| {
            @field(api, field.name) = library.lookup(field.type, "evtx_" ++ field.name) orelse {
                std.debug.print("evtx-bench: the library has no evtx_{s}\n", .{field.name});
                return error.MissingSymbol;
            };
        }
        return api;
    }
};

const Backend = struct {
    api: Api,
    /// `evtx_backend_name()`.
    name: []const u8,
    version: []const u8,
    /// The library path (evtx-bench) or "linked".
    library: []const u8,
};

const ApiKind = enum { push, pull };

/// How the input reaches the library (`--sources`).
const Source = enum {
    /// Read into memory once before the runs; `open_buffer` lends those bytes.
    heap,
    /// Mapped read-only afresh in each timed run; `open_buffer` over the mapping.
    map,
    /// `open_path`: the library reads the file itself.
    path,
};

/// One input as every source needs it.
const Input = struct {
    data: []const u8,
    path: [:0]const u8,
};

const Settings = struct {
    format: u32 = c.EVTX_FORMAT_JSONL,
    format_name: []const u8 = "jsonl",
    threads: u32 = 1,
    runs: u32 = 5,
    warmup: u32 = 1,
    api: ApiKind = .push,
    sources: []const Source = &.{.heap},
    json_path: ?[]const u8 = null,
    /// Option variants, applied after `evtx_options_init`.
    no_indent: bool = false,
    separate_json_attributes: bool = false,
    no_record_number: bool = false,
    validate_checksums: bool = false,
    stop_after_error: bool = false,
    events: bool = false,
    recover_records: bool = false,
    /// `--mta FILE`, `--wevt-cache FILE`: paths handed to every library.
    mta_path: ?[*:0]const u8 = null,
    wevt_cache_path: ?[*:0]const u8 = null,
    /// The record filters (`evtx_options` version 1), handed to every library.
    event_ids: std.ArrayList(c.evtx_value_range) = .empty,
    levels: std.ArrayList(c.evtx_value_range) = .empty,
    providers: std.ArrayList([*c]const u8) = .empty,
    channels: std.ArrayList([*c]const u8) = .empty,
    since: ?u64 = null,
    until: ?u64 = null,
    parity: bool = false,
    /// The option names given, for the report line.
    option_names: []const u8 = "",
};

/// `--option events`: records 2 to 4 and 7 (header identifiers), as `--events 2-4,7`.
const event_ranges = [_]c.evtx_event_range{
    .{ .first = 2, .last = 4 },
    .{ .first = 7, .last = 7 },
};

/// Hashes everything written to it; the only work the harness adds to the timed region.
const Sink = struct {
    hasher: std.hash.XxHash3 = .init(0),
    bytes: u64 = 0,
    errors: u64 = 0,
    /// The per-record fields: every error record's (push and pull), every record's (pull);
    /// `recovered` among them, so a carved record marked as live (or the reverse) differs.
    fields: std.hash.XxHash3 = .init(0),
    /// The same, as far as the reference library can say them: its error records carry no
    /// record id (the crate's record-header errors do not hold it) and, through the push API,
    /// only their status (its dump path does not locate them).
    reference_fields: std.hash.XxHash3 = .init(0),
    push: bool = false,

    fn feed(sink: *Sink, data: []const u8) void {
        sink.hasher.update(data);
        sink.bytes += data.len;
    }

    fn feedFields(sink: *Sink, record: *const c.evtx_record) void {
        const fields = [_]u64{
            record.record_id,   record.filetime, record.file_offset,
            record.chunk_index, record.status,   record.recovered,
        };
        sink.fields.update(std.mem.sliceAsBytes(&fields));
        // The reference library says `recovered` of its rendered records only (it reads the
        // crate's marks in the output), so its error records share no more than before.
        const shared: []const u64 = if (record.status == c.EVTX_STATUS_OK)
            &fields
        else if (sink.push)
            fields[4..5]
        else
            fields[2..5];
        sink.reference_fields.update(std.mem.sliceAsBytes(shared));
    }

    fn failed(user_data: ?*anyopaque, record: [*c]const c.evtx_record) callconv(.c) i32 {
        const sink: *Sink = @ptrCast(@alignCast(user_data.?));
        sink.feedFields(record);
        sink.errors += 1;
        return 0;
    }

    fn write(user_data: ?*anyopaque, data: [*c]const u8, len: usize) callconv(.c) i32 {
        const sink: *Sink = @ptrCast(@alignCast(user_data.?));
        sink.feed(data[0..len]);
        return 0;
    }
};

/// What one run produced.
const Outcome = struct {
    records: u64,
    failed: u64,
    output_bytes: u64,
    hash: u64,
    fields_hash: u64,
    reference_fields_hash: u64,
    /// What the dump returned: OK, or the error KIND it stopped at (--option stop-after-one-error).
    final_status: u32,
};

const RunError = error{ BackendFailed, NotImplemented };

/// One row of the results (and of the JSON report).
const Row = struct {
    fixture: []const u8,
    input_bytes: u64,
    backend: []const u8,
    /// `--sources`: how the input reached the backend.
    source: []const u8,
    version: []const u8,
    library: []const u8,
    format: []const u8,
    threads: u32,
    api: []const u8,
    runs: u32,
    records: u64,
    failed: u64,
    output_bytes: u64,
    hash: []const u8,
    fields_hash: []const u8,
    reference_fields_hash: []const u8,
    final_status: u32,
    options: []const u8,
    median_ms: f64,
    min_ms: f64,
    /// The process's user + system time per run (every thread), median: on a shared VM whose
    /// wall times move with other guests' load (steal), the steadier figure for a ratio.
    median_cpu_ms: f64,
    /// Every timed run's wall and CPU time in round order, for paired ratios between rows
    /// (one round runs every row once, so a round's ratio cancels the machine's drift).
    wall_ns_by_round: []const u64,
    cpu_ns_by_round: []const u64,
    mb_per_s: f64,
    ns_per_record: f64,
    ratio_to_reference: ?f64,
    hash_matches: bool,
    status: []const u8,
};

/// The command line: the settings, the `--lib` paths and the inputs.
const Cli = struct {
    settings: Settings = .{},
    library_paths: std.ArrayList([]const u8) = .empty,
    inputs: std.ArrayList([]const u8) = .empty,
};

/// What the inputs gave, for the JSON report and the summary line.
const Report = struct {
    rows: std.ArrayList(Row) = .empty,
    mismatches: std.ArrayList([]const u8) = .empty,
    failures: u32 = 0,
};

/// Steps: parse the command line, load the backends, run each input (measure, compare, print
/// its table), write the JSON report, print the summary.
pub fn main() !void {
    var arena_state: std.heap.ArenaAllocator = .init(std.heap.page_allocator);
    defer arena_state.deinit();
    const arena = arena_state.allocator();

    const args = try std.process.argsAlloc(arena);
    const cli = try parseArgs(arena, args) orelse return;
    const settings = cli.settings;
    const backends = try loadBackends(arena, cli.library_paths.items, settings);

    var stdout_buffer: [4096]u8 = undefined;
    var stdout_writer = std.fs.File.stdout().writerStreaming(&stdout_buffer);
    const stdout = &stdout_writer.interface;

    var report: Report = .{};
    for (cli.inputs.items) |input| try runInput(arena, stdout, backends, input, settings, &report);
    if (settings.json_path) |path| try writeJson(arena, path, settings, &report);

    for (report.mismatches.items) |line| try stdout.print(
        "evtx-bench: OUTPUT DIFFERS: {s}\n",
        .{line},
    );
    const rows = report.rows.items;
    const ok = report.mismatches.items.len == 0 and report.failures == 0;
    try stdout.print("evtx-bench: {d} passed, {d} failed ({d} inputs × {d} backends, format " ++
        "{s}, api {s}, options [{s}])\n", .{
        rows.len - countMismatched(rows), countMismatched(rows) + report.failures,
        cli.inputs.items.len,             backends.len,
        settings.format_name,             @tagName(settings.api),
        settings.option_names,
    });
    try stdout.flush();
    if (!ok) std.process.exit(1);
}

/// The command line, or null after `--help`.
fn parseArgs(arena: std.mem.Allocator, args: []const [:0]u8) !?Cli {
    var cli: Cli = .{};
    var index: usize = 1;
    while (index < args.len) : (index += 1) {
        const arg = args[index];
        if (std.mem.eql(u8, arg, "--help") or std.mem.eql(u8, arg, "-h")) {
            std.debug.print("{s}", .{usage});
            return null;
        } else if (std.mem.eql(u8, arg, "--parity")) {
            cli.settings.parity = true;
        } else if (std.mem.startsWith(u8, arg, "--")) {
            if (index + 1 >= args.len) fatal("{s} needs a value\n{s}", .{ arg, usage });
            index += 1;
            try parseOption(arena, &cli, arg, args[index]);
        } else {
            try cli.inputs.append(arena, arg);
        }
    }
    if (cli.inputs.items.len == 0) fatal("no input files\n{s}", .{usage});
    return cli;
}

/// One option `arg` with its value `text`.
fn parseOption(arena: std.mem.Allocator, cli: *Cli, arg: []const u8, text: [:0]const u8) !void {
    const settings = &cli.settings;
    if (std.mem.eql(u8, arg, "--lib")) {
        if (!dynamic) fatal("--lib: this harness is linked with {s}", .{linked_backend});
        try cli.library_paths.append(arena, text);
    } else if (std.mem.eql(u8, arg, "--format")) {
        settings.format_name = text;
        settings.format = if (std.mem.eql(u8, text, "xml"))
            c.EVTX_FORMAT_XML
        else if (std.mem.eql(u8, text, "json"))
            c.EVTX_FORMAT_JSON
        else if (std.mem.eql(u8, text, "jsonl"))
            c.EVTX_FORMAT_JSONL
        else
            fatal("--format: xml, json or jsonl, not {s}", .{text});
    } else if (std.mem.eql(u8, arg, "--threads")) {
        settings.threads = parseCount(arg, text);
    } else if (std.mem.eql(u8, arg, "--runs")) {
        settings.runs = @max(1, parseCount(arg, text));
    } else if (std.mem.eql(u8, arg, "--warmup")) {
        settings.warmup = parseCount(arg, text);
    } else if (std.mem.eql(u8, arg, "--api")) {
        settings.api = std.meta.stringToEnum(ApiKind, text) orelse
            fatal("--api: push or pull, not {s}", .{text});
    } else if (std.mem.eql(u8, arg, "--sources")) {
        settings.sources = try parseSources(arena, text);
    } else if (std.mem.eql(u8, arg, "--json")) {
        settings.json_path = text;
    } else if (std.mem.eql(u8, arg, "--mta") or std.mem.eql(u8, arg, "--wevt-cache")) {
        if (arg[2] == 'm') settings.mta_path = text.ptr else settings.wevt_cache_path = text.ptr;
        const base = std.fs.path.basename(text);
        const name = try std.fmt.allocPrint(arena, "{s}={s}", .{ arg[2..], base });
        try addOptionName(arena, settings, name);
    } else if (std.mem.eql(u8, arg, "--option")) {
        applyOption(settings, text);
        try addOptionName(arena, settings, text);
    } else if (try parseFilter(arena, settings, arg, text)) {
        try addOptionName(arena, settings, try std.fmt.allocPrint(arena, "{s}={s}", .{
            arg[2..], text,
        }));
    } else {
        fatal("unknown option {s}\n{s}", .{ arg, usage });
    }
}

/// A filter option (`--event-id`, ...) into `settings`; false when `arg` is none.
fn parseFilter(
    arena: std.mem.Allocator,
    settings: *Settings,
    arg: []const u8,
    text: [:0]const u8,
) !bool {
    if (std.mem.eql(u8, arg, "--event-id") or std.mem.eql(u8, arg, "--level")) {
        const list = if (arg[2] == 'e') &settings.event_ids else &settings.levels;
        var items = std.mem.splitScalar(u8, text, ',');
        while (items.next()) |item| {
            const dash = std.mem.indexOfScalar(u8, item, '-');
            const first = parseCount(arg, item[0 .. dash orelse item.len]);
            const last = if (dash) |d| parseCount(arg, item[d + 1 ..]) else first;
            try list.append(arena, .{ .first = first, .last = last });
        }
    } else if (std.mem.eql(u8, arg, "--provider")) {
        try settings.providers.append(arena, text.ptr);
    } else if (std.mem.eql(u8, arg, "--channel")) {
        try settings.channels.append(arena, text.ptr);
    } else if (std.mem.eql(u8, arg, "--since") or std.mem.eql(u8, arg, "--until")) {
        const ticks = std.fmt.parseInt(u64, text, 10) catch
            fatal("{s}: not a FILETIME: {s}", .{ arg, text });
        if (arg[2] == 's') settings.since = ticks else settings.until = ticks;
    } else return false;
    return true;
}

fn addOptionName(arena: std.mem.Allocator, settings: *Settings, name: []const u8) !void {
    settings.option_names = if (settings.option_names.len == 0)
        name
    else
        try std.fmt.allocPrint(arena, "{s},{s}", .{ settings.option_names, name });
}

/// The backends to measure: the linked one, or each `--lib` (default: the three libraries)
/// that loads; every library must name every status alike.
fn loadBackends(
    arena: std.mem.Allocator,
    paths: []const []const u8,
    settings: Settings,
) ![]const Backend {
    var backends: std.ArrayList(Backend) = .empty;
    if (dynamic) {
        var library_paths: std.ArrayList([]const u8) = .empty;
        try library_paths.appendSlice(arena, paths);
        if (library_paths.items.len == 0) try defaultLibraries(arena, &library_paths);
        for (library_paths.items) |path| {
            // A library that was not built (yet) is left out, as the default list does; not
            // under --parity, where a missing library would leave the others compared with
            // themselves.
            std.fs.cwd().access(path, .{}) catch {
                if (settings.parity) fatal("--parity: no {s}", .{path});
                std.debug.print("evtx-bench: no {s}; skipped\n", .{path});
                continue;
            };
            const library = try arena.create(std.DynLib);
            library.* = std.DynLib.open(path) catch |err| {
                fatal("cannot load {s}: {s}", .{ path, @errorName(err) });
            };
            // Never closed: the process ends after the run.
            const api = Api.load(library) catch fatal("{s} does not implement evtx.h", .{path});
            try backends.append(arena, try describe(api, path));
        }
    } else {
        try backends.append(arena, try describe(Api.linked(), "linked"));
    }
    if (backends.items.len == 0) fatal("no library to measure", .{});
    if (settings.parity and backends.items.len < 2) fatal(
        "--parity: fewer than two libraries",
        .{},
    );
    expectSameStatusNames(backends.items);
    return backends.items;
}

/// One input: its table head, every backend's measurement, the comparison of the rows, the
/// rows.
fn runInput(
    arena: std.mem.Allocator,
    stdout: *std.Io.Writer,
    backends: []const Backend,
    input: []const u8,
    settings: Settings,
    report: *Report,
) !void {
    const data = std.fs.cwd().readFileAlloc(arena, input, 1 << 36) catch |err| {
        fatal("cannot read {s}: {s}", .{ input, @errorName(err) });
    };
    const input_z = try arena.dupeZ(u8, input);
    const fixture = std.fs.path.basename(input);
    try stdout.print(
        "\n{s}: {d:.1} MB, format {s}, threads {d}, api {s}, options [{s}], {d} runs (+{d} " ++
            "warmup)\n",
        .{
            fixture,          megabytes(data.len),    settings.format_name,
            settings.threads, @tagName(settings.api), settings.option_names,
            settings.runs,    settings.warmup,
        },
    );
    try stdout.print("{s:<10} {s:<8} {s:>9} {s:>7} {s:>12} {s:<16} {s:>10} {s:>10} {s:>8} " ++
        "{s:>8} {s:>8} {s:>6}\n", .{
        "backend",   "version", "records", "failed", "out bytes", "hash",
        "median ms", "min ms",  "cpu ms",  "MB/s",   "ns/rec",    "x ref",
    });
    try stdout.flush();

    const first_row = report.rows.items.len;
    const input_both: Input = .{ .data = data, .path = input_z };
    const measurements = try measure(arena, backends, input_both, settings);
    for (measurements) |measurement| {
        try addMeasurement(arena, stdout, measurement, data, fixture, settings, report);
    }
    try stdout.flush();
    const measured = report.rows.items[first_row..];
    try compareRows(arena, fixture, measured, &report.mismatches);
    for (measured) |row| try printRow(arena, stdout, row, settings);
    try stdout.flush();
}

/// A row for a measurement that ran; a line (and, under --parity or on failure, a failure)
/// for one that did not.
fn addMeasurement(
    arena: std.mem.Allocator,
    stdout: *std.Io.Writer,
    measurement: Measurement,
    data: []const u8,
    fixture: []const u8,
    settings: Settings,
    report: *Report,
) !void {
    const backend = measurement.backend;
    switch (measurement.state) {
        .ok => try report.rows.append(
            arena,
            try summarize(arena, measurement, data, fixture, settings),
        ),
        .skipped => {
            if (settings.parity) report.failures += 1;
            try stdout.print("{s:<10} {s:<8} {s}: {s}\n", .{
                try label(arena, backend.name, measurement.source, settings),   backend.version,
                if (settings.parity) "FAILED (not implemented)" else "skipped", measurement.message,
            });
        },
        .failed => {
            report.failures += 1;
            try stdout.print("{s:<10} {s:<8} FAILED: {s}\n", .{
                try label(arena, backend.name, measurement.source, settings),
                backend.version,
                measurement.message,
            });
        },
    }
}

/// Sets each row's `hash_matches` and `ratio_to_reference`, and adds a line to `mismatches`
/// for each row that differs. The reference, when measured, is what the others are compared
/// with; else the first row.
fn compareRows(
    arena: std.mem.Allocator,
    fixture: []const u8,
    measured: []Row,
    mismatches: *std.ArrayList([]const u8),
) !void {
    var baseline: ?Row = null;
    for (measured) |row| {
        if (std.mem.eql(u8, row.backend, "reference")) baseline = row;
    }
    if (baseline == null and measured.len > 0) baseline = measured[0];
    const base = baseline orelse return;
    // The engines are also held to each other on every field (the first one is their base).
    var engine_base: ?Row = null;
    for (measured) |row| {
        if (!std.mem.eql(u8, row.backend, "reference")) {
            engine_base = row;
            break;
        }
    }
    const against_reference = std.mem.eql(u8, base.backend, "reference");
    for (measured) |*row| {
        const fields_match = if (against_reference)
            std.mem.eql(u8, row.reference_fields_hash, base.reference_fields_hash) and
                (std.mem.eql(u8, row.backend, "reference") or
                    std.mem.eql(u8, row.fields_hash, engine_base.?.fields_hash))
        else
            std.mem.eql(u8, row.fields_hash, base.fields_hash);
        row.hash_matches = std.mem.eql(u8, row.hash, base.hash) and fields_match and
            row.records == base.records and row.failed == base.failed and
            row.output_bytes == base.output_bytes and row.final_status == base.final_status;
        // Speed-up over the reference, as in the gap report: above 1 = faster. Paired by
        // round (PERF.md "Paired rounds"): the host changes speed in phases of seconds.
        if (against_reference) row.ratio_to_reference = try pairedRatio(
            arena,
            base.wall_ns_by_round,
            row.wall_ns_by_round,
        );
        if (!row.hash_matches) {
            try mismatches.append(arena, try std.fmt.allocPrint(arena, "{s}: {s} {s}/{s} ({d} " ++
                "records, {d} failed, status {d}) differs from {s} {s}/{s} " ++
                "({d} records, {d} failed, status {d})", .{
                fixture,           row.backend,      row.hash,         row.fields_hash,
                row.records,       row.failed,       row.final_status, base.backend,
                base.hash,         base.fields_hash, base.records,     base.failed,
                base.final_status,
            }));
        }
    }
}

/// The median over rounds of `base[r] / other[r]`: each ratio pairs runs of the same round.
fn pairedRatio(arena: std.mem.Allocator, base: []const u64, other: []const u64) !f64 {
    std.debug.assert(base.len == other.len);
    std.debug.assert(base.len > 0);
    const ratios = try arena.alloc(f64, base.len);
    for (ratios, base, other) |*ratio, b, o| {
        ratio.* = @as(f64, @floatFromInt(b)) / @as(f64, @floatFromInt(@max(o, 1)));
    }
    std.mem.sort(f64, ratios, {}, std.sort.asc(f64));
    const mid = ratios.len / 2;
    if (ratios.len % 2 == 1) return ratios[mid];
    return (ratios[mid - 1] + ratios[mid]) / 2;
}

test pairedRatio {
    var arena_state = std.heap.ArenaAllocator.init(std.testing.allocator);
    defer arena_state.deinit();
    // Per round 1, 4 and 1.5: the median is 1.5, where the medians' ratio would be 3.
    const arena = arena_state.allocator();
    const ratio = try pairedRatio(arena, &.{ 100, 400, 300 }, &.{ 100, 100, 200 });
    try std.testing.expectEqual(@as(f64, 1.5), ratio);
    const even = try pairedRatio(arena, &.{ 200, 300 }, &.{ 100, 100 });
    try std.testing.expectEqual(@as(f64, 2.5), even);
}

/// One line of an input's table.
fn printRow(
    arena: std.mem.Allocator,
    stdout: *std.Io.Writer,
    row: Row,
    settings: Settings,
) !void {
    try stdout.print("{s:<10} {s:<8} {d:>9} {d:>7} {d:>12} {s:<16} {d:>10.2} {d:>10.2} " ++
        "{d:>8.2} {d:>8.1} {d:>8.0} ", .{
        try label(arena, row.backend, sourceOf(row), settings),
        row.version,
        row.records,
        row.failed,
        row.output_bytes,
        row.hash,
        row.median_ms,
        row.min_ms,
        row.median_cpu_ms,
        row.mb_per_s,
        row.ns_per_record,
    });
    if (row.ratio_to_reference) |ratio| {
        try stdout.print("{d:>6.2}", .{ratio});
    } else {
        try stdout.print("{s:>6}", .{"-"});
    }
    try stdout.print("{s}\n", .{if (row.hash_matches) "" else "  OUTPUT DIFFERS"});
}

/// `--json PATH`: the settings, every row, the mismatches and the failure count.
fn writeJson(
    arena: std.mem.Allocator,
    path: []const u8,
    settings: Settings,
    report: *const Report,
) !void {
    const json = .{
        .harness = "evtx-bench",
        .linked = linked_backend,
        .format = settings.format_name,
        .threads = settings.threads,
        .api = @tagName(settings.api),
        .runs = settings.runs,
        .warmup = settings.warmup,
        .results = report.rows.items,
        .hash_mismatches = report.mismatches.items,
        .failures = report.failures,
    };
    const text = try std.fmt.allocPrint(
        arena,
        "{f}\n",
        .{std.json.fmt(json, .{ .whitespace = .indent_2 })},
    );
    if (std.fs.path.dirname(path)) |dir| std.fs.cwd().makePath(dir) catch {};
    std.fs.cwd().writeFile(.{ .sub_path = path, .data = text }) catch |err| {
        fatal("cannot write {s}: {s}", .{ path, @errorName(err) });
    };
}

/// The backend's name, with its source when the run measures another than `heap`.
fn label(
    arena: std.mem.Allocator,
    name: []const u8,
    source: Source,
    settings: Settings,
) ![]const u8 {
    if (settings.sources.len == 1 and settings.sources[0] == .heap) return name;
    return std.fmt.allocPrint(arena, "{s}/{s}", .{ name, @tagName(source) });
}

fn sourceOf(row: Row) Source {
    return std.meta.stringToEnum(Source, row.source).?;
}

fn parseSources(arena: std.mem.Allocator, text: []const u8) ![]const Source {
    var sources: std.ArrayList(Source) = .empty;
    var names = std.mem.splitScalar(u8, text, ',');
    while (names.next()) |name| {
        const source = std.meta.stringToEnum(Source, name) orelse
            fatal("--sources: heap, map or path, not {s}", .{name});
        try sources.append(arena, source);
    }
    return sources.items;
}

fn countMismatched(rows: []const Row) usize {
    var count: usize = 0;
    for (rows) |row| count += @intFromBool(!row.hash_matches);
    return count;
}

fn describe(api: Api, library: []const u8) !Backend {
    if (api.abi_version() != c.EVTX_ABI_VERSION) {
        fatal("{s}: ABI version {d}, the harness was built for {d}", .{
            library, api.abi_version(), c.EVTX_ABI_VERSION,
        });
    }
    return .{
        .api = api,
        .name = std.mem.span(api.backend_name()),
        .version = std.mem.span(api.backend_version()),
        .library = library,
    };
}

/// Every library names every status alike (rust/evtx-abi's table is the source; the Zig
/// library is held to it at compile time, this holds the built libraries): the values of the
/// header's statuses and the gaps between them, and values that are none.
fn expectSameStatusNames(backends: []const Backend) void {
    const first = backends[0];
    for (backends[1..]) |backend| {
        const values: [64]u32 = std.simd.iota(u32, 64);
        for (values ++ [_]u32{ 1000, std.math.maxInt(u32) }) |status| {
            const expected = std.mem.span(first.api.status_name(status));
            const got = std.mem.span(backend.api.status_name(status));
            if (!std.mem.eql(u8, expected, got)) {
                fatal("evtx_status_name({d}): {s} says \"{s}\", {s} says \"{s}\"", .{
                    status, first.name, expected, backend.name, got,
                });
            }
        }
    }
}

/// libevtx_{ref,rs,zig}.so in ../lib beside the executable, those that exist.
fn defaultLibraries(arena: std.mem.Allocator, paths: *std.ArrayList([]const u8)) !void {
    const exe_dir = try std.fs.selfExeDirPathAlloc(arena);
    for ([_][]const u8{ "libevtx_ref.so", "libevtx_rs.so", "libevtx_zig.so" }) |name| {
        const path = try std.fs.path.join(arena, &.{ exe_dir, "..", "lib", name });
        std.fs.cwd().access(path, .{}) catch {
            std.debug.print("evtx-bench: no {s}; skipped\n", .{path});
            continue;
        };
        try paths.append(arena, path);
    }
}

/// One backend's runs over one input.
const Measurement = struct {
    backend: Backend,
    source: Source,
    options: c.evtx_options,
    state: enum { ok, skipped, failed } = .ok,
    /// Why it was skipped or failed.
    message: []const u8 = "",
    first: ?Outcome = null,
    times_ns: []u64,
    cpu_ns: []u64,

    const Time = struct { wall_ns: u64, cpu_ns: u64 };

    fn run(
        measurement: *Measurement,
        arena: std.mem.Allocator,
        input: Input,
        kind: ApiKind,
    ) !?Time {
        if (measurement.state != .ok) return null;
        const cpu_before = cpuTimeNs();
        var timer = std.time.Timer.start() catch @panic("no monotonic clock");
        const api = measurement.backend.api;
        const options = &measurement.options;
        const outcome = runOnce(api, options, input, measurement.source, kind) catch |err| {
            measurement.state = if (err == error.NotImplemented) .skipped else .failed;
            measurement.message = try arena.dupe(
                u8,
                std.mem.span(measurement.backend.api.last_error()),
            );
            return null;
        };
        const time_ns = timer.read();
        const cpu_ns = cpuTimeNs() -| cpu_before;
        expectSame(&measurement.first, outcome, measurement.backend) catch {
            measurement.state = .failed;
            measurement.message = "two runs gave different output";
            return null;
        };
        return .{ .wall_ns = time_ns, .cpu_ns = cpu_ns };
    }
};

/// User + system time of the whole process so far.
fn cpuTimeNs() u64 {
    const resources = std.posix.getrusage(std.posix.rusage.SELF);
    var total: u64 = 0;
    for ([_]std.posix.timeval{ resources.utime, resources.stime }) |time| {
        total += @as(u64, @intCast(time.sec)) * std.time.ns_per_s +
            @as(u64, @intCast(time.usec)) * std.time.ns_per_us;
    }
    return total;
}

/// Warm-up runs, then the timed runs in rounds: each round runs every backend once, so a
/// machine that gets busier or quieter during the measurement affects all backends alike and
/// their ratio stays meaningful.
fn measure(
    arena: std.mem.Allocator,
    backends: []const Backend,
    input: Input,
    settings: Settings,
) ![]Measurement {
    const measurements = try arena.alloc(Measurement, backends.len * settings.sources.len);
    for (measurements, 0..) |*measurement, index| {
        const backend = backends[index / settings.sources.len];
        var options: c.evtx_options = undefined;
        backend.api.options_init_v1(&options);
        options.format = settings.format;
        options.threads = settings.threads;
        if (settings.no_indent) options.indent = 0;
        if (settings.separate_json_attributes) options.separate_json_attributes = 1;
        if (settings.no_record_number) options.show_record_number = 0;
        if (settings.validate_checksums) options.validate_checksums = 1;
        if (settings.stop_after_error) options.stop_after_error = 1;
        if (settings.recover_records) options.recover_records = 1;
        options.mta_path = settings.mta_path;
        options.wevt_cache_path = settings.wevt_cache_path;
        if (settings.events) {
            options.event_ranges = &event_ranges;
            options.event_ranges_count = event_ranges.len;
        }
        options.event_ids = settings.event_ids.items.ptr;
        options.event_ids_count = settings.event_ids.items.len;
        options.levels = settings.levels.items.ptr;
        options.levels_count = settings.levels.items.len;
        options.providers = settings.providers.items.ptr;
        options.providers_count = settings.providers.items.len;
        options.channels = settings.channels.items.ptr;
        options.channels_count = settings.channels.items.len;
        options.since = settings.since orelse 0;
        options.since_set = @intFromBool(settings.since != null);
        options.until = settings.until orelse 0;
        options.until_set = @intFromBool(settings.until != null);
        measurement.* = .{
            .backend = backend,
            .source = settings.sources[index % settings.sources.len],
            .options = options,
            .times_ns = try arena.alloc(u64, settings.runs),
            .cpu_ns = try arena.alloc(u64, settings.runs),
        };
    }
    for (0..settings.warmup) |_| {
        for (measurements) |*measurement| _ = try measurement.run(arena, input, settings.api);
    }
    for (0..settings.runs) |round| {
        for (measurements) |*measurement| {
            if (try measurement.run(arena, input, settings.api)) |time| {
                measurement.times_ns[round] = time.wall_ns;
                measurement.cpu_ns[round] = time.cpu_ns;
            }
        }
    }
    return measurements;
}

fn summarize(
    arena: std.mem.Allocator,
    measurement: Measurement,
    data: []const u8,
    fixture: []const u8,
    settings: Settings,
) !Row {
    const backend = measurement.backend;
    const wall_ns_by_round = try arena.dupe(u64, measurement.times_ns);
    const cpu_ns_by_round = try arena.dupe(u64, measurement.cpu_ns);
    const times_ns = measurement.times_ns;
    const median_ns = median(times_ns);
    const outcome = measurement.first.?;
    return .{
        .fixture = fixture,
        .input_bytes = data.len,
        .backend = backend.name,
        .source = @tagName(measurement.source),
        .version = backend.version,
        .library = backend.library,
        .format = settings.format_name,
        .threads = settings.threads,
        .api = @tagName(settings.api),
        .runs = settings.runs,
        .records = outcome.records,
        .failed = outcome.failed,
        .output_bytes = outcome.output_bytes,
        .hash = try std.fmt.allocPrint(arena, "{x:0>16}", .{outcome.hash}),
        .fields_hash = try std.fmt.allocPrint(arena, "{x:0>16}", .{outcome.fields_hash}),
        .reference_fields_hash = try std.fmt.allocPrint(
            arena,
            "{x:0>16}",
            .{outcome.reference_fields_hash},
        ),
        .final_status = outcome.final_status,
        .options = settings.option_names,
        .median_ms = median_ns / std.time.ns_per_ms,
        .min_ms = @as(f64, @floatFromInt(times_ns[0])) / std.time.ns_per_ms,
        .median_cpu_ms = median(measurement.cpu_ns) / std.time.ns_per_ms,
        .wall_ns_by_round = wall_ns_by_round,
        .cpu_ns_by_round = cpu_ns_by_round,
        .mb_per_s = megabytes(data.len) / (median_ns / std.time.ns_per_s),
        .ns_per_record = if (outcome.records == 0)
            0
        else
            median_ns / @as(f64, @floatFromInt(outcome.records)),
        .ratio_to_reference = null,
        .hash_matches = true,
        .status = "ok",
    };
}

/// The median of the values, which it sorts.
fn median(values: []u64) f64 {
    std.debug.assert(values.len > 0);
    std.mem.sort(u64, values, {}, std.sort.asc(u64));
    const middle: f64 = @floatFromInt(values[values.len / 2]);
    if (values.len % 2 == 1) return middle;
    return (@as(f64, @floatFromInt(values[values.len / 2 - 1])) + middle) / 2;
}

/// Every run of a backend must give the same output: a backend that does not is broken.
fn expectSame(first: *?Outcome, outcome: Outcome, backend: Backend) RunError!void {
    const seen = first.* orelse {
        first.* = outcome;
        return;
    };
    if (!std.meta.eql(seen, outcome)) {
        std.debug.print("evtx-bench: {s}: two runs gave different output\n", .{backend.name});
        return error.BackendFailed;
    }
}

/// One timed unit: open the input from its source, render all of it into the hashing sink, free.
fn runOnce(
    api: Api,
    options: *const c.evtx_options,
    input: Input,
    source: Source,
    kind: ApiKind,
) RunError!Outcome {
    const mapping = if (source == .map) try mapInput(input) else null;
    defer if (mapping) |bytes| std.posix.munmap(bytes);
    const data: []const u8 = mapping orelse input.data;

    var parser: ?*c.evtx_parser = null;
    const opened = if (source == .path)
        api.parser_open_path(input.path.ptr, options, &parser)
    else
        api.parser_open_buffer(data.ptr, data.len, options, &parser);
    if (opened != c.EVTX_STATUS_OK) return statusError(api, "open", opened);
    defer api.parser_free(parser);

    var sink: Sink = .{ .push = kind == .push };
    var records: u64 = 0;
    var failed: u64 = 0;
    var final_status: u32 = c.EVTX_STATUS_OK;
    switch (kind) {
        .push => {
            var stats: c.evtx_stats = undefined;
            const status = api.parser_dump(parser, Sink.write, Sink.failed, &sink, &stats);
            // With stop_after_error the dump returns the KIND it stopped at: an outcome.
            const stopped = options.stop_after_error != 0 and
                status >= c.EVTX_STATUS_INCOMPLETE_CHUNK;
            if (status != c.EVTX_STATUS_OK and !stopped) return statusError(api, "dump", status);
            // Checked, not asserted: this is the backend under test, and ReleaseFast would
            // compile an assertion away.
            if (stats.bytes_written != sink.bytes or stats.records_failed != sink.errors) {
                std.debug.print("evtx-bench: {s}: evtx_stats says {d} bytes, {d} failed; the " ++
                    "callbacks saw {d}, {d}\n", .{
                    std.mem.span(
                        api.backend_name(),
                    ),
                    stats.bytes_written,
                    stats.records_failed,
                    sink.bytes,
                    sink.errors,
                });
                return error.BackendFailed;
            }
            records = stats.records_ok;
            failed = stats.records_failed;
            final_status = status;
        },
        .pull => {
            var record: c.evtx_record = undefined;
            while (true) {
                const status = api.parser_next(parser, &record);
                if (status == c.EVTX_STATUS_OK) {
                    records += 1;
                    sink.feed(record.data[0..record.data_len]);
                    sink.feedFields(&record);
                } else if (status == c.EVTX_STATUS_END) {
                    break;
                } else if (status >= c.EVTX_STATUS_INCOMPLETE_CHUNK) {
                    failed += 1;
                    if (record.status != status) {
                        const text = "evtx-bench: {s}: next returned {d}, the record says {d}\n";
                        std.debug.print(text, .{
                            std.mem.span(api.backend_name()), status, record.status,
                        });
                        return error.BackendFailed;
                    }
                    sink.feedFields(&record);
                } else {
                    return statusError(api, "next", status);
                }
            }
        },
    }
    return .{
        .records = records,
        .failed = failed,
        .output_bytes = sink.bytes,
        .hash = sink.hasher.final(),
        .fields_hash = sink.fields.final(),
        .reference_fields_hash = sink.reference_fields.final(),
        .final_status = final_status,
    };
}

/// The input file mapped read-only (freed by the caller after the parser), or null when it is
/// empty (nothing to map; the heap copy is as empty).
fn mapInput(input: Input) RunError!?[]align(std.heap.page_size_min) const u8 {
    if (input.data.len == 0) return null;
    const file = std.fs.cwd().openFile(input.path, .{}) catch |err| {
        std.debug.print("evtx-bench: cannot open {s}: {s}\n", .{ input.path, @errorName(err) });
        return error.BackendFailed;
    };
    defer file.close();
    const read_only = std.posix.PROT.READ;
    const private: std.posix.MAP = .{ .TYPE = .PRIVATE };
    return std.posix.mmap(null, input.data.len, read_only, private, file.handle, 0) catch |err| {
        std.debug.print("evtx-bench: cannot map {s}: {s}\n", .{ input.path, @errorName(err) });
        return error.BackendFailed;
    };
}

fn statusError(api: Api, call: []const u8, status: u32) RunError {
    if (status == c.EVTX_STATUS_NOT_IMPLEMENTED) return error.NotImplemented;
    std.debug.print("evtx-bench: {s}: {s}: {s}: {s}\n", .{
        std.mem.span(api.backend_name()),      call,
        std.mem.span(api.status_name(status)), std.mem.span(api.last_error()),
    });
    return error.BackendFailed;
}

fn applyOption(settings: *Settings, name: []const u8) void {
    const Option = enum {
        @"no-indent",
        @"separate-json-attributes",
        @"dont-show-record-number",
        @"validate-checksums",
        @"stop-after-one-error",
        events,
        @"recover-records",
    };
    const option = std.meta.stringToEnum(Option, name) orelse
        fatal("--option: unknown option {s}\n{s}", .{ name, usage });
    switch (option) {
        .@"no-indent" => settings.no_indent = true,
        .@"separate-json-attributes" => settings.separate_json_attributes = true,
        .@"dont-show-record-number" => settings.no_record_number = true,
        .@"validate-checksums" => settings.validate_checksums = true,
        .@"stop-after-one-error" => settings.stop_after_error = true,
        .events => settings.events = true,
        .@"recover-records" => settings.recover_records = true,
    }
}

fn megabytes(bytes: u64) f64 {
    return @as(f64, @floatFromInt(bytes)) / 1e6;
}

fn parseCount(option: []const u8, text: []const u8) u32 {
    return std.fmt.parseInt(u32, text, 10) catch fatal("{s}: not a count: {s}", .{ option, text });
}

fn fatal(comptime format: []const u8, args: anytype) noreturn {
    std.debug.print("evtx-bench: " ++ format ++ "\n", args);
    std.process.exit(2);
}
