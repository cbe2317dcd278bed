//! Record-by-record comparison of two outputs, sorted into categories.

use crate::parity::cli_output::{banner_id, split, Record};
use crate::run::excerpt;
use serde::Serialize;
use serde_json::Value;

/// Why two outputs differ. `ValueFormatting` and `Structure` split content differences: the
/// same shape with a different scalar, versus different keys, nesting or element layout.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Category {
    ValueFormatting,
    Structure,
    MissingRecord,
    ExtraRecord,
    ErrorRecords,
    Crash,
    Timeout,
    /// The outputs are not byte-identical in order (what failed: everything else only explains
    /// where). Never explained by a known gap.
    Bytes,
}

impl Category {
    pub fn name(self) -> &'static str {
        match self {
            Category::ValueFormatting => "value-formatting",
            Category::Structure => "structure",
            Category::MissingRecord => "missing-record",
            Category::ExtraRecord => "extra-record",
            Category::ErrorRecords => "error-records",
            Category::Crash => "crash",
            Category::Timeout => "timeout",
            Category::Bytes => "bytes",
        }
    }

    pub fn parse(name: &str) -> Option<Category> {
        ALL.iter().copied().find(|c| c.name() == name)
    }
}

pub const ALL: [Category; 8] = [
    Category::ValueFormatting,
    Category::Structure,
    Category::MissingRecord,
    Category::ExtraRecord,
    Category::ErrorRecords,
    Category::Crash,
    Category::Timeout,
    Category::Bytes,
];

/// One difference between the expected (left) and actual (right) output.
#[derive(Debug, Clone, Serialize)]
pub struct Difference {
    pub category: Category,
    /// The record's label (`record 42`, `line 7`), or empty for whole-run differences.
    pub record: String,
    /// The record id when known; known-gap entries match on it.
    pub record_id: Option<u64>,
    /// Where the two differ: a JSON path (`$.Event.System.EventID`) or an XML line number.
    pub at: String,
    pub expected: String,
    pub actual: String,
}

