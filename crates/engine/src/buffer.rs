//! The buffer pool: device pages cached in RAM frames, with pins and LRU replacement.
//!
//! Model: `capacity_pages` frames (0 allowed: a frame then lives only while pinned). A fetched
//! page is pinned until `unpin`; only unpinned frames are evicted (least recently unpinned
//! first; a dirty frame is written back first). When every frame is pinned the pool grows past
//! its capacity for the moment and shrinks back as pins are released. `fetch_many` pins a set
//! of pages and reads all its misses in ONE batch (`BlockDevice::submit`: io_uring on files,
//! overlapping dies on the simulated SSD); if the batch fails, nothing it pinned stays pinned.
//! Invariants: a page is in at most one frame; pinned frames are never evicted.

use crate::error::EngineError;
use blockdev::{BlockDevice, Io, WriteHint};
use std::collections::{BTreeMap, HashMap};

pub type FrameId = usize;

#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct PoolStats {
    pub hits: u64,
    pub misses: u64,
    /// `submit` calls made for batched misses.
    pub batches: u64,
    pub evictions: u64,
    pub writebacks: u64,
}

struct Frame {
    page: u64,
    data: Vec<u8>,
    pins: u32,
    dirty: bool,
    stamp: u64,
}

pub struct BufferPool {
    dev: Box<dyn BlockDevice>,
    capacity: usize,
    frames: Vec<Frame>,
    free: Vec<FrameId>,
    map: HashMap<u64, FrameId>,
    /// Unpinned resident frames by last-unpin stamp.
    lru: BTreeMap<u64, FrameId>,
    clock: u64,
    stats: PoolStats,
}

impl BufferPool {
    pub fn new(dev: Box<dyn BlockDevice>, capacity_pages: usize) -> BufferPool {
        BufferPool {
            dev,
            capacity: capacity_pages,
            frames: Vec::new(),
            free: Vec::new(),
            map: HashMap::new(),
            lru: BTreeMap::new(),
            clock: 0,
            stats: PoolStats::default(),
        }
    }

    pub fn page_bytes(&self) -> usize {
        self.dev.page_bytes()
    }
    pub fn device(&self) -> &dyn BlockDevice {
        self.dev.as_ref()
    }
    pub fn device_mut(&mut self) -> &mut dyn BlockDevice {
        self.dev.as_mut()
    }
    pub fn into_device(self) -> Box<dyn BlockDevice> {
        self.dev
    }
    pub fn stats(&self) -> PoolStats {
        self.stats
    }
    pub fn contains(&self, page: u64) -> bool {
        self.map.contains_key(&page)
    }
    pub fn pinned_count(&self) -> usize {
        self.frames
            .iter()
            .filter(|f| f.pins > 0 && self.map.contains_key(&f.page))
            .count()
    }
    pub fn resident(&self) -> usize {
        self.map.len()
    }

    pub fn data(&self, f: FrameId) -> &[u8] {
        assert!(self.frames[f].pins > 0, "frame {f} read while unpinned");
        &self.frames[f].data
    }

    /// The frame's bytes for writing; the page is written back when evicted or flushed.
    pub fn data_mut(&mut self, f: FrameId) -> &mut [u8] {
        assert!(self.frames[f].pins > 0, "frame {f} written while unpinned");
        self.frames[f].dirty = true;
        &mut self.frames[f].data
    }

    fn pin_hit(&mut self, f: FrameId) {
        let fr = &mut self.frames[f];
        if fr.pins == 0 {
            self.lru.remove(&fr.stamp);
        }
        fr.pins += 1;
        self.stats.hits += 1;
    }

    /// A frame for `page` (not yet read), pinned once; evicts an unpinned frame if full.
    fn take_frame(&mut self, page: u64) -> Result<FrameId, EngineError> {
        if self.map.len() >= self.capacity {
            if let Some((_, victim)) = self.lru.pop_first() {
                self.evict(victim)?;
            }
        }
        let pb = self.page_bytes();
        let f = match self.free.pop() {
            Some(f) => f,
            None => {
                self.frames.push(Frame {
                    page,
                    data: vec![0; pb],
                    pins: 0,
                    dirty: false,
                    stamp: 0,
                });
                self.frames.len() - 1
            }
        };
        let fr = &mut self.frames[f];
        (fr.page, fr.pins, fr.dirty) = (page, 1, false);
        Ok(f)
    }

