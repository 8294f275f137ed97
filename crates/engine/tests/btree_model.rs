//! The in-place B+-tree and the AS B-tree against `std::collections::BTreeMap`: random
//! inserts, overwrites, deletes, point and range searches with small nodes (many splits),
//! small write buffers and small segments (constant compaction); commit and reopen midway
//! and at the end, and the reopened tree must hold exactly the model's contents.

use blockdev::{BlockDevice, MemDevice};
use engine::btree::{
    AsBTree, AsConfig, BTreeConfig, Bftl, BftlConfig, CommitDescent, Compaction, InPlaceBTree,
};
use engine::OrderedIndex;
use proptest::prelude::*;
use std::collections::BTreeMap;

#[derive(Clone, Debug)]
enum Op {
    Insert(u64, u64),
    Delete(u64),
    Get(u64),
    Range(u64, u64),
    CommitReopen,
}

fn ops() -> impl Strategy<Value = Vec<Op>> {
    let key = 0u64..400;
    proptest::collection::vec(
        prop_oneof![
            8 => (key.clone(), any::<u64>()).prop_map(|(k, v)| Op::Insert(k, v)),
            2 => key.clone().prop_map(Op::Delete),
            3 => key.clone().prop_map(Op::Get),
            2 => (key.clone(), 0u64..60).prop_map(|(k, n)| Op::Range(k, k + n)),
            1 => Just(Op::CommitReopen),
        ],
        1..400,
    )
}

#[derive(Clone, Copy, Debug)]
enum Kind {
    InPlace { journal: u64 },
    As { buffer: usize, max_segments: usize },
}

fn cfg(f: usize, cache: usize) -> BTreeConfig {
    BTreeConfig {
        keys_per_node: f,
        cache_nodes: cache,
    }
}

fn as_cfg(f: usize, cache: usize, buffer: usize, max_segments: usize) -> AsConfig {
    AsConfig {
        base: cfg(f, cache),
        write_buffer_nodes: buffer,
        segment_bytes: 32 * 4096,
        max_segments,
    }
}

fn create(kind: Kind, f: usize, cache: usize) -> Box<dyn OrderedIndex> {
    let dev = Box::new(MemDevice::new(4096, 4096));
    match kind {
        Kind::InPlace { journal } => {
            Box::new(InPlaceBTree::create_with_journal(dev, cfg(f, cache), journal).unwrap())
        }
        Kind::As {
            buffer,
            max_segments,
        } => Box::new(AsBTree::create(dev, as_cfg(f, cache, buffer, max_segments)).unwrap()),
    }
}

/// Commit, take the device back, and reopen the tree from it.
fn reopen(
    kind: Kind,
    tree: Box<dyn OrderedIndex>,
    f: usize,
    cache: usize,
) -> Box<dyn OrderedIndex> {
    let dev: Box<dyn BlockDevice> = tree.into_device();
    match kind {
        Kind::InPlace { journal } => {
            Box::new(InPlaceBTree::open(dev, cfg(f, cache), journal).unwrap())
        }
        Kind::As {
            buffer,
            max_segments,
        } => Box::new(AsBTree::open(dev, as_cfg(f, cache, buffer, max_segments)).unwrap()),
    }
}

fn run(kind: Kind, f: usize, cache: usize, ops: &[Op]) -> Result<(), TestCaseError> {
    let mut tree = create(kind, f, cache);
    let mut model = BTreeMap::new();
    for op in ops {
        match *op {
            Op::Insert(k, v) => {
                tree.insert(k, v).unwrap();
                model.insert(k, v);
            }
            Op::Delete(k) => prop_assert_eq!(tree.delete(k).unwrap(), model.remove(&k).is_some()),
            Op::Get(k) => prop_assert_eq!(tree.get(k).unwrap(), model.get(&k).copied()),
            Op::Range(lo, hi) => {
                let want: Vec<(u64, u64)> = model.range(lo..=hi).map(|(&k, &v)| (k, v)).collect();
                prop_assert_eq!(tree.range(lo, hi).unwrap(), want);
            }
            Op::CommitReopen => {
                tree.commit().unwrap();
                tree = reopen(kind, tree, f, cache);
            }
        }
    }
    tree.commit().unwrap();
    let mut tree = reopen(kind, tree, f, cache);
    let all: Vec<(u64, u64)> = model.iter().map(|(&k, &v)| (k, v)).collect();
    prop_assert_eq!(tree.range(0, u64::MAX).unwrap(), all);
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(48))]

    #[test]
    fn in_place_journaled_matches_a_btreemap(ops in ops(), f in 3usize..9, cache in 0usize..6) {
        run(Kind::InPlace { journal: 64 }, f, cache, &ops)?;
    }

    #[test]
    fn in_place_write_through_matches_a_btreemap(ops in ops(), f in 3usize..9) {
        run(Kind::InPlace { journal: 0 }, f, 0, &ops)?;
    }

    #[test]
    fn as_btree_matches_a_btreemap(ops in ops(), f in 3usize..9, cache in 0usize..6, buffer in 1usize..9) {
        run(Kind::As { buffer, max_segments: 0 }, f, cache, &ops)?;
    }

    #[test]
    fn as_btree_with_a_tight_window_matches_a_btreemap(ops in ops(), f in 3usize..9, buffer in 1usize..5) {
        run(Kind::As { buffer, max_segments: 6 }, f, 0, &ops)?;
    }
}

