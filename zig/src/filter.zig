//! Record filters (`--event-id`, `--provider`, `--channel`, `--level`, `--since`, `--until`):
//! the `Filter`, its parsing from the command line's texts, and the decision, made from the
//! parsed record before it is rendered (the rules: shared-fixtures/README.md, "Filters"). The
//! twin of `rust/evtx-core/src/filter.rs`.
//!
//! The decision reads five fields of the record's `Event/System` element, each as the text the
//! reference's JSON shows for it: `EventID`'s and `Level`'s content as numbers (ASCII decimal
//! digits), `Provider/@Name` and `Channel` as names (whole, ASCII case-insensitive), and
//! `TimeCreated/@SystemTime` as a time (RFC 3339, to FILETIME ticks). On the slow path they
//! come from the record's tree (`Filter.decideTree`); on the fast path from the program's
//! `Plan`, learnt once from the tree of the first record of its signature, and the record's
//! value slots (`Filter.decidePlan`).
const std = @import("std");
const assert = std.debug.assert;
const Allocator = std.mem.Allocator;
const escape = @import("escape.zig");
const tokens = @import("tokens.zig");
const tree = @import("tree.zig");
const values_decode = @import("values_decode.zig");
const values_format = @import("values_format.zig");
const Parser = tokens.Parser;
const Value = values_decode.Value;
const T = values_decode.T;

/// An inclusive range of numbers (`--event-id`, `--level`).
pub const Range = struct { first: u32, last: u32 };

/// What a run keeps: every constraint must hold (AND); a list holds when one of its entries
/// does (OR). Empty lists and null bounds constrain nothing, and an empty filter keeps every
/// record on exactly the path a run without one takes. The slices are the caller's.
pub const Filter = struct {
    /// `--event-id`: inclusive ranges of `System/EventID` values.
    event_ids: []const Range = &.{},
    /// `--level`: inclusive ranges of `System/Level` values.
    levels: []const Range = &.{},
    /// `--provider`: `System/Provider/@Name`, whole, ASCII case-insensitive (UTF-8).
    providers: []const []const u8 = &.{},
    /// `--channel`: `System/Channel`, whole, ASCII case-insensitive (UTF-8).
    channels: []const []const u8 = &.{},
    /// `--since`: `System/TimeCreated/@SystemTime` at or after it (FILETIME ticks).
    since: ?u64 = null,
    /// `--until`: `System/TimeCreated/@SystemTime` before it (FILETIME ticks).
    until: ?u64 = null,

    /// Whether the filter keeps every record.
    pub fn isEmpty(f: *const Filter) bool {
        return f.event_ids.len == 0 and f.levels.len == 0 and f.providers.len == 0 and
            f.channels.len == 0 and f.since == null and f.until == null;
    }

    /// Checks what no single option's parser can: `--since` before `--until`.
    pub fn check(f: *const Filter) ?Problem {
        const since = f.since orelse return null;
        const until = f.until orelse return null;
        if (since >= until) return .{ .kind = .bounds };
        return null;
    }

    /// Whether the filter constrains `field`.
    pub fn constrains(f: *const Filter, field: Field) bool {
        return switch (field) {
            .event_id => f.event_ids.len > 0,
            .provider => f.providers.len > 0,
            .channel => f.channels.len > 0,
            .level => f.levels.len > 0,
            .time => f.since != null or f.until != null,
        };
    }

    /// Whether a field whose text is `text` holds the filter's constraint on it (null: the
    /// record has no such field, which holds only where nothing constrains it).
    pub fn holds(f: *const Filter, field: Field, text: ?[]const u8) bool {
        if (!f.constrains(field)) return true;
        const t = text orelse return false;
        return switch (field) {
            .event_id => inRanges(f.event_ids, t),
            .level => inRanges(f.levels, t),
            .provider => named(f.providers, t),
            .channel => named(f.channels, t),
            .time => {
                const ticks = (rfc3339(t) orelse return false) orelse return false;
                if (f.since) |since| if (ticks < since) return false;
                if (f.until) |until| if (ticks >= until) return false;
                return true;
            },
        };
    }

    /// `holds` for value `v` without its text, where the type allows: an unsigned integer's
    /// number (its text is its decimal digits), a FILETIME's ticks (its text is their RFC 3339
    /// form up to the year 9999). Null: ask its text. The Rust engine's `holds_direct`.
    fn holdsDirect(f: *const Filter, field: Field, chunk: []const u8, v: Value) ?bool {
        if (v.start > chunk.len or chunk.len - v.start < v.len) return null;
        const bytes = chunk[v.start..][0..v.len];
        const number: ?u64 = switch (v.vtype) {
            T.uint8 => if (v.len == 1) bytes[0] else null,
            T.uint16 => if (v.len == 2) std.mem.readInt(u16, bytes[0..2], .little) else null,
            T.uint32 => if (v.len == 4) std.mem.readInt(u32, bytes[0..4], .little) else null,
            T.uint64, T.filetime => if (v.len == 8)
                std.mem.readInt(u64, bytes[0..8], .little)
            else
                null,
            else => null,
        };
        const n = number orelse return null;
        switch (field) {
            .event_id, .level => {
                if (v.vtype == T.filetime) return null;
                const ranges = if (field == .event_id) f.event_ids else f.levels;
                for (ranges) |r| if (r.first <= n and n <= r.last) return true;
                return false;
            },
            .time => {
                if (v.vtype != T.filetime or n >= ticks_year_10000) return null;
                if (f.since) |since| if (n < since) return false;
                if (f.until) |until| if (n >= until) return false;
                return true;
            },
            .provider, .channel => return null,
        }
    }

    /// The slow path's decision, from the record tree whose root is `root`. `scratch` holds
    /// each field's text in turn.
    pub fn decideTree(
        f: *const Filter,
        p: *const Parser,
        fmt: values_format.Format,
        root: u32,
        scratch: *escape.Out,
    ) Allocator.Error!bool {
        const fields = systemFields(p, root);
        for (fields, 0..) |nodes, at| {
            const field: Field = @enumFromInt(at);
            if (!f.constrains(field)) continue;
            scratch.truncate(0);
            const ok = if (nodes) |ids| try writeNodesText(scratch, p, fmt, ids) else false;
            if (!f.holds(field, if (ok) scratch.list.items else null)) return false;
        }
        return true;
    }

    /// The fast path's decision, from the program's `plan` and the record's substitution
    /// values `slots`; null when a field needs the tree (`Source.tree`).
    pub fn decidePlan(
        f: *const Filter,
        plan: *const Plan,
        slots: []const Value,
        fmt: values_format.Format,
        scratch: *escape.Out,
    ) Allocator.Error!?bool {
        for (plan.fields, 0..) |source, at| {
            const field: Field = @enumFromInt(at);
            if (!f.constrains(field)) continue;
            const ok = switch (source) {
                .tree => return null,
                .absent => false,
                .fixed => |text| f.holds(field, text),
                .slot => |k| ok: {
                    if (k >= slots.len) return null;
                    break :ok try f.holdsValue(field, slots[k], fmt, scratch);
                },
            };
            if (!ok) return false;
        }
        return true;
    }

    /// `holds` for a field that is substitution value `v` (`Source.slot`), by its number
    /// where the type allows (`holdsDirect`), else by its text, written to `scratch`.
    pub fn holdsValue(
        f: *const Filter,
        field: Field,
        v: Value,
        fmt: values_format.Format,
        scratch: *escape.Out,
    ) Allocator.Error!bool {
        if (f.holdsDirect(field, fmt.chunk, v)) |direct| return direct;
        scratch.truncate(0);
        const written = try writeValueText(scratch, fmt, v);
        return f.holds(field, if (written) scratch.list.items else null);
    }
};

