//! `evtx-rs`: a drop-in for `evtx_dump` 0.15.1 (contract section 11), built on `evtx-core`.
//!
//! Differences from the reference, on purpose: one `error: ...` line per failed chunk or record
//! (format in `shared-fixtures/README.md`) instead of a multi-line block, stdin is read into
//! memory instead of a temporary file, and `-V` names this tool.

use clap::{ArgAction, Parser, ValueEnum};
use evtx_core::{dump, ChunkOutput, EvtxFile, Format, Options, Outcome};
use std::fs;
use std::io::{self, IsTerminal, Read, Write};
use std::ops::ControlFlow;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::{Duration, Instant};

#[derive(Debug, Clone, Copy, ValueEnum)]
enum Fmt {
    Xml,
    Json,
    Jsonl,
}

#[derive(Debug, Clone)]
struct Ranges(Vec<(u64, u64)>);

fn parse_ranges(s: &str) -> Result<Ranges, String> {
    evtx_core::parse_event_ranges(s).map(Ranges)
}

#[derive(Debug, Clone, Copy)]
struct Codec(&'static evtx_core::Encoding);

fn parse_codec(s: &str) -> Result<Codec, String> {
    evtx_core::parse_ansi_codec(s).map(Codec)
}

/// Dump EVTX files as XML or JSON, byte-identical to evtx_dump 0.15.1.
#[derive(Debug, Parser)]
#[command(name = "evtx-rs", disable_version_flag = true)]
struct Cli {
    /// Input file, or `-` for standard input.
    input: Option<String>,
    /// Output format.
    #[arg(short = 'o', long = "format", value_enum, default_value = "xml")]
    format: Fmt,
    /// Worker threads (0 = one per CPU).
    #[arg(short = 't', long = "threads", default_value_t = 0)]
    threads: usize,
    /// Write to this file instead of standard output.
    #[arg(short = 'f', long = "output")]
    output: Option<PathBuf>,
    /// Overwrite the output file without asking.
    #[arg(long)]
    no_confirm_overwrite: bool,
    /// Only print these record IDs, e.g. `1-3,5`.
    #[arg(long, value_parser = parse_ranges)]
    events: Option<Ranges>,
    /// Skip chunks whose checksums are wrong.
    #[arg(long)]
    validate_checksums: bool,
    /// XML without indentation.
    #[arg(long)]
    no_indent: bool,
    /// JSON attributes as separate `X_attributes` members.
    #[arg(long)]
    separate_json_attributes: bool,
    /// Do not print the `Record N` banners.
    #[arg(long)]
    dont_show_record_number: bool,
    /// Code page of ANSI strings (WHATWG label).
    #[arg(long, value_parser = parse_codec)]
    ansi_codec: Option<Codec>,
    /// Also carve deleted/stale records from unallocated chunk space (cleared chunks, chunk slack).
    #[arg(long)]
    recover_records: bool,
    /// Stop (exit 1) at the first chunk or record error.
    #[arg(long)]
    stop_after_one_error: bool,
    /// Print version.
    #[arg(short = 'V', long = "version", action = ArgAction::SetTrue)]
    version: bool,
}

#[cold]
fn fatal(message: impl std::fmt::Display) -> ExitCode {
    eprintln!("Error: {message}");
    ExitCode::from(1)
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    if cli.version {
        println!(
            "evtx-rs {} (evtx_dump {} compatible)",
            env!("CARGO_PKG_VERSION"),
            evtx_core::REFERENCE_VERSION
        );
        return ExitCode::SUCCESS;
    }
    let Some(input) = cli.input.clone() else {
        return fatal("missing INPUT (a file path, or - for standard input)");
    };
    let format = match cli.format {
        Fmt::Xml => Format::Xml,
        Fmt::Json => Format::Json,
        Fmt::Jsonl => Format::Jsonl,
    };
    if matches!(cli.format, Fmt::Jsonl) && (cli.no_indent || cli.dont_show_record_number) {
        eprintln!(
            "note: no need to pass both `-o jsonl` and `--no-indent`/`--dont-show-record-number`"
        );
    }
    let opts = Options {
        format,
        indent: !cli.no_indent,
        separate_json_attributes: cli.separate_json_attributes,
        show_record_number: !cli.dont_show_record_number,
        validate_checksums: cli.validate_checksums,
        ansi_codec: cli
            .ansi_codec
            .map_or(Options::default().ansi_codec, |c| c.0),
        event_ranges: cli.events.clone().map(|r| r.0),
        threads: cli.threads,
        recover_records: cli.recover_records,
    };

    let input_data = match open_input(&input) {
        Ok(d) => d,
        Err(e) => return fatal(e),
    };
    let data = input_data.bytes();
    let file = match EvtxFile::open(data) {
        Ok(f) => f,
        Err(e) => return fatal(e),
    };
    if let Some(w) = file.checksum_warning() {
        eprintln!("{w}");
    }

    let (sink, progress): (Box<dyn Write>, bool) = match &cli.output {
        None => (stdout_writer(), false),
        Some(path) => match open_output(path, cli.no_confirm_overwrite) {
            Ok(f) => (Box::new(f), io::stderr().is_terminal()),
            Err(e) => return fatal(e),
        },
    };
    // Chunk outputs (usually 60–250 KiB) at least this large go straight to the descriptor in
    // one write; smaller ones are gathered.
    let mut out = io::BufWriter::with_capacity(64 << 10, sink);
    let mut progress = progress.then(|| Progress::new(data.len()));
    let mut broken_pipe = false;
    let mut write_error: Option<io::Error> = None;
    let mut stopped = false;
    let stderr = io::stderr();

    dump(&file, &opts, |chunk: &ChunkOutput| {
        let first_failure = if cli.stop_after_one_error {
            chunk.first_failure().map(|(i, _)| i)
        } else {
            None
        };
        let end = match first_failure {
            Some(i) => chunk.records[..i]
                .iter()
                .rev()
                .find_map(|r| match &r.outcome {
                    Outcome::Rendered(range) => Some(range.end),
                    Outcome::Failed(_) => None,
                })
                .unwrap_or(0),
            None => chunk.bytes.len(),
        };
        if let Err(e) = out.write_all(&chunk.bytes[..end]) {
            if e.kind() == io::ErrorKind::BrokenPipe {
                broken_pipe = true;
            } else {
                write_error = Some(e);
            }
            return ControlFlow::Break(());
        }
        let mut err = stderr.lock();
        let limit = first_failure.map_or(chunk.records.len(), |i| i + 1);
        for r in &chunk.records[..limit] {
            if let Outcome::Failed(f) = &r.outcome {
                let id = r.record_id.map_or("-".to_string(), |id| id.to_string());
                let _ = writeln!(
                    err,
                    "error: {input}: chunk {}, record {id}, offset 0x{:x}: {f}",
                    r.chunk_slot, r.file_offset
                );
            }
        }
        drop(err);
        if let Some(p) = &mut progress {
            p.chunk_done(chunk);
        }
        if first_failure.is_some() {
            stopped = true;
            return ControlFlow::Break(());
        }
        ControlFlow::Continue(())
    });

    if let Some(p) = &mut progress {
        p.finish();
    }
    if !broken_pipe && write_error.is_none() {
        if let Err(e) = out.flush() {
            if e.kind() == io::ErrorKind::BrokenPipe {
                broken_pipe = true;
            } else {
                write_error = Some(e);
            }
        }
    }
    if broken_pipe {
        return ExitCode::SUCCESS;
    }
    if let Some(e) = write_error {
        return fatal(format!("failed to write output: {e}"));
    }
    if stopped {
        return fatal("Stopped after error");
    }
    ExitCode::SUCCESS
}

/// The input bytes: a read-only mapping of the file, or a buffer (standard input, or when
/// mapping fails).
enum Input {
    Mapped(Mapping),
    Owned(Vec<u8>),
}

impl Input {
    fn bytes(&self) -> &[u8] {
        match self {
            Input::Mapped(m) => m.bytes(),
            Input::Owned(v) => v,
        }
    }
}

/// A private read-only memory mapping of a whole file.
///
/// Mapping instead of reading avoids faulting in and copying a fresh buffer as large as the
/// file (measured: ~1.7 ms of system time for a 2 MB log, more than the parse itself). The
/// usual caveat of mappings applies: another process truncating the file while we read it can
/// kill us with SIGBUS; `evtx-rs` reads logs that are not being written (as `ripgrep` does).
struct Mapping {
    ptr: *mut libc::c_void,
    len: usize,
}

impl Mapping {
    fn new(file: &fs::File) -> Option<Mapping> {
        use std::os::fd::AsRawFd;
        let len = usize::try_from(file.metadata().ok()?.len()).ok()?;
        if len == 0 {
            return None;
        }
        // SAFETY: mmap with a null hint, a valid open descriptor and a non-zero length either
        // fails (MAP_FAILED, handled) or returns a new mapping of `len` readable bytes that no
        // Rust object aliases. PROT_READ + MAP_PRIVATE: we never write through it.
        let ptr = unsafe {
            libc::mmap(
                std::ptr::null_mut(),
                len,
                libc::PROT_READ,
                libc::MAP_PRIVATE,
                file.as_raw_fd(),
                0,
            )
        };
        if ptr == libc::MAP_FAILED {
            return None;
        }
        Some(Mapping { ptr, len })
    }

    fn bytes(&self) -> &[u8] {
        // SAFETY: `ptr` is the start of a live mapping of `len` readable bytes (see `new`),
        // unmapped only in `drop`; the returned slice borrows `self`, so it cannot outlive the
        // mapping, and nothing writes to a private read-only mapping.
        unsafe { std::slice::from_raw_parts(self.ptr as *const u8, self.len) }
    }
}

impl Drop for Mapping {
    fn drop(&mut self) {
        // SAFETY: `ptr`/`len` describe a mapping made in `new` and not unmapped before; no
        // slice of it can be alive here (they borrow `self`).
        unsafe {
            libc::munmap(self.ptr, self.len);
        }
    }
}

/// Standard output as a plain file descriptor: `io::stdout()` is line-buffered, which would
/// scan and copy every chunk; we already hand it whole chunks.
fn stdout_writer() -> Box<dyn Write> {
    use std::os::fd::AsFd;
    match io::stdout().as_fd().try_clone_to_owned() {
        Ok(fd) => Box::new(fs::File::from(fd)),
        Err(_) => Box::new(io::stdout().lock()),
    }
}

/// Reads the whole input: a path (mapped), or `-` (and the usual stdin aliases) for standard
/// input.
fn open_input(input: &str) -> Result<Input, String> {
    if !matches!(input, "-" | "/dev/stdin" | "/dev/fd/0" | "/proc/self/fd/0") {
        if let Ok(file) = fs::File::open(input) {
            if file.metadata().is_ok_and(|m| m.is_file()) {
                if let Some(m) = Mapping::new(&file) {
                    return Ok(Input::Mapped(m));
                }
            }
        }
    }
    read_input(input).map(Input::Owned)
}

/// Reads the whole input into memory.
fn read_input(input: &str) -> Result<Vec<u8>, String> {
    if matches!(input, "-" | "/dev/stdin" | "/dev/fd/0" | "/proc/self/fd/0") {
        let mut data = Vec::new();
        io::stdin()
            .lock()
            .read_to_end(&mut data)
            .map_err(|e| format!("failed to read standard input: {e}"))?;
        if data.is_empty() {
            return Err("standard input is empty".to_string());
        }
        return Ok(data);
    }
    fs::read(input).map_err(|e| format!("failed to open {input}: {e}"))
}

/// Opens `-f PATH` per 11.1: parent directories created, directories refused, an existing file
/// overwritten only after confirmation on a terminal (or with `--no-confirm-overwrite`).
fn open_output(path: &Path, no_confirm: bool) -> Result<fs::File, String> {
    if path.is_dir() {
        return Err(format!("{} is a directory", path.display()));
    }
    if path.exists() && !no_confirm {
        if !io::stdin().is_terminal() || !io::stderr().is_terminal() {
            return Err(format!(
                "{} exists; pass --no-confirm-overwrite to overwrite it",
                path.display()
            ));
        }
        eprint!("{} exists. Overwrite? [y/N] ", path.display());
        let mut answer = String::new();
        io::stdin()
            .read_line(&mut answer)
            .map_err(|e| e.to_string())?;
        if !matches!(answer.trim(), "y" | "Y" | "yes") {
            return Err("not overwriting the output file".to_string());
        }
    }
    if let Some(parent) = path.parent().filter(|p| !p.as_os_str().is_empty()) {
        fs::create_dir_all(parent)
            .map_err(|e| format!("failed to create {}: {e}", parent.display()))?;
    }
    fs::File::create(path).map_err(|e| format!("failed to create {}: {e}", path.display()))
}

/// A one-line progress bar on stderr (only with `-f` and a terminal).
struct Progress {
    start: Instant,
    last: Instant,
    total_bytes: usize,
    done_bytes: usize,
    records: u64,
}

impl Progress {
    fn new(total_bytes: usize) -> Progress {
        let now = Instant::now();
        Progress {
            start: now,
            last: now,
            total_bytes: total_bytes.max(1),
            done_bytes: 4096,
            records: 0,
        }
    }

    fn chunk_done(&mut self, chunk: &ChunkOutput) {
        self.done_bytes += 65536;
        self.records += chunk
            .records
            .iter()
            .filter(|r| matches!(r.outcome, Outcome::Rendered(_)))
            .count() as u64;
        if self.last.elapsed() >= Duration::from_millis(100) {
            self.last = Instant::now();
            self.draw();
        }
    }

    fn draw(&self) {
        let secs = self.start.elapsed().as_secs_f64().max(1e-6);
        let done = self.done_bytes.min(self.total_bytes);
        let mbps = done as f64 / secs / 1e6;
        let frac = done as f64 / self.total_bytes as f64;
        let eta = if frac > 0.0 { secs / frac - secs } else { 0.0 };
        const WIDTH: usize = 30;
        let filled = ((frac * WIDTH as f64) as usize).min(WIDTH);
        eprint!(
            "\r[{}{}] {:>3.0}% {} records, {:.1} MB/s, ETA {:.0}s ",
            "#".repeat(filled),
            " ".repeat(WIDTH - filled),
            frac * 100.0,
            self.records,
            mbps,
            eta.max(0.0)
        );
    }

    fn finish(&mut self) {
        self.done_bytes = self.total_bytes;
        self.draw();
        eprintln!();
    }
}
