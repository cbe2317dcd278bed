//! Chunks (contract sections 3-4): the chunk header, optional CRC validation, the string
//! table check. The records in a chunk are records.zig's. The twin of
//! `rust/evtx-core/src/chunk.rs`.
const std = @import("std");
const assert = std.debug.assert;
const crc32 = @import("crc32.zig");
const bytes_le = @import("bytes.zig");
const errors = @import("error.zig");
const file_header = @import("file_header.zig");

pub const size = file_header.chunk_size;
pub const header_size = 512;
pub const magic = "ElfChnk\x00";
pub const flag_no_crc32: u32 = 0x4;

pub const ErrorKind = errors.ErrorKind;

pub const ChunkHeader = struct {
    first_record_id: u64,
    last_record_id: u64,
    last_record_offset: u32,
    free_space_offset: u32,
    records_checksum: u32,
    flags: u32,
    header_checksum: u32,

    pub fn read(bytes: *const [size]u8) ChunkHeader {
        return .{
            .first_record_id = bytes_le.leU64(bytes, 24),
            .last_record_id = bytes_le.leU64(bytes, 32),
            .last_record_offset = bytes_le.leU32(bytes, 44),
            .free_space_offset = bytes_le.leU32(bytes, 48),
            .records_checksum = bytes_le.leU32(bytes, 52),
            .flags = bytes_le.leU32(bytes, 120),
            .header_checksum = bytes_le.leU32(bytes, 124),
        };
    }

    /// End of the live record area.
    pub fn liveEnd(h: *const ChunkHeader) u32 {
        return @min(h.free_space_offset, size);
    }
};

pub fn hasMagic(bytes: []const u8) bool {
    return bytes.len >= 8 and std.mem.eql(u8, bytes[0..8], magic);
}

pub fn isEmpty(bytes: *const [size]u8) bool {
    const V = @Vector(64, u8);
    var acc: V = @splat(0);
    var i: usize = 0;
    while (i < size) : (i += 64) acc |= @as(V, bytes[i..][0..64].*);
    return @reduce(.Or, acc) == 0;
}

pub fn headerChecksum(bytes: *const [size]u8) u32 {
    return crc32.update(crc32.hash(bytes[0..120]), bytes[128..512]);
}

/// `--validate-checksums` (4.2); null when the chunk passes.
pub fn validateChecksums(bytes: *const [size]u8, h: *const ChunkHeader) ?ErrorKind {
    if (h.flags & flag_no_crc32 != 0) return null;
    if (headerChecksum(bytes) != h.header_checksum) return .bad_chunk_header_checksum;
    if (h.free_space_offset < header_size or h.free_space_offset > size)
        return .bad_chunk_free_space_offset;
    if (crc32.hash(
        bytes[header_size..h.free_space_offset],
    ) != h.records_checksum) return .bad_chunk_records_checksum;
    return null;
}

/// The first entry of a string table that does not decode: its chunk offset, the offset the
/// error line names, and the reference's cause where the bytes tell it (Rust's
/// `check_string_table` carries both in its `Failure`).
pub const TableFault = struct {
    at: u32,
    cause: ?errors.Cause,
};

/// The string table check (4.3): every bucket chain must decode. Returns the first entry that
/// does not (buckets in order, each chain from its head); null when all do. `visited` is
/// scratch.
pub fn stringTableFault(
    bytes: *const [size]u8,
    visited: *std.bit_set.ArrayBitSet(usize, size),
) ?TableFault {
    visited.* = .initEmpty();
    for (0..64) |bucket| {
        var offset = bytes_le.leU32(bytes, 128 + 4 * bucket);
        var linked = false;
        while (offset != 0) : (linked = true) {
            if (offset >= size) return tableFault(bytes, offset, linked);
            // Not `visited.isSet`: it takes the 8 KiB set by value, a `memcpy` per entry
            // (2 % of the dump, PERF.md H29).
            if (visited.masks[offset >> 6] & (@as(usize, 1) << @intCast(offset & 63)) != 0) break;
            visited.set(offset);
            if (size - offset < 8) return tableFault(bytes, offset, linked);
            const count: u32 = bytes_le.leU16(bytes, offset + 6);
            if (size - offset - 8 < 2 * count + 2) return tableFault(bytes, offset, linked);
            if (!utf16Valid(bytes[offset + 8 ..][0 .. 2 * count])) {
                return tableFault(bytes, offset, linked);
            }
            offset = bytes_le.leU32(bytes, offset);
        }
    }
    return null;
}

/// The fault of the entry at `at` (reached through a link when `linked`), with the
/// reference's cause: its walk moves past the chunk (`cursor.position` for a bucket's head,
/// `next xml string` for a link) or reads a name that is not UTF-16 (at its length field). A
/// read the chunk's end cuts short is not told.
fn tableFault(bytes: *const [size]u8, at: u32, linked: bool) TableFault {
    @branchHint(.cold);
    const kind: errors.CauseKind = if (linked) .table_link_past_end else .table_start_past_end;
    if (at > size) return .{ .at = at, .cause = .{ .kind = kind, .offset = at } };
    const readable = at <= size - 8 and
        size - at - 8 >= 2 * @as(u32, bytes_le.leU16(bytes, at + 6)) + 2;
    if (!readable) return .{ .at = at, .cause = null };
    return .{ .at = at, .cause = .{ .kind = .table_name_invalid, .offset = at + 6 } };
}

