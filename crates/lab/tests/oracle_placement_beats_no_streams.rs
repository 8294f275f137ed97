//! `flashlab sim --stream-policy oracle`: placing each write by its known death time (a first
//! pass over the same requests) never gives a higher WAF than one stream, on random skewed
//! workloads and seeds; and on a workload of two lifetimes it separates them.

use lab::sim::{run, Precondition, SimOptions};
use policy::streams::LbaPolicySpec;
use proptest::prelude::*;
use ssd::SsdConfig;

fn options(workload: &str, policy: &str, streams: u16, seed: u64) -> SimOptions {
    let mut cfg = SsdConfig::preset("mlc-sata-2010").unwrap();
    cfg.ftl.streams = streams;
    cfg.timing.enabled = false;
    let cfg = cfg.with_logical_capacity(80 << 20).unwrap();
    let flow = lab::spec::FlowSpec {
        workload: workload.into(),
        ..Default::default()
    }
    .resolve(&cfg, 0, seed)
    .unwrap();
    SimOptions {
        config: cfg,
        preset: Some("mlc-sata-2010".into()),
        config_path: None,
        flows: vec![flow],
        job_path: None,
        log_interval_ns: None,
        write_volume: Some(2.0),
        precondition: Precondition::Full { passes: 1.0 },
        replay_trace_timing: false,
        stream_policy: LbaPolicySpec::parse(policy).unwrap(),
        seed,
        max_memory_bytes: 1 << 30,
        max_flash_writes: None,
        sampler: Default::default(),
    }
}

fn waf(workload: &str, policy: &str, streams: u16, seed: u64) -> f64 {
    let r = run(&options(workload, policy, streams, seed), &mut |_, _| {}).unwrap();
    r.waf.unwrap()
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 4, ..ProptestConfig::default() })]
    #[test]
    fn oracle_waf_is_at_most_none(
        seed in 0u64..1_000,
        hot_writes in 0.6f64..0.95,
        hot_space in 0.05f64..0.3,
    ) {
        let w = format!("hotcold-write:{hot_writes:.2}:{hot_space:.2}");
        let none = waf(&w, "none", 4, seed);
        let oracle = waf(&w, "oracle", 4, seed);
        prop_assert!(oracle <= none, "{w} seed {seed}: oracle {oracle} none {none}");
    }
}

#[test]
fn oracle_separates_hot_from_cold_writes() {
    let opts = options("hotcold-write:0.9:0.1", "oracle", 4, 7);
    let r = run(&opts, &mut |_, _| {}).unwrap();
    let used = r
        .host_pages_written_by_stream
        .iter()
        .filter(|&&n| n > 0)
        .count();
    assert!(used >= 2, "{:?}", r.host_pages_written_by_stream);
    let hot = waf("hotcold-write:0.9:0.1", "hot-cold", 4, 7);
    // At least as good as the workload's own hot/cold oracle.
    assert!(r.waf.unwrap() <= hot * 1.01, "{} vs {hot}", r.waf.unwrap());
}
