//! The measured phase's timeline: WAF and latency sampled after each interval of host pages
//! (`SimResult::timeline`).
//!
//! Each interval's latencies are taken from the device ([`ssd::Ssd::take_latency_ns`], which
//! clears the device's counts), added to the phase's total, and the total is given back at the
//! end ([`ssd::Ssd::add_latency_ns`]): the device then holds exactly the counts it would have
//! recorded unsampled (counts add bucket by bucket: the same counts, min, max, mean and
//! quantiles).

use super::{TimelinePoint, TIMELINE_POINTS};
use crate::host::{HostDriver, RunCount};
use anyhow::Result;
use hdrhistogram::Histogram;
use ssd::{SimTime, Ssd};

/// Run `pages` more pages of the measured phase, reporting progress.
pub(super) type Step<'s> =
    dyn FnMut(&mut HostDriver, u64, &mut dyn FnMut(u64)) -> Result<RunCount> + 's;

/// Latency of each interval, taken from the device; see the module comment.
struct LatencySampler {
    /// Everything recorded before the phase's last sample (None: nothing yet, so an untimed
    /// run never builds a histogram: its ~270 KiB would count in the run's memory).
    total: Option<Histogram<u64>>,
}

/// Mean, p99, p999 and max of an interval's latencies, microseconds (zeros: none).
type LatencyUs = (f64, f64, f64, f64);

impl LatencySampler {
    /// Start sampling: what the device recorded so far moves to the total.
    fn new(ssd: &mut Ssd) -> LatencySampler {
        LatencySampler {
            total: (!ssd.latency_is_empty()).then(|| ssd.take_latency_ns()),
        }
    }

    /// The interval since the last sample (an untimed run records none: nothing to do).
    fn sample(&mut self, ssd: &mut Ssd) -> LatencyUs {
        if ssd.latency_is_empty() {
            return (0.0, 0.0, 0.0, 0.0);
        }
        let lat = ssd.take_latency_ns();
        let q = |q: f64| lat.value_at_quantile(q) as f64 / 1e3;
        let us = (lat.mean() / 1e3, q(0.99), q(0.999), lat.max() as f64 / 1e3);
        match self.total.as_mut() {
            Some(total) => total
                .add(&lat)
                .expect("histograms made with the same bounds add"),
            None => self.total = Some(lat),
        }
        us
    }

    /// Give the device its whole histogram back (with anything recorded after the last
    /// sample).
    fn finish(self, ssd: &mut Ssd) {
        if let Some(total) = &self.total {
            ssd.add_latency_ns(total);
        }
    }
}

/// Run the measured phase in intervals of pages and sample WAF and latency after each. The
/// requests issued, and so every figure, are those of one uninterrupted run: an interval
/// stops after the request that reaches its page count, and the next resumes the stream.
pub(super) fn run_sampled(
    d: &mut HostDriver,
    step: &mut Step<'_>,
    limit: Option<u64>,
    (before, t0): (ssd::Stats, SimTime),
    progress: &mut dyn FnMut(&str, u64),
) -> Result<(RunCount, Vec<TimelinePoint>)> {
    let logical = d.ssd().logical_pages().max(1);
    let mut every = match limit {
        Some(l) => l.div_ceil(TIMELINE_POINTS).max(1),
        None => (logical / 10).max(1),
    };
    let mut timeline = Vec::new();
    let mut done = 0u64;
    let mut prev_stats = before;
    let mut latency = LatencySampler::new(d.port.ssd_mut());
    let limit_reached = loop {
        let target = limit.map_or(done + every, |l| l.min(done + every));
        let c = match step(d, target - done, &mut |p| progress("measure", done + p)) {
            Ok(c) => c,
            Err(e) => {
                latency.finish(d.port.ssd_mut());
                return Err(e);
            }
        };
        done += c.pages;
        let stats = d.ssd().stats();
        let interval = stats.since(&prev_stats);
        let total = stats.since(&before);
        let (mean, p99, p999, max) = latency.sample(d.port.ssd_mut());
        prev_stats = stats;
        timeline.push(TimelinePoint {
            host_pages_x_capacity: done as f64 / logical as f64,
            sim_seconds: d.last_done().0.saturating_sub(t0.0) as f64 / 1e9,
            waf_interval: (interval.host_pages_written > 0).then(|| interval.waf()),
            waf_cumulative: (total.host_pages_written > 0).then(|| total.waf()),
            latency_us_mean: mean,
            latency_us_p99: p99,
            latency_us_p999: p999,
            latency_us_max: max,
        });
        if limit.is_some_and(|l| done >= l) {
            break true;
        }
        if !c.limit_reached {
            break false; // the stream ended
        }
        if timeline.len() as u64 >= 2 * TIMELINE_POINTS {
            // A long trace: keep every other sample and widen the interval.
            timeline = timeline.into_iter().skip(1).step_by(2).collect();
            every *= 2;
        }
    };
    latency.finish(d.port.ssd_mut());
    let count = RunCount {
        pages: done,
        limit_reached,
    };
    Ok((count, timeline))
}
