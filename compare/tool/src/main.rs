//! `evtx-compare`: parity of evtx-rs, evtx-zig and the reference, their speed, and the gap
//! report. `make parity`, `make bench` and `make compare` call it; see the README.

mod parity;
mod perf;
mod run;

use parity::{
    abi_parity, cli_parity, cli_paths, exit_table, gaps, mutate, mutate_readers, shim_parity,
};
use perf::{filters, instructions, paired, perf_page, report, settle, speed, triage_speed};

use clap::{Args, Parser, Subcommand};
use std::path::{Path, PathBuf};
use std::process::ExitCode;

#[derive(Parser)]
#[command(
    name = "evtx-compare",
    version,
    about = "Parity, speed and the gap report for evtx-twin"
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Record-by-record parity of the three CLIs over the corpus.
    Parity(ParityArgs),
    /// hyperfine of the three CLIs (-t 1 and -t 2, jsonl and xml) on benchmark logs.
    BenchCli(SpeedArgs),
    /// The extensions on benchmark logs (the report's filter and triage sections alone):
    /// selective and broad `--event-id` dumps and `triage` in paired rounds against full
    /// dumps, callgrind's cost of a skipped record, and triage over many small logs.
    BenchExtensions(BenchExtensionsArgs),
    /// The main job: parity, speed (harness, hyperfine, RSS, callgrind) and the gap report.
    All(AllArgs),
    /// Damaged variants of every fixture through the reference and both engines: no crash, hang
    /// or balloon, byte-identical engines, and the reference's record counts and exit statuses.
    Mutate(MutateArgs),
    /// Exit status and stdout-or-not of the three CLIs over a table of argument cases.
    ExitTable(ExitTableArgs),
    /// The CLI paths parity does not cover (stdin, -f and the overwrite prompt, --events,
    /// --dont-show-record-number, --stop-after-one-error, -t 0 and 3), against the reference.
    CliPaths(CliPathsArgs),
    /// The three C libraries through `evtx-bench --parity`, every variant of `abi_parity.rs`.
    AbiParity(AbiParityArgs),
    /// Interleaved rounds of ad-hoc commands (NAME=COMMAND, no shell), each round running every
    /// command once back to back; prints the median per-round ratio of the first over each.
    Paired(PairedArgs),
    /// Puts benchmark inputs in one page-cache state (dropped, then read back in order), as
    /// the speed steps do before timing; for ad-hoc `paired` runs (PERF.md H189).
    Settle(SettleArgs),
    /// The instruction-count gate: callgrind instructions per record of both engines in W1
    /// (jsonl) and W2 (xml) at `-t 1` on the committed fixture, against the committed baseline.
    Instructions(InstructionsArgs),
    /// Rewrites PERF.md's generated block from the newest record in perf/record/
    /// (`perf_page.rs`); with --check, fails when the block is not what the record gives.
    PerfPage(PerfPageArgs),
}

#[derive(Args)]
struct ExitTableArgs {
    /// The three CLIs, and where the table (exit-table.md) and the `@O` outputs go.
    #[command(flatten)]
    backends: BackendArgs,
    /// The committed fixtures (shared-fixtures).
    #[arg(long)]
    fixtures: PathBuf,
}

#[derive(Args)]
struct PerfPageArgs {
    #[arg(long, default_value = "PERF.md")]
    page: PathBuf,
    /// The records (`make compare` writes one to target/compare/record.json).
    #[arg(long, default_value = "perf/record")]
    records: PathBuf,
    /// Change nothing; exit 1 when the block differs.
    #[arg(long)]
    check: bool,
}

#[derive(Args)]
struct AbiParityArgs {
    /// The committed fixtures (every .evtx below it) and, through `$EVTX_SAMPLES`, the samples.
    #[command(flatten)]
    corpus: CorpusArgs,
    /// The harness that loads each library at run time.
    #[arg(long, default_value = "zig-out/bin/evtx-bench")]
    harness: PathBuf,
    /// Where libevtx_ref.so, libevtx_rs.so and libevtx_zig.so are.
    #[arg(long, default_value = "zig-out/lib")]
    lib_dir: PathBuf,
    /// The reference CLI, which libevtx_ref's own output is held to first (`shim_parity.rs`).
    #[arg(long, default_value = "target/reference/bin/evtx_dump")]
    reference: PathBuf,
    /// Each run's full evtx-bench output.
    #[arg(long)]
    out: PathBuf,
}

