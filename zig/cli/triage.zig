//! `triage` (README, "Extensions"; the contract in shared-fixtures/README.md, "Triage"): the
//! report of each log, as text or one JSON document. Arguments and printing only: the engine's
//! `triage` module walks and writes. evtx-rs's twin is `rust/cli/src/triage.rs`.
const std = @import("std");
const evtx = @import("evtx");
const args = @import("args.zig");
const commands = @import("commands.zig");
const cli = @import("cli.zig");
const inputs = @import("inputs.zig");
const open_input = @import("open_input.zig");
const platform = @import("platform.zig");
const stdio = @import("stdio.zig");
const engine = evtx.triage;
const Writer = std.Io.Writer;

/// What the command line asks for.
const Request = struct {
    paths: []const []const u8,
    json: bool,
    top: usize,
    silence: u64,
    /// The text's single-file form: one INPUT that is not a directory.
    single: bool,
};

fn requestOf(gpa: std.mem.Allocator, m: *const args.Matches) error{OutOfMemory}!Request {
    const c = &commands.triage;
    const paths = try m.texts(gpa, args.positional);
    const single = paths.len == 1 and !isDirectory(paths[0]);
    return .{
        .paths = paths,
        .json = m.has(c.id("json")),
        .top = @intCast(m.number(c.id("top")) orelse engine.top_default),
        .silence = m.number(c.id("silence")) orelse engine.silence_default,
        .single = single,
    };
}

fn isDirectory(path: []const u8) bool {
    const st = std.fs.cwd().statFile(path) catch return false;
    return st.kind == .directory;
}

/// Runs `triage`: every log's report on stdout, a line on stderr for each input that cannot be
/// opened (then exit 1).
pub fn run(gpa: std.mem.Allocator, m: *const args.Matches) u8 {
    const request = requestOf(gpa, m) catch return outOfMemory();
    const items = inputs.expand(gpa, request.paths) catch return outOfMemory();
    var buffer: [1 << 14]u8 = undefined;
    var out = stdio.stdoutWriter(&buffer);
    const status = report(gpa, &request, items, &out.interface) catch |e| switch (e) {
        error.OutOfMemory => return outOfMemory(),
        error.WriteFailed => 1,
    };
    out.interface.flush() catch {};
    if (out.err) |e| if (e != error.BrokenPipe) return 1;
    return status;
}

fn outOfMemory() u8 {
    var buffer: [64]u8 = undefined;
    var w = stdio.stderrWriter(&buffer);
    w.interface.writeAll("Error: out of memory\n") catch {};
    w.interface.flush() catch {};
    return 1;
}

var failure_buffer: [2 * std.fs.max_path_bytes + 1024]u8 = undefined;

fn report(
    gpa: std.mem.Allocator,
    request: *const Request,
    items: []const inputs.Item,
    w: *Writer,
) (error{OutOfMemory} || Writer.Error)!u8 {
    var totals: engine.Totals = .{};
    if (request.json) try engine.writeJsonStart(w);
    for (items, 0..) |item, n| {
        if (request.json and n > 0) try w.writeByte(',');
        var failure: Writer = .fixed(&failure_buffer);
        var r = triageItem(gpa, item, request.silence, &failure) orelse {
            totals.addUnreadable();
            const path = itemPath(item);
            printFailure(failure.buffered());
            if (request.json) {
                try engine.writeJsonFailed(w, path, failure.buffered());
            } else try engine.writeLineFailed(w, path, failure.buffered());
            continue;
        };
        defer r.deinit();
        totals.add(&r);
        const path = itemPath(item);
        if (request.json) {
            try engine.writeJson(&r, gpa, w, path);
        } else if (request.single) {
            try engine.writeText(&r, gpa, w, path, request.top);
        } else try engine.writeLine(&r, w, path);
    }
    if (request.json) {
        try engine.writeJsonEnd(w, &totals);
    } else if (!request.single) try engine.writeTotals(w, &totals);
    return @intFromBool(totals.unreadable > 0);
}

fn itemPath(item: inputs.Item) []const u8 {
    return switch (item) {
        .log => |p| p,
        .unreadable => |u| u.path,
    };
}

/// The many-inputs run's line for an input that cannot be read.
fn printFailure(text: []const u8) void {
    var buffer: [4096]u8 = undefined;
    var w = stdio.stderrWriter(&buffer);
    w.interface.print("Error: {s}\n", .{text}) catch {};
    w.interface.flush() catch {};
}

/// The report of one item, or null with the reference's words for why it cannot be read in
/// `failure` (as the many-inputs run words it).
fn triageItem(
    gpa: std.mem.Allocator,
    item: inputs.Item,
    silence: u64,
    failure: *Writer,
) ?engine.Report {
    const path = switch (item) {
        .log => |p| p,
        .unreadable => {
            failure.print("{f}", .{item}) catch {};
            return null;
        },
    };
    const opened = if (platform.isStdin(path))
        open_input.openStdin(null, path, failure)
    else
        open_input.openPath(path, null, failure);
    const in = opened catch return null;
    defer if (in.source == .file) in.source.file.close();
    return engine.triageInput(gpa, &in, silence) catch |e| switch (e) {
        error.FileTooShort, error.BadFileMagic => |header_error| {
            open_input.writeHeaderRefused(failure, cli.inputHead(path), &in, header_error) catch {};
            return null;
        },
        error.OutOfMemory => {
            failure.writeAll("out of memory") catch {};
            return null;
        },
    };
}
