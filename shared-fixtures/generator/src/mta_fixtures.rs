//! `.MTA` fixtures for `--mta` (layout: `shared-fixtures/generator/mta-format.md`): one log of
//! events from several publishers, and `.MTA` files for it, good, odd and damaged.
//!
//! Written to `shared-fixtures/mta/`: `events.evtx` and `events.<variant>.MTA`. A `.MTA` file
//! pairs with the log named by the part of its name before the first dot. Their expected outputs
//! are not committed: `evtx-compare parity` runs the reference on every pair in every mode.

use crate::dsl::*;
use crate::log::Log;
use crate::windows::{event_data_def, event_record, Sys, XMLNS};
use crate::writer::{guid_of, ty, u16s};

const MAGIC: &[u8; 8] = b"MTAFile\0";
const PAGE_HEADER: usize = 888;
const PAGE_SLOTS: usize = 100;

/// One fixture file: its name in `shared-fixtures/mta/`, what it exercises, its bytes.
pub struct MtaFixture {
    pub name: String,
    pub exercises: &'static str,
    pub bytes: Vec<u8>,
}

/// Writes every fixture into `dir` (created when missing).
pub fn write(dir: &std::path::Path) -> std::io::Result<Vec<MtaFixture>> {
    std::fs::create_dir_all(dir)?;
    let all = all();
    for f in &all {
        std::fs::write(dir.join(&f.name), &f.bytes)?;
    }
    Ok(all)
}

fn utf16(s: &str) -> Vec<u8> {
    u16s(s).iter().flat_map(|u| u.to_le_bytes()).collect()
}

/// A MSG payload: byte length with the NUL, the text, the NUL (empty: length 0, no text).
fn msg_payload(text: &str) -> Vec<u8> {
    if text.is_empty() {
        return 0u32.to_le_bytes().to_vec();
    }
    let mut t = utf16(text);
    t.extend([0, 0]);
    let mut out = (t.len() as u32).to_le_bytes().to_vec();
    out.extend(t);
    out
}

/// One publisher: tables of (key, MSG index) for levels, tasks, opcodes, keywords.
#[derive(Clone, Default)]
pub struct Publisher {
    pub name: String,
    pub levels: Vec<(u32, u32)>,
    pub tasks: Vec<(u32, u32)>,
    pub opcodes: Vec<(u32, u32)>,
    pub keywords: Vec<(u32, u32)>,
}

impl Publisher {
    fn payload(&self) -> Vec<u8> {
        let mut out = Vec::new();
        for table in [&self.levels, &self.tasks, &self.opcodes, &self.keywords] {
            out.extend((table.len() as u32).to_le_bytes());
            for (key, msg) in table {
                out.extend(key.to_le_bytes());
                out.extend(msg.to_le_bytes());
            }
        }
        let name = utf16(&self.name);
        out.extend((name.len() as u32).to_le_bytes());
        out.extend(name);
        out
    }
}

/// An `.MTA` file under construction: entries as (entry index, payload) per section.
#[derive(Clone, Default)]
pub struct Mta {
    pub strings: Vec<String>,
    pub msg: Vec<(u32, Vec<u8>)>,
    pub evt: Vec<(u32, Vec<u8>)>,
    pub publ: Vec<(u32, Vec<u8>)>,
}

impl Mta {
    /// The MSG index of `text`, added when new.
    pub fn s(&mut self, text: &str) -> u32 {
        if let Some(i) = self.strings.iter().position(|s| s == text) {
            return i as u32;
        }
        let i = self.strings.len() as u32;
        self.strings.push(text.to_string());
        self.msg.push((i, msg_payload(text)));
        i
    }

    /// An EVT entry for the event at 0-based `position`.
    pub fn event(&mut self, position: u32, event_record_id: u64, message: u64) {
        let mut p = event_record_id.to_le_bytes().to_vec();
        p.extend(message.to_le_bytes());
        self.evt.push((position, p));
    }

