//! Two or more INPUTs (README, "Extensions"): each argument is a log (a path or `-`), or a
//! directory searched for logs; the logs are converted one after the other, in this order.
//! evtx-zig's twin is `zig/cli/inputs.zig`, with the same order and words.
//!
//! A directory is searched recursively for files whose names end in `.evtx` in any case;
//! directories found inside are entered, symbolic links to directories are not (a link named
//! `*.evtx` is a log like any other, opened through it). The logs of one argument come in the
//! byte order of their paths, each the argument joined to the path below it with `/`. A
//! directory that cannot be read is one item of that order, its error.

use std::fs;
use std::path::Path;

/// One log to convert, or a directory that could not be read.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Item {
    Log(String),
    /// The directory's path and the error's text (`Error: ...`, exit 1 at the end).
    Unreadable(String, String),
}

impl Item {
    fn path(&self) -> &str {
        match self {
            Item::Log(p) | Item::Unreadable(p, _) => p,
        }
    }
}

/// The items of `args`, in argument order, a directory's in path order.
pub fn expand(args: &[String]) -> Vec<Item> {
    let mut items = Vec::new();
    for arg in args {
        if fs::metadata(arg).is_ok_and(|m| m.is_dir()) {
            let mut found = Vec::new();
            search(arg, &mut found, 0);
            found.sort_by(|a, b| a.path().as_bytes().cmp(b.path().as_bytes()));
            items.extend(found);
        } else {
            items.push(Item::Log(arg.clone()));
        }
    }
    items
}

/// Directories nested deeper than this are not entered (a bound on the recursion; no real log
/// tree comes near it).
const DEPTH_MAX: usize = 64;

/// Adds the logs below `dir` to `found` (unsorted), and each directory that cannot be read.
fn search(dir: &str, found: &mut Vec<Item>, depth: usize) {
    if depth == DEPTH_MAX {
        return;
    }
    let entries = match fs::read_dir(dir) {
        Ok(entries) => entries,
        Err(e) => return found.push(unreadable(dir, &e)),
    };
    for entry in entries {
        let entry = match entry {
            Ok(entry) => entry,
            Err(e) => return found.push(unreadable(dir, &e)),
        };
        let name = entry.file_name();
        let Some(name) = name.to_str() else {
            continue;
        };
        let path = join(dir, name);
        if entry.file_type().is_ok_and(|t| t.is_dir()) {
            search(&path, found, depth + 1);
        } else if is_log_name(name) {
            found.push(Item::Log(path));
        }
    }
}

/// `dir/name`, without a second `/` when `dir` ends with one.
fn join(dir: &str, name: &str) -> String {
    if dir.ends_with('/') {
        format!("{dir}{name}")
    } else {
        format!("{dir}/{name}")
    }
}

/// Whether a file name ends in `.evtx`, in any case.
fn is_log_name(name: &str) -> bool {
    let n = name.len();
    n > 5 && name.as_bytes()[n - 5..].eq_ignore_ascii_case(b".evtx")
}

#[cold]
fn unreadable(dir: &str, e: &std::io::Error) -> Item {
    Item::Unreadable(
        dir.to_string(),
        format!("Failed to read directory at: {dir}\n\nCaused by:\n    {e}"),
    )
}

/// Whether `item` is the file at `output` (the same file through any path or link): the input
/// is evidence, never overwritten. Standard input is the file it is redirected from.
pub fn is_output(item: &Item, output: &Path) -> bool {
    let Item::Log(path) = item else {
        return false;
    };
    let input = if crate::platform::is_stdin(path) {
        crate::platform::stdin_file()
            .ok()
            .and_then(|f| crate::platform::identity_of(&f))
    } else {
        crate::platform::identity_at(Path::new(path))
    };
    input.is_some() && input == crate::platform::identity_at(output)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn log_names_in_any_case() {
        assert!(is_log_name("a.evtx") && is_log_name("B.EVTX") && is_log_name("c.EvTx"));
        assert!(!is_log_name(".evtx") && !is_log_name("a.evt") && !is_log_name("a.evtx.gz"));
        assert!(!is_log_name("é.evtxx") && !is_log_name("aé.vtx"));
    }

    #[test]
    fn directories_searched_in_path_order() {
        let dir = std::env::temp_dir().join(format!("evtx-rs-inputs-{}", std::process::id()));
        let _ = fs::remove_dir_all(&dir);
        for sub in ["a", "a/b", "c.evtx"] {
            fs::create_dir_all(dir.join(sub)).unwrap();
        }
        for file in [
            "z.EVTX",
            "a.evtx",
            "a/b/x.evtx",
            "a/y.txt",
            "c.evtx/in.evtx",
        ] {
            fs::write(dir.join(file), b"").unwrap();
        }
        std::os::unix::fs::symlink(dir.join("a"), dir.join("link.evtx")).unwrap();
        let root = format!("{}/", dir.display());
        let got = expand(&[root.clone(), "-".to_string()]);
        let want: Vec<Item> = [
            "a.evtx",
            "a/b/x.evtx",
            "c.evtx/in.evtx",
            "link.evtx",
            "z.EVTX",
        ]
        .iter()
        .map(|p| Item::Log(format!("{root}{p}")))
        .chain([Item::Log("-".to_string())])
        .collect();
        assert_eq!(got, want);
        fs::remove_dir_all(&dir).unwrap();
    }
}
