//! The help texts of `evtx-rs`: `evtx_dump` 0.15.1's words, option by option, so that clap
//! (the reference's own parser, same version) prints `-h`, `--help`, `help [COMMAND]` and each
//! subcommand's help byte for byte as the reference does, the program's name aside
//! (`evtx-compare exit-table` checks every form against the reference at test time).
//!
//! `HELP` texts are clap's short form (`-h`); a `LONG` text is the `--help` form where the
//! reference gives one. Trailing newlines and indentation are the reference's (its `indoc!`
//! output): clap keeps them, and they show as blank or space-only lines.

/// The tool's `about` line, the reference's.
pub const ABOUT: &str = "Utility to parse EVTX files";

pub const INPUT: &str =
    "Input EVTX file path, or '-' to read from stdin. Required unless using a subcommand.";
pub const THREADS: &str = "Sets the number of worker threads, defaults to number of CPU cores.";
pub const FORMAT: &str = "Sets the output format";
pub const FORMAT_LONG: &str = concat!(
    "Sets the output format:\n",
    "\"xml\"   - prints XML output.\n",
    "\"json\"  - prints JSON output.\n",
    "\"jsonl\" - (jsonlines) same as json with --no-indent --dont-show-record-number\n",
);
pub const OUTPUT: &str = concat!(
    "Writes output to the file specified instead of stdout, errors will still be printed to ",
    "stderr.\n",
    "Will ask for confirmation before overwriting files, to allow overwriting, pass ",
    "`--no-confirm-overwrite`\n",
    "Will create parent directories if needed.",
);
pub const NO_CONFIRM_OVERWRITE: &str =
    "When set, will not ask for confirmation before overwriting files, useful for automation";
pub const EVENTS: &str = concat!(
    "When set, only the records with these event record IDs (`EventRecordID`) are output.\n",
    "For example:\n",
    "    --events=1 outputs the record whose ID is 1.\n",
    "    --events=0-10,20-30 outputs the records with IDs 0 to 10 and 20 to 30.\n",
);
pub const VALIDATE_CHECKSUMS: &str = concat!(
    "When set, chunks with invalid checksums will not be parsed. Usually dirty files have bad ",
    "checksums, so using this flag will result in fewer records.",
);
pub const RECOVER_RECORDS: &str = concat!(
    "Also carve deleted/stale records from unallocated chunk space ",
    "(cleared chunks, chunk slack).",
);
pub const NO_INDENT: &str = "When set, output will not be indented.";
pub const SEPARATE_JSON_ATTRIBUTES: &str = concat!(
    "If outputting JSON, XML Element's attributes will be stored in a separate object named ",
    "'<ELEMENTNAME>_attributes', with <ELEMENTNAME> containing the value of the node.",
);
pub const DONT_SHOW_RECORD_NUMBER: &str = "When set, `Record <id>` will not be printed.";
pub const ANSI_CODEC: &str = concat!(
    "Code page for ANSI strings. An Encoding Standard label such as windows-1252 ",
    "(the default), windows-1251, or gbk.",
);
pub const WEVT_CACHE: &str = concat!(
    "Path to a WEVT template cache file (`.wevtcache`). When set, evtx_dump will try to render ",
    "records using this cache if the embedded EVTX template expansion fails.",
);
pub const MTA: &str = concat!(
    "Path to an .MTA file (LocaleMetaData\\<log>_<LCID>.MTA, written next to logs saved with ",
    "display information). Adds each event's localized message, level, task, opcode and ",
    "keyword names as a RenderingInfo element.",
);
pub const STOP_AFTER_ONE_ERROR: &str =
    "When set, will exit after any failure of reading a record. Useful for debugging.";
pub const VERBOSE: &str = concat!(
    "Sets debug prints level for the application:\n",
    "    -v   - info\n",
    "    -vv  - debug\n",
    "    -vvv - trace\n",
    "NOTE: trace output is only available in debug builds, as it is extremely verbose.",
);

pub const INFO_ABOUT: &str =
    "Show an EVTX file's header and each chunk's record IDs, flags and CRC32s";
