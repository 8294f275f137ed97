//! `flashlab reproduce multistream` — paper P5 (data streams of different lifetimes on a
//! multi-stream SSD).
//!
//! Experiment: 32 key-value stores (P5's 32 ForestDB files), each on its own partition of one
//! simulated multi-stream SSD (`tlc-nvme-2024` with 4 KiB pages; [`blockdev::SharedDevice`]),
//! the partitions together covering 83 % of the logical space (P5: 400 GB of DB files on a
//! 480 GB drive; the rest is never written). Load: every file gets its keys (a third of its
//! partition in live documents, so compaction has room). Then 100 % updates: a uniformly random
//! file and key, a new value; each file commits every `OPS_PER_COMMIT` updates it received.
//! The device's streams are assigned by [`engine::kv::StreamRouter`] from the policy's
//! [`engine::kv::StreamMap`] (none, per-type, merge-similar, merge-different, per-file, auto),
//! once per GC placement mode of the SSD.
//!
//! Measured, over the update phase only: every `SAMPLE_SHARE` of the logical capacity written
//! by the host, the WAF of that window (flash page writes / host page writes) — the
//! `waf_over_time` series. A run stops when WAF is flat: the last `FLAT_WINDOWS` windows' WAFs
//! lie within `FLAT_TOLERANCE` of their mean (after at least `MIN_HOST_X` capacities written),
//! or at `MAX_HOST_X` capacities (then `waf_flat` = "no"). The final WAF is that of the last
//! `FLAT_WINDOWS` windows together. Host bytes "in equal simulated time" are each run's host
//! bytes by the shortest run's simulated duration (same GC mode), interpolated between
//! samples. The lifetime table (P5's Table 1) comes from the `none` run: per data type, its
//! share of page writes and the mean and median lifetime in device page writes between two
//! writes of the same page. The store's write sequence does not depend on the device, so every
//! run sees the same writes.

use crate::papers;
use crate::report::{fmt_f, Output, Report, ReproduceOptions, Scale, Series, Steps, Table};
use anyhow::{Context, Result};
use blockdev::{BlockDevice, SharedDevice, SimDevice};
use engine::kv::{DataType, Options, Store, StreamMap, StreamPolicy, StreamRouter};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use serde::{Deserialize, Serialize};
use serde_json::json;
use ssd::lifetime::LifetimeReport;
use ssd::{GcStreamMode, SsdConfig};
use std::cell::RefCell;
use std::rc::Rc;

/// The simulated device: a current TLC NVMe drive with 4 KiB pages (P5's PM953 has 4 KiB
/// logical blocks; its geometry is not published).
pub const PRESET: &str = "tlc-nvme-2024";
const PAGE_BYTES: usize = 4096;
/// P5's 32 DB files.
pub const FILES: u32 = 32;
/// P5: 400 GB of DB files on a 480 GB drive.
pub const FILL: f64 = 400.0 / 480.0;
/// Live documents per file, as a share of its partition (the rest: stale pages, compaction).
const LIVE_SHARE: f64 = 0.33;
const VALUE_BYTES: usize = 1024;
const KEY_BYTES: usize = 16;
/// Updates a file receives between two of its commits.
const OPS_PER_COMMIT: u32 = 256;
/// ForestDB's default compaction threshold (30 % stale).
const COMPACT_THRESHOLD: f64 = 0.3;
/// Pages each store's pager caches.
const CACHE_PAGES: usize = 256;
/// WAF sampled every this share of the logical capacity written by the host.
pub const SAMPLE_SHARE: f64 = 0.1;
/// Flat: the last this many windows' WAFs ...
pub const FLAT_WINDOWS: usize = 5;
/// ... lie within this relative distance of their mean.
pub const FLAT_TOLERANCE: f64 = 0.03;
/// Host writes (in capacities) before flatness is checked, and at most.
const MIN_HOST_X: f64 = 2.0;
const MAX_HOST_X: f64 = 12.0;
/// Device streams (P5's PM953 offers several; ours: enough for per-type's 5 and auto's groups).
pub const DEVICE_STREAMS_DEFAULT: u16 = 8;

