//! The phase table: callgrind instructions per record for each backend, split into the stages
//! of the work by symbol groups, and allocation calls per record counted from the same profile.
//!
//! A function's self cost goes to the first group (in the backend's order below) with a pattern
//! that is a substring of its `file:function` key, as `callgrind_annotate --inclusive=no`
//! prints it; what no group claims is "other". Self costs partition the run, so the phases sum
//! to the whole (inclusive) count. The key carries the source file of inlined code
//! (`zig/src/values_decode.zig:program.Programs.scanStream` is value decoding inlined into the
//! scan), so
//! file patterns come before function patterns. The groups are data: a test profiles each
//! engine afresh and fails when a pattern matches no symbol, or when "other" grows.

use std::collections::HashMap;

/// The phases, in table order.
pub const PHASES: [&str; 8] = [
    "read/scan",
    "template lookup",
    "value decoding",
    "escaping/transcoding",
    "output",
    "threading",
    "allocator",
    "other",
];

/// (phase, patterns): the first group with a matching pattern claims a function.
pub type Groups = &'static [(&'static str, &'static [&'static str])];

/// The Zig engine. `escape.zig` also holds the output buffer (`Out.write` inlined everywhere),
/// so only the escaper's own functions count as escaping.
pub const ZIG: Groups = &[
    ("escaping/transcoding", &["escape.writeUtf16"]),
    ("threading", &["Thread", "Mutex", "Condition"]),
    ("allocator", &["SmpAllocator", "heap.PageAllocator"]),
    (
        "value decoding",
        &[
            "values_decode.zig:",
            "values_format.zig:",
            "values_decode.",
            "values_format.",
        ],
    ),
    (
        "template lookup",
        &[
            "template.zig:",
            "template.",
            "program.Programs.lookup",
            "wyhash",
            "hash_map.zig:",
        ],
    ),
    (
        "read/scan",
        &[
            "program.Programs.scan",
            "program.Programs.sign",
            "dump.Renderer.writeRecord",
            "chunk.zig:",
            "records.zig:",
            "tokens.zig:",
            "dump.Renderer.walk",
            "dump.Renderer.renderChunk",
            "input.zig:",
            "bit_set.zig:",
        ],
    ),
    (
        "output",
        &[
            "dump.Renderer.replayRecord",
            "escape.zig:",
            "render_json",
            "render_xml",
            "memcpy",
            "memset",
            "cli.Sink",
        ],
    ),
];

/// The Rust engine.
pub const RUST: Groups = &[
    // `simd::ssse3::json_run`: JSON's rest kernel, a call of its own behind the CPU check
    // (PERF.md H155); the rest of `simd` is inlined into its callers.
    ("escaping/transcoding", &["escape::", "simd::ssse3::"]),
    (
        "threading",
        &["std::thread", "pthread", "futex", "std::sync"],
    ),
    (
        "allocator",
        &[
            "malloc",
            "_int_free",
            "free",
            "realloc",
            ":alloc::raw_vec",
            "finish_grow",
        ],
    ),
    // `values_decode` and `values_format` (files and functions). No "itoa": the itoa crate is
    // off the profiled paths, and the pattern only ever matched the dynamic loader's
    // `_itoa.h` (PERF.md H167: the CLI is static now, without a loader).
    ("value decoding", &["values_"]),
    (
        "template lookup",
        &["template.rs:", "template::", "Identities", "hash"],
    ),
    (
        "read/scan",
        &[
            "tokens.rs:",
            "tokens::",
            "Programs::scan",
            "Programs::sign",
            "chunk",
            "records",
            "dump::Renderer::walk",
            "source",
        ],
    ),
    (
        "output",
        &[
            "Programs::replay",
            "Programs::store",
            "program::emit",
            "render_json",
            "render_xml",
            "memcpy",
            "memmove",
            "memset",
            // The replay's SID memo compares a SID's bytes (PERF.md H50).
            "memcmp",
            "write",
        ],
    ),
];