    fn evict(&mut self, f: FrameId) -> Result<(), EngineError> {
        let (page, dirty) = (self.frames[f].page, self.frames[f].dirty);
        if dirty {
            let data = std::mem::take(&mut self.frames[f].data);
            let r = self.dev.write(page, &data, WriteHint::NONE);
            self.frames[f].data = data;
            r?;
            self.stats.writebacks += 1;
        }
        self.map.remove(&page);
        self.frames[f].dirty = false;
        self.free.push(f);
        self.stats.evictions += 1;
        Ok(())
    }

    /// Pin `page`, reading it if it is not resident.
    pub fn fetch(&mut self, page: u64) -> Result<FrameId, EngineError> {
        if let Some(&f) = self.map.get(&page) {
            self.pin_hit(f);
            return Ok(f);
        }
        let f = self.take_frame(page)?;
        let mut data = std::mem::take(&mut self.frames[f].data);
        let r = self.dev.read(page, &mut data);
        self.frames[f].data = data;
        if let Err(e) = r {
            self.frames[f].pins = 0;
            self.free.push(f);
            return Err(e.into());
        }
        self.map.insert(page, f);
        self.stats.misses += 1;
        Ok(f)
    }

    /// Pin every page of `pages` (one pin per entry, in order; a repeated page pins the same
    /// frame again), reading all misses in one batch.
    pub fn fetch_many(&mut self, pages: &[u64]) -> Result<Vec<FrameId>, EngineError> {
        // Pin resident pages first so that making room for the misses cannot evict them.
        let mut out: Vec<Option<FrameId>> = Vec::with_capacity(pages.len());
        let mut missing = Vec::new();
        for &p in pages {
            match self.map.get(&p) {
                Some(&f) => {
                    self.pin_hit(f);
                    out.push(Some(f));
                }
                None => {
                    missing.push(p);
                    out.push(None);
                }
            }
        }
        missing.sort_unstable();
        missing.dedup();
        if let Err(e) = self.read_batch(&missing) {
            for f in out.iter().flatten() {
                self.unpin(*f);
            }
            return Err(e);
        }
        // New frames came pinned once: the first entry of each takes that pin.
        let mut first_use: HashMap<u64, bool> = missing.iter().map(|&p| (p, true)).collect();
        let mut frames = Vec::with_capacity(pages.len());
        for (&p, f) in pages.iter().zip(out) {
            let f = match f {
                Some(f) => f,
                None => {
                    let f = self.map[&p];
                    match first_use.get_mut(&p) {
                        Some(first) if *first => *first = false,
                        _ => self.pin_hit(f),
                    }
                    f
                }
            };
            frames.push(f);
        }
        Ok(frames)
    }

    /// Read `missing` (distinct, not resident) into new frames with one `submit`; each new
    /// frame ends pinned once. On error no new frame remains.
    fn read_batch(&mut self, missing: &[u64]) -> Result<(), EngineError> {
        if missing.is_empty() {
            return Ok(());
        }
        let mut new_frames = Vec::with_capacity(missing.len());
        for &p in missing {
            match self.take_frame(p) {
                Ok(f) => new_frames.push(f),
                Err(e) => {
                    self.release(&new_frames);
                    return Err(e);
                }
            }
        }
        let mut bufs: Vec<Vec<u8>> = new_frames
            .iter()
            .map(|&f| std::mem::take(&mut self.frames[f].data))
            .collect();
        let mut batch: Vec<Io> = missing
            .iter()
            .zip(bufs.iter_mut())
            .map(|(&page, buf)| Io::Read { page, buf })
            .collect();
        let r = self.dev.submit(&mut batch);
        drop(batch);
        for (&f, b) in new_frames.iter().zip(bufs) {
            self.frames[f].data = b;
        }
        self.stats.batches += 1;
        if let Err(e) = r {
            self.release(&new_frames);
            return Err(e.into());
        }
        for (&p, &f) in missing.iter().zip(&new_frames) {
            self.map.insert(p, f);
        }
        self.stats.misses += new_frames.len() as u64;
        Ok(())
    }

