//! Log-block FTLs with one log block per data block: BAST (Kim et al. 2002) and the
//! increasing-order-aware scheme of P4 (`ioa`).
//!
//! Model: logical block `lbn = lpn / ppb` maps to one data block (block map); page offset
//! `off = lpn % ppb`. Every host write goes to the log block of its lbn (allocated on demand
//! from `log_blocks` slots; when none is free, the merge-victim policy `M` chooses a slot to
//! merge — FIFO, the slot allocated longest ago), appended at the log's next page, with a per-log page map `offset -> page`. A full log
//! is merged. Merges:
//! - BAST: *switch* when the log holds offsets `0..ppb` at pages `0..ppb` (it becomes the data
//!   block); *partial* when it holds a sequential prefix `0..k` at pages `0..k` (the rest is
//!   copied from the data block to pages `k..`); otherwise *full* (a new block is assembled in
//!   offset order from log and data block, both erased).
//! - IOA adds P4's **division bitmap**: while a log's writes arrive in increasing (not
//!   necessarily contiguous) offset order, the offsets written form division 0 (bit 1) at pages
//!   `0..k`; at merge time the remaining offsets (division 1, bit 0) are copied from the data
//!   block in offset order to pages `k..`, and the log becomes the data block, its layout
//!   described by the bitmap ([`physical_offset`]) — counted as a *switch* merge, as P4 does.
//!   A log whose writes are not increasing falls back to the page map and a full merge.
//!   (P4 has no partial merge; an IOA log that is a sequential prefix is also handled by the
//!   bitmap path and counted as a switch merge.)
//!
//! Every block is in exactly one role: free, data (of one lbn) or log (of one lbn). A per-page
//! live bit records which physical pages hold current data (overwrites and TRIM clear it).
//! Invariants: those of [`super::blockmap`] (each logical page has at most one live physical
//! page, the one lookup finds; live pages are programmed; free blocks are erased; every block
//! has one role), and every log is mapped from its lbn.

use super::blockmap::{data_blocks, BlockScheme, MapCore};
use super::blocks::NIL;
use super::merge::MergeVictims;
use super::scheme::{Done, HostWrite};
use crate::config::{FtlKind, SsdConfig};
use crate::error::{InvariantError, SsdError};
use crate::flash::{Flash, Layout};
use crate::types::{Ppn, SimTime};

const NONE16: u16 = u16::MAX;

/// P4's physical-offset function: where logical offset `i` sits in a block whose division
/// bitmap is `bits` (`ppb` bits, bit set = division 0). Division 0 pages come first in offset
/// order, then division 1 pages in offset order:
/// bit set: the number of set bits before `i`; clear: all set bits + clear bits before `i`.
pub fn physical_offset(bits: &[u64], ppb: u32, i: u32) -> u32 {
    assert!(
        i < ppb && ppb as usize <= bits.len() * 64,
        "offset {i} of {ppb}"
    );
    let ones_before = count_ones_below(bits, i);
    if bit(bits, i) {
        ones_before
    } else {
        let ones_total = count_ones_below(bits, ppb);
        ones_total + (i - ones_before)
    }
}

fn bit(bits: &[u64], i: u32) -> bool {
    bits[(i / 64) as usize] >> (i % 64) & 1 == 1
}

fn set_bit(bits: &mut [u64], i: u32) {
    bits[(i / 64) as usize] |= 1 << (i % 64);
}

fn count_ones_below(bits: &[u64], i: u32) -> u32 {
    let full = (i / 64) as usize;
    let mut n: u32 = bits[..full].iter().map(|w| w.count_ones()).sum();
    if !i.is_multiple_of(64) {
        n += (bits[full] & ((1u64 << (i % 64)) - 1)).count_ones();
    }
    n
}

