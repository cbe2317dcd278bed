//! `evtx-zig extract-wevt-templates`: every `WEVT_TEMPLATE` resource of the given PE files
//! into one `.wevtcache` (`wevt_cache.zig`), as `evtx_dump` 0.15.1 does it: inputs from `-i`
//! (files, or directories walked with `-r` keeping `--extensions`) and `--glob`, sorted by
//! path components, each read whole; a file that cannot be read or parsed is one stderr line
//! and the run goes on; the count of such files makes the exit status 1 at the end.
const std = @import("std");
const evtx = @import("evtx");
const limits = evtx.limits;
const pe = evtx.pe;
const wevt_cache = evtx.wevt_cache;
const OsError = evtx.os_error.OsError;
const glob = @import("glob.zig");
const arg_parser = @import("args.zig");
const commands = @import("commands.zig");
const assert = std.debug.assert;

pub const Options = struct {
    inputs: []const []const u8 = &.{},
    globs: []const []const u8 = &.{},
    recursive: bool = false,
    extensions: []const u8 = "exe,dll,sys",
    output: []const u8 = "",
    overwrite: bool = false,
};

/// What the stderr lines and the status need: the printer of `Error: ...` lines is the
/// caller's (`cli.zig`), these are the reference's words.
pub const Report = struct {
    stderr: *std.Io.Writer,
};

/// Runs the command; returns the exit status (0, or 1 after `Error: ...`).
pub fn run(gpa: std.mem.Allocator, options: *const Options, report: Report) u8 {
    return runOrFail(gpa, options, report) catch |e| switch (e) {
        error.Reported => 1,
        error.OutOfMemory => fatalLine(report, "out of memory", .{}),
    };
}

const RunError = error{ Reported, OutOfMemory };

fn runOrFail(gpa: std.mem.Allocator, options: *const Options, report: Report) RunError!u8 {
    if (!eql(extension(options.output) orelse "", "wevtcache"))
        return fatal(report, "output must have `.wevtcache` extension", .{});
    var paths: std.ArrayList([]const u8) = .empty;
    defer paths.deinit(gpa);
    try paths.appendSlice(gpa, options.inputs);
    for (options.globs) |pattern|
        if (!try glob.expand(gpa, pattern, &paths, report.stderr)) return error.Reported;
    if (paths.items.len == 0)
        return fatal(report, "No inputs provided. Use --input and/or --glob.", .{});
    var files: std.ArrayList([]const u8) = .empty;
    defer files.deinit(gpa);
    for (paths.items) |path| try collect(gpa, path, options, &files, report);
    std.mem.sort([]const u8, files.items, {}, pathLessThan);
    dedupe(&files);
    return write(gpa, files.items, options, report);
}

/// Writes the cache from `files`, one stderr line per file that gives no blobs.
fn write(
    gpa: std.mem.Allocator,
    files: []const []const u8,
    options: *const Options,
    report: Report,
) RunError!u8 {
    const output = options.output;
    if (!options.overwrite and exists(output))
        return fatal(
            report,
            "refusing to overwrite existing output file `{s}` (pass overwrite=true)",
            .{output},
        );
    const file = std.fs.cwd().createFile(output, .{}) catch |e|
        return ioFatal(report, "create", output, e);
    defer file.close();
    var buffer: [1 << 16]u8 = undefined;
    var writer = wevt_cache.Writer.init(file, &buffer) catch
        return ioFatal(report, "write header", output, error.InputOutput);
    var errors: usize = 0;
    var blobs: std.ArrayList([]const u8) = .empty;
    defer blobs.deinit(gpa);
    for (files) |path| {
        const bytes = std.fs.cwd().readFileAlloc(gpa, path, limits.whole_file_bytes_max) catch |e| {
            if (e == error.OutOfMemory) return error.OutOfMemory;
            errors += 1;
            line(report, "failed to read `{s}`: {f}", .{ path, OsError.orIo(e) });
            continue;
        };
        defer gpa.free(bytes);
        blobs.clearRetainingCapacity();
        var failure: pe.Failure = undefined;
        pe.wevtTemplates(gpa, bytes, &blobs, &failure) catch |e| switch (e) {
            error.OutOfMemory => return error.OutOfMemory,
            error.Fault => {
                // The reference's `failed to extract WEVT_TEMPLATE from ...` line, with the
                // offset (shared-fixtures/README.md, "Damaged side files"); the next file goes on.
                errors += 1;
                const damage = failure.readerError();
                damage.writeLine(report.stderr, path) catch {};
                report.stderr.flush() catch {};
                continue;
            },
        };
        for (blobs.items) |b| writer.add(b) catch
            return ioFatal(report, "write entry payload", output, error.InputOutput);
    }
    const written = writer.finish() catch
        return ioFatal(report, "write entry_count", output, error.InputOutput);
    if (errors > 0) return fatal(
        report,
        "extract-wevt-templates completed with {d} error(s)",
        .{errors},
    );
    line(report, "wrote {d} resource blob(s) to `{s}`", .{ written, output });
    return 0;
}

