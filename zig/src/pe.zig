//! `WEVT_TEMPLATE` resources of a PE file (EXE/DLL/SYS), for `extract-wevt-templates`.
//!
//! Providers ship their template definitions as PE resources of type `WEVT_TEMPLATE`. This is
//! the reference's walk (`evtx` 0.15.1, goblin 0.10 in permissive mode): the headers goblin
//! needs to accept the file, the section table to map RVAs to file offsets, then the resource
//! tree root → `WEVT_TEMPLATE` → resource → language → data entry. A fault is one `Fault`,
//! printed in the reference's words; the blobs are slices of the input, never copied.
const std = @import("std");
const limits = @import("limits.zig");
const assert = std.debug.assert;
const ReaderError = @import("reader_error.zig").ReaderError;

const dos_header_size = 64;
const pe_pointer_offset = 0x3c;
const coff_header_size = 20;
const section_header_size = 40;
const data_directories_max = 16;
const resource_table_index = 2;
const directory_header_size = 16;
const directory_entry_size = 8;
const data_entry_size = 16;
const high_bit: u32 = 0x8000_0000;

/// Why a file gave no blobs, in the reference's `WevtTemplateExtractError` words.
pub const Fault = union(enum) {
    invalid_pe: []const u8,
    malformed_pe: []const u8,
    unmapped_rva: u32,
    malformed_resource: []const u8,
    invalid_resource_name,
    too_many_resources,

    pub fn format(fault: Fault, w: *std.Io.Writer) std.Io.Writer.Error!void {
        switch (fault) {
            .invalid_pe => |m| try w.print("input is not a valid PE file: {s}", .{m}),
            .malformed_pe => |m| try w.print("malformed PE file: {s}", .{m}),
            .unmapped_rva => |rva| try w.print(
                "failed to map RVA 0x{x:0>8} to a file offset",
                .{rva},
            ),
            .malformed_resource => |m| try w.print("resource directory is malformed: {s}", .{m}),
            .invalid_resource_name => try w.writeAll("failed to decode UTF-16 resource name"),
            .too_many_resources => try w.print(
                "resource directory is malformed: more than {d} WEVT_TEMPLATE resources",
                .{limits.resources_max},
            ),
        }
    }
};

/// A fault and its file offset: the headers (0) when goblin refuses them, else the field
/// whose value leads nowhere or the first byte of the part that is cut or wrong.
pub const Failure = struct {
    fault: Fault,
    offset: u64,

    /// The error as the CLIs print it.
    pub fn readerError(f: Failure) ReaderError {
        return .init(.pe, f.offset, f.fault);
    }
};

/// One section's mapping fields.
const Section = struct {
    virtual_size: u32,
    virtual_address: u32,
    size_of_raw_data: u32,
    pointer_to_raw_data: u32,
};

/// What the headers give: the resource table's data directory and the section table.
const Image = struct {
    file_alignment: u32,
    resource_rva: u32,
    resource_size: u32,
    /// Where the resource table's data directory entry (RVA, size) lies in the file.
    resource_entry: u64,
    /// The section table's bytes (40 per section), inside the file.
    sections: []const u8,

    fn section(image: *const Image, index: usize) Section {
        const b = image.sections[index * section_header_size ..][0..section_header_size];
        return .{
            .virtual_size = readU32(b, 8),
            .virtual_address = readU32(b, 12),
            .size_of_raw_data = readU32(b, 16),
            .pointer_to_raw_data = readU32(b, 20),
        };
    }

    /// goblin's `find_offset`: the first section whose file-backed span holds `rva`.
    fn fileOffset(image: *const Image, rva: u32) ?u64 {
        const alignment = image.file_alignment;
        if (alignment == 0 or alignment & (alignment - 1) != 0) return null;
        const count = image.sections.len / section_header_size;
        for (0..count) |index| {
            const s = image.section(index);
            const start: u64 = s.virtual_address;
            if (start <= rva and rva < start + readSize(s, alignment))
                return @as(u64, s.pointer_to_raw_data) + (rva - s.virtual_address);
        }
        return null;
    }
};

