//! The instruction-count gate (PERF.md, "How we measure"): callgrind instructions per record of
//! each engine in W1 (`-t 1 -o jsonl`) and W2 (`-t 1 -o xml`) on one fixed, committed fixture,
//! against a committed baseline. A rise above the tolerance fails; every delta is printed, so a
//! fall is seen and the baseline can be lowered in a commit that says why (`--write --comment
//! WHY`).
//!
//! Instruction counts are deterministic at `-t 1` (no scheduler, no hardware counters), so the
//! gate does not depend on the load of the machine.

use crate::run::run;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::Duration;

/// The workloads: (name in the baseline, `-o` value).
pub const WORKLOADS: [(&str, &str); 2] = [("W1 jsonl", "jsonl"), ("W2 xml", "xml")];

/// The committed baseline (`compare/baselines/instructions.json`).
#[derive(Debug, Serialize, Deserialize, Clone, PartialEq)]
pub struct Baseline {
    /// Why the numbers were last changed (required, so a lowered or raised baseline says why).
    pub comment: String,
    /// The fixture, relative to the baseline file's directory.
    pub fixture: String,
    /// Records in the fixture (a different count means another fixture: the gate fails).
    pub records: u64,
    /// Allowed rise, percent of the baseline.
    pub tolerance_percent: f64,
    /// engine → workload → instructions per record.
    pub instructions_per_record: BTreeMap<String, BTreeMap<String, f64>>,
}

/// One engine × workload measurement against its baseline.
#[derive(Debug, Clone, PartialEq)]
pub struct Row {
    pub engine: String,
    pub workload: String,
    pub baseline: Option<f64>,
    pub now: f64,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Verdict {
    /// Within the tolerance either way.
    Ok,
    /// Lower by more than the tolerance: lower the baseline in a commit that says why.
    Lower,
    /// Higher by more than the tolerance: the gate fails.
    Higher,
    /// Not in the baseline: the gate fails (an engine or workload nobody baselined).
    Missing,
}

impl Row {
    /// Change against the baseline, percent (positive = more instructions).
    pub fn delta_percent(&self) -> Option<f64> {
        self.baseline
            .map(|b| 100.0 * (self.now - b) / b.max(f64::MIN_POSITIVE))
    }

    pub fn verdict(&self, tolerance_percent: f64) -> Verdict {
        match self.delta_percent() {
            None => Verdict::Missing,
            Some(d) if d > tolerance_percent => Verdict::Higher,
            Some(d) if d < -tolerance_percent => Verdict::Lower,
            Some(_) => Verdict::Ok,
        }
    }
}

pub struct Plan<'a> {
    pub baseline: &'a Path,
    /// engine name → the binary callgrind runs (the Zig one built for a CPU valgrind decodes).
    pub engines: Vec<(String, PathBuf)>,
    /// Rewrite the baseline with the measured numbers and this comment instead of judging.
    pub write: Option<String>,
    pub out: &'a Path,
}

pub fn load(path: &Path) -> Result<Baseline, String> {
    let text = std::fs::read_to_string(path).map_err(|e| format!("{}: {e}", path.display()))?;
    let baseline: Baseline =
        serde_json::from_str(&text).map_err(|e| format!("{}: {e}", path.display()))?;
    if baseline.comment.trim().is_empty() {
        return Err(format!(
            "{}: the comment must say why the baseline was last changed",
            path.display()
        ));
    }
    Ok(baseline)
}

