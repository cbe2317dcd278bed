//! Running the reference `evtx_dump` on the fixtures: expected outputs, counts, manifest.

use std::fs;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::{json, Value};

use crate::fixtures::{self, Fixture, Out};

/// What the reference printed for one fixture and one set of options.
#[derive(Debug, Clone)]
pub struct RefRun {
    pub stdout: Vec<u8>,
    pub stderr: String,
    pub exit: Option<i32>,
}

impl RefRun {
    /// Error blocks on stderr (one per failed record or chunk).
    pub fn failed(&self) -> usize {
        self.stderr
            .lines()
            .filter(|l| l.trim_end() == "Failed to dump the next record.")
            .count()
    }
    pub fn lines(&self) -> usize {
        self.stdout.iter().filter(|&&b| b == b'\n').count()
    }
    /// Records in `-o xml` output: its `Record N` banner lines.
    pub fn banners(&self) -> usize {
        String::from_utf8_lossy(&self.stdout)
            .lines()
            .filter(|l| {
                l.strip_prefix("Record ")
                    .is_some_and(|n| !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit()))
            })
            .count()
    }
    /// One line per error block: its "Caused by" messages joined with " / ".
    pub fn error_summaries(&self) -> Vec<String> {
        let mut out = Vec::new();
        let mut cur: Option<Vec<String>> = None;
        for l in self.stderr.lines() {
            if l.trim_end() == "Failed to dump the next record." {
                if let Some(c) = cur.take() {
                    out.push(c.join(" / "));
                }
                cur = Some(Vec::new());
            } else if let Some(c) = cur.as_mut() {
                let t = l.trim();
                if let Some((n, msg)) = t.split_once(": ") {
                    if n.chars().all(|ch| ch.is_ascii_digit()) && !n.is_empty() {
                        c.push(msg.to_string());
                    }
                }
            }
        }
        if let Some(c) = cur.take() {
            out.push(c.join(" / "));
        }
        out
    }
    pub fn warnings(&self) -> Vec<String> {
        self.stderr
            .lines()
            .filter(|l| l.starts_with("warning:"))
            .map(|l| l.to_string())
            .collect()
    }
}

/// The reference binary: `EVTX_REFERENCE`, else `<workspace>/target/reference/bin/evtx_dump`.
pub fn default_reference() -> PathBuf {
    if let Ok(p) = std::env::var("EVTX_REFERENCE") {
        return PathBuf::from(p);
    }
    workspace_root().join("target/reference/bin/evtx_dump")
}

/// The sample corpus: `EVTX_SAMPLES`, else `<workspace>/../shared/evtx-samples`.
pub fn default_samples() -> PathBuf {
    if let Ok(p) = std::env::var("EVTX_SAMPLES") {
        return PathBuf::from(p);
    }
    workspace_root().join("../shared/evtx-samples")
}

pub fn workspace_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../..")
        .canonicalize()
        .unwrap_or_else(|_| PathBuf::from("."))
}

/// Runs the reference with `-t 1` and `args` on `rel` (relative to `cwd`), 120 s at most.
pub fn run_reference(reference: &Path, cwd: &Path, rel: &str, args: &[&str]) -> RefRun {
    static RUNS: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
    let n = RUNS.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    let tmp = std::env::temp_dir().join(format!(
        "evtx-fixture-gen-{}-{n}-{}",
        std::process::id(),
        rel.replace('/', "_")
    ));
    let out_path = tmp.with_extension("out");
    let err_path = tmp.with_extension("err");
    let mut child = Command::new(reference)
        .current_dir(cwd)
        .env("RUST_BACKTRACE", "0")
        .env("RUST_LIB_BACKTRACE", "0")
        .arg("-t")
        .arg("1")
        .args(args)
        .arg(rel)
        .stdin(Stdio::null())
        .stdout(fs::File::create(&out_path).expect("temp file"))
        .stderr(fs::File::create(&err_path).expect("temp file"))
        .spawn()
        .unwrap_or_else(|e| panic!("cannot run {}: {e}", reference.display()));
    let start = Instant::now();
    let status = loop {
        if let Some(s) = child.try_wait().expect("wait") {
            break Some(s);
        }
        if start.elapsed() > Duration::from_secs(120) {
            let _ = child.kill();
            let _ = child.wait();
            break None;
        }
        std::thread::sleep(Duration::from_millis(5));
    };
    let stdout = fs::read(&out_path).unwrap_or_default();
    let stderr = String::from_utf8_lossy(&fs::read(&err_path).unwrap_or_default()).into_owned();
    let _ = fs::remove_file(&out_path);
    let _ = fs::remove_file(&err_path);
    RefRun {
        stdout,
        stderr: if status.is_none() {
            format!("{stderr}\n<timeout>")
        } else {
            stderr
        },
        exit: status.and_then(|s| s.code()),
    }
}

