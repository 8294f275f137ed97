//! `Ssd`: the device as the host sees it — multi-page requests striped over the FTL and flash,
//! TRIM, per-request latency, and data read back exactly as last written.

use crate::config::{Aging, SsdConfig};
use crate::error::{ConfigError, InvariantError, SsdError};
use crate::flash::{Flash, TAG_EMPTY};
use crate::ftl::{self, Ftl, HostWrite, Placed};
use crate::latency::LatencyCounts;
use crate::link::HostInterface;
use crate::stats::Stats;
use crate::types::{Lpn, PageWrite, Ppn, SimTime, StreamId};
use hdrhistogram::Histogram;

/// What a read of one logical page finds.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ReadPage {
    /// The tag of the last write.
    Tag(u64),
    /// Never written since the device was created.
    Unwritten,
    /// Trimmed since its last write.
    Trimmed,
}

pub struct Ssd {
    cfg: SsdConfig,
    flash: Flash,
    ftl: Box<dyn Ftl>,
    /// `ftl.logical_pages()`, kept here: every request checks its range against it.
    logical_pages: u64,
    /// One bit per logical page: trimmed since its last write (to tell Trimmed from Unwritten).
    trimmed: Vec<u64>,
    /// No trim yet: writes can skip clearing `trimmed` bits (a hot-path saving).
    any_trimmed: bool,
    next_tag: u64,
    /// Per-request latency counts (a histogram's buckets; see [`Ssd::latency_ns`]).
    latency_ns: LatencyCounts,
    /// Host pages written per stream (indexed by `StreamId`, `ftl.streams` long): one add per
    /// accepted write request.
    host_pages_by_stream: Vec<u64>,
    /// The host link and write cache (no-ops unless the config's timing has them).
    iface: HostInterface,
}

impl Ssd {
    /// A drive of `cfg`: fresh, or aged by `cfg.aging` (see [`crate::config::Aging`]).
    pub fn new(cfg: SsdConfig) -> Result<Ssd, ConfigError> {
        cfg.validate()?;
        // FDP: the flash and FTL over reclaim units (the same flash without FDP).
        let flash = Flash::new(&crate::config::fdp::flash_config(&cfg));
        let ftl = ftl::build(&cfg, &flash);
        let words = ftl.logical_pages().div_ceil(64) as usize;
        let streams = cfg.ftl.streams as usize;
        let aging = cfg.aging;
        let mut ssd = Ssd {
            flash,
            logical_pages: ftl.logical_pages(),
            ftl,
            trimmed: vec![0; words],
            any_trimmed: false,
            next_tag: 0,
            latency_ns: LatencyCounts::new(),
            host_pages_by_stream: vec![0; streams],
            iface: HostInterface::new(&cfg.timing),
            cfg,
        };
        if !aging.is_fresh() {
            ssd.age(aging).map_err(|e| ConfigError::Invalid {
                field: "aging",
                value: e.to_string(),
                reason:
                    "the FTL refused the aging writes; lower aging.random_writes_x or raise ftl.op",
            })?;
        }
        Ok(ssd)
    }

    /// Run `aging`'s writes (stream 0, untimed for the host: no latency recorded), then let
    /// the flash fall idle with its counters cleared.
    fn age(&mut self, aging: Aging) -> Result<(), SsdError> {
        let n = self.logical_pages;
        let random = (aging.random_writes_x * n as f64) as u64;
        let fill = (0..n).take(if aging.fill { n as usize } else { 0 });
        // splitmix64 from the seed: uniform pages without an RNG dependency in this crate.
        let mut x = aging.seed;
        let uniform = std::iter::repeat_with(move || {
            x = x.wrapping_add(0x9E37_79B9_7F4A_7C15);
            let mut z = x;
            z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
            z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
            z ^ (z >> 31)
        });
        for lpn in fill.chain(uniform.take(random as usize).map(|z| z % n)) {
            let tag = self.next_tag;
            self.next_tag += 1;
            self.write_page(Lpn(lpn), StreamId(0), PageWrite::tag(tag), SimTime::ZERO)?;
        }
        self.flash.settle();
        Ok(())
    }

