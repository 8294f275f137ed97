//! `reproduce all`: every registered experiment in turn, past failures (a failed experiment is
//! recorded with its error), into a report directory: `results.json` ([`Results`], saved after
//! each experiment), one CSV per text table and `index.html`. The caller (the CLI) shows the
//! progress through [`Progress`] and prints the outcome. Also provenance (machine, commit,
//! command line) and re-rendering a saved directory ([`render_dir`]).

use super::page;
use super::results::{ExperimentResult, Machine, Results, RunMeta, Status, FORMAT};
use crate::devices::{DeviceChoice, DeviceKind};
use crate::papers::Experiment;
use crate::parallel;
use crate::report::ProgressSink;
use crate::{Output, ReproduceOptions};
use anyhow::{Context, Result};
use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::time::{Instant, SystemTime};

/// The report directory when `--out` is absent.
pub const DEFAULT_OUT: &str = "flashlab-report";

/// What `reproduce all` was asked, beyond each experiment's options.
#[derive(Clone, Debug, Default)]
pub struct AllSpec {
    /// The report directory.
    pub out: PathBuf,
    /// `--device`, `--preset`, `--dir`, `--allow-memory-fs` as given (for the re-run commands
    /// and the provenance).
    pub device: Option<String>,
    pub preset: Option<String>,
    pub dir: Option<PathBuf>,
    pub allow_memory_fs: bool,
    /// The command line that made the run, shell-quoted.
    pub command_line: String,
}

/// How the caller follows the run.
pub trait Progress {
    /// Experiment `i` (0-based) of the registry starts.
    fn start(&self, i: usize, name: &str);
    /// Where an experiment's own step lines go.
    fn sink(&self, name: &'static str) -> ProgressSink;
    /// An experiment ended (ok or failed).
    fn done(&self, name: &str, e: &ExperimentResult);
}

/// What a finished run left: the results and the page's path.
#[derive(Debug)]
pub struct Finished {
    pub results: Results,
    pub page: PathBuf,
}

/// Run every experiment with `base` options (scale, seed, device) and write the report.
///
/// Experiments run side by side within `base.jobs` (one budget with the configurations each
/// runs in parallel inside) unless a real file is among the devices: wall-clock timings on a
/// file then run with nothing else beside them, so experiments go one at a time. Results and
/// their order do not depend on it; `results.json` is saved as each experiment ends.
pub fn run(
    spec: &AllSpec,
    base: &ReproduceOptions,
    progress: &(dyn Progress + Sync),
) -> Result<Finished> {
    let out = &spec.out;
    std::fs::create_dir_all(out).with_context(|| {
        format!(
            "--out {}: cannot create the report directory",
            out.display()
        )
    })?;
    let started = SystemTime::now();
    let clock = Instant::now();
    let registry = crate::papers::REGISTRY;
    let saved = Mutex::new(Saved {
        results: Results {
            format: FORMAT.to_string(),
            run: meta(spec, base, started),
            experiments: Vec::new(),
        },
        done: (0..registry.len()).map(|_| None).collect(),
    });
    let jobs = match times_a_file(base.device) {
        true => base.jobs.resized(1),
        false => base.jobs.clone(),
    };
    parallel::try_map(&jobs, registry.iter().enumerate().collect(), |(i, e)| {
        progress.start(i, e.name);
        let opts = ReproduceOptions {
            progress_sink: Some(progress.sink(e.name)),
            ..base.clone()
        };
        let t = Instant::now();
        let outcome = run_one(e, &opts);
        if outcome.is_err() {
            // Stopped (base.jobs' cancel token), not failed: end the run, record nothing more.
            opts.check()?;
        }
        let entry = entry(e, spec, base, outcome, t.elapsed().as_secs_f64());
        progress.done(e.name, &entry);
        write_csvs(out, &entry)?;
        let mut saved = saved.lock().unwrap_or_else(|e| e.into_inner());
        saved.done[i] = Some(entry);
        // Saved after each experiment: a run cut short still leaves what it measured.
        saved.save(out, clock.elapsed().as_secs_f64())
    })?;
    let results = saved
        .into_inner()
        .unwrap_or_else(|e| e.into_inner())
        .results;
    let page = render::write_page(&page::page(&results), out)?;
    Ok(Finished { results, page })
}

/// Whether `--device` puts wall-clock timings on a real file.
fn times_a_file(device: DeviceChoice) -> bool {
    matches!(
        device,
        DeviceChoice::All | DeviceChoice::One(DeviceKind::File)
    )
}

/// The results so far of a parallel `reproduce all`: each finished experiment at its
/// registry index.
struct Saved {
    results: Results,
    done: Vec<Option<ExperimentResult>>,
}

impl Saved {
    /// `results.json` with the finished experiments, in registry order.
    fn save(&mut self, out: &Path, elapsed_seconds: f64) -> Result<()> {
        self.results.experiments = self.done.iter().flatten().cloned().collect();
        self.results.run.finished_at = rfc3339(SystemTime::now());
        self.results.run.elapsed_seconds = elapsed_seconds;
        self.results.save(out)?;
        Ok(())
    }
}

/// `flashlab report DIR`: re-render `DIR/index.html` from `DIR/results.json` alone, the claims
/// judged again from the saved rows (read back as each paper's typed rows), so a page
/// re-rendered by this version shows this version's verdicts.
pub fn render_dir(dir: &Path) -> Result<Finished, render::ReportError> {
    let mut results = Results::load(&dir.join(super::results::FILE_NAME))?;
    for r in results
        .experiments
        .iter_mut()
        .filter_map(|e| e.report.as_mut())
    {
        r.claims = crate::papers::claims_of(r);
    }
    let page = render::write_page(&page::page(&results), dir)?;
    Ok(Finished { results, page })
}

/// Run one experiment; a panic is caught and reported like an error, so the others still run.
fn run_one(e: &Experiment, opts: &ReproduceOptions) -> Result<Output, String> {
    let caught = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| (e.run)(opts)));
    match caught {
        Ok(Ok(out)) => Ok(out),
        Ok(Err(err)) => Err(super::error_chain(&err)),
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
    spec: &AllSpec,
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
        command: command_for(e, spec, base),
        status,
        error,
        elapsed_seconds,
        report,
        tables,
    }
}

