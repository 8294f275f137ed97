//! `CrashDevice`: a crash-testing wrapper that keeps a volatile image (what reads see) and a
//! durable image (what survives a power cut).
//!
//! Model: writes land in the volatile image and are pending until `flush` copies them to the
//! durable image. [`CrashHandle::cut_power_after`] arms a cut: the n-th I/O after arming fails
//! with [`DevError::PowerCut`], and so does everything after it. At the cut each pending page
//! is independently dropped (the durable image keeps its old bytes), kept, or — when tearing
//! is on — torn: only a prefix of its 512-byte sectors reaches the durable image. Choices come
//! from a seeded ChaCha8 generator. [`CrashHandle::durable_image`] gives the device as it is
//! when power returns. The handle is shared with the device so a test can arm and inspect
//! it while an engine owns the device.

use crate::{
    check_extent, BlockDevice, ClockKind, DevError, DevStats, Io, MemDevice, PageNo, WriteHint,
};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use std::cell::RefCell;
use std::collections::BTreeSet;
use std::rc::Rc;

const SECTOR: usize = 512;

struct State {
    page_bytes: usize,
    volatile: Vec<u8>,
    durable: Vec<u8>,
    pending: BTreeSet<PageNo>,
    countdown: Option<u64>,
    cut: bool,
    tear: bool,
    rng: ChaCha8Rng,
    stats: DevStats,
}

pub struct CrashDevice {
    s: Rc<RefCell<State>>,
}

/// Arms, inspects and recovers a [`CrashDevice`].
#[derive(Clone)]
pub struct CrashHandle {
    s: Rc<RefCell<State>>,
}

impl CrashDevice {
    /// A blank device; `seed` decides the fate of unflushed writes at a cut.
    pub fn new(page_bytes: usize, capacity_pages: u64, seed: u64) -> (CrashDevice, CrashHandle) {
        CrashDevice::from_image(MemDevice::new(page_bytes, capacity_pages), seed)
    }

    /// A device whose volatile and durable images both start as `image`.
    pub fn from_image(image: MemDevice, seed: u64) -> (CrashDevice, CrashHandle) {
        let bytes = image.bytes().to_vec();
        let s = Rc::new(RefCell::new(State {
            page_bytes: image.page_bytes(),
            volatile: bytes.clone(),
            durable: bytes,
            pending: BTreeSet::new(),
            countdown: None,
            cut: false,
            tear: true,
            rng: ChaCha8Rng::seed_from_u64(seed),
            stats: DevStats::default(),
        }));
        (CrashDevice { s: s.clone() }, CrashHandle { s })
    }
}

impl CrashHandle {
    /// Cut power at the `n`-th I/O from now (0: the next one).
    pub fn cut_power_after(&self, n: u64) {
        self.s.borrow_mut().countdown = Some(n);
    }
    /// Whether unflushed pages may be torn at a cut (default true).
    pub fn set_tearing(&self, on: bool) {
        self.s.borrow_mut().tear = on;
    }
    pub fn is_cut(&self) -> bool {
        self.s.borrow().cut
    }
    /// Cut power now.
    pub fn cut_now(&self) {
        self.s.borrow_mut().cut();
    }
    /// The device after power returns: the durable image.
    pub fn durable_image(&self) -> MemDevice {
        let s = self.s.borrow();
        MemDevice::from_bytes(s.page_bytes, s.durable.clone())
    }
}

impl State {
    fn cut(&mut self) {
        if self.cut {
            return;
        }
        self.cut = true;
        let pb = self.page_bytes;
        for page in std::mem::take(&mut self.pending) {
            let r = page as usize * pb..(page as usize + 1) * pb;
            match self.rng.gen_range(0..3) {
                0 => {}
                1 => self.durable[r.clone()].copy_from_slice(&self.volatile[r]),
                _ if self.tear => {
                    let sectors = self.rng.gen_range(1..(pb / SECTOR).max(2));
                    let n = sectors * SECTOR;
                    self.durable[r.start..r.start + n]
                        .copy_from_slice(&self.volatile[r.start..r.start + n]);
                }
                _ => self.durable[r.clone()].copy_from_slice(&self.volatile[r]),
            }
        }
    }

    /// Count one I/O against an armed cut; Err once power is gone.
    fn tick(&mut self) -> Result<(), DevError> {
        if self.cut {
            return Err(DevError::PowerCut);
        }
        match self.countdown {
            Some(0) => {
                self.cut();
                Err(DevError::PowerCut)
            }
            Some(n) => {
                self.countdown = Some(n - 1);
                Ok(())
            }
            None => Ok(()),
        }
    }