/// Sizes and switches of one reproduction.
#[derive(Clone, Debug, Serialize)]
pub struct Plan {
    pub capacity_bytes: u64,
    pub files: u32,
    pub device_streams: u16,
    pub policies: Vec<String>,
    pub gc_modes: Vec<String>,
    pub max_host_x: f64,
    pub min_host_x: f64,
}

impl Plan {
    pub fn new(opts: &ReproduceOptions) -> Plan {
        let capacity_bytes = opts.capacity.unwrap_or(match opts.scale {
            Scale::Quick => 192 << 20,
            Scale::Paper => 2 << 30,
        });
        Plan {
            capacity_bytes,
            files: FILES,
            device_streams: opts.streams.unwrap_or(DEVICE_STREAMS_DEFAULT),
            policies: StreamPolicy::EVERY
                .iter()
                .map(|p| p.name().to_string())
                .collect(),
            gc_modes: GC_MODES.iter().map(|&m| gc_name(m).to_string()).collect(),
            max_host_x: MAX_HOST_X,
            min_host_x: MIN_HOST_X,
        }
    }
}

/// The SSD's GC placement modes, the default for multi-stream runs first.
pub const GC_MODES: [GcStreamMode; 2] = [GcStreamMode::Separate, GcStreamMode::Victim];

pub fn gc_name(m: GcStreamMode) -> &'static str {
    match m {
        GcStreamMode::Separate => "separate",
        GcStreamMode::Victim => "victim",
    }
}

/// One WAF sample: counters since the update phase began.
#[derive(Clone, Copy, Debug, Default)]
struct Sample {
    host_pages: u64,
    flash_pages: u64,
    sim_ns: u64,
}

/// One (policy, GC mode) run.
struct Run {
    policy: StreamPolicy,
    gc: GcStreamMode,
    samples: Vec<Sample>,
    stats: ssd::Stats,
    flat: bool,
    logical_pages: u64,
    page_bytes: u64,
    lifetimes: Option<LifetimeReport>,
    auto_mapping: Vec<(u32, DataType, u16)>,
}

impl Run {
    fn sim_ns(&self) -> u64 {
        self.samples.last().map_or(0, |s| s.sim_ns)
    }
    /// WAF of the last `FLAT_WINDOWS` windows together.
    fn final_waf(&self) -> f64 {
        let n = self.samples.len();
        let first = n.saturating_sub(FLAT_WINDOWS + 1);
        let (a, b) = (self.samples[first], self.samples[n - 1]);
        ratio(b.flash_pages - a.flash_pages, b.host_pages - a.host_pages)
    }
    fn window_wafs(&self) -> Vec<(f64, f64)> {
        self.samples
            .windows(2)
            .map(|w| {
                (
                    w[1].host_pages as f64 / self.logical_pages as f64,
                    ratio(
                        w[1].flash_pages - w[0].flash_pages,
                        w[1].host_pages - w[0].host_pages,
                    ),
                )
            })
            .collect()
    }
    /// Host pages written by simulated time `t_ns` (linear between samples).
    fn host_pages_by(&self, t_ns: u64) -> f64 {
        let mut prev = Sample::default();
        for &s in &self.samples {
            if s.sim_ns >= t_ns {
                let span = (s.sim_ns - prev.sim_ns).max(1) as f64;
                let f = (t_ns - prev.sim_ns) as f64 / span;
                return prev.host_pages as f64 + f * (s.host_pages - prev.host_pages) as f64;
            }
            prev = s;
        }
        prev.host_pages as f64
    }
}

fn ratio(a: u64, b: u64) -> f64 {
    if b == 0 {
        0.0
    } else {
        a as f64 / b as f64
    }
}

