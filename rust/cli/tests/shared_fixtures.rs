//! `evtx-rs` against the committed expected outputs of `shared-fixtures/`, as the one manifest
//! (`shared-fixtures/manifest.json`, `evtx_fixture_gen::manifest`) lists them: reference
//! stdout, or `<name>.ours.*` where our rule for the four unsupported types applies. Needs
//! neither the samples nor the reference binary. Every file in `expected/` is compared or
//! stood in for by an `.ours` file: one that nothing used fails the test.

use evtx_fixture_gen::manifest::expectations;
use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::process::Command;

fn fixtures_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../shared-fixtures")
}

#[test]
fn outputs_match_committed_expectations() {
    let root = fixtures_dir();
    let expectations = expectations(&root).unwrap_or_else(|e| panic!("{e}"));
    let all_expected: BTreeSet<String> = std::fs::read_dir(root.join("expected"))
        .expect("shared-fixtures/expected")
        .filter_map(|e| e.ok())
        .map(|e| format!("expected/{}", e.file_name().to_string_lossy()))
        .collect();
    let ours = PathBuf::from(env!("CARGO_BIN_EXE_evtx-rs"));
    let mut failures = Vec::new();
    let mut used = BTreeSet::new();
    for e in &expectations {
        if e.ours {
            // The reference's own output stands beside ours, for the record.
            used.insert(e.file.replace(".ours.", "."));
        }
        used.insert(e.file.clone());
        let Ok(expected) = std::fs::read(root.join(&e.file)) else {
            failures.push(format!("{}: no {}", e.fixture, e.file));
            continue;
        };
        let out = Command::new(&ours)
            .args(["-t", "1"])
            .args(&e.args)
            .arg(root.join(&e.fixture))
            .output()
            .expect("run evtx-rs");
        if out.stdout != expected {
            failures.push(format!(
                "{} {}: stdout differs from {}",
                e.fixture,
                e.args.join(" "),
                e.file
            ));
        }
    }
    let unused: Vec<_> = all_expected.difference(&used).collect();
    assert!(
        unused.is_empty(),
        "expected outputs no fixture was compared with: {unused:?}"
    );
    assert!(failures.is_empty(), "{}", failures.join("\n"));
    eprintln!(
        "{} fixture outputs match ({} expected files)",
        expectations.len(),
        all_expected.len()
    );
}
