//! `flashlab sim --stream-policy`: every policy's choice reaches the device (the per-stream host
//! page counts of the run equal the policy's own choices replayed over the same request
//! stream), policies are refused where they cannot apply, and a run is deterministic (same
//! seed, same JSON except the wall-clock keys).

use lab::sim::{run, Precondition, SimOptions};
use policy::streams::LbaPolicySpec;
use ssd::{GcStreamMode, SsdConfig};
use workload::{LbaMapping, OpKind, Target, WorkloadOptions, WorkloadSpec};

const WORKLOAD: &str = "hotcold-write:0.9:0.1";

fn options(policy: &str, streams: u16, precondition: Precondition) -> SimOptions {
    let mut cfg = SsdConfig::preset("mlc-sata-2010").unwrap();
    cfg.ftl.streams = streams;
    cfg.timing.enabled = false;
    let cfg = cfg.with_logical_capacity(64 << 20).unwrap();
    SimOptions {
        config: cfg.clone(),
        preset: Some("mlc-sata-2010".into()),
        config_path: None,
        flows: vec![flow(WORKLOAD, &cfg)],
        job_path: None,
        log_interval_ns: None,
        write_volume: Some(2.0),
        precondition,
        replay_trace_timing: false,
        stream_policy: LbaPolicySpec::parse(policy).unwrap(),
        seed: 3,
        max_memory_bytes: 1 << 30,
        max_flash_writes: None,
        sampler: Default::default(),
    }
}

fn flow(workload: &str, cfg: &SsdConfig) -> lab::sim::FlowOptions {
    let spec = lab::spec::FlowSpec {
        workload: workload.into(),
        ..Default::default()
    };
    spec.resolve(cfg, 0, 3).unwrap()
}

/// Host pages per stream the policy chooses over the run's own request stream.
fn replayed(opts: &SimOptions) -> Vec<u64> {
    let target = Target {
        logical_pages: opts.config.logical_pages(),
        page_bytes: opts.config.geometry.page_bytes,
    };
    let spec = WorkloadSpec::parse(&opts.flows[0].workload).unwrap();
    let streams = opts.config.ftl.streams;
    let hot = workload::synth::hot_pages(&spec, target, 1);
    let mut policy = opts
        .stream_policy
        .build(hot, target.logical_pages, streams)
        .unwrap();
    let w = WorkloadOptions {
        request_pages: 1,
        volume_pages: None,
        seed: seed::Seed(opts.seed).fork("workload").value(),
        trace_format: None,
        mapping: LbaMapping::Wrap,
        clipped: workload::ClipCount::default(),
        sampler: Default::default(),
    };
    let pages = (opts.write_volume.unwrap() * target.logical_pages as f64).ceil() as usize;
    let mut counts = vec![0u64; streams as usize];
    for r in workload::build(&spec, target, &w).unwrap().take(pages) {
        let r = r.unwrap();
        assert_eq!(r.op, OpKind::Write);
        counts[policy.stream_of_run(r.lpn, r.pages, None) as usize] += r.pages as u64;
    }
    counts
}

#[test]
fn every_policy_reaches_the_device_streams() {
    // auto finds two lifetimes (hot and cold) and spends no more streams on them.
    for (policy, streams, used) in [
        ("none", 1, 1),
        ("hot-cold", 2, 2),
        ("by-lba-range:4", 4, 4),
        ("auto:16", 4, 2),
    ] {
        let opts = options(policy, streams, Precondition::None);
        let r = run(&opts, &mut |_, _| {}).unwrap();
        let want = replayed(&opts);
        assert_eq!(r.host_pages_written_by_stream, want, "{policy}");
        assert_eq!(want.iter().sum::<u64>(), r.host_pages_written, "{policy}");
        let nonzero = want.iter().filter(|&&n| n > 0).count();
        assert_eq!(nonzero, used, "{policy}: pages per stream {want:?}");
        assert_eq!(r.config.ftl.gc_stream, GcStreamMode::PerStream);
        assert_eq!(r.stream_mapping.is_some(), policy.starts_with("auto"));
    }
}

#[test]
fn policies_that_cannot_apply_are_refused_with_what_to_do() {
    let e = run(&options("hot-cold", 1, Precondition::None), &mut |_, _| {}).unwrap_err();
    assert!(format!("{e:#}").contains("--streams 2"), "{e:#}");
    let mut o = options("hot-cold", 2, Precondition::None);
    o.flows = vec![flow("uniform-write", &o.config)];
    let e = run(&o, &mut |_, _| {}).unwrap_err();
    assert!(format!("{e:#}").contains("hotcold-write"), "{e:#}");
}

fn without_wall_clock(v: serde_json::Value) -> serde_json::Value {
    match v {
        serde_json::Value::Object(m) => m
            .into_iter()
            // Measurements of the process (wall clock, resident memory), not of the run.
            .filter(|(k, _)| {
                !k.contains("wall")
                    && k != "peak_rss_bytes"
                    && !k.ends_with("bytes_per_logical_page")
            })
            .map(|(k, v)| (k, without_wall_clock(v)))
            .collect(),
        serde_json::Value::Array(a) => a.into_iter().map(without_wall_clock).collect(),
        v => v,
    }
}

#[test]
fn same_seed_same_json() {
    let opts = options("auto", 4, Precondition::Full { passes: 0.5 });
    let json =
        || without_wall_clock(serde_json::to_value(run(&opts, &mut |_, _| {}).unwrap()).unwrap());
    let (a, b) = (json(), json());
    assert_eq!(a, b);
    assert!(a["stream_mapping"].is_array());
    assert_eq!(a["setup"]["stream_policy"], "auto:64");
}
