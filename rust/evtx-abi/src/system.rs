//! The System fields of rendered JSON records, as columns: `evtx_parser_batch_system`.
//!
//! A binding that wants typed columns (provider, event id, level, channel, computer) would
//! otherwise search every record's text itself (Python: five regex passes, 0.37 s on 41,541
//! records). Here one forward scan per record walks `Event` → `System` and stops there, so the
//! cost is the System object's bytes only. The scan reads the rendered text, not the engine's
//! tree, so all three libraries (Zig: `zig/capi/system.zig`) give the same columns for the same
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
    /// `escaped`: the body has a `\\` (else it is copied as it is).
    fn push(&mut self, raw: Option<&[u8]>, escaped: bool) {
        match raw {
            Some(raw) if escaped => unescape_into(raw, &mut self.data),
            Some(raw) => self.data.extend_from_slice(raw),
            None => {}
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
        self.provider
            .push(found.provider, found.escapes & PROVIDER != 0);
        self.channel
            .push(found.channel, found.escapes & CHANNEL != 0);
        self.computer
            .push(found.computer, found.escapes & COMPUTER != 0);
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
    /// The `PROVIDER`, `CHANNEL`, `COMPUTER` bits of the strings that hold a `\\` (the
    /// others are copied without an unescaping pass).
    pub escapes: u8,
}

impl<'a> Found<'a> {
    /// Sets the string field `flag` (`PROVIDER`, `CHANNEL` or `COMPUTER`) to `value`, the raw
    /// body and whether it holds an escape.
    #[inline(always)]
    fn set(&mut self, flag: u8, value: Option<(&'a [u8], bool)>) {
        let field = match flag {
            PROVIDER => &mut self.provider,
            CHANNEL => &mut self.channel,
            _ => &mut self.computer,
        };
        *field = value.map(|(raw, _)| raw);
        let escaped = matches!(value, Some((_, true)));
        self.escapes = (self.escapes & !flag) | if escaped { flag } else { 0 };
    }
}

/// The System fields of one rendered JSON record (`-o json` with its banner line, or `jsonl`).
pub(crate) fn scan(text: &[u8]) -> Found<'_> {
    let mut found = Found::default();
    let Some(start) = text.iter().position(|&b| b == b'{') else {
        return found;
    };
    let mut s = Scanner {
        text,
        at: start,
        escaped: false,
    };
    // The first `Event` member and its first `System` member are the record's; the walk
    // stops right after System, so the rest of the record is not read. The engines' JSONL
    // starts every record with `EVENT_HEAD`: those bytes are the walk's whole way to System.
    let at_system = if text[start..].starts_with(EVENT_HEAD) {
        s.at = start + EVENT_HEAD.len();
        true
    } else {
        s.member(b"Event") == Some(true) && s.member(b"System") == Some(true)
    };
    if at_system {
        let _ = s.system(&mut found);
    }
    found
}

/// How the engines' JSONL begins a record, up to System's value: Event's first member is its
/// `#attributes` with the schema's namespace, then System (PERF.md P9: walking these 91 bytes
/// member by member cost 700 instructions a record).
const EVENT_HEAD: &[u8] = concat!(
    r##"{"Event":{"#attributes":{"xmlns":"##,
    r#""http://schemas.microsoft.com/win/2004/08/events/event"},"System":"#
)
.as_bytes();

/// A forward reader of JSON text, one pass, no closures (PERF.md P9: a closure-driven walk of
/// every member cost 7,160 instructions a record). Every method returns `None` on text that
/// is not JSON; what it read before stays read.
struct Scanner<'a> {
    text: &'a [u8],
    at: usize,
    /// A string read since `string_value` cleared it had an escape.
    escaped: bool,
}

impl<'a> Scanner<'a> {
    /// The next byte after whitespace, not consumed.
    #[inline(always)]
    fn peek(&mut self) -> Option<u8> {
        let b = *self.text.get(self.at)?;
        // JSONL has no whitespace between tokens: one test. (`-o json`'s indented text
        // takes the loop.)
        if b > b' ' {
            return Some(b);
        }
        self.skip_space()
    }

