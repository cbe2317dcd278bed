//! `evtx-rs` against the committed expected outputs of `shared-fixtures/` (reference stdout,
//! or `<name>.ours.*` where our rule for the four unsupported types applies). Needs neither
//! the samples nor the reference binary.

use std::path::{Path, PathBuf};
use std::process::Command;

fn fixtures_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../shared-fixtures")
}

#[test]
fn outputs_match_committed_expectations() {
    let root = fixtures_dir();
    if !root.join("expected").is_dir() {
        eprintln!("skipping: no shared fixtures at {}", root.display());
        return;
    }
    let ours = PathBuf::from(env!("CARGO_BIN_EXE_evtx-rs"));
    let mut failures = Vec::new();
    let mut checked = 0;
    for dir in ["synthetic", "damaged"] {
        let Ok(entries) = std::fs::read_dir(root.join(dir)) else {
            continue;
        };
        let mut files: Vec<PathBuf> = entries
            .filter_map(|e| e.ok().map(|e| e.path()))
            .filter(|p| p.extension().is_some_and(|x| x == "evtx"))
            .collect();
        files.sort();
        for file in files {
            let stem = file.file_stem().unwrap().to_string_lossy().into_owned();
            for (suffix, args) in [
                ("jsonl", &["-o", "jsonl"][..]),
                ("xml", &["-o", "xml"][..]),
                (
                    "sep.jsonl",
                    &["-o", "jsonl", "--separate-json-attributes"][..],
                ),
            ] {
                let ours_rule = root.join(format!("expected/{stem}.ours.{suffix}"));
                let reference = root.join(format!("expected/{stem}.{suffix}"));
                let expected_path = if ours_rule.is_file() {
                    ours_rule
                } else {
                    reference
                };
                let Ok(expected) = std::fs::read(&expected_path) else {
                    continue;
                };
                let out = Command::new(&ours)
                    .args(["-t", "1"])
                    .args(args)
                    .arg(&file)
                    .output()
                    .expect("run evtx-rs");
                checked += 1;
                if out.stdout != expected {
                    failures.push(format!(
                        "{dir}/{stem}.evtx {}: stdout differs from {}",
                        args.join(" "),
                        expected_path.display()
                    ));
                }
            }
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
    eprintln!("{checked} fixture outputs match");
}
