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
        mut reqs: impl Iterator<Item = Result<Request, WorkloadError>>,
        limit: Option<u64>,
        count_writes_only: bool,
        progress: &mut dyn FnMut(u64),
    ) -> Result<RunCount> {
        self.run_ahead(&mut reqs, limit, count_writes_only, progress)
    }

    /// [`HostDriver::run`], pulling up to [`AHEAD`] requests ahead of the one issued so that
    /// each write's mapping is on its way from memory before the write needs it (see
    /// [`Ssd::prefetch_write`] and [`Ssd::prefetch_overwrite`]). The requests issued, and
    /// those pulled from the stream, are the same as without the look-ahead: nothing is
    /// pulled past the request that reaches `limit`, and a stream's error is returned once
    /// the requests before it are issued.
    pub fn run_ahead<I: Iterator<Item = Result<Request, WorkloadError>>>(
        &mut self,
        reqs: &mut I,
        limit: Option<u64>,
        count_writes_only: bool,
        progress: &mut dyn FnMut(u64),
    ) -> Result<RunCount> {
        let counts = |r: &Request| !count_writes_only || r.op == OpKind::Write;
        let mut count = RunCount::default();
        let mut ahead = Ahead::default();
        let mut since_report = 0u32;
        loop {
            ahead.fill(
                reqs,
                &self.port,
                |r| counts(r).then_some(r.pages as u64).unwrap_or(0),
                limit,
            );
            let Some(r) = ahead.pop() else {
                break;
            };
            let r = r?;
            if counts(&r) {
                count.pages += r.pages as u64;
            }
            self.submit(&r)?;
            since_report += 1;
            if since_report == 65_536 {
                since_report = 0;
                progress(count.pages);
            }
        }
        assert!(
            count.pages == ahead.pulled_pages,
            "issued {} pages of {} pulled",
            count.pages,
            ahead.pulled_pages
        );
        count.limit_reached = limit.is_some_and(|l| count.pages >= l);
        progress(count.pages);
        Ok(count)
    }
}

/// Requests pulled ahead of the one being issued. A write's L2P entry is prefetched when
/// the write is pulled ([`AHEAD`] requests early) and the physical page it overwrites
/// [`AHEAD`]` / 2` requests early, when that entry has arrived.
pub const AHEAD: usize = 8;
const _: () = assert!(AHEAD.is_power_of_two() && AHEAD >= 2);

/// A ring of [`AHEAD`] requests (a power of two: positions by mask), then the stream's error
/// if it failed (nothing is pulled after one, so it comes last).
#[derive(Default)]
struct Ahead {
    ring: [Option<Request>; AHEAD],
    /// Position of the oldest request, and requests waiting.
    head: usize,
    len: usize,
    error: Option<WorkloadError>,
    /// Pages counted toward the limit of the requests pulled so far.
    pulled_pages: u64,
    /// Nothing more to pull: the limit was reached, the stream ended or failed.
    done: bool,
}

impl Ahead {
    /// Pull until [`AHEAD`] requests wait (or nothing more may be pulled), prefetching.
    #[inline]
    fn fill<I: Iterator<Item = Result<Request, WorkloadError>>>(
        &mut self,
        reqs: &mut I,
        port: &HostPort,
        counted_pages: impl Fn(&Request) -> u64,
        limit: Option<u64>,
    ) {
        while !self.done && self.len < AHEAD {
            match reqs.next() {
                None => self.done = true,
                Some(Err(e)) => {
                    self.error = Some(e);
                    self.done = true;
                }
                Some(Ok(r)) => {
                    self.pulled_pages += counted_pages(&r);
                    self.done = limit.is_some_and(|l| self.pulled_pages >= l);
                    if r.op == OpKind::Write {
                        port.ssd().prefetch_write(Lpn(r.lpn));
                    }
                    self.ring[(self.head + self.len) & (AHEAD - 1)] = Some(r);
                    self.len += 1;
                }
            }
        }
        if self.len > AHEAD / 2 {
            if let Some(r) = &self.ring[(self.head + AHEAD / 2) & (AHEAD - 1)] {
                if r.op == OpKind::Write {
                    port.ssd().prefetch_overwrite(Lpn(r.lpn));
                }
            }
        }
    }

    /// The oldest request; then the stream's error, if it failed; then `None`.
    #[inline]
    fn pop(&mut self) -> Option<Result<Request, WorkloadError>> {
        if self.len == 0 {
            return self.error.take().map(Err);
        }
        let r = self.ring[self.head].take();
        assert!(r.is_some(), "a waiting request at {}", self.head);
        self.head = (self.head + 1) & (AHEAD - 1);
        self.len -= 1;
        r.map(Ok)
    }
}
