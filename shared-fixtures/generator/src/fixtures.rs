//! The small committed fixtures: registry and the synthetic (well-formed) set.

use crate::dsl::*;
use crate::log::Log;
use crate::windows::*;
use crate::writer::{ty, u16s, Tok, Val};

/// Which reference output a notable expectation is checked in.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Out {
    Jsonl,
    Xml,
    Sep,
}

impl Out {
    pub fn ext(self) -> &'static str {
        match self {
            Out::Jsonl => "jsonl",
            Out::Xml => "xml",
            Out::Sep => "sep.jsonl",
        }
    }
}

pub struct Fixture {
    /// `synthetic`, `damaged` or `triage`.
    pub dir: &'static str,
    pub name: &'static str,
    pub exercises: String,
    /// Text that must appear in the reference's output (checked at `expected` time and by tests).
    pub expect: Vec<(Out, String)>,
    /// Text that must NOT appear in the reference's output.
    pub expect_absent: Vec<(Out, String)>,
    /// Where our rule deliberately differs from the reference.
    pub differs: Option<String>,
    /// A twin file whose reference output is the engines' expected output under our rule
    /// (written as `expected/<name>.ours.*`; never committed as a fixture).
    pub twin: Option<Vec<u8>>,
    pub bytes: Vec<u8>,
}

impl Fixture {
    pub fn rel_path(&self) -> String {
        format!("{}/{}.evtx", self.dir, self.name)
    }
}

fn fx(name: &'static str, exercises: &str, expect: &[(Out, &str)], bytes: Vec<u8>) -> Fixture {
    fixture("synthetic", name, exercises, expect, bytes)
}

/// A fixture in `dir` whose reference output holds the `expect` texts.
pub fn fixture(
    dir: &'static str,
    name: &'static str,
    exercises: &str,
    expect: &[(Out, &str)],
    bytes: Vec<u8>,
) -> Fixture {
    Fixture {
        dir,
        name,
        exercises: exercises.to_string(),
        expect: expect.iter().map(|(o, s)| (*o, s.to_string())).collect(),
        expect_absent: Vec::new(),
        differs: None,
        twin: None,
        bytes,
    }
}

/// All committed fixtures, in a fixed order.
pub fn all() -> Vec<Fixture> {
    let mut v = vec![
        basic(),
        values_scalar(),
        values_floats(),
        values_arrays(),
        empty_null(),
    ];
    v.extend(crate::more::synthetic());
    v.push(crate::code_pages::fixture());
    v.extend(crate::damaged::all());
    v.extend(crate::triage_fixtures::all());
    v
}

/// A record stream: `<Event>` with every value in three positions — `EventData/Data Name=`,
/// an element `<name>` under `<Elems>`, and the attribute `v` of `<Aname/>` under `<Attrs>`.
pub fn typed_record(key: &str, fields: &[(&str, Val)], optional: bool) -> Vec<Tok> {
    let mut ed = e("EventData");
    let mut elems = e("Elems");
    let mut attrs = e("Attrs");
    for (i, (name, v)) in fields.iter().enumerate() {
        let t = match v {
            Val::B { ty, .. } => *ty,
            Val::Xml(_) => ty::BINXML,
        };
        let s = if optional {
            opt(i as u16, t)
        } else {
            sub(i as u16, t)
        };
        ed = ed.kid(e("Data").attr_s("Name", name).push(s.clone()));
        elems = elems.kid(e(name).push(s.clone()));
        attrs = attrs.kid(e(&format!("A{name}")).attr("v", vec![s]).empty());
    }
    let def = e("Event").kid(ed).kid(elems).kid(attrs);
    inst_record(key, def, fields.iter().map(|(_, v)| v.clone()).collect())
}

