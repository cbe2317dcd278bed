//! The mutation test of the side readers (`.MTA`, `.wevtcache`, PE): damaged variants of the
//! generator's `.MTA`, `.wevtcache` and PE fixtures through `--mta`, `--wevt-cache`,
//! `apply-wevt-cache --cache` (a template the damage reaches is parsed and rendered) and
//! `extract-wevt-templates -i` of the reference and both engines. Neither engine may crash,
//! hang or balloon; their stdout, stderr and exit status must be byte-identical; and both must
//! equal the reference (stdout, the written cache, exit status, stderr without the backtrace
//! `RUST_BACKTRACE` adds, its error for the damaged file mapped to our one line by
//! `cli_output::side_file_lines`; for the records the log then fails on, their number)
//! wherever the reference itself neither crashes nor hangs.

use crate::parity::cli_output::{
    parse_error_lines, reference_failed_records, side_file_lines, without_backtrace,
};
use crate::parity::mutate::{run_measured, Engines, Mutant, Outcome, Rng, TIME_LIMIT};
use crate::parity::wevt_tools::fingerprint;
use crate::run::run;
use std::path::Path;

/// How a mutated file reaches the CLIs.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Use {
    /// `-o jsonl --mta FILE LOG`.
    Mta,
    /// `-o jsonl --wevt-cache FILE LOG`.
    Cache,
    /// `apply-wevt-cache --cache FILE --template-guid GUID --substitutions VALUES`: a template
    /// the damage reaches is parsed and rendered, not only indexed.
    Apply(&'static str),
    /// `extract-wevt-templates -i FILE -o OUT --overwrite`, the written cache fingerprinted.
    Pe,
}

/// One original file (below the fixtures directory), how it is used and the log it goes with.
struct Base {
    file: &'static str,
    used: Use,
    log: &'static str,
}

/// How many uses of a fixture `run_reader_mutations` mutates.
pub const BASE_COUNT: usize = BASES.len();

/// The fixtures mutated: the good files of each reader, the ones that reach every table.
const BASES: [Base; 7] = [
    Base {
        file: "mta/events.full.MTA",
        used: Use::Mta,
        log: "mta/events.evtx",
    },
    Base {
        file: "mta/events.paged.MTA",
        used: Use::Mta,
        log: "mta/events.evtx",
    },
    Base {
        file: "wevt/templates.wevtcache",
        used: Use::Cache,
        log: "wevt/carved.evtx",
    },
    // Manifest A's first template (inline names, named Data) and manifest B's (dependency
    // ids, a char ref, an array), the two a damaged cache most often cuts.
    Base {
        file: "wevt/templates.wevtcache",
        used: Use::Apply("5F2C2A43-AA86-2481-02F3-ECE817383695"),
        log: "",
    },
    Base {
        file: "wevt/templates.wevtcache",
        used: Use::Apply("973D090B-3CC0-FC45-22B3-CF7E45F4D80F"),
        log: "",
    },
    Base {
        file: "wevt/providers32.dll",
        used: Use::Pe,
        log: "",
    },
    Base {
        file: "wevt/providers64.dll",
        used: Use::Pe,
        log: "",
    },
];

/// The values `Use::Apply` renders a template with: one of each JSON kind, text to escape.
const APPLY_VALUES: &str = r#"[1,"x",null,true,2.5,-3,18446744073709551615,{"a":[1]},"<&>"]"#;

/// Values a length, count or offset field is set to: past any file, just past this one, the
/// largest signed, and a quarter of the address space (the allocation bombs).
fn blowups(len: usize) -> [u32; 4] {
    [
        u32::MAX,
        u32::try_from(len + 1).unwrap_or(u32::MAX),
        0x7FFF_FFFF,
        0x4000_0000,
    ]
}

