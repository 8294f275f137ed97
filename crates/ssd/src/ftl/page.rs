//! Page-mapping FTL: any logical page can live in any physical page.
//!
//! Model: writes go out of place to the open block of the write's stream on the next die of
//! that stream's round-robin die cursor (so a multi-page request stripes over dies, channels
//! first). L2P and P2L maps are flat `u32` arrays; each block has a valid count. Each die has a
//! free-block pool in the shared [`BlockManager`] (oldest-erased first, which spreads wear)
//! and a [`VictimIndex`] of its closed blocks, ordered by the GC policy type `P`. Foreground GC: before a die opens a new block for host data while it has
//! `gc_free_blocks_min` free blocks or fewer, GC reclaims victims on that die (policy chooses,
//! this module applies: copy the victim's valid pages to the GC stream's open block — the
//! shared one, the victim's stream's own GC stream, or back to the victim's own stream, per
//! `gc_stream` — then erase it) until the die has more. The victim comes from any closed block
//! of the die, or (`gc_victim = "stream"`) from the blocks of the stream that needs the free
//! block ([`VictimIndex`]'s groups: one per host stream, its GC stream's blocks in its group). GC
//! starts when the host write arrives and occupies the die, so its time is charged to the
//! die it uses and the host write waits behind it on the die's timeline. With
//! `gc_pool = "device"` (small devices on many dies) the pools, open blocks, cursor and victim
//! index treat the whole device as one die; flash timing still charges each block's own die.
//!
//! Invariants ([`PageFtl::verify`]): `l2p` and `p2l` are inverse on mapped pages; each block's
//! valid count equals its mapped pages; mapped pages are programmed; free blocks are erased;
//! closed blocks are full and indexed with their valid count; free + valid + invalid pages =
//! total pages, each counted from its own source (free: the block manager's pools and open
//! blocks; valid: the L2P map; invalid: programmed pages on flash that P2L does not map).

use super::blocks::{BlockManager, NIL};
use super::fdp::SlotStats;
use super::gc::{VictimIndex, VictimPolicy};
use super::pagemap::{remap_run, PageMap};
use super::scheme::{run_pages_with, Done, Found, Ftl, HostWrite, Placed, RunClock, Untimed};
use crate::config::{GcPool, GcStreamMode, GcVictimScope, SsdConfig};
use crate::device::TimedRun;
use crate::error::{InvariantError, SsdError};
use crate::flash::{DivU32, Flash, Layout, Programmed};
use crate::types::{BlockId, Lpn, Ppn, SimTime, StreamId};

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum BlockState {
    Free,
    Open,
    Closed,
}

impl BlockState {
    fn name(self) -> &'static str {
        match self {
            BlockState::Free => "free",
            BlockState::Open => "open",
            BlockState::Closed => "closed",
        }
    }
}

/// `L` and `R`: bytes per entry of the L2P and P2L maps ([`PageMap`]; 3 or 4, chosen once
/// in `ftl::build`).
pub(crate) struct PageFtl<P, const L: usize = 3, const R: usize = 3> {
    /// The layout the pools, open blocks and GC see: the flash's, or (`gc_pool = "device"`)
    /// the whole device as one die. Pages and blocks keep their flash numbers either way.
    g: Layout,
    logical: u64,
    streams: u16,
    gc_mode: GcStreamMode,
    gc_min: u32,
    /// Victim groups per die: 1 (`gc_victim = "device"`), or one per host stream.
    victim_groups: u32,
    /// Logical to physical and back, 3 or 4 bytes per entry ([`PageMap`]).
    pub(crate) l2p: PageMap<L>,
    pub(crate) p2l: PageMap<R>,
    pub(crate) state: Vec<BlockState>,
    /// Open-block slot that owns each block: a host stream, or `streams + i` for GC stream `i`
    /// (one GC stream, or one per host stream with `gc_stream = "per_stream"`).
    owner: Vec<u16>,
    /// Free pools per die and open blocks per (slot, die).
    pub(crate) blocks: BlockManager,
    /// Per host stream: the die its next page goes to.
    cursor: Vec<u32>,
    pub(crate) victims: VictimIndex<P>,
    /// Reused buffers: page offsets and logical pages of a victim's valid pages.
    moved_offs: Vec<u32>,
    moved_lpns: Vec<u32>,
    /// Division by pages per block and by blocks per die (of `g`) without a divide.
    per_block: DivU32,
    per_die: DivU32,
    /// When set, logical pages GC moved are appended here (DFTL must fix their mappings).
    pub gc_moved: Option<Vec<u32>>,
    /// FDP hook: RUs opened and pages GC copied, per open-block slot (cold paths only).
    slot_stats: SlotStats,
}

