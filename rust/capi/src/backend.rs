//! evtx-core behind the `Engine` trait of `ffi.rs`.
//!
//! The push path is `evtx_core::dump` (its ordered multi-threaded driver) with one write per
//! chunk that has no errors, as `evtx_dump` writes. The pull path renders one chunk at a time
//! on the caller's thread with a `Renderer` kept in the handle and hands out its entries.
//!
//! A path is read through `evtx_core::Input` (one 64 KiB window per worker, positioned reads),
//! never into the heap whole nor mapped: memory stays bounded and a file that shrinks under the
//! host gives `incomplete chunk` items, not SIGBUS in the host process. A buffer is used in
//! place (`EvtxFile`, zero-copy). Both are a `ChunkSource` to the rest of the code.

use crate::abi::{evtx_format, evtx_status, EVTX_RECORD_ID_UNKNOWN};
use crate::ffi::{Engine, Failure, Input, Item, Settings, Sink};
use evtx_core::{
    ChunkOrder, ChunkOutput, ChunkSource, ErrorKind, EvtxFile, FatalError, Format, Options,
    Outcome, Renderer,
};
use std::ffi::CStr;
use std::ops::ControlFlow;

/// The input: the caller's buffer (borrowed), or a file read through windows.
enum Source {
    Borrowed(EvtxFile<'static>),
    File(evtx_core::Input),
}

impl Source {
    fn get(&self) -> &dyn ChunkSource {
        match self {
            Source::Borrowed(file) => file,
            Source::File(input) => input,
        }
    }
}

pub(crate) struct Backend {
    source: Source,
    options: Options,
    /// Whether `dump` may write a chunk's bytes in one call (no event filter).
    plain: bool,
    state: State,
}

enum State {
    Fresh,
    Pulling(Box<Puller>),
    Done,
}

/// Where a pull is: the chunk order, the renderer, the current chunk and entry.
struct Puller {
    order: ChunkOrder,
    next_slot: usize,
    renderer: Renderer,
    chunk: ChunkOutput,
    /// Index of the current entry in `chunk.records`, plus one (0 before the first).
    next_entry: usize,
    message: String,
}

impl Engine for Backend {
    const NAME: &'static CStr = c"rust";
    const VERSION: &'static CStr = {
        match CStr::from_bytes_with_nul(concat!(env!("CARGO_PKG_VERSION"), "\0").as_bytes()) {
            Ok(version) => version,
            Err(_) => panic!("the package version contains a NUL"),
        }
    };

    fn open(input: Input<'_>, settings: Settings) -> Result<Self, Failure> {
        let ansi_codec = match settings.ansi_codec.as_deref() {
            None => Options::default().ansi_codec,
            Some(label) => evtx_core::parse_ansi_codec(label)
                .map_err(|message| Failure::new(evtx_status::InvalidOptions, message))?,
        };
        let source = match input {
            Input::Buffer(bytes) => {
                Source::Borrowed(EvtxFile::open(bytes).map_err(|error| fatal_failure(&error))?)
            }
            Input::Path(path) => Source::File(open_path(path)?),
        };
        let options = Options {
            format: match settings.format {
                evtx_format::Xml => Format::Xml,
                evtx_format::Json => Format::Json,
                evtx_format::Jsonl => Format::Jsonl,
            },
            indent: settings.indent,
            separate_json_attributes: settings.separate_json_attributes,
            show_record_number: settings.show_record_number,
            validate_checksums: settings.validate_checksums,
            ansi_codec,
            // The event filter is applied by ffi.rs, the same for every backend.
            event_ranges: None,
            threads: settings.threads,
            recover_records: settings.recover_records,
            mta: None,
        };
        Ok(Backend {
            source,
            options,
            plain: settings.event_ranges.is_empty(),
            state: State::Fresh,
        })
    }

