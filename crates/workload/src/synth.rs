//! Synthetic request generators: infinite, constant memory, deterministic for a seed.
//!
//! The logical space is cut into `logical_pages / request_pages` aligned slots; each request
//! covers one slot. Sequential walks the slots in order and wraps; uniform draws slots
//! uniformly; zipf draws ranks by [`crate::zipf::ZipfSlots`]; hot/cold sends a fraction
//! `hot_ops` of requests to the first `hot_space` fraction of the slots (uniform within each
//! part). A request is a read with probability `read_fraction`.

use crate::spec::{Addresses, WorkloadSpec};
use crate::zipf::ZipfSlots;
use crate::{OpKind, Request, Target, WorkloadError, WorkloadOptions};
use rand::{Rng, RngCore, SeedableRng};
use rand_chacha::ChaCha8Rng;

#[derive(Clone, Debug)]
enum Gen {
    Sequential {
        next: u64,
    },
    Uniform(UniformRange),
    Zipf(ZipfSlots),
    HotCold {
        hot_ops: f64,
        hot: UniformRange,
        cold: UniformRange,
    },
}

/// How a uniform draw turns 64-bit random words into a value of `low..low + range`: both
/// multiply a word by `range` into 128 bits and keep the high half, rejecting some words so
/// that every value is exactly equally likely; they reject different words, so at one seed
/// they draw different (identically distributed) values. Applies to the uniform and hot/cold
/// generators and the preconditioning's random pages (`sim --sampler`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Sampler {
    /// rand 0.8's `gen_range` (the default before 2026-11-29, `sim --sampler rand`): keeps the word when
    /// the low half of the product is at most `zone = (range << range.leading_zeros()) - 1`,
    /// so it rejects about half the words for a power-of-two range (two words per draw).
    Rand08,
    /// Lemire's widening multiply with its exact rejection: keeps the word when the low half
    /// is at least `2^64 mod range`, which is zero for a power of two (one word per draw).
    /// The default: as uniform as `Rand08`, and about half the ChaCha words.
    #[default]
    Lemire,
}

impl Sampler {
    /// `rand` or `lemire`.
    pub fn name(self) -> &'static str {
        match self {
            Sampler::Rand08 => "rand",
            Sampler::Lemire => "lemire",
        }
    }

    /// The sampler named `rand` or `lemire`.
    pub fn parse(s: &str) -> Option<Sampler> {
        match s {
            "rand" => Some(Sampler::Rand08),
            "lemire" => Some(Sampler::Lemire),
            _ => None,
        }
    }
}

/// Uniform draws from `low..low + range` (`range >= 1`) by a [`Sampler`]. With
/// [`Sampler::Rand08`], the same values, from the same random words, as rand 0.8's
/// `rng.gen_range(low..low + range)` for `u64`, with the rejection zone worked out once here
/// instead of at every draw, so seeded runs stay bit-identical. A word is kept when the low
/// half `l` of its product with `range` has `l - skip` (wrapping) at most `zone`: `skip = 0`
/// and rand's zone, or (Lemire) `skip = 2^64 mod range` and `zone = u64::MAX - skip`.
#[derive(Clone, Copy, Debug)]
pub struct UniformRange {
    low: u64,
    range: u64,
    skip: u64,
    zone: u64,
}

impl UniformRange {
    /// Draws from `low..high` (`low < high`) as rand 0.8 does.
    pub fn new(low: u64, high: u64) -> UniformRange {
        UniformRange::with_sampler(low, high, Sampler::Rand08)
    }

    /// Draws from `low..high` (`low < high`) by `sampler`.
    pub fn with_sampler(low: u64, high: u64, sampler: Sampler) -> UniformRange {
        assert!(
            low < high,
            "uniform draws from the empty range {low}..{high}"
        );
        let range = high - low;
        let (skip, zone) = match sampler {
            Sampler::Rand08 => (0, (range << range.leading_zeros()).wrapping_sub(1)),
            Sampler::Lemire => {
                let skip = range.wrapping_neg() % range;
                (skip, u64::MAX - skip)
            }
        };
        UniformRange {
            low,
            range,
            skip,
            zone,
        }
    }

    /// The same range drawn by `sampler`.
    pub fn by(self, sampler: Sampler) -> UniformRange {
        UniformRange::with_sampler(self.low, self.low + self.range, sampler)
    }