    pub fn config(&self) -> &SsdConfig {
        &self.cfg
    }
    pub fn logical_pages(&self) -> u64 {
        self.logical_pages
    }
    pub fn page_bytes(&self) -> usize {
        self.cfg.geometry.page_bytes as usize
    }
    /// The layer's counters; `erases` counts erase blocks (an FDP reclaim unit erases all of
    /// its blocks).
    pub fn stats(&self) -> Stats {
        let mut s = self.flash.stats;
        s.erases *= crate::config::fdp::erase_blocks_per_unit(&self.cfg) as u64;
        s
    }
    /// Per reclaim-unit handle counters since the device was made (FDP; empty without it).
    pub fn handle_stats(&self) -> Vec<crate::ftl::fdp::HandleStats> {
        if self.cfg.ftl.fdp.is_none() {
            return Vec::new();
        }
        self.ftl.handle_stats(&self.flash)
    }
    /// Host pages written per stream since the device was made, indexed by `StreamId`
    /// (`ftl.streams` entries). Counted per accepted request, so the sum equals
    /// `stats().host_pages_written` unless a write failed part-way.
    pub fn host_pages_written_by_stream(&self) -> &[u64] {
        &self.host_pages_by_stream
    }
    /// Valid pages GC copied out of each stream's blocks since the device was made, indexed
    /// by `StreamId` (`ftl.streams` entries; empty for block-mapped schemes). A block counts
    /// for the stream that wrote it: its host stream, or under `gc_stream = "per_stream"` the
    /// stream whose GC slot wrote it. With `"separate"` the shared GC blocks' copies are in no
    /// entry (they mix every stream's pages), so the sum is `stats().gc_pages_copied` only
    /// with `"per_stream"` and `"victim"`. Read from the page FTL's per-slot counters (kept
    /// at each reclaim), not counted on the write path.
    pub fn gc_pages_copied_by_stream(&self) -> Vec<u64> {
        let rows = self.ftl.handle_stats(&self.flash);
        let by_stream: Vec<u64> = rows
            .iter()
            .filter(|h| h.handle.is_some())
            .map(|h| h.gc_pages_copied)
            .collect();
        assert!(
            by_stream.is_empty() || by_stream.len() == self.cfg.ftl.streams as usize,
            "one GC copy count per stream"
        );
        by_stream
    }
    pub fn flash(&self) -> &Flash {
        &self.flash
    }
    /// Count GC copies per tag class from now on ([`Flash::count_copies_by_tag_class`]).
    pub fn count_copies_by_tag_class(&mut self, classes: usize) {
        self.flash.count_copies_by_tag_class(classes);
    }
    pub fn mapping_bytes(&self) -> u64 {
        self.ftl.mapping_bytes(&self.flash)
    }
    /// Per-request latency (issue to completion, ns) of every host request since the last
    /// reset or take, as a histogram built now from the device's counts (a scan of ~270 KiB:
    /// ask once per report, not per request).
    pub fn latency_ns(&self) -> Histogram<u64> {
        self.latency_ns.histogram()
    }
    /// No request latency recorded since the last reset or take.
    pub fn latency_is_empty(&self) -> bool {
        self.latency_ns.is_empty()
    }
    /// Close the current latency interval (the requests since the last sample or reset):
    /// its mean, p99, p999 and max, exactly as a histogram of its latencies would give them,
    /// computed from its counts without building one (`None`: no request). The device keeps
    /// the counts: [`Ssd::latency_ns`] still covers every request since the last reset.
    pub fn sample_latency(&mut self) -> Option<crate::LatencySample> {
        self.latency_ns.sample()
    }
    pub fn reset_latency(&mut self) {
        self.latency_ns.reset();
    }
    pub fn verify(&self) -> Result<(), InvariantError> {
        self.ftl.verify(&self.flash)
    }

