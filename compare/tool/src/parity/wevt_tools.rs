//! Parity family `wevt` (`shared-fixtures/generator/wevt-format.md`): every log
//! beside `.wevtcache` files in every mode with each cache (`--wevt-cache`, modes named
//! `<base mode>+wevt:<cache>`), and family `wevt-tools`: the template subcommands
//! (`extract-wevt-templates` on the PE files there, `dump-template-instances` and
//! `apply-wevt-cache` on each log), stdout, the exit status and, for `extract-wevt-templates`,
//! stderr and the written cache against the reference; stderr in full between the engines.

use crate::parity::Mode;
use std::path::{Path, PathBuf};

/// The marker in the name of a `--wevt-cache` mode.
pub const WEVT_MARK: &str = "+wevt:";

/// The mode name of the subcommand checks.
pub const TOOLS_MODE: &str = "wevt-tools";

/// The `.wevtcache` files beside `input`, sorted.
fn caches(input: &Path) -> Vec<PathBuf> {
    let Some(dir) = input.parent() else {
        return Vec::new();
    };
    let mut files: Vec<PathBuf> = std::fs::read_dir(dir)
        .into_iter()
        .flatten()
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|e| e == "wevtcache"))
        .collect();
    files.sort();
    files
}

/// Whether `input` is a log of the `wevt` fixtures (it has caches beside it).
pub fn is_wevt_log(input: &Path) -> bool {
    !caches(input).is_empty()
}

/// `--wevt-cache` modes of `input`: every base mode (and its `--recover-records` variant) with
/// each `.wevtcache` beside it. None for other inputs.
pub fn wevt_modes(input: &Path) -> Vec<Mode> {
    crate::parity::modes_with_file(&caches(input), "--wevt-cache", WEVT_MARK)
}

/// The subcommand forms run on each `wevt` log: `@` the log, `%` its directory, `$` the
/// fixtures' `wevt` directory, `^` the cache file a form writes (removed before each run;
/// `+existing` creates it first).
pub const LOG_FORMS: &[&str] = &[
    "dump-template-instances -i @",
    "dump-template-instances --input @ --record-id 3",
    "dump-template-instances -i @ --template-instance-index 1",
    "dump-template-instances -i @ --record-id 9 --template-instance-index 0",
    "apply-wevt-cache --cache %/templates.wevtcache \
     --template-guid 5F2C2A43-AA86-2481-02F3-ECE817383695 --evtx @ --record-id 1",
    "apply-wevt-cache --cache %/templates-b-first.wevtcache \
     --template-guid {973d090b-3cc0-fc45-22b3-cf7e45f4d80f} --evtx @ --record-id 2",
    "apply-wevt-cache --cache %/templates.wevtcache \
     --template-guid 973D090B-3CC0-FC45-22B3-CF7E45F4D80F --evtx @ --record-id 5",
    "apply-wevt-cache --cache %/templates.wevtcache \
     --template-guid 5F2C2A43-AA86-2481-02F3-ECE817383695 --evtx @ --record-id 1 \
     --template-instance-index 1",
    "apply-wevt-cache --cache %/templates.wevtcache \
     --template-guid 00000000-0000-0000-0000-000000000000 --evtx @ --record-id 99",
    SEARCH_WHOLE_LOG,
];

/// `apply-wevt-cache`'s record search through a whole log: the first failed chunk or record
/// ends it with the reference's error (its `Caused by:` chain), else the record is not found.
const SEARCH_WHOLE_LOG: &str = "apply-wevt-cache --cache $/templates.wevtcache \
     --template-guid 5F2C2A43-AA86-2481-02F3-ECE817383695 --evtx @ \
     --record-id 18446744073709551615";

/// The forms run on every other EVTX fixture: `dump-template-instances` reads any log.
pub const ANY_LOG_FORMS: &[&str] = &[
    "dump-template-instances -i @",
    "dump-template-instances -i @ --template-instance-index 1",
    "dump-template-instances -i @ --record-id 5",
    SEARCH_WHOLE_LOG,
    // A record found, or the failure before it.
    "apply-wevt-cache --cache $/templates.wevtcache \
     --template-guid 5F2C2A43-AA86-2481-02F3-ECE817383695 --evtx @ --record-id 2",
];

