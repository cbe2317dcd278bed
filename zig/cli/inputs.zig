//! Two or more INPUTs (README, "Extensions"): each argument is a log (a path or `-`), or a
//! directory searched for logs; the logs are converted one after the other, in this order.
//! evtx-rs's twin is `rust/cli/src/inputs.rs`, with the same order and words.
//!
//! A directory is searched recursively for files whose names end in `.evtx` in any case;
//! directories found inside are entered, symbolic links to directories are not (a link named
//! `*.evtx` is a log like any other, opened through it). Names that are not UTF-8 are skipped.
//! The logs of one argument come in the byte order of their paths, each the argument joined to
//! the path below it with `/`. A directory that cannot be read is one item of that order, its
//! error.
const std = @import("std");
const evtx = @import("evtx");
const assert = std.debug.assert;
const OsError = evtx.os_error.OsError;
const platform = @import("platform.zig");

/// One log to convert, or a directory that could not be read.
pub const Item = union(enum) {
    log: []const u8,
    unreadable: struct { path: []const u8, err: OsError },

    fn path(item: Item) []const u8 {
        return switch (item) {
            .log => |p| p,
            .unreadable => |u| u.path,
        };
    }

    fn lessThan(_: void, a: Item, b: Item) bool {
        return std.mem.lessThan(u8, a.path(), b.path());
    }

    /// The error of an unreadable directory (after `Error: `), as evtx-rs words it.
    pub fn format(item: Item, w: *std.Io.Writer) std.Io.Writer.Error!void {
        const u = item.unreadable;
        try w.print("Failed to read directory at: {s}\n\nCaused by:\n    {f}", .{ u.path, u.err });
    }
};

/// Directories nested deeper than this are not entered (a bound on the recursion; no real
/// log tree comes near it).
const depth_max = 64;

/// The items of `args`, in argument order, a directory's in path order. Everything is
/// `gpa`'s, kept until the process ends.
pub fn expand(gpa: std.mem.Allocator, args: []const []const u8) error{OutOfMemory}![]Item {
    var items: std.ArrayList(Item) = .empty;
    for (args) |arg| {
        const st = std.fs.cwd().statFile(arg) catch null;
        if (st == null or st.?.kind != .directory) {
            try items.append(gpa, .{ .log = arg });
            continue;
        }
        const first = items.items.len;
        try search(gpa, arg, &items, 0);
        std.mem.sort(Item, items.items[first..], {}, Item.lessThan);
    }
    return items.toOwnedSlice(gpa);
}

/// Adds the logs below `dir` to `items` (unsorted), and each directory that cannot be read.
fn search(
    gpa: std.mem.Allocator,
    dir_path: []const u8,
    items: *std.ArrayList(Item),
    depth: usize,
) error{OutOfMemory}!void {
    if (depth == depth_max) return;
    var dir = std.fs.cwd().openDir(dir_path, .{ .iterate = true }) catch |e|
        return unreadable(gpa, items, dir_path, e);
    defer dir.close();
    var it = dir.iterate();
    while (it.next() catch |e| return unreadable(gpa, items, dir_path, e)) |entry| {
        if (!std.unicode.utf8ValidateSlice(entry.name)) continue;
        const joined = try join(gpa, dir_path, entry.name);
        if (entry.kind == .directory) {
            try search(gpa, joined, items, depth + 1);
        } else if (isLogName(entry.name)) {
            try items.append(gpa, .{ .log = joined });
        }
    }
}

fn unreadable(
    gpa: std.mem.Allocator,
    items: *std.ArrayList(Item),
    dir_path: []const u8,
    e: anyerror,
) error{OutOfMemory}!void {
    @branchHint(.cold);
    try items.append(gpa, .{ .unreadable = .{ .path = dir_path, .err = OsError.orIo(e) } });
}

/// `dir/name`, without a second `/` when `dir` ends with one.
fn join(gpa: std.mem.Allocator, dir: []const u8, name: []const u8) error{OutOfMemory}![]u8 {
    const slash = if (std.mem.endsWith(u8, dir, "/")) "" else "/";
    return std.fmt.allocPrint(gpa, "{s}{s}{s}", .{ dir, slash, name });
}

/// Whether a file name ends in `.evtx`, in any case.
fn isLogName(name: []const u8) bool {
    return name.len > 5 and std.ascii.eqlIgnoreCase(name[name.len - 5 ..], ".evtx");
}

/// Whether `item` is the file at `output` (the same file through any path or link): the
/// input is evidence, never overwritten. Standard input is the file it is redirected from.
pub fn isOutput(item: Item, output: []const u8, is_stdin: bool) bool {
    const path = switch (item) {
        .log => |p| p,
        .unreadable => return false,
    };
    const in = if (is_stdin)
        platform.identityOf(std.fs.File.stdin())
    else
        platform.identityAt(path);
    const out = platform.identityAt(output) orelse return false;
    return (in orelse return false).eql(out);
}

test "log names in any case" {
    try std.testing.expect(isLogName("a.evtx") and isLogName("B.EVTX") and isLogName("c.EvTx"));
    try std.testing.expect(!isLogName(".evtx") and !isLogName("a.evt") and !isLogName("a.evtx.gz"));
}

test "directories searched in path order" {
    var arena = std.heap.ArenaAllocator.init(std.testing.allocator);
    defer arena.deinit();
    const gpa = arena.allocator();
    var tmp = std.testing.tmpDir(.{});
    defer tmp.cleanup();
    for ([_][]const u8{ "a/b", "c.evtx" }) |sub| try tmp.dir.makePath(sub);
    for ([_][]const u8{ "z.EVTX", "a.evtx", "a/b/x.evtx", "a/y.txt", "c.evtx/in.evtx" }) |f| {
        try tmp.dir.writeFile(.{ .sub_path = f, .data = "" });
    }
    try tmp.dir.symLink("a", "link.evtx", .{ .is_directory = true });
    var buffer: [std.fs.max_path_bytes]u8 = undefined;
    const real = try tmp.dir.realpath(".", &buffer);
    const root = try std.fmt.allocPrint(gpa, "{s}/", .{real});
    const got = try expand(gpa, &.{ root, "-" });
    const want = [_][]const u8{ "a.evtx", "a/b/x.evtx", "c.evtx/in.evtx", "link.evtx", "z.EVTX" };
    try std.testing.expectEqual(want.len + 1, got.len);
    for (want, got[0..want.len]) |w, g| {
        const path = try std.fmt.allocPrint(gpa, "{s}{s}", .{ root, w });
        try std.testing.expectEqualStrings(path, g.log);
    }
    try std.testing.expectEqualStrings("-", got[want.len].log);
}
