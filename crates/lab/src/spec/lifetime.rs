//! [`LifetimeSpec`]: a `flashlab lifetime` run (P5's Table 1 over a block trace or a
//! synthetic workload).

use super::{de, RunSpec, SpecError};
use crate::lifetime::{ClassBy, LifetimeOptions, Source};
use crate::units::{parse_bytes, parse_multiple};
use policy::streams::LbaPolicySpec;
use serde::{Deserialize, Serialize};
use std::path::PathBuf;
use workload::cache_trace::PageTraceFormat;
use workload::TraceFormat;

/// Lifetimes of written pages per class. Defaults: 4x the capacity of a synthetic workload,
/// classes by stream with the `none` policy, 4 KiB pages, seed 1.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(default)]
#[cfg_attr(feature = "clap", derive(clap::Args))]
pub struct LifetimeSpec {
    /// A block trace (plain or .gz/.bz2/.xz/.zst), or a page-reference trace (`pg` from
    /// `flashlab capture pg-tpcc`, `tpcc` generator settings, any `buffer-sim` format); needs
    /// --format. Without it, --workload.
    #[serde(deserialize_with = "de::opt_parsed")]
    pub trace: Option<PathBuf>,
    /// Trace format: msr, spc, disksim, systor, tencent, blkparse (block traces, as `flashlab
    /// sim`), or a page trace's: pg, tpcc, text, arc, lirs, u32be, u32le, u64be (as
    /// `flashlab buffer-sim`; its write references count).
    #[cfg_attr(feature = "clap", arg(long))]
    #[serde(deserialize_with = "de::opt_string")]
    pub format: Option<String>,
    /// A synthetic workload instead of a trace (`flashlab sim --help` lists them), e.g.
    /// hotcold-write:0.9:0.1.
    #[cfg_attr(feature = "clap", arg(long, conflicts_with = "trace"))]
    #[serde(deserialize_with = "de::opt_string")]
    pub workload: Option<String>,
    /// Synthetic workloads: page writes, in multiples of the capacity.
    #[cfg_attr(feature = "clap", arg(long, default_value = "4x"))]
    #[serde(deserialize_with = "de::string")]
    pub write_volume: String,
    /// How writes are grouped: stream (the stream --stream-policy gives each write),
    /// lba-range:N (N equal ranges of the space) or relation (pg and tpcc page traces: by
    /// table or index).
    #[cfg_attr(feature = "clap", arg(long, default_value = "stream"))]
    #[serde(deserialize_with = "de::string")]
    pub class: String,
    /// Stream policy for --class stream: none, hot-cold, by-lba-range:N, auto[:RANGES]
    /// (as `flashlab sim`).
    #[cfg_attr(feature = "clap", arg(long, default_value = "none"))]
    #[serde(deserialize_with = "de::string")]
    pub stream_policy: String,
    /// Streams the policy may use [default: what it needs; auto: 4].
    #[cfg_attr(feature = "clap", arg(long))]
    #[serde(deserialize_with = "de::opt_parsed")]
    pub streams: Option<u16>,
    /// Logical space, e.g. 4GiB: trace addresses wrap onto it [default: a trace's span; 1GiB
    /// for a synthetic workload].
    #[cfg_attr(feature = "clap", arg(long))]
    #[serde(deserialize_with = "de::opt_string")]
    pub capacity: Option<String>,
    /// Page size, e.g. 4KiB.
    #[cfg_attr(feature = "clap", arg(long, default_value = "4KiB"))]
    #[serde(deserialize_with = "de::string")]
    pub page_size: String,
    #[cfg_attr(feature = "clap", arg(long, default_value_t = 1))]
    #[serde(deserialize_with = "de::parsed")]
    pub seed: u64,
}

impl Default for LifetimeSpec {
    fn default() -> Self {
        LifetimeSpec {
            trace: None,
            format: None,
            workload: None,
            write_volume: "4x".into(),
            class: "stream".into(),
            stream_policy: "none".into(),
            streams: None,
            capacity: None,
            page_size: "4KiB".into(),
            seed: 1,
        }
    }
}

impl RunSpec for LifetimeSpec {
    /// Refused: neither or both of a trace and a workload, a trace without a known format, a
    /// format without a trace, volumes, sizes, classes and stream policies that do not parse.
    fn validate(&self) -> Result<(), SpecError> {
        self.options().map(|_| ())
    }
}

