//! Garbage-collection victim selection: the *policy* half of GC (the page FTL's `reclaim`
//! applies it and does not know which policy it holds).
//!
//! Model: each die keeps its closed (full, not open) blocks in a [`VictimIndex`]. The index
//! knows each closed block's valid-page count; a [`VictimPolicy`] type keeps whatever order it
//! needs and chooses:
//! - [`Greedy`]: fewest valid pages (per-count stacks updated lazily, see [`Greedy`]);
//! - [`Fifo`]: the block closed longest ago (the log-structured "circular" cleaner of Desnoyers'
//!   and Hu et al.'s FIFO model), whatever its valid count;
//! - [`CostBenefit`]: highest `age * (1 - u) / (2u)` (Rosenblum & Ousterhout), `u` the valid
//!   fraction and `age` the number of blocks closed on the die since this one was closed;
//!   a linear scan over the die's closed blocks (it is the slow policy; that is the price).
//!
//! The FTL is generic over the policy (`PageFtl<P>`), so the hot path (an invalidation per host
//! write) has no dynamic dispatch. Invariant: only closed blocks can be chosen; every closed
//! block can be found by its policy.

use crate::error::InvariantError;
use crate::flash::Layout;
use std::collections::VecDeque;

/// Per-block record, kept together so a page invalidation touches one cache line.
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct Meta {
    pub valid: u32,
    pub member: bool,
}

/// What every policy sees: each block's valid count and membership, and closed blocks per die.
#[derive(Clone, Debug)]
pub(crate) struct ClosedBlocks {
    pub meta: Vec<Meta>,
    /// Per die: number of closed blocks.
    pub count: Vec<u32>,
}

/// A GC victim policy: told when blocks close and lose pages, asked to choose a victim.
pub(crate) trait VictimPolicy: Send + Sized {
    fn new(layout: &Layout) -> Self;
    /// `block` of `die` was closed holding `valid` valid pages.
    fn closed(&mut self, layout: &Layout, blocks: &ClosedBlocks, die: u32, block: u32, valid: u32);
    /// Closed `block` of `die` lost a page and now holds `valid`.
    #[inline]
    fn invalidated(
        &mut self,
        _layout: &Layout,
        _blocks: &ClosedBlocks,
        _die: u32,
        _block: u32,
        _valid: u32,
    ) {
    }
    /// Choose and forget the victim among `die`'s closed blocks (there is at least one).
    fn choose(&mut self, layout: &Layout, blocks: &ClosedBlocks, die: u32) -> Option<u32>;
    /// Whether closed `block` of `die`, holding `valid` pages, can be chosen.
    fn can_choose(&self, die: u32, block: u32, valid: u32) -> bool;
}

/// Greedy keeps, per die, a stack of block ids for each valid count and updates it lazily: an
/// invalidation pushes the block onto its new count's stack and leaves the old entry behind;
/// a popped entry is used only if the block is still closed and still has that count. So an
/// invalidation costs one push, with no list surgery on neighbouring blocks (which would be
/// cache misses), and stale entries are dropped when popped or when a die's stacks grow past
/// a bound and are rebuilt from the counts (amortised O(1)).
#[derive(Clone, Debug)]
pub(crate) struct Greedy {
    /// Per die, per valid count (`die * counts + valid`), candidate blocks (possibly stale).
    stacks: Vec<Vec<u32>>,
    /// Valid counts a block can have: pages per block + 1.
    counts: usize,
    /// Per die, what a push updates, together (one bound check, one cache line).
    dies: Vec<DieStacks>,
}

/// One die's [`Greedy`] bookkeeping.
#[derive(Clone, Copy, Debug, Default)]
struct DieStacks {
    /// Entries in its stacks (live and stale).
    entries: usize,
    /// A valid count below which every stack is empty (where `choose` starts).
    low: usize,
}

impl Greedy {
    #[inline(always)]
    fn push(&mut self, layout: &Layout, blocks: &ClosedBlocks, d: usize, block: u32, valid: u32) {
        assert!(
            (valid as usize) < self.counts,
            "block {block} with {valid} valid pages"
        );
        self.stacks[d * self.counts + valid as usize].push(block);
        let die = &mut self.dies[d];
        die.low = die.low.min(valid as usize);
        die.entries += 1;
        if die.entries > 4 * blocks.count[d] as usize + 64 {
            self.rebuild(layout, blocks, d);
        }
    }

