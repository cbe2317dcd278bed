//! Record recovery (`--recover-records`, contract 5.4): carving stale records out of the
//! unallocated parts of a chunk. The rules, which both engines share, are in
//! `shared-fixtures/README.md`, "Record recovery".
//!
//! The walk ([`crate::records::RecordWalker`]) opens a span after a bad record, after the last
//! live record and past the free space; [`Carver`] yields the records in it that carry a
//! readable header and a matching trailing size copy and end inside the span.

use crate::bytes::get_u32;
use crate::records::{read_record_header, RecordHeader, RECORD_MAGIC};

/// `<?xml ...?>\n`: the XML mark goes right after it.
const XML_DECL: &[u8] = b"<?xml version=\"1.0\" encoding=\"utf-8\"?>\n";
/// XML mark of a carved record.
const XML_MARK: &[u8] = b"<!-- recovered -->\n";
/// JSON mark of a carved record, inserted after the opening `{`.
const JSON_MARK: &[u8] = b"\"recovered\":true,";
/// The same, when the object is indented (the reference's rule; our JSON is never indented).
const JSON_MARK_INDENTED: &[u8] = b"\n  \"recovered\": true,";
/// Suffix of a carved record's banner.
pub const BANNER_SUFFIX: &[u8] = b" (recovered)";

/// The span of a chunk left to carve, in chunk offsets. Empty when there is nothing to carve
/// (always, when recovery is off).
///
/// Invariant: `start <= end` whenever the span is non-empty; `end <= chunk.len()`.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Carver {
    start: usize,
    end: usize,
}

impl Carver {
    /// Whether nothing is left to carve.
    #[inline(always)]
    pub fn is_empty(&self) -> bool {
        self.start >= self.end
    }

    /// Carve `[from, to)` next (replacing what was left).
    pub fn open(&mut self, from: usize, to: usize) {
        self.start = from;
        self.end = to;
    }

    /// The next carved record in the span, and move past it; `None` when the span is done.
    #[cold]
    pub fn next_record(&mut self, chunk: &[u8]) -> Option<RecordHeader> {
        let end = self.end.min(chunk.len());
        while self.start < end {
            // The magic must lie inside the span; the record is checked against the span below.
            let hit = chunk[self.start..end]
                .windows(4)
                .position(|w| w == RECORD_MAGIC)?;
            let pos = self.start + hit;
            match carved_at(chunk, pos) {
                Some(rec) if pos + rec.size as usize <= end => {
                    self.start = pos + rec.size as usize;
                    return Some(rec);
                }
                _ => self.start = pos + 1,
            }
        }
        self.start = self.end;
        None
    }

    /// A carved record failed to parse or render: it was noise, and real records may lie inside
    /// the bytes it claimed, so carve on just after its magic.
    #[cold]
    pub fn rescan_after(&mut self, rec: &RecordHeader) {
        self.start = rec.offset as usize + 1;
    }
}

/// The record at `pos` if it qualifies as a carved hit: readable header (5.1) and the trailing
/// copy of its size inside the chunk.
fn carved_at(chunk: &[u8], pos: usize) -> Option<RecordHeader> {
    let rec = read_record_header(chunk, pos).ok()?;
    let copy_at = pos + rec.size as usize - 4;
    (get_u32(chunk, copy_at) == Some(rec.size)).then_some(rec)
}

/// Marks the rendered record text at `buf[body..]` as carved (XML comment, or first JSON
/// member), as the reference does.
#[cold]
pub fn mark_recovered(buf: &mut Vec<u8>, body: usize, xml: bool) {
    let text = &buf[body..];
    if xml {
        if text.starts_with(XML_DECL) {
            let at = body + XML_DECL.len();
            buf.splice(at..at, XML_MARK.iter().copied());
        }
    } else if text.first() == Some(&b'{') {
        let mark = if text.get(1) == Some(&b'\n') {
            JSON_MARK_INDENTED
        } else {
            JSON_MARK
        };
        buf.splice(body + 1..body + 1, mark.iter().copied());
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::file_header::CHUNK_SIZE;

    /// A chunk with records `(offset, size, id, size copy)`.
    fn chunk(records: &[(usize, u32, u64, u32)]) -> Vec<u8> {
        let mut c = vec![0u8; CHUNK_SIZE];
        for &(pos, size, id, copy) in records {
            c[pos..pos + 4].copy_from_slice(&RECORD_MAGIC);
            c[pos + 4..pos + 8].copy_from_slice(&size.to_le_bytes());
            c[pos + 8..pos + 16].copy_from_slice(&id.to_le_bytes());
            let end = pos + size as usize;
            c[end - 4..end].copy_from_slice(&copy.to_le_bytes());
        }
        c
    }

    fn carve_all(c: &[u8], from: usize, to: usize) -> Vec<(u32, u64)> {
        let mut k = Carver::default();
        k.open(from, to);
        std::iter::from_fn(|| k.next_record(c))
            .map(|r| (r.offset, r.id))
            .collect()
    }

    #[test]
    fn carves_records_with_matching_size_copy() {
        let c = chunk(&[(600, 40, 7, 40), (640, 40, 8, 41), (700, 32, 9, 32)]);
        assert_eq!(carve_all(&c, 512, CHUNK_SIZE), vec![(600, 7), (700, 9)]);
    }

    #[test]
    fn record_must_end_inside_the_span() {
        let c = chunk(&[(600, 40, 7, 40), (700, 32, 9, 32)]);
        assert_eq!(carve_all(&c, 512, 731), vec![(600, 7)]);
        assert_eq!(carve_all(&c, 512, 732), vec![(600, 7), (700, 9)]);
        // The magic itself must lie inside the span.
        assert_eq!(carve_all(&c, 512, 603), vec![]);
    }

    #[test]
    fn a_hit_swallows_records_inside_it_until_rescanned() {
        // A record at 600 claims 600..700; one at 640 lies inside it.
        let c = chunk(&[(640, 32, 8, 32), (600, 100, 7, 100)]);
        let mut k = Carver::default();
        k.open(512, CHUNK_SIZE);
        let first = k.next_record(&c).unwrap();
        assert_eq!(first.id, 7);
        assert_eq!(k.next_record(&c), None);
        k.open(512, CHUNK_SIZE);
        let first = k.next_record(&c).unwrap();
        k.rescan_after(&first);
        assert_eq!(k.next_record(&c).map(|r| r.id), Some(8));
    }

    #[test]
    fn marks() {
        let decl = XML_DECL.to_vec();
        let mut b = b"Record 1 (recovered)\n".to_vec();
        let body = b.len();
        b.extend_from_slice(&decl);
        b.extend_from_slice(b"<Event/>\n");
        mark_recovered(&mut b, body, true);
        assert!(b.ends_with(b"?>\n<!-- recovered -->\n<Event/>\n"));
        let mut j = b"{\"Event\":1}\n".to_vec();
        mark_recovered(&mut j, 0, false);
        assert_eq!(j, b"{\"recovered\":true,\"Event\":1}\n");
    }
}
