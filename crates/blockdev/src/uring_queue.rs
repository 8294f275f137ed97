//! The read queue a [`FileDevice`] keeps full: up to `depth` reads in flight through io_uring,
//! a new one issued as each completes and completions taken in the order they arrive (fio's
//! `--iodepth=N --rw=randread --direct=1 --ioengine=io_uring`). One queue serves three users:
//! [`BlockDevice::read_queued`] (a read rate: data dropped in bounce buffers),
//! [`BlockDevice::read_pipelined`] (the caller's buffers: read straight into them when they
//! are aligned for O_DIRECT, else through a bounce buffer and one copy), both returning only
//! once their queue drained, and the device's [`ReadStream`], whose queue outlives the call
//! that started its reads (each read owns its [`PageBuf`] while in flight): a scan starts the
//! next window's reads before it produces this window's rows, so the queue never drains
//! between windows.
//!
//! Invariants: a slot's bounce buffer, a caller's buffer read into directly and a stream
//! read's own buffer are never touched or freed while its read is in flight; `read_queued` and
//! `read_pipelined` return only once every read they issued is reaped. Every other use of the
//! ring (these two, `submit`) first waits for the stream's reads in flight ([`Stream`]'s
//! results are kept), so no completion is taken by the wrong owner. If `io_uring_enter` fails
//! `MAX_ENTER_FAILURES` times in a row the queue cannot be drained: with only the device's own
//! buffers in flight (bounce buffers, a stream's) the device is poisoned (it leaks them and
//! the ring on drop); with a caller's buffer in flight the process aborts, since returning
//! would hand memory the kernel may still write back to the caller.

use super::{io_err, stage, FileDevice, ALIGN, MAX_ENTER_FAILURES};
use crate::{check_extent, BlockDevice, DevError, PageBuf, PageNo, ReadStream};
use io_uring::{opcode, squeue, types, IoUring};
use std::collections::VecDeque;
use std::os::unix::io::AsRawFd;

/// Fixed buffers a ring's sparse table holds: one per slab, at the slab's id (the kernel's
/// limit, `IORING_MAX_REG_BUFFERS`). A slab with a higher id is read into plainly.
const FIXED_BUFFER_SLOTS: u32 = 1 << 14;

/// What a device's ring has registered with the kernel, and the reads that used it.
///
/// Invariant: `slabs[id]` is set only once slab `id`'s whole memory is registered at index
/// `id` of the ring's buffer table; a slab's memory lives as long as the process (see
/// [`PageBuf`]), so a registration never outlives what it names. A READ_FIXED names slab `id`
/// by that index and lies inside it (asserted where it is built).
#[derive(Default)]
pub(crate) struct Fixed {
    /// The file is index 0 of the ring's file table.
    file: bool,
    /// The ring has a sparse buffer table of `FIXED_BUFFER_SLOTS`.
    buffers: bool,
    /// The registered slabs' (base address, bytes), by id.
    slabs: Vec<Option<(usize, usize)>>,
    /// Reads done through fixed buffers.
    pub reads: u64,
    /// The first registration the kernel refused: what and why.
    pub refused: Option<String>,
}

impl Fixed {
    /// Register what `opts` asks for with a new `ring` (what the kernel refuses is left out
    /// and named in `refused`).
    pub(crate) fn register(
        ring: &IoUring,
        file: &std::fs::File,
        opts: crate::FileOptions,
    ) -> Fixed {
        let mut f = Fixed::default();
        let sub = ring.submitter();
        if opts.fixed_file {
            match sub.register_files(&[file.as_raw_fd()]) {
                Ok(()) => f.file = true,
                Err(e) => f.refuse("the fixed file", e),
            }
        }
        if opts.fixed_buffers {
            match sub.register_buffers_sparse(FIXED_BUFFER_SLOTS) {
                Ok(()) => f.buffers = true,
                Err(e) => f.refuse("the fixed-buffer table", e),
            }
        }
        f
    }

    /// Give the ring's registrations back to the kernel now, with nothing in flight.
    ///
    /// A registered file holds the file's open description, and the kernel tears a closed
    /// ring down later, in a worker: left to that, the file's `flock` outlives the device,
    /// and this process reopening the file finds its own lock ("open twice"). Unregistering
    /// drops the reference before the ring's descriptor is closed.
    pub(crate) fn release(&mut self, ring: &IoUring) {
        let sub = ring.submitter();
        if std::mem::take(&mut self.file) {
            if let Err(e) = sub.unregister_files() {
                self.refuse("to give back the fixed file", e);
            }
        }
        if std::mem::take(&mut self.buffers) {
            if let Err(e) = sub.unregister_buffers() {
                self.refuse("to give back the fixed buffers", e);
            }
            self.slabs.clear();
        }
    }

    fn refuse(&mut self, what: &str, e: std::io::Error) {
        self.refused
            .get_or_insert_with(|| format!("io_uring refused {what}: {e}"));
    }

