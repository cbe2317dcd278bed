//! `evtx-compare exit-table`: the command-line surface of the three CLIs, table-driven.
//!
//! Every case runs the reference `evtx_dump`, evtx-rs and evtx-zig with the same arguments
//! (stdin closed) and compares what a script sees: the exit status, and whether anything was
//! written to stdout; on a usage error (the reference exits 2), also stderr byte for byte: clap's
//! message, tip and `Usage:` line, the reference then run through a symlink named as the engine
//! (clap's `Usage:` line names the program as invoked). A help text (the reference's stdout has a
//! `Usage:` line: `-h`, `--help`, `help [COMMAND]`, a subcommand's `-h`/`--help`) is compared
//! byte for byte with the reference's, run the same way, so only the program's name may differ;
//! the harness holds no copy of it. The version line is ours (README), the same in both engines
//! but for their names. A case fails when either engine differs from the reference.
//!
//! Placeholders in the arguments: `@F` a well-formed fixture, `@R` one with record errors,
//! `@B` one with a bad file magic, `@S` one shorter than its header, `@D` a directory, `@M` a
//! path that does not exist, `@O` a fresh output path (per program and case), `@U` a log whose
//! path is not UTF-8.
//!
//! Then the input forms (`input_forms.rs`): the dump's INPUT as a directory, a FIFO, an
//! unreadable file, a symlink loop, a path not UTF-8, an empty or short file and `/dev/null`,
//! stdout and stderr compared with the reference's byte for byte.

use crate::parity::input_forms;
use crate::run::{run, Backends};
use std::ffi::{OsStr, OsString};
use std::path::{Path, PathBuf};
use std::time::Duration;