/// The reference `evtx_dump` 0.15.1 (release build without line tables: functions only).
pub const REFERENCE: Groups = &[
    (
        "escaping/transcoding",
        &["utf16_escaped", "utf16::", "escape"],
    ),
    (
        "threading",
        &[
            "chunk_pipeline",
            "pthread",
            "futex",
            "std::thread",
            "std::sync",
            "crossbeam",
            "rayon",
        ],
    ),
    (
        "allocator",
        &[
            "_rjem_",
            "rallocx",
            "tcache",
            "malloc",
            "free",
            "bumpalo",
            "alloc::raw_vec",
            "finish_grow",
            "base_alloc",
        ],
    ),
    (
        "value decoding",
        &["value_render", "value_variant", "itoa", "datetime"],
    ),
    (
        "template lookup",
        &[
            "get_or_compile",
            "ProgramStore",
            "TemplateCache",
            "template",
            "hashbrown",
            "Compiler",
            "NameCounts",
        ],
    ),
    (
        "read/scan",
        &[
            "Preflight",
            "evtx_chunk",
            "byte_cursor",
            "binxml::ir",
            "tokens",
            "name::",
            "NameRefs",
            "evtx_parser",
        ],
    ),
    (
        "output",
        &[
            "compiled::exec",
            "render_element",
            "core::fmt",
            "memcpy",
            "memmove",
            "memset",
            "write",
        ],
    ),
];

/// Allocation entry points (calls counted, frees not): malloc-family and the Zig allocator's
/// vtable functions.
pub const ALLOCATION_CALLS: &[&str] = &[
    "malloc",
    "calloc",
    "realloc",
    "_rjem_malloc",
    "_rjem_mallocx",
    "_rjem_calloc",
    "_rjem_realloc",
    "_rjem_rallocx",
    "SmpAllocator.alloc",
    "SmpAllocator.resize",
    "SmpAllocator.remap",
    "ArenaAllocator.alloc",
];

pub fn groups_for(backend: &str) -> Groups {
    match backend {
        "zig" => ZIG,
        "rust" => RUST,
        _ => REFERENCE,
    }
}

/// The phase of function key `key` (`file:function`).
pub fn phase_of(groups: Groups, key: &str) -> &'static str {
    groups
        .iter()
        .find(|(_, patterns)| patterns.iter().any(|p| key.contains(p)))
        .map_or("other", |(phase, _)| phase)
}

/// Instructions per phase (in `PHASES` order) from (key, self instructions) pairs.
pub fn split(groups: Groups, functions: &[(String, u64)]) -> [u64; PHASES.len()] {
    let mut sums = [0u64; PHASES.len()];
    for (key, count) in functions {
        let phase = phase_of(groups, key);
        let index = PHASES
            .iter()
            .position(|p| *p == phase)
            .unwrap_or(PHASES.len() - 1);
        sums[index] += count;
    }
    sums
}

/// The patterns of `groups` that no key matches: a group out of step with the code.
pub fn stale_patterns<'a>(
    groups: Groups,
    keys: impl Iterator<Item = &'a str> + Clone,
) -> Vec<String> {
    let mut stale = Vec::new();
    for (phase, patterns) in groups {
        for pattern in *patterns {
            if !keys.clone().any(|k| k.contains(pattern)) {
                stale.push(format!("{phase}: {pattern}"));
            }
        }
    }
    stale
}

/// Every `file:function` line of `callgrind_annotate --inclusive=no --threshold=100`, with its
/// self instructions; the `[binary]` suffix is dropped.
pub fn parse_self_costs(text: &str) -> Vec<(String, u64)> {
    let mut out = Vec::new();
    let mut in_functions = false;
    for line in text.lines() {
        if line.contains("file:function") {
            in_functions = true;
            continue;
        }
        if !in_functions {
            continue;
        }
        if line.starts_with("--") || line.trim().is_empty() {
            // The list ends at the first rule or blank line after its entries.
            if out.is_empty() {
                continue;
            }
            break;
        }
        let trimmed = line.trim_start();
        let Some(count) = trimmed
            .split_whitespace()
            .next()
            .and_then(|s| s.replace(',', "").parse::<u64>().ok())
        else {
            continue;
        };
        let Some(close) = trimmed.find(')') else {
            continue;
        };
        let name = trimmed[close + 1..].trim();
        let name = name.split(" [").next().unwrap_or(name).to_string();
        out.push((name, count));
    }
    out
}

