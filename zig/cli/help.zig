//! The help texts of `evtx-zig`: `evtx_dump` 0.15.1's words, option by option, laid out as its
//! clap 4.6 lays them out (no wrapping: the reference is built without clap's `wrap_help`), so
//! that `-h`, `--help`, `help [COMMAND]` and each subcommand's help are the reference's byte for
//! byte, the program's name aside. `evtx-compare exit-table` checks every form against the
//! reference at test time; the Rust twin is `rust/cli/src/help.rs` (clap itself prints it).
//!
//! One definition per command (`Command`) gives both forms: `short` (`-h`: one line per argument,
//! the help beside its name) and `long` (`--help`, `help [COMMAND]`: the help under the name,
//! the long help and long about where the reference has one, a blank line between arguments).
const std = @import("std");
const assert = std.debug.assert;

/// `-h` or `--help` (the `help` subcommand prints the long form).
pub const Form = enum { short, long };

/// The commands that have a help text.
pub const Page = enum {
    main,
    extract_wevt_templates,
    dump_template_instances,
    apply_wevt_cache,
    info,
    help,

    /// The page of subcommand `name` (as `help NAME` names it), or null.
    pub fn byName(name: []const u8) ?Page {
        for (subcommands) |page| {
            if (std.mem.eql(u8, commandOf(page).name, name)) return page;
        }
        return null;
    }

    /// What clap's `Usage:` line says after the program's name.
    pub fn usage(page: Page) []const u8 {
        return commandOf(page).usage;
    }
};

/// The subcommands in the reference's order (its `Commands:` list).
const subcommands = [_]Page{
    .extract_wevt_templates,
    .dump_template_instances,
    .apply_wevt_cache,
    .info,
    .help,
};

/// One argument as clap shows it.
const Arg = struct {
    short: ?u8 = null,
    long: ?[]const u8 = null,
    /// `<NAME>` after the option, or a positional's `[NAME]`.
    value: ?[]const u8 = null,
    positional: bool = false,
    /// clap's `ArgAction::Count` (`-v...`) or a positional taking many values (`[NAME]...`).
    many: bool = false,
    help: []const u8,
    /// The `--help` text where it is not `help`.
    long_help: ?[]const u8 = null,
    default: ?[]const u8 = null,
    possible_values: ?[]const u8 = null,
};

const Command = struct {
    /// The subcommand's name ("" for the tool).
    name: []const u8,
    about: []const u8,
    long_about: ?[]const u8 = null,
    usage: []const u8,
    arguments: []const Arg = &.{},
    options: []const Arg,
};

/// clap's own `-h, --help` (every command here has a long help, so it names the other form).
const help_flag: Arg = .{
    .short = 'h',
    .long = "help",
    .help = "Print help (see more with '--help')",
    .long_help = "Print help (see a summary with '-h')",
};
const version: Arg = .{ .short = 'V', .long = "version", .help = "Print version" };

