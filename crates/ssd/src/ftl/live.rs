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
    pub fn count(&self) -> u64 {
        self.words.iter().map(|w| w.count_ones() as u64).sum()
    }
}
