//! A Python child (`sweep --ray`'s driver) dies with flashlab: flashlab is killed with
//! SIGKILL (no chance to clean up), and the child is gone soon after. The child also starts
//! with SIGINT and SIGTERM deliverable (flashlab blocks them in its own threads), so a
//! plain `kill` ends it too. Skipped, with the reason printed, when no python3 runs.
//!
//! The driver is a stand-in `flashlab.ray_sweep` module (on PYTHONPATH) that records its
//! pid and sleeps: what is checked is the process relation, not Ray.

use std::path::Path;
use std::process::{Command, Stdio};
use std::time::Duration;

/// A generous bound on every wait (polled, never asserted as a speed).
const WAIT_POLLS: u32 = 6000;
const POLL: Duration = Duration::from_millis(10);

fn python() -> Option<&'static str> {
    let ok = Command::new("python3")
        .args(["-c", "import sys"])
        .stderr(Stdio::null())
        .status()
        .is_ok_and(|s| s.success());
    ok.then_some("python3")
}

fn fake_driver(root: &Path, pid_file: &Path) {
    let pkg = root.join("flashlab");
    std::fs::create_dir_all(&pkg).unwrap();
    std::fs::write(pkg.join("__init__.py"), "").unwrap();
    let body = format!(
        "import os, time\nopen({:?} + '.tmp', 'w').write(str(os.getpid()))\n\
         os.rename({:?} + '.tmp', {:?})\nwhile True:\n    time.sleep(1)\n",
        pid_file.display().to_string(),
        pid_file.display().to_string(),
        pid_file.display().to_string(),
    );
    std::fs::write(pkg.join("ray_sweep.py"), body).unwrap();
}

/// The process's state letter, or None once it no longer exists; a zombie counts as gone
/// (it runs nothing; whether it is reaped depends on this machine's init).
fn running(pid: u32) -> bool {
    match std::fs::read_to_string(format!("/proc/{pid}/stat")) {
        Ok(stat) => stat
            .rsplit_once(')')
            .and_then(|(_, rest)| rest.split_whitespace().next())
            .is_some_and(|state| state != "Z" && state != "X"),
        Err(_) => false,
    }
}

/// The mask of blocked signals of `pid` (`SigBlk:` of /proc/PID/status).
fn blocked_signals(pid: u32) -> u64 {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap();
    let line = status.lines().find(|l| l.starts_with("SigBlk:")).unwrap();
    u64::from_str_radix(line.split_whitespace().nth(1).unwrap(), 16).unwrap()
}

#[test]
fn the_python_child_dies_when_flashlab_is_killed() {
    let Some(py) = python() else {
        eprintln!("skipped: python3 cannot be started here");
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let pid_file = dir.path().join("driver.pid");
    fake_driver(dir.path(), &pid_file);
    let spec = dir.path().join("spec.toml");
    std::fs::write(&spec, "[base]\ncapacity = \"64MiB\"\n[vary]\nseed = [1]\n").unwrap();
    let mut flashlab = Command::new(env!("CARGO_BIN_EXE_flashlab"))
        .arg("sweep")
        .arg(&spec)
        .args(["--out", "out.jsonl", "--ray", "auto", "--python", py])
        .current_dir(dir.path())
        .env("PYTHONPATH", dir.path())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let mut polls = 0;
    while !pid_file.exists() {
        assert!(flashlab.try_wait().unwrap().is_none(), "flashlab ended");
        assert!(polls < WAIT_POLLS, "the driver never started");
        polls += 1;
        std::thread::sleep(POLL);
    }
    let child: u32 = std::fs::read_to_string(&pid_file).unwrap().parse().unwrap();
    assert!(running(child), "the driver runs");
    let term_int = (1u64 << (libc::SIGTERM - 1)) | (1u64 << (libc::SIGINT - 1));
    assert_eq!(
        blocked_signals(child) & term_int,
        0,
        "the child can be stopped with SIGTERM and SIGINT"
    );
    flashlab.kill().unwrap(); // SIGKILL
    flashlab.wait().unwrap();
    let mut polls = 0;
    while running(child) && polls < WAIT_POLLS {
        polls += 1;
        std::thread::sleep(POLL);
    }
    let survived = running(child);
    if survived {
        // SAFETY: plain syscall; do not leave the stray process behind.
        unsafe { libc::kill(child as i32, libc::SIGKILL) };
    }
    assert!(!survived, "the Python child {child} outlived flashlab");
}
