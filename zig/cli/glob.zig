//! `extract-wevt-templates --glob PATTERN`: the paths a pattern matches, as the `glob` crate
//! (0.3, default options) that `evtx_dump` 0.15.1 uses finds them: `?`, `*` (within one
//! component, leading dots included), `[set]`, `[!set]` with `a-z` ranges, and `**` as a
//! whole component (any depth below). The caller sorts the paths, so order is free here;
//! a syntax error is the crate's message with its position in characters.
const std = @import("std");
const assert = std.debug.assert;

/// Characters of one pattern (or one name) that matching looks at; longer never matches.
const chars_max = 4096;
/// Directory levels `**` descends (symbolic-link loops end here).
const depth_max = 64;

const Syntax = struct { pos: usize, msg: []const u8 };

/// The crate's `Pattern::new` checks over the whole pattern.
fn check(pattern: []const u8) ?Syntax {
    var buf: [chars_max]u21 = undefined;
    const chars = decode(pattern, &buf) orelse return null;
    var i: usize = 0;
    while (i < chars.len) {
        switch (chars[i]) {
            '*' => {
                const old = i;
                while (i < chars.len and chars[i] == '*') i += 1;
                const count = i - old;
                if (count > 2) return .{ .pos = old + 2, .msg = wildcards_msg };
                if (count == 2) {
                    if (!(i == 2 or chars[old - 1] == '/'))
                        return .{ .pos = old - 1, .msg = recursive_msg };
                    if (i < chars.len and chars[i] == '/') {
                        i += 1;
                    } else if (i != chars.len) return .{ .pos = i, .msg = recursive_msg };
                }
            },
            '[' => i = range(chars, i) orelse return .{ .pos = i, .msg = "invalid range pattern" },
            else => i += 1,
        }
    }
    return null;
}

const wildcards_msg = "wildcards are either regular `*` or recursive `**`";
const recursive_msg = "recursive wildcards must form a single path component";

/// The index after the `[...]` starting at `i`, or null when it does not close.
fn range(chars: []const u21, i: usize) ?usize {
    assert(chars[i] == '[');
    if (i + 4 <= chars.len and chars[i + 1] == '!') {
        const j = std.mem.indexOfScalar(u21, chars[i + 3 ..], ']') orelse return null;
        return i + j + 4;
    }
    if (i + 3 <= chars.len and chars[i + 1] != '!') {
        const j = std.mem.indexOfScalar(u21, chars[i + 2 ..], ']') orelse return null;
        return i + j + 3;
    }
    return null;
}

fn decode(text: []const u8, buf: *[chars_max]u21) ?[]const u21 {
    const view = std.unicode.Utf8View.init(text) catch return null;
    var it = view.iterator();
    var n: usize = 0;
    while (it.nextCodepoint()) |c| {
        if (n == buf.len) return null;
        buf[n] = c;
        n += 1;
    }
    return buf[0..n];
}

/// Whether `name` matches the component `pattern` (which holds no `/`).
pub fn matches(pattern: []const u8, name: []const u8) bool {
    var pbuf: [chars_max]u21 = undefined;
    var nbuf: [chars_max]u21 = undefined;
    const p = decode(pattern, &pbuf) orelse return false;
    const n = decode(name, &nbuf) orelse return false;
    return matchFrom(p, n);
}

fn matchFrom(p: []const u21, n: []const u21) bool {
    var pi: usize = 0;
    var ni: usize = 0;
    // The last `*` and where its match ends so far: on a mismatch it takes one more.
    var star: ?usize = null;
    var star_n: usize = 0;
    while (ni < n.len or pi < p.len) {
        if (pi < p.len) {
            if (p[pi] == '*') {
                star = pi;
                star_n = ni;
                pi += 1;
                continue;
            }
            if (ni < n.len) {
                if (one(p, pi, n[ni])) |after| {
                    pi = after;
                    ni += 1;
                    continue;
                }
            }
        }
        const s = star orelse return false;
        if (star_n >= n.len) return false;
        star_n += 1;
        pi = s + 1;
        ni = star_n;
    }
    return true;
}

/// Matches one character at `p[pi]` (`?`, `[set]` or itself): the index after it, or null.
fn one(p: []const u21, pi: usize, c: u21) ?usize {
    if (p[pi] == '?') return pi + 1;
    if (p[pi] == '[') {
        const end = range(p, pi) orelse return if (c == '[') pi + 1 else null;
        const negate = p[pi + 1] == '!';
        const set = p[pi + 1 + @intFromBool(negate) .. end - 1];
        return if (inSet(set, c) != negate) end else null;
    }
    return if (p[pi] == c) pi + 1 else null;
}

fn inSet(set: []const u21, c: u21) bool {
    var i: usize = 0;
    while (i < set.len) {
        if (i + 2 < set.len and set[i + 1] == '-') {
            if (set[i] <= c and c <= set[i + 2]) return true;
            i += 3;
        } else {
            if (set[i] == c) return true;
            i += 1;
        }
    }
    return false;
}

fn hasMeta(component: []const u8) bool {
    return std.mem.indexOfAny(u8, component, "?*[") != null;
}

