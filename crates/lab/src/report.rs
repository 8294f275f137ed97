//! The results format shared by every `flashlab reproduce NAME` and `bench` command, and a
//! plain-text table renderer.

use crate::claim::Claim;
use crate::devices::{DeviceChoice, DeviceKind};
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};
use std::fmt;
use std::path::PathBuf;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};

/// One result row: flat keys, numbers and strings.
pub type Row = Map<String, Value>;

/// Build a row from `(key, value)` pairs: `row([("scheme", "bast".into()), ("erases", 12.into())])`.
pub fn row<const N: usize>(pairs: [(&str, Value); N]) -> Row {
    pairs.into_iter().map(|(k, v)| (k.to_string(), v)).collect()
}

/// `{"experiment", "scale", "seed", "config", "rows", "paper", "claims", "notes"}` — see ARCHITECTURE.md.
/// Deserializable so that `flashlab report` can re-render a saved `results.json`.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct Report {
    pub experiment: String,
    pub scale: String,
    pub seed: u64,
    pub config: Value,
    /// Only what this run measured.
    pub rows: Vec<Row>,
    /// The paper's figures, for comparison (never mixed into `rows`).
    pub paper: Vec<Row>,
    /// The paper's headline figures beside ours, each with a verdict (`crate::claim`);
    /// absent in files written before claims existed.
    #[serde(default)]
    pub claims: Vec<Claim>,
    pub notes: Vec<String>,
    /// Curves measured over the run, apart from the summary rows (e.g. `multistream`'s WAF
    /// over time, one series per policy); absent from the JSON when empty.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub series: Vec<Series>,
}

/// One measured curve: `points` are `(x, y)` pairs; `x` and `y` name the quantities
/// (`"host_writes_x_capacity"`, `"waf"`), `label` the line (e.g. a policy name), `name` the
/// figure it belongs to (`"waf_over_time"`).
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
pub struct Series {
    pub name: String,
    pub label: String,
    pub x: String,
    pub y: String,
    pub points: Vec<(f64, f64)>,
}

impl Report {
    pub fn new(experiment: &str, opts: &ReproduceOptions, config: Value) -> Report {
        Report {
            experiment: experiment.to_string(),
            scale: opts.scale.name().to_string(),
            seed: opts.seed,
            config,
            rows: Vec::new(),
            paper: Vec::new(),
            claims: Vec::new(),
            notes: Vec::new(),
            series: Vec::new(),
        }
    }
    /// Set `rows` from typed rows (each a serde struct of flat keys).
    pub fn set_rows<T: Serialize>(&mut self, rows: &[T]) {
        self.rows = rows
            .iter()
            .map(|r| match serde_json::to_value(r) {
                Ok(Value::Object(m)) => m,
                other => panic!("a result row serializes to a flat object, got {other:?}"),
            })
            .collect();
    }

    /// `rows` read back as typed rows (tests and tools use the experiment's row struct).
    pub fn rows_as<T: serde::de::DeserializeOwned>(&self) -> Result<Vec<T>, serde_json::Error> {
        self.rows
            .iter()
            .map(|r| serde_json::from_value(Value::Object(r.clone())))
            .collect()
    }

    pub fn to_json(&self) -> String {
        serde_json::to_string(self).expect("reports always serialize")
    }
}

/// What an experiment hands back to the CLI.
#[derive(Clone, Debug)]
pub struct Output {
    pub report: Report,
    /// Human-readable tables, in print order (paper columns labelled as the paper's).
    pub tables: Vec<Table>,
}

impl fmt::Display for Output {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        writeln!(
            f,
            "experiment: {} (scale {}, seed {})",
            self.report.experiment, self.report.scale, self.report.seed
        )?;
        for t in &self.tables {
            writeln!(f)?;
            write!(f, "{t}")?;
        }
        if !self.report.claims.is_empty() {
            let title = format!(
                "Claims: {}'s headline figures beside ours (verdicts: {})",
                self.report.claims[0].paper,
                crate::claim::counts_line(&self.report.claims)
            );
            writeln!(f)?;
            write!(f, "{}", crate::claim::table(&title, &self.report.claims))?;
        }
        if !self.report.notes.is_empty() {
            writeln!(f, "\nnotes:")?;
            for n in &self.report.notes {
                writeln!(f, "  - {n}")?;
            }
        }
        Ok(())
    }
}

