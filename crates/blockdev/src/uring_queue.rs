//! The read queue a [`FileDevice`] keeps full: up to `depth` reads in flight through io_uring,
//! a new one issued as each completes and completions taken in the order they arrive (fio's
//! `--iodepth=N --rw=randread --direct=1 --ioengine=io_uring`). One queue serves both users:
//! [`BlockDevice::read_queued`] (a read rate: data dropped in bounce buffers) and
//! [`BlockDevice::read_pipelined`] (the caller's buffers: read straight into them when they
//! are aligned for O_DIRECT, else through a bounce buffer and one copy).
//!
//! Invariants: a slot's bounce buffer, and a caller's buffer read into directly, are never
//! touched or freed while its read is in flight; the queue returns only once every read it
//! issued is reaped. If `io_uring_enter` fails `MAX_ENTER_FAILURES` times in a row the queue
//! cannot be drained: with only bounce buffers in flight the device is poisoned (it leaks them
//! and the ring on drop); with a caller's buffer in flight the process aborts, since returning
//! would hand memory the kernel may still write back to the caller.

use super::{io_err, stage, FileDevice, ALIGN, MAX_ENTER_FAILURES};
use crate::{check_extent, BlockDevice, DevError, PageNo};
use io_uring::{opcode, types};
use std::os::unix::io::AsRawFd;

/// One read for the queue: `len` bytes from `page` into `buf` (`None`: dropped).
pub(crate) struct QueuedRead {
    pub page: PageNo,
    pub len: usize,
    pub buf: Option<*mut u8>,
}

/// Where a slot's read lands.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Dest {
    /// The slot's bounce buffer, then dropped.
    Discard,
    /// The slot's bounce buffer, then copied to the caller's unaligned buffer.
    Copy(*mut u8),
    /// Straight into the caller's aligned buffer.
    Direct,
}

/// The queue's state: what each slot holds, free slots, counts and the first error.
struct Queue {
    slots: Vec<Option<(Dest, usize)>>,
    free: Vec<usize>,
    in_flight: usize,
    done: u64,
    failures_in_row: u32,
    first_err: Option<DevError>,
}

impl Queue {
    fn new(depth: usize) -> Queue {
        Queue {
            slots: vec![None; depth],
            free: (0..depth).rev().collect(),
            in_flight: 0,
            done: 0,
            failures_in_row: 0,
            first_err: None,
        }
    }
}

/// Whether the kernel may read into `ptr` directly (O_DIRECT's alignment; `len` is whole pages,
/// a multiple of 512 bytes).
fn aligned(ptr: *mut u8) -> bool {
    (ptr as usize).is_multiple_of(ALIGN)
}

impl FileDevice {
    /// Issue the reads `next` yields, keeping up to `depth` in flight (at most the ring's
    /// `queue_depth`); no read is issued after the first error. Returns the reads done.
    pub(crate) fn run_queue(
        &mut self,
        depth: usize,
        next: &mut dyn FnMut() -> Option<QueuedRead>,
    ) -> Result<u64, DevError> {
        self.check_usable()?;
        self.ring()?;
        let depth = depth.clamp(1, self.opts.queue_depth.max(1) as usize);
        let mut q = Queue::new(depth);
        let mut exhausted = false;
        loop {
            while !exhausted && q.first_err.is_none() && !q.free.is_empty() {
                match next() {
                    Some(r) => self.issue(&mut q, r),
                    None => exhausted = true,
                }
            }
            if q.in_flight == 0 || !self.reap(&mut q) {
                break;
            }
        }
        assert!(
            q.in_flight == 0 || self.poisoned.is_some(),
            "the queue returns drained or poisoned"
        );
        q.first_err.map_or(Ok(q.done), Err)
    }

    /// Push read `r` into a free slot of `q`.
    fn issue(&mut self, q: &mut Queue, r: QueuedRead) {
        if let Err(e) = check_extent(r.page, r.len, self.page_bytes, self.capacity_pages) {
            q.first_err = Some(e);
            return;
        }
        let slot = q.free.pop().expect("a free slot");
        let (ptr, dest) = match r.buf {
            Some(p) if aligned(p) => (p, Dest::Direct),
            Some(p) => (
                stage(&mut self.bounce, slot, r.len).as_mut_ptr(),
                Dest::Copy(p),
            ),
            None => (
                stage(&mut self.bounce, slot, r.len).as_mut_ptr(),
                Dest::Discard,
            ),
        };
        let e = opcode::Read::new(types::Fd(self.file.as_raw_fd()), ptr, r.len as u32)
            .offset(r.page * self.page_bytes as u64)
            .build()
            .user_data(slot as u64);
        let ring = self.ring.as_mut().expect("the queue's ring");
        // SAFETY: the read's buffer (bounce buffer `slot`, or the caller's, borrowed for the
        // whole `run_queue`) is neither touched nor freed while it is in flight: `run_queue`
        // returns only once every read is reaped, or after poisoning the device (bounce
        // buffers only: leaked with the ring) or aborting (a caller's buffer in flight). The
        // fd lives as long as the device.
        unsafe { ring.submission().push(&e).expect("a slot fits the ring") };
        q.slots[slot] = Some((dest, r.len));
        q.in_flight += 1;
        self.stats.read_ios += 1;
        self.stats.pages_read += (r.len / self.page_bytes) as u64;
    }

