//! The System fields of rendered JSON records, as columns: `evtx_parser_batch_system`.
//! The twin of rust/evtx-abi/src/system.rs (same rules, same results for the same bytes): one
//! forward scan per record walks `Event` -> `System` and stops there.
//!
//! What a field holds (as `json.loads(text)["Event"]["System"]` would give):
//! provider `Provider.#attributes.Name` (or `Provider_attributes.Name`), a string; event_id
//! `EventID` or `EventID.#text`, a non-negative integer (or a string of ASCII digits) up to
//! maxInt(u32); level `Level`, the same up to 255; channel `Channel` and computer `Computer`,
//! strings. Anything else leaves the field absent. Strings are JSON-unescaped; an escaped lone
//! surrogate becomes U+FFFD.
const std = @import("std");

pub const PROVIDER: u8 = 1;
pub const EVENT_ID: u8 = 2;
pub const LEVEL: u8 = 4;
pub const CHANNEL: u8 = 8;
pub const COMPUTER: u8 = 16;

/// The fields found in one record, strings still escaped.
pub const Found = struct {
    provider: ?[]const u8 = null,
    event_id: ?u32 = null,
    level: ?u8 = null,
    channel: ?[]const u8 = null,
    computer: ?[]const u8 = null,
};

/// One string column: values back to back and `count + 1` offsets starting at 0.
pub const Strings = struct {
    data: std.ArrayList(u8) = .empty,
    offsets: std.ArrayList(u64) = .empty,

    fn deinit(s: *Strings, gpa: std.mem.Allocator) void {
        s.data.deinit(gpa);
        s.offsets.deinit(gpa);
    }

    fn clear(s: *Strings, gpa: std.mem.Allocator) error{OutOfMemory}!void {
        s.data.clearRetainingCapacity();
        s.offsets.clearRetainingCapacity();
        try s.offsets.append(gpa, 0);
    }

    fn push(s: *Strings, gpa: std.mem.Allocator, raw: ?[]const u8) error{OutOfMemory}!void {
        if (raw) |r| try unescapeInto(gpa, r, &s.data);
        try s.offsets.append(gpa, s.data.items.len);
    }
};

/// The storage behind `evtx_batch_system`. Invariant: one value per entry in every column
/// (the string offsets one more).
pub const Columns = struct {
    provider: Strings = .{},
    channel: Strings = .{},
    computer: Strings = .{},
    event_ids: std.ArrayList(u32) = .empty,
    levels: std.ArrayList(u8) = .empty,
    present: std.ArrayList(u8) = .empty,

    pub fn deinit(c: *Columns, gpa: std.mem.Allocator) void {
        c.provider.deinit(gpa);
        c.channel.deinit(gpa);
        c.computer.deinit(gpa);
        c.event_ids.deinit(gpa);
        c.levels.deinit(gpa);
        c.present.deinit(gpa);
    }

    pub fn clear(c: *Columns, gpa: std.mem.Allocator) error{OutOfMemory}!void {
        try c.provider.clear(gpa);
        try c.channel.clear(gpa);
        try c.computer.clear(gpa);
        c.event_ids.clearRetainingCapacity();
        c.levels.clearRetainingCapacity();
        c.present.clearRetainingCapacity();
    }

    /// Appends one entry: `text` is a record's rendered JSON, null for an error entry.
    pub fn push(c: *Columns, gpa: std.mem.Allocator, text: ?[]const u8) error{OutOfMemory}!void {
        const found: Found = if (text) |t| scan(t) else .{};
        var present: u8 = 0;
        if (found.provider != null) present |= PROVIDER;
        if (found.event_id != null) present |= EVENT_ID;
        if (found.level != null) present |= LEVEL;
        if (found.channel != null) present |= CHANNEL;
        if (found.computer != null) present |= COMPUTER;
        try c.provider.push(gpa, found.provider);
        try c.channel.push(gpa, found.channel);
        try c.computer.push(gpa, found.computer);
        try c.event_ids.append(gpa, found.event_id orelse 0);
        try c.levels.append(gpa, found.level orelse 0);
        try c.present.append(gpa, present);
        std.debug.assert(c.present.items.len + 1 == c.computer.offsets.items.len);
    }

    pub fn len(c: *const Columns) usize {
        return c.present.items.len;
    }
};

