//! Garbage-collection victim selection: the *policy* half of GC (the page FTL's `reclaim`
//! applies it and does not know which policy it holds).
//!
//! Model: each die keeps its closed (full, not open) blocks in a [`VictimIndex`], in one bin
//! per victim group (one group: any closed block of the die can be the victim; one group per
//! stream under [`crate::GcVictimScope::Stream`]: a stream collects its own blocks, with the
//! index's [`VictimIndex::take_victim`] rules for when it cannot). The index knows each closed
//! block's valid-page count; a [`VictimPolicy`] type keeps whatever order it needs per bin
//! and chooses:
//! - [`Greedy`]: fewest valid pages (per-count stacks updated lazily, see [`Greedy`]);
//! - [`Fifo`]: the block closed longest ago (the log-structured "circular" cleaner of Desnoyers'
//!   and Hu et al.'s FIFO model), whatever its valid count;
//! - [`CostBenefit`]: highest `age * (1 - u) / (2u)` (Rosenblum & Ousterhout), `u` the valid
//!   fraction and `age` the number of blocks closed on the die since this one was closed;
//!   a linear scan over the bin's closed blocks (it is the slow policy; that is the price).
//!
//! The FTL is generic over the policy (`PageFtl<P>`), so the hot path (an invalidation per host
//! write) has no dynamic dispatch. Invariant: only closed blocks can be chosen; every closed
//! block can be found by its policy in its bin.

use crate::error::InvariantError;
use crate::flash::Layout;
use std::collections::VecDeque;

/// Per-block record, kept together so a page invalidation touches one cache line.
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct Meta {
    pub valid: u32,
    pub member: bool,
    /// The victim group of a closed block (0 with one group).
    pub group: u16,
}

/// What every policy sees: each block's valid count, membership and group, and closed blocks
/// per bin (`die * groups + group`; with one group a bin is a die).
#[derive(Clone, Debug)]
pub(crate) struct ClosedBlocks {
    pub meta: Vec<Meta>,
    /// Per bin: number of closed blocks.
    pub count: Vec<u32>,
    /// Victim groups per die.
    pub groups: u32,
}

impl ClosedBlocks {
    /// The die of `bin`.
    #[inline]
    pub fn die_of_bin(&self, bin: usize) -> u32 {
        (bin / self.groups as usize) as u32
    }

    /// The blocks of `bin`'s die whose group is `bin`'s (members or not), in block order.
    pub fn blocks_of_bin<'a>(
        &'a self,
        layout: &Layout,
        bin: usize,
    ) -> impl Iterator<Item = u32> + 'a {
        let group = (bin % self.groups as usize) as u16;
        layout
            .blocks_of_die(self.die_of_bin(bin))
            .filter(move |&b| self.meta[b as usize].group == group)
    }
}

/// A GC victim policy: told when blocks close and lose pages, asked to choose a victim. It
/// keeps its order per bin (`blocks.count.len()` bins: dies times victim groups).
pub(crate) trait VictimPolicy: Send + Sized {
    fn new(layout: &Layout, groups: u32) -> Self;
    /// `block` of `bin` was closed holding `valid` valid pages.
    fn closed(&mut self, layout: &Layout, blocks: &ClosedBlocks, bin: u32, block: u32, valid: u32);
    /// Closed `block` of `bin` lost a page and now holds `valid`.
    #[inline]
    fn invalidated(
        &mut self,
        _layout: &Layout,
        _blocks: &ClosedBlocks,
        _bin: u32,
        _block: u32,
        _valid: u32,
    ) {
    }
    /// Choose and forget the victim among `bin`'s closed blocks (there is at least one).
    fn choose(&mut self, layout: &Layout, blocks: &ClosedBlocks, bin: u32) -> Option<u32>;
    /// Whether closed `block` of `bin`, holding `valid` pages, can be chosen.
    fn can_choose(&self, bin: u32, block: u32, valid: u32) -> bool;
}

/// Greedy keeps, per die, a stack of block ids for each valid count and updates it lazily: an
/// invalidation pushes the block onto its new count's stack and leaves the old entry behind;
/// a popped entry is used only if the block is still closed and still has that count. So an
/// invalidation costs one push, with no list surgery on neighbouring blocks (which would be
/// cache misses), and stale entries are dropped when popped or when a die's stacks grow past
/// a bound and are rebuilt from the counts (amortised O(1)).
#[derive(Clone, Debug)]
pub(crate) struct Greedy {
    /// Per bin, what a push reads and updates, together (one bound check).
    dies: Box<[DieStacks]>,
}

