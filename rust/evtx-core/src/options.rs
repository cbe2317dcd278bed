//! Rendering options, with `evtx_dump`'s defaults (contract section 11).

use encoding_rs::Encoding;

use crate::limits::THREADS_MAX;

/// Output format (`-o`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Format {
    /// XML, the default.
    #[default]
    Xml,
    /// Compact JSON, one record per line after a `Record N` banner.
    Json,
    /// Compact JSON, one line per record, never a banner.
    Jsonl,
}

/// What to render and how. `Default` matches `evtx_dump` without options.
#[derive(Debug, Clone)]
pub struct Options {
    /// Output format.
    pub format: Format,
    /// Indent XML (`--no-indent` clears it). No effect on JSON.
    pub indent: bool,
    /// `--separate-json-attributes`.
    pub separate_json_attributes: bool,
    /// Print the `Record N` banner (`--dont-show-record-number` clears it). Ignored for JSONL.
    pub show_record_number: bool,
    /// `--validate-checksums`.
    pub validate_checksums: bool,
    /// Code page of AnsiString values (`--ansi-codec`), default windows-1252.
    pub ansi_codec: &'static Encoding,
    /// `--events`: only records whose header ID is in one of these inclusive ranges.
    pub event_ranges: Option<Vec<(u64, u64)>>,
    /// `--event-id`, `--provider`, `--channel`, `--level`, `--since`, `--until`: only the
    /// records whose `System` fields it keeps (`crate::filter`); empty by default.
    pub filter: crate::filter::Filter,
    /// Worker threads; 0 = one per CPU, 1 = render inline on the caller's thread.
    pub threads: usize,
    /// `--recover-records`: also render records carved from unallocated chunk space (5.4).
    pub recover_records: bool,
    /// `--mta FILE`: localized strings added to each record as `RenderingInfo` (see `mta`).
    pub mta: Option<std::sync::Arc<crate::mta::MtaFile>>,
    /// `--wevt-cache FILE`: provider templates for broken or missing definitions (see
    /// `wevt_cache`).
    pub wevt_cache: Option<std::sync::Arc<crate::wevt_cache::WevtCache>>,
    /// `--provenance`: each record's text gains where it came from, the input named as here
    /// (see `provenance`).
    pub provenance: Option<std::sync::Arc<crate::provenance::Provenance>>,
}

impl Default for Options {
    fn default() -> Self {
        Options {
            format: Format::Xml,
            indent: true,
            separate_json_attributes: false,
            show_record_number: true,
            validate_checksums: false,
            ansi_codec: encoding_rs::WINDOWS_1252,
            event_ranges: None,
            filter: crate::filter::Filter::default(),
            threads: 0,
            recover_records: false,
            mta: None,
            wevt_cache: None,
            provenance: None,
        }
    }
}

impl Options {
    /// Whether the `Record N` banner is printed.
    pub fn banner(&self) -> bool {
        self.show_record_number && self.format != Format::Jsonl
    }

    /// Whether record `id` passes the `--events` filter.
    pub fn wants_record(&self, id: u64) -> bool {
        match &self.event_ranges {
            None => true,
            Some(ranges) => ranges.iter().any(|&(a, b)| a <= id && id <= b),
        }
    }

    /// The effective number of worker threads, at most [`THREADS_MAX`].
    pub fn effective_threads(&self) -> usize {
        let n = match self.threads {
            0 => std::thread::available_parallelism().map_or(1, |n| n.get()),
            n => n,
        };
        n.min(THREADS_MAX)
    }
}

/// Parses an `--events` value: comma-separated `A` or `A-B` decimal ranges (inclusive), as
/// `evtx_dump` does: no spaces, an optional `+`, and `A-B` with `A > B` is accepted and matches
/// nothing.
pub fn parse_event_ranges(text: &str) -> Result<Vec<(u64, u64)>, String> {
    let mut ranges = Vec::new();
    for part in text.split(',') {
        let bad = || format!("Expected range to be a positive number, got: {part}");
        let (a, b) = part.split_once('-').unwrap_or((part, part));
        let a: u64 = a.parse().map_err(|_| bad())?;
        let b: u64 = b.parse().map_err(|_| bad())?;
        ranges.push((a, b));
    }
    Ok(ranges)
}

/// Looks up an ASCII-compatible WHATWG encoding label (`--ansi-codec`); the errors are the
/// reference's words (clap prints them after `invalid value ...`).
pub fn parse_ansi_codec(label: &str) -> Result<&'static Encoding, String> {
    match Encoding::for_label(label.trim().as_bytes()) {
        Some(e) if e.is_ascii_compatible() => Ok(e),
        Some(_) => Err(format!(
            "`{label}` is not an ASCII-compatible encoding; ANSI strings cannot be UTF-16"
        )),
        None => Err(format!(
            "unknown encoding `{label}`; expected an Encoding Standard label such as windows-1252"
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ranges() {
        assert_eq!(parse_event_ranges("1-3,5").unwrap(), vec![(1, 3), (5, 5)]);
        assert!(parse_event_ranges("1-").is_err());
        assert!(parse_event_ranges("-2").is_err());
        assert!(parse_event_ranges("x").is_err());
        assert!(parse_event_ranges(" 1").is_err());
        assert_eq!(parse_event_ranges("5-3").unwrap(), vec![(5, 3)]);
        let o = Options {
            event_ranges: Some(vec![(1, 3), (5, 5)]),
            ..Options::default()
        };
        assert!(o.wants_record(2) && o.wants_record(5) && !o.wants_record(4));
    }

    #[test]
    fn codecs() {
        assert_eq!(
            parse_ansi_codec("latin1").unwrap(),
            encoding_rs::WINDOWS_1252
        );
        assert!(parse_ansi_codec("utf-16le").is_err());
        assert!(parse_ansi_codec("nope").is_err());
    }

    #[test]
    fn defaults_match_evtx_dump() {
        let o = Options::default();
        assert_eq!(o.format, Format::Xml);
        assert!(o.indent && o.show_record_number && !o.validate_checksums);
        assert_eq!(o.threads, 0);
    }
}
