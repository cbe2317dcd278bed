//! The bodies of the exported functions of `include/evtx.h`, written once over the `Engine`
//! trait.
//!
//! Both Rust-built libraries export thin `#[no_mangle]` wrappers around these functions:
//! `libevtx_rs` (`rust/capi/src/ffi.rs`, whose doc comments are the header's manual) with
//! evtx-core behind `Engine`, `libevtx_ref` (`compare/reference`) with the evtx 0.15.1 crate.
//! So everything in front of the engines — argument checks, option decoding, the event-range
//! filter, framing of statistics, the panic boundary — is the same code, and a speed difference
//! between them is the engines'. The contract of each function is the doc comment of its
//! export in `rust/capi/src/ffi.rs`; the `# Safety` sections here only forward it.
//!
//! Every function catches panics and reports `EVTX_STATUS_INTERNAL`; every pointer argument
//! may be NULL (the call then returns `EVTX_STATUS_NULL_ARGUMENT` or does nothing).
#![allow(non_camel_case_types)]

use crate::abi::{
    evtx_batch, evtx_batch_system, evtx_batch_texts, evtx_error_fn, evtx_event_range, evtx_format,
    evtx_options, evtx_record, evtx_stats, evtx_status, evtx_value_range, evtx_write_fn,
    EVTX_CHECKSUM_UNCHECKED, EVTX_OPTIONS_VERSION_0, EVTX_OPTIONS_VERSION_1,
    EVTX_RECORD_ID_UNKNOWN, UNKNOWN_STATUS_NAME,
};
use std::cell::RefCell;
use std::ffi::{c_char, c_void, CStr, CString};
use std::ops::ControlFlow;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::path::{Path, PathBuf};

/// What a failed engine call reports: the status and a human-readable detail.
#[derive(Debug)]
pub struct Failure {
    pub status: evtx_status,
    pub message: String,
}

impl Failure {
    pub fn new(status: evtx_status, message: impl Into<String>) -> Self {
        Failure {
            status,
            message: message.into(),
        }
    }
}

/// Where an engine reads its input from.
pub enum Input<'a> {
    Path(&'a Path),
    /// The caller's buffer, not copied. It outlives the parser by the contract of
    /// `evtx_parser_open_buffer`, which is why it is `'static` here.
    Buffer(&'static [u8]),
}

/// `evtx_options`, decoded and checked. The effective values: `-o jsonl` has already turned
/// indentation and the banner off.
#[derive(Clone, Debug)]
pub struct Settings {
    pub format: evtx_format,
    pub indent: bool,
    pub separate_json_attributes: bool,
    pub show_record_number: bool,
    /// 0 = one per CPU.
    pub threads: usize,
    pub validate_checksums: bool,
    pub recover_records: bool,
    pub stop_after_error: bool,
    /// `None` = windows-1252.
    pub ansi_codec: Option<String>,
    pub event_ranges: Vec<evtx_event_range>,
    /// `--mta FILE`, read by the engine at open through `load_side_files`.
    pub mta_path: Option<PathBuf>,
    /// `--wevt-cache FILE`, read by the engine at open through `load_side_files`, before
    /// `mta_path`.
    pub wevt_cache_path: Option<PathBuf>,
    /// The record filters (`evtx_options` version 1), checked; empty for version 0.
    pub filter: Filter,
}

/// The record filters of `evtx_options`, decoded and checked: the fields of the engines'
/// `Filter` (`evtx_core::Filter`, `zig/src/filter.zig`), which each library builds from it.
/// Empty lists and `None` constrain nothing.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Filter {
    /// Inclusive ranges of `System/EventID`.
    pub event_ids: Vec<(u32, u32)>,
    /// Inclusive ranges of `System/Level`.
    pub levels: Vec<(u32, u32)>,
    /// `System/Provider/@Name`, whole, ASCII case-insensitive.
    pub providers: Vec<String>,
    /// `System/Channel`, whole, ASCII case-insensitive.
    pub channels: Vec<String>,
    /// FILETIME, inclusive.
    pub since: Option<u64>,
    /// FILETIME, exclusive.
    pub until: Option<u64>,
}

impl Filter {
    /// Whether the filter keeps every record.
    pub fn is_empty(&self) -> bool {
        *self == Filter::default()
    }
}

impl Settings {
    /// Reads the side files these settings name, as an engine's `open` must after the file
    /// header: the wevt cache, then the MTA file, `evtx_dump`'s order. So when both are bad,
    /// every library reports the cache's failure and never reads the MTA file.
    pub fn load_side_files<C, M>(
        &self,
        load_wevt_cache: impl FnOnce(&Path) -> Result<C, Failure>,
        load_mta: impl FnOnce(&Path) -> Result<M, Failure>,
    ) -> Result<(Option<C>, Option<M>), Failure> {
        let wevt_cache = self
            .wevt_cache_path
            .as_deref()
            .map(load_wevt_cache)
            .transpose()?;
        let mta = self.mta_path.as_deref().map(load_mta).transpose()?;
        Ok((wevt_cache, mta))
    }
}

/// One record or error, as an engine yields it. `data` is empty unless `status` is OK.
#[derive(Clone, Copy, Debug)]
pub struct Item<'a> {
    pub status: evtx_status,
    pub record_id: u64,
    pub filetime: u64,
    pub file_offset: u64,
    pub chunk_index: u32,
    pub data: &'a [u8],
    pub message: &'a str,
    /// Carved (`recover_records`).
    pub recovered: bool,
    /// The chunk's `EVTX_CHECKSUM_*` status.
    pub checksum: u8,
    /// Our documented extra error (the cut last chunk's line, shared-fixtures/README.md): it
    /// never stops a dump, as the reference never sees it.
    pub extra: bool,
}

