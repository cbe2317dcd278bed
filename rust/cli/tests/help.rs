//! Help texts of `evtx-rs`, byte for byte the reference's: every form clap prints (`-h`,
//! `--help`, `help [COMMAND]`, each subcommand's `-h` and `--help`), exit status 0. The
//! reference runs through a symlink named `evtx-rs`, so that only what clap takes from the
//! program's name may differ, and does not. A missing reference binary (`$EVTX_REFERENCE`,
//! default `<workspace>/target/reference/bin/evtx_dump`) skips the test, loudly, unless
//! `EVTX_REQUIRE_REFERENCE=1`. (`evtx-compare exit-table` holds both engines to the same.)

use std::path::PathBuf;
use std::process::Command;

mod common;

/// Command lines the reference answers with a help text.
const CASES: &[&[&str]] = &[
    &["-h"],
    &["--help"],
    &["help"],
    &["help", "help"],
    &["help", "info"],
    &["help", "extract-wevt-templates"],
    &["help", "dump-template-instances"],
    &["help", "apply-wevt-cache"],
    &["info", "-h"],
    &["info", "--help"],
    &["extract-wevt-templates", "-h"],
    &["extract-wevt-templates", "--help"],
    &["dump-template-instances", "-h"],
    &["dump-template-instances", "--help"],
    &["apply-wevt-cache", "-h"],
    &["apply-wevt-cache", "--help"],
    &["x", "-h"],
    &["-vh", "--bogus"],
];

#[test]
fn help_texts_are_the_references_bytes() {
    let Some(reference) = common::reference() else {
        return;
    };
    let (dir, alias) = common::reference_named_evtx_rs(&reference, "help");
    let ours = PathBuf::from(env!("CARGO_BIN_EXE_evtx-rs"));
    assert_eq!(ours.file_name(), alias.file_name());
    let mut differ = Vec::new();
    for case in CASES {
        let expected = Command::new(&alias).args(*case).output().unwrap();
        let actual = Command::new(&ours).args(*case).output().unwrap();
        assert_eq!(expected.status.code(), Some(0), "{case:?} is no help");
        assert!(
            String::from_utf8_lossy(&expected.stdout).contains("\nUsage: evtx-rs "),
            "{case:?}: the reference's help names the program as invoked"
        );
        if actual.status.code() != Some(0) || actual.stdout != expected.stdout {
            differ.push(format!(
                "{case:?}: exit {:?}, stdout {:?}; the reference's {:?}",
                actual.status.code(),
                String::from_utf8_lossy(&actual.stdout),
                String::from_utf8_lossy(&expected.stdout)
            ));
        }
        assert!(actual.stderr.is_empty(), "{case:?}: stderr");
    }
    let _ = std::fs::remove_dir_all(&dir);
    assert!(differ.is_empty(), "{}", differ.join("\n"));
}
