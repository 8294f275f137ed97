//! On a real file (io_uring, O_DIRECT) the batched scan keeps `n` reads in flight across its
//! batches (reads started ahead, straight into the pager's frames): it returns exactly the rows
//! of the synchronous scan and of the model, for random databases, cache sizes, ranges and
//! batch sizes, with the reads kept in flight by the scan's thread or by a reader thread, and
//! leaves no pin behind.

use blockdev::{BlockDevice, FileDevice, FileOptions};
use engine::heap::load;
use engine::scan::{range_scan, ScanMode};
use engine::{Fault, Pager, Structure};
use proptest::prelude::*;
use std::collections::BTreeMap;

const PB: usize = 8192;

fn file_pool(dir: &std::path::Path, pool_pages: usize) -> Pager {
    file_pool_with(dir, pool_pages, false)
}

/// `read_thread`: the device's stream served by a reader thread (`FileOptions::read_thread`).
fn file_pool_with(dir: &std::path::Path, pool_pages: usize, read_thread: bool) -> Pager {
    let o = FileOptions {
        queue_depth: 64,
        read_thread,
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
        read_thread in any::<bool>(),
    ) {
        let dir = tempfile::tempdir_in(env!("CARGO_MANIFEST_DIR")).unwrap();
        let mut pool = file_pool_with(dir.path(), pool_pages, read_thread);
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
            prop_assert_eq!(&got, &sync, "batched({}) on [{}, {}], read thread {}", batch, lo, hi, read_thread);
            prop_assert_eq!(&got, &want);
            prop_assert_eq!(pool.pinned_count(), 0);
            prop_assert!(pool.stats().misses >= misses);
        }
    }
}

/// Reads outlive a window: once two windows of 40 missed pages are started (64 deep), reads of
/// both are issued before the first is handed back, and each window comes back holding its
/// own pages, pinned once per entry.
#[test]
fn the_next_windows_reads_are_issued_before_this_one_is_handed_back() {
    let dir = tempfile::tempdir_in(env!("CARGO_MANIFEST_DIR")).unwrap();
    let mut pool = file_pool(dir.path(), 1000);
    let db = load(&mut pool, 20_000, 64, 9).unwrap();
    let want: Vec<Vec<u8>> = (0..80)
        .map(|p| pool.read_uncached(p).unwrap().to_vec())
        .collect();
    pool.clear().unwrap();
    let ios0 = pool.device().stats().read_ios;
    let first: Vec<u64> = (0..40).collect();
    let second: Vec<u64> = (40..80).chain([3]).collect();
    pool.fetch_ahead(&first, 64).unwrap();
    pool.fetch_ahead(&second, 64).unwrap();
    let issued = pool.device().stats().read_ios - ios0;
    assert!(
        issued > 40,
        "{issued} reads issued before the first window is used"
    );
    for pages in [&first, &second] {
        let frames = pool.fetch_next().unwrap().expect("a window");
        assert_eq!(frames.len(), pages.len());
        for (&f, &p) in frames.iter().zip(pages.iter()) {
            assert!(pool.data(f) == &want[p as usize][..], "page {p}");
        }
        for f in frames {
            pool.unpin(f);
        }
    }
    assert!(pool.fetch_next().unwrap().is_none());
    assert_eq!((pool.pinned_count(), pool.windows_ahead()), (0, 0));
    assert!(db.heap_pages > 80);
}

/// A page asked for twice in one window is read once, into one frame pinned once per entry:
/// the window's frames are all taken (and mapped) before its reads start.
#[test]
fn a_page_repeated_in_a_window_is_read_once_into_one_frame() {
    let dir = tempfile::tempdir_in(env!("CARGO_MANIFEST_DIR")).unwrap();
    let mut pool = file_pool(dir.path(), 100);
    load(&mut pool, 2_000, 64, 9).unwrap();
    let want: Vec<Vec<u8>> = (0..10)
        .map(|p| pool.read_uncached(p).unwrap().to_vec())
        .collect();
    pool.clear().unwrap();
    let (ios0, misses0) = (pool.device().stats().read_ios, pool.stats().misses);
    let pages = [7u64, 8, 7, 9, 8, 7];
    pool.fetch_ahead(&pages, 4).unwrap();
    let frames = pool.fetch_next().unwrap().expect("the window");
    assert_eq!(
        pool.device().stats().read_ios - ios0,
        3,
        "7, 8 and 9 read once each"
    );
    assert_eq!(pool.stats().misses - misses0, 3);
    assert_eq!((frames[0], frames[1]), (frames[2], frames[4]));
    assert_eq!(frames[0], frames[5]);
    assert!(frames[0] != frames[1] && frames[1] != frames[3] && frames[0] != frames[3]);
    for (&f, &p) in frames.iter().zip(pages.iter()) {
        assert!(pool.data(f) == &want[p as usize][..], "page {p}");
    }
    assert_eq!(pool.pinned_count(), 3);
    for f in frames {
        pool.unpin(f);
    }
    assert_eq!((pool.pinned_count(), pool.windows_ahead()), (0, 0));
}