/// The bytes of a section backed by the file (Peter Ferrie's rounding, as goblin does it).
fn readSize(s: Section, alignment: u32) u64 {
    assert(alignment != 0 and alignment & (alignment - 1) == 0);
    if (s.size_of_raw_data == 0) return 0;
    const page: u64 = 0xfff;
    const raw: u64 = s.size_of_raw_data;
    const pointer: u64 = s.pointer_to_raw_data;
    const a: u64 = alignment;
    const end_aligned = (pointer + raw + a - 1) & ~(a - 1);
    const size = @min(end_aligned - (pointer & ~@as(u64, 0x1ff)), (raw + page) & ~page);
    if (s.virtual_size == 0) return size;
    return @min(size, (@as(u64, s.virtual_size) + page) & ~page);
}

/// The headers as goblin reads them, in its order: DOS header, COFF header, optional header
/// (when its size is not 0), section table. `null` is goblin's refusal.
const Headers = struct {
    image: Image,
    has_optional: bool,
};

fn parseHeaders(bytes: []const u8) ?Headers {
    if (bytes.len < dos_header_size or readU16(bytes, 0) != 0x5a4d) return null;
    const pe_pointer: u64 = readU32(bytes, pe_pointer_offset);
    if (pe_pointer + 4 > bytes.len) return null;
    if (readU32(bytes, @intCast(pe_pointer)) != 0x00004550) return null; // "PE\0\0"
    if (!richHeaderOk(bytes, @intCast(pe_pointer))) return null;
    const coff = pe_pointer + 4;
    if (coff + coff_header_size > bytes.len) return null;
    const section_count: u64 = readU16(bytes, @intCast(coff + 2));
    const optional_size: u64 = readU16(bytes, @intCast(coff + 16));
    const optional = coff + coff_header_size;
    var image: Image = .{
        .file_alignment = 0,
        .resource_rva = 0,
        .resource_size = 0,
        .resource_entry = 0,
        .sections = &.{},
    };
    if (optional_size != 0) {
        if (!parseOptional(bytes, optional, &image)) return null;
    }
    if (section_count > bytes.len / section_header_size) return null;
    const table = optional + optional_size;
    if (table + section_count * section_header_size > bytes.len) return null;
    image.sections = bytes[@intCast(table)..][0..@intCast(section_count * section_header_size)];
    return .{ .image = image, .has_optional = optional_size != 0 };
}

/// goblin's Rich header check between the DOS header and the PE header: a `Rich` marker
/// needs a `DanS` marker (XORed with the key after it) before it.
fn richHeaderOk(bytes: []const u8, pe_pointer: usize) bool {
    assert(pe_pointer + 4 <= bytes.len);
    if (pe_pointer <= pe_pointer_offset or pe_pointer - pe_pointer_offset < 8) return true;
    const stub = bytes[pe_pointer_offset + 4 .. pe_pointer];
    if (stub.len < 8) return true;
    const rich_end = for (0..stub.len - 7) |i| {
        if (readU32(stub, i) == 0x68636952) break i; // "Rich"
    } else return true;
    const key = readU32(stub, rich_end + 4);
    const dans_end = for (0..stub.len - 3) |i| {
        if (readU32(stub, i) ^ key == 0x536e6144) break i + 4; // "DanS"
    } else return false;
    return dans_end < rich_end;
}

/// The optional header at `optional`: PE32 or PE32+, at most 16 data directories.
fn parseOptional(bytes: []const u8, optional: u64, image: *Image) bool {
    if (optional + 2 > bytes.len) return false;
    const directories_at: u64, const count_at: u64 = switch (readU16(bytes, @intCast(optional))) {
        0x10b => .{ optional + 96, optional + 92 },
        0x20b => .{ optional + 112, optional + 108 },
        else => return false,
    };
    if (directories_at > bytes.len) return false;
    image.file_alignment = readU32(bytes, @intCast(optional + 36));
    const directories: u64 = readU32(bytes, @intCast(count_at));
    if (directories > data_directories_max) return false;
    if (directories_at + directories * 8 > bytes.len) return false;
    if (directories > resource_table_index) {
        const at: usize = @intCast(directories_at + resource_table_index * 8);
        image.resource_rva = readU32(bytes, at);
        image.resource_size = readU32(bytes, at + 4);
        image.resource_entry = at;
    }
    return true;
}

