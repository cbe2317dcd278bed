//! The shim against the reference CLI: what `evtx_parser_dump` writes through libevtx_ref (the
//! reference crate behind the C ABI, the baseline of `abi-parity`) equals the stdout of
//! `evtx_dump` 0.15.1 for the same options, in every parity mode the ABI's options can say
//! (`parity::modes()`), on the fixtures and the samples. It holds the shim's definition of
//! "rendered bytes" to the reference, so that `abi-parity` compares the engines' libraries with
//! the reference's own output. (It was `compare/reference/tests/against_evtx_dump.rs`.)

use crate::parity::Mode;
use evtx_ref::abi::{evtx_format, evtx_options, evtx_stats, evtx_status};
use evtx_ref::ffi::{
    evtx_options_init, evtx_parser_dump, evtx_parser_free, evtx_parser_open_buffer,
};
use std::ffi::c_void;
use std::path::{Path, PathBuf};
use std::process::Command;

/// The ABI options of a parity mode, or `None` when its arguments say something the options
/// cannot (the `--mta`, codec and `info` modes have their own checks).
fn options_of(mode: &Mode) -> Option<evtx_options> {
    let mut options = std::mem::MaybeUninit::<evtx_options>::uninit();
    // SAFETY: writable memory for one `evtx_options`, initialised by the call.
    let mut options = unsafe {
        evtx_options_init(options.as_mut_ptr());
        options.assume_init()
    };
    options.threads = 1;
    let mut args = mode.args.iter();
    while let Some(arg) = args.next() {
        match *arg {
            "-o" => {
                options.format = match *args.next()? {
                    "xml" => evtx_format::Xml,
                    "json" => evtx_format::Json,
                    "jsonl" => evtx_format::Jsonl,
                    _ => return None,
                } as u32
            }
            "--no-indent" => options.indent = 0,
            "--dont-show-record-number" => options.show_record_number = 0,
            "--separate-json-attributes" => options.separate_json_attributes = 1,
            "--validate-checksums" => options.validate_checksums = 1,
            "--recover-records" => options.recover_records = 1,
            _ => return None,
        }
    }
    Some(options)
}

unsafe extern "C" fn collect(user_data: *mut c_void, data: *const u8, len: usize) -> i32 {
    // SAFETY: `shim` passes a `Vec<u8>` as user data, and the library valid bytes.
    unsafe {
        let out = &mut *user_data.cast::<Vec<u8>>();
        out.extend_from_slice(std::slice::from_raw_parts(data, len));
    }
    0
}

/// The shim's bytes; `Ok(None)` when the file is not EVTX at all.
fn shim(data: &[u8], options: &evtx_options) -> Result<Option<Vec<u8>>, String> {
    let mut parser = std::ptr::null_mut();
    // SAFETY: `data` outlives the parser, which is freed below.
    let status =
        unsafe { evtx_parser_open_buffer(data.as_ptr(), data.len(), options, &mut parser) };
    if status == evtx_status::NotEvtx {
        return Ok(None);
    }
    if status != evtx_status::Ok {
        return Err(format!("open: {status:?}"));
    }
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
    if status != evtx_status::Ok {
        return Err(format!("dump: {status:?}"));
    }
    Ok(Some(out))
}

/// Runs every input in every mode through the shim and the reference CLI (`-t 1`); prints one
/// line per difference and a summary. `Ok(false)` when any differ.
pub fn run(reference: &Path, inputs: &[PathBuf]) -> Result<bool, String> {
    if !reference.is_file() {
        return Err(format!(
            "{} does not exist: run `make setup` first",
            reference.display()
        ));
    }
    let modes: Vec<(&Mode, evtx_options)> = crate::parity::modes()
        .iter()
        .filter_map(|m| options_of(m).map(|o| (m, o)))
        .collect();
    let mut failures = 0usize;
    for input in inputs {
        let data = std::fs::read(input).map_err(|e| format!("{}: {e}", input.display()))?;
        for (mode, options) in &modes {
            let cli = Command::new(reference)
                .args(["-t", "1"])
                .args(mode.args)
                .arg(input)
                .output()
                .map_err(|e| format!("{}: {e}", reference.display()))?;
            let problem = match shim(&data, options) {
                Err(e) => Some(e),
                Ok(None) if cli.status.success() => Some("the CLI read it".to_string()),
                Ok(None) => None,
                Ok(Some(_)) if !cli.status.success() => Some(format!("CLI {}", cli.status)),
                Ok(Some(bytes)) if bytes != cli.stdout => Some(format!(
                    "the shim wrote {} bytes, evtx_dump {}",
                    bytes.len(),
                    cli.stdout.len()
                )),
                Ok(Some(_)) => None,
            };
            if let Some(problem) = problem {
                failures += 1;
                eprintln!("FAIL shim {} {}: {problem}", input.display(), mode.name);
            }
        }
    }
    println!(
        "shim-parity: libevtx_ref against evtx_dump, {} inputs × {} modes, {} differ",
        inputs.len(),
        modes.len(),
        failures
    );
    Ok(failures == 0)
}
