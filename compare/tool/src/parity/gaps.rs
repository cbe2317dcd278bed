//! Known gaps: justified differences, each with a reason, pinned exactly. A difference matched
//! by an entry does not fail the run; an entry that explains nothing in some (pair, mode) it
//! names, in a run that compared that file in that mode, is stale and fails the run, so the list
//! cannot rot and cannot hide more than it says. An entry with a list of records is stale as
//! soon as one of its records explains nothing in one of its (pair, mode) comparisons: a list is
//! shorthand for one entry per record and mode, pinned as tightly.
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
//! `pair` may be `reference-*` for both engines. `mode` is one mode, `*` (every mode) or
//! `*-suffix` (every mode ending in `-suffix`); `modes: ["jsonl", "xml-recover"]` instead names
//! exact modes. `records: [21, 22]` instead of `record` names several records, each explained in
//! every (pair, mode) the entry names; `"carved": true` limits an `extra-record` entry to the
//! carved copies of its records. Bytes differences (order, framing) and whole-run
//! differences (exit status, crash, timeout) are never explainable.

use crate::parity::diff::{Category, Difference};
use serde::{Deserialize, Serialize};
use std::cell::RefCell;
use std::collections::BTreeSet;
use std::path::Path;

#[derive(Debug, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct Gap {
    pub file: String,
    pub pair: String,
    /// One mode or a pattern (`*`, `*-suffix`); exactly one of `mode` and `modes` is given.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mode: Option<String>,
    /// Exact mode names.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub modes: Option<Vec<String>>,
    pub category: String,
    /// One record; a record category gives exactly one of `record` and `records`.
    #[serde(default)]
    pub record: Option<u64>,
    /// Several records, each pinned in every (pair, mode) the entry names.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub records: Option<Vec<u64>>,
    /// `extra-record` only: the records are carved copies (`Record N (recovered)`), so a live
    /// record with the same id (a log assembled from several, where ids repeat) stays compared.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub carved: bool,
    #[serde(default)]
    pub reference_failures: Option<usize>,
    #[serde(default)]
    pub engine_failures: Option<Vec<Option<u64>>>,
    pub reason: String,
    /// The (pair, mode) comparisons of its file that ran.
    #[serde(skip)]
    covered: RefCell<BTreeSet<(String, String)>>,
    /// What it explained, per (pair, mode): the record (`None` for a count entry).
    #[serde(skip)]
    used: RefCell<BTreeSet<(String, String, Option<u64>)>>,
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

    /// No entries: for checks no known gap may explain (`info`).
    pub fn none() -> KnownGaps {
        KnownGaps { gaps: Vec::new() }
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
        let id = difference.record_id?;
        let gap = self.gaps.iter().find(|g| {
            g.applies(file, pair, mode)
                && g.category == difference.category.name()
                && g.record_ids().contains(&Some(id))
        })?;
        gap.used
            .borrow_mut()
            .insert((pair.to_string(), mode.to_string(), Some(id)));
        Some(&gap.reason)
    }

    /// The records the engine may print and the reference does not (`extra-record` entries):
    /// each id with whether only its carved copies are meant.
    pub fn extra_records(&self, file: &str, pair: &str, mode: &str) -> Vec<(u64, bool)> {
        self.gaps
            .iter()
            .filter(|g| g.applies(file, pair, mode) && g.category == "extra-record")
            .flat_map(|g| {
                g.record_ids()
                    .into_iter()
                    .flatten()
                    .map(|id| (id, g.carved))
            })
            .collect()
    }

    /// The pinned failure counts for this comparison, if an `error-records` entry names it.
    pub fn error_records(&self, file: &str, pair: &str, mode: &str) -> Option<&Gap> {
        self.gaps
            .iter()
            .find(|g| g.applies(file, pair, mode) && g.category == "error-records")
    }

    /// Entries with a (pair, mode) comparison that ran but that they (or one of their records)
    /// explained nothing in, each with those comparisons.
    pub fn stale(&self) -> Vec<(&Gap, Vec<String>)> {
        self.gaps
            .iter()
            .filter_map(|g| {
                let used = g.used.borrow();
                let mut unused = Vec::new();
                for (pair, mode) in g.covered.borrow().iter() {
                    for id in g.record_ids() {
                        if !used.contains(&(pair.clone(), mode.clone(), id)) {
                            unused.push(match id {
                                Some(id) if g.records.is_some() => {
                                    format!("{pair} {mode} record {id}")
                                }
                                _ => format!("{pair} {mode}"),
                            });
                        }
                    }
                }
                (!unused.is_empty()).then_some((g, unused))
            })
            .collect()
    }

    /// Mode names the entries give (in `mode` or `modes`, patterns aside) that are not in
    /// `known`: a misspelt mode would pin nothing, silently.
    pub fn unknown_modes(&self, known: &[&str]) -> Vec<String> {
        self.gaps
            .iter()
            .flat_map(|g| {
                let names: Vec<&String> = match (&g.mode, &g.modes) {
                    (Some(m), _) if !m.starts_with('*') => vec![m],
                    (_, Some(list)) => list.iter().collect(),
                    _ => Vec::new(),
                };
                names
                    .into_iter()
                    .filter(|n| !known.contains(&n.as_str()))
                    .map(|n| format!("{}: no parity mode {n:?}", g.file))
                    .collect::<Vec<_>>()
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
        match (&self.mode, &self.modes) {
            (Some(_), None) => {}
            (None, Some(list)) => check_list(list, "modes")?,
            _ => return Err("an entry gives exactly one of mode and modes".into()),
        }
        if self.carved && category != Category::ExtraRecord {
            return Err("only an extra-record entry can be limited to carved records".into());
        }
        match category {
            Category::ErrorRecords => {
                if self.record.is_some()
                    || self.records.is_some()
                    || self.reference_failures.is_none()
                    || self.engine_failures.is_none()
                {
                    return Err("an error-records entry pins reference_failures and \
                        engine_failures, and no record"
                        .into());
                }
            }
            Category::ExtraRecord
            | Category::MissingRecord
            | Category::ValueFormatting
            | Category::Structure => {
                match (&self.record, &self.records) {
                    (Some(_), None) => {}
                    (None, Some(list)) => check_list(list, "records")?,
                    _ => {
                        return Err(format!(
                            "a {} entry names its records: exactly one of record and records",
                            self.category
                        ))
                    }
                }
                if self.reference_failures.is_some() || self.engine_failures.is_some() {
                    return Err(format!("a {} entry pins no counts", self.category));
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

    /// The entry in words (file, pair, modes, category, records), for the stale-entry message.
    pub fn describe(&self) -> String {
        let mode = match (&self.mode, &self.modes) {
            (Some(mode), _) => mode.clone(),
            (_, Some(list)) => format!("[{}]", list.join(", ")),
            _ => String::new(),
        };
        let records = match (&self.record, &self.records) {
            (Some(id), _) => format!(" record {id}"),
            (_, Some(list)) => format!(" records {list:?}"),
            _ => String::new(),
        };
        format!(
            "{} {} {mode} {}{records}",
            self.file, self.pair, self.category
        )
    }

    /// What must be explained in each (pair, mode) it names: each of its records, or `None`
    /// once for a count entry.
    fn record_ids(&self) -> Vec<Option<u64>> {
        match (&self.record, &self.records) {
            (_, Some(list)) => list.iter().copied().map(Some).collect(),
            (Some(id), None) => vec![Some(*id)],
            (None, None) => vec![None],
        }
    }

    /// Records that this (count) entry explained the `pair` comparison in `mode`.
    pub fn mark_used(&self, pair: &str, mode: &str) {
        self.used
            .borrow_mut()
            .insert((pair.to_string(), mode.to_string(), None));
    }

    fn applies(&self, file: &str, pair: &str, mode: &str) -> bool {
        let pair_matches =
            self.pair == pair || (self.pair == "reference-*" && pair.starts_with("reference-"));
        let mode_matches = match (&self.mode, &self.modes) {
            // `*-suffix` matches every mode ending in `-suffix` (e.g. `*-recover`).
            (Some(pattern), _) => {
                pattern == "*"
                    || pattern == mode
                    || pattern
                        .strip_prefix('*')
                        .is_some_and(|suffix| suffix.starts_with('-') && mode.ends_with(suffix))
            }
            (None, Some(list)) => list.iter().any(|m| m == mode),
            (None, None) => false,
        };
        self.file == file && pair_matches && mode_matches
    }
}

/// A list field: not empty, no element twice (a repeated one would pin nothing more).
fn check_list<T: Ord + std::fmt::Debug>(list: &[T], field: &str) -> Result<(), String> {
    if list.is_empty() {
        return Err(format!("{field} is empty"));
    }
    let unique: BTreeSet<&T> = list.iter().collect();
    if unique.len() != list.len() {
        return Err(format!("{field} names an element twice: {list:?}"));
    }
    Ok(())
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
            r#"[{"file":"a.evtx","pair":"reference-*","mode":"*","category":"extra-record",
                "record":3,"reason":"r"},{"file":"a.evtx","pair":"rust-zig","mode":"xml",
                "category":"structure","record":1,"reason":"s"}]"#,
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
            r#"[{"file":"a.evtx","pair":"reference-*","mode":"*","category":"extra-record",
                "record":3,"reason":"r"}]"#,
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
            r#"[{"file":"a","pair":"p","mode":"*","category":"extra-record","record":null,
                "reason":"r"}]"#,
            r#"[{"file":"a","pair":"p","mode":"*","category":"error-records","record":null,
                "reason":"r"}]"#,
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
            r#"[{"file":"a.evtx","pair":"reference-*","mode":"*","category":"structure",
                "record":3,"reason":"r"}]"#,
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
            r#"[{"file":"b.evtx","pair":"rust-zig","mode":"*","category":"structure","record":1,
                "reason":"r"}]"#,
        );
        known.cover("a.evtx", "rust-zig", "jsonl");
        assert!(known.stale().is_empty());
    }

    fn extra_list() -> KnownGaps {
        KnownGaps::from_json(
            r#"[{"file":"a.evtx","pair":"reference-*","modes":["jsonl-recover","xml-recover"],
                "category":"extra-record","records":[21,22],"reason":"r"}]"#,
        )
    }

    #[test]
    fn a_carved_entry_names_carved_copies_and_only_extra_records() {
        let known = KnownGaps::from_json(
            r#"[{"file":"a.evtx","pair":"reference-*","mode":"jsonl-recover","carved":true,
                "category":"extra-record","records":[7],"reason":"r"}]"#,
        );
        assert_eq!(
            known.extra_records("a.evtx", "reference-rust", "jsonl-recover"),
            vec![(7, true)]
        );
        let refused: Vec<Gap> = serde_json::from_str(
            r#"[{"file":"a.evtx","pair":"reference-*","mode":"*","carved":true,
                "category":"error-records","reference_failures":1,"engine_failures":[],
                "reason":"r"}]"#,
        )
        .unwrap();
        assert!(refused[0].validate().is_err());
    }

    #[test]
    fn a_list_entry_applies_to_its_modes_and_records_only() {
        let known = extra_list();
        assert_eq!(
            known.extra_records("a.evtx", "reference-zig", "xml-recover"),
            vec![(21, false), (22, false)]
        );
        assert!(known
            .extra_records("a.evtx", "reference-zig", "xml")
            .is_empty());
        assert!(known
            .extra_records("a.evtx", "reference-zig", "json-recover")
            .is_empty());
        assert!(known
            .extra_records("a.evtx", "rust-zig", "xml-recover")
            .is_empty());
        let d = |id| diff(Category::ExtraRecord, id);
        assert!(known
            .explain("a.evtx", "reference-rust", "jsonl-recover", &d(22))
            .is_some());
        assert!(known
            .explain("a.evtx", "reference-rust", "jsonl-recover", &d(23))
            .is_none());
        assert!(known
            .explain("a.evtx", "reference-rust", "jsonl", &d(21))
            .is_none());
        let mut structure = d(21);
        structure.category = Category::Structure;
        assert!(known
            .explain("a.evtx", "reference-rust", "jsonl-recover", &structure)
            .is_none());
    }

    #[test]
    fn a_list_entry_is_not_stale_when_every_record_is_used_in_every_mode() {
        let known = extra_list();
        for pair in ["reference-rust", "reference-zig"] {
            for mode in ["jsonl-recover", "xml-recover"] {
                known.cover("a.evtx", pair, mode);
                for id in [21, 22] {
                    known.explain("a.evtx", pair, mode, &diff(Category::ExtraRecord, id));
                }
            }
            // A mode it does not name is not covered.
            known.cover("a.evtx", pair, "json-recover");
        }
        assert!(known.stale().is_empty());
    }

    #[test]
    fn one_record_of_a_list_unused_in_one_mode_is_stale() {
        let known = extra_list();
        for mode in ["jsonl-recover", "xml-recover"] {
            known.cover("a.evtx", "reference-rust", mode);
            known.explain(
                "a.evtx",
                "reference-rust",
                mode,
                &diff(Category::ExtraRecord, 21),
            );
        }
        known.explain(
            "a.evtx",
            "reference-rust",
            "jsonl-recover",
            &diff(Category::ExtraRecord, 22),
        );
        let stale = known.stale();
        assert_eq!(stale.len(), 1);
        assert_eq!(
            stale[0].1,
            vec!["reference-rust xml-recover record 22".to_string()]
        );
    }

    #[test]
    fn a_count_entry_with_a_mode_list_is_stale_in_a_named_mode_it_did_not_explain() {
        let known = KnownGaps::from_json(
            r#"[{"file":"a.evtx","pair":"reference-*","modes":["jsonl","xml"],
                "category":"error-records","reference_failures":0,"engine_failures":[null],
                "reason":"r"}]"#,
        );
        known.cover("a.evtx", "reference-zig", "jsonl");
        known.cover("a.evtx", "reference-zig", "xml");
        known.cover("a.evtx", "reference-zig", "json");
        assert!(known
            .error_records("a.evtx", "reference-zig", "json")
            .is_none());
        let gap = known
            .error_records("a.evtx", "reference-zig", "jsonl")
            .unwrap();
        gap.mark_used("reference-zig", "jsonl");
        let stale = known.stale();
        assert_eq!(stale.len(), 1);
        assert_eq!(stale[0].1, vec!["reference-zig xml".to_string()]);
    }

    #[test]
    fn list_fields_must_be_exact() {
        for bad in [
            // Both mode and modes, or neither.
            r#"[{"file":"a","pair":"p","mode":"*","modes":["xml"],"category":"extra-record",
                "record":1,"reason":"r"}]"#,
            r#"[{"file":"a","pair":"p","category":"extra-record","record":1,"reason":"r"}]"#,
            // Empty or repeated lists.
            r#"[{"file":"a","pair":"p","modes":[],"category":"extra-record","record":1,
                "reason":"r"}]"#,
            r#"[{"file":"a","pair":"p","modes":["xml","xml"],"category":"extra-record",
                "record":1,"reason":"r"}]"#,
            r#"[{"file":"a","pair":"p","mode":"*","category":"extra-record","records":[],
                "reason":"r"}]"#,
            r#"[{"file":"a","pair":"p","mode":"*","category":"extra-record","records":[3,3],
                "reason":"r"}]"#,
            // Both record and records; records on a count entry.
            r#"[{"file":"a","pair":"p","mode":"*","category":"extra-record","record":1,
                "records":[2],"reason":"r"}]"#,
            r#"[{"file":"a","pair":"p","mode":"*","category":"error-records","records":[2],
                "reference_failures":0,"engine_failures":[],"reason":"r"}]"#,
        ] {
            let gaps: Vec<Gap> = serde_json::from_str(bad).unwrap();
            assert!(gaps[0].validate().is_err(), "{bad}");
        }
    }

    #[test]
    fn misspelt_modes_are_reported() {
        let known = KnownGaps::from_json(
            r#"[{"file":"a.evtx","pair":"p","modes":["xml","xml-recovr"],
                "category":"extra-record","record":1,"reason":"r"},{"file":"a.evtx","pair":"p",
                "mode":"*-recover","category":"extra-record","record":1,"reason":"r"}]"#,
        );
        assert_eq!(
            known.unknown_modes(&["xml", "xml-recover"]),
            vec!["a.evtx: no parity mode \"xml-recovr\"".to_string()]
        );
    }
}
