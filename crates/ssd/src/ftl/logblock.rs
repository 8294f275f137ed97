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
//! Striping (`ftl.log_stripe_dies`, the Jasmine OpenSSD board's layout): logical page `lpn`
//! belongs to bank (die) `lpn % dies`; the bank's own page `lpn / dies` gives the offset and
//! the bank's logical block, numbered `lbn = bank block * dies + bank`, so `lbn % dies` is its
//! bank. Each bank runs the scheme on its die alone: data and log blocks from the die's pool,
//! its own log slots (slot `s` belongs to bank `s % dies`) and merge victims. Without striping
//! there is one bank: `lbn = lpn / ppb`, one pool, every slot.
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
    /// Per bank: its free log slots.
    free_slots: Vec<Vec<u32>>,
    /// Per bank: which of its slots to merge when none is free.
    victims: Vec<M>,
    /// Banks the logical pages stripe over (1: no striping; else the dies).
    banks: u32,
}

/// 64-bit words of a division bitmap.
fn words(g: &Layout) -> usize {
    g.ppb.div_ceil(64) as usize
}

impl<M: MergeVictims> LogBlocks<M> {
    pub fn new(cfg: &SsdConfig, g: &Layout, kind: FtlKind) -> LogBlocks<M> {
        assert!(matches!(kind, FtlKind::Bast | FtlKind::Ioa));
        let banks = if cfg.ftl.log_stripe_dies { g.dies } else { 1 };
        let stripe_pages = g.ppb as u64 * banks as u64;
        let lbns = match banks {
            1 => cfg.logical_pages() / g.ppb as u64,
            _ => cfg.logical_pages().div_ceil(stripe_pages) * banks as u64,
        } as usize;
        let slots = cfg.ftl.log_blocks;
        assert!(slots >= banks, "{slots} log blocks over {banks} banks");
        let free_slots = (0..banks)
            .map(|b| (0..slots).rev().filter(|s| s % banks == b).collect())
            .collect();
        LogBlocks {
            kind,
            data: vec![NIL; lbns],
            data_bits: vec![0; lbns * words(g)],
            log_of: vec![NIL; lbns],
            logs: vec![None; slots as usize],
            free_slots,
            victims: (0..banks).map(|_| M::default()).collect(),
            banks,
        }
    }

    /// Logical block and offset of `lpn` (see the module doc on striping).
    #[inline]
    fn locate(&self, g: &Layout, lpn: u64) -> (u32, u32) {
        if self.banks == 1 {
            return g.split(lpn);
        }
        let banks = self.banks as u64;
        let (bank, own) = (lpn % banks, lpn / banks);
        let (block, off) = (own / g.ppb as u64, own % g.ppb as u64);
        let lbn = block * banks + bank;
        assert!((lbn as usize) < self.data.len(), "lpn {lpn} beyond the map");
        (lbn as u32, off as u32)
    }

    /// The bank (die, when striped) of logical block `lbn`: where its blocks come from.
    #[inline]
    fn bank_of(&self, lbn: u32) -> u32 {
        lbn % self.banks
    }

    /// A free block for `lbn`'s bank (its die when striped).
    fn alloc_for(&self, core: &mut MapCore, g: &Layout, lbn: u32) -> Result<u32, SsdError> {
        let b = core.alloc_on(g, self.bank_of(lbn))?;
        assert!(
            self.banks == 1 || g.die_of(b) == self.bank_of(lbn),
            "block {b} of lbn {lbn} off its die"
        );
        Ok(b)
    }

    /// After a merge in `bank`: its slots are either free or hold an open log, once each.
    fn assert_bank_slots(&self, bank: u32) {
        let free = self.free_slots[bank as usize].len();
        let open = self.victims[bank as usize].len();
        let slots = (0..self.logs.len() as u32)
            .filter(|s| s % self.banks == bank)
            .count();
        assert_eq!(free + open, slots, "bank {bank}: free + open log slots");
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
        let bank = self.bank_of(lbn) as usize;
        if self.free_slots[bank].is_empty() {
            let victim = self.victims[bank].choose().expect("slots in use");
            assert_eq!(
                victim % self.banks,
                bank as u32,
                "victim slot of bank {bank}"
            );
            t = self.merge(core, flash, victim, t)?;
        }
        let slot = self.free_slots[bank].pop().expect("a slot was freed");
        let g = &flash.layout;
        let pbn = self.alloc_for(core, g, lbn)?;
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
        self.victims[bank].opened(slot);
        self.assert_bank_slots(bank as u32);
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
        let bank = self.bank_of(log.lbn);
        assert_eq!(slot % self.banks, bank, "log slot {slot} of bank {bank}");
        self.victims[bank as usize].merged(slot);
        self.free_slots[bank as usize].push(slot);
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
        self.assert_merged(&flash.layout, &log);
        Ok(t)
    }

