//! [`FlowSpec`]: one flow of a `flashlab sim` job as the user states it (a `[[flow]]` table
//! of a job file, or the single-workload flags, which make a one-flow job), and its
//! resolution into the [`FlowOptions`] the simulator runs.

use super::SpecError;
use crate::sim::FlowOptions;
use crate::units::parse_bytes;
use anyhow::{bail, Context, Result};
use ssd::SsdConfig;
use workload::mix::{Pace, Window};
use workload::{LbaMapping, TraceFormat, WorkloadSpec};

/// Where a flow starts or stops: the job's `n`-th host request (share flows), or a time of
/// simulated arrival (rate flows).
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Bound {
    Requests(u64),
    Seconds(f64),
}

/// One flow. Defaults: `uniform-write`, share 1, one page per request, the job's stream
/// policy, the whole device, active throughout.
#[derive(Clone, Debug, PartialEq)]
pub struct FlowSpec {
    pub name: String,
    /// A `--workload` form (`workload::SPEC_HELP`).
    pub workload: String,
    /// Relative share of the job's requests (closed loop).
    pub share: Option<f64>,
    /// Requests per second of simulated time (open loop).
    pub rate_iops: Option<f64>,
    /// The device stream of this flow's writes (None: the job's `stream_policy`).
    pub stream: Option<u16>,
    pub request_size: Option<String>,
    pub start: Option<Bound>,
    pub stop: Option<Bound>,
    /// This flow's workload seed (None: forked from the job's seed).
    pub seed: Option<u64>,
    pub trace_format: Option<String>,
    pub trace_mapping: Option<String>,
    /// First byte of the device region this flow addresses (default 0).
    pub offset: Option<String>,
    /// Bytes of the region (default: the device's rest from `offset`).
    pub size: Option<String>,
}

impl Default for FlowSpec {
    fn default() -> Self {
        FlowSpec {
            name: "uniform-write".into(),
            workload: "uniform-write".into(),
            share: None,
            rate_iops: None,
            stream: None,
            request_size: None,
            start: None,
            stop: None,
            seed: None,
            trace_format: None,
            trace_mapping: None,
            offset: None,
            size: None,
        }
    }
}

impl FlowSpec {
    /// Every check that needs neither a file nor the device.
    pub fn validate(&self) -> Result<(), SpecError> {
        WorkloadSpec::parse(&self.workload)
            .map_err(|e| SpecError::refused("--workload", e.to_string()))?;
        let trace = self.workload.starts_with("trace:");
        if trace && self.trace_format.is_none() {
            return Err(SpecError::rule(
                "--workload trace:PATH",
                format!("needs --trace-format ({})", trace_formats()),
            ));
        }
        for (given, flag) in [
            (self.trace_format.is_some(), "--trace-format"),
            (self.trace_mapping.is_some(), "--trace-mapping"),
        ] {
            if given && !trace {
                return Err(SpecError::rule(
                    flag,
                    format!(
                        "applies only to --workload trace:PATH (the workload is `{}`)",
                        self.workload
                    ),
                ));
            }
        }
        if let Some(f) = &self.trace_format {
            parse_trace_format(f)?;
        }
        match self.trace_mapping.as_deref() {
            None | Some("wrap" | "scale") => {}
            Some(m) => {
                return Err(SpecError::value(
                    "--trace-mapping",
                    m,
                    "expected wrap or scale",
                ))
            }
        }
        for (field, v) in [
            ("--request-size", &self.request_size),
            ("offset", &self.offset),
            ("size", &self.size),
        ] {
            if let Some(v) = v {
                parse_bytes(v).map_err(|e| SpecError::refused(field, e))?;
            }
        }
        self.check_pace()
    }

    fn check_pace(&self) -> Result<(), SpecError> {
        for (field, x) in [("share", self.share), ("rate", self.rate_iops)] {
            if let Some(x) = x.filter(|x| !(x.is_finite() && *x > 0.0)) {
                return Err(SpecError::value(field, x, "expected a positive number"));
            }
        }
        if self.share.is_some() && self.rate_iops.is_some() {
            return Err(SpecError::rule(
                "rate",
                "cannot be given with share: a flow is paced by one of them",
            ));
        }
        let by_rate = self.rate_iops.is_some();
        for (field, b) in [("start", self.start), ("stop", self.stop)] {
            match b {
                Some(Bound::Seconds(_)) if !by_rate => return Err(SpecError::rule(field, "in seconds needs rate: a share flow's requests have no arrival time (give a request count, e.g. 100000)")),
                Some(Bound::Requests(_)) if by_rate => return Err(SpecError::rule(field, "as a request count needs share: a rate flow starts and stops at a simulated time (give e.g. \"2s\")")),
                _ => {}
            }
        }
        if let (Some(a), Some(b)) = (self.start, self.stop) {
            if bound_value(a) >= bound_value(b) {
                return Err(SpecError::rule("stop", "must come after start"));
            }
        }
        Ok(())
    }