    #[inline(never)]
    fn skip_space(&mut self) -> Option<u8> {
        while let Some(&b) = self.text.get(self.at) {
            if !matches!(b, b' ' | b'\t' | b'\r' | b'\n') {
                return Some(b);
            }
            self.at += 1;
        }
        None
    }

    #[inline(always)]
    fn eat(&mut self, byte: u8) -> Option<()> {
        (self.peek()? == byte).then(|| self.at += 1)
    }

    /// The raw body of the string whose opening quote was just consumed; moves past its
    /// closing quote. Only `"` and `\\` matter inside, found by `quote_or_escape`.
    #[inline(always)]
    fn string_rest(&mut self) -> Option<&'a [u8]> {
        let start = self.at;
        loop {
            let at = self.at + quote_or_escape(self.text.get(self.at..)?)?;
            if self.text[at] == b'"' {
                self.at = at + 1;
                return Some(&self.text[start..at]);
            }
            // An escape: its next byte is never the string's end.
            self.escaped = true;
            self.at = at + 2;
        }
    }

    /// A member's key and its `:`.
    #[inline(always)]
    fn key(&mut self) -> Option<&'a [u8]> {
        self.eat(b'"')?;
        let key = self.string_rest()?;
        self.eat(b':')?;
        Some(key)
    }

    /// After a member's value: `true` at the next key, `false` past the object's `}`.
    #[inline(always)]
    fn next_member(&mut self) -> Option<bool> {
        let more = match self.peek()? {
            b',' => true,
            b'}' => false,
            _ => return None,
        };
        self.at += 1;
        Some(more)
    }

    /// Opens the object here: `true` at its first key, `false` past it when it is empty.
    #[inline(always)]
    fn open(&mut self) -> Option<bool> {
        self.eat(b'{')?;
        if self.peek()? == b'}' {
            self.at += 1;
            return Some(false);
        }
        Some(true)
    }

    /// At a value: `true` at the value of its first member `name` (one level deeper;
    /// record JSON has no duplicate keys, and the first is the Zig twin's too), `false` past
    /// the whole value when it is not an object or has no such member.
    #[inline(always)]
    fn member(&mut self, name: &[u8]) -> Option<bool> {
        if self.peek()? != b'{' {
            self.skip_value()?;
            return Some(false);
        }
        let mut more = self.open()?;
        while more {
            if self.key()? == name {
                return Some(true);
            }
            self.skip_value()?;
            more = self.next_member()?;
        }
        Some(false)
    }

    /// Skips one value of any type. A literal (number, true, false, null) is not checked.
    #[inline(always)]
    fn skip_value(&mut self) -> Option<()> {
        match self.peek()? {
            b'"' => {
                self.at += 1;
                self.string_rest()?;
            }
            b'{' | b'[' => {
                self.at += 1;
                self.close(1)?;
            }
            b'}' | b']' | b',' | b':' => return None,
            _ => {
                while let Some(&b) = self.text.get(self.at) {
                    if LITERAL_END[usize::from(b)] {
                        break;
                    }
                    self.at += 1;
                }
            }
        }
        Some(())
    }

    /// Moves past the end of the `depth` objects or arrays the scanner is in: one byte loop
    /// that counts brackets and jumps over strings (a `}` or `"` inside one is text).
    #[inline(always)]
    fn close(&mut self, mut depth: usize) -> Option<()> {
        debug_assert!(depth > 0);
        loop {
            let b = *self.text.get(self.at)?;
            self.at += 1;
            if b == b'"' {
                self.string_rest()?;
                continue;
            }
            // Bit 5 apart: `{` 0x7B and `[` 0x5B, `}` 0x7D and `]` 0x5D; no other byte folds
            // onto them.
            match b & !0x20 {
                0x5B => depth += 1,
                0x5D => {
                    depth -= 1;
                    if depth == 0 {
                        return Some(());
                    }
                }
                _ => {}
            }
        }
    }

    /// A string value's raw body and whether it has an escape, or `None` after skipping a
    /// value of another type.
    #[inline(always)]
    fn string_value(&mut self) -> Option<(&'a [u8], bool)> {
        if self.peek() == Some(b'"') {
            self.at += 1;
            self.escaped = false;
            let raw = self.string_rest()?;
            return Some((raw, self.escaped));
        }
        let _ = self.skip_value();
        None
    }

    /// A non-negative integer, written as a JSON number or as a string of ASCII digits.
    #[inline(always)]
    fn integer(&mut self) -> Option<u64> {
        let digits = if self.peek() == Some(b'"') {
            self.at += 1;
            self.string_rest()?
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

    /// At System's value: its members, the wanted ones read, the others skipped.
    #[inline(always)]
    fn system(&mut self, found: &mut Found<'a>) -> Option<()> {
        if self.peek()? != b'{' {
            return None;
        }
        let mut more = self.open()?;
        while more {
            let key = self.key()?;
            self.system_member(key, found)?;
            more = self.next_member()?;
        }
        Some(())
    }

    #[inline(always)]
    fn system_member(&mut self, key: &[u8], found: &mut Found<'a>) -> Option<()> {
        match key {
            b"Provider" => {
                if !self.member(b"#attributes")? {
                    return Some(());
                }
                if !self.member(b"Name")? {
                    return self.close(1);
                }
                found.set(PROVIDER, self.string_value());
                self.close(2)
            }
            b"Provider_attributes" => {
                if !self.member(b"Name")? {
                    return Some(());
                }
                found.set(PROVIDER, self.string_value());
                self.close(1)
            }
            b"EventID" => {
                let value = if self.peek() == Some(b'{') {
                    if self.member(b"#text")? {
                        let text = self.integer();
                        self.close(1)?;
                        text
                    } else {
                        None
                    }
                } else {
                    self.integer()
                };
                found.event_id = value.and_then(|v| u32::try_from(v).ok());
                Some(())
            }
            b"Level" => {
                found.level = self.integer().and_then(|v| u8::try_from(v).ok());
                Some(())
            }
            b"Channel" => {
                found.set(CHANNEL, self.string_value());
                Some(())
            }
            b"Computer" => {
                found.set(COMPUTER, self.string_value());
                Some(())
            }
            _ => self.skip_value(),
        }
    }
}

/// The bytes that end a literal (number, true, false, null) in `skip_value`: one table load a
/// byte instead of nine compares (PERF.md P9: −150 instructions a record).
const LITERAL_END: [bool; 256] = {
    let mut table = [false; 256];
    let ends = *b",}]:\" \t\r\n";
    let mut i = 0;
    while i < ends.len() {
        table[ends[i] as usize] = true;
        i += 1;
    }
    table
};

/// 16-byte blocks `quote_or_escape` tests inline before it calls `memchr2`: System's strings
/// are keys and short values (PERF.md P4: ~35 a record, `memchr2`'s ~54-instruction setup per
/// call was most of its cost; P9: GUIDs and times are 28-38 bytes).
const INLINE_BLOCKS: usize = 4;

/// The index of the first `"` or `\\` in `rest`.
#[inline(always)]
fn quote_or_escape(rest: &[u8]) -> Option<usize> {
    let mut at = 0;
    for block in rest.chunks_exact(16).take(INLINE_BLOCKS) {
        let hits = quote_or_escape_bits(block);
        if hits != 0 {
            return Some(at + hits.trailing_zeros() as usize);
        }
        at += 16;
    }
    memchr::memchr2(b'"', b'\\', &rest[at..]).map(|i| at + i)
}

/// Bit `i` set when `block[i]` is `"` or `\\`: two SSE2 compares and a `pmovmskb` (SSE2 is
/// part of x86-64, so no runtime check; safe Rust's byte loop compiles to ~60 instructions).
#[cfg(all(target_arch = "x86_64", target_feature = "sse2"))]
#[inline(always)]
fn quote_or_escape_bits(block: &[u8]) -> u32 {
    use std::arch::x86_64::{
        _mm_cmpeq_epi8, _mm_loadu_si128, _mm_movemask_epi8, _mm_or_si128, _mm_set1_epi8,
    };
    let block: &[u8; 16] = block.try_into().expect("a 16-byte block");
    // SAFETY: `block` is 16 readable bytes, exactly what the unaligned 128-bit load reads;
    // the other calls are SSE2 register operations, and SSE2 is enabled (the cfg above).
    unsafe {
        let v = _mm_loadu_si128(block.as_ptr().cast());
        let quote = _mm_cmpeq_epi8(v, _mm_set1_epi8(b'"' as i8));
        let escape = _mm_cmpeq_epi8(v, _mm_set1_epi8(b'\\' as i8));
        _mm_movemask_epi8(_mm_or_si128(quote, escape)) as u32
    }
}

/// The same bits from two 8-byte words (the SWAR zero-byte test), where SSE2 is not there;
/// also the safe path the SSE2 one is tested against.
#[cfg_attr(all(target_arch = "x86_64", target_feature = "sse2"), allow(dead_code))]
#[inline(always)]
fn quote_or_escape_bits_words(block: &[u8]) -> u32 {
    let mut bits = 0;
    for (i, word) in block.chunks_exact(8).take(2).enumerate() {
        let word = u64::from_le_bytes(word.try_into().unwrap_or_default());
        let hits = zero_bytes(word ^ splat(b'"')) | zero_bytes(word ^ splat(b'\\'));
        // Only the lowest hit of each word is exact (`zero_bytes`): keep that one.
        if hits != 0 {
            bits |= 1 << (i * 8 + hits.trailing_zeros() as usize / 8);
        }
    }
    bits
}

#[cfg(not(all(target_arch = "x86_64", target_feature = "sse2")))]
#[inline(always)]
fn quote_or_escape_bits(block: &[u8]) -> u32 {
    quote_or_escape_bits_words(block)
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

    #[test]
    fn sse2_bits_equal_the_word_bits_on_every_lane() {
        // The SSE2 block test against the safe SWAR one: the lowest bit (the first hit) is the
        // same for a `"` or `\\` on every lane, with neighbours one bit off and high bytes.
        for first in [b'"', b'\\'] {
            for at in 0..16 {
                for filler in [b'x', b'!', b'#', b'[', b']', 0xA2, 0xDC, 0x00, 0xFF] {
                    let mut block = [filler; 16];
                    block[at] = first;
                    if at + 5 < 16 {
                        block[at + 5] = if first == b'"' { b'\\' } else { b'"' };
                    }
                    let (sse, words) = (
                        quote_or_escape_bits(&block),
                        quote_or_escape_bits_words(&block),
                    );
                    assert_eq!(sse.trailing_zeros(), at as u32, "{block:?}");
                    assert_eq!(words.trailing_zeros(), at as u32, "{block:?}");
                }
            }
        }
        assert_eq!(quote_or_escape_bits(&[b'x'; 16]), 0);
        assert_eq!(quote_or_escape_bits_words(&[b'x'; 16]), 0);
    }

    /// Each case: a record's JSON and the fields (raw, still escaped) it must give. Shared
    /// with the Zig twin's test of the same name, case by case.
    const CASES: &[(&str, Found<'static>)] = &[
        // "System" and brackets inside strings, a System inside another member, fields of the
        // same names inside skipped members and after System.
        (
            concat!(
                r##"{"Event":{"#attributes":{"n":"\"System\":{\"Channel\":\"fake\"}}"},"##,
                r##""Other":{"System":{"Channel":"nested"}},"System":{"TimeCreated":"##,
                r##"{"#attributes":{"SystemTime":"}]}\"{["}},"Security":[{"a":"]"},[1,[2]],"##,
                r##""\\"],"Channel":"real","Execution":{"Channel":"x","Computer":"x"},"##,
                r##""Computer":"C\\\"}"},"EventData":{"Channel":"data","Level":1}}}"##,
            ),
            Found {
                provider: None,
                event_id: None,
                level: None,
                channel: Some(b"real"),
                computer: Some(br#"C\\\"}"#),
                escapes: COMPUTER,
            },
        ),
        // Keys in any order, EventID's #text before its #attributes, Provider's Name after
        // a nested Name of another member.
        (
            concat!(
                r##"{"Event":{"System":{"Computer":"H","Level":"2","EventID":{"#text":"4625","##,
                r##""#attributes":{"Qualifiers":"0"}},"Channel":"Ch","Provider":{"x":"##,
                r##"{"Name":"wrong"},"#attributes":{"Guid":"{G}","NameX":"x","Name":"Right"}}}}}"##,
            ),
            Found {
                provider: Some(b"Right"),
                event_id: Some(4625),
                level: Some(2),
                channel: Some(b"Ch"),
                computer: Some(b"H"),
                escapes: 0,
            },
        ),
        // separate_json_attributes: the attributes beside the element, which is "" or null.
        (
            concat!(
                r##"{"Event":{"System":{"Provider_attributes":{"Guid":"g","Name":"P"},"##,
                r##""Provider":null,"EventID_attributes":{"Qualifiers":16384},"EventID":7036,"##,
                r##""Level":4,"Channel":"System","Computer":"W"}}}"##,
            ),
            Found {
                provider: Some(b"P"),
                event_id: Some(7036),
                level: Some(4),
                channel: Some(b"System"),
                computer: Some(b"W"),
                escapes: 0,
            },
        ),
        // Non-ASCII and escapes kept raw; EventID without #text; a Provider without a Name.
        (
            concat!(
                r##"{"Event":{"System":{"Provider":{"#attributes":{"Guid":"g"}},"##,
                r##""EventID":{"#attributes":{"Qualifiers":1}},"Channel":"Журнал","##,
                r##""Computer":"ü\u00e9\\","Level":[1]}}}"##,
            ),
            Found {
                provider: None,
                event_id: None,
                level: None,
                channel: Some("Журнал".as_bytes()),
                computer: Some(r#"ü\u00e9\\"#.as_bytes()),
                escapes: COMPUTER,
            },
        ),
        // Empty objects and an Event without System.
        (r##"{"Event":{"System":{}}}"##, FOUND_NONE),
        (r##"{"Event":{}}"##, FOUND_NONE),
        (
            r##"{"Event":{"EventData":{"System":{"Level":1}}}}"##,
            FOUND_NONE,
        ),
        // Keys that only start with the name wanted, before it.
        (
            concat!(
                r##"{"Events":{"System":{"Level":1}},"Event":{"Systems":{"Level":3},"##,
                r##""System":{"Level":2,"EventID":{"#texts":5,"#text":6}}}}"##,
            ),
            Found {
                event_id: Some(6),
                level: Some(2),
                ..FOUND_NONE
            },
        ),
    ];

    const FOUND_NONE: Found<'static> = Found {
        provider: None,
        event_id: None,
        level: None,
        channel: None,
        computer: None,
        escapes: 0,
    };

    #[test]
    fn skips_strings_brackets_and_other_members_whatever_they_hold() {
        for (text, want) in CASES {
            assert_eq!(&scan(text.as_bytes()), want, "{text}");
            // As `-o json` prints it: a banner and the text indented.
            let pretty = format!("Record 1\n{}\n", indent(text));
            assert_eq!(&scan(pretty.as_bytes()), want, "{pretty}");
            // A record cut anywhere: no panic, and no field that was not in the whole text.
            for cut in 0..text.len() {
                let found = scan(&text.as_bytes()[..cut]);
                for (got, whole) in [
                    (found.provider, want.provider),
                    (found.channel, want.channel),
                    (found.computer, want.computer),
                ] {
                    assert!(got.is_none() || got == whole, "{cut} {text}");
                }
            }
        }
    }

    /// `text` as an indented JSON writer would print it: a newline and spaces after `{`, `[`
    /// and `,`, a space after `:`, outside strings only.
    fn indent(text: &str) -> String {
        let mut out = String::new();
        let (mut in_string, mut escaped) = (false, false);
        for c in text.chars() {
            out.push(c);
            if in_string {
                match (escaped, c) {
                    (true, _) => escaped = false,
                    (false, '\\') => escaped = true,
                    (false, '"') => in_string = false,
                    _ => {}
                }
                continue;
            }
            match c {
                '"' => in_string = true,
                '{' | '[' | ',' => out.push_str("\n  \t"),
                ':' => out.push_str(" \r"),
                _ => {}
            }
        }
        out
    }

    /// A small deterministic generator (xorshift64*), so the property test needs no crate.
    struct Rng(u64);

    impl Rng {
        fn below(&mut self, n: usize) -> usize {
            self.0 ^= self.0 >> 12;
            self.0 ^= self.0 << 25;
            self.0 ^= self.0 >> 27;
            (self.0.wrapping_mul(0x2545_F491_4F6C_DD1D) >> 33) as usize % n
        }
    }

    /// Raw JSON string bodies with what trips a scanner: quotes, backslashes, brackets,
    /// field names, non-ASCII, `\u` escapes, lengths around the 8- and 16-byte steps.
    fn body(rng: &mut Rng) -> String {
        const PIECES: [&str; 12] = [
            r#"\""#, r"\\", "}", "{", "]", "[", ",", ":", "System", "é€", r"\u00e9", "abcdefg",
        ];
        let mut s = String::new();
        for _ in 0..rng.below(7) {
            s.push_str(PIECES[rng.below(PIECES.len())]);
        }
        s
    }

    /// Any JSON value, nested `depth` levels at most.
    fn value(rng: &mut Rng, depth: usize) -> String {
        match rng.below(if depth == 0 { 4 } else { 6 }) {
            0 => format!("\"{}\"", body(rng)),
            1 => rng.below(100_000).to_string(),
            2 => ["null", "true", "false", "-1.5e3"][rng.below(4)].to_string(),
            3 => format!("\"{}\"", ["Channel", "System", "Level", "}"][rng.below(4)]),
            4 => {
                let items: Vec<String> = (0..rng.below(4)).map(|_| value(rng, depth - 1)).collect();
                format!("[{}]", items.join(","))
            }
            _ => {
                let names = ["Name", "#text", "Channel", "System", "Computer", "a\\\"b"];
                let members: Vec<String> = (0..rng.below(4))
                    .map(|_| format!("\"{}\":{}", names[rng.below(6)], value(rng, depth - 1)))
                    .collect();
                format!("{{{}}}", members.join(","))
            }
        }
    }

    #[test]
    fn random_systems_give_the_fields_they_were_made_with() {
        let mut rng = Rng(0x9E37_79B9_7F4A_7C15);
        for round in 0..3000 {
            let (provider, channel, computer) = (body(&mut rng), body(&mut rng), body(&mut rng));
            let (event_id, level) = (rng.below(1 << 20) as u32, rng.below(256) as u8);
            let mut members = vec![
                format!("\"Channel\":\"{channel}\""),
                format!("\"Computer\":\"{computer}\""),
                format!("\"Level\":{level}"),
                if rng.below(2) == 0 {
                    format!("\"EventID\":{event_id}")
                } else {
                    let q = value(&mut rng, 2);
                    format!("\"EventID\":{{\"#attributes\":{q},\"#text\":\"{event_id}\"}}")
                },
                format!(
                    "\"Provider\":{{\"#attributes\":{{\"Guid\":{},\"Name\":\"{provider}\"}}}}",
                    value(&mut rng, 2)
                ),
            ];
            for _ in 0..rng.below(8) {
                let names = [
                    "TimeCreated",
                    "Security",
                    "Execution",
                    "Keywords",
                    "Sys\\\"tem",
                ];
                let name = names[rng.below(names.len())];
                members.push(format!("\"{name}\":{}", value(&mut rng, 3)));
            }
            // Shuffle (Fisher-Yates): the fields in any order among the others.
            for i in (1..members.len()).rev() {
                members.swap(i, rng.below(i + 1));
            }
            let text = format!(
                "{{\"Event\":{{\"#attributes\":{},\"System\":{{{}}},\"EventData\":{}}}}}",
                value(&mut rng, 3),
                members.join(","),
                value(&mut rng, 3)
            );
            let want = Found {
                provider: Some(provider.as_bytes()),
                event_id: Some(event_id),
                level: Some(level),
                channel: Some(channel.as_bytes()),
                computer: Some(computer.as_bytes()),
                escapes: [
                    (PROVIDER, &provider),
                    (CHANNEL, &channel),
                    (COMPUTER, &computer),
                ]
                .iter()
                .filter(|(_, body)| body.contains('\\'))
                .fold(0, |bits, (flag, _)| bits | flag),
            };
            assert_eq!(scan(text.as_bytes()), want, "{round}: {text}");
            let pretty = indent(&text);
            assert_eq!(scan(pretty.as_bytes()), want, "{round}: {pretty}");
        }
    }
}
