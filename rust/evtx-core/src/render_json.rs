//! JSON rendering of a record tree (contract section 10). Output is always compact.

use crate::error::{BinXmlError, BinXmlResult};
use crate::escape::{self, Mode};
use crate::limits::{RECORD_OUTPUT_BYTES_MAX, RENDER_DEPTH_MAX};
use crate::program::emit_node;
use crate::render_xml::RenderInput;
use crate::tree::{Element, Node};
use crate::values_decode::{self, Value};
use crate::values_format::{self, Flavor};
use std::cell::Cell;
use std::collections::HashMap;

/// Renders the record whose root element is `root` (10.1), without trailing newline.
pub fn render_record(
    out: &mut Vec<u8>,
    cx: &RenderInput<'_>,
    root: u32,
    separate: bool,
) -> BinXmlResult<()> {
    let r = JsonRenderer {
        cx,
        separate,
        overflow: Cell::new(false),
        depth: Cell::new(0),
    };
    let e = &cx.tree.elems[root as usize];
    let name = cx.names.get(e.name).as_bytes();
    out.push(b'{');
    if separate {
        if r.has_attr_text(e) {
            out.push(b'"');
            out.extend_from_slice(name);
            out.extend_from_slice(b"_attributes\":");
            r.attrs_object(out, e);
            out.push(b',');
        }
        out.push(b'"');
        out.extend_from_slice(name);
        out.extend_from_slice(b"\":");
        r.value(out, e, true, false);
    } else {
        out.push(b'"');
        out.extend_from_slice(name);
        out.extend_from_slice(b"\":");
        r.value(out, e, false, false);
    }
    out.push(b'}');
    if r.overflow.get() {
        return Err(BinXmlError::new("record output too large or too deep", 0));
    }
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
    /// Set once the output passed `cx.limit` or elements nested too deeply; from then on
    /// nothing more is written and the record fails.
    overflow: Cell<bool>,
    depth: Cell<usize>,
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
    /// Whether rendering must stop (output limit reached).
    #[inline]
    fn over(&self, out: &[u8]) -> bool {
        if out.len() > self.cx.limit {
            self.overflow.set(true);
        }
        self.overflow.get()
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

    /// The value of an element: 10.2 (`ignore_attrs == false`) or the attribute-less value of
    /// 10.6. `container` marks an `EventData`/`UserData` member (10.5).
    fn value(&self, out: &mut Vec<u8>, e: &Element, ignore_attrs: bool, container: bool) {
        if self.over(out) {
            return;
        }
        // The root is depth 1, as in the XML renderer and the Zig engine.
        let depth = self.depth.get() + 1;
        if depth > RENDER_DEPTH_MAX {
            self.overflow.set(true);
            return;
        }
        self.depth.set(depth);
        self.value_inner(out, e, ignore_attrs, container);
        self.depth.set(depth - 1);
    }

    fn value_inner(&self, out: &mut Vec<u8>, e: &Element, ignore_attrs: bool, container: bool) {
        let children = self.children(e);
        let has_elements = self.has_elements(e);
        if (ignore_attrs || e.attrs.len == 0) && !has_elements && children.len() == 1 {
            match children[0] {
                Node::Text16 { .. } | Node::Ansi { .. } => {
                    if children[0].has_content() {
                        out.push(b'"');
                        self.json_text(out, &children[0], true);
                        out.push(b'"');
                    } else {
                        out.extend_from_slice(b"null");
                    }
                    return;
                }
                Node::Value(v) => {
                    self.leaf_value(out, &v, b"null");
                    return;
                }
                _ => {}
            }
        }
        let has_text = self.has_text(e);
        let attr_text = !ignore_attrs && self.has_attr_text(e);
        if !has_elements && !has_text && !attr_text {
            out.extend_from_slice(b"null");
        } else if !has_elements && !attr_text {
            self.content_value(out, children);
        } else {
            self.object(out, e, attr_text, has_text, container);
        }
    }

    /// A single typed value: `empty` when empty, bare for numeric types, else quoted text.
    fn leaf_value(&self, out: &mut Vec<u8>, v: &Value, empty: &[u8]) {
        if v.is_empty() {
            out.extend_from_slice(empty);
        } else if values_decode::is_bare_json(v.ty) {
            self.write_value(out, v);
        } else {
            out.push(b'"');
            self.write_value(out, v);
            out.push(b'"');
        }
    }

    #[inline]
    fn write_value(&self, out: &mut Vec<u8>, v: &Value) {
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

    /// The object of 10.3.
    fn object(
        &self,
        out: &mut Vec<u8>,
        e: &Element,
        with_attrs: bool,
        has_text: bool,
        container: bool,
    ) {
        out.push(b'{');
        let mut first = true;
        if with_attrs && !self.separate {
            out.extend_from_slice(b"\"#attributes\":");
            self.attrs_object(out, e);
            first = false;
        }
        if has_text {
            if !first {
                out.push(b',');
            }
            out.extend_from_slice(b"\"#text\":");
            self.content_skipping(out, self.children(e));
            first = false;
        }
        if container {
            self.container_members(out, e, first);
        } else {
            let mut counter = Counter::new();
            for n in self.children(e) {
                if self.over(out) {
                    return;
                }
                if let Node::Element(c) = *n {
                    let child = &self.cx.tree.elems[c as usize];
                    self.member(out, child, &mut counter, &mut first);
                }
            }
        }
        out.push(b'}');
    }

    /// An ordinary member for `child` (10.3, with 10.6 in separate mode).
    fn member<'k>(
        &'k self,
        out: &mut Vec<u8>,
        child: &Element,
        counter: &mut Counter<'k>,
        first: &mut bool,
    ) {
        let name = self.cx.names.get(child.name).as_bytes();
        let n = counter.next(name);
        let container = name == b"EventData" || name == b"UserData";
        if self.separate {
            let mut wrote_attrs = false;
            if self.has_attr_text(child) {
                if !*first {
                    out.push(b',');
                }
                *first = false;
                write_key(out, name, n, b"_attributes");
                self.attrs_object(out, child);
                wrote_attrs = true;
            }
            if wrote_attrs && !self.has_text(child) && !self.has_elements(child) {
                return;
            }
            if !*first {
                out.push(b',');
            }
            *first = false;
            write_key(out, name, n, b"");
            self.value(out, child, true, container);
        } else {
            if !*first {
                out.push(b',');
            }
            *first = false;
            write_key(out, name, n, b"");
            self.value(out, child, false, container);
        }
    }

    /// `{"attr":value,...}` over the attributes with content.
    fn attrs_object(&self, out: &mut Vec<u8>, e: &Element) {
        let tree = self.cx.tree;
        out.push(b'{');
        let mut first = true;
        for a in tree.attrs(e) {
            let items = tree.items(a);
            if !items.iter().any(Node::has_content) || self.over(out) {
                continue;
            }
            if !first {
                out.push(b',');
            }
            first = false;
            out.push(b'"');
            out.extend_from_slice(self.cx.names.get(a.name).as_bytes());
            out.extend_from_slice(b"\":");
            self.content_value(out, items);
        }
        out.push(b'}');
    }

    /// Content value, non-skipping mode (10.4).
    fn content_value(&self, out: &mut Vec<u8>, nodes: &[Node]) {
        if let [Node::Value(v)] = nodes {
            if values_decode::is_bare_json(v.ty) {
                self.write_value(out, v);
                return;
            }
        }
        self.quoted_text(out, nodes);
    }

    /// Content value, skipping mode (10.4).
    fn content_skipping(&self, out: &mut Vec<u8>, nodes: &[Node]) {
        let mut kept = nodes.iter().filter(|n| n.has_content());
        if let (Some(Node::Value(v)), None) = (kept.next(), kept.next()) {
            if values_decode::is_bare_json(v.ty) {
                self.write_value(out, v);
                return;
            }
        }
        self.quoted_text(out, nodes);
    }

    /// Both content modes' string form: every node's text concatenated in one JSON string.
    #[inline]
    fn quoted_text(&self, out: &mut Vec<u8>, nodes: &[Node]) {
        out.push(b'"');
        for n in nodes {
            if self.over(out) {
                return;
            }
            self.json_text(out, n, true);
        }
        out.push(b'"');
    }

    /// JSON text of one node for concatenation (10.4 table).
    fn json_text(&self, out: &mut Vec<u8>, n: &Node, record: bool) {
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

    /// The `Name` attribute value of a `Data` element as key text, if it has content.
    fn data_name(&self, d: &Element, buf: &mut Vec<u8>) -> bool {
        let tree = self.cx.tree;
        let Some(a) = tree
            .attrs(d)
            .iter()
            .find(|a| self.cx.names.get(a.name) == "Name")
        else {
            return false;
        };
        let items = tree.items(a);
        if !items.iter().any(Node::has_content) {
            return false;
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
            self.json_text(buf, n, false);
            if buf.len() > RECORD_OUTPUT_BYTES_MAX {
                self.overflow.set(true);
                return false;
            }
        }
        true
    }

    /// Members of an `EventData`/`UserData` container (10.5).
    fn container_members(&self, out: &mut Vec<u8>, e: &Element, mut first: bool) {
        let tree = self.cx.tree;
        let elems: Vec<&Element> = self
            .children(e)
            .iter()
            .filter_map(|n| match *n {
                Node::Element(c) => Some(&tree.elems[c as usize]),
                _ => None,
            })
            .collect();
        let keys = self.container_keys(&elems);
        let named = keys.of.iter().any(Option::is_some);
        let mut counter = Counter::new();
        let mut data_counter = Counter::new();
        let mut i = 0;
        let mut positional_done = false;
        while i < elems.len() {
            if self.over(out) {
                return;
            }
            let x = elems[i];
            if !self.is_data(x) {
                self.member(out, x, &mut counter, &mut first);
                i += 1;
            } else if named {
                i = match keys.of[i] {
                    Some(_) => {
                        self.write_data_run(out, &elems, &keys, i, &mut data_counter, &mut first)
                    }
                    None => i + 1,
                };
            } else {
                if !positional_done {
                    positional_done = true;
                    self.write_positional(out, &elems, &mut counter, &mut first);
                }
                i += 1;
            }
        }
    }

    /// Whether `x` is a `Data` element, which containers key by its `Name` (10.5).
    fn is_data(&self, x: &Element) -> bool {
        self.cx.names.get(x.name) == "Data"
    }

    /// The key text of each `Data` child with a usable `Name`, found before any member is
    /// written because one such child turns the whole container into the named form.
    fn container_keys(&self, elems: &[&Element]) -> ContainerKeys {
        let mut keys = ContainerKeys {
            text: Vec::new(),
            of: Vec::with_capacity(elems.len()),
        };
        for x in elems {
            if self.is_data(x) {
                let s = keys.text.len();
                if self.data_name(x, &mut keys.text) {
                    keys.of.push(Some((s, keys.text.len())));
                } else {
                    keys.text.truncate(s);
                    keys.of.push(None);
                }
            } else {
                keys.of.push(None);
            }
        }
        keys
    }

    /// Named form: the run of adjacent `Data` children from `i` sharing one key, as one
    /// member (an array when the run has more than one). Returns the index after the run.
    fn write_data_run<'k>(
        &self,
        out: &mut Vec<u8>,
        elems: &[&Element],
        keys: &'k ContainerKeys,
        i: usize,
        data_counter: &mut Counter<'k>,
        first: &mut bool,
    ) -> usize {
        let key = keys.get(i).expect("a run starts at a keyed Data child");
        let mut j = i + 1;
        while j < elems.len() && self.is_data(elems[j]) && keys.get(j) == Some(key) {
            j += 1;
        }
        if !*first {
            out.push(b',');
        }
        *first = false;
        let n = data_counter.next(key);
        write_key(out, key, n, b"");
        if j - i == 1 {
            self.data_value(out, elems[i]);
        } else {
            let _ = self.data_values(out, &elems[i..j]);
        }
        j
    }

    /// Positional form, written once where the first `Data` child stands:
    /// `"Data":{"#text":V}` with every `Data` child's value.
    fn write_positional(
        &self,
        out: &mut Vec<u8>,
        elems: &[&Element],
        counter: &mut Counter<'_>,
        first: &mut bool,
    ) {
        if !*first {
            out.push(b',');
        }
        *first = false;
        let n = counter.next(b"Data");
        write_key(out, b"Data", n, b"");
        out.extend_from_slice(b"{\"#text\":");
        let datas: Vec<&Element> = elems.iter().copied().filter(|x| self.is_data(x)).collect();
        if datas.len() == 1 {
            self.data_value(out, datas[0]);
        } else if !self.data_values(out, &datas) {
            return;
        }
        out.push(b'}');
    }

    /// Several `Data` values as one JSON array; stops (unclosed, returning false) once the
    /// output is over its limit, as the whole record then fails.
    fn data_values(&self, out: &mut Vec<u8>, datas: &[&Element]) -> bool {
        out.push(b'[');
        for (k, d) in datas.iter().enumerate() {
            if self.over(out) {
                return false;
            }
            if k > 0 {
                out.push(b',');
            }
            self.data_value(out, d);
        }
        out.push(b']');
        true
    }

    /// The Data value of a `Data` element (10.5).
    fn data_value(&self, out: &mut Vec<u8>, d: &Element) {
        let children = self.children(d);
        let has_elements = self.has_elements(d);
        if !has_elements && children.len() == 1 {
            match children[0] {
                Node::Text16 { .. } | Node::Ansi { .. } => {
                    out.push(b'"');
                    self.json_text(out, &children[0], true);
                    out.push(b'"');
                    return;
                }
                Node::Value(v) => {
                    self.leaf_value(out, &v, b"\"\"");
                    return;
                }
                _ => {}
            }
        }
        let has_text = self.has_text(d);
        if !has_elements && !has_text {
            out.extend_from_slice(b"\"\"");
        } else if has_elements {
            self.object(out, d, false, has_text, false);
        } else {
            self.content_value(out, children);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::Counter;

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
