//! BinXML token reader and tree builder (contract sections 6.1–6.6 and 6.9).
//!
//! [`parse_stream`] handles all three stream kinds: record streams, template definition bodies
//! (dependency ids and substitutions) and nested BinXML values. It reads the tokens; a
//! [`Stream`] holds one stream's state and has one method per token, as the Zig engine's.
//! Everything the streams of one record share (the chunk, names, scratch stacks, tree and
//! template cache) is a [`Parser`]. Top-level elements a stream produces are pushed onto
//! `Scratch::children`, which is a stack shared by nested streams: every caller remembers the
//! stack height before and takes what is above it.

use crate::bytes::{get_u16, get_u32};
use crate::error::{BinXmlError, BinXmlResult};
use crate::escape;
use crate::template::{self, Templates};
use crate::tree::{Element, Names, Node, Span, Tree, NAME_EVENT};
use crate::values_decode::{self, ty, Item, Slot};
use encoding_rs::Encoding;

// More open elements than `ELEMENT_DEPTH_MAX` in one stream, nested streams deeper than
// `STREAM_NESTING_MAX` (6.6) and more tree nodes than `RECORD_NODES_MAX` (section 12) fail the
// record.
use crate::limits::{DEFER_DEPTH_MAX, ELEMENT_DEPTH_MAX, RECORD_NODES_MAX, STREAM_NESTING_MAX};

/// The chunk every stream reads and its ANSI code page (`--ansi-codec`, contract 7); the Zig
/// engine keeps both in its `Parser`.
#[derive(Clone, Copy)]
pub struct Source<'a> {
    pub chunk: &'a [u8],
    pub codec: &'static Encoding,
}

/// What a stream is (6.1): a record's or a BinXML value's, or a template definition body
/// (dependency ids and substitutions allowed, template instances not).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum StreamKind {
    Record,
    Definition,
}

/// What the streams of one record (or of one definition) read and build into: the Zig
/// engine's `Parser`. `templates` is `None` inside a definition, where instances are not
/// allowed.
pub struct Parser<'p, 'a> {
    pub src: Source<'a>,
    pub names: &'p mut Names,
    pub s: &'p mut Scratch,
    pub tree: &'p mut Tree,
    pub templates: Option<&'p mut Templates>,
}

/// An element whose start tag was closed (0x02) and whose children are being collected.
#[derive(Debug, Clone, Copy)]
struct Frame {
    name: u32,
    dep: u16,
    attrs: Span,
    children_base: u32,
}

/// Reusable stacks for tree building and instantiation.
#[derive(Debug, Default)]
pub struct Scratch {
    /// Children runs under construction (see module docs).
    pub children: Vec<Node>,
    /// Attribute value items under construction.
    pub items: Vec<Node>,
    /// Attributes of pending start tags: name and start in `items`.
    attrs: Vec<(u32, u32)>,
    frames: Vec<Frame>,
    /// Instance value stacks.
    pub values: Vec<Slot>,
    /// Array items being expanded.
    pub array_items: Vec<Option<Item>>,
    /// Substitution values read so far in this record (record-wide numbering).
    pub flat_count: u32,
    /// Defer a failing BinXML value of a template instance on the chain of used instances
    /// (see [`template::check_deferred`]); set per record by the caller, kept by
    /// [`Scratch::clear`].
    pub defer_unused: bool,
    /// The first deferred failure of this record (the reference's first fault in read order).
    pub deferred: Option<BinXmlError>,
    /// How many failures were deferred so far in this record.
    pub defers: u32,
    /// Instances that deferred a failure below them and passed the preflight: chunk offsets
    /// just after the 0x0C byte and just after the last value.
    pub accepted: Vec<(usize, usize)>,
}

impl Scratch {
    /// Empties every stack (start of a record).
    pub fn clear(&mut self) {
        self.children.clear();
        self.items.clear();
        self.attrs.clear();
        self.frames.clear();
        self.values.clear();
        self.array_items.clear();
        self.flat_count = 0;
        self.deferred = None;
        self.defers = 0;
        self.accepted.clear();
    }

