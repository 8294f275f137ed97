//! FAST (Lee et al., TECS 2007): block-mapped data blocks plus a shared log area of one
//! sequential log block (SW) and fully associative random log blocks (RW).
//!
//! Model: a write at offset 0 starts the SW log for its logical block (merging the previous
//! SW log); a write continuing the SW log's sequence (same lbn, next offset) is appended to
//! it; any other write is appended to the current RW log block, which any logical page may
//! use (a page map `lpn -> page` covers the RW area). SW merge: *switch* if the SW log is full
//! (it becomes the data block), else *partial* (the rest copied from the data block). When the
//! RW area is full, the oldest RW block is reclaimed: every logical block with a live page in
//! it is *fully merged* (its newest pages gathered from RW logs, the SW log and the data block
//! into a new block in offset order), then the RW block is erased.
//! `log_blocks` counts the SW block plus the RW blocks. Live bits per physical page mark
//! current data. Invariants ([`FastFtl::verify`]): every block has one role; each logical page
//! has at most one live page, the one lookup finds; live pages are programmed.

use super::live::LivePages;
use super::Ftl;
use crate::config::{FtlKind, SsdConfig};
use crate::error::{InvariantError, SsdError};
use crate::flash::Flash;
use crate::types::{BlockId, Lpn, PageWrite, Ppn, SimTime, StreamId};
use std::collections::{BTreeSet, HashMap, VecDeque};

const NIL: u32 = u32::MAX;

#[derive(Clone, Copy, Debug)]
struct Sw {
    lbn: u32,
    pbn: u32,
    next: u32,
}

pub struct FastFtl {
    ppb: u32,
    logical: u64,
    check: bool,
    rw_max: usize,
    data: Vec<u32>,
    sw: Option<Sw>,
    /// RW blocks, oldest first; the last one is being filled.
    rw: VecDeque<u32>,
    rw_next: u32,
    /// lpn -> its newest RW page (lookups only; may point at a page no longer live).
    rw_map: HashMap<u64, u64>,
    /// RW page -> lpn written there (for reclaiming an RW block).
    rw_owner: HashMap<u64, u64>,
    free: VecDeque<u32>,
    live: LivePages,
}

impl FastFtl {
    pub fn new(cfg: &SsdConfig, flash: &Flash) -> FastFtl {
        let logical = cfg.logical_pages();
        let ppb = flash.pages_per_block;
        FastFtl {
            ppb,
            logical,
            check: cfg.ftl.check_invariants,
            rw_max: cfg.ftl.log_blocks.saturating_sub(1).max(1) as usize,
            data: vec![NIL; (logical / ppb as u64) as usize],
            sw: None,
            rw: VecDeque::new(),
            rw_next: ppb,
            rw_map: HashMap::new(),
            rw_owner: HashMap::new(),
            free: (0..flash.total_blocks()).collect(),
            live: LivePages::new(flash.total_pages()),
        }
    }

    fn page(&self, block: u32, off: u32) -> u64 {
        block as u64 * self.ppb as u64 + off as u64
    }

    fn lookup(&self, lpn: u64) -> Option<u64> {
        let (lbn, off) = (
            (lpn / self.ppb as u64) as u32,
            (lpn % self.ppb as u64) as u32,
        );
        let candidates = [
            self.rw_map.get(&lpn).copied(),
            self.sw
                .filter(|s| s.lbn == lbn && off < s.next)
                .map(|s| self.page(s.pbn, off)),
            (self.data[lbn as usize] != NIL).then(|| self.page(self.data[lbn as usize], off)),
        ];
        candidates.into_iter().flatten().find(|&p| self.live.get(p))
    }

    fn alloc(&mut self) -> Result<u32, SsdError> {
        self.free.pop_front().ok_or(SsdError::DeviceFull { die: 0 })
    }

