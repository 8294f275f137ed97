//! Lifetime analysis of a write stream (P5's Table 1): for each class of writes (a data type,
//! a stream, a file, an LBA range...), its share of the writes and the mean, median and log2
//! histogram of its pages' lifetimes.
//!
//! Definitions (P5, section 3-2: "after 752 write commands the data was updated"):
//! - Writes are numbered in order, one per page written: the `t`-th call to
//!   [`LifetimeTracker::record`] is write `t` (from 0).
//! - A page written at write `t1` and next overwritten (same logical page) at write `t2` has
//!   **lifetime `t2 − t1`** device page writes (so a page rewritten by the very next write lives
//!   1). Pages never overwritten have no lifetime (they are still alive; counted in `writes`, not
//!   in `overwritten`).
//! - A lifetime is **attributed to the class of the page that died** (the write at `t1`): it
//!   is how long that class's data lived, whatever class overwrote it.
//!
//! Precision: counts, shares, means and histograms are exact (the mean is a `u128` sum over
//! a count). The median is the ⌈n/2⌉-th smallest lifetime (the lower median), taken from an
//! HdrHistogram with 3 significant digits: exact for lifetimes below 2048 writes, within
//! 0.1 % above.
//!
//! Memory: 12 bytes per logical page ([`LastWrites`]) plus a few KiB to ~200 KiB per class.
//! [`LastWrites`] is the one per-page last-write bookkeeping, also used by
//! [`super::AutoStreams`].

use hdrhistogram::Histogram;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

const NEVER: u32 = u32::MAX;

/// Per logical page: the index of its last write and the (dense) class of that write.
/// Grows when a page beyond its size is written.
#[derive(Clone, Debug)]
pub struct LastWrites {
    /// Write index of each page's last write (valid where `class != NEVER`).
    at: Vec<u64>,
    /// Dense class index of each page's last write, `NEVER` if never written.
    class: Vec<u32>,
    /// Writes recorded so far (the index the next write gets).
    writes: u64,
}

/// What a write found at its logical page: the page it overwrote, if any.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Death {
    /// Dense class index of the overwritten page.
    pub class: u32,
    /// Its lifetime in page writes (≥ 1).
    pub lifetime: u64,
}

impl LastWrites {
    pub fn new(logical_pages: u64) -> LastWrites {
        LastWrites {
            at: vec![0; logical_pages as usize],
            class: vec![NEVER; logical_pages as usize],
            writes: 0,
        }
    }

    /// Writes recorded so far.
    pub fn writes(&self) -> u64 {
        self.writes
    }

    /// Count a write that names no class and leaves its page's last write as it was (a
    /// write the caller does not attribute).
    pub fn skip(&mut self) {
        self.writes += 1;
    }

    /// Record a write of `lpn` by dense class `class`; returns the page it overwrote.
    #[inline]
    pub fn write(&mut self, lpn: u64, class: u32) -> Option<Death> {
        assert!(class != NEVER, "class index {class} is reserved");
        let i = lpn as usize;
        if i >= self.class.len() {
            let n = (i + 1).max(self.class.len() * 2);
            self.at.resize(n, 0);
            self.class.resize(n, NEVER);
        }
        let t = self.writes;
        self.writes += 1;
        let old = std::mem::replace(&mut self.class[i], class);
        let at = std::mem::replace(&mut self.at[i], t);
        (old != NEVER).then(|| Death {
            class: old,
            lifetime: t - at,
        })
    }
}

/// Dense indices for sparse class ids, in order of first appearance (with a one-entry cache:
/// consecutive writes of one class are the common case).
#[derive(Clone, Debug, Default)]
pub(super) struct ClassIndex {
    index: BTreeMap<u32, u32>,
    last: Option<(u32, u32)>,
}

impl ClassIndex {
    /// Dense index of `class` and whether it is new.
    #[inline]
    pub fn get_or_insert(&mut self, class: u32) -> (u32, bool) {
        if let Some((c, i)) = self.last {
            if c == class {
                return (i, false);
            }
        }
        let n = self.index.len() as u32;
        let mut new = false;
        let i = *self.index.entry(class).or_insert_with(|| {
            new = true;
            n
        });
        self.last = Some((class, i));
        (i, new)
    }

