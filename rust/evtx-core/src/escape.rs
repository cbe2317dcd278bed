//! Fused UTF-16LE → escaped UTF-8 writers (contract section 8), and the same escapes for UTF-8
//! text (ANSI strings, resolved references).
//!
//! Every writer takes raw little-endian UTF-16 bytes (even length, already cut at the first NUL
//! by the caller) and appends to the output buffer in one pass: no intermediate `String`.
//! Lone surrogates become `_` (XML) or U+FFFD (JSON, raw text).

use crate::simd;

/// Escape mode of a UTF-16 or UTF-8 string (`as u8` numbers the writer's copies, `mode_of`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[repr(u8)]
pub enum Mode {
    /// XML element text: `& < >`, controls → `_`.
    XmlText,
    /// XML attribute value: as text plus `" '`.
    XmlAttr,
    /// JSON string contents, `\u00XX` with uppercase hex (UTF-16 sources).
    JsonUpper,
    /// JSON string contents, `\u00xx` with lowercase hex (ANSI and reference sources).
    JsonLower,
    /// CDATA / PI data: no escaping.
    Raw,
}

/// Action for each ASCII byte in each mode: 0 = copy, else the escape class.
const fn ascii_table(mode: u8) -> [u8; 128] {
    let mut t = [0u8; 128];
    let mut c = 0;
    while c < 128 {
        let b = c as u8;
        t[c] = match mode {
            // XML text / attr.
            0 | 1 => match b {
                b'&' | b'<' | b'>' => 1,
                b'"' | b'\'' if mode == 1 => 1,
                0x09 | 0x0a | 0x0d => 0,
                0..=0x1f => 2,
                _ => 0,
            },
            // JSON.
            2 => match b {
                b'"' | b'\\' | 0..=0x1f => 1,
                _ => 0,
            },
            // Raw: only NUL (the end of the text) is special.
            _ => (b == 0) as u8,
        };
        c += 1;
    }
    t
}

static XML_TEXT: [u8; 128] = ascii_table(0);
static XML_ATTR: [u8; 128] = ascii_table(1);
static JSON: [u8; 128] = ascii_table(2);
static RAW: [u8; 128] = ascii_table(3);

/// JSON's two-byte escapes: the byte after `\` for `"`, `\` and the control characters with a
/// short form (`\b \t \n \f \r`); 0 for the rest (plain bytes, and controls written `\u00xx`).
/// The one list of them: the writer's scalar step, `escape_ascii` and JSON's vector kernel
/// (`simd::json_run`) read it.
pub(crate) static JSON_PAIR: [u8; 128] = {
    let mut t = [0u8; 128];
    t[b'"' as usize] = b'"';
    t[b'\\' as usize] = b'\\';
    t[0x08] = b'b';
    t[b'\t' as usize] = b't';
    t[b'\n' as usize] = b'n';
    t[0x0c] = b'f';
    t[b'\r' as usize] = b'r';
    t
};

const HEX_UPPER: &[u8; 16] = b"0123456789ABCDEF";
const HEX_LOWER: &[u8; 16] = b"0123456789abcdef";

/// What one ASCII byte is written as: its bytes, then their count in the last byte (at most 6:
/// `&quot;`, `\u00xx`; 0 for a NUL that is dropped). The vector kernel of ASCII text
/// (`simd::escaped_ascii`) writes all 8 and moves on by the count (PERF.md H88).
pub(crate) type Escape = [u8; 8];

