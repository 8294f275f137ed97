//! `flashlab reproduce ioa-ftl` — paper P4 (increasing-order-aware log-block mapping).
//!
//! Experiment: a simulated Jasmine-OpenSSD-class device is first written in full, sequentially
//! (an aged drive; the file occupies its first pages), then the file is written page by page at uniformly random offsets (fio's random writes,
//! I/O unit = one flash page) through a host write-back page cache of 64 / 128 / 256 MB
//! ([`workload::page_cache::PageCache`]: when over capacity, the flusher writes back
//! `FLUSH_BATCH_PAGES` dirty pages in ascending address order, the elevator merges contiguous
//! pages into one request, and requests go out at queue depth `QUEUE_DEPTH`); a final sync
//! writes back the rest. Schemes: DFTL (the paper's "DemandPage"), BAST (its "log block"),
//! IOA (its scheme), plus FAST and page mapping as extra rows. Log space 48 MB for the log
//! schemes; DFTL caches 46 KB of map entries as in P4's Table 2.
//!
//! Measured per (scheme, cache): application throughput in simulated time (application bytes
//! / simulated time to absorb them, sync included), merges, erases, copied pages,
//! translation-page I/O, WAF and mapping memory. The paper's Table 1, its stated trends and
//! Table 2 are attached as `paper` rows, never mixed into `rows`.

pub mod claims;
pub mod figures;

use crate::host::HostDriver;
use crate::papers;
use crate::report::{fmt_f, Output, Report, ReproduceOptions, Scale, Steps, Table};
use anyhow::{Context, Result};
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
/// The simulated device: P4's board.
const PRESET: &str = "jasmine-openssd";
const SCHEMES: [FtlKind; 5] = [
    FtlKind::Dftl,
    FtlKind::Bast,
    FtlKind::Ioa,
    FtlKind::Fast,
    FtlKind::Page,
];

/// Sizes of one run (paper scale, or scaled down by a common factor).
#[derive(Clone, Copy, Debug)]
struct Plan {
    device_bytes: u64,
    file_bytes: u64,
    caches_mb: [u64; 3],
    log_bytes: u64,
    cmt_entries: u32,
    /// Random application page writes, in multiples of the file size.
    passes: u64,
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
        cmt_entries: 11_776 / factor as u32,
        passes: 4,
        factor,
    }
}

/// One measured run.
struct Run {
    scheme: FtlKind,
    /// DFTL given only the log schemes' spare flash (see [`Variant`]).
    lean: bool,
    cache_mb: u64,
    app_pages: u64,
    stats: ssd::Stats,
    sim_seconds: f64,
    mapping_bytes: u64,
    page_bytes: u64,
}

/// How a page-mapped scheme (DFTL) is given its flash: the preset's (default), or P4's
/// board's view (`lean`: its spare flash only the log schemes' log space, plus the blocks its
/// GC and translation pages need, one GC pool; its CMT `cmt_entries`).
#[derive(Clone, Copy, Debug, PartialEq)]
struct Variant {
    lean: bool,
    cmt_entries: u32,
}

fn device(p: &Plan, scheme: FtlKind, v: Variant) -> Result<Ssd> {
    let mut cfg = SsdConfig::preset(PRESET)?;
    cfg.ftl.scheme = scheme;
    cfg.ftl.gc_policy = GcPolicy::Greedy;
    let block_bytes = cfg.geometry.pages_per_block as u64 * cfg.geometry.page_bytes as u64;
    cfg.ftl.log_blocks = (p.log_bytes / block_bytes).max(2) as u32;
    cfg.ftl.cmt_entries = v.cmt_entries;
    if v.lean {
        cfg.ftl.gc_pool = ssd::GcPool::Device;
        let logical_blocks = p.device_bytes.div_ceil(block_bytes);
        cfg = cfg.with_logical_capacity(p.device_bytes)?;
        let spare = cfg.ftl.log_blocks as u64 + cfg.spare_blocks_needed();
        cfg.ftl.op = spare as f64 / logical_blocks as f64;
    }
    let cfg = cfg.with_logical_capacity(p.device_bytes)?;
    Ok(Ssd::new(cfg)?)
}

