//! Model-based tests of the page-mapping FTL: random mixes of multi-page writes, reads and
//! trims on small devices under heavy GC pressure, with several streams, every GC policy and
//! every GC stream mode and victim scope, checked against a trivial model (every read returns the last write,
//! or "unwritten"/"trimmed"). The FTL's invariant verifier runs after every GC
//! (`check_invariants`) and once more at the end.

mod common;

use proptest::prelude::*;
use ssd::{
    GcPolicy, GcPool, GcStreamMode, GcVictimScope, Lpn, ReadPage, SimTime, Ssd, SsdConfig, StreamId,
};
use std::collections::HashMap;

#[derive(Clone, Debug)]
enum Op {
    Write { lpn: u64, pages: u32, stream: u16 },
    Read { lpn: u64, pages: u32 },
    Trim { lpn: u64, pages: u32 },
}

fn config(policy: GcPolicy, mode: GcStreamMode, streams: u16, timing: bool) -> SsdConfig {
    let mut cfg = common::two_dies(24, 8);
    cfg.timing.enabled = timing;
    cfg.ftl.op = 0.5;
    cfg.ftl.gc_policy = policy;
    cfg.ftl.gc_stream = mode;
    cfg.ftl.streams = streams;
    cfg.ftl.gc_free_blocks_min = 1;
    cfg.ftl.check_invariants = true;
    cfg
}

fn op_strategy(logical: u64, streams: u16) -> impl Strategy<Value = Op> {
    let lpn = 0..logical;
    prop_oneof![
        6 => (lpn.clone(), 1u32..5, 0..streams).prop_map(|(lpn, pages, stream)| Op::Write { lpn, pages, stream }),
        2 => (lpn.clone(), 1u32..5).prop_map(|(lpn, pages)| Op::Read { lpn, pages }),
        1 => (lpn, 1u32..4).prop_map(|(lpn, pages)| Op::Trim { lpn, pages }),
    ]
}

fn policy() -> impl Strategy<Value = GcPolicy> {
    prop_oneof![
        Just(GcPolicy::Greedy),
        Just(GcPolicy::Fifo),
        Just(GcPolicy::CostBenefit)
    ]
}

fn pool() -> impl Strategy<Value = GcPool> {
    prop_oneof![Just(GcPool::PerDie), Just(GcPool::Device)]
}

fn scope() -> impl Strategy<Value = GcVictimScope> {
    prop_oneof![Just(GcVictimScope::Device), Just(GcVictimScope::Stream)]
}

fn mode() -> impl Strategy<Value = GcStreamMode> {
    prop_oneof![
        Just(GcStreamMode::Separate),
        Just(GcStreamMode::Victim),
        Just(GcStreamMode::PerStream)
    ]
}