    pub fn publisher(&mut self, p: &Publisher) {
        let index = self.publ.len() as u32;
        self.publ.push((index, p.payload()));
    }

    /// The file: header, descriptors EVT, MSG, PUB, then the three sections.
    pub fn bytes(&self) -> Vec<u8> {
        file(&[
            ("EVT", section(&self.evt)),
            ("MSG", section(&self.msg)),
            ("PUB", section(&self.publ)),
        ])
    }
}

/// A section: pages of up to 100 records, each page's header then its records; no records
/// gives one empty page. Windows' page header bytes are kept (0xFFFFFFFF at 0 and 60).
pub fn section(records: &[(u32, Vec<u8>)]) -> Vec<u8> {
    let pages: Vec<&[(u32, Vec<u8>)]> = if records.is_empty() {
        vec![&[]]
    } else {
        records.chunks(PAGE_SLOTS).collect()
    };
    let mut out = Vec::new();
    for (number, page) in pages.iter().enumerate() {
        let start = out.len();
        let mut header = vec![0u8; PAGE_HEADER];
        if !page.is_empty() {
            header[..4].copy_from_slice(&u32::MAX.to_le_bytes());
            let highest = page.iter().map(|r| r.0).max().unwrap_or(0);
            for k in 0..14 {
                header[4 + 4 * k..8 + 4 * k].copy_from_slice(&highest.to_le_bytes());
            }
            header[60..64].copy_from_slice(&u32::MAX.to_le_bytes());
        }
        header[64..72].copy_from_slice(&(number as u64).to_le_bytes());
        let mut body = Vec::new();
        for (slot, (index, payload)) in page.iter().enumerate() {
            let offset = (start + PAGE_HEADER + body.len()) as u64;
            header[88 + 8 * slot..96 + 8 * slot].copy_from_slice(&offset.to_le_bytes());
            body.extend(index.to_le_bytes());
            body.extend((payload.len() as u32).to_le_bytes());
            body.extend(payload);
        }
        let next = if number + 1 == pages.len() {
            start
        } else {
            start + PAGE_HEADER + body.len()
        };
        header[72..80].copy_from_slice(&(next as u64).to_le_bytes());
        header[80..88].copy_from_slice(&(start as u64).to_le_bytes());
        out.extend(header);
        out.extend(body);
    }
    out
}

/// Header, one descriptor per section (names without NUL), the sections back to back.
pub fn file(sections: &[(&str, Vec<u8>)]) -> Vec<u8> {
    let table: usize = sections.iter().map(|(n, _)| 20 + utf16(n).len()).sum();
    let mut out = MAGIC.to_vec();
    for v in [1u32, 1, table as u32, sections.len() as u32] {
        out.extend(v.to_le_bytes());
    }
    let mut offset = 24 + table;
    for (name, data) in sections {
        out.extend((offset as u64).to_le_bytes());
        out.extend((data.len() as u64).to_le_bytes());
        out.extend((utf16(name).len() as u32).to_le_bytes());
        out.extend(utf16(name));
        offset += data.len();
    }
    for (_, data) in sections {
        out.extend(data);
    }
    out
}

/// The events of `events.evtx`, in file order (record header ids 1, 2, ...).
struct Ev {
    provider: &'static str,
    qualifiers: Option<u16>,
    level: u8,
    task: u16,
    opcode: u8,
    keywords: u64,
    /// `System/EventRecordID` (the header id is the position + 1).
    record_id: u64,
}

const fn ev(provider: &'static str, level: u8, task: u16, opcode: u8, keywords: u64) -> Ev {
    Ev {
        provider,
        qualifiers: None,
        level,
        task,
        opcode,
        keywords,
        record_id: 0,
    }
}

