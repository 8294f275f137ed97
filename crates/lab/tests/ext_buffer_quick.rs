//! `reproduce ext-buffer` on a small TPC-C-like trace with `--engine`: the rows carry the keys
//! the issue names, the counts add up, the LRU grid behaves as LRU must, the engine's pool
//! moves exactly the pages the simulator counts, and the paper's claims stay in `paper`.

use cache::PolicyKind;
use lab::buffer_sim::TraceSpec;
use lab::ext_buffer::{run_with, ExtBufferOptions};
use lab::{ReproduceOptions, Row};
use serde_json::Value;
use std::path::PathBuf;
use workload::cache_trace::PageTraceFormat;

fn num(r: &Row, k: &str) -> f64 {
    r.get(k)
        .and_then(Value::as_f64)
        .unwrap_or_else(|| panic!("row lacks number {k}: {r:?}"))
}
fn text<'a>(r: &'a Row, k: &str) -> &'a str {
    r.get(k).and_then(Value::as_str).unwrap_or("")
}

#[test]
fn small_run_has_the_rows_and_its_counts_add_up() {
    let opts = ReproduceOptions::default();
    let ext = ExtBufferOptions {
        trace: Some(TraceSpec {
            path: PathBuf::from("warehouses=1,transactions=1500,seed=3"),
            format: PageTraceFormat::Tpcc,
            page_bytes: 4096,
        }),
        engine: true,
    };
    let out = run_with(&opts, &ext).expect("small ext-buffer run");
    let rows = &out.report.rows;
    let fig = |f: &str| rows.iter().filter(|r| text(r, "figure") == f).count();
    assert_eq!(
        fig("fig3-5"),
        2 + 3 * 10,
        "lru, 2q, then 3 ext policies x 10 flash sizes"
    );
    assert_eq!(fig("fig2"), 9);
    assert_eq!(fig("fig6-dram"), 10);
    assert_eq!(fig("fig6-raid0"), 1);
    assert_eq!(fig("engine"), 7);
    for r in rows {
        for k in [
            "main_pct",
            "flash_pct",
            "hit_ratio",
            "ext_hit_ratio",
            "elapsed_ms",
            "price_usd",
        ] {
            num(r, k);
        }
        let policy = PolicyKind::parse(text(r, "policy")).expect("a policy name");
        let (refs, hits, misses, ext_hits) = (
            num(r, "references"),
            num(r, "hits"),
            num(r, "misses"),
            num(r, "ext_hits"),
        );
        assert_eq!(hits + misses, refs, "{r:?}");
        assert!(ext_hits <= misses, "{r:?}");
        assert_eq!(num(r, "disk_reads"), misses - ext_hits, "{r:?}");
        if !policy.is_extended() {
            assert_eq!(ext_hits, 0.0);
            assert_eq!(num(r, "flash_pct"), 0.0);
        }
        assert!(!r.contains_key("claim"), "a paper claim leaked into rows");
    }
    // LRU-ext: main is plain LRU whatever the flash size, and (LRU inclusion) more flash never
    // finds fewer pages on flash, with the same evictions to write: time never grows.
    let lru_ext: Vec<&Row> = rows
        .iter()
        .filter(|r| text(r, "figure") == "fig3-5" && text(r, "policy") == "lru-ext")
        .collect();
    let lru = rows
        .iter()
        .find(|r| text(r, "figure") == "fig3-5" && text(r, "policy") == "lru")
        .unwrap();
    for w in lru_ext.windows(2) {
        assert!(num(w[1], "flash_pct") > num(w[0], "flash_pct"));
        assert!(num(w[1], "ext_hits") >= num(w[0], "ext_hits"));
        assert!(num(w[1], "elapsed_ms") <= num(w[0], "elapsed_ms"));
    }
    for r in &lru_ext {
        assert_eq!(num(r, "hits"), num(lru, "hits"));
    }
    for r in rows.iter().filter(|r| text(r, "figure") == "engine") {
        assert_eq!(r["counts_match_simulator"], Value::Bool(true), "{r:?}");
        assert_eq!(num(r, "flash_fallbacks"), 0.0);
        assert!(num(r, "device_ms") > 0.0);
    }
    assert!(out.report.paper.iter().any(|r| r.contains_key("claim")));
    assert!(out.tables.iter().any(|t| t.title.contains("P3's findings")));
}
