//! `flashlab reproduce ioa-ftl` — paper P4 (increasing-order-aware log-block mapping).
//!
//! Experiment: a simulated Jasmine-OpenSSD-class device is first written in full, sequentially
//! (an aged drive; the file occupies its first pages), then the file is written page by page
//! at random offsets (fio's random writes, I/O unit = one flash page) through a host write-back
//! page cache of 64 / 128 / 256 MB ([`workload::page_cache::PageCache`]: when over capacity,
//! the flusher writes back `FLUSH_BATCH_PAGES` dirty pages in ascending address order, the
//! elevator merges contiguous pages into one request, and requests go out at queue depth
//! `QUEUE_DEPTH`); a final sync writes back the rest. Schemes: DFTL (the paper's
//! "DemandPage"), BAST (its "log block"), IOA (its scheme), plus FAST and page mapping as
//! extra rows. Log space 48 MB for the log schemes.
//!
//! P4's configuration is the default, each part a switch beside the lab's earlier one:
//! - [`Order::RandomMap`]: fio's random writes cover every page of the file once per pass in
//!   random order (fio's random map; `norandommap` is off by default), one pass (fio's
//!   `loops = 1`); the earlier model, [`Order::Uniform`] over 4 passes, draws pages with
//!   replacement (a page may repeat, and e^-passes of the file is never written, leaving holes
//!   in blocks that no sorting makes sequential). Its rows carry `workload = "uniform_4x"`.
//! - [`DftlSetup::P4`]: DFTL with the log schemes' spare flash (the 48 MB log space, plus the
//!   blocks its GC and translation pages need) and a CMT as large as the new scheme's mapping
//!   memory (P4: "the new scheme and DFTL used the same memory"), counted as P4's Table 2
//!   counts it ([`ssd::ftl::memory::p4_table2`]), its pages striped over the dies with a free
//!   pool, one GC block and GC per die (the board's banks); [`DftlSetup::P4OnePool`] pools the same spare
//!   for the whole device (rows with `spare = "log_space_one_pool"`); [`DftlSetup::PresetSpare`]
//!   is the earlier default (the preset's 7 % over-provisioning, 46 KiB / 4 B of CMT), rows
//!   with `spare = "preset"`.
//! - [`Aging::FileRandom`]: the drive is aged by a sequential fill and then a random rewrite
//!   of the file (the runs before the measured one), so the file's old copies lie scattered
//!   over the blocks; [`Aging::Sequential`] (the fill only) is the earlier model, rows with
//!   `aging = "sequential"`.
//!
//! Measured per (scheme, cache): application throughput in simulated time (application bytes
//! / simulated time to absorb them, sync included), merges, erases, copied pages,
//! translation-page I/O, WAF and mapping memory. The paper's Table 1, its stated trends and
//! Table 2 are attached as `paper` rows, never mixed into `rows`.

pub mod claims;
pub mod figures;
mod notes;

use crate::host::HostDriver;
use crate::papers;
use crate::report::{fmt_f, Output, Report, ReproduceOptions, Scale, Steps, Table};
use anyhow::{Context, Result};
use rand::seq::SliceRandom;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use serde::{Deserialize, Serialize};
use serde_json::json;
use ssd::{FtlKind, GcPolicy, Ssd, SsdConfig};
use workload::page_cache::PageCache;
use workload::Target;

/// Pages the flusher writes back at once (Linux's MAX_WRITEBACK_PAGES: 4 MiB of 4 KiB pages).
const FLUSH_BATCH_PAGES: u64 = 1024;
/// Requests in flight while flushing (a SATA NCQ queue).
const QUEUE_DEPTH: u32 = 32;
/// Free blocks each die (bank) keeps for its GC in P4's DFTL: the Jasmine board's
/// page-mapping firmware reserves one GC block per bank. Source: the Jasmine OpenSSD greedy
/// FTL (`ftl_greedy/ftl.c`, INDILINX 2011) keeps one `gc_vblock` in each bank's metadata
/// (`g_misc_meta[bank].gc_vblock`) and stripes pages over banks by `lpn % NUM_BANKS`. Two
/// blocks per bank measured IOA vs DFTL erases at -41.9 % (P4: -14 %), one at -28.7 %.
const BANK_GC_RESERVE_BLOCKS: u32 = 1;
/// The simulated device: P4's board.
const PRESET: &str = "jasmine-openssd";
const SCHEMES: [FtlKind; 5] = [
    FtlKind::Dftl,
    FtlKind::Bast,
    FtlKind::Ioa,
    FtlKind::Fast,
    FtlKind::Page,
];

