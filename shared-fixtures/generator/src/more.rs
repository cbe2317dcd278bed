//! The remaining synthetic fixtures: tokens, text escaping, large strings, nesting, data shapes.

use crate::dsl::*;
use crate::fixtures::{typed_record, Fixture, Out};
use crate::log::Log;
use crate::writer::{ty, u16s, Name, Tok, Val};

fn fx(name: &'static str, exercises: &str, expect: &[(Out, &str)], bytes: Vec<u8>) -> Fixture {
    Fixture {
        dir: "synthetic",
        name,
        exercises: exercises.to_string(),
        expect: expect.iter().map(|(o, s)| (*o, s.to_string())).collect(),
        expect_absent: Vec::new(),
        differs: None,
        twin: None,
        bytes,
    }
}

pub fn synthetic() -> Vec<Fixture> {
    vec![
        tokens(),
        unicode(),
        strings_large(),
        nested(),
        data_shapes(),
        raw_fragments(),
        filters(),
    ]
}

fn more(t: Tok) -> Tok {
    Tok::More(Box::new(t))
}

fn tokens() -> Fixture {
    let mut log = Log::new();
    // 1: CDATA, character and entity references, PIs, mixed content (no template).
    let r1 = e("Event")
        .kid(e("CData").push(Tok::CData(u16s("x < y ]]> & z"))))
        .kid(
            e("CDataAttr")
                .attr("a", vec![Tok::CData(u16s("q\"<'"))])
                .empty(),
        )
        .kid(e("CharRef").push(Tok::CharRef(65)).push(Tok::CharRef(9786)))
        .kid(e("CharRefSurr").push(Tok::CharRef(0xD83D)))
        .kid(e("CharRefCtl").push(Tok::CharRef(1)))
        .kid(
            e("Ent")
                .text("a")
                .push(Tok::EntRef(Name::from("amp")))
                .push(Tok::EntRef(Name::from("lt")))
                .push(Tok::EntRef(Name::from("foo")))
                .text("b"),
        )
        .kid(
            e("EntAttr")
                .attr(
                    "q",
                    vec![
                        Tok::EntRef(Name::from("quot")),
                        text("x"),
                        Tok::EntRef(Name::from("apos")),
                        Tok::EntRef(Name::from("gt")),
                    ],
                )
                .empty(),
        )
        .kid(
            e("Pi")
                .push(Tok::PiTarget(Name::from("target")))
                .push(Tok::PiData(u16s("some data"))),
        )
        .kid(e("PiOnly").push(Tok::PiTarget(Name::from("only"))))
        .kid(
            e("PiLines")
                .push(Tok::PiTarget(Name::from("t")))
                .push(Tok::PiData(u16s("d")))
                .kid(e("X").empty()),
        )
        .kid(
            e("Mixed")
                .attr_s("k", "v")
                .text("hello ")
                .kid(e("Inner").text("in"))
                .text(" world"),
        )
        .kid(
            e("MixedNum")
                .push(Tok::ValueText(ty::U32, 42u32.to_le_bytes().to_vec()))
                .kid(e("Inner").text("in")),
        )
        .kid(
            e("MixedCData")
                .push(Tok::CData(u16s("c")))
                .kid(e("Inner").text("in")),
        );
    log.rec(r1.stream());
    // 2: value-text tokens of every type that has a size-less form.
    let vt = |name: &str, t: u8, payload: Vec<u8>| e(name).push(Tok::ValueText(t, payload));
    let r2 = e("VT")
        .kid(vt("I8", ty::I8, vec![0x80]))
        .kid(vt("U8", ty::U8, vec![0xFF]))
        .kid(vt("I16", ty::I16, (-2i16).to_le_bytes().to_vec()))
        .kid(vt("U16", ty::U16, 65535u16.to_le_bytes().to_vec()))
        .kid(vt("I32", ty::I32, (-3i32).to_le_bytes().to_vec()))
        .kid(vt("U32", ty::U32, u32::MAX.to_le_bytes().to_vec()))
        .kid(vt("I64", ty::I64, i64::MIN.to_le_bytes().to_vec()))
        .kid(vt("U64", ty::U64, u64::MAX.to_le_bytes().to_vec()))
        .kid(vt("R32", ty::R32, (-0.0f32).to_le_bytes().to_vec()))
        .kid(vt("R64", ty::R64, f64::NAN.to_le_bytes().to_vec()))
        .kid(vt("Bool", ty::BOOL, 1i32.to_le_bytes().to_vec()))
        .kid(vt("BoolOdd", ty::BOOL, 7i32.to_le_bytes().to_vec()))
        .kid(vt("Guid", ty::GUID, (0u8..16).collect()))
        .kid(vt(
            "Ft",
            ty::FILETIME,
            131_126_347_716_816_408u64.to_le_bytes().to_vec(),
        ))
        .kid(vt(
            "St",
            ty::SYSTIME,
            systime_bytes([2019, 3, 5, 8, 23, 23, 5, 789]),
        ))
        .kid(vt("Sid", ty::SID, sid_bytes(1, 5, &[32, 544])))
        .kid(vt("H32", ty::HEX32, 0xabcu32.to_le_bytes().to_vec()))
        .kid(vt("H64", ty::HEX64, 0u64.to_le_bytes().to_vec()))
        .kid(e("StrNul").push(Tok::Text(vec![0x61, 0x62, 0, 0x63, 0x64])))
        .kid(e("StrEmpty").push(Tok::Text(vec![])))
        .kid(e("Two").text("ab").text("cd"))
        .kid(e("Xml").push(Tok::ValueXml(e("Nested").text("n").stream())))
        .kid(e("XmlEmpty").push(Tok::ValueXml(vec![])));
    log.rec(r2.stream());
    // 3: token bytes with the 0x40 "more" bit (ignored except on open-start), a fragment header
    // inside an element, attribute flags 0x46.
    let r3 = e("Flags")
        .attr_s("a", "1")
        .attr_s("b", "2")
        .push(more(text("t")))
        .push(more(Tok::CData(u16s("c"))))
        .push(more(Tok::CharRef(66)))
        .push(more(Tok::EntRef(Name::from("amp"))))
        .push(Tok::Frag)
        .kid(e("After").text("x"));
    log.rec(r3.stream());
    // 4: two top-level elements: only the first is the record's root.
    let mut r4 = vec![Tok::Frag];
    r4.extend(e("First").text("1").toks());
    r4.extend(e("Second").text("2").toks());
    r4.push(Tok::Eof);
    log.rec(r4);
    // 5: an empty stream: root Event with nothing.
    log.rec(vec![Tok::Frag, Tok::Eof]);
    // 6: no fragment header, no EOF: the stream ends with the record's BinXML window.
    log.rec(e("Bare").text("b").toks());
    // 7: CDATA, char/entity refs and PIs inside a template definition; an attribute mixing
    // literal text and substitutions; an element closed empty with attributes.
    let def = e("Event")
        .kid(e("C").push(Tok::CData(u16s("cd"))).opt(0, ty::STRING))
        .kid(
            e("R")
                .push(Tok::CharRef(0x263A))
                .push(Tok::EntRef(Name::from("lt")))
                .sub(1, ty::U32),
        )
        .kid(
            e("P")
                .push(Tok::PiTarget(Name::from("pt")))
                .push(Tok::PiData(u16s("pd"))),
        )
        .kid(
            e("Attr")
                .attr(
                    "v",
                    vec![text("pre-"), sub(1, ty::U32), text("-"), opt(0, ty::STRING)],
                )
                .attr("w", vec![opt(2, ty::STRING)])
                .empty(),
        );
    log.rec(inst_record(
        "tok-def",
        def,
        vec![v_str("s"), v_u32(5), v_str("")],
    ));
    fx(
        "tokens",
        "Token coverage: CDATA (with `]]>` split as `]]]]><![CDATA[>` in XML; in an attribute it \
            is \
         escaped text), character references (&#65; &#9786;, a surrogate code &#55357; kept \
         literal \
         in JSON, &#1; → \\u0001), entity references (amp/lt/quot/apos/gt resolved in JSON, &foo; \
         kept), PI target + data (<?target some data?>), PI target alone, PI in an element with \
         element children (a line of spaces), mixed content (\"#text\":\"hello  world\"), a typed \
         value next to an element (\"#text\":42). Value-text tokens of every size-less type \
         (Int8..UInt64, Real32 -0.0, Real64 NaN, Bool and Bool 7, Guid, FileTime, SysTime, Sid, \
         HexInt32/64, strings truncated at NUL, two text tokens concatenated, nested BinXml value \
         text, empty ones). Token bytes with the 0x40 bit (0x45, 0x47, 0x48, 0x49, 0x46) and a \
         fragment header inside an element. Two top-level elements (only the first is rendered), \
         an empty stream (<Event></Event>, {\"Event\":null}), a stream without fragment header or \
         EOF. A template whose definition holds CDATA/refs/PIs and an attribute mixing literal \
         text \
         with substitutions (v=\"pre-5-s\").",
        &[
            (
                Out::Xml,
                "<CData><![CDATA[x < y ]]]]><![CDATA[> & z]]></CData>",
            ),
            (Out::Xml, "<CDataAttr a=\"q&quot;&lt;&apos;\"/>"),
            (Out::Jsonl, "\"CData\":\"x < y ]]> & z\""),
            (Out::Xml, "<CharRef>&#65;&#9786;</CharRef>"),
            (Out::Jsonl, "\"CharRef\":\"A☺\""),
            (Out::Jsonl, "\"CharRefSurr\":\"&#55357;\""),
            (Out::Jsonl, "\"Ent\":\"a&<&foo;b\""),
            (Out::Xml, "<Ent>a&amp;&lt;&foo;b</Ent>"),
            (Out::Xml, "<Pi><?target some data?></Pi>"),
            (Out::Xml, "<PiOnly><?only?></PiOnly>"),
            (
                Out::Jsonl,
                "\"Mixed\":{\"#attributes\":{\"k\":\"v\"},\"#text\":\"hello  \
                world\",\"Inner\":\"in\"}",
            ),
            (Out::Jsonl, "\"MixedNum\":{\"#text\":42,\"Inner\":\"in\"}"),
            (Out::Jsonl, "\"I8\":-128"),
            (Out::Jsonl, "\"R64\":\"NaN\""),
            (Out::Jsonl, "\"BoolOdd\":7"),
            (Out::Jsonl, "\"StrNul\":\"ab\""),
            (Out::Jsonl, "{\"First\":\"1\"}"),
            (Out::Jsonl, "{\"Event\":null}"),
            (Out::Xml, "<Attr v=\"pre-5-s\"/>"),
        ],
        log.into_file(),
    )
}

