//! An O(1) LRU list: slab of entries linked in recency order, with a hash index.

use rustc_hash::FxHashMap;
use std::hash::Hash;

const NIL: u32 = u32::MAX;

struct Entry<K, V> {
    key: K,
    value: Option<V>,
    /// Towards the least recent end.
    prev: u32,
    /// Towards the most recent end.
    next: u32,
}

/// Keys with values in recency order; see the crate docs.
pub struct Lru<K, V> {
    slots: Vec<Entry<K, V>>,
    index: FxHashMap<K, u32>,
    /// Least recently used (the eviction end).
    head: u32,
    /// Most recently used.
    tail: u32,
    free: Vec<u32>,
}

impl<K: Copy + Eq + Hash, V> Default for Lru<K, V> {
    fn default() -> Self {
        Lru::new()
    }
}

impl<K: Copy + Eq + Hash, V> Lru<K, V> {
    pub fn new() -> Lru<K, V> {
        Lru::with_capacity(0)
    }

    /// Room for `n` entries without reallocating.
    pub fn with_capacity(n: usize) -> Lru<K, V> {
        let mut index = FxHashMap::default();
        index.reserve(n);
        Lru {
            slots: Vec::with_capacity(n),
            index,
            head: NIL,
            tail: NIL,
            free: Vec::new(),
        }
    }

    pub fn len(&self) -> usize {
        self.index.len()
    }

    pub fn is_empty(&self) -> bool {
        self.index.is_empty()
    }

    pub fn contains(&self, key: &K) -> bool {
        self.index.contains_key(key)
    }

    /// The value, without changing its recency.
    pub fn peek(&self, key: &K) -> Option<&V> {
        let &s = self.index.get(key)?;
        self.slots[s as usize].value.as_ref()
    }

    /// The value, made most recent.
    pub fn get(&mut self, key: &K) -> Option<&mut V> {
        let &s = self.index.get(key)?;
        self.move_to_tail(s);
        self.slots[s as usize].value.as_mut()
    }

    /// The value for writing, without changing its recency.
    pub fn peek_mut(&mut self, key: &K) -> Option<&mut V> {
        let &s = self.index.get(key)?;
        self.slots[s as usize].value.as_mut()
    }

    /// Make `key` most recent; false if absent.
    pub fn touch(&mut self, key: &K) -> bool {
        match self.index.get(key) {
            Some(&s) => {
                self.move_to_tail(s);
                true
            }
            None => false,
        }
    }

    /// The slot holding `key`: a handle [`Lru::touch_slot`] takes, valid until `key` is
    /// removed.
    pub fn slot_of(&self, key: &K) -> Option<u32> {
        self.index.get(key).copied()
    }

    /// Make `key`, held at `slot` (from [`Lru::slot_of`]), most recent without looking it
    /// up; a slot that does not hold `key` (a stale handle) falls back to the lookup.
    /// False if `key` is absent.
    pub fn touch_slot(&mut self, key: &K, slot: u32) -> bool {
        let held = self
            .slots
            .get(slot as usize)
            .is_some_and(|e| e.key == *key && e.value.is_some());
        if held {
            self.move_to_tail(slot);
            return true;
        }
        self.touch(key)
    }

    /// Load the entries of `slots` and their neighbours (what `touch_slot` reads), each stage
    /// one loop of independent loads; a hint that changes nothing (stale slots are skipped).
    pub fn warm_slots(&self, slots: &[u32]) {
        let entry = |s: u32| self.slots.get(s as usize);
        let mut sum = 0u32;
        for &s in slots {
            sum = sum.wrapping_add(entry(s).map_or(0, |e| e.prev));
        }
        for &s in slots {
            if let Some(e) = entry(s) {
                let near = [e.prev, e.next].map(|n| entry(n).map_or(0, |m| m.next));
                sum = sum.wrapping_add(near[0]).wrapping_add(near[1]);
            }
        }
        std::hint::black_box(sum);
    }

    /// Insert or replace as most recent; returns the old value if the key was present.
    pub fn insert(&mut self, key: K, value: V) -> Option<V> {
        if let Some(&s) = self.index.get(&key) {
            self.move_to_tail(s);
            return self.slots[s as usize].value.replace(value);
        }
        let entry = Entry {
            key,
            value: Some(value),
            prev: NIL,
            next: NIL,
        };
        let s = match self.free.pop() {
            Some(s) => {
                self.slots[s as usize] = entry;
                s
            }
            None => {
                assert!(
                    self.slots.len() < NIL as usize,
                    "Lru holds at most 2^32-1 entries"
                );
                self.slots.push(entry);
                (self.slots.len() - 1) as u32
            }
        };
        self.link_tail(s);
        self.index.insert(key, s);
        None
    }

    /// Remove `key`; its value if it was present.
    pub fn remove(&mut self, key: &K) -> Option<V> {
        let s = self.index.remove(key)?;
        Some(self.release(s))
    }

    /// The least recent key and value, without removing them.
    pub fn peek_lru(&self) -> Option<(&K, &V)> {
        if self.head == NIL {
            return None;
        }
        let e = &self.slots[self.head as usize];
        Some((
            &e.key,
            e.value.as_ref().expect("linked entries hold values"),
        ))
    }