/// How the application chooses the pages it writes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Order {
    /// fio's default: every page of the file once per pass, in a random order.
    RandomMap,
    /// Uniform with replacement (the lab's earlier model).
    Uniform,
}

/// How DFTL is given its flash and its cached mapping table.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum DftlSetup {
    /// P4's: spare = the log space (+ GC and translation blocks); CMT = the new scheme's
    /// mapping bytes at 4 B per entry; pages striped over the dies, each die with its own free
    /// pool, open blocks and GC, one block in reserve for it (the board's banks: Jasmine's
    /// page-mapping firmware keeps a free pool, a GC block and GC per bank and spreads pages
    /// over the banks).
    P4,
    /// As [`DftlSetup::P4`], but one free pool, open block and GC for the whole device (writes
    /// fill one block, on one die, at a time) with a GC reserve of two blocks: the lab's
    /// previous P4 setup.
    P4OnePool,
    /// The preset's over-provisioning and a 46 KiB / 4 B CMT (the earlier default).
    PresetSpare,
}

/// How the drive is aged before the measured run.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Aging {
    /// The whole device written once sequentially (the lab's earlier model): the file's old
    /// copies lie in logical order, so a flusher sweep invalidates whole physical blocks.
    Sequential,
    /// Then the file rewritten once, page by page, in a random order (a previous random-write
    /// run on the same file: P4 ran its host-cache sizes one after another on one file
    /// system): the file's old copies are scattered over the physical blocks.
    FileRandom,
}

/// P4's: the measured run follows earlier random runs over the same file.
const P4_AGING: Aging = Aging::FileRandom;

/// Where the log-block schemes (BAST, IOA) put a logical block's pages.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum LogLayout {
    /// Striped page by page over the dies (`lpn % dies`), each die running the scheme on its
    /// own share with its own log blocks and merges: the Jasmine board's data layout (its
    /// log-block firmware, `ftl_faster/ftl.c`, SKKU 2011, maps `get_num_bank(lpn) = lpn %
    /// NUM_BANKS` and keeps data, log and free blocks per bank), but with merges on different
    /// dies overlapping in time, which the board's one firmware thread does not do.
    Striped,
    /// A logical block's pages in one block, one free pool for the device: a log and its
    /// merge occupy one die while the rest wait, as merges do on the board (its firmware runs
    /// one bank's merge loop, page by page, to completion before it takes the next command).
    OneDie,
}

/// P4's timing: merges one at a time (the board's firmware); the merge counts are the same in
/// both layouts (measured: within 1 %), the throughput is not.
const P4_LOG_LAYOUT: LogLayout = LogLayout::OneDie;

impl LogLayout {
    fn name(self) -> &'static str {
        match self {
            LogLayout::Striped => "striped",
            LogLayout::OneDie => "one_die",
        }
    }
}

/// Whether `scheme` has a log layout (BAST and IOA).
fn has_log_layout(scheme: FtlKind) -> bool {
    matches!(scheme, FtlKind::Bast | FtlKind::Ioa)
}

impl Aging {
    fn name(self) -> &'static str {
        match self {
            Aging::Sequential => "sequential",
            Aging::FileRandom => "file_random",
        }
    }
}

/// One planned run.
#[derive(Clone, Copy, Debug)]
struct Variant {
    scheme: FtlKind,
    setup: DftlSetup,
    /// BAST's and IOA's layout (ignored for other schemes).
    layout: LogLayout,
    workload: Workload,
    aging: Aging,
    cache_mb: u64,
}

/// What a run's application does.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Workload {
    order: Order,
    /// Random application page writes, in multiples of the file size.
    passes: u64,
}

/// P4's: fio with its random map, one pass (`loops = 1`).
const P4_WORKLOAD: Workload = Workload {
    order: Order::RandomMap,
    passes: 1,
};
/// The lab's earlier workload, kept as extra rows.
const EARLIER_WORKLOAD: Workload = Workload {
    order: Order::Uniform,
    passes: 4,
};

