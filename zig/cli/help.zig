//! The help texts of `evtx-zig`: `evtx_dump` 0.15.1's words, rendered from the command table
//! (`commands.zig`) as its clap 4.6 lays them out (no wrapping: the reference is built without
//! clap's `wrap_help`), so that `-h`, `--help`, `help [COMMAND]` and each subcommand's help are
//! the reference's byte for byte, the program's name aside. `evtx-compare exit-table` checks
//! every form against the reference at test time; the Rust twin is `rust/cli/src/help.rs` (clap
//! itself prints it).
//!
//! Each command gives both forms: `short` (`-h`: one line per argument, the help beside its
//! name) and `long` (`--help`, `help [COMMAND]`: the help under the name, the long help and long
//! about where the reference has one, a blank line between arguments).
const std = @import("std");
const commands = @import("commands.zig");
const args = @import("args.zig");
const Command = commands.Command;
const Writer = std.Io.Writer;
const assert = std.debug.assert;

/// Writes `command`'s help in `form`, `bin` being the program's name as invoked.
pub fn write(
    w: *Writer,
    command: *const Command,
    form: args.Form,
    bin: []const u8,
) Writer.Error!void {
    // Only the commands with a long text have a long form (clap's `use_long`).
    const long = form == .long and hasLongHelp(command);
    const about = if (long) command.long_about orelse command.about else command.about;
    try w.print("{s}\n\nUsage: ", .{about});
    try args.writeUsage(w, bin, command, &.{});
    try w.writeAll("\n");
    if (command.subcommands.len > 0) try writeCommands(w, command);
    if (command.positional) |positional| {
        try w.writeAll("\nArguments:\n");
        try writeArgs(w, &.{.{ .positional = positional }}, long);
    }
    if (command.options.len > 0) {
        try w.writeAll("\nOptions:\n");
        var entries: [commands.options_max]Entry = undefined;
        for (command.options, 0..) |option, i| entries[i] = .{ .option = option };
        try writeArgs(w, entries[0..command.options.len], long);
    }
}

fn hasLongHelp(command: *const Command) bool {
    if (command.long_about != null) return true;
    for (command.options) |option| {
        if (option.action != .help and option.long_help != null) return true;
    }
    return false;
}

/// The `Commands:` list: each subcommand's name, padded to the longest, and its about line.
fn writeCommands(w: *Writer, command: *const Command) Writer.Error!void {
    var longest: usize = 0;
    for (command.subcommands) |sub| longest = @max(longest, sub.name.len);
    try w.writeAll("\nCommands:\n");
    for (command.subcommands) |sub| {
        try w.print("  {s}", .{sub.name});
        try w.splatByteAll(' ', longest - sub.name.len + 2);
        try w.print("{s}\n", .{sub.about});
    }
}

/// One argument of a help page.
const Entry = union(enum) {
    positional: commands.Positional,
    option: commands.Option,

    fn help(e: Entry, long: bool) []const u8 {
        return switch (e) {
            .positional => |p| p.help,
            .option => |o| if (long) o.long_help orelse o.help else o.help,
        };
    }

    fn default(e: Entry) ?[]const u8 {
        return switch (e) {
            .positional => null,
            .option => |o| o.default,
        };
    }

    fn choices(e: Entry) []const []const u8 {
        return switch (e) {
            .positional => &.{},
            .option => |o| switch (o.check) {
                .choice => |names| names,
                else => &.{},
            },
        };
    }

    fn hasSpecValues(e: Entry) bool {
        return e.default() != null or e.choices().len > 0;
    }
};

/// Where the long form's help lines start (clap's `NEXT_LINE_INDENT`).
const long_indent = 10;

/// Longest argument name clap shows (`-o, --output <PATH>`): far below this.
const name_max = 64;

/// One section's arguments: in the short form each name padded to the section's longest, the
/// help beside it and its other lines under it; in the long form the help under the name,
/// indented by 10, and a blank line between arguments.
fn writeArgs(w: *Writer, entries: []const Entry, long: bool) Writer.Error!void {
    var longest: usize = 0;
    for (entries) |entry| longest = @max(longest, nameOf(entry).len());
    for (entries, 0..) |entry, n| {
        const name = nameOf(entry);
        try w.print("  {s}", .{name.slice()});
        if (long) {
            try w.writeAll("\n");
            try w.splatByteAll(' ', long_indent);
            try writeIndented(w, entry.help(true), long_indent);
            if (entry.hasSpecValues()) {
                try w.writeAll("\n");
                try w.splatByteAll(' ', long_indent);
                try w.writeAll("\n");
                try w.splatByteAll(' ', long_indent);
                try writeSpecValues(w, entry, "\n" ++ " " ** long_indent);
            }
            try w.writeAll(if (n + 1 < entries.len) "\n\n" else "\n");
        } else {
            try w.splatByteAll(' ', longest - name.len() + 2);
            try writeIndented(w, entry.help(false), longest + 4);
            if (entry.hasSpecValues()) {
                try w.writeAll(" ");
                try writeSpecValues(w, entry, " ");
            }
            try w.writeAll("\n");
        }
    }
}

