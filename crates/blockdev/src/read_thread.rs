//! A file device's [`crate::ReadStream`] served by a reader thread ([`FileOptions::read_thread`]):
//! the thread owns a ring of its own on the same open file and keeps `depth` reads in flight,
//! issuing a new one the moment one completes, while the caller's thread uses the pages it
//! was handed (a scan checking and decoding them). Inline, the caller's thread issues the next
//! read only when it next looks at the queue, so whatever it does between two looks delays
//! the re-issue: the page check of a batched scan (a crc over a page no cache holds) kept its
//! queue at 0.81-0.88 of fio's pace where fio's own loop does nothing else.
//!
//! Model: the caller's side ([`Reader`]) hands each read (ticket, page, buffer, depth) to the
//! thread's inbox and takes finished reads from its outbox, in any order; the thread runs the
//! device's own stream queue ([`FileDevice::stream_start`], `stream_wait_some`) on a private
//! [`FileDevice`] (a `dup` of the file: the same open description, lock and O_DIRECT).
//!
//! Invariants: every buffer handed to the thread comes back exactly once, in the outbox, or is
//! counted in `lost` (its ring could not be drained: the kernel may still write it, so it is
//! leaked, as the inline stream leaks it); `flight` holds one flag per ticket from `base`, set
//! while that ticket's buffer is the thread's. After the thread's first error no read is issued
//! until the caller's side has taken back every buffer it sent and the error (the trait's
//! contract). A thread that stops (a panic) wakes the caller, who then fails, never hangs.

use super::uring_queue::{aligned, take_below};
use super::FileDevice;
use crate::{DevError, DevStats, PageBuf, PageNo};
use std::collections::VecDeque;
use std::sync::{Arc, Condvar, Mutex, MutexGuard};
use std::thread::JoinHandle;

/// A read for the thread: (ticket, page, buffer, depth).
type Start = (u64, PageNo, PageBuf, usize);

struct Shared {
    state: Mutex<State>,
    /// The thread waits here for reads (or to stop).
    work: Condvar,
    /// The caller waits here for finished reads.
    done: Condvar,
}

#[derive(Default)]
struct State {
    inbox: VecDeque<Start>,
    outbox: Vec<(u64, PageBuf)>,
    /// The thread's first error, not yet taken by the caller.
    error: Option<DevError>,
    /// An error was posted and the caller has not yet taken back every buffer: reads in the
    /// inbox go back unread.
    failed: bool,
    /// Buffers the thread cannot give back (its ring was poisoned with them in flight).
    lost: u64,
    /// Why the thread's device refuses every operation, if it does (the thread has stopped).
    poisoned: Option<String>,
    /// The thread has ended (stopped, poisoned or panicked): nothing more comes back.
    ended: bool,
    stop: bool,
    /// The thread sleeps on `work` (the caller wakes it when it adds a read).
    sleeping: bool,
    /// The caller sleeps on `done` (the thread wakes it when it posts).
    waiting: bool,
    /// The thread's device's counts and fixed reads, as of its last post.
    stats: DevStats,
    fixed_reads: u64,
    fixed_refused: Option<String>,
}

fn lock(m: &Mutex<State>) -> MutexGuard<'_, State> {
    // A panic on the thread while it held the lock leaves the state as consistent as its
    // last post; the caller then sees `ended`.
    m.lock().unwrap_or_else(|e| e.into_inner())
}

/// The caller's side of the reader thread.
pub(crate) struct Reader {
    shared: Arc<Shared>,
    thread: Option<JoinHandle<()>>,
    /// Finished reads taken from the outbox (or never sent), not yet handed back.
    finished: Vec<(u64, PageBuf)>,
    /// `flight[i]`: ticket `base + i`'s buffer is the thread's.
    flight: VecDeque<bool>,
    base: u64,
    /// The thread's error, taken, waiting for the thread's last buffers before it is returned.
    error: Option<DevError>,
    /// The thread's device's counts, fixed reads and refusal, as of the last take.
    pub stats: DevStats,
    pub fixed_reads: u64,
    pub fixed_refused: Option<String>,
    /// Why the thread's ring was poisoned, once it was.
    pub poisoned: Option<String>,
}

