//! Fixtures for record recovery (`--recover-records`, contract 5.4, `shared-fixtures/README.md`
//! "Record recovery"): stale records in cleared chunks, chunk slack, the gaps around bad
//! records, reused chunks of a wrapped log, carved records whose template was overwritten, and a
//! log cut inside its last chunk.
//!
//! They are written to `shared-fixtures/carving/`; their expected outputs are not committed:
//! `evtx-compare parity` runs the reference on them (with and without `--recover-records`).

use crate::dsl::*;
use crate::log::BASE_TIME;
use crate::windows::{event_data_def, event_record, Sys, XMLNS};
use crate::writer::*;

/// One carving fixture: file name (without `.evtx`), what it exercises, its bytes.
pub struct CarvingFixture {
    pub name: &'static str,
    pub exercises: &'static str,
    pub bytes: Vec<u8>,
}

pub fn all() -> Vec<CarvingFixture> {
    vec![
        cleared_chunk(),
        slack_and_gaps(),
        template_gone(),
        unused_binxml(),
        nested_unused_binxml(),
        wrapped_stale(),
        cut_last_chunk(),
    ]
}

/// Writes every carving fixture into `dir` (created when missing).
pub fn write(dir: &std::path::Path) -> std::io::Result<Vec<CarvingFixture>> {
    std::fs::create_dir_all(dir)?;
    let all = all();
    for f in &all {
        std::fs::write(dir.join(format!("{}.evtx", f.name)), &f.bytes)?;
    }
    Ok(all)
}

fn time_of(id: u64) -> u64 {
    BASE_TIME + id * 10_000_000
}

/// A Windows-shaped event (outer System template, nested EventData instance).
fn event(id: u64) -> Vec<Tok> {
    let sys = Sys {
        provider: "Carving-Test".into(),
        provider_guid: guid_of("carving-provider"),
        event_id: 4000 + (id % 7) as u16,
        qualifiers: None,
        version: Some(1),
        level: 4,
        task: 3,
        opcode: 0,
        keywords: 0x8000_0000_0000_0000,
        time: time_of(id),
        activity: None,
        pid: 700 + id as u32,
        tid: 900,
        record_id: id,
        user: None,
        channel: "Application".into(),
        computer: "HOST-A".into(),
    };
    let ed = v_inst(
        "carve-ed",
        event_data_def(&[("Index", ty::U64), ("Text", ty::STRING)]),
        vec![v_u64(id), v_str(&format!("old event {id}"))],
    );
    event_record(&sys, ed)
}

/// A different outer template, at the same definition offset when it comes first in a chunk:
/// `<Event><System><Provider Name=…/><EventRecordID>…` reading values 10, 14 and, when
/// `with_data`, the EventData value 18.
fn other_event(id: u64, with_data: bool) -> Vec<Tok> {
    let mut def = e("Event").attr_s("xmlns", XMLNS).kid(
        e("System")
            .kid(e("Provider").attr_opt("Name", 14, ty::STRING).empty())
            .kid(e("EventRecordID").opt(10, ty::U64)),
    );
    if with_data {
        def = def.opt(18, ty::BINXML);
    }
    let mut values: Vec<Val> = (0..19).map(|_| v_null()).collect();
    values[10] = v_u64(id);
    values[14] = v_str("Other-Provider");
    values[18] = v_inst(
        "other-ed",
        event_data_def(&[("Note", ty::STRING)]),
        vec![v_str(&format!("new event {id}"))],
    );
    let key = if with_data {
        "other-data"
    } else {
        "other-plain"
    };
    inst_record(key, def, values)
}

/// A chunk of `event` records with ids `ids`, and the chunk under construction.
fn chunk_of(ids: std::ops::RangeInclusive<u64>) -> Chunk {
    let mut c = Chunk::new();
    for id in ids {
        c.record(id, time_of(id), &event(id)).unwrap();
    }
    c
}

/// `new` (a finished chunk) written over `old`: the bytes past `new`'s free space stay `old`'s,
/// as when Windows reuses a chunk. Header and CRCs are `new`'s.
fn overlay(new: &[u8], old: &[u8]) -> Vec<u8> {
    let free = u32::from_le_bytes(new[48..52].try_into().unwrap()) as usize;
    let mut c = old.to_vec();
    c[..free].copy_from_slice(&new[..free]);
    c
}

fn fin(c: &Chunk) -> Vec<u8> {
    c.finish(&ChunkOverrides::default())
}