/// One input: a file is kept whatever its extension; a directory is walked (breadth first)
/// only with `-r`, keeping files with an allowed extension; a missing path is skipped.
fn collect(
    gpa: std.mem.Allocator,
    path: []const u8,
    options: *const Options,
    files: *std.ArrayList([]const u8),
    report: Report,
) RunError!void {
    const kind = statKind(path) orelse return;
    if (kind == .file) return keep(gpa, files, path, report);
    if (kind != .directory or !options.recursive) return;
    var queue: std.ArrayList([]const u8) = .empty;
    defer queue.deinit(gpa);
    try queue.append(gpa, path);
    var next: usize = 0;
    while (next < queue.items.len) : (next += 1) {
        const dir_path = queue.items[next];
        var dir = std.fs.cwd().openDir(dir_path, .{ .iterate = true }) catch |e|
            return readDirFatal(report, dir_path, e);
        defer dir.close();
        var it = dir.iterate();
        while (it.next() catch |e| return readDirFatal(report, dir_path, e)) |entry| {
            const child = try join(gpa, dir_path, entry.name);
            switch (statKind(child) orelse continue) {
                .directory => try queue.append(gpa, child),
                .file => if (allowed(
                    options.extensions,
                    child,
                )) try keep(gpa, files, child, report),
                else => {},
            }
        }
    }
}

fn keep(
    gpa: std.mem.Allocator,
    files: *std.ArrayList([]const u8),
    path: []const u8,
    report: Report,
) RunError!void {
    if (files.items.len >= limits.input_files_max)
        return fatal(report, "more than {d} input files", .{limits.input_files_max});
    try files.append(gpa, path);
}

/// `dir.join(name)` as Rust's `PathBuf::push` spells it (no second separator).
fn join(gpa: std.mem.Allocator, dir: []const u8, name: []const u8) error{OutOfMemory}![]const u8 {
    // The joined paths live until the process ends (the run is one command).
    if (dir.len > 0 and dir[dir.len - 1] == '/') return std.mem.concat(gpa, u8, &.{ dir, name });
    return std.mem.concat(gpa, u8, &.{ dir, "/", name });
}

/// What `path` is, following symbolic links; null when it does not exist.
fn statKind(path: []const u8) ?std.fs.File.Kind {
    const st = std.fs.cwd().statFile(path) catch |e| switch (e) {
        // `statFile` opens the path: a directory gives its own answer on some systems.
        error.IsDir => return .directory,
        else => return null,
    };
    return st.kind;
}

fn exists(path: []const u8) bool {
    return statKind(path) != null;
}

/// Whether `path`'s extension (Rust's `Path::extension`) is in the comma-separated list
/// (each trimmed, leading dots dropped, ASCII case ignored; empty items ignored).
fn allowed(list: []const u8, path: []const u8) bool {
    const ext = extension(path) orelse return false;
    var it = std.mem.splitScalar(u8, list, ',');
    while (it.next()) |item| {
        const trimmed = std.mem.trimLeft(u8, std.mem.trim(u8, item, " \t\r\n\x0b\x0c"), ".");
        if (trimmed.len > 0 and std.ascii.eqlIgnoreCase(trimmed, ext)) return true;
    }
    return false;
}

/// Rust's `Path::extension`: after the last `.` of the file name, unless the name is `..` or
/// its only dot leads it.
pub fn extension(path: []const u8) ?[]const u8 {
    const name = fileName(path) orelse return null;
    if (eql(name, "..")) return null;
    const dot = std.mem.lastIndexOfScalar(u8, name, '.') orelse return null;
    if (dot == 0) return null;
    return name[dot + 1 ..];
}

/// The last normal component (trailing separators and `.` components ignored).
fn fileName(path: []const u8) ?[]const u8 {
    var it = std.mem.splitBackwardsScalar(u8, path, '/');
    while (it.next()) |c| {
        if (c.len == 0 or eql(c, ".")) continue;
        return c;
    }
    return null;
}

/// Rust's `Path` order: component by component (root, `.` first, `..`, then names bytewise).
fn pathLessThan(_: void, a: []const u8, b: []const u8) bool {
    return comparePaths(a, b) == .lt;
}