/// Run `ops` on a device and on the model; every read must agree.
fn run(cfg: SsdConfig, ops: &[Op]) -> Result<(), TestCaseError> {
    let mut ssd = Ssd::new(cfg).unwrap();
    let n = ssd.logical_pages();
    let mut model: HashMap<u64, ReadPage> = HashMap::new();
    let mut tag = 0u64;
    let mut now = SimTime::ZERO;
    for op in ops {
        match *op {
            Op::Write { lpn, pages, stream } => {
                let pages = pages.min((n - lpn) as u32);
                let tags: Vec<u64> = (0..pages as u64).map(|i| tag + i).collect();
                tag += pages as u64;
                now = ssd
                    .write_tags(Lpn(lpn), &tags, StreamId(stream), now)
                    .unwrap();
                for (i, &t) in tags.iter().enumerate() {
                    model.insert(lpn + i as u64, ReadPage::Tag(t));
                }
            }
            Op::Read { lpn, pages } => {
                let pages = pages.min((n - lpn) as u32) as usize;
                let mut out = vec![ReadPage::Unwritten; pages];
                now = ssd.read_tags(Lpn(lpn), &mut out, now).unwrap();
                for (i, got) in out.iter().enumerate() {
                    let want = model
                        .get(&(lpn + i as u64))
                        .copied()
                        .unwrap_or(ReadPage::Unwritten);
                    prop_assert_eq!(*got, want, "lpn {}", lpn + i as u64);
                }
            }
            Op::Trim { lpn, pages } => {
                let pages = pages.min((n - lpn) as u32);
                now = ssd.trim(Lpn(lpn), pages, now).unwrap();
                for i in 0..pages as u64 {
                    model.insert(lpn + i, ReadPage::Trimmed);
                }
            }
        }
    }
    ssd.verify()
        .map_err(|e| TestCaseError::fail(e.to_string()))?;
    // Finally every page reads back as the model says.
    let mut out = vec![ReadPage::Unwritten; n as usize];
    ssd.read_tags(Lpn(0), &mut out, now).unwrap();
    for (l, got) in out.iter().enumerate() {
        let want = model
            .get(&(l as u64))
            .copied()
            .unwrap_or(ReadPage::Unwritten);
        prop_assert_eq!(*got, want, "final read of lpn {}", l);
    }
    let s = ssd.stats();
    prop_assert!(s.flash_pages_written >= s.host_pages_written);
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    #[test]
    fn every_read_returns_the_last_write(
        policy in policy(),
        mode in mode(),
        streams in 1u16..4,
        timing in any::<bool>(),
        gc_pool in pool(),
        scope in scope(),
        ops in proptest::collection::vec(op_strategy(1 << 20, 3), 200..1500),
    ) {
        let mut cfg = config(policy, mode, streams, timing);
        cfg.ftl.gc_pool = gc_pool;
        cfg.ftl.gc_victim = scope;
        if scope == GcVictimScope::Stream && mode == GcStreamMode::Separate {
            // Victims per stream need each stream's copies in its own blocks.
            cfg.ftl.gc_stream = GcStreamMode::PerStream;
        }
        let n = cfg.logical_pages();
        let ops: Vec<Op> = ops.into_iter().map(|op| match op {
            Op::Write { lpn, pages, stream } => Op::Write { lpn: lpn % n, pages, stream: stream % streams },
            Op::Read { lpn, pages } => Op::Read { lpn: lpn % n, pages },
            Op::Trim { lpn, pages } => Op::Trim { lpn: lpn % n, pages },
        }).collect();
        run(cfg, &ops)?;
    }
}

#[test]
fn hot_overwrites_of_a_full_device_keep_working() {
    // Fill everything, then hammer a few pages: GC must keep reclaiming without DeviceFull.
    for policy in [GcPolicy::Greedy, GcPolicy::Fifo, GcPolicy::CostBenefit] {
        let cfg = config(policy, GcStreamMode::Separate, 1, false);
        let n = cfg.logical_pages();
        let mut ops: Vec<Op> = (0..n)
            .map(|l| Op::Write {
                lpn: l,
                pages: 1,
                stream: 0,
            })
            .collect();
        ops.extend((0..20 * n).map(|i| Op::Write {
            lpn: i % 5,
            pages: 1,
            stream: 0,
        }));
        run(cfg, &ops).unwrap();
    }
}

#[test]
fn streams_keep_their_data_in_separate_blocks() {
    let mut cfg = config(GcPolicy::Greedy, GcStreamMode::Separate, 2, false);
    cfg.ftl.check_invariants = false;
    let mut ssd = Ssd::new(cfg).unwrap();
    // Interleave two streams page by page; each block must end up holding one stream's pages.
    for i in 0..32u64 {
        ssd.write_tags(Lpn(i), &[i], StreamId((i % 2) as u16), SimTime::ZERO)
            .unwrap();
    }
    let f = ssd.flash();
    for b in 0..f.total_blocks() {
        let tags: Vec<u64> = (0..f.pages_per_block())
            .map(|p| f.tag(f.ppn(ssd::BlockId(b), p)))
            .filter(|&t| t != ssd::flash::TAG_EMPTY)
            .collect();
        assert!(
            tags.windows(2).all(|w| w[0] % 2 == w[1] % 2),
            "block {b} mixes streams: {tags:?}"
        );
    }
}

#[test]
fn a_workload_in_step_with_the_striping_does_not_fill_one_die() {
    // Reported by the blockdev work: alternate a hot page and uniform pages on 2 dies, so one
    // die receives only hot rewrites and the other all the cold data.
    let mut cfg = config(GcPolicy::Greedy, GcStreamMode::Separate, 1, false);
    cfg.geometry.pages_per_block = 16;
    cfg.geometry.blocks_per_plane = 24;
    let n = cfg.logical_pages();
    let mut ops = Vec::new();
    let mut x = 17u64;
    for _ in 0..6 * n {
        x = x
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        ops.push(Op::Write {
            lpn: 0,
            pages: 1,
            stream: 0,
        });
        ops.push(Op::Write {
            lpn: (x >> 33) % n,
            pages: 1,
            stream: 0,
        });
    }
    run(cfg, &ops).unwrap();
}
