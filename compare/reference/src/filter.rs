//! The record filters of `evtx_options` version 1 for the reference, decided from the text the
//! evtx crate rendered, since the crate decides nothing before rendering. So libevtx_ref is a
//! third, independent opinion in abi-parity: the engines read the parsed record
//! (`rust/evtx-core/src/filter.rs`, `zig/src/filter.zig`), this reads its output, as
//! `compare/filter_oracle.py` reads the CLI's (the rules: `shared-fixtures/README.md`,
//! "Filters"). A field is the text the record's JSON shows for it (`serde_json`), or in XML
//! the text of the first such element or attribute in `<System>`, unescaped.

use evtx_abi::abi::evtx_format;
use evtx_abi::front::{Filter, Settings};

/// A run's filter and how its records are rendered.
pub(crate) struct TextFilter {
    filter: Filter,
    json: bool,
    separate: bool,
}

impl TextFilter {
    pub(crate) fn new(settings: &Settings) -> TextFilter {
        TextFilter {
            filter: settings.filter.clone(),
            json: settings.format != evtx_format::Xml,
            separate: settings.separate_json_attributes,
        }
    }

    /// Whether the filter keeps every record.
    pub(crate) fn is_empty(&self) -> bool {
        self.filter.is_empty()
    }

    /// Whether the filter keeps the record rendered as `data` (banner included, if any).
    pub(crate) fn keeps(&self, data: &[u8]) -> bool {
        self.filter.is_empty() || keeps(&self.filter, data, self.json, self.separate)
    }
}

/// The five `System` fields a filter reads, as text; `None` where the record has none.
#[derive(Debug, Default, PartialEq, Eq)]
struct Fields {
    event_id: Option<String>,
    level: Option<String>,
    provider: Option<String>,
    channel: Option<String>,
    time: Option<String>,
}

/// Whether `filter` keeps the record rendered as `data` (banner included, if any).
fn keeps(filter: &Filter, data: &[u8], json: bool, separate: bool) -> bool {
    let fields = if json {
        json_fields(data, separate)
    } else {
        xml_fields(data)
    };
    let Some(f) = fields else {
        return filter.is_empty();
    };
    let in_ranges = |text: &Option<String>, ranges: &[(u32, u32)]| {
        ranges.is_empty()
            || digits(text.as_deref()).is_some_and(|n| {
                ranges
                    .iter()
                    .any(|&(a, b)| u64::from(a) <= n && n <= u64::from(b))
            })
    };
    let named = |text: &Option<String>, names: &[String]| {
        names.is_empty()
            || text
                .as_deref()
                .is_some_and(|t| names.iter().any(|n| n.eq_ignore_ascii_case(t)))
    };
    let timed = || {
        if filter.since.is_none() && filter.until.is_none() {
            return true;
        }
        let Some(t) = f.time.as_deref().and_then(ticks) else {
            return false;
        };
        filter.since.is_none_or(|s| s <= t) && filter.until.is_none_or(|u| t < u)
    };
    in_ranges(&f.event_id, &filter.event_ids)
        && in_ranges(&f.level, &filter.levels)
        && named(&f.provider, &filter.providers)
        && named(&f.channel, &filter.channels)
        && timed()
}

/// One or more ASCII digits as a number (saturating), else `None`.
fn digits(text: Option<&str>) -> Option<u64> {
    let text = text.filter(|t| !t.is_empty() && t.bytes().all(|c| c.is_ascii_digit()))?;
    Some(text.bytes().fold(0u64, |n, c| {
        n.saturating_mul(10).saturating_add(u64::from(c - b'0'))
    }))
}

/// A record's text without its `Record N` banner line.
fn body(data: &[u8]) -> &[u8] {
    match data.starts_with(b"Record ") {
        true => data
            .iter()
            .position(|&b| b == b'\n')
            .map_or(&[][..], |n| &data[n + 1..]),
        false => data,
    }
}

/// The fields of a JSON record, `None` without `Event.System`.
fn json_fields(data: &[u8], separate: bool) -> Option<Fields> {
    let value: serde_json::Value = serde_json::from_slice(body(data)).ok()?;
    let system = value.get("Event")?.get("System")?.as_object()?;
    // The text JSON shows for a scalar: a string (not empty), an integer's digits.
    let scalar = |v: Option<&serde_json::Value>| match v? {
        serde_json::Value::String(s) if !s.is_empty() => Some(s.clone()),
        serde_json::Value::Number(n) if n.is_i64() || n.is_u64() => Some(n.to_string()),
        _ => None,
    };
    let text = |name: &str| {
        let v = system.get(name);
        scalar(match v {
            Some(serde_json::Value::Object(o)) => o.get("#text"),
            other => other,
        })
    };
    let attribute = |element: &str, name: &str| {
        let attributes = match separate {
            true => system.get(&format!("{element}_attributes")),
            false => system.get(element).and_then(|e| e.get("#attributes")),
        };
        scalar(attributes?.as_object()?.get(name))
    };
    Some(Fields {
        event_id: text("EventID"),
        level: text("Level"),
        provider: attribute("Provider", "Name"),
        channel: text("Channel"),
        time: attribute("TimeCreated", "SystemTime"),
    })
}

