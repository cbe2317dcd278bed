//! The corpus volume file: about `mb` MiB assembled from chunks of real sample files, behind a
//! fresh file header. Written to `target/` only — never committed (it is derived from the
//! samples).
//!
//! Chunk selection: every slot of every `*.evtx` in the samples directory that is not all zero,
//! has the `ElfChnk\0` magic, holds records (first id <= last id, free space offset > 512) and
//! that the reference renders **without any error on its own** (each candidate is written as a
//! one-chunk file and dumped with `-t 1 -o jsonl`). Byte-identical chunks (copied samples) are
//! kept once. The candidates are repeated round-robin until the size is reached, so record ids
//! repeat; the chunk with the smallest first record id goes first, which makes the reference's
//! oldest-chunk scan pick slot 0 (ties go to the lowest slot) and the output follow file order.

use std::collections::HashSet;
use std::fs;
use std::path::Path;

use crate::expected::{run_reference, JSONL};
use crate::writer::{file_of, CHUNK_SIZE, FILE_HEADER_BLOCK};

/// A candidate chunk and where it came from.
pub struct Candidate {
    pub source: String,
    pub slot: usize,
    pub first_id: u64,
    pub bytes: Vec<u8>,
    pub records: usize,
}

fn u64_at(b: &[u8], at: usize) -> u64 {
    u64::from_le_bytes(b[at..at + 8].try_into().unwrap())
}

fn u32_at(b: &[u8], at: usize) -> u32 {
    u32::from_le_bytes(b[at..at + 4].try_into().unwrap())
}

/// Structurally plausible chunks of the sample files, deduplicated, in file/slot order.
pub fn structural_candidates(samples: &Path) -> std::io::Result<Vec<Candidate>> {
    let mut paths: Vec<_> = fs::read_dir(samples)?
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|x| x == "evtx"))
        .collect();
    paths.sort();
    let mut seen = HashSet::new();
    let mut out = Vec::new();
    for p in paths {
        let data = fs::read(&p)?;
        if data.len() < FILE_HEADER_BLOCK || &data[0..8] != b"ElfFile\0" {
            continue;
        }
        let slots = (data.len() - FILE_HEADER_BLOCK) / CHUNK_SIZE;
        for slot in 0..slots {
            let at = FILE_HEADER_BLOCK + slot * CHUNK_SIZE;
            let c = &data[at..at + CHUNK_SIZE];
            if c.iter().all(|&b| b == 0) || &c[0..8] != b"ElfChnk\0" {
                continue;
            }
            let (first, last, free) = (u64_at(c, 24), u64_at(c, 32), u32_at(c, 48));
            if first > last || free <= 512 {
                continue;
            }
            if !seen.insert(c.to_vec()) {
                continue;
            }
            out.push(Candidate {
                source: p.file_name().unwrap().to_string_lossy().into_owned(),
                slot,
                first_id: first,
                bytes: c.to_vec(),
                records: 0,
            });
        }
    }
    Ok(out)
}

/// Keeps the candidates the reference renders on their own with at least one record and no
/// error.
pub fn clean_candidates(
    cands: Vec<Candidate>,
    reference: &Path,
) -> std::io::Result<Vec<Candidate>> {
    let tmp = std::env::temp_dir().join(format!("evtx-corpus-{}", std::process::id()));
    fs::create_dir_all(&tmp)?;
    let mut kept = Vec::new();
    for mut c in cands {
        fs::write(
            tmp.join("one.evtx"),
            file_of(std::slice::from_ref(&c.bytes)),
        )?;
        let run = run_reference(reference, &tmp, "one.evtx", JSONL);
        if run.exit == Some(0) && run.failed() == 0 && run.lines() > 0 {
            c.records = run.lines();
            kept.push(c);
        } else {
            eprintln!(
                "  skip {} slot {}: {} records, {} errors",
                c.source,
                c.slot,
                run.lines(),
                run.failed()
            );
        }
    }
    let _ = fs::remove_dir_all(&tmp);
    Ok(kept)
}

/// The chunk order of the output file: the smallest first id first, then round-robin.
pub fn assemble(cands: &[Candidate], target_chunks: usize) -> Vec<Vec<u8>> {
    let start = cands
        .iter()
        .enumerate()
        .min_by_key(|(i, c)| (c.first_id, *i))
        .map(|(i, _)| i)
        .unwrap_or(0);
    (0..target_chunks)
        .map(|k| cands[(start + k) % cands.len()].bytes.clone())
        .collect()
}

pub fn write(samples: &Path, out: &Path, reference: &Path, mb: u64) -> std::io::Result<()> {
    let reference = reference.canonicalize()?;
    let target_chunks = ((mb * 1024 * 1024).saturating_sub(4096) / 65536).max(1) as usize;
    let cands = structural_candidates(samples)?;
    let n_struct = cands.len();
    let cands = clean_candidates(cands, &reference)?;
    if cands.is_empty() {
        return Err(std::io::Error::other("no usable chunk in the samples"));
    }
    let per_pass: usize = cands.iter().map(|c| c.records).sum();
    eprintln!(
        "{n_struct} non-empty magic-valid distinct chunks, {} render without errors ({per_pass} \
            records per pass)",
        cands.len()
    );
    let chunks = assemble(&cands, target_chunks);
    let bytes = file_of(&chunks);
    if let Some(dir) = out.parent() {
        fs::create_dir_all(dir)?;
    }
    fs::write(out, &bytes)?;
    let abs = out.canonicalize()?;
    let run = run_reference(
        &reference,
        abs.parent().unwrap(),
        &abs.file_name().unwrap().to_string_lossy(),
        JSONL,
    );
    eprintln!(
        "wrote {} ({} bytes, {} chunks); reference: {} records, {} errors",
        out.display(),
        bytes.len(),
        chunks.len(),
        run.lines(),
        run.failed()
    );
    if run.failed() != 0 || run.exit != Some(0) {
        return Err(std::io::Error::other(format!(
            "the reference reports errors on the assembled file:\n{}",
            run.stderr
        )));
    }
    Ok(())
}
