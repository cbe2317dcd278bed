//! Where chunk bytes come from (contract sections 2, 3): one abstraction, [`ChunkSource`], over
//! the caller's bytes ([`EvtxFile`], zero-copy) and a file read one 64 KiB slot at a time with
//! positioned reads ([`Input`]).
//!
//! Why positioned reads and not a mapping: a mapping's pages stay resident (fault-around maps
//! 64 KiB around every touched page, so the order scan alone maps the whole file), and a file
//! that shrinks under a mapping kills the process with SIGBUS. A `pread` into a worker's own
//! [`ChunkSlot`] keeps memory at a few chunks per worker whatever the file size, and a short read
//! is just an incomplete chunk.
//!
//! Invariants of an [`Input`]:
//! * the file is only ever read (opened read-only by the caller, never written);
//! * its length is the one seen at open: bytes appended later are ignored, and a slot inside the
//!   original `chunk_slots` that reads short (the file shrank, or an I/O error) comes back short,
//!   which the renderer reports as `incomplete chunk` and the run goes on.

use crate::chunk::{ChunkHeader, CHUNK_HEADER_SIZE, CHUNK_MAGIC};
use crate::dump::EvtxFile;
use crate::error::FatalError;
use crate::file_header::{chunk_offset, FileHeader, CHUNK_SIZE, FILE_HEADER_BLOCK};
use std::fs::File;
use std::io::{self, Read};
use std::path::Path;

/// A worker's buffer for one chunk slot, allocated (64 KiB) on the first read from a file and
/// reused for every chunk after; never allocated for borrowed bytes.
#[derive(Debug, Default)]
pub struct ChunkSlot {
    buf: Vec<u8>,
    /// Where the window starts in `buf`: the first cache-line boundary (PERF.md H10e: the kernel's
    /// copy into a 16-byte-aligned heap block cost more than into an aligned one).
    start: usize,
}

/// The window's alignment, as the Zig engine's `ChunkSlot` (`align(64)`).
const WINDOW_ALIGN: usize = 64;

impl ChunkSlot {
    /// The first `len` bytes read into this window by [`ChunkSource::chunk`] (`len` being the
    /// length of the slice it returned): a chunk read on one thread, rendered on another.
    pub fn filled(&self, len: usize) -> &[u8] {
        &self.buf[self.start..self.start + len]
    }

    /// The first `len` bytes of the window, grown to a full chunk on first use.
    fn space(&mut self, len: usize) -> &mut [u8] {
        debug_assert!(len <= CHUNK_SIZE);
        if self.buf.len() < CHUNK_SIZE + WINDOW_ALIGN {
            self.buf = vec![0; CHUNK_SIZE + WINDOW_ALIGN];
            self.start = self.buf.as_ptr().align_offset(WINDOW_ALIGN);
            debug_assert!(self.start < WINDOW_ALIGN);
        }
        &mut self.buf[self.start..self.start + len]
    }
}

/// The chunks of an EVTX input, by slot number. Implemented by [`EvtxFile`] (borrowed bytes)
/// and [`Input`] (a file read through [`ChunkSlot`] windows); `dump`, the renderer and the C ABI
/// only see this trait.
pub trait ChunkSource: Sync {
    /// The parsed file header.
    fn header(&self) -> &FileHeader;

    /// Input length in bytes (for a file: as seen when it was opened).
    fn len(&self) -> u64;

    /// Whether the input is empty (never, once a header has been parsed).
    fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Number of chunk slots (3.1), from [`ChunkSource::len`].
    fn chunk_slots(&self) -> usize {
        self.header()
            .chunk_slots(usize::try_from(self.len()).unwrap_or(usize::MAX))
    }

    /// The first `max` (at most 65536) bytes of chunk slot `slot`: borrowed from the source, or
    /// read into `window`. Shorter when the input ends inside the slot or a read comes back
    /// short; empty past the end.
    fn slot_bytes<'s>(&'s self, slot: u32, max: usize, window: &'s mut ChunkSlot) -> &'s [u8];

