//! The System fields of rendered JSON records, as columns: `evtx_parser_batch_system`.
//!
//! A binding that wants typed columns (provider, event id, level, channel, computer) would
//! otherwise search every record's text itself (Python: five regex passes, 0.37 s on 41,541
//! records). Here one forward scan per record walks `Event` → `System` and stops there, so the
//! cost is the System object's bytes only. The scan reads the rendered text, not the engine's
//! tree, so all three libraries (Zig: `zig/src/system.zig`) give the same columns for the same
//! bytes, and the reference checks both engines.
//!
//! What a field holds (the same as `json.loads(text)["Event"]["System"]` would give):
//! - provider: `Provider.#attributes.Name` (or `Provider_attributes.Name` with
//!   `separate_json_attributes`), a string;
//! - event_id: `EventID`, or `EventID.#text`, a non-negative integer (or a string of ASCII
//!   digits) up to `u32::MAX`;
//! - level: `Level`, the same, up to 255;
//! - channel, computer: `Channel`, `Computer`, strings.
//!
//! Anything else (missing, null, another type, out of range, malformed text) leaves the field
//! absent. Strings are JSON-unescaped; an escaped lone surrogate becomes U+FFFD.

use crate::abi::{
    EVTX_SYSTEM_CHANNEL as CHANNEL, EVTX_SYSTEM_COMPUTER as COMPUTER,
    EVTX_SYSTEM_EVENT_ID as EVENT_ID, EVTX_SYSTEM_LEVEL as LEVEL, EVTX_SYSTEM_PROVIDER as PROVIDER,
};

/// One string column: values back to back and `count + 1` offsets starting at 0.
#[derive(Debug, Default)]
pub(crate) struct Strings {
    pub data: Vec<u8>,
    pub offsets: Vec<u64>,
}

impl Strings {
    fn clear(&mut self) {
        self.data.clear();
        self.offsets.clear();
        self.offsets.push(0);
    }

    /// Appends a raw JSON string body (between the quotes), unescaped, or nothing.
    fn push(&mut self, raw: Option<&[u8]>) {
        if let Some(raw) = raw {
            unescape_into(raw, &mut self.data);
        }
        self.offsets.push(self.data.len() as u64);
    }
}

/// The storage behind `evtx_batch_system`. Invariant: every column has one value per entry
/// of the batch (the string offsets one more).
#[derive(Debug, Default)]
pub(crate) struct SystemColumns {
    pub provider: Strings,
    pub channel: Strings,
    pub computer: Strings,
    pub event_ids: Vec<u32>,
    pub levels: Vec<u8>,
    pub present: Vec<u8>,
}

impl SystemColumns {
    pub(crate) fn clear(&mut self) {
        self.provider.clear();
        self.channel.clear();
        self.computer.clear();
        self.event_ids.clear();
        self.levels.clear();
        self.present.clear();
    }

    /// Appends the fields of one entry: `text` is a record's rendered JSON, or `None` for an
    /// error entry (every field absent).
    pub(crate) fn push(&mut self, text: Option<&[u8]>) {
        let found = text.map(scan).unwrap_or_default();
        let mut present = 0;
        let mut bit = |flag: u8, on: bool| present |= if on { flag } else { 0 };
        bit(PROVIDER, found.provider.is_some());
        bit(EVENT_ID, found.event_id.is_some());
        bit(LEVEL, found.level.is_some());
        bit(CHANNEL, found.channel.is_some());
        bit(COMPUTER, found.computer.is_some());
        self.provider.push(found.provider);
        self.channel.push(found.channel);
        self.computer.push(found.computer);
        self.event_ids.push(found.event_id.unwrap_or(0));
        self.levels.push(found.level.unwrap_or(0));
        self.present.push(present);
        debug_assert_eq!(self.present.len() + 1, self.computer.offsets.len());
    }

    pub(crate) fn len(&self) -> usize {
        self.present.len()
    }
}

/// The fields found in one record, strings still escaped.
#[derive(Debug, Default, PartialEq, Eq)]
pub(crate) struct Found<'a> {
    pub provider: Option<&'a [u8]>,
    pub event_id: Option<u32>,
    pub level: Option<u8>,
    pub channel: Option<&'a [u8]>,
    pub computer: Option<&'a [u8]>,
}

/// The System fields of one rendered JSON record (`-o json` with its banner line, or `jsonl`).
pub(crate) fn scan(text: &[u8]) -> Found<'_> {
    let mut found = Found::default();
    let Some(start) = text.iter().position(|&b| b == b'{') else {
        return found;
    };
    let mut s = Scanner { text, at: start };
    // The walk stops (None) right after System: the rest of the record is not read.
    // The first `Event` member and its first `System` member are the record's (as the Zig
    // twin's walk takes them).
    let _ = s.members(|s, key| {
        if key != b"Event" {
            return s.skip_value();
        }
        s.object_field(b"System", |s| {
            if s.peek() == Some(b'{') {
                s.members(|s, key| system_member(s, key, &mut found))?;
            }
            None
        })?;
        None
    });
    found
}

