//! 2Q (Johnson & Shasha, VLDB 1994), full version.
//!
//! Three queues: `Am` (LRU of resident pages seen twice), `A1in` (FIFO of resident pages seen
//! once) and `A1out` (FIFO of the ids of pages evicted from `A1in`, a ghost: no data).
//! - hit in `Am` -> most recent; hit in `A1in` -> nothing moves;
//! - a miss whose id is in `A1out` leaves `A1out` and goes to `Am`; any other miss -> `A1in`;
//! - victim: the oldest of `A1in` if `|A1in| > Kin`, otherwise the least recent of `Am`;
//!   an `A1in` victim's id is pushed to `A1out` (capped at `Kout`, oldest dropped).
//!
//! The mechanism decides when to make room (when `|Am| + |A1in|` = its size) and calls
//! [`Replacement::victim`] then [`Replacement::forget`] (which, for an `A1in` key, records its
//! id in `A1out` whether it was evicted or dropped). With `kout = 0` there is no ghost
//! queue: the flash-extension policies ([`crate::BufferPolicy`]) keep `A1out` on flash instead.

use crate::{Lru, Replacement};
use std::hash::Hash;

/// The two resident queues of 2Q.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Queue {
    /// Pages seen once, FIFO.
    A1in,
    /// Pages seen at least twice (or promoted from `A1out`), LRU.
    Am,
}

/// 2Q's two knobs, in pages.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TwoQConfig {
    /// `A1in` may hold more than `kin` pages only until room is needed.
    pub kin: usize,
    /// Capacity of the ghost queue `A1out` (ids only); 0 disables it.
    pub kout: usize,
}

impl TwoQConfig {
    /// The defaults for a buffer of `size` pages: Kin = 25 % of size (at least 1), Kout = 50 %.
    pub fn for_size(size: usize) -> TwoQConfig {
        TwoQConfig {
            kin: (size / 4).max(1),
            kout: size / 2,
        }
    }
}

/// 2Q replacement; see the module docs.
pub struct TwoQ<K> {
    am: Lru<K, ()>,
    a1in: Lru<K, ()>,
    a1out: Lru<K, ()>,
    config: TwoQConfig,
}

impl<K: Copy + Eq + Hash> TwoQ<K> {
    pub fn new(config: TwoQConfig) -> TwoQ<K> {
        TwoQ {
            am: Lru::new(),
            a1in: Lru::new(),
            a1out: Lru::new(),
            config,
        }
    }

    pub fn config(&self) -> TwoQConfig {
        self.config
    }

    /// The resident queue holding `key`, if any.
    pub fn queue_of(&self, key: &K) -> Option<Queue> {
        if self.am.contains(key) {
            Some(Queue::Am)
        } else if self.a1in.contains(key) {
            Some(Queue::A1in)
        } else {
            None
        }
    }

    /// Admit a missed `key` straight into `queue` (the extension policies promote pages read
    /// back from flash to `Am`).
    pub fn admit_to(&mut self, key: K, queue: Queue) {
        assert!(
            self.queue_of(&key).is_none(),
            "2Q: admitting a resident key"
        );
        // The order: a miss found in A1out leaves it first, then room is made. The
        // mechanism makes room before admitting, so `forget` may leave A1out one over Kout;
        // taking `key` out (or the oldest id) here gives exactly that order's result.
        if self.a1out.remove(&key).is_none() {
            self.trim_a1out(self.config.kout);
        }
        match queue {
            Queue::Am => self.am.insert(key, ()),
            Queue::A1in => self.a1in.insert(key, ()),
        };
    }

    /// Keys of `Am`, least recent first.
    pub fn am(&self) -> impl Iterator<Item = K> + '_ {
        self.am.iter().map(|(k, _)| *k)
    }

    /// Keys of `A1in`, oldest first.
    pub fn a1in(&self) -> impl Iterator<Item = K> + '_ {
        self.a1in.iter().map(|(k, _)| *k)
    }

    /// Ids in the ghost `A1out`, oldest first.
    pub fn a1out(&self) -> impl Iterator<Item = K> + '_ {
        self.a1out.iter().map(|(k, _)| *k)
    }

    fn trim_a1out(&mut self, max: usize) {
        while self.a1out.len() > max {
            self.a1out.pop_lru();
        }
    }

    /// Check the queues' invariants; panics with what is broken.
    pub fn check(&self) {
        self.am.check();
        self.a1in.check();
        self.a1out.check();
        assert!(
            self.a1out.len() <= self.config.kout + 1,
            "A1out over Kout + 1"
        );
        for (k, _) in self.a1in.iter() {
            assert!(!self.am.contains(k), "a key in both A1in and Am");
            assert!(!self.a1out.contains(k), "a resident key in A1out");
        }
        for (k, _) in self.am.iter() {
            assert!(!self.a1out.contains(k), "a resident key in A1out");
        }
    }
}

