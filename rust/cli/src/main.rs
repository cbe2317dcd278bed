//! `evtx-rs`: a drop-in for `evtx_dump` 0.15.1 (contract section 11), built on `evtx-core`.
//!
//! The options, subcommands and exit statuses are the reference's (checked against it by
//! `evtx-compare exit-table`). Differences on purpose: one `error: ...` line per failed chunk
//! or record (format in `shared-fixtures/README.md`) instead of a multi-line block, one
//! `error: <PATH>: offset 0x<O>: ...` line for a damaged `--mta`, `--wevt-cache` or PE file,
//! `-f` naming the input file is refused before anything is written, and `-V` names this tool.
//!
//! The input is read through 64 KiB windows (`evtx_core::Input`), never mapped: memory stays at
//! a few chunks per worker and a file that shrinks under us gives `incomplete chunk` errors, not
//! SIGBUS. Standard input is spooled to an unlinked temporary file first, as the reference does
//! (the wrapped-log order needs every chunk header before the first chunk is written).

use clap::{ArgAction, Args, Parser, Subcommand, ValueEnum};
use evtx_core::provenance::Provenance;
use evtx_core::{dump_before_exit, ChunkResult, ChunkSource, Format, Input, Options, Outcome};
use std::fs;
use std::io::{self, IsTerminal, Write};
use std::ops::ControlFlow;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::{Duration, Instant};

mod apply_wevt_cache;
mod dump_template_instances;
mod extensions;
mod extract_wevt_templates;
mod help;
mod inputs;
mod open_input;
mod platform;
mod triage;

#[derive(Debug, Clone, Copy, ValueEnum)]
enum Fmt {
    Json,
    Xml,
    Jsonl,
}

#[derive(Debug, Clone)]
struct Ranges(Vec<(u64, u64)>);

fn parse_ranges(s: &str) -> Result<Ranges, String> {
    evtx_core::parse_event_ranges(s).map(Ranges)
}

/// A path that must be UTF-8, as the reference's `String` options are (clap's `invalid UTF-8
/// was detected` otherwise); only `--mta` is a `PathBuf` there.
fn utf8_path() -> impl clap::builder::TypedValueParser<Value = PathBuf> {
    use clap::builder::TypedValueParser;
    clap::builder::StringValueParser::new().map(PathBuf::from)
}

#[derive(Debug, Clone, Copy)]
struct Codec(&'static evtx_core::Encoding);

fn parse_codec(s: &str) -> Result<Codec, String> {
    evtx_core::parse_ansi_codec(s).map(Codec)
}

const VERSION: &str = concat!(env!("CARGO_PKG_VERSION"), " (evtx_dump 0.15.1 compatible)");

/// The command line as the reference reads it: its options, in its order; every text is in
/// `help`.
#[derive(Debug, Parser)]
#[command(name = "evtx-rs", version = VERSION, about = help::ABOUT)]
// No argument group: derive's default one would change clap's `Usage:` lines in usage errors
// (the reference builds its command without one).
#[group(skip)]
struct Cli {
    #[arg(help = help::INPUT)]
    input: Option<String>,
    #[command(flatten)]
    dump: DumpOptions,
    #[command(subcommand)]
    command: Option<Command>,
}

/// The command line with the extensions (`extensions.rs`): two or more inputs, the hidden
/// options, no subcommands. Read only where the reference refuses a line.
#[derive(Debug, Parser)]
#[command(name = "evtx-rs", version = VERSION, about = help::ABOUT)]
#[group(skip)]
struct ExtCli {
    #[arg(value_name = "INPUT", help = help::INPUT)]
    inputs: Vec<String>,
    #[command(flatten)]
    dump: DumpOptions,
    #[command(flatten)]
    ext: extensions::Extensions,
}

/// The dump's options, the reference's, in its order.
#[derive(Debug, Args)]
#[group(skip)]
struct DumpOptions {
    // At most 256 workers are used (`EVTX_LIMIT_THREADS`).
    #[arg(
        short = 't',
        long = "threads",
        value_name = "num-threads",
        default_value_t = 0,
        help = help::THREADS
    )]
    threads: u32,
    #[arg(
        short = 'o',
        long = "format",
        value_name = "output-format",
        value_enum,
        default_value = "xml",
        help = help::FORMAT,
        long_help = help::FORMAT_LONG
    )]
    format: Fmt,
    #[arg(
        short = 'f',
        long = "output",
        value_name = "output-target",
        value_parser = utf8_path(),
        help = help::OUTPUT
    )]
    output: Option<PathBuf>,
    #[arg(long, help = help::NO_CONFIRM_OVERWRITE)]
    no_confirm_overwrite: bool,
    #[arg(long, value_name = "event-ranges", value_parser = parse_ranges, help = help::EVENTS)]
    events: Option<Ranges>,
    #[arg(long, help = help::VALIDATE_CHECKSUMS)]
    validate_checksums: bool,
    #[arg(long, help = help::RECOVER_RECORDS)]
    recover_records: bool,
    #[arg(long, help = help::NO_INDENT)]
    no_indent: bool,
    #[arg(long, help = help::SEPARATE_JSON_ATTRIBUTES)]
    separate_json_attributes: bool,
    #[arg(long, help = help::DONT_SHOW_RECORD_NUMBER)]
    dont_show_record_number: bool,
    #[arg(
        long,
        value_name = "ansi-codec",
        value_parser = parse_codec,
        default_value = "windows-1252",
        help = help::ANSI_CODEC
    )]
    ansi_codec: Codec,
    #[arg(long, value_name = "WEVTCACHE", value_parser = utf8_path(), help = help::WEVT_CACHE)]
    wevt_cache: Option<PathBuf>,
    #[arg(long, value_name = "MTA", help = help::MTA)]
    mta: Option<PathBuf>,
    #[arg(long, help = help::STOP_AFTER_ONE_ERROR)]
    stop_after_one_error: bool,
    #[arg(short = 'v', action = ArgAction::Count, help = help::VERBOSE)]
    verbose: u8,
}