    /// Drop a die's stale entries: one entry per closed block, at its count.
    #[cold]
    #[inline(never)]
    fn rebuild(&mut self, layout: &Layout, blocks: &ClosedBlocks, d: usize) {
        let counts = self.counts;
        self.stacks[d * counts..(d + 1) * counts]
            .iter_mut()
            .for_each(Vec::clear);
        self.dies[d].low = 0;
        for b in layout.blocks_of_die(d as u32) {
            let m = blocks.meta[b as usize];
            if m.member {
                self.stacks[d * counts + m.valid as usize].push(b);
            }
        }
        self.dies[d].entries = blocks.count[d] as usize;
        let entries: usize = self.stacks[d * counts..(d + 1) * counts]
            .iter()
            .map(Vec::len)
            .sum();
        assert_eq!(
            entries, self.dies[d].entries,
            "die {d}: one entry per closed block"
        );
    }
}

impl VictimPolicy for Greedy {
    fn new(layout: &Layout) -> Greedy {
        let d = layout.dies as usize;
        let counts = layout.ppb as usize + 1;
        assert!(
            d >= 1 && counts >= 2,
            "greedy over {d} dies of {counts} counts"
        );
        Greedy {
            stacks: vec![Vec::new(); counts * d],
            counts,
            dies: vec![DieStacks::default(); d],
        }
    }
    fn closed(&mut self, layout: &Layout, blocks: &ClosedBlocks, die: u32, block: u32, valid: u32) {
        self.push(layout, blocks, die as usize, block, valid);
    }
    #[inline(always)]
    fn invalidated(
        &mut self,
        layout: &Layout,
        blocks: &ClosedBlocks,
        die: u32,
        block: u32,
        valid: u32,
    ) {
        self.push(layout, blocks, die as usize, block, valid);
    }
    fn choose(&mut self, _layout: &Layout, blocks: &ClosedBlocks, die: u32) -> Option<u32> {
        let d = die as usize;
        let die = &mut self.dies[d];
        let low = die.low;
        let counts = self.counts;
        let stacks = &mut self.stacks[d * counts..(d + 1) * counts];
        for (v, stack) in stacks.iter_mut().enumerate().skip(low) {
            while let Some(b) = stack.pop() {
                die.entries -= 1;
                let m = blocks.meta[b as usize];
                if m.member && m.valid as usize == v {
                    die.low = v;
                    return Some(b);
                }
            }
        }
        die.low = counts;
        // Every closed block has an entry at its count: none found means none closed.
        assert_eq!(
            blocks.count[d], 0,
            "die {d}: closed blocks greedy cannot find"
        );
        None
    }
    fn can_choose(&self, die: u32, block: u32, valid: u32) -> bool {
        self.stacks[die as usize * self.counts + valid as usize].contains(&block)
    }
}

/// Closed blocks in close order, per die; the oldest is the victim.
#[derive(Clone, Debug)]
pub(crate) struct Fifo {
    queues: Vec<VecDeque<u32>>,
}

impl VictimPolicy for Fifo {
    fn new(layout: &Layout) -> Fifo {
        Fifo {
            queues: vec![VecDeque::new(); layout.dies as usize],
        }
    }
    fn closed(&mut self, layout: &Layout, _: &ClosedBlocks, die: u32, block: u32, _valid: u32) {
        assert_eq!(
            layout.die_of(block),
            die,
            "block {block} closed on another die"
        );
        self.queues[die as usize].push_back(block);
    }
    fn choose(&mut self, _: &Layout, blocks: &ClosedBlocks, die: u32) -> Option<u32> {
        let victim = self.queues[die as usize].pop_front();
        // The queue holds exactly the closed blocks (only `take_victim` removes one).
        assert!(
            victim.is_none_or(|b| blocks.meta[b as usize].member),
            "{victim:?}"
        );
        victim
    }
    fn can_choose(&self, die: u32, block: u32, _valid: u32) -> bool {
        self.queues[die as usize].contains(&block)
    }
}

/// Rosenblum & Ousterhout's cost-benefit, by a scan of the die's closed blocks.
#[derive(Clone, Debug)]
pub(crate) struct CostBenefit {
    /// Per block: the die's close clock when it was closed.
    closed_seq: Vec<u64>,
    /// Per die: blocks closed so far (the clock).
    seq: Vec<u64>,
}

