//! The EVTX writer: file header, chunks (string and template tables, CRCs), records and BinXML.
//!
//! Every offset stored inside BinXML is a chunk offset, so BinXML is serialized directly into the
//! chunk buffer at its final position: a name or template definition that has not been written in
//! this chunk yet is written inline (offset = position right after the offset field), later uses
//! reference it by offset — the way Windows writes logs.

use std::collections::HashMap;

pub const CHUNK_SIZE: usize = 65536;
pub const CHUNK_HEADER_SIZE: usize = 512;
pub const FILE_HEADER_BLOCK: usize = 4096;

/// Value type codes (contract 7.1).
pub mod ty {
    pub const NULL: u8 = 0x00;
    pub const STRING: u8 = 0x01;
    pub const ANSI: u8 = 0x02;
    pub const I8: u8 = 0x03;
    pub const U8: u8 = 0x04;
    pub const I16: u8 = 0x05;
    pub const U16: u8 = 0x06;
    pub const I32: u8 = 0x07;
    pub const U32: u8 = 0x08;
    pub const I64: u8 = 0x09;
    pub const U64: u8 = 0x0A;
    pub const R32: u8 = 0x0B;
    pub const R64: u8 = 0x0C;
    pub const BOOL: u8 = 0x0D;
    pub const BINARY: u8 = 0x0E;
    pub const GUID: u8 = 0x0F;
    pub const SIZET: u8 = 0x10;
    pub const FILETIME: u8 = 0x11;
    pub const SYSTIME: u8 = 0x12;
    pub const SID: u8 = 0x13;
    pub const HEX32: u8 = 0x14;
    pub const HEX64: u8 = 0x15;
    pub const EVT_HANDLE: u8 = 0x20;
    pub const BINXML: u8 = 0x21;
    pub const EVT_XML: u8 = 0x23;
    pub const ARRAY: u8 = 0x80;
}

/// IEEE CRC-32 (zlib's crc32).
pub fn crc32(bytes: &[u8]) -> u32 {
    crc32fast::hash(bytes)
}

/// The name hash of the string table (contract 4.3): `h = h * 65599 + unit`, low 16 bits stored.
pub fn name_hash(units: &[u16]) -> u16 {
    let mut h: u32 = 0;
    for &u in units {
        h = h.wrapping_mul(65599).wrapping_add(u as u32);
    }
    (h & 0xFFFF) as u16
}

/// UTF-16 code units of a Rust string.
pub fn u16s(s: &str) -> Vec<u16> {
    s.encode_utf16().collect()
}

/// A name reference (contract 6.3).
#[derive(Clone, Debug)]
pub enum Name {
    /// A normal name: inline the first time it is used in the chunk, then by offset. Registered
    /// in the chunk's string table.
    S(Vec<u16>),
    /// Always inline and never registered in the string table (e.g. names with lone surrogates).
    Unlisted(Vec<u16>),
    /// A raw chunk offset (damaged files).
    Offset(u32),
    /// The offset of the offset field itself (damaged files).
    SelfRef,
}

impl From<&str> for Name {
    fn from(s: &str) -> Name {
        Name::S(u16s(s))
    }
}

/// How a template instance names its definition.
#[derive(Clone, Debug)]
pub enum DefRef {
    /// Inline the first time the key is used in the chunk, then by offset.
    Auto,
    /// A raw chunk offset (damaged files); the definition is not written.
    Offset(u32),
    /// The offset of the offset field itself (damaged files); the definition is not written.
    SelfRef,
    /// Inline (never registered for reuse) with this value in the `data_size` field (damaged).
    InlineSize(u32),
}

/// A BinXML token (contract 6.1), or raw bytes.
#[derive(Clone, Debug)]
pub enum Tok {
    /// `0F 01 01 00`
    Frag,
    Eof,
    /// Open start element; `dep` is written only inside template definitions.
    Open {
        name: Name,
        dep: u16,
        attrs: bool,
    },
    Attr(Name),
    CloseStart,
    CloseEmpty,
    End,
    /// Value text of type String (u16 count + units).
    Text(Vec<u16>),
    /// Value text of any type: the type byte and the payload as given.
    ValueText(u8, Vec<u8>),
    /// Value text of type BinXml: u16 length + a nested stream serialized in place.
    ValueXml(Vec<Tok>),
    Sub {
        idx: u16,
        ty: u8,
        opt: bool,
    },
    CData(Vec<u16>),
    CharRef(u16),
    EntRef(Name),
    PiTarget(Name),
    PiData(Vec<u16>),
    Instance(Box<Inst>),
    /// The inner token with bit 0x40 set on its token byte.
    More(Box<Tok>),
    Raw(Vec<u8>),
}

