//! One clap-style parser for the wevt subcommands (`extract-wevt-templates`,
//! `dump-template-instances`, `apply-wevt-cache`): options in any order, `--long`, `--long=v`,
//! `-s v`, `-sv`, `-s=v`, short flag clusters, `--` ends the options (and these commands take
//! no positional). Usage errors are in clap 4's words and layout, as `evtx_dump` 0.15.1 prints
//! them; each command converts and checks its values itself (`Parser.invalid`).
const std = @import("std");
const assert = std.debug.assert;
const help = @import("help.zig");

/// Most options one command has (its `Used` list is sized by it).
pub const specs_max = 16;

/// One option: `usage` is how clap names it in messages and `Usage:` lines (`--long <VALUE>`
/// for an option with a value).
pub const Spec = struct {
    long: []const u8,
    short: ?u8 = null,
    usage: []const u8,
    takes_value: bool = false,
    /// clap's `ArgAction::Append`: may be given again, every value kept.
    repeatable: bool = false,
};

/// A subcommand's options: `specs` (the last is `--help`) and the index of its one required
/// option, which clap's `Usage:` lines name first.
pub const Command = struct {
    name: []const u8,
    specs: []const Spec,
    required: usize,
};

/// clap's "did you mean" (`cli.similar`): the most similar candidate, or null.
pub const Similar = *const fn ([]const u8, []const []const u8) ?[]const u8;

/// One option given: its spec's index and its value ("" for a flag).
pub const Given = struct { spec: usize, value: []const u8 };

/// The kinds of `Usage:` line clap prints under an error.
const UsageLine = enum {
    none,
    /// `NAME CMD [OPTIONS] REQUIRED`.
    options,
    /// `NAME CMD REQUIRED` then the options given so far, in the order first given.
    used,
};

/// clap's error for a `String` value that is not UTF-8.
pub const invalid_utf8 = "invalid UTF-8 was detected in one or more arguments";

