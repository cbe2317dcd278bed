//! The C ABI of libevtx_rs called from Rust, as `cargo test` sees it: the status names are the
//! shared KIND strings, NULLs and bad inputs are refused, pulled and pushed bytes agree, the
//! event filter and the callbacks behave as the header says. The C smoke test
//! (compare/capi-tests/smoke.c, `zig build test-abi`) checks the same from C for all libraries.

use evtx_core::ErrorKind;
use evtx_rs::abi::{
    evtx_batch, evtx_batch_system, evtx_event_range, evtx_format, evtx_options, evtx_record,
    evtx_stats, evtx_status, evtx_value_range, EVTX_OPTIONS_VERSION_0, EVTX_SYSTEM_EVENT_ID,
};
use evtx_rs::ffi::{
    evtx_abi_version, evtx_backend_name, evtx_last_error, evtx_options_init, evtx_options_init_v1,
    evtx_parser, evtx_parser_batch_system, evtx_parser_dump, evtx_parser_free, evtx_parser_next,
    evtx_parser_next_batch, evtx_parser_open_buffer, evtx_parser_open_path, evtx_status_name,
    evtx_triage_path,
};
use std::ffi::{c_void, CStr};
use std::path::PathBuf;
use std::ptr::{null, null_mut};

fn fixture(name: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../../shared-fixtures/synthetic")
        .join(name)
}

fn text(pointer: *const std::ffi::c_char) -> String {
    // SAFETY: the library returns NUL-terminated static or handle-owned strings.
    unsafe { CStr::from_ptr(pointer) }
        .to_string_lossy()
        .into_owned()
}

fn defaults() -> evtx_options {
    let mut options = std::mem::MaybeUninit::<evtx_options>::uninit();
    // SAFETY: a valid pointer to writable memory for one `evtx_options`, which it initialises.
    unsafe {
        evtx_options_init_v1(options.as_mut_ptr());
        options.assume_init()
    }
}

fn open(data: &[u8], options: &evtx_options) -> Result<*mut evtx_parser, evtx_status> {
    let mut parser = null_mut();
    // SAFETY: `data` outlives every parser of these tests (each is freed before it is dropped).
    let status =
        unsafe { evtx_parser_open_buffer(data.as_ptr(), data.len(), options, &mut parser) };
    if status == evtx_status::Ok {
        Ok(parser)
    } else {
        assert!(parser.is_null());
        Err(status)
    }
}

/// Everything pulled: (rendered bytes, records, errors).
fn pull(parser: *mut evtx_parser) -> (Vec<u8>, u64, u64) {
    let mut bytes = Vec::new();
    let (mut records, mut errors) = (0, 0);
    loop {
        let mut record = std::mem::MaybeUninit::<evtx_record>::uninit();
        // SAFETY: a live parser and a writable record.
        let status = unsafe { evtx_parser_next(parser, record.as_mut_ptr()) };
        // SAFETY: `evtx_parser_next` always fills the record of a non-NULL parser.
        let record = unsafe { record.assume_init() };
        match status {
            evtx_status::Ok => {
                records += 1;
                // SAFETY: `data`/`data_len` are valid until the next call on the parser.
                bytes.extend_from_slice(unsafe {
                    std::slice::from_raw_parts(record.data, record.data_len)
                });
            }
            evtx_status::End => return (bytes, records, errors),
            other => {
                assert!(
                    other as u32 >= evtx_status::IncompleteChunk as u32,
                    "{other:?}"
                );
                assert!(record.data.is_null());
                errors += 1;
            }
        }
    }
}

unsafe extern "C" fn collect(user_data: *mut c_void, data: *const u8, len: usize) -> i32 {
    // SAFETY: the tests pass a `Vec<u8>` as user data, and the library valid bytes.
    unsafe {
        let out = &mut *user_data.cast::<Vec<u8>>();
        out.extend_from_slice(std::slice::from_raw_parts(data, len));
    }
    0
}

unsafe extern "C" fn refuse(_: *mut c_void, _: *const u8, _: usize) -> i32 {
    1
}

