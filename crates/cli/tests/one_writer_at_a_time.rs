//! A store has one writer at a time, across processes: while `kv run` writes a store, `kv
//! put` from a second process is refused with an error naming the file and the holder (it
//! never says "committed" for keys that then vanish); read-only `check` and `stat` are
//! refused beside the writer too, and run beside each other and on a read-only file.

use std::os::unix::fs::PermissionsExt;
use std::process::{Child, Command, Stdio};

mod common;
use common::{flashlab, path_str as s, stderr};

fn spawn_writer(db: &str) -> Child {
    Command::new(env!("CARGO_BIN_EXE_flashlab"))
        .args(["kv", "run", "--path", db, "--records", "2000", "--ops"])
        .args(["100000000", "--value-bytes", "100", "--commit-every", "50"])
        .args(["--file-mib", "64", "--quiet", "--json"])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .expect("spawn the writer")
}

#[test]
fn a_second_writer_is_refused_and_nothing_is_lost() {
    let dir = tempfile::tempdir().unwrap();
    let db = s(&dir.path().join("kv.db"));
    let load = flashlab(
        &["kv", "load", "--path", &db, "--records", "2000"]
            .into_iter()
            .chain(["--value-bytes", "100", "--file-mib", "64", "--quiet"])
            .collect::<Vec<_>>(),
    );
    assert!(load.status.success(), "{}", stderr(&load));
    let mut writer = spawn_writer(&db);
    let mut committed = Vec::new();
    let mut refusal = None;
    // Until the writer holds the lock, puts may get in first: those must survive too.
    for i in 0..2000 {
        // A writer that started while a put held the lock was itself refused (one writer
        // at a time works both ways): start it again.
        if writer.try_wait().unwrap().is_some() {
            writer = spawn_writer(&db);
        }
        let key = format!("second-writer-{i}");
        let out = flashlab(&["kv", "put", "--path", &db, &key, "v"]);
        if out.status.success() {
            committed.push(key);
            continue;
        }
        let err = stderr(&out);
        if err.contains("locked") {
            refusal = Some((out.status.code(), err));
            break;
        }
        assert!(
            writer.try_wait().unwrap().is_none(),
            "the writer ended: {err}"
        );
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    let (code, err) = refusal.expect("the second writer was refused while the first ran");
    assert_eq!(code, Some(2), "{err}");
    assert!(err.contains(&db), "names the file: {err}");
    assert!(
        err.contains(&format!("process {}", writer.id())),
        "names the holder: {err}"
    );
    assert!(!err.contains("committed as commit"), "{err}");
    assert!(!err.contains("panicked"), "{err}");
    let check = flashlab(&["kv", "check", "--path", &db]);
    assert_eq!(check.status.code(), Some(2), "no reader beside the writer");
    assert!(stderr(&check).contains("locked"), "{}", stderr(&check));
    writer.kill().expect("kill the writer");
    writer.wait().expect("reap the writer");
    let check = flashlab(&["kv", "check", "--path", &db]);
    assert!(check.status.success(), "{}", stderr(&check));
    for key in &committed {
        let got = flashlab(&["kv", "get", "--path", &db, key]);
        assert!(got.status.success(), "{key} lost: {}", stderr(&got));
    }
}

#[test]
fn read_only_commands_work_on_a_read_only_file_and_never_write() {
    let dir = tempfile::tempdir().unwrap();
    let db = s(&dir.path().join("kv.db"));
    let put = flashlab(&["kv", "put", "--path", &db, "k", "v"]);
    assert!(put.status.success(), "{}", stderr(&put));
    let before = std::fs::read(&db).unwrap();
    std::fs::set_permissions(&db, std::fs::Permissions::from_mode(0o444)).unwrap();
    for args in [
        &["kv", "check", "--path", &db][..],
        &["kv", "stat", "--path", &db],
        &["kv", "get", "--path", &db, "k"],
        &["kv", "scan", "--path", &db],
    ] {
        let out = flashlab(args);
        assert!(out.status.success(), "{args:?}: {}", stderr(&out));
    }
    assert_eq!(std::fs::read(&db).unwrap(), before, "a reader wrote");
}

/// `chattr -i` on drop, so a failing test still leaves a removable temp dir.
struct Immutable<'a>(&'a str);