/// The cases: a name and the arguments, split on spaces (an argument of `''` is empty).
const CASES: &[(&str, &str)] = &[
    ("no arguments", ""),
    ("short help", "-h"),
    ("long help", "--help"),
    ("short version", "-V"),
    ("long version", "--version"),
    ("plain dump", "@F"),
    ("verbose", "-v @F"),
    ("verbose twice", "-vv @F"),
    ("verbose three times", "-vvv @F"),
    ("verbose four times", "-vvvv @F"),
    ("verbose repeated flags", "-v -v @F"),
    ("verbose in a cluster with -t", "-vt 1 @F"),
    ("events reversed range", "--events 5-3 @F"),
    ("events list", "--events 1-3,5 @F"),
    ("events open range", "--events 1- @F"),
    ("events leading dash", "--events -2 @F"),
    ("events not a number", "--events x @F"),
    ("events with a plus", "--events +1 @F"),
    ("events with an underscore", "--events 1_0 @F"),
    ("events empty", "--events '' @F"),
    ("events repeated", "--events 1 --events 2 @F"),
    ("format repeated", "-o json -o xml @F"),
    ("format unknown", "-o yaml @F"),
    ("format missing value", "@F -o"),
    ("format empty", "-o '' @F"),
    ("format long with =", "--format=json @F"),
    ("format short attached", "-ojson @F"),
    ("format short with =", "-o=jsonl @F"),
    ("threads 0", "-t 0 @F"),
    ("threads 1", "-t 1 @F"),
    ("threads 2", "-t 2 @F"),
    ("threads 64", "-t 64 @F"),
    ("threads 40000", "-t 40000 @F"),
    ("threads 100000", "-t 100000 @F"),
    ("threads u32 max", "-t 4294967295 @F"),
    ("threads past u32", "-t 4294967296 @F"),
    ("threads negative", "-t -1 @F"),
    ("threads not a number", "-t x @F"),
    ("threads with underscore", "-t 1_0 @F"),
    ("threads with =", "-t=2 @F"),
    ("threads with a plus", "-t+2 @F"),
    ("threads repeated", "-t 1 -t 2 @F"),
    ("flag repeated", "--no-indent --no-indent @F"),
    ("flag with a value", "--no-indent=1 @F"),
    ("unknown long flag", "--bogus @F"),
    ("unknown short flag", "-x @F"),
    ("extra positional", "@F extra"),
    ("two inputs", "@F @F"),
    ("end of options", "-- @F"),
    ("nonexistent input", "@M"),
    ("directory as input", "@D"),
    ("bad file magic", "@B"),
    ("file shorter than its header", "@S"),
    ("empty stdin", "-"),
    ("record errors", "@R"),
    ("stop after one error", "--stop-after-one-error @R"),
    ("validate checksums", "--validate-checksums @R"),
    ("recover records", "--recover-records @F"),
    (
        "separate attributes",
        "-o json --separate-json-attributes @F",
    ),
    ("jsonl with no-indent", "-o jsonl --no-indent @F"),
    ("no record numbers", "--dont-show-record-number @F"),
    ("ansi codec", "--ansi-codec windows-1251 @F"),
    ("ansi codec unknown", "--ansi-codec bogus @F"),
    (
        "ansi codec not ASCII-compatible",
        "--ansi-codec utf-16le @F",
    ),
    ("output file", "-f @O @F"),
    ("output file, no confirm", "-f @O --no-confirm-overwrite @F"),
    ("output missing value", "@F -f"),
    ("output directory", "-f @D @F"),
    ("info short", "info -i @F"),
    ("info long", "info --input @F"),
    ("info long with =", "info --input=@F"),
    ("info damaged", "info -i @R"),
    ("info without input", "info"),
    ("info nonexistent", "info -i @M"),
    ("info directory", "info -i @D"),
    ("info bad magic", "info -i @B"),
    ("info short file", "info -i @S"),
    ("info input repeated", "info -i @F -i @F"),
    ("info extra positional", "info -i @F extra"),
    ("info help", "info -h"),
    ("info version", "info -V"),
    ("info with a dump option after", "info -i @F -o json"),
    ("dump option before info", "-o json info -i @F"),
    ("input then info", "@F info -i @F"),
    ("help subcommand", "help"),
    ("help info", "help info"),
    ("help unknown", "help bogus"),
    ("help info then more", "help info bogus"),
    ("help of help", "help help"),
    ("help of help then more", "help help bogus"),
    ("help extract", "help extract-wevt-templates"),
    ("help dump instances", "help dump-template-instances"),
    ("help apply cache", "help apply-wevt-cache"),
    ("help apply cache then more", "help apply-wevt-cache bogus"),
    ("help then -h", "help -h"),
    ("input then help", "@F help"),
    ("short help in a cluster", "-vh --bogus"),
    ("long help after input", "@F --help -h"),
    ("long help with a value", "--help=1"),
    ("long version with a value", "--version=1"),
    ("info long help", "info --help"),
    ("info short help in a cluster", "info -hi"),
    ("info long help with a value", "info --help=1"),
    ("extract short help", "extract-wevt-templates -h"),
    ("extract long help", "extract-wevt-templates --help"),
    ("extract version", "extract-wevt-templates -V"),
    ("dump instances short help", "dump-template-instances -h"),
    ("dump instances long help", "dump-template-instances --help"),
    (
        "dump instances unknown long first",
        "dump-template-instances --version",
    ),
    ("apply cache short help", "apply-wevt-cache -h"),
    ("apply cache long help", "apply-wevt-cache --help"),
    (
        "apply cache long help with a value",
        "apply-wevt-cache --help=1",
    ),
    ("threads missing value", "-t"),
    ("threads empty", "-t '' @F"),
    ("threads past i64", "-t 9223372036854775808 @F"),
    ("threads negative with =", "-t=-1 @F"),
    ("threads then an option", "-t -f @F"),
    ("threads then an unknown option", "-t --bogus @F"),
    ("format near a value", "-o jsn @F"),
    ("format upper case", "-o JSON @F"),
    ("events missing value", "--events"),
    ("ansi codec missing value", "--ansi-codec"),
    ("ansi codec empty", "--ansi-codec '' @F"),
    ("ansi codec iso-2022-jp", "--ansi-codec iso-2022-jp @F"),
    ("output repeated", "-f @O -f @O @F"),
    ("unknown long near an option", "--no-inden @F"),
    ("unknown long after options", "-t 1 -vv --no-inden @F"),
    ("unknown long after input", "@F --bogus"),
    ("unknown long with a value", "--bogus=1 @F"),
    ("unknown long near help", "--hel @F"),
    ("unknown long naming info's option", "--inpu @F info"),
    ("unknown short in a cluster", "-vx @F"),
    ("second positional near info", "@F inf"),
    ("second positional near help", "@F hel"),
    ("three inputs", "@F @F @F"),
    ("info unknown long", "info --bogus"),
    ("info unknown long near input", "info --inpu @F"),
    ("info unknown short", "info -x"),
    ("info input then unknown short", "info -i -x"),
    ("info input missing value after input", "info -i @F -i"),
    // A value that is not UTF-8: clap refuses every `String` value (exit 2), `--mta` (a
    // `PathBuf`) is read.
    ("input not UTF-8 after an option", "-o json @U"),
    ("input not UTF-8 before an option", "@U -o json"),
    ("input not UTF-8 after --", "-- @U"),
    ("input not UTF-8 before -h", "@U -h"),
    ("output not UTF-8", "-f @U @F"),
    ("wevt cache not UTF-8", "--wevt-cache @U @F"),
    ("events not UTF-8", "--events @U @F"),
    ("mta not UTF-8", "--mta @U @F"),
    ("info input not UTF-8", "info -i @U"),
    (
        "dump instances input not UTF-8",
        "dump-template-instances -i @U",
    ),
    (
        "apply cache evtx not UTF-8",
        "apply-wevt-cache --cache @F --template-guid 1 --evtx @U --record-id 1",
    ),
    (
        "extract input not UTF-8",
        "extract-wevt-templates -i @U -o @O.wevtcache",
    ),
];