impl Workload {
    fn name(self) -> &'static str {
        match (self.order, self.passes) {
            (Order::RandomMap, 1) => "fio_randommap_1x",
            (Order::Uniform, 4) => "uniform_4x",
            (Order::RandomMap, _) => "fio_randommap",
            (Order::Uniform, _) => "uniform",
        }
    }

    /// The application's page writes over a file of `file_pages` pages.
    fn pages(self, file_pages: u64, seed: u64) -> Vec<u64> {
        let mut rng = ChaCha8Rng::seed_from_u64(seed);
        match self.order {
            Order::Uniform => (0..self.passes * file_pages)
                .map(|_| rng.gen_range(0..file_pages))
                .collect(),
            Order::RandomMap => (0..self.passes)
                .flat_map(|_| {
                    let mut pass: Vec<u64> = (0..file_pages).collect();
                    pass.shuffle(&mut rng);
                    pass
                })
                .collect(),
        }
    }
}

/// Sizes of one run (paper scale, or scaled down by a common factor).
#[derive(Clone, Copy, Debug)]
struct Plan {
    device_bytes: u64,
    file_bytes: u64,
    caches_mb: [u64; 3],
    log_bytes: u64,
    /// DFTL's CMT in the earlier setup (46 KiB at 4 B per entry, scaled).
    cmt_entries_preset: u32,
    /// Divisor applied to the paper's sizes.
    factor: u64,
}

fn plan(scale: Scale) -> Plan {
    let factor = match scale {
        Scale::Paper => 1,
        Scale::Quick => 4,
    };
    Plan {
        device_bytes: (4 << 30) / factor,
        file_bytes: (256 << 20) / factor,
        caches_mb: [64 / factor, 128 / factor, 256 / factor],
        log_bytes: (48 << 20) / factor,
        cmt_entries_preset: 11_776 / factor as u32,
        factor,
    }
}

/// One measured run.
struct Run {
    scheme: FtlKind,
    /// DFTL's setup (None: another scheme).
    dftl: Option<DftlSetup>,
    /// BAST's and IOA's layout (None: another scheme).
    layout: Option<LogLayout>,
    workload: Workload,
    aging: Aging,
    cache_mb: u64,
    app_pages: u64,
    cmt_entries: u64,
    stats: ssd::Stats,
    sim_seconds: f64,
    /// The flash work's die time (programs, reads, erases at the preset's timings), averaged
    /// over the dies: the run's length had every die worked without a pause.
    die_busy_seconds: f64,
    mapping_bytes: u64,
    page_bytes: u64,
}

/// Die time of the flash work in `s` on the device of `cfg`, averaged over its dies.
fn die_busy_seconds(cfg: &SsdConfig, s: &ssd::Stats) -> f64 {
    let t = &cfg.timing;
    let ns = s.flash_pages_written as f64 * t.t_prog_ns as f64
        + s.flash_pages_read as f64 * t.t_read_ns as f64
        + s.erases as f64 * t.t_erase_ns as f64;
    ns / 1e9 / cfg.dies() as f64
}

/// A run's device: the preset at the plan's size, the scheme, 48 MB (scaled) of log blocks;
/// DFTL as `setup` says.
fn device(p: &Plan, scheme: FtlKind, setup: DftlSetup, layout: LogLayout) -> Result<Ssd> {
    let mut cfg = SsdConfig::preset(PRESET)?;
    cfg.ftl.scheme = scheme;
    cfg.ftl.gc_policy = GcPolicy::Greedy;
    let (page_bytes, ppb) = (
        cfg.geometry.page_bytes as u64,
        cfg.geometry.pages_per_block as u64,
    );
    cfg.ftl.log_blocks = (p.log_bytes / (ppb * page_bytes)).max(2) as u32;
    cfg.ftl.log_stripe_dies = has_log_layout(scheme) && layout == LogLayout::Striped;
    cfg.ftl.cmt_entries = p.cmt_entries_preset;
    if scheme == FtlKind::Dftl && setup != DftlSetup::PresetSpare {
        let pages = p.device_bytes / page_bytes;
        let m = ssd::ftl::memory::p4_table2(pages, ppb, cfg.ftl.log_blocks as u64);
        cfg.ftl.cmt_entries = m.dftl_cmt_entries.min(u32::MAX as u64) as u32;
        cfg.ftl.gc_pool = ssd::GcPool::Device;
        cfg = cfg.with_logical_capacity(p.device_bytes)?;
        let spare = cfg.ftl.log_blocks as u64 + cfg.spare_blocks_needed();
        cfg.ftl.op = spare as f64 / pages.div_ceil(ppb) as f64;
        // The same spare flash, pooled per die (P4's) or in one pool.
        if setup == DftlSetup::P4 {
            cfg.ftl.gc_pool = ssd::GcPool::PerDie;
            cfg.ftl.gc_free_blocks_min = BANK_GC_RESERVE_BLOCKS;
        }
    }
    let cfg = cfg.with_logical_capacity(p.device_bytes)?;
    Ok(Ssd::new(cfg)?)
}