/// The escape of ASCII byte `b` in the mode numbered `mode` (`Mode as u8`): what `escape_ascii`
/// writes for a byte the mode's table marks, the byte itself for the rest; a NUL writes nothing
/// when `drop_nul` (ANSI strings).
const fn escape_of(b: u8, mode: u8, drop_nul: bool) -> Escape {
    const fn of(bytes: &[u8]) -> Escape {
        let mut e = [0u8; 8];
        let mut i = 0;
        while i < bytes.len() {
            e[i] = bytes[i];
            i += 1;
        }
        e[7] = bytes.len() as u8;
        e
    }
    if drop_nul && b == 0 {
        return of(b"");
    }
    // `ascii_table` numbers XML text, XML attribute, JSON and raw 0-3.
    let table = match mode {
        0 | 1 => mode,
        2 | 3 => 2,
        _ => 3,
    };
    if ascii_table(table)[b as usize] == 0 {
        return of(&[b]);
    }
    match mode {
        0 | 1 => match b {
            b'&' => of(b"&amp;"),
            b'<' => of(b"&lt;"),
            b'>' => of(b"&gt;"),
            b'"' => of(b"&quot;"),
            b'\'' => of(b"&apos;"),
            _ => of(b"_"),
        },
        2 | 3 => match JSON_PAIR[b as usize] {
            0 => {
                let hex = if mode == 2 { HEX_UPPER } else { HEX_LOWER };
                of(&[
                    b'\\',
                    b'u',
                    b'0',
                    b'0',
                    hex[(b >> 4) as usize],
                    hex[(b & 0xf) as usize],
                ])
            }
            pair => of(&[b'\\', pair]),
        },
        _ => of(&[b]),
    }
}

/// [`escape_of`] for every ASCII byte: the tables of the five modes, each without and with
/// NULs dropped (index `2 * mode + drop_nul`).
static ESCAPES: [[Escape; 128]; 10] = {
    let mut t = [[[0u8; 8]; 128]; 10];
    let mut k = 0;
    while k < 10 {
        let mut b = 0;
        while b < 128 {
            t[k][b] = escape_of(b as u8, (k / 2) as u8, k % 2 == 1);
            b += 1;
        }
        k += 1;
    }
    t
};

/// The escapes of `mode`, NULs dropped when `drop_nul`.
#[inline]
pub(crate) fn escapes(mode: Mode, drop_nul: bool) -> &'static [Escape; 128] {
    &ESCAPES[2 * mode as usize + usize::from(drop_nul)]
}

#[inline]
fn table(mode: Mode) -> &'static [u8; 128] {
    match mode {
        Mode::XmlText => &XML_TEXT,
        Mode::XmlAttr => &XML_ATTR,
        Mode::JsonUpper | Mode::JsonLower => &JSON,
        Mode::Raw => &RAW,
    }
}

/// The escape of ASCII byte `b` (both callers test `b < 0x80`) that `mode`'s table marks.
#[cold]
fn escape_ascii(out: &mut Vec<u8>, b: u8, mode: Mode) {
    debug_assert!(b < 0x80);
    match mode {
        Mode::XmlText | Mode::XmlAttr => match b {
            b'&' => out.extend_from_slice(b"&amp;"),
            b'<' => out.extend_from_slice(b"&lt;"),
            b'>' => out.extend_from_slice(b"&gt;"),
            b'"' => out.extend_from_slice(b"&quot;"),
            b'\'' => out.extend_from_slice(b"&apos;"),
            _ => out.push(b'_'),
        },
        Mode::JsonUpper | Mode::JsonLower => match JSON_PAIR[usize::from(b)] {
            0 => {
                let hex = if mode == Mode::JsonUpper {
                    HEX_UPPER
                } else {
                    HEX_LOWER
                };
                out.extend_from_slice(b"\\u00");
                out.push(hex[usize::from(b >> 4)]);
                out.push(hex[usize::from(b & 0xf)]);
            }
            pair => out.extend_from_slice(&[b'\\', pair]),
        },
        Mode::Raw => out.push(b),
    }
}

#[inline]
fn push_utf8(out: &mut Vec<u8>, c: u32) {
    if c < 0x800 {
        out.extend_from_slice(&[0xc0 | (c >> 6) as u8, 0x80 | (c & 0x3f) as u8]);
    } else if c < 0x10000 {
        out.extend_from_slice(&[
            0xe0 | (c >> 12) as u8,
            0x80 | ((c >> 6) & 0x3f) as u8,
            0x80 | (c & 0x3f) as u8,
        ]);
    } else {
        out.extend_from_slice(&[
            0xf0 | (c >> 18) as u8,
            0x80 | ((c >> 12) & 0x3f) as u8,
            0x80 | ((c >> 6) & 0x3f) as u8,
            0x80 | (c & 0x3f) as u8,
        ]);
    }
}

