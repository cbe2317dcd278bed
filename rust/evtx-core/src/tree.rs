//! The element tree that token streams build and templates instantiate (contract 6.6–6.8),
//! stored as index-linked arenas: no per-node allocation, reset (not freed) between records.
//!
//! Invariant: an element's children are the contiguous run `nodes[children]`, its attributes the
//! run `attrs[attrs]`, each attribute's value items the run `nodes[items]`. Runs are written
//! once, when the element (or attribute) is complete, so they never interleave.

use crate::error::{BinXmlError, BinXmlResult};
use crate::escape;
use crate::values_decode::Value;

/// A contiguous run in one of the tree's vectors.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Span {
    pub start: u32,
    pub len: u32,
}

impl Span {
    #[inline]
    pub fn range(self) -> std::ops::Range<usize> {
        self.start as usize..(self.start + self.len) as usize
    }
}

/// Index of a resolved name in [`Names`].
pub type NameId = u32;

/// A node of the tree.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Node {
    /// An element, index into [`Tree::elems`].
    Element(u32),
    /// UTF-16 text at a chunk offset (already cut at the first NUL).
    /// `src` is the value origin as in [`Value::src`].
    /// `item` is as in [`Value::item`].
    Text16 {
        off: u32,
        units: u32,
        src: u16,
        item: u16,
    },
    /// ANSI text at a chunk offset (NULs removed when written; `len == 0` means empty).
    Ansi {
        off: u32,
        len: u32,
        src: u16,
        item: u16,
    },
    /// A typed value.
    Value(Value),
    /// CDATA section.
    CData { off: u32, units: u32 },
    /// Character reference `&#N;`.
    CharRef(u16),
    /// Entity reference `&name;`.
    EntityRef(NameId),
    /// Processing instruction target.
    PiTarget(NameId),
    /// Processing instruction data.
    PiData { off: u32, units: u32 },
    /// A substitution in a template definition.
    Placeholder { index: u16, optional: bool },
}

impl Node {
    /// The "content" test of section 9.4.
    #[inline]
    pub fn has_content(&self) -> bool {
        match *self {
            Node::Text16 { units, .. } | Node::CData { units, .. } => units > 0,
            Node::Ansi { len, .. } => len > 0,
            Node::CharRef(_) | Node::EntityRef(_) => true,
            Node::Value(v) => !v.is_empty(),
            _ => false,
        }
    }
}

/// An element.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Element {
    pub name: NameId,
    /// Dependency id (template definitions), `0xFFFF` for none.
    pub dep: u16,
    /// Closed with token 0x03.
    pub self_closing: bool,
    pub attrs: Span,
    pub children: Span,
}

/// An attribute and its value items.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Attr {
    pub name: NameId,
    pub items: Span,
}

/// Node arenas of one record (or of a chunk's template definitions).
#[derive(Debug, Default)]
pub struct Tree {
    pub elems: Vec<Element>,
    pub attrs: Vec<Attr>,
    pub nodes: Vec<Node>,
}

impl Tree {
    /// Empties the arenas, keeping their capacity.
    pub fn clear(&mut self) {
        self.elems.clear();
        self.attrs.clear();
        self.nodes.clear();
    }

    /// The children of element `e`.
    #[inline]
    pub fn children(&self, e: &Element) -> &[Node] {
        &self.nodes[e.children.range()]
    }

    /// The attributes of element `e`.
    #[inline]
    pub fn attrs(&self, e: &Element) -> &[Attr] {
        &self.attrs[e.attrs.range()]
    }

    /// The value items of attribute `a`.
    #[inline]
    pub fn items(&self, a: &Attr) -> &[Node] {
        &self.nodes[a.items.range()]
    }

    /// Appends `nodes` as one run.
    #[inline]
    pub fn push_nodes(&mut self, nodes: &[Node]) -> Span {
        let start = self.nodes.len() as u32;
        self.nodes.extend_from_slice(nodes);
        Span {
            start,
            len: nodes.len() as u32,
        }
    }
}

/// A name reference as read from a stream: where its offset field is, the offset it holds,
/// and whether the entry was inline (6.3).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct NameRef {
    pub field: u32,
    pub offset: u32,
    pub inline: bool,
}

/// Name id of the synthetic `Event` root (6.9).
pub const NAME_EVENT: NameId = 0;

/// The longest name (in UTF-16 units) `Names::resolve_slow` takes by its ASCII path.
const ASCII_NAME_MAX: usize = 64;

/// Resolved element/attribute/entity names of one chunk, by chunk offset (6.3).
#[derive(Debug)]
pub struct Names {
    /// While set, the token reader appends every name reference it reads to `log`.
    pub logging: bool,
    /// Name references read while `logging` (template definitions, for their identities).
    pub log: Vec<NameRef>,
    by_offset: crate::bytes::FastMap<u32, NameId>,
    spans: Vec<(u32, u32)>,
    text: String,
}

impl Default for Names {
    fn default() -> Self {
        let mut names = Names {
            logging: false,
            log: Vec::new(),
            by_offset: Default::default(),
            spans: Vec::new(),
            text: String::new(),
        };
        names.clear();
        names
    }
}

