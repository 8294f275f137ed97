//! `reproduce ext-buffer` on a small TPC-C-like trace with `--engine`: the rows carry the keys
//! the issue names, the counts add up, the LRU grid behaves as LRU must, the engine's pool
//! moves exactly the pages the simulator counts, and the paper's claims stay in `paper`.

use lab::buffer_sim::TraceSpec;
use lab::papers::p3_ext_buffer::{run_with, Counters, EngineRow, ExtBufferOptions, ExtBufferRow};
use lab::{ReproduceOptions, Row};
use policy::PolicyKind;
use serde_json::Value;
use std::path::PathBuf;
use workload::cache_trace::PageTraceFormat;

/// A row read back as the type it was written from: a simulator point or an engine run.
/// Every key the issue names is a required field, so a row that lacks one fails here.
enum Typed {
    Sim(ExtBufferRow),
    Engine(EngineRow),
}

impl Typed {
    fn of(r: &Row) -> Typed {
        let v = Value::Object(r.clone());
        if let Ok(s) = serde_json::from_value::<ExtBufferRow>(v.clone()) {
            return Typed::Sim(s);
        }
        match serde_json::from_value::<EngineRow>(v) {
            Ok(e) => Typed::Engine(e),
            Err(e) => panic!("neither a simulator nor an engine row ({e}): {r:?}"),
        }
    }
    fn figure(&self) -> &str {
        match self {
            Typed::Sim(s) => &s.figure,
            Typed::Engine(e) => &e.figure,
        }
    }
    fn counts(&self) -> &Counters {
        match self {
            Typed::Sim(s) => &s.counts,
            Typed::Engine(e) => &e.counts,
        }
    }
    fn flash_pct(&self) -> f64 {
        match self {
            Typed::Sim(s) => s.flash_pct,
            Typed::Engine(e) => e.flash_pct,
        }
    }
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
    let rows: Vec<Typed> = out.report.rows.iter().map(Typed::of).collect();
    let fig = |f: &str| rows.iter().filter(|r| r.figure() == f).count();
    assert_eq!(
        fig("fig3-5"),
        2 + 3 * 10,
        "lru, 2q, then 3 ext policies x 10 flash sizes"
    );
    assert_eq!(fig("fig2"), 9);
    assert_eq!(fig("fig6-dram"), 10);
    assert_eq!(fig("fig6-raid0"), 1);
    assert_eq!(fig("engine"), 7);
    for (r, c) in rows.iter().map(|r| (r, r.counts())) {
        let policy = PolicyKind::parse(&c.policy).expect("a policy name");
        assert_eq!(c.hits + c.misses, c.references, "{c:?}");
        assert!(c.ext_hits <= c.misses, "{c:?}");
        assert_eq!(c.disk_reads, c.misses - c.ext_hits, "{c:?}");
        if !policy.is_extended() {
            assert_eq!(c.ext_hits, 0);
            assert_eq!(r.flash_pct(), 0.0);
        }
    }
    for r in &out.report.rows {
        assert!(!r.contains_key("claim"), "a paper claim leaked into rows");
        // Every cost-model point with flash writes has its device WAF, and it is at least 1.
        let waf = r.get("flash_device_waf").and_then(|w| w.as_f64());
        let writes = r.get("flash_writes").and_then(|w| w.as_u64()).unwrap_or(0);
        let fig = r.get("figure").and_then(|f| f.as_str()).unwrap_or("");
        if fig == "fig3-5" || fig == "fig2" {
            assert_eq!(waf.is_some(), writes > 0, "{r:?}");
            assert!(waf.is_none_or(|w| w >= 1.0), "{r:?}");
        }
    }
    // LRU-ext: main is plain LRU whatever the flash size, and (LRU inclusion) more flash never
    // finds fewer pages on flash, with the same evictions to write: time never grows.
    let fig3 = |policy: &str| -> Vec<&Typed> {
        rows.iter()
            .filter(|r| r.figure() == "fig3-5" && r.counts().policy == policy)
            .collect()
    };
    let lru_ext = fig3("lru-ext");
    let lru = fig3("lru")[0].counts();
    for w in lru_ext.windows(2) {
        assert!(w[1].flash_pct() > w[0].flash_pct());
        assert!(w[1].counts().ext_hits >= w[0].counts().ext_hits);
        assert!(w[1].counts().elapsed_ms <= w[0].counts().elapsed_ms);
    }
    for r in &lru_ext {
        assert_eq!(r.counts().hits, lru.hits);
    }
    for r in &rows {
        if let Typed::Engine(e) = r {
            assert!(e.counts_match_simulator, "{:?}", e);
            assert_eq!(e.flash_fallbacks, 0);
            assert!(e.device_ms > 0.0);
        }
    }
    assert!(out.report.paper.iter().any(|r| r.contains_key("claim")));
    assert!(out.tables.iter().any(|t| t.title.contains("P3's findings")));
}
