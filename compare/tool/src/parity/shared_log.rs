//! Every command of the three CLIs with stdout and stderr on one log file that other commands
//! write too, as `( echo BEFORE >&2; CLI ...; echo AFTER >&2 ) 2> log` makes it: the log is
//! created, `BEFORE` written through it, the CLI run with both streams on that same open file
//! (its offset shared), then `AFTER` written through it. The log must be `BEFORE`, all the
//! CLI wrote and `AFTER`, in that order: the CLI's stdout and stderr of a run on pipes, its stderr
//! lines in order between stdout's bytes (the run's own timings, `in N ms`, aside).
//!
//! What this catches: a writer that writes with `pwrite` at its own offset (Zig 0.15's
//! positional `File.Writer`), which overwrites `BEFORE` and is overwritten by `AFTER`.
//! `zig/cli/stdio.zig` says why every writer of evtx-zig streams.

use crate::run::Backends;
use crate::run::{run, run_on_log};
use std::io::Write;
use std::path::{Path, PathBuf};
use std::time::Duration;

const TIME_LIMIT: Duration = Duration::from_secs(60);
const BEFORE: &[u8] = b"BEFORE\n";
const AFTER: &[u8] = b"AFTER\n";

/// The commands: a name and the arguments, split on spaces. Placeholders: `@F` a well-formed
/// log, `@R` one with record errors, `@C` one with chunk errors, `@B` one with a bad file magic,
/// `@M` a path that does not exist, `@D` a directory, `@O` a fresh output path (named
/// `.wevtcache`, as `extract-wevt-templates` wants), `%` the fixtures' `wevt` directory.
pub const COMMANDS: &[(&str, &str)] = &[
    ("dump xml", "-t 1 @F"),
    ("dump json", "-t 1 -o json @F"),
    ("dump jsonl", "-t 1 -o jsonl @F"),
    ("dump -f, -v", "-t 1 -v -o xml -f @O @F"),
    ("dump -f jsonl, record errors", "-t 1 -o jsonl -f @O @R"),
    ("record errors", "-t 1 @R"),
    ("record errors -t 2", "-t 2 -o json @R"),
    ("chunk errors -vv", "-t 1 -vv @C"),
    ("stop after one error", "-t 1 --stop-after-one-error @R"),
    (
        "notes -vvvv",
        "-t 1 -vvvv -o jsonl --no-indent --dont-show-record-number @F",
    ),
    (
        "damaged --wevt-cache",
        "--wevt-cache %/damaged-count.wevtcache @F",
    ),
    ("info", "info -i @F"),
    ("info, record errors", "info -i @R"),
    (
        "extract-wevt-templates",
        "extract-wevt-templates -i %/providers64.dll -o @O",
    ),
    (
        "extract-wevt-templates, a damaged PE",
        "extract-wevt-templates -i %/damaged-mz.dll -i %/providers32.dll -o @O",
    ),
    (
        "dump-template-instances",
        "dump-template-instances -i %/instances.evtx",
    ),
    (
        "dump-template-instances, record errors",
        "dump-template-instances -i @R",
    ),
    (
        "apply-wevt-cache",
        "apply-wevt-cache --cache %/templates.wevtcache \
         --template-guid 5F2C2A43-AA86-2481-02F3-ECE817383695 --evtx %/events.evtx --record-id 1",
    ),
    (
        "apply-wevt-cache, damaged cache",
        "apply-wevt-cache --cache %/damaged-count.wevtcache --template-guid 1 --substitutions []",
    ),
    ("help", "help"),
    ("-h", "-h"),
    ("--help", "--help"),
    ("-V", "-V"),
    ("help of a subcommand", "extract-wevt-templates --help"),
    ("usage error", "--bogus @F"),
    ("subcommand usage error", "extract-wevt-templates --bogus"),
    ("fatal: no such input", "@M"),
    ("fatal: a directory as input", "@D"),
    ("fatal: bad file magic", "@B"),
    ("fatal: output is a directory", "-f @D @F"),
    ("fatal: no input", ""),
];

/// What one CLI wrote on pipes, and on the shared log.
struct Seen {
    piped: crate::run::Output,
    log: Vec<u8>,
    status: Option<std::process::ExitStatus>,
}