fn unicode() -> Fixture {
    let mut log = Log::new();
    let mut lone_hi = u16s("a");
    lone_hi.push(0xD800);
    lone_hi.extend(u16s("b"));
    let mut lone_lo = u16s("c");
    lone_lo.push(0xDC00);
    let reversed = vec![0xDC00, 0xD800, 0x41];
    let controls: Vec<u16> = (0u16..0x20)
        .filter(|&c| c != 0)
        .chain([0x7F, 0x85])
        .collect();
    let nul = vec![0x61, 0x62, 0, 0x63];
    log.rec(typed_record(
        "unicode",
        &[
            ("NonBmp", v_str("smile 😀 clef 𝄞 cjk 東京")),
            ("LoneHigh", v_units(&lone_hi)),
            ("LoneLow", v_units(&lone_lo)),
            ("Reversed", v_units(&reversed)),
            ("Controls", v_units(&controls)),
            ("Nonchars", v_units(&[0xFFFE, 0x20, 0xFFFF])),
            ("Specials", v_str("<tag a=\"1\" b='2'>&amp; \\ / </tag>")),
            ("Nul", v_units(&nul)),
            ("AnsiCtl", v_ansi(b"x\x01\x1f\x7f\x81\x9dy")),
            ("Empty", v_str("")),
        ],
        false,
    ));
    // Lone surrogates and controls in text tokens, CDATA, PI data and attributes; a non-BMP
    // element name.
    let r2 = e("Event")
        .kid(e("Text").push(Tok::Text(lone_hi.clone())))
        .kid(e("CData").push(Tok::CData(vec![0x41, 0xDC00, 0x01, 0x42])))
        .kid(
            e("Pi")
                .push(Tok::PiTarget(Name::from("p")))
                .push(Tok::PiData(vec![0x41, 0xD800, 0x09])),
        )
        .kid(
            e("Attr")
                .attr("v", vec![Tok::Text(vec![0x3C, 0xDFFF, 0x0B])])
                .empty(),
        )
        .kid(e("Ünï𝄞").text("name"))
        .kid(e("Tabs").text("a\tb\nc\rd\u{8}e\u{c}f"));
    log.rec(r2.stream());
    fx(
        "unicode",
        "Text escaping (contract 8): non-BMP characters (surrogate pairs) as raw UTF-8; lone high \
            and \
         low surrogates and a reversed pair (XML `_`, JSON U+FFFD) in substitution values, text \
         tokens, CDATA, PI data and attributes; every C0 control (XML `_` except TAB/LF/CR; JSON \
         \\b \\f \\n \\r \\t, others \\u00XX with uppercase hex for UTF-16 sources, lowercase for \
         ANSI); DEL and U+0085 raw; U+FFFE/U+FFFF (XML `_`, JSON raw); quotes/apostrophes escaped \
         in XML attributes only; backslash and slash in JSON; a String truncated at an embedded \
         NUL; ANSI bytes 0x81/0x9D → U+0081/U+009D; a non-BMP element name.",
        &[
            (Out::Jsonl, "\"NonBmp\":\"smile 😀 clef 𝄞 cjk 東京\""),
            (Out::Jsonl, "\"LoneHigh\":\"a\u{FFFD}b\""),
            (Out::Xml, "<LoneHigh>a_b</LoneHigh>"),
            (Out::Jsonl, "\\u001F"),
            (Out::Jsonl, "\\b\\t\\n"),
            (
                Out::Jsonl,
                "\"AnsiCtl\":\"x\\u0001\\u001f\u{7f}\u{81}\u{9d}y\"",
            ),
            (Out::Jsonl, "\"Nul\":\"ab\""),
            (Out::Xml, "<Nonchars>_ _</Nonchars>"),
            (Out::Xml, "<Ünï𝄞>name</Ünï𝄞>"),
        ],
        log.into_file(),
    )
}