/// Offsets of the little-endian `u32`s that look like a length, count or offset (non-zero and
/// below the file's length), at any alignment: the `.wevtcache` entry header is 9 bytes.
fn field_candidates(bytes: &[u8]) -> Vec<usize> {
    (0..bytes.len().saturating_sub(3))
        .filter(|&at| {
            let v = u32::from_le_bytes(bytes[at..at + 4].try_into().expect("4 bytes")) as usize;
            (2..bytes.len()).contains(&v)
        })
        .collect()
}

/// The mutants of one reader file: truncations, length-field blowups, bit flips and fills,
/// all from `seed` (the same mutants on every machine).
pub fn reader_mutants(original: &[u8], seed: u64, random: usize) -> Vec<Mutant> {
    let mut out = Vec::new();
    let len = original.len();
    let mut rng = Rng::new(seed);
    // Truncations: inside the first headers, then spread over the file.
    let mut cuts: Vec<usize> = vec![0, 1, 4, 8, 12, 15, 16, 17, 20, 24, 25, 32, 40, 64];
    cuts.extend((1..16).map(|i| i * len / 16));
    cuts.extend((0..random / 4).map(|_| rng.below(len)));
    cuts.sort_unstable();
    cuts.dedup();
    for cut in cuts.into_iter().filter(|&c| c < len) {
        out.push(Mutant {
            name: format!("truncate-at-{cut:#x}"),
            bytes: original[..cut].to_vec(),
        });
    }
    // Length fields: the first ones (the headers') each, then a seeded sample of the rest.
    let fields = field_candidates(original);
    let mut picked: Vec<usize> = fields.iter().copied().take(16).collect();
    picked.extend((0..random).filter_map(|_| fields.get(rng.below(fields.len())).copied()));
    picked.sort_unstable();
    picked.dedup();
    for (i, &at) in picked.iter().enumerate() {
        let value = blowups(len)[i % 4];
        let mut bytes = original.to_vec();
        bytes[at..at + 4].copy_from_slice(&value.to_le_bytes());
        out.push(Mutant {
            name: format!("field-at-{at:#x}-{value:#x}"),
            bytes,
        });
    }
    // Bit flips and runs of 0x00 / 0xFF anywhere.
    for n in 0..random {
        let mut bytes = original.to_vec();
        if n % 2 == 0 {
            for _ in 0..1 + rng.below(4) {
                let at = rng.below(len);
                bytes[at] ^= 1 << rng.below(8);
            }
            out.push(Mutant {
                name: format!("bitflips-{n}"),
                bytes,
            });
        } else {
            let fill = if n % 4 == 1 { 0x00 } else { 0xFF };
            let at = rng.below(len);
            let run_len = (1 + rng.below(64)).min(len - at);
            bytes[at..at + run_len].fill(fill);
            out.push(Mutant {
                name: format!("fill-{fill:02x}-{run_len}-at-{at:#x}"),
                bytes,
            });
        }
    }
    out.retain(|m| m.bytes != original);
    out
}

/// Reader mutants on which the engines agree with each other but not with the reference, each
/// by a rule written in shared-fixtures/README.md, pinned one by one (file name, or its
/// `+apply-` label for `Use::Apply`, and mutant name);
/// one that passes is stale and fails. Empty: on every mutant the engines give the reference's
/// bytes.
const OPEN_FINDINGS: &[(&str, &str)] = &[];

