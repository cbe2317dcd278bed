//! The report's triage section: `triage` (an extension beyond the reference) against the same
//! engine's full dump, and how many small logs a second one run gets through.
//!
//! The ratio is paired (`paired.rs`): each round runs both engines' `-t 1 -o jsonl` full dumps
//! and their `triage LOG` (text, its defaults) once; three sets of rounds per log. The fleet
//! figure: a directory of hard links to one small committed fixture (`FLEET_FILES` of them),
//! triaged in one run, against a run on the fixture alone, so the cost per file and the
//! process's own start are told apart.

use crate::perf::paired::{self, Contender, Ratio};
use crate::perf::speed::display;
use crate::run::Backends;
use serde::Serialize;
use std::path::{Path, PathBuf};

const RUNS: usize = 3;
const ROUNDS: usize = 15;
const WARMUP: usize = 2;
/// Logs in the fleet directory.
const FLEET_FILES: usize = 1000;
const FLEET_ROUNDS: usize = 5;

#[derive(Debug, Serialize, Clone)]
pub struct TriageRow {
    pub input: String,
    pub backend: &'static str,
    pub run: usize,
    pub triage_ms: f64,
    pub full_ms: f64,
    /// The engine's full jsonl dump over its triage, round by round.
    pub vs_own_full: Ratio,
}

#[derive(Debug, Serialize, Clone)]
pub struct FleetRow {
    pub backend: &'static str,
    pub files: usize,
    pub file_bytes: u64,
    /// Median wall time of the run over the whole directory.
    pub fleet_ms: f64,
    /// Median wall time of a run on the one log.
    pub single_ms: f64,
    pub files_per_second: f64,
}

#[derive(Debug, Serialize, Default)]
pub struct TriageReport {
    pub rows: Vec<TriageRow>,
    pub fleet: Vec<FleetRow>,
    pub notes: Vec<String>,
}

/// Measures every input, then the fleet of `small` (a committed fixture) when given.
pub fn run_triage_speed(
    backends: &Backends,
    inputs: &[PathBuf],
    small: Option<&Path>,
    out: &Path,
) -> TriageReport {
    let mut report = TriageReport::default();
    for input in inputs {
        for run_index in 1..=RUNS {
            eprintln!("triage rounds: {} run {run_index}", display(input));
            match triage_rounds(backends, input, run_index) {
                Ok(mut rows) => report.rows.append(&mut rows),
                Err(e) => report.notes.push(format!("triage {}: {e}", display(input))),
            }
        }
    }
    if let Some(small) = small {
        match fleet(backends, small, out) {
            Ok(mut rows) => report.fleet.append(&mut rows),
            Err(e) => report.notes.push(format!("triage fleet: {e}")),
        }
    }
    report
}