impl Names {
    /// Forgets all names (new chunk), keeping the built-in ones.
    pub fn clear(&mut self) {
        self.by_offset.clear();
        self.logging = false;
        self.log.clear();
        self.spans.clear();
        self.text.clear();
        self.text.push_str("Event");
        self.spans.push((0, 5));
    }

    /// The text of name `id`.
    #[inline]
    pub fn get(&self, id: NameId) -> &str {
        let (s, l) = self.spans[id as usize];
        &self.text[s as usize..(s + l) as usize]
    }

    /// Resolves the name entry at chunk offset `offset`: `count` UTF-16 units at `offset + 8`,
    /// cut at the first NUL; the whole entry (with terminator) must lie in the chunk and the
    /// text must be valid UTF-16.
    pub fn resolve(&mut self, chunk: &[u8], offset: u32) -> BinXmlResult<NameId> {
        if let Some(&id) = self.by_offset.get(&offset) {
            return Ok(id);
        }
        self.resolve_slow(chunk, offset)
    }

    #[inline(never)]
    fn resolve_slow(&mut self, chunk: &[u8], offset: u32) -> BinXmlResult<NameId> {
        let o = offset as usize;
        let bad = || BinXmlError::new("name out of bounds", o);
        let count = usize::from(crate::bytes::get_u16(chunk, o + 6).ok_or_else(bad)?);
        let start = o + 8;
        if start + 2 * count + 2 > chunk.len() {
            return Err(bad());
        }
        let raw = &chunk[start..start + 2 * count];
        let units = escape::units_until_nul(raw);
        let text_start = self.text.len();
        let raw = &raw[..2 * units];
        // Nearly every name is ASCII and short: its units' low bytes are its text, taken
        // through a buffer as one `str` (PERF.md H133).
        let mut low = [0u8; ASCII_NAME_MAX];
        let ascii = low.get_mut(..units).and_then(|low| {
            for (b, c) in low.iter_mut().zip(raw.chunks_exact(2)) {
                *b = c[0] | u8::from(c[1] != 0) << 7; // A high byte makes it non-ASCII.
            }
            std::str::from_utf8(low).ok().filter(|t| t.is_ascii())
        });
        match ascii {
            Some(t) => self.text.push_str(t),
            None => self.push_utf16(raw, o)?,
        }
        let id = self.spans.len() as NameId;
        self.spans
            .push((text_start as u32, (self.text.len() - text_start) as u32));
        self.by_offset.insert(offset, id);
        Ok(id)
    }

    /// Appends the UTF-16 text `raw` (of the name entry at `o`) to `text`, decoded: the
    /// general path of `resolve_slow`, and the simple path its ASCII names are tested against.
    #[cold]
    fn push_utf16(&mut self, raw: &[u8], o: usize) -> BinXmlResult<()> {
        let text_start = self.text.len();
        let units = raw.len() / 2;
        let decoded = char::decode_utf16(
            raw[..2 * units]
                .chunks_exact(2)
                .map(|c| u16::from_le_bytes([c[0], c[1]])),
        );
        for c in decoded {
            match c {
                Ok(c) => self.text.push(c),
                Err(_) => {
                    self.text.truncate(text_start);
                    return Err(BinXmlError::new("name is not valid UTF-16", o));
                }
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ascii_names_resolve_as_decoded_utf16() {
        // PERF.md H133: `resolve_slow` copies an ASCII name's low bytes; every name (ASCII,
        // non-ASCII, a lone surrogate, a NUL inside, empty) must resolve to the text, or the
        // error, that `push_utf16` (the decode of every name) gives it.
        let mut next = crate::testing::xorshift(0x27bb_2ee6_87b0_b0fd);
        let alphabet = [
            0x41, 0x5f, 0x7a, 0x30, 0x7f, 0x80, 0xe9, 0x100, 0x4e2d, 0xd800, 0,
        ];
        let mut ascii = 0;
        for round in 0..20_000 {
            let len = (next() % 80) as usize;
            let plain = !next().is_multiple_of(4);
            let text: Vec<u16> = (0..len)
                .map(|_| match plain {
                    true => alphabet[(next() % 5) as usize],
                    false => alphabet[(next() % alphabet.len() as u64) as usize],
                })
                .collect();
            let mut chunk = vec![0xaau8; 8];
            chunk[6..8].copy_from_slice(&(len as u16).to_le_bytes());
            chunk.extend(text.iter().flat_map(|u| u.to_le_bytes()));
            chunk.extend([0, 0]);
            let mut names = Names::default();
            let got = names.resolve(&chunk, 0).map(|id| names.get(id).to_owned());
            let units = escape::units_until_nul(&chunk[8..8 + 2 * len]);
            let mut simple = Names::default();
            let start = simple.text.len();
            let want = simple
                .push_utf16(&chunk[8..8 + 2 * units], 0)
                .map(|()| simple.text[start..].to_owned());
            assert_eq!(got, want, "round {round}: {text:x?}");
            ascii += usize::from(text[..units].iter().all(|&u| u < 0x80));
        }
        assert!(ascii > 5_000, "{ascii} ASCII names");
    }
}