/// A template instance.
#[derive(Clone, Debug)]
pub struct Inst {
    /// Identifies the definition within a chunk (same key = same definition).
    pub key: String,
    pub def: Vec<Tok>,
    pub values: Vec<Val>,
    pub def_ref: DefRef,
}

/// A substitution value.
#[derive(Clone, Debug)]
pub enum Val {
    /// Type, bytes, and a declared size (None = the byte length).
    B {
        ty: u8,
        bytes: Vec<u8>,
        size: Option<u16>,
    },
    /// A BinXml value (type 0x21) whose nested stream is serialized in place.
    Xml(Vec<Tok>),
}

/// Deterministic 16-byte GUID of a template key.
pub fn guid_of(key: &str) -> [u8; 16] {
    let mut h: u64 = 0xcbf29ce484222325;
    let mut out = [0u8; 16];
    for round in 0..2u64 {
        for b in key.bytes().chain(std::iter::once(round as u8)) {
            h ^= b as u64;
            h = h.wrapping_mul(0x100000001b3);
        }
        out[(round as usize) * 8..(round as usize) * 8 + 8].copy_from_slice(&h.to_le_bytes());
    }
    out
}

/// One chunk under construction. Bytes `0..512` are the header (filled by [`Chunk::finish`]).
#[derive(Clone)]
pub struct Chunk {
    pub data: Vec<u8>,
    names: HashMap<Vec<u16>, u32>,
    /// (offset, hash) of every name entry registered in the string table, in write order.
    name_entries: Vec<(u32, u16)>,
    templates: HashMap<String, u32>,
    template_offsets: Vec<u32>,
    /// (record id, chunk offset) of every record, in write order.
    pub records: Vec<(u64, u32)>,
}

/// Chunk header fields a damaged fixture may override before CRCs are computed.
#[derive(Clone, Debug, Default)]
pub struct ChunkOverrides {
    pub first_id: Option<u64>,
    pub last_id: Option<u64>,
    pub last_record_offset: Option<u32>,
    pub free_space: Option<u32>,
    pub flags: Option<u32>,
}

#[derive(Debug)]
pub struct ChunkFull;

impl Default for Chunk {
    fn default() -> Self {
        Self::new()
    }
}

impl Chunk {
    pub fn new() -> Chunk {
        Chunk {
            data: vec![0u8; CHUNK_HEADER_SIZE],
            names: HashMap::new(),
            name_entries: Vec::new(),
            templates: HashMap::new(),
            template_offsets: Vec::new(),
            records: Vec::new(),
        }
    }

    pub fn pos(&self) -> u32 {
        self.data.len() as u32
    }

    pub fn free(&self) -> usize {
        CHUNK_SIZE.saturating_sub(self.data.len())
    }

    pub fn has_template(&self, key: &str) -> bool {
        self.templates.contains_key(key)
    }

    fn put_u16(&mut self, v: u16) {
        self.data.extend_from_slice(&v.to_le_bytes());
    }
    fn put_u32(&mut self, v: u32) {
        self.data.extend_from_slice(&v.to_le_bytes());
    }
    fn patch_u16(&mut self, at: usize, v: u16) {
        self.data[at..at + 2].copy_from_slice(&v.to_le_bytes());
    }
    fn patch_u32(&mut self, at: usize, v: u32) {
        self.data[at..at + 4].copy_from_slice(&v.to_le_bytes());
    }

    /// Writes a name entry (next, hash, count, units, NUL) at the current position.
    fn name_entry(&mut self, units: &[u16]) {
        self.put_u32(0);
        self.put_u16(name_hash(units));
        self.put_u16(units.len() as u16);
        for &u in units {
            self.put_u16(u);
        }
        self.put_u16(0);
    }

