//! The CLI paths parity does not cover, for the reference and both CLIs, driven by a table:
//! standard input (`-`), `-f` (a new file, an existing one without a terminal: the overwrite
//! prompt cannot be shown and the run fails, `--no-confirm-overwrite`), `--events`,
//! `--dont-show-record-number`, `--stop-after-one-error`, `-t 0` and `-t 3`; then every command
//! with stdout and stderr on one log file that other commands share (`shared_log.rs`).
//!
//! Per case: each engine's exit status, stdout and output file equal the reference's; the two
//! engines' stderr is the same line for line (error lines in full); every `error:` line of
//! theirs has the exact form `error: PATH: chunk C, record R, offset 0xO: KIND[: detail]`
//! (`cli_output.rs`), PATH being the input as given (`-` for standard input).

use crate::parity::cli_output::{first_stderr_difference, parse_error_lines};
use crate::parity::shared_log;
use crate::run::{run_with_stdin, Backends, Output};
use std::path::{Path, PathBuf};
use std::time::Duration;

const TIME_LIMIT: Duration = Duration::from_secs(60);

/// One row of the table. In `args`, `{in}` is the input's path and `{out}` the output file's.
pub struct Case {
    pub name: &'static str,
    /// Under the fixtures directory.
    pub input: &'static str,
    pub args: &'static [&'static str],
    /// Feed the input on standard input (the args then name `-`).
    pub stdin: bool,
    /// `{out}` exists before the run, holding `OLD`.
    pub existing_out: bool,
}

const OLD: &[u8] = b"an older file\n";

const fn case(
    name: &'static str,
    input: &'static str,
    args: &'static [&'static str],
    stdin: bool,
    existing_out: bool,
) -> Case {
    Case {
        name,
        input,
        args,
        stdin,
        existing_out,
    }
}

const BASIC: &str = "synthetic/basic.evtx";
const BAD: &str = "damaged/bad-records.evtx";
const CHUNKS: &str = "damaged/bad-chunks.evtx";

pub const CASES: &[Case] = &[
    case(
        "stdin jsonl",
        BASIC,
        &["-t", "1", "-o", "jsonl", "-"],
        true,
        false,
    ),
    case(
        "stdin xml, failed records",
        BAD,
        &["-t", "1", "-o", "xml", "-"],
        true,
        false,
    ),
    case(
        "-f new file",
        BASIC,
        &["-t", "1", "-o", "jsonl", "-f", "{out}", "{in}"],
        false,
        false,
    ),
    case(
        "-f existing file, no terminal for the prompt",
        BASIC,
        &["-t", "1", "-o", "jsonl", "-f", "{out}", "{in}"],
        false,
        true,
    ),
    case(
        "-f existing file --no-confirm-overwrite",
        BAD,
        &[
            "-t",
            "1",
            "-o",
            "xml",
            "-f",
            "{out}",
            "--no-confirm-overwrite",
            "{in}",
        ],
        false,
        true,
    ),
    case(
        "--events jsonl",
        BASIC,
        &["-t", "1", "-o", "jsonl", "--events", "2-4,7", "{in}"],
        false,
        false,
    ),
    case(
        "--events xml, failed records",
        BAD,
        &["-t", "1", "-o", "xml", "--events", "1,3-5", "{in}"],
        false,
        false,
    ),
    case(
        "--dont-show-record-number xml",
        BASIC,
        &["-t", "1", "-o", "xml", "--dont-show-record-number", "{in}"],
        false,
        false,
    ),
    case(
        "--dont-show-record-number json",
        BAD,
        &["-t", "1", "-o", "json", "--dont-show-record-number", "{in}"],
        false,
        false,
    ),
    case(
        "--stop-after-one-error jsonl",
        BAD,
        &["-t", "1", "-o", "jsonl", "--stop-after-one-error", "{in}"],
        false,
        false,
    ),
    case(
        "--stop-after-one-error xml, bad chunks",
        CHUNKS,
        &["-t", "1", "-o", "xml", "--stop-after-one-error", "{in}"],
        false,
        false,
    ),
    case(
        "-t 0 jsonl",
        CHUNKS,
        &["-t", "0", "-o", "jsonl", "{in}"],
        false,
        false,
    ),
    case(
        "-t 3 xml",
        CHUNKS,
        &["-t", "3", "-o", "xml", "{in}"],
        false,
        false,
    ),
    case(
        "-t 3 jsonl, failed records",
        BAD,
        &["-t", "3", "-o", "jsonl", "{in}"],
        false,
        false,
    ),
];

/// What one CLI did in one case.
struct Outcome {
    output: Output,
    /// The output file after the run (`None`: it does not exist).
    file: Option<Vec<u8>>,
}

