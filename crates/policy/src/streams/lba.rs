//! Stream assignment by address, for block-level workloads (`flashlab sim --stream-policy`,
//! `flashlab lifetime`): which device stream each host write goes to. Each policy is a
//! [`StreamAssignment`] (writes of block workloads carry no class; these policies place by
//! logical page only).
//!
//! - `none`: every write on stream 0.
//! - `hot-cold`: oracle separation of a `hotcold-write:X:Y` workload — its hot set (the first
//!   Y of the logical space, exactly as the generator draws it) on stream 1, the rest on 0.
//! - `by-lba-range:N`: the logical space cut into N equal ranges, range i on stream i.
//! - `auto[:R]`: [`AutoStreams`] over R equal LBA ranges (default 64) as its classes,
//!   grouped online by observed lifetime into at most the device's streams.
//! - `sepbit`: SepBIT's inference of invalidation time ([`super::SepBit`]): an overwrite of a
//!   page that lived shorter than the recent short-lived mean on stream 1, the rest on 0.
//! - `oracle`: each write placed by its known death time ([`super::oracle`]): the caller
//!   records a first pass over the same requests and installs the placement
//!   ([`LbaPolicySpec::build`] refuses it alone).
//!
//! A request takes one stream: the one of its first page (every page is fed to `auto`).

use super::{AutoStreams, StreamAssignment, WriteClass};

/// LBA ranges `auto` measures when none are given.
pub const AUTO_RANGES_DEFAULT: u32 = 64;

/// Why a `--stream-policy` cannot be parsed or cannot apply, with what to do.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum LbaPolicyError {
    #[error("--stream-policy {spec}: expected {}", LbaPolicySpec::FORMS)]
    Form { spec: String },
    #[error(
        "--stream-policy {spec}: {what} `{arg}` must be a whole number from 1 to {}",
        u32::MAX
    )]
    Count {
        spec: String,
        what: &'static str,
        arg: String,
    },
    #[error("--stream-policy {spec} writes to {used} streams but the device has {device_streams} (--streams {device_streams}): give --streams {used} or more")]
    TooFewStreams {
        spec: String,
        used: u64,
        device_streams: u16,
    },
    #[error("--stream-policy hot-cold is an oracle that knows a hotcold-write:X:Y workload's hot set, but this workload has none: use by-lba-range:N or auto for other workloads")]
    NoHotSet,
    #[error("--stream-policy oracle needs a first pass over the same writes to know each write's death time: build it with the recorded placement (oracle::OracleStreams)")]
    NeedsRecording,
    #[error("--stream-policy {spec}: {ranges} LBA ranges on a device of {logical_pages} logical pages leaves empty ranges; use at most {logical_pages}")]
    EmptyRanges {
        spec: String,
        ranges: u32,
        logical_pages: u64,
    },
}

/// A parsed `--stream-policy`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum LbaPolicySpec {
    None,
    HotCold,
    ByLbaRange { ranges: u32 },
    Auto { ranges: u32 },
    SepBit,
    Oracle,
}

impl LbaPolicySpec {
    pub const FORMS: &'static str =
        "none, hot-cold, by-lba-range:N, auto[:RANGES], sepbit or oracle";