    /// Hints that pages will be written soon, for a driver that knows its next requests: each
    /// ([`WritePrefetch::prefetch`]) starts loading a page's mapping, so that write's cache
    /// miss overlaps the current one's work. The FTL is asked once where its mapping is; each
    /// hint is then an address and a prefetch, with no call into the FTL (a driver takes one
    /// per chunk of requests it pulls). Changes no result.
    #[inline]
    pub fn write_prefetch(&self) -> WritePrefetch<'_> {
        match self.ftl.write_prefetch_map() {
            Some((map, entry_bytes)) => WritePrefetch {
                map,
                entry_bytes,
                logical_pages: self.logical_pages,
            },
            None => WritePrefetch {
                map: &[],
                entry_bytes: 0,
                logical_pages: 0,
            },
        }
    }

    /// A later hint for a write of `lpn` (after [`Ssd::write_prefetch`]'s, once the mapping has
    /// had time to arrive): start loading the physical page's record the write invalidates.
    /// Changes no result; out-of-range pages are ignored.
    #[inline]
    pub fn prefetch_overwrite(&self, lpn: Lpn) {
        if lpn.0 < self.logical_pages() {
            self.ftl.prefetch_overwrite(lpn);
        }
    }

    /// Write `pages` pages from `lpn` with fresh tags. Returns the completion time.
    #[inline]
    pub fn write(
        &mut self,
        lpn: Lpn,
        pages: u32,
        stream: StreamId,
        at: SimTime,
    ) -> Result<SimTime, SsdError> {
        self.check(lpn, pages as u64, stream)?;
        self.host_pages_by_stream[stream.0 as usize] += pages as u64;
        let data_in = self
            .iface
            .write_in(at, pages as u64 * self.page_bytes() as u64);
        let mut done = at;
        if !self.iface.has_cache() {
            // Without a write cache a page's slot is its data's arrival and it completes
            // at its program (`page_slot`, `page_done`): the same times, fewer steps.
            for i in 0..pages as u64 {
                let tag = self.next_tag;
                self.next_tag += 1;
                let t = self.write_page(Lpn(lpn.0 + i), stream, PageWrite::tag(tag), data_in)?;
                done = done.max(t);
            }
        } else {
            for i in 0..pages as u64 {
                let tag = self.next_tag;
                self.next_tag += 1;
                let slot = self.iface.page_slot(data_in);
                let t = self.write_page(Lpn(lpn.0 + i), stream, PageWrite::tag(tag), slot)?;
                done = done.max(self.iface.page_done(slot, t));
            }
        }
        let done = self.iface.write_acked(done);
        self.finish(at, done)?;
        Ok(done)
    }

    /// Whether [`Ssd::write_pages_untimed`] may run: timing off (every request completes at
    /// its issue time) and no invariant check after each operation.
    #[inline]
    pub fn untimed_runs(&self) -> bool {
        !self.flash.timing_enabled() && !self.cfg.ftl.check_invariants
    }

    /// One-page write requests, one per element of `lpns` in order, on `stream`, all issued
    /// at `at`, on a device where [`Ssd::untimed_runs`] holds: the same tags, counters and
    /// maps as [`Ssd::write`] of one page per request in turn (each completes at `at`: an
    /// untimed device takes no time), with one FTL call for the whole run. Stops at the
    /// first request that fails, after the ones before it, and returns its error.
    pub fn write_pages_untimed(
        &mut self,
        lpns: &[u64],
        stream: StreamId,
        at: SimTime,
    ) -> Result<(), SsdError> {
        assert!(
            self.untimed_runs(),
            "a run of untimed writes on a timed device"
        );
        if lpns.is_empty() {
            return Ok(());
        }
        if at.0 == u64::MAX || stream.0 >= self.cfg.ftl.streams {
            // The first request fails (`check` or `finish`): the general path says how.
            return self.write(Lpn(lpns[0]), 1, stream, at).map(|_| ());
        }
        // Requests in range, up to the first that is not (it fails its check, changing nothing).
        let logical = self.logical_pages;
        let valid = lpns
            .iter()
            .position(|&l| l >= logical)
            .unwrap_or(lpns.len());
        let r = self
            .ftl
            .write_run(&mut self.flash, &lpns[..valid], stream, self.next_tag, at);
        let written = self.account_run(&lpns[..valid], stream, &r);
        self.flash.stats.host_ios += written as u64;
        match r {
            Err((_, e)) => Err(e),
            Ok(_) if valid < lpns.len() => self.check(Lpn(lpns[valid]), 1, stream),
            Ok(_) => Ok(()),
        }
    }

    /// After a run of one-page write requests over `lpns` that ended in `r`: the counters,
    /// tags and trim bits of the requests attempted (a request that failed in the FTL or at
    /// its completion was counted and tagged before it failed, as [`Ssd::write`] does).
    /// Returns the requests that did not fail.
    fn account_run(
        &mut self,
        lpns: &[u64],
        stream: StreamId,
        r: &Result<usize, (usize, SsdError)>,
    ) -> usize {
        let (written, attempted) = match r {
            Ok(n) => (*n, *n),
            Err((i, _)) => (*i, *i + 1),
        };
        assert!(
            attempted <= lpns.len(),
            "{attempted} of {} pages attempted",
            lpns.len()
        );
        self.host_pages_by_stream[stream.0 as usize] += attempted as u64;
        self.flash.stats.host_pages_written += attempted as u64;
        self.next_tag += attempted as u64;
        if self.any_trimmed {
            for &l in &lpns[..attempted] {
                self.trimmed[(l / 64) as usize] &= !(1 << (l % 64));
            }
        }
        written
    }

    /// Whether [`Ssd::write_pages_timed`] may run: timing on and no invariant check after
    /// each operation.
    #[inline]
    pub fn timed_runs(&self) -> bool {
        self.flash.timing_enabled() && !self.cfg.ftl.check_invariants
    }

    /// One-page write requests, one per element of `lpns` in order, on `stream`, up to the
    /// first out of range or on a stream the device lacks (none run when `stream` is one),
    /// each issued through the host's `queue` as the one before it left it, on a device where
    /// [`Ssd::timed_runs`] holds: the same issue and completion times, latencies, tags,
    /// counters and maps as [`Ssd::write`] of one page per request in turn with the host
    /// port's queue and clock (`last_done`), in one FTL call ([`Ftl::write_run_timed`]).
    /// Returns how many requests ran (the caller fails the next one, if any). Stops at the
    /// first request that fails, after the ones before it, and returns its error (the failed
    /// request keeps its queue slot, as with the port's `submit`).
    pub fn write_pages_timed(
        &mut self,
        lpns: &[u64],
        stream: StreamId,
        queue: &mut crate::queue::HostQueue,
        last_done: &mut SimTime,
    ) -> Result<usize, SsdError> {
        assert!(
            self.timed_runs(),
            "a run of timed writes on an untimed device"
        );
        let logical = self.logical_pages;
        let valid = match stream.0 < self.cfg.ftl.streams {
            true => lpns
                .iter()
                .position(|&l| l >= logical)
                .unwrap_or(lpns.len()),
            false => 0,
        };
        let lpns = &lpns[..valid];
        if lpns.is_empty() {
            return Ok(0);
        }
        // A closed loop without link or cache (the default device) runs a clock without
        // their steps; the page loop is compiled once for each clock.
        let closed = queue.depth() == 1 && !self.iface.has_link() && !self.iface.has_cache();
        let mut clock = if closed {
            // The first request issues now; each one after it when the one before completes.
            let first = queue.issue_time(SimTime::ZERO);
            TimedRun::Closed(ClosedLoop {
                latency: &mut self.latency_ns,
                cfg: &self.cfg,
                ack_ns: self.iface.write_ack_ns(),
                end_max_ns: u64::MAX - 1 - self.iface.write_ack_ns(),
                at: first,
                next_at: first,
                // No latency is 0 ns (each is at least 1): the first request starts a row.
                same_ns: 0,
                same_n: 0,
            })
        } else {
            TimedRun::Queued(QueuedRun {
                queue: &mut *queue,
                last_done: &mut *last_done,
                iface: &mut self.iface,
                latency: &mut self.latency_ns,
                cfg: &self.cfg,
                page_bytes: self.cfg.geometry.page_bytes as u64,
                at: SimTime::ZERO,
                slot: SimTime::ZERO,
                completed: 0,
            })
        };
        let r = self
            .ftl
            .write_run_timed(&mut self.flash, lpns, stream, self.next_tag, &mut clock);
        let (completed, closed_end) = match clock {
            TimedRun::Closed(mut c) => {
                c.count_row();
                // A request completed unless its page's write or its completion failed.
                let completed = match &r {
                    Ok(n) => *n,
                    Err((i, _)) => *i,
                };
                (completed as u64, Some((c.at, c.next_at)))
            }
            TimedRun::Queued(c) => (c.completed, None),
        };
        if let Some((at, next_at)) = closed_end {
            // The queue and clock as the requests left them one by one: the last issued
            // completed (at `next_at`) unless it failed.
            let last = (completed > 0).then_some(next_at);
            let all = completed as usize == lpns.len();
            queue.end_closed_loop(at, last.filter(|_| all));
            if let Some(done) = last {
                *last_done = (*last_done).max(done);
            }
        }
        let written = self.account_run(lpns, stream, &r);
        assert_eq!(completed, written as u64, "requests completed vs written");
        self.flash.stats.host_ios += completed;
        r.inspect(|&n| assert_eq!(n, valid, "requests run"))
            .map_err(|(_, e)| e)
    }

    /// Write one page per tag from `lpn`, with the caller's tags. A host issues it through
    /// the host port ([`crate::host::Command::WriteTags`]), which picks the issue time `at`.
    pub fn write_tags(
        &mut self,
        lpn: Lpn,
        tags: &[u64],
        stream: StreamId,
        at: SimTime,
    ) -> Result<SimTime, SsdError> {
        self.check(lpn, tags.len() as u64, stream)?;
        self.host_pages_by_stream[stream.0 as usize] += tags.len() as u64;
        let data_in = self
            .iface
            .write_in(at, tags.len() as u64 * self.page_bytes() as u64);
        let mut done = at;
        for (i, &tag) in tags.iter().enumerate() {
            let slot = self.iface.page_slot(data_in);
            let t = self.write_page(Lpn(lpn.0 + i as u64), stream, PageWrite::tag(tag), slot)?;
            done = done.max(self.iface.page_done(slot, t));
        }
        let done = self.iface.write_acked(done);
        self.finish(at, done)?;
        Ok(done)
    }

    /// Write whole pages of bytes from `lpn` (payload mode; `data.len()` a multiple of the page size).
    pub fn write_data(
        &mut self,
        lpn: Lpn,
        data: &[u8],
        stream: StreamId,
        at: SimTime,
    ) -> Result<SimTime, SsdError> {
        let pb = self.page_bytes();
        let pages = self.payload_pages(data.len())?;
        self.check(lpn, pages, stream)?;
        self.host_pages_by_stream[stream.0 as usize] += pages;
        let data_in = self.iface.write_in(at, data.len() as u64);
        let mut done = at;
        for (i, chunk) in data.chunks_exact(pb).enumerate() {
            let tag = self.next_tag;
            self.next_tag += 1;
            let w = PageWrite {
                tag,
                payload: Some(chunk.into()),
            };
            let slot = self.iface.page_slot(data_in);
            let t = self.write_page(Lpn(lpn.0 + i as u64), stream, w, slot)?;
            done = done.max(self.iface.page_done(slot, t));
        }
        let done = self.iface.write_acked(done);
        self.finish(at, done)?;
        Ok(done)
    }

    /// Read `pages` pages from `lpn` (timing and counters only). Returns the completion time.
    pub fn read(&mut self, lpn: Lpn, pages: u32, at: SimTime) -> Result<SimTime, SsdError> {
        self.check(lpn, pages as u64, StreamId(0))?;
        let mut done = at;
        for i in 0..pages as u64 {
            let (t, _) = self.ftl_read(Lpn(lpn.0 + i), at)?;
            done = done.max(t);
        }
        let done = self
            .iface
            .read_out(done, pages as u64 * self.page_bytes() as u64);
        self.flash.stats.host_pages_read += pages as u64;
        self.finish(at, done)?;
        Ok(done)
    }

    /// Read one [`ReadPage`] per element of `out`, from `lpn`. A host issues it through the
    /// host port ([`crate::host::Command::ReadTags`]), which picks the issue time `at`.
    pub fn read_tags(
        &mut self,
        lpn: Lpn,
        out: &mut [ReadPage],
        at: SimTime,
    ) -> Result<SimTime, SsdError> {
        if !self.flash.has_tags() {
            return Err(SsdError::NoData {
                mode: self.cfg.ftl.data.name(),
            });
        }
        self.check(lpn, out.len() as u64, StreamId(0))?;
        let mut done = at;
        for (i, slot) in out.iter_mut().enumerate() {
            let (t, state, _) = self.read_page(Lpn(lpn.0 + i as u64), at)?;
            done = done.max(t);
            *slot = state;
        }
        let done = self
            .iface
            .read_out(done, out.len() as u64 * self.page_bytes() as u64);
        self.flash.stats.host_pages_read += out.len() as u64;
        self.finish(at, done)?;
        Ok(done)
    }

    /// Read whole pages into `buf` (payload mode). Pages never written or trimmed read as zeros;
    /// `states` (if given, one per page) says which.
    pub fn read_data(
        &mut self,
        lpn: Lpn,
        buf: &mut [u8],
        mut states: Option<&mut [ReadPage]>,
        at: SimTime,
    ) -> Result<SimTime, SsdError> {
        let pb = self.page_bytes();
        let n = self.payload_pages(buf.len())?;
        self.check(lpn, n, StreamId(0))?;
        let mut done = at;
        for (i, chunk) in buf.chunks_exact_mut(pb).enumerate() {
            let (t, state, ppn) = self.read_page(Lpn(lpn.0 + i as u64), at)?;
            done = done.max(t);
            match ppn.and_then(|p| self.flash.payload(p)) {
                Some(bytes) => chunk.copy_from_slice(bytes),
                None => chunk.fill(0),
            }
            if let Some(s) = states.as_deref_mut() {
                s[i] = state;
            }
        }
        let done = self.iface.read_out(done, buf.len() as u64);
        self.flash.stats.host_pages_read += n;
        self.finish(at, done)?;
        Ok(done)
    }

    /// Trim `pages` pages from `lpn`.
    pub fn trim(&mut self, lpn: Lpn, pages: u32, at: SimTime) -> Result<SimTime, SsdError> {
        self.check(lpn, pages as u64, StreamId(0))?;
        let mut done = at;
        for i in 0..pages as u64 {
            let l = Lpn(lpn.0 + i);
            let before = self.flash.stats;
            done = done.max(self.ftl.trim(&mut self.flash, l, at)?);
            if self.cfg.ftl.check_invariants {
                self.check_invariants(&before, "trim", l);
            }
            self.trimmed[(l.0 / 64) as usize] |= 1 << (l.0 % 64);
        }
        self.any_trimmed |= pages > 0;
        self.flash.stats.host_pages_trimmed += pages as u64;
        self.finish(at, done)?;
        Ok(done)
    }

    #[inline(always)]
    fn write_page(
        &mut self,
        lpn: Lpn,
        stream: StreamId,
        data: PageWrite,
        at: SimTime,
    ) -> Result<SimTime, SsdError> {
        if self.any_trimmed {
            self.trimmed[(lpn.0 / 64) as usize] &= !(1 << (lpn.0 % 64));
        }
        self.flash.stats.host_pages_written += 1;
        let w = HostWrite {
            lpn,
            stream,
            data,
            now: at,
        };
        if self.cfg.ftl.check_invariants {
            return self.write_checked(w);
        }
        self.ftl.write(&mut self.flash, w)
    }

    /// [`Ssd::write_page`] with the invariant check (kept out of the hot path).
    #[cold]
    #[inline(never)]
    fn write_checked(&mut self, w: HostWrite) -> Result<SimTime, SsdError> {
        let (lpn, before) = (w.lpn, self.flash.stats);
        let done = self.ftl.write(&mut self.flash, w);
        self.check_invariants(&before, "write", lpn);
        done
    }

    /// With `check_invariants`: run the FTL's verifier after an operation on `lpn` that
    /// collected garbage, merged or erased, and stop at the first broken invariant (a bug in
    /// the simulator, not an input error: a test run wants the panic and its context).
    fn check_invariants(&self, before: &Stats, op: &str, lpn: Lpn) {
        let s = &self.flash.stats;
        let reclaimed = (
            s.gc_invocations,
            s.erases,
            s.merges_full,
            s.merges_partial,
            s.merges_switch,
        ) != (
            before.gc_invocations,
            before.erases,
            before.merges_full,
            before.merges_partial,
            before.merges_switch,
        );
        if reclaimed {
            if let Err(e) = self.ftl.verify(&self.flash) {
                panic!("after the {op} of lpn {} (with GC or a merge): {e}", lpn.0);
            }
        }
    }

    fn read_page(
        &mut self,
        lpn: Lpn,
        at: SimTime,
    ) -> Result<(SimTime, ReadPage, Option<Ppn>), SsdError> {
        let (t, ppn) = self.ftl_read(lpn, at)?;
        let state = match ppn {
            Some(p) => {
                let tag = self.flash.tag(p);
                assert_ne!(tag, TAG_EMPTY, "FTL mapped lpn {} to an empty page", lpn.0);
                ReadPage::Tag(tag)
            }
            None if self.is_trimmed(lpn) => ReadPage::Trimmed,
            None => ReadPage::Unwritten,
        };
        Ok((t, state, ppn))
    }

    /// An FTL read (DFTL may write translation pages, and so collect garbage, on a read).
    fn ftl_read(&mut self, lpn: Lpn, at: SimTime) -> Result<(SimTime, Option<Ppn>), SsdError> {
        let before = self.flash.stats;
        let r = self.ftl.read(&mut self.flash, lpn, at);
        if self.cfg.ftl.check_invariants {
            self.check_invariants(&before, "read", lpn);
        }
        r
    }

    /// Whole pages in a payload buffer of `len` bytes, on a device that keeps payloads.
    fn payload_pages(&self, len: usize) -> Result<u64, SsdError> {
        let pb = self.page_bytes();
        if !self.flash.has_payloads() {
            return Err(SsdError::NoPayloads {
                mode: self.cfg.ftl.data.name(),
            });
        }
        if len == 0 || !len.is_multiple_of(pb) {
            return Err(SsdError::PayloadSize {
                expected: pb,
                got: len,
            });
        }
        Ok((len / pb) as u64)
    }

    fn is_trimmed(&self, lpn: Lpn) -> bool {
        self.trimmed[(lpn.0 / 64) as usize] & (1 << (lpn.0 % 64)) != 0
    }

    fn check(&self, lpn: Lpn, pages: u64, stream: StreamId) -> Result<(), SsdError> {
        let logical_pages = self.logical_pages();
        if lpn
            .0
            .checked_add(pages)
            .is_none_or(|end| end > logical_pages)
        {
            return Err(SsdError::OutOfRange {
                lpn: lpn.0.saturating_add(pages.saturating_sub(1)),
                logical_pages,
            });
        }
        if stream.0 >= self.cfg.ftl.streams {
            return Err(SsdError::NoSuchStream {
                stream: stream.0,
                streams: self.cfg.ftl.streams,
            });
        }
        Ok(())
    }

    fn finish(&mut self, at: SimTime, done: SimTime) -> Result<(), SsdError> {
        if done.0 == u64::MAX {
            // Flash timelines saturate instead of wrapping: the run has left u64 nanoseconds.
            return Err(SsdError::TimeOverflow {
                at_ns: at.0,
                field: self.cfg.slowest_timing_field(),
            });
        }
        self.flash.stats.host_ios += 1;
        // Untimed runs have no latency to record (every request takes zero time).
        if self.flash.timing_enabled() {
            let ns = done.0.saturating_sub(at.0).max(1);
            self.latency_ns.record(ns);
        }
        Ok(())
    }
}