    /// The most recent key and value.
    pub fn peek_mru(&self) -> Option<(&K, &V)> {
        if self.tail == NIL {
            return None;
        }
        let e = &self.slots[self.tail as usize];
        Some((
            &e.key,
            e.value.as_ref().expect("linked entries hold values"),
        ))
    }

    /// Remove and return the least recent entry.
    pub fn pop_lru(&mut self) -> Option<(K, V)> {
        if self.head == NIL {
            return None;
        }
        let s = self.head;
        let key = self.slots[s as usize].key;
        self.index.remove(&key);
        Some((key, self.release(s)))
    }

    /// Entries from least to most recent.
    pub fn iter(&self) -> impl Iterator<Item = (&K, &V)> + '_ {
        let mut s = self.head;
        std::iter::from_fn(move || {
            if s == NIL {
                return None;
            }
            let e = &self.slots[s as usize];
            s = e.next;
            Some((
                &e.key,
                e.value.as_ref().expect("linked entries hold values"),
            ))
        })
    }

    /// The first key from the least recent end for which `pred` holds.
    pub fn find_from_lru(&self, mut pred: impl FnMut(&K, &V) -> bool) -> Option<K> {
        self.iter().find(|(k, v)| pred(k, v)).map(|(k, _)| *k)
    }

    pub fn clear(&mut self) {
        self.slots.clear();
        self.index.clear();
        self.free.clear();
        (self.head, self.tail) = (NIL, NIL);
    }

    /// Check the structure's invariants; panics with what is broken.
    pub fn check(&self) {
        let mut n = 0usize;
        let mut prev = NIL;
        let mut s = self.head;
        while s != NIL {
            let e = &self.slots[s as usize];
            assert_eq!(e.prev, prev, "slot {s}: back link broken");
            assert!(e.value.is_some(), "slot {s}: linked but empty");
            assert_eq!(
                self.index.get(&e.key),
                Some(&s),
                "slot {s}: index disagrees"
            );
            n += 1;
            assert!(n <= self.index.len(), "list longer than the index (cycle?)");
            prev = s;
            s = e.next;
        }
        assert_eq!(prev, self.tail, "tail is not the last entry");
        assert_eq!(n, self.index.len(), "list and index differ in length");
        assert_eq!(n + self.free.len(), self.slots.len(), "slots leaked");
    }

    fn release(&mut self, s: u32) -> V {
        self.unlink(s);
        self.free.push(s);
        self.slots[s as usize]
            .value
            .take()
            .expect("linked entries hold values")
    }

    fn unlink(&mut self, s: u32) {
        let (prev, next) = {
            let e = &self.slots[s as usize];
            (e.prev, e.next)
        };
        match prev {
            NIL => self.head = next,
            p => self.slots[p as usize].next = next,
        }
        match next {
            NIL => self.tail = prev,
            n => self.slots[n as usize].prev = prev,
        }
    }

    fn link_tail(&mut self, s: u32) {
        let old = self.tail;
        {
            let e = &mut self.slots[s as usize];
            e.prev = old;
            e.next = NIL;
        }
        match old {
            NIL => self.head = s,
            t => self.slots[t as usize].next = s,
        }
        self.tail = s;
    }

    fn move_to_tail(&mut self, s: u32) {
        if self.tail != s {
            self.unlink(s);
            self.link_tail(s);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn touch_by_slot_is_touch_by_key_and_a_stale_slot_falls_back() {
        let (mut a, mut b) = (Lru::new(), Lru::new());
        for k in 1..=5u64 {
            a.insert(k, ());
            b.insert(k, ());
        }
        for k in [2u64, 4, 1, 2, 5] {
            a.touch(&k);
            let s = b.slot_of(&k).unwrap();
            assert!(b.touch_slot(&k, s));
        }
        let order = |l: &Lru<u64, ()>| l.iter().map(|(k, _)| *k).collect::<Vec<_>>();
        assert_eq!(order(&a), order(&b));
        // A slot reused by another key after a removal: the key is looked up instead.
        let s3 = b.slot_of(&3).unwrap();
        b.remove(&3);
        b.insert(9, ());
        assert_eq!(b.slot_of(&9), Some(s3));
        assert!(b.touch_slot(&4, s3));
        assert_eq!(order(&b).last(), Some(&4));
        assert!(!b.touch_slot(&3, s3));
        b.check();
    }

    #[test]
    fn evicts_in_recency_order() {
        let mut l = Lru::new();
        for k in 1..=3u64 {
            l.insert(k, k * 10);
        }
        assert_eq!(l.get(&1), Some(&mut 10));
        assert_eq!(l.pop_lru(), Some((2, 20)));
        assert_eq!(l.insert(3, 31), Some(30));
        assert_eq!(l.pop_lru(), Some((1, 10)));
        assert_eq!(l.pop_lru(), Some((3, 31)));
        assert_eq!(l.pop_lru(), None);
        l.check();
    }

    #[test]
    fn check_detects_a_broken_link() {
        let mut l = Lru::new();
        for k in 0..4u32 {
            l.insert(k, ());
        }
        l.slots[2].prev = 0;
        let r = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| l.check()));
        assert!(r.is_err(), "a corrupted back link must fail the check");
    }
}
