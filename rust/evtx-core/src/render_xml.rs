//! XML rendering of a record tree (contract section 9).

use crate::error::{BinXmlError, BinXmlResult};
use crate::escape::{self, Mode};
use crate::tree::{Attr, Element, Names, Node, Tree};
use crate::values_format::{self, Flavor};
use encoding_rs::Encoding;

/// Everything either renderer reads besides the output buffer: the record's tree and the chunk
/// bytes its nodes point into.
pub struct RenderInput<'a> {
    pub chunk: &'a [u8],
    pub codec: &'static Encoding,
    pub names: &'a Names,
    pub tree: &'a Tree,
    /// Set while recording a replay program (see `program`).
    pub rec: Option<&'a std::cell::RefCell<crate::program::Recorder>>,
    /// Output length past which rendering fails (record and chunk output limits, section 12).
    pub limit: usize,
}

// Elements nested deeper than `RENDER_DEPTH_MAX` fail the record when rendered (section 12).
use crate::limits::RENDER_DEPTH_MAX;

/// The failure of a record whose output passed its limit (both renderers).
#[cold]
pub(crate) fn too_large() -> BinXmlError {
    BinXmlError::new("record output too large or too deep", 0)
}

/// The failure of a record whose elements nest past `RENDER_DEPTH_MAX` (both renderers).
#[cold]
pub(crate) fn too_deep() -> BinXmlError {
    BinXmlError::new("elements nested too deeply", 0)
}

const DECLARATION: &[u8] = b"<?xml version=\"1.0\" encoding=\"utf-8\"?>\n";

/// Renders the record whose root element is `root` (9.1), declaration included.
pub fn render_record(
    out: &mut Vec<u8>,
    input: &RenderInput<'_>,
    root: u32,
    indent: bool,
) -> BinXmlResult<()> {
    out.extend_from_slice(DECLARATION);
    XmlRenderer { cx: input, indent }.element(out, root, 0)
}

/// The XML renderer of one record (the Zig engine's `XmlRenderer`).
struct XmlRenderer<'c, 'a> {
    cx: &'c RenderInput<'a>,
    indent: bool,
}

#[inline]
fn spaces(out: &mut Vec<u8>, n: usize) {
    const SP: &[u8; 64] = b"                                                                ";
    let mut n = n;
    while n > 0 {
        let k = n.min(64);
        out.extend_from_slice(&SP[..k]);
        n -= k;
    }
}

impl XmlRenderer<'_, '_> {
    fn element(&self, out: &mut Vec<u8>, id: u32, k: usize) -> BinXmlResult<()> {
        let (cx, indent) = (self.cx, self.indent);
        // Depth first, then size: the order the Zig engine checks them (one error vocabulary).
        // The root is depth 1 (`k` is its indent, 2 per level), as in the JSON renderer and the
        // Zig engine; the reference fails at indent level 512 (`indent / 2 >= 512`).
        let depth = k / 2 + 1;
        if depth > RENDER_DEPTH_MAX {
            return Err(too_deep());
        }
        if out.len() > cx.limit {
            return Err(too_large());
        }
        let tree = cx.tree;
        let e: &Element = &tree.elems[id as usize];
        let name = cx.names.get(e.name).as_bytes();
        if indent {
            spaces(out, k);
        }
        out.push(b'<');
        out.extend_from_slice(name);
        for a in tree.attrs(e) {
            self.write_attribute(out, a)?;
        }
        let children = tree.children(e);
        if children.is_empty() {
            if e.self_closing {
                out.extend_from_slice(b"/>");
            } else {
                out.extend_from_slice(b"></");
                out.extend_from_slice(name);
                out.push(b'>');
            }
            if indent {
                out.push(b'\n');
            }
            return Ok(());
        }
        let has_elements = children.iter().any(|n| matches!(n, Node::Element(_)));
        if !has_elements {
            out.push(b'>');
            self.write_inline(out, children)?;
            out.extend_from_slice(b"</");
            out.extend_from_slice(name);
            out.push(b'>');
            if indent {
                out.push(b'\n');
            }
            return Ok(());
        }
        out.push(b'>');
        if indent {
            out.push(b'\n');
        }
        for n in children {
            match *n {
                Node::Element(c) => self.element(out, c, k + 2)?,
                ref n => {
                    if indent {
                        spaces(out, k + 2);
                    }
                    self.node_text(out, n, Flavor::XmlText)?;
                    if indent {
                        out.push(b'\n');
                    }
                    if out.len() > cx.limit {
                        return Err(too_large());
                    }
                }
            }
        }
        if indent {
            spaces(out, k);
        }
        out.extend_from_slice(b"</");
        out.extend_from_slice(name);
        out.push(b'>');
        if indent {
            out.push(b'\n');
        }
        Ok(())
    }

