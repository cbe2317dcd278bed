//! `evtx-zig`: a command line compatible with `evtx_dump` 0.15.1 (contract section 11).
//! Usage errors exit 2, fatal errors exit 1 with `Error: ...`, record and chunk errors
//! are reported one line each on stderr (shared-fixtures/README.md) and keep status 0.
const std = @import("std");
const evtx = @import("evtx");
const dump = evtx.dump;
const chunk = evtx.chunk;
const assert = std.debug.assert;
const extract_wevt_templates = @import("extract_wevt_templates.zig");
const dump_template_instances = @import("dump_template_instances.zig");
const apply_wevt_cache = @import("apply_wevt_cache.zig");
const help = @import("help.zig");
const stdio = @import("stdio.zig");
const open_input = @import("open_input.zig");
const platform = @import("platform.zig");
const args = @import("args.zig");
const commands = @import("commands.zig");
const extensions = @import("extensions.zig");
const inputs = @import("inputs.zig");
const triage = @import("triage.zig");
const Format = evtx.options.Format;

test {
    _ = help;
    _ = extensions;
    _ = inputs;
    _ = triage;
    _ = args;
    _ = commands;
    _ = stdio;
    _ = open_input;
    _ = extract_wevt_templates;
    _ = dump_template_instances;
    _ = apply_wevt_cache;
}

const version = "0.1.0";

const Cli = struct {
    /// The inputs, as named (at most one where the reference reads the line).
    inputs: []const []const u8 = &.{},
    output: ?[]const u8 = null,
    /// `--mta FILE`, read after the output is created.
    mta: ?[]const u8 = null,
    /// `--wevt-cache FILE`, read after the output is created, before `--mta`.
    wevt_cache: ?[]const u8 = null,
    threads: usize = 0,
    verbose: usize = 0,
    no_confirm_overwrite: bool = false,
    stop_after_one_error: bool = false,
    settings: evtx.options.Options = .{},
    no_indent: bool = false,
    no_record_number: bool = false,
    /// `--provenance`.
    provenance: bool = false,
};

var stderr_buffer: [4096]u8 = undefined;
/// A progress line is on the terminal (ended with a newline at exit).
var progress_shown = false;

fn stderrPrint(comptime fmt: []const u8, fmt_args: anytype) void {
    var w = stdio.stderrWriter(&stderr_buffer);
    w.interface.print(fmt, fmt_args) catch {};
    w.interface.flush() catch {};
}

fn stdoutWriteAll(text: []const u8) void {
    var w = stdio.stdoutWriter(&.{});
    w.interface.writeAll(text) catch {};
}

/// The program's name in `Usage:` lines and help pages: the last component of `argv[0]`, as
/// clap shows it.
var bin_name: []const u8 = "evtx-zig";

/// A help page on stdout (exit 0), the program named as invoked.
fn printHelp(command: *const commands.Command, form: args.Form) u8 {
    var buffer: [4096]u8 = undefined;
    var w = stdio.stdoutWriter(&buffer);
    help.write(&w.interface, command, form, bin_name) catch {};
    w.interface.flush() catch {};
    return 0;
}

fn fatal(comptime fmt: []const u8, fmt_args: anytype) noreturn {
    stderrPrint("Error: " ++ fmt ++ "\n", fmt_args);
    std.process.exit(1);
}

/// The dump's options out of the parsed command line (the reference's defaults: `-t 0`, `-o
/// xml`, `--ansi-codec windows-1252`; `-o jsonl` implies `--no-indent
/// --dont-show-record-number`), with the extensions' where the second pass read it. The dump's
/// options have the same places in both tables.
fn dumpOptions(gpa: std.mem.Allocator, m: *const args.Matches) error{OutOfMemory}!Cli {
    const c = &commands.main;
    assert(m.command == c or m.command == &commands.main_extended);
    var cli: Cli = .{
        .inputs = try m.texts(gpa, args.positional),
        .output = m.text(c.id("output")),
        .mta = m.text(c.id("mta")),
        .wevt_cache = m.text(c.id("wevt-cache")),
        .threads = m.number(c.id("threads")) orelse 0,
        .verbose = m.count(c.id("v")),
        .no_confirm_overwrite = m.has(c.id("no-confirm-overwrite")),
        .stop_after_one_error = m.has(c.id("stop-after-one-error")),
        .no_indent = m.has(c.id("no-indent")),
        .no_record_number = m.has(c.id("dont-show-record-number")),
    };
    const settings = &cli.settings;
    // A possible value of `--format`: one of the enum's names.
    if (m.text(c.id("format"))) |f| settings.format = std.meta.stringToEnum(Format, f).?;
    if (m.value(c.id("events"))) |v| settings.event_ranges = v.ranges;
    if (m.value(c.id("ansi-codec"))) |v| settings.ansi_codec = v.codec;
    settings.validate_checksums = m.has(c.id("validate-checksums"));
    settings.recover_records = m.has(c.id("recover-records"));
    settings.separate_json_attributes = m.has(c.id("separate-json-attributes"));
    settings.indent = !cli.no_indent and settings.format != .jsonl;
    settings.show_record_number = !cli.no_record_number and settings.format != .jsonl;
    if (m.command == &commands.main_extended) {
        const e = &commands.main_extended;
        cli.provenance = m.has(e.id("provenance"));
        settings.filter = .{
            .event_ids = if (m.value(e.id("event-id"))) |v| v.list else &.{},
            .levels = if (m.value(e.id("level"))) |v| v.list else &.{},
            .providers = try m.texts(gpa, e.id("provider")),
            .channels = try m.texts(gpa, e.id("channel")),
            .since = if (m.value(e.id("since"))) |v| v.time else null,
            .until = if (m.value(e.id("until"))) |v| v.time else null,
        };
        if (settings.filter.check()) |problem| filterUsageError(problem);
    }
    return cli;
}

/// Ends the run with a usage error no single option's parser can see (`Filter.check`): the
/// same words and status in evtx-rs (`extensions::usage_error`).
fn filterUsageError(problem: evtx.filter.Problem) noreturn {
    var buffer: [256]u8 = undefined;
    var w: std.Io.Writer = .fixed(&buffer);
    problem.write(&w) catch {};
    stderrPrint("error: {s}\n\nFor more information, try '--help'.\n", .{w.buffered()});
    std.process.exit(2);
}

