//! The pager's flash extension (P3: `lru-ext`, `2q-ext`, `2q-flash`): against a model of page
//! contents under random fetch / write / evict / write-past-the-cache mixes, through power
//! cuts at random I/Os (nothing committed is lost), and with a corrupt flash page or a failing
//! flash device (the database device serves the page, the event is counted, never a stale
//! page).

use blockdev::{BlockDevice, ClockKind, CrashDevice, DevError, DevStats, Io, MemDevice, WriteHint};
use engine::pager::FrameId;
use engine::Pager;
use policy::{PolicyConfig, PolicyKind};
use proptest::prelude::*;
use std::cell::Cell;
use std::rc::Rc;

const PB: usize = 512;
const PAGES: u64 = 32;
const EXT_KINDS: [PolicyKind; 3] = [
    PolicyKind::LruExt,
    PolicyKind::TwoQExt,
    PolicyKind::TwoQFlash,
];

/// The database: page `p` filled with byte `p`.
fn database() -> MemDevice {
    let mut dev = MemDevice::new(PB, PAGES);
    for p in 0..PAGES {
        dev.write(p, &[p as u8; PB], WriteHint::NONE).unwrap();
    }
    dev
}

fn config(kind: PolicyKind, main: usize, ext: usize) -> PolicyConfig {
    PolicyConfig::new(kind, main, ext)
}

fn pager(kind: PolicyKind, main: usize, ext: usize, flash: Box<dyn BlockDevice>) -> Pager {
    Pager::with_buffer_policy(Box::new(database()), &config(kind, main, ext), Some(flash)).unwrap()
}

/// Fetch `page`, check it is filled with `want`, unpin.
fn read_is(bp: &mut Pager, page: u64, want: u8) {
    let f = bp.fetch(page).unwrap();
    assert!(
        bp.data(f).iter().all(|&b| b == want),
        "page {page}: expected {want}, got {}",
        bp.data(f)[0]
    );
    bp.unpin(f);
}

fn write_page(bp: &mut Pager, page: u64, b: u8) -> Result<(), engine::EngineError> {
    let f = bp.fetch(page)?;
    bp.data_mut(f).fill(b);
    bp.unpin(f);
    Ok(())
}

/// A flash device that fails every I/O once `failing` is set.
struct FailingFlash {
    inner: MemDevice,
    failing: Rc<Cell<bool>>,
}

impl FailingFlash {
    fn check(&self, page: u64) -> Result<(), DevError> {
        if self.failing.get() {
            Err(DevError::Injected { page })
        } else {
            Ok(())
        }
    }
}