fn push(parser: *mut evtx_parser) -> (Vec<u8>, evtx_stats, evtx_status) {
    let mut out = Vec::<u8>::new();
    let mut stats = evtx_stats::default();
    // SAFETY: a live parser; `collect` expects the `Vec<u8>` passed as user data.
    let status = unsafe {
        evtx_parser_dump(
            parser,
            Some(collect),
            None,
            (&mut out as *mut Vec<u8>).cast(),
            &mut stats,
        )
    };
    (out, stats, status)
}

/// The KIND column of `shared-fixtures/README.md`'s table of error kinds, in order: the oracle
/// for the status names of the error statuses (written for readers, not by the code).
fn readme_kinds() -> Vec<String> {
    let readme = std::fs::read_to_string(
        PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../shared-fixtures/README.md"),
    )
    .unwrap();
    let table = readme.split("| KIND | when | DETAIL |").nth(1).unwrap();
    table
        .lines()
        .skip(2)
        .take_while(|line| line.starts_with("| `"))
        .map(|line| line.split('`').nth(1).unwrap().to_owned())
        .collect()
}

#[test]
fn status_names_are_the_shared_kind_strings() {
    let kinds = readme_kinds();
    assert_eq!(kinds.len(), 11, "{kinds:?}");
    let first = evtx_status::IncompleteChunk as u32;
    for (status, kind) in (first..).zip(&kinds) {
        assert_eq!(&text(evtx_status_name(status)), kind);
    }
    assert_eq!(evtx_status::BadBinxml as u32, first + 10);
    // The engine prints the same strings in its error lines.
    assert_eq!(ErrorKind::IncompleteChunk.as_str(), kinds[0]);
    assert_eq!(ErrorKind::BadBinxml.as_str(), kinds[10]);
    assert_eq!(text(evtx_status_name(evtx_status::Io as u32)), "i/o error");
    assert_eq!(
        text(evtx_status_name(evtx_status::Unsupported as u32)),
        "unsupported option"
    );
    assert_eq!(text(evtx_status_name(999)), "unknown status");
    assert_eq!(evtx_abi_version(), evtx_rs::abi::EVTX_ABI_VERSION);
    assert_eq!(text(evtx_backend_name()), "rust");
}

#[test]
fn null_and_bad_inputs_are_refused() {
    let options = defaults();
    let mut parser = null_mut();
    // SAFETY: NULL pointers are part of the contract under test.
    unsafe {
        assert_eq!(
            evtx_parser_open_path(null(), &options, &mut parser),
            evtx_status::NullArgument
        );
        assert_eq!(
            evtx_parser_open_buffer(null(), 0, null(), &mut parser),
            evtx_status::NullArgument
        );
        assert_eq!(
            evtx_parser_next(null_mut(), null_mut()),
            evtx_status::NullArgument
        );
        assert_eq!(
            evtx_parser_dump(null_mut(), None, None, null_mut(), null_mut()),
            evtx_status::NullArgument
        );
        evtx_parser_free(null_mut());
        let missing = c"/nonexistent/evtx-twin.evtx";
        assert_eq!(
            evtx_parser_open_path(missing.as_ptr(), null(), &mut parser),
            evtx_status::Io
        );
        assert!(!text(evtx_last_error()).is_empty());
    }
    assert_eq!(open(&[], &options).unwrap_err(), evtx_status::NotEvtx);
    assert_eq!(
        open(&[0x5a; 5000], &options).unwrap_err(),
        evtx_status::NotEvtx
    );

    let data = std::fs::read(fixture("basic.evtx")).unwrap();
    let mut bad = defaults();
    bad.format = 9;
    assert_eq!(open(&data, &bad).unwrap_err(), evtx_status::InvalidOptions);
    let mut bad = defaults();
    bad.ansi_codec = c"utf-16le".as_ptr();
    assert_eq!(open(&data, &bad).unwrap_err(), evtx_status::InvalidOptions);
    let mut bad = defaults();
    bad.event_ranges_count = 2;
    assert_eq!(open(&data, &bad).unwrap_err(), evtx_status::InvalidOptions);
    let mut recover = defaults();
    recover.recover_records = 1;
    let parser = open(&data, &recover).unwrap();
    // SAFETY: a live parser from `open`, freed once.
    unsafe { evtx_parser_free(parser) };
}