/// Forms that do not depend on the log (run once, on `events.evtx`).
pub const ONCE_FORMS: &[&str] = &[
    "apply-wevt-cache --cache %/templates.wevtcache \
     --template-guid 5F2C2A43-AA86-2481-02F3-ECE817383695 \
     --substitutions [1,\"x\",null,true,2.5,-3,18446744073709551615,{\"a\":[1]},\"<&>\"]",
    "apply-wevt-cache --cache %/templates.wevtcache \
     --template-guid 00000000-0000-0000-0000-000000000000 --substitutions [7,\"zero\"]",
    "apply-wevt-cache --cache %/templates.wevtcache \
     --template-guid 973d090b-3cc0-fc45-22b3-cf7e45f4d80f --substitutions []",
    "apply-wevt-cache --cache %/templates.wevtcache --template-guid 1-2-3 --substitutions []",
    "apply-wevt-cache --cache %/templates.wevtcache --template-guid 1 --substitutions {}",
    "apply-wevt-cache --cache %/templates.wevtcache --template-guid 1 --substitutions [1",
    "apply-wevt-cache --cache %/templates.wevtcache --template-guid 1",
    "apply-wevt-cache --cache %/templates.wevtcache --substitutions []",
    "apply-wevt-cache --cache %/templates.wevtcache --provider-guid 1 --event-id 2 \
     --version 0 --substitutions []",
    // Every damaged cache: the dump's `--wevt-cache` line (`apply_cache`).
    "apply-wevt-cache --cache %/damaged-count.wevtcache --template-guid 1 --substitutions []",
    "apply-wevt-cache --cache %/damaged-crim-magic.wevtcache --template-guid 1 --substitutions []",
    "apply-wevt-cache --cache %/damaged-kind.wevtcache --template-guid 1 --substitutions []",
    "apply-wevt-cache --cache %/damaged-length.wevtcache --template-guid 1 --substitutions []",
    "apply-wevt-cache --cache %/damaged-magic.wevtcache --template-guid 1 --substitutions []",
    "apply-wevt-cache --cache %/damaged-short.wevtcache --template-guid 1 --substitutions []",
    "apply-wevt-cache --cache %/damaged-temp-size.wevtcache --template-guid 1 --substitutions []",
    "apply-wevt-cache --cache %/damaged-truncated.wevtcache --template-guid 1 --substitutions []",
    "apply-wevt-cache --cache %/damaged-ttbl-count.wevtcache --template-guid 1 --substitutions []",
    "apply-wevt-cache --cache %/damaged-version.wevtcache --template-guid 1 --substitutions []",
    "apply-wevt-cache --cache %/empty.wevtcache --template-guid 1 --substitutions []",
    "apply-wevt-cache --cache %/templates.wevtcache \
     --template-guid 5F2C2A43-AA86-2481-02F3-ECE817383695 --substitutions-file %/none.json",
    // A log that cannot be opened: the reference's three-link `Caused by:` chain.
    "dump-template-instances -i %/missing.evtx",
    "apply-wevt-cache --cache %/templates.wevtcache \
     --template-guid 5F2C2A43-AA86-2481-02F3-ECE817383695 --evtx %/missing.evtx --record-id 1",
    // A directory opens, and its first read fails.
    "dump-template-instances -i %",
    "apply-wevt-cache --cache %/templates.wevtcache \
     --template-guid 5F2C2A43-AA86-2481-02F3-ECE817383695 --evtx % --record-id 1",
    "extract-wevt-templates -i %/providers64.dll -o ^",
    "extract-wevt-templates -i %/providers64.dll --input %/providers32.dll \
     -i %/no-resources.exe -o ^",
    "extract-wevt-templates --glob %/*.dll -o ^",
    "extract-wevt-templates --glob %/providers*.dll --glob %/*.exe --output ^",
    "extract-wevt-templates -r -i % --extensions DLL,.exe -o ^",
    "extract-wevt-templates --recursive --input % -o ^",
    "extract-wevt-templates -i % -o ^",
    "extract-wevt-templates -i %/damaged-mz.dll -i %/damaged-short.dll -o ^",
    "extract-wevt-templates -i %/damaged-data-rva.dll -o ^",
    "extract-wevt-templates -i %/damaged-data-size.dll -o ^",
    "extract-wevt-templates -i %/damaged-dir.dll -o ^",
    "extract-wevt-templates -i %/damaged-crim.dll -o ^",
    "extract-wevt-templates -i %/missing.dll -o ^",
    "extract-wevt-templates -i %/providers64.dll -o ^ +existing",
    "extract-wevt-templates -i %/providers64.dll -o ^ --overwrite +existing",
    "extract-wevt-templates -i %/providers64.dll -o %/out.cache",
    "extract-wevt-templates -o ^",
];