const main: Command = .{
    .name = "",
    .about = "Utility to parse EVTX files",
    .usage = "[OPTIONS] [INPUT] [COMMAND]",
    .arguments = &.{.{
        .value = "INPUT",
        .positional = true,
        .help = "Input EVTX file path, or '-' to read from stdin. " ++
            "Required unless using a subcommand.",
    }},
    .options = &.{
        .{
            .short = 't',
            .long = "threads",
            .value = "num-threads",
            .help = "Sets the number of worker threads, defaults to number of CPU cores.",
            .default = "0",
        },
        .{
            .short = 'o',
            .long = "format",
            .value = "output-format",
            .help = "Sets the output format",
            .long_help =
            \\Sets the output format:
            \\"xml"   - prints XML output.
            \\"json"  - prints JSON output.
            \\"jsonl" - (jsonlines) same as json with --no-indent --dont-show-record-number
            \\
            ,
            .default = "xml",
            .possible_values = "json, xml, jsonl",
        },
        .{
            .short = 'f',
            .long = "output",
            .value = "output-target",
            .help = "Writes output to the file specified instead of stdout, errors will still " ++
                "be printed to stderr.\n" ++
                "Will ask for confirmation before overwriting files, to allow overwriting, pass " ++
                "`--no-confirm-overwrite`\n" ++
                "Will create parent directories if needed.",
        },
        .{
            .long = "no-confirm-overwrite",
            .help = "When set, will not ask for confirmation before overwriting files, " ++
                "useful for automation",
        },
        .{
            .long = "events",
            .value = "event-ranges",
            .help = "When set, only the records with these event record IDs (`EventRecordID`) " ++
                "are output.\n" ++
                \\For example:
                \\    --events=1 outputs the record whose ID is 1.
                \\    --events=0-10,20-30 outputs the records with IDs 0 to 10 and 20 to 30.
                \\
            ,
        },
        .{
            .long = "validate-checksums",
            .help = "When set, chunks with invalid checksums will not be parsed. Usually dirty " ++
                "files have bad checksums, so using this flag will result in fewer records.",
        },
        .{
            .long = "recover-records",
            .help = "Also carve deleted/stale records from unallocated chunk space " ++
                "(cleared chunks, chunk slack).",
        },
        .{ .long = "no-indent", .help = "When set, output will not be indented." },
        .{
            .long = "separate-json-attributes",
            .help = "If outputting JSON, XML Element's attributes will be stored in a separate " ++
                "object named '<ELEMENTNAME>_attributes', with <ELEMENTNAME> containing the " ++
                "value of the node.",
        },
        .{
            .long = "dont-show-record-number",
            .help = "When set, `Record <id>` will not be printed.",
        },
        .{
            .long = "ansi-codec",
            .value = "ansi-codec",
            .help = "Code page for ANSI strings. An Encoding Standard label such as " ++
                "windows-1252 (the default), windows-1251, or gbk.",
            .default = "windows-1252",
        },
        .{
            .long = "wevt-cache",
            .value = "WEVTCACHE",
            .help = "Path to a WEVT template cache file (`.wevtcache`). When set, evtx_dump " ++
                "will try to render records using this cache if the embedded EVTX template " ++
                "expansion fails.",
        },
        .{
            .long = "mta",
            .value = "MTA",
            .help = "Path to an .MTA file (LocaleMetaData\\<log>_<LCID>.MTA, written next to " ++
                "logs saved with display information). Adds each event's localized message, " ++
                "level, task, opcode and keyword names as a RenderingInfo element.",
        },
        .{
            .long = "stop-after-one-error",
            .help = "When set, will exit after any failure of reading a record. " ++
                "Useful for debugging.",
        },
        .{
            .short = 'v',
            .many = true,
            .help =
            \\Sets debug prints level for the application:
            \\    -v   - info
            \\    -vv  - debug
            \\    -vvv - trace
            \\NOTE: trace output is only available in debug builds, as it is extremely verbose.
            ,
        },
        help_flag,
        version,
    },
};

const info: Command = .{
    .name = "info",
    .about = "Show an EVTX file's header and each chunk's record IDs, flags and CRC32s",
    .long_about =
    \\Show what an EVTX file's header and chunk headers say: the format version, the
    \\dirty and full flags, the chunk numbers and the next record ID, whether the
    \\header's CRC32 matches, and for each chunk its record numbers and IDs, its flags,
    \\and whether its header's and records' CRC32s match.
    \\
    \\For triaging dirty, wrapped or damaged logs. Records aren't parsed.
    \\
    ,
    .usage = "info --input <EVTX>",
    .options = &.{ evtx_input, help_flag },
};

/// `info -i` and `dump-template-instances -i`.
const evtx_input: Arg = .{
    .short = 'i',
    .long = "input",
    .value = "EVTX",
    .help = "Input EVTX file path.",
};

const extract_wevt_templates: Command = .{
    .name = "extract-wevt-templates",
    .about = "Build a WEVT template cache from PE files (EXE/DLL)",
    .long_about =
    \\Extract `WEVT_TEMPLATE` resources from PE files (EXE/DLL/SYS) and write them into a
    \\single portable cache file (`.wevtcache`).
    \\
    \\This cache can be copied across machines/OSes and used for offline template fallback
    \\when EVTX embedded templates are missing/corrupt.
    \\
    ,
    .usage = "extract-wevt-templates [OPTIONS] --output <WEVTCACHE>",
    .options = &.{
        .{
            .short = 'i',
            .long = "input",
            .value = "PATH",
            .help = "Input PE path (file or directory). Can be passed multiple times.",
        },
        .{
            .long = "glob",
            .value = "PATTERN",
            .help = "Glob pattern to expand into input paths (cross-platform). " ++
                "Can be passed multiple times.",
        },
        .{
            .short = 'r',
            .long = "recursive",
            .help = "When an input path is a directory (or a glob matches a directory), " ++
                "recurse into it.",
        },
        .{
            .long = "extensions",
            .value = "EXTS",
            .help = "Comma-separated list of allowed file extensions when walking directories " ++
                "(default: exe,dll,sys).",
            .default = "exe,dll,sys",
        },
        .{
            .short = 'o',
            .long = "output",
            .value = "WEVTCACHE",
            .help = "Output `.wevtcache` file to write extracted resources into.",
        },
        .{ .long = "overwrite", .help = "Overwrite the output file if it already exists." },
        help_flag,
    },
};

