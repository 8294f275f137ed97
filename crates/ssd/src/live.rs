//! A bit per physical page saying it holds current data (overwrites and TRIM clear it): the
//! block-mapped schemes' record of which pages are live.

/// One bit per physical page: holds current data (overwrites and TRIM clear it).
#[derive(Clone, Debug)]
pub(crate) struct LivePages {
    words: Vec<u64>,
}

impl LivePages {
    pub fn new(pages: u64) -> LivePages {
        LivePages {
            words: vec![0; pages.div_ceil(64) as usize],
        }
    }
    #[inline]
    pub fn get(&self, p: u64) -> bool {
        self.words[(p / 64) as usize] >> (p % 64) & 1 == 1
    }
    #[inline]
    pub fn set(&mut self, p: u64, on: bool) {
        let w = &mut self.words[(p / 64) as usize];
        if on {
            *w |= 1 << (p % 64);
        } else {
            *w &= !(1 << (p % 64));
        }
    }
    /// Clear bits `start..end`. A word already clear is left unwritten: erasing a block
    /// whose bits were never set (every erase of a page-mapped device) dirties no memory, so
    /// the table's untouched pages stay out of the process's resident memory.
    pub fn clear_range(&mut self, start: u64, end: u64) {
        let mut p = start;
        while p < end {
            let bit = p % 64;
            let bits = (64 - bit).min(end - p);
            let mask = if bits == 64 {
                u64::MAX
            } else {
                ((1u64 << bits) - 1) << bit
            };
            let w = &mut self.words[(p / 64) as usize];
            if *w & mask != 0 {
                *w &= !mask;
            }
            p += bits;
        }
    }
    pub fn count(&self) -> u64 {
        self.words.iter().map(|w| w.count_ones() as u64).sum()
    }
}

#[cfg(test)]
mod tests {
    use super::LivePages;

    #[test]
    fn clear_range_clears_exactly_the_range() {
        for (start, end) in [(0, 0), (3, 5), (0, 64), (60, 200), (64, 128), (1, 255)] {
            let mut l = LivePages::new(256);
            (0..256).for_each(|p| l.set(p, true));
            l.clear_range(start, end);
            for p in 0..256 {
                assert_eq!(
                    l.get(p),
                    !(start..end).contains(&p),
                    "{start}..{end} at {p}"
                );
            }
        }
    }
}
