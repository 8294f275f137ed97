//! The pager's cache and accounting: pins, batched misses, write-back, decoded forms, and the
//! cache against a model under random operations.

use super::*;
use crate::page::PageKind;
use blockdev::MemDevice;
use proptest::prelude::*;
use std::rc::Rc;

const PB: usize = 512;

fn pager(cap: usize) -> Pager {
    let mut dev = MemDevice::new(PB, 64);
    for p in 0..64u64 {
        dev.write(p, &[p as u8; PB], WriteHint::NONE).unwrap();
    }
    Pager::new(Box::new(dev), cap)
}

#[test]
fn fetch_many_reads_misses_in_one_submit_and_pins_each_entry() {
    let mut bp = pager(8);
    let f = bp.fetch(3).unwrap();
    bp.unpin(f);
    let before = bp.device().stats().batches;
    let frames = bp.fetch_many(&[5, 3, 5, 9]).unwrap();
    assert_eq!(bp.stats().batches, 1);
    assert_eq!(bp.device().stats().batches - before, 1, "one device submit");
    assert_eq!(bp.stats().misses, 3, "3 then 5 and 9");
    assert_eq!(bp.data(frames[0])[0], 5);
    assert_eq!(frames[0], frames[2]);
    for f in frames {
        bp.unpin(f);
    }
    assert_eq!(bp.pinned_count(), 0);
}

#[test]
fn prefetch_reads_the_missing_pages_in_one_submit_and_leaves_them_unpinned() {
    let mut bp = pager(16);
    let f = bp.fetch(3).unwrap();
    bp.unpin(f);
    let (before, reads) = (bp.device().stats().batches, bp.stats().pages_read);
    bp.prefetch(&[9, 3, 5, 9, 7]).unwrap();
    assert_eq!(bp.device().stats().batches - before, 1, "one device submit");
    assert_eq!(
        bp.stats().pages_read - reads,
        3,
        "5, 7 and 9; 3 was resident"
    );
    assert_eq!(bp.pinned_count(), 0);
    assert!([3, 5, 7, 9].iter().all(|&p| bp.contains(p)));
    // At most a quarter of the cache at once.
    bp.prefetch(&(20..40).collect::<Vec<u64>>()).unwrap();
    assert_eq!((20..40).filter(|&p| bp.contains(p)).count(), 4);
    let f = bp.fetch(5).unwrap();
    assert_eq!(bp.data(f)[0], 5);
    bp.unpin(f);
}

#[test]
fn lru_evicts_the_least_recently_released_and_capacity_zero_works() {
    let mut bp = pager(2);
    for p in [1, 2, 3] {
        let f = bp.fetch(p).unwrap();
        bp.unpin(f);
    }
    assert!(!bp.contains(1) && bp.contains(2) && bp.contains(3));
    assert_eq!(bp.policy_name(), "lru");
    let mut zero = pager(0);
    let f = zero.fetch(4).unwrap();
    assert_eq!(zero.data(f)[0], 4);
    zero.unpin(f);
    assert_eq!(zero.resident(), 0);
}

#[test]
fn pinned_frames_are_never_evicted() {
    let mut bp = pager(2);
    let pinned: Vec<FrameId> = [1, 2, 3].iter().map(|&p| bp.fetch(p).unwrap()).collect();
    // Over capacity while everything is pinned: the cache grows.
    for p in 10..20 {
        let f = bp.fetch(p).unwrap();
        bp.unpin(f);
        assert!(bp.contains(1) && bp.contains(2) && bp.contains(3));
    }
    assert_eq!(bp.data(pinned[1])[0], 2);
    for f in pinned {
        bp.unpin(f);
    }
    assert_eq!(bp.resident(), 2, "shrinks back to capacity once released");
}