/// One bin's [`Greedy`] bookkeeping.
#[derive(Clone, Debug)]
struct DieStacks {
    /// Per valid count (pages per block + 1 of them), candidate blocks (possibly stale).
    stacks: Box<[Vec<u32>]>,
    /// Entries in its stacks (live and stale).
    entries: usize,
    /// A valid count below which every stack is empty (where `choose` starts).
    low: usize,
    /// Entries past which the stacks are rebuilt: 4 per closed block of the bin, plus 64.
    /// Kept here as blocks close (`closed`) and are chosen (`choose`), so a push compares
    /// within this record (`rebuild` checks it against the index's count).
    limit: usize,
}

/// Entries a bin's stacks may hold before a rebuild: 4 per closed block, plus 64.
#[inline]
fn entries_limit(closed: u32) -> usize {
    4 * closed as usize + 64
}

impl Greedy {
    /// Push `block`, now holding `valid` pages, onto its count's stack in bin `d`. A count
    /// beyond pages per block has no stack: the index panics (an invariant the valid counts
    /// keep).
    #[inline(always)]
    fn push(&mut self, layout: &Layout, blocks: &ClosedBlocks, d: usize, block: u32, valid: u32) {
        let die = &mut self.dies[d];
        die.stacks[valid as usize].push(block);
        die.low = die.low.min(valid as usize);
        die.entries += 1;
        if die.entries > die.limit {
            self.rebuild(layout, blocks, d);
        }
    }

    /// Drop a bin's stale entries: one entry per closed block, at its count.
    #[cold]
    #[inline(never)]
    fn rebuild(&mut self, layout: &Layout, blocks: &ClosedBlocks, d: usize) {
        let group = (d % blocks.groups as usize) as u16;
        let die = &mut self.dies[d];
        assert_eq!(
            die.limit,
            entries_limit(blocks.count[d]),
            "bin {d}: the rebuild limit follows the closed blocks"
        );
        die.stacks.iter_mut().for_each(Vec::clear);
        die.low = 0;
        for b in layout.blocks_of_die(blocks.die_of_bin(d)) {
            let m = blocks.meta[b as usize];
            if m.member && m.group == group {
                die.stacks[m.valid as usize].push(b);
            }
        }
        die.entries = blocks.count[d] as usize;
        let entries: usize = die.stacks.iter().map(Vec::len).sum();
        assert_eq!(entries, die.entries, "bin {d}: one entry per closed block");
    }
}

impl VictimPolicy for Greedy {
    fn new(layout: &Layout, groups: u32) -> Greedy {
        let d = layout.dies as usize * groups as usize;
        let counts = layout.ppb as usize + 1;
        assert!(
            d >= 1 && counts >= 2,
            "greedy over {d} bins of {counts} counts"
        );
        let bin = DieStacks {
            stacks: vec![Vec::new(); counts].into(),
            entries: 0,
            low: 0,
            limit: entries_limit(0),
        };
        Greedy {
            dies: vec![bin; d].into(),
        }
    }
    fn closed(&mut self, layout: &Layout, blocks: &ClosedBlocks, bin: u32, block: u32, valid: u32) {
        // One more closed block in the bin (the index counted it already).
        self.dies[bin as usize].limit = entries_limit(blocks.count[bin as usize]);
        self.push(layout, blocks, bin as usize, block, valid);
    }
    #[inline(always)]
    fn invalidated(
        &mut self,
        layout: &Layout,
        blocks: &ClosedBlocks,
        bin: u32,
        block: u32,
        valid: u32,
    ) {
        self.push(layout, blocks, bin as usize, block, valid);
    }
    fn choose(&mut self, _layout: &Layout, blocks: &ClosedBlocks, bin: u32) -> Option<u32> {
        let d = bin as usize;
        let die = &mut self.dies[d];
        let low = die.low;
        let counts = die.stacks.len();
        // An entry is live if its block is closed, in this bin's group, at this count (a
        // block freed and closed again in another group leaves a stale entry here).
        let group = (d % blocks.groups as usize) as u16;
        for (v, stack) in die.stacks.iter_mut().enumerate().skip(low) {
            while let Some(b) = stack.pop() {
                die.entries -= 1;
                let m = blocks.meta[b as usize];
                if m.member && m.valid as usize == v && m.group == group {
                    die.low = v;
                    // The index takes it out of the bin: one closed block fewer.
                    die.limit = entries_limit(blocks.count[d] - 1);
                    return Some(b);
                }
            }
        }
        die.low = counts;
        // Every closed block has an entry at its count: none found means none closed.
        assert_eq!(
            blocks.count[d], 0,
            "bin {d}: closed blocks greedy cannot find"
        );
        None
    }
    fn can_choose(&self, bin: u32, block: u32, valid: u32) -> bool {
        self.dies[bin as usize].stacks[valid as usize].contains(&block)
    }
}