/// Appends to `out` every `WEVT_TEMPLATE` blob of the PE file `bytes`, in the reference's
/// order (resource entries, then language entries, in directory order). On a fault nothing
/// is appended and `failure` says why and where.
pub fn wevtTemplates(
    gpa: std.mem.Allocator,
    bytes: []const u8,
    out: *std.ArrayList([]const u8),
    failure: *Failure,
) error{ OutOfMemory, Fault }!void {
    const start = out.items.len;
    errdefer out.shrinkRetainingCapacity(start);
    walk(gpa, bytes, out, failure) catch |e| return e;
}

/// The resource section's bytes and their file offset (for the offsets of faults).
const Rsrc = struct {
    bytes: []const u8,
    at: u64,
    failure: *Failure,

    /// `fault` of the part at `place` (in the section), reached through the pointer at
    /// `from`: the part's first byte when it starts inside the section, else the pointer.
    fn fail(r: *const Rsrc, fault: Fault, place: u64, from: u64) error{Fault} {
        const inside = if (place < r.bytes.len) place else from;
        return failAt(r.failure, fault, r.at + inside);
    }
};

fn walk(
    gpa: std.mem.Allocator,
    bytes: []const u8,
    out: *std.ArrayList([]const u8),
    failure: *Failure,
) error{ OutOfMemory, Fault }!void {
    // goblin refuses the headers as a whole: the line names their start.
    const headers = parseHeaders(bytes) orelse
        return failAt(failure, .{ .invalid_pe = "failed to parse PE via goblin" }, 0);
    if (!headers.has_optional)
        return failAt(failure, .{ .invalid_pe = "missing optional header" }, 0);
    const image = headers.image;
    if (image.resource_rva == 0 or image.resource_size == 0) return;
    const entry = image.resource_entry;
    const rsrc_offset = image.fileOffset(image.resource_rva) orelse
        return failAt(failure, .{ .unmapped_rva = image.resource_rva }, entry);
    const rsrc_end = rsrc_offset + image.resource_size;
    if (rsrc_end > bytes.len)
        return failAt(failure, .{ .malformed_pe = "resource directory out of bounds" }, entry);
    const rsrc: Rsrc = .{
        .bytes = bytes[@intCast(rsrc_offset)..@intCast(rsrc_end)],
        .at = rsrc_offset,
        .failure = failure,
    };
    const wevt = try findWevtTemplate(&rsrc) orelse return;
    const wevt_target = readU32(rsrc.bytes, wevt + 4);
    if (wevt_target & high_bit == 0) return;
    const resources = try entries(&rsrc, wevt_target & ~high_bit, wevt + 4);
    for (0..resources.count) |r| {
        const res_at = resources.start + r * directory_entry_size;
        const target = readU32(rsrc.bytes, res_at + 4);
        if (target & high_bit == 0) continue;
        try checkIdentifier(&rsrc, readU32(rsrc.bytes, res_at), res_at);
        const languages = try entries(&rsrc, target & ~high_bit, res_at + 4);
        for (0..languages.count) |l| {
            const lang_at = languages.start + l * directory_entry_size;
            if (readU32(rsrc.bytes, lang_at) & high_bit != 0) continue;
            const data = readU32(rsrc.bytes, lang_at + 4);
            if (data & high_bit != 0) continue;
            if (try blob(&image, bytes, &rsrc, data, lang_at + 4)) |b| {
                if (out.items.len >= limits.resources_max)
                    return rsrc.fail(.too_many_resources, data, lang_at + 4);
                try out.append(gpa, b);
            }
        }
    }
}

/// The root's first entry named `WEVT_TEMPLATE`: where the entry lies in the section, or null.
fn findWevtTemplate(rsrc: *const Rsrc) error{Fault}!?usize {
    const root = try entries(rsrc, 0, 0);
    for (0..root.count) |i| {
        const at = root.start + i * directory_entry_size;
        const name = readU32(rsrc.bytes, at);
        if (name & high_bit == 0) continue;
        const units = try resourceName(rsrc, name & ~high_bit, at);
        if (isWevtTemplate(units)) return at;
    }
    return null;
}

fn isWevtTemplate(units: []const u8) bool {
    const want = "WEVT_TEMPLATE";
    if (units.len != want.len * 2) return false;
    for (want, 0..) |c, i| if (readU16(units, i * 2) != c) return false;
    return true;
}