/// Where `Engine::dump` delivers its output.
pub trait Sink {
    /// One rendered record (the sink applies the event-range filter).
    fn record(&mut self, item: &Item<'_>) -> ControlFlow<()>;
    /// `count` rendered records in one buffer. Engines call it only without event ranges.
    fn records(&mut self, data: &[u8], count: u64) -> ControlFlow<()>;
    /// One chunk or record error.
    fn error(&mut self, item: &Item<'_>) -> ControlFlow<()>;
}

/// An EVTX engine behind the ABI, as a parser holds it (`dyn Engine`).
pub trait Engine {
    /// The next record or error in output order (every record, whatever the event ranges),
    /// `None` at the end. `Err` only for fatal failures.
    fn next(&mut self) -> Result<Option<Item<'_>>, Failure>;

    /// Everything `next` has not yielded yet, into `sink`, until it breaks. Backends with a
    /// faster whole-input path override this and fall back to [`Engine::drain`] once pulling
    /// has started.
    fn dump(&mut self, sink: &mut dyn Sink) -> Result<(), Failure> {
        self.drain(sink)
    }

    /// Pulls the remaining items one by one into `sink`, until it breaks.
    fn drain(&mut self, sink: &mut dyn Sink) -> Result<(), Failure> {
        while let Some(item) = self.next()? {
            let flow = if item.status == evtx_status::Ok {
                sink.record(&item)
            } else {
                sink.error(&item)
            };
            if flow.is_break() {
                break;
            }
        }
        Ok(())
    }
}

/// A library's engine: how to open one, and the library's identity.
pub trait Library: Engine + Sized + 'static {
    /// `evtx_backend_name()`.
    const NAME: &'static CStr;
    /// `evtx_backend_version()`.
    const VERSION: &'static CStr;

    /// Reads the file header; fails with `NotEvtx`, `Io`, `InvalidOptions` or `Unsupported`.
    fn open(input: Input<'_>, settings: Settings) -> Result<Self, Failure>;

    /// `evtx_triage_path`: appends the triage report of the log at `path` (the JSON object of
    /// one file, `shared-fixtures/README.md`, "Triage") to `out`; fails as `open` does for an
    /// input it cannot read, `InvalidOptions` for `silence_seconds` outside 1..=315360000. A
    /// library without triage (the reference's) keeps this default.
    fn triage(path: &Path, silence_seconds: u64, out: &mut Vec<u8>) -> Result<(), Failure> {
        let _ = (path, silence_seconds, out);
        Err(Failure::new(
            evtx_status::NotImplemented,
            "this library has no triage",
        ))
    }
}

/// A parser over one EVTX input, with its options. Opaque: made by `evtx_parser_open_path` or
/// `evtx_parser_open_buffer`, released by `evtx_parser_free`. One thread at a time may use it;
/// different parsers are independent.
pub struct evtx_parser {
    engine: Box<dyn Engine>,
    event_ranges: Vec<evtx_event_range>,
    stop_after_error: bool,
    /// The current record's message, kept for `evtx_record.message`.
    message: CString,
    /// The columns behind the last `evtx_batch`.
    batch: Columns,
    /// The columns behind the last `evtx_batch_system`, and whether the output is JSON.
    system: crate::system::SystemColumns,
    json: bool,
    /// The texts behind the last `evtx_parser_batch_timestamps`.
    timestamps: crate::timestamps::Timestamps,
    /// A fatal failure met after a batch had entries: reported by the next call.
    pending: Option<Failure>,
    /// Set after a fatal failure or a panic: the handle can only be freed.
    poisoned: bool,
}

thread_local! {
    static LAST_ERROR: RefCell<CString> = RefCell::new(CString::default());
}

fn c_string(text: &str) -> CString {
    CString::new(text.replace('\0', "\\0")).unwrap_or_default()
}

/// Records the failure as this thread's last error and returns its status.
fn fail(failure: Failure) -> evtx_status {
    LAST_ERROR.with(|last| *last.borrow_mut() = c_string(&failure.message));
    failure.status
}

/// Runs `body` behind the panic boundary.
fn boundary(body: impl FnOnce() -> evtx_status) -> evtx_status {
    catch_unwind(AssertUnwindSafe(body)).unwrap_or_else(|_| {
        fail(Failure::new(
            evtx_status::Internal,
            "the backend panicked; only free the parser",
        ))
    })
}

/// `evtx_status_name`; the contract is its export's doc comment (`rust/capi/src/ffi.rs`).
pub fn status_name(status: u32) -> *const c_char {
    evtx_status::from_u32(status)
        .map_or(UNKNOWN_STATUS_NAME, evtx_status::name)
        .as_ptr()
}

/// `evtx_last_error`; the contract is its export's doc comment (`rust/capi/src/ffi.rs`).
pub fn last_error() -> *const c_char {
    LAST_ERROR.with(|last| last.borrow().as_ptr())
}

/// The defaults of every field, as version 1.
fn defaults() -> evtx_options {
    evtx_options {
        format: evtx_format::Xml as u32,
        threads: 0,
        indent: 1,
        separate_json_attributes: 0,
        show_record_number: 1,
        validate_checksums: 0,
        recover_records: 0,
        stop_after_error: 0,
        version: EVTX_OPTIONS_VERSION_1,
        reserved: 0,
        ansi_codec: std::ptr::null(),
        event_ranges: std::ptr::null(),
        event_ranges_count: 0,
        mta_path: std::ptr::null(),
        wevt_cache_path: std::ptr::null(),
        event_ids: std::ptr::null(),
        event_ids_count: 0,
        levels: std::ptr::null(),
        levels_count: 0,
        providers: std::ptr::null(),
        providers_count: 0,
        channels: std::ptr::null(),
        channels_count: 0,
        since: 0,
        until: 0,
        since_set: 0,
        until_set: 0,
        reserved_v1: [0; 6],
    }
}

/// Bytes of `evtx_options` version 0: the struct up to the first field of version 1. A
/// caller built against that header has no more; the library never touches more of it.
const VERSION_0_SIZE: usize = std::mem::offset_of!(evtx_options, event_ids);

/// Bytes of `evtx_options` the caller has, by its `version`; `None` for a version newer than
/// this library's.
fn options_size(version: u8) -> Option<usize> {
    match version {
        EVTX_OPTIONS_VERSION_0 => Some(VERSION_0_SIZE),
        EVTX_OPTIONS_VERSION_1 => Some(std::mem::size_of::<evtx_options>()),
        _ => None,
    }
}

/// `evtx_options_init`; the contract is its export's doc comment (`rust/capi/src/ffi.rs`):
/// version 0, so only the bytes of the version 0 struct are written.
///
/// # Safety
/// As documented for `evtx_options_init`.
pub unsafe fn options_init(options: *mut evtx_options) {
    let defaults = evtx_options {
        version: EVTX_OPTIONS_VERSION_0,
        ..defaults()
    };
    if options.is_null() {
        return;
    }
    // SAFETY: the caller passes a pointer valid for writes of one version 0 `evtx_options`,
    // `VERSION_0_SIZE` bytes (documented above); `defaults` is a whole struct, larger, and
    // a local, so the two do not overlap.
    unsafe {
        std::ptr::copy_nonoverlapping(
            (&defaults as *const evtx_options).cast::<u8>(),
            options.cast::<u8>(),
            VERSION_0_SIZE,
        );
    }
}

/// `evtx_options_init_v1`; the contract is its export's doc comment (`rust/capi/src/ffi.rs`).
///
/// # Safety
/// As documented for `evtx_options_init_v1`.
pub unsafe fn options_init_v1(options: *mut evtx_options) {
    // SAFETY: the caller passes NULL or a pointer valid for writes of one whole
    // `evtx_options`; `as_mut` handles NULL, and the write needs no initialised target.
    if let Some(options) = unsafe { options.as_mut() } {
        *options = defaults();
    }
}

/// A copy of the caller's options (NULL = defaults): the bytes its `version` says it has,
/// the defaults after them.
///
/// # Safety
/// `options` is NULL, or valid for reads of the bytes its `version` field says it has (that
/// field first).
unsafe fn options_copy(options: *const evtx_options) -> Result<evtx_options, Failure> {
    let mut copy = defaults();
    if options.is_null() {
        return Ok(copy);
    }
    // SAFETY: not NULL, and every caller has the `version` byte (version 0 has it too);
    // `addr_of!` reads that one field without asserting anything about the rest.
    let version = unsafe { std::ptr::addr_of!((*options).version).read() };
    let Some(size) = options_size(version) else {
        return Err(Failure::new(
            evtx_status::InvalidOptions,
            format!(
                "evtx_options.version {version} is newer than this library's \
                 {EVTX_OPTIONS_VERSION_1}"
            ),
        ));
    };
    // SAFETY: the caller's struct is valid for reads of `size` bytes by its version (the
    // contract above); `copy` is a whole struct, at least `size` bytes, and a local. Every
    // field is an integer or a raw pointer, so any bytes are a valid value.
    unsafe {
        std::ptr::copy_nonoverlapping(
            options.cast::<u8>(),
            (&mut copy as *mut evtx_options).cast::<u8>(),
            size,
        );
    }
    Ok(copy)
}

/// Decodes `options` (NULL = defaults).
///
/// # Safety
/// `options` is NULL or valid for reads; its `ansi_codec`, `mta_path` and `wevt_cache_path`
/// NULL or NUL-terminated; its `event_ranges` valid for `event_ranges_count` reads when not
/// NULL.
unsafe fn settings_from(options: *const evtx_options) -> Result<Settings, Failure> {
    // SAFETY: forwarded caller contract.
    let options = unsafe { options_copy(options) }?;
    let invalid = |message: &str| Failure::new(evtx_status::InvalidOptions, message);

    let format = match options.format {
        0 => evtx_format::Xml,
        1 => evtx_format::Json,
        2 => evtx_format::Jsonl,
        other => return Err(invalid(&format!("unknown format {other}"))),
    };
    if options.reserved != 0 || options.reserved_v1 != [0; 6] {
        return Err(invalid("evtx_options.reserved must be zero"));
    }
    let ansi_codec = if options.ansi_codec.is_null() {
        None
    } else {
        // SAFETY: not NULL, and NUL-terminated by the caller's contract.
        let label = unsafe { CStr::from_ptr(options.ansi_codec) };
        let label = label
            .to_str()
            .map_err(|_| invalid("the ansi_codec label is not UTF-8"))?;
        Some(label.to_owned())
    };
    let event_ranges = match (options.event_ranges.is_null(), options.event_ranges_count) {
        (_, 0) => Vec::new(),
        (true, _) => {
            return Err(invalid(
                "event_ranges is NULL but event_ranges_count is not 0",
            ))
        }
        (false, count) => {
            // SAFETY: not NULL, and valid for `count` reads by the caller's contract; the
            // ranges are plain integers, so any bit pattern is a valid value.
            unsafe { std::slice::from_raw_parts(options.event_ranges, count) }.to_vec()
        }
    };
    // SAFETY: each is NULL or NUL-terminated by the caller's contract.
    let (mta_path, wevt_cache_path) = unsafe {
        (
            path_from(options.mta_path),
            path_from(options.wevt_cache_path),
        )
    };
    // SAFETY: forwarded caller contract (the version 1 fields are the defaults for version 0).
    let filter = unsafe { filter_from(&options) }?;
    let jsonl = format == evtx_format::Jsonl;
    Ok(Settings {
        format,
        indent: options.indent != 0 && !jsonl,
        separate_json_attributes: options.separate_json_attributes != 0,
        show_record_number: options.show_record_number != 0 && !jsonl,
        threads: options.threads as usize,
        validate_checksums: options.validate_checksums != 0,
        recover_records: options.recover_records != 0,
        stop_after_error: options.stop_after_error != 0,
        ansi_codec,
        event_ranges,
        mta_path,
        wevt_cache_path,
        filter,
    })
}

/// The filter fields of `options` (version 1), checked as the CLIs check theirs.
///
/// # Safety
/// Each list is NULL or valid for its count's reads; each name NUL-terminated.
unsafe fn filter_from(options: &evtx_options) -> Result<Filter, Failure> {
    let invalid = |message: String| Failure::new(evtx_status::InvalidOptions, message);
    // SAFETY: forwarded caller contract, for each list.
    let (event_ids, levels, providers, channels) = unsafe {
        (
            list(options.event_ids, options.event_ids_count, "event_ids")?,
            list(options.levels, options.levels_count, "levels")?,
            list(options.providers, options.providers_count, "providers")?,
            list(options.channels, options.channels_count, "channels")?,
        )
    };
    let ranges = |ranges: &[evtx_value_range], name: &str| {
        ranges
            .iter()
            .map(|r| match r.first <= r.last {
                true => Ok((r.first, r.last)),
                false => Err(invalid(format!(
                    "evtx_options.{name}: the range {}-{} is empty",
                    r.first, r.last
                ))),
            })
            .collect::<Result<Vec<_>, _>>()
    };
    let names = |names: &[*const c_char], name: &str| {
        names
            .iter()
            .map(|&text| {
                if text.is_null() {
                    return Err(invalid(format!("evtx_options.{name}: a name is NULL")));
                }
                // SAFETY: not NULL, and NUL-terminated by the caller's contract.
                let text = unsafe { CStr::from_ptr(text) }.to_str();
                match text {
                    Ok("") => Err(invalid(format!("evtx_options.{name}: a name is empty"))),
                    Ok(text) => Ok(text.to_owned()),
                    Err(_) => Err(invalid(format!("evtx_options.{name}: a name is not UTF-8"))),
                }
            })
            .collect::<Result<Vec<_>, _>>()
    };
    let filter = Filter {
        event_ids: ranges(event_ids, "event_ids")?,
        levels: ranges(levels, "levels")?,
        providers: names(providers, "providers")?,
        channels: names(channels, "channels")?,
        since: (options.since_set != 0).then_some(options.since),
        until: (options.until_set != 0).then_some(options.until),
    };
    if let (Some(since), Some(until)) = (filter.since, filter.until) {
        if since >= until {
            return Err(invalid(
                "evtx_options.since must be earlier than until".to_string(),
            ));
        }
    }
    Ok(filter)
}

/// A list option as a slice: empty for count 0, refused when NULL with a non-zero count.
///
/// # Safety
/// `items` is NULL or valid for `count` reads, unchanged while the slice lives.
unsafe fn list<'a, T>(items: *const T, count: usize, name: &str) -> Result<&'a [T], Failure> {
    match (items.is_null(), count) {
        (_, 0) => Ok(&[]),
        (true, _) => Err(Failure::new(
            evtx_status::InvalidOptions,
            format!("evtx_options.{name} is NULL but its count is not 0"),
        )),
        // SAFETY: not NULL, and valid for `count` reads by the caller's contract.
        (false, count) => Ok(unsafe { std::slice::from_raw_parts(items, count) }),
    }
}

/// A NUL-terminated path option, copied; NULL = `None`.
///
/// # Safety
/// `path` is NULL or NUL-terminated.
unsafe fn path_from(path: *const c_char) -> Option<PathBuf> {
    if path.is_null() {
        return None;
    }
    // SAFETY: not NULL, and NUL-terminated by the caller's contract.
    let bytes = unsafe { CStr::from_ptr(path) }.to_bytes();
    #[cfg(unix)]
    let path = <std::ffi::OsStr as std::os::unix::ffi::OsStrExt>::from_bytes(bytes).into();
    #[cfg(not(unix))]
    let path = String::from_utf8_lossy(bytes).into_owned().into();
    Some(path)
}

/// Opens `input` and stores the handle in `*out`.
///
/// # Safety
/// `options` as for `settings_from`; `out` valid for one pointer write.
unsafe fn open<L: Library>(
    input: Input<'_>,
    options: *const evtx_options,
    out: *mut *mut evtx_parser,
) -> evtx_status {
    // SAFETY: forwarded caller contract.
    let settings = match unsafe { settings_from(options) } {
        Ok(settings) => settings,
        Err(failure) => return fail(failure),
    };
    let event_ranges = settings.event_ranges.clone();
    let json = settings.format != evtx_format::Xml;
    let stop_after_error = settings.stop_after_error;
    match L::open(input, settings) {
        Ok(engine) => {
            let parser = Box::new(evtx_parser {
                engine: Box::new(engine),
                event_ranges,
                stop_after_error,
                message: CString::default(),
                batch: Columns::default(),
                system: Default::default(),
                timestamps: Default::default(),
                json,
                pending: None,
                poisoned: false,
            });
            // SAFETY: `out` is valid for one pointer write (checked non-NULL by the callers).
            unsafe { *out = Box::into_raw(parser) };
            evtx_status::Ok
        }
        Err(failure) => fail(failure),
    }
}

/// `evtx_parser_open_path`; the contract is its export's doc comment (`rust/capi/src/ffi.rs`).
///
/// # Safety
/// As documented for `evtx_parser_open_path`.
pub unsafe fn parser_open_path<L: Library>(
    path: *const c_char,
    options: *const evtx_options,
    out: *mut *mut evtx_parser,
) -> evtx_status {
    boundary(|| {
        // SAFETY: `out` is NULL or valid for one pointer write by the caller's contract.
        if let Err(status) = unsafe { clear_out(out, path, "path is NULL") } {
            return status;
        }
        // SAFETY: not NULL, and NUL-terminated by the caller's contract.
        let path = match path_of(unsafe { CStr::from_ptr(path) }) {
            Ok(path) => path,
            Err(failure) => return fail(failure),
        };
        // SAFETY: forwarded caller contract for `options` and `out`.
        unsafe { open::<L>(Input::Path(path), options, out) }
    })
}

/// `evtx_triage_path`; the contract is its export's doc comment (`rust/capi/src/ffi.rs`).
///
/// # Safety
/// As documented for `evtx_triage_path`.
pub unsafe fn triage_path<L: Library>(
    path: *const c_char,
    silence_seconds: u64,
    write: evtx_write_fn,
    user_data: *mut c_void,
) -> evtx_status {
    boundary(|| {
        if path.is_null() {
            return fail(Failure::new(evtx_status::NullArgument, "path is NULL"));
        }
        let Some(write) = write else {
            return fail(Failure::new(evtx_status::NullArgument, "write is NULL"));
        };
        // SAFETY: not NULL, and NUL-terminated by the caller's contract.
        let path = match path_of(unsafe { CStr::from_ptr(path) }) {
            Ok(path) => path,
            Err(failure) => return fail(failure),
        };
        let mut report = Vec::new();
        if let Err(failure) = L::triage(path, silence_seconds, &mut report) {
            return fail(failure);
        }
        // SAFETY: `write` may be called with `user_data` from this thread by the caller's
        // contract; the bytes are valid for the call.
        if unsafe { write(user_data, report.as_ptr(), report.len()) } != 0 {
            return fail(Failure::new(
                evtx_status::CallbackAborted,
                "the write callback returned non-zero",
            ));
        }
        evtx_status::Ok
    })
}

/// A C path as a `Path`: its bytes on Unix, UTF-8 elsewhere.
fn path_of(path: &CStr) -> Result<&Path, Failure> {
    #[cfg(unix)]
    return Ok(Path::new(
        <std::ffi::OsStr as std::os::unix::ffi::OsStrExt>::from_bytes(path.to_bytes()),
    ));
    #[cfg(not(unix))]
    match path.to_str() {
        Ok(path) => Ok(Path::new(path)),
        Err(_) => Err(Failure::new(evtx_status::Io, "the path is not UTF-8")),
    }
}

/// What both open functions check first: `out` is not NULL and is cleared (a failed open
/// leaves NULL there), then `input` (the path or the bytes, named in `null_message`) is not NULL.
///
/// # Safety
/// `out` is NULL or valid for one pointer write.
unsafe fn clear_out<T>(
    out: *mut *mut evtx_parser,
    input: *const T,
    null_message: &'static str,
) -> Result<(), evtx_status> {
    if out.is_null() {
        return Err(fail(Failure::new(evtx_status::NullArgument, "out is NULL")));
    }
    // SAFETY: `out` is not NULL and valid for a pointer write by the caller's contract.
    unsafe { *out = std::ptr::null_mut() };
    if input.is_null() {
        return Err(fail(Failure::new(evtx_status::NullArgument, null_message)));
    }
    Ok(())
}

/// `evtx_parser_open_buffer`; the contract is its export's doc comment (`rust/capi/src/ffi.rs`).
///
/// # Safety
/// As documented for `evtx_parser_open_buffer`.
pub unsafe fn parser_open_buffer<L: Library>(
    data: *const u8,
    len: usize,
    options: *const evtx_options,
    out: *mut *mut evtx_parser,
) -> evtx_status {
    boundary(|| {
        // SAFETY: `out` is NULL or valid for one pointer write by the caller's contract.
        if let Err(status) = unsafe { clear_out(out, data, "data is NULL") } {
            return status;
        }
        // SAFETY: not NULL, valid for `len` reads and unchanged until the parser is freed
        // (caller's contract), so treating it as `'static` for the parser's life is sound:
        // the parser, the only holder of the slice, is gone when the contract ends.
        let bytes: &'static [u8] = unsafe { std::slice::from_raw_parts(data, len) };
        // SAFETY: forwarded caller contract for `options` and `out`.
        unsafe { open::<L>(Input::Buffer(bytes), options, out) }
    })
}

/// `evtx_parser_next`; the contract is its export's doc comment (`rust/capi/src/ffi.rs`).
///
/// # Safety
/// As documented for `evtx_parser_next`.
pub unsafe fn parser_next(parser: *mut evtx_parser, record: *mut evtx_record) -> evtx_status {
    // SAFETY: NULL or a live, unshared handle by the caller's contract.
    let Some(parser) = (unsafe { parser.as_mut() }) else {
        return fail(Failure::new(evtx_status::NullArgument, "parser is NULL"));
    };
    // SAFETY: NULL or valid for one write by the caller's contract.
    let Some(record) = (unsafe { record.as_mut() }) else {
        return fail(Failure::new(evtx_status::NullArgument, "record is NULL"));
    };
    *record = evtx_record {
        data: std::ptr::null(),
        data_len: 0,
        record_id: EVTX_RECORD_ID_UNKNOWN,
        filetime: 0,
        file_offset: 0,
        chunk_index: 0,
        status: evtx_status::End as u32,
        message: c"".as_ptr(),
        recovered: 0,
        checksum: EVTX_CHECKSUM_UNCHECKED,
    };
    if parser.poisoned {
        return fail(Failure::new(
            evtx_status::BadState,
            "the parser failed before",
        ));
    }
    let status = boundary(|| loop {
        let item = match parser.engine.next() {
            Ok(Some(item)) => item,
            Ok(None) => return evtx_status::End,
            Err(failure) => {
                parser.poisoned = true;
                return fail(failure);
            }
        };
        if item.status == evtx_status::Ok && !selects(&parser.event_ranges, item.record_id) {
            continue;
        }
        parser.message = c_string(item.message);
        *record = evtx_record {
            data: if item.data.is_empty() {
                std::ptr::null()
            } else {
                item.data.as_ptr()
            },
            data_len: item.data.len(),
            record_id: item.record_id,
            filetime: item.filetime,
            file_offset: item.file_offset,
            chunk_index: item.chunk_index,
            status: item.status as u32,
            message: parser.message.as_ptr(),
            recovered: u8::from(item.recovered),
            checksum: if item.status == evtx_status::Ok {
                item.checksum
            } else {
                EVTX_CHECKSUM_UNCHECKED
            },
        };
        return item.status;
    });
    if status == evtx_status::Internal {
        parser.poisoned = true;
    }
    status
}

/// The storage of `evtx_batch`, reused from batch to batch. Invariant: `offsets` has one
/// entry more than each per-entry column, and its last entry is `data.len()`.
#[derive(Debug, Default)]
struct Columns {
    data: Vec<u8>,
    offsets: Vec<u64>,
    record_ids: Vec<u64>,
    filetimes: Vec<u64>,
    file_offsets: Vec<u64>,
    chunk_indexes: Vec<u32>,
    statuses: Vec<u32>,
    recovered: Vec<u8>,
}

impl Columns {
    fn clear(&mut self) {
        self.data.clear();
        self.offsets.clear();
        self.offsets.push(0);
        self.record_ids.clear();
        self.filetimes.clear();
        self.file_offsets.clear();
        self.chunk_indexes.clear();
        self.statuses.clear();
        self.recovered.clear();
    }

    fn push(&mut self, item: &Item<'_>) {
        if item.status == evtx_status::Ok {
            self.data.extend_from_slice(item.data);
        } else {
            self.data.extend_from_slice(item.message.as_bytes());
        }
        self.offsets.push(self.data.len() as u64);
        self.record_ids.push(item.record_id);
        self.filetimes.push(item.filetime);
        self.file_offsets.push(item.file_offset);
        self.chunk_indexes.push(item.chunk_index);
        self.statuses.push(item.status as u32);
        self.recovered
            .push(u8::from(item.status == evtx_status::Ok && item.recovered));
    }

    fn len(&self) -> usize {
        self.statuses.len()
    }

    fn view(&self) -> evtx_batch {
        debug_assert_eq!(self.offsets.len(), self.len() + 1);
        evtx_batch {
            count: self.len(),
            data: self.data.as_ptr(),
            offsets: self.offsets.as_ptr(),
            record_ids: self.record_ids.as_ptr(),
            filetimes: self.filetimes.as_ptr(),
            file_offsets: self.file_offsets.as_ptr(),
            chunk_indexes: self.chunk_indexes.as_ptr(),
            statuses: self.statuses.as_ptr(),
            recovered: self.recovered.as_ptr(),
        }
    }
}

/// `evtx_parser_next_batch`; the contract is its export's doc comment (`rust/capi/src/ffi.rs`).
///
/// # Safety
/// As documented for `evtx_parser_next_batch`.
pub unsafe fn parser_next_batch(
    parser: *mut evtx_parser,
    max_entries: usize,
    max_bytes: usize,
    batch: *mut evtx_batch,
) -> evtx_status {
    // SAFETY: NULL or a live, unshared handle by the caller's contract.
    let Some(parser) = (unsafe { parser.as_mut() }) else {
        return fail(Failure::new(evtx_status::NullArgument, "parser is NULL"));
    };
    // SAFETY: NULL or valid for one write by the caller's contract.
    let Some(batch) = (unsafe { batch.as_mut() }) else {
        return fail(Failure::new(evtx_status::NullArgument, "batch is NULL"));
    };
    parser.batch.clear();
    *batch = parser.batch.view();
    if let Some(failure) = parser.pending.take() {
        return fail(failure);
    }
    if parser.poisoned {
        return fail(Failure::new(
            evtx_status::BadState,
            "the parser failed before",
        ));
    }
    let max_entries = max_entries.max(1);
    let max_bytes = if max_bytes == 0 {
        usize::MAX
    } else {
        max_bytes
    };
    let columns = &mut parser.batch;
    let engine = &mut parser.engine;
    let event_ranges = &parser.event_ranges;
    let mut fatal = None;
    let status = boundary(|| {
        while columns.len() < max_entries && columns.data.len() < max_bytes {
            match engine.next() {
                Ok(Some(item)) => {
                    if item.status == evtx_status::Ok && !selects(event_ranges, item.record_id) {
                        continue;
                    }
                    columns.push(&item);
                }
                Ok(None) => break,
                Err(failure) => {
                    fatal = Some(failure);
                    break;
                }
            }
        }
        evtx_status::Ok
    });
    if status == evtx_status::Internal {
        parser.poisoned = true;
        parser.batch.clear();
        *batch = parser.batch.view();
        return status;
    }
    if let Some(failure) = fatal {
        parser.poisoned = true;
        if parser.batch.len() == 0 {
            return fail(failure);
        }
        parser.pending = Some(failure);
    }
    *batch = parser.batch.view();
    if parser.batch.len() == 0 {
        evtx_status::End
    } else {
        evtx_status::Ok
    }
}

/// `evtx_parser_batch_system`; the contract is its export's doc comment
/// (`rust/capi/src/ffi.rs`).
///
/// # Safety
/// `parser` as for `parser_next`; `system` is NULL or valid for one `evtx_batch_system` write.
pub unsafe fn parser_batch_system(
    parser: *mut evtx_parser,
    system: *mut evtx_batch_system,
) -> evtx_status {
    // SAFETY: NULL or a live, unshared handle by the caller's contract.
    let Some(parser) = (unsafe { parser.as_mut() }) else {
        return fail(Failure::new(evtx_status::NullArgument, "parser is NULL"));
    };
    // SAFETY: NULL or valid for one write by the caller's contract.
    let Some(system) = (unsafe { system.as_mut() }) else {
        return fail(Failure::new(evtx_status::NullArgument, "system is NULL"));
    };
    let columns = &mut parser.system;
    columns.clear();
    let status = if !parser.json {
        fail(Failure::new(
            evtx_status::Unsupported,
            "System columns need JSON output",
        ))
    } else {
        let batch = &parser.batch;
        boundary(|| {
            for (i, &status) in batch.statuses.iter().enumerate() {
                let text = &batch.data[batch.offsets[i] as usize..batch.offsets[i + 1] as usize];
                columns.push((status == evtx_status::Ok as u32).then_some(text));
            }
            evtx_status::Ok
        })
    };
    if status != evtx_status::Ok {
        columns.clear();
    }
    *system = evtx_batch_system {
        count: columns.len(),
        provider_data: columns.provider.data.as_ptr(),
        provider_offsets: columns.provider.offsets.as_ptr(),
        channel_data: columns.channel.data.as_ptr(),
        channel_offsets: columns.channel.offsets.as_ptr(),
        computer_data: columns.computer.data.as_ptr(),
        computer_offsets: columns.computer.offsets.as_ptr(),
        event_ids: columns.event_ids.as_ptr(),
        levels: columns.levels.as_ptr(),
        present: columns.present.as_ptr(),
    };
    status
}

/// `evtx_parser_batch_timestamps`; the contract is its export's doc comment
/// (`rust/capi/src/ffi.rs`).
///
/// # Safety
/// `parser` as for `parser_next`; `texts` is NULL or valid for one `evtx_batch_texts` write.
pub unsafe fn parser_batch_timestamps(
    parser: *mut evtx_parser,
    texts: *mut evtx_batch_texts,
) -> evtx_status {
    // SAFETY: NULL or a live, unshared handle by the caller's contract.
    let Some(parser) = (unsafe { parser.as_mut() }) else {
        return fail(Failure::new(evtx_status::NullArgument, "parser is NULL"));
    };
    // SAFETY: NULL or valid for one write by the caller's contract.
    let Some(texts) = (unsafe { texts.as_mut() }) else {
        return fail(Failure::new(evtx_status::NullArgument, "texts is NULL"));
    };
    let stamps = &mut parser.timestamps;
    stamps.clear();
    let batch = &parser.batch;
    let status = boundary(|| {
        for (&status, &filetime) in batch.statuses.iter().zip(&batch.filetimes) {
            stamps.push((status == evtx_status::Ok as u32).then_some(filetime));
        }
        evtx_status::Ok
    });
    if status != evtx_status::Ok {
        stamps.clear();
    }
    debug_assert!(status != evtx_status::Ok || stamps.len() == batch.len());
    *texts = evtx_batch_texts {
        count: stamps.len(),
        data: stamps.data.as_ptr(),
        offsets: stamps.offsets.as_ptr(),
    };
    status
}

fn selects(event_ranges: &[evtx_event_range], record_id: u64) -> bool {
    event_ranges.is_empty()
        || event_ranges
            .iter()
            .any(|range| (range.first..=range.last).contains(&record_id))
}

/// The sink of `evtx_parser_dump`: the caller's callbacks plus the totals.
struct CallbackSink<'a> {
    write: unsafe extern "C" fn(*mut c_void, *const u8, usize) -> i32,
    on_error: evtx_error_fn,
    user_data: *mut c_void,
    event_ranges: &'a [evtx_event_range],
    stop_after_error: bool,
    stats: evtx_stats,
    /// Why the dump stopped early, if it did.
    stopped: Option<Failure>,
}

impl CallbackSink<'_> {
    fn write(&mut self, data: &[u8]) -> ControlFlow<()> {
        // SAFETY: the caller of `evtx_parser_dump` guarantees `write` may be called with its
        // `user_data` and a pointer/length pair valid for the duration of the call.
        let result = unsafe { (self.write)(self.user_data, data.as_ptr(), data.len()) };
        if result != 0 {
            self.stopped = Some(Failure::new(
                evtx_status::CallbackAborted,
                format!("the write callback returned {result}"),
            ));
            return ControlFlow::Break(());
        }
        self.stats.bytes_written += data.len() as u64;
        ControlFlow::Continue(())
    }
}

