//! Probes of `reproduce multistream` (minutes of CPU; a measurement, not a test): where the
//! SSD pools its free and open blocks, per die or for the device, with P5's four policies at
//! paper scale (`pool`), file-system chunks per DB file (`chunks`, at the scale given second), and where
//! the file system places a file's chunks (`goal`, at the scale given second: quick|paper),
//! and what the store does with retired DB headers and how it estimates the stale share
//! (`headers`, at the scale given second), and the file system's allocator, ext4-mballoc-like
//! or first fit from each file's goal (`mballoc [quick|paper] [live share]`).
//! Run: `cargo run --release -p lab --example multistream_probe -- [pool|chunks [paper]|goal [paper]|headers [paper]|space [paper] [live]|mballoc [paper] [live]|wal [paper] [docs]|stale [paper]|trim [paper]|inplace [paper]|faithful [paper] [live] [reuse|hold]|freeorder [paper] [stream|free]|fstrim [paper] [x,y,...]|reuse [paper] [name,...]|gcpolicy [paper] [greedy,cost-benefit,fifo]|op [paper] [x,y,...]|gcvictim [paper] [device,stream]|walmax [paper] [n,...]|capacity quick [MiB,...]]`.

use blockdev::ChunkGoal;
use engine::kv::{CompactionMode, RetiredHeaders, StaleEstimate, StalePages};
use lab::papers::p5_multistream::{run_with, DbFiles, MapSpec, MultistreamRow, Plan};
use lab::report::Scale;
use lab::ReproduceOptions;
use policy::streams::NamedPolicy;

fn main() {
    let which = std::env::args().nth(1);
    let scale = match std::env::args().nth(2).as_deref() {
        Some("paper") => Scale::Paper,
        Some("quick") | None => Scale::Quick,
        Some(other) => usage(&format!("unknown scale {other:?}; use `quick` or `paper`")),
    };
    match which.as_deref() {
        Some("pool") => gc_pool_per_die_against_one_pool_at_paper_scale(),
        Some("chunks") => chunks_per_file(scale),
        Some("goal") => chunk_goals(scale),
        Some("headers") => headers_and_stale_estimate(scale),
        Some("space") => shared_file_system(scale, std::env::args().nth(3)),
        Some("mballoc") => mballoc(scale, std::env::args().nth(3)),
        Some("wal") => wal_flush(scale, std::env::args().nth(3)),
        Some("stale") => stale_pages(scale),
        Some("trim") => trims(scale),
        Some("inplace") => in_place_reuse(scale),
        Some("reuse") => block_reuse(scale, std::env::args().nth(3)),
        Some("freeorder") => free_order(scale),
        Some("fstrim") => periodic_fstrim(scale, std::env::args().nth(3)),
        Some("gcpolicy") => gc_policies(scale, std::env::args().nth(3)),
        Some("op") => over_provisioning(scale, std::env::args().nth(3)),
        Some("gcvictim") => gc_victims(scale, std::env::args().nth(3)),
        Some("walmax") => wal_flush_max(scale, std::env::args().nth(3)),
        Some("capacity") => capacities(std::env::args().nth(3)),
        Some("faithful") => faithful(
            scale,
            std::env::args().nth(3),
            std::env::args().nth(4),
        ),
        None => {
            gc_pool_per_die_against_one_pool_at_paper_scale();
            chunks_per_file(Scale::Quick);
        }
        Some(other) => usage(&format!(
            "unknown probe {other:?}; use `pool`, `chunks`, `goal`, `headers`, `space`, `mballoc`, `wal`, `stale`, `trim`, `inplace`, `faithful`, `freeorder`, `fstrim`, `reuse`, `gcpolicy`, `op`, `gcvictim`, `walmax` or `capacity`"
        )),
    }
}

/// Say what was wrong with the arguments and exit 2.
fn usage(why: &str) -> ! {
    eprintln!("multistream_probe: {why}");
    std::process::exit(2);
}

