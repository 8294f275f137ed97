//! `SimDevice`: the simulated SSD as a block device, data-carrying, on its virtual clock.
//!
//! Model: one device page is one SSD page; the SSD is driven through its host port
//! (`ssd::HostPort`) at queue depth 1. A single read or write is issued at the device's
//! current time and the clock advances to its completion; a batch ([`BlockDevice::submit`],
//! one port batch) issues every I/O at the same time, so they overlap on the SSD's dies and
//! channels, and the clock advances to the last completion. Write hints select SSD
//! streams (`hint.stream % streams`). `flush` is free: the simulated SSD has no volatile cache.

use crate::{
    check_extent, submit_all, BlockDevice, ClockKind, DevError, DevStats, Io, PageNo, WriteHint,
};
use ssd::host::{Command, HostPort};
use ssd::{DataMode, Lpn, Ssd, SsdConfig, StreamId};

pub struct SimDevice {
    /// The host side: a depth-1 queue (one I/O, or one batch, at a time) and the clock.
    port: HostPort,
    stats: DevStats,
}

impl SimDevice {
    /// A device over `cfg`, switched to payload mode (the device keeps the bytes).
    pub fn new(mut cfg: SsdConfig) -> Result<SimDevice, DevError> {
        cfg.ftl.data = DataMode::Payloads;
        Ok(SimDevice {
            port: HostPort::new(Ssd::new(cfg)?, 1),
            stats: DevStats::default(),
        })
    }

    /// A shipped preset resized to at least `capacity_bytes` of logical space.
    pub fn preset(name: &str, capacity_bytes: u64) -> Result<SimDevice, DevError> {
        SimDevice::new(SsdConfig::preset(name)?.with_logical_capacity(capacity_bytes)?)
    }

    pub fn ssd(&self) -> &Ssd {
        self.port.ssd()
    }
}

/// The SSD stream of a write hint: hints beyond the device's streams wrap around.
fn stream(hint: WriteHint, streams: u16) -> StreamId {
    StreamId(hint.stream % streams)
}

/// One I/O as a port command, with its extent checked and counted in `stats`.
fn command<'a>(
    io: &'a mut Io<'_>,
    (page_bytes, capacity_pages, streams): (usize, u64, u16),
    stats: &mut DevStats,
) -> Result<Command<'a>, DevError> {
    Ok(match io {
        Io::Read { page, buf } => {
            let pages = check_extent(*page, buf.len(), page_bytes, capacity_pages)?;
            stats.read_ios += 1;
            stats.pages_read += pages;
            Command::ReadData {
                lpn: Lpn(*page),
                buf,
            }
        }
        Io::Write { page, buf, hint } => {
            let pages = check_extent(*page, buf.len(), page_bytes, capacity_pages)?;
            stats.write_ios += 1;
            stats.pages_written += pages;
            Command::WriteData {
                lpn: Lpn(*page),
                data: buf,
                stream: stream(*hint, streams),
            }
        }
    })
}

impl SimDevice {
    /// The device's shape as `command` needs it.
    fn shape(&self) -> (usize, u64, u16) {
        let streams = self.ssd().config().ftl.streams;
        (self.page_bytes(), self.capacity_pages(), streams)
    }

    /// One I/O alone through the port (issued when the previous one completed).
    fn one(&mut self, mut io: Io<'_>) -> Result<(), DevError> {
        let shape = self.shape();
        let cmd = command(&mut io, shape, &mut self.stats)?;
        self.port.submit(cmd, None)?;
        Ok(())
    }
}

