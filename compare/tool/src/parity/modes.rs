//! The output modes parity runs the dump in: the base modes and their `--recover-records`
//! variants, the `--ansi-codec` modes of the `ansi-*` fixtures, the `--mta` and `--wevt-cache`
//! modes of the logs beside such files, and the `info` forms.

use std::path::{Path, PathBuf};
use std::sync::LazyLock;

/// An output mode: the CLI flags, and how to split and compare its records.
pub struct Mode {
    pub name: &'static str,
    pub args: &'static [&'static str],
    pub banner: bool,
    pub json: bool,
    /// Also compared at `-t 2` against `-t 1`.
    pub threads: bool,
    /// For banner-less modes: the same output with `Record N` banners (`-o json`), run only
    /// when two outputs differ, so records can be aligned by id rather than by position.
    pub with_banner: &'static [&'static str],
}

/// The base modes. `modes()` adds each again with `--recover-records` (`Mode::with_recover`).
pub const BASE_MODES: &[Mode] = &[
    mode(
        "jsonl",
        &["-o", "jsonl"],
        false,
        true,
        true,
        &["-o", "json"],
    ),
    mode("json", &["-o", "json"], true, true, false, &[]),
    mode("xml", &["-o", "xml"], true, false, true, &[]),
    mode(
        "jsonl-separate-attributes",
        &["-o", "jsonl", "--separate-json-attributes"],
        false,
        true,
        true,
        &["-o", "json", "--separate-json-attributes"],
    ),
    mode(
        "xml-no-indent",
        &["-o", "xml", "--no-indent"],
        true,
        false,
        false,
        &[],
    ),
    // The XML renderer under --validate-checksums too (the first Zig parity script had it).
    mode(
        "xml-validate-checksums",
        &["-o", "xml", "--validate-checksums"],
        true,
        false,
        false,
        &[],
    ),
    mode(
        "jsonl-validate-checksums",
        &["-o", "jsonl", "--validate-checksums"],
        false,
        true,
        false,
        &["-o", "json", "--validate-checksums"],
    ),
];

/// The suffix of a mode's `--recover-records` variant; gap entries can name them all as
/// `*-recover`.
pub const RECOVER_SUFFIX: &str = "-recover";

/// Every mode: `BASE_MODES`, then each of them again with `--recover-records` (contract 5.4,
/// shared-fixtures/README.md "Record recovery"). Generated, so the two lists cannot drift.
pub fn modes() -> &'static [Mode] {
    static ALL: LazyLock<Vec<Mode>> = LazyLock::new(|| {
        BASE_MODES
            .iter()
            .map(Mode::copy)
            .chain(BASE_MODES.iter().map(Mode::with_recover))
            .collect()
    });
    &ALL
}

impl Mode {
    fn copy(&self) -> Mode {
        mode(
            self.name,
            self.args,
            self.banner,
            self.json,
            self.threads,
            self.with_banner,
        )
    }

