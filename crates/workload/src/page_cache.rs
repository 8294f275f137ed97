//! A host write-back page cache in front of the device (for paper P4's experiment).
//!
//! Model: application writes mark pages dirty; rewriting a dirty page is absorbed. When more
//! than `capacity_pages` pages are dirty, a flusher writes back `batch_pages` dirty pages in
//! ascending address order, continuing from where its previous sweep stopped and wrapping
//! around (the Linux flusher walking the file's dirty pages by offset, with the block layer's
//! elevator), so random application writes reach the device as increasing-order runs.
//! Deterministic: a `BTreeSet` of dirty pages.

use std::collections::BTreeSet;

#[derive(Clone, Debug)]
pub struct PageCache {
    capacity_pages: u64,
    batch_pages: u64,
    dirty: BTreeSet<u64>,
    /// Where the next sweep starts.
    cursor: u64,
    /// Writes absorbed by an already-dirty page.
    pub absorbed: u64,
}

impl PageCache {
    /// `capacity_pages` dirty pages may accumulate; flushes write `batch_pages` (>= 1) at once.
    pub fn new(capacity_pages: u64, batch_pages: u64) -> PageCache {
        PageCache {
            capacity_pages,
            batch_pages: batch_pages.max(1),
            dirty: BTreeSet::new(),
            cursor: 0,
            absorbed: 0,
        }
    }

    pub fn dirty_pages(&self) -> u64 {
        self.dirty.len() as u64
    }

    /// The application writes page `lpn`; pages the device must write now are appended to `out`
    /// in the order the flusher issues them.
    pub fn write(&mut self, lpn: u64, out: &mut Vec<u64>) {
        if !self.dirty.insert(lpn) {
            self.absorbed += 1;
        }
        if self.dirty.len() as u64 > self.capacity_pages {
            self.flush_batch(out);
        }
    }

    /// Write back `batch_pages` dirty pages in ascending order from the cursor, wrapping.
    fn flush_batch(&mut self, out: &mut Vec<u64>) {
        let want = self.batch_pages.min(self.dirty.len() as u64) as usize;
        let mut taken: Vec<u64> = self
            .dirty
            .range(self.cursor..)
            .take(want)
            .copied()
            .collect();
        if taken.len() < want {
            let more = want - taken.len();
            taken.extend(self.dirty.range(..self.cursor).take(more).copied());
        }
        for p in &taken {
            self.dirty.remove(p);
        }
        if let Some(&last) = taken.last() {
            self.cursor = last + 1;
        }
        out.extend_from_slice(&taken);
    }

    /// Write back every dirty page, ascending (a sync).
    pub fn flush_all(&mut self, out: &mut Vec<u64>) {
        out.extend(self.dirty.iter().copied());
        self.dirty.clear();
        self.cursor = 0;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::{Rng, SeedableRng};
    use rand_chacha::ChaCha8Rng;

    fn run(capacity: u64, writes: usize) -> (Vec<u64>, PageCache) {
        let mut c = PageCache::new(capacity, 16);
        let mut rng = ChaCha8Rng::seed_from_u64(1);
        let mut out = Vec::new();
        for _ in 0..writes {
            c.write(rng.gen_range(0..1000), &mut out);
        }
        (out, c)
    }

    #[test]
    fn every_dirtying_reaches_the_device_once() {
        let (mut out, mut c) = run(64, 10_000);
        let flushed_before_sync = out.len() as u64;
        c.flush_all(&mut out);
        assert_eq!(out.len() as u64 + c.absorbed, 10_000);
        assert!(flushed_before_sync > 0);
        assert_eq!(c.dirty_pages(), 0);
    }

    #[test]
    fn batches_are_ascending_runs_except_at_the_wrap() {
        let (out, _) = run(64, 10_000);
        for batch in out.chunks(16) {
            let descents = batch.windows(2).filter(|w| w[1] <= w[0]).count();
            assert!(descents <= 1, "batch {batch:?}");
        }
    }

    #[test]
    fn a_bigger_cache_absorbs_more_rewrites() {
        let (_, small) = run(32, 20_000);
        let (_, big) = run(512, 20_000);
        assert!(
            big.absorbed > small.absorbed,
            "{} vs {}",
            big.absorbed,
            small.absorbed
        );
    }
}