    /// Puts a failure aside; the first one stays the record's error.
    #[cold]
    fn defer(&mut self, e: BinXmlError) {
        self.deferred.get_or_insert(e);
        self.defers += 1;
    }

    /// Truncates the stacks back to `m` (a BinXML value that failed, then deferred).
    #[cold]
    fn restore(&mut self, m: [usize; 6]) {
        self.children.truncate(m[0]);
        self.items.truncate(m[1]);
        self.attrs.truncate(m[2]);
        self.frames.truncate(m[3]);
        self.values.truncate(m[4]);
        self.array_items.truncate(m[5]);
    }

    fn marks(&self) -> [usize; 6] {
        [
            self.children.len(),
            self.items.len(),
            self.attrs.len(),
            self.frames.len(),
            self.values.len(),
            self.array_items.len(),
        ]
    }
}

#[cold]
fn err(what: &'static str, at: usize) -> BinXmlError {
    BinXmlError::new(what, at)
}

#[inline]
fn u8_at(chunk: &[u8], pos: usize) -> BinXmlResult<u8> {
    chunk
        .get(pos)
        .copied()
        .ok_or_else(|| err("unexpected end of chunk", pos))
}

#[inline]
fn u16_at(chunk: &[u8], pos: usize) -> BinXmlResult<u16> {
    get_u16(chunk, pos).ok_or_else(|| err("unexpected end of chunk", pos))
}

#[inline]
fn u32_at(chunk: &[u8], pos: usize) -> BinXmlResult<u32> {
    get_u32(chunk, pos).ok_or_else(|| err("unexpected end of chunk", pos))
}

impl Parser<'_, '_> {
    /// Reads a name reference at `*pos` (6.3), skipping an inline name entry.
    fn read_name(&mut self, pos: &mut usize) -> BinXmlResult<u32> {
        let chunk = self.src.chunk;
        let field = *pos;
        let off = u32_at(chunk, *pos)?;
        *pos += 4;
        let inline = *pos == off as usize;
        if inline {
            let count = usize::from(u16_at(chunk, *pos + 6)?);
            let next = *pos + 10 + 2 * count;
            if next > chunk.len() {
                return Err(err("inline name past the end of the chunk", *pos));
            }
            *pos = next;
        }
        if self.names.logging {
            self.names.log.push(crate::tree::NameRef {
                field: field as u32,
                offset: off,
                inline,
            });
        }
        self.names.resolve(chunk, off)
    }

    /// The template cache; instances are refused inside definitions (where it is `None`).
    fn templates(&mut self, at: usize) -> BinXmlResult<&mut Templates> {
        match self.templates.as_deref_mut() {
            Some(t) => Ok(t),
            None => Err(err("template instance inside a template definition", at)),
        }
    }
}

/// Reads a u16-counted UTF-16 string at `*pos`, cut at its first NUL: `(offset, units)`.
fn read_counted_utf16(chunk: &[u8], pos: &mut usize) -> BinXmlResult<(u32, u32)> {
    let n = usize::from(u16_at(chunk, *pos)?);
    let start = *pos + 2;
    if start + 2 * n > chunk.len() {
        return Err(err("string past the end of the chunk", start));
    }
    *pos = start + 2 * n;
    let units = escape::units_until_nul(&chunk[start..start + 2 * n]);
    Ok((start as u32, units as u32))
}

/// A start tag whose attributes are being read.
#[derive(Debug, Clone, Copy)]
struct Pending {
    name: u32,
    dep: u16,
    attr_base: usize,
    item_base: usize,
}

/// Moves the pending tag's attributes into the tree (dropping those with no items).
fn finish_attrs(tree: &mut Tree, s: &mut Scratch, p: &Pending) -> Span {
    let start = tree.attrs.len() as u32;
    for i in p.attr_base..s.attrs.len() {
        let (name, item_start) = s.attrs[i];
        let item_end = s
            .attrs
            .get(i + 1)
            .map_or(s.items.len(), |&(_, next)| next as usize);
        if item_end > item_start as usize {
            let items = tree.push_nodes(&s.items[item_start as usize..item_end]);
            tree.attrs.push(crate::tree::Attr { name, items });
        }
    }
    s.attrs.truncate(p.attr_base);
    s.items.truncate(p.item_base);
    Span {
        start,
        len: tree.attrs.len() as u32 - start,
    }
}

