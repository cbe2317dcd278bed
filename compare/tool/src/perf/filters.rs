//! The report's filter section: what the record filters (an extension beyond the reference)
//! buy on the benchmark logs, measured as everything else here is measured.
//!
//! For each input two `--event-id` filters are chosen from the reference's own output: a
//! *selective* one (the rarest ids whose records add up to at most 2% of the log; when even
//! the rarest id is past 2%, a hunter's list of log-clearing and account-change ids, which
//! such a log holds little or none of) and a *broad* one (the most common ids whose records
//! come closest to half of it).
//! Each engine's filtered dump runs in interleaved rounds (`paired.rs`) with its own full
//! dump and the reference's full dump, `-t 1`, jsonl and xml, three times over (three sets
//! of rounds, one after another), and callgrind counts the instructions of a
//! filter that matches no record, over the log's records: the cost of a skipped record, its
//! share of the process's fixed costs (exec, the chunk-order scan) included.

use crate::perf::instructions::callgrind_with;
use crate::perf::paired::{self, Contender, Ratio};
use crate::perf::speed::{display, FORMATS};
use crate::run::{run, Backends};
use serde::Serialize;
use serde_json::Value;
use std::collections::HashMap;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::time::Duration;

/// At most this share of the log's records for the selective filter.
const SELECTIVE_SHARE_MAX: f64 = 0.02;
/// The broad filter's target share.
const BROAD_SHARE: f64 = 0.5;
/// Sets of rounds per input and format (the "three runs").
const RUNS: usize = 3;
const ROUNDS: usize = 15;
const WARMUP: usize = 2;
/// The selective filter when no id of the log is rare enough: audit log cleared, then
/// account and group changes (what a hunt for persistence asks first).
const HUNT_IDS: [u64; 8] = [1102, 4720, 4722, 4724, 4728, 4732, 4738, 4756];
/// An event id no log holds (the filter syntax tops out at 2^32 - 1).
const NO_SUCH_ID: &str = "4294967295";

/// One `--event-id` filter of an input.
#[derive(Debug, Serialize, Clone)]
pub struct Chosen {
    pub input: String,
    pub kind: &'static str,
    /// The option's value, `4624,4634`.
    pub event_ids: String,
    pub matched: u64,
    pub records: u64,
}

/// One engine's filtered dump in one set of rounds.
#[derive(Debug, Serialize, Clone)]
pub struct FilterRow {
    pub input: String,
    pub format: &'static str,
    pub kind: &'static str,
    pub backend: &'static str,
    pub run: usize,
    pub median_ms: f64,
    /// The reference's full dump over this filtered dump, round by round.
    pub vs_reference_full: Ratio,
    /// The same engine's full dump over this filtered dump, round by round.
    pub vs_own_full: Ratio,
}

/// Callgrind instructions of a filter that keeps nothing, per record of the log.
#[derive(Debug, Serialize, Clone)]
pub struct SkipCost {
    pub input: String,
    pub backend: &'static str,
    pub format: &'static str,
    pub instructions: u64,
    pub records: u64,
    pub per_skipped_record: f64,
}

#[derive(Debug, Serialize, Default)]
pub struct FilterReport {
    pub chosen: Vec<Chosen>,
    pub rows: Vec<FilterRow>,
    pub skip_costs: Vec<SkipCost>,
    pub notes: Vec<String>,
}

/// Measures every input; `zig_callgrind` is the Zig CLI valgrind can decode.
pub fn run_filters(
    backends: &Backends,
    zig_callgrind: &Path,
    inputs: &[PathBuf],
    callgrind: bool,
    out: &Path,
) -> FilterReport {
    let mut report = FilterReport::default();
    for input in inputs {
        let counts = match event_id_counts(&backends.reference, input) {
            Ok(counts) => counts,
            Err(e) => {
                report
                    .notes
                    .push(format!("filters {}: {e}", display(input)));
                continue;
            }
        };
        let chosen = [choose_selective(&counts), choose_broad(&counts)]
            .into_iter()
            .flatten()
            .map(|(kind, ids, matched)| Chosen {
                input: display(input),
                kind,
                event_ids: ids,
                matched,
                records: counts.records,
            })
            .collect::<Vec<_>>();
        for format in FORMATS {
            for run_index in 1..=RUNS {
                eprintln!("filter rounds: {} {format} run {run_index}", display(input));
                match filter_rounds(backends, input, format, &chosen, run_index) {
                    Ok(mut rows) => report.rows.append(&mut rows),
                    Err(e) => report.notes.push(format!("filter rounds {format}: {e}")),
                }
            }
            if callgrind {
                skip_costs(
                    backends,
                    zig_callgrind,
                    input,
                    format,
                    &counts,
                    out,
                    &mut report,
                );
            }
        }
        report.chosen.extend(chosen);
    }
    report
}