/// Whether `text`, ASCII decimal digits, is a number in one of `ranges`.
fn inRanges(ranges: []const Range, text: []const u8) bool {
    const n = digits(text) orelse return false;
    for (ranges) |r| if (r.first <= n and n <= r.last) return true;
    return false;
}

/// Whether `text` is one of `names`, whole, ASCII case-insensitive.
fn named(names: []const []const u8, text: []const u8) bool {
    for (names) |name| if (std.ascii.eqlIgnoreCase(name, text)) return true;
    return false;
}

/// The five `System` fields a filter reads, in `Plan.fields` order.
pub const Field = enum(u3) {
    /// `System/EventID`'s content (its `Qualifiers` attribute is not read).
    event_id,
    /// `System/Provider/@Name`.
    provider,
    /// `System/Channel`'s content.
    channel,
    /// `System/Level`'s content.
    level,
    /// `System/TimeCreated/@SystemTime`.
    time,
};

/// Where a program's records take one field from, learnt once from the tree of the record the
/// program was recorded from (the program's signature fixes the record's shape).
pub const Source = union(enum) {
    /// The tree must be read: the field is made of several values, or of literal text and a
    /// value, or of an array item (or the plan was never learnt).
    tree,
    /// The record has no such field (or its content is not text and values).
    absent,
    /// The template's literal text, the same in every record (owned by the plan).
    fixed: []const u8,
    /// Substitution value `k` (the program's `slots[k]`), whole.
    slot: u16,
};

