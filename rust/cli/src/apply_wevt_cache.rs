//! `apply-wevt-cache` of `evtx_dump` 0.15.1: one cached template rendered with JSON values or
//! a record's values (texts, options and exit statuses:
//! `shared-fixtures/generator/wevt-format.md`). The cache, the rendering, the records and their
//! values are the engine's (`evtx_core::wevt_cache`, `evtx_core::template_instances`); this
//! parses the options and the substitutions JSON and prints. Zig's mirror:
//! `zig/cli/apply_wevt_cache.zig`.

use crate::{fatal, help};
use clap::Args;
use evtx_core::error::caused;
use evtx_core::template_instances::{read_records, Step};
use evtx_core::values_format::write_guid_upper;
use evtx_core::wevt_cache::RawValue;
use std::fs;
use std::io::Write;
use std::ops::ControlFlow;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

/// `apply-wevt-cache`'s options (the reference's; texts in `help`).
#[derive(Debug, Args)]
#[command(about = help::APPLY_ABOUT, long_about = help::APPLY_LONG_ABOUT)]
#[group(skip)]
pub struct ApplyArgs {
    #[arg(long = "cache", value_name = "PATH", required = true, help = help::APPLY_CACHE)]
    cache: String,
    #[arg(long = "template-guid", value_name = "GUID", help = help::APPLY_TEMPLATE_GUID)]
    template_guid: Option<String>,
    #[arg(long = "provider-guid", value_name = "GUID", help = help::APPLY_PROVIDER_GUID)]
    provider_guid: Option<String>,
    #[arg(long = "event-id", value_name = "ID", help = help::APPLY_EVENT_ID)]
    event_id: Option<u16>,
    #[arg(long = "version", value_name = "V", help = help::APPLY_VERSION)]
    version: Option<u8>,
    #[arg(long = "evtx", value_name = "PATH", help = help::APPLY_EVTX)]
    evtx: Option<String>,
    #[arg(long = "record-id", value_name = "ID", help = help::APPLY_RECORD_ID)]
    record_id: Option<u64>,
    #[arg(
        long = "template-instance-index",
        value_name = "N",
        default_value_t = 0,
        help = help::APPLY_TEMPLATE_INSTANCE_INDEX
    )]
    template_instance_index: usize,
    #[arg(long = "substitutions", value_name = "JSON", help = help::APPLY_SUBSTITUTIONS)]
    substitutions: Option<String>,
    #[arg(
        long = "substitutions-file",
        value_name = "PATH",
        help = help::APPLY_SUBSTITUTIONS_FILE
    )]
    substitutions_file: Option<String>,
    #[arg(short = 'o', long = "output", value_name = "PATH", help = help::APPLY_OUTPUT)]
    output: Option<String>,
}

/// `apply-wevt-cache`: one cached template rendered with JSON values or a record's values.
/// A damaged cache gives the one line of `--wevt-cache` for the same file (shared-fixtures/
/// README.md, "Damaged side files"), before anything else is read, as the reference stops.
pub fn run(args: &ApplyArgs) -> ExitCode {
    let cache = match CacheTemplates::load(Path::new(&args.cache)) {
        Ok(cache) => cache,
        Err(e) => {
            return match e.reader_error() {
                Some(damage) => crate::side_file_error(Path::new(&args.cache), &damage),
                None => fatal(e),
            }
        }
    };
    match apply_inner(args, &cache) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => fatal(e),
    }
}

/// The CRIM blobs of a cache and their indexed templates (blob index, template).
struct CacheTemplates {
    blobs: Vec<Vec<u8>>,
    temps: Vec<(usize, evtx_core::wevt_cache::TempRef)>,
}

impl CacheTemplates {
    /// Every blob is read before any is parsed, in the reference's order: a container fault
    /// after a damaged manifest is the one reported.
    fn load(path: &Path) -> Result<CacheTemplates, evtx_core::wevt_cache::Diagnostic> {
        use evtx_core::wevt_cache::{parse_crim, read_blobs, Diagnostic};
        let mut read = Vec::new();
        read_blobs(path, |at, b| {
            read.push((at, b));
            Ok(())
        })?;
        let mut cache = CacheTemplates {
            blobs: Vec::with_capacity(read.len()),
            temps: Vec::new(),
        };
        for (i, (at, b)) in read.into_iter().enumerate() {
            let found = parse_crim(&b).map_err(|error| Diagnostic::Crim { error, blob: at })?;
            cache
                .temps
                .extend(found.into_iter().filter(|t| t.indexed).map(|t| (i, t)));
            cache.blobs.push(b);
        }
        Ok(cache)
    }
}