/// Runs the gate; `Ok(false)` when a count rose past the tolerance, is missing, or the fixture's
/// record count changed.
pub fn run_gate(plan: &Plan) -> Result<bool, String> {
    let baseline = load(plan.baseline)?;
    let fixture = plan
        .baseline
        .parent()
        .unwrap_or(Path::new("."))
        .join(&baseline.fixture);
    if !fixture.is_file() {
        return Err(format!("fixture {} does not exist", fixture.display()));
    }
    for (engine, program) in &plan.engines {
        if !program.is_file() {
            return Err(format!(
                "{engine}: {} does not exist: run `make build` first",
                program.display()
            ));
        }
    }
    std::fs::create_dir_all(plan.out).map_err(|e| format!("{}: {e}", plan.out.display()))?;
    let mut rows = Vec::new();
    let mut records_seen = Vec::new();
    for (engine, program) in &plan.engines {
        let mut records = 0;
        // W1 first: one line per record in jsonl is the engine's own record count, held to the
        // baseline's and used for both workloads.
        for (workload, format) in WORKLOADS {
            let file = plan.out.join(format!("callgrind.{engine}.{format}.out"));
            let (instructions, stdout) = callgrind(program, &fixture, format, &file)?;
            if format == "jsonl" {
                records = count_lines(&stdout);
                records_seen.push((engine.clone(), records));
            }
            rows.push(Row {
                engine: engine.clone(),
                workload: workload.to_string(),
                baseline: baseline
                    .instructions_per_record
                    .get(engine)
                    .and_then(|w| w.get(workload))
                    .copied(),
                now: instructions as f64 / records.max(1) as f64,
            });
        }
    }
    let mut ok = true;
    for (engine, records) in &records_seen {
        if *records != baseline.records {
            println!(
                "FAIL {engine}: {records} records in {} (the baseline says {}): another fixture \
                    or a lost record",
                fixture.display(),
                baseline.records
            );
            ok = false;
        }
    }
    println!(
        "instructions per record, callgrind -t 1, {} ({} records), tolerance +{}%:",
        baseline.fixture, baseline.records, baseline.tolerance_percent
    );
    for row in &rows {
        println!("{}", describe(row, baseline.tolerance_percent));
        if matches!(
            row.verdict(baseline.tolerance_percent),
            Verdict::Higher | Verdict::Missing
        ) {
            ok = false;
        }
    }
    if let Some(comment) = &plan.write {
        let records = records_seen.first().map_or(0, |(_, r)| *r);
        if records == 0 || records_seen.iter().any(|(_, r)| *r != records) {
            return Err(format!(
                "the engines disagree on the record count: {records_seen:?}"
            ));
        }
        let mut updated = rewrite(&baseline, &rows, comment);
        updated.records = records;
        let text = serde_json::to_string_pretty(&updated).map_err(|e| e.to_string())? + "\n";
        std::fs::write(plan.baseline, text)
            .map_err(|e| format!("{}: {e}", plan.baseline.display()))?;
        println!(
            "instructions: wrote {} (commit it with a message that says why)",
            plan.baseline.display()
        );
        return Ok(true);
    }
    println!(
        "instructions: {}",
        if ok {
            "pass"
        } else {
            "FAIL (a rise above the tolerance, a missing baseline or a changed record count)"
        }
    );
    Ok(ok)
}

/// One line per measurement, starting with its verdict: baseline, now, delta, what to do.
pub fn describe(row: &Row, tolerance_percent: f64) -> String {
    let name = format!("{} {}", row.engine, row.workload);
    match (row.baseline, row.delta_percent()) {
        (Some(base), Some(delta)) => {
            let (tag, note) = match row.verdict(tolerance_percent) {
                Verdict::Ok => ("ok  ", ""),
                Verdict::Lower => ("LOW ", "  (lower the baseline in a commit that says why)"),
                Verdict::Higher => ("FAIL", "  (rose past the tolerance)"),
                Verdict::Missing => unreachable!("a baseline is present"),
            };
            format!(
                "{tag} {name:<18} baseline {base:>9.1}  now {:>9.1}  {delta:+6.2}%{note}",
                row.now
            )
        }
        _ => format!(
            "FAIL {name:<18} baseline      none  now {:>9.1}  (not in the baseline)",
            row.now
        ),
    }
}

/// The baseline with the measured numbers (one decimal) and a new comment.
pub fn rewrite(baseline: &Baseline, rows: &[Row], comment: &str) -> Baseline {
    let mut updated = baseline.clone();
    updated.comment = comment.to_string();
    for row in rows {
        updated
            .instructions_per_record
            .entry(row.engine.clone())
            .or_default()
            .insert(row.workload.clone(), (row.now * 10.0).round() / 10.0);
    }
    updated
}

fn count_lines(bytes: &[u8]) -> u64 {
    bytes.iter().filter(|&&b| b == b'\n').count() as u64
}

/// Instructions of one `-t 1` run (callgrind's `totals:` line) and the engine's stdout.
fn callgrind(
    program: &Path,
    input: &Path,
    format: &str,
    file: &Path,
) -> Result<(u64, Vec<u8>), String> {
    callgrind_with(program, &["-t", "1", "-o", format], input, file)
}

