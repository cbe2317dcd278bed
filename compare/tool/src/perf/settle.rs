//! One page-cache state for every benchmark input (PERF.md H189).
//!
//! A hot read of the same 30 MB log costs the kernel twice as much when its page cache is
//! made of small folios as when it is made of large ones: 64 KiB `pread`s spend their time per
//! folio. Which one a machine has depends on the file's history: written in one go (as `make
//! fixtures` writes it) or read front to back after eviction, the cache holds large folios;
//! read first by a dump's chunk-order scan (512-byte header reads 64 KiB apart, as both engines
//! and the reference do) after eviction, it holds order-0 pages at every chunk head and small
//! folios around them, and keeps them until the next eviction. That moved `-t 1` ratios
//! against the reference by 0.13-0.19 between runs that changed nothing else. So the speed
//! steps settle each input first: its dirty pages written, its cache dropped, then one
//! sequential read, which lets readahead refill it with large folios. The timed runs only read
//! it hot, so the state holds through them.

use crate::run::run;
use std::fs::File;
use std::io::Read;
use std::path::Path;
use std::time::Duration;

/// How the settled state is described in the report.
pub const METHOD: &str = "each input's page cache dropped (`dd iflag=nocache count=0`) \
    and refilled by one sequential read before timing (PERF.md H189)";

/// Reads of the refill; large enough that readahead sees one sequential stream.
const REFILL_READ: usize = 1 << 20;

/// Settles `input` (module doc). Needs GNU `dd` (coreutils), whose `iflag=nocache count=0`
/// asks the kernel to drop the whole file's clean pages (`posix_fadvise(DONTNEED)`).
pub fn settle(input: &Path) -> Result<(), String> {
    let file = File::open(input).map_err(|e| format!("{}: {e}", input.display()))?;
    // Dirty pages (a log just written) cannot be dropped; written back first, they can.
    file.sync_all()
        .map_err(|e| format!("{}: fsync: {e}", input.display()))?;
    drop_cache(input)?;
    refill(file).map_err(|e| format!("{}: {e}", input.display()))
}

/// Drops `input`'s clean pages from the page cache.
fn drop_cache(input: &Path) -> Result<(), String> {
    let operand = format!("if={}", input.display());
    let args = [operand.as_str(), "iflag=nocache", "count=0", "status=none"];
    let out =
        run(Path::new("dd"), &args, Duration::from_secs(60)).map_err(|e| format!("dd: {e}"))?;
    if out.status.is_some_and(|s| s.success()) {
        return Ok(());
    }
    Err(format!(
        "dd iflag=nocache on {}: {}: {}",
        input.display(),
        out.describe_status(),
        String::from_utf8_lossy(&out.stderr).trim()
    ))
}

/// Reads `file` front to back once.
fn refill(mut file: File) -> std::io::Result<()> {
    let mut buffer = vec![0u8; REFILL_READ];
    while file.read(&mut buffer)? > 0 {}
    Ok(())
}

/// `evtx-compare settle FILE...`: the same, for ad-hoc `paired` runs. Settles every input it
/// can; `Ok(false)` when one could not be.
pub fn settle_command(inputs: &[std::path::PathBuf]) -> Result<bool, String> {
    let mut all = true;
    for input in inputs {
        match settle(input) {
            Ok(()) => eprintln!("settled: {}", input.display()),
            Err(e) => {
                eprintln!("settle: {e}");
                all = false;
            }
        }
    }
    Ok(all)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Resident pages of `path` by util-linux's `fincore`; `None` when it is not installed.
    fn resident_pages(path: &Path) -> Option<u64> {
        let path = path.to_str().expect("a UTF-8 temp path");
        let args = ["--bytes", "--noheadings", "--output", "PAGES", path];
        let out = run(Path::new("fincore"), &args, Duration::from_secs(30)).ok()?;
        String::from_utf8_lossy(&out.stdout).trim().parse().ok()
    }

    #[test]
    fn settling_drops_the_cache_and_reads_the_whole_file_back() {
        let dir = std::env::temp_dir().join(format!("evtx-compare-settle-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("log.bin");
        let pages = 1024u64;
        std::fs::write(&path, vec![0x5au8; (pages * 4096) as usize]).unwrap();
        File::open(&path).unwrap().sync_all().unwrap();
        let Some(written) = resident_pages(&path) else {
            eprintln!("skipped: no fincore (util-linux) to observe the page cache");
            std::fs::remove_dir_all(&dir).unwrap();
            return;
        };
        assert_eq!(written, pages, "a file just written is resident");
        drop_cache(&path).unwrap();
        let dropped = resident_pages(&path).unwrap();
        // The drop is what gives the refill its readahead; a kernel may keep a page or two.
        assert!(
            dropped <= 2,
            "{dropped} of {pages} pages left after the drop"
        );
        settle(&path).unwrap();
        assert_eq!(resident_pages(&path).unwrap(), pages);
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn a_missing_input_is_an_error_naming_it() {
        let e = settle(Path::new("/nonexistent/evtx-compare/log.evtx")).unwrap_err();
        assert!(e.contains("/nonexistent/evtx-compare/log.evtx"), "{e}");
    }
}
