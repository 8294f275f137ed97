//! `SimDevice`: the simulated SSD as a block device, data-carrying, on its virtual clock.
//!
//! Model: one device page is one SSD page. A single read or write is issued at the device's
//! current time and the clock advances to its completion (a queue-depth-1 host); a batch
//! ([`BlockDevice::submit`]) issues every I/O at the same time, so they overlap on the SSD's
//! dies and channels, and the clock advances to the last completion. Write hints select SSD
//! streams (`hint.stream % streams`). `flush` is free: the simulated SSD has no volatile cache.

use crate::{check_extent, BlockDevice, ClockKind, DevError, DevStats, Io, PageNo, WriteHint};
use ssd::{DataMode, Lpn, SimTime, Ssd, SsdConfig, StreamId};

pub struct SimDevice {
    ssd: Ssd,
    now: SimTime,
    stats: DevStats,
}

impl SimDevice {
    /// A device over `cfg`, switched to payload mode (the device keeps the bytes).
    pub fn new(mut cfg: SsdConfig) -> Result<SimDevice, DevError> {
        cfg.ftl.data = DataMode::Payloads;
        Ok(SimDevice {
            ssd: Ssd::new(cfg)?,
            now: SimTime::ZERO,
            stats: DevStats::default(),
        })
    }

    /// A shipped preset resized to at least `capacity_bytes` of logical space.
    pub fn preset(name: &str, capacity_bytes: u64) -> Result<SimDevice, DevError> {
        SimDevice::new(SsdConfig::preset(name)?.with_logical_capacity(capacity_bytes)?)
    }

    pub fn ssd(&self) -> &Ssd {
        &self.ssd
    }

    fn check(&self, page: PageNo, len: usize) -> Result<u64, DevError> {
        check_extent(page, len, self.page_bytes(), self.capacity_pages())
    }

    fn stream(&self, hint: WriteHint) -> StreamId {
        StreamId(hint.stream % self.ssd.config().ftl.streams)
    }

    fn read_at(&mut self, page: PageNo, buf: &mut [u8], at: SimTime) -> Result<SimTime, DevError> {
        let pages = self.check(page, buf.len())?;
        self.stats.read_ios += 1;
        self.stats.pages_read += pages;
        Ok(self.ssd.read_data(Lpn(page), buf, None, at)?)
    }

    fn write_at(
        &mut self,
        page: PageNo,
        buf: &[u8],
        hint: WriteHint,
        at: SimTime,
    ) -> Result<SimTime, DevError> {
        let pages = self.check(page, buf.len())?;
        self.stats.write_ios += 1;
        self.stats.pages_written += pages;
        let stream = self.stream(hint);
        Ok(self.ssd.write_data(Lpn(page), buf, stream, at)?)
    }
}

impl BlockDevice for SimDevice {
    fn page_bytes(&self) -> usize {
        self.ssd.page_bytes()
    }
    fn capacity_pages(&self) -> u64 {
        self.ssd.logical_pages()
    }
    fn read(&mut self, page: PageNo, buf: &mut [u8]) -> Result<(), DevError> {
        self.now = self.read_at(page, buf, self.now)?;
        Ok(())
    }
    fn write(&mut self, page: PageNo, buf: &[u8], hint: WriteHint) -> Result<(), DevError> {
        self.now = self.write_at(page, buf, hint, self.now)?;
        Ok(())
    }
    fn submit(&mut self, batch: &mut [Io<'_>]) -> Result<(), DevError> {
        self.stats.batches += 1;
        let start = self.now;
        let mut end = start;
        let mut first_err = None;
        for io in batch.iter_mut() {
            let r = match io {
                Io::Read { page, buf } => self.read_at(*page, buf, start),
                Io::Write { page, buf, hint } => self.write_at(*page, buf, *hint, start),
            };
            match r {
                Ok(t) => end = end.max(t),
                Err(e) => {
                    first_err.get_or_insert(e);
                }
            }
        }
        self.now = end;
        first_err.map_or(Ok(()), Err)
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
            self.now = self.ssd.trim(Lpn(at), n as u32, self.now)?;
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
        self.now.0
    }
    fn clock_kind(&self) -> ClockKind {
        ClockKind::Simulated
    }
    fn stats(&self) -> DevStats {
        self.stats
    }
}
