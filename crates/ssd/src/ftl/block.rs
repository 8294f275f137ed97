//! Pure block mapping: logical block `lpn / ppb` maps to one physical block, and a page always
//! sits at its logical offset `lpn % ppb` in it.
//!
//! Model: a write to an offset at or above the block's write pointer is programmed in place
//! (skipping free pages below it). Any other write — an overwrite, or an offset below the
//! write pointer — forces a copy of the whole block: a fresh block receives every live page of
//! the old one in offset order plus the new page, and the old block is erased. That copy is
//! counted as a full merge. A per-page live bit tracks overwritten and trimmed pages.
//! Invariants ([`BlockFtl::verify`]): each mapped block has one logical block; free blocks are
//! erased; every live page is programmed.

use super::live::LivePages;
use super::Ftl;
use crate::config::{FtlKind, SsdConfig};
use crate::error::{InvariantError, SsdError};
use crate::flash::Flash;
use crate::types::{BlockId, Lpn, PageWrite, Ppn, SimTime, StreamId};
use std::collections::VecDeque;

const NIL: u32 = u32::MAX;

pub struct BlockFtl {
    ppb: u32,
    logical: u64,
    check: bool,
    data: Vec<u32>,
    free: VecDeque<u32>,
    live: LivePages,
}

impl BlockFtl {
    pub fn new(cfg: &SsdConfig, flash: &Flash) -> BlockFtl {
        let logical = cfg.logical_pages();
        BlockFtl {
            ppb: flash.pages_per_block,
            logical,
            check: cfg.ftl.check_invariants,
            data: vec![NIL; (logical / flash.pages_per_block as u64) as usize],
            free: (0..flash.total_blocks()).collect(),
            live: LivePages::new(flash.total_pages()),
        }
    }

    fn lookup(&self, lpn: u64) -> Option<u64> {
        let d = self.data[(lpn / self.ppb as u64) as usize];
        let p = d as u64 * self.ppb as u64 + lpn % self.ppb as u64;
        (d != NIL && self.live.get(p)).then_some(p)
    }

    fn alloc(&mut self) -> Result<u32, SsdError> {
        self.free.pop_front().ok_or(SsdError::DeviceFull { die: 0 })
    }

    /// Copy block `old` to a fresh block, writing `data` at `off` instead of the old page.
    fn copy_block(
        &mut self,
        flash: &mut Flash,
        lbn: usize,
        off: u32,
        data: PageWrite,
        now: SimTime,
    ) -> Result<SimTime, SsdError> {
        let old = self.data[lbn];
        let fresh = self.alloc()?;
        let (old0, new0) = (old as u64 * self.ppb as u64, fresh as u64 * self.ppb as u64);
        let mut t = now;
        for o in 0..self.ppb as u64 {
            if o == off as u64 {
                t = t.max(flash.program_at(Ppn(new0 + o), data.clone(), now));
                self.live.set(new0 + o, true);
            } else if self.live.get(old0 + o) {
                t = flash.copy_to(Ppn(old0 + o), Ppn(new0 + o), t);
                self.live.set(new0 + o, true);
            }
            self.live.set(old0 + o, false);
        }
        flash.stats.merges_full += 1;
        t = flash.erase(BlockId(old), t);
        self.free.push_back(old);
        self.data[lbn] = fresh;
        if self.check {
            if let Err(e) = self.verify(flash) {
                panic!("after copying logical block {lbn}: {e}");
            }
        }
        Ok(t)
    }
}

impl Ftl for BlockFtl {
    fn kind(&self) -> FtlKind {
        FtlKind::Block
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
            (lpn.0 / self.ppb as u64) as usize,
            (lpn.0 % self.ppb as u64) as u32,
        );
        if self.data[lbn] == NIL {
            self.data[lbn] = self.alloc()?;
        }
        let d = self.data[lbn];
        if off < flash.write_pointer(BlockId(d)) {
            return self.copy_block(flash, lbn, off, data, now);
        }
        let p = d as u64 * self.ppb as u64 + off as u64;
        self.live.set(p, true);
        Ok(flash.program_at(Ppn(p), data, now))
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

    /// The block map: 4 B per logical block.
    fn mapping_bytes(&self) -> u64 {
        self.data.len() as u64 * 4
    }

    fn verify(&self, flash: &Flash) -> Result<(), InvariantError> {
        let mut owner = vec![false; flash.total_blocks() as usize];
        for &b in self
            .free
            .iter()
            .chain(self.data.iter().filter(|&&b| b != NIL))
        {
            if std::mem::replace(&mut owner[b as usize], true) {
                return Err(InvariantError(format!(
                    "block {b} is both free and mapped, or mapped twice"
                )));
            }
        }
        if let Some(b) = owner.iter().position(|&o| !o) {
            return Err(InvariantError(format!(
                "block {b} is neither free nor mapped"
            )));
        }
        if let Some(&b) = self
            .free
            .iter()
            .find(|&&b| flash.write_pointer(BlockId(b)) != 0)
        {
            return Err(InvariantError(format!("free block {b} is not erased")));
        }
        super::live::verify_lookup(self.logical, flash, &self.live, |l| self.lookup(l))
    }
}
