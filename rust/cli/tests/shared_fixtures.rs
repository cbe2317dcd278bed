//! `evtx-rs` against the committed expected outputs of `shared-fixtures/` (reference stdout,
//! or `<name>.ours.*` where our rule for the four unsupported types applies). Needs neither
//! the samples nor the reference binary. Every expected file is compared: one that no fixture
//! used (and that an `.ours` rule does not stand in for) fails the test.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::process::Command;

fn fixtures_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../shared-fixtures")
}

const OUTPUTS: [(&str, &[&str]); 3] = [
    ("jsonl", &["-o", "jsonl"]),
    ("xml", &["-o", "xml"]),
    ("sep.jsonl", &["-o", "jsonl", "--separate-json-attributes"]),
];

#[test]
fn outputs_match_committed_expectations() {
    let root = fixtures_dir();
    let expected_dir = root.join("expected");
    let all_expected: BTreeSet<String> = std::fs::read_dir(&expected_dir)
        .unwrap_or_else(|e| panic!("{}: {e}", expected_dir.display()))
        .filter_map(|e| e.ok())
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .collect();
    assert!(
        !all_expected.is_empty(),
        "no expected outputs in {}",
        expected_dir.display()
    );
    let ours = PathBuf::from(env!("CARGO_BIN_EXE_evtx-rs"));
    let mut failures = Vec::new();
    let mut used = BTreeSet::new();
    let mut fixtures = 0;
    for dir in ["synthetic", "damaged"] {
        let entries = std::fs::read_dir(root.join(dir))
            .unwrap_or_else(|e| panic!("{}: {e}", root.join(dir).display()));
        let mut files: Vec<PathBuf> = entries
            .filter_map(|e| e.ok().map(|e| e.path()))
            .filter(|p| p.extension().is_some_and(|x| x == "evtx"))
            .collect();
        files.sort();
        for file in files {
            fixtures += 1;
            let stem = file.file_stem().unwrap().to_string_lossy().into_owned();
            for (suffix, args) in OUTPUTS {
                let ours_rule = format!("{stem}.ours.{suffix}");
                let reference = format!("{stem}.{suffix}");
                let name = if all_expected.contains(&ours_rule) {
                    // The reference's own output stands beside it, for the record.
                    used.insert(reference);
                    ours_rule
                } else {
                    reference
                };
                let expected_path = expected_dir.join(&name);
                let Ok(expected) = std::fs::read(&expected_path) else {
                    failures.push(format!("{dir}/{stem}.evtx: no {}", expected_path.display()));
                    continue;
                };
                used.insert(name);
                let out = Command::new(&ours)
                    .args(["-t", "1"])
                    .args(args)
                    .arg(&file)
                    .output()
                    .expect("run evtx-rs");
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
    let unused: Vec<_> = all_expected.difference(&used).collect();
    assert!(
        unused.is_empty(),
        "expected outputs no fixture was compared with: {unused:?}"
    );
    assert!(fixtures > 0, "no fixtures under {}", root.display());
    assert!(failures.is_empty(), "{}", failures.join("\n"));
    eprintln!(
        "{} fixture outputs of {fixtures} fixtures match ({} expected files)",
        fixtures * OUTPUTS.len(),
        all_expected.len()
    );
}
