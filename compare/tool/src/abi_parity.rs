//! ABI parity: the three libraries through the C ABI (`evtx-bench --parity`), the reference
//! library as the baseline, on every input that opens.
//!
//! `evtx-bench --parity` fails when an output hash, the per-record fields (record id,
//! FILETIME, offset, chunk, status, the pull API's `recovered` flag), the counts or the final
//! status differ, when a library is missing or says NOT_IMPLEMENTED. Each variant below runs
//! twice: the three libraries on every input that opens (the two fatal-header fixtures are the
//! C smoke test's job), and the two engines alone on the inputs where our rules differ from the
//! reference (`OURS`, shared-fixtures/README.md: the four value types, the cut last chunk's
//! error line). Variants run two at a time (one core each, as evtx-bench parses with one
//! thread unless the variant says `--threads 2`); their lines print in table order.

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
];

/// Fixtures no library opens (a fatal header error): the C smoke test covers them.
const FATAL: &[&str] = &["bad-file-magic.evtx", "short-file.evtx"];

/// Fixtures where our rules differ from the reference: the two engines are held to each other.
pub const OURS: &[&str] = &[
    "damaged/unsupported-types.evtx",
    "damaged/header-count-large.evtx",
    "carving/cut-last-chunk.evtx",
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
    let jobs: Vec<(usize, &Variant, &[String], &[PathBuf])> = VARIANTS
        .iter()
        .enumerate()
        .flat_map(|(i, v)| [(2 * i, v, &three[..], all), (2 * i + 1, v, &two[..], ours)])
        .collect();
    let results: Mutex<Vec<Option<(bool, String)>>> = Mutex::new(vec![None; jobs.len()]);
    let next = AtomicUsize::new(0);
    let workers = std::thread::available_parallelism().map_or(1, |n| n.get().min(2));
    std::thread::scope(|scope| {
        for _ in 0..workers {
            scope.spawn(|| {
                let next_job = || jobs.get(next.fetch_add(1, Ordering::Relaxed));
                while let Some(&(n, v, libs, inputs)) = next_job() {
                    let log = out.join(format!("abi-parity-{n}.txt"));
                    let result = run_one(&libraries.harness, v, libs, inputs, &log);
                    results.lock().expect("no panics while held")[n] = Some(result);
                }
            });
        }
    });
    let mut ok = true;
    for (result, (_, v, _, _)) in results
        .into_inner()
        .expect("workers done")
        .into_iter()
        .zip(&jobs)
    {
        let (passed, line) = result.expect("every job ran");
        println!(
            "abi-parity {} {} {}: {line}",
            v.format,
            v.api,
            v.extra.join(" ")
        );
        ok &= passed;
    }
    Ok(ok)
}

/// One evtx-bench --parity run; its last line, or the lines that say what differed.
fn run_one(
    harness: &Path,
    v: &Variant,
    libs: &[String],
    inputs: &[PathBuf],
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
