//! Opening an input log (the dump's INPUT, `dump-template-instances -i`, `apply-wevt-cache
//! --evtx`) read-only as chunk windows, and, when it cannot be, the reference's words for every
//! form of input, byte for byte (evtx-rs: `rust/cli/src/open_input.rs`, the same steps and words).
//!
//! The reference's `EvtxParser::from_path` canonicalizes the path, opens it, reads the 4096-byte
//! header block with `read_exact`, checks the magic, then seeks to the end for the length; anyhow
//! prints the failed step's chain under `Failed to open evtx file at: PATH`. We take the same
//! steps, so the same step fails with the same cause: a missing file or a symlink loop at the
//! canonicalization, a file without read permission at the open (named by its canonical path, as
//! the reference names it), a directory at the first read (`Is a directory`), an empty or short
//! file or `/dev/null` at `read_exact` (`failed to fill whole buffer`), a pipe (a FIFO, `<(...)`)
//! at the seek (`Illegal seek`). A regular file is then read through positioned reads; a
//! character or block device that seeks is spooled from its start, as standard input is. The
//! OS errors are worded as Rust prints them (`Permission denied (os error 13)`), from the errno
//! of the system call itself.
const std = @import("std");
const evtx = @import("evtx");
const assert = std.debug.assert;
const file_header = evtx.file_header;
const platform = @import("platform.zig");
const os_error = evtx.os_error;
const OsError = os_error.OsError;

pub const Input = evtx.input.Input;

/// The failure's text is in the writer given (after `Error: `, without the newline).
pub const Failed = error{Failed};

/// The first line of a failure: the log named by a path, or standard input.
pub const Head = union(enum) {
    path: []const u8,
    stdin,

    pub fn format(h: Head, w: *std.Io.Writer) std.Io.Writer.Error!void {
        switch (h) {
            .path => |path| try w.print("Failed to open evtx file at: {s}", .{path}),
            .stdin => try w.writeAll("Failed to parse EVTX data from stdin"),
        }
    }
};

// The reference's error chains (its `InputError`, `DeserializationError` and `EvtxError::IO`).
const caused_by = "\n\nCaused by:\n    ";
const read_input = "0: An error occurred while trying to read input.\n    1: Failed to open file";
const deserialize = "0: An error occurred while trying to deserialize evtx stream.\n    1: ";
const header_block = "failed to read EVTX file header block: ";
const io_error = "0: An IO error occured.\n    1: ";
/// `read_exact`'s error at the end of the input, as Rust words it.
const fill_whole_buffer = "failed to fill whole buffer";

/// The canonicalization or the open failed: the path the reference names (the canonical one
/// once it is known).
fn openFailed(w: *std.Io.Writer, path: []const u8, named: []const u8, errno: os_error.E) Failed {
    w.print("{f}" ++ caused_by ++ read_input ++ " {s}\n    2: {f}", .{
        Head{ .path = path }, named, OsError{ .errno = errno },
    }) catch {};
    return error.Failed;
}

/// Opens the log at `path`, or writes the reference's text of the step that failed. `output`
/// (`-f`) naming the same file is refused before anything is read.
pub fn openPath(path: []const u8, output: ?[]const u8, w: *std.Io.Writer) Failed!Input {
    const head: Head = .{ .path = path };
    var canonical_buffer: [std.fs.max_path_bytes]u8 = undefined;
    const canonical = switch (platform.canonicalize(path, &canonical_buffer)) {
        .ok => |name| name,
        .err => |errno| return openFailed(w, path, path, errno),
    };
    const file = switch (platform.openReadOnly(path)) {
        .ok => |file| file,
        .err => |errno| return openFailed(w, path, canonical, errno),
    };
    errdefer file.close();
    const kind = switch (platform.kindOf(file)) {
        .ok => |kind| kind,
        .err => |errno| {
            w.print("{f}" ++ caused_by ++ "{f}", .{ head, OsError{ .errno = errno } }) catch {};
            return error.Failed;
        },
    };
    if (output) |out| try refuseOutputOnInput(w, out, path, file);
    switch (kind) {
        .regular => return Input.fromFile(file) catch |e| {
            w.print("{f}" ++ caused_by ++ "{f}", .{ head, os_error.fmtError(e) }) catch {};
            return error.Failed;
        },
        // The reference's first read of a directory fails with `EISDIR`; Windows does not
        // open one as a file at all, so the kind decides, in the same words on both.
        .directory => {
            w.print("{f}" ++ caused_by ++ deserialize ++ header_block ++ "{f}", .{
                head, OsError{ .errno = .ISDIR },
            }) catch {};
            return error.Failed;
        },
        .other => {},
    }
    const in = try openStream(file, head, w);
    file.close();
    return in;
}

