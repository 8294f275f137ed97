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
//! the same.

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
fn index_of(ns: u64) -> usize {
    let bucket = LEADING_ZERO_BASE - (ns | SUB_BUCKET_MASK).leading_zeros();
    let sub_bucket = ns >> bucket;
    (((bucket as u64 + 1) << HALF_MAGNITUDE) + sub_bucket - (SUB_BUCKETS >> 1)) as usize
}

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

/// Latency counts per histogram bucket, since the last reset or take.
#[derive(Clone, Debug)]
pub(crate) struct LatencyCounts {
    counts: Vec<u64>,
    /// Where a latency the histogram cannot index is counted (its highest trackable value's).
    last: usize,
    recorded: u64,
    /// Every non-zero count lies in `lo..=hi` (none: `lo > hi`), so a reset and a histogram
    /// build touch only that range, not all ~270 KiB of counts.
    lo: usize,
    hi: usize,
}

impl LatencyCounts {
    /// No counts (zeroed memory: its pages become resident only as latencies land in them).
    pub fn new() -> LatencyCounts {
        let len = COUNTS_LEN;
        let last = index_of(LATENCY_HIGHEST_NS);
        assert!(
            last < len && index_of(1) == 1 && lowest_value_of(last) <= LATENCY_HIGHEST_NS,
            "latency buckets: {len} counts, highest at {last}"
        );
        LatencyCounts {
            counts: vec![0; len],
            last,
            recorded: 0,
            lo: len,
            hi: 0,
        }
    }

    /// Where `ns` is counted: its bucket, or the highest trackable value's past the last.
    #[inline(always)]
    fn slot(&self, ns: u64) -> usize {
        let i = index_of(ns);
        if i < self.counts.len() {
            i
        } else {
            self.last
        }
    }

    /// Count one request of `ns` nanoseconds.
    #[inline(always)]
    pub fn record(&mut self, ns: u64) {
        let i = self.slot(ns);
        self.counts[i] += 1;
        self.recorded += 1;
        self.lo = self.lo.min(i);
        self.hi = self.hi.max(i);
    }

    pub fn is_empty(&self) -> bool {
        self.recorded == 0
    }

    pub fn reset(&mut self) {
        if self.recorded > 0 {
            // In place (a fresh zeroed vector measured ~400 KiB more at peak in a timed run:
            // the allocator zeroes it in heap memory, and the old one stays resident there).
            self.counts[self.lo..=self.hi].fill(0);
            self.recorded = 0;
            (self.lo, self.hi) = (self.counts.len(), 0);
        }
    }

    /// The counts as a histogram of the device's bounds.
    pub fn histogram(&self) -> Histogram<u64> {
        let mut h = latency_histogram();
        if self.recorded == 0 {
            return h;
        }
        // Most buckets are empty: skip them 16 at a time (an OR of 16 counts is a few vector
        // instructions), then record each non-empty one at its lowest value.
        const RUN: usize = 16;
        let lo = self.lo;
        assert!(lo <= self.hi, "latencies recorded outside their range");
        for (r, run) in self.counts[lo..=self.hi].chunks(RUN).enumerate() {
            if run.iter().fold(0, |any, &n| any | n) == 0 {
                continue;
            }
            for (j, &n) in run.iter().enumerate().filter(|(_, &n)| n > 0) {
                h.record_n(lowest_value_of(lo + r * RUN + j), n)
                    .expect("a bucket's lowest value lies in the histogram");
            }
        }
        assert_eq!(h.len(), self.recorded, "latencies counted vs histogram");
        h
    }

    /// Add the counts of `h` (a histogram of the device's bounds).
    pub fn add(&mut self, h: &Histogram<u64>) {
        for v in h.iter_recorded() {
            let i = self.slot(v.value_iterated_to());
            self.counts[i] += v.count_at_value();
            self.recorded += v.count_at_value();
            self.lo = self.lo.min(i);
            self.hi = self.hi.max(i);
        }
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
    fn a_histogram_added_back_gives_the_same_counts() {
        let mut counts = LatencyCounts::new();
        latencies().into_iter().for_each(|ns| counts.record(ns));
        let h = counts.histogram();
        let mut again = LatencyCounts::new();
        again.add(&h);
        let diff: Vec<(usize, u64, u64)> = (0..counts.counts.len())
            .filter(|&i| again.counts[i] != counts.counts[i])
            .map(|i| (i, again.counts[i], counts.counts[i]))
            .take(10)
            .collect();
        assert!(diff.is_empty(), "index, added back, recorded: {diff:?}");
        assert!(again.histogram() == h);
        again.reset();
        assert!(again.is_empty() && again.histogram().is_empty());
        assert!(
            again.counts.iter().all(|&n| n == 0),
            "a reset clears every count"
        );
        // Counts after a reset: only the new ones.
        let mut want = latency_histogram();
        for ns in [7, 70_000, 3] {
            again.record(ns);
            want.saturating_record(ns);
        }
        assert!(again.histogram() == want);
    }
}