/// Slot 0: live records 201-205 over an older chunk of records 1-60 (stale records after the
/// live ones, the first of them overwritten halfway). Slot 1: a cleared chunk (free space 512,
/// first id 1 > last id 0) whose data area still holds records 61-120.
fn cleared_chunk() -> CarvingFixture {
    let old = fin(&chunk_of(1..=60));
    let live = fin(&chunk_of(201..=205));
    let slot0 = overlay(&live, &old);
    let cleared = chunk_of(61..=120).finish(&ChunkOverrides {
        first_id: Some(1),
        last_id: Some(0),
        last_record_offset: Some(0),
        free_space: Some(512),
        flags: None,
    });
    CarvingFixture {
        name: "cleared-chunk",
        exercises: "a reused chunk (live 201-205, stale records of an older pass after them, the \
                    first overwritten halfway) and a cleared chunk (free space 512, first id > \
                    last id) whose data area still holds records 61-120",
        bytes: file_of(&[slot0, cleared]),
    }
}

/// One chunk: live records 1-3, a record with a zero size (error), stale records 50 and 51 in
/// the gap (51 cut short by the next live record), live 4-6, a record whose timestamp is out of
/// range (error, not blank), live 7 = the chunk's last id, then slack holding stale 52-54 and a
/// stale record whose size copy does not match.
fn slack_and_gaps() -> CarvingFixture {
    let mut c = Chunk::new();
    for id in 1..=3 {
        c.record(id, time_of(id), &event(id)).unwrap();
    }
    // A bad record: magic, size 0.
    let mut bad = Vec::new();
    bad.extend_from_slice(b"**\0\0");
    bad.extend_from_slice(&0u32.to_le_bytes());
    bad.extend_from_slice(&99u64.to_le_bytes());
    bad.extend_from_slice(&time_of(99).to_le_bytes());
    c.raw_record(None, &bad);
    // Stale 50 (whole) and 51 (its tail overwritten by live record 4: no size copy). Written
    // by this chunk, so they use its template definitions.
    c.record(50, time_of(50), &event(50)).unwrap();
    let at51 = c.pos() as usize;
    c.record(51, time_of(51), &event(51)).unwrap();
    c.data.truncate(at51 + 120);
    c.records.truncate(3);
    for id in 4..=6 {
        c.record(id, time_of(id), &event(id)).unwrap();
    }
    // A bad timestamp: an error that is not blank; resync finds 7.
    let at = c.pos() as usize;
    c.record(98, time_of(98), &event(98)).unwrap();
    c.data[at + 16..at + 24].copy_from_slice(&u64::MAX.to_le_bytes());
    c.records.pop();
    c.record(7, time_of(7), &event(7)).unwrap();
    let free = c.pos();
    // Slack: stale 52-54, then a record with a wrong size copy.
    for id in 52..=54 {
        c.record(id, time_of(id), &event(id)).unwrap();
    }
    c.record(55, time_of(55), &event(55)).unwrap();
    let end = c.pos() as usize;
    c.data[end - 4..end].copy_from_slice(&1u32.to_le_bytes());
    let mut records = c.records.clone();
    records.retain(|&(id, _)| id <= 7);
    let last_off = records.last().unwrap().1;
    let chunk = c.finish(&ChunkOverrides {
        first_id: Some(1),
        last_id: Some(7),
        last_record_offset: Some(last_off),
        free_space: Some(free),
        flags: None,
    });
    CarvingFixture {
        name: "slack-and-gaps",
        exercises: "carve spans around bad records (zero size; out-of-range timestamp) holding \
                    stale records, one cut short by the next live record; slack after the last \
                    live id with stale records and one whose size copy does not match",
        bytes: file_of(&[chunk]),
    }
}

/// Two slots, each an older chunk of `event` records (outer template at offset 550, nested
/// EventData definition inline in its first record) overwritten at the start by records of
/// another outer template defined at the same offset. Slot 0's new template does not use value
/// 18 (the EventData the stale records carry, whose definition is gone): the reference renders
/// the stale records with it (not with `--separate-json-attributes`). Slot 1's new template uses
/// value 18: the stale records fail and are dropped.
fn template_gone() -> CarvingFixture {
    let mut slots = Vec::new();
    for (with_data, ids) in [(false, 1..=40), (true, 41..=80)] {
        let old = fin(&chunk_of(ids.clone()));
        let mut live = Chunk::new();
        let first = 1000 + *ids.start();
        for id in first..first + 12 {
            live.record(id, time_of(id), &other_event(id, with_data))
                .unwrap();
        }
        slots.push(overlay(&fin(&live), &old));
    }
    CarvingFixture {
        name: "template-gone",
        exercises: "carved records whose template definition offset now holds another template \
                    (one that ignores their nested EventData, one that uses it) and whose nested \
                    EventData definition was overwritten",
        bytes: file_of(&slots),
    }
}

