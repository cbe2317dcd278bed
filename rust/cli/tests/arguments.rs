//! `evtx-rs` on every argument case of `shared-fixtures/cli-cases.txt` (`evtx-compare exit-table`
//! runs the same in both CLIs): the reference's exit status and stdout-or-not, and where the
//! case says so its stderr, the first line of it or its help text byte for byte. The reference
//! runs through a symlink named `evtx-rs` (clap's `Usage:` line names the program as invoked).
//! A missing reference binary (`$EVTX_REFERENCE`, default
//! `<workspace>/target/reference/bin/evtx_dump`) skips the test, loudly, unless
//! `EVTX_REQUIRE_REFERENCE=1`.

use evtx_fixture_gen::cli_cases::{self, CliCases, Ran};
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

mod common;

fn ran(output: &Output) -> Ran<'_> {
    Ran {
        status: output.status.code(),
        stdout: &output.stdout,
        stderr: &output.stderr,
    }
}

#[test]
fn every_argument_case_is_the_references() {
    let Some(reference) = common::reference() else {
        return;
    };
    let (dir, alias) = common::reference_named_evtx_rs(&reference, "arguments");
    let ours = PathBuf::from(env!("CARGO_BIN_EXE_evtx-rs"));
    assert_eq!(ours.file_name(), alias.file_name());
    let fixtures = common::workspace_root().join("shared-fixtures");
    let file = CliCases::load(&fixtures).unwrap();
    let log = fixtures.join(file.path_of("@F").expect("@F"));
    let not_utf8 = cli_cases::not_utf8_copy(&log, &dir).unwrap();
    let output = dir.join("out");
    let run = |program: &Path, argv: &[std::ffi::OsString]| {
        let _ = std::fs::remove_file(&output);
        Command::new(program).args(argv).output().unwrap()
    };
    let mut differ = Vec::new();
    for case in &file.cases {
        let argv = file.argv(case, &fixtures, &output, &not_utf8);
        let (theirs, mine) = (run(&alias, &argv), run(&ours, &argv));
        let what = format!("{} (`{}`)", case.name, case.arguments);
        if let Some(departure) = case.expected.departure(&ran(&theirs)) {
            differ.push(format!("{what}: {departure}"));
        } else if case.expected.differences(&ran(&theirs), &ran(&mine)).any() {
            differ.push(format!(
                "{what}: {:?}, stdout {:?}, stderr {:?}; the reference's {:?}, {:?}, {:?}",
                mine.status.code(),
                String::from_utf8_lossy(&mine.stdout),
                String::from_utf8_lossy(&mine.stderr),
                theirs.status.code(),
                String::from_utf8_lossy(&theirs.stdout),
                String::from_utf8_lossy(&theirs.stderr)
            ));
        }
    }
    let _ = std::fs::remove_dir_all(&dir);
    assert!(file.cases.len() >= 150, "{} cases", file.cases.len());
    assert!(differ.is_empty(), "{}", differ.join("\n"));
}