/// The notes the reference prints on stderr for redundant flags (before anything else).
fn printNotes(cli: *const Cli) void {
    if (cli.verbose > 3) stderrPrint("using more than -vvv does not affect verbosity level\n", .{});
    if (cli.settings.format == .jsonl) {
        if (cli.no_indent) stderrPrint("no need to pass both `--no-indent` and `-o jsonl`\n", .{});
        if (cli.no_record_number) stderrPrint(
            "no need to pass both `--no-show-record-number` and `-o jsonl`\n",
            .{},
        );
    }
}

const version_line = "evtx-zig " ++ version ++ " (evtx_dump 0.15.1 compatible)\n";

/// An I/O error in the words of the C library, which the Rust CLI prints (without its ` (os
/// error N)`).
fn ioReason(e: anyerror) []const u8 {
    return evtx.os_error.words(e);
}

/// An errno in the words of the C library.
fn osWords(errno: evtx.os_error.E) []const u8 {
    const o: evtx.os_error.OsError = .{ .errno = errno };
    return o.text() orelse "Unknown error";
}

/// `info -i FILE`: the report of `evtx.info` on standard output. The file is read through
/// chunk windows (a stream is spooled first), so memory stays bounded whatever its size.
fn infoCommand(gpa: std.mem.Allocator, path: []const u8) u8 {
    const file = std.fs.cwd().openFile(path, .{ .mode = .read_only }) catch |e|
        fatal("Failed to open {s}: {s}", .{ path, ioReason(e) });
    const kind = switch (platform.kindOf(file)) {
        .ok => |kind| kind,
        .err => |errno| fatal("Failed to open {s}: {s}", .{ path, osWords(errno) }),
    };
    const in: dump.Input = switch (kind) {
        .directory => fatal("Failed to open {s}: {s}", .{ path, ioReason(error.IsDir) }),
        .regular => dump.Input.fromFile(file) catch |e|
            fatal("Failed to open {s}: {s}", .{ path, ioReason(e) }),
        .other => spoolInput(file, "Failed to open the input"),
    };
    const window = gpa.create(evtx.input.ChunkSlot) catch fatal("out of memory", .{});
    defer gpa.destroy(window);
    var buffer: [1 << 16]u8 = undefined;
    var w = stdio.stdoutWriter(&buffer);
    evtx.info.write(&in, window, &w.interface) catch |e| switch (e) {
        error.FileTooShort => fatal(
            "Failed to read the file header: the file is {d} bytes, shorter than the " ++
                "4096-byte header block",
            .{in.size},
        ),
        error.BadFileMagic => fatal(
            "Failed to read the file header: invalid magic (expected `ElfFile\\0`)",
            .{},
        ),
        error.WriteFailed => {},
    };
    w.interface.flush() catch {};
    if (w.err) |we| {
        if (we != error.BrokenPipe) fatal("failed to write output: {s}", .{ioReason(we)});
    }
    return 0;
}

/// Room for the longest failure to open the input: two paths and the reference's chain.
var failure_buffer: [2 * std.fs.max_path_bytes + 1024]u8 = undefined;

/// Opens the input read-only, to be read by chunk windows (never mapped, never read whole), or
/// ends the run with the reference's words for why it cannot be (`open_input.zig`). `-f output`
/// naming the same file (stdin redirected from it included) is refused first, before anything
/// is read, spooled or opened for writing.
fn openInput(path: []const u8, output: ?[]const u8) dump.Input {
    var w: std.Io.Writer = .fixed(&failure_buffer);
    const opened = if (isStdin(path))
        open_input.openStdin(output, path, &w)
    else
        open_input.openPath(path, output, &w);
    return opened catch fatal("{s}", .{w.buffered()});
}

fn isStdin(path: []const u8) bool {
    return platform.isStdin(path);
}

/// The first line of a failure of the input `path`.
pub fn inputHead(path: []const u8) open_input.Head {
    return if (isStdin(path)) .stdin else .{ .path = path };
}

/// Copies a stream to an unlinked file in $TMPDIR in 64 KiB blocks (the reference spools
/// stdin too): wrapped-log order needs every chunk header before the first record, and a
/// file is then read by the same windows as a path, with bounded memory.
fn spoolInput(source: std.fs.File, comptime what: []const u8) dump.Input {
    var block: [evtx.input.spool_block_size]u8 = undefined;
    const spooled = evtx.input.spool(source, platform.tempDir(), &block) catch |e|
        fatal(what ++ ": {s}", .{ioReason(e)});
    return dump.Input.fromFile(spooled) catch |e| fatal(what ++ ": {s}", .{ioReason(e)});
}

