//! Advisory whole-file locks (`flock`) on device files: one writer at a time, any number of
//! readers. A read-write open takes an exclusive lock, a read-only open a shared one; both
//! are non-blocking, so a second writer fails at once with [`DevError::Locked`] naming the
//! file and, where Linux tells (`/proc/locks`), the process holding it. The lock lives as
//! long as the open file (it is released when the device is dropped or the process dies).

use crate::DevError;
use std::fs::File;
use std::os::unix::fs::MetadataExt;
use std::os::unix::io::AsRawFd;
use std::path::Path;
use std::time::{Duration, Instant};

/// How a [`crate::FileDevice`] holds its file.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum Lock {
    /// Read-write, exclusive lock: the one writer (the default).
    #[default]
    Exclusive,
    /// Read-only (`O_RDONLY`), shared lock: never writes, works on read-only media; any
    /// number of readers, but no writer, may hold the file at the same time.
    Shared,
    /// Read-write without a lock: a second handle for inspection (e.g. reading the file's
    /// write-life hint) beside the locked one. Never for a store's data.
    Unlocked,
}

impl Lock {
    pub fn read_only(self) -> bool {
        self == Lock::Shared
    }
}

/// How long an open waits for the lock of a holder that no longer runs.
///
/// `flock` locks belong to an open file description, and the kernel drops one at the
/// description's last close, not at its holder's death. When a holder is killed, that last
/// close usually comes at its exit, but not always: (1) a process killed with an io_uring
/// holding the file (requests in flight) has its ring torn down afterwards by a kernel
/// worker, which first cancels those requests and waits for the ones already at the
/// device, so the lock goes only once the dead writer's last writes have landed, which is
/// exactly when a next writer may safely start; (2) a child that inherited the descriptor
/// keeps it (and the lock) while it runs, although `/proc/locks` names the dead parent. In
/// both cases the release is waited for exactly (polled, see [`RELEASE_POLL_MAX`]), and
/// the bound only turns a release that never comes (a hung device, a long-lived child, a
/// holder in another PID namespace, which `/proc/locks` shows as pid 0 too) into an error
/// naming that, instead of a hang. A live holder is never waited for.
const DEAD_HOLDER_WAIT: Duration = Duration::from_secs(5);

/// The longest pause between two tries while a dead holder's lock is released; the pauses
/// start at 1 ms and double, so a release is seen within about twice its own delay.
const RELEASE_POLL_MAX: Duration = Duration::from_millis(50);

/// Take `lock` on `file` (opened from `path`) without waiting for a live holder.
pub(crate) fn take(file: &File, path: &Path, lock: Lock) -> Result<(), DevError> {
    let op = match lock {
        Lock::Exclusive => libc::LOCK_EX,
        Lock::Shared => libc::LOCK_SH,
        Lock::Unlocked => return Ok(()),
    };
    let started = Instant::now();
    let mut pause = Duration::from_millis(1);
    loop {
        // SAFETY: plain syscall on an fd we own.
        let r = unsafe { libc::flock(file.as_raw_fd(), op | libc::LOCK_NB) };
        if r == 0 {
            return Ok(());
        }
        let e = std::io::Error::last_os_error();
        if e.raw_os_error() != Some(libc::EWOULDBLOCK) {
            return Err(DevError::Io {
                path: path.to_path_buf(),
                op: "flock",
                source: e,
            });
        }
        let holder = file
            .metadata()
            .ok()
            .and_then(|m| holder_pid(m.dev(), m.ino()));
        let dead = !holder.is_some_and(alive);
        if !dead || started.elapsed() >= DEAD_HOLDER_WAIT {
            return Err(locked(path, lock, holder, dead));
        }
        std::thread::sleep(pause);
        pause = (pause * 2).min(RELEASE_POLL_MAX);
    }
}

/// Whether process `pid` still runs (a zombie, or no process at all, holds nothing for long).
fn alive(pid: u32) -> bool {
    if pid == 0 {
        return false;
    }
    match std::fs::read_to_string(format!("/proc/{pid}/stat")) {
        // `PID (COMM) STATE ...`: the state follows the last `)`.
        Ok(stat) => stat
            .rsplit_once(')')
            .and_then(|(_, rest)| rest.split_whitespace().next())
            .is_some_and(|state| state != "Z" && state != "X"),
        Err(_) => false,
    }
}