/// Whether the last `FLAT_WINDOWS` window WAFs lie within `FLAT_TOLERANCE` of their mean.
pub fn is_flat(window_wafs: &[f64]) -> bool {
    if window_wafs.len() < FLAT_WINDOWS {
        return false;
    }
    let last = &window_wafs[window_wafs.len() - FLAT_WINDOWS..];
    let mean = last.iter().sum::<f64>() / last.len() as f64;
    mean > 0.0
        && last
            .iter()
            .all(|w| (w - mean).abs() <= FLAT_TOLERANCE * mean)
}

fn device(plan: &Plan, gc: GcStreamMode) -> Result<SimDevice> {
    let mut cfg = SsdConfig::preset(PRESET)?;
    cfg.geometry.page_bytes = PAGE_BYTES as u32;
    cfg.ftl.streams = plan.device_streams;
    cfg.ftl.gc_stream = gc;
    let context = || {
        format!(
            "--capacity {} bytes on preset {PRESET} with {} streams",
            plan.capacity_bytes, plan.device_streams
        )
    };
    let cfg = cfg
        .with_logical_capacity(plan.capacity_bytes)
        .with_context(context)?;
    Ok(SimDevice::new(cfg)?)
}

struct Files {
    stores: Vec<Store>,
    keys_per_file: u64,
    pending: Vec<u32>,
}

fn store_options(file_pages: u64) -> Options {
    Options {
        cache_pages: CACHE_PAGES,
        compact_threshold: COMPACT_THRESHOLD,
        compact_min_bytes: file_pages * PAGE_BYTES as u64 / 20,
        streams: StreamPolicy::PerType,
        ..Options::default()
    }
}

fn key(k: u64) -> [u8; KEY_BYTES] {
    let mut b = [b'0'; KEY_BYTES];
    let s = format!("{k:0width$}", width = KEY_BYTES);
    b.copy_from_slice(&s.as_bytes()[..KEY_BYTES]);
    b
}

fn open_files(shared: &mut SharedDevice<SimDevice>, plan: &Plan) -> Result<Files> {
    let logical = shared.device().capacity_pages();
    let file_pages = (logical as f64 * FILL / plan.files as f64) as u64;
    let doc_bytes = (VALUE_BYTES + KEY_BYTES + 32) as u64;
    let keys_per_file = (file_pages as f64 * LIVE_SHARE * PAGE_BYTES as f64 / doc_bytes as f64)
        .max(1.0) as u64;
    let mut stores = Vec::with_capacity(plan.files as usize);
    for f in 0..plan.files {
        let part = shared.partition(file_pages)?;
        let s = Store::open(Box::new(part), store_options(file_pages))
            .with_context(|| format!("DB file {f}"))?;
        stores.push(s);
    }
    Ok(Files {
        stores,
        keys_per_file,
        pending: vec![0; plan.files as usize],
    })
}

fn load(files: &mut Files, seed: u64) -> Result<()> {
    let mut value = vec![0u8; VALUE_BYTES];
    for (f, s) in files.stores.iter_mut().enumerate() {
        for k in 0..files.keys_per_file {
            value[0] = (k ^ seed) as u8;
            value[1] = f as u8;
            s.put(&key(k), &value)?;
            if (k + 1) % OPS_PER_COMMIT as u64 == 0 {
                s.commit()?;
            }
        }
        s.commit()?;
    }
    Ok(())
}

fn sample(shared: &SharedDevice<SimDevice>, base: &ssd::Stats, t0: u64) -> Sample {
    let d = shared.device();
    let s = d.ssd().stats().since(base);
    Sample {
        host_pages: s.host_pages_written,
        flash_pages: s.flash_pages_written,
        sim_ns: d.now_ns() - t0,
    }
}

