//! The CLI's writers on standard output, standard error and `-f`: every one streams.
//!
//! Why: Zig 0.15's `File.writer` is positional, it writes with `pwrite` at its own offset
//! (from 0) as long as the descriptor is seekable. With stdout or stderr redirected to a file
//! that other commands write too (`( echo BEFORE >&2; evtx-zig ...; echo AFTER >&2 ) 2> log`),
//! that overwrote `BEFORE` and was overwritten by `AFTER`. A streaming writer uses `write` at
//! the descriptor's shared offset (the end, under `>>`), as every other program does.
//! `.ci/tidy.py` refuses `File.stdout()` and `File.stderr()` anywhere else in the Zig CLI,
//! the engine or the C ABI.
const std = @import("std");
const assert = std.debug.assert;

/// A streaming writer on standard output.
pub fn stdoutWriter(buffer: []u8) std.fs.File.Writer {
    return writer(std.fs.File.stdout(), buffer);
}

/// A streaming writer on standard error.
pub fn stderrWriter(buffer: []u8) std.fs.File.Writer {
    return writer(std.fs.File.stderr(), buffer);
}

/// Standard output as a file (the dump's output without `-f`).
pub fn stdoutFile() std.fs.File {
    return std.fs.File.stdout();
}

/// Whether standard error is a terminal (the progress line is drawn only there).
pub fn stderrIsTty() bool {
    return std.fs.File.stderr().isTty();
}

/// A streaming writer on `file`: writes go to the descriptor's offset, never to one of the
/// writer's own.
pub fn writer(file: std.fs.File, buffer: []u8) std.fs.File.Writer {
    const w = file.writerStreaming(buffer);
    assert(w.mode == .streaming);
    return w;
}

test "a writer appends at the descriptor's offset, after what others wrote" {
    var dir = std.testing.tmpDir(.{});
    defer dir.cleanup();
    const file = try dir.dir.createFile("log", .{ .read = true });
    defer file.close();
    // Another command wrote first through the same descriptor (a shared `2> log`).
    try file.writeAll("BEFORE\n");
    var buffer: [16]u8 = undefined;
    var w = writer(file, &buffer);
    try w.interface.writeAll("wrote 4 resource blob(s)\n");
    try w.interface.flush();
    try file.writeAll("AFTER\n");
    var text: [64]u8 = undefined;
    const n = try file.preadAll(&text, 0);
    try std.testing.expectEqualStrings("BEFORE\nwrote 4 resource blob(s)\nAFTER\n", text[0..n]);
}
