//! The evtx 0.15.1 crate behind the `Engine` trait of `evtx_abi::front`.
//!
//! The bytes come from the same calls `evtx_dump` makes (`chunks_xml_bytes` /
//! `chunks_json_bytes`, one rendered buffer per chunk), so they equal its stdout by
//! construction. The push path (`dump`) is `evtx_dump`'s own loop: a chunk without errors and
//! without an event filter is one write. The pull path runs the same iterator on a thread of
//! its own (the iterator borrows the parser, so it cannot live in the handle) and adds what the
//! crate does not report per record — chunk slot, file offset, FILETIME — from a second walk
//! over the chunks; pull numbers are therefore not a fair speed measure of the reference.

use crate::filter::TextFilter;
use evtx::err::{ChunkError, DeserializationError, EvtxError};
use evtx::mta::{MtaError, MtaFile};
use evtx::wevt_templates::wevtcache::{EntryKind, WevtCacheFileError, WevtCacheReader};
use evtx::wevt_templates::{WevtCache, WevtCacheError};
use evtx::{EvtxParser, ParserSettings, RenderedChunk, RenderedChunkItem};
use evtx_abi::abi::{evtx_format, evtx_status, EVTX_CHECKSUM_UNCHECKED, EVTX_RECORD_ID_UNKNOWN};
use evtx_abi::front::{Engine, Failure, Input, Item, Library, Settings, Sink};
use std::ffi::CStr;
use std::io::Cursor;
use std::path::Path;
use std::sync::mpsc::{sync_channel, Receiver, SyncSender};
use std::sync::Arc;
use std::thread::JoinHandle;

const FILE_HEADER_SIZE: u64 = 4096;
const CHUNK_SIZE: u64 = 65536;
const CHUNK_HEADER_SIZE: usize = 512;
const RECORD_HEADER_SIZE: usize = 24;

/// The input: the caller's buffer, or a file read into memory.
#[derive(Clone)]
enum Bytes {
    Borrowed(&'static [u8]),
    Owned(Arc<Vec<u8>>),
}

impl AsRef<[u8]> for Bytes {
    fn as_ref(&self) -> &[u8] {
        match self {
            Bytes::Borrowed(bytes) => bytes,
            Bytes::Owned(bytes) => bytes,
        }
    }
}

type Parser = EvtxParser<Cursor<Bytes>>;

pub(crate) struct Backend {
    settings: Settings,
    parser_settings: ParserSettings,
    bytes: Bytes,
    state: State,
}

enum State {
    /// Nothing pulled or dumped yet.
    Fresh,
    Pulling(Puller),
    Done,
}

impl Library for Backend {
    const NAME: &'static CStr = c"reference";
    const VERSION: &'static CStr = c"0.15.1";

    fn open(input: Input<'_>, settings: Settings) -> Result<Self, Failure> {
        let bytes = match input {
            Input::Buffer(bytes) => Bytes::Borrowed(bytes),
            Input::Path(path) => match std::fs::read(path) {
                Ok(bytes) => Bytes::Owned(Arc::new(bytes)),
                Err(error) => {
                    return Err(Failure::new(
                        evtx_status::Io,
                        format!("cannot read {}: {error}", path.display()),
                    ))
                }
            },
        };
        let ansi_codec = match settings.ansi_codec.as_deref() {
            None => encoding_rs::WINDOWS_1252,
            Some(label) => match encoding_rs::Encoding::for_label(label.as_bytes()) {
                Some(codec) if codec.is_ascii_compatible() => codec,
                Some(_) => {
                    return Err(Failure::new(
                        evtx_status::InvalidOptions,
                        format!("`{label}` is not an ASCII-compatible encoding"),
                    ))
                }
                None => {
                    return Err(Failure::new(
                        evtx_status::InvalidOptions,
                        format!("unknown encoding `{label}`"),
                    ))
                }
            },
        };
        let parser_settings = ParserSettings::new()
            .num_threads(settings.threads)
            .validate_checksums(settings.validate_checksums)
            .separate_json_attributes(settings.separate_json_attributes)
            .indent(settings.indent)
            .ansi_codec(ansi_codec)
            .recover_records(settings.recover_records);
        // Reads the file header, as `evtx_dump` does before anything else; then the side files.
        open_parser(&bytes, &parser_settings)?;
        let (wevt_cache, mta) = settings.load_side_files(load_wevt_cache, load_mta)?;
        let parser_settings = parser_settings.wevt_cache(wevt_cache).mta(mta);
        Ok(Backend {
            settings,
            parser_settings,
            bytes,
            state: State::Fresh,
        })
    }
}

impl Engine for Backend {
    fn next(&mut self) -> Result<Option<Item<'_>>, Failure> {
        if let State::Fresh = self.state {
            self.state = State::Pulling(Puller::start(
                self.bytes.clone(),
                self.parser_settings.clone(),
                Mode {
                    json: json(&self.settings),
                    show: self.settings.show_record_number,
                    keep: TextFilter::new(&self.settings),
                },
            ));
        }
        match &mut self.state {
            State::Fresh => unreachable!("started above"),
            State::Done => Ok(None),
            State::Pulling(puller) => {
                if !puller.advance()? {
                    self.state = State::Done;
                    return Ok(None);
                }
                match &self.state {
                    State::Pulling(puller) => Ok(Some(puller.item())),
                    _ => unreachable!("still pulling"),
                }
            }
        }
    }

