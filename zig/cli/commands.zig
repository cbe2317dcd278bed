//! The command line of `evtx-zig`, declared once: `evtx_dump` 0.15.1's commands and their
//! arguments as its clap 4.6 definition has them, in its order, with its words. `args.zig`
//! parses by this table, `help.zig` renders every help page from it, and each command reads its
//! options out of the parsed table by the names given here.
const std = @import("std");
const assert = std.debug.assert;

/// What giving an option does (clap's `ArgAction`).
pub const Action = enum {
    /// Set once (a flag, or an option with a value); given twice is a usage error.
    set,
    /// May be given again, every value kept.
    append,
    /// A flag counted each time it is given (`-v...`).
    count,
    /// Print the command's help: `-h` the short form, `--help` the long one.
    help,
    /// Print the version line.
    version,
};

/// How an option's value is read (the reference's value parsers), each failure in clap's words.
pub const Check = union(enum) {
    /// A `String`: any UTF-8.
    text,
    /// A `PathBuf`: any bytes.
    path,
    /// One of these names.
    choice: []const []const u8,
    /// Rust's `u64::from_str`.
    unsigned,
    /// An integer read as an `i64`, then held to `0..=max`.
    ranged: u64,
    /// An integer read as a `u64`, then held to `first..=last` (clap's
    /// `value_parser!(u64).range(first..=last)`; `triage`'s numbers).
    between: struct { first: u64, last: u64 },
    /// `--events`: record id ranges (`options.parseEventRanges`).
    event_ranges,
    /// `--ansi-codec`: an ASCII-compatible Encoding Standard label.
    ansi_codec,
    /// `--event-id`, `--level`: a LIST of numbers and ranges (the engine's `filter`).
    filter_list,
    /// `--provider`, `--channel`: a NAME (the engine's `filter`).
    filter_name,
    /// `--since`, `--until`: an RFC 3339 TIME (the engine's `filter`).
    filter_time,
};

/// One option.
pub const Option = struct {
    long: ?[]const u8 = null,
    short: ?u8 = null,
    /// The value's name (`<NAME>`); null for an option without a value.
    value: ?[]const u8 = null,
    action: Action = .set,
    check: Check = .text,
    required: bool = false,
    help: []const u8,
    /// The `--help` text where it is not `help`.
    long_help: ?[]const u8 = null,
    /// Shown in the help; the command reading the option applies it.
    default: ?[]const u8 = null,
    /// clap's `hide`: in no help page, and left out of the `Usage:` line of an error.
    hidden: bool = false,

    /// How clap names the option in messages and `Usage:` lines: `--long <VALUE>`, `-v...`.
    pub fn format(option: Option, w: *std.Io.Writer) std.Io.Writer.Error!void {
        if (option.long) |long| try w.print("--{s}", .{long}) else try w.print("-{c}", .{
            option.short.?,
        });
        if (option.value) |value| try w.print(" <{s}>", .{value});
        if (option.action == .count) try w.writeAll("...");
    }
};

/// The one positional argument a command may have.
pub const Positional = struct {
    name: []const u8,
    /// Takes any number of values (`[NAME]...`).
    many: bool = false,
    /// Must be given (`<NAME>...` in the `Usage:` line).
    required: bool = false,
    help: []const u8,
};

pub const Command = struct {
    /// The subcommand's name ("" for the tool).
    name: []const u8,
    about: []const u8,
    long_about: ?[]const u8 = null,
    positional: ?Positional = null,
    options: []const Option = &.{},
    /// In the reference's order (its `Commands:` list), clap's `help` last.
    subcommands: []const *const Command = &.{},
    /// clap's own `help` subcommand: its arguments name the page to print.
    is_help: bool = false,

    /// The option named `name` (its long name, or its short one as a one-letter string),
    /// found at compile time: a reader naming no option of its command does not build.
    pub fn id(comptime command: *const Command, comptime name: []const u8) comptime_int {
        for (command.options, 0..) |option, index| {
            if (option.long) |long| if (std.mem.eql(u8, long, name)) return index;
            if (name.len == 1 and option.short == name[0]) return index;
        }
        @compileError(command.name ++ " has no option " ++ name);
    }

    /// The subcommand named `name`, or null.
    pub fn subcommand(command: *const Command, name: []const u8) ?*const Command {
        for (command.subcommands) |sub| if (std.mem.eql(u8, sub.name, name)) return sub;
        return null;
    }

    /// Whether the command has a help option (clap's `For more information` line names it).
    pub fn hasHelp(command: *const Command) bool {
        for (command.options) |option| if (option.action == .help) return true;
        return false;
    }
};

