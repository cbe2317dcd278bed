//! The one argument parser of evtx-zig: clap 4.6's algorithm (the reference's parser) driven by
//! the table of `commands.zig`. Options in any order, `--long`, `--long=v`, `-s v`, `-sv`,
//! `-s=v`, clusters of short flags, `--` ending the options, one positional, subcommands.
//!
//! The order is clap's, so the first error of a command line is the reference's: a value given
//! as the next argument waits (`pending`) and is read only when the argument after it is taken,
//! which an unknown option never is; a subcommand is parsed before its parent's waiting value.
//! Every message, tip and `Usage:` line is in clap's words and layout; an argument that is not
//! UTF-8 is shown as Rust's `to_string_lossy` shows it.
const std = @import("std");
const evtx = @import("evtx");
const commands = @import("commands.zig");
const extensions = @import("extensions.zig");
const Command = commands.Command;
const Option = commands.Option;
const Writer = std.Io.Writer;
const assert = std.debug.assert;

/// `-h` asks for the short help, `--help` and `help [COMMAND]` for the long one.
pub const Form = enum { short, long };

/// How the command line parsed. Everything is the parser's allocator's, kept until the process
/// ends (the CLI parses once; tests use an arena).
pub const Outcome = union(enum) {
    run: *const Matches,
    help: struct { command: *const Command, form: Form },
    version,
    /// A usage error (exit 2): its text after `error: `, clap's `For more information` line
    /// included, without the last newline.
    usage: []const u8,
};

/// Parses `argv` (after the program's name, `bin` as clap shows it) against the tool's table.
pub fn parse(
    gpa: std.mem.Allocator,
    bin: []const u8,
    argv: []const []const u8,
) error{OutOfMemory}!Outcome {
    return parseWith(gpa, bin, &commands.main, argv);
}

/// Parses `argv` against `command`'s table (the tool's, or `commands.main_extended`).
pub fn parseWith(
    gpa: std.mem.Allocator,
    bin: []const u8,
    command: *const Command,
    argv: []const []const u8,
) error{OutOfMemory}!Outcome {
    var shared: Shared = .{ .message = .init(gpa) };
    const matches = try gpa.create(Matches);
    matches.* = .{ .command = command };
    var p: Parser = .{ .gpa = gpa, .bin = bin, .m = matches, .shared = &shared };
    p.run(argv) catch |e| return switch (e) {
        error.OutOfMemory => error.OutOfMemory,
        error.Usage => .{ .usage = shared.message.written() },
        error.Help => .{ .help = .{ .command = shared.help.command, .form = shared.help.form } },
        error.Version => .version,
    };
    return .{ .run = matches };
}

/// An argument of a command: an index into its options, or `positional`.
pub const Id = u8;
pub const positional: Id = commands.options_max;

/// A value as its check (`commands.Check`) read it.
pub const Value = union(enum) {
    text: []const u8,
    number: u64,
    ranges: []const evtx.options.Range,
    codec: evtx.values_format.Codec,
    /// `--event-id`, `--level`.
    list: []const extensions.Range,
    /// `--since`, `--until`: a FILETIME.
    time: u64,
};

/// What a command line gave one command (clap's `ArgMatches`).
pub const Matches = struct {
    command: *const Command,
    /// Every value given, in order.
    given: std.ArrayList(struct { id: Id, value: Value }) = .empty,
    /// The arguments present in clap's order (`Usage:` lines list them).
    used: Used = .{},
    /// How many times each counted flag was given.
    counts: [commands.options_max]u32 = @splat(0),
    subcommand: ?*const Matches = null,

    pub fn has(m: *const Matches, id: Id) bool {
        return m.used.contains(id);
    }

    /// The last value of `id`, or null.
    pub fn value(m: *const Matches, id: Id) ?Value {
        var i = m.given.items.len;
        while (i > 0) {
            i -= 1;
            if (m.given.items[i].id == id) return m.given.items[i].value;
        }
        return null;
    }

    pub fn text(m: *const Matches, id: Id) ?[]const u8 {
        return (m.value(id) orelse return null).text;
    }

    pub fn number(m: *const Matches, id: Id) ?u64 {
        return (m.value(id) orelse return null).number;
    }

    /// Every text of an option given again and again, in order (the caller's to free).
    pub fn texts(
        m: *const Matches,
        gpa: std.mem.Allocator,
        id: Id,
    ) error{OutOfMemory}![]const []const u8 {
        var list: std.ArrayList([]const u8) = .empty;
        for (m.given.items) |g| if (g.id == id) try list.append(gpa, g.value.text);
        return list.toOwnedSlice(gpa);
    }

    pub fn count(m: *const Matches, id: Id) u32 {
        return m.counts[id];
    }
};

