//! `sepbit`: SepBIT's inference of block invalidation time (Wang et al., FAST'22), for user
//! writes, as a host-side stream policy.
//!
//! Model: a write that invalidates a page whose lifetime was short is likely to be short-lived
//! itself (SepBIT's observation on skewed workloads). On a write of logical page `p`:
//! - `p` was written before, and that version lived `v` device page writes: the new write goes
//!   to the **short** stream (1) if `v < ℓ`, else the **long** stream (0);
//! - `p` was never written: the long stream (SepBIT's class 2: no evidence of a short life).
//!
//! `ℓ` is SepBIT's threshold, the mean lifetime of recent short-stream data: every interval
//! of page writes (a sixteenth of the logical pages, at least 1024) it becomes the mean
//! lifetime of the short-stream pages that died in that interval (unchanged if none did). It
//! starts infinite, so at first every overwrite counts as short. SepBIT's separation of GC
//! rewrites by age (its classes 3–6) is the SSD's business here (its GC stream modes), not
//! the host's.
//!
//! Deterministic: a function of the sequence of writes. Memory: 9 bytes per logical page.

use super::{StreamAssignment, WriteClass};

/// SepBIT's user-write separation (see the module docs).
#[derive(Clone, Debug)]
pub struct SepBit {
    /// Per logical page: 1 + the index of its last write (0: never written).
    last_at: Vec<u64>,
    /// Per logical page: the stream of its last write.
    last_stream: Vec<u8>,
    writes: u64,
    /// ℓ, in device page writes.
    threshold: f64,
    interval: u64,
    /// Short-stream deaths in the current interval: their count and summed lifetimes.
    short_deaths: u64,
    short_lifetime_sum: u128,
}

impl SepBit {
    pub fn new(logical_pages: u64) -> SepBit {
        SepBit {
            last_at: vec![0; logical_pages as usize],
            last_stream: vec![0; logical_pages as usize],
            writes: 0,
            threshold: f64::INFINITY,
            interval: (logical_pages / 16).max(1024),
            short_deaths: 0,
            short_lifetime_sum: 0,
        }
    }

    /// The current threshold ℓ (infinite until short-stream data has died).
    pub fn threshold(&self) -> f64 {
        self.threshold
    }

    /// Record a write of `lpn`; returns its stream (0 long, 1 short).
    pub fn on_write(&mut self, lpn: u64) -> u16 {
        let i = lpn as usize;
        if i >= self.last_at.len() {
            let n = (i + 1).max(self.last_at.len() * 2);
            self.last_at.resize(n, 0);
            self.last_stream.resize(n, 0);
        }
        let t = self.writes;
        self.writes += 1;
        let stream = match self.last_at[i] {
            0 => 0,
            prev => {
                let lifetime = t - (prev - 1);
                if self.last_stream[i] == 1 {
                    self.short_deaths += 1;
                    self.short_lifetime_sum += lifetime as u128;
                }
                u16::from((lifetime as f64) < self.threshold)
            }
        };
        self.last_at[i] = t + 1;
        self.last_stream[i] = stream as u8;
        if self.writes.is_multiple_of(self.interval) && self.short_deaths > 0 {
            self.threshold = self.short_lifetime_sum as f64 / self.short_deaths as f64;
            self.short_deaths = 0;
            self.short_lifetime_sum = 0;
        }
        stream
    }
}

impl StreamAssignment for SepBit {
    #[inline]
    fn stream(&mut self, lpn: u64, _class: Option<WriteClass>) -> u16 {
        self.on_write(lpn)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::{Rng, SeedableRng};
    use rand_chacha::ChaCha8Rng;

    #[test]
    fn hot_overwrites_go_short_and_cold_ones_long() {
        let mut s = SepBit::new(10_000);
        let mut rng = ChaCha8Rng::seed_from_u64(5);
        for lpn in 0..10_000 {
            assert_eq!(s.on_write(lpn), 0, "a first write is long");
        }
        // 90 % of the writes to 1,000 hot pages, 10 % to 9,000 cold ones.
        let mut hits = [[0u64; 2]; 2];
        for n in 0..200_000 {
            let hot = rng.gen_bool(0.9);
            let lpn = if hot {
                rng.gen_range(0..1_000)
            } else {
                rng.gen_range(1_000..10_000)
            };
            let st = s.on_write(lpn);
            if n > 50_000 {
                hits[hot as usize][st as usize] += 1;
            }
        }
        let short_share = |h: [u64; 2]| h[1] as f64 / (h[0] + h[1]) as f64;
        // A hot page's previous version outlived ℓ (about the hot mean) about e^-1 of the
        // time: most, not all, hot writes are inferred short; almost no cold one is.
        assert!(short_share(hits[1]) > 0.5, "{hits:?}");
        assert!(short_share(hits[0]) < 0.1, "{hits:?}");
        assert!(s.threshold().is_finite());
    }
}