/// How big a reproduction runs.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Scale {
    /// Minutes on a laptop; same ratios as the paper where possible (CI-sized checks).
    Quick,
    /// The paper's sizes (or as close as this machine allows; the experiment says).
    Paper,
}

impl Scale {
    pub fn name(self) -> &'static str {
        match self {
            Scale::Quick => "quick",
            Scale::Paper => "paper",
        }
    }
    pub fn parse(s: &str) -> Option<Scale> {
        match s {
            "quick" => Some(Scale::Quick),
            "paper" | "full" => Some(Scale::Paper),
            _ => None,
        }
    }
}

/// Options common to every reproduction.
#[derive(Clone, Debug)]
pub struct ReproduceOptions {
    pub scale: Scale,
    pub seed: u64,
    /// `file`, `sim`, `hdd` or `all` (experiments that run on devices; each refuses a device
    /// it does not support).
    pub device: DeviceChoice,
    /// Directory for real files (`--device file`); a temporary directory when absent.
    pub dir: Option<PathBuf>,
    /// SSD preset for `--device sim` (`--preset`); `None`: the experiment's paper's preset
    /// (see [`ReproduceOptions::preset_or`]).
    pub preset: Option<String>,
    /// Print progress lines to stderr.
    pub progress: bool,
    /// Where progress lines go instead of stderr (e.g. one display for `reproduce all`).
    pub progress_sink: Option<ProgressSink>,
    /// Progress as numbers, `(phase, steps_done, steps_total)`, for a bar (Python's); called
    /// whether or not `progress` prints lines. The run's stop flag is `jobs`' ([`Self::check`]).
    pub progress_counts: Option<ProgressCounts>,
    /// Run `--device file` timings on a RAM file system (tmpfs, ramfs) anyway.
    pub allow_memory_fs: bool,
    /// `ext-buffer`: a page-reference trace instead of the TPC-C-like generator, its format
    /// (`buffer-sim`'s names; `text` when absent), and `--engine` (also run the engine's pool).
    pub trace: Option<PathBuf>,
    pub trace_format: Option<String>,
    pub engine: bool,
    /// `multistream`: the simulated SSD's logical bytes (`None`: the scale's default) and its
    /// streams (`None`: the experiment's default).
    pub capacity: Option<u64>,
    pub streams: Option<u16>,
    /// `multistream`: a user's stream map (TOML), run beside the named policies.
    pub stream_map: Option<PathBuf>,
    /// How many independent runs (configurations, experiments) may work at once, one budget
    /// shared by every level (`--jobs`; default: the cores). Results do not depend on it.
    pub jobs: crate::parallel::Jobs,
    /// `async-scan` on a file: the batched scan's reads through io_uring fixed buffers and a
    /// fixed file (`--io-uring-fixed on`, the default) or plain reads (`off`).
    pub io_uring_fixed: bool,
    /// `async-scan` on a file: how the device's io_uring is set up (`--io-uring-setup`;
    /// default fio's own setup, `DeferTaskrun`, so the scans and the read ceiling read as fio
    /// reads: docs/papers.md, P2).
    pub io_uring_setup: blockdev::RingSetup,
    /// Whether `io_uring_setup` was asked for (`--io-uring-setup`): a setup the kernel refuses
    /// is then an error; the default falls back to `plain` with a note instead.
    pub io_uring_setup_asked: bool,
    /// `async-scan` on a file: the batched scan's reads kept in flight by a reader thread
    /// (`--read-thread on`) or by the scan's own thread (`off`, the default: the thread
    /// measured no faster, docs/results/2026-11-29-p2-file-9.md): blockdev's
    /// `FileOptions::read_thread`.
    pub read_thread: bool,
    /// Page images on transparent huge pages (`--huge-pages on`, the default) or plain pages,
    /// process-wide (blockdev's `set_huge_pages`; applied by [`Self::apply_memory`] as a run
    /// starts): docs/results/2026-11-29-p2-file-10.md.
    pub huge_pages: bool,
}

impl Default for ReproduceOptions {
    fn default() -> Self {
        ReproduceOptions {
            scale: Scale::Quick,
            seed: 1,
            device: DeviceChoice::One(DeviceKind::Sim),
            dir: None,
            preset: None,
            progress: false,
            progress_sink: None,
            progress_counts: None,
            allow_memory_fs: false,
            trace: None,
            trace_format: None,
            engine: false,
            capacity: None,
            streams: None,
            stream_map: None,
            jobs: crate::parallel::Jobs::cores(),
            io_uring_fixed: true,
            io_uring_setup: blockdev::RingSetup::DeferTaskrun,
            io_uring_setup_asked: false,
            read_thread: false,
            huge_pages: true,
        }
    }
}

