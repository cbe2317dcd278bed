//! Known gaps: justified differences, each with a reason, pinned exactly. A difference matched
//! by an entry does not fail the run; an entry that explains nothing in some (pair, mode) it
//! names, in a run that compared that file in that mode, is stale and fails the run, so the list
//! cannot rot and cannot hide more than it says.
//!
//! Entries live in `shared-fixtures/known-gaps/*.json`, each file a JSON array of:
//! * `{"file": "x.evtx", "pair": "reference-*", "mode": "jsonl" | "*", "category": "extra-record",
//!   "record": 3, "reason": "..."}`: the engines print record 3, the reference does not; the
//!   engine's output with that record removed must still equal the reference's byte for byte.
//! * `{"file": ..., "category": "error-records", "reference_failures": 10,
//!   "engine_failures": [9, 10, 11], "reason": "..."}`: the reference fails exactly 10 records,
//!   the engine exactly records 9, 10 and 11 (the record ids of its error lines, in order;
//!   `null` for a chunk error, whose line names no record).
//!
//! `pair` may be `reference-*` for both engines. Bytes differences (order, framing) and whole-run
//! differences (exit status, crash, timeout) are never explainable.

use crate::diff::{Category, Difference};
use serde::{Deserialize, Serialize};
use std::cell::RefCell;
use std::collections::BTreeSet;
use std::path::Path;

#[derive(Debug, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct Gap {
    pub file: String,
    pub pair: String,
    pub mode: String,
    pub category: String,
    #[serde(default)]
    pub record: Option<u64>,
    #[serde(default)]
    pub reference_failures: Option<usize>,
    #[serde(default)]
    pub engine_failures: Option<Vec<Option<u64>>>,
    pub reason: String,
    /// The (pair, mode) comparisons of its file that ran, and those it explained something in.
    #[serde(skip)]
    covered: RefCell<BTreeSet<(String, String)>>,
    #[serde(skip)]
    used: RefCell<BTreeSet<(String, String)>>,
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
                gap.validate()
                    .map_err(|e| format!("{}: entry for {}: {e}", path.display(), gap.file))?;
            }
            gaps.append(&mut list);
        }
        Ok(KnownGaps { gaps })
    }

    #[cfg(test)]
    pub fn from_json(json: &str) -> KnownGaps {
        let gaps: Vec<Gap> = serde_json::from_str(json).unwrap();
        for gap in &gaps {
            gap.validate().unwrap();
        }
        KnownGaps { gaps }
    }

    /// Notes that a comparison of `file` in `mode` for `pair` ran, so its entries can go stale.
    pub fn cover(&self, file: &str, pair: &str, mode: &str) {
        for gap in self.gaps.iter().filter(|g| g.applies(file, pair, mode)) {
            gap.covered
                .borrow_mut()
                .insert((pair.to_string(), mode.to_string()));
        }
    }

    /// The reason, when a known gap explains this record difference exactly (same record id).
    pub fn explain(
        &self,
        file: &str,
        pair: &str,
        mode: &str,
        difference: &Difference,
    ) -> Option<&str> {
        if difference.category == Category::Bytes || difference.record_id.is_none() {
            return None;
        }
        let gap = self.gaps.iter().find(|g| {
            g.applies(file, pair, mode)
                && g.category == difference.category.name()
                && g.record == difference.record_id
        })?;
        gap.mark_used(pair, mode);
        Some(&gap.reason)
    }

    /// The record ids the engine may print and the reference does not (`extra-record` entries).
    pub fn extra_records(&self, file: &str, pair: &str, mode: &str) -> Vec<u64> {
        self.gaps
            .iter()
            .filter(|g| g.applies(file, pair, mode) && g.category == "extra-record")
            .filter_map(|g| g.record)
            .collect()
    }

    /// The pinned failure counts for this comparison, if an `error-records` entry names it.
    pub fn error_records(&self, file: &str, pair: &str, mode: &str) -> Option<&Gap> {
        self.gaps
            .iter()
            .find(|g| g.applies(file, pair, mode) && g.category == "error-records")
    }

    /// Entries with a (pair, mode) comparison that ran but that they explained nothing in, each
    /// with those comparisons.
    pub fn stale(&self) -> Vec<(&Gap, Vec<String>)> {
        self.gaps
            .iter()
            .filter_map(|g| {
                let used = g.used.borrow();
                let unused: Vec<String> = g
                    .covered
                    .borrow()
                    .iter()
                    .filter(|k| !used.contains(*k))
                    .map(|(pair, mode)| format!("{pair} {mode}"))
                    .collect();
                (!unused.is_empty()).then_some((g, unused))
            })
            .collect()
    }
}

