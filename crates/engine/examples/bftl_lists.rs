//! BFTL's sector lists as P1's experiment meets them, on a RAM device (no timing): insert
//! N0 random keys, commit, insert N1 more, commit, search N1 inserted keys; print the sectors
//! read per node by tree level and list length, and the file size.
//!
//! `cargo run --release -p engine --example bftl_lists -- N0 N1 F C in|after [seed [narrow|wide
//! [none|per_record|per_node]]]` (the compaction: in the commit, or after it, see
//! `engine::btree::Compaction`; the index unit's width, see `engine::btree::UnitLayout`;
//! whether a commit descends again for its records, see `engine::btree::CommitDescent`; the
//! RAM device holds 400,000 8 KiB sectors)

use blockdev::MemDevice;
use engine::btree::{BTreeConfig, Bftl, BftlConfig, CommitDescent, Compaction, UnitLayout};
use engine::OrderedIndex;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let compaction = match args.get(4).map(String::as_str) {
        Some("in") => Compaction::InCommit,
        Some("after") => Compaction::AfterCommit,
        _ => panic!(
            "usage: bftl_lists N0 N1 F C in|after [seed [narrow|wide [none|per_record|per_node]]]"
        ),
    };
    let unit = match args.get(6).map(String::as_str) {
        None | Some("narrow") => UnitLayout::Narrow,
        Some("wide") => UnitLayout::Wide,
        Some(other) => panic!("unit layout {other:?}: narrow or wide"),
    };
    let commit_descent = match args.get(7).map(String::as_str) {
        None | Some("none") => CommitDescent::None,
        Some("per_record") => CommitDescent::PerRecord,
        Some("per_node") => CommitDescent::PerNode,
        Some(other) => panic!("commit descent {other:?}: none, per_record or per_node"),
    };
    let a: Vec<u64> = args
        .iter()
        .enumerate()
        .filter(|&(i, _)| i != 4 && i < 6)
        .map(|(_, s)| s.parse().expect("numbers"))
        .collect();
    let (n0, n1, f, c) = (a[0] as usize, a[1] as usize, a[2] as usize, a[3] as usize);
    let seed = a.get(4).copied().unwrap_or(1);
    let cfg = BftlConfig {
        base: BTreeConfig {
            keys_per_node: f,
            cache_nodes: 0,
        },
        reservation_units: f,
        compact_threshold: c,
        compaction,
        unit,
        commit_descent,
        ..BftlConfig::default()
    };
    let dev = MemDevice::new(8192, 400_000);
    let mut t = Bftl::create(Box::new(dev), cfg).expect("config");
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let mut keys = Vec::new();
    for _ in 0..n0 {
        let k: u64 = rng.gen();
        t.insert(k, k).expect("insert");
        keys.push(k);
    }
    t.commit().expect("commit");
    let s0 = t.stats();
    for _ in 0..n1 {
        let k: u64 = rng.gen();
        t.insert(k, k).expect("insert");
        keys.push(k);
    }
    t.commit().expect("commit");
    let s1 = t.stats();
    for _ in 0..n1 {
        let k = keys[rng.gen_range(0..keys.len())];
        assert_eq!(t.get(k).expect("get"), Some(k));
    }
    let s2 = t.stats();
    for (name, a, b) in [("insert", s0, s1), ("search", s1, s2)] {
        let loads = b.nodes_loaded - a.nodes_loaded;
        let reads = (b.node_reads - b.compaction_reads) - (a.node_reads - a.compaction_reads);
        let lv: Vec<String> = (0..3)
            .map(|l| {
                let h: Vec<u64> = (0..5)
                    .map(|n| b.loads_by_level_list_len[l][n] - a.loads_by_level_list_len[l][n])
                    .collect();
                let n: u64 = h[1..].iter().sum();
                let s: u64 = h.iter().enumerate().map(|(i, c)| i as u64 * c).sum();
                format!("{:.2} {:?}", s as f64 / n.max(1) as f64, &h[1..])
            })
            .collect();
        println!(
            "{name}: {:.3} sectors/node ({} loads); root {} | inner {} | leaf {}; commit-descent reads {} ({} loads), compaction reads {}, writes {}",
            reads as f64 / loads.max(1) as f64,
            loads,
            lv[0],
            lv[1],
            lv[2],
            b.commit_reads - a.commit_reads,
            b.commit_loads - a.commit_loads,
            b.compaction_reads - a.compaction_reads,
            b.node_writes - a.node_writes
        );
    }
    println!(
        "file {:.1} MB, {:.2} KB per key",
        s2.file_bytes as f64 / 1e6,
        s2.file_bytes as f64 / 1e3 / (n0 + n1) as f64
    );
}
