//! `reproduce multistream` on a small device: one row per policy with the keys the issue
//! names, the WAF-over-time and lifetime series, P5's figures apart from ours, and the same JSON
//! for the same seed.

use lab::papers::p5_multistream::{run_with, MapSpec, MultistreamRow, Plan};
use lab::ReproduceOptions;
use policy::streams::NamedPolicy;

fn small() -> (ReproduceOptions, Plan) {
    let opts = ReproduceOptions {
        capacity: Some(48 << 20),
        ..Default::default()
    };
    let mut plan = Plan::new(&opts);
    plan.max_host_x = 1.0;
    // Small blocks, so that 48 MiB holds the open blocks of 8 streams under per-stream GC.
    plan.pages_per_block = 16;
    (opts, plan)
}

#[test]
fn a_small_run_has_one_row_per_policy_the_series_and_the_lifetime_table() {
    let (opts, plan) = small();
    let out = run_with(&opts, &plan).unwrap();
    let r = &out.report;
    assert_eq!(r.experiment, "multistream");
    // One block pool for the device and the file system's free space in the chunk pool.
    assert_eq!(r.config["gc_pool"], "Device", "{}", r.config);
    assert_eq!(r.config["fs_free_space"], true);
    assert!(r
        .notes
        .iter()
        .any(|n| n.contains("of the spare area, as on the PM953")));
    let rows: Vec<MultistreamRow> = r.rows_as().unwrap();
    let names: Vec<&str> = rows.iter().map(|r| r.policy.as_str()).collect();
    assert_eq!(
        names,
        [
            "none",
            "per-type",
            "merge-similar",
            "merge-different",
            "per-file",
            "auto",
            "oracle"
        ]
    );
    for row in &r.rows {
        for key in [
            "policy",
            "waf",
            "waf_reduction_vs_none",
            "host_bytes_written",
            "erases",
            "gc_pages_copied",
            "waf_gc_separate",
            "waf_gc_victim",
            "waf_gc_per_stream",
        ] {
            assert!(row.contains_key(key), "row lacks {key}: {row:?}");
        }
        assert!(!row.contains_key("table"), "a paper row leaked into rows");
    }
    assert_eq!(rows[0].waf_reduction_vs_none, Some(0.0));
    for row in &rows {
        assert!(row.waf >= 1.0, "{row:?}");
        assert!(row.host_bytes_written > 0 && row.host_bytes_equal_time > 0);
        assert!(row.host_bytes_equal_time <= row.host_bytes_written);
    }
    let waf_series: Vec<&str> = r
        .series
        .iter()
        .filter(|s| s.name == "waf_over_time")
        .map(|s| s.label.as_str())
        .collect();
    assert_eq!(waf_series.len(), 21, "7 policies x 3 GC modes");
    assert!(waf_series.contains(&"per-type") && waf_series.contains(&"auto (gc victim)"));
    // The oracle: the best placement the streams allow, with each policy's gap to it.
    let oracle = rows.iter().find(|r| r.policy == "oracle").unwrap();
    let none = rows.iter().find(|r| r.policy == "none").unwrap();
    assert!(
        oracle.waf <= none.waf * 1.01,
        "{} vs {}",
        oracle.waf,
        none.waf
    );
    assert!(r.notes.iter().any(|n| n.starts_with("gap to the oracle")));
    let hist: Vec<&str> = r
        .series
        .iter()
        .filter(|s| s.name == "lifetime_histogram")
        .map(|s| s.label.as_str())
        .collect();
    assert_eq!(hist, ["superblock", "header", "index", "data"]);
    let lifetime = r.config["lifetime"].as_array().unwrap();
    assert_eq!(lifetime.len(), 4);
    let share: f64 = lifetime
        .iter()
        .map(|l| l["share_pct"].as_f64().unwrap())
        .sum();
    assert!((share - 100.0).abs() < 1e-6, "{share}");
    // ForestDB's write mix (path wal): the index a small share, data most of it, and the
    // superblock (rewritten in place every commit) the shortest-lived type.
    let of = |t: &str, k: &str| {
        let l = lifetime.iter().find(|l| l["type"] == t).unwrap();
        l[k].as_f64()
    };
    assert!(of("index", "share_pct").unwrap() < 5.0, "{lifetime:?}");
    assert!(of("data", "share_pct").unwrap() > 60.0, "{lifetime:?}");
    // (A type none of whose pages was written twice in this short run has no mean; one with
    // fewer than 20 pages written twice has no mean worth comparing: in this one-capacity run
    // 2 of the index's 68 pages are, the first of them to die.)
    let sb = of("superblock", "mean_writes").unwrap();
    for t in ["header", "index", "data"] {
        let sampled = of(t, "overwritten").unwrap() >= 20.0;
        assert!(
            !sampled || of(t, "mean_writes").is_none_or(|m| sb * 10.0 < m),
            "{lifetime:?}"
        );
    }
    assert!(of("data", "overwritten").unwrap() >= 20.0, "{lifetime:?}");
    // GC copies per device stream: under per-stream GC they add up to each run's total, and
    // per-type's streams are its four types.
    let by_stream = r.config["gc_by_stream"].as_array().unwrap();
    for row in &rows {
        let of_run = by_stream
            .iter()
            .filter(|s| s["policy"] == row.policy.as_str() && s["gc_mode"] == "per-stream");
        let copied: u64 = of_run
            .clone()
            .map(|s| s["gc_pages_copied"].as_u64().unwrap())
            .sum();
        assert_eq!(copied, row.gc_pages_copied, "{}: {by_stream:?}", row.policy);
        let host: u64 = of_run.map(|s| s["host_pages"].as_u64().unwrap()).sum();
        assert_eq!(host * 4096, row.host_bytes_written, "{}", row.policy);
    }
    let per_type: Vec<&str> = by_stream
        .iter()
        .filter(|s| s["policy"] == "per-type" && s["gc_mode"] == "per-stream")
        .filter(|s| s["host_pages"].as_u64().unwrap() > 0)
        .map(|s| s["types"].as_str().unwrap())
        .collect();
    assert_eq!(per_type, ["superblock", "header", "index", "data"]);
    assert!(r
        .notes
        .iter()
        .any(|n| n.starts_with("GC copies per host page, by device stream")));
    assert!(r
        .paper
        .iter()
        .all(|p| p["table"].as_str().unwrap().starts_with("P5")));
    let text = out.to_string();
    assert!(text.contains("paper WAF") && text.contains("P5 Table 1"));
}

