//! Template definitions (6.5), cached per chunk by definition offset, and instantiation with
//! dependency omission, placeholder resolution and array expansion (6.7, 6.8).

use crate::error::{BinXmlError, BinXmlResult};
use crate::limits::{
    DEFINITION_BYTES_MAX, ELEMENT_DEPTH_MAX, IDENTITY_BYTES_MAX, IDENTITY_VARIANTS_MAX,
    INSTANCE_VALUES_MAX, RECORD_NODES_MAX,
};
use crate::tokens::{self, Parser, Scratch, Source, StreamKind};
use crate::tree::{Attr, Element, Names, Node, Span, Tree};
use crate::values_decode::{self, Item, Slot, Value};

/// The parsed template definitions of one chunk.
#[derive(Debug, Default)]
pub struct Templates {
    /// Definition trees (elements keep their dependency ids, substitutions are placeholders).
    pub tree: Tree,
    by_offset: crate::bytes::FastMap<u32, Result<Definition, BinXmlError>>,
    /// Body bytes parsed in this chunk (see [`DEFINITION_BYTES_MAX`]).
    parsed_bytes: usize,
    /// `--wevt-cache`: definition offset → offset of the cached template standing in for it
    /// when the definition fails (`crate::wevt_cache`). Kept by [`Templates::clear`].
    pub(crate) fallback: crate::bytes::FastMap<u32, u32>,
}

/// A parsed definition: its root element in [`Templates::tree`] and the names it uses.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Definition {
    pub root: u32,
    /// The run of [`Names::log`] holding the entry offsets of every name the definition uses.
    pub names: Span,
}

impl Templates {
    /// Forgets every definition (new chunk).
    pub fn clear(&mut self) {
        self.tree.clear();
        self.by_offset.clear();
        self.parsed_bytes = 0;
    }

    /// The root element of the definition at chunk offset `def_off`, parsing it on first use.
    /// Failures are remembered too: the same bytes fail the same way.
    pub fn get_or_parse(
        &mut self,
        cx: Source<'_>,
        names: &mut Names,
        s: &mut Scratch,
        def_off: u32,
        depth: usize,
    ) -> BinXmlResult<u32> {
        self.get_definition(cx, names, s, def_off, depth)
            .map(|d| d.root)
    }

    /// Like [`Templates::get_or_parse`], with the definition's identity.
    pub fn get_definition(
        &mut self,
        cx: Source<'_>,
        names: &mut Names,
        s: &mut Scratch,
        def_off: u32,
        depth: usize,
    ) -> BinXmlResult<Definition> {
        if let Some(r) = self.by_offset.get(&def_off) {
            return *r;
        }
        if self.parsed_bytes > DEFINITION_BYTES_MAX {
            return Err(BinXmlError::new(
                "too many template definitions in chunk",
                def_off as usize,
            ));
        }
        let mut r = self.parse(cx, names, s, def_off, depth);
        if let (Err(_), Some(&alt)) = (r, self.fallback.get(&def_off)) {
            r = self.parse(cx, names, s, alt, depth).or(r);
        }
        self.by_offset.insert(def_off, r);
        r
    }

    /// Offsets of the definitions that failed in this chunk, ascending (`--wevt-cache`).
    pub fn failed_offsets(&self) -> Vec<u32> {
        let mut v: Vec<u32> = (self.by_offset.iter())
            .filter(|(_, r)| r.is_err())
            .map(|(&o, _)| o)
            .collect();
        v.sort_unstable();
        v
    }