fn run_case(program: &Path, case: &Case, input: &Path, dir: &Path) -> Result<Outcome, String> {
    let out = dir.join("out.txt");
    let _ = std::fs::remove_file(&out);
    if case.existing_out {
        std::fs::write(&out, OLD).map_err(|e| format!("{}: {e}", out.display()))?;
    }
    let (input_text, out_text) = (input.to_string_lossy(), out.to_string_lossy());
    let args: Vec<&str> = case
        .args
        .iter()
        .map(|a| match *a {
            "{in}" => &*input_text,
            "{out}" => &*out_text,
            other => other,
        })
        .collect();
    let stdin = case.stdin.then_some(input);
    let output = run_with_stdin(program, &args, TIME_LIMIT, stdin)
        .map_err(|e| format!("cannot run {}: {e}", program.display()))?;
    Ok(Outcome {
        output,
        file: std::fs::read(&out).ok(),
    })
}

/// The differences of one case; empty when it passes.
fn check_case(backends: &Backends, fixtures: &Path, case: &Case, dir: &Path) -> Vec<String> {
    let input = fixtures.join(case.input);
    let mut problems = Vec::new();
    let mut run = |program: &Path| match run_case(program, case, &input, dir) {
        Ok(outcome) => Some(outcome),
        Err(e) => {
            problems.push(e);
            None
        }
    };
    let (Some(reference), Some(rust), Some(zig)) = (
        run(&backends.reference),
        run(&backends.rust),
        run(&backends.zig),
    ) else {
        return problems;
    };
    for (name, engine) in [("evtx-rs", &rust), ("evtx-zig", &zig)] {
        let (want, got) = (
            reference.output.describe_status(),
            engine.output.describe_status(),
        );
        if want != got {
            problems.push(format!("{name}: {got}, the reference {want}"));
        }
        if engine.output.stdout != reference.output.stdout {
            problems.push(format!(
                "{name}: stdout differs from the reference's ({} bytes, reference {})",
                engine.output.stdout.len(),
                reference.output.stdout.len()
            ));
        }
        if engine.file != reference.file {
            let describe = |f: &Option<Vec<u8>>| match f {
                None => "no output file".to_string(),
                Some(b) if b == OLD => "the older file untouched".to_string(),
                Some(b) => format!("an output file of {} bytes", b.len()),
            };
            problems.push(format!(
                "{name}: {}, the reference {}",
                describe(&engine.file),
                describe(&reference.file)
            ));
        }
        let path = if case.stdin {
            "-".to_string()
        } else {
            input.to_string_lossy().into_owned()
        };
        let stderr = String::from_utf8_lossy(&engine.output.stderr);
        for line in parse_error_lines(&stderr, &path) {
            if let Err(raw) = line {
                problems.push(format!("{name}: {raw}"));
            }
        }
    }
    let path = if case.stdin {
        "-".to_string()
    } else {
        input.to_string_lossy().into_owned()
    };
    let (left, right) = (
        String::from_utf8_lossy(&rust.output.stderr),
        String::from_utf8_lossy(&zig.output.stderr),
    );
    if let Some((line, x, y)) = first_stderr_difference(&left, &right, &path) {
        problems.push(format!(
            "stderr line {line} differs between evtx-rs and evtx-zig: {x:?} against {y:?}"
        ));
    }
    problems
}

/// Runs every case; prints one line per case and a summary. True when all pass.
pub fn run_cli_paths(backends: &Backends, fixtures: &Path, work: &Path) -> Result<bool, String> {
    std::fs::create_dir_all(work).map_err(|e| format!("{}: {e}", work.display()))?;
    let mut failed = 0;
    for case in CASES {
        if !fixtures.join(case.input).is_file() {
            return Err(format!(
                "no fixture {}",
                fixtures.join(case.input).display()
            ));
        }
        let problems = check_case(backends, fixtures, case, work);
        if problems.is_empty() {
            eprintln!("ok   {}", case.name);
        } else {
            failed += 1;
            eprintln!("FAIL {}", case.name);
            for p in &problems {
                eprintln!("     {p}");
            }
        }
    }
    let log_failed = shared_log::run_shared_log(backends, fixtures, work)?;
    let commands = shared_log::COMMANDS.len();
    println!(
        "cli-paths: {} cases and {commands} commands on a shared log × 3 CLIs compared: {} \
         passed, {} failed",
        CASES.len(),
        CASES.len() + commands - failed - log_failed,
        failed + log_failed
    );
    Ok(failed + log_failed == 0 && !CASES.is_empty())
}

/// The work directory for a run: `out` itself.
pub fn work_dir(out: &Path) -> PathBuf {
    out.to_path_buf()
}
