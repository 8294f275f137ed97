//! The skeleton every block-mapped scheme (block, BAST, IOA, FAST) runs in: the free-block pool,
//! the live-page bits, and the read / trim / verify steps built on a scheme's
//! `lookup(lpn) -> Option<physical page>`. A scheme ([`BlockScheme`]) decides only where a
//! write goes and how logs merge; [`BlockMapped`] is the one `Ftl` implementation for all.
//!
//! Invariants ([`BlockMapped::verify`]): every block has exactly one role (free, or one the
//! scheme names: data, log, ...); free blocks are erased; every logical page's lookup is a
//! live programmed page, and no live page is left over (none mapped twice, none leaked).

use super::blocks::{BlockManager, NIL};
use super::scheme::{Done, Found, Ftl, HostWrite};
use crate::config::SsdConfig;
use crate::error::{InvariantError, SsdError};
use crate::flash::{Flash, Layout};
use crate::live::LivePages;
use crate::types::{Lpn, Ppn, SimTime};

/// What the skeleton owns and lends to its scheme: logical size, free pool(s), live bits.
pub(crate) struct MapCore {
    pub logical: u64,
    pub blocks: BlockManager,
    pub live: LivePages,
    /// One free pool per die (a scheme striped over the dies) instead of one for the device.
    pub per_die: bool,
}

impl MapCore {
    /// A free block (of the device's one pool).
    #[inline]
    pub fn alloc(&mut self) -> Result<u32, SsdError> {
        assert!(!self.per_die, "a striped scheme allocates on a die");
        self.blocks.alloc(0)
    }

    /// A free block on `die` (per-die pools), or of the device's one pool.
    #[inline]
    pub fn alloc_on(&mut self, g: &Layout, die: u32) -> Result<u32, SsdError> {
        if !self.per_die {
            return self.blocks.alloc(0);
        }
        let b = self.blocks.alloc(die)?;
        assert_eq!(g.die_of(b), die, "block {b} from die {die}'s pool");
        Ok(b)
    }

    /// Mark every page of `block` dead, erase it and return it to the pool.
    pub fn release(&mut self, flash: &mut Flash, block: u32, now: SimTime) -> SimTime {
        let g = flash.layout;
        assert!(block < g.total_blocks(), "release of block {block}");
        for p in g.page(block, 0)..g.page(block + 1, 0) {
            self.live.set(p, false);
        }
        let pool = if self.per_die { g.die_of(block) } else { 0 };
        self.blocks.release(flash, pool, block, now)
    }

    /// Whether `block` holds no live page (checked on a merged or reclaimed block before it is
    /// released: collection leaves nothing live behind).
    pub fn all_dead(&self, g: &Layout, block: u32) -> bool {
        assert!(block < g.total_blocks(), "block {block}");
        (g.page(block, 0)..g.page(block + 1, 0)).all(|p| !self.live.get(p))
    }

    /// Copy live page `src` to free page `dst` (which may skip free pages below it); `dst`
    /// becomes the live copy.
    pub fn move_page(&mut self, flash: &mut Flash, src: u64, dst: u64, now: SimTime) -> SimTime {
        assert!(self.live.get(src), "moving dead page {src}");
        // A physical page holds at most one logical page's live copy.
        assert!(!self.live.get(dst), "page {dst} made live twice");
        let t = flash.copy_to(Ppn(src), Ppn(dst), now);
        self.live.set(src, false);
        self.live.set(dst, true);
        t
    }
}

