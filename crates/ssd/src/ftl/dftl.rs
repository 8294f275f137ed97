//! DFTL (Gupta et al., ASPLOS 2009): page mapping whose map lives on flash in translation pages,
//! with a cached mapping table (CMT) in RAM.
//!
//! Model: data and translation pages share one page-mapping FTL ([`PageFtl`]) and its GC; the
//! translation pages are logical pages `host_pages + tvpn` beyond the host's space, each holding
//! the mappings of `page_bytes / 4` host pages. The global translation directory (GTD: tvpn ->
//! location) is the inner FTL's map of those pages. The CMT keeps `cmt_entries` host mappings
//! in LRU order. A host access whose mapping is not cached reads its translation page
//! (`translation_reads`) before the data access; making room evicts the LRU entry, and a dirty
//! victim has its translation page rewritten (read-modify-write: a read, then a program:
//! `translation_writes`), which also cleans every other cached dirty entry of that page
//! (DFTL's batch update). When GC moves a data page whose mapping is cached, the entry is made
//! dirty; when it is not cached, its translation page is updated at once — one read and one
//! write per translation page per GC round (batched). Moved translation pages only update the GTD.

use super::gc::VictimPolicy;
use super::page::PageFtl;
use super::scheme::{Done, Found, Ftl, HostWrite};
use crate::config::SsdConfig;
use crate::error::{InvariantError, SsdError};
use crate::flash::Flash;
use crate::types::{Lpn, PageWrite, SimTime, StreamId};
use policy::Lru;
use std::collections::{BTreeSet, HashMap};

/// Tag stored in translation pages (not host data).
const TRANSLATION_TAG: u64 = u64::MAX - 1;

/// Most rounds of "fix the moved pages' mappings, which may run GC again" after one write.
const AFTER_GC_ROUNDS_MAX: u32 = 64;

/// `L` and `R`: the inner page FTL's map entry widths (see [`PageFtl`]).
pub(crate) struct Dftl<P, const L: usize = 3, const R: usize = 3> {
    pub(crate) inner: PageFtl<P, L, R>,
    host_pages: u64,
    per_tpage: u64,
    capacity: usize,
    /// lpn -> dirty, in recency order (the CMT).
    pub(crate) cmt: Lru<u64, bool>,
    /// tvpn -> cached dirty lpns of that translation page (lookups only, never iterated).
    dirty_by_tpage: HashMap<u64, Vec<u64>>,
    /// Host accesses in the current window, and the flash work done when it began.
    window_accesses: u64,
    window_work_at_start: u64,
    /// Work a window of host accesses may do ([`runaway_work_per_access`] x window).
    window_work_max: u64,
}

/// Host accesses per window over which the flash work (translation writes + GC page
/// copies) is averaged.
const RUNAWAY_WINDOW_ACCESSES: u64 = 1024;

/// Most flash work (GC page copies + translation writes) one host access may cause on
/// average before DFTL's GC counts as runaway, from the geometry: a GC victim holds at most
/// `ppb - 1` valid pages, so freeing the page a host write needs copies fewer than `ppb`
/// pages, and updating their mappings rewrites at most one translation page per moved page:
/// fewer than `2 ppb` units. More, averaged over a window, means GC's translation updates
/// consume more pages than its victims free (each rewrite triggers more GC, which moves
/// more pages whose mappings need rewriting): a livelock, reported as an error.
fn runaway_work_per_access(ppb: u32) -> u64 {
    2 * ppb as u64
}

/// Mappings one translation page holds (4 bytes each).
fn per_tpage(cfg: &SsdConfig) -> u64 {
    let per_tpage = (cfg.geometry.page_bytes / 4) as u64;
    assert!(per_tpage >= 1, "a translation page holds a mapping");
    per_tpage
}

/// Logical pages DFTL's inner page FTL maps: the host's, then the translation pages.
pub(crate) fn mapped_pages(cfg: &SsdConfig) -> u64 {
    let host_pages = cfg.logical_pages();
    host_pages + host_pages.div_ceil(per_tpage(cfg))
}

