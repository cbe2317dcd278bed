//! The multi-byte ANSI code pages: decode tables for the Zig engine's `--ansi-codec`, and the
//! `ansi-code-pages` fixture that holds text in each of them.
//!
//! The tables are the WHATWG indexes as the reference's decoder (encoding_rs) applies them,
//! read back from that decoder: one entry per pointer, the code point its byte sequence
//! decodes to, 0 where the sequence is an error. `zig/src/code_pages/*.bin` holds them
//! (little-endian u16, or u32 for Big5, whose index reaches past the BMP); a test here fails
//! when those files are stale.

use crate::dsl::*;
use crate::fixtures::{typed_record, Fixture, Out};
use crate::log::Log;
use crate::writer::ty;
use encoding_rs::{Encoding, BIG5, EUC_JP, EUC_KR, GB18030, GBK, SHIFT_JIS, UTF_8};

/// One table file: its name in `zig/src/code_pages/`, bytes per entry, entries.
pub struct Table {
    pub file: &'static str,
    pub width: usize,
    pub entries: Vec<u32>,
}

impl Table {
    pub fn bytes(&self) -> Vec<u8> {
        let mut out = Vec::with_capacity(self.entries.len() * self.width);
        for &e in &self.entries {
            match self.width {
                2 => out.extend_from_slice(&u16::try_from(e).expect("BMP table").to_le_bytes()),
                4 => out.extend_from_slice(&e.to_le_bytes()),
                _ => unreachable!("tables are u16 or u32"),
            }
        }
        out
    }
}

/// Big5 pointers whose sequence decodes to two code points (the Encoding Standard's four
/// special cases): their entry is 0 and the Zig decoder writes the pair itself.
pub const BIG5_PAIRS: [(usize, [char; 2]); 4] = [
    (1133, ['\u{CA}', '\u{304}']),
    (1135, ['\u{CA}', '\u{30C}']),
    (1164, ['\u{EA}', '\u{304}']),
    (1166, ['\u{EA}', '\u{30C}']),
];

/// Strict decoding, as the reference does (`None` on any error).
fn decode(enc: &'static Encoding, bytes: &[u8]) -> Option<Vec<char>> {
    enc.decode_without_bom_handling_and_without_replacement(bytes)
        .map(|s| s.chars().collect())
}

/// The one code point `bytes` decode to, or 0 (an error, or not exactly one code point).
fn one(enc: &'static Encoding, bytes: &[u8]) -> u32 {
    match decode(enc, bytes).as_deref() {
        Some([c]) => *c as u32,
        _ => 0,
    }
}

fn trail_offset(trail: u8, low: u8, high: u8) -> usize {
    usize::from(if trail < 0x7F { low } else { high })
}

/// Shift_JIS two-byte pointers: 0..11280 (jis0208 plus the ranges Shift_JIS adds).
fn jis0208() -> Vec<u32> {
    let mut t = vec![0; 11280];
    for lead in (0x81..=0x9Fu8).chain(0xE0..=0xFC) {
        let lead_offset = usize::from(if lead < 0xA0 { 0x81u8 } else { 0xC1 });
        for trail in (0x40..=0x7Eu8).chain(0x80..=0xFC) {
            let p = (usize::from(lead) - lead_offset) * 188 + usize::from(trail)
                - trail_offset(trail, 0x40, 0x41);
            t[p] = one(SHIFT_JIS, &[lead, trail]);
        }
    }
    // EUC-JP reads the same index for its two-byte sequences.
    for lead in 0xA1..=0xFEu8 {
        for trail in 0xA1..=0xFEu8 {
            let p = usize::from(lead - 0xA1) * 94 + usize::from(trail - 0xA1);
            assert_eq!(one(EUC_JP, &[lead, trail]), t[p], "jis0208 pointer {p}");
        }
    }
    t
}

/// EUC-JP's 0x8F sequences: index jis0212.
fn jis0212() -> Vec<u32> {
    let mut t = vec![0; 94 * 94];
    for lead in 0xA1..=0xFEu8 {
        for trail in 0xA1..=0xFEu8 {
            t[usize::from(lead - 0xA1) * 94 + usize::from(trail - 0xA1)] =
                one(EUC_JP, &[0x8F, lead, trail]);
        }
    }
    t
}

fn euc_kr() -> Vec<u32> {
    let mut t = vec![0; 126 * 190];
    for lead in 0x81..=0xFEu8 {
        for trail in 0x41..=0xFEu8 {
            t[usize::from(lead - 0x81) * 190 + usize::from(trail - 0x41)] =
                one(EUC_KR, &[lead, trail]);
        }
    }
    t
}

