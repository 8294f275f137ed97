//! Every scheme's verifier can fail: build the scheme on a small device, write, corrupt one
//! structure the way a bug would, and see `verify` refuse it.

use super::block::BlockMap;
use super::blockmap::BlockMapped;
use super::blocks::NIL;
use super::dftl::Dftl;
use super::fast::Fast;
use super::gc::Greedy;
use super::logblock::LogBlocks;
use super::merge::FifoMerge;
use super::page::PageFtl;
use super::scheme::{Ftl, HostWrite};
use crate::config::{FtlConfig, FtlKind, Geometry, SsdConfig};
use crate::error::InvariantError;
use crate::flash::Flash;
use crate::types::{Lpn, PageWrite, SimTime, StreamId};

fn small(kind: FtlKind) -> SsdConfig {
    let preset = SsdConfig::preset("mlc-sata-2010").unwrap();
    let cfg = SsdConfig {
        geometry: Geometry {
            channels: 2,
            dies_per_channel: 1,
            planes_per_die: 1,
            blocks_per_plane: 32,
            pages_per_block: 8,
            page_bytes: 512,
        },
        ftl: FtlConfig {
            scheme: kind,
            op: 0.5,
            gc_free_blocks_min: 1,
            log_blocks: 4,
            cmt_entries: 16,
            streams: 2,
            ..preset.ftl.clone()
        },
        ..preset
    };
    cfg.validate().unwrap();
    cfg
}

/// Write `lpns` (tags = lpn) on stream 0, checking the FTL stays valid.
fn write_all(ftl: &mut dyn Ftl, flash: &mut Flash, lpns: impl IntoIterator<Item = u64>) {
    for l in lpns {
        let w = HostWrite {
            lpn: Lpn(l),
            stream: StreamId(0),
            data: PageWrite::tag(l),
            now: SimTime::ZERO,
        };
        ftl.write(flash, w).unwrap();
    }
    ftl.verify(flash).unwrap();
}

/// Random-ish overwrites that force GC or merges.
fn churn(n: u64) -> impl Iterator<Item = u64> {
    (0..4 * n).map(move |i| (i * 7919 + i / 3) % n)
}

#[test]
fn page_ftl_accounting_fails_when_two_slots_share_an_open_block() {
    // Before the independent count, free + valid + invalid was derived from the write
    // pointers and could not fail: this corruption passed verify.
    let cfg = small(FtlKind::Page);
    let mut flash = Flash::new(&cfg);
    let mut ftl = PageFtl::<Greedy>::new(&cfg, &flash);
    write_all(&mut ftl, &mut flash, [0]);
    let dies = flash.layout.dies as usize;
    let b = ftl.blocks.open_blocks()[0];
    assert_ne!(b, NIL);
    // Stream 1's slot on die 0 now claims stream 0's open block.
    ftl.blocks.open_mut()[dies] = b;
    let e = ftl.verify(&flash).unwrap_err();
    assert!(matches!(e, InvariantError::PageAccounting { .. }), "{e}");
}

/// A small device of `kind` with its FTL (built by `make`) after a churn of overwrites that
/// forced GC or merges; the FTL verified clean.
fn churned<F: Ftl>(
    kind: FtlKind,
    make: impl FnOnce(&SsdConfig, &Flash) -> F,
) -> (SsdConfig, Flash, F) {
    let cfg = small(kind);
    let mut flash = Flash::new(&cfg);
    let mut ftl = make(&cfg, &flash);
    write_all(&mut ftl, &mut flash, churn(cfg.logical_pages()));
    (cfg, flash, ftl)
}

fn log_blocks(
    kind: FtlKind,
) -> impl FnOnce(&SsdConfig, &Flash) -> BlockMapped<LogBlocks<FifoMerge>> {
    move |cfg, flash| BlockMapped::new(cfg, flash, LogBlocks::new(cfg, &flash.layout, kind))
}