/// Appends the paths `pattern` matches to `out`. A syntax error is written as the reference's
/// `Error:` lines and gives false.
pub fn expand(
    gpa: std.mem.Allocator,
    pattern: []const u8,
    out: *std.ArrayList([]const u8),
    stderr: *std.Io.Writer,
) error{OutOfMemory}!bool {
    if (check(pattern)) |e| {
        stderr.print(
            "Error: invalid glob pattern `{s}`\n\nCaused by:\n" ++
                "    Pattern syntax error near position {d}: {s}\n",
            .{ pattern, e.pos, e.msg },
        ) catch {};
        stderr.flush() catch {};
        return false;
    }
    var components: std.ArrayList([]const u8) = .empty;
    defer components.deinit(gpa);
    var it = std.mem.tokenizeScalar(u8, pattern, '/');
    while (it.next()) |c| try components.append(gpa, c);
    const root: []const u8 = if (pattern.len > 0 and pattern[0] == '/') "/" else ".";
    if (components.items.len == 0) {
        if (eql(root, "/")) try out.append(gpa, root);
        return true;
    }
    const require_dir = pattern[pattern.len - 1] == '/';
    var walk: Walk = .{
        .gpa = gpa,
        .parts = components.items,
        .out = out,
        .require_dir = require_dir,
    };
    try walk.from(root, 0, 0);
    return true;
}

const Walk = struct {
    gpa: std.mem.Allocator,
    parts: []const []const u8,
    out: *std.ArrayList([]const u8),
    require_dir: bool,

    /// Matches `parts[idx..]` below the directory (or `.`) `path`.
    fn from(w: *Walk, path: []const u8, idx: usize, depth: usize) error{OutOfMemory}!void {
        assert(idx < w.parts.len);
        if (depth > depth_max) return;
        const part = w.parts[idx];
        if (!hasMeta(part)) {
            const next = try child(w.gpa, path, part);
            if (eql(part, ".") or eql(part, "..")) {
                if (!isDir(path)) return;
            } else if (!existsNoFollow(next)) return;
            return w.matched(next, idx, depth);
        }
        if (!isDir(path)) return;
        if (eql(part, "**")) return w.recursive(path, idx, depth);
        var dir = std.fs.cwd().openDir(path, .{ .iterate = true }) catch return;
        defer dir.close();
        var entries = dir.iterate();
        while (entries.next() catch null) |entry| {
            if (!matches(part, entry.name)) continue;
            try w.matched(try child(w.gpa, path, entry.name), idx, depth);
        }
    }

    /// `path` matched `parts[idx]`: a result when it was the last part, else go on below it.
    fn matched(w: *Walk, path: []const u8, idx: usize, depth: usize) error{OutOfMemory}!void {
        if (idx + 1 == w.parts.len) {
            if (!w.require_dir or isDir(path)) try w.out.append(w.gpa, path);
            return;
        }
        try w.from(path, idx + 1, depth + 1);
    }

    /// `**` at `parts[idx]`: every entry at any depth below `path`; a last `**` yields the
    /// directories, else each entry's name is matched against the part after it.
    fn recursive(w: *Walk, path: []const u8, idx: usize, depth: usize) error{OutOfMemory}!void {
        if (depth > depth_max) return;
        var dir = std.fs.cwd().openDir(path, .{ .iterate = true }) catch return;
        defer dir.close();
        var entries = dir.iterate();
        while (entries.next() catch null) |entry| {
            const next = try child(w.gpa, path, entry.name);
            const is_dir = isDir(next);
            if (is_dir) try w.recursive(next, idx, depth + 1);
            if (idx + 1 == w.parts.len) {
                if (is_dir) try w.out.append(w.gpa, next);
                continue;
            }
            if (matches(w.parts[idx + 1], entry.name)) try w.matched(next, idx + 1, depth + 1);
        }
    }
};

/// `path.join(name)`, with `.` (the relative scope) dropped as the crate drops it.
fn child(gpa: std.mem.Allocator, path: []const u8, name: []const u8) error{OutOfMemory}![]const u8 {
    // The paths live until the process ends (the run is one command).
    if (eql(path, ".")) return gpa.dupe(u8, name);
    if (path[path.len - 1] == '/') return std.mem.concat(gpa, u8, &.{ path, name });
    return std.mem.concat(gpa, u8, &.{ path, "/", name });
}

fn isDir(path: []const u8) bool {
    const st = std.fs.cwd().statFile(path) catch |e| return e == error.IsDir;
    return st.kind == .directory;
}

fn existsNoFollow(path: []const u8) bool {
    std.fs.cwd().access(path, .{}) catch {
        var buf: [std.fs.max_path_bytes]u8 = undefined;
        _ = std.fs.cwd().readLink(path, &buf) catch return false;
    };
    return true;
}

fn eql(a: []const u8, b: []const u8) bool {
    return std.mem.eql(u8, a, b);
}

test "pattern syntax errors at the glob crate's positions" {
    try std.testing.expectEqual(@as(usize, 4), check("pes/[").?.pos);
    try std.testing.expectEqual(@as(usize, 2), check("***").?.pos);
    try std.testing.expectEqualStrings(recursive_msg, check("a**/b").?.msg);
    try std.testing.expectEqual(@as(usize, 2), check("**b").?.pos);
    try std.testing.expect(check("a/**/b*.[de]ll") == null);
    try std.testing.expect(check("[]]") == null);
}

test "component matching: stars, sets, ranges, negation" {
    try std.testing.expect(matches("*.dll", ".hidden.dll"));
    try std.testing.expect(matches("a*b*c", "aXXbYYc"));
    try std.testing.expect(!matches("a*b*c", "aXXbYY"));
    try std.testing.expect(matches("[a-c]?.sys", "b1.sys"));
    try std.testing.expect(!matches("[!a-c]?.sys", "b1.sys"));
    try std.testing.expect(matches("[]]x", "]x"));
}