#[cold]
fn lone_surrogate(out: &mut Vec<u8>, mode: Mode) {
    match mode {
        Mode::XmlText | Mode::XmlAttr => out.push(b'_'),
        _ => out.extend_from_slice("\u{fffd}".as_bytes()),
    }
}

/// Appends UTF-16LE `bytes` (even length) escaped for `mode`, up to the first NUL unit (every
/// text of the contract is cut there).
#[inline]
pub fn write_utf16(out: &mut Vec<u8>, bytes: &[u8], mode: Mode) {
    write_utf16_in(out, bytes, 0, bytes.len() & !1, mode);
}

/// The vector kernel's stop set for `mode` (a superset of the units the scalar loop escapes).
#[inline]
fn specials(mode: Mode) -> simd::Specials {
    match mode {
        Mode::XmlText => simd::Specials::XmlText,
        Mode::XmlAttr => simd::Specials::XmlAttr,
        Mode::JsonUpper | Mode::JsonLower => simd::Specials::Json,
        Mode::Raw => simd::Specials::Raw,
    }
}

/// [`write_utf16`] of the text at `src[start..end]` (`end - start` even). `src` may go on past
/// `end` (the chunk): the vector kernel reads ahead inside it, so fewer strings end too close to
/// the buffer's end for a full load.
///
/// One copy of the writer per mode (PERF.md H38): with the mode a constant, each copy sets up
/// only its own kernel's constants and branches, where one copy for all four loaded every
/// mode's constants and dispatched on the mode per kernel call (~50 instructions per string).
///
/// The first plain run is copied here, inline in the caller (PERF.md H60): most strings are
/// plain throughout, and for them this is the whole work, without the writer's frame and mode
/// dispatch (~35 instructions a string). A string the kernel stops in goes on in the writer.
#[inline(always)]
pub fn write_utf16_in(out: &mut Vec<u8>, src: &[u8], start: usize, end: usize, mode: Mode) {
    let _ = &src[start..end];
    let i = start + 2 * simd::plain_run(out, src, start, end, specials(mode));
    if i < end {
        write_utf16_rest(out, src, i, end, mode);
    }
}

/// [`write_utf16_in`] from `start` on, where the first plain run stopped.
#[inline(never)]
fn write_utf16_rest(out: &mut Vec<u8>, src: &[u8], start: usize, end: usize, mode: Mode) {
    match mode {
        Mode::XmlText => write_utf16_as::<{ Mode::XmlText as u8 }>(out, src, start, end),
        Mode::XmlAttr => write_utf16_as::<{ Mode::XmlAttr as u8 }>(out, src, start, end),
        Mode::JsonUpper => write_utf16_as::<{ Mode::JsonUpper as u8 }>(out, src, start, end),
        Mode::JsonLower => write_utf16_as::<{ Mode::JsonLower as u8 }>(out, src, start, end),
        Mode::Raw => write_utf16_as::<{ Mode::Raw as u8 }>(out, src, start, end),
    }
}

/// The mode numbered `m` (`Mode as u8`).
const fn mode_of(m: u8) -> Mode {
    match m {
        0 => Mode::XmlText,
        1 => Mode::XmlAttr,
        2 => Mode::JsonUpper,
        3 => Mode::JsonLower,
        _ => Mode::Raw,
    }
}

