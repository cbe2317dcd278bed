//! Failures (the twin of `rust/evtx-core/src/error.rs`): the error kinds both engines print,
//! and the words after the kind in an error line (vocabulary in shared-fixtures/README.md).
const std = @import("std");
const assert = std.debug.assert;
const Allocator = std.mem.Allocator;
const bytes_le = @import("bytes.zig");
const crc32 = @import("crc32.zig");
const chunk = @import("chunk.zig");
const file_header = @import("file_header.zig");
const tokens = @import("tokens.zig");

/// What the reference's `anyhow` prints between an error and its cause.
pub const caused_by = "\n\nCaused by:\n    ";

/// An error over its cause as the reference's `anyhow` prints it after `Error: ` (the
/// template subcommands' texts, in both CLIs): the context (`context` formatted with `args`),
/// a blank line, `Caused by:` and the cause, indented. The Rust engine's `error::caused`.
pub fn caused(
    w: *std.Io.Writer,
    comptime context: []const u8,
    args: anytype,
    cause: []const u8,
) std.Io.Writer.Error!void {
    try w.print(context ++ caused_by ++ "{s}", args ++ .{cause});
}

/// Error kinds shared with the Rust engine (shared-fixtures/README.md); the C ABI's statuses
/// 16.. in this order (capi.zig).
pub const ErrorKind = enum {
    incomplete_chunk,
    bad_chunk_magic,
    bad_chunk_header_checksum,
    bad_chunk_free_space_offset,
    bad_chunk_records_checksum,
    bad_string_table,
    bad_record_magic,
    truncated_record_header,
    bad_record_timestamp,
    bad_record_size,
    bad_binxml,

    /// The kind's words in an error line.
    pub fn text(k: ErrorKind) []const u8 {
        return switch (k) {
            .incomplete_chunk => "incomplete chunk",
            .bad_chunk_magic => "bad chunk magic",
            .bad_chunk_header_checksum => "bad chunk header checksum",
            .bad_chunk_free_space_offset => "bad chunk free space offset",
            .bad_chunk_records_checksum => "bad chunk records checksum",
            .bad_string_table => "bad string table",
            .bad_record_magic => "bad record magic",
            .truncated_record_header => "truncated record header",
            .bad_record_timestamp => "bad record timestamp",
            .bad_record_size => "bad record size",
            .bad_binxml => "bad binxml",
        };
    }
};

/// What the reference names as a failure's cause where the bytes tell it: the reference's
/// error and the offset it prints (the Rust engine's `Cause`). `apply-wevt-cache` prints it as
/// the reference's `Caused by:` chain; the dump's error lines do not use it.
pub const Cause = struct {
    kind: CauseKind,
    offset: u32,
};

/// The reference's errors a `Cause` names (the Rust engine's `CauseKind`, the same order).
pub const CauseKind = union(enum) {
    /// A string table bucket's head past the chunk (`cursor.position at offset N is past ...`).
    table_start_past_end,
    /// A string table entry's link past the chunk (`next xml string at offset N is past ...`).
    table_link_past_end,
    /// A string table name that is not UTF-16 (`name at offset N: invalid data`, N its length
    /// field).
    table_name_invalid,
    /// A BinXML token byte the reference does not know (`Offset 0x{N:08x}: Tried to read an
    /// invalid byte ...`, N the offset after the byte: the reference's cursor has read it).
    invalid_token,
    /// A name reference whose length field is past the chunk (`cursor.position at offset N is
    /// past ...`, N the name's offset + 6, where the reference seeks).
    name_past_end,
    /// A template definition of no bytes (`Failed to create record model, reason: empty BinXML
    /// slice`, N the definition's offset, not printed).
    empty_definition,
    /// A template definition whose data size runs past the chunk (`Failed to create record
    /// model, reason: template data out of bounds`, N the definition's offset, not printed).
    definition_past_end,
    /// The rest are a `.wevtcache` TEMP's BinXML (`apply-wevt-cache`), N from its start.
    /// A value type byte the reference does not know (`Offset 0x{N:08x}: Tried to read an
    /// invalid byte `0x{T:2x}` as binxml value variant`, N the offset after the byte).
    invalid_value_type,
    /// An inline name whose stored hash is not its units' (`Offset 0x{N:08x}: WEVT inline name
    /// hash mismatch (expected 0x{H:04x}, found 0x{S:04x})`, N the name's offset).
    name_hash_mismatch,
    /// An inline name whose NUL unit is not 0 (`Offset 0x{N:08x}: WEVT inline name missing NUL
    /// terminator (found 0x{U:04x})`, N the name's offset).
    name_without_nul,
    /// A field cut by the BinXML's end (`buffer too small for {what} at offset N (need {need}
    /// bytes, have {L - N})`, L the BinXML's length): the reference's name of the field and
    /// its bytes.
    truncated: struct { what: []const u8, need: u32 },
    /// Tokens the reference's tree builder refuses (`Failed to create record model, reason:
    /// {0}`, N where it noticed, not printed).
    model: []const u8,
};

