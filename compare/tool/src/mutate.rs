//! Deterministic mutation test: damaged variants of each fixture through both engines, under a
//! time bound and a peak-RSS bound. Neither engine may crash, hang or balloon, and their outputs
//! (failed records included) must be byte-identical.

use crate::records::parse_error_lines;
use crate::run::run;
use std::path::{Path, PathBuf};
use std::time::Duration;

const CHUNK: usize = 65536;
const HEADER: usize = 4096;
/// A 64 KiB chunk taking longer than this is a hang (section "Never dies" of the issues).
const TIME_LIMIT: Duration = Duration::from_secs(10);

/// A small, seeded PRNG (xorshift64*): the same seed gives the same mutants on every machine.
pub struct Rng(u64);

impl Rng {
    pub fn new(seed: u64) -> Rng {
        Rng(seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1)
    }

    pub fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }

    pub fn below(&mut self, n: usize) -> usize {
        (self.next() % n.max(1) as u64) as usize
    }
}

/// One mutant: a name saying what was done, and its bytes.
pub struct Mutant {
    pub name: String,
    pub bytes: Vec<u8>,
}

/// Offsets of record magics (`**\0\0`) inside chunks.
fn record_offsets(bytes: &[u8]) -> Vec<usize> {
    let mut found = Vec::new();
    let mut chunk = HEADER;
    while chunk + CHUNK <= bytes.len() {
        let mut at = chunk + 512;
        while at + 4 <= chunk + CHUNK {
            if &bytes[at..at + 4] == b"**\0\0" {
                found.push(at);
            }
            at += 8; // records are 8-byte aligned
        }
        chunk += CHUNK;
    }
    found
}

/// Offsets of template-instance tokens whose definition offset field can be aimed elsewhere.
fn template_offset_fields(bytes: &[u8]) -> Vec<usize> {
    bytes
        .windows(2)
        .enumerate()
        .filter(|(_, w)| w == &[0x0C, 0x01])
        .map(|(i, _)| i + 6)
        .filter(|&f| f + 4 <= bytes.len())
        .collect()
}

fn put_u32(bytes: &mut [u8], at: usize, value: u32) {
    if at + 4 <= bytes.len() {
        bytes[at..at + 4].copy_from_slice(&value.to_le_bytes());
    }
}

