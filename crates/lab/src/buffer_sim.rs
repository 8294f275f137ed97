//! `flashlab buffer-sim`: a page-reference trace through a DRAM main buffer and an optional
//! flash extension (P3), under the five policies of [`policy::PolicyKind`], with P3's cost and
//! price models; and `--curve`: every LRU size's hit ratio and the whole `lru-ext` grid from one
//! pass ([`policy::StackDistances`]).
//!
//! The mechanism is [`policy::BufferSim`] (it counts page moves); this module resolves sizes,
//! streams the trace, prices the moves and renders rows. Sizes are pages, or a percentage of the
//! trace's distinct pages (`4%`, which costs one extra pass to count them unless `--curve`).

use crate::papers::p3_ext_buffer::Counters;
use crate::report::{fmt_f, row, Row, Table};
use crate::watch::Watch;
use anyhow::{bail, Context, Result};
use policy::{BufferSim, Counts, LruCurve, PolicyConfig, PolicyKind, StackDistances};
use rustc_hash::FxHashSet;
use serde::Serialize;
use serde_json::{json, Value};
use std::path::{Path, PathBuf};
use std::time::Instant;
use workload::cache_trace::{open_refs, PageRef, PageRefStream, PageTraceFormat};

/// Device times per 4 KiB page move, ms (P3's ORION measurements by default).
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
pub struct CostModel {
    pub flash_read_ms: f64,
    pub flash_write_ms: f64,
    /// One disk, random read or write.
    pub disk_ms: f64,
    /// Two disks in RAID-0, per page.
    pub raid0_ms: f64,
    /// Price and time the database on a RAID-0 pair instead of one disk.
    pub raid0: bool,
}

impl Default for CostModel {
    fn default() -> Self {
        CostModel {
            flash_read_ms: 0.03,
            flash_write_ms: 0.33,
            disk_ms: 2.6,
            raid0_ms: 1.6,
            raid0: false,
        }
    }
}

impl CostModel {
    pub fn disk_op_ms(&self) -> f64 {
        if self.raid0 {
            self.raid0_ms
        } else {
            self.disk_ms
        }
    }

    /// Page moves x device time.
    pub fn elapsed_ms(&self, c: &Counts) -> f64 {
        (c.disk_reads + c.disk_writes) as f64 * self.disk_op_ms()
            + c.flash_reads as f64 * self.flash_read_ms
            + c.flash_writes as f64 * self.flash_write_ms
    }
}

/// Prices (P3's by default: Intel X25-M 80 GB $225, Seagate Cheetah 15K.7 $350, DRAM 10x
/// flash per GB). GB are decimal, as the vendors count them.
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
pub struct PriceModel {
    pub flash_usd: f64,
    pub flash_gb: f64,
    pub disk_usd: f64,
    /// DRAM price per GB as a multiple of flash's.
    pub dram_per_flash: f64,
}

impl Default for PriceModel {
    fn default() -> Self {
        PriceModel {
            flash_usd: 225.0,
            flash_gb: 80.0,
            disk_usd: 350.0,
            dram_per_flash: 10.0,
        }
    }
}

impl PriceModel {
    /// Price of `main_pages` of DRAM, `ext_pages` of flash and the disks.
    pub fn price_usd(
        &self,
        main_pages: usize,
        ext_pages: usize,
        page_bytes: u32,
        disks: u32,
    ) -> f64 {
        let flash_per_gb = self.flash_usd / self.flash_gb;
        let gb = |pages: usize| pages as f64 * page_bytes as f64 / 1e9;
        gb(main_pages) * flash_per_gb * self.dram_per_flash
            + gb(ext_pages) * flash_per_gb
            + disks as f64 * self.disk_usd
    }
}

/// A buffer size: pages, or a share of the trace's distinct pages.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Size {
    Pages(usize),
    Percent(f64),
}

impl Size {
    /// `1000` (pages) or `4%` / `2.5%` (of the trace's distinct pages).
    pub fn parse(s: &str) -> Result<Size, String> {
        let t = s.trim();
        if let Some(p) = t.strip_suffix('%') {
            let x: f64 = p
                .trim()
                .parse()
                .map_err(|_| format!("`{s}`: expected a percentage such as 4%"))?;
            if !(0.0..=10_000.0).contains(&x) {
                return Err(format!("`{s}`: percentage out of range"));
            }
            return Ok(Size::Percent(x));
        }
        t.parse::<usize>()
            .map(Size::Pages)
            .map_err(|_| format!("`{s}`: expected pages (e.g. 4096) or a percentage (e.g. 4%)"))
    }