pub const JSONL: &[&str] = &["-o", "jsonl"];
pub const XML: &[&str] = &["-o", "xml"];
pub const SEP: &[&str] = &["-o", "jsonl", "--separate-json-attributes"];
pub const VALIDATE: &[&str] = &["-o", "jsonl", "--validate-checksums"];

/// The committed outputs: their key in the manifest (`outputs`, each file's `expected`) and
/// the CLI arguments that print them. The one table every reader of the manifest takes them from.
pub const OUTPUTS: [(&str, &[&str]); 3] = [("jsonl", JSONL), ("sep_jsonl", SEP), ("xml", XML)];

/// The three committed outputs of one fixture.
pub struct RefOutputs {
    pub jsonl: RefRun,
    pub xml: RefRun,
    pub sep: RefRun,
    pub validate: RefRun,
}

pub fn reference_outputs(reference: &Path, fixtures_dir: &Path, f: &Fixture) -> RefOutputs {
    let rel = f.rel_path();
    RefOutputs {
        jsonl: run_reference(reference, fixtures_dir, &rel, JSONL),
        xml: run_reference(reference, fixtures_dir, &rel, XML),
        sep: run_reference(reference, fixtures_dir, &rel, SEP),
        validate: run_reference(reference, fixtures_dir, &rel, VALIDATE),
    }
}

impl RefOutputs {
    pub fn get(&self, o: Out) -> &RefRun {
        match o {
            Out::Jsonl => &self.jsonl,
            Out::Xml => &self.xml,
            Out::Sep => &self.sep,
        }
    }
}

/// The reference's outputs on a fixture's twin (written to a temporary directory).
pub fn twin_outputs(reference: &Path, f: &Fixture, twin: &[u8]) -> RefOutputs {
    let tmp = std::env::temp_dir().join(format!("evtx-twin-{}-{}", std::process::id(), f.name));
    fs::create_dir_all(tmp.join(f.dir)).expect("temp dir");
    fs::write(tmp.join(f.rel_path()), twin).expect("temp file");
    let r = reference_outputs(reference, &tmp, f);
    let _ = fs::remove_dir_all(&tmp);
    r
}

/// Checks a fixture's notable expectations against the reference outputs.
pub fn check_expectations(f: &Fixture, r: &RefOutputs) -> Vec<String> {
    let mut problems = Vec::new();
    for (o, s) in &f.expect {
        let text = String::from_utf8_lossy(&r.get(*o).stdout);
        if !text.contains(s.as_str()) {
            problems.push(format!("{}: {} output lacks {:?}", f.name, o.ext(), s));
        }
    }
    for (o, s) in &f.expect_absent {
        let text = String::from_utf8_lossy(&r.get(*o).stdout);
        if text.contains(s.as_str()) {
            problems.push(format!("{}: {} output contains {:?}", f.name, o.ext(), s));
        }
    }
    problems
}

fn chunk_slots(bytes: &[u8]) -> usize {
    bytes.len().saturating_sub(4096) / 65536
}

/// The manifest entry of one fixture.
pub fn manifest_entry(f: &Fixture, r: &RefOutputs) -> Value {
    let notable: Vec<Value> = f
        .expect
        .iter()
        .map(|(o, s)| json!({"output": o.ext(), "contains": s}))
        .chain(
            f.expect_absent
                .iter()
                .map(|(o, s)| json!({"output": o.ext(), "lacks": s})),
        )
        .collect();
    let mut v = json!({
        "path": f.rel_path(),
        "size": f.bytes.len(),
        "chunk_slots": chunk_slots(&f.bytes),
        "exercises": f.exercises,
        "expected": {
            "jsonl": format!("expected/{}.jsonl", f.name),
            "xml": format!("expected/{}.xml", f.name),
            "sep_jsonl": format!("expected/{}.sep.jsonl", f.name),
        },
        "reference": {
            "records": r.jsonl.lines(),
            "failed": r.jsonl.failed(),
            "exit": r.jsonl.exit,
            "errors": r.jsonl.error_summaries(),
            "warnings": r.jsonl.warnings(),
            "validate_checksums": {
                "records": r.validate.lines(),
                "failed": r.validate.failed(),
            },
            "xml": {"records": r.xml.banners(), "failed": r.xml.failed()},
            "sep_jsonl": {"records": r.sep.lines(), "failed": r.sep.failed()},
        },
        "notable": notable,
    });
    if let Some(d) = &f.differs {
        v["differs_from_reference"] = json!(d);
    }
    v
}