#[test]
fn the_same_seed_gives_the_same_json() {
    let (opts, mut plan) = small();
    plan.policies = vec![
        MapSpec::Policy(NamedPolicy::NoStreams),
        MapSpec::Policy(NamedPolicy::Auto),
    ];
    let a = run_with(&opts, &plan).unwrap().report.to_json();
    let b = run_with(&opts, &plan).unwrap().report.to_json();
    assert_eq!(a, b);
}

#[test]
fn a_users_stream_map_runs_beside_the_policies_and_a_bad_one_is_refused_first() {
    let dir = tempfile::tempdir().unwrap();
    let good = dir.path().join("mine.toml");
    std::fs::write(
        &good,
        "[types]\nsuperblock = 1\nheader = 1\nindex = 2\ndata = 3\n",
    )
    .unwrap();
    let (opts, mut plan) = small();
    plan.policies = vec![
        MapSpec::Policy(NamedPolicy::NoStreams),
        MapSpec::File(good.clone()),
    ];
    plan.gc_modes.truncate(1);
    let rows: Vec<MultistreamRow> = run_with(&opts, &plan).unwrap().report.rows_as().unwrap();
    assert_eq!(rows[1].policy, good.display().to_string());
    assert!(rows[1].waf_reduction_vs_none.is_some());

    let bad = dir.path().join("bad.toml");
    std::fs::write(&bad, "[types]\ndata = 99\n").unwrap();
    plan.policies.push(MapSpec::File(bad.clone()));
    let e = run_with(&opts, &plan).unwrap_err().to_string();
    assert!(e.contains("bad.toml:2") && e.contains("types.data"), "{e}");
}

/// With `discard` the stores' trims reach the drive: a page a compaction freed dies at once,
/// so GC copies less than when the drive learns of it only when its LBA is written again.
#[test]
fn trims_passed_on_lower_the_gc_copies() {
    let (opts, mut plan) = small();
    plan.policies = vec![MapSpec::Policy(NamedPolicy::NoStreams)];
    plan.gc_modes = vec![ssd::GcStreamMode::PerStream];
    let copied = |discard: bool| {
        let mut p = plan.clone();
        p.discard = discard;
        let out = run_with(&opts, &p).unwrap();
        assert_eq!(out.report.config["discard"], discard);
        let rows: Vec<MultistreamRow> = out.report.rows_as().unwrap();
        rows[0].gc_pages_copied
    };
    let (dropped, passed) = (copied(false), copied(true));
    assert!(dropped > 0, "this run has GC copies to save");
    assert!(
        passed < dropped,
        "discard: {passed} copies, without: {dropped}"
    );
}

