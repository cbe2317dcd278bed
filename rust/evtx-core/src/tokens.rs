//! BinXML token reader and tree builder (contract sections 6.1–6.6 and 6.9).
//!
//! One function, [`parse_stream`], handles all three stream kinds: record streams, template
//! definition bodies (dependency ids and substitutions) and nested BinXML values. Top-level
//! elements a stream produces are pushed onto `Scratch::children`, which is a stack shared by
//! nested streams: every caller remembers the stack height before and takes what is above it.

use crate::bytes::{get_u16, get_u32};
use crate::error::{BinXmlError, BinXmlResult};
use crate::escape;
use crate::template::{self, Templates};
use crate::tree::{Element, Names, Node, Span, Tree, NAME_EVENT};
use crate::values_decode::{self, ty, Item, Slot};
use encoding_rs::Encoding;

/// More open elements than this in one stream fail the record (6.6).
pub use crate::limits::MAX_ELEMENT_DEPTH;
/// More tree nodes than this in one record fail it (section 12).
pub use crate::limits::MAX_RECORD_NODES;
/// Nested streams deeper than this fail the record (6.6).
pub use crate::limits::MAX_STREAM_NESTING;

/// The chunk every stream reads and its ANSI code page (`--ansi-codec`, contract 7); the Zig
/// engine keeps both in its `Parser`.
#[derive(Clone, Copy)]
pub struct Source<'a> {
    pub chunk: &'a [u8],
    pub codec: &'static Encoding,
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

