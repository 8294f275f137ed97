//! `flashlab sweep SPEC --out FILE.jsonl`: every run of a spec (`spec`), on `--jobs` local
//! worker threads or (`--ray`) as Ray tasks through the Python package, each row appended to a
//! JSON-lines file as its run finishes (`results`), then a summary table. A sweep resumes from
//! its file: finished runs are not run again.

pub mod results;
pub mod spec;

use crate::progress::Progress;
use anyhow::{bail, Context, Result};
use clap::Args;
use lab::Table;
use results::Finished;
use serde_json::{json, Map, Value};
use spec::{Run, Spec};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::mpsc;

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
    run_local(&plan, &a.out, jobs, !a.quiet)?;
    print!(
        "{}",
        summary(&plan.spec, &plan.runs, &results::read(&a.out)?, &a.out)
    );
    Ok(())
}

/// A sweep's runs and which of them its results file still lacks.
pub struct Plan {
    pub spec: Spec,
    pub runs: Vec<Run>,
    /// Indices into `runs` of the runs to run.
    pub pending: Vec<usize>,
}

impl Plan {
    pub fn new(spec: Spec, out: &Path, retry_failed: bool) -> Result<Plan> {
        let runs = spec.plan()?;
        let finished = results::read(out)?;
        let pending = (0..runs.len())
            .filter(|&i| !finished.done(&runs[i], retry_failed))
            .collect();
        Ok(Plan {
            spec,
            runs,
            pending,
        })
    }

    pub fn headline(&self, out: &Path) -> String {
        let n = self.runs.len();
        format!(
            "sweep {}: {n} runs, {} finished in {}, {} to run",
            self.spec.name,
            n - self.pending.len(),
            out.display(),
            self.pending.len()
        )
    }

    /// What a remote worker needs to make a pending run's row (`run_ticket`).
    pub fn ticket(&self, i: usize) -> Value {
        let run = &self.runs[i];
        json!({
            "sweep": self.spec.name,
            "command": self.spec.command.name(),
            "index": run.index,
            "vary": run.vary,
            "options": run.options,
        })
    }
}

/// The spec and run a ticket (`Plan::ticket`) describes.
fn from_ticket(ticket: &Value) -> Result<(Spec, Run)> {
    let field = |k: &str| {
        ticket
            .get(k)
            .with_context(|| format!("sweep ticket: no `{k}`"))
    };
    let command = field("command")?
        .as_str()
        .and_then(crate::api::Command::parse)
        .context("sweep ticket: `command` is not sim or buffer-sim")?;
    let spec = Spec {
        name: field("sweep")?.as_str().unwrap_or_default().to_string(),
        origin: "sweep ticket".into(),
        command,
        mode: spec::Mode::Grid,
        base: Map::new(),
        vary: Vec::new(),
        seeds: None,
        summary: Vec::new(),
    };
    let object = |k: &str| -> Result<Map<String, Value>> {
        field(k)?
            .as_object()
            .cloned()
            .with_context(|| format!("sweep ticket: `{k}` is not an object"))
    };
    let index = field("index")?.as_u64().context("sweep ticket: `index`")? as usize;
    let run = spec.resolve(index, object("vary")?, object("options")?)?;
    Ok((spec, run))
}

/// The row of the run a ticket describes, run here: what a Ray task does.
pub fn run_ticket(ticket: &Value) -> Result<Value> {
    let (spec, run) = from_ticket(ticket)?;
    Ok(results::execute(&spec, &run))
}

/// The row of a ticket's run that could not finish at all (its Ray task failed past its
/// retries), recording `error`.
pub fn ticket_error_row(ticket: &Value, error: String) -> Result<Value> {
    let (spec, run) = from_ticket(ticket)?;
    Ok(results::row(&spec, &run, Err(error), 0.0))
}

/// Run the pending runs on `jobs` threads; the calling thread appends rows and shows progress.
pub fn run_local(plan: &Plan, out: &Path, jobs: usize, progress: bool) -> Result<()> {
    let mut file = results::Appender::open(out)?;
    let mut bar = Progress::with_unit(progress, Some(plan.pending.len() as u64), "runs");
    let next = AtomicUsize::new(0);
    let stop = AtomicBool::new(false);
    let (tx, rx) = mpsc::channel::<Value>();
    std::thread::scope(|s| -> Result<()> {
        for _ in 0..jobs.min(plan.pending.len()) {
            let tx = tx.clone();
            let (next, stop) = (&next, &stop);
            s.spawn(move || {
                while !stop.load(Ordering::Relaxed) {
                    let k = next.fetch_add(1, Ordering::Relaxed);
                    let Some(&i) = plan.pending.get(k) else {
                        break;
                    };
                    let row = results::execute(&plan.spec, &plan.runs[i]);
                    if tx.send(row).is_err() {
                        break;
                    }
                }
            });
        }
        drop(tx);
        let mut done = 0u64;
        for row in rx {
            if let Err(e) = file.append(&row) {
                stop.store(true, Ordering::Relaxed);
                return Err(e);
            }
            done += 1;
            bar.update("sweep", done);
        }
        Ok(())
    })?;
    bar.finish();
    Ok(())
}

