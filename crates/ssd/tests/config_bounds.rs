//! Every config is either refused with an error naming the field, or builds a device that runs
//! with finite figures: no hang, no panic, no allocation crash, no wrapped simulated time.
//! Size-dependent FTL settings fit small capacities; the smallest capacity is stated.

use proptest::prelude::*;
use ssd::{ConfigError, FtlKind, GcPool, Lpn, SimTime, Ssd, SsdConfig, SsdError, StreamId};

const MIB: u64 = 1 << 20;

fn preset() -> SsdConfig {
    SsdConfig::preset("mlc-sata-2010").unwrap()
}

fn field_of(e: &ConfigError) -> &'static str {
    match e {
        ConfigError::Invalid { field, .. } | ConfigError::TooSmall { field, .. } => field,
        other => panic!("expected a field error, got {other}"),
    }
}

/// Write every logical page, then as many again at scattered addresses; verify.
fn exercise(cfg: SsdConfig) {
    let mut ssd = Ssd::new(cfg).unwrap();
    let n = ssd.logical_pages();
    let mut t = SimTime::ZERO;
    for i in 0..2 * n {
        let l = if i < n { i } else { (i * 7919) % n };
        t = ssd.write(Lpn(l), 1, StreamId(0), t).unwrap();
    }
    ssd.verify().unwrap();
    assert!(ssd.stats().waf().is_finite() && ssd.stats().waf() >= 1.0);
}

/// Uniform random single-page writes of `passes` times the logical space (timing off),
/// verifying the FTL after each pass.
fn random_writes(cfg: SsdConfig, passes: u64, what: &str) {
    let mut cfg = cfg;
    cfg.timing.enabled = false;
    let mut ssd = Ssd::new(cfg).unwrap_or_else(|e| panic!("{what}: {e}"));
    let n = ssd.logical_pages();
    let mut x = 0x9E37_79B9_7F4A_7C15u64;
    for pass in 0..passes {
        for _ in 0..n {
            x = x
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            let l = (x >> 17) % n;
            ssd.write(Lpn(l), 1, StreamId(0), SimTime::ZERO)
                .unwrap_or_else(|e| panic!("{what}, pass {pass}: {e}"));
        }
        ssd.verify()
            .unwrap_or_else(|e| panic!("{what}, pass {pass}: {e}"));
    }
    let s = ssd.stats();
    assert!(
        s.gc_invocations > 0 || s.flash_pages_written > s.host_pages_written || n < 2,
        "{what}: GC never ran"
    );
    assert!(s.waf().is_finite() && s.waf() >= 1.0, "{what}");
}

#[test]
fn every_ftl_on_every_preset_runs_with_defaults_at_64_and_128_mib() {
    for (name, _) in ssd::config::PRESETS {
        for mib in [64, 128] {
            for kind in FtlKind::ALL {
                let mut cfg = SsdConfig::preset(name).unwrap();
                if kind != FtlKind::Page {
                    cfg = ssd::config::fdp::without_fdp(&cfg); // FDP is the page FTL's
                }
                cfg.ftl.scheme = kind;
                let what = format!("{kind:?} on {name} at {mib} MiB");
                let cfg = cfg
                    .with_logical_capacity(mib * MIB)
                    .unwrap_or_else(|e| panic!("{what}: {e}"));
                assert!(cfg.logical_bytes() >= mib * MIB, "{what}");
                random_writes(cfg, 3, &what);
            }
        }
    }
}

#[test]
fn every_ftl_runs_with_default_settings_at_its_smallest_capacity() {
    for kind in FtlKind::ALL {
        let mut cfg = preset();
        cfg.ftl.scheme = kind;
        let bytes = cfg.min_logical_bytes().unwrap();
        let cfg = cfg
            .with_logical_capacity(bytes)
            .unwrap_or_else(|e| panic!("{kind:?} at {bytes} bytes: {e}"));
        assert!(cfg.logical_bytes() >= bytes);
        exercise(cfg);
    }
}