/// A periodic fstrim tells the drive what the file system has free: GC then copies less than
/// when it learns of a freed page only when its LBA is written again.
#[test]
fn a_periodic_fstrim_lowers_the_gc_copies() {
    let (opts, mut plan) = small();
    plan.policies = vec![MapSpec::Policy(NamedPolicy::NoStreams)];
    plan.gc_modes = vec![ssd::GcStreamMode::PerStream];
    let run = |every: Option<f64>| {
        let mut p = plan.clone();
        p.fstrim_every = every;
        let out = run_with(&opts, &p).unwrap();
        assert_eq!(
            out.report.config["fstrim_every"],
            serde_json::json!(every),
            "the period is in the config"
        );
        let rows: Vec<MultistreamRow> = out.report.rows_as().unwrap();
        let note = out
            .report
            .notes
            .iter()
            .find(|n| n.starts_with("Periodic fstrim"))
            .cloned();
        (rows[0].gc_pages_copied, note)
    };
    let ((none, no_note), (trimmed, note)) = (run(None), run(Some(0.25)));
    assert!(no_note.is_none(), "no fstrim note without a period");
    let note = note.expect("a note on the fstrims");
    assert!(!note.contains(": 0 trims"), "{note}");
    assert!(none > 0, "this run has GC copies to save");
    assert!(trimmed < none, "fstrim: {trimmed} copies, without: {none}");
}

/// The SSD's GC victim policy reaches the device: FIFO takes the oldest block whatever it
/// holds, so it copies more than greedy, which takes the one with the fewest valid pages.
#[test]
fn the_gc_victim_policy_reaches_the_device() {
    let (opts, mut plan) = small();
    plan.policies = vec![MapSpec::Policy(NamedPolicy::NoStreams)];
    plan.gc_modes = vec![ssd::GcStreamMode::PerStream];
    let run = |policy: ssd::GcPolicy| {
        let mut p = plan.clone();
        p.gc_policy = policy;
        let out = run_with(&opts, &p).unwrap();
        assert_eq!(
            out.report.config["gc_policy"],
            serde_json::json!(policy),
            "the policy is in the config"
        );
        let rows: Vec<MultistreamRow> = out.report.rows_as().unwrap();
        rows[0].gc_pages_copied
    };
    let (greedy, fifo) = (run(ssd::GcPolicy::Greedy), run(ssd::GcPolicy::Fifo));
    assert!(greedy > 0, "this run has GC copies to compare");
    assert!(fifo > greedy, "fifo {fifo} copies, greedy {greedy}");
}

/// A smaller spare area makes GC copy more; a share of 0 or below is refused by name.
#[test]
fn the_over_provisioning_reaches_the_device_and_a_bad_one_is_refused() {
    let (opts, mut plan) = small();
    plan.policies = vec![MapSpec::Policy(NamedPolicy::NoStreams)];
    plan.gc_modes = vec![ssd::GcStreamMode::PerStream];
    let run = |op: Option<f64>| {
        let mut p = plan.clone();
        p.op = op;
        run_with(&opts, &p).map(|out| {
            assert_eq!(out.report.config["op"], serde_json::json!(op));
            let rows: Vec<MultistreamRow> = out.report.rows_as().unwrap();
            rows[0].gc_pages_copied
        })
    };
    let (preset, less) = (run(None).unwrap(), run(Some(0.10)).unwrap());
    assert!(
        less > preset,
        "op 10 %: {less} copies, the preset's 14.5 %: {preset}"
    );
    let err = format!("{:#}", run(Some(0.0)).unwrap_err());
    assert!(err.contains("over-provisioning 0"), "{err}");
}

