//! The shim against the reference CLI: what `evtx_parser_dump` writes through libevtx_ref (the
//! reference crate behind the C ABI, the baseline of `abi-parity`) equals the stdout of
//! `evtx_dump` 0.15.1 for the same options, in every parity mode the ABI's options can say
//! (`parity::modes()`), on the fixtures and the samples. It holds the shim's definition of
//! "rendered bytes" to the reference, so that `abi-parity` compares the engines' libraries with
//! the reference's own output. (It was `compare/reference/tests/against_evtx_dump.rs`.)
//!
//! The `--mta` and `--wevt-cache` families run too (`mta_path`, `wevt_cache_path`): a file the
//! CLI refuses must fail the shim's open, with the CLI's error text as the last error.

use crate::parity::modes::{modes, mta_modes, wevt_modes, Mode};
use evtx_ref::abi::{evtx_format, evtx_options, evtx_stats, evtx_status};
use evtx_ref::ffi::{
    evtx_last_error, evtx_options_init_v1, evtx_parser_dump, evtx_parser_free,
    evtx_parser_open_buffer,
};
use std::ffi::{c_void, CStr, CString};
use std::path::{Path, PathBuf};
use std::process::Command;

/// The ABI options of a parity mode and the path strings they point to.
struct ShimOptions {
    options: evtx_options,
    /// Owned here: `options.mta_path` and `options.wevt_cache_path` point into them.
    _paths: Vec<CString>,
}

/// The ABI options of a parity mode, or `None` when its arguments say something the options
/// cannot (the codec and `info` modes have their own checks).
fn options_of(mode: &Mode) -> Option<ShimOptions> {
    let mut options = std::mem::MaybeUninit::<evtx_options>::uninit();
    // SAFETY: writable memory for one `evtx_options`, initialised by the call.
    let mut options = unsafe {
        evtx_options_init_v1(options.as_mut_ptr());
        options.assume_init()
    };
    options.threads = 1;
    let mut paths = Vec::new();
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
            "--mta" | "--wevt-cache" => {
                let path = CString::new(*args.next()?).ok()?;
                if *arg == "--mta" {
                    options.mta_path = path.as_ptr();
                } else {
                    options.wevt_cache_path = path.as_ptr();
                }
                paths.push(path);
            }
            _ => return None,
        }
    }
    Some(ShimOptions {
        options,
        _paths: paths,
    })
}

unsafe extern "C" fn collect(user_data: *mut c_void, data: *const u8, len: usize) -> i32 {
    // SAFETY: `shim` passes a `Vec<u8>` as user data, and the library valid bytes.
    unsafe {
        let out = &mut *user_data.cast::<Vec<u8>>();
        out.extend_from_slice(std::slice::from_raw_parts(data, len));
    }
    0
}

/// What the shim gave: its bytes, or the open's failure for a file the CLI refuses as a whole.
enum Shim {
    Bytes(Vec<u8>),
    /// Not EVTX (`None`), or a refused `--mta`/`--wevt-cache` file (the last error).
    Refused(Option<String>),
}

/// The shim's bytes, or why it refused the input or an option's file.
fn shim(data: &[u8], options: &evtx_options) -> Result<Shim, String> {
    let mut parser = std::ptr::null_mut();
    // SAFETY: `data` outlives the parser, which is freed below.
    let status =
        unsafe { evtx_parser_open_buffer(data.as_ptr(), data.len(), options, &mut parser) };
    if status == evtx_status::NotEvtx {
        return Ok(Shim::Refused(None));
    }
    if let evtx_status::Io | evtx_status::InvalidOptions = status {
        // SAFETY: NUL-terminated, valid until the next failing call on this thread.
        let message = unsafe { CStr::from_ptr(evtx_last_error()) };
        return Ok(Shim::Refused(Some(message.to_string_lossy().into_owned())));
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
    Ok(Shim::Bytes(out))
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
    let base: Vec<(&Mode, ShimOptions)> = modes()
        .iter()
        .filter_map(|m| options_of(m).map(|o| (m, o)))
        .collect();
    let (mut failures, mut checks) = (0usize, 0usize);
    for input in inputs {
        let data = std::fs::read(input).map_err(|e| format!("{}: {e}", input.display()))?;
        // The `--mta` and `--wevt-cache` families of this input (none for most).
        let with_file: Vec<Mode> = mta_modes(input)
            .into_iter()
            .chain(wevt_modes(input))
            .collect();
        let extra: Vec<(&Mode, ShimOptions)> = with_file
            .iter()
            .filter_map(|m| options_of(m).map(|o| (m, o)))
            .collect();
        for (mode, options) in base.iter().chain(&extra) {
            checks += 1;
            let options = &options.options;
            let cli = Command::new(reference)
                .args(["-t", "1"])
                .args(mode.args)
                .arg(input)
                .output()
                .map_err(|e| format!("{}: {e}", reference.display()))?;
            let problem = match shim(&data, options) {
                Err(e) => Some(e),
                Ok(Shim::Refused(_)) if cli.status.success() => Some("the CLI read it".into()),
                Ok(Shim::Refused(None)) => None,
                Ok(Shim::Refused(Some(message))) => refused_unlike(&message, &cli.stderr),
                Ok(Shim::Bytes(_)) if !cli.status.success() => Some(format!("CLI {}", cli.status)),
                Ok(Shim::Bytes(bytes)) if bytes != cli.stdout => Some(format!(
                    "the shim wrote {} bytes, evtx_dump {}",
                    bytes.len(),
                    cli.stdout.len()
                )),
                Ok(Shim::Bytes(_)) => None,
            };
            if let Some(problem) = problem {
                failures += 1;
                eprintln!("FAIL shim {} {}: {problem}", input.display(), mode.name);
            }
        }
    }
    println!(
        "shim-parity: libevtx_ref against evtx_dump, {} inputs × {} modes and their --mta and \
         --wevt-cache files, {checks} checks, {failures} differ",
        inputs.len(),
        base.len(),
    );
    Ok(failures == 0)
}

/// Why a refused `--mta`/`--wevt-cache` file does not match the CLI's failure: `None` when
/// the CLI's `Error:` block starts with the shim's last error.
fn refused_unlike(message: &str, stderr: &[u8]) -> Option<String> {
    let stderr = String::from_utf8_lossy(stderr);
    if stderr.contains(&format!("Error: {message}")) {
        None
    } else {
        Some(format!(
            "the shim refused it with {message:?}, the CLI said {stderr:?}"
        ))
    }
}