pub const Parser = struct {
    gpa: std.mem.Allocator,
    bin: []const u8,
    command: *const Command,
    similar: Similar,
    message: std.Io.Writer.Allocating,
    /// Every option given, in order.
    given: std.ArrayList(Given) = .empty,
    /// Spec indexes in the order first given (clap's `Usage:` line lists them).
    used: [specs_max]usize = undefined,
    used_count: usize = 0,
    /// After `error.Help`: `-h` asks for the short form, `--help` for the long one.
    help_form: help.Form = .long,

    pub fn init(
        gpa: std.mem.Allocator,
        bin: []const u8,
        command: *const Command,
        similar: Similar,
    ) Parser {
        assert(command.specs.len <= specs_max);
        assert(command.required < command.specs.len);
        assert(std.mem.eql(u8, command.specs[command.specs.len - 1].long, "help"));
        return .{
            .gpa = gpa,
            .bin = bin,
            .command = command,
            .similar = similar,
            .message = .init(gpa),
        };
    }

    /// Parses `args` (after the subcommand's name): `error.Usage` with the text in
    /// `message`, `error.Help` for `-h`/`--help`.
    pub fn parse(p: *Parser, args: []const []const u8) Error!void {
        var i: usize = 0;
        var only_positional = false;
        while (i < args.len) : (i += 1) {
            const arg = args[i];
            if (!only_positional and eql(arg, "--")) {
                only_positional = true;
            } else if (only_positional or !looksLikeOption(arg)) {
                return p.fail(.options, "unexpected argument '{s}' found", .{arg});
            } else if (std.mem.startsWith(u8, arg, "--")) {
                try p.parseLong(args, &i);
            } else {
                try p.shortCluster(args, &i);
            }
        }
        if (!p.has(p.command.required)) return p.fail(
            .used,
            "the following required arguments were not provided:\n  {s}",
            .{p.command.specs[p.command.required].usage},
        );
    }

    /// Whether option `spec` was given.
    pub fn has(p: *const Parser, spec: usize) bool {
        for (p.used[0..p.used_count]) |u| if (u == spec) return true;
        return false;
    }

    /// The value of option `spec` (the last given), or null.
    pub fn value(p: *const Parser, spec: usize) ?[]const u8 {
        var i = p.given.items.len;
        while (i > 0) {
            i -= 1;
            if (p.given.items[i].spec == spec) return p.given.items[i].value;
        }
        return null;
    }

    /// The values of a repeatable option, in order (owned by the caller's allocator).
    pub fn values(p: *const Parser, spec: usize) error{OutOfMemory}![]const []const u8 {
        var list: std.ArrayList([]const u8) = .empty;
        for (p.given.items) |g| if (g.spec == spec) try list.append(p.gpa, g.value);
        return list.toOwnedSlice(p.gpa);
    }

    /// clap's error for a value its parser refuses (no `Usage:` line).
    pub fn invalid(
        p: *Parser,
        spec: usize,
        given: []const u8,
        comptime why: []const u8,
        args: anytype,
    ) Error {
        const usage = p.command.specs[spec].usage;
        p.message.writer.print("invalid value '{s}' for '{s}': ", .{ given, usage }) catch
            return error.OutOfMemory;
        p.message.writer.print(why, args) catch return error.OutOfMemory;
        return error.Usage;
    }

    /// A `u64` as Rust's `from_str` reads it (clap's `value_parser!(u64)`), else `invalid`.
    pub fn unsigned(p: *Parser, spec: usize, given: []const u8) Error!u64 {
        return parseU64(given) catch |e| p.invalid(spec, given, "{s}", .{reasonOf(e)});
    }

    /// An integer of `0..=max` as clap's ranged `value_parser!(u8/u16)` reads it (an `i64`,
    /// then the range), else `invalid`.
    pub fn ranged(p: *Parser, spec: usize, given: []const u8, max: u32) Error!u32 {
        const n = parseI64(given) catch |e| return p.invalid(spec, given, "{s}", .{reasonOf(e)});
        if (n < 0 or n > max)
            return p.invalid(spec, given, "{d} is not in 0..={d}", .{ n, max });
        return @intCast(n);
    }

    /// The usage error's text (after `error: `, before clap's last line).
    pub fn text(p: *Parser) []const u8 {
        return p.message.written();
    }

    pub fn deinit(p: *Parser) void {
        p.message.deinit();
        p.given.deinit(p.gpa);
    }

    fn addUsed(p: *Parser, spec: usize) void {
        if (p.has(spec)) return;
        assert(p.used_count < p.used.len);
        p.used[p.used_count] = spec;
        p.used_count += 1;
    }

    fn fail(p: *Parser, line: UsageLine, comptime fmt: []const u8, args: anytype) Error {
        p.writeFailure(line, fmt, args) catch return error.OutOfMemory;
        return error.Usage;
    }

    fn writeFailure(
        p: *Parser,
        line: UsageLine,
        comptime fmt: []const u8,
        args: anytype,
    ) std.Io.Writer.Error!void {
        const w = &p.message.writer;
        const required = p.command.specs[p.command.required].usage;
        try w.print(fmt, args);
        switch (line) {
            .none => {},
            .options => try w.print(
                "\n\nUsage: {s} {s} [OPTIONS] {s}",
                .{ p.bin, p.command.name, required },
            ),
            .used => {
                try w.print("\n\nUsage: {s} {s} {s}", .{ p.bin, p.command.name, required });
                for (p.used[0..p.used_count]) |u| if (u != p.command.required)
                    try w.print(" {s}", .{p.command.specs[u].usage});
            },
        }
    }

    fn unknownLong(p: *Parser, name: []const u8) Error {
        var longs: [specs_max][]const u8 = undefined;
        for (p.command.specs, 0..) |s, i| longs[i] = s.long;
        if (p.similar(name, longs[0..p.command.specs.len])) |long| {
            p.addUsed(p.byLong(long).?);
            return p.fail(
                .used,
                "unexpected argument '--{s}' found\n\n  tip: a similar argument exists: '--{s}'",
                .{ name, long },
            );
        }
        // clap's `Usage:` line of the options used, or the full one when none was.
        const line: UsageLine = if (p.used_count == 0) .options else .used;
        return p.fail(line, "unexpected argument '--{s}' found", .{name});
    }

    /// clap's error for `arg` (the argument after a value option) when it is no option here.
    fn checkKnown(p: *Parser, arg: []const u8) Error!void {
        if (eql(arg, "--")) return;
        if (std.mem.startsWith(u8, arg, "--")) {
            const name = arg[2..(std.mem.indexOfScalar(u8, arg, '=') orelse arg.len)];
            if (p.byLong(name) == null) return p.unknownLong(name);
        } else if (p.byShort(arg[1]) == null) {
            return p.fail(.options, "unexpected argument '-{s}' found", .{shortName(arg, 1)});
        }
    }

    /// The value of an option: inline or the next argument. A next argument that looks like an
    /// option is parsed as one first (clap's order): an unknown one is reported as such.
    fn takeValue(
        p: *Parser,
        args: []const []const u8,
        i: *usize,
        inline_value: ?[]const u8,
        spec: usize,
    ) Error![]const u8 {
        if (inline_value) |v| return v;
        if (i.* + 1 < args.len and !looksLikeOption(args[i.* + 1])) {
            i.* += 1;
            return args[i.*];
        }
        if (i.* + 1 < args.len) try p.checkKnown(args[i.* + 1]);
        return p.fail(
            .none,
            "a value is required for '{s}' but none was supplied",
            .{p.command.specs[spec].usage},
        );
    }

    fn apply(p: *Parser, spec: usize, v: []const u8) Error!void {
        // Every value of the reference's subcommands is a `String`.
        if (!std.unicode.utf8ValidateSlice(v))
            return p.fail(.options, invalid_utf8, .{});
        if (!p.command.specs[spec].repeatable and p.has(spec)) return p.fail(
            .options,
            "the argument '{s}' cannot be used multiple times",
            .{p.command.specs[spec].usage},
        );
        try p.given.append(p.gpa, .{ .spec = spec, .value = v });
        p.addUsed(spec);
    }

    fn parseLong(p: *Parser, args: []const []const u8, i: *usize) Error!void {
        const arg = args[i.*];
        const at = std.mem.indexOfScalar(u8, arg, '=');
        const name = arg[2..(at orelse arg.len)];
        const inline_value: ?[]const u8 = if (at) |a| arg[a + 1 ..] else null;
        const spec = p.byLong(name) orelse return p.unknownLong(name);
        if (!p.command.specs[spec].takes_value) {
            if (inline_value) |v| {
                p.addUsed(spec);
                return p.fail(
                    .used,
                    "unexpected value '{s}' for '--{s}' found; no more were expected",
                    .{ v, name },
                );
            }
            if (p.isHelp(spec)) return p.helpRequest(.long);
            return p.apply(spec, "");
        }
        return p.apply(spec, try p.takeValue(args, i, inline_value, spec));
    }

    fn shortCluster(p: *Parser, args: []const []const u8, i: *usize) Error!void {
        const arg = args[i.*];
        var j: usize = 1;
        while (j < arg.len) : (j += 1) {
            const spec = p.byShort(arg[j]) orelse
                return p.fail(.options, "unexpected argument '-{s}' found", .{shortName(arg, j)});
            if (p.isHelp(spec)) return p.helpRequest(.short);
            if (!p.command.specs[spec].takes_value) {
                try p.apply(spec, "");
                continue;
            }
            var rest = arg[j + 1 ..];
            if (rest.len > 0 and rest[0] == '=') rest = rest[1..];
            const inline_value: ?[]const u8 = if (j + 1 < arg.len) rest else null;
            return p.apply(spec, try p.takeValue(args, i, inline_value, spec));
        }
    }

    fn helpRequest(p: *Parser, form: help.Form) error{Help} {
        p.help_form = form;
        return error.Help;
    }

    fn isHelp(p: *const Parser, spec: usize) bool {
        return spec == p.command.specs.len - 1;
    }

    fn byLong(p: *const Parser, name: []const u8) ?usize {
        for (p.command.specs, 0..) |s, i| if (eql(s.long, name)) return i;
        return null;
    }

    fn byShort(p: *const Parser, c: u8) ?usize {
        for (p.command.specs, 0..) |s, i| if (s.short == c) return i;
        return null;
    }
};

