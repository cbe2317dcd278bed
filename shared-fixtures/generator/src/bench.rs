//! The ~30 MB Security-like volume log.

use std::path::Path;

pub fn write(_out: &Path, _seed: u64, _mb: u64) -> std::io::Result<()> {
    Err(std::io::Error::other("bench: not implemented yet"))
}
