//! `evtx-zig`: a command line compatible with `evtx_dump` 0.15.1 (contract section 11).
//! Usage errors exit 2, fatal errors exit 1 with `Error: ...`, record and chunk errors
//! are reported one line each on stderr (shared-fixtures/README.md) and keep status 0.
const std = @import("std");
const evtx = @import("evtx");
const dump = evtx.dump;
const chunk = evtx.chunk;
const assert = std.debug.assert;
const extract_wevt_templates = @import("extract_wevt_templates.zig");
const dump_template_instances = @import("dump_template_instances.zig");
const apply_wevt_cache = @import("apply_wevt_cache.zig");
const help = @import("help.zig");
const stdio = @import("stdio.zig");
const open_input = @import("open_input.zig");
const arg_parser = @import("args.zig");

test {
    _ = help;
    _ = stdio;
    _ = open_input;
    _ = extract_wevt_templates;
    _ = dump_template_instances;
    _ = apply_wevt_cache;
}

const version = "0.1.0";

const Cli = struct {
    input: ?[]const u8 = null,
    /// `info -i FILE`: print the info report of FILE instead of dumping.
    info_input: ?[]const u8 = null,
    /// The arguments after a wevt subcommand's name (`extract_wevt_templates.zig`).
    wevt: ?Wevt = null,
    output: ?[]const u8 = null,
    /// `--mta FILE`, read after the output is created.
    mta: ?[]const u8 = null,
    /// `--wevt-cache FILE`, read after the output is created, before `--mta`.
    wevt_cache: ?[]const u8 = null,
    threads: usize = 0,
    verbose: usize = 0,
    no_confirm_overwrite: bool = false,
    stop_after_one_error: bool = false,
    settings: evtx.options.Options = .{},
    no_indent: bool = false,
    no_record_number: bool = false,
};

var stderr_buffer: [4096]u8 = undefined;
/// A progress line is on the terminal (ended with a newline at exit).
var progress_shown = false;

fn stderrPrint(comptime fmt: []const u8, args: anytype) void {
    var w = stdio.stderrWriter(&stderr_buffer);
    w.interface.print(fmt, args) catch {};
    w.interface.flush() catch {};
}

fn stdoutWriteAll(text: []const u8) void {
    var w = stdio.stdoutWriter(&.{});
    w.interface.writeAll(text) catch {};
}

/// What the command line asks for instead of a run: a usage error (`main` prints
/// `error: <message>` and exits 2) or a text on stdout (help, version: exit 0). The text is in
/// `parse_message`.
const ParseError = error{ Usage, Help, OutOfMemory };

/// The message of the last `error.Usage` or `error.Help` of `parseArgs` (one parse at a time:
/// the CLI parses once, the tests one after another).
var parse_message: []const u8 = "";
var parse_message_buffer: [2048]u8 = undefined;

/// The program's name in `Usage:` lines: the last component of `argv[0]`, as clap shows it.
var bin_name: []const u8 = "evtx-zig";

/// The tip clap prints under a usage error (clap 4's words).
const Tip = union(enum) {
    none,
    /// `--x` was no option: it may be passed as a value after `--`.
    trailing: []const u8,
    /// `-x` (the character without its dash) was no option.
    trailing_short: []const u8,
    similar_argument: []const u8,
    similar_subcommand: []const u8,
    similar_value: []const u8,
    /// An option of the `info` subcommand, named before `info`.
    subcommand_argument: []const u8,
};

/// The `Usage:` line clap prints under a usage error, if any.
const UsageLine = union(enum) {
    none,
    /// `NAME [OPTIONS] [INPUT] [COMMAND]`.
    full,
    /// The options given so far, in the order first given, then `[INPUT]` or `<INPUT>`.
    used: *const Used,
    info,
    /// `NAME <the page's usage>`.
    page: help.Page,
    /// `NAME info --input <EVTX> --help` (`--help` given a value).
    info_help,
};

/// Whether a usage error ends with clap's `For more information, try '--help'.`
var usage_tip_more = true;

/// Formats a usage error in clap 4's layout: the message, a tip, a usage line (each after
/// a blank line); `main` adds the `error: ` prefix and clap's last line.
fn usageErrorWith(
    tip: Tip,
    usage_line: UsageLine,
    comptime fmt: []const u8,
    args: anytype,
) error{Usage} {
    var w: std.Io.Writer = .fixed(&parse_message_buffer);
    writeUsageError(&w, tip, usage_line, fmt, args) catch {
        // Longer than any message of ours unless an argument is huge: cut it, as it is only shown.
    };
    parse_message = w.buffered();
    return error.Usage;
}

fn writeUsageError(
    w: *std.Io.Writer,
    tip: Tip,
    usage_line: UsageLine,
    comptime fmt: []const u8,
    args: anytype,
) std.Io.Writer.Error!void {
    try w.print(fmt, args);
    switch (tip) {
        .none => {},
        .trailing => |arg| try w.print(
            "\n\n  tip: to pass '{s}' as a value, use '-- {s}'",
            .{ arg, arg },
        ),
        .trailing_short => |c| try w.print(
            "\n\n  tip: to pass '-{s}' as a value, use '-- -{s}'",
            .{ c, c },
        ),
        .similar_argument => |name| try w.print(
            "\n\n  tip: a similar argument exists: '--{s}'",
            .{name},
        ),
        .similar_subcommand => |name| try w.print(
            "\n\n  tip: a similar subcommand exists: '{s}'",
            .{name},
        ),
        .similar_value => |value| try w.print("\n\n  tip: a similar value exists: '{s}'", .{value}),
        .subcommand_argument => |name| try w.print("\n\n  tip: 'info --{s}' exists", .{name}),
    }
    switch (usage_line) {
        .none => {},
        .full => try w.print("\n\nUsage: {s} [OPTIONS] [INPUT] [COMMAND]", .{bin_name}),
        .info => try w.print("\n\nUsage: {s} info --input <EVTX>", .{bin_name}),
        .page => |page| try w.print("\n\nUsage: {s} {s}", .{ bin_name, page.usage() }),
        .info_help => try w.print("\n\nUsage: {s} info --input <EVTX> --help", .{bin_name}),
        .used => |used| {
            try w.print("\n\nUsage: {s}", .{bin_name});
            if (used.count == 0 and !used.input) {
                try w.writeAll(" [OPTIONS] [INPUT] [COMMAND]");
                return;
            }
            for (used.items[0..used.count]) |item| try w.print(" {s}", .{item});
            try w.writeAll(if (used.input) " <INPUT>" else " [INPUT]");
        },
    }
}

fn usageError(comptime fmt: []const u8, args: anytype) error{Usage} {
    return usageErrorWith(.none, .none, fmt, args);
}

/// The help page and form of the last `error.Help` (null: `parse_message` is the version line).
var help_request: ?struct { page: help.Page, form: help.Form } = null;

fn helpRequest(page: help.Page, form: help.Form) error{Help} {
    help_request = .{ .page = page, .form = form };
    return error.Help;
}

fn versionRequest() error{Help} {
    help_request = null;
    parse_message = version_line;
    return error.Help;
}

/// A help page on stdout (exit 0), the program named as invoked.
fn printHelp(page: help.Page, form: help.Form) u8 {
    var buffer: [4096]u8 = undefined;
    var w = stdio.stdoutWriter(&buffer);
    help.write(&w.interface, page, form, bin_name) catch {};
    w.interface.flush() catch {};
    return 0;
}

fn fatal(comptime fmt: []const u8, args: anytype) noreturn {
    stderrPrint("Error: " ++ fmt ++ "\n", args);
    std.process.exit(1);
}

/// `-t`: clap's `value_parser!(u32).range(0..)` reads an `i64` with Rust's `from_str` and
/// then checks the range; each failure in its words.
fn parseThreads(text: []const u8) error{Usage}!u32 {
    const bad = "invalid value '{s}' for '--threads <num-threads>': {s}";
    if (text.len == 0) return usageError(bad, .{ text, "cannot parse integer from empty string" });
    const negative = text[0] == '-';
    const digits = if (text[0] == '+' or negative) text[1..] else text;
    if (digits.len == 0) return usageError(bad, .{ text, "invalid digit found in string" });
    const overflow = if (negative) "number too small to fit in target type" else "number too " ++
        "large to fit in target type";
    var n: i64 = 0;
    for (digits) |c| {
        if (c < '0' or c > '9') return usageError(bad, .{ text, "invalid digit found in string" });
        n = std.math.mul(i64, n, 10) catch return usageError(bad, .{ text, overflow });
        const digit: i64 = c - '0';
        n = (if (negative) std.math.sub(i64, n, digit) else std.math.add(i64, n, digit)) catch
            return usageError(bad, .{ text, overflow });
    }
    if (n < 0 or n > std.math.maxInt(u32))
        return usageError(
            "invalid value '{s}' for '--threads <num-threads>': {d} is not in 0..=4294967295",
            .{ text, n },
        );
    return @intCast(n);
}

