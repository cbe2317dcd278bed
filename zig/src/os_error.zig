//! OS errors in the words Rust's `io::Error` prints them, which the reference shows: the C
//! library's `strerror` text (glibc's) and the number, `Permission denied (os error 13)`. The one
//! table of these words for the engine (`wevt_cache.zig`) and the CLI (`zig/cli`).
const std = @import("std");
const Writer = std.Io.Writer;

/// The Linux errno on every OS: its words and numbers are what the reference prints on Linux,
/// and a Windows build names the same failure the same way (`zig/cli/platform.zig`). On Linux
/// it is `std.posix.E` itself.
pub const E = std.os.linux.E;

/// An OS error; `{f}` shows it as Rust's `io::Error` does.
pub const OsError = struct {
    errno: E,

    /// The errno behind a Zig error of `std.fs` and `std.posix` (the most common where several
    /// share one), null for an error of no system call.
    pub fn of(e: anyerror) ?OsError {
        const errno: E = switch (e) {
            error.FileNotFound => .NOENT,
            error.AccessDenied => .ACCES,
            error.PermissionDenied => .PERM,
            error.IsDir => .ISDIR,
            error.NotDir => .NOTDIR,
            error.NameTooLong => .NAMETOOLONG,
            error.SymLinkLoop => .LOOP,
            error.BrokenPipe => .PIPE,
            error.NoSpaceLeft => .NOSPC,
            error.DiskQuota => .DQUOT,
            error.InputOutput => .IO,
            error.NoDevice => .NXIO,
            error.FileTooBig => .FBIG,
            error.ReadOnlyFileSystem => .ROFS,
            error.ProcessFdQuotaExceeded => .MFILE,
            error.SystemFdQuotaExceeded => .NFILE,
            error.SystemResources => .NOMEM,
            error.FileBusy, error.DeviceBusy => .BUSY,
            error.WouldBlock => .AGAIN,
            error.Unseekable => .SPIPE,
            else => return null,
        };
        return .{ .errno = errno };
    }

    /// `of(e)`, or `EIO` for an error of no system call: a failed read or write, as the
    /// reference's `io::Error` would name it.
    pub fn orIo(e: anyerror) OsError {
        return of(e) orelse .{ .errno = .IO };
    }

    pub fn code(o: OsError) u16 {
        return @intFromEnum(o.errno);
    }

    /// glibc's words for the errors that opening, reading, writing and seeking can give; null
    /// for any other.
    pub fn text(o: OsError) ?[]const u8 {
        return switch (o.errno) {
            .PERM => "Operation not permitted",
            .NOENT => "No such file or directory",
            .INTR => "Interrupted system call",
            .IO => "Input/output error",
            .NXIO => "No such device or address",
            .BADF => "Bad file descriptor",
            .AGAIN => "Resource temporarily unavailable",
            .NOMEM => "Cannot allocate memory",
            .ACCES => "Permission denied",
            .FAULT => "Bad address",
            .BUSY => "Device or resource busy",
            .NODEV => "No such device",
            .NOTDIR => "Not a directory",
            .ISDIR => "Is a directory",
            .INVAL => "Invalid argument",
            .NFILE => "Too many open files in system",
            .MFILE => "Too many open files",
            .TXTBSY => "Text file busy",
            .FBIG => "File too large",
            .NOSPC => "No space left on device",
            .SPIPE => "Illegal seek",
            .ROFS => "Read-only file system",
            .PIPE => "Broken pipe",
            .NAMETOOLONG => "File name too long",
            .LOOP => "Too many levels of symbolic links",
            .OVERFLOW => "Value too large for defined data type",
            .OPNOTSUPP => "Operation not supported",
            .STALE => "Stale file handle",
            .DQUOT => "Disk quota exceeded",
            else => null,
        };
    }

    pub fn format(o: OsError, w: *Writer) Writer.Error!void {
        const said = o.text() orelse return w.print("Unknown error {d} (os error {d})", .{
            o.code(), o.code(),
        });
        try w.print("{s} (os error {d})", .{ said, o.code() });
    }
};

/// The C library's words for a Zig error, without the number; its name when no system call
/// gives it.
pub fn words(e: anyerror) []const u8 {
    const o = OsError.of(e) orelse return @errorName(e);
    return o.text().?; // `of` gives only errnos of the table.
}

/// A Zig error as Rust prints the OS error behind it, for `{f}`; its name when no system call
/// gives it.
pub fn fmtError(e: anyerror) std.fmt.Formatter(anyerror, formatError) {
    return .{ .data = e };
}

fn formatError(e: anyerror, w: *Writer) Writer.Error!void {
    const o = OsError.of(e) orelse return w.writeAll(@errorName(e));
    try o.format(w);
}

test "OS errors in Rust's words, never a Zig error name where an errno is known" {
    var buffer: [128]u8 = undefined;
    const cases = [_]struct { errno: E, text: []const u8 }{
        .{ .errno = .ACCES, .text = "Permission denied (os error 13)" },
        .{ .errno = .LOOP, .text = "Too many levels of symbolic links (os error 40)" },
        .{ .errno = .ISDIR, .text = "Is a directory (os error 21)" },
        .{ .errno = .SPIPE, .text = "Illegal seek (os error 29)" },
        .{ .errno = .HWPOISON, .text = "Unknown error 133 (os error 133)" },
    };
    for (cases) |c| {
        const text = try std.fmt.bufPrint(&buffer, "{f}", .{OsError{ .errno = c.errno }});
        try std.testing.expectEqualStrings(c.text, text);
    }
    try std.testing.expectEqualStrings("Too many levels of symbolic links", words(
        error.SymLinkLoop,
    ));
    try std.testing.expectEqualStrings("Unexpected", words(error.Unexpected));
    const eio = try std.fmt.bufPrint(&buffer, "{f}", .{OsError.orIo(error.EndOfStream)});
    try std.testing.expectEqualStrings("Input/output error (os error 5)", eio);
    const perm = try std.fmt.bufPrint(&buffer, "{f}", .{fmtError(error.PermissionDenied)});
    try std.testing.expectEqualStrings("Operation not permitted (os error 1)", perm);
    // Every errno `of` gives has its words.
    const mapped = [_]anyerror{
        error.FileNotFound,          error.AccessDenied,       error.PermissionDenied,
        error.IsDir,                 error.NotDir,             error.NameTooLong,
        error.SymLinkLoop,           error.BrokenPipe,         error.NoSpaceLeft,
        error.DiskQuota,             error.InputOutput,        error.NoDevice,
        error.FileTooBig,            error.ReadOnlyFileSystem, error.ProcessFdQuotaExceeded,
        error.SystemFdQuotaExceeded, error.SystemResources,    error.FileBusy,
        error.DeviceBusy,            error.WouldBlock,         error.Unseekable,
    };
    for (mapped) |e| try std.testing.expect(OsError.of(e).?.text() != null);
}
