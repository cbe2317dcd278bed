//! `triage [--json] [--top N] [--silence SECONDS] INPUT...`: the arguments and the printing of
//! `evtx_core::triage` (the contract: `shared-fixtures/README.md`, "Triage"). evtx-zig's twin
//! is `zig/cli/triage.zig`, with the same words.
//!
//! An extension: it runs only where the reference refuses the line (`triage` followed by
//! arguments it cannot read as a dump of a file named `triage`), and for `triage -h` and
//! `triage --help`, which print `include/help_triage.txt` (a deliberate difference: the
//! reference prints its own help there). A lone `triage` opens a file of that name, as the
//! reference does.

use crate::inputs;
use clap::{CommandFactory, FromArgMatches, Parser};
use evtx_core::triage::{self, Report, Totals};
use std::ffi::OsString;
use std::io::{self, Write};
use std::process::ExitCode;

/// The page of `triage --help` (the same text in both CLIs, one file).
pub const HELP: &str = include_str!("../../../include/help_triage.txt");

/// What the command line asks of `triage`, read by clap (its usage errors are clap's words,
/// `Usage:` line and tips included, under the name `<program> triage`; evtx-zig writes the
/// same).
#[derive(Debug, Parser)]
#[command(name = "triage", disable_version_flag = true)]
#[group(skip)]
pub struct Args {
    #[arg(long)]
    pub json: bool,
    #[arg(long, value_name = "N", default_value_t = triage::TOP_DEFAULT as u64,
          value_parser = clap::value_parser!(u64).range(1..=triage::TOP_MAX as u64))]
    pub top: u64,
    #[arg(long, value_name = "SECONDS", default_value_t = triage::SILENCE_DEFAULT,
          value_parser = clap::value_parser!(u64).range(1..=triage::SILENCE_MAX))]
    pub silence: u64,
    #[arg(value_name = "INPUT", required = true)]
    pub inputs: Vec<String>,
}

/// Whether `argv` (the program's name first) is a triage line: `triage` and at least one more
/// argument, where the reference refuses the line (`refused`) or help is asked for.
pub fn is_triage(argv: &[OsString], refused: impl FnOnce() -> bool) -> bool {
    argv.len() > 2 && argv[1] == "triage" && (asks_help(&argv[2..]) || refused())
}

/// Whether `-h` or `--help` comes before `--`.
fn asks_help(args: &[OsString]) -> bool {
    args.iter()
        .take_while(|a| *a != "--")
        .any(|a| a == "-h" || a == "--help")
}

/// Reads `argv` (`<program> triage ...`): the arguments, or `None` for help; a usage error
/// ends the run (exit 2).
fn parse(argv: &[OsString]) -> Option<Args> {
    if asks_help(&argv[2..]) {
        return None;
    }
    let program = std::path::Path::new(&argv[0])
        .file_name()
        .map_or_else(String::new, |n| n.to_string_lossy().into_owned());
    let command = Args::command().bin_name(format!("{program} triage"));
    let matches = command
        .try_get_matches_from(&argv[1..])
        .unwrap_or_else(|e| e.exit());
    Some(Args::from_arg_matches(&matches).unwrap_or_else(|e| e.exit()))
}

/// Runs the triage line `argv` (`<program> triage ...`).
pub fn run(argv: &[OsString]) -> ExitCode {
    let Some(args) = parse(argv) else {
        print!("{HELP}");
        return ExitCode::SUCCESS;
    };
    let single =
        args.inputs.len() == 1 && !std::fs::metadata(&args.inputs[0]).is_ok_and(|m| m.is_dir());
    let items = inputs::expand(&args.inputs);
    let mut out = io::BufWriter::with_capacity(64 << 10, io::stdout().lock());
    let mut text = Vec::new();
    let mut totals = Totals::default();
    if args.json {
        triage::write_document_start(&mut text);
    }
    for (n, item) in items.iter().enumerate() {
        let report = read(item, args.silence);
        totals.add(&report);
        if args.json {
            if n > 0 {
                text.push(b',');
            }
            report.write_json(&mut text);
        } else if single {
            report.write_text(args.top as usize, args.silence, &mut text);
        } else {
            report.write_line(&mut text);
        }
        if write(&mut out, &mut text).is_err() {
            return ExitCode::SUCCESS;
        }
    }
    if args.json {
        triage::write_document_end(&totals, &mut text);
    } else if !single {
        totals.write_text(&mut text);
    }
    if write(&mut out, &mut text).is_err() || out.flush().is_err() {
        return ExitCode::SUCCESS;
    }
    if totals.unreadable > 0 {
        return ExitCode::from(1);
    }
    ExitCode::SUCCESS
}

/// Writes and empties `text`; a closed pipe ends the run quietly, as the dump's does.
fn write(out: &mut impl Write, text: &mut Vec<u8>) -> io::Result<()> {
    let written = out.write_all(text);
    text.clear();
    written
}

/// The report of one item: the log read, or its error (printed on stderr as the many-inputs
/// dump prints it).
fn read(item: &inputs::Item, silence: u64) -> Report {
    let (path, opened) = match item {
        inputs::Item::Log(path) => (path, crate::open_input(path, None)),
        inputs::Item::Unreadable(path, e) => (path, Err(e.clone())),
    };
    match opened {
        Ok(input) => triage::triage(path, &input, silence),
        Err(e) => {
            eprintln!("Error: {e}");
            Report::unreadable(path, &e)
        }
    }
}