/// The live share given to `space`: a number above 0 and below 1 (a share of each file's
/// space that live documents hold).
fn live_share(arg: &str) -> f64 {
    match arg.parse::<f64>() {
        Ok(l) if l > 0.0 && l < 1.0 => l,
        _ => usage(&format!(
            "live share {arg:?}: give a number above 0 and below 1, e.g. 0.3"
        )),
    }
}

fn gc_pool_per_die_against_one_pool_at_paper_scale() {
    let opts = ReproduceOptions {
        scale: Scale::Paper,
        ..Default::default()
    };
    for pool in [ssd::GcPool::PerDie, ssd::GcPool::Device] {
        let mut plan = four_policies(&opts);
        plan.gc_pool = Some(pool);
        run_and_print(&opts, &plan, &format!("pool {pool:?}"));
    }
}

/// Each file-system goal (where a file's chunk is placed first), on the default pool.
fn chunk_goals(scale: Scale) {
    let opts = ReproduceOptions {
        scale,
        jobs: lab::parallel::Jobs::new(2),
        ..Default::default()
    };
    for (goal, free) in [
        (ChunkGoal::OwnShare, false),
        (ChunkGoal::OwnShare, true),
        (ChunkGoal::Directory, true),
        (ChunkGoal::Lowest, true),
    ] {
        let mut plan = four_policies(&opts);
        plan.chunk_goal = goal;
        plan.fs_free_space = free;
        let probe = format!("goal {} free space {free} {scale:?}", goal.name());
        run_and_print(&opts, &plan, &probe);
    }
}

/// DB files as partitions of their share, or as files of one shared file system at growing
/// live shares (how full the file system is; `space [quick|paper] [live share]` runs one).
fn shared_file_system(scale: Scale, live: Option<String>) {
    let opts = ReproduceOptions {
        scale,
        jobs: lab::parallel::Jobs::new(2),
        ..Default::default()
    };
    let cases: Vec<(DbFiles, f64)> = match live.as_deref().map(live_share) {
        Some(l) => vec![(DbFiles::Shared { space_x: 4 }, l)],
        None => vec![
            (DbFiles::Partitions, 0.25),
            (DbFiles::Shared { space_x: 4 }, 0.25),
            (DbFiles::Shared { space_x: 4 }, 0.5),
        ],
    };
    for (files, live) in cases {
        let mut plan = four_policies(&opts);
        plan.db_files = files;
        plan.live_share = live;
        run_and_print(
            &opts,
            &plan,
            &format!("files {} live {live} {scale:?}", files.name()),
        );
    }
}

/// The file system's allocator, first fit from each file's goal (default) or ext4-mballoc-like,
/// with the DB files on one shared file system at a live share (default 0.3; `mballoc
/// [quick|paper] [live share]`), and the mballoc one on partitions.
fn mballoc(scale: Scale, live: Option<String>) {
    let opts = ReproduceOptions {
        scale,
        jobs: lab::parallel::Jobs::new(2),
        ..Default::default()
    };
    let live = live.as_deref().map_or(0.3, live_share);
    for (files, goal, l) in [
        (DbFiles::Partitions, ChunkGoal::Mballoc, 0.25),
        (DbFiles::Shared { space_x: 4 }, ChunkGoal::OwnShare, live),
        (DbFiles::Shared { space_x: 4 }, ChunkGoal::Mballoc, live),
    ] {
        let mut plan = four_policies(&opts);
        plan.db_files = files;
        plan.chunk_goal = goal;
        plan.live_share = l;
        let probe = format!(
            "files {} goal {} live {l} {scale:?}",
            files.name(),
            goal.name()
        );
        run_and_print(&opts, &plan, &probe);
    }
}

