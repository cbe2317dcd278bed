//! ANSI code pages for `--ansi-codec` (WHATWG single-byte encodings).
const std = @import("std");
const values = @import("values.zig");

const Entry = struct { label: []const u8, table: *const values.AnsiTable };

const labels = [_]Entry{
    .{ .label = "windows-1252", .table = &values.windows_1252 },
    .{ .label = "cp1252", .table = &values.windows_1252 },
    .{ .label = "x-cp1252", .table = &values.windows_1252 },
    .{ .label = "latin1", .table = &values.windows_1252 },
    .{ .label = "iso-8859-1", .table = &values.windows_1252 },
    .{ .label = "iso8859-1", .table = &values.windows_1252 },
    .{ .label = "l1", .table = &values.windows_1252 },
    .{ .label = "ascii", .table = &values.windows_1252 },
    .{ .label = "us-ascii", .table = &values.windows_1252 },
    .{ .label = "ansi_x3.4-1968", .table = &values.windows_1252 },
};

/// The table for a WHATWG label (case-insensitive, surrounding whitespace ignored).
pub fn lookup(label: []const u8) ?*const values.AnsiTable {
    const trimmed = std.mem.trim(u8, label, " \t\n\r\x0c");
    for (labels) |e| {
        if (std.ascii.eqlIgnoreCase(trimmed, e.label)) return e.table;
    }
    return null;
}

test "labels" {
    try std.testing.expect(lookup("Windows-1252") == &values.windows_1252);
    try std.testing.expect(lookup("gbk") == null);
}
