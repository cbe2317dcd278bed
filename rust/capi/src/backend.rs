//! evtx-core behind the `Engine` trait of `evtx_abi::front`.
//!
//! The push path is `evtx_core::dump` (its ordered multi-threaded driver) with one write per
//! chunk that has no errors, as `evtx_dump` writes. The pull path renders chunks with
//! `Renderer`s kept in the handle and hands out their entries: one chunk at a time on the
//! caller's thread with one thread, else a group of chunks at once on scoped worker threads
//! (`refill`), still handed out in order.
//!
//! A path is read through `evtx_core::Input` (one 64 KiB window per worker, positioned reads),
//! never into the heap whole nor mapped: memory stays bounded and a file that shrinks under the
//! host gives `incomplete chunk` items, not SIGBUS in the host process. A buffer is used in
//! place (`EvtxFile`, zero-copy). Both are a `ChunkSource` to the rest of the code.

use evtx_abi::abi::{evtx_format, evtx_status, EVTX_RECORD_ID_UNKNOWN};
use evtx_abi::front::{Engine, Failure, Input, Item, Library, Settings, Sink};
use evtx_core::mta::MtaFile;
use evtx_core::wevt_cache::WevtCache;
use evtx_core::{
    ChunkOrder, ChunkResult, ChunkSource, ErrorKind, EvtxFile, FatalError, Format, Options,
    Outcome, Renderer,
};
use std::ffi::CStr;
use std::ops::ControlFlow;
use std::path::Path;
use std::sync::Arc;

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

/// Chunks each pull worker renders per refill: enough to amortize starting the threads.
const CHUNKS_PER_WORKER: usize = 4;

/// Where a pull is: the chunk order, the renderers (one per worker), the rendered group of
/// chunks, the current chunk and entry.
struct Puller {
    order: ChunkOrder,
    next_slot: usize,
    renderers: Vec<Renderer>,
    /// The last refill's chunks, in output order; `chunks[..filled]` hold output.
    chunks: Vec<ChunkResult>,
    filled: usize,
    /// Index of the current chunk in `chunks`.
    current: usize,
    /// Index of the current entry in `chunks[current].records`, plus one (0 before the first).
    next_entry: usize,
    message: String,
}

impl Puller {
    /// Renders the next group of chunk slots into `chunks` (in order); false when none is
    /// left. One worker renders on the caller's thread; more render on scoped threads, each
    /// with its own renderer and a contiguous share of the group, all joined before return.
    fn refill(&mut self, source: &dyn ChunkSource) -> bool {
        let workers = self.renderers.len();
        let left = self.order.len().saturating_sub(self.next_slot);
        let group = left.min(if workers == 1 {
            1
        } else {
            workers * CHUNKS_PER_WORKER
        });
        if group == 0 {
            return false;
        }
        if self.chunks.len() < group {
            self.chunks.resize_with(group, ChunkResult::default);
        }
        let first = self.next_slot;
        self.next_slot += group;
        self.filled = group;
        self.current = 0;
        self.next_entry = 0;
        let order = &self.order;
        let slot = |i: usize| order.get(first + i).expect("slot index below order.len()");
        if workers == 1 {
            self.renderers[0].render_chunk_into(source, slot(0), &mut self.chunks[0]);
            return true;
        }
        let share = group.div_ceil(workers);
        std::thread::scope(|scope| {
            for (w, (renderer, outputs)) in self
                .renderers
                .iter_mut()
                .zip(self.chunks[..group].chunks_mut(share))
                .enumerate()
            {
                let slot = &slot;
                scope.spawn(move || {
                    for (k, output) in outputs.iter_mut().enumerate() {
                        renderer.render_chunk_into(source, slot(w * share + k), output);
                    }
                });
            }
        });
        true
    }
}