pub const Error = error{ Usage, Help, OutOfMemory };

/// How a subcommand's command line parsed: run with its options, print its help, or a usage
/// error in clap's words (the text is the parser's allocator's, kept until the process ends).
pub fn Outcome(comptime Options: type) type {
    return union(enum) {
        run: Options,
        /// `-h` (short) or `--help` (long).
        help: help.Form,
        usage: []const u8,
    };
}

/// Parses `argv` (after the subcommand's name) against `command`, then `read` takes the
/// options out of the parser: the one wrapper of the three template subcommands.
pub fn parseCommand(
    comptime Options: type,
    comptime read: fn (*Parser) Error!Options,
    gpa: std.mem.Allocator,
    bin: []const u8,
    command: *const Command,
    argv: []const []const u8,
    similar: Similar,
) error{OutOfMemory}!Outcome(Options) {
    var p: Parser = .init(gpa, bin, command, similar);
    p.parse(argv) catch |e| return outcomeOf(Options, &p, e);
    const options = read(&p) catch |e| return outcomeOf(Options, &p, e);
    return .{ .run = options };
}

fn outcomeOf(comptime Options: type, p: *Parser, e: Error) error{OutOfMemory}!Outcome(Options) {
    return switch (e) {
        error.Usage => .{ .usage = p.text() },
        error.Help => .{ .help = p.help_form },
        error.OutOfMemory => error.OutOfMemory,
    };
}