/// Calls to the allocation entry points, from a callgrind output file: the sum of `calls=N`
/// lines whose callee (`cfn=`) name matches `ALLOCATION_CALLS` (names are compressed as
/// `(id) name` on first use, `(id)` after).
pub fn allocation_calls(profile: &str) -> u64 {
    let mut names: HashMap<String, String> = HashMap::new();
    let mut callee_is_alloc = false;
    let mut total = 0u64;
    for line in profile.lines() {
        if let Some(rest) = line
            .strip_prefix("cfn=")
            .or_else(|| line.strip_prefix("fn="))
        {
            let name = resolve(&mut names, rest);
            callee_is_alloc =
                line.starts_with("cfn=") && ALLOCATION_CALLS.iter().any(|p| is_entry(&name, p));
        } else if let Some(rest) = line.strip_prefix("calls=") {
            if callee_is_alloc {
                total += rest
                    .split_whitespace()
                    .next()
                    .and_then(|n| n.parse::<u64>().ok())
                    .unwrap_or(0);
            }
        }
    }
    total
}

/// `name` is the entry point `pattern`: an exact symbol (`malloc`, not `_int_malloc`), or a
/// Zig function path ending in it (`heap.SmpAllocator.alloc`).
fn is_entry(name: &str, pattern: &str) -> bool {
    name == pattern || name.ends_with(&format!(".{pattern}")) || {
        pattern.contains('.') && name.ends_with(pattern)
    }
}