impl BlockDevice for FailingFlash {
    fn page_bytes(&self) -> usize {
        self.inner.page_bytes()
    }
    fn capacity_pages(&self) -> u64 {
        self.inner.capacity_pages()
    }
    fn read(&mut self, page: u64, buf: &mut [u8]) -> Result<(), DevError> {
        self.check(page)?;
        self.inner.read(page, buf)
    }
    fn write(&mut self, page: u64, buf: &[u8], hint: WriteHint) -> Result<(), DevError> {
        self.check(page)?;
        self.inner.write(page, buf, hint)
    }
    fn submit(&mut self, batch: &mut [Io<'_>]) -> Result<(), DevError> {
        self.check(0)?;
        self.inner.submit(batch)
    }
    fn trim(&mut self, page: u64, pages: u64) -> Result<(), DevError> {
        self.check(page)?;
        self.inner.trim(page, pages)
    }
    fn flush(&mut self) -> Result<(), DevError> {
        self.inner.flush()
    }
    fn now_ns(&self) -> u64 {
        0
    }
    fn clock_kind(&self) -> ClockKind {
        ClockKind::Simulated
    }
    fn stats(&self) -> DevStats {
        self.inner.stats()
    }
}

/// Pages 0..n referenced once each, clean, with a main buffer of 2: all but the last two
/// end on flash (lru-ext).
fn warm(bp: &mut Pager, n: u64) {
    for p in 0..n {
        read_is(bp, p, p as u8);
    }
}

#[test]
fn pages_come_back_from_flash_and_count_as_extended_hits() {
    let mut bp = pager(PolicyKind::LruExt, 2, 8, Box::new(MemDevice::new(PB, 8)));
    warm(&mut bp, 6);
    assert_eq!(bp.flash_pages(), 4);
    assert!(bp.flash_page_of(0).is_some());
    read_is(&mut bp, 0, 0);
    let s = bp.flash_stats().unwrap();
    assert_eq!((s.ext_hits, s.flash_writes, s.fallbacks()), (1, 5, 0));
    assert!(bp.flash_page_of(0).is_none(), "a read-back leaves flash");
    assert_eq!(
        bp.stats().pages_read,
        6,
        "the database was read once per page only"
    );
}

#[test]
fn a_dirty_page_goes_to_the_database_at_eviction_and_its_flash_copy_is_current() {
    let mut bp = pager(PolicyKind::LruExt, 1, 4, Box::new(MemDevice::new(PB, 4)));
    write_page(&mut bp, 3, 77).unwrap();
    read_is(&mut bp, 4, 4);
    assert_eq!(
        bp.stats().writebacks,
        1,
        "written to the database at eviction (P3)"
    );
    assert!(bp.flash_page_of(3).is_some());
    read_is(&mut bp, 3, 77);
    assert_eq!(bp.flash_stats().unwrap().ext_hits, 1);
}

#[test]
fn a_page_written_past_the_cache_loses_its_flash_copy() {
    let mut bp = pager(PolicyKind::LruExt, 2, 8, Box::new(MemDevice::new(PB, 8)));
    warm(&mut bp, 5);
    assert!(bp.flash_page_of(1).is_some());
    bp.write(1, &[99u8; PB]).unwrap();
    bp.write_with(2, |img| img.fill(98)).unwrap();
    bp.trim(0, 1).unwrap();
    assert_eq!(bp.flash_pages(), 0);
    assert_eq!(bp.flash_stats().unwrap().invalidated, 3);
    read_is(&mut bp, 1, 99);
    read_is(&mut bp, 2, 98);
    read_is(&mut bp, 0, 0);
}

#[test]
fn a_corrupt_flash_copy_falls_back_to_the_database_and_is_counted() {
    for kind in EXT_KINDS {
        let mut bp = pager(kind, 2, 8, Box::new(MemDevice::new(PB, 8)));
        // Written, evicted (to the database, then flash), read back: the newest version.
        write_page(&mut bp, 0, 200).unwrap();
        warm(&mut bp, 0);
        for p in 1..6 {
            read_is(&mut bp, p, p as u8);
        }
        let Some(fp) = bp.flash_page_of(0) else {
            continue; // 2q-flash may have displaced it; the other kinds keep it
        };
        let mut bad = [200u8; PB];
        bad[17] ^= 1;
        let flash = bp.flash_device_mut().unwrap();
        flash.write(fp, &bad, WriteHint::NONE).unwrap();
        read_is(&mut bp, 0, 200);
        let s = bp.flash_stats().unwrap();
        assert_eq!((s.fallback_corrupt, s.ext_hits), (1, 0), "{}", kind.name());
    }
}

#[test]
fn a_copy_in_the_wrong_slot_fails_its_checksum() {
    let mut bp = pager(PolicyKind::LruExt, 2, 8, Box::new(MemDevice::new(PB, 8)));
    warm(&mut bp, 5);
    let (a, b) = (bp.flash_page_of(0).unwrap(), bp.flash_page_of(1).unwrap());
    // Page 0's slot now holds page 1's (intact) image: a misdirected write.
    let mut img = [0u8; PB];
    let flash = bp.flash_device_mut().unwrap();
    flash.read(b, &mut img).unwrap();
    flash.write(a, &img, WriteHint::NONE).unwrap();
    read_is(&mut bp, 0, 0);
    assert_eq!(bp.flash_stats().unwrap().fallback_corrupt, 1);
}

#[test]
fn a_failing_flash_device_falls_back_to_the_database() {
    let failing = Rc::new(Cell::new(false));
    let flash = FailingFlash {
        inner: MemDevice::new(PB, 8),
        failing: failing.clone(),
    };
    let mut bp = pager(PolicyKind::TwoQFlash, 2, 8, Box::new(flash));
    for round in 0..3u8 {
        for p in 0..10 {
            let want = if p == 3 && round > 0 {
                99 + round
            } else {
                p as u8
            };
            read_is(&mut bp, p, want);
        }
        write_page(&mut bp, 3, 100 + round).unwrap();
        read_is(&mut bp, 3, 100 + round);
        if round == 0 {
            failing.set(true);
        }
    }
    for p in (0..10).filter(|&p| p != 3) {
        read_is(&mut bp, p, p as u8);
    }
    let s = bp.flash_stats().unwrap();
    assert!(s.fallback_read_errors > 0, "{s:?}");
    assert!(s.write_errors > 0, "{s:?}");
    bp.check_flash();
}

#[test]
fn an_extended_policy_needs_a_flash_device_of_the_right_shape() {
    let c = config(PolicyKind::LruExt, 4, 16);
    let e = Pager::with_buffer_policy(Box::new(database()), &c, None).err();
    assert!(e.unwrap().to_string().contains("give it a device"));
    let small = Box::new(MemDevice::new(PB, 8));
    let e = Pager::with_buffer_policy(Box::new(database()), &c, Some(small)).err();
    assert!(e.unwrap().to_string().contains("needs 16 pages"));
    let wrong = Box::new(MemDevice::new(4096, 16));
    let e = Pager::with_buffer_policy(Box::new(database()), &c, Some(wrong)).err();
    assert!(e.unwrap().to_string().contains("same page size"));
}

#[derive(Clone, Debug)]
enum Op {
    Fetch(u64),
    FetchMany(Vec<u64>),
    Write(u64, u8),
    /// Written past the cache (a structure's direct write).
    WritePast(u64, u8),
    UnpinOldest,
    Clear,
    Flush,
}

fn ops(n: usize) -> impl Strategy<Value = Vec<Op>> {
    let page = 0u64..20;
    proptest::collection::vec(
        prop_oneof![
            4 => page.clone().prop_map(Op::Fetch),
            1 => proptest::collection::vec(page.clone(), 1..5).prop_map(Op::FetchMany),
            3 => (page.clone(), any::<u8>()).prop_map(|(p, b)| Op::Write(p, b)),
            1 => (page, any::<u8>()).prop_map(|(p, b)| Op::WritePast(p, b)),
            5 => Just(Op::UnpinOldest),
            1 => Just(Op::Clear),
            1 => Just(Op::Flush),
        ],
        1..n,
    )
}

fn kind() -> impl Strategy<Value = PolicyKind> {
    prop::sample::select(EXT_KINDS.to_vec())
}

/// Apply one op; the pages it pinned are pushed to `pins`. Errors pass through.
fn apply(
    bp: &mut Pager,
    op: &Op,
    model: &mut [u8],
    pins: &mut Vec<(u64, FrameId)>,
) -> Result<(), engine::EngineError> {
    match op {
        Op::Fetch(p) => pins.push((*p, bp.fetch(*p)?)),
        Op::FetchMany(ps) => {
            let fs = bp.fetch_many(ps)?;
            pins.extend(ps.iter().copied().zip(fs));
        }
        Op::Write(p, b) => {
            write_page(bp, *p, *b)?;
            model[*p as usize] = *b;
        }
        Op::WritePast(p, b) => {
            // Only pages not resident: a structure never writes past a page it caches.
            if !bp.contains(*p) {
                bp.write(*p, &[*b; PB])?;
                model[*p as usize] = *b;
            }
        }
        Op::UnpinOldest => {
            if !pins.is_empty() {
                let (_, f) = pins.remove(0);
                bp.unpin(f);
            }
        }
        Op::Clear => bp.clear()?,
        Op::Flush => bp.flush_all()?,
    }
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(96))]

    /// Every pinned frame shows the model's page (whether it came from flash or the
    /// database), the extension keeps its invariants, the counts add up, and after a flush the
    /// database device holds the model.
    #[test]
    fn the_extended_pool_matches_a_model(
        kind in kind(), main in 1usize..5, ext in 1usize..10, ops in ops(240)
    ) {
        let mut bp = pager(kind, main, ext, Box::new(MemDevice::new(PB, 10)));
        let mut model: Vec<u8> = (0..PAGES as u8).collect();
        let mut pins = Vec::new();
        for op in &ops {
            apply(&mut bp, op, &mut model, &mut pins).unwrap();
            for &(p, f) in &pins {
                prop_assert!(bp.data(f).iter().all(|&b| b == model[p as usize]), "page {}", p);
            }
            bp.check_flash();
            for p in 0..PAGES {
                prop_assert!(!(bp.contains(p) && bp.flash_page_of(p).is_some()),
                    "page {} both in main and on flash", p);
            }
        }
        for (_, f) in pins.drain(..) {
            bp.unpin(f);
        }
        for p in 0..20 {
            read_is(&mut bp, p, model[p as usize]);
        }
        let (s, x) = (bp.stats(), bp.flash_stats().unwrap());
        prop_assert!(x.ext_hits <= s.misses);
        prop_assert_eq!(x.fallbacks(), 0);
        prop_assert!(bp.flash_pages() <= ext);
        bp.flush_all().unwrap();
        let (mut dev, _) = bp.into_devices();
        let mut buf = vec![0u8; PB];
        for p in 0..PAGES {
            dev.read(p, &mut buf).unwrap();
            prop_assert_eq!(buf[0], model[p as usize], "page {}", p);
        }
    }

}