/// The arguments present, each once, in order.
const Used = struct {
    ids: [commands.options_max + 1]Id = undefined,
    len: usize = 0,

    fn slice(u: *const Used) []const Id {
        return u.ids[0..u.len];
    }

    fn contains(u: *const Used, id: Id) bool {
        return std.mem.indexOfScalar(Id, u.slice(), id) != null;
    }

    fn add(u: *Used, id: Id) void {
        if (u.contains(id)) return;
        assert(u.len < u.ids.len);
        u.ids[u.len] = id;
        u.len += 1;
    }

    /// The arguments present but hidden ones, as clap lists them before it adds the one an
    /// error is about (which may be hidden).
    fn visible(u: *const Used, command: *const Command) Used {
        var shown: Used = .{};
        for (u.slice()) |id| {
            if (id == positional or !command.options[id].hidden) shown.add(id);
        }
        return shown;
    }

    /// Whether `id` was there (clap's `ArgMatcher::remove`).
    fn remove(u: *Used, id: Id) bool {
        const at = std.mem.indexOfScalar(Id, u.slice(), id) orelse return false;
        std.mem.copyForwards(Id, u.ids[at .. u.len - 1], u.ids[at + 1 .. u.len]);
        u.len -= 1;
        return true;
    }
};

/// clap's `Usage:` line after `Usage: `: with nothing used the help's (`[OPTIONS]`, every
/// required option, the positional, `[COMMAND]`), else the required options and the used ones,
/// then the positional (`<NAME>` once given).
pub fn writeUsage(
    w: *Writer,
    bin: []const u8,
    command: *const Command,
    used: []const Id,
) Writer.Error!void {
    try w.writeAll(bin);
    if (command.name.len > 0) try w.print(" {s}", .{command.name});
    const none = used.len == 0;
    if (none and needsOptionsTag(command)) try w.writeAll(" [OPTIONS]");
    for (command.options) |option| if (option.required) try w.print(" {f}", .{option});
    for (used) |id| {
        if (id == positional or command.options[id].required) continue;
        try w.print(" {f}", .{command.options[id]});
    }
    if (command.positional) |p| {
        const given = std.mem.indexOfScalar(Id, used, positional) != null;
        if (given or p.required) try w.print(" <{s}>", .{p.name}) else try w.print(" [{s}]", .{
            p.name,
        });
        if (p.many) try w.writeAll("...");
    }
    if (none and command.subcommands.len > 0) try w.writeAll(" [COMMAND]");
}

/// `[OPTIONS]`: an option that is neither required nor help or version.
fn needsOptionsTag(command: *const Command) bool {
    for (command.options) |option| switch (option.action) {
        .help, .version => {},
        .set, .append, .count => if (!option.required) return true,
    };
    return false;
}

/// clap's error for a `String` value that is not UTF-8.
const invalid_utf8 = "invalid UTF-8 was detected in one or more arguments";

const Error = error{ Usage, Help, Version, OutOfMemory };

/// What the parsers of a command line (the tool's and a subcommand's) share: the last error.
const Shared = struct {
    message: Writer.Allocating,
    help: struct { command: *const Command, form: Form } = undefined,
};

/// How an option was named: its value's error words depend on it only for help.
const Ident = enum { short, long, index };

/// An option waiting for its value (the next argument), or a positional value not read yet.
const Pending = struct { id: Id, ident: Ident, value: ?[]const u8 = null };

/// An argument as clap shows it: its dashes, then the rest as Rust's `to_string_lossy`.
const Shown = struct {
    dashes: []const u8 = "",
    name: []const u8,

    pub fn format(s: Shown, w: *Writer) Writer.Error!void {
        try w.print("{s}{f}", .{ s.dashes, std.unicode.fmtUtf8(s.name) });
    }
};

/// The tip under a usage error (clap 4's words).
const Tip = union(enum) {
    none,
    /// The argument may be passed as a value after `--`.
    trailing: Shown,
    similar_argument: []const u8,
    /// Every similar subcommand, the most similar last.
    similar_subcommands: []const []const u8,
    similar_value: []const u8,
    /// An option of a subcommand named later on the line.
    subcommand_argument: struct { command: []const u8, long: []const u8 },
    /// A subcommand's name after `--`.
    double_dash: Shown,

    fn write(tip: Tip, w: *Writer) Writer.Error!void {
        if (tip == .none) return;
        try w.writeAll("\n\n  tip: ");
        switch (tip) {
            .none => unreachable,
            .trailing => |s| try w.print("to pass '{f}' as a value, use '-- {f}'", .{ s, s }),
            .similar_argument => |long| try w.print("a similar argument exists: '--{s}'", .{long}),
            .similar_subcommands => |names| {
                const one = names.len == 1;
                try w.writeAll(if (one) "a similar subcommand exists: " else "some similar " ++
                    "subcommands exist: ");
                for (names, 0..) |name, i| try w.print("{s}'{s}'", .{ separator(i), name });
            },
            .similar_value => |v| try w.print("a similar value exists: '{s}'", .{v}),
            .subcommand_argument => |s| try w.print("'{s} --{s}' exists", .{ s.command, s.long }),
            .double_dash => |s| try w.print("subcommand '{f}' exists; to use it, remove the " ++
                "'--' before it", .{s}),
        }
    }
};

/// `, ` before every item of a list but the first.
fn separator(index: usize) []const u8 {
    return if (index > 0) ", " else "";
}

/// The `Usage:` line under a usage error: none, the help's, or the one of the arguments used.
const UsageLine = union(enum) { none, full, used: *const Used };