/// A resource entry's identifier (the entry at `from`): a name must be in bounds and valid
/// UTF-16.
fn checkIdentifier(rsrc: *const Rsrc, name: u32, from: usize) error{Fault}!void {
    if (name & high_bit != 0) _ = try resourceName(rsrc, name & ~high_bit, from);
}

/// The UTF-16LE units of the counted name at `offset`, pointed to from `from` (unpaired
/// surrogates are a fault).
fn resourceName(rsrc: *const Rsrc, offset: u32, from: usize) error{Fault}![]const u8 {
    const b = rsrc.bytes;
    if (@as(u64, offset) + 2 > b.len)
        return rsrc.fail(
            .{ .malformed_resource = "resource name length out of bounds" },
            offset,
            from,
        );
    const count: usize = readU16(b, offset);
    const start = @as(usize, offset) + 2;
    if (start + count * 2 > b.len)
        return rsrc.fail(.{ .malformed_resource = "resource name out of bounds" }, offset, from);
    const units = b[start..][0 .. count * 2];
    if (!validUtf16(units)) return rsrc.fail(.invalid_resource_name, offset, from);
    return units;
}

fn validUtf16(units: []const u8) bool {
    assert(units.len % 2 == 0);
    var i: usize = 0;
    while (i < units.len) : (i += 2) {
        const u = readU16(units, i);
        if (u >= 0xdc00 and u <= 0xdfff) return false;
        if (u >= 0xd800 and u <= 0xdbff) {
            if (i + 4 > units.len) return false;
            const low = readU16(units, i + 2);
            if (low < 0xdc00 or low > 0xdfff) return false;
            i += 2;
        }
    }
    return true;
}

/// A directory's entries: where the first lies in the section, and how many (8 bytes each).
const Entries = struct { start: usize, count: usize };

/// The entries of the directory at `offset`, pointed to from `from`.
fn entries(rsrc: *const Rsrc, offset: u32, from: usize) error{Fault}!Entries {
    const b = rsrc.bytes;
    if (@as(u64, offset) + directory_header_size > b.len) return rsrc.fail(
        .{ .malformed_resource = "resource directory header out of bounds" },
        offset,
        from,
    );
    const count = @as(usize, readU16(b, offset + 12)) + readU16(b, offset + 14);
    const start = @as(usize, offset) + directory_header_size;
    if (start + count * directory_entry_size > b.len) return rsrc.fail(
        .{ .malformed_resource = "resource directory entries out of bounds" },
        offset,
        from,
    );
    return .{ .start = start, .count = count };
}

/// The bytes named by the data entry at `offset` (pointed to from `from`); null for an
/// empty one.
fn blob(
    image: *const Image,
    bytes: []const u8,
    rsrc: *const Rsrc,
    offset: u32,
    from: usize,
) error{Fault}!?[]const u8 {
    if (@as(u64, offset) + data_entry_size > rsrc.bytes.len) return rsrc.fail(
        .{ .malformed_resource = "resource data entry out of bounds" },
        offset,
        from,
    );
    const rva = readU32(rsrc.bytes, offset);
    const size = readU32(rsrc.bytes, offset + 4);
    if (size == 0) return null;
    const at = image.fileOffset(rva) orelse
        return rsrc.fail(.{ .unmapped_rva = rva }, offset, from);
    if (at + size > bytes.len)
        return rsrc.fail(.{ .malformed_pe = "resource data out of bounds" }, offset, from);
    return bytes[@intCast(at)..][0..size];
}

fn failAt(failure: *Failure, fault: Fault, offset: u64) error{Fault} {
    failure.* = .{ .fault = fault, .offset = offset };
    return error.Fault;
}

fn readU16(b: []const u8, at: usize) u16 {
    return std.mem.readInt(u16, b[at..][0..2], .little);
}

fn readU32(b: []const u8, at: usize) u32 {
    return std.mem.readInt(u32, b[at..][0..4], .little);
}