/// The fields of an XML record, `None` unless its root is `Event` with a `System` element.
fn xml_fields(data: &[u8]) -> Option<Fields> {
    let text = std::str::from_utf8(body(data)).ok()?;
    let mut rest = text;
    if rest.starts_with("<?xml") {
        rest = &rest[rest.find("?>\n")? + 3..];
    }
    while rest.starts_with("<!--") {
        rest = &rest[rest.find("-->\n")? + 4..];
    }
    let after = rest.strip_prefix("<Event")?;
    if !after.starts_with(|c: char| c == '>' || c.is_ascii_whitespace()) {
        return None;
    }
    let start = text.find("<System>")? + "<System>".len();
    let system = &text[start..start + text[start..].find("</System>")?];
    Some(Fields {
        event_id: element(system, "EventID"),
        level: element(system, "Level"),
        provider: attribute(system, "Provider", "Name"),
        channel: element(system, "Channel"),
        time: attribute(system, "TimeCreated", "SystemTime"),
    })
}

/// The unescaped text of the first `<name ...>text</name>` holding text only.
fn element(system: &str, name: &str) -> Option<String> {
    let open = format!("<{name}");
    let close = format!("</{name}>");
    let mut at = 0;
    while let Some(hit) = system[at..].find(&open) {
        let tag = at + hit + open.len();
        at = tag;
        let rest = &system[tag..];
        let content = match rest.chars().next() {
            Some('>') => &rest[1..],
            Some(c) if c.is_ascii_whitespace() => &rest[rest.find('>')? + 1..],
            _ => continue,
        };
        let end = content.find('<').unwrap_or(content.len());
        if content[end..].starts_with(&close) {
            return unescape(&content[..end]).filter(|t| !t.is_empty());
        }
    }
    None
}

/// The unescaped value of attribute `attr` in the first `<name ...>` tag that has it.
fn attribute(system: &str, name: &str, attr: &str) -> Option<String> {
    let open = format!("<{name}");
    let key = format!("{attr}=\"");
    let mut at = 0;
    while let Some(hit) = system[at..].find(&open) {
        let tag = at + hit + open.len();
        at = tag;
        if !system[tag..].starts_with(|c: char| c.is_ascii_whitespace()) {
            continue;
        }
        let head = &system[tag..tag + system[tag..].find('>').unwrap_or(system.len() - tag)];
        let mut from = 0;
        while let Some(k) = head[from..].find(&key) {
            let k = from + k;
            from = k + 1;
            let word = |c: char| c.is_alphanumeric() || c == '_';
            if head[..k].chars().next_back().is_some_and(word) {
                continue;
            }
            let value = &system[tag + k + key.len()..];
            let value = &value[..value.find('"')?];
            return unescape(value).filter(|t| !t.is_empty());
        }
    }
    None
}

/// XML's five named entities and character references, as the renderer escapes.
fn unescape(text: &str) -> Option<String> {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(amp) = rest.find('&') {
        out.push_str(&rest[..amp]);
        rest = &rest[amp..];
        let semi = rest.find(';');
        let entity = semi.map(|s| &rest[1..s]);
        let c = match entity {
            Some("amp") => Some('&'),
            Some("lt") => Some('<'),
            Some("gt") => Some('>'),
            Some("quot") => Some('"'),
            Some("apos") => Some('\''),
            Some(e) if e.starts_with("#x") => u32::from_str_radix(&e[2..], 16)
                .ok()
                .and_then(char::from_u32),
            Some(e) if e.starts_with('#') => e[1..].parse().ok().and_then(char::from_u32),
            _ => None,
        };
        match (c, semi) {
            (Some(c), Some(s)) => {
                out.push(c);
                rest = &rest[s + 1..];
            }
            _ => {
                out.push('&');
                rest = &rest[1..];
            }
        }
    }
    out.push_str(rest);
    Some(out)
}

