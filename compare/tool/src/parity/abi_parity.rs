//! ABI parity: the three libraries through the C ABI (`evtx-bench --parity`), the reference
//! library as the baseline, on every input that opens.
//!
//! `evtx-bench --parity` fails when an output hash, the per-record fields (record id,
//! FILETIME, offset, chunk, status, the pull API's `recovered` flag), the counts or the final
//! status differ, when a library is missing or says NOT_IMPLEMENTED. Each variant below runs
//! twice: the three libraries on every input that opens (the two fatal-header fixtures are the
//! C smoke test's job), and the two engines alone on the inputs where our rules differ from the
//! reference (`OURS`, shared-fixtures/README.md: the four value types, the cut last chunk's
//! error line, unused BinXML values in JSON). Variants run two at a time (one core each, as
//! evtx-bench parses with one thread unless the variant says `--threads 2`); their lines print
//! in table order.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Mutex;

/// One evtx-bench run: format, API and extra arguments (`--option NAME`, `--threads N`).
pub struct Variant {
    pub format: &'static str,
    pub api: &'static str,
    pub extra: &'static [&'static str],
}

const fn variant(
    format: &'static str,
    api: &'static str,
    extra: &'static [&'static str],
) -> Variant {
    Variant { format, api, extra }
}

/// Every format with the push and the pull API, then the option variants; `recover_records`
/// with both APIs (the pull API compares each record's `recovered` flag too).
pub const VARIANTS: &[Variant] = &[
    variant("jsonl", "push", &[]),
    variant("json", "push", &[]),
    variant("xml", "push", &[]),
    variant("jsonl", "pull", &[]),
    variant("json", "pull", &[]),
    variant("xml", "pull", &[]),
    variant("xml", "pull", &["--option", "no-indent"]),
    variant("xml", "pull", &["--option", "dont-show-record-number"]),
    variant(
        "json",
        "pull",
        &[
            "--option",
            "separate-json-attributes",
            "--option",
            "dont-show-record-number",
        ],
    ),
    variant("jsonl", "pull", &["--option", "validate-checksums"]),
    variant("xml", "pull", &["--option", "events"]),
    variant("jsonl", "push", &["--option", "stop-after-one-error"]),
    variant("jsonl", "push", &["--option", "events"]),
    variant("jsonl", "push", &["--threads", "2"]),
    variant("xml", "pull", &["--threads", "2"]),
    variant("jsonl", "push", &["--option", "recover-records"]),
    variant("xml", "push", &["--option", "recover-records"]),
    variant("jsonl", "pull", &["--option", "recover-records"]),
    variant("xml", "pull", &["--option", "recover-records"]),
    variant(
        "json",
        "pull",
        &["--option", "recover-records", "--threads", "2"],
    ),
    // The record filters of `evtx_options` version 1: the engines decide before rendering,
    // the reference library from its rendered text (`compare/reference/src/filter.rs`). Each
    // option alone, combined, with `events` and `recover_records`, both APIs, every format;
    // the times are 2024-05-01T08:00:00Z and 09:00:00Z as FILETIMEs (synthetic/filters.evtx
    // has records on both sides of each).
    variant("jsonl", "push", &["--event-id", "4624,4700-4799"]),
    variant("xml", "pull", &["--event-id", "4624", "--level", "0-3"]),
    variant(
        "json",
        "pull",
        &[
            "--option",
            "separate-json-attributes",
            "--provider",
            "Microsoft-Windows-Security-Auditing",
            "--provider",
            "plain",
        ],
    ),
    variant(
        "xml",
        "push",
        &["--channel", "security", "--option", "events"],
    ),
    variant(
        "jsonl",
        "pull",
        &[
            "--since",
            "133590240000000000",
            "--until",
            "133590276000000000",
        ],
    ),
    variant(
        "xml",
        "pull",
        &[
            "--option",
            "recover-records",
            "--level",
            "4",
            "--threads",
            "2",
        ],
    ),
    variant(
        "json",
        "push",
        &["--option", "recover-records", "--event-id", "1-1000"],
    ),
    // `open_path` (the libraries' chunk windows) against `open_buffer`, in one run each, so
    // every row is held to the same output (the windows change nothing, PERF.md H10e).
    variant("jsonl", "push", &["--sources", "heap,path"]),
    variant(
        "xml",
        "pull",
        &[
            "--sources",
            "heap,path",
            "--option",
            "recover-records",
            "--threads",
            "2",
        ],
    ),
];

