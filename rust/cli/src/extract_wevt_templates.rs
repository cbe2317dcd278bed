//! `extract-wevt-templates` of `evtx_dump` 0.15.1: every input's `WEVT_TEMPLATE` blobs into
//! one `.wevtcache` (texts, options and exit statuses: `shared-fixtures/generator/wevt-format.md`;
//! the blobs are the engine's `evtx_core::pe`). Zig's mirror: `zig/cli/extract_wevt_templates.zig`.

use crate::{fatal, help};
use clap::{ArgAction, Args};
use std::collections::{HashSet, VecDeque};
use std::fs;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

/// `extract-wevt-templates`' options (the reference's; texts in `help`).
#[derive(Debug, Args)]
#[command(about = help::EXTRACT_ABOUT, long_about = help::EXTRACT_LONG_ABOUT)]
#[group(skip)]
pub struct ExtractArgs {
    #[arg(
        short = 'i',
        long = "input",
        value_name = "PATH",
        action = ArgAction::Append,
        help = help::EXTRACT_INPUT
    )]
    input: Vec<String>,
    #[arg(
        long = "glob",
        value_name = "PATTERN",
        action = ArgAction::Append,
        help = help::EXTRACT_GLOB
    )]
    glob: Vec<String>,
    #[arg(short = 'r', long = "recursive", help = help::EXTRACT_RECURSIVE)]
    recursive: bool,
    #[arg(
        long = "extensions",
        value_name = "EXTS",
        default_value = "exe,dll,sys",
        help = help::EXTRACT_EXTENSIONS
    )]
    extensions: String,
    #[arg(
        short = 'o',
        long = "output",
        value_name = "WEVTCACHE",
        required = true,
        help = help::EXTRACT_OUTPUT
    )]
    output: String,
    #[arg(long = "overwrite", help = help::EXTRACT_OVERWRITE)]
    overwrite: bool,
}

/// `extract-wevt-templates`: every input's `WEVT_TEMPLATE` blobs into one `.wevtcache`.
pub fn run(args: &ExtractArgs) -> ExitCode {
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
    match write(&files, &output, args.overwrite) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => fatal(e),
    }
}

/// Writes the cache at `output` from `files`, one stderr line per file that gives no blobs
/// (Zig `write`).
fn write(files: &[PathBuf], output: &Path, overwrite: bool) -> Result<(), String> {
    if output.exists() && !overwrite {
        return Err(format!(
            "refusing to overwrite existing output file `{}` (pass overwrite=true)",
            output.display()
        ));
    }
    let io_error = |what: &str, e: std::io::Error| {
        format!(
            "I/O error while {what} `{}`: {e}\n\nCaused by:\n    {e}",
            output.display()
        )
    };
    let mut cache = fs::File::create(output).map_err(|e| io_error("create", e))?;
    let mut blobs: Vec<Vec<u8>> = Vec::new();
    let mut errors = 0usize;
    for path in files {
        let bytes = match fs::read(path) {
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
                // The reference's `failed to extract WEVT_TEMPLATE from ...` line, with the
                // offset (shared-fixtures/README.md, "Damaged side files"); the next file goes on.
                errors += 1;
                eprintln!("{}", e.reader_error().line(&path.to_string_lossy()));
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
    cache
        .write_all(&bytes)
        .and_then(|()| cache.flush())
        .map_err(|e| io_error("write entry payload", e))?;
    if errors > 0 {
        return Err(format!(
            "extract-wevt-templates completed with {errors} error(s)"
        ));
    }
    eprintln!(
        "wrote {} resource blob(s) to `{}`",
        blobs.len(),
        output.display()
    );
    Ok(())
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
