//! `damaged/unused-binxml-json.evtx`: records whose only fault is a BinXML value their template
//! does not use, in templates the reference's JSON programs refuse (shared-fixtures/README.md,
//! "Unused BinXML values", "JSON"). The reference renders them in XML and, in every JSON
//! flavour, fails them (live) or leaves them out silently (carved); our rule renders them in
//! every mode. Live records, and stale copies in the chunk's slack (for `--recover-records`).

use crate::dsl::*;
use crate::fixtures::{Fixture, Out};
use crate::log::BASE_TIME;
use crate::windows::XMLNS;
use crate::writer::*;

/// Chunk offset of a definition header, in the chunk's slack, whose `data_size` runs past the
/// chunk end: the reference's `template data out of bounds`.
pub const PAST_END_DEFINITION: u32 = 0xFF00;
/// Chunk offset of zero bytes in the chunk's slack: a definition of no bytes, the reference's
/// `empty BinXML slice`.
pub const EMPTY_DEFINITION: u32 = 0xFE00;

fn time_of(id: u64) -> u64 {
    BASE_TIME + id * 10_000_000
}

/// What value 18 (which only `Uses18` substitutes) holds.
#[derive(Clone, Copy, PartialEq, Eq)]
enum V18 {
    /// A clean nested instance.
    Clean,
    /// One instance whose definition runs past the chunk end.
    PastEnd,
    /// One instance whose definition has no bytes.
    Empty,
}

/// The outer template, all with `<System>` (Provider Name 14, EventID 3, EventRecordID 10,
/// Channel 16) and 19 values.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Shape {
    /// `<UserData>{8}</UserData>`: an EventData/UserData element whose one child is a
    /// substitution, which the reference's JSON compiler never compiles (the Security log's
    /// `Microsoft-Windows-Eventlog` events have it).
    UserData,
    /// `<Extra>{8}</Extra>`, value 8 a BinXML fragment that is no template instance: the
    /// reference's XML programs render it, its JSON preflight refuses it.
    Fragment,
    /// `<UserData>{18}</UserData>`: the template uses value 18 (it fails everywhere when broken).
    Uses18,
}

/// A BinXML value: one instance whose definition is at `def_off` (not written by it).
fn v_nowhere(def_off: u32) -> Val {
    Val::Xml(vec![
        Tok::Frag,
        Tok::Instance(Box::new(Inst {
            key: format!("uj-nowhere-{def_off}"),
            def: e("Gone").opt(0, ty::STRING).stream(),
            values: vec![v_str("never read")],
            def_ref: DefRef::Offset(def_off),
        })),
        Tok::Eof,
    ])
}

fn v_clean(id: u64) -> Val {
    v_inst(
        "uj-clean",
        e("Stale").kid(e("Note").opt(0, ty::STRING)),
        vec![v_str(&format!("stale value {id}"))],
    )
}

/// A Windows-shaped log-cleared record of `shape` whose value 8 is `v8` and value 18 `v18`.
/// `twin`: value 18 clean wherever the template does not use it (the engines' expected output
/// is the reference's on that file).
fn record(id: u64, shape: Shape, v8: Val, v18: V18, twin: bool) -> Vec<Tok> {
    let system = e("System")
        .kid(e("Provider").attr_opt("Name", 14, ty::STRING).empty())
        .kid(e("EventID").opt(3, ty::U16))
        .kid(e("EventRecordID").opt(10, ty::U64))
        .kid(e("Channel").opt(16, ty::STRING));
    let (key, body) = match shape {
        Shape::UserData => ("uj-userdata", e("UserData").opt(8, ty::BINXML)),
        Shape::Fragment => ("uj-fragment", e("Extra").opt(8, ty::BINXML)),
        Shape::Uses18 => ("uj-uses-18", e("UserData").opt(18, ty::BINXML)),
    };
    let def = e("Event").attr_s("xmlns", XMLNS).kid(system).kid(body);
    let mut values: Vec<Val> = (0..19).map(|_| v_null()).collect();
    values[3] = v_u16(1102);
    values[10] = v_u64(id);
    values[14] = v_str("Microsoft-Windows-Eventlog");
    values[16] = v_str("Security");
    values[8] = v8;
    values[18] = match v18 {
        V18::Clean => v_clean(id),
        _ if twin && shape != Shape::Uses18 => v_clean(id),
        V18::PastEnd => v_nowhere(PAST_END_DEFINITION),
        V18::Empty => v_nowhere(EMPTY_DEFINITION),
    };
    inst_record(key, def, values)
}

/// `<LogFileCleared><SubjectUserName>…</SubjectUserName></LogFileCleared>` as a nested instance.
fn v_cleared(id: u64) -> Val {
    v_inst(
        "uj-cleared",
        e("LogFileCleared").kid(e("SubjectUserName").opt(0, ty::STRING)),
        vec![v_str(&format!("admin{id}"))],
    )
}

/// A BinXML value that is a plain element fragment (no template instance).
fn v_fragment(id: u64) -> Val {
    Val::Xml(e("Note").text(&format!("fragment {id}")).stream())
}