fn strings_large() -> Fixture {
    let mut log = Log::new();
    let unit = "Grüße aus 東京 — €uro; ";
    let mut big = String::new();
    while big.encode_utf16().count() < 16_400 {
        big.push_str(unit);
    }
    let big: Vec<u16> = big.encode_utf16().take(16_400).collect();
    // 1: one String substitution of 32800 bytes (> 32 KiB, u16 size > 0x7FFF).
    let def = e("Event").kid(e("Big").sub(0, ty::STRING));
    log.rec(inst_record("big", def, vec![v_units(&big)]));
    // 2: element text made of two String substitutions and two value-text tokens (~28 KB), and
    // an attribute of 2000 characters.
    let part = |c: char, n: usize| -> Vec<u16> {
        std::iter::repeat_n(c, n)
            .collect::<String>()
            .encode_utf16()
            .collect()
    };
    let def = e("Event").kid(
        e("Joined")
            .attr("long", vec![Tok::Text(part('ä', 2000))])
            .sub(0, ty::STRING)
            .push(Tok::Text(part('€', 3000)))
            .sub(1, ty::STRING)
            .push(Tok::Text(part('z', 3000))),
    );
    log.rec(inst_record(
        "joined",
        def,
        vec![v_units(&part('東', 3500)), v_units(&part('ß', 1500))],
    ));
    fx(
        "strings-large",
        "Large strings in one chunk: record 1 holds a single String substitution of 16400 UTF-16 \
         units (32800 bytes: more than 32 KiB, and a descriptor size above 0x7FFF) mixing 1-, 2- \
         and 3-byte UTF-8 characters (~27 KB of UTF-8); record 2 builds one element's text from \
         two String substitutions and two value-text tokens (11000 characters, ~26 KB of UTF-8, \
         concatenated in order) and carries a 2000-character attribute.",
        &[
            (Out::Jsonl, "\"Big\":\"Grüße aus 東京 — €uro; Grüße"),
            (Out::Xml, "<Joined long=\"ää"),
            (Out::Jsonl, "東東€€"),
            (Out::Jsonl, "€€ßß"),
            (Out::Jsonl, "ßßzz"),
        ],
        log.into_file(),
    )
}