#[derive(Args)]
struct InstructionsArgs {
    /// The baseline (`compare/baselines/instructions.json`); its fixture is beside it.
    #[arg(long)]
    baseline: PathBuf,
    #[arg(long, default_value = "zig-out/bin/evtx-rs")]
    rust: PathBuf,
    /// The Zig CLI built for a CPU valgrind can decode.
    #[arg(long, default_value = "zig-out/bin/evtx-zig-valgrind")]
    zig: PathBuf,
    /// Rewrite the baseline with the measured numbers; the comment says why (required).
    #[arg(long, value_name = "WHY")]
    write: Option<String>,
    #[arg(long, default_value = "target/instructions")]
    out: PathBuf,
}

#[derive(Args)]
struct CliPathsArgs {
    #[command(flatten)]
    backends: BackendArgs,
    /// The committed fixtures (the cases name files below it).
    #[arg(long)]
    fixtures: PathBuf,
}

#[derive(Args)]
struct MutateArgs {
    /// The reference evtx_dump 0.15.1.
    #[arg(long)]
    reference: PathBuf,
    #[arg(long, default_value = "zig-out/bin/evtx-rs")]
    rust: PathBuf,
    /// The Zig CLI with safety checks (ReleaseSafe).
    #[arg(long, default_value = "zig-out/bin/evtx-zig-safe")]
    zig: PathBuf,
    /// Every .evtx below it is mutated.
    #[arg(long)]
    fixtures: PathBuf,
    #[arg(long)]
    out: PathBuf,
    #[arg(long, default_value_t = 1)]
    seed: u64,
    /// Seeded random mutants per file, on top of the structural ones.
    #[arg(long, default_value_t = 24)]
    random: usize,
    /// Peak RSS bound per run, MiB (one worker, fixtures of a few chunks).
    #[arg(long, default_value_t = 48)]
    rss_limit_mib: u64,
    /// At most this many mutants per file (0: all), for quick runs.
    #[arg(long, default_value_t = 0)]
    max_mutants: usize,
    /// Seeded mutants of each `.MTA`, `.wevtcache` and PE fixture on top of the fixed ones
    /// (`mutate_readers.rs`).
    #[arg(long, default_value_t = 24)]
    reader_random: usize,
    /// Only the side readers' mutants (`--mta`, `--wevt-cache`, `apply-wevt-cache`,
    /// `extract-wevt-templates`).
    #[arg(long, conflicts_with = "logs_only")]
    readers_only: bool,
    /// Only the logs' mutants: the gate's own controls (compare/gates/run.sh) give it one
    /// `.evtx` and none of the side files the readers' mutants are made from.
    #[arg(long)]
    logs_only: bool,
    /// GNU time, which measures the peak RSS (compare/gates/run.sh plants a broken one).
    #[arg(long, default_value = "/usr/bin/time")]
    time: PathBuf,
}

#[derive(Args)]
struct BackendArgs {
    /// The reference evtx_dump 0.15.1.
    #[arg(long)]
    reference: PathBuf,
    #[arg(long, default_value = "zig-out/bin/evtx-rs")]
    rust: PathBuf,
    #[arg(long, default_value = "zig-out/bin/evtx-zig")]
    zig: PathBuf,
    /// Where reports go.
    #[arg(long)]
    out: PathBuf,
}

#[derive(Args)]
struct CorpusArgs {
    /// The committed synthetic fixtures (every .evtx below it).
    #[arg(long)]
    fixtures: PathBuf,
    /// The public corpus; defaults to $EVTX_SAMPLES. Skipped, with a note, when absent.
    #[arg(long, env = "EVTX_SAMPLES")]
    samples: Option<PathBuf>,
    /// Extra directories (or files) of the user's own logs.
    #[arg(long)]
    corpus: Vec<PathBuf>,
    /// Only these parity modes (repeatable; default all), e.g. `jsonl`, `xml`.
    #[arg(long = "mode")]
    modes: Vec<String>,
    /// Only these check families (repeatable; default all): dump, recover, ansi-codec, mta,
    /// info, wevt, wevt-tools.
    #[arg(long = "family")]
    families: Vec<String>,
}

#[derive(Args)]
struct ParityArgs {
    #[command(flatten)]
    backends: BackendArgs,
    #[command(flatten)]
    corpus: CorpusArgs,
}