/// [`write_utf16_rest`] for the mode numbered `M`.
fn write_utf16_as<const M: u8>(out: &mut Vec<u8>, src: &[u8], start: usize, end: usize) {
    let mode = const { mode_of(M) };
    let _ = &src[start..end];
    let t = table(mode);
    let sp = specials(mode);
    let xml = matches!(mode, Mode::XmlText | Mode::XmlAttr);
    let json = matches!(mode, Mode::JsonUpper | Mode::JsonLower);
    let mut i = start;
    while i < end {
        // Runs of plain ASCII (most strings are entirely that) eight units at a time; the unit
        // the kernel stops at (or the next one, near the end of `src`) is handled here. JSON's
        // kernel writes `\` and `"` itself, so a path's backslashes do not stop it (H75).
        i += 2 * if json {
            simd::json_run(out, src, i, end)
        } else if xml {
            simd::xml_run(out, src, i, end, sp)
        } else {
            simd::plain_run(out, src, i, end, sp)
        };
        if i >= end {
            break;
        }
        let u = u16::from_le_bytes([src[i], src[i + 1]]);
        i += 2;
        if u == 0 {
            break;
        }
        if u < 0x80 {
            let b = u as u8;
            if t[usize::from(b)] == 0 {
                out.push(b);
            } else if json && JSON_PAIR[usize::from(b)] != 0 {
                // Not cold: every Windows path has backslashes, and event messages have `\r\n\t`
                // (PERF.md H67).
                out.extend_from_slice(&[b'\\', JSON_PAIR[usize::from(b)]]);
            } else {
                escape_ascii(out, b, mode);
            }
        } else if !(0xd800..0xe000).contains(&u) {
            if xml && u >= 0xfffe {
                out.push(b'_');
            } else {
                push_utf8(out, u32::from(u));
            }
        } else if u < 0xdc00 && i < end {
            let lo = u16::from_le_bytes([src[i], src[i + 1]]);
            if (0xdc00..0xe000).contains(&lo) {
                i += 2;
                let c = 0x10000 + ((u32::from(u) - 0xd800) << 10) + (u32::from(lo) - 0xdc00);
                push_utf8(out, c);
            } else {
                lone_surrogate(out, mode);
            }
        } else {
            lone_surrogate(out, mode);
        }
    }
}

/// Appends UTF-8 `text` escaped for `mode` (ANSI strings, resolved references).
pub fn write_str(out: &mut Vec<u8>, text: &str, mode: Mode) {
    write_bytes::<false>(out, text.as_bytes(), mode);
}

/// Appends the ASCII bytes of an ANSI string escaped for `mode`, NUL bytes dropped: what
/// decoding them in an ASCII-compatible codec without the NULs and [`write_str`] would write
/// (PERF.md H76).
pub fn write_ascii_without_nul(out: &mut Vec<u8>, bytes: &[u8], mode: Mode) {
    debug_assert!(bytes.is_ascii());
    write_bytes::<true>(out, bytes, mode);
}

/// [`write_str`] of UTF-8 `bytes`; NUL bytes dropped when `DROP_NUL`. Runs that need no escape
/// go out in one `extend_from_slice`, found by the vector kernel (PERF.md H76), where one table
/// test per byte was.
fn write_bytes<const DROP_NUL: bool>(out: &mut Vec<u8>, bytes: &[u8], mode: Mode) {
    let t = table(mode);
    let sp = specials(mode);
    let esc = escapes(mode, DROP_NUL);
    let xml = matches!(mode, Mode::XmlText | Mode::XmlAttr);
    let mut i = 0;
    loop {
        // ASCII text escaped in the vector kernel, without stopping at an escape (PERF.md
        // H88); it stops at a non-ASCII byte and before the last few, which go on below.
        i += simd::escaped_ascii(out, bytes, i, sp, esc);
        let run = simd::plain_bytes(bytes, i, sp);
        out.extend_from_slice(&bytes[i..i + run]);
        i += run;
        let Some(&b) = bytes.get(i) else { break };
        let from = i;
        i += 1;
        if b < 0x80 {
            if DROP_NUL && b == 0 {
                continue;
            }
            if t[usize::from(b)] == 0 {
                out.push(b);
            } else {
                escape_ascii(out, b, mode);
            }
            continue;
        }
        if xml && b == 0xef && matches!(bytes.get(i..i + 2), Some([0xbf, 0xbe | 0xbf])) {
            // U+FFFE / U+FFFF are EF BF BE / EF BF BF.
            out.push(b'_');
            i += 2;
            continue;
        }
        // The rest of a run of non-ASCII bytes (UTF-8 sequences) as it is; XML stops at the
        // next 0xEF, which may begin U+FFFE or U+FFFF.
        while let Some(&c) = bytes.get(i) {
            if c < 0x80 || (xml && c == 0xef) {
                break;
            }
            i += 1;
        }
        out.extend_from_slice(&bytes[from..i]);
    }
}