impl Sink for CallbackSink<'_> {
    fn record(&mut self, item: &Item<'_>) -> ControlFlow<()> {
        if !selects(self.event_ranges, item.record_id) {
            return ControlFlow::Continue(());
        }
        self.write(item.data)?;
        self.stats.records_ok += 1;
        ControlFlow::Continue(())
    }

    fn records(&mut self, data: &[u8], count: u64) -> ControlFlow<()> {
        debug_assert!(self.event_ranges.is_empty());
        self.write(data)?;
        self.stats.records_ok += count;
        ControlFlow::Continue(())
    }

    fn error(&mut self, item: &Item<'_>) -> ControlFlow<()> {
        self.stats.records_failed += 1;
        if let Some(on_error) = self.on_error {
            let message = c_string(item.message);
            let record = evtx_record {
                data: std::ptr::null(),
                data_len: 0,
                record_id: item.record_id,
                filetime: item.filetime,
                file_offset: item.file_offset,
                chunk_index: item.chunk_index,
                status: item.status as u32,
                message: message.as_ptr(),
                recovered: 0,
                checksum: EVTX_CHECKSUM_UNCHECKED,
            };
            // SAFETY: the caller of `evtx_parser_dump` guarantees `on_error` may be called
            // with its `user_data` and a record valid for the duration of the call.
            let result = unsafe { on_error(self.user_data, &record) };
            if result != 0 {
                self.stopped = Some(Failure::new(
                    evtx_status::CallbackAborted,
                    format!("the error callback returned {result}"),
                ));
                return ControlFlow::Break(());
            }
        }
        if self.stop_after_error && !item.extra {
            self.stopped = Some(Failure::new(
                item.status,
                format!("stopped after error: {}", item.message),
            ));
            return ControlFlow::Break(());
        }
        ControlFlow::Continue(())
    }
}

