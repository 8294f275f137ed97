//! `flashlab report DIR`, `reproduce all`'s flags and `sim --plot` end to end: the page is
//! re-rendered from results.json alone, a malformed file is an error naming the key path (exit
//! 2, no panic), flags that do not apply to `all` are refused, and `sim --plot` draws the
//! run's timeline, whose last sample agrees with the summary.

mod common;
use common::{flashlab, path_str, stderr};

const FIXTURE: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/../lab/tests/fixtures/results.json"
);

#[test]
fn report_rerenders_the_page_and_prints_the_summary() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::copy(FIXTURE, dir.path().join("results.json")).unwrap();
    let o = flashlab(&["report", &path_str(dir.path())]);
    assert!(o.status.success(), "{}", stderr(&o));
    let out = String::from_utf8_lossy(&o.stdout);
    assert!(out.starts_with("Summary:"), "{out}");
    assert!(
        out.contains("ioa-ftl") && out.contains("multistream"),
        "{out}"
    );
    let page = std::fs::read_to_string(dir.path().join("index.html")).unwrap();
    assert!(page.contains("<figure class=\"plot\""));
}

#[test]
fn report_on_a_malformed_file_names_the_key_path() {
    let dir = tempfile::tempdir().unwrap();
    let text = std::fs::read_to_string(FIXTURE).unwrap();
    let broken = text.replacen("\"seed\": 1,", "\"seed\": \"one\",", 1);
    std::fs::write(dir.path().join("results.json"), broken).unwrap();
    let o = flashlab(&["report", &path_str(dir.path())]);
    assert_eq!(o.status.code(), Some(2));
    let err = stderr(&o);
    assert!(
        err.contains("results.json: line ") && err.contains("at `run.seed`"),
        "{err}"
    );
    assert!(!err.contains("panicked"), "{err}");
    let o = flashlab(&["report", &path_str(&dir.path().join("nowhere"))]);
    assert_eq!(o.status.code(), Some(2));
    assert!(
        stderr(&o).contains("flashlab reproduce all"),
        "{}",
        stderr(&o)
    );
}

#[test]
fn flags_that_do_not_apply_to_all_are_refused() {
    for args in [
        &["reproduce", "all", "--json"][..],
        &["reproduce", "all", "--output", "x"],
        &["reproduce", "all", "--engine"],
        &["reproduce", "all", "--scale", "huge"],
        &["reproduce", "ioa-ftl", "--out", "x"],
    ] {
        let o = flashlab(args);
        assert_eq!(o.status.code(), Some(2), "{args:?}");
        assert!(
            stderr(&o).starts_with("error: "),
            "{args:?}: {}",
            stderr(&o)
        );
    }
}

#[test]
fn sim_plot_draws_the_timeline_and_its_last_sample_is_the_summary() {
    let dir = tempfile::tempdir().unwrap();
    let svg = dir.path().join("run.svg");
    let o = flashlab(&[
        "sim",
        "--capacity",
        "128MiB",
        "--write-volume",
        "1.5x",
        "--json",
        "--quiet",
        "--plot",
        &path_str(&svg),
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    let tl = v["timeline"].as_array().expect("timeline");
    assert!(tl.len() >= 10 && tl.len() <= 100, "{} samples", tl.len());
    let last = tl.last().unwrap();
    assert!((last["host_pages_x_capacity"].as_f64().unwrap() - 1.5).abs() < 0.01);
    assert_eq!(last["waf_cumulative"], v["waf"]);
    let xs: Vec<f64> = tl
        .iter()
        .map(|p| p["host_pages_x_capacity"].as_f64().unwrap())
        .collect();
    assert!(xs.windows(2).all(|w| w[0] < w[1]), "samples in order");
    let at = |p: &serde_json::Value, k: &str| p[k].as_f64().unwrap_or_else(|| panic!("{k}"));
    for p in tl {
        let (p99, p999, max) = (
            at(p, "latency_us_p99"),
            at(p, "latency_us_p999"),
            at(p, "latency_us_max"),
        );
        assert!(p99 <= p999 && p999 <= max, "{p}");
    }
    let text = std::fs::read_to_string(&svg).unwrap();
    assert!(text.starts_with("<svg") && text.contains("WAF since the start"));
    for stat in [">mean<", ">p99<", ">p99.9<", ">max<"] {
        assert!(text.contains(stat), "the latency chart shows {stat}");
    }
}

/// A run shorter than the drive's capacity says what its WAF covers.
#[test]
fn a_short_sim_says_its_waf_covers_the_measured_phase_only() {
    let o = flashlab(&[
        "sim",
        "--capacity",
        "128MiB",
        "--write-volume",
        "0.2x",
        "--json",
        "--quiet",
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    let notes = v["notes"].to_string();
    assert!(
        notes.contains("WAF covers the measured phase only"),
        "{notes}"
    );
}
