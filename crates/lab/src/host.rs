//! Workload requests into a simulated SSD's host port (`ssd::HostPort`), shared by
//! `flashlab sim` and the SSD-level experiments: the port holds the queue, the clock and
//! arrival replay; this adapter turns `workload::Request`s into port commands and runs a
//! request stream to a page limit with progress. A measured phase starts with
//! [`HostDriver::begin_measurement`], which returns the statistics and time to subtract.

use anyhow::Result;
use ssd::host::{Command, HostPort};
use ssd::{Lpn, SimTime, Ssd, StreamId};
use workload::{OpKind, Request, WorkloadError};

pub struct HostDriver {
    pub port: HostPort,
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
            port: HostPort::new(ssd, queue_depth),
        }
    }

    pub fn ssd(&self) -> &Ssd {
        self.port.ssd()
    }

    /// The latest completion so far.
    pub fn last_done(&self) -> SimTime {
        self.port.last_done()
    }

    /// Start a measured phase (see [`HostPort::begin_measurement`]).
    pub fn begin_measurement(&mut self) -> (ssd::Stats, SimTime) {
        self.port.begin_measurement()
    }

    /// Issue one request through the port's queue.
    #[inline]
    pub fn submit(&mut self, r: &Request) -> Result<()> {
        let (lpn, pages) = (Lpn(r.lpn), r.pages);
        let cmd = match r.op {
            OpKind::Write => Command::Write {
                lpn,
                pages,
                stream: StreamId(r.stream),
            },
            OpKind::Read => Command::Read { lpn, pages },
            OpKind::Trim => Command::Trim { lpn, pages },
        };
        self.port.submit(cmd, r.arrival_ns)?;
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
        self.run_ahead(&mut reqs.peekable(), limit, count_writes_only, progress)
    }

    /// [`HostDriver::run`] over a peekable stream: while one request is issued, the next
    /// one's mapping is prefetched (see [`Ssd::prefetch_write`]). The requests issued, and
    /// those pulled from the stream, are the same as without the look-ahead.
    pub fn run_ahead<I: Iterator<Item = Result<Request, WorkloadError>>>(
        &mut self,
        reqs: &mut std::iter::Peekable<I>,
        limit: Option<u64>,
        count_writes_only: bool,
        progress: &mut dyn FnMut(u64),
    ) -> Result<RunCount> {
        let mut count = RunCount::default();
        let mut since_report = 0u32;
        while let Some(r) = reqs.next() {
            let r = r?;
            if !count_writes_only || r.op == OpKind::Write {
                count.pages += r.pages as u64;
            }
            let last = limit.is_some_and(|l| count.pages >= l);
            // Look ahead only within the limit: a stream stopped there is not pulled further.
            if !last {
                if let Some(Ok(next)) = reqs.peek() {
                    if next.op == OpKind::Write {
                        self.port.ssd().prefetch_write(Lpn(next.lpn));
                    }
                }
            }
            self.submit(&r)?;
            since_report += 1;
            if since_report == 65_536 {
                since_report = 0;
                progress(count.pages);
            }
            if last {
                count.limit_reached = true;
                break;
            }
        }
        progress(count.pages);
        Ok(count)
    }
}