/// Parses the token stream at chunk offsets `start..end` into `p.tree`, pushing its top-level
/// elements onto `p.s.children`. `depth` counts the streams this one is nested in.
pub fn parse_stream(
    p: &mut Parser<'_, '_>,
    start: usize,
    end: usize,
    kind: StreamKind,
    depth: usize,
) -> BinXmlResult<()> {
    if depth > STREAM_NESTING_MAX {
        return Err(err("BinXML nested too deeply", start));
    }
    let mut st = Stream {
        kind,
        depth,
        frame_base: p.s.frames.len(),
        pending: None,
        pos: start,
    };
    while st.pos < end {
        let at = st.pos;
        let token = u8_at(p.src.chunk, st.pos)?;
        st.pos += 1;
        match token {
            0x00 => break,
            0x01 | 0x41 => st.open_start(p, at, token & 0x40 != 0)?,
            0x02 => st.close_start(p, at)?,
            0x03 => st.close_empty(p, at)?,
            0x04 => st.end_element(p, at)?,
            0x05 | 0x45 => st.value_text(p, at)?,
            0x06 | 0x46 => st.attribute(p, at)?,
            0x07 | 0x47 => st.units(p, at, |off, units| Node::CData { off, units })?,
            0x08 | 0x48 => st.char_ref(p, at)?,
            0x09 | 0x49 => st.name_ref(p, at, Node::EntityRef)?,
            0x0a => st.name_ref(p, at, Node::PiTarget)?,
            0x0b => st.units(p, at, |off, units| Node::PiData { off, units })?,
            0x0c => st.instance(p, at)?,
            0x0d | 0x0e => st.substitution(p, at, token == 0x0e)?,
            0x0f => st.fragment_header(p, at)?,
            _ => return Err(err("invalid token", at)),
        }
        if p.tree.nodes.len() + p.tree.elems.len() > RECORD_NODES_MAX * 2 {
            return Err(err("too many nodes", at));
        }
    }
    if st.pending.is_some() || p.s.frames.len() > st.frame_base {
        return Err(err("unclosed element at end of stream", st.pos));
    }
    Ok(())
}

/// The state of one stream being parsed: where it is, the start tag being read and where its
/// open elements begin on `Scratch::frames`. One method per token (6.2); `at` is the token's
/// offset, `self.pos` just after the token byte.
struct Stream {
    kind: StreamKind,
    depth: usize,
    frame_base: usize,
    pending: Option<Pending>,
    pos: usize,
}

impl Stream {
    /// 0x01/0x41: an element's start tag (6.3); 0x41 has an attribute list.
    #[inline]
    fn open_start(&mut self, p: &mut Parser<'_, '_>, at: usize, attrs: bool) -> BinXmlResult<()> {
        if self.pending.is_some() {
            return Err(err("start tag inside a start tag", at));
        }
        let chunk = p.src.chunk;
        let dep = if self.kind == StreamKind::Definition {
            let d = u16_at(chunk, self.pos)?;
            self.pos += 2;
            d
        } else {
            0xffff
        };
        u32_at(chunk, self.pos)?; // Element data size: not needed.
        self.pos += 4;
        let name = p.read_name(&mut self.pos)?;
        if attrs {
            u32_at(chunk, self.pos)?; // Attribute list size: not needed.
            self.pos += 4;
        }
        self.pending = Some(Pending {
            name,
            dep,
            attr_base: p.s.attrs.len(),
            item_base: p.s.items.len(),
        });
        Ok(())
    }

    /// 0x02: the start tag ends, the element's children follow.
    #[inline]
    fn close_start(&mut self, p: &mut Parser<'_, '_>, at: usize) -> BinXmlResult<()> {
        let pe = self
            .pending
            .take()
            .ok_or_else(|| err("close start without start", at))?;
        let attrs = finish_attrs(p.tree, p.s, &pe);
        if p.s.frames.len() - self.frame_base >= ELEMENT_DEPTH_MAX {
            return Err(err("elements nested too deeply", at));
        }
        p.s.frames.push(Frame {
            name: pe.name,
            dep: pe.dep,
            attrs,
            children_base: p.s.children.len() as u32,
        });
        Ok(())
    }