/// A path that is no regular file (a pipe, a device): its header block read as the reference
/// reads it, then seeked as the reference does, then spooled from its start.
fn openStream(file: std.fs.File, head: Head, w: *std.Io.Writer) Failed!Input {
    var block: [file_header.block_size]u8 = undefined;
    switch (platform.readExact(file, &block)) {
        .ok => {},
        .eof => {
            w.print("{f}" ++ caused_by ++ deserialize ++ header_block ++ fill_whole_buffer, .{
                head,
            }) catch {};
            return error.Failed;
        },
        .err => |errno| {
            w.print("{f}" ++ caused_by ++ deserialize ++ header_block ++ "{f}", .{
                head, OsError{ .errno = errno },
            }) catch {};
            return error.Failed;
        },
    }
    if (!std.mem.eql(u8, block[0..file_header.magic.len], file_header.magic)) {
        writeBadMagic(w, head, block[0..8]) catch {};
        return error.Failed;
    }
    if (platform.seekEnds(file)) |errno| {
        w.print("{f}" ++ caused_by ++ io_error ++ "{f}", .{
            head, OsError{ .errno = errno },
        }) catch {};
        return error.Failed;
    }
    return spoolInput(file, head, w);
}

/// Opens standard input, spooled to a temporary file, or writes the reference's text.
pub fn openStdin(output: ?[]const u8, name: []const u8, w: *std.Io.Writer) Failed!Input {
    const stdin: std.fs.File = .stdin();
    if (output) |out| {
        try refuseOutputOnInput(w, out, name, stdin);
    }
    const in = spool(stdin) catch |e| {
        w.print("Failed to read EVTX data from stdin" ++ caused_by ++ "{f}", .{
            os_error.fmtError(e),
        }) catch {};
        return error.Failed;
    };
    if (in.size == 0) {
        w.writeAll("No input received on stdin") catch {};
        return error.Failed;
    }
    return in;
}

fn spoolInput(source: std.fs.File, head: Head, w: *std.Io.Writer) Failed!Input {
    return spool(source) catch |e| {
        w.print("{f}" ++ caused_by ++ "failed to copy the input: {f}", .{
            head, os_error.fmtError(e),
        }) catch {};
        return error.Failed;
    };
}

/// `source` to its end in an unlinked file in $TMPDIR, read back through windows.
fn spool(source: std.fs.File) !Input {
    var block: [evtx.input.spool_block_size]u8 = undefined;
    const spooled = try evtx.input.spool(source, platform.tempDir(), &block);
    return Input.fromFile(spooled);
}

/// The error of a header that `file_header.parseBlock` (through `EvtxFile.open`) refused with
/// `e`, for the input `in` named by `head`.
pub fn writeHeaderRefused(
    w: *std.Io.Writer,
    head: Head,
    in: *const Input,
    e: file_header.Error,
) std.Io.Writer.Error!void {
    switch (e) {
        error.BadFileMagic => {
            var magic: [8]u8 = @splat(0);
            const got = in.read(0, &magic);
            @memset(magic[got.len..], 0);
            return writeBadMagic(w, head, &magic);
        },
        error.FileTooShort => {},
    }
    if (in.size < file_header.block_size) {
        return w.print("{f}" ++ caused_by ++ deserialize ++ header_block ++ fill_whole_buffer, .{
            head,
        });
    }
    var field: [2]u8 = @splat(0);
    const got = in.read(40, &field);
    const header_block_size = if (got.len == 2) std.mem.readInt(u16, &field, .little) else 0;
    try w.print("{f}" ++ caused_by ++ "Calculation Error, reason: Could not calculate valid " ++
        "chunk count because stream size is less than evtx header block size. (stream_size: " ++
        "{d}, header_block_size: {d})", .{ head, in.size, header_block_size });
}

