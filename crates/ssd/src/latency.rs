//! The device's per-request latency record: counts in the buckets of the latency histogram
//! ([`crate::stats::latency_histogram`]), kept as a plain array and turned into an
//! `hdrhistogram::Histogram` only when asked for one.
//!
//! Model: a request's latency is counted at the histogram's own bucket index, computed here
//! from the histogram's bounds (lowest 1 ns, 3 significant digits: 2,048 sub-buckets, unit
//! 1 ns) with a shift and a leading-zero count; a latency the histogram cannot index is
//! counted at its highest trackable value, as `Histogram::saturating_record` does. Recording
//! is one add (`saturating_record` also checks bounds, keeps min and max and the total: ~60
//! instructions a request, which a timed run of small writes paid on every one).
//!
//! Invariant (tested against `saturating_record`): the histogram [`LatencyCounts::histogram`]
//! builds equals, bucket by bucket and in its total, min and max, the one the same latencies
//! recorded one by one would give; so every figure read from it (mean, quantiles, max) is
//! the same. Likewise the figures [`LatencyCounts::sample`] computes for an interval from its
//! counts (mean, p99, p999, max) are, to the bit, those of the histogram of the interval's
//! latencies: a timed run's timeline samples 50 intervals, and building a ~270 KiB histogram
//! for each, then adding it to a total, cost ~50 M instructions a run.

use crate::stats::{latency_histogram, LATENCY_HIGHEST_NS, LATENCY_SIGFIG};
use hdrhistogram::Histogram;

/// Sub-buckets per bucket at [`LATENCY_SIGFIG`] digits: the power of two at or above
/// `2 * 10^digits` (hdrhistogram's rule).
const SUB_BUCKETS: u64 = (2 * 10u64.pow(LATENCY_SIGFIG as u32)).next_power_of_two();
/// log2 of half the sub-buckets: a bucket's index base moves by this many bits.
const HALF_MAGNITUDE: u32 = SUB_BUCKETS.trailing_zeros() - 1;
/// Bucket 0's values: every bit below the sub-bucket count.
const SUB_BUCKET_MASK: u64 = SUB_BUCKETS - 1;
/// `64 - unit magnitude (0: lowest value 1) - half magnitude - 1`.
const LEADING_ZERO_BASE: u32 = 64 - HALF_MAGNITUDE - 1;

/// Counts of the histogram (hdrhistogram's `distinct_values`): half a bucket of sub-buckets per
/// bucket needed to cover [`LATENCY_HIGHEST_NS`], and one more (bucket 0 is whole).
pub(crate) const COUNTS_LEN: usize = {
    let mut buckets = 1;
    let mut untrackable = SUB_BUCKETS;
    while untrackable <= LATENCY_HIGHEST_NS {
        untrackable <<= 1;
        buckets += 1;
    }
    (buckets + 1) * (SUB_BUCKETS as usize >> 1)
};

/// The histogram's bucket index of `ns` (any value; may be past the last index).
#[inline(always)]
const fn index_of(ns: u64) -> usize {
    let bucket = LEADING_ZERO_BASE - (ns | SUB_BUCKET_MASK).leading_zeros();
    let sub_bucket = ns >> bucket;
    (((bucket as u64 + 1) << HALF_MAGNITUDE) + sub_bucket - (SUB_BUCKETS >> 1)) as usize
}

/// Where a latency the histogram cannot index is counted: its highest trackable value's
/// bucket.
const LAST: usize = index_of(LATENCY_HIGHEST_NS);
const _: () = assert!(LAST < COUNTS_LEN, "the highest trackable value has a count");

/// The lowest value counted at `index` (a value [`index_of`] maps to it).
fn lowest_value_of(index: usize) -> u64 {
    let half = SUB_BUCKETS >> 1;
    let i = index as u64;
    match (i >> HALF_MAGNITUDE).checked_sub(1) {
        // The lower half of bucket 0: the value is the index.
        None => i,
        Some(bucket) => ((i & (half - 1)) + half) << bucket,
    }
}

/// The size of the range of values counted at `index` (hdrhistogram's `equivalent_range` of
/// its lowest value): 1 in bucket 0, `2^bucket` above.
fn range_of(index: usize) -> u64 {
    match ((index as u64) >> HALF_MAGNITUDE).checked_sub(1) {
        None => 1,
        Some(bucket) => 1 << bucket,
    }
}

