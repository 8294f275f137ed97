//! Page allocation of the KV store: reference counts per page, free extents, a high-water mark.
//!
//! Model: every page the newest durable commit reaches (its header, index nodes, the data
//! pages its documents lie on) holds a count of the objects on it; the superblock slots are
//! fixed. A page whose count drops to 0 is *released*, not free: the durable commit may still
//! reach it, so it becomes free only when the next commit is durable ([`Alloc::commit_done`]).
//! Allocation is first fit over the free extents below the high-water mark `end`, else at
//! `end` — so pages are reused low first and the footprint stays near the live data.

use crate::error::EngineError;
use std::collections::BTreeMap;

/// Pages before the log: the two superblock slots.
pub const FIRST_LOG_PAGE: u64 = crate::pager::MetaSlots::PAGES;

pub struct Alloc {
    refs: Vec<u32>,
    data: Vec<bool>,
    /// Free extents below `end`: start -> pages. Change it only through `add_extent` and
    /// `take_extent`, which keep the two summaries below.
    free: BTreeMap<u64, u64>,
    /// Pages in `free` (compaction asks for it once per page it looks at).
    free_total: u64,
    /// How many extents of `free` have each length (the longest run in O(log n)).
    lengths: BTreeMap<u64, u64>,
    end: u64,
    capacity: u64,
    released: Vec<u64>,
    data_pages: u64,
    /// Pages referenced now (of every kind).
    pages_in_use: u64,
    /// Next fit (an append-only log that wraps, ForestDB's file): allocate from here on.
    /// `None`: first fit.
    cursor: Option<u64>,
    /// Hold released pages (`set_hold_released`): a durable commit moves them here instead of
    /// to `free`, until `end_generation`. Every page here has no reference and is not free.
    held: Vec<u64>,
    hold: bool,
    /// The next `commit_done` frees `held` with what it releases (`end_generation`).
    ending: bool,
}

impl Alloc {
    /// An allocator for `capacity` pages with nothing referenced and the log ending at `end`.
    pub fn new(capacity: u64, end: u64) -> Alloc {
        Alloc {
            refs: vec![0; capacity as usize],
            data: vec![false; capacity as usize],
            free: BTreeMap::new(),
            free_total: 0,
            lengths: BTreeMap::new(),
            end: end.clamp(FIRST_LOG_PAGE, capacity.max(FIRST_LOG_PAGE)),
            capacity,
            released: Vec::new(),
            data_pages: 0,
            pages_in_use: 0,
            cursor: None,
            held: Vec::new(),
            hold: false,
            ending: false,
        }
        .checked()
    }

    /// The bounds every operation keeps (cheap: no walk over pages or extents).
    fn checked(self) -> Alloc {
        assert!(
            FIRST_LOG_PAGE <= self.end.max(FIRST_LOG_PAGE)
                && self.end <= self.capacity.max(FIRST_LOG_PAGE),
            "log end {} outside {FIRST_LOG_PAGE}..={}",
            self.end,
            self.capacity
        );
        assert_eq!(self.refs.len(), self.data.len(), "one data flag per page");
        self
    }

    /// After references were rebuilt (at open): every unreferenced page below `end` is free.
    pub fn rebuild_free(&mut self) {
        self.free.clear();
        self.free_total = 0;
        self.lengths.clear();
        let mut p = FIRST_LOG_PAGE;
        while p < self.end {
            if self.refs[p as usize] == 0 {
                let s = p;
                while p < self.end && self.refs[p as usize] == 0 {
                    p += 1;
                }
                self.add_extent(s, p - s);
            } else {
                p += 1;
            }
        }
        self.shrink_end();
        assert!(
            self.free_total + FIRST_LOG_PAGE <= self.end.max(FIRST_LOG_PAGE),
            "{} free pages below a log end of {}",
            self.free_total,
            self.end
        );
    }

