//! What the CLIs print, read back: stdout split into records, stderr into failed-record
//! entries, and the reference's stderr set beside ours (its backtrace out, a damaged side file's
//! error mapped to our line).
//!
//! Framing follows section 11.2 of the contract: modes with a banner print `Record N\n` before
//! each record; `jsonl` prints exactly one line per record and no banner.

/// One rendered record: its key (the banner's record id, or the line index for jsonl) and text.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Record<'a> {
    /// `Record N` banner id, or `None` in banner-less modes.
    pub id: Option<u64>,
    /// The record's bytes without its banner.
    pub text: &'a str,
}

impl Record<'_> {
    /// A short human label: `record 42`, or `line 7 (EventRecordID 42)` for jsonl.
    pub fn label(&self, index: usize) -> String {
        match self.id {
            Some(id) => format!("record {id}"),
            None => match event_record_id(self.text) {
                Some(id) => format!("line {} (EventRecordID {id})", index + 1),
                None => format!("line {}", index + 1),
            },
        }
    }
}

/// Splits stdout into records. `banner` says whether the mode prints `Record N` lines.
pub fn split(stdout: &str, banner: bool) -> Vec<Record<'_>> {
    if !banner {
        return stdout
            .split_inclusive('\n')
            .map(|line| Record {
                id: None,
                text: line,
            })
            .collect();
    }
    let mut records = Vec::new();
    let mut current: Option<(u64, usize)> = None;
    let mut offset = 0;
    for line in stdout.split_inclusive('\n') {
        if let Some(id) = banner_id(line) {
            if let Some((prev, start)) = current.take() {
                records.push(Record {
                    id: Some(prev),
                    text: &stdout[start..offset],
                });
            }
            current = Some((id, offset + line.len()));
        }
        offset += line.len();
    }
    if let Some((prev, start)) = current {
        records.push(Record {
            id: Some(prev),
            text: &stdout[start..],
        });
    }
    records
}

pub fn banner_id(line: &str) -> Option<u64> {
    let id = line.strip_prefix("Record ")?.strip_suffix('\n')?;
    // A carved record's banner (`--recover-records`).
    let id = id.strip_suffix(" (recovered)").unwrap_or(id);
    id.parse().ok()
}

fn event_record_id(text: &str) -> Option<&str> {
    let rest = &text[text.find("\"EventRecordID\":")? + "\"EventRecordID\":".len()..];
    let end = rest.find([',', '}'])?;
    Some(&rest[..end])
}

/// One failed chunk or record as our engines print it (shared-fixtures/README.md):
/// `error: <PATH>: chunk <C>, record <R>, offset 0x<O>: <KIND>[: <detail>]`.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, serde::Serialize)]
pub struct ErrorLine {
    pub chunk: String,
    pub record: String,
    pub offset: String,
    pub kind: String,
}

impl std::fmt::Display for ErrorLine {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "chunk {}, record {}, offset {}: {}",
            self.chunk, self.record, self.offset, self.kind
        )
    }
}

/// Parses our engines' stderr. Lines that are not error lines (warnings, notes) are ignored;
/// an `error:` line that does not follow the format is returned as `Err` so it gets noticed.
pub fn parse_error_lines(stderr: &str, path: &str) -> Vec<Result<ErrorLine, String>> {
    let prefix = format!("error: {path}: ");
    stderr
        .lines()
        .filter(|line| line.starts_with("error: "))
        .map(|line| {
            line.strip_prefix(prefix.as_str())
                .and_then(parse_error_line)
                .ok_or_else(|| format!("malformed error line: {line}"))
        })
        .collect()
}

fn parse_error_line(rest: &str) -> Option<ErrorLine> {
    let rest = rest.strip_prefix("chunk ")?;
    let (chunk, rest) = rest.split_once(", record ")?;
    let (record, rest) = rest.split_once(", offset ")?;
    let (offset, rest) = rest.split_once(": ")?;
    let kind = rest.split(": ").next()?;
    Some(ErrorLine {
        chunk: chunk.to_string(),
        record: record.to_string(),
        offset: offset.to_string(),
        kind: kind.to_string(),
    })
}

/// The first line where two engines' stderr differ: `(line number, left, right)`. Every line
/// is compared byte for byte, error lines included (one KIND and one DETAIL per fault,
/// shared-fixtures/README.md). `None` when they agree line for line.
pub fn first_stderr_difference(
    left: &str,
    right: &str,
    _path: &str,
) -> Option<(usize, String, String)> {
    let same = |x: &str, y: &str| x == y;
    let (mut a, mut b) = (left.lines(), right.lines());
    let mut line = 1;
    loop {
        match (a.next(), b.next()) {
            (None, None) => return None,
            (Some(x), Some(y)) if same(x, y) => line += 1,
            (x, y) => {
                return Some((
                    line,
                    x.unwrap_or("(no more lines)").to_string(),
                    y.unwrap_or("(no more lines)").to_string(),
                ))
            }
        }
    }
}