    pub fn resolve(self, distinct_pages: usize) -> usize {
        match self {
            Size::Pages(n) => n,
            Size::Percent(p) => (distinct_pages as f64 * p / 100.0).round() as usize,
        }
    }

    fn is_percent(self) -> bool {
        matches!(self, Size::Percent(_))
    }
}

/// Where the page references come from.
#[derive(Clone, Debug)]
pub struct TraceSpec {
    pub path: PathBuf,
    pub format: PageTraceFormat,
    /// Page size for `block:FORMAT` traces (and for prices).
    pub page_bytes: u32,
}

impl TraceSpec {
    /// The decoded reference stream (errors name the file and line or offset); for `tpcc` the
    /// generator, `path` holding its configuration.
    pub fn open(&self) -> Result<PageRefStream> {
        Ok(open_refs(&self.path, self.format, self.page_bytes)?)
    }

    /// Decode the whole trace into memory (benchmarks, so that decoding is not measured).
    pub fn load(&self) -> Result<Vec<PageRef>> {
        self.open()?
            .map(|r| r.map_err(anyhow::Error::from))
            .collect()
    }
}

/// Everything `flashlab buffer-sim` takes.
#[derive(Clone, Debug)]
pub struct BufferSimOptions {
    pub trace: TraceSpec,
    pub policy: PolicyKind,
    pub size: Size,
    pub ext: Size,
    pub kin: Option<usize>,
    pub kout: Option<usize>,
    pub amout_ratio: f64,
    pub cost: CostModel,
    pub price: PriceModel,
    /// Stop after this many references (None: the whole trace).
    pub limit: Option<u64>,
    /// Progress lines, counts (`(pass, references_done, limit)`) and the stop flag.
    pub watch: Watch,
}

impl BufferSimOptions {
    pub fn new(trace: TraceSpec, policy: PolicyKind, size: Size) -> BufferSimOptions {
        BufferSimOptions {
            trace,
            policy,
            size,
            ext: Size::Pages(0),
            kin: None,
            kout: None,
            amout_ratio: PolicyConfig::AMOUT_RATIO_DEFAULT,
            cost: CostModel::default(),
            price: PriceModel::default(),
            limit: None,
            watch: Watch::default(),
        }
    }

    pub fn disks(&self) -> u32 {
        if self.cost.raid0 {
            2
        } else {
            1
        }
    }

    fn refs(&self) -> Result<impl Iterator<Item = Result<PageRef>>> {
        let limit = self.limit.unwrap_or(u64::MAX) as usize;
        Ok(self
            .trace
            .open()?
            .take(limit)
            .map(|r| r.map_err(anyhow::Error::from)))
    }

    fn progress(&self, msg: impl std::fmt::Display) {
        if self.watch.lines {
            eprintln!("buffer-sim: {msg}");
        }
    }

    /// Every reference of the trace to `each`, in order; every [`REPORT_EVERY_REFS`] references
    /// (and at the end) the count goes to the watch as `(pass, done, limit)` and the stop flag
    /// is checked. Returns how many references were read.
    fn each_ref(&self, pass: &str, mut each: impl FnMut(PageRef)) -> Result<u64> {
        let mut done = 0u64;
        for r in self.refs()? {
            each(r?);
            done += 1;
            if done.is_multiple_of(REPORT_EVERY_REFS) {
                self.watch.count(pass, done, self.limit)?;
            }
        }
        self.watch.count(pass, done, Some(done))?;
        Ok(done)
    }
}

/// References between two progress counts (and checks of the stop flag) of a pass.
pub const REPORT_EVERY_REFS: u64 = 1 << 16;

/// The result of one simulation, as the JSON object and a table.
#[derive(Clone, Debug)]
pub struct SimOutcome {
    pub row: Row,
    pub table: Table,
}

