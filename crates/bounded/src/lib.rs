//! # bounded — a user's file read whole, never more than a stated cap
//!
//! Every file a user hands flashlab whole (an SSD config, a stream map, a sweep spec, a
//! `results.json`) is read through [`read_text`], so `--config /dev/zero` or a runaway file is
//! an error that names the cap, not an allocation that grows until the process aborts.
//! (Line-oriented inputs — traces, request logs — cap each line instead: `workload::lines`.)

use std::io::Read;
use std::path::Path;

/// The cap of a configuration-sized file (configs, stream maps, sweep specs): 1 MiB.
pub const CONFIG_BYTES_MAX: u64 = 1 << 20;

/// `path`'s text, or an error: the file's own (missing, unreadable, not UTF-8), or
/// `InvalidData` "larger than the CAP-byte cap for WHAT" when it holds more than `cap_bytes`.
/// At most `cap_bytes + 1` bytes are ever read.
pub fn read_text(path: &Path, cap_bytes: u64, what: &str) -> std::io::Result<String> {
    assert!(cap_bytes > 0, "a cap of zero bytes reads nothing");
    let mut text = String::new();
    let n = std::fs::File::open(path)?
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
    fn an_endless_file_ends_at_the_cap() {
        let e = read_text(Path::new("/dev/zero"), 1 << 10, "a config").unwrap_err();
        assert!(e.to_string().contains("1024-byte cap"), "{e}");
    }

    #[test]
    fn a_missing_file_is_its_own_error() {
        let e = read_text(Path::new("/no/such/file"), 10, "x").unwrap_err();
        assert_eq!(e.kind(), std::io::ErrorKind::NotFound);
    }
}
