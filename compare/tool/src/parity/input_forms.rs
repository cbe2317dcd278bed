//! The exit table's input forms: the dump's INPUT as a user meets it (a directory, a FIFO with a
//! writer, a file without read permission, a symlink loop, a path that is not UTF-8, an empty
//! file, a file shorter than the header, `/dev/null`), each run in the reference, evtx-rs and
//! evtx-zig. Each engine's exit status, stdout and stderr equal the reference's byte for byte
//! (its backtrace under `RUST_BACKTRACE` taken out, the program's name in a `Usage:` line
//! aside), and the reference's stderr holds the row's cause, so a row tests the form it names.
//!
//! The row without read permission runs the CLIs as another user (`setpriv --reuid=65534`) when
//! this runs as root (CI does), whom the mode does not stop; without `setpriv` it is skipped,
//! loudly. That user may not reach the checkout (a clone under `/root`), so the three programs
//! and the file are copied to a directory of their own in `$TMPDIR` for that row.

use crate::parity::cli_output::without_backtrace;
use crate::run::{run, Output};
use std::ffi::{OsStr, OsString};
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};
use std::time::Duration;

const TIME_LIMIT: Duration = Duration::from_secs(60);

/// An input form: how its path is made.
#[derive(Clone, Copy)]
enum Form {
    Directory,
    /// A FIFO a thread writes a well-formed log into.
    Fifo,
    Unreadable,
    SymlinkLoop,
    InvalidUtf8,
    Empty,
    /// The first 100 bytes of a well-formed log.
    Short,
    DevNull,
}

/// The rows: a name, the form, and words the reference's stderr holds for it.
const ROWS: &[(&str, Form, &str)] = &[
    (
        "input: a directory",
        Form::Directory,
        "Is a directory (os error 21)",
    ),
    (
        "input: a FIFO with a writer",
        Form::Fifo,
        "Illegal seek (os error 29)",
    ),
    (
        "input: no read permission",
        Form::Unreadable,
        "Permission denied (os error 13)",
    ),
    (
        "input: a symlink loop",
        Form::SymlinkLoop,
        "Too many levels of symbolic links",
    ),
    (
        "input: a path not UTF-8",
        Form::InvalidUtf8,
        "invalid UTF-8 was detected",
    ),
    (
        "input: an empty file",
        Form::Empty,
        "failed to fill whole buffer",
    ),
    (
        "input: shorter than the header",
        Form::Short,
        "failed to fill whole buffer",
    ),
    (
        "input: /dev/null",
        Form::DevNull,
        "failed to fill whole buffer",
    ),
];

/// One row's outcome: the markdown line, and whether all three CLIs agreed.
pub struct Row {
    pub markdown: String,
    pub same: bool,
}

/// Runs every row; `log` is a well-formed log (the FIFO's and the unreadable file's bytes).
pub fn run_input_forms(
    programs: &[(&str, &PathBuf); 3],
    log: &Path,
    work: &Path,
) -> Result<Vec<Row>, String> {
    let dir = work.join("input-forms");
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).map_err(|e| format!("{}: {e}", dir.display()))?;
    let mut rows = Vec::new();
    for &(name, form, cause) in ROWS {
        let path = make(form, log, &dir)?;
        let Some(runner) = runner(form)? else {
            eprintln!("exit-table: {name}: SKIPPED: running as root and no `setpriv` to drop it");
            rows.push(Row {
                markdown: format!("| {name} | | skipped: no setpriv | | | |\n"),
                same: true,
            });
            continue;
        };
        let staged = if runner.is_empty() {
            None
        } else {
            Some(Staged::new(programs, &path)?)
        };
        let (path, runs) = match &staged {
            Some(s) => (s.input.clone().into_os_string(), s.programs.clone()),
            None => (
                path,
                programs.iter().map(|(_, p)| p.to_path_buf()).collect(),
            ),
        };
        let mut outputs = Vec::new();
        for program in &runs {
            outputs.push(run_form(form, &runner, program, &path, log)?);
        }
        drop(staged);
        let problems = problems(programs, &outputs, cause);
        for p in &problems {
            eprintln!("exit-table: {name}: {p}");
        }
        rows.push(row(name, &path, &outputs, problems.is_empty()));
    }
    Ok(rows)
}

