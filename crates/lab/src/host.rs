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
    /// Flash page programs (host writes plus GC and merge copies, since the device was
    /// made) past which a run stops with [`FlashWriteLimitReached`] (`sim --max-flash-writes`).
    pub flash_write_limit: Option<u64>,
}

/// A run stopped because the device programmed more flash pages than its limit allows.
#[derive(Debug, thiserror::Error)]
#[error("--max-flash-writes: the device has programmed {programmed} flash pages, more than the limit of {limit} ({host} host pages written, write amplification so far {waf:.2}); the run stopped here. Raise --max-flash-writes, or lower what makes each write costly (pages_per_block under a block-mapped FTL, --write-volume)")]
pub struct FlashWriteLimitReached {
    pub programmed: u64,
    pub limit: u64,
    pub host: u64,
    pub waf: f64,
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
            flash_write_limit: None,
        }
    }

    /// An error once the device has programmed more flash pages than
    /// [`HostDriver::flash_write_limit`]. Checked between chunks of requests: a run stops at
    /// most one chunk (and its GC) past the limit.
    #[inline]
    pub fn check_flash_write_limit(&self) -> Result<(), FlashWriteLimitReached> {
        let Some(limit) = self.flash_write_limit else {
            return Ok(());
        };
        let s = self.ssd().stats();
        if s.flash_pages_written <= limit {
            return Ok(());
        }
        Err(FlashWriteLimitReached {
            programmed: s.flash_pages_written,
            limit,
            host: s.host_pages_written,
            waf: s.waf(),
        })
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

    /// Issue the requests of `chunk` from `i`: a run of one-page writes on one stream in one
    /// port call ([`HostPort::write_pages`], the same effect as one by one), or else the one
    /// request at `i`. Returns how many were issued.
    #[inline]
    fn issue(&mut self, chunk: &[Request], i: usize, lpns: &mut Vec<u64>) -> Result<usize> {
        let r = &chunk[i];
        if !is_page_write(r) {
            if let Some(next) = chunk.get(i + OVERWRITE_AHEAD) {
                prefetch_overwrite(self.port.ssd(), next);
            }
            self.submit(r)?;
            return Ok(1);
        }
        let run = chunk[i..]
            .iter()
            .take_while(|x| is_page_write(x) && x.stream == r.stream)
            .count();
        lpns.clear();
        lpns.extend(chunk[i..i + run].iter().map(|x| x.lpn));
        self.port.write_pages(lpns, StreamId(r.stream))?;
        Ok(run)
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

    /// [`HostDriver::run`], pulling requests [`CHUNK`] at a time so that each write's mapping
    /// is on its way from memory before the write needs it: its L2P entry is prefetched when
    /// it is pulled ([`Ssd::write_prefetch`]), the physical page it overwrites
    /// [`OVERWRITE_AHEAD`] requests before it is issued ([`Ssd::prefetch_overwrite`]). The
    /// requests issued, and those pulled from the stream, are the same as one by one: nothing
    /// is pulled past the request that reaches `limit`, and a stream's error is returned once
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
        let mut pull = Pull {
            chunk: Vec::with_capacity(CHUNK),
            pulled_pages: 0,
            more: true,
            error: None,
        };
        let mut since_report = 0u32;
        let mut lpns = Vec::with_capacity(CHUNK);
        while pull.more {
            self.check_flash_write_limit()?;
            pull.fill(reqs, &self.port, &counts, limit);
            let chunk = std::mem::take(&mut pull.chunk);
            let ssd = self.port.ssd();
            chunk
                .iter()
                .take(OVERWRITE_AHEAD)
                .for_each(|r| prefetch_overwrite(ssd, r));
            let mut i = 0;
            while i < chunk.len() {
                let n = self.issue(&chunk, i, &mut lpns)?;
                assert!(n >= 1 && i + n <= chunk.len(), "{n} requests issued at {i}");
                // A run of one-page writes counts a page each (a write always counts); any
                // other request is issued alone.
                let r = &chunk[i];
                count.pages += if is_page_write(r) {
                    n as u64
                } else if counts(r) {
                    r.pages as u64
                } else {
                    0
                };
                i += n;
                since_report += n as u32;
                if since_report >= 65_536 {
                    since_report -= 65_536;
                    progress(count.pages);
                }
            }
            pull.chunk = chunk;
        }
        if let Some(e) = pull.error {
            return Err(e.into());
        }
        assert_eq!(count.pages, pull.pulled_pages, "pages issued vs pulled");
        count.limit_reached = limit.is_some_and(|l| count.pages >= l);
        progress(count.pages);
        Ok(count)
    }

    /// [`HostDriver::run_ahead`] of one-page write requests on `stream` (no arrival times),
    /// one at each page `pages` yields: the same requests pulled and issued, in the same
    /// chunks, with the same counts, flash write limit checks and progress, for a host whose
    /// requests are all such writes (a synthetic write workload of one-page requests on a
    /// single stream, the preconditioning). Each chunk's pages go from the generator straight
    /// into the list the port takes ([`HostPort::write_pages`]): no `Request` per page, no
    /// stream choice per page, no scan for runs.
    pub fn run_page_writes<I: Iterator<Item = u64>>(
        &mut self,
        pages: &mut I,
        stream: StreamId,
        limit: Option<u64>,
        progress: &mut dyn FnMut(u64),
    ) -> Result<RunCount> {
        let mut count = RunCount::default();
        let mut chunk = [0u64; CHUNK];
        let mut since_report = 0usize;
        let mut more = true;
        while more {
            self.check_flash_write_limit()?;
            // As `Pull::fill`: up to a chunk, and nothing past the page that reaches the
            // limit (a pull is made before the limit is compared, so at least one).
            let room = limit.map_or(CHUNK, |l| {
                CHUNK.min(l.saturating_sub(count.pages).max(1) as usize)
            });
            let mut n = 0;
            let hint = self.port.ssd().write_prefetch();
            for slot in &mut chunk[..room] {
                let Some(lpn) = pages.next() else {
                    more = false;
                    break;
                };
                hint.prefetch(Lpn(lpn));
                *slot = lpn;
                n += 1;
            }
            assert!(n <= room && room <= CHUNK, "{n} pages pulled into {room}");
            let lpns = &chunk[..n];
            let ssd = self.port.ssd();
            lpns.iter()
                .take(OVERWRITE_AHEAD)
                .for_each(|&l| ssd.prefetch_overwrite(Lpn(l)));
            if !lpns.is_empty() {
                self.port.write_pages(lpns, stream)?;
            }
            count.pages += n as u64;
            more = more && limit.is_none_or(|l| count.pages < l);
            since_report += n;
            if since_report >= 65_536 {
                since_report -= 65_536;
                progress(count.pages);
            }
        }
        count.limit_reached = limit.is_some_and(|l| count.pages >= l);
        progress(count.pages);
        Ok(count)
    }
}

