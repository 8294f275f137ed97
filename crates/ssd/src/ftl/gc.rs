//! Garbage-collection victim selection: the *policy* half of GC (the FTL applies the mechanism).
//!
//! Model: each die keeps its closed (full, not open) blocks in a [`VictimIndex`]. The index
//! knows each closed block's valid-page count and the order blocks were closed in, and picks
//! a victim by policy:
//! - `greedy`: fewest valid pages (per-count stacks updated lazily, see [`VictimIndex`]);
//! - `fifo`: the block closed longest ago (the log-structured "circular" cleaner of Desnoyers'
//!   and Hu et al.'s FIFO model), whatever its valid count;
//! - `cost_benefit`: highest `age * (1 - u) / (2u)` (Rosenblum & Ousterhout), `u` the valid
//!   fraction and `age` the number of blocks closed on the die since this one was closed;
//!   a linear scan over the die's closed blocks (it is the slow policy; that is the price).
//!
//! Invariant: only closed blocks can be chosen; every closed block can be found by its policy.

use crate::config::GcPolicy;

/// Per-block record, kept together so a page invalidation touches one cache line.
#[derive(Clone, Copy, Debug, Default)]
struct Meta {
    valid: u32,
    member: bool,
}

/// Closed blocks of every die, indexed for victim selection, plus every block's valid-page
/// count (closed or not). Blocks are global ids laid out die by die
/// (`die * blocks_per_die + i`, as in [`crate::flash::Flash`]).
///
/// Greedy keeps, per die, a stack of block ids for each valid count and updates it lazily: an
/// invalidation pushes the block onto its new count's stack and leaves the old entry behind;
/// a popped entry is used only if the block is still closed and still has that count. So an
/// invalidation costs one push, with no list surgery on neighbouring blocks (which would be
/// cache misses), and stale entries are dropped when popped or when a die's stacks grow past
/// a bound and are rebuilt from the counts (amortised O(1)).
#[derive(Clone, Debug)]
pub struct VictimIndex {
    policy: GcPolicy,
    ppb: u32,
    blocks_per_die: u32,
    meta: Vec<Meta>,
    closed_seq: Vec<u64>,
    /// Greedy: per die, per valid count, candidate blocks (possibly stale).
    stacks: Vec<Vec<Vec<u32>>>,
    /// Greedy: per die, entries in its stacks (live and stale).
    entries: Vec<usize>,
    /// Per die: closed blocks in close order (FIFO policy only).
    fifo: Vec<std::collections::VecDeque<u32>>,
    /// Per die: blocks closed so far (the cost-benefit clock).
    seq: Vec<u64>,
    /// Per die: number of closed blocks.
    count: Vec<u32>,
}

impl VictimIndex {
    pub fn new(policy: GcPolicy, dies: u32, blocks: u32, pages_per_block: u32) -> VictimIndex {
        assert!(
            dies > 0 && blocks.is_multiple_of(dies),
            "{blocks} blocks over {dies} dies"
        );
        let d = dies as usize;
        let stacks = match policy {
            GcPolicy::Greedy => vec![vec![Vec::new(); pages_per_block as usize + 1]; d],
            _ => Vec::new(),
        };
        VictimIndex {
            policy,
            ppb: pages_per_block,
            blocks_per_die: blocks / dies,
            meta: vec![Meta::default(); blocks as usize],
            closed_seq: vec![0; blocks as usize],
            stacks,
            entries: vec![0; d],
            fifo: vec![Default::default(); d],
            seq: vec![0; d],
            count: vec![0; d],
        }
    }

    pub fn policy(&self) -> GcPolicy {
        self.policy
    }

    /// Closed blocks on `die`.
    pub fn closed_blocks(&self, die: u32) -> u32 {
        self.count[die as usize]
    }

    pub fn contains(&self, block: u32) -> bool {
        self.meta[block as usize].member
    }

    /// Valid pages of any block (as reported through `insert`, `add_valid`, `invalidate_one`).
    #[inline]
    pub fn valid(&self, block: u32) -> u32 {
        self.meta[block as usize].valid
    }