    fn next(&mut self) -> Result<Option<Item<'_>>, Failure> {
        if let State::Fresh = self.state {
            self.state = State::Pulling(Box::new(Puller {
                order: self
                    .source
                    .get()
                    .chunk_order(self.options.validate_checksums),
                next_slot: 0,
                renderer: Renderer::new(&self.options),
                chunk: ChunkOutput::default(),
                next_entry: 0,
                message: String::new(),
            }));
        }
        let exhausted = {
            let State::Pulling(puller) = &mut self.state else {
                return Ok(None);
            };
            loop {
                if puller.next_entry < puller.chunk.records.len() {
                    break false;
                }
                let Some(slot) = puller.order.get(puller.next_slot) else {
                    break true;
                };
                puller.next_slot += 1;
                let source = self.source.get();
                puller
                    .renderer
                    .render_chunk_into(source, slot, &mut puller.chunk);
                puller.next_entry = 0;
            }
        };
        if exhausted {
            self.state = State::Done;
            return Ok(None);
        }
        let State::Pulling(puller) = &mut self.state else {
            return Ok(None);
        };
        puller.next_entry += 1;
        let entry = &puller.chunk.records[puller.next_entry - 1];
        puller.message.clear();
        let (status, data) = match &entry.outcome {
            Outcome::Rendered(range) => (evtx_status::Ok, &puller.chunk.bytes[range.clone()]),
            Outcome::Failed(failure) => {
                puller.message = failure.to_string();
                (status_of(failure.kind), &[][..])
            }
        };
        Ok(Some(Item {
            status,
            record_id: entry.record_id.unwrap_or(EVTX_RECORD_ID_UNKNOWN),
            filetime: entry.filetime,
            file_offset: entry.file_offset,
            chunk_index: entry.chunk_slot,
            data,
            message: &puller.message,
            recovered: entry.recovered,
            extra: false,
        }))
    }

    fn dump(&mut self, sink: &mut dyn Sink) -> Result<(), Failure> {
        if !matches!(self.state, State::Fresh) {
            // Carry on from where pulling left off.
            return self.drain(sink);
        }
        self.state = State::Done;
        let plain = self.plain;
        evtx_core::dump(self.source.get(), &self.options, |chunk| {
            // Any failure, the trailing partial slot's line included, leaves the plain path.
            let failed = chunk
                .records
                .iter()
                .any(|entry| matches!(entry.outcome, Outcome::Failed(_)));
            if plain && !failed {
                if chunk.bytes.is_empty() {
                    return ControlFlow::Continue(());
                }
                return sink.records(&chunk.bytes, chunk.records.len() as u64);
            }
            for entry in &chunk.records {
                let mut item = Item {
                    status: evtx_status::Ok,
                    record_id: entry.record_id.unwrap_or(EVTX_RECORD_ID_UNKNOWN),
                    filetime: entry.filetime,
                    file_offset: entry.file_offset,
                    chunk_index: entry.chunk_slot,
                    data: &[],
                    message: "",
                    recovered: entry.recovered,
                    extra: chunk.partial && entry.record_id.is_none(),
                };
                match &entry.outcome {
                    Outcome::Rendered(range) => {
                        item.data = &chunk.bytes[range.clone()];
                        sink.record(&item)?;
                    }
                    Outcome::Failed(failure) => {
                        let message = failure.to_string();
                        item.status = status_of(failure.kind);
                        item.message = &message;
                        sink.error(&item)?;
                    }
                }
            }
            ControlFlow::Continue(())
        });
        Ok(())
    }
}

/// Opens `path` read-only as chunk windows: a regular file directly, anything else (a pipe)
/// spooled to an unlinked temporary file first.
fn open_path(path: &std::path::Path) -> Result<evtx_core::Input, Failure> {
    let io_failure = |error: std::io::Error| {
        Failure::new(
            evtx_status::Io,
            format!("cannot read {}: {error}", path.display()),
        )
    };
    let file = std::fs::File::open(path).map_err(io_failure)?;
    let file = if evtx_core::input::is_regular(&file) {
        file
    } else {
        evtx_core::input::spool(&mut &file, &std::env::temp_dir())
            .map_err(io_failure)?
            .ok_or_else(|| fatal_failure(&FatalError::TooShort(0)))?
    };
    evtx_core::Input::open(file).map_err(|error| fatal_failure(&error))
}

/// A header failure is `NotEvtx`, as for the CLI; failing to read the input at all is `Io`.
fn fatal_failure(error: &FatalError) -> Failure {
    let status = match error {
        FatalError::Other(_) => evtx_status::Io,
        _ => evtx_status::NotEvtx,
    };
    Failure::new(status, error.to_string())
}

fn status_of(kind: ErrorKind) -> evtx_status {
    match kind {
        ErrorKind::IncompleteChunk => evtx_status::IncompleteChunk,
        ErrorKind::BadChunkMagic => evtx_status::BadChunkMagic,
        ErrorKind::BadChunkHeaderChecksum => evtx_status::BadChunkHeaderChecksum,
        ErrorKind::BadChunkFreeSpaceOffset => evtx_status::BadChunkFreeSpaceOffset,
        ErrorKind::BadChunkRecordsChecksum => evtx_status::BadChunkRecordsChecksum,
        ErrorKind::BadStringTable => evtx_status::BadStringTable,
        ErrorKind::BadRecordMagic => evtx_status::BadRecordMagic,
        ErrorKind::TruncatedRecordHeader => evtx_status::TruncatedRecordHeader,
        ErrorKind::BadRecordTimestamp => evtx_status::BadRecordTimestamp,
        ErrorKind::BadRecordSize => evtx_status::BadRecordSize,
        ErrorKind::BadBinxml => evtx_status::BadBinxml,
    }
}
