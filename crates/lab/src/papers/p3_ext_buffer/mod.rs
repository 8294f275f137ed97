//! `flashlab reproduce ext-buffer` — paper P3 (a flash SSD as an extended buffer).
//!
//! Experiment: a page-reference trace (the TPC-C-like generator of `workload::tpcc` by
//! default, or any trace `buffer-sim` reads) through a DRAM main buffer of 4 % of the database
//! and a flash extension of 5 % .. 50 % of it in 5 % steps, under every policy: `lru` and `2q`
//! without flash (disks alone), `lru-ext`, `2q-ext`, `2q-flash`. Elapsed time is P3's cost model
//! (page moves x device time, [`CostModel`]); prices are P3's ([`PriceModel`]).
//! - Figures 3-5: elapsed, main and extended hit ratios per (policy, flash size). The LRU
//!   points (`lru`, `lru-ext`, and the larger DRAM buffers below) come from ONE pass
//!   ([`policy::StackDistances`], exact); the 2Q points from a [`policy::BufferSim`] run each.
//! - Figure 2: `2q-flash` with the Amout share of the flash swept 0.1 .. 0.9 at one flash size.
//! - Figure 6 (same money): each flash size against a DRAM buffer grown by what that flash
//!   costs (DRAM is `dram_per_flash` x flash per GB) with `lru`, and against disks alone on a
//!   RAID-0 pair (one more disk).
//! - `--engine`: the same trace (a prefix at quick scale) through the engine's buffer pool
//!   ([`engine::Pager::with_buffer_policy`]) on devices — the HDD model for the database and a
//!   simulated SSD for the flash, or two real files with `--device file` — reporting device
//!   time beside the cost model's, and whether the pool's page moves equal the simulator's.
//!
//! Database size (the base of every percentage): the TPC-C generator's initial database
//! (`Tpcc::database_pages`), or the trace's distinct pages for `--trace`. P3's findings are
//! `paper` rows (`paper.toml` beside it), compared in a table with the same findings
//! computed from our rows.

pub mod claims;
pub mod figures;
mod flash_area;
mod ledger;
pub mod pg_tpcc;
mod points;
mod rows;
mod why;

pub use rows::{Counters, EngineRow, ExtBufferRow};

use crate::buffer_sim::{policy_config, BufferSimOptions, PriceModel, Size, TraceSpec};
use crate::devices::{self, DeviceKind, DeviceRequest};
use crate::papers;
use crate::parallel;
use crate::report::{fmt_f, Output, Report, ReproduceOptions, Row, Scale, Steps, Table};
use anyhow::{bail, Context, Result};
use engine::Pager;
use policy::{BufferSim, Counts, LogOrder, LruCurve, PolicyKind, StackDistances};
use rustc_hash::FxHashMap;
use serde_json::{json, Value};
use std::path::PathBuf;
use workload::cache_trace::{PageRef, PageTraceFormat};
use workload::tpcc::{Tpcc, TpccConfig};

/// Devices of `--engine`: HDD model + simulated SSD (`sim`), or two real files (`file`).
pub const DEVICES: &[DeviceKind] = &[DeviceKind::Sim, DeviceKind::File];
/// The flash device of `--engine` on `--device sim` unless `--preset` says otherwise: P3's
/// Intel X25-M, calibrated to P3's device times.
pub const DEFAULT_PRESET: &str = "x25m";
const PAGE_BYTES: u32 = 4096;
const MAIN_PCT: f64 = 4.0;
/// 2Q-Flash's Amout share of the flash outside the Figure 2 sweep (P3: 6:4).
const AMOUT: f64 = policy::PolicyConfig::AMOUT_RATIO_DEFAULT;
/// Flash size of the Amout:A1out sweep (Figure 2), % of the database.
const RATIO_SWEEP_FLASH_PCT: f64 = 20.0;
const ENGINE_FLASH_PCTS: [f64; 2] = [20.0, 50.0];
/// The flash log of every figure: P3's circular log ("victim pages are written to the flash
/// SSD sequentially, round robin", §2.2; "each queue is FIFO, implemented on the flash SSD as
/// a circular ring", §2.3).
pub const LOG_ORDER: LogOrder = LogOrder::Circular;
/// Flash sizes (% of the database) of the comparison rows with the other log order.
const COMPARISON_FLASH_PCTS: [f64; 3] = [10.0, 30.0, 50.0];

/// The experiment's own options (the CLI's `--trace`, `--trace-format`, `--engine`).
#[derive(Clone, Debug, Default)]
pub struct ExtBufferOptions {
    /// A trace instead of the TPC-C-like generator.
    pub trace: Option<TraceSpec>,
    /// Also run the trace through the engine's buffer pool on devices.
    pub engine: bool,
}

