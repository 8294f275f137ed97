//! A private PostgreSQL cluster: `initdb` in a temporary directory, its own port and socket
//! directory (no TCP listener), run by an unprivileged user when flashlab runs as root
//! (PostgreSQL refuses root), stopped (`pg_ctl stop -m immediate`) and removed on drop and,
//! through [`stop_all`], on Ctrl-C.

use super::CaptureError;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::sync::Mutex;

/// Data directories of the clusters running now, with the user and `pg_ctl` that stop them.
static RUNNING: Mutex<Vec<(PathBuf, Option<String>, PathBuf)>> = Mutex::new(Vec::new());

/// Stop and remove every cluster this process started (the Ctrl-C path); returns how many.
pub fn stop_all() -> usize {
    let running = match RUNNING.lock() {
        Ok(mut r) => std::mem::take(&mut *r),
        Err(_) => return 0,
    };
    for (data, user, pg_ctl) in &running {
        stop(pg_ctl, user.as_deref(), data);
        if let Some(dir) = data.parent() {
            let _ = std::fs::remove_dir_all(dir);
        }
    }
    running.len()
}

fn stop(pg_ctl: &Path, user: Option<&str>, data: &Path) {
    let mut c = as_user(user, pg_ctl);
    c.arg("-D")
        .arg(data)
        .args(["-m", "immediate", "-w", "stop"]);
    let _ = c.stdout(Stdio::null()).stderr(Stdio::null()).status();
}

/// `program` run as `user` (through `runuser`) or as ourselves.
fn as_user(user: Option<&str>, program: &Path) -> Command {
    let mut c = match user {
        Some(u) => {
            let mut c = Command::new("runuser");
            c.args(["-u", u, "--"]).arg(program);
            c
        }
        None => Command::new(program),
    };
    unblock_signals(&mut c);
    c
}

pub use crate::child::unblock_signals;

/// A running cluster; dropping it stops it and removes its directory.
pub struct Cluster {
    pub bin_dir: PathBuf,
    pub port: u16,
    pub user: Option<String>,
    dir: tempfile::TempDir,
}

impl Cluster {
    /// initdb and start a cluster of PostgreSQL in `bin_dir` with `shared_buffers_mib`.
    pub fn start(
        bin_dir: &Path,
        user: Option<String>,
        port: u16,
        shared_buffers_mib: u32,
    ) -> Result<Cluster, CaptureError> {
        let dir = tempfile::Builder::new()
            .prefix("flashlab-pg-")
            .tempdir()
            .map_err(|source| CaptureError::Io {
                what: "temporary directory".into(),
                source,
            })?;
        if let Some(u) = &user {
            chown_to(dir.path(), u)?;
        }
        let cluster = Cluster {
            bin_dir: bin_dir.to_path_buf(),
            port,
            user,
            dir,
        };
        cluster.run_tool("initdb", |c| {
            c.arg("-D").arg(cluster.data()).args([
                "-A",
                "trust",
                "-U",
                "postgres",
                "--no-sync",
                "-E",
                "UTF8",
            ]);
        })?;
        RUNNING
            .lock()
            .map_err(|_| CaptureError::Cluster("cluster registry poisoned".into()))?
            .push((cluster.data(), cluster.user.clone(), bin_dir.join("pg_ctl")));
        let opts = format!(
            "-p {port} -k {} -c listen_addresses='' -c shared_buffers={shared_buffers_mib}MB -c fsync=off -c synchronous_commit=off -c max_connections=64",
            cluster.dir.path().display()
        );
        cluster.run_tool("pg_ctl", |c| {
            c.arg("-D").arg(cluster.data()).args(["-o", &opts, "-l"]);
            c.arg(cluster.dir.path().join("log")).args(["-w", "start"]);
        })?;
        Ok(cluster)
    }

    fn data(&self) -> PathBuf {
        self.dir.path().join("data")
    }

    /// The socket directory (`psql -h`).
    pub fn socket_dir(&self) -> &Path {
        self.dir.path()
    }

    fn run_tool(
        &self,
        tool: &str,
        args: impl FnOnce(&mut Command),
    ) -> Result<Output, CaptureError> {
        let mut c = as_user(self.user.as_deref(), &self.bin_dir.join(tool));
        c.current_dir(self.dir.path());
        args(&mut c);
        checked(tool, c.output())
    }

