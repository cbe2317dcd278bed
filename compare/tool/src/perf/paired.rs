//! Paired, interleaved rounds: the wall-clock ratio a host that changes speed cannot fake.
//!
//! Why: these VMs run at one speed for a few seconds, then at about half of it, then back
//! (the reference on security-30mb: ~68 ms for 20 runs, ~130 ms for the next 15). hyperfine
//! runs all of one command's runs before the next command's, so two commands of one
//! invocation can sit in different phases, and their ratio of medians swung from 1.3× to 2.1×
//! between two runs minutes apart. Here every round runs each command once, back to back
//! (the order rotated each round so no command is always first), and a ratio is the median
//! over rounds of the two times *within* a round: both come from the same fraction of a
//! second. Quartiles of the per-round ratios show how far to trust it.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::Instant;

/// One command of a round: run with stdin closed and stdout, stderr to /dev/null.
#[derive(Clone, Debug)]
pub struct Contender {
    pub name: String,
    pub program: PathBuf,
    pub args: Vec<String>,
}

/// Every round's wall time per contender (seconds), and each contender's CPU time per run.
#[derive(Debug)]
pub struct Rounds {
    pub names: Vec<String>,
    /// `walls[c][r]`: contender `c` in round `r`.
    pub walls: Vec<Vec<f64>>,
    /// Mean user + system seconds per run (the children's clock ticks, summed over rounds).
    pub cpu: Vec<f64>,
}

/// A ratio's median and quartiles over the rounds.
#[derive(Clone, Copy, Debug, serde::Serialize)]
pub struct Ratio {
    pub q1: f64,
    pub median: f64,
    pub q3: f64,
}

/// Runs `warmup` rounds that are not kept, then `rounds` kept rounds.
pub fn run_rounds(
    contenders: &[Contender],
    rounds: usize,
    warmup: usize,
) -> Result<Rounds, String> {
    assert!(!contenders.is_empty() && rounds > 0);
    let mut walls = vec![Vec::with_capacity(rounds); contenders.len()];
    let mut ticks = vec![0u64; contenders.len()];
    for round in 0..warmup + rounds {
        let shift = round % contenders.len();
        for i in (shift..contenders.len()).chain(0..shift) {
            let before = children_ticks();
            let wall = run_once(&contenders[i])?;
            if round >= warmup {
                walls[i].push(wall);
                ticks[i] += children_ticks().saturating_sub(before);
            }
        }
    }
    Ok(Rounds {
        names: contenders.iter().map(|c| c.name.clone()).collect(),
        walls,
        cpu: ticks
            .iter()
            .map(|&t| t as f64 / USER_HZ / rounds as f64)
            .collect(),
    })
}

impl Rounds {
    /// `base`'s time over `other`'s, round by round: above 1 when `other` is faster.
    pub fn ratio(&self, base: usize, other: usize) -> Ratio {
        let ratios: Vec<f64> = self.walls[base]
            .iter()
            .zip(&self.walls[other])
            .map(|(b, o)| b / o)
            .collect();
        quartiles(ratios)
    }

    pub fn median_wall(&self, contender: usize) -> f64 {
        quartiles(self.walls[contender].clone()).median
    }

    pub fn min_wall(&self, contender: usize) -> f64 {
        self.walls[contender]
            .iter()
            .copied()
            .fold(f64::INFINITY, f64::min)
    }
}

/// Quartiles by linear interpolation between the closest ranks.
pub fn quartiles(mut values: Vec<f64>) -> Ratio {
    assert!(!values.is_empty());
    values.sort_by(f64::total_cmp);
    let at = |q: f64| {
        let pos = q * (values.len() - 1) as f64;
        let (low, high) = (pos.floor() as usize, pos.ceil() as usize);
        values[low] + (values[high] - values[low]) * (pos - low as f64)
    };
    Ratio {
        q1: at(0.25),
        median: at(0.5),
        q3: at(0.75),
    }
}

fn run_once(contender: &Contender) -> Result<f64, String> {
    let describe = || format!("{} ({})", contender.name, contender.program.display());
    let started = Instant::now();
    let status = Command::new(&contender.program)
        .args(&contender.args)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .map_err(|e| format!("{}: {e}", describe()))?;
    let wall = started.elapsed().as_secs_f64();
    if !status.success() {
        return Err(format!("{} failed: {status}", describe()));
    }
    Ok(wall)
}

/// Clock ticks of /proc's `cutime` and `cstime`: fixed at 100 per second in Linux's ABI.
const USER_HZ: f64 = 100.0;