    /// The whole slot (shorter than 65536 bytes when incomplete).
    fn chunk<'s>(&'s self, slot: u32, window: &'s mut ChunkSlot) -> &'s [u8] {
        self.slot_bytes(slot, CHUNK_SIZE, window)
    }

    /// Whether `bytes`, read from slot `slot`, are the cut last chunk (`shared-fixtures/README.md`,
    /// "A log cut inside its last chunk"): the slot the input, as opened, ends inside, starting
    /// with the chunk magic. A slot that reads short because the file shrank since it was
    /// opened is not one (it is a plain `incomplete chunk`). The chunk order and the renderer
    /// both ask this, so they cannot disagree.
    fn is_cut_slot(&self, slot: u32, bytes: &[u8]) -> bool {
        bytes.len() < CHUNK_SIZE
            && chunk_offset(slot) + CHUNK_SIZE as u64 > self.len()
            && bytes.starts_with(CHUNK_MAGIC)
    }

    /// The warning line to print when the header CRC is wrong (section 2), if it is.
    fn checksum_warning(&self) -> Option<String> {
        let header = self.header();
        header
            .checksum_mismatch()
            .then(|| header.checksum_warning())
    }

    /// The oldest chunk (3.3 step 1), from the 512-byte chunk headers only. The scan stops at
    /// the first header that cannot be read whole (the file shrank), as the reference's does.
    fn oldest_slot(&self) -> u32 {
        let mut window = ChunkSlot::default();
        let mut best: Option<(u64, u32)> = None;
        for slot in 0..slot_limit(self.chunk_slots()) {
            let head = self.slot_bytes(slot, CHUNK_HEADER_SIZE, &mut window);
            if head.len() < CHUNK_HEADER_SIZE {
                break;
            }
            if let Some(h) = ChunkHeader::parse(head) {
                if h.first_record_id > h.last_record_id {
                    continue;
                }
                if best.is_none_or(|(id, _)| h.first_record_id < id) {
                    best = Some((h.first_record_id, slot));
                }
            }
        }
        best.map_or(0, |(_, slot)| slot)
    }

    /// The chunk slots in output order (3.3), including failing slots inside the file (they
    /// become chunk errors) and excluding slots past `chunk_slots` that fail. Only slots past
    /// `chunk_slots` (at most a couple, when the header block size is not 4096) are read whole.
    fn chunk_order(&self, validate_checksums: bool) -> ChunkOrder {
        let slots = slot_limit(self.chunk_slots());
        let oldest = self.oldest_slot();
        let mut window = ChunkSlot::default();
        let mut end = slots.max(oldest);
        // First pass: to the end of the file. Past `chunk_slots`, a slot that fails steps 1–4
        // ends the pass silently (an all-zero slot does not fail: it renders nothing).
        while end < u32::MAX && !slot_fails(self.chunk(end, &mut window), validate_checksums) {
            end += 1;
        }
        // A trailing partial slot that starts like a chunk ends the first pass with an error
        // line (our rule, `shared-fixtures/README.md`), where the reference is silent.
        if end < u32::MAX && self.is_cut_slot(end, self.chunk(end, &mut window)) {
            end += 1;
        }
        ChunkOrder {
            oldest,
            first_end: end,
            wrap_end: oldest.min(slots),
        }
    }
}

/// Slot numbers are `u32` (2^32 slots is 256 TiB).
fn slot_limit(slots: usize) -> u32 {
    u32::try_from(slots).unwrap_or(u32::MAX)
}

/// Whether a slot's bytes would fail steps 1–4 of 3.2 (or the slot is empty).
fn slot_fails(bytes: &[u8], validate: bool) -> bool {
    if bytes.len() < CHUNK_SIZE {
        return true;
    }
    match ChunkHeader::parse(bytes) {
        None => !crate::bytes::all_zero(bytes),
        Some(h) => validate && h.validate_checksums(bytes).is_err(),
    }
}

