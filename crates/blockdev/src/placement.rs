//! What a real file's device offers for data placement, detected once when it is opened:
//! the kernel (write-life hints since 4.13; io_uring per-I/O write streams since 6.16), the
//! block device under the file (`/sys/dev/block/MAJOR:MINOR`, a partition's disk), and the
//! write streams that disk exposes (`queue/max_write_streams`, `queue/write_stream_granularity`:
//! NVMe FDP placement handles, or streams, as the 6.16+ kernel offers them). A disk without
//! streams (e.g. a virtio disk) reports 0 and gets no per-I/O stream; the summary says so.
//!
//! Detection reads only files under the roots it is given (`/sys`, `/proc` in use; a fake
//! tree in tests) and never fails: what cannot be read is `None`.

use serde::Serialize;
use std::path::{Path, PathBuf};

/// The first kernel with io_uring per-I/O write streams.
pub const WRITE_STREAMS_KERNEL: (u32, u32) = (6, 16);

/// What placement the device of a file supports, for a report's `config`.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
pub struct PlacementSupport {
    /// `uname -r` (`/proc/sys/kernel/osrelease`).
    pub kernel_release: Option<String>,
    /// The kernel is 6.16 or newer: io_uring writes can carry a write stream.
    pub kernel_io_uring_write_streams: bool,
    /// The block device (disk) the file lives on, e.g. `nvme0n1` or `vda`.
    pub block_device: Option<String>,
    /// Write streams the disk exposes (0: none; None: not reported by this kernel).
    pub max_write_streams: Option<u32>,
    pub write_stream_granularity_bytes: Option<u64>,
    /// Whether the kernel took a write-life hint (`fcntl(F_SET_RW_HINT)`) on this file (None:
    /// not asked).
    pub write_life_hints: Option<bool>,
    /// Writes carry their stream per I/O (io_uring `write_stream`): kernel and disk both
    /// support it.
    pub per_io_write_streams: bool,
    /// One line: what is used, and where nothing is, why.
    pub summary: String,
}

/// `major.minor` of a kernel release such as `6.18.44-fc-v595`.
pub fn kernel_version(release: &str) -> Option<(u32, u32)> {
    let mut parts = release.trim().split(|c: char| !c.is_ascii_digit());
    let major = parts.next()?.parse().ok()?;
    let minor = parts.next()?.parse().ok()?;
    Some((major, minor))
}

fn read_trimmed(path: &Path) -> Option<String> {
    std::fs::read_to_string(path)
        .ok()
        .map(|s| s.trim().to_string())
}

/// The disk's directory of device `major:minor` under `sys_root` (a partition's parent).
fn disk_dir(sys_root: &Path, major: u32, minor: u32) -> Option<PathBuf> {
    let dir = std::fs::canonicalize(sys_root.join(format!("dev/block/{major}:{minor}"))).ok()?;
    if dir.join("queue").is_dir() {
        return Some(dir);
    }
    let parent = dir.parent()?;
    parent.join("queue").is_dir().then(|| parent.to_path_buf())
}

/// Detect what the device `(major, minor)` supports, reading `sys_root` and `proc_root`.
pub fn detect(sys_root: &Path, proc_root: &Path, (major, minor): (u32, u32)) -> PlacementSupport {
    let kernel_release = read_trimmed(&proc_root.join("sys/kernel/osrelease"));
    let kernel_io_uring_write_streams = kernel_release
        .as_deref()
        .and_then(kernel_version)
        .is_some_and(|v| v >= WRITE_STREAMS_KERNEL);
    let disk = disk_dir(sys_root, major, minor);
    let attr = |name: &str| {
        disk.as_ref()
            .and_then(|d| read_trimmed(&d.join("queue").join(name)))
    };
    let max_write_streams = attr("max_write_streams").and_then(|s| s.parse().ok());
    let mut s = PlacementSupport {
        kernel_release,
        kernel_io_uring_write_streams,
        block_device: disk
            .as_ref()
            .and_then(|d| d.file_name())
            .map(|n| n.to_string_lossy().into_owned()),
        max_write_streams,
        write_stream_granularity_bytes: attr("write_stream_granularity")
            .and_then(|s| s.parse().ok()),
        write_life_hints: None,
        per_io_write_streams: kernel_io_uring_write_streams && max_write_streams.unwrap_or(0) > 0,
        summary: String::new(),
    };
    s.summary = s.describe();
    s
}

impl PlacementSupport {
    /// The per-I/O write stream of host stream `stream`: streams 1..=max as themselves, the
    /// default stream 0 and streams beyond the disk's as none (0).
    pub fn io_write_stream(&self, stream: u16) -> u8 {
        let max = self.max_write_streams.unwrap_or(0).min(u8::MAX as u32);
        match self.per_io_write_streams && (stream as u32) <= max {
            true => stream as u8,
            false => 0,
        }
    }

