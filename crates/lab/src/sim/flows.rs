//! The flows of a `flashlab sim` job: their requests mixed (`workload::mix`), issued through
//! the host port with each flow's pages tagged by its class (flow `k` writes tags of class
//! `k + 1`; the preconditioning's are class 0), and counted per flow: requests, pages,
//! latency (issue to completion), and the GC copies of the flow's data, which the device
//! counts per tag class. With `--log-interval`, per-flow figures per interval of simulated
//! time, each request counted in the interval its completion falls in.

use super::{FlowOptions, Latency, SimOptions};
use crate::host::{HostDriver, RunCount};
use anyhow::Result;
use hdrhistogram::Histogram;
use policy::streams::StreamAssignment;
use serde::Serialize;
use ssd::flash::TAG_CLASS_SHIFT;
use ssd::host::Command;
use ssd::{Lpn, StreamId};
use std::collections::BTreeMap;
use workload::mix::{Flow, Mix};
use workload::{OpKind, Request, Target, WorkloadSpec};

/// One flow's figures over the measured phase (`flows` in `sim --json`).
#[derive(Clone, Debug, Serialize, PartialEq)]
pub struct FlowResult {
    pub name: String,
    pub workload: String,
    pub host_ios: u64,
    pub host_pages_written: u64,
    pub host_pages_read: u64,
    pub host_pages_trimmed: u64,
    /// Flash pages programmed for this flow's data: its host pages written plus the GC
    /// copies of its pages (in a one-flow job, every GC copy).
    pub flash_pages_written: u64,
    pub gc_pages_copied: u64,
    pub iops_per_sim_second: f64,
    /// Host bytes read and written per simulated second, in MB (10^6 bytes).
    pub throughput_mb_per_sim_second: f64,
    /// Issue to completion of this flow's requests.
    pub latency_us: Latency,
}

/// One flow's figures in one `--log-interval` (`log` in `sim --json`, rows of `--log`).
#[derive(Clone, Debug, Serialize, PartialEq)]
pub struct LogRow {
    /// End of the interval, simulated seconds since the measured phase began.
    pub sim_seconds: f64,
    pub flow: String,
    /// Requests completed in the interval, per simulated second.
    pub iops: f64,
    pub mb_per_second: f64,
    /// Latency of the requests completed in the interval (0: none).
    pub latency_us_mean: f64,
    pub latency_us_p99: f64,
    pub latency_us_max: f64,
}

/// Counters of one flow.
pub(super) struct Tally {
    pub ios: u64,
    pub pages_written: u64,
    pub pages_read: u64,
    pub pages_trimmed: u64,
    pub latency_ns: Histogram<u64>,
}

impl Tally {
    fn new() -> Tally {
        Tally {
            ios: 0,
            pages_written: 0,
            pages_read: 0,
            pages_trimmed: 0,
            // The device's bounds: 1 ns to an hour, 3 digits (a histogram that grows on
            // demand would clamp `saturating_record` at its first bound).
            latency_ns: Histogram::new_with_bounds(1, 3_600_000_000_000, 3)
                .expect("static histogram bounds are valid"),
        }
    }

    /// Count `r`; `latency_ns` None: an untimed run (no latency, as the device records none).
    fn add(&mut self, r: &Request, latency_ns: Option<u64>) {
        self.ios += 1;
        let pages = r.pages as u64;
        match r.op {
            OpKind::Write => self.pages_written += pages,
            OpKind::Read => self.pages_read += pages,
            OpKind::Trim => self.pages_trimmed += pages,
        }
        if let Some(ns) = latency_ns {
            self.latency_ns.saturating_record(ns.max(1));
        }
    }

    /// The flow's result over `sim_s` simulated seconds with `copies` GC copies of its data.
    pub fn result(&self, f: &FlowOptions, copies: u64, page_bytes: u64, sim_s: f64) -> FlowResult {
        let per_s = |x: f64| if sim_s > 0.0 { x / sim_s } else { 0.0 };
        let bytes = (self.pages_written + self.pages_read) as f64 * page_bytes as f64;
        FlowResult {
            name: f.name.clone(),
            workload: f.workload.clone(),
            host_ios: self.ios,
            host_pages_written: self.pages_written,
            host_pages_read: self.pages_read,
            host_pages_trimmed: self.pages_trimmed,
            flash_pages_written: self.pages_written + copies,
            gc_pages_copied: copies,
            iops_per_sim_second: per_s(self.ios as f64),
            throughput_mb_per_sim_second: per_s(bytes / 1e6),
            latency_us: latency_of(&self.latency_ns),
        }
    }
}

