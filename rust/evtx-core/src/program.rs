//! Replay programs: the compiled-template fast path.
//!
//! A record's output depends on its substitution values in two ways: through their *text*
//! (written where the value sits) and through their *shape* (Null or not, empty or not, type,
//! nested template, array expansion), which decides every structural choice of the renderers
//! (omitted elements, `null` vs `""`, bare numbers, attribute omission, ...). The *signature*
//! of a record captures the shape: template definition offsets, value counts and one class per
//! value, recursively through nested BinXML instances.
//!
//! The first record of a signature in a chunk is rendered the slow way (tree building and the
//! tree renderers) while a [`Recorder`] notes which output bytes came from which value. The
//! result is a program: literal byte runs and "write value N with this escaping" steps.
//! Every later record with the same signature is produced by replaying the program over its own
//! values, without building a tree. Both paths share the renderers, so they are byte-identical
//! by construction; records whose output could depend on value text beyond its position (a
//! `Data` `Name` taken from a value, arrays that expand) or whose stream has any other shape
//! are never recorded and always take the slow path.

use crate::escape;
use crate::filter::Plan;
use crate::simd;
use crate::template::{Identities, Templates};
use crate::tokens::{self, Scratch, Source};
use crate::tree::{Names, Node};
use crate::values_decode::{self, ty, Slot, Value};
use crate::values_format::{self, Flavor, Memo};
use encoding_rs::Encoding;
use std::cell::RefCell;
use std::sync::{Arc, Mutex, PoisonError};

// Records with an array of more items than `PROGRAM_ARRAY_ITEMS_MAX`, more values than
// `PROGRAM_VALUES_MAX` (all instances together) or instances nested deeper than
// `SIGNATURE_DEPTH_MAX` are not recorded; fragments with more names than the `FRAGMENT_NAME_*`
// bounds render the slow way. Programs are kept across chunks (signatures name definitions by
// content); `PROGRAMS_MAX` and `PROGRAM_BYTES_MAX` bound the memory a crafted file can make
// them take.
use crate::limits::{
    ELEMENT_DEPTH_MAX, FRAGMENT_NAME_BYTES_MAX, FRAGMENT_NAME_IDS_MAX, IDENTITY_BYTES_MAX,
    PROGRAMS_MAX, PROGRAM_ARRAY_ITEMS_MAX, PROGRAM_BYTES_MAX, PROGRAM_VALUES_MAX,
    SIGNATURE_DEPTH_MAX,
};

/// One step of a program: a literal run, then a value (evtx-zig's `Op`). Fused, a value and
/// the run before it take one turn of the replay's loop, not two (PERF.md H177).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Op {
    /// The literal run written before the value: `literal_len` bytes from `literal_start`
    /// of the program's literal buffer (often 0 bytes, between two adjacent values).
    literal_start: u32,
    literal_len: u32,
    /// The value escaped for `flavor`: `slot` is its index in `Programs::slots` (its
    /// record-wide number `src - 1`, taken once when recorded, not at every replay: PERF.md
    /// H182; evtx-zig's `Op.slot`); `item` is 0 for the whole value, `k + 1` for item `k` of
    /// an expanded array.
    slot: u16,
    item: u16,
    flavor: Flavor,
}

/// Notes, while the slow path renders, which bytes are literal and which come from values.
/// A renderer keeps one and `restart`s it for each record it records: its lists keep their
/// longest length, and a body gets an exact copy of them (PERF.md H153).
#[derive(Debug, Default)]
pub struct Recorder {
    ops: Vec<Op>,
    lits: Vec<u8>,
    /// Where in `lits` the literal run before the next value starts (it runs to the end).
    literal_start: u32,
    /// Output position up to which bytes have been accounted for.
    mark: usize,
    /// Set when the output depends on value text in a way a program cannot replay.
    pub uncacheable: bool,
}

impl Recorder {
    /// Starts recording output that starts at `out.len() == mark`, forgetting any earlier.
    pub fn restart(&mut self, mark: usize) {
        self.ops.clear();
        self.lits.clear();
        self.literal_start = 0;
        self.mark = mark;
        self.uncacheable = false;
    }

    fn flush_lit(&mut self, out: &[u8]) {
        if out.len() > self.mark {
            self.lits.extend_from_slice(&out[self.mark..]);
            self.mark = out.len();
        }
    }

    /// Notes value `src` (1-based record-wide number, not 0) written for `flavor` (item
    /// `item`), after the literal bytes flushed since the last value.
    fn push_value(&mut self, src: u16, item: u16, flavor: Flavor) {
        debug_assert!(src != 0);
        let end = self.lits.len() as u32;
        self.ops.push(Op {
            literal_start: self.literal_start,
            literal_len: end - self.literal_start,
            slot: src - 1,
            item,
            flavor,
        });
        self.literal_start = end;
    }

    /// The finished program for output `out` (whose recorded part started at the initial mark).
    /// A body lives as long as the run: its lists are allocated once at their final size
    /// (H137 shrank lists grown by doubling; H153 copies the recorder's instead, whose growth
    /// was most of a corpus run's page faults).
    fn finish(&mut self, out: &[u8]) -> Option<Body> {
        if self.uncacheable {
            return None;
        }
        self.flush_lit(out);
        let mut lits = Vec::with_capacity(self.lits.len() + simd::LITERAL_STEP);
        lits.extend_from_slice(&self.lits);
        lits.resize(self.lits.len() + simd::LITERAL_STEP, 0);
        Some(Body {
            ops: self.ops.clone(),
            lits,
            tail_start: self.literal_start,
            tail_len: self.lits.len() as u32 - self.literal_start,
            plan: Plan::default(),
            uses: 0,
        })
    }
}

/// One learnt program's steps and literal bytes (the ops' runs from 0, then the tail, the run
/// after the last value, then `LITERAL_STEP` bytes of padding so `simd::copy_literal` can
/// move a whole step from any run), never changed once made. At `-t 2` and up every renderer
/// that replays a program holds the same `Body` (PERF.md H137): an import is a reference
/// count, not a copy of the program into the renderer's own arrays (H118: those copies were a
/// third of the corpus run's page faults at `-t 2`).
#[derive(Debug)]
pub struct Body {
    ops: Vec<Op>,
    lits: Vec<u8>,
    tail_start: u32,
    tail_len: u32,
    /// Where a filter finds the record's `System` fields (`crate::filter`); learnt only when
    /// the run has a filter.
    plan: Plan,
    /// The most steps one value serves, learnt with `plan` (0: not learnt): it bounds the
    /// replay from the values' lengths without a turn per step ([`Programs::replay_bound`]).
    uses: usize,
}

impl Body {
    /// What the program counts against `PROGRAM_BYTES_MAX`: its literal bytes (without the
    /// padding) and 8 per operation.
    fn cost(&self) -> usize {
        self.lits.len() - simd::LITERAL_STEP + 8 * self.ops.len()
    }
}

/// The most steps of `ops` that name one slot (0 for none).
fn most_uses(ops: &[Op]) -> usize {
    let mut slots: Vec<u16> = ops.iter().map(|op| op.slot).collect();
    slots.sort_unstable();
    slots
        .chunk_by(|a, b| a == b)
        .map(<[u16]>::len)
        .max()
        .unwrap_or(0)
}

/// Writes the text of a value-bearing node (`Text16`, `Ansi`, `Value`) for `flavor`, noting it
/// in the recorder when the node came from a substitution value.
#[inline]
pub fn emit_node(
    out: &mut Vec<u8>,
    chunk: &[u8],
    codec: &'static Encoding,
    rec: Option<&RefCell<Recorder>>,
    node: &Node,
    flavor: Flavor,
) {
    let (src, item) = match *node {
        Node::Text16 { src, item, .. } | Node::Ansi { src, item, .. } => (src, item),
        Node::Value(v) => (v.src, v.item),
        _ => (0, 0),
    };
    let rec = if src != 0 { rec } else { None };
    if let Some(r) = rec {
        r.borrow_mut().flush_lit(out);
    }
    match *node {
        Node::Text16 { off, units, .. } => {
            let o = off as usize;
            escape::write_utf16_in(out, chunk, o, o + 2 * units as usize, flavor.utf16_mode());
        }
        Node::Ansi { off, len, .. } => {
            let o = off as usize;
            values_format::write_ansi(out, &chunk[o..o + len as usize], codec, flavor);
        }
        Node::Value(v) => values_format::write_value(out, chunk, &v, codec, flavor),
        _ => {}
    }
    if let Some(r) = rec {
        let mut r = r.borrow_mut();
        r.push_value(src, item, flavor);
        r.mark = out.len();
    }
}