/// Whether a string table name decodes: UTF-16 up to its first NUL unit (or its end), every
/// surrogate paired. Four units a step first while a word has neither a NUL nor a surrogate
/// (names are ASCII nearly always; PERF.md H102, the Rust engine's H87): the units before the
/// first word that has one are valid whatever follows, so the exact scan starts there.
fn utf16Valid(units: []const u8) bool {
    const n = units.len / 2;
    var i: usize = 0;
    while (i + 4 <= n) : (i += 4) {
        const w = std.mem.readInt(u64, units[2 * i ..][0..8], .little);
        if (hasZeroUnit(w) or hasSurrogateUnit(w)) break;
    }
    return utf16ValidFrom(units, i);
}

/// `utf16Valid` unit by unit from unit `start` (the units before it neither NUL nor a
/// surrogate); with `start` 0, the simple form the word steps are tested against.
fn utf16ValidFrom(units: []const u8, start: usize) bool {
    const n = units.len / 2;
    assert(start <= n);
    var i: usize = start;
    while (i < n) : (i += 1) {
        const u = bytes_le.leU16(units, 2 * i);
        if (u == 0) return true;
        if (u >= 0xD800 and u < 0xDC00) {
            if (i + 1 >= n) return false;
            const lo = bytes_le.leU16(units, 2 * i + 2);
            if (lo < 0xDC00 or lo >= 0xE000) return false;
            i += 1;
        } else if (u >= 0xDC00 and u < 0xE000) return false;
    }
    return true;
}

/// Whether one of the four UTF-16 units of `w` (little-endian lanes) is 0: the borrow of
/// `lane - 1` reaches a lane's top bit only where the lane is 0 or has its top bit set, and
/// `~w` keeps the former (the lowest lane that is 0 is always found: the answer is exact).
inline fn hasZeroUnit(w: u64) bool {
    return (w -% 0x0001_0001_0001_0001) & ~w & 0x8000_8000_8000_8000 != 0;
}

/// Whether one of the four UTF-16 units of `w` is a surrogate (0xD800..0xDFFF).
inline fn hasSurrogateUnit(w: u64) bool {
    return hasZeroUnit((w & 0xF800_F800_F800_F800) ^ 0xD800_D800_D800_D800);
}

test "utf16Valid: the word steps equal the unit-by-unit answer (H102)" {
    // Lanes that sit at the edges of the two bit tricks: NUL, 1, 0x0100, 0x8000, 0xFFFF, both
    // surrogate halves and their neighbours, with ASCII between.
    const pool = [_]u16{
        0,      1,      0x0100, 0x8000, 0xFFFF, 0xD7FF, 0xD800, 0xDBFF,
        0xDC00, 0xDFFF, 0xE000, 'A',    'z',    ' ',    0x7F,   0x00FF,
    };
    var prng = std.Random.DefaultPrng.init(0x4831_3032);
    const random = prng.random();
    var buffer: [2 * 24]u8 = undefined;
    for (0..20_000) |_| {
        const n = random.uintLessThan(usize, 25);
        for (0..n) |k| {
            const u: u16 = if (random.boolean()) 'a' + random.uintLessThan(u16, 26) else pool[
                random.uintLessThan(usize, pool.len)
            ];
            std.mem.writeInt(u16, buffer[2 * k ..][0..2], u, .little);
        }
        const units = buffer[0 .. 2 * n];
        try std.testing.expectEqual(utf16ValidFrom(units, 0), utf16Valid(units));
    }
}

test "security.evtx chunk 0 reference CRC numbers are reachable by our CRC" {
    // The contract quotes records CRC 4252479141 and header CRC 978805790 for a real chunk;
    // here we only check the header CRC definition covers 0..120 and 128..512.
    var bytes = [_]u8{0} ** size;
    bytes[124] = 0xFF;
    bytes[125] = 0xFF;
    const expected = crc32.update(crc32.hash(bytes[0..120]), bytes[128..512]);
    try std.testing.expectEqual(expected, headerChecksum(&bytes));
}

test "string table faults carry the reference's causes" {
    var bytes = [_]u8{0} ** size;
    var visited: std.bit_set.ArrayBitSet(usize, size) = undefined;
    // A bucket's head past the chunk.
    std.mem.writeInt(u32, bytes[0x80..][0..4], 0x20000, .little);
    try std.testing.expectEqualDeep(TableFault{
        .at = 0x20000,
        .cause = .{ .kind = .table_start_past_end, .offset = 0x20000 },
    }, stringTableFault(&bytes, &visited).?);
    // An entry at 0x100 whose name is a lone low surrogate: told at its length field.
    std.mem.writeInt(u32, bytes[0x80..][0..4], 0x100, .little);
    std.mem.writeInt(u16, bytes[0x106..][0..2], 1, .little);
    std.mem.writeInt(u16, bytes[0x108..][0..2], 0xDC00, .little);
    try std.testing.expectEqualDeep(TableFault{
        .at = 0x100,
        .cause = .{ .kind = .table_name_invalid, .offset = 0x106 },
    }, stringTableFault(&bytes, &visited).?);
    // A valid name linking past the chunk.
    std.mem.writeInt(u16, bytes[0x108..][0..2], 'A', .little);
    std.mem.writeInt(u32, bytes[0x100..][0..4], 0x10001, .little);
    try std.testing.expectEqualDeep(TableFault{
        .at = 0x10001,
        .cause = .{ .kind = .table_link_past_end, .offset = 0x10001 },
    }, stringTableFault(&bytes, &visited).?);
    // A name the chunk's end cuts short: not told.
    std.mem.writeInt(u32, bytes[0x100..][0..4], size - 8, .little);
    std.mem.writeInt(u16, bytes[size - 2 ..][0..2], 4, .little);
    try std.testing.expectEqualDeep(TableFault{
        .at = size - 8,
        .cause = null,
    }, stringTableFault(&bytes, &visited).?);
}