    /// Dense indices in ascending class-id order.
    pub fn sorted(&self) -> impl Iterator<Item = (u32, u32)> + '_ {
        self.index.iter().map(|(&c, &i)| (c, i))
    }
}

/// Per-class accumulators.
#[derive(Clone, Debug)]
struct ClassStats {
    writes: u64,
    overwritten: u64,
    lifetime_sum: u128,
    /// Count of lifetimes in [2^i, 2^(i+1)).
    log2: [u64; 64],
    hist: Histogram<u64>,
}

impl ClassStats {
    fn new() -> ClassStats {
        ClassStats {
            writes: 0,
            overwritten: 0,
            lifetime_sum: 0,
            log2: [0; 64],
            hist: Histogram::new(3).expect("3 significant digits is a valid HdrHistogram"),
        }
    }

    fn died(&mut self, lifetime: u64) {
        self.overwritten += 1;
        self.lifetime_sum += lifetime as u128;
        self.log2[lifetime.ilog2() as usize] += 1;
        // Auto-resizing: recording any u64 succeeds.
        self.hist
            .record(lifetime)
            .expect("an auto-resizing histogram takes every value");
    }
}

/// Exact per-class lifetime accounting of a stream of page writes (see the module docs).
#[derive(Clone, Debug)]
pub struct LifetimeTracker {
    last: LastWrites,
    classes: ClassIndex,
    stats: Vec<ClassStats>,
}

/// P5's Table 1 for one run: one row per class, in ascending class order.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct LifetimeReport {
    pub total_writes: u64,
    pub classes: Vec<ClassLifetime>,
}

/// One class's row.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ClassLifetime {
    pub class: u32,
    /// Pages this class wrote.
    pub writes: u64,
    /// `writes / total_writes`.
    pub share: f64,
    /// Pages of this class that were overwritten (each gave one lifetime).
    pub overwritten: u64,
    /// Mean lifetime in page writes (`None` if none of its pages died).
    pub mean: Option<f64>,
    /// Lower median lifetime in page writes (see the module docs for precision).
    pub median: Option<u64>,
    /// `(bucket lower bound, count)` of lifetimes in `[2^i, 2^(i+1))`, non-empty buckets only,
    /// ascending.
    pub histogram: Vec<(u64, u64)>,
}

impl LifetimeTracker {
    /// A tracker for logical pages `0..logical_pages` (a write beyond grows it).
    pub fn new(logical_pages: u64) -> Self {
        LifetimeTracker {
            last: LastWrites::new(logical_pages),
            classes: ClassIndex::default(),
            stats: Vec::new(),
        }
    }

    /// One page written at logical page `lpn` by `class` (a data type, stream, file, LBA range...).
    #[inline]
    pub fn record(&mut self, lpn: u64, class: u32) {
        let (c, new) = self.classes.get_or_insert(class);
        if new {
            self.stats.push(ClassStats::new());
        }
        self.stats[c as usize].writes += 1;
        if let Some(d) = self.last.write(lpn, c) {
            self.stats[d.class as usize].died(d.lifetime);
        }
    }

    /// Writes recorded so far.
    pub fn total_writes(&self) -> u64 {
        self.last.writes()
    }

    pub fn report(&self) -> LifetimeReport {
        let total = self.last.writes();
        let classes = self
            .classes
            .sorted()
            .map(|(class, i)| row(class, &self.stats[i as usize], total))
            .collect();
        LifetimeReport {
            total_writes: total,
            classes,
        }
    }
}