    fn dump(&mut self, sink: &mut dyn Sink) -> Result<(), Failure> {
        if !matches!(self.state, State::Fresh) {
            // Carry on from where pulling left off.
            return self.drain(sink);
        }
        self.state = State::Done;
        let mut parser = open_parser(&self.bytes, &self.parser_settings)?;
        let show = self.settings.show_record_number;
        let chunks: Box<dyn Iterator<Item = RenderedChunk>> = if json(&self.settings) {
            Box::new(parser.chunks_json_bytes(show))
        } else {
            Box::new(parser.chunks_xml_bytes(show))
        };
        let keep = TextFilter::new(&self.settings);
        let plain = self.settings.event_ranges.is_empty() && keep.is_empty();
        for chunk in chunks {
            let failed = chunk
                .items
                .iter()
                .any(|item| matches!(item, RenderedChunkItem::Failed(_)));
            // `evtx_dump`'s fast path: one write per chunk.
            if plain && !failed {
                if !chunk.data.is_empty()
                    && sink
                        .records(&chunk.data, chunk.items.len() as u64)
                        .is_break()
                {
                    break;
                }
                continue;
            }
            let mut start = 0;
            for item in &chunk.items {
                let flow = match item {
                    RenderedChunkItem::Record {
                        event_record_id,
                        end,
                    } => {
                        let data = &chunk.data[start..*end];
                        start = *end;
                        if !keep.keeps(data) {
                            continue;
                        }
                        sink.record(&Item {
                            status: evtx_status::Ok,
                            record_id: *event_record_id,
                            filetime: 0,
                            file_offset: 0,
                            chunk_index: 0,
                            data,
                            message: "",
                            recovered: is_recovered(data),
                            // Unknown from the reference's output, as the chunk index.
                            checksum: EVTX_CHECKSUM_UNCHECKED,
                            extra: false,
                        })
                    }
                    RenderedChunkItem::Failed(error) => {
                        let message = error_message(error);
                        sink.error(&error_item(error, &message))
                    }
                };
                if flow.is_break() {
                    return Ok(());
                }
            }
        }
        Ok(())
    }
}

/// JSON or JSONL (the crate's JSON; `-o jsonl` only turns indentation and banner off).
fn json(settings: &Settings) -> bool {
    settings.format != evtx_format::Xml
}

fn open_parser(bytes: &Bytes, settings: &ParserSettings) -> Result<Parser, Failure> {
    EvtxParser::from_read_seek(Cursor::new(bytes.clone()))
        .map(|parser| parser.with_configuration(settings.clone()))
        .map_err(|error| Failure::new(evtx_status::NotEvtx, error_message(&error)))
}

/// `evtx_dump`'s `load_wevt_cache_from_wevtcache_file`; `Io` for the reader's `Io` variant.
fn load_wevt_cache(path: &Path) -> Result<Arc<WevtCache>, Failure> {
    let mut cache = WevtCache::new();
    let mut reader = WevtCacheReader::open(path).map_err(|e| cache_failure(&e))?;
    while let Some((kind, bytes)) = reader.next_entry().map_err(|e| cache_failure(&e))? {
        match kind {
            // Only the message, as `evtx_dump`'s `format_err!("{e}")`.
            EntryKind::Crim => {
                let refused = |e: String| Failure::new(evtx_status::InvalidOptions, e);
                cache
                    .add_wevt_blob(bytes)
                    .map_err(|e: WevtCacheError| refused(e.to_string()))?;
            }
        }
    }
    Ok(Arc::new(cache))
}