    /// A `psql` command on database `db`, quiet, unaligned, tuples only.
    pub fn psql(&self, db: &str) -> Command {
        let mut c = Command::new(self.bin_dir.join("psql"));
        c.args([
            "-X",
            "-q",
            "-A",
            "-t",
            "-v",
            "ON_ERROR_STOP=1",
            "-U",
            "postgres",
        ])
        .arg("-h")
        .arg(self.socket_dir())
        .args(["-p", &self.port.to_string(), "-d", db]);
        c
    }

    /// Run `sql` (with psql variables `vars`) on `db`; its stdout.
    pub fn sql(
        &self,
        db: &str,
        sql: &str,
        vars: &[(&str, String)],
    ) -> Result<String, CaptureError> {
        let mut c = self.psql(db);
        for (k, v) in vars {
            c.arg("-v").arg(format!("{k}={v}"));
        }
        c.arg("-c").arg(sql);
        let out = checked("psql", c.output())?;
        Ok(String::from_utf8_lossy(&out.stdout).trim().to_string())
    }

    /// Run the SQL file `text` on `db` through psql's stdin.
    pub fn sql_file(
        &self,
        db: &str,
        text: &str,
        vars: &[(&str, String)],
    ) -> Result<(), CaptureError> {
        use std::io::Write;
        let mut c = self.psql(db);
        for (k, v) in vars {
            c.arg("-v").arg(format!("{k}={v}"));
        }
        c.stdin(Stdio::piped())
            .stdout(Stdio::null())
            .stderr(Stdio::piped());
        let mut child = c.spawn().map_err(|source| CaptureError::Spawn {
            program: "psql".into(),
            source,
        })?;
        if let Some(mut stdin) = child.stdin.take() {
            let _ = stdin.write_all(text.as_bytes());
        }
        checked("psql", child.wait_with_output())?;
        Ok(())
    }
}

impl Drop for Cluster {
    fn drop(&mut self) {
        let data = self.data();
        if let Ok(mut r) = RUNNING.lock() {
            r.retain(|(d, _, _)| *d != data);
        }
        stop(&self.bin_dir.join("pg_ctl"), self.user.as_deref(), &data);
    }
}

/// A finished command's output, or an error with its stderr.
pub fn checked(program: &str, out: std::io::Result<Output>) -> Result<Output, CaptureError> {
    let out = out.map_err(|source| CaptureError::Spawn {
        program: program.into(),
        source,
    })?;
    if !out.status.success() {
        let stderr = String::from_utf8_lossy(&out.stderr);
        let tail: String = stderr.lines().rev().take(5).collect::<Vec<_>>().join(" | ");
        return Err(CaptureError::Failed {
            program: program.into(),
            status: out.status.to_string(),
            stderr: tail,
        });
    }
    Ok(out)
}

fn chown_to(dir: &Path, user: &str) -> Result<(), CaptureError> {
    let out = checked("id", Command::new("id").args(["-u", user]).output()).map_err(|_| {
        CaptureError::Cluster(format!(
            "user `{user}` does not exist: PostgreSQL refuses to run as root, so create it (`useradd --system {user}`, done by scripts/setup-pg) or pass --pg-user"
        ))
    })?;
    let uid: u32 = String::from_utf8_lossy(&out.stdout)
        .trim()
        .parse()
        .map_err(|_| CaptureError::Cluster(format!("`id -u {user}` printed no uid")))?;
    std::os::unix::fs::chown(dir, Some(uid), None).map_err(|source| CaptureError::Io {
        what: format!("chown {} to {user}", dir.display()),
        source,
    })
}

/// The uid of `user` (the probes filter on it).
pub fn uid_of(user: Option<&str>) -> Result<u32, CaptureError> {
    match user {
        // SAFETY: getuid has no preconditions.
        None => Ok(unsafe { libc::getuid() }),
        Some(u) => {
            let out = checked("id", Command::new("id").args(["-u", u]).output())?;
            String::from_utf8_lossy(&out.stdout)
                .trim()
                .parse()
                .map_err(|_| CaptureError::Cluster(format!("`id -u {u}` printed no uid")))
        }
    }
}
