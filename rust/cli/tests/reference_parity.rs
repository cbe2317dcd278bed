//! Byte-for-byte parity of `evtx-rs` with the reference `evtx_dump` 0.15.1 on the real samples.
//!
//! For every `*.evtx` in `$EVTX_SAMPLES` (default `<workspace>/../shared/evtx-samples`) both
//! tools run in each mode below; stdout must be identical and the number of failed records must
//! match (reference stderr blocks start with `Failed to dump the next record`, ours are one
//! `error: ` line each). A missing samples directory skips the test, loudly, unless
//! `EVTX_REQUIRE_SAMPLES=1` (as in `make test`), which makes it a failure; a missing reference
//! binary (`$EVTX_REFERENCE`, default `<workspace>/target/reference/bin/evtx_dump`) skips it
//! unless `EVTX_REQUIRE_REFERENCE=1`.

use std::path::{Path, PathBuf};
use std::process::Command;

const MODES: &[&[&str]] = &[
    &["-t", "1", "-o", "jsonl"],
    &["-t", "1", "-o", "json"],
    &["-t", "1", "-o", "xml"],
    &["-t", "1", "-o", "xml", "--no-indent"],
    &["-t", "1", "-o", "jsonl", "--separate-json-attributes"],
    &["-t", "1", "-o", "jsonl", "--validate-checksums"],
    &["-t", "2", "-o", "jsonl"],
    &["-t", "2", "-o", "xml"],
];

fn workspace_root() -> PathBuf {
    // rust/cli → workspace root.
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../..")
        .canonicalize()
        .expect("workspace root")
}

struct Run {
    stdout: Vec<u8>,
    failures: usize,
}

fn run(bin: &Path, mode: &[&str], file: &Path, reference: bool) -> Run {
    let out = Command::new(bin)
        .args(mode)
        .arg(file)
        .output()
        .unwrap_or_else(|e| panic!("cannot run {}: {e}", bin.display()));
    assert!(
        out.status.success(),
        "{} {:?} {} exited with {}: {}",
        bin.display(),
        mode,
        file.display(),
        out.status,
        String::from_utf8_lossy(&out.stderr)
    );
    let stderr = String::from_utf8_lossy(&out.stderr);
    let failures = if reference {
        stderr
            .lines()
            .filter(|l| l.starts_with("Failed to dump the next record"))
            .count()
    } else {
        stderr.lines().filter(|l| l.starts_with("error: ")).count()
    };
    Run {
        stdout: out.stdout,
        failures,
    }
}

/// Describes the first difference: the record it is in (last `Record N` banner or line number
/// for JSONL) and the first differing line.
fn describe_difference(expected: &[u8], actual: &[u8]) -> String {
    let at = expected
        .iter()
        .zip(actual)
        .position(|(a, b)| a != b)
        .unwrap_or(expected.len().min(actual.len()));
    let line_start = expected[..at]
        .iter()
        .rposition(|&b| b == b'\n')
        .map_or(0, |p| p + 1);
    let line_no = expected[..at].iter().filter(|&&b| b == b'\n').count() + 1;
    let record = String::from_utf8_lossy(&expected[..at])
        .lines()
        .rev()
        .find(|l| l.starts_with("Record "))
        .map(str::to_string)
        .unwrap_or_else(|| format!("line {line_no}"));
    let line_of = |buf: &[u8]| {
        let end = buf[line_start.min(buf.len())..]
            .iter()
            .position(|&b| b == b'\n')
            .map_or(buf.len(), |p| line_start + p);
        String::from_utf8_lossy(&buf[line_start.min(buf.len())..end]).into_owned()
    };
    let mut exp = line_of(expected);
    let mut act = line_of(actual);
    exp.truncate(600);
    act.truncate(600);
    format!(
        "first difference at byte {at} ({record}, line {line_no}, column {}):\n  reference: {exp}\n  evtx-rs:   {act}",
        at - line_start + 1
    )
}

#[test]
fn reference_parity_on_samples() {
    let root = workspace_root();
    let samples = std::env::var_os("EVTX_SAMPLES")
        .map(PathBuf::from)
        .unwrap_or_else(|| root.join("../shared/evtx-samples"));
    if !samples.is_dir() {
        assert!(
            std::env::var("EVTX_REQUIRE_SAMPLES").as_deref() != Ok("1"),
            "EVTX_REQUIRE_SAMPLES=1 but there are no samples at {}",
            samples.display()
        );
        eprintln!(
            "SKIPPED reference_parity_on_samples: no samples at {} (set EVTX_SAMPLES)",
            samples.display()
        );
        return;
    }
    let reference = std::env::var_os("EVTX_REFERENCE")
        .map(PathBuf::from)
        .unwrap_or_else(|| root.join("target/reference/bin/evtx_dump"));
    if !reference.is_file() {
        if std::env::var("EVTX_REQUIRE_REFERENCE").as_deref() == Ok("1") {
            panic!("reference binary missing at {}", reference.display());
        }
        eprintln!("skipping: no reference binary at {}", reference.display());
        return;
    }
    let ours = PathBuf::from(env!("CARGO_BIN_EXE_evtx-rs"));
    let mut files: Vec<PathBuf> = std::fs::read_dir(&samples)
        .expect("read samples dir")
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|x| x == "evtx"))
        .collect();
    files.sort();
    assert!(!files.is_empty(), "no *.evtx in {}", samples.display());

    let mut failures = Vec::new();
    let mut checked = 0;
    for file in &files {
        for mode in MODES {
            let expected = run(&reference, mode, file, true);
            let actual = run(&ours, mode, file, false);
            checked += 1;
            let name = file.file_name().unwrap().to_string_lossy();
            if expected.stdout != actual.stdout {
                failures.push(format!(
                    "{name} {}: stdout differs; {}",
                    mode.join(" "),
                    describe_difference(&expected.stdout, &actual.stdout)
                ));
            }
            if expected.failures != actual.failures {
                failures.push(format!(
                    "{name} {}: {} failed records in the reference, {} in evtx-rs",
                    mode.join(" "),
                    expected.failures,
                    actual.failures
                ));
            }
        }
    }
    assert!(
        failures.is_empty(),
        "{} of {checked} runs differ:\n{}",
        failures.len(),
        failures.join("\n")
    );
    assert_eq!(checked, files.len() * MODES.len());
    eprintln!(
        "{checked} runs over {} samples match the reference",
        files.len()
    );
}