/// Requests [`HostDriver::run_ahead`] pulls before issuing them (one chunk's L2P prefetches
/// in flight at once).
pub const CHUNK: usize = 32;
/// How many requests before its issue a write's overwritten page is prefetched (its L2P
/// entry, prefetched when pulled, has arrived by then).
pub const OVERWRITE_AHEAD: usize = 4;
const _: () = assert!(OVERWRITE_AHEAD < CHUNK);

/// A one-page write without an arrival time: [`HostDriver::issue`] runs these together.
#[inline]
fn is_page_write(r: &Request) -> bool {
    r.op == OpKind::Write && r.pages == 1 && r.arrival_ns.is_none()
}

#[inline]
fn prefetch_overwrite(ssd: &Ssd, r: &Request) {
    if r.op == OpKind::Write {
        ssd.prefetch_overwrite(Lpn(r.lpn));
    }
}

/// The requests of one chunk and what pulling them found.
struct Pull {
    chunk: Vec<Request>,
    /// Pages counted toward the limit of the requests pulled so far.
    pulled_pages: u64,
    /// More may be pulled: the limit is not reached, the stream has not ended or failed.
    more: bool,
    /// The stream's error (nothing is pulled after one, so it comes after the chunk).
    error: Option<WorkloadError>,
}

impl Pull {
    /// Pull up to [`CHUNK`] requests (fewer at the limit or the stream's end), prefetching
    /// each write's L2P entry.
    #[inline]
    fn fill<I: Iterator<Item = Result<Request, WorkloadError>>>(
        &mut self,
        reqs: &mut I,
        port: &HostPort,
        counts: &impl Fn(&Request) -> bool,
        limit: Option<u64>,
    ) {
        self.chunk.clear();
        let hint = port.ssd().write_prefetch();
        while self.more && self.chunk.len() < CHUNK {
            match reqs.next() {
                None => self.more = false,
                Some(Err(e)) => {
                    self.error = Some(e);
                    self.more = false;
                }
                Some(Ok(r)) => {
                    if counts(&r) {
                        self.pulled_pages += r.pages as u64;
                    }
                    self.more = limit.is_none_or(|l| self.pulled_pages < l);
                    if r.op == OpKind::Write {
                        hint.prefetch(Lpn(r.lpn));
                    }
                    self.chunk.push(r);
                }
            }
        }
        assert!(self.chunk.len() <= CHUNK, "a chunk of {}", self.chunk.len());
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn driver() -> HostDriver {
        let mut cfg = ssd::SsdConfig::preset("mlc-sata-2010").expect("preset");
        (cfg.geometry.channels, cfg.geometry.dies_per_channel) = (4, 1);
        (cfg.geometry.blocks_per_plane, cfg.geometry.pages_per_block) = (16, 16);
        cfg.ftl.op = 0.7;
        HostDriver::new(Ssd::new(cfg).expect("small SSD"), 1)
    }

    fn write(lpn: u64, pages: u32) -> Request {
        Request {
            op: OpKind::Write,
            lpn,
            pages,
            stream: 0,
            arrival_ns: None,
        }
    }

    /// Requests from a list, counting how many were pulled.
    fn counted(
        reqs: Vec<Result<Request, WorkloadError>>,
        pulled: &std::cell::Cell<usize>,
    ) -> impl Iterator<Item = Result<Request, WorkloadError>> + '_ {
        reqs.into_iter()
            .inspect(move |_| pulled.set(pulled.get() + 1))
    }

