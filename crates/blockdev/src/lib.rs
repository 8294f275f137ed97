//! # blockdev — the `BlockDevice` trait and its devices
//!
//! Model: a device is an array of `capacity_pages` pages of `page_bytes` bytes. Reads and writes
//! move whole, contiguous pages; [`BlockDevice::submit`] puts a batch of I/Os in flight at once
//! (io_uring on files, overlapping dies/channels on the simulated SSD) and returns when all are
//! done; every write carries a [`WriteHint`]. A device's clock ([`BlockDevice::now_ns`]) is wall
//! time on a real file and virtual time on a simulated device; experiments say which applies.
//!
//! Devices: `FileDevice` (O_DIRECT + io_uring), `SimDevice` (the simulated SSD, data-carrying),
//! `HddModel` (seek + rotation), `CrashDevice<D>` (wraps any device; durable image; power cuts),
//! [`MemDevice`] (RAM, zero cost, for tests), and [`Partition`]s of a [`SharedDevice`] (several
//! users, e.g. one store per DB file, on one device and its streams; one
//! [`policy::streams::StreamAssignment`] assigns the streams of all of them in one place).
//!
//! Invariants: a read returns exactly the bytes of the last completed write of each page (or
//! zeros for a page never written or trimmed); after `flush` returns, every completed write is durable.

mod crash;
mod error;
mod extents;
mod file;
mod hdd;
mod lock;
pub mod mballoc;
mod mem;
mod page_buf;
mod partition;
pub mod placement;
mod sim;

use policy::streams::{DataType, WriteClass};

pub use crash::{CrashDevice, CrashHandle};
pub use error::DevError;
pub use extents::{ChunkGoal, Extents, Segment};
pub use file::{FileDevice, FileOptions, RingSetup, WriteLife, SQPOLL_IDLE_MS};
pub use hdd::{HddConfig, HddModel};
pub use lock::Lock;
pub use mem::MemDevice;
pub use page_buf::{anon_huge_kib, huge_pages, set_huge_pages, PageBuf};
pub use partition::{Partition, SharedDevice};
pub use placement::PlacementSupport;
pub use sim::SimDevice;

/// Reads kept in flight across calls, so a caller can start the next reads before it uses the
/// ones done and the device's queue never drains between them (a file through io_uring: fio's
/// `--iodepth` over a whole scan). Each read owns its buffer ([`PageBuf`]) while in flight and
/// hands it back when finished, so no borrow outlives a call.
///
/// Contract: tickets count up by one per [`ReadStream::read_start`] over the device's life;
/// reads are issued in ticket order, at most `depth` in flight. After the first error no read
/// is issued any more: [`ReadStream::read_finish`] then waits for those in flight, hands back
/// EVERY buffer it holds (of any ticket) and returns that error. Other I/O on the device first
/// waits for the reads in flight (it shares their queue); their results are kept.
pub trait ReadStream {
    /// Start reading `page` into `buf` (whole pages, as [`BlockDevice::read`]); the read is
    /// issued at once if fewer than `depth` are in flight, else as earlier ones complete.
    /// Returns its ticket. An error (e.g. a page out of range) shows at `read_finish`.
    fn read_start(&mut self, page: PageNo, buf: PageBuf, depth: usize) -> u64;
    /// Take the completions that arrived and issue the reads waiting for their turn; never
    /// waits for the device.
    fn read_poll(&mut self);
    /// Wait until every read with a ticket below `until` completed and hand their buffers to
    /// `out` as (ticket, buffer), in ticket order (see the trait's contract for errors).
    fn read_finish(&mut self, until: u64, out: &mut Vec<(u64, PageBuf)>) -> Result<(), DevError>;
}

/// Page number on a block device (in units of the device's `page_bytes`).
pub type PageNo = u64;

/// What kind of time a device's clock measures.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ClockKind {
    /// Wall-clock time of real I/O.
    Wall,
    /// Virtual time of a simulated device.
    Simulated,
}

impl ClockKind {
    pub fn name(self) -> &'static str {
        match self {
            ClockKind::Wall => "wall",
            ClockKind::Simulated => "simulated",
        }
    }
}

