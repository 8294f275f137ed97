//! Online lifetime grouping of write classes into device streams ([`AutoStreams`]): the
//! `auto` stream policy of the key-value store (classes = (file, data type)) and of
//! `flashlab sim` (classes = LBA ranges).
//!
//! Model:
//! - **Measure.** Each class's mean page lifetime (device page writes between a write and the
//!   next write of the same logical page, attributed to the page that died; see
//!   [`super::lifetime`]) is estimated by Little's law, `lifetime = live / rate`: `live` is
//!   the class's live pages (logical pages whose last write was of this class, from the shared
//!   per-page bookkeeping [`LastWrites`]), `rate` its share of the device's page writes, an
//!   EWMA over decision intervals (weight 1/2 on the newest interval). In steady state this is
//!   exactly the mean lifetime, and unlike an average of observed lifetimes it is not biased
//!   towards short lives (a cold class's long lifetimes are known before its pages die).
//! - **Decide**, every [`AutoStreams::interval`] page writes (default: a sixteenth of the
//!   logical pages, at least 1024): classes are binned by `log2(lifetime)` in quarter-octave
//!   bins and the bins are split into at most `max_streams` contiguous groups minimising the
//!   write-weighted squared spread of `log2(lifetime)` within groups (an exact dynamic
//!   programme, 1-D k-means; ties go to the earlier split), using the fewest groups whose
//!   weighted RMS spread is at most [`MAX_SPREAD_OCTAVES`] (half an octave): each stream costs
//!   open blocks (host and GC) in every pool, so classes of about the same lifetime share
//!   one. Groups are numbered from the longest-lived: stream 0 holds the longest-lived classes
//!   (so data written before the first decision, all on stream 0, is mostly where it belongs,
//!   and what lives long keeps its stream as groups change), the highest stream the
//!   shortest-lived. A class with no writes in the recent intervals (rate 0) joins stream 0.
//! - An interval in which fewer than half the writes overwrote a live page (a fill: nothing
//!   dies yet, so no lifetime is known, and Little's law needs a steady state) decides nothing:
//!   the mapping is kept and the interval is not folded into the rates.
//! - Until the first decision, and for a class first seen since the last one, the stream is 0.
//!
//! Deterministic: the result is a function of the sequence of `(lpn, class)` writes.

use super::lifetime::{ClassIndex, LastWrites};

/// Quarter-octave bins of `log2(lifetime)`.
const BINS_PER_OCTAVE: f64 = 4.0;
/// Lifetimes are clamped to `[1, 2^MAX_LOG2]` page writes.
const MAX_LOG2: f64 = 64.0;
/// Classes whose log2 lifetimes have a weighted RMS deviation of at most this many octaves
/// share a stream (no further stream is spent on them).
pub const MAX_SPREAD_OCTAVES: f64 = 0.5;

/// Online lifetime grouping (see the module docs).
#[derive(Clone, Debug)]
pub struct AutoStreams {
    max_streams: u16,
    interval: u64,
    last: LastWrites,
    classes: ClassIndex,
    /// Per dense class: live pages, writes in the current interval, EWMA write share, stream.
    live: Vec<u64>,
    window: Vec<u64>,
    rate: Vec<f64>,
    stream: Vec<u16>,
    window_writes: u64,
    /// Writes in the current interval that overwrote a live page.
    window_overwrites: u64,
    decisions: u64,
}

impl AutoStreams {
    /// Group into at most `max_streams` (≥ 1) streams, for logical pages `0..logical_pages`
    /// (a write beyond grows the bookkeeping).
    pub fn new(max_streams: u16, logical_pages: u64) -> Self {
        assert!(max_streams >= 1, "AutoStreams needs at least one stream");
        AutoStreams {
            max_streams,
            interval: (logical_pages / 16).max(1024),
            last: LastWrites::new(logical_pages),
            classes: ClassIndex::default(),
            live: Vec::new(),
            window: Vec::new(),
            rate: Vec::new(),
            stream: Vec::new(),
            window_writes: 0,
            window_overwrites: 0,
            decisions: 0,
        }
    }

    /// Re-decide every `writes` page writes instead of the default.
    pub fn with_interval(mut self, writes: u64) -> Self {
        assert!(
            writes >= 1,
            "the decision interval must be at least one write"
        );
        self.interval = writes;
        self
    }