pub fn sys(record_id: u64, event_id: u16, time: u64) -> Sys {
    Sys {
        provider: "Evtx-Twin-Fixtures".into(),
        provider_guid: guid("provider"),
        event_id,
        qualifiers: None,
        version: Some(1),
        level: 4,
        task: 12,
        opcode: 0,
        keywords: 0x8000_0000_0000_0000,
        time,
        activity: None,
        pid: 4242,
        tid: 17,
        record_id,
        user: Some(v_sid(1, 5, &[18])),
        channel: "Application".into(),
        computer: "twin.example".into(),
    }
}

fn basic() -> Fixture {
    let mut log = Log::new();
    let ed_def = || event_data_def(&[("Message", ty::STRING), ("Count", ty::U32)]);
    {
        let chunk = 0;
        for i in 0..3u64 {
            let id = log.next_id;
            let mut s = sys(id, 1000 + i as u16, log.time + 1);
            if i == 1 {
                s.qualifiers = Some(16384);
                s.activity = Some(guid("activity"));
            }
            if i == 2 {
                s.version = None; // classic event: Version omitted (dep on NULL)
                s.user = None;
            }
            let data = v_inst(
                "ed1",
                ed_def(),
                vec![v_str(&format!("hello {chunk}/{i}")), v_u32(i as u32 * 7)],
            );
            log.rec(event_record(&s, data));
        }
        // A forwarded-style record: no template, element tree with value-text tokens.
        let plain = e("Event")
            .attr_s("xmlns", XMLNS)
            .kid(
                e("System")
                    .kid(e("Provider").attr_s("Name", "Plain").empty())
                    .kid(e("EventID").text("7"))
                    .kid(e("Channel").text("Forwarded")),
            )
            .kid(
                e("EventData")
                    .kid(e("Data").text("first"))
                    .kid(e("Data"))
                    .kid(e("Data").text("third")),
            );
        log.rec(plain.stream());
        // A third use of the templates: referenced by offset.
        let id = log.next_id;
        let s = sys(id, 1003, log.time + 1);
        let data = v_inst("ed1", ed_def(), vec![v_str("again"), v_u32(99)]);
        log.rec(event_record(&s, data));
    }
    fx(
        "basic",
        "The Windows shape: an Event/System template (dependency ids, optional substitutions, \
         Provider/TimeCreated/Correlation/Execution/Security closed empty) whose value 18 is a \
         BinXml value holding a nested EventData instance. Record 1 defines both templates inline; \
         records 2, 3 and 5 reference them by offset. Record 2 has Qualifiers and an ActivityID; \
         record 3 has a NULL Version (element omitted) and NULL UserID (<Security/>). Record 4 is \
         a template-less forwarded-style tree whose EventID is text (\"EventID\":\"7\") and whose \
         positional Data keeps the empty item. (Templates redefined per chunk: see damaged/wrapped \
         and the bench log.)",
        &[
            (Out::Jsonl, "\"EventID\":1000"),
            (
                Out::Jsonl,
                "\"EventID\":{\"#attributes\":{\"Qualifiers\":16384},\"#text\":1001}",
            ),
            (
                Out::Jsonl,
                "\"Security\":{\"#attributes\":{\"UserID\":\"S-1-5-18\"}}",
            ),
            (
                Out::Jsonl,
                "\"EventData\":{\"Message\":\"hello 0/2\",\"Count\":14}",
            ),
            (
                Out::Jsonl,
                "\"EventData\":{\"Message\":\"again\",\"Count\":99}",
            ),
            (Out::Jsonl, "\"EventID\":\"7\""),
            (
                Out::Jsonl,
                "\"Data\":{\"#text\":[\"first\",\"\",\"third\"]}",
            ),
            (Out::Xml, "<Correlation ActivityID=\"{"),
            (Out::Xml, "<Security/>"),
            (
                Out::Sep,
                "\"EventID_attributes\":{\"Qualifiers\":16384},\"EventID\":1001",
            ),
            (
                Out::Sep,
                "\"Provider_attributes\":{\"Name\":\"Evtx-Twin-Fixtures\"",
            ),
        ],
        log.into_file(),
    )
}