impl ExtBufferOptions {
    /// From the common options: `trace` + `trace_format` (`text` when absent) and `engine`.
    pub fn from_reproduce(opts: &ReproduceOptions) -> Result<ExtBufferOptions> {
        let trace = match &opts.trace {
            None => None,
            Some(path) => {
                let name = opts.trace_format.as_deref().unwrap_or("text");
                let Some(format) = PageTraceFormat::parse(name) else {
                    bail!("--trace-format {name}: expected {}", PageTraceFormat::HELP);
                };
                Some(TraceSpec {
                    path: path.clone(),
                    format,
                    page_bytes: PAGE_BYTES,
                })
            }
        };
        Ok(ExtBufferOptions {
            trace,
            engine: opts.engine,
        })
    }
}

/// Sizes of one run.
#[derive(Clone, Copy, Debug)]
struct Plan {
    warehouses: u32,
    transactions: u64,
    /// References of the `--engine` runs (a prefix of the trace) on the HDD model + SSD.
    engine_refs: u64,
    /// The same on real files (each page moved is a real I/O: much slower).
    engine_file_refs: u64,
}

fn plan(scale: Scale) -> Plan {
    match scale {
        Scale::Quick => Plan {
            warehouses: 1,
            transactions: 20_000,
            engine_refs: 4_000_000,
            engine_file_refs: 200_000,
        },
        // P3: 1.5 GB (13 warehouses); ~1 hour of BenchmarkSQL, here 20,000 transactions per
        // warehouse.
        Scale::Paper => Plan {
            warehouses: 13,
            transactions: 260_000,
            engine_refs: 4_000_000,
            engine_file_refs: 1_000_000,
        },
    }
}

pub fn run(opts: &ReproduceOptions) -> Result<Output> {
    run_with(opts, &ExtBufferOptions::from_reproduce(opts)?)
}

/// The trace and the database size (pages) the percentages refer to.
fn trace_and_db(
    opts: &ReproduceOptions,
    ext: &ExtBufferOptions,
    p: &Plan,
) -> (TraceSpec, Option<u64>) {
    if let Some(t) = &ext.trace {
        // A generator trace given with its knobs (`--trace-format tpcc`): its initial database
        // is known, as for the default one.
        let db = (t.format == PageTraceFormat::Tpcc)
            .then(|| TpccConfig::parse(&t.path.to_string_lossy()).ok())
            .flatten()
            .map(|c| Tpcc::new(c).database_pages());
        return (t.clone(), db);
    }
    let cfg = TpccConfig {
        warehouses: p.warehouses,
        transactions: Some(p.transactions),
        seed: opts.seed,
        ..TpccConfig::default()
    };
    let spec = format!(
        "warehouses={},transactions={},seed={}",
        p.warehouses, p.transactions, opts.seed
    );
    let trace = TraceSpec {
        path: PathBuf::from(spec),
        format: PageTraceFormat::Tpcc,
        page_bytes: PAGE_BYTES,
    };
    (trace, Some(Tpcc::new(cfg).database_pages()))
}

/// One measured point.
struct Point {
    figure: &'static str,
    kind: PolicyKind,
    main_pages: usize,
    ext_pages: usize,
    amout_ratio: f64,
    raid0: bool,
    /// How its flash logs wrote their slots.
    log_order: LogOrder,
    counts: Counts,
    /// The device WAF of its flash writes (flash_area.rs).
    device_waf: Option<f64>,
    /// What its page moves were (ledger.rs; None for points from the one-pass curve).
    ledger: Option<ledger::LedgerKeys>,
}

/// One simulator pass: the counts, the device WAF of its flash writes, its ledger.
struct Pass {
    counts: Counts,
    device_waf: Option<f64>,
    ledger: ledger::LedgerKeys,
}

struct Ctx {
    trace: TraceSpec,
    db_pages: usize,
}

impl Ctx {
    fn pages(&self, pct: f64) -> usize {
        Size::Percent(pct).resolve(self.db_pages)
    }
    fn pct(&self, pages: usize) -> f64 {
        100.0 * pages as f64 / self.db_pages.max(1) as f64
    }

    fn sim_opts(&self, kind: PolicyKind, amout_ratio: f64, raid0: bool) -> BufferSimOptions {
        let mut o = BufferSimOptions::new(self.trace.clone(), kind, Size::Pages(0));
        o.amout_ratio = amout_ratio;
        o.cost.raid0 = raid0;
        o
    }

    fn row(&self, p: &Point, baseline_ms: f64) -> ExtBufferRow {
        let o = self.sim_opts(p.kind, p.amout_ratio, p.raid0);
        let counts = Counters::new(&o, &p.counts, p.main_pages, p.ext_pages);
        ExtBufferRow {
            figure: p.figure.into(),
            main_pct: self.pct(p.main_pages),
            flash_pct: self.pct(p.ext_pages),
            amout_ratio: p.amout_ratio,
            disks: if p.raid0 { "raid0-pair" } else { "one" }.into(),
            speedup_vs_disks_alone_pct: (baseline_ms / counts.elapsed_ms.max(1e-9) - 1.0) * 100.0,
            flash_device_waf: p.device_waf,
            flash_log: if p.ext_pages == 0 {
                "none".into()
            } else {
                p.log_order.name().into()
            },
            ledger: p.ledger,
            counts,
        }
    }