#[cold]
fn cache_failure(error: &WevtCacheFileError) -> Failure {
    let status = match error {
        WevtCacheFileError::Io { .. } => evtx_status::Io,
        _ => evtx_status::InvalidOptions,
    };
    Failure::new(status, chain(error))
}

/// `evtx::mta::MtaFile::from_path`; `Io` when the file could not be read.
fn load_mta(path: &Path) -> Result<Arc<MtaFile>, Failure> {
    MtaFile::from_path(path).map(Arc::new).map_err(|error| {
        let status = match error {
            MtaError::Io { .. } => evtx_status::Io,
            _ => evtx_status::InvalidOptions,
        };
        Failure::new(status, chain(&error))
    })
}

/// An error as `evtx_dump` prints it (anyhow's `{:?}`): the message, then its causes.
fn chain(error: &dyn std::error::Error) -> String {
    let mut message = error.to_string();
    let mut source = error.source();
    if source.is_some() {
        message.push_str("\n\nCaused by:");
    }
    while let Some(cause) = source {
        message.push_str("\n    ");
        message.push_str(&cause.to_string());
        source = cause.source();
    }
    message
}

/// The error and its causes on one line.
fn error_message(error: &EvtxError) -> String {
    let mut message = error.to_string();
    let mut source = std::error::Error::source(error);
    while let Some(cause) = source {
        message.push_str(": ");
        message.push_str(&cause.to_string());
        source = cause.source();
    }
    message
}

/// The shared error KIND of a chunk or record error of the crate.
fn error_kind(error: &EvtxError) -> evtx_status {
    match error {
        EvtxError::FailedToParseChunk { source, .. } => match **source {
            ChunkError::IncompleteChunk | ChunkError::FailedToSeekToChunk(_) => {
                evtx_status::IncompleteChunk
            }
            ChunkError::FailedToParseChunkHeader(_) => evtx_status::BadChunkMagic,
            ChunkError::InvalidChunkHeaderChecksum { .. } => evtx_status::BadChunkHeaderChecksum,
            ChunkError::InvalidChunkChecksum { .. } => evtx_status::BadChunkRecordsChecksum,
            ChunkError::InvalidFreeSpaceOffset { .. } => evtx_status::BadChunkFreeSpaceOffset,
            ChunkError::FailedToBuildStringCache { .. } => evtx_status::BadStringTable,
        },
        EvtxError::FailedToReadRecordAt { source, .. } => match &**source {
            EvtxError::DeserializationError(
                DeserializationError::InvalidEvtxRecordHeaderMagic { .. },
            ) => evtx_status::BadRecordMagic,
            EvtxError::DeserializationError(DeserializationError::InvalidRecordTimestamp {
                ..
            }) => evtx_status::BadRecordTimestamp,
            EvtxError::DeserializationError(DeserializationError::Truncated { .. }) => {
                evtx_status::TruncatedRecordHeader
            }
            _ => evtx_status::BadRecordSize,
        },
        _ => evtx_status::BadBinxml,
    }
}

/// An error item with the location the error itself carries.
fn error_item<'a>(error: &EvtxError, message: &'a str) -> Item<'a> {
    let mut item = Item {
        status: error_kind(error),
        record_id: EVTX_RECORD_ID_UNKNOWN,
        filetime: 0,
        file_offset: 0,
        chunk_index: 0,
        data: &[],
        message,
        recovered: false,
        checksum: EVTX_CHECKSUM_UNCHECKED,
        extra: false,
    };
    match error {
        EvtxError::FailedToParseChunk { chunk_id, .. } => {
            item.chunk_index = *chunk_id as u32;
            item.file_offset = chunk_offset(*chunk_id);
        }
        EvtxError::FailedToReadRecordAt { chunk, offset, .. } => {
            item.chunk_index = chunk.unwrap_or(0) as u32;
            item.file_offset = chunk.map_or(0, |chunk| chunk_offset(chunk) + offset);
        }
        EvtxError::FailedToParseRecord { record_id, .. } => item.record_id = *record_id,
        _ => {}
    }
    item
}