/// A read that fails while later windows' reads run (a page past the device's end) is named;
/// every window is abandoned: no pin stays, the failed page is not cached, and the pool reads on.
#[test]
fn a_failed_read_ahead_is_named_and_leaves_no_pin_nor_a_frame_without_its_page() {
    let dir = tempfile::tempdir_in(env!("CARGO_MANIFEST_DIR")).unwrap();
    let mut pool = file_pool(dir.path(), 1000);
    load(&mut pool, 2_000, 64, 9).unwrap();
    pool.clear().unwrap();
    let past = pool.capacity_pages();
    pool.fetch_ahead(&(0..30).collect::<Vec<u64>>(), 8).unwrap();
    pool.fetch_ahead(&[30, 31, past, 32], 8).unwrap();
    pool.fetch_ahead(&(33..60).collect::<Vec<u64>>(), 8)
        .unwrap();
    // The error shows at the first window handed back after it happened (the first or the
    // second: the bad read is issued once a slot frees).
    let e = loop {
        match pool.fetch_next() {
            Ok(Some(frames)) => frames.into_iter().for_each(|f| pool.unpin(f)),
            Ok(None) => panic!("the read past the end failed"),
            Err(e) => break e,
        }
    };
    assert!(
        matches!(e, engine::EngineError::Dev(blockdev::DevError::OutOfRange { page, .. }) if page == past),
        "{e:?}"
    );
    assert_eq!((pool.pinned_count(), pool.windows_ahead()), (0, 0));
    assert!(!pool.contains(past));
    let f = pool.fetch(45).unwrap();
    pool.unpin(f);
}

/// A page whose checksum fails mid-scan ends the scan with the damage named, and the reads
/// running ahead are drained: no pin, no window left.
#[test]
fn a_corrupt_page_mid_scan_is_named_and_the_reads_ahead_are_drained() {
    let dir = tempfile::tempdir_in(env!("CARGO_MANIFEST_DIR")).unwrap();
    let mut pool = file_pool(dir.path(), 200);
    let db = load(&mut pool, 20_000, 64, 9).unwrap();
    pool.write(db.heap_pages / 2, &vec![0x5a; PB]).unwrap();
    pool.clear().unwrap();
    let e = range_scan(&mut pool, &db, 0, u64::MAX, ScanMode::Batched(16)).unwrap_err();
    assert!(matches!(e, engine::EngineError::Corrupt(_)), "{e:?}");
    assert_eq!((pool.pinned_count(), pool.windows_ahead()), (0, 0));
}

/// A page is checked once per read of it, not once per use: the check runs at the image's
/// first use, not again on later uses or hits; it runs again once the image is rewritten or
/// read anew; a failed check is kept nowhere (every use fails).
#[test]
fn a_page_is_checked_once_per_read_and_again_after_its_image_changes() {
    let dir = tempfile::tempdir_in(env!("CARGO_MANIFEST_DIR")).unwrap();
    let mut pool = file_pool(dir.path(), 100);
    load(&mut pool, 2_000, 64, 9).unwrap();
    pool.clear().unwrap();
    let checks = std::cell::Cell::new(0);
    let use_page = |pool: &mut Pager, f| {
        let (form, _) = pool
            .checked_form(f, |b| {
                checks.set(checks.get() + 1);
                engine::heap::check_page(b, 3)
            })
            .unwrap();
        *form
    };
    let f = pool.fetch(3).unwrap();
    let form = use_page(&mut pool, f);
    assert_eq!(use_page(&mut pool, f), form);
    pool.unpin(f);
    let f = pool.fetch(3).unwrap();
    use_page(&mut pool, f);
    assert_eq!(checks.get(), 1, "checked at the first use only");
    pool.data_mut(f)[0] ^= 0; // rewritten in place (the same bytes): checked anew
    use_page(&mut pool, f);
    assert_eq!(checks.get(), 2);
    pool.unpin(f);
    pool.clear().unwrap();
    let f = pool.fetch(3).unwrap();
    use_page(&mut pool, f);
    assert_eq!(checks.get(), 3, "a page read anew is checked anew");
    for _ in 0..2 {
        let refused = engine::EngineError::corrupt(Structure::HeapPage, 3, Fault::Blank);
        let e = pool.checked_form(f, |_| Err::<u8, _>(refused));
        assert!(e.is_err(), "a failed check is not kept");
    }
    pool.unpin(f);
}

/// Checksums stay real: a cached, already checked heap page whose image is damaged in place
/// fails the next scan that reads it, and the error names that page.
#[test]
fn a_page_damaged_after_its_check_is_named_by_the_next_scan() {
    let dir = tempfile::tempdir_in(env!("CARGO_MANIFEST_DIR")).unwrap();
    let mut pool = file_pool(dir.path(), 4000);
    let db = load(&mut pool, 20_000, 64, 9).unwrap();
    pool.clear().unwrap();
    let all = range_scan(&mut pool, &db, 0, u64::MAX, ScanMode::Batched(16)).unwrap();
    assert_eq!(all.len(), 20_000);
    let bad = db.heap_pages / 2;
    assert!(pool.contains(bad), "the whole heap is cached");
    let f = pool.fetch(bad).unwrap();
    pool.data_mut(f)[engine::page::HEADER_BYTES + 100] ^= 0xff;
    pool.unpin(f);
    let e = range_scan(&mut pool, &db, 0, u64::MAX, ScanMode::Batched(16)).unwrap_err();
    match e {
        engine::EngineError::Corrupt(c) => assert_eq!(c.page, Some(bad), "{c:?}"),
        e => panic!("{e:?}"),
    }
    assert_eq!((pool.pinned_count(), pool.windows_ahead()), (0, 0));
}