    /// An open (not yet closed) block gained a valid page.
    #[inline]
    pub fn add_valid(&mut self, block: u32) {
        self.add_valid_n(block, 1);
    }

    /// An open block gained `n` valid pages.
    #[inline]
    pub fn add_valid_n(&mut self, block: u32, n: u32) {
        let m = &mut self.meta[block as usize];
        debug_assert!(!m.member, "closed block {block} gained pages");
        m.valid += n;
    }

    /// A block was erased: no valid pages.
    pub fn reset(&mut self, block: u32) {
        let m = &mut self.meta[block as usize];
        assert!(!m.member, "erasing closed block {block} still indexed");
        m.valid = 0;
    }

    /// A block of `die` was filled and closed with `valid` valid pages.
    pub fn insert(&mut self, die: u32, block: u32, valid: u32) {
        assert!(!self.contains(block), "block {block} closed twice");
        let d = die as usize;
        self.meta[block as usize] = Meta {
            valid,
            member: true,
        };
        self.closed_seq[block as usize] = self.seq[d];
        self.seq[d] += 1;
        self.count[d] += 1;
        match self.policy {
            GcPolicy::Greedy => self.push(d, block, valid),
            GcPolicy::Fifo => self.fifo[d].push_back(block),
            GcPolicy::CostBenefit => {}
        }
    }

    /// A block (closed or open) lost one valid page (overwrite or trim).
    #[inline]
    pub fn invalidate_one(&mut self, die: u32, block: u32) {
        let m = &mut self.meta[block as usize];
        m.valid -= 1;
        if m.member && self.policy == GcPolicy::Greedy {
            let v = m.valid;
            self.push(die as usize, block, v);
        }
    }

    /// Choose and remove the victim on `die`; `None` when the die has no closed block.
    pub fn take_victim(&mut self, die: u32) -> Option<u32> {
        let d = die as usize;
        if self.count[d] == 0 {
            return None;
        }
        let victim = match self.policy {
            GcPolicy::Greedy => self.pop_greedy(d),
            GcPolicy::Fifo => self.fifo[d].pop_front(),
            GcPolicy::CostBenefit => self.best_cost_benefit(d),
        }?;
        self.meta[victim as usize].member = false;
        self.count[d] -= 1;
        Some(victim)
    }

    #[inline]
    fn push(&mut self, d: usize, block: u32, valid: u32) {
        self.stacks[d][valid as usize].push(block);
        self.entries[d] += 1;
        if self.entries[d] > 4 * self.count[d] as usize + 64 {
            self.rebuild(d);
        }
    }

    /// Drop a die's stale entries: one entry per closed block, at its count.
    fn rebuild(&mut self, d: usize) {
        self.stacks[d].iter_mut().for_each(Vec::clear);
        let first = d * self.blocks_per_die as usize;
        for b in first..first + self.blocks_per_die as usize {
            let m = self.meta[b];
            if m.member {
                self.stacks[d][m.valid as usize].push(b as u32);
            }
        }
        self.entries[d] = self.count[d] as usize;
    }

    fn pop_greedy(&mut self, d: usize) -> Option<u32> {
        for v in 0..=self.ppb as usize {
            while let Some(b) = self.stacks[d][v].pop() {
                self.entries[d] -= 1;
                let m = self.meta[b as usize];
                if m.member && m.valid as usize == v {
                    return Some(b);
                }
            }
        }
        None
    }

