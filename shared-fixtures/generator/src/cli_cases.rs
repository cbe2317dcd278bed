//! Reading the one list of the command line's cases (`shared-fixtures/cli-cases.txt`, whose
//! header says the format): each case's name, its arguments with placeholders for the files
//! they name, and what is compared with the reference. `evtx-compare exit-table` runs every case
//! in the three CLIs; evtx-rs's tests (`rust/cli/tests/arguments.rs`) run them in evtx-rs against
//! the reference, and `zig/tests/cli_input.zig` (its own reader) in evtx-zig.

use std::ffi::{OsStr, OsString};
use std::path::Path;

/// The file's name in the fixtures directory.
pub const FILE: &str = "cli-cases.txt";

/// The placeholder of the output path a case may write (`@O`), which each run makes.
pub const OUTPUT: &str = "@O";

/// The placeholder of a copy of a log under a name that is not UTF-8 (`@U`, `not_utf8_copy`).
pub const NOT_UTF8: &str = "@U";

/// What a case's stdout is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Stdout {
    Empty,
    /// Something (its bytes are parity's business).
    Written,
    /// A help text, compared byte for byte with the reference's.
    Help,
    /// The version line, which is ours.
    Version,
}

/// What of a case's stderr is compared with the reference's.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Stderr {
    NotCompared,
    /// Every byte (usage errors, help texts).
    Whole,
    /// The first line (fatal errors: the reference's anyhow chain follows it).
    FirstLine,
}

/// What the reference does on a case, and so what every CLI must do; or, for an extension of
/// ours (`ours`), what both engines must do where the reference refuses the line.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Expected {
    pub status: i32,
    pub stdout: Stdout,
    pub stderr: Stderr,
    /// `ours`: the line is an extension (README, "Extensions"). The reference refuses it (exit
    /// 2, nothing on stdout); the engines are held to this expectation and to each other.
    pub ours: bool,
    /// `says TEXT`: how stderr's first line starts, in our words (the last expectation of its
    /// line).
    pub says: Option<String>,
}

/// One argument case.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Case {
    pub name: String,
    /// The arguments as written, placeholders in (`argv` expands them).
    pub arguments: String,
    pub expected: Expected,
}

/// The file: its placeholders (`@F` and a path below the fixtures, or none for `@O` and `@U`)
/// and its cases, in order.
#[derive(Clone, Debug, Default)]
pub struct CliCases {
    pub placeholders: Vec<(String, Option<String>)>,
    pub cases: Vec<Case>,
}

/// What differs between a CLI's run and the reference's (`Expected::differences`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Differences {
    pub status: bool,
    /// Whether stdout is empty.
    pub stdout: bool,
    /// The help text, byte for byte.
    pub help: bool,
    /// stderr, as far as the case compares it.
    pub stderr: bool,
}

impl Differences {
    pub fn any(&self) -> bool {
        *self != Differences::default()
    }
}

/// What one run of a CLI gave: its exit status (`None`: killed by a signal) and streams.
pub struct Ran<'a> {
    pub status: Option<i32>,
    pub stdout: &'a [u8],
    pub stderr: &'a [u8],
}

impl CliCases {
    /// The cases of the fixtures directory `fixtures`.
    pub fn load(fixtures: &Path) -> Result<CliCases, String> {
        let path = fixtures.join(FILE);
        let text =
            std::fs::read_to_string(&path).map_err(|e| format!("{}: {e}", path.display()))?;
        CliCases::parse(&text).map_err(|e| format!("{}: {e}", path.display()))
    }

    /// Parses the file's text: comments (`#`) and blank lines skipped, `@X | PATH | what` a
    /// placeholder, any other line `name | arguments | expected`. Every placeholder a case uses
    /// is defined, and every name is unique.
    pub fn parse(text: &str) -> Result<CliCases, String> {
        let mut file = CliCases::default();
        for (number, line) in text.lines().enumerate() {
            if line.is_empty() || line.starts_with('#') {
                continue;
            }
            let at = |e: String| format!("line {}: {e}", number + 1);
            let fields: Vec<&str> = line.split('|').map(str::trim).collect();
            let [first, second, third] = fields[..] else {
                return Err(at(format!("{} fields, not 3", fields.len())));
            };
            if first.starts_with('@') {
                let path = (!second.is_empty()).then(|| second.to_string());
                file.placeholders.push((first.to_string(), path));
                continue;
            }
            let expected = parse_expected(third).map_err(at)?;
            file.cases.push(Case {
                name: first.to_string(),
                arguments: second.to_string(),
                expected,
            });
        }
        file.check()?;
        Ok(file)
    }