#[test]
fn dirty_pages_are_written_back_at_eviction_and_flush() {
    let mut bp = pager(1);
    let f = bp.fetch(7).unwrap();
    bp.data_mut(f)[0] = 99;
    bp.unpin(f);
    let g = bp.fetch(8).unwrap();
    bp.unpin(g);
    assert_eq!(bp.stats().writebacks, 1);
    let h = bp.fetch(7).unwrap();
    assert_eq!(bp.data(h)[0], 99);
    bp.data_mut(h)[1] = 42;
    bp.unpin(h);
    bp.flush_all().unwrap();
    assert_eq!(bp.stats().writebacks, 2);
    let mut dev = bp.into_device();
    let mut buf = vec![0u8; PB];
    dev.read(7, &mut buf).unwrap();
    assert_eq!(&buf[..2], &[99, 42]);
}

#[test]
fn a_failed_batch_leaves_nothing_pinned_or_resident() {
    let mut dev = MemDevice::new(PB, 64);
    dev.fail_page = Some(10);
    let mut bp = Pager::new(Box::new(dev), 4);
    let f = bp.fetch(1).unwrap();
    bp.unpin(f);
    assert!(bp.fetch_many(&[1, 2, 10, 11]).is_err());
    assert_eq!(bp.pinned_count(), 0);
    assert!(!bp.contains(10) && !bp.contains(2));
}

#[test]
fn decoded_forms_are_cached_beside_the_page_and_count_hits() {
    let mut bp = pager(2);
    let decode = |b: &[u8]| Ok::<u64, EngineError>(b[0] as u64 * 10);
    assert_eq!(*bp.load(3, 3, decode).unwrap(), 30);
    let no_decode = |_: &[u8]| -> Result<u64, EngineError> { panic!("a hit must not decode") };
    assert_eq!(*bp.load(3, 3, no_decode).unwrap(), 30);
    assert_eq!((bp.stats().hits, bp.stats().misses), (1, 1));
    // A decoded form kept without an image (a structure's newer version).
    bp.keep(100, Rc::new(7u64)).unwrap();
    assert_eq!(bp.cached::<u64>(100).map(|r| *r), Some(7));
    assert_eq!(bp.cached::<u64>(101), None);
    assert_eq!((bp.stats().hits, bp.stats().misses), (2, 2));
    // A fetched page decodes on first load.
    let f = bp.fetch(9).unwrap();
    bp.unpin(f);
    assert_eq!(*bp.load(9, 9, decode).unwrap(), 90);
}

#[test]
fn a_discarded_page_is_read_again_from_the_device() {
    let mut bp = pager(4);
    let decode = |b: &[u8]| Ok::<u64, EngineError>(b[0] as u64);
    assert_eq!(*bp.load(3, 3, decode).unwrap(), 3);
    bp.keep(3, Rc::new(77u64)).unwrap();
    // The page is rewritten past the cache: the kept form is stale and must go.
    bp.write(3, &[33; PB]).unwrap();
    bp.discard(3);
    bp.discard(40); // not resident: nothing happens
    assert!(!bp.contains(3));
    assert_eq!(bp.resident(), 0);
    let read_before = bp.stats().pages_read;
    assert_eq!(*bp.load(3, 3, decode).unwrap(), 33);
    assert_eq!(bp.stats().pages_read, read_before + 1);
    // The freed frame is reused and the policy still evicts correctly.
    for p in 10..16 {
        assert_eq!(*bp.load(p, p, decode).unwrap(), p);
    }
    assert_eq!(bp.resident(), 4);
}

#[test]
fn a_page_that_fails_to_decode_is_not_kept() {
    let mut bp = pager(4);
    let r: Result<Rc<u8>, _> = bp.load(3, 3, |b| crate::page::open(b, 3).map(|_| 0u8));
    assert!(matches!(
        r.map_err(|e| e.damage().map(|(p, f)| (p, f.clone()))),
        Err(Some((Some(3), crate::Fault::Magic { .. })))
    ));
    assert!(!bp.contains(3));
}

#[test]
fn accounting_follows_the_device_clock() {
    let mut bp = pager(0);
    bp.read_uncached(1).unwrap();
    bp.write(2, &[0u8; 2 * PB]).unwrap();
    bp.flush().unwrap();
    bp.trim(2, 2).unwrap();
    let s = bp.stats();
    assert_eq!((s.pages_read, s.pages_written), (1, 2));
    // MemDevice's clock does not move: the times are what the clock says, zero.
    assert_eq!((s.read_ns, s.write_ns), (0, 0));
}

