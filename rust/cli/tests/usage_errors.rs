//! Usage errors of `evtx-rs`, byte for byte the reference's: clap 4's message, tip, `Usage:`
//! line and last line, and exit status 2. The reference runs through a symlink named `evtx-rs`
//! (clap's `Usage:` line names the program as invoked). A missing reference binary
//! (`$EVTX_REFERENCE`, default `<workspace>/target/reference/bin/evtx_dump`) skips the test,
//! loudly, unless `EVTX_REQUIRE_REFERENCE=1`.

use std::path::PathBuf;
use std::process::Command;

mod common;

/// Command lines that are usage errors for the reference; `@F` is a well-formed fixture.
const CASES: &[&[&str]] = &[
    &["-t", "x", "@F"],
    &["-t", "", "@F"],
    &["-t", "-1", "@F"],
    &["-t=-1", "@F"],
    &["-t", "4294967296", "@F"],
    &["-t", "99999999999999999999", "@F"],
    &["-t"],
    &["-t", "-f", "@F"],
    &["-t", "1", "-t", "2", "@F"],
    &["-o", "yaml", "@F"],
    &["-o", "jsn", "@F"],
    &["-o", "", "@F"],
    &["-o"],
    &["-f"],
    &["--events", "5-x", "@F"],
    &["--ansi-codec", "nope", "@F"],
    &["--ansi-codec", "utf-16le", "@F"],
    &["@F", "@F"],
    &["@F", "inf"],
    &["--bogus", "@F"],
    &["@F", "--bogus"],
    &["-x", "@F"],
    &["--no-indent=1", "@F"],
    &["--no-indent", "--no-indent=2", "@F"],
    &["--no-indent", "--no-indent", "@F"],
    &["--no-inden", "@F"],
    &["-t", "1", "-vv", "--no-inden", "@F"],
    &["--inpu", "@F", "info"],
    &["info"],
    &["info", "-i"],
    &["info", "-i", "a", "-i"],
    &["info", "-i", "a", "-i", "b"],
    &["info", "--inpu", "a"],
    &["help", "foo"],
];

#[test]
fn usage_errors_are_the_references_bytes() {
    let root = common::workspace_root();
    let Some(reference) = common::reference() else {
        return;
    };
    let (dir, alias) = common::reference_named_evtx_rs(&reference, "usage");
    let ours = PathBuf::from(env!("CARGO_BIN_EXE_evtx-rs"));
    assert_eq!(ours.file_name(), alias.file_name());
    let fixture = root.join("shared-fixtures/synthetic/basic.evtx");
    let mut differ = Vec::new();
    for case in CASES {
        let args: Vec<&std::ffi::OsStr> = case
            .iter()
            .map(|a| match *a {
                "@F" => fixture.as_os_str(),
                a => std::ffi::OsStr::new(a),
            })
            .collect();
        let expected = Command::new(&alias).args(&args).output().unwrap();
        let actual = Command::new(&ours).args(&args).output().unwrap();
        assert_eq!(
            expected.status.code(),
            Some(2),
            "{case:?} is no usage error"
        );
        if actual.status.code() != Some(2) || actual.stderr != expected.stderr {
            differ.push(format!(
                "{case:?}: exit {:?}, stderr {:?}; the reference's {:?}",
                actual.status.code(),
                String::from_utf8_lossy(&actual.stderr),
                String::from_utf8_lossy(&expected.stderr)
            ));
        }
        assert!(actual.stdout.is_empty(), "{case:?}: stdout");
    }
    let _ = std::fs::remove_dir_all(&dir);
    assert!(differ.is_empty(), "{}", differ.join("\n"));
}