/// A program's `Source` for each `Field`. The Rust engine's `filter::Plan`.
pub const Plan = struct {
    fields: [5]Source = @splat(.tree),

    /// The plan of the program recorded from the tree whose root is `root`.
    pub fn ofTree(
        gpa: Allocator,
        p: *const Parser,
        f: values_format.Format,
        root: u32,
    ) Allocator.Error!Plan {
        var plan: Plan = .{};
        errdefer plan.deinit(gpa);
        const fields = systemFields(p, root);
        for (fields, &plan.fields) |nodes, *source| source.* = try sourceOf(gpa, p, f, nodes);
        return plan;
    }

    pub fn deinit(plan: *const Plan, gpa: Allocator) void {
        for (plan.fields) |source| switch (source) {
            .fixed => |text| gpa.free(text),
            else => {},
        };
    }
};

/// Where a field made of the nodes `ids` comes from.
fn sourceOf(
    gpa: Allocator,
    p: *const Parser,
    f: values_format.Format,
    ids: ?[]const u32,
) Allocator.Error!Source {
    const nodes = ids orelse return .absent;
    var literal = true;
    for (nodes) |id| {
        const n = p.node(id);
        if (n.kind == .value and n.flags & tree.flag_slot != 0) literal = false;
    }
    if (literal) {
        var text = escape.Out.init(gpa);
        defer text.deinit();
        if (!try writeNodesText(&text, p, f, nodes)) return .absent;
        return .{ .fixed = try gpa.dupe(u8, text.list.items) };
    }
    if (nodes.len != 1) return .tree;
    const n = p.node(nodes[0]);
    // An array item (`kids.len` = its index + 1) needs the tree.
    if (n.kind != .value or n.kids.len != 0) return .tree;
    return .{ .slot = n.dep };
}

/// The content nodes of each `Field` of the record tree whose root is `root`: null for a
/// field the record lacks. The root must be `Event`; the first `System` child element counts,
/// and in it the first element of each name, and of `Provider` and `TimeCreated` their first
/// attribute `Name` and `SystemTime`.
pub fn systemFields(p: *const Parser, root: u32) [5]?[]const u32 {
    var fields: [5]?[]const u32 = @splat(null);
    const event = p.node(root);
    if (event.kind != .element or !std.mem.eql(u8, p.nameText(event.ref.name), "Event")) {
        return fields;
    }
    const system = for (p.edges(event.kids)) |id| {
        const n = p.node(id);
        if (n.kind == .element and std.mem.eql(u8, p.nameText(n.ref.name), "System")) break n;
    } else return fields;
    var seen: [5]bool = @splat(false);
    for (p.edges(system.kids)) |id| {
        const n = p.node(id);
        if (n.kind != .element) continue;
        const name = p.nameText(n.ref.name);
        const field: Field, const nodes: ?[]const u32 = if (std.mem.eql(u8, name, "EventID"))
            .{ .event_id, p.edges(n.kids) }
        else if (std.mem.eql(u8, name, "Provider"))
            .{ .provider, attribute(p, n, "Name") }
        else if (std.mem.eql(u8, name, "Channel"))
            .{ .channel, p.edges(n.kids) }
        else if (std.mem.eql(u8, name, "Level"))
            .{ .level, p.edges(n.kids) }
        else if (std.mem.eql(u8, name, "TimeCreated"))
            .{ .time, attribute(p, n, "SystemTime") }
        else
            continue;
        // The first element of the name decides, even when it lacks the attribute.
        const at = @intFromEnum(field);
        if (seen[at]) continue;
        seen[at] = true;
        fields[at] = nodes;
    }
    return fields;
}

/// The items of element `n`'s first attribute `name`, null when it has none.
fn attribute(p: *const Parser, n: *const tree.Node, name: []const u8) ?[]const u32 {
    for (p.edges(n.attrs)) |id| {
        const a = p.node(id);
        if (std.mem.eql(u8, p.nameText(a.ref.name), name)) return p.edges(a.kids);
    }
    return null;
}

/// Appends the text of a field's nodes `ids`, unescaped UTF-8 (what the reference's JSON
/// shows, string or number): false when one is no value (an element, CDATA, a character or
/// entity reference), whose field never matches.
pub fn writeNodesText(
    out: *escape.Out,
    p: *const Parser,
    f: values_format.Format,
    ids: []const u32,
) Allocator.Error!bool {
    for (ids) |id| {
        const n = p.node(id);
        if (n.kind != .value) return false;
        if (!try writeValueText(out, f, n.value())) return false;
    }
    return true;
}