pub const INFO_LONG_ABOUT: &str = concat!(
    "Show what an EVTX file's header and chunk headers say: the format version, the\n",
    "dirty and full flags, the chunk numbers and the next record ID, whether the\n",
    "header's CRC32 matches, and for each chunk its record numbers and IDs, its flags,\n",
    "and whether its header's and records' CRC32s match.\n",
    "\n",
    "For triaging dirty, wrapped or damaged logs. Records aren't parsed.\n",
);
/// `info -i` and `dump-template-instances -i`.
pub const EVTX_INPUT: &str = "Input EVTX file path.";

pub const EXTRACT_ABOUT: &str = "Build a WEVT template cache from PE files (EXE/DLL)";
pub const EXTRACT_LONG_ABOUT: &str = concat!(
    "Extract `WEVT_TEMPLATE` resources from PE files (EXE/DLL/SYS) and write them into a\n",
    "single portable cache file (`.wevtcache`).\n",
    "\n",
    "This cache can be copied across machines/OSes and used for offline template fallback\n",
    "when EVTX embedded templates are missing/corrupt.\n",
);
pub const EXTRACT_INPUT: &str = "Input PE path (file or directory). Can be passed multiple times.";
pub const EXTRACT_GLOB: &str =
    "Glob pattern to expand into input paths (cross-platform). Can be passed multiple times.";
pub const EXTRACT_RECURSIVE: &str =
    "When an input path is a directory (or a glob matches a directory), recurse into it.";
pub const EXTRACT_EXTENSIONS: &str = concat!(
    "Comma-separated list of allowed file extensions when walking directories ",
    "(default: exe,dll,sys).",
);
pub const EXTRACT_OUTPUT: &str = "Output `.wevtcache` file to write extracted resources into.";
pub const EXTRACT_OVERWRITE: &str = "Overwrite the output file if it already exists.";

pub const DUMP_ABOUT: &str =
    "Dump BinXML TemplateInstance substitution arrays from EVTX records (JSONL)";
pub const DUMP_LONG_ABOUT: &str = concat!(
    "Dump BinXML TemplateInstance substitution arrays from EVTX records as JSONL.\n",
    "\n",
    "This is useful for offline rendering workflows where you have a template cache\n",
    "(from `extract-wevt-templates`) and need the record's substitution values array.\n",
);
pub const DUMP_RECORD_ID: &str = "Only dump template instances for the specified event record id.";
pub const DUMP_TEMPLATE_INSTANCE_INDEX: &str = concat!(
    "When a record contains multiple TemplateInstance tokens, select which one to dump ",
    "(default: 0).",
);

pub const APPLY_ABOUT: &str = "Render a WEVT template using an offline cache + substitution values";
pub const APPLY_LONG_ABOUT: &str = concat!(
    "Render a WEVT template using an offline cache + substitution values.\n",
    "\n",
    "Inputs:\n",
    "- A cache file (`.wevtcache`) produced by `extract-wevt-templates`.\n",
    "- A template selector: either --template-guid, or (provider_guid,event_id,version).\n",
    "- Substitution values: either extracted from an EVTX record (--evtx + --record-id),\n",
    "  or provided as a JSON array (--substitutions / --substitutions-file).\n",
);
pub const APPLY_CACHE: &str = "Path to cache file (`.wevtcache`).";
pub const APPLY_TEMPLATE_GUID: &str = "Template GUID to render.";
pub const APPLY_PROVIDER_GUID: &str =
    "Provider GUID (used to resolve template GUID via the cache index).";
pub const APPLY_EVENT_ID: &str = "Event ID (used to resolve template GUID via the cache index).";
pub const APPLY_VERSION: &str =
    "Event version (used to resolve template GUID via the cache index).";
pub const APPLY_EVTX: &str = "EVTX file to extract substitution values from (TemplateInstance).";
pub const APPLY_RECORD_ID: &str = "Event record id to extract substitution values from.";
pub const APPLY_TEMPLATE_INSTANCE_INDEX: &str = concat!(
    "When a record contains multiple TemplateInstance tokens, select which one to use ",
    "(default: 0).",
);
pub const APPLY_SUBSTITUTIONS: &str = "Substitution values as a JSON array (strings/numbers).";
pub const APPLY_SUBSTITUTIONS_FILE: &str =
    "Path to a JSON file containing a substitution values array.";
pub const APPLY_OUTPUT: &str = "Write rendered XML to this path (default: stdout).";
