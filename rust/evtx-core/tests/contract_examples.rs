//! The contract's worked examples (sections 6, 9, 10 and 14.1), built as BinXML by hand and
//! rendered through the public API. Expected strings are copied from the contract.

use evtx_core::{ChunkResult, EvtxFile, Format, Options, Outcome, Renderer};

/// Chunk offset where name entries are written (outside the record area).
const NAMES_AT: usize = 0x8000;
/// Chunk offset of the first template definition.
const DEFS_AT: usize = 0xa000;

/// Builds one chunk: names and template definitions at fixed places, records from 512 on.
struct ChunkBuilder {
    chunk: Vec<u8>,
    names: Vec<(String, u32)>,
    next_name: usize,
    next_def: usize,
    next_record: usize,
    record_id: u64,
}

impl ChunkBuilder {
    fn new() -> Self {
        let mut chunk = vec![0u8; 65536];
        chunk[..8].copy_from_slice(b"ElfChnk\0");
        ChunkBuilder {
            chunk,
            names: Vec::new(),
            next_name: NAMES_AT,
            next_def: DEFS_AT,
            next_record: 512,
            record_id: 0,
        }
    }

    /// Chunk offset of the name entry for `name` (written on first use).
    fn name(&mut self, name: &str) -> u32 {
        if let Some((_, off)) = self.names.iter().find(|(n, _)| n == name) {
            return *off;
        }
        let off = self.next_name;
        let units: Vec<u16> = name.encode_utf16().collect();
        let c = &mut self.chunk;
        c[off + 6..off + 8].copy_from_slice(&(units.len() as u16).to_le_bytes());
        for (i, u) in units.iter().enumerate() {
            c[off + 8 + 2 * i..off + 10 + 2 * i].copy_from_slice(&u.to_le_bytes());
        }
        self.next_name += 10 + 2 * units.len();
        self.names.push((name.to_string(), off as u32));
        off as u32
    }

    /// Writes a template definition with body `body`; returns its offset.
    fn def(&mut self, body: &[u8]) -> u32 {
        let off = self.next_def;
        let c = &mut self.chunk;
        c[off + 20..off + 24].copy_from_slice(&(body.len() as u32).to_le_bytes());
        c[off + 24..off + 24 + body.len()].copy_from_slice(body);
        self.next_def += 24 + body.len() + 8;
        off as u32
    }

    /// Appends a record whose BinXML is `binxml`.
    fn record(&mut self, binxml: &[u8]) {
        self.record_id += 1;
        let pos = self.next_record;
        let size = 24 + binxml.len() + 4;
        let c = &mut self.chunk;
        c[pos..pos + 4].copy_from_slice(&[0x2a, 0x2a, 0, 0]);
        c[pos + 4..pos + 8].copy_from_slice(&(size as u32).to_le_bytes());
        c[pos + 8..pos + 16].copy_from_slice(&self.record_id.to_le_bytes());
        c[pos + 24..pos + 24 + binxml.len()].copy_from_slice(binxml);
        c[pos + size - 4..pos + size].copy_from_slice(&(size as u32).to_le_bytes());
        self.next_record += size;
    }

    /// The whole file: header block and this chunk.
    fn file(mut self) -> Vec<u8> {
        let c = &mut self.chunk;
        c[24..32].copy_from_slice(&1u64.to_le_bytes());
        c[32..40].copy_from_slice(&self.record_id.to_le_bytes());
        c[48..52].copy_from_slice(&(self.next_record as u32).to_le_bytes());
        let mut file = vec![0u8; 4096];
        file[..8].copy_from_slice(b"ElfFile\0");
        file[40..42].copy_from_slice(&4096u16.to_le_bytes());
        file[120..124].copy_from_slice(&4u32.to_le_bytes()); // NO_CRC32: no warning
        file.extend_from_slice(&self.chunk);
        file
    }
}

/// BinXML token writer; `dep` ids are written only in template definitions.
struct Tokens {
    out: Vec<u8>,
    in_def: bool,
}

impl Tokens {
    fn def() -> Self {
        Tokens {
            out: vec![0x0f, 1, 1, 0],
            in_def: true,
        }
    }