    #[inline(always)]
    pub fn sample<R: RngCore + ?Sized>(&self, rng: &mut R) -> u64 {
        loop {
            let m = rng.next_u64() as u128 * self.range as u128;
            if (m as u64).wrapping_sub(self.skip) <= self.zone {
                return self.low + (m >> 64) as u64;
            }
        }
    }
}

#[derive(Clone, Debug)]
pub struct Synthetic {
    gen: Gen,
    read_fraction: f64,
    slots: u64,
    request_pages: u32,
    rng: ChaCha8Rng,
}

impl Synthetic {
    pub fn new(
        spec: &WorkloadSpec,
        target: Target,
        opts: &WorkloadOptions,
    ) -> Result<Synthetic, WorkloadError> {
        let (addresses, read_fraction) =
            match spec {
                WorkloadSpec::Synthetic {
                    addresses,
                    read_fraction,
                } => (addresses, read_fraction),
                WorkloadSpec::FlashCache(_) => return Err(WorkloadError::Spec {
                    spec: "flash-cache".into(),
                    reason:
                        "a flash cache is not a synthetic workload; build it with workload::build"
                            .into(),
                }),
                WorkloadSpec::Trace { path } => {
                    return Err(WorkloadError::Spec {
                        spec: format!("trace:{}", path.display()),
                        reason: "a trace is not a synthetic workload; read it with workload::build"
                            .into(),
                    })
                }
            };
        check_parameters(addresses, *read_fraction)?;
        let slots = target.logical_pages / opts.request_pages.max(1) as u64;
        if slots == 0 {
            return Err(WorkloadError::TooSmall {
                request_pages: opts.request_pages,
                logical_pages: target.logical_pages,
            });
        }
        let gen = match *addresses {
            Addresses::Sequential => Gen::Sequential { next: 0 },
            Addresses::Uniform => Gen::Uniform(UniformRange::with_sampler(0, slots, opts.sampler)),
            Addresses::Zipf { theta } => Gen::Zipf(ZipfSlots::new(slots, theta)),
            Addresses::HotCold { hot_ops, hot_space } => {
                // One slot: every request goes to it and `next_slot` samples neither range
                // (they are only kept non-empty). Two or more: `hot` is in `1..slots`.
                let hot = hot_slots(hot_space, slots).min(slots - 1).max(1);
                Gen::HotCold {
                    hot_ops,
                    hot: UniformRange::with_sampler(0, hot, opts.sampler),
                    cold: UniformRange::with_sampler(
                        hot.min(slots - 1),
                        slots.max(2),
                        opts.sampler,
                    ),
                }
            }
        };
        Ok(Synthetic {
            gen,
            read_fraction: *read_fraction,
            slots,
            request_pages: opts.request_pages.max(1),
            rng: ChaCha8Rng::seed_from_u64(opts.seed),
        })
    }

    /// Inline (across crates too): a call per request cost more than the uniform draw's
    /// arithmetic (`#[inline]` alone left it a call from the driver's page loop).
    #[inline(always)]
    fn next_slot(&mut self) -> u64 {
        match &mut self.gen {
            Gen::Sequential { next } => {
                let s = *next;
                *next = if s + 1 == self.slots { 0 } else { s + 1 };
                s
            }
            Gen::Uniform(u) => u.sample(&mut self.rng),
            Gen::Zipf(z) => z.sample(&mut self.rng),
            Gen::HotCold { hot_ops, hot, cold } => {
                if self.slots == 1 {
                    0
                } else if self.rng.gen::<f64>() < *hot_ops {
                    hot.sample(&mut self.rng)
                } else {
                    cold.sample(&mut self.rng)
                }
            }
        }
    }
}

/// The pages of a [`Synthetic`] workload whose every request is a one-page write (no reads,
/// one page per request): [`Synthetic::page_writes`]. It yields each request's page, the same
/// pages from the same random words as the requests would carry, without building a
/// [`Request`] each.
#[derive(Clone, Debug)]
pub struct PageWrites(Synthetic);

impl Synthetic {
    /// The workload as [`PageWrites`] where every request is a one-page write; else the
    /// workload back, unchanged (a large `Err`, moved once per run).
    #[allow(clippy::result_large_err)]
    pub fn page_writes(self) -> Result<PageWrites, Synthetic> {
        if self.read_fraction == 0.0 && self.request_pages == 1 {
            Ok(PageWrites(self))
        } else {
            Err(self)
        }
    }
}

impl Iterator for PageWrites {
    type Item = u64;

    /// `Synthetic::next`'s `lpn`: with no reads it draws no read decision, and a slot is a
    /// page.
    #[inline]
    fn next(&mut self) -> Option<u64> {
        Some(self.0.next_slot())
    }
}

