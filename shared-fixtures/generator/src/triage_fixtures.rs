//! Logs with planted tampering for `triage` (`shared-fixtures/README.md`, "Triage (beyond the
//! reference)"): record id gaps inside a chunk and across chunks, a time running backwards and a
//! silence, a chunk whose records checksum is wrong, a cleared log (a 1102 from
//! Microsoft-Windows-Eventlog, then ids restarting, the old records left in the slack) and a
//! wrapped log whose chunks are not in id order. Every record is Windows-shaped, so the five
//! fields triage reads are all there. They live in `shared-fixtures/triage/`, committed with
//! their reference outputs and manifest entries like the other small fixtures; the reference
//! reads each without an error (the bad checksum matters only under `--validate-checksums`).

use crate::dsl::*;
use crate::fixtures::{fixture, Fixture, Out};
use crate::log::BASE_TIME;
use crate::windows::{event_data_def, event_record, Sys};
use crate::writer::*;

const MINUTE: u64 = 60 * 10_000_000;

fn tfx(name: &'static str, exercises: &str, expect: &[(Out, &str)], bytes: Vec<u8>) -> Fixture {
    fixture("triage", name, exercises, expect, bytes)
}

pub fn all() -> Vec<Fixture> {
    vec![gaps_and_times(), cleared_log(), wrapped_out_of_order()]
}

/// One event: who wrote it, its id, level and channel, record id and time.
struct Ev {
    provider: &'static str,
    event_id: u16,
    level: u8,
    channel: &'static str,
}

/// An event of `provider` with this id, level and channel.
const fn ev(provider: &'static str, event_id: u16, level: u8, channel: &'static str) -> Ev {
    Ev {
        provider,
        event_id,
        level,
        channel,
    }
}

const LOGON: Ev = Ev {
    provider: "Microsoft-Windows-Security-Auditing",
    event_id: 4624,
    level: 0,
    channel: "Security",
};

fn record(c: &mut Chunk, ev: &Ev, id: u64, time: u64) {
    let sys = Sys {
        provider: ev.provider.into(),
        provider_guid: guid_of(ev.provider),
        event_id: ev.event_id,
        qualifiers: None,
        version: Some(0),
        level: ev.level,
        task: 0,
        opcode: 0,
        keywords: 0x8020_0000_0000_0000,
        time,
        activity: None,
        pid: 600,
        tid: 700,
        record_id: id,
        user: None,
        channel: ev.channel.into(),
        computer: "HOST-T".into(),
    };
    let data = v_inst(
        "triage-ed",
        event_data_def(&[("Index", ty::U64)]),
        vec![v_u64(id)],
    );
    c.record(id, time, &event_record(&sys, data)).unwrap();
}

/// Slot 0: records 1-20 without 8-10 (a gap inside the chunk); record 15 is stamped a minute
/// before record 14 (time backwards); two hours pass between 18 and 19 (a silence), around an
/// EventLog 6006 (stopped) and 6005 (started), and 19 is an `EVENTLOG` 6008 (unexpected
/// shutdown; the provider in another case). Slot 1: records 25-40 (21-24 missing across the
/// chunks), a 4719 (audit policy changed) at 30, and its records CRC32 stored wrong (header CRC
/// consistent): `bad_checksums` lists it as `records`.
fn gaps_and_times() -> Fixture {
    let stopped = ev("EventLog", 6006, 4, "System");
    let started = ev("EventLog", 6005, 4, "System");
    let crash = ev("EVENTLOG", 6008, 2, "System");
    let policy = Ev {
        event_id: 4719,
        ..LOGON
    };
    let mut c0 = Chunk::new();
    for id in (1..=20).filter(|id| !(8..=10).contains(id)) {
        let mut time = BASE_TIME + id * MINUTE;
        if id == 15 {
            time = BASE_TIME + 13 * MINUTE;
        }
        if id >= 19 {
            time += 120 * MINUTE;
        }
        let ev = match id {
            18 => &stopped,
            19 => &crash,
            20 => &started,
            _ => &LOGON,
        };
        record(&mut c0, ev, id, time);
    }
    let mut c1 = Chunk::new();
    for id in 25..=40 {
        let ev = if id == 30 { &policy } else { &LOGON };
        record(&mut c1, ev, id, BASE_TIME + (120 + id) * MINUTE);
    }
    let mut slot1 = c1.finish(&ChunkOverrides::default());
    break_records_crc(&mut slot1);
    tfx(
        "gaps-and-times",
        "Planted tampering for triage, Windows-shaped records throughout. Slot 0: records 1-20 \
         without 8-10 (an id gap inside the chunk); record 15 is stamped before record 14 (time \
         runs backwards); two hours pass between record 18 (EventLog 6006, service stopped) and \
         19 (provider EVENTLOG, 6008, unexpected shutdown; another case), then 20 (EventLog \
         6005, started). Slot 1: records 25-40 (21-24 missing across the chunk boundary), a \
         Security-Auditing 4719 (audit policy changed) at 30, and its stored records CRC32 is \
         wrong (header CRC32 consistent): the reference reads every record; with \
         --validate-checksums slot 1 is a chunk error.",
        &[
            (Out::Jsonl, "\"EventRecordID\":7,"),
            (Out::Jsonl, "\"EventRecordID\":11,"),
            (
                Out::Jsonl,
                "\"Provider\":{\"#attributes\":{\"Name\":\"EVENTLOG\"",
            ),
            (Out::Jsonl, "\"EventRecordID\":40,"),
        ],
        file_of(&[c0.finish(&ChunkOverrides::default()), slot1]),
    )
}