/// An RFC 3339 time (`YYYY-MM-DDTHH:MM:SS[.F]` with 1-7 fraction digits, `Z` or `±HH:MM`) as
/// FILETIME ticks; `None` for anything else or before 1601.
fn ticks(text: &str) -> Option<u64> {
    let b = text.as_bytes();
    let num = |from: usize, n: usize| -> Option<i64> {
        let part = b.get(from..from + n)?;
        part.iter().try_fold(0i64, |acc, &c| {
            c.is_ascii_digit().then(|| acc * 10 + i64::from(c - b'0'))
        })
    };
    let sep = |at: usize, set: &[u8]| b.get(at).is_some_and(|c| set.contains(c));
    if !(sep(4, b"-") && sep(7, b"-") && sep(10, b"Tt") && sep(13, b":") && sep(16, b":")) {
        return None;
    }
    let (y, mo, d) = (num(0, 4)?, num(5, 2)?, num(8, 2)?);
    let (h, mi, s) = (num(11, 2)?, num(14, 2)?, num(17, 2)?);
    let mut at = 19;
    let mut fraction = 0;
    if sep(at, b".") {
        let n = b[at + 1..]
            .iter()
            .take_while(|c| c.is_ascii_digit())
            .count();
        if !(1..=7).contains(&n) {
            return None;
        }
        fraction = num(at + 1, n)? * 10i64.pow(7 - n as u32);
        at += 1 + n;
    }
    let offset = match b.get(at..)? {
        [b'Z' | b'z'] => 0,
        [sign @ (b'+' | b'-'), _, _, b':', _, _] => {
            let (oh, om) = (num(at + 1, 2)?, num(at + 4, 2)?);
            if oh > 23 || om > 59 {
                return None;
            }
            (oh * 60 + om) * if *sign == b'+' { 1 } else { -1 }
        }
        _ => return None,
    };
    let leap = y % 4 == 0 && (y % 100 != 0 || y % 400 == 0);
    let month_days = [
        31,
        28 + i64::from(leap),
        31,
        30,
        31,
        30,
        31,
        31,
        30,
        31,
        30,
        31,
    ];
    if !(1..=12).contains(&mo) || d < 1 || d > month_days[(mo - 1) as usize] {
        return None;
    }
    if h > 23 || mi > 59 || s > 59 {
        return None;
    }
    // Days from 1601-01-01: whole years, then this year's months.
    let years = y - 1601;
    let leaps = |y: i64| y / 4 - y / 100 + y / 400;
    let mut days = years * 365 + leaps(y - 1) - leaps(1600);
    days += month_days[..(mo - 1) as usize].iter().sum::<i64>() + d - 1;
    let seconds = days * 86_400 + h * 3_600 + mi * 60 + s - offset * 60;
    u64::try_from(seconds * 10_000_000 + fraction).ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn times_are_filetime_ticks() {
        assert_eq!(ticks("1601-01-01T00:00:00Z"), Some(0));
        // 2024-05-01T08:00:00Z, as `date -d 2024-05-01T08:00:00Z +%s` plus 11644473600 s.
        assert_eq!(
            ticks("2024-05-01T08:00:00.5Z"),
            Some((1_714_550_400 + 11_644_473_600) * 10_000_000 + 5_000_000)
        );
        assert_eq!(
            ticks("2024-05-01T10:00:00+02:00"),
            ticks("2024-05-01T08:00:00Z")
        );
        assert_eq!(ticks("1601-01-01T00:00:00+00:01"), None);
        assert_eq!(ticks("2024-02-30T00:00:00Z"), None);
        assert_eq!(ticks("2024-05-01T08:00:00.12345678Z"), None);
        assert_eq!(ticks("2024-05-01 08:00:00Z"), None);
    }

    #[test]
    fn fields_of_both_texts() {
        let xml = "Record 1\n<?xml version=\"1.0\" encoding=\"utf-8\"?>\n<Event xmlns=\"x\">\n\
                   <System><Provider Name=\"A&amp;B\" Guid=\"g\"/><EventID Qualifiers=\"16384\">\
                   4624</EventID><Level>0</Level><TimeCreated SystemTime=\"2024-05-01T08:00:00Z\"\
                   /><Channel>Security</Channel></System></Event>\n\n";
        let want = Fields {
            event_id: Some("4624".into()),
            level: Some("0".into()),
            provider: Some("A&B".into()),
            channel: Some("Security".into()),
            time: Some("2024-05-01T08:00:00Z".into()),
        };
        assert_eq!(xml_fields(xml.as_bytes()), Some(want));
        let json = r##"{"Event":{"System":{"Provider":{"#attributes":{"Name":"A&B"}},
            "EventID":{"#attributes":{"Qualifiers":16384},"#text":4624},"Level":0,
            "TimeCreated":{"#attributes":{"SystemTime":"2024-05-01T08:00:00Z"}},
            "Channel":"Security"}}}"##;
        assert_eq!(
            json_fields(json.as_bytes(), false),
            xml_fields(xml.as_bytes())
        );
        assert_eq!(json_fields(b"{\"Event\":{}}", false), None);
        let filter = Filter {
            event_ids: vec![(4624, 4625)],
            providers: vec!["a&b".into()],
            ..Filter::default()
        };
        assert!(keeps(&filter, json.as_bytes(), true, false));
        assert!(!keeps(&filter, b"{\"Event\":{}}", true, false));
    }
}