    fn record() -> Self {
        Tokens {
            out: vec![0x0f, 1, 1, 0],
            in_def: false,
        }
    }

    fn open(&mut self, name: u32, dep: u16, has_attrs: bool) -> &mut Self {
        self.out.push(if has_attrs { 0x41 } else { 0x01 });
        if self.in_def {
            self.out.extend_from_slice(&dep.to_le_bytes());
        }
        self.out.extend_from_slice(&0u32.to_le_bytes());
        self.out.extend_from_slice(&name.to_le_bytes());
        if has_attrs {
            self.out.extend_from_slice(&0u32.to_le_bytes());
        }
        self
    }

    fn attr(&mut self, name: u32) -> &mut Self {
        self.out.push(0x06);
        self.out.extend_from_slice(&name.to_le_bytes());
        self
    }

    fn close_start(&mut self) -> &mut Self {
        self.out.push(0x02);
        self
    }

    fn close_empty(&mut self) -> &mut Self {
        self.out.push(0x03);
        self
    }

    fn end(&mut self) -> &mut Self {
        self.out.push(0x04);
        self
    }

    fn text(&mut self, s: &str) -> &mut Self {
        let units: Vec<u16> = s.encode_utf16().collect();
        self.out.extend_from_slice(&[0x05, 0x01]);
        self.out
            .extend_from_slice(&(units.len() as u16).to_le_bytes());
        for u in units {
            self.out.extend_from_slice(&u.to_le_bytes());
        }
        self
    }

    fn sub(&mut self, index: u16, optional: bool) -> &mut Self {
        self.out.push(if optional { 0x0e } else { 0x0d });
        self.out.extend_from_slice(&index.to_le_bytes());
        self.out.push(0x01);
        self
    }

    fn cdata(&mut self, s: &str) -> &mut Self {
        let units: Vec<u16> = s.encode_utf16().collect();
        self.out.push(0x07);
        self.out
            .extend_from_slice(&(units.len() as u16).to_le_bytes());
        for u in units {
            self.out.extend_from_slice(&u.to_le_bytes());
        }
        self
    }

    fn char_ref(&mut self, c: u16) -> &mut Self {
        self.out.push(0x08);
        self.out.extend_from_slice(&c.to_le_bytes());
        self
    }

    fn entity(&mut self, name: u32) -> &mut Self {
        self.out.push(0x09);
        self.out.extend_from_slice(&name.to_le_bytes());
        self
    }

    fn eof(&mut self) -> Vec<u8> {
        self.out.push(0x00);
        std::mem::take(&mut self.out)
    }
}

/// A template instance of the definition at `def` with `values` (type, bytes), declared
/// sizes being the byte lengths unless overridden.
fn instance(def: u32, values: &[(u8, Vec<u8>, Option<u16>)]) -> Vec<u8> {
    let mut out = vec![0x0f, 1, 1, 0, 0x0c, 0x01];
    out.extend_from_slice(&0u32.to_le_bytes());
    out.extend_from_slice(&def.to_le_bytes());
    out.extend_from_slice(&(values.len() as u32).to_le_bytes());
    for (t, bytes, size) in values {
        let size = size.unwrap_or(bytes.len() as u16);
        out.extend_from_slice(&size.to_le_bytes());
        out.push(*t);
        out.push(0);
    }
    for (_, bytes, _) in values {
        out.extend_from_slice(bytes);
    }
    out.push(0x00);
    out
}

fn utf16(s: &str) -> Vec<u8> {
    s.encode_utf16().flat_map(|u| u.to_le_bytes()).collect()
}

/// Renders every record of `file`; returns the texts (framing included) or error kinds.
fn render(file: &[u8], opts: &Options) -> Vec<Result<String, String>> {
    let f = EvtxFile::open(file).expect("valid file");
    let mut r = Renderer::new(opts);
    let mut out = ChunkResult::default();
    r.render_chunk_into(&f, 0, &mut out);
    out.records
        .iter()
        .map(|e| match &e.outcome {
            Outcome::Rendered(range) => {
                Ok(String::from_utf8(out.bytes[range.clone()].to_vec()).unwrap())
            }
            Outcome::Failed(f) => Err(f.kind.as_str().to_string()),
        })
        .collect()
}