/// Count the distinct pages of the trace (one streaming pass).
pub fn distinct_pages(opts: &BufferSimOptions) -> Result<usize> {
    let mut seen = FxHashSet::default();
    opts.each_ref("count", |r| {
        seen.insert(r.page);
    })?;
    Ok(seen.len())
}

/// The policy configuration for resolved sizes.
pub fn policy_config(opts: &BufferSimOptions, size_pages: usize, ext_pages: usize) -> PolicyConfig {
    let mut c = PolicyConfig::new(opts.policy, size_pages, ext_pages);
    c.kin = opts.kin;
    c.kout = opts.kout;
    c.amout_ratio = opts.amout_ratio;
    c
}

/// Run the trace through `opts.policy` once.
pub fn simulate(opts: &BufferSimOptions) -> Result<SimOutcome> {
    let distinct = if opts.size.is_percent() || opts.ext.is_percent() {
        opts.progress("counting distinct pages for percentage sizes");
        Some(distinct_pages(opts)?)
    } else {
        None
    };
    if distinct == Some(0) {
        bail!(
            "the trace holds no page reference (an empty file, or --limit 0): nothing to simulate"
        );
    }
    let size_pages = opts.size.resolve(distinct.unwrap_or(0));
    if size_pages == 0 && opts.size.is_percent() {
        bail!("--size: that share of the trace's {} distinct pages is 0 pages; give a larger share or a number of pages", distinct.unwrap_or(0));
    }
    let ext_pages = opts.ext.resolve(distinct.unwrap_or(0));
    let config = policy_config(opts, size_pages, ext_pages);
    let mut sim = BufferSim::new(&config).context(
        "buffer configuration (--policy, --size, --ext-size, --kin, --kout, --amout-ratio)",
    )?;
    opts.progress(format!(
        "{} on {} ({}), main {size_pages} pages, flash {ext_pages} pages",
        opts.policy.name(),
        opts.trace.path.display(),
        opts.trace.format.name()
    ));
    let t0 = Instant::now();
    opts.each_ref("simulate", |r| {
        sim.reference(r.page, r.write);
    })?;
    let wall_s = t0.elapsed().as_secs_f64();
    let counts = sim.counts();
    let mut row = counts_row(opts, &counts, size_pages, ext_pages);
    row.insert("trace".into(), json!(opts.trace.path.display().to_string()));
    row.insert("trace_format".into(), json!(opts.trace.format.name()));
    if let Some(d) = distinct {
        row.insert("distinct_pages".into(), json!(d));
    }
    row.insert("wall_seconds".into(), json!(wall_s));
    row.insert(
        "refs_per_wall_second".into(),
        json!(counts.references as f64 / wall_s.max(1e-9)),
    );
    let table = counts_table(&row);
    Ok(SimOutcome { row, table })
}

/// The flat result keys of one (policy, sizes) point.
pub fn counts_row(opts: &BufferSimOptions, c: &Counts, size_pages: usize, ext_pages: usize) -> Row {
    row([
        ("policy", json!(opts.policy.name())),
        ("size_pages", json!(size_pages)),
        ("ext_pages", json!(ext_pages)),
        ("references", json!(c.references)),
        ("writes", json!(c.writes)),
        ("hits", json!(c.hits)),
        ("hit_ratio", json!(c.hit_ratio())),
        ("misses", json!(c.misses)),
        ("ext_hits", json!(c.ext_hits)),
        ("ext_hit_ratio", json!(c.ext_hit_ratio())),
        ("disk_reads", json!(c.disk_reads)),
        ("disk_writes", json!(c.disk_writes)),
        ("flash_reads", json!(c.flash_reads)),
        ("flash_writes", json!(c.flash_writes)),
        ("flash_displaced", json!(c.flash_displaced)),
        ("elapsed_ms", json!(opts.cost.elapsed_ms(c))),
        (
            "price_usd",
            json!(opts
                .price
                .price_usd(size_pages, ext_pages, opts.trace.page_bytes, opts.disks())),
        ),
    ])
}

fn counts_table(r: &Row) -> Table {
    let mut t = Table::new(
        "buffer-sim (elapsed: cost model, page moves x device time)",
        &["key", "value"],
    );
    for (k, v) in r {
        let cell = match v {
            Value::Number(n) if n.is_f64() => fmt_f(n.as_f64().unwrap_or(0.0), 6),
            Value::String(s) => s.clone(),
            other => other.to_string(),
        };
        t.push(vec![k.clone(), cell]);
    }
    t
}

