//! Garbage-collection victim selection: the *policy* half of GC (the FTL applies the mechanism).
//!
//! Model: each die keeps its closed (full, not open) blocks in a [`VictimIndex`]. The index
//! knows each closed block's valid-page count and the order blocks were closed in, and picks
//! a victim by policy:
//! - `greedy`: fewest valid pages (buckets by valid count with intrusive lists: O(1) updates,
//!   victim search scans buckets upward from the lowest non-empty one);
//! - `fifo`: the block closed longest ago (the log-structured "circular" cleaner of Desnoyers'
//!   and Hu et al.'s FIFO model), whatever its valid count;
//! - `cost_benefit`: highest `age * (1 - u) / (2u)` (Rosenblum & Ousterhout), `u` the valid
//!   fraction and `age` the number of blocks closed on the die since this one was closed;
//!   a linear scan over the die's closed blocks (it is the slow policy; that is the price).
//!
//! Invariant: a block is in at most one die's index, and only while closed; its bucket is
//! its current valid count.

use crate::config::GcPolicy;

const NIL: u32 = u32::MAX;

/// Per-block record, kept together so a page invalidation touches one cache line.
#[derive(Clone, Copy, Debug)]
struct Meta {
    prev: u32,
    next: u32,
    valid: u32,
    member: bool,
}

/// Closed blocks of every die, indexed for victim selection, plus every block's valid-page
/// count (closed or not). Blocks are global ids; the FTL tells which die each belongs to.
#[derive(Clone, Debug)]
pub struct VictimIndex {
    policy: GcPolicy,
    ppb: u32,
    meta: Vec<Meta>,
    closed_seq: Vec<u64>,
    /// Per die: head of each bucket (valid count 0..=ppb).
    heads: Vec<Vec<u32>>,
    /// Per die: closed blocks in close order (FIFO policy only).
    fifo: Vec<std::collections::VecDeque<u32>>,
    /// Per die: blocks closed so far (the cost-benefit clock).
    seq: Vec<u64>,
    /// Per die: number of closed blocks.
    count: Vec<u32>,
}

impl VictimIndex {
    pub fn new(policy: GcPolicy, dies: u32, blocks: u32, pages_per_block: u32) -> VictimIndex {
        let b = blocks as usize;
        VictimIndex {
            policy,
            ppb: pages_per_block,
            meta: vec![
                Meta {
                    prev: NIL,
                    next: NIL,
                    valid: 0,
                    member: false,
                };
                b
            ],
            closed_seq: vec![0; b],
            heads: vec![vec![NIL; pages_per_block as usize + 1]; dies as usize],
            fifo: vec![Default::default(); dies as usize],
            seq: vec![0; dies as usize],
            count: vec![0; dies as usize],
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
    pub fn valid(&self, block: u32) -> u32 {
        self.meta[block as usize].valid
    }

    /// An open (not yet closed) block gained a valid page.
    pub fn add_valid(&mut self, block: u32) {
        let m = &mut self.meta[block as usize];
        debug_assert!(!m.member, "closed block {block} gained a page");
        m.valid += 1;
    }

    /// An open block gained `n` valid pages.
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
        self.meta[block as usize].member = true;
        self.meta[block as usize].valid = valid;
        self.closed_seq[block as usize] = self.seq[d];
        self.seq[d] += 1;
        self.count[d] += 1;
        self.link(d, block);
        if self.policy == GcPolicy::Fifo {
            self.fifo[d].push_back(block);
        }
    }

    /// A block (closed or open) lost one valid page (overwrite or trim).
    #[inline]
    pub fn invalidate_one(&mut self, die: u32, block: u32) {
        if !self.meta[block as usize].member {
            self.meta[block as usize].valid -= 1;
            return;
        }
        let d = die as usize;
        self.unlink(d, block);
        self.meta[block as usize].valid -= 1;
        self.link(d, block);
    }

    /// Choose and remove the victim on `die`; `None` when the die has no closed block.
    pub fn take_victim(&mut self, die: u32) -> Option<u32> {
        let d = die as usize;
        let victim = match self.policy {
            GcPolicy::Greedy => self.heads[d].iter().copied().find(|&h| h != NIL)?,
            GcPolicy::Fifo => self.fifo[d].pop_front()?,
            GcPolicy::CostBenefit => self.best_cost_benefit(d)?,
        };
        self.unlink(d, victim);
        self.meta[victim as usize].member = false;
        self.count[d] -= 1;
        Some(victim)
    }

    fn best_cost_benefit(&self, d: usize) -> Option<u32> {
        let now = self.seq[d];
        let mut best: Option<(f64, u32)> = None;
        for &head in &self.heads[d] {
            let mut b = head;
            while b != NIL {
                let u = self.meta[b as usize].valid as f64 / self.ppb as f64;
                let age = (now - self.closed_seq[b as usize]) as f64 + 1.0;
                let score = if u == 0.0 {
                    f64::INFINITY
                } else {
                    age * (1.0 - u) / (2.0 * u)
                };
                // Ties go to the older block (smaller close sequence) for determinism.
                let better = match best {
                    None => true,
                    Some((s, cur)) => {
                        score > s
                            || (score == s
                                && self.closed_seq[b as usize] < self.closed_seq[cur as usize])
                    }
                };
                if better {
                    best = Some((score, b));
                }
                b = self.meta[b as usize].next;
            }
        }
        best.map(|(_, b)| b)
    }

    fn link(&mut self, d: usize, block: u32) {
        let v = self.meta[block as usize].valid as usize;
        let head = self.heads[d][v];
        let m = &mut self.meta[block as usize];
        m.prev = NIL;
        m.next = head;
        if head != NIL {
            self.meta[head as usize].prev = block;
        }
        self.heads[d][v] = block;
    }

    fn unlink(&mut self, d: usize, block: u32) {
        let m = self.meta[block as usize];
        if m.prev != NIL {
            self.meta[m.prev as usize].next = m.next;
        } else {
            debug_assert_eq!(self.heads[d][m.valid as usize], block);
            self.heads[d][m.valid as usize] = m.next;
        }
        if m.next != NIL {
            self.meta[m.next as usize].prev = m.prev;
        }
    }

    /// Check the index against the FTL's valid counts (`valid_of(block)`) and membership.
    pub fn check(&self, dies: u32, valid_of: impl Fn(u32) -> u32) -> Result<(), String> {
        let mut seen = 0u32;
        for d in 0..dies as usize {
            for (v, &head) in self.heads[d].iter().enumerate() {
                let mut b = head;
                while b != NIL {
                    if !self.contains(b) {
                        return Err(format!("block {b} listed but not a member"));
                    }
                    if valid_of(b) as usize != v || self.valid(b) as usize != v {
                        return Err(format!(
                            "block {b} in bucket {v} has {} valid pages",
                            valid_of(b)
                        ));
                    }
                    seen += 1;
                    b = self.meta[b as usize].next;
                }
            }
        }
        let members = self.meta.iter().filter(|m| m.member).count() as u32;
        if seen != members {
            return Err(format!("{members} members but {seen} listed"));
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
        ix.check(2, |_| 0).unwrap();
    }
}