fn jsonl() -> Options {
    Options {
        format: Format::Jsonl,
        threads: 1,
        ..Options::default()
    }
}

fn xml() -> Options {
    Options {
        format: Format::Xml,
        show_record_number: false,
        threads: 1,
        ..Options::default()
    }
}

#[test]
fn dependency_ids_omit_elements() {
    // Contract 14.1: values [Null, UInt8 1, BinXml(empty)].
    let mut c = ChunkBuilder::new();
    let n: Vec<u32> = ["Event", "A", "B", "C", "Holder", "D", "E"]
        .iter()
        .map(|s| c.name(s))
        .collect();
    let mut t = Tokens::def();
    t.open(n[0], 0, false).close_start();
    for (name, dep, text) in [(n[1], 0, "a"), (n[2], 1, "b"), (n[3], 2, "c")] {
        t.open(name, dep, false).close_start().text(text).end();
    }
    t.open(n[4], 0xffff, false).close_start();
    t.open(n[5], 0, false).close_start().text("d").end();
    t.end();
    t.open(n[6], 7, false).close_start().text("e").end();
    t.end();
    let def = c.def(&t.eof());
    c.record(&instance(
        def,
        &[
            (0x00, vec![], None),
            (0x04, vec![1], None),
            (0x21, vec![], None),
        ],
    ));
    let file = c.file();
    assert_eq!(
        render(&file, &jsonl()),
        vec![Ok(
            "{\"Event\":{\"B\":\"b\",\"Holder\":null,\"E\":\"e\"}}\n".to_string()
        )]
    );
    assert_eq!(
        render(&file, &xml()),
        vec![Ok(
            "<?xml version=\"1.0\" encoding=\"utf-8\"?>\n<Event>\n  <B>b</B>\n  \
            <Holder></Holder>\n  <E>e</E>\n</Event>\n\n"
                .to_string()
        )]
    );
}

#[test]
fn declared_sizes_skip_forward_but_never_back() {
    // Contract 14.1: <E><A>%0</A><B>%1</B></E>, value 0 UInt32 declared 8 or 2 bytes.
    let mut c = ChunkBuilder::new();
    let (e, a, b) = (c.name("E"), c.name("A"), c.name("B"));
    let mut t = Tokens::def();
    t.open(e, 0xffff, false).close_start();
    t.open(a, 0xffff, false).close_start().sub(0, false).end();
    t.open(b, 0xffff, false).close_start().sub(1, false).end();
    t.end();
    let def = c.def(&t.eof());
    let mut seven = 7u32.to_le_bytes().to_vec();
    seven.extend_from_slice(&0x63u32.to_le_bytes());
    c.record(&instance(
        def,
        &[(0x08, seven, Some(8)), (0x01, utf16("ok"), None)],
    ));
    // Declared 2: 4 bytes are still read, value 1 starts 2 bytes later than declared and
    // runs 2 bytes past its declared end, into the EOF token and the byte after it.
    let mut binxml = instance(
        def,
        &[(0x08, vec![7, 0], Some(2)), (0x01, utf16("okay"), Some(8))],
    );
    binxml.push(0x3d);
    c.record(&binxml);
    let out = render(&c.file(), &jsonl());
    assert_eq!(out[0], Ok("{\"E\":{\"A\":7,\"B\":\"ok\"}}\n".to_string()));
    assert_eq!(
        out[1],
        Ok("{\"E\":{\"A\":7274503,\"B\":\"kay\u{3d00}\"}}\n".to_string())
    );
}