    fn parse(
        &mut self,
        cx: Source<'_>,
        names: &mut Names,
        s: &mut Scratch,
        def_off: u32,
        depth: usize,
    ) -> BinXmlResult<Definition> {
        let o = def_off as usize;
        let data_size = crate::bytes::get_u32(cx.chunk, o.saturating_add(20))
            .ok_or_else(|| BinXmlError::new("template definition out of bounds", o))?;
        let start = o + 24;
        let end = start + data_size as usize;
        if end > cx.chunk.len() {
            return Err(BinXmlError::new("template data out of bounds", o));
        }
        self.parsed_bytes += data_size as usize;
        let base = s.children.len();
        let log_start = names.log.len();
        names.logging = true;
        let mut p = Parser {
            src: cx,
            names,
            s,
            tree: &mut self.tree,
            templates: None,
        };
        let r = tokens::parse_stream(&mut p, start, end, StreamKind::Definition, depth);
        names.logging = false;
        let top = s.children.len() - base;
        let first = s.children.get(base).copied();
        s.children.truncate(base);
        r?;
        match (top, first) {
            (1, Some(Node::Element(id))) => Ok(Definition {
                root: id,
                names: Span {
                    start: log_start as u32,
                    len: (names.log.len() - log_start) as u32,
                },
            }),
            // An empty one the reference refuses before it parses (`empty BinXML slice`).
            _ if start == end => Err(BinXmlError::new("empty template definition", o)),
            _ => Err(BinXmlError::new(
                "template definition without exactly one root element",
                o,
            )),
        }
    }
}

/// Content identities of template definitions, shared by every chunk a renderer sees.
///
/// Two definitions get the same identity when they parse to the same tree with the same name
/// texts, wherever they sit: their bodies are byte-identical except for the name references
/// (absolute chunk offsets) and the chain links of inline name entries, every reference is
/// inline in both or in neither, and referenced names have the same text. A known definition is
/// recognised without parsing it again: candidates with the same GUID and size are checked
/// against the recorded reference positions.
#[derive(Debug, Default)]
pub struct Identities {
    by_guid: crate::bytes::FastMap<([u8; 16], u32), Vec<Variant>>,
    by_offset: crate::bytes::FastMap<u32, Option<u32>>,
    /// Recent `by_offset` answers, direct-mapped by offset ([`memo_slot`]): a chunk's records
    /// use a few definitions over and over (PERF.md H49, H74). Cleared with `by_offset` in
    /// `new_chunk`; `by_offset` never changes an entry within a chunk, so it cannot go stale.
    memo: [Option<(u32, Option<u32>)>; MEMO_SLOTS],
    scratch: Vec<u8>,
    /// Scratch: the offsets a variant's references read so far, by reference (`VariantRef::twin`).
    offsets: Vec<u32>,
    next: u32,
    bytes: usize,
    /// At `-t 2` and up, where ids come from, so that every renderer names a definition
    /// shape alike and programs can be shared (PERF.md H95).
    pub shared: Option<std::sync::Arc<crate::program::Shared>>,
}

/// One known definition shape.
#[derive(Debug)]
struct Variant {
    /// The body with reference fields (and inline entries' link and hash) zeroed.
    normalized: Vec<u8>,
    /// Its name references, in body order.
    refs: Vec<VariantRef>,
    id: u32,
}

/// One name reference of a known definition shape.
#[derive(Debug)]
struct VariantRef {
    /// Position of its offset field in the body.
    pos: u32,
    /// Whether it points at the inline name entry just after the field.
    inline: bool,
    /// For a reference to a name elsewhere: the first such reference of the definition the
    /// shape was learnt from that pointed at the same entry (its own index if none). Where the
    /// two point at one offset again, the text was compared through the first (PERF.md H74):
    /// both texts were that entry's.
    twin: u32,
    /// For a reference to a name elsewhere, the UTF-16 bytes of the name.
    text: Vec<u8>,
}

/// Slots of [`Identities`]' memo: more than a chunk's usual count of definitions in use.
const MEMO_SLOTS: usize = 32;

/// The memo slot of the definition at chunk offset `def_off`: the top bits of a multiplicative
/// hash, so that offsets differing in any bits spread.
#[inline]
fn memo_slot(def_off: u32) -> usize {
    (def_off.wrapping_mul(0x9e37_79b9) >> 27) as usize % MEMO_SLOTS
}