    /// The high-water mark: no page at or above it is in use.
    pub fn end(&self) -> u64 {
        self.end
    }
    pub fn capacity(&self) -> u64 {
        self.capacity
    }
    /// Data pages referenced now.
    pub fn data_pages(&self) -> u64 {
        self.data_pages
    }
    /// Pages referenced now, of every kind (data, index, headers).
    pub fn pages_in_use(&self) -> u64 {
        self.pages_in_use
    }
    /// Pages an allocation can take now (free extents and the room above the mark).
    pub fn free_pages(&self) -> u64 {
        assert!(
            self.end <= self.capacity,
            "log end {} past {}",
            self.end,
            self.capacity
        );
        self.capacity - self.end + self.free_total
    }
    /// The longest run of consecutive pages an allocation can take now.
    pub fn largest_run(&self) -> u64 {
        let above = self.capacity.saturating_sub(self.end);
        let longest = self.lengths.keys().next_back().copied().unwrap_or(0);
        assert!(
            longest <= self.free_total,
            "a run of {longest} in {} free pages",
            self.free_total
        );
        longest.max(above)
    }
    /// Whether `page` is a data page in use.
    pub fn is_data(&self, page: u64) -> bool {
        self.refs(page) > 0 && self.data[page as usize]
    }
    pub fn refs(&self, page: u64) -> u32 {
        self.refs.get(page as usize).copied().unwrap_or(0)
    }

    /// The parts of pages `first..first + n` that are free now, as extents.
    pub fn free_parts(&self, first: u64, n: u64) -> Vec<(u64, u64)> {
        let last = first.saturating_add(n);
        let mut out: Vec<(u64, u64)> = Vec::new();
        let mut push = |s: u64, e: u64| {
            let (s, e) = (s.max(first), e.min(last));
            if s < e {
                match out.last_mut() {
                    Some((ps, pn)) if *ps + *pn == s => *pn += e - s,
                    _ => out.push((s, e - s)),
                }
            }
        };
        let from = self
            .free
            .range(..=first)
            .next_back()
            .map_or(first, |(&s, _)| s);
        for (&s, &len) in self.free.range(from..last) {
            push(s, s + len);
        }
        push(self.end, self.capacity);
        assert!(
            out.iter().all(|&(s, n)| s >= first && s + n <= last)
                && out.windows(2).all(|w| w[0].0 + w[0].1 < w[1].0),
            "free parts are disjoint, ascending and inside {first}+{n}"
        );
        out
    }

    /// Allocate next fit from `page` on (an append-only log that wraps around to the lowest
    /// free pages when it reaches the device's end), instead of first fit.
    pub fn set_next_fit(&mut self, page: u64) {
        self.cursor = Some(page.clamp(FIRST_LOG_PAGE, self.capacity));
    }

    /// Hold released pages until the generation ends (ForestDB's file: a stale block stays in
    /// the file until compaction deletes the file) instead of freeing them when the commit
    /// that released them is durable.
    pub fn set_hold_released(&mut self, hold: bool) {
        assert!(
            hold || self.held.is_empty(),
            "held pages are freed by end_generation before holding stops"
        );
        self.hold = hold;
    }

    /// The commit being made ends the generation: its `commit_done` frees every held page
    /// with the pages it released.
    pub fn end_generation(&mut self) {
        self.ending = true;
    }

    /// Pages held now (released, not free: waiting for the generation's end).
    pub fn held_pages(&self) -> u64 {
        self.held.len() as u64
    }

    /// `n` consecutive pages at or after the cursor (None: none there; wrap around).
    fn next_fit(&mut self, c: u64, n: u64) -> Option<u64> {
        let within = self.free.range(..=c).next_back().map(|(&s, &len)| (s, len));
        let after = |free: &BTreeMap<u64, u64>| {
            free.range(c + 1..)
                .find(|(_, &l)| l >= n)
                .map(|(&s, &len)| (s, len))
        };
        let (s, len, at) = match within {
            Some((s, len)) if s + len >= c + n => (s, len, c),
            _ => match after(&self.free) {
                Some((s, len)) => (s, len, s),
                None if self.end + n <= self.capacity => {
                    let s = self.end;
                    self.end += n;
                    return Some(s);
                }
                None => return None,
            },
        };
        assert!(s <= at && at + n <= s + len, "the run lies in its extent");
        self.take_extent(s);
        if at > s {
            self.add_extent(s, at - s);
        }
        if s + len > at + n {
            self.add_extent(at + n, s + len - at - n);
        }
        Some(at)
    }