/// Reads JSON text forward. Every function returns null on text that is not JSON.
const Scanner = struct {
    text: []const u8,
    at: usize,

    fn peek(s: *Scanner) ?u8 {
        while (s.at < s.text.len) : (s.at += 1) {
            switch (s.text[s.at]) {
                ' ', '\t', '\r', '\n' => {},
                else => |b| return b,
            }
        }
        return null;
    }

    fn eat(s: *Scanner, byte: u8) ?void {
        if (s.peek() != byte) return null;
        s.at += 1;
    }

    /// A string's raw body, between its quotes. Only `"` and `\\` matter inside, so the
    /// plain bytes between them are skipped by `indexOfQuoteOrEscape` (a byte loop cost most
    /// of the scan).
    fn string(s: *Scanner) ?[]const u8 {
        s.eat('"') orelse return null;
        const start = s.at;
        while (s.at <= s.text.len) {
            const at = indexOfQuoteOrEscape(s.text, s.at) orelse return null;
            if (s.text[at] == '"') {
                s.at = at + 1;
                return s.text[start..at];
            }
            // An escape: its next byte is never the string's end.
            s.at = at + 2;
        }
        return null;
    }

    fn stringValue(s: *Scanner) ?[]const u8 {
        if (s.peek() == '"') return s.string();
        _ = s.skipValue();
        return null;
    }

    /// A non-negative integer, as a JSON number or a string of ASCII digits.
    fn integer(s: *Scanner) ?u64 {
        const digits = if (s.peek() == '"') s.string() orelse return null else blk: {
            const start = s.at;
            s.skipValue() orelse return null;
            break :blk s.text[start..s.at];
        };
        if (digits.len == 0 or digits.len > 19) return null;
        var n: u64 = 0;
        for (digits) |d| {
            if (!std.ascii.isDigit(d)) return null;
            n = n * 10 + (d - '0');
        }
        return n;
    }

    fn skipValue(s: *Scanner) ?void {
        var depth: usize = 0;
        while (true) {
            switch (s.peek() orelse return null) {
                '"' => _ = s.string() orelse return null,
                '{', '[' => {
                    s.at += 1;
                    depth += 1;
                    continue;
                },
                '}', ']' => {
                    if (depth == 0) return null;
                    depth -= 1;
                    s.at += 1;
                },
                ',', ':' => {
                    if (depth == 0) return null;
                    s.at += 1;
                    continue;
                },
                else => while (s.at < s.text.len) : (s.at += 1) {
                    switch (s.text[s.at]) {
                        ',', '}', ']', ':', '"', ' ', '\t', '\r', '\n' => break,
                        else => {},
                    }
                },
            }
            if (depth == 0) return;
        }
    }

    /// Opens an object: true when it has members (the scanner is at the first key).
    fn open(s: *Scanner) ?bool {
        s.eat('{') orelse return null;
        if ((s.peek() orelse return null) == '}') {
            s.at += 1;
            return false;
        }
        return true;
    }

    /// The next key of an open object, or null at its end (consumed) or on bad text.
    fn key(s: *Scanner, first: bool) ?[]const u8 {
        if (!first) {
            switch (s.peek() orelse return null) {
                ',' => s.at += 1,
                '}' => {
                    s.at += 1;
                    return null;
                },
                else => return null,
            }
        }
        const k = s.string() orelse return null;
        s.eat(':') orelse return null;
        return k;
    }

    /// Moves to the value of member `name` of the object here; false (the object skipped
    /// or bad) when it has none. Takes the first such member: record JSON has no duplicates.
    fn member(s: *Scanner, name: []const u8) bool {
        if (s.peek() != '{') {
            _ = s.skipValue();
            return false;
        }
        var first = (s.open() orelse return false);
        if (!first) return false;
        while (s.key(first)) |k| : (first = false) {
            if (std.mem.eql(u8, k, name)) return true;
            s.skipValue() orelse return false;
        }
        return false;
    }
};

/// The first `"` or `\\` in `text` at or after `from` (the Rust twin's `memchr2`): 16 bytes
/// a step, then the tail byte by byte.
fn indexOfQuoteOrEscape(text: []const u8, from: usize) ?usize {
    const lanes = 16;
    const V = @Vector(lanes, u8);
    var i = from;
    while (i + lanes <= text.len) : (i += lanes) {
        const chunk: V = text[i..][0..lanes].*;
        const quote: u16 = @bitCast(chunk == @as(V, @splat('"')));
        const escape: u16 = @bitCast(chunk == @as(V, @splat('\\')));
        const hits = quote | escape;
        if (hits != 0) return i + @ctz(hits);
    }
    while (i < text.len) : (i += 1) {
        if (text[i] == '"' or text[i] == '\\') return i;
    }
    return null;
}

