//! `flashlab sweep SPEC --out FILE.jsonl`: the flags, progress and output of a sweep
//! (`lab::harness::sweep`), on `--jobs` local worker threads or (`--ray`) as Ray tasks through
//! the Python package.

use crate::progress::Progress;
use anyhow::{bail, Context, Result};
use clap::Args;
use lab::harness::sweep::{results, run_local, spec::Spec, summary, Plan};
use std::path::PathBuf;

#[derive(Args, Debug)]
pub struct SweepArgs {
    /// The sweep spec, TOML (or JSON for .json): [base] options, [vary] lists or ranges
    /// {from, to, step}, `seeds = N`, `mode = "grid"|"zip"`, `command = "sim"|"buffer-sim"`.
    spec: PathBuf,
    /// The results file (JSON lines, appended as runs finish; a sweep resumes from it).
    #[arg(long, value_name = "FILE.jsonl")]
    out: PathBuf,
    /// Local worker threads, each running one single-threaded run at a time [default: 1].
    #[arg(long, value_name = "N")]
    jobs: Option<usize>,
    /// Run on Ray instead, each run a Ray task calling the Python package on a worker:
    /// ADDRESS of a running cluster (e.g. 127.0.0.1:6379), or none for `ray.init()`'s choice
    /// (RAY_ADDRESS, else a new local cluster). Give it after SPEC.
    #[arg(long, value_name = "ADDRESS", num_args = 0..=1, default_missing_value = "")]
    ray: Option<String>,
    /// The Python with the flashlab package, for --ray [default: $FLASHLAB_PYTHON, else python3].
    #[arg(long, value_name = "PATH")]
    python: Option<PathBuf>,
    /// Run again the runs the file records as failed.
    #[arg(long)]
    retry_failed: bool,
    /// Print the plan (runs, finished, to run) and stop.
    #[arg(long)]
    dry_run: bool,
    /// No progress on stderr.
    #[arg(long)]
    quiet: bool,
}

pub fn main(a: &SweepArgs) -> Result<()> {
    if let Some(address) = &a.ray {
        if a.jobs.is_some() {
            bail!("--jobs sets local workers; with --ray the cluster's CPUs decide how many runs go at once");
        }
        if !a.dry_run {
            return run_on_ray(a, address);
        }
    }
    let jobs = a.jobs.unwrap_or(1);
    if jobs == 0 {
        bail!("--jobs 0: give at least one worker");
    }
    let spec = Spec::from_file(&a.spec)?;
    let plan = Plan::new(spec, &a.out, a.retry_failed)?;
    eprintln!("{}", plan.headline(&a.out));
    if a.dry_run {
        return Ok(());
    }
    let _one_sweep = lock_out(&a.out)?;
    let mut bar = Progress::with_unit(!a.quiet, Some(plan.pending.len() as u64), "runs");
    run_local(&plan, &a.out, jobs, &mut |done| bar.update("sweep", done))?;
    bar.finish();
    let text = summary(&plan.spec, &plan.runs, &results::read(&a.out)?, &a.out);
    crate::output::emit(None, &text)?;
    Ok(())
}

/// One local sweep per results file at a time: two would run every run twice and append
/// both rows. The lock (`flock`, released when the sweep ends or dies) is held by the
/// returned handle.
fn lock_out(out: &std::path::Path) -> Result<std::fs::File> {
    use std::os::unix::io::AsRawFd;
    let f = std::fs::OpenOptions::new()
        .append(true)
        .create(true)
        .open(out)
        .with_context(|| format!("--out {}", out.display()))?;
    // SAFETY: plain syscall on an fd we own.
    if unsafe { libc::flock(f.as_raw_fd(), libc::LOCK_EX | libc::LOCK_NB) } != 0 {
        bail!(
            "--out {}: another sweep is writing this file now; wait for it to end (a sweep resumes from the file), or give another --out",
            out.display()
        );
    }
    Ok(f)
}

/// `--ray`: the Python package's driver (`python -m flashlab.ray_sweep`) runs the sweep.
/// How long `--ray HOST:PORT` may take to accept a connection.
const RAY_CONNECT_TIMEOUT: std::time::Duration = std::time::Duration::from_secs(10);

/// A `--ray HOST:PORT` that accepts no TCP connection within [`RAY_CONNECT_TIMEOUT`] is an
/// error at once (Ray itself retries for minutes in silence). Other forms (`ray://..`,
/// `auto`, none) are left to Ray.
fn check_reachable(address: &str) -> Result<()> {
    use std::net::ToSocketAddrs;
    let Ok(addrs) = address.to_socket_addrs() else {
        return Ok(());
    };
    let mut last = None;
    for addr in addrs {
        match std::net::TcpStream::connect_timeout(&addr, RAY_CONNECT_TIMEOUT) {
            Ok(_) => return Ok(()),
            Err(e) => last = Some(e),
        }
    }
    match last {
        None => Ok(()),
        Some(e) => bail!(
            "--ray {address}: no Ray cluster answers there (connecting timed out after {} s or was refused: {e}); start one (`ray start --head`) or give its address",
            RAY_CONNECT_TIMEOUT.as_secs()
        ),
    }
}

fn run_on_ray(a: &SweepArgs, address: &str) -> Result<()> {
    check_reachable(address)?;
    let python = a
        .python
        .clone()
        .or_else(|| std::env::var_os("FLASHLAB_PYTHON").map(PathBuf::from))
        .unwrap_or_else(|| PathBuf::from("python3"));
    let py = python.display();
    let import = std::process::Command::new(&python)
        .args(["-c", "import flashlab"])
        .stderr(std::process::Stdio::null())
        .status()
        .with_context(|| format!("--ray runs the sweep from Python, but {py} could not be started (point --python or FLASHLAB_PYTHON at the Python with flashlab installed)"))?;
    if !import.success() {
        bail!("--ray runs the sweep from Python, but {py} cannot import the flashlab package: pip install flashlab[ray] (from this repository: pip install '.[ray]'), or point --python / FLASHLAB_PYTHON at the Python that has it");
    }
    let mut cmd = std::process::Command::new(&python);
    // The driver dies with flashlab (killed or crashed), never left running on its own.
    // A parent that died between fork and prctl sends no signal: then the parent pid seen
    // by the child is no longer flashlab's, and the child ends before exec.
    let parent = std::process::id();
    // SAFETY: prctl, getppid and sigprocmask are async-signal-safe; nothing is allocated.
    unsafe {
        std::os::unix::process::CommandExt::pre_exec(&mut cmd, move || {
            if libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL) != 0 {
                return Err(std::io::Error::last_os_error());
            }
            if libc::getppid() as u32 != parent {
                libc::_exit(1);
            }
            crate::signals::unblock_in_child()
        });
    }
    cmd.args(["-m", "flashlab.ray_sweep"])
        .arg(&a.spec)
        .arg("--out")
        .arg(&a.out);
    if !address.is_empty() {
        cmd.args(["--address", address]);
    }
    if a.retry_failed {
        cmd.arg("--retry-failed");
    }
    if a.quiet {
        cmd.arg("--quiet");
    }
    let status = cmd
        .status()
        .with_context(|| format!("--ray: running {py} -m flashlab.ray_sweep"))?;
    if !status.success() {
        // The driver has printed its error (e.g. that Ray is missing and how to install it):
        // pass its exit code on without a second message.
        std::process::exit(status.code().unwrap_or(2));
    }
    Ok(())
}