    fn range(&self, page: PageNo, len: usize) -> Result<std::ops::Range<usize>, DevError> {
        let cap = (self.volatile.len() / self.page_bytes) as u64;
        check_extent(page, len, self.page_bytes, cap)?;
        let start = page as usize * self.page_bytes;
        Ok(start..start + len)
    }
}

impl BlockDevice for CrashDevice {
    fn page_bytes(&self) -> usize {
        self.s.borrow().page_bytes
    }
    fn capacity_pages(&self) -> u64 {
        let s = self.s.borrow();
        (s.volatile.len() / s.page_bytes) as u64
    }
    fn read(&mut self, page: PageNo, buf: &mut [u8]) -> Result<(), DevError> {
        let mut s = self.s.borrow_mut();
        let r = s.range(page, buf.len())?;
        s.tick()?;
        buf.copy_from_slice(&s.volatile[r]);
        s.stats.read_ios += 1;
        s.stats.pages_read += (buf.len() / s.page_bytes) as u64;
        Ok(())
    }
    fn write(&mut self, page: PageNo, buf: &[u8], _hint: WriteHint) -> Result<(), DevError> {
        let mut s = self.s.borrow_mut();
        let r = s.range(page, buf.len())?;
        s.tick()?;
        s.volatile[r].copy_from_slice(buf);
        let pages = (buf.len() / s.page_bytes) as u64;
        s.pending.extend(page..page + pages);
        s.stats.write_ios += 1;
        s.stats.pages_written += pages;
        Ok(())
    }
    fn submit(&mut self, batch: &mut [Io<'_>]) -> Result<(), DevError> {
        self.s.borrow_mut().stats.batches += 1;
        let mut first_err = None;
        for io in batch.iter_mut() {
            let r = match io {
                Io::Read { page, buf } => self.read(*page, buf),
                Io::Write { page, buf, hint } => self.write(*page, buf, *hint),
            };
            if let Err(e) = r {
                first_err.get_or_insert(e);
            }
        }
        first_err.map_or(Ok(()), Err)
    }
    fn trim(&mut self, page: PageNo, pages: u64) -> Result<(), DevError> {
        let mut s = self.s.borrow_mut();
        let r = s.range(page, pages as usize * s.page_bytes)?;
        s.tick()?;
        s.volatile[r].fill(0);
        s.pending.extend(page..page + pages);
        s.stats.trims += 1;
        Ok(())
    }
    fn flush(&mut self) -> Result<(), DevError> {
        let mut s = self.s.borrow_mut();
        s.tick()?;
        let pb = s.page_bytes;
        for page in std::mem::take(&mut s.pending) {
            let r = page as usize * pb..(page as usize + 1) * pb;
            let bytes = s.volatile[r.clone()].to_vec();
            s.durable[r].copy_from_slice(&bytes);
        }
        s.stats.flushes += 1;
        Ok(())
    }
    fn now_ns(&self) -> u64 {
        0
    }
    fn clock_kind(&self) -> ClockKind {
        ClockKind::Simulated
    }
    fn stats(&self) -> DevStats {
        self.s.borrow().stats
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn flushed_data_survives_and_reads_fail_after_the_cut() {
        let (mut d, h) = CrashDevice::new(4096, 16, 1);
        d.write(0, &[1u8; 4096], WriteHint::NONE).unwrap();
        d.flush().unwrap();
        d.write(1, &[2u8; 4096], WriteHint::NONE).unwrap();
        h.cut_power_after(0);
        assert!(matches!(
            d.write(2, &[3u8; 4096], WriteHint::NONE),
            Err(DevError::PowerCut)
        ));
        assert!(matches!(
            d.read(0, &mut [0u8; 4096]),
            Err(DevError::PowerCut)
        ));
        let mut img = h.durable_image();
        let mut buf = vec![0u8; 4096];
        img.read(0, &mut buf).unwrap();
        assert!(buf.iter().all(|&b| b == 1));
        img.read(2, &mut buf).unwrap();
        assert!(
            buf.iter().all(|&b| b == 0),
            "the write at the cut never happened"
        );
    }

    #[test]
    fn unflushed_pages_are_dropped_kept_or_torn() {
        let mut fates = [0; 3];
        for seed in 0..60 {
            let (mut d, h) = CrashDevice::new(4096, 4, seed);
            d.write(0, &[7u8; 4096], WriteHint::NONE).unwrap();
            h.cut_now();
            let mut buf = vec![0u8; 4096];
            h.durable_image().read(0, &mut buf).unwrap();
            let sevens = buf.iter().filter(|&&b| b == 7).count();
            fates[match sevens {
                0 => 0,
                4096 => 1,
                n => {
                    assert_eq!(n % 512, 0, "tears at sector boundaries");
                    2
                }
            }] += 1;
        }
        assert!(fates.iter().all(|&f| f > 5), "{fates:?}");
    }
}
