//! Rendering options with `evtx_dump`'s defaults (contract section 11), and the parsers of the
//! option values the CLI and the C ABI share (the twin of `rust/evtx-core/src/options.rs`).
const std = @import("std");
const assert = std.debug.assert;
const Allocator = std.mem.Allocator;
const values_format = @import("values_format.zig");
const code_pages = @import("code_pages.zig");
const mta = @import("mta.zig");
const wevt_cache = @import("wevt_cache.zig");
const filter = @import("filter.zig");
const provenance = @import("provenance.zig");

/// Output format (`-o`).
pub const Format = enum { xml, json, jsonl };

/// An inclusive range of record header ids (`--events`); `first > last` matches nothing.
pub const Range = struct { first: u64, last: u64 };

/// What to render and how. The defaults match `evtx_dump` without options.
pub const Options = struct {
    format: Format = .xml,
    indent: bool = true,
    show_record_number: bool = true,
    separate_json_attributes: bool = false,
    validate_checksums: bool = false,
    /// `--recover-records`: also carve stale records (5.4, carve.zig).
    recover_records: bool = false,
    ansi_codec: values_format.Codec = values_format.default_codec,
    /// Records to print (by record header id); empty = all.
    event_ranges: []const Range = &.{},
    /// `--event-id`, `--provider`, `--channel`, `--level`, `--since`, `--until`: only the
    /// records whose `System` fields it keeps (filter.zig); empty by default.
    filter: filter.Filter = .{},
    /// `--mta FILE`: localized strings added to each record as `RenderingInfo` (mta.zig).
    mta: ?*const mta.MtaFile = null,
    /// `--wevt-cache FILE`: provider templates standing in for broken or missing
    /// definitions (wevt_cache.zig).
    wevt_cache: ?*const wevt_cache.WevtCache = null,
    /// `--provenance`: each record's text gains where it came from, the input named as here
    /// (provenance.zig).
    provenance: ?*const provenance.Provenance = null,

    /// Whether `--events` keeps record `id` (the Rust engine's `Options::wants_record`).
    pub fn wantsRecord(o: *const Options, id: u64) bool {
        if (o.event_ranges.len == 0) return true;
        for (o.event_ranges) |r| {
            if (id >= r.first and id <= r.last) return true;
        }
        return false;
    }
};

/// A decimal as Rust's `from_str` reads it (what the reference's clap and range parsers
/// use): an optional `+`, then one or more ASCII digits; no spaces, no `_`.
pub fn parseDecimal(comptime T: type, text: []const u8) ?T {
    const digits = if (text.len > 0 and text[0] == '+') text[1..] else text;
    if (digits.len == 0) return null;
    var n: T = 0;
    for (digits) |c| {
        if (c < '0' or c > '9') return null;
        n = std.math.mul(T, n, 10) catch return null;
        n = std.math.add(T, n, c - '0') catch return null;
    }
    return n;
}

/// `--events`: comma-separated `A` or `A-B` (inclusive; `A > B` matches nothing), as the
/// reference reads it. On `error.InvalidRange`, `bad` is the part that is not a range.
pub fn parseEventRanges(
    gpa: Allocator,
    text: []const u8,
    bad: *[]const u8,
) (error{InvalidRange} || Allocator.Error)![]Range {
    var list: std.ArrayList(Range) = .empty;
    errdefer list.deinit(gpa);
    var it = std.mem.splitScalar(u8, text, ',');
    while (it.next()) |part| {
        bad.* = part;
        const dash = std.mem.indexOfScalar(u8, part, '-');
        const a = parseDecimal(u64, if (dash) |d| part[0..d] else part) orelse
            return error.InvalidRange;
        const b = parseDecimal(u64, if (dash) |d| part[d + 1 ..] else part) orelse
            return error.InvalidRange;
        try list.append(gpa, .{ .first = a, .last = b });
    }
    return list.toOwnedSlice(gpa);
}

/// `--ansi-codec`: the code page of an Encoding Standard label, or null when unknown or not
/// ASCII-compatible (code_pages.zig).
pub fn parseAnsiCodec(label: []const u8) ?values_format.Codec {
    return code_pages.lookup(label);
}

test "event ranges as the reference reads them" {
    const gpa = std.testing.allocator;
    var bad: []const u8 = "";
    const ranges = try parseEventRanges(gpa, "1-3,+5,9-8", &bad);
    defer gpa.free(ranges);
    try std.testing.expectEqualSlices(Range, &.{
        .{ .first = 1, .last = 3 }, .{ .first = 5, .last = 5 }, .{ .first = 9, .last = 8 },
    }, ranges);
    try std.testing.expectError(error.InvalidRange, parseEventRanges(gpa, "1,2- 3", &bad));
    try std.testing.expectEqualStrings("2- 3", bad);
    const o: Options = .{ .event_ranges = ranges };
    try std.testing.expect(o.wantsRecord(2) and o.wantsRecord(5));
    try std.testing.expect(!o.wantsRecord(4) and !o.wantsRecord(9));
    try std.testing.expect((Options{}).wantsRecord(4));
}

test "parseDecimal reads what Rust's from_str reads" {
    try std.testing.expectEqual(@as(?u32, 42), parseDecimal(u32, "42"));
    try std.testing.expectEqual(@as(?u32, 42), parseDecimal(u32, "+42"));
    try std.testing.expectEqual(@as(?u32, 7), parseDecimal(u32, "007"));
    for ([_][]const u8{ "", "+", "-1", " 1", "1 ", "1_000", "0x10", "4294967296" }) |text| {
        try std.testing.expectEqual(@as(?u32, null), parseDecimal(u32, text));
    }
    const u64_max: ?u64 = std.math.maxInt(u64);
    try std.testing.expectEqual(u64_max, parseDecimal(u64, "18446744073709551615"));
    try std.testing.expectEqual(@as(?u64, null), parseDecimal(u64, "18446744073709551616"));
}