#[derive(Debug, Subcommand)]
enum Command {
    // Each subcommand's about lines are on its `Args` struct.
    ExtractWevtTemplates(extract_wevt_templates::ExtractArgs),
    DumpTemplateInstances(dump_template_instances::DumpArgs),
    ApplyWevtCache(apply_wevt_cache::ApplyArgs),
    Info(InfoArgs),
}

#[derive(Debug, Args)]
#[command(about = help::INFO_ABOUT, long_about = help::INFO_LONG_ABOUT)]
#[group(skip)]
struct InfoArgs {
    #[arg(short = 'i', long = "input", value_name = "EVTX", help = help::EVTX_INPUT)]
    input: String,
}

#[cold]
pub(crate) fn fatal(message: impl std::fmt::Display) -> ExitCode {
    eprintln!("Error: {message}");
    ExitCode::from(1)
}

/// `info -i FILE`: the report of `evtx_core::info` on standard output.
/// The file is read through chunk windows (a stream is spooled first), so memory stays bounded
/// whatever its size.
fn info_command(args: &InfoArgs) -> ExitCode {
    let open_error =
        |e: &io::Error| fatal(format!("Failed to open {}: {}", args.input, io_reason(e)));
    let file = match fs::File::open(&args.input) {
        Ok(file) => file,
        Err(e) => return open_error(&e),
    };
    let file = if evtx_core::input::is_regular(&file) {
        Some(file)
    } else {
        match evtx_core::input::spool(&mut &file, &std::env::temp_dir()) {
            Ok(spooled) => spooled,
            Err(e) => return open_error(&e),
        }
    };
    let input = match file.map_or(Err(evtx_core::FatalError::TooShort(0)), Input::open_lenient) {
        Ok(input) => input,
        Err(e) => return fatal(evtx_core::info::header_error(e)),
    };
    let mut out = io::BufWriter::with_capacity(64 << 10, stdout_writer());
    match evtx_core::info::info(&input, &mut out).and_then(|()| out.flush()) {
        Err(e) if e.kind() != io::ErrorKind::BrokenPipe => {
            fatal(format!("failed to write output: {}", io_reason(&e)))
        }
        _ => ExitCode::SUCCESS,
    }
}

/// An I/O error's reason without Rust's ` (os error N)` suffix, in the words both CLIs use.
fn io_reason(e: &io::Error) -> String {
    let text = e.to_string();
    match text.find(" (os error") {
        Some(at) => text[..at].to_string(),
        None => text,
    }
}

/// What the command line asks for: a subcommand, or a dump.
enum Line {
    Command(Command),
    Dump(Dump),
}