fn run_one(plan: &Plan, policy: StreamPolicy, gc: GcStreamMode, seed: u64, lifetimes: bool) -> Result<Run> {
    let dev = device(plan, gc)?;
    let logical_pages = dev.capacity_pages();
    let map = StreamMap::policy(policy, plan.files, plan.device_streams)?;
    let router = Rc::new(RefCell::new(StreamRouter::new(map, logical_pages)));
    let mut shared = SharedDevice::with_router(dev, Box::new(router.clone()));
    let mut files = open_files(&mut shared, plan)?;
    load(&mut files, seed)?;
    if lifetimes {
        router.borrow_mut().measure_lifetimes(logical_pages);
    }
    let base = shared.device().ssd().stats();
    let t0 = shared.device().now_ns();
    let window_pages = ((logical_pages as f64 * SAMPLE_SHARE) as u64).max(1);
    let max_pages = (logical_pages as f64 * plan.max_host_x) as u64;
    let min_pages = (logical_pages as f64 * plan.min_host_x) as u64;
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let mut samples = vec![Sample::default()];
    let mut wafs = Vec::new();
    let mut value = vec![0u8; VALUE_BYTES];
    let mut op = 0u64;
    let flat = loop {
        let f = rng.gen_range(0..plan.files as usize);
        let k = rng.gen_range(0..files.keys_per_file);
        op += 1;
        value[..8].copy_from_slice(&op.to_le_bytes());
        files.stores[f].put(&key(k), &value)?;
        files.pending[f] += 1;
        if files.pending[f] < OPS_PER_COMMIT {
            continue;
        }
        files.pending[f] = 0;
        files.stores[f].commit()?;
        let s = sample(&shared, &base, t0);
        let last = *samples.last().expect("a first sample");
        if s.host_pages - last.host_pages < window_pages {
            continue;
        }
        wafs.push(ratio(
            s.flash_pages - last.flash_pages,
            s.host_pages - last.host_pages,
        ));
        samples.push(s);
        if s.host_pages >= min_pages && is_flat(&wafs) {
            break true;
        }
        if s.host_pages >= max_pages {
            break false;
        }
    };
    let stats = shared.device().ssd().stats().since(&base);
    let r = router.borrow();
    Ok(Run {
        policy,
        gc,
        samples,
        stats,
        flat,
        logical_pages,
        page_bytes: PAGE_BYTES as u64,
        lifetimes: r.lifetimes(),
        auto_mapping: r.auto_mapping(),
    })
}

/// One row per policy, as `reproduce multistream --json` prints it (the default GC mode's
/// figures, and each GC mode's WAF as `waf_gc_<mode>`).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct MultistreamRow {
    pub policy: String,
    /// The default GC mode (`GC_MODES[0]`).
    pub gc_mode: String,
    /// Final WAF: flash / host page writes over the last `FLAT_WINDOWS` windows.
    pub waf: f64,
    /// (1 − waf / waf of `none`) × 100: percent lower than without streams (P5's figure).
    pub waf_reduction_vs_none: f64,
    /// WAF over the whole update phase.
    pub waf_cumulative: f64,
    /// Whether WAF was flat when the run stopped ("yes"/"no").
    pub waf_flat: String,
    /// Host bytes of the update phase.
    pub host_bytes_written: u64,
    /// Host bytes by the simulated time the shortest run of this GC mode took.
    pub host_bytes_equal_time: u64,
    pub host_writes_x_capacity: f64,
    pub sim_seconds: f64,
    pub flash_pages_written: u64,
    pub erases: u64,
    pub gc_pages_copied: u64,
    pub waf_gc_separate: f64,
    pub waf_gc_victim: f64,
    pub waf_reduction_vs_none_gc_separate: f64,
    pub waf_reduction_vs_none_gc_victim: f64,
}

/// One line of the lifetime table (also `config.lifetime` in the JSON).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct LifetimeRow {
    #[serde(rename = "type")]
    pub data_type: String,
    pub writes: u64,
    pub share_pct: f64,
    pub overwritten: u64,
    pub mean_writes: Option<f64>,
    pub median_writes: Option<u64>,
}