    /// `n` consecutive pages, first fit (next fit after `set_next_fit`).
    pub fn alloc(&mut self, n: u64) -> Result<u64, EngineError> {
        let n = n.max(1);
        if let Some(c) = self.cursor {
            if let Some(s) = self.next_fit(c, n) {
                self.assert_unused(s, n);
                self.cursor = Some(s + n);
                return Ok(s);
            }
        }
        let fit = self
            .free
            .iter()
            .find(|(_, &len)| len >= n)
            .map(|(&s, &len)| (s, len));
        if let Some((s, len)) = fit {
            self.take_extent(s);
            if len > n {
                self.add_extent(s + n, len - n);
            }
            self.assert_unused(s, n);
            self.cursor = self.cursor.map(|_| s + n);
            return Ok(s);
        }
        if self.end + n > self.capacity {
            return Err(EngineError::Full {
                what: "key-value store",
                reason: format!(
                    "{n} more pages do not fit: {} of {} pages are in use or not yet released \
                     (use a larger file, delete data, or lower the compaction threshold)",
                    self.end, self.capacity
                ),
            });
        }
        let s = self.end;
        self.end += n;
        assert!(self.end <= self.capacity, "allocated past the capacity");
        self.assert_unused(s, n);
        self.cursor = self.cursor.map(|_| s + n);
        Ok(s)
    }

    /// Pages handed out by `alloc` hold no object and lie in the log (cheap: an allocation's
    /// pages are about to be written anyway).
    fn assert_unused(&self, s: u64, n: u64) {
        assert!(
            s >= FIRST_LOG_PAGE && s + n <= self.end,
            "extent {s}+{n} outside the log"
        );
        assert!(
            self.refs[s as usize..(s + n) as usize]
                .iter()
                .all(|&r| r == 0),
            "extent {s}+{n} allocated while in use"
        );
    }

    /// Count one more object on pages `first..first + n`; `data` marks data pages.
    pub fn add_ref(&mut self, first: u64, n: u64, data: bool) {
        for p in first..first + n {
            let Some(r) = self.refs.get_mut(p as usize) else {
                continue;
            };
            if *r == 0 && data {
                self.data_pages += 1;
            }
            if *r == 0 {
                self.data[p as usize] = data;
                self.pages_in_use += 1;
            }
            assert!(*r < u32::MAX, "reference count of page {p} overflows");
            *r += 1;
        }
        assert!(
            self.data_pages <= self.pages_in_use && self.pages_in_use <= self.capacity,
            "more data pages than pages in use, or than pages"
        );
    }

    /// One object fewer on pages `first..first + n`; pages left empty are released.
    pub fn drop_ref(&mut self, first: u64, n: u64) {
        for p in first..first + n {
            let Some(r) = self.refs.get_mut(p as usize) else {
                continue;
            };
            if *r == 0 {
                continue;
            }
            *r -= 1;
            if *r == 0 {
                assert!(self.pages_in_use > 0, "page {p} released, none in use");
                self.pages_in_use -= 1;
                if self.data[p as usize] {
                    assert!(self.data_pages > 0, "data page {p} released, none counted");
                    self.data_pages -= 1;
                }
                self.released.push(p);
            }
        }
    }

    /// The commit that stopped referencing the released pages is durable: they are free.
    /// Returns them as extents (for trimming).
    pub fn commit_done(&mut self) -> Vec<(u64, u64)> {
        let mut pages = std::mem::take(&mut self.released);
        pages.retain(|&p| self.refs(p) == 0);
        pages.sort_unstable();
        pages.dedup();
        if self.hold && !self.ending {
            self.held.append(&mut pages);
            return Vec::new();
        }
        if std::mem::take(&mut self.ending) {
            let held = std::mem::take(&mut self.held);
            assert!(
                held.iter().all(|&p| self.refs(p) == 0),
                "a held page is never referenced again"
            );
            pages.extend(held);
            pages.sort_unstable();
            pages.dedup();
        }
        let mut extents: Vec<(u64, u64)> = Vec::new();
        for p in pages {
            match extents.last_mut() {
                Some((s, n)) if *s + *n == p => *n += 1,
                _ => extents.push((p, 1)),
            }
        }
        for &(s, n) in &extents {
            assert!(
                s >= FIRST_LOG_PAGE && s + n <= self.end,
                "freed {s}+{n} outside the log"
            );
            self.insert_free(s, n);
        }
        self.shrink_end();
        assert!(
            self.free_pages() <= self.capacity,
            "more free pages than pages"
        );
        extents
    }

    fn insert_free(&mut self, mut s: u64, mut n: u64) {
        if let Some((&ps, &pn)) = self.free.range(..s).next_back() {
            if ps + pn == s {
                self.take_extent(ps);
                s = ps;
                n += pn;
            }
        }
        if self.free.contains_key(&(s + n)) {
            n += self.take_extent(s + n);
        }
        self.add_extent(s, n);
    }