fn values_scalar() -> Fixture {
    let mut log = Log::new();
    let b016: [u8; 16] = core::array::from_fn(|i| i as u8);
    log.rec(typed_record(
        "ints",
        &[
            ("I8Min", v_i8(i8::MIN)),
            ("I8Max", v_i8(i8::MAX)),
            ("U8Max", v_u8(u8::MAX)),
            ("I16Min", v_i16(i16::MIN)),
            ("U16Max", v_u16(u16::MAX)),
            ("I32Min", v_i32(i32::MIN)),
            ("U32Max", v_u32(u32::MAX)),
            ("I64Min", v_i64(i64::MIN)),
            ("U64Max", v_u64(u64::MAX)),
            ("I32Neg", v_i32(-5)),
            ("U8Zero", v_u8(0)),
        ],
        false,
    ));
    log.rec(typed_record(
        "misc",
        &[
            ("Str", v_str("hello <world> & \"friends\" 'all'")),
            ("Ansi", v_ansi(b"an\0si \xe9\x80\x81 text")),
            ("BoolF", v_bool(0)),
            ("BoolT", v_bool(1)),
            ("Bool16", v_bool(16)),
            ("BoolNeg", v_bool(-1)),
            ("Bin", v_bin(&[0xDE, 0xAD, 0xBE, 0xEF, 0x00, 0x0A])),
            ("Guid", v_guid(b016)),
            ("GuidZero", v_guid([0; 16])),
            ("SizeT4", v_sizet32(0x7eec)),
            ("SizeT8", v_sizet64(0x12_3456_7890)),
            ("Hex32Zero", v_hex32(0)),
            ("Hex32", v_hex32(0xdead_beef)),
            ("Hex64", v_hex64(0x8020_0000_0000_0000)),
        ],
        false,
    ));
    log.rec(typed_record(
        "times",
        &[
            ("FtNormal", v_filetime(131_126_347_716_816_408)),
            ("FtZero", v_filetime(0)),
            ("FtMaxI64", v_filetime(0x7FFF_FFFF_FFFF_FFFF)),
            ("FtHuge", v_filetime(0x8000_0000_0000_0000)),
            ("StValid", v_systime([2019, 3, 5, 8, 23, 23, 5, 789])),
            ("StLeap", v_systime([2024, 2, 4, 29, 0, 0, 0, 0])),
            ("StBadMonth", v_systime([2019, 13, 0, 8, 23, 23, 5, 789])),
            ("StNotLeap", v_systime([2023, 2, 3, 29, 0, 0, 0, 0])),
            ("StZero", v_systime([0; 8])),
            ("StMax", v_systime([30827, 12, 0, 31, 23, 59, 59, 999])),
        ],
        false,
    ));
    log.rec(typed_record(
        "sids",
        &[
            ("SidSystem", v_sid(1, 5, &[18])),
            (
                "SidUser",
                v_sid(1, 5, &[21, 1223297778, 3299746493, 1462173606, 500]),
            ),
            ("SidNull", v_sid(0, 0, &[0])),
            ("SidNoSubs", v_sid(1, 1, &[])),
            ("SidBigAuth", v_sid(1, 0xFFFF_FFFF_FFFF, &[u32::MAX])),
        ],
        false,
    ));
    fx(
        "values-scalar",
        "Every scalar value type as a substitution in three positions (EventData/Data Name=, \
            element \
         text, attribute): Int8..UInt64 extremes (JSON numbers, UInt64 in full), String with XML \
         specials (quotes escaped only in attributes), AnsiString with NUL removal and \
         windows-1252 \
         bytes 0xE9/0x80/0x81, Bool 0/1 and irregular 16/-1 (kept as Int32), Binary (uppercase \
         hex), \
         Guid, SizeT of size 4 and 8, HexInt32/64 (0x0), FileTime (0, 0x7FFF.. → year 828, >i64 \
         max → \
         0000-00-00), SysTime (valid, leap day, invalid month/day → 1601), Sid (S-1-5-18, 48-bit \
         authority, no sub-authorities).",
        &[
            (Out::Jsonl, "\"U64Max\":18446744073709551615"),
            (Out::Jsonl, "\"I64Min\":-9223372036854775808"),
            (Out::Jsonl, "\"Ansi\":\"ansi é€\u{81} text\""),
            (Out::Jsonl, "\"Bool16\":16"),
            (Out::Jsonl, "\"BoolT\":true"),
            (Out::Jsonl, "\"Bin\":\"DEADBEEF000A\""),
            (
                Out::Jsonl,
                "\"Guid\":\"{03020100-0504-0706-0809-0a0b0c0d0e0f}\"",
            ),
            (Out::Jsonl, "\"SizeT4\":\"0x7eec\""),
            (Out::Jsonl, "\"SizeT8\":\"0x1234567890\""),
            (Out::Jsonl, "\"Hex32Zero\":\"0x0\""),
            (Out::Jsonl, "\"FtZero\":\"1601-01-01T00:00:00.0000000Z\""),
            (Out::Jsonl, "\"FtMaxI64\":\"0828-09-14T02:48:05.4775807Z\""),
            (Out::Jsonl, "\"FtHuge\":\"0000-00-00T00:00:00.0000000Z\""),
            (Out::Jsonl, "\"StValid\":\"2019-03-08T23:23:05.7890000Z\""),
            (
                Out::Jsonl,
                "\"StBadMonth\":\"1601-01-01T00:00:00.0000000Z\"",
            ),
            (
                Out::Jsonl,
                "\"SidBigAuth\":\"S-1-281474976710655-4294967295\"",
            ),
            (Out::Jsonl, "\"SidNoSubs\":\"S-1-1\""),
            (
                Out::Xml,
                "<Str>hello &lt;world&gt; &amp; \"friends\" 'all'</Str>",
            ),
            (
                Out::Xml,
                "<AStr v=\"hello &lt;world&gt; &amp; &quot;friends&quot; &apos;all&apos;\"/>",
            ),
        ],
        log.into_file(),
    )
}