/// A finished chunk whose stored records CRC32 is wrong and whose header CRC32 matches.
fn break_records_crc(chunk: &mut [u8]) {
    chunk[52] ^= 0x01;
    let h = chunk_header_crc(chunk);
    chunk[124..128].copy_from_slice(&h.to_le_bytes());
}

/// One chunk: records 1-12 of the old log (logons), then the clearing: a 1102 from
/// Microsoft-Windows-Eventlog whose id restarts at 1, then 2-4 of the new log; old records 13-16
/// remain in the slack after the free space (carved with `--recover-records`). The chunk header
/// names ids 1-40 as its range, so the walk does not stop at the old record 4 (id = last id) and
/// goes on to the free space.
fn cleared_log() -> Fixture {
    let cleared = ev("Microsoft-Windows-Eventlog", 1102, 4, "Security");
    let mut c = Chunk::new();
    for id in 1..=12 {
        record(&mut c, &LOGON, id, BASE_TIME + id * MINUTE);
    }
    let restart = BASE_TIME + 30 * MINUTE;
    record(&mut c, &cleared, 1, restart);
    for id in 2..=4 {
        record(&mut c, &LOGON, id, restart + id * MINUTE);
    }
    let free = c.pos();
    let last = c.records.last().unwrap().1;
    for id in 13..=16 {
        record(&mut c, &LOGON, id, BASE_TIME + id * MINUTE);
    }
    let chunk = c.finish(&ChunkOverrides {
        first_id: Some(1),
        last_id: Some(40),
        last_record_offset: Some(last),
        free_space: Some(free),
        flags: None,
    });
    let mut h = FileHeader::for_chunks(std::slice::from_ref(&chunk));
    h.next_record_id = 5;
    tfx(
        "cleared-log",
        "A cleared log, planted: one chunk holding records 1-12 of the old log \
         (Security-Auditing 4624), then a Microsoft-Windows-Eventlog 1102 (audit log cleared) \
         whose record id restarts at 1, then records 2-4 of the new log; old records 13-16 lie \
         in the slack after the free space offset (carved with --recover-records). The chunk \
         header's id range is 1-40, so the walk passes the old record 4 and ends at the free \
         space; the file header's next record id is 5.",
        &[
            (Out::Jsonl, "\"EventID\":1102"),
            (Out::Jsonl, "\"Name\":\"Microsoft-Windows-Eventlog\""),
        ],
        build_file(&h, &[chunk]),
    )
}

/// A wrapped log whose chunks are not in id order: slots hold records 21-30, 1-10 and 31-40.
/// The oldest chunk (slot 1) is walked first, then slot 2, then slot 0: ids run backwards
/// once, at the boundary into slot 0 (21 after 40), and 11-20 are missing. The file header is
/// DIRTY and FULL.
fn wrapped_out_of_order() -> Fixture {
    let chunk = |ids: std::ops::RangeInclusive<u64>| {
        let mut c = Chunk::new();
        for id in ids {
            record(&mut c, &LOGON, id, BASE_TIME + id * MINUTE);
        }
        c.finish(&ChunkOverrides::default())
    };
    let chunks = [chunk(21..=30), chunk(1..=10), chunk(31..=40)];
    let mut h = FileHeader::for_chunks(&chunks);
    h.first_chunk = 1;
    h.last_chunk = 0;
    h.flags = 0x3;
    tfx(
        "wrapped-out-of-order",
        "A wrapped log whose chunks are not in id order: slots 0-2 hold records 21-30, 1-10 \
         and 31-40. The walk starts at the oldest chunk (slot 1), then slots 2 and 0: record 21 \
         follows record 40 (ids backwards at a chunk boundary, and time too), and 11-20 are \
         missing. File header: first chunk 1, last chunk 0, DIRTY and FULL.",
        &[(Out::Jsonl, "\"EventRecordID\":40,")],
        build_file(&h, &chunks),
    )
}