    /// 0x03: the start tag ends an element without children.
    #[inline]
    fn close_empty(&mut self, p: &mut Parser<'_, '_>, at: usize) -> BinXmlResult<()> {
        let pe = self
            .pending
            .take()
            .ok_or_else(|| err("close empty without start", at))?;
        let attrs = finish_attrs(p.tree, p.s, &pe);
        let id = p.tree.elems.len() as u32;
        p.tree.elems.push(Element {
            name: pe.name,
            dep: pe.dep,
            self_closing: true,
            attrs,
            children: Span::default(),
        });
        p.s.children.push(Node::Element(id));
        Ok(())
    }

    /// 0x04: the innermost open element ends.
    #[inline]
    fn end_element(&mut self, p: &mut Parser<'_, '_>, at: usize) -> BinXmlResult<()> {
        if self.pending.is_some() || p.s.frames.len() <= self.frame_base {
            return Err(err("end element without open element", at));
        }
        let Some(f) = p.s.frames.pop() else {
            return Err(err("end element without open element", at));
        };
        let children = p.tree.push_nodes(&p.s.children[f.children_base as usize..]);
        p.s.children.truncate(f.children_base as usize);
        let id = p.tree.elems.len() as u32;
        p.tree.elems.push(Element {
            name: f.name,
            dep: f.dep,
            self_closing: false,
            attrs: f.attrs,
            children,
        });
        p.s.children.push(Node::Element(id));
        Ok(())
    }

    /// 0x05/0x45: a value (6.6); a BinXML value is a nested stream.
    #[inline]
    fn value_text(&mut self, p: &mut Parser<'_, '_>, at: usize) -> BinXmlResult<()> {
        let chunk = p.src.chunk;
        let t = u8_at(chunk, self.pos)?;
        self.pos += 1;
        if !values_decode::is_known_type(t) {
            return Err(err("invalid value type", at));
        }
        let (slot, next) = values_decode::decode_unsized(chunk, self.pos, t)?;
        self.pos = next;
        // A record stream's inline value is numbered as the next record-wide value, as the
        // program scan numbers it (`program::Programs::scan_fragment`): a recorder then notes
        // its text as a value, not as literal bytes. A definition's text stays literal.
        let src = if self.kind == StreamKind::Record && t != ty::BINXML {
            p.s.flat_count += 1;
            p.s.flat_count as u16
        } else {
            0
        };
        match slot {
            Slot::BinXml { off, len } => {
                if self.pending.is_some() {
                    return Err(err("BinXML value inside a start tag", at));
                }
                let (start, end) = (off as usize, (off + len) as usize);
                parse_stream(p, start, end, StreamKind::Record, self.depth + 1)
            }
            Slot::Null if t == ty::BINXML => Ok(()),
            Slot::Null => {
                let v = values_decode::Value {
                    src,
                    ..values_decode::Value::NULL
                };
                self.content(p, Node::Value(v), at)
            }
            Slot::Text16 { off, units } => {
                let node = Node::Text16 {
                    off,
                    units,
                    src,
                    item: 0,
                };
                self.content(p, node, at)
            }
            Slot::Ansi { off, len } => {
                let node = Node::Ansi {
                    off,
                    len,
                    src,
                    item: 0,
                };
                self.content(p, node, at)
            }
            Slot::Value(v) => self.content(p, Node::Value(values_decode::Value { src, ..v }), at),
            Slot::Fragment { .. } => Ok(()),
        }
    }

    /// 0x06/0x46: an attribute of the pending start tag; its value items follow.
    #[inline]
    fn attribute(&mut self, p: &mut Parser<'_, '_>, at: usize) -> BinXmlResult<()> {
        let name = p.read_name(&mut self.pos)?;
        if self.pending.is_none() {
            return Err(err("attribute outside a start tag", at));
        }
        p.s.attrs.push((name, p.s.items.len() as u32));
        Ok(())
    }