fn nested() -> Fixture {
    let mut log = Log::new();
    let level3 = || e("L3").sub(0, ty::STRING);
    let level2 = || e("L2").attr_sub("n", 0, ty::U32).opt(1, ty::BINXML);
    let outer = || {
        e("Event")
            .kid(e("Head").sub(0, ty::STRING))
            .opt(1, ty::BINXML)
            .kid(e("Tail").text("t"))
    };
    // 1: three levels of nested instances; all definitions inline.
    let l3 = v_inst("l3", level3(), vec![v_str("deep")]);
    let l2 = v_inst("l2", level2(), vec![v_u32(2), l3]);
    log.rec(inst_record("outer", outer(), vec![v_str("one"), l2]));
    // 2: the same templates again: every definition referenced by offset, also inside the
    // nested values.
    let l3 = v_inst("l3", level3(), vec![v_str("again")]);
    let l2 = v_inst("l2", level2(), vec![v_u32(3), l3]);
    log.rec(inst_record("outer", outer(), vec![v_str("two"), l2]));
    // 3: a BinXml value with several top-level elements (EventData + RenderingInfo style).
    let mut multi = vec![Tok::Frag];
    multi.extend(
        e("EventData")
            .kid(e("Data").attr_s("Name", "A").text("a"))
            .toks(),
    );
    multi.extend(
        e("RenderingInfo")
            .attr_s("Culture", "en-US")
            .kid(e("Message").text("msg"))
            .toks(),
    );
    multi.push(Tok::Eof);
    log.rec(inst_record(
        "outer",
        outer(),
        vec![v_str("three"), Val::Xml(multi)],
    ));
    // 4: an empty fragment (no element) and a zero-size BinXml value (NULL: dependency omits).
    let def = e("Event")
        .opt(0, ty::BINXML)
        .kid(e("DepOnEmpty").dep(1).text("hidden"))
        .kid(e("Kept").text("k"));
    log.rec(inst_record(
        "empties",
        def,
        vec![Val::Xml(vec![Tok::Frag, Tok::Eof]), Val::Xml(vec![])],
    ));
    // 5: a template instance inside a plain element tree (instantiated in place), and a nested
    // instance whose values are arrays (expanded inside the nested template).
    let arr = v_inst(
        "arr",
        e("Arr").kid(e("Item").sub(0, ty::ARRAY | ty::STRING)),
        vec![v_str_array(&["x", "y"])],
    );
    let tree = e("Event")
        .kid(e("Before").text("b"))
        .push(inst("outer", outer(), vec![v_str("inside"), arr]))
        .kid(e("After").text("a"));
    log.rec(tree.stream());
    // 6: a definition referenced by the offset of a template defined inside a nested value of
    // record 1 (l3), used at top level.
    log.rec(inst_record("l3", level3(), vec![v_str("top")]));
    // 7: a nested value holding plain elements (no template) and a nested BinXml value text.
    let plain = Val::Xml(
        e("Plain")
            .push(Tok::ValueXml(e("Inner").text("vt").stream()))
            .stream(),
    );
    log.rec(inst_record("outer", outer(), vec![v_str("seven"), plain]));
    fx(
        "nested",
        "Nested templates and BinXml values: three levels of instances nested in BinXml values \
         (definitions inline in record 1, referenced by offset in record 2, also from inside \
         nested values; record 6 uses the nested L3 definition at top level); a BinXml value \
         yielding two elements (EventData + RenderingInfo: both rendered); an empty fragment \
         (nothing) and a zero-size BinXml value (NULL: the element depending on it is omitted); a \
         template instance inside a plain element tree; array expansion inside a nested template; \
         a nested value with plain elements and a nested BinXml value text.",
        &[
            (
                Out::Jsonl,
                "\"L2\":{\"#attributes\":{\"n\":2},\"L3\":\"deep\"}",
            ),
            (Out::Jsonl, "\"L3\":\"again\""),
            (
                Out::Jsonl,
                "\"RenderingInfo\":{\"#attributes\":{\"Culture\":\"en-US\"},\"Message\":\
                \"msg\"}",
            ),
            (Out::Jsonl, "{\"Event\":{\"Kept\":\"k\"}}"),
            (Out::Jsonl, "\"Item\":\"x\",\"Item_1\":\"y\""),
            (Out::Jsonl, "{\"L3\":\"top\"}"),
            (Out::Jsonl, "\"Plain\":{\"Inner\":\"vt\"}"),
        ],
        log.into_file(),
    )
}