/// The mutants of one file: structural ones first (every boundary), then seeded random damage.
pub fn mutants(original: &[u8], seed: u64, random: usize) -> Vec<Mutant> {
    let mut out = Vec::new();
    let mut add = |name: String, bytes: Vec<u8>| out.push(Mutant { name, bytes });
    let chunks = original.len().saturating_sub(HEADER) / CHUNK;
    let records = record_offsets(original);

    // Truncation at every structural boundary: header, chunk header, each record and its body.
    let mut cuts = vec![0, 8, 127, HEADER - 1, HEADER, HEADER + 512];
    for &r in records.iter().take(64) {
        cuts.extend([r, r + 4, r + 24, r + 40]);
    }
    for c in 0..chunks {
        cuts.push(HEADER + c * CHUNK + CHUNK / 2);
    }
    cuts.sort_unstable();
    cuts.dedup();
    for cut in cuts.into_iter().filter(|&c| c < original.len()) {
        add(format!("truncate-at-{cut:#x}"), original[..cut].to_vec());
    }
    // Record sizes: zero, too small, odd, past the chunk, absurd.
    for (i, &r) in records.iter().enumerate().take(8) {
        for size in [0u32, 27, 29, 0x1_0000, 0xFFFF_FFFF] {
            let mut bytes = original.to_vec();
            put_u32(&mut bytes, r + 4, size);
            add(format!("record{i}-size-{size:#x}"), bytes);
        }
    }
    // Template definition offsets outside the chunk, at the field itself, at the chunk start.
    for (i, &field) in template_offset_fields(original).iter().enumerate().take(8) {
        let own = ((field - HEADER) % CHUNK) as u32;
        for (what, value) in [
            ("outside", 0xFFF0u32 + 0x20),
            ("self", own),
            ("huge", 0xFFFF_FFFF),
            ("header", 0),
        ] {
            let mut bytes = original.to_vec();
            put_u32(&mut bytes, field, value);
            add(format!("template{i}-offset-{what}"), bytes);
        }
    }
    // Swapped and duplicated chunks.
    if chunks >= 2 {
        let mut bytes = original.to_vec();
        let (a, b) = bytes[HEADER..HEADER + 2 * CHUNK].split_at_mut(CHUNK);
        a.swap_with_slice(b);
        add("swap-chunks-0-1".into(), bytes);
    }
    if chunks >= 1 {
        let mut bytes = original.to_vec();
        bytes.extend_from_slice(&original[HEADER..HEADER + CHUNK]);
        add("duplicate-chunk-0".into(), bytes);
    }
    // Header chunk count and block size lies.
    for (name, at, value) in [
        ("header-chunk-count-0", 42, 0u16),
        ("header-chunk-count-max", 42, 0xFFFF),
        ("header-block-size-0", 40, 0),
    ] {
        let mut bytes = original.to_vec();
        if at + 2 <= bytes.len() {
            bytes[at..at + 2].copy_from_slice(&value.to_le_bytes());
        }
        add(name.into(), bytes);
    }
    // Seeded random damage inside the chunks: bit flips and runs of 0x00 / 0xFF.
    let mut rng = Rng::new(seed);
    let body = original.len().saturating_sub(HEADER).max(1);
    for n in 0..random {
        let mut bytes = original.to_vec();
        let kind = n % 3;
        let at = HEADER + rng.below(body);
        if at >= bytes.len() {
            continue;
        }
        match kind {
            0 => {
                for _ in 0..1 + rng.below(8) {
                    let i = HEADER + rng.below(body);
                    if i < bytes.len() {
                        bytes[i] ^= 1 << rng.below(8);
                    }
                }
                add(format!("bitflips-{n}"), bytes);
            }
            _ => {
                let fill = if kind == 1 { 0x00 } else { 0xFF };
                let len = (1 + rng.below(512)).min(bytes.len() - at);
                bytes[at..at + len].fill(fill);
                add(format!("fill-{fill:02x}-{len}-at-{at:#x}"), bytes);
            }
        }
    }
    out
}

pub struct Outcome {
    pub passed: usize,
    pub failures: Vec<String>,
}

/// Runs every mutant of every input through both engines.
pub fn run_mutation_test(
    rust: &Path,
    zig: &Path,
    inputs: &[PathBuf],
    out: &Path,
    seed: u64,
    random: usize,
    rss_limit_kib: u64,
) -> Outcome {
    let mut outcome = Outcome {
        passed: 0,
        failures: Vec::new(),
    };
    let _ = std::fs::create_dir_all(out.join("failures"));
    for input in inputs {
        let Ok(original) = std::fs::read(input) else {
            continue;
        };
        let stem = input
            .file_stem()
            .map(|s| s.to_string_lossy().into_owned())
            .unwrap_or_default();
        let list = mutants(&original, seed, random);
        let before = outcome.failures.len();
        for mutant in &list {
            let path = out.join(format!("{stem}.mutant.evtx"));
            if std::fs::write(&path, &mutant.bytes).is_err() {
                continue;
            }
            match check_mutant(rust, zig, &path, rss_limit_kib) {
                Ok(()) => outcome.passed += 1,
                Err(why) => {
                    let keep = out
                        .join("failures")
                        .join(format!("{stem}.{}.evtx", mutant.name));
                    let _ = std::fs::write(&keep, &mutant.bytes);
                    outcome.failures.push(format!(
                        "{stem} {}: {why} (kept as {})",
                        mutant.name,
                        keep.display()
                    ));
                }
            }
        }
        let failed = outcome.failures.len() - before;
        eprintln!("mutate {stem}: {} mutants, {failed} failing", list.len());
    }
    outcome
}