    #[test]
    fn look_ahead_pulls_nothing_past_the_request_that_reaches_the_limit() {
        for (limit, want_pulled) in [
            (1, 1),
            (7, 4),
            (8, 4),
            (9, 5),
            (2 * CHUNK as u64 + 1, CHUNK + 1),
        ] {
            let mut d = driver();
            let pulled = std::cell::Cell::new(0);
            // Two pages per request, far more requests than the limit needs.
            let reqs = (0..4 * CHUNK as u64)
                .map(|i| Ok(write(2 * i % 64, 2)))
                .collect();
            let mut it = counted(reqs, &pulled);
            let c = d
                .run_ahead(&mut it, Some(limit), true, &mut |_| {})
                .unwrap();
            assert_eq!(pulled.get(), want_pulled, "limit {limit}");
            assert_eq!(c.pages, 2 * want_pulled as u64);
            assert!(c.limit_reached);
            assert_eq!(
                d.ssd().stats().host_ios,
                want_pulled as u64,
                "limit {limit}"
            );
        }
    }

    #[test]
    fn a_stream_error_comes_after_the_requests_before_it() {
        let mut d = driver();
        let pulled = std::cell::Cell::new(0);
        let mut reqs: Vec<_> = (0..5).map(|i| Ok(write(i, 1))).collect();
        reqs.push(Err(WorkloadError::Parse {
            path: "t".into(),
            line: 6,
            reason: "bad".into(),
        }));
        reqs.extend((0..5).map(|i| Ok(write(i, 1))));
        let mut it = counted(reqs, &pulled);
        let e = d.run_ahead(&mut it, None, false, &mut |_| {});
        assert!(e.is_err(), "the stream's error is returned");
        assert_eq!(
            d.ssd().stats().host_ios,
            5,
            "the requests before it were issued"
        );
        assert_eq!(pulled.get(), 6, "nothing pulled after the error");
    }

    /// What a run did, as far as anyone can see: its count or error, the pages pulled, the
    /// device's counters and clock.
    fn outcome(d: &HostDriver, r: Result<RunCount>, pulled: usize) -> String {
        let r = r.map_err(|e| e.to_string());
        let by_stream = d.ssd().host_pages_written_by_stream().to_vec();
        format!(
            "{r:?} pulled {pulled} {:?} {by_stream:?} {:?}",
            d.ssd().stats(),
            d.last_done()
        )
    }

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig::with_cases(300))]
        /// `run_page_writes` is `run_ahead` of the same pages as one-page write requests: the
        /// same result or error, the same pages pulled (nothing past the limit), the same
        /// device state, through chunk ends, limits, the stream's end, pages out of range
        /// and the flash write limit, timed and untimed.
        #[test]
        fn page_writes_run_as_their_requests(
            pages in proptest::collection::vec(
                proptest::prop_oneof![50 => 0u64..64, 1 => 0u64..4096],
                0..200,
            ),
            limit in proptest::option::of(0u64..150),
            flash_limit in proptest::option::of(0u64..300),
            timed in proptest::bool::ANY,
            runs in 1usize..4,
        ) {
            let make = || {
                let mut d = driver();
                if !timed {
                    let mut cfg = d.ssd().config().clone();
                    cfg.timing.enabled = false;
                    d = HostDriver::new(Ssd::new(cfg).expect("small SSD"), 1);
                }
                d.flash_write_limit = flash_limit;
                d
            };
            let (mut a, mut b) = (make(), make());
            let (pa, pb) = (std::cell::Cell::new(0), std::cell::Cell::new(0));
            let mut reqs = counted(pages.iter().map(|&l| Ok(write(l, 1))).collect(), &pa);
            let mut lpns = pages.iter().copied().inspect(|_| pb.set(pb.get() + 1));
            // Several runs one after another, as the timeline's intervals resume a stream.
            for _ in 0..runs {
                let ra = a.run_ahead(&mut reqs, limit, true, &mut |_| {});
                let rb = b.run_page_writes(&mut lpns, StreamId(0), limit, &mut |_| {});
                let stop = ra.is_err();
                proptest::prop_assert_eq!(outcome(&a, ra, pa.get()), outcome(&b, rb, pb.get()));
                if stop {
                    break;
                }
            }
        }
    }

    #[test]
    fn a_stream_shorter_than_the_limit_does_not_reach_it() {
        let mut d = driver();
        let reqs = (0..3 * CHUNK as u64 + 3).map(|i| Ok(write(i % 64, 1)));
        let c = d.run(reqs, Some(1000), false, &mut |_| {}).unwrap();
        assert_eq!(c.pages, 3 * CHUNK as u64 + 3);
        assert!(!c.limit_reached);
    }
}
