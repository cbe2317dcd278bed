//! Parity: the reference, evtx-rs and evtx-zig over a corpus, byte for byte and in order.
//!
//! Checks, per input file and output mode (jsonl modes as jsonl):
//! * `reference-rust`, `reference-zig`: stdout equal to the reference's byte for byte, in
//!   order, after taking out only the records a known gap pins; the same exit status (timeouts
//!   and signals included); as many failed records as the reference, the same ones where it
//!   names them (or exactly the counts a known gap pins);
//! * `rust-zig`: stdout byte-identical, the same exit status, stderr the same line for line
//!   and in full (one error vocabulary, shared-fixtures/README.md);
//! * `rust-threads`, `zig-threads`: the same at `-t 2` against `-t 1`.
//!
//! What fails is the byte comparison (a `bytes` difference at the first place, in order, where
//! the outputs part); the record-by-record explanation (record id, JSON path or XML line) is for
//! the report. A known gap explains only a pinned record or count, never bytes or a status.

use crate::parity::cli_output::{
    banner_id, parse_error_lines, reference_failed_records, side_file_lines, split,
    without_backtrace,
};
use crate::parity::diff::{compare_records, ordered_difference, Category, Difference};
use crate::parity::gaps::KnownGaps;
use crate::parity::modes::{
    is_wevt_log, mode, modes, mta_modes, wevt_modes, Mode, CODEC_MODES, INFO, INFO_FORMS,
    INFO_MODE, MTA_MARK, RECOVER_SUFFIX, WEVT_MARK,
};
use crate::parity::wevt_tools::{self, TOOLS_MODE};
use crate::run::{excerpt, run, Backends, Output};
use serde::Serialize;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::Duration;

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
    /// Check families that did not compare every input (a full run must): each fails the run.
    pub incomplete: Vec<String>,
    /// Committed expected outputs (shared-fixtures/manifest.json) that are not the reference's
    /// stdout any more: each fails the run (regenerate them).
    pub stale_expected: Vec<String>,
    pub notes: Vec<String>,
}

impl ParityReport {
    pub fn passed(&self) -> usize {
        self.checks.iter().filter(|c| c.passed).count()
    }

    pub fn failed(&self) -> usize {
        self.checks.len() - self.passed()
            + self.stale_gaps.len()
            + self.incomplete.len()
            + self.stale_expected.len()
    }

    /// Per check family (`family`): inputs compared, checks, checks passed.
    pub fn families(&self) -> BTreeMap<&'static str, (usize, usize, usize)> {
        let mut inputs: BTreeMap<&'static str, std::collections::BTreeSet<&str>> = BTreeMap::new();
        let mut rows: BTreeMap<&'static str, (usize, usize, usize)> = BTreeMap::new();
        for check in &self.checks {
            let family = family(check.mode);
            inputs.entry(family).or_default().insert(&check.file);
            let row = rows.entry(family).or_default();
            row.1 += 1;
            row.2 += usize::from(check.passed);
        }
        for (family, row) in &mut rows {
            row.0 = inputs[family].len();
        }
        rows
    }
}

/// The family of a mode, as the report groups them: `dump` (the base modes), `recover` (with
/// `--recover-records`), `ansi-codec` (the `ansi-*` fixtures' extra modes), `mta` (`--mta`
/// fixtures, `mta_modes`), `info`.
pub fn family(mode: &str) -> &'static str {
    if mode == INFO_MODE {
        "info"
    } else if mode == TOOLS_MODE {
        "wevt-tools"
    } else if mode.contains(WEVT_MARK) {
        "wevt"
    } else if mode.contains(MTA_MARK) {
        "mta"
    } else if mode.ends_with(RECOVER_SUFFIX) {
        "recover"
    } else if CODEC_MODES.iter().any(|m| m.name == mode) {
        "ansi-codec"
    } else {
        "dump"
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
    run_argv(program, &args, threads, input)
}

/// Runs every check over `inputs`, printing one progress line per file.
/// `only`: mode names to run (all when empty); an unknown name is an error.
/// One committed expected output of the manifest: the reference's stdout for `args` (at
/// `-t 1`) on `fixture`, stored in `file`.
pub struct Committed {
    pub fixture: PathBuf,
    pub args: Vec<String>,
    pub file: PathBuf,
}

/// Which checks a run makes: modes and families (all when empty), and the families compared
/// for evtx-rs alone.
pub struct Selection<'a> {
    pub modes: &'a [String],
    pub families: &'a [String],
    /// The committed fixtures: `wevt-tools` takes the cache of its `apply-wevt-cache` forms on
    /// every log from there (`wevt_tools::ANY_LOG_FORMS`).
    pub fixtures: &'a Path,
}

const FAMILIES: &[&str] = &[
    "dump",
    "recover",
    "ansi-codec",
    "mta",
    "info",
    "wevt",
    "wevt-tools",
];