fn apply_inner(args: &ApplyArgs, cache: &CacheTemplates) -> Result<(), String> {
    let cache_path = PathBuf::from(&args.cache);
    let (blobs, temps) = (&cache.blobs, &cache.temps);
    let evtx = args.evtx.as_ref().zip(args.record_id);
    let json = if evtx.is_some() {
        None
    } else if let Some(s) = &args.substitutions {
        Some(
            serde_json::from_str::<serde_json::Value>(s)
                .map_err(|e| caused("failed to parse --substitutions as JSON", e))?,
        )
    } else if let Some(p) = &args.substitutions_file {
        let text = fs::read_to_string(p)
            .map_err(|e| caused(format!("failed to read substitutions file `{p}`"), e))?;
        Some(
            serde_json::from_str::<serde_json::Value>(&text)
                .map_err(|e| caused("failed to parse substitutions file as JSON", e))?,
        )
    } else {
        None
    };
    if evtx.is_none() && json.is_none() {
        return Err("Must provide substitutions via --evtx+--record-id or \
                    --substitutions/--substitutions-file"
            .to_string());
    }
    let guid = if let Some(g) = &args.template_guid {
        normalize_guid(g)
    } else if let (Some(p), Some(id), Some(v)) = (&args.provider_guid, args.event_id, args.version)
    {
        // Event definitions (EVNT) are not read (wevt-format.md): no event maps to a template.
        return Err(format!(
            "no template_guid found in cache index for provider_guid={p} event_id={id} \
             version={v}"
        ));
    } else {
        return Err(
            "Must provide either --template-guid or (--provider-guid, --event-id, --version)"
                .to_string(),
        );
    };
    let Some((blob, temp)) = temps.iter().find(|(_, t)| guid_lower(&t.guid) == guid) else {
        return Err(format!(
            "template GUID `{guid}` not found in cache `{}`",
            cache_path.display()
        ));
    };
    let temp_bytes = &blobs[*blob][temp.offset..temp.offset + temp.binxml_end];
    let values = match (evtx, json) {
        (Some((path, id)), _) => values_from_record(path, id, args.template_instance_index)?,
        (None, Some(json)) => json_values(&json)?,
        (None, None) => unreachable!("checked above"),
    };
    let codec = evtx_core::Options::default().ansi_codec;
    let xml =
        evtx_core::wevt_cache::render_with_values(temp_bytes, &values, codec).map_err(|cause| {
            let binxml = &temp_bytes[evtx_core::wevt_cache::TEMP_HEADER_SIZE..];
            cause
                .and_then(|c| evtx_core::wevt_cache::temp_error(c, binxml))
                .unwrap_or_else(|| "failed to render the template".to_string())
        })?;
    if let Some(out) = &args.output {
        fs::write(out, &xml).map_err(|e| caused(format!("failed to write output `{out}`"), e))?;
    } else {
        let mut out = std::io::stdout().lock();
        let _ = out.write_all(&xml).and_then(|()| out.flush());
    }
    Ok(())
}

/// The values of record `id`'s `index`-th instance in the log at `path` (the first record
/// with that id). The search reads the log as `dump-template-instances` does, and the first
/// failure before the record ends it, as the reference's `?` on each chunk and record does:
/// `Error:` with the failure's line and, where it can be told from the bytes, its cause.
fn values_from_record(path: &str, id: u64, index: usize) -> Result<Vec<RawValue>, String> {
    let input = crate::dump_template_instances::open_log(path)?;
    let mut found: Option<Result<Vec<RawValue>, String>> = None;
    read_records(&input, |step| {
        let record = match step {
            Step::Failed { line, cause } => {
                found = Some(Err(match cause {
                    Some(cause) => caused(line, cause),
                    None => line,
                }));
                return ControlFlow::Break(());
            }
            Step::Record(record) => record,
        };
        if record.id != id {
            return ControlFlow::Continue(());
        }
        found = Some(
            record
                .raw_values(index)
                .ok_or_else(|| format!("record {id} has no TemplateInstance at index {index}")),
        );
        ControlFlow::Break(())
    });
    found.unwrap_or_else(|| Err(format!("record_id {id} not found in {path}")))
}

/// A template GUID's normalized text.
fn guid_lower(g: &[u8; 16]) -> String {
    let mut text = Vec::new();
    write_guid_upper(&mut text, g);
    String::from_utf8_lossy(&text).to_ascii_lowercase()
}

/// The reference's `normalize_guid`: trimmed, braces stripped, lower case.
fn normalize_guid(s: &str) -> String {
    s.trim()
        .trim_start_matches('{')
        .trim_end_matches('}')
        .to_ascii_lowercase()
}

/// JSON substitution values as the reference converts them: null, bool, integer (i64, else
/// u64), float, string; anything else as its JSON text.
fn json_values(v: &serde_json::Value) -> Result<Vec<RawValue>, String> {
    use evtx_core::values_decode::ty;
    use serde_json::Value as J;
    let Some(items) = v.as_array() else {
        return Err("substitutions JSON must be an array".to_string());
    };
    let text = |s: &str| -> RawValue {
        let bytes = s.encode_utf16().flat_map(u16::to_le_bytes).collect();
        (ty::STRING, bytes)
    };
    Ok(items
        .iter()
        .map(|v| match v {
            J::Null => (ty::NULL, Vec::new()),
            J::Bool(b) => (ty::BOOL, u32::from(*b).to_le_bytes().to_vec()),
            J::Number(n) => {
                if let Some(i) = n.as_i64() {
                    (ty::I64, i.to_le_bytes().to_vec())
                } else if let Some(u) = n.as_u64() {
                    (ty::U64, u.to_le_bytes().to_vec())
                } else if let Some(f) = n.as_f64() {
                    (ty::F64, f.to_le_bytes().to_vec())
                } else {
                    (ty::NULL, Vec::new())
                }
            }
            J::String(s) => text(s),
            other => text(&other.to_string()),
        })
        .collect())
}