#[derive(Args)]
struct SpeedArgs {
    #[command(flatten)]
    backends: BackendArgs,
    /// hyperfine runs per command.
    #[arg(long, default_value_t = 10)]
    runs: u32,
    /// Benchmark logs.
    inputs: Vec<PathBuf>,
}

#[derive(Args)]
struct BenchExtensionsArgs {
    #[command(flatten)]
    backends: BackendArgs,
    /// The Zig CLI built for a CPU valgrind can decode.
    #[arg(long, default_value = "zig-out/bin/evtx-zig-valgrind")]
    zig_callgrind: PathBuf,
    /// Skip callgrind.
    #[arg(long)]
    no_callgrind: bool,
    /// The small log the triage fleet is made of (links to it).
    #[arg(long, default_value = "shared-fixtures/synthetic/filters.evtx")]
    fleet_log: PathBuf,
    /// Benchmark logs.
    inputs: Vec<PathBuf>,
}

#[derive(Args)]
struct PairedArgs {
    /// Kept rounds.
    #[arg(long, default_value_t = 30)]
    rounds: usize,
    /// Rounds run first and not kept.
    #[arg(long, default_value_t = 3)]
    warmup: usize,
    /// NAME=PROGRAM ARG...; the first is the base of every ratio.
    #[arg(required = true)]
    commands: Vec<String>,
}

#[derive(Args)]
struct SettleArgs {
    /// The logs to settle.
    #[arg(required = true)]
    inputs: Vec<PathBuf>,
}

#[derive(Args)]
struct AllArgs {
    #[command(flatten)]
    backends: BackendArgs,
    #[command(flatten)]
    corpus: CorpusArgs,
    /// Benchmark logs (speed steps); also part of the parity corpus.
    #[arg(long = "bench-input")]
    bench_inputs: Vec<PathBuf>,
    /// The harness that drives the three libraries through the C ABI.
    #[arg(long, default_value = "zig-out/bin/evtx-bench")]
    harness: PathBuf,
    #[arg(long, default_value = "zig-out/lib")]
    lib_dir: PathBuf,
    #[arg(long, default_value_t = 10)]
    runs: u32,
    /// The Zig CLI built for a CPU valgrind can decode, used for callgrind.
    #[arg(long, default_value = "zig-out/bin/evtx-zig-valgrind")]
    zig_callgrind: PathBuf,
    /// Skip the callgrind step (it is the slowest).
    #[arg(long)]
    no_callgrind: bool,
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    let result = match cli.command {
        Command::Parity(args) => parity_command(&args),
        Command::BenchCli(args) => bench_cli_command(&args),
        Command::BenchExtensions(args) => bench_extensions_command(&args),
        Command::All(args) => all_command(&args),
        Command::Paired(args) => paired::paired_command(&args.commands, args.rounds, args.warmup),
        Command::Settle(args) => settle::settle_command(&args.inputs),
        Command::Mutate(args) => mutate_command(&args),
        Command::ExitTable(args) => args.backends.check_present().and_then(|()| {
            exit_table::exit_table_command(
                &args.backends.backends(),
                &args.fixtures,
                &args.backends.out,
            )
        }),
        Command::AbiParity(args) => abi_parity_command(&args),
        Command::Instructions(args) => instructions::run_gate(&instructions::Plan {
            baseline: &args.baseline,
            engines: vec![
                ("evtx-rs".into(), args.rust.clone()),
                ("evtx-zig".into(), args.zig.clone()),
            ],
            write: args.write.clone(),
            out: &args.out,
        }),
        Command::PerfPage(args) => {
            perf_page::perf_page_command(&args.page, &args.records, args.check)
        }
        Command::CliPaths(args) => args.backends.check_present().and_then(|()| {
            cli_paths::run_cli_paths(
                &args.backends.backends(),
                &args.fixtures,
                &cli_paths::work_dir(&args.backends.out),
            )
        }),
    };
    match result {
        Ok(true) => ExitCode::SUCCESS,
        Ok(false) => ExitCode::FAILURE,
        Err(message) => {
            eprintln!("evtx-compare: {message}");
            ExitCode::from(2)
        }
    }
}

impl BackendArgs {
    fn backends(&self) -> run::Backends {
        run::Backends {
            reference: self.reference.clone(),
            rust: self.rust.clone(),
            zig: self.zig.clone(),
        }
    }