/// Writes item `item - 1` of array slot `slot` for `flavor` (replay of an expanded array).
#[cold]
fn write_item(
    out: &mut Vec<u8>,
    chunk: &[u8],
    codec: &'static Encoding,
    v: &Value,
    item: u16,
    flavor: Flavor,
) {
    if v.ty & ty::ARRAY == 0 {
        return;
    }
    let want = usize::from(item) - 1;
    let mut k = 0;
    values_decode::for_each_item(chunk, v, |it| {
        if k == want {
            values_format::write_item(out, chunk, it, codec, flavor);
        }
        k += 1;
    });
}

/// Writes slot `v` for `flavor` (replay; the slot table's tags are [`slot_of`]'s).
#[inline]
fn write_slot(
    out: &mut Vec<u8>,
    memo: &mut Memo,
    chunk: &[u8],
    codec: &'static Encoding,
    v: &Value,
    flavor: Flavor,
) {
    match v.ty {
        ty::STRING => {
            let o = v.off as usize;
            escape::write_utf16_in(out, chunk, o, o + 2 * v.len as usize, flavor.utf16_mode());
        }
        ty::ANSI => {
            let o = v.off as usize;
            values_format::write_ansi(out, &chunk[o..o + v.len as usize], codec, flavor);
        }
        ty::BINXML => {}
        ty::SID => {
            let o = v.off as usize;
            memo.write_sid(out, &chunk[o..o + v.len as usize]);
        }
        ty::GUID => {
            let o = v.off as usize;
            memo.write_guid(out, &chunk[o..o + v.len as usize]);
        }
        ty::FILETIME => {
            let o = v.off as usize;
            let b = &chunk[o..o + v.len as usize];
            if let Some(&ft) = b.first_chunk::<8>() {
                memo.write_filetime(out, u64::from_le_bytes(ft));
            }
        }
        // The unsigned integers and hex numbers (about twelve a record: `EventID`, `Level`,
        // `Keywords`, process and thread ids, logon ids) are written here, not through
        // `write_value`, whose frame and type dispatch cost more than their digits (PERF.md
        // H58). A value shorter than its type falls through to `write_value`, as before.
        ty::U64 | ty::HEX64 => match fixed::<8>(chunk, v) {
            Some(x) if v.ty == ty::HEX64 => memo.write_hex(out, u64::from_le_bytes(x)),
            // A `U64` that fits 32 bits (nearly all) goes through the `u32` writer, which the
            // compiler inlines here as for `U32`; the `u64` one stays a call (PERF.md H77).
            Some(x) => match u32::try_from(u64::from_le_bytes(x)) {
                Ok(x) => values_format::write_uint(out, x),
                Err(_) => values_format::write_int(out, u64::from_le_bytes(x)),
            },
            None => values_format::write_value(out, chunk, v, codec, flavor),
        },
        ty::U32 | ty::HEX32 => match fixed::<4>(chunk, v) {
            Some(x) if v.ty == ty::HEX32 => memo.write_hex(out, u64::from(u32::from_le_bytes(x))),
            Some(x) => values_format::write_uint(out, u32::from_le_bytes(x)),
            None => values_format::write_value(out, chunk, v, codec, flavor),
        },
        ty::U16 => match fixed::<2>(chunk, v) {
            Some(x) => values_format::write_uint(out, u16::from_le_bytes(x).into()),
            None => values_format::write_value(out, chunk, v, codec, flavor),
        },
        ty::U8 => match fixed::<1>(chunk, v) {
            Some([x]) => values_format::write_uint(out, x.into()),
            None => values_format::write_value(out, chunk, v, codec, flavor),
        },
        _ => values_format::write_value(out, chunk, v, codec, flavor),
    }
}

/// The first `N` bytes of value `v` (`None`: it is shorter).
#[inline(always)]
fn fixed<const N: usize>(chunk: &[u8], v: &Value) -> Option<[u8; N]> {
    let o = v.off as usize;
    chunk[o..o + v.len as usize].first_chunk::<N>().copied()
}

/// A slot of the table: type `t`, `len` bytes (UTF-16 units for text) at chunk offset `off`.
#[inline]
fn slot(t: u8, off: u32, len: u32) -> Value {
    Value {
        ty: t,
        src: 0,
        item: 0,
        count: 1,
        off,
        len,
    }
}

/// The slot table's entry for a decoded value, and its signature class. Text, ANSI and BinXML
/// values are tagged with their type codes (`STRING`, `ANSI`, `BINXML`), which no decoded
/// [`Value`] carries, so the table needs no enum. The class holds every shape bit a renderer
/// reads: Null, empty or not, the type, and whether an array expands.
#[inline]
fn slot_of(s: Slot) -> Option<(Value, u32)> {
    Some(match s {
        Slot::Null => (Value::NULL, 0),
        Slot::Text16 { off, units } => (slot(ty::STRING, off, units), 0x100 | u32::from(units > 0)),
        Slot::Ansi { off, len } => (slot(ty::ANSI, off, len), 0x200 | u32::from(len > 0)),
        Slot::Value(v) => {
            let class = 0x400
                | (u32::from(v.is_expandable()) << 13)
                | (u32::from(v.is_empty()) << 8)
                | u32::from(v.ty);
            (v, class)
        }
        Slot::BinXml { off, len } => (slot(ty::BINXML, off, len), 0x800),
        Slot::Fragment { .. } => return None,
    })
}

/// A raw fragment's value of known type `t` (not BinXML, not an array) at `pos`, the payload
/// of a value-text token: its slot, its class word and where the next token starts, as
/// `decode_unsized` and `slot_of` give them (`None` where they fail). Texts, most of a
/// fragment's values, are read here inline (PERF.md H132); the rest through `decode_unsized`.
#[inline(always)]
fn fragment_value(chunk: &[u8], pos: usize, t: u8) -> Option<(Value, u32, usize)> {
    if t == ty::STRING {
        let n = usize::from(crate::bytes::get_u16(chunk, pos)?);
        let text = pos + 2;
        let next = text + 2 * n;
        if next > chunk.len() {
            return None;
        }
        // A text starting with NUL is empty (`values_decode::text16`).
        let units = if n > 0 && (chunk[text] | chunk[text + 1]) != 0 {
            n
        } else {
            0
        };
        let v = slot(ty::STRING, text as u32, units as u32);
        return Some((v, 0x100 | u32::from(units > 0), next));
    }
    fragment_value_decoded(chunk, pos, t)
}

/// [`fragment_value`] through `decode_unsized` and `slot_of`: its other types, and the simple
/// path its texts are tested against.
#[inline(never)]
fn fragment_value_decoded(chunk: &[u8], pos: usize, t: u8) -> Option<(Value, u32, usize)> {
    let (decoded, next) = values_decode::decode_unsized(chunk, pos, t).ok()?;
    let (v, class) = slot_of(decoded)?;
    Some((v, class, next))
}

/// The signature words of a raw element fragment's structure (`Programs::scan_fragment`):
/// above every class word (at most `0x2fff`), value count and definition identity a
/// fragment's position can hold, so a signature reads one way only.
mod fragment {
    pub const BEGIN: u32 = 0xf1a6_0000;
    pub const ELEMENT: u32 = 0xf1a6_0001;
    pub const ATTRIBUTE: u32 = 0xf1a6_0002;
    pub const CLOSE_START: u32 = 0xf1a6_0003;
    pub const CLOSE_EMPTY: u32 = 0xf1a6_0004;
    pub const END: u32 = 0xf1a6_0005;
    pub const INSTANCE: u32 = 0xf1a6_0006;
    pub const END_FRAGMENT: u32 = 0xf1a6_0007;
    /// Followed by the name's id, as `ELEMENT` and `ATTRIBUTE`.
    pub const ENTITY_REF: u32 = 0xf1a6_0008;
    /// Followed by the reference's code unit.
    pub const CHAR_REF: u32 = 0xf1a6_0009;
}

impl FragmentNames {
    /// The id of the text of the name entry at `off` (cut at its first NUL), checked as
    /// `tree::Names::resolve` checks it: the entry with its terminator lies in the chunk. Text
    /// that is not UTF-16 fails the parse of the first record of its signature, which then
    /// never has a program.
    #[cold]
    fn intern(&mut self, chunk: &[u8], off: usize, shared: Option<&Shared>) -> Option<u32> {
        let count = usize::from(crate::bytes::get_u16(chunk, off.checked_add(6)?)?);
        let text = off + 8;
        if text + 2 * count + 2 > chunk.len() {
            return None;
        }
        let whole = &chunk[text..text + 2 * count];
        let at = known_slot(whole);
        let known = &self.known[at];
        // Equal texts before the cut at a NUL are equal after it: the id is the same.
        if known.len as usize == whole.len() && known.text[..whole.len()] == *whole {
            return Some(known.id);
        }
        let raw = &whole[..2 * escape::units_until_nul(whole)];
        let id = match self.ids.get(raw) {
            Some(&id) => id,
            None => {
                if self.ids.len() >= FRAGMENT_NAME_IDS_MAX
                    || self.bytes + raw.len() > FRAGMENT_NAME_BYTES_MAX
                {
                    return None;
                }
                let id = match shared {
                    Some(shared) => shared.name(raw)?,
                    None => self.ids.len() as u32,
                };
                self.bytes += raw.len();
                self.ids.insert(raw.to_vec(), id);
                id
            }
        };
        if let Some(keep) = self.known[at].text.get_mut(..whole.len()) {
            keep.copy_from_slice(whole);
            self.known[at].len = whole.len() as u32;
            self.known[at].id = id;
        }
        Some(id)
    }
}