/// A dump: the reference's options, the inputs (at most one where the reference reads the
/// line), and the extensions where it does not.
struct Dump {
    options: DumpOptions,
    inputs: Vec<String>,
    ext: Option<extensions::Extensions>,
}

/// Reads the command line in two passes (`extensions.rs`), or ends the run with help, the
/// version or a usage error (exit 2), as clap prints them.
fn parse_line() -> Line {
    let argv: Vec<std::ffi::OsString> = std::env::args_os().collect();
    let refused = match Cli::try_parse_from(&argv) {
        Ok(cli) => {
            return match cli.command {
                Some(command) => Line::Command(command),
                None => Line::Dump(Dump {
                    options: cli.dump,
                    inputs: cli.input.into_iter().collect(),
                    ext: None,
                }),
            }
        }
        Err(e) if e.use_stderr() => e,
        Err(help_or_version) => help_or_version.exit(),
    };
    let args = argv.get(1..).unwrap_or_default();
    if args == ["help", "extensions"] {
        print!("{}", extensions::HELP);
        std::process::exit(0);
    }
    let named = extensions::named(args);
    match ExtCli::try_parse_from(&argv) {
        Ok(ext) if named || extensions::many_inputs(args, &ext.inputs) => {
            if let Err(why) = ext.ext.filter().check() {
                extensions::usage_error(&why);
            }
            Line::Dump(Dump {
                options: ext.dump,
                inputs: ext.inputs,
                ext: Some(ext.ext),
            })
        }
        Err(e) if named => match e.kind() {
            // The reference's page, in the form asked for: the extensions have their own.
            clap::error::ErrorKind::DisplayHelp => reference_help(&argv, &e),
            _ => e.exit(),
        },
        _ => refused.exit(),
    }
}

/// Prints the reference's help page in the form (`-h` or `--help`) of `asked`, the second
/// pass's help, and exits 0.
fn reference_help(argv: &[std::ffi::OsString], asked: &clap::Error) -> ! {
    use clap::CommandFactory;
    let bin = std::path::Path::new(&argv[0])
        .file_name()
        .map(|n| n.to_string_lossy());
    let bin = bin.unwrap_or_default().into_owned();
    let mut ext = ExtCli::command().bin_name(&bin);
    let long = asked.to_string() == ext.render_long_help().to_string();
    let form = if long { "--help" } else { "-h" };
    match Cli::try_parse_from([argv[0].clone(), form.into()]) {
        Err(help) => help.exit(),
        Ok(_) => unreachable!("`-h` and `--help` print help"),
    }
}

/// The run, in the same steps as evtx-zig's `main`: parse, a subcommand or the dump's notes
/// and options, open the input, open the output, load the side files, dump through the sink,
/// finish. Two or more inputs: `run_many`.
fn main() -> ExitCode {
    let argv: Vec<std::ffi::OsString> = std::env::args_os().collect();
    if triage::is_triage(&argv, || {
        Cli::try_parse_from(&argv).is_err_and(|e| e.use_stderr())
    }) {
        return triage::run(&argv);
    }
    let dump = match parse_line() {
        Line::Command(command) => return run_command(&command),
        Line::Dump(dump) => dump,
    };
    let input = match dump.inputs.as_slice() {
        [] => {
            return fatal(
                "Missing INPUT. Provide an EVTX file path, or use a subcommand (try `--help`).",
            )
        }
        [input] => input.as_str(),
        _ => return run_many(&dump),
    };
    let cli = &dump.options;
    print_notes(cli);
    let mut opts = options_of(&dump);
    let file = match open_input(input, cli.output.as_deref()) {
        Ok(f) => f,
        Err(e) => return fatal(e),
    };
    let (writer, progress) = match output_writer(cli) {
        Ok(w) => w,
        Err(e) => return fatal(e),
    };
    if let Err(code) = load_side_files(cli, &mut opts) {
        return code;
    }
    let mut sink = Sink::new(cli, writer, progress, provenance(&dump));
    sink.convert(input, &file, &mut opts, true);
    sink.finish(false)
}