/// The chunk offset of the `k`-th template instance's definition offset field in the record
/// at chunk offset `rec` (instances in byte order: the outer one, then nested ones).
fn instance_offset_field(c: &[u8], rec: usize, k: usize) -> usize {
    let size = u32::from_le_bytes(c[rec + 4..rec + 8].try_into().unwrap()) as usize;
    (rec + 24..rec + size - 1)
        .filter(|&i| c[i] == 0x0C && c[i + 1] == 0x01)
        .nth(k)
        .expect("record has that many instances")
        + 6
}

/// The chunk offsets of the records of a finished chunk, in order.
fn record_offsets(c: &[u8]) -> Vec<usize> {
    let free = u32::from_le_bytes(c[48..52].try_into().unwrap()) as usize;
    let mut out = Vec::new();
    let mut pos = 512;
    while pos + 24 <= free && c[pos..pos + 4] == *b"**\0\0" {
        out.push(pos);
        pos += u32::from_le_bytes(c[pos + 4..pos + 8].try_into().unwrap()) as usize;
    }
    out
}

/// Live records whose nested EventData instance (value 18) points its definition offset at
/// the chunk header, past the chunk or at itself: records 2-4 use a template that ignores
/// value 18 (the reference never parses it: they render, shared-fixtures/README.md "Unused
/// BinXML values"), records 7-8 one that uses it (they fail). Slot 1 holds stale copies
/// behind a live record, for the recover modes.
fn unused_binxml() -> CarvingFixture {
    let mut slots = Vec::new();
    for old_ids in [None, Some(20..=27)] {
        let mut live = Chunk::new();
        for id in 1..=8u64 {
            live.record(id, time_of(id), &other_event(id, id > 5))
                .unwrap();
        }
        let mut c = fin(&live);
        let recs = record_offsets(&c);
        for (i, bend) in [(1, 0u32), (2, 0xFFFF_FFFF), (3, 1), (6, 0), (7, 0xFFF0)] {
            let field = instance_offset_field(&c, recs[i], 1);
            let value = if bend == 1 { field as u32 } else { bend };
            c[field..field + 4].copy_from_slice(&value.to_le_bytes());
        }
        fix_chunk_crcs(&mut c);
        if let Some(ids) = old_ids {
            // The same records again as stale ones: a short live chunk written over them.
            let mut first = Chunk::new();
            first
                .record(30, time_of(30), &other_event(30, false))
                .unwrap();
            let mut stale = c.clone();
            for (k, &r) in recs.iter().enumerate() {
                let id = *ids.start() + k as u64;
                stale[r + 8..r + 16].copy_from_slice(&id.to_le_bytes());
            }
            c = overlay(&fin(&first), &stale);
        }
        slots.push(c);
    }
    CarvingFixture {
        name: "unused-binxml",
        exercises: "records whose nested EventData instance has a bent definition offset: \
                    rendered when the template ignores that value, failed when it uses it, \
                    live (slot 0) and stale (slot 1)",
        bytes: file_of(&slots),
    }
}

/// A BinXML value holding one instance of `key` whose definition offset points at the chunk
/// header: it fails wherever it is parsed.
fn v_broken(key: &str) -> Val {
    Val::Xml(vec![
        Tok::Frag,
        Tok::Instance(Box::new(Inst {
            key: key.to_string(),
            def: e("Gone").opt(0, ty::STRING).stream(),
            values: vec![v_str("never read")],
            def_ref: DefRef::Offset(0),
        })),
        Tok::Eof,
    ])
}

/// A clean BinXML value in place of a broken one.
fn v_leaf(id: u64) -> Val {
    v_inst(
        "nu-leaf",
        e("Leaf").opt(0, ty::STRING),
        vec![v_str(&format!("leaf {id}"))],
    )
}

