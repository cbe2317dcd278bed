//! The CLI's one OS difference: what it asks of an input or output path beyond `std.fs` (its
//! kind, its identity, the reference's open steps with their errno, the spool directory),
//! with the same API on POSIX and on Windows, chosen by `builtin.os.tag` at compile time
//! (evtx-rs: `rust/cli/src/platform.rs`).
//!
//! Errors are `os_error.E`, the Linux errno, on every OS: the reference's words are glibc's
//! (`No such file or directory (os error 2)`), and the same failure reads the same on Windows,
//! where a Zig error of `std.fs` is mapped to the errno that names it.
const std = @import("std");
const builtin = @import("builtin");
const evtx = @import("evtx");
const os_error = evtx.os_error;

pub const E = os_error.E;

/// What a path or handle is, as far as opening an input needs: a regular file is read in
/// place, a directory refused, anything else (a pipe, a device, a console) spooled.
pub const Kind = enum { regular, directory, other };

/// The same file through any path, link or handle: device (volume) and inode (file index).
pub const Identity = struct {
    device: u64,
    inode: u64,

    pub fn eql(a: Identity, b: Identity) bool {
        return a.device == b.device and a.inode == b.inode;
    }
};

pub fn Result(comptime T: type) type {
    return union(enum) { ok: T, err: E };
}

/// What `read_exact` of the header block gives: all of it, the end first, or an errno.
pub const ReadExact = union(enum) { ok, eof, err: E };

const impl = if (builtin.os.tag == .windows) windows else posix;

/// The errno of a Zig error of `std.fs` (`EIO` when no system call names it).
fn errnoOf(e: anyerror) E {
    return os_error.OsError.orIo(e).errno;
}

/// The canonical path, as the reference's `fs::canonicalize` finds it, into `buffer`.
pub const canonicalize: fn ([]const u8, *[std.fs.max_path_bytes]u8) Result([]const u8) =
    impl.canonicalize;
/// `path` opened read-only (a directory too: its kind refuses it, in the reference's words).
pub const openReadOnly: fn ([]const u8) Result(std.fs.File) = impl.openReadOnly;
/// The kind of an open file.
pub const kindOf: fn (std.fs.File) Result(Kind) = impl.kindOf;
/// The identity of an open file, null when the OS does not say.
pub const identityOf: fn (std.fs.File) ?Identity = impl.identityOf;
/// The identity of the file at `path` (through links), null when it cannot be opened.
pub const identityAt: fn ([]const u8) ?Identity = impl.identityAt;
/// `read_exact` of `buffer.len` bytes from the file's offset.
pub const readExact: fn (std.fs.File, []u8) ReadExact = impl.readExact;
/// Seeks to the end, then back to the start, as the reference measures a stream: the errno
/// of the first step that fails (`ESPIPE` for a pipe), or null.
pub const seekEnds: fn (std.fs.File) ?E = impl.seekEnds;
/// The directory standard input and streams are spooled to (Rust's `env::temp_dir`).
pub const tempDir: fn () []const u8 = impl.tempDir;

/// Whether `path` names standard input (`-`, and on POSIX its device names).
pub fn isStdin(path: []const u8) bool {
    for (impl.stdin_names) |n| if (std.mem.eql(u8, path, n)) return true;
    return false;
}