fn run_one(p: &Plan, scheme: FtlKind, cache_mb: u64, seed: u64) -> Result<Run> {
    let v = Variant {
        lean: false,
        cmt_entries: p.cmt_entries,
    };
    run_variant(p, scheme, v, cache_mb, seed)
}

fn run_variant(p: &Plan, scheme: FtlKind, v: Variant, cache_mb: u64, seed: u64) -> Result<Run> {
    let ssd = device(p, scheme, v)?;
    let target = Target {
        logical_pages: ssd.logical_pages(),
        page_bytes: ssd.page_bytes() as u32,
    };
    let page_bytes = ssd.page_bytes() as u64;
    let file_pages = p.file_bytes / page_bytes;
    let mut d = HostDriver::new(ssd, QUEUE_DEPTH);
    // Age the device: write every logical page once, sequentially, the file first (not
    // measured), in requests of `FLUSH_BATCH_PAGES` contiguous pages.
    let mut run = Vec::with_capacity(FLUSH_BATCH_PAGES as usize);
    for r in workload::precondition(target, 0.0, seed) {
        run.push(r?.lpn);
        if run.len() == FLUSH_BATCH_PAGES as usize {
            d.write_runs(&run)?;
            run.clear();
        }
    }
    d.write_runs(&run)?;
    let (before, t0) = d.begin_measurement();
    let mut cache = PageCache::new(cache_mb * (1 << 20) / page_bytes, FLUSH_BATCH_PAGES);
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let mut out = Vec::new();
    let app_pages = p.passes * file_pages;
    for _ in 0..app_pages {
        cache.write(rng.gen_range(0..file_pages), &mut out);
        if !out.is_empty() {
            d.write_runs(&out)?;
            out.clear();
        }
    }
    cache.flush_all(&mut out);
    d.write_runs(&out)?;
    Ok(Run {
        scheme,
        lean: v.lean,
        cache_mb,
        app_pages,
        stats: d.ssd().stats().since(&before),
        sim_seconds: (d.last_done().0 - t0.0) as f64 / 1e9,
        mapping_bytes: d.ssd().mapping_bytes(),
        page_bytes,
    })
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
    /// `log_space`: the extra DFTL row whose spare flash is only the log schemes' log space
    /// (plus its GC's needs); absent: the preset's over-provisioning.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub spare: String,
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
    pub mapping_bytes: u64,
}

