//! One-pass LRU hit ratios for every buffer size (Mattson et al., 1970) and, from them, the
//! whole `lru-ext` grid.
//!
//! Model: LRU is a stack algorithm; a reference hits in an LRU buffer of `M` pages iff its stack
//! distance `d` (distinct pages referenced since the page's previous reference, itself included)
//! is at most `M`. Each page's last reference time carries a marker in a Fenwick tree over
//! times, so `d` is the number of markers at or after the page's last time: O(log n) per
//! reference. When the times run out the live markers are renumbered in order (amortized O(1)),
//! so memory is O(distinct pages), never O(references).
//!
//! `lru-ext` (main `M`, flash FIFO `F`) holds exactly the pages of an LRU buffer of `M + F`
//! (main = the top `M` of the stack; the FIFO receives main's victims in stack order and loses
//! them in that order, and a page read back leaves it), so its hits are `d <= M` and its
//! extended hits `M < d <= M + F`. Dirty write-backs are counted per size too: for each page,
//! `T` = the least size at which the page is still dirty (0 after a write, else the largest
//! distance since its last write); a page evicted between two references (sizes `M < d`) is
//! dirty at sizes `M >= T`: a range added to a difference array.

use crate::Counts;
use rustc_hash::FxHashMap;

const NEVER_WRITTEN: u32 = u32::MAX;

#[derive(Clone, Copy)]
struct Last {
    time: u32,
    /// Least main size at which the page is dirty now (`NEVER_WRITTEN`: clean at every size).
    dirty_from: u32,
}

/// Stack distances of a page-reference stream; see the module docs.
pub struct StackDistances {
    last: FxHashMap<u64, Last>,
    /// Fenwick tree over times `0..tree.len() - 1` (1-based inside), one marker per live page.
    tree: Vec<u32>,
    now: u32,
    /// `hist[d]`: references at stack distance `d` (index 0 unused).
    hist: Vec<u64>,
    /// Difference array over main sizes of dirty evictions between references.
    dirty_diff: Vec<i64>,
    references: u64,
    writes: u64,
}

impl Default for StackDistances {
    fn default() -> Self {
        StackDistances::new()
    }
}

impl StackDistances {
    pub fn new() -> StackDistances {
        StackDistances {
            last: FxHashMap::default(),
            tree: vec![0; 1 << 12],
            now: 0,
            hist: vec![0; 2],
            dirty_diff: vec![0; 2],
            references: 0,
            writes: 0,
        }
    }

    /// Distinct pages seen so far.
    pub fn distinct(&self) -> usize {
        self.last.len()
    }

    /// Record one reference; its stack distance (None: first reference).
    #[inline]
    pub fn reference(&mut self, page: u64, write: bool) -> Option<u32> {
        if self.now as usize + 1 >= self.tree.len() {
            self.compact();
        }
        self.references += 1;
        self.writes += write as u64;
        let t = self.now;
        self.now += 1;
        let live = self.last.len() as u32;
        let d = match self.last.get_mut(&page) {
            Some(e) => {
                let d = live - prefix(&self.tree, e.time);
                add(&mut self.tree, e.time, -1);
                let from = e.dirty_from.max(1);
                if from < d {
                    self.dirty_diff[from as usize] += 1;
                    self.dirty_diff[d as usize] -= 1;
                }
                e.time = t;
                e.dirty_from = if write { 0 } else { e.dirty_from.max(d) };
                self.hist[d as usize] += 1;
                Some(d)
            }
            None => {
                let dirty_from = if write { 0 } else { NEVER_WRITTEN };
                self.last.insert(
                    page,
                    Last {
                        time: t,
                        dirty_from,
                    },
                );
                let n = self.last.len() + 2;
                if self.hist.len() < n {
                    self.hist.resize(n.next_power_of_two(), 0);
                    self.dirty_diff.resize(n.next_power_of_two(), 0);
                }
                None
            }
        };
        add(&mut self.tree, t, 1);
        d
    }

    /// Renumber the live markers 0.. in time order and rebuild the tree with room to spare.
    fn compact(&mut self) {
        let mut live: Vec<(u32, u64)> = self.last.iter().map(|(&p, e)| (e.time, p)).collect();
        live.sort_unstable();
        for (i, &(_, p)) in live.iter().enumerate() {
            if let Some(e) = self.last.get_mut(&p) {
                e.time = i as u32;
            }
        }
        let n = live.len();
        let cap = (2 * n + 2).max(1 << 12);
        assert!(cap < u32::MAX as usize, "too many distinct pages");
        self.tree = vec![0; cap + 1];
        self.tree[1..=n].fill(1);
        for i in 1..=cap {
            let j = i + (i & i.wrapping_neg());
            if j <= cap {
                self.tree[j] += self.tree[i];
            }
        }
        self.now = n as u32;
    }

