//! Value types (contract section 7), decoding: from the chunk bytes into raw spans, emptiness,
//! array items. Their text forms are [`crate::values_format`]'s.
//!
//! Values are never materialised: a [`Value`] is a type code plus a span of the chunk, and is
//! formatted from those bytes when rendered. Decoding at instance time only validates and
//! measures (how many bytes the value consumed, how many array items it has).

use crate::bytes::{get_u16, get_u32};
use crate::error::{BinXmlError, BinXmlResult};
use encoding_rs::Encoding;

/// Value type codes (section 7.1).
pub mod ty {
    pub const NULL: u8 = 0x00;
    pub const STRING: u8 = 0x01;
    pub const ANSI: u8 = 0x02;
    pub const I8: u8 = 0x03;
    pub const U8: u8 = 0x04;
    pub const I16: u8 = 0x05;
    pub const U16: u8 = 0x06;
    pub const I32: u8 = 0x07;
    pub const U32: u8 = 0x08;
    pub const I64: u8 = 0x09;
    pub const U64: u8 = 0x0a;
    pub const F32: u8 = 0x0b;
    pub const F64: u8 = 0x0c;
    pub const BOOL: u8 = 0x0d;
    pub const BINARY: u8 = 0x0e;
    pub const GUID: u8 = 0x0f;
    pub const SIZET: u8 = 0x10;
    pub const FILETIME: u8 = 0x11;
    pub const SYSTIME: u8 = 0x12;
    pub const SID: u8 = 0x13;
    pub const HEX32: u8 = 0x14;
    pub const HEX64: u8 = 0x15;
    pub const EVT_HANDLE: u8 = 0x20;
    pub const BINXML: u8 = 0x21;
    pub const EVT_XML: u8 = 0x23;
    pub const ARRAY: u8 = 0x80;
}

/// Whether `t` is a known type code (section 7.1).
#[inline]
pub fn is_known_type(t: u8) -> bool {
    matches!(t, 0x00..=0x15 | 0x20 | 0x21 | 0x23 | 0x81..=0x95)
}

/// Whether values of type `t` are written as bare JSON numbers/booleans (7.5).
#[inline]
pub fn is_bare_json(t: u8) -> bool {
    matches!(t, ty::I8..=ty::U64 | ty::BOOL)
}

/// Natural width of fixed-size scalar types, 0 for others.
#[inline]
pub fn fixed_width(t: u8) -> usize {
    FIXED_WIDTH[usize::from(t)] as usize
}

static FIXED_WIDTH: [u8; 256] = {
    let mut w = [0u8; 256];
    w[ty::I8 as usize] = 1;
    w[ty::U8 as usize] = 1;
    w[ty::I16 as usize] = 2;
    w[ty::U16 as usize] = 2;
    w[ty::I32 as usize] = 4;
    w[ty::U32 as usize] = 4;
    w[ty::F32 as usize] = 4;
    w[ty::BOOL as usize] = 4;
    w[ty::HEX32 as usize] = 4;
    w[ty::I64 as usize] = 8;
    w[ty::U64 as usize] = 8;
    w[ty::F64 as usize] = 8;
    w[ty::FILETIME as usize] = 8;
    w[ty::HEX64 as usize] = 8;
    w[ty::GUID as usize] = 16;
    w[ty::SYSTIME as usize] = 16;
    w
};

/// A typed value: type code and a span of the chunk. For arrays, `count` is the number of items
/// (for SizeT arrays the item width is `len / count`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Value {
    pub ty: u8,
    /// Origin: 1 + the record-wide index of the substitution value this node came from, 0 for
    /// template-literal values (used to record replay programs, see `program`).
    pub src: u16,
    /// For a node that is item `k` of an expanded array value: `k + 1`; else 0.
    pub item: u16,
    /// Number of items (arrays; 1 for scalars).
    pub count: u16,
    pub off: u32,
    pub len: u32,
}

impl Value {
    /// The Null value.
    pub const NULL: Value = Value {
        ty: ty::NULL,
        src: 0,
        item: 0,
        count: 0,
        off: 0,
        len: 0,
    };

    /// Emptiness of section 7.4 (strings are text nodes and handled elsewhere).
    #[inline]
    pub fn is_empty(&self) -> bool {
        match self.ty {
            ty::NULL => true,
            ty::BINARY => self.len == 0,
            t if t & ty::ARRAY != 0 => self.count == 0,
            _ => false,
        }
    }

    /// Whether this is an array with more than one item (expanded when copied, 6.8).
    #[inline]
    pub fn is_expandable(&self) -> bool {
        self.ty & ty::ARRAY != 0 && self.count > 1
    }
}