/// The stream of a write and what it is, passed to devices that place data by it
/// (multi-stream): the simulated SSD places by `stream`; a shared device's stream assignment
/// chooses `stream` from `class`; a real file takes `life`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct WriteHint {
    pub stream: u16,
    /// What the write is (a store's page: DB file and data type; `None`: not said).
    pub class: Option<WriteClass>,
    /// The write-life hint a real file is given for this write (`None`: leave the file's hint
    /// as it is). Simulated devices place data by `stream` only.
    pub life: Option<WriteLife>,
}

impl WriteHint {
    pub const NONE: WriteHint = WriteHint {
        stream: 0,
        class: None,
        life: None,
    };
    pub fn stream(stream: u16) -> WriteHint {
        WriteHint {
            stream,
            ..WriteHint::NONE
        }
    }
    /// A write of `class` on `stream`, with its data type's write life for real files.
    pub fn classed(stream: u16, class: WriteClass) -> WriteHint {
        WriteHint {
            stream,
            class: Some(class),
            life: Some(write_life(class.data_type)),
        }
    }
    /// This hint with a write life for real files.
    pub fn with_life(self, life: WriteLife) -> WriteHint {
        WriteHint {
            life: Some(life),
            ..self
        }
    }
}

/// The Linux write-life hint of a data type, ordered by P5's measured lifetimes (superblock
/// shortest, data pages longest).
pub fn write_life(t: DataType) -> WriteLife {
    match t {
        DataType::Superblock => WriteLife::Short,
        DataType::Header => WriteLife::Medium,
        DataType::Index => WriteLife::Long,
        DataType::Data => WriteLife::Extreme,
    }
}

/// One I/O of a batch.
#[derive(Debug)]
pub enum Io<'a> {
    Read {
        page: PageNo,
        buf: &'a mut [u8],
    },
    Write {
        page: PageNo,
        buf: &'a [u8],
        hint: WriteHint,
    },
}

/// Counters every device keeps.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct DevStats {
    pub read_ios: u64,
    pub write_ios: u64,
    pub pages_read: u64,
    pub pages_written: u64,
    pub batches: u64,
    pub trims: u64,
    pub flushes: u64,
}

