//! NVMe FDP in the page FTL: reclaim units of several erase blocks, reclaim-unit handles on
//! the streams, and the two handle types.
//!
//! Each page's tag records the handle it was written with (GC copies keep the tag), so every
//! programmed page of a reclaim unit tells whose data it holds; the flash of an FDP device is
//! laid out in reclaim units (`ssd.flash()`'s blocks are RUs).

mod common;

use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use ssd::config::fdp::with_fdp;
use ssd::flash::TAG_EMPTY;
use ssd::{BlockId, HandleStats, Isolation, Lpn, SimTime, Ssd, SsdConfig, Stats, StreamId};

const HANDLES: u16 = 3;
const RU_BLOCKS: u32 = 4;

/// Two dies of 128 blocks of 16 pages as one reclaim group, OP 25 % (204 logical blocks: a
/// whole number of 4-block RUs), invariants checked after every GC.
fn base() -> SsdConfig {
    let mut cfg = common::two_dies(128, 16);
    cfg.geometry.planes_per_die = 1;
    cfg.timing.enabled = false;
    cfg.ftl.gc_pool = ssd::GcPool::Device;
    cfg.ftl.op = 0.25;
    cfg.ftl.gc_free_blocks_min = 1;
    cfg.ftl.check_invariants = true;
    cfg
}

fn fdp_device(isolation: Isolation) -> Ssd {
    Ssd::new(with_fdp(&base(), HANDLES, RU_BLOCKS, isolation)).unwrap()
}

/// Handle `h` writes its own third of the space; handle 0 takes half the writes.
fn churn(ssd: &mut Ssd, writes: u64, seed: u64) {
    let third = ssd.logical_pages() / HANDLES as u64;
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    for _ in 0..writes {
        let h = if rng.gen_bool(0.5) {
            0
        } else {
            rng.gen_range(1..HANDLES)
        };
        let lpn = h as u64 * third + rng.gen_range(0..third);
        let tag = lpn << 8 | h as u64;
        ssd.write_tags(Lpn(lpn), &[tag], StreamId(h), SimTime::ZERO)
            .unwrap();
    }
}

/// Reclaim units holding pages of more than one handle.
fn mixed_rus(ssd: &Ssd) -> usize {
    let f = ssd.flash();
    (0..f.total_blocks())
        .filter(|&b| {
            let mut handles: Vec<u64> = (0..f.pages_per_block())
                .map(|p| f.tag(f.ppn(BlockId(b), p)))
                .filter(|&t| t != TAG_EMPTY)
                .map(|t| t & 0xff)
                .collect();
            handles.sort_unstable();
            handles.dedup();
            handles.len() > 1
        })
        .count()
}

#[test]
fn handles_never_share_a_reclaim_unit_under_persistent_isolation() {
    let mut ssd = fdp_device(Isolation::Persistent);
    assert_eq!(
        ssd.flash().pages_per_block(),
        16 * RU_BLOCKS,
        "the flash is laid out in RUs"
    );
    let n = ssd.logical_pages();
    churn(&mut ssd, 6 * n, 7);
    assert!(ssd.stats().gc_pages_copied > 0, "GC ran");
    assert_eq!(mixed_rus(&ssd), 0);
    ssd.verify().unwrap();
}

#[test]
fn initially_isolated_handles_mix_in_gc_reclaim_units() {
    let mut ssd = fdp_device(Isolation::Initial);
    let n = ssd.logical_pages();
    churn(&mut ssd, 6 * n, 7);
    assert!(
        mixed_rus(&ssd) > 0,
        "the shared GC RUs hold several handles"
    );
    ssd.verify().unwrap();
}

fn sum(rows: &[HandleStats], f: impl Fn(&HandleStats) -> u64) -> u64 {
    rows.iter().map(f).sum()
}