fn values_floats() -> Fixture {
    let mut log = Log::new();
    let f64s: Vec<(&str, f64)> = vec![
        ("NaN", f64::NAN),
        ("NegNaN", -f64::NAN),
        ("Inf", f64::INFINITY),
        ("NegInf", f64::NEG_INFINITY),
        ("Zero", 0.0),
        ("NegZero", -0.0),
        ("MinSub", 5e-324),
        ("MaxSub", 2.225_073_858_507_201e-308),
        ("MinNormal", f64::MIN_POSITIVE),
        ("Max", f64::MAX),
        ("E16", 1e16),
        ("E15", 1e15),
        ("Frac", 123_456_789_012_345.6),
        ("Tiny5", 0.00001),
        ("Tiny6", 0.000001),
        ("Small", 1.25e-7),
        ("Three", 3.0),
        ("Tenth", 0.1),
        ("NegHalf", -1.5),
    ];
    let fields: Vec<(&str, Val)> = f64s.iter().map(|(n, x)| (*n, v_f64(*x))).collect();
    log.rec(typed_record("r64", &fields, false));
    let f32s: Vec<(&str, f32)> = vec![
        ("NaN32", f32::NAN),
        ("Inf32", f32::INFINITY),
        ("NegInf32", f32::NEG_INFINITY),
        ("NegZero32", -0.0),
        ("MinSub32", 1e-45),
        ("Max32", f32::MAX),
        ("E12", 1e12),
        ("E13", 1e13),
        ("Tiny32", 0.000001),
        ("Tiny7", 1e-7),
        ("Tenth32", 0.1),
        ("Third32", 1.0 / 3.0),
    ];
    let fields: Vec<(&str, Val)> = f32s.iter().map(|(n, x)| (*n, v_f32(*x))).collect();
    log.rec(typed_record("r32", &fields, false));
    let a64: Vec<Vec<u8>> = [f64::NAN, -0.0, 5e-324, f64::INFINITY]
        .iter()
        .map(|x| x.to_le_bytes().to_vec())
        .collect();
    let a32: Vec<Vec<u8>> = [f32::NEG_INFINITY, 1e-45, 0.5]
        .iter()
        .map(|x| x.to_le_bytes().to_vec())
        .collect();
    log.rec(typed_record(
        "rarr",
        &[
            ("R64A", v_array(ty::R64, &a64)),
            ("R32A", v_array(ty::R32, &a32)),
        ],
        false,
    ));
    fx(
        "values-floats",
        "Real64 and Real32 values (three positions) and arrays: NaN (also negative NaN), inf, \
            -inf, 0.0, \
         -0.0, subnormals (5e-324, 1e-45), max, the fixed/exponent notation boundaries (1e16 vs \
         1000000000000000.0 for Real64; 1e13 vs 1000000000000.0 for Real32), shortest round-trip \
         digits (0.1, 0.33333334), small values (0.00001, 0.000001 vs 1e-7). Floats are JSON \
         strings.",
        &[
            (Out::Jsonl, "\"NaN\":\"NaN\""),
            (Out::Jsonl, "\"NegNaN\":\"NaN\""),
            (Out::Jsonl, "\"Inf\":\"inf\""),
            (Out::Jsonl, "\"NegInf\":\"-inf\""),
            (Out::Jsonl, "\"NegZero\":\"-0.0\""),
            (Out::Jsonl, "\"Zero\":\"0.0\""),
            (Out::Jsonl, "\"MinSub\":\"5e-324\""),
            (Out::Jsonl, "\"E16\":\"1e+16\""),
            (Out::Jsonl, "\"E15\":\"1000000000000000.0\""),
            (Out::Jsonl, "\"Tiny5\":\"0.00001\""),
            (Out::Jsonl, "\"Small\":\"1.25e-7\""),
            (Out::Jsonl, "\"MinSub32\":\"1e-45\""),
            (Out::Jsonl, "\"Max32\":\"3.4028235e+38\""),
            (Out::Jsonl, "\"R64A\":[\"NaN\",\"-0.0\",\"5e-324\",\"inf\"]"),
            (Out::Xml, "<NegZero>-0.0</NegZero>"),
            (Out::Xml, "<R64A>NaN</R64A>"),
        ],
        log.into_file(),
    )
}

