//! Reads ahead of their use: windows of pages whose misses are read through the device's
//! [`blockdev::ReadStream`], the next windows' reads started before this window's pages are
//! used, so the device's queue never drains between windows (a batched scan on a file: fio's
//! `--iodepth` over the whole scan).
//!
//! Model: [`Pager::fetch_ahead`] pins a window's pages as [`Pager::fetch_many`] does — resident
//! ones at once, a new frame per miss, mapped at once (a later window asking for a page still
//! in flight pins the same frame) — and starts the misses' reads; [`Pager::fetch_next`] hands
//! back the oldest window's frames once its reads are done. A frame being read is pinned and
//! holds no image (its buffer is the device's until the read is done), so it is never evicted
//! nor read; only the window that started it, or a later one, hands it out, after its reads.
//! Without a stream (a simulated device) or with a flash extension, `fetch_ahead` reads the
//! window at once ([`Pager::fetch_many_queued`]).
//!
//! A page read is checked once, not once per use: [`Pager::checked_form`] keeps the result
//! of a caller's check (a heap page's seal and record count) as the frame's decoded form,
//! which the frame drops whenever its image changes or leaves (rewritten, evicted, reused).
//!
//! Invariants: `reading` lists exactly the frames whose reads are started and not finished,
//! in ticket order; after an error no window remains, every frame of a failed read is freed
//! and unmapped, and every other pin a window took is released.

use super::{FrameId, Pager};
use crate::error::EngineError;
use blockdev::PageBuf;
use std::any::Any;
use std::collections::VecDeque;
use std::rc::Rc;

/// The windows started and not yet handed back.
#[derive(Default)]
pub(in crate::pager) struct ReadAhead {
    windows: VecDeque<Window>,
    /// New frames whose reads are started and not finished: (ticket, frame), in ticket order.
    reading: VecDeque<(u64, FrameId)>,
    /// Buffers handed back by the stream (kept to avoid an allocation per window).
    done: Vec<(u64, PageBuf)>,
    /// A window's new frames to read, (page, frame) (kept to avoid an allocation per window).
    starts: Vec<(u64, FrameId)>,
}

struct Window {
    /// One pinned frame per page asked for, in order.
    frames: Vec<FrameId>,
    /// The stream's tickets below this include the window's reads (None: nothing to wait for).
    until: Option<u64>,
}

impl Pager {
    /// Pin every page of `pages` (one pin per entry, as [`Pager::fetch_many`]) and start
    /// reading the misses, at most `depth` in flight, without waiting for them: a window,
    /// handed back by [`Pager::fetch_next`] in the order started. On an error every window is
    /// abandoned (see [`Pager::fetch_next`]).
    pub fn fetch_ahead(&mut self, pages: &[u64], depth: usize) -> Result<(), EngineError> {
        if self.ext.is_some() || self.io.dev.read_stream().is_none() {
            let frames = self.fetch_many_queued(pages, depth)?;
            let w = Window {
                frames,
                until: None,
            };
            self.ahead.windows.push_back(w);
            return Ok(());
        }
        let mut w = Window {
            frames: Vec::with_capacity(pages.len()),
            until: None,
        };
        // The frames first, then the reads, in the same order: the device clock is read
        // once around the window's read starts, not twice per read (two clock reads per page
        // were 2 % of a batched scan's CPU on a file).
        let mut starts = std::mem::take(&mut self.ahead.starts);
        starts.clear();
        let mut failed = None;
        for &p in pages {
            if let Some(f) = self.frames.map.get(p) {
                self.pin_hit(f);
                w.frames.push(f);
                continue;
            }
            match self.take_frame(p, p) {
                Ok(f) => {
                    // Mapped now, so that the page asked for again in this window is a hit.
                    self.frames.map.insert(p, f);
                    starts.push((p, f));
                    w.frames.push(f);
                }
                Err(e) => {
                    failed = Some(e);
                    break;
                }
            }
        }
        if !starts.is_empty() {
            let t0 = self.io.dev.now_ns();
            for &(p, f) in &starts {
                w.until = Some(self.start_read(p, f, depth) + 1);
            }
            self.io.stats.read_ns += self.io.dev.now_ns().saturating_sub(t0);
        }
        self.ahead.starts = starts;
        if let Some(e) = failed {
            // The reads of the frames taken before the failure are started, as they were
            // before: cancelling waits for them and frees their frames.
            self.ahead.windows.push_back(w);
            self.cancel_reads();
            return Err(e);
        }
        assert_eq!(w.frames.len(), pages.len(), "one frame per page asked for");
        self.io.stats.batches += 1;
        self.ahead.windows.push_back(w);
        Ok(())
    }

    /// Start the read of new frame `f`, mapped to `page`; returns the read's ticket. The
    /// caller times it (the device clock around a window's starts).
    fn start_read(&mut self, page: u64, f: FrameId, depth: usize) -> u64 {
        let buf = std::mem::take(&mut self.frames.slots[f].data);
        assert_eq!(buf.len(), self.page_bytes, "a frame read holds a page");
        assert_eq!(
            self.frames.map.get(page),
            Some(f),
            "frame {f} is mapped to {page}"
        );
        let stream = self.io.dev.read_stream().expect("a device with a stream");
        let ticket = stream.read_start(page, buf, depth);
        self.io.stats.misses += 1;
        self.io.stats.pages_read += 1;
        self.ahead.reading.push_back((ticket, f));
        ticket
    }