/// A decoded value slot of a template instance, or the payload of a value-text token.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Slot {
    /// Null (also an empty BinXML value).
    Null,
    /// UTF-16 text: `units` code units at chunk offset `off` (cut at the first NUL).
    Text16 { off: u32, units: u32 },
    /// ANSI bytes at `off` (NULs are removed when rendered; `len == 0` when all were NULs).
    Ansi { off: u32, len: u32 },
    /// Any other typed value.
    Value(Value),
    /// A non-empty BinXML stream at `off`.
    BinXml { off: u32, len: u32 },
    /// A parsed BinXML value: its top-level element nodes, a run of the record tree's nodes
    /// (set by the token parser, never by the decoders here).
    Fragment { start: u32, len: u32 },
}

impl Slot {
    /// Emptiness of section 7.4.
    pub fn is_empty(&self) -> bool {
        match *self {
            Slot::Null => true,
            Slot::Text16 { units, .. } => units == 0,
            Slot::Ansi { len, .. } => len == 0,
            Slot::Value(v) => v.is_empty(),
            Slot::BinXml { len, .. } => len == 0,
            Slot::Fragment { .. } => false,
        }
    }
}

#[cold]
fn err(what: &'static str, at: usize) -> BinXmlError {
    BinXmlError::new(what, at)
}

#[inline]
fn need(chunk: &[u8], pos: usize, n: usize) -> BinXmlResult<()> {
    if pos.checked_add(n).is_some_and(|e| e <= chunk.len()) {
        Ok(())
    } else {
        Err(err("value past the end of the chunk", pos))
    }
}

/// Length in bytes of the SID at `pos`.
fn sid_len(chunk: &[u8], pos: usize) -> BinXmlResult<usize> {
    need(chunk, pos, 8)?;
    let len = 8 + 4 * usize::from(chunk[pos + 1]);
    need(chunk, pos, len)?;
    Ok(len)
}

/// Whether the ANSI bytes (NULs removed) decode strictly with `codec`.
fn ansi_ok(codec: &'static Encoding, bytes: &[u8]) -> bool {
    if codec == encoding_rs::WINDOWS_1252 {
        return true;
    }
    let filtered: Vec<u8> = bytes.iter().copied().filter(|&b| b != 0).collect();
    codec
        .decode_without_bom_handling_and_without_replacement(&filtered)
        .is_some()
}

fn ansi_slot(chunk: &[u8], pos: usize, len: usize) -> Slot {
    let bytes = &chunk[pos..pos + len];
    let len = if bytes.iter().all(|&b| b == 0) {
        0
    } else {
        len
    };
    Slot::Ansi {
        off: pos as u32,
        len: len as u32,
    }
}

/// A UTF-16 text slot. The text is cut at its first NUL when written (the escapers stop
/// there); here only emptiness matters, so a text starting with NUL gets `units == 0`.
pub(crate) fn text16(chunk: &[u8], pos: usize, units: usize) -> Slot {
    let units = if units > 0 && chunk[pos] == 0 && chunk[pos + 1] == 0 {
        0
    } else {
        units
    };
    Slot::Text16 {
        off: pos as u32,
        units: units as u32,
    }
}

fn value(t: u8, pos: usize, len: usize, count: usize) -> Slot {
    Slot::Value(Value {
        ty: t,
        src: 0,
        item: 0,
        count: count as u16,
        off: pos as u32,
        len: len as u32,
    })
}

/// Decodes a substitution value of type `t` with declared `size` at chunk offset `pos`
/// (section 7.2, "with declared size"). Returns the slot and the position where decoding
/// stopped (which may be before or after `pos + size`; the caller applies 6.4). Steps: the
/// fixed-width scalars, the arrays (`decode_array`), then the other scalars here.
pub fn decode_sized(
    chunk: &[u8],
    pos: usize,
    t: u8,
    size: usize,
    codec: &'static Encoding,
) -> BinXmlResult<(Slot, usize)> {
    if let Some(fixed) = read_fixed(chunk, pos, t) {
        return fixed;
    }
    if t & ty::ARRAY != 0 {
        return decode_array(chunk, pos, t, size, codec);
    }
    match t {
        ty::NULL => Ok((Slot::Null, pos)),
        ty::STRING | ty::EVT_XML => {
            if !size.is_multiple_of(2) {
                return Err(err("odd-sized UTF-16 string", pos));
            }
            need(chunk, pos, size)?;
            Ok((text16(chunk, pos, size / 2), pos + size))
        }
        ty::ANSI => {
            need(chunk, pos, size)?;
            if !ansi_ok(codec, &chunk[pos..pos + size]) {
                return Err(err("invalid ANSI sequence", pos));
            }
            Ok((ansi_slot(chunk, pos, size), pos + size))
        }
        ty::BINARY => {
            need(chunk, pos, size)?;
            Ok((value(ty::BINARY, pos, size, 1), pos + size))
        }
        ty::SIZET | ty::EVT_HANDLE => match size {
            4 | 8 => {
                need(chunk, pos, size)?;
                Ok((value(ty::SIZET, pos, size, 1), pos + size))
            }
            _ => Err(err("unsupported SizeT/EvtHandle size", pos)),
        },
        ty::SID => {
            let len = sid_len(chunk, pos)?;
            Ok((value(ty::SID, pos, len, 1), pos + len))
        }
        ty::BINXML => {
            need(chunk, pos, size)?;
            let slot = if size == 0 {
                Slot::Null
            } else {
                Slot::BinXml {
                    off: pos as u32,
                    len: size as u32,
                }
            };
            Ok((slot, pos + size))
        }
        _ => Err(err("unsupported value type", pos)),
    }
}

