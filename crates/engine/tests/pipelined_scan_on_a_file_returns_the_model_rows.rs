//! On a real file (io_uring, O_DIRECT) the batched scan keeps `n` reads in flight across a
//! window of missed pages, read straight into the pager's frames: it returns exactly the rows
//! of the synchronous scan and of the model, for random databases, cache sizes, ranges and
//! batch sizes, and leaves no pin behind.

use blockdev::{BlockDevice, FileDevice, FileOptions};
use engine::heap::load;
use engine::scan::{range_scan, ScanMode};
use engine::Pager;
use proptest::prelude::*;
use std::collections::BTreeMap;

const PB: usize = 8192;

fn file_pool(dir: &std::path::Path, pool_pages: usize) -> Pager {
    let o = FileOptions {
        queue_depth: 64,
        ..FileOptions::default()
    };
    // 8,192 pages (64 MiB, sparse): room for the largest generated table, 6,000 records at
    // 4 keys per leaf (about 3,100 pages); 2,048 refused some generated cases as `Full`.
    let dev = FileDevice::create(&dir.join("scan.dev"), 8192, PB, o).expect("file device");
    assert!(dev.pipelines_reads());
    Pager::new(Box::new(dev), pool_pages)
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(12))]

    #[test]
    fn pipelined_batched_scans_return_the_sync_scans_rows(
        records in 1u64..6000,
        leaf_keys in 4usize..64,
        pool_pages in 0usize..400,
        seed in any::<u64>(),
        batch in 1usize..64,
        ranges in proptest::collection::vec((any::<u64>(), any::<u64>()), 1..4),
    ) {
        let dir = tempfile::tempdir_in(env!("CARGO_MANIFEST_DIR")).unwrap();
        let mut pool = file_pool(dir.path(), pool_pages);
        let db = load(&mut pool, records, leaf_keys, seed).unwrap();
        let model: BTreeMap<u64, u64> = (0..records).map(|id| (db.key_of(id), id)).collect();
        let mut ranges = ranges;
        ranges.push((0, u64::MAX));
        for (lo, hi) in ranges {
            let want: Vec<(u64, u64)> = if lo <= hi { model.range(lo..=hi).map(|(&k, &v)| (k, v)).collect() } else { Vec::new() };
            pool.clear().unwrap();
            let sync = range_scan(&mut pool, &db, lo, hi, ScanMode::Sync).unwrap();
            pool.clear().unwrap();
            let misses = pool.stats().misses;
            let got = range_scan(&mut pool, &db, lo, hi, ScanMode::Batched(batch)).unwrap();
            prop_assert_eq!(&got, &sync, "batched({}) on [{}, {}]", batch, lo, hi);
            prop_assert_eq!(&got, &want);
            prop_assert_eq!(pool.pinned_count(), 0);
            prop_assert!(pool.stats().misses >= misses);
        }
    }
}

/// With a cache of 1,000 pages, a pipelined batched(50) scan reads its misses in windows of
/// 400 (8 × 50): fewer batches than misses / 50.
#[test]
fn a_pipelined_scan_reads_windows_of_several_batches() {
    let dir = tempfile::tempdir_in(env!("CARGO_MANIFEST_DIR")).unwrap();
    let mut pool = file_pool(dir.path(), 1000);
    let db = load(&mut pool, 20_000, 64, 9).unwrap();
    pool.clear().unwrap();
    let s0 = pool.stats();
    range_scan(&mut pool, &db, 0, u64::MAX / 2, ScanMode::Batched(50)).unwrap();
    let s1 = pool.stats();
    let (batches, misses) = (s1.batches - s0.batches, s1.misses - s0.misses);
    assert!(
        batches > 0 && misses > 100 * batches,
        "{misses} misses in {batches} batches"
    );
}
