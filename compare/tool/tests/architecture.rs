//! `ARCHITECTURE.md` stays current: every path it names exists, and every engine file
//! (sources, tests and benches under `rust/` and `zig/`) is named in it, so a module added on
//! one side without a line in the concept table fails `cargo test`.

use std::fs;
use std::path::{Path, PathBuf};

/// The directories whose files must each appear in the table.
const ENGINE_DIRS: &[&str] = &[
    "rust/evtx-core/src",
    "rust/evtx-core/tests",
    "rust/evtx-core/benches",
    "rust/cli/src",
    "rust/cli/tests",
    "rust/evtx-abi/src",
    "rust/capi/src",
    "rust/capi/tests",
    "zig/src",
    "zig/cli",
    "zig/capi",
    "zig/tests",
];

/// Project-relative paths written between backticks: they contain a `/`, no space, and do not
/// leave the project (`../shared/...` is outside it and not ours to check).
fn named_paths(text: &str) -> Vec<String> {
    text.split('`')
        .skip(1)
        .step_by(2)
        .filter(|s| s.contains('/') && !s.contains(' ') && !s.starts_with("../"))
        .map(str::to_owned)
        .collect()
}

/// `pattern` with at most one `*` in its last component matches `path`.
fn matches(pattern: &str, path: &str) -> bool {
    match pattern.split_once('*') {
        None => pattern == path,
        Some((head, tail)) => {
            path.len() >= head.len() + tail.len()
                && path.starts_with(head)
                && path.ends_with(tail)
                && !path[head.len()..path.len() - tail.len()].contains('/')
        }
    }
}

/// What is wrong with the document, given the engine files and a test for existence.
fn problems(text: &str, files: &[String], exists: impl Fn(&str) -> bool) -> Vec<String> {
    let named = named_paths(text);
    let mut out = Vec::new();
    for pattern in &named {
        let found = if pattern.contains('*') {
            files.iter().any(|f| matches(pattern, f))
        } else {
            exists(pattern)
        };
        if !found {
            out.push(format!(
                "ARCHITECTURE.md names `{pattern}`, which does not exist"
            ));
        }
    }
    for file in files {
        if !named.iter().any(|p| matches(p, file)) {
            out.push(format!("{file} is not in ARCHITECTURE.md's table"));
        }
    }
    out
}

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

fn engine_files(root: &Path) -> Vec<String> {
    let mut files = Vec::new();
    let mut stack: Vec<String> = ENGINE_DIRS.iter().map(|d| d.to_string()).collect();
    while let Some(dir) = stack.pop() {
        let Ok(entries) = fs::read_dir(root.join(&dir)) else {
            continue;
        };
        for entry in entries {
            let entry = entry.expect("readable directory entry");
            let rel = format!("{dir}/{}", entry.file_name().to_string_lossy());
            if entry.file_type().expect("file type").is_dir() {
                stack.push(rel);
            } else {
                files.push(rel);
            }
        }
    }
    files.sort();
    files
}

#[test]
fn architecture_names_every_engine_file_and_nothing_missing() {
    let root = root();
    let text =
        fs::read_to_string(root.join("ARCHITECTURE.md")).expect("ARCHITECTURE.md at the root");
    let files = engine_files(&root);
    // Sanity: the walk saw both engines, so an empty listing cannot pass.
    assert!(
        files.iter().any(|f| f.starts_with("rust/evtx-core/src/")),
        "{files:?}"
    );
    assert!(files.iter().any(|f| f.starts_with("zig/src/")), "{files:?}");
    let problems = problems(&text, &files, |p| root.join(p).exists());
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}

#[test]
fn a_missing_path_and_an_unnamed_file_are_both_caught() {
    let text = "| x | `rust/a.rs` | `zig/gone.zig` | `zig/code/*.bin` |";
    let files = vec![
        "rust/a.rs".to_owned(),
        "rust/new.rs".to_owned(),
        "zig/code/a.bin".to_owned(),
    ];
    let got = problems(text, &files, |p| p == "rust/a.rs");
    assert_eq!(
        got,
        vec![
            "ARCHITECTURE.md names `zig/gone.zig`, which does not exist".to_owned(),
            "rust/new.rs is not in ARCHITECTURE.md's table".to_owned(),
        ]
    );
}

#[test]
fn a_glob_does_not_cross_directories() {
    assert!(matches("zig/code/*.bin", "zig/code/a.bin"));
    assert!(!matches("zig/code/*.bin", "zig/code/sub/a.bin"));
    assert!(!matches("zig/code/*.bin", "zig/code/a.zig"));
    assert!(named_paths("`../shared/x.md` `a b/c` `a/b`") == vec!["a/b".to_owned()]);
}