impl<P: VictimPolicy, const L: usize, const R: usize> PageFtl<P, L, R> {
    pub fn new(cfg: &SsdConfig, flash: &Flash) -> PageFtl<P, L, R> {
        PageFtl::with_logical_pages(cfg, flash, cfg.logical_pages())
    }

    /// A page-mapping FTL over `logical` pages (DFTL adds its translation pages after the
    /// host's logical space).
    pub fn with_logical_pages(cfg: &SsdConfig, flash: &Flash, logical: u64) -> PageFtl<P, L, R> {
        let g = &match cfg.ftl.gc_pool {
            GcPool::PerDie => flash.layout,
            GcPool::Device => Layout {
                dies: 1,
                blocks_per_die: flash.layout.total_blocks(),
                ..flash.layout
            },
        };
        let blocks = g.total_blocks() as usize;
        let streams = cfg.ftl.streams;
        assert!(
            logical < g.total_pages() && logical < NIL as u64,
            "{logical} logical pages on {} physical pages",
            g.total_pages()
        );
        assert!(
            streams >= 1 && g.dies >= 1,
            "a page FTL needs a stream and a die"
        );
        let victim_groups = match cfg.ftl.gc_victim {
            GcVictimScope::Device => 1,
            GcVictimScope::Stream => streams as u32,
        };
        // A stream's GC blocks are in its group (`victim_group`): a shared GC stream is not.
        assert!(
            victim_groups == 1 || cfg.ftl.gc_stream != GcStreamMode::Separate,
            "victims per stream with one shared GC stream (refused by validate)"
        );
        PageFtl {
            g: *g,
            logical,
            streams,
            gc_mode: cfg.ftl.gc_stream,
            gc_min: cfg.ftl.gc_free_blocks_min,
            victim_groups,
            l2p: PageMap::new(logical as usize, g.total_pages()),
            p2l: PageMap::new(g.total_pages() as usize, logical),
            state: vec![BlockState::Free; blocks],
            owner: vec![0; blocks],
            blocks: BlockManager::per_die(g, cfg.ftl.open_slots() as usize),
            cursor: (0..streams as u32).map(|s| s % g.dies).collect(),
            victims: VictimIndex::new(g, victim_groups),
            moved_offs: Vec::with_capacity(g.ppb as usize),
            moved_lpns: Vec::with_capacity(g.ppb as usize),
            per_block: DivU32::new(g.ppb),
            per_die: DivU32::new(g.blocks_per_die),
            gc_moved: None,
            slot_stats: SlotStats::new(cfg.ftl.open_slots() as usize),
        }
    }

    /// The open block of `slot` on `die`, opening one if needed (with foreground GC first
    /// unless `in_gc`). Returns the block and the time GC finished (or `now`).
    #[inline(always)]
    fn open_block(
        &mut self,
        flash: &mut Flash,
        slot: u16,
        die: u32,
        now: SimTime,
        in_gc: bool,
    ) -> Result<(u32, SimTime), SsdError> {
        let g = self.g;
        let b = self.blocks.open_block(&g, slot, die);
        if b != NIL {
            return Ok((b, now));
        }
        self.open_new_block(flash, slot, die, now, in_gc)
    }

