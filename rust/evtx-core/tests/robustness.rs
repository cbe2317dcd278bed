//! Damaged input never panics, hangs or blows up memory: random mutations of the sample logs
//! (bit flips, random bytes, extreme u16/u32 values) and random chunks are rendered in every
//! format. Deterministic (fixed seeds); `EVTX_FUZZ_ITERS` raises the number of rounds.

use evtx_core::{dump, ChunkResult, EvtxFile, Format, Options};
use std::ops::ControlFlow;
use std::path::PathBuf;

struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        // xorshift64*
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }

    fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }
}

fn samples_dir() -> PathBuf {
    std::env::var_os("EVTX_SAMPLES")
        .map(PathBuf::from)
        .unwrap_or_else(|| {
            PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../../shared/evtx-samples")
        })
}

/// Renders `data` in all formats; returns the total output size.
fn render_all(data: &[u8]) -> usize {
    let Ok(file) = EvtxFile::open(data) else {
        return 0;
    };
    let mut total = 0;
    for (format, separate) in [
        (Format::Jsonl, false),
        (Format::Jsonl, true),
        (Format::Xml, false),
    ] {
        let opts = Options {
            format,
            separate_json_attributes: separate,
            threads: 1,
            ..Options::default()
        };
        dump(&file, &opts, |chunk: &ChunkResult| {
            total += chunk.bytes.len();
            assert!(chunk.bytes.len() <= 64 << 20);
            ControlFlow::Continue(())
        });
    }
    total
}

fn mutate(rng: &mut Rng, data: &mut [u8], edits: usize) {
    // Keep the file header intact so the chunks get parsed.
    let lo = 4096.min(data.len());
    if data.len() <= lo {
        return;
    }
    for _ in 0..edits {
        let at = lo + rng.below(data.len() - lo);
        match rng.below(5) {
            0 => data[at] ^= 1 << rng.below(8),
            1 => data[at] = rng.next() as u8,
            2 => {
                let v = [0u32, 1, 0xffff, 0xffff_ffff, 0x8000_0000, 65536][rng.below(6)];
                for (i, b) in v.to_le_bytes().iter().enumerate() {
                    if let Some(x) = data.get_mut(at + i) {
                        *x = *b;
                    }
                }
            }
            3 => {
                // A valid-looking token or type byte.
                data[at] =
                    [0x0c, 0x0f, 0x01, 0x41, 0x21, 0x81, 0x8e, 0x90, 0x93, 0x13][rng.below(10)];
            }
            _ => {
                let len = rng.below(64).min(data.len() - at);
                for x in &mut data[at..at + len] {
                    *x = 0;
                }
            }
        }
    }
}

#[test]
fn mutated_samples_never_panic() {
    let dir = samples_dir();
    let names = [
        "Security_short_selected.evtx",
        "MSExchange_Management_wec.evtx",
        "Microsoft-Windows-HelloForBusiness%4Operational.evtx",
        "Application_no_crc32.evtx",
        "new-user-security.evtx",
    ];
    // A longer run (EVTX_FUZZ_ITERS set) mutates every sample, not only the small ones.
    let mut names: Vec<String> = names.iter().map(|n| n.to_string()).collect();
    if std::env::var_os("EVTX_FUZZ_ITERS").is_some() {
        if let Ok(entries) = std::fs::read_dir(&dir) {
            names = entries
                .filter_map(|e| e.ok())
                .map(|e| e.file_name().to_string_lossy().into_owned())
                .filter(|n| n.ends_with(".evtx"))
                .collect();
            names.sort();
        }
    }
    let files: Vec<Vec<u8>> = names
        .iter()
        .filter_map(|n| std::fs::read(dir.join(n)).ok())
        .collect();
    if files.is_empty() {
        eprintln!("skipping: no samples at {}", dir.display());
        return;
    }
    let rounds: usize = std::env::var("EVTX_FUZZ_ITERS")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(40);
    let mut rng = Rng(0x9e37_79b9_7f4a_7c15);
    for round in 0..rounds {
        for (i, original) in files.iter().enumerate() {
            let mut data = original.clone();
            let edits = 1 + rng.below(40);
            mutate(&mut rng, &mut data, edits);
            let result = std::panic::catch_unwind(|| render_all(&data));
            assert!(
                result.is_ok(),
                "panic on round {round}, file {}",
                names.get(i).map_or("?", |s| s.as_str())
            );
        }
    }
}

#[test]
fn random_chunks_never_panic() {
    let mut rng = Rng(0x1234_5678_9abc_def1);
    for _ in 0..20 {
        let mut data = vec![0u8; 4096 + 65536];
        data[..8].copy_from_slice(b"ElfFile\0");
        data[40..42].copy_from_slice(&4096u16.to_le_bytes());
        data[4096..4104].copy_from_slice(b"ElfChnk\0");
        for b in &mut data[4104..] {
            *b = rng.next() as u8;
        }
        // Plausible header fields so the walker starts.
        data[4096 + 48..4096 + 52].copy_from_slice(&65536u32.to_le_bytes());
        data[4096 + 512..4096 + 516].copy_from_slice(&[0x2a, 0x2a, 0, 0]);
        render_all(&data);
    }
}

#[test]
fn truncated_and_tiny_inputs_are_errors_not_panics() {
    assert!(EvtxFile::open(&[]).is_err());
    assert!(EvtxFile::open(&[0u8; 4095]).is_err());
    let mut header = vec![0u8; 4096];
    header[..8].copy_from_slice(b"ElfFile\0");
    // Header block size larger than the file.
    header[40..42].copy_from_slice(&8192u16.to_le_bytes());
    assert!(EvtxFile::open(&header).is_err());
    header[40..42].copy_from_slice(&4096u16.to_le_bytes());
    assert_eq!(render_all(&header), 0);
}