/// `--events` (options.zig), a bad range in the reference's words.
fn parseRanges(gpa: std.mem.Allocator, text: []const u8) ParseError![]evtx.options.Range {
    var part: []const u8 = "";
    return evtx.options.parseEventRanges(gpa, text, &part) catch |e| switch (e) {
        error.OutOfMemory => error.OutOfMemory,
        error.InvalidRange => usageError("invalid value '{s}' for '--events <event-ranges>': " ++
            "Expected range to be a positive number, got: {s}", .{ text, part }),
    };
}

/// The options of the dump command line, as the reference's clap defines them.
const Opt = enum {
    threads,
    format,
    output,
    no_confirm_overwrite,
    events,
    validate_checksums,
    recover_records,
    no_indent,
    separate_json_attributes,
    dont_show_record_number,
    ansi_codec,
    stop_after_one_error,
    wevt_cache,
    mta,
    verbose,
    help,
    version,
};

/// One option: `usage` is how clap names it in messages and `Usage:` lines (`--long <value
/// name>` for an option with a value; the value names are the reference's argument ids).
const Spec = struct {
    opt: Opt,
    long: []const u8,
    short: ?u8 = null,
    usage: []const u8,
    takes_value: bool = false,
};

/// In the reference's order (clap's suggestions keep the last of equally similar names).
const specs = [_]Spec{
    .{
        .opt = .threads,
        .long = "threads",
        .short = 't',
        .usage = "--threads <num-threads>",
        .takes_value = true,
    },
    .{
        .opt = .format,
        .long = "format",
        .short = 'o',
        .usage = "--format <output-format>",
        .takes_value = true,
    },
    .{
        .opt = .output,
        .long = "output",
        .short = 'f',
        .usage = "--output <output-target>",
        .takes_value = true,
    },
    .{
        .opt = .no_confirm_overwrite,
        .long = "no-confirm-overwrite",
        .usage = "--no-confirm-overwrite",
    },
    .{ .opt = .events, .long = "events", .usage = "--events <event-ranges>", .takes_value = true },
    .{ .opt = .validate_checksums, .long = "validate-checksums", .usage = "--validate-checksums" },
    .{ .opt = .recover_records, .long = "recover-records", .usage = "--recover-records" },
    .{ .opt = .no_indent, .long = "no-indent", .usage = "--no-indent" },
    .{
        .opt = .separate_json_attributes,
        .long = "separate-json-attributes",
        .usage = "--separate-json-attributes",
    },
    .{
        .opt = .dont_show_record_number,
        .long = "dont-show-record-number",
        .usage = "--dont-show-record-number",
    },
    .{
        .opt = .ansi_codec,
        .long = "ansi-codec",
        .usage = "--ansi-codec <ansi-codec>",
        .takes_value = true,
    },
    .{
        .opt = .wevt_cache,
        .long = "wevt-cache",
        .usage = "--wevt-cache <WEVTCACHE>",
        .takes_value = true,
    },
    .{ .opt = .mta, .long = "mta", .usage = "--mta <MTA>", .takes_value = true },
    .{
        .opt = .stop_after_one_error,
        .long = "stop-after-one-error",
        .usage = "--stop-after-one-error",
    },
    .{ .opt = .verbose, .long = "", .short = 'v', .usage = "-v..." },
    .{ .opt = .help, .long = "help", .short = 'h', .usage = "--help" },
    .{ .opt = .version, .long = "version", .short = 'V', .usage = "--version" },
};

const info_input_spec: Spec = .{
    .opt = .output,
    .long = "input",
    .short = 'i',
    .usage = "--input <EVTX>",
    .takes_value = true,
};
const info_longs = [_][]const u8{ "input", "help" };
const subcommands = [_][]const u8{
    "extract-wevt-templates",
    "dump-template-instances",
    "apply-wevt-cache",
    "info",
    "help",
};
const formats = [_][]const u8{ "json", "xml", "jsonl" };

fn specByLong(name: []const u8) ?*const Spec {
    for (&specs) |*s| if (s.long.len > 0 and eq(s.long, name)) return s;
    return null;
}

fn specByShort(c: u8) ?*const Spec {
    for (&specs) |*s| if (s.short == c) return s;
    return null;
}

fn specOf(opt: Opt) *const Spec {
    for (&specs) |*s| if (s.opt == opt) return s;
    unreachable;
}

/// The options given so far, each once, in the order first given (clap's `Usage:` line of
/// an unknown `--long` lists them), and whether INPUT is given.
const Used = struct {
    items: [specs.len][]const u8 = undefined,
    opts: std.EnumSet(Opt) = .initEmpty(),
    count: usize = 0,
    input: bool = false,

    fn add(u: *Used, spec: *const Spec) void {
        if (u.opts.contains(spec.opt)) return;
        assert(u.count < u.items.len);
        u.opts.insert(spec.opt);
        u.items[u.count] = spec.usage;
        u.count += 1;
    }
};

/// clap's "did you mean": the most similar of `candidates` (Jaro similarity over 0.7; the
/// last of equals), or null.
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
    // Longer than any option name by far: similarity to a name is then well under 0.7.
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
    return (m / @as(
        f64,
        @floatFromInt(a.len),
    ) + m / @as(f64, @floatFromInt(b.len)) + (m - t) / m) / 3;
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

/// The long names clap may suggest for an unknown `--long`.
fn dumpLongs() [specs.len - 1][]const u8 {
    var longs: [specs.len - 1][]const u8 = undefined;
    var n: usize = 0;
    for (&specs) |*s| {
        if (s.long.len == 0) continue;
        longs[n] = s.long;
        n += 1;
    }
    assert(n == longs.len);
    return longs;
}

/// Whether clap takes `arg` as the next option rather than a value: `--`, `--x` and `-x`
/// (a lone `-` is a value, standard input).
fn looksLikeOption(arg: []const u8) bool {
    return arg.len > 1 and arg[0] == '-';
}

/// The value of an option: inline (`--x=v`, `-xv`, `-x=v`) or the next argument. A next
/// argument that looks like an option is parsed as one first (clap's order): an unknown one
/// is reported as such, a known one or `--` leaves this option without a value.
fn optionValue(
    args: []const []const u8,
    i: *usize,
    inline_value: ?[]const u8,
    spec: *const Spec,
    used: *const Used,
) error{Usage}![]const u8 {
    if (inline_value) |v| return utf8Value(spec, v, .full);
    if (i.* + 1 < args.len and !looksLikeOption(args[i.* + 1])) {
        i.* += 1;
        return utf8Value(spec, args[i.*], .full);
    }
    if (i.* + 1 < args.len) try checkKnown(args, i.* + 1, used);
    const possible: []const u8 =
        if (spec.opt == .format) "\n  [possible values: json, xml, jsonl]" else "";
    return usageError(
        "a value is required for '{s}' but none was supplied{s}",
        .{ spec.usage, possible },
    );
}

/// `value`, or clap's error when it is not UTF-8: every value of the reference is a `String`
/// but `--mta`'s (a `PathBuf`).
fn utf8Value(spec: *const Spec, value: []const u8, line: UsageLine) error{Usage}![]const u8 {
    if (spec.opt == .mta or std.unicode.utf8ValidateSlice(value)) return value;
    return usageErrorWith(.none, line, arg_parser.invalid_utf8, .{});
}

/// clap's error for `args[at]` when it is no option of the dump command line.
fn checkKnown(args: []const []const u8, at: usize, used: *const Used) error{Usage}!void {
    const arg = args[at];
    if (eq(arg, "--")) return;
    if (std.mem.startsWith(u8, arg, "--")) {
        const name = arg[2..(std.mem.indexOfScalar(u8, arg, '=') orelse arg.len)];
        if (specByLong(name) == null) return unknownLong(args, at, name, used);
    } else if (specByShort(arg[1]) == null) {
        const c = shortName(arg, 1);
        return usageErrorWith(
            .{ .trailing_short = c },
            .full,
            "unexpected argument '-{s}' found",
            .{c},
        );
    }
}

