//! IEEE CRC-32 (zlib's `crc32`): carry-less multiplication where the build's CPU has PCLMULQDQ,
//! else slicing-by-8.
//!
//! `std.hash.crc.Crc32` processes one byte per table lookup (about 0.2 GB/s); chunk
//! validation hashes every 64 KiB chunk, so we use eight tables and consume eight bytes
//! per step (about 2.7 instructions a byte). `triage` checks every chunk of every log, where
//! that was a quarter of its instructions: folding 64 bytes a step with PCLMULQDQ (Intel's
//! "Fast CRC Computation for Generic Polynomials Using PCLMULQDQ", the constants and final
//! reduction of the crate `crc32fast`, which evtx-rs uses) is chosen at compile time, as the
//! escaper's SSSE3 kernel is (the CLI is built for its machine, the wheel's library for
//! baseline x86-64).
const std = @import("std");
const builtin = @import("builtin");

/// Whether the build's CPU multiplies without carries (`pclmulqdq`).
const has_clmul = builtin.cpu.arch == .x86_64 and
    std.Target.x86.featureSetHas(builtin.cpu.features, .pclmul);

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
    if (has_clmul and bytes.len >= fold_bytes) {
        const whole = bytes.len & ~@as(usize, 15);
        return updateTables(fold(state, bytes[0..whole]), bytes[whole..]);
    }
    return updateTables(state, bytes);
}

/// `update` by the tables, eight bytes a step.
fn updateTables(state: u32, bytes: []const u8) u32 {
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

/// Bytes folded four lanes at a time (`fold`'s least input).
const fold_bytes = 64;
/// x^(4*128+64) mod P, x^(4*128) mod P (four lanes), x^(128+64), x^128 (one lane), x^64 mod P;
/// P and its Barrett constant, all bit-reflected (`crc32fast`'s K1-K5, P_X, U_PRIME).
const k1: u64 = 0x154442bd4;
const k2: u64 = 0x1c6e41596;
const k3: u64 = 0x1751997d0;
const k4: u64 = 0x0ccaa009e;
const k5: u64 = 0x163cd6124;
const p_x: u64 = 0x1DB710641;
const u_prime: u64 = 0x1F7011641;

/// The carry-less product of `a` and `b`.
inline fn clmul(a: u64, b: u64) u128 {
    const V = @Vector(2, u64);
    const product = asm ("pclmulqdq $0x00, %[b], %[a]"
        : [ret] "=x" (-> V),
        : [a] "0" (V{ a, 0 }),
          [b] "x" (V{ b, 0 }),
    );
    return @bitCast(product);
}

/// `a` folded over 128 bits (by `lo`, `hi`) into `b`.
inline fn fold128(a: u128, b: u128, lo: u64, hi: u64) u128 {
    return b ^ clmul(@truncate(a), lo) ^ clmul(@truncate(a >> 64), hi);
}

inline fn load(bytes: []const u8, at: usize) u128 {
    return std.mem.readInt(u128, bytes[at..][0..16], .little);
}

/// `update` over `bytes`, 64 or more and a multiple of 16, by carry-less multiplication.
fn fold(state: u32, bytes: []const u8) u32 {
    std.debug.assert(bytes.len >= fold_bytes and bytes.len % 16 == 0);
    var x: [4]u128 = undefined;
    for (&x, 0..) |*lane, i| lane.* = load(bytes, 16 * i);
    x[0] ^= ~state;
    var at: usize = fold_bytes;
    while (bytes.len - at >= fold_bytes) : (at += fold_bytes) {
        for (&x, 0..) |*lane, i| lane.* = fold128(lane.*, load(bytes, at + 16 * i), k1, k2);
    }
    var r = fold128(fold128(fold128(x[0], x[1], k3, k4), x[2], k3, k4), x[3], k3, k4);
    while (at < bytes.len) : (at += 16) r = fold128(r, load(bytes, at), k3, k4);
    // 128 bits to 64, then Barrett's reduction to 32 (the bit-reflected variant).
    r = clmul(@truncate(r), k4) ^ (r >> 64);
    r = clmul(@as(u32, @truncate(r)), k5) ^ (r >> 32);
    const t1 = clmul(@as(u32, @truncate(r)), u_prime);
    const t2 = clmul(@as(u32, @truncate(t1)), p_x);
    return ~@as(u32, @truncate((r ^ t2) >> 32));
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

test "crc32: the carry-less fold equals the tables at every length and start" {
    var prng = std.Random.DefaultPrng.init(0xc4c32);
    var buf: [700]u8 = undefined;
    prng.random().bytes(&buf);
    for (0..buf.len) |len| {
        for ([_]u32{ 0, 0xFFFFFFFF, 0x12345678 }) |state| {
            const want = updateTables(state, buf[0..len]);
            try std.testing.expectEqual(want, update(state, buf[0..len]));
        }
    }
    try std.testing.expectEqual(std.hash.crc.Crc32.hash(&buf), hash(&buf));
}