fn lifetime_rows(r: &LifetimeReport) -> Vec<LifetimeRow> {
    r.classes
        .iter()
        .map(|c| LifetimeRow {
            data_type: DataType::ALL
                .get(c.class as usize)
                .map_or("untyped", |t| t.name())
                .to_string(),
            writes: c.writes,
            share_pct: c.share * 100.0,
            overwritten: c.overwritten,
            mean_writes: c.mean,
            median_writes: c.median,
        })
        .collect()
}

fn reduction(waf: f64, none: f64) -> f64 {
    if none > 0.0 {
        (1.0 - waf / none) * 100.0
    } else {
        0.0
    }
}

fn find<'a>(runs: &'a [Run], p: StreamPolicy, gc: GcStreamMode) -> &'a Run {
    runs.iter()
        .find(|r| r.policy == p && r.gc == gc)
        .expect("every (policy, GC mode) ran")
}

fn rows(runs: &[Run]) -> Vec<MultistreamRow> {
    let gc0 = GC_MODES[0];
    let waf_of = |p, gc| find(runs, p, gc).final_waf();
    let none = |gc| waf_of(StreamPolicy::NoStreams, gc);
    let equal_time = |gc: GcStreamMode| {
        runs.iter()
            .filter(|r| r.gc == gc)
            .map(Run::sim_ns)
            .min()
            .unwrap_or(0)
    };
    StreamPolicy::EVERY
        .iter()
        .map(|&p| {
            let r = find(runs, p, gc0);
            let s = &r.stats;
            let waf = r.final_waf();
            let by_mode = |gc| waf_of(p, gc);
            MultistreamRow {
                policy: p.name().into(),
                gc_mode: gc_name(gc0).into(),
                waf,
                waf_reduction_vs_none: reduction(waf, none(gc0)),
                waf_cumulative: s.waf(),
                waf_flat: if r.flat { "yes" } else { "no" }.into(),
                host_bytes_written: s.host_pages_written * r.page_bytes,
                host_bytes_equal_time: (r.host_pages_by(equal_time(gc0)) * r.page_bytes as f64)
                    as u64,
                host_writes_x_capacity: ratio(s.host_pages_written, r.logical_pages),
                sim_seconds: r.sim_ns() as f64 / 1e9,
                flash_pages_written: s.flash_pages_written,
                erases: s.erases,
                gc_pages_copied: s.gc_pages_copied,
                waf_gc_separate: by_mode(GcStreamMode::Separate),
                waf_gc_victim: by_mode(GcStreamMode::Victim),
                waf_reduction_vs_none_gc_separate: reduction(
                    by_mode(GcStreamMode::Separate),
                    none(GcStreamMode::Separate),
                ),
                waf_reduction_vs_none_gc_victim: reduction(
                    by_mode(GcStreamMode::Victim),
                    none(GcStreamMode::Victim),
                ),
            }
        })
        .collect()
}

fn series(runs: &[Run], lifetimes: Option<&LifetimeReport>) -> Vec<Series> {
    let mut out = Vec::new();
    for r in runs {
        let label = if r.gc == GC_MODES[0] {
            r.policy.name().to_string()
        } else {
            format!("{} (gc {})", r.policy.name(), gc_name(r.gc))
        };
        out.push(Series {
            name: "waf_over_time".into(),
            label,
            x: "host_writes_x_capacity".into(),
            y: "waf".into(),
            points: r.window_wafs(),
        });
    }
    for c in lifetimes.map_or(&[][..], |l| &l.classes[..]) {
        out.push(Series {
            name: "lifetime_histogram".into(),
            label: DataType::ALL
                .get(c.class as usize)
                .map_or("untyped", |t| t.name())
                .into(),
            x: "lifetime_writes_bucket_low".into(),
            y: "pages".into(),
            points: c
                .histogram
                .iter()
                .map(|&(lo, n)| (lo as f64, n as f64))
                .collect(),
        });
    }
    out
}

/// P5's name of our policy (its 6.5-hour figure's rows).
fn paper_policy(p: StreamPolicy) -> Option<&'static str> {
    match p {
        StreamPolicy::NoStreams => Some("none"),
        StreamPolicy::PerType => Some("per-type"),
        StreamPolicy::SimilarMerged => Some("merge-similar"),
        StreamPolicy::DifferentMerged => Some("merge-different"),
        _ => None,
    }
}