/// The System fields of one rendered JSON record (`-o json` with its banner, or `jsonl`).
pub fn scan(text: []const u8) Found {
    var found: Found = .{};
    const start = std.mem.indexOfScalar(u8, text, '{') orelse return found;
    var s: Scanner = .{ .text = text, .at = start };
    if (!s.member("Event")) return found;
    if (!s.member("System")) return found;
    var first = (s.open() orelse return found);
    if (!first) return found;
    while (s.key(first)) |k| : (first = false) {
        systemMember(&s, k, &found) orelse return found;
    }
    return found;
}

fn systemMember(s: *Scanner, k: []const u8, found: *Found) ?void {
    const eql = std.mem.eql;
    if (eql(u8, k, "Provider") or eql(u8, k, "Provider_attributes") or eql(u8, k, "EventID")) {
        // Nested values: walk in, take the field, then skip the whole value from its start.
        _ = s.peek();
        const start = s.at;
        if (eql(u8, k, "Provider")) {
            if (s.member("#attributes") and s.member("Name")) found.provider = s.stringValue();
        } else if (eql(u8, k, "Provider_attributes")) {
            if (s.member("Name")) found.provider = s.stringValue();
        } else if (s.peek() == '{') {
            found.event_id = if (s.member("#text")) castInteger(u32, s.integer()) else null;
        } else {
            found.event_id = castInteger(u32, s.integer());
            return;
        }
        s.at = start;
        return s.skipValue();
    } else if (eql(u8, k, "Level")) {
        found.level = castInteger(u8, s.integer());
    } else if (eql(u8, k, "Channel")) {
        found.channel = s.stringValue();
    } else if (eql(u8, k, "Computer")) {
        found.computer = s.stringValue();
    } else {
        return s.skipValue();
    }
}

/// `value` when it fits `T`. A value that is not an integer is absent, not an error: the scan
/// goes on with the next member, as the Rust twin does.
fn castInteger(comptime T: type, value: ?u64) ?T {
    return std.math.cast(T, value orelse return null);
}

/// Appends the JSON string body `raw`, unescaped, to `out` as UTF-8.
fn unescapeInto(
    gpa: std.mem.Allocator,
    raw: []const u8,
    out: *std.ArrayList(u8),
) error{OutOfMemory}!void {
    if (std.mem.indexOfScalar(u8, raw, '\\') == null) return out.appendSlice(gpa, raw);
    var i: usize = 0;
    while (i < raw.len) {
        const b = raw[i];
        if (b != '\\' or i + 1 >= raw.len) {
            try out.append(gpa, b);
            i += 1;
            continue;
        }
        const simple: ?u8 = switch (raw[i + 1]) {
            'n' => '\n',
            't' => '\t',
            'r' => '\r',
            'b' => 0x08,
            'f' => 0x0c,
            'u' => null,
            else => |other| other,
        };
        if (simple) |byte| {
            try out.append(gpa, byte);
            i += 2;
            continue;
        }
        const unit = hex4(raw, i + 2);
        i += 6;
        var code: u21 = 0xFFFD;
        if (unit) |u| {
            if (u >= 0xD800 and u <= 0xDBFF) {
                if (i + 2 <= raw.len and raw[i] == '\\' and raw[i + 1] == 'u') {
                    if (hex4(raw, i + 2)) |low| if (low >= 0xDC00 and low <= 0xDFFF) {
                        i += 6;
                        code = @intCast(0x10000 + ((@as(u32, u) - 0xD800) << 10) + (low - 0xDC00));
                    };
                }
            } else if (u < 0xDC00 or u > 0xDFFF) {
                code = @intCast(u);
            }
        }
        var buf: [4]u8 = undefined;
        const n = std.unicode.utf8Encode(code, &buf) catch unreachable;
        try out.appendSlice(gpa, buf[0..n]);
    }
}

fn hex4(raw: []const u8, at: usize) ?u16 {
    if (at + 4 > raw.len) return null;
    return std.fmt.parseInt(u16, raw[at .. at + 4], 16) catch null;
}