fn system_member<'a>(s: &mut Scanner<'a>, key: &[u8], found: &mut Found<'a>) -> Option<()> {
    match key {
        b"Provider" => s.object_field(b"#attributes", |s| {
            s.object_field(b"Name", |s| {
                found.provider = s.string_value();
                Some(())
            })
        }),
        b"Provider_attributes" => s.object_field(b"Name", |s| {
            found.provider = s.string_value();
            Some(())
        }),
        b"EventID" => {
            let value = if s.peek() == Some(b'{') {
                let mut text = None;
                s.object_field(b"#text", |s| {
                    text = s.integer();
                    Some(())
                })?;
                text
            } else {
                s.integer()
            };
            found.event_id = value.and_then(|v| u32::try_from(v).ok());
            Some(())
        }
        b"Level" => {
            found.level = s.integer().and_then(|v| u8::try_from(v).ok());
            Some(())
        }
        b"Channel" => {
            found.channel = s.string_value();
            Some(())
        }
        b"Computer" => {
            found.computer = s.string_value();
            Some(())
        }
        _ => s.skip_value(),
    }
}

/// A forward reader of JSON text. Every method returns `None` on text that is not JSON.
struct Scanner<'a> {
    text: &'a [u8],
    at: usize,
}

impl<'a> Scanner<'a> {
    /// The next byte after whitespace, not consumed.
    fn peek(&mut self) -> Option<u8> {
        while let Some(&b) = self.text.get(self.at) {
            if !matches!(b, b' ' | b'\t' | b'\r' | b'\n') {
                return Some(b);
            }
            self.at += 1;
        }
        None
    }

    fn eat(&mut self, byte: u8) -> Option<()> {
        (self.peek()? == byte).then(|| self.at += 1)
    }

    /// A string's raw body, between its quotes. Only `"` and `\\` matter inside, so the plain
    /// bytes between them are skipped by `quote_or_escape` (a byte loop cost most of the scan).
    fn string(&mut self) -> Option<&'a [u8]> {
        self.eat(b'"')?;
        let start = self.at;
        loop {
            let at = self.at + quote_or_escape(self.text.get(self.at..)?)?;
            if self.text[at] == b'"' {
                self.at = at + 1;
                return Some(&self.text[start..at]);
            }
            // An escape: its next byte is never the string's end.
            self.at = at + 2;
        }
    }

    /// A string value's raw body, or `None` after skipping a value of another type.
    fn string_value(&mut self) -> Option<&'a [u8]> {
        if self.peek() == Some(b'"') {
            return self.string();
        }
        self.skip_value();
        None
    }

    /// A non-negative integer, written as a JSON number or as a string of ASCII digits.
    fn integer(&mut self) -> Option<u64> {
        let digits = if self.peek() == Some(b'"') {
            self.string()?
        } else {
            let start = self.at;
            self.skip_value()?;
            &self.text[start..self.at]
        };
        if digits.is_empty() || digits.len() > 19 || !digits.iter().all(u8::is_ascii_digit) {
            return None;
        }
        Some(digits.iter().fold(0, |n, &d| n * 10 + u64::from(d - b'0')))
    }

    /// Skips one value of any type.
    fn skip_value(&mut self) -> Option<()> {
        let mut depth = 0usize;
        loop {
            match self.peek()? {
                b'"' => {
                    self.string()?;
                }
                b'{' | b'[' => {
                    self.at += 1;
                    depth += 1;
                    continue;
                }
                b'}' | b']' => {
                    depth = depth.checked_sub(1)?;
                    self.at += 1;
                }
                b',' | b':' => {
                    if depth == 0 {
                        return None;
                    }
                    self.at += 1;
                    continue;
                }
                _ => {
                    // A literal: a number, true, false, null.
                    while let Some(&b) = self.text.get(self.at) {
                        if matches!(
                            b,
                            b',' | b'}' | b']' | b':' | b'"' | b' ' | b'\t' | b'\r' | b'\n'
                        ) {
                            break;
                        }
                        self.at += 1;
                    }
                }
            }
            if depth == 0 {
                return Some(());
            }
        }
    }

    /// Walks an object's members, calling `each` with the key; `each` consumes the value.
    fn members(&mut self, mut each: impl FnMut(&mut Self, &'a [u8]) -> Option<()>) -> Option<()> {
        self.eat(b'{')?;
        if self.peek()? == b'}' {
            self.at += 1;
            return Some(());
        }
        loop {
            let key = self.string()?;
            self.eat(b':')?;
            each(self, key)?;
            match self.peek()? {
                b',' => self.at += 1,
                b'}' => {
                    self.at += 1;
                    return Some(());
                }
                _ => return None,
            }
        }
    }

    /// In an object value, calls `on` for the first member `name` (record JSON has no
    /// duplicate keys; the Zig twin takes the first too); any other value is skipped.
    fn object_field(
        &mut self,
        name: &[u8],
        mut on: impl FnMut(&mut Self) -> Option<()>,
    ) -> Option<()> {
        if self.peek() != Some(b'{') {
            return self.skip_value();
        }
        let mut seen = false;
        self.members(|s, key| {
            if key == name && !seen {
                seen = true;
                on(s)
            } else {
                s.skip_value()
            }
        })
    }
}

