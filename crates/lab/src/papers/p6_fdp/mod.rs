//! `flashlab reproduce fdp` — NVMe Flexible Data Placement (FDP) under a flash cache.
//!
//! Experiment: a flash cache with CacheLib's two engines (`workload::flash_cache`: 4 KiB
//! buckets rewritten at random in the first `SMALL_SPACE` of the cache, 16 MiB regions
//! written in order and reused FIFO in the rest; `SMALL_WRITES` of the written pages are
//! bucket writes) on a simulated FDP SSD (`tlc-nvme-2024`'s pages and blocks, 4 dies as one
//! reclaim group, `OP` spare), for each utilisation (the share of the logical space the cache
//! uses; the rest is trimmed), each placement (a stream policy by its `--stream-policy` name:
//! `none` puts every write on handle 0, `hot-cold` puts each engine on its own handle — the
//! small-object region is the workload's hot set), each reclaim-unit size (small: one erase
//! block; large: `LARGE_RU_SHARE` of the device, as LMCache's 16 GiB RUs on a 960 GB drive,
//! shaped as FDP drives build them: a stack of superblocks, the same number of erase blocks on
//! every die, pages striped across the dies, reclaimed whole) and each handle type (initially
//! or persistently isolated). The runs are independent and go side by side (`--jobs`).
//!
//! Measured: the device WAF of the second half of `write_volume_x` capacities written (the
//! first half brings GC to its steady state), and over the whole run the GC copies out of each
//! handle's reclaim units and out of the shared GC units, as shares of the host pages.

pub mod claims;
pub mod figures;

use crate::report::{fmt_f, Output, Report, ReproduceOptions, Scale, Steps, Table};
use crate::sim::{Precondition, SimOptions, SimResult};
use anyhow::{Context, Result};
use policy::streams::LbaPolicySpec;
use serde::{Deserialize, Serialize};
use serde_json::json;
use ssd::config::fdp::{spanning_dies, with_fdp};
use ssd::{GcPool, Isolation, SsdConfig};

/// The drive class the device starts from (its page and block sizes).
pub const PRESET: &str = "tlc-nvme-2024";
/// Dies (one reclaim group: the device's GC pool).
const CHANNELS: u32 = 2;
const DIES_PER_CHANNEL: u32 = 2;
/// Pages per erase block (4 MiB blocks of 16 KiB pages).
const PAGES_PER_BLOCK: u32 = 256;
/// Spare area: enough for the GC reserve and every handle's open RU in whole large RUs.
pub const OP: f64 = 0.12;
/// A large RU's share of the device's blocks (LMCache: 16 GiB RUs on a 960 GB drive, 1/60).
pub const LARGE_RU_SHARE: u32 = 64;
/// Share of the cache space in 4 KiB buckets (BigHash).
pub const SMALL_SPACE: f64 = 0.05;
/// Share of written pages that are bucket writes.
pub const SMALL_WRITES: f64 = 0.5;
/// The utilisation of the published LMCache figures.
pub const PAPER_UTILISATION: f64 = 0.89;

/// Sizes and switches of one reproduction.
#[derive(Clone, Debug)]
pub struct Plan {
    pub capacity_bytes: u64,
    pub utilisations: Vec<f64>,
    /// Placements by their `--stream-policy` name (any `LbaPolicySpec` form, e.g. an oracle
    /// once the policy crate offers one).
    pub placements: Vec<String>,
    pub isolations: Vec<Isolation>,
    /// Host writes in capacities; WAF is measured over the second half.
    pub write_volume_x: f64,
    pub small_space: f64,
    pub small_writes: f64,
}

impl Plan {
    pub fn new(opts: &ReproduceOptions) -> Plan {
        let (capacity_bytes, write_volume_x) = match opts.scale {
            Scale::Quick => (1 << 30, 8.0),
            Scale::Paper => (16 << 30, 12.0),
        };
        Plan {
            capacity_bytes: opts.capacity.unwrap_or(capacity_bytes),
            utilisations: vec![0.5, 0.6, 0.7, 0.8, PAPER_UTILISATION, 0.95],
            // `oracle`: every write's death time known (a first pass of the same workload):
            // the best placement the handles allow, beside the published policies.
            placements: vec!["none".into(), "hot-cold".into(), "oracle".into()],
            isolations: Isolation::ALL.to_vec(),
            write_volume_x,
            small_space: SMALL_SPACE,
            small_writes: SMALL_WRITES,
        }
    }
}

/// One run: a utilisation, a placement, an RU size and a handle type.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct FdpRow {
    pub utilisation: f64,
    /// The stream policy's name (`none`, `hot-cold`: one handle per engine).
    pub placement: String,
    /// `small` (one erase block) or `large` (`LARGE_RU_SHARE` of the device).
    pub ru: String,
    pub ru_bytes: u64,
    /// Dies the RU spans (large: every die, a stack of superblocks).
    pub ru_dies: u32,
    /// `initial` or `persistent`.
    pub isolation: String,
    /// Device WAF over the second half of the run (steady state).
    pub waf: f64,
    /// Device WAF over the whole run.
    pub waf_total: f64,
    pub host_pages_written: u64,
    /// GC copies out of the large-object handle's RUs (handle 0), per host page.
    pub gc_copies_large_per_host_page: f64,
    /// GC copies out of the small-object handle's RUs (handle 1), per host page.
    pub gc_copies_small_per_host_page: f64,
    /// GC copies out of the shared GC RUs (initially isolated handles), per host page.
    pub gc_copies_shared_per_host_page: f64,
}

