//! Speed: the harness through the C ABI, hyperfine for the CLIs, peak RSS, and callgrind
//! instruction counts (the stable figure on these noisy machines without hardware counters).

use crate::perf::paired::{self, Contender, Ratio};
use crate::perf::{filters, phases, settle, triage_speed};
use crate::run::run;
use crate::run::Backends;
use serde::Serialize;
use serde_json::Value;
use std::path::{Path, PathBuf};
use std::time::Duration;

pub struct SpeedPlan {
    pub backends: Backends,
    /// The Zig CLI built for a CPU valgrind can decode (no AVX-512), for callgrind.
    pub zig_callgrind: PathBuf,
    pub inputs: Vec<PathBuf>,
    pub harness: PathBuf,
    pub lib_dir: PathBuf,
    pub runs: u32,
    pub callgrind: bool,
    /// Whether to measure the extensions too: the record filters (`filters.rs`) and triage
    /// (`triage_speed.rs`, its fleet of links to `fleet_log` when given).
    pub extensions: bool,
    pub fleet_log: Option<PathBuf>,
    pub out: PathBuf,
}

#[derive(Debug, Serialize, Clone)]
pub struct Timing {
    pub input: String,
    pub input_bytes: u64,
    pub records: u64,
    pub format: &'static str,
    pub threads: u32,
    pub backend: &'static str,
    pub median_s: f64,
    pub min_s: f64,
    pub max_s: f64,
    pub mb_per_s: f64,
    pub ns_per_record: f64,
}

/// One backend at one thread count from the paired rounds of an input and format.
#[derive(Debug, Serialize, Clone)]
pub struct PairedRow {
    pub input: String,
    pub format: &'static str,
    pub threads: u32,
    pub backend: &'static str,
    pub median_ms: f64,
    pub cpu_ms: f64,
    /// The reference at the same thread count over this backend, round by round.
    pub vs_reference: Ratio,
    /// This backend's `-t 1` over its `-t 2`, round by round (the `-t 2` rows only).
    pub vs_own_t1: Option<Ratio>,
}

#[derive(Debug, Serialize)]
pub struct PeakRss {
    pub input: String,
    pub backend: &'static str,
    pub threads: u32,
    pub max_rss_kib: u64,
}