/// Usage errors whose stderr is not compared, and why: the reference's words name a part of it
/// the CLIs do not have yet (the README says which).
const STDERR_NOT_COMPARED: &[(&str, &str)] = &[(
    "extra positional",
    "the reference suggests its `extract-wevt-templates` subcommand (template subcommands: own \
        issue)",
)];

/// One program's outcome on one case.
#[derive(Clone, PartialEq, Eq)]
struct Seen {
    status: String,
    stdout_empty: bool,
    /// A usage error whose stderr is not the reference's, byte for byte.
    stderr_differs: bool,
    /// A help text unlike the reference's (the program's name aside), or a version line unlike
    /// the other engine's.
    help_differs: bool,
}

impl std::fmt::Display for Seen {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let out = if self.stdout_empty {
            "no stdout"
        } else {
            "stdout"
        };
        let stderr = if self.stderr_differs {
            ", other stderr"
        } else {
            ""
        };
        let help = if self.help_differs {
            ", other help"
        } else {
            ""
        };
        write!(f, "{}, {out}{stderr}{help}", self.status)
    }
}

/// A symlink to `reference` named as each of `engines` (in `out/aliases/<n>/`), so that clap
/// prints the engine's name in its `Usage:` lines.
fn alias_reference(
    reference: &Path,
    engines: &[&PathBuf],
    out: &Path,
) -> Result<Vec<PathBuf>, String> {
    let target =
        std::fs::canonicalize(reference).map_err(|e| format!("{}: {e}", reference.display()))?;
    let mut aliases = Vec::new();
    for (n, engine) in engines.iter().enumerate() {
        let name = engine
            .file_name()
            .ok_or_else(|| format!("{}: no file name", engine.display()))?;
        let dir = out.join("aliases").join(n.to_string());
        std::fs::create_dir_all(&dir).map_err(|e| format!("{}: {e}", dir.display()))?;
        let alias = dir.join(name);
        let _ = std::fs::remove_file(&alias);
        std::os::unix::fs::symlink(&target, &alias)
            .map_err(|e| format!("{}: {e}", alias.display()))?;
        aliases.push(alias);
    }
    Ok(aliases)
}