impl Iterator for Synthetic {
    type Item = Request;

    #[inline]
    fn next(&mut self) -> Option<Request> {
        let op = if self.read_fraction > 0.0 && self.rng.gen::<f64>() < self.read_fraction {
            OpKind::Read
        } else {
            OpKind::Write
        };
        let slot = self.next_slot();
        Some(Request {
            op,
            lpn: slot * self.request_pages as u64,
            pages: self.request_pages,
            stream: 0,
            arrival_ns: None,
        })
    }
}

/// The hot slots of a hot/cold workload: the first `hot_space` fraction of `slots`, rounded,
/// at least one and leaving at least one cold slot (when there are two).
fn hot_slots(hot_space: f64, slots: u64) -> u64 {
    ((hot_space * slots as f64).round() as u64).clamp(1, slots.max(2) - 1)
}

/// The hot set of a `hotcold-write:X:Y` workload on `target` with `request_pages`-page
/// requests: its logical pages are `0..hot_pages` (the rest is cold). For `flash-cache`, its
/// small-object region (the engine placement: bucket writes on their own stream). `None` for
/// any other workload, or one with fewer than two slots (no hot/cold split).
pub fn hot_pages(spec: &WorkloadSpec, target: Target, request_pages: u32) -> Option<u64> {
    if let WorkloadSpec::FlashCache(fc) = spec {
        return crate::flash_cache::Layout::new(fc, target)
            .ok()
            .map(|l| l.small_pages);
    }
    let WorkloadSpec::Synthetic {
        addresses: Addresses::HotCold { hot_space, .. },
        ..
    } = spec
    else {
        return None;
    };
    let slots = target.logical_pages / request_pages.max(1) as u64;
    (slots >= 2).then(|| hot_slots(*hot_space, slots) * request_pages.max(1) as u64)
}

/// Uniformly random page numbers in `0..n`, forever.
#[derive(Clone, Debug)]
pub struct UniformPages {
    /// `None` when `n` is 0 (the iterator is empty).
    pages: Option<UniformRange>,
    rng: ChaCha8Rng,
}

impl UniformPages {
    pub fn new(n: u64, seed: u64) -> UniformPages {
        UniformPages::with_sampler(n, seed, Sampler::Rand08)
    }

    /// Pages drawn by `sampler`.
    pub fn with_sampler(n: u64, seed: u64, sampler: Sampler) -> UniformPages {
        UniformPages {
            pages: (n > 0).then(|| UniformRange::with_sampler(0, n, sampler)),
            rng: ChaCha8Rng::seed_from_u64(seed),
        }
    }
}

impl Iterator for UniformPages {
    type Item = u64;
    #[inline]
    fn next(&mut self) -> Option<u64> {
        let pages = self.pages?;
        Some(pages.sample(&mut self.rng))
    }
}