/// `text` with every line after the first indented by `indent`, empty ones too (clap's
/// layout: a help ending in a newline gives a line of spaces). The first line goes where the
/// caller left the cursor.
fn writeIndented(w: *std.Io.Writer, text: []const u8, indent: usize) std.Io.Writer.Error!void {
    var lines = std.mem.splitScalar(u8, text, '\n');
    try w.writeAll(lines.first());
    while (lines.next()) |line| {
        try w.writeAll("\n");
        try w.splatByteAll(' ', indent);
        try w.writeAll(line);
    }
}

/// `[default: X]` then `[possible values: ...]`, joined by `separator`.
fn writeSpecValues(w: *Writer, entry: Entry, separator: []const u8) Writer.Error!void {
    if (entry.default()) |default| try w.print("[default: {s}]", .{default});
    const names = entry.choices();
    if (names.len == 0) return;
    if (entry.default() != null) try w.writeAll(separator);
    try w.writeAll("[possible values: ");
    for (names, 0..) |name, i| try w.print("{s}{s}", .{ if (i > 0) ", " else "", name });
    try w.writeAll("]");
}

/// An argument's name column: `-t, --threads <num-threads>`, `    --no-indent`, `-v...`,
/// `[INPUT]`, `[COMMAND]...`.
const Name = struct {
    buffer: [name_max]u8 = undefined,
    length: usize = 0,

    fn slice(name: *const Name) []const u8 {
        return name.buffer[0..name.length];
    }

    fn len(name: Name) usize {
        return name.length;
    }
};

fn nameOf(entry: Entry) Name {
    var name: Name = .{};
    var w: Writer = .fixed(&name.buffer);
    writeName(&w, entry) catch unreachable; // Every name here fits: `name_max` is far above.
    name.length = w.end;
    return name;
}

fn writeName(w: *Writer, entry: Entry) Writer.Error!void {
    const option = switch (entry) {
        .positional => |p| {
            try w.print("[{s}]", .{p.name});
            if (p.many) try w.writeAll("...");
            return;
        },
        .option => |o| o,
    };
    if (option.short) |c| {
        try w.print("-{c}", .{c});
        if (option.long != null) try w.writeAll(", ");
    } else {
        try w.writeAll("    ");
    }
    if (option.long) |l| try w.print("--{s}", .{l});
    if (option.value) |value| try w.print(" <{s}>", .{value});
    if (option.action == .count) try w.writeAll("...");
}

test "the name column" {
    const main = commands.main;
    const cases = [_]struct { entry: Entry, name: []const u8 }{
        .{ .entry = .{ .option = main.options[0] }, .name = "-t, --threads <num-threads>" },
        .{ .entry = .{ .option = main.options[3] }, .name = "    --no-confirm-overwrite" },
        .{ .entry = .{ .option = main.options[main.id("v")] }, .name = "-v..." },
        .{ .entry = .{ .positional = main.positional.? }, .name = "[INPUT]" },
        .{ .entry = .{ .positional = commands.help.positional.? }, .name = "[COMMAND]..." },
    };
    for (cases) |case| try std.testing.expectEqualStrings(case.name, nameOf(case.entry).slice());
    var longest: usize = 0;
    for (commands.all) |command| {
        for (command.options) |option| longest = @max(longest, nameOf(.{ .option = option }).len());
    }
    try std.testing.expect(longest < name_max);
}

test "info's short form, as the reference prints it" {
    var buffer: [1024]u8 = undefined;
    var w: Writer = .fixed(&buffer);
    try write(&w, &commands.info, .short, "evtx_dump");
    try std.testing.expectEqualStrings(
        \\Show an EVTX file's header and each chunk's record IDs, flags and CRC32s
        \\
        \\Usage: evtx_dump info --input <EVTX>
        \\
        \\Options:
        \\  -i, --input <EVTX>  Input EVTX file path.
        \\  -h, --help          Print help (see more with '--help')
        \\
    , w.buffered());
}