#[derive(Debug, Serialize)]
pub struct Profile {
    pub input: String,
    pub backend: &'static str,
    pub format: &'static str,
    pub instructions: u64,
    pub records: u64,
    pub instructions_per_record: f64,
    pub top_functions: Vec<HotFunction>,
    /// Instructions per record in each of `phases::PHASES`.
    pub phases: Vec<(&'static str, f64)>,
    /// Patterns of this backend's phase groups that matched no function in this profile.
    pub stale_patterns: Vec<String>,
    /// Calls to allocation entry points (`phases::ALLOCATION_CALLS`) in the whole run.
    pub allocation_calls: u64,
}

/// (function, self instructions, percent of the total)
pub type HotFunction = (String, u64, f64);

#[derive(Debug, Serialize, Default)]
pub struct SpeedReport {
    pub timings: Vec<Timing>,
    /// The verdict's ratios: interleaved rounds (`paired.rs`), not hyperfine's blocks.
    pub paired: Vec<PairedRow>,
    pub rss: Vec<PeakRss>,
    pub profiles: Vec<Profile>,
    /// The harness's own `--json` output, as it wrote it.
    pub harness: Option<Value>,
    /// How the inputs' page cache was put in one state before timing (`settle.rs`), if it was.
    pub settled: Option<&'static str>,
    /// The record filters against full dumps (`filters.rs`), when they ran.
    pub filters: filters::FilterReport,
    /// Triage against full dumps (`triage_speed.rs`), when it ran.
    pub triage: triage_speed::TriageReport,
    pub notes: Vec<String>,
}

/// The two workloads every speed figure is measured in: W1 and W2.
pub const FORMATS: [&str; 2] = ["jsonl", "xml"];
const THREADS: [u32; 2] = [1, 2];
/// Kept rounds per input and format; each round runs six commands (~0.5 s on a 30 MB log).
const PAIRED_ROUNDS: usize = 30;
const PAIRED_WARMUP: usize = 3;

fn backend_list(backends: &Backends) -> [(&'static str, &Path); 3] {
    [
        ("reference", &backends.reference),
        ("rust", &backends.rust),
        ("zig", &backends.zig),
    ]
}

pub fn run_speed(plan: &SpeedPlan) -> SpeedReport {
    let mut report = SpeedReport::default();
    if plan.inputs.is_empty() {
        report
            .notes
            .push("no benchmark inputs: run `make fixtures`".into());
        return report;
    }
    settle_inputs(plan, &mut report);
    run_harness(plan, &mut report);
    for input in &plan.inputs {
        let records = count_records(&plan.backends.reference, input);
        eprintln!("hyperfine: {} ({} records)", input.display(), records);
        for format in FORMATS {
            eprintln!("paired rounds: {format}, {PAIRED_ROUNDS} rounds");
            match paired_rows(&plan.backends, input, format) {
                Ok(mut rows) => report.paired.append(&mut rows),
                Err(e) => report.notes.push(format!("paired {format}: {e}")),
            }
        }
        for threads in THREADS {
            for format in FORMATS {
                match hyperfine(
                    &plan.backends,
                    input,
                    format,
                    threads,
                    plan.runs,
                    &plan.out,
                    records,
                ) {
                    Ok(mut timings) => report.timings.append(&mut timings),
                    Err(e) => report
                        .notes
                        .push(format!("hyperfine {format} -t {threads}: {e}")),
                }
            }
            for (backend, program) in backend_list(&plan.backends) {
                match peak_rss(program, input, threads, &plan.out) {
                    Ok(kib) => report.rss.push(PeakRss {
                        input: display(input),
                        backend,
                        threads,
                        max_rss_kib: kib,
                    }),
                    Err(e) => report.notes.push(format!("peak RSS of {backend}: {e}")),
                }
            }
        }
    }
    if plan.callgrind {
        let input = &plan.inputs[0];
        let records = count_records(&plan.backends.reference, input);
        for format in FORMATS {
            for (backend, program) in backend_list(&plan.backends) {
                let program = if backend == "zig" && plan.zig_callgrind.is_file() {
                    &plan.zig_callgrind
                } else {
                    program
                };
                eprintln!("callgrind: {backend} -o {format}");
                match callgrind(program, input, format, &plan.out, backend) {
                    Ok(measured) => report.profiles.push(Profile {
                        input: display(input),
                        backend,
                        format,
                        instructions: measured.instructions,
                        records,
                        instructions_per_record: measured.instructions as f64
                            / records.max(1) as f64,
                        top_functions: measured.top,
                        phases: phases::PHASES
                            .iter()
                            .zip(measured.phases)
                            .map(|(p, n)| (*p, n as f64 / records.max(1) as f64))
                            .collect(),
                        stale_patterns: measured.stale,
                        allocation_calls: measured.allocation_calls,
                    }),
                    Err(e) => report
                        .notes
                        .push(format!("callgrind {backend} {format}: {e}")),
                }
            }
        }
    }
    run_extensions(plan, report)
}

/// The extensions' sections, when the plan asks for them: the record filters and triage.
fn run_extensions(plan: &SpeedPlan, mut report: SpeedReport) -> SpeedReport {
    if !plan.extensions {
        return report;
    }
    report.filters = filters::run_filters(
        &plan.backends,
        &plan.zig_callgrind,
        &plan.inputs,
        plan.callgrind,
        &plan.out,
    );
    report.triage = triage_speed::run_triage_speed(
        &plan.backends,
        &plan.inputs,
        plan.fleet_log.as_deref(),
        &plan.out,
    );
    report
}

/// Every input in one page-cache state before any timing (`settle.rs`, PERF.md H189); a
/// failure is a note and the timing goes on in whatever state the cache is.
fn settle_inputs(plan: &SpeedPlan, report: &mut SpeedReport) {
    let mut settled = true;
    for input in &plan.inputs {
        if let Err(e) = settle::settle(input) {
            report.notes.push(format!("page cache not settled: {e}"));
            settled = false;
        }
    }
    report.settled = settled.then_some(settle::METHOD);
}

/// A log's file name, as the report's rows name it.
pub fn display(path: &Path) -> String {
    path.file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default()
}

fn count_records(reference: &Path, input: &Path) -> u64 {
    let path = input.to_string_lossy();
    run(
        reference,
        &["-t", "2", "-o", "jsonl", &path],
        Duration::from_secs(600),
    )
    .map(|o| o.stdout.iter().filter(|&&b| b == b'\n').count() as u64)
    .unwrap_or(0)
}

/// The harness through the C ABI, once per format; its per-backend rows are merged into
/// `{"results": [...]}`. The harness itself fails when the backends' output hashes differ.
fn run_harness(plan: &SpeedPlan, report: &mut SpeedReport) {
    if !plan.harness.is_file() {
        report.notes.push(format!(
            "no harness at {}: the C ABI step is skipped",
            plan.harness.display()
        ));
        return;
    }
    let mut rows = Vec::new();
    for format in FORMATS {
        let json_path = plan.out.join(format!("harness-{format}.json"));
        let mut args: Vec<String> = vec![
            "--json".into(),
            json_path.to_string_lossy().into_owned(),
            "--format".into(),
            format.into(),
            "--runs".into(),
            plan.runs.to_string(),
        ];
        for lib in ["libevtx_ref.so", "libevtx_rs.so", "libevtx_zig.so"] {
            args.push("--lib".into());
            args.push(plan.lib_dir.join(lib).to_string_lossy().into_owned());
        }
        args.extend(plan.inputs.iter().map(|p| p.to_string_lossy().into_owned()));
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        eprintln!("harness: {} {}", plan.harness.display(), args.join(" "));
        match run(&plan.harness, &args, Duration::from_secs(1800)) {
            Ok(output) if output.status.is_some_and(|s| s.success()) => {
                let parsed: Option<Value> = std::fs::read_to_string(&json_path)
                    .ok()
                    .and_then(|t| serde_json::from_str(&t).ok());
                match parsed.as_ref().and_then(|v| v["results"].as_array()) {
                    Some(results) => rows.extend(results.iter().cloned()),
                    None => report.notes.push(format!(
                        "harness {format}: no results in {}",
                        json_path.display()
                    )),
                }
            }
            Ok(output) => report.notes.push(format!(
                "harness {format} failed ({}): {}",
                output.describe_status(),
                crate::run::excerpt(&String::from_utf8_lossy(&output.stderr))
            )),
            Err(e) => report.notes.push(format!("harness {format}: {e}")),
        }
    }
    if !rows.is_empty() {
        report.harness = Some(serde_json::json!({ "results": rows }));
    }
}

/// The three CLIs at `-t 1` and `-t 2` in one set of interleaved rounds, so every ratio
/// (against the reference, and `-t 2` against the backend's own `-t 1`) pairs runs of the
/// same second.
fn paired_rows(
    backends: &Backends,
    input: &Path,
    format: &'static str,
) -> Result<Vec<PairedRow>, String> {
    let mut contenders = Vec::new();
    let mut keys = Vec::new();
    for threads in THREADS {
        for (backend, program) in backend_list(backends) {
            contenders.push(Contender {
                name: format!("{backend}-t{threads}"),
                program: program.to_path_buf(),
                args: vec![
                    "-t".into(),
                    threads.to_string(),
                    "-o".into(),
                    format.into(),
                    input.to_string_lossy().into_owned(),
                ],
            });
            keys.push((backend, threads));
        }
    }
    let rounds = paired::run_rounds(&contenders, PAIRED_ROUNDS, PAIRED_WARMUP)?;
    let at = |backend: &str, threads: u32| {
        keys.iter()
            .position(|&k| k == (backend, threads))
            .expect("every backend runs at every thread count")
    };
    Ok(keys
        .iter()
        .enumerate()
        .map(|(i, &(backend, threads))| PairedRow {
            input: display(input),
            format,
            threads,
            backend,
            median_ms: rounds.median_wall(i) * 1e3,
            cpu_ms: rounds.cpu[i] * 1e3,
            vs_reference: rounds.ratio(at("reference", threads), i),
            vs_own_t1: (threads != 1).then(|| rounds.ratio(at(backend, 1), i)),
        })
        .collect())
}

/// One hyperfine invocation comparing the three CLIs, so their ratio comes from one run.
fn hyperfine(
    backends: &Backends,
    input: &Path,
    format: &'static str,
    threads: u32,
    runs: u32,
    out: &Path,
    records: u64,
) -> Result<Vec<Timing>, String> {
    let json = out.join(format!(
        "hyperfine-{}-{format}-t{threads}.json",
        display(input)
    ));
    let mut args: Vec<String> = [
        "-N",
        "--warmup",
        "2",
        "--runs",
        &runs.to_string(),
        "--output",
        "null",
        "--style",
        "basic",
    ]
    .iter()
    .map(|s| s.to_string())
    .collect();
    args.extend([
        "--export-json".to_string(),
        json.to_string_lossy().into_owned(),
    ]);
    for (name, program) in backend_list(backends) {
        args.extend([
            "-n".into(),
            name.into(),
            format!(
                "{} -t {threads} -o {format} {}",
                program.display(),
                input.display()
            ),
        ]);
    }
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let output =
        run(Path::new("hyperfine"), &args, Duration::from_secs(3600)).map_err(|e| e.to_string())?;
    if !output.status.is_some_and(|s| s.success()) {
        return Err(crate::run::excerpt(&String::from_utf8_lossy(
            &output.stderr,
        )));
    }
    let text = std::fs::read_to_string(&json).map_err(|e| e.to_string())?;
    let value: Value = serde_json::from_str(&text).map_err(|e| e.to_string())?;
    let input_bytes = std::fs::metadata(input).map(|m| m.len()).unwrap_or(0);
    let mut timings = Vec::new();
    for ((backend, _), result) in backend_list(backends)
        .iter()
        .zip(value["results"].as_array().into_iter().flatten())
    {
        let median_s = result["median"].as_f64().unwrap_or(f64::NAN);
        timings.push(Timing {
            input: display(input),
            input_bytes,
            records,
            format,
            threads,
            backend,
            median_s,
            min_s: result["min"].as_f64().unwrap_or(f64::NAN),
            max_s: result["max"].as_f64().unwrap_or(f64::NAN),
            mb_per_s: input_bytes as f64 / 1e6 / median_s,
            ns_per_record: median_s * 1e9 / records.max(1) as f64,
        });
    }
    Ok(timings)
}

/// Peak resident set size (KiB) from GNU time's `%M`, written to a file beside the reports.
fn peak_rss(program: &Path, input: &Path, threads: u32, out: &Path) -> Result<u64, String> {
    let stats = out.join("peak-rss.txt");
    let (stats_arg, program, input) = (
        stats.to_string_lossy(),
        program.to_string_lossy(),
        input.to_string_lossy(),
    );
    let threads = threads.to_string();
    let args = [
        "-f", "%M", "-o", &stats_arg, &program, "-t", &threads, "-o", "jsonl", &input,
    ];
    run(Path::new("/usr/bin/time"), &args, Duration::from_secs(600)).map_err(|e| e.to_string())?;
    let text = std::fs::read_to_string(&stats).map_err(|e| e.to_string())?;
    text.trim()
        .lines()
        .last()
        .and_then(|l| l.trim().parse().ok())
        .ok_or_else(|| format!("unexpected output {text:?}"))
}

/// What one callgrind run gives the report.
pub struct Measured {
    pub instructions: u64,
    pub top: Vec<HotFunction>,
    /// Instructions in each of `phases::PHASES`.
    pub phases: [u64; phases::PHASES.len()],
    pub stale: Vec<String>,
    pub allocation_calls: u64,
}

/// One `-t 1` run (`threads` otherwise) under callgrind: the instruction count, the top
/// functions by self cost, the phase split and the allocation calls.
pub fn callgrind_run(
    program: &Path,
    input: &Path,
    format: &str,
    threads: u32,
    file: &Path,
    backend: &str,
) -> Result<Measured, String> {
    let out_arg = format!("--callgrind-out-file={}", file.display());
    let program = program.to_string_lossy();
    let input = input.to_string_lossy();
    let threads = threads.to_string();
    let args = [
        "--tool=callgrind",
        out_arg.as_str(),
        &program,
        "-t",
        &threads,
        "-o",
        format,
        &input,
    ];
    let output =
        run(Path::new("valgrind"), &args, Duration::from_secs(1800)).map_err(|e| e.to_string())?;
    if !output.status.is_some_and(|s| s.success()) {
        return Err(format!("valgrind {}", output.describe_status()));
    }
    let annotate = run(
        Path::new("callgrind_annotate"),
        &[
            "--inclusive=no",
            "--threshold=100",
            "--auto=no",
            &file.to_string_lossy(),
        ],
        Duration::from_secs(300),
    )
    .map_err(|e| e.to_string())?;
    let text = String::from_utf8_lossy(&annotate.stdout);
    let (instructions, top) = parse_annotate(&text)?;
    let functions = phases::parse_self_costs(&text);
    let groups = phases::groups_for(backend);
    let profile = std::fs::read_to_string(file).map_err(|e| e.to_string())?;
    Ok(Measured {
        instructions,
        top,
        phases: phases::split(groups, &functions),
        stale: phases::stale_patterns(groups, functions.iter().map(|(k, _)| k.as_str())),
        allocation_calls: phases::allocation_calls(&profile),
    })
}

fn callgrind(
    program: &Path,
    input: &Path,
    format: &str,
    out: &Path,
    backend: &str,
) -> Result<Measured, String> {
    let file = out.join(format!("callgrind.{backend}.{format}.out"));
    callgrind_run(program, input, format, 1, &file, backend)
}

/// Reads the `PROGRAM TOTALS` line and the first function lines of `callgrind_annotate`.
fn parse_annotate(text: &str) -> Result<(u64, Vec<HotFunction>), String> {
    let number = |s: &str| s.replace(',', "").parse::<u64>().ok();
    let total = text
        .lines()
        .find(|l| l.contains("PROGRAM TOTALS"))
        .and_then(|l| number(l.split_whitespace().next()?))
        .ok_or("no PROGRAM TOTALS in callgrind_annotate output")?;
    let mut top = Vec::new();
    let mut in_functions = false;
    for line in text.lines() {
        if line.contains("file:function") {
            in_functions = true;
            continue;
        }
        if !in_functions || line.trim().is_empty() || line.starts_with("--") {
            continue;
        }
        // `50,386,580 ( 7.15%)  file:function [binary]`: the name follows the percentage.
        let trimmed = line.trim_start();
        let Some(count) = trimmed.split_whitespace().next().and_then(number) else {
            continue;
        };
        let Some(close) = trimmed.find(')') else {
            continue;
        };
        let name = trimmed[close + 1..].trim().to_string();
        top.push((name, count, 100.0 * count as f64 / total.max(1) as f64));
        if top.len() == 8 {
            break;
        }
    }
    Ok((total, top))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_totals_and_top_functions_from_callgrind_annotate() {
        let text = "--------\nIr\n--------\n3,000 (100.0%)  PROGRAM TOTALS\n\n--------\nIr  \
            file:function\n--------\n2,000 (66.67%)  src/a.rs:evtx::render [/bin/x]\n  500 ( \
            6.67%)  ???:memcpy [/lib/libc.so]\n";
        let (total, top) = parse_annotate(text).unwrap();
        assert_eq!(total, 3000);
        assert_eq!(top[0].0, "src/a.rs:evtx::render [/bin/x]");
        assert_eq!(top[1].1, 500);
        assert_eq!(top[1].0, "???:memcpy [/lib/libc.so]");
        assert!((top[0].2 - 66.666).abs() < 0.01);
    }
}