/// Runs every reader mutant through the reference and both engines, the bases shared between
/// two workers. `random` sets how many seeded mutants each file gets on top of the fixed ones.
pub fn run_reader_mutations(
    engines: &Engines<'_>,
    fixtures: &Path,
    out: &Path,
    seed: u64,
    random: usize,
    rss_limit_kib: u64,
) -> Outcome {
    let _ = std::fs::create_dir_all(out.join("failures"));
    const WORKERS: usize = 2;
    let results: Vec<Outcome> = std::thread::scope(|scope| {
        let handles: Vec<_> = (0..WORKERS)
            .map(|w| {
                scope.spawn(move || {
                    let mut mine = Outcome::default();
                    for base in BASES.iter().skip(w).step_by(WORKERS) {
                        let work = out.join(format!("readers-{w}"));
                        let _ = std::fs::create_dir_all(&work);
                        let job = Job {
                            engines,
                            fixtures,
                            work: &work,
                            failures: out,
                            rss_limit_kib,
                        };
                        job.mutate_base(base, seed, random, &mut mine);
                    }
                    mine
                })
            })
            .collect();
        handles
            .into_iter()
            .map(|h| h.join().expect("a reader mutation worker panicked"))
            .collect()
    });
    let mut outcome = Outcome::default();
    for result in results {
        outcome.merge(result);
    }
    outcome.failures.sort();
    outcome
}

/// One worker's paths and bounds.
struct Job<'a> {
    engines: &'a crate::parity::mutate::Engines<'a>,
    fixtures: &'a Path,
    /// This worker's own directory: the mutant, the caches written, the RSS files.
    work: &'a Path,
    /// Where `failures/` keeps the failing mutants.
    failures: &'a Path,
    rss_limit_kib: u64,
}

/// One CLI run: exit status, stdout (with the written cache's fingerprint), stderr.
type Run = (i32, Vec<u8>, Vec<u8>);

