//! `evtx-zig`: a command line compatible with `evtx_dump` 0.15.1 (contract section 11).
//! Usage errors exit 2, fatal errors exit 1 with `Error: ...`, record and chunk errors
//! are reported one line each on stderr (shared-fixtures/README.md) and keep status 0.
const std = @import("std");
const builtin = @import("builtin");
const evtx = @import("evtx");
const dump = evtx.dump;
const chunk = evtx.chunk;

const version = "0.1.0";

const usage =
    \\Usage: evtx-zig [OPTIONS] <INPUT>
    \\
    \\Arguments:
    \\  <INPUT>  Input EVTX file path, or '-' to read from stdin.
    \\
    \\Options:
    \\  -t, --threads <N>             Worker threads, 0 = number of CPUs [default: 0]
    \\  -o, --format <FORMAT>         Output format: xml, json, jsonl [default: xml]
    \\  -f, --output <PATH>           Write to PATH instead of stdout (asks before overwriting)
    \\      --no-confirm-overwrite    Overwrite the output file without asking
    \\      --events <RANGES>         Only print records whose ids are in RANGES (e.g. 1-3,5)
    \\      --validate-checksums      Skip chunks whose checksums are invalid
    \\      --recover-records         Also carve stale records from unallocated chunk space
    \\      --no-indent               XML without indentation
    \\      --separate-json-attributes  JSON attributes in `<NAME>_attributes` members
    \\      --dont-show-record-number Do not print `Record <id>` lines
    \\      --ansi-codec <LABEL>      Code page of ANSI strings [default: windows-1252]
    \\      --stop-after-one-error    Exit at the first record or chunk error
    \\  -v...                         Verbosity (accepted, no effect)
    \\  -h, --help                    Print help
    \\  -V, --version                 Print version
    \\
;

const Cli = struct {
    input: ?[]const u8 = null,
    output: ?[]const u8 = null,
    threads: usize = 0,
    no_confirm_overwrite: bool = false,
    stop_after_one_error: bool = false,
    settings: dump.Settings = .{},
    format_given: bool = false,
    no_indent: bool = false,
    no_record_number: bool = false,
};

var stderr_buffer: [4096]u8 = undefined;
/// A progress line is on the terminal (ended with a newline at exit).
var progress_shown = false;

fn stderrPrint(comptime fmt: []const u8, args: anytype) void {
    var w = std.fs.File.stderr().writerStreaming(&stderr_buffer);
    w.interface.print(fmt, args) catch {};
    w.interface.flush() catch {};
}

fn usageError(comptime fmt: []const u8, args: anytype) noreturn {
    stderrPrint("error: " ++ fmt ++ "\n\nFor more information, try '--help'.\n", args);
    std.process.exit(2);
}

fn fatal(comptime fmt: []const u8, args: anytype) noreturn {
    stderrPrint("Error: " ++ fmt ++ "\n", args);
    std.process.exit(1);
}

fn parseRanges(gpa: std.mem.Allocator, text: []const u8) ![]dump.Range {
    var list: std.ArrayList(dump.Range) = .empty;
    var it = std.mem.splitScalar(u8, text, ',');
    while (it.next()) |part| {
        const bad = "invalid value '{s}' for '--events <event-ranges>': Expected range to be a positive number, got: {s}";
        if (std.mem.indexOfScalar(u8, part, '-')) |dash| {
            const a = std.fmt.parseInt(u64, part[0..dash], 10) catch usageError(bad, .{ text, part });
            const b = std.fmt.parseInt(u64, part[dash + 1 ..], 10) catch usageError(bad, .{ text, part });
            try list.append(gpa, .{ .first = a, .last = b });
        } else {
            const a = std.fmt.parseInt(u64, part, 10) catch usageError(bad, .{ text, part });
            try list.append(gpa, .{ .first = a, .last = a });
        }
    }
    return list.toOwnedSlice(gpa);
}