pub fn manifest(entries: Vec<Value>) -> Value {
    json!({
        "generator": "evtx-fixture-gen (shared-fixtures/generator)",
        "reference": "evtx_dump 0.15.1, run with -t 1; records = stdout lines of -o jsonl, failed \
            = error blocks on stderr",
        "regenerate": [
            "cargo run --release -p evtx-fixture-gen -- synthetic --out-dir shared-fixtures",
            "cargo run --release -p evtx-fixture-gen -- expected --fixtures shared-fixtures \
                --reference target/reference/bin/evtx_dump",
        ],
        "outputs": OUTPUTS.iter().map(|(key, args)| (key.to_string(), json!(args)))
            .collect::<serde_json::Map<_, _>>(),
        "files": entries,
    })
}

/// Writes every fixture under `out_dir/{synthetic,damaged,triage}/`, removing stale `.evtx`
/// files there.
pub fn write_fixtures(out_dir: &Path) -> std::io::Result<Vec<Fixture>> {
    let all = fixtures::all();
    for dir in ["synthetic", "damaged", "triage"] {
        let d = out_dir.join(dir);
        fs::create_dir_all(&d)?;
        for entry in fs::read_dir(&d)? {
            let p = entry?.path();
            if p.extension().is_some_and(|e| e == "evtx") {
                fs::remove_file(p)?;
            }
        }
    }
    for f in &all {
        fs::write(out_dir.join(f.rel_path()), &f.bytes)?;
    }
    Ok(all)
}

/// Regenerates `expected/` and `manifest.json` from the fixtures on disk (which must match the
/// generator). Returns the list of expectation problems (empty = all notable texts found).
pub fn write_expected(fixtures_dir: &Path, reference: &Path) -> std::io::Result<Vec<String>> {
    let all = fixtures::all();
    let reference = &reference.canonicalize()?;
    let exp = fixtures_dir.join("expected");
    fs::create_dir_all(&exp)?;
    for entry in fs::read_dir(&exp)? {
        let p = entry?.path();
        if p.is_file() {
            fs::remove_file(p)?;
        }
    }
    let mut problems = Vec::new();
    let mut entries = Vec::new();
    for f in &all {
        let on_disk = fs::read(fixtures_dir.join(f.rel_path()))?;
        if on_disk != f.bytes {
            problems.push(format!(
                "{}: file on disk differs from the generator; run `synthetic` first",
                f.rel_path()
            ));
        }
        let r = reference_outputs(reference, fixtures_dir, f);
        fs::write(exp.join(format!("{}.jsonl", f.name)), &r.jsonl.stdout)?;
        fs::write(exp.join(format!("{}.xml", f.name)), &r.xml.stdout)?;
        fs::write(exp.join(format!("{}.sep.jsonl", f.name)), &r.sep.stdout)?;
        problems.extend(check_expectations(f, &r));
        let ours = f.twin.as_ref().map(|twin| twin_outputs(reference, f, twin));
        if let Some(o) = &ours {
            fs::write(exp.join(format!("{}.ours.jsonl", f.name)), &o.jsonl.stdout)?;
            fs::write(exp.join(format!("{}.ours.xml", f.name)), &o.xml.stdout)?;
            fs::write(
                exp.join(format!("{}.ours.sep.jsonl", f.name)),
                &o.sep.stdout,
            )?;
        }
        eprintln!(
            "{:40} records {:5} failed {:3}",
            f.rel_path(),
            r.jsonl.lines(),
            r.jsonl.failed()
        );
        let mut entry = manifest_entry(f, &r);
        if let Some(o) = &ours {
            entry["ours"] = json!({
                "records": o.jsonl.lines(),
                "failed": o.jsonl.failed(),
                "xml": {"records": o.xml.banners(), "failed": o.xml.failed()},
                "jsonl": format!("expected/{}.ours.jsonl", f.name),
                "xml_file": format!("expected/{}.ours.xml", f.name),
                "sep_jsonl": format!("expected/{}.ours.sep.jsonl", f.name),
            });
        }
        entries.push(entry);
    }
    let m = canonical(manifest(entries));
    let mut text = serde_json::to_string_pretty(&m).expect("json");
    text.push('\n');
    fs::write(fixtures_dir.join("manifest.json"), text)?;
    Ok(problems)
}

/// The same value with every object's keys sorted (independent of serde_json's map features).
pub fn canonical(v: Value) -> Value {
    match v {
        Value::Object(m) => {
            let mut items: Vec<(String, Value)> = m.into_iter().collect();
            items.sort_by(|a, b| a.0.cmp(&b.0));
            let mut out = serde_json::Map::new();
            for (k, v) in items {
                out.insert(k, canonical(v));
            }
            Value::Object(out)
        }
        Value::Array(a) => Value::Array(a.into_iter().map(canonical).collect()),
        other => other,
    }
}
