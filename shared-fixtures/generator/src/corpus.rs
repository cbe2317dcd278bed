//! The ~30 MB file assembled from sample chunks.

use std::path::Path;

pub fn write(_samples: &Path, _out: &Path, _reference: &Path, _mb: u64) -> std::io::Result<()> {
    Err(std::io::Error::other("corpus: not implemented yet"))
}