/// Percentiles, mean and max of a histogram of nanoseconds, in microseconds (0: empty).
pub(super) fn latency_of(h: &Histogram<u64>) -> Latency {
    let us = |ns: f64| if h.is_empty() { 0.0 } else { ns / 1e3 };
    Latency {
        p50: us(h.value_at_quantile(0.5) as f64),
        p99: us(h.value_at_quantile(0.99) as f64),
        p999: us(h.value_at_quantile(0.999) as f64),
        mean: us(h.mean()),
        max: us(h.max() as f64),
    }
}

/// Requests, bytes and latencies of one flow in one log interval.
#[derive(Default)]
struct Bucket {
    bytes: u64,
    latencies_ns: Vec<u64>,
}

/// Per-interval buckets of `--log-interval`, keyed by interval index.
struct IntervalLog {
    every_ns: u64,
    t0_ns: u64,
    pending: BTreeMap<u64, Vec<Bucket>>,
    rows: Vec<LogRow>,
}

impl IntervalLog {
    fn add(&mut self, flows: usize, k: usize, done_ns: u64, bytes: u64, latency_ns: u64) {
        let i = done_ns.saturating_sub(self.t0_ns) / self.every_ns;
        let b = self
            .pending
            .entry(i)
            .or_insert_with(|| (0..flows).map(|_| Bucket::default()).collect());
        b[k].bytes += bytes;
        b[k].latencies_ns.push(latency_ns);
    }

    /// Close every interval that ends at or before `now_ns` (nothing issued from now on can
    /// complete in it); `all` closes every interval.
    fn close(&mut self, now_ns: u64, all: bool, flows: &[FlowOptions]) {
        let open_from = now_ns.saturating_sub(self.t0_ns) / self.every_ns;
        while let Some(entry) = self.pending.first_entry() {
            if !all && *entry.key() >= open_from {
                break;
            }
            let (i, buckets) = entry.remove_entry();
            let end_s = (i + 1) as f64 * self.every_ns as f64 / 1e9;
            let span_s = self.every_ns as f64 / 1e9;
            for (k, mut b) in buckets.into_iter().enumerate() {
                self.rows.push(row(&flows[k].name, end_s, span_s, &mut b));
            }
        }
    }
}

fn row(flow: &str, end_s: f64, span_s: f64, b: &mut Bucket) -> LogRow {
    let n = b.latencies_ns.len();
    let (mean, p99, max) = if n == 0 {
        (0.0, 0.0, 0.0)
    } else {
        let mean = b.latencies_ns.iter().sum::<u64>() as f64 / n as f64;
        let at = ((n as f64 * 0.99).ceil() as usize).clamp(1, n) - 1;
        let p99 = *b.latencies_ns.select_nth_unstable(at).1 as f64;
        let max = b.latencies_ns.iter().copied().max().unwrap_or(0) as f64;
        (mean, p99, max)
    };
    LogRow {
        sim_seconds: end_s,
        flow: flow.to_string(),
        iops: n as f64 / span_s,
        mb_per_second: b.bytes as f64 / 1e6 / span_s,
        latency_us_mean: mean / 1e3,
        latency_us_p99: p99 / 1e3,
        latency_us_max: max / 1e3,
    }
}

/// The mixed requests of a job and their per-flow counters, run in steps of pages.
pub(super) struct MixRun<'a> {
    mix: Mix,
    flows: &'a [FlowOptions],
    policy: &'a mut dyn StreamAssignment,
    /// Write tags of each flow's class (None: one flow, no tags needed).
    tagged: bool,
    next_tag: u64,
    tags: Vec<u64>,
    pub tallies: Vec<Tally>,
    log: Option<IntervalLog>,
    page_bytes: u64,
    /// The measured phase's start: rate flows' arrivals count from it.
    t0_ns: u64,
}