    pub fn parse(s: &str) -> Result<LbaPolicySpec, LbaPolicyError> {
        let (kind, arg) = s.split_once(':').map_or((s, None), |(k, a)| (k, Some(a)));
        let count = |a: &str, what: &'static str| -> Result<u32, LbaPolicyError> {
            a.parse()
                .ok()
                .filter(|&n| n >= 1)
                .ok_or_else(|| LbaPolicyError::Count {
                    spec: s.to_string(),
                    what,
                    arg: a.to_string(),
                })
        };
        Ok(match (kind, arg) {
            ("none", None) => LbaPolicySpec::None,
            ("hot-cold", None) => LbaPolicySpec::HotCold,
            ("oracle", None) => LbaPolicySpec::Oracle,
            ("sepbit", None) => LbaPolicySpec::SepBit,
            ("by-lba-range", Some(a)) => LbaPolicySpec::ByLbaRange {
                ranges: count(a, "the number of ranges N")?,
            },
            ("auto", None) => LbaPolicySpec::Auto {
                ranges: AUTO_RANGES_DEFAULT,
            },
            ("auto", Some(a)) => LbaPolicySpec::Auto {
                ranges: count(a, "the number of LBA ranges")?,
            },
            _ => {
                return Err(LbaPolicyError::Form {
                    spec: s.to_string(),
                })
            }
        })
    }

    /// The canonical spelling (`auto:64`, `by-lba-range:4`, ...).
    pub fn name(&self) -> String {
        match self {
            LbaPolicySpec::None => "none".into(),
            LbaPolicySpec::HotCold => "hot-cold".into(),
            LbaPolicySpec::ByLbaRange { ranges } => format!("by-lba-range:{ranges}"),
            LbaPolicySpec::Auto { ranges } => format!("auto:{ranges}"),
            LbaPolicySpec::Oracle => "oracle".into(),
            LbaPolicySpec::SepBit => "sepbit".into(),
        }
    }

    /// Device streams the policy writes to at most (`auto`, `oracle`: whatever the device
    /// offers).
    fn streams_used(&self, device_streams: u16) -> u64 {
        match *self {
            LbaPolicySpec::None => 1,
            LbaPolicySpec::HotCold | LbaPolicySpec::SepBit => 2,
            LbaPolicySpec::ByLbaRange { ranges } => ranges as u64,
            LbaPolicySpec::Auto { .. } | LbaPolicySpec::Oracle => device_streams as u64,
        }
    }

    /// The policy for a device of `logical_pages` pages with `device_streams` streams;
    /// `hot_pages` is the workload's hot set where it has one (`hot-cold` needs it). Refused
    /// where it cannot apply, with what to do.
    pub fn build(
        &self,
        hot_pages: Option<u64>,
        logical_pages: u64,
        device_streams: u16,
    ) -> Result<Box<dyn StreamAssignment>, LbaPolicyError> {
        let used = self.streams_used(device_streams);
        if used > device_streams as u64 {
            return Err(LbaPolicyError::TooFewStreams {
                spec: self.name(),
                used,
                device_streams,
            });
        }
        let n = logical_pages;
        let ranges = |r: u32| -> Result<LbaRanges, LbaPolicyError> {
            if r as u64 > n {
                return Err(LbaPolicyError::EmptyRanges {
                    spec: self.name(),
                    ranges: r,
                    logical_pages: n,
                });
            }
            Ok(LbaRanges {
                ranges: r as u64,
                logical_pages: n,
            })
        };
        Ok(match *self {
            LbaPolicySpec::None => Box::new(Single),
            LbaPolicySpec::HotCold => Box::new(HotCold {
                hot_pages: hot_pages.ok_or(LbaPolicyError::NoHotSet)?,
            }),
            LbaPolicySpec::ByLbaRange { ranges: r } => Box::new(ranges(r)?),
            LbaPolicySpec::Auto { ranges: r } => Box::new(AutoRanges {
                ranges: ranges(r)?,
                auto: AutoStreams::new(device_streams.max(1), n),
            }),
            LbaPolicySpec::SepBit => Box::new(super::SepBit::new(n)),
            LbaPolicySpec::Oracle => return Err(LbaPolicyError::NeedsRecording),
        })
    }
}

/// `none`.
struct Single;

impl StreamAssignment for Single {
    fn stream(&mut self, _lpn: u64, _class: Option<WriteClass>) -> u16 {
        0
    }
    fn stream_of_run(&mut self, _lpn: u64, _pages: u32, _class: Option<WriteClass>) -> u16 {
        0
    }
}

/// `hot-cold`: pages `0..hot_pages` on stream 1, the rest on 0.
struct HotCold {
    hot_pages: u64,
}