    /// The flow the simulator runs on a device of `cfg`; `index` and `job_seed` fork its
    /// workload seed (flow 0 keeps the single-workload seed).
    pub fn resolve(&self, cfg: &SsdConfig, index: usize, job_seed: u64) -> Result<FlowOptions> {
        self.validate()?;
        let page = cfg.geometry.page_bytes as u64;
        let request_pages = request_pages(self.request_size.as_deref(), page)?;
        let trace_format = self
            .trace_format
            .as_deref()
            .map(parse_trace_format)
            .transpose()?;
        let logical = cfg.logical_pages();
        let offset_pages = self
            .region_pages("offset", self.offset.as_deref(), page)?
            .unwrap_or(0);
        if offset_pages >= logical {
            return Err(SpecError::value(
                "offset",
                self.offset.as_deref().unwrap_or(""),
                format!("past the device's {} pages", logical),
            )
            .into());
        }
        let size_pages = self
            .region_pages("size", self.size.as_deref(), page)?
            .unwrap_or(logical - offset_pages);
        if size_pages == 0 || offset_pages + size_pages > logical {
            return Err(SpecError::value("size", self.size.as_deref().unwrap_or(""), format!("the region must hold at least one page and end within the device's {logical} pages ({} bytes)", logical * page)).into());
        }
        let seed = self.seed.unwrap_or_else(|| match index {
            0 => seed::Seed(job_seed).fork("workload").value(),
            k => seed::Seed(job_seed).fork(&format!("workload.{k}")).value(),
        });
        Ok(FlowOptions {
            name: self.name.clone(),
            workload: self.workload.clone(),
            trace_format,
            mapping: self.mapping(trace_format)?,
            request_pages,
            pace: match self.rate_iops {
                Some(r) => Pace::RateIops(r),
                None => Pace::Share(self.share.unwrap_or(1.0)),
            },
            window: Window {
                start: self.start.map_or(0, bound_units),
                stop: self.stop.map(bound_units),
            },
            stream: self.stream,
            seed,
            offset_pages,
            size_pages,
        })
    }

    fn region_pages(
        &self,
        field: &'static str,
        v: Option<&str>,
        page: u64,
    ) -> Result<Option<u64>, SpecError> {
        let Some(v) = v else { return Ok(None) };
        let bytes = parse_bytes(v).map_err(|e| SpecError::refused(field, e))?;
        if bytes % page != 0 {
            return Err(SpecError::value(
                field,
                v,
                format!("not a whole number of {page}-byte pages"),
            ));
        }
        Ok(Some(bytes / page))
    }

    fn mapping(&self, format: Option<TraceFormat>) -> Result<LbaMapping> {
        match self.trace_mapping.as_deref().unwrap_or("wrap") {
            "wrap" => Ok(LbaMapping::Wrap),
            "scale" => match (self.workload.strip_prefix("trace:"), format) {
                (Some(path), Some(format)) => {
                    let path = std::path::Path::new(path);
                    // The span pass reads the whole trace before the replay reads it again: a
                    // pipe (or /dev/stdin) would be empty the second time.
                    let meta = std::fs::metadata(path)
                        .with_context(|| format!("--workload trace:{}", path.display()))?;
                    if !meta.is_file() {
                        bail!("--trace-mapping scale reads the trace twice (its span, then the replay), but {} is not a regular file (a pipe or /dev/stdin can be read only once): save it to a file, or use --trace-mapping wrap", path.display());
                    }
                    let max_byte = workload::scan_trace_span(path, format)?;
                    Ok(LbaMapping::Scale { max_byte })
                }
                _ => bail!("--trace-mapping applies only to --workload trace:PATH"),
            },
            m => bail!("--trace-mapping {m}: expected wrap or scale"),
        }
    }
}

fn bound_value(b: Bound) -> f64 {
    match b {
        Bound::Requests(n) => n as f64,
        Bound::Seconds(s) => s,
    }
}

/// A bound in the mix's units: requests, or nanoseconds of arrival time.
fn bound_units(b: Bound) -> u64 {
    match b {
        Bound::Requests(n) => n,
        Bound::Seconds(s) => (s * 1e9).round() as u64,
    }
}

/// A time of simulated arrival: `2s`, `1.5s`, `300ms`, `250us`, `10ns` (a unit is required).
pub fn parse_seconds(s: &str) -> Result<f64, String> {
    let t = s.trim();
    let split = t
        .find(|c: char| c.is_ascii_alphabetic())
        .ok_or_else(|| format!("`{s}`: give a unit, e.g. 2s or 300ms"))?;
    let (num, unit) = t.split_at(split);
    let x: f64 = num
        .trim()
        .parse()
        .map_err(|_| format!("`{s}`: expected a number and a unit, e.g. 2s or 300ms"))?;
    let scale = match unit {
        "s" => 1.0,
        "ms" => 1e-3,
        "us" => 1e-6,
        "ns" => 1e-9,
        _ => {
            return Err(format!(
                "`{s}`: unknown unit `{unit}` (expected s, ms, us or ns)"
            ))
        }
    };
    if !(x.is_finite() && x >= 0.0) {
        return Err(format!("`{s}`: expected a time of zero or more"));
    }
    Ok(x * scale)
}

fn request_pages(size: Option<&str>, page: u64) -> Result<u32, SpecError> {
    let req = match size {
        Some(r) => parse_bytes(r).map_err(|e| SpecError::refused("--request-size", e))?,
        None => page,
    };
    if req == 0 || req % page != 0 || req / page > u32::MAX as u64 {
        return Err(SpecError::value(
            "--request-size",
            size.unwrap_or_default(),
            format!("not a whole number of {page}-byte pages (one to 2^32 - 1 pages)"),
        ));
    }
    Ok((req / page) as u32)
}

pub(crate) fn trace_formats() -> String {
    TraceFormat::ALL
        .iter()
        .map(|f| f.name())
        .collect::<Vec<_>>()
        .join(", ")
}

pub(crate) fn parse_trace_format(f: &str) -> Result<TraceFormat, SpecError> {
    TraceFormat::parse(f).ok_or_else(|| {
        SpecError::value(
            "--trace-format",
            f,
            format!("expected one of {}", trace_formats()),
        )
    })
}