impl<K: Copy + Eq + Hash> Replacement<K> for TwoQ<K> {
    fn name(&self) -> &'static str {
        "2q"
    }

    fn admit(&mut self, key: K) {
        let queue = if self.a1out.contains(&key) {
            Queue::Am
        } else {
            Queue::A1in
        };
        self.admit_to(key, queue);
    }

    fn touch(&mut self, key: K) {
        // A hit in A1in moves nothing (it is a FIFO); a hit in Am makes the key most recent.
        self.am.touch(&key);
    }

    fn forget(&mut self, key: K) {
        if self.a1in.remove(&key).is_some() {
            if self.config.kout > 0 {
                self.a1out.insert(key, ());
                // One over Kout until the next admission (see `admit_to`).
                self.trim_a1out(self.config.kout + 1);
            }
        } else {
            self.am.remove(&key);
        }
    }

    fn victim(&mut self, evictable: &mut dyn FnMut(K) -> bool) -> Option<K> {
        if self.a1in.len() > self.config.kin {
            if let Some(k) = self.a1in.find_from_lru(|k, _| evictable(*k)) {
                return Some(k);
            }
        }
        // Kin >= size, or every A1in page pinned: fall back to the other queue.
        self.am
            .find_from_lru(|k, _| evictable(*k))
            .or_else(|| self.a1in.find_from_lru(|k, _| evictable(*k)))
    }

    fn len(&self) -> usize {
        self.am.len() + self.a1in.len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Run `refs` through a 2Q buffer of `size` pages (the mechanism: victim, then forget).
    fn run(size: usize, config: TwoQConfig, refs: &[u32]) -> TwoQ<u32> {
        let mut q = TwoQ::new(config);
        for &r in refs {
            if q.queue_of(&r).is_some() {
                q.touch(r);
                continue;
            }
            if q.len() == size {
                let v = q.victim(&mut |_| true).expect("a full buffer has a victim");
                q.forget(v);
            }
            q.admit(r);
            q.check();
        }
        q
    }

    fn state(q: &TwoQ<u32>) -> (Vec<u32>, Vec<u32>, Vec<u32>) {
        (q.a1in().collect(), q.am().collect(), q.a1out().collect())
    }

    #[test]
    fn defaults_follow_the_paper() {
        assert_eq!(TwoQConfig::for_size(100), TwoQConfig { kin: 25, kout: 50 });
        assert_eq!(TwoQConfig::for_size(2), TwoQConfig { kin: 1, kout: 1 });
    }

    #[test]
    fn first_references_go_to_a1in_and_a_hit_there_moves_nothing() {
        let c = TwoQConfig { kin: 1, kout: 2 };
        let q = run(4, c, &[1, 2, 3, 1]);
        assert_eq!(state(&q), (vec![1, 2, 3], vec![], vec![]));
    }

    #[test]
    fn a1in_over_kin_gives_the_victim_and_its_id_goes_to_a1out() {
        let c = TwoQConfig { kin: 1, kout: 2 };
        // 1,2,3 fill the buffer of 3; 4 evicts 1 (A1in holds 3 > Kin), 5 evicts 2.
        let q = run(3, c, &[1, 2, 3, 4, 5]);
        assert_eq!(state(&q), (vec![3, 4, 5], vec![], vec![1, 2]));
        // 6 evicts 3; A1out is capped at Kout = 2, so 1 is dropped.
        let q = run(3, c, &[1, 2, 3, 4, 5, 6]);
        assert_eq!(state(&q), (vec![4, 5, 6], vec![], vec![2, 3]));
    }

    #[test]
    fn a_miss_found_in_a1out_goes_to_am() {
        let c = TwoQConfig { kin: 1, kout: 2 };
        // After 1..5, A1out = [1, 2]; 2 misses and is found in A1out: it leaves A1out, then
        // room is made (A1in's oldest, 3, goes, its id to A1out) and 2 goes to Am.
        let q = run(3, c, &[1, 2, 3, 4, 5, 2]);
        assert_eq!(state(&q), (vec![4, 5], vec![2], vec![1, 3]));
        // A miss not in A1out while A1out is full: the oldest id (1) is dropped.
        let q = run(3, c, &[1, 2, 3, 4, 5, 2, 9]);
        assert_eq!(state(&q), (vec![5, 9], vec![2], vec![3, 4]));
    }

    #[test]
    fn am_is_lru_and_gives_the_victim_when_a1in_is_within_kin() {
        let c = TwoQConfig { kin: 1, kout: 4 };
        // 4 evicts 1, 1 evicts 2 and goes to Am, 2 evicts 3 and goes to Am.
        let q = run(3, c, &[1, 2, 3, 4, 1, 2]);
        assert_eq!(state(&q), (vec![4], vec![1, 2], vec![3]));
        // Hit 1 -> Am = [2, 1]; 5: |A1in| = 1 = Kin, so Am's LRU (2) leaves, and not to A1out.
        let q = run(3, c, &[1, 2, 3, 4, 1, 2, 1, 5]);
        assert_eq!(state(&q), (vec![4, 5], vec![1], vec![3]));
        // 6: |A1in| = 2 > Kin, so A1in's oldest (4) leaves, its id to A1out.
        let q = run(3, c, &[1, 2, 3, 4, 1, 2, 1, 5, 6]);
        assert_eq!(state(&q), (vec![5, 6], vec![1], vec![3, 4]));
    }

    #[test]
    fn pinned_pages_are_skipped() {
        let c = TwoQConfig { kin: 1, kout: 2 };
        let mut q = run(3, c, &[1, 2, 3]);
        assert_eq!(q.victim(&mut |k| k != 1), Some(2));
        assert_eq!(q.victim(&mut |_| false), None);
    }

    #[test]
    fn check_detects_a_key_in_two_queues() {
        let mut q = run(3, TwoQConfig { kin: 1, kout: 2 }, &[1, 2]);
        q.am.insert(1, ());
        let r = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| q.check()));
        assert!(r.is_err(), "a key in A1in and Am must fail the check");
    }
}