#[test]
fn page_ftl_with_one_pool_for_the_device_churns_clean_and_its_verify_can_fail() {
    let mut cfg = small(FtlKind::Page);
    cfg.ftl.gc_pool = crate::config::GcPool::Device;
    cfg.validate().unwrap();
    let mut flash = Flash::new(&cfg);
    let mut ftl = PageFtl::<Greedy>::new(&cfg, &flash);
    write_all(&mut ftl, &mut flash, churn(cfg.logical_pages()));
    assert!(flash.stats.gc_invocations > 0);
    write_all(&mut ftl, &mut flash, [0]); // one more write: the host slot has an open block
                                          // One pool: one open-block slot per stream, and the host's open block is slot 0.
    assert_eq!(
        ftl.blocks.open_blocks().len(),
        cfg.ftl.open_slots() as usize
    );
    let b = ftl.blocks.open_blocks()[0];
    assert_ne!(b, NIL);
    ftl.blocks.open_mut()[1] = b;
    let e = ftl.verify(&flash).unwrap_err();
    assert!(matches!(e, InvariantError::PageAccounting { .. }), "{e}");
}

#[test]
fn page_ftl_verify_fails_on_a_lost_mapping() {
    let (cfg, flash, mut ftl) = churned(FtlKind::Page, PageFtl::<Greedy>::new);
    let l = (0..cfg.logical_pages() as usize)
        .find(|&l| ftl.l2p.get(l) != NIL)
        .unwrap();
    ftl.l2p.set(l, NIL);
    assert!(ftl.verify(&flash).is_err());
}

#[test]
fn dftl_verify_fails_when_the_cmt_outgrows_its_capacity() {
    let (cfg, flash, mut ftl) = churned(FtlKind::Dftl, Dftl::<Greedy>::new);
    for l in 0..=cfg.ftl.cmt_entries as u64 {
        ftl.cmt.insert(l, false);
    }
    let e = ftl.verify(&flash).unwrap_err();
    assert!(matches!(e, InvariantError::Count { .. }), "{e}");
}

#[test]
fn dftl_verify_checks_its_inner_page_map() {
    let (_, flash, mut ftl) = churned(FtlKind::Dftl, Dftl::<Greedy>::new);
    let b = ftl.inner.blocks.open_blocks()[0];
    ftl.inner.blocks.open_mut()[flash.layout.dies as usize] = b;
    assert!(ftl.verify(&flash).is_err());
}

#[test]
fn block_ftl_verify_fails_on_a_leaked_live_page() {
    let (_, flash, mut ftl) = churned(FtlKind::Block, |cfg, flash| {
        BlockMapped::new(
            cfg,
            flash,
            BlockMap::new(&flash.layout, cfg.logical_pages()),
        )
    });
    // Mark a page of a free block live: a page nobody maps.
    let (_, free) = ftl.core.blocks.pooled().next().unwrap();
    ftl.core.live.set(flash.layout.page(free, 0), true);
    let e = ftl.verify(&flash).unwrap_err();
    assert!(matches!(e, InvariantError::Count { .. }), "{e}");
}

#[test]
fn bast_verify_fails_when_two_logical_blocks_share_a_data_block() {
    let (_, flash, mut ftl) = churned(FtlKind::Bast, log_blocks(FtlKind::Bast));
    let data = &mut ftl.scheme.data;
    let mut mapped = (0..data.len()).filter(|&l| data[l] != NIL);
    let (a, b) = (mapped.next().unwrap(), mapped.next().unwrap());
    data[b] = data[a];
    let e = ftl.verify(&flash).unwrap_err();
    assert!(matches!(e, InvariantError::BlockRoles { .. }), "{e}");
}

#[test]
fn ioa_verify_fails_when_a_log_is_unmapped() {
    let (_, flash, mut ftl) = churned(FtlKind::Ioa, log_blocks(FtlKind::Ioa));
    let log_of = &mut ftl.scheme.log_of;
    let lbn = log_of.iter().position(|&s| s != NIL).expect("an open log");
    log_of[lbn] = NIL;
    assert!(ftl.verify(&flash).is_err());
}

#[test]
fn fast_verify_fails_when_a_data_block_is_also_free() {
    let (_, flash, mut ftl) = churned(FtlKind::Fast, |cfg, flash| {
        BlockMapped::new(cfg, flash, Fast::<FifoMerge>::new(cfg, &flash.layout))
    });
    let d = *ftl.scheme.data.iter().find(|&&b| b != NIL).unwrap();
    ftl.core.blocks.pool_mut(0).push_back(d);
    let e = ftl.verify(&flash).unwrap_err();
    let roles = matches!(e, InvariantError::BlockRoles { .. });
    assert!(
        roles || matches!(e, InvariantError::FreeBlockNotErased { .. }),
        "{e}"
    );
}