/// Template-shaped events; `record_id` 0 means "the header id".
fn events() -> Vec<Ev> {
    let mut v = vec![
        // 1: everything from the publisher's own tables, two keywords.
        ev("Mta-Alpha", 2, 1, 1, 0x3),
        // 2: level from DEFAULT_PUBLISHER, opcode only under task 0, keyword bit 63 default.
        ev("Mta-Alpha", 4, 2, 0, 0x8000_0000_0000_0001),
        // 3: case-insensitive publisher lookup; unknown level/task; no keywords.
        ev("MTA-BETA", 9, 77, 9, 0),
        // 4: a publisher the file does not have: no RenderingInfo.
        ev("Mta-Gamma", 4, 1, 0, 0x1),
        // 5: classic event source (Qualifiers set): no opcode name.
        Ev {
            qualifiers: Some(16384),
            ..ev("Mta-Alpha", 3, 1, 1, 0x2)
        },
        // 6: EventRecordID differs from the position: message by first EVT entry with the id.
        Ev {
            record_id: 1,
            ..ev("Mta-Alpha", 2, 1, 1, 0x4)
        },
        // 7: empty names (level, task) left out; opcode empty under its task: no fallback.
        ev("Mta-Empty", 1, 5, 3, 0x10),
        // 8: the exact-name publisher wins over a case variant; escaping in every string.
        ev("mta-beta", 1, 3, 2, 0x6),
        // 9: a provider name with non-ASCII letters (exact match only).
        ev("Mta-Ünïcode", 4, 0, 0, 0),
        // 10: a publisher with no tables at all: only the message and the defaults.
        ev("Mta-Bare", 5, 0x10, 0xff, u64::MAX),
        // 11: EventRecordID with no EVT entry: no message.
        Ev {
            record_id: 999,
            ..ev("Mta-Alpha", 2, 1, 1, 0)
        },
    ];
    for (i, e) in v.iter_mut().enumerate() {
        if e.record_id == 0 {
            e.record_id = i as u64 + 1;
        }
    }
    v
}

/// The log: one record per `events()` entry, then template-less records: literal text fields
/// (decimal and hex), a record that already has a RenderingInfo, one without System, one whose
/// root is not Event.
fn evtx() -> Vec<u8> {
    let mut log = Log::new();
    for (i, e) in events().iter().enumerate() {
        let sys = Sys {
            provider: e.provider.into(),
            provider_guid: guid_of(e.provider),
            event_id: 100 + i as u16,
            qualifiers: e.qualifiers,
            version: Some(0),
            level: e.level,
            task: e.task,
            opcode: e.opcode,
            keywords: e.keywords,
            time: log.time + 1,
            activity: None,
            pid: 4,
            tid: 8,
            record_id: e.record_id,
            user: None,
            channel: "Application".into(),
            computer: "MTA-HOST".into(),
        };
        let data = v_inst(
            "mta-ed",
            event_data_def(&[("Param1", ty::STRING)]),
            vec![v_str(&format!("value {i}"))],
        );
        log.rec(event_record(&sys, data));
    }
    let plain = |system: E| {
        e("Event")
            .attr_s("xmlns", XMLNS)
            .kid(system)
            .kid(e("EventData").kid(e("Data").text("plain")))
    };
    let id = log.next_id;
    // Literal text: decimal level, hex keywords with spaces around, opcode past u8 (0).
    log.rec(
        plain(
            e("System")
                .kid(e("Provider").attr_s("Name", "Mta-Alpha").empty())
                .kid(e("EventID").attr_s("Qualifiers", "0").text("1"))
                .kid(e("Level").text("2"))
                .kid(e("Task").text("0x1"))
                .kid(e("Opcode").text("300"))
                .kid(e("Keywords").text(" 0X0000000000000003 "))
                .kid(e("EventRecordID").text(&id.to_string())),
        )
        .stream(),
    );
    // Already rendered (forwarded event): left as it is.
    log.rec(
        e("Event")
            .attr_s("xmlns", XMLNS)
            .kid(
                e("System")
                    .kid(e("Provider").attr_s("Name", "Mta-Alpha").empty())
                    .kid(e("Level").text("2")),
            )
            .kid(e("RenderingInfo").kid(e("Message").text("forwarded")))
            .stream(),
    );
    // No System: nothing to look up.
    log.rec(e("Event").kid(e("EventData").text("no system")).stream());
    // Root is not Event.
    log.rec(
        e("Other")
            .kid(e("System").kid(e("Provider").attr_s("Name", "Mta-Alpha").empty()))
            .stream(),
    );
    // Two Provider elements (the last wins) and a System with no EventRecordID (0).
    log.rec(
        plain(
            e("System")
                .kid(e("Provider").attr_s("Name", "Mta-Gamma").empty())
                .kid(e("Provider").attr_s("Name", "mta-ALPHA").empty())
                .kid(e("Level").text("+4")),
        )
        .stream(),
    );
    log.into_file()
}