/// The UTF-16 bytes of the name entry at `off` (its text, without the terminator).
fn name_bytes(chunk: &[u8], off: u32) -> Option<&[u8]> {
    let o = off as usize;
    let count = usize::from(crate::bytes::get_u16(chunk, o.checked_add(6)?)?);
    chunk.get(o + 8..o + 8 + 2 * count)
}

/// Zeroes, in `body`, the reference field at `pos` and, for an inline entry, its link and hash.
fn mask_ref(body: &mut [u8], pos: usize, inline: bool) {
    let rest = body.get_mut(pos..).unwrap_or_default();
    // The whole field by a fixed-size store where it fits: no `memset` call (PERF.md H49).
    if inline {
        if let Some(field) = rest.first_chunk_mut::<10>() {
            *field = [0; 10];
            return;
        }
    } else if let Some(field) = rest.first_chunk_mut::<4>() {
        *field = [0; 4];
        return;
    }
    let len = rest.len().min(if inline { 10 } else { 4 });
    rest[..len].fill(0);
}

impl Identities {
    /// Forgets the per-chunk offsets (new chunk); identities stay.
    pub fn new_chunk(&mut self) {
        self.by_offset.clear();
        self.memo = [None; MEMO_SLOTS];
    }

    /// The identity of the definition at `def_off`, `None` if it cannot be parsed. The memo's
    /// answer inline (the scan's call site, twice a record), the rest out of line (PERF.md H74).
    #[inline]
    pub fn get(
        &mut self,
        cx: Source<'_>,
        templates: &mut Templates,
        names: &mut Names,
        s: &mut Scratch,
        def_off: u32,
        depth: usize,
    ) -> Option<u32> {
        if let Some((off, r)) = self.memo[memo_slot(def_off)] {
            if off == def_off {
                return r;
            }
        }
        self.get_unmemoized(cx, templates, names, s, def_off, depth)
    }

    /// [`Identities::get`] past the memo: `by_offset`, or the definition's first sight in the
    /// chunk; the answer goes to the memo.
    #[inline(never)]
    fn get_unmemoized(
        &mut self,
        cx: Source<'_>,
        templates: &mut Templates,
        names: &mut Names,
        s: &mut Scratch,
        def_off: u32,
        depth: usize,
    ) -> Option<u32> {
        let r = match self.by_offset.get(&def_off) {
            Some(&r) => r,
            None => {
                let r = self.compute(cx, templates, names, s, def_off, depth);
                self.by_offset.insert(def_off, r);
                r
            }
        };
        self.memo[memo_slot(def_off)] = Some((def_off, r));
        r
    }