/// Writes chunk results: record text to the output, one line per error to stderr. One for
/// the run, whatever the number of inputs.
const Sink = struct {
    writer: *std.Io.Writer,
    /// The input being converted, as named.
    path: []const u8 = "",
    stop_after_one_error: bool,
    /// Whether each input draws a progress bar.
    progress_wanted: bool,
    progress: ?Progress = null,
    verbose: Verbose,
    /// `--provenance`: the mark of the input being converted.
    provenance: ?evtx.provenance.Provenance = null,
    /// An input could not be opened (exit 1 at the end).
    failed: bool = false,

    fn init(cli: *const Cli, writer: *std.Io.Writer) Sink {
        return .{
            .writer = writer,
            .stop_after_one_error = cli.stop_after_one_error,
            .progress_wanted = cli.output != null and stdio.stderrIsTty(),
            .provenance = if (cli.provenance) .{ .file = "" } else null,
            .verbose = .{ .level = cli.verbose, .timer = null },
        };
    }

    /// Converts the opened log `evtx_file`, named `path`, into the output: its header's
    /// checksum warning, its records and error lines, its progress bar and `-v` lines.
    /// `teardown`: `.skip` when no log follows (PERF.md H164).
    fn convert(
        s: *Sink,
        gpa: std.mem.Allocator,
        path: []const u8,
        evtx_file: *const dump.EvtxFile,
        cli: *Cli,
        teardown: evtx.pipeline.Teardown,
    ) anyerror!void {
        const header = evtx_file.header;
        if (header.checksumMismatch()) {
            stderrPrint(
                "warning: the file header's CRC32 is invalid (stored 0x{x:0>8}, computed " ++
                    "0x{x:0>8}); reading the file anyway\n",
                .{ header.checksum_stored, header.checksum_computed },
            );
        }
        s.path = path;
        if (s.provenance) |*p| {
            p.file = path;
            cli.settings.provenance = p;
        }
        const size: usize = @intCast(evtx_file.input.size);
        s.progress = if (s.progress_wanted) Progress.init(size) else null;
        const timer = std.time.Timer.start() catch null;
        s.verbose = .{ .path = path, .level = s.verbose.level, .timer = timer };
        const threads = if (cli.threads == 0) std.Thread.getCpuCount() catch 1 else cli.threads;
        defer s.endInput(size);
        return evtx.pipeline.runWith(
            gpa,
            &evtx_file.input,
            evtx_file.order,
            &cli.settings,
            threads,
            teardown,
            .{ .context = s, .consume = Sink.consume },
        );
    }

    /// An input's progress bar and `-v` summary, once its dump ended.
    fn endInput(s: *Sink, bytes: usize) void {
        if (s.progress) |*p| p.finish();
        if (progress_shown) stderrPrint("\n", .{});
        progress_shown = false;
        s.verbose.finish(bytes);
    }

    fn consume(context: *anyopaque, result: *const dump.ChunkResult) anyerror!void {
        const s: *Sink = @ptrCast(@alignCast(context));
        if (result.failures == 0) {
            // The rendered spans tile the output (`Renderer.renderChunk`): one write, and the
            // entries stay unread here; at `-t 2` most were written on the worker's core
            // (PERF.md H174).
            try s.writer.writeAll(result.out.list.items);
            s.chunkDone(result.slot, result.entries.items.len, 0);
            return;
        }
        // Printed records are contiguous in the result's buffer: write runs of them at once.
        var run_start: usize = 0;
        var run_end: usize = 0;
        for (result.entries.items) |*e| {
            const f = switch (e.outcome) {
                .rendered => |span| {
                    if (run_end != span.start) {
                        try s.writer.writeAll(result.out.list.items[run_start..run_end]);
                        run_start = span.start;
                    }
                    run_end = span.start + span.len;
                    continue;
                },
                .failed => |f| f,
            };
            try s.writer.writeAll(result.out.list.items[run_start..run_end]);
            run_start = run_end;
            s.writer.flush() catch return error.WriteFailed;
            var buf: [512]u8 = undefined;
            var id_buf: [24]u8 = undefined;
            const id = if (e.record_id) |r| std.fmt.bufPrint(
                &id_buf,
                "{d}",
                .{r},
            ) catch "-" else "-";
            var w = stdio.stderrWriter(&buf);
            w.interface.print(
                "error: {s}: chunk {d}, record {s}, offset 0x{x}: {s}: {s}\n",
                .{ s.path, e.slot, id, e.file_offset, f.kind.text(), f.detail },
            ) catch {};
            w.interface.flush() catch {};
            // A cut last chunk is no fault the reference would see (shared-fixtures/README.md).
            const complete = !(result.partial and f.kind == .incomplete_chunk);
            if (s.stop_after_one_error and complete) return error.StoppedAfterError;
        }
        try s.writer.writeAll(result.out.list.items[run_start..run_end]);
        const records = result.entries.items.len - result.failures;
        s.chunkDone(result.slot, records, result.failures);
    }

    fn chunkDone(s: *Sink, slot: u32, records: u64, errors: u64) void {
        if (s.progress) |*p| p.chunkDone(records);
        s.verbose.chunkDone(slot, records, errors);
    }
};

/// `-v`: one summary line per file at the end; `-vv` (and `-vvv`): also one line per
/// chunk. Same words as evtx-rs (README, "Verbosity").
const Verbose = struct {
    path: []const u8 = "",
    level: usize,
    timer: ?std.time.Timer,
    chunks: u64 = 0,
    records: u64 = 0,
    errors: u64 = 0,

    fn chunkDone(v: *Verbose, slot: u32, records: u64, errors: u64) void {
        if (v.level == 0) return;
        v.chunks += 1;
        v.records += records;
        v.errors += errors;
        if (v.level >= 2) stderrPrint(
            "debug: {s}: chunk {d}: {d} records, {d} errors\n",
            .{ v.path, slot, records, errors },
        );
    }

    fn finish(v: *Verbose, bytes: usize) void {
        if (v.level == 0) return;
        const ms = if (v.timer) |*t| t.read() / std.time.ns_per_ms else 0;
        stderrPrint(
            "info: {s}: {d} bytes, {d} chunks, {d} records, {d} errors in {d} ms\n",
            .{ v.path, bytes, v.chunks, v.records, v.errors, ms },
        );
    }
};

/// The progress bar (README, "Progress"): on stderr, only when it is a terminal and the
/// output goes to a file (`-f`); redrawn at most every 100 ms and once at the end. Same
/// design as evtx-rs: `[###   ]  42% 12345 records, 85.3 MB/s, ETA 3s`.
const Progress = struct {
    timer: std.time.Timer,
    last_ns: u64 = 0,
    total_bytes: u64,
    done_bytes: u64 = file_header_block,
    records: u64 = 0,

    const file_header_block = evtx.file_header.block_size;
    const width = 30;

    fn init(total_bytes: usize) ?Progress {
        const timer = std.time.Timer.start() catch return null;
        return .{ .timer = timer, .total_bytes = @max(total_bytes, 1) };
    }

    fn chunkDone(p: *Progress, records: u64) void {
        p.done_bytes += chunk.size;
        p.records += records;
        const now = p.timer.read();
        if (now - p.last_ns >= 100 * std.time.ns_per_ms) {
            p.last_ns = now;
            p.draw();
        }
    }

    fn draw(p: *Progress) void {
        progress_shown = true;
        const secs = @max(@as(f64, @floatFromInt(p.timer.read())) / 1e9, 1e-6);
        const done = @min(p.done_bytes, p.total_bytes);
        const percent = done * 100 / p.total_bytes;
        const filled = done * width / p.total_bytes;
        const done_f: f64 = @floatFromInt(done);
        const mbps = done_f / secs / 1e6;
        const eta = @as(f64, @floatFromInt(p.total_bytes - done)) / (done_f / secs);
        var bar: [width]u8 = undefined;
        @memset(bar[0..filled], '#');
        @memset(bar[filled..], ' ');
        stderrPrint(
            "\r[{s}] {d:>3}% {d} records, {d:.1} MB/s, ETA {d}s ",
            .{ &bar, percent, p.records, mbps, @as(u64, @intFromFloat(@ceil(eta))) },
        );
    }

    fn finish(p: *Progress) void {
        p.done_bytes = p.total_bytes;
        p.draw();
    }
};