#[test]
fn pull_and_push_give_the_same_bytes_in_every_format() {
    let data = std::fs::read(fixture("basic.evtx")).unwrap();
    for format in [evtx_format::Xml, evtx_format::Json, evtx_format::Jsonl] {
        for threads in [1, 2] {
            let mut options = defaults();
            options.format = format as u32;
            options.threads = threads;
            let parser = open(&data, &options).unwrap();
            let (pulled, records, errors) = pull(parser);
            // SAFETY: created above, freed once.
            unsafe { evtx_parser_free(parser) };
            let parser = open(&data, &options).unwrap();
            let (pushed, stats, status) = push(parser);
            // SAFETY: created above, freed once.
            unsafe { evtx_parser_free(parser) };
            assert_eq!(status, evtx_status::Ok);
            assert!(records > 0);
            assert_eq!(pulled, pushed, "{format:?} -t {threads}");
            assert_eq!((stats.records_ok, stats.records_failed), (records, errors));
            assert_eq!(stats.bytes_written, pushed.len() as u64);
            if format == evtx_format::Jsonl {
                let lines = pushed.iter().filter(|&&b| b == b'\n').count() as u64;
                assert_eq!(lines, records, "one line per record");
            } else {
                assert!(pushed.starts_with(b"Record "), "banner");
            }
        }
    }
}

#[test]
fn event_ranges_keep_only_those_records() {
    let data = std::fs::read(fixture("basic.evtx")).unwrap();
    let ranges = [evtx_event_range { first: 2, last: 3 }];
    let mut options = defaults();
    options.format = evtx_format::Json as u32;
    options.event_ranges = ranges.as_ptr();
    options.event_ranges_count = ranges.len();
    let parser = open(&data, &options).unwrap();
    let (out, stats, status) = push(parser);
    // SAFETY: created above, freed once.
    unsafe { evtx_parser_free(parser) };
    assert_eq!(status, evtx_status::Ok);
    assert_eq!(stats.records_ok, 2);
    let banners: Vec<&[u8]> = out
        .split(|&b| b == b'\n')
        .filter(|l| l.starts_with(b"Record "))
        .collect();
    assert_eq!(banners, vec![&b"Record 2"[..], &b"Record 3"[..]]);
}

/// `evtx_options_init` (version 0) writes nothing past `wevt_cache_path`, and the library
/// reads nothing past it: a program built before the filters has no memory there.
#[test]
fn version_0_options_end_at_wevt_cache_path() {
    let v0 = std::mem::offset_of!(evtx_options, event_ids);
    let mut bytes = [0xAAu8; std::mem::size_of::<evtx_options>()];
    // SAFETY: `bytes` is writable and as large as the whole struct (version 0 needs less).
    unsafe { evtx_options_init(bytes.as_mut_ptr().cast()) };
    assert!(
        bytes[v0..].iter().all(|&b| b == 0xAA),
        "written past version 0"
    );
    assert_eq!(
        bytes[std::mem::offset_of!(evtx_options, version)],
        EVTX_OPTIONS_VERSION_0
    );
    // The bytes after version 0 are garbage here (0xAA): a version 0 open ignores them.
    let data = std::fs::read(fixture("filters.evtx")).unwrap();
    let mut options = std::mem::MaybeUninit::<evtx_options>::uninit();
    // SAFETY: every byte of `bytes` is initialised, and any bytes are a valid `evtx_options`
    // (integers and raw pointers).
    let garbage = unsafe {
        std::ptr::copy_nonoverlapping(bytes.as_ptr(), options.as_mut_ptr().cast(), bytes.len());
        options.assume_init()
    };
    assert_eq!(pull_all(&data, &garbage), pull_all(&data, &defaults()));
}