/// A log block and what it holds.
#[derive(Clone, Debug)]
struct Log {
    lbn: u32,
    pbn: u32,
    next: u32,
    /// offset -> page in the log (NONE16: not written here).
    page_of: Vec<u16>,
    last_off: u32,
    /// Every write so far at a higher offset than the one before (IOA's condition).
    increasing: bool,
    /// Every write so far at page == offset (BAST's switch/partial condition).
    identity: bool,
    /// Division bitmap: offsets written (division 0).
    bits: Vec<u64>,
}

pub(crate) struct LogBlocks<M> {
    kind: FtlKind,
    /// lbn -> data block (NIL: none).
    pub(crate) data: Vec<u32>,
    /// lbn -> division bitmap of its data block (IOA; all clear = identity layout).
    data_bits: Vec<u64>,
    /// lbn -> log slot (NIL: none).
    pub(crate) log_of: Vec<u32>,
    logs: Vec<Option<Log>>,
    free_slots: Vec<u32>,
    /// Which slot to merge when none is free.
    victims: M,
}

/// 64-bit words of a division bitmap.
fn words(g: &Layout) -> usize {
    g.ppb.div_ceil(64) as usize
}

impl<M: MergeVictims> LogBlocks<M> {
    pub fn new(cfg: &SsdConfig, g: &Layout, kind: FtlKind) -> LogBlocks<M> {
        assert!(matches!(kind, FtlKind::Bast | FtlKind::Ioa));
        let lbns = (cfg.logical_pages() / g.ppb as u64) as usize;
        let slots = cfg.ftl.log_blocks;
        LogBlocks {
            kind,
            data: vec![NIL; lbns],
            data_bits: vec![0; lbns * words(g)],
            log_of: vec![NIL; lbns],
            logs: vec![None; slots as usize],
            free_slots: (0..slots).rev().collect(),
            victims: M::default(),
        }
    }

    fn data_page(&self, core: &MapCore, g: &Layout, lbn: u32, off: u32) -> Option<u64> {
        let d = self.data[lbn as usize];
        if d == NIL {
            return None;
        }
        let w = words(g);
        let bits = &self.data_bits[lbn as usize * w..][..w];
        let p = g.page(d, physical_offset(bits, g.ppb, off));
        core.live.get(p).then_some(p)
    }

    /// The log slot of `lbn`, allocating (and merging a victim if needed).
    fn log_slot(
        &mut self,
        core: &mut MapCore,
        flash: &mut Flash,
        lbn: u32,
        now: SimTime,
    ) -> Result<(u32, SimTime), SsdError> {
        let s = self.log_of[lbn as usize];
        if s != NIL {
            return Ok((s, now));
        }
        let mut t = now;
        if self.free_slots.is_empty() {
            let victim = self.victims.choose().expect("slots in use");
            t = self.merge(core, flash, victim, t)?;
        }
        let slot = self.free_slots.pop().expect("a slot was freed");
        let pbn = core.alloc()?;
        let g = &flash.layout;
        assert!(
            self.logs[slot as usize].is_none(),
            "free slot {slot} holds a log"
        );
        assert!(
            core.all_dead(g, pbn),
            "a fresh log block {pbn} holds live pages"
        );
        self.logs[slot as usize] = Some(Log {
            lbn,
            pbn,
            next: 0,
            page_of: vec![NONE16; g.ppb as usize],
            last_off: 0,
            increasing: true,
            identity: true,
            bits: vec![0; words(g)],
        });
        self.log_of[lbn as usize] = slot;
        self.victims.opened(slot);
        Ok((slot, t))
    }

