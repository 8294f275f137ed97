//! `reproduce ioa-ftl` at quick scale: every row carries the documented keys (it reads back as
//! the typed `IoaRow`), the paper's figures stay out of `rows`, and the defining outcome holds —
//! IOA needs far fewer full merges and fewer erases than BAST at the same log space.

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
        18,
        "5 schemes x 3 cache sizes + DFTL with only the log space as spare x 3"
    );
    for r in &out.report.rows {
        assert!(!r.contains_key("table"), "paper rows leaked into rows");
    }
    let get = |scheme: &str, cache: u64| {
        rows.iter()
            .find(|r| r.scheme == scheme && r.host_cache_mb == cache && r.spare.is_empty())
            .unwrap_or_else(|| panic!("no row for {scheme} at {cache} MB"))
    };
    for cache in [16, 32, 64] {
        let (ioa, bast) = (get("ioa", cache), get("bast", cache));
        assert!(ioa.merges_full * 10 <= bast.merges_full, "cache {cache}");
        assert!(ioa.erases < bast.erases, "cache {cache}");
        assert!(ioa.throughput_mb_s > bast.throughput_mb_s, "cache {cache}");
    }
    // Log schemes improve with a bigger host cache (writes arrive sorted).
    assert!(get("bast", 64).merges_full < get("bast", 16).merges_full);
    assert!(!out.report.paper.is_empty());
    // P4's DFTL trend appears when DFTL's spare flash is only the log space: DFTL's lead over
    // IOA shrinks as the host cache grows, and it pays for it in GC copies.
    let lean = |cache: u64| {
        rows.iter()
            .find(|r| r.scheme == "dftl" && r.spare == "log_space" && r.host_cache_mb == cache)
            .unwrap_or_else(|| panic!("no lean dftl row at {cache} MB"))
    };
    let ratio = |c: u64| lean(c).throughput_mb_s / get("ioa", c).throughput_mb_s;
    assert!(
        ratio(16) > ratio(32) && ratio(32) > ratio(64),
        "{} {} {}",
        ratio(16),
        ratio(32),
        ratio(64)
    );
    assert!(lean(16).pages_copied > get("dftl", 16).pages_copied);
}