    fn check(&self) -> Result<(), String> {
        for (n, case) in self.cases.iter().enumerate() {
            if self.cases[..n].iter().any(|c| c.name == case.name) {
                return Err(format!("case `{}` twice", case.name));
            }
            for word in case.arguments.split(' ').filter(|w| w.contains('@')) {
                let mut rest = word;
                while let Some(at) = rest.find('@') {
                    rest = &rest[at..];
                    let name = rest.get(..2).unwrap_or(rest);
                    if !self.placeholders.iter().any(|(p, _)| p == name) {
                        return Err(format!("case `{}`: no placeholder {name}", case.name));
                    }
                    rest = &rest[name.len()..];
                }
            }
        }
        Ok(())
    }

    /// The path below the fixtures of the placeholder `name` (`@F`), if the file defines one.
    pub fn path_of(&self, name: &str) -> Option<&str> {
        let found = self.placeholders.iter().find(|(p, _)| p == name);
        found.and_then(|(_, path)| path.as_deref())
    }

    /// The arguments of `case` for one run: each placeholder replaced by its path below
    /// `fixtures`, `@O` by `output`, `@U` by `not_utf8`.
    pub fn argv(
        &self,
        case: &Case,
        fixtures: &Path,
        output: &Path,
        not_utf8: &OsStr,
    ) -> Vec<OsString> {
        case.arguments
            .split(' ')
            .filter(|word| !word.is_empty())
            .map(|word| {
                if word == "''" {
                    return OsString::new();
                }
                let mut word = word.replace(OUTPUT, &output.display().to_string());
                for (name, path) in &self.placeholders {
                    if let Some(path) = path {
                        word = word.replace(name, &fixtures.join(path).display().to_string());
                    }
                }
                let mut parts = word.split(NOT_UTF8);
                let mut arg = OsString::from(parts.next().unwrap_or_default());
                for part in parts {
                    arg.push(not_utf8);
                    arg.push(part);
                }
                arg
            })
            .collect()
    }
}

fn parse_expected(text: &str) -> Result<Expected, String> {
    let mut status = None;
    let mut stdout = None;
    let mut stderr = Stderr::NotCompared;
    let mut ours = false;
    // `says` takes the rest of the field, commas included.
    let (text, says) = match text.find("says ") {
        Some(0) => ("", Some(text["says ".len()..].to_string())),
        Some(at) if text[..at].ends_with(", ") => (
            &text[..at - 2],
            Some(text[at + "says ".len()..].to_string()),
        ),
        _ => (text, None),
    };
    for word in text.split(", ").filter(|w| !w.is_empty()) {
        match word {
            "ours" => ours = true,
            "stdout" => stdout = Some(Stdout::Written),
            "no stdout" => stdout = Some(Stdout::Empty),
            "help" => stdout = Some(Stdout::Help),
            "version" => stdout = Some(Stdout::Version),
            "stderr" => stderr = Stderr::Whole,
            "first line" => stderr = Stderr::FirstLine,
            _ => match word.strip_prefix("exit ").map(str::parse) {
                Some(Ok(code)) => status = Some(code),
                _ => return Err(format!("`{word}` is no expectation")),
            },
        }
    }
    if says.is_some() && !ours {
        return Err("`says` is for `ours` cases (the others compare with the reference)".into());
    }
    match (status, stdout) {
        (Some(status), Some(stdout)) => Ok(Expected {
            status,
            stdout,
            stderr,
            ours,
            says,
        }),
        _ => Err(format!("`{text}` lacks `exit N` or what stdout is")),
    }
}

impl Expected {
    /// Where the reference's run departs from this expectation (the file is wrong, or the
    /// placeholders' files are): none when it does not.
    pub fn departure(&self, reference: &Ran) -> Option<String> {
        let got = (reference.status, stdout_kind(reference.stdout));
        let want = if self.ours {
            (Some(2), Stdout::Empty)
        } else {
            (Some(self.status), self.stdout)
        };
        (got != want).then(|| format!("the reference gives {got:?}, the file says {want:?}"))
    }

    /// How a CLI's run differs from the reference's run under the CLI's name, in what this case
    /// compares.
    pub fn differences(&self, reference: &Ran, ours: &Ran) -> Differences {
        if self.ours {
            return self.our_differences(ours);
        }
        Differences {
            status: ours.status != reference.status,
            stdout: ours.stdout.is_empty() != reference.stdout.is_empty(),
            help: self.stdout == Stdout::Help && ours.stdout != reference.stdout,
            stderr: self.stderr_differs(reference.stderr, ours.stderr),
        }
    }