/// The ranges `WorkloadSpec::parse` enforces, checked again for specs built in code (the
/// fields are public): a bad value is an error, never a panic in the generator.
fn check_parameters(addresses: &Addresses, read_fraction: f64) -> Result<(), WorkloadError> {
    let bad = |what: &str, x: f64, range: &str| {
        Err(WorkloadError::Spec {
            spec: format!("{addresses:?}"),
            reason: format!("{what} {x} must be in {range}"),
        })
    };
    if !(0.0..=1.0).contains(&read_fraction) {
        return bad("read fraction", read_fraction, "[0, 1]");
    }
    match *addresses {
        Addresses::Zipf { theta } if !(0.0..5.0).contains(&theta) => {
            bad("zipf theta", theta, "[0, 5)")
        }
        Addresses::HotCold { hot_ops, .. } if !(0.0..=1.0).contains(&hot_ops) => {
            bad("hot fraction of writes", hot_ops, "[0, 1]")
        }
        Addresses::HotCold { hot_space, .. } if !(hot_space > 0.0 && hot_space < 1.0) => {
            bad("hot fraction of space", hot_space, "(0, 1)")
        }
        _ => Ok(()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `UniformRange` is rand's `gen_range` with its zone computed once: the same values from
    /// the same words, and the generator left at the same place, for ranges of every shape
    /// (one value, powers of two, just past them, odd, near `u64::MAX`) and offsets.
    #[test]
    fn uniform_range_draws_what_gen_range_draws() {
        let mut shapes = vec![1u64, 2, 3, 5, 7, 1000, u64::MAX - 1, u64::MAX / 3 + 7];
        for k in [1u32, 8, 18, 20, 24, 31, 32, 33, 40, 62, 63] {
            shapes.extend([(1u64 << k) - 1, 1 << k, (1 << k) + 1]);
        }
        let mut pick = ChaCha8Rng::seed_from_u64(99);
        for _ in 0..40 {
            let shift = pick.gen_range(0..63);
            shapes.push(pick.gen_range(1..u64::MAX >> shift));
        }
        for (i, &range) in shapes.iter().enumerate() {
            let low = if i % 3 == 0 {
                0
            } else {
                (u64::MAX - range) / (i as u64 + 1)
            };
            let u = UniformRange::new(low, low + range);
            let (mut a, mut b) = (
                ChaCha8Rng::seed_from_u64(i as u64),
                ChaCha8Rng::seed_from_u64(i as u64),
            );
            for _ in 0..2_000 {
                assert_eq!(
                    u.sample(&mut a),
                    b.gen_range(low..low + range),
                    "range {range}"
                );
            }
            assert_eq!(a.next_u64(), b.next_u64(), "range {range}: words used");
        }
    }

    /// Lemire's method as published (Lemire 2019, "Fast random integer generation in an
    /// interval"): the textbook loop `UniformRange`'s `Lemire` sampler must match.
    fn lemire_textbook(rng: &mut ChaCha8Rng, n: u64) -> u64 {
        let mut m = rng.next_u64() as u128 * n as u128;
        if (m as u64) < n {
            let t = n.wrapping_neg() % n;
            while (m as u64) < t {
                m = rng.next_u64() as u128 * n as u128;
            }
        }
        (m >> 64) as u64
    }

    /// The `Lemire` sampler draws what the published loop draws from the same words (the
    /// same words used), over ranges of every shape; for a power of two it takes exactly one
    /// word per draw (the high half of the word times the range); and it is uniform.
    #[test]
    fn lemire_draws_what_the_published_loop_draws() {
        let mut shapes = vec![
            1u64,
            2,
            3,
            5,
            7,
            1000,
            u64::MAX,
            u64::MAX - 1,
            (1 << 63) + 1,
        ];
        for k in [1u32, 8, 18, 20, 31, 32, 33, 62, 63] {
            shapes.extend([(1u64 << k) - 1, 1 << k, (1 << k) + 1]);
        }
        for (i, &range) in shapes.iter().enumerate() {
            let low = if i % 2 == 0 {
                0
            } else {
                (u64::MAX - range) / 3
            };
            let u = UniformRange::with_sampler(
                low,
                low.wrapping_add(range).max(low + 1),
                Sampler::Lemire,
            );
            let range = u.range;
            let (mut a, mut b) = (
                ChaCha8Rng::seed_from_u64(i as u64),
                ChaCha8Rng::seed_from_u64(i as u64),
            );
            for _ in 0..2_000 {
                assert_eq!(
                    u.sample(&mut a),
                    low + lemire_textbook(&mut b, range),
                    "range {range}"
                );
            }
            assert_eq!(a.next_u64(), b.next_u64(), "range {range}: words used");
        }
        let u = UniformRange::with_sampler(0, 1 << 18, Sampler::Lemire);
        let (mut a, mut b) = (ChaCha8Rng::seed_from_u64(5), ChaCha8Rng::seed_from_u64(5));
        for _ in 0..5_000 {
            assert_eq!(u.sample(&mut a), b.next_u64() >> 46, "one word per draw");
        }
        let u = UniformRange::with_sampler(10, 15, Sampler::Lemire);
        let mut counts = [0u32; 5];
        let mut rng = ChaCha8Rng::seed_from_u64(3);
        for _ in 0..100_000 {
            counts[(u.sample(&mut rng) - 10) as usize] += 1;
        }
        // 20,000 expected each; 5 standard deviations is about 630.
        assert!(
            counts.iter().all(|&c| c.abs_diff(20_000) < 630),
            "{counts:?}"
        );
    }

    /// A uniform workload drawn by `Lemire` covers the same range, differently from `Rand08`
    /// at the same seed; the default options draw by `Lemire`.
    #[test]
    fn the_sampler_is_a_switch_beside_rand() {
        assert_eq!(WorkloadOptions::default().sampler, Sampler::Lemire);
        assert_eq!(Sampler::default(), Sampler::Lemire);
        let opts = WorkloadOptions {
            sampler: Sampler::Lemire,
            ..Default::default()
        };
        let t = target(1 << 12);
        let spec = WorkloadSpec::parse("uniform-write").unwrap();
        let lemire: Vec<u64> = Synthetic::new(&spec, t, &opts)
            .unwrap()
            .take(2_000)
            .map(|r| r.lpn)
            .collect();
        let rand: Vec<u64> = gen_by("uniform-write", 1 << 12, 1, Sampler::Rand08)
            .take(2_000)
            .map(|r| r.lpn)
            .collect();
        assert_ne!(lemire, rand);
        assert!(lemire.iter().all(|&l| l < 1 << 12));
        let pre = |s| crate::precondition_pages(t, 1.0, 9, s).collect::<Vec<u64>>();
        assert_ne!(pre(Sampler::Lemire), pre(Sampler::Rand08));
        assert_eq!(Sampler::parse("lemire"), Some(Sampler::Lemire));
        assert_eq!(
            Sampler::parse(Sampler::Rand08.name()),
            Some(Sampler::Rand08)
        );
        assert_eq!(Sampler::parse("xorshift"), None);
    }

    /// With `Rand08` the generators draw the same slots as before the zone was kept: uniform,
    /// hot/cold and `UniformPages` against `gen_range` on a generator of the same seed.
    #[test]
    fn generators_draw_the_gen_range_stream() {
        let mut u = gen_by("uniform-write", 1 << 18, 1, Sampler::Rand08);
        let mut rng = ChaCha8Rng::seed_from_u64(WorkloadOptions::default().seed);
        for _ in 0..5_000 {
            assert_eq!(u.next().unwrap().lpn, rng.gen_range(0..1u64 << 18));
        }
        let mut hc = gen_by("hotcold-write:0.8:0.2", 1000, 1, Sampler::Rand08);
        let mut rng = ChaCha8Rng::seed_from_u64(WorkloadOptions::default().seed);
        let hot = hot_slots(0.2, 1000);
        for _ in 0..5_000 {
            let want = if rng.gen::<f64>() < 0.8 {
                rng.gen_range(0..hot)
            } else {
                rng.gen_range(hot..1000)
            };
            assert_eq!(hc.next().unwrap().lpn, want);
        }
        let mut p = UniformPages::new(12_345, 7);
        let mut rng = ChaCha8Rng::seed_from_u64(7);
        for _ in 0..5_000 {
            assert_eq!(p.next(), Some(rng.gen_range(0..12_345)));
        }
        assert_eq!(UniformPages::new(0, 7).next(), None);
    }

    fn gen(spec: &str, pages: u64, req: u32) -> Synthetic {
        gen_by(spec, pages, req, Sampler::default())
    }

    fn gen_by(spec: &str, pages: u64, req: u32, sampler: Sampler) -> Synthetic {
        let opts = WorkloadOptions {
            request_pages: req,
            sampler,
            ..Default::default()
        };
        let t = Target {
            logical_pages: pages,
            page_bytes: 4096,
        };
        Synthetic::new(&WorkloadSpec::parse(spec).unwrap(), t, &opts).unwrap()
    }

    /// A write-only workload of one-page requests yields, as `PageWrites`, the pages its
    /// requests carry, in order; any other is given back unchanged.
    #[test]
    fn page_writes_are_the_requests_pages() {
        for spec in [
            "seq-write",
            "uniform-write",
            "zipf-write:0.9",
            "hotcold-write:0.8:0.2",
        ] {
            let mut pages = gen(spec, 1000, 1).page_writes().expect("one-page writes");
            let reqs = gen(spec, 1000, 1);
            for (r, p) in reqs.take(5_000).zip(&mut pages) {
                assert_eq!((r.op, r.pages, r.lpn), (OpKind::Write, 1, p), "{spec}");
            }
        }
        let back = gen("uniform-write", 1000, 2).page_writes().unwrap_err();
        assert_eq!(
            back.request_pages, 2,
            "two-page requests are not page writes"
        );
        let mixed = gen("uniform-mix:0.3", 1000, 1).page_writes().unwrap_err();
        let mut again = gen("uniform-mix:0.3", 1000, 1);
        for r in mixed.take(100) {
            assert_eq!(Some(r), again.next(), "given back unchanged");
        }
        let pre: Vec<u64> =
            crate::precondition_pages(target(1000), 1.5, 7, Sampler::Rand08).collect();
        let reqs: Vec<u64> = crate::precondition(target(1000), 1.5, 7)
            .map(|r| r.unwrap().lpn)
            .collect();
        assert_eq!(pre, reqs, "the preconditioning's pages");
        assert_eq!(pre.len(), 2_500);
    }

    fn target(pages: u64) -> Target {
        Target {
            logical_pages: pages,
            page_bytes: 4096,
        }
    }

    #[test]
    fn requests_stay_in_range_and_aligned() {
        for spec in [
            "seq-write",
            "uniform-write",
            "zipf-write:0.99",
            "hotcold-write:0.8:0.2",
            "zipf-mix:1.1:0.5",
        ] {
            for r in gen(spec, 1001, 4).take(20_000) {
                assert!(r.lpn + r.pages as u64 <= 1001, "{spec}: {r:?}");
                assert_eq!(r.lpn % 4, 0);
            }
        }
    }

    #[test]
    fn sequential_wraps() {
        let lpns: Vec<u64> = gen("seq-write", 8, 2).take(6).map(|r| r.lpn).collect();
        assert_eq!(lpns, [0, 2, 4, 6, 0, 2]);
    }

    #[test]
    fn hot_pages_is_the_generators_hot_set() {
        let t = |pages| Target {
            logical_pages: pages,
            page_bytes: 4096,
        };
        let spec = WorkloadSpec::parse("hotcold-write:1:0.3").unwrap();
        for (pages, req) in [(1000, 1), (1001, 4), (10, 3)] {
            let hot = hot_pages(&spec, t(pages), req).unwrap();
            // X = 1: every write is hot, and hits the whole hot set.
            let max = gen("hotcold-write:1:0.3", pages, req)
                .take(5_000)
                .map(|r| r.lpn + r.pages as u64)
                .max();
            assert_eq!(max, Some(hot), "{pages} pages, {req}-page requests");
        }
        let uniform = WorkloadSpec::parse("uniform-write").unwrap();
        assert_eq!(hot_pages(&uniform, t(1000), 1), None);
        assert_eq!(hot_pages(&spec, t(1), 1), None);
    }

    #[test]
    fn hot_cold_sends_x_of_writes_to_y_of_space() {
        let n = 10_000;
        let hot = gen("hotcold-write:0.8:0.2", n, 1)
            .take(100_000)
            .filter(|r| r.lpn < n / 5)
            .count();
        assert!((hot as f64 / 100_000.0 - 0.8).abs() < 0.01, "{hot}");
    }

    #[test]
    fn read_fraction_is_respected() {
        let reads = gen("mix:0.3", 1000, 1)
            .take(100_000)
            .filter(|r| r.op == OpKind::Read)
            .count();
        assert!((reads as f64 / 100_000.0 - 0.3).abs() < 0.01);
        assert!(gen("uniform-read", 1000, 1)
            .take(100)
            .all(|r| r.op == OpKind::Read));
    }

    #[test]
    fn a_trace_spec_is_refused_not_a_panic() {
        let spec = WorkloadSpec::parse("trace:/no/such").unwrap();
        let t = Target {
            logical_pages: 100,
            page_bytes: 4096,
        };
        let e = Synthetic::new(&spec, t, &WorkloadOptions::default()).unwrap_err();
        assert!(matches!(e, WorkloadError::Spec { .. }), "{e}");
    }

    #[test]
    fn out_of_range_parameters_built_in_code_are_refused() {
        let t = Target {
            logical_pages: 100,
            page_bytes: 4096,
        };
        for addresses in [
            Addresses::Zipf { theta: f64::NAN },
            Addresses::Zipf { theta: -1.0 },
            Addresses::HotCold {
                hot_ops: 0.5,
                hot_space: 1.0,
            },
            Addresses::HotCold {
                hot_ops: f64::INFINITY,
                hot_space: 0.5,
            },
        ] {
            let spec = WorkloadSpec::Synthetic {
                addresses,
                read_fraction: 0.0,
            };
            assert!(Synthetic::new(&spec, t, &WorkloadOptions::default()).is_err());
        }
        let spec = WorkloadSpec::Synthetic {
            addresses: Addresses::Uniform,
            read_fraction: f64::NAN,
        };
        assert!(Synthetic::new(&spec, t, &WorkloadOptions::default()).is_err());
    }

    #[test]
    fn same_seed_same_stream() {
        let a: Vec<Request> = gen("zipf-mix:0.9:0.5", 5000, 1).take(1000).collect();
        let b: Vec<Request> = gen("zipf-mix:0.9:0.5", 5000, 1).take(1000).collect();
        assert_eq!(a, b);
    }
}
