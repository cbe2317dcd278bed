//! `evtx-zig dump-template-instances`: each record's N-th top-level template instance as one
//! JSON line (its substitution values' texts), as `evtx_dump` 0.15.1 prints them (texts,
//! options and exit statuses: `shared-fixtures/generator/wevt-format.md`). The records, the
//! reference's failures and the instances are the engine's (`evtx.template_instances`); this
//! parses the options and prints. Rust's mirror: `rust/cli/src/dump_template_instances.rs`.
const std = @import("std");
const evtx = @import("evtx");
const arg_parser = @import("args.zig");
const commands = @import("commands.zig");
const open_input = @import("open_input.zig");
const assert = std.debug.assert;
const template_instances = evtx.template_instances;
const Out = evtx.escape.Out;
const writeJsonString = evtx.escape.writeJsonString;

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
    const status = runOrFail(gpa, options, report) catch |e| switch (e) {
        error.OutOfMemory => fail(report, "out of memory", .{}),
        // A closed stdout or stderr ends the listing, not the command.
        error.WriteFailed => 0,
    };
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
    var log = openLog(gpa, options.input, &failure_writer) catch |e| switch (e) {
        error.OutOfMemory => return error.OutOfMemory,
        error.Failed => return fail(report, "{s}", .{failure_writer.buffered()}),
    };
    defer log.close();
    var arena = std.heap.ArenaAllocator.init(gpa);
    defer arena.deinit();
    var printer: Printer = .{ .options = options, .report = report, .arena = &arena };
    printer.text = Out.init(gpa);
    defer printer.text.deinit();
    try template_instances.readRecords(gpa, &log.file, printer.visitor());
    if (printer.unread) |e| return fail(report, "{s}", .{@errorName(e)});
    return 0;
}

/// An input log, open for `template_instances.readRecords`.
pub const Log = struct {
    file: evtx.dump.EvtxFile,

    pub fn close(log: *Log) void {
        switch (log.file.input.source) {
            .file => |file| file.close(),
            .bytes => {},
        }
    }
};

/// Opens the log at `path` as the reference's `EvtxParser::from_path` does, or writes its
/// text to `m` (`apply-wevt-cache --evtx` opens its log so too).
pub fn openLog(
    gpa: std.mem.Allocator,
    path: []const u8,
    m: *std.Io.Writer,
) error{ Failed, OutOfMemory }!Log {
    const in = try open_input.openPath(path, null, m);
    errdefer in.source.file.close();
    const settings: evtx.options.Options = .{ .format = .jsonl };
    const file = evtx.dump.EvtxFile.open(gpa, in, &settings) catch |e| switch (e) {
        error.OutOfMemory => return error.OutOfMemory,
        error.FileTooShort, error.BadFileMagic => |header_error| {
            open_input.writeHeaderRefused(m, .{ .path = path }, &in, header_error) catch {};
            return error.Failed;
        },
    };
    return .{ .file = file };
}

/// Prints the selected instance of each record `readRecords` hands it, and a failed record's
/// or chunk's line.
const Printer = struct {
    options: *const Options,
    report: Report,
    /// The instances of one record at a time.
    arena: *std.heap.ArenaAllocator,
    /// A timestamp's or GUID's text.
    text: Out = undefined,
    /// The error of a record whose instances do not read (never one the dump read).
    unread: ?anyerror = null,

    fn visitor(p: *Printer) template_instances.Visitor {
        return .{ .context = p, .visit = visit };
    }

    fn visit(
        context: *anyopaque,
        step: *const template_instances.Step,
    ) template_instances.VisitError!template_instances.Flow {
        const p: *Printer = @ptrCast(@alignCast(context));
        const record = switch (step.*) {
            .failed => |f| {
                try p.report.stderr.print("{s}\n", .{f.line});
                return .next;
            },
            .record => |record| record,
        };
        if (p.options.record_id) |want| if (want != record.id) return .next;
        _ = p.arena.reset(.retain_capacity);
        const found = record.instances(p.arena.allocator()) catch |e| switch (e) {
            error.OutOfMemory => return error.OutOfMemory,
            else => {
                p.unread = e;
                return .stop;
            },
        };
        // A record without the selected instance prints nothing, and the search goes on.
        const index = p.options.template_instance_index;
        if (index >= found.len) return .next;
        try p.printInstance(&record, &found[@intCast(index)]);
        return if (p.options.record_id == null) .next else .stop;
    }

    /// Instance `inst` of `record` as one line.
    fn printInstance(
        p: *Printer,
        record: *const template_instances.Record,
        inst: *const template_instances.Instance,
    ) template_instances.VisitError!void {
        const w = p.report.stdout;
        try w.writeAll("{\"source\":");
        try writeJsonString(w, p.options.input);
        p.text.truncate(0);
        try evtx.values_format.writeFiletimeTrimmed(&p.text, record.filetime);
        try w.print(",\"record_id\":{d},\"timestamp\":\"{s}\"", .{ record.id, p.text.list.items });
        try w.print(",\"template_instance_index\":{d},\"template_id\":{d}," ++
            "\"template_def_offset\":{d},\"template_guid\":", .{
            p.options.template_instance_index,
            inst.template_id,
            inst.def_offset,
        });
        if (inst.guid) |*g| {
            p.text.truncate(0);
            try evtx.values_format.writeGuidUpper(&p.text, g);
            try w.print("\"{s}\"", .{p.text.list.items});
        } else try w.writeAll("null");
        try w.writeAll(",\"substitutions\":[");
        for (inst.values, 0..) |text, i| {
            if (i > 0) try w.writeByte(',');
            try writeJsonString(w, text);
        }
        try w.writeAll("]}\n");
    }
};
