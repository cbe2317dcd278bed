//! `WEVT_TEMPLATE` fixtures for `--wevt-cache` and the template subcommands (layout:
//! `shared-fixtures/generator/wevt-format.md`): minimal PE files (32- and 64-bit) carrying CRIM
//! manifests, `.wevtcache` files built from the same manifests (good and damaged), and logs whose
//! embedded template definitions are broken or missing, so the reference takes the cache path.
//!
//! Written to `shared-fixtures/wevt/`. Their expected outputs are not committed:
//! `evtx-compare parity` (family `wevt`) runs the reference on every `.evtx` with every
//! `.wevtcache`, and the subcommands on every PE and log.

use crate::dsl::*;
use crate::log::BASE_TIME;
use crate::windows::XMLNS;
use crate::writer::{file_of, guid_of, name_hash, ty, u16s, Chunk, ChunkOverrides, DefRef};
use crate::writer::{Inst, Tok, Val};

/// One fixture file: its name in `shared-fixtures/wevt/`, what it exercises, its bytes.
pub struct WevtFixture {
    pub name: String,
    pub exercises: &'static str,
    pub bytes: Vec<u8>,
}

/// Writes every fixture into `dir` (created when missing).
pub fn write(dir: &std::path::Path) -> std::io::Result<Vec<WevtFixture>> {
    std::fs::create_dir_all(dir)?;
    let all = all();
    for f in &all {
        std::fs::write(dir.join(&f.name), &f.bytes)?;
    }
    Ok(all)
}

fn le16(v: u16) -> [u8; 2] {
    v.to_le_bytes()
}
fn le32(v: u32) -> [u8; 4] {
    v.to_le_bytes()
}

// ---------------------------------------------------------------------------------------------
// WEVT BinXML: template definition tokens with inline names (hash, count, units, NUL).

/// An inline WEVT name: u16 hash (the string table's), u16 count, the units, a NUL unit.
pub fn inline_name(s: &str) -> Vec<u8> {
    let units = u16s(s);
    let mut out = le16(name_hash(&units)).to_vec();
    out.extend(le16(units.len() as u16));
    for u in &units {
        out.extend(le16(*u));
    }
    out.extend([0, 0]);
    out
}

/// Serializes a definition stream (`E::stream()`) the way a TEMP holds it: element starts carry
/// a dependency id, names are inline. Supports the tokens templates use.
pub fn wevt_binxml(toks: &[Tok]) -> Vec<u8> {
    let mut out = Vec::new();
    let mut elems: Vec<usize> = Vec::new();
    let mut attr_size_at: Option<usize> = None;
    let mut last_attr: Option<usize> = None;
    for t in toks {
        let start = out.len();
        match t {
            Tok::Frag => out.extend([0x0F, 0x01, 0x01, 0x00]),
            Tok::Eof => out.push(0x00),
            Tok::Open { name, dep, attrs } => {
                out.push(if *attrs { 0x41 } else { 0x01 });
                out.extend(le16(*dep));
                elems.push(out.len());
                out.extend(le32(0));
                out.extend(inline_name(&name_text(name)));
                if *attrs {
                    attr_size_at = Some(out.len());
                    out.extend(le32(0));
                }
                last_attr = None;
            }
            Tok::Attr(name) => {
                if let Some(prev) = last_attr {
                    out[prev] |= 0x40;
                }
                last_attr = Some(start);
                out.push(0x06);
                out.extend(inline_name(&name_text(name)));
            }
            Tok::CloseStart | Tok::CloseEmpty => {
                if let Some(at) = attr_size_at.take() {
                    let v = (start - at - 4) as u32;
                    out[at..at + 4].copy_from_slice(&le32(v));
                }
                last_attr = None;
                if matches!(t, Tok::CloseStart) {
                    out.push(0x02);
                } else {
                    out.push(0x03);
                    close(&mut out, &mut elems);
                }
            }
            Tok::End => {
                out.push(0x04);
                close(&mut out, &mut elems);
            }
            Tok::Text(units) => {
                out.extend([0x05, ty::STRING]);
                out.extend(le16(units.len() as u16));
                for u in units {
                    out.extend(le16(*u));
                }
            }
            Tok::Sub { idx, ty, opt } => {
                out.push(if *opt { 0x0E } else { 0x0D });
                out.extend(le16(*idx));
                out.push(*ty);
            }
            Tok::CharRef(u) => {
                out.push(0x08);
                out.extend(le16(*u));
            }
            Tok::CData(units) => {
                out.push(0x07);
                out.extend(le16(units.len() as u16));
                for u in units {
                    out.extend(le16(*u));
                }
            }
            Tok::Raw(bytes) => out.extend(bytes),
            other => panic!("token not used in WEVT fixtures: {other:?}"),
        }
    }
    out
}