const NumberError = error{ Empty, InvalidDigit, TooLarge, TooSmall };

fn reasonOf(e: NumberError) []const u8 {
    return switch (e) {
        error.Empty => "cannot parse integer from empty string",
        error.InvalidDigit => "invalid digit found in string",
        error.TooLarge => "number too large to fit in target type",
        error.TooSmall => "number too small to fit in target type",
    };
}

/// Rust's `u64::from_str`: an optional `+`, then decimal digits.
fn parseU64(text: []const u8) NumberError!u64 {
    if (text.len == 0) return error.Empty;
    const digits = if (text[0] == '+') text[1..] else text;
    if (digits.len == 0) return error.InvalidDigit;
    var n: u64 = 0;
    for (digits) |c| {
        if (c < '0' or c > '9') return error.InvalidDigit;
        n = std.math.mul(u64, n, 10) catch return error.TooLarge;
        n = std.math.add(u64, n, c - '0') catch return error.TooLarge;
    }
    return n;
}

/// Rust's `i64::from_str`: an optional sign, then decimal digits.
fn parseI64(text: []const u8) NumberError!i64 {
    if (text.len == 0) return error.Empty;
    const negative = text[0] == '-';
    const digits = if (text[0] == '+' or negative) text[1..] else text;
    if (digits.len == 0) return error.InvalidDigit;
    var n: i64 = 0;
    for (digits) |c| {
        if (c < '0' or c > '9') return error.InvalidDigit;
        const overflow: NumberError = if (negative) error.TooSmall else error.TooLarge;
        n = std.math.mul(i64, n, 10) catch return overflow;
        const digit: i64 = c - '0';
        n = (if (negative) std.math.sub(i64, n, digit) else std.math.add(i64, n, digit)) catch
            return overflow;
    }
    return n;
}

fn looksLikeOption(arg: []const u8) bool {
    return arg.len > 1 and arg[0] == '-';
}

/// The character at `at` (a whole UTF-8 sequence), as clap names an unknown short option.
fn shortName(arg: []const u8, at: usize) []const u8 {
    const len = @min(std.unicode.utf8ByteSequenceLength(arg[at]) catch 1, arg.len - at);
    return arg[at..][0..len];
}

fn eql(a: []const u8, b: []const u8) bool {
    return std.mem.eql(u8, a, b);
}

// Tests: the expected texts are `evtx_dump` 0.15.1's for `dump-template-instances` (its
// options: `-i/--input <EVTX>` required, `--record-id <ID>`, `--template-instance-index <N>`).

/// The real table, not a copy: the texts below are the reference's for this very command.
const test_command = @import("dump_template_instances.zig").command;

/// The reference's suggestion for the one misspelling the tests use.
fn testSimilar(text: []const u8, candidates: []const []const u8) ?[]const u8 {
    if (!eql(text, "recrd-id")) return null;
    for (candidates) |c| if (eql(c, "record-id")) return c;
    return null;
}

