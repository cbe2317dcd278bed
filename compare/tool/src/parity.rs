//! Parity: the reference, evtx-rs and evtx-zig over a corpus, record by record.
//!
//! Checks, per input file and output mode:
//! * `reference-rust`, `reference-zig`: records equal the reference's, same number of failures,
//!   same exit status;
//! * `rust-zig`: stdout byte-identical and the same error lines (up to their KIND);
//! * `rust-threads`, `zig-threads`: `-t 2` output byte-identical to `-t 1`.
//!
//! A difference explained by a known gap does not fail its check.

use crate::diff::{compare_records, excerpt, Category, Difference};
use crate::gaps::KnownGaps;
use crate::records::{parse_error_lines, reference_failures, split};
use crate::run::{run, Output};
use serde::Serialize;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::Duration;

/// An output mode: the CLI flags, and how to split and compare its records.
pub struct Mode {
    pub name: &'static str,
    pub args: &'static [&'static str],
    pub banner: bool,
    pub json: bool,
    /// Also compared at `-t 2` against `-t 1`.
    pub threads: bool,
    /// For banner-less modes: the same output with `Record N` banners (`-o json`), run only
    /// when two outputs differ, so records can be aligned by id rather than by position.
    pub with_banner: &'static [&'static str],
}

pub const MODES: &[Mode] = &[
    mode(
        "jsonl",
        &["-o", "jsonl"],
        false,
        true,
        true,
        &["-o", "json"],
    ),
    mode("json", &["-o", "json"], true, true, false, &[]),
    mode("xml", &["-o", "xml"], true, false, true, &[]),
    mode(
        "jsonl-separate-attributes",
        &["-o", "jsonl", "--separate-json-attributes"],
        false,
        true,
        false,
        &["-o", "json", "--separate-json-attributes"],
    ),
    mode(
        "xml-no-indent",
        &["-o", "xml", "--no-indent"],
        true,
        false,
        false,
        &[],
    ),
    mode(
        "jsonl-validate-checksums",
        &["-o", "jsonl", "--validate-checksums"],
        false,
        true,
        false,
        &["-o", "json", "--validate-checksums"],
    ),
    // Record recovery (contract 5.4, shared-fixtures/README.md "Record recovery"): every mode
    // above again with `--recover-records`. Gap entries match them all with mode `*-recover`.
    mode(
        "jsonl-recover",
        &["-o", "jsonl", "--recover-records"],
        false,
        true,
        true,
        &["-o", "json", "--recover-records"],
    ),
    mode(
        "json-recover",
        &["-o", "json", "--recover-records"],
        true,
        true,
        false,
        &[],
    ),
    mode(
        "xml-recover",
        &["-o", "xml", "--recover-records"],
        true,
        false,
        true,
        &[],
    ),
    mode(
        "jsonl-separate-attributes-recover",
        &[
            "-o",
            "jsonl",
            "--separate-json-attributes",
            "--recover-records",
        ],
        false,
        true,
        true,
        &[
            "-o",
            "json",
            "--separate-json-attributes",
            "--recover-records",
        ],
    ),
    mode(
        "xml-no-indent-recover",
        &["-o", "xml", "--no-indent", "--recover-records"],
        true,
        false,
        false,
        &[],
    ),
    mode(
        "jsonl-validate-checksums-recover",
        &["-o", "jsonl", "--validate-checksums", "--recover-records"],
        false,
        true,
        false,
        &["-o", "json", "--validate-checksums", "--recover-records"],
    ),
];

/// A jsonl mode under `--ansi-codec $label`.
macro_rules! codec_mode {
    ($label:literal) => {
        Mode {
            name: concat!("jsonl-ansi-", $label),
            args: &["-o", "jsonl", "--ansi-codec", $label],
            banner: false,
            json: true,
            threads: false,
            with_banner: &["-o", "json", "--ansi-codec", $label],
        }
    };
}

/// Extra modes for the `ansi-*` fixtures: one per multi-byte code page (and one single-byte
/// one), so decoding and its failures are compared under every `--ansi-codec` decoder.
pub const CODEC_MODES: &[Mode] = &[
    codec_mode!("utf-8"),
    codec_mode!("shift_jis"),
    codec_mode!("euc-jp"),
    codec_mode!("gbk"),
    codec_mode!("gb18030"),
    codec_mode!("big5"),
    codec_mode!("euc-kr"),
    codec_mode!("windows-1251"),
    Mode {
        name: "xml-ansi-shift_jis",
        args: &["-o", "xml", "--ansi-codec", "shift_jis"],
        banner: true,
        json: false,
        threads: false,
        with_banner: &[],
    },
];

const fn mode(
    name: &'static str,
    args: &'static [&'static str],
    banner: bool,
    json: bool,
    threads: bool,
    with_banner: &'static [&'static str],
) -> Mode {
    Mode {
        name,
        args,
        banner,
        json,
        threads,
        with_banner,
    }
}