    fn erase(&mut self, flash: &mut Flash, block: u32, now: SimTime) -> SimTime {
        let first = self.page(block, 0);
        for p in first..first + self.ppb as u64 {
            self.live.set(p, false);
        }
        self.free.push_back(block);
        flash.erase(BlockId(block), now)
    }

    /// The SW log becomes its block's data block: switch if full, else partial.
    fn merge_sw(&mut self, flash: &mut Flash, now: SimTime) -> SimTime {
        let Some(sw) = self.sw.take() else { return now };
        let mut t = now;
        let old = self.data[sw.lbn as usize];
        if sw.next == self.ppb {
            flash.stats.merges_switch += 1;
        } else {
            flash.stats.merges_partial += 1;
            for off in sw.next..self.ppb {
                let src = self.page(old, off);
                if old != NIL && self.live.get(src) {
                    t = flash.copy_to(Ppn(src), Ppn(self.page(sw.pbn, off)), t);
                    self.live.set(src, false);
                    self.live.set(self.page(sw.pbn, off), true);
                }
            }
        }
        self.data[sw.lbn as usize] = sw.pbn;
        if old != NIL {
            t = self.erase(flash, old, t);
        }
        t
    }

    /// Full merge of logical block `lbn` into a fresh block.
    fn full_merge(
        &mut self,
        flash: &mut Flash,
        lbn: u32,
        now: SimTime,
    ) -> Result<SimTime, SsdError> {
        flash.stats.merges_full += 1;
        let fresh = self.alloc()?;
        let mut t = now;
        for off in 0..self.ppb {
            let lpn = lbn as u64 * self.ppb as u64 + off as u64;
            if let Some(src) = self.lookup(lpn) {
                t = flash.copy_to(Ppn(src), Ppn(self.page(fresh, off)), t);
                self.live.set(src, false);
                self.live.set(self.page(fresh, off), true);
            }
            self.rw_map.remove(&lpn);
        }
        if let Some(sw) = self.sw.filter(|s| s.lbn == lbn) {
            self.sw = None;
            t = self.erase(flash, sw.pbn, t);
        }
        let old = std::mem::replace(&mut self.data[lbn as usize], fresh);
        if old != NIL {
            t = self.erase(flash, old, t);
        }
        Ok(t)
    }

    /// Reclaim the oldest RW block: fully merge every logical block with a live page in it.
    fn reclaim_rw(&mut self, flash: &mut Flash, now: SimTime) -> Result<SimTime, SsdError> {
        let victim = self.rw.pop_front().expect("an RW block to reclaim");
        let first = self.page(victim, 0);
        let lbns: BTreeSet<u32> = (first..first + self.ppb as u64)
            .filter(|&p| self.live.get(p))
            .filter_map(|p| self.rw_owner.get(&p))
            .map(|&lpn| (lpn / self.ppb as u64) as u32)
            .collect();
        let mut t = now;
        for lbn in lbns {
            t = self.full_merge(flash, lbn, t)?;
        }
        // Drop the victim's page-map entries that still point into it (their data is dead).
        for p in first..first + self.ppb as u64 {
            if let Some(lpn) = self.rw_owner.remove(&p) {
                if self.rw_map.get(&lpn) == Some(&p) {
                    self.rw_map.remove(&lpn);
                }
            }
        }
        t = self.erase(flash, victim, t);
        if self.check {
            if let Err(e) = self.verify(flash) {
                panic!("after reclaiming RW block {victim}: {e}");
            }
        }
        Ok(t)
    }