    /// How an engine's run of an `ours` case differs from this expectation.
    fn our_differences(&self, ours: &Ran) -> Differences {
        let first = ours
            .stderr
            .split(|b| *b == b'\n')
            .next()
            .unwrap_or_default();
        Differences {
            status: ours.status != Some(self.status),
            stdout: ours.stdout.is_empty() != (self.stdout == Stdout::Empty),
            help: false,
            stderr: self
                .says
                .as_ref()
                .is_some_and(|says| !first.starts_with(says.as_bytes())),
        }
    }

    /// Whether a CLI's stderr differs from the reference's, run under the CLI's name, where
    /// this case compares it.
    pub fn stderr_differs(&self, reference: &[u8], ours: &[u8]) -> bool {
        let first = |text: &[u8]| {
            text.split(|b| *b == b'\n')
                .next()
                .unwrap_or_default()
                .to_vec()
        };
        match self.stderr {
            Stderr::NotCompared => false,
            Stderr::Whole => without_backtrace(reference) != ours,
            Stderr::FirstLine => first(reference) != first(ours),
        }
    }
}

/// What `stdout` is, as the file words it: a help text has clap's `Usage:` line (no dump of the
/// fixtures has one), the reference's version line is clap's command name and version.
pub fn stdout_kind(stdout: &[u8]) -> Stdout {
    if String::from_utf8_lossy(stdout).contains("\nUsage: ") {
        Stdout::Help
    } else if stdout.starts_with(b"EVTX Parser ") {
        Stdout::Version
    } else if stdout.is_empty() {
        Stdout::Empty
    } else {
        Stdout::Written
    }
}

/// The reference's stderr without the backtrace anyhow adds when `RUST_BACKTRACE` is set.
pub fn without_backtrace(stderr: &[u8]) -> Vec<u8> {
    let text = String::from_utf8_lossy(stderr);
    match text.find("\n\nStack backtrace:") {
        Some(at) => format!("{}\n", &text[..at]).into_bytes(),
        None => stderr.to_vec(),
    }
}

/// A copy of `log` in `dir` under a name that is not UTF-8 (`@U`); its path.
pub fn not_utf8_copy(log: &Path, dir: &Path) -> Result<OsString, String> {
    use std::os::unix::ffi::OsStrExt;
    let mut name = dir.as_os_str().as_bytes().to_vec();
    name.extend_from_slice(b"/not-utf8-\xff.evtx");
    let path = OsString::from(OsStr::from_bytes(&name));
    std::fs::copy(log, &path).map_err(|e| format!("{}: {e}", log.display()))?;
    Ok(path)
}

#[cfg(test)]
mod tests {
    use super::*;

    const TEXT: &str = "# a comment\n@F | a.evtx | a log\n@O | | out\n\n\
        empty | '' -o @F | exit 2, no stdout, stderr\nhelp | -h | exit 0, help, stderr\n\
        fatal | @F -f @O.x | exit 1, stdout, first line\n";

    #[test]
    fn placeholders_cases_and_their_arguments() {
        let file = CliCases::parse(TEXT).unwrap();
        assert_eq!(file.placeholders.len(), 2);
        assert_eq!(file.cases.len(), 3);
        let fatal = &file.cases[2];
        assert_eq!(
            fatal.expected,
            Expected {
                status: 1,
                stdout: Stdout::Written,
                stderr: Stderr::FirstLine,
                ours: false,
                says: None,
            }
        );
        let argv = |case: &Case| file.argv(case, Path::new("fx"), Path::new("o"), "u".as_ref());
        assert_eq!(argv(&file.cases[0]), ["", "-o", "fx/a.evtx"]);
        assert_eq!(argv(fatal), ["fx/a.evtx", "-f", "o.x"]);
    }

