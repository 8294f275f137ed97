//! `flashlab reproduce all`: every registered experiment in turn under one progress display,
//! past failures (a failed experiment is recorded with its error), into a report directory:
//! `results.json` (`report::Results`), one CSV per text table, and `index.html`.
//! Also `flashlab report DIR` (re-render the page from `results.json` alone).

use crate::reproduce::ReproduceArgs;
use anyhow::{bail, Context, Result};
use clap::Args;
use indicatif::{ProgressBar, ProgressStyle};
use lab::report::ProgressSink;
use lab::{Experiment, Output, ReproduceOptions};
use report::{ExperimentResult, Machine, Results, RunMeta, Status};
use std::io::IsTerminal;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Instant, SystemTime};

/// The report directory when `--out` is absent.
pub const DEFAULT_OUT: &str = "flashlab-report";

/// Run every experiment with `base` options (scale, seed, device) and write the report.
pub fn run(a: &ReproduceArgs, base: ReproduceOptions) -> Result<()> {
    let out = a.out.clone().unwrap_or_else(|| PathBuf::from(DEFAULT_OUT));
    std::fs::create_dir_all(&out).with_context(|| {
        format!(
            "--out {}: cannot create the report directory",
            out.display()
        )
    })?;
    let started = SystemTime::now();
    let clock = Instant::now();
    let mut results = Results {
        format: report::FORMAT.to_string(),
        run: meta(a, &base, started),
        experiments: Vec::new(),
    };
    let display = Display::new(!a.quiet, lab::EXPERIMENTS.len());
    for (i, e) in lab::EXPERIMENTS.iter().enumerate() {
        display.start(i, e.name);
        let opts = ReproduceOptions {
            progress: !a.quiet,
            progress_sink: Some(display.sink(e.name)),
            ..base.clone()
        };
        let t = Instant::now();
        let outcome = run_one(e, &opts);
        let entry = entry(e, a, &base, outcome, t.elapsed().as_secs_f64());
        display.done(e.name, &entry);
        write_csvs(&out, &entry)?;
        results.experiments.push(entry);
        // Saved after each experiment: a run cut short still leaves what it measured.
        results.run.finished_at = rfc3339(SystemTime::now());
        results.run.elapsed_seconds = clock.elapsed().as_secs_f64();
        results.save(&out.join("results.json"))?;
    }
    display.finish();
    let page = report::write_page(&results, &out)?;
    print!("{}", summary_table(&results));
    println!(
        "\nreport: {} (open it in a browser; `flashlab report {}` re-renders it from results.json)",
        page.display(),
        out.display()
    );
    let failed: Vec<&str> = results
        .experiments
        .iter()
        .filter(|e| e.status == Status::Failed)
        .map(|e| e.name.as_str())
        .collect();
    if !failed.is_empty() {
        bail!(
            "{} of {} experiments failed ({}); their errors are in {}",
            failed.len(),
            results.experiments.len(),
            failed.join(", "),
            page.display()
        );
    }
    Ok(())
}

/// Run one experiment; a panic is caught and reported like an error, so the others still run.
fn run_one(e: &Experiment, opts: &ReproduceOptions) -> Result<Output, String> {
    let caught = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| (e.run)(opts)));
    match caught {
        Ok(Ok(out)) => Ok(out),
        Ok(Err(err)) => Err(crate::error_chain(&err)),
        Err(panic) => {
            let msg = panic
                .downcast_ref::<String>()
                .cloned()
                .or_else(|| panic.downcast_ref::<&str>().map(|s| s.to_string()))
                .unwrap_or_else(|| "unknown panic".into());
            Err(format!("panicked: {msg}"))
        }
    }
}

fn entry(
    e: &Experiment,
    a: &ReproduceArgs,
    base: &ReproduceOptions,
    outcome: Result<Output, String>,
    elapsed_seconds: f64,
) -> ExperimentResult {
    let (status, error, report, tables) = match outcome {
        Ok(out) => (Status::Ok, None, Some(out.report), out.tables),
        Err(msg) => (Status::Failed, Some(msg), None, Vec::new()),
    };
    ExperimentResult {
        name: e.name.to_string(),
        paper: e.paper.to_string(),
        about: e.about.to_string(),
        command: command_for(e, a, base),
        status,
        error,
        elapsed_seconds,
        report,
        tables,
    }
}

/// The exact command that re-runs `e` alone with this run's options.
fn command_for(e: &Experiment, a: &ReproduceArgs, base: &ReproduceOptions) -> String {
    let mut c = format!(
        "cargo run --release -p flashlab -- reproduce {} --scale {} --seed {}",
        e.name,
        base.scale.name(),
        base.seed
    );
    if e.takes_devices() {
        if let Some(d) = &a.device {
            c.push_str(&format!(" --device {}", shell_quote(d)));
        }
        if let Some(p) = &a.preset {
            c.push_str(&format!(" --preset {}", shell_quote(p)));
        }
        if let Some(d) = &a.dir {
            c.push_str(&format!(" --dir {}", shell_quote(&d.display().to_string())));
        }
        if a.allow_memory_fs {
            c.push_str(" --allow-memory-fs");
        }
    }
    c
}