/// A failed chunk or record: its kind and the words after the kind in its error line
/// (vocabulary in shared-fixtures/README.md), the Rust engine's `Failure`.
pub const Failure = struct {
    kind: ErrorKind,
    detail: [:0]const u8 = "",
    /// Where a formatted detail starts in the chunk's `Details` until the chunk is done (the
    /// list may move while it grows; the driver then points `detail` at it).
    detail_at: ?u32 = null,
    /// The reference's cause, where the bytes tell it.
    cause: ?Cause = null,

    /// A record refused only for its rendered size (contract 12, `record output too large`):
    /// its tree was read whole. The template subcommands read records as the reference's
    /// iterator does, which renders nothing, so this is no failure of theirs.
    pub fn isOutputLimit(f: *const Failure) bool {
        return f.kind == .bad_binxml and
            std.mem.eql(u8, f.detail, binxmlDetail(error.OutputTooLarge));
    }
};

/// The `bad binxml` detail vocabulary (shared-fixtures/README.md): one phrase per error of
/// the parser, the same phrases as the Rust engine's `error::binxml_detail`.
pub fn binxmlDetail(e: tokens.Error) [:0]const u8 {
    return switch (e) {
        error.InvalidToken => "invalid token",
        error.BadState => "token out of place",
        error.NestingTooDeep => "nested too deeply",
        error.ValueOutsideElement => "value outside an element",
        error.TemplateRoot => "template definition without exactly one root element",
        error.TemplateInDefinition => "template instance inside a template definition",
        error.TooManyNodes => "too many nodes",
        error.InvalidName => "name is not valid UTF-16",
        error.ElementInAttribute,
        error.PiInAttribute,
        => "element or PI inside an attribute value",
        error.PiDataWithoutTarget => "PI data without target",
        error.OutputTooLarge => "record output too large",
        error.EmptyBinXml => "empty BinXML",
        error.OutOfBounds => "out of bounds",
        error.InvalidValueType => "invalid value type",
        error.OddStringSize => "odd-sized UTF-16 string",
        error.BadSizeTSize => "bad SizeT or EvtHandle size",
        error.MisalignedArray => "misaligned array",
        error.InvalidAnsi => "invalid ANSI sequence",
        error.UnsupportedValueType => "unsupported value type",
        error.OutOfMemory => "out of memory",
    };
}