    #[test]
    fn a_bad_line_is_refused() {
        for bad in [
            "x | -h",
            "x | -h | exit 0",
            "x | -h | exit zero, help",
            "x | -h | exit 0, help, loud",
            "x | @Z | exit 0, stdout",
            "x | -h | exit 0, help\nx | -V | exit 0, version",
            "x | -h | exit 2, no stdout, says error: a, b",
        ] {
            assert!(CliCases::parse(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn an_extension_is_held_to_its_own_words() {
        let file =
            CliCases::parse("x | --x 1 | ours, exit 2, no stdout, says error: a, b\n").unwrap();
        let e = &file.cases[0].expected;
        assert!(e.ours);
        assert_eq!(e.says.as_deref(), Some("error: a, b"));
        let ran = |status, stdout, stderr| Ran {
            status,
            stdout,
            stderr,
        };
        // The reference must refuse the line, whatever the engines do.
        assert_eq!(e.departure(&ran(Some(2), b"", b"error: other\n")), None);
        assert!(e.departure(&ran(Some(0), b"x", b"")).is_some());
        let theirs = ran(Some(2), b"", b"error: other\n");
        assert!(!e
            .differences(&theirs, &ran(Some(2), b"", b"error: a, b\n\nmore"))
            .any());
        assert!(
            e.differences(&theirs, &ran(Some(2), b"", b"error: a\n"))
                .stderr
        );
        assert!(!e
            .differences(&theirs, &ran(Some(2), b"", b"error: a, b, c\n"))
            .any());
        assert!(
            e.differences(&theirs, &ran(Some(1), b"", b"error: a, b\n"))
                .status
        );
        assert!(
            e.differences(&theirs, &ran(Some(2), b"x", b"error: a, b\n"))
                .stdout
        );
    }

    #[test]
    fn the_reference_is_held_to_the_file() {
        let expected = Expected {
            status: 2,
            stdout: Stdout::Empty,
            stderr: Stderr::FirstLine,
            ours: false,
            says: None,
        };
        let ran = |status, stdout| Ran {
            status,
            stdout,
            stderr: b"",
        };
        assert_eq!(expected.departure(&ran(Some(2), b"")), None);
        assert!(expected.departure(&ran(Some(0), b"")).is_some());
        assert!(expected.departure(&ran(None, b"")).is_some());
        assert!(expected.departure(&ran(Some(2), b"x")).is_some());
        assert!(!expected.stderr_differs(b"a\nb\n", b"a\nc\n"));
        let whole = Expected {
            stderr: Stderr::Whole,
            ..expected.clone()
        };
        let traced = b"Error: x\n\nStack backtrace:\n   0: main\n";
        assert!(!whole.stderr_differs(traced, b"Error: x\n"));
        assert!(whole.stderr_differs(traced, b"Error: y\n"));
        assert!(expected.stderr_differs(b"a\nb\n", b"b\nb\n"));
        let help = Expected {
            status: 0,
            stdout: Stdout::Help,
            stderr: Stderr::Whole,
            ours: false,
            says: None,
        };
        let theirs = Ran {
            status: Some(0),
            stdout: b"Usage: a\n",
            stderr: b"",
        };
        assert!(!help.differences(&theirs, &theirs).any());
        let other = |status, stdout, stderr| {
            let ours = Ran {
                status,
                stdout,
                stderr,
            };
            help.differences(&theirs, &ours)
        };
        let only = |d: Differences| [d.status, d.stdout, d.help, d.stderr];
        assert_eq!(
            only(other(Some(2), b"Usage: a\n", b"")),
            [true, false, false, false]
        );
        assert_eq!(only(other(Some(0), b"", b"")), [false, true, true, false]);
        assert_eq!(
            only(other(Some(0), b"Usage: b\n", b"")),
            [false, false, true, false]
        );
        assert_eq!(
            only(other(Some(0), b"Usage: a\n", b"!")),
            [false, false, false, true]
        );
        assert_eq!(stdout_kind(b"about\n\nUsage: x [OPTIONS]\n"), Stdout::Help);
        assert_eq!(stdout_kind(b"EVTX Parser 0.15.1\n"), Stdout::Version);
        assert_eq!(stdout_kind(b"Record 1\n<Event/>\n"), Stdout::Written);
    }

    #[test]
    fn the_committed_file_reads() {
        let fixtures = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
        let file = CliCases::load(&fixtures).unwrap();
        assert!(file.cases.len() >= 150, "{}", file.cases.len());
        for (name, path) in &file.placeholders {
            let made = [OUTPUT, NOT_UTF8].contains(&name.as_str());
            assert_eq!(path.is_none(), made, "{name}");
        }
        // Usage errors and help texts are the reference's, byte for byte.
        for case in &file.cases {
            let e = &case.expected;
            if !e.ours && (e.status == 2 || e.stdout == Stdout::Help) {
                assert_eq!(e.stderr, Stderr::Whole, "{}", case.name);
            }
        }
    }
}