/// The output order of the chunk slots (3.3): `oldest..first_end`, then `0..wrap_end`. Three
/// numbers instead of a list, so the order of a 20 GB log costs nothing.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ChunkOrder {
    oldest: u32,
    first_end: u32,
    wrap_end: u32,
}

impl ChunkOrder {
    /// Number of slots in the order.
    pub fn len(&self) -> usize {
        (self.first_end - self.oldest) as usize + self.wrap_end as usize
    }

    /// Whether there is no slot at all.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The `i`-th slot in output order.
    pub fn get(&self, i: usize) -> Option<u32> {
        let first = (self.first_end - self.oldest) as usize;
        if i < first {
            Some(self.oldest + i as u32)
        } else if i - first < self.wrap_end as usize {
            Some((i - first) as u32)
        } else {
            None
        }
    }

    /// The slots in output order.
    pub fn iter(&self) -> impl Iterator<Item = u32> {
        (self.oldest..self.first_end).chain(0..self.wrap_end)
    }
}

impl ChunkSource for EvtxFile<'_> {
    fn header(&self) -> &FileHeader {
        EvtxFile::header(self)
    }

    fn len(&self) -> u64 {
        self.data().len() as u64
    }

    fn slot_bytes<'s>(&'s self, slot: u32, max: usize, _window: &'s mut ChunkSlot) -> &'s [u8] {
        let bytes = self.chunk_bytes(slot);
        &bytes[..bytes.len().min(max)]
    }
}

/// An EVTX file read through positioned reads: the 4 KiB header at open, then one slot at a
/// time into the caller's [`ChunkSlot`]. Shared by reference between workers (`pread` needs no
/// file position).
#[derive(Debug)]
pub struct Input {
    file: File,
    header: FileHeader,
    len: u64,
}

impl Input {
    /// Reads and checks the header block of `file` (fatal errors of section 2). `file` must
    /// allow positioned reads (a regular file; see [`spool`] for anything else); its length
    /// now is the length for the whole run.
    pub fn open(file: File) -> Result<Input, FatalError> {
        let (block, len) = Self::header_block(&file)?;
        let header = FileHeader::parse_block(&block, len)?;
        Ok(Input { file, header, len })
    }

    /// Like [`Input::open`], checking only that the header block is there with its magic:
    /// for `info`, which reports on a header the dump refuses (its block size past the end).
    pub fn open_lenient(file: File) -> Result<Input, FatalError> {
        let (block, len) = Self::header_block(&file)?;
        let header = FileHeader::read_block(&block)?;
        Ok(Input { file, header, len })
    }

    /// The first 4096 bytes of `file` and its length now.
    fn header_block(file: &File) -> Result<(Vec<u8>, u64), FatalError> {
        let len = file
            .metadata()
            .map_err(|e| FatalError::Other(format!("cannot read the input's size: {e}")))?
            .len();
        let mut block = vec![0u8; FILE_HEADER_BLOCK];
        let want = len.min(FILE_HEADER_BLOCK as u64) as usize;
        let got = read_full_at(file, &mut block[..want], 0);
        if got < FILE_HEADER_BLOCK {
            return Err(FatalError::TooShort(got));
        }
        Ok((block, len))
    }

    /// The underlying file (to compare its identity with an output path).
    pub fn file(&self) -> &File {
        &self.file
    }
}

impl ChunkSource for Input {
    fn header(&self) -> &FileHeader {
        &self.header
    }

    fn len(&self) -> u64 {
        self.len
    }

    fn slot_bytes<'s>(&'s self, slot: u32, max: usize, window: &'s mut ChunkSlot) -> &'s [u8] {
        let start = chunk_offset(slot);
        // Never past the length seen at open: growth is ignored.
        let want = self
            .len
            .saturating_sub(start)
            .min(max.min(CHUNK_SIZE) as u64) as usize;
        if want == 0 {
            return &[];
        }
        let buf = window.space(want);
        let got = read_full_at(&self.file, buf, start);
        &buf[..got]
    }
}