    /// Undo frames taken for a failed read.
    fn release(&mut self, frames: &[FrameId]) {
        for &f in frames {
            self.frames[f].pins = 0;
            self.free.push(f);
        }
    }

    pub fn unpin(&mut self, f: FrameId) {
        let fr = &mut self.frames[f];
        assert!(fr.pins > 0, "unpinning frame {f} that is not pinned");
        fr.pins -= 1;
        if fr.pins > 0 {
            return;
        }
        self.clock += 1;
        fr.stamp = self.clock;
        self.lru.insert(self.clock, f);
        while self.map.len() > self.capacity {
            let Some((_, victim)) = self.lru.pop_first() else {
                break;
            };
            // Write-back failures here are reported at the next flush; keep the frame then.
            if self.evict(victim).is_err() {
                let stamp = self.frames[victim].stamp;
                self.lru.insert(stamp, victim);
                break;
            }
        }
    }

    /// Write back every dirty frame and flush the device.
    pub fn flush_all(&mut self) -> Result<(), EngineError> {
        for f in 0..self.frames.len() {
            if self.frames[f].dirty && self.map.get(&self.frames[f].page) == Some(&f) {
                let data = std::mem::take(&mut self.frames[f].data);
                let r = self.dev.write(self.frames[f].page, &data, WriteHint::NONE);
                self.frames[f].data = data;
                r?;
                self.frames[f].dirty = false;
                self.stats.writebacks += 1;
            }
        }
        Ok(self.dev.flush()?)
    }

    /// Drop every unpinned frame (dirty ones are written back): a cold cache.
    pub fn clear(&mut self) -> Result<(), EngineError> {
        while let Some((_, f)) = self.lru.pop_first() {
            self.evict(f)?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use blockdev::MemDevice;

    fn pool(cap: usize) -> BufferPool {
        let mut dev = MemDevice::new(512, 64);
        for p in 0..64u64 {
            dev.write(p, &[p as u8; 512], WriteHint::NONE).unwrap();
        }
        BufferPool::new(Box::new(dev), cap)
    }

    #[test]
    fn fetch_many_reads_misses_in_one_batch_and_pins_each_entry() {
        let mut bp = pool(8);
        let f = bp.fetch(3).unwrap();
        bp.unpin(f);
        let frames = bp.fetch_many(&[5, 3, 5, 9]).unwrap();
        assert_eq!(bp.stats().batches, 1);
        assert_eq!(bp.stats().misses, 3, "3 then 5 and 9");
        assert_eq!(bp.data(frames[0])[0], 5);
        assert_eq!(frames[0], frames[2]);
        for f in frames {
            bp.unpin(f);
        }
        assert_eq!(bp.pinned_count(), 0);
    }

    #[test]
    fn lru_evicts_unpinned_and_capacity_zero_works() {
        let mut bp = pool(2);
        for p in [1, 2, 3] {
            let f = bp.fetch(p).unwrap();
            bp.unpin(f);
        }
        assert!(!bp.contains(1) && bp.contains(2) && bp.contains(3));
        let mut zero = pool(0);
        let f = zero.fetch(4).unwrap();
        assert_eq!(zero.data(f)[0], 4);
        zero.unpin(f);
        assert_eq!(zero.resident(), 0);
    }

    #[test]
    fn dirty_pages_are_written_back() {
        let mut bp = pool(1);
        let f = bp.fetch(7).unwrap();
        bp.data_mut(f)[0] = 99;
        bp.unpin(f);
        let g = bp.fetch(8).unwrap();
        bp.unpin(g);
        let h = bp.fetch(7).unwrap();
        assert_eq!(bp.data(h)[0], 99);
    }

    #[test]
    fn a_failed_batch_leaves_nothing_pinned() {
        let mut dev = MemDevice::new(512, 64);
        dev.fail_page = Some(10);
        let mut bp = BufferPool::new(Box::new(dev), 4);
        let f = bp.fetch(1).unwrap();
        bp.unpin(f);
        assert!(bp.fetch_many(&[1, 2, 10, 11]).is_err());
        assert_eq!(bp.pinned_count(), 0);
        assert!(!bp.contains(10));
    }
}
