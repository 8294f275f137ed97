//! The one host driver into a simulated SSD (`ssd::Ssd`), shared by `flashlab sim` and the
//! SSD-level experiments: requests go through a host queue of a fixed depth (a request is
//! issued when a slot frees, or at its arrival time when trace timing is replayed), and the
//! driver keeps the last completion time. A measured phase starts with
//! [`HostDriver::begin_measurement`], which returns the statistics and time to subtract.

use anyhow::Result;
use ssd::host::HostQueue;
use ssd::{Lpn, SimTime, Ssd, StreamId};
use workload::{OpKind, Request, WorkloadError};

pub struct HostDriver {
    pub ssd: Ssd,
    queue: HostQueue,
    queue_depth: u32,
    /// The latest completion so far.
    pub last_done: SimTime,
    trace_origin: Option<u64>,
    /// Issue requests no earlier than their (trace) arrival time.
    pub replay_timing: bool,
}

/// What a run of requests did.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct RunCount {
    /// Pages counted toward the limit (written pages only when counting writes).
    pub pages: u64,
    /// Whether the limit was reached (false: the stream ended first).
    pub limit_reached: bool,
}

impl HostDriver {
    pub fn new(ssd: Ssd, queue_depth: u32) -> HostDriver {
        HostDriver {
            ssd,
            queue: HostQueue::new(queue_depth),
            queue_depth,
            last_done: SimTime::ZERO,
            trace_origin: None,
            replay_timing: false,
        }
    }

    /// Start a measured phase: a fresh queue at the last completion, latencies cleared.
    /// Returns the statistics and time the phase's figures are measured from.
    pub fn begin_measurement(&mut self) -> (ssd::Stats, SimTime) {
        self.queue = HostQueue::starting_at(self.queue_depth, self.last_done);
        self.ssd.reset_latency();
        (self.ssd.stats(), self.last_done)
    }

    /// Issue one request through the queue.
    pub fn submit(&mut self, r: &Request) -> Result<()> {
        let arrival = match (self.replay_timing, r.arrival_ns) {
            (true, Some(ns)) => SimTime(ns),
            _ => SimTime::ZERO,
        };
        let at = self.queue.issue_time(arrival);
        let done = match r.op {
            OpKind::Write => self
                .ssd
                .write(Lpn(r.lpn), r.pages, StreamId(r.stream), at)?,
            OpKind::Read => self.ssd.read(Lpn(r.lpn), r.pages, at)?,
            OpKind::Trim => self.ssd.trim(Lpn(r.lpn), r.pages, at)?,
        };
        self.queue.complete(done);
        self.last_done = self.last_done.max(done);
        Ok(())
    }

    /// Write ascending `pages` as one request per contiguous run (an elevator's output).
    pub fn write_runs(&mut self, pages: &[u64]) -> Result<()> {
        let mut i = 0;
        while i < pages.len() {
            let mut j = i + 1;
            while j < pages.len() && pages[j] == pages[j - 1] + 1 {
                j += 1;
            }
            self.submit(&Request {
                op: OpKind::Write,
                lpn: pages[i],
                pages: (j - i) as u32,
                stream: 0,
                arrival_ns: None,
            })?;
            i = j;
        }
        Ok(())
    }

    /// Run requests until `limit` pages (written pages only if `count_writes_only`) or the
    /// stream's end; `progress(pages)` is called every 65 536 requests and at the end.
    pub fn run(
        &mut self,
        reqs: impl Iterator<Item = Result<Request, WorkloadError>>,
        limit: Option<u64>,
        count_writes_only: bool,
        progress: &mut dyn FnMut(u64),
    ) -> Result<RunCount> {
        let mut count = RunCount::default();
        let mut since_report = 0u32;
        for r in reqs {
            let mut r = r?;
            if self.replay_timing {
                let origin = *self.trace_origin.get_or_insert(r.arrival_ns.unwrap_or(0));
                r.arrival_ns = r.arrival_ns.map(|a| a.saturating_sub(origin));
            }
            self.submit(&r)?;
            if !count_writes_only || r.op == OpKind::Write {
                count.pages += r.pages as u64;
            }
            since_report += 1;
            if since_report == 65_536 {
                since_report = 0;
                progress(count.pages);
            }
            if limit.is_some_and(|l| count.pages >= l) {
                count.limit_reached = true;
                break;
            }
        }
        progress(count.pages);
        Ok(count)
    }
}