/// Reads `buf.len()` bytes at `offset`, or fewer at the end of the file or on an I/O error (a
/// short read is an incomplete chunk to the caller, never a panic or a signal).
fn read_full_at(file: &File, buf: &mut [u8], offset: u64) -> usize {
    let mut done = 0;
    while done < buf.len() {
        match read_at(file, &mut buf[done..], offset + done as u64) {
            Ok(0) => break,
            Ok(n) => done += n,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(_) => break,
        }
    }
    done
}

#[cfg(unix)]
fn read_at(file: &File, buf: &mut [u8], offset: u64) -> io::Result<usize> {
    std::os::unix::fs::FileExt::read_at(file, buf, offset)
}

#[cfg(windows)]
fn read_at(file: &File, buf: &mut [u8], offset: u64) -> io::Result<usize> {
    std::os::windows::fs::FileExt::seek_read(file, buf, offset)
}

/// Whether `file` can be read with positioned reads as a file of known length (a regular
/// file); anything else (a pipe, a terminal, a character device) goes through [`spool`].
pub fn is_regular(file: &File) -> bool {
    file.metadata().is_ok_and(|m| m.is_file())
}

/// Copies `reader` (standard input, a pipe) into an unlinked temporary file in `dir`, in
/// bounded blocks, and returns it for [`Input::open`]; `None` when `reader` gave no bytes.
///
/// Why a file and not memory: the wrapped-log order (3.3) needs every chunk header before the
/// first chunk is rendered, so the input must be kept somewhere; the reference spools too.
/// The name is removed right after creation, so nothing is left behind whatever happens next.
pub fn spool(reader: &mut dyn Read, dir: &Path) -> io::Result<Option<File>> {
    let mut file = create_unlinked(dir)?;
    let copied = io::copy(reader, &mut file)?;
    if copied == 0 {
        return Ok(None);
    }
    Ok(Some(file))
}