#[test]
fn a_page_ftl_too_small_for_a_reserve_on_every_die_pools_its_blocks_for_the_device() {
    for kind in [FtlKind::Page, FtlKind::Dftl] {
        let mut cfg = preset();
        cfg.ftl.scheme = kind;
        let small = cfg.clone().with_logical_capacity(128 * MIB).unwrap();
        assert_eq!(small.ftl.gc_pool, GcPool::Device, "{kind:?}");
        assert!(small.spare_blocks() >= small.spare_blocks_needed());
        // The reserve is as large as the preset's where the device's spare blocks hold it.
        assert_eq!(
            small.ftl.gc_free_blocks_min, cfg.ftl.gc_free_blocks_min,
            "{kind:?}"
        );
        assert!(small.to_toml().contains("gc_pool = \"device\""));
        // At the smallest per-die capacity, and above, nothing changes.
        let min = cfg.min_logical_bytes().unwrap();
        for bytes in [min, 1 << 30] {
            let fits = cfg.clone().with_logical_capacity(bytes).unwrap();
            assert_eq!(fits.ftl.gc_pool, GcPool::PerDie, "{kind:?} at {bytes}");
            assert_eq!(
                fits.ftl.gc_free_blocks_min, cfg.ftl.gc_free_blocks_min,
                "{kind:?} at {bytes}"
            );
        }
        assert!(!cfg.to_toml().contains("gc_pool"), "default not written");
    }
}

#[test]
fn dftl_cmt_entries_scale_with_capacity() {
    let mut cfg = preset();
    cfg.ftl.scheme = FtlKind::Dftl;
    let ratio = cfg.ftl.cmt_entries as f64 / cfg.logical_pages() as f64;
    for mib in [64, 128, 1024] {
        let small = cfg.clone().with_logical_capacity(mib * MIB).unwrap();
        let want = (ratio * small.logical_pages() as f64).round() as u32;
        assert_eq!(small.ftl.cmt_entries, want.max(1), "{mib} MiB");
        assert!((small.ftl.cmt_entries as u64) <= small.logical_pages());
    }
    // At the loaded size or larger, and when set after loading, the value is kept.
    let large = cfg.clone().with_logical_capacity(64 << 30).unwrap();
    assert_eq!(large.ftl.cmt_entries, cfg.ftl.cmt_entries);
    let mut set = cfg.clone();
    set.ftl.cmt_entries = 1000;
    let small = set.with_logical_capacity(64 * MIB).unwrap();
    assert_eq!(small.ftl.cmt_entries, 1000);
    // A tiny device gets at least one entry, at most one per logical page.
    let mut tiny = cfg.clone();
    tiny.geometry.pages_per_block = 1;
    let loaded = SsdConfig::from_toml(&tiny.to_toml(), "tiny").unwrap();
    let min = loaded.min_logical_bytes().unwrap();
    let t = loaded.with_logical_capacity(min).unwrap();
    assert!(t.ftl.cmt_entries >= 1 && t.ftl.cmt_entries as u64 <= t.logical_pages());
}

#[test]
fn a_cmt_larger_than_the_logical_space_reports_only_what_it_can_hold() {
    // Issue 9: `--cmt-entries 4294967295` reported a 32 GiB table on a small device.
    let mut cfg = preset();
    cfg.ftl.scheme = FtlKind::Dftl;
    let mut cfg = cfg.with_logical_capacity(64 * MIB).unwrap();
    let pages = cfg.logical_pages();
    cfg.ftl.cmt_entries = u32::MAX;
    let ssd = Ssd::new(cfg).unwrap();
    let tpages = pages.div_ceil(cfg_page_bytes() / 4);
    assert_eq!(ssd.mapping_bytes(), pages * 8 + tpages * 4);
}

fn cfg_page_bytes() -> u64 {
    preset().geometry.page_bytes as u64
}

