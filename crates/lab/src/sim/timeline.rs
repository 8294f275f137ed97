//! The measured phase's timeline: WAF and latency sampled after each interval of host pages
//! (`SimResult::timeline`).
//!
//! Each interval's latency figures come from the device ([`ssd::Ssd::sample_latency`]: the
//! figures of the histogram of the interval's latencies, computed from its counts), which
//! keeps every count: at the end it holds exactly the counts it would have recorded
//! unsampled.

use super::{TimelinePoint, TIMELINE_POINTS};
use crate::host::{HostDriver, RunCount};
use anyhow::Result;
use ssd::{SimTime, Ssd};

/// Run `pages` more pages of the measured phase, reporting progress.
pub(super) type Step<'s> =
    dyn FnMut(&mut HostDriver, u64, &mut dyn FnMut(u64)) -> Result<RunCount> + 's;

/// Mean, p99, p999 and max of an interval's latencies, microseconds (zeros: none).
type LatencyUs = (f64, f64, f64, f64);

/// Start the first interval: what the device recorded before the phase is not sampled.
fn start_latency(ssd: &mut Ssd) {
    let _ = ssd.sample_latency();
}

/// The latencies of the interval since the last sample (an untimed run records none).
fn sample_latency(ssd: &mut Ssd) -> LatencyUs {
    match ssd.sample_latency() {
        None => (0.0, 0.0, 0.0, 0.0),
        Some(s) => (
            s.mean / 1e3,
            s.p99 as f64 / 1e3,
            s.p999 as f64 / 1e3,
            s.max as f64 / 1e3,
        ),
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
    start_latency(d.port.ssd_mut());
    let limit_reached = loop {
        let target = limit.map_or(done + every, |l| l.min(done + every));
        let c = step(d, target - done, &mut |p| progress("measure", done + p))?;
        done += c.pages;
        let stats = d.ssd().stats();
        let interval = stats.since(&prev_stats);
        let total = stats.since(&before);
        let (mean, p99, p999, max) = sample_latency(d.port.ssd_mut());
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
    let count = RunCount {
        pages: done,
        limit_reached,
    };
    Ok((count, timeline))
}