/// clap's own `-h, --help` (every command with one has a long help, so it names the other form).
const help_option: Option = .{
    .short = 'h',
    .long = "help",
    .action = .help,
    .help = "Print help (see more with '--help')",
    .long_help = "Print help (see a summary with '-h')",
};

pub const main: Command = .{
    .name = "",
    .about = "Utility to parse EVTX files",
    .positional = .{
        .name = "INPUT",
        .help = "Input EVTX file path, or '-' to read from stdin. " ++
            "Required unless using a subcommand.",
    },
    .options = &.{
        .{
            .short = 't',
            .long = "threads",
            .value = "num-threads",
            .check = .{ .ranged = std.math.maxInt(u32) },
            .help = "Sets the number of worker threads, defaults to number of CPU cores.",
            .default = "0",
        },
        .{
            .short = 'o',
            .long = "format",
            .value = "output-format",
            .check = .{ .choice = &.{ "json", "xml", "jsonl" } },
            .help = "Sets the output format",
            .long_help =
            \\Sets the output format:
            \\"xml"   - prints XML output.
            \\"json"  - prints JSON output.
            \\"jsonl" - (jsonlines) same as json with --no-indent --dont-show-record-number
            \\
            ,
            .default = "xml",
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
            .check = .event_ranges,
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
            .check = .ansi_codec,
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
            .check = .path,
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
            .action = .count,
            .help =
            \\Sets debug prints level for the application:
            \\    -v   - info
            \\    -vv  - debug
            \\    -vvv - trace
            \\NOTE: trace output is only available in debug builds, as it is extremely verbose.
            ,
        },
        help_option,
        .{ .short = 'V', .long = "version", .action = .version, .help = "Print version" },
    },
    .subcommands = &.{
        &extract_wevt_templates,
        &dump_template_instances,
        &apply_wevt_cache,
        &info,
        &help,
    },
};

/// `info -i` and `dump-template-instances -i`.
const evtx_input: Option = .{
    .short = 'i',
    .long = "input",
    .value = "EVTX",
    .required = true,
    .help = "Input EVTX file path.",
};

pub const info: Command = .{
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
    .options = &.{ evtx_input, help_option },
};

pub const extract_wevt_templates: Command = .{
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
    .options = &.{
        .{
            .short = 'i',
            .long = "input",
            .value = "PATH",
            .action = .append,
            .help = "Input PE path (file or directory). Can be passed multiple times.",
        },
        .{
            .long = "glob",
            .value = "PATTERN",
            .action = .append,
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
            .required = true,
            .help = "Output `.wevtcache` file to write extracted resources into.",
        },
        .{ .long = "overwrite", .help = "Overwrite the output file if it already exists." },
        help_option,
    },
};

pub const dump_template_instances: Command = .{
    .name = "dump-template-instances",
    .about = "Dump BinXML TemplateInstance substitution arrays from EVTX records (JSONL)",
    .long_about =
    \\Dump BinXML TemplateInstance substitution arrays from EVTX records as JSONL.
    \\
    \\This is useful for offline rendering workflows where you have a template cache
    \\(from `extract-wevt-templates`) and need the record's substitution values array.
    \\
    ,
    .options = &.{
        evtx_input,
        .{
            .long = "record-id",
            .value = "ID",
            .check = .unsigned,
            .help = "Only dump template instances for the specified event record id.",
        },
        .{
            .long = "template-instance-index",
            .value = "N",
            .check = .unsigned,
            .help = "When a record contains multiple TemplateInstance tokens, select which one " ++
                "to dump (default: 0).",
            .default = "0",
        },
        help_option,
    },
};