#[test]
fn gc_copies_are_counted_per_handle() {
    for isolation in Isolation::ALL {
        let mut ssd = fdp_device(isolation);
        let n = ssd.logical_pages();
        churn(&mut ssd, 5 * n, 3);
        let (rows, s) = (ssd.handle_stats(), ssd.stats());
        let shared = matches!(isolation, Isolation::Initial) as usize;
        assert_eq!(rows.len(), HANDLES as usize + shared, "{isolation:?}");
        assert_eq!(sum(&rows, |r| r.gc_pages_copied), s.gc_pages_copied);
        assert_eq!(sum(&rows, |r| r.flash_pages_written), s.flash_pages_written);
        assert_eq!(sum(&rows, |r| r.host_pages_written), s.host_pages_written);
        for (h, &host) in ssd.host_pages_written_by_stream().iter().enumerate() {
            assert_eq!(rows[h].handle, Some(h as u16));
            assert_eq!(rows[h].host_pages_written, host, "handle {h}");
            assert!(rows[h].ru_switches >= host / (16 * RU_BLOCKS) as u64);
        }
        assert!(rows[0].gc_pages_copied > 0, "{isolation:?}: {rows:?}");
    }
}

/// The stats of `writes` uniformly random one-page writes on stream 0 of `cfg`.
fn uniform_stats(cfg: SsdConfig, writes: u64) -> Stats {
    let mut ssd = Ssd::new(cfg).unwrap();
    let n = ssd.logical_pages();
    let mut rng = ChaCha8Rng::seed_from_u64(11);
    for _ in 0..writes {
        ssd.write(Lpn(rng.gen_range(0..n)), 1, StreamId(0), SimTime::ZERO)
            .unwrap();
    }
    ssd.stats()
}

#[test]
fn one_handle_has_the_page_ftls_waf() {
    let mut page = base();
    page.ftl.streams = 1;
    let writes = 6 * page.logical_pages();
    let plain = uniform_stats(page.clone(), writes);
    assert!(plain.waf() > 1.2, "GC ran: {}", plain.waf());
    for isolation in Isolation::ALL {
        let fdp = uniform_stats(with_fdp(&page, 1, 1, isolation), writes);
        assert_eq!(fdp, plain, "{isolation:?}");
    }
    // RUs of 4 blocks are the page FTL's erase blocks of 4x the pages (4 erases each).
    let mut big = page.clone();
    big.geometry.pages_per_block *= RU_BLOCKS;
    big.geometry.blocks_per_plane /= RU_BLOCKS;
    let mut fdp = uniform_stats(with_fdp(&page, 1, RU_BLOCKS, Isolation::Initial), writes);
    let big = uniform_stats(big, writes);
    assert_eq!(fdp.erases, big.erases * RU_BLOCKS as u64);
    fdp.erases = big.erases;
    assert_eq!(fdp, big);
    assert!(fdp.waf() > plain.waf(), "larger RUs, more copies");
}

#[test]
fn bad_fdp_configs_are_refused_with_the_field() {
    let ok = with_fdp(&base(), HANDLES, RU_BLOCKS, Isolation::Persistent);
    ok.validate().unwrap();
    let mut c = ok.clone();
    c.ftl.fdp.as_mut().unwrap().ru_blocks = 5;
    let e = c.validate().unwrap_err().to_string();
    assert!(e.contains("ftl.fdp.ru_blocks"), "{e}");
    let mut c = ok.clone();
    c.ftl.gc_stream = ssd::GcStreamMode::Separate;
    let e = c.validate().unwrap_err().to_string();
    assert!(e.contains("ftl.gc_stream"), "{e}");
    let big = with_fdp(&base(), HANDLES, 32, Isolation::Persistent);
    let e = big.validate().unwrap_err().to_string();
    assert!(e.contains("spare RUs"), "{e}");
    let mut c = ok;
    c.ftl.scheme = ssd::FtlKind::Dftl;
    assert!(c.validate().is_err());
}

#[test]
fn fdp_reads_from_toml() {
    let mut text = toml::to_string(&base()).unwrap();
    text = text.replace("gc_stream = \"per_stream\"", "gc_stream = \"separate\"");
    text.push_str("\n[ftl.fdp]\nru_blocks = 4\nisolation = \"initial\"\n");
    let cfg: SsdConfig = toml::from_str(&text).unwrap();
    let fdp = cfg.ftl.fdp.unwrap();
    assert_eq!((fdp.ru_blocks, fdp.isolation), (4, Isolation::Initial));
    cfg.validate().unwrap();
}