/// `event_ids` keeps the records whose event id (as `evtx_parser_batch_system` reads it from
/// the unfiltered JSON text, not from the parsed record the engine decides on) is in range,
/// and every error.
#[test]
fn event_ids_keep_the_records_whose_system_matches() {
    let data = std::fs::read(fixture("filters.evtx")).unwrap();
    let mut options = defaults();
    options.format = evtx_format::Jsonl as u32;
    let parser = open(&data, &options).unwrap();
    let mut batch = std::mem::MaybeUninit::<evtx_batch>::uninit();
    let mut system = std::mem::MaybeUninit::<evtx_batch_system>::uninit();
    // SAFETY: a live parser and writable structs; the columns are read before the next call.
    let want: Vec<u64> = unsafe {
        let status = evtx_parser_next_batch(parser, 1 << 20, 0, batch.as_mut_ptr());
        assert_eq!(status, evtx_status::Ok);
        let status = evtx_parser_batch_system(parser, system.as_mut_ptr());
        assert_eq!(status, evtx_status::Ok);
        let (batch, system) = (batch.assume_init(), system.assume_init());
        (0..batch.count)
            .filter(|&i| {
                let id = *system.event_ids.add(i);
                let has = *system.present.add(i) & EVTX_SYSTEM_EVENT_ID != 0;
                *batch.statuses.add(i) != 0 || has && (id == 4624 || (1..=2).contains(&id))
            })
            .map(|i| *batch.record_ids.add(i))
            .collect()
    };
    // SAFETY: created above, freed once.
    unsafe { evtx_parser_free(parser) };
    let ranges = [
        evtx_value_range {
            first: 4624,
            last: 4624,
        },
        evtx_value_range { first: 1, last: 2 },
    ];
    options.event_ids = ranges.as_ptr();
    options.event_ids_count = ranges.len();
    let parser = open(&data, &options).unwrap();
    let got: Vec<u64> = pull_entries(parser).iter().map(|e| e.1).collect();
    // SAFETY: created above, freed once.
    unsafe { evtx_parser_free(parser) };
    assert!(!want.is_empty(), "the fixture has such records");
    assert_eq!(got, want);
}

/// A range whose first value is past its last.
static EMPTY_RANGE: [evtx_value_range; 1] = [evtx_value_range { first: 5, last: 4 }];

#[test]
fn bad_filters_are_invalid_options() {
    let data = std::fs::read(fixture("basic.evtx")).unwrap();
    let empty = EMPTY_RANGE;
    let names = [c"Security".as_ptr(), c"".as_ptr()];
    let no_name = [null()];
    let bad: [fn(&mut evtx_options); 8] = [
        |o| o.version = 2,
        |o| o.reserved_v1[3] = 1,
        |o| o.event_ids_count = 1,
        |o| {
            o.levels = EMPTY_RANGE.as_ptr();
            o.levels_count = 1;
        },
        |o| o.channels_count = 2,
        |o| {
            o.since_set = 1;
            o.until_set = 1;
        },
        |o| {
            o.since_set = 1;
            o.since = 10;
            o.until_set = 1;
            o.until = 9;
        },
        |o| o.reserved = 1,
    ];
    for (n, change) in bad.iter().enumerate() {
        let mut options = defaults();
        change(&mut options);
        assert_eq!(
            open(&data, &options),
            Err(evtx_status::InvalidOptions),
            "case {n}"
        );
    }
    for (list, count) in [(&names[..], 2), (&no_name[..], 1)] {
        let mut options = defaults();
        options.providers = list.as_ptr();
        options.providers_count = count;
        assert_eq!(open(&data, &options), Err(evtx_status::InvalidOptions));
    }
    let mut options = defaults();
    options.event_ids = empty.as_ptr();
    options.event_ids_count = 0; // a pointer with count 0 constrains nothing
    options.providers = names.as_ptr();
    options.providers_count = 1;
    let parser = open(&data, &options).unwrap();
    // SAFETY: created above, freed once.
    unsafe { evtx_parser_free(parser) };
}

#[test]
fn a_refusing_callback_stops_the_dump() {
    let data = std::fs::read(fixture("basic.evtx")).unwrap();
    let parser = open(&data, &defaults()).unwrap();
    let mut stats = evtx_stats::default();
    // SAFETY: a live parser; `refuse` ignores its arguments.
    let status = unsafe { evtx_parser_dump(parser, Some(refuse), None, null_mut(), &mut stats) };
    // SAFETY: created above, freed once.
    unsafe { evtx_parser_free(parser) };
    assert_eq!(status, evtx_status::CallbackAborted);
    assert_eq!(stats.bytes_written, 0);
}

fn open_path(path: &std::path::Path, options: &evtx_options) -> *mut evtx_parser {
    let c_path = std::ffi::CString::new(path.as_os_str().as_encoded_bytes()).unwrap();
    let mut parser = null_mut();
    // SAFETY: a NUL-terminated path, valid options and a writable out pointer.
    let status = unsafe { evtx_parser_open_path(c_path.as_ptr(), options, &mut parser) };
    assert_eq!(status, evtx_status::Ok, "{}", text(evtx_last_error()));
    parser
}

