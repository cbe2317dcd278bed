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
use evtx_core::triage::{self, Report, Totals};
use std::ffi::OsString;
use std::io::{self, Write};
use std::process::ExitCode;

/// The page of `triage --help` (the same text in both CLIs, one file).
pub const HELP: &str = include_str!("../../../include/help_triage.txt");

/// What the command line asks of `triage`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Args {
    pub json: bool,
    pub top: usize,
    pub silence: u64,
    pub inputs: Vec<String>,
}

/// What reading the arguments gave.
#[derive(Debug, PartialEq, Eq)]
pub enum Parsed {
    Run(Args),
    Help,
    /// A usage error's text (after `error: `).
    Usage(String),
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

/// Reads the arguments after `triage`.
pub fn parse(args: &[OsString]) -> Parsed {
    if asks_help(args) {
        return Parsed::Help;
    }
    let mut out = Args {
        json: false,
        top: triage::TOP_DEFAULT,
        silence: triage::SILENCE_DEFAULT,
        inputs: Vec::new(),
    };
    let mut seen = [false; 3];
    let mut once = |k: usize, name: &str| {
        if std::mem::replace(&mut seen[k], true) {
            Err(format!(
                "the argument '{name}' cannot be used multiple times"
            ))
        } else {
            Ok(())
        }
    };
    let mut rest = args.iter();
    let mut escaped = false;
    while let Some(arg) = rest.next() {
        let Some(arg) = arg.to_str() else {
            return Parsed::Usage("invalid UTF-8 was detected in one or more arguments".into());
        };
        if escaped || arg == "-" || !arg.starts_with('-') {
            out.inputs.push(arg.to_string());
            continue;
        }
        if arg == "--" {
            escaped = true;
            continue;
        }
        let (name, inline) = match arg.split_once('=') {
            Some((n, v)) if n.starts_with("--") => (n, Some(v)),
            _ => (arg, None),
        };
        let step = match name {
            "--json" => match inline {
                Some(v) => Err(format!(
                    "unexpected value '{v}' for '--json' found; no more were expected"
                )),
                None => once(0, "--json").map(|()| out.json = true),
            },
            "--top" => value(inline, &mut rest, "--top <N>", triage::TOP_MAX as u64)
                .and_then(|n| once(1, "--top <N>").map(|()| out.top = n as usize)),
            "--silence" => {
                let v = value(
                    inline,
                    &mut rest,
                    "--silence <SECONDS>",
                    triage::SILENCE_MAX,
                );
                v.and_then(|n| once(2, "--silence <SECONDS>").map(|()| out.silence = n))
            }
            _ => Err(format!("unexpected argument '{arg}' found")),
        };
        if let Err(why) = step {
            return Parsed::Usage(why);
        }
    }
    if out.inputs.is_empty() {
        return Parsed::Usage(
            "the following required arguments were not provided:\n  <INPUT>...".into(),
        );
    }
    Parsed::Run(out)
}

/// An option's number, 1..=`max`: inline (`--top=5`) or the next argument.
fn value<'a>(
    inline: Option<&str>,
    rest: &mut impl Iterator<Item = &'a OsString>,
    option: &str,
    max: u64,
) -> Result<u64, String> {
    let text = match inline {
        Some(v) => v.to_string(),
        None => match rest.next() {
            Some(v) => v.to_string_lossy().into_owned(),
            None => {
                return Err(format!(
                    "a value is required for '{option}' but none was supplied"
                ))
            }
        },
    };
    let digits = !text.is_empty() && text.bytes().all(|b| b.is_ascii_digit());
    match text.parse::<u64>() {
        Ok(n) if digits && (1..=max).contains(&n) => Ok(n),
        _ => Err(format!(
            "invalid value '{text}' for '{option}': expected a number from 1 to {max}"
        )),
    }
}

/// Runs `triage` on the arguments after it.
pub fn run(args: &[OsString]) -> ExitCode {
    let args = match parse(args) {
        Parsed::Run(args) => args,
        Parsed::Help => {
            print!("{HELP}");
            return ExitCode::SUCCESS;
        }
        Parsed::Usage(why) => crate::extensions::usage_error(&why),
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
            report.write_text(args.top, args.silence, &mut text);
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