fn parseArgs(gpa: std.mem.Allocator, args: []const []const u8) !Cli {
    var cli: Cli = .{};
    var i: usize = 1;
    var only_positional = false;
    while (i < args.len) : (i += 1) {
        const arg = args[i];
        if (only_positional or arg.len == 0 or arg[0] != '-' or std.mem.eql(u8, arg, "-")) {
            if (cli.input != null) usageError("unexpected argument '{s}' found", .{arg});
            cli.input = arg;
            continue;
        }
        if (std.mem.eql(u8, arg, "--")) {
            only_positional = true;
            continue;
        }
        var name = arg;
        var inline_value: ?[]const u8 = null;
        if (std.mem.startsWith(u8, arg, "--")) {
            if (std.mem.indexOfScalar(u8, arg, '=')) |at| {
                name = arg[0..at];
                inline_value = arg[at + 1 ..];
            }
        } else if (arg.len > 2 and arg[1] != 'v') {
            name = arg[0..2];
            inline_value = arg[2..];
        }
        const Takes = struct {
            fn value(a: []const []const u8, idx: *usize, inl: ?[]const u8, n: []const u8) []const u8 {
                if (inl) |v| return v;
                idx.* += 1;
                if (idx.* >= a.len) usageError("a value is required for '{s}' but none was supplied", .{n});
                return a[idx.*];
            }
        };
        if (eq(name, "-h") or eq(name, "--help")) {
            var w = std.fs.File.stdout().writerStreaming(&.{});
            w.interface.writeAll(usage) catch {};
            std.process.exit(0);
        } else if (eq(name, "-V") or eq(name, "--version")) {
            var w = std.fs.File.stdout().writerStreaming(&.{});
            w.interface.writeAll("evtx-zig " ++ version ++ " (evtx_dump 0.15.1 compatible)\n") catch {};
            std.process.exit(0);
        } else if (eq(name, "-o") or eq(name, "--format")) {
            const v = Takes.value(args, &i, inline_value, "--format <output-format>");
            cli.format_given = true;
            cli.settings.format = std.meta.stringToEnum(dump.OutputFormat, v) orelse
                usageError("invalid value '{s}' for '--format <output-format>'\n  [possible values: json, xml, jsonl]", .{v});
        } else if (eq(name, "-t") or eq(name, "--threads")) {
            const v = Takes.value(args, &i, inline_value, "--threads <num-threads>");
            cli.threads = std.fmt.parseInt(usize, v, 10) catch
                usageError("invalid value '{s}' for '--threads <num-threads>': invalid digit found in string", .{v});
        } else if (eq(name, "-f") or eq(name, "--output")) {
            cli.output = Takes.value(args, &i, inline_value, "--output <output-target>");
        } else if (eq(name, "--events")) {
            cli.settings.events = try parseRanges(gpa, Takes.value(args, &i, inline_value, "--events <event-ranges>"));
        } else if (eq(name, "--ansi-codec")) {
            const v = Takes.value(args, &i, inline_value, "--ansi-codec <ansi-codec>");
            cli.settings.ansi = evtx.code_pages.lookup(v) orelse usageError(
                "invalid value '{s}' for '--ansi-codec <ansi-codec>': unknown or unsupported encoding `{s}`; " ++
                    "supported: the ASCII-compatible Encoding Standard labels",
                .{ v, v },
            );
        } else if (eq(name, "--no-confirm-overwrite")) {
            cli.no_confirm_overwrite = true;
        } else if (eq(name, "--validate-checksums")) {
            cli.settings.validate_checksums = true;
        } else if (eq(name, "--recover-records")) {
            cli.settings.recover_records = true;
        } else if (eq(name, "--no-indent")) {
            cli.no_indent = true;
        } else if (eq(name, "--separate-json-attributes")) {
            cli.settings.separate_attributes = true;
        } else if (eq(name, "--dont-show-record-number")) {
            cli.no_record_number = true;
        } else if (eq(name, "--stop-after-one-error")) {
            cli.stop_after_one_error = true;
        } else if (name.len >= 2 and name[1] == 'v' and std.mem.allEqual(u8, name[1..], 'v')) {
            // Verbosity: accepted for compatibility.
        } else {
            usageError("unexpected argument '{s}' found", .{arg});
        }
    }
    if (cli.settings.format == .jsonl) {
        if (cli.no_indent) stderrPrint("no need to pass both `--no-indent` and `-o jsonl`\n", .{});
        if (cli.no_record_number) stderrPrint("no need to pass both `--no-show-record-number` and `-o jsonl`\n", .{});
    }
    cli.settings.indent = !cli.no_indent and cli.settings.format != .jsonl;
    cli.settings.show_record_number = !cli.no_record_number and cli.settings.format != .jsonl;
    return cli;
}

