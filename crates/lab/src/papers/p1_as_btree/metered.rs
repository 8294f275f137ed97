//! The simulated drive under a tree, still visible to the experiment after the tree took it:
//! the flash counters (programs, GC copies, erases) of each phase, so a run can say what its
//! device time was spent on (e.g. the write amplification of each tree's timed inserts).
//!
//! Model: [`Metered`] forwards every call to the one [`SimDevice`] it shares with a [`Probe`],
//! on the same clock. Its pages may be larger than the drive's flash pages (P1's 8 KiB nodes on
//! a drive of 4 KiB pages): device page `p` is then the drive's `split` consecutive pages from
//! `p * split`, read and written in one request (so the drive stripes a node over its dies as
//! it stripes any multi-page request). With pages of the drive's size it changes nothing.

use blockdev::{BlockDevice, ClockKind, DevError, DevStats, Io, PageNo, SimDevice, WriteHint};
use std::cell::RefCell;
use std::rc::Rc;

/// A block device that is a shared [`SimDevice`].
pub(super) struct Metered {
    dev: Rc<RefCell<SimDevice>>,
    /// The drive's pages per device page (>= 1).
    split: u64,
}

/// The experiment's view of a [`Metered`] device's flash counters.
#[derive(Clone)]
pub(super) struct Probe {
    dev: Rc<RefCell<SimDevice>>,
}

/// `dev` as a block device of `page_bytes` pages (a whole multiple of the drive's) for a tree,
/// and a probe of its counters for the experiment; `None` if `page_bytes` is not such a multiple.
pub(super) fn metered(dev: SimDevice, page_bytes: usize) -> Option<(Metered, Probe)> {
    let flash_bytes = dev.page_bytes();
    if page_bytes == 0 || !page_bytes.is_multiple_of(flash_bytes) {
        return None;
    }
    let split = (page_bytes / flash_bytes) as u64;
    let dev = Rc::new(RefCell::new(dev));
    Some((
        Metered {
            dev: dev.clone(),
            split,
        },
        Probe { dev },
    ))
}

impl Metered {
    /// The drive's page of device page `page`.
    fn at(&self, page: PageNo) -> PageNo {
        page * self.split
    }
}

impl Probe {
    /// The drive's counters now.
    pub fn flash(&self) -> ssd::Stats {
        self.dev.borrow().ssd().stats()
    }
}

impl BlockDevice for Metered {
    fn page_bytes(&self) -> usize {
        self.dev.borrow().page_bytes() * self.split as usize
    }
    fn capacity_pages(&self) -> u64 {
        self.dev.borrow().capacity_pages() / self.split
    }
    fn read(&mut self, page: PageNo, buf: &mut [u8]) -> Result<(), DevError> {
        let at = self.at(page);
        self.dev.borrow_mut().read(at, buf)
    }
    fn write(&mut self, page: PageNo, buf: &[u8], hint: WriteHint) -> Result<(), DevError> {
        let at = self.at(page);
        self.dev.borrow_mut().write(at, buf, hint)
    }
    fn submit(&mut self, batch: &mut [Io<'_>]) -> Result<(), DevError> {
        let split = self.split;
        let mut on_drive: Vec<Io<'_>> = batch
            .iter_mut()
            .map(|io| match io {
                Io::Read { page, buf } => Io::Read {
                    page: *page * split,
                    buf,
                },
                Io::Write { page, buf, hint } => Io::Write {
                    page: *page * split,
                    buf,
                    hint: *hint,
                },
            })
            .collect();
        self.dev.borrow_mut().submit(&mut on_drive)
    }
    fn trim(&mut self, page: PageNo, pages: u64) -> Result<(), DevError> {
        let at = self.at(page);
        self.dev.borrow_mut().trim(at, pages * self.split)
    }
    fn flush(&mut self) -> Result<(), DevError> {
        self.dev.borrow_mut().flush()
    }
    fn now_ns(&self) -> u64 {
        self.dev.borrow().now_ns()
    }
    fn clock_kind(&self) -> ClockKind {
        self.dev.borrow().clock_kind()
    }
    /// The drive's counters, its pages counted in device pages.
    fn stats(&self) -> DevStats {
        let s = self.dev.borrow().stats();
        DevStats {
            pages_read: s.pages_read / self.split,
            pages_written: s.pages_written / self.split,
            ..s
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn drive(page_bytes: usize) -> SimDevice {
        let mut cfg = ssd::SsdConfig::preset("p1-ssd").unwrap();
        cfg.aging = ssd::config::Aging::default();
        crate::devices::sim_device_of(cfg, page_bytes, 64 << 20).unwrap()
    }

    #[test]
    fn the_probe_sees_what_the_tree_wrote() {
        let (mut m, probe) = metered(drive(8192), 8192).unwrap();
        let before = probe.flash();
        m.write(3, &[7u8; 8192], WriteHint::default()).unwrap();
        let mut buf = [0u8; 8192];
        m.read(3, &mut buf).unwrap();
        assert_eq!(buf[100], 7);
        let d = probe.flash().since(&before);
        assert_eq!((d.host_pages_written, d.host_pages_read), (1, 1));
        assert_eq!(m.stats().write_ios, 1);
    }

    /// 8 KiB device pages over 4 KiB flash pages: each is two drive pages, by every path
    /// (single I/O, a batch, a trim), and the capacity is counted in device pages.
    #[test]
    fn a_device_page_is_split_over_the_drives_pages() {
        let flash = drive(4096);
        let flash_pages = flash.capacity_pages();
        let (mut m, probe) = metered(flash, 8192).unwrap();
        assert_eq!(
            (m.page_bytes(), m.capacity_pages()),
            (8192, flash_pages / 2)
        );
        let (a, b) = ([1u8; 8192], [2u8; 8192]);
        m.write(5, &a, WriteHint::default()).unwrap();
        m.submit(&mut [Io::Write {
            page: 6,
            buf: &b,
            hint: WriteHint::default(),
        }])
        .unwrap();
        let (mut x, mut y) = ([0u8; 8192], [0u8; 8192]);
        m.submit(&mut [
            Io::Read {
                page: 5,
                buf: &mut x,
            },
            Io::Read {
                page: 6,
                buf: &mut y,
            },
        ])
        .unwrap();
        assert_eq!((x, y), (a, b), "no page overlaps its neighbour");
        let d = probe.flash();
        assert_eq!((d.host_pages_written, d.host_pages_read), (4, 4));
        m.trim(5, 2).unwrap();
        assert_eq!(probe.flash().host_pages_trimmed, 4);
        assert_eq!(m.stats().pages_written, 2);
        assert!(metered(drive(4096), 6144).is_none());
    }
}