/// The WAL flush threshold at most `docs` documents (default 64; ForestDB's 4,096 is ~1 % of
/// a P5 file's documents), on the default plan and on one shared file system with the
/// mballoc-like allocator at live share 0.3 (`wal [quick|paper] [docs]`).
fn wal_flush(scale: Scale, docs: Option<String>) {
    let opts = ReproduceOptions {
        scale,
        jobs: lab::parallel::Jobs::new(2),
        ..Default::default()
    };
    let docs = docs.as_deref().map_or(64, |d| match d.parse::<u64>() {
        Ok(n) if n > 0 => n,
        _ => usage(&format!(
            "WAL documents {d:?}: give a whole number above 0, e.g. 64"
        )),
    });
    for (files, goal, live) in [
        (DbFiles::Partitions, ChunkGoal::OwnShare, 0.25),
        (DbFiles::Shared { space_x: 4 }, ChunkGoal::Mballoc, 0.3),
    ] {
        let mut plan = four_policies(&opts);
        plan.db_files = files;
        plan.chunk_goal = goal;
        plan.live_share = live;
        plan.wal_flush_docs_max = Some(docs);
        let probe = format!(
            "wal {docs} files {} goal {} live {live} {scale:?}",
            files.name(),
            goal.name()
        );
        run_and_print(&opts, &plan, &probe);
    }
}

/// One shared file system with the mballoc-like allocator and the WAL flushed at P5's share of
/// a file's documents (`P5_WAL_FLUSH_SHARE`), at live shares 0.3 and 0.25, or at the one given
/// (`faithful [quick|paper] [live share] [reuse|hold]`: the store's stale pages, reused in
/// the generation as by default, or held until its compaction as ForestDB's; both when not
/// given).
fn faithful(scale: Scale, live: Option<String>, stale: Option<String>) {
    let opts = ReproduceOptions {
        scale,
        jobs: lab::parallel::Jobs::new(2),
        ..Default::default()
    };
    let lives = match live.as_deref().map(live_share) {
        Some(l) => vec![l],
        None => vec![0.3, 0.25],
    };
    let stales = match stale.as_deref() {
        None => StalePages::ALL.to_vec(),
        Some(s) => match StalePages::parse(s) {
            Some(m) => vec![m],
            None => usage(&format!("stale pages {s:?}: use `reuse` or `hold`")),
        },
    };
    for live in lives {
        for &stale in &stales {
            let mut plan = four_policies(&opts);
            plan.db_files = DbFiles::Shared { space_x: 4 };
            plan.chunk_goal = ChunkGoal::Mballoc;
            plan.live_share = live;
            plan.wal_flush_share = Some(lab::papers::p5_multistream::P5_WAL_FLUSH_SHARE);
            plan.stale_pages = stale;
            let probe = format!("faithful live {live} stale {} {scale:?}", stale.name());
            run_and_print(&opts, &plan, &probe);
        }
    }
}

/// The default plan (partitions, mballoc, the WAL at min(4,096, a file's keys)) with the
/// stores' stale pages reused within a generation (default) or held until its compaction
/// (`stale [quick|paper]`).
fn stale_pages(scale: Scale) {
    let opts = ReproduceOptions {
        scale,
        jobs: lab::parallel::Jobs::new(2),
        ..Default::default()
    };
    for stale in StalePages::ALL {
        let mut plan = four_policies(&opts);
        plan.stale_pages = stale;
        run_and_print(&opts, &plan, &format!("stale {} {scale:?}", stale.name()));
    }
}

/// The stores' trims dropped (P5's ext4 without `discard`, the default) or passed on to the
/// drive (`trim [quick|paper]`).
fn trims(scale: Scale) {
    let opts = ReproduceOptions {
        scale,
        jobs: lab::parallel::Jobs::new(2),
        ..Default::default()
    };
    for discard in [false, true] {
        let mut plan = four_policies(&opts);
        plan.discard = discard;
        run_and_print(&opts, &plan, &format!("discard {discard} {scale:?}"));
    }
}