/// Hints that logical pages will be written soon ([`Ssd::write_prefetch`]): each starts
/// loading the page's entry of the FTL's mapping table. Changes no result; out-of-range pages
/// (and every page of an FTL without such a table) are ignored.
#[derive(Clone, Copy)]
pub struct WritePrefetch<'a> {
    /// The mapping table's bytes, `entry_bytes` per logical page.
    map: &'a [u8],
    entry_bytes: usize,
    /// Pages hinted: those below (0 when there is no table).
    logical_pages: u64,
}

impl WritePrefetch<'_> {
    /// Start loading `lpn`'s mapping entry (see [`Ssd::write_prefetch`]).
    #[inline(always)]
    pub fn prefetch(&self, lpn: Lpn) {
        if lpn.0 < self.logical_pages {
            let at = self
                .map
                .as_ptr()
                .wrapping_add(lpn.0 as usize * self.entry_bytes);
            crate::ftl::prefetch_line(at);
        }
    }
}

/// The clock of [`Ssd::write_pages_timed`]: per request, what the host port's `submit` and
/// [`Ssd::write`] do around the FTL's write of its one page, in the same order. One of two,
/// chosen per run from the configuration, so that branches the configuration decides stay
/// out of the page loop ([`Ftl::write_run_timed`] runs the loop once for each).
pub(crate) enum TimedRun<'a> {
    /// Queue depth 1, no link time and no write cache: the default device.
    Closed(ClosedLoop<'a>),
    /// Any queue depth, link and write cache.
    Queued(QueuedRun<'a>),
}

/// [`TimedRun::Closed`]: each request issues when the one before completes, the first at
/// the queue's issue time; a request's data is in at its issue and its page completes at
/// its program. The queue and the port's clock are brought up to date when the run ends.
pub(crate) struct ClosedLoop<'a> {
    latency: &'a mut LatencyCounts,
    cfg: &'a SsdConfig,
    ack_ns: u64,
    /// The latest program end whose completion (`ack_ns` later) stays below `u64::MAX` ns,
    /// the overflow: one compare per request instead of a saturating add and a compare.
    end_max_ns: u64,
    /// The current request's issue time, and the next one's (the current one's completion
    /// once it has completed).
    at: SimTime,
    next_at: SimTime,
    /// The latency of the requests completed last and how many in a row had it, not yet
    /// counted: at depth 1 most requests take the same time (a transfer and a program on an
    /// idle die), so a request usually costs a compare and an increment here and its bucket
    /// index is computed once per row ([`ClosedLoop::count_row`]).
    same_ns: u64,
    same_n: u64,
}