    /// The one-line summary (recomputed after `write_life_hints` is known).
    pub fn describe(&self) -> String {
        let disk = self.block_device.as_deref().unwrap_or("an unknown device");
        let streams = match (self.per_io_write_streams, self.max_write_streams) {
            (true, Some(n)) => format!("per-I/O write streams in use ({n} on {disk})"),
            (false, Some(0)) => format!("no write streams: {disk} exposes none (no NVMe FDP or streams), so writes carry no per-I/O stream"),
            (false, Some(n)) => format!("{disk} exposes {n} write streams but this kernel is older than 6.16: no per-I/O streams"),
            _ => format!("no write streams: this kernel reports none for {disk}"),
        };
        let hints = match self.write_life_hints {
            Some(true) => {
                "write-life hints taken (fcntl F_SET_RW_HINT): each stream's writes carry its life"
            }
            Some(false) => "write-life hints refused by this kernel or file: writes go unhinted",
            None => "write-life hints not tried",
        };
        format!("{streams}; {hints}")
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::fs;

    fn fake(root: &Path, disk: &str, streams: Option<&str>, release: &str) -> (PathBuf, PathBuf) {
        let (sys, proc) = (root.join("sys"), root.join("proc"));
        let disk_dir = sys.join("devices/pci/block").join(disk);
        fs::create_dir_all(disk_dir.join("queue")).unwrap();
        fs::create_dir_all(disk_dir.join(format!("{disk}p1"))).unwrap();
        if let Some(n) = streams {
            fs::write(disk_dir.join("queue/max_write_streams"), n).unwrap();
            fs::write(
                disk_dir.join("queue/write_stream_granularity"),
                "1073741824\n",
            )
            .unwrap();
        }
        fs::create_dir_all(sys.join("dev/block")).unwrap();
        std::os::unix::fs::symlink(&disk_dir, sys.join("dev/block/259:0")).unwrap();
        std::os::unix::fs::symlink(
            disk_dir.join(format!("{disk}p1")),
            sys.join("dev/block/259:1"),
        )
        .unwrap();
        fs::create_dir_all(proc.join("sys/kernel")).unwrap();
        fs::write(proc.join("sys/kernel/osrelease"), release).unwrap();
        (sys, proc)
    }

    #[test]
    fn an_fdp_disk_on_a_new_kernel_gets_per_io_streams_through_its_partition() {
        let dir = tempfile::tempdir().unwrap();
        let (sys, proc) = fake(dir.path(), "nvme0n1", Some("8\n"), "6.16.0-rc1\n");
        for dev in [(259, 0), (259, 1)] {
            let s = detect(&sys, &proc, dev);
            assert_eq!(s.block_device.as_deref(), Some("nvme0n1"), "{dev:?}");
            assert_eq!(s.max_write_streams, Some(8));
            assert_eq!(s.write_stream_granularity_bytes, Some(1 << 30));
            assert!(s.per_io_write_streams && s.kernel_io_uring_write_streams);
            assert_eq!(
                (
                    s.io_write_stream(0),
                    s.io_write_stream(3),
                    s.io_write_stream(9)
                ),
                (0, 3, 0)
            );
            assert!(s.summary.contains("in use"), "{}", s.summary);
        }
    }

    #[test]
    fn a_disk_without_streams_or_an_old_kernel_says_why_nothing_is_used() {
        let dir = tempfile::tempdir().unwrap();
        let (sys, proc) = fake(dir.path(), "vda", Some("0"), "6.18.44-fc-v595");
        let s = detect(&sys, &proc, (259, 0));
        assert!(!s.per_io_write_streams);
        assert_eq!(s.io_write_stream(2), 0);
        assert!(s.summary.contains("vda exposes none"), "{}", s.summary);
        let dir = tempfile::tempdir().unwrap();
        let (sys, proc) = fake(dir.path(), "nvme1n1", Some("4"), "6.8.0-generic");
        let s = detect(&sys, &proc, (259, 0));
        assert!(!s.per_io_write_streams && !s.kernel_io_uring_write_streams);
        assert!(s.summary.contains("older than 6.16"), "{}", s.summary);
        let dir = tempfile::tempdir().unwrap();
        let (sys, proc) = fake(dir.path(), "sda", None, "5.15.0");
        let s = detect(&sys, &proc, (8, 0));
        assert_eq!((s.block_device, s.max_write_streams), (None, None));
        assert!(s.summary.contains("reports none"), "{}", s.summary);
    }

    #[test]
    fn kernel_versions_parse() {
        assert_eq!(kernel_version("6.18.44-fc-v595"), Some((6, 18)));
        assert_eq!(kernel_version("6.16"), Some((6, 16)));
        assert_eq!(kernel_version("garbage"), None);
        assert!(kernel_version("6.15.9").unwrap() < WRITE_STREAMS_KERNEL);
    }
}
