//! CPU cost per operation of each tree when its nodes are in RAM: inserts and point searches
//! of random u64 keys on a RAM device (`MemDevice`, zero I/O time), F = 256, with a node cache
//! large enough to hold the tree. Prints operations per second and ns per operation.
//!
//! Run: `cargo bench -p engine --bench tree_ops` (env `TREE_OPS_KEYS`, default 200000).

use blockdev::MemDevice;
use engine::btree::{AsBTree, AsConfig, BTreeConfig, Bftl, BftlConfig, InPlaceBTree};
use engine::OrderedIndex;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use std::time::Instant;

fn measure(name: &str, mut t: Box<dyn OrderedIndex>, n: usize) {
    let mut rng = ChaCha8Rng::seed_from_u64(1);
    let keys: Vec<u64> = (0..n).map(|_| rng.gen()).collect();
    let t0 = Instant::now();
    for &k in &keys {
        t.insert(k, k).expect("insert");
    }
    t.commit().expect("commit");
    let ins = t0.elapsed().as_secs_f64();
    let t1 = Instant::now();
    for i in 0..n {
        let k = keys[(i * 7919) % n];
        assert_eq!(t.get(k).expect("get"), Some(k));
    }
    let get = t1.elapsed().as_secs_f64();
    println!(
        "{name:10} inserts {:>9.0}/s ({:>6.0} ns/op)   searches {:>9.0}/s ({:>6.0} ns/op)   [{n} keys, F=256, RAM device]",
        n as f64 / ins,
        ins * 1e9 / n as f64,
        n as f64 / get,
        get * 1e9 / n as f64
    );
}

fn main() {
    let quick = !std::env::args().any(|a| a == "--bench");
    let n: usize = if quick {
        5_000
    } else {
        std::env::var("TREE_OPS_KEYS")
            .ok()
            .and_then(|v| v.parse().ok())
            .unwrap_or(200_000)
    };
    let base = BTreeConfig {
        keys_per_node: 256,
        cache_nodes: 100_000,
    };
    let dev = || Box::new(MemDevice::new(8192, 1 << 17));
    measure(
        "in_place",
        Box::new(InPlaceBTree::create_with_journal(dev(), base, 0).expect("tree")),
        n,
    );
    // A 16-segment window keeps the touched part of the RAM device small (first-touch page
    // faults of a 1 GiB RAM device would otherwise dominate the log-structured tree's cost).
    let as_cfg = AsConfig {
        base,
        write_buffer_nodes: 32,
        segment_bytes: 8 << 20,
        max_segments: 16,
    };
    measure(
        "as_btree",
        Box::new(AsBTree::create(dev(), as_cfg).expect("tree")),
        n,
    );
    measure(
        "bftl",
        Box::new(
            Bftl::create(
                dev(),
                BftlConfig {
                    base,
                    ..BftlConfig::default()
                },
            )
            .expect("tree"),
        ),
        n,
    );
}