fn openOutput(path: []const u8, no_confirm: bool) std.fs.File {
    const cwd = std.fs.cwd();
    if (cwd.statFile(path)) |st| {
        if (st.kind == .directory) fatal(
            "An error occurred while creating output file at `{s}`\n\nCaused by:\n    Path is " ++
                "a directory",
            .{path},
        );
        if (!no_confirm) {
            const stdin = std.fs.File.stdin();
            if (!stdin.isTty()) fatal(
                "An error occurred while creating output file at `{s}`\n\nCaused by:\n    " ++
                    "Failed to display confirmation prompt",
                .{path},
            );
            stderrPrint("Are you sure you want to override output file at `{s}`? [y/N] ", .{path});
            var buf: [64]u8 = undefined;
            const n = stdin.read(&buf) catch 0;
            if (n == 0 or (buf[0] != 'y' and buf[0] != 'Y')) fatal("Cancelled", .{});
        }
    } else |_| {}
    if (std.fs.path.dirname(path)) |dir| cwd.makePath(dir) catch |e|
        fatal(
            "An error occurred while creating output file at `{s}`\n\nCaused by:\n    {s}",
            .{ path, ioReason(e) },
        );
    return cwd.createFile(path, .{}) catch |e|
        fatal(
            "An error occurred while creating output file at `{s}`\n\nCaused by:\n    {s}",
            .{ path, ioReason(e) },
        );
}

/// The run, in the same steps as evtx-rs's `main`: parse, a subcommand or the dump's notes,
/// open the input, open the output, load the side files, run the pipeline into the sink,
/// finish. Two or more inputs: `runMany`.
pub fn main() u8 {
    const gpa = std.heap.smp_allocator;
    const argv = std.process.argsAlloc(gpa) catch fatal("out of memory", .{});
    const matches = parseOrExit(gpa, argv);
    if (matches.subcommand) |sub| return subcommand(gpa, sub);
    if (matches.command == &commands.triage) return triage.run(gpa, matches);
    var cli = dumpOptions(gpa, matches) catch fatal("out of memory", .{});
    const input = switch (cli.inputs.len) {
        0 => fatal(
            "Missing INPUT. Provide an EVTX file path, or use a subcommand (try `--help`).",
            .{},
        ),
        1 => cli.inputs[0],
        else => return runMany(gpa, &cli),
    };
    // After the subcommands and the input check, as the reference (and evtx-rs) print them.
    printNotes(&cli);
    const opened_input = openInput(input, cli.output);
    const evtx_file = openEvtxFile(gpa, opened_input, &cli.settings, inputHead(input));
    const out_file = outputFile(&cli);
    // The side files live as long as the run: the settings point at them.
    var cache: evtx.wevt_cache.WevtCache = undefined;
    var mta_file: evtx.mta.MtaFile = undefined;
    loadSideFiles(gpa, &cli, &cache, &mta_file);
    var fw = stdio.writer(out_file, outputBuffer(gpa));
    var sink = Sink.init(&cli, &fw.interface);
    // `main` returns right after: the dump's memory is left to the exit (PERF.md H164).
    sink.convert(gpa, input, &evtx_file, &cli, .skip) catch |e| return finish(&fw, &sink, e);
    return finish(&fw, &sink, null);
}

/// Two or more inputs (`inputs.zig`), converted in order into one output: the same steps as
/// one, the output opened once before the first log (each log opened when its turn comes). A
/// log that cannot be opened prints the reference's error for it and the others go on; the
/// run then exits 1. `--stop-after-one-error` stops at the first error of any log, its own
/// opening included.
fn runMany(gpa: std.mem.Allocator, cli: *Cli) u8 {
    printNotes(cli);
    const items = inputs.expand(gpa, cli.inputs) catch fatal("out of memory", .{});
    if (cli.output) |output| for (items) |item| {
        const is_stdin = item == .log and isStdin(item.log);
        if (inputs.isOutput(item, output, is_stdin)) fatal(
            "refusing to write the output to `{s}`: it is the input file `{s}`",
            .{ output, item.log },
        );
    };
    const out_file = outputFile(cli);
    // The side files live as long as the run: the settings point at them.
    var cache: evtx.wevt_cache.WevtCache = undefined;
    var mta_file: evtx.mta.MtaFile = undefined;
    loadSideFiles(gpa, cli, &cache, &mta_file);
    var fw = stdio.writer(out_file, outputBuffer(gpa));
    var sink = Sink.init(cli, &fw.interface);
    for (items, 0..) |item, n| {
        var failure: std.Io.Writer = .fixed(&failure_buffer);
        const opened = switch (item) {
            .log => |path| openLog(gpa, path, cli, &failure),
            .unreadable => blk: {
                failure.print("{f}", .{item}) catch {};
                break :blk null;
            },
        };
        var evtx_file = opened orelse {
            stderrPrint("Error: {s}\n", .{failure.buffered()});
            sink.failed = true;
            if (cli.stop_after_one_error) return finish(&fw, &sink, error.StoppedAfterError);
            continue;
        };
        const last = n + 1 == items.len;
        sink.convert(gpa, item.log, &evtx_file, cli, if (last) .skip else .free) catch |e|
            return finish(&fw, &sink, e);
        if (!last) closeLog(&evtx_file);
    }
    return finish(&fw, &sink, null);
}

