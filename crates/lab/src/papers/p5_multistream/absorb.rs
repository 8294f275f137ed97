//! A drive's DRAM write buffer that absorbs rewrites (`Plan::drive_buffer_pages`, a probe):
//! the last `pages` host pages written wait in the buffer before they are programmed, and a
//! host write of a page still there replaces it, so the older copy never reaches flash. A
//! drive with power-loss protection (the PM953 has it) may hold writes so and ignore flushes.
//! Not in P5's text: a hypothesis (a P5 superblock page is rewritten every ~752 writes, ~3 MB).
//! With 0 pages every call passes straight to the simulated SSD.
//!
//! Counters: host pages absorbed (in all and per stream of the write), which the run adds to
//! the SSD's host pages, since the SSD never saw them. Invariant: the buffer holds at most
//! `pages` pages, each the newest data of its logical page.

use blockdev::{
    submit_all, BlockDevice, ClockKind, DevError, DevStats, Io, PageNo, SimDevice, WriteHint,
};
use std::collections::{HashMap, VecDeque};

pub struct Absorb {
    inner: SimDevice,
    pages: usize,
    /// (page, generation) in write order; an entry is current while `held` has that generation.
    order: VecDeque<(PageNo, u64)>,
    held: HashMap<PageNo, (u64, Vec<u8>, WriteHint)>,
    generation: u64,
    absorbed: u64,
    absorbed_by_stream: Vec<u64>,
}

impl Absorb {
    pub fn new(inner: SimDevice, pages: usize) -> Absorb {
        Absorb {
            inner,
            pages,
            order: VecDeque::new(),
            held: HashMap::new(),
            generation: 0,
            absorbed: 0,
            absorbed_by_stream: Vec::new(),
        }
    }

    pub fn ssd(&self) -> &ssd::Ssd {
        self.inner.ssd()
    }

    /// Host pages absorbed so far, in all and per stream.
    pub fn absorbed(&self) -> (u64, &[u64]) {
        (self.absorbed, &self.absorbed_by_stream)
    }

    fn put(&mut self, page: PageNo, data: &[u8], hint: WriteHint) -> Result<(), DevError> {
        self.generation += 1;
        let g = self.generation;
        if self.held.insert(page, (g, data.to_vec(), hint)).is_some() {
            self.absorbed += 1;
            let s = hint.stream as usize;
            if self.absorbed_by_stream.len() <= s {
                self.absorbed_by_stream.resize(s + 1, 0);
            }
            self.absorbed_by_stream[s] += 1;
        }
        self.order.push_back((page, g));
        while self.held.len() > self.pages {
            let (p, g) = self.order.pop_front().expect("a held page is in the order");
            if self.held.get(&p).is_some_and(|h| h.0 == g) {
                let (_, d, h) = self.held.remove(&p).expect("held");
                self.inner.write(p, &d, h)?;
            }
        }
        assert!(
            self.held.len() <= self.pages,
            "the buffer holds at most its pages"
        );
        Ok(())
    }
}

impl BlockDevice for Absorb {
    fn page_bytes(&self) -> usize {
        self.inner.page_bytes()
    }
    fn capacity_pages(&self) -> u64 {
        self.inner.capacity_pages()
    }
    fn read(&mut self, page: PageNo, buf: &mut [u8]) -> Result<(), DevError> {
        if self.pages == 0 {
            return self.inner.read(page, buf);
        }
        let pb = self.page_bytes();
        for (i, b) in buf.chunks_mut(pb).enumerate() {
            let p = page + i as u64;
            match self.held.get(&p) {
                Some((_, d, _)) => b.copy_from_slice(d),
                None => self.inner.read(p, b)?,
            }
        }
        Ok(())
    }
    fn write(&mut self, page: PageNo, buf: &[u8], hint: WriteHint) -> Result<(), DevError> {
        if self.pages == 0 {
            return self.inner.write(page, buf, hint);
        }
        let pb = self.page_bytes();
        for (i, d) in buf.chunks(pb).enumerate() {
            self.put(page + i as u64, d, hint)?;
        }
        Ok(())
    }
    fn submit(&mut self, batch: &mut [Io<'_>]) -> Result<(), DevError> {
        if self.pages == 0 {
            return self.inner.submit(batch);
        }
        submit_all(batch.iter_mut(), |io| match io {
            Io::Read { page, buf } => self.read(*page, buf),
            Io::Write { page, buf, hint } => self.write(*page, buf, *hint),
        })
    }
    fn trim(&mut self, page: PageNo, pages: u64) -> Result<(), DevError> {
        // A trimmed page still in the buffer is never programmed.
        if pages > self.held.len() as u64 {
            self.held.retain(|p, _| !(page..page + pages).contains(p));
        } else {
            for p in page..page + pages {
                self.held.remove(&p);
            }
        }
        self.inner.trim(page, pages)
    }
    fn flush(&mut self) -> Result<(), DevError> {
        self.inner.flush()
    }
    fn now_ns(&self) -> u64 {
        self.inner.now_ns()
    }
    fn clock_kind(&self) -> ClockKind {
        self.inner.clock_kind()
    }
    fn stats(&self) -> DevStats {
        self.inner.stats()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_rewrite_of_a_buffered_page_never_reaches_flash() {
        let dev = SimDevice::preset("pm953", 64 << 20).unwrap();
        let pb = dev.page_bytes();
        let mut a = Absorb::new(dev, 4);
        let hint = WriteHint {
            stream: 2,
            ..WriteHint::NONE
        };
        a.write(0, &vec![1u8; pb], hint).unwrap();
        a.write(0, &vec![2u8; pb], hint).unwrap(); // absorbed
        let mut buf = vec![0u8; pb];
        a.read(0, &mut buf).unwrap();
        assert!(buf.iter().all(|&x| x == 2), "a read sees the buffered page");
        for p in 1..=8 {
            a.write(p, &vec![3u8; pb], WriteHint::NONE).unwrap();
        }
        // Pages 0..=4 left the buffer (it holds 5..=8): five programs for ten host pages less
        // the one absorbed and the four still held.
        assert_eq!(a.absorbed().0, 1);
        assert_eq!(a.absorbed().1[2], 1, "counted on the write's stream");
        assert_eq!(a.ssd().stats().host_pages_written, 5);
        // Without a buffer every page is programmed.
        let mut b = Absorb::new(SimDevice::preset("pm953", 64 << 20).unwrap(), 0);
        b.write(0, &vec![1u8; pb], hint).unwrap();
        b.write(0, &vec![2u8; pb], hint).unwrap();
        assert_eq!((b.absorbed().0, b.ssd().stats().host_pages_written), (0, 2));
    }
}
