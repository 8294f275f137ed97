//! The host port: the one way a host drives an [`Ssd`] on its virtual clock.
//!
//! Model: commands are issued in order through a host queue of `queue_depth` slots
//! ([`HostQueue`]): a command is issued at its arrival time (zero unless trace arrival times
//! are replayed), or, with every slot taken, when the earliest command in flight completes.
//! At depth 1 this is a closed loop: each command is issued when the previous one completes.
//! A *batch* ([`HostPort::batch`]) takes one slot: all its commands are issued at the same
//! time, so they overlap on the dies and channels, and the slot frees at the last completion.
//! The port keeps the latest completion ([`HostPort::last_done`]), the clock a simulated block
//! device reports.
//!
//! Invariants (asserted): issue times never go backwards; the latest completion never goes
//! backwards; a command completes no earlier than it was issued.
//!
//! `blockdev::SimDevice` (depth 1, batches), `flashlab sim` and the SSD experiments (any depth,
//! arrival replay) and `bench device`'s simulated target (depth 1, batches) all drive the SSD
//! through this port.

use crate::device::{ReadPage, Ssd};
use crate::error::SsdError;
use crate::ftl::RUN_PREFETCH_AHEAD;
pub use crate::queue::HostQueue;
use crate::stats::Stats;
use crate::types::{Lpn, SimTime, StreamId};