/// An unknown `--name`: a similar option of ours, else one of `info` named later on the
/// line, else the `--` tip.
fn unknownLong(
    args: []const []const u8,
    at: usize,
    name: []const u8,
    used: *const Used,
) error{Usage} {
    const arg = args[at][0 .. 2 + name.len]; // clap names it without an inline value
    const longs = dumpLongs();
    if (similar(name, &longs)) |long| {
        var with = used.*;
        with.add(specByLong(long).?);
        return usageErrorWith(
            .{ .similar_argument = long },
            .{ .used = &with },
            "unexpected argument '--{s}' found",
            .{name},
        );
    }
    if (similar(name, &info_longs)) |long| {
        for (args[at + 1 ..]) |later| if (eq(later, "info"))
            return usageErrorWith(
                .{ .subcommand_argument = long },
                .{ .used = used },
                "unexpected argument '{s}' found",
                .{arg},
            );
    }
    return usageErrorWith(
        .{ .trailing = arg },
        .{ .used = used },
        "unexpected argument '{s}' found",
        .{arg},
    );
}

fn apply(
    gpa: std.mem.Allocator,
    cli: *Cli,
    used: *Used,
    spec: *const Spec,
    value: ?[]const u8,
) ParseError!void {
    if (used.opts.contains(spec.opt))
        return usageErrorWith(
            .none,
            .full,
            "the argument '{s}' cannot be used multiple times",
            .{spec.usage},
        );
    const v = value orelse "";
    switch (spec.opt) {
        .threads => cli.threads = try parseThreads(v),
        .format => cli.settings.format = std.meta.stringToEnum(evtx.options.Format, v) orelse {
            // clap takes an empty value of a possible-values option for none.
            if (v.len == 0)
                return usageError(
                    "a value is required for '--format <output-format>' but none was " ++
                        "supplied\n  [possible values: json, xml, jsonl]",
                    .{},
                );
            const tip: Tip = if (similar(v, &formats)) |f| .{ .similar_value = f } else .none;
            return usageErrorWith(
                tip,
                .none,
                "invalid value '{s}' for '--format <output-format>'\n  [possible values: " ++
                    "json, xml, jsonl]",
                .{v},
            );
        },
        .output => cli.output = v,
        .events => cli.settings.event_ranges = try parseRanges(gpa, v),
        .ansi_codec => cli.settings.ansi_codec = evtx.options.parseAnsiCodec(
            v,
        ) orelse return ansiCodecError(v),
        .no_confirm_overwrite => cli.no_confirm_overwrite = true,
        .validate_checksums => cli.settings.validate_checksums = true,
        .recover_records => cli.settings.recover_records = true,
        .no_indent => cli.no_indent = true,
        .separate_json_attributes => cli.settings.separate_json_attributes = true,
        .dont_show_record_number => cli.no_record_number = true,
        .stop_after_one_error => cli.stop_after_one_error = true,
        .wevt_cache => cli.wevt_cache = v,
        .mta => cli.mta = v,
        .verbose, .help, .version => unreachable,
    }
    used.add(spec);
}

/// The reference's words for a label that is no ASCII-compatible encoding.
fn ansiCodecError(label: []const u8) error{Usage} {
    const prefix = "invalid value '{s}' for '--ansi-codec <ansi-codec>': ";
    if (evtx.code_pages.isIncompatibleLabel(label))
        return usageError(
            prefix ++ "`{s}` is not an ASCII-compatible encoding; ANSI strings cannot be UTF-16",
            .{ label, label },
        );
    return usageError(
        prefix ++ "unknown encoding `{s}`; expected an Encoding Standard label such as " ++
            "windows-1252",
        .{ label, label },
    );
}

/// Parses the command line as the reference's clap does: options in any order, each at most
/// once (`-v` counts), the first positional is INPUT, a positional naming a subcommand
/// (`info`, `help`) starts it, any other second positional is an error. Usage errors are
/// `error.Usage` (exit 2), `--help`/`--version` `error.Help` (exit 0), each with its text in
/// `parse_message` in clap's words. `args[0]` is the program's name.
fn parseArgs(gpa: std.mem.Allocator, args: []const []const u8) ParseError!Cli {
    if (args.len > 0) bin_name = std.fs.path.basename(args[0]);
    help_request = null;
    usage_tip_more = true;
    var cli: Cli = .{};
    var used: Used = .{};
    var i: usize = 1;
    var only_positional = false;
    while (i < args.len) : (i += 1) {
        const arg = args[i];
        if (!only_positional and eq(arg, "--")) {
            only_positional = true;
        } else if (only_positional or !looksLikeOption(arg)) {
            if (!only_positional and (eq(arg, "info") or eq(arg, "help"))) {
                try subcommand(&cli, args[i..]);
                break;
            }
            if (!only_positional) if (templateSubcommand(arg, args[i + 1 ..])) |command| {
                cli.wevt = command;
                break;
            };
            if (cli.input != null) {
                if (!only_positional) if (similar(arg, &subcommands)) |name|
                    return usageErrorWith(
                        .{ .similar_subcommand = name },
                        .full,
                        "unrecognized subcommand '{s}'",
                        .{arg},
                    );
                return usageErrorWith(.none, .full, "unexpected argument '{s}' found", .{arg});
            }
            if (!std.unicode.utf8ValidateSlice(arg))
                return usageErrorWith(.none, .full, arg_parser.invalid_utf8, .{});
            cli.input = arg;
            used.input = true;
        } else if (std.mem.startsWith(u8, arg, "--")) {
            const at = std.mem.indexOfScalar(u8, arg, '=');
            const name = arg[2..(at orelse arg.len)];
            const inline_value: ?[]const u8 = if (at) |a| arg[a + 1 ..] else null;
            const spec = specByLong(name) orelse return unknownLong(args, i, name, &used);
            if (!spec.takes_value and inline_value != null) {
                var only: Used = .{};
                only.add(spec);
                return usageErrorWith(
                    .none,
                    .{ .used = &only },
                    "unexpected value '{s}' for '--{s}' found; no more were expected",
                    .{ inline_value.?, name },
                );
            }
            if (spec.opt == .help) return helpRequest(.main, .long);
            if (spec.opt == .version) return versionRequest();
            const value = if (spec.takes_value) try optionValue(
                args,
                &i,
                inline_value,
                spec,
                &used,
            ) else null;
            try apply(gpa, &cli, &used, spec, value);
        } else {
            try shortCluster(gpa, &cli, &used, args, &i);
        }
    }
    cli.settings.indent = !cli.no_indent and cli.settings.format != .jsonl;
    cli.settings.show_record_number = !cli.no_record_number and cli.settings.format != .jsonl;
    return cli;
}

/// The template subcommand `name` names, with the arguments after it; null for any other word.
fn templateSubcommand(name: []const u8, rest: []const []const u8) ?Wevt {
    if (eq(name, "extract-wevt-templates")) return .{ .extract = rest };
    if (eq(name, "dump-template-instances")) return .{ .dump = rest };
    if (eq(name, "apply-wevt-cache")) return .{ .apply = rest };
    return null;
}

/// The notes the reference prints on stderr for redundant flags (before anything else).
fn printNotes(cli: *const Cli) void {
    if (cli.verbose > 3) stderrPrint("using more than -vvv does not affect verbosity level\n", .{});
    if (cli.settings.format == .jsonl) {
        if (cli.no_indent) stderrPrint("no need to pass both `--no-indent` and `-o jsonl`\n", .{});
        if (cli.no_record_number) stderrPrint(
            "no need to pass both `--no-show-record-number` and `-o jsonl`\n",
            .{},
        );
    }
}

const version_line = "evtx-zig " ++ version ++ " (evtx_dump 0.15.1 compatible)\n";

/// `-vvv`, `-h`, `-V`, and `-t4` / `-t=4` / `-t 4` (a value option ends the cluster).
fn shortCluster(
    gpa: std.mem.Allocator,
    cli: *Cli,
    used: *Used,
    args: []const []const u8,
    i: *usize,
) ParseError!void {
    const arg = args[i.*];
    var j: usize = 1;
    while (j < arg.len) : (j += 1) {
        const c = arg[j];
        const spec = specByShort(c) orelse {
            const name = shortName(arg, j);
            return usageErrorWith(
                .{ .trailing_short = name },
                .full,
                "unexpected argument '-{s}' found",
                .{name},
            );
        };
        switch (spec.opt) {
            .verbose => {
                cli.verbose += 1;
                used.add(spec);
            },
            .help => return helpRequest(.main, .short),
            .version => return versionRequest(),
            else => {
                assert(spec.takes_value);
                var rest = arg[j + 1 ..];
                if (rest.len > 0 and rest[0] == '=') rest = rest[1..];
                const inline_value: ?[]const u8 = if (j + 1 < arg.len) rest else null;
                try apply(gpa, cli, used, spec, try optionValue(args, i, inline_value, spec, used));
                return;
            },
        }
    }
}