/// Two or more inputs (`inputs.rs`), converted in order into one output: the same steps as
/// one, the output opened once before the first log (each log opened when its turn comes).
/// A log that cannot be opened prints the reference's error for it and the others go on; the
/// run then exits 1. `--stop-after-one-error` stops at the first error of any log, its own
/// opening included.
fn run_many(dump: &Dump) -> ExitCode {
    let cli = &dump.options;
    print_notes(cli);
    let mut opts = options_of(dump);
    let items = inputs::expand(&dump.inputs);
    if let Some(output) = &cli.output {
        if let Some(inputs::Item::Log(path)) = items.iter().find(|i| inputs::is_output(i, output)) {
            return fatal(format!(
                "refusing to write the output to `{}`: it is the input file `{path}`",
                output.display()
            ));
        }
    }
    let (writer, progress) = match output_writer(cli) {
        Ok(w) => w,
        Err(e) => return fatal(e),
    };
    if let Err(code) = load_side_files(cli, &mut opts) {
        return code;
    }
    let mut sink = Sink::new(cli, writer, progress, provenance(dump));
    let mut failed = false;
    for (n, item) in items.iter().enumerate() {
        let opened = match item {
            inputs::Item::Log(path) => open_input(path, cli.output.as_deref()).map(|f| (path, f)),
            inputs::Item::Unreadable(_, e) => Err(e.clone()),
        };
        match opened {
            Ok((path, file)) => sink.convert(path, &file, &mut opts, n + 1 == items.len()),
            Err(e) => {
                eprintln!("Error: {e}");
                failed = true;
                sink.stopped |= cli.stop_after_one_error;
            }
        }
        if !sink.going_on() {
            break;
        }
    }
    sink.finish(failed)
}

/// The dump's output (`-f` or stdout), and whether it draws a progress bar (a file, with
/// stderr a terminal); the error's words otherwise.
fn output_writer(cli: &DumpOptions) -> Result<(Box<dyn Write>, bool), String> {
    match &cli.output {
        None => Ok((stdout_writer(), false)),
        Some(path) => open_output(path, cli.no_confirm_overwrite)
            .map(|f| (Box::new(f) as Box<dyn Write>, io::stderr().is_terminal())),
    }
}

/// `info`, `help` and the template subcommands (evtx-zig: `infoCommand`, `wevtCommand`).
fn run_command(command: &Command) -> ExitCode {
    match command {
        Command::Info(args) => info_command(args),
        Command::ExtractWevtTemplates(args) => extract_wevt_templates::run(args),
        Command::DumpTemplateInstances(args) => dump_template_instances::run(args),
        Command::ApplyWevtCache(args) => apply_wevt_cache::run(args),
    }
}

/// The reference's notes on options that change nothing.
fn print_notes(cli: &DumpOptions) {
    if cli.verbose > 3 {
        eprintln!("using more than -vvv does not affect verbosity level");
    }
    if matches!(cli.format, Fmt::Jsonl) {
        if cli.no_indent {
            eprintln!("no need to pass both `--no-indent` and `-o jsonl`");
        }
        if cli.dont_show_record_number {
            eprintln!("no need to pass both `--no-show-record-number` and `-o jsonl`");
        }
    }
}

/// Whether `--provenance` was given.
fn provenance(dump: &Dump) -> bool {
    dump.ext.as_ref().is_some_and(|e| e.provenance)
}

/// The dump's options from the command line (evtx-zig fills its `Options` while parsing).
fn options_of(dump: &Dump) -> Options {
    let cli = &dump.options;
    let format = match cli.format {
        Fmt::Xml => Format::Xml,
        Fmt::Json => Format::Json,
        Fmt::Jsonl => Format::Jsonl,
    };
    Options {
        format,
        indent: !cli.no_indent,
        separate_json_attributes: cli.separate_json_attributes,
        show_record_number: !cli.dont_show_record_number,
        validate_checksums: cli.validate_checksums,
        ansi_codec: cli.ansi_codec.0,
        event_ranges: cli.events.clone().map(|r| r.0),
        filter: dump
            .ext
            .as_ref()
            .map_or_else(evtx_core::Filter::default, |e| e.filter()),
        threads: cli.threads as usize,
        recover_records: cli.recover_records,
        mta: None,
        wevt_cache: None,
        provenance: None,
    }
}

