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
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

#[derive(Clone, Debug)]
enum Gen {
    Sequential { next: u64 },
    Uniform,
    Zipf(ZipfSlots),
    HotCold { hot_ops: f64, hot_slots: u64 },
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
            Addresses::Uniform => Gen::Uniform,
            Addresses::Zipf { theta } => Gen::Zipf(ZipfSlots::new(slots, theta)),
            Addresses::HotCold { hot_ops, hot_space } => Gen::HotCold {
                hot_ops,
                hot_slots: hot_slots(hot_space, slots),
            },
        };
        Ok(Synthetic {
            gen,
            read_fraction: *read_fraction,
            slots,
            request_pages: opts.request_pages.max(1),
            rng: ChaCha8Rng::seed_from_u64(opts.seed),
        })
    }

    fn next_slot(&mut self) -> u64 {
        match &mut self.gen {
            Gen::Sequential { next } => {
                let s = *next;
                *next = if s + 1 == self.slots { 0 } else { s + 1 };
                s
            }
            Gen::Uniform => self.rng.gen_range(0..self.slots),
            Gen::Zipf(z) => z.sample(&mut self.rng),
            Gen::HotCold { hot_ops, hot_slots } => {
                let (hot_ops, hot) = (*hot_ops, *hot_slots);
                if self.slots == 1 {
                    0
                } else if self.rng.gen::<f64>() < hot_ops {
                    self.rng.gen_range(0..hot)
                } else {
                    self.rng.gen_range(hot..self.slots)
                }
            }
        }
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
    n: u64,
    rng: ChaCha8Rng,
}

impl UniformPages {
    pub fn new(n: u64, seed: u64) -> UniformPages {
        UniformPages {
            n,
            rng: ChaCha8Rng::seed_from_u64(seed),
        }
    }
}

impl Iterator for UniformPages {
    type Item = u64;
    #[inline]
    fn next(&mut self) -> Option<u64> {
        (self.n > 0).then(|| self.rng.gen_range(0..self.n))
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

    fn gen(spec: &str, pages: u64, req: u32) -> Synthetic {
        let opts = WorkloadOptions {
            request_pages: req,
            ..Default::default()
        };
        let t = Target {
            logical_pages: pages,
            page_bytes: 4096,
        };
        Synthetic::new(&WorkloadSpec::parse(spec).unwrap(), t, &opts).unwrap()
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
