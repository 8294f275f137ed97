//! `TwoQ` against a direct transcription of the 2Q rules over plain vectors, on random traces,
//! sizes and knobs: the same queues, in the same order, after every reference.

use policy::{Replacement, TwoQ, TwoQConfig};
use proptest::prelude::*;

/// The rules, literally: vectors ordered oldest (or least recent) first.
struct Model {
    am: Vec<u32>,
    a1in: Vec<u32>,
    a1out: Vec<u32>,
    size: usize,
    kin: usize,
    kout: usize,
}

impl Model {
    fn reference(&mut self, p: u32) {
        if let Some(i) = self.am.iter().position(|&x| x == p) {
            self.am.remove(i);
            self.am.push(p);
            return;
        }
        if self.a1in.contains(&p) {
            return;
        }
        // A miss: found in A1out -> leaves it, goes to Am (after room is made); else A1in.
        let hot = match self.a1out.iter().position(|&x| x == p) {
            Some(i) => {
                self.a1out.remove(i);
                true
            }
            None => false,
        };
        if self.am.len() + self.a1in.len() == self.size {
            if self.a1in.len() > self.kin || self.am.is_empty() {
                let y = self.a1in.remove(0);
                if self.kout > 0 {
                    self.a1out.push(y);
                    if self.a1out.len() > self.kout {
                        self.a1out.remove(0);
                    }
                }
            } else {
                self.am.remove(0);
            }
        }
        if hot {
            self.am.push(p);
        } else {
            self.a1in.push(p);
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(500))]

    #[test]
    fn two_q_follows_the_rules(
        refs in prop::collection::vec(0u32..30, 0..300),
        size in 1usize..12, kin in 1usize..8, kout in 0usize..10,
    ) {
        let config = TwoQConfig { kin, kout };
        let mut q = TwoQ::new(config);
        let mut m = Model { am: vec![], a1in: vec![], a1out: vec![], size, kin, kout };
        for &p in &refs {
            if q.queue_of(&p).is_some() {
                q.touch(p);
            } else {
                if q.len() == size {
                    let v = q.victim(&mut |_| true).unwrap();
                    q.forget(v);
                }
                q.admit(p);
            }
            m.reference(p);
            q.check();
            prop_assert_eq!(q.am().collect::<Vec<_>>(), m.am.clone());
            prop_assert_eq!(q.a1in().collect::<Vec<_>>(), m.a1in.clone());
            prop_assert_eq!(q.a1out().collect::<Vec<_>>(), m.a1out.clone());
        }
    }
}
