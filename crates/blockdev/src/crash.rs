//! `CrashDevice<D>`: a crash-testing wrapper around any device `D`.
//!
//! Model: `D` is the volatile image — every I/O goes through to it, so reads see every
//! completed write and timing is `D`'s. The wrapper keeps the durable image (a [`MemDevice`]:
//! what survives a power cut) and the pending list of writes and trims since the last `flush`
//! (their bytes, page by page). `flush` flushes `D` and copies the pending pages into the durable
//! image. [`CrashHandle::cut_power_after`]`(n)` arms a cut: the n-th I/O from then on (1 = the
//! next; each I/O of a batch and each trim or flush counts) fails with [`DevError::PowerCut`],
//! and every I/O after it too. At the cut each pending page is independently dropped (the
//! durable image keeps its old bytes), kept, or — when tearing is on (the default) — torn: only
//! a prefix of its 512-byte sectors (at least one, not all) reaches the durable image. The
//! choices come from a ChaCha8 generator seeded at construction, so a seed replays a crash.
//! [`CrashDevice::into_durable`] (or [`CrashHandle::durable_image`]) gives the device as it is
//! when power returns, for reopening. The handle shares state with the device so a test can
//! arm and inspect a cut while an engine owns the device.

use crate::{
    check_extent, BlockDevice, ClockKind, DevError, DevStats, Io, MemDevice, PageNo, WriteHint,
};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use std::cell::RefCell;
use std::collections::BTreeMap;
use std::rc::Rc;

/// Unit of a torn write: sectors reach the medium whole.
const SECTOR: usize = 512;

/// Durable image, pending pages and the armed cut, shared by a device and its handles.
struct State {
    durable: MemDevice,
    /// Bytes of each page written or trimmed (zeros) since the last flush.
    pending: BTreeMap<PageNo, Vec<u8>>,
    /// I/Os that may still complete before the armed cut.
    countdown: Option<u64>,
    cut: bool,
    tear: bool,
    rng: ChaCha8Rng,
}

pub struct CrashDevice<D: BlockDevice> {
    inner: D,
    s: Rc<RefCell<State>>,
}

/// Arms, inspects and recovers a [`CrashDevice`].
#[derive(Clone)]
pub struct CrashHandle {
    s: Rc<RefCell<State>>,
}

impl<D: BlockDevice> CrashDevice<D> {
    /// Wrap `inner`, which must read as all zeros (a fresh device); `seed` decides the fate of
    /// unflushed writes at a cut.
    pub fn new(inner: D, seed: u64) -> (CrashDevice<D>, CrashHandle) {
        let durable = MemDevice::new(inner.page_bytes(), inner.capacity_pages());
        CrashDevice::with_durable(inner, durable, seed)
    }

    /// Wrap `inner`, whose contents must equal `durable` (e.g. a device rebuilt from a crash
    /// test's durable image).
    pub fn with_durable(inner: D, durable: MemDevice, seed: u64) -> (CrashDevice<D>, CrashHandle) {
        assert_eq!(inner.page_bytes(), durable.page_bytes(), "page sizes agree");
        assert_eq!(
            inner.capacity_pages(),
            durable.capacity_pages(),
            "capacities agree"
        );
        let s = Rc::new(RefCell::new(State {
            durable,
            pending: BTreeMap::new(),
            countdown: None,
            cut: false,
            tear: true,
            rng: ChaCha8Rng::seed_from_u64(seed),
        }));
        (
            CrashDevice {
                inner,
                s: s.clone(),
            },
            CrashHandle { s },
        )
    }

    /// The wrapped device (the volatile image).
    pub fn inner(&self) -> &D {
        &self.inner
    }

    /// Lose power (if not yet lost) and return the durable image: the device after power
    /// returns. The image moves out (no copy); handles then see an empty device.
    pub fn into_durable(self) -> MemDevice {
        let mut s = self.s.borrow_mut();
        s.cut();
        let empty = MemDevice::new(s.durable.page_bytes(), 0);
        std::mem::replace(&mut s.durable, empty)
    }

    /// Count `n` I/Os against an armed cut: how many of them may complete (all, unless the
    /// cut falls among them; the caller then records what completed and calls `power_off`).
    fn admit(&mut self, n: usize) -> usize {
        self.s.borrow_mut().admit(n)
    }