/// Formatted details of one chunk's failures, NUL-terminated back to back; a detail is known
/// by its position until the chunk is done (the list may move while it grows).
pub const Details = struct {
    list: std.ArrayList(u8) = .empty,

    pub fn deinit(d: *Details, gpa: Allocator) void {
        d.list.deinit(gpa);
    }

    pub fn clear(d: *Details) void {
        d.list.clearRetainingCapacity();
    }

    /// Appends a formatted detail; its position for `get`.
    pub fn add(
        d: *Details,
        gpa: Allocator,
        comptime fmt: []const u8,
        args: anytype,
    ) Allocator.Error!u32 {
        const at: u32 = @intCast(d.list.items.len);
        try d.list.print(gpa, fmt ++ "\x00", args);
        return at;
    }

    /// The detail added at `at`.
    pub fn get(d: *const Details, at: u32) [:0]const u8 {
        assert(at < d.list.items.len);
        // `add` ended each detail with a NUL: the sentinel is in bounds.
        const len = std.mem.indexOfScalar(u8, d.list.items[at..], 0).?;
        return d.list.items[at .. at + len :0];
    }

    /// The detail of a record header error of `kind` at chunk offset `pos`, read from the
    /// header bytes (the Rust engine's `error::record_detail`).
    pub fn addRecordDetail(
        d: *Details,
        gpa: Allocator,
        kind: ErrorKind,
        bytes: *const [chunk.size]u8,
        pos: u32,
    ) Allocator.Error!u32 {
        const rest = bytes[@min(pos, chunk.size)..];
        return switch (kind) {
            .bad_record_magic => d.add(gpa, "found {x}", .{rest[0..@min(rest.len, 4)]}),
            .truncated_record_header => d.add(gpa, "{d} bytes left in the chunk", .{rest.len}),
            .bad_record_timestamp => d.add(gpa, "FILETIME 0x{x:0>16}", .{
                bytes_le.getU64(rest, 16) orelse 0,
            }),
            .bad_record_size => d.add(gpa, "size {d}", .{bytes_le.getU32(rest, 4) orelse 0}),
            else => d.add(gpa, "", .{}),
        };
    }

    /// The `--validate-checksums` failure details (stored and computed values).
    pub fn addChecksumDetail(
        d: *Details,
        gpa: Allocator,
        kind: ErrorKind,
        bytes: *const [chunk.size]u8,
        h: *const chunk.ChunkHeader,
    ) Allocator.Error!u32 {
        const stored_computed = "stored 0x{x:0>8}, computed 0x{x:0>8}";
        return switch (kind) {
            .bad_chunk_header_checksum => d.add(gpa, stored_computed, .{
                h.header_checksum,
                chunk.headerChecksum(bytes),
            }),
            .bad_chunk_free_space_offset => d.add(
                gpa,
                "free space offset {d} is outside 512..=65536",
                .{h.free_space_offset},
            ),
            .bad_chunk_records_checksum => d.add(gpa, stored_computed, .{
                h.records_checksum,
                crc32.hash(bytes[chunk.header_size..h.free_space_offset]),
            }),
            else => d.add(gpa, "", .{}),
        };
    }
};

/// An error that stops the dump (exit status 1 in the CLI, `EVTX_STATUS_NOT_EVTX` in the C
/// ABI): the twin of the Rust engine's `FatalError`, the same variants and words.
pub const FatalError = union(enum) {
    /// The file is shorter than the 4096-byte header block.
    too_short: u64,
    /// The header magic is not `ElfFile\0`.
    bad_magic,
    /// The file is shorter than the header block size field says.
    shorter_than_header_block: struct { len: u64, header_block_size: u16 },
    /// Any other fatal problem (input, output, options).
    other: []const u8,

    /// The fatal error of a header `file_header.parseBlock` refused with `e`, for an input of
    /// `len` bytes whose header block size field (offset 40) reads `header_block_size`
    /// (Rust's `FileHeader::parse_block` returns these variants itself).
    pub fn fromHeader(e: file_header.Error, len: u64, header_block_size: u16) FatalError {
        return switch (e) {
            error.BadFileMagic => .bad_magic,
            error.FileTooShort => if (len < file_header.block_size)
                .{ .too_short = len }
            else
                .{ .shorter_than_header_block = .{
                    .len = len,
                    .header_block_size = header_block_size,
                } },
        };
    }

    /// The error's line (without `Error: ` and the newline), as Rust's `Display`.
    pub fn format(f: FatalError, w: *std.Io.Writer) std.Io.Writer.Error!void {
        const stream = "An error occurred while trying to deserialize evtx stream: ";
        switch (f) {
            .too_short => |len| try w.print(
                stream ++ "the file is {d} bytes, shorter than the 4096-byte file header",
                .{len},
            ),
            .bad_magic => try w.writeAll(
                stream ++ "invalid EVTX file header magic, expected `ElfFile\\0`",
            ),
            .shorter_than_header_block => |s| try w.print(
                "the file is {d} bytes, shorter than its header block size {d}",
                .{ s.len, s.header_block_size },
            ),
            .other => |message| try w.writeAll(message),
        }
    }
};

