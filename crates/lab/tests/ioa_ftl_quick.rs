//! `reproduce ioa-ftl` at quick scale: every row carries the documented keys (it reads back as
//! the typed `IoaRow`), the paper's figures stay out of `rows`, and the defining outcome holds —
//! IOA needs far fewer full merges and fewer erases than BAST at the same log space, and
//! DFTL configured as P4 ran it shows P4's trend.

use lab::papers::p4_ioa_ftl::IoaRow;
use lab::{ReproduceOptions, Scale};

#[test]
fn quick_run_has_the_rows_and_ioa_beats_bast_on_merges() {
    let opts = ReproduceOptions {
        scale: Scale::Quick,
        ..Default::default()
    };
    let out = lab::papers::p4_ioa_ftl::run(&opts).unwrap();
    let rows: Vec<IoaRow> = out.report.rows_as().expect("rows are IoaRows");
    assert_eq!(
        rows.len(),
        42,
        "5 schemes x 3 caches (P4's setup) + DFTL with the preset's spare and with one pool x 3 + bast, ioa striped over the dies x 3 + dftl, bast, ioa under the earlier workload x 3 + dftl, ioa on the sequentially aged drive x 3"
    );
    for r in &out.report.rows {
        assert!(!r.contains_key("table"), "paper rows leaked into rows");
    }
    let get = |scheme: &str, cache: u64| {
        rows.iter()
            .find(|r| {
                r.scheme == scheme
                    && r.host_cache_mb == cache
                    && r.workload == "fio_randommap_1x"
                    && r.spare != "preset"
                    && r.spare != "log_space_one_pool"
                    && r.aging == "file_random"
                    && r.log_layout != "striped"
            })
            .unwrap_or_else(|| panic!("no row for {scheme} at {cache} MB"))
    };
    for cache in [16, 32] {
        let (ioa, bast) = (get("ioa", cache), get("bast", cache));
        assert!(ioa.merges_full * 10 <= bast.merges_full, "cache {cache}");
        assert!(ioa.erases < bast.erases, "cache {cache}");
        assert!(ioa.throughput_mb_s > bast.throughput_mb_s, "cache {cache}");
    }
    // At a cache as large as the file, every block is written back whole and in order (fio's
    // random map leaves no holes): no partial merges, and the only full merges are of the logs
    // the aging's random rewrite left open (a few per run); on the sequentially aged drive IOA
    // does none.
    for scheme in ["bast", "ioa"] {
        let r = get(scheme, 64);
        assert_eq!(r.merges_partial, 0, "{scheme}");
        assert!(r.merges_full * 4 < get("bast", 16).merges_full, "{scheme}");
    }
    let sequential = rows
        .iter()
        .find(|r| r.scheme == "ioa" && r.host_cache_mb == 64 && r.aging == "sequential")
        .expect("the sequentially aged IOA row");
    assert_eq!((sequential.merges_full, sequential.merges_partial), (0, 0));
    assert!(get("bast", 64).merges_full < get("bast", 16).merges_full);
    assert!(!out.report.paper.is_empty());
    // P4's DFTL trend with P4's setup: DFTL's lead over IOA shrinks as the host cache grows,
    // and DFTL stays nearly flat (within 1.5x) while IOA gains 3x.
    let ratio = |c: u64| get("dftl", c).throughput_mb_s / get("ioa", c).throughput_mb_s;
    assert!(
        ratio(16) > ratio(32) && ratio(32) > ratio(64),
        "{} {} {}",
        ratio(16),
        ratio(32),
        ratio(64)
    );
    let t = |s: &str, c: u64| get(s, c).throughput_mb_s;
    assert!(t("dftl", 64) < 1.5 * t("dftl", 16) && t("ioa", 64) > 2.0 * t("ioa", 16));
    // The earlier DFTL setup (the preset's spare) pays no GC copies at all.
    let preset = rows
        .iter()
        .find(|r| r.spare == "preset" && r.host_cache_mb == 16)
        .expect("the preset-spare DFTL row");
    assert!(get("dftl", 16).pages_copied > preset.pages_copied);
}
