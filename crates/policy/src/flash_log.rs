//! The flash extension's log: a FIFO of at most `capacity` pages stored in `capacity` slots of
//! a flash device, with a DRAM directory (page -> slot).
//!
//! Model (P3): pages evicted from the main buffer are appended; when the log already holds
//! `capacity` pages, the oldest leaves first and its slot takes the new page, so while the log
//! is full the writes go round-robin through the slots (a circular log, sequential writes). A
//! page read back into main (or invalidated) leaves the log at once and frees its slot; the next
//! append reuses a freed slot, so the log never holds fewer pages than it could.
//!
//! Invariants (`check`): every live page has exactly one slot, no slot holds two pages,
//! `len() <= capacity`, and a slot is either live or free, never both.

use crate::Lru;
use std::hash::Hash;

/// Where an appended page went and which page had to leave for it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Appended<K> {
    pub slot: u32,
    /// The oldest page, dropped because the log was full (its slot is `slot`).
    pub displaced: Option<K>,
}

/// See the module docs.
pub struct FlashLog<K> {
    /// Live pages, oldest first, with their slots (a FIFO: never touched).
    order: Lru<K, u32>,
    capacity: u32,
    /// Slots freed by read-backs, reused before untouched ones.
    free: Vec<u32>,
    /// Slots `next_unused..capacity` have never been written.
    next_unused: u32,
}

impl<K: Copy + Eq + Hash> FlashLog<K> {
    /// A log of `capacity` pages (0: nothing is ever kept).
    pub fn new(capacity: usize) -> FlashLog<K> {
        assert!(
            capacity < u32::MAX as usize,
            "a flash log holds < 2^32 pages"
        );
        FlashLog {
            order: Lru::with_capacity(capacity.min(1 << 20)),
            capacity: capacity as u32,
            free: Vec::new(),
            next_unused: 0,
        }
    }

    pub fn capacity(&self) -> usize {
        self.capacity as usize
    }

    pub fn len(&self) -> usize {
        self.order.len()
    }

    pub fn is_empty(&self) -> bool {
        self.order.is_empty()
    }

    /// The slot holding `key`, if it is on flash.
    pub fn slot_of(&self, key: &K) -> Option<u32> {
        self.order.peek(key).copied()
    }

    pub fn contains(&self, key: &K) -> bool {
        self.order.contains(key)
    }

    /// Drop `key`'s copy (read back into main, or invalidated); its slot, if it was there.
    pub fn remove(&mut self, key: &K) -> Option<u32> {
        let slot = self.order.remove(key)?;
        self.free.push(slot);
        Some(slot)
    }

    /// Append `key` (not on flash yet) as the newest page. Panics on a zero-capacity log: the
    /// policy sends nothing to an empty log.
    pub fn append(&mut self, key: K) -> Appended<K> {
        assert!(self.capacity > 0, "append to a zero-capacity flash log");
        assert!(!self.order.contains(&key), "page appended twice to the log");
        let mut displaced = None;
        if self.order.len() == self.capacity as usize {
            let (old, slot) = self.order.pop_lru().expect("a full log has an oldest page");
            self.free.push(slot);
            displaced = Some(old);
        }
        let slot = match self.free.pop() {
            Some(s) => s,
            None => {
                let s = self.next_unused;
                self.next_unused += 1;
                s
            }
        };
        self.order.insert(key, slot);
        Appended { slot, displaced }
    }

    /// Live pages and their slots, oldest first.
    pub fn iter(&self) -> impl Iterator<Item = (K, u32)> + '_ {
        self.order.iter().map(|(k, s)| (*k, *s))
    }

    /// Check the invariants; panics with what is broken.
    pub fn check(&self) {
        self.order.check();
        assert!(
            self.order.len() <= self.capacity as usize,
            "log over capacity"
        );
        assert!(self.next_unused <= self.capacity, "slot past the log's end");
        let mut used = vec![false; self.next_unused as usize];
        let live = self.iter().map(|(_, s)| s);
        for s in live.chain(self.free.iter().copied()) {
            let u = used
                .get_mut(s as usize)
                .expect("slot beyond the written area");
            assert!(!*u, "slot {s} held twice (live or free)");
            *u = true;
        }
        assert!(
            used.iter().all(|&u| u),
            "a written slot is neither live nor free"
        );
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn full_log_drops_the_oldest_and_reuses_its_slot() {
        let mut log = FlashLog::new(2);
        assert_eq!(
            log.append(10u64),
            Appended {
                slot: 0,
                displaced: None
            }
        );
        assert_eq!(log.append(11).slot, 1);
        assert_eq!(
            log.append(12),
            Appended {
                slot: 0,
                displaced: Some(10)
            }
        );
        assert_eq!(
            log.append(13),
            Appended {
                slot: 1,
                displaced: Some(11)
            }
        );
        assert_eq!(log.iter().collect::<Vec<_>>(), vec![(12, 0), (13, 1)]);
        log.check();
    }

    #[test]
    fn a_read_back_frees_its_slot_without_a_displacement() {
        let mut log = FlashLog::new(3);
        for k in 1..=3u64 {
            log.append(k);
        }
        assert_eq!(log.remove(&2), Some(1));
        assert_eq!(log.remove(&2), None);
        assert_eq!(
            log.append(4),
            Appended {
                slot: 1,
                displaced: None
            }
        );
        assert_eq!(
            log.iter().map(|(k, _)| k).collect::<Vec<_>>(),
            vec![1, 3, 4]
        );
        log.check();
    }

    #[test]
    fn check_detects_a_slot_both_live_and_free() {
        let mut log = FlashLog::new(3);
        log.append(1u64);
        log.append(2u64);
        log.free.push(0);
        let r = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| log.check()));
        assert!(
            r.is_err(),
            "a live slot on the free list must fail the check"
        );
    }
}