/// The user + system ticks of this process's waited-for children (`/proc/self/stat` fields
/// 16 and 17), 0 when /proc is missing: the CPU column is then 0, never wrong by a guess.
fn children_ticks() -> u64 {
    let Ok(stat) = std::fs::read_to_string("/proc/self/stat") else {
        return 0;
    };
    // Fields after the command name, which is in parentheses and may hold spaces.
    let Some(rest) = stat.rfind(')').map(|i| &stat[i + 1..]) else {
        return 0;
    };
    let fields: Vec<&str> = rest.split_whitespace().collect();
    // `rest` starts at field 3 (state), so field n is fields[n - 3].
    let field = |n: usize| fields.get(n - 3).and_then(|f| f.parse::<u64>().ok());
    field(16).unwrap_or(0) + field(17).unwrap_or(0)
}

/// `evtx-compare paired NAME=COMMAND...`: the rounds of ad-hoc commands, ratios against the
/// first; what PERF.md's protocol uses for every wall-clock ratio.
pub fn paired_command(specs: &[String], rounds: usize, warmup: usize) -> Result<bool, String> {
    let contenders = specs
        .iter()
        .map(|spec| parse_spec(spec))
        .collect::<Result<Vec<_>, _>>()?;
    if contenders.is_empty() || rounds == 0 {
        return Err("paired: give at least one NAME=COMMAND and --rounds above 0".into());
    }
    let result = run_rounds(&contenders, rounds, warmup)?;
    let base = &result.names[0];
    for (i, name) in result.names.iter().enumerate() {
        let r = result.ratio(0, i);
        println!(
            "{name:12} median {:7.1} ms  min {:7.1} ms  cpu {:7.1} ms  \
             {base}/{name} {:5.2} ({:.2}-{:.2})",
            result.median_wall(i) * 1e3,
            result.min_wall(i) * 1e3,
            result.cpu[i] * 1e3,
            r.median,
            r.q1,
            r.q3
        );
    }
    Ok(true)
}

/// `NAME=PROGRAM ARG...`, split on whitespace (no shell).
fn parse_spec(spec: &str) -> Result<Contender, String> {
    let (name, command) = spec
        .split_once('=')
        .ok_or_else(|| format!("paired: '{spec}' is not NAME=COMMAND"))?;
    let mut words = command.split_whitespace();
    let program = words
        .next()
        .ok_or_else(|| format!("paired: '{spec}' has no command"))?;
    Ok(Contender {
        name: name.to_string(),
        program: Path::new(program).to_path_buf(),
        args: words.map(str::to_string).collect(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn quartiles_interpolate_between_ranks() {
        let q = quartiles(vec![4.0, 1.0, 3.0, 2.0, 5.0]);
        assert_eq!((q.q1, q.median, q.q3), (2.0, 3.0, 4.0));
        let q = quartiles(vec![1.0, 2.0]);
        assert_eq!((q.q1, q.median, q.q3), (1.25, 1.5, 1.75));
    }

    #[test]
    fn ratios_pair_rounds_not_medians() {
        // Per round: 1, 4 and 1.5, so the median ratio is 1.5; the ratio of the two columns'
        // medians would be 0.3 / 0.1 = 3.
        let rounds = Rounds {
            names: vec!["ref".into(), "other".into()],
            walls: vec![vec![0.1, 0.4, 0.3], vec![0.1, 0.1, 0.2]],
            cpu: vec![0.0, 0.0],
        };
        let r = rounds.ratio(0, 1);
        let close = |a: f64, b: f64| (a - b).abs() < 1e-9;
        assert!(
            close(r.q1, 1.25) && close(r.median, 1.5) && close(r.q3, 2.75),
            "{r:?}"
        );
        assert!((rounds.median_wall(0) / rounds.median_wall(1) - 3.0).abs() < 1e-9);
        assert_eq!(rounds.min_wall(1), 0.1);
    }

    #[test]
    fn specs_split_into_program_and_arguments() {
        let c = parse_spec("rs1=/bin/true -t 1 -o jsonl x.evtx").unwrap();
        assert_eq!(c.name, "rs1");
        assert_eq!(c.program, Path::new("/bin/true"));
        assert_eq!(c.args, ["-t", "1", "-o", "jsonl", "x.evtx"]);
        assert!(parse_spec("no-equals-sign").is_err());
        assert!(parse_spec("empty=").is_err());
    }

    #[test]
    fn rounds_run_real_commands_and_count_failures() {
        let ok = Contender {
            name: "true".into(),
            program: "/bin/true".into(),
            args: vec![],
        };
        let result = run_rounds(&[ok.clone(), ok.clone()], 3, 1).unwrap();
        assert_eq!(result.walls[0].len(), 3);
        assert!(result.walls.iter().flatten().all(|&w| w > 0.0));
        let bad = Contender {
            name: "false".into(),
            program: "/bin/false".into(),
            args: vec![],
        };
        let err = run_rounds(&[ok, bad], 1, 0).unwrap_err();
        assert!(err.contains("false"), "{err}");
    }
}
