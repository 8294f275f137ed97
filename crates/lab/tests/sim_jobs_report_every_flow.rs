//! `flashlab sim --job`: a job of several flows reports each flow, and the flows' figures add
//! up to the run's; the single-workload flags are a one-flow job (the same output as the job
//! file that says the same); one flow through the mixed path gives the figures of the
//! single-workload path.

use lab::sim::{run, SimResult};
use lab::spec::SimSpec;
use proptest::prelude::*;
use std::path::PathBuf;

fn job_file(name: &str, text: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("flashlab-jobs-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join(name);
    std::fs::write(&path, text).unwrap();
    path
}

fn run_job(path: PathBuf) -> SimResult {
    let spec = SimSpec {
        job: Some(path),
        ..SimSpec::default()
    };
    run(&spec.resolve().unwrap(), &mut |_, _| {}).unwrap()
}

const DEVICE: &str = "[device]\ncapacity = \"64MiB\"\nop = 0.07\ntiming = \"on\"\nwrite_volume = \"1x\"\nprecondition = \"fill\"\nseed = 5\nstreams = 2\n";

/// Flows' requests, pages and flash pages add up to the run's, every GC copy is some flow's
/// or the preconditioning's, and the flows keep the job's order.
fn check_adds_up(r: &SimResult) {
    let sum = |f: fn(&lab::sim::FlowResult) -> u64| r.flows.iter().map(f).sum::<u64>();
    assert_eq!(sum(|f| f.host_ios), r.host_ios);
    assert_eq!(sum(|f| f.host_pages_written), r.host_pages_written);
    assert_eq!(sum(|f| f.host_pages_read), r.host_pages_read);
    assert_eq!(
        sum(|f| f.gc_pages_copied) + r.gc_pages_copied_unattributed,
        r.gc_pages_copied
    );
    // Page mapping: every flash program is a host page or a GC copy.
    assert_eq!(
        sum(|f| f.flash_pages_written) + r.gc_pages_copied_unattributed,
        r.flash_pages_written
    );
}

#[test]
fn two_flows_report_figures_that_add_up_to_the_run() {
    let path = job_file(
        "two.toml",
        &format!("{DEVICE}\n[[flow]]\nname = \"hot\"\nworkload = \"uniform-write\"\nshare = 3\nstream = 0\nsize = \"16MiB\"\n\n[[flow]]\nname = \"seq\"\nworkload = \"seq-write\"\nstream = 1\nrequest_size = \"16KiB\"\noffset = \"16MiB\"\n"),
    );
    let r = run_job(path);
    assert_eq!(
        r.flows.iter().map(|f| f.name.as_str()).collect::<Vec<_>>(),
        ["hot", "seq"]
    );
    check_adds_up(&r);
    let (hot, seq) = (&r.flows[0], &r.flows[1]);
    // Three hot requests (one page) for every sequential one (four pages).
    assert!(
        hot.host_ios.abs_diff(3 * seq.host_ios) <= 3,
        "{} vs {}",
        hot.host_ios,
        seq.host_ios
    );
    assert_eq!(
        r.host_pages_written_by_stream,
        [hot.host_pages_written, seq.host_pages_written]
    );
    // Random overwrites of a small region need GC copies; whole sequential blocks need none.
    assert!(hot.gc_pages_copied > 0);
    assert!(
        seq.gc_pages_copied * 10 < hot.gc_pages_copied,
        "{} vs {}",
        seq.gc_pages_copied,
        hot.gc_pages_copied
    );
    assert!(hot.latency_us.p50 > 0.0 && hot.latency_us.max >= hot.latency_us.p99);
    assert!(r.setup.flows.as_ref().is_some_and(|f| f.len() == 2));
}

fn without_process_keys(v: serde_json::Value) -> serde_json::Value {
    match v {
        serde_json::Value::Object(m) => m
            .into_iter()
            .filter(|(k, _)| {
                !k.contains("wall")
                    && k != "peak_rss_bytes"
                    && !k.ends_with("bytes_per_logical_page")
                    && k != "job"
            })
            .map(|(k, v)| (k, without_process_keys(v)))
            .collect(),
        serde_json::Value::Array(a) => a.into_iter().map(without_process_keys).collect(),
        v => v,
    }
}

#[test]
fn the_flags_are_a_one_flow_job() {
    let flags = SimSpec {
        capacity: Some("64MiB".into()),
        op: Some(0.07),
        write_volume: Some("1x".into()),
        precondition: "fill".into(),
        seed: 5,
        workload: "zipf-write:0.9".into(),
        request_size: Some("8KiB".into()),
        ..SimSpec::default()
    };
    let a = run(&flags.resolve().unwrap(), &mut |_, _| {}).unwrap();
    let path = job_file(
        "one.toml",
        "[device]\ncapacity = \"64MiB\"\nop = 0.07\nwrite_volume = \"1x\"\nprecondition = \"fill\"\nseed = 5\n\n[[flow]]\nname = \"zipf-write:0.9\"\nworkload = \"zipf-write:0.9\"\nrequest_size = \"8KiB\"\n",
    );
    let b = run_job(path);
    assert_eq!(b.flows.len(), 1);
    let json = |r: &SimResult| without_process_keys(serde_json::to_value(r).unwrap());
    assert_eq!(json(&a), json(&b));
}

#[test]
fn one_flow_through_the_mix_gives_the_single_workload_figures() {
    let spec = SimSpec {
        capacity: Some("64MiB".into()),
        write_volume: Some("1x".into()),
        precondition: "fill".into(),
        workload: "uniform-write".into(),
        ..SimSpec::default()
    };
    let plain = run(&spec.resolve().unwrap(), &mut |_, _| {}).unwrap();
    let logged_spec = SimSpec {
        log_interval: Some("20ms".into()),
        ..spec
    };
    let logged = run(&logged_spec.resolve().unwrap(), &mut |_, _| {}).unwrap();
    assert!(!logged.log.is_empty());
    let logged_ios: f64 = logged.log.iter().map(|row| row.iops * 0.02).sum();
    assert!(
        (logged_ios - logged.host_ios as f64).abs() < 0.5,
        "{logged_ios} vs {}",
        logged.host_ios
    );
    let mut a = without_process_keys(serde_json::to_value(&plain).unwrap());
    let mut b = without_process_keys(serde_json::to_value(&logged).unwrap());
    a["log"] = serde_json::Value::Null;
    b["log"] = serde_json::Value::Null;
    assert_eq!(a, b);
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(6))]
    /// Whatever the flows, their host pages (and requests) sum to the run's.
    #[test]
    fn per_flow_host_pages_sum_to_the_total(
        flows in proptest::collection::vec((0usize..4, 1u32..4, 1u32..3), 1..4),
    ) {
        const WORKLOADS: [&str; 4] = ["uniform-write", "seq-write", "zipf-write:0.9", "mix:0.5"];
        let mut text = String::from("[device]\ncapacity = \"32MiB\"\ntiming = \"off\"\nwrite_volume = \"0.3x\"\nprecondition = \"none\"\nseed = 9\n");
        for (k, (w, share, pages)) in flows.iter().enumerate() {
            text += &format!("\n[[flow]]\nname = \"f{k}\"\nworkload = \"{}\"\nshare = {share}\nrequest_size = \"{}KiB\"\n", WORKLOADS[*w], 4 * pages);
        }
        let r = run_job(job_file(&format!("prop{}.toml", text.len()), &text));
        let written: u64 = r.flows.iter().map(|f| f.host_pages_written).sum();
        let ios: u64 = r.flows.iter().map(|f| f.host_ios).sum();
        prop_assert_eq!(written, r.host_pages_written);
        prop_assert_eq!(ios, r.host_ios);
        prop_assert_eq!(r.flows.len(), flows.len());
    }
}