fn expand(template: &str, fixtures: &Path, output: &Path) -> Vec<String> {
    let files: [(&str, PathBuf); 7] = [
        ("@F", fixtures.join("synthetic/basic.evtx")),
        ("@R", fixtures.join("damaged/bad-records.evtx")),
        ("@C", fixtures.join("damaged/bad-chunks.evtx")),
        ("@B", fixtures.join("damaged/bad-file-magic.evtx")),
        ("@M", fixtures.join("no-such-file.evtx")),
        ("@D", fixtures.join("synthetic")),
        ("%", fixtures.join("wevt")),
    ];
    template
        .split(' ')
        .filter(|word| !word.is_empty())
        .map(|word| {
            let mut word = word.replace("@O", &output.to_string_lossy());
            for (placeholder, path) in &files {
                word = word.replace(placeholder, &path.to_string_lossy());
            }
            word
        })
        .collect()
}

/// Runs `program` on pipes, then on a log holding `BEFORE`, then writes `AFTER` to the log.
fn run_both(program: &Path, argv: &[&str], output: &Path, log: &Path) -> Result<Seen, String> {
    let io = |e: std::io::Error| format!("{}: {e}", log.display());
    let _ = std::fs::remove_file(output);
    let piped = run(program, argv, TIME_LIMIT)
        .map_err(|e| format!("cannot run {}: {e}", program.display()))?;
    let _ = std::fs::remove_file(output);
    let mut file = std::fs::File::create(log).map_err(io)?;
    file.write_all(BEFORE).map_err(io)?;
    let status = run_on_log(program, argv, TIME_LIMIT, &file)
        .map_err(|e| format!("cannot run {}: {e}", program.display()))?;
    // At the shared offset, where the CLI left it (a positional writer leaves it after
    // `BEFORE`).
    file.write_all(AFTER).map_err(io)?;
    drop(file);
    let log = std::fs::read(log).map_err(io)?;
    Ok(Seen { piped, log, status })
}

/// The problems of one CLI's run on the log; empty when it passes.
fn check(seen: &Seen) -> Vec<String> {
    let mut problems = Vec::new();
    let piped_status = seen.piped.describe_status();
    let status = crate::run::Output {
        stdout: Vec::new(),
        stderr: Vec::new(),
        status: seen.status,
    }
    .describe_status();
    if status != piped_status {
        problems.push(format!("{status} on the log, {piped_status} on pipes"));
    }
    let Some(middle) = seen
        .log
        .strip_prefix(BEFORE)
        .and_then(|rest| rest.strip_suffix(AFTER))
    else {
        let head = String::from_utf8_lossy(&seen.log[..seen.log.len().min(40)]).into_owned();
        let tail = String::from_utf8_lossy(&seen.log[seen.log.len().saturating_sub(40)..]);
        problems.push(format!(
            "the markers did not survive: the log starts {head:?} and ends {tail:?}"
        ));
        return problems;
    };
    if let Err(e) = interleaves(
        &without_timings(middle),
        &seen.piped.stdout,
        &without_timings(&seen.piped.stderr),
    ) {
        problems.push(e);
    }
    problems
}

/// Whether `log` is `stdout` with the lines of `stderr` put in, in order, between its bytes.
fn interleaves(log: &[u8], stdout: &[u8], stderr: &[u8]) -> Result<(), String> {
    let mut rest = log.to_vec();
    let mut from = 0;
    for line in stderr.split_inclusive(|&b| b == b'\n') {
        let Some(at) = find(&rest[from..], line) else {
            return Err(format!(
                "stderr line {:?} is not in the log",
                String::from_utf8_lossy(line)
            ));
        };
        from += at;
        rest.drain(from..from + line.len());
    }
    if rest != stdout {
        let same = rest.iter().zip(stdout).take_while(|(a, b)| a == b).count();
        return Err(format!(
            "the log without stderr is not stdout: {} bytes, stdout {}, the first difference at \
             byte {same}",
            rest.len(),
            stdout.len()
        ));
    }
    Ok(())
}

fn find(haystack: &[u8], needle: &[u8]) -> Option<usize> {
    if needle.is_empty() {
        return Some(0);
    }
    haystack.windows(needle.len()).position(|w| w == needle)
}

