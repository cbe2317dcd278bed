//! What `evtx-zig` does beyond `evtx_dump` 0.15.1, only where the reference refuses the command
//! line (README, "Extensions"): the filters and `--provenance` (options in no help page), two or
//! more INPUTs, and the `help extensions` page. evtx-rs's twin is `rust/cli/src/extensions.rs`.
//!
//! The command line is read in two passes. First as the reference reads it
//! (`commands.main`): what it accepts runs exactly as today, what it refuses for help or
//! version prints that. Only a line it refuses is read again with the extensions
//! (`commands.main_extended`), and the second pass decides only when the line names an
//! extension option (`--event-id`, ...: then its own errors are ours), or parses with two or
//! more inputs none of which the reference would take for a subcommand. Any other refused line
//! gets the reference's error, tip and `Usage:` line: the extensions' options are never a
//! "similar argument" for a typo of the reference's (clap suggests among every long option of
//! the command it parses, so they live only in the second).
const std = @import("std");
const args = @import("args.zig");
const commands = @import("commands.zig");
const evtx = @import("evtx");

/// The extension options' long names, as `named` looks for them.
const names = [_][]const u8{
    "event-id", "provider", "channel", "level", "since", "until", "provenance",
};

/// The reference's subcommands (and clap's `help`): a line without `--` whose inputs name one
/// keeps the reference's error.
const subcommand_names = [_][]const u8{
    "extract-wevt-templates", "dump-template-instances", "apply-wevt-cache", "info", "help",
};

/// The page of `help extensions` (the same text in both CLIs, one file).
pub const help_page = @embedFile("help_extensions");

/// The page of `triage --help` (the same text in both CLIs, one file).
pub const triage_help_page = @embedFile("help_triage");

/// What the command line asks for.
pub const Parsed = union(enum) {
    /// What the parse of one table gave (`matches.command` says which).
    outcome: args.Outcome,
    /// `help extensions`.
    help_extensions,
    /// `triage` with its arguments (`commands.triage`'s matches).
    triage: *const args.Matches,
    /// `triage -h` or `triage --help`.
    help_triage,
};

/// Reads `argv` (after the program's name) in the two passes.
pub fn parse(
    gpa: std.mem.Allocator,
    bin: []const u8,
    argv: []const []const u8,
) error{OutOfMemory}!Parsed {
    // `triage` and more: ours where it asks for help or the reference refuses the line (a lone
    // `triage`, or `triage -V`, stays the reference's: an INPUT of that name, its version).
    const refused = try args.parse(gpa, bin, argv);
    if (argv.len >= 2 and eql(argv[0], "triage") and
        (asksHelp(argv[1..]) or refused == .usage))
    {
        return switch (try args.parseWith(gpa, bin, &commands.triage, argv[1..])) {
            .run => |m| .{ .triage = m },
            .help => .help_triage,
            .usage => |text| .{ .outcome = .{ .usage = text } },
            .version => unreachable, // `triage` has no `--version`.
        };
    }
    if (refused != .usage) return .{ .outcome = refused };
    if (argv.len == 2 and eql(argv[0], "help") and eql(argv[1], "extensions"))
        return .help_extensions;
    const is_named = named(argv);
    const second = try args.parseWith(gpa, bin, &commands.main_extended, argv);
    switch (second) {
        .run => |m| {
            const inputs = try m.texts(gpa, args.positional);
            if (is_named or manyInputs(argv, inputs)) return .{ .outcome = second };
        },
        // The reference's page, in the form asked for: the extensions have their own.
        .help => |page| if (is_named)
            return .{ .outcome = .{ .help = .{ .command = &commands.main, .form = page.form } } },
        .version, .usage => if (is_named) return .{ .outcome = second },
    }
    return .{ .outcome = refused };
}

/// Whether `-h` or `--help` comes before `--` (evtx-rs: `triage::asks_help`).
fn asksHelp(argv: []const []const u8) bool {
    for (argv) |arg| {
        if (eql(arg, "--")) return false;
        if (eql(arg, "-h") or eql(arg, "--help")) return true;
    }
    return false;
}

/// Whether `argv` names an extension option before `--`: `--NAME` or `--NAME=VALUE`.
fn named(argv: []const []const u8) bool {
    for (argv) |arg| {
        if (eql(arg, "--")) return false;
        if (!std.mem.startsWith(u8, arg, "--")) continue;
        const name = arg[2 .. std.mem.indexOfScalar(u8, arg, '=') orelse arg.len];
        for (names) |n| if (eql(n, name)) return true;
    }
    return false;
}

/// Whether the second pass may run `inputs`, read from `argv`, where no extension option is
/// named: two or more, and, on a line without `--`, none named as a reference subcommand.
fn manyInputs(argv: []const []const u8, inputs: []const []const u8) bool {
    if (inputs.len < 2) return false;
    for (argv) |arg| if (eql(arg, "--")) return true;
    for (inputs) |input| for (subcommand_names) |n| if (eql(n, input)) return false;
    return true;
}

fn eql(a: []const u8, b: []const u8) bool {
    return std.mem.eql(u8, a, b);
}

/// An inclusive range of a LIST (`--event-id`, `--level`), as the engine's filter reads it.
pub const Range = evtx.filter.Range;

test "an extension is named before the end of options" {
    try std.testing.expect(named(&.{ "-t", "1", "--event-id", "4624", "a.evtx" }));
    try std.testing.expect(named(&.{ "--since=2024-01-01T00:00:00Z", "a.evtx" }));
    try std.testing.expect(!named(&.{ "--", "--provenance" }));
    try std.testing.expect(!named(&.{ "--provenanc", "a.evtx" }));
    try std.testing.expect(!named(&.{ "-f", "--levels", "a.evtx" }));
}

test "many inputs unless one is a subcommand" {
    try std.testing.expect(manyInputs(&.{ "a", "b" }, &.{ "a", "b" }));
    try std.testing.expect(!manyInputs(&.{"a"}, &.{"a"}));
    try std.testing.expect(!manyInputs(&.{ "a", "info" }, &.{ "a", "info" }));
    try std.testing.expect(manyInputs(&.{ "a", "--", "info" }, &.{ "a", "info" }));
}