    fn compute(
        &mut self,
        cx: Source<'_>,
        templates: &mut Templates,
        names: &mut Names,
        s: &mut Scratch,
        def_off: u32,
        depth: usize,
    ) -> Option<u32> {
        let chunk = cx.chunk;
        let o = def_off as usize;
        let mut guid = [0u8; 16];
        guid.copy_from_slice(chunk.get(o.checked_add(4)?..o + 20)?);
        let size = crate::bytes::get_u32(chunk, o + 20)?;
        let start = o + 24;
        let body = chunk.get(start..start.checked_add(size as usize)?)?;
        if let Some(variants) = self.by_guid.get(&(guid, size)) {
            'variants: for v in variants {
                self.scratch.clear();
                self.scratch.extend_from_slice(body);
                self.offsets.clear();
                for r in &v.refs {
                    let p = r.pos as usize;
                    let Some(off) = crate::bytes::get_u32(body, p) else {
                        continue 'variants;
                    };
                    let is_inline = off as usize == start + p + 4;
                    // A twin is an earlier reference (`offsets` holds those read so far).
                    let checked = self.offsets.get(r.twin as usize) == Some(&off);
                    if is_inline != r.inline
                        || (!r.inline && !checked && name_bytes(chunk, off) != Some(&r.text[..]))
                    {
                        continue 'variants;
                    }
                    self.offsets.push(off);
                    mask_ref(&mut self.scratch, p, r.inline);
                }
                if self.scratch == v.normalized {
                    return Some(v.id);
                }
            }
        }
        let def = templates
            .get_definition(cx, names, s, def_off, depth)
            .ok()?;
        let mut normalized = body.to_vec();
        let mut refs: Vec<VariantRef> = Vec::new();
        // The first reference to each name entry elsewhere, by its offset.
        let mut firsts = crate::bytes::FastMap::<u32, u32>::default();
        let mut cost = body.len();
        for r in &names.log[def.names.range()] {
            // References outside the body (cannot happen for a parsed body) make it unique.
            let p = (r.field as usize)
                .checked_sub(start)
                .filter(|&p| p + 4 <= body.len())?;
            let text = if r.inline {
                Vec::new()
            } else {
                name_bytes(chunk, r.offset)?.to_vec()
            };
            mask_ref(&mut normalized, p, r.inline);
            cost += text.len() + 16;
            let index = refs.len() as u32;
            let twin = if r.inline {
                index
            } else {
                *firsts.entry(r.offset).or_insert(index)
            };
            refs.push(VariantRef {
                pos: p as u32,
                inline: r.inline,
                twin,
                text,
            });
        }
        let known = self.by_guid.get(&(guid, size)).map_or(0, Vec::len);
        if self.bytes + cost > IDENTITY_BYTES_MAX || known >= IDENTITY_VARIANTS_MAX {
            return None;
        }
        let id = match &self.shared {
            Some(shared) => shared.identity(&identity_key(guid, size, &normalized, &refs))?,
            None => {
                self.next += 1;
                self.next - 1
            }
        };
        self.bytes += cost;
        self.by_guid.entry((guid, size)).or_default().push(Variant {
            normalized,
            refs,
            id,
        });
        Some(id)
    }
}

/// The content an identity stands for, as one key for [`crate::program::Shared`]: the GUID,
/// the size, the normalized body and each reference's position, whether it is inline and,
/// if not, its name's text. Equal keys parse to the same tree with the same names (the
/// identity's definition above); the twins only speed the check up and are left out.
fn identity_key(guid: [u8; 16], size: u32, normalized: &[u8], refs: &[VariantRef]) -> Vec<u8> {
    let mut key = Vec::with_capacity(20 + normalized.len() + 9 * refs.len());
    key.extend_from_slice(&guid);
    key.extend_from_slice(&size.to_le_bytes());
    key.extend_from_slice(normalized);
    for r in refs {
        key.extend_from_slice(&r.pos.to_le_bytes());
        key.push(u8::from(r.inline));
        key.extend_from_slice(&(r.text.len() as u32).to_le_bytes());
        key.extend_from_slice(&r.text);
    }
    key
}

// Unused BinXML values (`shared-fixtures/README.md`, "Unused BinXML values"; Zig's
// `template.checkDeferred` is the same). The reference renders a record that is one template
// instance through compiled programs when the instance passes their preflight; they read only
// the values the template uses, and follow a used BinXML value that is one whole instance the
// same way, up to 8 instances deep. A BinXML value that would not parse is then never read
// unless used. Otherwise it builds the whole tree and fails the record with its first fault.
//
// So an instance at most `DEFER_DEPTH_MAX` deep (the record's own is 0) defers a BinXML value
// that fails (`Scratch::defer`); a value that deferred one inside stands only as one whole
// instance ([`is_whole_instance`]); an instance that deferred one stands only if
// [`check_deferred`] accepts it. The reference's preflight limit on an instance's values is
// `INSTANCE_VALUES_MAX`.