fn row(class: u32, s: &ClassStats, total: u64) -> ClassLifetime {
    let died = s.overwritten > 0;
    ClassLifetime {
        class,
        writes: s.writes,
        share: if total == 0 {
            0.0
        } else {
            s.writes as f64 / total as f64
        },
        overwritten: s.overwritten,
        mean: died.then(|| s.lifetime_sum as f64 / s.overwritten as f64),
        median: died.then(|| s.hist.value_at_quantile(0.5)),
        histogram: s
            .log2
            .iter()
            .enumerate()
            .filter(|&(_, &n)| n > 0)
            .map(|(i, &n)| (1u64 << i, n))
            .collect(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn track(trace: &[(u64, u32)]) -> LifetimeReport {
        let mut t = LifetimeTracker::new(4);
        for &(lpn, class) in trace {
            t.record(lpn, class);
        }
        t.report()
    }

    #[test]
    fn hand_made_trace_gives_exact_lifetimes() {
        // t: 0    1    2    3    4    5    6    7
        //    A0   B1   A0   A2   B1   A0   B3   B2
        // deaths: t2 kills t0 (A, 2); t4 kills t1 (B, 3); t5 kills t2 (A, 3); t7 kills t3 (A, 4).
        let (a, b) = (10, 20);
        let r = track(&[
            (0, a),
            (1, b),
            (0, a),
            (2, a),
            (1, b),
            (0, a),
            (3, b),
            (2, b),
        ]);
        assert_eq!(r.total_writes, 8);
        let ca = &r.classes[0];
        assert_eq!((ca.class, ca.writes, ca.overwritten), (a, 4, 3));
        assert_eq!(ca.share, 0.5);
        assert_eq!(ca.mean, Some(3.0)); // (2 + 3 + 4) / 3
        assert_eq!(ca.median, Some(3));
        assert_eq!(ca.histogram, vec![(2, 2), (4, 1)]); // 2, 3 in [2, 4); 4 in [4, 8)
        let cb = &r.classes[1];
        assert_eq!((cb.class, cb.writes, cb.overwritten), (b, 4, 1));
        assert_eq!(cb.mean, Some(3.0));
        assert_eq!(cb.median, Some(3));
        assert_eq!(cb.histogram, vec![(2, 1)]);
    }

    #[test]
    fn lifetime_goes_to_the_class_that_died() {
        // Page 0 written by class 1, overwritten by class 2 five writes later.
        let r = track(&[(0, 1), (1, 3), (1, 3), (1, 3), (1, 3), (0, 2)]);
        let c1 = r.classes.iter().find(|c| c.class == 1).unwrap();
        let c2 = r.classes.iter().find(|c| c.class == 2).unwrap();
        assert_eq!(
            (c1.overwritten, c1.mean, c1.median),
            (1, Some(5.0), Some(5))
        );
        assert_eq!(c1.histogram, vec![(4, 1)]);
        assert_eq!(
            (c2.writes, c2.overwritten, c2.mean, c2.median),
            (1, 0, None, None)
        );
        assert!(c2.histogram.is_empty());
        let c3 = r.classes.iter().find(|c| c.class == 3).unwrap();
        assert_eq!(
            (c3.overwritten, c3.mean, c3.median),
            (3, Some(1.0), Some(1))
        );
        assert_eq!(c3.histogram, vec![(1, 3)]);
    }

    #[test]
    fn median_is_the_lower_median_and_histogram_is_log2() {
        // One class, page 0 rewritten at gaps 1, 2, 7, 8 (filler writes to other pages).
        let mut t = LifetimeTracker::new(2);
        t.record(0, 0);
        for gap in [1u64, 2, 7, 8] {
            for _ in 0..gap - 1 {
                t.record(1 + t.total_writes(), 9); // fresh pages: never die
            }
            t.record(0, 0);
        }
        let r = t.report();
        let c = &r.classes[0];
        assert_eq!(c.overwritten, 4);
        assert_eq!(c.mean, Some(4.5));
        assert_eq!(c.median, Some(2)); // sorted 1 2 7 8: the 2nd
        assert_eq!(c.histogram, vec![(1, 1), (2, 1), (4, 1), (8, 1)]);
        assert_eq!(r.classes[1].overwritten, 0);
        assert_eq!(r.total_writes, 1 + 1 + 2 + 7 + 8);
    }

    #[test]
    fn large_lifetimes_have_an_exact_mean_and_a_close_median() {
        let mut t = LifetimeTracker::new(1);
        let gap = 1_000_003u64;
        t.record(0, 0);
        for round in 0..3 {
            for k in 0..gap - 1 {
                t.record(1 + round * gap + k, 1);
            }
            t.record(0, 0);
        }
        let c = &t.report().classes[0];
        assert_eq!(c.mean, Some(gap as f64));
        let m = c.median.unwrap() as f64;
        assert!((m - gap as f64).abs() / gap as f64 <= 0.001, "{m}");
        assert_eq!(c.histogram, vec![(1 << 19, 3)]);
    }

    #[test]
    fn empty_tracker_reports_nothing() {
        let r = LifetimeTracker::new(0).report();
        assert_eq!(r.total_writes, 0);
        assert!(r.classes.is_empty());
    }
}