fn expectUsage(args: []const []const u8, expected: []const u8) !void {
    var p: Parser = .init(std.testing.allocator, "evtx_dump", &test_command, testSimilar);
    defer p.deinit();
    try std.testing.expectError(error.Usage, p.parse(args));
    try std.testing.expectEqualStrings(expected, p.text());
}

test "usage errors in the reference's words" {
    try expectUsage(&.{}, "the following required arguments were not provided:\n" ++
        "  --input <EVTX>\n\nUsage: evtx_dump dump-template-instances --input <EVTX>");
    try expectUsage(&.{ "-i", "x", "--foo" }, "unexpected argument '--foo' found\n\n" ++
        "Usage: evtx_dump dump-template-instances --input <EVTX>");
    try expectUsage(&.{ "--foo", "-i", "x" }, "unexpected argument '--foo' found\n\n" ++
        "Usage: evtx_dump dump-template-instances [OPTIONS] --input <EVTX>");
    try expectUsage(&.{ "--record-id", "1", "--foo" }, "unexpected argument '--foo' found\n\n" ++
        "Usage: evtx_dump dump-template-instances --input <EVTX> --record-id <ID>");
    try expectUsage(&.{ "-i", "x", "--recrd-id", "3" }, "unexpected argument '--recrd-id' " ++
        "found\n\n  tip: a similar argument exists: '--record-id'\n\n" ++
        "Usage: evtx_dump dump-template-instances --input <EVTX> --record-id <ID>");
    try expectUsage(&.{ "-i", "x", "-z" }, "unexpected argument '-z' found\n\n" ++
        "Usage: evtx_dump dump-template-instances [OPTIONS] --input <EVTX>");
    try expectUsage(&.{ "-i", "x", "y" }, "unexpected argument 'y' found\n\n" ++
        "Usage: evtx_dump dump-template-instances [OPTIONS] --input <EVTX>");
    try expectUsage(&.{ "-i", "x", "-i", "y" }, "the argument '--input <EVTX>' cannot be " ++
        "used multiple times\n\nUsage: evtx_dump dump-template-instances [OPTIONS] --input <EVTX>");
    try expectUsage(&.{ "-i", "x", "--record-id" }, "a value is required for " ++
        "'--record-id <ID>' but none was supplied");
    try expectUsage(&.{ "-i", "x", "--record-id", "-5" }, "unexpected argument '-5' found\n\n" ++
        "Usage: evtx_dump dump-template-instances [OPTIONS] --input <EVTX>");
}

test "values: inline forms, the last kept, numbers as clap reads them" {
    var p: Parser = .init(std.testing.allocator, "evtx_dump", &test_command, testSimilar);
    defer p.deinit();
    try p.parse(&.{ "-ia.evtx", "--record-id=7", "--template-instance-index", "2" });
    try std.testing.expectEqualStrings("a.evtx", p.value(0).?);
    try std.testing.expectEqual(@as(u64, 7), try p.unsigned(1, p.value(1).?));
    try std.testing.expect(p.value(2) != null and p.value(3) == null);
    // The reference: `--record-id abc`, `--record-id=`, `--event-id 70000`.
    try std.testing.expectError(error.Usage, p.unsigned(1, "abc"));
    try std.testing.expectError(error.Usage, p.unsigned(1, ""));
    try std.testing.expectError(error.Usage, p.ranged(1, "70000", 65535));
    try std.testing.expectEqualStrings("invalid value 'abc' for '--record-id <ID>': invalid " ++
        "digit found in string" ++ "invalid value '' for '--record-id <ID>': cannot parse " ++
        "integer from empty string" ++ "invalid value '70000' for '--record-id <ID>': 70000 " ++
        "is not in 0..=65535", p.text());
    var h: Parser = .init(std.testing.allocator, "evtx_dump", &test_command, testSimilar);
    defer h.deinit();
    try std.testing.expectError(error.Help, h.parse(&.{ "-i", "x", "-h" }));
    try std.testing.expectEqual(help.Form.short, h.help_form);
    // Parsed again (the form just set was the short one): the first help option decides.
    try std.testing.expectError(error.Help, h.parse(&.{ "--help", "-h", "--bogus" }));
    try std.testing.expectEqual(help.Form.long, h.help_form);
}