/// The dump's output: `-f`'s file (created as the reference creates it) or stdout.
fn outputFile(cli: *const Cli) std.fs.File {
    const path = cli.output orelse return stdio.stdoutFile();
    return openOutput(path, cli.no_confirm_overwrite);
}

/// The output's buffer. Chunks are written in runs of whole records, most larger than this
/// buffer, which then go to the file without an extra copy.
fn outputBuffer(gpa: std.mem.Allocator) []u8 {
    return gpa.alloc(u8, 1 << 14) catch fatal("out of memory", .{});
}

/// Opens the log at `path` and reads its header and chunk order, or writes the reference's
/// words for why it cannot be into `w` (null).
fn openLog(
    gpa: std.mem.Allocator,
    path: []const u8,
    cli: *const Cli,
    w: *std.Io.Writer,
) ?dump.EvtxFile {
    const opened = if (isStdin(path))
        open_input.openStdin(cli.output, path, w)
    else
        open_input.openPath(path, cli.output, w);
    const in = opened catch return null;
    return dump.EvtxFile.open(gpa, in, &cli.settings) catch |e| switch (e) {
        error.FileTooShort, error.BadFileMagic => |header_error| {
            open_input.writeHeaderRefused(w, inputHead(path), &in, header_error) catch {};
            if (in.source == .file) in.source.file.close();
            return null;
        },
        error.OutOfMemory => fatal("out of memory", .{}),
    };
}

/// Releases a converted log: its file (its chunk order is three numbers, nothing to free).
fn closeLog(evtx_file: *dump.EvtxFile) void {
    if (evtx_file.input.source == .file) evtx_file.input.source.file.close();
}

/// The parsed command line, or the end of the run: a usage error (status 2), help or the
/// version (status 0). evtx-rs: clap's `Cli::parse`.
fn parseOrExit(gpa: std.mem.Allocator, argv: []const []const u8) *const args.Matches {
    if (argv.len > 0) bin_name = std.fs.path.basename(argv[0]);
    const parsed = extensions.parse(gpa, bin_name, if (argv.len > 0) argv[1..] else argv) catch
        fatal("out of memory", .{});
    const outcome = switch (parsed) {
        .outcome => |outcome| outcome,
        .help_extensions => {
            stdoutWriteAll(extensions.help_page);
            std.process.exit(0);
        },
        .triage => |m| return m,
        .help_triage => {
            stdoutWriteAll(extensions.triage_help_page);
            std.process.exit(0);
        },
    };
    switch (outcome) {
        .run => |matches| return matches,
        .usage => |text| {
            stderrPrint("error: {s}\n", .{text});
            std.process.exit(2);
        },
        .help => |page| std.process.exit(printHelp(page.command, page.form)),
        .version => {
            stdoutWriteAll(version_line);
            std.process.exit(0);
        },
    }
}

/// Reads the file header and chunk order of the opened input, or ends the run with the
/// reference's words (evtx-rs: in `open_input`).
fn openEvtxFile(
    gpa: std.mem.Allocator,
    opened_input: dump.Input,
    settings: *const evtx.options.Options,
    head: open_input.Head,
) dump.EvtxFile {
    return dump.EvtxFile.open(gpa, opened_input, settings) catch |e| switch (e) {
        error.FileTooShort, error.BadFileMagic => |header_error| {
            var w: std.Io.Writer = .fixed(&failure_buffer);
            open_input.writeHeaderRefused(&w, head, &opened_input, header_error) catch {};
            fatal("{s}", .{w.buffered()});
        },
        error.OutOfMemory => fatal("out of memory", .{}),
    };
}

/// Reads `--wevt-cache` and `--mta` into `cli.settings`: after the output is created and
/// before anything is written, as the reference does.
fn loadSideFiles(
    gpa: std.mem.Allocator,
    cli: *Cli,
    cache: *evtx.wevt_cache.WevtCache,
    mta_file: *evtx.mta.MtaFile,
) void {
    if (cli.wevt_cache) |path| {
        cache.* = loadWevtCache(gpa, path);
        cli.settings.wevt_cache = cache;
    }
    if (cli.mta) |path| {
        mta_file.* = loadMta(gpa, path);
        cli.settings.mta = mta_file;
    }
}

/// `info` and the template subcommands, each run with its options out of `m`.
fn subcommand(gpa: std.mem.Allocator, m: *const args.Matches) u8 {
    if (m.command == &commands.info) {
        return infoCommand(gpa, m.text(commands.info.id("input")).?);
    }
    // Its own buffer: `stderrPrint` (`fatal`) reuses `stderr_buffer`.
    var buffer: [4096]u8 = undefined;
    var w = stdio.stderrWriter(&buffer);
    if (m.command == &commands.extract_wevt_templates) {
        const options = extract_wevt_templates.optionsOf(gpa, m) catch fatal("out of memory", .{});
        return extract_wevt_templates.run(gpa, &options, .{ .stderr = &w.interface });
    }
    var out_buffer: [1 << 14]u8 = undefined;
    var out = stdio.stdoutWriter(&out_buffer);
    if (m.command == &commands.dump_template_instances) {
        const options = dump_template_instances.optionsOf(m);
        const report: dump_template_instances.Report = .{
            .stdout = &out.interface,
            .stderr = &w.interface,
        };
        return dump_template_instances.run(gpa, &options, report);
    }
    assert(m.command == &commands.apply_wevt_cache);
    const options = apply_wevt_cache.optionsOf(m);
    const report: apply_wevt_cache.Report = .{ .stdout = &out.interface, .stderr = &w.interface };
    return apply_wevt_cache.run(gpa, &options, report);
}

/// Reads and indexes `--wevt-cache FILE`, or ends the run with the reference's words.
fn loadWevtCache(gpa: std.mem.Allocator, path: []const u8) evtx.wevt_cache.WevtCache {
    var diag: evtx.wevt_cache.Diagnostic = undefined;
    return evtx.wevt_cache.WevtCache.load(gpa, std.fs.cwd(), path, &diag) catch |e| switch (e) {
        error.OutOfMemory => fatal("out of memory", .{}),
        error.Invalid => if (diag.readerError()) |damage|
            sideFileError(path, &damage)
        else
            fatal("{f}", .{diag.text(path)}),
    };
}