/// The failures the reference reported, one anyhow block per failure, each with the record id
/// its cause chain names (`Failed to parse record number N`), when it names one.
pub fn reference_failed_records(stderr: &str) -> Vec<Option<u64>> {
    const BLOCK: &str = "Failed to dump the next record";
    const NAMED: &str = "Failed to parse record number ";
    stderr
        .split(BLOCK)
        .skip(1)
        .map(|block| {
            let rest = &block[block.find(NAMED)? + NAMED.len()..];
            let end = rest
                .find(|c: char| !c.is_ascii_digit())
                .unwrap_or(rest.len());
            rest[..end].parse().ok()
        })
        .collect()
}

/// The reference's stderr without the backtrace anyhow adds when `RUST_BACKTRACE` is set (the
/// command line's cases compare it so too).
pub use evtx_fixture_gen::cli_cases::without_backtrace;

/// The reference's stderr with each damaged-side-file error replaced by the engine's line,
/// where the documented mapping holds (shared-fixtures/README.md, "Damaged side files"); any
/// other stderr is returned as it is, so a comparison shows what broke the rule.
///
/// The engines print `error: <PATH>: offset 0x<O>: <what>` where the reference prints
/// `Error: <text>` (`--mta`, `--wevt-cache`: the dump stops before its first record) or
/// `failed to extract WEVT_TEMPLATE from `<PATH>`: <text>` (`extract-wevt-templates`, one per
/// file, then the next). The mapping holds when the engine's line names the same file
/// (`side`, the file given to the option, for the dump; the one the reference names for a
/// PE), and its `<what>` is the reference's `<text>` with the path taken out (` for `P``,
/// ` `P`` before a colon, and `the file` for any other `P`): so the reference failed at the
/// same point and for the same reason. The offset is ours alone (the reference does not
/// always give one); the CLI tests check it against the fixture generator's.
pub fn side_file_lines(reference: &[u8], engine: &[u8], side: Option<&str>) -> Vec<u8> {
    let (theirs, ours) = (
        String::from_utf8_lossy(reference),
        String::from_utf8_lossy(engine),
    );
    if let (Some(side), Some(text)) = (side, theirs.strip_prefix("Error: ")) {
        // The dump's refusal: the reference's first line (its `Caused by:` chain aside).
        let first = text.lines().next().unwrap_or("");
        let line = ours.strip_suffix('\n').unwrap_or(&ours);
        if !line.contains('\n') && (maps(first, line, side) || maps(&crim(text), line, side)) {
            return engine.to_vec();
        }
        return reference.to_vec();
    }
    let mut ours_lines = ours.lines();
    let mut out = String::new();
    for line in theirs.lines() {
        let engine_line = ours_lines.next().unwrap_or("");
        let mapped = line
            .strip_prefix("failed to extract WEVT_TEMPLATE from `")
            .and_then(|rest| rest.split_once("`: "))
            .is_some_and(|(path, text)| maps(text, engine_line, path));
        out.push_str(if mapped { engine_line } else { line });
        out.push('\n');
    }
    if !theirs.ends_with('\n') && !theirs.is_empty() {
        out.pop();
    }
    out.into_bytes()
}

/// `apply-wevt-cache`'s manifest failure, `failed to parse CRIM/WEVT blob` over one cause (an
/// anyhow context), as the dump words it: `failed to parse CRIM/WEVT blob: <cause>`. Any other
/// text: empty (it maps to no line).
fn crim(text: &str) -> String {
    let context = "failed to parse CRIM/WEVT blob\n\nCaused by:\n    ";
    match text
        .strip_prefix(context)
        .map(|c| c.strip_suffix('\n').unwrap_or(c))
    {
        Some(cause) if !cause.contains('\n') => format!("failed to parse CRIM/WEVT blob: {cause}"),
        _ => String::new(),
    }
}