/// `decode_sized` of an array type (`t & 0x80`, section 7.3). Out of line: arrays are rare in
/// logs, and the scalar cases stay small enough to inline.
#[inline(never)]
fn decode_array(
    chunk: &[u8],
    pos: usize,
    t: u8,
    size: usize,
    codec: &'static Encoding,
) -> BinXmlResult<(Slot, usize)> {
    match t {
        0x81 => decode_string_array(chunk, pos, size),
        0x82 => decode_ansi_array(chunk, pos, size, codec),
        // Binary array: one Binary value (shared-fixtures rule).
        0x8e => {
            need(chunk, pos, size)?;
            Ok((value(ty::BINARY, pos, size, 1), pos + size))
        }
        0x90 => decode_size_t_array(chunk, pos, size),
        0x93 => decode_sid_array(chunk, pos, size),
        0x83..=0x8d | 0x8f | 0x91 | 0x92 | 0x94 | 0x95 => decode_fixed_array(chunk, pos, t, size),
        _ => Err(err("unsupported value type", pos)),
    }
}

/// String array: NUL-terminated strings until at least `size` bytes are consumed.
fn decode_string_array(chunk: &[u8], pos: usize, size: usize) -> BinXmlResult<(Slot, usize)> {
    let t = ty::ARRAY | ty::STRING;
    if size == 0 {
        return Ok((value(t, pos, 0, 0), pos));
    }
    let mut p = pos;
    let mut count = 0usize;
    while p < pos + size {
        loop {
            let u = get_u16(chunk, p).ok_or_else(|| err("unterminated string array", p))?;
            p += 2;
            if u == 0 {
                break;
            }
        }
        count += 1;
    }
    Ok((value(t, pos, p - pos, count), p))
}

/// ANSI string array: drop one trailing NUL, split on NUL; every item must decode.
fn decode_ansi_array(
    chunk: &[u8],
    pos: usize,
    size: usize,
    codec: &'static Encoding,
) -> BinXmlResult<(Slot, usize)> {
    need(chunk, pos, size)?;
    let raw = &chunk[pos..pos + size];
    let count = if raw.is_empty() {
        0
    } else {
        let raw = raw.strip_suffix(&[0]).unwrap_or(raw);
        let mut count = 0;
        for item in raw.split(|&b| b == 0) {
            if !ansi_ok(codec, item) {
                return Err(err("invalid ANSI sequence", pos));
            }
            count += 1;
        }
        count
    };
    Ok((value(ty::ARRAY | ty::ANSI, pos, size, count), pos + size))
}

/// SizeT array: 8-byte items when possible, else 4-byte items.
fn decode_size_t_array(chunk: &[u8], pos: usize, size: usize) -> BinXmlResult<(Slot, usize)> {
    let w = if size.is_multiple_of(8) {
        8
    } else if size.is_multiple_of(4) {
        4
    } else {
        return Err(err("misaligned SizeT array", pos));
    };
    need(chunk, pos, size)?;
    Ok((
        value(ty::ARRAY | ty::SIZET, pos, size, size / w),
        pos + size,
    ))
}

/// SID array: whole SIDs until at least `size` bytes are consumed.
fn decode_sid_array(chunk: &[u8], pos: usize, size: usize) -> BinXmlResult<(Slot, usize)> {
    let t = ty::ARRAY | ty::SID;
    if size == 0 {
        return Ok((value(t, pos, 0, 0), pos));
    }
    let mut p = pos;
    let mut count = 0;
    while p - pos < size {
        p += sid_len(chunk, p)?;
        count += 1;
    }
    Ok((value(t, pos, p - pos, count), p))
}

/// Array of a fixed-width type; a Bool array with an item other than 0 or 1 reads as Int32.
fn decode_fixed_array(chunk: &[u8], pos: usize, t: u8, size: usize) -> BinXmlResult<(Slot, usize)> {
    let w = fixed_width(t & 0x7f);
    if size == 0 {
        return Ok((value(t, pos, 0, 0), pos));
    }
    if !size.is_multiple_of(w) {
        return Err(err("misaligned array", pos));
    }
    need(chunk, pos, size)?;
    let mut t = t;
    if t == ty::ARRAY | ty::BOOL {
        let all_bool = chunk[pos..pos + size]
            .chunks_exact(4)
            .all(|c| matches!(i32::from_le_bytes([c[0], c[1], c[2], c[3]]), 0 | 1));
        if !all_bool {
            t = ty::ARRAY | ty::I32;
        }
    }
    Ok((value(t, pos, size, size / w), pos + size))
}