    fn name_ref(&mut self, name: &Name) {
        match name {
            Name::S(units) => {
                if let Some(&off) = self.names.get(units) {
                    self.put_u32(off);
                } else {
                    let off = self.pos() + 4;
                    self.put_u32(off);
                    self.name_entry(units);
                    self.names.insert(units.clone(), off);
                    self.name_entries.push((off, name_hash(units)));
                }
            }
            Name::Unlisted(units) => {
                let off = self.pos() + 4;
                self.put_u32(off);
                self.name_entry(units);
            }
            Name::Offset(o) => self.put_u32(*o),
            Name::SelfRef => {
                let p = self.pos();
                self.put_u32(p);
            }
        }
    }

    /// Serializes a token stream at the current position. `in_def`: template definition body
    /// (open-start tokens carry a dependency id).
    pub fn emit(&mut self, toks: &[Tok], in_def: bool) {
        let mut elem_stack: Vec<usize> = Vec::new();
        let mut attr_size_at: Option<usize> = None;
        let mut last_attr: Option<usize> = None;
        for t in toks {
            self.emit_one(
                t,
                in_def,
                &mut elem_stack,
                &mut attr_size_at,
                &mut last_attr,
            );
        }
    }

    fn emit_one(
        &mut self,
        t: &Tok,
        in_def: bool,
        elem_stack: &mut Vec<usize>,
        attr_size_at: &mut Option<usize>,
        last_attr: &mut Option<usize>,
    ) {
        let start = self.data.len();
        match t {
            Tok::Frag => self.data.extend_from_slice(&[0x0F, 0x01, 0x01, 0x00]),
            Tok::Eof => self.data.push(0x00),
            Tok::Open { name, dep, attrs } => {
                self.data.push(if *attrs { 0x41 } else { 0x01 });
                if in_def {
                    self.put_u16(*dep);
                }
                elem_stack.push(self.data.len());
                self.put_u32(0);
                self.name_ref(name);
                if *attrs {
                    *attr_size_at = Some(self.data.len());
                    self.put_u32(0);
                }
                *last_attr = None;
            }
            Tok::Attr(name) => {
                if let Some(prev) = *last_attr {
                    self.data[prev] |= 0x40;
                }
                *last_attr = Some(start);
                self.data.push(0x06);
                self.name_ref(name);
            }
            Tok::CloseStart | Tok::CloseEmpty => {
                if let Some(at) = attr_size_at.take() {
                    let v = (start - at - 4) as u32;
                    self.patch_u32(at, v);
                }
                *last_attr = None;
                if matches!(t, Tok::CloseStart) {
                    self.data.push(0x02);
                } else {
                    self.data.push(0x03);
                    self.close_elem(elem_stack);
                }
            }
            Tok::End => {
                self.data.push(0x04);
                self.close_elem(elem_stack);
            }
            Tok::Text(units) => {
                self.data.push(0x05);
                self.data.push(ty::STRING);
                self.put_u16(units.len() as u16);
                for &u in units {
                    self.put_u16(u);
                }
            }
            Tok::ValueText(t, payload) => {
                self.data.push(0x05);
                self.data.push(*t);
                self.data.extend_from_slice(payload);
            }
            Tok::ValueXml(inner) => {
                self.data.push(0x05);
                self.data.push(ty::BINXML);
                let at = self.data.len();
                self.put_u16(0);
                self.emit(inner, false);
                let len = (self.data.len() - at - 2) as u16;
                self.patch_u16(at, len);
            }
            Tok::Sub { idx, ty, opt } => {
                self.data.push(if *opt { 0x0E } else { 0x0D });
                self.put_u16(*idx);
                self.data.push(*ty);
            }
            Tok::CData(units) => {
                self.data.push(0x07);
                self.put_u16(units.len() as u16);
                for &u in units {
                    self.put_u16(u);
                }
            }
            Tok::CharRef(u) => {
                self.data.push(0x08);
                self.put_u16(*u);
            }
            Tok::EntRef(name) => {
                self.data.push(0x09);
                self.name_ref(name);
            }
            Tok::PiTarget(name) => {
                self.data.push(0x0A);
                self.name_ref(name);
            }
            Tok::PiData(units) => {
                self.data.push(0x0B);
                self.put_u16(units.len() as u16);
                for &u in units {
                    self.put_u16(u);
                }
            }
            Tok::Instance(inst) => self.instance(inst),
            Tok::More(inner) => {
                self.emit_one(inner, in_def, elem_stack, attr_size_at, last_attr);
                self.data[start] |= 0x40;
            }
            Tok::Raw(bytes) => self.data.extend_from_slice(bytes),
        }
    }