fn check_mutant(rust: &Path, zig: &Path, path: &Path, rss_limit_kib: u64) -> Result<(), String> {
    let mut outputs = Vec::new();
    for (name, program) in [("rust", rust), ("zig", zig)] {
        let stats = path.with_extension(format!("{name}.rss"));
        let (stats_arg, program_arg, path_arg) = (
            stats.to_string_lossy(),
            program.to_string_lossy(),
            path.to_string_lossy(),
        );
        let args = [
            "-f",
            "%M",
            "-o",
            &stats_arg,
            &program_arg,
            "-t",
            "1",
            "-o",
            "jsonl",
            &path_arg,
        ];
        let output =
            run(Path::new("/usr/bin/time"), &args, TIME_LIMIT).map_err(|e| e.to_string())?;
        if output.timed_out() {
            return Err(format!("{name} hangs (over {}s)", TIME_LIMIT.as_secs()));
        }
        // GNU time exits with the command's status, or 128+N when it died of signal N.
        let code = output.status.and_then(|s| s.code()).unwrap_or(-1);
        if code != 0 && code != 1 {
            let stderr = String::from_utf8_lossy(&output.stderr);
            return Err(format!(
                "{name} crashed ({}): {}",
                output.describe_status(),
                crate::diff::excerpt(stderr.trim_end())
            ));
        }
        let rss: u64 = std::fs::read_to_string(&stats)
            .ok()
            .and_then(|t| t.trim().lines().last()?.trim().parse().ok())
            .unwrap_or(0);
        if rss > rss_limit_kib {
            return Err(format!(
                "{name} peak RSS {rss} KiB over the bound {rss_limit_kib} KiB"
            ));
        }
        outputs.push((code, output.stdout, output.stderr));
    }
    let (rust_out, zig_out) = (&outputs[0], &outputs[1]);
    if rust_out.0 != zig_out.0 {
        return Err(format!(
            "exit status differs: rust {}, zig {}",
            rust_out.0, zig_out.0
        ));
    }
    if rust_out.1 != zig_out.1 {
        return Err("stdout differs between rust and zig".into());
    }
    let path = path.to_string_lossy();
    let errors = |stderr: &[u8]| parse_error_lines(&String::from_utf8_lossy(stderr), &path);
    if errors(&rust_out.2) != errors(&zig_out.2) {
        return Err("error lines differ between rust and zig".into());
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fake_file() -> Vec<u8> {
        let mut bytes = vec![0x5Au8; HEADER + 2 * CHUNK];
        bytes[..8].copy_from_slice(b"ElfFile\0");
        for c in 0..2 {
            let chunk = HEADER + c * CHUNK;
            bytes[chunk..chunk + 8].copy_from_slice(b"ElfChnk\0");
            bytes[chunk + 8] = c as u8; // first record number: chunks differ
            bytes[chunk + 512..chunk + 516].copy_from_slice(b"**\0\0");
            bytes[chunk + 512 + 24] = 0x0C;
            bytes[chunk + 512 + 25] = 0x01;
        }
        bytes
    }

    #[test]
    fn mutants_are_deterministic_and_cover_each_kind() {
        let file = fake_file();
        let a = mutants(&file, 7, 12);
        let b = mutants(&file, 7, 12);
        assert_eq!(a.len(), b.len());
        assert!(a
            .iter()
            .zip(&b)
            .all(|(x, y)| x.name == y.name && x.bytes == y.bytes));
        for prefix in [
            "truncate-at-",
            "record0-size-0x0",
            "template0-offset-self",
            "swap-chunks",
            "duplicate-chunk",
            "bitflips-",
            "fill-00",
            "fill-ff",
        ] {
            assert!(
                a.iter().any(|m| m.name.starts_with(prefix)),
                "no {prefix} mutant"
            );
        }
        let same: Vec<&str> = a
            .iter()
            .filter(|m| m.bytes == file)
            .map(|m| m.name.as_str())
            .collect();
        assert!(same.is_empty(), "mutants equal to their original: {same:?}");
    }

    #[test]
    fn self_pointing_template_offset_is_chunk_relative() {
        let file = fake_file();
        let m = mutants(&file, 1, 0);
        let own = m
            .iter()
            .find(|m| m.name == "template0-offset-self")
            .unwrap();
        let field = HEADER + 512 + 24 + 6;
        assert_eq!(
            u32::from_le_bytes(own.bytes[field..field + 4].try_into().unwrap()) as usize,
            512 + 24 + 6
        );
    }
}