const Parser = struct {
    gpa: std.mem.Allocator,
    bin: []const u8,
    m: *Matches,
    shared: *Shared,
    pending: ?Pending = null,
    positional_given: bool = false,
    /// After `--`: every argument is a positional.
    trailing: bool = false,

    /// clap's `Parser::parse` then `get_matches_with`: the arguments, the waiting value, the
    /// required options.
    fn run(p: *Parser, args: []const []const u8) Error!void {
        for (args, 0..) |arg, i| {
            if (!p.trailing) {
                if (!p.awaitsValue()) if (p.m.command.subcommand(arg)) |sub| {
                    return p.enter(sub, args[i + 1 ..]);
                };
                if (eql(arg, "--")) {
                    p.trailing = true;
                    continue;
                }
                if (isLong(arg)) {
                    try p.long(arg, args[i + 1 ..]);
                    continue;
                }
                if (isShort(arg)) {
                    try p.short(arg);
                    continue;
                }
                if (p.awaitsValue()) {
                    p.pending.?.value = arg;
                    continue;
                }
            }
            try p.positionalValue(arg);
        }
        try p.finish();
    }

    fn finish(p: *Parser) Error!void {
        try p.resolvePending();
        if (p.m.command.positional) |pos| if (pos.required and !p.positional_given) {
            var used = p.m.used.visible(p.m.command);
            return p.fail(
                .{ .used = &used },
                .none,
                "the following required arguments were not provided:\n  <{s}>{s}",
                .{ pos.name, if (pos.many) "..." else "" },
            );
        };
        for (p.m.command.options, 0..) |option, id| {
            if (!option.required or p.m.used.contains(@intCast(id))) continue;
            var used = p.m.used.visible(p.m.command);
            used.add(@intCast(id));
            return p.fail(
                .{ .used = &used },
                .none,
                "the following required arguments were not provided:\n  {f}",
                .{option},
            );
        }
    }

    fn awaitsValue(p: *const Parser) bool {
        const pending = p.pending orelse return false;
        return pending.value == null;
    }

    /// A subcommand parses the rest of the line, then its parent ends its own parse.
    fn enter(p: *Parser, sub: *const Command, rest: []const []const u8) Error!void {
        if (sub.is_help) return p.helpSubcommand(rest);
        const child = try p.gpa.create(Matches);
        child.* = .{ .command = sub };
        var parser: Parser = .{ .gpa = p.gpa, .bin = p.bin, .m = child, .shared = p.shared };
        try parser.run(rest);
        p.m.subcommand = child;
        try p.finish();
    }

    /// `help [COMMAND]...`: the long help of the last command named, each a subcommand of the
    /// one before.
    fn helpSubcommand(p: *Parser, names: []const []const u8) Error {
        var command = p.m.command;
        for (names) |name| {
            command = command.subcommand(name) orelse return p.failIn(
                command,
                .full,
                .none,
                "unrecognized subcommand '{f}'",
                .{Shown{ .name = name }},
            );
        }
        return p.helpRequest(command, .long);
    }

    fn helpRequest(p: *Parser, command: *const Command, form: Form) error{Help} {
        p.shared.help = .{ .command = command, .form = form };
        return error.Help;
    }

    fn positionalValue(p: *Parser, arg: []const u8) Error!void {
        const takes = if (p.m.command.positional) |pos| pos.many or !p.positional_given else false;
        if (takes) {
            try p.resolvePending();
            p.positional_given = true;
            p.pending = .{ .id = positional, .ident = .index, .value = arg };
            return;
        }
        try p.dropPending();
        return p.unmatched(arg);
    }

    /// clap's `match_arg_error`: a positional with no place.
    fn unmatched(p: *Parser, arg: []const u8) Error {
        const command = p.m.command;
        const shown: Shown = .{ .name = arg };
        if (p.trailing and command.subcommand(arg) != null)
            return p.fail(.full, .{ .double_dash = shown }, "unexpected argument '{f}' found", .{
                shown,
            });
        if (command.subcommands.len > 0) {
            var buffer: [commands.all.len][]const u8 = undefined;
            const names = similarSubcommands(command, arg, &buffer);
            if (names.len > 0) return p.fail(
                .full,
                .{ .similar_subcommands = names },
                "unrecognized subcommand '{f}'",
                .{shown},
            );
            if (command.positional == null)
                return p.fail(.full, .none, "unrecognized subcommand '{f}'", .{shown});
        }
        return p.fail(.full, .none, "unexpected argument '{f}' found", .{shown});
    }

    fn long(p: *Parser, arg: []const u8, rest: []const []const u8) Error!void {
        const at = std.mem.indexOfScalar(u8, arg, '=');
        const name = arg[2 .. at orelse arg.len];
        const attached: ?[]const u8 = if (at) |a| arg[a + 1 ..] else null;
        const id = byLong(p.m.command, name) orelse {
            try p.dropPending();
            return p.unknownLong(name, rest);
        };
        const option = p.m.command.options[id];
        if (option.value != null) return p.optionValue(id, .long, attached);
        const value = attached orelse return p.react(id, .long, null);
        // clap lists what was used before the waiting value is read.
        var used = p.m.used.visible(p.m.command);
        used.add(id);
        try p.dropPending();
        return p.fail(
            .{ .used = &used },
            .none,
            "unexpected value '{f}' for '{f}' found; no more were expected",
            .{ Shown{ .name = value }, option },
        );
    }

    /// `-vvv`, `-h`, and `-t4` / `-t=4` / `-t 4` (an option with a value ends the cluster).
    fn short(p: *Parser, arg: []const u8) Error!void {
        const valid = validPrefix(arg);
        var at: usize = 1;
        while (at < arg.len) {
            // clap_lex: the bytes from the first one that is not UTF-8 are one unknown flag.
            const len = if (at < valid)
                std.unicode.utf8ByteSequenceLength(arg[at]) catch unreachable
            else
                arg.len - at;
            const known = if (at < valid and len == 1) byShort(p.m.command, arg[at]) else null;
            const id = known orelse {
                try p.dropPending();
                return p.unknownShort(arg[at..][0..len]);
            };
            if (p.m.command.options[id].value == null) {
                try p.react(id, .short, null);
                at += 1;
                continue;
            }
            const after = arg[at + 1 ..];
            const attached: ?[]const u8 = if (after.len == 0) null else if (after[0] == '=')
                after[1..]
            else
                after;
            return p.optionValue(id, .short, attached);
        }
    }

    fn optionValue(p: *Parser, id: Id, ident: Ident, attached: ?[]const u8) Error!void {
        if (attached) |value| return p.react(id, ident, value);
        try p.resolvePending();
        p.pending = .{ .id = id, .ident = ident };
    }

    fn resolvePending(p: *Parser) Error!void {
        const pending = p.pending orelse return;
        p.pending = null;
        return p.react(pending.id, pending.ident, pending.value);
    }

    /// The waiting value read before an error of its own, whose failure clap ignores (what it
    /// left in the matches stays: the option counts as used).
    fn dropPending(p: *Parser) error{OutOfMemory}!void {
        p.resolvePending() catch |e| switch (e) {
            error.OutOfMemory => return error.OutOfMemory,
            error.Usage => {},
            // Only options with a value wait, and help and version take none.
            error.Help, error.Version => unreachable,
        };
    }

    /// clap's `Parser::react`: an argument given, with its value if it takes one.
    fn react(p: *Parser, id: Id, ident: Ident, value: ?[]const u8) Error!void {
        try p.resolvePending();
        if (id == positional) {
            p.m.used.add(id);
            return p.push(id, value.?);
        }
        const option = p.m.command.options[id];
        switch (option.action) {
            .help => return p.helpRequest(p.m.command, if (ident == .short) .short else .long),
            .version => return error.Version,
            .count => {
                p.m.counts[id] +|= 1;
                // clap takes the flag out and puts it back: last in the `Usage:` order.
                _ = p.m.used.remove(id);
                p.m.used.add(id);
            },
            .set, .append => {
                if (option.value != null and value == null) return p.emptyValue(option);
                if (option.action == .set and p.m.used.remove(id)) return p.fail(
                    .full,
                    .none,
                    "the argument '{f}' cannot be used multiple times",
                    .{option},
                );
                p.m.used.add(id);
                if (value) |v| try p.push(id, v);
            },
        }
    }

    /// A value read by its check (clap's value parsers), kept in the matches.
    fn push(p: *Parser, id: Id, raw: []const u8) Error!void {
        const command = p.m.command;
        const check: commands.Check = if (id == positional) .text else command.options[id].check;
        if (check != .path and !std.unicode.utf8ValidateSlice(raw))
            return p.fail(.full, .none, invalid_utf8, .{});
        const value: Value = switch (check) {
            .text, .path => .{ .text = raw },
            else => try p.read(command.options[id], raw),
        };
        try p.m.given.append(p.gpa, .{ .id = id, .value = value });
    }

    fn read(p: *Parser, option: Option, raw: []const u8) Error!Value {
        return switch (option.check) {
            .text, .path => unreachable,
            .choice => |names| .{ .text = try p.choice(option, names, raw) },
            .unsigned => .{ .number = parseU64(raw) catch |e|
                return p.invalid(option, raw, "{s}", .{reasonOf(e)}) },
            .ranged => |max| .{ .number = try p.ranged(option, raw, max) },
            .between => |range| .{ .number = try p.between(option, raw, range.first, range.last) },
            .event_ranges => .{ .ranges = try p.eventRanges(option, raw) },
            .ansi_codec => .{ .codec = evtx.options.parseAnsiCodec(raw) orelse
                return p.ansiCodecError(option, raw) },
            .filter_list, .filter_name, .filter_time => try p.filterValue(option, raw),
        };
    }

    /// An extension's value, read by the engine's filter parsers (their words after clap's).
    fn filterValue(p: *Parser, option: Option, raw: []const u8) Error!Value {
        const filter = evtx.filter;
        var problem: filter.Problem = undefined;
        const value: Value = switch (option.check) {
            .filter_list => .{ .list = filter.parseList(p.gpa, raw, &problem) catch |e| switch (e) {
                error.OutOfMemory => return error.OutOfMemory,
                error.Invalid => return p.invalidFilter(option, raw, problem),
            } },
            .filter_name => .{ .text = filter.parseName(raw, &problem) catch
                return p.invalidFilter(option, raw, problem) },
            .filter_time => .{ .time = filter.parseTime(raw, &problem) catch
                return p.invalidFilter(option, raw, problem) },
            else => unreachable,
        };
        return value;
    }

    fn invalidFilter(
        p: *Parser,
        option: Option,
        raw: []const u8,
        problem: evtx.filter.Problem,
    ) Error {
        var buffer: [256]u8 = undefined;
        var w: Writer = .fixed(&buffer);
        problem.write(&w) catch {};
        return p.invalid(option, raw, "{s}", .{w.buffered()});
    }

    fn choice(
        p: *Parser,
        option: Option,
        names: []const []const u8,
        raw: []const u8,
    ) Error![]const u8 {
        for (names) |name| if (eql(name, raw)) return raw;
        // clap takes an empty value of a possible-values option for none.
        if (raw.len == 0) return p.emptyValue(option);
        const tip: Tip = if (similar(raw, names)) |name| .{ .similar_value = name } else .none;
        return p.fail(.none, tip, "invalid value '{s}' for '{f}'\n  {f}", .{
            raw, option, Choices{ .names = names },
        });
    }

    /// An integer of `0..=max` as clap's ranged value parsers read it (an `i64`, then the range).
    fn ranged(p: *Parser, option: Option, raw: []const u8, max: u64) Error!u64 {
        const n = parseI64(raw) catch |e| return p.invalid(option, raw, "{s}", .{reasonOf(e)});
        if (n < 0 or n > max) return p.invalid(option, raw, "{d} is not in 0..={d}", .{ n, max });
        return @intCast(n);
    }

    /// An integer of `first..=last` as clap's `u64` ranged value parser reads it.
    fn between(p: *Parser, option: Option, raw: []const u8, first: u64, last: u64) Error!u64 {
        const n = parseU64(raw) catch |e| return p.invalid(option, raw, "{s}", .{reasonOf(e)});
        if (n < first or n > last)
            return p.invalid(option, raw, "{d} is not in {d}..={d}", .{ n, first, last });
        return n;
    }

    fn eventRanges(p: *Parser, option: Option, raw: []const u8) Error![]const evtx.options.Range {
        var part: []const u8 = "";
        return evtx.options.parseEventRanges(p.gpa, raw, &part) catch |e| switch (e) {
            error.OutOfMemory => error.OutOfMemory,
            error.InvalidRange => p.invalid(option, raw, "Expected range to be a positive " ++
                "number, got: {s}", .{part}),
        };
    }

    /// The reference's words for a label that is no ASCII-compatible encoding.
    fn ansiCodecError(p: *Parser, option: Option, label: []const u8) Error {
        if (evtx.code_pages.isIncompatibleLabel(label)) return p.invalid(option, label, "`{s}` " ++
            "is not an ASCII-compatible encoding; ANSI strings cannot be UTF-16", .{label});
        return p.invalid(option, label, "unknown encoding `{s}`; expected an Encoding Standard " ++
            "label such as windows-1252", .{label});
    }

    /// clap's error for a value its parser refuses (no `Usage:` line).
    fn invalid(
        p: *Parser,
        option: Option,
        raw: []const u8,
        comptime why: []const u8,
        args: anytype,
    ) Error {
        const head = "invalid value '{s}' for '{f}': ";
        return p.fail(.none, .none, head ++ why, .{ raw, option } ++ args);
    }

    fn emptyValue(p: *Parser, option: Option) Error {
        const names: []const []const u8 = switch (option.check) {
            .choice => |names| names,
            else => &.{},
        };
        return p.fail(.none, .none, "a value is required for '{f}' but none was supplied{f}", .{
            option, Choices{ .names = names, .line = true },
        });
    }

    /// clap's `did_you_mean_error`: a similar option of this command, else one of a subcommand
    /// named later on the line, else (with a positional) the `--` tip.
    fn unknownLong(p: *Parser, name: []const u8, rest: []const []const u8) Error {
        const command = p.m.command;
        const shown: Shown = .{ .dashes = "--", .name = name };
        var used = p.m.used.visible(p.m.command);
        var tip: Tip = .none;
        if (similarLong(command, name)) |id| {
            used.add(id);
            tip = .{ .similar_argument = command.options[id].long.? };
        } else if (subcommandArgument(command, name, rest)) |found| {
            tip = .{ .subcommand_argument = .{ .command = found.command, .long = found.long } };
        } else if (command.positional != null) {
            tip = .{ .trailing = shown };
        }
        return p.fail(.{ .used = &used }, tip, "unexpected argument '{f}' found", .{shown});
    }

    fn unknownShort(p: *Parser, flag: []const u8) Error {
        const shown: Shown = .{ .dashes = "-", .name = flag };
        const tip: Tip = if (p.m.command.positional != null) .{ .trailing = shown } else .none;
        return p.fail(.full, tip, "unexpected argument '{f}' found", .{shown});
    }

    fn fail(p: *Parser, usage: UsageLine, tip: Tip, comptime fmt: []const u8, args: anytype) Error {
        return p.failIn(p.m.command, usage, tip, fmt, args);
    }

    /// Writes the usage error of `command`: the message, a tip, a `Usage:` line, each after a
    /// blank line, and clap's last line when the command has a `--help`.
    fn failIn(
        p: *Parser,
        command: *const Command,
        usage: UsageLine,
        tip: Tip,
        comptime fmt: []const u8,
        args: anytype,
    ) Error {
        const message = &p.shared.message;
        message.clearRetainingCapacity();
        const w = &message.writer;
        w.print(fmt, args) catch return error.OutOfMemory;
        tip.write(w) catch return error.OutOfMemory;
        switch (usage) {
            .none => {},
            .full => writeUsageLine(w, p.bin, command, &.{}) catch return error.OutOfMemory,
            .used => |used| writeUsageLine(w, p.bin, command, used.slice()) catch
                return error.OutOfMemory,
        }
        if (command.hasHelp()) w.writeAll("\n\nFor more information, try '--help'.") catch
            return error.OutOfMemory;
        return error.Usage;
    }
};