/// What differs between the engines' runs and the reference's (outputs in `programs`' order);
/// the reference's stderr must name the row's `cause`, so a broken setup cannot pass.
fn problems(programs: &[(&str, &PathBuf); 3], outputs: &[Output], cause: &str) -> Vec<String> {
    let reference = &outputs[0];
    let want_stderr = without_backtrace(&reference.stderr);
    let mut problems = Vec::new();
    if !String::from_utf8_lossy(&want_stderr).contains(cause) {
        problems.push(format!(
            "the reference's stderr lacks `{cause}`: {:?}",
            String::from_utf8_lossy(&want_stderr)
        ));
    }
    for (n, (engine, program)) in programs.iter().enumerate().skip(1) {
        let got = &outputs[n];
        if got.describe_status() != reference.describe_status() {
            problems.push(format!(
                "{engine}: {}, the reference {}",
                got.describe_status(),
                reference.describe_status()
            ));
        }
        if got.stdout != reference.stdout {
            problems.push(format!("{engine}: stdout differs from the reference's"));
        }
        if usage_as_reference(&got.stderr, program, programs[0].1) != want_stderr {
            problems.push(format!(
                "{engine}: stderr {:?}, the reference's {:?}",
                String::from_utf8_lossy(&got.stderr),
                String::from_utf8_lossy(&want_stderr)
            ));
        }
    }
    problems
}

/// The row's markdown line: the input (its file name only, a device in full) and each status.
fn row(name: &str, path: &OsStr, outputs: &[Output], same: bool) -> Row {
    let arg = match Path::new(path).file_name() {
        Some(name) if !path.as_bytes().starts_with(b"/dev/") => {
            format!("…/{}", name.to_string_lossy())
        }
        _ => path.to_string_lossy().into_owned(),
    };
    let describe = |o: &Output| o.describe_status();
    Row {
        markdown: format!(
            "| {name} | `{arg}` | {} | {} | {} | {} |\n",
            describe(&outputs[0]),
            describe(&outputs[1]),
            describe(&outputs[2]),
            if same {
                "ok (stderr compared)"
            } else {
                "**differs**"
            }
        ),
        same,
    }
}

/// Copies of the programs and of an input in a directory of their own under `$TMPDIR` that
/// another user can reach (removed when dropped).
struct Staged {
    dir: PathBuf,
    programs: Vec<PathBuf>,
    input: PathBuf,
}

impl Staged {
    fn new(programs: &[(&str, &PathBuf); 3], input: &OsStr) -> Result<Staged, String> {
        use std::os::unix::fs::PermissionsExt;
        let dir = std::env::temp_dir().join(format!("evtx-input-forms-{}", std::process::id()));
        let io = |p: &Path, e: std::io::Error| format!("{}: {e}", p.display());
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).map_err(|e| io(&dir, e))?;
        let mode = |p: &Path, m: u32| {
            std::fs::set_permissions(p, std::fs::Permissions::from_mode(m)).map_err(|e| io(p, e))
        };
        mode(&dir, 0o755)?;
        let mut staged = Staged {
            programs: Vec::new(),
            input: dir.join("unreadable.evtx"),
            dir,
        };
        for (n, (_, program)) in programs.iter().enumerate() {
            // One directory per program: the copies keep their names (a `Usage:` line).
            let sub = staged.dir.join(n.to_string());
            std::fs::create_dir_all(&sub).map_err(|e| io(&sub, e))?;
            mode(&sub, 0o755)?;
            let copy = sub.join(program.file_name().unwrap_or_default());
            std::fs::copy(program, &copy).map_err(|e| io(program, e))?;
            mode(&copy, 0o755)?;
            staged.programs.push(copy);
        }
        let from = Path::new(input);
        std::fs::copy(from, &staged.input).map_err(|e| io(from, e))?;
        mode(&staged.input, 0o000)?;
        Ok(staged)
    }
}