impl ReproduceOptions {
    /// Set what these options ask of the whole process before a run: page images on huge
    /// pages or plain ones (`huge_pages`).
    pub fn apply_memory(&self) {
        blockdev::set_huge_pages(self.huge_pages);
    }

    /// What a file run's JSON says of its page images' memory: `huge_pages` (`on`, `off`) and
    /// `anon_huge_kib`, the process's memory the kernel held on huge pages when the run ended
    /// (absent where the kernel does not say), so a run shows whether the pages were granted.
    pub fn memory_config(&self) -> Value {
        let mut m = serde_json::json!({ "huge_pages": if self.huge_pages { "on" } else { "off" } });
        if let Some(kib) = blockdev::anon_huge_kib() {
            m["anon_huge_kib"] = serde_json::json!(kib);
        }
        m
    }

    /// The simulated SSD preset: `--preset` if given, else the experiment's `default` (the
    /// preset calibrated to its paper's device).
    pub fn preset_or<'a>(&'a self, default: &'a str) -> &'a str {
        self.preset.as_deref().unwrap_or(default)
    }

    /// `Err(Interrupted)` once the run's stop flag (`jobs`' [`crate::Cancel`]) is set: every
    /// experiment checks it at its progress points, [`crate::parallel`] before every job.
    pub fn check(&self) -> Result<(), crate::Interrupted> {
        self.jobs.cancel().check()
    }

    /// These options stopped by `cancel` (shared by every level of the run through `jobs`).
    pub fn with_cancel(self, cancel: crate::Cancel) -> ReproduceOptions {
        ReproduceOptions {
            jobs: self.jobs.with_cancel(cancel),
            ..self
        }
    }

    /// Report `(phase, done, total)` to [`Self::progress_counts`], if any.
    pub fn count(&self, phase: &str, done: u64, total: Option<u64>) {
        if let Some(counts) = &self.progress_counts {
            (counts.0)(phase, done, total)
        }
    }

    pub fn progress(&self, msg: impl fmt::Display) {
        if !self.progress {
            return;
        }
        match &self.progress_sink {
            Some(sink) => (sink.0)(&msg.to_string()),
            None => eprintln!("[{}] {msg}", chrono_free_elapsed()),
        }
    }
}

/// A receiver of progress lines (`ReproduceOptions::progress_sink`).
#[derive(Clone)]
pub struct ProgressSink(pub std::sync::Arc<dyn Fn(&str) + Send + Sync>);

impl fmt::Debug for ProgressSink {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("ProgressSink")
    }
}

/// A receiver of progress counts `(phase, done, total)` (`ReproduceOptions::progress_counts`;
/// total None: not known). Called from whichever thread makes the progress.
#[derive(Clone)]
pub struct ProgressCounts(pub std::sync::Arc<CountsFn>);

/// `(phase, done, total)`, called from any thread of the run.
pub type CountsFn = dyn Fn(&str, u64, Option<u64>) + Send + Sync;

impl fmt::Debug for ProgressCounts {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("ProgressCounts")
    }
}

/// A run of `total` progress steps, counted as they are announced (for the ETA, timed from
/// this run's first step, so a second experiment in one process gets its own estimate).
/// Shared by the jobs of a parallel run ([`crate::parallel`]): a step counts as done when the
/// [`Step`] that [`Steps::step`] returned is dropped, so the ETA is the work still to finish
/// at the rate work has finished so far, however many run at once. Work is counted in steps,
/// or in each step's weight (its expected cost relative to the others, [`Steps::weighted`]),
/// so that running the long steps first does not inflate the early ETA. Each step started and
/// finished is also counted (`ReproduceOptions::count`, phase `steps`).
pub struct Steps<'a> {
    opts: &'a ReproduceOptions,
    started: AtomicUsize,
    finished: AtomicUsize,
    total: usize,
    /// The weights of the finished steps, and of all (`total` when every step weighs 1).
    finished_weight: AtomicU64,
    total_weight: u64,
    start: std::time::Instant,
}