/// `--curve`: the LRU curve, its steps and the `lru-ext` grid.
#[derive(Clone, Debug)]
pub struct CurveOutcome {
    pub curve: LruCurve,
    /// The grid: one row per (main size, flash size).
    pub grid: Vec<GridRow>,
    pub tables: Vec<Table>,
    pub summary: Row,
}

/// One `lru-ext` point of the `--curve` grid: the simulator's counters at a (main, flash)
/// size, and both sizes in % of the distinct pages.
#[derive(Clone, Debug, PartialEq, serde::Serialize)]
pub struct GridRow {
    #[serde(flatten)]
    pub counts: Counters,
    pub main_pct: f64,
    pub flash_pct: f64,
}

/// One pass over the trace: stack distances, then every grid point from the curve.
pub fn curve(
    opts: &BufferSimOptions,
    grid_main: &[Size],
    grid_flash: &[Size],
) -> Result<CurveOutcome> {
    let mut sd = StackDistances::new();
    let t0 = Instant::now();
    opts.each_ref("curve", |r| {
        sd.reference(r.page, r.write);
    })?;
    let wall_s = t0.elapsed().as_secs_f64();
    let curve = sd.curve();
    let distinct = curve.distinct();
    let mut grid = Vec::new();
    let mut lru_ext = opts.clone();
    lru_ext.policy = PolicyKind::LruExt;
    for m in grid_main {
        for f in grid_flash {
            let (mp, fp) = (m.resolve(distinct), f.resolve(distinct));
            let point = curve.lru_ext(mp, fp);
            grid.push(GridRow {
                counts: Counters::new(&lru_ext, &point.counts, mp, fp),
                main_pct: pct(mp, distinct),
                flash_pct: pct(fp, distinct),
            });
        }
    }
    let sample: Vec<Value> = CURVE_SAMPLE_PCTS
        .iter()
        .map(|&p| {
            let m = Size::Percent(p).resolve(distinct);
            json!({"size_pct": p, "size_pages": m, "hit_ratio": ratio(curve.hits(m), curve.references)})
        })
        .collect();
    let summary = row([
        ("curve_sample", Value::Array(sample)),
        ("trace", json!(opts.trace.path.display().to_string())),
        ("trace_format", json!(opts.trace.format.name())),
        ("references", json!(curve.references)),
        ("distinct_pages", json!(distinct)),
        ("wall_seconds", json!(wall_s)),
        (
            "refs_per_wall_second",
            json!(curve.references as f64 / wall_s.max(1e-9)),
        ),
    ]);
    let tables = vec![curve_table(&curve), grid_table(&grid)];
    Ok(CurveOutcome {
        curve,
        grid,
        tables,
        summary,
    })
}

fn pct(pages: usize, distinct: usize) -> f64 {
    if distinct == 0 {
        0.0
    } else {
        100.0 * pages as f64 / distinct as f64
    }
}

fn ratio(hits: u64, refs: u64) -> f64 {
    if refs == 0 {
        0.0
    } else {
        hits as f64 / refs as f64
    }
}

/// Sizes (% of distinct pages) at which the curve is printed; `--curve-out` has every step.
const CURVE_SAMPLE_PCTS: [f64; 11] = [
    1.0, 2.0, 4.0, 5.0, 10.0, 20.0, 30.0, 40.0, 50.0, 75.0, 100.0,
];

fn curve_table(c: &LruCurve) -> Table {
    let n = c.distinct();
    let mut t = Table::new(
        format!("LRU hit ratio by size (one pass; {n} distinct pages)"),
        &["size_pct", "size_pages", "hit_ratio"],
    );
    for p in CURVE_SAMPLE_PCTS {
        let m = Size::Percent(p).resolve(n);
        t.push(vec![
            fmt_f(p, 0),
            m.to_string(),
            fmt_f(ratio(c.hits(m), c.references), 6),
        ]);
    }
    t
}