/// gb18030's two-byte index (GBK decodes with the same decoder).
fn gb18030() -> Vec<u32> {
    let mut t = vec![0; 126 * 190];
    for lead in 0x81..=0xFEu8 {
        for trail in (0x40..=0x7Eu8).chain(0x80..=0xFE) {
            let p = usize::from(lead - 0x81) * 190 + usize::from(trail)
                - trail_offset(trail, 0x40, 0x41);
            t[p] = one(GB18030, &[lead, trail]);
            assert_eq!(one(GBK, &[lead, trail]), t[p], "gbk pointer {p}");
        }
    }
    t
}

/// The four bytes of gb18030 four-byte pointer `p`.
pub fn gb18030_four(p: u32) -> [u8; 4] {
    [
        (p / 12600 + 0x81) as u8,
        (p / 1260 % 10 + 0x30) as u8,
        (p / 10 % 126 + 0x81) as u8,
        (p % 10 + 0x30) as u8,
    ]
}

/// gb18030 four-byte pointers below 39420 (the BMP) as ranges: (first pointer, its code point)
/// pairs, each range running on by one code point per pointer. Above 39420 the decoder
/// computes (checked here): 189000..=1237575 are U+10000 onwards, the rest are errors.
fn gb18030_ranges() -> Vec<u32> {
    let mut pairs = Vec::new();
    let mut next = None;
    for p in 0..39420u32 {
        let cp = one(GB18030, &gb18030_four(p));
        assert_ne!(cp, 0, "gb18030 four-byte pointer {p}");
        if next != Some(cp) {
            pairs.extend_from_slice(&[p, cp]);
        }
        next = Some(cp + 1);
    }
    for p in (39420..189000u32).step_by(97).chain([188999]) {
        assert_eq!(one(GB18030, &gb18030_four(p)), 0, "pointer {p}");
    }
    for p in (189000..=1237575u32).step_by(101).chain([1237575]) {
        assert_eq!(one(GB18030, &gb18030_four(p)), 0x10000 + p - 189000);
    }
    pairs
}

fn big5() -> Vec<u32> {
    let mut t = vec![0; 126 * 157];
    for lead in 0x81..=0xFEu8 {
        for trail in (0x40..=0x7Eu8).chain(0xA1..=0xFE) {
            let p = usize::from(lead - 0x81) * 157 + usize::from(trail)
                - trail_offset(trail, 0x40, 0x62);
            match decode(BIG5, &[lead, trail]).as_deref() {
                Some([c]) => t[p] = *c as u32,
                Some(pair @ [_, _]) => {
                    let special = BIG5_PAIRS.iter().find(|(q, _)| *q == p);
                    assert_eq!(special.map(|s| &s.1[..]), Some(pair), "big5 pointer {p}");
                }
                _ => {}
            }
        }
    }
    t
}

/// Every table file, in a fixed order.
pub fn tables() -> Vec<Table> {
    vec![
        Table {
            file: "jis0208.bin",
            width: 2,
            entries: jis0208(),
        },
        Table {
            file: "jis0212.bin",
            width: 2,
            entries: jis0212(),
        },
        Table {
            file: "euc_kr.bin",
            width: 2,
            entries: euc_kr(),
        },
        Table {
            file: "gb18030.bin",
            width: 2,
            entries: gb18030(),
        },
        Table {
            file: "gb18030_ranges.bin",
            width: 4,
            entries: gb18030_ranges(),
        },
        Table {
            file: "big5.bin",
            width: 4,
            entries: big5(),
        },
    ]
}

/// Writes the tables into `dir`.
pub fn write_tables(dir: &std::path::Path) -> std::io::Result<()> {
    std::fs::create_dir_all(dir)?;
    for t in tables() {
        std::fs::write(dir.join(t.file), t.bytes())?;
    }
    Ok(())
}

fn encoded(enc: &'static Encoding, s: &str) -> Vec<u8> {
    let (bytes, _, unmappable) = enc.encode(s);
    assert!(!unmappable, "{s} in {}", enc.name());
    bytes.into_owned()
}