fn le<T: Copy, const N: usize>(xs: &[T], f: fn(T) -> [u8; N]) -> Vec<Vec<u8>> {
    xs.iter().map(|x| f(*x).to_vec()).collect()
}

fn values_arrays() -> Fixture {
    let mut log = Log::new();
    log.rec(typed_record(
        "arr-int",
        &[
            ("I8A", v_array(ty::I8, &le(&[-1i8, 2, -3], i8::to_le_bytes))),
            ("U8A", v_array(ty::U8, &le(&[0u8, 255], u8::to_le_bytes))),
            (
                "I16A",
                v_array(ty::I16, &le(&[-300i16, 300], i16::to_le_bytes)),
            ),
            (
                "U16A",
                v_array(ty::U16, &le(&[1u16, 65535], u16::to_le_bytes)),
            ),
            ("I32A", v_array(ty::I32, &le(&[-1i32, 2], i32::to_le_bytes))),
            (
                "U32A",
                v_array(ty::U32, &le(&[7u32, u32::MAX], u32::to_le_bytes)),
            ),
            (
                "I64A",
                v_array(ty::I64, &le(&[i64::MIN, 0], i64::to_le_bytes)),
            ),
            (
                "U64A",
                v_array(ty::U64, &le(&[u64::MAX, 1], u64::to_le_bytes)),
            ),
            (
                "Hex32A",
                v_array(ty::HEX32, &le(&[0u32, 0xabc], u32::to_le_bytes)),
            ),
            (
                "Hex64A",
                v_array(ty::HEX64, &le(&[1u64, 0xfeed], u64::to_le_bytes)),
            ),
            ("I32A1", v_array(ty::I32, &le(&[7i32], i32::to_le_bytes))),
            ("I32A0", v_array(ty::I32, &[])),
        ],
        false,
    ));
    log.rec(typed_record(
        "arr-other",
        &[
            ("StrA3", v_str_array(&["a", "", "c,d"])),
            ("StrA1", v_str_array(&["only"])),
            ("StrA0", v_str_array(&[])),
            (
                "AnsiA",
                v_array(ty::ANSI, &[b"x\0".to_vec(), b"\0y\xe9\0".to_vec()]),
            ),
            (
                "BoolA",
                v_array(ty::BOOL, &le(&[1i32, 0, 1], i32::to_le_bytes)),
            ),
            (
                "BoolIrr",
                v_array(ty::BOOL, &le(&[1i32, 2], i32::to_le_bytes)),
            ),
            (
                "GuidA",
                v_array(ty::GUID, &[guid("a").to_vec(), [0u8; 16].to_vec()]),
            ),
            (
                "FtA",
                v_array(
                    ty::FILETIME,
                    &le(&[0u64, 131_126_347_716_816_408], u64::to_le_bytes),
                ),
            ),
            (
                "StA",
                v_array(
                    ty::SYSTIME,
                    &[
                        systime_bytes([2019, 3, 5, 8, 23, 23, 5, 789]),
                        systime_bytes([0; 8]),
                    ],
                ),
            ),
            (
                "SidA",
                v_array(
                    ty::SID,
                    &[sid_bytes(1, 5, &[18]), sid_bytes(1, 5, &[32, 544])],
                ),
            ),
        ],
        false,
    ));
    // Two arrays in one element (attribute and text): cross product; an array in the root.
    let def = e("Event")
        .sub(2, ty::ARRAY | ty::I32)
        .kid(
            e("Cross")
                .attr_sub("k", 0, ty::ARRAY | ty::STRING)
                .sub(1, ty::ARRAY | ty::U8),
        )
        .kid(e("Holder").kid(e("Item").sub(0, ty::ARRAY | ty::STRING)));
    log.rec(inst_record(
        "arr-cross",
        def,
        vec![
            v_str_array(&["p", "q"]),
            v_array(ty::U8, &[vec![1], vec![2], vec![3]]),
            v_array(ty::I32, &le(&[10i32, 20], i32::to_le_bytes)),
        ],
    ));
    fx(
        "values-arrays",
        "Every supported array type (0x81..0x95 except 0x8E/0x90) in three positions: expansion \
            repeats \
         the Data element (JSON runs → arrays), element (JSON Name, Name_1) and attribute-holding \
         element; one-item arrays are not expanded (quoted: \"I32A1\":\"7\"); empty arrays are \
         empty; \
         string arrays with empty items (no node) and commas; AnsiString arrays split on NUL; Bool \
         arrays with an irregular item become Int32 arrays; two arrays in one element give a cross \
         product; an array directly in the template root renders comma-joined.",
        &[
            (Out::Jsonl, "\"I8A\":[-1,2,-3]"),
            (Out::Jsonl, "\"I32A1\":\"7\""),
            (Out::Jsonl, "\"StrA3\":[\"a\",\"\",\"c,d\"]"),
            (Out::Jsonl, "\"BoolA\":[true,false,true]"),
            (Out::Jsonl, "\"BoolIrr\":[1,2]"),
            (Out::Jsonl, "\"I32A\":-1,\"I32A_1\":2"),
            (Out::Xml, "<Data Name=\"I32A\">-1</Data>"),
            (Out::Xml, "<Cross k=\"q\">3</Cross>"),
            (Out::Xml, "<AI32A v=\"-1\"/>"),
            (
                Out::Jsonl,
                "\"AI32A\":{\"#attributes\":{\"v\":-1}},\"AI32A_1\":{\"#attributes\":{\"v\":2}}",
            ),
            (Out::Xml, "10,20"),
        ],
        log.into_file(),
    )
}

