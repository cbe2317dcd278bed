use std::path::PathBuf;
use std::process::ExitCode;

use evtx_fixture_gen::{
    bench, carving, code_pages, corpus, expected, mta_fixtures, sparse, wevt_fixtures,
};

const USAGE: &str = "usage:
  evtx-fixture-gen synthetic --out-dir DIR
  evtx-fixture-gen expected --fixtures DIR [--reference PATH]
  evtx-fixture-gen carving --out-dir DIR     (shared-fixtures/carving: record recovery fixtures)
  evtx-fixture-gen mta --out-dir DIR         (shared-fixtures/mta: --mta fixtures)
  evtx-fixture-gen wevt --out-dir DIR        (shared-fixtures/wevt: --wevt-cache, PE files)
  evtx-fixture-gen bench --out FILE [--seed N] [--size-mb N]
  evtx-fixture-gen corpus --samples DIR --out FILE [--reference PATH] [--size-mb N]
  evtx-fixture-gen sparse --out FILE      (a 4.0 GiB sparse wrapped log, ~1 MiB on disk)
  evtx-fixture-gen code-pages --out DIR     (the Zig engine's multi-byte decode tables)";

struct Args {
    cmd: String,
    opts: Vec<(String, String)>,
}

impl Args {
    fn get(&self, k: &str) -> Option<&str> {
        self.opts
            .iter()
            .find(|(a, _)| a == k)
            .map(|(_, v)| v.as_str())
    }
    fn need(&self, k: &str) -> Result<&str, String> {
        self.get(k).ok_or_else(|| format!("missing --{k}\n{USAGE}"))
    }
    fn num(&self, k: &str, default: u64) -> Result<u64, String> {
        match self.get(k) {
            None => Ok(default),
            Some(v) => v.parse().map_err(|_| format!("--{k}: not a number: {v}")),
        }
    }
}

fn parse() -> Result<Args, String> {
    let mut it = std::env::args().skip(1);
    let cmd = it.next().ok_or_else(|| USAGE.to_string())?;
    let mut opts = Vec::new();
    while let Some(a) = it.next() {
        let k = a
            .strip_prefix("--")
            .ok_or_else(|| format!("unexpected argument {a}\n{USAGE}"))?;
        let v = it.next().ok_or_else(|| format!("--{k} needs a value"))?;
        opts.push((k.to_string(), v));
    }
    Ok(Args { cmd, opts })
}

fn run() -> Result<(), String> {
    let a = parse()?;
    match a.cmd.as_str() {
        "synthetic" => {
            let out = PathBuf::from(a.need("out-dir")?);
            let all = expected::write_fixtures(&out).map_err(|e| e.to_string())?;
            let total: usize = all.iter().map(|f| f.bytes.len()).sum();
            eprintln!("wrote {} fixtures, {} bytes", all.len(), total);
            Ok(())
        }
        "carving" => {
            let out = PathBuf::from(a.need("out-dir")?);
            let all = carving::write(&out).map_err(|e| e.to_string())?;
            eprintln!("wrote {} carving fixtures", all.len());
            Ok(())
        }
        "mta" => {
            let out = PathBuf::from(a.need("out-dir")?);
            let all = mta_fixtures::write(&out).map_err(|e| e.to_string())?;
            eprintln!("wrote {} mta fixtures", all.len());
            Ok(())
        }
        "wevt" => {
            let out = PathBuf::from(a.need("out-dir")?);
            let all = wevt_fixtures::write(&out).map_err(|e| e.to_string())?;
            eprintln!("wrote {} wevt fixtures", all.len());
            Ok(())
        }
        "expected" => {
            let dir = PathBuf::from(a.need("fixtures")?);
            let reference = a
                .get("reference")
                .map(PathBuf::from)
                .unwrap_or_else(expected::default_reference);
            let problems = expected::write_expected(&dir, &reference).map_err(|e| e.to_string())?;
            if problems.is_empty() {
                Ok(())
            } else {
                Err(format!(
                    "notable expectations not met:\n{}",
                    problems.join("\n")
                ))
            }
        }
        "bench" => {
            let out = PathBuf::from(a.need("out")?);
            let seed = a.num("seed", 1)?;
            let mb = a.num("size-mb", 30)?;
            bench::write(&out, seed, mb).map_err(|e| e.to_string())
        }
        "corpus" => {
            let samples = PathBuf::from(a.need("samples")?);
            let out = PathBuf::from(a.need("out")?);
            let mb = a.num("size-mb", 30)?;
            let reference = a
                .get("reference")
                .map(PathBuf::from)
                .unwrap_or_else(expected::default_reference);
            corpus::write(&samples, &out, &reference, mb).map_err(|e| e.to_string())
        }
        "sparse" => {
            let out = PathBuf::from(a.need("out")?);
            sparse::write(&out).map_err(|e| e.to_string())
        }
        "code-pages" => {
            let out = PathBuf::from(a.need("out")?);
            code_pages::write_tables(&out).map_err(|e| e.to_string())
        }
        _ => Err(USAGE.to_string()),
    }
}

fn main() -> ExitCode {
    match run() {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("evtx-fixture-gen: {e}");
            ExitCode::FAILURE
        }
    }
}
