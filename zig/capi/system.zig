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
    /// The PROVIDER, CHANNEL, COMPUTER bits of the strings that hold a `\\` (the others are
    /// copied without an unescaping pass).
    escapes: u8 = 0,

    /// Sets the string field `flag` (PROVIDER, CHANNEL or COMPUTER) to `value`.
    inline fn set(f: *Found, comptime flag: u8, value: ?Text) void {
        const field = switch (flag) {
            PROVIDER => &f.provider,
            CHANNEL => &f.channel,
            COMPUTER => &f.computer,
            else => @compileError("not a string field"),
        };
        field.* = if (value) |v| v.raw else null;
        const escaped = if (value) |v| v.escaped else false;
        f.escapes = (f.escapes & ~flag) | (if (escaped) flag else 0);
    }
};

/// A string value's raw body and whether it holds an escape.
const Text = struct { raw: []const u8, escaped: bool };

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

    /// `escaped`: the body has a `\\` (else it is copied as it is).
    fn push(
        s: *Strings,
        gpa: std.mem.Allocator,
        raw: ?[]const u8,
        escaped: bool,
    ) error{OutOfMemory}!void {
        if (raw) |r| {
            if (escaped) try unescapeInto(gpa, r, &s.data) else try s.data.appendSlice(gpa, r);
        }
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
        try c.provider.push(gpa, found.provider, found.escapes & PROVIDER != 0);
        try c.channel.push(gpa, found.channel, found.escapes & CHANNEL != 0);
        try c.computer.push(gpa, found.computer, found.escapes & COMPUTER != 0);
        try c.event_ids.append(gpa, found.event_id orelse 0);
        try c.levels.append(gpa, found.level orelse 0);
        try c.present.append(gpa, present);
        std.debug.assert(c.present.items.len + 1 == c.computer.offsets.items.len);
    }

    pub fn len(c: *const Columns) usize {
        return c.present.items.len;
    }
};