fn bool_slot(chunk: &[u8], pos: usize) -> Slot {
    let raw = get_u32(chunk, pos).unwrap_or(0) as i32;
    let t = if matches!(raw, 0 | 1) {
        ty::BOOL
    } else {
        ty::I32
    };
    value(t, pos, 4, 1)
}

/// Fixed-width types (integers, floats, bools, GUIDs, times, hex) read the same with or
/// without a declared size; `None` for every other type.
#[inline]
fn read_fixed(chunk: &[u8], pos: usize, t: u8) -> Option<BinXmlResult<(Slot, usize)>> {
    let w = fixed_width(t);
    if w == 0 {
        return None;
    }
    Some(need(chunk, pos, w).map(|()| {
        let slot = if t == ty::BOOL {
            bool_slot(chunk, pos)
        } else {
            value(t, pos, w, 1)
        };
        (slot, pos + w)
    }))
}

/// Decodes the payload of a value-text token (type `t`, no declared size) at `pos`
/// (section 7.2, "without size"). BinXML payloads come back as [`Slot::BinXml`] (or `Null`
/// when empty).
pub fn decode_unsized(chunk: &[u8], pos: usize, t: u8) -> BinXmlResult<(Slot, usize)> {
    if let Some(fixed) = read_fixed(chunk, pos, t) {
        return fixed;
    }
    match t {
        ty::NULL => Ok((Slot::Null, pos)),
        ty::STRING | ty::EVT_XML => {
            let n = usize::from(get_u16(chunk, pos).ok_or_else(|| err("truncated string", pos))?);
            need(chunk, pos + 2, 2 * n)?;
            Ok((text16(chunk, pos + 2, n), pos + 2 + 2 * n))
        }
        ty::SID => {
            let len = sid_len(chunk, pos)?;
            Ok((value(ty::SID, pos, len, 1), pos + len))
        }
        ty::BINXML => {
            let n = usize::from(get_u16(chunk, pos).ok_or_else(|| err("truncated BinXML", pos))?);
            need(chunk, pos + 2, n)?;
            let slot = if n == 0 {
                Slot::Null
            } else {
                Slot::BinXml {
                    off: (pos + 2) as u32,
                    len: n as u32,
                }
            };
            Ok((slot, pos + 2 + n))
        }
        _ => Err(err("unsupported value type in value text", pos)),
    }
}

/// One item of an array, as a node payload: `None` for an empty string item.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Item {
    Text16 { off: u32, units: u32 },
    Ansi { off: u32, len: u32 },
    Value(Value),
}

/// Calls `f` for each item of array `v` in order.
pub fn for_each_item(chunk: &[u8], v: &Value, mut f: impl FnMut(Option<Item>)) {
    let (start, end) = (v.off as usize, (v.off + v.len) as usize);
    match v.ty {
        0x81 => {
            let mut p = start;
            while p < end {
                let s = p;
                while get_u16(chunk, p).is_some_and(|u| u != 0) {
                    p += 2;
                }
                let units = (p - s) / 2;
                p += 2;
                f((units > 0).then_some(Item::Text16 {
                    off: s as u32,
                    units: units as u32,
                }));
            }
        }
        0x82 => {
            if v.count == 0 {
                return;
            }
            let raw = &chunk[start..end];
            let raw = raw.strip_suffix(&[0]).unwrap_or(raw);
            let mut p = start;
            for item in raw.split(|&b| b == 0) {
                f((!item.is_empty()).then_some(Item::Ansi {
                    off: p as u32,
                    len: item.len() as u32,
                }));
                p += item.len() + 1;
            }
        }
        0x93 => {
            let mut p = start;
            while p < end {
                let len = 8 + 4 * usize::from(chunk[p + 1]);
                f(Some(Item::Value(Value {
                    ty: ty::SID,
                    src: 0,
                    item: 0,
                    count: 1,
                    off: p as u32,
                    len: len as u32,
                })));
                p += len;
            }
        }
        _ => {
            if v.count == 0 {
                return;
            }
            let w = v.len / u32::from(v.count);
            let scalar = if v.ty == 0x90 { ty::SIZET } else { v.ty & 0x7f };
            for k in 0..u32::from(v.count) {
                f(Some(Item::Value(Value {
                    ty: scalar,
                    src: 0,
                    item: 0,
                    count: 1,
                    off: v.off + k * w,
                    len: w,
                })));
            }
        }
    }
}
