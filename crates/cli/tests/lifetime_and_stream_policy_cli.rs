//! `flashlab lifetime` and `flashlab sim --stream-policy` end to end: exact lifetimes of a
//! hand-made trace as JSON rows, a bad trace line named by file and line, stream policies
//! reaching the per-stream host page counts, and refusals that say what to do.

use serde_json::Value;

mod common;
use common::{flashlab, json, stderr};

fn temp_trace(name: &str, text: &str) -> std::path::PathBuf {
    let p = std::env::temp_dir().join(format!("flashlab-{}-{name}", std::process::id()));
    std::fs::write(&p, text).unwrap();
    p
}

#[test]
fn lifetime_of_a_hand_made_trace_is_exact() {
    // Pages written: 0, 1, 0, 1, 1, 0 -> page 0 lives 2 then 3; page 1 lives 2 then 1.
    let p = temp_trace(
        "exact.csv",
        "1,h,0,Write,0,4096,0\n2,h,0,Write,4096,4096,0\n3,h,0,Write,0,4096,0\n\
         4,h,0,Write,4096,4096,0\n5,h,0,Write,4096,4096,0\n6,h,0,Write,0,4096,0\n",
    );
    let path = p.to_str().unwrap();
    let v = json(&flashlab(&[
        "lifetime",
        path,
        "--format",
        "msr",
        "--class",
        "lba-range:2",
        "--json",
        "--quiet",
    ]));
    assert_eq!(v["total_writes"], 6);
    let rows = v["rows"].as_array().unwrap();
    assert_eq!(rows.len(), 2);
    let r0 = &rows[0];
    assert_eq!(
        (r0["class"].as_u64(), r0["writes"].as_u64()),
        (Some(0), Some(3))
    );
    assert_eq!(r0["overwritten"], 2);
    assert_eq!(r0["mean"], 2.5);
    assert_eq!(r0["median"], 2);
    assert_eq!(r0["histogram"], serde_json::json!([[2, 2]]));
    let r1 = &rows[1];
    assert_eq!(
        (r1["mean"].as_f64(), r1["median"].as_u64()),
        (Some(1.5), Some(1))
    );
    assert_eq!(r1["histogram"], serde_json::json!([[1, 1], [2, 1]]));
    // The table form names the columns of P5's Table 1.
    let o = flashlab(&["lifetime", path, "--format", "msr", "--quiet"]);
    let text = String::from_utf8_lossy(&o.stdout);
    assert!(
        o.status.success() && text.contains("share_pct") && text.contains("median"),
        "{text}"
    );
    std::fs::remove_file(p).ok();
}

#[test]
fn lifetime_names_a_bad_line_and_refuses_missing_inputs() {
    let p = temp_trace("bad.csv", "1,h,0,Write,0,4096,0\n2,h,0,Write,x,4096,0\n");
    let o = flashlab(&[
        "lifetime",
        p.to_str().unwrap(),
        "--format",
        "msr",
        "--quiet",
    ]);
    let err = stderr(&o);
    assert_eq!(o.status.code(), Some(2), "{err}");
    assert!(err.contains(&format!("{}:2:", p.display())), "{err}");
    std::fs::remove_file(p).ok();
    for (args, needle) in [
        (vec!["lifetime"], "--workload"),
        (vec!["lifetime", "x.csv"], "--format"),
        (
            vec!["lifetime", "--workload", "uniform-write", "--class", "type"],
            "lba-range:N",
        ),
        (
            vec![
                "lifetime",
                "--workload",
                "uniform-write",
                "--stream-policy",
                "hot-cold",
            ],
            "hotcold-write",
        ),
    ] {
        let o = flashlab(&args);
        let err = stderr(&o);
        assert_eq!(o.status.code(), Some(2), "{args:?}: {err}");
        assert!(
            err.contains(needle) && !err.contains("panicked"),
            "{args:?}: {err}"
        );
    }
}

fn sim(extra: &[&str]) -> std::process::Output {
    let mut args = vec![
        "sim",
        "--capacity",
        "64MiB",
        "--timing",
        "off",
        "--precondition",
        "fill",
        "--workload",
        "hotcold-write:0.9:0.1",
        "--json",
        "--quiet",
    ];
    args.extend_from_slice(extra);
    flashlab(&args)
}

#[test]
fn sim_stream_policies_reach_the_streams_and_refusals_say_what_to_do() {
    let v: Value = json(&sim(&["--streams", "2", "--stream-policy", "hot-cold"]));
    let by = v["host_pages_written_by_stream"].as_array().unwrap();
    let (cold, hot) = (by[0].as_f64().unwrap(), by[1].as_f64().unwrap());
    assert!((hot / (hot + cold) - 0.9).abs() < 0.02, "{by:?}");
    assert_eq!(v["config"]["ftl"]["gc_stream"], "per_stream");
    assert_eq!(v["setup"]["stream_policy"], "hot-cold");
    let none: Value = json(&sim(&[]));
    assert_eq!(
        none["host_pages_written_by_stream"]
            .as_array()
            .unwrap()
            .len(),
        1
    );
    assert!(none["setup"].get("stream_policy").is_none());
    for (extra, needle) in [
        (vec!["--stream-policy", "hot-cold"], "--streams 2"),
        (
            vec!["--streams", "2", "--stream-policy", "by-lba-range:3"],
            "--streams 3",
        ),
        (vec!["--stream-policy", "by-lba-range:0"], "from 1"),
        (vec!["--stream-policy", "hot"], "auto"),
        (vec!["--gc-stream", "fdp"], "per-stream"),
    ] {
        let o = sim(&extra);
        let err = stderr(&o);
        assert_eq!(o.status.code(), Some(2), "{extra:?}: {err}");
        assert!(
            err.contains(needle) && !err.contains("panicked"),
            "{extra:?}: {err}"
        );
    }
}