    fn close_elem(&mut self, elem_stack: &mut Vec<usize>) {
        if let Some(at) = elem_stack.pop() {
            let v = (self.data.len() - at - 4) as u32;
            self.patch_u32(at, v);
        }
    }

    fn instance(&mut self, inst: &Inst) {
        let guid = guid_of(&inst.key);
        self.data.push(0x0C);
        self.data.push(0x01);
        self.data.extend_from_slice(&guid[0..4]);
        match inst.def_ref {
            DefRef::Auto => {
                if let Some(&off) = self.templates.get(&inst.key) {
                    self.put_u32(off);
                } else {
                    let off = self.pos() + 4;
                    self.put_u32(off);
                    self.put_u32(0); // next definition in the hash chain (filled by finish)
                    self.data.extend_from_slice(&guid);
                    let size_at = self.data.len();
                    self.put_u32(0);
                    self.emit(&inst.def, true);
                    let size = (self.data.len() - size_at - 4) as u32;
                    self.patch_u32(size_at, size);
                    self.templates.insert(inst.key.clone(), off);
                    self.template_offsets.push(off);
                }
            }
            DefRef::Offset(o) => self.put_u32(o),
            DefRef::SelfRef => {
                let p = self.pos();
                self.put_u32(p);
            }
            DefRef::InlineSize(size) => {
                let off = self.pos() + 4;
                self.put_u32(off);
                self.put_u32(0);
                self.data.extend_from_slice(&guid);
                self.put_u32(size);
                self.emit(&inst.def, true);
            }
        }
        self.put_u32(inst.values.len() as u32);
        let desc_at = self.data.len();
        for _ in &inst.values {
            self.put_u32(0);
        }
        for (i, v) in inst.values.iter().enumerate() {
            let (t, size) = match v {
                Val::B { ty, bytes, size } => {
                    self.data.extend_from_slice(bytes);
                    (*ty, size.unwrap_or(bytes.len() as u16))
                }
                Val::Xml(toks) => {
                    let at = self.data.len();
                    self.emit(toks, false);
                    (ty::BINXML, (self.data.len() - at) as u16)
                }
            };
            let d = desc_at + 4 * i;
            self.patch_u16(d, size);
            self.data[d + 2] = t;
            self.data[d + 3] = 0;
        }
    }

    /// Appends a record holding `toks` as its BinXML. Fails (leaving the chunk unchanged) when
    /// the record would not fit.
    pub fn record(&mut self, id: u64, filetime: u64, toks: &[Tok]) -> Result<u32, ChunkFull> {
        let saved = (
            self.data.len(),
            self.names.clone(),
            self.name_entries.len(),
            self.templates.clone(),
            self.template_offsets.len(),
        );
        let start = self.data.len();
        self.data.extend_from_slice(b"**\0\0");
        self.put_u32(0);
        self.data.extend_from_slice(&id.to_le_bytes());
        self.data.extend_from_slice(&filetime.to_le_bytes());
        self.emit(toks, false);
        let size = (self.data.len() + 4 - start) as u32;
        self.put_u32(size);
        if self.data.len() > CHUNK_SIZE {
            self.data.truncate(saved.0);
            self.names = saved.1;
            self.name_entries.truncate(saved.2);
            self.templates = saved.3;
            self.template_offsets.truncate(saved.4);
            return Err(ChunkFull);
        }
        self.patch_u32(start + 4, size);
        self.records.push((id, start as u32));
        Ok(start as u32)
    }

    /// Appends raw bytes as they are (damaged records). `id` is recorded for the header ranges
    /// when given.
    pub fn raw_record(&mut self, id: Option<u64>, bytes: &[u8]) -> u32 {
        let start = self.pos();
        self.data.extend_from_slice(bytes);
        if let Some(id) = id {
            self.records.push((id, start));
        }
        start
    }