/// Cuts of the power-cut property below: `POWER_CUTS` (default 96), e.g.
/// `POWER_CUTS=10000 cargo test --release -p engine --test flash_extension_never_returns_a_stale_page power_cuts`.
fn power_cuts() -> u32 {
    std::env::var("POWER_CUTS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(96)
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(power_cuts()))]

    /// Power is cut at a random I/O of the database device (and the flash device loses power
    /// too), dropping or tearing what was not flushed: every page flushed before the cut holds
    /// its committed version, or one written after it; a pager reopened on the durable image
    /// with an empty flash device reads exactly that image.
    #[test]
    fn power_cuts_lose_nothing_committed(
        kind in kind(), main in 1usize..4, ext in 1usize..8, ops in ops(160),
        cut_at in 1u64..120, seed in any::<u64>(),
    ) {
        let (db, db_cut) = CrashDevice::from_image(database(), seed);
        let (flash, flash_cut) = CrashDevice::new(MemDevice::new(PB, 8), seed ^ 1);
        let mut bp = Pager::with_buffer_policy(
            Box::new(db), &config(kind, main, ext), Some(Box::new(flash))).unwrap();
        // Half the cuts tear unflushed pages, half drop them whole (each kept or lost).
        db_cut.set_tearing(seed % 2 == 0);
        db_cut.cut_power_after(cut_at);
        let mut model: Vec<u8> = (0..PAGES as u8).collect();
        let mut committed = model.clone();
        let mut since: Vec<Vec<u8>> = vec![Vec::new(); PAGES as usize];
        let mut pins = Vec::new();
        for op in &ops {
            let r = apply(&mut bp, op, &mut model, &mut pins);
            if db_cut.is_cut() || r.is_err() {
                break;
            }
            match op {
                Op::Flush => {
                    committed.clone_from(&model);
                    since.iter_mut().for_each(Vec::clear);
                }
                Op::Write(p, b) | Op::WritePast(p, b) => since[*p as usize].push(*b),
                _ => {}
            }
        }
        db_cut.cut_now();
        flash_cut.cut_now();
        let image = db_cut.durable_image();
        let mut buf = vec![0u8; PB];
        let mut durable = image.clone();
        for p in 0..PAGES as usize {
            durable.read(p as u64, &mut buf).unwrap();
            prop_assert!(buf.iter().all(|&b| b == buf[0]), "page {} torn in a 1-sector page", p);
            prop_assert!(buf[0] == committed[p] || since[p].contains(&buf[0]),
                "page {}: durable {}, committed {}, written since {:?}", p, buf[0], committed[p], since[p]);
        }
        let fresh = Box::new(MemDevice::new(PB, 8));
        let mut again = Pager::with_buffer_policy(
            Box::new(image), &config(kind, main, ext), Some(fresh)).unwrap();
        for p in 0..PAGES {
            durable.read(p, &mut buf).unwrap();
            read_is(&mut again, p, buf[0]);
        }
    }
}