/// What the histogram of an interval's latencies would report: the same figures, computed
/// from the counts (see [`LatencyCounts::sample`]).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct LatencySample {
    /// Requests in the interval.
    pub count: u64,
    /// `Histogram::mean`, ns.
    pub mean: f64,
    /// `Histogram::value_at_quantile(0.99)` and `(0.999)`, ns.
    pub p99: u64,
    pub p999: u64,
    /// `Histogram::max`, ns.
    pub max: u64,
}

/// Counts per bucket, and the range of indexes that holds every non-zero one (kept as
/// counts are added: two compares an add, which a timed closed loop makes once per row of
/// equal latencies), so that a reset, a sample and a histogram build read only that range
/// (was: found by a scan of up to ~270 KiB, 50 times a timed run).
#[derive(Clone, Debug)]
struct Counts {
    /// Fixed length, so an index clamped below [`COUNTS_LEN`] needs no bounds check.
    counts: Box<[u64; COUNTS_LEN]>,
    recorded: u64,
    /// Every non-zero count lies in `lo..hi`, and `counts[lo]` and `counts[hi - 1]` are
    /// non-zero (none recorded: `COUNTS_LEN..0`).
    lo: usize,
    hi: usize,
}

/// Counts scanned (or skipped) together: an OR of 16 counts is a few vector instructions.
const RUN: usize = 16;
const _: () = assert!(COUNTS_LEN.is_multiple_of(RUN), "counts in whole runs");

impl Counts {
    /// No counts (zeroed memory: its pages become resident only as counts land in them).
    fn new() -> Counts {
        let counts: Box<[u64]> = vec![0; COUNTS_LEN].into_boxed_slice();
        Counts {
            counts: counts.try_into().expect("COUNTS_LEN counts"),
            recorded: 0,
            lo: COUNTS_LEN,
            hi: 0,
        }
    }

    /// Count `n` (at least 1) more at index `i`.
    #[inline(always)]
    fn add(&mut self, i: usize, n: u64) {
        debug_assert!(n > 0, "an add of no count");
        self.counts[i] += n;
        self.recorded += n;
        self.lo = self.lo.min(i);
        self.hi = self.hi.max(i + 1);
    }

    /// No counts: the range empty again (the counts themselves cleared by the caller).
    fn cleared(&mut self) {
        self.recorded = 0;
        (self.lo, self.hi) = (COUNTS_LEN, 0);
    }

    /// The indexes `lo..hi` that hold every non-zero count (empty: none).
    fn range(&self) -> std::ops::Range<usize> {
        if self.recorded == 0 {
            return 0..0;
        }
        let (lo, hi) = (self.lo, self.hi);
        assert!(
            lo < hi && hi <= COUNTS_LEN && self.counts[lo] > 0 && self.counts[hi - 1] > 0,
            "non-zero counts in {lo}..{hi}"
        );
        lo..hi
    }

    /// Call `f` with each non-zero count in index order, as (index, count), and clear it:
    /// afterwards there are no counts.
    fn drain(&mut self, mut f: impl FnMut(usize, u64)) {
        let range = self.range();
        let lo = range.start;
        for (r, run) in self.counts[range].chunks_mut(RUN).enumerate() {
            if run.iter().fold(0, |any, &n| any | n) == 0 {
                continue;
            }
            for (j, n) in run.iter_mut().enumerate() {
                if *n > 0 {
                    f(lo + r * RUN + j, *n);
                    // Only counts that are non-zero are written (their pages are resident).
                    *n = 0;
                }
            }
        }
        self.cleared();
    }

    fn reset(&mut self) {
        if self.recorded > 0 {
            // In place and only over the counts' range (a fresh zeroed vector measured
            // ~400 KiB more at peak in a timed run: the allocator zeroes it in heap memory,
            // and the old one stays resident there).
            let range = self.range();
            self.counts[range].fill(0);
            self.cleared();
        }
    }

    /// The non-zero counts in index order, as (index, count).
    fn non_zero(&self) -> impl Iterator<Item = (usize, u64)> + '_ {
        let range = self.range();
        let lo = range.start;
        self.counts[range]
            .chunks(RUN)
            .enumerate()
            .filter(|(_, run)| run.iter().fold(0, |any, &n| any | n) != 0)
            .flat_map(move |(r, run)| {
                run.iter()
                    .enumerate()
                    .filter(|(_, &n)| n > 0)
                    .map(move |(j, &n)| (lo + r * RUN + j, n))
            })
    }
}

