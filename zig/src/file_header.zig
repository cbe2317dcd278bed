//! The EVTX file header (contract section 2) and the chunk slot arithmetic (3.1).
const std = @import("std");
const assert = std.debug.assert;
const crc32 = @import("crc32.zig");

/// Chunks are located as if the header block were always this large (section 1).
pub const block_size = 4096;
pub const chunk_size = 65536;
pub const magic = "ElfFile\x00";

pub const flag_no_crc32: u32 = 0x4;

comptime {
    assert(chunk_size == 1 << 16);
    assert(block_size % 512 == 0);
}

pub const Error = error{ FileTooShort, BadFileMagic };

pub const FileHeader = struct {
    first_chunk: u64,
    last_chunk: u64,
    next_record_id: u64,
    header_block_size: u16,
    chunk_count: u16,
    flags: u32,
    checksum_stored: u32,
    checksum_computed: u32,
    /// Chunk slots in the file (3.1).
    chunk_slots: u64,

    /// The header CRC warning applies (2): flags lack NO_CRC32 and the CRC differs.
    pub fn checksumMismatch(h: *const FileHeader) bool {
        return h.flags & flag_no_crc32 == 0 and h.checksum_stored != h.checksum_computed;
    }
};

/// Parses the header of a whole file held in memory. Fatal errors only.
pub fn parse(file: []const u8) Error!FileHeader {
    if (file.len < block_size) return error.FileTooShort;
    if (!std.mem.eql(u8, file[0..8], magic)) return error.BadFileMagic;
    const header_block_size = std.mem.readInt(u16, file[40..42], .little);
    if (file.len < header_block_size) return error.FileTooShort;
    return .{
        .first_chunk = std.mem.readInt(u64, file[8..16], .little),
        .last_chunk = std.mem.readInt(u64, file[16..24], .little),
        .next_record_id = std.mem.readInt(u64, file[24..32], .little),
        .header_block_size = header_block_size,
        .chunk_count = std.mem.readInt(u16, file[42..44], .little),
        .flags = std.mem.readInt(u32, file[120..124], .little),
        .checksum_stored = std.mem.readInt(u32, file[124..128], .little),
        .checksum_computed = crc32.hash(file[0..120]),
        .chunk_slots = (file.len - header_block_size) / chunk_size,
    };
}

/// File offset of chunk slot `slot`.
pub fn chunkOffset(slot: u64) u64 {
    return block_size + slot * chunk_size;
}

/// The 64 KiB of slot `slot`, or null when the file does not hold all of it.
pub fn chunkBytes(file: []const u8, slot: u64) ?*const [chunk_size]u8 {
    if (slot > (file.len / chunk_size) + 1) return null;
    const start = chunkOffset(slot);
    if (start > file.len or file.len - start < chunk_size) return null;
    return file[start..][0..chunk_size];
}

/// The bytes the file holds of slot `slot`: 65536, fewer for a slot the file ends inside,
/// none past the end.
pub fn slotBytes(file: []const u8, slot: u64) []const u8 {
    if (slot > file.len / chunk_size + 1) return &.{};
    const start = chunkOffset(slot);
    if (start >= file.len) return &.{};
    return file[start..][0..@min(chunk_size, file.len - start)];
}

test "file header: magic, size and slots" {
    var file = [_]u8{0} ** (block_size + 2 * chunk_size + 100);
    try std.testing.expectError(error.BadFileMagic, parse(&file));
    @memcpy(file[0..8], magic);
    std.mem.writeInt(u16, file[40..42], block_size, .little);
    const h = try parse(&file);
    try std.testing.expectEqual(@as(u64, 2), h.chunk_slots);
    try std.testing.expect(h.checksumMismatch() == (h.checksum_computed != 0));
    try std.testing.expectError(error.FileTooShort, parse(file[0..100]));
    try std.testing.expect(chunkBytes(&file, 1) != null);
    try std.testing.expect(chunkBytes(&file, 2) == null);
    try std.testing.expectEqual(@as(usize, 100 - 4096 + block_size), slotBytes(&file, 2).len);
    try std.testing.expectEqual(@as(usize, 0), slotBytes(&file, 3).len);
}
