//! Known gaps: justified differences, each with a reason. A difference matched by an entry does
//! not fail the run; an entry that matches nothing in a run that covered its file is stale and
//! does fail it, so the list cannot rot.
//!
//! Entries live in `shared-fixtures/known-gaps/*.json`, each file a JSON array of:
//! `{"file": "x.evtx", "pair": "reference-rust", "mode": "jsonl" | "*", "category": "extra-record",
//!   "record": 3 | null, "reason": "..."}`. `pair` may be `reference-*` for both engines.

use crate::diff::{Category, Difference};
use serde::{Deserialize, Serialize};
use std::cell::Cell;
use std::path::Path;

#[derive(Debug, Deserialize, Serialize)]
pub struct Gap {
    pub file: String,
    pub pair: String,
    pub mode: String,
    pub category: String,
    pub record: Option<u64>,
    pub reason: String,
    #[serde(skip)]
    used: Cell<bool>,
    #[serde(skip)]
    covered: Cell<bool>,
}

pub struct KnownGaps {
    gaps: Vec<Gap>,
}

impl KnownGaps {
    /// Reads every `*.json` in `dir`; a missing directory means no known gaps.
    pub fn load(dir: &Path) -> Result<KnownGaps, String> {
        let mut gaps = Vec::new();
        let Ok(entries) = std::fs::read_dir(dir) else {
            return Ok(KnownGaps { gaps });
        };
        let mut paths: Vec<_> = entries.filter_map(|e| e.ok().map(|e| e.path())).collect();
        paths.sort();
        for path in paths
            .iter()
            .filter(|p| p.extension().is_some_and(|e| e == "json"))
        {
            let text =
                std::fs::read_to_string(path).map_err(|e| format!("{}: {e}", path.display()))?;
            let mut list: Vec<Gap> =
                serde_json::from_str(&text).map_err(|e| format!("{}: {e}", path.display()))?;
            for gap in &list {
                if Category::parse(&gap.category).is_none() {
                    return Err(format!(
                        "{}: unknown category {:?}",
                        path.display(),
                        gap.category
                    ));
                }
                if gap.reason.trim().is_empty() {
                    return Err(format!(
                        "{}: entry for {} has no reason",
                        path.display(),
                        gap.file
                    ));
                }
            }
            gaps.append(&mut list);
        }
        Ok(KnownGaps { gaps })
    }

    /// Notes that a comparison of `file` in `mode` for `pair` ran, so its entries can go stale.
    pub fn cover(&self, file: &str, pair: &str, mode: &str) {
        for gap in self.gaps.iter().filter(|g| g.applies(file, pair, mode)) {
            gap.covered.set(true);
        }
    }

    /// The reason, when a known gap explains this difference.
    pub fn explain(
        &self,
        file: &str,
        pair: &str,
        mode: &str,
        difference: &Difference,
    ) -> Option<&str> {
        let gap = self.gaps.iter().find(|g| {
            g.applies(file, pair, mode)
                && g.category == difference.category.name()
                && (g.record.is_none() || g.record == difference.record_id)
        })?;
        gap.used.set(true);
        Some(&gap.reason)
    }

    /// Entries whose comparisons ran but which explained nothing.
    pub fn stale(&self) -> Vec<&Gap> {
        self.gaps
            .iter()
            .filter(|g| g.covered.get() && !g.used.get())
            .collect()
    }
}

impl Gap {
    fn applies(&self, file: &str, pair: &str, mode: &str) -> bool {
        let pair_matches =
            self.pair == pair || (self.pair == "reference-*" && pair.starts_with("reference-"));
        // `*-suffix` matches every mode ending in `-suffix` (e.g. `*-recover`).
        let mode_matches = self.mode == "*"
            || self.mode == mode
            || self
                .mode
                .strip_prefix('*')
                .is_some_and(|suffix| suffix.starts_with('-') && mode.ends_with(suffix));
        self.file == file && pair_matches && mode_matches
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn gaps(json: &str) -> KnownGaps {
        KnownGaps {
            gaps: serde_json::from_str(json).unwrap(),
        }
    }

    fn diff(category: Category, id: u64) -> Difference {
        Difference {
            category,
            record: format!("record {id}"),
            record_id: Some(id),
            at: String::new(),
            expected: String::new(),
            actual: String::new(),
        }
    }

    #[test]
    fn explains_matching_differences_and_reports_unused_entries_as_stale() {
        let known = gaps(
            r#"[{"file":"a.evtx","pair":"reference-*","mode":"*","category":"extra-record","record":3,"reason":"r"},
                {"file":"a.evtx","pair":"rust-zig","mode":"xml","category":"structure","record":null,"reason":"s"}]"#,
        );
        known.cover("a.evtx", "reference-rust", "jsonl");
        known.cover("a.evtx", "rust-zig", "xml");
        assert!(known
            .explain(
                "a.evtx",
                "reference-rust",
                "jsonl",
                &diff(Category::ExtraRecord, 3)
            )
            .is_some());
        assert!(known
            .explain(
                "a.evtx",
                "reference-rust",
                "jsonl",
                &diff(Category::ExtraRecord, 4)
            )
            .is_none());
        let stale: Vec<_> = known.stale().iter().map(|g| g.pair.clone()).collect();
        assert_eq!(stale, vec!["rust-zig".to_string()]);
    }

    #[test]
    fn entries_for_files_not_in_the_run_are_not_stale() {
        let known = gaps(
            r#"[{"file":"b.evtx","pair":"rust-zig","mode":"*","category":"crash","record":null,"reason":"r"}]"#,
        );
        known.cover("a.evtx", "rust-zig", "jsonl");
        assert!(known.stale().is_empty());
    }
}