/// The placement's label in tables and plots.
pub fn placement_label(p: &str) -> &str {
    match p {
        "none" => "no placement",
        "hot-cold" => "per-engine handles",
        "oracle" => "oracle (death times known)",
        other => other,
    }
}

/// The FDP device of `plan`: 4 dies as one reclaim group, `blocks_per_die` a multiple of
/// `LARGE_RU_SHARE` (a large RU takes the same whole number of blocks on every die), about
/// `capacity_bytes` of flash.
pub fn device(plan: &Plan) -> Result<SsdConfig> {
    let mut c = SsdConfig::preset(PRESET)?;
    let dies = CHANNELS * DIES_PER_CHANNEL;
    let g = &mut c.geometry;
    g.channels = CHANNELS;
    g.dies_per_channel = DIES_PER_CHANNEL;
    g.planes_per_die = 1;
    g.pages_per_block = PAGES_PER_BLOCK;
    let block_bytes = PAGES_PER_BLOCK as u64 * g.page_bytes as u64;
    let unit = LARGE_RU_SHARE as u64;
    let units = (plan.capacity_bytes / (block_bytes * dies as u64 * unit)).max(1);
    g.blocks_per_plane = (units * unit) as u32;
    c.timing.enabled = false;
    c.ftl.op = OP;
    c.ftl.gc_pool = GcPool::Device;
    c.ftl.gc_free_blocks_min = 1;
    c.ftl.data = ssd::DataMode::None;
    Ok(c)
}

/// One RU size: its label, erase blocks on each die it spans, and the dies it spans.
#[derive(Clone, Copy, Debug)]
pub struct RuSize {
    pub label: &'static str,
    pub blocks_per_die: u32,
    pub dies: u32,
}

impl RuSize {
    /// Erase blocks in one RU.
    pub fn blocks(&self) -> u32 {
        self.blocks_per_die * self.dies
    }
}

/// Each RU size on `cfg`: small, one erase block; large, `LARGE_RU_SHARE` of the device as
/// superblocks across every die.
pub fn ru_sizes(cfg: &SsdConfig) -> [RuSize; 2] {
    [
        RuSize {
            label: "small",
            blocks_per_die: 1,
            dies: 1,
        },
        RuSize {
            label: "large",
            blocks_per_die: cfg.blocks_per_die() / LARGE_RU_SHARE,
            dies: cfg.dies(),
        },
    ]
}

/// `base` with FDP: 2 handles, RUs of `ru`, handles of `isolation`.
pub fn fdp_config(base: &SsdConfig, ru: RuSize, isolation: Isolation) -> SsdConfig {
    spanning_dies(&with_fdp(base, 2, ru.blocks_per_die, isolation), ru.dies)
}

/// WAF over the second half of a run: its timeline's intervals hold equal host pages.
fn steady_waf(r: &SimResult) -> Option<f64> {
    let w: Vec<f64> = r.timeline.iter().filter_map(|p| p.waf_interval).collect();
    let half = &w[w.len() / 2..];
    (!half.is_empty()).then(|| half.iter().sum::<f64>() / half.len() as f64)
}

struct Cell<'a> {
    utilisation: f64,
    placement: &'a str,
    ru: RuSize,
    isolation: Isolation,
}

fn run_cell(plan: &Plan, base: &SsdConfig, c: &Cell, seed: u64) -> Result<FdpRow> {
    let cfg = fdp_config(base, c.ru, c.isolation);
    cfg.validate()?;
    let opts = SimOptions {
        config: cfg.clone(),
        preset: Some(PRESET.into()),
        config_path: None,
        flows: vec![crate::spec::FlowSpec {
            workload: format!(
                "flash-cache:{}:{}:{}",
                c.utilisation, plan.small_space, plan.small_writes
            ),
            ..Default::default()
        }
        .resolve(&cfg, 0, seed)?],
        job_path: None,
        log_interval_ns: None,
        write_volume: Some(plan.write_volume_x),
        precondition: Precondition::None,
        replay_trace_timing: false,
        stream_policy: LbaPolicySpec::parse(c.placement)?,
        seed,
        max_memory_bytes: u64::MAX,
        max_flash_writes: None,
        sampler: Default::default(),
    };
    let r = crate::sim::run(&opts, &mut |_, _| {})?;
    let host = r.host_pages_written.max(1) as f64;
    let copies = |h: Option<u16>| {
        r.fdp_handles
            .iter()
            .find(|s| s.handle == h)
            .map_or(0.0, |s| s.gc_pages_copied as f64 / host)
    };
    let page_bytes = cfg.geometry.page_bytes as u64 * cfg.geometry.pages_per_block as u64;
    Ok(FdpRow {
        utilisation: c.utilisation,
        placement: c.placement.to_string(),
        ru: c.ru.label.into(),
        ru_bytes: c.ru.blocks() as u64 * page_bytes,
        ru_dies: c.ru.dies,
        isolation: c.isolation.name().into(),
        waf: steady_waf(&r).context("no WAF measured")?,
        waf_total: r.waf.unwrap_or(f64::NAN),
        host_pages_written: r.host_pages_written,
        gc_copies_large_per_host_page: copies(Some(workload::flash_cache::LARGE_STREAM)),
        gc_copies_small_per_host_page: copies(Some(workload::flash_cache::SMALL_STREAM)),
        gc_copies_shared_per_host_page: copies(None),
    })
}

