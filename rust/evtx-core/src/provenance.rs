//! `--provenance`: where each record came from, written into its text by the engine (as the
//! recovered mark of [`crate::carve`]): the input as named, the chunk slot, the record's file
//! offset, whether it was carved, and its chunk's checksum status. The format is in
//! `shared-fixtures/README.md`, "Provenance"; the Zig engine's `provenance.zig` writes the same
//! bytes.
//!
//! JSON gets a first member, `{"provenance":{"file":"F","chunk":N,"offset":N,"recovered":B,
//! "checksum":"S"},...`, XML a comment line right after the declaration, `<!-- provenance
//! file="F" chunk="N" offset="0xH" recovered="B" checksum="S" -->`. Both come before a carved
//! record's own mark, so a record's text with provenance is its text without, plus one member
//! or line.

use crate::chunk::{ChunkHeader, CHUNK_FLAG_NO_CRC32, CHUNK_HEADER_SIZE};
use crate::file_header::CHUNK_SIZE;

/// The checksum status of the chunk a record was read from (`evtx_record.checksum` in the C
/// ABI, `EVTX_CHECKSUM_*`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
#[repr(u8)]
pub enum Checksum {
    /// Not checked: the chunk says it keeps no CRC32s (flag NO_CRC32), it is the cut last
    /// chunk of the file, or neither `--provenance` nor `--validate-checksums` asked.
    #[default]
    Unchecked = 0,
    /// The header CRC32 and the records CRC32 both match, as `--validate-checksums` checks
    /// them (contract 4.2).
    Ok = 1,
    /// One of them does not match, or the free space offset is out of range.
    Bad = 2,
}

impl Checksum {
    /// The word the provenance mark writes.
    pub fn text(self) -> &'static str {
        match self {
            Checksum::Unchecked => "unchecked",
            Checksum::Ok => "ok",
            Checksum::Bad => "bad",
        }
    }

    /// The status of a whole chunk (65536 bytes, header `header`): the checks of
    /// `--validate-checksums`, in its order.
    pub fn of_chunk(header: &ChunkHeader, chunk: &[u8]) -> Checksum {
        if chunk.len() < CHUNK_SIZE || header.flags & CHUNK_FLAG_NO_CRC32 != 0 {
            return Checksum::Unchecked;
        }
        debug_assert!(chunk.len() >= CHUNK_HEADER_SIZE);
        match header.validate_checksums(chunk) {
            Ok(()) => Checksum::Ok,
            Err(_) => Checksum::Bad,
        }
    }
}

/// Where a record came from, as its mark says it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Origin {
    pub chunk: u32,
    pub offset: u64,
    pub recovered: bool,
    pub checksum: Checksum,
}

/// The input's name, escaped once for each format.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Provenance {
    json_file: Vec<u8>,
    xml_file: Vec<u8>,
}

/// `<?xml ...?>\n`: the XML mark goes right after it.
const XML_DECL: &[u8] = b"<?xml version=\"1.0\" encoding=\"utf-8\"?>\n";

impl Provenance {
    /// The marks of the input named `file` (the path as given; `-` for standard input).
    pub fn new(file: &str) -> Provenance {
        Provenance {
            json_file: json_escaped(file),
            xml_file: xml_escaped(file),
        }
    }

    /// Marks the record text at `buf[body..]` with `origin`: a comment line after the XML
    /// declaration, or a first JSON member. Text of another shape is left alone.
    #[cold]
    pub fn mark(&self, buf: &mut Vec<u8>, body: usize, xml: bool, origin: Origin) {
        let text = &buf[body..];
        let (at, mark) = if xml {
            if !text.starts_with(XML_DECL) {
                return;
            }
            (body + XML_DECL.len(), self.xml_mark(origin))
        } else {
            if text.first() != Some(&b'{') {
                return;
            }
            (body + 1, self.json_mark(origin))
        };
        buf.splice(at..at, mark);
    }

    fn json_mark(&self, o: Origin) -> Vec<u8> {
        let mut m = Vec::with_capacity(self.json_file.len() + 96);
        m.extend_from_slice(b"\"provenance\":{\"file\":\"");
        m.extend_from_slice(&self.json_file);
        let rest = format!(
            "\",\"chunk\":{},\"offset\":{},\"recovered\":{},\"checksum\":\"{}\"}},",
            o.chunk,
            o.offset,
            o.recovered,
            o.checksum.text()
        );
        m.extend_from_slice(rest.as_bytes());
        m
    }