/// The good file for `events.evtx`.
fn full() -> Mta {
    let mut m = Mta::default();
    // Messages, by position; position 5 (record 6) has EventRecordID 1, like position 0.
    let messages = [
        "Alpha started: <&> \"quoted\" 'single'.",
        "Alpha line one\r\nline two\ttabbed",
        "Beta message",
        "Gamma message (never shown)",
        "Classic source message",
        "Record 6, EventRecordID 1: its own entry at position 5",
        "",
        "Escapes ]]> &amp; <tag/>",
        "Ünïcödé message — ✓ 😀",
        "Bare publisher message",
        "Message of id 11",
    ];
    for (pos, text) in messages.iter().enumerate() {
        let idx = m.s(text);
        let id = match pos {
            5 => 1,
            10 => 11,
            _ => pos as u64 + 1,
        };
        m.event(pos as u32, id, idx as u64);
    }
    // Template-less records 12.. : entries with their own ids.
    for id in 12..=16u64 {
        let idx = m.s(&format!("Plain record {id}"));
        m.event(id as u32 - 1, id, idx as u64);
    }
    let alpha = Publisher {
        name: "Mta-Alpha".into(),
        levels: vec![(2, m.s("Alpha Error")), (3, m.s("Alpha Warning"))],
        tasks: vec![(1, m.s("Alpha Task One")), (0x10002, m.s("Alpha Task Two"))],
        opcodes: vec![
            ((1 << 16) | 1, m.s("Alpha Start In Task 1")),
            (1 << 16, m.s("Alpha Start")),
            ((0x2c << 16) | 1, m.s("Alpha past u8 (never)")),
        ],
        keywords: vec![
            (0, m.s("Alpha Keyword 0")),
            (1, m.s("Alpha Keyword 1")),
            (2, m.s("Alpha Keyword 2")),
            // Missing string: dropped.
            (3, 9999),
        ],
    };
    let beta = Publisher {
        name: "Mta-Beta".into(),
        levels: vec![(1, m.s("Beta <Critical>"))],
        tasks: vec![(3, m.s("Beta & Task"))],
        opcodes: vec![(2 << 16, m.s("Beta \"Op\""))],
        keywords: vec![(1, m.s("Beta 'one'")), (2, m.s("Beta two"))],
    };
    let beta_exact = Publisher {
        name: "mta-beta".into(),
        levels: vec![(1, m.s("beta exact level"))],
        ..Default::default()
    };
    let empty_names = Publisher {
        name: "Mta-Empty".into(),
        levels: vec![(1, m.s(""))],
        tasks: vec![(5, m.s(""))],
        opcodes: vec![
            ((3 << 16) | 5, m.s("")),
            (3 << 16, m.s("Empty op fallback")),
        ],
        keywords: vec![(4, m.s(""))],
    };
    let unicode = Publisher {
        name: "Mta-Ünïcode".into(),
        levels: vec![(4, m.s("Информация"))],
        ..Default::default()
    };
    let bare = Publisher {
        name: "Mta-Bare".into(),
        ..Default::default()
    };
    let default = Publisher {
        name: "DEFAULT_PUBLISHER".into(),
        levels: vec![
            (1, m.s("Critical")),
            (2, m.s("Error")),
            (4, m.s("Information")),
            (5, m.s("Verbose")),
        ],
        tasks: vec![(0x10000, m.s("None"))],
        opcodes: vec![(0, m.s("Info")), (2 << 16, m.s("Stop"))],
        keywords: vec![
            (4, m.s("Default Keyword 4")),
            (63, m.s("Classic")),
            (48, m.s("Response Time")),
        ],
    };
    // A duplicate name later in the file: the first one wins.
    let alpha_again = Publisher {
        name: "Mta-Alpha".into(),
        levels: vec![(2, m.s("second Alpha (never)"))],
        ..Default::default()
    };
    for p in [
        &alpha,
        &beta,
        &beta_exact,
        &empty_names,
        &unicode,
        &bare,
        &default,
        &alpha_again,
    ] {
        m.publisher(p);
    }
    m
}