/// The slot of [`FragmentNames::known`] for a name's text (its `2 × count` bytes): its
/// length and first and last 8 bytes mixed (`TargetUserSid` and `TargetLogonId` share
/// length and first 8 bytes).
#[inline]
fn known_slot(whole: &[u8]) -> usize {
    let w = match (whole.first_chunk::<8>(), whole.last_chunk::<8>()) {
        (Some(head), Some(tail)) => {
            u64::from_le_bytes(*head) ^ u64::from_le_bytes(*tail).rotate_left(29)
        }
        _ => whole.iter().fold(0, |w, &b| w << 8 | u64::from(b)),
    };
    let h = (w ^ whole.len() as u64).wrapping_mul(0x9e37_79b9_7f4a_7c15);
    (h >> 55) as usize % KNOWN_NAMES
}

/// What the renderers of one `-t N` run share (PERF.md H95): the ids that signature words
/// use (template identities, fragment names) and the programs learnt under them. Without it
/// each renderer learnt every program on its own: corpus-30mb rendered 619 more records the
/// slow way at `-t 2` than at `-t 1` (+13 % instructions). A renderer keeps its own copies
/// and locks this only where it has none: a new definition shape, a new name, a `Miss`.
#[derive(Debug, Default)]
pub struct Shared {
    inner: Mutex<SharedInner>,
}

#[derive(Debug, Default)]
struct SharedInner {
    /// Identity content keys ([`crate::template::Identities`]) → id.
    identities: crate::bytes::FastMap<Vec<u8>, u32>,
    identity_bytes: usize,
    /// Fragment name texts → id.
    names: crate::bytes::FastMap<Vec<u8>, u32>,
    name_bytes: usize,
    /// Signature words → the program, shared by every renderer that replays it.
    programs: crate::bytes::FastMap<Vec<u32>, Arc<Body>>,
    program_bytes: usize,
}

impl Shared {
    fn lock(&self) -> std::sync::MutexGuard<'_, SharedInner> {
        self.inner.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// The id of the identity with content `key`, given one if new; `None` past the bound.
    pub fn identity(&self, key: &[u8]) -> Option<u32> {
        let mut g = self.lock();
        if let Some(&id) = g.identities.get(key) {
            return Some(id);
        }
        if g.identity_bytes + key.len() > IDENTITY_BYTES_MAX {
            return None;
        }
        let id = g.identities.len() as u32;
        g.identity_bytes += key.len();
        g.identities.insert(key.to_vec(), id);
        Some(id)
    }

    /// The id of the fragment name `raw`, given one if new; `None` past the bounds.
    fn name(&self, raw: &[u8]) -> Option<u32> {
        let mut g = self.lock();
        if let Some(&id) = g.names.get(raw) {
            return Some(id);
        }
        if g.names.len() >= FRAGMENT_NAME_IDS_MAX
            || g.name_bytes + raw.len() > FRAGMENT_NAME_BYTES_MAX
        {
            return None;
        }
        let id = g.names.len() as u32;
        g.name_bytes += raw.len();
        g.names.insert(raw.to_vec(), id);
        Some(id)
    }
}

/// What [`Programs::sign`] needs to look template definitions up (and parse them on first use).
pub struct Defs<'a> {
    pub names: &'a mut Names,
    pub scratch: &'a mut Scratch,
    pub templates: &'a mut Templates,
    pub identities: &'a mut Identities,
}

/// One stored program: its signature's words in [`Programs`] and its [`Body`], by index.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Program {
    pub signature_start: u32,
    pub signature_len: u32,
    pub body: u32,
}

/// Signature hash → the program (its signature is compared on a hit). The program itself, not
/// an index into a list of them: one dependent load fewer per record (PERF.md H152).
type HashMap = crate::bytes::FastMap<u64, Program>;

/// Mixes 64 bits of signature into the hash (`SigHasher`'s step).
#[inline]
fn mix(hash: u64, bits: u64) -> u64 {
    (hash.rotate_left(5) ^ bits).wrapping_mul(0x517c_c1b7_2722_0a95)
}

/// The hash of a signature: two words per `mix` (PERF.md H62) in four lanes, eight words a
/// step, so four multiplies are in flight instead of one chain of them (H151: the chain was
/// most of `sign`'s wall time); the rest's pairs one to a lane, an odd last word in the
/// fourth, then the lanes folded. The lanes start from the length (a signature and its
/// extension by a word would otherwise end alike). Only equal signatures need equal hashes
/// (`lookup` compares the words on a hit).
fn hash_words(words: &[u32]) -> u64 {
    let pair = |w: &[u32]| u64::from(w[0]) | (u64::from(w[1]) << 32);
    let mut steps = words.chunks_exact(8);
    let n = (words.len() as u64) << 8;
    let mut lanes = [n, n | 1, n | 2, n | 3];
    for w in &mut steps {
        for (k, lane) in lanes.iter_mut().enumerate() {
            *lane = mix(*lane, pair(&w[2 * k..]));
        }
    }
    let rest = steps.remainder();
    let mut pairs = rest.chunks_exact(2);
    for (lane, w) in lanes.iter_mut().zip(&mut pairs) {
        *lane = mix(*lane, pair(w));
    }
    if let [last] = pairs.remainder() {
        lanes[3] = mix(lanes[3], u64::from(*last));
    }
    let [a, b, c, d] = lanes;
    mix(a, b) ^ mix(c, d).rotate_left(32)
}

/// `buf[at..at + n]`, the buffer grown (with `fill`) only when a record needs more room than
/// any before it: the scan's scratch lists keep their longest length (PERF.md H72).
#[inline(always)]
fn room<T: Copy>(buf: &mut Vec<T>, at: usize, n: usize, fill: T) -> &mut [T] {
    if buf.len() < at + n {
        grow(buf, at + n, fill);
    }
    &mut buf[at..at + n]
}

/// `room`'s rare step: `buf` made `len` long.
#[cold]
#[inline(never)]
fn grow<T: Copy>(buf: &mut Vec<T>, len: usize, fill: T) {
    buf.resize(len, fill);
}

/// The programs of one renderer, by signature.
#[derive(Debug, Default)]
pub struct Programs {
    by_hash: HashMap,
    signatures: Vec<u32>,
    /// The programs' bodies, by [`Program::body`]; at `-t 2` and up shared with the other
    /// renderers (PERF.md H137).
    bodies: Vec<Arc<Body>>,
    /// The bodies' [`Body::cost`], summed (bounded by `PROGRAM_BYTES_MAX`).
    bytes: usize,
    /// Scratch: the current record's signature words, built as its values are read (the Zig
    /// engine's `signature`), and their hash, mixed once the scan is done. Only the first
    /// `signed` words are the record's: the buffer keeps the longest length any record needed
    /// (entries past `signed` are stale), so a record needs no fill (PERF.md H72).
    signature: Vec<u32>,
    signed: usize,
    hash: u64,
    /// Scratch: what the current instance's rare values left for after its value loop.
    rare: Rare,
    /// Scratch: the current record's substitution values by record-wide number, the first
    /// `values` (at most `PROGRAM_VALUES_MAX`; the Zig engine's `slots`). As `signature`, the
    /// buffer keeps its longest length and entries past `values` are stale: a program's steps
    /// name only values its signature has, and the signature fixes their count.
    slots: Vec<Value>,
    values: usize,
    /// The replay's texts of recent values (SIDs, FILETIME dates, GUIDs, hex numbers), kept
    /// across chunks and `clear`: keyed by the values' bytes, not by anything a chunk owns.
    memo: Memo,
    /// Raw fragments' names as signature words (`Programs::name_word`).
    names: FragmentNames,
    /// The run's shared ids and programs, at `-t 2` and up.
    pub shared: Option<Arc<Shared>>,
    /// Programs this renderer recorded itself (not imported).
    #[cfg(test)]
    pub stores: usize,
    /// BinXML values `check_binxml_list` found in their list.
    #[cfg(test)]
    pub binxml_checked: usize,
    /// Replay bounds `check_replay_bound` checked.
    #[cfg(test)]
    pub bounds_checked: std::cell::Cell<usize>,
}

