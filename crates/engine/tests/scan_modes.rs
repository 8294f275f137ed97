//! Every scan mode returns exactly the model's rows (a `BTreeMap` of key -> id) in key order,
//! for random databases, pool sizes and ranges — empty ranges, single keys, ranges spanning
//! many leaves; and a device error in mid-batch fails the scan without leaking pins.

use blockdev::MemDevice;
use engine::heap::{load, Database};
use engine::scan::{range_scan, ScanMode};
use engine::Pager;
use proptest::prelude::*;
use std::collections::BTreeMap;

const PB: usize = 8192;

fn setup(
    records: u64,
    leaf_keys: usize,
    pool_pages: usize,
    seed: u64,
) -> (Pager, Database, BTreeMap<u64, u64>) {
    // Room for the largest case: 4,000 records with 4 keys a leaf need about 2,100 pages.
    let mut pool = Pager::new(Box::new(MemDevice::new(PB, 4096)), pool_pages);
    let db = load(&mut pool, records, leaf_keys, seed).unwrap();
    let model = (0..records).map(|id| (db.key_of(id), id)).collect();
    (pool, db, model)
}

fn modes() -> [ScanMode; 6] {
    [
        ScanMode::Sync,
        ScanMode::Batched(1),
        ScanMode::Batched(50),
        ScanMode::Sorted(7),
        ScanMode::Sorted(50),
        ScanMode::Adaptive { max: 64 },
    ]
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(40))]

    #[test]
    fn every_mode_returns_the_model_rows(
        records in 1u64..4000,
        leaf_keys in 4usize..64,
        pool_pages in 0usize..40,
        seed in any::<u64>(),
        ranges in proptest::collection::vec((any::<u64>(), any::<u64>()), 1..6),
    ) {
        let (mut pool, db, model) = setup(records, leaf_keys, pool_pages, seed);
        let mut ranges = ranges;
        // Always include: everything, one exact key, and an empty range.
        let k = db.key_of(records / 2);
        ranges.extend([(0, u64::MAX), (k, k), (k.wrapping_add(1).max(1), k.wrapping_add(1).max(1) - 1)]);
        for (lo, hi) in ranges {
            let want: Vec<(u64, u64)> = if lo <= hi { model.range(lo..=hi).map(|(&k, &v)| (k, v)).collect() } else { Vec::new() };
            for mode in modes() {
                pool.clear().unwrap();
                let got = range_scan(&mut pool, &db, lo, hi, mode).unwrap();
                prop_assert_eq!(&got, &want, "{:?} on [{}, {}]", mode, lo, hi);
                prop_assert_eq!(pool.pinned_count(), 0);
            }
        }
    }
}

#[test]
fn a_failed_read_in_mid_batch_is_an_error_and_leaks_no_pins() {
    let mut pool = Pager::new(Box::new(MemDevice::new(PB, 2048)), 16);
    let db = load(&mut pool, 20_000, 64, 3).unwrap();
    // Copy the loaded device, failing a heap page that a full scan must read.
    let mut loaded = pool.into_device();
    let mut image = vec![0u8; PB * 2048];
    loaded.read(0, &mut image).unwrap();
    let mut dev = MemDevice::from_bytes(PB, image);
    dev.fail_page = Some(db.heap_pages / 2);
    let mut pool = Pager::new(Box::new(dev), 16);
    for mode in modes() {
        pool.clear().unwrap();
        let r = range_scan(&mut pool, &db, 0, u64::MAX, mode);
        assert!(r.is_err(), "{mode:?} must fail");
        assert_eq!(pool.pinned_count(), 0, "{mode:?} leaked pins");
    }
}

#[test]
fn batched_scans_submit_misses_together() {
    let (mut pool, db, _) = setup(20_000, 64, 1000, 9);
    let lo = 0;
    let hi = u64::MAX / 5;
    pool.clear().unwrap();
    let s0 = pool.stats();
    range_scan(&mut pool, &db, lo, hi, ScanMode::Batched(50)).unwrap();
    let s1 = pool.stats();
    let batches = s1.batches - s0.batches;
    let misses = s1.misses - s0.misses;
    assert!(
        batches > 0 && misses > 10 * batches,
        "{misses} misses in {batches} batches"
    );
}