/// Whether `line` is `error: <path>: offset 0x<hex>: <what>` with `<what>` the reference's
/// `text` without `path`.
fn maps(text: &str, line: &str, path: &str) -> bool {
    let Some(rest) = line.strip_prefix(&format!("error: {path}: offset 0x")) else {
        return false;
    };
    let Some((hex, what)) = rest.split_once(": ") else {
        return false;
    };
    let quoted = format!("`{path}`");
    let expected = text
        .replace(&format!(" for {quoted}"), "")
        .replace(&format!(" {quoted}:"), ":")
        .replace(&quoted, "the file");
    !hex.is_empty() && hex.bytes().all(|b| b.is_ascii_hexdigit()) && what == expected
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stderr_difference_sees_a_detail_mismatch() {
        let line = |detail: &str| {
            format!("error: f.evtx: chunk 0, record 3, offset 0x1200: bad binxml: {detail}\n")
        };
        let (a, b) = (line("out of bounds"), line("invalid value type"));
        assert_eq!(first_stderr_difference(&a, &a, "f.evtx"), None);
        let (n, x, y) = first_stderr_difference(&a, &b, "f.evtx").unwrap();
        assert_eq!((n, x.as_str(), y.as_str()), (1, a.trim_end(), b.trim_end()));
    }

    #[test]
    fn splits_banner_modes_including_blank_line_separators() {
        let out = "Record 7\n<a/>\n\nRecord 9\n<b/>\n\n";
        let records = split(out, true);
        assert_eq!(records.len(), 2);
        assert_eq!(
            records[0],
            Record {
                id: Some(7),
                text: "<a/>\n\n"
            }
        );
        assert_eq!(
            records[1],
            Record {
                id: Some(9),
                text: "<b/>\n\n"
            }
        );
    }

    #[test]
    fn splits_jsonl_per_line_and_labels_with_event_record_id() {
        let out = "{\"EventRecordID\":5}\n{\"x\":1}\n";
        let records = split(out, false);
        assert_eq!(records.len(), 2);
        assert_eq!(records[0].label(0), "line 1 (EventRecordID 5)");
        assert_eq!(records[1].label(1), "line 2");
    }

    #[test]
    fn parses_error_lines_and_rejects_malformed_ones() {
        let stderr = "warning: x\nerror: a b.evtx: chunk 3, record 17, offset 0x2060: bad record \
            magic: detail\nerror: a b.evtx: nonsense\n";
        let lines = parse_error_lines(stderr, "a b.evtx");
        assert_eq!(lines.len(), 2);
        let first = lines[0].as_ref().unwrap();
        assert_eq!(
            first.to_string(),
            "chunk 3, record 17, offset 0x2060: bad record magic"
        );
        assert!(lines[1].is_err());
    }

    #[test]
    fn counts_reference_failure_blocks() {
        let stderr = "Failed to dump the next record.\n\nCaused by:\n 0: Failed to parse record \
            number 7\nFailed to dump the next record.\n";
        assert_eq!(reference_failed_records(stderr), vec![Some(7), None]);
    }

    #[test]
    fn a_dump_refusal_maps_to_the_engine_line_only_with_the_same_file_and_reason() {
        let reference = b"Error: invalid `.wevtcache` magic for `c.wevtcache`\n";
        let ours = b"error: c.wevtcache: offset 0x0: invalid `.wevtcache` magic\n";
        assert_eq!(side_file_lines(reference, ours, Some("c.wevtcache")), ours);
        // Another file, another reason, or a second line: the reference's bytes stay.
        for (side, engine) in [
            ("d.wevtcache", &ours[..]),
            (
                "c.wevtcache",
                b"error: c.wevtcache: offset 0x0: unsupported version\n",
            ),
            (
                "c.wevtcache",
                b"error: c.wevtcache: offset 0x0: invalid `.wevtcache` magic\nx\n",
            ),
        ] {
            assert_eq!(side_file_lines(reference, engine, Some(side)), reference);
        }
        let short = b"Error: I/O error while read header `c`: failed to fill whole buffer\n\n\
                      Caused by:\n    failed to fill whole buffer\n";
        let ours =
            b"error: c: offset 0x0: I/O error while read header: failed to fill whole buffer\n";
        assert_eq!(side_file_lines(short, ours, Some("c")), ours);
        let rest = b"Error: `.wevtcache` entry length 9 is larger than the rest of `c`\n";
        let ours = b"error: c: offset 0x10: `.wevtcache` entry length 9 is larger than the rest \
                     of the file\n";
        assert_eq!(side_file_lines(rest, ours, Some("c")), ours);
    }

    #[test]
    fn a_damaged_manifest_under_apply_maps_through_its_cause() {
        let reference = b"Error: failed to parse CRIM/WEVT blob\n\nCaused by:\n    invalid \
                          signature at offset 0: expected [1], got [2]\n";
        let ours = b"error: c: offset 0x19: failed to parse CRIM/WEVT blob: invalid signature \
                     at offset 0: expected [1], got [2]\n";
        assert_eq!(side_file_lines(reference, ours, Some("c")), ours);
        // Another cause, or a second cause in the chain: the reference's bytes stay.
        let other = b"error: c: offset 0x19: failed to parse CRIM/WEVT blob: size 1\n";
        assert_eq!(side_file_lines(reference, other, Some("c")), reference);
        let two = b"Error: failed to parse CRIM/WEVT blob\n\nCaused by:\n    invalid \
                    signature at offset 0: expected [1], got [2]\n    more\n";
        assert_eq!(side_file_lines(two, ours, Some("c")), two);
    }

    #[test]
    fn each_failed_pe_maps_line_by_line() {
        let reference = "failed to extract WEVT_TEMPLATE from `a.dll`: malformed PE file: x\n\
                         Error: extract-wevt-templates completed with 1 error(s)\n";
        let ours = "error: a.dll: offset 0x280: malformed PE file: x\n\
                    Error: extract-wevt-templates completed with 1 error(s)\n";
        let mapped = side_file_lines(reference.as_bytes(), ours.as_bytes(), None);
        assert_eq!(mapped, ours.as_bytes());
        let other = ours.replace("a.dll", "b.dll");
        let kept = side_file_lines(reference.as_bytes(), other.as_bytes(), None);
        assert_eq!(kept, reference.as_bytes());
    }
}