const posix = struct {
    const sys = std.posix;

    const stdin_names = [_][]const u8{ "-", "/dev/stdin", "/dev/fd/0", "/proc/self/fd/0" };

    /// As the C library's `realpath`: the path opened as a location only (`O_PATH`, no read
    /// permission needed), its name read back from `/proc`. A name that is no path
    /// (`pipe:[N]`, the target of `/dev/fd/N` for a pipe) does not exist, as to `realpath`.
    fn canonicalize(path: []const u8, buffer: *[std.fs.max_path_bytes]u8) Result([]const u8) {
        const path_z = sys.toPosixPath(path) catch return .{ .err = .NAMETOOLONG };
        const flags: sys.O = .{ .PATH = true, .CLOEXEC = true };
        const fd = switch (openRetrying(&path_z, flags)) {
            .ok => |fd| fd,
            .err => |errno| return .{ .err = errno },
        };
        defer sys.close(fd);
        const name = std.os.getFdPath(fd, buffer) catch return .{ .err = .NOENT };
        if (name.len == 0 or name[0] != '/') return .{ .err = .NOENT };
        return .{ .ok = name };
    }

    fn openReadOnly(path: []const u8) Result(std.fs.File) {
        const path_z = sys.toPosixPath(path) catch return .{ .err = .NAMETOOLONG };
        return switch (openRetrying(&path_z, .{ .ACCMODE = .RDONLY, .CLOEXEC = true })) {
            .ok => |fd| .{ .ok = .{ .handle = fd } },
            .err => |errno| .{ .err = errno },
        };
    }

    /// `openat` with its errno (`std.posix.openat` folds several into one Zig error).
    fn openRetrying(path_z: [*:0]const u8, flags: sys.O) Result(sys.fd_t) {
        while (true) {
            const rc = sys.system.openat(sys.AT.FDCWD, path_z, flags, 0);
            switch (sys.errno(rc)) {
                .SUCCESS => return .{ .ok = @intCast(rc) },
                .INTR => continue,
                else => |errno| return .{ .err = errno },
            }
        }
    }

    fn kindOf(file: std.fs.File) Result(Kind) {
        const st = sys.fstat(file.handle) catch |e| return .{ .err = errnoOf(e) };
        return .{ .ok = switch (st.mode & sys.S.IFMT) {
            sys.S.IFREG => .regular,
            sys.S.IFDIR => .directory,
            else => .other,
        } };
    }

    fn identityOf(file: std.fs.File) ?Identity {
        const st = sys.fstat(file.handle) catch return null;
        return .{ .device = @intCast(st.dev), .inode = @intCast(st.ino) };
    }

    fn identityAt(path: []const u8) ?Identity {
        const st = sys.fstatat(sys.AT.FDCWD, path, 0) catch return null;
        return .{ .device = @intCast(st.dev), .inode = @intCast(st.ino) };
    }

    fn readExact(file: std.fs.File, buffer: []u8) ReadExact {
        var done: usize = 0;
        while (done < buffer.len) {
            const rest = buffer[done..];
            const rc = sys.system.read(file.handle, rest.ptr, rest.len);
            switch (sys.errno(rc)) {
                .SUCCESS => {
                    const n: usize = @intCast(rc);
                    if (n == 0) return .eof;
                    done += n;
                },
                .INTR => continue,
                else => |errno| return .{ .err = errno },
            }
        }
        return .ok;
    }

    fn seekEnds(file: std.fs.File) ?E {
        inline for (.{ sys.SEEK.END, sys.SEEK.SET }) |whence| {
            const errno = sys.errno(sys.system.lseek(file.handle, 0, whence));
            if (errno != .SUCCESS) return errno;
        }
        return null;
    }

    /// `$TMPDIR`, or `/tmp` when it is unset or empty.
    fn tempDir() []const u8 {
        const dir = sys.getenv("TMPDIR") orelse return "/tmp";
        return if (dir.len == 0) "/tmp" else dir;
    }
};