/// Records per numeric EventID in the reference's jsonl output, and the record count.
struct Counts {
    by_id: HashMap<u64, u64>,
    records: u64,
}

fn event_id_counts(reference: &Path, input: &Path) -> Result<Counts, String> {
    let path = input.to_string_lossy();
    let output = run(reference, &["-o", "jsonl", &path], Duration::from_secs(600))
        .map_err(|e| e.to_string())?;
    let mut counts = Counts {
        by_id: HashMap::new(),
        records: 0,
    };
    for line in output
        .stdout
        .split(|&b| b == b'\n')
        .filter(|l| !l.is_empty())
    {
        counts.records += 1;
        let Ok(record) = serde_json::from_slice::<Value>(line) else {
            continue;
        };
        let id = &record["Event"]["System"]["EventID"];
        if let Some(id) = id.as_u64().or_else(|| id["#text"].as_u64()) {
            *counts.by_id.entry(id).or_default() += 1;
        }
    }
    Ok(counts)
}

/// Ids by count (then id), ascending or descending.
fn sorted_ids(counts: &Counts, descending: bool) -> Vec<(u64, u64)> {
    let mut ids: Vec<(u64, u64)> = counts.by_id.iter().map(|(&id, &n)| (id, n)).collect();
    ids.sort_by_key(|&(id, n)| (if descending { u64::MAX - n } else { n }, id));
    ids
}

fn id_list(ids: &[(u64, u64)]) -> (String, u64) {
    let mut sorted: Vec<u64> = ids.iter().map(|&(id, _)| id).collect();
    sorted.sort_unstable();
    let text = sorted
        .iter()
        .map(u64::to_string)
        .collect::<Vec<_>>()
        .join(",");
    (text, ids.iter().map(|&(_, n)| n).sum())
}

/// The rarest ids while their records stay within 2% (at least the rarest one, if it does).
fn choose_selective(counts: &Counts) -> Option<(&'static str, String, u64)> {
    let budget = (counts.records as f64 * SELECTIVE_SHARE_MAX) as u64;
    let ids = sorted_ids(counts, false);
    let mut taken = 0;
    let mut sum = 0;
    while taken < ids.len() && sum + ids[taken].1 <= budget {
        sum += ids[taken].1;
        taken += 1;
    }
    if taken == 0 {
        let hunt: Vec<(u64, u64)> = HUNT_IDS
            .iter()
            .map(|&id| (id, counts.by_id.get(&id).copied().unwrap_or(0)))
            .collect();
        let (text, matched) = id_list(&hunt);
        return (matched <= budget).then_some(("selective", text, matched));
    }
    let (text, matched) = id_list(&ids[..taken]);
    Some(("selective", text, matched))
}

/// The most common ids whose records come closest to half of the log.
fn choose_broad(counts: &Counts) -> Option<(&'static str, String, u64)> {
    let ids = sorted_ids(counts, true);
    let target = counts.records as f64 * BROAD_SHARE;
    let (mut best, mut best_gap, mut sum) = (0, f64::INFINITY, 0u64);
    for (i, &(_, n)) in ids.iter().enumerate() {
        sum += n;
        let gap = (sum as f64 - target).abs();
        if gap < best_gap {
            (best, best_gap) = (i + 1, gap);
        }
    }
    if best == 0 {
        return None;
    }
    let (text, matched) = id_list(&ids[..best]);
    Some(("broad", text, matched))
}