/// The three command-line backends.
pub struct Backends {
    pub reference: PathBuf,
    pub rust: PathBuf,
    pub zig: PathBuf,
}

/// One input file with the label it is reported under.
pub struct Input {
    pub label: String,
    pub path: PathBuf,
}

impl Input {
    pub fn file_name(&self) -> String {
        self.path
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default()
    }
}

#[derive(Debug, Serialize)]
pub struct Check {
    pub file: String,
    pub mode: &'static str,
    pub pair: &'static str,
    pub expected_records: usize,
    pub actual_records: usize,
    pub matching_records: usize,
    pub passed: bool,
    /// Unexplained differences (at most `MAX_EXAMPLES` kept per category; counts are complete).
    pub counts: BTreeMap<&'static str, usize>,
    pub examples: Vec<Difference>,
    /// Differences a known gap explains, with its reason.
    pub known: Vec<(Difference, String)>,
}

const MAX_EXAMPLES: usize = 3;
const TIME_LIMIT: Duration = Duration::from_secs(120);

#[derive(Default, Serialize)]
pub struct ParityReport {
    pub checks: Vec<Check>,
    pub stale_gaps: Vec<String>,
    pub notes: Vec<String>,
}

impl ParityReport {
    pub fn passed(&self) -> usize {
        self.checks.iter().filter(|c| c.passed).count()
    }

    pub fn failed(&self) -> usize {
        self.checks.len() - self.passed() + self.stale_gaps.len()
    }
}

struct Run {
    output: Output,
    stdout: String,
    program: PathBuf,
    threads: &'static str,
    input: PathBuf,
}

fn run_backend(program: &Path, mode: &Mode, threads: &'static str, input: &Path) -> Run {
    run_with_args(program, mode.args, threads, input)
}

fn run_with_args(program: &Path, mode_args: &[&str], threads: &'static str, input: &Path) -> Run {
    let path = input.to_string_lossy();
    let mut args: Vec<&str> = vec!["-t", threads];
    args.extend_from_slice(mode_args);
    args.push(&path);
    let output = run(program, &args, TIME_LIMIT).unwrap_or_else(|e| Output {
        stdout: Vec::new(),
        stderr: format!("could not run {}: {e}", program.display()).into_bytes(),
        status: None,
    });
    let stdout = String::from_utf8_lossy(&output.stdout).into_owned();
    Run {
        output,
        stdout,
        program: program.to_path_buf(),
        threads,
        input: input.to_path_buf(),
    }
}

/// Runs every check over `inputs`, printing one progress line per file.
pub fn run_parity(backends: &Backends, inputs: &[Input], gaps: &KnownGaps) -> ParityReport {
    let mut report = ParityReport::default();
    for (n, input) in inputs.iter().enumerate() {
        eprint!("[{}/{}] {} ", n + 1, inputs.len(), input.label);
        let mut failed_modes = Vec::new();
        let extra = if input.file_name().starts_with("ansi-") {
            CODEC_MODES
        } else {
            &[]
        };
        for mode in MODES.iter().chain(extra) {
            let before = report.checks.len();
            check_mode(backends, input, mode, gaps, &mut report.checks);
            if report.checks[before..].iter().any(|c| !c.passed) {
                failed_modes.push(mode.name);
            }
        }
        if failed_modes.is_empty() {
            eprintln!("ok");
        } else {
            eprintln!("DIFFERS in {}", failed_modes.join(", "));
        }
    }
    report.stale_gaps = gaps
        .stale()
        .iter()
        .map(|g| {
            format!(
                "{} {} {} {} {:?}: {}",
                g.file, g.pair, g.mode, g.category, g.record, g.reason
            )
        })
        .collect();
    report
}