    fn best_cost_benefit(&self, d: usize) -> Option<u32> {
        let now = self.seq[d];
        let first = d as u32 * self.blocks_per_die;
        let mut best: Option<(f64, u64, u32)> = None;
        for b in first..first + self.blocks_per_die {
            let m = self.meta[b as usize];
            if !m.member {
                continue;
            }
            let u = m.valid as f64 / self.ppb as f64;
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
        best.map(|(_, _, b)| b)
    }

    /// Check the index against the FTL's valid counts (`valid_of(block)`): counts agree, every
    /// closed block is findable by its policy, per-die counts match.
    pub fn check(&self, dies: u32, valid_of: impl Fn(u32) -> u32) -> Result<(), String> {
        for d in 0..dies as usize {
            let first = d as u32 * self.blocks_per_die;
            let mut members = 0;
            for b in first..first + self.blocks_per_die {
                let m = self.meta[b as usize];
                if m.valid != valid_of(b) {
                    return Err(format!(
                        "block {b}: index has {} valid pages, FTL {}",
                        m.valid,
                        valid_of(b)
                    ));
                }
                if !m.member {
                    continue;
                }
                members += 1;
                let findable = match self.policy {
                    GcPolicy::Greedy => self.stacks[d][m.valid as usize].contains(&b),
                    GcPolicy::Fifo => self.fifo[d].contains(&b),
                    GcPolicy::CostBenefit => true,
                };
                if !findable {
                    return Err(format!(
                        "closed block {b} ({} valid) cannot be chosen as a victim",
                        m.valid
                    ));
                }
            }
            if members != self.count[d] {
                return Err(format!(
                    "die {d}: {members} closed blocks, count says {}",
                    self.count[d]
                ));
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn greedy_takes_the_block_with_fewest_valid_pages() {
        let mut ix = VictimIndex::new(GcPolicy::Greedy, 1, 4, 8);
        ix.insert(0, 0, 8);
        ix.insert(0, 1, 8);
        ix.insert(0, 2, 8);
        for _ in 0..5 {
            ix.invalidate_one(0, 1);
        }
        ix.invalidate_one(0, 2);
        assert_eq!(ix.take_victim(0), Some(1));
        assert_eq!(ix.take_victim(0), Some(2));
        assert_eq!(ix.take_victim(0), Some(0));
        assert_eq!(ix.take_victim(0), None);
    }

    #[test]
    fn fifo_takes_the_oldest_closed_block_whatever_its_validity() {
        let mut ix = VictimIndex::new(GcPolicy::Fifo, 1, 3, 8);
        ix.insert(0, 2, 8);
        ix.insert(0, 0, 1);
        assert_eq!(ix.take_victim(0), Some(2));
        assert_eq!(ix.take_victim(0), Some(0));
    }

    #[test]
    fn cost_benefit_weighs_age_against_utilisation() {
        let mut ix = VictimIndex::new(GcPolicy::CostBenefit, 1, 3, 8);
        ix.insert(0, 0, 4);
        ix.insert(0, 1, 4);
        ix.insert(0, 2, 2);
        // Clock 3. Block 2: u = 1/4, age 2 -> 3.0; block 0: u = 1/2, age 4 -> 2.0;
        // block 1: u = 1/2, age 3 -> 1.5.
        assert_eq!(ix.take_victim(0), Some(2));
        assert_eq!(ix.take_victim(0), Some(0));
        assert_eq!(ix.take_victim(0), Some(1));
    }

    #[test]
    fn dies_are_independent() {
        let mut ix = VictimIndex::new(GcPolicy::Greedy, 2, 4, 4);
        ix.insert(0, 0, 4);
        ix.insert(1, 3, 1);
        assert_eq!(ix.take_victim(0), Some(0));
        assert_eq!(ix.take_victim(0), None);
        assert_eq!(ix.take_victim(1), Some(3));
        ix.check(2, |b| [4, 0, 0, 1][b as usize]).unwrap();
    }

    #[test]
    fn greedy_survives_many_stale_entries() {
        // Invalidate pages one by one across many blocks: stale entries pile up and are
        // rebuilt; the victim is still the emptiest block.
        let mut ix = VictimIndex::new(GcPolicy::Greedy, 1, 64, 32);
        for b in 0..64 {
            ix.insert(0, b, 32);
        }
        for round in 0..20 {
            for b in 0..64 {
                if b % 7 != 3 || round < 10 {
                    ix.invalidate_one(0, b);
                }
            }
        }
        ix.check(1, |b| ix.valid(b)).unwrap();
        let v = ix.take_victim(0).unwrap();
        assert_eq!(ix.valid(v), 12);
        assert_ne!(v % 7, 3);
    }
}