    /// The finished 64 KiB chunk with string table, template table and correct CRCs.
    pub fn finish(&self, ov: &ChunkOverrides) -> Vec<u8> {
        let mut c = self.data.clone();
        c.resize(CHUNK_SIZE.max(c.len()), 0);
        c.truncate(CHUNK_SIZE);
        let free = self.data.len().min(CHUNK_SIZE) as u32;
        // String table: bucket = hash % 64, chained through the entries' next fields.
        let mut buckets = [0u32; 64];
        let mut tails = [0u32; 64];
        for &(off, hash) in &self.name_entries {
            let b = (hash % 64) as usize;
            if buckets[b] == 0 {
                buckets[b] = off;
            } else {
                let t = tails[b] as usize;
                c[t..t + 4].copy_from_slice(&off.to_le_bytes());
            }
            tails[b] = off;
        }
        // Template table: 32 buckets by the first GUID byte, chained through the definitions.
        let mut tbuckets = [0u32; 32];
        let mut ttails = [0u32; 32];
        for &off in &self.template_offsets {
            let b = (c[off as usize + 4] % 32) as usize;
            if tbuckets[b] == 0 {
                tbuckets[b] = off;
            } else {
                let t = ttails[b] as usize;
                c[t..t + 4].copy_from_slice(&off.to_le_bytes());
            }
            ttails[b] = off;
        }
        let first_id = self.records.first().map(|r| r.0).unwrap_or(0);
        let last_id = self.records.last().map(|r| r.0).unwrap_or(0);
        let last_off = self.records.last().map(|r| r.1).unwrap_or(0);
        c[0..8].copy_from_slice(b"ElfChnk\0");
        let first_id = ov.first_id.unwrap_or(first_id);
        let last_id = ov.last_id.unwrap_or(last_id);
        c[8..16].copy_from_slice(&first_id.to_le_bytes());
        c[16..24].copy_from_slice(&last_id.to_le_bytes());
        c[24..32].copy_from_slice(&first_id.to_le_bytes());
        c[32..40].copy_from_slice(&last_id.to_le_bytes());
        c[40..44].copy_from_slice(&128u32.to_le_bytes());
        c[44..48].copy_from_slice(&ov.last_record_offset.unwrap_or(last_off).to_le_bytes());
        c[48..52].copy_from_slice(&ov.free_space.unwrap_or(free).to_le_bytes());
        c[120..124].copy_from_slice(&ov.flags.unwrap_or(0).to_le_bytes());
        for (i, b) in buckets.iter().enumerate() {
            c[128 + 4 * i..132 + 4 * i].copy_from_slice(&b.to_le_bytes());
        }
        for (i, b) in tbuckets.iter().enumerate() {
            c[384 + 4 * i..388 + 4 * i].copy_from_slice(&b.to_le_bytes());
        }
        fix_chunk_crcs(&mut c);
        c
    }
}

/// Recomputes a chunk's records CRC (512..free space, clamped) and header CRC (0..120 ++ 128..512).
pub fn fix_chunk_crcs(c: &mut [u8]) {
    let free = u32::from_le_bytes(c[48..52].try_into().unwrap()) as usize;
    let end = free.clamp(CHUNK_HEADER_SIZE, CHUNK_SIZE);
    let rcrc = crc32(&c[CHUNK_HEADER_SIZE..end]);
    c[52..56].copy_from_slice(&rcrc.to_le_bytes());
    let h = chunk_header_crc(c);
    c[124..128].copy_from_slice(&h.to_le_bytes());
}

/// CRC32 of chunk bytes `0..120` ++ `128..512`.
pub fn chunk_header_crc(c: &[u8]) -> u32 {
    let mut h = crc32fast::Hasher::new();
    h.update(&c[0..120]);
    h.update(&c[128..512]);
    h.finalize()
}

/// File header fields (contract 2).
#[derive(Clone, Debug)]
pub struct FileHeader {
    pub first_chunk: u64,
    pub last_chunk: u64,
    pub next_record_id: u64,
    pub minor: u16,
    pub major: u16,
    pub block_size: u16,
    pub chunk_count: u16,
    pub flags: u32,
}

impl FileHeader {
    pub fn for_chunks(chunks: &[Vec<u8>]) -> FileHeader {
        let max_id = chunks
            .iter()
            .map(|c| u64::from_le_bytes(c[32..40].try_into().unwrap()))
            .max()
            .unwrap_or(0);
        FileHeader {
            first_chunk: 0,
            last_chunk: chunks.len().saturating_sub(1) as u64,
            next_record_id: max_id + 1,
            minor: 1,
            major: 3,
            block_size: FILE_HEADER_BLOCK as u16,
            chunk_count: chunks.len() as u16,
            flags: 0,
        }
    }