pub fn run_parity(
    backends: &Backends,
    inputs: &[Input],
    gaps: &KnownGaps,
    selection: &Selection<'_>,
    committed: &[Committed],
) -> Result<ParityReport, String> {
    let only = selection.modes;
    for name in selection.families {
        if !FAMILIES.contains(&name.as_str()) {
            return Err(format!("no parity family {name:?}"));
        }
    }
    let in_family = |mode: &str| {
        selection.families.is_empty() || selection.families.iter().any(|f| f == family(mode))
    };
    for name in only {
        if name != INFO_MODE
            && name != TOOLS_MODE
            && !name.contains(WEVT_MARK)
            && !name.contains(MTA_MARK)
            && !modes().iter().chain(CODEC_MODES).any(|m| m.name == name)
        {
            return Err(format!("no parity mode {name:?}"));
        }
    }
    let names: Vec<&str> = modes().iter().chain(CODEC_MODES).map(|m| m.name).collect();
    let unknown = gaps.unknown_modes(&names);
    if !unknown.is_empty() {
        return Err(format!("known gaps: {}", unknown.join("; ")));
    }
    let wanted = |mode: &&Mode| {
        (only.is_empty() || only.iter().any(|n| n == mode.name)) && in_family(mode.name)
    };
    let mut report = ParityReport::default();
    let mut checked_committed = 0;
    for (n, input) in inputs.iter().enumerate() {
        eprint!("[{}/{}] {} ", n + 1, inputs.len(), input.label);
        let mut failed_modes = Vec::new();
        let extra = if input.file_name().starts_with("ansi-") {
            CODEC_MODES
        } else {
            &[]
        };
        let mta = mta_modes(&input.path);
        let wevt = wevt_modes(&input.path);
        for mode in modes()
            .iter()
            .chain(extra)
            .chain(&mta)
            .chain(&wevt)
            .filter(wanted)
        {
            let before = report.checks.len();
            let reference = check_mode(backends, input, mode, gaps, &mut report.checks);
            // The manifest's expected output of this (fixture, mode) is the reference's stdout.
            let args = |c: &&Committed| c.args.iter().eq(mode.args.iter());
            for c in committed
                .iter()
                .filter(|c| c.fixture == input.path)
                .filter(args)
            {
                checked_committed += 1;
                if std::fs::read(&c.file).ok().as_deref() != Some(&reference[..]) {
                    report.stale_expected.push(format!(
                        "{} is not the reference's stdout of {} on {}",
                        c.file.display(),
                        mode.args.join(" "),
                        input.label
                    ));
                }
            }
            if report.checks[before..].iter().any(|c| !c.passed) {
                failed_modes.push(mode.name);
            }
        }
        if wanted(&&INFO) {
            let before = report.checks.len();
            check_info(backends, input, &mut report.checks);
            if report.checks[before..].iter().any(|c| !c.passed) {
                failed_modes.push(INFO_MODE);
            }
        }
        if wanted(&&WEVT_TOOLS) {
            let before = report.checks.len();
            check_wevt_tools(backends, input, selection.fixtures, &mut report.checks);
            if report.checks[before..].iter().any(|c| !c.passed) {
                failed_modes.push(TOOLS_MODE);
            }
        }
        if failed_modes.is_empty() {
            eprintln!("ok");
        } else {
            eprintln!("DIFFERS in {}", failed_modes.join(", "));
        }
    }
    if only.is_empty() && selection.families.is_empty() && checked_committed != committed.len() {
        report.incomplete.push(format!(
            "parity compared {checked_committed} of the manifest's {} expected outputs",
            committed.len()
        ));
    }
    if only.is_empty() && selection.families.is_empty() {
        let families = report.families();
        for family in ["dump", "recover", "info"] {
            let compared = families.get(family).map_or(0, |row| row.0);
            if compared != inputs.len() {
                report.incomplete.push(format!(
                    "parity {family} compared {compared} of {} inputs",
                    inputs.len()
                ));
            }
        }
    }
    report.stale_gaps = gaps
        .stale()
        .iter()
        .map(|(g, unused)| {
            format!(
                "{}: explained nothing in {}: {}",
                g.describe(),
                unused.join(", "),
                g.reason
            )
        })
        .collect();
    Ok(report)
}