    /// This mode with `--recover-records` appended to its arguments (and to `with_banner`'s).
    /// The strings are leaked: `modes()` builds each variant once, for the whole run.
    fn with_recover(&self) -> Mode {
        fn append(args: &[&'static str]) -> &'static [&'static str] {
            if args.is_empty() {
                return &[];
            }
            let mut v = args.to_vec();
            v.push("--recover-records");
            v.leak()
        }
        Mode {
            name: format!("{}{RECOVER_SUFFIX}", self.name).leak(),
            args: append(self.args),
            banner: self.banner,
            json: self.json,
            threads: self.threads,
            with_banner: append(self.with_banner),
        }
    }
}

/// A jsonl mode under `--ansi-codec $label`.
macro_rules! codec_mode {
    ($label:literal) => {
        Mode {
            name: concat!("jsonl-ansi-", $label),
            args: &["-o", "jsonl", "--ansi-codec", $label],
            banner: false,
            json: true,
            threads: false,
            with_banner: &["-o", "json", "--ansi-codec", $label],
        }
    };
}

/// Extra modes for the `ansi-*` fixtures: one per multi-byte code page (and one single-byte
/// one), so decoding and its failures are compared under every `--ansi-codec` decoder.
pub const CODEC_MODES: &[Mode] = &[
    codec_mode!("utf-8"),
    codec_mode!("shift_jis"),
    codec_mode!("euc-jp"),
    codec_mode!("gbk"),
    codec_mode!("gb18030"),
    codec_mode!("big5"),
    codec_mode!("euc-kr"),
    codec_mode!("windows-1251"),
    Mode {
        name: "xml-ansi-shift_jis",
        args: &["-o", "xml", "--ansi-codec", "shift_jis"],
        banner: true,
        json: false,
        threads: false,
        with_banner: &[],
    },
];

/// The marker in the name of an `--mta` mode: `<base mode>+mta:<file name>`.
pub const MTA_MARK: &str = "+mta:";

/// `--mta` modes of `input`: every base mode (and its `--recover-records` variant) with each
/// `.MTA` file that pairs with it, `<log stem>.<variant>.MTA` beside the log
/// (shared-fixtures/generator/mta-format.md). None for other inputs.
pub fn mta_modes(input: &Path) -> Vec<Mode> {
    let (Some(dir), Some(stem)) = (input.parent(), input.file_stem()) else {
        return Vec::new();
    };
    let prefix = format!("{}.", stem.to_string_lossy());
    let mut files: Vec<PathBuf> = std::fs::read_dir(dir)
        .into_iter()
        .flatten()
        .flatten()
        .map(|e| e.path())
        .filter(|p| {
            let name = p.file_name().map(|n| n.to_string_lossy().into_owned());
            name.is_some_and(|n| n.starts_with(&prefix) && n.ends_with(".MTA"))
        })
        .collect();
    files.sort();
    modes_with_file(&files, "--mta", MTA_MARK)
}

/// Every base mode (and its `--recover-records` variant) once per file in `files`, with
/// `option FILE` appended to its arguments and `<base mode><mark><file name>` as its name: the
/// `--mta` and `--wevt-cache` families.
pub fn modes_with_file(files: &[PathBuf], option: &'static str, mark: &str) -> Vec<Mode> {
    let mut out = Vec::new();
    for file in files {
        let name = file.file_name().unwrap_or_default().to_string_lossy();
        let path: &'static str = file.to_string_lossy().into_owned().leak();
        let with = |args: &[&'static str]| -> &'static [&'static str] {
            if args.is_empty() {
                return &[];
            }
            let mut v = args.to_vec();
            v.extend([option, path]);
            v.leak()
        };
        for base in modes() {
            out.push(Mode {
                name: format!("{}{mark}{name}", base.name).leak(),
                args: with(base.args),
                banner: base.banner,
                json: base.json,
                threads: base.threads,
                with_banner: with(base.with_banner),
            });
        }
    }
    out
}

/// `evtx_dump info`, compared as a check family of its own (mode `info`): every form of its
/// arguments the reference's clap accepts, and a root flag before the subcommand, `@` standing
/// for the input. stdout byte for byte and
/// the exit status against the reference; stderr too between the engines. Known gaps never
/// apply to it (no entry may name it; `*` patterns do not cover it).
pub const INFO_FORMS: &[&str] = &[
    "info -i @",
    "info --input @",
    "info --input=@",
    "info -i@",
    "info -i=@",
    "-v info -i @",
];

/// The mode name of the `info` checks (`--mode info` runs only them).
pub const INFO_MODE: &str = "info";

/// How `info` checks are split and counted: one text, no records.
pub const INFO: Mode = mode(INFO_MODE, &[], false, false, false, &[]);

pub const fn mode(
    name: &'static str,
    args: &'static [&'static str],
    banner: bool,
    json: bool,
    threads: bool,
    with_banner: &'static [&'static str],
) -> Mode {
    Mode {
        name,
        args,
        banner,
        json,
        threads,
        with_banner,
    }
}

/// The marker in the name of a `--wevt-cache` mode.
pub const WEVT_MARK: &str = "+wevt:";

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
    modes_with_file(&caches(input), "--wevt-cache", WEVT_MARK)
}