    fn check_present(&self) -> Result<(), String> {
        for path in [&self.reference, &self.rust, &self.zig] {
            if !path.is_file() {
                return Err(format!(
                    "{} does not exist: run `make build` (and `make setup`) first",
                    path.display()
                ));
            }
        }
        Ok(())
    }
}

fn parity_command(args: &ParityArgs) -> Result<bool, String> {
    args.backends.check_present()?;
    let (inputs, notes) = collect_inputs(&args.corpus, &[])?;
    let report = run_parity_step(&args.backends, &args.corpus, &inputs, notes)?;
    std::fs::create_dir_all(&args.backends.out).map_err(|e| e.to_string())?;
    write(
        &args.backends.out.join("parity.md"),
        &cli_parity::markdown(&report),
    )?;
    write(
        &args.backends.out.join("parity.json"),
        &serde_json::to_string_pretty(&report).map_err(|e| e.to_string())?,
    )?;
    cli_parity::print_summary(&report);
    Ok(report.failed() == 0)
}

fn run_parity_step(
    backends: &BackendArgs,
    corpus: &CorpusArgs,
    inputs: &[cli_parity::Input],
    notes: Vec<String>,
) -> Result<cli_parity::ParityReport, String> {
    let gaps = gaps::KnownGaps::load(&corpus.fixtures.join("known-gaps"))?;
    if inputs.is_empty() {
        return Err(format!("nothing to compare: {}", notes.join("; ")));
    }
    let committed = committed_outputs(&corpus.fixtures)?;
    let selection = cli_parity::Selection {
        modes: &corpus.modes,
        families: &corpus.families,
        fixtures: &corpus.fixtures,
    };
    let mut report =
        cli_parity::run_parity(&backends.backends(), inputs, &gaps, &selection, &committed)?;
    report.notes = notes;
    Ok(report)
}

/// The manifest's expected outputs that are the reference's own (not our rule's `ours`), when
/// the fixtures directory has a manifest (compare/gates/run.sh gives one without).
fn committed_outputs(fixtures: &Path) -> Result<Vec<cli_parity::Committed>, String> {
    if !fixtures.join("manifest.json").is_file() {
        return Ok(Vec::new());
    }
    let expectations = evtx_fixture_gen::manifest::expectations(fixtures)?;
    Ok(expectations
        .into_iter()
        .filter(|e| !e.ours)
        .map(|e| cli_parity::Committed {
            fixture: fixtures.join(&e.fixture),
            args: e.args,
            file: fixtures.join(&e.file),
        })
        .collect())
}

/// `bench-cli`: the speed steps of the three CLIs alone (no harness, no callgrind), their
/// paired verdict and timings on stdout.
fn bench_cli_command(args: &SpeedArgs) -> Result<bool, String> {
    let out = &args.backends.out;
    std::fs::create_dir_all(out).map_err(|e| e.to_string())?;
    let report = speed::run_speed(&speed::SpeedPlan {
        backends: args.backends.backends(),
        inputs: args.inputs.clone(),
        zig_callgrind: PathBuf::new(),
        harness: PathBuf::new(),
        lib_dir: PathBuf::new(),
        runs: args.runs,
        callgrind: false,
        extensions: false,
        fleet_log: None,
        out: out.clone(),
    });
    println!("{}", report::paired_verdict(&report.paired));
    print!("{}", report::timing_table(&report.timings));
    for note in &report.notes {
        eprintln!("note: {note}");
    }
    Ok(report.notes.is_empty())
}

/// The small committed log `make compare`'s triage fleet links to, below the fixtures.
const FLEET_LOG: &str = "synthetic/filters.evtx";

/// `bench-extensions`: the report's filter and triage sections alone, on stdout.
fn bench_extensions_command(args: &BenchExtensionsArgs) -> Result<bool, String> {
    let out = &args.backends.out;
    std::fs::create_dir_all(out).map_err(|e| e.to_string())?;
    for input in &args.inputs {
        settle::settle(input)?;
    }
    let report = filters::run_filters(
        &args.backends.backends(),
        &args.zig_callgrind,
        &args.inputs,
        !args.no_callgrind,
        out,
    );
    print!("{}", filters::markdown(&report));
    let triage = triage_speed::run_triage_speed(
        &args.backends.backends(),
        &args.inputs,
        Some(&args.fleet_log),
        out,
    );
    print!("{}", triage_speed::markdown(&triage));
    Ok(report.notes.is_empty() && triage.notes.is_empty())
}