/// Appends the text of value `v` (as `writeNodesText`).
pub fn writeValueText(out: *escape.Out, f: values_format.Format, v: Value) Allocator.Error!bool {
    if (v.vtype == T.binxml) return false;
    if (v.start > f.chunk.len or f.chunk.len - v.start < v.len) return false;
    values_format.writeValue(out, f, v, .raw) catch |e| switch (e) {
        error.OutOfMemory => return error.OutOfMemory,
        else => return false,
    };
    return true;
}

/// Why a text is not a LIST, NAME or TIME, or a filter cannot match: `write` gives the words
/// the CLIs print (the Rust engine's error strings, byte for byte).
pub const Problem = struct {
    kind: Kind,
    /// The list item at fault (`list_item`, `list_range`).
    part: []const u8 = "",

    pub const Kind = enum { list_item, list_range, name_empty, time_syntax, time_early, bounds };

    pub fn write(p: Problem, w: *std.Io.Writer) std.Io.Writer.Error!void {
        switch (p.kind) {
            .list_item => try w.print(
                "expected a number from 0 to 4294967295 or a range such as 4700-4799, got '{s}'",
                .{p.part},
            ),
            .list_range => try w.print(
                "the range '{s}' is empty: its first number is greater than its last",
                .{p.part},
            ),
            .name_empty => try w.writeAll("a name cannot be empty"),
            .time_syntax => try w.writeAll(
                "expected an RFC 3339 time such as 2024-05-01T08:00:00Z or " ++
                    "2024-05-01T10:00:00.1234567+02:00 (at most 7 fraction digits)",
            ),
            .time_early => try w.writeAll(
                "the time is before 1601-01-01T00:00:00Z, where EVTX times begin",
            ),
            .bounds => try w.writeAll("--since must be earlier than --until"),
        }
    }
};

/// Parses a LIST (`--event-id`, `--level`): comma-separated numbers from 0 to 4294967295 and
/// inclusive ranges `A-B` of them (`4624,4625,4700-4799`), ASCII digits only (no sign, no
/// space). A range whose first number is greater than its last is refused. On
/// `error.Invalid`, `problem` says why. The list is the caller's (`gpa`).
pub fn parseList(
    gpa: Allocator,
    text: []const u8,
    problem: *Problem,
) (error{Invalid} || Allocator.Error)![]Range {
    var list: std.ArrayList(Range) = .empty;
    errdefer list.deinit(gpa);
    var it = std.mem.splitScalar(u8, text, ',');
    while (it.next()) |part| {
        const dash = std.mem.indexOfScalar(u8, part, '-');
        const a = digitsU32(if (dash) |d| part[0..d] else part);
        const b = digitsU32(if (dash) |d| part[d + 1 ..] else part);
        if (a == null or b == null) {
            problem.* = .{ .kind = .list_item, .part = part };
            return error.Invalid;
        }
        if (a.? > b.?) {
            problem.* = .{ .kind = .list_range, .part = part };
            return error.Invalid;
        }
        try list.append(gpa, .{ .first = a.?, .last = b.? });
    }
    return list.toOwnedSlice(gpa);
}

/// Parses a NAME (`--provider`, `--channel`): any text but the empty one (returned as it is).
pub fn parseName(text: []const u8, problem: *Problem) error{Invalid}![]const u8 {
    if (text.len == 0) {
        problem.* = .{ .kind = .name_empty };
        return error.Invalid;
    }
    return text;
}

/// Parses a TIME (`--since`, `--until`) into FILETIME ticks: RFC 3339
/// (`2024-05-01T08:00:00Z`, `2024-05-01T10:00:00.1234567+02:00`) with at most 7 fraction
/// digits, at or after 1601-01-01T00:00:00Z.
pub fn parseTime(text: []const u8, problem: *Problem) error{Invalid}!u64 {
    const time = rfc3339(text) orelse {
        problem.* = .{ .kind = .time_syntax };
        return error.Invalid;
    };
    return time orelse {
        problem.* = .{ .kind = .time_early };
        return error.Invalid;
    };
}

/// One or more ASCII digits as a number, null for anything else or past `maxInt(u32)`.
fn digitsU32(text: []const u8) ?u32 {
    return std.math.cast(u32, digits(text) orelse return null);
}

/// One or more ASCII digits as a number (saturating at `maxInt(u64)`, which no `u32` range
/// holds), null for anything else: the number a field's text gives.
pub fn digits(text: []const u8) ?u64 {
    if (text.len == 0) return null;
    var n: u64 = 0;
    for (text) |c| {
        if (c < '0' or c > '9') return null;
        n = std.math.mul(u64, n, 10) catch std.math.maxInt(u64);
        n = std.math.add(u64, n, c - '0') catch std.math.maxInt(u64);
    }
    return n;
}