/// Entries of [`FragmentNames::recent`] (a power of two): 256 missed 27,234 times on
/// corpus-30mb (`intern` calls), 1,024 16,452 times (13,986 are first sights in a chunk);
/// 4,096 cost more to clear per chunk than they saved (PERF.md H134).
const RECENT_NAMES: usize = 1024;

/// The slot of [`FragmentNames::recent`] for the name entry at chunk offset `key`: the top
/// bits of a multiplicative hash (`key ^ key >> 8` put nearby entries in one slot more often).
#[inline]
fn recent_slot(key: u32) -> usize {
    (key.wrapping_mul(0x9e37_79b1) >> (32 - RECENT_NAMES.trailing_zeros())) as usize
}
/// Entries of [`FragmentNames::known`] (a power of two, at most 512: `known_slot`).
const KNOWN_NAMES: usize = 512;
/// Bytes of a name's text a [`KnownName`] holds (24 UTF-16 units: `EventSourceName`,
/// `SubjectUserName` and their like fit).
const KNOWN_TEXT: usize = 48;

/// The names raw fragments use, each as one signature word: an id per distinct UTF-16 text,
/// kept across chunks as the programs are; and, for the current chunk only, the id of the
/// name entry at a chunk offset, direct-mapped (a fragment names the same few entries
/// record after record, and a map lookup per name cost ~145 instructions, PERF.md H69).
#[derive(Debug)]
struct FragmentNames {
    recent: Box<[(u32, u32); RECENT_NAMES]>,
    /// Whether `recent` has entries (of this chunk): logs without raw fragments never clear it.
    recent_used: bool,
    /// Ids of recent name texts, direct-mapped by the text, kept across chunks: a name
    /// entry new to `recent` (each chunk has its own, ~57 on corpus-30mb) is mostly a text
    /// seen before, and a compare of its bytes costs less than `ids`'s hash and lookup and
    /// the cut at a NUL (PERF.md H111).
    known: Box<[KnownName; KNOWN_NAMES]>,
    ids: crate::bytes::FastMap<Vec<u8>, u32>,
    bytes: usize,
}

/// An entry of [`FragmentNames::known`]: the text `text[..len]` (a name entry's `2 × count`
/// bytes, before any cut at a NUL) has id `id`; `len` above `KNOWN_TEXT`: empty.
#[derive(Debug, Clone, Copy)]
struct KnownName {
    len: u32,
    id: u32,
    text: [u8; KNOWN_TEXT],
}

impl Default for FragmentNames {
    fn default() -> Self {
        FragmentNames {
            recent: Box::new([(u32::MAX, 0); RECENT_NAMES]),
            recent_used: false,
            known: Box::new(
                [KnownName {
                    len: u32::MAX,
                    id: 0,
                    text: [0; KNOWN_TEXT],
                }; KNOWN_NAMES],
            ),
            ids: Default::default(),
            bytes: 0,
        }
    }
}

/// What `scan_value`'s rare path (`decode_sized` and `sign_decoded`, out of line) leaves for
/// after the instance's value loop.
#[derive(Debug, Default)]
struct Rare {
    /// The item count and empty-item mask words of the instance's expanded arrays, appended to
    /// `signature` after its class words.
    extra: Vec<u32>,
    /// The BinXML values (chunk offset and length of each stream) of the instances being
    /// scanned, a stack: an instance's own start where the list stood before its value loop,
    /// the nested instances' come after them and are gone again when `scan_nested` returns.
    /// `scan_nested` reads its instance's from here rather than looking for them among all of
    /// its slots (PERF.md H131; H48 stopped that search after the last).
    binxml: Vec<(u32, u32)>,
}

/// What [`Programs::sign`] found for one record (the Zig engine's `Sign`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Sign {
    /// A program for this signature exists: replay it.
    Hit { program: Program },
    /// No program yet; record the slow path's output under the current signature.
    Miss,
    /// Not a shape programs handle: slow path, do not record.
    Unsupported,
}

impl Programs {
    /// How many programs are stored.
    #[cfg(test)]
    pub fn programs_len(&self) -> usize {
        self.bodies.len()
    }

    /// How many of this renderer's program bodies are `other`'s, the same allocations
    /// (PERF.md H137: an import shares, never copies).
    #[cfg(test)]
    pub fn shared_bodies(&self, other: &Programs) -> usize {
        let theirs: std::collections::HashSet<*const Body> =
            other.bodies.iter().map(Arc::as_ptr).collect();
        self.bodies
            .iter()
            .filter(|b| theirs.contains(&Arc::as_ptr(b)))
            .count()
    }

    /// Forgets what belongs to the last chunk (its fragments' names by offset).
    pub fn new_chunk(&mut self) {
        if std::mem::take(&mut self.names.recent_used) {
            self.names.recent.fill((u32::MAX, 0));
        }
    }

    /// Forgets every program.
    pub fn clear(&mut self) {
        self.by_hash.clear();
        self.signatures.clear();
        self.bodies.clear();
        self.bytes = 0;
    }

    /// Checks the record's BinXML window `start..end` for the single-instance shape, reads
    /// all values (record-wide numbering) into the slot table and signs them, in one pass
    /// over each instance's descriptors (the Zig engine's `Programs.sign`).
    pub fn sign(&mut self, cx: Source<'_>, defs: &mut Defs<'_>, start: usize, end: usize) -> Sign {
        self.signed = 0;
        self.values = 0;
        self.rare.extra.clear();
        self.rare.binxml.clear();
        if self.scan_stream(cx, defs, start, end, 0).is_none() {
            return Sign::Unsupported;
        }
        // One pass over the finished words: the hash stays in a register (PERF.md H47).
        self.hash = hash_words(self.signed());
        match self.lookup() {
            Sign::Miss if self.shared.is_some() => self.import(),
            sign => sign,
        }
    }

    /// A `Miss` at `-t 2` and up: the program another renderer learnt for this signature
    /// (PERF.md H95), its body shared, not copied (H137), else still `Miss`.
    #[cold]
    #[inline(never)]
    fn import(&mut self) -> Sign {
        let body = match &self.shared {
            Some(shared) => shared.lock().programs.get(self.signed()).cloned(),
            None => None,
        };
        match body.and_then(|body| self.insert(body)) {
            Some(program) => Sign::Hit { program },
            None => Sign::Miss,
        }
    }

    /// The current signature's program, or `Miss`.
    fn lookup(&self) -> Sign {
        let Some(&program) = self.by_hash.get(&self.hash) else {
            return Sign::Miss;
        };
        let start = program.signature_start as usize;
        let stored = &self.signatures[start..start + program.signature_len as usize];
        if stored != self.signed() {
            return Sign::Miss;
        }
        Sign::Hit { program }
    }

    /// The current record's signature words.
    #[inline]
    fn signed(&self) -> &[u32] {
        &self.signature[..self.signed]
    }

    /// Appends one signature word (`sign` hashes them all at the end).
    #[inline]
    fn word(&mut self, word: u32) {
        room(&mut self.signature, self.signed, 1, 0)[0] = word;
        self.signed += 1;
    }

    /// Appends the instance's rare words (`Rare::extra`) and empties them.
    #[cold]
    fn extra_words(&mut self) {
        let extra = &self.rare.extra;
        room(&mut self.signature, self.signed, extra.len(), 0).copy_from_slice(extra);
        self.signed += extra.len();
        self.rare.extra.clear();
    }

    /// A stream of exactly `[fragment header] instance [EOF ...]`, or, nested in a value, a raw
    /// element fragment (`scan_fragment`).
    fn scan_stream(
        &mut self,
        cx: Source<'_>,
        defs: &mut Defs<'_>,
        start: usize,
        end: usize,
        depth: usize,
    ) -> Option<()> {
        if depth > SIGNATURE_DEPTH_MAX {
            return None;
        }
        let chunk = cx.chunk;
        let mut pos = start;
        if *chunk.get(pos)? == 0x0f {
            pos += 4;
        }
        if pos >= end {
            return None;
        }
        if *chunk.get(pos)? != 0x0c {
            return if depth > 0 {
                self.scan_fragment(cx, defs, pos, end, depth)
            } else {
                None
            };
        }
        pos += 1;
        self.scan_instance(cx, defs, &mut pos, depth)?;
        if pos < end && *chunk.get(pos)? != 0x00 {
            return None;
        }
        Some(())
    }

