//! Keys to frames for the page cache ([`super::frames`]): an array while keys are dense, a
//! hash map beyond.

use super::frames::FrameId;
use rustc_hash::FxHashMap;

/// Keys to frames: an array indexed by key while the keys are dense (device pages and node
/// ids: one memory access per lookup, where a hash table takes two), a hash map for keys far
/// beyond the resident count.
#[derive(Default)]
pub(super) struct FrameMap {
    /// `dense[k]`: key k's frame + 1 (0: none), for k below `dense.len()`.
    dense: Vec<u32>,
    /// The keys at or above `dense.len()`.
    sparse: FxHashMap<u64, FrameId>,
    len: usize,
}

impl FrameMap {
    /// The array may span this many keys per resident key (and a floor): keys spread wider
    /// go to the hash map.
    const SPREAD: usize = 8;
    const FLOOR: usize = 1 << 16;

    pub(super) fn get(&self, key: u64) -> Option<FrameId> {
        match self.dense.get(key as usize) {
            Some(&f) if f > 0 => Some(f as FrameId - 1),
            _ => self.sparse.get(&key).copied(),
        }
    }

    pub(super) fn len(&self) -> usize {
        self.len
    }

    /// Map `key` to `f` (not yet mapped).
    pub(super) fn insert(&mut self, key: u64, f: FrameId) {
        assert_eq!(self.get(key), None, "key {key} mapped twice");
        self.len += 1;
        let dense_ok =
            f < u32::MAX as usize && key < (Self::SPREAD * (self.len + 1) + Self::FLOOR) as u64;
        if dense_ok && key >= self.dense.len() as u64 {
            // Grow the array over `key` and move the keys it now spans out of the hash map.
            let n = (key as usize + 1).next_power_of_two().max(1024);
            self.dense.resize(n, 0);
            let moved: Vec<u64> = self
                .sparse
                .keys()
                .copied()
                .filter(|&k| k < n as u64)
                .collect();
            for k in moved {
                if let Some(g) = self.sparse.remove(&k) {
                    self.dense[k as usize] = g as u32 + 1;
                }
            }
        }
        match self.dense.get_mut(key as usize) {
            Some(slot) if f < u32::MAX as usize => *slot = f as u32 + 1,
            _ => {
                self.sparse.insert(key, f);
            }
        }
    }

    pub(super) fn remove(&mut self, key: u64) -> Option<FrameId> {
        let f = match self.dense.get_mut(key as usize) {
            Some(slot) if *slot > 0 => Some(std::mem::take(slot) as FrameId - 1),
            _ => self.sparse.remove(&key),
        };
        if f.is_some() {
            assert!(self.len > 0, "a mapped key counted");
            self.len -= 1;
        }
        f
    }

    pub(super) fn values(&self) -> impl Iterator<Item = FrameId> + '_ {
        let dense = self.dense.iter().filter_map(|&f| f.checked_sub(1));
        dense
            .map(|f| f as FrameId)
            .chain(self.sparse.values().copied())
    }
}

#[cfg(test)]
mod frame_map_tests {
    use super::FrameMap;
    use proptest::prelude::*;
    use std::collections::HashMap;

    proptest! {
        /// The map agrees with a HashMap model, for dense keys, far keys and keys the array
        /// grows over after they went to the hash map.
        #[test]
        fn frame_map_agrees_with_a_model(
            ops in proptest::collection::vec((0u8..3, prop_oneof![0u64..3000, 0u64..300_000, any::<u64>()]), 1..400)
        ) {
            let (mut m, mut model) = (FrameMap::default(), HashMap::new());
            for (i, (op, key)) in ops.into_iter().enumerate() {
                match op {
                    0 if !model.contains_key(&key) => {
                        m.insert(key, i);
                        model.insert(key, i);
                    }
                    1 => prop_assert_eq!(m.remove(key), model.remove(&key)),
                    _ => {}
                }
                prop_assert_eq!(m.get(key), model.get(&key).copied());
                prop_assert_eq!(m.len(), model.len());
            }
            for (k, f) in &model {
                prop_assert_eq!(m.get(*k), Some(*f));
            }
            let mut got: Vec<_> = m.values().collect();
            let mut want: Vec<_> = model.values().copied().collect();
            got.sort_unstable();
            want.sort_unstable();
            prop_assert_eq!(got, want);
        }
    }
}