impl Reader {
    /// Start a reader thread on `dev` (a device of its own on the caller's open file), whose
    /// first ticket will be `first_ticket`.
    pub(crate) fn spawn(dev: FileDevice, first_ticket: u64) -> std::io::Result<Reader> {
        assert!(!dev.opts.read_thread, "the thread's device reads inline");
        let shared = Arc::new(Shared {
            state: Mutex::new(State::default()),
            work: Condvar::new(),
            done: Condvar::new(),
        });
        let s = shared.clone();
        let thread = std::thread::Builder::new()
            .name("flashlab-reader".into())
            .spawn(move || serve(dev, s))?;
        Ok(Reader {
            shared,
            thread: Some(thread),
            finished: Vec::new(),
            flight: VecDeque::new(),
            base: first_ticket,
            error: None,
            stats: DevStats::default(),
            fixed_reads: 0,
            fixed_refused: None,
            poisoned: None,
        })
    }

    /// Hand read `ticket` to the thread (tickets come in order, one per call or `keep`).
    pub(crate) fn start(&mut self, ticket: u64, page: PageNo, buf: PageBuf, depth: usize) {
        self.track(ticket, true);
        let mut s = lock(&self.shared.state);
        s.inbox.push_back((ticket, page, buf, depth));
        if s.sleeping {
            self.shared.work.notify_one();
        }
    }

    /// Keep read `ticket`, done (or refused) on the caller's side, for `finish`.
    pub(crate) fn keep(&mut self, ticket: u64, buf: PageBuf) {
        self.track(ticket, false);
        self.finished.push((ticket, buf));
    }

    fn track(&mut self, ticket: u64, sent: bool) {
        assert_eq!(
            ticket,
            self.base + self.flight.len() as u64,
            "tickets reach the reader in order"
        );
        self.flight.push_back(sent);
        self.settle_front();
    }

    /// Drop the flags of the oldest tickets no longer the thread's.
    fn settle_front(&mut self) {
        while self.flight.front() == Some(&false) {
            self.flight.pop_front();
            self.base += 1;
        }
    }

    /// Tickets whose buffers are the thread's.
    fn in_thread(&self) -> usize {
        self.flight.iter().filter(|&&f| f).count()
    }

    /// Take what the thread posted. True once nothing more can come back (the thread ended).
    fn take(&mut self, s: &mut State) -> bool {
        for (t, buf) in s.outbox.drain(..) {
            let i = t
                .checked_sub(self.base)
                .expect("a ticket sent to the thread") as usize;
            assert!(self.flight[i], "ticket {t} comes back once");
            self.flight[i] = false;
            self.finished.push((t, buf));
        }
        self.settle_front();
        if let Some(e) = s.error.take() {
            self.error.get_or_insert(e);
        }
        self.stats = s.stats;
        self.fixed_reads = s.fixed_reads;
        self.fixed_refused.clone_from(&s.fixed_refused);
        if let Some(p) = &s.poisoned {
            self.poisoned.get_or_insert_with(|| p.clone());
        }
        s.ended
    }

    /// Whether every read below `until` is back (any read at all after an error).
    fn ready(&self, until: u64) -> bool {
        if self.error.is_some() {
            return self.in_thread() == 0;
        }
        self.flight.is_empty() || self.base >= until
    }