    /// Reclaim log `slot`: switch, partial or full merge (see the module doc).
    fn merge(
        &mut self,
        core: &mut MapCore,
        flash: &mut Flash,
        slot: u32,
        now: SimTime,
    ) -> Result<SimTime, SsdError> {
        let log = self.logs[slot as usize]
            .take()
            .expect("merging an empty slot");
        assert_eq!(self.log_of[log.lbn as usize], slot, "merged log's lbn");
        self.victims.merged(slot);
        self.free_slots.push(slot);
        self.log_of[log.lbn as usize] = NIL;
        let (ppb, w) = (flash.layout.ppb, words(&flash.layout));
        let merges =
            |f: &Flash| f.stats.merges_switch + f.stats.merges_partial + f.stats.merges_full;
        let merges_before = merges(flash);
        let t = if log.identity && log.next == ppb {
            flash.stats.merges_switch += 1;
            self.adopt(core, flash, &log, vec![0; w], now)
        } else if self.kind == FtlKind::Ioa && log.increasing {
            flash.stats.merges_switch += 1;
            self.adopt(core, flash, &log, log.bits.clone(), now)
        } else if self.kind == FtlKind::Bast && log.identity {
            flash.stats.merges_partial += 1;
            self.adopt(core, flash, &log, vec![0; w], now)
        } else {
            flash.stats.merges_full += 1;
            self.full_merge(core, flash, &log, now)?
        };
        assert_eq!(merges(flash), merges_before + 1, "one merge per merged log");
        Ok(t)
    }

    /// The log becomes `lbn`'s data block with layout `bits` (identity for BAST; the division
    /// bitmap for IOA): the offsets it lacks are copied from the old data block, in offset
    /// order, to the positions `bits` gives them; then the old data block is erased. (For a
    /// switch merge, or a log a full merge assembled, nothing is left to copy.)
    fn adopt(
        &mut self,
        core: &mut MapCore,
        flash: &mut Flash,
        log: &Log,
        bits: Vec<u64>,
        now: SimTime,
    ) -> SimTime {
        let g = flash.layout;
        let mut t = now;
        for off in 0..g.ppb {
            if log.page_of[off as usize] != NONE16 {
                continue;
            }
            if let Some(src) = self.data_page(core, &g, log.lbn, off) {
                let dst = g.page(log.pbn, physical_offset(&bits, g.ppb, off));
                t = core.move_page(flash, src, dst, t);
            }
        }
        let lbn = log.lbn as usize;
        let w = words(&g);
        let old = std::mem::replace(&mut self.data[lbn], log.pbn);
        self.data_bits[lbn * w..][..w].copy_from_slice(&bits);
        if old == NIL {
            return t;
        }
        // The old data block gave up every live page to the log before its erase.
        assert!(
            core.all_dead(&g, old),
            "merged data block {old} holds live pages"
        );
        core.release(flash, old, t)
    }

    /// Assemble a new data block in offset order from log and data block; erase both.
    fn full_merge(
        &mut self,
        core: &mut MapCore,
        flash: &mut Flash,
        log: &Log,
        now: SimTime,
    ) -> Result<SimTime, SsdError> {
        let g = flash.layout;
        let fresh = core.alloc()?;
        assert_ne!(fresh, log.pbn, "full merge into its own log");
        let mut t = now;
        for off in 0..g.ppb {
            let in_log = log.page_of[off as usize];
            let src = if in_log != NONE16 {
                let p = g.page(log.pbn, in_log as u32);
                core.live.get(p).then_some(p)
            } else {
                self.data_page(core, &g, log.lbn, off)
            };
            if let Some(src) = src {
                t = core.move_page(flash, src, g.page(fresh, off), t);
            }
        }
        let pseudo = Log {
            pbn: fresh,
            ..log.clone()
        };
        t = self.adopt(core, flash, &pseudo, vec![0; words(&g)], t);
        assert!(
            core.all_dead(&g, log.pbn),
            "merged log {} holds live pages",
            log.pbn
        );
        Ok(core.release(flash, log.pbn, t))
    }
}

impl<M: MergeVictims> BlockScheme for LogBlocks<M> {
    fn lookup(&self, core: &MapCore, g: &Layout, lpn: u64) -> Option<u64> {
        let (lbn, off) = g.split(lpn);
        let slot = self.log_of[lbn as usize];
        if slot != NIL {
            let log = self.logs[slot as usize].as_ref().expect("mapped slot");
            let pg = log.page_of[off as usize];
            if pg != NONE16 {
                let p = g.page(log.pbn, pg as u32);
                return core.live.get(p).then_some(p);
            }
        }
        self.data_page(core, g, lbn, off)
    }