/// 8-byte words `quote_or_escape` tests inline before it calls `memchr2`: most strings of
/// System are keys and short values (PERF.md P4: ~35 a record, `memchr2`'s ~54-instruction
/// setup per call was most of its cost), and two words hold nearly all of them.
const INLINE_WORDS: usize = 2;

/// The index of the first `"` or `\\` in `rest`.
#[inline(always)]
fn quote_or_escape(rest: &[u8]) -> Option<usize> {
    let mut at = 0;
    for _ in 0..INLINE_WORDS {
        let Some(word) = rest.get(at..at + 8) else {
            break;
        };
        let word = u64::from_le_bytes(word.try_into().unwrap_or_default());
        let hits = zero_bytes(word ^ splat(b'"')) | zero_bytes(word ^ splat(b'\\'));
        if hits != 0 {
            // Little-endian: the lowest set bit is the first byte in text order.
            return Some(at + hits.trailing_zeros() as usize / 8);
        }
        at += 8;
    }
    memchr::memchr2(b'"', b'\\', &rest[at..]).map(|i| at + i)
}

fn splat(byte: u8) -> u64 {
    u64::from(byte) * 0x0101_0101_0101_0101
}

/// The high bit of each zero byte of `word` set. Bytes above the first zero byte may be set
/// falsely (the borrow runs upward), never bytes below it, so the lowest set bit is exact; in
/// `a | b` it stays exact, as a false bit of either lies above that one's own true first zero.
fn zero_bytes(word: u64) -> u64 {
    word.wrapping_sub(splat(0x01)) & !word & splat(0x80)
}

/// Appends the JSON string body `raw`, unescaped, to `out` as UTF-8.
fn unescape_into(raw: &[u8], out: &mut Vec<u8>) {
    if !raw.contains(&b'\\') {
        out.extend_from_slice(raw);
        return;
    }
    let mut i = 0;
    while i < raw.len() {
        let b = raw[i];
        if b != b'\\' || i + 1 >= raw.len() {
            out.push(b);
            i += 1;
            continue;
        }
        let simple = match raw[i + 1] {
            b'n' => Some(b'\n'),
            b't' => Some(b'\t'),
            b'r' => Some(b'\r'),
            b'b' => Some(0x08),
            b'f' => Some(0x0c),
            b'u' => None,
            other => Some(other),
        };
        if let Some(byte) = simple {
            out.push(byte);
            i += 2;
            continue;
        }
        let unit = hex4(raw, i + 2);
        i += 6;
        let code = match unit {
            Some(high @ 0xD800..=0xDBFF) => match (raw.get(i..i + 2), hex4(raw, i + 2)) {
                (Some(b"\\u"), Some(low @ 0xDC00..=0xDFFF)) => {
                    i += 6;
                    0x10000 + ((high - 0xD800) << 10) + (low - 0xDC00)
                }
                _ => 0xFFFD,
            },
            Some(unit) => unit,
            None => 0xFFFD,
        };
        let c = char::from_u32(code).unwrap_or('\u{FFFD}');
        out.extend_from_slice(c.encode_utf8(&mut [0; 4]).as_bytes());
    }
}