/// `info -i FILE` or `help [info]`; `rest[0]` is the subcommand's name.
fn subcommand(cli: *Cli, rest: []const []const u8) ParseError!void {
    if (eq(rest[0], "help")) return helpSubcommand(rest[1..]);
    var i: usize = 1;
    var only_positional = false;
    while (i < rest.len) : (i += 1) {
        const arg = rest[i];
        if (!only_positional and eq(arg, "--")) {
            only_positional = true;
            continue;
        }
        if (only_positional or !looksLikeOption(arg))
            return usageErrorWith(.none, .info, "unexpected argument '{s}' found", .{arg});
        // `-h` starts a cluster (`-hi` too); `-ih` is `-i h`.
        if (arg[1] == 'h') return helpRequest(.info, .short);
        if (eq(arg, "--help")) return helpRequest(.info, .long);
        if (std.mem.startsWith(u8, arg, "--help=")) return usageErrorWith(
            .none,
            .info_help,
            "unexpected value '{s}' for '--help' found; no more were expected",
            .{arg["--help=".len..]},
        );
        const inline_value: ?[]const u8 = if (std.mem.startsWith(u8, arg, "--input="))
            arg["--input=".len..]
        else if (std.mem.startsWith(u8, arg, "-i") and arg.len > 2)
            (if (arg[2] == '=') arg[3..] else arg[2..])
        else if (eq(arg, "-i") or eq(arg, "--input"))
            null
        else
            return infoUnknown(arg);
        const value = inline_value orelse value: {
            if (i + 1 < rest.len and !looksLikeOption(rest[i + 1])) {
                i += 1;
                break :value rest[i];
            }
            if (i + 1 < rest.len and !eq(
                rest[i + 1],
                "--",
            ) and !isInfoOption(rest[i + 1])) return infoUnknown(
                rest[i + 1],
            );
            return usageError(
                "a value is required for '--input <EVTX>' but none was supplied",
                .{},
            );
        };
        // clap refuses a repeated option once it has its value.
        if (cli.info_input != null)
            return usageErrorWith(
                .none,
                .info,
                "the argument '--input <EVTX>' cannot be used multiple times",
                .{},
            );
        cli.info_input = try utf8Value(&info_input_spec, value, .info);
    }
    if (cli.info_input == null)
        return usageErrorWith(
            .none,
            .info,
            "the following required arguments were not provided:\n  --input <EVTX>",
            .{},
        );
}

/// `help [COMMAND]`: the long help of the tool or of COMMAND; clap allows nothing after
/// COMMAND (no subcommand has subcommands).
fn helpSubcommand(names: []const []const u8) ParseError {
    if (names.len == 0) return helpRequest(.main, .long);
    const page = help.Page.byName(names[0]) orelse
        return usageErrorWith(.none, .full, "unrecognized subcommand '{s}'", .{names[0]});
    if (names.len > 1) {
        // clap's `help` has no `--help` of its own: its error says no more.
        if (page == .help) usage_tip_more = false;
        return usageErrorWith(
            .none,
            .{ .page = page },
            "unrecognized subcommand '{s}'",
            .{names[1]},
        );
    }
    return helpRequest(page, .long);
}

fn isInfoOption(arg: []const u8) bool {
    if (std.mem.startsWith(u8, arg, "--")) {
        const name = arg[2..(std.mem.indexOfScalar(u8, arg, '=') orelse arg.len)];
        return eq(name, "input") or eq(name, "help");
    }
    return arg[1] == 'i' or arg[1] == 'h';
}

/// clap's error for an argument `info` does not know (it has no positional: no `--` tip).
fn infoUnknown(arg: []const u8) error{Usage} {
    if (std.mem.startsWith(u8, arg, "--")) {
        const name = arg[2..(std.mem.indexOfScalar(u8, arg, '=') orelse arg.len)];
        const tip: Tip = if (similar(name, &info_longs)) |long| .{
            .similar_argument = long,
        } else .none;
        return usageErrorWith(tip, .info, "unexpected argument '--{s}' found", .{name});
    }
    return usageErrorWith(.none, .info, "unexpected argument '-{s}' found", .{shortName(arg, 1)});
}

/// The short option at `arg[at]` as clap names it: one character (a UTF-8 sequence whole).
fn shortName(arg: []const u8, at: usize) []const u8 {
    const len = @min(std.unicode.utf8ByteSequenceLength(arg[at]) catch 1, arg.len - at);
    return arg[at..][0..len];
}

fn eq(a: []const u8, b: []const u8) bool {
    return std.mem.eql(u8, a, b);
}

/// An I/O error in the words of the C library, which the Rust CLI prints (without its ` (os
/// error N)`).
fn ioReason(e: anyerror) []const u8 {
    return open_input.zigErrorText(e);
}

/// `info -i FILE`: the report of `evtx.info` on standard output. The file is read through
/// chunk windows (a stream is spooled first), so memory stays bounded whatever its size.
fn infoCommand(gpa: std.mem.Allocator, path: []const u8) u8 {
    const file = std.fs.cwd().openFile(path, .{ .mode = .read_only }) catch |e|
        fatal("Failed to open {s}: {s}", .{ path, ioReason(e) });
    const st = std.posix.fstat(file.handle) catch |e| fatal(
        "Failed to open {s}: {s}",
        .{ path, ioReason(e) },
    );
    const kind = st.mode & std.posix.S.IFMT;
    if (kind == std.posix.S.IFDIR) fatal(
        "Failed to open {s}: {s}",
        .{ path, ioReason(error.IsDir) },
    );
    const in: dump.Input = if (kind == std.posix.S.IFREG)
        dump.Input.fromFile(file) catch |e| fatal("Failed to open {s}: {s}", .{ path, ioReason(e) })
    else
        spoolInput(file, "Failed to open the input");
    const window = gpa.create(evtx.input.ChunkSlot) catch fatal("out of memory", .{});
    defer gpa.destroy(window);
    var buffer: [1 << 16]u8 = undefined;
    var w = stdio.stdoutWriter(&buffer);
    evtx.info.write(&in, window, &w.interface) catch |e| switch (e) {
        error.FileTooShort => fatal(
            "Failed to read the file header: the file is {d} bytes, shorter than the " ++
                "4096-byte header block",
            .{in.size},
        ),
        error.BadFileMagic => fatal(
            "Failed to read the file header: invalid magic (expected `ElfFile\\0`)",
            .{},
        ),
        error.WriteFailed => {},
    };
    w.interface.flush() catch {};
    if (w.err) |we| {
        if (we != error.BrokenPipe) fatal("failed to write output: {s}", .{ioReason(we)});
    }
    return 0;
}

/// Room for the longest failure to open the input: two paths and the reference's chain.
var failure_buffer: [2 * std.fs.max_path_bytes + 1024]u8 = undefined;

/// Opens the input read-only, to be read by chunk windows (never mapped, never read whole), or
/// ends the run with the reference's words for why it cannot be (`open_input.zig`). `-f output`
/// naming the same file (stdin redirected from it included) is refused first, before anything
/// is read, spooled or opened for writing.
fn openInput(path: []const u8, output: ?[]const u8) dump.Input {
    var w: std.Io.Writer = .fixed(&failure_buffer);
    const opened = if (isStdin(path))
        open_input.openStdin(output, path, &w)
    else
        open_input.openPath(path, output, &w);
    return opened catch fatal("{s}", .{w.buffered()});
}

fn isStdin(path: []const u8) bool {
    const stdin_names = [_][]const u8{ "-", "/dev/stdin", "/dev/fd/0", "/proc/self/fd/0" };
    for (stdin_names) |n| if (eq(path, n)) return true;
    return false;
}

/// The first line of a failure of the input `path`.
fn inputHead(path: []const u8) open_input.Head {
    return if (isStdin(path)) .stdin else .{ .path = path };
}