    /// [`PageFtl::open_block`] when `slot` has no open block on `die` (once per block: kept
    /// out of line so the per-page path stays small).
    #[cold]
    #[inline(never)]
    fn open_new_block(
        &mut self,
        flash: &mut Flash,
        slot: u16,
        die: u32,
        now: SimTime,
        in_gc: bool,
    ) -> Result<(u32, SimTime), SsdError> {
        let g = self.g;
        let mut t = now;
        if !in_gc {
            t = self.collect(flash, die, now, self.victim_group(slot))?;
            // GC may have opened this slot's block (gc_stream = victim).
            let b = self.blocks.open_block(&g, slot, die);
            if b != NIL {
                return Ok((b, t));
            }
        }
        let b = self.blocks.alloc(die)?;
        assert_eq!(
            self.state[b as usize],
            BlockState::Free,
            "allocated block {b}"
        );
        assert_eq!(
            flash.write_pointer(BlockId(b)),
            0,
            "allocated block {b} not erased"
        );
        assert_eq!(self.victims.valid(b), 0, "free block {b} holds valid pages");
        self.state[b as usize] = BlockState::Open;
        self.owner[b as usize] = slot;
        self.slot_stats.opened(slot);
        self.blocks.set_open(&g, slot, die, b);
        Ok((b, t))
    }

    /// The victim group of open-block `slot`'s blocks: 0 with one group, else its host
    /// stream (GC slot `streams + s` of `gc_stream = "per_stream"` is stream `s`'s).
    #[inline]
    fn victim_group(&self, slot: u16) -> u16 {
        if self.victim_groups == 1 {
            0
        } else {
            slot % self.streams
        }
    }

    /// Foreground GC on `die` until it has more than `gc_free_blocks_min` free blocks, each
    /// victim chosen for victim `group` (the stream that needs the block).
    fn collect(
        &mut self,
        flash: &mut Flash,
        die: u32,
        now: SimTime,
        group: u16,
    ) -> Result<SimTime, SsdError> {
        let mut t = now;
        // Each round frees one block; bound the rounds so a device with nothing to reclaim
        // reports DeviceFull instead of spinning.
        let mut budget = 2 * self.victims.closed_blocks(die) as u64 + 2;
        while self.blocks.free_blocks(die) <= self.gc_min {
            if budget == 0 {
                return Err(SsdError::DeviceFull { die });
            }
            budget -= 1;
            t = self.reclaim(flash, die, t, group)?;
        }
        assert!(
            self.blocks.free_blocks(die) > self.gc_min,
            "GC on die {die} stopped short"
        );
        Ok(t)
    }

    /// Reclaim one victim on `die` for victim `group`: copy its valid pages, erase it, free it.
    fn reclaim(
        &mut self,
        flash: &mut Flash,
        die: u32,
        now: SimTime,
        group: u16,
    ) -> Result<SimTime, SsdError> {
        let g = self.g;
        let victim = self
            .victims
            .take_victim(&g, die, group)
            .ok_or(SsdError::DeviceFull { die })?;
        assert_eq!(
            self.state[victim as usize],
            BlockState::Closed,
            "victim {victim}"
        );
        assert!(
            flash.is_full(BlockId(victim)),
            "victim {victim} is not full"
        );
        flash.stats.gc_invocations += 1;
        let copied_before = flash.stats.gc_pages_copied;
        let slot = self.gc_slot(victim);
        let mut t = now;
        let ppb = g.ppb as usize;
        let first = victim as usize * ppb;
        // Gather the victim's valid pages (prefetching their L2P entries, which the copy
        // rewrites), then move them in runs that fill destination blocks: one flash call
        // and one tight loop over the maps per run.
        let (mut offs, mut lpns) = (
            std::mem::take(&mut self.moved_offs),
            std::mem::take(&mut self.moved_lpns),
        );
        // Branch-free gather into buffers a block long (sized once): write every page, keep
        // the valid ones. Their offsets only where a copy moves data (tags, payloads).
        let keeps_data = flash.keeps_data();
        lpns.resize(ppb, 0);
        let valid = if keeps_data {
            offs.resize(ppb, 0);
            self.p2l.gather::<true>(first, ppb, &mut offs, &mut lpns)
        } else {
            offs.clear();
            self.p2l.gather::<false>(first, ppb, &mut offs, &mut lpns)
        };
        self.slot_stats
            .copied(self.owner[victim as usize], valid as u32);
        // Per block, valid count vs map: the victim's count is its mapped pages.
        assert_eq!(
            self.victims.valid(victim),
            valid as u32,
            "victim {victim}: valid count vs P2L"
        );
        let lpns_v = &lpns[..valid];
        let offs_v = if keeps_data { &offs[..valid] } else { &[][..] };
        for &lpn in lpns_v {
            self.l2p.prefetch(lpn as usize);
        }
        self.p2l.clear(first..first + ppb);
        let mut i = 0;
        while i < lpns_v.len() {
            let (dst_block, _) = self.open_block(flash, slot, die, t, true)?;
            let wp = flash.write_pointer(BlockId(dst_block));
            assert!(
                dst_block != victim && wp < g.ppb,
                "GC copies into {dst_block}"
            );
            let n = (g.ppb - wp).min((lpns_v.len() - i) as u32) as usize;
            let dst0 = dst_block as usize * ppb + wp as usize;
            let offs_run = if keeps_data {
                &offs_v[i..i + n]
            } else {
                offs_v
            };
            t = flash.copy_run(victim, offs_run, n, dst_block, t);
            let run = &lpns_v[i..i + n];
            remap_run(&mut self.l2p, &mut self.p2l, run, dst0);
            self.victims.add_valid_n(dst_block, n as u32);
            if let Some(m) = self.gc_moved.as_mut() {
                m.extend_from_slice(run);
            }
            self.close_if_full(flash, slot, die, dst_block);
            i += n;
        }
        (self.moved_offs, self.moved_lpns) = (offs, lpns);
        // Every valid page was copied once, and the victim keeps none: free after erase.
        assert_eq!(flash.stats.gc_pages_copied - copied_before, valid as u64);
        self.victims.reset(victim);
        self.state[victim as usize] = BlockState::Free;
        Ok(self.blocks.release(flash, die, victim, t))
    }