fn check_mode(
    backends: &Backends,
    input: &Input,
    mode: &Mode,
    gaps: &KnownGaps,
    checks: &mut Vec<Check>,
) {
    let reference = run_backend(&backends.reference, mode, "1", &input.path);
    let rust = run_backend(&backends.rust, mode, "1", &input.path);
    let zig = run_backend(&backends.zig, mode, "1", &input.path);
    let path = input.path.to_string_lossy();

    for (pair, engine) in [("reference-rust", &rust), ("reference-zig", &zig)] {
        let mut differences = record_differences(&reference, engine, mode);
        let expected_failures =
            reference_failures(&String::from_utf8_lossy(&reference.output.stderr));
        let actual_failures =
            parse_error_lines(&String::from_utf8_lossy(&engine.output.stderr), &path).len();
        if expected_failures != actual_failures {
            differences.push(whole_run(
                Category::ErrorRecords,
                format!("{expected_failures} failed records"),
                format!("{actual_failures} failed records"),
            ));
        }
        checks.push(finish(
            input,
            mode,
            pair,
            &reference,
            engine,
            differences,
            gaps,
        ));
    }

    let mut differences = Vec::new();
    if rust.output.stdout != zig.output.stdout {
        differences = record_differences(&rust, &zig, mode);
        if differences.is_empty() {
            differences.push(whole_run(
                Category::Structure,
                "stdout".into(),
                "stdout differs in framing".into(),
            ));
        }
    }
    differences.extend(error_line_differences(&rust, &zig, &path));
    checks.push(finish(
        input,
        mode,
        "rust-zig",
        &rust,
        &zig,
        differences,
        gaps,
    ));

    if mode.threads {
        for (pair, program, single) in [
            ("rust-threads", &backends.rust, &rust),
            ("zig-threads", &backends.zig, &zig),
        ] {
            let threaded = run_backend(program, mode, "2", &input.path);
            let mut differences = Vec::new();
            if threaded.output.stdout != single.output.stdout {
                differences = record_differences(single, &threaded, mode);
                if differences.is_empty() {
                    differences.push(whole_run(
                        Category::Structure,
                        "-t 1".into(),
                        "-t 2 framing differs".into(),
                    ));
                }
            }
            differences.extend(error_line_differences(single, &threaded, &path));
            checks.push(finish(
                input,
                mode,
                pair,
                single,
                &threaded,
                differences,
                gaps,
            ));
        }
    }
}

/// Exit status (including timeouts and crashes) first, then the records.
fn record_differences(expected: &Run, actual: &Run, mode: &Mode) -> Vec<Difference> {
    if actual.output.timed_out() {
        return vec![whole_run(
            Category::Timeout,
            expected.output.describe_status(),
            "timeout".into(),
        )];
    }
    let mut differences = Vec::new();
    if expected.output.status.map(|s| s.code()) != actual.output.status.map(|s| s.code()) {
        differences.push(whole_run(
            Category::Crash,
            expected.output.describe_status(),
            format!(
                "{}: {}",
                actual.output.describe_status(),
                excerpt(&String::from_utf8_lossy(&actual.output.stderr))
            ),
        ));
    }
    if expected.stdout == actual.stdout {
        return differences;
    }
    if mode.banner || mode.with_banner.is_empty() {
        let left = split(&expected.stdout, mode.banner);
        let right = split(&actual.stdout, mode.banner);
        differences.extend(compare_records(&left, &right, mode.json));
        return differences;
    }
    // Align by record id: the banner mode prints the same records, each behind `Record N`.
    let rerun = |r: &Run| run_with_args(&r.program, mode.with_banner, r.threads, &r.input);
    let (left_run, right_run) = (rerun(expected), rerun(actual));
    let left = split(&left_run.stdout, true);
    let right = split(&right_run.stdout, true);
    differences.extend(compare_records(&left, &right, mode.json));
    differences
}

fn error_line_differences(expected: &Run, actual: &Run, path: &str) -> Vec<Difference> {
    let left = parse_error_lines(&String::from_utf8_lossy(&expected.output.stderr), path);
    let right = parse_error_lines(&String::from_utf8_lossy(&actual.output.stderr), path);
    if left == right {
        return Vec::new();
    }
    let first = left
        .iter()
        .zip(&right)
        .position(|(a, b)| a != b)
        .unwrap_or(left.len().min(right.len()));
    let show = |lines: &[Result<crate::records::ErrorLine, String>]| match lines.get(first) {
        Some(Ok(line)) => line.to_string(),
        Some(Err(raw)) => raw.clone(),
        None => format!("({} error lines)", lines.len()),
    };
    vec![whole_run(Category::ErrorRecords, show(&left), show(&right))]
}

fn whole_run(category: Category, expected: String, actual: String) -> Difference {
    Difference {
        category,
        record: String::new(),
        record_id: None,
        at: String::new(),
        expected,
        actual,
    }
}

fn finish(
    input: &Input,
    mode: &Mode,
    pair: &'static str,
    expected: &Run,
    actual: &Run,
    differences: Vec<Difference>,
    gaps: &KnownGaps,
) -> Check {
    let file = input.file_name();
    gaps.cover(&file, pair, mode.name);
    let expected_records = split(&expected.stdout, mode.banner).len();
    let actual_records = split(&actual.stdout, mode.banner).len();
    let mut counts = BTreeMap::new();
    let mut examples = Vec::new();
    let mut known = Vec::new();
    let mut differing_records = 0;
    for difference in differences {
        if difference.category != Category::ErrorRecords && !difference.record.is_empty() {
            differing_records += 1;
        }
        if let Some(reason) = gaps.explain(&file, pair, mode.name, &difference) {
            known.push((difference, reason.to_string()));
            continue;
        }
        let count = counts.entry(difference.category.name()).or_insert(0);
        *count += 1;
        if *count <= MAX_EXAMPLES {
            examples.push(difference);
        }
    }
    Check {
        file: input.label.clone(),
        mode: mode.name,
        pair,
        expected_records,
        actual_records,
        matching_records: expected_records.saturating_sub(differing_records),
        passed: counts.is_empty(),
        counts,
        examples,
        known,
    }
}