test "only the output size is an output limit failure" {
    // The template subcommands read on past exactly this failure (the reference's iterator
    // renders nothing); any other keeps failing the record there.
    const limit: Failure = .{ .kind = .bad_binxml, .detail = binxmlDetail(error.OutputTooLarge) };
    try std.testing.expect(limit.isOutputLimit());
    const token: Failure = .{ .kind = .bad_binxml, .detail = binxmlDetail(error.InvalidToken) };
    try std.testing.expect(!token.isOutputLimit());
    const size: Failure = .{ .kind = .bad_record_size, .detail = limit.detail };
    try std.testing.expect(!size.isOutputLimit());
}

test "record header details read what the header holds, zero past the chunk" {
    const gpa = std.testing.allocator;
    var bytes = [_]u8{0} ** chunk.size;
    std.mem.writeInt(u32, bytes[516..520], 7, .little);
    std.mem.writeInt(u64, bytes[528..536], 0xABCD, .little);
    var d: Details = .{};
    defer d.deinit(gpa);
    const size_at = try d.addRecordDetail(gpa, .bad_record_size, &bytes, 512);
    const time_at = try d.addRecordDetail(gpa, .bad_record_timestamp, &bytes, 512);
    const cut_at = try d.addRecordDetail(gpa, .bad_record_timestamp, &bytes, chunk.size - 10);
    const left_at = try d.addRecordDetail(gpa, .truncated_record_header, &bytes, chunk.size - 10);
    try std.testing.expectEqualStrings("size 7", d.get(size_at));
    try std.testing.expectEqualStrings("FILETIME 0x000000000000abcd", d.get(time_at));
    try std.testing.expectEqualStrings("FILETIME 0x0000000000000000", d.get(cut_at));
    try std.testing.expectEqualStrings("10 bytes left in the chunk", d.get(left_at));
}

test "fatal errors: the variants of a refused header and their words" {
    // The words of the Rust engine's `FatalError` (error.rs), which the CLI parity fixtures
    // hold to the reference's fatal lines.
    var buffer: [200]u8 = undefined;
    const cases = [_]struct { e: file_header.Error, len: u64, block: u16, text: []const u8 }{
        .{
            .e = error.FileTooShort,
            .len = 100,
            .block = 0,
            .text = "An error occurred while trying to deserialize evtx stream: the file is " ++
                "100 bytes, shorter than the 4096-byte file header",
        },
        .{
            .e = error.BadFileMagic,
            .len = 8192,
            .block = 4096,
            .text = "An error occurred while trying to deserialize evtx stream: invalid EVTX " ++
                "file header magic, expected `ElfFile\\0`",
        },
        .{
            .e = error.FileTooShort,
            .len = 5000,
            .block = 8192,
            .text = "the file is 5000 bytes, shorter than its header block size 8192",
        },
    };
    for (cases) |c| {
        const fatal = FatalError.fromHeader(c.e, c.len, c.block);
        const text = try std.fmt.bufPrint(&buffer, "{f}", .{fatal});
        try std.testing.expectEqualStrings(c.text, text);
    }
    const other: FatalError = .{ .other = "cannot read the input's size" };
    try std.testing.expectEqualStrings(
        "cannot read the input's size",
        try std.fmt.bufPrint(&buffer, "{f}", .{other}),
    );
}