#[test]
fn bast_at_128_mib_lowers_its_log_blocks_to_what_the_spare_blocks_hold() {
    let mut cfg = preset();
    cfg.ftl.scheme = FtlKind::Bast;
    let small = cfg.clone().with_logical_capacity(128 * MIB).unwrap();
    assert!(small.ftl.log_blocks < cfg.ftl.log_blocks);
    assert_eq!(small.ftl.log_blocks as u64 + 2, small.spare_blocks());
    // Where the preset's settings fit, they are kept as they are.
    let large = cfg.clone().with_logical_capacity(1 << 30).unwrap();
    assert_eq!(large.ftl, cfg.ftl);
}

#[test]
fn a_page_ftl_too_small_for_its_open_blocks_states_the_smallest_capacity() {
    let mut cfg = preset();
    cfg.ftl.scheme = FtlKind::Page;
    cfg.ftl.streams = 32; // 64 open blocks (host + GC per stream) do not fit 19 spare blocks
    let e = cfg.clone().with_logical_capacity(128 * MIB).unwrap_err();
    let ConfigError::TooSmall {
        min_logical_bytes, ..
    } = e
    else {
        panic!("{e}")
    };
    assert!(
        e.to_string().contains(&min_logical_bytes.to_string()),
        "{e}"
    );
    let fits = cfg.with_logical_capacity(min_logical_bytes).unwrap();
    fits.validate().unwrap();
}

#[test]
fn the_smallest_capacity_is_the_smallest() {
    for kind in FtlKind::ALL {
        let mut cfg = preset();
        cfg.ftl.scheme = kind;
        let min = cfg.min_logical_bytes().unwrap();
        let mut at_min = cfg.clone().with_logical_capacity(min).unwrap();
        // DFTL's CMT scales with the size (dftl_cmt_entries_scale_with_capacity).
        at_min.ftl.cmt_entries = cfg.ftl.cmt_entries;
        assert_eq!(
            at_min.ftl, cfg.ftl,
            "{kind:?}: no setting lowered at the minimum"
        );
        if at_min.geometry.blocks_per_plane == 1 {
            continue; // nothing smaller exists
        }
        let mut smaller = at_min.clone();
        smaller.geometry.blocks_per_plane -= 1;
        assert!(
            matches!(smaller.validate(), Err(ConfigError::TooSmall { .. })),
            "{kind:?}: one block per plane less still fits"
        );
    }
}

#[test]
fn a_bad_op_is_refused_before_any_size_search() {
    // These spun forever: the capacity-fitting loop ran before validation.
    for op in [f64::NAN, f64::NEG_INFINITY, -2.0, f64::INFINITY, 0.0] {
        let mut cfg = preset();
        cfg.ftl.op = op;
        let e = cfg.clone().with_logical_capacity(1 << 30).unwrap_err();
        assert_eq!(field_of(&e), "ftl.op", "op {op}: {e}");
        let e = cfg.min_logical_bytes().unwrap_err();
        assert_eq!(field_of(&e), "ftl.op", "op {op}: {e}");
    }
}

#[test]
fn a_huge_geometry_is_refused_by_its_memory_estimate() {
    let mut cfg = preset();
    cfg.geometry.blocks_per_plane = 4_000_000;
    cfg.validate().unwrap();
    let limit = 8u64 << 30;
    let e = cfg.check_memory(limit).unwrap_err();
    let SsdError::MemoryLimit {
        estimate_bytes,
        limit_bytes,
    } = e.clone()
    else {
        panic!("{e}")
    };
    assert!(estimate_bytes > 32 << 30, "{estimate_bytes}");
    assert_eq!(limit_bytes, limit);
    let msg = e.to_string();
    assert!(msg.contains(&estimate_bytes.to_string()) && msg.contains(&limit.to_string()));
    // The presets fit in a modest limit, and the estimate covers what the tables take.
    let small = preset().with_logical_capacity(1 << 30).unwrap();
    let est = small.check_memory(1 << 30).unwrap();
    assert!(
        est > small.physical_pages() * 8 + small.logical_pages() * 4,
        "{est}"
    );
}