/// The variants each `--mta` and `--wevt-cache` file runs in: both APIs, every
/// format; `recover_records` for the carved log.
const FILE_VARIANTS: &[Variant] = &[
    variant("jsonl", "push", &[]),
    variant("xml", "pull", &[]),
    variant("json", "pull", &["--option", "separate-json-attributes"]),
    variant(
        "xml",
        "push",
        &["--option", "recover-records", "--threads", "2"],
    ),
];

/// The `--mta` and `--wevt-cache` runs: (option, file, log), through all three libraries. Files the
/// CLI refuses (`*damaged*`) fail every library's open alike; shim-parity holds libevtx_ref's
/// status and text to the CLI there, the unit tests of both engines theirs.
fn file_runs(fixtures: &Path) -> Vec<(&'static str, PathBuf, PathBuf)> {
    let listed = |dir: &str, ext: &str| -> Vec<PathBuf> {
        let mut files: Vec<PathBuf> = std::fs::read_dir(fixtures.join(dir))
            .into_iter()
            .flatten()
            .flatten()
            .map(|e| e.path())
            .filter(|p| p.extension().is_some_and(|e| e == ext))
            .filter(|p| !p.to_string_lossy().contains("damaged"))
            .collect();
        files.sort();
        files
    };
    let mut runs = Vec::new();
    for mta in listed("mta", "MTA") {
        runs.push(("--mta", mta, fixtures.join("mta/events.evtx")));
    }
    for cache in listed("wevt", "wevtcache") {
        for log in listed("wevt", "evtx") {
            runs.push(("--wevt-cache", cache.clone(), log));
        }
    }
    runs
}

/// Fixtures no library opens (a fatal header error): the C smoke test covers them.
const FATAL: &[&str] = &["bad-file-magic.evtx", "short-file.evtx"];

/// Fixtures where our rules differ from the reference: the two engines are held to each other.
/// The last three: unused BinXML values in JSON (every JSON variant for the first, the one with
/// `separate-json-attributes` for the other two; `carving/template-gone.evtx` differs only with
/// `recover-records` too, which no variant combines with it).
pub const OURS: &[&str] = &[
    "damaged/unsupported-types.evtx",
    "damaged/header-count-large.evtx",
    "carving/cut-last-chunk.evtx",
    "damaged/unused-binxml-json.evtx",
    "carving/unused-binxml.evtx",
    "carving/nested-unused-binxml.evtx",
];

/// Where the libraries and the harness are.
pub struct Libraries {
    pub harness: PathBuf,
    pub lib_dir: PathBuf,
}

impl Libraries {
    fn lib(&self, name: &str) -> String {
        self.lib_dir
            .join(format!("lib{name}.so"))
            .display()
            .to_string()
    }
}

/// Splits `inputs` (fixtures and samples) into the three-library set and the engines-only set.
pub fn split_inputs(fixtures: &Path, inputs: &[PathBuf]) -> (Vec<PathBuf>, Vec<PathBuf>) {
    let ours: Vec<PathBuf> = OURS.iter().map(|rel| fixtures.join(rel)).collect();
    let all = inputs
        .iter()
        .filter(|p| !ours.contains(p))
        .filter(|p| {
            let name = p.file_name().and_then(|n| n.to_str()).unwrap_or("");
            !(p.starts_with(fixtures) && FATAL.contains(&name))
        })
        .cloned()
        .collect();
    (all, ours)
}