/// Closed blocks in close order, per bin; the oldest is the victim.
#[derive(Clone, Debug)]
pub(crate) struct Fifo {
    queues: Vec<VecDeque<u32>>,
}

impl VictimPolicy for Fifo {
    fn new(layout: &Layout, groups: u32) -> Fifo {
        Fifo {
            queues: vec![VecDeque::new(); layout.dies as usize * groups as usize],
        }
    }
    fn closed(&mut self, layout: &Layout, b: &ClosedBlocks, bin: u32, block: u32, _valid: u32) {
        assert_eq!(
            layout.die_of(block),
            b.die_of_bin(bin as usize),
            "block {block} closed on another die"
        );
        self.queues[bin as usize].push_back(block);
    }
    fn choose(&mut self, _: &Layout, blocks: &ClosedBlocks, bin: u32) -> Option<u32> {
        let victim = self.queues[bin as usize].pop_front();
        // The queue holds exactly the closed blocks (only `take_victim` removes one).
        assert!(
            victim.is_none_or(|b| blocks.meta[b as usize].member),
            "{victim:?}"
        );
        victim
    }
    fn can_choose(&self, bin: u32, block: u32, _valid: u32) -> bool {
        self.queues[bin as usize].contains(&block)
    }
}

/// Rosenblum & Ousterhout's cost-benefit, by a scan of the bin's closed blocks (the age clock
/// counts the blocks closed on the die, whatever their group).
#[derive(Clone, Debug)]
pub(crate) struct CostBenefit {
    /// Per block: the die's close clock when it was closed.
    closed_seq: Vec<u64>,
    /// Per die: blocks closed so far (the clock).
    seq: Vec<u64>,
}

impl VictimPolicy for CostBenefit {
    fn new(layout: &Layout, _groups: u32) -> CostBenefit {
        CostBenefit {
            closed_seq: vec![0; layout.total_blocks() as usize],
            seq: vec![0; layout.dies as usize],
        }
    }
    fn closed(&mut self, layout: &Layout, b: &ClosedBlocks, bin: u32, block: u32, _valid: u32) {
        let die = b.die_of_bin(bin as usize);
        assert_eq!(
            layout.die_of(block),
            die,
            "block {block} closed on another die"
        );
        self.closed_seq[block as usize] = self.seq[die as usize];
        self.seq[die as usize] += 1;
    }
    fn choose(&mut self, layout: &Layout, blocks: &ClosedBlocks, bin: u32) -> Option<u32> {
        let now = self.seq[blocks.die_of_bin(bin as usize) as usize];
        let mut best: Option<(f64, u64, u32)> = None;
        for b in blocks.blocks_of_bin(layout, bin as usize) {
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
            best.is_some() || blocks.count[bin as usize] == 0,
            "bin {bin}: closed blocks cost-benefit cannot find"
        );
        best.map(|(_, _, b)| b)
    }
    fn can_choose(&self, _bin: u32, _block: u32, _valid: u32) -> bool {
        true
    }
}

/// Closed blocks of every die, indexed for victim selection by policy `P` in one bin per
/// (die, victim group), plus every block's valid-page count (closed or not). Blocks are global
/// ids laid out die by die (`die * blocks_per_die + i`, as in [`crate::flash::Flash`]).
#[derive(Clone, Debug)]
pub(crate) struct VictimIndex<P> {
    blocks: ClosedBlocks,
    policy: P,
    /// Per bin, with more than one group: closed blocks holding no valid page, and closed
    /// blocks holding only valid pages (what [`VictimIndex::take_victim`]'s rules look at).
    empty: Vec<u32>,
    full: Vec<u32>,
    ppb: u32,
}

impl<P: VictimPolicy> VictimIndex<P> {
    /// An index with `groups` victim groups per die (1: any closed block of a die is a
    /// candidate).
    pub fn new(layout: &Layout, groups: u32) -> VictimIndex<P> {
        assert!(
            layout.dies >= 1 && layout.ppb >= 1 && groups >= 1 && groups <= u16::MAX as u32,
            "an index over {layout:?} in {groups} groups"
        );
        let bins = layout.dies as usize * groups as usize;
        VictimIndex {
            blocks: ClosedBlocks {
                meta: vec![Meta::default(); layout.total_blocks() as usize],
                count: vec![0; bins],
                groups,
            },
            policy: P::new(layout, groups),
            empty: vec![0; bins],
            full: vec![0; bins],
            ppb: layout.ppb,
        }
    }