pub const apply_wevt_cache: Command = .{
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
    .options = &.{
        .{
            .long = "cache",
            .value = "PATH",
            .required = true,
            .help = "Path to cache file (`.wevtcache`).",
        },
        .{ .long = "template-guid", .value = "GUID", .help = "Template GUID to render." },
        .{
            .long = "provider-guid",
            .value = "GUID",
            .help = "Provider GUID (used to resolve template GUID via the cache index).",
        },
        .{
            .long = "event-id",
            .value = "ID",
            .check = .{ .ranged = std.math.maxInt(u16) },
            .help = "Event ID (used to resolve template GUID via the cache index).",
        },
        .{
            .long = "version",
            .value = "V",
            .check = .{ .ranged = std.math.maxInt(u8) },
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
            .check = .unsigned,
            .help = "Event record id to extract substitution values from.",
        },
        .{
            .long = "template-instance-index",
            .value = "N",
            .check = .unsigned,
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
        help_option,
    },
};

/// clap's own `help` subcommand (no options, no long form).
pub const help: Command = .{
    .name = "help",
    .about = "Print this message or the help of the given subcommand(s)",
    .positional = .{ .name = "COMMAND", .many = true, .help = "Print help for the subcommand(s)" },
    .is_help = true,
};

/// The extensions' options (`extensions.zig`, README "Extensions"): in no help page, read only
/// by the second pass, `main_extended`.
pub const extension_options = [_]Option{
    .{ .long = "event-id", .value = "LIST", .check = .filter_list, .help = "", .hidden = true },
    .{
        .long = "provider",
        .value = "NAME",
        .action = .append,
        .check = .filter_name,
        .help = "",
        .hidden = true,
    },
    .{
        .long = "channel",
        .value = "NAME",
        .action = .append,
        .check = .filter_name,
        .help = "",
        .hidden = true,
    },
    .{ .long = "level", .value = "LIST", .check = .filter_list, .help = "", .hidden = true },
    .{ .long = "since", .value = "TIME", .check = .filter_time, .help = "", .hidden = true },
    .{ .long = "until", .value = "TIME", .check = .filter_time, .help = "", .hidden = true },
    .{ .long = "provenance", .help = "", .hidden = true },
};

/// The tool with the extensions, as evtx-rs's `ExtCli` declares it: any number of inputs, the
/// dump's options then the extensions' then help and version (clap's order of suggestions),
/// no subcommands. Its help pages are never printed (the tool's are).
pub const main_extended: Command = .{
    .name = "",
    .about = main.about,
    .positional = .{ .name = "INPUT", .many = true, .help = main.positional.?.help },
    .options = &(main.options[0 .. main.options.len - 2].* ++ extension_options ++
        main.options[main.options.len - 2 ..].*),
};

/// `triage` (beyond the reference: read only when the line starts with `triage` and asks
/// for help or is one the reference refuses, `extensions.zig`). Its help page is
/// `include/help_triage.txt`, shared with evtx-rs, never rendered from this table.
pub const triage: Command = .{
    .name = "triage",
    .about = "What each log holds and whether it was touched",
    .positional = .{
        .name = "INPUT",
        .many = true,
        .required = true,
        .help = "EVTX files, or directories searched for *.evtx",
    },
    .options = &.{
        .{ .long = "json", .help = "Write one JSON document" },
        .{
            .long = "top",
            .value = "N",
            .check = .{ .between = .{ .first = 1, .last = 1_000_000 } },
            .default = "10",
            .help = "Rows per table in the text",
        },
        .{
            .long = "silence",
            .value = "SECONDS",
            .check = .{ .between = .{ .first = 1, .last = 315_360_000 } },
            .default = "3600",
            .help = "The shortest silence reported",
        },
        help_option,
    },
};

/// Every command, the tool first.
pub const all = [_]*const Command{
    &main,
    &extract_wevt_templates,
    &dump_template_instances,
    &apply_wevt_cache,
    &info,
    &help,
};

/// Most options one command has.
pub const options_max = 32;

comptime {
    @setEvalBranchQuota(10_000);
    for (all ++ [_]*const Command{ &main_extended, &triage }) |command| {
        assert(command.options.len <= options_max);
        var required: usize = 0;
        for (command.options, 0..) |option, index| {
            // A value is set or appended; a flag is set, counted, or asks for help or version.
            if (option.value != null) {
                assert(option.action == .set or option.action == .append);
            } else {
                assert(option.action != .append and option.check == .text);
            }
            assert(option.long != null or option.short != null);
            if (option.required) required += 1;
            for (command.options[index + 1 ..]) |other| {
                if (option.long != null and other.long != null)
                    assert(!std.mem.eql(u8, option.long.?, other.long.?));
                if (option.short != null) assert(option.short != other.short);
            }
        }
        assert(required <= 1);
    }
}

test "every option shows as clap names it" {
    var buffer: [64]u8 = undefined;
    const cases = [_]struct { option: Option, shown: []const u8 }{
        .{ .option = main.options[main.id("threads")], .shown = "--threads <num-threads>" },
        .{ .option = main.options[main.id("v")], .shown = "-v..." },
        .{ .option = info.options[info.id("help")], .shown = "--help" },
    };
    for (cases) |case| {
        const shown = try std.fmt.bufPrint(&buffer, "{f}", .{case.option});
        try std.testing.expectEqualStrings(case.shown, shown);
    }
    try std.testing.expectEqual(null, main.subcommand("bogus"));
    try std.testing.expectEqual(&info, main.subcommand("info").?);
}
