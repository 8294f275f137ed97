//! The `oracle` stream policy: placement that knows each write's death time.
//!
//! Model (two passes over the same sequence of page writes):
//! 1. **Record** ([`DeathRecorder`]): the first pass numbers the page writes in order (write
//!    `t` is the `t`-th page written, from 0) and notes, for each, when its logical page is next
//!    overwritten or trimmed. Its **remaining lifetime** is that time minus `t`, in device page
//!    writes (trimmed at write count `t2`: `t2 − t`, at least 1); a page never overwritten
//!    within the recording lives forever.
//! 2. **Place** ([`OracleStreams`]): the lifetimes are binned by `log2` in quarter octaves
//!    (eternal writes in a bin of their own beyond every finite one), the bins grouped into
//!    every stream the device has (or one per bin, if fewer) by the same optimal 1-D split as
//!    `auto` (least weighted squared spread of log lifetime; unlike `auto`, which stops at the
//!    fewest groups within half an octave, the oracle spends every stream), and the second
//!    pass sends write `t` to its group's stream:
//!    stream 0 the longest-lived group, the highest stream the shortest-lived — as `auto`
//!    numbers them.
//!
//! The second pass must replay the first pass's writes in the same order (a deterministic
//! workload or trace replayed, or a store whose writes do not depend on the device); a write
//! past the end of the recording goes to stream 0.
//!
//! Memory: 8 bytes per recorded page write and per logical page while recording, 2 bytes per
//! write while placing.

use super::auto::group_bins_with;
use super::{StreamAssignment, WriteClass};

/// Remaining lifetime of a write never overwritten within the recording.
pub const ETERNAL: u64 = u64::MAX;
/// Quarter-octave bins of `log2(lifetime)`; eternal writes get bin [`ETERNAL_BIN`].
const BINS_PER_OCTAVE: f64 = 4.0;
const ETERNAL_BIN: i32 = 65 * BINS_PER_OCTAVE as i32;

/// First pass: each page write's remaining lifetime (see the module docs).
#[derive(Clone, Debug, Default)]
pub struct DeathRecorder {
    /// Per logical page: 1 + the index of its last live write (0: none live).
    last: Vec<u64>,
    /// Per write: its remaining lifetime, [`ETERNAL`] until it dies.
    lifetime: Vec<u64>,
}

impl DeathRecorder {
    /// A recorder for logical pages `0..logical_pages` (a write beyond grows it).
    pub fn new(logical_pages: u64) -> DeathRecorder {
        DeathRecorder {
            last: vec![0; logical_pages as usize],
            lifetime: Vec::new(),
        }
    }

    /// Page writes recorded so far.
    pub fn writes(&self) -> u64 {
        self.lifetime.len() as u64
    }

    /// Record a write of logical page `lpn`.
    #[inline]
    pub fn write(&mut self, lpn: u64) {
        self.end(lpn);
        let t = self.lifetime.len() as u64;
        self.lifetime.push(ETERNAL);
        self.last[lpn as usize] = t + 1;
    }

    /// Record a trim of `pages` pages from `lpn`: their live writes die now.
    pub fn trim(&mut self, lpn: u64, pages: u64) {
        for p in lpn..lpn + pages {
            self.end(p);
        }
    }

    /// The live write of `lpn`, if any, dies at the current write count.
    fn end(&mut self, lpn: u64) {
        let i = lpn as usize;
        if i >= self.last.len() {
            let n = (i + 1).max(self.last.len() * 2);
            self.last.resize(n, 0);
        }
        let prev = std::mem::replace(&mut self.last[i], 0);
        if prev > 0 {
            let t = prev - 1;
            let now = self.lifetime.len() as u64;
            self.lifetime[t as usize] = (now - t).max(1);
        }
    }

    /// Remaining lifetime of each write recorded, in order ([`ETERNAL`]: never died).
    pub fn lifetimes(&self) -> &[u64] {
        &self.lifetime
    }

    /// Second pass: the placement over at most `max_streams` (≥ 1) streams.
    pub fn into_streams(self, max_streams: u16) -> OracleStreams {
        OracleStreams::new(&self.lifetime, max_streams)
    }
}

/// The first pass as a policy: records every page written and puts it on stream 0.
impl StreamAssignment for DeathRecorder {
    #[inline]
    fn stream(&mut self, lpn: u64, _class: Option<WriteClass>) -> u16 {
        self.write(lpn);
        0
    }
}

/// Bin of a remaining lifetime: quarter octaves of `log2`, eternal beyond every finite one.
fn bin_of(lifetime: u64) -> i32 {
    if lifetime == ETERNAL {
        return ETERNAL_BIN;
    }
    ((lifetime.max(1) as f64).log2() * BINS_PER_OCTAVE).round() as i32
}

/// Second pass: sends the `t`-th page write to the stream of its lifetime group.
#[derive(Clone, Debug)]
pub struct OracleStreams {
    streams: Vec<u16>,
    next: usize,
    /// `(bin low, bin high, stream)` of each group, ascending lifetime (for reports).
    groups: Vec<(i32, i32, u16)>,
}