    /// The 4096-byte header block with a correct CRC.
    pub fn bytes(&self) -> Vec<u8> {
        let mut h = vec![0u8; FILE_HEADER_BLOCK];
        h[0..8].copy_from_slice(b"ElfFile\0");
        h[8..16].copy_from_slice(&self.first_chunk.to_le_bytes());
        h[16..24].copy_from_slice(&self.last_chunk.to_le_bytes());
        h[24..32].copy_from_slice(&self.next_record_id.to_le_bytes());
        h[32..36].copy_from_slice(&128u32.to_le_bytes());
        h[36..38].copy_from_slice(&self.minor.to_le_bytes());
        h[38..40].copy_from_slice(&self.major.to_le_bytes());
        h[40..42].copy_from_slice(&self.block_size.to_le_bytes());
        h[42..44].copy_from_slice(&self.chunk_count.to_le_bytes());
        h[120..124].copy_from_slice(&self.flags.to_le_bytes());
        let crc = crc32(&h[0..120]);
        h[124..128].copy_from_slice(&crc.to_le_bytes());
        h
    }
}

/// A whole file: header block followed by the chunks as given.
pub fn build_file(header: &FileHeader, chunks: &[Vec<u8>]) -> Vec<u8> {
    let mut out = header.bytes();
    for c in chunks {
        out.extend_from_slice(c);
    }
    out
}

/// A file with a default header for its chunks.
pub fn file_of(chunks: &[Vec<u8>]) -> Vec<u8> {
    build_file(&FileHeader::for_chunks(chunks), chunks)
}