/// One CSV per text table: `EXPERIMENT-NN-title.csv`.
fn write_csvs(dir: &Path, e: &ExperimentResult) -> Result<()> {
    for (i, t) in e.tables.iter().enumerate() {
        let mut title = report::figures::slug(&t.title);
        title.truncate(60);
        let name = format!(
            "{}-{:02}-{}.csv",
            e.name,
            i + 1,
            title.trim_end_matches('-')
        );
        let path = dir.join(name);
        report::write_file(&path, crate::output::table_csv(t).as_bytes())?;
    }
    Ok(())
}

/// The claims of every experiment as text (the page's first table), then the counts per
/// verdict.
pub fn summary_table(results: &Results) -> String {
    let lines = report::summary::all_lines(&results.experiments);
    let claims: Vec<lab::Claim> = lines.iter().map(|l| l.claim.clone()).collect();
    let experiments: Vec<String> = lines.iter().map(|l| l.experiment.clone()).collect();
    // The table's last line counts the verdicts.
    lab::claim::table_with(
        "Summary: each paper's headline figures, the paper's value and ours (measured by this run), with verdicts",
        &claims,
        Some(("experiment", &experiments)),
    )
    .to_string()
}

/// One progress display for the whole run: a bar on a terminal, lines otherwise.
struct Display {
    bar: Option<ProgressBar>,
    lines: bool,
    total: usize,
    start: Instant,
}

impl Display {
    fn new(enabled: bool, total: usize) -> Display {
        let terminal = std::io::stderr().is_terminal();
        let bar = (enabled && terminal).then(|| {
            let b = ProgressBar::new(total as u64);
            b.set_style(
                ProgressStyle::with_template(
                    "[{elapsed_precise}] {bar:20} {pos}/{len} experiments (ETA {eta}) {prefix}: {wide_msg}",
                )
                .unwrap_or_else(|_| ProgressStyle::default_bar()),
            );
            b.enable_steady_tick(std::time::Duration::from_millis(500));
            b
        });
        Display {
            bar,
            lines: enabled && !terminal,
            total,
            start: Instant::now(),
        }
    }

    fn line(&self, msg: &str) {
        eprintln!("[{:7.1}s] {msg}", self.start.elapsed().as_secs_f64());
    }

    fn start(&self, i: usize, name: &str) {
        if let Some(b) = &self.bar {
            b.set_position(i as u64);
            b.set_prefix(name.to_string());
            b.set_message("starting");
        } else if self.lines {
            self.line(&format!("experiment {}/{}: {name}", i + 1, self.total));
        }
    }

    /// Where an experiment's own step lines go.
    fn sink(&self, name: &'static str) -> ProgressSink {
        match &self.bar {
            Some(b) => {
                let b = b.clone();
                ProgressSink(Arc::new(move |msg: &str| b.set_message(msg.to_string())))
            }
            None => {
                let start = self.start;
                ProgressSink(Arc::new(move |msg: &str| {
                    eprintln!("[{:7.1}s] {name}: {msg}", start.elapsed().as_secs_f64())
                }))
            }
        }
    }

    fn done(&self, name: &str, e: &ExperimentResult) {
        let what = match (&e.status, &e.error) {
            (Status::Failed, Some(err)) => {
                format!("{name} FAILED after {:.1} s: {err}", e.elapsed_seconds)
            }
            _ => format!("{name} done in {:.1} s", e.elapsed_seconds),
        };
        match &self.bar {
            Some(b) => b.println(what),
            None if self.lines => self.line(&what),
            None => {}
        }
    }

    fn finish(&self) {
        if let Some(b) = &self.bar {
            b.finish_and_clear();
        }
    }
}

fn meta(a: &ReproduceArgs, base: &ReproduceOptions, started: SystemTime) -> RunMeta {
    let now = rfc3339(started);
    RunMeta {
        flashlab_version: env!("CARGO_PKG_VERSION").to_string(),
        git_commit: git_commit(),
        command_line: std::env::args()
            .map(|s| shell_quote(&s))
            .collect::<Vec<_>>()
            .join(" "),
        seed: base.seed,
        scale: base.scale.name().to_string(),
        device: a.device.clone().unwrap_or_else(|| "sim".into()),
        started_at: now.clone(),
        finished_at: now,
        elapsed_seconds: 0.0,
        machine: machine(a.dir.as_deref()),
    }
}