fn waf_table(rows: &[MultistreamRow], plan: &Plan) -> Table {
    let mut t = Table::new(
        format!(
            "WAF by stream policy and GC mode: 32 stores on one simulated SSD ({} MiB, {:.0} % in DB files, {} streams) — ours beside P5's (6.5 h run)",
            plan.capacity_bytes >> 20,
            FILL * 100.0,
            plan.device_streams
        ),
        &[
            "policy",
            "WAF (gc separate)",
            "vs none",
            "WAF (gc victim)",
            "vs none",
            "flat",
            "paper WAF",
            "paper vs none",
        ],
    );
    let p5 = papers::p5();
    for r in rows {
        let paper = StreamPolicy::parse(&r.policy)
            .and_then(paper_policy)
            .and_then(|name| p5.find(&[("table", json!(P5_FIG)), ("policy", json!(name))]));
        t.push(vec![
            r.policy.clone(),
            fmt_f(r.waf_gc_separate, 3),
            format!("{:+.1} %", -r.waf_reduction_vs_none_gc_separate),
            fmt_f(r.waf_gc_victim, 3),
            format!("{:+.1} %", -r.waf_reduction_vs_none_gc_victim),
            r.waf_flat.clone(),
            papers::cell(paper, "waf"),
            papers::cell(paper, "vs_none"),
        ]);
    }
    t.define("WAF = flash page writes / host page writes over the last 5 sample windows (each 10 % of the capacity written); vs none = change against `none` in the same GC mode");
    t.define("gc separate: GC copies of every stream go to one GC stream; gc victim: back to the victim block's stream");
    t.define("flat = the last 5 window WAFs within 3 % of their mean (default GC mode); paper = P5's Samsung PM953, ForestDB, 6.5 h (SMART)");
    t
}

const P5_FIG: &str = "P5 results (6.5 h run)";

fn volume_table(rows: &[MultistreamRow]) -> Table {
    let mut t = Table::new(
        format!("Host writes, erases and GC copies (gc {}; ours, simulated time)", gc_name(GC_MODES[0])),
        &["policy", "host GB", "host GB equal time", "sim s", "erases", "GC copies", "cumulative WAF"],
    );
    for r in rows {
        t.push(vec![
            r.policy.clone(),
            fmt_f(r.host_bytes_written as f64 / 1e9, 3),
            fmt_f(r.host_bytes_equal_time as f64 / 1e9, 3),
            fmt_f(r.sim_seconds, 1),
            r.erases.to_string(),
            r.gc_pages_copied.to_string(),
            fmt_f(r.waf_cumulative, 3),
        ]);
    }
    t.define("host GB equal time = host bytes each policy wrote by the simulated time the shortest run took (P5: 24 h, none 4203.41 GB vs per-type 4556.53 GB)");
    t
}

fn lifetime_table(rows: &[LifetimeRow]) -> Table {
    let mut t = Table::new(
        "Lifetimes per data type (ours: the `none` run's update phase) beside P5 Table 1",
        &["type", "share %", "mean", "median", "paper share %", "paper mean"],
    );
    let p5 = papers::p5();
    for r in rows {
        let paper = p5.find(&[("table", json!(P5_TABLE1)), ("type", json!(r.data_type))]);
        t.push(vec![
            r.data_type.clone(),
            fmt_f(r.share_pct, 2),
            r.mean_writes.map_or("-".into(), |m| fmt_f(m, 0)),
            r.median_writes.map_or("-".into(), |m| m.to_string()),
            papers::cell(paper, "share_pct"),
            papers::cell(paper, "mean_lifetime_writes"),
        ]);
    }
    t.define("lifetime = device page writes between two writes of the same page (mean, median); share = the type's share of page writes");
    t.define("paper = P5 Table 1 (ForestDB, 7.5 GB DB, 4 h overwrite workload; median not given)");
    t
}