/// AnsiString values in every multi-byte code page: each record is text in one of them (valid
/// there, mostly invalid or other text in the rest), so every `--ansi-codec` run exercises both
/// decoding and the failure of a record.
pub fn fixture() -> Fixture {
    let mut log = Log::new();
    let texts: [(&str, &'static Encoding, &str); 7] = [
        ("Utf8", UTF_8, "é€ 😀 ok"),
        ("Sjis", SHIFT_JIS, "日本語 ｶﾀｶﾅ ①№"),
        ("EucJp", EUC_JP, "日本語 ｶﾀｶﾅ 鍈"),
        ("Gbk", GBK, "中文字符 €"),
        ("Gb18030", GB18030, "中文 é\u{80} 😀"),
        ("Big5", BIG5, "繁體中文"),
        ("EucKr", EUC_KR, "한국어 갂"),
    ];
    for (name, enc, text) in texts {
        let bytes = encoded(enc, text);
        // The same text with a NUL after every byte (NULs are removed before decoding, so a
        // sequence split by them decodes whole), and as a two-item array.
        let spaced: Vec<u8> = bytes.iter().flat_map(|&b| [b, 0]).collect();
        let mut array = bytes.clone();
        array.push(0);
        array.extend_from_slice(b"plain\0");
        log.rec(typed_record(
            name,
            &[
                ("Text", v_ansi(&bytes)),
                ("Spaced", v_ansi(&spaced)),
                ("Items", v_array(ty::ANSI, &[array])),
            ],
            false,
        ));
    }
    // Big5's two-code-point pointers (1133: 0x88 0x62), a lone 0x80 (the euro sign in
    // gb18030, U+0080 in Shift_JIS, an error elsewhere) and ASCII, one record each.
    let specials: [(&str, &[u8]); 3] = [
        ("Big5Pair", b"\x88\x62\x88\x64\x88\xa3\x88\xa5"),
        ("Euro", b"\x80"),
        ("Ascii", b"plain ascii"),
    ];
    for (name, bytes) in specials {
        log.rec(typed_record(name, &[(name, v_ansi(bytes))], false));
    }
    // Sequences cut short or out of range: errors in the code pages that read them.
    let broken: [(&str, &[u8]); 6] = [
        ("LeadAtEnd", b"ok\x82"),
        ("BadTrail", b"\x81\x20x"),
        ("Ff", b"\xff"),
        ("Utf8Overlong", b"\xc0\xaf"),
        ("Gb4Cut", b"\x81\x30\x81"),
        ("Sjis80A0", b"\x80\xa0"),
    ];
    for (name, bytes) in broken {
        log.rec(typed_record(name, &[("Bytes", v_ansi(bytes))], false));
    }
    // An ANSI value no substitution uses: the reference decodes every value of an instance,
    // so a sequence invalid in the code page fails the record all the same.
    log.rec(inst_record(
        "unused-ansi",
        e("Event").kid(e("Used").push(sub(0, ty::STRING))),
        vec![v_str("shown"), v_ansi(b"ok\x82")],
    ));
    Fixture {
        dir: "synthetic",
        name: "ansi-code-pages",
        exercises: "AnsiString values and arrays in every ASCII-compatible multi-byte code page \
             (UTF-8, Shift_JIS, EUC-JP, GBK, gb18030 with four-byte sequences, Big5 with its \
             two-code-point pointers, EUC-KR), also with a NUL after every byte, plus cut and \
             out-of-range sequences; parity also runs it under each of those `--ansi-codec` labels \
             (compare/tool/src/parity/modes.rs, CODEC_MODES)."
            .to_string(),
        expect: vec![(Out::Jsonl, "\"Ascii\":\"plain ascii\"".to_string())],
        expect_absent: Vec::new(),
        differs: None,
        twin: None,
        bytes: log.into_file(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::path::PathBuf;

    #[test]
    fn zig_tables_are_current() {
        let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../zig/src/code_pages");
        for t in tables() {
            let committed = std::fs::read(dir.join(t.file)).unwrap_or_default();
            assert!(
                committed == t.bytes(),
                "zig/src/code_pages/{} is stale: run `evtx-fixture-gen code-pages --out \
                    zig/src/code_pages`",
                t.file
            );
        }
    }

    #[test]
    fn tables_decode_known_characters() {
        let t = tables();
        let find = |f: &str| t.iter().find(|x| x.file == f).unwrap();
        // Shift_JIS 0x93FA is 日 (U+65E5): pointer (0x93 - 0x81) * 188 + 0xFA - 0x41.
        assert_eq!(find("jis0208.bin").entries[18 * 188 + 0xB9], 0x65E5);
        // EUC-KR 0xB0A1 is 가 (U+AC00).
        assert_eq!(find("euc_kr.bin").entries[0x2F * 190 + 0x60], 0xAC00);
        // gb18030 0xD6D0 is 中 (U+4E2D).
        assert_eq!(find("gb18030.bin").entries[0x55 * 190 + 0x8F], 0x4E2D);
        // The first four-byte range: pointer 0 is U+0080.
        assert_eq!(&find("gb18030_ranges.bin").entries[..2], &[0, 0x80]);
    }
}