fn chunk_offset(chunk: u64) -> u64 {
    FILE_HEADER_SIZE + chunk * CHUNK_SIZE
}

/// One rendered chunk with per-record metadata, as the pull thread sends it.
struct PulledChunk {
    data: Vec<u8>,
    entries: Vec<Entry>,
}

struct Entry {
    status: evtx_status,
    record_id: u64,
    filetime: u64,
    file_offset: u64,
    chunk_index: u32,
    /// `data[start..end]` are the record's bytes.
    start: usize,
    end: usize,
    message: String,
    recovered: bool,
}

/// The pull side: a thread runs `evtx_dump`'s chunk iterator and sends chunks through a
/// bounded channel, so at most a few rendered chunks wait in memory.
struct Puller {
    receiver: Option<Receiver<PulledChunk>>,
    thread: Option<JoinHandle<()>>,
    chunk: PulledChunk,
    /// Index of the current entry in `chunk.entries`, plus one (0 before the first).
    next_entry: usize,
}

impl Puller {
    fn start(bytes: Bytes, settings: ParserSettings, mode: Mode) -> Puller {
        let (sender, receiver) = sync_channel(2);
        let thread = std::thread::spawn(move || pull_thread(bytes, settings, mode, sender));
        Puller {
            receiver: Some(receiver),
            thread: Some(thread),
            chunk: PulledChunk {
                data: Vec::new(),
                entries: Vec::new(),
            },
            next_entry: 0,
        }
    }

    /// Moves to the next entry; false at the end.
    fn advance(&mut self) -> Result<bool, Failure> {
        loop {
            if self.next_entry < self.chunk.entries.len() {
                self.next_entry += 1;
                return Ok(true);
            }
            let received = match &self.receiver {
                Some(receiver) => receiver.recv().ok(),
                None => None,
            };
            match received {
                Some(chunk) => {
                    self.chunk = chunk;
                    self.next_entry = 0;
                }
                None => {
                    self.receiver = None;
                    if let Some(thread) = self.thread.take() {
                        if thread.join().is_err() {
                            return Err(Failure::new(
                                evtx_status::Internal,
                                "the reference parser panicked",
                            ));
                        }
                    }
                    return Ok(false);
                }
            }
        }
    }

    fn item(&self) -> Item<'_> {
        let entry = &self.chunk.entries[self.next_entry - 1];
        Item {
            status: entry.status,
            record_id: entry.record_id,
            filetime: entry.filetime,
            file_offset: entry.file_offset,
            chunk_index: entry.chunk_index,
            data: &self.chunk.data[entry.start..entry.end],
            message: &entry.message,
            recovered: entry.recovered,
            checksum: EVTX_CHECKSUM_UNCHECKED,
            extra: false,
        }
    }
}

impl Drop for Puller {
    fn drop(&mut self) {
        // Closing the channel makes the thread's next send fail, so it ends after at most the
        // chunk it is rendering.
        self.receiver = None;
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }
}

/// What the pull thread renders and keeps.
struct Mode {
    json: bool,
    show: bool,
    keep: TextFilter,
}

fn pull_thread(
    bytes: Bytes,
    settings: ParserSettings,
    mode: Mode,
    sender: SyncSender<PulledChunk>,
) {
    let Mode { json, show, keep } = mode;
    let (Ok(mut parser), Ok(mut walker)) = (
        open_parser(&bytes, &settings),
        open_parser(&bytes, &settings),
    ) else {
        return;
    };
    let chunks: Box<dyn Iterator<Item = RenderedChunk>> = if json {
        Box::new(parser.chunks_json_bytes(show))
    } else {
        Box::new(parser.chunks_xml_bytes(show))
    };
    // The same walk over the chunks, in the same order, for what `chunks` does not say.
    let mut slots = walker.chunks();
    for rendered in chunks {
        let slot = slots.next();
        let (chunk_index, chunk_bytes): (Option<u64>, &[u8]) = match &slot {
            Some(Ok(chunk)) => (chunk.number, &chunk.data),
            _ => (None, &[]),
        };
        let mut scan = RecordScan {
            bytes: chunk_bytes,
            cursor: CHUNK_HEADER_SIZE,
        };
        let mut entries = Vec::with_capacity(rendered.items.len());
        let mut start = 0;
        for item in &rendered.items {
            let entry = match item {
                RenderedChunkItem::Record {
                    event_record_id,
                    end,
                } => {
                    let (offset, filetime) = scan.find(*event_record_id);
                    if !keep.keeps(&rendered.data[start..*end]) {
                        start = *end;
                        continue;
                    }
                    let entry = Entry {
                        status: evtx_status::Ok,
                        record_id: *event_record_id,
                        filetime,
                        file_offset: locate(chunk_index, offset),
                        chunk_index: chunk_index.unwrap_or(0) as u32,
                        start,
                        end: *end,
                        message: String::new(),
                        recovered: is_recovered(&rendered.data[start..*end]),
                    };
                    start = *end;
                    entry
                }
                RenderedChunkItem::Failed(error) => {
                    error_entry(error, &mut scan, chunk_index, start)
                }
            };
            entries.push(entry);
        }
        let chunk = PulledChunk {
            data: rendered.data,
            entries,
        };
        if sender.send(chunk).is_err() {
            return;
        }
    }
}

