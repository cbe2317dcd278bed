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
use crate::template::{Identities, Templates};
use crate::tokens::{self, Scratch, Source};
use crate::tree::{Names, Node};
use crate::values_decode::{self, Slot};
use crate::values_format::{self, Flavor};
use encoding_rs::Encoding;
use std::cell::RefCell;

/// Records with an array of more items than this are not recorded.
use crate::limits::MAX_PROGRAM_ARRAY_ITEMS;
/// Records with more values than this (all instances together) are not recorded.
use crate::limits::MAX_PROGRAM_VALUES;
/// Nested instances deeper than this are not recorded.
const MAX_SIGN_DEPTH: usize = 8;

/// One step of a program.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Op {
    /// Copy `len` literal bytes starting at `start` of the program's literal buffer.
    Lit { start: u32, len: u32 },
    /// Write value `src` (1-based record-wide index) escaped for `flavor`; `item` is 0 for
    /// the whole value, `k + 1` for item `k` of an expanded array.
    Val { src: u16, item: u16, flavor: Flavor },
}

/// Notes, while the slow path renders, which bytes are literal and which come from values.
#[derive(Debug)]
pub struct Recorder {
    ops: Vec<Op>,
    lits: Vec<u8>,
    /// Output position up to which bytes have been accounted for.
    mark: usize,
    /// Set when the output depends on value text in a way a program cannot replay.
    pub uncacheable: bool,
}

impl Recorder {
    /// A recorder for output that starts at `out.len() == mark`.
    pub fn new(mark: usize) -> Recorder {
        Recorder {
            ops: Vec::new(),
            lits: Vec::new(),
            mark,
            uncacheable: false,
        }
    }

    fn flush_lit(&mut self, out: &[u8]) {
        if out.len() > self.mark {
            let start = self.lits.len() as u32;
            self.lits.extend_from_slice(&out[self.mark..]);
            let len = self.lits.len() as u32 - start;
            match self.ops.last_mut() {
                Some(Op::Lit { len: l, .. }) => *l += len,
                _ => self.ops.push(Op::Lit { start, len }),
            }
            self.mark = out.len();
        }
    }

    /// The finished program for output `out` (whose recorded part started at the initial mark).
    fn finish(mut self, out: &[u8]) -> Option<(Vec<Op>, Vec<u8>)> {
        if self.uncacheable {
            return None;
        }
        self.flush_lit(out);
        Some((self.ops, self.lits))
    }
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
        r.ops.push(Op::Val { src, item, flavor });
        r.mark = out.len();
    }
}

/// Writes item `item - 1` of array slot `slot` for `flavor` (replay of an expanded array).
#[cold]
fn write_item(
    out: &mut Vec<u8>,
    chunk: &[u8],
    codec: &'static Encoding,
    slot: &Slot,
    item: u16,
    flavor: Flavor,
) {
    let Slot::Value(v) = slot else {
        return;
    };
    let want = usize::from(item) - 1;
    let mut k = 0;
    values_decode::for_each_item(chunk, v, |it| {
        if k == want {
            match it {
                Some(values_decode::Item::Text16 { off, units }) => {
                    let o = off as usize;
                    escape::write_utf16_in(
                        out,
                        chunk,
                        o,
                        o + 2 * units as usize,
                        flavor.utf16_mode(),
                    );
                }
                Some(values_decode::Item::Ansi { off, len }) => {
                    let o = off as usize;
                    values_format::write_ansi(out, &chunk[o..o + len as usize], codec, flavor);
                }
                Some(values_decode::Item::Value(iv)) => {
                    values_format::write_value(out, chunk, &iv, codec, flavor)
                }
                None => {}
            }
        }
        k += 1;
    });
}

/// Writes slot `slot` for `flavor` (replay).
#[inline]
fn write_slot(
    out: &mut Vec<u8>,
    chunk: &[u8],
    codec: &'static Encoding,
    slot: &Slot,
    flavor: Flavor,
) {
    match *slot {
        Slot::Text16 { off, units } => {
            let o = off as usize;
            escape::write_utf16_in(out, chunk, o, o + 2 * units as usize, flavor.utf16_mode());
        }
        Slot::Ansi { off, len } => {
            let o = off as usize;
            values_format::write_ansi(out, &chunk[o..o + len as usize], codec, flavor);
        }
        Slot::Value(v) => values_format::write_value(out, chunk, &v, codec, flavor),
        Slot::Null | Slot::BinXml { .. } | Slot::Fragment { .. } => {}
    }
}

/// What [`Programs::sign`] needs to look template definitions up (and parse them on first use).
pub struct Defs<'a> {
    pub names: &'a mut Names,
    pub scratch: &'a mut Scratch,
    pub templates: &'a mut Templates,
    pub identities: &'a mut Identities,
}

/// One stored program: its run of operations and of literal bytes in [`Programs`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Program {
    pub ops_start: u32,
    pub ops_len: u32,
    pub lits_start: u32,
    pub lits_len: u32,
}

type SigMap = crate::bytes::FastMap<Vec<u8>, Program>;

/// Programs are kept across chunks (signatures name definitions by content); these caps bound
/// the memory a crafted file can make them take.
use crate::limits::{MAX_PROGRAMS, MAX_PROGRAM_BYTES};

/// The programs of one renderer, by signature.
#[derive(Debug, Default)]
pub struct Programs {
    by_sig: SigMap,
    ops: Vec<Op>,
    lits: Vec<u8>,
    /// Scratch: the current record's signature and flattened values.
    pub sig: Vec<u8>,
    pub flat: Vec<Slot>,
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
    /// Forgets every program.
    pub fn clear(&mut self) {
        self.by_sig.clear();
        self.ops.clear();
        self.lits.clear();
    }

