//! Pure block mapping: logical block `lpn / ppb` maps to one physical block, and a page always
//! sits at its logical offset `lpn % ppb` in it.
//!
//! Model: a write to an offset at or above the block's write pointer is programmed in place
//! (skipping free pages below it). Any other write — an overwrite, or an offset below the
//! write pointer — forces a copy of the whole block: a fresh block receives every live page of
//! the old one in offset order plus the new page, and the old block is erased. That copy is
//! counted as a full merge. A per-page live bit tracks overwritten and trimmed pages.
//! Invariants: those of [`super::blockmap`] (each mapped block has one logical block; free
//! blocks are erased; every live page is programmed).

use super::blockmap::{data_blocks, BlockScheme, MapCore};
use super::blocks::NIL;
use super::scheme::{Done, HostWrite};
use crate::error::SsdError;
use crate::flash::{Flash, Layout};
use crate::types::{BlockId, PageWrite, Ppn, SimTime};

/// Pure block mapping: logical block -> data block.
pub(crate) struct BlockMap {
    pub(crate) data: Vec<u32>,
}

impl BlockMap {
    pub fn new(g: &Layout, logical: u64) -> BlockMap {
        assert!(logical.is_multiple_of(g.ppb as u64), "whole logical blocks");
        BlockMap {
            data: vec![NIL; (logical / g.ppb as u64) as usize],
        }
    }

    /// Copy block `old` to a fresh block, writing `data` at `off` instead of the old page.
    fn copy_block(
        &mut self,
        core: &mut MapCore,
        flash: &mut Flash,
        lbn: usize,
        off: u32,
        data: PageWrite,
        now: SimTime,
    ) -> Result<SimTime, SsdError> {
        let g = flash.layout;
        let old = self.data[lbn];
        let fresh = core.alloc()?;
        assert!(
            old != NIL && fresh != old,
            "copy of block {old} into {fresh}"
        );
        let mut t = now;
        for o in 0..g.ppb {
            let (src, dst) = (g.page(old, o), g.page(fresh, o));
            if o == off {
                t = t.max(flash.program_at(Ppn(dst), data.clone(), now));
                core.live.set(dst, true);
            } else if core.live.get(src) {
                t = core.move_page(flash, src, dst, t);
            }
        }
        flash.stats.merges_full += 1;
        assert!(core.live.get(g.page(fresh, off)), "the new page is live");
        t = core.release(flash, old, t);
        self.data[lbn] = fresh;
        Ok(t)
    }
}

impl BlockScheme for BlockMap {
    fn lookup(&self, core: &MapCore, g: &Layout, lpn: u64) -> Option<u64> {
        let (lbn, off) = g.split(lpn);
        let d = self.data[lbn as usize];
        if d == NIL {
            return None;
        }
        let p = g.page(d, off);
        core.live.get(p).then_some(p)
    }

    fn write(&mut self, core: &mut MapCore, flash: &mut Flash, w: HostWrite) -> Done {
        let (lpn, data, now) = (w.lpn.0, w.data, w.now);
        let g = flash.layout;
        let (lbn, off) = g.split(lpn);
        let lbn = lbn as usize;
        if self.data[lbn] == NIL {
            self.data[lbn] = core.alloc()?;
        }
        let d = self.data[lbn];
        if off < flash.write_pointer(BlockId(d)) {
            return self.copy_block(core, flash, lbn, off, data, now);
        }
        let p = g.page(d, off);
        assert!(
            !core.live.get(p),
            "page {p} above the write pointer is live"
        );
        core.live.set(p, true);
        Ok(flash.program_at(Ppn(p), data, now))
    }

    fn held_blocks(&self) -> Vec<(u32, &'static str)> {
        data_blocks(&self.data).collect()
    }

    /// The block map: 4 B per logical block.
    fn mapping_bytes(&self, _g: &Layout) -> u64 {
        self.data.len() as u64 * 4
    }
}
