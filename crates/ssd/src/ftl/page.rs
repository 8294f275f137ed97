//! Page-mapping FTL: any logical page can live in any physical page.
//!
//! Model: writes go out of place to the open block of the write's stream on the next die of
//! that stream's round-robin die cursor (so a multi-page request stripes over dies, channels
//! first). L2P and P2L maps are flat `u32` arrays; each block has a valid count. Each die has a
//! free-block queue (oldest-erased first, which spreads wear) and a [`VictimIndex`] of its
//! closed blocks. Foreground GC: before a die opens a new block for host data while it has
//! `gc_free_blocks_min` free blocks or fewer, GC reclaims victims on that die (policy chooses,
//! this module applies: copy the victim's valid pages to the GC stream's open block — or back
//! to the victim's own stream, per `gc_stream` — then erase it) until the die has more. GC
//! starts when the host write arrives and occupies the die, so its time is charged to the
//! die it uses and the host write waits behind it on the die's timeline.
//!
//! Invariants ([`PageFtl::verify`]): `l2p` and `p2l` are inverse on mapped pages; each block's
//! valid count equals its mapped pages; mapped pages are programmed; free blocks are erased;
//! closed blocks are full and indexed with their valid count; free + valid + invalid pages =
//! total pages.

use super::gc::VictimIndex;
use super::Ftl;
use crate::config::{FtlKind, GcStreamMode, SsdConfig};
use crate::error::{InvariantError, SsdError};
use crate::flash::{Flash, TAG_EMPTY};
use crate::types::{BlockId, DieId, Lpn, PageWrite, Ppn, SimTime, StreamId};
use std::collections::VecDeque;

const NIL: u32 = u32::MAX;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum BlockState {
    Free,
    Open,
    Closed,
}

pub struct PageFtl {
    logical: u64,
    ppb: u32,
    dies: u32,
    blocks_per_die: u32,
    streams: u16,
    gc_mode: GcStreamMode,
    gc_min: u32,
    check: bool,
    l2p: Vec<u32>,
    p2l: Vec<u32>,
    state: Vec<BlockState>,
    /// Open-block slot (stream, or `streams` for the GC stream) that owns each block.
    owner: Vec<u16>,
    free: Vec<VecDeque<u32>>,
    /// `open[slot * dies + die]`: the open block of a slot on a die, or NIL.
    open: Vec<u32>,
    /// Per host stream: the die its next page goes to.
    cursor: Vec<u32>,
    victims: VictimIndex,
    /// Reused buffer of (page offset, lpn) of a victim's valid pages.
    scratch: Vec<(u32, u32)>,
    /// When set, logical pages GC moved are appended here (DFTL must fix their mappings).
    pub gc_moved: Option<Vec<u32>>,
}

impl PageFtl {
    pub fn new(cfg: &SsdConfig, flash: &Flash) -> PageFtl {
        PageFtl::with_logical_pages(cfg, flash, cfg.logical_pages())
    }

    /// A page-mapping FTL over `logical` pages (DFTL adds its translation pages after the
    /// host's logical space).
    pub fn with_logical_pages(cfg: &SsdConfig, flash: &Flash, logical: u64) -> PageFtl {
        let dies = flash.dies;
        let blocks = flash.total_blocks();
        let streams = cfg.ftl.streams;
        let free = (0..dies)
            .map(|d| {
                (0..flash.blocks_per_die)
                    .map(|i| d * flash.blocks_per_die + i)
                    .collect()
            })
            .collect();
        PageFtl {
            logical,
            ppb: flash.pages_per_block,
            dies,
            blocks_per_die: flash.blocks_per_die,
            streams,
            gc_mode: cfg.ftl.gc_stream,
            gc_min: cfg.ftl.gc_free_blocks_min,
            check: cfg.ftl.check_invariants,
            l2p: crate::hugevec::filled(logical as usize, NIL),
            p2l: crate::hugevec::filled(flash.total_pages() as usize, NIL),
            state: vec![BlockState::Free; blocks as usize],
            owner: vec![0; blocks as usize],
            free,
            open: vec![NIL; (streams as usize + 1) * dies as usize],
            cursor: (0..streams as u32).map(|s| s % dies).collect(),
            victims: VictimIndex::new(cfg.ftl.gc_policy, dies, blocks, flash.pages_per_block),
            scratch: Vec::with_capacity(flash.pages_per_block as usize),
            gc_moved: None,
        }
    }