/// `full()` with its entries in reverse order and with duplicate indexes (the first of an index
/// wins), an unknown section before the others, and a second EVT section (ignored).
fn shuffled() -> Vec<u8> {
    let mut m = full();
    let mut msg = m.msg.clone();
    msg.reverse();
    // A later duplicate of index 0 with other text: ignored.
    let mut msg2 = vec![(0, msg_payload("duplicate index (never)"))];
    msg2.splice(0..0, msg.iter().cloned());
    m.msg = msg2;
    m.evt.reverse();
    let mut publ = m.publ.clone();
    publ.reverse();
    m.publ = publ;
    let mut named = vec![("XTRA", section(&[(0, vec![1, 2, 3])]))];
    named.push(("MSG", section(&m.msg)));
    named.push(("PUB", section(&m.publ)));
    named.push(("EVT", section(&m.evt)));
    named.push(("EVT", section(&[])));
    file(&named)
}

/// Many entries: padding events and strings across several pages per section.
fn paged() -> Vec<u8> {
    let mut m = full();
    for i in 0..250u32 {
        let idx = m.s(&format!("padding string {i}"));
        m.event(100 + i, 100_000 + i as u64, idx as u64);
    }
    for i in 0..120 {
        m.publisher(&Publisher {
            name: format!("Mta-Pad-{i}"),
            ..Default::default()
        });
    }
    m.bytes()
}

/// Strings missing: every table points past MSG, EVT entries point nowhere or to u64::MAX, the
/// default publisher is absent: publishers still get an (empty or partial) RenderingInfo.
fn missing_strings() -> Vec<u8> {
    let mut m = Mta::default();
    let only = m.s("only message");
    m.event(0, 1, only as u64);
    m.event(1, 2, 77);
    m.event(2, 3, u64::MAX);
    for name in ["Mta-Alpha", "Mta-Beta", "Mta-Empty", "Mta-Bare"] {
        m.publisher(&Publisher {
            name: name.into(),
            levels: vec![(2, 500), (4, only)],
            tasks: vec![(1, 501)],
            opcodes: vec![(1 << 16, 502)],
            keywords: vec![(0, 503), (1, only)],
        });
    }
    m.bytes()
}

/// Strings with a NUL inside, no trailing NUL, odd byte lengths and a lone surrogate.
fn odd_strings() -> Vec<u8> {
    let mut m = full();
    let mut raw = |units: &[u16], extra: &[u8]| {
        let mut t: Vec<u8> = units.iter().flat_map(|u| u.to_le_bytes()).collect();
        t.extend(extra);
        let mut p = (t.len() as u32).to_le_bytes().to_vec();
        p.extend(t);
        let i = m.msg.len() as u32 + 1000;
        m.msg.push((i, p));
        i
    };
    let cut = raw(&[b'a' as u16, b'b' as u16, 0, b'c' as u16], &[]);
    let no_nul = raw(&[b'n' as u16, b'o' as u16], &[]);
    let odd = raw(&[b'o' as u16, b'd' as u16], b"x");
    let lone = raw(&[b'x' as u16, 0xD800, b'y' as u16, 0], &[]);
    m.publ.retain(|(_, p)| !p.ends_with(&utf16("Mta-Bare")));
    m.publisher(&Publisher {
        name: "Mta-Bare".into(),
        levels: vec![(5, cut)],
        tasks: vec![(0x10, no_nul)],
        opcodes: vec![((0xff << 16) | 0x10, odd)],
        keywords: vec![(0, lone), (1, cut), (63, no_nul)],
    });
    m.bytes()
}