/// Whole-file compaction (ForestDB's, default) against stale pages reused within the file
/// (incremental compaction: freed pages go back to the store's allocator), the mode P5's text
/// describes ("writes append until the invalid share passes a ratio, then reuses the invalid
/// region"; `inplace [quick|paper]`).
fn in_place_reuse(scale: Scale) {
    let opts = ReproduceOptions {
        scale,
        jobs: lab::parallel::Jobs::new(2),
        ..Default::default()
    };
    for mode in [CompactionMode::WholeFile, CompactionMode::Incremental] {
        let mut plan = four_policies(&opts);
        plan.compaction_mode = mode;
        run_and_print(
            &opts,
            &plan,
            &format!("compaction {} {scale:?}", mode.name()),
        );
    }
}

/// ext4-like allocation with best fit near the goal (default) against reuse in the order
/// freed and against ext4's global goal for large files (`freeorder [quick|paper]
/// [stream|free]`).
fn free_order(scale: Scale) {
    let opts = ReproduceOptions {
        scale,
        jobs: lab::parallel::Jobs::new(2),
        ..Default::default()
    };
    let goals = match std::env::args().nth(3).as_deref() {
        Some("stream") => vec![ChunkGoal::MballocStream],
        Some("free") => vec![ChunkGoal::MballocFreeOrder],
        _ => vec![
            ChunkGoal::Mballoc,
            ChunkGoal::MballocFreeOrder,
            ChunkGoal::MballocStream,
        ],
    };
    for goal in goals {
        let mut plan = four_policies(&opts);
        plan.chunk_goal = goal;
        run_and_print(&opts, &plan, &format!("goal {} {scale:?}", goal.name()));
    }
}

/// One run of the four policies per comma-separated value of `given` (or `default`): each
/// value parsed by `parse` (its error ends the probe with usage) and set on the plan by `set`;
/// each run labelled `{name} {value} {scale}`.
fn sweep<T>(
    scale: Scale,
    given: Option<String>,
    default: &str,
    name: &str,
    parse: impl Fn(&str) -> Result<T, String>,
    set: impl Fn(&mut Plan, T),
) {
    let opts = ReproduceOptions {
        scale,
        jobs: lab::parallel::Jobs::new(2),
        ..Default::default()
    };
    let values = given.unwrap_or_else(|| default.into());
    for x in values.split(',') {
        let v = parse(x).unwrap_or_else(|why| usage(&why));
        let mut plan = four_policies(&opts);
        set(&mut plan, v);
        run_and_print(&opts, &plan, &format!("{name} {x} {scale:?}"));
    }
}

/// A periodic fstrim of the file system's free space every given number of capacities
/// written (`fstrim [quick|paper] [x,y,...]`; default 100 (one trim, at the start of the
/// updates), 2, 0.5).
fn periodic_fstrim(scale: Scale, every: Option<String>) {
    let parse = |x: &str| match x.parse::<f64>() {
        Ok(x) if x > 0.0 => Ok(x),
        _ => Err(format!(
            "fstrim period {x:?}: give capacities above 0, e.g. 2"
        )),
    };
    sweep(scale, every, "100,2,0.5", "fstrim every", parse, |p, x| {
        p.fstrim_every = Some(x)
    });
}

/// The SSD's GC victim policy, each given one in turn (`gcpolicy [quick|paper]
/// [greedy,cost-benefit,fifo]`; default greedy and cost-benefit).
fn gc_policies(scale: Scale, names: Option<String>) {
    let parse = |name: &str| {
        ssd::GcPolicy::parse(name)
            .ok_or_else(|| format!("GC policy {name:?}: use greedy, cost-benefit or fifo"))
    };
    sweep(
        scale,
        names,
        "greedy,cost-benefit",
        "gcpolicy",
        parse,
        |p, g| p.gc_policy = g,
    );
}