/// Reads JSON text forward, one pass, no callbacks (PERF.md P9: the member-by-member walk
/// cost more than the engine's copy-out). Every function returns null on text that is not
/// JSON; what it read before stays read.
const Scanner = struct {
    text: []const u8,
    at: usize,
    /// A string read since `stringValue` cleared it had an escape.
    escaped: bool = false,

    /// The next byte after whitespace, not consumed.
    inline fn peek(s: *Scanner) ?u8 {
        if (s.at >= s.text.len) return null;
        const b = s.text[s.at];
        // JSONL has no whitespace between tokens: one test. (`-o json`'s indented text
        // takes the loop.)
        if (b > ' ') return b;
        return s.skipSpace();
    }

    noinline fn skipSpace(s: *Scanner) ?u8 {
        while (s.at < s.text.len) : (s.at += 1) {
            switch (s.text[s.at]) {
                ' ', '\t', '\r', '\n' => {},
                else => |b| return b,
            }
        }
        return null;
    }

    inline fn eat(s: *Scanner, byte: u8) ?void {
        if (s.peek() != byte) return null;
        s.at += 1;
    }

    /// The raw body of the string whose opening quote was just consumed; moves past its
    /// closing quote. Only `"` and `\\` matter inside, found by `indexOfQuoteOrEscape`.
    inline fn stringRest(s: *Scanner) ?[]const u8 {
        const start = s.at;
        while (s.at <= s.text.len) {
            const at = indexOfQuoteOrEscape(s.text, s.at) orelse return null;
            if (s.text[at] == '"') {
                s.at = at + 1;
                return s.text[start..at];
            }
            // An escape: its next byte is never the string's end.
            s.escaped = true;
            s.at = at + 2;
        }
        return null;
    }

    /// A member's key and its `:`.
    inline fn key(s: *Scanner) ?[]const u8 {
        s.eat('"') orelse return null;
        const k = s.stringRest() orelse return null;
        s.eat(':') orelse return null;
        return k;
    }

    /// After a member's value: true at the next key, false past the object's `}`.
    inline fn nextMember(s: *Scanner) ?bool {
        const more = switch (s.peek() orelse return null) {
            ',' => true,
            '}' => false,
            else => return null,
        };
        s.at += 1;
        return more;
    }

    /// Opens the object here: true at its first key, false past it when it is empty.
    inline fn open(s: *Scanner) ?bool {
        s.eat('{') orelse return null;
        if ((s.peek() orelse return null) == '}') {
            s.at += 1;
            return false;
        }
        return true;
    }

    /// At a value: true at the value of its first member `name` (one level deeper; record
    /// JSON has no duplicate keys, and the first is the Rust twin's too), false past the
    /// whole value when it is not an object or has no such member.
    inline fn member(s: *Scanner, comptime name: []const u8) ?bool {
        if ((s.peek() orelse return null) != '{') {
            s.skipValue() orelse return null;
            return false;
        }
        var more = s.open() orelse return null;
        while (more) {
            if (isKey(s.key() orelse return null, name)) return true;
            s.skipValue() orelse return null;
            more = s.nextMember() orelse return null;
        }
        return false;
    }

    /// Skips one value of any type. A literal (number, true, false, null) is not checked.
    inline fn skipValue(s: *Scanner) ?void {
        switch (s.peek() orelse return null) {
            '"' => {
                s.at += 1;
                _ = s.stringRest() orelse return null;
            },
            '{', '[' => {
                s.at += 1;
                s.close(1) orelse return null;
            },
            '}', ']', ',', ':' => return null,
            else => while (s.at < s.text.len) : (s.at += 1) {
                switch (s.text[s.at]) {
                    ',', '}', ']', ':', '"', ' ', '\t', '\r', '\n' => break,
                    else => {},
                }
            },
        }
    }

    /// Moves past the end of the `depth` objects or arrays the scanner is in: one byte loop
    /// that counts brackets and jumps over strings (a `}` or `"` inside one is text).
    inline fn close(s: *Scanner, depth_in: usize) ?void {
        std.debug.assert(depth_in > 0);
        var depth = depth_in;
        while (s.at < s.text.len) {
            const b = s.text[s.at];
            s.at += 1;
            if (b == '"') {
                _ = s.stringRest() orelse return null;
                continue;
            }
            // Bit 5 apart: `{` 0x7B and `[` 0x5B, `}` 0x7D and `]` 0x5D; no other byte
            // folds onto them.
            switch (b & ~@as(u8, 0x20)) {
                0x5B => depth += 1,
                0x5D => {
                    depth -= 1;
                    if (depth == 0) return;
                },
                else => {},
            }
        }
        return null;
    }

    /// A string value's raw body and whether it has an escape, or null after skipping a
    /// value of another type.
    inline fn stringValue(s: *Scanner) ?Text {
        if (s.peek() == '"') {
            s.at += 1;
            s.escaped = false;
            const raw = s.stringRest() orelse return null;
            return .{ .raw = raw, .escaped = s.escaped };
        }
        _ = s.skipValue();
        return null;
    }

    /// A non-negative integer, as a JSON number or a string of ASCII digits.
    inline fn integer(s: *Scanner) ?u64 {
        const digits = if (s.peek() == '"') blk: {
            s.at += 1;
            break :blk s.stringRest() orelse return null;
        } else blk: {
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

    /// At System's value: its members, the wanted ones read, the others skipped.
    fn system(s: *Scanner, found: *Found) ?void {
        if ((s.peek() orelse return null) != '{') return null;
        var more = s.open() orelse return null;
        while (more) {
            const k = s.key() orelse return null;
            s.systemMember(k, found) orelse return null;
            more = s.nextMember() orelse return null;
        }
    }

    fn systemMember(s: *Scanner, k: []const u8, found: *Found) ?void {
        if (isKey(k, "Provider")) {
            if (!(s.member("#attributes") orelse return null)) return;
            if (!(s.member("Name") orelse return null)) return s.close(1);
            found.set(PROVIDER, s.stringValue());
            return s.close(2);
        } else if (isKey(k, "Provider_attributes")) {
            if (!(s.member("Name") orelse return null)) return;
            found.set(PROVIDER, s.stringValue());
            return s.close(1);
        } else if (isKey(k, "EventID")) {
            const value: ?u64 = if (s.peek() == '{') blk: {
                if (!(s.member("#text") orelse return null)) break :blk null;
                const text = s.integer();
                s.close(1) orelse return null;
                break :blk text;
            } else s.integer();
            found.event_id = castInteger(u32, value);
        } else if (isKey(k, "Level")) {
            found.level = castInteger(u8, s.integer());
        } else if (isKey(k, "Channel")) {
            found.set(CHANNEL, s.stringValue());
        } else if (isKey(k, "Computer")) {
            found.set(COMPUTER, s.stringValue());
        } else {
            return s.skipValue();
        }
    }
};

/// `k` is `name`: the length decides most keys, without a byte compare.
inline fn isKey(k: []const u8, comptime name: []const u8) bool {
    return k.len == name.len and std.mem.eql(u8, k, name);
}

/// The first `"` or `\\` in `text` at or after `from` (the Rust twin's word test and
/// `memchr2`): 16 bytes a step, then the tail byte by byte.
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
    // The first `Event` member and its first `System` member are the record's; the walk
    // stops right after System, so the rest of the record is not read. The engines' JSONL
    // starts every record with `event_head`: those bytes are the walk's whole way to System.
    const at_system = if (std.mem.startsWith(u8, text[start..], event_head)) blk: {
        s.at = start + event_head.len;
        break :blk true;
    } else blk: {
        const event = s.member("Event") orelse false;
        break :blk event and (s.member("System") orelse false);
    };
    if (at_system) _ = s.system(&found);
    return found;
}

/// How the engines' JSONL begins a record, up to System's value: Event's first member is its
/// `#attributes` with the schema's namespace, then System (PERF.md P9: walking these 91 bytes
/// member by member cost 700 instructions a record in the Rust twin).
const event_head = "{\"Event\":{\"#attributes\":{\"xmlns\":" ++
    "\"http://schemas.microsoft.com/win/2004/08/events/event\"},\"System\":";

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

/// Each case: a record's JSON and the fields (raw, still escaped) it must give. Shared with
/// the Rust twin's `CASES`, case by case.
const Case = struct { text: []const u8, want: Found };
const cases = [_]Case{
    // "System" and brackets inside strings, a System inside another member, fields of the
    // same names inside skipped members and after System.
    .{
        .text = "{\"Event\":{\"#attributes\":{\"n\":\"\\\"System\\\":{\\\"Channel\\\":" ++
            "\\\"fake\\\"}}\"},\"Other\":{\"System\":{\"Channel\":\"nested\"}},\"System\":" ++
            "{\"TimeCreated\":{\"#attributes\":{\"SystemTime\":\"}]}\\\"{[\"}},\"Security\":" ++
            "[{\"a\":\"]\"},[1,[2]],\"\\\\\"],\"Channel\":\"real\",\"Execution\":" ++
            "{\"Channel\":\"x\",\"Computer\":\"x\"},\"Computer\":\"C\\\\\\\"}\"}," ++
            "\"EventData\":{\"Channel\":\"data\",\"Level\":1}}}",
        .want = .{ .channel = "real", .computer = "C\\\\\\\"}", .escapes = COMPUTER },
    },
    // Keys in any order, EventID's #text before its #attributes, Provider's Name after a
    // nested Name of another member.
    .{
        .text = "{\"Event\":{\"System\":{\"Computer\":\"H\",\"Level\":\"2\",\"EventID\":" ++
            "{\"#text\":\"4625\",\"#attributes\":{\"Qualifiers\":\"0\"}},\"Channel\":\"Ch\"," ++
            "\"Provider\":{\"x\":{\"Name\":\"wrong\"},\"#attributes\":{\"Guid\":\"{G}\"," ++
            "\"NameX\":\"x\",\"Name\":\"Right\"}}}}}",
        .want = .{
            .provider = "Right",
            .event_id = 4625,
            .level = 2,
            .channel = "Ch",
            .computer = "H",
        },
    },
    // separate_json_attributes: the attributes beside the element, which is "" or null.
    .{
        .text = "{\"Event\":{\"System\":{\"Provider_attributes\":{\"Guid\":\"g\",\"Name\":" ++
            "\"P\"},\"Provider\":null,\"EventID_attributes\":{\"Qualifiers\":16384}," ++
            "\"EventID\":7036,\"Level\":4,\"Channel\":\"System\",\"Computer\":\"W\"}}}",
        .want = .{
            .provider = "P",
            .event_id = 7036,
            .level = 4,
            .channel = "System",
            .computer = "W",
        },
    },
    // Non-ASCII and escapes kept raw; EventID without #text; a Provider without a Name.
    .{
        .text = "{\"Event\":{\"System\":{\"Provider\":{\"#attributes\":{\"Guid\":\"g\"}}," ++
            "\"EventID\":{\"#attributes\":{\"Qualifiers\":1}},\"Channel\":\"Журнал\"," ++
            "\"Computer\":\"ü\\u00e9\\\\\",\"Level\":[1]}}}",
        .want = .{ .channel = "Журнал", .computer = "ü\\u00e9\\\\", .escapes = COMPUTER },
    },
    // Empty objects and an Event without System.
    .{ .text = "{\"Event\":{\"System\":{}}}", .want = .{} },
    .{ .text = "{\"Event\":{}}", .want = .{} },
    .{ .text = "{\"Event\":{\"EventData\":{\"System\":{\"Level\":1}}}}", .want = .{} },
    // Keys that only start with the name wanted, before it.
    .{
        .text = "{\"Events\":{\"System\":{\"Level\":1}},\"Event\":{\"Systems\":{\"Level\":3}," ++
            "\"System\":{\"Level\":2,\"EventID\":{\"#texts\":5,\"#text\":6}}}}",
        .want = .{ .event_id = 6, .level = 2 },
    },
};

/// `text` as an indented JSON writer would print it, after a banner: a newline and spaces
/// after `{`, `[` and `,`, a space after `:`, outside strings only.
fn indent(gpa: std.mem.Allocator, text: []const u8) error{OutOfMemory}![]u8 {
    var out: std.ArrayList(u8) = .empty;
    errdefer out.deinit(gpa);
    try out.appendSlice(gpa, "Record 1\n");
    var in_string = false;
    var escaped = false;
    for (text) |c| {
        try out.append(gpa, c);
        if (in_string) {
            if (escaped) {
                escaped = false;
            } else if (c == '\\') {
                escaped = true;
            } else if (c == '"') {
                in_string = false;
            }
            continue;
        }
        switch (c) {
            '"' => in_string = true,
            '{', '[', ',' => try out.appendSlice(gpa, "\n  \t"),
            ':' => try out.appendSlice(gpa, " \r"),
            else => {},
        }
    }
    try out.append(gpa, '\n');
    return out.toOwnedSlice(gpa);
}

test "scan: strings, brackets and other members, whatever they hold" {
    const gpa = std.testing.allocator;
    for (cases) |c| {
        try std.testing.expectEqualDeep(c.want, scan(c.text));
        const pretty = try indent(gpa, c.text);
        defer gpa.free(pretty);
        try std.testing.expectEqualDeep(c.want, scan(pretty));
        // A record cut anywhere: no field that was not in the whole text.
        for (0..c.text.len) |cut| {
            const f = scan(c.text[0..cut]);
            inline for (.{ "provider", "channel", "computer" }) |name| {
                if (@field(f, name)) |got| {
                    try std.testing.expectEqualStrings(@field(c.want, name).?, got);
                }
            }
        }
    }
}

/// Raw JSON string bodies with what trips a scanner: quotes, backslashes, brackets, field
/// names, non-ASCII, `\u` escapes, lengths around the 16-byte steps.
fn genBody(rng: std.Random, out: *std.ArrayList(u8), gpa: std.mem.Allocator) !void {
    const pieces = [_][]const u8{
        "\\\"", "\\\\", "}", "{", "]", "[", ",", ":", "System", "é€", "\\u00e9", "abcdefg",
    };
    for (0..rng.uintLessThan(usize, 7)) |_| {
        try out.appendSlice(gpa, pieces[rng.uintLessThan(usize, pieces.len)]);
    }
}

/// Any JSON value, nested `depth` levels at most.
fn genValue(rng: std.Random, out: *std.ArrayList(u8), gpa: std.mem.Allocator, depth: usize) !void {
    switch (rng.uintLessThan(usize, if (depth == 0) 4 else 6)) {
        0 => {
            try out.append(gpa, '"');
            try genBody(rng, out, gpa);
            try out.append(gpa, '"');
        },
        1 => try out.print(gpa, "{d}", .{rng.uintLessThan(u32, 100_000)}),
        2 => try out.appendSlice(gpa, ([_][]const u8{ "null", "true", "false", "-1.5e3" })[
            rng.uintLessThan(usize, 4)
        ]),
        3 => try out.print(gpa, "\"{s}\"", .{([_][]const u8{ "Channel", "System", "Level", "}" })[
            rng.uintLessThan(usize, 4)
        ]}),
        4 => {
            try out.append(gpa, '[');
            for (0..rng.uintLessThan(usize, 4)) |i| {
                if (i > 0) try out.append(gpa, ',');
                try genValue(rng, out, gpa, depth - 1);
            }
            try out.append(gpa, ']');
        },
        else => {
            const names = [_][]const u8{
                "Name", "#text", "Channel", "System", "Computer", "a\\\"b",
            };
            try out.append(gpa, '{');
            for (0..rng.uintLessThan(usize, 4)) |i| {
                if (i > 0) try out.append(gpa, ',');
                try out.print(gpa, "\"{s}\":", .{names[rng.uintLessThan(usize, names.len)]});
                try genValue(rng, out, gpa, depth - 1);
            }
            try out.append(gpa, '}');
        },
    }
}

/// One generated string, owned by the arena.
fn genString(rng: std.Random, gpa: std.mem.Allocator) ![]const u8 {
    var out: std.ArrayList(u8) = .empty;
    try genBody(rng, &out, gpa);
    return out.items;
}

test "scan: random Systems give the fields they were made with" {
    var arena_state: std.heap.ArenaAllocator = .init(std.testing.allocator);
    defer arena_state.deinit();
    var prng: std.Random.DefaultPrng = .init(0x9E37_79B9_7F4A_7C15);
    const rng = prng.random();
    for (0..3000) |round| {
        _ = arena_state.reset(.retain_capacity);
        const gpa = arena_state.allocator();
        var want: Found = .{
            .provider = try genString(rng, gpa),
            .event_id = rng.uintLessThan(u32, 1 << 20),
            .level = rng.int(u8),
            .channel = try genString(rng, gpa),
            .computer = try genString(rng, gpa),
        };
        const strings = .{
            .{ "provider", PROVIDER },
            .{ "channel", CHANNEL },
            .{ "computer", COMPUTER },
        };
        inline for (strings) |f| {
            if (std.mem.indexOfScalar(u8, @field(want, f[0]).?, '\\') != null) want.escapes |= f[1];
        }
        var members: std.ArrayList([]const u8) = .empty;
        const channel = want.channel.?;
        const computer = want.computer.?;
        try members.append(gpa, try std.fmt.allocPrint(gpa, "\"Channel\":\"{s}\"", .{channel}));
        try members.append(gpa, try std.fmt.allocPrint(gpa, "\"Computer\":\"{s}\"", .{computer}));
        try members.append(gpa, try std.fmt.allocPrint(gpa, "\"Level\":{d}", .{want.level.?}));
        var value: std.ArrayList(u8) = .empty;
        try genValue(rng, &value, gpa, 2);
        try members.append(gpa, if (rng.boolean())
            try std.fmt.allocPrint(gpa, "\"EventID\":{d}", .{want.event_id.?})
        else
            try std.fmt.allocPrint(gpa, "\"EventID\":{{\"#attributes\":{s},\"#text\":\"{d}\"}}", .{
                value.items, want.event_id.?,
            }));
        value = .empty;
        try genValue(rng, &value, gpa, 2);
        try members.append(gpa, try std.fmt.allocPrint(
            gpa,
            "\"Provider\":{{\"#attributes\":{{\"Guid\":{s},\"Name\":\"{s}\"}}}}",
            .{ value.items, want.provider.? },
        ));
        for (0..rng.uintLessThan(usize, 8)) |_| {
            const names = [_][]const u8{
                "TimeCreated", "Security", "Execution", "Keywords", "Sys\\\"tem",
            };
            value = .empty;
            try genValue(rng, &value, gpa, 3);
            try members.append(gpa, try std.fmt.allocPrint(gpa, "\"{s}\":{s}", .{
                names[rng.uintLessThan(usize, names.len)], value.items,
            }));
        }
        // The fields in any order among the others.
        rng.shuffle([]const u8, members.items);
        var text: std.ArrayList(u8) = .empty;
        try text.appendSlice(gpa, "{\"Event\":{\"#attributes\":");
        try genValue(rng, &text, gpa, 3);
        try text.appendSlice(gpa, ",\"System\":{");
        for (members.items, 0..) |m, i| {
            if (i > 0) try text.append(gpa, ',');
            try text.appendSlice(gpa, m);
        }
        try text.appendSlice(gpa, "},\"EventData\":");
        try genValue(rng, &text, gpa, 3);
        try text.appendSlice(gpa, "}}");
        std.testing.expectEqualDeep(want, scan(text.items)) catch |err| {
            std.debug.print("round {d}: {s}\n", .{ round, text.items });
            return err;
        };
        try std.testing.expectEqualDeep(want, scan(try indent(gpa, text.items)));
    }
}