    /// Checks the record's BinXML window `start..end` for the single-instance shape, reads
    /// all values (record-wide numbering) into `self.flat` and its signature into `self.sig`.
    pub fn sign(&mut self, cx: Source<'_>, defs: &mut Defs<'_>, start: usize, end: usize) -> Sign {
        self.sig.clear();
        self.flat.clear();
        if self.scan_stream(cx, defs, start, end, 0).is_none()
            || self.flat.len() > MAX_PROGRAM_VALUES
        {
            return Sign::Unsupported;
        }
        match self.by_sig.get(&self.sig) {
            Some(&program) => Sign::Hit { program },
            None => Sign::Miss,
        }
    }

    /// A stream of exactly `[fragment header] instance [EOF ...]`.
    fn scan_stream(
        &mut self,
        cx: Source<'_>,
        defs: &mut Defs<'_>,
        start: usize,
        end: usize,
        depth: usize,
    ) -> Option<()> {
        if depth > MAX_SIGN_DEPTH {
            return None;
        }
        let chunk = cx.chunk;
        let mut pos = start;
        if *chunk.get(pos)? == 0x0f {
            pos += 4;
        }
        if pos >= end || *chunk.get(pos)? != 0x0c {
            return None;
        }
        pos += 1;
        let base = self.flat.len();
        let (def_off, n) = tokens::read_instance_values(cx, &mut pos, &mut self.flat).ok()?;
        if pos < end && *chunk.get(pos)? != 0x00 {
            return None;
        }
        let id =
            defs.identities
                .get(cx, defs.templates, defs.names, defs.scratch, def_off, depth)?;
        self.sig.extend_from_slice(&id.to_le_bytes());
        self.sig.extend_from_slice(&(n as u32).to_le_bytes());
        for i in base..base + n {
            let slot = self.flat[i];
            let class: u16 = match slot {
                Slot::Null => 0,
                Slot::Text16 { units, .. } => 0x100 | u16::from(units > 0),
                Slot::Ansi { len, .. } => 0x200 | u16::from(len > 0),
                Slot::Value(v) => {
                    0x400
                        | (u16::from(v.is_expandable()) << 13)
                        | (u16::from(v.is_empty()) << 8)
                        | u16::from(v.ty)
                }
                Slot::BinXml { .. } => 0x800,
                Slot::Fragment { .. } => return None,
            };
            self.sig.extend_from_slice(&class.to_le_bytes());
            if let Slot::Value(v) = slot {
                if v.is_expandable() {
                    // Expansion repeats elements per item and drops empty string items: the
                    // count and which items are empty are part of the shape.
                    if v.count > MAX_PROGRAM_ARRAY_ITEMS {
                        return None;
                    }
                    self.sig.extend_from_slice(&v.count.to_le_bytes());
                    if v.ty == 0x81 || v.ty == 0x82 {
                        let sig = &mut self.sig;
                        values_decode::for_each_item(chunk, &v, |it| {
                            sig.push(u8::from(it.is_some()))
                        });
                    }
                }
            }
        }
        for i in base..base + n {
            if let Slot::BinXml { off, len } = self.flat[i] {
                self.scan_stream(cx, defs, off as usize, (off + len) as usize, depth + 1)?;
            }
        }
        Some(())
    }

    /// Stores the recorded program under the current signature.
    pub fn store(&mut self, rec: Recorder, out: &[u8]) {
        if self.by_sig.len() >= MAX_PROGRAMS
            || self.lits.len() + 8 * self.ops.len() > MAX_PROGRAM_BYTES
        {
            return;
        }
        if let Some((ops, lits)) = rec.finish(out) {
            let op_start = self.ops.len() as u32;
            let lit_start = self.lits.len() as u32;
            for op in ops {
                self.ops.push(match op {
                    Op::Lit { start, len } => Op::Lit {
                        start: start + lit_start,
                        len,
                    },
                    v => v,
                });
            }
            self.lits.extend_from_slice(&lits);
            let program = Program {
                ops_start: op_start,
                ops_len: self.ops.len() as u32 - op_start,
                lits_start: lit_start,
                lits_len: self.lits.len() as u32 - lit_start,
            };
            self.by_sig.insert(self.sig.clone(), program);
        }
    }

    /// Replays `program` over `self.flat`; `false` (output unfinished) when the output passes
    /// `limit`.
    pub fn replay(
        &self,
        out: &mut Vec<u8>,
        cx: Source<'_>,
        program: Program,
        limit: usize,
    ) -> bool {
        let Program {
            ops_start,
            ops_len,
            lits_len,
            ..
        } = program;
        out.reserve(lits_len as usize + 64 * ops_len as usize);
        for op in &self.ops[ops_start as usize..(ops_start + ops_len) as usize] {
            match *op {
                Op::Lit { start, len } => {
                    out.extend_from_slice(&self.lits[start as usize..(start + len) as usize])
                }
                Op::Val { src, item, flavor } => {
                    if out.len() > limit {
                        return false;
                    }
                    if let Some(slot) = self.flat.get(usize::from(src) - 1) {
                        if item == 0 {
                            write_slot(out, cx.chunk, cx.codec, slot, flavor);
                        } else {
                            write_item(out, cx.chunk, cx.codec, slot, item, flavor);
                        }
                    }
                }
            }
        }
        out.len() <= limit
    }
}