impl<P: VictimPolicy, const L: usize, const R: usize> Dftl<P, L, R> {
    pub fn new(cfg: &SsdConfig, flash: &Flash) -> Dftl<P, L, R> {
        let host_pages = cfg.logical_pages();
        let per_tpage = per_tpage(cfg);
        let mut inner = PageFtl::with_logical_pages(cfg, flash, mapped_pages(cfg));
        inner.gc_moved = Some(Vec::new());
        Dftl {
            inner,
            host_pages,
            per_tpage,
            // A CMT never holds more entries than there are host pages: a larger setting
            // allocates and reports no more than that.
            capacity: (cfg.ftl.cmt_entries.max(1) as u64).min(host_pages.max(1)) as usize,
            cmt: Lru::new(),
            dirty_by_tpage: HashMap::new(),
            window_accesses: 0,
            window_work_at_start: 0,
            window_work_max: RUNAWAY_WINDOW_ACCESSES
                * runaway_work_per_access(cfg.geometry.pages_per_block),
        }
    }

    fn tpage_lpn(&self, lpn: u64) -> Lpn {
        assert!(lpn < self.host_pages, "translation of lpn {lpn}");
        Lpn(self.host_pages + lpn / self.per_tpage)
    }

    /// A write of the translation page of `lpn` at `now`.
    fn translation_write(&self, lpn: u64, now: SimTime) -> HostWrite {
        HostWrite {
            lpn: self.tpage_lpn(lpn),
            stream: StreamId(0),
            data: PageWrite::tag(TRANSLATION_TAG),
            now,
        }
    }

    /// Read translation page of `lpn` (if it was ever written). Returns the completion time.
    fn read_tpage(
        &mut self,
        flash: &mut Flash,
        lpn: u64,
        now: SimTime,
    ) -> Result<SimTime, SsdError> {
        let (t, ppn) = self.inner.read(flash, self.tpage_lpn(lpn), now)?;
        if ppn.is_some() {
            flash.stats.translation_reads += 1;
        }
        Ok(t)
    }

    /// Rewrite translation page of `lpn` (read-modify-write); cleans its cached dirty entries.
    fn write_tpage(
        &mut self,
        flash: &mut Flash,
        lpn: u64,
        now: SimTime,
    ) -> Result<SimTime, SsdError> {
        let t = self.read_tpage(flash, lpn, now)?;
        flash.stats.translation_writes += 1;
        let t = self.inner.write(flash, self.translation_write(lpn, t))?;
        for l in self
            .dirty_by_tpage
            .remove(&(lpn / self.per_tpage))
            .unwrap_or_default()
        {
            if let Some(dirty) = self.cmt.peek_mut(&l) {
                *dirty = false;
            }
        }
        self.after_gc(flash, t)
    }

    /// Make `lpn`'s mapping cached (loading and evicting as needed); mark it dirty if `dirty`.
    fn translate(
        &mut self,
        flash: &mut Flash,
        lpn: u64,
        dirty: bool,
        now: SimTime,
    ) -> Result<SimTime, SsdError> {
        if let Some(cached) = self.cmt.get(&lpn) {
            let was_dirty = *cached;
            *cached |= dirty;
            if dirty && !was_dirty {
                self.dirty_by_tpage
                    .entry(lpn / self.per_tpage)
                    .or_default()
                    .push(lpn);
            }
            return Ok(now);
        }
        let mut t = now;
        if self.cmt.len() >= self.capacity {
            let (victim, victim_dirty) = self.cmt.pop_lru().expect("a full CMT has entries");
            if victim_dirty {
                t = self.write_tpage(flash, victim, t)?;
            }
        }
        t = self.read_tpage(flash, lpn, t)?;
        self.cmt.insert(lpn, dirty);
        assert!(self.cmt.len() <= self.capacity, "CMT beyond its capacity");
        if dirty {
            self.dirty_by_tpage
                .entry(lpn / self.per_tpage)
                .or_default()
                .push(lpn);
        }
        Ok(t)
    }

