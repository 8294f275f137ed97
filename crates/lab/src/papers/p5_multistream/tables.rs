//! The report of `reproduce multistream`: rows (one per policy), series, the WAF, volume and
//! lifetime tables beside P5's, and the notes that say what each run measured.

use super::*;

/// One row per policy, as `reproduce multistream --json` prints it: the default GC mode's
/// figures, and each GC mode's final WAF and reduction as flat columns.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct MultistreamRow {
    pub policy: String,
    /// The GC mode of the unsuffixed columns (the plan's first).
    pub gc_mode: String,
    /// Final WAF: flash / host page writes over the last `FLAT_BLOCK_X` capacities written.
    pub waf: f64,
    /// (1 − waf / waf of `none`) × 100: percent lower than without streams (P5's figure).
    pub waf_reduction_vs_none: Option<f64>,
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
    /// Compactions (whole-file by default) each DB file finished over this run's update
    /// phase: the fewest, the mean and the most over the files.
    #[serde(default)]
    pub compactions_per_file_min: u64,
    #[serde(default)]
    pub compactions_per_file_mean: f64,
    #[serde(default)]
    pub compactions_per_file_max: u64,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub waf_gc_per_stream: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub waf_gc_separate: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub waf_gc_victim: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub waf_reduction_vs_none_gc_per_stream: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub waf_reduction_vs_none_gc_separate: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub waf_reduction_vs_none_gc_victim: Option<f64>,
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

fn type_name(class: u32) -> &'static str {
    DataType::ALL
        .get(class as usize)
        .map_or("untyped", |t| t.name())
}

pub(super) fn lifetime_rows(r: &LifetimeReport) -> Vec<LifetimeRow> {
    r.classes
        .iter()
        .map(|c| LifetimeRow {
            data_type: type_name(c.class).to_string(),
            writes: c.writes,
            share_pct: c.share * 100.0,
            overwritten: c.overwritten,
            mean_writes: c.mean,
            median_writes: c.median,
        })
        .collect()
}

pub(super) fn find<'a>(runs: &'a [Run], p: &MapSpec, gc: GcStreamMode) -> Option<&'a Run> {
    runs.iter().find(|r| r.policy == *p && r.gc == gc)
}

/// Final WAF of (p, gc) and its reduction against `none` in the same GC mode.
fn waf_and_reduction(runs: &[Run], p: &MapSpec, gc: GcStreamMode) -> (Option<f64>, Option<f64>) {
    let waf = find(runs, p, gc).map(Run::final_waf);
    let none = find(runs, &MapSpec::Policy(NamedPolicy::NoStreams), gc).map(Run::final_waf);
    let red = waf
        .zip(none)
        .filter(|&(_, n)| n > 0.0)
        .map(|(w, n)| (1.0 - w / n) * 100.0);
    (waf, red)
}

pub(super) fn rows(runs: &[Run], plan: &Plan) -> Vec<MultistreamRow> {
    let gc0 = plan.gc_modes[0];
    let equal_time = runs
        .iter()
        .filter(|r| r.gc == gc0)
        .map(Run::sim_ns)
        .min()
        .unwrap_or(0);
    // (None, None) where the plan did not run the mode.
    let mode = |p: &MapSpec, gc| waf_and_reduction(runs, p, gc);
    plan.policies
        .iter()
        .filter_map(|p| {
            let r = find(runs, p, gc0)?;
            let s = &r.stats;
            let (per, per_red) = mode(p, GcStreamMode::PerStream);
            let (sep, sep_red) = mode(p, GcStreamMode::Separate);
            let (vic, vic_red) = mode(p, GcStreamMode::Victim);
            Some(MultistreamRow {
                policy: p.name(),
                gc_mode: gc_name(gc0).into(),
                waf: r.final_waf(),
                waf_reduction_vs_none: waf_and_reduction(runs, p, gc0).1,
                waf_cumulative: s.waf(),
                waf_flat: if r.flat { "yes" } else { "no" }.into(),
                host_bytes_written: s.host_pages_written * r.page_bytes,
                host_bytes_equal_time: (r.host_pages_by(equal_time) * r.page_bytes as f64) as u64,
                host_writes_x_capacity: ratio(s.host_pages_written, r.logical_pages),
                sim_seconds: r.sim_ns() as f64 / 1e9,
                flash_pages_written: s.flash_pages_written,
                erases: s.erases,
                gc_pages_copied: s.gc_pages_copied,
                compactions_per_file_min: r.compactions.min,
                compactions_per_file_mean: r.compactions.mean,
                compactions_per_file_max: r.compactions.max,
                waf_gc_per_stream: per,
                waf_gc_separate: sep,
                waf_gc_victim: vic,
                waf_reduction_vs_none_gc_per_stream: per_red,
                waf_reduction_vs_none_gc_separate: sep_red,
                waf_reduction_vs_none_gc_victim: vic_red,
            })
        })
        .collect()
}