impl BlockDevice for SimDevice {
    fn page_bytes(&self) -> usize {
        self.ssd().page_bytes()
    }
    fn capacity_pages(&self) -> u64 {
        self.ssd().logical_pages()
    }
    fn read(&mut self, page: PageNo, buf: &mut [u8]) -> Result<(), DevError> {
        self.one(Io::Read { page, buf })
    }
    fn write(&mut self, page: PageNo, buf: &[u8], hint: WriteHint) -> Result<(), DevError> {
        self.one(Io::Write { page, buf, hint })
    }
    fn submit(&mut self, batch: &mut [Io<'_>]) -> Result<(), DevError> {
        self.stats.batches += 1;
        let shape = self.shape();
        let stats = &mut self.stats;
        self.port.batch(|b| {
            submit_all(batch.iter_mut(), |io| {
                b.run(command(io, shape, stats)?)?;
                Ok(())
            })
        })
    }
    fn trim(&mut self, page: PageNo, pages: u64) -> Result<(), DevError> {
        check_extent(
            page,
            pages as usize * self.page_bytes(),
            self.page_bytes(),
            self.capacity_pages(),
        )?;
        self.stats.trims += 1;
        let mut left = pages;
        let mut at = page;
        while left > 0 {
            let n = left.min(u32::MAX as u64);
            let cmd = Command::Trim {
                lpn: Lpn(at),
                pages: n as u32,
            };
            self.port.submit(cmd, None)?;
            left -= n;
            at += n;
        }
        Ok(())
    }
    fn flush(&mut self) -> Result<(), DevError> {
        self.stats.flushes += 1;
        Ok(())
    }
    fn now_ns(&self) -> u64 {
        self.port.last_done().0
    }
    fn clock_kind(&self) -> ClockKind {
        ClockKind::Simulated
    }
    fn stats(&self) -> DevStats {
        self.stats
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn small() -> SimDevice {
        let mut cfg = SsdConfig::preset("mlc-sata-2010").expect("preset");
        cfg.geometry.channels = 4;
        cfg.geometry.dies_per_channel = 1;
        cfg.geometry.blocks_per_plane = 16;
        cfg.geometry.pages_per_block = 16;
        cfg.ftl.op = 0.7; // room for a host and a GC open block per stream on each die
        cfg.ftl.streams = 2;
        SimDevice::new(cfg).expect("small SSD")
    }

    fn fill(d: &mut SimDevice, pages: u64) {
        let pb = d.page_bytes();
        d.write(0, &vec![1u8; pb * pages as usize], WriteHint::NONE)
            .unwrap();
    }

    #[test]
    fn a_single_io_advances_the_clock_to_its_completion() {
        let mut d = small();
        assert_eq!((d.now_ns(), d.clock_kind()), (0, ClockKind::Simulated));
        fill(&mut d, 1);
        let after_write = d.now_ns();
        assert!(after_write > 0);
        let mut buf = vec![0u8; d.page_bytes()];
        d.read(0, &mut buf).unwrap();
        assert!(d.now_ns() > after_write);
        assert!(buf.iter().all(|&b| b == 1));
    }

    #[test]
    fn a_batch_overlaps_on_the_dies_and_single_ios_do_not() {
        let mut d = small();
        fill(&mut d, 8);
        let pb = d.page_bytes();
        let start = d.now_ns();
        let mut buf = vec![0u8; pb];
        for p in 0..8 {
            d.read(p, &mut buf).unwrap();
        }
        let serial = d.now_ns() - start;
        let mut bufs = vec![vec![0u8; pb]; 8];
        let mut batch: Vec<Io> = bufs
            .iter_mut()
            .enumerate()
            .map(|(p, buf)| Io::Read {
                page: p as u64,
                buf,
            })
            .collect();
        let start = d.now_ns();
        d.submit(&mut batch).unwrap();
        let batched = d.now_ns() - start;
        assert!(
            batched * 2 < serial,
            "8 reads over 4 dies: batched {batched} ns vs serial {serial} ns"
        );
        assert_eq!(d.stats().batches, 1);
        assert_eq!(d.stats().pages_read, 16);
    }

    #[test]
    fn hints_beyond_the_streams_wrap_around() {
        let streams = small().ssd().config().ftl.streams;
        assert_eq!(stream(WriteHint::stream(3), streams), StreamId(1));
        assert_eq!(stream(WriteHint::NONE, streams), StreamId(0));
    }

    #[test]
    fn out_of_range_ios_are_refused() {
        let mut d = small();
        let cap = d.capacity_pages();
        let mut buf = vec![0u8; d.page_bytes()];
        assert!(matches!(
            d.read(cap, &mut buf),
            Err(DevError::OutOfRange { .. })
        ));
        assert!(d.trim(cap - 1, 2).is_err());
    }

    #[test]
    fn presets_are_resized_and_unknown_ones_are_refused() {
        let d = SimDevice::preset("mlc-sata-2010", 1 << 30).expect("preset");
        assert!(d.capacity_pages() * d.page_bytes() as u64 >= 1 << 30);
        assert!(matches!(
            SimDevice::preset("no-such-ssd", 1 << 30),
            Err(DevError::SsdConfig(_))
        ));
    }
}