    /// 0x07/0x47 (CDATA) and 0x0B (PI data): a u16-counted UTF-16 string, cut at its first NUL.
    #[inline]
    fn units(
        &mut self,
        p: &mut Parser<'_, '_>,
        at: usize,
        node: fn(u32, u32) -> Node,
    ) -> BinXmlResult<()> {
        let (off, units) = read_counted_utf16(p.src.chunk, &mut self.pos)?;
        self.content(p, node(off, units), at)
    }

    /// 0x08/0x48: a character reference.
    #[inline]
    fn char_ref(&mut self, p: &mut Parser<'_, '_>, at: usize) -> BinXmlResult<()> {
        let c = u16_at(p.src.chunk, self.pos)?;
        self.pos += 2;
        self.content(p, Node::CharRef(c), at)
    }

    /// 0x09/0x49 (entity reference) and 0x0A (PI target): a name.
    #[inline]
    fn name_ref(
        &mut self,
        p: &mut Parser<'_, '_>,
        at: usize,
        node: fn(u32) -> Node,
    ) -> BinXmlResult<()> {
        let name = p.read_name(&mut self.pos)?;
        self.content(p, node(name), at)
    }

    /// 0x0C: a template instance (6.4), resolved into an element at once.
    #[inline]
    fn instance(&mut self, p: &mut Parser<'_, '_>, at: usize) -> BinXmlResult<()> {
        p.templates(at)?;
        if self.pending.is_some() {
            return Err(err("template instance inside a start tag", at));
        }
        let id = read_instance(p, &mut self.pos, self.depth)?;
        p.s.children.push(Node::Element(id));
        Ok(())
    }

    /// 0x0D/0x0E: a (optional) substitution, in template definitions only.
    #[inline]
    fn substitution(
        &mut self,
        p: &mut Parser<'_, '_>,
        at: usize,
        optional: bool,
    ) -> BinXmlResult<()> {
        if self.kind != StreamKind::Definition {
            return Err(err("substitution outside a template definition", at));
        }
        let chunk = p.src.chunk;
        let index = u16_at(chunk, self.pos)?;
        let t = u8_at(chunk, self.pos + 2)?;
        self.pos += 3;
        if !values_decode::is_known_type(t) {
            return Err(err("invalid substitution type", at));
        }
        self.content(p, Node::Placeholder { index, optional }, at)
    }

    /// 0x0F: a fragment header (6.1), three bytes that change nothing.
    #[inline]
    fn fragment_header(&mut self, p: &mut Parser<'_, '_>, at: usize) -> BinXmlResult<()> {
        if self.pos + 3 > p.src.chunk.len() {
            return Err(err("truncated fragment header", at));
        }
        self.pos += 3;
        Ok(())
    }

    /// A content item (6.6): into the current attribute while a start tag is pending (dropped
    /// before any attribute), else into the innermost open element; outside of any element
    /// it fails the record.
    #[inline]
    fn content(&mut self, p: &mut Parser<'_, '_>, node: Node, at: usize) -> BinXmlResult<()> {
        if let Some(pe) = &self.pending {
            if p.s.attrs.len() > pe.attr_base {
                p.s.items.push(node);
            }
        } else if p.s.frames.len() > self.frame_base {
            p.s.children.push(node);
        } else {
            return Err(err("value outside of element", at));
        }
        Ok(())
    }
}

/// The header of a template instance (6.4) up to its values: the Zig engine's `InstanceHead`.
#[derive(Debug, Clone, Copy)]
pub struct InstanceHead {
    /// Chunk offset of the template definition.
    pub def_off: u32,
    /// Number of values.
    pub count: usize,
    /// Chunk offset of the descriptor table (`count` entries of 4 bytes, inside the chunk).
    pub descriptors: usize,
}

impl InstanceHead {
    /// Chunk offset of the first value, just after the descriptor table.
    #[inline]
    pub fn values(&self) -> usize {
        self.descriptors + 4 * self.count
    }
}