/// Whether one of the four UTF-16 units of `w` (little-endian lanes) is 0: the borrow of
/// `lane - 1` reaches a lane's top bit only where the lane is 0 or has its top bit set, and
/// `!w` keeps the former (the lowest lane that is 0 is always found, so the answer is exact).
#[inline(always)]
const fn has_zero_unit(w: u64) -> bool {
    w.wrapping_sub(0x0001_0001_0001_0001) & !w & 0x8000_8000_8000_8000 != 0
}

/// Whether one of the four UTF-16 units of `w` is a surrogate (0xD800..=0xDFFF).
#[inline(always)]
const fn has_surrogate_unit(w: u64) -> bool {
    has_zero_unit((w & 0xf800_f800_f800_f800) ^ 0xd800_d800_d800_d800)
}

/// The eight bytes (four units) of `bytes` at `at` as one little-endian word.
#[inline(always)]
fn word_at(bytes: &[u8], at: usize) -> Option<u64> {
    bytes
        .get(at..at + 8)
        .map(|w| u64::from_le_bytes(w.try_into().unwrap_or([0; 8])))
}

/// Number of UTF-16 units before the first NUL unit in `bytes` (even length). Four units a
/// step while none is NUL, then one at a time (PERF.md H87).
#[inline]
pub fn units_until_nul(bytes: &[u8]) -> usize {
    let n = bytes.len() / 2;
    let mut i = 0;
    while let Some(w) = word_at(bytes, 2 * i) {
        if has_zero_unit(w) {
            break;
        }
        i += 4;
    }
    while i < n {
        if bytes[2 * i] == 0 && bytes[2 * i + 1] == 0 {
            return i;
        }
        i += 1;
    }
    n
}

/// Whether `bytes` (UTF-16LE, even length), cut at the first NUL, is valid UTF-16. Four units
/// a step while none is NUL or a surrogate (names are nearly always such), which are valid
/// whatever follows them; the exact decode starts at the first step that has one (PERF.md
/// H87).
pub fn utf16_until_nul_is_valid(bytes: &[u8]) -> bool {
    let mut at = 0;
    while let Some(w) = word_at(bytes, at) {
        if has_zero_unit(w) || has_surrogate_unit(w) {
            break;
        }
        at += 8;
    }
    let rest = &bytes[at..];
    // The rest unit by unit up to a NUL: valid unless a surrogate comes first, which only the
    // exact decode below judges (most names end in a tail of 1-3 units with neither, where
    // the NUL search and the decode cost ~70 instructions a name, PERF.md H112).
    for pair in rest.chunks_exact(2) {
        let unit = u16::from_le_bytes([pair[0], pair[1]]);
        if unit == 0 {
            return true;
        }
        if (0xd800..=0xdfff).contains(&unit) {
            return utf16_until_nul_is_valid_exact(rest);
        }
    }
    true
}

/// [`utf16_until_nul_is_valid`]'s answer by the decode of every unit before the first NUL.
#[cold]
fn utf16_until_nul_is_valid_exact(rest: &[u8]) -> bool {
    let n = units_until_nul(rest);
    // Decoded and dropped: no `String` per name (the string-table check calls this for every
    // name of every chunk).
    let units = rest[..2 * n]
        .chunks_exact(2)
        .map(|c| u16::from_le_bytes([c[0], c[1]]));
    char::decode_utf16(units).all(|c| c.is_ok())
}