    /// Admit one I/O, or lose power and fail.
    fn admit_one(&mut self) -> Result<(), DevError> {
        if self.admit(1) == 1 {
            Ok(())
        } else {
            self.s.borrow_mut().cut();
            Err(DevError::PowerCut)
        }
    }
}

impl CrashDevice<MemDevice> {
    /// A device starting from `image` (both volatile and durable), e.g. to recover and crash
    /// again.
    pub fn from_image(image: MemDevice, seed: u64) -> (CrashDevice<MemDevice>, CrashHandle) {
        CrashDevice::with_durable(image.clone(), image, seed)
    }
}

impl CrashHandle {
    /// Cut power at the `n`-th I/O from now (1: the next one; 0: cut now).
    pub fn cut_power_after(&self, n: u64) {
        if n == 0 {
            self.cut_now();
        } else {
            self.s.borrow_mut().countdown = Some(n);
        }
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
    /// Pages written or trimmed since the last flush.
    pub fn pending_pages(&self) -> usize {
        self.s.borrow().pending.len()
    }
    /// A copy of the durable image: what would be on the device if power returned now (after
    /// a cut, the device after power returns; before one, only the flushed data).
    pub fn durable_image(&self) -> MemDevice {
        self.s.borrow().durable.clone()
    }
}

impl State {
    fn cut(&mut self) {
        if self.cut {
            return;
        }
        self.cut = true;
        self.countdown = None;
        let pb = self.durable.page_bytes();
        let sectors = (pb / SECTOR).max(1);
        for (page, bytes) in std::mem::take(&mut self.pending) {
            let keep = match self.rng.gen_range(0..3) {
                0 => 0,
                1 => pb,
                _ if self.tear && sectors > 1 => self.rng.gen_range(1..sectors) * SECTOR,
                _ => pb,
            };
            if keep > 0 {
                let mut img = vec![0u8; pb];
                self.durable.read(page, &mut img).expect("page in range");
                img[..keep].copy_from_slice(&bytes[..keep]);
                self.durable
                    .write(page, &img, WriteHint::NONE)
                    .expect("page in range");
            }
        }
    }

    fn admit(&mut self, n: usize) -> usize {
        if self.cut {
            return 0;
        }
        match self.countdown {
            Some(0) => 0,
            Some(left) if (left as usize) <= n => {
                self.countdown = Some(0);
                left as usize - 1
            }
            Some(left) => {
                self.countdown = Some(left - n as u64);
                n
            }
            None => n,
        }
    }