const P5_TABLE1: &str = "P5 Table 1 (lifetime analysis)";

fn notes(plan: &Plan, runs: &[Run]) -> Vec<String> {
    let mut n = vec![
        format!("Scaled down from P5's 480 GB drive with 400 GB in 32 DB files: {} MiB of logical space, {:.1} % of it in 32 partitions (one store each, the fill ratio kept), the rest never written", plan.capacity_bytes >> 20, FILL * 100.0),
        format!("Device: preset {PRESET} with 4 KiB pages and its over-provisioning (7 %); P5's PM953 geometry and OP are not published"),
        format!("Documents: {KEY_BYTES}-byte keys, {VALUE_BYTES}-byte values, live data a third of each file, a commit every {OPS_PER_COMMIT} updates of a file (P5 does not state its document size or commit interval)"),
        "Our store is a copy-on-write B+-tree (ForestDB: HB+-trie), so index pages are a larger share of writes than P5's 1.8 %; compaction at 30 % stale bytes (ForestDB's default) rewrites a file's live documents and trims what it freed".into(),
        format!("per-file: {} files over {} non-default streams (file f -> stream 1 + f mod {}); auto: at most {} streams, regrouped online from measured lifetimes", plan.files, plan.device_streams - 1, plan.device_streams - 1, plan.device_streams),
        "The store's write sequence does not depend on the device: every run sees the same writes (only where it stops differs)".into(),
    ];
    if let Some(r) = runs.iter().find(|r| r.policy == StreamPolicy::Auto && r.gc == GC_MODES[0]) {
        let mut groups: std::collections::BTreeMap<u16, Vec<&str>> = Default::default();
        for (_, t, s) in &r.auto_mapping {
            let g = groups.entry(*s).or_default();
            if !g.contains(&t.name()) {
                g.push(t.name());
            }
        }
        let text: Vec<String> = groups
            .iter()
            .map(|(s, ts)| format!("stream {s}: {}", ts.join(", ")))
            .collect();
        n.push(format!("auto's final grouping (types of any file): {}", text.join("; ")));
    }
    n
}

pub fn run(opts: &ReproduceOptions) -> Result<Output> {
    let plan = Plan::new(opts);
    let steps = Steps::new(opts, StreamPolicy::EVERY.len() * GC_MODES.len());
    let mut runs = Vec::new();
    for gc in GC_MODES {
        for p in StreamPolicy::EVERY {
            steps.step(format_args!("policy {} gc {}", p.name(), gc_name(gc)));
            let measure = p == StreamPolicy::NoStreams && gc == GC_MODES[0];
            runs.push(run_one(&plan, p, gc, opts.seed, measure)?);
        }
    }
    let lifetimes = runs.iter().find_map(|r| r.lifetimes.clone());
    let lrows = lifetimes.as_ref().map(lifetime_rows).unwrap_or_default();
    let rows = rows(&runs);
    let mut config = serde_json::to_value(&plan)?;
    config["preset"] = json!(PRESET);
    config["page_bytes"] = json!(PAGE_BYTES);
    config["fill"] = json!(FILL);
    config["value_bytes"] = json!(VALUE_BYTES);
    config["ops_per_commit"] = json!(OPS_PER_COMMIT);
    config["sample_share"] = json!(SAMPLE_SHARE);
    config["flat_windows"] = json!(FLAT_WINDOWS);
    config["flat_tolerance"] = json!(FLAT_TOLERANCE);
    config["lifetime"] = serde_json::to_value(&lrows)?;
    let mut report = Report::new("multistream", opts, config);
    report.set_rows(&rows);
    report.paper = papers::p5().rows.clone();
    report.notes = notes(&plan, &runs);
    report.series = series(&runs, lifetimes.as_ref());
    let tables = vec![waf_table(&rows, &plan), volume_table(&rows), lifetime_table(&lrows)];
    Ok(Output { report, tables })
}
