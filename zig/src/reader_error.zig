//! The one error of the side readers (`.MTA`, `.wevtcache`, the CRIM/WEVT blobs inside a cache,
//! PE files): which reader refused the file, where, and why. The CLIs print it as one line,
//! `error: <PATH>: offset 0x<O>: <what>`, as the dump's own failures name path and offset
//! (shared-fixtures/README.md, "Damaged side files"); `rust/evtx-core/src/reader_error.rs`
//! is the twin.
const std = @import("std");
const assert = std.debug.assert;

/// The reader that found the damage.
pub const ReaderKind = enum {
    /// An `.MTA` file (`--mta`).
    mta,
    /// The `.wevtcache` container: header and entry headers.
    cache,
    /// A CRIM/WEVT manifest, one entry of a `.wevtcache`.
    crim,
    /// A PE file (`extract-wevt-templates`).
    pe,
};

/// Longest reason kept; the readers' texts are far shorter (the longest, a CRIM count's,
/// is under 200 bytes).
pub const what_max = 512;

/// Damage in a side file. Invariant: `offset` is a byte offset in the file the user named
/// (never relative to a blob or section), the place of the value the reader could not follow
/// or the first byte of the structure it could not read; `what` is one line (the reference's
/// words, without the file's path).
pub const ReaderError = struct {
    kind: ReaderKind,
    offset: u64,
    what_buffer: [what_max]u8,
    what_len: usize,

    /// `reason` is anything `{f}` prints (a reader's fault).
    pub fn init(kind: ReaderKind, offset: u64, reason: anytype) ReaderError {
        var e: ReaderError = .{
            .kind = kind,
            .offset = offset,
            .what_buffer = undefined,
            .what_len = 0,
        };
        var w: std.Io.Writer = .fixed(&e.what_buffer);
        w.print("{f}", .{reason}) catch {}; // a longer text is cut at `what_max`
        e.what_len = w.end;
        assert(std.mem.indexOfScalar(u8, e.what(), '\n') == null);
        return e;
    }

    pub fn what(e: *const ReaderError) []const u8 {
        assert(e.what_len <= what_max);
        return e.what_buffer[0..e.what_len];
    }

    /// The stderr line for the file at `path` (as given on the command line), newline included.
    pub fn writeLine(
        e: *const ReaderError,
        w: *std.Io.Writer,
        path: []const u8,
    ) std.Io.Writer.Error!void {
        try w.print("error: {s}: offset 0x{x}: {s}\n", .{ path, e.offset, e.what() });
    }
};

test "the line names path and hex offset" {
    const Text = struct {
        pub fn format(_: @This(), w: *std.Io.Writer) std.Io.Writer.Error!void {
            try w.writeAll("malformed PE file: x");
        }
    };
    const e = ReaderError.init(.pe, 0x1a2, Text{});
    var buf: [128]u8 = undefined;
    var w: std.Io.Writer = .fixed(&buf);
    try e.writeLine(&w, "a b.dll");
    const want = "error: a b.dll: offset 0x1a2: malformed PE file: x\n";
    try std.testing.expectEqualStrings(want, w.buffered());
}