fn hex4(raw: &[u8], at: usize) -> Option<u32> {
    let digits = raw.get(at..at + 4)?;
    let text = std::str::from_utf8(digits).ok()?;
    u32::from_str_radix(text, 16).ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn plain_record() {
        let text = concat!(
            r##"{"Event":{"#attributes":{"xmlns":"x"},"System":{"Provider":{"#attributes":"##,
            r##"{"Name":"Microsoft-Windows-Security-Auditing","Guid":"{5}"}},"EventID":4624,"##,
            r##""Level":0,"Channel":"Security","Computer":"DC01"},"EventData":{"A":"}"}}}"##,
        )
        .as_bytes();
        let found = scan(text);
        assert_eq!(
            found.provider,
            Some(&b"Microsoft-Windows-Security-Auditing"[..])
        );
        assert_eq!(found.event_id, Some(4624));
        assert_eq!(found.level, Some(0));
        assert_eq!(found.channel, Some(&b"Security"[..]));
        assert_eq!(found.computer, Some(&b"DC01"[..]));
    }

    #[test]
    fn qualified_event_id_banner_and_odd_values() {
        let text = b"Record \
            7\n{\"Event\":{\"System\":{\"EventID\":{\"#attributes\":{\"Qualifiers\":16384},\"#text\
            \":7036},\"Level\":\"4\",\"Channel\":null,\"Computer\":\"a\\\"b\\u00e9\\ud83d\\ude00\\\
            udc00\"}}}\n";
        let found = scan(text);
        assert_eq!(found.event_id, Some(7036));
        assert_eq!(found.level, Some(4));
        assert_eq!(found.channel, None);
        assert_eq!(found.provider, None);
        let mut out = Vec::new();
        unescape_into(found.computer.unwrap_or_default(), &mut out);
        assert_eq!(
            String::from_utf8(out).as_deref(),
            Ok("a\"b\u{e9}\u{1F600}\u{FFFD}")
        );
    }

    #[test]
    fn out_of_range_and_malformed() {
        let found = scan(
            concat!(
                r#"{"Event":{"System":{"EventID":4294967296,"Level":256,"#,
                r#""Provider_attributes":{"Name":"P"}}}}"#,
            )
            .as_bytes(),
        );
        assert_eq!(
            (found.event_id, found.level, found.provider),
            (None, None, Some(&b"P"[..]))
        );
        assert_eq!(
            scan(br#"{"Event":{"System":{"EventID":-1,"Level":1.5}}}"#),
            Found::default()
        );
        assert_eq!(
            scan(b"{\"Event\":{\"System\":{\"Computer\":\"cut"),
            Found::default()
        );
        assert_eq!(scan(b"<Event/>"), Found::default());
        assert_eq!(scan(b""), Found::default());
    }

    #[test]
    fn escaped_quote_at_every_place_around_the_search_steps() {
        // "Computer":"xx...x\"y" with the escape at 0..40: the body is everything between the
        // quotes, the escape included, whatever vector lane the `\` or the closing `"` is on.
        for n in 0..40 {
            let head = br#"{"Event":{"System":{"Computer":""#;
            let mut text = head.to_vec();
            text.extend_from_slice(&vec![b'x'; n]);
            text.extend_from_slice(br#"\"y","Level":3}}}"#);
            let found = scan(&text);
            let body = found.computer.unwrap_or_default();
            assert_eq!(body.len(), n + 3);
            assert_eq!(&body[n..], br#"\"y"#);
            assert_eq!(found.level, Some(3));
            // Cut inside the escape or before the closing quote: no field.
            assert_eq!(scan(&text[..head.len() + n + 1]), Found::default());
            assert_eq!(scan(&text[..head.len() + n + 3]), Found::default());
            // Cut anywhere in the string, so that the text ends inside or after an inline word.
            for cut in head.len()..head.len() + n + 4 {
                assert_eq!(scan(&text[..cut]), Found::default(), "{n} {cut}");
            }
            // No escape: the closing quote on every byte of the words and after them.
            let mut plain = head.to_vec();
            plain.extend_from_slice(&vec![b'x'; n]);
            plain.extend_from_slice(br#"","Level":3}}}"#);
            let found = scan(&plain);
            assert_eq!(found.computer.map(<[u8]>::len), Some(n));
            assert_eq!(found.level, Some(3));
            // An escaped backslash right before the closing quote, in one word or across two:
            // the quote after `\\` ends the string.
            let mut both = head.to_vec();
            both.extend_from_slice(&vec![b'x'; n]);
            both.extend_from_slice(br#"\\","Level":3}}}"#);
            let found = scan(&both);
            assert_eq!(found.computer.map(<[u8]>::len), Some(n + 2));
            assert_eq!(found.level, Some(3));
        }
    }

    #[test]
    fn word_test_finds_the_first_quote_or_escape_on_every_lane() {
        // Every position 0..24 of a `"` or `\\`, alone or with the other byte after it, and
        // bytes one off from them (`!` 0x21, `#` 0x23, `[` 0x5B, `]` 0x5D, 0xA2, 0xDC) around:
        // the index is the first one's, as a byte loop gives it.
        for first in [b'"', b'\\'] {
            for len in 0..24 {
                for at in 0..len {
                    for filler in [b'x', b'!', b'#', b'[', b']', 0xA2, 0xDC, 0x00] {
                        let mut rest = vec![filler; len];
                        rest[at] = first;
                        if at + 1 < len {
                            rest[at + 1] = if first == b'"' { b'\\' } else { b'"' };
                        }
                        assert_eq!(quote_or_escape(&rest), Some(at), "{rest:?}");
                    }
                }
                assert_eq!(quote_or_escape(&vec![b'x'; len]), None);
            }
        }
    }
}