impl ClosedLoop<'_> {
    /// Count the row of equal latencies held back (none: nothing to count).
    #[inline]
    fn count_row(&mut self) {
        if self.same_n > 0 {
            self.latency.record_n(self.same_ns, self.same_n);
            self.same_n = 0;
        }
    }
}

impl crate::ftl::RunClock for ClosedLoop<'_> {
    /// Issue the next request: the time its page reaches the FTL (its issue).
    #[inline(always)]
    fn issue(&mut self) -> SimTime {
        self.at = self.next_at;
        self.at
    }

    /// As [`QueuedRun::complete`] without link or cache: the request completes at its
    /// page's program (at least its issue), plus the acknowledgement. Completed requests
    /// are the run's written pages (the caller counts them).
    #[inline(always)]
    fn complete(&mut self, flash: &mut Flash, placed: Placed) -> Result<(), SsdError> {
        let at = self.at;
        let programmed = match placed {
            Placed::Block(b) => flash.time_placed(b, at),
            Placed::Done(t) => t,
        };
        // At least `at`: the latency below needs no saturating subtraction.
        let end = at.0.max(programmed.0);
        // The completion would saturate at (or reach) u64::MAX ns: the run overflows.
        if end > self.end_max_ns {
            return Err(SsdError::TimeOverflow {
                at_ns: at.0,
                field: self.cfg.slowest_timing_field(),
            });
        }
        let done = end + self.ack_ns;
        let ns = (done - at.0).max(1);
        if ns != self.same_ns {
            self.count_row();
            self.same_ns = ns;
        }
        self.same_n += 1;
        self.next_at = SimTime(done);
        Ok(())
    }
}