fn eq(a: []const u8, b: []const u8) bool {
    return std.mem.eql(u8, a, b);
}

fn readInput(gpa: std.mem.Allocator, path: []const u8) []const u8 {
    const stdin_names = [_][]const u8{ "-", "/dev/stdin", "/dev/fd/0", "/proc/self/fd/0" };
    for (stdin_names) |n| {
        if (eq(path, n)) {
            var buf: [65536]u8 = undefined;
            var r = std.fs.File.stdin().readerStreaming(&buf);
            const data = r.interface.allocRemaining(gpa, .unlimited) catch |e|
                fatal("Failed to read evtx data from stdin: {s}", .{@errorName(e)});
            if (data.len == 0) fatal("No input received on stdin", .{});
            return data;
        }
    }
    if (mapFile(path)) |mapped| return mapped;
    return std.fs.cwd().readFileAlloc(gpa, path, std.math.maxInt(usize)) catch |e|
        fatal("Failed to open evtx file at: {s}\n\nCaused by:\n    {s}", .{ path, @errorName(e) });
}

/// Maps a regular file read-only (no copy; pages fault in as chunks are read, as in the
/// Rust CLI: prefaulting measured no faster, PERF.md H15). Null when that is not possible
/// (pipes, empty files, platforms without mmap): the caller reads it instead.
fn mapFile(path: []const u8) ?[]const u8 {
    if (builtin.os.tag != .linux) return null;
    const file = std.fs.cwd().openFile(path, .{}) catch return null;
    defer file.close();
    const stat = file.stat() catch return null;
    if (stat.kind != .file or stat.size == 0 or stat.size > std.math.maxInt(usize)) return null;
    const mapped = std.posix.mmap(null, @intCast(stat.size), std.posix.PROT.READ, .{ .TYPE = .PRIVATE }, file.handle, 0) catch return null;
    return mapped;
}

/// Writes chunk results: record text to the output, one line per error to stderr.
const Sink = struct {
    writer: *std.Io.Writer,
    path: []const u8,
    stop_after_one_error: bool,
    progress: bool,
    chunks_done: usize = 0,
    chunks_total: usize,

    fn consume(context: *anyopaque, result: *const dump.Result) anyerror!void {
        const s: *Sink = @ptrCast(@alignCast(context));
        // Printed records are contiguous in the result's buffer: write runs of them at once.
        var run_start: usize = 0;
        var run_end: usize = 0;
        for (result.entries.items) |*e| {
            if (e.kind == null) {
                if (!e.printed) continue;
                if (run_end != e.start) {
                    try s.writer.writeAll(result.out.list.items[run_start..run_end]);
                    run_start = e.start;
                }
                run_end = e.start + e.len;
                continue;
            }
            try s.writer.writeAll(result.out.list.items[run_start..run_end]);
            run_start = run_end;
            if (e.kind) |kind| {
                s.writer.flush() catch return error.WriteFailed;
                var buf: [512]u8 = undefined;
                var id_buf: [24]u8 = undefined;
                const id = if (e.record_id) |r| std.fmt.bufPrint(&id_buf, "{d}", .{r}) catch "-" else "-";
                var w = std.fs.File.stderr().writerStreaming(&buf);
                w.interface.print("error: {s}: chunk {d}, record {s}, offset 0x{x}: {s}: {s}\n", .{ s.path, e.slot, id, e.file_offset, kind.text(), e.detail }) catch {};
                w.interface.flush() catch {};
                // A cut last chunk is no fault the reference would see (shared-fixtures/README.md).
                if (s.stop_after_one_error and kind != .incomplete_chunk) return error.StoppedAfterError;
            }
        }
        try s.writer.writeAll(result.out.list.items[run_start..run_end]);
        s.chunks_done += 1;
        if (s.progress) {
            progress_shown = true;
            stderrPrint("\r[{d}/{d}] chunks", .{ s.chunks_done, s.chunks_total });
        }
    }
};

