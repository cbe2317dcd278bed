//! Value types (contract section 7), text forms: every type written straight into the output
//! buffer, escaped for XML text, XML attributes or JSON. Decoding is [`crate::values_decode`]'s.

use crate::escape::{self, Mode};
use crate::values_decode::{for_each_item, ty, Item, Value};
use encoding_rs::Encoding;

/// Output flavour for value text: which escaping applies to string items.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Flavor {
    XmlText,
    XmlAttr,
    Json,
}

impl Flavor {
    /// Escape mode for UTF-16 text.
    #[inline]
    pub fn utf16_mode(self) -> Mode {
        match self {
            Flavor::XmlText => Mode::XmlText,
            Flavor::XmlAttr => Mode::XmlAttr,
            Flavor::Json => Mode::JsonUpper,
        }
    }

    /// Escape mode for ANSI and resolved-reference text.
    #[inline]
    pub fn utf8_mode(self) -> Mode {
        match self {
            Flavor::XmlText => Mode::XmlText,
            Flavor::XmlAttr => Mode::XmlAttr,
            Flavor::Json => Mode::JsonLower,
        }
    }
}

/// Writes ANSI bytes (NULs removed, decoded with `codec`) escaped for `flavor`.
pub fn write_ansi(out: &mut Vec<u8>, bytes: &[u8], codec: &'static Encoding, flavor: Flavor) {
    // ASCII bytes decode to themselves in an ASCII-compatible codec (every codec but UTF-16,
    // ISO-2022-JP and `replacement`), and cannot be malformed there: escaped straight from the
    // chunk, without the filtered copy and the decoder (PERF.md H76).
    if codec.is_ascii_compatible() && bytes.is_ascii() {
        escape::write_ascii_without_nul(out, bytes, flavor.utf8_mode());
        return;
    }
    let filtered;
    let bytes = if bytes.contains(&0) {
        filtered = bytes
            .iter()
            .copied()
            .filter(|&b| b != 0)
            .collect::<Vec<u8>>();
        &filtered[..]
    } else {
        bytes
    };
    let text = codec
        .decode_without_bom_handling_and_without_replacement(bytes)
        .unwrap_or_default();
    escape::write_str(out, &text, flavor.utf8_mode());
}

/// Writes the text form (7.3) of `v`.
pub fn write_value(
    out: &mut Vec<u8>,
    chunk: &[u8],
    v: &Value,
    codec: &'static Encoding,
    flavor: Flavor,
) {
    let s = v.off as usize;
    let b = &chunk[s..s + v.len as usize];
    match v.ty {
        ty::NULL => {}
        ty::I8 => write_int(out, b[0] as i8),
        ty::U8 => write_int(out, b[0]),
        ty::I16 => write_int(out, i16::from_le_bytes([b[0], b[1]])),
        ty::U16 => write_int(out, u16::from_le_bytes([b[0], b[1]])),
        ty::I32 => write_int(out, i32::from_le_bytes(arr4(b))),
        ty::U32 => write_int(out, u32::from_le_bytes(arr4(b))),
        ty::I64 => write_int(out, i64::from_le_bytes(arr8(b))),
        ty::U64 => write_int(out, u64::from_le_bytes(arr8(b))),
        ty::F32 => write_f32(out, f32::from_le_bytes(arr4(b))),
        ty::F64 => write_f64(out, f64::from_le_bytes(arr8(b))),
        ty::BOOL => out.extend_from_slice(if b[0] == 1 { b"true" } else { b"false" }),
        ty::BINARY => write_hex_upper(out, b),
        ty::GUID => write_guid(out, b),
        ty::HEX32 => write_hex(out, u64::from(u32::from_le_bytes(arr4(b)))),
        ty::HEX64 => write_hex(out, u64::from_le_bytes(arr8(b))),
        ty::SIZET => {
            if b.len() == 4 {
                write_hex(out, u64::from(u32::from_le_bytes(arr4(b))))
            } else {
                write_hex(out, u64::from_le_bytes(arr8(b)))
            }
        }
        ty::FILETIME => write_filetime(out, u64::from_le_bytes(arr8(b))),
        ty::SYSTIME => write_systime(out, b),
        ty::SID => write_sid(out, b),
        _ if v.ty & ty::ARRAY != 0 => write_array(out, chunk, v, codec, flavor),
        _ => {}
    }
}

/// The items of an array value, comma-separated. Out of line: arrays are rare in Security
/// logs, and inlined they made every scalar's call to [`write_value`] save and restore more
/// registers (PERF.md H36).
#[inline(never)]
fn write_array(
    out: &mut Vec<u8>,
    chunk: &[u8],
    v: &Value,
    codec: &'static Encoding,
    flavor: Flavor,
) {
    let mut first = true;
    for_each_item(chunk, v, |item| {
        if !first {
            out.push(b',');
        }
        first = false;
        write_item(out, chunk, item, codec, flavor);
    });
}

/// One item of an array value (`None`: an item with no text), as in the array's joined text
/// and in a program's item slot.
#[inline]
pub(crate) fn write_item(
    out: &mut Vec<u8>,
    chunk: &[u8],
    item: Option<Item>,
    codec: &'static Encoding,
    flavor: Flavor,
) {
    match item {
        None => {}
        Some(Item::Text16 { off, units }) => {
            let o = off as usize;
            escape::write_utf16_in(out, chunk, o, o + 2 * units as usize, flavor.utf16_mode())
        }
        Some(Item::Ansi { off, len }) => {
            let o = off as usize;
            write_ansi(out, &chunk[o..o + len as usize], codec, flavor)
        }
        Some(Item::Value(iv)) => write_value(out, chunk, &iv, codec, flavor),
    }
}

#[inline]
fn arr4(b: &[u8]) -> [u8; 4] {
    [b[0], b[1], b[2], b[3]]
}

#[inline]
fn arr8(b: &[u8]) -> [u8; 8] {
    let mut a = [0u8; 8];
    a.copy_from_slice(&b[..8]);
    a
}

/// An integer type [`write_int`] writes: its sign and magnitude.
pub trait Decimal: Copy {
    fn sign_and_magnitude(self) -> (bool, u64);
}

macro_rules! decimal_unsigned {
    ($($t:ty),*) => {$(
        impl Decimal for $t {
            #[inline(always)]
            fn sign_and_magnitude(self) -> (bool, u64) {
                (false, self as u64)
            }
        }
    )*};
}

macro_rules! decimal_signed {
    ($($t:ty),*) => {$(
        impl Decimal for $t {
            #[inline(always)]
            fn sign_and_magnitude(self) -> (bool, u64) {
                (self < 0, self.unsigned_abs() as u64)
            }
        }
    )*};
}

decimal_unsigned!(u8, u16, u32, u64, usize);
decimal_signed!(i8, i16, i32, i64);