/// A replacement policy that evicts the most recently used key: the pager applies whatever
/// the policy chooses.
struct Mru(Vec<u64>);

impl policy::Replacement<u64> for Mru {
    fn name(&self) -> &'static str {
        "mru"
    }
    fn admit(&mut self, key: u64) {
        self.0.push(key);
    }
    fn touch(&mut self, key: u64) {
        self.0.retain(|&k| k != key);
        self.0.push(key);
    }
    fn forget(&mut self, key: u64) {
        self.0.retain(|&k| k != key);
    }
    fn victim(&mut self, evictable: &mut dyn FnMut(u64) -> bool) -> Option<u64> {
        self.0.iter().rev().copied().find(|&k| evictable(k))
    }
    fn len(&self) -> usize {
        self.0.len()
    }
}

#[test]
fn the_policy_is_a_type_the_pager_applies() {
    let mut dev = MemDevice::new(PB, 64);
    dev.write(0, &vec![0u8; 64 * PB], WriteHint::NONE).unwrap();
    let mut bp = Pager::with_policy(Box::new(dev), 2, Box::new(Mru(Vec::new())));
    for p in [1, 2, 3] {
        let f = bp.fetch(p).unwrap();
        bp.unpin(f);
    }
    assert_eq!(bp.policy_name(), "mru");
    assert!(bp.contains(1) && !bp.contains(2) && bp.contains(3));
}

#[derive(Clone, Debug)]
enum Op {
    Fetch(u64),
    FetchMany(Vec<u64>),
    Write(u64, u8),
    UnpinOldest,
    Clear,
}

fn ops() -> impl Strategy<Value = Vec<Op>> {
    let page = 0u64..24;
    proptest::collection::vec(
        prop_oneof![
            4 => page.clone().prop_map(Op::Fetch),
            2 => proptest::collection::vec(page.clone(), 1..6).prop_map(Op::FetchMany),
            2 => (page, any::<u8>()).prop_map(|(p, b)| Op::Write(p, b)),
            4 => Just(Op::UnpinOldest),
            1 => Just(Op::Clear),
        ],
        1..200,
    )
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    /// Against a model of page contents: every pinned frame shows the model's byte, pinned
    /// pages stay resident, unpinned residents never exceed the capacity, and after a flush
    /// the device holds the model.
    #[test]
    fn the_cache_matches_a_model(cap in 0usize..6, ops in ops()) {
        let mut bp = pager(cap);
        let mut model: Vec<u8> = (0..64u8).collect();
        let mut pins: Vec<(u64, FrameId)> = Vec::new();
        for op in ops {
            match op {
                Op::Fetch(p) => pins.push((p, bp.fetch(p).unwrap())),
                Op::FetchMany(ps) => {
                    let fs = bp.fetch_many(&ps).unwrap();
                    pins.extend(ps.into_iter().zip(fs));
                }
                Op::Write(p, b) => {
                    let f = bp.fetch(p).unwrap();
                    bp.data_mut(f)[0] = b;
                    model[p as usize] = b;
                    bp.unpin(f);
                }
                Op::UnpinOldest => {
                    if !pins.is_empty() {
                        let (_, f) = pins.remove(0);
                        bp.unpin(f);
                    }
                }
                Op::Clear => bp.clear().unwrap(),
            }
            for &(p, f) in &pins {
                prop_assert!(bp.contains(p));
                prop_assert_eq!(bp.data(f)[0], model[p as usize]);
            }
            let pinned = pins.iter().map(|e| e.0).collect::<std::collections::BTreeSet<_>>().len();
            prop_assert!(bp.resident() <= cap.max(pinned) + pinned);
            prop_assert_eq!(bp.pinned_count(), pinned);
        }
        for (_, f) in pins {
            bp.unpin(f);
        }
        prop_assert!(bp.resident() <= cap);
        bp.flush_all().unwrap();
        let mut dev = bp.into_device();
        let mut buf = vec![0u8; PB];
        for p in 0..24u64 {
            dev.read(p, &mut buf).unwrap();
            prop_assert_eq!(buf[0], model[p as usize], "page {}", p);
        }
    }
}