/// One host command.
#[derive(Debug)]
pub enum Command<'a> {
    /// Write `pages` pages from `lpn` with fresh tags (timing and counters; no bytes).
    Write {
        lpn: Lpn,
        pages: u32,
        stream: StreamId,
    },
    /// Read `pages` pages from `lpn` (timing and counters; no bytes).
    Read { lpn: Lpn, pages: u32 },
    /// Trim `pages` pages from `lpn`.
    Trim { lpn: Lpn, pages: u32 },
    /// Write whole pages of bytes from `lpn` (payload mode).
    WriteData {
        lpn: Lpn,
        data: &'a [u8],
        stream: StreamId,
    },
    /// Read whole pages from `lpn` into `buf` (payload mode; unwritten pages read as zeros).
    ReadData { lpn: Lpn, buf: &'a mut [u8] },
    /// Write one page per tag from `lpn`, each carrying its tag (tags mode: read-after-write
    /// checks without payload bytes).
    WriteTags {
        lpn: Lpn,
        tags: &'a [u64],
        stream: StreamId,
    },
    /// Read one [`ReadPage`] (tag, unwritten or trimmed) per element of `out`, from `lpn`.
    ReadTags { lpn: Lpn, out: &'a mut [ReadPage] },
}

/// The host side of one [`Ssd`]: its queue, its clock and trace-time replay.
pub struct HostPort {
    ssd: Ssd,
    queue: HostQueue,
    queue_depth: u32,
    /// The latest completion so far.
    last_done: SimTime,
    /// Issue commands no earlier than their (trace) arrival time.
    replay_arrivals: bool,
    /// The first replayed arrival: arrivals are measured from it.
    trace_origin_ns: Option<u64>,
}

impl HostPort {
    /// A port of `queue_depth` slots (at least 1) over `ssd`, its clock at zero.
    pub fn new(ssd: Ssd, queue_depth: u32) -> HostPort {
        assert!(queue_depth >= 1, "a host queue has at least one slot");
        HostPort {
            ssd,
            queue: HostQueue::new(queue_depth),
            queue_depth,
            last_done: SimTime::ZERO,
            replay_arrivals: false,
            trace_origin_ns: None,
        }
    }

    pub fn ssd(&self) -> &Ssd {
        &self.ssd
    }
    pub fn queue_depth(&self) -> u32 {
        self.queue_depth
    }
    /// The latest completion so far: the device's clock.
    pub fn last_done(&self) -> SimTime {
        self.last_done
    }

    /// Issue commands at their arrival times (measured from the first one replayed) rather
    /// than as fast as the queue allows.
    pub fn replay_arrivals(&mut self, on: bool) {
        self.replay_arrivals = on;
    }

    /// Issue commands no earlier than their arrival times, taken as absolute times of the
    /// port's clock (not measured from the first arrival): for a host that computes them.
    pub fn replay_absolute_arrivals(&mut self) {
        self.replay_arrivals = true;
        self.trace_origin_ns = Some(0);
    }

    /// Start a measured phase: a fresh queue at the last completion, latencies cleared.
    /// Returns the statistics and time the phase's figures are measured from.
    pub fn begin_measurement(&mut self) -> (Stats, SimTime) {
        self.queue = HostQueue::starting_at(self.queue_depth, self.last_done);
        self.ssd.reset_latency();
        (self.ssd.stats(), self.last_done)
    }

    /// Start a measured phase at `queue_depth` slots (at least 1) from now on.
    pub fn begin_measurement_at_depth(&mut self, queue_depth: u32) -> (Stats, SimTime) {
        assert!(queue_depth >= 1, "a host queue has at least one slot");
        self.queue_depth = queue_depth;
        self.begin_measurement()
    }

    /// Issue one command through the queue; `arrival_ns` is its trace time (used only when
    /// replaying arrivals). Returns its completion time.
    #[inline]
    pub fn submit(
        &mut self,
        cmd: Command<'_>,
        arrival_ns: Option<u64>,
    ) -> Result<SimTime, SsdError> {
        Ok(self.submit_timed(cmd, arrival_ns)?.1)
    }

    /// [`HostPort::submit`], returning the issue time with the completion time.
    #[inline]
    pub fn submit_timed(
        &mut self,
        cmd: Command<'_>,
        arrival_ns: Option<u64>,
    ) -> Result<(SimTime, SimTime), SsdError> {
        let arrival = self.arrival(arrival_ns);
        let at = self.queue.issue_time(arrival);
        let done = run(&mut self.ssd, cmd, at)?;
        self.complete(at, done);
        Ok((at, done))
    }

    /// One-page write requests on `stream`, one per element of `lpns` in order, with the
    /// same completions, counters and clock as [`HostPort::submit`] of
    /// `Command::Write { lpn, pages: 1, stream }` for each in turn (no arrival times). On an
    /// untimed device without arrival replay every request issues and completes at the
    /// queue's clock, so the run takes one queue slot and one device call
    /// ([`Ssd::write_pages_untimed`]); otherwise each request goes through `submit`. Stops at
    /// the first request that fails and returns its error.
    pub fn write_pages(&mut self, lpns: &[u64], stream: StreamId) -> Result<(), SsdError> {
        if !self.replay_arrivals && self.ssd.timed_runs() {
            // The requests in range on a device stream run in one FTL call; the first that
            // is not goes through `submit`, which issues it and fails its check.
            let valid =
                self.ssd
                    .write_pages_timed(lpns, stream, &mut self.queue, &mut self.last_done)?;
            if let Some(&lpn) = lpns.get(valid) {
                let cmd = Command::Write {
                    lpn: Lpn(lpn),
                    pages: 1,
                    stream,
                };
                let r = self.submit(cmd, None);
                assert!(r.is_err(), "a request out of range or stream was accepted");
                r?;
            }
            return Ok(());
        }
        if self.replay_arrivals || !self.ssd.untimed_runs() {
            for (i, &lpn) in lpns.iter().enumerate() {
                // As the untimed run does in the FTL: the overwritten page's record is on its
                // way a few requests early (a hint; changes nothing).
                if let Some(&ahead) = lpns.get(i + RUN_PREFETCH_AHEAD) {
                    self.ssd.prefetch_overwrite(Lpn(ahead));
                }
                let cmd = Command::Write {
                    lpn: Lpn(lpn),
                    pages: 1,
                    stream,
                };
                self.submit(cmd, None)?;
            }
            return Ok(());
        }
        if lpns.is_empty() {
            return Ok(());
        }
        // The first request's issue time; each one after it issues when the one before
        // completes (depth 1) or frees a slot, which on an untimed device is this same time.
        let at = self.queue.issue_time(SimTime::ZERO);
        match self.ssd.write_pages_untimed(lpns, stream, at) {
            Ok(()) => {
                self.complete(at, at);
                Ok(())
            }
            Err(e) => {
                // As `submit`: the failed request keeps its slot. The clock needs no move:
                // untimed, nothing completes after the queue's clock, so `at` is at most it.
                assert!(at <= self.last_done, "issue {at:?} after the clock");
                Err(e)
            }
        }
    }

    /// The device, to turn on counters such as [`Ssd::count_copies_by_tag_class`].
    pub fn ssd_mut(&mut self) -> &mut Ssd {
        &mut self.ssd
    }

    /// Run `f` over a batch: every command it runs is issued at one time (one queue slot,
    /// issued as a command arriving now would be), and the slot frees at the last completion.
    /// The batch completes (and the clock moves) even when `f` returns an error.
    pub fn batch<R>(&mut self, f: impl FnOnce(&mut Batch<'_>) -> R) -> R {
        let at = self.queue.issue_time(SimTime::ZERO);
        let mut b = Batch {
            ssd: &mut self.ssd,
            at,
            end: at,
        };
        let r = f(&mut b);
        let end = b.end;
        self.complete(at, end);
        r
    }

    #[inline]
    fn arrival(&mut self, arrival_ns: Option<u64>) -> SimTime {
        if !self.replay_arrivals {
            return SimTime::ZERO;
        }
        let origin = *self.trace_origin_ns.get_or_insert(arrival_ns.unwrap_or(0));
        SimTime(arrival_ns.map_or(0, |a| a.saturating_sub(origin)))
    }

    #[inline]
    fn complete(&mut self, at: SimTime, done: SimTime) {
        assert!(done >= at, "completion {done:?} before issue {at:?}");
        self.queue.complete(done);
        self.last_done = self.last_done.max(done);
    }
}

/// The commands of one batch, all issued at [`Batch::at`].
pub struct Batch<'p> {
    ssd: &'p mut Ssd,
    at: SimTime,
    end: SimTime,
}

impl Batch<'_> {
    /// The time every command of the batch is issued at.
    pub fn at(&self) -> SimTime {
        self.at
    }
    pub fn ssd(&self) -> &Ssd {
        self.ssd
    }
    /// Issue `cmd` at the batch's time; returns its completion time.
    pub fn run(&mut self, cmd: Command<'_>) -> Result<SimTime, SsdError> {
        let done = run(self.ssd, cmd, self.at)?;
        self.end = self.end.max(done);
        Ok(done)
    }
}