const Components = struct {
    path: []const u8,
    at: usize = 0,
    first: bool = true,

    /// The next component: 0 root, 1 `.` (leading only), 2 `..`, 3 a name (in `name`).
    fn next(c: *Components, name: *[]const u8) ?u2 {
        if (c.first) {
            c.first = false;
            if (c.path.len > 0 and c.path[0] == '/') return 0;
            if (eql(c.path, ".") or std.mem.startsWith(u8, c.path, "./")) {
                c.at = 1;
                return 1;
            }
        }
        while (c.at < c.path.len) {
            const start = c.at;
            const end = std.mem.indexOfScalarPos(u8, c.path, start, '/') orelse c.path.len;
            c.at = end + 1;
            const part = c.path[start..end];
            if (part.len == 0 or eql(part, ".")) continue;
            if (eql(part, "..")) return 2;
            name.* = part;
            return 3;
        }
        return null;
    }
};

fn comparePaths(a: []const u8, b: []const u8) std.math.Order {
    var ca: Components = .{ .path = a };
    var cb: Components = .{ .path = b };
    while (true) {
        var na: []const u8 = "";
        var nb: []const u8 = "";
        const ka = ca.next(&na);
        const kb = cb.next(&nb);
        if (ka == null or kb == null) {
            if (ka == null and kb == null) return .eq;
            return if (ka == null) .lt else .gt;
        }
        if (ka.? != kb.?) return std.math.order(ka.?, kb.?);
        const order = std.mem.order(u8, na, nb);
        if (order != .eq) return order;
    }
}

/// Drops the later of paths equal by components (the reference's `seen` set; sorted input).
fn dedupe(files: *std.ArrayList([]const u8)) void {
    if (files.items.len == 0) return;
    var kept: usize = 1;
    for (files.items[1..]) |path| {
        if (comparePaths(files.items[kept - 1], path) == .eq) continue;
        files.items[kept] = path;
        kept += 1;
    }
    assert(kept <= files.items.len);
    files.shrinkRetainingCapacity(kept);
}

fn line(report: Report, comptime fmt: []const u8, args: anytype) void {
    report.stderr.print(fmt ++ "\n", args) catch {};
    report.stderr.flush() catch {};
}

fn fatal(report: Report, comptime fmt: []const u8, args: anytype) error{Reported} {
    line(report, "Error: " ++ fmt, args);
    return error.Reported;
}

fn fatalLine(report: Report, comptime fmt: []const u8, args: anytype) u8 {
    _ = fatal(report, fmt, args) catch {};
    return 1;
}

/// anyhow's layout of an I/O error with its source: the message, then `Caused by:`.
fn ioFatal(
    report: Report,
    comptime action: []const u8,
    path: []const u8,
    e: anyerror,
) error{Reported} {
    const os = OsError.orIo(e);
    return fatal(
        report,
        "I/O error while " ++ action ++ " `{s}`: {f}\n\nCaused by:\n    {f}",
        .{ path, os, os },
    );
}

fn readDirFatal(report: Report, path: []const u8, e: anyerror) error{Reported} {
    return fatal(
        report,
        "failed to read directory `{s}`\n\nCaused by:\n    {f}",
        .{ path, OsError.orIo(e) },
    );
}

fn eql(a: []const u8, b: []const u8) bool {
    return std.mem.eql(u8, a, b);
}

test {
    _ = glob;
}

test "paths sort by components as Rust's Path does, not bytewise" {
    // Bytewise `a-b` < `a/b`; by components `a` < `a-b`.
    try std.testing.expectEqual(std.math.Order.lt, comparePaths("a/b", "a-b"));
    try std.testing.expectEqual(std.math.Order.eq, comparePaths("a//b/", "a/b"));
    try std.testing.expectEqual(std.math.Order.lt, comparePaths("/z", "a"));
    try std.testing.expectEqual(std.math.Order.lt, comparePaths("./z", "a"));
}

test "extensions as Path::extension reads them and the reference filters them" {
    try std.testing.expectEqualStrings("wevtcache", extension("out/x.wevtcache").?);
    try std.testing.expect(extension(".wevtcache") == null);
    try std.testing.expect(extension("dir/..") == null);
    try std.testing.expectEqualStrings("", extension("a.").?);
    try std.testing.expect(allowed(" EXE,.Dll", "x/y.dll"));
    try std.testing.expect(!allowed("exe,,", "x/y.sys"));
}

/// The options out of the parsed command line (`commands.extract_wevt_templates`); the lists
/// are `gpa`'s, kept until the process ends.
pub fn optionsOf(gpa: std.mem.Allocator, m: *const arg_parser.Matches) error{OutOfMemory}!Options {
    const c = &commands.extract_wevt_templates;
    assert(m.command == c);
    return .{
        .inputs = try m.texts(gpa, c.id("input")),
        .globs = try m.texts(gpa, c.id("glob")),
        .recursive = m.has(c.id("recursive")),
        .extensions = m.text(c.id("extensions")) orelse "exe,dll,sys",
        .output = m.text(c.id("output")).?,
        .overwrite = m.has(c.id("overwrite")),
    };
}