fn writeUsageLine(w: *Writer, bin: []const u8, command: *const Command, used: []const Id) !void {
    try w.writeAll("\n\nUsage: ");
    try writeUsage(w, bin, command, used);
}

/// `[possible values: a, b]`, on a line of its own under a message when `line` is set; nothing
/// without names.
const Choices = struct {
    names: []const []const u8,
    line: bool = false,

    pub fn format(c: Choices, w: *Writer) Writer.Error!void {
        if (c.names.len == 0) return;
        if (c.line) try w.writeAll("\n  ");
        try w.writeAll("[possible values: ");
        for (c.names, 0..) |name, i| try w.print("{s}{s}", .{ separator(i), name });
        try w.writeAll("]");
    }
};

fn byLong(command: *const Command, name: []const u8) ?Id {
    for (command.options, 0..) |option, id| {
        if (option.long) |l| if (eql(l, name)) return @intCast(id);
    }
    return null;
}

fn byShort(command: *const Command, c: u8) ?Id {
    for (command.options, 0..) |option, id| if (option.short == c) return @intCast(id);
    return null;
}

/// clap_lex: `--x` is a long option (`--` alone ends the options).
fn isLong(arg: []const u8) bool {
    return arg.len > 2 and std.mem.startsWith(u8, arg, "--");
}