/// Reads the header of a template instance at `pos` (just after the 0x0C byte), skipping an
/// inline definition, up to its descriptor table (which is checked to lie in the chunk).
/// Shared by the token parser and the program scan (`program::Programs::sign`), as the Zig
/// engine's `readInstanceHead`; the descriptors' types are the caller's to check.
#[inline]
pub fn read_instance_head(chunk: &[u8], pos: usize) -> BinXmlResult<InstanceHead> {
    let at = pos;
    u8_at(chunk, at)?;
    u32_at(chunk, at + 1)?;
    let def_off = u32_at(chunk, at + 5)?;
    let mut p = at + 9;
    if p == def_off as usize {
        let data_size = u32_at(chunk, p + 20)? as usize;
        p = p + 24 + data_size;
        if p > chunk.len() {
            return Err(err(
                "inline template definition past the end of the chunk",
                at,
            ));
        }
    }
    let count = u32_at(chunk, p)? as usize;
    p += 4;
    if count > (chunk.len() - p) / 4 {
        return Err(err("value descriptors past the end of the chunk", p));
    }
    Ok(InstanceHead {
        def_off,
        count,
        descriptors: p,
    })
}

/// Reads the header, descriptors and values of a template instance (6.4) at `*pos` (just after
/// the 0x0C byte), pushing one slot per value onto `out`. Returns the definition offset and the
/// number of values; `*pos` ends after the last value.
pub fn read_instance_values(
    cx: Source<'_>,
    pos: &mut usize,
    out: &mut Vec<Slot>,
) -> BinXmlResult<(u32, usize)> {
    let chunk = cx.chunk;
    let head = read_instance_head(chunk, *pos)?;
    let (def_off, n, mut p) = (head.def_off, head.count, head.descriptors);
    let table = &chunk[p..p + 4 * n];
    // All descriptors are checked before any value is read (6.4 step 1).
    for (i, d) in table.chunks_exact(4).enumerate() {
        if !values_decode::is_known_type(d[2]) {
            return Err(err("invalid value type in descriptor", p + 4 * i));
        }
    }
    p += 4 * n;
    out.reserve(n);
    for d in table.chunks_exact(4) {
        let size = usize::from(u16::from_le_bytes([d[0], d[1]]));
        let t = d[2];
        let start = p;
        // Fixed-width scalars (the common case) inline; everything else in `decode_sized`.
        let w = values_decode::fixed_width(t);
        if t == ty::STRING && size % 2 == 0 && start + size <= chunk.len() {
            out.push(values_decode::text16(chunk, start, size / 2));
            p = start + size;
        } else if w != 0 && t != ty::BOOL && start + w <= chunk.len() {
            out.push(Slot::Value(values_decode::Value {
                ty: t,
                src: 0,
                item: 0,
                count: 1,
                off: start as u32,
                len: w as u32,
            }));
            p = start + w.max(size);
        } else {
            let (slot, mut stop) = values_decode::decode_sized(chunk, p, t, size, cx.codec)?;
            if t == ty::NULL {
                stop += size;
            }
            p = stop.max(start + size);
            out.push(slot);
        }
        if p > chunk.len() {
            return Err(err("value past the end of the chunk", start));
        }
    }
    *pos = p;
    Ok((def_off, n))
}

/// Reads a template instance (6.4) at `*pos` (just after the 0x0C byte), decodes its values,
/// parses its BinXML values, and instantiates it (6.7). Returns the new root element.
///
/// Read order (one rule in both engines, `shared-fixtures/README.md`, the reference's): the
/// header and the descriptors, every value, the definition, then the BinXML values' streams.
fn read_instance(p: &mut Parser<'_, '_>, pos: &mut usize, depth: usize) -> BinXmlResult<u32> {
    let inst_start = *pos;
    let val_base = p.s.values.len();
    let (def_off, n) = read_instance_values(p.src, pos, &mut p.s.values)?;
    // Record-wide value numbering: this instance's values first, then nested instances'.
    let flat_base = p.s.flat_count;
    p.s.flat_count += n as u32;
    let root = {
        let Parser {
            src,
            names,
            s,
            templates,
            ..
        } = &mut *p;
        let Some(templates) = templates.as_deref_mut() else {
            return Err(err(
                "template instance inside a template definition",
                inst_start,
            ));
        };
        templates.get_or_parse(*src, names, s, def_off, depth)?
    };
    let defers_start = p.s.defers;
    let failed = parse_binxml_values(p, val_base..val_base + n, depth)?;
    if p.s.defers != defers_start {
        let first = p.s.deferred.expect("a deferred failure");
        let chunk = p.src.chunk;
        let definitions = &p.templates(inst_start)?.tree;
        template::check_deferred(chunk, definitions, root, inst_start, &failed, first)?;
        p.s.accepted.push((inst_start, *pos));
    }
    instantiate(p, root, val_base, flat_base, inst_start)
}