/// [`TimedRun::Queued`]: the host queue, link and cache stepped per request.
pub(crate) struct QueuedRun<'a> {
    queue: &'a mut crate::queue::HostQueue,
    last_done: &'a mut SimTime,
    iface: &'a mut HostInterface,
    latency: &'a mut LatencyCounts,
    cfg: &'a SsdConfig,
    page_bytes: u64,
    /// The current request's issue time and its page's cache slot (its data's arrival
    /// without a cache).
    at: SimTime,
    slot: SimTime,
    /// Requests completed (`host_ios`, added when the run ends: the FTL holds the flash).
    completed: u64,
}

impl crate::ftl::RunClock for QueuedRun<'_> {
    /// Issue the next request: the time its page reaches the FTL.
    #[inline(always)]
    fn issue(&mut self) -> SimTime {
        self.at = self.queue.issue_time(SimTime::ZERO);
        let data_in = self.iface.write_in(self.at, self.page_bytes);
        // Without a cache `page_slot` and `page_done` return what they are given: the
        // write of `Ssd::write` without a cache.
        self.slot = self.iface.page_slot(data_in);
        self.slot
    }

    /// The page of the request issued last was written where `placed` says: time its
    /// program at its cache slot (its data's arrival without a cache) if the FTL left it
    /// untimed, then complete the request (an error: it failed, after its page was written).
    #[inline(always)]
    fn complete(&mut self, flash: &mut Flash, placed: Placed) -> Result<(), SsdError> {
        let at = self.at;
        let programmed = match placed {
            Placed::Block(b) => flash.time_placed(b, self.slot),
            Placed::Done(t) => t,
        };
        let stored = at.max(self.iface.page_done(self.slot, programmed));
        let done = self.iface.write_acked(stored);
        // As `Ssd::finish`, then the port's `complete`.
        if done.0 == u64::MAX {
            return Err(SsdError::TimeOverflow {
                at_ns: at.0,
                field: self.cfg.slowest_timing_field(),
            });
        }
        self.completed += 1;
        self.latency.record(done.0.saturating_sub(at.0).max(1));
        assert!(done >= at, "completion {done:?} before issue {at:?}");
        self.queue.complete(done);
        *self.last_done = (*self.last_done).max(done);
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn small(ftl: crate::config::FtlKind) -> Ssd {
        let mut cfg = SsdConfig::preset("mlc-sata-2010").expect("preset");
        (cfg.geometry.channels, cfg.geometry.dies_per_channel) = (2, 1);
        (cfg.geometry.blocks_per_plane, cfg.geometry.pages_per_block) = (32, 16);
        cfg.ftl.scheme = ftl;
        cfg.ftl.op = 0.7;
        cfg.timing.enabled = false;
        Ssd::new(cfg).expect("small SSD")
    }

    /// Each hint of [`Ssd::write_prefetch`] goes to the page's own L2P entry: the bytes there
    /// decode to the physical page the FTL maps it to (or none); pages out of range, and an
    /// FTL without a page table, get no hint.
    #[test]
    fn write_prefetch_points_at_each_pages_mapping() {
        let mut ssd = small(crate::config::FtlKind::Page);
        let n = ssd.logical_pages();
        for lpn in (0..n).step_by(3).chain([5, 5, 7]) {
            ssd.write(Lpn(lpn), 1, StreamId(0), SimTime::ZERO).unwrap();
        }
        let hint = ssd.write_prefetch();
        let (map, w) = (hint.map.to_vec(), hint.entry_bytes);
        assert_eq!(hint.logical_pages, n);
        assert!(w == 3 || w == 4, "{w} bytes per entry");
        for lpn in 0..n {
            let at = lpn as usize * w;
            let bytes = &map[at..at + w];
            let raw = bytes.iter().rev().fold(0u64, |v, &b| v << 8 | b as u64);
            let nil = (1u64 << (8 * w)) - 1;
            let mapped = (raw != nil).then_some(Ppn(raw));
            let found = ssd
                .ftl
                .read(&mut ssd.flash, Lpn(lpn), SimTime::ZERO)
                .unwrap()
                .1;
            assert_eq!(mapped, found, "lpn {lpn}");
        }
        assert_eq!(
            small(crate::config::FtlKind::Block)
                .write_prefetch()
                .logical_pages,
            0
        );
    }
}