    /// Reads the instance at `*pos` (just after the 0x0C byte) in the token parser's order
    /// (descriptors, values, definition, BinXML values) and with its checks, signing each value
    /// as its descriptor is read: the value count, one class per value, the expanded arrays'
    /// extra words, the definition's identity, then the nested instances. Any error gives up
    /// (`None`): the full parse then reports it. A descriptor of an unknown type fails
    /// `decode_sized`, so the parser's check of all descriptors first (6.4 step 1) needs no
    /// pass of its own here. The instance's slots and class words are taken as two slices of the
    /// scratch buffers once and each value writes its own in place, without a capacity check
    /// per value (PERF.md H47, as the Zig engine's `appendAssumeCapacity`) and without filling
    /// them first (H72: the buffers keep their longest length); the classes say which values
    /// have extra words, so the words still name one shape each. A give-up leaves `signed` and
    /// `values` where they were, and `sign` answers `Unsupported`.
    fn scan_instance(
        &mut self,
        cx: Source<'_>,
        defs: &mut Defs<'_>,
        pos: &mut usize,
        depth: usize,
    ) -> Option<()> {
        let chunk = cx.chunk;
        let head = tokens::read_instance_head(chunk, *pos).ok()?;
        let n = head.count;
        let base = self.values;
        if n > PROGRAM_VALUES_MAX - base {
            return None;
        }
        self.word(n as u32);
        let classes = self.signed;
        let out = room(&mut self.signature, classes, n, 0)
            .iter_mut()
            .zip(room(&mut self.slots, base, n, Value::NULL));
        let mut p = head.values();
        let first = self.rare.binxml.len();
        for (d, (class, slot)) in chunk[head.descriptors..head.values()]
            .chunks_exact(4)
            .zip(out)
        {
            let size = usize::from(u16::from_le_bytes([d[0], d[1]]));
            (p, *class, *slot) = Self::scan_value(cx, &mut self.rare, p, d[2], size)?;
        }
        self.signed = classes + n;
        self.values = base + n;
        if !self.rare.extra.is_empty() {
            self.extra_words();
        }
        #[cfg(test)]
        self.check_binxml_list(first, base..base + n);
        let last = self.rare.binxml.len();
        *pos = p;
        let id = defs.identities.get(
            cx,
            defs.templates,
            defs.names,
            defs.scratch,
            head.def_off,
            depth,
        )?;
        self.word(id);
        if last == first {
            return Some(());
        }
        self.scan_nested(cx, defs, first..last, depth)
    }

    /// The simple path of `Rare::binxml` (PERF.md H131), checked on every instance the tests
    /// scan: the list's entries from `first` on are the BinXML slots among `values`, in order.
    #[cfg(test)]
    fn check_binxml_list(&mut self, first: usize, values: std::ops::Range<usize>) {
        let want: Vec<(u32, u32)> = self.slots[values]
            .iter()
            .filter(|v| v.ty == ty::BINXML)
            .map(|v| (v.off, v.len))
            .collect();
        assert_eq!(self.rare.binxml[first..], want[..]);
        self.binxml_checked += want.len();
    }

    /// Signs the value of type `t` and declared `size` at `start`: returns where the next value
    /// starts, its class word and its slot (what the rare path leaves goes to `rare`). The common
    /// cases inline, as in `tokens::read_instance_values`; the rest through `decode_sized`.
    /// Inlined into `scan_instance`'s loop: the hot path of every record.
    #[inline(always)]
    fn scan_value(
        cx: Source<'_>,
        rare: &mut Rare,
        start: usize,
        t: u8,
        size: usize,
    ) -> Option<(usize, u32, Value)> {
        let chunk = cx.chunk;
        let w = values_decode::fixed_width(t);
        let (p, class, v) =
            if t == ty::STRING && size.is_multiple_of(2) && start + size <= chunk.len() {
                // A text starting with NUL is empty (`values_decode::text16`). Its first unit
                // read from the text's own bytes: no bounds checks past the one above (H181).
                let units = match chunk[start..start + size].first_chunk::<2>() {
                    Some(&[a, b]) if a | b != 0 => size / 2,
                    _ => 0,
                };
                let v = slot(ty::STRING, start as u32, units as u32);
                (start + size, 0x100 | u32::from(units > 0), v)
            } else if w != 0 && t != ty::BOOL && start + w <= chunk.len() {
                let v = slot(t, start as u32, w as u32);
                (start + w.max(size), 0x400 | u32::from(t), v)
            } else if t == ty::NULL {
                (start + size, 0, Value::NULL)
            } else if t == ty::SID && start + 8 <= chunk.len() {
                // `decode_sized`'s SID: the length comes from the sub-authority count.
                let len = 8 + 4 * usize::from(chunk[start + 1]);
                if start + len > chunk.len() {
                    return None;
                }
                let v = slot(t, start as u32, len as u32);
                (start + len.max(size), 0x400 | u32::from(t), v)
            } else if t == ty::BINXML && size > 0 && start + size <= chunk.len() {
                // `decode_sized`'s and `sign_decoded`'s non-empty BinXML value (PERF.md H73):
                // one a Security record, its `EventData` instance, scanned after the loop.
                rare.binxml.push((start as u32, size as u32));
                (start + size, 0x800, slot(t, start as u32, size as u32))
            } else {
                let (decoded, mut stop) =
                    values_decode::decode_sized(chunk, start, t, size, cx.codec).ok()?;
                if t == ty::NULL {
                    stop += size;
                }
                let (class, v) = Self::sign_decoded(chunk, decoded, rare)?;
                (stop.max(start + size), class, v)
            };
        (p <= chunk.len()).then_some((p, class, v))
    }

    /// Scans the streams of the instance's BinXML values (`Rare::binxml[list]`), after its
    /// definition, in the token parser's order. Inline: out of line, LLVM pulls the recursion
    /// (`scan_stream`, `scan_instance`) into it and the scan costs ~0.2 % more per record.
    #[inline(always)]
    fn scan_nested(
        &mut self,
        cx: Source<'_>,
        defs: &mut Defs<'_>,
        list: std::ops::Range<usize>,
        depth: usize,
    ) -> Option<()> {
        let first = list.start;
        for k in list {
            let (off, len) = self.rare.binxml[k];
            let (off, len) = (off as usize, len as usize);
            self.scan_stream(cx, defs, off, off + len, depth + 1)?;
        }
        self.rare.binxml.truncate(first);
        Some(())
    }

    /// Signs a BinXML value's stream `start..end` that is a raw element fragment, not a template
    /// instance (PERF.md H69): the words say its whole structure (element and attribute names
    /// by their UTF-16 text, start-tag ends, end tags, nested instances, entity references by
    /// their name's text and character references by their code, H150) and one class per
    /// inline value, each numbered as the next record-wide value (as `tokens` numbers it for
    /// the recorder). Checks what `tokens::parse_stream` checks, so a signature seen rendered
    /// once parses again; gives up on every other token (CDATA, PIs, nested BinXML values,
    /// arrays), which then render the slow way.
    #[cold]
    fn scan_fragment(
        &mut self,
        cx: Source<'_>,
        defs: &mut Defs<'_>,
        start: usize,
        end: usize,
        depth: usize,
    ) -> Option<()> {
        let chunk = cx.chunk;
        let mut pos = start;
        let mut open = 0usize;
        let mut pending = false;
        self.word(fragment::BEGIN);
        while pos < end {
            let token = *chunk.get(pos)?;
            pos += 1;
            match token {
                0x00 => break,
                0x0f => {
                    if pos + 3 > chunk.len() {
                        return None;
                    }
                    pos += 3;
                }
                0x01 | 0x41 => {
                    if pending {
                        return None;
                    }
                    crate::bytes::get_u32(chunk, pos)?; // Element data size: not needed.
                    pos += 4;
                    self.word(fragment::ELEMENT);
                    self.name_word(chunk, &mut pos)?;
                    if token == 0x41 {
                        crate::bytes::get_u32(chunk, pos)?; // Attribute list size.
                        pos += 4;
                    }
                    pending = true;
                }
                0x02 | 0x03 => {
                    if !pending {
                        return None;
                    }
                    pending = false;
                    if token == 0x03 {
                        self.word(fragment::CLOSE_EMPTY);
                    } else {
                        if open >= ELEMENT_DEPTH_MAX {
                            return None;
                        }
                        open += 1;
                        self.word(fragment::CLOSE_START);
                    }
                }
                0x04 => {
                    if pending || open == 0 {
                        return None;
                    }
                    open -= 1;
                    self.word(fragment::END);
                }
                0x05 | 0x45 => {
                    let t = *chunk.get(pos)?;
                    pos += 1;
                    if !values_decode::is_known_type(t) || t == ty::BINXML || t & ty::ARRAY != 0 {
                        return None;
                    }
                    let (v, class, next) = fragment_value(chunk, pos, t)?;
                    pos = next;
                    if !pending && open == 0 {
                        return None; // A value outside of any element fails the record.
                    }
                    if self.values >= PROGRAM_VALUES_MAX {
                        return None;
                    }
                    // The record's values are a count into the longest-kept list (H72).
                    room(&mut self.slots, self.values, 1, Value::NULL)[0] = v;
                    self.values += 1;
                    self.word(class);
                }
                0x06 | 0x46 => {
                    self.word(fragment::ATTRIBUTE);
                    self.name_word(chunk, &mut pos)?;
                    if !pending {
                        return None;
                    }
                }
                // A reference's text is its name's or code's alone (`&quot;`, `\"` in JSON):
                // literal bytes of the program, so the signature holds what they are. CAPI2's
                // HTTP header lists have them (corpus-30mb: 93 records otherwise slow).
                0x08 | 0x48 | 0x09 | 0x49 => {
                    // Placed as a value is: refused outside every element.
                    if !pending && open == 0 {
                        return None;
                    }
                    if token & 0x0f == 0x08 {
                        let c = crate::bytes::get_u16(chunk, pos)?;
                        pos += 2;
                        self.word(fragment::CHAR_REF);
                        self.word(u32::from(c));
                    } else {
                        self.word(fragment::ENTITY_REF);
                        self.name_word(chunk, &mut pos)?;
                    }
                }
                0x0c => {
                    if pending {
                        return None;
                    }
                    self.word(fragment::INSTANCE);
                    self.scan_instance(cx, defs, &mut pos, depth)?;
                }
                _ => return None,
            }
        }
        if pending || open > 0 {
            return None;
        }
        self.word(fragment::END_FRAGMENT);
        Some(())
    }