/// The records `first..first + 7` of [`fixture`] (1-7 as described there).
fn records(first: u64, twin: bool) -> Vec<(u64, Vec<Tok>)> {
    use Shape::*;
    let r = |k: u64, shape, v8: &dyn Fn(u64) -> Val, v18| {
        let id = first + k;
        (id, record(id, shape, v8(id), v18, twin))
    };
    let null = |_: u64| v_null();
    vec![
        r(0, UserData, &null, V18::Clean),
        r(1, UserData, &null, V18::PastEnd),
        r(2, UserData, &null, V18::Empty),
        r(3, UserData, &v_cleared, V18::PastEnd),
        r(4, Fragment, &v_fragment, V18::PastEnd),
        r(5, Uses18, &null, V18::PastEnd),
        r(6, Fragment, &v_fragment, V18::Clean),
    ]
}

/// Writes the two slack definitions of [`PAST_END_DEFINITION`] and [`EMPTY_DEFINITION`] into a
/// finished chunk whose records end at `end` (past its free space: no CRC covers them).
fn plant_definitions(c: &mut [u8], end: u32) {
    assert!(
        end <= EMPTY_DEFINITION,
        "records reach the planted definitions"
    );
    let at = PAST_END_DEFINITION as usize;
    c[at..at + 4].copy_from_slice(&0u32.to_le_bytes());
    c[at + 4..at + 20].copy_from_slice(&guid_of("uj-past-end"));
    c[at + 20..at + 24].copy_from_slice(&0x1000u32.to_le_bytes());
    let at = EMPTY_DEFINITION as usize;
    assert!(c[at..at + 24].iter().all(|&b| b == 0));
}

/// The log: one chunk, live records 1-7, then in its slack (past its free space, after its
/// last id) the same records again as stale ones, ids 20-26, for `--recover-records`.
pub fn log(twin: bool) -> Vec<u8> {
    let mut c = Chunk::new();
    for (id, toks) in records(1, twin) {
        c.record(id, time_of(id), &toks).unwrap();
    }
    let free = c.pos();
    let last = c.records.last().unwrap().1;
    for (id, toks) in records(20, twin) {
        c.record(id, time_of(id), &toks).unwrap();
    }
    let mut chunk = c.finish(&ChunkOverrides {
        first_id: Some(1),
        last_id: Some(7),
        last_record_offset: Some(last),
        free_space: Some(free),
        flags: None,
    });
    let end = c.pos();
    plant_definitions(&mut chunk, end);
    file_of(&[chunk])
}

pub fn fixture() -> Fixture {
    Fixture {
        dir: "damaged",
        name: "unused-binxml-json",
        exercises: "Security-style log-cleared records (provider Microsoft-Windows-Eventlog, \
            EventID 1102) whose value 18 no template uses: an instance whose definition runs \
            past the chunk end (`template data out of bounds`) or has no bytes (`empty BinXML \
            slice`). Records 1-4 use `<UserData>{8}</UserData>` (the reference's JSON compiler \
            never compiles it): 1 clean, 2 and 3 the two faults with value 8 NULL (XML \
            `<UserData></UserData>`), 4 with value 8 a nested LogFileCleared instance. Records \
            5 and 7 use `<Extra>{8}</Extra>` with value 8 a plain element fragment (the \
            reference's JSON preflight refuses it): 5 broken, 7 clean. Record 6's template \
            substitutes the broken value 18 (fails in every mode). The reference renders 1-5 \
            and 7 in XML, only 1 and 7 in JSON (2-6 are error blocks there, 2-5 `template data \
            out of bounds` or `empty BinXML slice`). The chunk's slack holds the same records \
            as stale ones (ids 20-26): with --recover-records the reference's XML carves 20-24 \
            and 26, its JSON 20 and 26 (every JSON flavour)."
            .into(),
        expect: vec![
            (Out::Xml, "<UserData></UserData>".into()),
            (Out::Xml, "<EventRecordID>5</EventRecordID>".into()),
            (Out::Jsonl, "\"UserData\":null".into()),
            (Out::Jsonl, "\"EventRecordID\":7".into()),
        ],
        expect_absent: vec![
            (Out::Jsonl, "\"EventRecordID\":2".into()),
            (Out::Jsonl, "\"EventRecordID\":5".into()),
            (Out::Sep, "\"EventRecordID\":4".into()),
        ],
        differs: Some(
            "Records 2-5 (the reference renders them in XML and fails them in every JSON \
             flavour). Our rule (README \"Unused BinXML values\"): a BinXML value no template \
             on the chain of used instances substitutes does not fail the record in any output \
             mode. expected/unused-binxml-json.ours.{jsonl,xml,sep.jsonl} is the engines' \
             expected output: the reference's on a twin file whose unused value 18 is a clean \
             instance. Why: the bytes hold the whole event, and the reference's XML shows it; \
             which of its renderers runs must not decide whether evidence is printed."
                .into(),
        ),
        twin: Some(log(true)),
        bytes: log(false),
    }
}