fn all_command(args: &AllArgs) -> Result<bool, String> {
    args.backends.check_present()?;
    let out = &args.backends.out;
    std::fs::create_dir_all(out).map_err(|e| e.to_string())?;
    eprintln!("== 1/4 parity (every mode, with and without --recover-records, and info)");
    let (inputs, notes) = collect_inputs(&args.corpus, &args.bench_inputs)?;
    let parity_report = run_parity_step(&args.backends, &args.corpus, &inputs, notes)?;
    eprintln!("== 2/4 exit statuses");
    let exit_table = exit_table::run_exit_table(
        &args.backends.backends(),
        &args.corpus.fixtures,
        &out.join("exit-table"),
    )?;
    eprintln!("== 3/4 speed");
    let (date, build, when) = perf_page::provenance();
    let speed_report = speed::run_speed(&speed::SpeedPlan {
        backends: args.backends.backends(),
        zig_callgrind: args.zig_callgrind.clone(),
        inputs: args.bench_inputs.clone(),
        harness: args.harness.clone(),
        lib_dir: args.lib_dir.clone(),
        runs: args.runs,
        callgrind: !args.no_callgrind,
        extensions: true,
        fleet_log: Some(args.corpus.fixtures.join(FLEET_LOG)),
        out: out.clone(),
    });
    eprintln!("== 4/4 report");
    report::write_report(out, &parity_report, &exit_table, &speed_report)?;
    let record = perf_page::from_report(&speed_report, date, build, when);
    write(
        &out.join("record.json"),
        &serde_json::to_string_pretty(&record).map_err(|e| e.to_string())?,
    )?;
    report::print_terminal_summary(&parity_report, &exit_table, &speed_report, out);
    cli_parity::print_summary(&parity_report);
    Ok(parity_report.failed() == 0 && exit_table.failed() == 0)
}

fn abi_parity_command(args: &AbiParityArgs) -> Result<bool, String> {
    let (inputs, _) = collect_inputs(&args.corpus, &[])?;
    let paths: Vec<PathBuf> = inputs.into_iter().map(|i| i.path).collect();
    let (all, ours) = abi_parity::split_inputs(&args.corpus.fixtures, &paths);
    // The baseline first: libevtx_ref's bytes are the reference CLI's.
    let shim_ok = shim_parity::run(&args.reference, &all)?;
    let libraries = abi_parity::Libraries {
        harness: args.harness.clone(),
        lib_dir: args.lib_dir.clone(),
    };
    let fixtures = &args.corpus.fixtures;
    Ok(abi_parity::run_abi_parity(&libraries, &all, &ours, fixtures, &args.out)? && shim_ok)
}

fn mutate_command(args: &MutateArgs) -> Result<bool, String> {
    for path in [&args.reference, &args.rust, &args.zig] {
        if !path.is_file() {
            return Err(format!(
                "{} does not exist: run `make build` first",
                path.display()
            ));
        }
    }
    let inputs = evtx_files(&args.fixtures);
    if inputs.is_empty() {
        return Err(format!(
            "no .evtx fixtures under {}",
            args.fixtures.display()
        ));
    }
    std::fs::create_dir_all(&args.out).map_err(|e| e.to_string())?;
    let engines = mutate::Engines {
        reference: &args.reference,
        rust: &args.rust,
        zig: &args.zig,
        time: &args.time,
    };
    let outcome = if args.readers_only {
        mutate::Outcome::default()
    } else {
        mutate::run_mutation_test(
            &engines,
            &inputs,
            &args.out,
            args.seed,
            args.random,
            args.rss_limit_mib * 1024,
            args.max_mutants,
        )
    };
    for failure in outcome.failures.iter().take(20) {
        eprintln!("FAIL {failure}");
    }
    let readers_ok = args.logs_only || run_reader_mutants(&engines, args);
    if !args.readers_only {
        println!(
            "mutate: {} mutants of {} fixtures (largest {} bytes, peak RSS {} KiB, bound {} KiB), \
                {} mutant runs passed, {} failed; the reference crashed on {}",
            outcome.mutants,
            inputs.len(),
            outcome.max_input,
            outcome.max_rss_kib,
            args.rss_limit_mib * 1024,
            outcome.passed,
            outcome.failures.len(),
            outcome.reference_crashed
        );
    }
    let logs_ok = args.readers_only
        || outcome.failures.is_empty() && outcome.mutants > 0 && outcome.max_rss_kib > 0;
    Ok(logs_ok && readers_ok)
}