/// Reads a name reference at `*pos` (6.3), skipping an inline name entry.
fn read_name_ref(cx: Source<'_>, names: &mut Names, pos: &mut usize) -> BinXmlResult<u32> {
    let field = *pos;
    let off = u32_at(cx.chunk, *pos)?;
    *pos += 4;
    let inline = *pos == off as usize;
    if inline {
        let count = usize::from(u16_at(cx.chunk, *pos + 6)?);
        let next = *pos + 10 + 2 * count;
        if next > cx.chunk.len() {
            return Err(err("inline name past the end of the chunk", *pos));
        }
        *pos = next;
    }
    if names.logging {
        names.log.push(crate::tree::NameRef {
            field: field as u32,
            offset: off,
            inline,
        });
    }
    names.resolve(cx.chunk, off)
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

/// Parses the token stream at chunk offsets `start..end` into `tree`, pushing its top-level
/// elements onto `s.children`.
///
/// `def` marks a template definition body (dependency ids, substitutions allowed, instances
/// not). `templates` is `None` where template instances are not allowed (inside definitions).
#[allow(clippy::too_many_arguments)]
pub fn parse_stream(
    cx: Source<'_>,
    names: &mut Names,
    s: &mut Scratch,
    tree: &mut Tree,
    mut templates: Option<&mut Templates>,
    start: usize,
    end: usize,
    def: bool,
    depth: usize,
) -> BinXmlResult<()> {
    if depth > MAX_STREAM_NESTING {
        return Err(err("BinXML nested too deeply", start));
    }
    let chunk = cx.chunk;
    let frame_base = s.frames.len();
    let mut pending: Option<Pending> = None;
    let mut pos = start;

    // Adds a content item at the current position (6.6).
    macro_rules! content {
        ($node:expr, $at:expr) => {{
            let node = $node;
            if let Some(p) = &pending {
                if s.attrs.len() > p.attr_base {
                    s.items.push(node);
                }
            } else if s.frames.len() > frame_base {
                s.children.push(node);
            } else {
                return Err(err("value outside of element", $at));
            }
        }};
    }

    while pos < end {
        let at = pos;
        let token = u8_at(chunk, pos)?;
        pos += 1;
        match token {
            0x00 => break,
            0x01 | 0x41 => {
                if pending.is_some() {
                    return Err(err("start tag inside a start tag", at));
                }
                let dep = if def {
                    let d = u16_at(chunk, pos)?;
                    pos += 2;
                    d
                } else {
                    0xffff
                };
                u32_at(chunk, pos)?;
                pos += 4;
                let name = read_name_ref(cx, names, &mut pos)?;
                if token & 0x40 != 0 {
                    u32_at(chunk, pos)?;
                    pos += 4;
                }
                pending = Some(Pending {
                    name,
                    dep,
                    attr_base: s.attrs.len(),
                    item_base: s.items.len(),
                });
            }
            0x02 => {
                let p = pending
                    .take()
                    .ok_or_else(|| err("close start without start", at))?;
                let attrs = finish_attrs(tree, s, &p);
                if s.frames.len() - frame_base >= MAX_ELEMENT_DEPTH {
                    return Err(err("elements nested too deeply", at));
                }
                s.frames.push(Frame {
                    name: p.name,
                    dep: p.dep,
                    attrs,
                    children_base: s.children.len() as u32,
                });
            }
            0x03 => {
                let p = pending
                    .take()
                    .ok_or_else(|| err("close empty without start", at))?;
                let attrs = finish_attrs(tree, s, &p);
                let id = tree.elems.len() as u32;
                tree.elems.push(Element {
                    name: p.name,
                    dep: p.dep,
                    self_closing: true,
                    attrs,
                    children: Span::default(),
                });
                s.children.push(Node::Element(id));
            }
            0x04 => {
                if pending.is_some() || s.frames.len() <= frame_base {
                    return Err(err("end element without open element", at));
                }
                let Some(f) = s.frames.pop() else {
                    return Err(err("end element without open element", at));
                };
                let children = tree.push_nodes(&s.children[f.children_base as usize..]);
                s.children.truncate(f.children_base as usize);
                let id = tree.elems.len() as u32;
                tree.elems.push(Element {
                    name: f.name,
                    dep: f.dep,
                    self_closing: false,
                    attrs: f.attrs,
                    children,
                });
                s.children.push(Node::Element(id));
            }
            0x05 | 0x45 => {
                let t = u8_at(chunk, pos)?;
                pos += 1;
                if !values_decode::is_known_type(t) {
                    return Err(err("invalid value type", at));
                }
                let (slot, next) = values_decode::decode_unsized(chunk, pos, t)?;
                pos = next;
                match slot {
                    Slot::BinXml { off, len } => {
                        if pending.is_some() {
                            return Err(err("BinXML value inside a start tag", at));
                        }
                        parse_stream(
                            cx,
                            names,
                            s,
                            tree,
                            templates.as_deref_mut(),
                            off as usize,
                            (off + len) as usize,
                            false,
                            depth + 1,
                        )?;
                    }
                    Slot::Null if t == ty::BINXML => {}
                    Slot::Null => content!(Node::Value(values_decode::Value::NULL), at),
                    Slot::Text16 { off, units } => {
                        content!(
                            Node::Text16 {
                                off,
                                units,
                                src: 0,
                                item: 0
                            },
                            at
                        )
                    }
                    Slot::Ansi { off, len } => content!(
                        Node::Ansi {
                            off,
                            len,
                            src: 0,
                            item: 0
                        },
                        at
                    ),
                    Slot::Value(v) => content!(Node::Value(v), at),
                    Slot::Fragment { .. } => {}
                }
            }
            0x06 | 0x46 => {
                let name = read_name_ref(cx, names, &mut pos)?;
                if pending.is_none() {
                    return Err(err("attribute outside a start tag", at));
                }
                s.attrs.push((name, s.items.len() as u32));
            }
            0x07 | 0x47 => {
                let (off, units) = read_counted_utf16(chunk, &mut pos)?;
                content!(Node::CData { off, units }, at);
            }
            0x08 | 0x48 => {
                let c = u16_at(chunk, pos)?;
                pos += 2;
                content!(Node::CharRef(c), at);
            }
            0x09 | 0x49 => {
                let name = read_name_ref(cx, names, &mut pos)?;
                content!(Node::EntityRef(name), at);
            }
            0x0a => {
                let name = read_name_ref(cx, names, &mut pos)?;
                content!(Node::PiTarget(name), at);
            }
            0x0b => {
                let (off, units) = read_counted_utf16(chunk, &mut pos)?;
                content!(Node::PiData { off, units }, at);
            }
            0x0c => {
                let Some(t) = templates.as_deref_mut() else {
                    return Err(err("template instance inside a template definition", at));
                };
                if pending.is_some() {
                    return Err(err("template instance inside a start tag", at));
                }
                let id = read_instance(cx, names, s, tree, t, &mut pos, depth)?;
                s.children.push(Node::Element(id));
            }
            0x0d | 0x0e => {
                if !def {
                    return Err(err("substitution outside a template definition", at));
                }
                let index = u16_at(chunk, pos)?;
                let t = u8_at(chunk, pos + 2)?;
                pos += 3;
                if !values_decode::is_known_type(t) {
                    return Err(err("invalid substitution type", at));
                }
                content!(
                    Node::Placeholder {
                        index,
                        optional: token == 0x0e
                    },
                    at
                );
            }
            0x0f => {
                if pos + 3 > chunk.len() {
                    return Err(err("truncated fragment header", at));
                }
                pos += 3;
            }
            _ => return Err(err("invalid token", at)),
        }
        if tree.nodes.len() + tree.elems.len() > MAX_RECORD_NODES * 2 {
            return Err(err("too many nodes", at));
        }
    }
    if pending.is_some() || s.frames.len() > frame_base {
        return Err(err("unclosed element at end of stream", pos));
    }
    Ok(())
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
    let at = *pos;
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
    let n = u32_at(chunk, p)? as usize;
    p += 4;
    if n > (chunk.len() - p) / 4 {
        return Err(err("value descriptors past the end of the chunk", p));
    }
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
fn read_instance(
    cx: Source<'_>,
    names: &mut Names,
    s: &mut Scratch,
    tree: &mut Tree,
    templates: &mut Templates,
    pos: &mut usize,
    depth: usize,
) -> BinXmlResult<u32> {
    let inst_start = *pos;
    let val_base = s.values.len();
    let (def_off, n) = read_instance_values(cx, pos, &mut s.values)?;
    // Record-wide value numbering: this instance's values first, then nested instances'.
    let flat_base = s.flat_count;
    s.flat_count += n as u32;
    let root = templates.get_or_parse(cx, names, s, def_off, depth)?;
    // An instance on the chain of used instances defers a BinXML value that fails (see
    // `template::check_deferred`), as deep as the reference's compiled path follows them.
    let may_defer = s.defer_unused && depth <= template::DEFER_DEPTH_MAX;
    let defers_start = s.defers;
    let mut failed: Vec<u16> = Vec::new();
    // Prepare BinXML values: each becomes the list of its top-level elements.
    for i in val_base..val_base + n {
        if let Slot::BinXml { off, len } = s.values[i] {
            let base = s.children.len();
            let marks = s.marks();
            let defers_before = s.defers;
            let (start, end) = (off as usize, (off + len) as usize);
            let mut parsed = parse_stream(
                cx,
                names,
                s,
                tree,
                Some(templates),
                start,
                end,
                false,
                depth + 1,
            );
            // A value that deferred a failure inside stands only as one whole instance.
            if parsed.is_ok()
                && s.defers != defers_before
                && !template::is_whole_instance(cx.chunk, start, end, &s.accepted)
            {
                parsed = Err(s.deferred.expect("a deferred failure"));
            }
            if let Err(e) = parsed {
                if !may_defer {
                    return Err(e);
                }
                s.restore(marks);
                s.defer(e);
                failed.push((i - val_base) as u16);
                continue;
            }
            let span = tree.push_nodes(&s.children[base..]);
            s.children.truncate(base);
            s.values[i] = Slot::Fragment {
                start: span.start,
                len: span.len,
            };
        }
    }
    if s.defers != defers_start {
        let first = s.deferred.expect("a deferred failure");
        template::check_deferred(cx.chunk, &templates.tree, root, inst_start, &failed, first)?;
        s.accepted.push((inst_start, *pos));
    }

    let Scratch {
        values,
        children,
        items,
        array_items,
        ..
    } = s;
    let mut b = template::Build {
        children,
        items,
        array_items,
    };
    let id = template::instantiate(
        cx.chunk,
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
pub fn parse_record(
    cx: Source<'_>,
    names: &mut Names,
    s: &mut Scratch,
    tree: &mut Tree,
    templates: &mut Templates,
    start: usize,
    end: usize,
) -> BinXmlResult<u32> {
    s.clear();
    tree.clear();
    parse_stream(cx, names, s, tree, Some(templates), start, end, false, 0)?;
    if let Some(first) = s.deferred {
        // The record stream itself must be that one instance, as the value streams below.
        if s.children.len() != 1 || !template::is_whole_instance(cx.chunk, start, end, &s.accepted)
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