/// A damaged side file (`--mta`, `--wevt-cache`): one line naming it and the offset
/// (shared-fixtures/README.md, "Damaged side files"), exit 1.
fn sideFileError(path: []const u8, damage: *const evtx.reader_error.ReaderError) noreturn {
    var w = stdio.stderrWriter(&stderr_buffer);
    damage.writeLine(&w.interface, path) catch {};
    w.interface.flush() catch {};
    std.process.exit(1);
}

/// Reads and parses `--mta FILE`, or ends the run with the reference's words.
fn loadMta(gpa: std.mem.Allocator, path: []const u8) evtx.mta.MtaFile {
    const bytes = std.fs.cwd().readFileAlloc(gpa, path, std.math.maxInt(usize)) catch |e| {
        if (e == error.OutOfMemory) fatal("out of memory", .{});
        fatal("failed to read `{s}`\n\nCaused by:\n    {s}", .{ path, ioReason(e) });
    };
    defer gpa.free(bytes);
    var diag: evtx.mta.Diagnostic = undefined;
    return evtx.mta.parse(gpa, bytes, &diag) catch |e| switch (e) {
        error.OutOfMemory => fatal("out of memory", .{}),
        error.Invalid => sideFileError(path, &diag.readerError()),
    };
}

/// Ends the run: the last flush, and the exit status (a closed pipe is success; an input
/// that could not be opened is 1).
fn finish(fw: *std.fs.File.Writer, sink: *Sink, err: ?anyerror) u8 {
    const flushed = fw.interface.flush();
    if (err == null) flushed catch {};
    const write_error = fw.err;
    if (write_error) |we| {
        if (we == error.BrokenPipe) return @intFromBool(sink.failed);
        fatal("failed to write output: {s}", .{ioReason(we)});
    }
    if (err) |e| switch (e) {
        error.StoppedAfterError => fatal("Stopped after error", .{}),
        error.WriteFailed => fatal("failed to write output", .{}),
        else => fatal("{s}", .{@errorName(e)}),
    };
    return @intFromBool(sink.failed);
}

// Tests of the dump's command line. Expected values: the reference's clap definition of
// `evtx_dump` 0.15.1 (defaults `-t 0`, `-o xml`, `--ansi-codec windows-1252`; `-o jsonl`
// implies `--no-indent --dont-show-record-number`) and what the reference binary does with the
// same command lines (exit 0 = parsed, 2 = usage error; its message words where ours match).

const testing = std.testing;

/// Parses `argv` (after the program's name) as `main` does, with an arena.
fn parseTest(arena: *std.heap.ArenaAllocator, argv: []const []const u8) !args.Outcome {
    return args.parse(arena.allocator(), "evtx-zig", argv);
}

/// The memory of the `Cli`s `expectParsed` returns (its inputs), never freed: tests only.
var parsed_arena = std.heap.ArenaAllocator.init(std.heap.page_allocator);

fn expectParsed(argv: []const []const u8) !Cli {
    var arena = std.heap.ArenaAllocator.init(testing.allocator);
    defer arena.deinit();
    const outcome = try parseTest(&arena, argv);
    if (outcome != .run or outcome.run.subcommand != null) {
        std.debug.print("{any}: {any}\n", .{ argv, outcome });
        return error.TestUnexpectedResult;
    }
    var cli = try dumpOptions(parsed_arena.allocator(), outcome.run);
    cli.settings.event_ranges = &.{}; // arena memory; the event tests look at ranges themselves
    return cli;
}

/// A usage error (the reference exits 2) whose message contains `words`.
fn expectUsage(argv: []const []const u8, words: []const u8) !void {
    var arena = std.heap.ArenaAllocator.init(testing.allocator);
    defer arena.deinit();
    const outcome = try parseTest(&arena, argv);
    if (outcome != .usage) {
        std.debug.print("{any}: {any}, expected a usage error\n", .{ argv, outcome });
        return error.TestUnexpectedResult;
    }
    if (std.mem.indexOf(u8, outcome.usage, words) == null) {
        std.debug.print("{any}: message `{s}` lacks `{s}`\n", .{ argv, outcome.usage, words });
        return error.TestUnexpectedResult;
    }
}

test "defaults: xml, indented, banners, -t 0 (one per CPU), windows-1252, every record" {
    const cli = try expectParsed(&.{"log.evtx"});
    try testing.expectEqualStrings("log.evtx", cli.inputs[0]);
    try testing.expectEqual(@as(usize, 0), cli.threads);
    try testing.expectEqual(evtx.options.Format.xml, cli.settings.format);
    try testing.expect(cli.settings.indent and cli.settings.show_record_number);
    try testing.expect(!cli.settings.separate_json_attributes and !cli.settings.validate_checksums);
    try testing.expect(!cli.settings.recover_records and !cli.stop_after_one_error);
    try testing.expect(!cli.no_confirm_overwrite);
    try testing.expect(cli.output == null);
    try testing.expectEqual(@as(usize, 0), cli.verbose);
    try testing.expectEqual(evtx.code_pages.lookup("windows-1252").?, cli.settings.ansi_codec);
    // No INPUT is not a usage error: the reference bails with exit 1 after parsing.
    const none = try expectParsed(&.{});
    try testing.expect(none.inputs.len == 0);
}

