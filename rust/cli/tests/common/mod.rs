//! What the integration tests that run the reference share: the workspace root, the reference
//! binary (`$EVTX_REFERENCE`, default `<workspace>/target/reference/bin/evtx_dump`; missing, it
//! skips the test, loudly, unless `EVTX_REQUIRE_REFERENCE=1`), and the reference under our
//! program's name (clap's `Usage:` lines name the program as invoked).

#![allow(dead_code)] // each test binary uses its own subset

use std::path::{Path, PathBuf};

pub fn workspace_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../..")
        .canonicalize()
        .expect("workspace root")
}

/// The reference binary, or `None` (after saying so) when it is missing and not required.
pub fn reference() -> Option<PathBuf> {
    let path = std::env::var_os("EVTX_REFERENCE")
        .map(PathBuf::from)
        .unwrap_or_else(|| workspace_root().join("target/reference/bin/evtx_dump"));
    if path.is_file() {
        return Some(path);
    }
    if std::env::var("EVTX_REQUIRE_REFERENCE").as_deref() == Ok("1") {
        panic!("reference binary missing at {}", path.display());
    }
    eprintln!("skipping: no reference binary at {}", path.display());
    None
}

/// A symlink named `evtx-rs` to `reference`, in a fresh scratch directory named after `tag`;
/// returns the directory (for the caller to remove) and the symlink.
pub fn reference_named_evtx_rs(reference: &Path, tag: &str) -> (PathBuf, PathBuf) {
    let dir = std::env::temp_dir().join(format!("evtx-rs-{tag}-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let alias = dir.join("evtx-rs");
    let _ = std::fs::remove_file(&alias);
    std::os::unix::fs::symlink(reference.canonicalize().unwrap(), &alias).unwrap();
    (dir, alias)
}