    fn write(&mut self, core: &mut MapCore, flash: &mut Flash, w: HostWrite) -> Done {
        let (lpn, data, now) = (w.lpn.0, w.data, w.now);
        let g = flash.layout;
        let (lbn, off) = g.split(lpn);
        let (mut slot, mut t) = self.log_slot(core, flash, lbn, now)?;
        if self.logs[slot as usize].as_ref().expect("slot").next == g.ppb {
            t = self.merge(core, flash, slot, t)?;
            (slot, t) = self.log_slot(core, flash, lbn, t)?;
        }
        if let Some(old) = self.lookup(core, &g, lpn) {
            core.live.set(old, false);
        }
        let log = self.logs[slot as usize].as_mut().expect("slot");
        let page = log.next;
        assert!(
            page < g.ppb && log.lbn == lbn,
            "log of lbn {} at page {page}",
            log.lbn
        );
        log.increasing &= page == 0 || off > log.last_off;
        log.identity &= page == off;
        log.last_off = off;
        log.page_of[off as usize] = page as u16;
        set_bit(&mut log.bits, off);
        log.next += 1;
        let p = g.page(log.pbn, page);
        assert!(!core.live.get(p), "log page {p} made live twice");
        core.live.set(p, true);
        Ok(flash.program(Ppn(p), data, t))
    }

    fn held_blocks(&self) -> Vec<(u32, &'static str)> {
        let data = data_blocks(&self.data);
        let logs = self.logs.iter().flatten().map(|l| (l.pbn, "log"));
        data.chain(logs).collect()
    }

    fn verify_scheme(&self) -> Result<(), InvariantError> {
        for (slot, log) in self.logs.iter().enumerate() {
            if let Some(log) = log {
                let mapped = self.log_of[log.lbn as usize];
                if mapped != slot as u32 {
                    return Err(InvariantError::Count {
                        what: "log slot mapped from the log's lbn",
                        expected: slot as u64,
                        found: mapped as u64,
                    });
                }
            }
        }
        Ok(())
    }

    /// Block map (4 B per logical block) + per log block: its lbn and pbn (8 B) and page map
    /// (2 B per page); IOA adds the division bitmap (1 bit per logical page). The live-page
    /// bitmap is bookkeeping for TRIM and verification, not part of the scheme: not counted.
    fn mapping_bytes(&self, g: &Layout) -> u64 {
        let lbns = self.data.len() as u64;
        let logs = self.logs.len() as u64;
        let mut bytes = lbns * 4 + logs * (8 + 2 * g.ppb as u64);
        if self.kind == FtlKind::Ioa {
            bytes += (lbns * g.ppb as u64).div_ceil(8);
        }
        bytes
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn physical_offset_matches_p4s_example() {
        // 8 pages; offsets 1, 3, 5, 6 written in increasing order (division 0).
        let mut bits = vec![0u64];
        for o in [1, 3, 5, 6] {
            set_bit(&mut bits, o);
        }
        assert_eq!(physical_offset(&bits, 8, 3), 1);
        assert_eq!(physical_offset(&bits, 8, 4), 6);
        let all: Vec<u32> = (0..8).map(|i| physical_offset(&bits, 8, i)).collect();
        assert_eq!(all, [4, 0, 5, 1, 6, 2, 3, 7]);
    }

    #[test]
    fn empty_and_full_bitmaps_are_the_identity() {
        let none = vec![0u64; 2];
        let full = vec![u64::MAX; 2];
        for i in 0..128 {
            assert_eq!(physical_offset(&none, 128, i), i);
            assert_eq!(physical_offset(&full, 128, i), i);
        }
    }
}