/// The argv of `form` for `log`, writing to `out`, with the committed `fixtures`; whether
/// `out` must exist first.
pub fn argv(form: &str, log: &Path, out: &Path, fixtures: &Path) -> (Vec<String>, bool) {
    let dir = log.parent().unwrap_or(Path::new(".")).to_string_lossy();
    let wevt = fixtures.join("wevt");
    let existing = form.ends_with(" +existing");
    let form = form.trim_end_matches(" +existing");
    let words = form
        .split_whitespace()
        .map(|w| {
            // `@` last: a log's name may hold `%` (the public samples' `%4`).
            w.replace('%', &dir)
                .replace('$', &wevt.to_string_lossy())
                .replace('^', &out.to_string_lossy())
                .replace('@', &log.to_string_lossy())
        })
        .collect();
    (words, existing)
}

/// The reference's stderr without the backtrace anyhow adds when `RUST_BACKTRACE` is set.
pub fn without_backtrace(stderr: &[u8]) -> Vec<u8> {
    let text = String::from_utf8_lossy(stderr);
    match text.find("\n\nStack backtrace:") {
        Some(at) => format!("{}\n", &text[..at]).into_bytes(),
        None => stderr.to_vec(),
    }
}

/// A short fingerprint of a written cache (FNV-1a), shown on stdout for comparison.
pub fn fingerprint(path: &Path) -> String {
    match std::fs::read(path) {
        Err(_) => "\n[no output file]\n".to_string(),
        Ok(bytes) => {
            let mut h: u64 = 0xcbf2_9ce4_8422_2325;
            for b in &bytes {
                h = (h ^ u64::from(*b)).wrapping_mul(0x100_0000_01b3);
            }
            format!("\n[output file: {} bytes, fnv {h:016x}]\n", bytes.len())
        }
    }
}

/// The reference's stderr with each damaged-side-file error replaced by the engine's line,
/// where the documented mapping holds (shared-fixtures/README.md, "Damaged side files"); any
/// other stderr is returned as it is, so a comparison shows what broke the rule.
///
/// The engines print `error: <PATH>: offset 0x<O>: <what>` where the reference prints
/// `Error: <text>` (`--mta`, `--wevt-cache`: the dump stops before its first record) or
/// `failed to extract WEVT_TEMPLATE from `<PATH>`: <text>` (`extract-wevt-templates`, one per
/// file, then the next). The mapping holds when the engine's line names the same file
/// (`side`, the file given to the option, for the dump; the one the reference names for a
/// PE), and its `<what>` is the reference's `<text>` with the path taken out (` for `P``,
/// ` `P`` before a colon, and `the file` for any other `P`): so the reference failed at the
/// same point and for the same reason. The offset is ours alone (the reference does not
/// always give one); the CLI tests check it against the fixture generator's.
pub fn side_file_lines(reference: &[u8], engine: &[u8], side: Option<&str>) -> Vec<u8> {
    let (theirs, ours) = (
        String::from_utf8_lossy(reference),
        String::from_utf8_lossy(engine),
    );
    if let (Some(side), Some(text)) = (side, theirs.strip_prefix("Error: ")) {
        // The dump's refusal: the reference's first line (its `Caused by:` chain aside).
        let first = text.lines().next().unwrap_or("");
        let line = ours.strip_suffix('\n').unwrap_or(&ours);
        if !line.contains('\n') && (maps(first, line, side) || maps(&crim(text), line, side)) {
            return engine.to_vec();
        }
        return reference.to_vec();
    }
    let mut ours_lines = ours.lines();
    let mut out = String::new();
    for line in theirs.lines() {
        let engine_line = ours_lines.next().unwrap_or("");
        let mapped = line
            .strip_prefix("failed to extract WEVT_TEMPLATE from `")
            .and_then(|rest| rest.split_once("`: "))
            .is_some_and(|(path, text)| maps(text, engine_line, path));
        out.push_str(if mapped { engine_line } else { line });
        out.push('\n');
    }
    if !theirs.ends_with('\n') && !theirs.is_empty() {
        out.pop();
    }
    out.into_bytes()
}

/// `apply-wevt-cache`'s manifest failure, `failed to parse CRIM/WEVT blob` over one cause (an
/// anyhow context), as the dump words it: `failed to parse CRIM/WEVT blob: <cause>`. Any other
/// text: empty (it maps to no line).
fn crim(text: &str) -> String {
    let context = "failed to parse CRIM/WEVT blob\n\nCaused by:\n    ";
    match text
        .strip_prefix(context)
        .map(|c| c.strip_suffix('\n').unwrap_or(c))
    {
        Some(cause) if !cause.contains('\n') => format!("failed to parse CRIM/WEVT blob: {cause}"),
        _ => String::new(),
    }
}