/// Age the device (not measured): every logical page once, sequentially, the file first, in
/// requests of `FLUSH_BATCH_PAGES` contiguous pages; with [`Aging::FileRandom`], then the
/// file's pages once more in a random order (its own seed), one page per request.
fn age(d: &mut HostDriver, target: Target, file_pages: u64, aging: Aging, seed: u64) -> Result<()> {
    let mut run = Vec::with_capacity(FLUSH_BATCH_PAGES as usize);
    for r in workload::precondition(target, 0.0, seed) {
        run.push(r?.lpn);
        if run.len() == FLUSH_BATCH_PAGES as usize {
            d.write_runs(&run)?;
            run.clear();
        }
    }
    d.write_runs(&run)?;
    if aging == Aging::FileRandom {
        let aging_seed = seed::Seed(seed).fork("p4-aging").value();
        for page in P4_WORKLOAD.pages(file_pages, aging_seed) {
            d.write_runs(&[page])?;
        }
    }
    Ok(())
}

fn run_variant(p: &Plan, v: Variant, seed: u64) -> Result<Run> {
    let Variant {
        scheme,
        setup,
        layout,
        workload: wl,
        aging,
        cache_mb,
    } = v;
    let ssd = device(p, scheme, setup, layout)?;
    let cmt_entries = match scheme {
        FtlKind::Dftl => ssd.config().ftl.cmt_entries as u64,
        _ => 0,
    };
    let target = Target {
        logical_pages: ssd.logical_pages(),
        page_bytes: ssd.page_bytes() as u32,
    };
    let page_bytes = ssd.page_bytes() as u64;
    let file_pages = p.file_bytes / page_bytes;
    let mut d = HostDriver::new(ssd, QUEUE_DEPTH);
    age(&mut d, target, file_pages, aging, seed)?;
    let (before, t0) = d.begin_measurement();
    let mut cache = PageCache::new(cache_mb * (1 << 20) / page_bytes, FLUSH_BATCH_PAGES);
    let mut out = Vec::new();
    let app = wl.pages(file_pages, seed);
    for &page in &app {
        cache.write(page, &mut out);
        if !out.is_empty() {
            d.write_runs(&out)?;
            out.clear();
        }
    }
    cache.flush_all(&mut out);
    d.write_runs(&out)?;
    Ok(Run {
        scheme,
        dftl: (scheme == FtlKind::Dftl).then_some(setup),
        layout: has_log_layout(scheme).then_some(layout),
        workload: wl,
        aging,
        cache_mb,
        app_pages: app.len() as u64,
        cmt_entries,
        stats: d.ssd().stats().since(&before),
        die_busy_seconds: die_busy_seconds(d.ssd().config(), &d.ssd().stats().since(&before)),
        sim_seconds: (d.last_done().0 - t0.0) as f64 / 1e9,
        mapping_bytes: d.ssd().mapping_bytes(),
        page_bytes,
    })
}