/// Decodes valid UTF-16LE to a `String`, `None` on a lone surrogate.
pub fn decode_utf16_strict(bytes: &[u8]) -> Option<String> {
    let units = bytes
        .chunks_exact(2)
        .map(|c| u16::from_le_bytes([c[0], c[1]]));
    char::decode_utf16(units)
        .collect::<Result<String, _>>()
        .ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn u16s(s: &[u16]) -> Vec<u8> {
        s.iter().flat_map(|u| u.to_le_bytes()).collect()
    }

    fn esc(units: &[u16], mode: Mode) -> String {
        let mut out = Vec::new();
        write_utf16(&mut out, &u16s(units), mode);
        String::from_utf8(out).unwrap()
    }

    fn w(s: &str) -> Vec<u16> {
        s.encode_utf16().collect()
    }

    #[test]
    fn xml_text_and_attr() {
        assert_eq!(esc(&w("a&b<c>\"'"), Mode::XmlText), "a&amp;b&lt;c&gt;\"'");
        assert_eq!(
            esc(&w("a&b<c>\"'"), Mode::XmlAttr),
            "a&amp;b&lt;c&gt;&quot;&apos;"
        );
        assert_eq!(
            esc(&[0x01, 0x09, 0x0a, 0x0d, 0x7f], Mode::XmlText),
            "_\t\n\r\u{7f}"
        );
        assert_eq!(esc(&[0xfffe, 0xffff, 0xd800, 0x41], Mode::XmlText), "___A");
        assert_eq!(esc(&w("é😀"), Mode::XmlText), "é😀");
    }

    #[test]
    fn json_escapes() {
        assert_eq!(
            esc(&w("\"\\\n\r\t\u{8}\u{c}/"), Mode::JsonUpper),
            "\\\"\\\\\\n\\r\\t\\b\\f/"
        );
        assert_eq!(esc(&[0x1f], Mode::JsonUpper), "\\u001F");
        assert_eq!(esc(&[0xdc00], Mode::JsonUpper), "\u{fffd}");
        assert_eq!(esc(&[0xfffe], Mode::JsonUpper), "\u{fffe}");
        let mut out = Vec::new();
        write_str(&mut out, "\u{1f}x", Mode::JsonLower);
        assert_eq!(out, b"\\u001fx");
        // The short forms through `write_str` (ANSI strings), which reach `escape_ascii`.
        let mut out = Vec::new();
        write_str(&mut out, "\"\\\n\r\t\u{8}\u{c}/", Mode::JsonUpper);
        assert_eq!(out, b"\\\"\\\\\\n\\r\\t\\b\\f/");
    }

    #[test]
    fn raw_keeps_markup() {
        assert_eq!(esc(&w("<a>&"), Mode::Raw), "<a>&");
        assert_eq!(esc(&[0xd800], Mode::Raw), "\u{fffd}");
    }

    #[test]
    fn str_xml() {
        let mut out = Vec::new();
        write_str(&mut out, "x<\u{fffe}\u{1}", Mode::XmlAttr);
        assert_eq!(out, b"x&lt;__");
    }

    #[test]
    fn escape_tables_equal_the_escaper() {
        // Every ASCII byte of every mode, NULs kept and dropped: the vector kernel's table
        // against the table test and `escape_ascii` of the scalar step. Seen to fail with
        // `ascii_table` read by the `Mode` number (JSON lower case as raw).
        let modes = [
            Mode::XmlText,
            Mode::XmlAttr,
            Mode::JsonUpper,
            Mode::JsonLower,
            Mode::Raw,
        ];
        for mode in modes {
            for drop_nul in [false, true] {
                for b in 0..0x80u8 {
                    let mut want = Vec::new();
                    if drop_nul && b == 0 {
                    } else if table(mode)[usize::from(b)] == 0 {
                        want.push(b);
                    } else {
                        escape_ascii(&mut want, b, mode);
                    }
                    let e = escapes(mode, drop_nul)[usize::from(b)];
                    assert_eq!(
                        &e[..usize::from(e[7])],
                        &want[..],
                        "{mode:?} {drop_nul} {b:#x}"
                    );
                }
            }
        }
        assert_eq!(
            &escapes(Mode::XmlAttr, false)[usize::from(b'\'')][..7],
            b"&apos;\0"
        );
        assert_eq!(&escapes(Mode::JsonLower, true)[0x1f][..6], br"\u001f");
    }

    #[test]
    fn bytes_writer_equals_the_byte_by_byte_escaper() {
        // `write_str` and `write_ascii_without_nul` against one byte at a time through the
        // tables (the escaper before H76), on texts of every byte class, NULs, U+FFFE and
        // U+FFFF, long enough for the kernel's steps.
        fn slow(out: &mut Vec<u8>, bytes: &[u8], mode: Mode) {
            let t = table(mode);
            let xml = matches!(mode, Mode::XmlText | Mode::XmlAttr);
            let mut i = 0;
            while i < bytes.len() {
                let b = bytes[i];
                if b < 0x80 && t[usize::from(b)] != 0 {
                    escape_ascii(out, b, mode);
                } else if xml
                    && (bytes[i..].starts_with(&[0xef, 0xbf, 0xbe])
                        || bytes[i..].starts_with(&[0xef, 0xbf, 0xbf]))
                {
                    out.push(b'_');
                    i += 2;
                } else {
                    out.push(b);
                }
                i += 1;
            }
        }
        const PIECES: [&str; 14] = [
            "plain text ",
            "C:\\Windows\\",
            "\"q\"",
            "<a & b>",
            "'",
            "\t\r\n",
            "\u{1}",
            "\0",
            "\u{7f}",
            "caf\u{e9}",
            "\u{fffe}",
            "\u{ffff}",
            "\u{efbf}",
            "\u{1f600}",
        ];
        let mut next = crate::testing::xorshift(0x243f_6a88_85a3_08d3);
        let mut x = 0x243f_6a88_85a3_08d3u64;
        for _ in 0..3_000 {
            let mut text = String::new();
            for _ in 0..x % 12 {
                x = next();
                text.push_str(PIECES[(x % PIECES.len() as u64) as usize]);
            }
            x = next();
            for mode in [Mode::XmlText, Mode::XmlAttr, Mode::JsonLower, Mode::Raw] {
                let (mut got, mut want) = (b"p".to_vec(), b"p".to_vec());
                write_str(&mut got, &text, mode);
                slow(&mut want, text.as_bytes(), mode);
                assert_eq!(got, want, "{mode:?} {text:?}");
                if text.is_ascii() {
                    let (mut got, mut want) = (b"p".to_vec(), b"p".to_vec());
                    write_ascii_without_nul(&mut got, text.as_bytes(), mode);
                    let kept: Vec<u8> = text.bytes().filter(|&b| b != 0).collect();
                    slow(&mut want, &kept, mode);
                    assert_eq!(got, want, "{mode:?} {text:?}");
                }
            }
        }
    }

    #[test]
    fn writers_stop_at_nul() {
        assert_eq!(esc(&[0x41, 0, 0x42], Mode::JsonUpper), "A");
        assert_eq!(esc(&[0x26, 0, 0x42], Mode::XmlText), "&amp;");
        assert_eq!(esc(&[0x41, 0x42, 0], Mode::Raw), "AB");
    }

    #[test]
    fn nul_cut() {
        assert_eq!(units_until_nul(&u16s(&[0x41, 0, 0x42])), 1);
        assert!(utf16_until_nul_is_valid(&u16s(&[0x41, 0, 0xd800])));
        assert!(!utf16_until_nul_is_valid(&u16s(&[0xd800, 0x41])));
        assert!(utf16_until_nul_is_valid(&u16s(&[0x41, 0xd83d, 0xde00])));
        assert!(!utf16_until_nul_is_valid(&u16s(&[0x41, 0xde00, 0])));
        assert!(utf16_until_nul_is_valid(&[]));
    }

    #[test]
    fn word_scans_equal_the_unit_by_unit_answers() {
        // Units of every class the word tests tell apart (NUL, lanes whose borrow or top bit
        // could fool `has_zero_unit`, both surrogate halves and their neighbours, ASCII), in
        // strings of 0-24 units: four-unit steps, their edges and the scalar tail.
        const UNITS: [u16; 14] = [
            0, 1, 0x100, 0x41, 0x7f, 0x80, 0x8000, 0xffff, 0xd7ff, 0xd800, 0xdbff, 0xdc00, 0xdfff,
            0xe000,
        ];
        let mut next64 = crate::testing::xorshift(0x2545_f491_4f6c_dd1d);
        let mut next = move || next64() as usize;
        for _ in 0..20_000 {
            let len = next() % 25;
            let units: Vec<u16> = (0..len)
                .map(|_| {
                    let r = next();
                    // Mostly ASCII, as names are, so that long plain steps occur.
                    if r % 3 == 0 {
                        UNITS[(r / 3) % UNITS.len()]
                    } else {
                        0x41 + (r % 26) as u16
                    }
                })
                .collect();
            let bytes = u16s(&units);
            let nul = units.iter().position(|&u| u == 0).unwrap_or(len);
            assert_eq!(units_until_nul(&bytes), nul, "{units:x?}");
            let valid = char::decode_utf16(units[..nul].iter().copied()).all(|c| c.is_ok());
            assert_eq!(utf16_until_nul_is_valid(&bytes), valid, "{units:x?}");
        }
    }

    /// The contract's escaping one character at a time (sections 8.1, 8.2), written from the
    /// rules, not from the writer: the oracle of the property test below.
    fn oracle(units: &[u16], mode: Mode) -> String {
        let cut = units.iter().position(|&u| u == 0).unwrap_or(units.len());
        let mut s = String::new();
        for c in char::decode_utf16(units[..cut].iter().copied()) {
            let xml = matches!(mode, Mode::XmlText | Mode::XmlAttr);
            let Ok(c) = c else {
                s.push_str(if xml { "_" } else { "\u{fffd}" });
                continue;
            };
            match mode {
                Mode::XmlText | Mode::XmlAttr => match c {
                    '&' => s.push_str("&amp;"),
                    '<' => s.push_str("&lt;"),
                    '>' => s.push_str("&gt;"),
                    '"' if mode == Mode::XmlAttr => s.push_str("&quot;"),
                    '\'' if mode == Mode::XmlAttr => s.push_str("&apos;"),
                    '\t' | '\n' | '\r' => s.push(c),
                    '\u{0}'..='\u{1f}' | '\u{fffe}' | '\u{ffff}' => s.push('_'),
                    _ => s.push(c),
                },
                Mode::JsonUpper | Mode::JsonLower => match c {
                    '"' => s.push_str("\\\""),
                    '\\' => s.push_str("\\\\"),
                    '\n' => s.push_str("\\n"),
                    '\r' => s.push_str("\\r"),
                    '\t' => s.push_str("\\t"),
                    '\u{8}' => s.push_str("\\b"),
                    '\u{c}' => s.push_str("\\f"),
                    '\u{0}'..='\u{1f}' => s.push_str(&format!("\\u{:04X}", c as u32)),
                    _ => s.push(c),
                },
                Mode::Raw => s.push(c),
            }
        }
        s
    }

    /// The writer (vector kernel plus scalar loop) against the oracle on random strings of every
    /// unit class, at every offset of a larger buffer (the kernel reads ahead inside it).
    #[test]
    fn writer_equals_the_oracle_on_random_strings() {
        let mut state = 0x2545_f491_4f6c_dd1du64;
        let mut next = move || {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            state
        };
        const CLASS: [u16; 16] = [
            0x22, 0x26, 0x27, 0x3c, 0x3e, 0x5c, 0x09, 0x0a, 0x0d, 0x01, 0x1f, 0x08, 0x0c, 0x7f,
            0xfffe, 0xffff,
        ];
        for _ in 0..20_000 {
            let len = (next() % 48) as usize;
            let units: Vec<u16> = (0..len)
                .map(|_| match next() % 12 {
                    0..=6 => 0x20 + (next() % 0x5f) as u16,
                    7 => CLASS[(next() % 16) as usize],
                    8 => 0x80 + (next() % 0x780) as u16,
                    9 => 0xd800 + (next() % 0x800) as u16,
                    10 if next() % 8 == 0 => 0,
                    _ => next() as u16,
                })
                .collect();
            let lead = (next() % 3) as usize;
            let slack = (next() % 20) as usize;
            let mut src = vec![0x41u8; lead];
            src.extend(units.iter().flat_map(|u| u.to_le_bytes()));
            src.extend((0..slack).map(|_| next() as u8));
            for mode in [Mode::XmlText, Mode::XmlAttr, Mode::JsonUpper, Mode::Raw] {
                let mut out = b"pre".to_vec();
                write_utf16_in(&mut out, &src, lead, lead + 2 * len, mode);
                let want = oracle(&units, mode);
                assert_eq!(
                    String::from_utf8(out[3..].to_vec()).unwrap(),
                    want,
                    "{mode:?} {units:x?}"
                );
            }
        }
    }
}