/// Records of one template whose BinXml value is a raw element fragment (no template
/// instance), as in real logs (`UserData` written inline): the same shape repeats with other
/// inline values, so the engines' compiled programs replay it (PERF.md H69).
fn raw_fragments() -> Fixture {
    let mut log = Log::new();
    let def = || {
        e("Event")
            .kid(e("System").kid(e("EventID").sub(0, ty::U16)))
            .kid(e("UserData").opt(1, ty::BINXML))
    };
    let u32_text = |x: u32| Tok::ValueText(ty::U32, x.to_le_bytes().to_vec());
    let op = |kind: u32, who: &str, path: &str, count: u32| {
        e("Op")
            .attr("Kind", vec![u32_text(kind)])
            .attr("Who", vec![text(who)])
            .kid(e("Path").text(path))
            .kid(e("Count").push(u32_text(count)))
            .kid(e("Flag").empty())
            .kid(e("Path").text("second"))
            .stream()
    };
    // 1-4: one shape, other values (text with escapes, a long path, numbers).
    let rows = [
        (1, "alice", "C:\\one", 10),
        (2, "bob \"b\" <b>", "C:\\two & more", 200),
        (
            3,
            "carol",
            "D:\\three\\with a much longer path than before",
            3000,
        ),
        (4, "dave", "E:\\four", 0),
    ];
    for (i, (kind, who, path, count)) in rows.into_iter().enumerate() {
        let id = v_u16(100 + i as u16);
        log.rec(inst_record(
            "rf",
            def(),
            vec![id, Val::Xml(op(kind, who, path, count))],
        ));
    }
    // 5-6: empty texts (another shape), twice.
    for k in 0..2 {
        log.rec(inst_record(
            "rf",
            def(),
            vec![v_u16(k), Val::Xml(op(k.into(), "", "", 7))],
        ));
    }
    // 7-8: two top-level elements, a template instance inside the fragment, a Data with a
    // literal Name and an attribute without value (dropped).
    for k in 0..2u32 {
        let mut toks = vec![Tok::Frag];
        toks.extend(
            e("First")
                .attr("Empty", vec![])
                .text(&format!("f{k}"))
                .toks(),
        );
        toks.extend(
            e("Second")
                .kid(e("Data").attr_s("Name", "Key").text(&format!("d{k}")))
                .push(inst(
                    "inner",
                    e("Inner").sub(0, ty::STRING),
                    vec![v_str(&format!("i{k}"))],
                ))
                .toks(),
        );
        toks.push(Tok::Eof);
        log.rec(inst_record("rf", def(), vec![v_u16(7), Val::Xml(toks)]));
    }
    fx(
        "raw-fragments",
        "BinXml values that are raw element fragments, not template instances (UserData written \
         inline): one shape repeated with other inline values (numbers, text with escapes, \
         attributes), empty texts, two top-level elements with a nested template instance, a \
         Data element with a literal Name and an attribute without value.",
        &[
            (Out::Jsonl, "\"Who\":\"bob \\\"b\\\" <b>\""),
            (Out::Jsonl, "\"Inner\":\"i1\""),
        ],
        log.into_file(),
    )
}