/// Runs every variant over both input sets; prints one line per (variant, set). `Ok(false)`
/// when any run failed.
pub fn run_abi_parity(
    libraries: &Libraries,
    all: &[PathBuf],
    ours: &[PathBuf],
    fixtures: &Path,
    out: &Path,
) -> Result<bool, String> {
    for path in [&libraries.harness, &libraries.lib_dir] {
        if !path.exists() {
            return Err(format!(
                "{} does not exist: run `make build` first",
                path.display()
            ));
        }
    }
    if let Some(missing) = ours.iter().find(|p| !p.is_file()) {
        return Err(format!("{} does not exist", missing.display()));
    }
    std::fs::create_dir_all(out).map_err(|e| format!("{}: {e}", out.display()))?;
    let three = ["ref", "rs", "zig"].map(|n| libraries.lib(&format!("evtx_{n}")));
    let two = ["rs", "zig"].map(|n| libraries.lib(&format!("evtx_{n}")));
    let mut jobs: Vec<Job> = VARIANTS
        .iter()
        .flat_map(|v| {
            [
                (v, three.to_vec(), all.to_vec(), Vec::new()),
                (v, two.to_vec(), ours.to_vec(), Vec::new()),
            ]
        })
        .collect();
    let runs = file_runs(fixtures);
    for (option, file, log) in &runs {
        let libs = three.to_vec();
        let extra = vec![option.to_string(), file.display().to_string()];
        for v in FILE_VARIANTS {
            jobs.push((v, libs.clone(), vec![log.clone()], extra.clone()));
        }
    }
    let results: Mutex<Vec<Option<(bool, String)>>> = Mutex::new(vec![None; jobs.len()]);
    let next = AtomicUsize::new(0);
    let workers = std::thread::available_parallelism().map_or(1, |n| n.get().min(2));
    std::thread::scope(|scope| {
        for _ in 0..workers {
            scope.spawn(|| {
                let next_job =
                    || Some(next.fetch_add(1, Ordering::Relaxed)).filter(|&n| n < jobs.len());
                while let Some(n) = next_job() {
                    let (v, libs, inputs, file) = &jobs[n];
                    let log = out.join(format!("abi-parity-{n}.txt"));
                    let result = run_one(&libraries.harness, v, libs, inputs, file, &log);
                    results.lock().expect("no panics while held")[n] = Some(result);
                }
            });
        }
    });
    let mut ok = true;
    for (result, (v, _, inputs, file)) in results
        .into_inner()
        .expect("workers done")
        .into_iter()
        .zip(&jobs)
    {
        let (passed, line) = result.expect("every job ran");
        let with = match file.as_slice() {
            [option, path] => format!(" {option} {} on {}", short(path), short_path(&inputs[0])),
            _ => String::new(),
        };
        println!(
            "abi-parity {} {} {}{with}: {line}",
            v.format,
            v.api,
            v.extra.join(" ")
        );
        ok &= passed;
    }
    println!(
        "abi-parity: {} --mta/--wevt-cache runs through the three libraries",
        runs.len()
    );
    Ok(ok)
}

/// One job: the variant, its libraries, its inputs, and `--mta FILE` / `--wevt-cache FILE`.
type Job = (&'static Variant, Vec<String>, Vec<PathBuf>, Vec<String>);

fn short(path: &str) -> &str {
    path.rsplit('/').next().unwrap_or(path)
}

fn short_path(path: &Path) -> String {
    path.file_name()
        .map_or_else(String::new, |n| n.to_string_lossy().into_owned())
}

/// One evtx-bench --parity run; its last line, or the lines that say what differed.
fn run_one(
    harness: &Path,
    v: &Variant,
    libs: &[String],
    inputs: &[PathBuf],
    file: &[String],
    log: &Path,
) -> (bool, String) {
    let mut command = Command::new(harness);
    command.arg("--parity");
    for lib in libs {
        command.args(["--lib", lib]);
    }
    command.args(inputs);
    command.args([
        "--runs", "1", "--warmup", "0", "--format", v.format, "--api", v.api,
    ]);
    command.args(v.extra);
    command.args(file);
    let output = match command.output() {
        Ok(output) => output,
        Err(e) => {
            return (
                false,
                format!("FAILED: cannot run {}: {e}", harness.display()),
            )
        }
    };
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    );
    let _ = std::fs::write(log, &text);
    if output.status.success() {
        let last = text.lines().last().unwrap_or("").to_string();
        return (true, last);
    }
    let why: Vec<&str> = text
        .lines()
        .filter(|l| {
            ["differs", "DIFFERS", "FAILED", "evtx-bench:"]
                .iter()
                .any(|w| l.contains(w))
        })
        .take(5)
        .collect();
    (
        false,
        format!("FAILED ({}): {}", output.status, why.join(" | ")),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn split_keeps_samples_and_drops_fatal_and_ours() {
        let fixtures = Path::new("/f");
        let inputs: Vec<PathBuf> = [
            "/f/damaged/short-file.evtx",
            "/f/damaged/unsupported-types.evtx",
            "/f/synthetic/basic.evtx",
            "/s/short-file.evtx",
        ]
        .iter()
        .map(PathBuf::from)
        .collect();
        let (all, ours) = split_inputs(fixtures, &inputs);
        assert_eq!(
            all,
            vec![
                PathBuf::from("/f/synthetic/basic.evtx"),
                PathBuf::from("/s/short-file.evtx")
            ]
        );
        assert_eq!(ours.len(), OURS.len());
    }
}