    /// One simulator pass of `kind` (any policy, so also `2q` and the 2Q-based ones), its
    /// flash writes replayed on the flash area's SSD: the counts and the device WAF.
    #[allow(clippy::too_many_arguments)]
    fn simulate(
        &self,
        kind: PolicyKind,
        main: usize,
        ext: usize,
        amout: f64,
        order: LogOrder,
        limit: Option<u64>,
    ) -> Result<Pass> {
        let mut o = self.sim_opts(kind, amout, false);
        o.limit = limit;
        let mut config = policy_config(&o, main, ext);
        config.log_order = order;
        let mut sim = BufferSim::new(&config).context("policy sizes")?;
        let mut area = flash_area::FlashArea::new(&config.log_capacities())?;
        let mut ledger = ledger::Ledger::default();
        for r in self.trace.open()?.take(limit.unwrap_or(u64::MAX) as usize) {
            let r = r?;
            let a = sim.reference(r.page, r.write);
            ledger.record(r.page, &a);
            if let Some(area) = area.as_mut() {
                area.record(&a)?;
            }
        }
        if let Some(area) = &area {
            area.verify()?;
        }
        let counts = sim.counts();
        Ok(Pass {
            counts,
            device_waf: area.and_then(|a| a.waf()),
            ledger: ledger.finish(&counts),
        })
    }
}

fn one_pass_curve(trace: &TraceSpec) -> Result<LruCurve> {
    let mut sd = StackDistances::new();
    for r in trace.open()? {
        let r = r?;
        sd.reference(r.page, r.write);
    }
    Ok(sd.curve())
}

pub fn run_with(opts: &ReproduceOptions, ext: &ExtBufferOptions) -> Result<Output> {
    let p = plan(opts.scale);
    let (trace, tpcc_db) = trace_and_db(opts, ext, &p);
    let pg_db = pg_tpcc::database_pages(&trace)?;
    // The curve, 2q, 2 policies x 10 flash sizes, 9 ratios, the engine.
    let pg = ext
        .trace
        .as_ref()
        .is_some_and(|t| t.format == PageTraceFormat::Pg);
    let comparisons = 3 * COMPARISON_FLASH_PCTS.len();
    let steps = Steps::new(
        opts,
        2 + 3 * 10 + 9 + comparisons + ext.engine as usize + pg as usize,
    );
    steps.step(format!("one-pass LRU curve of {}", trace.path.display()));
    let curve = one_pass_curve(&trace)?;
    opts.check()?;
    if curve.references == 0 {
        anyhow::bail!(
            "{}: the trace is empty (no page references), so there is nothing to measure; give a trace with references",
            trace.path.display()
        );
    }
    let db_pages = tpcc_db.or(pg_db).map_or(curve.distinct(), |d| d as usize);
    let ctx = Ctx { trace, db_pages };
    let main = ctx.pages(MAIN_PCT).max(1);
    let points = points::measure(&ctx, &curve, main, &steps, &opts.jobs)?;
    let baseline_ms = ctx
        .sim_opts(PolicyKind::Lru, AMOUT, false)
        .cost
        .elapsed_ms(&points[0].counts);
    let rows: Vec<ExtBufferRow> = points.iter().map(|pt| ctx.row(pt, baseline_ms)).collect();
    let mut engine_rows = Vec::new();
    if ext.engine {
        steps.step("the engine's buffer pool on devices");
        engine_rows = engine_runs(opts, &ctx, main, &p)?;
    }
    let paper = papers::p3();
    let mut report = Report::new(
        "ext-buffer",
        opts,
        json!({
            "trace": ctx.trace.path.display().to_string(),
            "trace_format": ctx.trace.format.name(),
            "database_pages": ctx.db_pages,
            "database_is": match (tpcc_db, pg_db) {
                (Some(_), _) => "tpcc initial database",
                (None, Some(_)) => "the PostgreSQL database (trace header, 8 KiB pages)",
                _ => "distinct pages of the trace",
            },
            "references": curve.references,
            "distinct_pages": curve.distinct(),
            "page_bytes": PAGE_BYTES,
            "main_pct": MAIN_PCT,
            "main_pages": main,
            "ratio_sweep_flash_pct": RATIO_SWEEP_FLASH_PCT,
            "cost_model": ctx.sim_opts(PolicyKind::Lru, AMOUT, false).cost,
            "price_model": PriceModel::default(),
            "engine": ext.engine,
            "sim_preset": ext.engine.then(|| opts.preset_or(DEFAULT_PRESET)),
        }),
    );
    report.set_rows(&rows);
    let engine_json: Vec<Row> = {
        let mut r = Report::new("ext-buffer", opts, Value::Null);
        r.set_rows(&engine_rows);
        r.rows
    };
    report.rows.extend(engine_json);
    report.paper = paper.rows.clone();
    report.claims = claims::claims(&report);
    report.notes = notes(&ctx, &curve, tpcc_db.is_some());
    report.notes.extend(write_back_note(&rows));
    let why = why::reasons(&why::Inputs {
        rows: &rows,
        curve: &curve,
        db_pages: ctx.db_pages,
        main_pages: main,
    });
    if let Some(why) = why {
        why.annotate(&mut report.claims);
        report.notes.extend(why.notes());
    }
    if ctx.trace.format == PageTraceFormat::Pg {
        report
            .notes
            .push(pg_tpcc::wal_note(&ctx.trace.path, baseline_ms)?);
    }
    let mut tables = vec![
        grid_table(&rows),
        log_order_table(&rows),
        ratio_table(&rows),
        same_cost_table(&rows),
        findings_table(&rows, paper),
    ];
    if !engine_rows.is_empty() {
        tables.push(engine_table(&engine_rows));
    }
    if ctx.trace.format == PageTraceFormat::Pg {
        steps.step("the same claims on the TPC-C-like generator");
        let (table, rows, notes) =
            pg_tpcc::beside_generator(opts, &ctx.trace.path, &report.claims)?;
        tables.push(table);
        report.rows.extend(rows);
        report.notes.extend(notes);
    }
    Ok(Output { report, tables })
}