/// Compares two record lists. Banner modes are aligned by record id (with an occurrence count,
/// since wrapped logs may repeat ids); banner-less modes by position.
pub fn compare_records(
    expected: &[Record<'_>],
    actual: &[Record<'_>],
    json: bool,
) -> Vec<Difference> {
    let keyed = |records: &[Record<'_>]| -> Vec<(Option<u64>, usize)> {
        let mut seen = std::collections::HashMap::new();
        records
            .iter()
            .enumerate()
            .map(|(i, r)| match r.id {
                Some(id) => {
                    let n = seen.entry(id).or_insert(0usize);
                    *n += 1;
                    (Some(id), *n)
                }
                None => (None, i),
            })
            .collect()
    };
    let left_keys = keyed(expected);
    let right_keys = keyed(actual);
    let right_index: std::collections::HashMap<_, _> = right_keys
        .iter()
        .enumerate()
        .map(|(i, k)| (*k, i))
        .collect();
    let left_index: std::collections::HashMap<_, _> =
        left_keys.iter().enumerate().map(|(i, k)| (*k, i)).collect();

    let mut differences = Vec::new();
    for (i, key) in left_keys.iter().enumerate() {
        let left = &expected[i];
        match right_index.get(key) {
            None => differences.push(Difference {
                category: Category::MissingRecord,
                record: left.label(i),
                record_id: left.id,
                at: String::new(),
                expected: excerpt(left.text),
                actual: String::new(),
            }),
            Some(&j) if left.text != actual[j].text => {
                differences.push(content_difference(left, &actual[j], i, json))
            }
            Some(_) => {}
        }
    }
    for (j, key) in right_keys.iter().enumerate() {
        if !left_index.contains_key(key) {
            let right = &actual[j];
            differences.push(Difference {
                category: Category::ExtraRecord,
                record: right.label(j),
                record_id: right.id,
                at: String::new(),
                expected: String::new(),
                actual: excerpt(right.text),
            });
        }
    }
    differences
}

/// The first place, in order, where two whole outputs differ: text before the first record,
/// a record out of place, a record whose bytes differ (with its JSON path or XML line), or a
/// record missing or extra at the end. `None` when the bytes are equal.
pub fn ordered_difference(
    expected: &str,
    actual: &str,
    banner: bool,
    json: bool,
) -> Option<Difference> {
    if expected == actual {
        return None;
    }
    let bytes = |at: &str, x: String, y: String, record: String, record_id| Difference {
        category: Category::Bytes,
        record,
        record_id,
        at: at.to_string(),
        expected: x,
        actual: y,
    };
    let (left_pre, right_pre) = (preamble(expected, banner), preamble(actual, banner));
    if left_pre != right_pre {
        return Some(bytes(
            "before the first record",
            excerpt(left_pre),
            excerpt(right_pre),
            String::new(),
            None,
        ));
    }
    let left = split(expected, banner);
    let right = split(actual, banner);
    for (i, (x, y)) in left.iter().zip(&right).enumerate() {
        if x.id != y.id {
            return Some(bytes(
                &format!("position {}", i + 1),
                x.label(i),
                y.label(i),
                x.label(i),
                x.id,
            ));
        }
        if x.text != y.text {
            let (_, at, a, b) = if json && !banner {
                json_difference(x.text.trim_end_matches('\n'), y.text.trim_end_matches('\n'))
            } else if json {
                json_difference(x.text, y.text)
            } else {
                xml_difference(x.text, y.text)
            };
            if at.starts_with("$ (same value") || a == b {
                let at = first_byte_difference(x.text, y.text);
                return Some(bytes(
                    &format!("byte {at} of the record"),
                    around(x.text, at),
                    around(y.text, at),
                    x.label(i),
                    x.id,
                ));
            }
            return Some(bytes(&at, a, b, x.label(i), x.id));
        }
    }
    let n = left.len().min(right.len());
    Some(match (left.get(n), right.get(n)) {
        (Some(x), None) => bytes(
            "end of output",
            excerpt(x.text),
            format!("(ends after {n} records)"),
            x.label(n),
            x.id,
        ),
        (None, Some(y)) => bytes(
            "end of output",
            format!("(ends after {n} records)"),
            excerpt(y.text),
            y.label(n),
            y.id,
        ),
        // Same records, same preamble: cannot happen when the bytes differ, but say so.
        _ => {
            let at = first_byte_difference(expected, actual);
            bytes(
                &format!("byte {at}"),
                around(expected, at),
                around(actual, at),
                String::new(),
                None,
            )
        }
    })
}

/// Text before the first `Record N` banner (banner modes); none in jsonl, where every line is a
/// record.
fn preamble(stdout: &str, banner: bool) -> &str {
    if !banner {
        return "";
    }
    let mut offset = 0;
    for line in stdout.split_inclusive('\n') {
        if banner_id(line).is_some() {
            return &stdout[..offset];
        }
        offset += line.len();
    }
    stdout
}

fn content_difference(
    left: &Record<'_>,
    right: &Record<'_>,
    index: usize,
    json: bool,
) -> Difference {
    let (category, at, expected, actual) = if json {
        json_difference(left.text, right.text)
    } else {
        xml_difference(left.text, right.text)
    };
    Difference {
        category,
        record: left.label(index),
        record_id: left.id,
        at,
        expected,
        actual,
    }
}

/// The JSON path of the first difference. Values are compared in document order (the
/// reference keeps member order), so a reordered member is a structural difference.
pub fn json_difference(left: &str, right: &str) -> (Category, String, String, String) {
    let parsed = (
        serde_json::from_str::<Value>(left),
        serde_json::from_str::<Value>(right),
    );
    let (Ok(a), Ok(b)) = parsed else {
        return (
            Category::Structure,
            "$ (not valid JSON)".into(),
            excerpt(left),
            excerpt(right),
        );
    };
    let mut path = String::from("$");
    match first_json_difference(&a, &b, &mut path) {
        Some((category, x, y)) => (category, path, x, y),
        // Equal values with different bytes: escaping or number spelling.
        None => {
            let at = first_byte_difference(left, right);
            (
                Category::ValueFormatting,
                format!("$ (same value, bytes differ at {at})"),
                around(left, at),
                around(right, at),
            )
        }
    }
}

fn first_json_difference(
    a: &Value,
    b: &Value,
    path: &mut String,
) -> Option<(Category, String, String)> {
    match (a, b) {
        (Value::Object(x), Value::Object(y)) => {
            let keys_x: Vec<_> = x.keys().collect();
            let keys_y: Vec<_> = y.keys().collect();
            if keys_x != keys_y {
                let i = keys_x
                    .iter()
                    .zip(&keys_y)
                    .position(|(p, q)| p != q)
                    .unwrap_or(keys_x.len().min(keys_y.len()));
                return Some((
                    Category::Structure,
                    format!("keys {:?}", &keys_x[i..]),
                    format!("keys {:?}", &keys_y[i..]),
                ));
            }
            for (key, value) in x {
                let len = path.len();
                path.push('.');
                path.push_str(key);
                if let Some(found) = first_json_difference(value, &y[key], path) {
                    return Some(found);
                }
                path.truncate(len);
            }
            None
        }
        (Value::Array(x), Value::Array(y)) => {
            if x.len() != y.len() {
                return Some((
                    Category::Structure,
                    format!("{} items", x.len()),
                    format!("{} items", y.len()),
                ));
            }
            for (i, (p, q)) in x.iter().zip(y).enumerate() {
                let len = path.len();
                path.push_str(&format!("[{i}]"));
                if let Some(found) = first_json_difference(p, q, path) {
                    return Some(found);
                }
                path.truncate(len);
            }
            None
        }
        (Value::Object(_) | Value::Array(_), _) | (_, Value::Object(_) | Value::Array(_)) => {
            Some((
                Category::Structure,
                excerpt(&a.to_string()),
                excerpt(&b.to_string()),
            ))
        }
        _ if a != b => Some((Category::ValueFormatting, a.to_string(), b.to_string())),
        _ => None,
    }
}

/// The first differing XML line. Lines whose tags and attribute names agree (only text or
/// attribute values differ) are a value-formatting difference, anything else structure.
pub fn xml_difference(left: &str, right: &str) -> (Category, String, String, String) {
    let mut a = left.lines();
    let mut b = right.lines();
    let mut line = 1;
    loop {
        match (a.next(), b.next()) {
            (Some(x), Some(y)) if x == y => line += 1,
            (x, y) => {
                let (x, y) = (x.unwrap_or(""), y.unwrap_or(""));
                let category = if skeleton(x) == skeleton(y) && !x.is_empty() && !y.is_empty() {
                    Category::ValueFormatting
                } else {
                    Category::Structure
                };
                return (category, format!("line {line}"), excerpt(x), excerpt(y));
            }
        }
    }
}

/// An XML line with text content and attribute values blanked out.
fn skeleton(line: &str) -> String {
    let mut out = String::with_capacity(line.len());
    let (mut in_tag, mut in_quote) = (false, false);
    for c in line.chars() {
        match c {
            '<' if !in_quote => {
                in_tag = true;
                out.push(c);
            }
            '>' if !in_quote => {
                in_tag = false;
                out.push(c);
            }
            '"' if in_tag => {
                in_quote = !in_quote;
                out.push(c);
            }
            _ if in_tag && !in_quote => out.push(c),
            _ => {}
        }
    }
    out
}

fn first_byte_difference(a: &str, b: &str) -> usize {
    a.bytes()
        .zip(b.bytes())
        .position(|(x, y)| x != y)
        .unwrap_or(a.len().min(b.len()))
}

fn around(text: &str, at: usize) -> String {
    let mut start = at.saturating_sub(40);
    while !text.is_char_boundary(start) {
        start -= 1;
    }
    excerpt(&text[start..])
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn json_scalar_change_is_value_formatting_with_its_path() {
        let (cat, at, x, y) =
            json_difference(r#"{"E":{"A":1,"B":"x"}}"#, r#"{"E":{"A":1,"B":"y"}}"#);
        assert_eq!(
            (cat, at.as_str(), x.as_str(), y.as_str()),
            (Category::ValueFormatting, "$.E.B", "\"x\"", "\"y\"")
        );
    }

    #[test]
    fn json_member_change_is_structure() {
        let (cat, at, _, _) = json_difference(r#"{"E":{"A":1,"B":2}}"#, r#"{"E":{"A":1,"C":2}}"#);
        assert_eq!((cat, at.as_str()), (Category::Structure, "$.E"));
    }

    #[test]
    fn json_same_value_different_bytes_is_value_formatting() {
        let (cat, _, _, _) = json_difference(r#"{"a":"\u001F"}"#, r#"{"a":"\u001f"}"#);
        assert_eq!(cat, Category::ValueFormatting);
    }

    #[test]
    fn xml_text_change_is_value_formatting_and_tag_change_structure() {
        let a = "<E>\n  <A x=\"1\">t</A>\n</E>\n";
        assert_eq!(
            xml_difference(a, "<E>\n  <A x=\"2\">u</A>\n</E>\n").0,
            Category::ValueFormatting
        );
        assert_eq!(
            xml_difference(a, "<E>\n  <B x=\"1\">t</B>\n</E>\n").0,
            Category::Structure
        );
        assert_eq!(xml_difference(a, "<E>\n</E>\n").1, "line 2");
    }

    #[test]
    fn aligns_by_record_id_and_reports_missing_and_extra() {
        let left = split("Record 1\n{}\nRecord 2\n{}\n", true);
        let right = split("Record 2\n{}\nRecord 3\n{}\n", true);
        let diffs = compare_records(&left, &right, true);
        let cats: Vec<_> = diffs.iter().map(|d| (d.category, d.record_id)).collect();
        assert_eq!(
            cats,
            vec![
                (Category::MissingRecord, Some(1)),
                (Category::ExtraRecord, Some(3))
            ]
        );
    }
}