/// The file `apply-wevt-cache` takes its templates from (`--cache FILE`): its damage is
/// mapped as the dump's `--wevt-cache` (`side_file_lines`); none for the other subcommands.
pub fn apply_cache(argv: &[&str]) -> Option<String> {
    if argv.first() != Some(&"apply-wevt-cache") {
        return None;
    }
    let at = argv.iter().position(|a| *a == "--cache")?;
    argv.get(at + 1).map(|p| p.to_string())
}

/// Whether `line` is `error: <path>: offset 0x<hex>: <what>` with `<what>` the reference's
/// `text` without `path`.
fn maps(text: &str, line: &str, path: &str) -> bool {
    let Some(rest) = line.strip_prefix(&format!("error: {path}: offset 0x")) else {
        return false;
    };
    let Some((hex, what)) = rest.split_once(": ") else {
        return false;
    };
    let quoted = format!("`{path}`");
    let expected = text
        .replace(&format!(" for {quoted}"), "")
        .replace(&format!(" {quoted}:"), ":")
        .replace(&quoted, "the file");
    !hex.is_empty() && hex.bytes().all(|b| b.is_ascii_hexdigit()) && what == expected
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_dump_refusal_maps_to_the_engine_line_only_with_the_same_file_and_reason() {
        let reference = b"Error: invalid `.wevtcache` magic for `c.wevtcache`\n";
        let ours = b"error: c.wevtcache: offset 0x0: invalid `.wevtcache` magic\n";
        assert_eq!(side_file_lines(reference, ours, Some("c.wevtcache")), ours);
        // Another file, another reason, or a second line: the reference's bytes stay.
        for (side, engine) in [
            ("d.wevtcache", &ours[..]),
            (
                "c.wevtcache",
                b"error: c.wevtcache: offset 0x0: unsupported version\n",
            ),
            (
                "c.wevtcache",
                b"error: c.wevtcache: offset 0x0: invalid `.wevtcache` magic\nx\n",
            ),
        ] {
            assert_eq!(side_file_lines(reference, engine, Some(side)), reference);
        }
        let short = b"Error: I/O error while read header `c`: failed to fill whole buffer\n\n\
                      Caused by:\n    failed to fill whole buffer\n";
        let ours =
            b"error: c: offset 0x0: I/O error while read header: failed to fill whole buffer\n";
        assert_eq!(side_file_lines(short, ours, Some("c")), ours);
        let rest = b"Error: `.wevtcache` entry length 9 is larger than the rest of `c`\n";
        let ours = b"error: c: offset 0x10: `.wevtcache` entry length 9 is larger than the rest \
                     of the file\n";
        assert_eq!(side_file_lines(rest, ours, Some("c")), ours);
    }

    #[test]
    fn a_damaged_manifest_under_apply_maps_through_its_cause() {
        let reference = b"Error: failed to parse CRIM/WEVT blob\n\nCaused by:\n    invalid \
                          signature at offset 0: expected [1], got [2]\n";
        let ours = b"error: c: offset 0x19: failed to parse CRIM/WEVT blob: invalid signature \
                     at offset 0: expected [1], got [2]\n";
        assert_eq!(side_file_lines(reference, ours, Some("c")), ours);
        // Another cause, or a second cause in the chain: the reference's bytes stay.
        let other = b"error: c: offset 0x19: failed to parse CRIM/WEVT blob: size 1\n";
        assert_eq!(side_file_lines(reference, other, Some("c")), reference);
        let two = b"Error: failed to parse CRIM/WEVT blob\n\nCaused by:\n    invalid \
                    signature at offset 0: expected [1], got [2]\n    more\n";
        assert_eq!(side_file_lines(two, ours, Some("c")), two);
        let argv = ["apply-wevt-cache", "--cache", "c", "--substitutions", "[]"];
        assert_eq!(apply_cache(&argv).as_deref(), Some("c"));
        assert_eq!(
            apply_cache(&["dump-template-instances", "--cache", "c"]),
            None
        );
    }

    #[test]
    fn each_failed_pe_maps_line_by_line() {
        let reference = "failed to extract WEVT_TEMPLATE from `a.dll`: malformed PE file: x\n\
                         Error: extract-wevt-templates completed with 1 error(s)\n";
        let ours = "error: a.dll: offset 0x280: malformed PE file: x\n\
                    Error: extract-wevt-templates completed with 1 error(s)\n";
        let mapped = side_file_lines(reference.as_bytes(), ours.as_bytes(), None);
        assert_eq!(mapped, ours.as_bytes());
        let other = ours.replace("a.dll", "b.dll");
        let kept = side_file_lines(reference.as_bytes(), other.as_bytes(), None);
        assert_eq!(kept, reference.as_bytes());
    }
}
