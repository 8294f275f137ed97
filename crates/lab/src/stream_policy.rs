//! Stream assignment for block-level workloads (`flashlab sim --stream-policy`): which device
//! stream each host write goes to. Policies are types behind [`StreamPolicy`]; the sim's
//! request loop asks the one it holds and does not know which it is.
//!
//! - `none`: every write on stream 0.
//! - `hot-cold`: oracle separation of a `hotcold-write:X:Y` workload — its hot set (the first
//!   Y of the logical space, exactly as the generator draws it) on stream 1, the rest on 0.
//! - `by-lba-range:N`: the logical space cut into N equal ranges, range i on stream i.
//! - `auto[:R]`: [`ssd::AutoStreams`] over R equal LBA ranges (default 64) as its classes,
//!   grouped online by observed lifetime into at most the device's streams.
//!
//! A request takes one stream: the one of its first page (every page is fed to `auto`).

use anyhow::{bail, Context, Result};
use ssd::AutoStreams;
use workload::{Target, WorkloadSpec};

/// LBA ranges `auto` measures when none are given.
pub const AUTO_RANGES_DEFAULT: u32 = 64;

/// Chooses the device stream of each host write.
pub trait StreamPolicy {
    /// The stream of a write of `pages` pages from logical page `lpn`.
    fn stream(&mut self, lpn: u64, pages: u32) -> u16;
    /// The current `(class, stream)` table where the policy learns one (`auto`), else `None`.
    fn mapping(&self) -> Option<Vec<(u32, u16)>> {
        None
    }
}

/// A parsed `--stream-policy`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum StreamPolicySpec {
    None,
    HotCold,
    ByLbaRange { ranges: u32 },
    Auto { ranges: u32 },
}

impl StreamPolicySpec {
    pub const FORMS: &'static str = "none, hot-cold, by-lba-range:N or auto[:RANGES]";

    pub fn parse(s: &str) -> Result<StreamPolicySpec> {
        let (kind, arg) = s.split_once(':').map_or((s, None), |(k, a)| (k, Some(a)));
        let count = |a: &str, what: &str| -> Result<u32> {
            let n: u32 = a.parse().ok().filter(|&n| n >= 1).with_context(|| {
                format!(
                    "--stream-policy {s}: {what} `{a}` must be a whole number from 1 to {}",
                    u32::MAX
                )
            })?;
            Ok(n)
        };
        Ok(match (kind, arg) {
            ("none", None) => StreamPolicySpec::None,
            ("hot-cold", None) => StreamPolicySpec::HotCold,
            ("by-lba-range", Some(a)) => StreamPolicySpec::ByLbaRange {
                ranges: count(a, "the number of ranges N")?,
            },
            ("auto", None) => StreamPolicySpec::Auto {
                ranges: AUTO_RANGES_DEFAULT,
            },
            ("auto", Some(a)) => StreamPolicySpec::Auto {
                ranges: count(a, "the number of LBA ranges")?,
            },
            _ => bail!("--stream-policy {s}: expected {}", Self::FORMS),
        })
    }

    /// The canonical spelling (`auto:64`, `by-lba-range:4`, ...).
    pub fn name(&self) -> String {
        match self {
            StreamPolicySpec::None => "none".into(),
            StreamPolicySpec::HotCold => "hot-cold".into(),
            StreamPolicySpec::ByLbaRange { ranges } => format!("by-lba-range:{ranges}"),
            StreamPolicySpec::Auto { ranges } => format!("auto:{ranges}"),
        }
    }

    /// Device streams the policy writes to at most (`auto`: whatever the device offers).
    fn streams_used(&self, device_streams: u16) -> u64 {
        match *self {
            StreamPolicySpec::None => 1,
            StreamPolicySpec::HotCold => 2,
            StreamPolicySpec::ByLbaRange { ranges } => ranges as u64,
            StreamPolicySpec::Auto { .. } => device_streams as u64,
        }
    }

    /// The policy for `workload` on `target` (`request_pages`-page requests) and a device
    /// with `device_streams` streams; refused where it cannot apply, with what to do.
    pub fn build(
        &self,
        workload: &WorkloadSpec,
        target: Target,
        request_pages: u32,
        device_streams: u16,
    ) -> Result<Box<dyn StreamPolicy>> {
        let used = self.streams_used(device_streams);
        if used > device_streams as u64 {
            bail!(
                "--stream-policy {} writes to {used} streams but the device has {device_streams} (--streams {device_streams}): give --streams {used} or more",
                self.name()
            );
        }
        let n = target.logical_pages;
        let ranges = |r: u32| -> Result<u64> {
            if r as u64 > n {
                bail!(
                    "--stream-policy {}: {r} LBA ranges on a device of {n} logical pages leaves empty ranges; use at most {n}",
                    self.name()
                );
            }
            Ok(r as u64)
        };
        Ok(match *self {
            StreamPolicySpec::None => Box::new(Single),
            StreamPolicySpec::HotCold => {
                let hot = workload::synth::hot_pages(workload, target, request_pages)
                    .context("--stream-policy hot-cold is an oracle that knows a hotcold-write:X:Y workload's hot set, but this workload has none: use by-lba-range:N or auto for other workloads")?;
                Box::new(HotCold { hot_pages: hot })
            }
            StreamPolicySpec::ByLbaRange { ranges: r } => Box::new(LbaRanges {
                ranges: ranges(r)?,
                logical_pages: n,
            }),
            StreamPolicySpec::Auto { ranges: r } => Box::new(Auto {
                ranges: LbaRanges {
                    ranges: ranges(r)?,
                    logical_pages: n,
                },
                auto: AutoStreams::new(device_streams.max(1), n),
            }),
        })
    }
}