/// Copies a stream to an unlinked file in $TMPDIR in 64 KiB blocks (the reference spools
/// stdin too): wrapped-log order needs every chunk header before the first record, and a
/// file is then read by the same windows as a path, with bounded memory.
fn spoolInput(source: std.fs.File, comptime what: []const u8) dump.Input {
    var block: [evtx.input.spool_block_size]u8 = undefined;
    const spooled = evtx.input.spool(source, evtx.input.tempDir(), &block) catch |e|
        fatal(what ++ ": {s}", .{ioReason(e)});
    return dump.Input.fromFile(spooled) catch |e| fatal(what ++ ": {s}", .{ioReason(e)});
}

/// Writes chunk results: record text to the output, one line per error to stderr.
const Sink = struct {
    writer: *std.Io.Writer,
    path: []const u8,
    stop_after_one_error: bool,
    progress: ?Progress,
    verbose: Verbose,

    fn consume(context: *anyopaque, result: *const dump.ChunkResult) anyerror!void {
        const s: *Sink = @ptrCast(@alignCast(context));
        if (result.failures == 0) {
            // The rendered spans tile the output (`Renderer.renderChunk`): one write, and the
            // entries stay unread here; at `-t 2` most were written on the worker's core
            // (PERF.md H174).
            try s.writer.writeAll(result.out.list.items);
            s.chunkDone(result.slot, result.entries.items.len, 0);
            return;
        }
        // Printed records are contiguous in the result's buffer: write runs of them at once.
        var run_start: usize = 0;
        var run_end: usize = 0;
        for (result.entries.items) |*e| {
            const f = switch (e.outcome) {
                .rendered => |span| {
                    if (run_end != span.start) {
                        try s.writer.writeAll(result.out.list.items[run_start..run_end]);
                        run_start = span.start;
                    }
                    run_end = span.start + span.len;
                    continue;
                },
                .failed => |f| f,
            };
            try s.writer.writeAll(result.out.list.items[run_start..run_end]);
            run_start = run_end;
            s.writer.flush() catch return error.WriteFailed;
            var buf: [512]u8 = undefined;
            var id_buf: [24]u8 = undefined;
            const id = if (e.record_id) |r| std.fmt.bufPrint(
                &id_buf,
                "{d}",
                .{r},
            ) catch "-" else "-";
            var w = stdio.stderrWriter(&buf);
            w.interface.print(
                "error: {s}: chunk {d}, record {s}, offset 0x{x}: {s}: {s}\n",
                .{ s.path, e.slot, id, e.file_offset, f.kind.text(), f.detail },
            ) catch {};
            w.interface.flush() catch {};
            // A cut last chunk is no fault the reference would see (shared-fixtures/README.md).
            const complete = !(result.partial and f.kind == .incomplete_chunk);
            if (s.stop_after_one_error and complete) return error.StoppedAfterError;
        }
        try s.writer.writeAll(result.out.list.items[run_start..run_end]);
        const records = result.entries.items.len - result.failures;
        s.chunkDone(result.slot, records, result.failures);
    }

    fn chunkDone(s: *Sink, slot: u32, records: u64, errors: u64) void {
        if (s.progress) |*p| p.chunkDone(records);
        s.verbose.chunkDone(slot, records, errors);
    }
};

/// `-v`: one summary line per file at the end; `-vv` (and `-vvv`): also one line per
/// chunk. Same words as evtx-rs (README, "Verbosity").
const Verbose = struct {
    path: []const u8,
    level: usize,
    timer: ?std.time.Timer,
    chunks: u64 = 0,
    records: u64 = 0,
    errors: u64 = 0,

    fn chunkDone(v: *Verbose, slot: u32, records: u64, errors: u64) void {
        if (v.level == 0) return;
        v.chunks += 1;
        v.records += records;
        v.errors += errors;
        if (v.level >= 2) stderrPrint(
            "debug: {s}: chunk {d}: {d} records, {d} errors\n",
            .{ v.path, slot, records, errors },
        );
    }

    fn finish(v: *Verbose, bytes: usize) void {
        if (v.level == 0) return;
        const ms = if (v.timer) |*t| t.read() / std.time.ns_per_ms else 0;
        stderrPrint(
            "info: {s}: {d} bytes, {d} chunks, {d} records, {d} errors in {d} ms\n",
            .{ v.path, bytes, v.chunks, v.records, v.errors, ms },
        );
    }
};

/// The progress bar (README, "Progress"): on stderr, only when it is a terminal and the
/// output goes to a file (`-f`); redrawn at most every 100 ms and once at the end. Same
/// design as evtx-rs: `[###   ]  42% 12345 records, 85.3 MB/s, ETA 3s`.
const Progress = struct {
    timer: std.time.Timer,
    last_ns: u64 = 0,
    total_bytes: u64,
    done_bytes: u64 = file_header_block,
    records: u64 = 0,

    const file_header_block = evtx.file_header.block_size;
    const width = 30;

    fn init(total_bytes: usize) ?Progress {
        const timer = std.time.Timer.start() catch return null;
        return .{ .timer = timer, .total_bytes = @max(total_bytes, 1) };
    }

    fn chunkDone(p: *Progress, records: u64) void {
        p.done_bytes += chunk.size;
        p.records += records;
        const now = p.timer.read();
        if (now - p.last_ns >= 100 * std.time.ns_per_ms) {
            p.last_ns = now;
            p.draw();
        }
    }

    fn draw(p: *Progress) void {
        progress_shown = true;
        const secs = @max(@as(f64, @floatFromInt(p.timer.read())) / 1e9, 1e-6);
        const done = @min(p.done_bytes, p.total_bytes);
        const percent = done * 100 / p.total_bytes;
        const filled = done * width / p.total_bytes;
        const done_f: f64 = @floatFromInt(done);
        const mbps = done_f / secs / 1e6;
        const eta = @as(f64, @floatFromInt(p.total_bytes - done)) / (done_f / secs);
        var bar: [width]u8 = undefined;
        @memset(bar[0..filled], '#');
        @memset(bar[filled..], ' ');
        stderrPrint(
            "\r[{s}] {d:>3}% {d} records, {d:.1} MB/s, ETA {d}s ",
            .{ &bar, percent, p.records, mbps, @as(u64, @intFromFloat(@ceil(eta))) },
        );
    }

    fn finish(p: *Progress) void {
        p.done_bytes = p.total_bytes;
        p.draw();
    }
};

fn openOutput(path: []const u8, no_confirm: bool) std.fs.File {
    const cwd = std.fs.cwd();
    if (cwd.statFile(path)) |st| {
        if (st.kind == .directory) fatal(
            "An error occurred while creating output file at `{s}`\n\nCaused by:\n    Path is " ++
                "a directory",
            .{path},
        );
        if (!no_confirm) {
            const stdin = std.fs.File.stdin();
            if (!stdin.isTty()) fatal(
                "An error occurred while creating output file at `{s}`\n\nCaused by:\n    " ++
                    "Failed to display confirmation prompt",
                .{path},
            );
            stderrPrint("Are you sure you want to override output file at `{s}`? [y/N] ", .{path});
            var buf: [64]u8 = undefined;
            const n = stdin.read(&buf) catch 0;
            if (n == 0 or (buf[0] != 'y' and buf[0] != 'Y')) fatal("Cancelled", .{});
        }
    } else |_| {}
    if (std.fs.path.dirname(path)) |dir| cwd.makePath(dir) catch |e|
        fatal(
            "An error occurred while creating output file at `{s}`\n\nCaused by:\n    {s}",
            .{ path, ioReason(e) },
        );
    return cwd.createFile(path, .{}) catch |e|
        fatal(
            "An error occurred while creating output file at `{s}`\n\nCaused by:\n    {s}",
            .{ path, ioReason(e) },
        );
}

