//! Files that are not plain files, and outputs that cannot be written: a FIFO with no
//! writer is never waited on, a full stdout is an error (exit 2) and never a panic, and
//! a second sweep on a results file another sweep holds is refused.

use std::os::unix::io::AsRawFd;
use std::process::{Command, Stdio};
use std::time::Duration;

mod common;
use common::{flashlab, path_str as s, stderr};

/// Polls of 10 ms before a run counts as hung: generous, never asserted as a speed.
const HANG_POLLS: u32 = 3000;

/// Run flashlab with `args` in `dir`; None when it has not ended after the bound (killed).
fn bounded(dir: &std::path::Path, args: &[&str]) -> Option<(Option<i32>, String)> {
    let mut child = Command::new(env!("CARGO_BIN_EXE_flashlab"))
        .args(args)
        .current_dir(dir)
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    for _ in 0..HANG_POLLS {
        if child.try_wait().unwrap().is_some() {
            let out = child.wait_with_output().unwrap();
            return Some((out.status.code(), stderr(&out)));
        }
        std::thread::sleep(Duration::from_millis(10));
    }
    child.kill().unwrap();
    child.wait().unwrap();
    None
}

fn mkfifo(path: &std::path::Path) {
    let c = std::ffi::CString::new(s(path)).unwrap();
    // SAFETY: a valid C string.
    assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o600) }, 0);
}

#[test]
fn a_fifo_without_a_writer_is_never_waited_on() {
    let dir = tempfile::tempdir().unwrap();
    mkfifo(&dir.path().join("fifo"));
    std::fs::create_dir(dir.path().join("report")).unwrap();
    mkfifo(&dir.path().join("report/results.json"));
    let cases: [&[&str]; 5] = [
        &["sim", "--config", "fifo"],
        &["kv", "stat", "--path", "fifo"],
        &["report", "report"],
        &["reproduce", "ext-buffer", "--trace", "fifo", "--quiet"],
        &["buffer-sim", "--trace", "fifo", "--trace-format", "text"],
    ];
    for args in cases {
        let (code, err) = bounded(dir.path(), args).unwrap_or_else(|| panic!("{args:?} hung"));
        assert_eq!(code, Some(2), "{args:?}: {err}");
        assert!(!err.contains("panicked"), "{args:?}: {err}");
    }
}

#[test]
fn a_full_stdout_is_an_error_not_a_panic() {
    let dir = tempfile::tempdir().unwrap();
    let db = s(&dir.path().join("kv.db"));
    let put = flashlab(&["kv", "put", "--path", &db, "k", "v"]);
    assert!(put.status.success(), "{}", stderr(&put));
    let cases: [&[&str]; 4] = [
        &["presets"],
        &["kv", "stat", "--path", &db, "--json"],
        &["kv", "scan", "--path", &db],
        &[
            "sim",
            "--capacity",
            "64MiB",
            "--write-volume",
            "0.1x",
            "--quiet",
        ],
    ];
    for args in cases {
        let out = Command::new(env!("CARGO_BIN_EXE_flashlab"))
            .args(args)
            .stdout(std::fs::File::create("/dev/full").unwrap())
            .output()
            .unwrap();
        let err = stderr(&out);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {err}");
        assert!(err.contains("No space left"), "{args:?}: {err}");
        assert!(!err.contains("panicked"), "{args:?}: {err}");
    }
}

#[test]
fn a_second_sweep_on_one_results_file_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let spec = dir.path().join("s.toml");
    std::fs::write(
        &spec,
        "[base]\ncapacity = \"64MiB\"\nwrite_volume = \"0.1x\"\n[vary]\nseed = [1]\n",
    )
    .unwrap();
    let out = dir.path().join("o.jsonl");
    // The first sweep's hold on the file, as a running sweep keeps it.
    let first = std::fs::File::create(&out).unwrap();
    // SAFETY: plain syscall on an fd we own.
    assert_eq!(
        unsafe { libc::flock(first.as_raw_fd(), libc::LOCK_EX | libc::LOCK_NB) },
        0
    );
    let second = flashlab(&["sweep", &s(&spec), "--out", &s(&out), "--quiet"]);
    let err = stderr(&second);
    assert_eq!(second.status.code(), Some(2), "{err}");
    assert!(err.contains("another sweep is writing"), "{err}");
    assert_eq!(std::fs::read(&out).unwrap(), b"", "nothing appended");
    drop(first);
    let alone = flashlab(&["sweep", &s(&spec), "--out", &s(&out), "--quiet"]);
    assert!(alone.status.success(), "{}", stderr(&alone));
}