/// `text` with what differs from run to run taken out: each `-v` summary's time (` in N ms`)
/// becomes ` in T ms`, the clock time that starts each of the reference's log lines
/// (`21:44:53 [DEBUG] ...`) `T`.
fn without_timings(text: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(text.len());
    let mut i = 0;
    while i < text.len() {
        let line_start = i == 0 || text[i - 1] == b'\n';
        if line_start && is_clock(&text[i..]) {
            out.push(b'T');
            i += 8;
            continue;
        }
        if text[i..].starts_with(b" in ") {
            let digits = text[i + 4..]
                .iter()
                .take_while(|b| b.is_ascii_digit())
                .count();
            if digits > 0 && text[i + 4 + digits..].starts_with(b" ms") {
                out.extend_from_slice(b" in T ms");
                i += 4 + digits + 3;
                continue;
            }
        }
        out.push(text[i]);
        i += 1;
    }
    out
}

/// Whether `text` starts with a clock time and a log level (`21:44:53 [`).
fn is_clock(text: &[u8]) -> bool {
    let digit = |i: usize| text.get(i).is_some_and(u8::is_ascii_digit);
    text.len() >= 10
        && [0, 1, 3, 4, 6, 7].into_iter().all(digit)
        && text[2] == b':'
        && text[5] == b':'
        && text[8..10] == *b" ["
}

/// Runs every command in the three CLIs; prints one line per command. The number that failed.
pub fn run_shared_log(backends: &Backends, fixtures: &Path, work: &Path) -> Result<usize, String> {
    let output = work.join("shared-log.wevtcache");
    let log = work.join("shared.log");
    let programs = [
        ("reference", &backends.reference),
        ("evtx-rs", &backends.rust),
        ("evtx-zig", &backends.zig),
    ];
    let mut failed = 0;
    for (name, template) in COMMANDS {
        let argv = expand(template, fixtures, &output);
        let argv: Vec<&str> = argv.iter().map(String::as_str).collect();
        let mut problems = Vec::new();
        for (program_name, program) in programs {
            let seen = run_both(program, &argv, &output, &log)?;
            problems.extend(
                check(&seen)
                    .into_iter()
                    .map(|p| format!("{program_name}: {p}")),
            );
        }
        if problems.is_empty() {
            eprintln!("ok   shared log: {name}");
        } else {
            failed += 1;
            eprintln!("FAIL shared log: {name} (`{template}`)");
            for p in &problems {
                eprintln!("     {p}");
            }
        }
    }
    let _ = std::fs::remove_file(&output);
    Ok(failed)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn interleavings() {
        assert!(interleaves(b"ab1\ncd2\n", b"abcd", b"1\n2\n").is_ok());
        assert!(interleaves(b"abcd", b"abcd", b"").is_ok());
        // A stderr line out of order, missing, or stdout cut.
        assert!(interleaves(b"2\nab1\ncd", b"abcd", b"1\n2\n").is_err());
        assert!(interleaves(b"ab1\ncd", b"abcd", b"1\n2\n").is_err());
        assert!(interleaves(b"ab1\nc", b"abcd", b"1\n").is_err());
        // What the positional writer left: `wrote 4AFTER` (the marker check reports it first).
        assert!(interleaves(b"wrote 4", b"", b"wrote 4 blobs\n").is_err());
    }

    #[test]
    fn timings_are_taken_out() {
        let line = b"info: x: 1 bytes, 2 chunks, 3 records, 0 errors in 12 ms\n";
        assert_eq!(
            without_timings(line),
            b"info: x: 1 bytes, 2 chunks, 3 records, 0 errors in T ms\n".to_vec()
        );
        assert_eq!(without_timings(b"in 3 ms"), b"in 3 ms".to_vec());
        assert_eq!(without_timings(b" in x ms"), b" in x ms".to_vec());
        let log = b"21:44:53 [DEBUG] a\n21:44:54 [TRACE] b 10:00:00 [\n";
        assert_eq!(
            without_timings(log),
            b"T [DEBUG] a\nT [TRACE] b 10:00:00 [\n".to_vec()
        );
    }
}