/// An instance (values just after its 0x0C byte at `inst_start`, definition root `root`) that
/// deferred a failure below it: `first`, the record's first deferred fault, unless every
/// value descriptor passes the preflight and the template uses none of the `failed` values.
#[cold]
pub fn check_deferred(
    chunk: &[u8],
    def: &Tree,
    root: u32,
    inst_start: usize,
    failed: &[u16],
    first: BinXmlError,
) -> BinXmlResult<()> {
    // The header again: the definition offset, an inline definition, the descriptor table.
    let get = |at: usize| crate::bytes::get_u32(chunk, at).map(|v| v as usize);
    let def_off = get(inst_start + 5).ok_or(first)?;
    let mut p = inst_start + 9;
    if p == def_off {
        p += 24 + get(p + 20).ok_or(first)?;
    }
    let count = get(p).ok_or(first)?;
    if count > INSTANCE_VALUES_MAX {
        return Err(first);
    }
    let table = p + 4;
    let mut off = table + 4 * count;
    for i in 0..count {
        let at = table + 4 * i;
        let size = usize::from(crate::bytes::get_u16(chunk, at).ok_or(first)?);
        if off + size > chunk.len() || !preflight_accepts(chunk, off, size, chunk[at + 2]) {
            return Err(first);
        }
        off += size;
    }
    if failed.iter().any(|&i| uses_value(def, root, i)) {
        return Err(first);
    }
    Ok(())
}

/// Whether the stream `start..end` is one instance that [`check_deferred`] accepted (after an
/// optional fragment header; followed by nothing or an end-of-stream token), as the
/// reference's `single_instance_offset` and `ends_stream` see a stream.
#[cold]
pub fn is_whole_instance(
    chunk: &[u8],
    start: usize,
    end: usize,
    accepted: &[(usize, usize)],
) -> bool {
    debug_assert!(start <= end && end <= chunk.len());
    let single = if end - start >= 6 && chunk[start] == 0x0F && chunk[start + 4] == 0x0C {
        start + 5
    } else if end > start && chunk[start] == 0x0C {
        start + 1
    } else {
        return false;
    };
    accepted.iter().rev().any(|&(inst_start, inst_end)| {
        inst_start == single && inst_end <= end && (inst_end == end || chunk[inst_end] == 0x00)
    })
}

/// The reference preflight's check of one value descriptor (its declared size by type).
fn preflight_accepts(chunk: &[u8], off: usize, size: usize, t: u8) -> bool {
    use crate::values_decode::ty;
    match t {
        ty::NULL | ty::ANSI | ty::BINARY | ty::BINXML => true,
        ty::STRING => size.is_multiple_of(2),
        ty::I8 | ty::U8 => size == 1,
        ty::I16 | ty::U16 => size == 2,
        ty::I32 | ty::U32 | ty::F32 | ty::BOOL | ty::HEX32 => size == 4,
        ty::I64 | ty::U64 | ty::F64 | ty::FILETIME | ty::HEX64 => size == 8,
        ty::GUID | ty::SYSTIME => size == 16,
        ty::SIZET => size == 4 || size == 8,
        ty::SID => size >= 2 && size == 8 + 4 * usize::from(chunk[off + 1]),
        // String arrays only where the program expands them; not followed here.
        _ => false,
    }
}

/// Scratch stacks borrowed from [`Scratch`] for instantiation.
pub struct Build<'s> {
    pub children: &'s mut Vec<Node>,
    pub items: &'s mut Vec<Node>,
    pub array_items: &'s mut Vec<Option<Item>>,
}

#[cold]
fn too_many(at: usize) -> BinXmlError {
    BinXmlError::new("too many nodes in record", at)
}

#[inline]
fn check_budget(tree: &Tree) -> BinXmlResult<()> {
    if tree.nodes.len() + tree.elems.len() > RECORD_NODES_MAX {
        return Err(too_many(0));
    }
    Ok(())
}