impl Drop for Staged {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

/// Makes the input of `form` in `dir`; its path.
fn make(form: Form, log: &Path, dir: &Path) -> Result<OsString, String> {
    let io = |p: &Path, e: std::io::Error| format!("{}: {e}", p.display());
    let bytes = std::fs::read(log).map_err(|e| io(log, e))?;
    let path = match form {
        Form::Directory => {
            let d = dir.join("a-directory");
            std::fs::create_dir_all(&d).map_err(|e| io(&d, e))?;
            d
        }
        Form::Fifo => dir.join("a-fifo"),
        Form::Unreadable => {
            use std::os::unix::fs::PermissionsExt;
            let f = dir.join("unreadable.evtx");
            std::fs::write(&f, &bytes).map_err(|e| io(&f, e))?;
            std::fs::set_permissions(&f, std::fs::Permissions::from_mode(0o000))
                .map_err(|e| io(&f, e))?;
            f
        }
        Form::SymlinkLoop => {
            let (a, b) = (dir.join("loop-a"), dir.join("loop-b"));
            std::os::unix::fs::symlink("loop-b", &a).map_err(|e| io(&a, e))?;
            std::os::unix::fs::symlink("loop-a", &b).map_err(|e| io(&b, e))?;
            a
        }
        Form::InvalidUtf8 => {
            let mut name = dir.as_os_str().as_bytes().to_vec();
            name.extend_from_slice(b"/not-utf8-\xff.evtx");
            let f = PathBuf::from(OsStr::from_bytes(&name));
            std::fs::write(&f, &bytes).map_err(|e| io(&f, e))?;
            f
        }
        Form::Empty => {
            let f = dir.join("empty.evtx");
            std::fs::write(&f, b"").map_err(|e| io(&f, e))?;
            f
        }
        Form::Short => {
            let f = dir.join("short.evtx");
            std::fs::write(&f, &bytes[..100]).map_err(|e| io(&f, e))?;
            f
        }
        Form::DevNull => PathBuf::from("/dev/null"),
    };
    Ok(path.into_os_string())
}

/// The command line before the program: none, or `setpriv` to another user for the row
/// without read permission when running as root; `None` when that is needed and missing.
fn runner(form: Form) -> Result<Option<Vec<OsString>>, String> {
    if !matches!(form, Form::Unreadable) || !is_root()? {
        return Ok(Some(Vec::new()));
    }
    let setpriv = ["/usr/bin/setpriv", "/bin/setpriv"]
        .into_iter()
        .find(|p| Path::new(p).is_file());
    Ok(setpriv.map(|p| {
        [p, "--reuid=65534", "--regid=65534", "--clear-groups"]
            .map(OsString::from)
            .to_vec()
    }))
}

fn is_root() -> Result<bool, String> {
    let out = std::process::Command::new("id")
        .arg("-u")
        .output()
        .map_err(|e| format!("id -u: {e}"))?;
    Ok(String::from_utf8_lossy(&out.stdout).trim() == "0")
}

/// Runs `program path` (after `runner`); a FIFO is made fresh, a thread writes `log` into it.
fn run_form(
    form: Form,
    runner: &[OsString],
    program: &Path,
    path: &OsStr,
    log: &Path,
) -> Result<Output, String> {
    let mut argv: Vec<OsString> = runner.to_vec();
    argv.extend([program.as_os_str().to_owned(), path.to_owned()]);
    let (head, rest) = argv.split_first().expect("a program");
    let head = PathBuf::from(head);
    let fail = |e: std::io::Error| format!("cannot run {}: {e}", program.display());
    if !matches!(form, Form::Fifo) {
        return run(&head, rest, TIME_LIMIT).map_err(fail);
    }
    let fifo = Path::new(path);
    let _ = std::fs::remove_file(fifo);
    let made = std::process::Command::new("mkfifo")
        .arg(fifo)
        .status()
        .map_err(|e| format!("mkfifo: {e}"))?;
    if !made.success() {
        return Err(format!("mkfifo {} failed", fifo.display()));
    }
    let bytes = std::fs::read(log).map_err(|e| format!("{}: {e}", log.display()))?;
    let writer_path = fifo.to_path_buf();
    // Opening a FIFO to write waits for a reader; a write after the reader left fails (Rust
    // ignores SIGPIPE), which ends the thread.
    let writer = std::thread::spawn(move || {
        use std::io::Write;
        if let Ok(mut f) = std::fs::OpenOptions::new().write(true).open(&writer_path) {
            let _ = f.write_all(&bytes);
        }
    });
    let output = run(&head, rest, TIME_LIMIT).map_err(fail);
    // A CLI that never opened the FIFO leaves the writer waiting: a read-write open (which
    // never waits on Linux) lets it in, and closing it makes its writes fail.
    drop(
        std::fs::OpenOptions::new()
            .read(true)
            .write(true)
            .open(fifo),
    );
    let _ = writer.join();
    output
}

/// `stderr` with an engine's name in its `Usage:` line replaced by the reference's.
fn usage_as_reference(stderr: &[u8], engine: &Path, reference: &Path) -> Vec<u8> {
    let name = |p: &Path| p.file_name().map(|n| n.to_string_lossy().into_owned());
    let (Some(engine), Some(reference)) = (name(engine), name(reference)) else {
        return stderr.to_vec();
    };
    let text = String::from_utf8_lossy(stderr);
    text.replace(
        &format!("Usage: {engine} "),
        &format!("Usage: {reference} "),
    )
    .into_bytes()
}