impl StreamAssignment for HotCold {
    fn stream(&mut self, lpn: u64, _class: Option<WriteClass>) -> u16 {
        (lpn < self.hot_pages) as u16
    }
    fn stream_of_run(&mut self, lpn: u64, _pages: u32, class: Option<WriteClass>) -> u16 {
        self.stream(lpn, class)
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

impl StreamAssignment for LbaRanges {
    fn stream(&mut self, lpn: u64, _class: Option<WriteClass>) -> u16 {
        self.of(lpn) as u16
    }
    fn stream_of_run(&mut self, lpn: u64, _pages: u32, class: Option<WriteClass>) -> u16 {
        self.stream(lpn, class)
    }
}

/// `auto:R`: LBA ranges as classes of [`AutoStreams`].
struct AutoRanges {
    ranges: LbaRanges,
    auto: AutoStreams,
}

impl StreamAssignment for AutoRanges {
    fn stream(&mut self, lpn: u64, _class: Option<WriteClass>) -> u16 {
        self.auto.on_write(lpn, self.ranges.of(lpn))
    }
    fn mapping(&self) -> Option<Vec<(u32, u16)>> {
        Some(self.auto.mapping())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The hot set of `hotcold-write:0.9:0.1` on 1000 pages.
    const HOT: Option<u64> = Some(100);

    #[test]
    fn parses_every_form_and_refuses_others() {
        for (s, want) in [
            ("none", LbaPolicySpec::None),
            ("hot-cold", LbaPolicySpec::HotCold),
            ("by-lba-range:4", LbaPolicySpec::ByLbaRange { ranges: 4 }),
            ("auto", LbaPolicySpec::Auto { ranges: 64 }),
            ("auto:8", LbaPolicySpec::Auto { ranges: 8 }),
            ("oracle", LbaPolicySpec::Oracle),
            ("sepbit", LbaPolicySpec::SepBit),
        ] {
            assert_eq!(LbaPolicySpec::parse(s).unwrap(), want, "{s}");
            assert_eq!(LbaPolicySpec::parse(&want.name()).unwrap(), want);
        }
        for bad in [
            "",
            "hot",
            "by-lba-range",
            "by-lba-range:0",
            "by-lba-range:x",
            "auto:-1",
            "none:2",
            "oracle:2",
        ] {
            let e = LbaPolicySpec::parse(bad).unwrap_err().to_string();
            assert!(e.contains("--stream-policy"), "{bad}: {e}");
        }
    }

    #[test]
    fn refusals_say_what_to_do() {
        let err = |spec: &str, hot: Option<u64>, streams| {
            LbaPolicySpec::parse(spec)
                .unwrap()
                .build(hot, 1000, streams)
                .err()
                .map(|e| e.to_string())
        };
        assert!(err("hot-cold", None, 2).unwrap().contains("hotcold-write"));
        assert!(err("hot-cold", HOT, 1).unwrap().contains("--streams 2"));
        assert!(err("by-lba-range:4", None, 2)
            .unwrap()
            .contains("--streams 4"));
        assert!(err("by-lba-range:2000", None, 4000)
            .unwrap()
            .contains("at most 1000"));
        assert!(err("hot-cold", HOT, 2).is_none());
        assert!(err("auto", None, 1).is_none());
        assert!(err("oracle", None, 4).unwrap().contains("first pass"));
    }

    #[test]
    fn oracle_and_ranges_map_as_documented() {
        let mut p = LbaPolicySpec::HotCold.build(HOT, 1000, 2).unwrap();
        assert_eq!(
            (
                p.stream_of_run(0, 1, None),
                p.stream_of_run(99, 1, None),
                p.stream_of_run(100, 1, None)
            ),
            (1, 1, 0)
        );
        let mut r = LbaPolicySpec::ByLbaRange { ranges: 3 }
            .build(HOT, 10, 3)
            .unwrap();
        let s: Vec<u16> = (0..10).map(|l| r.stream_of_run(l, 1, None)).collect();
        assert_eq!(s, [0, 0, 0, 0, 1, 1, 1, 2, 2, 2]);
        assert!(r.mapping().is_none());
    }
}