    /// Page writes between two decisions.
    pub fn interval(&self) -> u64 {
        self.interval
    }

    /// Decisions taken so far.
    pub fn decisions(&self) -> u64 {
        self.decisions
    }

    /// Record a write; returns the stream (0..max_streams) `class` maps to now.
    #[inline]
    pub fn on_write(&mut self, lpn: u64, class: u32) -> u16 {
        let (c, new) = self.classes.get_or_insert(class);
        if new {
            self.live.push(0);
            self.window.push(0);
            self.rate.push(0.0);
            self.stream.push(0);
        }
        if let Some(d) = self.last.write(lpn, c) {
            self.live[d.class as usize] -= 1;
            self.window_overwrites += 1;
        }
        self.live[c as usize] += 1;
        self.window[c as usize] += 1;
        self.window_writes += 1;
        if self.window_writes >= self.interval {
            self.decide();
        }
        self.stream[c as usize]
    }

    /// The current `(class, stream)` of every class seen, in ascending class order.
    pub fn mapping(&self) -> Vec<(u32, u16)> {
        self.classes
            .sorted()
            .map(|(class, i)| (class, self.stream[i as usize]))
            .collect()
    }

    /// The current lifetime estimate of every class seen (page writes; `None` for a class
    /// without recent writes or before the first decision), in ascending class order.
    pub fn estimates(&self) -> Vec<(u32, Option<f64>)> {
        self.classes
            .sorted()
            .map(|(class, i)| (class, self.estimate(i as usize)))
            .collect()
    }

    fn estimate(&self, c: usize) -> Option<f64> {
        (self.rate[c] > 0.0).then(|| (self.live[c].max(1) as f64 / self.rate[c]).max(1.0))
    }

    /// Fold the interval into the rates and regroup.
    fn decide(&mut self) {
        let n = self.window_writes as f64;
        let evidence = 2 * self.window_overwrites >= self.window_writes;
        self.window_writes = 0;
        self.window_overwrites = 0;
        if !evidence {
            // A fill: nothing dies, so no lifetime is known yet; keep the mapping.
            self.window.fill(0);
            return;
        }
        let first = self.decisions == 0;
        for (r, w) in self.rate.iter_mut().zip(self.window.iter_mut()) {
            let share = *w as f64 / n;
            *r = if first { share } else { 0.5 * *r + 0.5 * share };
            *w = 0;
        }
        self.decisions += 1;
        // Bins of log2(lifetime), ascending, with their classes' write weight.
        let mut bins: Vec<(i32, f64)> = Vec::new();
        let mut bin_of: Vec<Option<i32>> = Vec::with_capacity(self.rate.len());
        for c in 0..self.rate.len() {
            let b = self
                .estimate(c)
                .map(|l| (l.log2().clamp(0.0, MAX_LOG2) * BINS_PER_OCTAVE).round() as i32);
            bin_of.push(b);
            if let Some(b) = b {
                bins.push((b, self.rate[c]));
            }
        }
        bins.sort_by_key(|&(b, _)| b);
        let mut merged: Vec<(f64, f64)> = Vec::new(); // (x = log2 lifetime, weight)
        let mut keys: Vec<i32> = Vec::new();
        for (b, w) in bins {
            if keys.last() == Some(&b) {
                merged.last_mut().expect("keys and merged grow together").1 += w;
            } else {
                keys.push(b);
                merged.push((b as f64 / BINS_PER_OCTAVE, w));
            }
        }
        let group = group_bins(&merged, self.max_streams as usize);
        // Stream 0 is the longest-lived group: what stays longest keeps its stream as groups
        // change (short-lived data moves to its new stream quickly, by being rewritten).
        let groups = group.last().map_or(1, |&g| g + 1);
        for (c, b) in bin_of.into_iter().enumerate() {
            self.stream[c] = match b {
                Some(b) => groups - 1 - group[keys.binary_search(&b).expect("every bin was kept")],
                None => 0,
            };
        }
    }
}

/// Split sorted points `(x, weight)` into contiguous groups minimising the total weighted
/// squared deviation from each group's weighted mean (exact dynamic programme, O(k n²)):
/// the fewest groups, at most `k`, whose weighted RMS deviation is at most
/// [`MAX_SPREAD_OCTAVES`] (or, if none is, the best with `k`). Returns each point's group
/// (0-based, ascending in `x`).
pub(crate) fn group_bins(points: &[(f64, f64)], k: usize) -> Vec<u16> {
    group_bins_with(points, k, true)
}