    /// The open-block slot GC copies `victim`'s valid pages to: the GC stream's
    /// (`gc_stream = "separate"`) or the victim's own stream's (`"victim"`).
    #[inline]
    fn gc_slot(&self, victim: u32) -> u16 {
        let owner = self.owner[victim as usize];
        let slot = match self.gc_mode {
            GcStreamMode::Separate => self.streams,
            GcStreamMode::Victim => owner,
            // Host stream s's copies go to GC slot streams + s; a GC block's stay in its slot.
            GcStreamMode::PerStream if owner < self.streams => self.streams + owner,
            GcStreamMode::PerStream => owner,
        };
        assert!(
            (slot as usize) * (self.g.dies as usize) < self.blocks.open_blocks().len(),
            "GC slot {slot} of victim {victim} beyond the open slots"
        );
        slot
    }

    /// Map `lpn` to `ppn`, just programmed in `block`: returns the physical page `lpn` had
    /// ([`NIL`]: none), which the caller invalidates. Each map's entry is read and written in
    /// one step (one bound check, one address).
    #[inline(always)]
    fn map(&mut self, lpn: u32, ppn: u32, block: u32) -> u32 {
        let was = self.p2l.replace(ppn as usize, lpn);
        assert_eq!(was, NIL, "physical page {ppn} mapped twice (lpn {lpn})");
        self.victims.add_valid(block);
        self.l2p.replace(lpn as usize, ppn)
    }

    /// Drop the current mapping of `lpn`, if any.
    #[inline(always)]
    fn unmap(&mut self, g: &Layout, lpn: u64) {
        let old = self.l2p.get(lpn as usize);
        if old == NIL {
            return;
        }
        self.l2p.set(lpn as usize, NIL);
        if self.victims.grouped() {
            self.invalidate::<true>(g, old);
        } else {
            self.invalidate::<false>(g, old);
        }
    }

    /// Physical page `old` no longer holds data: clear its P2L entry and count it invalid
    /// (`GROUPED`: [`VictimIndex::grouped`], fixed by the caller).
    #[inline(always)]
    fn invalidate<const GROUPED: bool>(&mut self, g: &Layout, old: u32) {
        // (That P2L maps `old` back to its lpn is `verify_maps`'s: reading it here would turn
        // this store's cache miss into a load the write waits for.)
        self.p2l.set(old as usize, NIL);
        let block = self.per_block.div(old);
        self.victims
            .invalidate_one::<GROUPED>(g, self.per_die.div(block), block);
    }