pub trait BlockDevice {
    fn page_bytes(&self) -> usize;
    fn capacity_pages(&self) -> u64;
    /// Read `buf.len() / page_bytes` contiguous pages from `page`.
    fn read(&mut self, page: PageNo, buf: &mut [u8]) -> Result<(), DevError>;
    /// Write `buf.len() / page_bytes` contiguous pages at `page`.
    fn write(&mut self, page: PageNo, buf: &[u8], hint: WriteHint) -> Result<(), DevError>;
    /// Put every I/O of `batch` in flight at once; return when all are complete.
    /// On error, the first failing I/O's error is returned after all others completed.
    fn submit(&mut self, batch: &mut [Io<'_>]) -> Result<(), DevError>;
    /// Read one page at each page `pages` yields, keeping up to `depth` reads in flight (a new
    /// one issued as each completes, as fio's `iodepth`), the data discarded; returns the reads
    /// done. A device read rate at depth `depth` is measured through this (a ceiling for the
    /// batched scans). Default: batches of `depth` through [`BlockDevice::submit`] (each batch
    /// awaited before the next: the simulated devices have no queue that outlives a batch).
    fn read_queued(
        &mut self,
        pages: &mut dyn Iterator<Item = PageNo>,
        depth: usize,
    ) -> Result<u64, DevError> {
        read_in_batches(self, pages, depth)
    }
    /// Read each `(page, buf)` of `reads` (`buf` whole pages), keeping up to `depth` reads in
    /// flight. On a device that [`BlockDevice::pipelines_reads`] a new read is issued as each
    /// completes and completions are taken as they arrive (fio's `iodepth`), so no read waits
    /// for a batch's slowest. On error no further read is issued; the first error is returned
    /// once the reads in flight completed, and the buffers of reads not done are unspecified.
    /// Default: batches of `depth` through [`BlockDevice::submit`], each awaited.
    fn read_pipelined(
        &mut self,
        reads: &mut [(PageNo, &mut [u8])],
        depth: usize,
    ) -> Result<(), DevError> {
        for chunk in reads.chunks_mut(depth.max(1)) {
            let mut batch: Vec<Io> = chunk
                .iter_mut()
                .map(|(page, buf)| Io::Read { page: *page, buf })
                .collect();
            self.submit(&mut batch)?;
        }
        Ok(())
    }
    /// Whether [`BlockDevice::read_pipelined`] keeps its queue full across the whole call
    /// (true: a file through io_uring) or awaits batches of `depth` (false: the default, the
    /// simulated devices, whose queues do not outlive a batch).
    fn pipelines_reads(&self) -> bool {
        false
    }
    /// Reads that stay in flight past the call that started them ([`ReadStream`]), on a device
    /// whose queue outlives a call (a file through io_uring); `None` (the default) elsewhere.
    fn read_stream(&mut self) -> Option<&mut dyn ReadStream> {
        None
    }
    /// Tell the device `pages` pages from `page` no longer hold data.
    fn trim(&mut self, page: PageNo, pages: u64) -> Result<(), DevError>;
    /// Make every completed write durable.
    fn flush(&mut self) -> Result<(), DevError>;
    /// The device's clock in nanoseconds (see [`BlockDevice::clock_kind`]).
    fn now_ns(&self) -> u64;
    fn clock_kind(&self) -> ClockKind;
    fn stats(&self) -> DevStats;
    /// What a real device offers for data placement (write-life hints, write streams), for a
    /// report's `config`; `None` for devices that place by `WriteHint::stream` themselves.
    fn placement(&self) -> Option<PlacementSupport> {
        None
    }
}

/// Run `each` on every item of a batch, in order, and return the first error only after all
/// have run: the contract of [`BlockDevice::submit`] ("the first failing I/O's error after all
/// others completed"), held here once for every device. Items are I/Os, waves of I/Os, or
/// indices into a batch in service order.
pub fn submit_all<T>(
    items: impl IntoIterator<Item = T>,
    mut each: impl FnMut(T) -> Result<(), DevError>,
) -> Result<(), DevError> {
    let mut first_err = None;
    for item in items {
        if let Err(e) = each(item) {
            first_err.get_or_insert(e);
        }
    }
    first_err.map_or(Ok(()), Err)
}

/// Read one page at each page `pages` yields in batches of `depth` through
/// [`BlockDevice::submit`], each awaited before the next (the batched scan's pattern, and the
/// default [`BlockDevice::read_queued`]), the data discarded; returns the reads done.
pub fn read_in_batches<D: BlockDevice + ?Sized>(
    dev: &mut D,
    pages: &mut dyn Iterator<Item = PageNo>,
    depth: usize,
) -> Result<u64, DevError> {
    let mut bufs = vec![vec![0u8; dev.page_bytes()]; depth.max(1)];
    let mut done = 0;
    loop {
        let mut batch: Vec<Io> = bufs
            .iter_mut()
            .zip(&mut *pages)
            .map(|(buf, page)| Io::Read { page, buf })
            .collect();
        if batch.is_empty() {
            return Ok(done);
        }
        dev.submit(&mut batch)?;
        done += batch.len() as u64;
    }
}

/// Check that `len` bytes at `page` are whole pages inside a device; returns the page count.
pub fn check_extent(
    page: PageNo,
    len: usize,
    page_bytes: usize,
    capacity_pages: u64,
) -> Result<u64, DevError> {
    if len == 0 || !len.is_multiple_of(page_bytes) {
        return Err(DevError::Misaligned { len, page_bytes });
    }
    let pages = (len / page_bytes) as u64;
    if page
        .checked_add(pages)
        .is_none_or(|end| end > capacity_pages)
    {
        return Err(DevError::OutOfRange {
            page,
            pages,
            capacity_pages,
        });
    }
    Ok(pages)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn write_lives_follow_p5s_lifetimes_and_differ_per_type() {
        let lives: Vec<u64> = DataType::ALL
            .iter()
            .map(|&t| write_life(t) as u64)
            .collect();
        assert!(lives.windows(2).all(|w| w[0] < w[1]), "{lives:?}");
        for t in DataType::ALL {
            let h = WriteHint::classed(0, WriteClass::new(0, t));
            assert_ne!(h, WriteHint::NONE);
            assert_eq!(h.life, Some(write_life(t)));
        }
    }

    #[test]
    fn submit_all_runs_every_item_and_returns_the_first_error() {
        let mut ran = Vec::new();
        let r = submit_all(0..5u64, |i| {
            ran.push(i);
            if i % 2 == 1 {
                Err(DevError::Injected { page: i })
            } else {
                Ok(())
            }
        });
        assert_eq!(ran, [0, 1, 2, 3, 4]);
        assert!(matches!(r, Err(DevError::Injected { page: 1 })));
        assert!(submit_all(0..3u64, |_| Ok(())).is_ok());
    }
}