/// FILETIME ticks of 10000-01-01T00:00:00Z: from there on a FILETIME's text has no
/// four-digit year, so no TIME.
const ticks_year_10000: u64 = 2_650_467_744_000_000_000;
/// FILETIME ticks (100 ns) in a second.
const ticks_per_second: i64 = 10_000_000;
/// Days from 0000-03-01 (the civil calendar's origin in `daysFromCivil`) to 1601-01-01.
const days_to_1601: i64 = 584_694;

/// Days from 0000-03-01 to `y-m-d` in the proleptic Gregorian calendar (H. Hinnant's
/// `days_from_civil`, counted from its era origin instead of 1970).
fn daysFromCivil(year: i64, m: i64, d: i64) i64 {
    assert(m >= 1 and m <= 12 and d >= 1 and d <= 31);
    const y = if (m <= 2) year - 1 else year;
    const era = @divFloor(y, 400);
    const yoe = y - era * 400;
    const mp = @mod(m + 9, 12);
    const doy = @divFloor(153 * mp + 2, 5) + d - 1;
    const doe = yoe * 365 + @divFloor(yoe, 4) - @divFloor(yoe, 100) + doy;
    return era * 146_097 + doe;
}

/// Days in month `m` of year `y`.
fn monthDays(y: i64, m: i64) i64 {
    return switch (m) {
        2 => if (@mod(y, 4) == 0 and (@mod(y, 100) != 0 or @mod(y, 400) == 0)) 29 else 28,
        4, 6, 9, 11 => 30,
        else => 31,
    };
}

/// `n` ASCII digits at `text[at..]` as a number.
fn fixedDigits(text: []const u8, at: usize, n: usize) ?i64 {
    if (at + n > text.len) return null;
    var v: i64 = 0;
    for (text[at..][0..n]) |c| {
        if (c < '0' or c > '9') return null;
        v = v * 10 + (c - '0');
    }
    return v;
}

/// RFC 3339 `date-time` (`T` or `t`, `Z`, `z` or `±HH:MM`, 1-7 fraction digits after a `.`)
/// as FILETIME ticks: null when the text is not one, `@as(?u64, null)` inside when it is one
/// before 1601-01-01T00:00:00Z. Seconds run to 59 (no leap second).
pub fn rfc3339(text: []const u8) ??u64 {
    const y = fixedDigits(text, 0, 4) orelse return null;
    const mo = fixedDigits(text, 5, 2) orelse return null;
    const d = fixedDigits(text, 8, 2) orelse return null;
    const h = fixedDigits(text, 11, 2) orelse return null;
    const mi = fixedDigits(text, 14, 2) orelse return null;
    const s = fixedDigits(text, 17, 2) orelse return null;
    if (text[4] != '-' or text[7] != '-' or (text[10] != 'T' and text[10] != 't')) return null;
    if (text[13] != ':' or text[16] != ':') return null;
    if (mo < 1 or mo > 12 or d < 1 or d > monthDays(y, mo)) return null;
    if (h > 23 or mi > 59 or s > 59) return null;
    var i: usize = 19;
    var fraction: i64 = 0;
    if (i < text.len and text[i] == '.') {
        var n: usize = 0;
        while (i + 1 + n < text.len and std.ascii.isDigit(text[i + 1 + n])) n += 1;
        if (n < 1 or n > 7) return null;
        fraction = (fixedDigits(text, i + 1, n) orelse return null) *
            std.math.pow(i64, 10, @intCast(7 - n));
        i += 1 + n;
    }
    const rest = text[i..];
    var offset: i64 = 0;
    if (rest.len == 1 and (rest[0] == 'Z' or rest[0] == 'z')) {
        offset = 0;
    } else if (rest.len == 6 and (rest[0] == '+' or rest[0] == '-') and rest[3] == ':') {
        const oh = fixedDigits(rest, 1, 2) orelse return null;
        const om = fixedDigits(rest, 4, 2) orelse return null;
        if (oh > 23 or om > 59) return null;
        offset = if (rest[0] == '+') oh * 60 + om else -(oh * 60 + om);
    } else return null;
    const days = daysFromCivil(y, mo, d) - days_to_1601;
    const seconds = days * 86_400 + h * 3600 + mi * 60 + s - offset * 60;
    const ticks = seconds * ticks_per_second + fraction;
    return @as(?u64, std.math.cast(u64, ticks));
}

/// The words of `p`, for the tests.
fn problemText(p: Problem, buf: []u8) []const u8 {
    var w: std.Io.Writer = .fixed(buf);
    p.write(&w) catch unreachable;
    return w.buffered();
}

