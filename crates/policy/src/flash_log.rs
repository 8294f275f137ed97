//! The flash extension's log: a FIFO of at most `capacity` pages stored in `capacity` slots of
//! a flash device, with a DRAM directory (page -> slot). Two ways to pick the slot a new page
//! is written to ([`LogOrder`]):
//!
//! - [`LogOrder::Circular`] (P3's): a write head goes round the slots in order, 0, 1, ..,
//!   `capacity - 1`, 0, .. ("victim pages are written to the flash SSD sequentially, round
//!   robin"; "each queue is FIFO, implemented on the flash SSD as a circular ring", P3 §2.2,
//!   §2.3). A page read back into main (or invalidated) leaves the directory at once and its
//!   slot becomes a hole, rewritten only when the head comes round to it; a slot still holding
//!   a live page when the head reaches it holds the log's oldest page, which leaves flash
//!   ("when the flash is full, pages are pushed out FIFO", §2.2). The device sees one
//!   sequential stream of overwrites; holes cost capacity (the log may hold fewer than
//!   `capacity` pages).
//! - [`LogOrder::SlotRefill`]: when the log already holds `capacity` pages, the oldest leaves
//!   and its slot takes the new page; a slot freed by a read-back is reused by the next append,
//!   out of order, so the log never holds fewer pages than it could, but the device sees
//!   scattered overwrites.
//!
//! Invariants (`check`): every live page has exactly one slot, no slot holds two pages,
//! `len() <= capacity`; slot refill: a written slot is either live or free, never both;
//! circular: the ring's occupied slots are exactly the live pages' slots, and the slot under
//! the head holds the oldest live page whenever it holds one.

use crate::Lru;
use std::hash::Hash;

/// Where an appended page went and which page had to leave for it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Appended<K> {
    pub slot: u32,
    /// The oldest page, dropped because the log was full (its slot is `slot`).
    pub displaced: Option<K>,
}

/// How a log picks the slot of a new page (module docs).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum LogOrder {
    /// Reuse the slot a read-back freed (or the oldest page's): out-of-order overwrites.
    #[default]
    SlotRefill,
    /// P3's circular log: a write head goes round the slots in order.
    Circular,
}

impl LogOrder {
    pub const ALL: [LogOrder; 2] = [LogOrder::SlotRefill, LogOrder::Circular];

    pub fn name(self) -> &'static str {
        match self {
            LogOrder::SlotRefill => "slot-refill",
            LogOrder::Circular => "circular",
        }
    }

    pub fn parse(s: &str) -> Option<LogOrder> {
        LogOrder::ALL.into_iter().find(|o| o.name() == s)
    }
}

/// See the module docs.
pub struct FlashLog<K> {
    /// Live pages, oldest first, with their slots (a FIFO: never touched).
    order: Lru<K, u32>,
    capacity: u32,
    /// Slots freed by read-backs, reused before untouched ones (slot refill only).
    free: Vec<u32>,
    /// Slots `next_unused..capacity` have never been written.
    next_unused: u32,
    /// Circular only: what each written slot holds (`None`: a hole), and the write head.
    ring: Option<Ring<K>>,
}

/// The circular log's slots: `slots[s]` is the live page in slot `s`; `head` is the next slot
/// written.
struct Ring<K> {
    slots: Vec<Option<K>>,
    head: u32,
}

impl<K: Copy + Eq + Hash> FlashLog<K> {
    /// A slot-refill log of `capacity` pages (0: nothing is ever kept).
    pub fn new(capacity: usize) -> FlashLog<K> {
        FlashLog::with_order(capacity, LogOrder::SlotRefill)
    }

    /// A log of `capacity` pages (0: nothing is ever kept) writing its slots in `order`.
    pub fn with_order(capacity: usize, order: LogOrder) -> FlashLog<K> {
        assert!(
            capacity < u32::MAX as usize,
            "a flash log holds < 2^32 pages"
        );
        FlashLog {
            order: Lru::with_capacity(capacity.min(1 << 20)),
            capacity: capacity as u32,
            free: Vec::new(),
            next_unused: 0,
            ring: (order == LogOrder::Circular).then(|| Ring {
                slots: Vec::with_capacity(capacity.min(1 << 20)),
                head: 0,
            }),
        }
    }

    pub fn log_order(&self) -> LogOrder {
        if self.ring.is_some() {
            LogOrder::Circular
        } else {
            LogOrder::SlotRefill
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
        match &mut self.ring {
            Some(ring) => ring.slots[slot as usize] = None,
            None => self.free.push(slot),
        }
        Some(slot)
    }

    /// Append `key` (not on flash yet) as the newest page. Panics on a zero-capacity log: the
    /// policy sends nothing to an empty log.
    pub fn append(&mut self, key: K) -> Appended<K> {
        assert!(self.capacity > 0, "append to a zero-capacity flash log");
        assert!(!self.order.contains(&key), "page appended twice to the log");
        if self.ring.is_some() {
            return self.append_at_head(key);
        }
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

    /// Circular: write `key` at the head, dropping the page the slot still holds (the oldest).
    fn append_at_head(&mut self, key: K) -> Appended<K> {
        let ring = self.ring.as_mut().expect("a circular log");
        let slot = ring.head;
        ring.head = (slot + 1) % self.capacity;
        let mut displaced = None;
        if slot == self.next_unused {
            ring.slots.push(None);
            self.next_unused += 1;
        } else if let Some(old) = ring.slots[slot as usize].take() {
            let (oldest, oldest_slot) = self.order.pop_lru().expect("a live slot has a page");
            assert!(
                oldest == old && oldest_slot == slot,
                "the head's page is the oldest live page"
            );
            displaced = Some(old);
        }
        ring.slots[slot as usize] = Some(key);
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
        if let Some(ring) = &self.ring {
            self.check_ring(ring);
            return;
        }
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

    fn check_ring(&self, ring: &Ring<K>) {
        assert!(self.free.is_empty(), "a circular log keeps no free list");
        assert_eq!(ring.slots.len(), self.next_unused as usize, "ring length");
        assert!(ring.head < self.capacity.max(1), "head past the log's end");
        let occupied = ring.slots.iter().filter(|s| s.is_some()).count();
        assert_eq!(occupied, self.order.len(), "occupied slots != live pages");
        for (k, s) in self.iter() {
            assert!(
                ring.slots.get(s as usize).copied().flatten() == Some(k),
                "live page not in its slot {s}"
            );
        }
        if let (Some(Some(at_head)), Some((oldest, _))) =
            (ring.slots.get(ring.head as usize), self.order.iter().next())
        {
            assert!(at_head == oldest, "the head's page is not the oldest");
        }
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
