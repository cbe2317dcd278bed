//! The CLI's one OS difference: what it asks of an input or output beyond `std::fs` (a file's
//! identity, standard input and output as files, positioned reads, the names of standard
//! input), with the same API on Unix and on Windows (evtx-zig: `zig/cli/platform.zig`).

use std::fs::{self, File};
use std::io;
use std::path::Path;

/// What the reference's first read of a directory says on Linux; Windows opens no directory
/// as a file, so the kind decides there, in the same words.
pub(crate) const IS_A_DIRECTORY: &str = "Is a directory (os error 21)";

/// An I/O error as the reference prints it on Linux (`No such file or directory (os error
/// 2)`): an OS error on Windows is shown as the Linux errno of its kind, as evtx-zig's
/// `os_error.zig` shows it; any other error, and every error on Unix, as Rust shows it.
pub(crate) fn os_error(e: &io::Error) -> String {
    #[cfg(windows)]
    if e.raw_os_error().is_some() {
        let linux = match e.kind() {
            io::ErrorKind::NotFound => Some((2, "No such file or directory")),
            io::ErrorKind::PermissionDenied => Some((13, "Permission denied")),
            io::ErrorKind::IsADirectory => Some((21, "Is a directory")),
            io::ErrorKind::NotADirectory => Some((20, "Not a directory")),
            io::ErrorKind::InvalidFilename => Some((36, "File name too long")),
            io::ErrorKind::NotSeekable => Some((29, "Illegal seek")),
            io::ErrorKind::BrokenPipe => Some((32, "Broken pipe")),
            io::ErrorKind::StorageFull => Some((28, "No space left on device")),
            _ => None,
        };
        if let Some((code, words)) = linux {
            return format!("{words} (os error {code})");
        }
    }
    e.to_string()
}

/// The same file through any path, link or handle: device (volume) and inode (file index).
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub(crate) struct Identity {
    device: u64,
    inode: u64,
}

/// The identity of the file at `path` (through links), `None` when it cannot be read.
pub(crate) fn identity_at(path: &Path) -> Option<Identity> {
    // Windows needs a handle for the file index; Unix's metadata has it already.
    #[cfg(unix)]
    return fs::metadata(path).ok().map(|m| unix::identity(&m));
    #[cfg(windows)]
    return identity_of(&File::open(path).ok()?);
}

/// The identity of an open file, `None` when the OS does not say.
pub(crate) fn identity_of(file: &File) -> Option<Identity> {
    #[cfg(unix)]
    return file.metadata().ok().map(|m| unix::identity(&m));
    #[cfg(windows)]
    return windows::identity(file);
}

/// Whether `input` names standard input: `-`, and on Unix its device names.
pub(crate) fn is_stdin(input: &str) -> bool {
    if cfg!(unix) {
        matches!(input, "-" | "/dev/stdin" | "/dev/fd/0" | "/proc/self/fd/0")
    } else {
        input == "-"
    }
}

/// Standard input as a file of its own (a duplicated descriptor or handle).
pub(crate) fn stdin_file() -> io::Result<File> {
    duplicate(io::stdin())
}

/// Standard output as a file of its own, unbuffered (`io::stdout()` is line-buffered, which
/// would scan and copy every chunk); `None` when it cannot be duplicated.
pub(crate) fn stdout_file() -> Option<File> {
    duplicate(io::stdout()).ok()
}

#[cfg(unix)]
fn duplicate(stream: impl std::os::fd::AsFd) -> io::Result<File> {
    stream.as_fd().try_clone_to_owned().map(File::from)
}

#[cfg(windows)]
fn duplicate(stream: impl std::os::windows::io::AsHandle) -> io::Result<File> {
    stream.as_handle().try_clone_to_owned().map(File::from)
}

/// A positioned read: up to `buf.len()` bytes at `offset`, the file's offset untouched on
/// Unix (Windows moves it; every reader of a spooled or regular input reads by position).
pub(crate) fn read_at(file: &File, buf: &mut [u8], offset: u64) -> io::Result<usize> {
    #[cfg(unix)]
    return std::os::unix::fs::FileExt::read_at(file, buf, offset);
    #[cfg(windows)]
    return std::os::windows::fs::FileExt::seek_read(file, buf, offset);
}

/// `path` opened read-only; on Windows a directory too (backup semantics), so that its kind
/// refuses it as the reference's first read does on Linux.
pub(crate) fn open_read_only(path: &str) -> io::Result<File> {
    let mut options = fs::OpenOptions::new();
    options.read(true);
    #[cfg(windows)]
    std::os::windows::fs::OpenOptionsExt::custom_flags(&mut options, windows::BACKUP_SEMANTICS);
    options.open(path)
}

#[cfg(unix)]
mod unix {
    use super::Identity;
    use std::os::unix::fs::MetadataExt;

    pub(super) fn identity(m: &std::fs::Metadata) -> Identity {
        Identity {
            device: m.dev(),
            inode: m.ino(),
        }
    }
}

#[cfg(windows)]
mod windows {
    use super::Identity;
    use std::fs::File;
    use std::os::windows::io::AsRawHandle;

    /// `FILE_FLAG_BACKUP_SEMANTICS`: what `CreateFileW` needs to open a directory.
    pub(super) const BACKUP_SEMANTICS: u32 = 0x0200_0000;

    /// `BY_HANDLE_FILE_INFORMATION` (fileapi.h).
    #[repr(C)]
    #[derive(Default)]
    struct ByHandleFileInformation {
        attributes: u32,
        creation_time: [u32; 2],
        last_access_time: [u32; 2],
        last_write_time: [u32; 2],
        volume_serial_number: u32,
        size_high: u32,
        size_low: u32,
        links: u32,
        index_high: u32,
        index_low: u32,
    }

    #[link(name = "kernel32")]
    extern "system" {
        fn GetFileInformationByHandle(
            file: *mut core::ffi::c_void,
            info: *mut ByHandleFileInformation,
        ) -> i32;
    }

    /// Volume serial number and file index (`MetadataExt`'s are unstable).
    pub(super) fn identity(file: &File) -> Option<Identity> {
        let mut info = ByHandleFileInformation::default();
        // SAFETY: the handle is the open file's for the whole call, and `info` is a valid,
        // writable `BY_HANDLE_FILE_INFORMATION` the call fills (it keeps no pointer to it).
        let ok = unsafe { GetFileInformationByHandle(file.as_raw_handle(), &mut info) };
        if ok == 0 {
            return None;
        }
        Some(Identity {
            device: u64::from(info.volume_serial_number),
            inode: u64::from(info.index_high) << 32 | u64::from(info.index_low),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_file_through_two_paths_and_a_directory_apart() {
        let dir = std::env::temp_dir().join(format!("evtx-rs-platform-{}", std::process::id()));
        fs::create_dir_all(dir.join("sub")).unwrap();
        fs::write(dir.join("log.evtx"), b"ElfFile\0").unwrap();
        let file = open_read_only(dir.join("log.evtx").to_str().unwrap()).unwrap();
        let id = identity_of(&file).unwrap();
        assert_eq!(identity_at(&dir.join("sub/../log.evtx")), Some(id));
        let sub = open_read_only(dir.join("sub").to_str().unwrap()).unwrap();
        assert!(sub.metadata().unwrap().is_dir());
        assert_ne!(identity_of(&sub), Some(id));
        let mut magic = [0u8; 4];
        assert_eq!(read_at(&file, &mut magic, 3).unwrap(), 4);
        assert_eq!(&magic, b"File");
        assert!(is_stdin("-") && !is_stdin("log.evtx"));
        fs::remove_dir_all(&dir).unwrap();
    }
}