/// Where the SSD takes a GC victim from, each given scope in turn (`gcvictim [quick|paper]
/// [device,stream]`; default both).
fn gc_victims(scale: Scale, names: Option<String>) {
    let parse = |name: &str| {
        ssd::GcVictimScope::parse(name)
            .ok_or_else(|| format!("GC victim scope {name:?}: use device or stream"))
    };
    sweep(scale, names, "device,stream", "gcvictim", parse, |p, v| {
        p.gc_victim = v
    });
}

/// The WAL flush threshold's cap in documents, each given one in turn on the default plan
/// (`walmax [quick|paper] [n,...]`, 0: no cap, the default; default 0, 4096 and 512). A file
/// flushes at its key count or the cap, whichever is smaller: 814 keys a file at 128 MiB, 6,520
/// at 1 GiB; ForestDB's 4,096 is 0.63 of the latter, and 512 gives 128 MiB that share.
fn wal_flush_max(scale: Scale, docs: Option<String>) {
    let parse = |x: &str| match x.parse::<u64>() {
        Ok(n) => Ok(n),
        _ => Err(format!(
            "WAL documents {x:?}: give a whole number, e.g. 512 (0: no cap)"
        )),
    };
    sweep(scale, docs, "0,4096,512", "walmax", parse, |p, n| {
        p.wal_flush_docs_max = (n > 0).then_some(n)
    });
}

/// The device's capacity in MiB, each given one in turn on the default plan (`capacity quick
/// [MiB,...]`; default 256 and 512, between the scales' 128 and 1,024): how the stream gains
/// and the superblock's lifetime factor move with the device alone.
fn capacities(mib: Option<String>) {
    let parse = |x: &str| match x.parse::<u64>() {
        // At most 16 GiB: the store runs in memory on the simulated device (and n << 20 must
        // not lose bits).
        Ok(n) if (16..=16 << 10).contains(&n) => Ok(n),
        _ => Err(format!(
            "capacity {x:?}: give MiB as a whole number from 16 to 16384, e.g. 256"
        )),
    };
    sweep(
        Scale::Quick,
        mib,
        "256,512",
        "capacity MiB",
        parse,
        |p, n| p.capacity_bytes = n << 20,
    );
}

/// The SSD's over-provisioning, each given share in turn (`op [quick|paper] [x,y,...]`;
/// default 0.145, the preset's, and 0.047).
fn over_provisioning(scale: Scale, shares: Option<String>) {
    let parse = |x: &str| match x.parse::<f64>() {
        Ok(op) if op > 0.0 => Ok(op),
        _ => Err(format!(
            "over-provisioning {x:?}: give a share above 0, e.g. 0.145"
        )),
    };
    sweep(scale, shares, "0.145,0.047", "op", parse, |p, op| {
        p.op = Some(op)
    });
}

/// Incremental compaction (stale pages reused within the file) with retired headers held or
/// reused, the stores' holes punched or not, on an aged drive or one as mkfs leaves it, and
/// whole-file compaction on the latter (`reuse [quick|paper] [name,...]`; default all).
fn block_reuse(scale: Scale, which: Option<String>) {
    let opts = ReproduceOptions {
        scale,
        jobs: lab::parallel::Jobs::new(2),
        ..Default::default()
    };
    let which = which.unwrap_or_else(|| "all".into());
    for (name, mode, headers, trims, aged) in [
        (
            "hold-trims",
            CompactionMode::Incremental,
            RetiredHeaders::Hold,
            true,
            true,
        ),
        (
            "reuse-trims",
            CompactionMode::Incremental,
            RetiredHeaders::Reuse,
            true,
            true,
        ),
        (
            "hold-notrim",
            CompactionMode::Incremental,
            RetiredHeaders::Hold,
            false,
            true,
        ),
        (
            "reuse-notrim",
            CompactionMode::Incremental,
            RetiredHeaders::Reuse,
            false,
            true,
        ),
        (
            "reuse-notrim-fresh",
            CompactionMode::Incremental,
            RetiredHeaders::Reuse,
            false,
            false,
        ),
        (
            "hold-notrim-fresh",
            CompactionMode::Incremental,
            RetiredHeaders::Hold,
            false,
            false,
        ),
        (
            "wholefile-fresh",
            CompactionMode::WholeFile,
            RetiredHeaders::Hold,
            true,
            false,
        ),
    ] {
        if which != "all" && !which.split(',').any(|w| w == name) {
            continue;
        }
        let mut plan = four_policies(&opts);
        plan.compaction_mode = mode;
        plan.retired_headers = headers;
        plan.store_trims = trims;
        plan.aged_drive = aged;
        run_and_print(&opts, &plan, &format!("reuse {name} {scale:?}"));
    }
}