/// The name of a compressed `(id) name` / `(id)` reference, remembering new ones.
fn resolve(names: &mut HashMap<String, String>, field: &str) -> String {
    let field = field.trim();
    let Some(rest) = field.strip_prefix('(') else {
        return field.to_string();
    };
    let Some((id, name)) = rest.split_once(')') else {
        return field.to_string();
    };
    let name = name.trim();
    if name.is_empty() {
        names.get(id).cloned().unwrap_or_default()
    } else {
        names.insert(id.to_string(), name.to_string());
        name.to_string()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn first_matching_group_wins_and_the_rest_is_other() {
        let functions = vec![
            (
                "zig/src/escape.zig:escape.writeUtf16__anon_1".to_string(),
                10,
            ),
            (
                "zig/src/escape.zig:dump.Renderer.replayRecord".to_string(),
                5,
            ),
            (
                "zig/src/values_decode.zig:program.Programs.scanStream".to_string(),
                7,
            ),
            (
                "std/array_list.zig:program.Programs.scanStream'2".to_string(),
                3,
            ),
            ("???:_start".to_string(), 1),
        ];
        let sums = split(ZIG, &functions);
        let at = |phase: &str| sums[PHASES.iter().position(|p| *p == phase).unwrap()];
        assert_eq!(at("escaping/transcoding"), 10);
        assert_eq!(at("output"), 5);
        assert_eq!(at("value decoding"), 7);
        assert_eq!(at("read/scan"), 3);
        assert_eq!(at("other"), 1);
        assert_eq!(sums.iter().sum::<u64>(), 26);
    }

    #[test]
    fn reads_self_costs_without_the_binary() {
        // Annotated source after the list (`--auto=yes`) is not a function.
        let text = "Ir  file:function\n--------\n2,000 (66.67%)  src/a.rs:evtx::render \
            [/bin/x]\n  500 ( 6.67%)  ???:memcpy [/lib/libc.so]\n\n--------\n-- Auto-annotated \
            source: src/a.rs\n  100 ( 1.00%)  fn render() {\n";
        assert_eq!(
            parse_self_costs(text),
            vec![
                ("src/a.rs:evtx::render".to_string(), 2000),
                ("???:memcpy".to_string(), 500)
            ]
        );
    }

    #[test]
    fn counts_calls_to_allocation_entry_points_through_name_compression() {
        let profile = "fn=(1) main\ncfn=(2) malloc\ncalls=3 0x10\n5 9\ncfn=(3) \
            _int_malloc\ncalls=4 0x20\n5 9\nfn=(4) other\ncfn=(2)\ncalls=2 0x10\n5 9\ncfn=(5) \
            heap.SmpAllocator.alloc\ncalls=7 0\n1 1\ncfn=(6) heap.SmpAllocator.free\ncalls=9 0\n1 \
            1\n";
        assert_eq!(allocation_calls(profile), 3 + 2 + 7);
    }

    /// The groups stay in step with the code: a fresh callgrind profile of each backend (a
    /// 1 MB generated Security log, jsonl and xml at `-t 2` so the thread machinery runs) has a
    /// function for every pattern, and "other" stays under 5 % of the instructions. Skipped
    /// when valgrind or the built programs are missing, unless `EVTX_REQUIRE_REFERENCE=1`.
    #[test]
    fn every_group_matches_a_fresh_profile_of_each_backend() {
        let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
        let programs = [
            ("reference", root.join("target/reference/bin/evtx_dump")),
            ("rust", root.join("zig-out/bin/evtx-rs")),
            ("zig", root.join("zig-out/bin/evtx-zig-valgrind")),
        ];
        let generator = root.join("target/release/evtx-fixture-gen");
        let have_valgrind = crate::run::run(
            std::path::Path::new("valgrind"),
            &["--version"],
            std::time::Duration::from_secs(30),
        )
        .is_ok_and(|o| o.status.is_some_and(|s| s.success()));
        let missing: Vec<String> = programs
            .iter()
            .map(|(_, p)| p.clone())
            .chain([generator.clone()])
            .filter(|p| !p.is_file())
            .map(|p| p.display().to_string())
            .collect();
        if !have_valgrind || !missing.is_empty() {
            assert!(
                std::env::var("EVTX_REQUIRE_REFERENCE").as_deref() != Ok("1"),
                "valgrind {have_valgrind}, missing {missing:?}"
            );
            eprintln!("skipped: valgrind {have_valgrind}, missing {missing:?}");
            return;
        }
        let dir = std::env::temp_dir().join(format!("evtx-phases-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let log = dir.join("security-1mb.evtx");
        let made = crate::run::run(
            &generator,
            &["bench", "--out", &log.to_string_lossy(), "--size-mb", "1"],
            std::time::Duration::from_secs(120),
        )
        .unwrap();
        assert!(
            made.status.is_some_and(|s| s.success()),
            "evtx-fixture-gen failed"
        );
        let mut problems = Vec::new();
        for (backend, program) in &programs {
            let mut keys: Vec<String> = Vec::new();
            for format in ["jsonl", "xml"] {
                let file = dir.join(format!("callgrind.{backend}.{format}.out"));
                let m = crate::perf::speed::callgrind_run(program, &log, format, 2, &file, backend)
                    .unwrap_or_else(|e| panic!("{backend} {format}: {e}"));
                let other = m.phases[PHASES.len() - 1] as f64 / m.instructions as f64;
                if other > 0.05 {
                    problems.push(format!("{backend} {format}: other {:.1} %", other * 100.0));
                }
                let annotate = crate::run::run(
                    std::path::Path::new("callgrind_annotate"),
                    &[
                        "--inclusive=no",
                        "--threshold=100",
                        "--auto=no",
                        &file.to_string_lossy(),
                    ],
                    std::time::Duration::from_secs(300),
                )
                .unwrap();
                keys.extend(
                    parse_self_costs(&String::from_utf8_lossy(&annotate.stdout))
                        .into_iter()
                        .map(|(k, _)| k),
                );
            }
            for stale in stale_patterns(groups_for(backend), keys.iter().map(String::as_str)) {
                problems.push(format!("{backend}: {stale}"));
            }
        }
        let _ = std::fs::remove_dir_all(&dir);
        assert!(problems.is_empty(), "{problems:#?}");
    }

    #[test]
    fn a_pattern_no_symbol_matches_is_stale() {
        let keys = ["a:escape::write_utf16", "b:values::write_value"];
        let groups: Groups = &[("escaping/transcoding", &["escape::", "simd::"])];
        assert_eq!(
            stale_patterns(groups, keys.iter().copied()),
            vec!["escaping/transcoding: simd::".to_string()]
        );
    }
}