/// Reads `--wevt-cache` and `--mta` into `opts`: after the output is created and before
/// anything is written, as the reference does.
/// Either fails with the exit status after printing the one error line.
fn load_side_files(cli: &DumpOptions, opts: &mut Options) -> Result<(), ExitCode> {
    if let Some(path) = &cli.wevt_cache {
        match evtx_core::wevt_cache::WevtCache::load(path) {
            Ok(cache) => opts.wevt_cache = Some(std::sync::Arc::new(cache)),
            Err(e) => match e.reader_error() {
                Some(damage) => return Err(side_file_error(path, &damage)),
                None => return Err(fatal(e)),
            },
        }
    }
    if let Some(path) = &cli.mta {
        match load_mta(path) {
            Ok(Ok(mta)) => opts.mta = Some(std::sync::Arc::new(mta)),
            Ok(Err(e)) => return Err(side_file_error(path, &e.reader_error())),
            Err(e) => return Err(fatal(e)),
        }
    }
    Ok(())
}

/// Writes chunk results: record text to the output, one line per error to stderr (evtx-zig's
/// `Sink`). One for the run, whatever the number of inputs.
struct Sink {
    /// Chunk outputs (usually 60–250 KiB) at least this buffer's size go straight to the
    /// descriptor in one write; smaller ones are gathered.
    out: io::BufWriter<Box<dyn Write>>,
    /// The input being converted, as named.
    input: String,
    stop_after_one_error: bool,
    /// `--provenance`.
    provenance: bool,
    /// Whether each input draws a progress bar.
    progress_wanted: bool,
    progress: Option<Progress>,
    verbose: Verbose,
    broken_pipe: bool,
    write_error: Option<io::Error>,
    stopped: bool,
}

impl Sink {
    fn new(cli: &DumpOptions, writer: Box<dyn Write>, progress: bool, provenance: bool) -> Sink {
        Sink {
            out: io::BufWriter::with_capacity(64 << 10, writer),
            input: String::new(),
            stop_after_one_error: cli.stop_after_one_error,
            provenance,
            progress_wanted: progress,
            progress: None,
            verbose: Verbose::new(cli.verbose),
            broken_pipe: false,
            write_error: None,
            stopped: false,
        }
    }

    /// Converts the opened log `file`, named `path`, into the output: its header's checksum
    /// warning, its records and error lines, its progress bar and `-v` lines. `last`: no log
    /// follows, so the dump's memory is left to the exit (PERF.md H164).
    fn convert(&mut self, path: &str, file: &Input, opts: &mut Options, last: bool) {
        if let Some(w) = file.checksum_warning() {
            eprintln!("{w}");
        }
        if self.provenance {
            opts.provenance = Some(std::sync::Arc::new(Provenance::new(path)));
        }
        self.input = path.to_string();
        let total = usize::try_from(file.len()).unwrap_or(usize::MAX);
        self.progress = self.progress_wanted.then(|| Progress::new(total));
        self.verbose.start();
        let sink = |chunk: &ChunkResult| self.consume(chunk);
        if last {
            dump_before_exit(file, opts, sink);
        } else {
            evtx_core::dump(file, opts, sink);
        }
        if let Some(p) = &mut self.progress {
            p.finish();
        }
        self.verbose.finish(&self.input, file.len());
    }

    /// Writes one chunk's records and error lines; `Break` ends the run (a write failed, or
    /// `--stop-after-one-error` met a failure).
    fn consume(&mut self, chunk: &ChunkResult) -> ControlFlow<()> {
        let first_failure = if self.stop_after_one_error {
            chunk.first_failure().map(|(i, _)| i)
        } else {
            None
        };
        let end = first_failure.map_or(chunk.bytes.len(), |i| rendered_end(chunk, i));
        if let Err(e) = self.out.write_all(&chunk.bytes[..end]) {
            self.write_failed(e);
            return ControlFlow::Break(());
        }
        if chunk.failures() > 0 {
            // Without failures the entries are not read here: at `-t 2` most were written on
            // the worker's core (PERF.md H174).
            self.report_failures(chunk, first_failure.map_or(chunk.records.len(), |i| i + 1));
        }
        if let Some(p) = &mut self.progress {
            p.chunk_done(chunk);
        }
        self.verbose.chunk_done(&self.input, chunk);
        if first_failure.is_some() {
            self.stopped = true;
            return ControlFlow::Break(());
        }
        ControlFlow::Continue(())
    }