impl VictimPolicy for CostBenefit {
    fn new(layout: &Layout) -> CostBenefit {
        CostBenefit {
            closed_seq: vec![0; layout.total_blocks() as usize],
            seq: vec![0; layout.dies as usize],
        }
    }
    fn closed(&mut self, layout: &Layout, _: &ClosedBlocks, die: u32, block: u32, _valid: u32) {
        assert_eq!(
            layout.die_of(block),
            die,
            "block {block} closed on another die"
        );
        self.closed_seq[block as usize] = self.seq[die as usize];
        self.seq[die as usize] += 1;
    }
    fn choose(&mut self, layout: &Layout, blocks: &ClosedBlocks, die: u32) -> Option<u32> {
        let now = self.seq[die as usize];
        let mut best: Option<(f64, u64, u32)> = None;
        for b in layout.blocks_of_die(die) {
            let m = blocks.meta[b as usize];
            if !m.member {
                continue;
            }
            let u = m.valid as f64 / layout.ppb as f64;
            let seq = self.closed_seq[b as usize];
            let age = (now - seq) as f64 + 1.0;
            let score = if u == 0.0 {
                f64::INFINITY
            } else {
                age * (1.0 - u) / (2.0 * u)
            };
            // Ties go to the older block (smaller close sequence) for determinism.
            if best.is_none_or(|(s, bs, _)| score > s || (score == s && seq < bs)) {
                best = Some((score, seq, b));
            }
        }
        assert!(
            best.is_some() || blocks.count[die as usize] == 0,
            "die {die}: closed blocks cost-benefit cannot find"
        );
        best.map(|(_, _, b)| b)
    }
    fn can_choose(&self, _die: u32, _block: u32, _valid: u32) -> bool {
        true
    }
}

/// Closed blocks of every die, indexed for victim selection by policy `P`, plus every block's
/// valid-page count (closed or not). Blocks are global ids laid out die by die
/// (`die * blocks_per_die + i`, as in [`crate::flash::Flash`]).
#[derive(Clone, Debug)]
pub(crate) struct VictimIndex<P> {
    blocks: ClosedBlocks,
    policy: P,
}

impl<P: VictimPolicy> VictimIndex<P> {
    pub fn new(layout: &Layout) -> VictimIndex<P> {
        assert!(
            layout.dies >= 1 && layout.ppb >= 1,
            "an index over {layout:?}"
        );
        VictimIndex {
            blocks: ClosedBlocks {
                meta: vec![Meta::default(); layout.total_blocks() as usize],
                count: vec![0; layout.dies as usize],
            },
            policy: P::new(layout),
        }
    }

    /// Closed blocks on `die`.
    pub fn closed_blocks(&self, die: u32) -> u32 {
        self.blocks.count[die as usize]
    }

    pub fn contains(&self, block: u32) -> bool {
        self.blocks.meta[block as usize].member
    }

    /// Valid pages of any block (as reported through `insert`, `add_valid`, `invalidate_one`).
    #[inline]
    pub fn valid(&self, block: u32) -> u32 {
        self.blocks.meta[block as usize].valid
    }

    /// An open (not yet closed) block gained a valid page.
    #[inline]
    pub fn add_valid(&mut self, block: u32) {
        self.add_valid_n(block, 1);
    }

    /// An open block gained `n` valid pages.
    #[inline]
    pub fn add_valid_n(&mut self, block: u32, n: u32) {
        let m = &mut self.blocks.meta[block as usize];
        assert!(!m.member, "closed block {block} gained pages");
        m.valid += n;
    }

    /// A block was erased: no valid pages.
    pub fn reset(&mut self, block: u32) {
        let m = &mut self.blocks.meta[block as usize];
        assert!(!m.member, "erasing closed block {block} still indexed");
        m.valid = 0;
    }

    /// A block of `die` was filled and closed with `valid` valid pages.
    pub fn insert(&mut self, layout: &Layout, die: u32, block: u32, valid: u32) {
        assert!(!self.contains(block), "block {block} closed twice");
        assert!(
            valid <= layout.ppb,
            "block {block} closed with {valid} valid pages"
        );
        self.blocks.meta[block as usize] = Meta {
            valid,
            member: true,
        };
        self.blocks.count[die as usize] += 1;
        self.policy.closed(layout, &self.blocks, die, block, valid);
    }

    /// A block (closed or open) lost one valid page (overwrite or trim).
    #[inline(always)]
    pub fn invalidate_one(&mut self, layout: &Layout, die: u32, block: u32) {
        let m = &mut self.blocks.meta[block as usize];
        assert!(m.valid > 0, "block {block} lost a page it did not hold");
        m.valid -= 1;
        if m.member {
            let v = m.valid;
            self.policy.invalidated(layout, &self.blocks, die, block, v);
        }
    }

    /// Choose and remove the victim on `die`; `None` when the die has no closed block.
    pub fn take_victim(&mut self, layout: &Layout, die: u32) -> Option<u32> {
        let d = die as usize;
        if self.blocks.count[d] == 0 {
            return None;
        }
        let victim = self.policy.choose(layout, &self.blocks, die);
        // Every closed block can be found by its policy (a die with one has a victim).
        let victim = victim.expect("a die with closed blocks has a victim");
        let m = &mut self.blocks.meta[victim as usize];
        assert!(m.member, "victim {victim} is not a closed block");
        m.member = false;
        self.blocks.count[d] -= 1;
        Some(victim)
    }