/// A run's name in the tables: its scheme, and its variant where it is not P4's.
fn run_label(r: &Run) -> String {
    let mut label = match r.dftl {
        Some(DftlSetup::PresetSpare) => "dftl, preset spare (extra)".to_string(),
        Some(DftlSetup::P4OnePool) => "dftl, one pool (extra)".to_string(),
        _ => scheme_label(r.scheme).to_string(),
    };
    if r.layout.is_some_and(|l| l != P4_LOG_LAYOUT) {
        label = format!(
            "{} [{}]",
            r.scheme.name(),
            r.layout.map_or("", |l| l.name())
        );
    }
    if r.workload != P4_WORKLOAD {
        label = format!("{} [{}]", r.scheme.name(), r.workload.name());
    }
    if r.aging != P4_AGING {
        label = format!("{label} [{} aging]", r.aging.name());
    }
    label
}

fn scheme_label(k: FtlKind) -> &'static str {
    match k {
        FtlKind::Dftl => "dftl (paper: DemandPage)",
        FtlKind::Bast => "bast (paper: log block)",
        FtlKind::Ioa => "ioa (paper: new scheme)",
        FtlKind::Fast => "fast (extra)",
        FtlKind::Page => "page (extra)",
        FtlKind::Block => "block",
    }
}

/// One measured (scheme, host cache) run, as `reproduce ioa-ftl --json` prints it.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct IoaRow {
    pub scheme: String,
    /// DFTL's spare flash: `log_space` (P4's: the log schemes' log space plus what its GC
    /// needs, pooled per die), `log_space_one_pool` (the same, one pool for the device) or
    /// `preset` (the preset's over-provisioning, the earlier default); absent for the other
    /// schemes.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub spare: String,
    /// BAST's and IOA's layout: `striped` (P4's board: pages striped over the dies, logs and
    /// merges per die) or `one_die` (a logical block in one block, one pool: the earlier
    /// model); absent for the other schemes.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub log_layout: String,
    /// The application's writes: `fio_randommap_1x` (P4's) or `uniform_4x` (the earlier model).
    #[serde(default)]
    pub workload: String,
    /// How the drive was aged: `file_random` (P4's: a sequential fill, then the file rewritten
    /// once at random) or `sequential` (the fill only, the earlier model).
    #[serde(default)]
    pub aging: String,
    /// DFTL's cached mapping entries (0 for the other schemes).
    #[serde(default)]
    pub cmt_entries: u64,
    pub host_cache_mb: u64,
    /// Application MB (10^6 bytes) per simulated second, sync included.
    pub throughput_mb_s: f64,
    pub merges_full: u64,
    pub merges_partial: u64,
    pub merges_switch: u64,
    pub erases: u64,
    pub pages_copied: u64,
    pub gc_invocations: u64,
    pub translation_reads: u64,
    pub translation_writes: u64,
    pub app_pages_written: u64,
    pub device_pages_written: u64,
    pub flash_pages_written: u64,
    pub waf: f64,
    pub sim_seconds: f64,
    /// Share of the run the dies were busy on average (flash work's die time ÷ dies ÷ the
    /// run's simulated time): 1 = every die worked the whole run.
    #[serde(default)]
    pub die_busy_fraction: f64,
    pub mapping_bytes: u64,
}

fn to_row(r: &Run) -> IoaRow {
    let s = &r.stats;
    let app_mb = (r.app_pages * r.page_bytes) as f64 / 1e6;
    IoaRow {
        scheme: r.scheme.name().into(),
        spare: match r.dftl {
            Some(DftlSetup::P4) => "log_space".into(),
            Some(DftlSetup::P4OnePool) => "log_space_one_pool".into(),
            Some(DftlSetup::PresetSpare) => "preset".into(),
            None => String::new(),
        },
        log_layout: r.layout.map_or(String::new(), |l| l.name().into()),
        workload: r.workload.name().into(),
        aging: r.aging.name().into(),
        cmt_entries: r.cmt_entries,
        host_cache_mb: r.cache_mb,
        throughput_mb_s: if r.sim_seconds > 0.0 {
            app_mb / r.sim_seconds
        } else {
            0.0
        },
        merges_full: s.merges_full,
        merges_partial: s.merges_partial,
        merges_switch: s.merges_switch,
        erases: s.erases,
        pages_copied: s.gc_pages_copied,
        gc_invocations: s.gc_invocations,
        translation_reads: s.translation_reads,
        translation_writes: s.translation_writes,
        app_pages_written: r.app_pages,
        device_pages_written: s.host_pages_written,
        flash_pages_written: s.flash_pages_written,
        waf: s.waf(),
        sim_seconds: r.sim_seconds,
        die_busy_fraction: r.die_busy_seconds / r.sim_seconds.max(1e-9),
        mapping_bytes: r.mapping_bytes,
    }
}

