//! Damaged side files (`shared-fixtures/README.md`): every `damaged-*` fixture of
//! `shared-fixtures/mta` and `shared-fixtures/wevt` gives one line naming the file and the offset
//! the fixture generator damaged (`damage.json` beside them, written from the generator's own
//! layout, not from the readers), the reference's exit status, and the place to stop or go on: a
//! `.MTA` or `.wevtcache` stops the dump before the first record; a PE is reported and the next
//! file is done. shared-fixtures/README.md, "Damaged side files"; `zig/tests/cli_input.zig` holds
//! the Zig CLI to the same table.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

mod common;
use common::workspace_root;

fn ours() -> PathBuf {
    PathBuf::from(env!("CARGO_BIN_EXE_evtx-rs"))
}

fn fixtures(dir: &str) -> PathBuf {
    workspace_root().join("shared-fixtures").join(dir)
}

/// `{file name: offset or null}` of one fixture directory.
fn damage_table(dir: &str) -> BTreeMap<String, Option<u64>> {
    let text = std::fs::read_to_string(fixtures(dir).join("damage.json")).unwrap();
    serde_json::from_str(&text).unwrap()
}

fn run(args: &[&str]) -> Output {
    Command::new(ours()).args(args).output().unwrap()
}

/// The offset the line `error: <path>: offset 0x<O>: <what>` names, after checking its form.
fn line_offset(line: &str, path: &str) -> u64 {
    let rest = line
        .strip_prefix(&format!("error: {path}: offset 0x"))
        .unwrap_or_else(|| panic!("not a side-file line for {path}: {line:?}"));
    let (hex, what) = rest.split_once(": ").expect("`: <what>` after the offset");
    assert!(
        !what.is_empty() && !what.contains(path),
        "the path once: {line:?}"
    );
    u64::from_str_radix(hex, 16).unwrap()
}

/// The offset the table names for `name`; `None` (a count met further on) is checked to lie
/// past the fixture's intact section table and inside the file.
fn check_offset(name: &str, want: Option<u64>, got: u64, file: &Path) {
    match want {
        Some(at) => assert_eq!(got, at, "{name}: offset"),
        None => {
            let len = std::fs::metadata(file).unwrap().len();
            // The three descriptors of the `.MTA` fixtures end at 24 + 3 * 26.
            assert!((102..len).contains(&got), "{name}: offset {got:#x}");
        }
    }
}

#[test]
fn damaged_mta_and_caches_stop_the_dump_with_one_line() {
    let runs = [
        ("mta", "--mta", "mta/events.evtx"),
        ("wevt", "--wevt-cache", "wevt/carved.evtx"),
    ];
    let mut checked = 0;
    for (dir, option, log) in runs {
        let log = workspace_root().join("shared-fixtures").join(log);
        for (name, want) in damage_table(dir) {
            if name.ends_with(".dll") {
                continue;
            }
            let file = fixtures(dir).join(&name);
            let path = file.to_string_lossy().into_owned();
            let out = run(&[
                "-t",
                "1",
                "-o",
                "jsonl",
                option,
                &path,
                &log.to_string_lossy(),
            ]);
            assert_eq!(out.status.code(), Some(1), "{name}");
            assert!(out.stdout.is_empty(), "{name}: no record before the error");
            let stderr = String::from_utf8(out.stderr).unwrap();
            let lines: Vec<&str> = stderr.lines().collect();
            assert_eq!(lines.len(), 1, "{name}: {stderr}");
            check_offset(&name, want, line_offset(lines[0], &path), &file);
            checked += 1;
        }
    }
    assert_eq!(checked, 13 + 10, "every damaged .MTA and .wevtcache");
}

/// `apply-wevt-cache --cache`: a damaged cache stops it with the dump's `--wevt-cache` line for
/// the same file (the generator's offset), exit 1, nothing on stdout.
#[test]
fn a_damaged_cache_stops_apply_with_the_dumps_line() {
    let log = workspace_root().join("shared-fixtures/wevt/carved.evtx");
    let mut checked = 0;
    for (name, want) in damage_table("wevt") {
        if !name.ends_with(".wevtcache") {
            continue;
        }
        let file = fixtures("wevt").join(&name);
        let path = file.to_string_lossy().into_owned();
        let apply = ["apply-wevt-cache", "--cache", &path, "--template-guid", "1"];
        let out = run(&[&apply[..], &["--substitutions", "[]"]].concat());
        assert_eq!(out.status.code(), Some(1), "{name}");
        assert!(out.stdout.is_empty(), "{name}: nothing rendered");
        let stderr = String::from_utf8(out.stderr).unwrap();
        let lines: Vec<&str> = stderr.lines().collect();
        assert_eq!(lines.len(), 1, "{name}: {stderr}");
        check_offset(&name, want, line_offset(lines[0], &path), &file);
        let dump = run(&["-t", "1", "--wevt-cache", &path, &log.to_string_lossy()]);
        assert_eq!(
            String::from_utf8_lossy(&dump.stderr),
            stderr,
            "{name}: the dump's line"
        );
        checked += 1;
    }
    assert_eq!(checked, 10, "every damaged .wevtcache");
}