/// [`group_bins`], or with `economical` false the best split into exactly `min(k, points)`
/// groups (the oracle spends every stream it has: a stream it leaves unused is a separation
/// it knows of and does not make).
pub(crate) fn group_bins_with(points: &[(f64, f64)], k: usize, economical: bool) -> Vec<u16> {
    let n = points.len();
    if n == 0 {
        return Vec::new();
    }
    let k = k.min(n);
    // Prefix sums of w, w x, w x².
    let mut pw = vec![0.0; n + 1];
    let mut px = vec![0.0; n + 1];
    let mut pxx = vec![0.0; n + 1];
    for (i, &(x, w)) in points.iter().enumerate() {
        pw[i + 1] = pw[i] + w;
        px[i + 1] = px[i] + w * x;
        pxx[i + 1] = pxx[i] + w * x * x;
    }
    let cost = |i: usize, j: usize| {
        // Points i..j.
        let w = pw[j] - pw[i];
        if w <= 0.0 {
            return 0.0;
        }
        let s = px[j] - px[i];
        (pxx[j] - pxx[i] - s * s / w).max(0.0)
    };
    // best[g][j]: cost of points 0..j in g + 1 groups; from[g][j]: where the last group starts.
    let mut best = vec![vec![f64::INFINITY; n + 1]; k];
    let mut from = vec![vec![0usize; n + 1]; k];
    for (j, b) in best[0].iter_mut().enumerate().skip(1) {
        *b = cost(0, j);
    }
    for g in 1..k {
        for j in g + 1..=n {
            for i in g..j {
                let c = best[g - 1][i] + cost(i, j);
                if c < best[g][j] - 1e-12 {
                    best[g][j] = c;
                    from[g][j] = i;
                }
            }
        }
    }
    // Fewest groups whose spread is small enough (or the best there is): a stream costs open
    // blocks, so it is spent only where it separates lifetimes.
    let enough = pw[n] * MAX_SPREAD_OCTAVES * MAX_SPREAD_OCTAVES + 1e-9;
    let g_best = match economical {
        true => (0..k)
            .find(|&g| best[g][n] <= enough.max(best[k - 1][n] + 1e-9))
            .unwrap_or(k - 1),
        false => k - 1,
    };
    let mut out = vec![0u16; n];
    let mut j = n;
    for g in (0..=g_best).rev() {
        let i = if g == 0 { 0 } else { from[g][j] };
        out[i..j].fill(g as u16);
        j = i;
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::{Rng, SeedableRng};
    use rand_chacha::ChaCha8Rng;

    /// Writes to class `c` go uniformly to its LBA range; `shares[c]` of all writes.
    fn drive(
        a: &mut AutoStreams,
        rng: &mut ChaCha8Rng,
        ranges: &[(u64, u64)],
        shares: &[f64],
        n: u64,
    ) {
        for _ in 0..n {
            let u: f64 = rng.gen();
            let mut acc = 0.0;
            let mut c = shares.len() - 1;
            for (i, s) in shares.iter().enumerate() {
                acc += s;
                if u < acc {
                    c = i;
                    break;
                }
            }
            let (lo, hi) = ranges[c];
            a.on_write(rng.gen_range(lo..hi), c as u32);
        }
    }

    #[test]
    fn clearly_different_lifetimes_get_different_streams() {
        let mut a = AutoStreams::new(2, 10_000).with_interval(5_000);
        let mut rng = ChaCha8Rng::seed_from_u64(1);
        // Class 0: 10 % of the pages, 90 % of the writes; class 1 the rest. Filled first, so
        // live counts are at their steady state (Little's law needs it).
        for lpn in 0..10_000 {
            a.on_write(lpn, (lpn >= 1_000) as u32);
        }
        drive(
            &mut a,
            &mut rng,
            &[(0, 1_000), (1_000, 10_000)],
            &[0.9, 0.1],
            60_000,
        );
        let m = a.mapping();
        assert_eq!(m, vec![(0, 1), (1, 0)], "{:?}", a.estimates());
        // Little's law: hot lifetime ≈ 1000 / 0.9, cold ≈ 9000 / 0.1.
        let e = a.estimates();
        let hot = e[0].1.unwrap();
        let cold = e[1].1.unwrap();
        assert!((hot / (1000.0 / 0.9) - 1.0).abs() < 0.1, "{hot}");
        assert!((cold / (9000.0 / 0.1) - 1.0).abs() < 0.1, "{cold}");
    }

    #[test]
    fn a_fill_decides_nothing() {
        let mut a = AutoStreams::new(4, 100_000).with_interval(1_000);
        // Ranges of 1000 pages written in turn: without the rule, the ranges written long ago
        // would look long-lived and be spread over the streams.
        for lpn in 0..100_000 {
            assert_eq!(a.on_write(lpn, (lpn / 1_000) as u32), 0);
        }
        assert_eq!(a.decisions(), 0);
    }

    #[test]
    fn one_stream_maps_everything_to_zero() {
        let mut a = AutoStreams::new(1, 10_000).with_interval(1_000);
        let mut rng = ChaCha8Rng::seed_from_u64(2);
        drive(
            &mut a,
            &mut rng,
            &[(0, 100), (100, 10_000)],
            &[0.5, 0.5],
            20_000,
        );
        assert!(a.decisions() >= 10);
        assert!(a.mapping().iter().all(|&(_, s)| s == 0));
    }

    #[test]
    fn similar_classes_share_a_stream_and_regroup_when_the_workload_changes() {
        let mut a = AutoStreams::new(2, 30_000).with_interval(5_000);
        let mut rng = ChaCha8Rng::seed_from_u64(3);
        let ranges = [(0, 1_000), (1_000, 2_000), (2_000, 30_000)];
        // Classes 0 and 1 hot alike, class 2 cold.
        drive(&mut a, &mut rng, &ranges, &[0.45, 0.45, 0.1], 60_000);
        assert_eq!(
            a.mapping(),
            vec![(0, 1), (1, 1), (2, 0)],
            "{:?}",
            a.estimates()
        );
        // Class 1 turns cold like class 2: {0} apart from {1, 2}.
        drive(&mut a, &mut rng, &ranges, &[0.9, 0.0, 0.1], 60_000);
        assert_eq!(
            a.mapping(),
            vec![(0, 1), (1, 0), (2, 0)],
            "{:?}",
            a.estimates()
        );
    }

    #[test]
    fn streams_never_exceed_the_maximum_and_runs_are_deterministic() {
        let run = || {
            let mut a = AutoStreams::new(3, 64_000).with_interval(4_000);
            let mut rng = ChaCha8Rng::seed_from_u64(4);
            let ranges: Vec<(u64, u64)> = (0..8).map(|i| (i * 8_000, (i + 1) * 8_000)).collect();
            let shares = [0.4, 0.2, 0.1, 0.1, 0.05, 0.05, 0.05, 0.05];
            let mut seen = Vec::new();
            for _ in 0..10 {
                drive(&mut a, &mut rng, &ranges, &shares, 4_000);
                seen.push(a.mapping());
            }
            seen
        };
        let a = run();
        assert!(a.iter().flatten().all(|&(_, s)| s < 3));
        assert_eq!(a.last().unwrap().len(), 8);
        assert_eq!(a, run());
    }

    #[test]
    fn grouping_is_the_optimal_contiguous_split() {
        let p = [(1.0, 1.0), (1.25, 1.0), (5.0, 1.0), (5.5, 1.0), (12.0, 0.5)];
        assert_eq!(group_bins(&p, 3), vec![0, 0, 1, 1, 2]);
        assert_eq!(group_bins(&p, 2), vec![0, 0, 0, 0, 1]); // 12 is far out: 17.2 < 18.4
        assert_eq!(group_bins(&p, 1), vec![0; 5]);
        // Within half an octave: three groups are enough even when nine are allowed.
        assert_eq!(group_bins(&p, 9), vec![0, 0, 1, 1, 2]);
        // Spread wider than that: every point apart.
        let q = [(1.0, 1.0), (3.0, 1.0), (5.0, 1.0)];
        assert_eq!(group_bins(&q, 9), vec![0, 1, 2]);
        // Two identical points need no second group.
        assert_eq!(group_bins(&[(3.0, 1.0)], 4), vec![0]);
        assert!(group_bins(&[], 2).is_empty());
    }
}