fn tables(runs: &[Run], p: &Plan) -> Vec<Table> {
    let mut main = Table::new(
        format!(
            "Random page writes to a {} MB file on a {} GiB device, log space {} MB (ours, simulated time)",
            p.file_bytes >> 20,
            p.device_bytes >> 30,
            p.log_bytes >> 20
        ),
        &["scheme", "cache MB", "MB/s", "full", "partial", "switch", "GC runs", "erases", "copied", "tr.writes", "WAF"],
    );
    for r in runs {
        let v = to_row(r);
        main.push(vec![
            run_label(r),
            r.cache_mb.to_string(),
            fmt_f(v.throughput_mb_s, 2),
            v.merges_full.to_string(),
            v.merges_partial.to_string(),
            v.merges_switch.to_string(),
            v.gc_invocations.to_string(),
            v.erases.to_string(),
            v.pages_copied.to_string(),
            v.translation_writes.to_string(),
            fmt_f(r.stats.waf(), 2),
        ]);
    }
    let mut paper = Table::new(
        "P4 Table 1 (the paper's figures, whole run)",
        &["scheme", "paper full", "paper switch", "paper erases"],
    );
    for r in papers::p4().table("P4 Table 1") {
        let scheme = papers::cell(Some(r), "scheme");
        let label = match scheme.as_str() {
            "bast" => "bast (log block)".to_string(),
            "ioa" => "ioa (new scheme)".to_string(),
            _ => scheme,
        };
        paper.push(vec![
            label,
            papers::cell(Some(r), "merges_full"),
            papers::cell(Some(r), "merges_switch"),
            papers::cell(Some(r), "erases"),
        ]);
    }
    main.define(format!("device: simulated SSD, preset {PRESET}, {} GiB; cache MB = host page cache; MB/s = host MB per simulated second", p.device_bytes >> 30));
    main.define("full / partial / switch = log-block merges by type; GC runs = victim blocks reclaimed; copied = valid pages copied by merges and GC; tr.writes = DFTL translation-page writes; WAF = flash page writes / host page writes");
    paper.define("paper full / switch / erases = P4 Table 1's merge and erase counts (the real Jasmine board)");
    vec![main, paper, memory_table()]
}

/// P4 Table 2's capacities: our name, bytes, and the paper's label for the same row.
const TABLE2_CAPACITIES: [(&str, u64, &str); 3] = [
    ("4 GiB", 4 << 30, "4 GB"),
    ("64 GiB", 64 << 30, "64 GB"),
    ("16 TiB", 16 << 40, "16 TB"),
];

/// Mapping memory at `capacity_bytes` as P4's Table 2 counts it: 4 KiB pages, 256 pages per
/// block, log space 1 % of the blocks ([`ssd::ftl::memory::p4_table2`] states the accounting).
fn table2_ours(capacity_bytes: u64) -> ssd::ftl::memory::P4Memory {
    let pages = capacity_bytes / 4096;
    let logs = ssd::ftl::memory::log_blocks_of(pages, 256, 0.01);
    ssd::ftl::memory::p4_table2(pages, 256, logs)
}

fn memory_table() -> Table {
    let mut t = Table::new(
        "Mapping memory, 4 KiB pages, 256 pages/block, log space 1 % (ours: P4's accounting, ssd::ftl::memory::p4_table2; paper: P4 Table 2)",
        &["capacity", "page", "paper page", "ioa", "paper ioa", "bast", "paper bast", "dftl CMT entries"],
    );
    for (name, cap, paper_cap) in TABLE2_CAPACITIES {
        let m = table2_ours(cap);
        let paper = papers::p4().find(&[("capacity", json!(paper_cap))]);
        t.push(vec![
            name.into(),
            human(m.page),
            papers::cell(paper, "page"),
            human(m.ioa),
            papers::cell(paper, "ioa"),
            human(m.bast),
            papers::cell(paper, "bast"),
            m.dftl_cmt_entries.to_string(),
        ]);
    }
    t.define("page = 4 B per page; bast = 4 B per block (block map) + 4 B per log page (log space 1 % of the blocks); ioa = bast + 1 bit per page (division bitmap); dftl CMT entries = ioa's bytes at 4 B per entry (P4: DFTL used the new scheme's memory). Analytic, no device simulated; paper = P4 Table 2");
    t
}