impl<'a> Steps<'a> {
    pub fn new(opts: &'a ReproduceOptions, total: usize) -> Steps<'a> {
        Steps::weighted(opts, total, total as u64)
    }

    /// `total` steps whose weights ([`Steps::step_weighing`]) add up to `total_weight`.
    pub fn weighted(opts: &'a ReproduceOptions, total: usize, total_weight: u64) -> Steps<'a> {
        Steps {
            opts,
            started: AtomicUsize::new(0),
            finished: AtomicUsize::new(0),
            total,
            finished_weight: AtomicU64::new(0),
            total_weight,
            start: std::time::Instant::now(),
        }
    }

    /// Announce the next step; it is done when the returned [`Step`] is dropped (at once if
    /// the caller does not keep it: the next announcement then ends it, as in a serial run).
    pub fn step(&self, msg: impl fmt::Display) -> Step<'_, 'a> {
        self.step_weighing(msg, 1)
    }

    /// [`Steps::step`] for a step of `weight` (of the `total_weight` given to
    /// [`Steps::weighted`]).
    pub fn step_weighing(&self, msg: impl fmt::Display, weight: u64) -> Step<'_, 'a> {
        let started = self.started.fetch_add(1, Ordering::Relaxed);
        let finished = self.finished.load(Ordering::Relaxed);
        let done = self.finished_weight.load(Ordering::Relaxed);
        let elapsed_s = self.start.elapsed().as_secs_f64();
        let eta = match done {
            0 => "ETA ?".to_string(),
            d => format!(
                "ETA {:.0} s",
                elapsed_s / d as f64 * self.total_weight.saturating_sub(d) as f64
            ),
        };
        self.opts.progress(format_args!(
            "({}/{}, {eta}) {msg}",
            started + 1,
            self.total
        ));
        self.count(finished);
        Step(self, weight)
    }

    fn count(&self, finished: usize) {
        self.opts
            .count(STEPS_PHASE, finished as u64, Some(self.total as u64));
    }
}

/// The phase of [`Steps`]' progress counts.
pub const STEPS_PHASE: &str = "steps";

/// A step in progress ([`Steps::step`]); done when dropped.
pub struct Step<'s, 'a>(&'s Steps<'a>, u64);

impl Drop for Step<'_, '_> {
    fn drop(&mut self) {
        self.0.finished_weight.fetch_add(self.1, Ordering::Relaxed);
        let finished = self.0.finished.fetch_add(1, Ordering::Relaxed) + 1;
        self.0.count(finished);
    }
}

/// Seconds since this process printed its first progress line.
fn seconds_since_start() -> f64 {
    use std::sync::OnceLock;
    use std::time::Instant;
    static START: OnceLock<Instant> = OnceLock::new();
    START.get_or_init(Instant::now).elapsed().as_secs_f64()
}

fn chrono_free_elapsed() -> String {
    format!("{:7.1}s", seconds_since_start())
}

/// A plain-text table: a title, headers, rows of cells, right-aligned numbers, and a legend
/// under it (what its columns mean, what device it ran on). Serializable so that a saved
/// `results.json` keeps the text tables (and their CSVs) of a run.
#[derive(Clone, Debug, Default, Serialize, Deserialize, PartialEq)]
pub struct Table {
    pub title: String,
    pub headers: Vec<String>,
    pub rows: Vec<Vec<String>>,
    pub legend: Vec<String>,
}

impl Table {
    pub fn new(title: impl Into<String>, headers: &[&str]) -> Table {
        Table {
            title: title.into(),
            headers: headers.iter().map(|h| h.to_string()).collect(),
            rows: Vec::new(),
            legend: Vec::new(),
        }
    }

    /// Add a legend line (printed under the rows): a column's meaning, the device simulated.
    pub fn define(&mut self, line: impl Into<String>) {
        self.legend.push(line.into());
    }
    pub fn push(&mut self, cells: Vec<String>) {
        assert_eq!(
            cells.len(),
            self.headers.len(),
            "table `{}`: row width",
            self.title
        );
        self.rows.push(cells);
    }
}

/// Shown as the renderer's text table (one layout for every table flashlab prints).
impl fmt::Display for Table {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        crate::harness::page::table_view(self).fmt(f)
    }
}

/// Format a float with `digits` decimals (for table cells).
pub fn fmt_f(x: f64, digits: usize) -> String {
    format!("{x:.digits$}")
}