test "lists: numbers and ranges, refused items in the Rust engine's words" {
    const gpa = std.testing.allocator;
    var problem: Problem = undefined;
    const list = try parseList(gpa, "4624,4625,4700-4799,0,4294967295", &problem);
    defer gpa.free(list);
    const max = std.math.maxInt(u32);
    try std.testing.expectEqualSlices(Range, &.{
        .{ .first = 4624, .last = 4624 },
        .{ .first = 4625, .last = 4625 },
        .{ .first = 4700, .last = 4799 },
        .{ .first = 0, .last = 0 },
        .{ .first = max, .last = max },
    }, list);
    const bad = [_][]const u8{
        "", "1,", ",1", "1,,2", "+1", "-1", "1-", "-", " 1", "1 ", "0x10", "4294967296",
    };
    for (bad) |text| {
        try std.testing.expectError(error.Invalid, parseList(gpa, text, &problem));
        try std.testing.expectEqual(Problem.Kind.list_item, problem.kind);
    }
    var buf: [200]u8 = undefined;
    try std.testing.expectError(error.Invalid, parseList(gpa, "1,5-3", &problem));
    try std.testing.expectEqualStrings(
        "the range '5-3' is empty: its first number is greater than its last",
        problemText(problem, &buf),
    );
    try std.testing.expectError(error.Invalid, parseList(gpa, "1-2-3", &problem));
    try std.testing.expectEqualStrings(
        "expected a number from 0 to 4294967295 or a range such as 4700-4799, got '1-2-3'",
        problemText(problem, &buf),
    );
}

test "names: anything but empty" {
    var problem: Problem = undefined;
    try std.testing.expectEqualStrings(" é ", try parseName(" é ", &problem));
    try std.testing.expectError(error.Invalid, parseName("", &problem));
    var buf: [100]u8 = undefined;
    try std.testing.expectEqualStrings("a name cannot be empty", problemText(problem, &buf));
}

test "times: RFC 3339 to FILETIME ticks" {
    var problem: Problem = undefined;
    // Python's datetime: 2016-07-08T18:12:51.6816408Z is 131124751716816408 ticks.
    const t = try parseTime("2016-07-08T18:12:51.6816408Z", &problem);
    try std.testing.expectEqual(@as(u64, 131_124_751_716_816_408), t);
    try std.testing.expectEqual(t, try parseTime("2016-07-08t20:12:51.6816408+02:00", &problem));
    try std.testing.expectEqual(t, try parseTime("2016-07-08T17:42:51.6816408-00:30", &problem));
    try std.testing.expectEqual(@as(u64, 0), try parseTime("1601-01-01T00:00:00Z", &problem));
    const tick = try parseTime("1601-01-01T00:00:00.0000001z", &problem);
    try std.testing.expectEqual(@as(u64, 1), tick);
    try std.testing.expectEqual(
        @as(u64, 864_000_000_000 + 5_000_000),
        try parseTime("1601-01-02T00:00:00.5Z", &problem),
    );
    const last = try parseTime("9999-12-31T23:59:59.9999999Z", &problem);
    try std.testing.expectEqual(ticks_year_10000, last + 1);
    try std.testing.expectEqual(last + 1, try parseTime("9999-12-31T23:00:00-01:00", &problem));
    var buf: [200]u8 = undefined;
    for ([_][]const u8{ "1601-01-01T00:30:00+01:00", "0000-01-01T00:00:00Z" }) |text| {
        try std.testing.expectError(error.Invalid, parseTime(text, &problem));
        try std.testing.expectEqualStrings(
            "the time is before 1601-01-01T00:00:00Z, where EVTX times begin",
            problemText(problem, &buf),
        );
    }
    const bad = [_][]const u8{
        "",                          "2016-07-08",
        "2016-07-08T18:12:51",       "2016-07-08 18:12:51Z",
        "2016-07-08T18:12:51.Z",     "2016-07-08T18:12:51.12345678Z",
        "2016-07-08T18:12:60Z",      "2016-07-08T24:00:00Z",
        "2016-13-08T18:12:51Z",      "2016-02-30T18:12:51Z",
        "2100-02-29T00:00:00Z",      "2016-07-08T18:12:51+0200",
        "2016-07-08T18:12:51+24:00", "2016-07-08T18:12:51Z ",
        "+016-07-08T18:12:51Z",      "2016-07-08T18:12:51.6816408ZZ",
    };
    for (bad) |text| {
        try std.testing.expectError(error.Invalid, parseTime(text, &problem));
        try std.testing.expectEqual(Problem.Kind.time_syntax, problem.kind);
    }
    try std.testing.expectStringStartsWith(problemText(problem, &buf), "expected an RFC 3339");
}