/// What the table found: every case, how many were identical in all three CLIs, and the table
/// (Markdown, headed `## Exit statuses and usage errors`).
#[derive(serde::Serialize)]
pub struct ExitTableReport {
    pub cases: usize,
    pub identical: usize,
    pub markdown: String,
}

impl ExitTableReport {
    pub fn failed(&self) -> usize {
        self.cases - self.identical
    }
}

/// `evtx-compare exit-table`: runs the table, writes exit-table.md, prints the summary;
/// `Ok(false)` when a case differs.
pub fn exit_table_command(
    backends: &Backends,
    fixtures: &Path,
    out: &Path,
) -> Result<bool, String> {
    let report = run_exit_table(backends, fixtures, out)?;
    let path = out.join("exit-table.md");
    std::fs::write(&path, &report.markdown).map_err(|e| format!("{}: {e}", path.display()))?;
    println!(
        "exit-table: {} cases, {} identical, {} differ (table in {})",
        report.cases,
        report.identical,
        report.failed(),
        path.display()
    );
    Ok(report.failed() == 0 && report.cases > 0)
}

/// Runs every case in the three CLIs (the `@O` outputs go below `out`).
pub fn run_exit_table(
    backends: &Backends,
    fixtures: &Path,
    out: &Path,
) -> Result<ExitTableReport, String> {
    std::fs::create_dir_all(out).map_err(|e| e.to_string())?;
    let files = [
        ("@F", fixtures.join("synthetic/basic.evtx")),
        ("@R", fixtures.join("damaged/bad-records.evtx")),
        ("@B", fixtures.join("damaged/bad-file-magic.evtx")),
        ("@S", fixtures.join("damaged/short-file.evtx")),
        ("@D", fixtures.join("synthetic")),
        ("@M", fixtures.join("no-such-file.evtx")),
    ];
    let not_utf8 = not_utf8_log(&files[0].1, out)?;
    let programs = [
        ("reference", &backends.reference),
        ("evtx-rs", &backends.rust),
        ("evtx-zig", &backends.zig),
    ];
    let mut md = String::from(
        "## Exit statuses and usage errors\n\n| case | arguments | reference | evtx-rs | evtx-zig \
            | |\n|---|---|---|---|---|---|\n",
    );
    // The reference under each engine's file name, for clap's `Usage:` line.
    let aliases = alias_reference(&backends.reference, &[&backends.rust, &backends.zig], out)?;
    let mut failed = 0;
    for (index, (name, template)) in CASES.iter().enumerate() {
        let mut seen = Vec::new();
        let mut stderrs = Vec::new();
        let mut stdouts = Vec::new();
        for (program_name, program) in programs {
            let output = out.join(format!("case-{index}-{program_name}.out"));
            let _ = std::fs::remove_file(&output);
            let argv = expand(template, &files, &output, &not_utf8);
            let result = run(program, &argv, Duration::from_secs(60))
                .map_err(|e| format!("could not run {}: {e}", program.display()))?;
            seen.push(Seen {
                status: result.describe_status(),
                stdout_empty: result.stdout.is_empty(),
                stderr_differs: false,
                help_differs: false,
            });
            stderrs.push(result.stderr);
            stdouts.push(result.stdout);
        }
        let help_text = is_help(&stdouts[0]);
        if is_version(&stdouts[0]) {
            let differ = versions_differ(&programs, &stdouts);
            seen[1].help_differs = differ;
            seen[2].help_differs = differ;
        }
        let pending = STDERR_NOT_COMPARED.iter().find(|(case, _)| case == name);
        let usage_error = seen[0].status == "exit 2" && pending.is_none();
        if usage_error || help_text {
            for (engine, alias) in aliases.iter().enumerate() {
                // The engine's own `@O` path: the message may name it.
                let output = out.join(format!("case-{index}-{}.out", programs[engine + 1].0));
                let _ = std::fs::remove_file(&output);
                let argv = expand(template, &files, &output, &not_utf8);
                let expected = run(alias, &argv, Duration::from_secs(60))
                    .map_err(|e| format!("could not run {}: {e}", alias.display()))?;
                let engine_name = programs[engine + 1].0;
                if usage_error {
                    seen[engine + 1].stderr_differs = expected.stderr != stderrs[engine + 1];
                    if seen[engine + 1].stderr_differs {
                        eprintln!(
                            "exit-table: {name} ({template}): {engine_name} stderr {:?}, the \
                             reference's {:?}",
                            String::from_utf8_lossy(&stderrs[engine + 1]),
                            String::from_utf8_lossy(&expected.stderr)
                        );
                    }
                }
                if help_text {
                    seen[engine + 1].help_differs = expected.stdout != stdouts[engine + 1];
                    if let Some((line, ours, theirs)) =
                        first_line_difference(&stdouts[engine + 1], &expected.stdout)
                    {
                        eprintln!(
                            "exit-table: {name} ({template}): {engine_name} help line {line} \
                             {ours:?}, the reference's {theirs:?}"
                        );
                    }
                }
            }
        }
        let same = seen[1] == seen[0] && seen[2] == seen[0];
        if !same {
            failed += 1;
            eprintln!(
                "exit-table: {name} ({template}): reference {}, evtx-rs {}, evtx-zig {}",
                seen[0], seen[1], seen[2]
            );
        }
        md.push_str(&format!(
            "| {name} | `{template}` | {} | {} | {} | {} |\n",
            seen[0],
            seen[1],
            seen[2],
            match (same, pending) {
                (false, _) => "**differs**".to_string(),
                (true, Some((_, why))) => format!("ok (stderr not compared: {why})"),
                (true, None) => "ok".to_string(),
            }
        ));
    }
    let forms = input_forms_table(&programs, &files[0].1, out, &mut md)?;
    failed += forms.iter().filter(|row| !row.same).count();
    let cases = CASES.len() + forms.len();
    Ok(ExitTableReport {
        cases,
        identical: cases - failed,
        markdown: md,
    })
}

