//! The `Ftl` trait: one implementation per mapping scheme, all on the same [`Flash`] mechanism.
//!
//! An FTL owns its mapping structures and decides where each page goes, when to collect
//! garbage and how to merge; [`Flash`] carries out the programs, reads, copies and erases and
//! keeps the data, the counters and the one copy of the array's `Layout`.
//!
//! Where things live:
//! - `blocks`: the block manager every scheme shares (free pools, open blocks per slot and die);
//! - page-mapped schemes: `page` (`PageFtl<P>`) and `dftl` (`Dftl<P>`, a `PageFtl` plus a CMT
//!   on `policy::Lru`), generic over the GC victim policy `P` of `gc` (`Greedy`, `Fifo`,
//!   `CostBenefit`), chosen once in `build`;
//! - block-mapped schemes: the `blockmap` skeleton (`BlockMapped<S>`: free pool, live bits,
//!   read, trim, verify) around a `BlockScheme`: `block`, `logblock` (BAST, IOA) and `fast`,
//!   the log-block ones generic over a merge-victim policy of `merge` (`FifoMerge`).
//!
//! - `fdp`: NVMe FDP's per-handle counters (reclaim units are the page FTL's erase unit over the
//!   RU layout of `config::fdp`; handles are its streams).
//!
//! Invariants are checked by each scheme's `verify`; with `check_invariants` the device runs it
//! after every operation that collected garbage, merged or erased.

use crate::config::{FtlKind, GcPolicy, SsdConfig};
use crate::flash::Flash;

mod block;
mod blockmap;
mod blocks;
mod dftl;
mod fast;
pub mod fdp;
mod gc;
mod logblock;
pub mod memory;
mod merge;
mod page;
pub(crate) mod pagemap;
mod scheme;
pub(crate) use pagemap::prefetch_line;
pub(crate) use scheme::{Ftl, HostWrite, Placed, RunClock, RUN_PREFETCH_AHEAD};

use block::BlockMap;
use blockmap::BlockMapped;
use dftl::Dftl;
use fast::Fast;
use gc::{CostBenefit, Fifo, Greedy, VictimPolicy};
use logblock::LogBlocks;
use merge::FifoMerge;
use page::PageFtl;
#[cfg(test)]
mod tests;

/// Build the FTL named by `cfg.ftl.scheme`, with the GC victim policy of `cfg.ftl.gc_policy`
/// (page-mapped schemes) as a type parameter: the policy is chosen here, once.
pub(crate) fn build(cfg: &SsdConfig, flash: &Flash) -> Box<dyn Ftl> {
    let ftl = build_scheme(cfg, flash);
    assert_eq!(
        ftl.logical_pages(),
        cfg.logical_pages(),
        "the FTL's logical space"
    );
    ftl
}

fn build_scheme(cfg: &SsdConfig, flash: &Flash) -> Box<dyn Ftl> {
    match cfg.ftl.scheme {
        FtlKind::Page if cfg.ftl.fdp.is_some() => page_mapped::<FdpPage>(cfg, flash),
        FtlKind::Page => page_mapped::<Page>(cfg, flash),
        FtlKind::Dftl => page_mapped::<DftlOf>(cfg, flash),
        FtlKind::Block => Box::new(BlockMapped::new(
            cfg,
            flash,
            BlockMap::new(&flash.layout, cfg.logical_pages()),
        )),
        FtlKind::Bast | FtlKind::Ioa => {
            let scheme = LogBlocks::<FifoMerge>::new(cfg, &flash.layout, cfg.ftl.scheme);
            let per_die = cfg.ftl.log_stripe_dies;
            Box::new(BlockMapped::with_pools(cfg, flash, scheme, per_die))
        }
        FtlKind::Fast => Box::new(BlockMapped::new(
            cfg,
            flash,
            Fast::<FifoMerge>::new(cfg, &flash.layout),
        )),
    }
}

/// A page-mapped scheme, built for any GC victim policy and map entry widths.
trait PageMapped {
    /// Logical pages the scheme's page FTL maps (the values its P2L holds).
    fn mapped_pages(cfg: &SsdConfig) -> u64;
    fn build<P: VictimPolicy + 'static, const L: usize, const R: usize>(
        cfg: &SsdConfig,
        flash: &Flash,
    ) -> Box<dyn Ftl>;
}
struct Page;
impl PageMapped for Page {
    fn mapped_pages(cfg: &SsdConfig) -> u64 {
        cfg.logical_pages()
    }
    fn build<P: VictimPolicy + 'static, const L: usize, const R: usize>(
        cfg: &SsdConfig,
        flash: &Flash,
    ) -> Box<dyn Ftl> {
        Box::new(PageFtl::<P, L, R>::new(cfg, flash))
    }
}
/// A page FTL over FDP's reclaim-unit layout (`flash` is built from
/// [`crate::config::fdp::flash_config`]), with the host's logical space of `cfg`.
struct FdpPage;
impl PageMapped for FdpPage {
    fn mapped_pages(cfg: &SsdConfig) -> u64 {
        cfg.logical_pages()
    }
    fn build<P: VictimPolicy + 'static, const L: usize, const R: usize>(
        cfg: &SsdConfig,
        flash: &Flash,
    ) -> Box<dyn Ftl> {
        let unit = crate::config::fdp::flash_config(cfg);
        assert_eq!(
            flash.layout,
            crate::flash::Layout::new(&unit),
            "FDP's RU layout"
        );
        Box::new(PageFtl::<P, L, R>::with_logical_pages(
            &unit,
            flash,
            cfg.logical_pages(),
        ))
    }
}
struct DftlOf;
impl PageMapped for DftlOf {
    fn mapped_pages(cfg: &SsdConfig) -> u64 {
        dftl::mapped_pages(cfg)
    }
    fn build<P: VictimPolicy + 'static, const L: usize, const R: usize>(
        cfg: &SsdConfig,
        flash: &Flash,
    ) -> Box<dyn Ftl> {
        Box::new(Dftl::<P, L, R>::new(cfg, flash))
    }
}

fn page_mapped<S: PageMapped>(cfg: &SsdConfig, flash: &Flash) -> Box<dyn Ftl> {
    match cfg.ftl.gc_policy {
        GcPolicy::Greedy => with_widths::<S, Greedy>(cfg, flash),
        GcPolicy::Fifo => with_widths::<S, Fifo>(cfg, flash),
        GcPolicy::CostBenefit => with_widths::<S, CostBenefit>(cfg, flash),
    }
}

/// Build `S` with the narrowest map entries its page numbers fit ([`pagemap::entry_bytes`]):
/// L2P entries hold physical pages, P2L entries the pages `S` maps (fewer, so never wider).
fn with_widths<S: PageMapped, P: VictimPolicy + 'static>(
    cfg: &SsdConfig,
    flash: &Flash,
) -> Box<dyn Ftl> {
    let l2p = pagemap::entry_bytes(flash.layout.total_pages());
    let p2l = pagemap::entry_bytes(S::mapped_pages(cfg));
    match (l2p, p2l) {
        (3, 3) => S::build::<P, 3, 3>(cfg, flash),
        (4, 3) => S::build::<P, 4, 3>(cfg, flash),
        (4, 4) => S::build::<P, 4, 4>(cfg, flash),
        widths => unreachable!("map entry widths {widths:?}: P2L entries never exceed L2P's"),
    }
}