/// `none`.
struct Single;

impl StreamPolicy for Single {
    fn stream(&mut self, _lpn: u64, _pages: u32) -> u16 {
        0
    }
}

/// `hot-cold`: pages `0..hot_pages` on stream 1, the rest on 0.
struct HotCold {
    hot_pages: u64,
}

impl StreamPolicy for HotCold {
    fn stream(&mut self, lpn: u64, _pages: u32) -> u16 {
        (lpn < self.hot_pages) as u16
    }
}

/// `by-lba-range:N`: range `lpn * N / logical_pages`.
struct LbaRanges {
    ranges: u64,
    logical_pages: u64,
}

impl LbaRanges {
    #[inline]
    fn of(&self, lpn: u64) -> u32 {
        let r = lpn as u128 * self.ranges as u128 / self.logical_pages.max(1) as u128;
        r.min(self.ranges as u128 - 1) as u32
    }
}

impl StreamPolicy for LbaRanges {
    fn stream(&mut self, lpn: u64, _pages: u32) -> u16 {
        self.of(lpn) as u16
    }
}

/// `auto:R`: LBA ranges as classes of [`AutoStreams`].
struct Auto {
    ranges: LbaRanges,
    auto: AutoStreams,
}

impl StreamPolicy for Auto {
    fn stream(&mut self, lpn: u64, pages: u32) -> u16 {
        let first = self.auto.on_write(lpn, self.ranges.of(lpn));
        for p in lpn + 1..lpn + pages as u64 {
            self.auto.on_write(p, self.ranges.of(p));
        }
        first
    }
    fn mapping(&self) -> Option<Vec<(u32, u16)>> {
        Some(self.auto.mapping())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn target(pages: u64) -> Target {
        Target {
            logical_pages: pages,
            page_bytes: 4096,
        }
    }

    #[test]
    fn parses_every_form_and_refuses_others() {
        for (s, want) in [
            ("none", StreamPolicySpec::None),
            ("hot-cold", StreamPolicySpec::HotCold),
            ("by-lba-range:4", StreamPolicySpec::ByLbaRange { ranges: 4 }),
            ("auto", StreamPolicySpec::Auto { ranges: 64 }),
            ("auto:8", StreamPolicySpec::Auto { ranges: 8 }),
        ] {
            assert_eq!(StreamPolicySpec::parse(s).unwrap(), want, "{s}");
            assert_eq!(StreamPolicySpec::parse(&want.name()).unwrap(), want);
        }
        for bad in [
            "",
            "hot",
            "by-lba-range",
            "by-lba-range:0",
            "by-lba-range:x",
            "auto:-1",
            "none:2",
        ] {
            let e = StreamPolicySpec::parse(bad).unwrap_err().to_string();
            assert!(e.contains("--stream-policy"), "{bad}: {e}");
        }
    }

    #[test]
    fn refusals_say_what_to_do() {
        let hc = WorkloadSpec::parse("hotcold-write:0.9:0.1").unwrap();
        let uni = WorkloadSpec::parse("uniform-write").unwrap();
        let err = |spec: &str, w: &WorkloadSpec, streams| {
            StreamPolicySpec::parse(spec)
                .unwrap()
                .build(w, target(1000), 1, streams)
                .err()
                .map(|e| e.to_string())
        };
        assert!(err("hot-cold", &uni, 2).unwrap().contains("hotcold-write"));
        assert!(err("hot-cold", &hc, 1).unwrap().contains("--streams 2"));
        assert!(err("by-lba-range:4", &uni, 2)
            .unwrap()
            .contains("--streams 4"));
        assert!(err("by-lba-range:2000", &uni, 4000)
            .unwrap()
            .contains("at most 1000"));
        assert!(err("hot-cold", &hc, 2).is_none());
        assert!(err("auto", &uni, 1).is_none());
    }

    #[test]
    fn oracle_and_ranges_map_as_documented() {
        let hc = WorkloadSpec::parse("hotcold-write:0.9:0.1").unwrap();
        let mut p = StreamPolicySpec::HotCold
            .build(&hc, target(1000), 1, 2)
            .unwrap();
        assert_eq!(
            (p.stream(0, 1), p.stream(99, 1), p.stream(100, 1)),
            (1, 1, 0)
        );
        let mut r = StreamPolicySpec::ByLbaRange { ranges: 3 }
            .build(&hc, target(10), 1, 3)
            .unwrap();
        let s: Vec<u16> = (0..10).map(|l| r.stream(l, 1)).collect();
        assert_eq!(s, [0, 0, 0, 0, 1, 1, 1, 2, 2, 2]);
        assert!(r.mapping().is_none());
    }
}