    /// Wait until every read below `until` is back, then hand them to `out` in ticket order
    /// (after an error: every buffer, and the error). The thread ended with buffers out
    /// (poisoned, or a panic): those are lost, the rest handed back with the error.
    pub(crate) fn finish(
        &mut self,
        until: u64,
        out: &mut Vec<(u64, PageBuf)>,
    ) -> Result<(), DevError> {
        let shared = self.shared.clone();
        let mut s = lock(&shared.state);
        let mut ended = self.take(&mut s);
        while !self.ready(until) && !ended {
            s.waiting = true;
            s = shared.done.wait(s).unwrap_or_else(|e| e.into_inner());
            s.waiting = false;
            ended = self.take(&mut s);
        }
        let lost = std::mem::take(&mut s.lost);
        if self.error.is_some() || ended {
            // Every buffer is back but those lost: the thread may read again.
            s.failed = false;
        }
        drop(s);
        if ended {
            // What is still the thread's never comes back (lost with its ring or its panic).
            let out_there = self.in_thread() as u64;
            assert!(lost <= out_there, "no more lost than sent");
            self.base += self.flight.len() as u64;
            self.flight.clear();
            self.poisoned.get_or_insert_with(|| {
                format!("the reader thread stopped with {out_there} reads in flight")
            });
        }
        let start = out.len();
        let err = self.error.take();
        if err.is_some() || ended {
            out.append(&mut self.finished);
        } else {
            take_below(&mut self.finished, until, out);
        }
        out[start..].sort_unstable_by_key(|r| r.0);
        match err {
            Some(e) => Err(e),
            None if ended && self.poisoned.is_some() => Err(DevError::Poisoned {
                path: std::path::PathBuf::new(),
                reason: self.poisoned.clone().expect("checked"),
            }),
            None => Ok(()),
        }
    }

    /// Wait until the thread holds no read (their results kept for `finish`).
    pub(crate) fn settle(&mut self) {
        let shared = self.shared.clone();
        let mut s = lock(&shared.state);
        let mut ended = self.take(&mut s);
        while self.in_thread() > 0 && !ended {
            s.waiting = true;
            s = shared.done.wait(s).unwrap_or_else(|e| e.into_inner());
            s.waiting = false;
            ended = self.take(&mut s);
        }
    }
}