/// Where a record lies in `section(records)` (the writer's layout above): after its page's
/// header and the records before it on that page.
fn record_offset(records: &[(u32, Vec<u8>)], i: usize) -> usize {
    let mut page_at = 0;
    for (p, page) in records.chunks(PAGE_SLOTS).enumerate() {
        let mut at = page_at + PAGE_HEADER;
        for (k, (_, payload)) in page.iter().enumerate() {
            if p * PAGE_SLOTS + k == i {
                return at;
            }
            at += 8 + payload.len();
        }
        page_at = at;
    }
    panic!("record {i} of {}", records.len())
}

/// Where the three sections of `m.bytes()` start: after the header (24) and the descriptors
/// (20 bytes and the UTF-16 name each), in the order EVT, MSG, PUB.
fn section_starts(m: &Mta) -> [usize; 3] {
    let evt = 24 + 3 * (20 + 6);
    let msg = evt + section(&m.evt).len();
    [evt, msg, msg + section(&m.msg).len()]
}

/// The file offset of descriptor `index` of the section table (EVT, MSG, PUB).
fn descriptor_at(index: usize) -> usize {
    24 + index * (20 + 6)
}

/// Damaged files: each is one error, and no records; with the file offset the error line
/// must name (`None` where the damage, a count, is only met further on).
fn damaged() -> Vec<(&'static str, &'static str, Vec<u8>, Option<usize>)> {
    let good = full().bytes();
    let mut out = Vec::new();
    let mut push = |name, why, bytes, at| out.push((name, why, bytes, at));
    push("damaged-empty", "a zero-length file", Vec::new(), Some(0));
    push(
        "damaged-short",
        "the magic and 4 bytes",
        good[..12].to_vec(),
        Some(0),
    );
    let mut magic = good.clone();
    magic[0] = b'X';
    push("damaged-magic", "not MTAFile", magic, Some(0));
    let mut version = good.clone();
    version[8] = 2;
    push("damaged-version", "major version 2", version, Some(8));
    // The cut leaves the first descriptor whole; the section it points to is gone.
    push(
        "damaged-descriptor",
        "cut inside the second descriptor",
        good[..24 + 26 + 10].to_vec(),
        Some(descriptor_at(0)),
    );
    // PUB starts inside the cut file: named at its first byte.
    push(
        "damaged-section",
        "cut inside the PUB section",
        good[..good.len() - 40].to_vec(),
        Some(section_starts(&full())[2]),
    );
    push(
        "damaged-no-pub",
        "only EVT and MSG",
        file(&[("EVT", section(&full().evt)), ("MSG", section(&full().msg))]),
        Some(descriptor_at(0)),
    );
    let mut count = good.clone();
    count[20..24].copy_from_slice(&u32::MAX.to_le_bytes());
    push("damaged-count", "section count u32::MAX", count, None);
    // A page chain that loops: the last EVT page's next points back to 0.
    let mut m = full();
    for i in 0..150u32 {
        m.event(200 + i, 5000 + i as u64, 0);
    }
    let mut evt = section(&m.evt);
    // The second page starts after the first page's header and its 100 records.
    let second = u64::from_le_bytes(evt[72..80].try_into().unwrap()) as usize;
    evt[second + 72..second + 80].copy_from_slice(&0u64.to_le_bytes());
    push(
        "damaged-page-loop",
        "EVT page chain loops",
        file(&[
            ("EVT", evt),
            ("MSG", section(&m.msg)),
            ("PUB", section(&m.publ)),
        ]),
        Some(section_starts(&m)[0]),
    );
    // A record offset past the section: the slot holding it.
    let m = full();
    let mut msg = section(&m.msg);
    msg[88 + 8..96 + 8].copy_from_slice(&(u64::MAX - 3).to_le_bytes());
    push(
        "damaged-record",
        "a MSG record offset near u64::MAX",
        file(&[
            ("EVT", section(&m.evt)),
            ("MSG", msg),
            ("PUB", section(&m.publ)),
        ]),
        Some(section_starts(&m)[1] + 88 + 8),
    );
    // A MSG length past its payload.
    let mut m = full();
    m.msg[2].1[0..4].copy_from_slice(&0x7fff_fff0u32.to_le_bytes());
    let at = section_starts(&m)[1] + record_offset(&m.msg, 2);
    push(
        "damaged-msg-entry",
        "a MSG length past its record",
        m.bytes(),
        Some(at),
    );
    // A short EVT entry.
    let mut m = full();
    m.evt[3].1.truncate(12);
    let at = section_starts(&m)[0] + record_offset(&m.evt, 3);
    push(
        "damaged-evt-entry",
        "an EVT entry of 12 bytes",
        m.bytes(),
        Some(at),
    );
    // A PUB table count past its record.
    let mut m = full();
    m.publ[1].1[0..4].copy_from_slice(&0x4000_0000u32.to_le_bytes());
    let at = section_starts(&m)[2] + record_offset(&m.publ, 1);
    push(
        "damaged-pub-entry",
        "a PUB table count past its record",
        m.bytes(),
        Some(at),
    );
    out
}