/// clap_lex: `-x` starts a cluster of short options (a lone `-` is a value, standard input).
fn isShort(arg: []const u8) bool {
    return arg.len > 1 and arg[0] == '-' and arg[1] != '-';
}

/// How many leading bytes of `bytes` are UTF-8 (Rust's `Utf8Error::valid_up_to`).
fn validPrefix(bytes: []const u8) usize {
    var at: usize = 0;
    while (at < bytes.len) {
        const len = std.unicode.utf8ByteSequenceLength(bytes[at]) catch return at;
        if (at + len > bytes.len) return at;
        _ = std.unicode.utf8Decode(bytes[at..][0..len]) catch return at;
        at += len;
    }
    return at;
}

/// The most similar long option of `command` (clap's `did_you_mean`: over 0.7, the last of
/// equals), or null.
fn similarLong(command: *const Command, name: []const u8) ?Id {
    var best: ?Id = null;
    var best_score: f64 = 0;
    for (command.options, 0..) |option, id| {
        const score = jaro(name, option.long orelse continue);
        if (score > 0.7 and score >= best_score) {
            best = @intCast(id);
            best_score = score;
        }
    }
    return best;
}

/// clap's `did_you_mean_flag` past the command's own options: a similar option of a subcommand
/// whose name comes later on the line, the earliest named.
fn subcommandArgument(
    command: *const Command,
    name: []const u8,
    rest: []const []const u8,
) ?struct { command: []const u8, long: []const u8 } {
    var best: ?struct { position: usize, command: []const u8, long: []const u8 } = null;
    for (command.subcommands) |sub| {
        const id = similarLong(sub, name) orelse continue;
        const position = for (rest, 0..) |arg, i| {
            if (eql(arg, sub.name)) break i;
        } else continue;
        if (best == null or position < best.?.position)
            best = .{ .position = position, .command = sub.name, .long = sub.options[id].long.? };
    }
    const found = best orelse return null;
    return .{ .command = found.command, .long = found.long };
}