fn data_shapes() -> Fixture {
    let mut log = Log::new();
    let wrap = |inner: E| {
        e("Event")
            .kid(e("System").kid(e("EventID").text("1")))
            .kid(inner)
    };
    // 1: named EventData with runs, repeats, non-Data children, a Data without Name and one
    // with an empty Name, and the container's own Name attribute (contract 10.5).
    let ed = e("EventData")
        .attr_s("Name", "EvName")
        .kid(e("Data").attr_s("Name", "X").text("1"))
        .kid(e("Data").attr_s("Name", "X").text("2"))
        .kid(e("Data").attr_s("Name", "Y").text("3"))
        .kid(e("Data").attr_s("Name", "X").text("4"))
        .kid(e("Other").text("o"))
        .kid(e("Z").kid(e("Sub").text("s")))
        .kid(e("Data").text("no name"))
        .kid(e("Data").attr_s("Name", "").text("empty name"))
        .kid(e("Data").attr_s("Name", "W"));
    log.rec(wrap(ed).stream());
    // 2: positional EventData (several Data, one empty) with a Binary element.
    let ed = e("EventData")
        .kid(e("Data").text("10.00."))
        .kid(e("Data").text("17134"))
        .kid(e("Data"))
        .kid(e("Data").push(Tok::ValueText(ty::U32, 5u32.to_le_bytes().to_vec())))
        .kid(e("Binary").text("0102"));
    log.rec(wrap(ed).stream());
    // 3: positional, single Data.
    log.rec(wrap(e("EventData").kid(e("Data").text("only"))).stream());
    // 4: UserData with deep structure, repeated names and Data under a non-container.
    let mut op = e("Op").attr_s("xmlns", "urn:example:op");
    for i in 0..3 {
        op = op.kid(e("Header").kid(e("Item").text(&format!("{i}"))));
    }
    op = op
        .kid(
            e("Inner")
                .kid(e("Data").text("a"))
                .kid(e("Data"))
                .kid(e("Data").text("c,d")),
        )
        .kid(e("Data").attr_s("Name", "n").text("v"));
    log.rec(wrap(e("UserData").kid(op)).stream());
    // 5: EventData as the record root: Data are ordinary elements.
    log.rec(
        e("EventData")
            .kid(e("Data").attr_s("Name", "A").text("1"))
            .kid(e("Data").attr_s("Name", "A").text("2"))
            .stream(),
    );
    // 6: Data with element children, Data with mixed text + value, a container holding both
    // <Data Name="X"> and <X>.
    let ed = e("EventData")
        .kid(
            e("Data")
                .attr_s("Name", "Obj")
                .kid(e("K").text("k"))
                .kid(e("K").text("k2")),
        )
        .kid(
            e("Data")
                .attr_s("Name", "Mix")
                .text("ab")
                .push(Tok::ValueText(ty::U8, vec![5])),
        )
        .kid(e("Data").attr_s("Name", "X").text("data-x"))
        .kid(e("X").text("elem-x"));
    log.rec(wrap(ed).stream());
    // 7: contract 14.1 dependency ids: values [Null, UInt8 1, BinXml(empty)].
    let def = e("Event")
        .dep(0)
        .kid(e("A").dep(0).text("a"))
        .kid(e("B").dep(1).text("b"))
        .kid(e("C").dep(2).text("c"))
        .kid(e("Holder").kid(e("D").dep(0).text("d")))
        .kid(e("E").dep(7).text("e"));
    log.rec(inst_record(
        "deps",
        def,
        vec![v_null(), v_u8(1), Val::Xml(vec![])],
    ));
    // 8: dependencies on non-NULL empty values are kept: empty string, zero, empty array,
    // empty binary; dependency on a NULL with stale bytes omits.
    let def = e("Event")
        .kid(e("OnEmptyStr").dep(0).text("kept"))
        .kid(e("OnZero").dep(1).text("kept"))
        .kid(e("OnEmptyArr").dep(2).text("kept"))
        .kid(e("OnEmptyBin").dep(3).text("kept"))
        .kid(e("OnStaleNull").dep(4).text("omitted"))
        .kid(e("Data").attr_s("Name", "D").dep(4).sub(4, ty::NULL));
    log.rec(inst_record(
        "deps2",
        def,
        vec![
            v_str(""),
            v_u32(0),
            v_array(ty::I32, &[]),
            v_bin(&[]),
            v_null_stale(3),
        ],
    ));
    // 9: the Windows classic-event shape: EventID with Qualifiers, positional Data from a string
    // array substitution, Binary; named Data repeated by array expansion.
    let def = e("Event")
        .kid(
            e("System").kid(
                e("EventID")
                    .attr_opt("Qualifiers", 1, ty::U16)
                    .opt(0, ty::U16),
            ),
        )
        .kid(
            e("EventData")
                .kid(e("Data").opt(2, ty::ARRAY | ty::STRING))
                .kid(e("Binary").dep(3).opt(3, ty::BINARY)),
        );
    log.rec(inst_record(
        "classic",
        def.clone(),
        vec![
            v_u16(6009),
            v_u16(32768),
            v_str_array(&["10.00.", "17134", "", "Multiprocessor Free"]),
            v_bin(&[1, 2]),
        ],
    ));
    log.rec(inst_record(
        "classic",
        def,
        vec![v_u16(7036), v_null(), v_str_array(&["single"]), v_null()],
    ));
    fx(
        "data-shapes",
        "EventData/UserData JSON shapes (contract 10.5) and dependency ids (14.1): named form with \
         runs (\"X\":[\"1\",\"2\"]), repeats (X_1), non-Data members in place, Data without Name \
         or \
         with an empty Name dropped, the container's own Name in #attributes; positional form \
         (\"Data\":{\"#text\":[...]} with empty items kept, a typed item, Binary member) and a \
         single positional Data; deep UserData with repeated element names (Header, Header_1, \
         Header_2) and Data under a non-container as ordinary elements; EventData as the record \
         root; Data with element children, with mixed text + value (\"ab5\"), and a container with \
         both <Data Name=\"X\"> and <X> (two \"X\" keys); dependency ids (on NULL, on empty \
         BinXml, \
         past the value count, not on empty non-NULL values, the root never omitted); classic \
         events (Qualifiers, string array → positional Data, Binary; a one-item array; NULL \
         Binary omitted).",
        &[
            (Out::Jsonl, "\"EventData\":{\"#attributes\":{\"Name\":\"EvName\"},\"X\":[\"1\",\"2\"]\
                ,\"Y\":\"3\",\"X_1\":\"4\",\"Other\":\"o\",\"Z\":{\"Sub\":\"s\"},\"W\":\"\"}"),
            (Out::Jsonl, "\"EventData\":{\"Data\":{\"#text\":[\"10.00.\",\"17134\",\"\",5]},\"Bina\
                ry\":\"0102\"}"),
            (Out::Jsonl, "\"EventData\":{\"Data\":{\"#text\":\"only\"}}"),
            (Out::Jsonl, "\"Header\":{\"Item\":\"0\"},\"Header_1\":{\"Item\":\"1\"},\"Header_2\":{\
                \"Item\":\"2\"}"),
            (Out::Jsonl, "\"Inner\":{\"Data\":\"a\",\"Data_1\":null,\"Data_2\":\"c,d\"}"),
            (Out::Jsonl, "\"Mix\":\"ab5\""),
            (Out::Jsonl, "{\"Event\":{\"B\":\"b\",\"Holder\":null,\"E\":\"e\"}}"),
            (Out::Xml, "<Event>\n  <B>b</B>\n  <Holder></Holder>\n  <E>e</E>\n</Event>\n"),
            (Out::Jsonl, "\"EventID\":{\"#attributes\":{\"Qualifiers\":32768},\"#text\":6009}"),
            (Out::Jsonl, "\"Data\":{\"#text\":[\"10.00.\",\"17134\",\"\",\"Multiprocessor \
                Free\"]},\"Binary\":\"0102\""),
            (Out::Sep, "\"EventID_attributes\":{\"Qualifiers\":32768},\"EventID\":6009"),
        ],
        log.into_file(),
    )
}