fn of_figure<'a>(
    rows: &'a [ExtBufferRow],
    fig: &'a str,
) -> impl Iterator<Item = &'a ExtBufferRow> + 'a {
    rows.iter().filter(move |r| r.figure == fig)
}

fn grid_table(rows: &[ExtBufferRow]) -> Table {
    let mut t = Table::new(
        "P3 Figures 3-5 (measured): main buffer 4 % of the database; elapsed = cost model",
        &[
            "policy",
            "flash_pct",
            "hit_ratio",
            "ext_hit_ratio",
            "elapsed_ms",
            "speedup_vs_disks_alone_pct",
            "flash_writes",
            "flash_device_waf",
            "price_usd",
        ],
    );
    for r in of_figure(rows, "fig3-5") {
        t.push(vec![
            r.counts.policy.as_str().into(),
            fmt_f(r.flash_pct, 0),
            fmt_f(r.counts.hit_ratio, 4),
            fmt_f(r.counts.ext_hit_ratio, 4),
            fmt_f(r.counts.elapsed_ms, 0),
            fmt_f(r.speedup_vs_disks_alone_pct, 0),
            r.counts.flash_writes.to_string(),
            r.flash_device_waf.map_or("-".into(), |w| fmt_f(w, 3)),
            fmt_f(r.counts.price_usd, 2),
        ]);
    }
    t
}

/// P3's circular log (the figures) beside slot refill, at the comparison's flash sizes.
fn log_order_table(rows: &[ExtBufferRow]) -> Table {
    let mut t = Table::new(
        "Flash log (measured): P3's circular log (the figures' rows) vs refilling the slot a read-back freed",
        &[
            "policy",
            "flash_pct",
            "ext_hit_ratio circular / slot-refill",
            "hit_ratio circular / slot-refill",
            "elapsed_ms circular / slot-refill",
            "flash_device_waf circular / slot-refill",
        ],
    );
    let waf = |r: &ExtBufferRow| r.flash_device_waf.map_or("-".into(), |w| fmt_f(w, 3));
    for s in of_figure(rows, points::COMPARISON_FIGURE) {
        let Some(c) = of_figure(rows, "fig3-5").find(|c| {
            c.counts.policy == s.counts.policy && c.counts.ext_pages == s.counts.ext_pages
        }) else {
            continue;
        };
        let pair = |a: f64, b: f64, d| format!("{} / {}", fmt_f(a, d), fmt_f(b, d));
        t.push(vec![
            s.counts.policy.clone(),
            fmt_f(s.flash_pct, 0),
            pair(c.counts.ext_hit_ratio, s.counts.ext_hit_ratio, 4),
            pair(c.counts.hit_ratio, s.counts.hit_ratio, 4),
            pair(c.counts.elapsed_ms, s.counts.elapsed_ms, 0),
            format!("{} / {}", waf(c), waf(s)),
        ]);
    }
    t
}