    #[inline(always)]
    fn close_if_full(&mut self, flash: &Flash, slot: u16, die: u32, block: u32) {
        if flash.is_full(BlockId(block)) {
            self.close(slot, die, block);
        }
    }

    /// Close `slot`'s full open `block` on `die`: into the victim index with its valid pages.
    #[cold]
    #[inline(never)]
    fn close(&mut self, slot: u16, die: u32, block: u32) {
        let g = &self.g;
        self.blocks.set_open(g, slot, die, NIL);
        self.state[block as usize] = BlockState::Closed;
        let valid = self.victims.valid(block);
        assert!(
            valid <= g.ppb,
            "closed block {block} holds {valid} valid pages"
        );
        let group = self.victim_group(slot);
        self.victims.insert(g, die, block, valid, group);
    }

    /// [`Ftl::write`] up to the host page's program, which it leaves untimed (GC before
    /// it is timed): returns the block the page went to, for the caller to time the program
    /// in ([`Flash::time_program`], or a timed run's clock: [`Ftl::write_placed`]).
    /// `GROUPED`: [`VictimIndex::grouped`], which the caller fixes ([`PageFtl::placed`], or
    /// once for a run: [`PageFtl::run`]).
    #[inline(always)]
    fn write_untimed<const GROUPED: bool>(
        &mut self,
        flash: &mut Flash,
        w: HostWrite,
    ) -> Result<Programmed, SsdError> {
        let HostWrite {
            lpn,
            stream,
            data,
            now,
        } = w;
        let g = self.g;
        let s = stream.0 as usize;
        let mut die = self.cursor[s];
        self.cursor[s] = if die + 1 == g.dies { 0 } else { die + 1 };
        // GC time lands on the die's timeline; the program, timed once this returns, queues
        // behind it there.
        // A die whose blocks hold only valid data cannot take the page: try the next die
        // (a workload in step with the striping can fill one die while others have room).
        let mut tries = 0;
        let block = loop {
            match self.open_block(flash, stream.0, die, now, false) {
                Ok((b, _)) => break b,
                Err(SsdError::DeviceFull { .. }) if tries + 1 < g.dies => {
                    tries += 1;
                    die = if die + 1 == g.dies { 0 } else { die + 1 };
                }
                Err(e) => return Err(e),
            }
        };
        let (ppn, programmed) = flash.program_next(block, data);
        // The page is in the block (its offset from the block's first page is below ppb).
        // Debug only: `program_next` computes it from the block and its asserted write
        // pointer, and this runs once per host write.
        let offset = (ppn.0 as u32).wrapping_sub(block * g.ppb);
        debug_assert!(offset < g.ppb, "page {ppn:?} of block {block}");
        // The new page replaces the old one in L2P (no NIL between); the old goes invalid
        // before the block can close (a closed block enters GC's index with its count).
        let old = self.map(lpn.0 as u32, ppn.0 as u32, block);
        if old != NIL {
            self.invalidate::<GROUPED>(&g, old);
        }
        // The block is full when this was its last page (`close_if_full` without reloading
        // the write pointer `program_next` just moved to `offset + 1`).
        debug_assert_eq!(flash.is_full(BlockId(block)), offset + 1 == g.ppb);
        if offset + 1 == g.ppb {
            self.close(stream.0, die, block);
        }
        Ok(programmed)
    }

    /// [`PageFtl::write_untimed`] with the index's group count read for this write.
    #[inline(always)]
    fn placed(&mut self, flash: &mut Flash, w: HostWrite) -> Result<Programmed, SsdError> {
        if self.victims.grouped() {
            self.write_untimed::<true>(flash, w)
        } else {
            self.write_untimed::<false>(flash, w)
        }
    }