    #[inline]
    fn die_of(&self, block: u32) -> u32 {
        block / self.blocks_per_die
    }

    /// The open block of `slot` on `die`, opening one if needed (with foreground GC first
    /// unless `in_gc`). Returns the block and the time GC finished (or `now`).
    fn open_block(
        &mut self,
        flash: &mut Flash,
        slot: u16,
        die: u32,
        now: SimTime,
        in_gc: bool,
    ) -> Result<(u32, SimTime), SsdError> {
        let i = slot as usize * self.dies as usize + die as usize;
        let b = self.open[i];
        if b != NIL {
            return Ok((b, now));
        }
        let mut t = now;
        if !in_gc {
            t = self.collect(flash, die, now)?;
            // GC may have opened this slot's block (gc_stream = victim).
            if self.open[i] != NIL {
                return Ok((self.open[i], t));
            }
        }
        let b = self.free[die as usize]
            .pop_front()
            .ok_or(SsdError::DeviceFull { die })?;
        self.state[b as usize] = BlockState::Open;
        self.owner[b as usize] = slot;
        self.open[i] = b;
        Ok((b, t))
    }

    /// Foreground GC on `die` until it has more than `gc_free_blocks_min` free blocks.
    fn collect(&mut self, flash: &mut Flash, die: u32, now: SimTime) -> Result<SimTime, SsdError> {
        let mut t = now;
        // Each round frees one block; bound the rounds so a device with nothing to reclaim
        // reports DeviceFull instead of spinning.
        let mut budget = 2 * self.victims.closed_blocks(die) as u64 + 2;
        while self.free[die as usize].len() as u32 <= self.gc_min {
            if budget == 0 {
                return Err(SsdError::DeviceFull { die });
            }
            budget -= 1;
            t = self.reclaim(flash, die, t)?;
        }
        Ok(t)
    }

    /// Reclaim one victim on `die`: copy its valid pages, erase it, free it.
    fn reclaim(&mut self, flash: &mut Flash, die: u32, now: SimTime) -> Result<SimTime, SsdError> {
        let victim = self
            .victims
            .take_victim(die)
            .ok_or(SsdError::DeviceFull { die })?;
        flash.stats.gc_invocations += 1;
        let slot = match self.gc_mode {
            GcStreamMode::Separate => self.streams,
            GcStreamMode::Victim => self.owner[victim as usize],
        };
        let mut t = now;
        let ppb = self.ppb as usize;
        let first = victim as usize * ppb;
        // Gather the victim's valid pages, then move them in runs that fill destination
        // blocks: tight loops over contiguous pages (the maps' random stores overlap).
        let mut moved = std::mem::take(&mut self.scratch);
        moved.clear();
        for (off, &lpn) in self.p2l[first..first + ppb].iter().enumerate() {
            if lpn != NIL {
                moved.push((off as u32, lpn));
                prefetch(&self.l2p, lpn as usize);
            }
        }
        self.p2l[first..first + ppb].fill(NIL);
        let mut i = 0;
        while i < moved.len() {
            let (dst_block, _) = self.open_block(flash, slot, die, t, true)?;
            let wp = flash.write_pointer(BlockId(dst_block));
            let n = (self.ppb - wp).min((moved.len() - i) as u32) as usize;
            let dst0 = dst_block as usize * ppb + wp as usize;
            for (j, &(off, lpn)) in moved[i..i + n].iter().enumerate() {
                t = flash.copy(
                    Ppn((first + off as usize) as u64),
                    Ppn((dst0 + j) as u64),
                    t,
                );
                self.l2p[lpn as usize] = (dst0 + j) as u32;
                self.p2l[dst0 + j] = lpn;
            }
            self.victims.add_valid_n(dst_block, n as u32);
            if let Some(m) = self.gc_moved.as_mut() {
                m.extend(moved[i..i + n].iter().map(|&(_, lpn)| lpn));
            }
            self.close_if_full(flash, slot, die, dst_block);
            i += n;
        }
        self.scratch = moved;
        self.victims.reset(victim);
        t = flash.erase(BlockId(victim), t);
        self.state[victim as usize] = BlockState::Free;
        self.free[die as usize].push_back(victim);
        if self.check {
            if let Err(e) = self.verify(flash) {
                panic!("after GC of block {victim} on die {die}: {e}");
            }
        }
        Ok(t)
    }

