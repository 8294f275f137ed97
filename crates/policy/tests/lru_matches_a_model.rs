//! `Lru` against a trivial model (a Vec in recency order), with the invariant check after every
//! operation.

use policy::{Lru, LruPolicy, Replacement};
use proptest::prelude::*;

#[derive(Debug, Clone)]
enum Op {
    Insert(u8, u32),
    Get(u8),
    Peek(u8),
    Touch(u8),
    Remove(u8),
    PopLru,
}

fn op() -> impl Strategy<Value = Op> {
    prop_oneof![
        (0u8..16, any::<u32>()).prop_map(|(k, v)| Op::Insert(k, v)),
        (0u8..16).prop_map(Op::Get),
        (0u8..16).prop_map(Op::Peek),
        (0u8..16).prop_map(Op::Touch),
        (0u8..16).prop_map(Op::Remove),
        Just(Op::PopLru),
    ]
}

proptest! {
    #[test]
    fn lru_behaves_like_a_recency_vector(ops in prop::collection::vec(op(), 0..300)) {
        let mut lru = Lru::new();
        let mut model: Vec<(u8, u32)> = Vec::new(); // least recent first
        for op in ops {
            match op {
                Op::Insert(k, v) => {
                    let old = model.iter().position(|e| e.0 == k).map(|i| model.remove(i).1);
                    model.push((k, v));
                    prop_assert_eq!(lru.insert(k, v), old);
                }
                Op::Get(k) => {
                    let got = lru.get(&k).copied();
                    let want = model.iter().position(|e| e.0 == k).map(|i| {
                        let e = model.remove(i);
                        model.push(e);
                        e.1
                    });
                    prop_assert_eq!(got, want);
                }
                Op::Peek(k) => {
                    let want = model.iter().find(|e| e.0 == k).map(|e| e.1);
                    prop_assert_eq!(lru.peek(&k).copied(), want);
                }
                Op::Touch(k) => {
                    let pos = model.iter().position(|e| e.0 == k);
                    if let Some(i) = pos {
                        let e = model.remove(i);
                        model.push(e);
                    }
                    prop_assert_eq!(lru.touch(&k), pos.is_some());
                }
                Op::Remove(k) => {
                    let want = model.iter().position(|e| e.0 == k).map(|i| model.remove(i).1);
                    prop_assert_eq!(lru.remove(&k), want);
                }
                Op::PopLru => {
                    let want = if model.is_empty() { None } else { Some(model.remove(0)) };
                    prop_assert_eq!(lru.pop_lru(), want);
                }
            }
            lru.check();
            let order: Vec<(u8, u32)> = lru.iter().map(|(k, v)| (*k, *v)).collect();
            prop_assert_eq!(&order, &model);
        }
    }

    #[test]
    fn lru_policy_picks_the_least_recent_evictable(
        keys in prop::collection::vec(0u16..64, 1..200),
        pinned in prop::collection::btree_set(0u16..64, 0..8),
    ) {
        let mut p = LruPolicy::new();
        let mut model: Vec<u16> = Vec::new();
        for k in keys {
            if let Some(i) = model.iter().position(|&m| m == k) {
                model.remove(i);
                p.touch(k);
            } else {
                p.admit(k);
            }
            model.push(k);
        }
        let want = model.iter().copied().find(|k| !pinned.contains(k));
        prop_assert_eq!(p.victim(&mut |k| !pinned.contains(&k)), want);
        prop_assert_eq!(p.len(), model.len());
    }
}
