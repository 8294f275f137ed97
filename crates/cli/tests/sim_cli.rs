//! `flashlab sim` end to end: every workload kind and trace format gives one JSON object with
//! the documented keys; the same flags and seed give identical JSON (wall-clock keys aside);
//! bad input gives a clear error naming what was wrong, never a panic.

use serde_json::Value;
use std::path::PathBuf;

mod common;
use common::flashlab;

/// Measurements of the process, not of the simulation: wall clock and resident memory.
const WALL_KEYS: [&str; 7] = [
    "wall_seconds",
    "precondition_wall_seconds",
    "host_ios_per_wall_second",
    "host_pages_per_wall_second",
    "peak_rss_bytes",
    "bytes_per_logical_page",
    "process_bytes_per_logical_page",
];

const REQUIRED: [&str; 18] = [
    "waf",
    "host_pages_written",
    "flash_pages_written",
    "gc_pages_copied",
    "erases",
    "sim_seconds",
    "wall_seconds",
    "host_ios",
    "host_ios_per_wall_second",
    "throughput_mb_per_sim_second",
    "latency_us",
    "mapping_bytes",
    "alpha",
    "pages_per_block",
    "merges",
    "memory_bytes_estimate",
    "requests_clipped",
    "waf_model_applies",
];

fn sim_json(extra: &[&str]) -> Value {
    let mut args = vec![
        "sim",
        "--capacity",
        "256MiB",
        "--op",
        "0.25",
        "--json",
        "--quiet",
    ];
    args.extend_from_slice(extra);
    let out = flashlab(&args);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "flashlab {args:?} failed: {stderr}");
    let stdout = String::from_utf8(out.stdout).expect("utf-8");
    assert_eq!(stdout.trim().lines().count(), 1, "one JSON line: {stdout}");
    let v: Value = serde_json::from_str(stdout.trim()).expect("valid JSON");
    for k in REQUIRED {
        assert!(v.get(k).is_some(), "key {k} missing in {v}");
    }
    for k in ["p50", "p99", "p999"] {
        assert!(v["latency_us"][k].is_number(), "latency_us.{k}");
    }
    for k in ["full", "partial", "switch"] {
        assert!(v["merges"][k].is_number(), "merges.{k}");
    }
    v
}

fn shared_traces() -> PathBuf {
    let p = PathBuf::from(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../../shared/traces"
    ));
    assert!(
        p.is_dir(),
        "{} not found: the shared traces are not part of the repository (tests that need them are #[ignore]d; .ci/run runs them when ../shared/traces exists)",
        p.display()
    );
    p
}

#[test]
fn every_synthetic_workload_gives_the_documented_json() {
    for w in [
        "uniform-write",
        "seq-write",
        "zipf-write:0.99",
        "hotcold-write:0.8:0.2",
        "uniform-read",
        "seq-read",
        "zipf-read:0.9",
        "mix:0.7",
        "zipf-mix:0.99:0.5",
    ] {
        let v = sim_json(&[
            "--workload",
            w,
            "--write-volume",
            "0.5x",
            "--precondition",
            "fill",
        ]);
        assert!(v["host_ios"].as_u64().unwrap() > 0, "{w}: {v}");
    }
}

#[test]
fn uniform_writes_report_waf_near_the_model_with_timing_off() {
    let v = sim_json(&[
        "--timing",
        "off",
        "--write-volume",
        "2x",
        "--precondition",
        "full:2",
    ]);
    let (waf, model) = (v["waf"].as_f64().unwrap(), v["waf_model"].as_f64().unwrap());
    // A 64 MiB device is small (finite-size effects of a few percent); the exact check is in
    // ssd's analytic_waf test.
    assert!(
        (waf - model).abs() / model < 0.08,
        "waf {waf} model {model}"
    );
    assert_eq!(v["latency_us"]["p99"].as_f64(), Some(0.0));
}

#[test]
fn same_seed_gives_identical_json_except_wall_clock() {
    let run = |seed: &str| {
        let mut v = sim_json(&[
            "--workload",
            "zipf-write:0.9",
            "--write-volume",
            "1x",
            "--seed",
            seed,
            "--queue-depth",
            "4",
        ]);
        for k in WALL_KEYS {
            v.as_object_mut().unwrap().remove(k);
        }
        v
    };
    let (a, b) = (run("5"), run("5"));
    assert_eq!(a, b);
    assert_ne!(a, run("6"), "a different seed should change something");
}

#[test]
#[ignore = "needs ../shared/traces"]
fn every_trace_format_replays() {
    let dir = shared_traces();
    for (file, format) in [
        ("msr_hm0_first1000.csv", "msr"),
        ("mqsim_tpcc_small.trace", "disksim"),
        ("systor17_sample.csv.gz", "systor"),
        ("tencent_cbs_sample.csv.bz2", "tencent"),
        ("wiscsee_sqlite_wal_blkparse.txt", "blkparse"),
    ] {
        let path = format!("trace:{}", dir.join(file).display());
        for mapping in ["wrap", "scale"] {
            let v = sim_json(&[
                "--workload",
                &path,
                "--trace-format",
                format,
                "--trace-mapping",
                mapping,
                "--precondition",
                "fill",
            ]);
            assert!(
                v["host_ios"].as_u64().unwrap() > 0,
                "{file} ({mapping}): {v}"
            );
        }
    }
}

#[test]
fn spc_traces_replay() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("tiny.spc");
    std::fs::write(
        &path,
        "0,20941264,8192,W,0.551706\n0,20939840,8192,r,0.554041\n1,3436288,4096,w,0.568\n",
    )
    .unwrap();
    let w = format!("trace:{}", path.display());
    let v = sim_json(&[
        "--workload",
        &w,
        "--trace-format",
        "spc",
        "--precondition",
        "none",
    ]);
    assert_eq!(v["host_ios"].as_u64(), Some(3));
}

#[test]
fn a_malformed_trace_line_is_named_not_a_panic() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("bad.csv");
    std::fs::write(&path, "128166372003061629,hm,0,Write,3154059264,4096,0\n128166372003061630,hm,0,Write,notanumber,4096,0\n").unwrap();
    let w = format!("trace:{}", path.display());
    let out = flashlab(&[
        "sim",
        "--capacity",
        "256MiB",
        "--op",
        "0.25",
        "--workload",
        &w,
        "--trace-format",
        "msr",
        "--quiet",
    ]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(
        err.contains("bad.csv") && err.contains('2'),
        "names file and line: {err}"
    );
    assert!(!err.contains("panicked"), "{err}");
}

#[test]
fn bad_flags_get_clear_errors() {
    for (args, needle) in [
        (vec!["sim", "--op=-1"], "ftl.op"),
        (vec!["sim", "--preset", "nope"], "available presets"),
        (vec!["sim", "--gc", "lru"], "--gc"),
        (vec!["sim", "--workload", "zipf-write:abc"], "zipf"),
        (vec!["sim", "--capacity", "12 parsecs"], "--capacity"),
        (
            vec![
                "sim",
                "--workload",
                "trace:/nonexistent/x.csv",
                "--trace-format",
                "msr",
            ],
            "/nonexistent/x.csv",
        ),
    ] {
        let out = flashlab(&args);
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(!out.status.success(), "{args:?} should fail");
        assert!(
            err.contains(needle),
            "{args:?}: error should mention {needle}: {err}"
        );
        assert!(!err.contains("panicked"), "{err}");
    }
}