fn ratio_table(rows: &[ExtBufferRow]) -> Table {
    let mut t = Table::new(
        format!("P3 Figure 2 (measured): 2q-flash, flash {RATIO_SWEEP_FLASH_PCT} % of the database, Amout share swept (paper: best at 6:4)"),
        &["amout_share", "amout:a1out", "hit_ratio", "ext_hit_ratio", "elapsed_ms"],
    );
    for r in of_figure(rows, "fig2") {
        let a = r.amout_ratio;
        t.push(vec![
            fmt_f(a, 1),
            format!("{}:{}", (a * 10.0).round(), 10.0 - (a * 10.0).round()),
            fmt_f(r.counts.hit_ratio, 4),
            fmt_f(r.counts.ext_hit_ratio, 4),
            fmt_f(r.counts.elapsed_ms, 0),
        ]);
    }
    t
}

fn elapsed_of(rows: &[ExtBufferRow], fig: &str, policy: &str, flash_pct: f64) -> Option<f64> {
    of_figure(rows, fig)
        .find(|r| r.counts.policy.as_str() == policy && (r.flash_pct - flash_pct).abs() < 2.5)
        .map(|r| r.counts.elapsed_ms)
}

fn same_cost_table(rows: &[ExtBufferRow]) -> Table {
    let mut t = Table::new(
        "P3 Figure 6 (measured): each flash size vs the same money on DRAM (lru), and vs a RAID-0 pair (lru, main 4 %)",
        &["flash_pct", "2q-flash_ms", "lru-ext_ms", "same_cost_dram_pct", "same_cost_dram_ms", "2q-flash_gain_vs_dram_pct", "raid0_ms", "2q-flash_gain_vs_raid0_pct"],
    );
    let raid0 = of_figure(rows, "fig6-raid0")
        .next()
        .map(|r| r.counts.elapsed_ms)
        .unwrap_or(f64::NAN);
    let ext: Vec<&ExtBufferRow> = of_figure(rows, "fig3-5")
        .filter(|r| r.counts.policy.as_str() == "2q-flash")
        .collect();
    for (r, d) in ext.iter().zip(of_figure(rows, "fig6-dram")) {
        let f = r.flash_pct;
        let q = r.counts.elapsed_ms;
        let dram = d.counts.elapsed_ms;
        t.push(vec![
            fmt_f(f, 0),
            fmt_f(q, 0),
            fmt_f(
                elapsed_of(rows, "fig3-5", "lru-ext", f).unwrap_or(f64::NAN),
                0,
            ),
            fmt_f(d.main_pct, 2),
            fmt_f(dram, 0),
            fmt_f((dram - q) / dram * 100.0, 1),
            fmt_f(raid0, 0),
            fmt_f((raid0 - q) / raid0 * 100.0, 1),
        ]);
    }
    t
}

/// The flash size after which a policy's elapsed time improves by less than 1 % per step.
fn saturation_pct(rows: &[ExtBufferRow], policy: &str) -> f64 {
    let pts: Vec<(f64, f64)> = of_figure(rows, "fig3-5")
        .filter(|r| r.counts.policy.as_str() == policy)
        .map(|r| (r.flash_pct, r.counts.elapsed_ms))
        .collect();
    pts.windows(2)
        .find(|w| (w[0].1 - w[1].1) / w[0].1 < 0.01)
        .map_or(pts.last().map_or(f64::NAN, |p| p.0), |w| w[0].0)
}

/// P3's findings (paper column) beside the same findings computed from our rows.
fn findings_table(rows: &[ExtBufferRow], paper: &papers::Paper) -> Table {
    let mut t = Table::new(
        "P3's findings (paper column, from p3.toml) beside ours (measured, this run)",
        &["finding", "paper (P3)", "ours (measured)"],
    );
    for (key, ours) in our_findings(rows) {
        let claim = paper
            .find(&[("finding", json!(key))])
            .map(|r| papers::cell(Some(r), "claim"))
            .unwrap_or_default();
        t.push(vec![key.into(), claim, ours]);
    }
    t
}