    #[inline]
    fn bin(&self, die: u32, group: u16) -> usize {
        die as usize * self.blocks.groups as usize + group as usize
    }

    fn bins_of_die(&self, die: u32) -> std::ops::Range<usize> {
        let g = self.blocks.groups as usize;
        die as usize * g..(die as usize + 1) * g
    }

    /// Closed blocks on `die` (every group).
    pub fn closed_blocks(&self, die: u32) -> u32 {
        self.blocks.count[self.bins_of_die(die)].iter().sum()
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

    /// A block of `die` was filled and closed with `valid` valid pages, in victim `group`.
    pub fn insert(&mut self, layout: &Layout, die: u32, block: u32, valid: u32, group: u16) {
        assert!(!self.contains(block), "block {block} closed twice");
        assert!(
            valid <= layout.ppb,
            "block {block} closed with {valid} valid pages"
        );
        assert!(
            (group as u32) < self.blocks.groups,
            "block {block} closed in group {group} of {}",
            self.blocks.groups
        );
        self.blocks.meta[block as usize] = Meta {
            valid,
            member: true,
            group,
        };
        let bin = self.bin(die, group);
        self.blocks.count[bin] += 1;
        if self.blocks.groups > 1 {
            self.empty[bin] += u32::from(valid == 0);
            self.full[bin] += u32::from(valid == self.ppb);
        }
        self.policy
            .closed(layout, &self.blocks, bin as u32, block, valid);
    }

    /// A block (closed or open) lost one valid page (overwrite or trim). `GROUPED`: whether
    /// the index has more than one victim group, which the caller fixes once (for a run of
    /// writes: [`VictimIndex::grouped`]), so the one-group case computes no bin and checks
    /// no group count per page.
    #[inline(always)]
    pub fn invalidate_one<const GROUPED: bool>(&mut self, layout: &Layout, die: u32, block: u32) {
        debug_assert_eq!(GROUPED, self.grouped(), "the caller's group count");
        let m = &mut self.blocks.meta[block as usize];
        assert!(m.valid > 0, "block {block} lost a page it did not hold");
        m.valid -= 1;
        if m.member {
            let (v, group) = (m.valid, m.group);
            // One group (the default): the bin is the die, and no per-bin counts are kept.
            let bin = if GROUPED {
                self.grouped_invalidation(die, group, v)
            } else {
                die
            };
            self.policy.invalidated(layout, &self.blocks, bin, block, v);
        }
    }

    /// Whether the index has more than one victim group (fixed at construction).
    #[inline]
    pub fn grouped(&self) -> bool {
        self.blocks.groups > 1
    }

    /// With several groups: a closed block of `group` on `die` now holds `valid` pages; keep
    /// its bin's counts of empty and full blocks. Returns the bin.
    #[inline(never)]
    fn grouped_invalidation(&mut self, die: u32, group: u16, valid: u32) -> u32 {
        let bin = self.bin(die, group);
        self.full[bin] -= u32::from(valid + 1 == self.ppb);
        self.empty[bin] += u32::from(valid == 0);
        bin as u32
    }

    /// The bin of `die` GC takes its victim from when `group` needs a free block, with more
    /// than one group (a stream's own blocks, [`crate::GcVictimScope::Stream`]): a bin
    /// holding a block with no valid page (erasing it copies nothing); else `group`'s own
    /// bin if one of its blocks holds an invalid page (collecting it frees something); else
    /// the bin with most such blocks (its set can give one up), else most blocks.
    fn victim_bin(&self, die: u32, group: u16) -> usize {
        let bins = self.bins_of_die(die);
        if let Some(b) = bins.clone().find(|&b| self.empty[b] > 0) {
            return b;
        }
        let reclaimable = |b: usize| self.blocks.count[b] - self.full[b];
        let own = self.bin(die, group);
        if reclaimable(own) > 0 {
            return own;
        }
        // Ties go to the lower bin (determinism).
        bins.max_by_key(|&b| (reclaimable(b), self.blocks.count[b], std::cmp::Reverse(b)))
            .expect("a die has a bin")
    }

    /// Choose and remove the victim on `die` for victim `group` (see `victim_bin`); `None`
    /// when the die has no closed block.
    pub fn take_victim(&mut self, layout: &Layout, die: u32, group: u16) -> Option<u32> {
        // One group (the default): the die's bin, with no rule to apply.
        let d = if self.blocks.groups == 1 {
            die as usize
        } else if self.closed_blocks(die) == 0 {
            return None;
        } else {
            self.victim_bin(die, group)
        };
        if self.blocks.count[d] == 0 {
            return None;
        }
        let victim = self.policy.choose(layout, &self.blocks, d as u32);
        // Every closed block can be found by its policy (a bin with one has a victim).
        let victim = victim.expect("a bin with closed blocks has a victim");
        let group = self.blocks.meta[victim as usize].group;
        assert_eq!(self.bin(die, group), d, "victim {victim} is not in its bin");
        let m = &mut self.blocks.meta[victim as usize];
        assert!(m.member, "victim {victim} is not a closed block");
        m.member = false;
        let v = m.valid;
        self.blocks.count[d] -= 1;
        if self.blocks.groups > 1 {
            self.empty[d] -= u32::from(v == 0);
            self.full[d] -= u32::from(v == self.ppb);
        }
        Some(victim)
    }

    /// Check the index against the FTL's valid counts (`valid_of(block)`): counts agree, every
    /// closed block is findable by its policy in its bin, per-bin counts (closed, empty, full)
    /// match.
    pub fn check(
        &self,
        layout: &Layout,
        valid_of: impl Fn(u32) -> u32,
    ) -> Result<(), InvariantError> {
        let bins = self.blocks.count.len();
        let (mut members, mut empty, mut full) =
            (vec![0u32; bins], vec![0u32; bins], vec![0u32; bins]);
        for die in 0..layout.dies {
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
                let bin = self.bin(die, m.group);
                members[bin] += 1;
                empty[bin] += u32::from(m.valid == 0);
                full[bin] += u32::from(m.valid == layout.ppb);
                if !self.policy.can_choose(bin as u32, b, m.valid) {
                    return Err(InvariantError::VictimUnfindable {
                        block: b,
                        valid: m.valid,
                    });
                }
            }
        }
        let counted = |what, expected: &[u32], found: &[u32]| {
            let bin = (0..bins).find(|&i| expected[i] != found[i]);
            bin.map_or(Ok(()), |i| {
                Err(InvariantError::Count {
                    what,
                    expected: expected[i] as u64,
                    found: found[i] as u64,
                })
            })
        };
        counted(
            "closed blocks in a victim bin",
            &self.blocks.count,
            &members,
        )?;
        if self.blocks.groups > 1 {
            counted(
                "closed blocks without valid pages in a bin",
                &self.empty,
                &empty,
            )?;
            counted(
                "closed blocks full of valid pages in a bin",
                &self.full,
                &full,
            )?;
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
        (l, VictimIndex::new(&l, 1))
    }

    #[test]
    fn greedy_takes_the_block_with_fewest_valid_pages() {
        let (l, mut ix) = index::<Greedy>(1, 4, 8);
        ix.insert(&l, 0, 0, 8, 0);
        ix.insert(&l, 0, 1, 8, 0);
        ix.insert(&l, 0, 2, 8, 0);
        for _ in 0..5 {
            ix.invalidate_one::<false>(&l, 0, 1);
        }
        ix.invalidate_one::<false>(&l, 0, 2);
        assert_eq!(ix.take_victim(&l, 0, 0), Some(1));
        assert_eq!(ix.take_victim(&l, 0, 0), Some(2));
        assert_eq!(ix.take_victim(&l, 0, 0), Some(0));
        assert_eq!(ix.take_victim(&l, 0, 0), None);
    }

    #[test]
    fn fifo_takes_the_oldest_closed_block_whatever_its_validity() {
        let (l, mut ix) = index::<Fifo>(1, 3, 8);
        ix.insert(&l, 0, 2, 8, 0);
        ix.insert(&l, 0, 0, 1, 0);
        assert_eq!(ix.take_victim(&l, 0, 0), Some(2));
        assert_eq!(ix.take_victim(&l, 0, 0), Some(0));
    }

    #[test]
    fn cost_benefit_weighs_age_against_utilisation() {
        let (l, mut ix) = index::<CostBenefit>(1, 3, 8);
        ix.insert(&l, 0, 0, 4, 0);
        ix.insert(&l, 0, 1, 4, 0);
        ix.insert(&l, 0, 2, 2, 0);
        // Clock 3. Block 2: u = 1/4, age 2 -> 3.0; block 0: u = 1/2, age 4 -> 2.0;
        // block 1: u = 1/2, age 3 -> 1.5.
        assert_eq!(ix.take_victim(&l, 0, 0), Some(2));
        assert_eq!(ix.take_victim(&l, 0, 0), Some(0));
        assert_eq!(ix.take_victim(&l, 0, 0), Some(1));
    }

    #[test]
    fn dies_are_independent() {
        let (l, mut ix) = index::<Greedy>(2, 4, 4);
        ix.insert(&l, 0, 0, 4, 0);
        ix.insert(&l, 1, 3, 1, 0);
        assert_eq!(ix.take_victim(&l, 0, 0), Some(0));
        assert_eq!(ix.take_victim(&l, 0, 0), None);
        assert_eq!(ix.take_victim(&l, 1, 0), Some(3));
        ix.check(&l, |b| [4, 0, 0, 1][b as usize]).unwrap();
    }

    fn grouped<P: VictimPolicy>(groups: u32) -> (Layout, VictimIndex<P>) {
        let l = Layout {
            ppb: 4,
            blocks_per_die: 8,
            dies: 1,
            channels: 1,
        };
        (l, VictimIndex::new(&l, groups))
    }

    #[test]
    fn a_group_takes_its_own_victim_before_a_better_one_of_another_group() {
        let (l, mut ix) = grouped::<Greedy>(2);
        ix.insert(&l, 0, 0, 1, 0); // group 0: the device-wide best
        ix.insert(&l, 0, 1, 3, 1); // group 1: its own, worse
        assert_eq!(ix.take_victim(&l, 0, 1), Some(1));
        assert_eq!(ix.take_victim(&l, 0, 1), Some(0), "none left of its own");
        ix.check(&l, |b| [1, 3, 0, 0, 0, 0, 0, 0][b as usize])
            .unwrap();
    }

    #[test]
    fn a_block_without_valid_pages_is_taken_from_any_group() {
        let (l, mut ix) = grouped::<Greedy>(2);
        ix.insert(&l, 0, 0, 2, 0);
        ix.insert(&l, 0, 1, 2, 1);
        ix.invalidate_one::<true>(&l, 0, 1);
        ix.invalidate_one::<true>(&l, 0, 1);
        assert_eq!(ix.take_victim(&l, 0, 0), Some(1));
    }

    #[test]
    fn a_group_whose_blocks_are_all_valid_borrows_from_the_group_with_most_to_give() {
        let (l, mut ix) = grouped::<Greedy>(3);
        ix.insert(&l, 0, 0, 4, 0); // group 0 full: collecting it frees nothing
        ix.insert(&l, 0, 1, 3, 1);
        ix.insert(&l, 0, 2, 3, 2);
        ix.insert(&l, 0, 3, 2, 2);
        assert_eq!(ix.take_victim(&l, 0, 0), Some(3), "group 2 has two to give");
        let valid = [4, 3, 3, 2, 0, 0, 0, 0];
        ix.check(&l, |b| valid[b as usize]).unwrap();
    }

    #[test]
    fn one_group_is_the_device_wide_choice() {
        let (l, mut one) = grouped::<Greedy>(1);
        let (_, mut many) = grouped::<Greedy>(2);
        for (b, v) in [(0, 3), (1, 1), (2, 2)] {
            one.insert(&l, 0, b, v, 0);
            many.insert(&l, 0, b, v, (b % 2) as u16);
        }
        assert_eq!(one.take_victim(&l, 0, 0), Some(1));
        assert_eq!(many.take_victim(&l, 0, 0), Some(2), "group 0's best");
    }

    #[test]
    fn greedy_survives_many_stale_entries() {
        // Invalidate pages one by one across many blocks: stale entries pile up and are
        // rebuilt; the victim is still the emptiest block.
        let (l, mut ix) = index::<Greedy>(1, 64, 32);
        for b in 0..64 {
            ix.insert(&l, 0, b, 32, 0);
        }
        for round in 0..20 {
            for b in 0..64 {
                if b % 7 != 3 || round < 10 {
                    ix.invalidate_one::<false>(&l, 0, b);
                }
            }
        }
        ix.check(&l, |b| ix.valid(b)).unwrap();
        let v = ix.take_victim(&l, 0, 0).unwrap();
        assert_eq!(ix.valid(v), 12);
        assert_ne!(v % 7, 3);
    }
}
