//! FAST (Lee et al., TECS 2007): block-mapped data blocks plus a shared log area of one
//! sequential log block (SW) and fully associative random log blocks (RW).
//!
//! Model: a write at offset 0 starts the SW log for its logical block (merging the previous
//! SW log); a write continuing the SW log's sequence (same lbn, next offset) is appended to
//! it; any other write is appended to the current RW log block, which any logical page may
//! use (a page map `lpn -> page` covers the RW area). SW merge: *switch* if the SW log is full
//! (it becomes the data block), else *partial* (the rest copied from the data block). When the
//! RW area is full, the merge-victim policy `M` (FIFO: the oldest RW block) chooses one to reclaim: every logical block with a live page in
//! it is *fully merged* (its newest pages gathered from RW logs, the SW log and the data block
//! into a new block in offset order), then the RW block is erased.
//! `log_blocks` counts the SW block plus the RW blocks. Live bits per physical page mark
//! current data. Invariants: those of [`super::blockmap`] (every block has one role;
//! each logical page has at most one live page, the one lookup finds; live pages are programmed).

use super::blockmap::{data_blocks, BlockScheme, MapCore};
use super::blocks::NIL;
use super::merge::MergeVictims;
use super::scheme::{Done, HostWrite};
use crate::config::SsdConfig;
use crate::error::SsdError;
use crate::flash::{Flash, Layout};
use crate::types::{Ppn, SimTime};
use std::collections::{BTreeSet, HashMap};

#[derive(Clone, Copy, Debug)]
struct Sw {
    lbn: u32,
    pbn: u32,
    next: u32,
}

pub(crate) struct Fast<M> {
    rw_max: usize,
    pub(crate) data: Vec<u32>,
    sw: Option<Sw>,
    /// RW blocks, ordered for reclaiming by the merge-victim policy.
    rw: M,
    /// The RW block being filled (NIL: none yet) and its next page.
    rw_open: u32,
    rw_next: u32,
    /// lpn -> its newest RW page (lookups only; may point at a page no longer live).
    rw_map: HashMap<u64, u64>,
    /// RW page -> lpn written there (for reclaiming an RW block).
    rw_owner: HashMap<u64, u64>,
}

impl<M: MergeVictims> Fast<M> {
    pub fn new(cfg: &SsdConfig, g: &Layout) -> Fast<M> {
        assert!(g.ppb >= 1, "blocks have pages");
        Fast {
            rw_max: cfg.ftl.log_blocks.saturating_sub(1).max(1) as usize,
            data: vec![NIL; (cfg.logical_pages() / g.ppb as u64) as usize],
            sw: None,
            rw: M::default(),
            rw_open: NIL,
            rw_next: g.ppb,
            rw_map: HashMap::new(),
            rw_owner: HashMap::new(),
        }
    }

    /// The SW log becomes its block's data block: switch if full, else partial.
    fn merge_sw(&mut self, core: &mut MapCore, flash: &mut Flash, now: SimTime) -> SimTime {
        let Some(sw) = self.sw.take() else { return now };
        let g = flash.layout;
        let mut t = now;
        let old = self.data[sw.lbn as usize];
        assert!(
            sw.next <= g.ppb && old != sw.pbn,
            "SW log of lbn {}",
            sw.lbn
        );
        if sw.next == g.ppb {
            flash.stats.merges_switch += 1;
        } else {
            flash.stats.merges_partial += 1;
            for off in sw.next..g.ppb {
                if old == NIL {
                    break;
                }
                let src = g.page(old, off);
                if core.live.get(src) {
                    t = core.move_page(flash, src, g.page(sw.pbn, off), t);
                }
            }
        }
        self.data[sw.lbn as usize] = sw.pbn;
        if old != NIL {
            assert!(
                core.all_dead(&g, old),
                "merged data block {old} holds live pages"
            );
            t = core.release(flash, old, t);
        }
        t
    }

    /// Full merge of logical block `lbn` into a fresh block.
    fn full_merge(
        &mut self,
        core: &mut MapCore,
        flash: &mut Flash,
        lbn: u32,
        now: SimTime,
    ) -> Result<SimTime, SsdError> {
        let g = flash.layout;
        flash.stats.merges_full += 1;
        let fresh = core.alloc()?;
        let mut t = now;
        for off in 0..g.ppb {
            let lpn = g.page(lbn, off);
            if let Some(src) = self.lookup(core, &g, lpn) {
                t = core.move_page(flash, src, g.page(fresh, off), t);
            }
            self.rw_map.remove(&lpn);
        }
        if let Some(sw) = self.sw.filter(|s| s.lbn == lbn) {
            self.sw = None;
            assert!(core.all_dead(&g, sw.pbn), "merged SW log holds live pages");
            t = core.release(flash, sw.pbn, t);
        }
        let old = std::mem::replace(&mut self.data[lbn as usize], fresh);
        if old != NIL {
            assert!(
                core.all_dead(&g, old),
                "merged data block {old} holds live pages"
            );
            t = core.release(flash, old, t);
        }
        Ok(t)
    }

