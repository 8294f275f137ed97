//! The block manager every FTL shares: pools of free (erased) blocks and the open block of each
//! write slot on each die. Erase counts are the NAND's own ([`Flash::erase_counts`]).
//!
//! Page-mapped schemes (page, DFTL) keep one pool per die and open blocks per (slot, die);
//! block-mapped schemes (block, BAST, FAST, IOA) keep one pool for the whole device, in block
//! order, and no open slots. Pools hand out the block freed longest ago first (which spreads
//! wear). Invariant ([`BlockManager::verify`]): every pooled block is erased and pooled once.

use crate::error::{InvariantError, SsdError};
use crate::flash::{Flash, Layout};
use crate::types::{BlockId, SimTime};
use std::collections::VecDeque;

pub(crate) const NIL: u32 = u32::MAX;

#[derive(Clone, Debug)]
pub(crate) struct BlockManager {
    pools: Vec<VecDeque<u32>>,
    /// `open[slot * dies + die]`: the open block of a slot on a die, or NIL.
    open: Vec<u32>,
}

impl BlockManager {
    /// One pool per die, and `slots` open-block slots on every die.
    pub fn per_die(layout: &Layout, slots: usize) -> BlockManager {
        assert!(slots >= 1, "a per-die block manager has a write slot");
        let pools: Vec<VecDeque<u32>> = (0..layout.dies)
            .map(|d| layout.blocks_of_die(d).collect())
            .collect();
        assert!(
            pools
                .iter()
                .all(|p| p.len() == layout.blocks_per_die as usize),
            "every die's pool starts with all its blocks"
        );
        BlockManager {
            pools,
            open: vec![NIL; slots * layout.dies as usize],
        }
    }

    /// One pool holding every block of the device, no open slots.
    pub fn one_pool(layout: &Layout) -> BlockManager {
        assert!(layout.total_blocks() >= 1, "a device has blocks");
        BlockManager {
            pools: vec![(0..layout.total_blocks()).collect()],
            open: Vec::new(),
        }
    }

    /// Take the next free block of `pool` (a die, or 0 for the single pool).
    #[inline]
    pub fn alloc(&mut self, pool: u32) -> Result<u32, SsdError> {
        self.pools[pool as usize]
            .pop_front()
            .ok_or(SsdError::DeviceFull { die: pool })
    }

    /// Erase `block` and return it to `pool`. Returns the erase's completion time.
    pub fn release(&mut self, flash: &mut Flash, pool: u32, block: u32, now: SimTime) -> SimTime {
        assert!(block < flash.total_blocks(), "release of block {block}");
        self.pools[pool as usize].push_back(block);
        let done = flash.erase(BlockId(block), now);
        assert_eq!(
            flash.write_pointer(BlockId(block)),
            0,
            "released block {block}"
        );
        done
    }

    #[inline]
    pub fn free_blocks(&self, pool: u32) -> u32 {
        self.pools[pool as usize].len() as u32
    }

    #[inline]
    fn slot_index(layout: &Layout, slot: u16, die: u32) -> usize {
        // Debug only (once per page written): every caller's die is below `dies` by
        // construction (cursors wrap at `dies`; GC and close work on a write's die), and
        // the index is bounds-checked against `open` either way.
        debug_assert!(die < layout.dies, "die {die} of {}", layout.dies);
        slot as usize * layout.dies as usize + die as usize
    }

    /// The open block of `slot` on `die` (NIL: none).
    #[inline]
    pub fn open_block(&self, layout: &Layout, slot: u16, die: u32) -> u32 {
        self.open[Self::slot_index(layout, slot, die)]
    }

    #[inline]
    pub fn set_open(&mut self, layout: &Layout, slot: u16, die: u32, block: u32) {
        let open = &mut self.open[Self::slot_index(layout, slot, die)];
        // A slot opens a block only when it has none (else the open one would be lost).
        assert!(
            block == NIL || *open == NIL,
            "slot {slot} on die {die} opens a second block"
        );
        *open = block;
    }

    /// Open blocks of every slot and die (NIL where none).
    pub fn open_blocks(&self) -> &[u32] {
        &self.open
    }

    /// Every pooled block, pool by pool.
    pub fn pooled(&self) -> impl Iterator<Item = (u32, u32)> + '_ {
        self.pools
            .iter()
            .enumerate()
            .flat_map(|(p, q)| q.iter().map(move |&b| (p as u32, b)))
    }

    /// Pooled blocks are erased and pooled once. Returns, per block, whether it is pooled.
    pub fn verify(&self, flash: &Flash) -> Result<Vec<bool>, InvariantError> {
        let mut pooled = vec![false; flash.total_blocks() as usize];
        for (_, b) in self.pooled() {
            if std::mem::replace(&mut pooled[b as usize], true) {
                return Err(InvariantError::BlockRoles {
                    block: b,
                    roles: "free twice",
                });
            }
            let wp = flash.write_pointer(BlockId(b));
            if wp != 0 {
                return Err(InvariantError::FreeBlockNotErased {
                    block: b,
                    write_pointer: wp,
                });
            }
        }
        Ok(pooled)
    }

    /// Test hook: the pool a corruption test tampers with.
    #[cfg(test)]
    pub fn pool_mut(&mut self, pool: u32) -> &mut VecDeque<u32> {
        &mut self.pools[pool as usize]
    }

    #[cfg(test)]
    pub fn open_mut(&mut self) -> &mut Vec<u32> {
        &mut self.open
    }
}