/// Instantiates the definition rooted at `root` of `def` with `vals` into `tree` (6.7).
///
/// `flat_base` is the record-wide index of `vals[0]` (see [`crate::values_decode::Value::src`]).
/// Whether the definition rooted at element `root` of `def` substitutes value `index`
/// anywhere (element content or attribute value; see [`check_deferred`]).
pub fn uses_value(def: &Tree, root: u32, index: u16) -> bool {
    let is_it = |n: &Node| matches!(*n, Node::Placeholder { index: i, .. } if i == index);
    let mut stack = vec![root];
    while let Some(e) = stack.pop() {
        let Some(el) = def.elems.get(e as usize) else {
            continue;
        };
        if def.attrs(el).iter().any(|a| def.items(a).iter().any(is_it)) {
            return true;
        }
        for n in def.children(el) {
            match *n {
                Node::Element(child) => stack.push(child),
                ref n if is_it(n) => return true,
                _ => {}
            }
        }
    }
    false
}

pub fn instantiate(
    chunk: &[u8],
    def: &Tree,
    root: u32,
    vals: &[Slot],
    flat_base: u32,
    tree: &mut Tree,
    b: &mut Build<'_>,
) -> BinXmlResult<u32> {
    let v = Vals {
        slots: vals,
        flat_base,
    };
    copy_element(chunk, def, root, &v, tree, b, 0)
}

/// An instance's values and the record-wide index of the first.
struct Vals<'v> {
    slots: &'v [Slot],
    flat_base: u32,
}

/// Resolves a definition node (placeholder or literal) into `dest` (6.7 step 5).
#[inline]
fn resolve(node: &Node, vals: &[Slot], flat_base: u32, tree: &Tree, dest: &mut Vec<Node>) {
    let Node::Placeholder { index, optional } = *node else {
        dest.push(*node);
        return;
    };
    let Some(slot) = vals.get(usize::from(index)) else {
        return;
    };
    let src = u16::try_from(flat_base + u32::from(index) + 1).unwrap_or(0);
    match *slot {
        Slot::Fragment { start, len } => {
            dest.extend_from_slice(&tree.nodes[start as usize..(start + len) as usize]);
        }
        _ if optional && slot.is_empty() => {}
        Slot::Null | Slot::BinXml { .. } => dest.push(Node::Value(Value::NULL)),
        Slot::Text16 { off, units } => dest.push(Node::Text16 {
            off,
            units,
            src,
            item: 0,
        }),
        Slot::Ansi { off, len } => dest.push(Node::Ansi {
            off,
            len,
            src,
            item: 0,
        }),
        Slot::Value(v) => dest.push(Node::Value(Value { src, ..v })),
    }
}

fn copy_element(
    chunk: &[u8],
    def: &Tree,
    e: u32,
    vals: &Vals<'_>,
    tree: &mut Tree,
    b: &mut Build<'_>,
    depth: usize,
) -> BinXmlResult<u32> {
    if depth > ELEMENT_DEPTH_MAX {
        return Err(BinXmlError::new("template elements nested too deeply", 0));
    }
    let de = def.elems[e as usize];
    let attr_start = tree.attrs.len() as u32;
    for a in def.attrs(&de) {
        let base = b.items.len();
        for node in def.items(a) {
            resolve(node, vals.slots, vals.flat_base, tree, b.items);
        }
        if b.items.len() > base {
            let items = tree.push_nodes(&b.items[base..]);
            b.items.truncate(base);
            tree.attrs.push(Attr {
                name: a.name,
                items,
            });
        }
    }
    let attrs = Span {
        start: attr_start,
        len: tree.attrs.len() as u32 - attr_start,
    };
    let base = b.children.len();
    for node in def.children(&de) {
        match *node {
            Node::Element(c) => {
                let ce = &def.elems[c as usize];
                if ce.dep != 0xffff
                    && matches!(vals.slots.get(usize::from(ce.dep)), Some(Slot::Null))
                {
                    continue;
                }
                let id = copy_element(chunk, def, c, vals, tree, b, depth + 1)?;
                expand(chunk, tree, b, id)?;
            }
            _ => resolve(node, vals.slots, vals.flat_base, tree, b.children),
        }
    }
    let children = tree.push_nodes(&b.children[base..]);
    b.children.truncate(base);
    let id = tree.elems.len() as u32;
    tree.elems.push(Element {
        name: de.name,
        dep: 0xffff,
        self_closing: de.self_closing,
        attrs,
        children,
    });
    check_budget(tree)?;
    Ok(id)
}