    /// The index of `buf`'s slab in `ring`'s buffer table, registering the slab on its first
    /// read; None: read plainly (no slab, table full or refused).
    fn buffer_index(&mut self, ring: &IoUring, buf: &PageBuf) -> Option<u16> {
        if !self.buffers {
            return None;
        }
        let id = buf.slab_id()?;
        if id >= FIXED_BUFFER_SLOTS {
            return None;
        }
        let i = id as usize;
        if self.slabs.len() <= i {
            self.slabs.resize(i + 1, None);
        }
        if self.slabs[i].is_none() {
            let (base, bytes) = crate::page_buf::slab_region(id);
            let iov = libc::iovec {
                iov_base: base as *mut libc::c_void,
                iov_len: bytes,
            };
            // SAFETY: a slab's memory is `bytes` bytes at `base`, never freed nor moved for
            // the life of the process, so the kernel may keep it pinned as long as the ring.
            match unsafe { ring.submitter().register_buffers_update(id, &[iov], None) } {
                Ok(_) => self.slabs[i] = Some((base, bytes)),
                Err(e) => {
                    self.refuse("a slab's registration", e);
                    self.buffers = false;
                    return None;
                }
            }
        }
        let (base, bytes) = self.slabs[i].expect("registered above");
        let at = buf.as_ptr() as usize;
        assert!(
            at >= base && at + buf.len() <= base + bytes,
            "a fixed read lies inside its slab's registered memory"
        );
        u16::try_from(id).ok()
    }
}

/// A read of `len` bytes at `offset` into `ptr`: on the fixed file when `file`, into fixed
/// buffer `index` when given (`ptr` inside it).
fn read_entry(
    fd: i32,
    file: bool,
    ptr: *mut u8,
    len: u32,
    offset: u64,
    index: Option<u16>,
) -> squeue::Entry {
    match (file, index) {
        (true, Some(i)) => opcode::ReadFixed::new(types::Fixed(0), ptr, len, i)
            .offset(offset)
            .build(),
        (false, Some(i)) => opcode::ReadFixed::new(types::Fd(fd), ptr, len, i)
            .offset(offset)
            .build(),
        (true, None) => opcode::Read::new(types::Fixed(0), ptr, len)
            .offset(offset)
            .build(),
        (false, None) => opcode::Read::new(types::Fd(fd), ptr, len)
            .offset(offset)
            .build(),
    }
}

/// One read for the queue: `len` bytes from `page` into `into`.
pub(crate) struct QueuedRead {
    pub page: PageNo,
    pub len: usize,
    pub into: Target,
}

/// Where a queued read's bytes go.
pub(crate) enum Target {
    /// Nowhere (a read rate).
    Discard,
    /// The caller's buffer, borrowed for the whole queue run.
    Caller(*mut u8),
    /// A stream read's own buffer (aligned), handed back when the read is finished.
    Owned { ticket: u64, buf: PageBuf },
}

/// Where a slot's read lands.
enum Dest {
    /// The slot's bounce buffer, then dropped.
    Discard,
    /// The slot's bounce buffer, then copied to the caller's unaligned buffer.
    Copy(*mut u8),
    /// Straight into the caller's aligned buffer.
    Direct,
    /// Straight into a stream read's own buffer, then into the stream's finished reads.
    Owned { ticket: u64, buf: PageBuf },
}

/// The queue's state: what each slot holds, free slots, counts and the first error.
pub(crate) struct Queue {
    /// `depth` slots, then one more for a stream's priority read ([`FileDevice::read`] while
    /// the stream runs), never in `free`.
    slots: Vec<Option<(Dest, usize)>>,
    depth: usize,
    /// The priority read's result, once it completed.
    priority_done: Option<Result<(), DevError>>,
    free: Vec<usize>,
    in_flight: usize,
    done: u64,
    failures_in_row: u32,
    first_err: Option<DevError>,
}

