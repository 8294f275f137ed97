//! Every FTL scheme against the same trivial model (every read returns the last write, or
//! unwritten/trimmed) under random, sequential and increasing-order patterns with heavy merge
//! and GC pressure, the scheme's verifier running after every merge/GC; and the behaviours
//! that define each scheme.

use proptest::prelude::*;
use ssd::{FtlKind, Lpn, ReadPage, SimTime, Ssd, SsdConfig, StreamId};
use std::collections::HashMap;

mod common;

fn config(kind: FtlKind) -> SsdConfig {
    common::tiny(kind)
}

#[derive(Clone, Debug)]
enum Op {
    Write(u64, u32),
    Read(u64, u32),
    Trim(u64, u32),
}

fn run(kind: FtlKind, ops: &[Op]) -> Result<ssd::Stats, TestCaseError> {
    let mut ssd = Ssd::new(config(kind)).unwrap();
    let n = ssd.logical_pages();
    let mut model: HashMap<u64, ReadPage> = HashMap::new();
    let (mut tag, mut now) = (0u64, SimTime::ZERO);
    for op in ops {
        match *op {
            Op::Write(l, k) => {
                let (l, k) = (l % n, k.min((n - l % n) as u32));
                let tags: Vec<u64> = (tag..tag + k as u64).collect();
                tag += k as u64;
                now = ssd.write_tags(Lpn(l), &tags, StreamId(0), now).unwrap();
                for (i, &t) in tags.iter().enumerate() {
                    model.insert(l + i as u64, ReadPage::Tag(t));
                }
            }
            Op::Read(l, k) => {
                let (l, k) = (l % n, k.min((n - l % n) as u32));
                let mut out = vec![ReadPage::Unwritten; k as usize];
                now = ssd.read_tags(Lpn(l), &mut out, now).unwrap();
                for (i, got) in out.iter().enumerate() {
                    let want = model
                        .get(&(l + i as u64))
                        .copied()
                        .unwrap_or(ReadPage::Unwritten);
                    prop_assert_eq!(*got, want, "{:?} lpn {}", kind, l + i as u64);
                }
            }
            Op::Trim(l, k) => {
                let (l, k) = (l % n, k.min((n - l % n) as u32));
                now = ssd.trim(Lpn(l), k, now).unwrap();
                for i in 0..k as u64 {
                    model.insert(l + i, ReadPage::Trimmed);
                }
            }
        }
    }
    ssd.verify()
        .map_err(|e| TestCaseError::fail(format!("{kind:?}: {e}")))?;
    let mut out = vec![ReadPage::Unwritten; n as usize];
    ssd.read_tags(Lpn(0), &mut out, now).unwrap();
    for (l, got) in out.iter().enumerate() {
        let want = model
            .get(&(l as u64))
            .copied()
            .unwrap_or(ReadPage::Unwritten);
        prop_assert_eq!(*got, want, "{:?} final lpn {}", kind, l);
    }
    Ok(ssd.stats())
}

const KINDS: [FtlKind; 6] = [
    FtlKind::Page,
    FtlKind::Block,
    FtlKind::Bast,
    FtlKind::Fast,
    FtlKind::Ioa,
    FtlKind::Dftl,
];

fn random_ops() -> impl Strategy<Value = Vec<Op>> {
    proptest::collection::vec(
        prop_oneof![
            6 => (any::<u64>(), 1u32..5).prop_map(|(l, k)| Op::Write(l, k)),
            2 => (any::<u64>(), 1u32..5).prop_map(|(l, k)| Op::Read(l, k)),
            1 => (any::<u64>(), 1u32..3).prop_map(|(l, k)| Op::Trim(l, k)),
        ],
        100..800,
    )
}

/// Batches of distinct offsets of one block, written in increasing order (a flusher's runs).
fn increasing_ops() -> impl Strategy<Value = Vec<Op>> {
    proptest::collection::vec(
        (0u64..1000, proptest::collection::btree_set(0u64..8, 1..8)),
        20..150,
    )
    .prop_map(|batches| {
        let mut ops = Vec::new();
        for (block, offs) in batches {
            for o in offs {
                ops.push(Op::Write(block * 8 + o, 1));
            }
            ops.push(Op::Read(block * 8, 8));
        }
        ops
    })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(24))]

    #[test]
    fn every_scheme_returns_the_last_write_under_random_mixes(ops in random_ops()) {
        for kind in KINDS {
            run(kind, &ops)?;
        }
    }

    #[test]
    fn every_scheme_returns_the_last_write_under_increasing_runs(ops in increasing_ops()) {
        for kind in KINDS {
            run(kind, &ops)?;
        }
    }

    #[test]
    fn every_scheme_returns_the_last_write_under_sequential_passes(start in 0u64..300, passes in 1usize..4, size in 1u32..9) {
        let n = config(FtlKind::Page).logical_pages();
        let mut ops = Vec::new();
        for _ in 0..passes {
            let mut l = start;
            while l < start + n {
                ops.push(Op::Write(l % n, size));
                l += size as u64;
            }
        }
        for kind in KINDS {
            run(kind, &ops)?;
        }
    }
}