    /// The frames of the oldest window [`Pager::fetch_ahead`] started (one pinned frame per
    /// page asked for, in order), once its reads are done; later windows' reads go on
    /// meanwhile. None when no window is left. On an error (a read failed, or the device)
    /// every window is abandoned: the reads in flight are waited for, the frames of reads not
    /// done are freed, every other pin the windows took is released; the error is returned.
    pub fn fetch_next(&mut self) -> Result<Option<Vec<FrameId>>, EngineError> {
        let Some(w) = self.ahead.windows.front() else {
            return Ok(None);
        };
        if let Some(until) = w.until {
            if let Err(e) = self.finish_reads(until) {
                self.abandon_windows();
                return Err(e);
            }
        }
        Ok(self.ahead.windows.pop_front().map(|w| w.frames))
    }

    /// Take the reads that completed and issue those waiting for their turn (never waits):
    /// for a caller using a window's pages while the next windows' reads run.
    pub fn poll_reads(&mut self) {
        if !self.ahead.reading.is_empty() {
            if let Some(s) = self.io.dev.read_stream() {
                s.read_poll();
            }
        }
    }

    /// Pinned frame `f`'s image with what `check` found in it: `check` runs on the image's
    /// first use only; its result is kept as the frame's decoded form until the image changes
    /// or leaves, so a page read is checked (its crc computed) once, however many rows are
    /// read from it. A failed check keeps nothing (every use fails the same way).
    pub fn checked_form<T: Any>(
        &mut self,
        f: FrameId,
        check: impl FnOnce(&[u8]) -> Result<T, EngineError>,
    ) -> Result<(&T, &[u8]), EngineError> {
        let fr = &mut self.frames.slots[f];
        assert!(fr.pins > 0, "frame {f} read while unpinned");
        assert!(fr.image, "frame {f} (key {}) holds no page image", fr.key);
        if !fr.decoded.as_deref().is_some_and(|d| d.is::<T>()) {
            let form = check(&fr.data)?;
            fr.decoded = Some(Rc::new(form));
        }
        let fr = &self.frames.slots[f];
        let form = fr.decoded.as_deref().and_then(|d| d.downcast_ref::<T>());
        Ok((form.expect("the form checked above"), &fr.data))
    }

    /// Windows started and not yet handed back.
    pub fn windows_ahead(&self) -> usize {
        self.ahead.windows.len()
    }

    /// Drop every window not handed back: wait for their reads, release their pins (pages
    /// read stay cached, frames of failed reads are freed).
    pub fn cancel_reads(&mut self) {
        if let Some(until) = self.ahead.windows.iter().filter_map(|w| w.until).max() {
            // An error leaves the failed frames in `reading`: abandoned below.
            let _ = self.finish_reads(until);
        }
        self.abandon_windows();
    }

    /// Wait for the reads below ticket `until`; their frames get their images. On an error
    /// the buffers handed back return to their frames and `reading` is left as it was.
    fn finish_reads(&mut self, until: u64) -> Result<(), EngineError> {
        let mut done = std::mem::take(&mut self.ahead.done);
        done.clear();
        let t0 = self.io.dev.now_ns();
        let stream = self
            .io
            .dev
            .read_stream()
            .expect("reads started on a stream");
        let r = stream.read_finish(until, &mut done);
        self.io.stats.read_ns += self.io.dev.now_ns().saturating_sub(t0);
        let reading = &mut self.ahead.reading;
        for (ticket, buf) in done.drain(..) {
            let at = if r.is_ok() {
                0
            } else {
                let i = reading.partition_point(|&(t, _)| t < ticket);
                assert!(i < reading.len(), "ticket {ticket} was started here");
                i
            };
            let (t, f) = reading[at];
            assert_eq!(t, ticket, "reads are handed back in ticket order");
            let fr = &mut self.frames.slots[f];
            fr.data = buf;
            if r.is_ok() {
                fr.image = true;
                reading.pop_front();
            }
        }
        self.ahead.done = done;
        assert!(
            r.is_err() || reading.front().is_none_or(|&(t, _)| t >= until),
            "every read below {until} is finished"
        );
        Ok(r?)
    }

    /// Free the frames still in `reading` (their reads failed or were never done) and
    /// release every other pin of the windows left.
    fn abandon_windows(&mut self) {
        let failed: Vec<FrameId> = self.ahead.reading.drain(..).map(|(_, f)| f).collect();
        let windows = std::mem::take(&mut self.ahead.windows);
        for f in windows.into_iter().flat_map(|w| w.frames) {
            if !failed.contains(&f) {
                self.unpin(f);
            }
        }
        for &f in &failed {
            let fr = &mut self.frames.slots[f];
            fr.image = false;
            let key = fr.key;
            self.frames.map.remove(key);
        }
        self.frames.release(&failed);
    }
}