impl Gap {
    fn validate(&self) -> Result<(), String> {
        let category = Category::parse(&self.category)
            .ok_or_else(|| format!("unknown category {:?}", self.category))?;
        if self.reason.trim().is_empty() {
            return Err("no reason".into());
        }
        match category {
            Category::ErrorRecords => {
                if self.record.is_some()
                    || self.reference_failures.is_none()
                    || self.engine_failures.is_none()
                {
                    return Err("an error-records entry pins reference_failures and engine_failures, and no record".into());
                }
            }
            Category::ExtraRecord
            | Category::MissingRecord
            | Category::ValueFormatting
            | Category::Structure => {
                if self.record.is_none()
                    || self.reference_failures.is_some()
                    || self.engine_failures.is_some()
                {
                    return Err(format!(
                        "a {} entry names exactly one record",
                        self.category
                    ));
                }
            }
            Category::Bytes | Category::Crash | Category::Timeout => {
                return Err(format!(
                    "{} differences cannot be a known gap",
                    self.category
                ));
            }
        }
        Ok(())
    }

    /// Records that this entry explained something in the `pair` comparison in `mode`.
    pub fn mark_used(&self, pair: &str, mode: &str) {
        self.used
            .borrow_mut()
            .insert((pair.to_string(), mode.to_string()));
    }

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
        let known = KnownGaps::from_json(
            r#"[{"file":"a.evtx","pair":"reference-*","mode":"*","category":"extra-record","record":3,"reason":"r"},
                {"file":"a.evtx","pair":"rust-zig","mode":"xml","category":"structure","record":1,"reason":"s"}]"#,
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
        let stale: Vec<_> = known.stale().iter().map(|(g, _)| g.pair.clone()).collect();
        assert_eq!(stale, vec!["rust-zig".to_string()]);
    }

    #[test]
    fn an_entry_unused_in_one_mode_it_names_is_stale() {
        let known = KnownGaps::from_json(
            r#"[{"file":"a.evtx","pair":"reference-*","mode":"*","category":"extra-record","record":3,"reason":"r"}]"#,
        );
        for mode in ["jsonl", "xml"] {
            known.cover("a.evtx", "reference-rust", mode);
        }
        known.explain(
            "a.evtx",
            "reference-rust",
            "jsonl",
            &diff(Category::ExtraRecord, 3),
        );
        let stale = known.stale();
        assert_eq!(stale.len(), 1);
        assert_eq!(stale[0].1, vec!["reference-rust xml".to_string()]);
    }

    #[test]
    fn entries_must_pin_records_and_counts() {
        for bad in [
            r#"[{"file":"a","pair":"p","mode":"*","category":"extra-record","record":null,"reason":"r"}]"#,
            r#"[{"file":"a","pair":"p","mode":"*","category":"error-records","record":null,"reason":"r"}]"#,
            r#"[{"file":"a","pair":"p","mode":"*","category":"bytes","record":1,"reason":"r"}]"#,
            r#"[{"file":"a","pair":"p","mode":"*","category":"crash","record":1,"reason":"r"}]"#,
        ] {
            let gaps: Vec<Gap> = serde_json::from_str(bad).unwrap();
            assert!(gaps[0].validate().is_err(), "{bad}");
        }
    }

    #[test]
    fn whole_run_and_bytes_differences_are_never_explained() {
        let known = KnownGaps::from_json(
            r#"[{"file":"a.evtx","pair":"reference-*","mode":"*","category":"structure","record":3,"reason":"r"}]"#,
        );
        let mut d = diff(Category::Bytes, 3);
        assert!(known
            .explain("a.evtx", "reference-zig", "xml", &d)
            .is_none());
        d.category = Category::Structure;
        d.record_id = None;
        assert!(known
            .explain("a.evtx", "reference-zig", "xml", &d)
            .is_none());
    }

    #[test]
    fn entries_for_files_not_in_the_run_are_not_stale() {
        let known = KnownGaps::from_json(
            r#"[{"file":"b.evtx","pair":"rust-zig","mode":"*","category":"structure","record":1,"reason":"r"}]"#,
        );
        known.cover("a.evtx", "rust-zig", "jsonl");
        assert!(known.stale().is_empty());
    }
}