#[test]
fn a_huge_queue_depth_is_refused() {
    let mut cfg = preset();
    cfg.timing.host_queue_depth = u32::MAX;
    assert_eq!(
        field_of(&cfg.validate().unwrap_err()),
        "timing.host_queue_depth"
    );
    assert!(cfg.memory_bytes_estimate() > 32 << 30);
    assert!(cfg.check_memory(16 << 30).is_err());
}

#[test]
fn timing_fields_out_of_range_are_refused() {
    let mut cfg = preset();
    cfg.timing.channel_mb_per_s = 1e-300;
    assert_eq!(
        field_of(&cfg.validate().unwrap_err()),
        "timing.channel_mb_per_s"
    );
    let mut cfg = preset();
    cfg.timing.t_prog_ns = 9_000_000_000_000_000_000;
    assert_eq!(field_of(&cfg.validate().unwrap_err()), "timing.t_prog_ns");
}

#[test]
fn simulated_time_that_would_wrap_is_an_error_naming_a_timing_field() {
    let mut cfg = preset()
        .with_logical_capacity(64 * MIB)
        .unwrap_or_else(|_| {
            let mut c = preset();
            c.ftl.scheme = FtlKind::Block;
            c.with_logical_capacity(64 * MIB).unwrap()
        });
    cfg.timing.t_prog_ns = 10_000_000_000;
    let mut ssd = Ssd::new(cfg).unwrap();
    let e = ssd
        .write(Lpn(0), 1, StreamId(0), SimTime(u64::MAX - 1000))
        .unwrap_err();
    assert!(
        matches!(e, SsdError::TimeOverflow { field, .. } if field.starts_with("timing.")),
        "{e}"
    );
}

/// Mostly a sane value from `sane`, sometimes one at or beyond a bound.
fn u32_edge(sane: std::ops::Range<u32>) -> impl Strategy<Value = u32> {
    prop_oneof![
        6 => sane,
        1 => prop_oneof![Just(0u32), Just(1), Just(u32::MAX), Just(65_535), Just(65_536), 0u32..5_000_000],
    ]
}

fn u64_edge(sane: std::ops::Range<u64>) -> impl Strategy<Value = u64> {
    prop_oneof![
        6 => sane,
        1 => prop_oneof![Just(0u64), Just(u64::MAX), Just(10_000_000_000), Just(10_000_000_001)],
    ]
}

fn f64_edge(sane: std::ops::Range<f64>) -> impl Strategy<Value = f64> {
    prop_oneof![
        6 => sane,
        1 => prop_oneof![
            Just(f64::NAN),
            Just(f64::INFINITY),
            Just(f64::NEG_INFINITY),
            Just(0.0),
            Just(-2.0),
            Just(1e-300),
            Just(1e300),
            Just(0.1),
            Just(10.0),
            Just(1e6),
        ],
    ]
}