/// Where the SSD takes a GC victim from reaches the device: with every page on one stream
/// (`none`) a stream's blocks are the device's, so both scopes give the same run; per type,
/// victims from the writing stream's own blocks change the copies. A shared GC stream (GC mode
/// `separate`) with victims per stream is refused by name.
#[test]
fn the_gc_victim_scope_reaches_the_device() {
    let (opts, mut plan) = small();
    plan.policies = vec![
        MapSpec::Policy(NamedPolicy::NoStreams),
        MapSpec::Policy(NamedPolicy::PerType),
    ];
    plan.gc_modes = vec![ssd::GcStreamMode::PerStream];
    let run = |scope: ssd::GcVictimScope| {
        let mut p = plan.clone();
        p.gc_victim = scope;
        let out = run_with(&opts, &p).unwrap();
        assert_eq!(out.report.config["gc_victim"], scope.name());
        let rows: Vec<MultistreamRow> = out.report.rows_as().unwrap();
        (rows[0].gc_pages_copied, rows[1].gc_pages_copied)
    };
    let (device, stream) = (
        run(ssd::GcVictimScope::Device),
        run(ssd::GcVictimScope::Stream),
    );
    assert!(device.1 > 0, "this run has GC copies to compare");
    assert_eq!(device.0, stream.0, "one stream: the same victims");
    assert_ne!(device.1, stream.1, "per type: victims per stream");
    plan.gc_modes = vec![ssd::GcStreamMode::Separate];
    plan.gc_victim = ssd::GcVictimScope::Stream;
    let err = format!("{:#}", run_with(&opts, &plan).unwrap_err());
    assert!(err.contains("ftl.gc_victim"), "{err}");
}

/// The WAL flush threshold is the same share of a file's keys at every capacity (a file's key
/// count by default: 814 keys at 128 MiB, 6,520 at 1 GiB); a cap, when set, binds only on
/// files with more keys than it.
#[test]
fn the_wal_is_the_same_share_of_a_file_at_every_capacity() {
    use lab::papers::p5_multistream::wal_flush_docs;
    for scale in [lab::report::Scale::Quick, lab::report::Scale::Paper] {
        let opts = ReproduceOptions {
            scale,
            ..Default::default()
        };
        let plan = Plan::new(&opts);
        for keys in [1, 814, 4_096, 6_520, 390_000] {
            assert_eq!(wal_flush_docs(&plan, keys), keys, "{scale:?}, {keys} keys");
        }
        let mut capped = plan.clone();
        capped.wal_flush_docs_max = Some(4_096);
        assert_eq!(wal_flush_docs(&capped, 814), 814);
        assert_eq!(wal_flush_docs(&capped, 6_520), 4_096);
    }
}

/// Each DB file's whole-file compactions are counted over the update phase
/// (`config.compactions_per_file`, the rows' `compactions_per_file_*`): every file is compacted
/// (uniform updates), about as often as ForestDB's 30 % stale rule allows — once per
/// generation, a generation being the file's live data written again plus the 30 % it may
/// grow by, a few tenths of a capacity of each file's share (not once per commit: a file
/// commits every 16 updates) — and a file with less live data is compacted more often (its
/// generation is shorter).
#[test]
fn every_file_is_compacted_as_often_as_its_stale_threshold_allows() {
    let (opts, mut plan) = small();
    plan.policies = vec![MapSpec::Policy(NamedPolicy::NoStreams)];
    plan.gc_modes = vec![ssd::GcStreamMode::PerStream];
    plan.max_host_x = 2.0;
    let run = |live_share: f64| {
        let mut p = plan.clone();
        p.live_share = live_share;
        let out = run_with(&opts, &p).unwrap();
        let c = out.report.config["compactions_per_file"].clone();
        let rows: Vec<MultistreamRow> = out.report.rows_as().unwrap();
        let r = &rows[0];
        assert_eq!(c["files"], 32, "{c}");
        assert_eq!(c["min"], r.compactions_per_file_min, "{c}");
        assert_eq!(c["max"], r.compactions_per_file_max, "{c}");
        assert_eq!(c["mean"], r.compactions_per_file_mean, "{c}");
        let total = c["total"].as_u64().unwrap();
        assert!((total as f64 - r.compactions_per_file_mean * 32.0).abs() < 1e-9);
        assert!(r.compactions_per_file_min >= 1, "every file compacted: {c}");
        let (lo, hi) = (r.compactions_per_file_min, r.compactions_per_file_max);
        assert!(hi - lo <= 2, "uniform updates compact the files alike: {c}");
        // Per capacity the host writes: a generation is a few tenths of a file's share.
        let per_x = r.compactions_per_file_mean / r.host_writes_x_capacity;
        assert!((0.5..=6.0).contains(&per_x), "{per_x} a capacity: {c}");
        assert!(
            out.report
                .notes
                .iter()
                .any(|n| n.starts_with("Compactions")),
            "the note"
        );
        per_x
    };
    let (default, less_live) = (run(0.25), run(0.15));
    assert!(
        less_live > default * 1.2,
        "live share 0.15: {less_live} a capacity, 0.25: {default}"
    );
}