/// A new, private, already unlinked read-write file in `dir`.
fn create_unlinked(dir: &Path) -> io::Result<File> {
    use std::sync::atomic::{AtomicU64, Ordering};
    static COUNTER: AtomicU64 = AtomicU64::new(0);
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.subsec_nanos());
    for _ in 0..100 {
        let n = COUNTER.fetch_add(1, Ordering::Relaxed);
        let path = dir.join(format!(
            ".evtx-spool-{}-{nanos:08x}-{n}",
            std::process::id()
        ));
        let mut options = std::fs::OpenOptions::new();
        options.read(true).write(true).create_new(true);
        #[cfg(unix)]
        std::os::unix::fs::OpenOptionsExt::mode(&mut options, 0o600);
        match options.open(&path) {
            Ok(file) => {
                std::fs::remove_file(&path)?;
                return Ok(file);
            }
            Err(e) if e.kind() == io::ErrorKind::AlreadyExists => continue,
            Err(e) => return Err(e),
        }
    }
    Err(io::Error::new(
        io::ErrorKind::AlreadyExists,
        "no free temporary file name",
    ))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::file_header::FILE_MAGIC;

    fn header_block() -> Vec<u8> {
        let mut data = vec![0u8; FILE_HEADER_BLOCK];
        data[..8].copy_from_slice(FILE_MAGIC);
        data[40..42].copy_from_slice(&4096u16.to_le_bytes());
        data
    }

    fn chunk(first: u64, last: u64) -> Vec<u8> {
        let mut c = vec![0u8; CHUNK_SIZE];
        c[..8].copy_from_slice(crate::chunk::CHUNK_MAGIC);
        c[24..32].copy_from_slice(&first.to_le_bytes());
        c[32..40].copy_from_slice(&last.to_le_bytes());
        c
    }

    fn temp_file(bytes: &[u8]) -> File {
        use std::io::{Seek, Write};
        let mut f = create_unlinked(&std::env::temp_dir()).unwrap();
        f.write_all(bytes).unwrap();
        f.rewind().unwrap();
        f
    }

    #[test]
    fn order_is_the_same_from_bytes_and_from_a_file() {
        // Oldest chunk in slot 2 of 3: 2, then wrap to 0, 1.
        let mut data = header_block();
        for (first, last) in [(10, 19), (20, 29), (1, 9)] {
            data.extend(chunk(first, last));
        }
        data.extend([7u8; 100]); // a partial trailing slot: not in the order
        let file = EvtxFile::open(&data).unwrap();
        let input = Input::open(temp_file(&data)).unwrap();
        let expected = vec![2, 0, 1];
        assert_eq!(file.chunk_order(false).iter().collect::<Vec<_>>(), expected);
        let order = input.chunk_order(false);
        assert_eq!(order.iter().collect::<Vec<_>>(), expected);
        assert_eq!(
            (0..order.len())
                .map(|i| order.get(i).unwrap())
                .collect::<Vec<_>>(),
            expected
        );
        assert_eq!(order.get(3), None);
        let mut w = ChunkSlot::default();
        for slot in 0..4 {
            assert_eq!(
                input.chunk(slot, &mut w).to_vec(),
                file.chunk_bytes(slot).to_vec()
            );
        }
    }

    #[test]
    fn a_shrunk_file_reads_short_and_growth_is_ignored() {
        use std::io::Write;
        let mut data = header_block();
        data.extend(chunk(1, 9));
        data.extend(chunk(10, 19));
        let f = temp_file(&data);
        let input = Input::open(f.try_clone().unwrap()).unwrap();
        assert_eq!(input.chunk_slots(), 2);
        // Grows: the new bytes are not read.
        let mut g = f.try_clone().unwrap();
        g.write_all(&[0xAA; 5000]).unwrap();
        let mut w = ChunkSlot::default();
        assert_eq!(input.chunk(2, &mut w).len(), 0);
        // Shrinks inside slot 1: a short read, not a signal.
        f.set_len((FILE_HEADER_BLOCK + CHUNK_SIZE + 300) as u64)
            .unwrap();
        assert_eq!(input.chunk(0, &mut w).len(), CHUNK_SIZE);
        assert_eq!(input.chunk(1, &mut w).len(), 300);
        f.set_len(10).unwrap();
        assert_eq!(input.chunk(0, &mut w).len(), 0);
    }

    #[test]
    fn open_checks_the_header() {
        assert_eq!(
            Input::open(temp_file(&[0; 100])).unwrap_err(),
            FatalError::TooShort(100)
        );
        let mut data = header_block();
        data[0] = b'X';
        assert_eq!(
            Input::open(temp_file(&data)).unwrap_err(),
            FatalError::BadMagic
        );
    }

    #[test]
    fn a_window_starts_on_a_cache_line_and_stays_there() {
        let mut slot = ChunkSlot::default();
        let first = slot.space(CHUNK_SIZE).as_ptr();
        assert_eq!(first.align_offset(WINDOW_ALIGN), 0);
        assert_eq!(slot.space(512).as_ptr(), first, "reused, not reallocated");
        assert_eq!(slot.filled(CHUNK_SIZE).as_ptr(), first);
    }

    #[test]
    fn spool_copies_everything_and_leaves_no_name() {
        let dir = std::env::temp_dir().join(format!("evtx-spool-test-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let bytes: Vec<u8> = (0..300_000u32).map(|i| (i % 251) as u8).collect();
        let f = spool(&mut &bytes[..], &dir).unwrap().unwrap();
        let mut back = vec![0; bytes.len()];
        assert_eq!(read_full_at(&f, &mut back, 0), bytes.len());
        assert_eq!(back, bytes);
        assert_eq!(std::fs::read_dir(&dir).unwrap().count(), 0);
        assert!(spool(&mut &[][..], &dir).unwrap().is_none());
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
