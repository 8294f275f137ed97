//! # bounded — a user's file read whole, never more than a stated cap
//!
//! Every file a user hands flashlab whole (an SSD config, a stream map, a sweep spec, a
//! `results.json`) is read through [`read_text`], so `--config /dev/zero` or a runaway file is
//! an error that names the cap, not an allocation that grows until the process aborts.
//! (Line-oriented inputs — traces, request logs — cap each line instead: `workload::lines`.)
//!
//! Every such file is opened through [`open`], which never blocks and never reads forever
//! from something that is not a file: a FIFO without a writer reads as empty (instead of an
//! `open` that waits for a writer forever), and a character device other than `/dev/null`
//! (`/dev/zero`, `/dev/urandom`, a terminal: input without an end) is refused.

use std::fs::File;
use std::io::Read;
use std::os::unix::fs::{FileTypeExt, MetadataExt, OpenOptionsExt};
use std::os::unix::io::AsRawFd;
use std::path::Path;

/// `/dev/null`'s device number (major 1, minor 3): the one character device that ends.
const DEV_NULL_RDEV: u64 = (1 << 8) | 3;

/// Open `path` for reading as an input file: without waiting for a FIFO's writer, and
/// refusing (`InvalidInput`, saying why) a character device that never ends.
pub fn open(path: &Path) -> std::io::Result<File> {
    let file = std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NONBLOCK)
        .open(path)?;
    let meta = file.metadata()?;
    if meta.file_type().is_char_device() && meta.rdev() != DEV_NULL_RDEV {
        return Err(std::io::Error::new(
            std::io::ErrorKind::InvalidInput,
            "a character device (like /dev/zero or a terminal), whose input never ends: give a regular file or a pipe",
        ));
    }
    // Blocking reads again (a pipe with a writer waits for its data, as it should).
    // SAFETY: fcntl on an fd we own.
    let flags = unsafe { libc::fcntl(file.as_raw_fd(), libc::F_GETFL) };
    if flags < 0
        || unsafe { libc::fcntl(file.as_raw_fd(), libc::F_SETFL, flags & !libc::O_NONBLOCK) } < 0
    {
        return Err(std::io::Error::last_os_error());
    }
    Ok(file)
}

/// The cap of a configuration-sized file (configs, stream maps, sweep specs): 1 MiB.
pub const CONFIG_BYTES_MAX: u64 = 1 << 20;

/// `path`'s text, or an error: the file's own (missing, unreadable, not UTF-8), or
/// `InvalidData` "larger than the CAP-byte cap for WHAT" when it holds more than `cap_bytes`.
/// At most `cap_bytes + 1` bytes are ever read.
pub fn read_text(path: &Path, cap_bytes: u64, what: &str) -> std::io::Result<String> {
    assert!(cap_bytes > 0, "a cap of zero bytes reads nothing");
    let mut text = String::new();
    let n = open(path)?
        .take(cap_bytes.saturating_add(1))
        .read_to_string(&mut text)?;
    if n as u64 > cap_bytes {
        return Err(std::io::Error::new(
            std::io::ErrorKind::InvalidData,
            format!("larger than the {cap_bytes}-byte cap for {what}"),
        ));
    }
    Ok(text)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_file_at_the_cap_is_read_and_one_byte_more_is_refused_naming_the_cap() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("f");
        std::fs::write(&p, "abcd").unwrap();
        assert_eq!(read_text(&p, 4, "a test file").unwrap(), "abcd");
        let e = read_text(&p, 3, "a test file").unwrap_err();
        assert_eq!(e.kind(), std::io::ErrorKind::InvalidData);
        assert!(e.to_string().contains("3-byte cap for a test file"), "{e}");
    }

    #[test]
    fn a_file_past_the_cap_ends_at_the_cap() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("big");
        std::fs::write(&p, vec![b'a'; 1 << 12]).unwrap();
        let e = read_text(&p, 1 << 10, "a config").unwrap_err();
        assert!(e.to_string().contains("1024-byte cap"), "{e}");
    }

    #[test]
    fn a_fifo_without_a_writer_reads_as_empty_and_endless_devices_are_refused() {
        let dir = tempfile::tempdir().unwrap();
        let fifo = dir.path().join("fifo");
        let c = std::ffi::CString::new(fifo.display().to_string()).unwrap();
        // SAFETY: a valid C string.
        assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o600) }, 0);
        assert_eq!(
            read_text(&fifo, 10, "x").unwrap(),
            "",
            "no writer: empty, no hang"
        );
        let e = read_text(Path::new("/dev/urandom"), 10, "x").unwrap_err();
        assert_eq!(e.kind(), std::io::ErrorKind::InvalidInput);
        assert!(e.to_string().contains("character device"), "{e}");
        assert_eq!(read_text(Path::new("/dev/null"), 10, "x").unwrap(), "");
    }

    #[test]
    fn a_missing_file_is_its_own_error() {
        let e = read_text(Path::new("/no/such/file"), 10, "x").unwrap_err();
        assert_eq!(e.kind(), std::io::ErrorKind::NotFound);
    }
}