    /// A run of host pages through `clock` ([`Ftl::write_run`], [`Ftl::write_run_timed`]),
    /// with the victim index's group count read once for the run: the page loop is compiled
    /// for one group and for several, and the one-group loop (the default) computes no bin.
    #[inline(always)]
    fn run<C: RunClock>(
        &mut self,
        flash: &mut Flash,
        lpns: &[u64],
        stream: StreamId,
        first_tag: u64,
        clock: &mut C,
    ) -> Result<usize, (usize, SsdError)> {
        if self.victims.grouped() {
            run_pages_with(self, flash, lpns, stream, first_tag, clock, |f, fl, w| {
                f.write_untimed::<true>(fl, w).map(Placed::Block)
            })
        } else {
            run_pages_with(self, flash, lpns, stream, first_tag, clock, |f, fl, w| {
                f.write_untimed::<false>(fl, w).map(Placed::Block)
            })
        }
    }

    /// L2P and P2L are inverse, mapped pages are programmed, and each block's valid count is
    /// its mapped pages. Returns the mapped pages per block.
    fn verify_maps(&self, flash: &Flash) -> Result<Vec<u32>, InvariantError> {
        let g = &self.g;
        let mut valid = vec![0u32; self.state.len()];
        for (ppn, lpn) in self.p2l.iter().enumerate() {
            if lpn == NIL {
                continue;
            }
            let l2p = if (lpn as usize) < self.l2p.len() {
                self.l2p.get(lpn as usize)
            } else {
                NIL
            };
            if l2p != ppn as u32 {
                return Err(InvariantError::MapsDisagree {
                    ppn: ppn as u64,
                    lpn: lpn as u64,
                    l2p: l2p as u64,
                });
            }
            let p = Ppn(ppn as u64);
            if flash.page_in_block(p) >= flash.write_pointer(flash.block_of(p))
                || !flash.programmed(p)
            {
                return Err(InvariantError::MappedToDeadPage {
                    lpn: lpn as u64,
                    ppn: ppn as u64,
                });
            }
            valid[ppn / g.ppb as usize] += 1;
        }
        self.victims.check(g, |b| valid[b as usize])?;
        Ok(valid)
    }

    /// Block states agree with the pools, the open slots, the write pointers and the index.
    fn verify_blocks(&self, flash: &Flash) -> Result<(), InvariantError> {
        let g = &self.g;
        let pooled = self.blocks.verify(flash)?;
        for (i, &b) in self.blocks.open_blocks().iter().enumerate() {
            if b != NIL
                && (self.state[b as usize] != BlockState::Open || g.die_of(b) != i as u32 % g.dies)
            {
                return Err(InvariantError::BlockRoles {
                    block: b,
                    roles: "in an open slot of another die, or not in state open",
                });
            }
        }
        for b in 0..self.state.len() as u32 {
            let wp = flash.write_pointer(BlockId(b));
            let state = self.state[b as usize];
            let ok = match state {
                BlockState::Free => pooled[b as usize],
                BlockState::Open => {
                    !pooled[b as usize] && wp < g.ppb && self.blocks.open_blocks().contains(&b)
                }
                BlockState::Closed => {
                    !pooled[b as usize] && wp == g.ppb && self.victims.contains(b)
                }
            };
            if !ok {
                return Err(InvariantError::BlockState {
                    block: b,
                    state: state.name(),
                    write_pointer: wp,
                });
            }
        }
        Ok(())
    }

    /// free + valid + invalid = total, each counted from its own source: free pages from the
    /// block manager (pooled blocks whole, open blocks above their write pointer), valid pages
    /// from L2P, invalid pages from flash (programmed pages P2L does not map).
    fn verify_accounting(&self, flash: &Flash) -> Result<(), InvariantError> {
        let g = &self.g;
        let pooled = self.blocks.pooled().count() as u64 * g.ppb as u64;
        let open: u64 = self
            .blocks
            .open_blocks()
            .iter()
            .filter(|&&b| b != NIL)
            .map(|&b| (g.ppb - flash.write_pointer(BlockId(b))) as u64)
            .sum();
        let free = pooled + open;
        let valid = self.l2p.iter().filter(|&p| p != NIL).count() as u64;
        let invalid = (0..g.total_pages())
            .filter(|&p| flash.programmed(Ppn(p)) && self.p2l.get(p as usize) == NIL)
            .count() as u64;
        let total = g.total_pages();
        if free + valid + invalid != total {
            return Err(InvariantError::PageAccounting {
                free,
                valid,
                invalid,
                total,
            });
        }
        Ok(())
    }
}