/// A block-mapped scheme: where writes go and how it merges; the rest is [`BlockMapped`]'s.
pub(crate) trait BlockScheme: Send {
    /// The live physical page of `lpn`, if any.
    fn lookup(&self, core: &MapCore, g: &Layout, lpn: u64) -> Option<u64>;
    /// Write one logical page (merging first if needed). Returns the completion time.
    fn write(&mut self, core: &mut MapCore, flash: &mut Flash, w: HostWrite) -> Done;
    /// Every block the scheme holds, with its role ("data", "log", ...).
    fn held_blocks(&self) -> Vec<(u32, &'static str)>;
    /// Checks of the scheme's own structures (beyond roles and lookups).
    fn verify_scheme(&self) -> Result<(), InvariantError> {
        Ok(())
    }
    /// Bytes of RAM the scheme's maps take.
    fn mapping_bytes(&self, g: &Layout) -> u64;
}

/// The data blocks of a block map (`lbn -> block`, NIL: none), with their role.
pub(crate) fn data_blocks(map: &[u32]) -> impl Iterator<Item = (u32, &'static str)> + '_ {
    map.iter().filter(|&&b| b != NIL).map(|&b| (b, "data"))
}

pub(crate) struct BlockMapped<S> {
    pub(crate) core: MapCore,
    pub(crate) scheme: S,
}

impl<S: BlockScheme> BlockMapped<S> {
    /// `scheme` over one free pool for the device.
    pub fn new(cfg: &SsdConfig, flash: &Flash, scheme: S) -> BlockMapped<S> {
        Self::with_pools(cfg, flash, scheme, false)
    }

    /// `scheme` over one free pool per die (`per_die`) or one for the device.
    pub fn with_pools(cfg: &SsdConfig, flash: &Flash, scheme: S, per_die: bool) -> BlockMapped<S> {
        assert!(
            cfg.logical_pages() < flash.total_pages(),
            "logical space beyond the physical pages"
        );
        let blocks = match per_die {
            true => BlockManager::per_die(&flash.layout, 1),
            false => BlockManager::one_pool(&flash.layout),
        };
        BlockMapped {
            core: MapCore {
                logical: cfg.logical_pages(),
                blocks,
                live: LivePages::new(flash.total_pages()),
                per_die,
            },
            scheme,
        }
    }

    fn verify_roles(&self, flash: &Flash) -> Result<(), InvariantError> {
        let mut role: Vec<Option<&'static str>> = self
            .core
            .blocks
            .verify(flash)?
            .into_iter()
            .map(|pooled| pooled.then_some("free"))
            .collect();
        for (b, what) in self.scheme.held_blocks() {
            if role[b as usize].replace(what).is_some() {
                return Err(InvariantError::BlockRoles {
                    block: b,
                    roles: "two roles",
                });
            }
        }
        match role.iter().position(Option::is_none) {
            Some(b) => Err(InvariantError::BlockRoles {
                block: b as u32,
                roles: "no role",
            }),
            None => Ok(()),
        }
    }

    /// Every logical page's lookup result is a programmed, live page, and no live page is
    /// left over (none mapped twice, none leaked).
    fn verify_lookups(&self, flash: &Flash) -> Result<(), InvariantError> {
        let g = &flash.layout;
        let mut found = 0u64;
        for lpn in 0..self.core.logical {
            if let Some(p) = self.scheme.lookup(&self.core, g, lpn) {
                found += 1;
                if !flash.programmed(Ppn(p)) || !self.core.live.get(p) {
                    return Err(InvariantError::MappedToDeadPage { lpn, ppn: p });
                }
            }
        }
        let live = self.core.live.count();
        if live != found {
            return Err(InvariantError::Count {
                what: "live pages (one per mapped logical page)",
                expected: found,
                found: live,
            });
        }
        Ok(())
    }
}

impl<S: BlockScheme> Ftl for BlockMapped<S> {
    fn logical_pages(&self) -> u64 {
        self.core.logical
    }

    fn write(&mut self, flash: &mut Flash, w: HostWrite) -> Done {
        assert!(w.lpn.0 < self.core.logical, "write of lpn {}", w.lpn.0);
        self.scheme.write(&mut self.core, flash, w)
    }

    fn read(&mut self, flash: &mut Flash, lpn: Lpn, now: SimTime) -> Found {
        assert!(lpn.0 < self.core.logical, "read of lpn {}", lpn.0);
        let g = flash.layout;
        Ok(match self.scheme.lookup(&self.core, &g, lpn.0) {
            Some(p) => (flash.read(Ppn(p), now), Some(Ppn(p))),
            None => (now, None),
        })
    }

    fn trim(&mut self, flash: &mut Flash, lpn: Lpn, now: SimTime) -> Done {
        assert!(lpn.0 < self.core.logical, "trim of lpn {}", lpn.0);
        if let Some(p) = self.scheme.lookup(&self.core, &flash.layout, lpn.0) {
            self.core.live.set(p, false);
        }
        Ok(now)
    }

    fn mapping_bytes(&self, flash: &Flash) -> u64 {
        self.scheme.mapping_bytes(&flash.layout)
    }

    fn verify(&self, flash: &Flash) -> Result<(), InvariantError> {
        self.verify_roles(flash)?;
        self.scheme.verify_scheme()?;
        self.verify_lookups(flash)
    }
}