/// The run, in the same steps as evtx-rs's `main`: parse, a subcommand or the dump's notes,
/// open the input, open the output, load the side files, run the pipeline into the sink,
/// finish.
pub fn main() u8 {
    const gpa = std.heap.smp_allocator;
    const args = std.process.argsAlloc(gpa) catch fatal("out of memory", .{});
    var cli = parseOrExit(gpa, args);
    if (cli.info_input) |path| return infoCommand(gpa, path);
    if (cli.wevt) |wevt| return wevtCommand(gpa, wevt);
    const input = cli.input orelse fatal(
        "Missing INPUT. Provide an EVTX file path, or use a subcommand (try `--help`).",
        .{},
    );
    // After the subcommands and the input check, as the reference (and evtx-rs) print them.
    printNotes(&cli);
    const opened_input = openInput(input, cli.output);
    const evtx_file = openEvtxFile(gpa, opened_input, &cli.settings, inputHead(input));
    const out_file = if (cli.output) |path| openOutput(
        path,
        cli.no_confirm_overwrite,
    ) else stdio.stdoutFile();
    // The side files live as long as the run: the settings point at them.
    var cache: evtx.wevt_cache.WevtCache = undefined;
    var mta_file: evtx.mta.MtaFile = undefined;
    loadSideFiles(gpa, &cli, &cache, &mta_file);
    const header = evtx_file.header;
    if (header.checksumMismatch()) {
        stderrPrint(
            "warning: the file header's CRC32 is invalid (stored 0x{x:0>8}, computed " ++
                "0x{x:0>8}); reading the file anyway\n",
            .{ header.checksum_stored, header.checksum_computed },
        );
    }
    // Chunks are written in runs of whole records, most larger than this buffer, which
    // then go to the file without an extra copy.
    const buffer = gpa.alloc(u8, 1 << 14) catch fatal("out of memory", .{});
    var fw = stdio.writer(out_file, buffer);
    var sink: Sink = .{
        .writer = &fw.interface,
        .path = input,
        .stop_after_one_error = cli.stop_after_one_error,
        .progress = if (cli.output != null and stdio.stderrIsTty()) Progress.init(
            @intCast(opened_input.size),
        ) else null,
        .verbose = .{
            .path = input,
            .level = cli.verbose,
            .timer = std.time.Timer.start() catch null,
        },
    };
    const threads = if (cli.threads == 0) std.Thread.getCpuCount() catch 1 else cli.threads;
    // `main` returns right after: the dump's memory is left to the exit (PERF.md H164).
    evtx.pipeline.runWith(
        gpa,
        &evtx_file.input,
        evtx_file.order,
        &cli.settings,
        threads,
        .skip,
        .{ .context = &sink, .consume = Sink.consume },
    ) catch |e| {
        return finish(&fw, &sink, @intCast(opened_input.size), e);
    };
    return finish(&fw, &sink, @intCast(opened_input.size), null);
}

/// The command line, or the end of the run: a usage error (status 2), help or the version
/// (status 0). evtx-rs: clap's `Cli::parse`.
fn parseOrExit(gpa: std.mem.Allocator, args: []const []const u8) Cli {
    return parseArgs(gpa, args) catch |e| switch (e) {
        error.Usage => {
            const more = if (usage_tip_more) "\n\nFor more information, try '--help'." else "";
            stderrPrint("error: {s}{s}\n", .{ parse_message, more });
            std.process.exit(2);
        },
        error.Help => {
            const request = help_request orelse {
                stdoutWriteAll(parse_message);
                std.process.exit(0);
            };
            std.process.exit(printHelp(request.page, request.form));
        },
        error.OutOfMemory => fatal("out of memory", .{}),
    };
}

/// Reads the file header and chunk order of the opened input, or ends the run with the
/// reference's words (evtx-rs: in `open_input`).
fn openEvtxFile(
    gpa: std.mem.Allocator,
    opened_input: dump.Input,
    settings: *const evtx.options.Options,
    head: open_input.Head,
) dump.EvtxFile {
    return dump.EvtxFile.open(gpa, opened_input, settings) catch |e| switch (e) {
        error.FileTooShort, error.BadFileMagic => |header_error| {
            var w: std.Io.Writer = .fixed(&failure_buffer);
            open_input.writeHeaderRefused(&w, head, &opened_input, header_error) catch {};
            fatal("{s}", .{w.buffered()});
        },
        error.OutOfMemory => fatal("out of memory", .{}),
    };
}

/// Reads `--wevt-cache` and `--mta` into `cli.settings`: after the output is created and
/// before anything is written, as the reference does.
fn loadSideFiles(
    gpa: std.mem.Allocator,
    cli: *Cli,
    cache: *evtx.wevt_cache.WevtCache,
    mta_file: *evtx.mta.MtaFile,
) void {
    if (cli.wevt_cache) |path| {
        cache.* = loadWevtCache(gpa, path);
        cli.settings.wevt_cache = cache;
    }
    if (cli.mta) |path| {
        mta_file.* = loadMta(gpa, path);
        cli.settings.mta = mta_file;
    }
}

/// A wevt subcommand and the arguments after its name.
const Wevt = union(enum) {
    extract: []const []const u8,
    dump: []const []const u8,
    apply: []const []const u8,
};

/// Hook: the wevt subcommands parse and run in their own files.
fn wevtCommand(gpa: std.mem.Allocator, wevt: Wevt) u8 {
    // Its own buffer: `stderrPrint` (a usage error, `fatal`) reuses `stderr_buffer`.
    var buffer: [4096]u8 = undefined;
    var w = stdio.stderrWriter(&buffer);
    switch (wevt) {
        .extract => |rest| {
            const outcome = extract_wevt_templates.parse(gpa, bin_name, rest, similar) catch
                fatal("out of memory", .{});
            switch (outcome) {
                .help => |form| return printHelp(.extract_wevt_templates, form),
                .usage => |message| {
                    stderrPrint("error: {s}\n\nFor more information, try '--help'.\n", .{message});
                    return 2;
                },
                .run => |options| {
                    const report: extract_wevt_templates.Report = .{ .stderr = &w.interface };
                    return extract_wevt_templates.run(gpa, &options, report);
                },
            }
        },
        .dump => |rest| {
            const outcome = dump_template_instances.parse(gpa, bin_name, rest, similar) catch
                fatal("out of memory", .{});
            switch (outcome) {
                .help => |form| return printHelp(.dump_template_instances, form),
                .usage => |text| return wevtUsage(text),
                .run => |options| {
                    var out_buffer: [1 << 14]u8 = undefined;
                    var out = stdio.stdoutWriter(&out_buffer);
                    const report: dump_template_instances.Report = .{
                        .stdout = &out.interface,
                        .stderr = &w.interface,
                    };
                    return dump_template_instances.run(gpa, &options, report);
                },
            }
        },
        .apply => |rest| {
            const outcome = apply_wevt_cache.parse(gpa, bin_name, rest, similar) catch
                fatal("out of memory", .{});
            switch (outcome) {
                .help => |form| return printHelp(.apply_wevt_cache, form),
                .usage => |text| return wevtUsage(text),
                .run => |options| {
                    var out_buffer: [1 << 14]u8 = undefined;
                    var out = stdio.stdoutWriter(&out_buffer);
                    const report: apply_wevt_cache.Report = .{
                        .stdout = &out.interface,
                        .stderr = &w.interface,
                    };
                    return apply_wevt_cache.run(gpa, &options, report);
                },
            }
        },
    }
}

/// Reads and indexes `--wevt-cache FILE`, or ends the run with the reference's words.
fn loadWevtCache(gpa: std.mem.Allocator, path: []const u8) evtx.wevt_cache.WevtCache {
    var diag: evtx.wevt_cache.Diagnostic = undefined;
    return evtx.wevt_cache.WevtCache.load(gpa, std.fs.cwd(), path, &diag) catch |e| switch (e) {
        error.OutOfMemory => fatal("out of memory", .{}),
        error.Invalid => if (diag.readerError()) |damage|
            sideFileError(path, &damage)
        else
            fatal("{f}", .{diag.text(path)}),
    };
}

/// A damaged side file (`--mta`, `--wevt-cache`): one line naming it and the offset
/// (shared-fixtures/README.md, "Damaged side files"), exit 1.
fn sideFileError(path: []const u8, damage: *const evtx.reader_error.ReaderError) noreturn {
    var w = stdio.stderrWriter(&stderr_buffer);
    damage.writeLine(&w.interface, path) catch {};
    w.interface.flush() catch {};
    std.process.exit(1);
}

fn wevtUsage(text: []const u8) u8 {
    stderrPrint("error: {s}\n\nFor more information, try '--help'.\n", .{text});
    return 2;
}

/// Reads and parses `--mta FILE`, or ends the run with the reference's words.
fn loadMta(gpa: std.mem.Allocator, path: []const u8) evtx.mta.MtaFile {
    const bytes = std.fs.cwd().readFileAlloc(gpa, path, std.math.maxInt(usize)) catch |e| {
        if (e == error.OutOfMemory) fatal("out of memory", .{});
        fatal("failed to read `{s}`\n\nCaused by:\n    {s}", .{ path, ioReason(e) });
    };
    defer gpa.free(bytes);
    var diag: evtx.mta.Diagnostic = undefined;
    return evtx.mta.parse(gpa, bytes, &diag) catch |e| switch (e) {
        error.OutOfMemory => fatal("out of memory", .{}),
        error.Invalid => sideFileError(path, &diag.readerError()),
    };
}