fn human(b: u64) -> String {
    let b = b as f64;
    if b >= (1u64 << 30) as f64 {
        format!("{:.1} GiB", b / (1u64 << 30) as f64)
    } else if b >= (1 << 20) as f64 {
        format!("{:.1} MiB", b / (1 << 20) as f64)
    } else {
        format!("{:.1} KiB", b / 1024.0)
    }
}

/// The run of variant `v` (DFTL's setup ignored for other schemes).
fn find(runs: &[Run], v: Variant) -> Option<&Run> {
    runs.iter().find(|r| {
        r.scheme == v.scheme
            && r.cache_mb == v.cache_mb
            && r.workload == v.workload
            && r.aging == v.aging
            && r.dftl.is_none_or(|d| d == v.setup)
            && r.layout.is_none_or(|l| l == v.layout)
    })
}

/// P4's configuration of `scheme` at `cache_mb`.
fn p4_variant(scheme: FtlKind, cache_mb: u64) -> Variant {
    Variant {
        scheme,
        setup: DftlSetup::P4,
        layout: P4_LOG_LAYOUT,
        workload: P4_WORKLOAD,
        aging: P4_AGING,
        cache_mb,
    }
}

fn tput(r: &Run) -> f64 {
    (r.app_pages * r.page_bytes) as f64 / r.sim_seconds.max(1e-9)
}

/// Every run: P4's configuration for every scheme and cache, then the earlier variants as
/// extra rows (DFTL with the preset's spare; BAST, IOA and DFTL under the earlier workload;
/// DFTL and IOA on a drive aged by the sequential fill only).
fn plan_runs(p: &Plan) -> Vec<Variant> {
    let mut v = Vec::new();
    for &cache in &p.caches_mb {
        v.extend(SCHEMES.map(|k| p4_variant(k, cache)));
    }
    for setup in [DftlSetup::PresetSpare, DftlSetup::P4OnePool] {
        for &cache in &p.caches_mb {
            v.push(Variant {
                setup,
                ..p4_variant(FtlKind::Dftl, cache)
            });
        }
    }
    for &cache in &p.caches_mb {
        for scheme in [FtlKind::Bast, FtlKind::Ioa] {
            v.push(Variant {
                layout: LogLayout::Striped,
                ..p4_variant(scheme, cache)
            });
        }
    }
    for &cache in &p.caches_mb {
        for scheme in [FtlKind::Dftl, FtlKind::Bast, FtlKind::Ioa] {
            v.push(Variant {
                workload: EARLIER_WORKLOAD,
                ..p4_variant(scheme, cache)
            });
        }
    }
    for &cache in &p.caches_mb {
        for scheme in [FtlKind::Dftl, FtlKind::Ioa] {
            v.push(Variant {
                aging: Aging::Sequential,
                ..p4_variant(scheme, cache)
            });
        }
    }
    v
}