fn openOutput(path: []const u8, no_confirm: bool) std.fs.File {
    const cwd = std.fs.cwd();
    if (cwd.statFile(path)) |st| {
        if (st.kind == .directory) fatal("An error occurred while creating output file at `{s}`\n\nCaused by:\n    Path is a directory", .{path});
        if (!no_confirm) {
            const stdin = std.fs.File.stdin();
            if (!stdin.isTty()) fatal("An error occurred while creating output file at `{s}`\n\nCaused by:\n    Failed to display confirmation prompt", .{path});
            stderrPrint("Are you sure you want to override output file at `{s}`? [y/N] ", .{path});
            var buf: [64]u8 = undefined;
            const n = stdin.read(&buf) catch 0;
            if (n == 0 or (buf[0] != 'y' and buf[0] != 'Y')) fatal("Cancelled", .{});
        }
    } else |_| {}
    if (std.fs.path.dirname(path)) |dir| cwd.makePath(dir) catch |e|
        fatal("An error occurred while creating output file at `{s}`\n\nCaused by:\n    {s}", .{ path, @errorName(e) });
    return cwd.createFile(path, .{}) catch |e|
        fatal("An error occurred while creating output file at `{s}`\n\nCaused by:\n    {s}", .{ path, @errorName(e) });
}

pub fn main() u8 {
    const gpa = std.heap.smp_allocator;
    const args = std.process.argsAlloc(gpa) catch fatal("out of memory", .{});
    const cli = parseArgs(gpa, args) catch fatal("out of memory", .{});
    const input = cli.input orelse fatal("Missing INPUT. Provide an EVTX file path (try `--help`).", .{});
    const file = readInput(gpa, input);
    const evtx_file = dump.File.open(gpa, file, &cli.settings) catch |e| switch (e) {
        error.FileTooShort => fatal("Failed to parse evtx file header: the file is shorter than its header", .{}),
        error.BadFileMagic => fatal("Failed to parse evtx file header: invalid magic (expected `ElfFile\\0`)", .{}),
        error.OutOfMemory => fatal("out of memory", .{}),
    };
    const header = evtx_file.header;
    if (header.checksumMismatch()) {
        stderrPrint("warning: the file header's CRC32 is invalid (stored 0x{x:0>8}, computed 0x{x:0>8}); reading the file anyway\n", .{ header.checksum_stored, header.checksum_computed });
    }
    const order = evtx_file.order;
    const out_file = if (cli.output) |path| openOutput(path, cli.no_confirm_overwrite) else std.fs.File.stdout();
    // Chunks are written in runs of whole records, most larger than this buffer, which
    // then go to the file without an extra copy.
    const buffer = gpa.alloc(u8, 1 << 14) catch fatal("out of memory", .{});
    var fw = out_file.writerStreaming(buffer);
    var sink: Sink = .{
        .writer = &fw.interface,
        .path = input,
        .stop_after_one_error = cli.stop_after_one_error,
        .progress = cli.output != null and std.fs.File.stderr().isTty(),
        .chunks_total = order.len,
    };
    const threads = if (cli.threads == 0) std.Thread.getCpuCount() catch 1 else cli.threads;
    dump.run(gpa, file, order, &cli.settings, threads, .{ .context = &sink, .consume = Sink.consume }) catch |e| {
        return finish(&fw, e);
    };
    return finish(&fw, null);
}

fn finish(fw: *std.fs.File.Writer, err: ?anyerror) u8 {
    if (progress_shown) stderrPrint("\n", .{});
    const flushed = fw.interface.flush();
    if (err == null) flushed catch {};
    const write_error = fw.err;
    if (write_error) |we| {
        if (we == error.BrokenPipe) return 0;
        fatal("Failed to write output: {s}", .{@errorName(we)});
    }
    if (err) |e| switch (e) {
        error.StoppedAfterError => fatal("Stopped after error", .{}),
        error.WriteFailed => fatal("Failed to write output", .{}),
        else => fatal("{s}", .{@errorName(e)}),
    };
    return 0;
}