#[test]
fn without_tags_verify_still_sees_a_mapping_to_an_unprogrammed_page() {
    // data = "none": programmed pages are told from the write pointers (and skipped bits),
    // not from tags. Point a valid lpn at a free page of its open block: verify refuses it.
    let mut cfg = small(FtlKind::Page);
    cfg.ftl.data = crate::config::DataMode::None;
    let mut flash = Flash::new(&cfg);
    assert!(!flash.has_tags());
    let mut ftl = PageFtl::<Greedy>::new(&cfg, &flash);
    write_all(&mut ftl, &mut flash, [0, 1]);
    let (old, free) = (ftl.l2p.get(0), ftl.l2p.get(1) + 2);
    assert!(!flash.programmed(crate::types::Ppn(free as u64)));
    ftl.l2p.set(0, free);
    ftl.p2l.set(old as usize, NIL);
    ftl.p2l.set(free as usize, 0);
    let e = ftl.verify(&flash).unwrap_err();
    assert!(matches!(e, InvariantError::MappedToDeadPage { .. }), "{e}");
}

#[test]
fn without_tags_a_block_mapped_scheme_still_sees_a_skipped_page_as_unprogrammed() {
    // Block mapping places a page at its offset, skipping the pages below it: with no tags,
    // the skipped bits say those pages hold nothing.
    let mut cfg = small(FtlKind::Block);
    cfg.ftl.data = crate::config::DataMode::None;
    let mut flash = Flash::new(&cfg);
    let mut ftl = BlockMapped::new(
        &cfg,
        &flash,
        BlockMap::new(&flash.layout, cfg.logical_pages()),
    );
    write_all(&mut ftl, &mut flash, [5]);
    let programmed: Vec<u64> = (0..flash.total_pages())
        .filter(|&p| flash.programmed(crate::types::Ppn(p)))
        .collect();
    assert_eq!(programmed.len(), 1, "only the page written: {programmed:?}");
    assert_eq!(flash.page_in_block(crate::types::Ppn(programmed[0])), 5);
}

#[test]
#[should_panic(expected = "mapped twice")]
fn a_physical_page_mapped_twice_panics_on_the_write() {
    // A stale P2L entry on the next page of the open block (a bug's leftover): the write
    // that programs it finds the page already mapped.
    let cfg = small(FtlKind::Page);
    let mut flash = Flash::new(&cfg);
    let mut ftl = PageFtl::<Greedy>::new(&cfg, &flash);
    write_all(&mut ftl, &mut flash, [0]);
    let b = ftl.blocks.open_blocks()[0];
    let next = flash
        .layout
        .page(b, flash.write_pointer(crate::types::BlockId(b)));
    ftl.p2l.set(next as usize, 5);
    // Stream 0's cursor went on to die 1; two more writes return to die 0's open block.
    write_all(&mut ftl, &mut flash, [1, 2]);
}

#[test]
#[should_panic(expected = "valid count vs P2L")]
fn a_victim_whose_count_disagrees_with_its_pages_panics_in_gc() {
    // Trim every page of the first block closed (FIFO GC takes it first on its die), then
    // leave a P2L entry behind in it, as a bug would: GC finds a mapped page in a block the
    // index says holds none.
    let cfg = small(FtlKind::Page);
    let mut flash = Flash::new(&cfg);
    let mut ftl = PageFtl::<super::gc::Fifo>::new(&cfg, &flash);
    let n = cfg.logical_pages();
    write_all(&mut ftl, &mut flash, 0..n);
    let g = flash.layout;
    let closed = (0..ftl.state.len() as u32)
        .find(|&b| ftl.victims.contains(b))
        .expect("a closed block");
    for p in g.page(closed, 0)..g.page(closed + 1, 0) {
        let lpn = ftl.p2l.get(p as usize);
        if lpn != NIL {
            ftl.trim(&mut flash, Lpn(lpn as u64), SimTime::ZERO)
                .unwrap();
        }
    }
    assert_eq!(ftl.victims.valid(closed), 0);
    ftl.p2l.set(g.page(closed, 0) as usize, 0);
    // Overwrite everything until GC takes that block (no verify in between).
    for l in churn(n).chain(churn(n)).chain(churn(n)) {
        let w = HostWrite {
            lpn: Lpn(l),
            stream: StreamId(0),
            data: PageWrite::tag(l),
            now: SimTime::ZERO,
        };
        ftl.write(&mut flash, w).unwrap();
    }
}