test "bounds: --since before --until" {
    var f: Filter = .{};
    try std.testing.expect(f.isEmpty() and f.check() == null);
    f.since = 5;
    try std.testing.expect(!f.isEmpty() and f.check() == null);
    f.until = 6;
    try std.testing.expect(f.check() == null);
    f.until = 5;
    var buf: [100]u8 = undefined;
    try std.testing.expectEqualStrings(
        "--since must be earlier than --until",
        problemText(f.check().?, &buf),
    );
}

const testing = @import("testing.zig");
const options = @import("options.zig");
const dump = @import("dump.zig");

/// The lines of `text` (a JSONL run: one record a line).
fn lines(gpa: Allocator, text: []const u8) Allocator.Error![][]const u8 {
    var list: std.ArrayList([]const u8) = .empty;
    var it = std.mem.splitScalar(u8, text, '\n');
    while (it.next()) |line| if (line.len > 0) try list.append(gpa, line);
    return list.toOwnedSlice(gpa);
}

/// A filter of the table the tests share with the Rust engine, and the records of
/// synthetic/filters.evtx it keeps.
const Case = struct { filter: Filter, want: []const u64 };

/// The filters.evtx table (`t0`: 2024-05-01T08:00:00Z), as the Rust engine's
/// `filter_cases`.
fn filterCases(t0: u64) [14]Case {
    const id_4624 = [_]Range{.{ .first = 4624, .last = 4624 }};
    const ids_4624_4625 = [_]Range{
        .{ .first = 4625, .last = 4625 },
        .{ .first = 4624, .last = 4624 },
    };
    const ids_none = [_]Range{
        .{ .first = 1, .last = 4623 },
        .{ .first = 4626, .last = 7044 },
        .{ .first = 7046, .last = std.math.maxInt(u32) },
    };
    const ids_high = [_]Range{.{ .first = 4700, .last = 7045 }};
    const level_4 = [_]Range{.{ .first = 4, .last = 4 }};
    const levels_low = [_]Range{.{ .first = 0, .last = 2 }};
    const auditing = [_][]const u8{ "microsoft-windows-security-auditing", "nobody" };
    const proevider = [_][]const u8{"Pr\u{f6}vider"};
    const proevider_upper = [_][]const u8{"PR\u{d6}VIDER"};
    const security = [_][]const u8{"SECURITY"};
    const security_lower = [_][]const u8{"security"};
    return .{
        .{ .filter = .{ .event_ids = &id_4624 }, .want = &.{ 1, 3, 5, 6, 9 } },
        .{ .filter = .{ .event_ids = &ids_4624_4625 }, .want = &.{ 1, 2, 3, 5, 6, 9, 10 } },
        .{ .filter = .{ .event_ids = &ids_high }, .want = &.{4} },
        .{ .filter = .{ .event_ids = &ids_none }, .want = &.{} },
        .{ .filter = .{ .providers = &auditing }, .want = &.{ 1, 2, 3 } },
        .{ .filter = .{ .providers = &proevider }, .want = &.{8} },
        .{ .filter = .{ .providers = &proevider_upper }, .want = &.{} },
        .{ .filter = .{ .channels = &security }, .want = &.{ 1, 2, 3, 6, 8, 9, 10 } },
        .{ .filter = .{ .levels = &level_4 }, .want = &.{ 3, 4, 6, 9, 10 } },
        .{ .filter = .{ .levels = &levels_low }, .want = &.{ 1, 2, 5 } },
        .{ .filter = .{ .since = t0 }, .want = &.{ 1, 2, 3, 4, 8, 9, 10 } },
        .{ .filter = .{ .until = t0 + 1 }, .want = &.{ 1, 5 } },
        .{ .filter = .{ .since = t0 + 10_000_000, .until = t0 + 36_000_000_000 }, .want = &.{3} },
        .{
            .filter = .{ .event_ids = &id_4624, .channels = &security_lower },
            .want = &.{ 1, 3, 6, 9 },
        },
    };
}