pub fn run(opts: &ReproduceOptions) -> Result<Output> {
    let p = plan(opts.scale);
    let planned = plan_runs(&p);
    let steps = Steps::new(opts, planned.len());
    // Each run builds its own device from its own seed: independent, side by side (--jobs).
    let runs = crate::parallel::try_map(&opts.jobs, planned, |v| {
        let what = format!(
            "{} ({:?}, {:?}, {}, {} aging) at {} MB",
            v.scheme.name(),
            v.setup,
            v.layout,
            v.workload.name(),
            v.aging.name(),
            v.cache_mb
        );
        let _step = steps.step(format!("ioa-ftl: {what}"));
        run_variant(&p, v, opts.seed).with_context(|| what)
    })?;
    let config = json!({
        "preset": PRESET, "device_bytes": p.device_bytes, "file_bytes": p.file_bytes,
        "host_cache_mb": p.caches_mb, "log_bytes": p.log_bytes,
        "dftl_cmt_entries": runs.iter().find(|r| r.dftl == Some(DftlSetup::P4)).map_or(0, |r| r.cmt_entries),
        "dftl_cmt_entries_preset_spare": p.cmt_entries_preset,
        "random_writes_file_multiples": P4_WORKLOAD.passes, "workload": P4_WORKLOAD.name(),
        "aging": P4_AGING.name(), "log_layout": P4_LOG_LAYOUT.name(),
        "flush_batch_pages": FLUSH_BATCH_PAGES, "queue_depth": QUEUE_DEPTH,
    });
    let mut report = Report::new("ioa-ftl", opts, config);
    report.set_rows(&runs.iter().map(to_row).collect::<Vec<_>>());
    report.paper = papers::p4().rows.clone();
    report.claims = claims::claims(&report);
    report.notes = notes::notes(&runs, &p);
    Ok(Output {
        tables: tables(&runs, &p),
        report,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_random_map_writes_every_page_once_per_pass() {
        let pages = P4_WORKLOAD.pages(1000, 7);
        let mut sorted = pages.clone();
        sorted.sort_unstable();
        assert_eq!(sorted, (0..1000).collect::<Vec<u64>>());
        assert_ne!(pages, sorted, "a random order");
        // Uniform with replacement misses pages (about e^-4 of them over 4 passes).
        let mut u = EARLIER_WORKLOAD.pages(1000, 7);
        assert_eq!(u.len(), 4000);
        u.sort_unstable();
        u.dedup();
        assert!(u.len() < 1000 && u.len() > 950, "{}", u.len());
    }

    #[test]
    fn p4s_dftl_has_the_log_space_as_spare_and_the_new_schemes_memory_as_cmt() {
        let p = plan(Scale::Quick);
        let d = device(&p, FtlKind::Dftl, DftlSetup::P4, P4_LOG_LAYOUT).unwrap();
        let e = device(&p, FtlKind::Dftl, DftlSetup::PresetSpare, P4_LOG_LAYOUT).unwrap();
        let (dc, ec) = (d.config(), e.config());
        // 12 log blocks of 1 MiB, plus the GC reserve, open and translation blocks.
        let spare = dc.spare_blocks();
        assert!((12..12 + 16).contains(&spare), "{spare}");
        assert!(
            ec.spare_blocks() > 3 * spare,
            "{} vs {spare}",
            ec.spare_blocks()
        );
        // IOA's memory on the 1 GiB device: 4 KiB block map + 12 KiB of log maps + 32 KiB of
        // bitmap = 48 KiB, at 4 B per cached entry.
        assert_eq!(dc.ftl.cmt_entries, 12_288);
        assert_eq!(ec.ftl.cmt_entries, 2_944);
    }

    #[test]
    fn p4s_dftl_pools_its_spare_per_die_and_the_one_pool_variant_has_the_same_spare() {
        let p = plan(Scale::Paper);
        let d = device(&p, FtlKind::Dftl, DftlSetup::P4, P4_LOG_LAYOUT).unwrap();
        let one = device(&p, FtlKind::Dftl, DftlSetup::P4OnePool, P4_LOG_LAYOUT).unwrap();
        assert_eq!(d.config().ftl.gc_pool, ssd::GcPool::PerDie);
        assert_eq!(one.config().ftl.gc_pool, ssd::GcPool::Device);
        assert_eq!(d.config().ftl.gc_free_blocks_min, BANK_GC_RESERVE_BLOCKS);
        assert_eq!(d.config().spare_blocks(), one.config().spare_blocks());
        assert_eq!(d.config().ftl.cmt_entries, one.config().ftl.cmt_entries);
    }

    #[test]
    fn tables_define_their_columns_and_name_the_preset() {
        let t = tables(&[], &plan(Scale::Quick));
        let main = t[0].to_string();
        assert!(main.contains("preset jasmine-openssd"), "{main}");
        for col in [
            "full / partial / switch",
            "GC runs",
            "tr.writes",
            "WAF",
            "cache MB",
        ] {
            assert!(main.contains(&format!("{col} =")), "{col}: {main}");
        }
        assert!(t[2].to_string().contains("no device simulated"), "{}", t[2]);
    }
}