/// The input-form rows, appended to `md` under their own heading.
fn input_forms_table(
    programs: &[(&str, &PathBuf); 3],
    log: &Path,
    out: &Path,
    md: &mut String,
) -> Result<Vec<input_forms::Row>, String> {
    md.push_str(
        "\n## Input forms\n\n| case | input | reference | evtx-rs | evtx-zig | |\n\
         |---|---|---|---|---|---|\n",
    );
    let forms = input_forms::run_input_forms(programs, log, out)?;
    for row in &forms {
        md.push_str(&row.markdown);
    }
    Ok(forms)
}

/// The version lines are ours (README): whether the engines' differ once their own names are
/// taken out.
fn versions_differ(programs: &[(&str, &PathBuf); 3], stdouts: &[Vec<u8>]) -> bool {
    let [rust, zig] = [1, 2].map(|n| {
        let name = programs[n]
            .1
            .file_name()
            .map(|n| n.to_string_lossy().into_owned());
        let text = String::from_utf8_lossy(&stdouts[n]).into_owned();
        text.replace(name.as_deref().unwrap_or("\0"), "PROGRAM")
    });
    rust != zig
}

/// Whether a case's stdout is a help text (clap's help always has a `Usage:` line; no dump of
/// the fixtures has one).
fn is_help(stdout: &[u8]) -> bool {
    String::from_utf8_lossy(stdout).contains("\nUsage: ")
}

/// Whether a case's stdout is the reference's version line (`-V`: clap's command name).
fn is_version(stdout: &[u8]) -> bool {
    stdout.starts_with(b"EVTX Parser ")
}