test "filters keep the records the rules pick (synthetic/filters.evtx)" {
    // The fixture's description (shared-fixtures/README.md) says what each record holds;
    // the Rust engine's `filters_keep_the_records_the_rules_pick` holds the same table.
    const gpa = std.testing.allocator;
    const bytes = try testing.readFixture(gpa, "synthetic/filters.evtx");
    defer gpa.free(bytes);
    const plain: options.Options = .{ .format = .jsonl, .show_record_number = false };
    const all_text = try testing.dumpBytes(gpa, bytes, &plain, true);
    defer gpa.free(all_text);
    const all = try lines(gpa, all_text);
    defer gpa.free(all);
    try std.testing.expectEqual(@as(usize, 10), all.len);
    var problem: Problem = undefined;
    const t0 = try parseTime("2024-05-01T08:00:00Z", &problem);
    const cases = filterCases(t0);
    var expected: std.ArrayList(u8) = .empty;
    defer expected.deinit(gpa);
    for (cases) |case| {
        expected.clearRetainingCapacity();
        for (case.want) |id| {
            try expected.appendSlice(gpa, all[id - 1]);
            try expected.append(gpa, '\n');
        }
        var settings = plain;
        settings.filter = case.filter;
        for ([_]bool{ true, false }) |compiled| {
            const got = try testing.dumpBytes(gpa, bytes, &settings, compiled);
            defer gpa.free(got);
            try std.testing.expectEqualStrings(expected.items, got);
        }
    }
    // `--events` composes (AND).
    var settings = plain;
    settings.filter = cases[0].filter;
    const events = [_]options.Range{ .{ .first = 1, .last = 3 }, .{ .first = 9, .last = 9 } };
    settings.event_ranges = &events;
    const got = try testing.dumpBytes(gpa, bytes, &settings, true);
    defer gpa.free(got);
    const want = try std.mem.concat(gpa, u8, &.{ all[0], "\n", all[2], "\n", all[8], "\n" });
    defer gpa.free(want);
    try std.testing.expectEqualStrings(want, got);
}

test "filtered runs fail as unfiltered runs (damaged and carving fixtures)" {
    // A filter that keeps nothing and one that keeps most give the unfiltered run's error
    // entries (kind, detail, record id, offset), with and without `--recover-records`; the
    // Rust engine's `filtered_runs_fail_as_unfiltered_runs`. record-output-large fails a
    // replayed record for its size: the filter must replay it to fail it.
    const gpa = std.testing.allocator;
    const names = [_][]const u8{
        "damaged/bad-chunks.evtx",           "damaged/wrapped.evtx",
        "damaged/chunk-header-ids.evtx",     "damaged/header-count-large.evtx",
        "damaged/bad-offsets.evtx",          "damaged/bad-records.evtx",
        "damaged/invalid-binxml.evtx",       "damaged/record-output-element.evtx",
        "damaged/record-output-large.evtx",  "damaged/unsupported-types.evtx",
        "damaged/unused-binxml-json.evtx",   "carving/wrapped-stale.evtx",
        "carving/cleared-chunk.evtx",        "carving/template-gone.evtx",
        "carving/unused-binxml.evtx",        "carving/cut-last-chunk.evtx",
        "carving/nested-unused-binxml.evtx", "carving/slack-and-gaps.evtx",
    };
    const nothing = [_]Range{.{ .first = std.math.maxInt(u32), .last = std.math.maxInt(u32) }};
    const most = [_]Range{.{ .first = 0, .last = 5 }};
    const filters = [_]Filter{ .{ .event_ids = &nothing }, .{ .levels = &most, .since = 0 } };
    var errors_seen: usize = 0;
    var plain_res = dump.ChunkResult.init(gpa);
    defer plain_res.deinit();
    var res = dump.ChunkResult.init(gpa);
    defer res.deinit();
    for (names) |name| {
        const bytes = try testing.readFixture(gpa, name);
        defer gpa.free(bytes);
        for ([_]bool{ false, true }) |recover| {
            var settings: options.Options = .{ .format = .jsonl, .recover_records = recover };
            const in = dump.Input.fromBytes(bytes);
            const f = dump.EvtxFile.open(gpa, in, &settings) catch continue;
            var slots = f.order.iterator();
            while (slots.next()) |slot| {
                settings.filter = .{};
                try testing.renderSlot(gpa, bytes, slot, &settings, &plain_res);
                for (filters) |filter| {
                    settings.filter = filter;
                    try testing.renderSlot(gpa, bytes, slot, &settings, &res);
                    var failed: usize = 0;
                    for (plain_res.entries.items) |*e| {
                        if (e.outcome != .failed) continue;
                        const got = res.entries.items;
                        while (failed < got.len and got[failed].outcome != .failed) failed += 1;
                        try std.testing.expect(failed < got.len);
                        const g = &got[failed];
                        try std.testing.expectEqual(e.record_id, g.record_id);
                        try std.testing.expectEqual(e.file_offset, g.file_offset);
                        try std.testing.expectEqual(e.kind(), g.kind());
                        try std.testing.expectEqualStrings(e.detail(), g.detail());
                        failed += 1;
                        errors_seen += 1;
                    }
                    try std.testing.expectEqual(plain_res.failures, res.failures);
                }
            }
        }
    }
    try std.testing.expect(errors_seen > 50);
}