impl Queue {
    fn new(depth: usize) -> Queue {
        Queue {
            slots: (0..=depth).map(|_| None).collect(),
            depth,
            priority_done: None,
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
pub(super) fn aligned(ptr: *mut u8) -> bool {
    (ptr as usize).is_multiple_of(ALIGN)
}

/// The device's [`ReadStream`]: reads started and not yet handed back. `queue` exists while
/// any is pending or in flight (its depth is the first `read_start`'s since it was empty).
#[derive(Default)]
pub(crate) struct Stream {
    queue: Option<Queue>,
    /// Started, waiting for a free slot (in ticket order).
    pending: VecDeque<(u64, PageNo, PageBuf)>,
    /// Done (or never issued after an error), waiting for `read_finish`.
    pub(super) finished: Vec<(u64, PageBuf)>,
    pub(super) next_ticket: u64,
    /// A reader thread could not be started: the error, for `read_finish`.
    pub(super) thread_err: Option<DevError>,
}

// SAFETY: between calls a stream's queue holds only `Dest::Owned` reads (buffers it owns); a
// caller's raw pointer (the priority read of `stream_read_now`) lives in it only within that
// call, which returns once the read is reaped. Moving the stream to another thread moves owned
// buffers and the ring's bookkeeping, like the device's own bounce buffers.
unsafe impl Send for Stream {}

impl Stream {
    /// Whether a read with a ticket below `until` is pending or in flight.
    fn outstanding_below(&self, q: &Queue, until: u64) -> bool {
        self.pending.front().is_some_and(|r| r.0 < until)
            || q.slots
                .iter()
                .flatten()
                .any(|(d, _)| matches!(d, Dest::Owned { ticket, .. } if *ticket < until))
    }
}

impl FileDevice {
    /// Issue the reads `next` yields, keeping up to `depth` in flight (at most the ring's
    /// `queue_depth`); no read is issued after the first error. Returns the reads done.
    pub(crate) fn run_queue(
        &mut self,
        depth: usize,
        next: &mut dyn FnMut() -> Option<QueuedRead>,
    ) -> Result<u64, DevError> {
        self.stream_settle();
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
            if q.in_flight == 0 || !self.reap(&mut q, true) {
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
            q.first_err.get_or_insert(e);
            if let Target::Owned { ticket, buf } = r.into {
                self.stream.finished.push((ticket, buf));
            }
            return;
        }
        let slot = q.free.pop().expect("a free slot");
        self.issue_in(q, slot, r);
    }

    /// Push read `r` (its extent checked) into slot `slot` of `q`.
    fn issue_in(&mut self, q: &mut Queue, slot: usize, r: QueuedRead) {
        let (ptr, dest) = match r.into {
            Target::Caller(p) if aligned(p) => (p, Dest::Direct),
            Target::Caller(p) => (
                stage(&mut self.bounce, slot, r.len).as_mut_ptr(),
                Dest::Copy(p),
            ),
            Target::Discard => (
                stage(&mut self.bounce, slot, r.len).as_mut_ptr(),
                Dest::Discard,
            ),
            Target::Owned { ticket, mut buf } => {
                assert!(
                    aligned(buf.as_mut_ptr()),
                    "a stream read's buffer is aligned"
                );
                (buf.as_mut_ptr(), Dest::Owned { ticket, buf })
            }
        };
        let ring = self.ring.as_mut().expect("the queue's ring");
        // The engine's page reads (a stream's, into slab images) use what the ring registered;
        // the others read as fio does: a plain READ naming the file.
        let index = match &dest {
            Dest::Owned { buf, .. } => self.fixed.buffer_index(ring, buf),
            _ => None,
        };
        let on_fixed_file = self.fixed.file && matches!(dest, Dest::Owned { .. });
        let offset = r.page * self.page_bytes as u64;
        let fd = self.file.as_raw_fd();
        let e =
            read_entry(fd, on_fixed_file, ptr, r.len as u32, offset, index).user_data(slot as u64);
        // SAFETY: the read's buffer (bounce buffer `slot`, the caller's, borrowed for the
        // whole `run_queue`, or a stream read's own, held in its slot) is neither touched nor
        // freed while it is in flight: `run_queue` returns only once every read is reaped, a
        // stream's slot gives its buffer back only when reaped, and every other use of the ring
        // first reaps the stream's; else the device is poisoned (bounce and stream buffers:
        // leaked with the ring) or the process aborts (a caller's buffer in flight). The fd
        // lives as long as the device.
        let mut pushed = unsafe { ring.submission().push(&e) }.is_ok();
        for _ in 0..MAX_ENTER_FAILURES {
            if pushed {
                break;
            }
            // The submission ring holds as many entries as the queue has slots, and a stream's
            // priority read is one more: submit those waiting first (a failure shows as a
            // full ring again).
            let _ = ring.submit();
            // SAFETY: as above.
            pushed = unsafe { ring.submission().push(&e) }.is_ok();
        }
        if !pushed {
            self.not_issued(q, slot, dest);
            return;
        }
        q.slots[slot] = Some((dest, r.len));
        q.in_flight += 1;
        self.fixed.reads += u64::from(index.is_some());
        self.stats.read_ios += 1;
        self.stats.pages_read += (r.len / self.page_bytes) as u64;
    }

    /// A read that found no room in the submission ring: an error, its slot free again, a
    /// stream read's buffer back to the stream.
    fn not_issued(&mut self, q: &mut Queue, slot: usize, dest: Dest) {
        let err = || {
            let why = std::io::Error::other("the submission ring stayed full");
            io_err(&self.path, "io_uring_enter", why)
        };
        if let Dest::Owned { ticket, buf } = dest {
            self.stream.finished.push((ticket, buf));
        }
        if slot == q.depth {
            q.priority_done = Some(Err(err()));
        } else {
            q.first_err.get_or_insert_with(err);
            q.free.push(slot);
        }
    }

    /// Enter the kernel (submit, and when `wait` wait for one completion) and finish every
    /// read completed; without `wait` and nothing to submit, no system call (completions are
    /// read from the shared ring). False once the queue cannot be drained (the device is then
    /// poisoned).
    fn reap(&mut self, q: &mut Queue, wait: bool) -> bool {
        let ring = self.ring.as_mut().expect("the queue's ring");
        // A ring set up with TASKRUN_FLAG (RingSetup::CoopTaskrun, DeferTaskrun) flags
        // completions the kernel holds until this thread enters it; never set otherwise.
        if wait || !ring.submission().is_empty() || ring.submission().taskrun() {
            let reverse = self.enter_faults.reverse_completions;
            let want = match (wait, reverse) {
                (false, _) => 0,
                (true, true) => q.in_flight,
                (true, false) => 1,
            };
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
        }
        let ring = self.ring.as_mut().expect("the queue's ring");
        let mut reaped = std::mem::take(&mut self.done);
        reaped.clear();
        reaped.extend(
            ring.completion()
                .map(|c| (c.user_data() as usize, c.result())),
        );
        if self.enter_faults.reverse_completions {
            reaped.reverse();
        }
        for &(slot, res) in &reaped {
            let (dest, len) = q.slots[slot].take().expect("a completion of a slot in use");
            if slot == q.depth {
                let r = self.check_completion(res, len);
                self.deliver(slot, dest, len, r.is_ok());
                q.priority_done = Some(r);
                q.in_flight -= 1;
                continue;
            }
            let ok = match self.check_completion(res, len) {
                Ok(()) => true,
                Err(e) => {
                    q.first_err.get_or_insert(e);
                    false
                }
            };
            self.deliver(slot, dest, len, ok);
            q.free.push(slot);
            q.in_flight -= 1;
            q.done += 1;
        }
        self.done = reaped;
        true
    }

    /// A completed read's bytes to where they go (`ok`: the read transferred them all); a
    /// stream read's buffer goes back to the stream either way.
    fn deliver(&mut self, slot: usize, dest: Dest, len: usize, ok: bool) {
        match dest {
            Dest::Copy(p) if ok => {
                let b = stage(&mut self.bounce, slot, len);
                // SAFETY: `p` is the caller's buffer of `len` bytes, borrowed mutably for the
                // whole `run_queue` and not aliased by the bounce buffer.
                unsafe { std::ptr::copy_nonoverlapping(b.as_ptr(), p, len) };
            }
            Dest::Owned { ticket, buf } => self.stream.finished.push((ticket, buf)),
            _ => {}
        }
    }

    /// The queue cannot be drained: poison the device, or abort if the kernel may still
    /// write a caller's buffer.
    fn give_up(&mut self, q: &Queue, reason: &str) {
        let msg = format!(
            "{} queued reads in flight; io_uring_enter failed {} times in a row: {reason}",
            q.in_flight, q.failures_in_row
        );
        if q.slots
            .iter()
            .flatten()
            .any(|(d, _)| matches!(d, Dest::Direct))
        {
            eprintln!(
                "{}: {msg}; the kernel may still write the caller's buffers: aborting",
                self.path.display()
            );
            std::process::abort();
        }
        self.poisoned = Some(msg);
    }
}

impl FileDevice {
    /// Wait for the stream's reads in flight (their results kept for `read_finish`; those
    /// pending stay pending): any other use of the ring comes after them.
    pub(crate) fn stream_settle(&mut self) {
        if let Some(r) = self.reader.as_mut() {
            r.settle();
        }
        if self.poisoned.is_some() {
            return;
        }
        let Some(mut q) = self.stream.queue.take() else {
            return;
        };
        while q.in_flight > 0 && self.reap(&mut q, true) {}
        self.stream.queue = Some(q);
    }

    /// Whether the stream has reads pending or in flight.
    pub(crate) fn stream_busy(&self) -> bool {
        self.stream.queue.as_ref().is_some_and(|q| q.in_flight > 0)
            || !self.stream.pending.is_empty()
    }

    /// Read `page` into `buf` (its extent checked) past the stream's waiting reads while they
    /// run: one read more than the stream's depth, issued at once, the stream's queue kept
    /// full while it is awaited (an index page a scan needs now, while its heap reads run
    /// ahead). A synchronous read instead would wait behind the reads in flight with none
    /// issued meanwhile: the queue would drain.
    pub(crate) fn stream_read_now(&mut self, page: PageNo, buf: &mut [u8]) -> Result<(), DevError> {
        let mut q = self.stream.queue.take().expect("a busy stream has a queue");
        let (slot, len) = (q.depth, buf.len());
        let into = Target::Caller(buf.as_mut_ptr());
        q.priority_done = None;
        self.issue_in(&mut q, slot, QueuedRead { page, len, into });
        // Submitted alone first: the stream's free slots may then fill the submission ring
        // (as many entries as slots) after it.
        let mut live = self.reap(&mut q, false);
        while live && q.priority_done.is_none() {
            self.stream_issue(&mut q);
            live = self.reap(&mut q, true);
        }
        let r = q.priority_done.take();
        self.stream.queue = Some(q);
        r.unwrap_or_else(|| self.check_usable())
    }

    /// Issue pending stream reads into the free slots of `q` (none after an error).
    fn stream_issue(&mut self, q: &mut Queue) -> bool {
        let mut issued = false;
        while q.first_err.is_none() && !q.free.is_empty() {
            let Some((ticket, page, buf)) = self.stream.pending.pop_front() else {
                break;
            };
            let len = buf.len();
            let into = Target::Owned { ticket, buf };
            self.issue(q, QueuedRead { page, len, into });
            issued = true;
        }
        issued
    }

    /// Take the completions that arrived, issue what waits and submit it, never waiting.
    fn stream_pump(&mut self) {
        let Some(mut q) = self.stream.queue.take() else {
            return;
        };
        if self.poisoned.is_none() && self.reap(&mut q, false) && self.stream_issue(&mut q) {
            self.reap(&mut q, false);
        }
        self.stream.queue = Some(q);
    }

    /// The finished reads below `until` to `out` in ticket order; after an error (kept in the
    /// queue, or a poisoned device) every buffer the stream still holds and the error. The
    /// queue is dropped once nothing is pending or in flight (a poisoned one is leaked: the
    /// kernel may still write its buffers).
    fn stream_hand_back(
        &mut self,
        until: u64,
        out: &mut Vec<(u64, PageBuf)>,
    ) -> Result<(), DevError> {
        let st = &mut self.stream;
        let err = st.queue.as_mut().and_then(|q| q.first_err.take());
        let err = err.or_else(|| {
            self.poisoned
                .as_ref()
                .map(|_| self.check_usable().unwrap_err())
        });
        let st = &mut self.stream;
        let start = out.len();
        if err.is_some() {
            out.extend(st.pending.drain(..).map(|(t, _, b)| (t, b)));
            out.append(&mut st.finished);
        } else {
            take_below(&mut st.finished, until, out);
        }
        out[start..].sort_unstable_by_key(|r| r.0);
        let idle = st
            .queue
            .as_ref()
            .is_some_and(|q| q.in_flight == 0 && st.pending.is_empty());
        if idle || err.is_some() {
            match st.queue.take() {
                Some(q) if q.in_flight > 0 => std::mem::forget(q),
                _ => {}
            }
        }
        err.map_or(Ok(()), Err)
    }
}

impl FileDevice {
    /// Start stream read `ticket` (the next ticket) without submitting it: pending until
    /// `stream_pump`, `stream_wait_some` or `read_finish` issues it.
    pub(super) fn stream_start(
        &mut self,
        ticket: u64,
        page: PageNo,
        mut buf: PageBuf,
        depth: usize,
    ) {
        let depth = depth.clamp(1, self.opts.queue_depth.max(1) as usize);
        let mut q = self
            .stream
            .queue
            .take()
            .unwrap_or_else(|| Queue::new(depth));
        let usable = self.check_usable().and_then(|_| self.ring().map(|_| ()));
        match usable {
            Err(e) => {
                q.first_err.get_or_insert(e);
                self.stream.finished.push((ticket, buf));
            }
            // O_DIRECT cannot read into it: read it now, past the queue (no ring, no slot).
            Ok(()) if !aligned(buf.as_mut_ptr()) => {
                let len = buf.len();
                let r = check_extent(page, len, self.page_bytes, self.capacity_pages)
                    .and_then(|_| self.pread(page, &mut buf));
                self.stats.read_ios += 1;
                self.stats.pages_read += (len / self.page_bytes) as u64;
                if let Err(e) = r {
                    q.first_err.get_or_insert(e);
                }
                self.stream.finished.push((ticket, buf));
            }
            Ok(()) if q.first_err.is_some() => self.stream.finished.push((ticket, buf)),
            Ok(()) => self.stream.pending.push_back((ticket, page, buf)),
        }
        self.stream.queue = Some(q);
    }

    /// Issue what is pending, wait for at least one read in flight to complete, then issue
    /// and submit what waits at once (fio's loop); returns at once with nothing in flight.
    pub(super) fn stream_wait_some(&mut self) {
        let Some(mut q) = self.stream.queue.take() else {
            return;
        };
        if self.poisoned.is_none() {
            self.stream_issue(&mut q);
            if q.in_flight > 0 && self.reap(&mut q, true) && self.stream_issue(&mut q) {
                self.reap(&mut q, false);
            }
        }
        self.stream.queue = Some(q);
    }

    /// Every finished read to `out`, in any order; after an error (or poisoned) every buffer
    /// the stream holds and the error, once the reads in flight are reaped (see
    /// [`ReadStream::read_finish`]).
    pub(super) fn stream_take(&mut self, out: &mut Vec<(u64, PageBuf)>) -> Result<(), DevError> {
        let failed = self.poisoned.is_some()
            || self
                .stream
                .queue
                .as_ref()
                .is_some_and(|q| q.first_err.is_some());
        if failed {
            self.read_finish(u64::MAX, out)
        } else {
            self.stream_hand_back(u64::MAX, out)
        }
    }
}

impl ReadStream for FileDevice {
    fn read_start(&mut self, page: PageNo, buf: PageBuf, depth: usize) -> u64 {
        if self.opts.read_thread {
            return self.threaded_start(page, buf, depth);
        }
        let ticket = self.stream.next_ticket;
        self.stream.next_ticket += 1;
        self.stream_start(ticket, page, buf, depth);
        self.stream_pump();
        ticket
    }

    fn read_poll(&mut self) {
        // A reader thread issues on its own: nothing to do here.
        if !self.opts.read_thread {
            self.stream_pump();
        }
    }

    fn read_finish(&mut self, until: u64, out: &mut Vec<(u64, PageBuf)>) -> Result<(), DevError> {
        if self.opts.read_thread {
            return self.threaded_finish(until, out);
        }
        while let Some(mut q) = self.stream.queue.take() {
            self.stream_issue(&mut q);
            let failed = q.first_err.is_some() || self.poisoned.is_some();
            let wait = if failed {
                q.in_flight > 0 && self.poisoned.is_none()
            } else {
                self.stream.outstanding_below(&q, until)
            };
            let progressed = wait && self.reap(&mut q, true);
            self.stream.queue = Some(q);
            if !progressed {
                break;
            }
        }
        self.stream_hand_back(until, out)
    }
}

/// Move the reads of `finished` with tickets below `until` to `out` (in no order).
pub(super) fn take_below(
    finished: &mut Vec<(u64, PageBuf)>,
    until: u64,
    out: &mut Vec<(u64, PageBuf)>,
) {
    let mut i = 0;
    while i < finished.len() {
        if finished[i].0 < until {
            out.push(finished.swap_remove(i));
        } else {
            i += 1;
        }
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
        into: Target::Caller(buf.as_mut_ptr()),
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
            into: Target::Discard,
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
        device_with(dir, crate::RingSetup::default())
    }

    /// A device of `PAGES` written pages whose ring is set up as `ring_setup`.
    fn device_with(dir: &std::path::Path, ring_setup: crate::RingSetup) -> FileDevice {
        let o = FileOptions {
            queue_depth: 64,
            ring_setup,
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
            setup in proptest::sample::select(crate::RingSetup::ALL.to_vec()),
        ) {
            let dir = tempfile::tempdir_in(env!("CARGO_MANIFEST_DIR")).unwrap();
            let mut dev = device_with(dir.path(), setup);
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

    /// Stream reads of `pages` at `depth`, finished in the `cuts` (ticket counts, ascending)
    /// and then to the end; each page's bytes in start order.
    fn streamed(
        dev: &mut FileDevice,
        pages: &[u64],
        depth: usize,
        cuts: &[usize],
    ) -> Result<Vec<Vec<u8>>, (DevError, usize)> {
        let first = dev.stream.next_ticket;
        let mut out = Vec::new();
        let mut cuts = cuts.iter().map(|&c| first + c as u64).peekable();
        for (i, &p) in pages.iter().enumerate() {
            let t = dev.read_start(p, PageBuf::zeroed(PB), depth);
            assert_eq!(t, first + i as u64, "tickets count up");
            while let Some(c) = cuts.next_if(|&c| c <= t) {
                dev.read_finish(c, &mut out).map_err(|e| (e, out.len()))?;
            }
            if i % 3 == 0 {
                dev.read_poll();
            }
        }
        dev.read_finish(u64::MAX, &mut out)
            .map_err(|e| (e, out.len()))?;
        let tickets: Vec<u64> = out.iter().map(|r| r.0).collect();
        let want: Vec<u64> = (first..first + pages.len() as u64).collect();
        assert_eq!(
            tickets, want,
            "every read handed back once, in ticket order"
        );
        Ok(out.into_iter().map(|(_, b)| b.to_vec()).collect())
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(24))]
        /// Reads kept in flight across calls return exactly what synchronous reads return,
        /// however the calls that finish them cut the stream, at any depth and completion
        /// order; the queue is empty after each run.
        #[test]
        fn streamed_reads_return_what_synchronous_reads_return(
            pages in proptest::collection::vec(0..PAGES, 0..150),
            depth in 1usize..80,
            cuts in proptest::collection::btree_set(0usize..150, 0..6),
            reverse in any::<bool>(),
            setup in proptest::sample::select(crate::RingSetup::ALL.to_vec()),
        ) {
            let dir = tempfile::tempdir_in(env!("CARGO_MANIFEST_DIR")).unwrap();
            let mut dev = device_with(dir.path(), setup);
            dev.enter_faults.reverse_completions = reverse;
            let cuts: Vec<usize> = cuts.into_iter().collect();
            for _ in 0..2 {
                let before = dev.stats().read_ios;
                let got = streamed(&mut dev, &pages, depth, &cuts).unwrap();
                prop_assert_eq!(dev.stats().read_ios - before, pages.len() as u64);
                prop_assert!(dev.stream.queue.is_none() && dev.stream.finished.is_empty());
                prop_assert_eq!(&got, &synchronous(&mut dev, &pages));
            }
        }
    }

    /// A stream's reads complete by polling alone, never waiting, under every ring setup: a
    /// ring that holds completions until the thread enters the kernel (coop, defer) is entered
    /// when it flags them.
    #[test]
    fn polling_alone_finishes_a_streams_reads_under_every_ring_setup() {
        let dir = tempfile::tempdir_in(env!("CARGO_MANIFEST_DIR")).unwrap();
        for setup in crate::RingSetup::ALL {
            let mut dev = device_with(dir.path(), setup);
            let pages: Vec<u64> = (0..40).collect();
            for &p in &pages {
                dev.read_start(p, PageBuf::zeroed(PB), 16);
            }
            // Bounded: 20,000 polls a millisecond apart (the disk needs far less).
            let mut polls = 0;
            while dev.stream.finished.len() < pages.len() && polls < 20_000 {
                dev.read_poll();
                std::thread::sleep(std::time::Duration::from_millis(1));
                polls += 1;
            }
            assert_eq!(
                dev.stream.finished.len(),
                pages.len(),
                "{setup:?}: every read finished by polling"
            );
            let mut out = Vec::new();
            dev.read_finish(u64::MAX, &mut out).unwrap();
            for (t, b) in &out {
                assert!(
                    b.to_vec() == page_image(pages[*t as usize]),
                    "{setup:?} page {t}"
                );
            }
            drop(dev);
        }
    }

    /// A single-issuer ring serves only the thread that created it: a device moved to another
    /// thread reads there on a new ring (and back again).
    #[test]
    fn a_device_moved_to_another_thread_reads_there_under_every_ring_setup() {
        for setup in crate::RingSetup::ALL {
            // A file per setup: a single-issuer ring left behind on another thread keeps its
            // fixed file (and the lock) until the kernel tears it down.
            let dir = tempfile::tempdir_in(env!("CARGO_MANIFEST_DIR")).unwrap();
            let mut dev = device_with(dir.path(), setup);
            let pages: Vec<u64> = (0..PAGES).rev().collect();
            let here = pipelined(&mut dev, &pages, 16, true).unwrap();
            let (mut dev, there) = std::thread::spawn(move || {
                let got = pipelined(&mut dev, &pages, 16, true)
                    .map(|g| (g, streamed(&mut dev, &pages, 8, &[5])));
                (dev, got)
            })
            .join()
            .unwrap();
            let (there, streamed_there) = there.unwrap_or_else(|e| panic!("{setup:?}: {e}"));
            assert_eq!(here, there, "{setup:?}");
            assert_eq!(
                streamed_there.map_err(|e| e.0.to_string()),
                Ok(here.clone()),
                "{setup:?}"
            );
            let pages: Vec<u64> = (0..PAGES).rev().collect();
            assert_eq!(
                pipelined(&mut dev, &pages, 16, true).unwrap(),
                here,
                "{setup:?}: back"
            );
        }
    }

    #[test]
    fn a_stream_error_mid_way_is_named_drains_the_queue_and_hands_every_buffer_back() {
        let dir = tempfile::tempdir_in(env!("CARGO_MANIFEST_DIR")).unwrap();
        let mut dev = device(dir.path());
        let pages: Vec<u64> = (1..40).chain([PAGES]).chain(41..80).collect();
        let (e, handed_back) = streamed(&mut dev, &pages, 8, &[10]).unwrap_err();
        assert!(
            matches!(e, DevError::OutOfRange { page: PAGES, .. }),
            "{e:?}"
        );
        assert_eq!(handed_back, pages.len(), "every buffer comes back");
        assert!(dev.stream.queue.is_none(), "the queue drained");
        dev.enter_faults.after_submit = 1;
        let (e, handed_back) = streamed(&mut dev, &[5, 6, 7, 8, 9], 4, &[]).unwrap_err();
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
        assert_eq!(handed_back, 5);
        let got = streamed(&mut dev, &[9, 10, 11], 2, &[1]).expect("usable after an error");
        assert!(got
            .iter()
            .zip([9, 10, 11])
            .all(|(b, p)| b == &page_image(p)));
    }

    #[test]
    fn other_io_waits_for_the_streams_reads_and_keeps_their_results() {
        let dir = tempfile::tempdir_in(env!("CARGO_MANIFEST_DIR")).unwrap();
        let mut dev = device(dir.path());
        let first = dev.stream.next_ticket;
        for p in 0..20 {
            dev.read_start(p, PageBuf::zeroed(PB), 4);
        }
        // A read while the stream runs jumps its queue (the stream's queue kept full).
        let mut b = vec![0u8; PB];
        dev.read(60, &mut b).unwrap();
        assert!(b == page_image(60));
        // A synchronous batch and a queued read rate share the ring with the stream.
        let got = pipelined(&mut dev, &[30, 31, 32], 2, true).unwrap();
        assert!(got[2] == page_image(32));
        assert_eq!(dev.read_queued(&mut (40..50u64), 3).unwrap(), 10);
        let mut out = Vec::new();
        dev.read_finish(first + 20, &mut out).unwrap();
        assert_eq!(out.len(), 20);
        for (t, b) in &out {
            assert!(b[..] == page_image(t - first)[..], "ticket {t}");
        }
    }

    /// A queue as deep as the ring, every slot's read waiting for submission, and the
    /// stream's priority read one more: the waiting ones are submitted to make room, and
    /// every read lands in its own buffer.
    #[test]
    fn one_read_more_than_the_ring_holds_is_submitted_after_making_room() {
        let dir = tempfile::tempdir_in(env!("CARGO_MANIFEST_DIR")).unwrap();
        let mut dev = device(dir.path());
        dev.ring().unwrap();
        let mut q = Queue::new(64);
        let mut bufs: Vec<super::super::AlignedBuf> =
            (0..65).map(|_| super::super::AlignedBuf::new(PB)).collect();
        for (i, b) in bufs.iter_mut().enumerate() {
            let into = Target::Caller(b.slice(PB).as_mut_ptr());
            let r = QueuedRead {
                page: i as u64,
                len: PB,
                into,
            };
            match i {
                64 => dev.issue_in(&mut q, 64, r),
                _ => dev.issue(&mut q, r),
            }
        }
        while q.in_flight > 0 {
            assert!(dev.reap(&mut q, true));
        }
        assert!(q.first_err.is_none() && matches!(q.priority_done, Some(Ok(()))));
        for (i, b) in bufs.iter_mut().enumerate() {
            assert!(b.slice(PB)[..] == page_image(i as u64)[..], "page {i}");
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

#[cfg(test)]
mod fixed_tests {
    use super::*;
    use crate::{FileOptions, WriteHint};
    use proptest::prelude::*;

    const PAGES: u64 = 96;

    fn image(p: u64, pb: usize) -> Vec<u8> {
        (0..pb).map(|i| (p as usize * 13 + i / 7) as u8).collect()
    }

    fn opts(fixed: bool, pb: usize) -> FileOptions {
        FileOptions {
            queue_depth: 64,
            page_bytes: pb,
            fixed_buffers: fixed,
            fixed_file: fixed,
            ..FileOptions::default()
        }
    }

    /// Stream reads of `pages` at `depth` (all started, then finished at once), each into a
    /// new image; the images in start order.
    fn stream(dev: &mut FileDevice, pages: &[u64], depth: usize) -> Result<Vec<PageBuf>, DevError> {
        let pb = dev.page_bytes();
        let first = dev.stream.next_ticket;
        for &p in pages {
            dev.read_start(p, PageBuf::zeroed(pb), depth);
        }
        let mut out = Vec::new();
        let r = dev.read_finish(u64::MAX, &mut out);
        assert_eq!(out.len(), pages.len(), "every buffer handed back");
        assert!(out.iter().enumerate().all(|(i, r)| r.0 == first + i as u64));
        r.map(|_| out.into_iter().map(|r| r.1).collect())
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(16))]
        /// Reads through fixed buffers and the fixed file return the same bytes as plain reads
        /// of the same pages (random offsets, repeats, any depth, 4 and 8 KiB pages, images
        /// over several slabs, so several buffer indices); the read ceiling's reads stay plain.
        #[test]
        fn fixed_buffer_reads_return_what_plain_reads_return(
            pages in proptest::collection::vec(0..PAGES, 1..200),
            depth in 1usize..64,
            eight_kib in any::<bool>(),
        ) {
            let pb = if eight_kib { 8192 } else { 4096 };
            let dir = tempfile::tempdir_in(env!("CARGO_MANIFEST_DIR")).unwrap();
            let path = dir.path().join("dev");
            {
                let mut dev = FileDevice::create(&path, PAGES, pb, opts(false, pb)).unwrap();
                for p in 0..PAGES {
                    dev.write(p, &image(p, pb), WriteHint::NONE).unwrap();
                }
                let plain = stream(&mut dev, &pages, depth).unwrap();
                prop_assert_eq!(dev.fixed_reads(), 0);
                for (b, &p) in plain.iter().zip(&pages) {
                    prop_assert!(b[..] == image(p, pb)[..], "plain page {}", p);
                }
            }
            let mut dev = FileDevice::open(&path, opts(true, pb)).unwrap();
            let fixed = stream(&mut dev, &pages, depth).unwrap();
            prop_assert_eq!(dev.fixed_refused(), None);
            prop_assert_eq!(dev.fixed_reads(), pages.len() as u64);
            for (b, &p) in fixed.iter().zip(&pages) {
                prop_assert!(b[..] == image(p, pb)[..], "fixed page {}", p);
            }
            dev.read_queued(&mut pages.iter().copied(), depth).unwrap();
            prop_assert_eq!(dev.fixed_reads(), pages.len() as u64, "the ceiling reads plainly");
        }
    }

    /// A device that read through the fixed file gives the file (and its lock) back when it
    /// is dropped: this process can open it for writing again at once, over and over.
    /// Left to the kernel's deferred teardown of the ring, the registered file keeps the
    /// `flock` and the reopen finds this process holding it ("open twice").
    #[test]
    fn a_dropped_device_gives_its_fixed_file_and_lock_back_at_once() {
        let pb = 4096;
        let dir = tempfile::tempdir_in(env!("CARGO_MANIFEST_DIR")).unwrap();
        let path = dir.path().join("dev");
        let mut dev = FileDevice::create(&path, PAGES, pb, opts(true, pb)).unwrap();
        for p in 0..PAGES {
            dev.write(p, &image(p, pb), WriteHint::NONE).unwrap();
        }
        for round in 0..20u64 {
            let p = round % PAGES;
            let got = stream(&mut dev, &[p], 1).unwrap();
            assert!(got[0][..] == image(p, pb)[..], "round {round}");
            assert!(dev.fixed_reads() > 0 && dev.fixed_refused().is_none());
            drop(dev);
            dev = FileDevice::open(&path, opts(true, pb))
                .unwrap_or_else(|e| panic!("reopen {round}: {e}"));
        }
    }

    /// More images in flight than one slab holds, each slab's image read at its own buffer
    /// index: an index naming another slab (or none) makes the kernel refuse the read
    /// (EFAULT) or read into another image.
    #[test]
    fn each_image_is_read_through_its_own_slabs_buffer_index() {
        let pb = 4096;
        let dir = tempfile::tempdir_in(env!("CARGO_MANIFEST_DIR")).unwrap();
        let mut dev =
            FileDevice::create(&dir.path().join("dev"), PAGES, pb, opts(true, pb)).unwrap();
        for p in 0..PAGES {
            dev.write(p, &image(p, pb), WriteHint::NONE).unwrap();
        }
        // More images held at once than a slab of either backing holds (a huge slab: 2 MiB).
        let held = (2 << 20) / pb + 1;
        let pages: Vec<u64> = (0..PAGES)
            .rev()
            .chain(0..PAGES)
            .cycle()
            .take(held)
            .collect();
        let got = stream(&mut dev, &pages, 64).unwrap();
        let slabs: std::collections::BTreeSet<u32> =
            got.iter().filter_map(|b| b.slab_id()).collect();
        assert!(slabs.len() >= 2, "images span slabs: {slabs:?}");
        assert_eq!(dev.fixed_reads(), pages.len() as u64);
        for (b, &p) in got.iter().zip(&pages) {
            assert!(
                b[..] == image(p, pb)[..],
                "page {p} (slab {:?})",
                b.slab_id()
            );
        }
    }

    /// Errors on the fixed path are named as on the plain one: a short read (the file cut
    /// under the device), a page out of range, a failed enter; the device reads on after each.
    #[test]
    fn fixed_read_errors_are_named_and_the_device_reads_on() {
        let pb = 8192;
        let dir = tempfile::tempdir_in(env!("CARGO_MANIFEST_DIR")).unwrap();
        let mut dev =
            FileDevice::create(&dir.path().join("dev"), PAGES, pb, opts(true, pb)).unwrap();
        for p in 0..PAGES {
            dev.write(p, &image(p, pb), WriteHint::NONE).unwrap();
        }
        dev.file.set_len((PAGES - 2) * pb as u64).unwrap();
        let e = stream(&mut dev, &[1, PAGES - 1, 2], 4)
            .err()
            .expect("an error");
        assert!(
            matches!(
                e,
                DevError::ShortTransfer {
                    got_bytes: 0,
                    expected_bytes: 8192,
                    ..
                }
            ),
            "{e:?}"
        );
        assert!(
            dev.fixed_reads() > 0,
            "the short read went through a fixed buffer"
        );
        let e = stream(&mut dev, &[3, PAGES, 4], 4).err().expect("an error");
        assert!(
            matches!(e, DevError::OutOfRange { page: PAGES, .. }),
            "{e:?}"
        );
        dev.enter_faults.after_submit = 1;
        let e = stream(&mut dev, &[5, 6, 7], 2).err().expect("an error");
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
        let got = stream(&mut dev, &[9, 10], 2).expect("usable after the errors");
        assert!(got[0][..] == image(9, pb)[..] && got[1][..] == image(10, pb)[..]);
    }
}