impl Drop for Reader {
    fn drop(&mut self) {
        self.settle();
        lock(&self.shared.state).stop = true;
        self.shared.work.notify_one();
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

/// Tells the caller the thread has ended however it ends (a panic included).
struct EndGuard(Arc<Shared>);

impl Drop for EndGuard {
    fn drop(&mut self) {
        lock(&self.0.state).ended = true;
        self.0.done.notify_all();
    }
}

/// The thread: take reads from the inbox into the device's stream, keep them in flight, post
/// each batch of completions.
fn serve(mut dev: FileDevice, shared: Arc<Shared>) {
    let _guard = EndGuard(shared.clone());
    let mut batch: VecDeque<Start> = VecDeque::new();
    let mut out: Vec<(u64, PageBuf)> = Vec::new();
    let (mut accepted, mut returned) = (0u64, 0u64);
    loop {
        let failed = {
            let mut s = lock(&shared.state);
            while s.inbox.is_empty() && !dev.stream_busy() && !s.stop {
                s.sleeping = true;
                s = shared.work.wait(s).unwrap_or_else(|e| e.into_inner());
                s.sleeping = false;
            }
            if s.stop && s.inbox.is_empty() && !dev.stream_busy() {
                return;
            }
            std::mem::swap(&mut batch, &mut s.inbox);
            s.failed
        };
        accepted += batch.len() as u64;
        for (ticket, page, buf, depth) in batch.drain(..) {
            if failed {
                out.push((ticket, buf));
            } else {
                dev.stream_start(ticket, page, buf, depth);
            }
        }
        dev.stream_wait_some();
        let r = dev.stream_take(&mut out);
        returned += out.len() as u64;
        let mut s = lock(&shared.state);
        s.outbox.append(&mut out);
        if let Err(e) = r {
            s.error.get_or_insert(e);
            s.failed = true;
        }
        s.stats = dev.stats;
        s.fixed_reads = dev.fixed.reads;
        s.fixed_refused.clone_from(&dev.fixed.refused);
        if let Some(p) = &dev.poisoned {
            // Its ring cannot be drained: what it holds stays with it; the inbox goes back.
            let inbox = std::mem::take(&mut s.inbox);
            for (ticket, _, buf, _) in inbox {
                accepted += 1;
                returned += 1;
                s.outbox.push((ticket, buf));
            }
            s.lost = accepted - returned;
            s.poisoned = Some(p.clone());
            shared.done.notify_all();
            drop(s);
            // Its buffers may still be the kernel's: leaked with the device (its Drop).
            return;
        }
        if s.waiting {
            shared.done.notify_one();
        }
    }
}

impl FileDevice {
    /// The reader thread, started on the first read of the stream.
    fn reader(&mut self) -> Result<&mut Reader, DevError> {
        if self.reader.is_none() {
            let file = self
                .file
                .try_clone()
                .map_err(|e| super::io_err(&self.path, "dup", e))?;
            let opts = crate::FileOptions {
                read_thread: false,
                ..self.opts
            };
            let dev = FileDevice::with_file(
                file,
                &self.path,
                self.capacity_pages,
                self.page_bytes,
                opts,
            )?;
            let r = Reader::spawn(dev, self.stream.next_ticket)
                .map_err(|e| super::io_err(&self.path, "spawn a reader thread", e))?;
            self.reader = Some(r);
        }
        Ok(self.reader.as_mut().expect("started above"))
    }

    /// [`ReadStream::read_start`] through the reader thread.
    pub(crate) fn threaded_start(&mut self, page: PageNo, mut buf: PageBuf, depth: usize) -> u64 {
        // The thread's first ticket is the next one: started before the ticket is taken.
        let usable = self.check_usable().and_then(|_| self.reader().map(|_| ()));
        let ticket = self.stream.next_ticket;
        self.stream.next_ticket += 1;
        let len = buf.len();
        let r = match usable {
            Err(e) => Err(e),
            Ok(()) if aligned(buf.as_mut_ptr()) => {
                self.stats.read_ios += 1;
                self.stats.pages_read += (len / self.page_bytes) as u64;
                let reader = self.reader.as_mut().expect("started above");
                reader.start(ticket, page, buf, depth);
                return ticket;
            }
            // O_DIRECT cannot read into it: read it now, here.
            Ok(()) => {
                self.stats.read_ios += 1;
                self.stats.pages_read += (len / self.page_bytes) as u64;
                crate::check_extent(page, len, self.page_bytes, self.capacity_pages)
                    .and_then(|_| self.pread(page, &mut buf))
            }
        };
        match (self.reader.as_mut(), r) {
            (Some(reader), r) => {
                reader.keep(ticket, buf);
                if let Err(e) = r {
                    reader.error.get_or_insert(e);
                }
            }
            // No thread could be started: the error alone, for `read_finish`.
            (None, r) => {
                self.stream.finished.push((ticket, buf));
                self.stream.thread_err = r.err();
            }
        }
        ticket
    }

    /// [`ReadStream::read_finish`] through the reader thread.
    pub(crate) fn threaded_finish(
        &mut self,
        until: u64,
        out: &mut Vec<(u64, PageBuf)>,
    ) -> Result<(), DevError> {
        if let Some(e) = self.stream.thread_err.take() {
            out.append(&mut self.stream.finished);
            if let Some(r) = self.reader.as_mut() {
                let _ = r.finish(u64::MAX, out);
            }
            out.sort_unstable_by_key(|r| r.0);
            return Err(e);
        }
        let Some(r) = self.reader.as_mut() else {
            return Ok(());
        };
        let res = r.finish(until, out);
        if let Some(p) = &r.poisoned {
            self.poisoned.get_or_insert_with(|| p.clone());
        }
        res.map_err(|e| match e {
            DevError::Poisoned { reason, .. } => DevError::Poisoned {
                path: self.path.clone(),
                reason,
            },
            e => e,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{BlockDevice, FileOptions, ReadStream, RingSetup};

    fn image(p: u64, pb: usize) -> Vec<u8> {
        (0..pb).map(|i| (p as usize * 31 + i * 7) as u8).collect()
    }

    fn device(dir: &std::path::Path, pages: u64, setup: RingSetup) -> FileDevice {
        let pb = 4096;
        let opts = FileOptions {
            read_thread: true,
            ring_setup: setup,
            ..FileOptions::default()
        };
        let mut d = FileDevice::create(&dir.join("t.dev"), pages, pb, opts).unwrap();
        for p in 0..pages {
            d.write(p, &image(p, pb), Default::default()).unwrap();
        }
        d
    }

    #[test]
    fn a_threaded_stream_returns_every_page_in_ticket_order_under_every_ring_setup() {
        for setup in RingSetup::ALL {
            if setup.probe().is_err() {
                continue;
            }
            let dir = tempfile::tempdir().unwrap();
            let mut d = device(dir.path(), 300, setup);
            let pages: Vec<u64> = (0..300).map(|i| (i * 97) % 300).collect();
            let mut tickets = Vec::new();
            let mut got = Vec::new();
            for (i, &p) in pages.iter().enumerate() {
                tickets.push(d.read_start(p, PageBuf::zeroed(4096), 16));
                if i % 40 == 39 {
                    d.read_finish(tickets[i - 20], &mut got).unwrap();
                }
            }
            d.read_finish(u64::MAX, &mut got).unwrap();
            assert_eq!(got.len(), pages.len(), "{setup:?}: every read back once");
            for (i, (t, buf)) in got.iter().enumerate() {
                assert_eq!(*t, tickets[i], "{setup:?}: ticket order");
                assert_eq!(&buf[..], &image(pages[i], 4096)[..], "{setup:?}: page {i}");
            }
            assert_eq!(
                d.stats().pages_read,
                300,
                "{setup:?}: one page read per start"
            );
        }
    }

    #[test]
    fn a_threaded_read_past_the_end_is_named_and_every_buffer_comes_back() {
        let dir = tempfile::tempdir().unwrap();
        let mut d = device(dir.path(), 64, RingSetup::DeferTaskrun);
        let mut n = 0;
        for p in (0..40).chain([1000]).chain(40..60) {
            d.read_start(p, PageBuf::zeroed(4096), 8);
            n += 1;
        }
        let mut got = Vec::new();
        d.read_finish(5, &mut got).unwrap();
        assert_eq!(got.len(), 5, "the reads before the bad one are fine");
        let e = d.read_finish(50, &mut got).unwrap_err();
        assert!(e.to_string().contains("1000"), "{e}");
        assert_eq!(got.len(), n, "every buffer handed back after the error");
        let tickets: Vec<u64> = got.iter().map(|r| r.0).collect();
        assert_eq!(tickets, (0..n as u64).collect::<Vec<_>>(), "each once");
        // The stream reads again after the error was handed back.
        let t = d.read_start(3, PageBuf::zeroed(4096), 8);
        let mut again = Vec::new();
        d.read_finish(t + 1, &mut again).unwrap();
        assert_eq!(&again[0].1[..], &image(3, 4096)[..]);
    }

    #[test]
    fn a_synchronous_read_and_a_write_while_the_thread_reads_see_the_file() {
        let dir = tempfile::tempdir().unwrap();
        let mut d = device(dir.path(), 128, RingSetup::DeferTaskrun);
        let tickets: Vec<u64> = (0..100)
            .map(|p| d.read_start(p, PageBuf::zeroed(4096), 32))
            .collect();
        let mut buf = vec![0u8; 4096];
        d.read(120, &mut buf).unwrap();
        assert_eq!(buf, image(120, 4096));
        d.write(121, &image(7, 4096), Default::default()).unwrap();
        d.read(121, &mut buf).unwrap();
        assert_eq!(buf, image(7, 4096));
        let mut got = Vec::new();
        d.read_finish(tickets[99] + 1, &mut got).unwrap();
        assert_eq!(got.len(), 100);
        for (p, (_, b)) in got.iter().enumerate() {
            assert_eq!(&b[..], &image(p as u64, 4096)[..]);
        }
    }
}