fn engines(backends: &Backends) -> [(&'static str, &Path); 2] {
    [("rust", &backends.rust), ("zig", &backends.zig)]
}

fn triage_rounds(
    backends: &Backends,
    input: &Path,
    run_index: usize,
) -> Result<Vec<TriageRow>, String> {
    let path = input.to_string_lossy().into_owned();
    let mut contenders = Vec::new();
    for (backend, program) in engines(backends) {
        contenders.push(Contender {
            name: format!("{backend}-full"),
            program: program.to_path_buf(),
            args: vec![
                "-t".into(),
                "1".into(),
                "-o".into(),
                "jsonl".into(),
                path.clone(),
            ],
        });
        contenders.push(Contender {
            name: format!("{backend}-triage"),
            program: program.to_path_buf(),
            args: vec!["triage".into(), path.clone()],
        });
    }
    let rounds = paired::run_rounds(&contenders, ROUNDS, WARMUP)?;
    Ok(engines(backends)
        .iter()
        .enumerate()
        .map(|(i, &(backend, _))| TriageRow {
            input: display(input),
            backend,
            run: run_index,
            triage_ms: rounds.median_wall(2 * i + 1) * 1e3,
            full_ms: rounds.median_wall(2 * i) * 1e3,
            vs_own_full: rounds.ratio(2 * i, 2 * i + 1),
        })
        .collect())
}

/// `FLEET_FILES` hard links to `small` in a fresh directory under `out` (copies where the
/// file system refuses links), triaged in one run.
fn fleet(backends: &Backends, small: &Path, out: &Path) -> Result<Vec<FleetRow>, String> {
    let dir = out.join("triage-fleet");
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).map_err(|e| e.to_string())?;
    for i in 0..FLEET_FILES {
        let link = dir.join(format!("log-{i:04}.evtx"));
        if std::fs::hard_link(small, &link).is_err() {
            std::fs::copy(small, &link).map_err(|e| e.to_string())?;
        }
    }
    let file_bytes = std::fs::metadata(small).map_err(|e| e.to_string())?.len();
    let mut contenders = Vec::new();
    for (backend, program) in engines(backends) {
        for target in [&dir, small] {
            contenders.push(Contender {
                name: format!("{backend}-fleet"),
                program: program.to_path_buf(),
                args: vec!["triage".into(), target.to_string_lossy().into_owned()],
            });
        }
    }
    eprintln!("triage fleet: {FLEET_FILES} links to {}", small.display());
    let rounds = paired::run_rounds(&contenders, FLEET_ROUNDS, 1)?;
    let _ = std::fs::remove_dir_all(&dir);
    Ok(engines(backends)
        .iter()
        .enumerate()
        .map(|(i, &(backend, _))| {
            let fleet_s = rounds.median_wall(2 * i);
            FleetRow {
                backend,
                files: FLEET_FILES,
                file_bytes,
                fleet_ms: fleet_s * 1e3,
                single_ms: rounds.median_wall(2 * i + 1) * 1e3,
                files_per_second: FLEET_FILES as f64 / fleet_s,
            }
        })
        .collect())
}

/// The report's section (empty when nothing ran).
pub fn markdown(report: &TriageReport) -> String {
    use std::fmt::Write as _;
    if report.rows.is_empty() && report.fleet.is_empty() && report.notes.is_empty() {
        return String::new();
    }
    let mut md = String::from(
        "\n## Triage (`triage LOG`, an extension)\n\nPaired rounds: each round runs both \
        engines' `-t 1 -o jsonl` full dumps and their `triage LOG` once; a cell is the full \
        dump's time over triage's (the median of the rounds' own ratios), one value per set of \
        rounds.\n\n| input | rust × own full dump | zig × own full dump | rust triage ms | zig \
        triage ms |\n|---|---|---|---|---|\n",
    );
    let mut inputs: Vec<&str> = report.rows.iter().map(|r| r.input.as_str()).collect();
    inputs.dedup();
    for input in inputs {
        let cell = |backend: &str, ms: bool| {
            report
                .rows
                .iter()
                .filter(|r| r.input == input && r.backend == backend)
                .map(|r| {
                    if ms {
                        format!("{:.1}", r.triage_ms)
                    } else {
                        format!("{:.2}", r.vs_own_full.median)
                    }
                })
                .collect::<Vec<_>>()
                .join(", ")
        };
        let _ = writeln!(
            md,
            "| {input} | {} | {} | {} | {} |",
            cell("rust", false),
            cell("zig", false),
            cell("rust", true),
            cell("zig", true)
        );
    }
    if !report.fleet.is_empty() {
        md.push_str(
            "\nMany small logs in one run: a directory of hard links to one committed fixture, \
            against a run on that fixture alone (medians of paired rounds).\n\n| backend | logs \
            | bytes each | one run over all ms | one log alone ms | logs per second \
            |\n|---|---|---|---|---|---|\n",
        );
        for f in &report.fleet {
            let _ = writeln!(
                md,
                "| {} | {} | {} | {:.1} | {:.1} | {:.0} |",
                f.backend, f.files, f.file_bytes, f.fleet_ms, f.single_ms, f.files_per_second
            );
        }
    }
    for note in &report.notes {
        let _ = writeln!(md, "\n- {note}");
    }
    md
}