/// A typed page form for tests: the payload as it is.
struct Payload(PageKind, Vec<u8>);

impl PageForm for Payload {
    fn kind(&self) -> PageKind {
        self.0
    }
    fn from_payload(kind: PageKind, payload: &[u8]) -> Payload {
        Payload(kind, payload.to_vec())
    }
    fn payload(&self) -> Option<&[u8]> {
        Some(&self.1)
    }
}

/// What `lend_page` lends for `page` as a KV data page: its first payload byte.
fn lent(bp: &mut Pager, page: u64) -> Option<u8> {
    bp.lend_page(page, PageKind::KvData, |p: &Payload| p.1.first().copied())
}

/// Write `page` as a KV data page of one repeated byte, version `version`, cached by `keep`.
fn write_byte(bp: &mut Pager, page: u64, byte: u8, version: u64, keep: Keep) {
    let w = PageWrite {
        kind: PageKind::KvData,
        version,
        hint: WriteHint::NONE,
        keep,
    };
    let body = [byte; 100];
    bp.write_pages::<Payload>(&mut Vec::new(), &[(page, &body[..])], w)
        .unwrap();
}

#[test]
fn a_lent_page_is_never_stale_after_a_rewrite_or_an_eviction() {
    let mut bp = pager(2);
    let read = |bp: &mut Pager, page: u64| {
        let form = bp
            .read_page::<Payload>(page, PageKind::KvData, "test")
            .unwrap();
        form.1[0]
    };
    write_byte(&mut bp, 7, 1, 1, Keep::Nothing);
    assert_eq!(lent(&mut bp, 7), None, "not cached: nothing lent");
    assert_eq!(read(&mut bp, 7), 1);
    assert_eq!(lent(&mut bp, 7), Some(1));
    // Rewritten, the cached copy dropped: nothing is lent until it is read again.
    write_byte(&mut bp, 7, 2, 2, Keep::Nothing);
    assert_eq!(lent(&mut bp, 7), None);
    assert_eq!(read(&mut bp, 7), 2);
    // Rewritten through the cache: the new form at once.
    write_byte(&mut bp, 7, 3, 3, Keep::Resident);
    assert_eq!(lent(&mut bp, 7), Some(3));
    // Evicted by two other pages, rewritten while out: the next read, then lends, see it.
    write_byte(&mut bp, 8, 8, 4, Keep::Payloads);
    write_byte(&mut bp, 9, 9, 4, Keep::Payloads);
    assert!(!bp.contains(7), "evicted");
    assert_eq!(lent(&mut bp, 7), None);
    write_byte(&mut bp, 7, 4, 5, Keep::Resident);
    assert_eq!(read(&mut bp, 7), 4);
    assert_eq!(lent(&mut bp, 7), Some(4));
    // Another kind is never lent (the typed read reports it), nor a refused form.
    let index = bp.lend_page(7, PageKind::KvIndex, |p: &Payload| Some(p.1[0]));
    assert_eq!(index, None);
    assert_eq!(
        bp.lend_page(7, PageKind::KvData, |_: &Payload| None::<u8>),
        None
    );
}

#[test]
fn a_lend_counts_a_hit_and_refreshes_the_page_for_replacement() {
    let mut bp = pager(2);
    write_byte(&mut bp, 1, 1, 1, Keep::Payloads);
    write_byte(&mut bp, 2, 2, 1, Keep::Payloads);
    let hits = bp.stats().hits;
    assert_eq!(lent(&mut bp, 1), Some(1));
    assert_eq!(bp.stats().hits, hits + 1);
    assert_eq!(lent(&mut bp, 5), None);
    assert_eq!(bp.stats().hits, hits + 1, "a page not lent counts nothing");
    // Page 1 was referenced after page 2: page 2 goes first.
    write_byte(&mut bp, 3, 3, 1, Keep::Payloads);
    assert!(bp.contains(1) && !bp.contains(2));
}

