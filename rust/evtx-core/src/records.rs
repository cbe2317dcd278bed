//! Records inside a chunk (contract section 5): the record header (5.1), the walk (5.2) and
//! its resync after a bad record (5.3); with recovery on, the walk hands the spans it skips to
//! [`crate::carve`] (5.4).

use crate::bytes::get_u32;
use crate::carve::Carver;
use crate::chunk::{ChunkHeader, CHUNK_HEADER_SIZE};
use crate::error::ErrorKind;
use crate::file_header::CHUNK_SIZE;

/// Record magic `**\0\0`.
pub const RECORD_MAGIC: [u8; 4] = [0x2a, 0x2a, 0, 0];
/// Largest valid record FILETIME (9999-12-30T22:00:00.9999999Z, section 5.1).
pub const FILETIME_MAX: u64 = 2_650_466_808_009_999_999;

/// A record header read from a chunk (section 5.1).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RecordHeader {
    /// Chunk offset of the record's first byte.
    pub offset: u32,
    /// Total size including header and trailing copy.
    pub size: u32,
    /// Record identifier (the `Record N` number).
    pub id: u64,
    /// Written time (FILETIME).
    pub filetime: u64,
}

impl RecordHeader {
    /// Chunk offsets of the record's BinXML window.
    pub fn binxml_window(&self) -> (usize, usize) {
        let start = self.offset as usize + 24;
        (start, self.offset as usize + self.size as usize - 4)
    }
}

/// A record read error: the kind, and whether it is "blank" (section 5.2).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RecordReadError {
    pub kind: ErrorKind,
    pub blank: bool,
    /// The record id, when the header was read past its magic.
    pub id: Option<u64>,
}

/// Reads and checks the record header at chunk offset `pos`. `chunk` is the slot's bytes
/// (65536 of them, except in a trailing partial slot).
pub fn read_record_header(chunk: &[u8], pos: usize) -> Result<RecordHeader, RecordReadError> {
    let err = |kind, blank, id| RecordReadError { kind, blank, id };
    // The 24 header bytes as one array: its fields are read without bounds checks (PERF.md
    // H113: every record comes through here).
    let Some(h) = chunk.get(pos..).and_then(<[u8]>::first_chunk::<24>) else {
        return Err(err(ErrorKind::TruncatedRecordHeader, true, None));
    };
    let word = |at: usize| u32::from_le_bytes([h[at], h[at + 1], h[at + 2], h[at + 3]]);
    let magic = word(0).to_le_bytes();
    if magic != RECORD_MAGIC {
        return Err(err(ErrorKind::BadRecordMagic, magic == [0, 0, 0, 0], None));
    }
    let size = word(4);
    let id = u64::from(word(8)) | u64::from(word(12)) << 32;
    let filetime = u64::from(word(16)) | u64::from(word(20)) << 32;
    if filetime > FILETIME_MAX {
        return Err(err(ErrorKind::BadRecordTimestamp, false, Some(id)));
    }
    if size < 28 || pos as u64 + u64::from(size) - 4 > chunk.len() as u64 {
        return Err(err(ErrorKind::BadRecordSize, false, Some(id)));
    }
    Ok(RecordHeader {
        offset: pos as u32,
        size,
        id,
        filetime,
    })
}

/// One step of the walk: a record to render, or a read error at a chunk offset.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum WalkItem {
    Record(RecordHeader),
    /// A record carved from unallocated space (`--recover-records`); the caller drops it
    /// silently when it fails, and calls [`RecordWalker::rescan_after`].
    Carved(RecordHeader),
    /// A record read error at chunk offset `offset`; `id` when the header was readable.
    Error {
        offset: u32,
        kind: ErrorKind,
        id: Option<u64>,
    },
}

/// Walks the records of one chunk (sections 5.2 and 5.3) and, with recovery on, carves the
/// spans it skips (5.4, [`crate::carve`]).
pub struct RecordWalker<'c> {
    chunk: &'c [u8],
    header: ChunkHeader,
    pos: usize,
    live_end: usize,
    /// No live record left (carving may still go on).
    done: bool,
    recover: bool,
    carve: Carver,
}

