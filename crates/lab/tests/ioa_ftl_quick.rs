//! `reproduce ioa-ftl` at quick scale: every row carries the documented keys, the paper's
//! figures stay out of `rows`, and the defining outcome holds — IOA needs far fewer full
//! merges and fewer erases than BAST at the same log space.

use lab::{ReproduceOptions, Scale};

#[test]
fn quick_run_has_the_rows_and_ioa_beats_bast_on_merges() {
    let opts = ReproduceOptions {
        scale: Scale::Quick,
        ..Default::default()
    };
    let out = lab::ioa_ftl::run(&opts).unwrap();
    let rows = &out.report.rows;
    assert_eq!(rows.len(), 15, "5 schemes x 3 cache sizes");
    for r in rows {
        for k in [
            "scheme",
            "host_cache_mb",
            "throughput_mb_s",
            "merges_full",
            "merges_partial",
            "merges_switch",
            "erases",
            "pages_copied",
        ] {
            assert!(r.contains_key(k), "row lacks {k}: {r:?}");
        }
        assert!(!r.contains_key("table"), "paper rows leaked into rows");
    }
    let get = |scheme: &str, cache: u64, key: &str| {
        rows.iter()
            .find(|r| r["scheme"] == scheme && r["host_cache_mb"] == cache)
            .map(|r| r[key].as_f64().unwrap())
            .unwrap()
    };
    for cache in [16, 32, 64] {
        assert!(
            get("ioa", cache, "merges_full") * 10.0 <= get("bast", cache, "merges_full"),
            "cache {cache}"
        );
        assert!(
            get("ioa", cache, "erases") < get("bast", cache, "erases"),
            "cache {cache}"
        );
        assert!(
            get("ioa", cache, "throughput_mb_s") > get("bast", cache, "throughput_mb_s"),
            "cache {cache}"
        );
    }
    // Log schemes improve with a bigger host cache (writes arrive sorted).
    assert!(get("bast", 64, "merges_full") < get("bast", 16, "merges_full"));
    assert!(!out.report.paper.is_empty());
}