const windows = struct {
    const w = std.os.windows;

    /// Only `-`: Windows has no device name for standard input that a path could open.
    const stdin_names = [_][]const u8{"-"};

    extern "kernel32" fn GetFileType(file: w.HANDLE) callconv(.winapi) w.DWORD;
    extern "kernel32" fn GetFileInformationByHandle(
        file: w.HANDLE,
        info: *w.BY_HANDLE_FILE_INFORMATION,
    ) callconv(.winapi) w.BOOL;
    extern "kernel32" fn GetFinalPathNameByHandleW(
        file: w.HANDLE,
        path: [*]u16,
        len: w.DWORD,
        flags: w.DWORD,
    ) callconv(.winapi) w.DWORD;
    const file_type_disk = 0x0001;

    /// As Rust's `fs::canonicalize`: the path opened for its attributes only (no read
    /// permission needed, a directory too), its name from `GetFinalPathNameByHandleW`, in
    /// the `\\?\C:\...` form the reference would name it by. (`std.fs.Dir.realpath` asks
    /// the mount manager for the volume's letter, which Wine does not answer.)
    fn canonicalize(path: []const u8, buffer: *[std.fs.max_path_bytes]u8) Result([]const u8) {
        const cwd = std.fs.cwd().fd;
        const path_w = w.sliceToPrefixedFileW(cwd, path) catch |e| return .{ .err = errnoOf(e) };
        const handle = w.OpenFile(path_w.span(), .{
            .dir = cwd,
            .access_mask = w.SYNCHRONIZE | w.FILE_READ_ATTRIBUTES,
            .creation = w.FILE_OPEN,
            .filter = .any,
        }) catch |e| return .{ .err = errnoOf(e) };
        defer w.CloseHandle(handle);
        var wide: [w.PATH_MAX_WIDE]u16 = undefined;
        const n = GetFinalPathNameByHandleW(handle, &wide, wide.len, 0);
        if (n == 0 or n >= wide.len) return .{ .err = .NOENT };
        if (std.unicode.calcWtf8Len(wide[0..n]) > buffer.len) return .{ .err = .NAMETOOLONG };
        return .{ .ok = buffer[0..std.unicode.wtf16LeToWtf8(buffer, wide[0..n])] };
    }

    /// Read-only, sharing read, write and delete with the event log service that may hold
    /// the file; a directory is opened as one so that its kind refuses it.
    fn openReadOnly(path: []const u8) Result(std.fs.File) {
        const cwd = std.fs.cwd();
        if (cwd.openFile(path, .{ .mode = .read_only })) |file| {
            return .{ .ok = file };
        } else |e| switch (e) {
            error.IsDir => {
                const dir = cwd.openDir(path, .{}) catch |de| return .{ .err = errnoOf(de) };
                return .{ .ok = .{ .handle = dir.fd } };
            },
            else => return .{ .err = errnoOf(e) },
        }
    }

    fn kindOf(file: std.fs.File) Result(Kind) {
        if (GetFileType(file.handle) != file_type_disk) return .{ .ok = .other };
        const st = file.stat() catch |e| return .{ .err = errnoOf(e) };
        return .{ .ok = switch (st.kind) {
            .file => .regular,
            .directory => .directory,
            else => .other,
        } };
    }

    fn identityOf(file: std.fs.File) ?Identity {
        if (GetFileType(file.handle) != file_type_disk) return null;
        var info: w.BY_HANDLE_FILE_INFORMATION = undefined;
        if (GetFileInformationByHandle(file.handle, &info) == 0) return null;
        return .{
            .device = info.dwVolumeSerialNumber,
            .inode = @as(u64, info.nFileIndexHigh) << 32 | info.nFileIndexLow,
        };
    }

    fn identityAt(path: []const u8) ?Identity {
        const file = std.fs.cwd().openFile(path, .{ .mode = .read_only }) catch return null;
        defer file.close();
        return windows.identityOf(file);
    }

    fn readExact(file: std.fs.File, buffer: []u8) ReadExact {
        const n = file.readAll(buffer) catch |e| return .{ .err = errnoOf(e) };
        return if (n < buffer.len) .eof else .ok;
    }

    fn seekEnds(file: std.fs.File) ?E {
        file.seekFromEnd(0) catch |e| return errnoOf(e);
        file.seekTo(0) catch |e| return errnoOf(e);
        return null;
    }

    var temp_buffer: [std.fs.max_path_bytes]u8 = undefined;

    /// `%TMP%`, then `%TEMP%`, then `%USERPROFILE%`, as `GetTempPath2W` looks, in WTF-8;
    /// `.` when none is set.
    fn tempDir() []const u8 {
        const names = [_][:0]const u16{
            std.unicode.utf8ToUtf16LeStringLiteral("TMP"),
            std.unicode.utf8ToUtf16LeStringLiteral("TEMP"),
            std.unicode.utf8ToUtf16LeStringLiteral("USERPROFILE"),
        };
        for (names) |name| {
            const value = std.process.getenvW(name) orelse continue;
            if (value.len == 0 or std.unicode.calcWtf8Len(value) > temp_buffer.len) continue;
            const n = std.unicode.wtf16LeToWtf8(&temp_buffer, value);
            return temp_buffer[0..n];
        }
        return ".";
    }
};

test "a regular file and a directory by kind; one file's identity through two paths" {
    var tmp = std.testing.tmpDir(.{});
    defer tmp.cleanup();
    try tmp.dir.writeFile(.{ .sub_path = "log.evtx", .data = "ElfFile\x00" });
    try tmp.dir.makeDir("dir");
    var base_buffer: [std.fs.max_path_bytes]u8 = undefined;
    const base = try tmp.dir.realpath(".", &base_buffer);
    var path_buffer: [std.fs.max_path_bytes]u8 = undefined;
    const file = try openForTest(&path_buffer, base, "log.evtx");
    defer file.close();
    try std.testing.expectEqual(Result(Kind){ .ok = .regular }, kindOf(file));
    const id = identityOf(file) orelse return error.TestUnexpectedResult;
    var dotted_buffer: [std.fs.max_path_bytes]u8 = undefined;
    const dotted = try std.fmt.bufPrint(&dotted_buffer, "{s}/dir/../log.evtx", .{base});
    try std.testing.expect(id.eql(identityAt(dotted) orelse return error.TestUnexpectedResult));
    const dir = try openForTest(&path_buffer, base, "dir");
    defer dir.close();
    try std.testing.expectEqual(Result(Kind){ .ok = .directory }, kindOf(dir));
    try std.testing.expect(!id.eql(identityOf(dir) orelse return error.TestUnexpectedResult));
    try std.testing.expect(isStdin("-") and !isStdin("log.evtx"));
}

fn openForTest(buffer: []u8, base: []const u8, name: []const u8) !std.fs.File {
    const path = try std.fmt.bufPrint(buffer, "{s}/{s}", .{ base, name });
    return switch (openReadOnly(path)) {
        .ok => |f| f,
        .err => error.TestUnexpectedResult,
    };
}
