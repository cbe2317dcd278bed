//! Fused UTF-16LE → escaped UTF-8 writers (contract section 8), and the same escapes for UTF-8
//! text (ANSI strings, resolved references).
//!
//! Every writer takes raw little-endian UTF-16 bytes (even length, already cut at the first NUL
//! by the caller) and appends to the output buffer in one pass: no intermediate `String`.
//! Lone surrogates become `_` (XML) or U+FFFD (JSON, raw text).

/// Escape mode of a UTF-16 or UTF-8 string.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
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

const HEX_UPPER: &[u8; 16] = b"0123456789ABCDEF";
const HEX_LOWER: &[u8; 16] = b"0123456789abcdef";

#[inline]
fn table(mode: Mode) -> &'static [u8; 128] {
    match mode {
        Mode::XmlText => &XML_TEXT,
        Mode::XmlAttr => &XML_ATTR,
        Mode::JsonUpper | Mode::JsonLower => &JSON,
        Mode::Raw => &RAW,
    }
}

#[cold]
fn escape_ascii(out: &mut Vec<u8>, b: u8, mode: Mode) {
    match mode {
        Mode::XmlText | Mode::XmlAttr => match b {
            b'&' => out.extend_from_slice(b"&amp;"),
            b'<' => out.extend_from_slice(b"&lt;"),
            b'>' => out.extend_from_slice(b"&gt;"),
            b'"' => out.extend_from_slice(b"&quot;"),
            b'\'' => out.extend_from_slice(b"&apos;"),
            _ => out.push(b'_'),
        },
        Mode::JsonUpper | Mode::JsonLower => match b {
            b'"' => out.extend_from_slice(b"\\\""),
            b'\\' => out.extend_from_slice(b"\\\\"),
            b'\n' => out.extend_from_slice(b"\\n"),
            b'\r' => out.extend_from_slice(b"\\r"),
            b'\t' => out.extend_from_slice(b"\\t"),
            0x08 => out.extend_from_slice(b"\\b"),
            0x0c => out.extend_from_slice(b"\\f"),
            _ => {
                let hex = if mode == Mode::JsonUpper {
                    HEX_UPPER
                } else {
                    HEX_LOWER
                };
                out.extend_from_slice(b"\\u00");
                out.push(hex[usize::from(b >> 4)]);
                out.push(hex[usize::from(b & 0xf)]);
            }
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
pub fn write_utf16(out: &mut Vec<u8>, bytes: &[u8], mode: Mode) {
    let t = table(mode);
    let xml = matches!(mode, Mode::XmlText | Mode::XmlAttr);
    let n = bytes.len() / 2;
    // Leading run of plain ASCII (most strings are entirely that): one pass into a pre-sized
    // region, then the general loop from the first unit that needs care.
    let base = out.len();
    out.resize(base + n, 0);
    let mut i = 0;
    {
        let dst = &mut out[base..];
        for (d, c) in dst[i..].iter_mut().zip(bytes[2 * i..].chunks_exact(2)) {
            let lo = c[0];
            if c[1] != 0 || lo >= 0x80 || t[usize::from(lo)] != 0 {
                break;
            }
            *d = lo;
            i += 1;
        }
    }
    out.truncate(base + i);
    if i == n {
        return;
    }
    out.reserve(n - i + 8);
    while i < n {
        // Fast path: a run of ASCII units that need no escaping, copied in one go.
        let run = bytes[2 * i..2 * n]
            .chunks_exact(2)
            .position(|c| c[1] != 0 || c[0] >= 0x80 || t[usize::from(c[0])] != 0)
            .unwrap_or(n - i);
        if run > 0 {
            out.extend(bytes[2 * i..2 * (i + run)].chunks_exact(2).map(|c| c[0]));
            i += run;
            if i == n {
                break;
            }
        }
        let u = u16::from_le_bytes([bytes[2 * i], bytes[2 * i + 1]]);
        i += 1;
        if u == 0 {
            break;
        }
        if u < 0x80 {
            let b = u as u8;
            if t[usize::from(b)] == 0 {
                out.push(b);
            } else {
                escape_ascii(out, b, mode);
            }
        } else if !(0xd800..0xe000).contains(&u) {
            if xml && u >= 0xfffe {
                out.push(b'_');
            } else {
                push_utf8(out, u32::from(u));
            }
        } else if u < 0xdc00 && i < n {
            let lo = u16::from_le_bytes([bytes[2 * i], bytes[2 * i + 1]]);
            if (0xdc00..0xe000).contains(&lo) {
                i += 1;
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
    let t = table(mode);
    let xml = matches!(mode, Mode::XmlText | Mode::XmlAttr);
    let bytes = text.as_bytes();
    let mut start = 0;
    let mut i = 0;
    while i < bytes.len() {
        let b = bytes[i];
        if b < 0x80 {
            if t[usize::from(b)] != 0 {
                out.extend_from_slice(&bytes[start..i]);
                escape_ascii(out, b, mode);
                start = i + 1;
            }
        } else if xml && b == 0xef && bytes.get(i + 1) == Some(&0xbf) {
            // U+FFFE / U+FFFF are EF BF BE / EF BF BF.
            if let Some(&c) = bytes.get(i + 2) {
                if c == 0xbe || c == 0xbf {
                    out.extend_from_slice(&bytes[start..i]);
                    out.push(b'_');
                    i += 3;
                    start = i;
                    continue;
                }
            }
        }
        i += 1;
    }
    out.extend_from_slice(&bytes[start..]);
}

/// Number of UTF-16 units before the first NUL unit in `bytes` (even length).
#[inline]
pub fn units_until_nul(bytes: &[u8]) -> usize {
    let n = bytes.len() / 2;
    let mut i = 0;
    while i < n {
        if bytes[2 * i] == 0 && bytes[2 * i + 1] == 0 {
            return i;
        }
        i += 1;
    }
    n
}

/// Whether `bytes` (UTF-16LE, even length), cut at the first NUL, is valid UTF-16.
pub fn utf16_until_nul_is_valid(bytes: &[u8]) -> bool {
    let n = units_until_nul(bytes);
    decode_utf16_strict(&bytes[..2 * n]).is_some()
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
    }
}