impl Job<'_> {
    fn mutate_base(&self, base: &Base, seed: u64, random: usize, outcome: &mut Outcome) {
        let path = self.fixtures.join(base.file);
        let original = match std::fs::read(&path) {
            Ok(bytes) => bytes,
            Err(e) => {
                outcome
                    .failures
                    .push(format!("{}: cannot read: {e}", path.display()));
                return;
            }
        };
        let name = Path::new(base.file)
            .file_name()
            .map(|n| n.to_string_lossy().into_owned());
        let name = name.unwrap_or_default();
        // One file read two ways keeps its failures apart: `templates.wevtcache+apply-5f2c2a43`.
        let label = match base.used {
            Use::Apply(guid) => format!("{name}+apply-{}", guid[..8].to_ascii_lowercase()),
            _ => name.clone(),
        };
        let list = reader_mutants(&original, seed, random);
        let before = outcome.failures.len();
        for mutant in &list {
            outcome.mutants += 1;
            outcome.max_input = outcome.max_input.max(mutant.bytes.len());
            let target = self.work.join(format!("mutant.{name}"));
            let result = std::fs::write(&target, &mutant.bytes)
                .map_err(|e| format!("cannot write {}: {e}", target.display()))
                .and_then(|()| self.check(base, &target, outcome));
            let pinned = OPEN_FINDINGS
                .iter()
                .any(|&(f, m)| f == label && m == mutant.name);
            let result = match (result, pinned) {
                (Err(why), true) => {
                    eprintln!("open finding (pinned) {label} {}: {why}", mutant.name);
                    Ok(())
                }
                (Ok(()), true) => Err("a pinned open finding now passes: unpin it".into()),
                (result, false) => result,
            };
            if let Err(why) = result {
                let keep = self
                    .failures
                    .join("failures")
                    .join(format!("{label}.{}", mutant.name));
                let _ = std::fs::write(&keep, &mutant.bytes);
                outcome.failures.push(format!(
                    "{label} {}: {why} (kept as {})",
                    mutant.name,
                    keep.display()
                ));
            }
        }
        let failed = outcome.failures.len() - before;
        eprintln!(
            "mutate {label} ({:?}): {} mutants, {failed} failing",
            base.used,
            list.len()
        );
    }

    /// The argv of one run on `target`, writing to `written` for `extract-wevt-templates`.
    fn argv(&self, base: &Base, target: &Path, written: &Path) -> Vec<String> {
        let target = target.to_string_lossy().into_owned();
        let log = self.fixtures.join(base.log).to_string_lossy().into_owned();
        let words: Vec<&str> = match base.used {
            Use::Mta => vec!["-t", "1", "-o", "jsonl", "--mta", &target, &log],
            Use::Cache => vec!["-t", "1", "-o", "jsonl", "--wevt-cache", &target, &log],
            Use::Apply(guid) => vec![
                "apply-wevt-cache",
                "--cache",
                &target,
                "--template-guid",
                guid,
                "--substitutions",
                APPLY_VALUES,
            ],
            Use::Pe => {
                let written = written.to_str().unwrap_or("written.wevtcache");
                return [
                    "extract-wevt-templates",
                    "-i",
                    &target,
                    "-o",
                    written,
                    "--overwrite",
                ]
                .map(String::from)
                .to_vec();
            }
        };
        words.into_iter().map(String::from).collect()
    }

    /// One engine under GNU time; the written cache's fingerprint appended to stdout.
    fn engine(
        &self,
        name: &str,
        program: &Path,
        base: &Base,
        target: &Path,
    ) -> Result<Run, String> {
        let written = self.work.join(format!("written-{name}.wevtcache"));
        let _ = std::fs::remove_file(&written);
        let argv = self.argv(base, target, &written);
        let argv: Vec<&str> = argv.iter().map(String::as_str).collect();
        let stats = self.work.join(format!("{name}.rss"));
        let (code, mut stdout, stderr, _) = run_measured(
            self.engines.time,
            name,
            program,
            &argv,
            &stats,
            self.rss_limit_kib,
        )?;
        if base.used == Use::Pe {
            stdout.extend_from_slice(fingerprint(&written).as_bytes());
        }
        Ok((code, stdout, stderr))
    }

    fn check(&self, base: &Base, target: &Path, outcome: &mut Outcome) -> Result<(), String> {
        // Each run names its own output file; one name makes the messages compare.
        let rust = rename_written(
            &self.engine("rust", self.engines.rust, base, target)?,
            self.work,
        );
        let zig = rename_written(
            &self.engine("zig", self.engines.zig, base, target)?,
            self.work,
        );
        compare("rust", &rust, "zig", &zig)?;

        let written = self.work.join("written-reference.wevtcache");
        let _ = std::fs::remove_file(&written);
        let argv = self.argv(base, target, &written);
        let argv: Vec<&str> = argv.iter().map(String::as_str).collect();
        let reference =
            run(self.engines.reference, &argv, TIME_LIMIT).map_err(|e| e.to_string())?;
        let code = match reference.status.and_then(|s| s.code()) {
            Some(code @ (0 | 1)) if !reference.timed_out() => code,
            // The reference died (a panic, a signal or a hang); ours did not.
            _ => {
                outcome.reference_crashed += 1;
                outcome.passed += 1;
                return Ok(());
            }
        };
        let mut stdout = reference.stdout;
        if base.used == Use::Pe {
            stdout.extend_from_slice(fingerprint(&written).as_bytes());
        }
        let stderr = without_backtrace(&reference.stderr);
        let failed = reference_failed_records(&String::from_utf8_lossy(&stderr)).len();
        if failed > 0 {
            // Records the log fails on: the reference words them in anyhow blocks, our engines
            // in one line each (shared-fixtures/README.md); the records and their count agree.
            let log = self.fixtures.join(base.log);
            let ours = parse_error_lines(&String::from_utf8_lossy(&rust.2), &log.to_string_lossy());
            if ours.len() != failed || ours.iter().any(Result::is_err) {
                return Err(format!(
                    "{} failed records where the reference has {failed}",
                    ours.len()
                ));
            }
            let theirs = (code, stdout, rust.2.clone());
            compare("reference", &theirs, "rust", &rust)?;
        } else {
            // A damaged file: the reference's error line is replaced by ours where the
            // documented mapping holds (`side_file_lines`).
            let side = (base.used != Use::Pe).then(|| target.to_string_lossy().into_owned());
            let stderr = side_file_lines(&stderr, &rust.2, side.as_deref());
            let theirs = rename_written(&(code, stdout, stderr), self.work);
            compare("reference", &theirs, "rust", &rust)?;
        }
        outcome.passed += 1;
        Ok(())
    }
}

