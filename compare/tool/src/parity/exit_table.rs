//! `evtx-compare exit-table`: the command-line surface of the three CLIs, table-driven.
//!
//! Every argument case of `shared-fixtures/cli-cases.txt` (its header says the format and the
//! placeholders) runs in the reference `evtx_dump`, evtx-rs and evtx-zig with the same arguments
//! (stdin closed), and what a script sees is compared: the exit status, and whether anything was
//! written to stdout. What the case says is compared besides: stderr byte for byte (a usage
//! error: clap's message, tip and `Usage:` line), its first line (a fatal error), a help text
//! byte for byte, each against the reference run through a symlink named as the engine (clap's
//! `Usage:` line names the program as invoked), so only the program's name may differ and the
//! harness holds no copy of the texts. The version line is ours (README), the same in both
//! engines but for their names. A case fails when either engine differs from the reference, or
//! the reference from what the file says of it. A case marked `ours` (an extension, which the
//! reference refuses) holds each engine to the file's words instead, and the two engines'
//! stderr to each other, byte for byte but for their names.
//!
//! Then the input forms (`input_forms.rs`): the dump's INPUT as a directory, a FIFO, an
//! unreadable file, a symlink loop, a path not UTF-8, an empty or short file and `/dev/null`,
//! stdout and stderr compared with the reference's byte for byte.

use crate::parity::input_forms;
use crate::run::{run, Backends, Output};
use evtx_fixture_gen::cli_cases::{self, Case, CliCases, Differences, Ran, Stderr, Stdout};
use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::time::Duration;

const TIME_LIMIT: Duration = Duration::from_secs(60);

/// The programs' names in the table, in its column order.
const PROGRAMS: [&str; 3] = ["reference", "evtx-rs", "evtx-zig"];

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