    /// One `error:` line on stderr for each failed record among the chunk's first `limit`.
    fn report_failures(&self, chunk: &ChunkResult, limit: usize) {
        let mut err = io::stderr().lock();
        for r in &chunk.records[..limit] {
            if let Outcome::Failed(f) = &r.outcome {
                let id = r.record_id.map_or("-".to_string(), |id| id.to_string());
                let _ = writeln!(
                    err,
                    "error: {}: chunk {}, record {id}, offset 0x{:x}: {f}",
                    self.input, r.chunk_slot, r.file_offset
                );
            }
        }
    }

    fn write_failed(&mut self, e: io::Error) {
        if e.kind() == io::ErrorKind::BrokenPipe {
            self.broken_pipe = true;
        } else {
            self.write_error = Some(e);
        }
    }

    /// Whether the run goes on to another input.
    fn going_on(&self) -> bool {
        !self.stopped && !self.broken_pipe && self.write_error.is_none()
    }

    /// Ends the run: the last flush, and the exit status (a closed pipe is success; `failed`,
    /// an input that could not be opened, is 1).
    fn finish(mut self, failed: bool) -> ExitCode {
        if !self.broken_pipe && self.write_error.is_none() {
            if let Err(e) = self.out.flush() {
                self.write_failed(e);
            }
        }
        if let Some(e) = self.write_error {
            return fatal(format!("failed to write output: {}", io_reason(&e)));
        }
        if self.stopped {
            return fatal("Stopped after error");
        }
        if failed {
            return ExitCode::from(1);
        }
        ExitCode::SUCCESS
    }
}

/// Where the text of the records before the chunk's record `failure` ends.
fn rendered_end(chunk: &ChunkResult, failure: usize) -> usize {
    chunk.records[..failure]
        .iter()
        .rev()
        .find_map(|r| match &r.outcome {
            Outcome::Rendered(range) => Some(range.end),
            Outcome::Failed(_) => None,
        })
        .unwrap_or(0)
}

/// Reads and parses `--mta FILE`: an unreadable file is the reference's text (outer `Err`),
/// damage is the parser's error (inner).
fn load_mta(
    path: &Path,
) -> Result<Result<evtx_core::mta::MtaFile, evtx_core::mta::MtaError>, String> {
    let bytes = fs::read(path).map_err(|e| {
        format!(
            "failed to read `{}`\n\nCaused by:\n    {}",
            path.display(),
            io_reason(&e)
        )
    })?;
    Ok(evtx_core::mta::MtaFile::parse(&bytes))
}

/// A damaged side file (`--mta`, `--wevt-cache`, an `extract-wevt-templates` input): one
/// line naming it and the offset (shared-fixtures/README.md, "Damaged side files"), exit 1.
#[cold]
pub(crate) fn side_file_error(
    path: &Path,
    damage: &evtx_core::reader_error::ReaderError,
) -> ExitCode {
    eprintln!("{}", damage.line(&path.to_string_lossy()));
    ExitCode::from(1)
}

/// Standard output as a plain file descriptor: `io::stdout()` is line-buffered, which would
/// scan and copy every chunk; we already hand it whole chunks.
fn stdout_writer() -> Box<dyn Write> {
    match platform::stdout_file() {
        Some(file) => Box::new(file),
        None => Box::new(io::stdout().lock()),
    }
}

/// Whether `input` names standard input.
fn is_stdin(input: &str) -> bool {
    platform::is_stdin(input)
}

/// Opens the input read-only (the input is evidence: nothing here can write to it) as chunk
/// windows (`open_input.rs`: a regular file directly, standard input or a device spooled to an
/// unlinked temporary file in `$TMPDIR` first), or the reference's words for why it cannot be.
/// Refuses, before anything is opened for writing, an output path that is the input file (same
/// device and inode: through a symlink or a hard link too).
fn open_input(input: &str, output: Option<&Path>) -> Result<Input, String> {
    if is_stdin(input) {
        open_input::open_stdin(output, input)
    } else {
        open_input::open_path(input, output)
    }
}