    fn record(&mut self, page: PageNo, buf: &[u8]) {
        let pb = self.durable.page_bytes();
        for (i, chunk) in buf.chunks_exact(pb).enumerate() {
            self.pending.insert(page + i as u64, chunk.to_vec());
        }
    }
}

impl<D: BlockDevice> BlockDevice for CrashDevice<D> {
    fn page_bytes(&self) -> usize {
        self.inner.page_bytes()
    }
    fn capacity_pages(&self) -> u64 {
        self.inner.capacity_pages()
    }
    fn read(&mut self, page: PageNo, buf: &mut [u8]) -> Result<(), DevError> {
        self.admit_one()?;
        self.inner.read(page, buf)
    }
    fn write(&mut self, page: PageNo, buf: &[u8], hint: WriteHint) -> Result<(), DevError> {
        self.admit_one()?;
        self.inner.write(page, buf, hint)?;
        self.s.borrow_mut().record(page, buf);
        Ok(())
    }
    fn submit(&mut self, batch: &mut [Io<'_>]) -> Result<(), DevError> {
        if self.s.borrow().cut {
            return Err(DevError::PowerCut);
        }
        let done = self.admit(batch.len());
        let r = self.inner.submit(&mut batch[..done]);
        {
            let mut s = self.s.borrow_mut();
            let (pb, cap) = (s.durable.page_bytes(), s.durable.capacity_pages());
            for io in &batch[..done] {
                if let Io::Write { page, buf, .. } = io {
                    if check_extent(*page, buf.len(), pb, cap).is_ok() {
                        s.record(*page, buf);
                    }
                }
            }
            if done < batch.len() {
                // The cut falls inside this batch; what completed before it is unflushed.
                s.cut();
            }
        }
        if done < batch.len() {
            return Err(DevError::PowerCut);
        }
        r
    }
    fn trim(&mut self, page: PageNo, pages: u64) -> Result<(), DevError> {
        self.admit_one()?;
        self.inner.trim(page, pages)?;
        let zeros = vec![0u8; pages as usize * self.page_bytes()];
        self.s.borrow_mut().record(page, &zeros);
        Ok(())
    }
    fn flush(&mut self) -> Result<(), DevError> {
        self.admit_one()?;
        self.inner.flush()?;
        let mut s = self.s.borrow_mut();
        for (page, bytes) in std::mem::take(&mut s.pending) {
            s.durable
                .write(page, &bytes, WriteHint::NONE)
                .expect("pending pages are in range");
        }
        Ok(())
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

    fn page(v: u8) -> Vec<u8> {
        vec![v; 4096]
    }

    fn read(img: &mut MemDevice, p: PageNo) -> Vec<u8> {
        let mut buf = page(0);
        img.read(p, &mut buf).unwrap();
        buf
    }

    #[test]
    fn the_nth_io_after_arming_fails_and_so_does_everything_after() {
        let (mut d, h) = CrashDevice::new(MemDevice::new(4096, 16), 1);
        h.cut_power_after(3);
        d.write(0, &page(1), WriteHint::NONE).unwrap();
        d.read(0, &mut page(0)).unwrap();
        assert!(!h.is_cut());
        assert!(matches!(d.flush(), Err(DevError::PowerCut)));
        assert!(h.is_cut());
        assert!(matches!(d.read(0, &mut page(0)), Err(DevError::PowerCut)));
        assert!(matches!(d.trim(0, 1), Err(DevError::PowerCut)));
        assert!(matches!(d.submit(&mut []), Err(DevError::PowerCut)));
    }

    #[test]
    fn a_cut_inside_a_batch_completes_the_ios_before_it() {
        let (mut d, h) = CrashDevice::new(MemDevice::new(4096, 16), 2);
        h.set_tearing(false);
        let bufs: Vec<Vec<u8>> = (1..=4).map(page).collect();
        let mut batch: Vec<Io> = bufs
            .iter()
            .enumerate()
            .map(|(i, buf)| Io::Write {
                page: i as u64,
                buf,
                hint: WriteHint::NONE,
            })
            .collect();
        h.cut_power_after(3);
        assert!(matches!(d.submit(&mut batch), Err(DevError::PowerCut)));
        assert_eq!(
            d.inner().stats().pages_written,
            2,
            "two I/Os before the cut"
        );
        let mut img = h.durable_image();
        for p in 0..2 {
            let got = read(&mut img, p);
            assert!(got == page(0) || got == page(p as u8 + 1), "page {p}");
        }
        assert_eq!(
            read(&mut img, 2),
            page(0),
            "the I/O at the cut never happened"
        );
        assert_eq!(read(&mut img, 3), page(0));
    }

    #[test]
    fn unflushed_pages_are_dropped_kept_or_torn() {
        let mut fates = [0; 3];
        for seed in 0..60 {
            let (mut d, h) = CrashDevice::new(MemDevice::new(4096, 4), seed);
            d.write(0, &page(7), WriteHint::NONE).unwrap();
            let sevens = read(&mut d.into_durable(), 0)
                .iter()
                .filter(|&&b| b == 7)
                .count();
            assert!(h.is_cut(), "into_durable loses power");
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

    #[test]
    fn without_tearing_pages_are_whole() {
        for seed in 0..30 {
            let (mut d, h) = CrashDevice::new(MemDevice::new(4096, 4), seed);
            h.set_tearing(false);
            d.write(1, &page(9), WriteHint::NONE).unwrap();
            h.cut_now();
            let got = read(&mut h.durable_image(), 1);
            assert!(got == page(0) || got == page(9), "seed {seed}");
        }
    }

    #[test]
    fn the_same_seed_replays_the_same_crash() {
        let run = |seed| {
            let (mut d, _h) = CrashDevice::new(MemDevice::new(4096, 64), seed);
            for p in 0..64 {
                d.write(p, &page(p as u8 + 1), WriteHint::NONE).unwrap();
            }
            d.into_durable().bytes().to_vec()
        };
        assert_eq!(run(5), run(5));
        assert_ne!(run(5), run(6));
    }
}
