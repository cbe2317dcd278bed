//! IEEE CRC-32 (zlib's `crc32`), slicing-by-8.
//!
//! `std.hash.crc.Crc32` processes one byte per table lookup (about 0.2 GB/s); chunk
//! validation hashes every 64 KiB chunk, so we use eight tables and consume eight bytes
//! per step. Non-goal: carry-less multiplication (not needed at the sizes we hash).
const std = @import("std");

const polynomial: u32 = 0xEDB88320;

const tables: [8][256]u32 = blk: {
    @setEvalBranchQuota(20000);
    var t: [8][256]u32 = undefined;
    for (0..256) |i| {
        var c: u32 = @intCast(i);
        for (0..8) |_| c = if (c & 1 != 0) (c >> 1) ^ polynomial else c >> 1;
        t[0][i] = c;
    }
    for (0..256) |i| {
        for (1..8) |k| t[k][i] = (t[k - 1][i] >> 8) ^ t[0][t[k - 1][i] & 0xFF];
    }
    break :blk t;
};

/// Continues a CRC over `bytes`. Start with `state = 0`; the result is the final CRC.
pub fn update(state: u32, bytes: []const u8) u32 {
    var c: u32 = ~state;
    var rest = bytes;
    while (rest.len >= 8) {
        const lo = std.mem.readInt(u32, rest[0..4], .little) ^ c;
        const hi = std.mem.readInt(u32, rest[4..8], .little);
        c = tables[7][lo & 0xFF] ^ tables[6][(lo >> 8) & 0xFF] ^
            tables[5][(lo >> 16) & 0xFF] ^ tables[4][lo >> 24] ^
            tables[3][hi & 0xFF] ^ tables[2][(hi >> 8) & 0xFF] ^
            tables[1][(hi >> 16) & 0xFF] ^ tables[0][hi >> 24];
        rest = rest[8..];
    }
    for (rest) |b| c = (c >> 8) ^ tables[0][(c ^ b) & 0xFF];
    return ~c;
}

/// CRC-32 of `bytes`.
pub fn hash(bytes: []const u8) u32 {
    return update(0, bytes);
}

test "crc32 known values (zlib)" {
    try std.testing.expectEqual(@as(u32, 0xCBF43926), hash("123456789"));
    try std.testing.expectEqual(@as(u32, 0), hash(""));
    try std.testing.expectEqual(
        @as(u32, 0x414FA339),
        hash("The quick brown fox jumps over the lazy dog"),
    );
}

test "crc32 incremental equals one-shot and std" {
    var buf: [1000]u8 = undefined;
    for (&buf, 0..) |*b, i| b.* = @truncate(i *% 31 +% 7);
    const one = hash(&buf);
    try std.testing.expectEqual(one, update(update(0, buf[0..333]), buf[333..]));
    try std.testing.expectEqual(std.hash.crc.Crc32.hash(&buf), one);
}
