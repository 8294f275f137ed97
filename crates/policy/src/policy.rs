//! Replacement policies as types: the policy chooses, the mechanism evicts.

use crate::Lru;
use std::hash::Hash;

/// A replacement policy over the keys a cache holds.
///
/// The mechanism tells the policy what happened (`admit`, `touch`, `forget`) and asks it for a
/// victim; the policy never does I/O. `victim` skips keys the mechanism cannot evict now (pinned
/// frames) through `evictable`, and does not remove the key: the mechanism calls `forget` once the
/// eviction has happened (a failed write-back leaves the key resident).
pub trait Replacement<K> {
    /// The policy's name as the CLI spells it (`lru`, `2q`, ...).
    fn name(&self) -> &'static str;
    /// `key` became resident after a miss.
    fn admit(&mut self, key: K);
    /// `key` was referenced while resident.
    fn touch(&mut self, key: K);
    /// A handle to `key`'s entry (tracked since `admit`) that `touch_handle` takes instead of
    /// looking the key up — for a mechanism that keeps it beside its frame. None: this policy
    /// has none.
    fn handle(&self, _key: K) -> Option<u32> {
        None
    }
    /// `touch(key)` through `handle`, from `handle(key)` since `key` was admitted (a stale
    /// handle costs a lookup, never a wrong entry).
    fn touch_handle(&mut self, key: K, _handle: u32) {
        self.touch(key)
    }
    /// A hint before the entries of `handles` are touched one by one: bring what those
    /// touches read into the CPU's cache together (their misses overlap). Changes nothing.
    fn warm_handles(&self, _handles: &[u32]) {}
    /// `key` left the cache (evicted or dropped).
    fn forget(&mut self, key: K);
    /// The key to evict next among those `evictable` accepts; `None` if there is none.
    fn victim(&mut self, evictable: &mut dyn FnMut(K) -> bool) -> Option<K>;
    /// Resident keys the policy tracks.
    fn len(&self) -> usize;
    fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

/// Least recently used: hit -> most recent; the victim is the least recent evictable key.
pub struct LruPolicy<K> {
    order: Lru<K, ()>,
}

impl<K: Copy + Eq + Hash> Default for LruPolicy<K> {
    fn default() -> Self {
        LruPolicy::new()
    }
}

impl<K: Copy + Eq + Hash> LruPolicy<K> {
    pub fn new() -> LruPolicy<K> {
        LruPolicy { order: Lru::new() }
    }

    /// Tracked keys, least recent first.
    pub fn keys(&self) -> impl Iterator<Item = K> + '_ {
        self.order.iter().map(|(k, _)| *k)
    }
}

impl<K: Copy + Eq + Hash> Replacement<K> for LruPolicy<K> {
    fn name(&self) -> &'static str {
        "lru"
    }
    fn admit(&mut self, key: K) {
        self.order.insert(key, ());
    }
    fn touch(&mut self, key: K) {
        self.order.touch(&key);
    }
    fn handle(&self, key: K) -> Option<u32> {
        self.order.slot_of(&key)
    }
    fn touch_handle(&mut self, key: K, handle: u32) {
        self.order.touch_slot(&key, handle);
    }
    fn warm_handles(&self, handles: &[u32]) {
        self.order.warm_slots(handles);
    }
    fn forget(&mut self, key: K) {
        self.order.remove(&key);
    }
    fn victim(&mut self, evictable: &mut dyn FnMut(K) -> bool) -> Option<K> {
        self.order.find_from_lru(|k, _| evictable(*k))
    }
    fn len(&self) -> usize {
        self.order.len()
    }
}