/// Latency counts per histogram bucket since the last reset: those of the current interval
/// (since the last [`LatencyCounts::sample`]) and those of the intervals before it.
#[derive(Clone, Debug)]
pub(crate) struct LatencyCounts {
    interval: Counts,
    earlier: Counts,
}

impl LatencyCounts {
    /// No counts.
    pub fn new() -> LatencyCounts {
        assert!(
            LAST < COUNTS_LEN && index_of(1) == 1 && lowest_value_of(LAST) <= LATENCY_HIGHEST_NS,
            "latency buckets: {COUNTS_LEN} counts, highest at {LAST}"
        );
        LatencyCounts {
            interval: Counts::new(),
            earlier: Counts::new(),
        }
    }

    /// Where `ns` is counted: its bucket, or the highest trackable value's past the last.
    #[inline(always)]
    fn slot(ns: u64) -> usize {
        let i = index_of(ns);
        if i < COUNTS_LEN {
            i
        } else {
            LAST
        }
    }

    /// Count one request of `ns` nanoseconds.
    #[inline(always)]
    pub fn record(&mut self, ns: u64) {
        let i = Self::slot(ns);
        self.interval.add(i, 1);
    }

    /// Count `n` requests of `ns` nanoseconds each (none: nothing).
    #[inline]
    pub fn record_n(&mut self, ns: u64, n: u64) {
        if n > 0 {
            self.interval.add(Self::slot(ns), n);
        }
    }

    pub fn is_empty(&self) -> bool {
        self.interval.recorded == 0 && self.earlier.recorded == 0
    }

    pub fn reset(&mut self) {
        self.interval.reset();
        self.earlier.reset();
    }

    /// The counts since the last reset as a histogram of the device's bounds.
    pub fn histogram(&self) -> Histogram<u64> {
        let mut h = latency_histogram();
        for (i, n) in self.earlier.non_zero().chain(self.interval.non_zero()) {
            h.record_n(lowest_value_of(i), n)
                .expect("a bucket's lowest value lies in the histogram");
        }
        assert_eq!(
            h.len(),
            self.earlier.recorded + self.interval.recorded,
            "latencies counted vs histogram"
        );
        h
    }