/// The exact command that re-runs `e` alone with this run's options: its scale, seed and
/// device flags, and its JSON written into the run's report directory (`--out DIR` becomes
/// `--json --output DIR/NAME.json`: a single experiment writes one file, not a report).
fn command_for(e: &Experiment, spec: &AllSpec, base: &ReproduceOptions) -> String {
    let mut c = format!(
        "cargo run --release -p flashlab -- reproduce {} --scale {} --seed {}",
        e.name,
        base.scale.name(),
        base.seed
    );
    if e.takes_devices() {
        if let Some(d) = &spec.device {
            c.push_str(&format!(" --device {}", shell_quote(d)));
        }
        if let Some(p) = &spec.preset {
            c.push_str(&format!(" --preset {}", shell_quote(p)));
        }
        if let Some(d) = &spec.dir {
            c.push_str(&format!(" --dir {}", shell_quote(&d.display().to_string())));
        }
        if spec.allow_memory_fs {
            c.push_str(" --allow-memory-fs");
        }
    }
    let output = spec.out.join(format!("{}.json", e.name));
    c.push_str(&format!(
        " --json --output {}",
        shell_quote(&output.display().to_string())
    ));
    c
}

/// One CSV per text table: `EXPERIMENT-NN-title.csv`.
fn write_csvs(dir: &Path, e: &ExperimentResult) -> Result<()> {
    for (i, t) in e.tables.iter().enumerate() {
        let mut title = render::figures::slug(&t.title);
        title.truncate(60);
        let name = format!(
            "{}-{:02}-{}.csv",
            e.name,
            i + 1,
            title.trim_end_matches('-')
        );
        render::write_file(dir, &name, page::table_view(t).csv().as_bytes())?;
    }
    Ok(())
}

/// The claims of every experiment as text (the page's first table), then the counts per
/// verdict.
pub fn summary_table(results: &Results) -> String {
    let lines = page::claim_lines(&results.experiments);
    let experiments: Vec<String> = lines.iter().map(|(e, _)| e.clone()).collect();
    let claims: Vec<crate::Claim> = lines.into_iter().map(|(_, c)| c).collect();
    // The table's last line counts the verdicts.
    crate::claim::table_with(
        "Summary: each paper's headline figures, the paper's value and ours (measured by this run), with verdicts",
        &claims,
        Some(("experiment", &experiments)),
    )
    .to_string()
}

fn meta(spec: &AllSpec, base: &ReproduceOptions, started: SystemTime) -> RunMeta {
    let now = rfc3339(started);
    RunMeta {
        flashlab_version: env!("CARGO_PKG_VERSION").to_string(),
        git_commit: git_commit(),
        command_line: spec.command_line.clone(),
        seed: base.seed,
        scale: base.scale.name().to_string(),
        device: spec.device.clone().unwrap_or_else(|| "sim".into()),
        started_at: now.clone(),
        finished_at: now,
        elapsed_seconds: 0.0,
        machine: machine(spec.dir.as_deref()),
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
        device_dir_file_system: crate::devices::file_system(&device_dir)
            .unwrap_or_else(|_| "unknown".into()),
        device_dir: device_dir.display().to_string(),
    }
}

/// A word as a POSIX shell would read it back.
pub fn shell_quote(s: &str) -> String {
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
    fn a_rerun_command_keeps_the_runs_device_and_report_directory() {
        let spec = AllSpec {
            out: PathBuf::from("my report"),
            device: Some("file".into()),
            dir: Some(PathBuf::from("/mnt/ssd")),
            ..AllSpec::default()
        };
        let base = ReproduceOptions::default();
        let with_devices = crate::papers::REGISTRY
            .iter()
            .find(|e| e.takes_devices())
            .unwrap();
        let c = command_for(with_devices, &spec, &base);
        assert!(c.contains(" --device file --dir /mnt/ssd"), "{c}");
        let json = format!(" --json --output 'my report/{}.json'", with_devices.name);
        assert!(c.ends_with(&json), "{c}");
        if let Some(without) = crate::papers::REGISTRY.iter().find(|e| !e.takes_devices()) {
            let c = command_for(without, &spec, &base);
            assert!(!c.contains("--device") && c.contains("--output"), "{c}");
        }
    }

    #[test]
    fn words_are_shell_quoted_only_when_needed() {
        assert_eq!(shell_quote("--scale"), "--scale");
        assert_eq!(shell_quote("a b"), "'a b'");
        assert_eq!(shell_quote("it's"), "'it'\\''s'");
        assert_eq!(shell_quote(""), "''");
    }
}
