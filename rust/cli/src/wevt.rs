//! The template subcommands of `evtx_dump` 0.15.1: `extract-wevt-templates`,
//! `dump-template-instances`, `apply-wevt-cache` (texts, options and exit statuses:
//! `shared-fixtures/generator/wevt-format.md`).

use crate::fatal;
use clap::{ArgAction, Args};
use std::collections::{HashSet, VecDeque};
use std::fs;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

/// Build a WEVT template cache from PE files (EXE/DLL).
#[derive(Debug, Args)]
#[group(skip)]
pub struct ExtractArgs {
    /// Input PE path (file or directory). Can be passed multiple times.
    #[arg(short = 'i', long = "input", value_name = "PATH", action = ArgAction::Append)]
    input: Vec<String>,
    /// Glob pattern to expand into input paths. Can be passed multiple times.
    #[arg(long = "glob", value_name = "PATTERN", action = ArgAction::Append)]
    glob: Vec<String>,
    /// When an input path is a directory (or a glob matches one), recurse into it.
    #[arg(short = 'r', long = "recursive")]
    recursive: bool,
    /// Comma-separated list of allowed file extensions when walking directories.
    #[arg(
        long = "extensions",
        value_name = "EXTS",
        default_value = "exe,dll,sys"
    )]
    extensions: String,
    /// Output `.wevtcache` file to write extracted resources into.
    #[arg(
        short = 'o',
        long = "output",
        value_name = "WEVTCACHE",
        required = true
    )]
    output: String,
    /// Overwrite the output file if it already exists.
    #[arg(long = "overwrite")]
    overwrite: bool,
}

/// Dump BinXML TemplateInstance substitution arrays from EVTX records (JSONL).
#[derive(Debug, Args)]
#[group(skip)]
pub struct DumpArgs {
    /// Input EVTX file path.
    #[arg(short = 'i', long = "input", value_name = "EVTX", required = true)]
    input: String,
    /// Only dump template instances for the specified event record id.
    #[arg(long = "record-id", value_name = "ID")]
    record_id: Option<u64>,
    /// When a record contains multiple TemplateInstance tokens, select which one to dump.
    #[arg(
        long = "template-instance-index",
        value_name = "N",
        default_value_t = 0
    )]
    template_instance_index: usize,
}

/// Render a WEVT template using an offline cache + substitution values.
#[derive(Debug, Args)]
#[group(skip)]
pub struct ApplyArgs {
    /// Path to cache file (`.wevtcache`).
    #[arg(long = "cache", value_name = "PATH", required = true)]
    cache: String,
    /// Template GUID to render.
    #[arg(long = "template-guid", value_name = "GUID")]
    template_guid: Option<String>,
    /// Provider GUID (used to resolve template GUID via the cache index).
    #[arg(long = "provider-guid", value_name = "GUID")]
    provider_guid: Option<String>,
    /// Event ID (used to resolve template GUID via the cache index).
    #[arg(long = "event-id", value_name = "ID")]
    event_id: Option<u16>,
    /// Event version (used to resolve template GUID via the cache index).
    #[arg(long = "version", value_name = "V")]
    version: Option<u8>,
    /// EVTX file to extract substitution values from (TemplateInstance).
    #[arg(long = "evtx", value_name = "PATH")]
    evtx: Option<String>,
    /// Event record id to extract substitution values from.
    #[arg(long = "record-id", value_name = "ID")]
    record_id: Option<u64>,
    /// When a record contains multiple TemplateInstance tokens, select which one to use.
    #[arg(
        long = "template-instance-index",
        value_name = "N",
        default_value_t = 0
    )]
    template_instance_index: usize,
    /// Substitution values as a JSON array (strings/numbers).
    #[arg(long = "substitutions", value_name = "JSON")]
    substitutions: Option<String>,
    /// Path to a JSON file containing a substitution values array.
    #[arg(long = "substitutions-file", value_name = "PATH")]
    substitutions_file: Option<String>,
    /// Write rendered XML to this path (default: stdout).
    #[arg(short = 'o', long = "output", value_name = "PATH")]
    output: Option<String>,
}

// ---------------------------------------------------------------------------------------------
// extract-wevt-templates