#[test]
fn optional_and_normal_substitutions_of_empty_values() {
    // Contract 14.1 (all with empty inputs).
    let mut c = ChunkBuilder::new();
    let names: Vec<u32> = [
        "Root",
        "OptEmpty",
        "NonOptNull",
        "AttrEmpty",
        "e",
        "n",
        "AttrOnly",
        "a",
    ]
    .iter()
    .map(|s| c.name(s))
    .collect();
    let mut t = Tokens::def();
    t.open(names[0], 0xffff, false).close_start();
    t.open(names[1], 0xffff, false)
        .close_start()
        .sub(2, true)
        .end();
    t.open(names[2], 0xffff, false)
        .close_start()
        .sub(1, false)
        .end();
    t.open(names[3], 0xffff, true)
        .attr(names[4])
        .text("")
        .attr(names[5])
        .sub(1, false)
        .close_empty();
    t.open(names[6], 0xffff, true)
        .attr(names[7])
        .text("A")
        .close_start()
        .end();
    t.end();
    let def = c.def(&t.eof());
    c.record(&instance(
        def,
        &[
            (0x00, vec![], None),
            (0x00, vec![], None),
            (0x01, vec![], None),
        ],
    ));
    let file = c.file();
    assert_eq!(
        render(&file, &jsonl()),
        vec![Ok(
            "{\"Root\":{\"OptEmpty\":null,\"NonOptNull\":null,\"AttrEmpty\":null,\"AttrOnly\":\
            {\"#attributes\":{\"a\":\"A\"}}}}\n"
                .to_string()
        )]
    );
    assert_eq!(
        render(&file, &xml()),
        vec![Ok(
            "<?xml version=\"1.0\" encoding=\"utf-8\"?>\n<Root>\n  <OptEmpty></OptEmpty>\n  \
            <NonOptNull></NonOptNull>\n  <AttrEmpty/>\n  <AttrOnly \
            a=\"A\"></AttrOnly>\n</Root>\n\n"
                .to_string()
        )]
    );
}

#[test]
fn arrays_expand_in_three_positions() {
    // Contract 14.1: Int32 array [-1, 2] as Data text, element text and attribute.
    let mut c = ChunkBuilder::new();
    let names: Vec<u32> = ["Event", "EventData", "Data", "Name", "XI32A", "AI32A", "v"]
        .iter()
        .map(|s| c.name(s))
        .collect();
    let mut t = Tokens::def();
    t.open(names[0], 0xffff, false).close_start();
    t.open(names[1], 0xffff, false).close_start();
    t.open(names[2], 0xffff, true)
        .attr(names[3])
        .text("I32A")
        .close_start()
        .sub(0, false)
        .end();
    t.end();
    t.open(names[4], 0xffff, false)
        .close_start()
        .sub(0, false)
        .end();
    t.open(names[5], 0xffff, true)
        .attr(names[6])
        .sub(0, false)
        .close_empty();
    t.end();
    let def = c.def(&t.eof());
    let arr: Vec<u8> = [-1i32, 2].iter().flat_map(|x| x.to_le_bytes()).collect();
    c.record(&instance(def, &[(0x87, arr, None)]));
    let file = c.file();
    assert_eq!(
        render(&file, &jsonl()),
        vec![Ok(
            "{\"Event\":{\"EventData\":{\"I32A\":[-1,2]},\"XI32A\":-1,\"XI32A_1\":2,\"AI32A\":\
            {\"#attributes\":{\"v\":-1}},\"AI32A_1\":{\"#attributes\":{\"v\":2}}}}\n"
                .to_string()
        )]
    );
    let x = render(&file, &xml())[0].clone().unwrap();
    assert!(x.contains("<Data Name=\"I32A\">-1</Data>\n    <Data Name=\"I32A\">2</Data>"));
    assert!(x.contains("<XI32A>-1</XI32A>\n  <XI32A>2</XI32A>"));
    assert!(x.contains("<AI32A v=\"-1\"/>\n  <AI32A v=\"2\"/>"));
}

#[test]
fn text_tokens_cdata_and_references() {
    // Contract 10.4: <Ent>a&amp;&lt;&foo;b</Ent>, <CharRef>&#65;&#9786;</CharRef>, CDATA.
    let mut c = ChunkBuilder::new();
    let names: Vec<u32> = ["R", "Ent", "amp", "lt", "foo", "CharRef", "C"]
        .iter()
        .map(|s| c.name(s))
        .collect();
    let mut t = Tokens::record();
    t.open(names[0], 0, false).close_start();
    t.open(names[1], 0, false)
        .close_start()
        .text("a")
        .entity(names[2])
        .entity(names[3])
        .entity(names[4])
        .text("b")
        .end();
    t.open(names[5], 0, false)
        .close_start()
        .char_ref(65)
        .char_ref(9786)
        .end();
    t.open(names[6], 0, false)
        .close_start()
        .cdata("x < y ]]> & z")
        .end();
    t.end();
    c.record(&t.eof());
    let file = c.file();
    assert_eq!(
        render(&file, &jsonl()),
        vec![Ok(
            "{\"R\":{\"Ent\":\"a&<&foo;b\",\"CharRef\":\"A\u{263a}\",\"C\":\"x < y ]]> & z\"}}\n"
                .to_string()
        )]
    );
    let x = render(&file, &xml())[0].clone().unwrap();
    assert!(x.contains("<Ent>a&amp;&lt;&foo;b</Ent>"));
    assert!(x.contains("<CharRef>&#65;&#9786;</CharRef>"));
    assert!(x.contains("<C><![CDATA[x < y ]]]]><![CDATA[> & z]]></C>"));
}