#[test]
fn a_damaged_pe_is_named_and_the_next_file_is_done() {
    let out_dir = workspace_root()
        .join("target/tmp")
        .join(format!("side-files-{}", std::process::id()));
    std::fs::create_dir_all(&out_dir).unwrap();
    let cache = out_dir.join("out.wevtcache");
    let good = fixtures("wevt").join("providers64.dll");
    let mut checked = 0;
    for (name, want) in damage_table("wevt") {
        if !name.ends_with(".dll") {
            continue;
        }
        let file = fixtures("wevt").join(&name);
        let path = file.to_string_lossy().into_owned();
        let args = [
            "extract-wevt-templates",
            "-i",
            &path,
            "-i",
            &good.to_string_lossy(),
            "-o",
            &cache.to_string_lossy(),
            "--overwrite",
        ];
        let out = run(&args);
        assert_eq!(out.status.code(), Some(1), "{name}");
        let stderr = String::from_utf8(out.stderr).unwrap();
        let lines: Vec<&str> = stderr.lines().collect();
        assert_eq!(
            lines[1..],
            ["Error: extract-wevt-templates completed with 1 error(s)"],
            "{name}: {stderr}"
        );
        check_offset(&name, want, line_offset(lines[0], &path), &file);
        // The next file was done: its one blob is in the cache (header, then one entry).
        let written = std::fs::read(&cache).unwrap();
        assert_eq!(&written[..8], b"WEVTCACH", "{name}");
        assert_eq!(written[12..16], 1u32.to_le_bytes(), "{name}: one blob");
        checked += 1;
    }
    let _ = std::fs::remove_dir_all(&out_dir);
    assert_eq!(checked, 5, "every damaged PE that fails");
}

/// Edits to the "wevt-logon" TEMP's BinXML (offsets from its start; the generator writes a
/// fragment header, `Event` with attributes, its name's hash at 11 and NUL unit at 25, `xmlns`
/// with its value's type byte at 49, the end of the start tag at 158, then `System`), each
/// with the words the reference's error for it holds.
const BROKEN_TEMPLATES: &[(&[(usize, u8)], &str)] = &[
    (&[(11, 0xEF)], "WEVT inline name hash mismatch"),
    (&[(25, 0x41)], "WEVT inline name missing NUL terminator"),
    (&[(4, 0x7F)], "as binxml token"),
    (
        &[(13, 0xFF), (14, 0x7F)],
        "buffer too small for wevt_inline_name_code_unit",
    ),
    (&[(49, 0x22)], "as binxml value variant"),
    // A Null value (no bytes), then the value's length read as a token.
    (&[(49, 0x00)], "`0x35` as binxml token"),
    (&[(158, 0x00)], "unfinished element start"),
    (&[(159, 0x00)], "unbalanced element stack"),
    (&[(4, 0x04)], "close element - Bad parser state"),
    (&[(4, 0x00)], "missing root element"),
];

/// The template GUID `5F2C2A43-AA86-2481-02F3-ECE817383695` ("wevt-logon") as stored.
const LOGON_GUID: [u8; 16] = [
    0x43, 0x2A, 0x2C, 0x5F, 0x86, 0xAA, 0x81, 0x24, 0x02, 0xF3, 0xEC, 0xE8, 0x17, 0x38, 0x36, 0x95,
];

/// A cache whose container and manifests are intact but one template is broken:
/// `apply-wevt-cache` prints the reference's error for it (stderr and exit status, byte for
/// byte), where it said `failed to render the template` before.
#[test]
fn a_broken_template_gives_the_reference_error() {
    let Some(reference) = common::reference() else {
        return;
    };
    let original = std::fs::read(fixtures("wevt").join("templates.wevtcache")).unwrap();
    let temp = original
        .windows(40)
        .position(|w| &w[..4] == b"TEMP" && w[24..40] == LOGON_GUID)
        .expect("the logon template");
    let dir = workspace_root()
        .join("target/tmp")
        .join(format!("broken-templates-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    for (i, &(edits, words)) in BROKEN_TEMPLATES.iter().enumerate() {
        let mut bytes = original.clone();
        for &(at, value) in edits {
            bytes[temp + 40 + at] = value;
        }
        let file = dir.join(format!("broken-{i}.wevtcache"));
        std::fs::write(&file, &bytes).unwrap();
        let path = file.to_string_lossy().into_owned();
        let args = [
            "apply-wevt-cache",
            "--cache",
            &path,
            "--template-guid",
            "5F2C2A43-AA86-2481-02F3-ECE817383695",
            "--substitutions",
            "[1,\"x\"]",
        ];
        let [theirs, ours] = [&reference, &ours()].map(|program| {
            Command::new(program)
                .args(args)
                .env_remove("RUST_BACKTRACE")
                .env_remove("RUST_LIB_BACKTRACE")
                .output()
                .unwrap()
        });
        let text = |o: &Output| String::from_utf8_lossy(&o.stderr).into_owned();
        assert!(text(&theirs).contains(words), "{words}: {}", text(&theirs));
        assert_eq!(text(&ours), text(&theirs), "{words}");
        assert_eq!(ours.status.code(), theirs.status.code(), "{words}");
        assert!(ours.stdout.is_empty(), "{words}: nothing rendered");
    }
    let _ = std::fs::remove_dir_all(&dir);
}