/// The magic as the reference's `{:2X?}` shows a byte array.
fn writeBadMagic(w: *std.Io.Writer, head: Head, magic: []const u8) std.Io.Writer.Error!void {
    assert(magic.len == 8);
    try w.print("{f}" ++ caused_by ++ deserialize ++
        "Invalid EVTX file header magic, expected `ElfFile0`, found `[", .{head});
    for (magic, 0..) |b, i| {
        if (i > 0) try w.writeAll(", ");
        try w.print("{X:>2}", .{b});
    }
    try w.writeAll("]`");
}

/// The input is evidence: `-f` naming it (the same file through any path, symlink or hard
/// link) is refused before anything is opened for writing.
fn refuseOutputOnInput(
    w: *std.Io.Writer,
    output: []const u8,
    input: []const u8,
    input_file: std.fs.File,
) Failed!void {
    const in = platform.identityOf(input_file) orelse return;
    const out = platform.identityAt(output) orelse return;
    if (!in.eql(out)) return;
    w.print("refusing to write the output to `{s}`: it is the input file `{s}`", .{
        output, input,
    }) catch {};
    return error.Failed;
}

test "a path's failures: each step's chain, the canonical name once known" {
    var tmp = std.testing.tmpDir(.{});
    defer tmp.cleanup();
    try tmp.dir.symLink("loop-b", "loop-a", .{});
    try tmp.dir.symLink("loop-a", "loop-b", .{});
    try tmp.dir.makeDir("dir");
    try tmp.dir.writeFile(.{ .sub_path = "short", .data = "ElfFile\x00" });
    var base_buffer: [std.fs.max_path_bytes]u8 = undefined;
    const base = try tmp.dir.realpath(".", &base_buffer);
    const cases = [_]struct { name: []const u8, causes: []const u8, named: bool }{
        .{
            .name = "loop-a",
            .causes = read_input ++ " {s}\n    2: Too many levels of symbolic links (os error 40)",
            .named = true,
        },
        .{
            .name = "missing",
            .causes = read_input ++ " {s}\n    2: No such file or directory (os error 2)",
            .named = true,
        },
        .{
            .name = "dir",
            .causes = deserialize ++ header_block ++ "Is a directory (os error 21)",
            .named = false,
        },
    };
    inline for (cases) |c| {
        var path_buffer: [std.fs.max_path_bytes]u8 = undefined;
        const path = try std.fmt.bufPrint(&path_buffer, "{s}/{s}", .{ base, c.name });
        var text: [1024]u8 = undefined;
        var w: std.Io.Writer = .fixed(&text);
        try std.testing.expectError(error.Failed, openPath(path, null, &w));
        var want: [1024]u8 = undefined;
        const expected = try std.fmt.bufPrint(
            &want,
            "Failed to open evtx file at: {s}" ++ caused_by ++ c.causes,
            if (c.named) .{ path, path } else .{path},
        );
        try std.testing.expectEqualStrings(expected, w.buffered());
    }
    // A short regular file opens: its header is the engine's to refuse.
    var path_buffer: [std.fs.max_path_bytes]u8 = undefined;
    const path = try std.fmt.bufPrint(&path_buffer, "{s}/short", .{base});
    var w: std.Io.Writer = .fixed(&.{});
    const in = try openPath(path, null, &w);
    defer in.source.file.close();
    try std.testing.expectEqual(8, in.size);
}