    /// Enter the kernel (submit, wait for one completion) and finish every read completed;
    /// false once the queue cannot be drained (the device is then poisoned).
    fn reap(&mut self, q: &mut Queue) -> bool {
        let ring = self.ring.as_mut().expect("the queue's ring");
        let reverse = self.enter_faults.reverse_completions;
        let want = if reverse { q.in_flight } else { 1 };
        match self.enter_faults.apply(|| ring.submit_and_wait(want)) {
            Ok(_) => q.failures_in_row = 0,
            Err(e) if matches!(e.raw_os_error(), Some(libc::EINTR) | Some(libc::EBUSY)) => {}
            Err(e) => {
                q.failures_in_row += 1;
                let reason = e.to_string();
                q.first_err
                    .get_or_insert(io_err(&self.path, "io_uring_enter", e));
                if q.failures_in_row >= MAX_ENTER_FAILURES {
                    self.give_up(q, &reason);
                    return false;
                }
            }
        }
        let mut reaped = std::mem::take(&mut self.done);
        reaped.clear();
        reaped.extend(
            ring.completion()
                .map(|c| (c.user_data() as usize, c.result())),
        );
        if reverse {
            reaped.reverse();
        }
        for &(slot, res) in &reaped {
            let (dest, len) = q.slots[slot].take().expect("a completion of a slot in use");
            match self.check_completion(res, len) {
                Ok(()) => self.deliver(slot, dest, len),
                Err(e) => {
                    q.first_err.get_or_insert(e);
                }
            }
            q.free.push(slot);
            q.in_flight -= 1;
            q.done += 1;
        }
        self.done = reaped;
        true
    }

    /// A completed read's bytes to where they go.
    fn deliver(&mut self, slot: usize, dest: Dest, len: usize) {
        if let Dest::Copy(p) = dest {
            let b = stage(&mut self.bounce, slot, len);
            // SAFETY: `p` is the caller's buffer of `len` bytes, borrowed mutably for the
            // whole `run_queue` and not aliased by the bounce buffer.
            unsafe { std::ptr::copy_nonoverlapping(b.as_ptr(), p, len) };
        }
    }

    /// The queue cannot be drained: poison the device, or abort if the kernel may still
    /// write a caller's buffer.
    fn give_up(&mut self, q: &Queue, reason: &str) {
        let msg = format!(
            "{} queued reads in flight; io_uring_enter failed {} times in a row: {reason}",
            q.in_flight, q.failures_in_row
        );
        if q.slots.iter().flatten().any(|(d, _)| *d == Dest::Direct) {
            eprintln!(
                "{}: {msg}; the kernel may still write the caller's buffers: aborting",
                self.path.display()
            );
            std::process::abort();
        }
        self.poisoned = Some(msg);
    }
}

/// [`BlockDevice::read_pipelined`] on a file.
pub(crate) fn read_pipelined(
    dev: &mut FileDevice,
    reads: &mut [(PageNo, &mut [u8])],
    depth: usize,
) -> Result<(), DevError> {
    let mut it = reads.iter_mut().map(|(page, buf)| QueuedRead {
        page: *page,
        len: buf.len(),
        buf: Some(buf.as_mut_ptr()),
    });
    dev.run_queue(depth, &mut || it.next()).map(|_| ())
}