    fn shrink_end(&mut self) {
        while let Some((&s, &n)) = self.free.iter().next_back() {
            if s + n != self.end {
                break;
            }
            self.take_extent(s);
            self.end = s;
        }
        assert!(
            self.end >= FIRST_LOG_PAGE,
            "log end {} below the slots",
            self.end
        );
    }

    fn add_extent(&mut self, s: u64, n: u64) {
        assert!(n > 0, "an empty extent at {s}");
        let before = self.free.insert(s, n);
        assert_eq!(before, None, "extent at {s} added twice");
        self.free_total += n;
        *self.lengths.entry(n).or_insert(0) += 1;
    }

    /// Remove the extent starting at `s`; its length (0 if there is none).
    fn take_extent(&mut self, s: u64) -> u64 {
        let Some(n) = self.free.remove(&s) else {
            return 0;
        };
        assert!(
            n <= self.free_total,
            "extent of {n} pages, {} free",
            self.free_total
        );
        self.free_total -= n;
        if let Some(c) = self.lengths.get_mut(&n) {
            *c -= 1;
            if *c == 0 {
                self.lengths.remove(&n);
            }
        }
        n
    }

    /// Check the summaries against the extents (tests).
    #[cfg(test)]
    fn check(&self) {
        assert_eq!(self.free_total, self.free.values().sum::<u64>());
        let mut lengths = BTreeMap::new();
        for &n in self.free.values() {
            *lengths.entry(n).or_insert(0u64) += 1;
        }
        assert_eq!(lengths, self.lengths);
        let in_use = self.refs.iter().filter(|&&r| r > 0).count() as u64;
        assert_eq!(self.pages_in_use, in_use, "pages in use");
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn released_pages_are_free_only_after_the_commit_and_reused_low_first() {
        let mut a = Alloc::new(100, FIRST_LOG_PAGE);
        let x = a.alloc(3).unwrap();
        a.add_ref(x, 3, true);
        let y = a.alloc(2).unwrap();
        a.add_ref(y, 2, false);
        assert_eq!((x, y, a.end()), (2, 5, 7));
        a.drop_ref(x, 3);
        assert_eq!(a.alloc(1).unwrap(), 7, "released is not free yet");
        a.add_ref(7, 1, false);
        a.drop_ref(7, 1);
        a.commit_done();
        assert_eq!(a.alloc(2).unwrap(), 2);
        assert_eq!(a.data_pages(), 0);
        assert!(a.alloc(1000).is_err());
        a.check();
    }

    /// Random allocations, references and commits: the free-page count and the longest run
    /// agree with the extents they summarize.
    #[test]
    fn free_summaries_follow_the_extents() {
        let mut a = Alloc::new(400, FIRST_LOG_PAGE);
        let mut held: Vec<(u64, u64)> = Vec::new();
        let mut x = 7u64;
        for step in 0..3000u32 {
            x = x
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            let r = (x >> 33) as usize;
            if !r.is_multiple_of(3) || held.is_empty() {
                let n = 1 + (r % 9) as u64;
                if let Ok(s) = a.alloc(n) {
                    a.add_ref(s, n, r.is_multiple_of(2));
                    held.push((s, n));
                }
            } else {
                let (s, n) = held.swap_remove(r % held.len());
                a.drop_ref(s, n);
            }
            if step.is_multiple_of(7) {
                a.commit_done();
            }
            a.check();
            let longest = a.free.values().copied().max().unwrap_or(0);
            assert_eq!(a.largest_run(), longest.max(a.capacity() - a.end()));
            assert_eq!(
                a.free_pages(),
                a.capacity() - a.end() + a.free.values().sum::<u64>()
            );
        }
        // The free parts of any range are exactly its pages an allocation could take.
        for (first, n) in [(0u64, 400u64), (5, 17), (100, 1), (390, 30)] {
            let parts = a.free_parts(first, n);
            let pages: Vec<u64> = parts.iter().flat_map(|&(s, n)| s..s + n).collect();
            let want: Vec<u64> = (first..(first + n).min(400))
                .filter(|&p| {
                    p >= a.end()
                        || a.free
                            .range(..=p)
                            .next_back()
                            .is_some_and(|(&s, &l)| p < s + l)
                })
                .collect();
            assert_eq!(pages, want, "range {first}+{n}");
        }
        // A summary out of step with the extents is caught.
        a.free_total += 1;
        assert!(std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| a.check())).is_err());
    }
}