/// `evtx_parser_dump`; the contract is its export's doc comment (`rust/capi/src/ffi.rs`).
///
/// # Safety
/// As documented for `evtx_parser_dump`.
pub unsafe fn parser_dump(
    parser: *mut evtx_parser,
    write: evtx_write_fn,
    on_error: evtx_error_fn,
    user_data: *mut c_void,
    stats: *mut evtx_stats,
) -> evtx_status {
    // SAFETY: NULL or valid for one write by the caller's contract.
    let mut stats = unsafe { stats.as_mut() };
    if let Some(stats) = stats.as_deref_mut() {
        *stats = evtx_stats::default();
    }
    // SAFETY: NULL or a live, unshared handle by the caller's contract.
    let Some(parser) = (unsafe { parser.as_mut() }) else {
        return fail(Failure::new(evtx_status::NullArgument, "parser is NULL"));
    };
    let Some(write) = write else {
        return fail(Failure::new(evtx_status::NullArgument, "write is NULL"));
    };
    if parser.poisoned {
        return fail(Failure::new(
            evtx_status::BadState,
            "the parser failed before",
        ));
    }
    let mut sink = CallbackSink {
        write,
        on_error,
        user_data,
        event_ranges: &parser.event_ranges,
        stop_after_error: parser.stop_after_error,
        stats: evtx_stats::default(),
        stopped: None,
    };
    let engine = &mut parser.engine;
    let status = boundary(|| match engine.dump(&mut sink) {
        Ok(()) => match sink.stopped.take() {
            Some(failure) => fail(failure),
            None => evtx_status::Ok,
        },
        Err(failure) => fail(failure),
    });
    if let Some(stats) = stats {
        *stats = sink.stats;
    }
    if matches!(status, evtx_status::Internal | evtx_status::NotImplemented) {
        parser.poisoned = true;
    }
    status
}

