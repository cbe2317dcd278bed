//! JSON rendering of a record tree (contract section 10). Output is always compact.
//!
//! The Zig engine's `zig/src/render_json.zig`, function for function: the value of an element
//! (`JsonRenderer::write_value`, 10.2, or `JsonRenderer::write_value_ignoring_attributes`,
//! 10.6), its object (`write_object`, `write_members`, `write_member`, 10.3), the content of a
//! node list (`write_content`, `write_node_text`, 10.4), `EventData`/`UserData` containers
//! (`write_container_members`, `container_keys`, `write_data_run`, `write_positional`,
//! `write_data_value`, 10.5). Each returns the failure the XML renderer returns: elements
//! nested past `RENDER_DEPTH_MAX` (the root is depth 1, each element one more, `Data` children
//! of a container too) and output past `RenderInput::limit`, checked by `check_limits` before
//! each element's value and by `over` before each member, attribute and text node.

use crate::error::BinXmlResult;
use crate::escape::{self, Mode};
use crate::limits::{RECORD_OUTPUT_BYTES_MAX, RENDER_DEPTH_MAX};
use crate::program::emit_node;
use crate::render_xml::{too_deep, too_large, RenderInput};
use crate::tree::{Element, Node};
use crate::values_decode::{self, Value};
use crate::values_format::{self, Flavor};
use std::collections::HashMap;

/// Renders the record whose root element is `root` (10.1), without trailing newline.
pub fn render_record(
    out: &mut Vec<u8>,
    cx: &RenderInput<'_>,
    root: u32,
    separate: bool,
) -> BinXmlResult<()> {
    let r = JsonRenderer { cx, separate };
    let e = &cx.tree.elems[root as usize];
    let name = cx.names.get(e.name).as_bytes();
    out.push(b'{');
    if separate {
        if r.has_attr_text(e) {
            write_key(out, name, 0, b"_attributes");
            r.write_attributes(out, e)?;
            out.push(b',');
        }
        write_key(out, name, 0, b"");
        r.write_value_ignoring_attributes(out, e, false, 1)?;
    } else {
        write_key(out, name, 0, b"");
        r.write_value(out, e, false, 1)?;
    }
    out.push(b'}');
    Ok(())
}

