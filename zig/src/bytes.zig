//! Little-endian reads: the engine's one set (the twin of `rust/evtx-core/src/bytes.rs`).
//!
//! `le*` read where the caller has already checked the bounds (fixed headers of a slice whose
//! length is known) and assert it; `get*` return null out of bounds, for bytes a crafted file
//! controls.
const std = @import("std");
const assert = std.debug.assert;

/// The `u16` at `at`, which must be in bounds.
pub inline fn leU16(data: []const u8, at: usize) u16 {
    return le(u16, data, at);
}

/// The `u32` at `at`, which must be in bounds.
pub inline fn leU32(data: []const u8, at: usize) u32 {
    return le(u32, data, at);
}

/// The `u64` at `at`, which must be in bounds.
pub inline fn leU64(data: []const u8, at: usize) u64 {
    return le(u64, data, at);
}

/// The `T` at `at`, which must be in bounds.
pub inline fn le(comptime T: type, data: []const u8, at: usize) T {
    assert(at <= data.len and data.len - at >= @sizeOf(T));
    return std.mem.readInt(T, data[at..][0..@sizeOf(T)], .little);
}

/// The `u16` at `at`, or null when it passes the end.
pub inline fn getU16(data: []const u8, at: usize) ?u16 {
    return get(u16, data, at);
}

/// The `u32` at `at`, or null when it passes the end.
pub inline fn getU32(data: []const u8, at: usize) ?u32 {
    return get(u32, data, at);
}

/// The `u64` at `at`, or null when it passes the end.
pub inline fn getU64(data: []const u8, at: usize) ?u64 {
    return get(u64, data, at);
}

/// The `T` at `at`, or null when it passes the end.
pub inline fn get(comptime T: type, data: []const u8, at: usize) ?T {
    if (at > data.len or data.len - at < @sizeOf(T)) return null;
    return std.mem.readInt(T, data[at..][0..@sizeOf(T)], .little);
}

test "little-endian reads in bounds and past the end" {
    const data = [_]u8{ 0x01, 0x02, 0x03, 0x04, 0x05, 0x06, 0x07, 0x08, 0x09 };
    try std.testing.expectEqual(@as(u16, 0x0201), leU16(&data, 0));
    try std.testing.expectEqual(@as(u32, 0x05040302), leU32(&data, 1));
    try std.testing.expectEqual(@as(u64, 0x0908070605040302), leU64(&data, 1));
    try std.testing.expectEqual(@as(?u16, 0x0908), getU16(&data, 7));
    try std.testing.expectEqual(@as(?u16, null), getU16(&data, 8));
    try std.testing.expectEqual(@as(?u32, null), getU32(&data, 6));
    try std.testing.expectEqual(@as(?u64, null), getU64(&data, 2));
    try std.testing.expectEqual(@as(?u32, null), getU32(&data, std.math.maxInt(usize)));
}