/// The first line (1-based) where `ours` and `theirs` differ, and the two lines (empty past
/// the end); `None` when they are equal.
fn first_line_difference(ours: &[u8], theirs: &[u8]) -> Option<(usize, String, String)> {
    if ours == theirs {
        return None;
    }
    let (ours, theirs) = (
        String::from_utf8_lossy(ours),
        String::from_utf8_lossy(theirs),
    );
    let mut a = ours.split_inclusive('\n');
    let mut b = theirs.split_inclusive('\n');
    for line in 1.. {
        let (x, y) = (a.next(), b.next());
        if x != y {
            let text = |l: Option<&str>| l.unwrap_or_default().to_string();
            return Some((line, text(x), text(y)));
        }
    }
    unreachable!("unequal texts differ in some line")
}

/// A copy of `log` in `out` under a name that is not UTF-8 (`@U`).
fn not_utf8_log(log: &Path, out: &Path) -> Result<OsString, String> {
    use std::os::unix::ffi::OsStrExt;
    let mut name = out.as_os_str().as_bytes().to_vec();
    name.extend_from_slice(b"/not-utf8-\xff.evtx");
    let path = OsString::from(OsStr::from_bytes(&name));
    std::fs::copy(log, &path).map_err(|e| format!("{}: {e}", log.display()))?;
    Ok(path)
}

/// The arguments of `template` with the placeholders replaced (`@U` by `not_utf8`).
fn expand(
    template: &str,
    files: &[(&str, PathBuf)],
    output: &Path,
    not_utf8: &OsStr,
) -> Vec<OsString> {
    template
        .split(' ')
        .filter(|word| !word.is_empty())
        .map(|word| {
            if word == "''" {
                return OsString::new();
            }
            let mut word = word.replace("@O", &output.display().to_string());
            for (placeholder, path) in files {
                word = word.replace(placeholder, &path.display().to_string());
            }
            let mut parts = word.split("@U");
            let mut arg = OsString::from(parts.next().unwrap_or_default());
            for part in parts {
                arg.push(not_utf8);
                arg.push(part);
            }
            arg
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn placeholders_and_empty_arguments() {
        let files = [("@F", PathBuf::from("a.evtx"))];
        let u = OsStr::new("u");
        let argv = expand("-o '' --input=@F -f @O -i=@U", &files, Path::new("out"), u);
        assert_eq!(argv, ["-o", "", "--input=a.evtx", "-f", "out", "-i=u"]);
        assert!(expand("", &files, Path::new("out"), u).is_empty());
    }

    #[test]
    fn help_and_version_texts() {
        assert!(is_help(b"about\n\nUsage: x [OPTIONS]\n"));
        assert!(!is_help(b"Record 1\n<Event/>\n"));
        assert!(is_version(b"EVTX Parser 0.15.1\n"));
        assert!(!is_version(b"evtx-rs 0.1.0\n"));
        assert_eq!(first_line_difference(b"a\nb\n", b"a\nb\n"), None);
        let diff = first_line_difference(b"a\nb\n", b"a\nc\n");
        assert_eq!(diff, Some((2, "b\n".into(), "c\n".into())));
        let diff = first_line_difference(b"a\n", b"a\nc\n");
        assert_eq!(diff, Some((2, String::new(), "c\n".into())));
        // A missing last newline is a difference too.
        assert_eq!(first_line_difference(b"a", b"a\n").map(|d| d.0), Some(1));
    }

    #[test]
    fn enough_cases() {
        assert!(CASES.len() >= 30);
        for (name, _) in STDERR_NOT_COMPARED {
            assert!(
                CASES.iter().any(|(case, _)| case == name),
                "{name} is a case"
            );
        }
        let mut names: Vec<&str> = CASES.iter().map(|(name, _)| *name).collect();
        names.sort_unstable();
        names.dedup();
        assert_eq!(names.len(), CASES.len(), "case names are unique");
    }
}
