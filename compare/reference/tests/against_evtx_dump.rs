//! The shim's definition of "rendered bytes": what `evtx_parser_dump` writes through libevtx_ref
//! equals the stdout of the reference `evtx_dump` 0.15.1 for the same options, on the committed
//! fixtures and, when `EVTX_SAMPLES` points at them, a few public samples.
//!
//! The reference binary comes from `EVTX_REFERENCE` (the Makefile sets it to
//! target/reference/bin/evtx_dump). Without it the test says so and passes, unless
//! `EVTX_REQUIRE_REFERENCE=1` (as in `make test`), which makes a missing binary a failure.

use evtx_ref::abi::{evtx_format, evtx_options, evtx_stats, evtx_status};
use evtx_ref::ffi::{
    evtx_options_init, evtx_parser_dump, evtx_parser_free, evtx_parser_open_buffer,
};
use std::ffi::c_void;
use std::path::{Path, PathBuf};
use std::process::Command;

/// One CLI invocation and the options that mirror it.
struct Mode {
    args: &'static [&'static str],
    format: evtx_format,
    indent: bool,
    banner: bool,
    separate: bool,
}

const MODES: &[Mode] = &[
    Mode {
        args: &["-o", "xml"],
        format: evtx_format::Xml,
        indent: true,
        banner: true,
        separate: false,
    },
    Mode {
        args: &["-o", "xml", "--no-indent", "--dont-show-record-number"],
        format: evtx_format::Xml,
        indent: false,
        banner: false,
        separate: false,
    },
    Mode {
        args: &["-o", "json"],
        format: evtx_format::Json,
        indent: true,
        banner: true,
        separate: false,
    },
    Mode {
        args: &["-o", "json", "--separate-json-attributes"],
        format: evtx_format::Json,
        indent: true,
        banner: true,
        separate: true,
    },
    Mode {
        args: &["-o", "jsonl"],
        format: evtx_format::Jsonl,
        indent: true,
        banner: true,
        separate: false,
    },
];

const SAMPLES: &[&str] = &[
    "security.evtx",
    "sysmon.evtx",
    "sample_with_a_bad_chunk_magic.evtx",
];

fn reference() -> Option<PathBuf> {
    let path = std::env::var_os("EVTX_REFERENCE").map(PathBuf::from);
    match path {
        Some(path) if path.is_file() => Some(path),
        _ => {
            let required = std::env::var("EVTX_REQUIRE_REFERENCE").is_ok_and(|v| v == "1");
            assert!(
                !required,
                "EVTX_REQUIRE_REFERENCE=1 but EVTX_REFERENCE is not an executable file"
            );
            eprintln!("against_evtx_dump: EVTX_REFERENCE not set; skipped");
            None
        }
    }
}

fn inputs() -> Vec<PathBuf> {
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../shared-fixtures");
    let mut inputs = Vec::new();
    for dir in ["synthetic", "damaged"] {
        if let Ok(entries) = std::fs::read_dir(root.join(dir)) {
            inputs.extend(
                entries
                    .filter_map(Result::ok)
                    .map(|entry| entry.path())
                    .filter(|path| path.extension().is_some_and(|ext| ext == "evtx")),
            );
        }
    }
    let required = std::env::var("EVTX_REQUIRE_SAMPLES").is_ok_and(|v| v == "1");
    match std::env::var_os("EVTX_SAMPLES") {
        Some(samples) => {
            let found: Vec<PathBuf> = SAMPLES
                .iter()
                .map(|name| Path::new(&samples).join(name))
                .filter(|p| p.is_file())
                .collect();
            assert!(
                !required || found.len() == SAMPLES.len(),
                "EVTX_REQUIRE_SAMPLES=1 but only {} of the {} samples are in {}",
                found.len(),
                SAMPLES.len(),
                Path::new(&samples).display()
            );
            inputs.extend(found);
        }
        None => {
            assert!(
                !required,
                "EVTX_REQUIRE_SAMPLES=1 but EVTX_SAMPLES is not set"
            );
            eprintln!("against_evtx_dump: SKIPPED the samples: EVTX_SAMPLES is not set");
        }
    }
    inputs.sort();
    inputs
}

unsafe extern "C" fn collect(user_data: *mut c_void, data: *const u8, len: usize) -> i32 {
    // SAFETY: the test passes a `Vec<u8>` as user data, and the library valid bytes.
    unsafe {
        let out = &mut *user_data.cast::<Vec<u8>>();
        out.extend_from_slice(std::slice::from_raw_parts(data, len));
    }
    0
}

/// The shim's bytes, or `None` when the file is not EVTX at all.
fn shim(data: &[u8], mode: &Mode) -> Option<Vec<u8>> {
    let mut options = std::mem::MaybeUninit::<evtx_options>::uninit();
    // SAFETY: writable memory for one `evtx_options`, initialised by the call.
    let mut options = unsafe {
        evtx_options_init(options.as_mut_ptr());
        options.assume_init()
    };
    options.format = mode.format as u32;
    options.indent = mode.indent as u8;
    options.show_record_number = mode.banner as u8;
    options.separate_json_attributes = mode.separate as u8;
    options.threads = 1;
    let mut parser = std::ptr::null_mut();
    // SAFETY: `data` outlives the parser, which is freed below.
    let status =
        unsafe { evtx_parser_open_buffer(data.as_ptr(), data.len(), &options, &mut parser) };
    if status == evtx_status::NotEvtx {
        return None;
    }
    assert_eq!(status, evtx_status::Ok);
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
    // SAFETY: created above, freed once.
    unsafe { evtx_parser_free(parser) };
    assert_eq!(status, evtx_status::Ok);
    Some(out)
}

#[test]
fn dump_bytes_equal_evtx_dump_stdout() {
    let Some(reference) = reference() else {
        return;
    };
    let inputs = inputs();
    assert!(!inputs.is_empty(), "no fixtures found");
    for input in &inputs {
        let data = std::fs::read(input).unwrap();
        for mode in MODES {
            let output = Command::new(&reference)
                .args(["-t", "1"])
                .args(mode.args)
                .arg(input)
                .output()
                .unwrap();
            match shim(&data, mode) {
                None => assert!(
                    !output.status.success(),
                    "{}: the CLI read it",
                    input.display()
                ),
                Some(bytes) => {
                    assert!(
                        output.status.success(),
                        "{}: {:?}",
                        input.display(),
                        output.status
                    );
                    assert!(
                        bytes == output.stdout,
                        "{} {:?}: the shim wrote {} bytes, evtx_dump {}",
                        input.display(),
                        mode.args,
                        bytes.len(),
                        output.stdout.len()
                    );
                }
            }
        }
    }
    eprintln!(
        "against_evtx_dump: {} inputs × {} modes compared",
        inputs.len(),
        MODES.len()
    );
}