/// The innermost instance: `<Inner><Text>{0}</Text>[<Extra>{1}</Extra>]</Inner>`, value 1
/// `one`.
fn v_inner(id: u64, uses_1: bool, one: Val) -> Val {
    let mut def = e("Inner").kid(e("Text").opt(0, ty::STRING));
    if uses_1 {
        def = def.kid(e("Extra").opt(1, ty::BINXML));
    }
    let key = if uses_1 {
        "nu-inner-uses"
    } else {
        "nu-inner-plain"
    };
    v_inst(key, def, vec![v_str(&format!("inner {id}")), one])
}

/// The middle instance: `<Mid><Note>{0}</Note><Kid>{2}</Kid>[<Extra>{1}</Extra>]</Mid>`.
fn mid_parts(uses_1: bool, note: Val, one: Val, kid: Val) -> (&'static str, E, Vec<Val>) {
    let mut def = e("Mid")
        .kid(e("Note").opt(0, ty::STRING))
        .kid(e("Kid").opt(2, ty::BINXML));
    if uses_1 {
        def = def.kid(e("Extra").opt(1, ty::BINXML));
    }
    let key = if uses_1 {
        "nu-mid-uses"
    } else {
        "nu-mid-plain"
    };
    (key, def, vec![note, one, kid])
}

/// `Mid`'s definition that ignores value 1.
fn def_13() -> E {
    mid_parts(false, v_null(), v_null(), v_null()).1
}

/// The record: `<Event><System><EventRecordID>{10}</EventRecordID></System>[{18}]</Event>`,
/// value 18 `mid`.
fn nu_record(id: u64, uses_18: bool, mid: Val) -> Vec<Tok> {
    let mut def = e("Event")
        .attr_s("xmlns", XMLNS)
        .kid(e("System").kid(e("EventRecordID").opt(10, ty::U64)));
    if uses_18 {
        def = def.opt(18, ty::BINXML);
    }
    let mut values: Vec<Val> = (0..19).map(|_| v_null()).collect();
    values[10] = v_u64(id);
    values[18] = mid;
    inst_record(
        if uses_18 {
            "nu-outer-uses"
        } else {
            "nu-outer-plain"
        },
        def,
        values,
    )
}