/// Instructions of one run of `program ARGS... INPUT` under callgrind (its `totals:` line)
/// and the program's stdout.
pub fn callgrind_with(
    program: &Path,
    args: &[&str],
    input: &Path,
    file: &Path,
) -> Result<(u64, Vec<u8>), String> {
    let out_arg = format!("--callgrind-out-file={}", file.display());
    let program_arg = program.to_string_lossy();
    let input_arg = input.to_string_lossy();
    let mut argv = vec!["--tool=callgrind", out_arg.as_str(), &program_arg];
    argv.extend_from_slice(args);
    argv.push(&input_arg);
    let output =
        run(Path::new("valgrind"), &argv, Duration::from_secs(600)).map_err(|e| e.to_string())?;
    if !output.status.is_some_and(|s| s.success()) {
        return Err(format!(
            "valgrind {} on {} {}: {}",
            output.describe_status(),
            program.display(),
            args.join(" "),
            String::from_utf8_lossy(&output.stderr)
                .lines()
                .last()
                .unwrap_or("")
        ));
    }
    let text = std::fs::read_to_string(file).map_err(|e| format!("{}: {e}", file.display()))?;
    let total = totals(&text).ok_or_else(|| format!("{}: no totals line", file.display()))?;
    Ok((total, output.stdout))
}

/// The `totals:` (or, in older formats, `summary:`) line of a callgrind output file: the first
/// event, `Ir`.
pub fn totals(text: &str) -> Option<u64> {
    text.lines()
        .find_map(|l| {
            l.strip_prefix("totals:")
                .or_else(|| l.strip_prefix("summary:"))
        })
        .and_then(|rest| rest.split_whitespace().next()?.parse().ok())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn baseline(rs_w1: f64) -> Baseline {
        let mut engines = BTreeMap::new();
        let mut rs = BTreeMap::new();
        rs.insert("W1 jsonl".to_string(), rs_w1);
        engines.insert("evtx-rs".to_string(), rs);
        Baseline {
            comment: "planted".into(),
            fixture: "f.evtx".into(),
            records: 10,
            tolerance_percent: 2.0,
            instructions_per_record: engines,
        }
    }

    fn row(baseline: Option<f64>, now: f64) -> Row {
        Row {
            engine: "evtx-rs".into(),
            workload: "W1 jsonl".into(),
            baseline,
            now,
        }
    }

    #[test]
    fn a_rise_past_the_tolerance_fails_and_a_fall_is_reported() {
        // A planted baseline 3 % below the measurement: the gate must fail.
        assert_eq!(row(Some(10_000.0), 10_300.0).verdict(2.0), Verdict::Higher);
        // Just inside the tolerance either way.
        assert_eq!(row(Some(10_000.0), 10_199.0).verdict(2.0), Verdict::Ok);
        assert_eq!(row(Some(10_000.0), 9_801.0).verdict(2.0), Verdict::Ok);
        // A fall past it is visible, not a failure.
        assert_eq!(row(Some(10_000.0), 9_000.0).verdict(2.0), Verdict::Lower);
        assert_eq!(row(None, 9_000.0).verdict(2.0), Verdict::Missing);
        let line = describe(&row(Some(10_000.0), 9_000.0), 2.0);
        assert!(
            line.starts_with("LOW") && line.contains("-10.00%"),
            "{line}"
        );
        let line = describe(&row(Some(10_000.0), 10_300.0), 2.0);
        assert!(
            line.starts_with("FAIL") && line.contains("+3.00%"),
            "{line}"
        );
    }

    #[test]
    fn rewrite_keeps_the_fixture_and_records_the_reason() {
        let rows = [row(Some(10_000.0), 9_123.456)];
        let updated = rewrite(&baseline(10_000.0), &rows, "H20: simd escaper");
        assert_eq!(updated.comment, "H20: simd escaper");
        assert_eq!(
            updated.instructions_per_record["evtx-rs"]["W1 jsonl"],
            9_123.5
        );
        assert_eq!(updated.fixture, "f.evtx");
        assert_eq!(updated.records, 10);
    }

    #[test]
    fn reads_callgrind_totals() {
        let text = "version: 1\ncreator: callgrind-3.19.0\nevents: Ir\nfn=(1) main\n3 5\nsummary: \
            123456\ntotals: 123456\n";
        assert_eq!(totals(text), Some(123_456));
        assert_eq!(totals("events: Ir\n"), None);
    }

    #[test]
    fn the_committed_baseline_parses_and_names_both_engines_and_workloads() {
        let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("../baselines/instructions.json");
        let baseline = load(&path).unwrap();
        for engine in ["evtx-rs", "evtx-zig"] {
            for (workload, _) in WORKLOADS {
                assert!(
                    baseline.instructions_per_record[engine][workload] > 0.0,
                    "{engine} {workload}"
                );
            }
        }
        assert!(path.parent().unwrap().join(&baseline.fixture).is_file());
        assert!(baseline.tolerance_percent > 0.0 && baseline.tolerance_percent <= 2.0);
    }
}