/// Appends `buf[..n]` (`n <= N`) as one copy of the whole array and a truncation: a copy of a
/// constant size is a few inline moves, where a copy of `n` bytes is a `memcpy` call (PERF.md
/// H37). The bytes past `n` are written and dropped again at once.
#[inline(always)]
fn append<const N: usize>(out: &mut Vec<u8>, buf: &[u8; N], n: usize) {
    debug_assert!(n <= N);
    let len = out.len();
    out.extend_from_slice(buf);
    out.truncate(len + n);
}

/// Writes the decimal digits of `v` at `buf[at..]` (two per table load, from the last one
/// back) and returns where they end. Values that fit 32 bits (nearly all) divide in 32 bits.
#[inline(always)]
fn put_dec(buf: &mut [u8], at: usize, v: u64) -> usize {
    match u32::try_from(v) {
        Ok(v) => put_dec32(buf, at, v),
        Err(_) => put_dec64(buf, at, v),
    }
}

/// `put_dec32` and `put_dec64`: the same digit loop in the width of the value, so that values
/// that fit 32 bits divide in 32 bits.
macro_rules! put_dec_in {
    ($(#[$attr:meta])* $name:ident, $t:ty) => {
        $(#[$attr])*
        fn $name(buf: &mut [u8], at: usize, v: $t) -> usize {
            let end = at + v.checked_ilog10().unwrap_or(0) as usize + 1;
            let (mut e, mut v) = (end, v);
            while v >= 100 {
                let [hi, lo] = DEC_PAIRS[(v % 100) as usize];
                buf[e - 2] = hi;
                buf[e - 1] = lo;
                v /= 100;
                e -= 2;
            }
            if v >= 10 {
                let [hi, lo] = DEC_PAIRS[v as usize];
                buf[at] = hi;
                buf[at + 1] = lo;
            } else {
                buf[at] = b'0' + v as u8;
            }
            end
        }
    };
}
put_dec_in!(
    #[inline(always)]
    put_dec32,
    u32
);
put_dec_in!(
    #[inline(never)]
    put_dec64,
    u64
);

/// Decimal integer.
#[inline]
pub fn write_int<I: Decimal>(out: &mut Vec<u8>, v: I) {
    let (negative, magnitude) = v.sign_and_magnitude();
    // A sign and at most 20 digits.
    let mut buf = [b'-'; 24];
    let end = put_dec(&mut buf, usize::from(negative), magnitude);
    append(out, &buf, end);
}

/// [`write_int`] for the replay's unsigned values (PERF.md H180): most integers of a record
/// have one or two digits (levels, opcodes, tasks, versions, zeros), written here as their
/// pair from the table in one fixed-size copy, without the digit count and the 24-byte buffer
/// (evtx-zig's H79); the rest through `write_int`.
#[inline(always)]
pub fn write_uint(out: &mut Vec<u8>, v: u32) {
    if v < 100 {
        let [hi, lo] = DEC_PAIRS[v as usize];
        let one = v < 10;
        append(
            out,
            &if one { [lo, lo] } else { [hi, lo] },
            2 - usize::from(one),
        );
    } else {
        write_int(out, v);
    }
}

const HEX_LOWER: &[u8; 16] = b"0123456789abcdef";
const HEX_UPPER: &[u8; 16] = b"0123456789ABCDEF";

/// `0x` + lowercase hex without leading zeros.
pub fn write_hex(out: &mut Vec<u8>, v: u64) {
    let (buf, n) = hex_text(v);
    append(out, &buf, n);
}

/// The longest hex text: `0x` and 16 digits.
const HEX_TEXT_MAX: usize = 18;

/// The text [`write_hex`] writes for `v`: `buf[..n]`.
#[inline]
fn hex_text(v: u64) -> ([u8; HEX_TEXT_MAX], usize) {
    let mut buf = [0u8; HEX_TEXT_MAX];
    let digits = if v == 0 {
        1
    } else {
        (64 - v.leading_zeros()).div_ceil(4) as usize
    };
    buf[0] = b'0';
    buf[1] = b'x';
    // Two digits per table load, from the last one back (one load per byte, not per nibble).
    let (mut end, mut left, mut v) = (2 + digits, digits, v);
    while left >= 2 {
        let [hi, lo] = HEX_PAIRS[(v & 0xff) as usize];
        buf[end - 2] = hi;
        buf[end - 1] = lo;
        v >>= 8;
        end -= 2;
        left -= 2;
    }
    if left == 1 {
        buf[2] = HEX_LOWER[(v & 0xf) as usize];
    }
    (buf, 2 + digits)
}

/// Uppercase hex of every byte.
pub fn write_hex_upper(out: &mut Vec<u8>, b: &[u8]) {
    out.reserve(b.len() * 2);
    for &x in b {
        out.push(HEX_UPPER[usize::from(x >> 4)]);
        out.push(HEX_UPPER[usize::from(x & 0xf)]);
    }
}

/// The two lowercase hex digits of every byte.
static HEX_PAIRS: [[u8; 2]; 256] = {
    let mut t = [[0u8; 2]; 256];
    let mut i = 0;
    while i < 256 {
        t[i] = [HEX_LOWER[i >> 4], HEX_LOWER[i & 0xf]];
        i += 1;
    }
    t
};

/// `{d1-d2-d3-d4a-d4b}` lowercase.
pub fn write_guid(out: &mut Vec<u8>, b: &[u8]) {
    if let Some(g) = b.first_chunk::<16>() {
        out.extend_from_slice(&guid_text(g));
    }
}

/// A GUID as the reference's `Guid` displays it (`dump-template-instances`' `template_guid`):
/// `D1-D2-D3-D4A-D4B`, upper case, no braces. The Zig engine's `writeGuidUpper`.
pub fn write_guid_upper(out: &mut Vec<u8>, g: &[u8; 16]) {
    let text = guid_text(g);
    out.extend(
        text[1..GUID_TEXT_LEN - 1]
            .iter()
            .map(u8::to_ascii_uppercase),
    );
}

/// The text of GUID `g`: 38 bytes, `{d1-d2-d3-d4a-d4b}` lowercase.
#[inline]
fn guid_text(g: &[u8; 16]) -> [u8; GUID_TEXT_LEN] {
    // Output position of the two hex digits of each input byte: d1 is bytes 3..0 (LE u32),
    // d2 bytes 5,4, d3 bytes 7,6, then bytes 8..15 as stored. Constant positions and one
    // table load per byte: no per-nibble work, no bounds checks.
    const AT: [usize; 16] = [7, 5, 3, 1, 12, 10, 17, 15, 20, 22, 25, 27, 29, 31, 33, 35];
    let mut buf = *b"{00000000-0000-0000-0000-000000000000}";
    for (&x, at) in g.iter().zip(AT) {
        let [hi, lo] = HEX_PAIRS[usize::from(x)];
        buf[at] = hi;
        buf[at + 1] = lo;
    }
    buf
}

const GUID_TEXT_LEN: usize = 38;

/// `S-rev-auth-sub…`.
pub fn write_sid(out: &mut Vec<u8>, b: &[u8]) {
    // `S-`, the revision (3 digits at most), `-` and the 48-bit authority (15 at most).
    let mut buf = *b"S-000000000000000000000000";
    let at = put_dec(&mut buf, 2, u64::from(b[0]));
    buf[at] = b'-';
    let auth = b[2..8].iter().fold(0u64, |a, &x| (a << 8) | u64::from(x));
    let end = put_dec(&mut buf, at + 1, auth);
    append(out, &buf, end);
    let count = usize::from(b[1]);
    for k in 0..count {
        let o = 8 + 4 * k;
        // `-` and a 32-bit sub-authority (10 digits at most).
        let mut buf = [b'-'; 16];
        let end = put_dec32(&mut buf, 1, u32::from_le_bytes(arr4(&b[o..o + 4])));
        append(out, &buf, end);
    }
}

/// Texts of recently written values, one per renderer (thread), kept across chunks: Security
/// logs name the same few SIDs, GUIDs and hex numbers in most records and come in time order
/// (PERF.md H50-H52 and H59, the Zig engine's H31, H32, H45). The replay writes SIDs, GUIDs,
/// FILETIMEs and hex numbers through it; every other caller formats each time. SIDs are
/// direct-mapped by their last sub-authority and length; a slot holds the bytes it was written
/// from, so a collision only costs a new formatting, never a wrong text.
#[derive(Debug)]
pub struct Memo {
    sids: Box<[SidText; SID_SLOTS]>,
    /// The day (since 1601-01-01) of the last FILETIME written, and its `YYYY-MM-DD`: a log's
    /// records come in time order, most of a day's records after each other (PERF.md H51, the
    /// Zig engine's H32).
    day: u64,
    date: [u8; 10],
    /// GUIDs likewise (provider and activity ids repeat; PERF.md H52, the Zig engine's H45).
    guids: Box<[GuidText; GUID_SLOTS]>,
    /// Hex numbers likewise (`Keywords` repeats in every record, logon and process ids in
    /// many; PERF.md H59).
    hexes: Box<[HexText; HEX_SLOTS]>,
}

/// Slots of the hex memo (a power of two): security-30mb writes ~1.6 hex numbers a record
/// that are not in it with 32 slots, ~1.2 with 256 (PERF.md H135).
const HEX_SLOTS: usize = 256;

/// One memo slot: a hex number and its text (`text[..len]`). Every slot starts as zero and
/// `0x0`, so, as for GUIDs, a key that matches always holds that key's text.
#[derive(Debug, Clone, Copy)]
struct HexText {
    key: u64,
    len: u8,
    text: [u8; HEX_TEXT_MAX],
}

impl HexText {
    /// The slot for `v`. Out of line: the memo's hit stays small where the replay inlines it.
    #[inline(never)]
    fn of(v: u64) -> HexText {
        let (text, n) = hex_text(v);
        HexText {
            key: v,
            len: n as u8,
            text,
        }
    }
}

const GUID_SLOTS: usize = 32;

/// One memo slot: a GUID and its text. Every slot starts as the zero GUID with its text, so a
/// slot needs no "used" flag: a key that matches always holds that key's text.
#[derive(Debug, Clone, Copy)]
struct GuidText {
    key: u128,
    text: [u8; GUID_TEXT_LEN],
}

const SID_SLOTS: usize = 64;
/// The longest SID memoised: 15 sub-authorities (Windows' limit); longer ones are formatted
/// every time.
const SID_BYTES_MAX: usize = 8 + 4 * 15;
/// Its text: `S-`, 3 + 1 + 15 digits of revision and authority, 15 × (1 + 10).
const SID_TEXT_MAX: usize = 2 + 3 + 1 + 15 + 15 * 11;

/// One memo slot: a SID's bytes (`key_len` 0: empty; a SID has at least 8) and its text.
#[derive(Debug, Clone, Copy)]
struct SidText {
    key_len: u8,
    text_len: u8,
    key: [u8; SID_BYTES_MAX],
    text: [u8; SID_TEXT_MAX],
}

impl Default for Memo {
    fn default() -> Memo {
        let empty = SidText {
            key_len: 0,
            text_len: 0,
            key: [0; SID_BYTES_MAX],
            text: [0; SID_TEXT_MAX],
        };
        Memo {
            sids: Box::new([empty; SID_SLOTS]),
            day: u64::MAX,
            date: [0; 10],
            guids: Box::new(
                [GuidText {
                    key: 0,
                    text: guid_text(&[0; 16]),
                }; GUID_SLOTS],
            ),
            hexes: Box::new([HexText::of(0); HEX_SLOTS]),
        }
    }
}

impl Memo {
    /// [`write_hex`], from the memo when the same number was written before.
    #[inline]
    pub fn write_hex(&mut self, out: &mut Vec<u8>, v: u64) {
        // The high half folded in first: `Keywords` has only high bits set, and a product's
        // top bits do not see a factor's high bits when its low bits are zero (0x8020... and
        // 0 would share a slot).
        let mix = (v ^ v >> 32).wrapping_mul(0x9e37_79b9_7f4a_7c15);
        let e = &mut self.hexes[(mix >> (64 - HEX_SLOTS.trailing_zeros())) as usize];
        if e.key != v {
            *e = HexText::of(v);
        }
        append(out, &e.text, usize::from(e.len));
    }

    /// [`write_guid`], from the memo when the same GUID was written before.
    #[inline]
    pub fn write_guid(&mut self, out: &mut Vec<u8>, b: &[u8]) {
        let Some(g) = b.first_chunk::<16>() else {
            return;
        };
        let key = u128::from_le_bytes(*g);
        let mix = (key as u64 ^ (key >> 64) as u64).wrapping_mul(0x9e37_79b9_7f4a_7c15);
        let e = &mut self.guids[(mix >> 59) as usize];
        if e.key != key {
            e.key = key;
            e.text = guid_text(g);
        }
        out.extend_from_slice(&e.text);
    }

    /// [`write_filetime`], the date from the memo when the day is the last one's.
    #[inline]
    pub fn write_filetime(&mut self, out: &mut Vec<u8>, ft: u64) {
        if ft > i64::MAX as u64 {
            return write_filetime(out, ft);
        }
        let mut buf = TIMESTAMP;
        let day = ft / TICKS_PER_DAY;
        if day != self.day {
            put_filetime_date(&mut buf, day);
            self.date.copy_from_slice(&buf[..10]);
            self.day = day;
        } else {
            buf[..10].copy_from_slice(&self.date);
        }
        put_filetime_time(&mut buf, ft % TICKS_PER_DAY);
        out.extend_from_slice(&buf);
    }

    /// [`write_sid`], from the memo when the same SID was written before.
    #[inline]
    pub fn write_sid(&mut self, out: &mut Vec<u8>, b: &[u8]) {
        let n = b.len();
        if !(8..=SID_BYTES_MAX).contains(&n) {
            return write_sid(out, b);
        }
        let last = u32::from_le_bytes(arr4(&b[n - 4..]));
        let slot = ((last.wrapping_mul(0x9e37_79b1) >> 26) ^ n as u32) as usize % SID_SLOTS;
        let e = &mut self.sids[slot];
        if usize::from(e.key_len) == n && e.key[..n] == *b {
            out.extend_from_slice(&e.text[..usize::from(e.text_len)]);
            return;
        }
        let start = out.len();
        write_sid(out, b);
        let text = &out[start..];
        if text.len() <= SID_TEXT_MAX {
            e.key[..n].copy_from_slice(b);
            e.text[..text.len()].copy_from_slice(text);
            e.key_len = n as u8;
            e.text_len = text.len() as u8;
        }
    }
}

/// Days since 0000-03-01 (proleptic Gregorian, years starting in March) to (year, month, day).
/// Unsigned 32-bit throughout (PERF.md H40): a FILETIME of at most `i64::MAX` ticks is at most
/// 10,675,199 days after 1601-01-01, 584,694 days after 0000-03-01, so nothing is negative
/// and every product fits 32 bits.
fn civil_from_days(z: u32) -> (u32, u32, u32) {
    let era = z / 146_097;
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let y = yoe + era * 400;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let m = if mp < 10 { mp + 3 } else { mp - 9 };
    (if m <= 2 { y + 1 } else { y }, m, d)
}

/// The two decimal digits of every number below 100.
static DEC_PAIRS: [[u8; 2]; 100] = {
    let mut t = [[0u8; 2]; 100];
    let mut i = 0;
    while i < 100 {
        t[i] = [b'0' + (i / 10) as u8, b'0' + (i % 10) as u8];
        i += 1;
    }
    t
};

/// The last two decimal digits of `v` at `buf[at..at + 2]`, from one table load.
#[inline]
fn two(buf: &mut [u8], at: usize, v: u32) {
    let [hi, lo] = DEC_PAIRS[(v % 100) as usize];
    buf[at] = hi;
    buf[at + 1] = lo;
}

/// A timestamp's text with every digit zero, for [`put_date`] and [`put_time`] to fill.
const TIMESTAMP: [u8; 28] = *b"0000-00-00T00:00:00.0000000Z";

/// `YYYY-MM-DD` at `buf[..10]`.
#[inline]
fn put_date(buf: &mut [u8; 28], y: u32, mo: u32, d: u32) {
    two(buf, 0, y / 100 % 100);
    two(buf, 2, y % 100);
    two(buf, 5, mo);
    two(buf, 8, d);
}

/// `HH:MM:SS.fffffff` at `buf[11..27]`.
#[inline]
fn put_time(buf: &mut [u8; 28], h: u32, mi: u32, s: u32, frac: u32) {
    two(buf, 11, h);
    two(buf, 14, mi);
    two(buf, 17, s);
    // Seven digits: one, then three pairs (frac < 10^7 for FILETIMEs and SYSTEMTIMEs).
    buf[20] = b'0' + (frac / 1_000_000 % 10) as u8;
    two(buf, 21, frac / 10_000);
    two(buf, 23, frac / 100);
    two(buf, 25, frac);
}

/// Writes `YYYY-MM-DDTHH:MM:SS.fffffffZ`.
#[allow(clippy::too_many_arguments)]
fn write_timestamp(out: &mut Vec<u8>, y: u32, mo: u32, d: u32, h: u32, mi: u32, s: u32, frac: u32) {
    let mut buf = TIMESTAMP;
    put_date(&mut buf, y, mo, d);
    put_time(&mut buf, h, mi, s, frac);
    out.extend_from_slice(&buf);
}

/// FILETIME ticks per day.
const TICKS_PER_DAY: u64 = 864_000_000_000;

/// The time of day of `rest` ticks past midnight into `buf`.
#[inline]
fn put_filetime_time(buf: &mut [u8; 28], rest: u64) {
    let secs = (rest / 10_000_000) as u32;
    let frac = (rest % 10_000_000) as u32;
    put_time(buf, secs / 3600, secs / 60 % 60, secs % 60, frac);
}

/// FILETIME text (7.3).
pub fn write_filetime(out: &mut Vec<u8>, ft: u64) {
    if ft > i64::MAX as u64 {
        out.extend_from_slice(b"0000-00-00T00:00:00.0000000Z");
        return;
    }
    let mut buf = TIMESTAMP;
    put_filetime_date(&mut buf, ft / TICKS_PER_DAY);
    put_filetime_time(&mut buf, ft % TICKS_PER_DAY);
    out.extend_from_slice(&buf);
}

/// A FILETIME as the reference displays a record's timestamp (`dump-template-instances`'
/// `timestamp`): [`write_filetime`]'s text with the fraction's trailing zeros cut, and its dot
/// too when nothing is left (`2024-03-01T08:00:01Z`). The Zig engine's `writeFiletimeTrimmed`.
pub fn write_filetime_trimmed(out: &mut Vec<u8>, ft: u64) {
    let start = out.len();
    write_filetime(out, ft);
    // `YYYY-MM-DDTHH:MM:SS.fffffffZ`: the dot at 19, the `Z` last.
    let text = &out[start..];
    debug_assert!(text.len() == 28 && text[19] == b'.' && text[27] == b'Z');
    let digits = text[20..27]
        .iter()
        .rposition(|&c| c != b'0')
        .map_or(0, |at| at + 1);
    let end = if digits == 0 { 19 } else { 20 + digits };
    out.truncate(start + end);
    out.push(b'Z');
}

/// The date of FILETIME day `days` (since 1601-01-01) into `buf`.
#[inline]
fn put_filetime_date(buf: &mut [u8; 28], days: u64) {
    // At most 10,675,199 days (`ft <= i64::MAX`); 1601-01-01 is day 584,694 after 0000-03-01.
    let (y, m, d) = civil_from_days(days as u32 + 584_694);
    put_date(buf, y % 10_000, m, d);
}

fn days_in_month(y: u32, m: u32) -> u32 {
    match m {
        1 | 3 | 5 | 7 | 8 | 10 | 12 => 31,
        4 | 6 | 9 | 11 => 30,
        _ if (y.is_multiple_of(4) && !y.is_multiple_of(100)) || y.is_multiple_of(400) => 29,
        _ => 28,
    }
}

/// SYSTEMTIME text (7.3).
pub fn write_systime(out: &mut Vec<u8>, b: &[u8]) {
    let f = |i: usize| u32::from(u16::from_le_bytes([b[2 * i], b[2 * i + 1]]));
    let (y, mo, d, h, mi, s, ms) = (f(0), f(1), f(3), f(4), f(5), f(6), f(7));
    let valid = (1601..=30827).contains(&y)
        && (1..=12).contains(&mo)
        && d >= 1
        && d <= days_in_month(y, mo)
        && h < 24
        && mi < 60
        && s < 60
        && ms < 1000;
    if valid {
        write_timestamp(out, y % 10_000, mo, d, h, mi, s, ms * 10_000);
    } else {
        out.extend_from_slice(b"1601-01-01T00:00:00.0000000Z");
    }
}

/// Real32 text (7.3).
pub fn write_f32(out: &mut Vec<u8>, v: f32) {
    if v.is_nan() || v.is_infinite() || v == 0.0 {
        return write_special(out, f64::from(v));
    }
    let mut buf = ryu::Buffer::new();
    write_float_digits(out, buf.format_finite(v), -6, 12);
}

/// Real64 text (7.3).
pub fn write_f64(out: &mut Vec<u8>, v: f64) {
    if v.is_nan() || v.is_infinite() || v == 0.0 {
        return write_special(out, v);
    }
    let mut buf = ryu::Buffer::new();
    write_float_digits(out, buf.format_finite(v), -5, 15);
}

#[cold]
fn write_special(out: &mut Vec<u8>, v: f64) {
    let s: &[u8] = if v.is_nan() {
        b"NaN"
    } else if v.is_infinite() {
        if v > 0.0 {
            b"inf"
        } else {
            b"-inf"
        }
    } else if v.is_sign_negative() {
        b"-0.0"
    } else {
        b"0.0"
    };
    out.extend_from_slice(s);
}

/// Re-lays out ryu's shortest representation (`-1.25e-7`, `0.001`, `123.0`, `1e16`) per the
/// contract: digits `d1..dn` and exponent `E`, fixed notation for `lo <= E <= hi`.
fn write_float_digits(out: &mut Vec<u8>, ryu: &str, lo: i32, hi: i32) {
    let (neg, body) = match ryu.strip_prefix('-') {
        Some(rest) => (true, rest),
        None => (false, ryu),
    };
    let (mantissa, exp_part) = match body.find('e') {
        Some(i) => (&body[..i], body[i + 1..].parse::<i32>().unwrap_or(0)),
        None => (body, 0),
    };
    // Collect significant digits and the decimal exponent of the first one.
    let mut digits: Vec<u8> = Vec::with_capacity(24);
    let int_len = mantissa.find('.').unwrap_or(mantissa.len()) as i32;
    let mut first_nonzero: Option<i32> = None;
    let mut idx = 0i32;
    for &c in mantissa.as_bytes() {
        if c == b'.' {
            continue;
        }
        if first_nonzero.is_none() && c == b'0' {
            idx += 1;
            continue;
        }
        if first_nonzero.is_none() {
            first_nonzero = Some(idx);
        }
        digits.push(c);
        idx += 1;
    }
    while digits.len() > 1 && digits.last() == Some(&b'0') {
        digits.pop();
    }
    let e = int_len - 1 - first_nonzero.unwrap_or(0) + exp_part;
    let n = digits.len() as i32;
    if neg {
        out.push(b'-');
    }
    if (lo..=hi).contains(&e) {
        if e >= n - 1 {
            out.extend_from_slice(&digits);
            out.extend(std::iter::repeat_n(b'0', (e - n + 1) as usize));
            out.extend_from_slice(b".0");
        } else if e >= 0 {
            let k = (e + 1) as usize;
            out.extend_from_slice(&digits[..k]);
            out.push(b'.');
            out.extend_from_slice(&digits[k..]);
        } else {
            out.extend_from_slice(b"0.");
            out.extend(std::iter::repeat_n(b'0', (-e - 1) as usize));
            out.extend_from_slice(&digits);
        }
    } else {
        out.push(digits[0]);
        if n > 1 {
            out.push(b'.');
            out.extend_from_slice(&digits[1..]);
        }
        out.push(b'e');
        out.push(if e < 0 { b'-' } else { b'+' });
        write_int(out, e.unsigned_abs());
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::values_decode::{decode_sized, decode_unsized, is_known_type, Slot};

    fn text(v: &Value, chunk: &[u8]) -> String {
        let mut out = Vec::new();
        write_value(&mut out, chunk, v, encoding_rs::WINDOWS_1252, Flavor::Json);
        String::from_utf8(out).unwrap()
    }

    fn sized(bytes: &[u8], t: u8) -> (Slot, usize) {
        decode_sized(bytes, 0, t, bytes.len(), encoding_rs::WINDOWS_1252).unwrap()
    }

    fn sized_text(bytes: &[u8], t: u8) -> String {
        match sized(bytes, t).0 {
            Slot::Value(v) => text(&v, bytes),
            other => panic!("not a value: {other:?}"),
        }
    }

    #[test]
    fn write_uint_equals_std_formatting() {
        // PERF.md H180: the one- and two-digit pairs and the `write_int` rest, around their
        // boundaries and at the extremes, appended after a byte that must stay.
        let mut numbers: Vec<u32> = (0..=1_000).collect();
        numbers.extend([9_999, 10_000, 65_535, 1 << 24, u32::MAX - 1, u32::MAX]);
        for n in numbers {
            let mut out = b"x".to_vec();
            write_uint(&mut out, n);
            out.push(b'y');
            assert_eq!(String::from_utf8(out).unwrap(), format!("x{n}y"));
        }
    }

    #[test]
    fn integers() {
        assert_eq!(sized_text(&[0xfb], ty::I8), "-5");
        assert_eq!(sized_text(&[0xfb], ty::U8), "251");
        assert_eq!(sized_text(&[0x00, 0x30], ty::U16), "12288");
        assert_eq!(sized_text(&[0xff, 0xff], ty::I16), "-1");
        assert_eq!(sized_text(&[0xc8, 1, 0, 0], ty::U32), "456");
        assert_eq!(sized_text(&[0xff; 4], ty::I32), "-1");
        assert_eq!(sized_text(&[0xff; 8], ty::U64), "18446744073709551615");
        assert_eq!(sized_text(&[0xff; 8], ty::I64), "-1");
    }

    #[test]
    fn bools_and_irregular_bools() {
        assert_eq!(sized_text(&[1, 0, 0, 0], ty::BOOL), "true");
        assert_eq!(sized_text(&[0, 0, 0, 0], ty::BOOL), "false");
        let (slot, _) = sized(&[16, 0, 0, 0], ty::BOOL);
        assert!(matches!(slot, Slot::Value(v) if v.ty == ty::I32));
        assert_eq!(sized_text(&[0, 0, 1, 0], ty::BOOL), "65536");
    }

    #[test]
    fn hex_guid_binary() {
        assert_eq!(sized_text(&[0xe7, 3, 0, 0], ty::HEX32), "0x3e7");
        assert_eq!(sized_text(&[0; 4], ty::HEX32), "0x0");
        assert_eq!(
            sized_text(&[0, 0, 0, 0, 0, 0, 0x20, 0x80], ty::HEX64),
            "0x8020000000000000"
        );
        assert_eq!(sized_text(&[0xec, 0x7e, 0, 0], ty::SIZET), "0x7eec");
        assert_eq!(
            sized_text(&[0xde, 0xad, 0xbe, 0xef], ty::BINARY),
            "DEADBEEF"
        );
        let g: Vec<u8> = (0..16).collect();
        assert_eq!(
            sized_text(&g, ty::GUID),
            "{03020100-0504-0706-0809-0a0b0c0d0e0f}"
        );
        assert!(decode_sized(&[0; 3], 0, ty::SIZET, 3, encoding_rs::WINDOWS_1252).is_err());
    }

    #[test]
    fn hex_equals_std_formatting() {
        // Every digit count (1..=16), and values with zero bytes inside.
        let mut v = 0x9e37_79b9_7f4a_7c15u64;
        for shift in 0..64 {
            for x in [
                1u64 << shift,
                (1u64 << shift) - 1,
                v >> shift,
                (v >> shift) & !0xff00,
            ] {
                let mut o = Vec::new();
                write_hex(&mut o, x);
                assert_eq!(String::from_utf8(o).unwrap(), format!("0x{x:x}"));
            }
            v = v.rotate_left(7) ^ 0x5555;
        }
    }

    #[test]
    fn decimal_equals_std_formatting() {
        // Every digit count (each power of ten and its neighbours), each type's extremes, and
        // a prefix already in the buffer (the fixed-size copy must keep it and drop its tail).
        fn check<I: Decimal + std::fmt::Display>(v: I) {
            let mut o = b"<".to_vec();
            write_int(&mut o, v);
            o.push(b'>');
            assert_eq!(String::from_utf8(o).unwrap(), format!("<{v}>"));
        }
        let mut p = 1u64;
        for _ in 0..20 {
            for v in [p - 1, p, p + 1, p.wrapping_mul(7) / 3] {
                check(v);
                check(v as u32);
                check(v as i64);
                check((v as i64).wrapping_neg());
                check(v as i32);
            }
            p = p.wrapping_mul(10);
        }
        check(u64::MAX);
        check(i64::MIN);
        check(i64::MAX);
        check(i32::MIN);
        check(u32::MAX);
        check(i16::MIN);
        check(u16::MAX);
        check(i8::MIN);
        check(u8::MAX);
        check(usize::MAX);
        let mut v = 0x9e37_79b9_7f4a_7c15u64;
        for _ in 0..10_000 {
            v ^= v << 13;
            v ^= v >> 7;
            v ^= v << 17;
            check(v >> (v % 64));
            check((v >> (v % 64)) as i64);
        }
    }

    #[test]
    fn sids_equal_std_formatting() {
        // Extremes of every field: revision, the 48-bit authority, each sub-authority.
        for (rev, auth, subs) in [
            (
                255u8,
                0xffff_ffff_ffffu64,
                vec![u32::MAX, 0, 9, 10, 4_000_000_000],
            ),
            (0, 0, vec![]),
            (1, 5, vec![21, 1]),
            (9, 123_456_789_012_345, vec![u32::MAX; 15]),
        ] {
            let mut b = vec![rev, subs.len() as u8];
            b.extend_from_slice(&auth.to_be_bytes()[2..]);
            for s in &subs {
                b.extend_from_slice(&s.to_le_bytes());
            }
            let mut want = format!("S-{rev}-{auth}");
            for s in &subs {
                want.push_str(&format!("-{s}"));
            }
            let mut o = b"x".to_vec();
            write_sid(&mut o, &b);
            assert_eq!(String::from_utf8(o).unwrap(), format!("x{want}"));
        }
    }

    /// A SID's bytes and its text by `format!` (the contract's form, not the formatter's).
    fn sid_case(rev: u8, auth: u64, subs: &[u32]) -> (Vec<u8>, String) {
        let mut b = vec![rev, subs.len() as u8];
        b.extend_from_slice(&auth.to_be_bytes()[2..]);
        let mut want = format!("S-{rev}-{auth}");
        for s in subs {
            b.extend_from_slice(&s.to_le_bytes());
            want.push_str(&format!("-{s}"));
        }
        (b, want)
    }

    #[test]
    fn memo_sids_equal_std_formatting() {
        // A pool of 200 SIDs with 0-16 sub-authorities (16: past the memo's limit), many
        // sharing their last sub-authority and length (same slot, different bytes), drawn
        // 3,000 times through one memo: hits, misses and evictions must all give the text.
        let mut next = crate::testing::xorshift(0x2545_f491_4f6c_dd1d);
        let pool: Vec<(Vec<u8>, String)> = (0..200)
            .map(|i| {
                let n = (next() % 17) as usize;
                let mut subs: Vec<u32> = (0..n).map(|_| next() as u32).collect();
                if let Some(last) = subs.last_mut() {
                    *last = (i % 7) as u32 * 1000;
                }
                sid_case(next() as u8, next() & 0xffff_ffff_ffff, &subs)
            })
            .collect();
        let mut memo = Memo::default();
        for _ in 0..3000 {
            let (b, want) = &pool[(next() % 200) as usize];
            let mut o = b"x".to_vec();
            memo.write_sid(&mut o, b);
            o.push(b'y');
            assert_eq!(String::from_utf8(o).unwrap(), format!("x{want}y"));
        }
    }

    #[test]
    fn memo_filetimes_equal_the_formatter() {
        // Through one memo: runs within a day, across midnight (both ways), years back, the
        // largest valid value and past it, then random values over three days.
        const DAY: u64 = 864_000_000_000;
        let base = 154_000 * DAY; // 2022-08-28
        let mut values = vec![
            base,
            base + 1,
            base + DAY - 1,
            base + DAY,
            base + DAY - 1,
            base - 1,
            3 * DAY,
            0,
            i64::MAX as u64,
            i64::MAX as u64 + 1,
            u64::MAX,
            base + 5,
        ];
        let mut next = crate::testing::xorshift(0x9e37_79b9_7f4a_7c15);
        for _ in 0..1000 {
            let x = next();
            values.push(base + x % (3 * DAY));
        }
        let mut memo = Memo::default();
        for ft in values {
            let (mut got, mut want) = (b"x".to_vec(), b"x".to_vec());
            memo.write_filetime(&mut got, ft);
            write_filetime(&mut want, ft);
            assert_eq!(got, want, "{ft}");
        }
    }

    #[test]
    fn memo_hexes_equal_std_formatting() {
        // A pool of 1,000 numbers (zero, which every slot starts as, numbers with only high
        // bits set as `Keywords` has, and random ones of every length) drawn 20,000 times
        // through one memo of `HEX_SLOTS` (256, PERF.md H135): hits, misses and evictions must
        // all give `format!`'s text.
        let mut next = crate::testing::xorshift(0x2545_f491_4f6c_dd1d);
        let mut pool: Vec<u64> = (0..1000).map(|_| next() >> (next() % 64)).collect();
        pool[0] = 0;
        pool[1] = 0x8020_0000_0000_0000;
        pool[2] = 0x8010_0000_0000_0000;
        pool[3] = u64::MAX;
        let mut memo = Memo::default();
        for _ in 0..20_000 {
            let v = pool[(next() % 1000) as usize];
            let mut o = b"x".to_vec();
            memo.write_hex(&mut o, v);
            o.push(b'y');
            assert_eq!(String::from_utf8(o).unwrap(), format!("x{v:#x}y"));
        }
    }

    #[test]
    fn memo_guids_equal_std_formatting() {
        // A pool of 100 GUIDs (the zero GUID among them: every slot starts as it) drawn 2,000
        // times through one memo of 32 slots: hits, misses and evictions must all give the
        // text, which `format!` writes here from the GUID's fields.
        let mut next = crate::testing::xorshift(0x853c_49e6_748f_ea9b);
        let mut pool: Vec<[u8; 16]> = (0..100)
            .map(|_| (u128::from(next()) << 64 | u128::from(next())).to_le_bytes())
            .collect();
        pool[7] = [0; 16];
        let mut memo = Memo::default();
        for _ in 0..2000 {
            let g = pool[(next() % 100) as usize];
            let d1 = u32::from_le_bytes([g[0], g[1], g[2], g[3]]);
            let d2 = u16::from_le_bytes([g[4], g[5]]);
            let d3 = u16::from_le_bytes([g[6], g[7]]);
            let tail: String = g[10..].iter().map(|b| format!("{b:02x}")).collect();
            let want = format!(
                "x{{{d1:08x}-{d2:04x}-{d3:04x}-{:02x}{:02x}-{tail}}}y",
                g[8], g[9]
            );
            let mut o = b"x".to_vec();
            memo.write_guid(&mut o, &g);
            o.push(b'y');
            assert_eq!(String::from_utf8(o).unwrap(), want);
        }
    }

    #[test]
    fn timestamp_digits_equal_std_formatting() {
        for (i, frac) in [
            0u32, 1, 9, 10, 99, 100, 123_456, 999_999, 1_000_000, 9_999_999,
        ]
        .into_iter()
        .enumerate()
        {
            let (h, mi, s) = (i as u32 * 2, 59 - i as u32, i as u32 * 6);
            let mut o = Vec::new();
            write_timestamp(
                &mut o,
                2016 + i as u32,
                1 + i as u32,
                10 + i as u32,
                h,
                mi,
                s,
                frac,
            );
            let want = format!(
                "{:04}-{:02}-{:02}T{h:02}:{mi:02}:{s:02}.{frac:07}Z",
                2016 + i,
                1 + i,
                10 + i
            );
            assert_eq!(String::from_utf8(o).unwrap(), want);
        }
    }

    #[test]
    fn evt_handle_like_sizet() {
        assert_eq!(sized_text(&[0x10, 0, 0, 0], ty::EVT_HANDLE), "0x10");
        assert_eq!(
            sized_text(&[1, 0, 0, 0, 0, 0, 0, 1], ty::EVT_HANDLE),
            "0x100000000000001"
        );
        assert!(decode_unsized(&[0; 8], 0, ty::EVT_HANDLE).is_err());
    }

    #[test]
    fn sids() {
        let mut b = vec![1, 5, 0, 0, 0, 0, 0, 5];
        for s in [21u32, 1223297778, 3299746493, 1462173606, 500] {
            b.extend_from_slice(&s.to_le_bytes());
        }
        assert_eq!(
            sized_text(&b, ty::SID),
            "S-1-5-21-1223297778-3299746493-1462173606-500"
        );
        assert_eq!(sized_text(&[0; 8], ty::SID), "S-0-0");
        // A SID whose count exceeds the declared size reads past it.
        let (_, end) = decode_sized(&b, 0, ty::SID, 8, encoding_rs::WINDOWS_1252).unwrap();
        assert_eq!(end, b.len());
    }

    #[test]
    fn guids_as_the_reference_displays_them() {
        // `wevt/instances.evtx` record 1's inline definition GUID, as the reference prints
        // it: d1, d2 and d3 are little-endian, the last eight bytes as stored.
        let g = [
            0x43, 0x2A, 0x2C, 0x5F, 0x86, 0xAA, 0x81, 0x24, 0x02, 0xF3, 0xEC, 0xE8, 0x17, 0x38,
            0x36, 0x95,
        ];
        let mut out = b"x".to_vec();
        write_guid_upper(&mut out, &g);
        assert_eq!(out, b"x5F2C2A43-AA86-2481-02F3-ECE817383695");
    }

    #[test]
    fn record_timestamps_without_trailing_zeros() {
        // 2024-03-01T08:00:01Z is Unix 1709280001, 11644473600 s after 1601-01-01.
        let ft = (1_709_280_001 + 11_644_473_600) * 10_000_000;
        let t = |ft: u64| {
            let mut out = b"x".to_vec();
            write_filetime_trimmed(&mut out, ft);
            String::from_utf8(out).unwrap()
        };
        assert_eq!(t(ft), "x2024-03-01T08:00:01Z");
        assert_eq!(t(ft + 1_234_500), "x2024-03-01T08:00:01.12345Z");
        assert_eq!(t(ft + 1), "x2024-03-01T08:00:01.0000001Z");
        assert_eq!(t(ft + 9_000_000), "x2024-03-01T08:00:01.9Z");
        // Out of range: the zero date, its fraction cut too.
        assert_eq!(t(u64::MAX), "x0000-00-00T00:00:00Z");
    }

    #[test]
    fn filetimes() {
        let t = |ft: u64| {
            let mut o = Vec::new();
            write_filetime(&mut o, ft);
            String::from_utf8(o).unwrap()
        };
        assert_eq!(t(0x01d1_d944_5757_9618), "2016-07-08T18:12:51.6816408Z");
        assert_eq!(t(0), "1601-01-01T00:00:00.0000000Z");
        assert_eq!(t(0x7fff_ffff_ffff_ffff), "0828-09-14T02:48:05.4775807Z");
        assert_eq!(t(0x8000_0000_0000_0000), "0000-00-00T00:00:00.0000000Z");
    }

    #[test]
    fn filetime_dates_follow_the_calendar() {
        // Every day from 1601-01-01 to the end of 2404 (1700, 1800, 1900 and 2100 not leap;
        // 2000 and 2400 leap), counted with `days_in_month`, not with `civil_from_days`.
        const TICKS_PER_DAY: u64 = 864_000_000_000;
        let (mut y, mut m, mut d) = (1601u32, 1u32, 1u32);
        let mut o = Vec::new();
        for day in 0..293_655u64 {
            o.clear();
            write_filetime(&mut o, day * TICKS_PER_DAY + TICKS_PER_DAY - 1);
            let want = format!("{y:04}-{m:02}-{d:02}T23:59:59.9999999Z");
            assert_eq!(o, want.as_bytes(), "day {day}");
            d += 1;
            if d > days_in_month(y, m) {
                d = 1;
                m += 1;
                if m > 12 {
                    m = 1;
                    y += 1;
                }
            }
        }
        assert_eq!((y, m, d), (2405, 1, 1));
    }

    #[test]
    fn systimes() {
        let st = |f: [u16; 8]| {
            let b: Vec<u8> = f.iter().flat_map(|x| x.to_le_bytes()).collect();
            let mut o = Vec::new();
            write_systime(&mut o, &b);
            String::from_utf8(o).unwrap()
        };
        assert_eq!(
            st([2019, 3, 5, 8, 23, 23, 5, 789]),
            "2019-03-08T23:23:05.7890000Z"
        );
        assert_eq!(st([0; 8]), "1601-01-01T00:00:00.0000000Z");
        assert_eq!(
            st([2019, 2, 0, 29, 0, 0, 0, 0]),
            "1601-01-01T00:00:00.0000000Z"
        );
        assert_eq!(
            st([2020, 2, 0, 29, 0, 0, 0, 0]),
            "2020-02-29T00:00:00.0000000Z"
        );
        assert_eq!(
            st([30827, 12, 0, 31, 23, 59, 59, 999]),
            "0827-12-31T23:59:59.9990000Z"
        );
    }

    #[test]
    fn floats() {
        let f = |v: f64| {
            let mut o = Vec::new();
            write_f64(&mut o, v);
            String::from_utf8(o).unwrap()
        };
        let g = |v: f32| {
            let mut o = Vec::new();
            write_f32(&mut o, v);
            String::from_utf8(o).unwrap()
        };
        assert_eq!(f(1.5), "1.5");
        assert_eq!(f(0.00001), "0.00001");
        assert_eq!(f(0.000001), "1e-6");
        assert_eq!(f(1e16), "1e+16");
        assert_eq!(f(1e15), "1000000000000000.0");
        assert_eq!(f(3.0), "3.0");
        assert_eq!(f(123456789012345.6), "123456789012345.6");
        assert_eq!(f(1.25e-7), "1.25e-7");
        assert_eq!(f(5e-324), "5e-324");
        assert_eq!(f(-2.5), "-2.5");
        assert_eq!(f(0.0), "0.0");
        assert_eq!(f(-0.0), "-0.0");
        assert_eq!(f(f64::NAN), "NaN");
        assert_eq!(f(f64::INFINITY), "inf");
        assert_eq!(f(f64::NEG_INFINITY), "-inf");
        assert_eq!(g(3.4028235e38), "3.4028235e+38");
        assert_eq!(g(0.000001), "0.000001");
        assert_eq!(g(1e13), "1e+13");
        assert_eq!(g(1e12), "1000000000000.0");
    }

    #[test]
    fn strings_and_arrays() {
        // "a","","c,d" as a string array.
        let mut b = Vec::new();
        for s in ["a", "", "c,d"] {
            b.extend(s.encode_utf16().flat_map(|u| u.to_le_bytes()));
            b.extend_from_slice(&[0, 0]);
        }
        let (slot, end) = sized(&b, 0x81);
        assert_eq!(end, b.len());
        let Slot::Value(v) = slot else { panic!() };
        assert_eq!(v.count, 3);
        assert_eq!(text(&v, &b), "a,,c,d");
        // Odd-sized string fails.
        assert!(decode_sized(&[0x41, 0, 0], 0, ty::STRING, 3, encoding_rs::WINDOWS_1252).is_err());
        // String cut at NUL (when written); a leading NUL makes it empty.
        let b = [0x41, 0, 0, 0, 0x42, 0];
        let (slot, _) = sized(&b, ty::STRING);
        let Slot::Text16 { off, units } = slot else {
            panic!()
        };
        let mut o = Vec::new();
        let (s, e) = (off as usize, (off + 2 * units) as usize);
        escape::write_utf16(&mut o, &b[s..e], Mode::JsonUpper);
        assert_eq!(o, b"A");
        assert!(!slot.is_empty());
        assert!(sized(&[0, 0, 0x42, 0], ty::STRING).0.is_empty());
        // Int32 array.
        let b: Vec<u8> = [-1i32, 2].iter().flat_map(|x| x.to_le_bytes()).collect();
        assert_eq!(sized_text(&b, 0x87), "-1,2");
        assert!(decode_sized(&b, 0, 0x87, 7, encoding_rs::WINDOWS_1252).is_err());
        // Bool array with a non-bool item becomes Int32.
        let b: Vec<u8> = [1i32, 16].iter().flat_map(|x| x.to_le_bytes()).collect();
        assert_eq!(sized_text(&b, 0x8d), "1,16");
        let b: Vec<u8> = [1i32, 0].iter().flat_map(|x| x.to_le_bytes()).collect();
        assert_eq!(sized_text(&b, 0x8d), "true,false");
        // SizeT array of 8-byte items; Binary array is one binary value.
        let b: Vec<u8> = [1u64, 2].iter().flat_map(|x| x.to_le_bytes()).collect();
        assert_eq!(sized_text(&b, 0x90), "0x1,0x2");
        assert_eq!(sized_text(&[1, 2, 3], 0x8e), "010203");
        assert!(decode_sized(&[0; 6], 0, 0x90, 6, encoding_rs::WINDOWS_1252).is_err());
        // ANSI array.
        assert_eq!(sized_text(b"ab\0\0c\0", 0x82), "ab,,c");
    }

    #[test]
    fn ansi_removes_nuls() {
        let b = b"a\0b\xe9";
        let (slot, _) = sized(b, ty::ANSI);
        let Slot::Ansi { off, len } = slot else {
            panic!()
        };
        let mut o = Vec::new();
        write_ansi(
            &mut o,
            &b[off as usize..(off + len) as usize],
            encoding_rs::WINDOWS_1252,
            Flavor::Json,
        );
        assert_eq!(o, "abé".as_bytes());
        assert_eq!(sized(b"\0\0", ty::ANSI).0, Slot::Ansi { off: 0, len: 0 });
        // 0x81 maps to U+0081 in WHATWG windows-1252.
        let mut o = Vec::new();
        write_ansi(&mut o, b"\x81", encoding_rs::WINDOWS_1252, Flavor::XmlText);
        assert_eq!(o, "\u{81}".as_bytes());
    }

    #[test]
    fn unknown_and_unsupported_types() {
        assert!(!is_known_type(0x16));
        assert!(!is_known_type(0x22));
        assert!(is_known_type(0x23));
        assert!(!is_known_type(0x96));
        assert!(decode_unsized(&[0; 4], 0, ty::BINARY).is_err());
        assert!(decode_unsized(&[0; 4], 0, ty::ANSI).is_err());
    }

    #[test]
    fn fixed_value_reads_past_small_size() {
        let b = [7, 0, 0, 0, 0x63, 0];
        let (_, end) = decode_sized(&b, 0, ty::U32, 2, encoding_rs::WINDOWS_1252).unwrap();
        assert_eq!(end, 4);
    }
}