fn locked(path: &Path, lock: Lock, holder: Option<u32>, dead: bool) -> DevError {
    let waited = DEAD_HOLDER_WAIT.as_secs();
    DevError::Locked {
        path: path.to_path_buf(),
        wanted: match lock {
            Lock::Shared => "a shared (read-only)",
            _ => "an exclusive (read-write)",
        },
        holder: match holder {
            Some(pid) if pid == std::process::id() => {
                format!("this process ({pid}: the file is open twice)")
            }
            Some(pid) if !dead => format!("process {pid}{}", comm(pid)),
            // Waited DEAD_HOLDER_WAIT for a release that did not come.
            Some(pid) if pid > 0 => format!(
                "process {pid}, which has exited, but its lock was not released within {waited} s (a child it started still holds the file, or its last I/O has not completed)"
            ),
            _ => format!(
                "a process this one cannot name (in another PID namespace, or exited with I/O still in flight after {waited} s)"
            ),
        },
    }
}

/// The pid of a process holding a `flock` on the inode (`dev`, `ino`),
/// from `/proc/locks` (lines like `1: FLOCK  ADVISORY  WRITE 1234 08:01:5678 0 EOF`).
fn holder_pid(dev: u64, ino: u64) -> Option<u32> {
    let text = std::fs::read_to_string("/proc/locks").ok()?;
    let want = format!(
        "{:02x}:{:02x}:{ino}",
        libc::major(dev as libc::dev_t),
        libc::minor(dev as libc::dev_t)
    );
    parse_holder(&text, &want)
}

fn parse_holder(text: &str, want: &str) -> Option<u32> {
    text.lines().find_map(|line| {
        let f: Vec<&str> = line.split_whitespace().collect();
        // `N: FLOCK ADVISORY WRITE PID MAJ:MIN:INO START END` (blocked waiters have `->`).
        let f = if f.get(1) == Some(&"->") {
            &f[1..]
        } else {
            &f[..]
        };
        // A lock whose owner has exited but whose file is still being released (a killed
        // process's io_uring is torn down by a kernel worker) shows no pid here (`-1` or 0,
        // by kernel): pid 0 stands for "no running process".
        let pid = f.get(4)?.parse::<i64>().ok()?.clamp(0, u32::MAX as i64) as u32;
        (f.get(1) == Some(&"FLOCK") && f.get(5) == Some(&want)).then_some(pid)
    })
}

/// ` (NAME)` of a process, or nothing when it cannot be read.
fn comm(pid: u32) -> String {
    std::fs::read_to_string(format!("/proc/{pid}/comm"))
        .map(|c| format!(" ({})", c.trim()))
        .unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_holder_is_read_from_proc_locks_lines() {
        let text = "1: POSIX  ADVISORY  WRITE 77 08:01:5678 0 EOF\n\
                    2: FLOCK  ADVISORY  WRITE 1234 08:01:5678 0 EOF\n\
                    3: FLOCK  ADVISORY  WRITE 99 08:01:9999 0 EOF\n";
        assert_eq!(parse_holder(text, "08:01:5678"), Some(1234));
        assert_eq!(parse_holder(text, "08:02:5678"), None);
        let gone = "4: FLOCK  ADVISORY  READ -1 08:01:42 0 EOF\n";
        assert_eq!(parse_holder(gone, "08:01:42"), Some(0), "an exited owner");
    }

    #[test]
    fn only_a_running_process_counts_as_alive() {
        assert!(alive(std::process::id()));
        assert!(!alive(u32::MAX - 1), "no such process");
    }

    #[test]
    fn a_second_writer_is_refused_naming_the_file_and_the_holder() {
        let dir = tempfile::tempdir().expect("temp dir");
        let path = dir.path().join("store.img");
        let a = File::create(&path).expect("create");
        take(&a, &path, Lock::Exclusive).expect("first writer");
        let b = File::open(&path).expect("open");
        let msg = take(&b, &path, Lock::Exclusive)
            .expect_err("second writer")
            .to_string();
        assert!(msg.contains("store.img") && msg.contains("locked"), "{msg}");
        let c = File::open(&path).expect("open");
        assert!(
            take(&c, &path, Lock::Shared).is_err(),
            "no reader beside a writer"
        );
        drop(a);
        take(&b, &path, Lock::Shared).expect("readers share");
        take(&c, &path, Lock::Shared).expect("readers share");
    }
}