fn grid_table(grid: &[GridRow]) -> Table {
    let mut t = Table::new(
        "lru-ext grid from the curve (elapsed: cost model)",
        &[
            "main_pages",
            "flash_pages",
            "flash_pct",
            "hit_ratio",
            "ext_hit_ratio",
            "elapsed_ms",
            "price_usd",
        ],
    );
    for r in grid {
        let c = &r.counts;
        t.push(vec![
            fmt_f(c.size_pages as f64, 0),
            fmt_f(c.ext_pages as f64, 0),
            fmt_f(r.flash_pct, 1),
            fmt_f(c.hit_ratio, 6),
            fmt_f(c.ext_hit_ratio, 6),
            fmt_f(c.elapsed_ms, 1),
            fmt_f(c.price_usd, 2),
        ]);
    }
    t
}

/// Write the curve's steps (`size_pages,hits,hit_ratio` where the hit count grows) as CSV
/// (`.csv`) or JSON (anything else).
pub fn export_curve(c: &LruCurve, path: &Path) -> Result<()> {
    let steps = c.steps().map(|(m, h)| (m, h, ratio(h, c.references)));
    let text = if path
        .extension()
        .is_some_and(|e| e.eq_ignore_ascii_case("csv"))
    {
        let mut s = String::from("size_pages,hits,hit_ratio\n");
        for (m, h, r) in steps {
            s.push_str(&format!("{m},{h},{r}\n"));
        }
        s
    } else {
        let rows: Vec<Value> = steps
            .map(|(m, h, r)| json!({"size_pages": m, "hits": h, "hit_ratio": r}))
            .collect();
        let v = json!({"references": c.references, "distinct_pages": c.distinct(), "steps": rows});
        serde_json::to_string(&v)?
    };
    std::fs::write(path, text).with_context(|| format!("writing the curve to {}", path.display()))
}

/// The flash sizes of P3's sweep: 5 % .. 50 % of the database in 5 % steps.
pub fn p3_flash_sizes() -> Vec<Size> {
    (1..=10).map(|i| Size::Percent(5.0 * i as f64)).collect()
}

/// Check option combinations before any pass over the trace.
pub fn validate(opts: &BufferSimOptions) -> Result<()> {
    if !opts.policy.is_extended() && opts.ext != Size::Pages(0) && opts.ext != Size::Percent(0.0) {
        bail!(
            "--ext-size needs an extended policy (lru-ext, 2q-ext, 2q-flash); {} has no flash",
            opts.policy.name()
        );
    }
    Ok(())
}

/// What a `buffer-sim` run computed: one policy and size, or (`curve`) the LRU curve and its
/// grid.
pub enum Outcome {
    Single(SimOutcome),
    Curve(CurveOutcome),
}

impl Outcome {
    /// The object `buffer-sim --json` prints.
    pub fn to_json(&self) -> Value {
        match self {
            Outcome::Single(out) => Value::Object(out.row.clone()),
            Outcome::Curve(out) => {
                let mut obj = out.summary.clone();
                obj.insert("grid".into(), json!(out.grid));
                Value::Object(obj)
            }
        }
    }

    /// The tables `buffer-sim` prints.
    pub fn to_text(&self) -> String {
        match self {
            Outcome::Single(out) => out.table.to_string(),
            Outcome::Curve(out) => {
                let mut text = String::new();
                for (k, v) in out.summary.iter().filter(|(k, _)| *k != "curve_sample") {
                    text.push_str(&format!("{k}: {v}\n"));
                }
                for t in &out.tables {
                    text.push_str(&format!("\n{t}"));
                }
                text
            }
        }
    }
}

/// The run `spec` describes, followed and stopped through `watch` (progress lines on stderr
/// when `watch.lines`; [`crate::Interrupted`] once its token is set).
pub fn run(spec: &crate::spec::BufferSimSpec, watch: &Watch) -> Result<Outcome> {
    let o = spec.resolve(watch)?;
    if !spec.curve {
        return Ok(Outcome::Single(simulate(&o)?));
    }
    if o.policy != PolicyKind::Lru && o.policy != PolicyKind::LruExt {
        bail!("--curve gives lru and lru-ext; drop --policy or use lru / lru-ext");
    }
    let (main, flash) = spec.grid(&o)?;
    let out = curve(&o, &main, &flash)?;
    if let Some(p) = &spec.curve_out {
        export_curve(&out.curve, p)?;
    }
    Ok(Outcome::Curve(out))
}