const dump_template_instances: Command = .{
    .name = "dump-template-instances",
    .about = "Dump BinXML TemplateInstance substitution arrays from EVTX records (JSONL)",
    .long_about =
    \\Dump BinXML TemplateInstance substitution arrays from EVTX records as JSONL.
    \\
    \\This is useful for offline rendering workflows where you have a template cache
    \\(from `extract-wevt-templates`) and need the record's substitution values array.
    \\
    ,
    .usage = "dump-template-instances [OPTIONS] --input <EVTX>",
    .options = &.{
        evtx_input,
        .{
            .long = "record-id",
            .value = "ID",
            .help = "Only dump template instances for the specified event record id.",
        },
        .{
            .long = "template-instance-index",
            .value = "N",
            .help = "When a record contains multiple TemplateInstance tokens, select which one " ++
                "to dump (default: 0).",
            .default = "0",
        },
        help_flag,
    },
};

const apply_wevt_cache: Command = .{
    .name = "apply-wevt-cache",
    .about = "Render a WEVT template using an offline cache + substitution values",
    .long_about =
    \\Render a WEVT template using an offline cache + substitution values.
    \\
    \\Inputs:
    \\- A cache file (`.wevtcache`) produced by `extract-wevt-templates`.
    \\- A template selector: either --template-guid, or (provider_guid,event_id,version).
    \\- Substitution values: either extracted from an EVTX record (--evtx + --record-id),
    \\  or provided as a JSON array (--substitutions / --substitutions-file).
    \\
    ,
    .usage = "apply-wevt-cache [OPTIONS] --cache <PATH>",
    .options = &.{
        .{ .long = "cache", .value = "PATH", .help = "Path to cache file (`.wevtcache`)." },
        .{ .long = "template-guid", .value = "GUID", .help = "Template GUID to render." },
        .{
            .long = "provider-guid",
            .value = "GUID",
            .help = "Provider GUID (used to resolve template GUID via the cache index).",
        },
        .{
            .long = "event-id",
            .value = "ID",
            .help = "Event ID (used to resolve template GUID via the cache index).",
        },
        .{
            .long = "version",
            .value = "V",
            .help = "Event version (used to resolve template GUID via the cache index).",
        },
        .{
            .long = "evtx",
            .value = "PATH",
            .help = "EVTX file to extract substitution values from (TemplateInstance).",
        },
        .{
            .long = "record-id",
            .value = "ID",
            .help = "Event record id to extract substitution values from.",
        },
        .{
            .long = "template-instance-index",
            .value = "N",
            .help = "When a record contains multiple TemplateInstance tokens, select which one " ++
                "to use (default: 0).",
            .default = "0",
        },
        .{
            .long = "substitutions",
            .value = "JSON",
            .help = "Substitution values as a JSON array (strings/numbers).",
        },
        .{
            .long = "substitutions-file",
            .value = "PATH",
            .help = "Path to a JSON file containing a substitution values array.",
        },
        .{
            .short = 'o',
            .long = "output",
            .value = "PATH",
            .help = "Write rendered XML to this path (default: stdout).",
        },
        help_flag,
    },
};

/// clap's own `help` subcommand (no options, no long form).
const help_command: Command = .{
    .name = "help",
    .about = "Print this message or the help of the given subcommand(s)",
    .usage = "help [COMMAND]...",
    .arguments = &.{.{
        .value = "COMMAND",
        .positional = true,
        .many = true,
        .help = "Print help for the subcommand(s)",
    }},
    .options = &.{},
};

fn commandOf(page: Page) *const Command {
    return switch (page) {
        .main => &main,
        .extract_wevt_templates => &extract_wevt_templates,
        .dump_template_instances => &dump_template_instances,
        .apply_wevt_cache => &apply_wevt_cache,
        .info => &info,
        .help => &help_command,
    };
}

/// Writes `page`'s help in `form`, `bin` being the program's name as invoked.
pub fn write(w: *std.Io.Writer, page: Page, form: Form, bin: []const u8) std.Io.Writer.Error!void {
    const command = commandOf(page);
    // Only the commands with a long text have a long form (clap's `use_long`).
    const long = form == .long and hasLongHelp(command);
    const about = if (long) command.long_about orelse command.about else command.about;
    try w.print("{s}\n\nUsage: {s} {s}\n", .{ about, bin, command.usage });
    if (page == .main) try writeCommands(w);
    if (command.arguments.len > 0) {
        try w.writeAll("\nArguments:\n");
        try writeArgs(w, command.arguments, long);
    }
    if (command.options.len > 0) {
        try w.writeAll("\nOptions:\n");
        try writeArgs(w, command.options, long);
    }
}

fn hasLongHelp(command: *const Command) bool {
    if (command.long_about != null) return true;
    for (command.options) |arg| {
        const own = !std.mem.eql(u8, arg.long orelse "", "help");
        if (own and arg.long_help != null) return true;
    }
    return false;
}