/// `evtx_parser_free`; the contract is its export's doc comment (`rust/capi/src/ffi.rs`).
///
/// # Safety
/// As documented for `evtx_parser_free`.
pub unsafe fn parser_free(parser: *mut evtx_parser) {
    if parser.is_null() {
        return;
    }
    // A panic while dropping (a worker thread's, say) must not cross the boundary either.
    let _ = catch_unwind(AssertUnwindSafe(|| {
        // SAFETY: not NULL, created by `Box::into_raw` in `open`, and not freed before
        // (caller's contract), so it is ours to drop exactly once.
        drop(unsafe { Box::from_raw(parser) });
    }));
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `evtx_dump` reads `--wevt-cache` before `--mta`: with both set, the cache's failure is
    /// the one reported and the MTA file is never read.
    #[test]
    fn side_files_cache_first() {
        // SAFETY: NULL asks for the defaults.
        let mut settings = unsafe { settings_from(std::ptr::null()) }.unwrap();
        settings.wevt_cache_path = Some("a.wevtcache".into());
        settings.mta_path = Some("b.mta".into());
        let read = RefCell::new(Vec::new());
        let load = |path: &Path| {
            read.borrow_mut().push(path.to_path_buf());
            Ok(path.to_path_buf())
        };
        let (cache, mta) = settings.load_side_files(load, load).unwrap();
        assert_eq!(cache, settings.wevt_cache_path);
        assert_eq!(mta, settings.mta_path);
        assert_eq!(
            *read.borrow(),
            [PathBuf::from("a.wevtcache"), "b.mta".into()]
        );

        let refused = |_: &Path| -> Result<(), Failure> {
            Err(Failure::new(evtx_status::Io, "cannot read the cache"))
        };
        let failure = settings.load_side_files(refused, load).unwrap_err();
        assert_eq!(failure.message, "cannot read the cache");
        assert_eq!(
            read.borrow().len(),
            2,
            "the MTA file was read after the cache failed"
        );
    }
}