fn check_mode(
    backends: &Backends,
    input: &Input,
    mode: &Mode,
    gaps: &KnownGaps,
    checks: &mut Vec<Check>,
) -> Vec<u8> {
    // The runs are independent processes: all at once, so two cores are busy (`make test`'s
    // budget); `-t 2` is what the threads pairs compare, so it runs here too.
    let threaded = |program: &Path| {
        mode.threads
            .then(|| run_backend(program, mode, "2", &input.path))
    };
    let ([reference, rust, zig], [rust_threaded, zig_threaded]) = concurrently(
        [&backends.reference, &backends.rust, &backends.zig]
            .map(|program| move || run_backend(program, mode, "1", &input.path)),
        [&backends.rust, &backends.zig].map(|program| move || threaded(program)),
    );
    let path = input.path.to_string_lossy();
    let file = input.file_name();

    for (pair, engine) in [("reference-rust", &rust), ("reference-zig", &zig)] {
        gaps.cover(&file, pair, mode.name);
        let mut differences = reference_differences(&reference, engine, mode, gaps, &file, pair);
        differences.extend(failure_differences(
            &reference, engine, &path, gaps, &file, pair, mode,
        ));
        differences.extend(side_file_difference(&reference, engine, mode));
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

    gaps.cover(&file, "rust-zig", mode.name);
    let differences = twin_differences(&rust, &zig, mode);
    checks.push(finish(
        input,
        mode,
        "rust-zig",
        &rust,
        &zig,
        differences,
        gaps,
    ));

    if let (Some(rust_threaded), Some(zig_threaded)) = (rust_threaded, zig_threaded) {
        for (pair, single, threaded) in [
            ("rust-threads", &rust, rust_threaded),
            ("zig-threads", &zig, zig_threaded),
        ] {
            gaps.cover(&file, pair, mode.name);
            let differences = twin_differences(single, &threaded, mode);
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
    reference.output.stdout
}

/// `info` in every form of `INFO_FORMS`: one check per pair (reference-rust, reference-zig:
/// exit status and stdout byte for byte; rust-zig: stderr line for line too), each naming the
/// form its first difference is in.
fn check_info(backends: &Backends, input: &Input, checks: &mut Vec<Check>) {
    let path = input.path.to_string_lossy();
    let mut differences: [Vec<Difference>; 3] = Default::default();
    let mut last = None;
    for form in INFO_FORMS {
        let argv: Vec<String> = form.split(' ').map(|w| w.replace('@', &path)).collect();
        let argv: Vec<&str> = argv.iter().map(String::as_str).collect();
        let argv = &argv;
        let ([reference, rust, zig], []) = concurrently(
            [&backends.reference, &backends.rust, &backends.zig]
                .map(|program| move || run_argv(program, argv, "1", &input.path)),
            [] as [fn() -> Option<Run>; 0],
        );
        let place = |mut d: Difference| {
            d.at = [format!("`{form}`"), d.at].join(" ").trim_end().to_string();
            d
        };
        for (slot, (expected, actual)) in [(&reference, &rust), (&reference, &zig), (&rust, &zig)]
            .into_iter()
            .enumerate()
        {
            let mut found = status_differences(expected, actual);
            found.extend(text_difference(&expected.stdout, &actual.stdout, "stdout"));
            if slot == 2 {
                found.extend(stderr_differences(expected, actual, &path));
            }
            differences[slot].extend(found.into_iter().map(place));
        }
        last = Some([reference, rust, zig]);
    }
    let Some([reference, rust, zig]) = last else {
        return;
    };
    let no_gaps = KnownGaps::none();
    let pairs = [
        ("reference-rust", &reference, &rust),
        ("reference-zig", &reference, &zig),
        ("rust-zig", &rust, &zig),
    ];
    for ((pair, expected, actual), found) in pairs.into_iter().zip(differences) {
        let mut check = finish(input, &INFO, pair, expected, actual, found, &no_gaps);
        // Not records: the record columns of the report stay the dump modes'.
        (
            check.expected_records,
            check.actual_records,
            check.matching_records,
        ) = (0, 0, 0);
        checks.push(check);
    }
}

/// How `wevt-tools` checks are split and counted: one text, no records.
const WEVT_TOOLS: Mode = mode(TOOLS_MODE, &[], false, false, false, &[]);

/// The template subcommands on a log (`wevt_tools`): one check per pair over every form.
/// Reference against an engine: exit status, stdout (with a fingerprint of the cache a form
/// writes) and stderr (the backtrace the reference adds under `RUST_BACKTRACE` taken out, its
/// `Caused by:` chain compared in full, a damaged PE's or `--cache` file's line mapped by
/// `side_file_lines`); rust-zig: stderr in full.
fn check_wevt_tools(backends: &Backends, input: &Input, fixtures: &Path, checks: &mut Vec<Check>) {
    let out_dir = std::env::temp_dir().join(format!("evtx-parity-wevt-{}", std::process::id()));
    if std::fs::create_dir_all(&out_dir).is_err() {
        return;
    }
    let out = out_dir.join("out.wevtcache");
    let once = input.file_name() == "events.evtx";
    let log_forms = if is_wevt_log(&input.path) {
        wevt_tools::LOG_FORMS
    } else {
        wevt_tools::ANY_LOG_FORMS
    };
    let forms = log_forms
        .iter()
        .chain(if once { wevt_tools::ONCE_FORMS } else { &[] });
    let path = input.path.to_string_lossy();
    let mut differences: [Vec<Difference>; 3] = Default::default();
    let mut last = None;
    for form in forms {
        let (argv, existing) = wevt_tools::argv(form, &input.path, &out, fixtures);
        let argv: Vec<&str> = argv.iter().map(String::as_str).collect();
        let writes = form.starts_with("extract-wevt-templates");
        // One after the other: the forms that write share one output path.
        let [reference, rust, zig] =
            [&backends.reference, &backends.rust, &backends.zig].map(|p| {
                let _ = std::fs::remove_file(&out);
                if existing {
                    let _ = std::fs::write(&out, b"x");
                }
                let mut run = run_argv(p, &argv, "1", &input.path);
                if writes {
                    run.stdout.push_str(&wevt_tools::fingerprint(&out));
                }
                run
            });
        let _ = std::fs::remove_file(&out);
        let place = |mut d: Difference| {
            d.at = [format!("`{form}`"), d.at].join(" ").trim_end().to_string();
            d
        };
        for (slot, (expected, actual)) in [(&reference, &rust), (&reference, &zig), (&rust, &zig)]
            .into_iter()
            .enumerate()
        {
            let mut found = status_differences(expected, actual);
            found.extend(text_difference(&expected.stdout, &actual.stdout, "stdout"));
            if slot == 2 {
                found.extend(stderr_differences(expected, actual, &path));
            } else {
                let left = without_backtrace(&expected.output.stderr);
                let left = if writes {
                    side_file_lines(&left, &actual.output.stderr, None)
                } else if let Some(cache) = wevt_tools::apply_cache(&argv) {
                    // A damaged cache: the one line of the dump's `--wevt-cache`.
                    side_file_lines(&left, &actual.output.stderr, Some(&cache))
                } else {
                    left
                };
                let left = String::from_utf8_lossy(&left);
                let right = String::from_utf8_lossy(&actual.output.stderr);
                found.extend(text_difference(&left, &right, "stderr"));
            }
            differences[slot].extend(found.into_iter().map(place));
        }
        last = Some([reference, rust, zig]);
    }
    let _ = std::fs::remove_dir(&out_dir);
    let Some([reference, rust, zig]) = last else {
        return;
    };
    let no_gaps = KnownGaps::none();
    let pairs = [
        ("reference-rust", &reference, &rust),
        ("reference-zig", &reference, &zig),
        ("rust-zig", &rust, &zig),
    ];
    for ((pair, expected, actual), found) in pairs.into_iter().zip(differences) {
        let mut check = finish(input, &WEVT_TOOLS, pair, expected, actual, found, &no_gaps);
        (
            check.expected_records,
            check.actual_records,
            check.matching_records,
        ) = (0, 0, 0);
        checks.push(check);
    }
}

/// Runs every job of `first` and `second` at once, each on its own thread (they start
/// processes and wait); their results in the order given.
fn concurrently<A: Send, B: Send, const N: usize, const M: usize>(
    first: [impl FnOnce() -> A + Send; N],
    second: [impl FnOnce() -> B + Send; M],
) -> ([A; N], [B; M]) {
    std::thread::scope(|scope| {
        let first = first.map(|job| scope.spawn(job));
        let second = second.map(|job| scope.spawn(job));
        (
            first.map(|handle| handle.join().expect("a parity run panicked")),
            second.map(|handle| handle.join().expect("a parity run panicked")),
        )
    })
}

/// Runs `program argv...` on `input` (`argv` names it); `threads` is what `argv` asked for, for
/// the report (`info` takes no `-t`: "1").
fn run_argv(program: &Path, argv: &[&str], threads: &'static str, input: &Path) -> Run {
    let output = run(program, argv, TIME_LIMIT).unwrap_or_else(|e| Output {
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

/// The index of the first line where `left` and `right` part (the shorter length when one is a
/// prefix of the other).
fn first_differing_line(left: &[&str], right: &[&str]) -> usize {
    left.iter()
        .zip(right)
        .position(|(a, b)| a != b)
        .unwrap_or(left.len().min(right.len()))
}

/// Two texts that must be identical: a `bytes` difference at the first line they part.
fn text_difference(expected: &str, actual: &str, stream: &str) -> Option<Difference> {
    if expected == actual {
        return None;
    }
    let (left, right): (Vec<&str>, Vec<&str>) = (
        expected.split_inclusive('\n').collect(),
        actual.split_inclusive('\n').collect(),
    );
    let first = first_differing_line(&left, &right);
    let show = |lines: &[&str]| match lines.get(first) {
        Some(line) => format!("{line:?}"),
        None => format!("(end of {stream}, {} lines)", lines.len()),
    };
    let mut d = whole_run(Category::Bytes, show(&left), show(&right));
    d.at = format!("{stream} line {}", first + 1);
    Some(d)
}

/// Two runs that must be identical (rust-zig, `-t 1` against `-t 2`): exit status, stdout byte
/// for byte, stderr line for line.
fn twin_differences(expected: &Run, actual: &Run, mode: &Mode) -> Vec<Difference> {
    let path = expected.input.to_string_lossy();
    let mut differences = status_differences(expected, actual);
    if actual.output.timed_out() {
        return differences;
    }
    differences.extend(stdout_differences(
        expected,
        &actual.stdout,
        actual,
        mode,
        &[],
    ));
    differences.extend(stderr_differences(expected, actual, &path));
    differences
}

/// A run the reference refuses for its `--mta` or `--wevt-cache` file (exit 1, no stdout, an
/// `Error:` block): the engine's stderr must be the reference's with its error mapped to our
/// one line (`side_file_lines`: the same file, the same reason), or the
/// reference's text itself where the file is not damaged but unreadable.
fn side_file_difference(reference: &Run, engine: &Run, mode: &Mode) -> Option<Difference> {
    let side = side_file(mode)?;
    let refused = reference.output.status.and_then(|s| s.code()) == Some(1)
        && reference.output.stdout.is_empty()
        && reference.output.stderr.starts_with(b"Error: ");
    if !refused {
        return None;
    }
    let theirs = without_backtrace(&reference.output.stderr);
    let expected = side_file_lines(&theirs, &engine.output.stderr, Some(side));
    text_difference(
        &String::from_utf8_lossy(&expected),
        &String::from_utf8_lossy(&engine.output.stderr),
        "stderr",
    )
}

/// The `--mta` or `--wevt-cache` file of `mode`, if it has one.
fn side_file(mode: &Mode) -> Option<&'static str> {
    mode.args
        .windows(2)
        .find(|w| w[0] == "--mta" || w[0] == "--wevt-cache")
        .map(|w| w[1])
}

/// `stderr` without the line of a damaged side file (`side_file_difference` checks it): the
/// rest are the dump's own error lines.
fn without_side_file_line(stderr: &[u8], mode: &Mode) -> String {
    let text = String::from_utf8_lossy(stderr);
    let Some(side) = side_file(mode) else {
        return text.into_owned();
    };
    let prefix = format!("error: {side}: offset 0x");
    text.split_inclusive('\n')
        .filter(|line| !line.starts_with(&prefix))
        .collect()
}

/// Exit status, timeouts and signals: compared in every pair, whatever stdout holds.
fn status_differences(expected: &Run, actual: &Run) -> Vec<Difference> {
    let (x, y) = (
        expected.output.describe_status(),
        actual.output.describe_status(),
    );
    if x == y {
        return Vec::new();
    }
    let category = if actual.output.timed_out() || expected.output.timed_out() {
        Category::Timeout
    } else {
        Category::Crash
    };
    vec![whole_run(
        category,
        x,
        format!(
            "{y}: {}",
            excerpt(&String::from_utf8_lossy(&actual.output.stderr))
        ),
    )]
}

/// The reference against an engine: exit status, then stdout byte for byte in order. Records a
/// known gap lets the engine print (`extra-record` entries) are taken out of the engine's output
/// first, and each is reported (and explained) as an extra record; what is left must equal the
/// reference's bytes exactly.
fn reference_differences(
    reference: &Run,
    engine: &Run,
    mode: &Mode,
    gaps: &KnownGaps,
    file: &str,
    pair: &str,
) -> Vec<Difference> {
    let mut differences = status_differences(reference, engine);
    if engine.output.timed_out() || reference.output.timed_out() {
        return differences;
    }
    if reference.output.stdout == engine.output.stdout {
        return differences;
    }
    let allowed = gaps.extra_records(file, pair, mode.name);
    let (stripped, removed) = if allowed.is_empty() {
        (engine.stdout.clone(), Vec::new())
    } else {
        strip_records(engine, mode, &allowed)
    };
    differences.extend(removed);
    let ids: Vec<u64> = allowed.iter().map(|&(id, _)| id).collect();
    differences.extend(stdout_differences(reference, &stripped, engine, mode, &ids));
    differences
}

/// When `actual` (an engine's stdout, perhaps with known extra records removed) is not the
/// expected bytes: one `bytes` difference at the first place they differ in order (this is what
/// fails), then the record-by-record explanation (aligned by record id) for the report.
fn stdout_differences(
    expected: &Run,
    actual: &str,
    actual_run: &Run,
    mode: &Mode,
    removed: &[u64],
) -> Vec<Difference> {
    let Some(first) = ordered_difference(&expected.stdout, actual, mode.banner, mode.json) else {
        return Vec::new();
    };
    let mut differences = vec![first];
    let explained = if mode.banner || mode.with_banner.is_empty() {
        let left = split(&expected.stdout, mode.banner);
        let right = split(actual, mode.banner);
        compare_records(&left, &right, mode.json)
    } else {
        // Align by record id: the banner mode prints the same records, each behind `Record N`.
        let rerun = |r: &Run| run_with_args(&r.program, mode.with_banner, r.threads, &r.input);
        let (left_run, right_run) = (rerun(expected), rerun(actual_run));
        let left = split(&left_run.stdout, true);
        let right = split(&right_run.stdout, true);
        compare_records(&left, &right, mode.json)
    };
    differences.extend(explained.into_iter().filter(|d| {
        !(d.category == Category::ExtraRecord
            && d.record_id.is_some_and(|id| removed.contains(&id)))
    }));
    differences
}

/// The engine's stdout without the records `allowed` names (banner modes: the banner and its
/// record; jsonl: the line, its id taken from the same engine's banner mode), and one
/// `extra-record` difference per record taken out. An id with `true` names only its carved
/// copies (banner `Record N (recovered)`, jsonl line `{"recovered":true,...`).
fn strip_records(engine: &Run, mode: &Mode, allowed: &[(u64, bool)]) -> (String, Vec<Difference>) {
    let text = &engine.stdout;
    let line_ids: Vec<Option<(u64, bool)>> = if mode.banner {
        let mut current = None;
        text.split_inclusive('\n')
            .map(|line| {
                if let Some(id) = banner_id(line) {
                    current = Some((id, line.ends_with(" (recovered)\n")));
                }
                current
            })
            .collect()
    } else {
        let banner = run_with_args(
            &engine.program,
            mode.with_banner,
            engine.threads,
            &engine.input,
        );
        let order: Vec<Option<u64>> = split(&banner.stdout, true).iter().map(|r| r.id).collect();
        if order.len() != text.split_inclusive('\n').count() {
            // Cannot tell which line is which record: remove nothing, so the bytes differ.
            return (text.clone(), Vec::new());
        }
        let carved = text
            .split_inclusive('\n')
            .map(|l| l.starts_with("{\"recovered\":true"));
        order
            .into_iter()
            .zip(carved)
            .map(|(id, c)| id.map(|id| (id, c)))
            .collect()
    };
    let strip = |id: u64, carved: bool| {
        allowed
            .iter()
            .any(|&(a, only)| a == id && (carved || !only))
    };
    let mut kept = String::with_capacity(text.len());
    let mut removed: Vec<Difference> = Vec::new();
    for (line, id) in text.split_inclusive('\n').zip(line_ids) {
        match id {
            Some((id, carved)) if strip(id, carved) => match removed.last_mut() {
                Some(last) if last.record_id == Some(id) && mode.banner => {
                    last.actual.push_str(line)
                }
                _ => removed.push(Difference {
                    category: Category::ExtraRecord,
                    record: format!("record {id}"),
                    record_id: Some(id),
                    at: String::new(),
                    expected: String::new(),
                    actual: line.to_string(),
                }),
            },
            _ => kept.push_str(line),
        }
    }
    for d in &mut removed {
        d.actual = excerpt(&d.actual);
    }
    (kept, removed)
}

/// Failed records against the reference: the engine must fail exactly as many records as the
/// reference (or exactly what an `error-records` known gap pins), with well-formed error lines,
/// and where the reference names the record it failed, the engine's line names the same one.
fn failure_differences(
    reference: &Run,
    engine: &Run,
    path: &str,
    gaps: &KnownGaps,
    file: &str,
    pair: &str,
    mode: &Mode,
) -> Vec<Difference> {
    let mut differences = Vec::new();
    let ref_stderr = String::from_utf8_lossy(&reference.output.stderr);
    let expected = reference_failed_records(&ref_stderr);
    let lines = parse_error_lines(&without_side_file_line(&engine.output.stderr, mode), path);
    for raw in lines.iter().filter_map(|l| l.as_ref().err()) {
        differences.push(whole_run(
            Category::ErrorRecords,
            "an error line".into(),
            raw.clone(),
        ));
    }
    let actual: Vec<Option<u64>> = lines
        .iter()
        .map(|l| l.as_ref().ok().and_then(|l| l.record.parse().ok()))
        .collect();
    let describe = |ids: &[Option<u64>]| {
        let shown: Vec<String> = ids
            .iter()
            .map(|i| i.map_or("?".into(), |i| i.to_string()))
            .collect();
        format!("{} failed records [{}]", ids.len(), shown.join(", "))
    };
    if let Some(gap) = gaps.error_records(file, pair, mode.name) {
        let pinned: Vec<Option<u64>> = gap.engine_failures.iter().flatten().copied().collect();
        if gap.reference_failures == Some(expected.len()) && actual == pinned {
            gap.mark_used(pair, mode.name);
        } else {
            differences.push(whole_run(
                Category::ErrorRecords,
                format!(
                    "reference {} (known gap: reference {}, engine {})",
                    describe(&expected),
                    gap.reference_failures.unwrap_or(0),
                    describe(&pinned)
                ),
                describe(&actual),
            ));
        }
        return differences;
    }
    let named_differ = expected.len() == actual.len()
        && expected
            .iter()
            .zip(&actual)
            .any(|(x, y)| x.is_some() && x != y);
    if expected.len() != actual.len() || named_differ {
        differences.push(whole_run(
            Category::ErrorRecords,
            describe(&expected),
            describe(&actual),
        ));
    }
    differences
}

/// stderr line by line, in order and in full (the first differing line is reported): one
/// error vocabulary, kind and detail, in both engines (shared-fixtures/README.md).
fn stderr_differences(expected: &Run, actual: &Run, _path: &str) -> Vec<Difference> {
    if expected.output.stderr == actual.output.stderr {
        return Vec::new();
    }
    let left = String::from_utf8_lossy(&expected.output.stderr);
    let right = String::from_utf8_lossy(&actual.output.stderr);
    let (left, right): (Vec<&str>, Vec<&str>) = (left.lines().collect(), right.lines().collect());
    let first = first_differing_line(&left, &right);
    let show = |lines: &[&str]| match lines.get(first) {
        Some(line) => (*line).to_string(),
        None => format!("({} stderr lines)", lines.len()),
    };
    let mut d = whole_run(Category::ErrorRecords, show(&left), show(&right));
    d.at = format!("stderr line {}", first + 1);
    vec![d]
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
    let expected_records = split(&expected.stdout, mode.banner).len();
    let actual_records = split(&actual.stdout, mode.banner).len();
    let mut counts = BTreeMap::new();
    let mut examples = Vec::new();
    let mut known = Vec::new();
    let mut differing_records = 0;
    for difference in differences {
        if !matches!(
            difference.category,
            Category::ErrorRecords | Category::Bytes
        ) && !difference.record.is_empty()
        {
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
    md.push_str("| check family | inputs | checks | passed | failed |\n|---|---|---|---|---|\n");
    for (family, (inputs, checks, passed)) in report.families() {
        let what = match family {
            "info" => format!("{family} ({} argument forms)", INFO_FORMS.len()),
            "recover" => format!("{family} (`--recover-records`)"),
            _ => family.to_string(),
        };
        md.push_str(&format!(
            "| {what} | {inputs} | {checks} | {passed} | {} |\n",
            checks - passed
        ));
    }
    md.push('\n');
    md.push_str("| pair | checks | passed | records compared | records matching | parity |\n");
    md.push_str("|---|---|---|---|---|---|\n");
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
    if !report.incomplete.is_empty() {
        md.push_str("\n### Incomplete check families (a full run compares every input)\n\n");
        for missing in &report.incomplete {
            md.push_str(&format!("- {missing}\n"));
        }
    }
    if !report.stale_expected.is_empty() {
        md.push_str("\n### Stale expected outputs (shared-fixtures/manifest.json)\n\n");
        for stale in &report.stale_expected {
            md.push_str(&format!("- {stale}\n"));
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

/// The terminal summary: failing checks with their first example, then
/// `parity: N passed, N failed`.
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
    for missing in &report.incomplete {
        eprintln!("INCOMPLETE {missing}");
    }
    for stale in &report.stale_expected {
        eprintln!("STALE expected output (regenerate shared-fixtures): {stale}");
    }
    for note in &report.notes {
        eprintln!("note: {note}");
    }
    let inputs: std::collections::BTreeSet<&str> =
        report.checks.iter().map(|c| c.file.as_str()).collect();
    let mut by_kind: BTreeMap<&str, usize> = BTreeMap::new();
    for input in &inputs {
        *by_kind
            .entry(input.split('/').next().unwrap_or(""))
            .or_default() += 1;
    }
    let kinds: Vec<String> = by_kind.iter().map(|(k, n)| format!("{n} {k}")).collect();
    for (family, (inputs, checks, passed)) in report.families() {
        let forms = if family == "info" {
            format!(" × {} argument forms", INFO_FORMS.len())
        } else {
            String::new()
        };
        println!(
            "parity {family}: {inputs} inputs{forms}, {checks} checks: {passed} passed, {} failed",
            checks - passed
        );
    }
    println!(
        "parity: {} inputs compared ({}), {} checks: {} passed, {} failed",
        inputs.len(),
        kinds.join(", "),
        report.checks.len(),
        report.passed(),
        report.failed()
    );
}

/// The gate must go red on each corruption an audit of the gates planted in a stand-in engine.
#[cfg(test)]
mod tests {
    use super::*;
    use crate::parity::modes::BASE_MODES;
    use std::os::unix::process::ExitStatusExt;
    use std::process::ExitStatus;

    const PATH: &str = "dir/a.evtx";
    const XML: &str = concat!(
        "Record 1\n<E>\n  <A>1</A>\n</E>\n\n",
        "Record 2\n<E>\n  <A>2</A>\n</E>\n\n",
        "Record 3\n<E>\n  <A>3</A>\n</E>\n\n",
    );
    const JSONL: &str = "{\"A\":1}\n{\"A\":2}\n{\"A\":3}\n";

    fn run(stdout: &str, stderr: &str, status: Option<i32>) -> Run {
        Run {
            output: Output {
                stdout: stdout.as_bytes().to_vec(),
                stderr: stderr.as_bytes().to_vec(),
                status: status.map(ExitStatus::from_raw),
            },
            stdout: stdout.to_string(),
            // Never run: the jsonl explanation re-run fails quietly, which only loses detail.
            program: PathBuf::from("/nonexistent/evtx"),
            threads: "1",
            input: PathBuf::from(PATH),
        }
    }

    fn exit(code: i32) -> Option<i32> {
        Some(code << 8)
    }

    fn mode(name: &str) -> &'static Mode {
        modes().iter().find(|m| m.name == name).unwrap()
    }

    fn input() -> Input {
        Input {
            label: "fixtures/a.evtx".into(),
            path: PathBuf::from(PATH),
        }
    }

    /// One reference–engine check, as `check_mode` makes it.
    fn against_reference(reference: &Run, engine: &Run, mode: &Mode, gaps: &KnownGaps) -> Check {
        gaps.cover("a.evtx", "reference-rust", mode.name);
        let mut differences =
            reference_differences(reference, engine, mode, gaps, "a.evtx", "reference-rust");
        differences.extend(failure_differences(
            reference,
            engine,
            PATH,
            gaps,
            "a.evtx",
            "reference-rust",
            mode,
        ));
        finish(
            &input(),
            mode,
            "reference-rust",
            reference,
            engine,
            differences,
            gaps,
        )
    }

    fn twins(left: &Run, right: &Run, mode: &Mode) -> Check {
        let gaps = KnownGaps::from_json("[]");
        finish(
            &input(),
            mode,
            "rust-zig",
            left,
            right,
            twin_differences(left, right, mode),
            &gaps,
        )
    }

    fn no_gaps() -> KnownGaps {
        KnownGaps::from_json("[]")
    }

    fn reversed(text: &str, banner: bool) -> String {
        let records = split(text, banner);
        records
            .iter()
            .rev()
            .map(|r| match r.id {
                Some(id) => format!("Record {id}\n{}", r.text),
                None => r.text.to_string(),
            })
            .collect()
    }

    #[test]
    fn identical_runs_pass() {
        let reference = run(XML, "", exit(0));
        assert!(
            against_reference(&reference, &run(XML, "", exit(0)), mode("xml"), &no_gaps()).passed
        );
        assert!(
            twins(
                &run(JSONL, "", exit(0)),
                &run(JSONL, "", exit(0)),
                mode("jsonl")
            )
            .passed
        );
    }

    #[test]
    fn records_in_reverse_order_fail() {
        let xml = reversed(XML, true);
        let check = against_reference(
            &run(XML, "", exit(0)),
            &run(&xml, "", exit(0)),
            mode("xml"),
            &no_gaps(),
        );
        assert!(!check.passed);
        assert_eq!(check.examples[0].category, Category::Bytes);
        assert_eq!(check.examples[0].at, "position 1");
        let jsonl = reversed(JSONL, false);
        for pair in [
            against_reference(
                &run(JSONL, "", exit(0)),
                &run(&jsonl, "", exit(0)),
                mode("jsonl"),
                &no_gaps(),
            ),
            twins(
                &run(JSONL, "", exit(0)),
                &run(&jsonl, "", exit(0)),
                mode("jsonl"),
            ),
        ] {
            assert!(!pair.passed);
        }
    }

    #[test]
    fn a_junk_line_before_the_first_banner_fails() {
        let junk = format!("junk\n{XML}");
        let check = against_reference(
            &run(XML, "", exit(0)),
            &run(&junk, "", exit(0)),
            mode("xml"),
            &no_gaps(),
        );
        assert!(!check.passed);
        assert_eq!(check.examples[0].at, "before the first record");
        let junk = format!("junk\n{JSONL}");
        assert!(
            !against_reference(
                &run(JSONL, "", exit(0)),
                &run(&junk, "", exit(0)),
                mode("jsonl"),
                &no_gaps()
            )
            .passed
        );
    }

    #[test]
    fn a_trailing_space_on_jsonl_lines_fails() {
        let spaced = JSONL.replace('\n', " \n");
        for name in [
            "jsonl",
            "jsonl-separate-attributes",
            "jsonl-validate-checksums",
        ] {
            let check = against_reference(
                &run(JSONL, "", exit(0)),
                &run(&spaced, "", exit(0)),
                mode(name),
                &no_gaps(),
            );
            assert!(!check.passed, "{name}");
            assert_eq!(check.examples[0].record, "line 1");
        }
    }

    #[test]
    fn exit_134_after_the_full_output_fails_in_every_pair() {
        let (good, aborted) = (run(XML, "", exit(0)), run(XML, "", exit(134)));
        assert!(!against_reference(&good, &aborted, mode("xml"), &no_gaps()).passed);
        assert!(!twins(&good, &aborted, mode("xml")).passed);
        let signalled = run(XML, "", Some(6));
        assert!(!twins(&good, &signalled, mode("xml")).passed);
        let timed_out = run(XML, "", None);
        assert!(!twins(&good, &timed_out, mode("xml")).passed);
        assert!(!against_reference(&timed_out, &good, mode("xml"), &no_gaps()).passed);
    }

    const REF_ERR: &str =
        "Failed to dump the next record.\n\nCaused by:\n    0: Failed to parse record number 2\n";
    const ERR2: &str = "error: dir/a.evtx: chunk 0, record 2, offset 0x1000: bad record: x\n";
    const ERR3: &str = "error: dir/a.evtx: chunk 0, record 3, offset 0x1200: bad record: x\n";

    #[test]
    fn a_dropped_or_invented_error_line_fails() {
        let reference = run(XML, REF_ERR, exit(0));
        assert!(
            against_reference(
                &reference,
                &run(XML, ERR2, exit(0)),
                mode("xml"),
                &no_gaps()
            )
            .passed
        );
        for stderr in [
            "",
            &format!("{ERR2}{ERR3}"),
            ERR3,
            "error: dir/a.evtx: garbage\n",
        ] {
            let check = against_reference(
                &reference,
                &run(XML, stderr, exit(0)),
                mode("xml"),
                &no_gaps(),
            );
            assert!(!check.passed, "{stderr:?}");
        }
        // Between the engines, every stderr line counts in full, the detail included.
        let other = ERR2.replace(": x", ": y");
        assert!(
            !twins(
                &run(XML, ERR2, exit(0)),
                &run(XML, &other, exit(0)),
                mode("xml")
            )
            .passed
        );
        let other = ERR2.replace("bad record", "bad binxml");
        assert!(
            !twins(
                &run(XML, ERR2, exit(0)),
                &run(XML, &other, exit(0)),
                mode("xml")
            )
            .passed
        );
        let (fatal, other) = ("Error: one\n", "Error: two\n");
        assert!(
            !twins(
                &run("", fatal, exit(1)),
                &run("", other, exit(1)),
                mode("xml")
            )
            .passed
        );
        let twice = format!("{ERR2}{ERR2}");
        assert!(
            !twins(
                &run(XML, ERR2, exit(0)),
                &run(XML, &twice, exit(0)),
                mode("xml")
            )
            .passed
        );
        assert!(
            !twins(
                &run(XML, ERR2, exit(0)),
                &run(XML, "", exit(0)),
                mode("xml")
            )
            .passed
        );
    }

    const GAPS: &str = r#"[
        {"file":"a.evtx","pair":"reference-*","mode":"*","category":"extra-record",
         "record":2,"reason":"r"},
        {"file":"a.evtx","pair":"reference-*","mode":"*","category":"error-records",
         "reference_failures":2,"engine_failures":[3],"reason":"r"}]"#;
    const REF_ERRS: &str = concat!(
        "Failed to dump the next record.\n 0: Failed to parse record number 2\n",
        "Failed to dump the next record.\n 0: Failed to parse record number 3\n",
    );

    fn without_record_2(text: &str) -> String {
        text.replace("Record 2\n<E>\n  <A>2</A>\n</E>\n\n", "")
    }

    #[test]
    fn a_known_gap_explains_exactly_what_it_pins() {
        let gaps = KnownGaps::from_json(GAPS);
        let reference = run(&without_record_2(XML), REF_ERRS, exit(0));
        let check = against_reference(&reference, &run(XML, ERR3, exit(0)), mode("xml"), &gaps);
        assert!(check.passed, "{:?}", check.examples);
        assert!(gaps.stale().is_empty());
        // The same gap does not hide a reordering, an extra error line or a missing one.
        let reordered = reversed(XML, true);
        assert!(
            !against_reference(
                &reference,
                &run(&reordered, ERR3, exit(0)),
                mode("xml"),
                &gaps
            )
            .passed
        );
        assert!(
            !against_reference(
                &reference,
                &run(XML, &format!("{ERR2}{ERR3}"), exit(0)),
                mode("xml"),
                &gaps
            )
            .passed
        );
        assert!(!against_reference(&reference, &run(XML, "", exit(0)), mode("xml"), &gaps).passed);
    }

    #[test]
    fn an_xml_only_failure_hidden_by_a_gap_fails() {
        // Both engines fail record 2 in the XML modes only: the extra-record entry explains
        // nothing there (stale), and the failure count is not the pinned one.
        let gaps = KnownGaps::from_json(GAPS);
        let reference = run(&without_record_2(XML), REF_ERRS, exit(0));
        let engine = run(&without_record_2(XML), &format!("{ERR2}{ERR3}"), exit(0));
        let check = against_reference(&reference, &engine, mode("xml"), &gaps);
        assert!(!check.passed);
        let stale = gaps.stale();
        assert_eq!(stale.len(), 2, "both entries explained nothing in xml");
        assert!(stale
            .iter()
            .all(|(_, modes)| modes == &vec!["reference-rust xml".to_string()]));
    }

    #[test]
    fn every_base_mode_has_its_recover_twin() {
        let all = modes();
        assert_eq!(all.len(), 2 * BASE_MODES.len());
        for base in BASE_MODES {
            let twin = mode(&format!("{}-recover", base.name));
            let mut args = base.args.to_vec();
            args.push("--recover-records");
            assert_eq!(twin.args, args.as_slice());
            if !base.with_banner.is_empty() {
                let mut with_banner = base.with_banner.to_vec();
                with_banner.push("--recover-records");
                assert_eq!(twin.with_banner, with_banner.as_slice());
            }
            assert_eq!(
                (twin.banner, twin.json, twin.threads),
                (base.banner, base.json, base.threads)
            );
            assert_eq!(family(twin.name), "recover");
            assert_eq!(family(base.name), "dump");
        }
        assert_eq!(family(INFO_MODE), "info");
        assert_eq!(family("jsonl-ansi-gbk"), "ansi-codec");
    }

    #[test]
    fn info_text_differences_name_the_first_differing_line() {
        let expected = "File header\n  Version: 3.1\nChunks\n";
        assert!(text_difference(expected, expected, "stdout").is_none());
        let d =
            text_difference(expected, "File header\n  Version: 3.1 \nChunks\n", "stdout").unwrap();
        assert_eq!(d.category, Category::Bytes);
        assert_eq!(d.at, "stdout line 2");
        let d = text_difference(expected, "File header\n  Version: 3.1\n", "stdout").unwrap();
        assert_eq!(d.at, "stdout line 3");
        assert_eq!(d.actual, "(end of stdout, 2 lines)");
        assert!(text_difference(expected, "", "stdout").is_some());
    }

    /// A stand-in CLI: a shell script that prints `stdout` whatever its arguments and exits
    /// with `code`.
    fn script(dir: &Path, name: &str, stdout: &str, code: i32) -> PathBuf {
        use std::os::unix::fs::PermissionsExt;
        let path = dir.join(name);
        let body = format!("#!/bin/sh\nprintf '{stdout}'\nexit {code}\n");
        std::fs::write(&path, body).unwrap();
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).unwrap();
        path
    }

    #[test]
    fn info_checks_every_form_and_fail_on_bytes_or_status() {
        let dir = std::env::temp_dir().join(format!("evtx-compare-info-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let text = "File header\\n  Chunks: 1\\n";
        let backends = Backends {
            reference: script(&dir, "reference", text, 0),
            rust: script(&dir, "rust", text, 0),
            zig: script(&dir, "zig", "File header \\n  Chunks: 1\\n", 0),
        };
        let mut checks = Vec::new();
        check_info(&backends, &input(), &mut checks);
        let verdicts: Vec<(&str, bool)> = checks.iter().map(|c| (c.pair, c.passed)).collect();
        assert_eq!(
            verdicts,
            [
                ("reference-rust", true),
                ("reference-zig", false),
                ("rust-zig", false)
            ]
        );
        assert_eq!(checks[1].counts["bytes"], INFO_FORMS.len());
        assert_eq!(checks[1].mode, INFO_MODE);

        let backends = Backends {
            rust: script(&dir, "rust-exit-1", text, 1),
            ..backends
        };
        let mut checks = Vec::new();
        check_info(&backends, &input(), &mut checks);
        assert!(!checks[0].passed);
        assert_eq!(checks[0].counts["crash"], INFO_FORMS.len());
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