prop_compose! {
    fn any_config()(
        geo in (u32_edge(1..5), u32_edge(1..3), u32_edge(1..3), u32_edge(1..300), u32_edge(1..130), prop_oneof![6 => Just(4096u32), 1 => u32_edge(256..20_000)]),
        times in (u64_edge(0..100_000), u64_edge(0..2_000_000), u64_edge(0..5_000_000), f64_edge(1.0..2000.0), u32_edge(1..64)),
        ftl in (0usize..6, f64_edge(0.01..3.0), u32_edge(1..4), prop_oneof![6 => 1u16..4, 1 => Just(u16::MAX)], u32_edge(1..100), u32_edge(1..100_000)),
        capacity in prop_oneof![2 => Just(None), 1 => Just(Some(0u64)), 1 => Just(Some(u64::MAX)), 4 => (1u64..(64 << 20)).prop_map(Some)],
    ) -> (SsdConfig, Option<u64>) {
        let mut c = SsdConfig::preset("mlc-sata-2010").unwrap();
        (c.geometry.channels, c.geometry.dies_per_channel, c.geometry.planes_per_die) = (geo.0, geo.1, geo.2);
        (c.geometry.blocks_per_plane, c.geometry.pages_per_block, c.geometry.page_bytes) = (geo.3, geo.4, geo.5);
        (c.timing.t_read_ns, c.timing.t_prog_ns, c.timing.t_erase_ns) = (times.0, times.1, times.2);
        (c.timing.channel_mb_per_s, c.timing.host_queue_depth) = (times.3, times.4);
        c.ftl.scheme = FtlKind::ALL[ftl.0];
        (c.ftl.op, c.ftl.gc_free_blocks_min, c.ftl.streams) = (ftl.1, ftl.2, ftl.3);
        (c.ftl.log_blocks, c.ftl.cmt_entries) = (ftl.4, ftl.5);
        (c, capacity)
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 1000, ..ProptestConfig::default() })]
    #[test]
    fn any_config_is_refused_naming_a_field_or_runs_with_finite_figures((cfg, capacity) in any_config()) {
        let cfg = match capacity {
            Some(bytes) => match cfg.with_logical_capacity(bytes) {
                Ok(c) => c,
                Err(e) => {
                    field_of(&e);
                    return Ok(());
                }
            },
            None => cfg,
        };
        if let Err(e) = cfg.validate() {
            field_of(&e);
            return Ok(());
        }
        // Bounded work: refuse what would not fit a test's memory.
        if cfg.check_memory(256 << 20).is_err() {
            return Ok(());
        }
        let mut ssd = Ssd::new(cfg).unwrap();
        let n = ssd.logical_pages();
        let mut t = SimTime::ZERO;
        for i in 0..64u64.min(n) {
            match ssd.write(Lpn((i * 31) % n), 1, StreamId(0), t) {
                Ok(done) => t = done,
                Err(SsdError::DeviceFull { .. }) => break,
                Err(e) => prop_assert!(false, "{}", e),
            }
        }
        prop_assert!(ssd.stats().waf().is_finite());
        prop_assert!(ssd.latency_ns().max() < u64::MAX);
    }
}

/// `[[published]]` rows load and round-trip; a row with an unknown pattern, no rate or two
/// rates is refused naming the field.
#[test]
fn published_figures_load_and_bad_rows_are_refused() {
    let base = preset().to_toml();
    let row = |body: &str| format!("{base}\n[[published]]\n{body}\n");
    let good = row(
        "what = \"random read\"\nrequest_kib = 4\nqueue_depth = 32\niops = 25000.0\nsource = \"a datasheet\"",
    );
    let cfg = SsdConfig::from_toml(&good, "test").unwrap();
    assert_eq!(cfg.published.len(), 1);
    assert_eq!(cfg.published[0].iops, Some(25000.0));
    let again = SsdConfig::from_toml(&cfg.to_toml(), "round trip").unwrap();
    assert_eq!(again.published, cfg.published);
    for (body, field) in [
        ("what = \"random scribble\"\nrequest_kib = 4\nqueue_depth = 1\niops = 1.0\nsource = \"x\"", "published.what"),
        ("what = \"random read\"\nrequest_kib = 4\nqueue_depth = 1\nsource = \"x\"", "published.mb_per_s"),
        ("what = \"random read\"\nrequest_kib = 4\nqueue_depth = 1\niops = 1.0\nmb_per_s = 2.0\nsource = \"x\"", "published.mb_per_s"),
        ("what = \"random read\"\nrequest_kib = 0\nqueue_depth = 1\niops = 1.0\nsource = \"x\"", "published.request_kib"),
        ("what = \"random read\"\nrequest_kib = 4\nqueue_depth = 1\niops = -1.0\nsource = \"x\"", "published.mb_per_s"),
    ] {
        let e = SsdConfig::from_toml(&row(body), "test").unwrap_err();
        assert_eq!(field_of(&e), field, "{body}");
    }
}