    /// Signs the name reference at `*pos` (6.3) by its text's id (`FragmentNames`), skipping
    /// an inline entry as `tokens` does.
    #[inline]
    fn name_word(&mut self, chunk: &[u8], pos: &mut usize) -> Option<()> {
        let off = crate::bytes::get_u32(chunk, *pos)? as usize;
        *pos += 4;
        if *pos == off {
            let count = usize::from(crate::bytes::get_u16(chunk, *pos + 6)?);
            let next = *pos + 10 + 2 * count;
            if next > chunk.len() {
                return None;
            }
            *pos = next;
        }
        let key = off as u32;
        let (cached, id) = self.names.recent[recent_slot(key)];
        let id = if cached == key {
            id
        } else {
            let id = self.names.intern(chunk, off, self.shared.as_deref())?;
            self.names.recent[recent_slot(key)] = (key, id);
            self.names.recent_used = true;
            id
        };
        self.word(id);
        Some(())
    }

    /// Signs a value `decode_sized` read: its class word and its slot; an expanded array's
    /// words and a BinXML value's count go to `rare`.
    #[inline(never)]
    fn sign_decoded(chunk: &[u8], decoded: Slot, rare: &mut Rare) -> Option<(u32, Value)> {
        let (v, class) = slot_of(decoded)?;
        if v.ty == ty::BINXML {
            rare.binxml.push((v.off, v.len));
        }
        if v.is_expandable() {
            // Expansion repeats elements per item and drops empty string items: the count
            // and which items are empty are part of the shape.
            if v.count > PROGRAM_ARRAY_ITEMS_MAX {
                return None;
            }
            rare.extra.push(u32::from(v.count));
            if v.ty == 0x81 || v.ty == 0x82 {
                let mut mask = 0u64;
                let mut k = 0;
                values_decode::for_each_item(chunk, &v, |it| {
                    mask |= u64::from(it.is_some()) << k;
                    k += 1;
                });
                rare.extra.push(mask as u32);
                rare.extra.push((mask >> 32) as u32);
            }
        }
        Some((class, v))
    }

    /// Stores the recorded program under the current signature (and, at `-t 2` and up,
    /// offers it to the other renderers).
    pub fn store(&mut self, rec: &mut Recorder, out: &[u8], plan: Option<Plan>) {
        let Some(mut body) = rec.finish(out) else {
            return;
        };
        if let Some(plan) = plan {
            body.plan = plan;
            body.uses = most_uses(&body.ops);
        }
        let Some(program) = self.insert(Arc::new(body)) else {
            return;
        };
        #[cfg(test)]
        {
            self.stores += 1;
        }
        if let Some(shared) = &self.shared {
            let body = &self.bodies[program.body as usize];
            let key = self.signature[..self.signed].to_vec();
            let cost = body.cost() + 4 * self.signed;
            let mut g = shared.lock();
            if g.programs.len() < PROGRAMS_MAX && g.program_bytes + cost <= PROGRAM_BYTES_MAX {
                g.program_bytes += cost;
                g.programs.entry(key).or_insert_with(|| body.clone());
            }
        }
    }

    /// Adds the program `body` under the current signature, unless the bounds are reached.
    fn insert(&mut self, body: Arc<Body>) -> Option<Program> {
        if self.bodies.len() >= PROGRAMS_MAX || self.bytes > PROGRAM_BYTES_MAX {
            return None;
        }
        self.bytes += body.cost();
        let signature_start = self.signatures.len() as u32;
        self.signatures
            .extend_from_slice(&self.signature[..self.signed]);
        let program = Program {
            signature_start,
            signature_len: self.signed as u32,
            body: self.bodies.len() as u32,
        };
        self.bodies.push(body);
        // A hash shared with an older signature points at the newer program from now on;
        // `lookup` compares the signature, so the older one only renders the slow way.
        self.by_hash.insert(self.hash, program);
        Some(program)
    }

    /// The current record's substitution values (valid after a [`Sign::Hit`]).
    pub fn slots(&self) -> &[Value] {
        &self.slots[..self.values]
    }

    /// The filter plan of `program` ([`Programs::store`]).
    pub fn plan(&self, program: Program) -> &Plan {
        &self.bodies[program.body as usize].plan
    }

    /// A bound on the bytes [`Programs::replay`] writes for `program` over `self.slots`: its
    /// literal bytes and, for each step, 64 bytes and 96 for each of its value's length units
    /// (no value type's text is longer: a UTF-16 unit escapes to 6 bytes, an `f64` to about
    /// 330 digits). A filter skips a record whose bound keeps within the output limits, which
    /// therefore could not fail it.
    ///
    /// With the body's `uses` learnt, the bound counts each of the record's values `uses`
    /// times instead (each step's value is one of them, none serves more steps): no lower,
    /// and one turn per value rather than per step with its slot's lookup (PERF.md H201).
    pub fn replay_bound(&self, program: Program) -> usize {
        let body = &self.bodies[program.body as usize];
        let fixed = body.lits.len() + 64 * body.ops.len();
        if body.uses > 0 {
            let values: usize = self.slots().iter().map(|v| v.len as usize).sum();
            let bound = fixed + 96 * body.uses * values;
            #[cfg(test)]
            self.check_replay_bound(body, bound);
            return bound;
        }
        let values: usize = body
            .ops
            .iter()
            .map(|op| {
                self.slots
                    .get(usize::from(op.slot))
                    .map_or(0, |v| v.len as usize)
            })
            .sum();
        fixed + 96 * values
    }

    /// The bound per step (96 per unit of each step's value), checked on every bound the tests
    /// take with `uses` (PERF.md H201): that one is no lower.
    #[cfg(test)]
    fn check_replay_bound(&self, body: &Body, bound: usize) {
        let per_step: usize = (body.ops.iter())
            .map(|op| {
                self.slots()
                    .get(usize::from(op.slot))
                    .map_or(0, |v| v.len as usize)
            })
            .sum();
        assert!(bound >= body.lits.len() + 64 * body.ops.len() + 96 * per_step);
        self.bounds_checked.set(self.bounds_checked.get() + 1);
    }