/// The summary: one line per point (the varied options but the seed), the runs that finished
/// and failed, and the mean of each `summary` key over the point's seeds; then the failures.
pub fn summary(spec: &Spec, runs: &[Run], finished: &Finished, out: &Path) -> String {
    const MAX_LINES: usize = 50;
    let keys: Vec<&str> = spec
        .vary
        .iter()
        .map(|(k, _)| k.as_str())
        .filter(|k| *k != "seed")
        .collect();
    let mut headers: Vec<&str> = keys.clone();
    headers.extend(["runs", "failed"]);
    let means: Vec<String> = spec.summary.iter().map(|k| format!("{k} (mean)")).collect();
    headers.extend(means.iter().map(String::as_str));
    let mut groups: Vec<(String, Vec<&Run>)> = Vec::new();
    for run in runs {
        let label = point_label(run, &keys);
        match groups.iter_mut().find(|(l, _)| *l == label) {
            Some((_, g)) => g.push(run),
            None => groups.push((label, vec![run])),
        }
    }
    let (mut ok_total, mut failed_total) = (0, 0);
    let mut table = Table::new(
        format!("sweep {}: results in {}", spec.name, out.display()),
        &headers,
    );
    let mut failures = Vec::new();
    for (_, group) in &groups {
        let rows: Vec<&Value> = group
            .iter()
            .filter_map(|r| finished.rows.get(&r.config_hash))
            .collect();
        let ok: Vec<&Value> = rows
            .iter()
            .copied()
            .filter(|r| r["status"] == "ok")
            .collect();
        let failed = rows.len() - ok.len();
        ok_total += ok.len();
        failed_total += failed;
        for r in rows.iter().filter(|r| r["status"] != "ok") {
            failures.push(format!(
                "run {} ({}): {}",
                r["index"],
                point_label_of(&r["vary"]),
                r["error"].as_str().unwrap_or("?")
            ));
        }
        if table.rows.len() < MAX_LINES {
            let mut cells: Vec<String> = keys.iter().map(|k| cell(&group[0].vary[*k])).collect();
            cells.push(format!("{}/{}", ok.len(), group.len()));
            cells.push(failed.to_string());
            for k in &spec.summary {
                cells.push(mean(&ok, k).map_or("-".into(), |m| lab::report::fmt_f(m, 4)));
            }
            table.push(cells);
        }
    }
    if groups.len() > MAX_LINES {
        table.define(format!(
            "... {} more points: see {}",
            groups.len() - MAX_LINES,
            out.display()
        ));
    }
    table.define(format!(
        "{ok_total} of {} runs ok, {failed_total} failed, {} not run yet; means over each point's seeds",
        runs.len(),
        runs.len() - ok_total - failed_total
    ));
    let mut text = table.to_string();
    for f in failures.iter().take(10) {
        text.push_str(&format!("failed: {f}\n"));
    }
    if failures.len() > 10 {
        text.push_str(&format!(
            "... {} more failed runs in {}\n",
            failures.len() - 10,
            out.display()
        ));
    }
    text
}

fn cell(v: &Value) -> String {
    match v {
        Value::String(s) => s.clone(),
        other => other.to_string(),
    }
}

fn point_label(run: &Run, keys: &[&str]) -> String {
    keys.iter()
        .map(|k| format!("{k}={}", cell(&run.vary[*k])))
        .collect::<Vec<_>>()
        .join(", ")
}

fn point_label_of(vary: &Value) -> String {
    match vary.as_object() {
        Some(m) => m
            .iter()
            .map(|(k, v)| format!("{k}={}", cell(v)))
            .collect::<Vec<_>>()
            .join(", "),
        None => String::new(),
    }
}

/// The mean of result key `key` (a dotted path into nested objects) over `rows`, if any has it.
fn mean(rows: &[&Value], key: &str) -> Option<f64> {
    let xs: Vec<f64> = rows
        .iter()
        .filter_map(|r| {
            key.split('.')
                .try_fold(&r["result"], |v, k| v.get(k))
                .and_then(Value::as_f64)
        })
        .collect();
    (!xs.is_empty()).then(|| xs.iter().sum::<f64>() / xs.len() as f64)
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
    // SAFETY: prctl is async-signal-safe; the closure allocates nothing.
    unsafe {
        std::os::unix::process::CommandExt::pre_exec(&mut cmd, || {
            if libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL) != 0 {
                return Err(std::io::Error::last_os_error());
            }
            Ok(())
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