/// The `System` shapes a record filter (`--event-id`, `--provider`, `--channel`, `--level`,
/// `--since`, `--until`) must decide: its fast path (a program's plan, records 2-5 replaying
/// record 1's) and its slow path (trees), fields missing, made of text or of several parts.
fn filters() -> Fixture {
    let mut log = Log::new();
    let t0 = crate::log::ft(1_714_550_400, 0); // 2024-05-01T08:00:00Z
    filters_windows(&mut log, t0);
    filters_trees(&mut log, t0);
    fx(
        "filters",
        "The System shapes record filters decide (shared-fixtures/README.md, \"Filters\"). \
         Records 1-5 share the Windows template (1 recorded, 2-5 replayed): EventIDs 4624, \
         4625, 4624 (provider and channel in other case), 7045, 4624 with Qualifiers 16384; \
         levels 0, 0, 4, 4, 2; times 2024-05-01T08:00:00Z, +100 ns, +1 s, +1 h, -100 ns. \
         Record 6 has no TimeCreated and its EventID (Qualifiers 0) and Level are text; \
         record 7 has no System; record 8's EventID \" 4624\" and Level \"0x4\" are no \
         numbers, its SystemTime is text and its provider non-ASCII. Records 9-10 share a \
         template whose EventID is literal \"46\" then a String value (4624, 4625) and whose \
         Level is a String (\"4\", \"04\").",
        &[
            (Out::Jsonl, "\"EventID\":4625"),
            (
                Out::Jsonl,
                "\"EventID\":{\"#attributes\":{\"Qualifiers\":16384},\"#text\":4624}",
            ),
            (
                Out::Jsonl,
                "\"Name\":\"MICROSOFT-windows-security-AUDITING\"",
            ),
            (
                Out::Jsonl,
                "\"EventID\":{\"#attributes\":{\"Qualifiers\":\"0\"},\"#text\":\"4624\"}",
            ),
            (Out::Jsonl, "\"Event\":{\"EventData\""),
            (Out::Jsonl, "\"EventID\":\"4625\""),
            (Out::Jsonl, "\"Level\":\"04\""),
            (Out::Xml, "<EventID>4624</EventID>"),
        ],
        log.into_file(),
    )
}