/// Broken BinXML values below the record's own instance, along the chain of used instances
/// (shared-fixtures/README.md "Unused BinXML values"). Record 18 uses value 18, a `Mid`
/// instance, whose value 2 is an `Inner` instance. Records 1-2 (and 12) are clean and define
/// every template inline. Broken and unused, so rendered by the reference: 3 (in `Mid`,
/// depth 2), 5 (in `Inner`, depth 3), 7 (under an unused value 18). Broken and failing the
/// record: 4 and 6 (the template uses it), 8 (`Mid`'s value 0 fails the preflight: an
/// array), 9 (value 18 is more than the one instance), 10 (`Mid`'s used value 2 is the
/// broken one). Rendered: 11 (the broken value inside `Mid`'s unused value 1), 13 (8 without
/// the broken value).
fn nested_unused_binxml() -> CarvingFixture {
    let note = |id: u64| v_str(&format!("mid {id}"));
    let mid = |id: u64, uses_1: bool, one: Val, kid: Val| {
        let (key, def, values) = mid_parts(uses_1, note(id), one, kid);
        v_inst(key, def, values)
    };
    let mut records: Vec<(u64, Vec<Tok>)> = vec![
        (
            1,
            nu_record(
                1,
                true,
                mid(1, false, v_leaf(1), v_inner(1, false, v_leaf(1))),
            ),
        ),
        (
            2,
            nu_record(
                2,
                true,
                mid(2, true, v_leaf(2), v_inner(2, true, v_leaf(2))),
            ),
        ),
        (
            3,
            nu_record(
                3,
                true,
                mid(3, false, v_broken("nu-gone"), v_inner(3, false, v_leaf(3))),
            ),
        ),
        (
            4,
            nu_record(
                4,
                true,
                mid(4, true, v_broken("nu-gone"), v_inner(4, false, v_leaf(4))),
            ),
        ),
        (
            5,
            nu_record(
                5,
                true,
                mid(5, false, v_leaf(5), v_inner(5, false, v_broken("nu-gone"))),
            ),
        ),
        (
            6,
            nu_record(
                6,
                true,
                mid(6, false, v_leaf(6), v_inner(6, true, v_broken("nu-gone"))),
            ),
        ),
        (
            7,
            nu_record(
                7,
                false,
                mid(
                    7,
                    true,
                    v_broken("nu-gone"),
                    v_inner(7, true, v_broken("nu-gone")),
                ),
            ),
        ),
    ];
    // 8: `Mid`'s value 0 an array of UInt32 (rendered by the full parse; the preflight
    // refuses arrays the program does not expand).
    let (key, def, _) = mid_parts(false, v_null(), v_null(), v_null());
    let array = v_array(ty::U32, &[8u32.to_le_bytes().to_vec()]);
    let v8 = v_inst(
        key,
        def,
        vec![array, v_broken("nu-gone"), v_inner(8, false, v_leaf(8))],
    );
    records.push((8, nu_record(8, true, v8)));
    let array = v_array(ty::U32, &[13u32.to_le_bytes().to_vec()]);
    let v13 = v_inst(
        key,
        def_13(),
        vec![array, v_leaf(13), v_inner(13, false, v_leaf(13))],
    );
    records.push((13, nu_record(13, true, v13)));
    // 9: value 18 is the `Mid` instance followed by an element.
    let (key, def, values) = mid_parts(
        false,
        note(9),
        v_broken("nu-gone"),
        v_inner(9, false, v_leaf(9)),
    );
    let mut toks = vec![Tok::Frag, inst(key, def, values)];
    toks.extend(e("After").empty().toks());
    toks.push(Tok::Eof);
    records.push((9, nu_record(9, true, Val::Xml(toks))));
    // 10: `Mid`'s used value 2 is itself broken.
    records.push((
        10,
        nu_record(10, true, mid(10, false, v_leaf(10), v_broken("nu-gone"))),
    ));
    // 11: an unused broken value inside the unused value 1 of `Mid`.
    records.push((
        11,
        nu_record(
            11,
            true,
            mid(
                11,
                false,
                v_inner(11, false, v_broken("nu-gone")),
                v_inner(11, false, v_leaf(11)),
            ),
        ),
    ));
    records.push((
        12,
        nu_record(
            12,
            true,
            mid(12, false, v_leaf(12), v_inner(12, false, v_leaf(12))),
        ),
    ));
    let mut c = Chunk::new();
    for (id, toks) in &records {
        c.record(*id, time_of(*id), toks).unwrap();
    }
    CarvingFixture {
        name: "nested-unused-binxml",
        exercises: "broken BinXML values inside used nested instances (depth 2 and 3), unused \
                    (rendered) and used, under a nested instance that fails the preflight or is \
                    not the whole value (failed)",
        bytes: file_of(&[fin(&c)]),
    }
}

/// A wrapped log of three slots: slot 0 reused by records 61-70 over records 1-30, slots 1 and
/// 2 records 31-45 and 46-60. The oldest chunk is slot 1, so slot 0 (live records and the stale
/// 1-30 behind them) comes last.
fn wrapped_stale() -> CarvingFixture {
    let slot0 = overlay(&fin(&chunk_of(61..=70)), &fin(&chunk_of(1..=30)));
    let slots = vec![slot0, fin(&chunk_of(31..=45)), fin(&chunk_of(46..=60))];
    let mut h = FileHeader::for_chunks(&slots);
    h.first_chunk = 1;
    h.last_chunk = 0;
    h.next_record_id = 71;
    CarvingFixture {
        name: "wrapped-stale",
        exercises: "a wrapped log: the oldest chunk in the middle, the newest (slot 0) reused \
                    over the log's first records, which stay in its slack",
        bytes: build_file(&h, &slots),
    }
}

/// One chunk (records 1-20) and the first half of a second (records 21-90, cut mid-record): the
/// file ends inside its last chunk (our rule: one error line; with `--recover-records` its
/// complete records come out as recovered).
fn cut_last_chunk() -> CarvingFixture {
    let first = fin(&chunk_of(1..=20));
    let second = fin(&chunk_of(21..=90));
    let h = FileHeader::for_chunks(&[first.clone(), second.clone()]);
    let free = u32::from_le_bytes(second[48..52].try_into().unwrap()) as usize;
    let mut bytes = build_file(&h, &[first, second]);
    // Cut in the middle of the second chunk's records (not on a record boundary).
    bytes.truncate(4096 + CHUNK_SIZE + free / 2 + 7);
    CarvingFixture {
        name: "cut-last-chunk",
        exercises: "a log cut inside its last chunk: the reference ignores the partial slot; we \
                    print an incomplete-chunk error and, with --recover-records, carve its \
                    complete records",
        bytes,
    }
}