#[test]
fn parser_state_errors_fail_the_record() {
    let mut c = ChunkBuilder::new();
    let r = c.name("R");
    // End element with nothing open.
    c.record(&[0x0f, 1, 1, 0, 0x04, 0x00]);
    // Value outside of any element.
    let mut t = Tokens::record();
    t.text("x");
    c.record(&t.eof());
    // Unclosed element at the end of the stream.
    let mut t = Tokens::record();
    t.open(r, 0, false).close_start();
    c.record(&t.eof());
    // Invalid token.
    c.record(&[0x0f, 1, 1, 0, 0x4b, 0x00]);
    // An empty stream renders the synthetic Event root.
    c.record(&[0x0f, 1, 1, 0, 0x00]);
    let out = render(&c.file(), &jsonl());
    let bad = Err("bad binxml".to_string());
    assert_eq!(out[..4], [bad.clone(), bad.clone(), bad.clone(), bad]);
    assert_eq!(out[4], Ok("{\"Event\":null}\n".to_string()));
}

#[test]
fn replayed_records_equal_fresh_renders() {
    // The same template instantiated with different value shapes and texts: records after the
    // first of each shape are replayed from a program and must equal a slow render.
    let mut c = ChunkBuilder::new();
    let names: Vec<u32> = ["Event", "EventData", "Data", "Name", "S", "N"]
        .iter()
        .map(|s| c.name(s))
        .collect();
    let mut t = Tokens::def();
    t.open(names[0], 0xffff, false).close_start();
    t.open(names[1], 0xffff, false).close_start();
    t.open(names[2], 0xffff, true)
        .attr(names[3])
        .text("S")
        .close_start()
        .sub(0, true)
        .end();
    t.open(names[2], 1, true)
        .attr(names[3])
        .text("N")
        .close_start()
        .sub(1, false)
        .end();
    t.end();
    t.end();
    let def = c.def(&t.eof());
    let texts = ["one", "", "a\"b<c>\\", "tail"];
    for (i, s) in texts.iter().enumerate() {
        let n = if i == 2 {
            (0x00, vec![], None)
        } else {
            (0x08, (i as u32).to_le_bytes().to_vec(), None)
        };
        c.record(&instance(def, &[(0x01, utf16(s), None), n]));
    }
    let body = c.chunk_def_body(def);
    let file = c.file();
    for opts in [jsonl(), xml()] {
        let all = render(&file, &opts);
        // Render each record alone in a fresh renderer (always the slow path for the first).
        for (i, s) in texts.iter().enumerate() {
            let mut single = ChunkBuilder::new();
            for n in ["Event", "EventData", "Data", "Name", "S", "N"] {
                single.name(n);
            }
            let d = single.def(&body);
            let n = if i == 2 {
                (0x00, vec![], None)
            } else {
                (0x08, (i as u32).to_le_bytes().to_vec(), None)
            };
            single.record(&instance(d, &[(0x01, utf16(s), None), n]));
            let alone = render(&single.file(), &opts);
            assert_eq!(all[i], alone[0], "record {i}");
        }
    }
}

impl ChunkBuilder {
    /// The body of the definition at `def` (to copy it into another chunk).
    fn chunk_def_body(&self, def: u32) -> Vec<u8> {
        let o = def as usize;
        let size = u32::from_le_bytes(self.chunk[o + 20..o + 24].try_into().unwrap()) as usize;
        self.chunk[o + 24..o + 24 + size].to_vec()
    }
}
