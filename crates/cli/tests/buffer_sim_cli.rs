//! `flashlab buffer-sim` and `trace-info` end to end: one JSON object with the documented keys,
//! counts that add up, the curve's grid equal to a direct run, percentage sizes, and clear
//! errors (file and line) for malformed traces and bad flags, never a panic.

use std::path::Path;

mod common;
use common::{flashlab, json};

const REQUIRED: [&str; 12] = [
    "references",
    "hits",
    "hit_ratio",
    "misses",
    "ext_hits",
    "ext_hit_ratio",
    "disk_reads",
    "disk_writes",
    "flash_reads",
    "flash_writes",
    "elapsed_ms",
    "refs_per_wall_second",
];

fn trace(dir: &Path) -> String {
    // 300 references over 40 pages: a loop over all of them interleaved with a hot set of 6.
    let page = |i: u64| {
        if i.is_multiple_of(2) {
            (i / 2) % 40
        } else {
            (i / 2) % 6
        }
    };
    let text: String = (0..300u64)
        .map(|i| format!("{} {}\n", if i % 7 == 0 { 'W' } else { 'R' }, page(i)))
        .collect();
    let p = dir.join("t.txt");
    std::fs::write(&p, text).unwrap();
    p.display().to_string()
}

#[test]
fn every_policy_prints_the_documented_keys_and_counts_add_up() {
    let dir = tempfile::tempdir().unwrap();
    let t = trace(dir.path());
    for policy in ["lru", "2q", "lru-ext", "2q-ext", "2q-flash"] {
        let ext = if policy.contains('-') { "10" } else { "0" };
        let args = [
            "buffer-sim",
            "--trace",
            &t,
            "--trace-format",
            "text",
            "--policy",
            policy,
        ];
        let mut args = args.to_vec();
        args.extend(["--size", "8", "--ext-size", ext, "--json", "--quiet"]);
        let v = json(&flashlab(&args));
        for k in REQUIRED {
            assert!(v.get(k).is_some(), "{policy}: missing {k}");
        }
        let n = |k: &str| v[k].as_u64().unwrap();
        assert_eq!(n("references"), 300);
        assert_eq!(n("hits") + n("misses"), 300);
        assert!(n("ext_hits") <= n("misses"));
        let cost = (n("disk_reads") + n("disk_writes")) as f64 * 2.6
            + n("flash_reads") as f64 * 0.03
            + n("flash_writes") as f64 * 0.33;
        assert!((v["elapsed_ms"].as_f64().unwrap() - cost).abs() < 1e-6);
    }
}

#[test]
fn curve_grid_equals_a_direct_lru_ext_run_and_percentages_resolve() {
    let dir = tempfile::tempdir().unwrap();
    let t = trace(dir.path());
    let csv = dir.path().join("curve.csv");
    let base = [
        "buffer-sim",
        "--trace",
        &t,
        "--trace-format",
        "text",
        "--json",
        "--quiet",
    ];
    let mut args = base.to_vec();
    let csv_s = csv.display().to_string();
    args.extend([
        "--curve",
        "--size",
        "10%",
        "--grid-flash",
        "25%",
        "--curve-out",
        &csv_s,
    ]);
    let v = json(&flashlab(&args));
    assert_eq!(v["distinct_pages"], 40);
    let g = &v["grid"][0];
    assert_eq!(
        (g["size_pages"].as_u64(), g["ext_pages"].as_u64()),
        (Some(4), Some(10))
    );
    let mut args = base.to_vec();
    args.extend(["--policy", "lru-ext", "--size", "4", "--ext-size", "10"]);
    let direct = json(&flashlab(&args));
    for k in [
        "hits",
        "ext_hits",
        "disk_reads",
        "disk_writes",
        "flash_writes",
        "elapsed_ms",
    ] {
        assert_eq!(g[k], direct[k], "{k}");
    }
    let text = std::fs::read_to_string(&csv).unwrap();
    assert!(text.starts_with("size_pages,hits,hit_ratio\n"), "{text}");
}

#[test]
fn malformed_traces_and_bad_flags_are_clear_errors() {
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("bad.txt");
    std::fs::write(&p, "R 1\nR 2\nQ 3\n").unwrap();
    let ps = p.display().to_string();
    let out = flashlab(&[
        "buffer-sim",
        "--trace",
        &ps,
        "--trace-format",
        "text",
        "--size",
        "2",
        "--quiet",
    ]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2));
    assert!(err.contains("bad.txt:3") && err.contains("`Q`"), "{err}");
    assert!(!err.contains("panicked"), "{err}");
    let out = flashlab(&[
        "buffer-sim",
        "--trace",
        &ps,
        "--trace-format",
        "nope",
        "--size",
        "2",
    ]);
    assert!(String::from_utf8_lossy(&out.stderr).contains("--trace-format nope"));
    let out = flashlab(&[
        "buffer-sim",
        "--trace",
        &ps,
        "--trace-format",
        "text",
        "--size",
        "2",
        "--ext-size",
        "5",
    ]);
    assert!(String::from_utf8_lossy(&out.stderr).contains("--ext-size needs an extended policy"));
}

#[test]
fn trace_info_summarizes_popularity() {
    let dir = tempfile::tempdir().unwrap();
    let t = trace(dir.path());
    let v = json(&flashlab(&[
        "trace-info",
        "--trace",
        &t,
        "--trace-format",
        "text",
        "--json",
    ]));
    assert_eq!(v["references"], 300);
    assert_eq!(v["distinct_pages"], 40);
    assert_eq!(v["ref_share_hottest_100pct"], 1.0);
}

#[test]
fn the_curve_needs_no_size_and_the_default_main_buffer_is_p3s_four_percent() {
    let dir = tempfile::tempdir().unwrap();
    let t = trace(dir.path());
    let base = ["buffer-sim", "--trace", &t, "--trace-format", "text"];
    let mut curve = base.to_vec();
    curve.extend(["--curve", "--json", "--quiet"]);
    let v = json(&flashlab(&curve));
    assert_eq!(v["distinct_pages"], 40);
    let mut default = base.to_vec();
    default.extend(["--json", "--quiet"]);
    let mut four = default.clone();
    four.extend(["--size", "4%"]);
    let (a, b) = (json(&flashlab(&default)), json(&flashlab(&four)));
    assert_eq!(a["hits"], b["hits"]);
    assert_eq!(a["misses"], b["misses"]);
}
