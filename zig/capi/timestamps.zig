//! The timestamp texts of a batch's entries: `evtx_parser_batch_timestamps`.
//! The twin of rust/evtx-abi/src/timestamps.rs (same rules, same bytes).
//!
//! The text (pyevtx-rs 0.14's `timestamp`, written down as `evtx_twin._parser.timestamp_text`):
//! RFC 3339 in UTC with the 100 ns ticks, trailing zeros trimmed (no `.` when the ticks are 0),
//! then `Z UTC`: `2025-01-06T07:58:14.6210546Z UTC`. Empty (Python's `None`) for a FILETIME of
//! 0, for a year past 9999 (Python's `datetime` ends there) and for an error entry.
const std = @import("std");

const ticks_per_second: u64 = 10_000_000;
const ticks_per_minute: u64 = 60 * ticks_per_second;
/// Days from 1601-01-01 (the FILETIME epoch) to 1970-01-01.
const days_1601_to_1970: i64 = 134_774;
/// The last year a text is given for (`datetime.MAXYEAR`).
const year_max: i64 = 9999;
/// `YYYY-MM-DDTHH:MM:`, the text shared by every FILETIME of one minute.
const prefix_len = 17;
const Prefix = [prefix_len]u8;

/// The storage behind `evtx_batch_texts`. Invariant: `offsets` has one entry more than the
/// entries pushed since `clear`, and its last entry is `data.items.len`.
pub const Timestamps = struct {
    data: std.ArrayList(u8) = .empty,
    offsets: std.ArrayList(u64) = .empty,
    /// The last minute formatted and its prefix (null: past `year_max`). Records of a log come
    /// mostly in time order, so one entry catches nearly every lookup.
    minute: ?struct { minute: u64, prefix: ?Prefix } = null,

    pub fn deinit(t: *Timestamps, gpa: std.mem.Allocator) void {
        t.data.deinit(gpa);
        t.offsets.deinit(gpa);
    }

    pub fn clear(t: *Timestamps, gpa: std.mem.Allocator) error{OutOfMemory}!void {
        t.data.clearRetainingCapacity();
        t.offsets.clearRetainingCapacity();
        try t.offsets.append(gpa, 0);
    }

    /// Appends the text of `filetime`, or an empty text for null (an error entry).
    pub fn push(t: *Timestamps, gpa: std.mem.Allocator, filetime: ?u64) error{OutOfMemory}!void {
        std.debug.assert(t.offsets.items.len > 0);
        if (filetime) |f| if (f != 0) try t.format(gpa, f);
        try t.offsets.append(gpa, t.data.items.len);
    }

    pub fn len(t: *const Timestamps) usize {
        return t.offsets.items.len -| 1;
    }

    fn format(t: *Timestamps, gpa: std.mem.Allocator, filetime: u64) error{OutOfMemory}!void {
        const minute = filetime / ticks_per_minute;
        const cached = if (t.minute) |m| m.minute == minute else false;
        if (!cached) t.minute = .{ .minute = minute, .prefix = minutePrefix(minute) };
        const prefix = t.minute.?.prefix orelse return;
        const rest = filetime % ticks_per_minute;
        const second = rest / ticks_per_second;
        const ticks = rest % ticks_per_second;
        // The longest text: prefix, `SS`, `.` and 7 digits, `Z UTC`.
        var text: [prefix_len + 2 + 8 + 5]u8 = undefined;
        @memcpy(text[0..prefix_len], &prefix);
        text[prefix_len..][0..2].* = twoDigits(second);
        var used: usize = prefix_len + 2;
        if (ticks != 0) {
            var fraction: [8]u8 = undefined;
            fraction[0] = '.';
            var left = ticks;
            var i: usize = 7;
            while (i > 0) : (i -= 1) {
                fraction[i] = '0' + @as(u8, @intCast(left % 10));
                left /= 10;
            }
            const n = fraction.len - trailingZeros(ticks);
            @memcpy(text[used..][0..n], fraction[0..n]);
            used += n;
        }
        text[used..][0..5].* = "Z UTC".*;
        used += 5;
        try t.data.appendSlice(gpa, text[0..used]);
    }
};

/// Trailing decimal zeros of a tick count of 1..=9,999,999 (0..=6).
fn trailingZeros(ticks: u64) usize {
    std.debug.assert(ticks != 0 and ticks < ticks_per_second);
    var left = ticks;
    var zeros: usize = 0;
    while (left % 10 == 0) : (left /= 10) zeros += 1;
    return zeros;
}