impl<P: VictimPolicy, const L: usize, const R: usize> Ftl for PageFtl<P, L, R> {
    fn logical_pages(&self) -> u64 {
        self.logical
    }

    #[inline(always)]
    fn write(&mut self, flash: &mut Flash, w: HostWrite) -> Done {
        let now = w.now;
        let programmed = self.placed(flash, w)?;
        Ok(flash.time_program(programmed.block(), now))
    }

    #[inline(always)]
    fn write_placed(&mut self, flash: &mut Flash, w: HostWrite) -> Result<Placed, SsdError> {
        self.placed(flash, w).map(Placed::Block)
    }

    fn write_run(
        &mut self,
        flash: &mut Flash,
        lpns: &[u64],
        stream: StreamId,
        first_tag: u64,
        now: SimTime,
    ) -> Result<usize, (usize, SsdError)> {
        self.run(flash, lpns, stream, first_tag, &mut Untimed(now))
    }

    fn write_run_timed(
        &mut self,
        flash: &mut Flash,
        lpns: &[u64],
        stream: StreamId,
        first_tag: u64,
        clock: &mut TimedRun<'_>,
    ) -> Result<usize, (usize, SsdError)> {
        // One loop per clock: the configuration's branches stay out of the page loop.
        match clock {
            TimedRun::Closed(c) => self.run(flash, lpns, stream, first_tag, c),
            TimedRun::Queued(c) => self.run(flash, lpns, stream, first_tag, c),
        }
    }

    fn read(&mut self, flash: &mut Flash, lpn: Lpn, now: SimTime) -> Found {
        assert!(
            lpn.0 < self.logical,
            "read of lpn {} beyond {}",
            lpn.0,
            self.logical
        );
        let p = self.l2p.get(lpn.0 as usize);
        if p == NIL {
            return Ok((now, None));
        }
        Ok((flash.read(Ppn(p as u64), now), Some(Ppn(p as u64))))
    }

    fn trim(&mut self, _flash: &mut Flash, lpn: Lpn, now: SimTime) -> Done {
        assert!(
            lpn.0 < self.logical,
            "trim of lpn {} beyond {}",
            lpn.0,
            self.logical
        );
        let g = self.g;
        self.unmap(&g, lpn.0);
        Ok(now)
    }

    /// L2P + P2L entries (4 bytes each: the tables as a device's FTL would hold them, the
    /// figure P4's comparison counts) and per-block valid count, state and owner. The
    /// simulator itself packs entries to 3 bytes below 2^24 pages ([`PageMap`]); its own
    /// memory is `SsdConfig::memory_bytes_estimate`'s.
    fn mapping_bytes(&self, _flash: &Flash) -> u64 {
        // Per block: victim-index record (prev, next, valid, flag: 16 B), state (1 B), owner (2 B).
        let blocks = self.state.len() as u64;
        (self.l2p.len() as u64 + self.p2l.len() as u64) * 4 + blocks * (16 + 1 + 2)
    }

    #[inline]
    fn write_prefetch_map(&self) -> Option<(&[u8], usize)> {
        Some(self.l2p.bytes())
    }

    #[inline]
    fn prefetch_overwrite(&self, lpn: Lpn) {
        // In range (the device checks): the L2P read is a plain load, the P2L one a hint.
        let old = self.l2p.get(lpn.0 as usize);
        if old != NIL {
            self.p2l.prefetch(old as usize);
        }
    }

    fn handle_stats(&self, flash: &Flash) -> Vec<super::fdp::HandleStats> {
        let open = self.blocks.open_blocks();
        super::fdp::handle_stats(&self.slot_stats, open, flash, self.streams, self.gc_mode)
    }

    fn verify(&self, flash: &Flash) -> Result<(), InvariantError> {
        self.verify_maps(flash)?;
        self.verify_blocks(flash)?;
        self.verify_accounting(flash)
    }
}