test "-t: 0, N, every spelling of the value; out of u32 range or not a number is a usage error" {
    try testing.expectEqual(@as(usize, 0), (try expectParsed(&.{ "-t", "0", "x" })).threads);
    try testing.expectEqual(@as(usize, 3), (try expectParsed(&.{ "-t", "3", "x" })).threads);
    try testing.expectEqual(@as(usize, 2), (try expectParsed(&.{ "-t2", "x" })).threads);
    try testing.expectEqual(@as(usize, 2), (try expectParsed(&.{ "-t=2", "x" })).threads);
    try testing.expectEqual(@as(usize, 2), (try expectParsed(&.{ "--threads=2", "x" })).threads);
    try testing.expectEqual(
        @as(usize, 2),
        (try expectParsed(&.{ "--threads", "+2", "x" })).threads,
    );
    try testing.expectEqual(
        @as(usize, 4294967295),
        (try expectParsed(&.{ "-t", "4294967295", "x" })).threads,
    );
    // `-vt 1`: a cluster of flags ended by a value option.
    const vt = try expectParsed(&.{ "-vt", "1", "x" });
    try testing.expectEqual(@as(usize, 1), vt.threads);
    try testing.expectEqual(@as(usize, 1), vt.verbose);
    try expectUsage(&.{ "-t", "4294967296", "x" }, "invalid value '4294967296' for '--threads");
    try expectUsage(&.{ "-t", "x", "x" }, "invalid value 'x' for '--threads");
    try expectUsage(&.{ "-t", "", "x" }, "invalid value '' for '--threads");
    try expectUsage(
        &.{ "-t", "-1", "x" },
        "unexpected argument '-1' found\n\n  tip: to pass '-1' as a value, use '-- " ++
            "-1'\n\nUsage: evtx-zig [OPTIONS] [INPUT] [COMMAND]",
    );
    try expectUsage(
        &.{ "-t", "x", "x" },
        "invalid value 'x' for '--threads <num-threads>': invalid digit found in string",
    );
    try expectUsage(
        &.{ "-t=-1", "x" },
        "'-1' for '--threads <num-threads>': -1 is not in 0..=4294967295",
    );
    try expectUsage(&.{ "-t", "18446744073709551616" }, "number too large to fit in target type");
    try expectUsage(&.{"-t=-9223372036854775809"}, "number too small to fit in target type");
    try expectUsage(&.{ "-t", "9223372036854775808" }, "number too large to fit in target type");
    try expectUsage(
        &.{ "-t", "9223372036854775807" },
        "9223372036854775807 is not in 0..=4294967295",
    );
    try expectUsage(&.{"-t"}, "a value is required for '--threads");
    try expectUsage(&.{ "-t", "1", "-t", "2", "x" }, "the argument '--threads");
}

test "-o: json, xml, jsonl; jsonl turns indentation and banners off; anything else is refused" {
    const json = try expectParsed(&.{ "-o", "json", "x" });
    try testing.expectEqual(evtx.options.Format.json, json.settings.format);
    try testing.expect(json.settings.indent and json.settings.show_record_number);
    const jsonl = try expectParsed(&.{ "--format=jsonl", "x" });
    try testing.expectEqual(evtx.options.Format.jsonl, jsonl.settings.format);
    try testing.expect(!jsonl.settings.indent and !jsonl.settings.show_record_number);
    const cluster = try expectParsed(&.{ "-ojsonl", "x" });
    try testing.expectEqual(evtx.options.Format.jsonl, cluster.settings.format);
    try testing.expectEqual(
        evtx.options.Format.xml,
        (try expectParsed(&.{ "-o", "xml", "x" })).settings.format,
    );
    try expectUsage(&.{ "-o", "yaml", "x" }, "invalid value 'yaml' for '--format");
    try expectUsage(&.{ "-o", "JSON", "x" }, "[possible values: json, xml, jsonl]");
    try expectUsage(
        &.{ "-o", "", "x" },
        "a value is required for '--format <output-format>' but none was supplied",
    );
    try expectUsage(&.{ "-o", "jsn", "x" }, "\n\n  tip: a similar value exists: 'json'");
}

test "the flags: each sets its setting, each at most once, none takes a value" {
    const cli = try expectParsed(&.{
        "--no-confirm-overwrite", "--validate-checksums",       "--recover-records",
        "--no-indent",            "--separate-json-attributes", "--dont-show-record-number",
        "--stop-after-one-error", "-f",                         "out.xml",
        "x",
    });
    try testing.expect(cli.no_confirm_overwrite and cli.settings.validate_checksums);
    try testing.expect(cli.settings.recover_records and cli.settings.separate_json_attributes);
    try testing.expect(!cli.settings.indent and !cli.settings.show_record_number);
    try testing.expect(cli.stop_after_one_error);
    try testing.expectEqualStrings("out.xml", cli.output.?);
    try testing.expectEqualStrings(
        "out.xml",
        (try expectParsed(&.{ "--output=out.xml", "x" })).output.?,
    );
    try expectUsage(
        &.{ "--no-indent=1", "x" },
        "unexpected value '1' for '--no-indent' found; no more were expected",
    );
    try expectUsage(
        &.{ "--no-indent", "--no-indent", "x" },
        "the argument '--no-indent' cannot be used multiple times",
    );
    try expectUsage(&.{ "--bogus", "x" }, "unexpected argument '--bogus' found");
    try expectUsage(&.{ "-x", "x" }, "unexpected argument '-x' found");
    // The reference: extra is like extract-wevt-templates, so clap names it a subcommand.
    const usage_line = "\n\nUsage: evtx-zig [OPTIONS] [INPUT] [COMMAND]";
    try expectUsage(&.{ "x", "extra" }, "unrecognized subcommand 'extra'\n\n  tip: a similar " ++
        "subcommand exists: 'extract-wevt-templates'" ++ usage_line);
    try expectUsage(&.{ "x", "extrb" }, "unexpected argument 'extrb' found" ++ usage_line);
    try expectUsage(
        &.{ "x", "inf" },
        "unrecognized subcommand 'inf'\n\n  tip: a similar subcommand exists: 'info'",
    );
    try expectUsage(
        &.{ "-t", "1", "-vv", "--no-inden" },
        "  tip: a similar argument exists: '--no-indent'\n\nUsage: evtx-zig --threads " ++
            "<num-threads> -v... --no-indent [INPUT]",
    );
    try expectUsage(
        &.{ "--inpu=a", "info" },
        "unexpected argument '--inpu' found\n\n  tip: 'info --input' exists",
    );
    try expectUsage(&.{"-f"}, "a value is required for '--output");
}

