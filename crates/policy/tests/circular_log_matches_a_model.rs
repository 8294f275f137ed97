//! P3's circular flash log against the simplest model of it: a ring of `capacity` slots and a
//! write head. An append writes the head's slot (dropping what it held) and moves the head on;
//! a read-back empties its slot. Random mixes of appends and read-backs must give the same
//! slots, the same displaced pages and the same contents, and the log's writes must go
//! 0, 1, .., capacity - 1, 0, .. whatever the read-backs do.

use policy::{FlashLog, LogOrder};
use proptest::prelude::*;

/// The model: what each slot holds and where the head is.
struct Ring {
    slots: Vec<Option<u64>>,
    head: usize,
}

impl Ring {
    fn append(&mut self, key: u64) -> (u32, Option<u64>) {
        let slot = self.head;
        let displaced = self.slots[slot].replace(key);
        self.head = (self.head + 1) % self.slots.len();
        (slot as u32, displaced)
    }
    fn remove(&mut self, key: u64) -> Option<u32> {
        let s = self.slots.iter().position(|&k| k == Some(key))?;
        self.slots[s] = None;
        Some(s as u32)
    }
    fn contains(&self, key: u64) -> bool {
        self.slots.contains(&Some(key))
    }
}

#[derive(Clone, Debug)]
enum Op {
    /// Append this page (skipped when it is on flash already, as the policy never does it).
    Append(u64),
    /// Read this page back (a no-op when it is not on flash).
    Remove(u64),
}

fn ops() -> impl Strategy<Value = Vec<Op>> {
    let op = prop_oneof![
        3 => (0u64..40).prop_map(Op::Append),
        1 => (0u64..40).prop_map(Op::Remove),
    ];
    proptest::collection::vec(op, 0..400)
}

proptest! {
    #[test]
    fn circular_log_matches_the_ring_model(capacity in 1usize..12, ops in ops()) {
        let mut log = FlashLog::with_order(capacity, LogOrder::Circular);
        let mut model = Ring { slots: vec![None; capacity], head: 0 };
        let mut appends = 0u64;
        for op in ops {
            match op {
                Op::Append(k) if !model.contains(k) => {
                    let a = log.append(k);
                    let (slot, displaced) = model.append(k);
                    prop_assert_eq!(a.slot, slot);
                    prop_assert_eq!(a.displaced, displaced);
                    prop_assert_eq!(u64::from(a.slot), appends % capacity as u64, "round robin");
                    appends += 1;
                }
                Op::Append(_) => {}
                Op::Remove(k) => prop_assert_eq!(log.remove(&k), model.remove(k)),
            }
            log.check();
            let live: Vec<(u64, u32)> = {
                let mut v: Vec<_> = log.iter().collect();
                v.sort_by_key(|&(_, s)| s);
                v
            };
            let want: Vec<(u64, u32)> = model
                .slots
                .iter()
                .enumerate()
                .filter_map(|(s, k)| k.map(|k| (k, s as u32)))
                .collect();
            prop_assert_eq!(live, want);
        }
    }
}

#[test]
fn a_read_back_leaves_a_hole_the_head_rewrites_in_turn() {
    let mut log = FlashLog::with_order(3, LogOrder::Circular);
    for k in 1..=3u64 {
        log.append(k);
    }
    assert_eq!(log.remove(&1), Some(0));
    assert_eq!(log.len(), 2, "the hole is not refilled out of order");
    // The head is back at slot 0 (the hole): no page is displaced.
    let a = log.append(4);
    assert_eq!((a.slot, a.displaced), (0, None));
    // Slot 1 still holds page 2, the oldest: it leaves.
    let a = log.append(5);
    assert_eq!((a.slot, a.displaced), (1, Some(2)));
    log.check();
}

#[test]
fn slot_refill_reuses_the_freed_slot_out_of_order() {
    let mut log = FlashLog::with_order(3, LogOrder::SlotRefill);
    for k in 1..=3u64 {
        log.append(k);
    }
    log.remove(&2);
    let a = log.append(4);
    assert_eq!((a.slot, a.displaced), (1, None));
    assert_eq!(log.len(), 3);
}