/// [`BlockDevice::read_queued`] on a file.
pub(crate) fn read_queued(
    dev: &mut FileDevice,
    pages: &mut dyn Iterator<Item = PageNo>,
    depth: usize,
) -> Result<u64, DevError> {
    let len = dev.page_bytes();
    dev.run_queue(depth, &mut || {
        pages.next().map(|page| QueuedRead {
            page,
            len,
            buf: None,
        })
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{FileOptions, WriteHint};
    use proptest::prelude::*;

    const PB: usize = 4096;
    const PAGES: u64 = 96;

    fn page_image(p: u64) -> Vec<u8> {
        (0..PB).map(|i| (p as usize * 7 + i) as u8).collect()
    }

    fn device(dir: &std::path::Path) -> FileDevice {
        let o = FileOptions {
            queue_depth: 64,
            ..FileOptions::default()
        };
        let mut dev = FileDevice::create(&dir.join("dev"), PAGES, PB, o).expect("device");
        for p in 0..PAGES {
            dev.write(p, &page_image(p), WriteHint::NONE)
                .expect("write");
        }
        dev
    }

    /// Page-aligned buffers (read into directly) when `direct`, else each one byte into an
    /// over-long vector (through a bounce buffer).
    fn buffers(n: usize, direct: bool) -> (Vec<super::super::AlignedBuf>, Vec<Vec<u8>>) {
        if direct {
            (
                (0..n).map(|_| super::super::AlignedBuf::new(PB)).collect(),
                Vec::new(),
            )
        } else {
            (Vec::new(), vec![vec![0u8; PB + 1]; n])
        }
    }

    /// Pipelined reads of `pages` at `depth`; each buffer's bytes after the call.
    fn pipelined(
        dev: &mut FileDevice,
        pages: &[u64],
        depth: usize,
        direct: bool,
    ) -> Result<Vec<Vec<u8>>, DevError> {
        let (mut aligned, mut plain) = buffers(pages.len(), direct);
        let bufs: Vec<&mut [u8]> = if direct {
            aligned.iter_mut().map(|b| b.slice(PB)).collect()
        } else {
            plain.iter_mut().map(|v| &mut v[1..]).collect()
        };
        let mut reads: Vec<(PageNo, &mut [u8])> = pages.iter().copied().zip(bufs).collect();
        dev.read_pipelined(&mut reads, depth)?;
        Ok(reads.into_iter().map(|(_, b)| b.to_vec()).collect())
    }

    fn synchronous(dev: &mut FileDevice, pages: &[u64]) -> Vec<Vec<u8>> {
        pages
            .iter()
            .map(|&p| {
                let mut b = vec![0u8; PB];
                dev.read(p, &mut b).expect("read");
                b
            })
            .collect()
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(24))]
        /// The pipelined reader returns exactly the pages the synchronous path returns, for
        /// any pages (repeats too), queue depth, buffer alignment and completion order.
        #[test]
        fn pipelined_reads_return_what_synchronous_reads_return(
            pages in proptest::collection::vec(0..PAGES, 0..150),
            depth in 1usize..80,
            direct in any::<bool>(),
            reverse in any::<bool>(),
        ) {
            let dir = tempfile::tempdir_in(env!("CARGO_MANIFEST_DIR")).unwrap();
            let mut dev = device(dir.path());
            dev.enter_faults.reverse_completions = reverse;
            let before = dev.stats().read_ios;
            let got = pipelined(&mut dev, &pages, depth, direct).unwrap();
            prop_assert_eq!(dev.stats().read_ios - before, pages.len() as u64);
            prop_assert_eq!(&got, &synchronous(&mut dev, &pages));
            for (b, &p) in got.iter().zip(&pages) {
                prop_assert!(b == &page_image(p), "page {}", p);
            }
        }
    }

    #[test]
    fn completions_out_of_issue_order_land_in_their_own_buffers() {
        let dir = tempfile::tempdir_in(env!("CARGO_MANIFEST_DIR")).unwrap();
        let mut dev = device(dir.path());
        dev.enter_faults.reverse_completions = true;
        let pages: Vec<u64> = (0..PAGES).rev().collect();
        for direct in [true, false] {
            let got = pipelined(&mut dev, &pages, 32, direct).unwrap();
            for (b, &p) in got.iter().zip(&pages) {
                assert!(b == &page_image(p), "page {p} (direct {direct})");
            }
        }
    }

    #[test]
    fn a_short_read_is_a_short_transfer_naming_the_bytes() {
        let dir = tempfile::tempdir_in(env!("CARGO_MANIFEST_DIR")).unwrap();
        let mut dev = device(dir.path());
        // The file shrinks under the device: its last pages now read short (0 bytes).
        dev.file.set_len((PAGES - 2) * PB as u64).unwrap();
        for direct in [true, false] {
            let e = pipelined(&mut dev, &[1, PAGES - 1, 2], 4, direct).unwrap_err();
            assert!(
                matches!(
                    e,
                    DevError::ShortTransfer {
                        got_bytes: 0,
                        expected_bytes: PB,
                        op: "io_uring I/O",
                        ..
                    }
                ),
                "{e:?}"
            );
        }
        let got = pipelined(&mut dev, &[3, 4], 2, true).expect("usable after a short read");
        assert!(got[1] == page_image(4));
    }

    #[test]
    fn errors_are_named_and_the_queue_drains_before_returning() {
        let dir = tempfile::tempdir_in(env!("CARGO_MANIFEST_DIR")).unwrap();
        let mut dev = device(dir.path());
        let e = pipelined(&mut dev, &[1, 2, PAGES, 3], 2, true).unwrap_err();
        assert!(
            matches!(e, DevError::OutOfRange { page: PAGES, .. }),
            "{e:?}"
        );
        dev.enter_faults.after_submit = 1;
        let e = pipelined(&mut dev, &[5, 6, 7, 8], 4, true).unwrap_err();
        assert!(
            matches!(
                e,
                DevError::Io {
                    op: "io_uring_enter",
                    ..
                }
            ),
            "{e:?}"
        );
        std::thread::sleep(std::time::Duration::from_millis(20));
        let got = pipelined(&mut dev, &[9, 10], 2, false).expect("usable after a drained queue");
        assert!(
            got[0] == page_image(9) && got[1] == page_image(10),
            "stale data"
        );
    }
}