fn to_row(r: &Run) -> IoaRow {
    let s = &r.stats;
    let app_mb = (r.app_pages * r.page_bytes) as f64 / 1e6;
    IoaRow {
        scheme: r.scheme.name().into(),
        spare: if r.lean {
            "log_space".into()
        } else {
            String::new()
        },
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
            match r.lean {
                true => "dftl, spare = log space (extra)".into(),
                false => scheme_label(r.scheme).into(),
            },
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

fn memory_table() -> Table {
    let mut t = Table::new(
        "Mapping memory, 4 KiB pages, 256 pages/block, log space 1 % (ours: ssd::ftl::memory; paper: P4 Table 2)",
        &["capacity", "page", "paper page", "ioa", "paper ioa", "bast", "paper bast", "dftl"],
    );
    // Our capacities and the paper's label for the same row of its Table 2.
    let capacities = [
        ("4 GiB", 4u64 << 30, "4 GB"),
        ("64 GiB", 64 << 30, "64 GB"),
        ("16 TiB", 16 << 40, "16 TB"),
    ];
    for (name, cap, paper_cap) in capacities {
        let est = ssd::ftl::memory::estimate(cap, 4096, 256, 0.01);
        let get = |s: &str| {
            est.iter()
                .find(|r| r.0 == s)
                .map(|r| human(r.1))
                .unwrap_or_default()
        };
        let paper = papers::p4().find(&[("capacity", json!(paper_cap))]);
        t.push(vec![
            name.into(),
            get("page"),
            papers::cell(paper, "page"),
            get("ioa"),
            papers::cell(paper, "ioa"),
            get("bast"),
            papers::cell(paper, "bast"),
            get("dftl"),
        ]);
    }
    t.define("page / ioa / bast / dftl = mapping-table RAM of each FTL scheme (analytic, no device simulated); paper = P4 Table 2");
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

fn notes(runs: &[Run], p: &Plan) -> Vec<String> {
    let get = |k: FtlKind, c: u64| {
        runs.iter()
            .find(|r| r.scheme == k && r.cache_mb == c && !r.lean)
    };
    let mut n = vec![
        format!(
            "scale: sizes are the paper's divided by {} (device, file, host caches, log space, DFTL's cached entries); {}x the file size of random page writes per run (P4 does not state its volume)",
            p.factor, p.passes
        ),
        format!("host page cache: flusher writes back {FLUSH_BATCH_PAGES} dirty pages at a time in ascending order; contiguous pages merged into one request; queue depth {QUEUE_DEPTH}"),
        "the whole device is written once sequentially before measuring (an aged drive), so page-mapping FTLs must garbage-collect as on P4's board".into(),
        "simulated device: preset jasmine-openssd (8 dies, 256 pages/block, MLC timings); P4 ran on the real Jasmine board, so absolute MB/s differ; compare ratios".into(),
        "IOA's bitmap merges (remaining pages copied in offset order into the log block) are counted as switch merges, as P4 counts them; BAST's sequential-prefix merges are partial merges".into(),
    ];
    n.extend(dftl_trend_notes(runs, p));
    let c = p.caches_mb[1];
    if let (Some(b), Some(i)) = (get(FtlKind::Bast, c), get(FtlKind::Ioa, c)) {
        let tput = |r: &Run| (r.app_pages * r.page_bytes) as f64 / r.sim_seconds.max(1e-9);
        n.push(format!(
            "at {c} MB cache: ioa/bast throughput {:.2}x (paper ~1.3x), erases {:+.0} % (paper -38 %), full merges {} vs {} (paper 24 vs 995)",
            tput(i) / tput(b),
            100.0 * (i.stats.erases as f64 / b.stats.erases.max(1) as f64 - 1.0),
            i.stats.merges_full,
            b.stats.merges_full
        ));
    }
    n
}

/// P4's DFTL trend (DFTL ~1.4x its scheme at 64 MB, equal at 128 MB, below at 256 MB) as
/// this run measured it: DFTL with the preset's spare and with only the log space's.
fn dftl_trend_notes(runs: &[Run], p: &Plan) -> Vec<String> {
    let tput = |r: &Run| (r.app_pages * r.page_bytes) as f64 / r.sim_seconds.max(1e-9);
    let find = |k: FtlKind, c: u64, lean: bool| {
        runs.iter()
            .find(|r| r.scheme == k && r.cache_mb == c && r.lean == lean)
    };
    let mut n = Vec::new();
    for (lean, what) in [
        (false, "the preset's spare"),
        (true, "only the log space as spare"),
    ] {
        let ratios: Vec<String> = p
            .caches_mb
            .iter()
            .filter_map(|&c| {
                let (d, i) = (find(FtlKind::Dftl, c, lean)?, find(FtlKind::Ioa, c, false)?);
                Some(format!("{c} MB {:.2}x", tput(d) / tput(i)))
            })
            .collect();
        let copied: Vec<String> = p
            .caches_mb
            .iter()
            .filter_map(|&c| {
                find(FtlKind::Dftl, c, lean).map(|d| d.stats.gc_pages_copied.to_string())
            })
            .collect();
        n.push(format!(
            "P4's DFTL trend (DFTL / ioa throughput; paper: \"{}\"): DFTL with {what}: {} (GC copies {})",
            papers::cell(papers::p4().table("P4 trends").find(|r| papers::cell(Some(r), "claim").starts_with("dftl")), "claim"),
            ratios.join(", "),
            copied.join(" / ")
        ));
    }
    let op = SsdConfig::preset(PRESET).map_or(0.0, |c| c.ftl.op);
    if let Some(d) = find(FtlKind::Dftl, p.caches_mb[0], false) {
        let s = &d.stats;
        n.push(format!(
            "why: DFTL pays little for its map here ({} translation reads, one flash read each, and {} translation writes, batched, per {} device page writes at the smallest cache: the write-back sweeps ascend over the whole file, so an LRU CMT smaller than the file misses on nearly every entry, and a miss costs a read, not a program); what P4's trend needs is GC: with the preset's {:.0} % spare (~{} MB against a {} MB random region) GC is almost free, with the log schemes' spare only it copies pages as on P4's board (P4 Table 1: {} full merges for DFTL)",
            s.translation_reads,
            s.translation_writes,
            s.host_pages_written,
            op * 100.0,
            (p.device_bytes as f64 * op) as u64 >> 20,
            p.file_bytes >> 20,
            papers::cell(papers::p4().find(&[("scheme", json!("dftl"))]), "merges_full")
        ));
    }
    n
}

pub fn run(opts: &ReproduceOptions) -> Result<Output> {
    let p = plan(opts.scale);
    let mut runs = Vec::new();
    let steps = Steps::new(opts, p.caches_mb.len() * (SCHEMES.len() + 1));
    for &cache in &p.caches_mb {
        for scheme in SCHEMES {
            steps.step(format!(
                "ioa-ftl: {} with a {cache} MB host cache",
                scheme.name()
            ));
            let r = run_one(&p, scheme, cache, opts.seed)
                .with_context(|| format!("{} at {cache} MB", scheme.name()))?;
            runs.push(r);
        }
    }
    // P4's trend probe (issue 14 §5): DFTL with only the log schemes' spare flash.
    for &cache in &p.caches_mb {
        steps.step(format!(
            "ioa-ftl: dftl, spare = log space, {cache} MB host cache"
        ));
        let v = Variant {
            lean: true,
            cmt_entries: p.cmt_entries,
        };
        let r = run_variant(&p, FtlKind::Dftl, v, cache, opts.seed)
            .with_context(|| format!("dftl (spare = log space) at {cache} MB"))?;
        runs.push(r);
    }
    let config = json!({
        "preset": PRESET, "device_bytes": p.device_bytes, "file_bytes": p.file_bytes,
        "host_cache_mb": p.caches_mb, "log_bytes": p.log_bytes, "dftl_cmt_entries": p.cmt_entries,
        "random_writes_file_multiples": p.passes, "flush_batch_pages": FLUSH_BATCH_PAGES, "queue_depth": QUEUE_DEPTH,
    });
    let mut report = Report::new("ioa-ftl", opts, config);
    report.set_rows(&runs.iter().map(to_row).collect::<Vec<_>>());
    report.paper = papers::p4().rows.clone();
    report.claims = claims::claims(&report);
    report.notes = notes(&runs, &p);
    Ok(Output {
        tables: tables(&runs, &p),
        report,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The DFTL probe of issue 14 §5 (not a check: prints DFTL vs BAST per variant).
    #[test]
    #[ignore]
    fn dftl_probe() {
        let p = plan(Scale::Quick);
        for (name, lean, cmt) in [
            ("default", false, p.cmt_entries),
            ("cmt 46K entries", false, 47_104 / p.factor as u32),
            ("lean spare", true, p.cmt_entries),
            ("lean + 46K", true, 47_104 / p.factor as u32),
        ] {
            for &cache in &p.caches_mb {
                let v = Variant {
                    lean,
                    cmt_entries: cmt,
                };
                let d = to_row(&run_variant(&p, FtlKind::Dftl, v, cache, 1).unwrap());
                let b = to_row(&run_one(&p, FtlKind::Bast, cache, 1).unwrap());
                let i = to_row(&run_one(&p, FtlKind::Ioa, cache, 1).unwrap());
                eprintln!(
                    "{name:16} cache {cache:3}: dftl {:6.2} MB/s (copied {}, erases {}, tr.w {}, tr.r {}, waf {:.2}) bast {:6.2} ioa {:6.2}  dftl/bast {:.2}",
                    d.throughput_mb_s, d.pages_copied, d.erases, d.translation_writes, d.translation_reads, d.waf,
                    b.throughput_mb_s, i.throughput_mb_s, d.throughput_mb_s / b.throughput_mb_s
                );
            }
        }
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
