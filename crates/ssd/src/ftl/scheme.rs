//! What every FTL scheme offers the device: the [`Ftl`] trait and the page write it receives.

use crate::error::{InvariantError, SsdError};
use crate::flash::{Flash, Programmed};
use crate::types::{Lpn, PageWrite, Ppn, SimTime, StreamId};

/// One page write as an FTL receives it: where, on which stream, what, and when.
pub(crate) struct HostWrite {
    pub lpn: Lpn,
    pub stream: StreamId,
    pub data: PageWrite,
    pub now: SimTime,
}

/// How many pages before its write [`Ftl::write_run`] (and `HostPort::write_pages` on a timed
/// device) prefetches a page's overwrite (its L2P entry, prefetched by the driver when the
/// request was pulled, has arrived by then).
pub(crate) const RUN_PREFETCH_AHEAD: usize = 4;

/// Where [`Ftl::write_placed`] put a host page.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Placed {
    /// Programmed into this block and not yet timed: [`Flash::time_placed`] (timing on) at
    /// the write's time gives its completion (nothing touched the flash's timelines since).
    Block(Programmed),
    /// The scheme timed its own programs: the write's completion time.
    Done(SimTime),
}

/// A completion time, or why the operation was refused.
pub(crate) type Done = Result<SimTime, SsdError>;
/// A read's completion time and where the data is (`None`: not mapped).
pub(crate) type Found = Result<(SimTime, Option<Ppn>), SsdError>;

pub(crate) trait Ftl: Send {
    /// Logical pages the host may address (`0..logical_pages`).
    fn logical_pages(&self) -> u64;
    /// Write one logical page; may run GC/merges first. Returns the completion time.
    fn write(&mut self, flash: &mut Flash, w: HostWrite) -> Done;
    /// [`Ftl::write`], except that a scheme may leave the host page's own program untimed
    /// and say where it went ([`Placed::Block`]): a run times it after, in its clock, so an
    /// untimed run pays nothing for it and a timed one no flag check inside the write. This
    /// default times everything ([`Placed::Done`]).
    #[inline(always)]
    fn write_placed(&mut self, flash: &mut Flash, w: HostWrite) -> Result<Placed, SsdError> {
        self.write(flash, w).map(Placed::Done)
    }
    /// Read one logical page: completion time and where its data is (`None`: not mapped).
    fn read(&mut self, flash: &mut Flash, lpn: Lpn, now: SimTime) -> Found;
    /// Drop a logical page's mapping (TRIM).
    fn trim(&mut self, flash: &mut Flash, lpn: Lpn, now: SimTime) -> Done;
    /// Bytes of RAM the scheme's mapping structures take for this device (from its real
    /// data structures: entries x entry size).
    fn mapping_bytes(&self, flash: &Flash) -> u64;
    /// Check every invariant of the scheme against the flash state.
    fn verify(&self, flash: &Flash) -> Result<(), InvariantError>;
    /// Where a write of a logical page reads first, for [`crate::Ssd::write_prefetch`]'s
    /// hints: a table of one entry per logical page, as its bytes and the bytes per entry
    /// (`None`: nothing worth loading ahead).
    #[inline]
    fn write_prefetch_map(&self) -> Option<(&[u8], usize)> {
        None
    }
    /// A later hint for the same write, once its mapping is likely loaded: start loading what
    /// the write changes next (the old physical page's reverse map). Changes nothing.
    #[inline]
    fn prefetch_overwrite(&self, _lpn: Lpn) {}
    /// Write one page at each of `lpns` in order, on `stream`, the page at index `i` carrying
    /// tag `first_tag + i`, all at `now`: exactly [`Ftl::write`] page by page (this default,
    /// compiled once per scheme, calls the scheme's own `write` without a dynamic call per
    /// page, and prefetches each page's overwrite [`RUN_PREFETCH_AHEAD`] pages early).
    /// Returns how many pages were written; on an error, the index of the page that failed
    /// (nothing after it was attempted) and the error.
    fn write_run(
        &mut self,
        flash: &mut Flash,
        lpns: &[u64],
        stream: StreamId,
        first_tag: u64,
        now: SimTime,
    ) -> Result<usize, (usize, SsdError)> {
        run_pages(self, flash, lpns, stream, first_tag, &mut Untimed(now))
    }
    /// [`Ftl::write_run`] on a timed device: each page at the time `clock` issues its request,
    /// and its request completed through `clock` once the page is written (the clock's two
    /// steps inlined: no device call, command or result per request). On an error, the
    /// index of the page whose write or completion failed (nothing after it was attempted).
    fn write_run_timed(
        &mut self,
        flash: &mut Flash,
        lpns: &[u64],
        stream: StreamId,
        first_tag: u64,
        clock: &mut crate::device::TimedRun<'_>,
    ) -> Result<usize, (usize, SsdError)> {
        use crate::device::TimedRun;
        // One loop per clock: the configuration's branches stay out of the page loop.
        match clock {
            TimedRun::Closed(c) => run_pages(self, flash, lpns, stream, first_tag, c),
            TimedRun::Queued(c) => run_pages(self, flash, lpns, stream, first_tag, c),
        }
    }
    /// Per reclaim-unit handle counters (FDP, page scheme); empty for other schemes.
    fn handle_stats(&self, _flash: &Flash) -> Vec<super::fdp::HandleStats> {
        Vec::new()
    }
}