fn twoDigits(value: u64) [2]u8 {
    std.debug.assert(value < 100);
    return .{ '0' + @as(u8, @intCast(value / 10)), '0' + @as(u8, @intCast(value % 10)) };
}

/// `YYYY-MM-DDTHH:MM:` of the FILETIME minute `minute`, or null past `year_max`.
fn minutePrefix(minute: u64) ?Prefix {
    // maxInt(u64) ticks is 30.7 million days: every value fits an i64 with room.
    const days: i64 = @intCast(minute / 1440);
    const of_day = minute % 1440;
    const date = civil(days - days_1601_to_1970);
    if (date.year > year_max) return null;
    std.debug.assert(date.year >= 1601);
    const year: u64 = @intCast(date.year);
    var out: Prefix = "0000-00-00T00:00:".*;
    out[0..2].* = twoDigits(year / 100);
    out[2..4].* = twoDigits(year % 100);
    out[5..7].* = twoDigits(date.month);
    out[8..10].* = twoDigits(date.day);
    out[11..13].* = twoDigits(of_day / 60);
    out[14..16].* = twoDigits(of_day % 60);
    return out;
}

const Date = struct { year: i64, month: u64, day: u64 };

/// The proleptic Gregorian date of `days` since 1970-01-01 (H. Hinnant's `civil_from_days`:
/// eras of 400 years, years starting in March).
fn civil(days: i64) Date {
    const z = days + 719_468;
    const era = @divFloor(z, 146_097);
    const doe = @mod(z, 146_097);
    const yoe_days = doe - @divTrunc(doe, 1460) + @divTrunc(doe, 36_524) - @divTrunc(doe, 146_096);
    const yoe = @divTrunc(yoe_days, 365);
    const doy = doe - (365 * yoe + @divTrunc(yoe, 4) - @divTrunc(yoe, 100));
    const mp = @divTrunc(5 * doy + 2, 153);
    const day = doy - @divTrunc(153 * mp + 2, 5) + 1;
    const month = if (mp < 10) mp + 3 else mp - 9;
    const year = yoe + era * 400 + @intFromBool(month <= 2);
    return .{ .year = year, .month = @intCast(month), .day = @intCast(day) };
}

const testing = std.testing;

fn expectTexts(filetimes: []const ?u64, want: []const []const u8) !void {
    var t: Timestamps = .{};
    defer t.deinit(testing.allocator);
    try t.clear(testing.allocator);
    for (filetimes) |f| try t.push(testing.allocator, f);
    try testing.expectEqual(want.len, t.len());
    for (want, 0..) |w, i| {
        try testing.expectEqualStrings(w, t.data.items[t.offsets.items[i]..t.offsets.items[i + 1]]);
    }
}

// Expected texts: the date and time by Python's `datetime(1601, 1, 1) +
// timedelta(seconds=filetime // 10**7)`, the ticks `filetime % 10**7` written by hand (the
// first four are python/tests/test_inputs.py's), not by this code; the same as the Rust twin's.
test "known FILETIMEs" {
    try expectTexts(&.{
        131_000_000_000_000_000, // 0 ticks: no fraction, no dot.
        131_000_000_000_000_001,
        131_000_000_000_010_000, // Trailing zeros trimmed.
        131_000_000_000_000_010,
        131_000_000_005_000_000,
        1, // The epoch's first tick, and its first second.
        10_000_000,
        116_444_736_000_000_000, // The Unix epoch, a leap day, the last tick of 9999.
        125_963_423_999_999_999,
        2_650_467_743_999_999_999,
    }, &.{
        "2016-02-15T08:53:20Z UTC",
        "2016-02-15T08:53:20.0000001Z UTC",
        "2016-02-15T08:53:20.001Z UTC",
        "2016-02-15T08:53:20.000001Z UTC",
        "2016-02-15T08:53:20.5Z UTC",
        "1601-01-01T00:00:00.0000001Z UTC",
        "1601-01-01T00:00:01Z UTC",
        "1970-01-01T00:00:00Z UTC",
        "2000-02-29T23:59:59.9999999Z UTC",
        "9999-12-31T23:59:59.9999999Z UTC",
    });
}

test "empty for 0, error entries and years past 9999" {
    // 2_650_467_744_000_000_000 is 10000-01-01, 0x7FFF_FFFF_FFFF_FFFF (Windows' largest
    // FILETIME) in 30828, maxInt(u64) in 60056.
    try expectTexts(&.{
        0,
        null,
        2_650_467_744_000_000_000,
        0x7FFF_FFFF_FFFF_FFFF,
        std.math.maxInt(u64),
        1,
    }, &.{ "", "", "", "", "", "1601-01-01T00:00:00.0000001Z UTC" });
}
