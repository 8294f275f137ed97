//! NVMe FDP in the page FTL: reclaim units of several erase blocks, reclaim-unit handles on
//! the streams, and the two handle types.
//!
//! Each page's tag records the handle it was written with (GC copies keep the tag), so every
//! programmed page of a reclaim unit tells whose data it holds; the flash of an FDP device is
//! laid out in reclaim units (`ssd.flash()`'s blocks are RUs).

mod common;

use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use ssd::config::fdp::{physical_page, spanning_dies, with_fdp};
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

/// Superblock RUs: `RU_BLOCKS / 2` erase blocks on each of the two dies.
fn superblock_config(isolation: Isolation) -> SsdConfig {
    spanning_dies(&with_fdp(&base(), HANDLES, RU_BLOCKS / 2, isolation), 2)
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
fn handles_never_share_a_superblock_reclaim_unit_under_persistent_isolation() {
    let mut ssd = Ssd::new(superblock_config(Isolation::Persistent)).unwrap();
    assert_eq!(
        ssd.flash().pages_per_block(),
        16 * RU_BLOCKS,
        "RUs of 2 x 2 blocks"
    );
    let n = ssd.logical_pages();
    churn(&mut ssd, 6 * n, 7);
    assert!(ssd.stats().gc_pages_copied > 0, "GC ran");
    assert_eq!(mixed_rus(&ssd), 0);
    ssd.verify().unwrap();
    let mut initial = Ssd::new(superblock_config(Isolation::Initial)).unwrap();
    churn(&mut initial, 6 * n, 7);
    assert!(mixed_rus(&initial) > 0, "the test can fail");
}

#[test]
fn a_superblock_reclaim_unit_takes_its_blocks_from_distinct_dies_and_covers_the_flash_once() {
    for dies in [1, 2] {
        let cfg = spanning_dies(
            &with_fdp(&base(), 1, RU_BLOCKS / dies, Isolation::Initial),
            dies,
        );
        cfg.validate().unwrap();
        let ssd = Ssd::new(cfg.clone()).unwrap();
        let f = ssd.flash();
        let mut seen = std::collections::BTreeSet::new();
        for ru in 0..f.total_blocks() {
            let pages: Vec<_> = (0..f.pages_per_block())
                .map(|p| physical_page(&cfg, ru, p))
                .collect();
            // Striped: each page on the die after its predecessor's (of the RU's dies).
            for w in pages.windows(2) {
                assert_eq!(w[1].die % dies, (w[0].die + 1) % dies, "ru {ru}");
            }
            let mut blocks: Vec<(u32, u32)> =
                pages.iter().map(|p| (p.die, p.block_in_die)).collect();
            blocks.sort_unstable();
            blocks.dedup();
            assert_eq!(blocks.len() as u32, RU_BLOCKS, "ru {ru}");
            for d in 0..dies {
                let on_die = blocks.iter().filter(|b| b.0 % dies == d).count() as u32;
                assert_eq!(on_die, RU_BLOCKS / dies, "ru {ru}: one share per die");
            }
            for p in pages {
                assert!(p.die < cfg.dies() && p.block_in_die < cfg.blocks_per_die());
                assert!(seen.insert(p), "ru {ru}: {p:?} in two places");
            }
        }
        assert_eq!(seen.len() as u64, cfg.physical_pages());
    }
}

#[test]
fn a_superblock_reclaim_unit_costs_what_a_one_die_reclaim_unit_of_its_size_costs() {
    let mut page = base();
    page.ftl.streams = 1;
    let writes = 6 * page.logical_pages();
    let one_die = uniform_stats(with_fdp(&page, 1, RU_BLOCKS, Isolation::Initial), writes);
    let across = spanning_dies(&with_fdp(&page, 1, RU_BLOCKS / 2, Isolation::Initial), 2);
    assert_eq!(uniform_stats(across, writes), one_die);
    // With one GC pool per die, the two-die RU makes the two dies one reclaim group.
    let mut per_die = page.clone();
    per_die.ftl.gc_pool = ssd::GcPool::PerDie;
    let across = spanning_dies(&with_fdp(&per_die, 1, RU_BLOCKS / 2, Isolation::Initial), 2);
    assert_eq!(uniform_stats(across, writes), one_die);
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
    let configs = Isolation::ALL.into_iter().flat_map(|i| {
        [
            (i, with_fdp(&base(), HANDLES, RU_BLOCKS, i)),
            (i, superblock_config(i)),
        ]
    });
    for (isolation, cfg) in configs {
        let mut ssd = Ssd::new(cfg).unwrap();
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
    for ru_dies in [0, 3, 4] {
        let e = spanning_dies(&ok, ru_dies)
            .validate()
            .unwrap_err()
            .to_string();
        assert!(e.contains("ftl.fdp.ru_dies"), "{ru_dies}: {e}");
    }
    superblock_config(Isolation::Persistent).validate().unwrap();
    let mut c = ok;
    c.ftl.scheme = ssd::FtlKind::Dftl;
    assert!(c.validate().is_err());
}

#[test]
fn a_resize_keeps_the_reclaim_unit_and_grows_the_drive_until_its_spare_rus_fit() {
    let mut cfg = spanning_dies(&with_fdp(&base(), HANDLES, 3, Isolation::Initial), 2);
    cfg.ftl.op = 0.07;
    let small = cfg.with_logical_capacity(1 << 20).unwrap();
    let f = small.ftl.fdp.unwrap();
    assert_eq!((f.ru_blocks, f.ru_dies), (3, 2));
    assert_eq!(small.blocks_per_die() % 3, 0);
    assert!(small.logical_bytes() >= 1 << 20);
    Ssd::new(small).unwrap();
}

#[test]
fn fdp_reads_from_toml() {
    let mut text = toml::to_string(&base()).unwrap();
    text = text.replace("gc_stream = \"per_stream\"", "gc_stream = \"separate\"");
    text.push_str("\n[ftl.fdp]\nru_blocks = 4\nru_dies = 2\nisolation = \"initial\"\n");
    let cfg: SsdConfig = toml::from_str(&text).unwrap();
    let fdp = cfg.ftl.fdp.unwrap();
    assert_eq!(
        (fdp.ru_blocks, fdp.ru_dies, fdp.isolation),
        (4, 2, Isolation::Initial)
    );
    cfg.validate().unwrap();
}