pub fn run(opts: &ReproduceOptions) -> Result<Output> {
    let plan = Plan::new(opts);
    let base = device(&plan)?;
    let mut cells = Vec::new();
    for &utilisation in &plan.utilisations {
        for placement in &plan.placements {
            for ru in ru_sizes(&base) {
                for &isolation in &plan.isolations {
                    cells.push(Cell {
                        utilisation,
                        placement,
                        ru,
                        isolation,
                    });
                }
            }
        }
    }
    let steps = Steps::new(opts, cells.len());
    // Each run builds its own device from the same seed: independent, side by side (--jobs).
    let rows = crate::parallel::try_map(&opts.jobs, cells, |c| {
        let what = format!(
            "U {:.2}, {}, {} RUs, {}",
            c.utilisation,
            c.placement,
            c.ru.label,
            c.isolation.name()
        );
        let _step = steps.step(&what);
        run_cell(&plan, &base, &c, opts.seed).with_context(|| what)
    })?;
    let config = json!({
        "preset": PRESET,
        "ssd": base,
        "physical_bytes": base.physical_pages() * base.geometry.page_bytes as u64,
        "logical_bytes": base.logical_bytes(),
        "ru_sizes_bytes": ru_sizes(&base).map(|r| (r.label, r.blocks() as u64 * PAGES_PER_BLOCK as u64 * base.geometry.page_bytes as u64)),
        "ru_dies": ru_sizes(&base).map(|r| (r.label, r.dies)),
        "workload": format!("flash-cache:U:{}:{}", plan.small_space, plan.small_writes),
        "placements": plan.placements,
        "write_volume_x": plan.write_volume_x,
        "waf_window": "second half of the host writes",
    });
    let mut report = Report::new("fdp", opts, config);
    report.set_rows(&rows);
    report.paper = crate::papers::p6().rows.clone();
    report.notes = claims::notes(&rows);
    report.claims = claims::claims(&report);
    let tables = vec![waf_table(&rows, &plan)];
    Ok(Output { report, tables })
}

/// WAF per utilisation (columns) for each placement, RU size and handle type (rows).
fn waf_table(rows: &[FdpRow], plan: &Plan) -> Table {
    let mut headers = vec!["placement", "RU", "handles"];
    let cols: Vec<String> = plan
        .utilisations
        .iter()
        .map(|u| format!("U {:.0} %", u * 100.0))
        .collect();
    headers.extend(cols.iter().map(String::as_str));
    let mut t = Table::new("Device WAF (steady state) by utilisation", &headers);
    t.define("paper (LMCache, 960 GB, 16 GiB RUs, initially isolated, U 89 %): no placement 2.600, placement 1.425; paper (CacheLib, Allison et al.): 1.0-1.1 with small enough RUs or persistently isolated handles");
    let mut seen: Vec<(String, String, String)> = Vec::new();
    for r in rows {
        let key = (r.placement.clone(), r.ru.clone(), r.isolation.clone());
        if seen.contains(&key) {
            continue;
        }
        let mut cells = vec![
            placement_label(&key.0).to_string(),
            key.1.clone(),
            key.2.clone(),
        ];
        for &u in &plan.utilisations {
            let w = rows
                .iter()
                .find(|q| {
                    (q.placement.clone(), q.ru.clone(), q.isolation.clone()) == key
                        && q.utilisation == u
                })
                .map_or(String::new(), |q| fmt_f(q.waf, 3));
            cells.push(w);
        }
        t.push(cells);
        seen.push(key);
    }
    t
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_placement_is_a_stream_policy_name_and_the_device_takes_both_ru_sizes() {
        let plan = Plan::new(&ReproduceOptions::default());
        for p in &plan.placements {
            LbaPolicySpec::parse(p).unwrap();
        }
        let base = device(&plan).unwrap();
        for ru in ru_sizes(&base) {
            for iso in Isolation::ALL {
                fdp_config(&base, ru, iso).validate().unwrap();
            }
        }
        let large = ru_sizes(&base)[1];
        assert_eq!(large.blocks() * LARGE_RU_SHARE, base.total_blocks() as u32);
        assert_eq!(large.dies, base.dies(), "superblocks across every die");
    }
}