/// A path is read through chunk windows, a buffer in place: the same items either way, on a
/// wrapped log (oldest chunk in the middle, an empty slot).
#[test]
fn open_path_reads_through_windows_like_open_buffer() {
    let path = fixture("../damaged/wrapped.evtx");
    let data = std::fs::read(&path).unwrap();
    for threads in [1, 2] {
        let mut options = defaults();
        options.format = evtx_format::Jsonl as u32;
        options.threads = threads;
        let from_buffer = pull(open(&data, &options).unwrap());
        let parser = open_path(&path, &options);
        let from_path = pull(parser);
        // SAFETY: created above, freed once.
        unsafe { evtx_parser_free(parser) };
        assert_eq!(from_path, from_buffer, "-t {threads}");
        assert!(from_path.1 > 30);
        let parser = open_path(&path, &options);
        let (pushed, stats, status) = push(parser);
        // SAFETY: created above, freed once.
        unsafe { evtx_parser_free(parser) };
        assert_eq!(status, evtx_status::Ok);
        assert_eq!(
            (pushed, stats.records_ok, stats.records_failed),
            from_buffer
        );
    }
}

/// A file that shrinks after `open_path` gives one `incomplete chunk` item per lost slot (the
/// host process gets no SIGBUS), and bytes appended later are ignored.
#[test]
fn open_path_on_a_file_that_shrinks_gives_incomplete_chunks() {
    let data = std::fs::read(fixture("../damaged/wrapped.evtx")).unwrap();
    assert_eq!(data.len(), 4096 + 4 * 65536);
    let path = std::env::temp_dir().join(format!("evtx-capi-shrink-{}.evtx", std::process::id()));
    std::fs::write(&path, &data).unwrap();
    let parser = open_path(&path, &defaults());
    // Keep slots 0 and 1 and half of slot 2; slot 3 is gone.
    let file = std::fs::OpenOptions::new().write(true).open(&path).unwrap();
    file.set_len(4096 + 2 * 65536 + 32768).unwrap();
    let mut incomplete = Vec::new();
    loop {
        let mut record = std::mem::MaybeUninit::<evtx_record>::uninit();
        // SAFETY: a live parser and a writable record.
        let status = unsafe { evtx_parser_next(parser, record.as_mut_ptr()) };
        // SAFETY: `evtx_parser_next` always fills the record of a non-NULL parser.
        let record = unsafe { record.assume_init() };
        match status {
            evtx_status::End => break,
            evtx_status::IncompleteChunk => {
                incomplete.push((record.chunk_index, record.file_offset))
            }
            _ => {}
        }
    }
    // SAFETY: created above, freed once.
    unsafe { evtx_parser_free(parser) };
    let _ = std::fs::remove_file(&path);
    incomplete.sort_unstable();
    assert_eq!(
        incomplete,
        vec![(2, 4096 + 2 * 65536), (3, 4096 + 3 * 65536)]
    );
}

#[test]
fn recovered_records_are_flagged_and_marked() {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../../shared-fixtures/carving/slack-and-gaps.evtx");
    let data = std::fs::read(path).unwrap();
    for recover in [0, 1] {
        let mut options = defaults();
        options.format = evtx_format::Json as u32;
        options.recover_records = recover;
        let parser = open(&data, &options).unwrap();
        let mut flagged = Vec::new();
        let mut live = Vec::new();
        let mut record = std::mem::MaybeUninit::<evtx_record>::uninit();
        loop {
            // SAFETY: a live parser and a writable record.
            let status = unsafe { evtx_parser_next(parser, record.as_mut_ptr()) };
            if status == evtx_status::End {
                break;
            }
            // SAFETY: filled by the call above.
            let r = unsafe { record.assume_init_ref() };
            if status != evtx_status::Ok {
                assert_eq!(r.recovered, 0, "errors are never recovered");
                continue;
            }
            // SAFETY: `data`/`data_len` describe the record's bytes until the next call.
            let bytes = unsafe { std::slice::from_raw_parts(r.data, r.data_len) };
            let banner = format!("Record {} (recovered)\n{{\"recovered\":true,", r.record_id);
            if r.recovered == 1 {
                assert!(bytes.starts_with(banner.as_bytes()));
                flagged.push(r.record_id);
            } else {
                assert_eq!(r.recovered, 0);
                assert!(!bytes.windows(9).any(|w| w == b"recovered"));
                live.push(r.record_id);
            }
        }
        // SAFETY: created above, freed once.
        unsafe { evtx_parser_free(parser) };
        assert_eq!(live, (1..=7).collect::<Vec<u64>>());
        // The stale records in the gap after the bad record and in the slack (the reference's
        // output, contract 5.4); none without the option.
        let want: Vec<u64> = if recover == 1 {
            vec![50, 52, 53, 54]
        } else {
            vec![]
        };
        assert_eq!(flagged, want);
    }
}