impl Drop for Immutable<'_> {
    fn drop(&mut self) {
        let _ = Command::new("chattr").args(["-i", self.0]).status();
    }
}

/// Mode 0444 does not stop root; an immutable file (`chattr +i`) does: no process may open
/// it for writing. The readers still work, and the file's bytes and mtime stay as they were.
#[test]
fn read_only_commands_work_on_an_immutable_file_and_never_write() {
    let dir = tempfile::tempdir().unwrap();
    let db = s(&dir.path().join("kv.db"));
    let put = flashlab(&["kv", "put", "--path", &db, "k", "v"]);
    assert!(put.status.success(), "{}", stderr(&put));
    let chattr = Command::new("chattr").args(["+i", &db]).output();
    if !chattr.as_ref().is_ok_and(|o| o.status.success()) {
        eprintln!("skipped: this filesystem or user cannot make a file immutable ({chattr:?})");
        return;
    }
    let _guard = Immutable(&db);
    let before = (std::fs::read(&db).unwrap(), mtime(&db));
    let write = flashlab(&["kv", "put", "--path", &db, "k2", "v"]);
    assert_eq!(
        write.status.code(),
        Some(2),
        "the media is really read-only"
    );
    for args in [
        &["kv", "check", "--path", &db][..],
        &["kv", "stat", "--path", &db],
        &["kv", "get", "--path", &db, "k"],
        &["kv", "scan", "--path", &db],
    ] {
        let out = flashlab(args);
        assert!(out.status.success(), "{args:?}: {}", stderr(&out));
    }
    let after = (std::fs::read(&db).unwrap(), mtime(&db));
    assert!(before == after, "a reader changed the file or its mtime");
}

fn mtime(path: &str) -> std::time::SystemTime {
    std::fs::metadata(path).unwrap().modified().unwrap()
}

/// Lock `db` from a `flock` process that exits at once, the lock staying with a `sleep
/// SECS` child that inherited the descriptor: a holder that is gone, whose lock the kernel
/// has not released yet (as when a killed writer's io_uring is still being torn down).
/// Returns the pid of the `sleep`.
fn lock_with_a_dead_holder(db: &str, secs: &str) -> i32 {
    let out = Command::new("bash")
        .args([
            "-c",
            "exec 9<\"$1\"; flock -x 9; sleep \"$2\" >&- 2>&- & echo $!",
        ])
        .args(["_", db, secs])
        .output()
        .expect("bash and flock(1)");
    assert!(out.status.success(), "{}", stderr(&out));
    String::from_utf8_lossy(&out.stdout).trim().parse().unwrap()
}

/// Two real processes: a second writer waits, bounded, for the release of a lock whose
/// holder no longer runs (the release comes once the descriptor's last user ends), then
/// writes; when the release does not come within the bound it is refused, saying why.
#[test]
fn a_lock_whose_holder_is_gone_is_waited_for_until_released_bounded() {
    let has_flock = Command::new("flock").arg("--version").output();
    if !has_flock.is_ok_and(|o| o.status.success()) {
        eprintln!("skipped: flock(1) is not installed");
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let db = s(&dir.path().join("kv.db"));
    let put = flashlab(&["kv", "put", "--path", &db, "k", "v"]);
    assert!(put.status.success(), "{}", stderr(&put));
    lock_with_a_dead_holder(&db, "0.5");
    let put = flashlab(&["kv", "put", "--path", &db, "k2", "v2"]);
    assert!(
        put.status.success(),
        "waited for the release: {}",
        stderr(&put)
    );
    let sleeper = lock_with_a_dead_holder(&db, "60");
    let put = flashlab(&["kv", "put", "--path", &db, "k3", "v3"]);
    // SAFETY: plain syscall on the sleep this test started.
    unsafe { libc::kill(sleeper, libc::SIGKILL) };
    let err = stderr(&put);
    assert_eq!(put.status.code(), Some(2), "{err}");
    assert!(
        err.contains("locked") && err.contains("within 5 s"),
        "{err}"
    );
    let get = flashlab(&["kv", "get", "--path", &db, "k2"]);
    assert!(get.status.success(), "{}", stderr(&get));
}