    /// After merging `log`: its lbn has no log, its data block is a block of its bank that
    /// no log holds, and its bank's slot counts add up.
    fn assert_merged(&self, g: &Layout, log: &Log) {
        let (lbn, bank) = (log.lbn as usize, self.bank_of(log.lbn));
        assert_eq!(self.log_of[lbn], NIL, "merged lbn {lbn} keeps a log");
        let d = self.data[lbn];
        assert!(d != NIL, "merged lbn {lbn} has a data block");
        assert!(
            self.banks == 1 || g.die_of(d) == bank,
            "data block {d} of lbn {lbn} off bank {bank}"
        );
        self.assert_bank_slots(bank);
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
        let fresh = self.alloc_for(core, &g, log.lbn)?;
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
        let (lbn, off) = self.locate(g, lpn);
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
        let (lbn, off) = self.locate(&g, lpn);
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
    use crate::ftl::blockmap::BlockMapped;
    use crate::ftl::merge::FifoMerge;
    use crate::ftl::scheme::Ftl;
    use crate::types::{Lpn, PageWrite, StreamId};

    /// A 4-die device of 8-page blocks, 8 log blocks, `kind` striped over the dies or not.
    fn device(kind: FtlKind, striped: bool) -> (Flash, BlockMapped<LogBlocks<FifoMerge>>) {
        let mut cfg = SsdConfig::preset("mlc-sata-2010").unwrap();
        cfg.geometry.channels = 2;
        cfg.geometry.dies_per_channel = 2;
        cfg.geometry.planes_per_die = 1;
        cfg.geometry.blocks_per_plane = 24;
        cfg.geometry.pages_per_block = 8;
        cfg.geometry.page_bytes = 512;
        cfg.ftl.scheme = kind;
        cfg.ftl.op = 0.4;
        cfg.ftl.log_blocks = 8;
        cfg.ftl.log_stripe_dies = striped;
        cfg.validate().unwrap();
        let flash = Flash::new(&cfg);
        let scheme = LogBlocks::new(&cfg, &flash.layout, kind);
        let ftl = BlockMapped::with_pools(&cfg, &flash, scheme, striped);
        (flash, ftl)
    }

    /// Overwrites in a scrambled order (forcing merges), then every page read back.
    fn churn(flash: &mut Flash, ftl: &mut BlockMapped<LogBlocks<FifoMerge>>) {
        let n = ftl.logical_pages();
        for i in 0..6 * n {
            let lpn = (i * 7919 + i / 5) % n;
            let w = HostWrite {
                lpn: Lpn(lpn),
                stream: StreamId(0),
                data: PageWrite::tag(lpn),
                now: SimTime::ZERO,
            };
            ftl.write(flash, w).unwrap();
        }
        ftl.verify(flash).unwrap();
        for lpn in 0..n {
            let (_, p) = ftl.read(flash, Lpn(lpn), SimTime::ZERO).unwrap();
            assert_eq!(flash.tag(p.expect("written")), lpn, "lpn {lpn}");
        }
    }

    #[test]
    fn striped_logs_keep_every_lbn_on_its_die_and_read_back_through_merges() {
        for kind in [FtlKind::Bast, FtlKind::Ioa] {
            let (mut flash, mut ftl) = device(kind, true);
            churn(&mut flash, &mut ftl);
            let s = &ftl.scheme;
            assert_eq!(s.banks, 4);
            let g = flash.layout;
            for (lbn, &d) in s.data.iter().enumerate().filter(|(_, &d)| d != NIL) {
                assert_eq!(g.die_of(d), lbn as u32 % 4, "{kind:?} lbn {lbn}");
            }
            // Consecutive pages sit on consecutive dies, at one offset of one bank block.
            assert_eq!(s.locate(&g, 0), (0, 0));
            assert_eq!(s.locate(&g, 1), (1, 0));
            assert_eq!(s.locate(&g, 4), (0, 1));
            assert_eq!(s.locate(&g, 32), (4, 0));
            assert!(flash.stats.merges_full + flash.stats.merges_switch > 0);
        }
    }

    #[test]
    fn unstriped_logs_map_by_block_and_read_back_through_merges() {
        let (mut flash, mut ftl) = device(FtlKind::Ioa, false);
        churn(&mut flash, &mut ftl);
        assert_eq!(ftl.scheme.banks, 1);
        assert_eq!(ftl.scheme.locate(&flash.layout, 9), (1, 1));
    }

    #[test]
    fn striping_a_scheme_that_cannot_is_a_config_error() {
        let mut cfg = SsdConfig::preset("jasmine-openssd").unwrap();
        cfg.ftl.scheme = FtlKind::Fast;
        cfg.ftl.log_stripe_dies = true;
        let e = cfg.validate().unwrap_err().to_string();
        assert!(e.contains("log_stripe_dies"), "{e}");
        cfg.ftl.scheme = FtlKind::Ioa;
        cfg.ftl.log_blocks = 4;
        let e = cfg.validate().unwrap_err().to_string();
        assert!(e.contains("ftl.log_blocks"), "{e}");
    }

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