impl OracleStreams {
    /// The placement of writes with remaining lifetimes `lifetimes` (in write order) over at
    /// most `max_streams` streams.
    pub fn new(lifetimes: &[u64], max_streams: u16) -> OracleStreams {
        assert!(max_streams >= 1, "the oracle needs at least one stream");
        let mut weight: std::collections::BTreeMap<i32, f64> = Default::default();
        for &l in lifetimes {
            *weight.entry(bin_of(l)).or_insert(0.0) += 1.0;
        }
        let keys: Vec<i32> = weight.keys().copied().collect();
        let points: Vec<(f64, f64)> = weight
            .iter()
            .map(|(&b, &w)| (b as f64 / BINS_PER_OCTAVE, w))
            .collect();
        let group = group_bins_with(&points, max_streams as usize, false);
        let groups_n = group.last().map_or(1, |&g| g + 1);
        let stream_of_bin = |b: i32| {
            let i = keys.binary_search(&b).expect("every bin was counted");
            groups_n - 1 - group[i]
        };
        let streams = lifetimes
            .iter()
            .map(|&l| stream_of_bin(bin_of(l)))
            .collect();
        let mut groups: Vec<(i32, i32, u16)> = Vec::new();
        for (&k, &g) in keys.iter().zip(&group) {
            match groups.last_mut() {
                Some(last) if last.2 == groups_n - 1 - g => last.1 = k,
                _ => groups.push((k, k, groups_n - 1 - g)),
            }
        }
        OracleStreams {
            streams,
            next: 0,
            groups,
        }
    }

    /// Writes placed so far.
    pub fn placed(&self) -> u64 {
        self.next as u64
    }

    /// Writes recorded (what the second pass should replay).
    pub fn recorded(&self) -> u64 {
        self.streams.len() as u64
    }

    /// Each stream's lifetime range in page writes, ascending: `(low, high, stream)`, `high`
    /// [`ETERNAL`] for the group that holds the writes never overwritten.
    pub fn groups(&self) -> Vec<(u64, u64, u16)> {
        let writes = |b: i32| {
            if b == ETERNAL_BIN {
                ETERNAL
            } else {
                2f64.powf(b as f64 / BINS_PER_OCTAVE).round() as u64
            }
        };
        self.groups
            .iter()
            .map(|&(lo, hi, s)| (writes(lo), writes(hi), s))
            .collect()
    }
}

impl StreamAssignment for OracleStreams {
    #[inline]
    fn stream(&mut self, _lpn: u64, _class: Option<WriteClass>) -> u16 {
        let s = self.streams.get(self.next).copied().unwrap_or(0);
        self.next += 1;
        s
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Even writes cycle over 10 hot pages (lifetime 20), odd ones over 1000 cold pages
    /// (lifetime 2000).
    fn two_lifetimes(n: u64) -> Vec<u64> {
        (0..n)
            .map(|t| {
                if t % 2 == 0 {
                    (t / 2) % 10
                } else {
                    10 + (t / 2) % 1000
                }
            })
            .collect()
    }

    #[test]
    fn records_remaining_lifetimes_with_trims() {
        let mut r = DeathRecorder::new(4);
        r.write(0); // t0: overwritten at t2
        r.write(1); // t1: trimmed when 3 writes were done
        r.write(0); // t2: never
        r.trim(1, 1);
        r.write(9); // t3: beyond the initial size
        assert_eq!(r.lifetimes(), &[2, 2, ETERNAL, ETERNAL]);
    }

    #[test]
    fn two_known_lifetimes_are_separated_exactly() {
        let lpns = two_lifetimes(40_000);
        let mut r = DeathRecorder::new(1010);
        for &l in &lpns {
            r.write(l);
        }
        let mut o = r.into_streams(4);
        // The last 2,000 writes never die; before them every hot write has its stream,
        // every cold write the other.
        let mut seen = [std::collections::BTreeSet::new(), Default::default()];
        for (t, &l) in lpns.iter().enumerate() {
            let s = o.stream(l, None);
            if t < lpns.len() - 2_000 {
                seen[(l >= 10) as usize].insert(s);
            }
        }
        assert_eq!(seen[0].len(), 1, "{seen:?}");
        assert_eq!(seen[1].len(), 1, "{seen:?}");
        assert_ne!(seen[0], seen[1]);
        // Longer-lived data on the lower stream.
        assert!(seen[1].first() < seen[0].first());
        assert_eq!(o.placed(), o.recorded());
        // Past the recording: stream 0.
        assert_eq!(o.stream(0, None), 0);
    }

    #[test]
    fn one_stream_puts_everything_on_stream_zero() {
        let mut r = DeathRecorder::new(1010);
        for l in two_lifetimes(10_000) {
            r.write(l);
        }
        let mut o = r.into_streams(1);
        assert!((0..10_000).all(|_| o.stream(0, None) == 0));
    }
}
