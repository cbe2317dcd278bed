//! How `evtx-rs` reads its input (PERF.md H10a): through 64 KiB windows, so a log over 4 GiB is
//! read like any other and a file that shrinks under the run gives `incomplete chunk` lines
//! (never a signal); standard input spooled, with the file path's output; and the input is
//! evidence: `-f` naming it is refused before anything is written.
//!
//! Expected outputs come from the reference (`$EVTX_REFERENCE`, default
//! `<workspace>/target/reference/bin/evtx_dump`) where one is needed; those tests skip without
//! it unless `EVTX_REQUIRE_REFERENCE=1`. Scratch files go to `<workspace>/target/tmp/`.

use std::io::{Read, Write};
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

mod common;
use common::{reference, workspace_root};

fn ours() -> PathBuf {
    PathBuf::from(env!("CARGO_BIN_EXE_evtx-rs"))
}

/// A fresh scratch directory for one test.
fn scratch(name: &str) -> PathBuf {
    let dir = workspace_root()
        .join("target/tmp")
        .join(format!("cli-input-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

fn run(bin: &Path, args: &[&str]) -> Output {
    Command::new(bin)
        .args(args)
        .output()
        .unwrap_or_else(|e| panic!("cannot run {}: {e}", bin.display()))
}

fn fixture(rel: &str) -> PathBuf {
    workspace_root().join("shared-fixtures").join(rel)
}

/// The sparse log of `evtx-fixture-gen sparse` (4 GiB long, ~1 MiB on disk, its oldest chunk
/// past 4 GiB): the reference and evtx-rs print the same bytes, and evtx-rs reports nothing.
#[test]
fn sparse_log_over_4_gib_matches_the_reference() {
    let Some(reference) = reference() else {
        return;
    };
    let dir = scratch("sparse");
    let log = dir.join("sparse-4g.evtx");
    evtx_fixture_gen::sparse::write(&log).unwrap();
    assert!(std::fs::metadata(&log).unwrap().len() > 1 << 32);
    let path = log.to_str().unwrap();
    let expected = run(&reference, &["-t", "2", "-o", "jsonl", path]);
    assert!(expected.status.success());
    assert!(
        expected.stdout.len() > 100_000,
        "the reference printed the records"
    );
    for threads in ["1", "2"] {
        let actual = run(&ours(), &["-t", threads, "-o", "jsonl", path]);
        assert_eq!(actual.status.code(), Some(0), "-t {threads}");
        assert!(
            actual.stdout == expected.stdout,
            "-t {threads}: stdout differs from the reference"
        );
        assert_eq!(String::from_utf8_lossy(&actual.stderr), "", "-t {threads}");
    }
    std::fs::remove_dir_all(&dir).unwrap();
}

/// Peak RSS of `bin args` in KiB, by `/usr/bin/time -f %M` (as the mutation gate measures it),
/// with its output; `None` (the caller skips) without `/usr/bin/time`, unless
/// `EVTX_REQUIRE_REFERENCE=1`.
fn peak_rss_kib(bin: &Path, args: &[&str], stats: &Path) -> Option<(u64, Output)> {
    let time = Path::new("/usr/bin/time");
    if !time.is_file() {
        assert_ne!(
            std::env::var("EVTX_REQUIRE_REFERENCE").as_deref(),
            Ok("1"),
            "/usr/bin/time is missing"
        );
        eprintln!("skipping: no /usr/bin/time");
        return None;
    }
    let mut all = vec![
        "-f",
        "%M",
        "-o",
        stats.to_str().unwrap(),
        bin.to_str().unwrap(),
    ];
    all.extend_from_slice(args);
    let output = run(time, &all);
    let text = std::fs::read_to_string(stats).unwrap();
    let kib = text.trim().lines().last().unwrap().parse().unwrap();
    Some((kib, output))
}

/// `info` on the sparse log over 4 GiB: the reference's bytes, read slot by slot through the
/// chunk source in bounded memory (it read the whole file before: 4 GiB of RSS).
#[test]
fn info_on_the_sparse_log_matches_the_reference_in_bounded_memory() {
    let Some(reference) = reference() else {
        return;
    };
    let dir = scratch("sparse-info");
    let log = dir.join("sparse-4g.evtx");
    evtx_fixture_gen::sparse::write(&log).unwrap();
    let path = log.to_str().unwrap();
    let expected = run(&reference, &["info", "-i", path]);
    assert!(expected.status.success());
    assert!(
        String::from_utf8_lossy(&expected.stdout).contains("65552 chunks: "),
        "the reference reported every slot"
    );
    let Some((kib, actual)) = peak_rss_kib(&ours(), &["info", "-i", path], &dir.join("rss")) else {
        return;
    };
    assert_eq!(actual.status.code(), Some(0));
    assert!(
        actual.stdout == expected.stdout,
        "info stdout differs from the reference"
    );
    assert_eq!(String::from_utf8_lossy(&actual.stderr), "");
    assert!(kib < 16 << 10, "info peaked at {kib} KiB on a 4 GiB log");
    std::fs::remove_dir_all(&dir).unwrap();
}

/// `info`'s column titles, read from `include/info_columns.txt` (the one table both engines
/// read): the titles of the reference's chunk table, in its order.
#[test]
fn info_columns_are_the_reference_titles() {
    let Some(reference) = reference() else {
        return;
    };
    let log = workspace_root().join("shared-fixtures/synthetic/basic.evtx");
    let expected = run(&reference, &["info", "-i", log.to_str().unwrap()]);
    assert!(expected.status.success());
    let text = String::from_utf8(expected.stdout).unwrap();
    let header = text.split("\n\n").nth(1).unwrap().lines().next().unwrap();
    // Titles are two spaces apart at least; a title holds single spaces.
    let titles: Vec<&str> = header
        .split("  ")
        .map(str::trim)
        .filter(|t| !t.is_empty())
        .collect();
    assert_eq!(titles, evtx_core::info::COLUMNS);
}

/// Truncating the input to 1,000,000 bytes while evtx-rs writes its first chunk: slots 0-13
/// stay whole, slot 14 is cut, the rest are gone. evtx-rs prints what it can read, one
/// `incomplete chunk` line per slot it cannot (file offset of the slot, record `-`), exits 0 as
/// the reference does, and is never killed by a signal. Its stdout is the reference's on the
/// truncated file.
#[test]
fn a_file_that_shrinks_during_the_run_gives_incomplete_chunks() {
    const CUT: u64 = 1_000_000;
    let dir = scratch("shrink");
    let log = evtx_fixture_gen::bench::build(1, 8);
    let slots = (log.len() - 4096) / 65536;
    assert!(slots > 100);
    for threads in ["1", "2"] {
        let path = dir.join(format!("shrinking-{threads}.evtx"));
        std::fs::write(&path, &log).unwrap();
        let path_str = path.to_str().unwrap();
        let mut child = Command::new(ours())
            .args(["-t", threads, "-o", "xml", path_str])
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let mut stdout = child.stdout.take().unwrap();
        let mut stderr = child.stderr.take().unwrap();
        let errors = std::thread::spawn(move || {
            let mut text = String::new();
            stderr.read_to_string(&mut text).unwrap();
            text
        });
        // The first byte means the order scan is done and the first chunk is being written;
        // the pipe holds 64 KiB, so evtx-rs is at most a few chunks further (each ~200 KiB).
        let mut printed = vec![0u8; 1];
        stdout.read_exact(&mut printed).unwrap();
        std::fs::OpenOptions::new()
            .write(true)
            .open(&path)
            .unwrap()
            .set_len(CUT)
            .unwrap();
        stdout.read_to_end(&mut printed).unwrap();
        let status = child.wait().unwrap();
        let errors = errors.join().unwrap();
        assert_eq!(
            status.code(),
            Some(0),
            "-t {threads}: {status}, stderr:\n{errors}"
        );
        let lines: Vec<&str> = errors.lines().collect();
        let first_lost = (CUT as usize - 4096) / 65536; // 14: cut inside
        assert_eq!(lines.len(), slots - first_lost, "-t {threads}:\n{errors}");
        for (line, slot) in lines.iter().zip(first_lost..) {
            let head = format!(
                "error: {path_str}: chunk {slot}, record -, offset 0x{:x}: incomplete chunk",
                4096 + slot * 65536
            );
            assert!(
                line.starts_with(&head),
                "-t {threads}: {line:?}, want {head:?}"
            );
        }
        if let Some(reference) = reference() {
            let expected = run(&reference, &["-t", "1", "-o", "xml", path_str]);
            assert!(
                printed == expected.stdout,
                "-t {threads}: stdout differs from the reference on the truncated file"
            );
        }
    }
    std::fs::remove_dir_all(&dir).unwrap();
}

/// `-f` naming the input, by the same path, a symlink or a hard link (or the input given by a
/// symlink, or redirected to standard input): exit 1, exactly one line on stderr, nothing
/// written, the input intact.
#[test]
fn output_that_is_the_input_is_refused() {
    let dir = scratch("same-file");
    let original = std::fs::read(fixture("synthetic/basic.evtx")).unwrap();
    let input = dir.join("s.evtx");
    std::fs::write(&input, &original).unwrap();
    let symlink = dir.join("link.evtx");
    std::os::unix::fs::symlink(&input, &symlink).unwrap();
    let hard = dir.join("hard.evtx");
    std::fs::hard_link(&input, &hard).unwrap();
    let s = |p: &Path| p.to_str().unwrap().to_string();
    let cases = [
        (s(&input), s(&input)),
        (s(&symlink), s(&input)),
        (s(&hard), s(&input)),
        (s(&input), s(&symlink)),
    ];
    for (out, inp) in &cases {
        for confirm in [true, false] {
            let mut args = vec!["-o", "jsonl", "-f", out.as_str()];
            if confirm {
                args.push("--no-confirm-overwrite");
            }
            args.push(inp.as_str());
            let result = run(&ours(), &args);
            assert_eq!(result.status.code(), Some(1), "{args:?}");
            assert_eq!(
                String::from_utf8_lossy(&result.stderr),
                format!(
                    "Error: refusing to write the output to `{out}`: it is the input file \
                    `{inp}`\n"
                ),
                "{args:?}"
            );
            assert!(result.stdout.is_empty());
            assert!(
                std::fs::read(&input).unwrap() == original,
                "{args:?}: input changed"
            );
        }
    }
    // Standard input redirected from the output file.
    let result = Command::new(ours())
        .args([
            "-o",
            "jsonl",
            "-f",
            &s(&hard),
            "--no-confirm-overwrite",
            "-",
        ])
        .stdin(std::fs::File::open(&input).unwrap())
        .output()
        .unwrap();
    assert_eq!(result.status.code(), Some(1));
    assert_eq!(
        String::from_utf8_lossy(&result.stderr),
        format!(
            "Error: refusing to write the output to `{}`: it is the input file `-`\n",
            s(&hard)
        )
    );
    assert!(std::fs::read(&input).unwrap() == original, "input changed");
    // Another file is written as before.
    let other = dir.join("out.jsonl");
    let result = run(&ours(), &["-o", "jsonl", "-f", &s(&other), &s(&input)]);
    assert_eq!(result.status.code(), Some(0));
    assert!(!std::fs::read(&other).unwrap().is_empty());
    std::fs::remove_dir_all(&dir).unwrap();
}

/// Standard input (a pipe) is spooled to an unlinked file in `$TMPDIR`: the output is the
/// file path's byte for byte, nothing is left behind, and empty input is a fatal error.
#[test]
fn stdin_gives_the_file_paths_output() {
    let dir = scratch("stdin");
    let tmpdir = dir.join("tmp");
    std::fs::create_dir_all(&tmpdir).unwrap();
    for rel in ["damaged/wrapped.evtx", "damaged/bad-records.evtx"] {
        let path = fixture(rel);
        let bytes = std::fs::read(&path).unwrap();
        for threads in ["1", "2"] {
            let args = ["-t", threads, "-o", "xml"];
            let from_path = run(&ours(), &[&args[..], &[path.to_str().unwrap()]].concat());
            let mut child = Command::new(ours())
                .args(args)
                .arg("-")
                .env("TMPDIR", &tmpdir)
                .stdin(Stdio::piped())
                .stdout(Stdio::piped())
                .stderr(Stdio::piped())
                .spawn()
                .unwrap();
            let mut stdin = child.stdin.take().unwrap();
            let feed = bytes.clone();
            let writer = std::thread::spawn(move || stdin.write_all(&feed).unwrap());
            let from_stdin = child.wait_with_output().unwrap();
            writer.join().unwrap();
            assert_eq!(from_stdin.status.code(), from_path.status.code(), "{rel}");
            assert!(
                from_stdin.stdout == from_path.stdout,
                "{rel} -t {threads}: stdout"
            );
            let path_errors =
                String::from_utf8_lossy(&from_path.stderr).replace(path.to_str().unwrap(), "-");
            assert_eq!(String::from_utf8_lossy(&from_stdin.stderr), path_errors);
        }
    }
    assert_eq!(
        std::fs::read_dir(&tmpdir).unwrap().count(),
        0,
        "spool left behind"
    );
    let empty = Command::new(ours())
        .args(["-o", "jsonl", "-"])
        .stdin(Stdio::null())
        .output()
        .unwrap();
    assert_eq!(empty.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&empty.stderr).starts_with("Error: "));
    std::fs::remove_dir_all(&dir).unwrap();
}