    /// Check the index against the FTL's valid counts (`valid_of(block)`): counts agree, every
    /// closed block is findable by its policy, per-die counts match.
    pub fn check(
        &self,
        layout: &Layout,
        valid_of: impl Fn(u32) -> u32,
    ) -> Result<(), InvariantError> {
        for die in 0..layout.dies {
            let mut members = 0;
            for b in layout.blocks_of_die(die) {
                let m = self.blocks.meta[b as usize];
                if m.valid != valid_of(b) {
                    return Err(InvariantError::ValidCount {
                        block: b,
                        counted: m.valid,
                        mapped: valid_of(b),
                    });
                }
                if !m.member {
                    continue;
                }
                members += 1;
                if !self.policy.can_choose(die, b, m.valid) {
                    return Err(InvariantError::VictimUnfindable {
                        block: b,
                        valid: m.valid,
                    });
                }
            }
            if members != self.blocks.count[die as usize] {
                return Err(InvariantError::Count {
                    what: "closed blocks on a die",
                    expected: self.blocks.count[die as usize] as u64,
                    found: members as u64,
                });
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn index<P: VictimPolicy>(dies: u32, blocks: u32, ppb: u32) -> (Layout, VictimIndex<P>) {
        let l = Layout {
            ppb,
            blocks_per_die: blocks / dies,
            dies,
            channels: 1,
        };
        (l, VictimIndex::new(&l))
    }

    #[test]
    fn greedy_takes_the_block_with_fewest_valid_pages() {
        let (l, mut ix) = index::<Greedy>(1, 4, 8);
        ix.insert(&l, 0, 0, 8);
        ix.insert(&l, 0, 1, 8);
        ix.insert(&l, 0, 2, 8);
        for _ in 0..5 {
            ix.invalidate_one(&l, 0, 1);
        }
        ix.invalidate_one(&l, 0, 2);
        assert_eq!(ix.take_victim(&l, 0), Some(1));
        assert_eq!(ix.take_victim(&l, 0), Some(2));
        assert_eq!(ix.take_victim(&l, 0), Some(0));
        assert_eq!(ix.take_victim(&l, 0), None);
    }

    #[test]
    fn fifo_takes_the_oldest_closed_block_whatever_its_validity() {
        let (l, mut ix) = index::<Fifo>(1, 3, 8);
        ix.insert(&l, 0, 2, 8);
        ix.insert(&l, 0, 0, 1);
        assert_eq!(ix.take_victim(&l, 0), Some(2));
        assert_eq!(ix.take_victim(&l, 0), Some(0));
    }

    #[test]
    fn cost_benefit_weighs_age_against_utilisation() {
        let (l, mut ix) = index::<CostBenefit>(1, 3, 8);
        ix.insert(&l, 0, 0, 4);
        ix.insert(&l, 0, 1, 4);
        ix.insert(&l, 0, 2, 2);
        // Clock 3. Block 2: u = 1/4, age 2 -> 3.0; block 0: u = 1/2, age 4 -> 2.0;
        // block 1: u = 1/2, age 3 -> 1.5.
        assert_eq!(ix.take_victim(&l, 0), Some(2));
        assert_eq!(ix.take_victim(&l, 0), Some(0));
        assert_eq!(ix.take_victim(&l, 0), Some(1));
    }

    #[test]
    fn dies_are_independent() {
        let (l, mut ix) = index::<Greedy>(2, 4, 4);
        ix.insert(&l, 0, 0, 4);
        ix.insert(&l, 1, 3, 1);
        assert_eq!(ix.take_victim(&l, 0), Some(0));
        assert_eq!(ix.take_victim(&l, 0), None);
        assert_eq!(ix.take_victim(&l, 1), Some(3));
        ix.check(&l, |b| [4, 0, 0, 1][b as usize]).unwrap();
    }

    #[test]
    fn greedy_survives_many_stale_entries() {
        // Invalidate pages one by one across many blocks: stale entries pile up and are
        // rebuilt; the victim is still the emptiest block.
        let (l, mut ix) = index::<Greedy>(1, 64, 32);
        for b in 0..64 {
            ix.insert(&l, 0, b, 32);
        }
        for round in 0..20 {
            for b in 0..64 {
                if b % 7 != 3 || round < 10 {
                    ix.invalidate_one(&l, 0, b);
                }
            }
        }
        ix.check(&l, |b| ix.valid(b)).unwrap();
        let v = ix.take_victim(&l, 0).unwrap();
        assert_eq!(ix.valid(v), 12);
        assert_ne!(v % 7, 3);
    }
}