    /// The curve and dirty-eviction counts as of now (the stream may go on afterwards).
    pub fn curve(&self) -> LruCurve {
        let distinct = self.last.len();
        let mut hits_upto = vec![0u64; distinct + 1];
        for d in 1..=distinct {
            hits_upto[d] = hits_upto[d - 1] + self.hist.get(d).copied().unwrap_or(0);
        }
        // Pages not referenced again: at sizes below their final depth they were evicted.
        let mut diff = self.dirty_diff.clone();
        diff.resize(distinct + 2, 0);
        let live = distinct as u32;
        for e in self.last.values() {
            let depth = live - prefix(&self.tree, e.time);
            let from = e.dirty_from.max(1);
            if from < depth {
                diff[from as usize] += 1;
                diff[depth as usize] -= 1;
            }
        }
        let mut dirty_evictions = vec![0u64; distinct + 1];
        let mut run = 0i64;
        for m in 1..=distinct {
            run += diff[m];
            dirty_evictions[m] = run as u64;
        }
        LruCurve {
            references: self.references,
            writes: self.writes,
            hits_upto,
            dirty_evictions,
        }
    }
}

/// Sum of markers at times `0..t`.
#[inline]
fn prefix(tree: &[u32], t: u32) -> u32 {
    let mut i = t as usize;
    let mut s = 0;
    while i > 0 {
        s += tree[i];
        i &= i - 1;
    }
    s
}

#[inline]
fn add(tree: &mut [u32], t: u32, delta: i32) {
    let mut i = t as usize + 1;
    while i < tree.len() {
        tree[i] = tree[i].wrapping_add_signed(delta);
        i += i & i.wrapping_neg();
    }
}

/// Hit counts of LRU at every size; see the module docs.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LruCurve {
    pub references: u64,
    pub writes: u64,
    /// `hits_upto[m]`: hits of an LRU buffer of `m` pages (`m` up to the distinct pages).
    hits_upto: Vec<u64>,
    /// `dirty_evictions[m]`: pages evicted dirty from an LRU buffer of `m` pages.
    dirty_evictions: Vec<u64>,
}

/// One point of the `lru-ext` grid.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct LruExtPoint {
    pub size_pages: usize,
    pub ext_pages: usize,
    pub counts: Counts,
}

impl LruCurve {
    pub fn distinct(&self) -> usize {
        self.hits_upto.len() - 1
    }

    /// Hits of an LRU buffer of `size_pages` pages.
    pub fn hits(&self, size_pages: usize) -> u64 {
        self.hits_upto[size_pages.min(self.distinct())]
    }

    /// Sizes at which the hit count grows (the curve's steps), with the hits there.
    pub fn steps(&self) -> impl Iterator<Item = (usize, u64)> + '_ {
        (1..self.hits_upto.len())
            .filter(|&m| self.hits_upto[m] != self.hits_upto[m - 1])
            .map(|m| (m, self.hits_upto[m]))
    }

    /// Everything [`crate::BufferSim`] counts for `lru-ext` with `size_pages` of main and
    /// `ext_pages` of flash (plain `lru` with 0), without replaying the trace.
    pub fn lru_ext(&self, size_pages: usize, ext_pages: usize) -> LruExtPoint {
        let n = self.distinct();
        let (m, total) = (
            size_pages.min(n),
            size_pages.saturating_add(ext_pages).min(n),
        );
        let hits = self.hits_upto[m];
        let misses = self.references - hits;
        let ext_hits = self.hits_upto[total] - hits;
        let evictions = misses - m as u64;
        let flash_writes = if ext_pages > 0 { evictions } else { 0 };
        let flash_end = (total - m) as u64;
        let counts = Counts {
            references: self.references,
            writes: self.writes,
            hits,
            misses,
            ext_hits,
            disk_reads: misses - ext_hits,
            disk_writes: self.dirty_evictions[m],
            flash_reads: ext_hits,
            flash_writes,
            flash_displaced: flash_writes.saturating_sub(ext_hits + flash_end),
        };
        LruExtPoint {
            size_pages,
            ext_pages,
            counts,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn distances_of_a_hand_made_trace() {
        let mut s = StackDistances::new();
        let got: Vec<_> = [1u64, 2, 3, 1, 1, 3, 2]
            .iter()
            .map(|&p| s.reference(p, false))
            .collect();
        assert_eq!(
            got,
            vec![None, None, None, Some(3), Some(1), Some(2), Some(3)]
        );
        let c = s.curve();
        assert_eq!((c.hits(1), c.hits(2), c.hits(3), c.hits(9)), (1, 2, 4, 4));
    }

    #[test]
    fn compaction_keeps_distances() {
        let mut s = StackDistances::new();
        // Far more references than the initial tree's times.
        for i in 0..50_000u64 {
            s.reference(i % 7, false);
        }
        assert_eq!(s.reference(6, false), Some(7)); // the last refs were ..., 4, 5
        assert_eq!(s.reference(4, false), Some(3));
        assert_eq!(s.distinct(), 7);
    }
}