/// Every subcommand name similar to `text`, the most similar last (clap lists them all).
fn similarSubcommands(
    command: *const Command,
    text: []const u8,
    buffer: [][]const u8,
) []const []const u8 {
    var scores: [commands.all.len]f64 = undefined;
    var n: usize = 0;
    for (command.subcommands) |sub| {
        const score = jaro(text, sub.name);
        if (score <= 0.7) continue;
        // Insertion in ascending order, after equals (a stable sort).
        var at = n;
        while (at > 0 and scores[at - 1] > score) : (at -= 1) {
            scores[at] = scores[at - 1];
            buffer[at] = buffer[at - 1];
        }
        scores[at] = score;
        buffer[at] = sub.name;
        n += 1;
    }
    return buffer[0..n];
}

/// clap's "did you mean": the most similar of `candidates` (Jaro similarity over 0.7; the last
/// of equals), or null.
pub fn similar(text: []const u8, candidates: []const []const u8) ?[]const u8 {
    var best: ?[]const u8 = null;
    var best_score: f64 = 0;
    for (candidates) |c| {
        const score = jaro(text, c);
        if (score > 0.7 and score >= best_score) {
            best = c;
            best_score = score;
        }
    }
    return best;
}

/// `strsim::jaro` over Unicode scalar values (invalid UTF-8 bytes count one each).
fn jaro(a_text: []const u8, b_text: []const u8) f64 {
    const len_max = 256;
    var a_buf: [len_max]u21 = undefined;
    var b_buf: [len_max]u21 = undefined;
    // Longer than any name by far: similarity to a name is then well under 0.7.
    const a = scalars(a_text, &a_buf) orelse return 0;
    const b = scalars(b_text, &b_buf) orelse return 0;
    if (a.len == 0 and b.len == 0) return 1;
    if (a.len == 0 or b.len == 0) return 0;
    const range = (@max(a.len, b.len) / 2) -| 1;
    var a_flags = [_]bool{false} ** len_max;
    var b_flags = [_]bool{false} ** len_max;
    var matches: usize = 0;
    for (a, 0..) |ca, i| {
        const low = i -| range;
        const high = @min(b.len, i + range + 1);
        // `low` passes `high` where `a` is much longer than `b`.
        var j = low;
        while (j < high) : (j += 1) {
            if (ca == b[j] and !b_flags[j]) {
                a_flags[i] = true;
                b_flags[j] = true;
                matches += 1;
                break;
            }
        }
    }
    if (matches == 0) return 0;
    var transpositions: usize = 0;
    var j: usize = 0;
    for (a, 0..) |ca, i| {
        if (!a_flags[i]) continue;
        while (!b_flags[j]) j += 1;
        if (ca != b[j]) transpositions += 1;
        j += 1;
    }
    const m: f64 = @floatFromInt(matches);
    const t: f64 = @floatFromInt(transpositions / 2);
    const a_len: f64 = @floatFromInt(a.len);
    const b_len: f64 = @floatFromInt(b.len);
    return (m / a_len + m / b_len + (m - t) / m) / 3;
}