/// `extract-wevt-templates`: every input's `WEVT_TEMPLATE` blobs into one `.wevtcache`.
pub fn extract(args: &ExtractArgs) -> ExitCode {
    let output = PathBuf::from(&args.output);
    if output.extension().and_then(|s| s.to_str()) != Some("wevtcache") {
        return fatal("output must have `.wevtcache` extension");
    }
    let allowed: HashSet<String> = args
        .extensions
        .split(',')
        .map(|s| s.trim().trim_start_matches('.').to_ascii_lowercase())
        .filter(|s| !s.is_empty())
        .collect();
    let mut inputs: Vec<PathBuf> = args.input.iter().map(PathBuf::from).collect();
    for pattern in &args.glob {
        let paths = match glob::glob(pattern) {
            Ok(paths) => paths,
            Err(e) => {
                return fatal(format!(
                    "invalid glob pattern `{pattern}`\n\nCaused by:\n    {e}"
                ))
            }
        };
        for entry in paths {
            match entry {
                Ok(p) => inputs.push(p),
                Err(e) => eprintln!("glob entry error: {e}"),
            }
        }
    }
    if inputs.is_empty() {
        return fatal("No inputs provided. Use --input and/or --glob.");
    }
    let mut files = Vec::new();
    let mut seen = HashSet::new();
    for input in &inputs {
        if let Err(e) = collect(input, args.recursive, &allowed, &mut seen, &mut files) {
            return fatal(e);
        }
    }
    files.sort();
    if output.exists() && !args.overwrite {
        return fatal(format!(
            "refusing to overwrite existing output file `{}` (pass overwrite=true)",
            output.display()
        ));
    }
    let mut blobs: Vec<Vec<u8>> = Vec::new();
    let mut errors = 0usize;
    let mut cache = match fs::File::create(&output) {
        Ok(f) => f,
        Err(e) => {
            return fatal(format!(
                "I/O error while create `{}`: {e}\n\nCaused by:\n    {e}",
                output.display()
            ))
        }
    };
    for path in files {
        let bytes = match fs::read(&path) {
            Ok(b) => b,
            Err(e) => {
                errors += 1;
                eprintln!("failed to read `{}`: {e}", path.to_string_lossy());
                continue;
            }
        };
        match evtx_core::pe::wevt_template_resources(&bytes) {
            Ok(found) => blobs.extend(found.into_iter().map(<[u8]>::to_vec)),
            Err(e) => {
                errors += 1;
                eprintln!(
                    "failed to extract WEVT_TEMPLATE from `{}`: {e}",
                    path.to_string_lossy()
                );
            }
        }
    }
    let mut bytes = b"WEVTCACH".to_vec();
    bytes.extend(1u32.to_le_bytes());
    bytes.extend((blobs.len() as u32).to_le_bytes());
    for b in &blobs {
        bytes.push(1);
        bytes.extend((b.len() as u64).to_le_bytes());
        bytes.extend(b);
    }
    if let Err(e) = cache.write_all(&bytes).and_then(|()| cache.flush()) {
        return fatal(format!(
            "I/O error while write entry payload `{}`: {e}\n\nCaused by:\n    {e}",
            output.display()
        ));
    }
    if errors > 0 {
        return fatal(format!(
            "extract-wevt-templates completed with {errors} error(s)"
        ));
    }
    eprintln!(
        "wrote {} resource blob(s) to `{}`",
        blobs.len(),
        output.display()
    );
    ExitCode::SUCCESS
}

/// The reference's input expansion: files as they are, directories only with `-r` (breadth
/// first, by extension), each path once.
fn collect(
    input: &Path,
    recursive: bool,
    allowed: &HashSet<String>,
    seen: &mut HashSet<PathBuf>,
    out: &mut Vec<PathBuf>,
) -> Result<(), String> {
    if !input.exists() {
        return Ok(());
    }
    if input.is_file() {
        if seen.insert(input.to_path_buf()) {
            out.push(input.to_path_buf());
        }
        return Ok(());
    }
    if !input.is_dir() || !recursive {
        return Ok(());
    }
    let mut queue = VecDeque::from([input.to_path_buf()]);
    while let Some(dir) = queue.pop_front() {
        let entries = fs::read_dir(&dir).map_err(|e| {
            format!(
                "failed to read directory `{}`\n\nCaused by:\n    {e}",
                dir.display()
            )
        })?;
        for entry in entries {
            let p = entry.map_err(|e| e.to_string())?.path();
            if p.is_dir() {
                queue.push_back(p);
            } else if p.is_file() && keep(&p, allowed) && seen.insert(p.clone()) {
                out.push(p);
            }
        }
    }
    Ok(())
}

fn keep(path: &Path, allowed: &HashSet<String>) -> bool {
    path.extension()
        .and_then(|s| s.to_str())
        .is_some_and(|e| allowed.contains(&e.to_ascii_lowercase()))
}

// ---------------------------------------------------------------------------------------------
// dump-template-instances and apply-wevt-cache

pub fn dump_instances(args: &DumpArgs) -> ExitCode {
    let _ = args;
    fatal("dump-template-instances is not implemented yet")
}

pub fn apply(args: &ApplyArgs) -> ExitCode {
    let _ = args;
    fatal("apply-wevt-cache is not implemented yet")
}