/// One set of rounds: the reference's and both engines' full dumps and both engines'
/// filtered dumps, each command once a round.
fn filter_rounds(
    backends: &Backends,
    input: &Path,
    format: &'static str,
    chosen: &[Chosen],
    run_index: usize,
) -> Result<Vec<FilterRow>, String> {
    let path = input.to_string_lossy().into_owned();
    let args = |extra: &[String]| {
        let mut args: Vec<String> = vec!["-t".into(), "1".into(), "-o".into(), format.into()];
        args.extend_from_slice(extra);
        args.push(path.clone());
        args
    };
    let engines = [("rust", &backends.rust), ("zig", &backends.zig)];
    let mut contenders = vec![Contender {
        name: "reference".into(),
        program: backends.reference.clone(),
        args: args(&[]),
    }];
    for (backend, program) in engines {
        contenders.push(Contender {
            name: format!("{backend}-full"),
            program: program.to_path_buf(),
            args: args(&[]),
        });
    }
    let mut keys = Vec::new();
    for filter in chosen {
        for (i, (backend, program)) in engines.iter().enumerate() {
            contenders.push(Contender {
                name: format!("{backend}-{}", filter.kind),
                program: program.to_path_buf(),
                args: args(&["--event-id".into(), filter.event_ids.clone()]),
            });
            keys.push((filter.kind, *backend, 1 + i, contenders.len() - 1));
        }
    }
    let rounds = paired::run_rounds(&contenders, ROUNDS, WARMUP)?;
    Ok(keys
        .into_iter()
        .map(|(kind, backend, full, at)| FilterRow {
            input: display(input),
            format,
            kind,
            backend,
            run: run_index,
            median_ms: rounds.median_wall(at) * 1e3,
            vs_reference_full: rounds.ratio(0, at),
            vs_own_full: rounds.ratio(full, at),
        })
        .collect())
}

fn skip_costs(
    backends: &Backends,
    zig_callgrind: &Path,
    input: &Path,
    format: &'static str,
    counts: &Counts,
    out: &Path,
    report: &mut FilterReport,
) {
    let zig = if zig_callgrind.is_file() {
        zig_callgrind
    } else {
        backends.zig.as_path()
    };
    for (backend, program) in [("rust", backends.rust.as_path()), ("zig", zig)] {
        eprintln!("callgrind: {backend} --event-id {NO_SUCH_ID} -o {format}");
        let file = out.join(format!("callgrind.filter.{backend}.{format}.out"));
        let args = ["-t", "1", "-o", format, "--event-id", NO_SUCH_ID];
        match callgrind_with(program, &args, input, &file) {
            Ok((instructions, _)) => report.skip_costs.push(SkipCost {
                input: display(input),
                backend,
                format,
                instructions,
                records: counts.records,
                per_skipped_record: instructions as f64 / counts.records.max(1) as f64,
            }),
            Err(e) => report
                .notes
                .push(format!("callgrind filter {backend} {format}: {e}")),
        }
    }
}

/// The report's section: the chosen filters, each run's ratios, the skip costs.
pub fn markdown(report: &FilterReport) -> String {
    if report.rows.is_empty() && report.skip_costs.is_empty() {
        return String::new();
    }
    let mut md = chosen_table(&report.chosen);
    md.push_str(&ratio_table(report));
    md.push_str(&skip_table(&report.skip_costs));
    for note in &report.notes {
        let _ = writeln!(md, "\n- {note}");
    }
    md
}

fn chosen_table(chosen: &[Chosen]) -> String {
    let mut md = String::from(
        "\n## Record filters (`--event-id`, an extension)\n\nEach filter is chosen from the \
        reference's own output: *selective* takes the rarest event ids whose records stay \
        within 2% of the log (else a hunter's list of clearing and account-change ids), \
        *broad* the most common ids closest to half of it.\n\n| input | filter | event ids | \
        records kept |\n|---|---|---|---|\n",
    );
    for c in chosen {
        let share = 100.0 * c.matched as f64 / c.records.max(1) as f64;
        let ids = if c.event_ids.len() > 60 {
            format!(
                "{}… ({} ids)",
                &c.event_ids[..60],
                c.event_ids.split(',').count()
            )
        } else {
            c.event_ids.clone()
        };
        let _ = writeln!(
            md,
            "| {} | {} | `{ids}` | {} of {} ({share:.2}%) |",
            c.input, c.kind, c.matched, c.records
        );
    }
    md
}