test "scan: a plain record" {
    const text =
        \\{"Event":{"#attributes":{"xmlns":"x"},"System":{"Provider":{"#attributes":
    ++
        \\{"Name":"Microsoft-Windows-Security-Auditing","Guid":"{5}"}},"EventID":4624,
    ++
        \\"Level":0,"Channel":"Security","Computer":"DC01"},"EventData":{"A":"}"}}}
    ;
    const f = scan(text);
    try std.testing.expectEqualStrings("Microsoft-Windows-Security-Auditing", f.provider.?);
    try std.testing.expectEqual(@as(?u32, 4624), f.event_id);
    try std.testing.expectEqual(@as(?u8, 0), f.level);
    try std.testing.expectEqualStrings("Security", f.channel.?);
    try std.testing.expectEqualStrings("DC01", f.computer.?);
}

test "scan: qualified event id, banner, odd values, escapes" {
    const text = "Record 7\n{\"Event\":{\"System\":{\"EventID\":{\"#attributes\":{\"Qualifier" ++
        "s\":16384},\"#text\":7036},\"Level\":\"4\",\"Channel\":null," ++
        "\"Computer\":\"a\\\"b\\u00e9\\ud83d\\ude00\\udc00\"}}}\n";
    const f = scan(text);
    try std.testing.expectEqual(@as(?u32, 7036), f.event_id);
    try std.testing.expectEqual(@as(?u8, 4), f.level);
    try std.testing.expect(f.channel == null and f.provider == null);
    var out: std.ArrayList(u8) = .empty;
    defer out.deinit(std.testing.allocator);
    try unescapeInto(std.testing.allocator, f.computer.?, &out);
    try std.testing.expectEqualStrings("a\"b\u{e9}\u{1F600}\u{FFFD}", out.items);
}

test "scan: out of range and malformed" {
    const f = scan(
        \\{"Event":{"System":{"EventID":4294967296,"Level":256,"Provider_attributes":{"Name":"P"}}}}
    );
    try std.testing.expect(f.event_id == null and f.level == null);
    try std.testing.expectEqualStrings("P", f.provider.?);
    try std.testing.expectEqual(Found{}, scan(
        \\{"Event":{"System":{"EventID":-1,"Level":1.5}}}
    ));
    try std.testing.expectEqual(Found{}, scan("{\"Event\":{\"System\":{\"Computer\":\"cut"));
    try std.testing.expectEqual(Found{}, scan("<Event/>"));
    try std.testing.expectEqual(Found{}, scan(""));
}

test "Columns: one value per entry, errors absent" {
    var c: Columns = .{};
    defer c.deinit(std.testing.allocator);
    try c.clear(std.testing.allocator);
    try c.push(std.testing.allocator, "{\"Event\":{\"System\":{\"Computer\":\"h\",\"Level\":2}}}");
    try c.push(std.testing.allocator, null);
    try std.testing.expectEqual(@as(usize, 2), c.len());
    try std.testing.expectEqualSlices(u8, &.{ COMPUTER | LEVEL, 0 }, c.present.items);
    try std.testing.expectEqualSlices(u64, &.{ 0, 0, 0 }, c.provider.offsets.items);
    try std.testing.expectEqualSlices(u64, &.{ 0, 1, 1 }, c.computer.offsets.items);
}

test "scan: an escaped quote at every place around the 16-byte steps" {
    // "Computer":"xx...x\"y" with the escape at 0..40: the body is everything between the
    // quotes, the escape included, whatever lane the `\` or the closing `"` falls on.
    var buf: [128]u8 = undefined;
    for (0..40) |n| {
        const head = "{\"Event\":{\"System\":{\"Computer\":\"";
        var w: std.Io.Writer = .fixed(&buf);
        try w.writeAll(head);
        try w.splatByteAll('x', n);
        try w.writeAll("\\\"y\",\"Level\":3}}}");
        const f = scan(w.buffered());
        const body = f.computer.?;
        try std.testing.expectEqual(n + 3, body.len);
        try std.testing.expectEqualStrings("\\\"y", body[n..]);
        try std.testing.expectEqual(@as(?u8, 3), f.level);
        // Cut inside the escape or before the closing quote: no field.
        try std.testing.expectEqual(Found{}, scan(w.buffered()[0 .. head.len + n + 1]));
        try std.testing.expectEqual(Found{}, scan(w.buffered()[0 .. head.len + n + 3]));
    }
}