/// Everything pulled one by one: (status, record id, offset, chunk, bytes or message).
fn pull_entries(parser: *mut evtx_parser) -> Vec<(u32, u64, u64, u32, Vec<u8>)> {
    let mut entries = Vec::new();
    loop {
        let mut record = std::mem::MaybeUninit::<evtx_record>::uninit();
        // SAFETY: a live parser and a writable record.
        let status = unsafe { evtx_parser_next(parser, record.as_mut_ptr()) };
        // SAFETY: `evtx_parser_next` always fills the record of a non-NULL parser.
        let record = unsafe { record.assume_init() };
        let bytes = match status {
            evtx_status::End => return entries,
            // SAFETY: `data`/`data_len` are valid until the next call on the parser.
            evtx_status::Ok => {
                unsafe { std::slice::from_raw_parts(record.data, record.data_len) }.to_vec()
            }
            _ => text(record.message).into_bytes(),
        };
        let (id, offset, chunk) = (record.record_id, record.file_offset, record.chunk_index);
        entries.push((status as u32, id, offset, chunk, bytes));
    }
}

/// Everything pulled in batches of `size`, as `pull_entries` gives it.
fn batch_entries(parser: *mut evtx_parser, size: usize) -> Vec<(u32, u64, u64, u32, Vec<u8>)> {
    let mut entries = Vec::new();
    loop {
        let mut batch = std::mem::MaybeUninit::<evtx_batch>::uninit();
        // SAFETY: a live parser and a writable batch.
        let status = unsafe { evtx_parser_next_batch(parser, size, 0, batch.as_mut_ptr()) };
        // SAFETY: the call always fills the batch of a non-NULL parser.
        let batch = unsafe { batch.assume_init() };
        if status == evtx_status::End {
            assert_eq!(batch.count, 0);
            return entries;
        }
        assert_eq!(status, evtx_status::Ok);
        assert!(batch.count >= 1 && batch.count <= size.max(1));
        // SAFETY: every column holds `count` entries (offsets `count + 1`) until the next call.
        unsafe {
            let offsets = std::slice::from_raw_parts(batch.offsets, batch.count + 1);
            let data = std::slice::from_raw_parts(batch.data, offsets[batch.count] as usize);
            for i in 0..batch.count {
                let bytes = data[offsets[i] as usize..offsets[i + 1] as usize].to_vec();
                entries.push((
                    *batch.statuses.add(i),
                    *batch.record_ids.add(i),
                    *batch.file_offsets.add(i),
                    *batch.chunk_indexes.add(i),
                    bytes,
                ));
            }
        }
    }
}

#[test]
fn batches_hold_what_pulling_one_by_one_gives() {
    let damaged = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../shared-fixtures/damaged");
    for path in [fixture("basic.evtx"), damaged.join("bad-chunks.evtx")] {
        let data = std::fs::read(&path).unwrap();
        let mut options = defaults();
        options.format = evtx_format::Jsonl as u32;
        options.threads = 1;
        let parser = open(&data, &options).unwrap();
        let expected = pull_entries(parser);
        // SAFETY: created above, freed once.
        unsafe { evtx_parser_free(parser) };
        assert!(expected.iter().any(|e| e.0 == 0));
        // The threaded pull (3 workers: groups of 12 slots) hands out the same entries.
        for (size, threads) in [(0, 1), (1, 1), (3, 1), (8192, 1), (1, 3), (8192, 3)] {
            options.threads = threads;
            let parser = open(&data, &options).unwrap();
            assert_eq!(
                batch_entries(parser, size),
                expected,
                "{path:?} size {size} threads {threads}"
            );
            // SAFETY: created above, freed once.
            unsafe { evtx_parser_free(parser) };
        }
    }
    // SAFETY: NULL arguments are refused, not dereferenced.
    unsafe {
        assert_eq!(
            evtx_parser_next_batch(null_mut(), 1, 0, null_mut()),
            evtx_status::NullArgument
        );
    }
}