/// When a run's pages are written and what is done once each is: the one loop of
/// [`Ftl::write_run`] (every page at one time, nothing after) and [`Ftl::write_run_timed`]
/// (the device's per-request clock), compiled once for each.
pub(crate) trait RunClock {
    /// The time the next page's write starts.
    fn issue(&mut self) -> SimTime;
    /// The page issued last was written where `placed` says: time its program if it is
    /// not yet timed (a timed clock: on `flash`, at the page's issue time), and complete
    /// its request (an error: the request failed).
    fn complete(&mut self, flash: &mut Flash, placed: Placed) -> Result<(), SsdError>;
}

/// An untimed run's clock: every page at `self.0`, nothing to complete.
pub(crate) struct Untimed(pub SimTime);

impl RunClock for Untimed {
    #[inline(always)]
    fn issue(&mut self) -> SimTime {
        self.0
    }
    /// Nothing to time or complete: an untimed device's program takes no time.
    #[inline(always)]
    fn complete(&mut self, _flash: &mut Flash, _placed: Placed) -> Result<(), SsdError> {
        Ok(())
    }
}

/// Write one page at each of `lpns` in order through `ftl`'s own `write_placed`, at the
/// times `clock` gives (the clock times each page's program where the FTL left it
/// untimed), prefetching each page's overwrite [`RUN_PREFETCH_AHEAD`] pages early.
/// Returns how many pages were written; on an error, the index of the page whose write or
/// completion failed (nothing after it was attempted) and the error.
#[inline(always)]
fn run_pages<F: Ftl + ?Sized, C: RunClock>(
    ftl: &mut F,
    flash: &mut Flash,
    lpns: &[u64],
    stream: StreamId,
    first_tag: u64,
    clock: &mut C,
) -> Result<usize, (usize, SsdError)> {
    run_pages_with(ftl, flash, lpns, stream, first_tag, clock, |f, fl, w| {
        f.write_placed(fl, w)
    })
}

/// [`run_pages`] with each page written by `write` (what `write_placed` does, in a form a
/// scheme fixes for the run: the page FTL's victim groups).
#[inline(always)]
pub(crate) fn run_pages_with<F: Ftl + ?Sized, C: RunClock>(
    ftl: &mut F,
    flash: &mut Flash,
    lpns: &[u64],
    stream: StreamId,
    first_tag: u64,
    clock: &mut C,
    mut write: impl FnMut(&mut F, &mut Flash, HostWrite) -> Result<Placed, SsdError>,
) -> Result<usize, (usize, SsdError)> {
    for (i, &lpn) in lpns.iter().enumerate() {
        if let Some(&ahead) = lpns.get(i + RUN_PREFETCH_AHEAD) {
            ftl.prefetch_overwrite(Lpn(ahead));
        }
        let w = HostWrite {
            lpn: Lpn(lpn),
            stream,
            data: PageWrite::tag(first_tag + i as u64),
            now: clock.issue(),
        };
        let placed = write(ftl, flash, w).map_err(|e| (i, e))?;
        clock.complete(flash, placed).map_err(|e| (i, e))?;
    }
    Ok(lpns.len())
}