    fn xml_mark(&self, o: Origin) -> Vec<u8> {
        let mut m = Vec::with_capacity(self.xml_file.len() + 96);
        m.extend_from_slice(b"<!-- provenance file=\"");
        m.extend_from_slice(&self.xml_file);
        let rest = format!(
            "\" chunk=\"{}\" offset=\"0x{:x}\" recovered=\"{}\" checksum=\"{}\" -->\n",
            o.chunk,
            o.offset,
            o.recovered,
            o.checksum.text()
        );
        m.extend_from_slice(rest.as_bytes());
        m
    }
}

/// `text` as the inside of a JSON string: `"` and `\` escaped, `\b \f \n \r \t` by their short
/// forms, other controls below 0x20 as `\u00xx` (lowercase hex), the rest as is (Python's
/// `json.dumps(text, ensure_ascii=False)` without its quotes).
pub(crate) fn json_escaped(text: &str) -> Vec<u8> {
    let mut out = Vec::with_capacity(text.len());
    for &b in text.as_bytes() {
        match b {
            b'"' => out.extend_from_slice(b"\\\""),
            b'\\' => out.extend_from_slice(b"\\\\"),
            0x08 => out.extend_from_slice(b"\\b"),
            0x0c => out.extend_from_slice(b"\\f"),
            b'\n' => out.extend_from_slice(b"\\n"),
            b'\r' => out.extend_from_slice(b"\\r"),
            b'\t' => out.extend_from_slice(b"\\t"),
            0..=0x1f => out.extend_from_slice(format!("\\u{b:04x}").as_bytes()),
            _ => out.push(b),
        }
    }
    out
}

/// `text` as the inside of a double-quoted attribute in an XML comment: `& < > "` as entity
/// references, controls below 0x20 as `&#xH;`, and a `-` right after another `-` as `&#45;`
/// (a comment may not hold `--`).
fn xml_escaped(text: &str) -> Vec<u8> {
    let mut out = Vec::with_capacity(text.len());
    let mut dash = false;
    for &b in text.as_bytes() {
        match b {
            b'&' => out.extend_from_slice(b"&amp;"),
            b'<' => out.extend_from_slice(b"&lt;"),
            b'>' => out.extend_from_slice(b"&gt;"),
            b'"' => out.extend_from_slice(b"&quot;"),
            b'-' if dash => out.extend_from_slice(b"&#45;"),
            0..=0x1f => out.extend_from_slice(format!("&#x{b:x};").as_bytes()),
            _ => out.push(b),
        }
        dash = b == b'-' && !dash;
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    const ORIGIN: Origin = Origin {
        chunk: 3,
        offset: 0x31a08,
        recovered: true,
        checksum: Checksum::Bad,
    };

    #[test]
    fn json_member_first() {
        let p = Provenance::new("logs/a \"b\"\\c\t.evtx");
        let mut buf = b"Record 9\n{\"recovered\":true,\"Event\":1}\n".to_vec();
        p.mark(&mut buf, 9, false, ORIGIN);
        let want = "Record 9\n{\"provenance\":{\"file\":\"logs/a \\\"b\\\"\\\\c\\t.evtx\",\
                    \"chunk\":3,\"offset\":203272,\"recovered\":true,\"checksum\":\"bad\"},\
                    \"recovered\":true,\"Event\":1}\n";
        assert_eq!(String::from_utf8(buf).unwrap(), want);
    }

    #[test]
    fn xml_comment_after_the_declaration() {
        let p = Provenance::new("a--b<&>\"-\u{1}.evtx");
        let decl = std::str::from_utf8(XML_DECL).unwrap();
        let mut buf = format!("{decl}<!-- recovered -->\n<Event/>\n").into_bytes();
        p.mark(&mut buf, 0, true, ORIGIN);
        let want = format!(
            "{decl}<!-- provenance file=\"a-&#45;b&lt;&amp;&gt;&quot;-&#x1;.evtx\" chunk=\"3\" \
             offset=\"0x31a08\" recovered=\"true\" checksum=\"bad\" -->\n\
             <!-- recovered -->\n<Event/>\n"
        );
        assert_eq!(String::from_utf8(buf).unwrap(), want);
        // Three dashes: the second escaped, the third follows an escaped one.
        assert_eq!(xml_escaped("a---b"), b"a-&#45;-b");
        assert_eq!(json_escaped("\u{1f}é"), "\\u001fé".as_bytes());
    }

    #[test]
    fn checksum_words() {
        let words = [Checksum::Unchecked, Checksum::Ok, Checksum::Bad].map(Checksum::text);
        assert_eq!(words, ["unchecked", "ok", "bad"]);
    }
}