/// Opens `-f PATH` per 11.1: parent directories created, directories refused, an existing file
/// overwritten only after confirmation on a terminal (or with `--no-confirm-overwrite`).
fn open_output(path: &Path, no_confirm: bool) -> Result<fs::File, String> {
    // The reference's words (and evtx-zig's): one message, then the cause.
    let failed = |cause: &str| {
        format!(
            "An error occurred while creating output file at `{}`\n\nCaused by:\n    {cause}",
            path.display()
        )
    };
    if path.is_dir() {
        return Err(failed("Path is a directory"));
    }
    if path.exists() && !no_confirm {
        if !io::stdin().is_terminal() {
            return Err(failed("Failed to display confirmation prompt"));
        }
        eprint!(
            "Are you sure you want to override output file at `{}`? [y/N] ",
            path.display()
        );
        let mut answer = String::new();
        let _ = io::stdin().read_line(&mut answer);
        if !answer.starts_with(['y', 'Y']) {
            return Err("Cancelled".to_string());
        }
    }
    if let Some(parent) = path.parent().filter(|p| !p.as_os_str().is_empty()) {
        fs::create_dir_all(parent).map_err(|e| failed(&io_reason(&e)))?;
    }
    fs::File::create(path).map_err(|e| failed(&io_reason(&e)))
}

/// Records and errors of one chunk, as the progress bar and `-v` count them.
fn chunk_counts(chunk: &ChunkResult) -> (u64, u64) {
    let failed = chunk.failures() as u64;
    (chunk.records.len() as u64 - failed, failed)
}

/// `-v`: one summary line per file at the end; `-vv` (and `-vvv`): also one line per chunk.
/// Same words as evtx-zig (README, "Verbosity").
struct Verbose {
    level: u8,
    start: Instant,
    chunks: u64,
    records: u64,
    errors: u64,
}

impl Verbose {
    fn new(level: u8) -> Verbose {
        Verbose {
            level,
            start: Instant::now(),
            chunks: 0,
            records: 0,
            errors: 0,
        }
    }

    /// A file's counts start again.
    fn start(&mut self) {
        *self = Verbose::new(self.level);
    }

    fn chunk_done(&mut self, input: &str, chunk: &ChunkResult) {
        if self.level == 0 {
            return;
        }
        let (records, errors) = chunk_counts(chunk);
        self.chunks += 1;
        self.records += records;
        self.errors += errors;
        if self.level >= 2 {
            eprintln!(
                "debug: {input}: chunk {}: {records} records, {errors} errors",
                chunk.slot
            );
        }
    }

    fn finish(&self, input: &str, bytes: u64) {
        if self.level == 0 {
            return;
        }
        eprintln!(
            "info: {input}: {} bytes, {} chunks, {} records, {} errors in {} ms",
            bytes,
            self.chunks,
            self.records,
            self.errors,
            self.start.elapsed().as_millis()
        );
    }
}

/// The progress bar (README, "Progress"): on stderr, only when it is a terminal and the output
/// goes to a file (`-f`); redrawn at most every 100 ms and once at the end. Same design as
/// evtx-zig: `[###   ]  42% 12345 records, 85.3 MB/s, ETA 3s`.
struct Progress {
    start: Instant,
    last: Instant,
    total_bytes: usize,
    done_bytes: usize,
    records: u64,
}

impl Progress {
    fn new(total_bytes: usize) -> Progress {
        let now = Instant::now();
        Progress {
            start: now,
            last: now,
            total_bytes: total_bytes.max(1),
            done_bytes: 4096,
            records: 0,
        }
    }

    fn chunk_done(&mut self, chunk: &ChunkResult) {
        self.done_bytes += 65536;
        self.records += chunk_counts(chunk).0;
        if self.last.elapsed() >= Duration::from_millis(100) {
            self.last = Instant::now();
            self.draw();
        }
    }

    fn draw(&self) {
        const WIDTH: usize = 30;
        let secs = self.start.elapsed().as_secs_f64().max(1e-6);
        let done = self.done_bytes.min(self.total_bytes);
        let percent = done * 100 / self.total_bytes;
        let filled = done * WIDTH / self.total_bytes;
        let mbps = done as f64 / secs / 1e6;
        let eta = (self.total_bytes - done) as f64 / (done as f64 / secs);
        eprint!(
            "\r[{}{}] {percent:>3}% {} records, {mbps:.1} MB/s, ETA {}s ",
            "#".repeat(filled),
            " ".repeat(WIDTH - filled),
            self.records,
            eta.ceil() as u64
        );
    }

    fn finish(&mut self) {
        self.done_bytes = self.total_bytes;
        self.draw();
        eprintln!();
    }
}