/// The side readers' mutants (`mutate_readers.rs`); true when they all pass.
fn run_reader_mutants(engines: &mutate::Engines, args: &MutateArgs) -> bool {
    let started = std::time::Instant::now();
    let readers = mutate_readers::run_reader_mutations(
        engines,
        &args.fixtures,
        &args.out,
        args.seed,
        args.reader_random,
        args.rss_limit_mib * 1024,
    );
    for failure in readers.failures.iter().take(20) {
        eprintln!("FAIL {failure}");
    }
    println!(
        "mutate readers: {} mutants of {} .MTA, .wevtcache and PE fixture uses in {:.0}s, \
         {} passed, {} failed; the reference crashed on {}",
        readers.mutants,
        mutate_readers::BASE_COUNT,
        started.elapsed().as_secs_f64(),
        readers.passed,
        readers.failures.len(),
        readers.reference_crashed
    );
    readers.failures.is_empty() && readers.mutants > 0
}

/// Fixtures, then the public corpus (when present), then the user's files, then bench logs.
fn collect_inputs(
    corpus: &CorpusArgs,
    extra: &[PathBuf],
) -> Result<(Vec<cli_parity::Input>, Vec<String>), String> {
    let mut inputs = Vec::new();
    let mut notes = Vec::new();
    let fixtures = evtx_files(&corpus.fixtures);
    if fixtures.is_empty() {
        notes.push(format!(
            "no .evtx fixtures under {}",
            corpus.fixtures.display()
        ));
    }
    push_all(&mut inputs, "fixtures", &corpus.fixtures, fixtures);
    let skipped = match &corpus.samples {
        Some(dir) if dir.is_dir() && !evtx_files(dir).is_empty() => {
            push_all(&mut inputs, "samples", dir, evtx_files(dir));
            None
        }
        Some(dir) => Some(format!(
            "SKIPPED the public corpus: no samples at {}",
            dir.display()
        )),
        None => Some("SKIPPED the public corpus: EVTX_SAMPLES is not set".into()),
    };
    if let Some(skipped) = skipped {
        // `make test` requires the samples: a gate that silently compares less is no gate.
        if std::env::var("EVTX_REQUIRE_SAMPLES").as_deref() == Ok("1") {
            return Err(format!("EVTX_REQUIRE_SAMPLES=1: {skipped}"));
        }
        eprintln!("{skipped}");
        notes.push(skipped);
    }
    for path in corpus.corpus.iter().chain(extra) {
        if path.is_file() {
            push_all(
                &mut inputs,
                "corpus",
                path.parent().unwrap_or(Path::new(".")),
                vec![path.clone()],
            );
        } else if path.is_dir() {
            push_all(&mut inputs, "corpus", path, evtx_files(path));
        } else {
            return Err(format!("{} does not exist", path.display()));
        }
    }
    Ok((inputs, notes))
}

fn push_all(inputs: &mut Vec<cli_parity::Input>, kind: &str, base: &Path, files: Vec<PathBuf>) {
    for path in files {
        let rel = path
            .strip_prefix(base)
            .unwrap_or(&path)
            .display()
            .to_string();
        inputs.push(cli_parity::Input {
            label: format!("{kind}/{rel}"),
            path,
        });
    }
}

/// Every `.evtx` below `dir`, sorted, skipping the generator's sources and build outputs.
fn evtx_files(dir: &Path) -> Vec<PathBuf> {
    let mut found = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(dir) = stack.pop() {
        let Ok(entries) = std::fs::read_dir(&dir) else {
            continue;
        };
        for entry in entries.flatten() {
            let path = entry.path();
            if path.is_dir() {
                if !matches!(
                    path.file_name().and_then(|n| n.to_str()),
                    Some("generator" | "target")
                ) {
                    stack.push(path);
                }
            } else if path.extension().is_some_and(|e| e == "evtx") {
                found.push(path);
            }
        }
    }
    found.sort();
    found
}

fn write(path: &Path, text: &str) -> Result<(), String> {
    std::fs::write(path, text).map_err(|e| format!("{}: {e}", path.display()))
}