/// The `Commands:` list: each subcommand's name, padded to the longest, and its about line.
fn writeCommands(w: *std.Io.Writer) std.Io.Writer.Error!void {
    var longest: usize = 0;
    for (subcommands) |page| longest = @max(longest, commandOf(page).name.len);
    try w.writeAll("\nCommands:\n");
    for (subcommands) |page| {
        const command = commandOf(page);
        try w.print("  {s}", .{command.name});
        try w.splatByteAll(' ', longest - command.name.len + 2);
        try w.print("{s}\n", .{command.about});
    }
}

/// Where the long form's help lines start (clap's `NEXT_LINE_INDENT`).
const long_indent = 10;

/// Longest argument name clap shows (`-o, --output <PATH>`): far below this.
const name_max = 64;

/// One section's arguments: in the short form each name padded to the section's longest, the
/// help beside it and its other lines under it; in the long form the help under the name,
/// indented by 10, and a blank line between arguments.
fn writeArgs(w: *std.Io.Writer, args: []const Arg, long: bool) std.Io.Writer.Error!void {
    var longest: usize = 0;
    for (args) |arg| longest = @max(longest, nameOf(arg).len());
    for (args, 0..) |arg, n| {
        const name = nameOf(arg);
        try w.print("  {s}", .{name.slice()});
        if (long) {
            try w.writeAll("\n");
            try w.splatByteAll(' ', long_indent);
            try writeIndented(w, arg.long_help orelse arg.help, long_indent);
            if (arg.default != null or arg.possible_values != null) {
                try w.writeAll("\n");
                try w.splatByteAll(' ', long_indent);
                try w.writeAll("\n");
                try w.splatByteAll(' ', long_indent);
                try writeSpecValues(w, arg, "\n" ++ " " ** long_indent);
            }
            try w.writeAll(if (n + 1 < args.len) "\n\n" else "\n");
        } else {
            try w.splatByteAll(' ', longest - name.len() + 2);
            try writeIndented(w, arg.help, longest + 4);
            if (arg.default != null or arg.possible_values != null) {
                try w.writeAll(" ");
                try writeSpecValues(w, arg, " ");
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
fn writeSpecValues(w: *std.Io.Writer, arg: Arg, separator: []const u8) std.Io.Writer.Error!void {
    if (arg.default) |default| try w.print("[default: {s}]", .{default});
    if (arg.possible_values) |values| {
        if (arg.default != null) try w.writeAll(separator);
        try w.print("[possible values: {s}]", .{values});
    }
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

fn nameOf(arg: Arg) Name {
    var name: Name = .{};
    var w: std.Io.Writer = .fixed(&name.buffer);
    writeName(&w, arg) catch unreachable; // Every name here fits: `name_max` is far above.
    name.length = w.end;
    return name;
}

fn writeName(w: *std.Io.Writer, arg: Arg) std.Io.Writer.Error!void {
    if (arg.positional) {
        try w.print("[{s}]", .{arg.value.?});
        if (arg.many) try w.writeAll("...");
        return;
    }
    if (arg.short) |c| {
        try w.print("-{c}", .{c});
        if (arg.long != null) try w.writeAll(", ");
    } else {
        try w.writeAll("    ");
    }
    if (arg.long) |long| try w.print("--{s}", .{long});
    if (arg.value) |value| try w.print(" <{s}>", .{value});
    if (arg.many) try w.writeAll("...");
}

test "the name column" {
    const cases = [_]struct { arg: Arg, name: []const u8 }{
        .{ .arg = main.options[0], .name = "-t, --threads <num-threads>" },
        .{ .arg = main.options[3], .name = "    --no-confirm-overwrite" },
        .{ .arg = main.arguments[0], .name = "[INPUT]" },
        .{ .arg = help_command.arguments[0], .name = "[COMMAND]..." },
    };
    for (cases) |case| try std.testing.expectEqualStrings(case.name, nameOf(case.arg).slice());
    var longest: usize = 0;
    for (subcommands) |page| {
        for (commandOf(page).options) |arg| longest = @max(longest, nameOf(arg).len());
    }
    try std.testing.expect(longest < name_max);
}

test "every subcommand has a page by its name" {
    for (subcommands) |page| try std.testing.expectEqual(page, Page.byName(commandOf(page).name).?);
    try std.testing.expectEqual(null, Page.byName("bogus"));
    try std.testing.expectEqual(null, Page.byName(""));
}

test "info's short form, as the reference prints it" {
    var buffer: [1024]u8 = undefined;
    var w: std.Io.Writer = .fixed(&buffer);
    try write(&w, .info, .short, "evtx_dump");
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