/// The name of the table of damage offsets beside the fixtures.
pub const DAMAGE_TABLE: &str = "damage.json";

/// `{file name: offset or null}`: where each damaged fixture's error line must point, from
/// the writer's own layout (the tests of both CLIs read it; `null`: see `damaged`).
pub fn damage_table(entries: &[(String, Option<usize>)]) -> Vec<u8> {
    let map: std::collections::BTreeMap<&str, Option<usize>> =
        entries.iter().map(|(n, at)| (n.as_str(), *at)).collect();
    let mut text = serde_json::to_vec_pretty(&map).expect("a map of numbers");
    text.push(b'\n');
    text
}

pub fn all() -> Vec<MtaFixture> {
    let mut v = vec![
        MtaFixture {
            name: "events.evtx".into(),
            exercises: "the log every events.*.MTA describes: several publishers, classic \
                        events, literal-text System fields, forwarded and System-less records",
            bytes: evtx(),
        },
        MtaFixture {
            name: "events.full.MTA".into(),
            exercises: "publisher and DEFAULT_PUBLISHER tables, case-insensitive names, several \
                        keywords, opcode fallback, empty names, escaping, message by position \
                        then by EventRecordID",
            bytes: full().bytes(),
        },
        MtaFixture {
            name: "events.shuffled.MTA".into(),
            exercises: "entries out of order with duplicate indexes, an unknown section, a \
                        second EVT section",
            bytes: shuffled(),
        },
        MtaFixture {
            name: "events.paged.MTA".into(),
            exercises: "sections of several pages",
            bytes: paged(),
        },
        MtaFixture {
            name: "events.missing-strings.MTA".into(),
            exercises: "table and EVT entries whose strings are missing, no DEFAULT_PUBLISHER",
            bytes: missing_strings(),
        },
        MtaFixture {
            name: "events.odd-strings.MTA".into(),
            exercises: "strings cut at a NUL, without NUL, of odd length, with a lone surrogate",
            bytes: odd_strings(),
        },
    ];
    let mut offsets = Vec::new();
    for (name, why, bytes, at) in damaged() {
        let name = format!("events.{name}.MTA");
        offsets.push((name.clone(), at));
        v.push(MtaFixture {
            name,
            exercises: why,
            bytes,
        });
    }
    v.push(MtaFixture {
        name: DAMAGE_TABLE.into(),
        exercises: "where each damaged file's error line points (the CLI tests read it)",
        bytes: damage_table(&offsets),
    });
    v
}