impl<'c> RecordWalker<'c> {
    /// A walker over `chunk` (a full 65536-byte chunk) with its parsed header; `recover` turns
    /// on carving.
    pub fn new(chunk: &'c [u8], header: ChunkHeader, recover: bool) -> RecordWalker<'c> {
        let live_end = (header.free_space_offset as usize)
            .min(CHUNK_SIZE)
            .min(chunk.len());
        RecordWalker {
            chunk,
            header,
            pos: CHUNK_HEADER_SIZE,
            live_end,
            done: false,
            recover,
            carve: Carver::default(),
        }
    }

    /// A walker that only carves `chunk[512..]` (the trailing partial slot, see
    /// `shared-fixtures/README.md`).
    pub fn carve_only(chunk: &'c [u8], header: ChunkHeader) -> RecordWalker<'c> {
        let mut w = RecordWalker::new(chunk, header, true);
        w.done = true;
        w.carve.open(CHUNK_HEADER_SIZE, chunk.len());
        w
    }

    /// A carved record failed to render: carve on just after its magic.
    pub fn rescan_after(&mut self, rec: &RecordHeader) {
        self.carve.rescan_after(rec);
    }

    /// Walk on at `next` (`None`: no live record left); with recovery on, carve `[from, next)`
    /// (or to the chunk end) first.
    fn skip_to(&mut self, from: usize, next: Option<usize>) {
        match next {
            Some(q) => self.pos = q,
            None => self.done = true,
        }
        if self.recover {
            self.carve.open(from, next.unwrap_or(self.chunk.len()));
        }
    }

    /// The first resync candidate at or after `from` (section 5.3).
    fn resync(&self, from: usize) -> Option<usize> {
        let limit =
            (self.live_end as u64).min(u64::from(self.header.last_record_data_offset) + 4) as usize;
        let mut q = from;
        while q < limit {
            // Jump to the next possible magic start.
            let rest = &self.chunk[q..limit];
            let i = rest.iter().position(|&b| b == 0x2a)?;
            q += i;
            if self.chunk.get(q..q + 4) == Some(&RECORD_MAGIC[..]) {
                if let Ok(rec) = read_record_header(self.chunk, q) {
                    let end = q + rec.size as usize;
                    if get_u32(self.chunk, end - 4) == Some(rec.size)
                        && end <= self.live_end
                        && rec.id >= self.header.first_record_id
                        && rec.id <= self.header.last_record_id
                    {
                        return Some(q);
                    }
                }
            }
            q += 1;
        }
        None
    }
}

impl Iterator for RecordWalker<'_> {
    type Item = WalkItem;

    #[inline]
    fn next(&mut self) -> Option<WalkItem> {
        loop {
            if !self.carve.is_empty() {
                if let Some(rec) = self.carve.next_record(self.chunk) {
                    return Some(WalkItem::Carved(rec));
                }
            }
            if self.done {
                return None;
            }
            let pos = self.pos;
            if pos >= self.live_end {
                self.skip_to(pos, None);
                continue;
            }
            match read_record_header(self.chunk, pos) {
                Ok(rec) => {
                    let end = pos + rec.size as usize;
                    if rec.id == self.header.last_record_id {
                        self.skip_to(end, None);
                    } else {
                        self.pos = end;
                    }
                    return Some(WalkItem::Record(rec));
                }
                Err(e) => {
                    let next = self.resync(pos + 1);
                    self.skip_to(pos, next);
                    // A blank error with no live record after it is the end of the records.
                    if next.is_some() || !e.blank {
                        return Some(WalkItem::Error {
                            offset: pos as u32,
                            kind: e.kind,
                            id: e.id,
                        });
                    }
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::chunk::tests::chunk_with;

    /// `read_record_header` as written before PERF.md H113: each field read by its offset.
    fn header_by_fields(chunk: &[u8], pos: usize) -> Result<RecordHeader, RecordReadError> {
        use crate::bytes::{le_u32, le_u64};
        let err = |kind, blank, id| RecordReadError { kind, blank, id };
        if chunk.len().saturating_sub(pos) < 24 {
            return Err(err(ErrorKind::TruncatedRecordHeader, true, None));
        }
        let magic = &chunk[pos..pos + 4];
        if magic != RECORD_MAGIC {
            return Err(err(ErrorKind::BadRecordMagic, magic == [0, 0, 0, 0], None));
        }
        let (size, id) = (le_u32(chunk, pos + 4), le_u64(chunk, pos + 8));
        let filetime = le_u64(chunk, pos + 16);
        if filetime > FILETIME_MAX {
            return Err(err(ErrorKind::BadRecordTimestamp, false, Some(id)));
        }
        if size < 28 || pos as u64 + u64::from(size) - 4 > chunk.len() as u64 {
            return Err(err(ErrorKind::BadRecordSize, false, Some(id)));
        }
        Ok(RecordHeader {
            offset: pos as u32,
            size,
            id,
            filetime,
        })
    }

    #[test]
    fn header_equals_field_reads() {
        // Random headers (magic right, zero or wrong; sizes and dates around their bounds) at
        // every position of short buffers, into their last bytes and past their end.
        let mut next = crate::testing::xorshift(0x2545_f491_4f6c_dd1d);
        for _ in 0..3_000 {
            let len = 20 + (next() % 60) as usize;
            let mut chunk: Vec<u8> = (0..len).map(|_| next() as u8).collect();
            let pos = (next() % (len as u64 + 4)) as usize;
            if let Some(h) = chunk.get_mut(pos..pos + 24) {
                match next() % 4 {
                    0 => h[..4].fill(0),
                    1 => {}
                    _ => h[..4].copy_from_slice(&RECORD_MAGIC),
                }
                let size = [24, 27, 28, 29, 40, (len - pos + 4) as u32][(next() % 6) as usize];
                h[4..8].copy_from_slice(&size.to_le_bytes());
                if next().is_multiple_of(2) {
                    let t = FILETIME_MAX - 1 + next() % 3;
                    h[16..24].copy_from_slice(&t.to_le_bytes());
                }
            }
            let want = header_by_fields(&chunk, pos);
            assert_eq!(read_record_header(&chunk, pos), want, "{pos} {chunk:x?}");
        }
    }

    #[test]
    fn walks_until_last_id() {
        let c = chunk_with(&[(32, 1), (40, 2), (32, 3)], 65536, 2);
        let h = ChunkHeader::parse(&c).unwrap();
        let ids: Vec<_> = RecordWalker::new(&c, h, false)
            .map(|i| match i {
                WalkItem::Record(r) => r.id,
                WalkItem::Error { .. } | WalkItem::Carved(_) => 0,
            })
            .collect();
        assert_eq!(ids, vec![1, 2]);
    }

    #[test]
    fn zero_tail_is_silent() {
        let c = chunk_with(&[(32, 1)], 65536, 9);
        let h = ChunkHeader::parse(&c).unwrap();
        let items: Vec<_> = RecordWalker::new(&c, h, false).collect();
        assert_eq!(items.len(), 1);
    }

    #[test]
    fn bad_size_resyncs_to_next_live_record() {
        let mut c = chunk_with(&[(32, 1), (32, 2), (32, 3)], 512 + 96, 3);
        c[512 + 4..512 + 8].copy_from_slice(&0u32.to_le_bytes());
        let h = ChunkHeader::parse(&c).unwrap();
        let items: Vec<_> = RecordWalker::new(&c, h, false).collect();
        assert_eq!(
            items[0],
            WalkItem::Error {
                offset: 512,
                kind: ErrorKind::BadRecordSize,
                id: Some(1)
            }
        );
        assert!(matches!(items[1], WalkItem::Record(r) if r.id == 2));
        assert!(matches!(items[2], WalkItem::Record(r) if r.id == 3));
        assert_eq!(items.len(), 3);
    }

    fn kinds(items: &[WalkItem]) -> Vec<(char, u64)> {
        items
            .iter()
            .map(|i| match i {
                WalkItem::Record(r) => ('L', r.id),
                WalkItem::Carved(r) => ('C', r.id),
                WalkItem::Error { offset, .. } => ('E', u64::from(*offset)),
            })
            .collect()
    }

    #[test]
    fn recovery_carves_cleared_chunk_slack_and_error_spans() {
        // Cleared chunk: free space at 512, old records behind it.
        let c = chunk_with(&[(32, 1), (40, 2)], 512, 0);
        let h = ChunkHeader::parse(&c).unwrap();
        assert!(RecordWalker::new(&c, h, false).next().is_none());
        let items: Vec<_> = RecordWalker::new(&c, h, true).collect();
        assert_eq!(kinds(&items), vec![('C', 1), ('C', 2)]);
        // Slack after the last live record (id 2 is last): record 3 is stale.
        let c = chunk_with(&[(32, 1), (40, 2), (32, 3)], 512 + 72, 2);
        let h = ChunkHeader::parse(&c).unwrap();
        let items: Vec<_> = RecordWalker::new(&c, h, true).collect();
        assert_eq!(kinds(&items), vec![('L', 1), ('L', 2), ('C', 3)]);
        // A bad size at 512: the span [512, resync) is carved before the walk goes on; the bad
        // record itself is no hit (its size is wrong), the one inside the span is.
        let mut c = chunk_with(&[(32, 1), (32, 9), (32, 2)], 512 + 96, 2);
        c[512 + 4..512 + 8].copy_from_slice(&0u32.to_le_bytes());
        c[32..40].copy_from_slice(&2u64.to_le_bytes());
        c[24..32].copy_from_slice(&2u64.to_le_bytes());
        let h = ChunkHeader::parse(&c).unwrap();
        let items: Vec<_> = RecordWalker::new(&c, h, true).collect();
        assert_eq!(kinds(&items), vec![('E', 512), ('C', 9), ('L', 2)]);
    }

    #[test]
    fn bad_timestamp_is_an_error() {
        let mut c = chunk_with(&[(32, 1)], 512 + 32, 1);
        c[512 + 16..512 + 24].copy_from_slice(&(FILETIME_MAX + 1).to_le_bytes());
        let h = ChunkHeader::parse(&c).unwrap();
        let items: Vec<_> = RecordWalker::new(&c, h, false).collect();
        assert_eq!(
            items,
            vec![WalkItem::Error {
                offset: 512,
                kind: ErrorKind::BadRecordTimestamp,
                id: Some(1)
            }]
        );
    }
}
