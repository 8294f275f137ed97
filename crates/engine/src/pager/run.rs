//! Contiguous runs of pages written with one device call per chunk (a log tail, a bulk load).

use super::Pager;
use crate::error::EngineError;

/// Stages pages for device pages `next..` and writes them as one run per `chunk_pages` (or
/// when asked). The staging buffer is kept between runs: a fresh one per run would cost page
/// faults on every write-out.
pub struct RunWriter {
    start: u64,
    pages: usize,
    chunk_pages: usize,
    page_bytes: usize,
    buf: Vec<u8>,
}

impl RunWriter {
    /// A writer of runs of at most `chunk_pages` pages (`usize::MAX`: only when asked).
    pub fn new(page_bytes: usize, chunk_pages: usize) -> RunWriter {
        assert!(page_bytes > 0, "pages of at least a byte");
        RunWriter {
            start: 0,
            pages: 0,
            chunk_pages: chunk_pages.max(1),
            page_bytes,
            buf: Vec::new(),
        }
    }

    /// Start the next run at device page `page` (nothing may be staged).
    pub fn start_at(&mut self, page: u64) {
        assert_eq!(self.pages, 0, "a run is still staged");
        self.start = page;
    }

    /// The device page the next staged page goes to.
    pub fn next_page(&self) -> u64 {
        self.start + self.pages as u64
    }

    /// The next page to fill (its old bytes are stale: fill or zero all of it); a full chunk
    /// is written out first.
    pub fn page_mut(&mut self, pager: &mut Pager) -> Result<&mut [u8], EngineError> {
        if self.pages == self.chunk_pages {
            self.write_out(pager)?;
        }
        assert!(self.pages < self.chunk_pages, "a run holds at most a chunk");
        assert_eq!(pager.page_bytes(), self.page_bytes, "the pager's page size");
        let pb = self.page_bytes;
        let end = (self.pages + 1) * pb;
        if self.buf.len() < end {
            self.buf.resize(end, 0);
        }
        self.pages += 1;
        Ok(&mut self.buf[end - pb..end])
    }

    /// Write the staged pages as one run; the next run continues after it.
    pub fn write_out(&mut self, pager: &mut Pager) -> Result<(), EngineError> {
        if self.pages > 0 {
            let n = self.pages;
            self.pages = 0;
            pager.write(self.start, &self.buf[..n * self.page_bytes])?;
            self.start += n as u64;
        }
        Ok(())
    }
}