/// `filters`' records 1-5: the Windows template; 2-5 replay record 1's program.
fn filters_windows(log: &mut Log, t0: u64) {
    use crate::fixtures::sys;
    use crate::windows::{event_data_def, event_record};
    let ed = |n: u32| v_inst("ed", event_data_def(&[("N", ty::U32)]), vec![v_u32(n)]);
    // Provider, channel, EventID, Qualifiers, level, time.
    type Shape<'a> = (&'a str, &'a str, u16, Option<u16>, u8, u64);
    let shapes: [Shape; 5] = [
        (
            "Microsoft-Windows-Security-Auditing",
            "Security",
            4624,
            None,
            0,
            t0,
        ),
        (
            "Microsoft-Windows-Security-Auditing",
            "Security",
            4625,
            None,
            0,
            t0 + 1,
        ),
        (
            "MICROSOFT-windows-security-AUDITING",
            "security",
            4624,
            None,
            4,
            t0 + 10_000_000,
        ),
        (
            "Service Control Manager",
            "System",
            7045,
            None,
            4,
            t0 + 36_000_000_000,
        ),
        (
            "Evtx-Twin-Fixtures",
            "Application",
            4624,
            Some(16384),
            2,
            t0 - 1,
        ),
    ];
    for (i, (provider, channel, id, qualifiers, level, time)) in shapes.into_iter().enumerate() {
        let mut s = sys(log.next_id, id, time);
        s.provider = provider.into();
        s.channel = channel.into();
        s.qualifiers = qualifiers;
        s.level = level;
        log.rec(event_record(&s, ed(i as u32)));
    }
}

/// `filters`' records 6-10: trees, and a template whose fields are texts.
fn filters_trees(log: &mut Log, t0: u64) {
    // 6: no TimeCreated, EventID and Level as text.
    let no_time = e("Event").kid(
        e("System")
            .kid(e("Provider").attr_s("Name", "Plain").empty())
            .kid(e("EventID").attr_s("Qualifiers", "0").text("4624"))
            .kid(e("Level").text("4"))
            .kid(e("Channel").text("Security")),
    );
    log.rec(no_time.stream());
    // 7: no System at all.
    log.rec(
        e("Event")
            .kid(e("EventData").kid(e("Data").text("4624")))
            .stream(),
    );
    // 8: numbers that are not decimal digits, a time that is text, a non-ASCII provider.
    let odd = e("Event").kid(
        e("System")
            .kid(e("Provider").attr_s("Name", "Pr\u{f6}vider").empty())
            .kid(e("EventID").text(" 4624"))
            .kid(e("Level").text("0x4"))
            .kid(
                e("TimeCreated")
                    .attr_s("SystemTime", "2024-05-01T08:00:00.5Z")
                    .empty(),
            )
            .kid(e("Channel").text("Security")),
    );
    log.rec(odd.stream());
    // 9-10: EventID made of literal text and a value ("46" then "24" or "25"): the fast path
    // reads the tree; the channel is a String value, the level a string of digits.
    let split = || {
        e("Event").kid(
            e("System")
                .kid(e("Provider").attr_sub("Name", 0, ty::STRING).empty())
                .kid(e("EventID").text("46").sub(1, ty::STRING))
                .kid(e("Level").sub(2, ty::STRING))
                .kid(
                    e("TimeCreated")
                        .attr_sub("SystemTime", 3, ty::FILETIME)
                        .empty(),
                )
                .kid(e("Channel").sub(4, ty::STRING)),
        )
    };
    for (tail, level, time) in [("24", "4", t0 + 2), ("25", "04", t0 + 3)] {
        let values = vec![
            v_str("Split"),
            v_str(tail),
            v_str(level),
            v_filetime(time),
            v_str("Security"),
        ];
        log.rec(inst_record("split", split(), values));
    }
}