/// The flows' request streams, each in its region of the device.
pub(super) fn mix_of(
    opts: &SimOptions,
    target: Target,
    clipped: &workload::ClipCount,
) -> Result<Mix> {
    let mut flows = Vec::with_capacity(opts.flows.len());
    for f in &opts.flows {
        let spec = WorkloadSpec::parse(&f.workload)?;
        let region = Target {
            logical_pages: f.size_pages,
            page_bytes: target.page_bytes,
        };
        let wopts = f.workload_options(clipped, opts.sampler);
        let offset = f.offset_pages;
        let reqs = workload::build(&spec, region, &wopts)?.map(move |r| {
            r.map(|mut r| {
                r.lpn += offset;
                r
            })
        });
        flows.push(Flow {
            requests: Box::new(reqs),
            pace: f.pace,
            window: f.window,
        });
    }
    Ok(Mix::new(flows))
}

impl<'a> MixRun<'a> {
    pub fn new(
        mix: Mix,
        opts: &'a SimOptions,
        policy: &'a mut dyn StreamAssignment,
        t0_ns: u64,
        page_bytes: u64,
    ) -> MixRun<'a> {
        MixRun {
            mix,
            flows: &opts.flows,
            policy,
            tagged: opts.flows.len() > 1,
            next_tag: 0,
            tags: Vec::new(),
            tallies: opts.flows.iter().map(|_| Tally::new()).collect(),
            log: opts.log_interval_ns.map(|every_ns| IntervalLog {
                every_ns,
                t0_ns,
                pending: BTreeMap::new(),
                rows: Vec::new(),
            }),
            page_bytes,
            t0_ns,
        }
    }

    /// Issue requests until `limit` pages (written pages only if `writes_only`) or the
    /// mix's end, as [`HostDriver::run_ahead`] counts them.
    pub fn step(
        &mut self,
        d: &mut HostDriver,
        limit: u64,
        writes_only: bool,
        progress: &mut dyn FnMut(u64),
    ) -> Result<RunCount> {
        let mut count = RunCount::default();
        let mut since_report = 0u32;
        while let Some(item) = self.mix.next() {
            let (k, mut r) = item?;
            if r.op == OpKind::Write {
                r.stream = match self.flows[k].stream {
                    Some(s) => s,
                    None => self.policy.stream_of_run(r.lpn, r.pages, None),
                };
            }
            if !writes_only || r.op == OpKind::Write {
                count.pages += r.pages as u64;
            }
            self.issue(d, k, &r)?;
            since_report += 1;
            if since_report.is_multiple_of(crate::host::CHUNK as u32) {
                d.check_flash_write_limit()?;
            }
            if since_report == 65_536 {
                since_report = 0;
                progress(count.pages);
            }
            if count.pages >= limit {
                count.limit_reached = true;
                break;
            }
        }
        progress(count.pages);
        Ok(count)
    }

    fn issue(&mut self, d: &mut HostDriver, k: usize, r: &Request) -> Result<()> {
        let (lpn, pages) = (Lpn(r.lpn), r.pages);
        let cmd = match r.op {
            OpKind::Write if self.tagged => {
                let class = (k as u64 + 1) << TAG_CLASS_SHIFT;
                self.tags.clear();
                for _ in 0..pages {
                    self.tags.push(class | self.next_tag);
                    self.next_tag += 1;
                }
                Command::WriteTags {
                    lpn,
                    tags: &self.tags,
                    stream: StreamId(r.stream),
                }
            }
            OpKind::Write => Command::Write {
                lpn,
                pages,
                stream: StreamId(r.stream),
            },
            OpKind::Read => Command::Read { lpn, pages },
            OpKind::Trim => Command::Trim { lpn, pages },
        };
        let arrival = r.arrival_ns.map(|a| a + self.t0_ns);
        let (at, done) = d.port.submit_timed(cmd, arrival)?;
        let latency_ns = done.0 - at.0;
        let timed = d.ssd().flash().timing_enabled();
        self.tallies[k].add(r, timed.then_some(latency_ns));
        if let Some(log) = self.log.as_mut() {
            let bytes = if r.op == OpKind::Trim {
                0
            } else {
                r.pages as u64 * self.page_bytes
            };
            log.add(self.flows.len(), k, done.0, bytes, latency_ns);
            log.close(at.0, false, self.flows);
        }
        Ok(())
    }

    /// The log's rows, every interval closed.
    pub fn log_rows(&mut self) -> Vec<LogRow> {
        match self.log.as_mut() {
            Some(log) => {
                log.close(0, true, self.flows);
                std::mem::take(&mut log.rows)
            }
            None => Vec::new(),
        }
    }
}
