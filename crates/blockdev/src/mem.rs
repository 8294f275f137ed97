//! `MemDevice`: pages in RAM, zero cost, for tests and as a reference model.

use crate::{
    check_extent, submit_all, BlockDevice, ClockKind, DevError, DevStats, Io, PageNo, WriteHint,
};

#[derive(Clone, Debug)]
pub struct MemDevice {
    page_bytes: usize,
    capacity_pages: u64,
    data: Vec<u8>,
    stats: DevStats,
    /// Fail the I/O that touches this page (fault injection for tests).
    pub fail_page: Option<PageNo>,
}

impl MemDevice {
    pub fn new(page_bytes: usize, capacity_pages: u64) -> MemDevice {
        MemDevice {
            page_bytes,
            capacity_pages,
            data: vec![0; page_bytes * capacity_pages as usize],
            stats: DevStats::default(),
            fail_page: None,
        }
    }

    /// A device holding `data` (a whole number of pages), e.g. a crash test's durable image.
    pub fn from_bytes(page_bytes: usize, data: Vec<u8>) -> MemDevice {
        assert!(
            page_bytes > 0 && data.len().is_multiple_of(page_bytes),
            "whole pages"
        );
        MemDevice {
            page_bytes,
            capacity_pages: (data.len() / page_bytes) as u64,
            data,
            stats: DevStats::default(),
            fail_page: None,
        }
    }

    /// The device's bytes.
    pub fn bytes(&self) -> &[u8] {
        &self.data
    }

    fn range(&self, page: PageNo, len: usize) -> Result<std::ops::Range<usize>, DevError> {
        let pages = check_extent(page, len, self.page_bytes, self.capacity_pages)?;
        if let Some(f) = self.fail_page {
            if (page..page + pages).contains(&f) {
                return Err(DevError::Injected { page: f });
            }
        }
        let start = page as usize * self.page_bytes;
        Ok(start..start + len)
    }
}

impl BlockDevice for MemDevice {
    fn page_bytes(&self) -> usize {
        self.page_bytes
    }
    fn capacity_pages(&self) -> u64 {
        self.capacity_pages
    }
    fn read(&mut self, page: PageNo, buf: &mut [u8]) -> Result<(), DevError> {
        let r = self.range(page, buf.len())?;
        buf.copy_from_slice(&self.data[r]);
        self.stats.read_ios += 1;
        self.stats.pages_read += (buf.len() / self.page_bytes) as u64;
        Ok(())
    }
    fn write(&mut self, page: PageNo, buf: &[u8], _hint: WriteHint) -> Result<(), DevError> {
        let r = self.range(page, buf.len())?;
        self.data[r].copy_from_slice(buf);
        self.stats.write_ios += 1;
        self.stats.pages_written += (buf.len() / self.page_bytes) as u64;
        Ok(())
    }
    fn submit(&mut self, batch: &mut [Io<'_>]) -> Result<(), DevError> {
        self.stats.batches += 1;
        submit_all(batch.iter_mut(), |io| match io {
            Io::Read { page, buf } => self.read(*page, buf),
            Io::Write { page, buf, hint } => self.write(*page, buf, *hint),
        })
    }
    fn trim(&mut self, page: PageNo, pages: u64) -> Result<(), DevError> {
        let r = self.range(page, pages as usize * self.page_bytes)?;
        self.data[r].fill(0);
        self.stats.trims += 1;
        Ok(())
    }
    fn flush(&mut self) -> Result<(), DevError> {
        self.stats.flushes += 1;
        Ok(())
    }
    fn now_ns(&self) -> u64 {
        0
    }
    fn clock_kind(&self) -> ClockKind {
        ClockKind::Simulated
    }
    fn stats(&self) -> DevStats {
        self.stats
    }
}