/// Retired headers reused or held to their generation's compaction, by each stale estimate.
fn headers_and_stale_estimate(scale: Scale) {
    let opts = ReproduceOptions {
        scale,
        jobs: lab::parallel::Jobs::new(2),
        ..Default::default()
    };
    for retired in [RetiredHeaders::Reuse, RetiredHeaders::Hold] {
        for estimate in StaleEstimate::ALL {
            let mut plan = four_policies(&opts);
            plan.retired_headers = retired;
            plan.stale_estimate = estimate;
            let probe = format!(
                "headers {} estimate {} {scale:?}",
                retired.name(),
                estimate.name()
            );
            run_and_print(&opts, &plan, &probe);
        }
    }
}

/// File-system chunks per DB file: at paper scale (1 GiB) a file spans ~104 chunks of 64
/// pages and its next generation mostly reuses its own freed chunks; at quick scale (128 MiB)
/// ~13, mostly reused by other files. 8-page chunks give quick scale paper scale's ~104
/// chunks per file (and 4-page chunks ~208).
fn chunks_per_file(scale: Scale) {
    let opts = ReproduceOptions {
        scale,
        jobs: lab::parallel::Jobs::new(2),
        ..Default::default()
    };
    for chunk in [1u64, 4, 64] {
        let mut plan = four_policies(&opts);
        plan.fs_chunk_pages = Some(chunk);
        run_and_print(&opts, &plan, &format!("chunk {chunk} pages {scale:?}"));
    }
}

fn run_and_print(opts: &ReproduceOptions, plan: &Plan, probe: &str) {
    let out = run_with(opts, plan).expect("multistream run");
    let rows: Vec<MultistreamRow> = out.report.rows_as().expect("multistream rows");
    for r in rows {
        print_row(probe, &r);
    }
    let deaths = out
        .report
        .notes
        .iter()
        .filter(|n| {
            n.starts_with("What ends a page")
                || n.starts_with("Age at release")
                || n.starts_with("File system held")
                || n.starts_with("GC copies per host page")
        })
        .cloned()
        .collect::<Vec<_>>()
        .join(" | ");
    println!("probe {probe}: {deaths}");
    for c in &out.report.claims {
        println!(
            "probe {probe}: claim {} | paper {} | ours {} | {:?}",
            c.claim, c.paper_value, c.ours, c.verdict
        );
    }
}

/// P5's four policies under per-stream GC, the plan every probe varies.
fn four_policies(opts: &ReproduceOptions) -> Plan {
    let mut plan = Plan::new(opts);
    plan.gc_modes = vec![ssd::GcStreamMode::PerStream];
    plan.policies = [
        NamedPolicy::NoStreams,
        NamedPolicy::PerType,
        NamedPolicy::SimilarMerged,
        NamedPolicy::DifferentMerged,
    ]
    .into_iter()
    .map(MapSpec::Policy)
    .collect();
    plan
}

fn print_row(probe: &str, r: &MultistreamRow) {
    println!(
        "probe {probe}: {} WAF {:.3} ({:+.1} % vs none) flat {}",
        r.policy,
        r.waf,
        -r.waf_reduction_vs_none.unwrap_or(0.0),
        r.waf_flat
    );
}