fn finish(fw: *std.fs.File.Writer, sink: *Sink, bytes: usize, err: ?anyerror) u8 {
    if (sink.progress) |*p| p.finish();
    if (progress_shown) stderrPrint("\n", .{});
    sink.verbose.finish(bytes);
    const flushed = fw.interface.flush();
    if (err == null) flushed catch {};
    const write_error = fw.err;
    if (write_error) |we| {
        if (we == error.BrokenPipe) return 0;
        fatal("failed to write output: {s}", .{ioReason(we)});
    }
    if (err) |e| switch (e) {
        error.StoppedAfterError => fatal("Stopped after error", .{}),
        error.WriteFailed => fatal("failed to write output", .{}),
        else => fatal("{s}", .{@errorName(e)}),
    };
    return 0;
}

// Tests of the argument parser. Expected values: the reference's clap definition of
// `evtx_dump` 0.15.1 (defaults `-t 0`, `-o xml`, `--ansi-codec windows-1252`; `-o jsonl`
// implies `--no-indent --dont-show-record-number`) and what the reference binary does with the
// same command lines (exit 0 = parsed, 2 = usage error; its message words where ours match).

const testing = std.testing;

/// Parses `args` (after the program's name) with an arena, which owns the event ranges.
fn parseTest(arena: *std.heap.ArenaAllocator, args: []const []const u8) ParseError!Cli {
    const argv = try arena.allocator().alloc([]const u8, args.len + 1);
    argv[0] = "evtx-zig";
    @memcpy(argv[1..], args);
    return parseArgs(arena.allocator(), argv);
}

fn expectParsed(args: []const []const u8) !Cli {
    var arena = std.heap.ArenaAllocator.init(testing.allocator);
    defer arena.deinit();
    var cli = parseTest(&arena, args) catch |e| {
        std.debug.print("{any}: {s}: {s}\n", .{ args, @errorName(e), parse_message });
        return e;
    };
    cli.settings.event_ranges = &.{}; // arena memory; the event tests look at ranges themselves
    return cli;
}

/// A usage error (the reference exits 2) whose message contains `words`.
fn expectUsage(args: []const []const u8, words: []const u8) !void {
    var arena = std.heap.ArenaAllocator.init(testing.allocator);
    defer arena.deinit();
    if (parseTest(&arena, args)) |_| {
        std.debug.print("{any}: parsed, expected a usage error\n", .{args});
        return error.TestUnexpectedResult;
    } else |e| {
        try testing.expectEqual(error.Usage, e);
        if (std.mem.indexOf(u8, parse_message, words) == null) {
            std.debug.print("{any}: message `{s}` lacks `{s}`\n", .{ args, parse_message, words });
            return error.TestUnexpectedResult;
        }
    }
}

test "defaults: xml, indented, banners, -t 0 (one per CPU), windows-1252, every record" {
    const cli = try expectParsed(&.{"log.evtx"});
    try testing.expectEqualStrings("log.evtx", cli.input.?);
    try testing.expectEqual(@as(usize, 0), cli.threads);
    try testing.expectEqual(evtx.options.Format.xml, cli.settings.format);
    try testing.expect(cli.settings.indent and cli.settings.show_record_number);
    try testing.expect(!cli.settings.separate_json_attributes and !cli.settings.validate_checksums);
    try testing.expect(!cli.settings.recover_records and !cli.stop_after_one_error);
    try testing.expect(!cli.no_confirm_overwrite);
    try testing.expect(cli.output == null and cli.info_input == null);
    try testing.expectEqual(@as(usize, 0), cli.verbose);
    try testing.expectEqual(evtx.code_pages.lookup("windows-1252").?, cli.settings.ansi_codec);
    // No INPUT is not a usage error: the reference bails with exit 1 after parsing.
    const none = try expectParsed(&.{});
    try testing.expect(none.input == null);
}

test "-t: 0, N, every spelling of the value; out of u32 range or not a number is a usage error" {
    try testing.expectEqual(@as(usize, 0), (try expectParsed(&.{ "-t", "0", "x" })).threads);
    try testing.expectEqual(@as(usize, 3), (try expectParsed(&.{ "-t", "3", "x" })).threads);
    try testing.expectEqual(@as(usize, 2), (try expectParsed(&.{ "-t2", "x" })).threads);
    try testing.expectEqual(@as(usize, 2), (try expectParsed(&.{ "-t=2", "x" })).threads);
    try testing.expectEqual(@as(usize, 2), (try expectParsed(&.{ "--threads=2", "x" })).threads);
    try testing.expectEqual(
        @as(usize, 2),
        (try expectParsed(&.{ "--threads", "+2", "x" })).threads,
    );
    try testing.expectEqual(
        @as(usize, 4294967295),
        (try expectParsed(&.{ "-t", "4294967295", "x" })).threads,
    );
    // `-vt 1`: a cluster of flags ended by a value option.
    const vt = try expectParsed(&.{ "-vt", "1", "x" });
    try testing.expectEqual(@as(usize, 1), vt.threads);
    try testing.expectEqual(@as(usize, 1), vt.verbose);
    try expectUsage(&.{ "-t", "4294967296", "x" }, "invalid value '4294967296' for '--threads");
    try expectUsage(&.{ "-t", "x", "x" }, "invalid value 'x' for '--threads");
    try expectUsage(&.{ "-t", "", "x" }, "invalid value '' for '--threads");
    try expectUsage(
        &.{ "-t", "-1", "x" },
        "unexpected argument '-1' found\n\n  tip: to pass '-1' as a value, use '-- " ++
            "-1'\n\nUsage: evtx-zig [OPTIONS] [INPUT] [COMMAND]",
    );
    try expectUsage(
        &.{ "-t", "x", "x" },
        "invalid value 'x' for '--threads <num-threads>': invalid digit found in string",
    );
    try expectUsage(
        &.{ "-t=-1", "x" },
        "'-1' for '--threads <num-threads>': -1 is not in 0..=4294967295",
    );
    try expectUsage(&.{ "-t", "18446744073709551616" }, "number too large to fit in target type");
    try expectUsage(&.{"-t=-9223372036854775809"}, "number too small to fit in target type");
    try expectUsage(&.{ "-t", "9223372036854775808" }, "number too large to fit in target type");
    try expectUsage(
        &.{ "-t", "9223372036854775807" },
        "9223372036854775807 is not in 0..=4294967295",
    );
    try expectUsage(&.{"-t"}, "a value is required for '--threads");
    try expectUsage(&.{ "-t", "1", "-t", "2", "x" }, "the argument '--threads");
}

test "-o: json, xml, jsonl; jsonl turns indentation and banners off; anything else is refused" {
    const json = try expectParsed(&.{ "-o", "json", "x" });
    try testing.expectEqual(evtx.options.Format.json, json.settings.format);
    try testing.expect(json.settings.indent and json.settings.show_record_number);
    const jsonl = try expectParsed(&.{ "--format=jsonl", "x" });
    try testing.expectEqual(evtx.options.Format.jsonl, jsonl.settings.format);
    try testing.expect(!jsonl.settings.indent and !jsonl.settings.show_record_number);
    const cluster = try expectParsed(&.{ "-ojsonl", "x" });
    try testing.expectEqual(evtx.options.Format.jsonl, cluster.settings.format);
    try testing.expectEqual(
        evtx.options.Format.xml,
        (try expectParsed(&.{ "-o", "xml", "x" })).settings.format,
    );
    try expectUsage(&.{ "-o", "yaml", "x" }, "invalid value 'yaml' for '--format");
    try expectUsage(&.{ "-o", "JSON", "x" }, "[possible values: json, xml, jsonl]");
    try expectUsage(
        &.{ "-o", "", "x" },
        "a value is required for '--format <output-format>' but none was supplied",
    );
    try expectUsage(&.{ "-o", "jsn", "x" }, "\n\n  tip: a similar value exists: 'json'");
}