    /// Replays `program` over `self.slots`; `false` (output unfinished) when the output passes
    /// `limit`.
    pub fn replay(
        &mut self,
        out: &mut Vec<u8>,
        cx: Source<'_>,
        program: Program,
        limit: usize,
    ) -> bool {
        let Programs {
            bodies,
            slots,
            memo,
            ..
        } = self;
        let Body {
            ops,
            lits,
            tail_start,
            tail_len,
            ..
        } = &*bodies[program.body as usize];
        // The literals as a slice, read once: the loop reloaded their `Vec`'s fields every
        // step (PERF.md H178).
        let lits: &[u8] = lits;
        out.reserve(lits.len() + 64 * ops.len());
        for op in ops {
            let (start, len) = (op.literal_start as usize, op.literal_len as usize);
            simd::copy_literal(out, lits, start, len);
            if out.len() > limit {
                return false;
            }
            if let Some(slot) = slots.get(usize::from(op.slot)) {
                if op.item == 0 {
                    write_slot(out, memo, cx.chunk, cx.codec, slot, op.flavor);
                } else {
                    write_item(out, cx.chunk, cx.codec, slot, op.item, op.flavor);
                }
            }
        }
        simd::copy_literal(out, lits, *tail_start as usize, *tail_len as usize);
        out.len() <= limit
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_restarted_recorder_records_as_a_new_one() {
        // PERF.md H153: the renderer's one recorder, restarted, must give the body a fresh
        // recorder gives: none of the last recording's steps, literals or give-up.
        let fresh = |out: &[u8], mark: usize| {
            let mut r = Recorder::default();
            r.restart(mark);
            r.finish(out)
                .map(|b| (b.ops, b.lits, b.tail_start, b.tail_len))
        };
        let mut used = Recorder::default();
        let mut out = b"Record 1\n<Event>".to_vec();
        used.restart(9);
        used.flush_lit(&out);
        used.push_value(1, 0, Flavor::XmlText);
        out.extend_from_slice(b"value</Event>");
        used.uncacheable = true;
        let mark = out.len();
        out.extend_from_slice(b"<Other/>");
        used.restart(mark);
        let again = used
            .finish(&out)
            .map(|b| (b.ops, b.lits, b.tail_start, b.tail_len));
        let want = fresh(&out, mark).expect("a fresh recorder's body");
        assert_eq!(again, Some(want.clone()));
        assert_eq!(want.1.len(), b"<Other/>".len() + simd::LITERAL_STEP);
        assert_eq!((want.2, want.3), (0, b"<Other/>".len() as u32));
    }

    #[test]
    fn fused_steps_replay_the_recorded_bytes() {
        // PERF.md H177: each step is the literal run before a value, then the value; the run
        // after the last value is the body's tail. A recording with runs short and past
        // `LITERAL_STEP`, two adjacent values (an empty run between), a value used twice and
        // a tail must replay to the recorded bytes, and over other texts to the same layout.
        let text = |s: &str| -> Vec<u8> { s.encode_utf16().flat_map(u16::to_le_bytes).collect() };
        let long = "x".repeat(3 * simd::LITERAL_STEP + 5);
        let parts: [(&[u8], u16, Flavor); 4] = [
            (b"<E a=\"", 1, Flavor::XmlAttr),
            (long.as_bytes(), 2, Flavor::XmlText),
            (b"", 1, Flavor::XmlText),
            (b"<F/>", 2, Flavor::XmlAttr),
        ];
        let record = |p: &mut Programs, chunk: &[u8], rec: Option<&mut Recorder>| {
            let mut out = b"Record 1\n".to_vec();
            let mut rec = rec;
            if let Some(r) = rec.as_deref_mut() {
                r.restart(out.len());
            }
            for (lit, src, flavor) in parts {
                out.extend_from_slice(lit);
                if let Some(r) = rec.as_deref_mut() {
                    r.flush_lit(&out);
                }
                let slot = p.slots[usize::from(src) - 1];
                write_slot(
                    &mut out,
                    &mut p.memo,
                    chunk,
                    encoding_rs::UTF_8,
                    &slot,
                    flavor,
                );
                if let Some(r) = rec.as_deref_mut() {
                    r.push_value(src, 0, flavor);
                    r.mark = out.len();
                }
            }
            out.extend_from_slice(b"</E>\n");
            out
        };
        let chunk_of = |a: &str, b: &str| {
            let (a, b) = (text(a), text(b));
            let mut chunk = vec![0xee; 3];
            chunk.extend_from_slice(&a);
            chunk.extend_from_slice(&b);
            let slots = vec![
                slot(ty::STRING, 3, a.len() as u32 / 2),
                slot(ty::STRING, 3 + a.len() as u32, b.len() as u32 / 2),
            ];
            (chunk, slots)
        };
        let mut p = Programs::default();
        let (chunk, slots) = chunk_of("A&B", "c<d\"e");
        p.slots = slots;
        let mut rec = Recorder::default();
        let recorded = record(&mut p, &chunk, Some(&mut rec));
        let body = rec.finish(&recorded).expect("a cacheable recording");
        assert_eq!(body.ops.len(), parts.len());
        assert_eq!(body.ops[2].literal_len, 0);
        assert_eq!(body.tail_len as usize, b"</E>\n".len());
        let program = p.insert(Arc::new(body)).expect("room for the program");
        for (a, b) in [
            ("A&B", "c<d\"e"),
            ("", "much longer text > than before"),
            ("z", ""),
        ] {
            let (chunk, slots) = chunk_of(a, b);
            p.slots = slots;
            let want = record(&mut p, &chunk, None);
            let mut got = b"Record 1\n".to_vec();
            let cx = Source {
                chunk: &chunk,
                codec: encoding_rs::UTF_8,
            };
            assert!(p.replay(&mut got, cx, program, usize::MAX));
            assert_eq!(
                String::from_utf8(got),
                String::from_utf8(want),
                "{a:?} {b:?}"
            );
        }
    }

    #[test]
    fn signature_hash_sees_every_word() {
        // PERF.md H151: `hash_words`'s lanes and tail must take every word at its position:
        // signatures of 0-40 words, each with one word changed in turn (one bit,
        // or swapped with its neighbour) or a word appended, hash apart from the original.
        // (Equal hashes of different signatures are not wrong, `lookup` compares the words, but
        // one word left out would make every such pair collide.)
        let mut next = crate::testing::xorshift(0x9e37_79b9_7f4a_7c15);
        for len in 0..=40usize {
            for _ in 0..20 {
                let words: Vec<u32> = (0..len).map(|_| next() as u32 & 0xffff).collect();
                let h = hash_words(&words);
                for k in 0..len {
                    let mut changed = words.clone();
                    changed[k] ^= 1 << (next() % 32);
                    assert_ne!(hash_words(&changed), h, "{words:?}: word {k} changed");
                    if k + 1 < len && words[k] != words[k + 1] {
                        let mut swapped = words.clone();
                        swapped.swap(k, k + 1);
                        assert_ne!(hash_words(&swapped), h, "{words:?}: {k} swapped");
                    }
                }
                for appended in [0, 1, next() as u32] {
                    let mut longer = words.clone();
                    longer.push(appended);
                    assert_ne!(hash_words(&longer), h, "{words:?}: {appended} appended");
                }
            }
        }
    }

    #[test]
    fn write_slot_numbers_equal_std_formatting() {
        // The unsigned and hex arms of `write_slot` (PERF.md H58), each width at its extremes,
        // at powers of ten and sixteen and at random, read from a chunk at an odd offset; the
        // text `format!` writes from the same number.
        let mut next = crate::testing::xorshift(0x9e37_79b9_7f4a_7c15);
        // `u32::MAX` and the next: the `U64` arm's two writers meet there (PERF.md H77).
        let mut numbers = vec![0, 1, 9, 10, 15, 16, 99, 100, u64::MAX, u64::MAX - 1];
        numbers.extend([u64::from(u32::MAX), u64::from(u32::MAX) + 1]);
        numbers.extend((0..20).map(|k| 10u64.pow(k)));
        numbers.extend((0..16).map(|k| 16u64.pow(k)));
        numbers.extend((0..500).map(|_| {
            let x = next();
            x >> (x % 64)
        }));
        let mut memo = Memo::default();
        for n in numbers {
            let cases: [(u8, usize, String); 6] = [
                (ty::U8, 1, format!("{}", n as u8)),
                (ty::U16, 2, format!("{}", n as u16)),
                (ty::U32, 4, format!("{}", n as u32)),
                (ty::U64, 8, format!("{n}")),
                (ty::HEX32, 4, format!("{:#x}", n as u32)),
                (ty::HEX64, 8, format!("{n:#x}")),
            ];
            for (t, width, want) in cases {
                let mut chunk = vec![0xee; 3];
                chunk.extend_from_slice(&n.to_le_bytes()[..width]);
                chunk.extend_from_slice(&[0xee; 5]);
                let v = slot(t, 3, width as u32);
                let mut out = b"x".to_vec();
                write_slot(
                    &mut out,
                    &mut memo,
                    &chunk,
                    encoding_rs::WINDOWS_1252,
                    &v,
                    Flavor::Json,
                );
                out.push(b'y');
                assert_eq!(
                    String::from_utf8(out).unwrap(),
                    format!("x{want}y"),
                    "{t} {n:#x}"
                );
            }
        }
    }

    #[test]
    fn fragment_values_equal_decode_unsized() {
        // PERF.md H132: a raw fragment's values as `fragment_value` reads them (texts inline)
        // must be what `decode_unsized` and `slot_of` make of them (the simple path): texts of
        // every length up to past the chunk's end, empty, starting with NUL, at every offset
        // near the end; and, through the same entry, the other types a fragment may hold.
        let mut next = crate::testing::xorshift(0x853c_49e6_748f_ea9b);
        let types: Vec<u8> = (0..=0x23)
            .filter(|&t| values_decode::is_known_type(t) && t != ty::BINXML)
            .collect();
        let mut texts = 0;
        for round in 0..50_000 {
            let len = 1 + (next() % 80) as usize;
            let mut chunk: Vec<u8> = (0..len).map(|_| next() as u8).collect();
            let pos = (next() % len as u64) as usize;
            let t = if next().is_multiple_of(2) {
                ty::STRING
            } else {
                types[(next() % types.len() as u64) as usize]
            };
            if t == ty::STRING && pos + 2 <= len {
                // Counts that fit the chunk, just do not, or are far past it.
                let room = (len - pos - 2) / 2;
                let n = match next() % 4 {
                    0 => room,
                    1 => room + 1,
                    2 => (next() % 4) as usize,
                    _ => (next() % 0x1_0000) as usize,
                };
                chunk[pos..pos + 2].copy_from_slice(&(n as u16).to_le_bytes());
                if pos + 4 <= len && next().is_multiple_of(4) {
                    chunk[pos + 2..pos + 4].copy_from_slice(&[0, 0]);
                }
            }
            let got = fragment_value(&chunk, pos, t);
            let want = fragment_value_decoded(&chunk, pos, t);
            assert_eq!(got, want, "round {round}, type {t:#x} at {pos} of {len}");
            texts += usize::from(t == ty::STRING && got.is_some());
        }
        assert!(texts > 5_000, "{texts} texts read");
    }

    #[test]
    fn scanned_texts_equal_decode_sized() {
        // PERF.md H181: `scan_value`'s inline text arm (its slot, class word and where the next
        // value starts) must be what `decode_sized` and `sign_decoded` make of the same
        // descriptor: sizes even and odd, 0, 2, past the chunk's end, texts starting with a NUL
        // unit or with one NUL byte, at every offset near the end.
        let mut next = crate::testing::xorshift(0x6a09_e667_f3bc_c909);
        let codec = encoding_rs::WINDOWS_1252;
        let general = |chunk: &[u8], pos: usize, size: usize| {
            let (decoded, stop) =
                values_decode::decode_sized(chunk, pos, ty::STRING, size, codec).ok()?;
            let (class, v) = Programs::sign_decoded(chunk, decoded, &mut Rare::default())?;
            let p = stop.max(pos + size);
            (p <= chunk.len()).then_some((p, class, v))
        };
        let (mut empty, mut texts) = (0, 0);
        for round in 0..50_000 {
            let len = 1 + (next() % 64) as usize;
            let mut chunk: Vec<u8> = (0..len).map(|_| next() as u8).collect();
            let pos = (next() % len as u64) as usize;
            let size = match next() % 4 {
                0 => 2 * (next() % 4) as usize,
                1 => len - pos,
                2 => len - pos + 1 + (next() % 3) as usize,
                _ => (next() % 40) as usize,
            };
            if pos + 2 <= len {
                match next() % 4 {
                    0 => chunk[pos..pos + 2].copy_from_slice(&[0, 0]),
                    1 => chunk[pos + (next() % 2) as usize] = 0,
                    _ => {}
                }
            }
            let cx = Source {
                chunk: &chunk,
                codec,
            };
            let got = Programs::scan_value(cx, &mut Rare::default(), pos, ty::STRING, size);
            let want = general(&chunk, pos, size);
            assert_eq!(got, want, "round {round}: size {size} at {pos} of {len}");
            empty += usize::from(matches!(got, Some((_, 0x100, _))));
            texts += usize::from(matches!(got, Some((_, 0x101, _))));
        }
        assert!(
            empty > 5_000 && texts > 5_000,
            "{empty} empty, {texts} texts"
        );
    }

    #[test]
    fn recent_names_equal_fresh_lookups() {
        // `FragmentNames::recent` (PERF.md H134): chunks of 400 name entries at random offsets
        // (many sharing a slot of `recent`), each signed many times in random order, must sign
        // as they do with `recent` forgotten before every lookup.
        let mut next = crate::testing::xorshift(0x94d0_49bb_1331_11eb);
        let mut p = Programs::default();
        let mut fresh = Programs::default();
        let forgotten = FragmentNames::default();
        for chunk_no in 0..20 {
            let mut chunk = vec![0u8; 65_536];
            let mut offsets = Vec::new();
            for k in 0..400u32 {
                let off = 8 + 160 * k as usize + (next() % 40) as usize;
                let text: Vec<u8> = format!("N{}", next() % 300)
                    .encode_utf16()
                    .flat_map(u16::to_le_bytes)
                    .collect();
                chunk[off + 6..off + 8].copy_from_slice(&(text.len() as u16 / 2).to_le_bytes());
                chunk[off + 8..off + 8 + text.len()].copy_from_slice(&text);
                offsets.push(off as u32);
            }
            p.new_chunk();
            for round in 0..4000 {
                let off = offsets[(next() % offsets.len() as u64) as usize];
                chunk[..4].copy_from_slice(&off.to_le_bytes());
                fresh.names.recent.clone_from(&forgotten.recent);
                p.signed = 0;
                fresh.signed = 0;
                let got = p.name_word(&chunk, &mut 0).map(|()| p.signature[0]);
                let want = fresh.name_word(&chunk, &mut 0).map(|()| fresh.signature[0]);
                assert_eq!(got, want, "chunk {chunk_no}, round {round}, offset {off}");
            }
        }
    }

    #[test]
    fn known_names_equal_fresh_lookups() {
        // `FragmentNames::known` (PERF.md H111): in each chunk, a name entry at one of a few
        // offsets with a text from a pool (equal lengths and first 8 bytes, one text a NUL-cut
        // of another, texts past `KNOWN_TEXT`, an entry out of the chunk) must sign as it does
        // with `recent` and `known` forgotten, which looks every text up in `ids`.
        let long: Vec<u16> = (0..30).map(|k| 0x41 + k).collect();
        let mut longer = long.clone();
        longer[29] = 0x7a;
        let mut pool: Vec<Vec<u16>> = vec![
            "Data".encode_utf16().collect(),
            "Dbta".encode_utf16().collect(),
            "Da".encode_utf16().collect(),
            vec![0x44, 0x61, 0, 0x74, 0x61],
            "TargetUserSid".encode_utf16().collect(),
            "TargetLogonId".encode_utf16().collect(),
            "TargetLogonIdTargetLogonId".encode_utf16().collect(),
            "TargetLogonIdTargetLogonIx".encode_utf16().collect(),
            (0..24).map(|k| 0x61 + k).collect(),
            long,
            longer,
        ];
        // Many texts of one length, some a slot of `known` apart, and texts that differ only
        // between their first and last 8 bytes (`known_slot` reads those): one slot.
        let mut y = 0x9e37_79b9u64;
        let mut unit = || {
            y = y.wrapping_mul(6_364_136_223_846_793_005).wrapping_add(1);
            [0x61, 0x62, 0x63, 0][(y >> 62) as usize]
        };
        for _ in 0..300 {
            pool.push((0..6).map(|_| unit()).collect());
        }
        for _ in 0..100 {
            let mut text: Vec<u16> = "Targ".encode_utf16().collect();
            text.extend((0..4).map(|_| unit()));
            text.extend("Name".encode_utf16());
            pool.push(text);
        }
        let mut p = Programs::default();
        let mut fresh = Programs::default();
        let forgotten = FragmentNames::default();
        let mut next = crate::testing::xorshift(0x2545_f491_4f6c_dd1d);
        for round in 0..4000 {
            let x = next();
            let off = [96usize, 352, 1024, 4090][(x % 4) as usize];
            let text = &pool[((x >> 8) % pool.len() as u64) as usize];
            let mut chunk = vec![0u8; 4096];
            chunk[..4].copy_from_slice(&(off as u32).to_le_bytes());
            if let Some(entry) = chunk.get_mut(off + 6..off + 10 + 2 * text.len()) {
                entry[..2].copy_from_slice(&(text.len() as u16).to_le_bytes());
                for (k, u) in text.iter().enumerate() {
                    entry[2 + 2 * k..4 + 2 * k].copy_from_slice(&u.to_le_bytes());
                }
            }
            p.new_chunk();
            fresh.names.recent.clone_from(&forgotten.recent);
            fresh.names.known.clone_from(&forgotten.known);
            for _ in 0..2 {
                p.signed = 0;
                fresh.signed = 0;
                let got = p.name_word(&chunk, &mut 0).map(|()| p.signature[0]);
                let want = fresh.name_word(&chunk, &mut 0).map(|()| fresh.signature[0]);
                assert_eq!(got, want, "round {round}, offset {off}, text {text:?}");
            }
        }
    }
}
