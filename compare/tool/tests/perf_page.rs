//! `PERF.md`'s generated block is what `evtx-compare perf-page` makes of the newest record in
//! `perf/record/`, so the front page cannot show figures the record does not hold.

use std::path::Path;
use std::process::Command;

#[test]
fn the_front_page_shows_the_newest_record() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let output = Command::new(env!("CARGO_BIN_EXE_evtx-compare"))
        .args(["perf-page", "--check"])
        .current_dir(&root)
        .output()
        .expect("evtx-compare runs");
    assert!(
        output.status.success(),
        "{}{}",
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    );
}