/// Occurrence counter for member keys of one object (10.3 key numbering): inline for the usual
/// handful of keys, hashed beyond that so huge sibling lists stay linear.
struct Counter<'k> {
    small: [(&'k [u8], u32); COUNTER_INLINE],
    len: usize,
    big: Option<HashMap<&'k [u8], u32>>,
}

/// Keys counted without allocating; more go to a hash map.
const COUNTER_INLINE: usize = 16;

impl<'k> Counter<'k> {
    fn new() -> Self {
        Counter {
            small: [(&[], 0); COUNTER_INLINE],
            len: 0,
            big: None,
        }
    }

    /// How many times `key` was seen before (0 for the first).
    fn next(&mut self, key: &'k [u8]) -> u32 {
        if let Some(big) = &mut self.big {
            let c = big.entry(key).or_insert(0);
            *c += 1;
            return *c - 1;
        }
        for (k, c) in self.small[..self.len].iter_mut() {
            if *k == key {
                *c += 1;
                return *c - 1;
            }
        }
        if self.len < COUNTER_INLINE {
            self.small[self.len] = (key, 1);
            self.len += 1;
        } else {
            let mut big: HashMap<&'k [u8], u32> = self.small.iter().copied().collect();
            big.insert(key, 1);
            self.big = Some(big);
        }
        0
    }
}

/// `"key_N<suffix>":`, the `_N` left out for the first of its name (10.3).
fn write_key(out: &mut Vec<u8>, key: &[u8], n: u32, suffix: &[u8]) {
    out.push(b'"');
    out.extend_from_slice(key);
    if n > 0 {
        out.push(b'_');
        values_format::write_int(out, n);
    }
    out.extend_from_slice(suffix);
    out.extend_from_slice(b"\":");
}

/// The JSON renderer of one record (the Zig engine's `JsonRenderer`).
struct JsonRenderer<'c, 'a> {
    cx: &'c RenderInput<'a>,
    separate: bool,
}

/// The key text of a container's `Data` children (10.5): for each child, its key's range in
/// `text`, or `None` for a child without a usable `Name` (or not `Data`).
struct ContainerKeys {
    text: Vec<u8>,
    of: Vec<Option<(usize, usize)>>,
}

impl ContainerKeys {
    fn get(&self, i: usize) -> Option<&[u8]> {
        self.of[i].map(|(s, t)| &self.text[s..t])
    }
}

impl JsonRenderer<'_, '_> {
    /// Whether the output passed the record's limit.
    #[inline]
    fn over(&self, out: &[u8]) -> bool {
        out.len() > self.cx.limit
    }

    /// Fails an element at `depth` (the root is 1) nested too deeply, or the output once it
    /// passed its limit: depth first, as the XML renderer and the Zig engine check them.
    #[inline]
    fn check_limits(&self, out: &[u8], depth: usize) -> BinXmlResult<()> {
        if depth > RENDER_DEPTH_MAX {
            return Err(too_deep());
        }
        if self.over(out) {
            return Err(too_large());
        }
        Ok(())
    }

    #[inline]
    fn children(&self, e: &Element) -> &[Node] {
        self.cx.tree.children(e)
    }

    fn has_attr_text(&self, e: &Element) -> bool {
        let tree = self.cx.tree;
        tree.attrs(e)
            .iter()
            .any(|a| tree.items(a).iter().any(Node::has_content))
    }

    fn has_elements(&self, e: &Element) -> bool {
        self.children(e)
            .iter()
            .any(|n| matches!(n, Node::Element(_)))
    }

    fn has_text(&self, e: &Element) -> bool {
        self.children(e).iter().any(Node::has_content)
    }

    /// The value of element `e` at `depth` (10.2). `container` marks an `EventData`/`UserData`
    /// member (10.5).
    fn write_value(
        &self,
        out: &mut Vec<u8>,
        e: &Element,
        container: bool,
        depth: usize,
    ) -> BinXmlResult<()> {
        self.check_limits(out, depth)?;
        let children = self.children(e);
        if e.attrs.len == 0 && self.write_leaf(out, children) {
            return Ok(());
        }
        let has_elements = self.has_elements(e);
        let has_text = self.has_text(e);
        let attr_text = self.has_attr_text(e);
        if !has_elements && !has_text && !attr_text {
            out.extend_from_slice(b"null");
        } else if !has_elements && !attr_text {
            self.write_content(out, children, false)?;
        } else {
            let with_attrs = !self.separate && attr_text;
            self.write_object(out, e, with_attrs, has_text, container, depth)?;
        }
        Ok(())
    }

    /// The value of element `e` at `depth` ignoring its attributes (10.6).
    fn write_value_ignoring_attributes(
        &self,
        out: &mut Vec<u8>,
        e: &Element,
        container: bool,
        depth: usize,
    ) -> BinXmlResult<()> {
        self.check_limits(out, depth)?;
        let children = self.children(e);
        if self.write_leaf(out, children) {
            return Ok(());
        }
        let has_elements = self.has_elements(e);
        let has_text = self.has_text(e);
        if !has_elements && !has_text {
            out.extend_from_slice(b"null");
        } else if !has_elements {
            self.write_content(out, children, false)?;
        } else {
            self.write_object(out, e, false, has_text, container, depth)?;
        }
        Ok(())
    }

    /// The leaf shortcut (10.2 step 1): an element whose one child is a text or a value is
    /// that text (`null` when empty) or [`JsonRenderer::write_scalar`]. False when it does not
    /// apply (nothing written).
    fn write_leaf(&self, out: &mut Vec<u8>, children: &[Node]) -> bool {
        match children {
            [n @ (Node::Text16 { .. } | Node::Ansi { .. })] => {
                if n.has_content() {
                    out.push(b'"');
                    self.write_node_text(out, n, true);
                    out.push(b'"');
                } else {
                    out.extend_from_slice(b"null");
                }
                true
            }
            [Node::Value(v)] => {
                self.write_scalar(out, v, b"null");
                true
            }
            _ => false,
        }
    }

    /// A single typed value: `empty` when empty, bare for numeric types, else quoted text.
    fn write_scalar(&self, out: &mut Vec<u8>, v: &Value, empty: &[u8]) {
        if v.is_empty() {
            out.extend_from_slice(empty);
        } else if values_decode::is_bare_json(v.ty) {
            self.emit(out, v);
        } else {
            out.push(b'"');
            self.emit(out, v);
            out.push(b'"');
        }
    }

    /// A typed value's JSON text (the program recorder sees it).
    #[inline]
    fn emit(&self, out: &mut Vec<u8>, v: &Value) {
        let cx = self.cx;
        emit_node(
            out,
            cx.chunk,
            cx.codec,
            cx.rec,
            &Node::Value(*v),
            Flavor::Json,
        );
    }

    /// The object of element `e` at `depth` (10.3): `#attributes` when `with_attrs`, `#text`
    /// when `has_text`, then the members.
    fn write_object(
        &self,
        out: &mut Vec<u8>,
        e: &Element,
        with_attrs: bool,
        has_text: bool,
        container: bool,
        depth: usize,
    ) -> BinXmlResult<()> {
        out.push(b'{');
        let mut first = true;
        if with_attrs {
            out.extend_from_slice(b"\"#attributes\":");
            self.write_attributes(out, e)?;
            first = false;
        }
        if has_text {
            if !first {
                out.push(b',');
            }
            out.extend_from_slice(b"\"#text\":");
            self.write_content(out, self.children(e), true)?;
            first = false;
        }
        self.write_members(out, e, first, container, depth)?;
        out.push(b'}');
        Ok(())
    }

    /// The members of element `e` at `depth`: its element children, or a container's (10.5).
    fn write_members(
        &self,
        out: &mut Vec<u8>,
        e: &Element,
        mut first: bool,
        container: bool,
        depth: usize,
    ) -> BinXmlResult<()> {
        if container {
            return self.write_container_members(out, e, first, depth);
        }
        let mut counter = Counter::new();
        for n in self.children(e) {
            if self.over(out) {
                return Err(too_large());
            }
            if let Node::Element(c) = *n {
                let child = &self.cx.tree.elems[c as usize];
                self.write_member(out, child, &mut counter, &mut first, depth)?;
            }
        }
        Ok(())
    }

    /// An ordinary member for `child` of an element at `depth` (10.3, with 10.6 in separate
    /// mode).
    fn write_member<'k>(
        &'k self,
        out: &mut Vec<u8>,
        child: &Element,
        counter: &mut Counter<'k>,
        first: &mut bool,
        depth: usize,
    ) -> BinXmlResult<()> {
        let name = self.cx.names.get(child.name).as_bytes();
        let n = counter.next(name);
        let container = name == b"EventData" || name == b"UserData";
        if !*first {
            out.push(b',');
        }
        *first = false;
        if !self.separate {
            write_key(out, name, n, b"");
            return self.write_value(out, child, container, depth + 1);
        }
        if self.has_attr_text(child) {
            write_key(out, name, n, b"_attributes");
            self.write_attributes(out, child)?;
            if !self.has_text(child) && !self.has_elements(child) {
                return Ok(());
            }
            out.push(b',');
        }
        write_key(out, name, n, b"");
        self.write_value_ignoring_attributes(out, child, container, depth + 1)
    }

    /// `{"attr":value,...}` over the attributes with content.
    fn write_attributes(&self, out: &mut Vec<u8>, e: &Element) -> BinXmlResult<()> {
        let tree = self.cx.tree;
        out.push(b'{');
        let mut first = true;
        for a in tree.attrs(e) {
            let items = tree.items(a);
            if !items.iter().any(Node::has_content) {
                continue;
            }
            if self.over(out) {
                return Err(too_large());
            }
            if !first {
                out.push(b',');
            }
            first = false;
            out.push(b'"');
            out.extend_from_slice(self.cx.names.get(a.name).as_bytes());
            out.extend_from_slice(b"\":");
            self.write_content(out, items, false)?;
        }
        out.push(b'}');
        Ok(())
    }

    /// The content value of `nodes` (10.4): bare when it is one numeric value (the only node,
    /// or with `skipping` the only one with content), else every node's text in one string.
    fn write_content(&self, out: &mut Vec<u8>, nodes: &[Node], skipping: bool) -> BinXmlResult<()> {
        let only = if skipping {
            let mut kept = nodes.iter().filter(|n| n.has_content());
            match (kept.next(), kept.next()) {
                (Some(Node::Value(v)), None) => Some(v),
                _ => None,
            }
        } else {
            match nodes {
                [Node::Value(v)] => Some(v),
                _ => None,
            }
        };
        if let Some(v) = only.filter(|v| values_decode::is_bare_json(v.ty)) {
            self.emit(out, v);
            return Ok(());
        }
        out.push(b'"');
        for n in nodes {
            if self.over(out) {
                return Err(too_large());
            }
            self.write_node_text(out, n, true);
        }
        out.push(b'"');
        Ok(())
    }

    /// JSON text of one node for concatenation (10.4 table); `record` lets the program
    /// recorder see its values.
    fn write_node_text(&self, out: &mut Vec<u8>, n: &Node, record: bool) {
        let chunk = self.cx.chunk;
        match *n {
            Node::CData { off, units } => {
                let o = off as usize;
                escape::write_utf16_in(out, chunk, o, o + 2 * units as usize, Mode::JsonUpper);
            }
            Node::Text16 { .. } | Node::Ansi { .. } | Node::Value(_) => {
                let rec = if record { self.cx.rec } else { None };
                emit_node(out, chunk, self.cx.codec, rec, n, Flavor::Json);
            }
            Node::CharRef(c) => match char::from_u32(u32::from(c)) {
                Some(ch) => {
                    let mut buf = [0u8; 4];
                    escape::write_str(out, ch.encode_utf8(&mut buf), Mode::JsonLower);
                }
                None => {
                    out.extend_from_slice(b"&#");
                    values_format::write_int(out, c);
                    out.push(b';');
                }
            },
            Node::EntityRef(name) => {
                let name = self.cx.names.get(name);
                match name {
                    "quot" => out.extend_from_slice(b"\\\""),
                    "apos" => out.push(b'\''),
                    "amp" => out.push(b'&'),
                    "lt" => out.push(b'<'),
                    "gt" => out.push(b'>'),
                    _ => {
                        out.push(b'&');
                        out.extend_from_slice(name.as_bytes());
                        out.push(b';');
                    }
                }
            }
            Node::Element(_)
            | Node::PiTarget(_)
            | Node::PiData { .. }
            | Node::Placeholder { .. } => {}
        }
    }

    /// Whether `x` is a `Data` element, which containers key by its `Name` (10.5).
    fn is_data(&self, x: &Element) -> bool {
        self.cx.names.get(x.name) == "Data"
    }

    /// Appends to `buf` the `Name` attribute value of `Data` element `d` as key text; false
    /// when it has no `Name` with content. A container's keys (all of `buf`) may hold
    /// `RECORD_OUTPUT_BYTES_MAX` bytes, as the Zig engine's `dataName`.
    fn data_name(&self, d: &Element, buf: &mut Vec<u8>) -> BinXmlResult<bool> {
        let tree = self.cx.tree;
        let Some(a) = tree
            .attrs(d)
            .iter()
            .find(|a| self.cx.names.get(a.name) == "Name")
        else {
            return Ok(false);
        };
        let items = tree.items(a);
        if !items.iter().any(Node::has_content) {
            return Ok(false);
        }
        for n in items {
            let from_value = match *n {
                Node::Text16 { src, .. } | Node::Ansi { src, .. } => src != 0,
                Node::Value(v) => v.src != 0,
                _ => false,
            };
            if from_value {
                if let Some(r) = self.cx.rec {
                    r.borrow_mut().uncacheable = true;
                }
            }
            self.write_node_text(buf, n, false);
            if buf.len() > RECORD_OUTPUT_BYTES_MAX {
                return Err(too_large());
            }
        }
        Ok(true)
    }

    /// Members of the `EventData`/`UserData` container `e` at `depth` (10.5).
    fn write_container_members(
        &self,
        out: &mut Vec<u8>,
        e: &Element,
        mut first: bool,
        depth: usize,
    ) -> BinXmlResult<()> {
        let tree = self.cx.tree;
        let elems: Vec<&Element> = self
            .children(e)
            .iter()
            .filter_map(|n| match *n {
                Node::Element(c) => Some(&tree.elems[c as usize]),
                _ => None,
            })
            .collect();
        let keys = self.container_keys(&elems)?;
        let named = keys.of.iter().any(Option::is_some);
        let mut counter = Counter::new();
        let mut data_counter = Counter::new();
        let mut i = 0;
        let mut positional_done = false;
        while i < elems.len() {
            if self.over(out) {
                return Err(too_large());
            }
            let x = elems[i];
            if !self.is_data(x) {
                self.write_member(out, x, &mut counter, &mut first, depth)?;
                i += 1;
            } else if named {
                i = match keys.get(i) {
                    Some(key) => {
                        let end = self.run_end(&elems, &keys, i);
                        let run = &elems[i..end];
                        self.write_data_run(out, key, run, &mut data_counter, &mut first, depth)?;
                        end
                    }
                    None => i + 1,
                };
            } else {
                if !positional_done {
                    positional_done = true;
                    self.write_positional(out, &elems, &mut counter, &mut first, depth)?;
                }
                i += 1;
            }
        }
        Ok(())
    }

    /// The key text of each `Data` child with a usable `Name`, found before any member is
    /// written because one such child turns the whole container into the named form.
    fn container_keys(&self, elems: &[&Element]) -> BinXmlResult<ContainerKeys> {
        let mut keys = ContainerKeys {
            text: Vec::new(),
            of: Vec::with_capacity(elems.len()),
        };
        for x in elems {
            if self.is_data(x) {
                let s = keys.text.len();
                if self.data_name(x, &mut keys.text)? {
                    keys.of.push(Some((s, keys.text.len())));
                } else {
                    keys.text.truncate(s);
                    keys.of.push(None);
                }
            } else {
                keys.of.push(None);
            }
        }
        Ok(keys)
    }

    /// The index after the run of adjacent `Data` children from `i` sharing its key (Zig's
    /// `runEnd` gives the run's last index).
    fn run_end(&self, elems: &[&Element], keys: &ContainerKeys, i: usize) -> usize {
        let key = keys.get(i);
        debug_assert!(key.is_some(), "a run starts at a keyed Data child");
        let mut j = i + 1;
        while j < elems.len() && self.is_data(elems[j]) && keys.get(j) == key {
            j += 1;
        }
        j
    }

    /// Named form: `run`, adjacent `Data` children sharing `key`, as one member of the
    /// container at `depth` (an array when the run has more than one).
    fn write_data_run<'k>(
        &self,
        out: &mut Vec<u8>,
        key: &'k [u8],
        run: &[&Element],
        data_counter: &mut Counter<'k>,
        first: &mut bool,
        depth: usize,
    ) -> BinXmlResult<()> {
        if !*first {
            out.push(b',');
        }
        *first = false;
        let n = data_counter.next(key);
        write_key(out, key, n, b"");
        match run {
            [d] => self.write_data_value(out, d, depth + 1),
            _ => self.write_data_array(out, run, depth + 1),
        }
    }

    /// Positional form of the container at `depth`, written once where the first `Data` child
    /// stands: `"Data":{"#text":V}` with every `Data` child's value.
    fn write_positional(
        &self,
        out: &mut Vec<u8>,
        elems: &[&Element],
        counter: &mut Counter<'_>,
        first: &mut bool,
        depth: usize,
    ) -> BinXmlResult<()> {
        if !*first {
            out.push(b',');
        }
        *first = false;
        let n = counter.next(b"Data");
        write_key(out, b"Data", n, b"");
        out.extend_from_slice(b"{\"#text\":");
        let datas: Vec<&Element> = elems.iter().copied().filter(|x| self.is_data(x)).collect();
        if datas.len() == 1 {
            self.write_data_value(out, datas[0], depth + 1)?;
        } else {
            self.write_data_array(out, &datas, depth + 1)?;
        }
        out.push(b'}');
        Ok(())
    }

    /// Several `Data` values, each at `depth`, as one JSON array.
    fn write_data_array(
        &self,
        out: &mut Vec<u8>,
        datas: &[&Element],
        depth: usize,
    ) -> BinXmlResult<()> {
        out.push(b'[');
        for (k, d) in datas.iter().enumerate() {
            if self.over(out) {
                return Err(too_large());
            }
            if k > 0 {
                out.push(b',');
            }
            self.write_data_value(out, d, depth)?;
        }
        out.push(b']');
        Ok(())
    }

    /// The Data value of `Data` element `d` at `depth` (10.5).
    fn write_data_value(&self, out: &mut Vec<u8>, d: &Element, depth: usize) -> BinXmlResult<()> {
        self.check_limits(out, depth)?;
        let children = self.children(d);
        match children {
            [n @ (Node::Text16 { .. } | Node::Ansi { .. })] => {
                out.push(b'"');
                self.write_node_text(out, n, true);
                out.push(b'"');
                return Ok(());
            }
            [Node::Value(v)] => {
                self.write_scalar(out, v, b"\"\"");
                return Ok(());
            }
            _ => {}
        }
        let has_elements = self.has_elements(d);
        let has_text = self.has_text(d);
        if !has_elements && !has_text {
            out.extend_from_slice(b"\"\"");
        } else if has_elements {
            self.write_object(out, d, false, has_text, false, depth)?;
        } else {
            self.write_content(out, children, false)?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::Counter;
    use crate::tree::{Element, Names, Node, Span, Tree};

    /// Name entries (6.3) for `texts` in a chunk of their own: the chunk and each one's id.
    fn names(texts: &[&str]) -> (Vec<u8>, Names, Vec<u32>) {
        let mut chunk = Vec::new();
        let mut offsets = Vec::new();
        for t in texts {
            offsets.push(chunk.len() as u32);
            chunk.extend_from_slice(&[0; 6]);
            chunk.extend_from_slice(&(t.len() as u16).to_le_bytes());
            chunk.extend(t.encode_utf16().flat_map(u16::to_le_bytes));
            chunk.extend_from_slice(&[0, 0]);
        }
        let mut names = Names::default();
        let ids = offsets.iter().map(|&o| names.resolve(&chunk, o).unwrap());
        let ids = ids.collect();
        (chunk, names, ids)
    }

    /// An element named `name` whose one child is `inner` (none when `None`); its id.
    fn element(tree: &mut Tree, name: u32, inner: Option<u32>) -> u32 {
        let children = match inner {
            Some(id) => tree.push_nodes(&[Node::Element(id)]),
            None => Span::default(),
        };
        tree.elems.push(Element {
            name,
            dep: 0xffff,
            self_closing: false,
            attrs: Span::default(),
            children,
        });
        tree.elems.len() as u32 - 1
    }

    /// `Event/EventData/Data` and `depth - 3` nested `A` below: a `Data` child of a container
    /// is an element level like any other, in JSON as in XML (and in the Zig engine), so the
    /// same depths render in both formats.
    #[test]
    fn data_children_of_a_container_count_as_a_level() {
        let (chunk, names, ids) = names(&["Event", "EventData", "Data", "A"]);
        for (depth, renders) in [(512, true), (513, false)] {
            let mut tree = Tree::default();
            let mut inner = None;
            for _ in 0..depth - 3 {
                inner = Some(element(&mut tree, ids[3], inner));
            }
            let data = element(&mut tree, ids[2], inner);
            let container = element(&mut tree, ids[1], Some(data));
            let root = element(&mut tree, ids[0], Some(container));
            let input = crate::testing::render_input(&chunk, &names, &tree);
            let mut out = Vec::new();
            let xml = crate::render_xml::render_record(&mut out, &input, root, true);
            assert_eq!(xml.is_ok(), renders, "xml at depth {depth}");
            for separate in [false, true] {
                out.clear();
                let json = super::render_record(&mut out, &input, root, separate);
                assert_eq!(json.is_ok(), renders, "json at depth {depth}");
            }
        }
    }

    #[test]
    fn counter_numbers_repeats_inline_and_spilled() {
        let keys: Vec<String> = (0..20).map(|i| format!("k{i}")).collect();
        let mut c = Counter::new();
        for k in &keys {
            assert_eq!(c.next(k.as_bytes()), 0);
        }
        assert_eq!(c.next(b"k3"), 1);
        assert_eq!(c.next(b"k18"), 1);
        assert_eq!(c.next(b"k3"), 2);
        let mut c = Counter::new();
        assert_eq!(c.next(b"Header"), 0);
        assert_eq!(c.next(b"Header"), 1);
        assert_eq!(c.next(b"Other"), 0);
        assert_eq!(c.next(b"Header"), 2);
    }
}
