//! `reproduce as-btree` at quick scale on the simulated SSD: the run completes (every tree
//! returns every key it searched for, or `run` fails), each row carries the documented keys,
//! the paper's figures stay out of `rows`, and the outcomes that define P1 hold on the
//! simulated device — the AS B-tree with a 32-node write buffer writes fewer device pages and
//! spends less write time than the in-place B-tree; BFTL reads between 1 and C + 1 sectors
//! per node and its never-reclaimed file outgrows the in-place tree's.

use lab::{ReproduceOptions, Row, Scale};

const KEYS: [&str; 12] = [
    "device",
    "tree",
    "keys_per_node",
    "write_buffer_nodes",
    "cache_nodes",
    "insert_seconds",
    "search_seconds",
    "insert_read_seconds",
    "insert_write_seconds",
    "file_bytes",
    "inserts_per_second",
    "searches_per_second",
];

fn find<'a>(rows: &'a [Row], tree: &str, f: u64, ms: u64, cache: u64) -> &'a Row {
    rows.iter()
        .find(|r| {
            r["tree"] == tree
                && r["keys_per_node"] == f
                && r["write_buffer_nodes"] == ms
                && r["cache_nodes"] == cache
        })
        .unwrap_or_else(|| panic!("no row for {tree} F={f} MS={ms} cache={cache}"))
}

fn num(r: &Row, k: &str) -> f64 {
    r[k].as_f64()
        .unwrap_or_else(|| panic!("{k} is not a number: {r:?}"))
}

#[test]
fn quick_sim_run_has_the_rows_and_as_writes_less_than_in_place() {
    let opts = ReproduceOptions {
        scale: Scale::Quick,
        device: "sim".into(),
        ..Default::default()
    };
    let out = lab::as_btree::run(&opts).expect("quick as-btree run on sim");
    let rows = &out.report.rows;
    assert!(!rows.is_empty());
    assert!(
        !out.report.paper.is_empty(),
        "paper values belong in report.paper"
    );
    for r in rows {
        for k in KEYS {
            assert!(r.contains_key(k), "row lacks {k}: {r:?}");
        }
        assert!(!r.contains_key("table"), "paper rows leaked into rows");
        assert_eq!(r["device"], "sim");
        assert!(num(r, "insert_seconds") > 0.0 && num(r, "search_seconds") > 0.0);
        let split = num(r, "insert_read_seconds") + num(r, "insert_write_seconds");
        assert!(split <= num(r, "insert_seconds") * 1.000_001, "{r:?}");
    }
    for f in [64, 256] {
        let inplace = find(rows, "in_place", f, 0, 0);
        let as32 = find(rows, "as_btree", f, 32, 0);
        assert!(
            num(as32, "insert_node_writes") < num(inplace, "insert_node_writes"),
            "F={f}: AS writes {} pages, in-place {}",
            as32["insert_node_writes"],
            inplace["insert_node_writes"]
        );
        assert!(num(as32, "insert_write_seconds") < num(inplace, "insert_write_seconds"));
        let bftl = find(rows, "bftl", f, 0, 0);
        let spn = num(bftl, "bftl_sectors_per_node");
        assert!((1.0..=4.0).contains(&spn), "F={f}: {spn} sectors per node");
        assert!(num(bftl, "file_bytes") > num(inplace, "file_bytes"));
    }
}