test "the flags: each sets its setting, each at most once, none takes a value" {
    const cli = try expectParsed(&.{
        "--no-confirm-overwrite", "--validate-checksums",       "--recover-records",
        "--no-indent",            "--separate-json-attributes", "--dont-show-record-number",
        "--stop-after-one-error", "-f",                         "out.xml",
        "x",
    });
    try testing.expect(cli.no_confirm_overwrite and cli.settings.validate_checksums);
    try testing.expect(cli.settings.recover_records and cli.settings.separate_json_attributes);
    try testing.expect(!cli.settings.indent and !cli.settings.show_record_number);
    try testing.expect(cli.stop_after_one_error);
    try testing.expectEqualStrings("out.xml", cli.output.?);
    try testing.expectEqualStrings(
        "out.xml",
        (try expectParsed(&.{ "--output=out.xml", "x" })).output.?,
    );
    try expectUsage(
        &.{ "--no-indent=1", "x" },
        "unexpected value '1' for '--no-indent' found; no more were expected",
    );
    try expectUsage(
        &.{ "--no-indent", "--no-indent", "x" },
        "the argument '--no-indent' cannot be used multiple times",
    );
    try expectUsage(&.{ "--bogus", "x" }, "unexpected argument '--bogus' found");
    try expectUsage(&.{ "-x", "x" }, "unexpected argument '-x' found");
    // The reference: extra is like extract-wevt-templates, so clap names it a subcommand.
    const usage_line = "\n\nUsage: evtx-zig [OPTIONS] [INPUT] [COMMAND]";
    try expectUsage(&.{ "x", "extra" }, "unrecognized subcommand 'extra'\n\n  tip: a similar " ++
        "subcommand exists: 'extract-wevt-templates'" ++ usage_line);
    try expectUsage(&.{ "x", "extrb" }, "unexpected argument 'extrb' found" ++ usage_line);
    try expectUsage(
        &.{ "x", "inf" },
        "unrecognized subcommand 'inf'\n\n  tip: a similar subcommand exists: 'info'",
    );
    try expectUsage(
        &.{ "-t", "1", "-vv", "--no-inden" },
        "  tip: a similar argument exists: '--no-indent'\n\nUsage: evtx-zig --threads " ++
            "<num-threads> -v... --no-indent [INPUT]",
    );
    try expectUsage(
        &.{ "--inpu=a", "info" },
        "unexpected argument '--inpu' found\n\n  tip: 'info --input' exists",
    );
    try expectUsage(&.{"-f"}, "a value is required for '--output");
}

test "-v counts; --ansi-codec takes ASCII-compatible labels only" {
    try testing.expectEqual(@as(usize, 3), (try expectParsed(&.{ "-vvv", "x" })).verbose);
    try testing.expectEqual(@as(usize, 4), (try expectParsed(&.{ "-vv", "-vv", "x" })).verbose);
    const koi = try expectParsed(&.{ "--ansi-codec=koi8-r", "x" });
    try testing.expectEqual(evtx.code_pages.lookup("koi8-r").?, koi.settings.ansi_codec);
    try expectUsage(&.{ "--ansi-codec", "nope", "x" }, "invalid value 'nope' for '--ansi-codec");
    try expectUsage(
        &.{ "--ansi-codec", "utf-16le", "x" },
        "invalid value 'utf-16le' for '--ansi-codec",
    );
}

test "--events: inclusive ranges and single ids; a bad part names itself" {
    var arena = std.heap.ArenaAllocator.init(testing.allocator);
    defer arena.deinit();
    const cli = try parseTest(&arena, &.{ "--events", "1-3,5,9-8", "x" });
    const ranges = cli.settings.event_ranges;
    try testing.expectEqual(@as(usize, 3), ranges.len);
    try testing.expectEqual(evtx.options.Range{ .first = 1, .last = 3 }, ranges[0]);
    try testing.expectEqual(evtx.options.Range{ .first = 5, .last = 5 }, ranges[1]);
    try testing.expectEqual(evtx.options.Range{ .first = 9, .last = 8 }, ranges[2]);
    // The reference's words, the failing part at the end.
    try expectUsage(
        &.{ "--events", "1-x", "x" },
        "invalid value '1-x' for '--events <event-ranges>': Expected range to be a positive " ++
            "number, got: 1-x",
    );
    try expectUsage(&.{ "--events", "1-", "x" }, "Expected range to be a positive number, got: 1-");
    try expectUsage(&.{ "--events", ",1", "x" }, "Expected range to be a positive number, got: ");
    try expectUsage(&.{ "--events", "1,,2", "x" }, "got: ");
}

test "help, version and the info subcommand" {
    var arena = std.heap.ArenaAllocator.init(testing.allocator);
    defer arena.deinit();
    // clap's forms: `-h` short, `--help` and the `help` subcommand long, the first one
    // given deciding; `help help` is the help subcommand's own page.
    const forms = [_]struct { args: []const []const u8, page: help.Page, form: help.Form }{
        .{ .args = &.{"-h"}, .page = .main, .form = .short },
        .{ .args = &.{ "-vh", "--bogus" }, .page = .main, .form = .short },
        .{ .args = &.{"--help"}, .page = .main, .form = .long },
        .{ .args = &.{ "x", "--help", "-h" }, .page = .main, .form = .long },
        .{ .args = &.{"help"}, .page = .main, .form = .long },
        .{ .args = &.{ "x", "help" }, .page = .main, .form = .long },
        .{ .args = &.{ "help", "help" }, .page = .help, .form = .long },
        .{ .args = &.{ "help", "info" }, .page = .info, .form = .long },
        .{ .args = &.{ "help", "apply-wevt-cache" }, .page = .apply_wevt_cache, .form = .long },
        .{ .args = &.{ "info", "-h" }, .page = .info, .form = .short },
        .{ .args = &.{ "info", "-hi" }, .page = .info, .form = .short },
        .{ .args = &.{ "info", "--help" }, .page = .info, .form = .long },
    };
    for (forms) |case| {
        try testing.expectError(error.Help, parseTest(&arena, case.args));
        try testing.expectEqual(case.page, help_request.?.page);
        try testing.expectEqual(case.form, help_request.?.form);
    }
    for ([_][]const []const u8{ &.{"-V"}, &.{"--version"}, &.{ "-Vh", "x" } }) |args| {
        try testing.expectError(error.Help, parseTest(&arena, args));
        try testing.expectEqual(null, help_request);
        try testing.expectEqualStrings(version_line, parse_message);
    }
    try expectUsage(
        &.{ "help", "info", "bogus" },
        "'bogus'\n\nUsage: evtx-zig info --input <EVTX>",
    );
    try testing.expect(usage_tip_more);
    // clap's `help` has no `--help`: its error does not point to one.
    try expectUsage(&.{ "help", "help", "x" }, "'x'\n\nUsage: evtx-zig help [COMMAND]...");
    try testing.expect(!usage_tip_more);
    try expectUsage(&.{ "help", "-h" }, "unrecognized subcommand '-h'");
    try expectUsage(&.{ "info", "--help=" }, "value '' for '--help' found; no more were expected" ++
        "\n\nUsage: evtx-zig info --input <EVTX> --help");
    try testing.expect(usage_tip_more);

    for ([_][]const []const u8{ &.{ "info", "-i", "a.evtx" }, &.{
        "info",
        "--input=a.evtx",
    }, &.{ "info", "-ia.evtx" }, &.{
        "info",
        "--input",
        "a.evtx",
    } }) |args| {
        const cli = try parseTest(&arena, args);
        try testing.expectEqualStrings("a.evtx", cli.info_input.?);
    }
    try expectUsage(
        &.{"info"},
        "the following required arguments were not provided:\n  --input <EVTX>",
    );
    try expectUsage(
        &.{ "info", "-i" },
        "a value is required for '--input <EVTX>' but none was supplied",
    );
    try expectUsage(&.{ "info", "--bogus" }, "unexpected argument '--bogus' found");
    try expectUsage(
        &.{ "info", "-i", "a", "-i", "b" },
        "the argument '--input <EVTX>' cannot be used multiple times",
    );
    try expectUsage(&.{ "help", "foo" }, "unrecognized subcommand 'foo'");
}

test "`--` ends the options: a name that looks like one is the input" {
    const cli = try expectParsed(&.{ "-o", "json", "--", "-t" });
    try testing.expectEqualStrings("-t", cli.input.?);
    try testing.expectEqual(@as(usize, 0), cli.threads);
    // A lone `-` is standard input, not an option.
    try testing.expectEqualStrings("-", (try expectParsed(&.{"-"})).input.?);
}