    #[inline]
    fn map(&mut self, lpn: u32, ppn: u32, block: u32) {
        self.l2p[lpn as usize] = ppn;
        self.p2l[ppn as usize] = lpn;
        self.victims.add_valid(block);
    }

    /// Drop the current mapping of `lpn`, if any.
    #[inline]
    fn unmap(&mut self, lpn: u64) {
        let old = self.l2p[lpn as usize];
        if old == NIL {
            return;
        }
        self.l2p[lpn as usize] = NIL;
        self.p2l[old as usize] = NIL;
        let block = old / self.ppb;
        self.victims.invalidate_one(self.die_of(block), block);
    }

    #[inline]
    fn close_if_full(&mut self, flash: &Flash, slot: u16, die: u32, block: u32) {
        if flash.is_full(BlockId(block)) {
            self.open[slot as usize * self.dies as usize + die as usize] = NIL;
            self.state[block as usize] = BlockState::Closed;
            let valid = self.victims.valid(block);
            self.victims.insert(die, block, valid);
        }
    }

    fn verify_maps(&self, flash: &Flash) -> Result<u64, InvariantError> {
        let bad = |m: String| Err(InvariantError(m));
        let mut valid = vec![0u32; self.state.len()];
        let mut mapped = 0u64;
        for (ppn, &lpn) in self.p2l.iter().enumerate() {
            if lpn == NIL {
                continue;
            }
            mapped += 1;
            if self.l2p.get(lpn as usize) != Some(&(ppn as u32)) {
                return bad(format!("p2l[{ppn}] = {lpn} but l2p[{lpn}] is not {ppn}"));
            }
            let p = Ppn(ppn as u64);
            if flash.page_in_block(p) >= flash.write_pointer(flash.block_of(p))
                || flash.tag(p) == TAG_EMPTY
            {
                return bad(format!("lpn {lpn} mapped to unprogrammed page {ppn}"));
            }
            valid[ppn / self.ppb as usize] += 1;
        }
        let l2p_mapped = self.l2p.iter().filter(|&&p| p != NIL).count() as u64;
        if l2p_mapped != mapped {
            return bad(format!(
                "{l2p_mapped} logical pages mapped but {mapped} physical pages"
            ));
        }
        if let Some(b) = (0..valid.len()).find(|&b| valid[b] != self.victims.valid(b as u32)) {
            return bad(format!(
                "block {b}: valid count {} but {} pages mapped",
                self.victims.valid(b as u32),
                valid[b]
            ));
        }
        Ok(mapped)
    }

    fn verify_blocks(&self, flash: &Flash) -> Result<(), InvariantError> {
        let bad = |m: String| Err(InvariantError(m));
        let free_listed: usize = self.free.iter().map(|f| f.len()).sum();
        let mut free_blocks = 0;
        for b in 0..self.state.len() as u32 {
            let wp = flash.write_pointer(BlockId(b));
            let ok = match self.state[b as usize] {
                BlockState::Free => {
                    free_blocks += 1;
                    wp == 0 && self.free[self.die_of(b) as usize].contains(&b)
                }
                BlockState::Open => {
                    wp < self.ppb
                        && self.open.contains(&b)
                        && flash.die_of(BlockId(b)) == DieId(self.die_of(b))
                }
                BlockState::Closed => wp == self.ppb && self.victims.contains(b),
            };
            if !ok {
                return bad(format!(
                    "block {b} in state {:?} has write pointer {wp}",
                    self.state[b as usize]
                ));
            }
        }
        if free_blocks != free_listed {
            return bad(format!(
                "{free_blocks} free blocks but {free_listed} listed"
            ));
        }
        self.victims
            .check(self.dies, |b| self.victims.valid(b))
            .map_err(InvariantError)
    }
}