/// Each of P3's findings (by its `finding` key in p3.toml), computed from our rows.
fn our_findings(rows: &[ExtBufferRow]) -> Vec<(&'static str, String)> {
    let mut t = Vec::new();
    let ext_policies = ["lru-ext", "2q-ext", "2q-flash"];
    let ext_rows: Vec<&ExtBufferRow> = of_figure(rows, "fig3-5")
        .filter(|r| ext_policies.contains(&r.counts.policy.as_str()))
        .collect();
    let min_speed = ext_rows
        .iter()
        .map(|r| r.speedup_vs_disks_alone_pct)
        .fold(f64::INFINITY, f64::min);
    let max_speed = ext_rows
        .iter()
        .map(|r| r.speedup_vs_disks_alone_pct)
        .fold(f64::NEG_INFINITY, f64::max);
    let (eh_min, eh_max) = ext_rows
        .iter()
        .map(|r| r.counts.ext_hit_ratio)
        .fold((f64::INFINITY, f64::NEG_INFINITY), |(a, b), x| {
            (a.min(x), b.max(x))
        });
    let best_at_50 = ext_policies
        .iter()
        .filter_map(|p| elapsed_of(rows, "fig3-5", p, 50.0).map(|e| (*p, e)))
        .min_by(|a, b| a.1.total_cmp(&b.1))
        .map_or("", |b| b.0);
    let ranking = |f: f64| {
        let mut v: Vec<(&str, f64)> = ext_policies
            .iter()
            .filter_map(|p| elapsed_of(rows, "fig3-5", p, f).map(|e| (*p, e)))
            .collect();
        v.sort_by(|a, b| a.1.total_cmp(&b.1));
        v.iter().map(|x| x.0).collect::<Vec<_>>().join(" < ")
    };
    let best_ratio = of_figure(rows, "fig2")
        .min_by(|a, b| a.counts.elapsed_ms.total_cmp(&b.counts.elapsed_ms))
        .map(|r| r.amout_ratio)
        .unwrap_or(f64::NAN);
    let dram_gain = of_figure(rows, "fig3-5")
        .filter(|r| r.counts.policy.as_str() == "2q-flash")
        .zip(of_figure(rows, "fig6-dram"))
        .map(|(q, d)| (d.counts.elapsed_ms - q.counts.elapsed_ms) / d.counts.elapsed_ms * 100.0)
        .fold(f64::NEG_INFINITY, f64::max);
    let rowv =
        |t: &mut Vec<(&'static str, String)>, k: &'static str, ours: String| t.push((k, ours));
    rowv(
        &mut t,
        "speedup_vs_disks_alone",
        format!("{min_speed:.0} % .. {max_speed:.0} % faster (every ext policy, 5..50 % flash)"),
    );
    rowv(
        &mut t,
        "ext_hit_ratio",
        format!("{eh_min:.3} .. {eh_max:.3}"),
    );
    rowv(
        &mut t,
        "best_policy",
        format!(
            "{best_at_50} at 50 % flash; at 10 %: {}; at 50 %: {}",
            ranking(10.0),
            ranking(50.0)
        ),
    );
    rowv(
        &mut t,
        "saturation",
        format!(
            "<1 %/step after: lru-ext {:.0} %, 2q-ext {:.0} %, 2q-flash {:.0} %",
            saturation_pct(rows, "lru-ext"),
            saturation_pct(rows, "2q-ext"),
            saturation_pct(rows, "2q-flash")
        ),
    );
    rowv(
        &mut t,
        "best_amout_ratio",
        format!("Amout share {best_ratio:.1} (of 0.1 .. 0.9)"),
    );
    rowv(
        &mut t,
        "vs_same_cost_dram",
        format!("up to {dram_gain:.1} % less time (2q-flash vs lru with the same money on DRAM)"),
    );
    let raid0 = of_figure(rows, "fig6-raid0")
        .next()
        .map(|r| r.counts.elapsed_ms)
        .unwrap_or(f64::NAN);
    let g = |f| {
        elapsed_of(rows, "fig3-5", "2q-flash", f).map_or(f64::NAN, |q| (raid0 - q) / raid0 * 100.0)
    };
    rowv(
        &mut t,
        "vs_raid0",
        format!(
            "2q-flash {:.1} % less time than RAID-0 at 5 % flash, {:.1} % at 50 %",
            g(5.0),
            g(50.0)
        ),
    );
    t
}

fn notes(ctx: &Ctx, curve: &LruCurve, tpcc: bool) -> Vec<String> {
    let mut n = vec![
        "elapsed_ms is P3's cost model (page moves x device time: disk 2.6 ms, RAID-0 pair 1.6 ms, flash read 0.03 ms, flash sequential write 0.33 ms), as in the paper; engine rows add device_ms, measured on the devices' clocks".to_string(),
        "flash log: every figure uses P3's circular log (a write head goes round the slots in order; a page read back leaves a hole rewritten when the head comes round; a live page under the head is the oldest and leaves flash); rows of figure fig3-5-slot-refill repeat the ext policies at 10/30/50 % flash with a log that refills the slot a read-back freed, out of order (flashlab's log before P3's was built; it holds more pages, but scatters the device's writes)".to_string(),
        "lru points without flash (and the same-cost DRAM points) come from one stack-distance pass (exact, property-tested against simulation); lru-ext with slot refill from the same pass (main + log is one LRU list); every other point, lru-ext with P3's circular log included, from one simulator pass each".to_string(),
        "same-cost DRAM rows use lru (P3 does not say which policy its DRAM-only buffer used); the RAID-0 row is lru on disks alone with 4 % DRAM".to_string(),
        "paper rows are P3's qualitative findings (it prints no table of results); no paper figure appears in rows".to_string(),
    ];
    if let Ok(min) = flash_area::FlashArea::smallest_drive_pages() {
        n.push(format!("flash_device_waf: each point's flash writes (victims appended to the flash log at their slots) replayed on a simulated SSD holding only the flash area: preset {}'s 128-page blocks, 7 % over-provisioning and greedy GC on one die, timing off; the area alone is the drive's worst case (P3's area was a partition of an 80 GB drive whose unused rest adds spare space); areas below the geometry's smallest drive ({min} pages, {:.1} % of this database) sit on that drive with its rest unused, so their WAF is lower for that reason; P3's circular log overwrites its slots in order, holes included (WAF 1 with one log; 2q-flash's two rings share the drive's write stream and die at different rates, so GC may copy); slot refill fills a freed slot out of order, so GC copies the log's live pages", flash_area::PRESET, ctx.pct(min as usize)));
    }
    if tpcc {
        n.push(format!(
            "trace: the TPC-C-like generator (workload::tpcc), not P3's PostgreSQL/BenchmarkSQL trace: data and index pages only (no log pages), NURand skew, growing tables; {} references over {} distinct pages, database {} pages; our main hit ratio at 4 % is {:.3}",
            curve.references,
            curve.distinct(),
            ctx.db_pages,
            curve.hits(ctx.pages(MAIN_PCT)) as f64 / curve.references.max(1) as f64
        ));
    }
    n
}

/// What bounds the speed-up over disks alone: dirty write-backs (P3's rule, the same for
/// every flash size) and flash writes, measured on `lru-ext` at the largest flash size.
fn write_back_note(rows: &[ExtBufferRow]) -> Option<String> {
    let r = of_figure(rows, "fig3-5")
        .filter(|r| r.counts.policy.as_str() == "lru-ext")
        .last()?;
    let cost = crate::buffer_sim::CostModel::default();
    let (elapsed, writes) = (r.counts.elapsed_ms, r.counts.disk_writes as f64);
    let flash_w = r.counts.flash_writes as f64 * cost.flash_write_ms;
    let write_back = writes * cost.disk_ms;
    // Every miss found on flash: disk reads vanish, flash reads replace them.
    let floor = write_back + flash_w + r.counts.misses as f64 * cost.flash_read_ms;
    let disks_alone = elapsed * (1.0 + r.speedup_vs_disks_alone_pct / 100.0);
    Some(format!(
        "lru-ext at {:.0} % flash: dirty write-backs to disk take {:.0} % of the elapsed time and flash writes {:.0} %; even with every miss found on flash the speed-up over disks alone could not exceed {:.0} % on this trace",
        r.flash_pct,
        100.0 * write_back / elapsed,
        100.0 * flash_w / elapsed,
        (disks_alone / floor - 1.0) * 100.0
    ))
}

/// The dense device page of each trace page, in first-reference order.
struct DenseIds(FxHashMap<u64, u64>);

impl DenseIds {
    fn get(&mut self, page: u64) -> u64 {
        let next = self.0.len() as u64;
        *self.0.entry(page).or_insert(next)
    }
}

fn engine_runs(
    opts: &ReproduceOptions,
    ctx: &Ctx,
    main: usize,
    p: &Plan,
) -> Result<Vec<EngineRow>> {
    let kind = match opts.device {
        crate::DeviceChoice::One(k) => k,
        crate::DeviceChoice::All => DeviceKind::Sim,
    };
    let dir = devices::temp_dir(opts.dir.as_deref())?;
    let fs = if kind == DeviceKind::File {
        Some(devices::check_timing_dir(dir.path(), opts.allow_memory_fs)?)
    } else {
        None
    };
    let prefix = match kind {
        DeviceKind::File => p.engine_file_refs,
        _ => p.engine_refs,
    };
    let refs: Vec<PageRef> = ctx
        .trace
        .open()?
        .take(prefix as usize)
        .collect::<Result<_, _>>()?;
    let distinct = refs
        .iter()
        .map(|r| r.page)
        .collect::<rustc_hash::FxHashSet<_>>()
        .len() as u64;
    let mut runs = vec![(PolicyKind::Lru, 0usize)];
    for f in ENGINE_FLASH_PCTS {
        for k in [
            PolicyKind::LruExt,
            PolicyKind::TwoQExt,
            PolicyKind::TwoQFlash,
        ] {
            runs.push((k, ctx.pages(f)));
        }
    }
    let one = |(i, (k, f)): (usize, (PolicyKind, usize))| {
        opts.progress(format!(
            "engine: {} flash {} pages on {}",
            k.name(),
            f,
            kind.name()
        ));
        opts.check()?;
        let mut r = engine_one(opts, ctx, kind, dir.path(), i, &refs, distinct, main, k, f)?;
        r.file_system = fs.clone();
        Ok(r)
    };
    let numbered: Vec<_> = runs.into_iter().enumerate().collect();
    match kind {
        // Wall-clock timings on real files run alone (nothing else on their disk and cores).
        DeviceKind::File => numbered.into_iter().map(one).collect(),
        _ => parallel::try_map(&opts.jobs, numbered, one),
    }
}

#[allow(clippy::too_many_arguments)]
fn engine_one(
    opts: &ReproduceOptions,
    ctx: &Ctx,
    kind: DeviceKind,
    dir: &std::path::Path,
    i: usize,
    refs: &[PageRef],
    distinct: u64,
    main: usize,
    policy: PolicyKind,
    ext_pages: usize,
) -> Result<EngineRow> {
    let pb = PAGE_BYTES as usize;
    let req = |pages: u64, name: String| DeviceRequest {
        page_bytes: pb,
        pages,
        sim_min_bytes: pages * pb as u64,
        sim_preset: opts.preset_or(DEFAULT_PRESET),
        queue_depth: 1,
        file_name: name,
        io_uring_fixed: true,
        io_uring_setup: blockdev::RingSetup::default(),
        read_thread: false,
    };
    let (db_kind, flash_kind) = match kind {
        DeviceKind::File => (DeviceKind::File, DeviceKind::File),
        _ => (DeviceKind::Hdd, DeviceKind::Sim),
    };
    let db = devices::open(db_kind, &req(distinct, format!("db-{i}")), dir)?;
    let flash = if policy.is_extended() {
        Some(devices::open(
            flash_kind,
            &req(ext_pages as u64, format!("flash-{i}")),
            dir,
        )?)
    } else {
        None
    };
    let clock = db.clock_kind();
    let mut config = policy::PolicyConfig::new(policy, main, ext_pages);
    config.log_order = LOG_ORDER;
    let mut pager = Pager::with_buffer_policy(db, &config, flash)?;
    let mut ids = DenseIds(FxHashMap::default());
    let t0 = std::time::Instant::now();
    for (n, r) in refs.iter().enumerate() {
        let f = pager.fetch(ids.get(r.page))?;
        if r.write {
            pager.data_mut(f)[..8].copy_from_slice(&(n as u64).to_le_bytes());
        }
        pager.unpin(f);
    }
    let wall_s = t0.elapsed().as_secs_f64();
    let (s, x) = (pager.stats(), pager.flash_stats().unwrap_or_default());
    let counts = Counts {
        references: refs.len() as u64,
        writes: refs.iter().filter(|r| r.write).count() as u64,
        hits: s.hits,
        misses: s.misses,
        ext_hits: x.ext_hits,
        disk_reads: s.pages_read,
        disk_writes: s.writebacks,
        flash_reads: x.flash_reads,
        flash_writes: x.flash_writes,
        flash_displaced: x.displaced,
    };
    let sim = ctx
        .simulate(
            policy,
            main,
            ext_pages,
            config.amout_ratio,
            config.log_order,
            Some(refs.len() as u64),
        )?
        .counts;
    let mut o = ctx.sim_opts(policy, config.amout_ratio, false);
    o.limit = Some(refs.len() as u64);
    let device_ns = s.read_ns + s.write_ns + x.read_ns + x.write_ns;
    let device_s = devices::phase_seconds(clock, wall_s, device_ns);
    let same = (
        sim.hits,
        sim.misses,
        sim.ext_hits,
        sim.disk_reads,
        sim.disk_writes,
        sim.flash_writes,
    ) == (
        counts.hits,
        counts.misses,
        counts.ext_hits,
        counts.disk_reads,
        counts.disk_writes,
        counts.flash_writes,
    );
    Ok(EngineRow {
        figure: "engine".into(),
        main_pct: ctx.pct(main),
        flash_pct: ctx.pct(ext_pages),
        device: if kind == DeviceKind::File {
            "file+file"
        } else {
            "hdd-model+sim-ssd"
        }
        .into(),
        device_ms: device_s * 1e3,
        db_device_ms: (s.read_ns + s.write_ns) as f64 / 1e6,
        flash_device_ms: (x.read_ns + x.write_ns) as f64 / 1e6,
        flash_fallbacks: x.fallbacks(),
        counts_match_simulator: same,
        wall_seconds: wall_s,
        file_system: None,
        counts: Counters::new(&o, &counts, main, ext_pages),
    })
}

fn engine_table(rows: &[EngineRow]) -> Table {
    let mut t = Table::new(
        "--engine (measured): the engine's buffer pool on devices, a prefix of the trace; device time beside the cost model",
        &["policy", "flash_pct", "device", "hit_ratio", "ext_hit_ratio", "elapsed_ms (cost model)", "device_ms", "fallbacks", "counts = simulator"],
    );
    for r in rows {
        t.push(vec![
            r.counts.policy.clone(),
            fmt_f(r.flash_pct, 0),
            r.device.clone(),
            fmt_f(r.counts.hit_ratio, 4),
            fmt_f(r.counts.ext_hit_ratio, 4),
            fmt_f(r.counts.elapsed_ms, 0),
            fmt_f(r.device_ms, 0),
            r.flash_fallbacks.to_string(),
            r.counts_match_simulator.to_string(),
        ]);
    }
    t
}
