//! The stores' I/O, recorded once and replayed on every run's device.
//!
//! The 32 stores' sequence of I/Os does not depend on the device under them (they read back
//! exactly what they wrote; the stream assignment and the SSD only decide where a page goes
//! and what it costs). So one pass runs the stores on a RAM device and records, per DB file,
//! every call they make on their partition (reads, writes with their hints, batches, trims,
//! flushes) and where each commit of the update phase falls; each (policy, GC mode) run then
//! replays the calls on its own partitions of its own simulated SSD, through the same file
//! placement and stream assignment, without running the stores again. The device sees the
//! same calls in the same order as if the stores ran on it (a test checks the figures are
//! equal), and the oracle's first pass is a replay of the same tape.
//!
//! Invariant: a tape is a function of the plan and the seed; replays only read it.

use blockdev::{BlockDevice, ClockKind, DevError, DevStats, Io, PageNo, WriteHint};
use std::cell::RefCell;
use std::rc::Rc;

/// One I/O of a batch.
#[derive(Clone, Copy, Debug)]
pub enum Op {
    Read {
        page: PageNo,
        pages: u32,
    },
    Write {
        page: PageNo,
        pages: u32,
        hint: WriteHint,
    },
}

/// One recorded call on DB file `file`'s partition, or a commit of the update phase.
#[derive(Clone, Debug)]
pub enum Event {
    Io {
        file: u16,
        op: Op,
    },
    Submit {
        file: u16,
        ops: Box<[Op]>,
    },
    Trim {
        file: u16,
        page: PageNo,
        pages: u64,
    },
    Flush {
        file: u16,
    },
    /// DB file `file` committed in the update phase (runs sample their counters here);
    /// `compaction_done`: the commit ended a whole-file compaction (the store's generation
    /// went up by one with it).
    Commit {
        file: u16,
        compaction_done: bool,
    },
}

/// A recording: the load's events, then the update phase's.
#[derive(Debug, Default)]
pub struct Tape {
    pub events: Vec<Event>,
    /// Events of the load (the stores' opening included); the update phase follows.
    pub load_events: usize,
    /// Pages written through the partitions (load and updates).
    pub pages_written: u64,
}

impl Tape {
    pub fn load(&self) -> &[Event] {
        &self.events[..self.load_events]
    }
    pub fn updates(&self) -> &[Event] {
        &self.events[self.load_events..]
    }
    pub fn push(&mut self, e: Event) {
        let pages = |op: &Op| match op {
            Op::Write { pages, .. } => *pages as u64,
            Op::Read { .. } => 0,
        };
        self.pages_written += match &e {
            Event::Io { op, .. } => pages(op),
            Event::Submit { ops, .. } => ops.iter().map(pages).sum(),
            _ => 0,
        };
        self.events.push(e);
    }
}

/// A device that records every call made on it into a shared tape, as DB file `file`'s.
pub struct Recording<D> {
    pub inner: D,
    pub file: u16,
    pub tape: Rc<RefCell<Tape>>,
}

fn pages_of(len: usize, page_bytes: usize) -> u32 {
    u32::try_from(len / page_bytes).expect("an I/O of at most u32::MAX pages")
}