/// Ask the CPU to start loading `v[i]`'s cache line (GC updates the L2P entries of all of a
/// victim's pages; issuing their misses together overlaps them).
#[inline]
fn prefetch(v: &[u32], i: usize) {
    #[cfg(target_arch = "x86_64")]
    // SAFETY: `i` is in bounds (checked below in debug builds); prefetching only hints the
    // cache and never faults or changes memory.
    unsafe {
        debug_assert!(i < v.len());
        std::arch::x86_64::_mm_prefetch(
            v.as_ptr().add(i) as *const i8,
            std::arch::x86_64::_MM_HINT_T0,
        );
    }
    #[cfg(not(target_arch = "x86_64"))]
    let _ = (v, i);
}

impl Ftl for PageFtl {
    fn kind(&self) -> FtlKind {
        FtlKind::Page
    }

    fn logical_pages(&self) -> u64 {
        self.logical
    }

    fn write(
        &mut self,
        flash: &mut Flash,
        lpn: Lpn,
        stream: StreamId,
        data: PageWrite,
        now: SimTime,
    ) -> Result<SimTime, SsdError> {
        let s = stream.0 as usize;
        let mut die = self.cursor[s];
        self.cursor[s] = if die + 1 == self.dies { 0 } else { die + 1 };
        // GC time lands on the die's timeline; the program below queues behind it there.
        // A die whose blocks hold only valid data cannot take the page: try the next die
        // (a workload in step with the striping can fill one die while others have room).
        let mut tries = 0;
        let block = loop {
            match self.open_block(flash, stream.0, die, now, false) {
                Ok((b, _)) => break b,
                Err(SsdError::DeviceFull { .. }) if tries + 1 < self.dies => {
                    tries += 1;
                    die = if die + 1 == self.dies { 0 } else { die + 1 };
                }
                Err(e) => return Err(e),
            }
        };
        self.unmap(lpn.0);
        let ppn = flash.ppn(BlockId(block), flash.write_pointer(BlockId(block)));
        let done = flash.program(ppn, data, now);
        self.map(lpn.0 as u32, ppn.0 as u32, block);
        self.close_if_full(flash, stream.0, die, block);
        Ok(done)
    }

    fn read(
        &mut self,
        flash: &mut Flash,
        lpn: Lpn,
        now: SimTime,
    ) -> Result<(SimTime, Option<Ppn>), SsdError> {
        let p = self.l2p[lpn.0 as usize];
        if p == NIL {
            return Ok((now, None));
        }
        Ok((flash.read(Ppn(p as u64), now), Some(Ppn(p as u64))))
    }

    fn trim(&mut self, _flash: &mut Flash, lpn: Lpn, now: SimTime) -> Result<SimTime, SsdError> {
        self.unmap(lpn.0);
        Ok(now)
    }

    /// L2P + P2L entries (4 bytes each) and per-block valid count, state and owner.
    fn mapping_bytes(&self) -> u64 {
        // Per block: victim-index record (prev, next, valid, flag: 16 B), state (1 B), owner (2 B).
        let blocks = self.state.len() as u64;
        (self.l2p.len() as u64 + self.p2l.len() as u64) * 4 + blocks * (16 + 1 + 2)
    }

    fn verify(&self, flash: &Flash) -> Result<(), InvariantError> {
        let mapped = self.verify_maps(flash)?;
        self.verify_blocks(flash)?;
        let total = flash.total_pages();
        let written: u64 = (0..flash.total_blocks())
            .map(|b| flash.write_pointer(BlockId(b)) as u64)
            .sum();
        let (free, valid, invalid) = (total - written, mapped, written - mapped);
        if free + valid + invalid != total || written < mapped {
            return Err(InvariantError(format!(
                "free {free} + valid {valid} + invalid {invalid} != total {total}"
            )));
        }
        Ok(())
    }
}