/// BFTL keeps its node translation table in RAM (no reopen): commits only. Both compaction
/// modes, with C from 1 to 4, and every commit descent (a read-only pass, through the cache).
fn run_bftl(
    f: usize,
    cache: usize,
    reservation: usize,
    c: usize,
    compaction: Compaction,
    commit_descent: CommitDescent,
    ops: &[Op],
) -> Result<(), TestCaseError> {
    let dev = Box::new(MemDevice::new(4096, 1 << 16));
    let cfg = BftlConfig {
        base: cfg(f, cache),
        reservation_units: reservation,
        compact_threshold: c,
        compaction,
        commit_descent,
        ..BftlConfig::default()
    };
    let mut tree = Bftl::create(dev, cfg).unwrap();
    let mut model = BTreeMap::new();
    for op in ops {
        match *op {
            Op::Insert(k, v) => {
                tree.insert(k, v).unwrap();
                model.insert(k, v);
            }
            Op::Delete(k) => prop_assert_eq!(tree.delete(k).unwrap(), model.remove(&k).is_some()),
            Op::Get(k) => prop_assert_eq!(tree.get(k).unwrap(), model.get(&k).copied()),
            Op::Range(lo, hi) => {
                let want: Vec<(u64, u64)> = model.range(lo..=hi).map(|(&k, &v)| (k, v)).collect();
                prop_assert_eq!(tree.range(lo, hi).unwrap(), want);
            }
            Op::CommitReopen => tree.commit().unwrap(),
        }
    }
    let all: Vec<(u64, u64)> = model.iter().map(|(&k, &v)| (k, v)).collect();
    prop_assert_eq!(tree.range(0, u64::MAX).unwrap(), all);
    // A lookup reads at most C sectors (after the commit) or C - 1 (in it; at least 1).
    let bound = match compaction {
        Compaction::AfterCommit => c,
        Compaction::InCommit => (c - 1).max(1),
    };
    prop_assert!(tree.sectors_per_node_read() <= bound as f64);
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(48))]

    #[test]
    fn bftl_matches_a_btreemap(
        ops in ops(),
        f in 3usize..9,
        cache in 0usize..6,
        reservation in 1usize..40,
        c in 1usize..5,
        in_commit in any::<bool>(),
        descent in 0usize..3,
    ) {
        let compaction = if in_commit { Compaction::InCommit } else { Compaction::AfterCommit };
        let descent = [CommitDescent::None, CommitDescent::PerRecord, CommitDescent::PerNode][descent];
        run_bftl(f, cache, reservation, c, compaction, descent, &ops)?;
    }
}

#[test]
fn as_btree_file_size_stays_within_the_window() {
    let dev = Box::new(MemDevice::new(4096, 4096));
    let mut t = AsBTree::create(dev, as_cfg(64, 0, 4, 8)).unwrap();
    for i in 0..20_000u64 {
        t.insert(i.wrapping_mul(0x9E37_79B9_7F4A_7C15) % 3000, i)
            .unwrap();
        // file_bytes = live segments x segment_bytes.
        assert!(t.stats().file_bytes <= 8 * 32 * 4096);
    }
    t.commit().unwrap();
}

#[test]
fn bad_settings_are_named() {
    let dev = Box::new(MemDevice::new(4096, 64));
    let e = InPlaceBTree::create(dev, cfg(1000, 0))
        .err()
        .unwrap()
        .to_string();
    assert!(e.contains("keys_per_node"), "{e}");
    let dev = Box::new(MemDevice::new(4096, 64));
    let e = AsBTree::create(
        dev,
        AsConfig {
            segment_bytes: 4096,
            ..as_cfg(8, 0, 4, 0)
        },
    )
    .err()
    .unwrap()
    .to_string();
    assert!(e.contains("segment_bytes"), "{e}");
}