impl<D: BlockDevice> BlockDevice for Recording<D> {
    fn page_bytes(&self) -> usize {
        self.inner.page_bytes()
    }
    fn capacity_pages(&self) -> u64 {
        self.inner.capacity_pages()
    }
    fn read(&mut self, page: PageNo, buf: &mut [u8]) -> Result<(), DevError> {
        let pages = pages_of(buf.len(), self.page_bytes());
        let op = Op::Read { page, pages };
        self.tape.borrow_mut().push(Event::Io {
            file: self.file,
            op,
        });
        self.inner.read(page, buf)
    }
    fn write(&mut self, page: PageNo, buf: &[u8], hint: WriteHint) -> Result<(), DevError> {
        let pages = pages_of(buf.len(), self.page_bytes());
        let op = Op::Write { page, pages, hint };
        self.tape.borrow_mut().push(Event::Io {
            file: self.file,
            op,
        });
        self.inner.write(page, buf, hint)
    }
    fn submit(&mut self, batch: &mut [Io<'_>]) -> Result<(), DevError> {
        let pb = self.page_bytes();
        let ops = batch
            .iter()
            .map(|io| match io {
                Io::Read { page, buf } => Op::Read {
                    page: *page,
                    pages: pages_of(buf.len(), pb),
                },
                Io::Write { page, buf, hint } => Op::Write {
                    page: *page,
                    pages: pages_of(buf.len(), pb),
                    hint: *hint,
                },
            })
            .collect();
        self.tape.borrow_mut().push(Event::Submit {
            file: self.file,
            ops,
        });
        self.inner.submit(batch)
    }
    fn trim(&mut self, page: PageNo, pages: u64) -> Result<(), DevError> {
        let e = Event::Trim {
            file: self.file,
            page,
            pages,
        };
        self.tape.borrow_mut().push(e);
        self.inner.trim(page, pages)
    }
    fn flush(&mut self) -> Result<(), DevError> {
        self.tape
            .borrow_mut()
            .push(Event::Flush { file: self.file });
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

/// Replays events on the partitions of one device (index = DB file). Buffers: zeros to write
/// (the data do not reach a result), scratch to read into.
pub struct Player<D> {
    pub parts: Vec<D>,
    page_bytes: usize,
    zeros: Vec<u8>,
    scratch: Vec<u8>,
}

impl<D: BlockDevice> Player<D> {
    pub fn new(parts: Vec<D>) -> Player<D> {
        let page_bytes = parts.first().map_or(4096, |p| p.page_bytes());
        Player {
            parts,
            page_bytes,
            zeros: Vec::new(),
            scratch: Vec::new(),
        }
    }

    fn grow(&mut self, pages: u64) {
        let bytes = pages as usize * self.page_bytes;
        if self.zeros.len() < bytes {
            self.zeros.resize(bytes, 0);
        }
        if self.scratch.len() < bytes {
            self.scratch.resize(bytes, 0);
        }
    }

    /// Replay one event (a `Commit` does nothing here).
    pub fn play(&mut self, e: &Event) -> Result<(), DevError> {
        let pb = self.page_bytes;
        match e {
            Event::Io { file, op } => {
                let pages = match op {
                    Op::Read { pages, .. } | Op::Write { pages, .. } => *pages as u64,
                };
                self.grow(pages);
                let bytes = pages as usize * pb;
                let dev = &mut self.parts[*file as usize];
                match *op {
                    Op::Read { page, .. } => dev.read(page, &mut self.scratch[..bytes]),
                    Op::Write { page, hint, .. } => dev.write(page, &self.zeros[..bytes], hint),
                }
            }
            Event::Submit { file, ops } => self.play_submit(*file, ops),
            Event::Trim { file, page, pages } => self.parts[*file as usize].trim(*page, *pages),
            Event::Flush { file } => self.parts[*file as usize].flush(),
            Event::Commit { .. } => Ok(()),
        }
    }

    fn play_submit(&mut self, file: u16, ops: &[Op]) -> Result<(), DevError> {
        let pb = self.page_bytes;
        let (mut read_pages, mut write_pages) = (0u64, 0u64);
        for op in ops {
            match op {
                Op::Read { pages, .. } => read_pages += *pages as u64,
                Op::Write { pages, .. } => write_pages = write_pages.max(*pages as u64),
            }
        }
        self.grow(read_pages.max(write_pages));
        let mut rest: &mut [u8] = &mut self.scratch;
        let mut batch = Vec::with_capacity(ops.len());
        for op in ops {
            match *op {
                Op::Read { page, pages } => {
                    let (buf, tail) = std::mem::take(&mut rest).split_at_mut(pages as usize * pb);
                    rest = tail;
                    batch.push(Io::Read { page, buf });
                }
                Op::Write { page, pages, hint } => batch.push(Io::Write {
                    page,
                    buf: &self.zeros[..pages as usize * pb],
                    hint,
                }),
            }
        }
        self.parts[file as usize].submit(&mut batch)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use blockdev::MemDevice;

    fn hint(stream: u16) -> WriteHint {
        WriteHint {
            stream,
            ..WriteHint::NONE
        }
    }

    /// Calls of every kind on two recorded devices.
    fn drive(devs: &mut [Recording<MemDevice>]) {
        let page = vec![7u8; 4096 * 3];
        devs[0].write(2, &page, hint(1)).unwrap();
        devs[1].write(0, &page[..4096], hint(2)).unwrap();
        let mut buf = vec![0u8; 4096 * 2];
        devs[0].read(2, &mut buf).unwrap();
        let (a, b) = buf.split_at_mut(4096);
        let mut batch = [
            Io::Read { page: 3, buf: a },
            Io::Write {
                page: 5,
                buf: &page[..4096],
                hint: hint(3),
            },
            Io::Read { page: 0, buf: b },
        ];
        devs[1].submit(&mut batch).unwrap();
        devs[0].trim(2, 1).unwrap();
        devs[1].flush().unwrap();
    }

    #[test]
    fn a_replay_makes_the_same_calls_as_the_recorded_run() {
        let tape = Rc::new(RefCell::new(Tape::default()));
        let mut rec: Vec<_> = (0..2)
            .map(|f| Recording {
                inner: MemDevice::new(4096, 16),
                file: f,
                tape: tape.clone(),
            })
            .collect();
        drive(&mut rec);
        let tape = tape.borrow();
        assert_eq!(tape.pages_written, 5, "3 + 1 + 1 pages written");
        let mut player = Player::new(vec![MemDevice::new(4096, 16), MemDevice::new(4096, 16)]);
        for e in &tape.events {
            player.play(e).unwrap();
        }
        for (r, p) in rec.iter().zip(&player.parts) {
            assert_eq!(r.inner.stats(), p.stats(), "the same calls, page for page");
        }
    }
}