/// A shared fixture outside `synthetic/`, as a NUL-terminated path.
fn shared_path(name: &str) -> std::ffi::CString {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../../shared-fixtures")
        .join(name);
    std::ffi::CString::new(path.into_os_string().into_encoded_bytes()).unwrap()
}

fn shared(name: &str) -> Vec<u8> {
    std::fs::read(shared_path(name).to_str().unwrap()).unwrap()
}

/// Opens `data`, pulls everything and frees the parser: (bytes, records, errors).
fn pull_all(data: &[u8], options: &evtx_options) -> Result<(Vec<u8>, u64, u64), evtx_status> {
    let parser = open(data, options)?;
    let pulled = pull(parser);
    // SAFETY: a live parser from `open`, freed once.
    unsafe { evtx_parser_free(parser) };
    Ok(pulled)
}

#[test]
fn mta_path_adds_the_references_rendering_info() {
    // Reference (`evtx_dump -t 1 [--mta events.full.MTA] events.evtx`): 16 records, 13 of
    // them with a RenderingInfo element (1, the log's own, without the file), one holding the
    // generator's "Beta message".
    let data = shared("mta/events.evtx");
    let mta = shared_path("mta/events.full.MTA");
    let count = |text: &[u8]| {
        let text = String::from_utf8_lossy(text);
        text.matches("<RenderingInfo>").count()
    };
    let (plain, records, _) = pull_all(&data, &defaults()).unwrap();
    assert_eq!((records, count(&plain)), (16, 1));
    let mut options = defaults();
    options.mta_path = mta.as_ptr();
    for threads in [1, 2] {
        options.threads = threads;
        let (text, records, _) = pull_all(&data, &options).unwrap();
        assert_eq!((records, count(&text)), (16, 13));
        assert!(String::from_utf8_lossy(&text).contains("<Message>Beta message</Message>"));
        let parser = open(&data, &options).unwrap();
        let (pushed, _, status) = push(parser);
        // SAFETY: created above, freed once.
        unsafe { evtx_parser_free(parser) };
        assert_eq!((status, pushed), (evtx_status::Ok, text));
    }
}

#[test]
fn a_bad_mta_or_cache_fails_the_open_in_the_clis_words() {
    let data = shared("mta/events.evtx");
    let cases = [
        (
            true,
            "mta/no-such-file.MTA",
            evtx_status::Io,
            "failed to read `",
        ),
        (
            true,
            "mta/events.damaged-magic.MTA",
            evtx_status::InvalidOptions,
            "not an MTA file (magic [58, 54, 41, 46, 69, 6c, 65, 00])",
        ),
        (
            true,
            "mta/events.damaged-version.MTA",
            evtx_status::InvalidOptions,
            "unsupported MTA version 2.1",
        ),
        (
            false,
            "wevt/no-such-file.wevtcache",
            evtx_status::Io,
            "I/O error while open `",
        ),
        (
            false,
            "wevt/damaged-magic.wevtcache",
            evtx_status::InvalidOptions,
            "invalid `.wevtcache` magic for `",
        ),
        (
            false,
            "wevt/damaged-crim-magic.wevtcache",
            evtx_status::InvalidOptions,
            "failed to parse CRIM/WEVT blob: invalid signature at offset 0",
        ),
    ];
    // The messages are the reference's (`evtx_dump --mta/--wevt-cache ...`, stderr).
    for (mta, name, status, message) in cases {
        let path = shared_path(name);
        let mut options = defaults();
        if mta {
            options.mta_path = path.as_ptr();
        } else {
            options.wevt_cache_path = path.as_ptr();
        }
        assert_eq!(open(&data, &options).unwrap_err(), status, "{name}");
        assert!(text(evtx_last_error()).starts_with(message), "{name}");
        // The file header is read first, as the CLI does.
        assert_eq!(
            open(&data[..100], &options).unwrap_err(),
            evtx_status::NotEvtx
        );
    }
}

