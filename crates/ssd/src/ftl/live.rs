//! What the block-mapped schemes (block, BAST, FAST, IOA) share: a bit per physical page
//! saying it holds current data, and the read / trim / verify steps built on a scheme's
//! `lookup(lpn) -> Option<physical page>`.

use crate::error::InvariantError;
use crate::flash::{Flash, TAG_EMPTY};
use crate::types::{Ppn, SimTime};

/// One bit per physical page: holds current data (overwrites and TRIM clear it).
#[derive(Clone, Debug)]
pub struct LivePages {
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

/// Read the page `found` (if any) at `now`.
pub fn read_found(flash: &mut Flash, found: Option<u64>, now: SimTime) -> (SimTime, Option<Ppn>) {
    match found {
        Some(p) => (flash.read(Ppn(p), now), Some(Ppn(p))),
        None => (now, None),
    }
}

/// Every logical page's lookup result is a programmed, live page, and no live page is left
/// over (none mapped twice, none leaked).
pub fn verify_lookup(
    logical: u64,
    flash: &Flash,
    live: &LivePages,
    lookup: impl Fn(u64) -> Option<u64>,
) -> Result<(), InvariantError> {
    let mut found = 0u64;
    for lpn in 0..logical {
        if let Some(p) = lookup(lpn) {
            found += 1;
            if flash.tag(Ppn(p)) == TAG_EMPTY || !live.get(p) {
                return Err(InvariantError(format!(
                    "lpn {lpn} maps to page {p}, which is not a live programmed page"
                )));
            }
        }
    }
    let n = live.count();
    if n != found {
        return Err(InvariantError(format!(
            "{n} live pages but {found} logical pages mapped (a page is mapped twice or leaked)"
        )));
    }
    Ok(())
}