impl LifetimeSpec {
    /// The options `lab::lifetime::run` takes.
    pub fn options(&self) -> Result<LifetimeOptions, SpecError> {
        let page_bytes =
            parse_bytes(&self.page_size).map_err(|e| SpecError::refused("--page-size", e))?;
        if page_bytes == 0 || page_bytes % 512 != 0 || page_bytes > u32::MAX as u64 {
            return Err(SpecError::value(
                "--page-size",
                &self.page_size,
                "expected a whole number of 512-byte sectors, up to 4 GiB (e.g. 4KiB)",
            ));
        }
        Ok(LifetimeOptions {
            source: self.source()?,
            class_by: ClassBy::parse(&self.class).map_err(|e| SpecError::stated("--class", e))?,
            stream_policy: LbaPolicySpec::parse(&self.stream_policy)
                .map_err(|e| SpecError::stated("--stream-policy", e))?,
            streams: self.streams,
            page_bytes: page_bytes as u32,
            capacity_bytes: self
                .capacity
                .as_deref()
                .map(|c| parse_bytes(c).map_err(|e| SpecError::refused("--capacity", e)))
                .transpose()?,
        })
    }

    fn source(&self) -> Result<Source, SpecError> {
        match (&self.trace, &self.workload) {
            (Some(path), None) => {
                let Some(f) = &self.format else {
                    return Err(SpecError::stated(
                        "--format",
                        format!("a trace needs --format ({})", formats()),
                    ));
                };
                if let Some(format) = TraceFormat::parse(f) {
                    return Ok(Source::Trace {
                        path: path.clone(),
                        format,
                    });
                }
                match PageTraceFormat::parse(f) {
                    Some(PageTraceFormat::Block(format)) => Ok(Source::Trace {
                        path: path.clone(),
                        format,
                    }),
                    Some(format) => Ok(Source::PageTrace {
                        path: path.clone(),
                        format,
                    }),
                    None => Err(SpecError::value(
                        "--format",
                        f,
                        format!("expected one of {}", formats()),
                    )),
                }
            }
            (None, Some(spec)) => {
                if self.format.is_some() {
                    return Err(SpecError::rule(
                        "--format",
                        "applies only to a TRACE argument",
                    ));
                }
                Ok(Source::Synthetic {
                    spec: spec.clone(),
                    volume: self.volume()?,
                    seed: self.seed,
                })
            }
            _ => Err(SpecError::stated(
                "--workload",
                "give a TRACE (with --format) or --workload SPEC",
            )),
        }
    }
}

impl LifetimeSpec {
    /// `--write-volume`: positive, and at most `WRITE_VOLUME_MAX` x the capacity.
    fn volume(&self) -> Result<f64, SpecError> {
        let v = &self.write_volume;
        let x = parse_multiple(v).map_err(|e| SpecError::refused("--write-volume", e))?;
        if x <= 0.0 {
            return Err(SpecError::value(
                "--write-volume",
                v,
                "a zero volume measures nothing; give a positive multiple of the capacity, e.g. 4x",
            ));
        }
        let most = super::sim::WRITE_VOLUME_MAX;
        if x > most {
            return Err(SpecError::value(
                "--write-volume",
                v,
                format!("more than {most} x the capacity would run for days; give at most that"),
            ));
        }
        Ok(x)
    }
}

fn formats() -> String {
    let block = TraceFormat::ALL
        .iter()
        .map(|f| f.name())
        .collect::<Vec<_>>()
        .join(", ");
    format!(
        "{block} (block traces), or pg, tpcc, text, arc, lirs, u32be, u32le, u64be (page traces)"
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_run_needs_one_source_and_parsable_sizes() {
        let synthetic = LifetimeSpec {
            workload: Some("hotcold-write:0.9:0.1".into()),
            ..LifetimeSpec::default()
        };
        assert_eq!(synthetic.validate(), Ok(()));
        assert_eq!(
            LifetimeSpec::default().validate().unwrap_err().field(),
            "--workload"
        );
        let field = |f: fn(&mut LifetimeSpec)| {
            let mut s = synthetic.clone();
            f(&mut s);
            s.validate().unwrap_err().field()
        };
        assert_eq!(field(|s| s.page_size = "0".into()), "--page-size");
        assert_eq!(field(|s| s.page_size = "3".into()), "--page-size");
        assert_eq!(field(|s| s.write_volume = "1e30x".into()), "--write-volume");
        assert_eq!(field(|s| s.write_volume = "0x".into()), "--write-volume");
        assert_eq!(field(|s| s.write_volume = "lots".into()), "--write-volume");
        assert_eq!(field(|s| s.format = Some("msr".into())), "--format");
        assert_eq!(field(|s| s.class = "colour".into()), "--class");
    }
}