    /// Close the current interval: its figures as the histogram of its latencies would give
    /// them (`None`: no request in it), computed from its counts in one pass (no histogram is
    /// built), and its counts join the earlier ones (the device keeps every count since the
    /// last reset).
    pub fn sample(&mut self) -> Option<LatencySample> {
        if self.interval.recorded == 0 {
            return None;
        }
        let total = self.interval.recorded;
        // As `Histogram::value_at_quantile` (quantile > 0): the first bucket whose running
        // count reaches ceil(q * total), at least 1; reported at its highest value.
        let target = |q: f64| ((q * total as f64).ceil() as u64).max(1);
        let (t99, t999) = (target(0.99), target(0.999));
        let highest = |i: usize| lowest_value_of(i) + range_of(i) - 1;
        let (mut p99, mut p999) = (None, None);
        let mut mean = 0.0f64;
        let mut running = 0u64;
        let mut max_index = 0;
        let (interval, earlier) = (&mut self.interval, &mut self.earlier);
        // One pass over the interval's counts: its figures, and each count moved to the
        // earlier ones (which keep every count since the last reset).
        interval.drain(|i, n| {
            // As `Histogram::mean`: in index order, each bucket's median times its count over
            // the total, added to the running sum (the same operations, so the same bits).
            let median = lowest_value_of(i) + (range_of(i) >> 1);
            mean += median as f64 * n as f64 / total as f64;
            running += n;
            max_index = i;
            if p99.is_none() && running >= t99 {
                p99 = Some(highest(i));
            }
            if p999.is_none() && running >= t999 {
                p999 = Some(highest(i));
            }
            earlier.add(i, n);
        });
        assert_eq!(running, total, "latencies counted vs recorded");
        let sample = LatencySample {
            count: total,
            mean,
            p99: p99.expect("the running count reaches every target"),
            p999: p999.expect("the running count reaches every target"),
            // As `Histogram::max`: the highest value of the highest bucket counted.
            max: highest(max_index),
        };
        Some(sample)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Latencies across every bucket, the edges of buckets and values past the highest.
    fn latencies() -> Vec<u64> {
        let mut v: Vec<u64> = (1..5000).collect();
        let mut x = 0x9E37_79B9_7F4A_7C15u64;
        for _ in 0..20_000 {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            let bits = x % 64;
            v.push((x >> 8) >> (63 - bits.min(55)));
        }
        for shift in 10..50 {
            let p = 1u64 << shift;
            v.extend([p - 1, p, p + 1]);
        }
        v.extend([
            LATENCY_HIGHEST_NS - 1,
            LATENCY_HIGHEST_NS,
            LATENCY_HIGHEST_NS + 1,
        ]);
        v.extend([u64::MAX / 2, u64::MAX - 1]);
        v.retain(|&ns| ns >= 1);
        v
    }

    #[test]
    fn counts_have_the_histograms_length() {
        assert_eq!(COUNTS_LEN, latency_histogram().distinct_values());
        assert!(index_of(LATENCY_HIGHEST_NS) < COUNTS_LEN);
    }

    #[test]
    fn counts_build_the_histogram_saturating_record_builds() {
        let mut want = latency_histogram();
        let mut counts = LatencyCounts::new();
        for ns in latencies() {
            want.saturating_record(ns);
            counts.record(ns);
        }
        let got = counts.histogram();
        assert_eq!(got, want);
        // Rows of equal latencies counted at once count the same.
        let (mut rows, mut want_rows) = (LatencyCounts::new(), latency_histogram());
        for (k, &ns) in latencies().iter().enumerate() {
            let n = k as u64 % 3;
            rows.record_n(ns, n);
            for _ in 0..n {
                want_rows.saturating_record(ns);
            }
        }
        assert_eq!(rows.histogram(), want_rows, "rows counted with record_n");
        assert_eq!(got.len(), want.len());
        assert_eq!((got.min(), got.max()), (want.min(), want.max()));
        assert_eq!(got.mean(), want.mean());
        for q in [0.0, 0.5, 0.9, 0.99, 0.999, 1.0] {
            assert_eq!(got.value_at_quantile(q), want.value_at_quantile(q), "q {q}");
        }
        // Each bucket's lowest value is counted in that bucket.
        for v in latencies().into_iter().filter(|&v| v <= LATENCY_HIGHEST_NS) {
            assert_eq!(
                lowest_value_of(index_of(v)),
                want.lowest_equivalent(v),
                "{v}"
            );
        }
    }

    #[test]
    fn interval_samples_are_the_figures_of_their_histograms() {
        let all = latencies();
        let mut counts = LatencyCounts::new();
        let mut want_all = latency_histogram();
        assert_eq!(counts.sample(), None);
        // Intervals of different sizes, over different bucket ranges (one of a single
        // latency, one of latencies past the highest).
        for (k, part) in all
            .chunks(997)
            .chain([&[5u64][..], &[u64::MAX - 1, 3]])
            .enumerate()
        {
            let mut want = latency_histogram();
            for &ns in part {
                counts.record(ns);
                want.saturating_record(ns);
                want_all.saturating_record(ns);
            }
            let got = counts.sample().expect("an interval with latencies");
            assert_eq!(got.count, want.len(), "interval {k}");
            assert_eq!(
                got.mean.to_bits(),
                want.mean().to_bits(),
                "interval {k} mean"
            );
            assert_eq!(got.p99, want.value_at_quantile(0.99), "interval {k} p99");
            assert_eq!(got.p999, want.value_at_quantile(0.999), "interval {k} p999");
            assert_eq!(got.max, want.max(), "interval {k} max");
            assert_eq!(counts.sample(), None, "a sample closes its interval");
            // The device keeps every count since the reset.
            assert!(counts.histogram() == want_all, "after interval {k}");
        }
        counts.reset();
        assert!(counts.is_empty() && counts.histogram().is_empty());
        assert!(
            counts
                .interval
                .counts
                .iter()
                .chain(counts.earlier.counts.iter())
                .all(|&n| n == 0),
            "a reset clears every count"
        );
        // Counts after a reset: only the new ones.
        let mut want = latency_histogram();
        for ns in [7, 70_000, 3] {
            counts.record(ns);
            want.saturating_record(ns);
        }
        assert!(counts.histogram() == want);
        assert_eq!(counts.sample().map(|s| s.max), Some(want.max()));
    }
}