/// The pulled entry of a chunk or record error at `start` of the chunk's data, located by
/// `scan` when the error names its record.
fn error_entry(
    error: &EvtxError,
    scan: &mut RecordScan<'_>,
    chunk_index: Option<u64>,
    start: usize,
) -> Entry {
    let message = error_message(error);
    let item = error_item(error, &message);
    let mut entry = Entry {
        status: item.status,
        record_id: item.record_id,
        filetime: 0,
        file_offset: item.file_offset,
        chunk_index: item.chunk_index,
        start,
        end: start,
        message: String::new(),
        recovered: false,
    };
    if let EvtxError::FailedToParseRecord { record_id, .. } = error {
        let (offset, filetime) = scan.find(*record_id);
        entry.filetime = filetime;
        entry.file_offset = locate(chunk_index, offset);
        entry.chunk_index = chunk_index.unwrap_or(0) as u32;
    }
    entry.message = message;
    entry
}

/// Whether a record the crate rendered is a carved one. `RenderedChunk` does not say, so this
/// reads the crate's own marks (contract 5.4): the banner's ` (recovered)`, else the XML comment
/// after the declaration or the first JSON member.
fn is_recovered(data: &[u8]) -> bool {
    let first_line = data.split(|&b| b == b'\n').next().unwrap_or_default();
    if first_line.starts_with(b"Record ") {
        return first_line.ends_with(b" (recovered)");
    }
    data.starts_with(b"<?xml version=\"1.0\" encoding=\"utf-8\"?>\n<!-- recovered -->\n")
        || data.starts_with(b"{\"recovered\":true,")
        || data.starts_with(b"{\n  \"recovered\": true,")
}

/// File offset of a record `offset` bytes into chunk `chunk_index`; 0 when either is unknown.
fn locate(chunk_index: Option<u64>, offset: Option<usize>) -> u64 {
    match (chunk_index, offset) {
        (Some(chunk), Some(offset)) => chunk_offset(chunk) + offset as u64,
        _ => 0,
    }
}

/// Finds records by identifier in a chunk, front to back, as the crate walks them.
struct RecordScan<'a> {
    bytes: &'a [u8],
    cursor: usize,
}

impl RecordScan<'_> {
    /// The chunk offset and FILETIME of the next record header with this identifier.
    fn find(&mut self, record_id: u64) -> (Option<usize>, u64) {
        let bytes = self.bytes;
        let mut at = self.cursor;
        while at + RECORD_HEADER_SIZE <= bytes.len() {
            let Some(hit) = bytes[at..].windows(4).position(|magic| magic == b"**\0\0") else {
                break;
            };
            let offset = at + hit;
            if offset + RECORD_HEADER_SIZE > bytes.len() {
                break;
            }
            let field = |from: usize| {
                let mut value = [0u8; 8];
                value.copy_from_slice(&bytes[offset + from..offset + from + 8]);
                u64::from_le_bytes(value)
            };
            if field(8) == record_id {
                let mut size = [0u8; 4];
                size.copy_from_slice(&bytes[offset + 4..offset + 8]);
                let size = u32::from_le_bytes(size) as usize;
                self.cursor = offset + size.max(1);
                return (Some(offset), field(16));
            }
            at = offset + 1;
        }
        (None, 0)
    }
}