    /// Reclaim the RW block the policy chooses: fully merge every logical block with a live
    /// page in it.
    fn reclaim_rw(
        &mut self,
        core: &mut MapCore,
        flash: &mut Flash,
        now: SimTime,
    ) -> Result<SimTime, SsdError> {
        let g = flash.layout;
        let victim = self.rw.choose().expect("an RW block to reclaim");
        let (first, end) = (g.page(victim, 0), g.page(victim + 1, 0));
        let lbns: BTreeSet<u32> = (first..end)
            .filter(|&p| core.live.get(p))
            .filter_map(|p| self.rw_owner.get(&p))
            .map(|&lpn| g.split(lpn).0)
            .collect();
        let mut t = now;
        for lbn in lbns {
            t = self.full_merge(core, flash, lbn, t)?;
        }
        // Drop the victim's page-map entries that still point into it (their data is dead).
        for p in first..end {
            if let Some(lpn) = self.rw_owner.remove(&p) {
                if self.rw_map.get(&lpn) == Some(&p) {
                    self.rw_map.remove(&lpn);
                }
            }
        }
        // The RW victim has no live page after its logical blocks were merged.
        assert!(
            core.all_dead(&g, victim),
            "reclaimed RW block {victim} holds live pages"
        );
        Ok(core.release(flash, victim, t))
    }

    /// Append `lpn` to the RW area.
    fn write_rw(&mut self, core: &mut MapCore, flash: &mut Flash, w: HostWrite) -> Done {
        let (lpn, data, now) = (w.lpn.0, w.data, w.now);
        let g = flash.layout;
        let mut t = now;
        if self.rw_next == g.ppb {
            if self.rw.len() == self.rw_max {
                t = self.reclaim_rw(core, flash, t)?;
            }
            let b = core.alloc()?;
            self.rw.opened(b);
            self.rw_open = b;
            self.rw_next = 0;
        }
        if let Some(old) = self.lookup(core, &g, lpn) {
            core.live.set(old, false);
        }
        let p = g.page(self.rw_open, self.rw_next);
        assert!(!core.live.get(p), "RW page {p} made live twice");
        self.rw_next += 1;
        self.rw_map.insert(lpn, p);
        self.rw_owner.insert(p, lpn);
        core.live.set(p, true);
        Ok(flash.program(Ppn(p), data, t))
    }
}

impl<M: MergeVictims> BlockScheme for Fast<M> {
    fn lookup(&self, core: &MapCore, g: &Layout, lpn: u64) -> Option<u64> {
        let (lbn, off) = g.split(lpn);
        let candidates = [
            self.rw_map.get(&lpn).copied(),
            self.sw
                .filter(|s| s.lbn == lbn && off < s.next)
                .map(|s| g.page(s.pbn, off)),
            (self.data[lbn as usize] != NIL).then(|| g.page(self.data[lbn as usize], off)),
        ];
        candidates.into_iter().flatten().find(|&p| core.live.get(p))
    }

    fn write(&mut self, core: &mut MapCore, flash: &mut Flash, w: HostWrite) -> Done {
        let (lpn, now) = (w.lpn.0, w.now);
        let g = flash.layout;
        let (lbn, off) = g.split(lpn);
        let mut t = now;
        let continues = self.sw.is_some_and(|s| s.lbn == lbn && s.next == off);
        if off == 0 && !continues {
            t = self.merge_sw(core, flash, t);
            let pbn = core.alloc()?;
            self.sw = Some(Sw { lbn, pbn, next: 0 });
        } else if !continues {
            return self.write_rw(core, flash, w); // nothing merged: still at `now`
        }
        if let Some(old) = self.lookup(core, &g, lpn) {
            core.live.set(old, false);
        }
        let sw = self.sw.as_mut().expect("SW log");
        let p = g.page(sw.pbn, off);
        assert!(!core.live.get(p), "SW page {p} made live twice");
        sw.next += 1;
        core.live.set(p, true);
        let done = flash.program(Ppn(p), w.data, t);
        if self.sw.is_some_and(|s| s.next == g.ppb) {
            self.merge_sw(core, flash, done);
        }
        Ok(done)
    }

    fn held_blocks(&self) -> Vec<(u32, &'static str)> {
        let data = data_blocks(&self.data);
        let rw = self.rw.ids().into_iter().map(|b| (b, "random log"));
        let sw = self.sw.map(|s| (s.pbn, "sequential log"));
        data.chain(rw).chain(sw).collect()
    }

    /// Block map (4 B per logical block) + SW log (lbn, pbn, next: 12 B) + the RW area's page
    /// map (lpn and page, 8 B per RW page).
    fn mapping_bytes(&self, g: &Layout) -> u64 {
        self.data.len() as u64 * 4 + 12 + self.rw_max as u64 * g.ppb as u64 * 8
    }
}