fn close(out: &mut [u8], elems: &mut Vec<usize>) {
    if let Some(at) = elems.pop() {
        let v = (out.len() - at - 4) as u32;
        out[at..at + 4].copy_from_slice(&le32(v));
    }
}

fn name_text(n: &crate::writer::Name) -> String {
    match n {
        crate::writer::Name::S(u) | crate::writer::Name::Unlisted(u) => String::from_utf16_lossy(u),
        other => panic!("name not used in WEVT fixtures: {other:?}"),
    }
}

// ---------------------------------------------------------------------------------------------
// CRIM manifest: CRIM header, provider descriptors, WEVT providers, TTBL tables of TEMPs.

/// One template: its GUID and its BinXML (the bytes after the 40-byte TEMP header).
#[derive(Clone)]
pub struct Temp {
    pub guid: [u8; 16],
    pub binxml: Vec<u8>,
    /// Item descriptors (input type, output type, name); empty: none (items offset 0).
    pub items: Vec<(u8, u8, &'static str)>,
}

/// One provider: GUID and templates; `extra` adds an element of an unknown signature.
#[derive(Clone)]
pub struct Provider {
    pub guid: [u8; 16],
    pub temps: Vec<Temp>,
    pub extra: bool,
}

/// The TEMP at CRIM offset `at`: header, BinXML, then items (descriptors, then names).
fn temp_bytes(t: &Temp, at: usize) -> Vec<u8> {
    let mut body = t.binxml.clone();
    let mut items_at = 0u32;
    if !t.items.is_empty() {
        while !body.len().is_multiple_of(4) {
            body.push(0);
        }
        items_at = (at + 40 + body.len()) as u32;
        let names_at = items_at as usize + 20 * t.items.len();
        let mut names = Vec::new();
        let mut descs = Vec::new();
        for (input, output, name) in &t.items {
            descs.extend(le32(0));
            descs.push(*input);
            descs.push(*output);
            descs.extend(le16(0));
            descs.extend(le32(0));
            descs.extend(le16(1));
            descs.extend(le16(0));
            descs.extend(le32((names_at + names.len()) as u32));
            let units: Vec<u8> = u16s(name).iter().flat_map(|u| u.to_le_bytes()).collect();
            names.extend(le32((4 + units.len() + 2) as u32));
            names.extend(units);
            names.extend([0, 0]);
        }
        body.extend(descs);
        body.extend(names);
    }
    let mut out = b"TEMP".to_vec();
    out.extend(le32((40 + body.len()) as u32));
    out.extend(le32(t.items.len() as u32));
    out.extend(le32(t.items.len() as u32));
    out.extend(le32(items_at));
    out.extend(le32(1)); // event type
    out.extend(t.guid);
    out.extend(body);
    out
}

/// A CRIM blob (version 3.1) holding `providers` in order.
pub fn crim(providers: &[Provider]) -> Vec<u8> {
    let mut out = b"CRIM".to_vec();
    out.extend(le32(0)); // size, patched below
    out.extend(le16(3));
    out.extend(le16(1));
    out.extend(le32(providers.len() as u32));
    let table = out.len();
    out.resize(table + 20 * providers.len(), 0);
    for (i, p) in providers.iter().enumerate() {
        let at = out.len();
        let d = table + 20 * i;
        out[d..d + 16].copy_from_slice(&p.guid);
        out[d + 16..d + 20].copy_from_slice(&le32(at as u32));
        out.extend(provider_bytes(p, at));
    }
    let size = out.len() as u32;
    out[4..8].copy_from_slice(&le32(size));
    out
}

/// A WEVT provider at CRIM offset `at`: header, element descriptors, then the elements.
fn provider_bytes(p: &Provider, at: usize) -> Vec<u8> {
    let elements = if p.extra { 2 } else { 1 };
    let mut out = b"WEVT".to_vec();
    out.extend(le32(0)); // size, patched below
    out.extend(le32(u32::MAX)); // message identifier: none
    out.extend(le32(elements));
    out.extend(le32(0)); // unknown2 count
    let descs = out.len();
    out.resize(descs + 8 * elements as usize, 0);
    // TTBL
    let ttbl_at = at + out.len();
    out[descs..descs + 4].copy_from_slice(&le32(ttbl_at as u32));
    let mut ttbl = b"TTBL".to_vec();
    ttbl.extend(le32(0));
    ttbl.extend(le32(p.temps.len() as u32));
    for t in &p.temps {
        let b = temp_bytes(t, ttbl_at + ttbl.len());
        ttbl.extend(b);
    }
    let n = ttbl.len() as u32;
    ttbl[4..8].copy_from_slice(&le32(n));
    out.extend(ttbl);
    if p.extra {
        let x_at = at + out.len();
        out[descs + 8..descs + 12].copy_from_slice(&le32(x_at as u32));
        out.extend(b"PRVA");
        out.extend(le32(16));
        out.extend([0xAB; 8]);
    }
    let n = out.len() as u32;
    out[4..8].copy_from_slice(&le32(n));
    out
}

// ---------------------------------------------------------------------------------------------
// PE files: DOS stub, PE header, one `.rsrc` section holding the resource tree.

/// One resource under `WEVT_TEMPLATE`: its id (or name) and its languages' data.
pub struct Res {
    pub name: ResName,
    pub langs: Vec<(u32, Vec<u8>)>,
}

pub enum ResName {
    Id(u32),
    Name(&'static str),
}

/// The `.rsrc` section at RVA `rva`: root directory (`WEVT_TEMPLATE` named, plus an id entry
/// for type 16 when `version` is set), per-resource directories, language directories, data
/// entries, name strings, then the data.
pub fn rsrc(resources: &[Res], rva: u32, version: bool) -> Vec<u8> {
    // Layout pass: directories first, then data entries, strings, data.
    let dir = |n: usize| 16 + 8 * n;
    let mut size = dir(1 + version as usize); // root
    let type_dir = size;
    size += dir(resources.len());
    let mut lang_dirs = Vec::new();
    for r in resources {
        lang_dirs.push(size);
        size += dir(r.langs.len());
    }
    let version_dirs = size;
    if version {
        size += dir(1) + dir(1);
    }
    let mut entries = Vec::new();
    for r in resources {
        let mut v = Vec::new();
        for _ in &r.langs {
            v.push(size);
            size += 16;
        }
        entries.push(v);
    }
    let version_entry = size;
    if version {
        size += 16;
    }
    let mut strings = Vec::new();
    let mut push_str = |s: &str, size: &mut usize| {
        let at = *size;
        let units = u16s(s);
        let mut b = le16(units.len() as u16).to_vec();
        for u in &units {
            b.extend(le16(*u));
        }
        *size += b.len();
        strings.push(b);
        at
    };
    let wevt_name = push_str("WEVT_TEMPLATE", &mut size);
    let mut res_names = Vec::new();
    for r in resources {
        res_names.push(match r.name {
            ResName::Name(n) => Some(push_str(n, &mut size)),
            ResName::Id(_) => None,
        });
    }
    size = (size + 7) & !7;
    let mut data_at = Vec::new();
    for r in resources {
        let mut v = Vec::new();
        for (_, d) in &r.langs {
            v.push(size);
            size += (d.len() + 7) & !7;
        }
        data_at.push(v);
    }
    let version_data = size;
    if version {
        size += 8;
    }
    let mut out = vec![0u8; size];
    let put = |out: &mut Vec<u8>, at: usize, b: &[u8]| out[at..at + b.len()].copy_from_slice(b);
    let dir_header = |named: u16, ids: u16| {
        let mut h = vec![0u8; 12];
        h.extend(le16(named));
        h.extend(le16(ids));
        h
    };
    put(&mut out, 0, &dir_header(1, version as u16));
    put(&mut out, 16, &le32(0x8000_0000 | wevt_name as u32));
    put(&mut out, 20, &le32(0x8000_0000 | type_dir as u32));
    if version {
        put(&mut out, 24, &le32(16));
        put(&mut out, 28, &le32(0x8000_0000 | version_dirs as u32));
        put(&mut out, version_dirs, &dir_header(0, 1));
        put(&mut out, version_dirs + 16, &le32(1));
        put(
            &mut out,
            version_dirs + 20,
            &le32(0x8000_0000 | (version_dirs + 24) as u32),
        );
        put(&mut out, version_dirs + 24, &dir_header(0, 1));
        put(&mut out, version_dirs + 40, &le32(0x409));
        put(&mut out, version_dirs + 44, &le32(version_entry as u32));
        put(&mut out, version_entry, &le32(rva + version_data as u32));
        put(&mut out, version_entry + 4, &le32(8));
        put(&mut out, version_data, b"VS_VERS\0");
    }
    let named = resources
        .iter()
        .filter(|r| matches!(r.name, ResName::Name(_)))
        .count();
    put(
        &mut out,
        type_dir,
        &dir_header(named as u16, (resources.len() - named) as u16),
    );
    // Named entries come first in a resource directory.
    let mut order: Vec<usize> = (0..resources.len()).collect();
    order.sort_by_key(|&i| matches!(resources[i].name, ResName::Id(_)));
    for (slot, &i) in order.iter().enumerate() {
        let r = &resources[i];
        let e = type_dir + 16 + 8 * slot;
        let id = match r.name {
            ResName::Id(id) => id,
            ResName::Name(_) => 0x8000_0000 | res_names[i].unwrap() as u32,
        };
        put(&mut out, e, &le32(id));
        put(&mut out, e + 4, &le32(0x8000_0000 | lang_dirs[i] as u32));
        put(&mut out, lang_dirs[i], &dir_header(0, r.langs.len() as u16));
        for (k, (lang, data)) in r.langs.iter().enumerate() {
            let le = lang_dirs[i] + 16 + 8 * k;
            put(&mut out, le, &le32(*lang));
            put(&mut out, le + 4, &le32(entries[i][k] as u32));
            put(&mut out, entries[i][k], &le32(rva + data_at[i][k] as u32));
            put(&mut out, entries[i][k] + 4, &le32(data.len() as u32));
            put(&mut out, data_at[i][k], data);
        }
    }
    let mut at = wevt_name;
    for s in &strings {
        put(&mut out, at, s);
        at += s.len();
    }
    out
}

/// A PE image (`pe64`: PE32+, x64; else PE32, i386) with one `.rsrc` section holding `rsrc`
/// (built for RVA 0x1000), or none when `rsrc` is `None`.
pub fn pe(pe64: bool, rsrc: Option<&[u8]>) -> Vec<u8> {
    const FILE_ALIGN: usize = 0x200;
    let opt_size: u16 = if pe64 { 0xF0 } else { 0xE0 };
    let mut out = vec![0u8; 0x40];
    out[0..2].copy_from_slice(b"MZ");
    out[0x3C..0x40].copy_from_slice(&le32(0x40));
    out.extend(b"PE\0\0");
    // COFF header.
    out.extend(le16(if pe64 { 0x8664 } else { 0x014C }));
    out.extend(le16(rsrc.is_some() as u16));
    out.extend(le32(0x6543_2100)); // time stamp
    out.extend(le32(0));
    out.extend(le32(0));
    out.extend(le16(opt_size));
    out.extend(le16(if pe64 { 0x2022 } else { 0x2102 }));
    // Optional header.
    let opt = out.len();
    out.extend(le16(if pe64 { 0x20B } else { 0x10B }));
    out.extend([14, 0]); // linker version
    let raw = rsrc
        .map(|r| r.len().div_ceil(FILE_ALIGN) * FILE_ALIGN)
        .unwrap_or(0);
    out.extend(le32(0)); // size of code
    out.extend(le32(raw as u32)); // initialized data
    out.extend(le32(0));
    out.extend(le32(0)); // entry point
    out.extend(le32(0x1000)); // base of code
    if pe64 {
        out.extend(0x1_8000_0000u64.to_le_bytes());
    } else {
        out.extend(le32(0x1000)); // base of data
        out.extend(le32(0x1000_0000));
    }
    out.extend(le32(0x1000)); // section alignment
    out.extend(le32(FILE_ALIGN as u32));
    out.extend(le16(6));
    out.extend(le16(0));
    out.extend(le16(0));
    out.extend(le16(0));
    out.extend(le16(6));
    out.extend(le16(0));
    out.extend(le32(0));
    let vsize = rsrc.map(|r| r.len().div_ceil(0x1000) * 0x1000).unwrap_or(0);
    out.extend(le32((0x1000 + vsize) as u32)); // size of image
    out.extend(le32(FILE_ALIGN as u32)); // size of headers
    out.extend(le32(0)); // checksum
    out.extend(le16(2)); // subsystem
    out.extend(le16(0x0140));
    let sizes = [0x10_0000u64, 0x1000, 0x10_0000, 0x1000];
    for s in sizes {
        if pe64 {
            out.extend(s.to_le_bytes());
        } else {
            out.extend(le32(s as u32));
        }
    }
    out.extend(le32(0)); // loader flags
    out.extend(le32(16));
    for i in 0..16 {
        match (i, rsrc) {
            (2, Some(r)) => {
                out.extend(le32(0x1000));
                out.extend(le32(r.len() as u32));
            }
            _ => out.extend([0u8; 8]),
        }
    }
    assert_eq!(out.len() - opt, opt_size as usize);
    if let Some(r) = rsrc {
        out.extend(b".rsrc\0\0\0");
        out.extend(le32(r.len() as u32));
        out.extend(le32(0x1000));
        out.extend(le32(raw as u32));
        out.extend(le32(FILE_ALIGN as u32));
        out.extend([0u8; 12]);
        out.extend(le32(0x4000_0040));
    }
    out.resize(FILE_ALIGN, 0);
    if let Some(r) = rsrc {
        out.extend(r);
        out.resize(FILE_ALIGN + raw, 0);
    }
    out
}

// ---------------------------------------------------------------------------------------------
// `.wevtcache`: magic, version, entry count, then (kind, u64 length, payload) entries.

pub fn wevtcache(blobs: &[&[u8]]) -> Vec<u8> {
    let mut out = b"WEVTCACH".to_vec();
    out.extend(le32(1));
    out.extend(le32(blobs.len() as u32));
    for b in blobs {
        out.push(1);
        out.extend((b.len() as u64).to_le_bytes());
        out.extend(*b);
    }
    out
}

// ---------------------------------------------------------------------------------------------
// The providers and templates.

/// GUID of a template key (the log's instances use the same function).
fn g(key: &str) -> [u8; 16] {
    guid_of(key)
}

/// Template "wevt-logon": the shape of a security event (System, EventData with named Data).
fn logon_def() -> E {
    e("Event")
        .attr_s("xmlns", XMLNS)
        .kid(
            e("System")
                .kid(e("Provider").attr_opt("Name", 0, ty::STRING).empty())
                .kid(e("EventID").opt(1, ty::U16))
                .kid(e("Level").opt(2, ty::U8))
                .kid(
                    e("TimeCreated")
                        .attr_opt("SystemTime", 3, ty::FILETIME)
                        .empty(),
                )
                .kid(e("EventRecordID").opt(4, ty::U64))
                .kid(e("Computer").opt(5, ty::STRING)),
        )
        .kid(
            e("EventData")
                .kid(e("Data").attr_s("Name", "TargetUserSid").opt(6, ty::SID))
                .kid(
                    e("Data")
                        .attr_s("Name", "TargetUserName")
                        .opt(7, ty::STRING),
                )
                .kid(e("Data").attr_s("Name", "LogonType").opt(8, ty::U32))
                .kid(e("Data").attr_s("Name", "LogonGuid").opt(9, ty::GUID))
                .kid(e("Data").attr_s("Name", "Flags").opt(10, ty::HEX32)),
        )
}

/// Template "wevt-service": element with dependency ids, literal text, a char ref, an array.
fn service_def() -> E {
    e("Event")
        .attr_s("xmlns", XMLNS)
        .kid(
            e("System")
                .kid(e("Provider").attr_opt("Name", 0, ty::STRING).empty())
                .kid(e("EventID").opt(1, ty::U16))
                .kid(e("EventRecordID").opt(2, ty::U64)),
        )
        .kid(
            e("UserData").kid(
                e("ServiceChange")
                    .attr_s("xmlns", "http://example.invalid/service")
                    .kid(e("Name").opt(3, ty::STRING))
                    .kid(e("State").dep(4).text("state ").opt(4, ty::STRING))
                    .kid(e("Note").text("a").push(Tok::CharRef(0x26)).text("b"))
                    .kid(e("Args").opt(5, ty::STRING | ty::ARRAY))
                    .kid(e("Binary").opt(6, ty::BINARY)),
            ),
        )
}

/// Template "wevt-nested-data": the EventData of a nested instance.
fn nested_data_def() -> E {
    e("EventData")
        .kid(e("Data").attr_s("Name", "Path").opt(0, ty::STRING))
        .kid(e("Data").attr_s("Name", "Size").opt(1, ty::U64))
}

/// Template with the all-zero GUID: what a missing definition (zeros in the chunk) names.
fn zero_def() -> E {
    e("Event")
        .attr_s("xmlns", XMLNS)
        .kid(e("System").kid(e("EventRecordID").opt(0, ty::U64)))
        .kid(e("EventData").kid(e("Data").opt(1, ty::STRING)))
}

fn temp_of(guid: [u8; 16], def: E) -> Temp {
    Temp {
        guid,
        binxml: wevt_binxml(&def.stream()),
        items: Vec::new(),
    }
}

/// A TEMP whose BinXML is damaged: a name whose stored hash is wrong.
fn bad_hash_temp() -> Temp {
    let mut b = wevt_binxml(&zero_def().stream());
    // First inline name starts after Frag (4), token (1), dep (2), size (4): its hash.
    b[11] ^= 0x55;
    Temp {
        guid: g("wevt-bad-hash"),
        binxml: b,
        items: Vec::new(),
    }
}

/// Manifest A (the 64-bit PE): two providers.
fn manifest_a() -> Vec<u8> {
    let mut logon = temp_of(g("wevt-logon"), logon_def());
    logon.items = vec![
        (0x01, 0x01, "ProviderName"),
        (0x06, 0x04, "EventID"),
        (0x04, 0x01, "Level"),
    ];
    crim(&[
        Provider {
            guid: g("provider-security"),
            temps: vec![logon, temp_of(g("wevt-nested-data"), nested_data_def())],
            extra: true,
        },
        Provider {
            guid: g("provider-broken"),
            temps: vec![bad_hash_temp()],
            extra: false,
        },
    ])
}

/// Manifest B (the 32-bit PE): one provider, the service and zero-GUID templates, and a
/// second copy of "wevt-logon" with other text (the first one loaded wins).
fn manifest_b() -> Vec<u8> {
    let other_logon = e("Event").kid(e("Shadowed").text("manifest B's copy"));
    crim(&[Provider {
        guid: g("provider-service"),
        temps: vec![
            temp_of(g("wevt-service"), service_def()),
            temp_of([0; 16], zero_def()),
            temp_of(g("wevt-logon"), other_logon),
        ],
        extra: false,
    }])
}

// ---------------------------------------------------------------------------------------------
// The logs.

fn time_of(id: u64) -> u64 {
    BASE_TIME + id * 10_000_000
}

/// An instance of `key` whose embedded definition is broken (first body byte 0xFF) or, with
/// `def_ref`, not written at all.
fn broken(key: &str, values: Vec<Val>, def_ref: DefRef) -> Vec<Tok> {
    vec![
        Tok::Frag,
        Tok::Instance(Box::new(Inst {
            key: key.to_string(),
            def: vec![Tok::Raw(vec![0xFF, 0x01, 0x02])],
            values,
            def_ref,
        })),
        Tok::Eof,
    ]
}

fn logon_values(id: u64, user: &str) -> Vec<Val> {
    vec![
        v_str("Microsoft-Windows-Security-Auditing"),
        v_u16(4624),
        v_u8(0),
        v_filetime(time_of(id)),
        v_u64(id),
        v_str("host.example"),
        v_sid(1, 5, &[21, 1000, 2000, 3000, 1001]),
        v_str(user),
        v_u32(2 + id as u32 % 3),
        v_guid(guid_of(user)),
        v_hex32(0x10 * id as u32),
    ]
}

fn service_values(id: u64, state: Option<&str>) -> Vec<Val> {
    vec![
        v_str("Service Control Manager"),
        v_u16(7040),
        v_u64(id),
        v_str("Spooler <print>"),
        state.map(v_str).unwrap_or_else(v_null),
        v_str_array(&["--auto", "--quiet \"x\""]),
        v_bin(&[0xDE, 0xAD, 0xBE, 0xEF]),
    ]
}

/// A well-formed record of its own template (the cache is never asked).
fn plain(id: u64) -> Vec<Tok> {
    let def = e("Event")
        .attr_s("xmlns", XMLNS)
        .kid(e("System").kid(e("EventRecordID").opt(0, ty::U64)))
        .kid(e("EventData").kid(e("Data").opt(1, ty::STRING)));
    inst_record(
        "wevt-plain",
        def,
        vec![v_u64(id), v_str("embedded template")],
    )
}

/// An outer template that is fine, whose EventData value is an instance with a broken
/// definition ("wevt-nested-data" in the cache).
fn nested(id: u64) -> Vec<Tok> {
    let def = e("Event")
        .attr_s("xmlns", XMLNS)
        .kid(e("System").kid(e("EventRecordID").opt(0, ty::U64)))
        .opt(1, ty::BINXML);
    let inner = broken(
        "wevt-nested-data",
        vec![v_str("C:\\Windows\\notepad.exe"), v_u64(4096 * id)],
        DefRef::Auto,
    );
    inst_record("wevt-outer", def, vec![v_u64(id), Val::Xml(inner)])
}

/// The records of `events.evtx`, in order, as (id, tokens, what it exercises).
fn events() -> Vec<(u64, Vec<Tok>)> {
    vec![
        (1, plain(1)),
        (
            2,
            broken("wevt-logon", logon_values(2, "alice"), DefRef::Auto),
        ),
        // The same broken definition again, by offset: the cached fallback.
        (
            3,
            broken("wevt-logon", logon_values(3, "bob"), DefRef::Auto),
        ),
        (
            4,
            broken(
                "wevt-service",
                service_values(4, Some("disabled")),
                DefRef::Auto,
            ),
        ),
        // An optional value NULL: the element with dependency id 4 is dropped.
        (
            5,
            broken("wevt-service", service_values(5, None), DefRef::Auto),
        ),
        // Not in any cache: the record fails with or without a cache.
        (6, broken("wevt-unknown", vec![v_u64(6)], DefRef::Auto)),
        // The cache's copy is damaged: the record fails.
        (
            7,
            broken("wevt-bad-hash", vec![v_u64(7), v_str("x")], DefRef::Auto),
        ),
        // No definition: the offset points at zeros (GUID 0) in the chunk's free space.
        (
            8,
            broken(
                "wevt-missing",
                vec![v_u64(8), v_str("from the zero GUID")],
                DefRef::Offset(0xF000),
            ),
        ),
        (9, nested(9)),
        (10, plain(10)),
    ]
}

fn events_log() -> Vec<u8> {
    let mut c = Chunk::new();
    for (id, toks) in events() {
        c.record(id, time_of(id), &toks).unwrap();
    }
    file_of(&[c.finish(&ChunkOverrides::default())])
}

/// A chunk with live records 1-2 and, in its slack, stale records 20-21 whose definitions are
/// broken (only `--recover-records` with a cache renders them).
fn carved_log() -> Vec<u8> {
    let mut c = Chunk::new();
    c.record(1, time_of(1), &plain(1)).unwrap();
    c.record(
        2,
        time_of(2),
        &broken("wevt-logon", logon_values(2, "carol"), DefRef::Auto),
    )
    .unwrap();
    let free = c.pos();
    let last = c.records.last().unwrap().1;
    c.record(
        20,
        time_of(20),
        &broken("wevt-service", service_values(20, Some("on")), DefRef::Auto),
    )
    .unwrap();
    c.record(21, time_of(21), &nested(21)).unwrap();
    let chunk = c.finish(&ChunkOverrides {
        first_id: Some(1),
        last_id: Some(2),
        last_record_offset: Some(last),
        free_space: Some(free),
        flags: None,
    });
    file_of(&[chunk])
}

/// Records whose definitions are intact, with the cache's template GUIDs (same keys): what
/// `dump-template-instances` prints and `apply-wevt-cache --evtx` takes its values from.
fn instances_log() -> Vec<u8> {
    let outer = |id: u64| {
        let def = e("Event")
            .attr_s("xmlns", XMLNS)
            .kid(e("System").kid(e("EventRecordID").opt(0, ty::U64)))
            .opt(1, ty::BINXML);
        let data = vec![v_str("D:\\data\\\"quoted\".bin"), v_u64(u64::MAX - id)];
        inst_record(
            "wevt-outer",
            def,
            vec![
                v_u64(id),
                v_inst("wevt-nested-data", nested_data_def(), data),
            ],
        )
    };
    let mut c = Chunk::new();
    let recs: Vec<(u64, Vec<Tok>)> = vec![
        (
            1,
            inst_record("wevt-logon", logon_def(), logon_values(1, "dave")),
        ),
        (
            2,
            inst_record(
                "wevt-service",
                service_def(),
                service_values(2, Some("auto")),
            ),
        ),
        (
            3,
            inst_record("wevt-logon", logon_def(), logon_values(3, "eve \u{e9}\t")),
        ),
        (4, outer(4)),
        (
            5,
            inst_record("wevt-service", service_def(), service_values(5, None)),
        ),
        (7, outer(7)),
    ];
    for (id, toks) in recs {
        c.record(id, time_of(id) + 1_234_567, &toks).unwrap();
    }
    file_of(&[c.finish(&ChunkOverrides::default())])
}

// ---------------------------------------------------------------------------------------------
// Damaged PE files and caches.

fn patch(mut b: Vec<u8>, at: usize, v: &[u8]) -> Vec<u8> {
    b[at..at + v.len()].copy_from_slice(v);
    b
}

pub fn all() -> Vec<WevtFixture> {
    let a = manifest_a();
    let b = manifest_b();
    let rsrc_a = rsrc(
        &[Res {
            name: ResName::Id(1),
            langs: vec![(0x409, a.clone())],
        }],
        0x1000,
        true,
    );
    let rsrc_b = rsrc(
        &[
            Res {
                name: ResName::Id(1),
                langs: vec![(0x409, b.clone()), (0x407, b.clone())],
            },
            Res {
                name: ResName::Name("EXTRA"),
                langs: vec![(0, a.clone())],
            },
        ],
        0x1000,
        false,
    );
    let pe_a = pe(true, Some(&rsrc_a));
    let pe_b = pe(false, Some(&rsrc_b));
    let mut out = Vec::new();
    let mut add = |name: &str, exercises: &'static str, bytes: Vec<u8>| {
        out.push(WevtFixture {
            name: name.to_string(),
            exercises,
            bytes,
        })
    };
    add(
        "events.evtx",
        "records whose definitions are broken, missing, nested, cached",
        events_log(),
    );
    add(
        "instances.evtx",
        "intact definitions with the cache's GUIDs, many value types",
        instances_log(),
    );
    add(
        "carved.evtx",
        "stale records with broken definitions in chunk slack",
        carved_log(),
    );
    add(
        "providers64.dll",
        "PE32+: WEVT_TEMPLATE/1/0x409 (two providers) and a VERSION resource",
        pe_a.clone(),
    );
    add(
        "providers32.dll",
        "PE32: WEVT_TEMPLATE/1 in two languages and WEVT_TEMPLATE/EXTRA",
        pe_b.clone(),
    );
    add(
        "no-resources.exe",
        "PE without a resource directory: nothing to extract",
        pe(true, None),
    );
    add(
        "templates.wevtcache",
        "both manifests, A first",
        wevtcache(&[&a, &b]),
    );
    add(
        "templates-b-first.wevtcache",
        "both manifests, B first (its wevt-logon wins)",
        wevtcache(&[&b, &a]),
    );
    add("empty.wevtcache", "no entries", wevtcache(&[]));
    let good = wevtcache(&[&a, &b]);
    // Each damaged file with the offset its error line must name (the writer's layout: the
    // header, then entries of a kind byte, a u64 length and the blob).
    let mut offsets: Vec<(String, Option<usize>)> = Vec::new();
    let mut damaged = |name: &str, exercises: &'static str, bytes: Vec<u8>, at: usize| {
        offsets.push((name.to_string(), Some(at)));
        add(name, exercises, bytes);
    };
    let (entry_a, blob_a) = (16, 16 + 9);
    let entry_b = blob_a + a.len();
    damaged(
        "damaged-magic.wevtcache",
        "bad magic",
        patch(good.clone(), 0, b"WEVTCACX"),
        0,
    );
    damaged(
        "damaged-version.wevtcache",
        "version 2",
        patch(good.clone(), 8, &le32(2)),
        8,
    );
    damaged(
        "damaged-short.wevtcache",
        "10 bytes: the header cannot be read",
        good[..10].to_vec(),
        0,
    );
    damaged(
        "damaged-kind.wevtcache",
        "entry kind 7",
        patch(good.clone(), 16, &[7]),
        entry_a,
    );
    damaged(
        "damaged-length.wevtcache",
        "an entry longer than the file",
        patch(good.clone(), 17, &0xFFFF_FFF0u64.to_le_bytes()),
        entry_a,
    );
    // The third entry's header would start where the file ends.
    damaged(
        "damaged-count.wevtcache",
        "an entry count past the entries",
        patch(good.clone(), 12, &le32(3)),
        good.len(),
    );
    damaged(
        "damaged-crim-magic.wevtcache",
        "a blob that is not CRIM",
        patch(good.clone(), 25, b"CRIX"),
        blob_a,
    );
    // The first TTBL's count: the reader looks for a tenth TEMP where its table ends.
    let ttbl = find(&a, b"TTBL");
    let ttbl_end = ttbl + u32::from_le_bytes(a[ttbl + 4..ttbl + 8].try_into().unwrap()) as usize;
    damaged(
        "damaged-ttbl-count.wevtcache",
        "TTBL count past its templates",
        patch(good.clone(), blob_a + ttbl + 8, &le32(9)),
        blob_a + ttbl_end,
    );
    let temp = find(&a, b"TEMP");
    damaged(
        "damaged-temp-size.wevtcache",
        "TEMP size past its TTBL",
        patch(good.clone(), blob_a + temp + 4, &le32(0xFFFF)),
        blob_a + temp,
    );
    damaged(
        "damaged-truncated.wevtcache",
        "cut inside the second blob",
        good[..good.len() - 40].to_vec(),
        entry_b,
    );
    // Damaged PE files: goblin refuses the headers as a whole (offset 0), or a pointer of the
    // resource tree leads nowhere (the pointer, or the data entry it reaches).
    damaged(
        "damaged-mz.dll",
        "no MZ signature",
        patch(pe_a.clone(), 0, b"XY"),
        0,
    );
    damaged(
        "damaged-short.dll",
        "cut inside the PE header",
        pe_a[..0x60].to_vec(),
        0,
    );
    let rsrc_at = 0x200;
    let data_entry = rsrc_at + find(&rsrc_a, &le32(0x1000 + find(&rsrc_a, b"CRIM") as u32));
    damaged(
        "damaged-data-rva.dll",
        "resource data RVA outside every section",
        patch(pe_a.clone(), data_entry, &le32(0x9000)),
        data_entry,
    );
    damaged(
        "damaged-data-size.dll",
        "resource data size past the file",
        patch(pe_a.clone(), data_entry + 4, &le32(0x10_0000)),
        data_entry,
    );
    damaged(
        "damaged-dir.dll",
        "a resource subdirectory offset past the section",
        patch(pe_a.clone(), rsrc_at + 20, &le32(0x8000_F000)),
        rsrc_at + 20,
    );
    add(
        "damaged-crim.dll",
        "a well-formed PE whose WEVT_TEMPLATE is not CRIM",
        patch(pe_b, 0x200 + find(&rsrc_b, b"CRIM"), b"MIRC"),
    );
    add(
        crate::mta_fixtures::DAMAGE_TABLE,
        "where each damaged file's error line points (the CLI tests read it)",
        crate::mta_fixtures::damage_table(&offsets),
    );
    out
}

/// Offset of the first occurrence of `needle` (the fixture builder knows it is there).
fn find(hay: &[u8], needle: &[u8]) -> usize {
    hay.windows(needle.len())
        .position(|w| w == needle)
        .expect("needle in fixture")
}