/// What `lend_payload` lends for `page` as a KV data page: its first payload byte.
fn lent_payload(bp: &mut Pager, page: u64) -> Option<u8> {
    bp.lend_payload::<Payload, u8>(page, PageKind::KvData, |p| p.first().copied())
}

/// `page` read as a KV data page through `read_payload`: its first payload byte.
fn read_payload(bp: &mut Pager, page: u64) -> Result<u8, EngineError> {
    bp.read_payload::<Payload, u8>(page, PageKind::KvData, "test", |p| p[0])
}

#[test]
fn a_checked_image_serves_its_payload_and_is_never_stale() {
    let mut bp = pager(2);
    write_byte(&mut bp, 7, 1, 1, Keep::Images);
    let hits = bp.stats().hits;
    assert_eq!(lent_payload(&mut bp, 7), Some(1), "served from the image");
    assert_eq!(bp.stats().hits, hits + 1, "a lend counts a hit");
    assert_eq!(lent(&mut bp, 7), None, "no decoded copy is kept");
    let index = bp.lend_payload::<Payload, u8>(7, PageKind::KvIndex, |p| Some(p[0]));
    assert_eq!(index, None, "checked as another kind: not lent");
    // Rewritten past the cache: nothing lent; read again, verified, kept as an image.
    write_byte(&mut bp, 7, 2, 2, Keep::Nothing);
    assert_eq!(lent_payload(&mut bp, 7), None);
    let reads = bp.stats().pages_read;
    assert_eq!(read_payload(&mut bp, 7).unwrap(), 2);
    assert_eq!(bp.stats().pages_read, reads + 1);
    assert_eq!(lent_payload(&mut bp, 7), Some(2));
    assert_eq!(lent(&mut bp, 7), None, "read as its image alone");
    write_byte(&mut bp, 7, 3, 3, Keep::Images);
    assert_eq!(lent_payload(&mut bp, 7), Some(3));
    // Evicted by two other pages: read back from the device.
    write_byte(&mut bp, 8, 8, 4, Keep::Images);
    write_byte(&mut bp, 9, 9, 4, Keep::Images);
    assert!(!bp.contains(7), "evicted");
    assert_eq!(lent_payload(&mut bp, 7), None);
    assert_eq!(read_payload(&mut bp, 7).unwrap(), 3);
    // Changed in place: the mark goes with the change, and the next read checks the image.
    let f = bp.fetch(7).unwrap();
    bp.data_mut(f)[crate::page::HEADER_BYTES] = 0xAB;
    bp.unpin(f);
    assert_eq!(
        lent_payload(&mut bp, 7),
        None,
        "a changed image is not lent"
    );
    assert!(
        read_payload(&mut bp, 7).is_err(),
        "its seal no longer holds"
    );
}

#[test]
fn read_payload_keeps_no_page_that_fails_its_checks() {
    let mut bp = pager(4);
    // Page 5 holds raw bytes, no seal.
    assert!(read_payload(&mut bp, 5).is_err());
    assert!(!bp.contains(5), "a page that fails its checks is not kept");
    // Page 6 sealed as an index page: not a data page.
    let w = PageWrite {
        kind: PageKind::KvIndex,
        version: 1,
        hint: WriteHint::NONE,
        keep: Keep::Nothing,
    };
    bp.write_pages::<Payload>(&mut Vec::new(), &[(6, &[6u8; 10][..])], w)
        .unwrap();
    assert!(read_payload(&mut bp, 6).is_err());
    assert!(!bp.contains(6));
    let misses = bp.stats().misses;
    let r = bp.read_payload::<Payload, u8>(6, PageKind::KvIndex, "test", |p| p[0]);
    assert_eq!(r.unwrap(), 6);
    assert_eq!(bp.stats().misses, misses + 1, "a read counts a miss");
    // A form kept decoded (newer than any image) is served through it.
    write_byte(&mut bp, 6, 7, 2, Keep::Resident);
    assert_eq!(read_payload(&mut bp, 6).unwrap(), 7);
}