test "-v counts; --ansi-codec takes ASCII-compatible labels only" {
    try testing.expectEqual(@as(usize, 3), (try expectParsed(&.{ "-vvv", "x" })).verbose);
    try testing.expectEqual(@as(usize, 4), (try expectParsed(&.{ "-vv", "-vv", "x" })).verbose);
    const koi = try expectParsed(&.{ "--ansi-codec=koi8-r", "x" });
    try testing.expectEqual(evtx.code_pages.lookup("koi8-r").?, koi.settings.ansi_codec);
    try expectUsage(&.{ "--ansi-codec", "nope", "x" }, "invalid value 'nope' for '--ansi-codec");
    try expectUsage(
        &.{ "--ansi-codec", "utf-16le", "x" },
        "invalid value 'utf-16le' for '--ansi-codec",
    );
}

test "--events: inclusive ranges and single ids; a bad part names itself" {
    var arena = std.heap.ArenaAllocator.init(testing.allocator);
    defer arena.deinit();
    const outcome = try parseTest(&arena, &.{ "--events", "1-3,5,9-8", "x" });
    const ranges = (try dumpOptions(arena.allocator(), outcome.run)).settings.event_ranges;
    try testing.expectEqual(@as(usize, 3), ranges.len);
    try testing.expectEqual(evtx.options.Range{ .first = 1, .last = 3 }, ranges[0]);
    try testing.expectEqual(evtx.options.Range{ .first = 5, .last = 5 }, ranges[1]);
    try testing.expectEqual(evtx.options.Range{ .first = 9, .last = 8 }, ranges[2]);
    // The reference's words, the failing part at the end.
    try expectUsage(
        &.{ "--events", "1-x", "x" },
        "invalid value '1-x' for '--events <event-ranges>': Expected range to be a positive " ++
            "number, got: 1-x",
    );
    try expectUsage(&.{ "--events", "1-", "x" }, "Expected range to be a positive number, got: 1-");
    try expectUsage(&.{ "--events", ",1", "x" }, "Expected range to be a positive number, got: ");
    try expectUsage(&.{ "--events", "1,,2", "x" }, "got: ");
}

test "help, version and the info subcommand" {
    var arena = std.heap.ArenaAllocator.init(testing.allocator);
    defer arena.deinit();
    // clap's forms: `-h` short, `--help` and the `help` subcommand long, the first one
    // given deciding; `help help` is the help subcommand's own page.
    const Command = commands.Command;
    const forms = [_]struct { argv: []const []const u8, page: *const Command, form: args.Form }{
        .{ .argv = &.{"-h"}, .page = &commands.main, .form = .short },
        .{ .argv = &.{ "-vh", "--bogus" }, .page = &commands.main, .form = .short },
        .{ .argv = &.{"--help"}, .page = &commands.main, .form = .long },
        .{ .argv = &.{ "x", "--help", "-h" }, .page = &commands.main, .form = .long },
        .{ .argv = &.{"help"}, .page = &commands.main, .form = .long },
        .{ .argv = &.{ "x", "help" }, .page = &commands.main, .form = .long },
        .{ .argv = &.{ "help", "help" }, .page = &commands.help, .form = .long },
        .{ .argv = &.{ "help", "info" }, .page = &commands.info, .form = .long },
        .{
            .argv = &.{ "help", "apply-wevt-cache" },
            .page = &commands.apply_wevt_cache,
            .form = .long,
        },
        .{ .argv = &.{ "info", "-h" }, .page = &commands.info, .form = .short },
        .{ .argv = &.{ "info", "-hi" }, .page = &commands.info, .form = .short },
        .{ .argv = &.{ "info", "--help" }, .page = &commands.info, .form = .long },
    };
    for (forms) |case| {
        const outcome = try parseTest(&arena, case.argv);
        try testing.expectEqual(case.page, outcome.help.command);
        try testing.expectEqual(case.form, outcome.help.form);
    }
    for ([_][]const []const u8{ &.{"-V"}, &.{"--version"}, &.{ "-Vh", "x" } }) |argv| {
        try testing.expect((try parseTest(&arena, argv)) == .version);
    }
    const more = "\n\nFor more information, try '--help'.";
    try expectUsage(&.{ "help", "info", "bogus" }, "'bogus'\n\nUsage: evtx-zig info --input " ++
        "<EVTX>" ++ more);
    // clap's `help` has no `--help`: its error does not point to one.
    const help_help = try parseTest(&arena, &.{ "help", "help", "x" });
    try testing.expectEqualStrings("unrecognized subcommand 'x'\n\nUsage: evtx-zig help " ++
        "[COMMAND]...", help_help.usage);
    try expectUsage(&.{ "help", "-h" }, "unrecognized subcommand '-h'");
    try expectUsage(&.{ "info", "--help=" }, "value '' for '--help' found; no more were expected" ++
        "\n\nUsage: evtx-zig info --input <EVTX> --help" ++ more);

    for ([_][]const []const u8{
        &.{ "info", "-i", "a.evtx" },
        &.{ "info", "--input=a.evtx" },
        &.{ "info", "-ia.evtx" },
        &.{ "info", "--input", "a.evtx" },
    }) |argv| {
        const info = (try parseTest(&arena, argv)).run.subcommand.?;
        try testing.expectEqual(&commands.info, info.command);
        try testing.expectEqualStrings("a.evtx", info.text(commands.info.id("input")).?);
    }
    try expectUsage(
        &.{"info"},
        "the following required arguments were not provided:\n  --input <EVTX>",
    );
    try expectUsage(
        &.{ "info", "-i" },
        "a value is required for '--input <EVTX>' but none was supplied",
    );
    try expectUsage(&.{ "info", "--bogus" }, "unexpected argument '--bogus' found");
    try expectUsage(
        &.{ "info", "-i", "a", "-i", "b" },
        "the argument '--input <EVTX>' cannot be used multiple times",
    );
    try expectUsage(&.{ "help", "foo" }, "unrecognized subcommand 'foo'");
}

test "`--` ends the options: a name that looks like one is the input" {
    const cli = try expectParsed(&.{ "-o", "json", "--", "-t" });
    try testing.expectEqualStrings("-t", cli.inputs[0]);
    try testing.expectEqual(@as(usize, 0), cli.threads);
    // A lone `-` is standard input, not an option.
    try testing.expectEqualStrings("-", (try expectParsed(&.{"-"})).inputs[0]);
}