/// FILETIME of a Unix time in seconds plus 100 ns ticks.
pub fn filetime(unix_secs: u64, ticks: u64) -> u64 {
    (unix_secs + 11_644_473_600) * 10_000_000 + ticks
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn crc32_check_value() {
        assert_eq!(crc32(b"123456789"), 0xCBF4_3926);
    }

    /// Contract 14: the file header of security.evtx has CRC 0x3F6E33D5 over bytes 0..120.
    #[test]
    fn file_header_matches_security_evtx() {
        let h = FileHeader {
            first_chunk: 0,
            last_chunk: 25,
            next_record_id: 2226,
            minor: 1,
            major: 3,
            block_size: 4096,
            chunk_count: 26,
            flags: 1,
        };
        let b = h.bytes();
        assert_eq!(b.len(), 4096);
        assert_eq!(&b[0..8], b"ElfFile\0");
        assert_eq!(
            u32::from_le_bytes(b[124..128].try_into().unwrap()),
            0x3F6E_33D5
        );
        let sample = crate::expected::default_samples().join("security.evtx");
        if let Ok(s) = std::fs::read(sample) {
            assert_eq!(&b[0..128], &s[0..128]);
            assert!(b[128..].iter().all(|&x| x == 0));
        }
    }

    /// Contract 13: security.evtx chunk 0 header CRC 978805790, records CRC 4252479141 over
    /// 512..65376. Checked only when the sample is present.
    #[test]
    fn chunk_crcs_match_security_evtx() {
        let Ok(s) = std::fs::read(crate::expected::default_samples().join("security.evtx")) else {
            eprintln!("SKIP: security.evtx not present");
            return;
        };
        let c = &s[4096..4096 + CHUNK_SIZE];
        assert_eq!(chunk_header_crc(c), 978_805_790);
        assert_eq!(crc32(&c[512..65376]), 4_252_479_141);
        let mut copy = c.to_vec();
        fix_chunk_crcs(&mut copy);
        assert_eq!(
            copy, c,
            "recomputing the CRCs leaves the sample chunk unchanged"
        );
    }

    #[test]
    fn chunk_header_crc_covers_0_120_and_128_512_only() {
        let mut c = Chunk::new();
        c.record(1, 5, &[Tok::Frag, Tok::Eof]).unwrap();
        let mut b = c.finish(&ChunkOverrides::default());
        let crc = u32::from_le_bytes(b[124..128].try_into().unwrap());
        let mut h = crc32fast::Hasher::new();
        h.update(&b[0..120]);
        h.update(&b[128..512]);
        assert_eq!(crc, h.finalize());
        b[120] ^= 0xFF; // flags: not covered
        assert_eq!(chunk_header_crc(&b), crc);
        b[120] ^= 0xFF;
        b[300] ^= 1; // string table: covered
        assert_ne!(chunk_header_crc(&b), crc);
        b[119] ^= 1;
        b[300] ^= 1;
        assert_ne!(chunk_header_crc(&b), crc);
    }

    #[test]
    fn name_hash_65599() {
        // Contract 14: the inline "Event" name entry stores hash 0x0CBA.
        assert_eq!(name_hash(&u16s("Event")), 0x0CBA);
        assert_eq!(name_hash(&[]), 0);
        assert_eq!(name_hash(&[0x41]), 0x41);
        assert_eq!(name_hash(&[1, 0]), (65599u32 & 0xFFFF) as u16);
    }

    #[test]
    fn record_layout_and_chunk_fields() {
        let mut c = Chunk::new();
        let toks = [
            Tok::Frag,
            Tok::Open {
                name: Name::from("Event"),
                dep: 0xFFFF,
                attrs: false,
            },
            Tok::CloseEmpty,
            Tok::Eof,
        ];
        let off1 = c.record(7, 0x01D1_D944_5757_9618, &toks).unwrap();
        let off2 = c.record(8, 0x01D1_D944_5757_9619, &toks).unwrap();
        assert_eq!(off1, 512);
        let b = c.finish(&ChunkOverrides::default());
        let r = &b[512..];
        let r2 = &b[off2 as usize..];
        assert_eq!(&r[0..4], b"**\0\0");
        let size = u32::from_le_bytes(r[4..8].try_into().unwrap()) as usize;
        assert_eq!(u64::from_le_bytes(r[8..16].try_into().unwrap()), 7);
        assert_eq!(
            u64::from_le_bytes(r[16..24].try_into().unwrap()),
            0x01D1_D944_5757_9618
        );
        assert_eq!(&r[24..28], &[0x0F, 0x01, 0x01, 0x00]);
        assert_eq!(
            u32::from_le_bytes(r[size - 4..size].try_into().unwrap()) as usize,
            size
        );
        assert_eq!(off2 as usize, 512 + size);
        // First use of "Event": inline, offset = position right after the offset field.
        assert_eq!(r[28], 0x01);
        let name_off = u32::from_le_bytes(r[33..37].try_into().unwrap());
        assert_eq!(name_off, 512 + 37);
        assert_eq!(u16::from_le_bytes(r[41..43].try_into().unwrap()), 0x0CBA);
        // Second record references the same entry.
        assert_eq!(u32::from_le_bytes(r2[33..37].try_into().unwrap()), name_off);
        // Header fields.
        assert_eq!(&b[0..8], b"ElfChnk\0");
        assert_eq!(u64::from_le_bytes(b[24..32].try_into().unwrap()), 7);
        assert_eq!(u64::from_le_bytes(b[32..40].try_into().unwrap()), 8);
        assert_eq!(u32::from_le_bytes(b[44..48].try_into().unwrap()), off2);
        let free = u32::from_le_bytes(b[48..52].try_into().unwrap()) as usize;
        let r2 = &b[off2 as usize..];
        let size2 = u32::from_le_bytes(r2[4..8].try_into().unwrap()) as usize;
        assert_eq!(size2, size - 20, "the second record references the name");
        assert_eq!(free, off2 as usize + size2);
        assert_eq!(
            u32::from_le_bytes(b[52..56].try_into().unwrap()),
            crc32(&b[512..free])
        );
        // The string table bucket of "Event" points at the entry.
        let bucket = (0x0CBA % 64) as usize;
        assert_eq!(
            u32::from_le_bytes(b[128 + 4 * bucket..132 + 4 * bucket].try_into().unwrap()),
            name_off
        );
    }

    #[test]
    fn a_record_that_does_not_fit_leaves_the_chunk_unchanged() {
        let mut c = Chunk::new();
        let big = vec![Tok::Raw(vec![0; 40000])];
        c.record(1, 0, &big).unwrap();
        let before = c.data.clone();
        assert!(c.record(2, 0, &big).is_err());
        assert_eq!(c.data, before);
        assert_eq!(c.records.len(), 1);
    }
}
