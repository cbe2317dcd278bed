//! Running a command with a time bound, capturing both streams; the three CLIs every check
//! runs, and what a message quotes of their output.

use std::io::Read;
use std::path::{Path, PathBuf};
use std::process::{Command, ExitStatus, Stdio};
use std::time::{Duration, Instant};

/// The three command-line backends.
pub struct Backends {
    pub reference: PathBuf,
    pub rust: PathBuf,
    pub zig: PathBuf,
}

pub struct Output {
    pub stdout: Vec<u8>,
    pub stderr: Vec<u8>,
    /// `None` when the command was killed for running past its time bound.
    pub status: Option<ExitStatus>,
}

impl Output {
    pub fn timed_out(&self) -> bool {
        self.status.is_none()
    }

    /// `exit N`, `signal N`, or `timeout`.
    pub fn describe_status(&self) -> String {
        use std::os::unix::process::ExitStatusExt;
        match self.status {
            None => "timeout".into(),
            Some(s) => match (s.code(), s.signal()) {
                (Some(code), _) => format!("exit {code}"),
                (None, Some(signal)) => format!("signal {signal}"),
                _ => "unknown status".into(),
            },
        }
    }
}

/// Runs `program args...` with stdin closed, killing it after `limit`.
pub fn run<S: AsRef<std::ffi::OsStr>>(
    program: &Path,
    args: &[S],
    limit: Duration,
) -> std::io::Result<Output> {
    run_with_stdin(program, args, limit, None)
}

/// As `run`, with stdin read from `stdin` when given (closed otherwise).
pub fn run_with_stdin<S: AsRef<std::ffi::OsStr>>(
    program: &Path,
    args: &[S],
    limit: Duration,
    stdin: Option<&Path>,
) -> std::io::Result<Output> {
    let started = Instant::now();
    let input = match stdin {
        Some(path) => Stdio::from(std::fs::File::open(path)?),
        None => Stdio::null(),
    };
    let mut child = Command::new(program)
        .args(args)
        .stdin(input)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()?;
    // Drain both pipes on their own threads so a chatty stderr cannot block stdout.
    let mut out_pipe = child.stdout.take().expect("stdout is piped");
    let mut err_pipe = child.stderr.take().expect("stderr is piped");
    let out_reader = std::thread::spawn(move || {
        let mut buf = Vec::new();
        out_pipe.read_to_end(&mut buf).map(|_| buf)
    });
    let err_reader = std::thread::spawn(move || {
        let mut buf = Vec::new();
        err_pipe.read_to_end(&mut buf).map(|_| buf)
    });
    let status = loop {
        if let Some(status) = child.try_wait()? {
            break Some(status);
        }
        if started.elapsed() > limit {
            let _ = child.kill();
            let _ = child.wait();
            break None;
        }
        std::thread::sleep(Duration::from_millis(2));
    };
    let stdout = out_reader
        .join()
        .map_err(|_| std::io::Error::other("stdout reader panicked"))??;
    let stderr = err_reader
        .join()
        .map_err(|_| std::io::Error::other("stderr reader panicked"))??;
    Ok(Output {
        stdout,
        stderr,
        status,
    })
}

/// Runs `program args...` with stdin closed and stdout and stderr both on `log` (one open file
/// description: the offset is shared, as with a shell's `> log 2>&1`), killing it after `limit`.
/// `None` when it was killed.
pub fn run_on_log(
    program: &Path,
    args: &[&str],
    limit: Duration,
    log: &std::fs::File,
) -> std::io::Result<Option<ExitStatus>> {
    let started = Instant::now();
    let mut child = Command::new(program)
        .args(args)
        .stdin(Stdio::null())
        .stdout(Stdio::from(log.try_clone()?))
        .stderr(Stdio::from(log.try_clone()?))
        .spawn()?;
    loop {
        if let Some(status) = child.try_wait()? {
            return Ok(Some(status));
        }
        if started.elapsed() > limit {
            let _ = child.kill();
            let _ = child.wait();
            return Ok(None);
        }
        std::thread::sleep(Duration::from_millis(2));
    }
}

/// At most 160 characters, on one line.
pub fn excerpt(text: &str) -> String {
    let one_line = text.trim_end_matches('\n').replace('\n', "\\n");
    match one_line.char_indices().nth(160) {
        Some((cut, _)) => format!("{}…", &one_line[..cut]),
        None => one_line,
    }
}