impl Library for Backend {
    const NAME: &'static CStr = c"rust";
    const VERSION: &'static CStr = {
        match CStr::from_bytes_with_nul(concat!(env!("CARGO_PKG_VERSION"), "\0").as_bytes()) {
            Ok(version) => version,
            Err(_) => panic!("the package version contains a NUL"),
        }
    };

    fn triage(path: &Path, silence_seconds: u64, out: &mut Vec<u8>) -> Result<(), Failure> {
        if !(1..=evtx_core::triage::SILENCE_MAX).contains(&silence_seconds) {
            return Err(Failure::new(
                evtx_status::InvalidOptions,
                format!(
                    "silence_seconds {silence_seconds} is outside 1..={}",
                    evtx_core::triage::SILENCE_MAX
                ),
            ));
        }
        let input = open_path(path)?;
        let name = path.to_string_lossy();
        evtx_core::triage::triage(&name, &input, silence_seconds).write_json(out);
        Ok(())
    }

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
        // After the file header, as `evtx_dump` reads them.
        let (wevt_cache, mta) = settings.load_side_files(load_wevt_cache, load_mta)?;
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
            // Decided by the engine before rendering, as for the CLI; `--events` by ffi.rs.
            filter: evtx_core::Filter {
                event_ids: settings.filter.event_ids.clone(),
                levels: settings.filter.levels.clone(),
                providers: settings.filter.providers.clone(),
                channels: settings.filter.channels.clone(),
                since: settings.filter.since,
                until: settings.filter.until,
            },
            threads: settings.threads,
            recover_records: settings.recover_records,
            mta,
            wevt_cache,
            provenance: None,
        };
        Ok(Backend {
            source,
            options,
            plain: settings.event_ranges.is_empty(),
            state: State::Fresh,
        })
    }
}

impl Engine for Backend {
    fn next(&mut self) -> Result<Option<Item<'_>>, Failure> {
        if let State::Fresh = self.state {
            let order = self
                .source
                .get()
                .chunk_order(self.options.validate_checksums);
            let workers = self.options.effective_threads().min(order.len()).max(1);
            self.state = State::Pulling(Box::new(Puller {
                order,
                next_slot: 0,
                renderers: (0..workers).map(|_| Renderer::new(&self.options)).collect(),
                chunks: Vec::new(),
                filled: 0,
                current: 0,
                next_entry: 0,
                message: String::new(),
            }));
        }
        let exhausted = {
            let State::Pulling(puller) = &mut self.state else {
                return Ok(None);
            };
            loop {
                if puller.current < puller.filled {
                    if puller.next_entry < puller.chunks[puller.current].records.len() {
                        break false;
                    }
                    puller.current += 1;
                    puller.next_entry = 0;
                    continue;
                }
                if !puller.refill(self.source.get()) {
                    break true;
                }
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
        let chunk = &puller.chunks[puller.current];
        let entry = &chunk.records[puller.next_entry - 1];
        puller.message.clear();
        let (status, data) = match &entry.outcome {
            Outcome::Rendered(range) => (evtx_status::Ok, &chunk.bytes[range.clone()]),
            Outcome::Failed(failure) => {
                puller.message = failure.to_string();
                (ErrorKind::status(failure.kind), &[][..])
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
            checksum: entry.checksum as u8,
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
                    checksum: entry.checksum as u8,
                    extra: chunk.partial && entry.record_id.is_none(),
                };
                match &entry.outcome {
                    Outcome::Rendered(range) => {
                        item.data = &chunk.bytes[range.clone()];
                        sink.record(&item)?;
                    }
                    Outcome::Failed(failure) => {
                        let message = failure.to_string();
                        item.status = ErrorKind::status(failure.kind);
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
fn open_path(path: &Path) -> Result<evtx_core::Input, Failure> {
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
/// The failure of `wevt_cache_path`: `WevtCache::load` words every read failure as the
/// reference's `Io` variant (`Io` here), the rest are a refused file.
#[cold]
fn wevt_cache_failure(message: String) -> Failure {
    let status = if message.starts_with("I/O error while ") {
        evtx_status::Io
    } else {
        evtx_status::InvalidOptions
    };
    Failure::new(status, message)
}

/// Reads `wevt_cache_path`; the CLI's error text.
fn load_wevt_cache(path: &Path) -> Result<Arc<WevtCache>, Failure> {
    WevtCache::load(path)
        .map(Arc::new)
        .map_err(|d| wevt_cache_failure(d.to_string()))
}

/// Reads `mta_path`; the CLI's error text (`Io` when unreadable, else `InvalidOptions`).
fn load_mta(path: &Path) -> Result<Arc<MtaFile>, Failure> {
    let bytes = std::fs::read(path).map_err(|error| {
        Failure::new(
            evtx_status::Io,
            format!(
                "failed to read `{}`\n\nCaused by:\n    {error}",
                path.display()
            ),
        )
    })?;
    MtaFile::parse(&bytes)
        .map(Arc::new)
        .map_err(|error| Failure::new(evtx_status::InvalidOptions, error.to_string()))
}

fn fatal_failure(error: &FatalError) -> Failure {
    let status = match error {
        FatalError::Other(_) => evtx_status::Io,
        _ => evtx_status::NotEvtx,
    };
    Failure::new(status, error.to_string())
}