fn overwrite_block(kind: FtlKind, offsets: &[u64]) -> ssd::Stats {
    let mut ops: Vec<Op> = (0..8).map(|o| Op::Write(o, 1)).collect(); // fill block 0
    ops.extend(offsets.iter().map(|&o| Op::Write(o, 1)));
    // Force the log of block 0 to be merged: write 4 other blocks (4 log slots).
    ops.extend((1..=4).map(|b| Op::Write(b * 8, 1)));
    run(kind, &ops).unwrap()
}

#[test]
fn bast_switch_merges_a_sequential_overwrite() {
    let s = overwrite_block(FtlKind::Bast, &[0, 1, 2, 3, 4, 5, 6, 7]);
    assert!(s.merges_switch >= 2, "{s:?}");
    assert_eq!(s.merges_full, 0, "{s:?}");
}

#[test]
fn increasing_non_contiguous_overwrite_is_a_full_merge_in_bast_and_a_switch_in_ioa() {
    let bast = overwrite_block(FtlKind::Bast, &[1, 3, 5, 6]);
    let ioa = overwrite_block(FtlKind::Ioa, &[1, 3, 5, 6]);
    assert_eq!(bast.merges_full, 1, "bast {bast:?}");
    assert_eq!(ioa.merges_full, 0, "ioa {ioa:?}");
    // The first fill is a switch in both; the overwrite's merge is a switch only in IOA.
    assert_eq!(
        ioa.merges_switch,
        bast.merges_switch + 1,
        "ioa {ioa:?} bast {bast:?}"
    );
    // IOA copies the 4 remaining pages; BAST's full merge copies all 8.
    assert!(
        ioa.gc_pages_copied + 4 <= bast.gc_pages_copied,
        "ioa {ioa:?} bast {bast:?}"
    );
}

#[test]
fn a_non_increasing_overwrite_falls_back_to_a_full_merge_in_ioa() {
    let ioa = overwrite_block(FtlKind::Ioa, &[5, 3, 6]);
    assert_eq!(ioa.merges_full, 1, "{ioa:?}");
}

#[test]
fn fast_switch_merges_a_sequential_block_and_fully_merges_random_overwrites() {
    let seq = overwrite_block(FtlKind::Fast, &[0, 1, 2, 3, 4, 5, 6, 7]);
    assert!(seq.merges_switch >= 2 && seq.merges_full == 0, "{seq:?}");
    // Random overwrites land in RW logs; filling 3 RW blocks forces their reclamation.
    let mut ops: Vec<Op> = (0..64).map(|l| Op::Write(l, 1)).collect();
    ops.extend((0..40).map(|i| Op::Write((i * 7 + 3) % 64, 1)));
    let s = run(FtlKind::Fast, &ops).unwrap();
    assert!(s.merges_full > 0, "{s:?}");
}

#[test]
fn dftl_writes_translation_pages_when_the_cmt_is_smaller_than_the_working_set() {
    let n = config(FtlKind::Dftl).logical_pages();
    let mut x = 7u64;
    let ops: Vec<Op> = (0..3000)
        .map(|_| {
            x = x
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            Op::Write((x >> 33) % n, 1)
        })
        .collect();
    let big = run(FtlKind::Dftl, &ops).unwrap();
    assert!(
        big.translation_writes > 100 && big.translation_reads > 100,
        "{big:?}"
    );
    // A working set inside the CMT (16 entries) writes translation pages only when the
    // final full read-back evicts its dirty entries.
    let small: Vec<Op> = (0..3000).map(|i| Op::Write(i % 8, 1)).collect();
    let s = run(FtlKind::Dftl, &small).unwrap();
    assert!(s.translation_writes <= 2, "{s:?}");
}

#[test]
fn mapping_memory_orders_as_p4_says() {
    let mem = |k| Ssd::new(config(k)).unwrap().mapping_bytes();
    assert!(mem(FtlKind::Block) < mem(FtlKind::Bast));
    assert!(mem(FtlKind::Bast) < mem(FtlKind::Ioa));
    assert!(mem(FtlKind::Ioa) < mem(FtlKind::Page));
}