/// One row per filter and format: each set of rounds' median ratio, per backend.
fn ratio_table(report: &FilterReport) -> String {
    let mut md = String::from(
        "\nPaired rounds at `-t 1`: each round runs the reference's full dump, both engines' \
        full dumps and their filtered dumps once; a cell is the full dump's time over the \
        filtered dump's (the median of the rounds' own ratios), one value per set of rounds \
        (quartiles and times in report.json).\n\n| input | format | filter | rust × reference \
        full | zig × reference full | rust × own full | zig × own full \
        |\n|---|---|---|---|---|---|---|\n",
    );
    for c in &report.chosen {
        for format in FORMATS {
            let cell = |backend: &str, own: bool| {
                let values: Vec<String> = (report.rows.iter())
                    .filter(|r| r.input == c.input && r.format == format && r.kind == c.kind)
                    .filter(|r| r.backend == backend)
                    .map(|r| {
                        let ratio = if own {
                            &r.vs_own_full
                        } else {
                            &r.vs_reference_full
                        };
                        format!("{:.2}", ratio.median)
                    })
                    .collect();
                if values.is_empty() {
                    "–".to_string()
                } else {
                    values.join(", ")
                }
            };
            let _ = writeln!(
                md,
                "| {} | {format} | {} | {} | {} | {} | {} |",
                c.input,
                c.kind,
                cell("rust", false),
                cell("zig", false),
                cell("rust", true),
                cell("zig", true)
            );
        }
    }
    md
}

fn skip_table(costs: &[SkipCost]) -> String {
    if costs.is_empty() {
        return String::new();
    }
    let mut md = format!(
        "\nA skipped record's cost: callgrind instructions of `-t 1 --event-id {NO_SUCH_ID}` \
        (keeps nothing) over the log's records, the process's fixed costs included.\n\n| \
        input | format | backend | instructions | per skipped record |\n|---|---|---|---|---|\n"
    );
    for s in costs {
        let _ = writeln!(
            md,
            "| {} | {} | {} | {} | {:.0} |",
            s.input, s.format, s.backend, s.instructions, s.per_skipped_record
        );
    }
    md
}

#[cfg(test)]
mod tests {
    use super::*;

    fn counts(pairs: &[(u64, u64)], records: u64) -> Counts {
        Counts {
            by_id: pairs.iter().copied().collect(),
            records,
        }
    }

    #[test]
    fn selective_takes_the_rarest_ids_within_two_percent() {
        // 1,000 records: 2% is 20; ids 7 (5) and 9 (12) fit, 3 (30) would not.
        let c = counts(&[(4624, 953), (3, 30), (9, 12), (7, 5)], 1000);
        assert_eq!(
            choose_selective(&c),
            Some(("selective", "7,9".to_string(), 17))
        );
        // The rarest id alone is past 2%: the hunter's list, which this log lacks.
        assert_eq!(
            choose_selective(&counts(&[(1, 50), (2, 50)], 100)),
            Some((
                "selective",
                "1102,4720,4722,4724,4728,4732,4738,4756".to_string(),
                0
            ))
        );
        // ... or holds too much of.
        assert_eq!(
            choose_selective(&counts(&[(4720, 50), (4624, 50)], 100)),
            None
        );
    }

    #[test]
    fn broad_takes_the_most_common_ids_closest_to_half() {
        // 1,000 records: 4624 alone is 400 (gap 100), with 4634 it is 700 (gap 200).
        let c = counts(&[(4624, 400), (4634, 300), (4672, 200), (1, 100)], 1000);
        assert_eq!(choose_broad(&c), Some(("broad", "4624".to_string(), 400)));
        let c = counts(&[(10, 300), (20, 250), (30, 450)], 1000);
        assert_eq!(choose_broad(&c), Some(("broad", "30".to_string(), 450)));
    }
}