#[test]
fn wevt_cache_path_renders_records_whose_template_is_broken() {
    // Reference (`evtx_dump -t 1 -o jsonl [--wevt-cache templates.wevtcache] events.evtx`):
    // 2 records and 8 errors without the cache, 8 records and 2 errors with it.
    let data = shared("wevt/events.evtx");
    let cache = shared_path("wevt/templates.wevtcache");
    let mut options = defaults();
    options.format = evtx_format::Jsonl as u32;
    let (_, records, errors) = pull_all(&data, &options).unwrap();
    assert_eq!((records, errors), (2, 8));
    options.wevt_cache_path = cache.as_ptr();
    let (text, records, errors) = pull_all(&data, &options).unwrap();
    assert_eq!((records, errors), (8, 2));
    assert!(String::from_utf8_lossy(&text).contains(r#""TargetUserName":"alice""#));
}

/// The functions `include/evtx.h` declares (written from `src/ffi.rs` by cbindgen) are the
/// table of `evtx_abi::exports!` that the reference shim exports, in the same order; with
/// `exports!(check)` in `src/ffi.rs` (same signatures), no library can add a function alone.
#[test]
fn header_functions_are_the_shared_export_table() {
    let header = std::fs::read_to_string(
        PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../include/evtx.h"),
    )
    .unwrap();
    let declared: Vec<&str> = header
        .lines()
        .filter(|line| !line.starts_with(['/', '#', ' ', '}']) && !line.starts_with("typedef"))
        .filter_map(|line| {
            let name_end = line.find('(')?;
            let name_start = line[..name_end].rfind([' ', '*']).map_or(0, |at| at + 1);
            Some(&line[name_start..name_end])
        })
        .collect();
    assert_eq!(declared.len(), 16, "{declared:?}");
    assert_eq!(declared, evtx_abi::exports::NAMES);
}

/// `evtx_triage_path`: one file's report through one write (the manifest's 10 records of
/// `filters.evtx`, the path as given), the open statuses for inputs it cannot read (nothing
/// written), the silence's range, NULLs, and a write that refuses.
#[test]
fn triage_writes_one_files_report() {
    let triage = |path: &std::path::Path, silence: u64, write: evtx_rs::abi::evtx_write_fn| {
        let name = std::ffi::CString::new(path.to_str().unwrap()).unwrap();
        let mut out = Vec::<u8>::new();
        let user = (&mut out as *mut Vec<u8>).cast::<c_void>();
        // SAFETY: a NUL-terminated path; `collect` and `refuse` take the `Vec` passed.
        let status = unsafe { evtx_triage_path(name.as_ptr(), silence, write, user) };
        (status, String::from_utf8(out).unwrap())
    };
    let path = fixture("filters.evtx");
    let (status, json) = triage(&path, 3600, Some(collect));
    assert_eq!(status, evtx_status::Ok);
    let head = format!(
        "{{\"path\":\"{}\",\"error\":null,\"size\":69632,",
        path.display()
    );
    assert!(json.starts_with(&head), "{json}");
    assert!(json.contains(",\"records\":10,\"recovered\":0,") && json.ends_with("]}"));
    let (status, json) = triage(&fixture("no-such-file.evtx"), 3600, Some(collect));
    assert_eq!((status, json.as_str()), (evtx_status::Io, ""));
    let magic = fixture("../damaged/bad-file-magic.evtx");
    assert_eq!(triage(&magic, 3600, Some(collect)).0, evtx_status::NotEvtx);
    for silence in [0, 315_360_001] {
        assert_eq!(
            triage(&path, silence, Some(collect)).0,
            evtx_status::InvalidOptions
        );
    }
    assert_eq!(triage(&path, 315_360_000, Some(collect)).0, evtx_status::Ok);
    assert_eq!(
        triage(&path, 3600, Some(refuse)).0,
        evtx_status::CallbackAborted
    );
    assert_eq!(triage(&path, 3600, None).0, evtx_status::NullArgument);
    // SAFETY: a NULL path is refused before anything is read.
    let status = unsafe { evtx_triage_path(null(), 3600, Some(collect), null_mut()) };
    assert_eq!(status, evtx_status::NullArgument);
}