#[inline]
fn run(ssd: &mut Ssd, cmd: Command<'_>, at: SimTime) -> Result<SimTime, SsdError> {
    match cmd {
        Command::Write { lpn, pages, stream } => ssd.write(lpn, pages, stream, at),
        Command::Read { lpn, pages } => ssd.read(lpn, pages, at),
        Command::Trim { lpn, pages } => ssd.trim(lpn, pages, at),
        Command::WriteData { lpn, data, stream } => ssd.write_data(lpn, data, stream, at),
        Command::ReadData { lpn, buf } => ssd.read_data(lpn, buf, None, at),
        Command::WriteTags { lpn, tags, stream } => ssd.write_tags(lpn, tags, stream, at),
        Command::ReadTags { lpn, out } => ssd.read_tags(lpn, out, at),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::SsdConfig;

    fn port(qd: u32) -> HostPort {
        let mut cfg = SsdConfig::preset("mlc-sata-2010").expect("preset");
        (cfg.geometry.channels, cfg.geometry.dies_per_channel) = (4, 1);
        (cfg.geometry.blocks_per_plane, cfg.geometry.pages_per_block) = (16, 16);
        cfg.ftl.op = 0.7;
        HostPort::new(Ssd::new(cfg).expect("small SSD"), qd)
    }

    fn write(lpn: u64) -> Command<'static> {
        Command::Write {
            lpn: Lpn(lpn),
            pages: 1,
            stream: StreamId(0),
        }
    }

    #[test]
    fn depth_one_issues_each_command_at_the_previous_completion() {
        let mut p = port(1);
        let first = p.submit(write(0), None).unwrap();
        let second = p.submit(write(1), None).unwrap();
        assert!(second > first, "{second:?} after {first:?}");
        assert_eq!(p.last_done(), second);
    }

    #[test]
    fn a_batch_overlaps_and_takes_one_slot() {
        let mut p = port(1);
        let (at, done) = p.batch(|b| {
            let at = b.at();
            let done: Vec<SimTime> = (0..4).map(|l| b.run(write(l)).unwrap()).collect();
            (at, done)
        });
        assert_eq!(at, SimTime::ZERO);
        // Four pages on four dies: programmed side by side, not one after another.
        let last = *done.iter().max().unwrap();
        assert!(last.0 < done[0].0 * 2, "{done:?} overlap");
        assert_eq!(p.last_done(), last);
        // The next command waits for the whole batch (depth 1).
        assert!(p.submit(write(9), None).unwrap() > last);
    }

    /// Tagged I/O through the port is the device's tagged I/O at the port's issue times:
    /// the same completions, tags and counters as calling the device at those times.
    #[test]
    fn tagged_io_through_the_port_matches_the_device() {
        let mut p = port(1);
        let mut cfg = SsdConfig::preset("mlc-sata-2010").expect("preset");
        (cfg.geometry.channels, cfg.geometry.dies_per_channel) = (4, 1);
        (cfg.geometry.blocks_per_plane, cfg.geometry.pages_per_block) = (16, 16);
        cfg.ftl.op = 0.7;
        let mut direct = Ssd::new(cfg).expect("small SSD");
        let mut now = SimTime::ZERO;
        for round in 0..3u64 {
            let tags: Vec<u64> = (0..8).map(|i| round << 8 | i).collect();
            let cmd = Command::WriteTags {
                lpn: Lpn(round * 4),
                tags: &tags,
                stream: StreamId(0),
            };
            let done = p.submit(cmd, None).unwrap();
            now = direct
                .write_tags(Lpn(round * 4), &tags, StreamId(0), now)
                .unwrap();
            assert_eq!(done, now, "round {round}");
        }
        let mut out = vec![ReadPage::Unwritten; 20];
        let done = p
            .submit(
                Command::ReadTags {
                    lpn: Lpn(0),
                    out: &mut out,
                },
                None,
            )
            .unwrap();
        let mut want = vec![ReadPage::Unwritten; 20];
        assert_eq!(done, direct.read_tags(Lpn(0), &mut want, now).unwrap());
        assert_eq!(out, want);
        assert_eq!(out[0], ReadPage::Tag(0), "lpn 0 keeps round 0's first tag");
        assert_eq!(
            out[8],
            ReadPage::Tag(2 << 8),
            "lpn 8 was last written in round 2"
        );
        assert_eq!(p.ssd().stats(), direct.stats());
        assert_eq!(p.last_done(), done);
    }

    /// The controller's write acknowledgement (`t_write_ack_ns`) delays each write's
    /// completion and holds nothing: at depth 1 every write pays it one after another, while
    /// writes in flight together overlap it.
    #[test]
    fn the_write_acknowledgement_is_paid_in_turn_at_depth_one_and_overlaps_in_flight() {
        let ack_ns = 60_000;
        let with_ack = |qd: u32, ack: u64| {
            let mut cfg = SsdConfig::preset("mlc-sata-2010").expect("preset");
            (cfg.geometry.channels, cfg.geometry.dies_per_channel) = (4, 1);
            (cfg.geometry.blocks_per_plane, cfg.geometry.pages_per_block) = (16, 16);
            (cfg.ftl.op, cfg.timing.write_cache_pages) = (0.7, 64);
            cfg.timing.t_write_ack_ns = ack;
            let mut p = HostPort::new(Ssd::new(cfg).expect("small SSD"), qd);
            (0..4)
                .map(|l| p.submit(write(l), None).unwrap())
                .last()
                .unwrap()
        };
        let (one, one_acked) = (with_ack(1, 0), with_ack(1, ack_ns));
        assert_eq!(
            one_acked.0 - one.0,
            4 * ack_ns,
            "depth 1: {one:?} {one_acked:?}"
        );
        let (four, four_acked) = (with_ack(4, 0), with_ack(4, ack_ns));
        assert_eq!(
            four_acked.0 - four.0,
            ack_ns,
            "depth 4: {four:?} {four_acked:?}"
        );
    }

    #[test]
    fn replayed_arrivals_count_from_the_first() {
        let mut p = port(4);
        p.replay_arrivals(true);
        let late = 1_000_000_000;
        p.submit(write(0), Some(5_000)).unwrap();
        let done = p.submit(write(1), Some(5_000 + late)).unwrap();
        assert!(done.0 >= late && done.0 < late + 10_000_000, "{done:?}");
    }
}