/// The node for item `k` of array value `array` (`None` for an empty string item).
fn item_node(item: Option<Item>, array: &Value, k: usize) -> Option<Node> {
    let src = array.src;
    let idx = u16::try_from(k + 1).unwrap_or(0);
    let (src, idx) = if idx == 0 { (0, 0) } else { (src, idx) };
    match item? {
        Item::Text16 { off, units } => Some(Node::Text16 {
            off,
            units,
            src,
            item: idx,
        }),
        Item::Ansi { off, len } => Some(Node::Ansi {
            off,
            len,
            src,
            item: idx,
        }),
        Item::Value(v) => Some(Node::Value(Value {
            src,
            item: idx,
            ..v
        })),
    }
}

/// Array expansion (6.8): pushes element `id`, or one copy per item of its first array with
/// more than one item (recursively), onto `b.children`.
fn expand(chunk: &[u8], tree: &mut Tree, b: &mut Build<'_>, id: u32) -> BinXmlResult<()> {
    let e = tree.elems[id as usize];
    // Where the first expandable array is: (attribute index or None for children, node index).
    let mut found: Option<(Option<usize>, usize, Value)> = None;
    for (k, n) in tree.children(&e).iter().enumerate() {
        if let Node::Value(v) = n {
            if v.is_expandable() {
                found = Some((None, k, *v));
                break;
            }
        }
    }
    if found.is_none() {
        'attrs: for (ai, a) in tree.attrs(&e).iter().enumerate() {
            for (k, n) in tree.items(a).iter().enumerate() {
                if let Node::Value(v) = n {
                    if v.is_expandable() {
                        found = Some((Some(ai), k, *v));
                        break 'attrs;
                    }
                }
            }
        }
    }
    let Some((attr, k, v)) = found else {
        b.children.push(Node::Element(id));
        return Ok(());
    };
    let base = b.array_items.len();
    values_decode::for_each_item(chunk, &v, |item| b.array_items.push(item));
    let count = b.array_items.len() - base;
    for j in 0..count {
        let replacement = item_node(b.array_items[base + j], &v, j);
        let mut copy = e;
        match attr {
            None => {
                copy.children = copy_run(tree, e.children, k, replacement);
            }
            Some(ai) => {
                let start = tree.attrs.len() as u32;
                for i in 0..e.attrs.len as usize {
                    let a = tree.attrs[e.attrs.start as usize + i];
                    if i == ai {
                        let items = copy_run(tree, a.items, k, replacement);
                        if items.len > 0 {
                            tree.attrs.push(Attr {
                                name: a.name,
                                items,
                            });
                        }
                    } else {
                        tree.attrs.push(a);
                    }
                }
                copy.attrs = Span {
                    start,
                    len: tree.attrs.len() as u32 - start,
                };
            }
        }
        let new_id = tree.elems.len() as u32;
        tree.elems.push(copy);
        check_budget(tree)?;
        expand(chunk, tree, b, new_id)?;
    }
    b.array_items.truncate(base);
    Ok(())
}

/// Copies the node run `run`, replacing its `k`-th node with `replacement` (or dropping it).
fn copy_run(tree: &mut Tree, run: Span, k: usize, replacement: Option<Node>) -> Span {
    let start = tree.nodes.len() as u32;
    for i in 0..run.len as usize {
        if i == k {
            if let Some(r) = replacement {
                tree.nodes.push(r);
            }
        } else {
            let n = tree.nodes[run.start as usize + i];
            tree.nodes.push(n);
        }
    }
    Span {
        start,
        len: tree.nodes.len() as u32 - start,
    }
}

#[cfg(test)]
mod tests {
    use super::{mask_ref, Identities, Templates};
    use crate::tokens::{Scratch, Source};
    use crate::tree::Names;