    /// Append `lpn` to the RW area.
    fn write_rw(
        &mut self,
        flash: &mut Flash,
        lpn: u64,
        data: PageWrite,
        now: SimTime,
    ) -> Result<SimTime, SsdError> {
        let mut t = now;
        if self.rw_next == self.ppb {
            if self.rw.len() == self.rw_max {
                t = self.reclaim_rw(flash, t)?;
            }
            let b = self.alloc()?;
            self.rw.push_back(b);
            self.rw_next = 0;
        }
        if let Some(old) = self.lookup(lpn) {
            self.live.set(old, false);
        }
        let p = self.page(*self.rw.back().expect("an RW block"), self.rw_next);
        self.rw_next += 1;
        self.rw_map.insert(lpn, p);
        self.rw_owner.insert(p, lpn);
        self.live.set(p, true);
        Ok(flash.program(Ppn(p), data, t))
    }

    fn verify_roles(&self, flash: &Flash) -> Result<(), InvariantError> {
        let mut role = vec![false; flash.total_blocks() as usize];
        let blocks = self
            .free
            .iter()
            .chain(self.rw.iter())
            .chain(self.data.iter().filter(|&&b| b != NIL))
            .chain(self.sw.as_ref().map(|s| &s.pbn));
        for &b in blocks {
            if std::mem::replace(&mut role[b as usize], true) {
                return Err(InvariantError(format!("block {b} has two roles")));
            }
        }
        if let Some(b) = role.iter().position(|&r| !r) {
            return Err(InvariantError(format!("block {b} has no role")));
        }
        if let Some(&b) = self
            .free
            .iter()
            .find(|&&b| flash.write_pointer(BlockId(b)) != 0)
        {
            return Err(InvariantError(format!("free block {b} is not erased")));
        }
        Ok(())
    }
}

impl Ftl for FastFtl {
    fn kind(&self) -> FtlKind {
        FtlKind::Fast
    }
    fn logical_pages(&self) -> u64 {
        self.logical
    }

    fn write(
        &mut self,
        flash: &mut Flash,
        lpn: Lpn,
        _stream: StreamId,
        data: PageWrite,
        now: SimTime,
    ) -> Result<SimTime, SsdError> {
        let (lbn, off) = (
            (lpn.0 / self.ppb as u64) as u32,
            (lpn.0 % self.ppb as u64) as u32,
        );
        let mut t = now;
        let continues = self.sw.is_some_and(|s| s.lbn == lbn && s.next == off);
        if off == 0 && !continues {
            t = self.merge_sw(flash, t);
            let pbn = self.alloc()?;
            self.sw = Some(Sw { lbn, pbn, next: 0 });
        } else if !continues {
            return self.write_rw(flash, lpn.0, data, t);
        }
        if let Some(old) = self.lookup(lpn.0) {
            self.live.set(old, false);
        }
        let sw = self.sw.as_mut().expect("SW log");
        let p = sw.pbn as u64 * self.ppb as u64 + off as u64;
        sw.next += 1;
        self.live.set(p, true);
        let done = flash.program(Ppn(p), data, t);
        if self.sw.is_some_and(|s| s.next == self.ppb) {
            self.merge_sw(flash, done);
        }
        Ok(done)
    }

    fn read(
        &mut self,
        flash: &mut Flash,
        lpn: Lpn,
        now: SimTime,
    ) -> Result<(SimTime, Option<Ppn>), SsdError> {
        Ok(super::live::read_found(flash, self.lookup(lpn.0), now))
    }

    fn trim(&mut self, _flash: &mut Flash, lpn: Lpn, now: SimTime) -> Result<SimTime, SsdError> {
        if let Some(p) = self.lookup(lpn.0) {
            self.live.set(p, false);
        }
        Ok(now)
    }

    /// Block map (4 B per logical block) + SW log (lbn, pbn, next: 12 B) + the RW area's page
    /// map (lpn and page, 8 B per RW page).
    fn mapping_bytes(&self) -> u64 {
        self.data.len() as u64 * 4 + 12 + self.rw_max as u64 * self.ppb as u64 * 8
    }

    fn verify(&self, flash: &Flash) -> Result<(), InvariantError> {
        self.verify_roles(flash)?;
        super::live::verify_lookup(self.logical, flash, &self.live, |l| self.lookup(l))
    }
}