    /// Fix the mappings of pages the inner GC moved.
    fn after_gc(&mut self, flash: &mut Flash, now: SimTime) -> Result<SimTime, SsdError> {
        let mut t = now;
        // Bounded: each round's translation writes move at most a few pages. When they move
        // more than GC frees (a tiny CMT on a device of many translation pages), the rounds
        // never end: that is an error, not a livelock.
        for _ in 0..AFTER_GC_ROUNDS_MAX {
            let moved = std::mem::take(self.inner.gc_moved.as_mut().expect("recording"));
            if moved.is_empty() {
                return Ok(t);
            }
            let mut uncached = BTreeSet::new();
            for lpn in moved
                .into_iter()
                .map(u64::from)
                .filter(|&l| l < self.host_pages)
            {
                match self.cmt.peek_mut(&lpn) {
                    Some(d) if !*d => {
                        *d = true;
                        self.dirty_by_tpage
                            .entry(lpn / self.per_tpage)
                            .or_default()
                            .push(lpn);
                    }
                    Some(_) => {}
                    None => {
                        uncached.insert(lpn / self.per_tpage);
                    }
                }
            }
            for tvpn in uncached {
                let l = tvpn * self.per_tpage;
                t = self.read_tpage(flash, l, t)?;
                flash.stats.translation_writes += 1;
                t = self.inner.write(flash, self.translation_write(l, t))?;
            }
        }
        Ok(t)
    }

    fn cannot_keep_up(&self) -> SsdError {
        SsdError::GcCannotKeepUp {
            cmt_entries: self.capacity,
            translation_pages: self.host_pages.div_ceil(self.per_tpage),
        }
    }

    /// Count a host access: an error as soon as the window's work passes its budget (so a
    /// runaway is refused within a window's budget of work, not after the window's end);
    /// a new window starts every `RUNAWAY_WINDOW_ACCESSES` accesses.
    fn watch_runaway(&mut self, flash: &Flash) -> Result<(), SsdError> {
        let spent = work(flash) - self.window_work_at_start;
        if spent > self.window_work_max {
            return Err(self.cannot_keep_up());
        }
        self.window_accesses += 1;
        if self.window_accesses == RUNAWAY_WINDOW_ACCESSES {
            self.window_accesses = 0;
            self.window_work_at_start = work(flash);
        }
        Ok(())
    }
}

/// Flash work done so far that a host access can cause beyond its own page.
fn work(flash: &Flash) -> u64 {
    flash.stats.translation_writes + flash.stats.gc_pages_copied
}

impl<P: VictimPolicy, const L: usize, const R: usize> Ftl for Dftl<P, L, R> {
    fn logical_pages(&self) -> u64 {
        self.host_pages
    }

    fn write(&mut self, flash: &mut Flash, w: HostWrite) -> Done {
        let t = self.translate(flash, w.lpn.0, true, w.now)?;
        let done = self.inner.write(flash, HostWrite { now: t, ..w })?;
        let fixed = self.after_gc(flash, t)?;
        self.watch_runaway(flash)?;
        Ok(done.max(fixed))
    }

    fn read(&mut self, flash: &mut Flash, lpn: Lpn, now: SimTime) -> Found {
        let t = self.translate(flash, lpn.0, false, now)?;
        self.watch_runaway(flash)?;
        self.inner.read(flash, lpn, t)
    }

    fn trim(&mut self, flash: &mut Flash, lpn: Lpn, now: SimTime) -> Done {
        let t = self.translate(flash, lpn.0, true, now)?;
        self.watch_runaway(flash)?;
        self.inner.trim(flash, lpn, t)
    }

    /// CMT entries (lpn + ppn: 8 B each, at capacity) + GTD (4 B per translation page).
    fn mapping_bytes(&self, _flash: &Flash) -> u64 {
        let tpages = self.host_pages.div_ceil(self.per_tpage);
        self.capacity as u64 * 8 + tpages * 4
    }

    fn verify(&self, flash: &Flash) -> Result<(), InvariantError> {
        if self.cmt.len() > self.capacity {
            return Err(InvariantError::Count {
                what: "CMT entries at most its capacity",
                expected: self.capacity as u64,
                found: self.cmt.len() as u64,
            });
        }
        // Every cached lpn is a host page (translation pages are never cached).
        if let Some((&lpn, _)) = self.cmt.iter().find(|(&l, _)| l >= self.host_pages) {
            return Err(InvariantError::Count {
                what: "cached lpn below the host's logical pages",
                expected: self.host_pages,
                found: lpn,
            });
        }
        self.inner.verify(flash)
    }
}