    /// Chunk offset of the template definition [`chunk_with`] writes.
    const DEF: u32 = 0x2000;

    /// A chunk with name entries `names` (offset, text) and, at [`DEF`], a template definition
    /// whose root element holds two empty ones; `refs` are the three elements' name offsets.
    fn chunk_with(names: &[(u32, &str)], refs: [u32; 3]) -> Vec<u8> {
        let mut chunk = vec![0u8; 65536];
        for &(off, text) in names {
            let o = off as usize;
            let units: Vec<u16> = text.encode_utf16().collect();
            chunk[o + 6..o + 8].copy_from_slice(&(units.len() as u16).to_le_bytes());
            for (i, u) in units.iter().enumerate() {
                chunk[o + 8 + 2 * i..o + 10 + 2 * i].copy_from_slice(&u.to_le_bytes());
            }
        }
        let mut body = vec![0x0f, 1, 1, 0];
        for (k, name) in refs.into_iter().enumerate() {
            body.extend_from_slice(&[0x01, 0xff, 0xff, 0, 0, 0, 0]);
            body.extend_from_slice(&name.to_le_bytes());
            body.push(if k == 0 { 0x02 } else { 0x03 });
        }
        body.extend_from_slice(&[0x04, 0x00]);
        let d = DEF as usize;
        chunk[d + 4..d + 20].copy_from_slice(&[7; 16]);
        chunk[d + 20..d + 24].copy_from_slice(&(body.len() as u32).to_le_bytes());
        chunk[d + 24..d + 24 + body.len()].copy_from_slice(&body);
        chunk
    }

    /// The identity of `chunk`'s definition, `ids` carried over from the chunks before.
    fn identity(ids: &mut Identities, chunk: &[u8]) -> Option<u32> {
        let cx = Source {
            chunk,
            codec: encoding_rs::WINDOWS_1252,
        };
        ids.new_chunk();
        let (mut templates, mut names) = (Templates::default(), Names::default());
        ids.get(
            cx,
            &mut templates,
            &mut names,
            &mut Scratch::default(),
            DEF,
            0,
        )
    }

    /// Two references of a learnt definition to one name entry (`VariantRef::twin`): where they
    /// point at one offset again, the second text is taken as compared; where they part, each
    /// is compared (PERF.md H74).
    #[test]
    fn identities_compare_twin_references_that_part() {
        let mut ids = Identities::default();
        let (a, b, c) = (0x1000, 0x1100, 0x1200);
        let first = identity(&mut ids, &chunk_with(&[(a, "A"), (b, "B")], [a, b, b]));
        assert!(first.is_some());
        let same = [
            chunk_with(&[(a, "A"), (b, "B")], [a, b, b]),
            chunk_with(&[(a, "A"), (c, "B")], [a, c, c]),
            chunk_with(&[(a, "A"), (b, "B"), (c, "B")], [a, b, c]),
        ];
        for chunk in &same {
            assert_eq!(identity(&mut ids, chunk), first);
        }
        let parted = chunk_with(&[(a, "A"), (b, "B"), (c, "C")], [a, b, c]);
        let other = identity(&mut ids, &parted);
        assert!(other.is_some() && other != first, "{other:?} {first:?}");
        assert_eq!(identity(&mut ids, &parted), other);
    }

    /// `mask_ref` zeroes `pos..pos + 4` (`pos + 10` for an inline entry) cut at the body's end,
    /// and nothing else: every position from the start to past the end of a 16-byte body.
    #[test]
    fn mask_ref_zeroes_the_field_cut_at_the_end() {
        for inline in [false, true] {
            let width = if inline { 10 } else { 4 };
            for pos in 0..20 {
                let mut body: Vec<u8> = (1..=16).collect();
                mask_ref(&mut body, pos, inline);
                for (i, &b) in body.iter().enumerate() {
                    let masked = (pos..pos + width).contains(&i);
                    assert_eq!(b == 0, masked, "inline {inline}, pos {pos}, byte {i}");
                }
            }
        }
    }
}