/// A PE32+ of 1024 bytes: headers in the first 512, one `.rsrc` section at RVA 0x1000 (file
/// 0x200) holding root → `WEVT_TEMPLATE` → id 1 → language 0x409 → "CRIMblob" (the layout
/// the reference extracts, checked with `evtx_dump extract-wevt-templates`).
fn testImage(buf: *[1024]u8) void {
    @memset(buf, 0);
    buf[0] = 'M';
    buf[1] = 'Z';
    std.mem.writeInt(u32, buf[0x3c..][0..4], 0x40, .little);
    std.mem.writeInt(u32, buf[0x40..][0..4], 0x4550, .little);
    std.mem.writeInt(u16, buf[0x46..][0..2], 1, .little); // sections
    std.mem.writeInt(u16, buf[0x54..][0..2], 0xf0, .little); // optional header size
    const opt = 0x58;
    std.mem.writeInt(u16, buf[opt..][0..2], 0x20b, .little);
    std.mem.writeInt(u32, buf[opt + 36 ..][0..4], 0x200, .little); // file alignment
    std.mem.writeInt(u32, buf[opt + 108 ..][0..4], 16, .little); // directories
    std.mem.writeInt(u32, buf[opt + 112 + 16 ..][0..4], 0x1000, .little); // resources RVA
    std.mem.writeInt(u32, buf[opt + 112 + 20 ..][0..4], 0x100, .little); // and size
    const sec = opt + 0xf0;
    @memcpy(buf[sec..][0..5], ".rsrc");
    for ([_]u32{ 0x100, 0x1000, 0x200, 0x200 }, 0..) |v, i|
        std.mem.writeInt(u32, buf[sec + 8 + 4 * i ..][0..4], v, .little);
    const r = buf[0x200..];
    const words = [_]struct { at: usize, v: u32 }{
        .{ .at = 12, .v = 1 }, // root: one named entry
        .{ .at = 16, .v = high_bit | 0x60 },
        .{ .at = 20, .v = high_bit | 0x18 },
        .{ .at = 0x18 + 12, .v = 1 << 16 }, // WEVT_TEMPLATE dir: one id entry
        .{ .at = 0x28, .v = 1 },
        .{ .at = 0x2c, .v = high_bit | 0x30 },
        .{ .at = 0x30 + 12, .v = 1 << 16 }, // language dir: one id entry
        .{ .at = 0x40, .v = 0x409 },
        .{ .at = 0x44, .v = 0x48 },
        .{ .at = 0x48, .v = 0x1080 }, .{ .at = 0x4c, .v = 8 }, // data entry
    };
    for (words) |w| std.mem.writeInt(u32, r[w.at..][0..4], w.v, .little);
    std.mem.writeInt(u16, r[0x60..][0..2], 13, .little);
    for ("WEVT_TEMPLATE", 0..) |c, i| std.mem.writeInt(u16, r[0x62 + 2 * i ..][0..2], c, .little);
    @memcpy(r[0x80..][0..8], "CRIMblob");
}

test "a PE32+ with one WEVT_TEMPLATE resource gives its bytes; faults in the reference's words" {
    const gpa = std.testing.allocator;
    var buf: [1024]u8 = undefined;
    testImage(&buf);
    var out: std.ArrayList([]const u8) = .empty;
    defer out.deinit(gpa);
    var fault: Failure = undefined;
    try wevtTemplates(gpa, &buf, &out, &fault);
    try std.testing.expectEqual(@as(usize, 1), out.items.len);
    try std.testing.expectEqualStrings("CRIMblob", out.items[0]);
    // The data entry's RVA outside every section.
    std.mem.writeInt(u32, buf[0x248..][0..4], 0x9999, .little);
    try std.testing.expectError(error.Fault, wevtTemplates(gpa, &buf, &out, &fault));
    var text: [128]u8 = undefined;
    var w: std.Io.Writer = .fixed(&text);
    try fault.fault.format(&w);
    const want = "failed to map RVA 0x00009999 to a file offset";
    try std.testing.expectEqualStrings(want, w.buffered());
    // Named at the data entry whose RVA leads nowhere (the section's file offset + 0x48).
    try std.testing.expectEqual(@as(u64, 0x248), fault.offset);
    try std.testing.expectEqual(@as(usize, 1), out.items.len);
    // No `PE\0\0` at e_lfanew: goblin refuses the file.
    testImage(&buf);
    buf[0x40] = 'X';
    try std.testing.expectError(error.Fault, wevtTemplates(gpa, &buf, &out, &fault));
    try std.testing.expectEqualStrings("failed to parse PE via goblin", fault.fault.invalid_pe);
    try std.testing.expectEqual(@as(u64, 0), fault.offset);
}