/// The parity section of the report, as Markdown.
pub fn markdown(report: &ParityReport) -> String {
    let mut md = String::from("## Parity\n\n");
    md.push_str(&format!(
        "{} checks passed, {} failed (a check is one file × mode × pair).\n\n",
        report.passed(),
        report.failed()
    ));
    md.push_str("| pair | checks | passed | records compared | records matching | parity |\n|---|---|---|---|---|---|\n");
    let mut by_pair: BTreeMap<&str, (usize, usize, usize, usize)> = BTreeMap::new();
    for check in &report.checks {
        let entry = by_pair.entry(check.pair).or_default();
        entry.0 += 1;
        entry.1 += usize::from(check.passed);
        entry.2 += check.expected_records;
        entry.3 += check.matching_records;
    }
    for (pair, (checks, passed, records, matching)) in &by_pair {
        let pct = if *records == 0 {
            100.0
        } else {
            100.0 * *matching as f64 / *records as f64
        };
        md.push_str(&format!(
            "| {pair} | {checks} | {passed} | {records} | {matching} | {pct:.2} % |\n"
        ));
    }
    let failing: Vec<_> = report.checks.iter().filter(|c| !c.passed).collect();
    if !failing.is_empty() {
        md.push_str(
            "\n### Differences by file\n\n| file | mode | pair | categories |\n|---|---|---|---|\n",
        );
        for check in &failing {
            let cats: Vec<String> = check
                .counts
                .iter()
                .map(|(k, v)| format!("{k}: {v}"))
                .collect();
            md.push_str(&format!(
                "| {} | {} | {} | {} |\n",
                check.file,
                check.mode,
                check.pair,
                cats.join(", ")
            ));
        }
        md.push_str("\n### First examples\n\n");
        for check in failing.iter().take(20) {
            for d in check.examples.iter().take(1) {
                md.push_str(&format!(
                    "- `{}` {} {} — {} {} at `{}`\n  - expected: `{}`\n  - actual: `{}`\n",
                    check.file,
                    check.mode,
                    check.pair,
                    d.category.name(),
                    d.record,
                    d.at,
                    d.expected.replace('`', "'"),
                    d.actual.replace('`', "'")
                ));
            }
        }
    }
    let known: Vec<_> = report
        .checks
        .iter()
        .flat_map(|c| c.known.iter().map(move |k| (c, k)))
        .collect();
    if !known.is_empty() {
        md.push_str("\n### Known gaps (explained differences)\n\n");
        for (check, (d, reason)) in known.iter().take(30) {
            md.push_str(&format!(
                "- `{}` {} {} {} {}: {}\n",
                check.file,
                check.mode,
                check.pair,
                d.category.name(),
                d.record,
                reason
            ));
        }
    }
    if !report.stale_gaps.is_empty() {
        md.push_str("\n### Stale known gaps (no longer needed: remove them)\n\n");
        for gap in &report.stale_gaps {
            md.push_str(&format!("- {gap}\n"));
        }
    }
    md
}

/// The terminal summary: failing checks with their first example, then `parity: N passed, N failed`.
pub fn print_summary(report: &ParityReport) {
    let failing: Vec<_> = report.checks.iter().filter(|c| !c.passed).collect();
    for check in failing.iter().take(15) {
        let cats: Vec<String> = check
            .counts
            .iter()
            .map(|(k, v)| format!("{k} {v}"))
            .collect();
        eprintln!(
            "DIFF {} [{}] {}: {}",
            check.file,
            check.mode,
            check.pair,
            cats.join(", ")
        );
        if let Some(d) = check.examples.first() {
            let place = [d.record.as_str(), d.at.as_str()]
                .iter()
                .filter(|s| !s.is_empty())
                .copied()
                .collect::<Vec<_>>()
                .join(" at ");
            if !place.is_empty() {
                eprintln!("     {place}");
            }
            eprintln!("     expected: {}\n     actual:   {}", d.expected, d.actual);
        }
    }
    if failing.len() > 15 {
        eprintln!(
            "... and {} more failing checks (see the report)",
            failing.len() - 15
        );
    }
    for gap in &report.stale_gaps {
        eprintln!("STALE known gap (remove it): {gap}");
    }
    for note in &report.notes {
        eprintln!("note: {note}");
    }
    println!(
        "parity: {} passed, {} failed",
        report.passed(),
        report.failed()
    );
}
