//! Parity family `wevt-tools` (`shared-fixtures/generator/wevt-format.md`; family `wevt`, the
//! dump with each `.wevtcache` beside a log, is `modes.rs`'s): the forms the template
//! subcommands run in (`extract-wevt-templates` on the PE files there, `dump-template-instances`
//! and `apply-wevt-cache` on each log), whose stdout, exit status and, for
//! `extract-wevt-templates`, stderr and the written cache `cli_parity.rs` compares with the
//! reference's; stderr in full between the engines.

use std::path::Path;

/// The mode name of the subcommand checks.
pub const TOOLS_MODE: &str = "wevt-tools";

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

/// The file `apply-wevt-cache` takes its templates from (`--cache FILE`): its damage is
/// mapped as the dump's `--wevt-cache` (`side_file_lines`); none for the other subcommands.
pub fn apply_cache(argv: &[&str]) -> Option<String> {
    if argv.first() != Some(&"apply-wevt-cache") {
        return None;
    }
    let at = argv.iter().position(|a| *a == "--cache")?;
    argv.get(at + 1).map(|p| p.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_cache_of_apply_wevt_cache_only() {
        let argv = ["apply-wevt-cache", "--cache", "c", "--substitutions", "[]"];
        assert_eq!(apply_cache(&argv).as_deref(), Some("c"));
        assert_eq!(
            apply_cache(&["dump-template-instances", "--cache", "c"]),
            None
        );
    }
}