/// The commit the binary was built from: `FLASHLAB_GIT_COMMIT` at build time, else
/// `git rev-parse HEAD` in the source tree it was built from (`-dirty` with uncommitted
/// changes), else `unknown`.
fn git_commit() -> String {
    if let Some(c) = option_env!("FLASHLAB_GIT_COMMIT") {
        return c.to_string();
    }
    let src = env!("CARGO_MANIFEST_DIR");
    let git = |args: &[&str]| {
        std::process::Command::new("git")
            .arg("-C")
            .arg(src)
            .args(args)
            .output()
            .ok()
            .filter(|o| o.status.success())
            .map(|o| String::from_utf8_lossy(&o.stdout).trim().to_string())
    };
    match git(&["rev-parse", "HEAD"]) {
        Some(head) if !head.is_empty() => {
            let dirty = git(&["status", "--porcelain", "--untracked-files=no"])
                .is_some_and(|s| !s.is_empty());
            if dirty {
                format!("{head}-dirty")
            } else {
                head
            }
        }
        _ => "unknown".into(),
    }
}

fn machine(dir: Option<&Path>) -> Machine {
    let read = |p: &str| std::fs::read_to_string(p).unwrap_or_default();
    let cpuinfo = read("/proc/cpuinfo");
    let cpu_model = cpuinfo
        .lines()
        .find(|l| l.starts_with("model name"))
        .and_then(|l| l.split_once(':'))
        .map(|(_, v)| v.trim().to_string())
        .unwrap_or_else(|| "unknown".into());
    let memory_bytes = read("/proc/meminfo")
        .lines()
        .find(|l| l.starts_with("MemTotal:"))
        .and_then(|l| l.split_whitespace().nth(1))
        .and_then(|kb| kb.parse::<u64>().ok())
        .map(|kb| kb * 1024);
    let kernel = match read("/proc/sys/kernel/osrelease").trim() {
        "" => std::env::consts::OS.to_string(),
        r => format!("{} {r}", std::env::consts::OS),
    };
    let device_dir = dir
        .map(Path::to_path_buf)
        .or_else(|| std::env::current_dir().ok())
        .unwrap_or_else(|| PathBuf::from("."));
    Machine {
        cpu_model,
        cores: std::thread::available_parallelism().map_or(1, |n| n.get() as u32),
        memory_bytes,
        kernel,
        device_dir_file_system: lab::devices::file_system(&device_dir)
            .unwrap_or_else(|_| "unknown".into()),
        device_dir: device_dir.display().to_string(),
    }
}

/// A word as a POSIX shell would read it back.
fn shell_quote(s: &str) -> String {
    let plain = !s.is_empty()
        && s.chars()
            .all(|c| c.is_ascii_alphanumeric() || "-_./=:,+@%".contains(c));
    if plain {
        s.to_string()
    } else {
        format!("'{}'", s.replace('\'', "'\\''"))
    }
}

/// RFC 3339 (UTC, seconds) of `t`.
pub fn rfc3339(t: SystemTime) -> String {
    let secs = t
        .duration_since(SystemTime::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs()) as i64;
    let (days, rem) = (secs.div_euclid(86_400), secs.rem_euclid(86_400));
    // Howard Hinnant's civil_from_days.
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = yoe + era * 400 + i64::from(month <= 2);
    format!(
        "{year:04}-{month:02}-{day:02}T{:02}:{:02}:{:02}Z",
        rem / 3600,
        rem % 3600 / 60,
        rem % 60
    )
}

#[derive(Args, Debug)]
pub struct ReportArgs {
    /// A directory written by `flashlab reproduce all` (it holds results.json).
    #[arg(default_value = DEFAULT_OUT)]
    dir: PathBuf,
}

/// `flashlab report DIR`: re-render DIR/index.html from DIR/results.json.
pub fn report(a: &ReportArgs) -> Result<()> {
    let mut results = Results::load(&a.dir.join("results.json"))?;
    // Claims judged again from the saved rows, read back as each paper's typed rows, so a
    // page re-rendered by this version shows this version's verdicts.
    for r in results
        .experiments
        .iter_mut()
        .filter_map(|e| e.report.as_mut())
    {
        r.claims = lab::papers::claims_of(r);
    }
    let page = report::write_page(&results, &a.dir)?;
    print!("{}", summary_table(&results));
    println!("\nreport: {}", page.display());
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    #[test]
    fn dates_are_rfc3339_utc() {
        let t = |s: u64| rfc3339(SystemTime::UNIX_EPOCH + Duration::from_secs(s));
        assert_eq!(t(0), "1970-01-01T00:00:00Z");
        assert_eq!(t(951_782_400), "2000-02-29T00:00:00Z");
        assert_eq!(t(1_795_000_000), "2026-11-18T11:06:40Z");
    }

    #[test]
    fn words_are_shell_quoted_only_when_needed() {
        assert_eq!(shell_quote("--scale"), "--scale");
        assert_eq!(shell_quote("a b"), "'a b'");
        assert_eq!(shell_quote("it's"), "'it'\\''s'");
        assert_eq!(shell_quote(""), "''");
    }
}