fn scalars(text: []const u8, buf: []u21) ?[]const u21 {
    var n: usize = 0;
    var i: usize = 0;
    while (i < text.len) : (n += 1) {
        if (n == buf.len) return null;
        const len = std.unicode.utf8ByteSequenceLength(text[i]) catch 1;
        const cp = if (i + len <= text.len) std.unicode.utf8Decode(
            text[i..][0..len],
        ) catch null else null;
        if (cp) |c| {
            buf[n] = c;
            i += len;
        } else {
            buf[n] = std.unicode.replacement_character;
            i += 1;
        }
    }
    return buf[0..n];
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

fn eql(a: []const u8, b: []const u8) bool {
    return std.mem.eql(u8, a, b);
}

// Tests: every expected text is what `evtx_dump` 0.15.1 prints for the same command line (its
// stderr after `error: `, up to clap's last line), the program named `evtx_dump`.

const more = "\n\nFor more information, try '--help'.";

fn expectUsage(argv: []const []const u8, expected: []const u8) !void {
    var arena = std.heap.ArenaAllocator.init(std.testing.allocator);
    defer arena.deinit();
    const outcome = try parse(arena.allocator(), "evtx_dump", argv);
    if (outcome != .usage) {
        std.debug.print("{any}: {any}, expected a usage error\n", .{ argv, outcome });
        return error.TestUnexpectedResult;
    }
    try std.testing.expectEqualStrings(expected, outcome.usage);
}

test "a subcommand's usage errors" {
    const cmd = "Usage: evtx_dump dump-template-instances";
    try expectUsage(&.{"dump-template-instances"}, "the following required arguments were " ++
        "not provided:\n  --input <EVTX>\n\n" ++ cmd ++ " --input <EVTX>" ++ more);
    try expectUsage(&.{ "dump-template-instances", "-i", "x", "--foo" }, "unexpected argument " ++
        "'--foo' found\n\n" ++ cmd ++ " --input <EVTX>" ++ more);
    try expectUsage(&.{ "dump-template-instances", "--foo", "-i", "x" }, "unexpected argument " ++
        "'--foo' found\n\n" ++ cmd ++ " [OPTIONS] --input <EVTX>" ++ more);
    try expectUsage(&.{ "dump-template-instances", "--record-id", "1", "--foo" }, "unexpected " ++
        "argument '--foo' found\n\n" ++ cmd ++ " --input <EVTX> --record-id <ID>" ++ more);
    try expectUsage(&.{ "dump-template-instances", "-i", "x", "--recrd-id", "3" }, "unexpected " ++
        "argument '--recrd-id' found\n\n  tip: a similar argument exists: '--record-id'\n\n" ++
        cmd ++ " --input <EVTX> --record-id <ID>" ++ more);
    try expectUsage(&.{ "dump-template-instances", "-i", "x", "-z" }, "unexpected argument " ++
        "'-z' found\n\n" ++ cmd ++ " [OPTIONS] --input <EVTX>" ++ more);
    try expectUsage(&.{ "dump-template-instances", "-i", "x", "y" }, "unexpected argument " ++
        "'y' found\n\n" ++ cmd ++ " [OPTIONS] --input <EVTX>" ++ more);
    try expectUsage(&.{ "dump-template-instances", "-i", "x", "-i", "y" }, "the argument " ++
        "'--input <EVTX>' cannot be used multiple times\n\n" ++ cmd ++
        " [OPTIONS] --input <EVTX>" ++ more);
    try expectUsage(&.{ "dump-template-instances", "-i", "x", "--record-id" }, "a value is " ++
        "required for '--record-id <ID>' but none was supplied" ++ more);
    try expectUsage(&.{ "dump-template-instances", "--record-id=abc" }, "invalid value 'abc' " ++
        "for '--record-id <ID>': invalid digit found in string" ++ more);
    try expectUsage(&.{ "apply-wevt-cache", "--event-id", "70000" }, "invalid value '70000' " ++
        "for '--event-id <ID>': 70000 is not in 0..=65535" ++ more);
}

test "clap's order: a value waiting for the next argument is read when that one is taken" {
    const full = "\n\nUsage: evtx_dump [OPTIONS] [INPUT] [COMMAND]" ++ more;
    const bogus = "unexpected argument '--bogus' found\n\n  tip: to pass '--bogus' as a " ++
        "value, use '-- --bogus'\n\n";
    // An unknown option is never taken: the waiting value is read after it, its failure dropped.
    try expectUsage(&.{ "-t", "x", "--bogus" }, bogus ++ "Usage: evtx_dump --threads " ++
        "<num-threads> [INPUT]" ++ more);
    try expectUsage(&.{ "-t", "x", "-x" }, "unexpected argument '-x' found\n\n  tip: to pass " ++
        "'-x' as a value, use '-- -x'" ++ full);
    // The second `-t` was refused as a repeat: taken out, it is no longer used.
    try expectUsage(&.{ "-t", "1", "-t", "2", "--bogus" }, bogus[0 .. bogus.len - 2] ++ full);
    // Values are read in the order given, not the order declared.
    const apply = [_][]const u8{ "apply-wevt-cache", "--cache", "c" };
    try expectUsage(&(apply ++ .{ "--version", "x", "--event-id", "y" }), "invalid value 'x' " ++
        "for '--version <V>': invalid digit found in string" ++ more);
    // A repeat is refused before its value is read.
    try expectUsage(&.{ "-o", "json", "-o", "\xff" }, "the argument '--format <output-format>' " ++
        "cannot be used multiple times" ++ full);
    // A counted flag given again moves last; a flag given a value lists what was set before.
    try expectUsage(&.{ "-v", "-t=1", "-v", "--bogu" }, "unexpected argument '--bogu' found\n\n" ++
        "  tip: to pass '--bogu' as a value, use '-- --bogu'\n\nUsage: evtx_dump --threads " ++
        "<num-threads> -v... [INPUT]" ++ more);
    try expectUsage(&.{ "-t=1", "--recover-records=1" }, "unexpected value '1' for " ++
        "'--recover-records' found; no more were expected\n\nUsage: evtx_dump --threads " ++
        "<num-threads> --recover-records [INPUT]" ++ more);
    try expectUsage(&.{ "extract-wevt-templates", "--glob", "a", "--overwrite=1" }, "unexpected " ++
        "value '1' for '--overwrite' found; no more were expected\n\nUsage: evtx_dump " ++
        "extract-wevt-templates --output <WEVTCACHE> --overwrite" ++ more);
}

test "clap's tips: subcommands after `--`, several similar, a subcommand's option" {
    const full = "\n\nUsage: evtx_dump [OPTIONS] [INPUT] [COMMAND]" ++ more;
    try expectUsage(&.{ "x", "--", "info" }, "unexpected argument 'info' found\n\n  tip: " ++
        "subcommand 'info' exists; to use it, remove the '--' before it" ++ full);
    try expectUsage(&.{ "x", "--", "inf" }, "unrecognized subcommand 'inf'\n\n  tip: a similar " ++
        "subcommand exists: 'info'" ++ full);
    try expectUsage(&.{ "x", "extract-template-instances" }, "unrecognized subcommand " ++
        "'extract-template-instances'\n\n  tip: some similar subcommands exist: " ++
        "'dump-template-instances', 'extract-wevt-templates'" ++ full);
    try expectUsage(&.{ "--recursiv", "extract-wevt-templates" }, "unexpected argument " ++
        "'--recursiv' found\n\n  tip: 'extract-wevt-templates --recursive' exists" ++ full);
    try expectUsage(&.{ "info", "--hel" }, "unexpected argument '--hel' found\n\n  tip: a " ++
        "similar argument exists: '--help'\n\nUsage: evtx_dump info --input <EVTX> --help" ++ more);
    // Bytes that are not UTF-8 shown as Rust's `to_string_lossy` shows them.
    try expectUsage(&.{ "-v\xffx", "f" }, "unexpected argument '-\u{FFFD}x' found\n\n  tip: to " ++
        "pass '-\u{FFFD}x' as a value, use '-- -\u{FFFD}x'" ++ full);
}

test "values: the last kept, every one of a repeated option, counts" {
    var arena = std.heap.ArenaAllocator.init(std.testing.allocator);
    defer arena.deinit();
    const outcome = try parse(arena.allocator(), "evtx_dump", &.{
        "-vv", "--threads=7", "-v", "extract-wevt-templates", "-ia", "--input=b", "-o", "c",
    });
    const main = outcome.run;
    try std.testing.expectEqual(3, main.count(commands.main.id("v")));
    try std.testing.expectEqual(7, main.number(commands.main.id("threads")).?);
    try std.testing.expectEqual(null, main.text(positional));
    const sub = main.subcommand.?;
    const c = &commands.extract_wevt_templates;
    const inputs = try sub.texts(arena.allocator(), c.id("input"));
    try std.testing.expectEqual(2, inputs.len);
    try std.testing.expectEqualStrings("a", inputs[0]);
    try std.testing.expectEqualStrings("b", inputs[1]);
    try std.testing.expectEqualStrings("c", sub.text(c.id("output")).?);
    try std.testing.expect(!sub.has(c.id("recursive")));
}