impl Seen {
    fn of(output: &Output) -> Seen {
        Seen {
            status: output.describe_status(),
            stdout_empty: output.stdout.is_empty(),
            stderr_differs: false,
            help_differs: false,
        }
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

/// What every case of one run of the table shares.
struct Table<'a> {
    file: CliCases,
    fixtures: &'a Path,
    out: &'a Path,
    /// The reference, evtx-rs and evtx-zig.
    programs: [&'a Path; 3],
    /// The reference under each engine's name.
    aliases: Vec<PathBuf>,
    /// `@U`'s path.
    not_utf8: OsString,
}

/// One case's outcome: its markdown line, and whether all three CLIs agreed.
struct Row {
    markdown: String,
    same: bool,
}

/// Runs every case in the three CLIs (the `@O` outputs go below `out`).
pub fn run_exit_table(
    backends: &Backends,
    fixtures: &Path,
    out: &Path,
) -> Result<ExitTableReport, String> {
    std::fs::create_dir_all(out).map_err(|e| e.to_string())?;
    let file = CliCases::load(fixtures)?;
    let log = fixtures.join(file.path_of("@F").ok_or("cli-cases.txt: no @F")?);
    let table = Table {
        not_utf8: cli_cases::not_utf8_copy(&log, out)?,
        aliases: alias_reference(&backends.reference, &[&backends.rust, &backends.zig], out)?,
        programs: [&backends.reference, &backends.rust, &backends.zig],
        file,
        fixtures,
        out,
    };
    let mut md = String::from(
        "## Exit statuses and usage errors\n\n| case | arguments | reference | evtx-rs | evtx-zig \
            | |\n|---|---|---|---|---|---|\n",
    );
    let mut failed = 0;
    for (index, case) in table.file.cases.iter().enumerate() {
        let row = table.run_case(index, case)?;
        failed += usize::from(!row.same);
        md.push_str(&row.markdown);
    }
    let programs = [
        ("reference", &backends.reference),
        ("evtx-rs", &backends.rust),
        ("evtx-zig", &backends.zig),
    ];
    let forms = input_forms_table(&programs, &log, out, &mut md)?;
    failed += forms.iter().filter(|row| !row.same).count();
    let cases = table.file.cases.len() + forms.len();
    Ok(ExitTableReport {
        cases,
        identical: cases - failed,
        markdown: md,
    })
}

impl Table<'_> {
    /// Runs `case` in the three CLIs, then the reference under each engine's name where the
    /// case compares stderr or a help text.
    fn run_case(&self, index: usize, case: &Case) -> Result<Row, String> {
        let mut outputs = Vec::new();
        for (program, name) in self.programs.iter().zip(PROGRAMS) {
            outputs.push(self.run(program, case, &self.output(index, name))?);
        }
        let mut seen: Vec<Seen> = outputs.iter().map(Seen::of).collect();
        let expected = &case.expected;
        let departure = expected.departure(&ran(&outputs[0]));
        if let Some(departure) = &departure {
            eprintln!("exit-table: {}: {departure}", case.name);
        }
        if expected.ours {
            return Ok(self.our_row(case, &outputs, seen, departure.is_none()));
        }
        if expected.stdout == Stdout::Version {
            let differ = self.versions_differ(&outputs);
            seen[1].help_differs = differ;
            seen[2].help_differs = differ;
        }
        if expected.stderr != Stderr::NotCompared || expected.stdout == Stdout::Help {
            for engine in 1..3 {
                let alias = &self.aliases[engine - 1];
                let theirs = self.run(alias, case, &self.output(index, PROGRAMS[engine]))?;
                let found = expected.differences(&ran(&theirs), &ran(&outputs[engine]));
                seen[engine].stderr_differs = found.stderr;
                seen[engine].help_differs = found.help;
                report(case, PROGRAMS[engine], &theirs, &outputs[engine], found);
            }
        }
        let same = departure.is_none() && seen[1] == seen[0] && seen[2] == seen[0];
        if !same {
            eprintln!(
                "exit-table: {} ({}): reference {}, evtx-rs {}, evtx-zig {}",
                case.name, case.arguments, seen[0], seen[1], seen[2]
            );
        }
        let verdict = if same { "ok" } else { "**differs**" };
        Ok(Row {
            markdown: format!(
                "| {} | `{}` | {} | {} | {} | {verdict} |\n",
                case.name, case.arguments, seen[0], seen[1], seen[2]
            ),
            same,
        })
    }

    /// The row of an `ours` case: each engine against the file's words, and the engines'
    /// stderr against each other (their names aside).
    fn our_row(&self, case: &Case, outputs: &[Output], mut seen: Vec<Seen>, held: bool) -> Row {
        let mut same = held;
        for engine in 1..3 {
            let found = case
                .expected
                .differences(&ran(&outputs[0]), &ran(&outputs[engine]));
            seen[engine].stderr_differs = found.stderr;
            same &= !found.any();
        }
        let [rust, zig] = [1, 2].map(|n| self.without_name(n, &outputs[n].stderr));
        if rust != zig {
            eprintln!(
                "exit-table: {} ({}): evtx-rs stderr {rust:?}, evtx-zig's {zig:?}",
                case.name, case.arguments
            );
            seen[2].stderr_differs = true;
            same = false;
        }
        if !same {
            eprintln!(
                "exit-table: {} ({}): ours; reference {}, evtx-rs {}, evtx-zig {}",
                case.name, case.arguments, seen[0], seen[1], seen[2]
            );
        }
        let verdict = if same { "ok (ours)" } else { "**differs**" };
        Row {
            markdown: format!(
                "| {} | `{}` | {} | {} | {} | {verdict} |\n",
                case.name, case.arguments, seen[0], seen[1], seen[2]
            ),
            same,
        }
    }

    /// Program `n`'s text with its own name replaced, to compare the engines' words.
    fn without_name(&self, n: usize, text: &[u8]) -> String {
        let name = self.programs[n]
            .file_name()
            .map(|n| n.to_string_lossy().into_owned());
        String::from_utf8_lossy(text).replace(name.as_deref().unwrap_or("\0"), "PROGRAM")
    }

    /// The `@O` path of `program` on case `index` (the reference under an engine's name takes
    /// the engine's: a message may name it).
    fn output(&self, index: usize, program: &str) -> PathBuf {
        self.out.join(format!("case-{index}-{program}.out"))
    }

    /// Runs `program` on `case`, its `@O` path removed first.
    fn run(&self, program: &Path, case: &Case, output: &Path) -> Result<Output, String> {
        let _ = std::fs::remove_file(output);
        let argv = self.file.argv(case, self.fixtures, output, &self.not_utf8);
        run(program, &argv, TIME_LIMIT)
            .map_err(|e| format!("could not run {}: {e}", program.display()))
    }

    /// The version lines are ours (README): whether the engines' differ once their own names
    /// are taken out.
    fn versions_differ(&self, outputs: &[Output]) -> bool {
        let [rust, zig] = [1, 2].map(|n| self.without_name(n, &outputs[n].stdout));
        rust != zig
    }
}

/// A run as `cli_cases` compares it.
fn ran(output: &Output) -> Ran<'_> {
    Ran {
        status: output.status.and_then(|s| s.code()),
        stdout: &output.stdout,
        stderr: &output.stderr,
    }
}

/// Says on stderr where `engine` differs from the reference run under its name.
fn report(case: &Case, engine: &str, theirs: &Output, ours: &Output, found: Differences) {
    if found.stderr {
        eprintln!(
            "exit-table: {} ({}): {engine} stderr {:?}, the reference's {:?}",
            case.name,
            case.arguments,
            String::from_utf8_lossy(&ours.stderr),
            String::from_utf8_lossy(&theirs.stderr)
        );
    }
    if let Some((line, ours, theirs)) = first_line_difference(&ours.stdout, &theirs.stdout) {
        if found.help {
            eprintln!(
                "exit-table: {} ({}): {engine} help line {line} {ours:?}, the reference's \
                 {theirs:?}",
                case.name, case.arguments
            );
        }
    }
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_first_differing_line() {
        assert_eq!(first_line_difference(b"a\nb\n", b"a\nb\n"), None);
        let diff = first_line_difference(b"a\nb\n", b"a\nc\n");
        assert_eq!(diff, Some((2, "b\n".into(), "c\n".into())));
        let diff = first_line_difference(b"a\n", b"a\nc\n");
        assert_eq!(diff, Some((2, String::new(), "c\n".into())));
        // A missing last newline is a difference too.
        assert_eq!(first_line_difference(b"a", b"a\n").map(|d| d.0), Some(1));
    }
}