    /// One attribute (9.2): written only when some item has content; an element or PI inside
    /// it fails the record, as in the reference.
    fn write_attribute(&self, out: &mut Vec<u8>, a: &Attr) -> BinXmlResult<()> {
        let cx = self.cx;
        let items = cx.tree.items(a);
        for n in items {
            if matches!(
                n,
                Node::Element(_) | Node::PiTarget(_) | Node::PiData { .. }
            ) {
                return Err(BinXmlError::new(
                    "element or PI inside an attribute value",
                    0,
                ));
            }
        }
        if !items.iter().any(Node::has_content) {
            return Ok(());
        }
        out.push(b' ');
        out.extend_from_slice(cx.names.get(a.name).as_bytes());
        out.extend_from_slice(b"=\"");
        for n in items {
            self.node_text(out, n, Flavor::XmlAttr)?;
            if out.len() > cx.limit {
                return Err(too_large());
            }
        }
        out.push(b'"');
        Ok(())
    }

    /// Children of an element without element children, one after another (9.2).
    fn write_inline(&self, out: &mut Vec<u8>, children: &[Node]) -> BinXmlResult<()> {
        let cx = self.cx;
        let mut i = 0;
        while i < children.len() {
            match children[i] {
                Node::PiTarget(t) => {
                    out.extend_from_slice(b"<?");
                    out.extend_from_slice(cx.names.get(t).as_bytes());
                    if let Some(Node::PiData { off, units }) = children.get(i + 1) {
                        out.push(b' ');
                        utf16(out, cx.chunk, *off, *units, Mode::Raw);
                        i += 1;
                    }
                    out.extend_from_slice(b"?>");
                }
                Node::PiData { .. } => {
                    return Err(BinXmlError::new("PI data without target", 0));
                }
                ref n => self.node_text(out, n, Flavor::XmlText)?,
            }
            if out.len() > cx.limit {
                return Err(too_large());
            }
            i += 1;
        }
        Ok(())
    }
}

#[inline]
fn utf16(out: &mut Vec<u8>, chunk: &[u8], off: u32, units: u32, mode: Mode) {
    let o = off as usize;
    escape::write_utf16_in(out, chunk, o, o + 2 * units as usize, mode);
}

/// Text-mode / attribute-mode rendering of a non-element node (9.3). PIs render nothing here.
impl XmlRenderer<'_, '_> {
    fn node_text(&self, out: &mut Vec<u8>, n: &Node, flavor: Flavor) -> BinXmlResult<()> {
        let cx = self.cx;
        match *n {
            Node::Text16 { .. } | Node::Ansi { .. } | Node::Value(_) => {
                crate::program::emit_node(out, cx.chunk, cx.codec, cx.rec, n, flavor)
            }
            Node::CharRef(c) => {
                out.extend_from_slice(b"&#");
                values_format::write_int(out, c);
                out.push(b';');
            }
            Node::EntityRef(name) => {
                out.push(b'&');
                out.extend_from_slice(cx.names.get(name).as_bytes());
                out.push(b';');
            }
            Node::CData { off, units } => {
                if flavor == Flavor::XmlAttr {
                    utf16(out, cx.chunk, off, units, Mode::XmlAttr);
                } else {
                    out.extend_from_slice(b"<![CDATA[");
                    let start = out.len();
                    utf16(out, cx.chunk, off, units, Mode::Raw);
                    if out[start..].windows(3).any(|w| w == b"]]>") {
                        let text = out.split_off(start);
                        let mut i = 0;
                        while i < text.len() {
                            if text[i..].starts_with(b"]]>") {
                                out.extend_from_slice(b"]]]]><![CDATA[>");
                                i += 3;
                            } else {
                                out.push(text[i]);
                                i += 1;
                            }
                        }
                    }
                    out.extend_from_slice(b"]]>");
                }
            }
            Node::Element(_)
            | Node::PiTarget(_)
            | Node::PiData { .. }
            | Node::Placeholder { .. } => {}
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tree::{Span, NAME_EVENT};

    /// A record of `depth` nested `Event` elements; returns the tree and its root.
    fn chain(depth: usize) -> (Tree, u32) {
        let mut tree = Tree::default();
        let mut inner: Option<u32> = None;
        for _ in 0..depth {
            let children = match inner {
                Some(id) => tree.push_nodes(&[Node::Element(id)]),
                None => Span::default(),
            };
            let id = tree.elems.len() as u32;
            tree.elems.push(Element {
                name: NAME_EVENT,
                dep: 0xffff,
                self_closing: false,
                attrs: Span::default(),
                children,
            });
            inner = Some(id);
        }
        (tree, inner.expect("depth > 0"))
    }

    /// Both renderers count the root as depth 1 (as the Zig engine's): `EVTX_LIMIT_RENDER_DEPTH`
    /// (512) nested elements render, one more fails the record, in XML and in JSON alike.
    #[test]
    fn both_renderers_stop_at_the_same_depth() {
        let names = Names::default();
        for (depth, renders) in [(512, true), (513, false)] {
            let (tree, root) = chain(depth);
            let input = crate::testing::render_input(&[], &names, &tree);
            let mut out = Vec::new();
            let xml = render_record(&mut out, &input, root, true);
            assert_eq!(xml.is_ok(), renders, "xml at depth {depth}");
            out.clear();
            let json = crate::render_json::render_record(&mut out, &input, root, false);
            assert_eq!(json.is_ok(), renders, "json at depth {depth}");
            // One failure, `nested too deeply`, whatever the format (and in the Zig engine).
            let words = |r: BinXmlResult<()>| r.err().map(|e| e.into_failure(0).to_string());
            assert_eq!(words(json), words(xml), "depth {depth}");
        }
    }
}