fn empty_null() -> Fixture {
    let mut log = Log::new();
    // Contract 14.1: optional vs normal substitution with empty inputs.
    let def = e("Event")
        .kid(e("OptEmpty").opt(2, ty::STRING))
        .kid(e("NonOptNull").sub(1, ty::NULL))
        .kid(e("NonOptEmptyStr").sub(2, ty::STRING))
        .kid(e("OptNull").opt(1, ty::NULL))
        .kid(
            e("AttrEmpty")
                .attr_s("e", "")
                .attr_sub("n", 1, ty::NULL)
                .empty(),
        )
        .kid(e("AttrOnly").attr_s("a", "A"))
        .kid(e("AttrEmptyStr").attr_sub("s", 2, ty::STRING).empty())
        .kid(e("OptBin").opt(3, ty::BINARY))
        .kid(e("NonOptBin").sub(3, ty::BINARY))
        .kid(e("OptXml").opt(4, ty::BINXML))
        .kid(e("NonOptXml").sub(4, ty::BINXML))
        .kid(e("OptArr").opt(5, ty::ARRAY | ty::I32))
        .kid(e("NonOptArr").sub(5, ty::ARRAY | ty::I32))
        .kid(e("Stale").sub(6, ty::NULL))
        .kid(e("AfterStale").sub(7, ty::U32))
        .kid(e("PastEnd").sub(40, ty::U32))
        .kid(e("OptPastEnd").attr_opt("x", 41, ty::U32).empty())
        .kid(
            e("EventData")
                .kid(e("Data").attr_s("Name", "DNull").sub(1, ty::NULL))
                .kid(e("Data").attr_s("Name", "DEmpty").sub(2, ty::STRING))
                .kid(e("Data").attr_s("Name", "DOptNull").opt(1, ty::NULL))
                .kid(e("Data").attr_sub("Name", 1, ty::NULL).text("no name"))
                .kid(e("Data").attr_sub("Name", 2, ty::STRING).text("empty name")),
        );
    log.rec(inst_record(
        "empties",
        def,
        vec![
            v_u8(0),
            v_null(),
            v_str(""),
            v_bin(&[]),
            Val::Xml(vec![]),
            v_array(ty::I32, &[]),
            v_null_stale(5),
            v_u32(77),
        ],
    ));
    // Empty positional data: EventData with only empty / NULL Data.
    let def = e("Event").kid(
        e("EventData")
            .kid(e("Data").opt(0, ty::STRING))
            .kid(e("Data").sub(1, ty::NULL))
            .kid(e("Data").sub(0, ty::STRING)),
    );
    log.rec(inst_record(
        "positional-empties",
        def,
        vec![v_str(""), v_null()],
    ));
    // Declared sizes that disagree with the natural size (contract 14.1).
    let def = e("E")
        .kid(e("A").sub(0, ty::U32))
        .kid(e("B").sub(1, ty::STRING));
    let mut big = 7u32.to_le_bytes().to_vec();
    big.extend_from_slice(&[0x63, 0, 0, 0]);
    log.rec(inst_record(
        "sizes",
        def.clone(),
        vec![val_sized(ty::U32, big, 8), v_str("ok")],
    ));
    log.rec(inst_record(
        "sizes",
        def,
        vec![
            val_sized(ty::U32, 7u32.to_le_bytes()[..2].to_vec(), 2),
            v_str("okay="),
        ],
    ));
    // Values that run past their declared size: the reader keeps the later position.
    let def = e("E")
        .kid(e("A").sub(0, ty::ARRAY | ty::STRING))
        .kid(e("B").sub(1, ty::STRING));
    let mut strarr = units_bytes(&u16s("ab"));
    strarr.extend_from_slice(&[0, 0]);
    log.rec(inst_record(
        "past-size",
        def,
        vec![val_sized(ty::ARRAY | ty::STRING, strarr, 2), v_str("ok")],
    ));
    let def = e("E")
        .kid(e("A").sub(0, ty::SID))
        .kid(e("B").sub(1, ty::STRING));
    log.rec(inst_record(
        "past-size-sid",
        def,
        vec![
            val_sized(ty::SID, sid_bytes(1, 5, &[32, 544]), 8),
            v_str("ok"),
        ],
    ));
    // Every value empty or NULL in the Windows shape: no EventData at all, empty Channel.
    let mut s = sys(log.next_id, 1, log.time + 1);
    s.channel = String::new();
    s.version = None;
    s.user = None;
    log.rec(event_record(&s, Val::Xml(vec![Tok::Frag, Tok::Eof])));
    let mut s = sys(log.next_id, 2, log.time + 1);
    s.user = Some(v_null_stale(12));
    log.rec(event_record(&s, v_null()));
    fx(
        "empty-null",
        "Empty and NULL values in every position (contract 14.1, 7.4): optional substitutions of \
         empty values produce nothing (<OptEmpty></OptEmpty>, null), non-optional NULL / empty \
         still make the element non-empty in XML; attributes with no content are dropped \
         (<AttrEmpty/>); empty Binary, empty BinXml and zero-item arrays; a NULL with 5 stale \
         bytes is skipped; substitution indexes past the value count; Data with NULL/empty Name \
         dropped from named JSON; positional EventData with only empty items; declared sizes \
         larger (8 for UInt32: extra bytes skipped) and smaller (2: the reader keeps the later \
         position → \"A\":7274503,\"B\":\"kay=䌀\") than the natural size; a string array declared \
         2 bytes whose first string runs to its NUL (6 bytes) and a SID declared 8 bytes with two \
         sub-authorities (16 bytes): the next value is read after the real end (\"B\":\"ok\"); a \
         Windows-shaped event whose EventData value is an empty fragment (no EventData), empty \
         Channel, and one whose EventData value is NULL.",
        &[
            (Out::Xml, "<OptEmpty></OptEmpty>"),
            (Out::Xml, "<NonOptNull></NonOptNull>"),
            (Out::Xml, "<AttrEmpty/>"),
            (Out::Xml, "<AttrOnly a=\"A\"></AttrOnly>"),
            (Out::Jsonl, "\"OptEmpty\":null"),
            (Out::Jsonl, "\"AttrOnly\":{\"#attributes\":{\"a\":\"A\"}}"),
            (Out::Jsonl, "\"AfterStale\":77"),
            (Out::Jsonl, "{\"E\":{\"A\":7,\"B\":\"ok\"}}"),
            (Out::Jsonl, "{\"E\":{\"A\":7274503,\"B\":\"kay=䌀\"}}"),
            (Out::Jsonl, "\"Channel\":null"),
            (Out::Jsonl, "{\"E\":{\"A\":\"ab\",\"B\":\"ok\"}}"),
            (Out::Jsonl, "{\"E\":{\"A\":\"S-1-5-32-544\",\"B\":\"ok\"}}"),
        ],
        log.into_file(),
    )
}

/// Helper for other modules: a String value of given units (lone surrogates allowed).
pub fn text_units(u: Vec<u16>) -> Tok {
    Tok::Text(u)
}

/// Helper: units of a string.
pub fn us(s: &str) -> Vec<u16> {
    u16s(s)
}