/// `run` with the name of the cache it wrote (`written-<engine>.wevtcache`) made one name, so
/// the three CLIs' messages compare.
fn rename_written(run: &Run, work: &Path) -> Run {
    let text = |bytes: &[u8]| {
        let mut s = String::from_utf8_lossy(bytes).into_owned();
        for name in ["rust", "zig", "reference"] {
            let path = work.join(format!("written-{name}.wevtcache"));
            s = s.replace(&*path.to_string_lossy(), "WRITTEN");
        }
        s.into_bytes()
    };
    (run.0, text(&run.1), text(&run.2))
}

/// The first difference of two runs in exit status, stdout or stderr, as a failure.
fn compare(left_name: &str, left: &Run, right_name: &str, right: &Run) -> Result<(), String> {
    if left.0 != right.0 {
        return Err(format!(
            "exit status {left_name} {}, {right_name} {}",
            left.0, right.0
        ));
    }
    for (stream, a, b) in [("stdout", &left.1, &right.1), ("stderr", &left.2, &right.2)] {
        if a != b {
            let (a, b) = (String::from_utf8_lossy(a), String::from_utf8_lossy(b));
            let line = a.lines().zip(b.lines()).position(|(x, y)| x != y);
            let line = line.unwrap_or_else(|| a.lines().count().min(b.lines().count()));
            let show = |t: &str| {
                t.lines()
                    .nth(line)
                    .unwrap_or("(end)")
                    .chars()
                    .take(200)
                    .collect()
            };
            let (x, y): (String, String) = (show(&a), show(&b));
            return Err(format!(
                "{stream} line {} differs: {left_name} {x:?}, {right_name} {y:?}",
                line + 1
            ));
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reader_mutants_are_deterministic_and_cover_each_kind() {
        let mut file = b"WEVTCACH\x01\0\0\0\x01\0\0\0\x01\x20\0\0\0\0\0\0\0".to_vec();
        file.extend_from_slice(&[0x5A; 32]);
        let a = reader_mutants(&file, 3, 8);
        crate::parity::mutate::tests::assert_deterministic_and_covering(
            &a,
            &reader_mutants(&file, 3, 8),
            &[
                "truncate-at-0x0",
                "field-at-0x11-",
                "bitflips-",
                "fill-00",
                "fill-ff",
            ],
        );
        assert!(a.iter().all(|m| m.bytes != file));
    }

    #[test]
    fn a_blown_field_is_the_entry_length_at_its_unaligned_offset() {
        let mut file = b"WEVTCACH\x01\0\0\0\x01\0\0\0\x01\x20\0\0\0\0\0\0\0".to_vec();
        file.extend_from_slice(&[0x5A; 32]);
        // Offset 17: the low half of the first entry's u64 length (0x20 of 32 bytes left).
        assert!(field_candidates(&file).contains(&17));
        let m = reader_mutants(&file, 1, 0);
        let blown = m
            .iter()
            .find(|m| m.name.starts_with("field-at-0x11-"))
            .unwrap();
        assert_ne!(&blown.bytes[17..21], &file[17..21]);
    }

    #[test]
    fn written_cache_names_compare_equal() {
        let work = Path::new("/w");
        let a = (
            0,
            b"wrote 1 to `/w/written-rust.wevtcache`".to_vec(),
            Vec::new(),
        );
        let b = (
            0,
            b"wrote 1 to `/w/written-reference.wevtcache`".to_vec(),
            Vec::new(),
        );
        assert!(compare(
            "a",
            &rename_written(&a, work),
            "b",
            &rename_written(&b, work)
        )
        .is_ok());
        let c = (1, a.1.clone(), Vec::new());
        assert!(compare("a", &a, "c", &c).is_err());
    }
}
