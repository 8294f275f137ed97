//! The `--workload` mini-language: parse a spec string into a [`WorkloadSpec`].

use crate::flash_cache::FlashCacheSpec;
use crate::WorkloadError;
use std::path::PathBuf;

/// Every accepted form (shown by `flashlab sim --help`).
pub const SPEC_HELP: &str = "\
Workloads (--workload):
  seq-write | seq-read            sequential over the logical space, wrapping at the end
  uniform-write | uniform-read    uniformly random request-aligned addresses
  zipf-write:THETA | zipf-read:THETA
                                  zipfian popularity (THETA in [0, 5), e.g. 0.99); ranks are
                                  scattered over the space by a fixed permutation
  hotcold-write:X:Y               a fraction X of writes go to a fraction Y of the space
                                  (e.g. 0.8:0.2), uniformly within each part
  mix:R | uniform-mix:R           uniform addresses, a fraction R of requests are reads
  zipf-mix:THETA:R                zipfian addresses, a fraction R of requests are reads
  flash-cache:U:S:W               a flash cache (CacheLib's engines): it uses a fraction U of
                                  the space (the rest trimmed), S of it 4 KiB buckets rewritten
                                  at random (small objects, stream 1), the rest 16 MiB regions
                                  written in order and reused FIFO (large objects, stream 0); a
                                  fraction W of written pages are bucket writes (e.g. 0.9:0.05:0.5)
  trace:PATH                      replay a block trace (--trace-format msr|spc|disksim|systor|
                                  tencent|blkparse; .gz .bz2 .xz .zst are decompressed)
Request size: --request-size (a whole number of pages; synthetic requests are aligned to it).
";

/// How addresses are drawn.
#[derive(Clone, Debug, PartialEq)]
pub enum Addresses {
    Sequential,
    Uniform,
    Zipf { theta: f64 },
    HotCold { hot_ops: f64, hot_space: f64 },
}

#[derive(Clone, Debug, PartialEq)]
pub enum WorkloadSpec {
    /// Synthetic: addresses, and the fraction of requests that are reads (0 = write-only).
    Synthetic {
        addresses: Addresses,
        read_fraction: f64,
    },
    Trace {
        path: PathBuf,
    },
    /// A flash cache's two engines (see [`crate::flash_cache`]).
    FlashCache(FlashCacheSpec),
}

impl WorkloadSpec {
    pub fn parse(s: &str) -> Result<WorkloadSpec, WorkloadError> {
        let bad = |reason: &str| WorkloadError::Spec {
            spec: s.to_string(),
            reason: reason.to_string(),
        };
        if let Some(path) = s.strip_prefix("trace:") {
            if path.is_empty() {
                return Err(bad("trace:PATH needs a path"));
            }
            return Ok(WorkloadSpec::Trace {
                path: PathBuf::from(path),
            });
        }
        let mut parts = s.split(':');
        let kind = parts.next().unwrap_or_default();
        let args: Vec<&str> = parts.collect();
        let num = |i: usize, what: &str| -> Result<f64, WorkloadError> {
            let a = args
                .get(i)
                .ok_or_else(|| bad(&format!("missing {what}; see --help for the forms")))?;
            a.parse::<f64>()
                .ok()
                .filter(|x| x.is_finite())
                .ok_or_else(|| bad(&format!("{what} `{a}` is not a number")))
        };
        let fraction = |x: f64, what: &str| -> Result<f64, WorkloadError> {
            if (0.0..=1.0).contains(&x) {
                Ok(x)
            } else {
                Err(bad(&format!("{what} {x} must be in [0, 1]")))
            }
        };
        let theta = |x: f64| -> Result<f64, WorkloadError> {
            if (0.0..5.0).contains(&x) {
                Ok(x)
            } else {
                Err(bad(&format!("zipf theta {x} must be in [0, 5)")))
            }
        };
        let want_args = |n: usize| -> Result<(), WorkloadError> {
            if args.len() == n {
                Ok(())
            } else {
                Err(bad(&format!(
                    "`{kind}` takes {n} argument(s), got {}",
                    args.len()
                )))
            }
        };
        let (addresses, read_fraction) = match kind {
            "seq-write" | "seq-read" | "uniform-write" | "uniform-read" => {
                want_args(0)?;
                let a = if kind.starts_with("seq") {
                    Addresses::Sequential
                } else {
                    Addresses::Uniform
                };
                (a, if kind.ends_with("read") { 1.0 } else { 0.0 })
            }
            "zipf-write" | "zipf-read" => {
                want_args(1)?;
                let t = theta(num(0, "zipf theta")?)?;
                (
                    Addresses::Zipf { theta: t },
                    if kind.ends_with("read") { 1.0 } else { 0.0 },
                )
            }
            "hotcold-write" => {
                want_args(2)?;
                let hot_ops = fraction(num(0, "hot fraction of writes X")?, "X")?;
                let hot_space = fraction(num(1, "hot fraction of space Y")?, "Y")?;
                if hot_space == 0.0 || hot_space == 1.0 {
                    return Err(bad("Y must be strictly between 0 and 1"));
                }
                (Addresses::HotCold { hot_ops, hot_space }, 0.0)
            }
            "mix" | "uniform-mix" => {
                want_args(1)?;
                (
                    Addresses::Uniform,
                    fraction(num(0, "read fraction R")?, "R")?,
                )
            }
            "zipf-mix" => {
                want_args(2)?;
                let t = theta(num(0, "zipf theta")?)?;
                (
                    Addresses::Zipf { theta: t },
                    fraction(num(1, "read fraction R")?, "R")?,
                )
            }
            "flash-cache" => {
                want_args(3)?;
                let fc = FlashCacheSpec {
                    utilisation: num(0, "utilisation U")?,
                    small_space: num(1, "small-object space S")?,
                    small_writes: num(2, "small-object write share W")?,
                };
                fc.check(s)?;
                return Ok(WorkloadSpec::FlashCache(fc));
            }
            _ => return Err(bad("unknown workload; see --help for the forms")),
        };
        Ok(WorkloadSpec::Synthetic {
            addresses,
            read_fraction,
        })
    }

    /// True when the workload only writes.
    pub fn is_write_only(&self) -> bool {
        match self {
            WorkloadSpec::Synthetic { read_fraction, .. } => *read_fraction == 0.0,
            WorkloadSpec::FlashCache(_) => true,
            WorkloadSpec::Trace { .. } => false,
        }
    }

    /// True when the workload may write (traces may).
    pub fn writes(&self) -> bool {
        match self {
            WorkloadSpec::Synthetic { read_fraction, .. } => *read_fraction < 1.0,
            WorkloadSpec::Trace { .. } | WorkloadSpec::FlashCache(_) => true,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_documented_form_parses() {
        for s in [
            "seq-write",
            "seq-read",
            "uniform-write",
            "uniform-read",
            "zipf-write:0.99",
            "zipf-read:1.2",
            "hotcold-write:0.8:0.2",
            "mix:0.3",
            "uniform-mix:0.5",
            "zipf-mix:0.9:0.5",
            "trace:/x/y.csv",
            "flash-cache:0.9:0.05:0.5",
        ] {
            WorkloadSpec::parse(s).unwrap_or_else(|e| panic!("{s}: {e}"));
        }
    }

    #[test]
    fn bad_specs_say_what_is_wrong() {
        for (s, needle) in [
            ("zipf-write:abc", "not a number"),
            ("zipf-write", "takes 1 argument"),
            ("hotcold-write:0.8:1.5", "[0, 1]"),
            ("mix:0.5:3", "argument"),
            ("random", "unknown workload"),
            ("trace:", "path"),
            ("flash-cache:0.9:0.05", "takes 3 argument"),
            ("flash-cache:1.5:0.05:0.5", "utilisation"),
        ] {
            let e = WorkloadSpec::parse(s).unwrap_err().to_string();
            assert!(e.contains(needle), "{s}: {e}");
        }
    }

    #[test]
    fn write_only_and_writes() {
        assert!(WorkloadSpec::parse("uniform-write")
            .unwrap()
            .is_write_only());
        assert!(!WorkloadSpec::parse("mix:0.5").unwrap().is_write_only());
        assert!(WorkloadSpec::parse("mix:0.5").unwrap().writes());
        assert!(!WorkloadSpec::parse("seq-read").unwrap().writes());
    }
}