pub(super) fn series(runs: &[Run], plan: &Plan, lifetimes: Option<&LifetimeReport>) -> Vec<Series> {
    let mut out = Vec::new();
    for r in runs {
        let label = if r.gc == plan.gc_modes[0] {
            r.policy.name()
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
            label: type_name(c.class).into(),
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

const P5_FIG: &str = "P5 results (6.5 h run)";
const P5_TABLE1: &str = "P5 Table 1 (lifetime analysis)";

fn pct(x: Option<f64>) -> String {
    x.map_or("-".into(), |r| format!("{:+.1} %", -r))
}

fn opt_f(x: Option<f64>, digits: usize) -> String {
    x.map_or("-".into(), |v| fmt_f(v, digits))
}

pub(super) fn waf_table(runs: &[Run], plan: &Plan) -> Table {
    let mut headers: Vec<String> = vec!["policy".into()];
    for &gc in &plan.gc_modes {
        headers.push(format!("WAF gc {}", gc_name(gc)));
        headers.push("vs none".into());
    }
    headers.extend(["flat".into(), "paper WAF".into(), "paper vs none".into()]);
    let h: Vec<&str> = headers.iter().map(String::as_str).collect();
    let mut t = Table::new(
        format!(
            "WAF by stream policy and GC mode: {} stores on one simulated SSD ({} MiB, {:.0} % in DB files, {} streams) — ours beside P5's (6.5 h run)",
            plan.files,
            plan.capacity_bytes >> 20,
            FILL * 100.0,
            plan.device_streams
        ),
        &h,
    );
    let p5 = papers::p5();
    for p in &plan.policies {
        let paper = p5.find(&[("table", json!(P5_FIG)), ("policy", json!(p.name()))]);
        let mut cells = vec![p.name()];
        for &gc in &plan.gc_modes {
            let (waf, red) = waf_and_reduction(runs, p, gc);
            cells.push(opt_f(waf, 3));
            cells.push(pct(red));
        }
        let flat =
            find(runs, p, plan.gc_modes[0]).map_or("-", |r| if r.flat { "yes" } else { "no" });
        cells.push(flat.into());
        cells.push(papers::cell(paper, "waf"));
        cells.push(papers::cell(paper, "vs_none"));
        t.push(cells);
    }
    t.define(format!("WAF = flash page writes / host page writes over the last {FLAT_BLOCK_X} capacities written; vs none = change against `none` in the same GC mode"));
    t.define("gc separate: GC copies of every stream go to one GC stream; victim: back to the victim block's stream; per-stream: one GC stream per host stream");
    t.define(format!("flat (first GC mode) = the WAF of the last {FLAT_BLOCK_X} capacities within {:.0} % of the {FLAT_BLOCK_X} before (else stopped at {} capacities); paper = P5's Samsung PM953, ForestDB, 6.5 h (SMART)", FLAT_TOLERANCE * 100.0, plan.max_host_x));
    t
}

pub(super) fn volume_table(rows: &[MultistreamRow], plan: &Plan) -> Table {
    let mut t = Table::new(
        format!(
            "Host writes, erases and GC copies (gc {}; ours, simulated time)",
            gc_name(plan.gc_modes[0])
        ),
        &[
            "policy",
            "host GB",
            "host GB equal time",
            "sim s",
            "erases",
            "GC copies",
            "cumulative WAF",
        ],
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
    t.define("host GB equal time = host bytes each policy wrote by the simulated time the shortest run took (P5 Table 3, 24 h: none 4203.41 GB, per-type 4556.53 GB)");
    t
}

pub(super) fn lifetime_table(rows: &[LifetimeRow]) -> Table {
    let mut t = Table::new(
        "Lifetimes per data type (ours: the `none` run's update phase) beside P5 Table 1",
        &[
            "type",
            "share %",
            "mean",
            "median",
            "paper share %",
            "paper mean",
        ],
    );
    let p5 = papers::p5();
    for r in rows {
        let paper = p5.find(&[("table", json!(P5_TABLE1)), ("type", json!(r.data_type))]);
        t.push(vec![
            r.data_type.clone(),
            fmt_f(r.share_pct, 2),
            opt_f(r.mean_writes, 0),
            r.median_writes.map_or("-".into(), |m| m.to_string()),
            papers::cell(paper, "share_pct"),
            papers::cell(paper, "mean_lifetime_writes"),
        ]);
    }
    t.define("lifetime = device page writes between two writes of the same page (mean, median); share = the type's share of page writes");
    t.define("paper = P5 Table 1 (ForestDB, ~7.5 GB DB, 4 h overwrite workload; no median given)");
    t
}

/// When the stores flush their WAL, in words (`Plan::wal_flush_share`, `wal_flush_docs_max`).
fn wal_rule(plan: &Plan) -> String {
    let share = match plan.wal_flush_share {
        Some(s) => format!("{:.2} % of the file's keys", s * 100.0),
        None => "the file's key count".to_string(),
    };
    let cap = match plan.wal_flush_docs_max {
        Some(cap) => format!(", at most {cap}"),
        None => String::new(),
    };
    format!(
        "each time the WAL holds {share} in documents{cap} (the same share of a file at every \
         capacity unless capped; ForestDB's 4,096 documents are ~1 % of a P5 file)"
    )
}

pub(super) fn notes(plan: &Plan, runs: &[Run]) -> Vec<String> {
    let mut n = vec![
        format!("Scaled down from P5's 480 GB drive with 400 GB in 32 DB files: {} MiB of logical space, {:.1} % of it in {} partitions (one store each; the fill ratio and file count kept)", plan.capacity_bytes >> 20, FILL * 100.0, plan.files),
        format!("Device: preset {PRESET} with 4 KiB pages, {}-page blocks and its over-provisioning (14.5 %: 512 GiB of flash for 480 GB); the PM953's flash geometry is not published (page and block size assumed); WAF depends on the block size (a block holds pages written close together in time; smaller blocks die whole more often). {} and {}", plan.pages_per_block, if plan.aged_drive { "The drive is aged (every logical page written once)" } else { "The drive starts as mkfs.ext4 leaves it (the whole device discarded: only what the files write is valid on it)" }, if plan.discard { "the stores' trims are passed on (ext4 with `discard`; not P5's setting): a page a store frees dies on the drive at once" } else { "the stores' trims are dropped (ext4 without `discard`, as on P5's Ubuntu 14.04; its weekly fstrim would trim at most once in a 6.5 h run), so the SSD counts every page valid until it is overwritten" }),
        format!("Documents: {KEY_BYTES}-byte keys, {}-byte values, live documents {:.0} % of each file, a commit every {} updates of a file (P5 states neither document size nor commit interval)", plan.value_bytes, plan.live_share * 100.0, plan.ops_per_commit),
        format!("Write path `{}`: as ForestDB, a commit appends its documents (the WAL entries) and a DB header and rewrites a superblock slot; the B+-tree (ForestDB: HB+-trie) is updated and its changed nodes appended only when the WAL is flushed, {}, and with each compaction batch", plan.write_path.name(), wal_rule(plan)),
        format!("Compaction `{}` at {:.0} % stale bytes (ForestDB's default): one commit rewrites every live document of the file and a new index, appended together (appended next fit: each store is an append-only log wrapping around its space, as ForestDB appends to its file), and the old generation's pages are released whole (their trims dropped, as ext4 without discard). Stale share estimated `{}` (file-size: ForestDB's auto-compaction, the pages written since the generation began less the live documents and index nodes; data-pages: stale document bytes on the data pages in use); retired DB headers `{}` (hold: kept in the file until the compaction, then released with the old generation, as ForestDB's headers die with their file; reuse: given back to the store's allocator at the next commit){}", plan.compaction_mode.name(), COMPACT_THRESHOLD * 100.0, plan.stale_estimate.name(), plan.retired_headers.name(), match plan.stale_pages { engine::kv::StalePages::Reuse => "", engine::kv::StalePages::Hold => "; every page freed within a generation (index nodes a WAL flush rewrote, stale data pages) held until the compaction that ends it, so new index nodes go to the file's end (stale pages `hold`, ForestDB's)" }),
        match plan.fs_chunk_pages {
            Some(n) => format!("Placement: the DB files are files of one file system, not fixed partitions: their pages are placed on the device in chunks of {n} pages ({} KiB; 1 page = ext4's 4 KiB block, its unit of allocation) where ext4's allocator would put them ({}) and a chunk whose pages a compaction released goes back to the pool, so a file written after another's old generation was deleted overwrites that generation's LBAs. The drive, which gets no trims, sees each new generation overwrite data of other files written at other times: this is what raises `none`'s WAF from 1.15 (fixed partitions, each file a log wrapping in its own range: blocks die in the order they were written) to P5's range, and what streams then separate (quick scale, seed 1: none 1.152 / 1.377 / 1.613 and per-type -9.8 / -25.4 / -23.2 % with fixed partitions / 16-page / 64-page chunks). {}", n * PAGE_BYTES as u64 / 1024, placement_rule(plan), free_space_note(plan)),
            None => "Placement: each DB file on its fixed partition (a log wrapping in its own range)".into(),
        },
        format!("per-file: {} files over {} non-default streams (file f -> stream 1 + f mod {}); auto: at most {} streams, regrouped online from measured lifetimes", plan.files, plan.device_streams.saturating_sub(1), plan.device_streams.saturating_sub(1), plan.device_streams),
        "The stores' write sequence does not depend on the device: every run sees the same writes (only where it stops differs): the stores run once, their calls on their partitions are recorded and replayed on each run's device".into(),
        "P5's WAF is the drive's (SMART) since the start of a 6.5 h or 24 h run and still growing (P5: WAF grows with the data written); ours is the steady-state WAF of the last capacities written once flat (`waf_cumulative`: since the updates began), and equal time is the shortest of our runs in simulated time (queue depth 1), not 24 h".into(),
    ];
    if let Ok(cfg) = device_config(plan, plan.gc_modes[0]) {
        n.push(pool_note(&cfg));
    }
    if let Some(x) = plan.fstrim_every {
        let each: Vec<String> = runs
            .iter()
            .map(|r| {
                format!(
                    "{} (gc {}): {} trims, {:.2} capacities of free space trimmed",
                    r.policy.name(),
                    gc_name(r.gc),
                    r.fstrims.trims,
                    r.fstrims.pages as f64 / r.logical_pages as f64
                )
            })
            .collect();
        n.push(format!("Periodic fstrim of the file system's free space at the start of the updates and every {x} capacities the host writes (not P5's setting: Ubuntu 14.04's weekly cron job would give a 6.5 h run at most one): {}", each.join("; ")));
    }
    n.extend(compaction_note(plan, runs));
    n.extend(oracle_notes(plan, runs));
    let auto = find(runs, &MapSpec::Policy(NamedPolicy::Auto), plan.gc_modes[0]);
    if let Some(r) = auto {
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
        n.push(format!(
            "auto's final grouping (the types of any file on each stream): {}",
            text.join("; ")
        ));
    }
    n
}

/// The first run's compactions per file (`none`, the first GC mode: the lifetime table's run),
/// as `config.compactions_per_file`: the counts and the capacities the run wrote.
pub(super) fn compactions_config(plan: &Plan, runs: &[Run]) -> Option<serde_json::Value> {
    let r = find(runs, &plan.policies[0], plan.gc_modes[0])?;
    let c = r.compactions;
    Some(json!({
        "policy": r.policy.name(),
        "gc_mode": gc_name(r.gc),
        "files": plan.files,
        "min": c.min,
        "mean": c.mean,
        "max": c.max,
        "total": c.total,
        "host_writes_x_capacity": ratio(r.stats.host_pages_written, r.logical_pages),
    }))
}

/// How often the DB files were compacted whole over the first run's update phase.
fn compaction_note(plan: &Plan, runs: &[Run]) -> Option<String> {
    let r = find(runs, &plan.policies[0], plan.gc_modes[0])?;
    let c = r.compactions;
    let x = ratio(r.stats.host_pages_written, r.logical_pages);
    let every = (c.mean > 0.0).then(|| {
        format!(
            "; a file is compacted every {:.2} capacities the host writes",
            x / c.mean
        )
    });
    Some(format!(
        "Compactions (`{}`) per DB file over the update phase ({} run, gc {}, {x:.1} capacities written by the host; each row's compactions_per_file_* for its own run): min {}, mean {:.1}, max {} over {} files, {} in all{}",
        plan.compaction_mode.name(),
        r.policy.name(),
        gc_name(r.gc),
        c.min,
        c.mean,
        c.max,
        plan.files,
        c.total,
        every.unwrap_or_default()
    ))
}

/// Whether the file system's free space is in the chunk pool, and what it changes (measured
/// with `multistream_probe -- goal`).
/// How the file system picks a chunk for a file's write, as the run's goal does.
fn placement_rule(plan: &Plan) -> &'static str {
    match plan.chunk_goal {
        blockdev::ChunkGoal::Mballoc => "as ext4's multi-block allocator: a write's new chunks are one request; a file appends into its own preallocation (sized from the file: 16 KiB to 8 MiB), which is placed at the goal after the file's last block when the free extent there holds it, else in the shortest free extent that holds it in the first 128 MiB block group from the goal's that has one",
        blockdev::ChunkGoal::MballocFreeOrder => "as ext4's multi-block allocator (a write's new chunks one request, a file appending into its own preallocation at the goal after its last block), but a preallocation the goal cannot hold takes the free space freed longest ago (reuse in the order freed: a bound, not ext4's rule)",
        blockdev::ChunkGoal::MballocStream => "as ext4's multi-block allocator for large files (a write's new chunks one request, a file appending into its own preallocation at the goal after its last block), a preallocation the goal cannot hold placed best fit in the first 128 MiB block group with room from the group of the last allocation of any file (ext4's global goal for stream allocation)",
        blockdev::ChunkGoal::OwnShare => "the first free chunk after the file's last one, else the lowest free",
        blockdev::ChunkGoal::Directory => "after the file's previous chunk, else the lowest free chunk (the directory's group)",
        blockdev::ChunkGoal::Lowest => "the lowest free chunk",
    }
}

fn free_space_note(plan: &Plan) -> String {
    let goal = format!("Chunk goal `{}`", plan.chunk_goal.name());
    if !plan.fs_free_space {
        return format!("{goal}; the file system is the DB files' space alone (no free space)");
    }
    format!("{goal}; the file system spans the whole logical space: the {:.0} % the DB files leave is free space any file's chunk may take (P5: 80 GB of ext4 free space beside 400 GB of files). Measured with 64-page chunks, seed 1, per-stream GC, one block pool: at 128 MiB it raises none's WAF from 1.719 to 2.128 (per-type -26.9 %, merge-similar -27.7 %, merge-different +6.8 %); at 1 GiB every policy stays at WAF 1.000 with or without it, and with the directory or lowest goals (`multistream_probe -- goal paper`); with 4 KiB blocks, 1 GiB gives none 1.687, per-type -37.9 % (`-- chunks paper`)", (1.0 - FILL) * 100.0)
}

/// Where this run's SSD pools its free and open blocks, and what the open blocks take of the
/// spare area (the sizing's choice for the capacity).
fn pool_note(cfg: &SsdConfig) -> String {
    let dies = u64::from(cfg.dies());
    let spare = cfg.spare_blocks();
    let open = cfg.ftl.open_slots();
    let taken = |pools: u64| {
        (open + u64::from(cfg.ftl.gc_free_blocks_min)) as f64 * pools as f64 / spare.max(1) as f64
            * 100.0
    };
    match cfg.ftl.gc_pool {
        ssd::GcPool::PerDie => format!("SSD pools: free and open blocks per die ({dies} dies, {} spare blocks per die; {open} open blocks per die with {} streams and GC {}, and a GC reserve of {}: {:.0} % of the spare area; the PM953's would take ~3.5 %). Each stream kept open costs every die its blocks, so policies with more streams have less spare to work with; one pool for the device removes that cost", spare / dies.max(1), cfg.ftl.streams, cfg.ftl.gc_stream.name(), cfg.ftl.gc_free_blocks_min, taken(dies)),
        ssd::GcPool::Device => format!("SSD pools: one pool of free and open blocks for the device ({spare} spare blocks; {open} open blocks with {} streams and GC {}, and a GC reserve of {}: {:.1} % of the spare area, as on the PM953 (~3.5 % with an open block per slot on each of its 32 dies, ~7 % as superblocks); per die on this device's {dies} dies they would take {:.0} %)", cfg.ftl.streams, cfg.ftl.gc_stream.name(), cfg.ftl.gc_free_blocks_min, taken(1), taken(dies)),
    }
}