/// Parses the BinXML values among `values` (instance slots in `Scratch::values`): each becomes
/// the list of its top-level elements. Returns the value indices (within the instance) whose
/// failure was deferred.
fn parse_binxml_values(
    p: &mut Parser<'_, '_>,
    values: std::ops::Range<usize>,
    depth: usize,
) -> BinXmlResult<Vec<u16>> {
    // An instance on the chain of used instances defers a BinXML value that fails (see
    // `template::check_deferred`), as deep as the reference's compiled path follows them.
    let may_defer = p.s.defer_unused && depth <= DEFER_DEPTH_MAX;
    let mut failed: Vec<u16> = Vec::new();
    for i in values.clone() {
        let Slot::BinXml { off, len } = p.s.values[i] else {
            continue;
        };
        let base = p.s.children.len();
        let marks = p.s.marks();
        let defers_before = p.s.defers;
        let (start, end) = (off as usize, (off + len) as usize);
        let mut parsed = parse_stream(p, start, end, StreamKind::Record, depth + 1);
        // A value that deferred a failure inside stands only as one whole instance.
        if parsed.is_ok()
            && p.s.defers != defers_before
            && !template::is_whole_instance(p.src.chunk, start, end, &p.s.accepted)
        {
            parsed = Err(p.s.deferred.expect("a deferred failure"));
        }
        if let Err(e) = parsed {
            if !may_defer {
                return Err(e);
            }
            p.s.restore(marks);
            p.s.defer(e);
            failed.push((i - values.start) as u16);
            continue;
        }
        let span = p.tree.push_nodes(&p.s.children[base..]);
        p.s.children.truncate(base);
        p.s.values[i] = Slot::Fragment {
            start: span.start,
            len: span.len,
        };
    }
    Ok(failed)
}

/// Instantiates the definition at `root` with the instance's values (`Scratch::values` from
/// `val_base`, record-wide numbers from `flat_base`) and pops them.
fn instantiate(
    p: &mut Parser<'_, '_>,
    root: u32,
    val_base: usize,
    flat_base: u32,
    at: usize,
) -> BinXmlResult<u32> {
    let Parser {
        src,
        s,
        tree,
        templates,
        ..
    } = p;
    let Some(templates) = templates.as_deref() else {
        return Err(err("template instance inside a template definition", at));
    };
    let Scratch {
        values,
        children,
        items,
        array_items,
        ..
    } = &mut **s;
    let mut b = template::Build {
        children,
        items,
        array_items,
    };
    let id = template::instantiate(
        src.chunk,
        &templates.tree,
        root,
        &values[val_base..],
        flat_base,
        tree,
        &mut b,
    )?;
    values.truncate(val_base);
    Ok(id)
}

/// Parses the BinXML window `start..end` of a record and returns its root element (6.9):
/// the first top-level element, or a synthetic empty `Event`.
pub fn parse_record(p: &mut Parser<'_, '_>, start: usize, end: usize) -> BinXmlResult<u32> {
    p.s.clear();
    p.tree.clear();
    parse_stream(p, start, end, StreamKind::Record, 0)?;
    let (s, tree) = (&*p.s, &mut *p.tree);
    if let Some(first) = s.deferred {
        // The record stream itself must be that one instance, as the value streams below.
        if s.children.len() != 1
            || !template::is_whole_instance(p.src.chunk, start, end, &s.accepted)
        {
            return Err(first);
        }
    }
    let first = s.children.iter().find_map(|n| match n {
        Node::Element(id) => Some(*id),
        _ => None,
    });
    Ok(match first {
        Some(id) => id,
        None => {
            let id = tree.elems.len() as u32;
            tree.elems.push(Element {
                name: NAME_EVENT,
                dep: 0xffff,
                self_closing: false,
                attrs: Span::default(),
                children: Span::default(),
            });
            id
        }
    })
}
