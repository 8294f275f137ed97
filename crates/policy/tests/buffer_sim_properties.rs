//! Property tests of the buffer simulator against simple models: counts add up, sizes hold,
//! every page read back (from flash or disk) is the latest version, and the one-pass LRU curve
//! equals per-size simulation exactly.

use policy::{BufferSim, Outcome, Placement, PolicyConfig, PolicyKind, StackDistances};
use proptest::prelude::*;
use std::collections::HashMap;

fn trace() -> impl Strategy<Value = Vec<(u64, bool)>> {
    (1u64..40)
        .prop_flat_map(|pages| prop::collection::vec((0..pages, prop::bool::weighted(0.3)), 0..400))
}

fn kind() -> impl Strategy<Value = PolicyKind> {
    prop::sample::select(PolicyKind::ALL.to_vec())
}

/// The data each copy holds: (page, version), versions counted per write.
#[derive(Default)]
struct Model {
    latest: HashMap<u64, u64>,
    main: HashMap<u64, u64>,
    disk: HashMap<u64, u64>,
    flash: HashMap<(u8, u32), (u64, u64)>,
    clock: u64,
}

impl Model {
    fn step(&mut self, sim: &mut BufferSim, page: u64, write: bool) {
        let a = sim.reference(page, write);
        let latest = self.latest.get(&page).copied().unwrap_or(0);
        let got = match a.outcome {
            Outcome::Hit => *self.main.get(&page).expect("a hit is resident"),
            Outcome::ExtHit { log, slot } => {
                let (p, v) = self
                    .flash
                    .remove(&(log.0, slot))
                    .expect("slot holds a page");
                assert_eq!(p, page, "flash slot holds another page");
                v
            }
            Outcome::Miss => self.disk.get(&page).copied().unwrap_or(0),
        };
        assert_eq!(got, latest, "page {page}: a stale copy was returned");
        if let Some(e) = a.eviction {
            let v = self.main.remove(&e.page).expect("victim resident");
            if e.dirty {
                self.disk.insert(e.page, v);
            } else {
                assert_eq!(
                    self.disk.get(&e.page).copied().unwrap_or(0),
                    v,
                    "clean but newer than disk"
                );
            }
            if let Placement::Log(l) = e.to {
                let slot = e.slot.expect("a log placement has a slot");
                let old = self.flash.insert((l.0, slot), (e.page, v));
                assert_eq!(
                    old.map(|o| o.0),
                    e.displaced,
                    "displaced page is the slot's old page"
                );
            }
        }
        let v = if write {
            self.clock += 1;
            self.latest.insert(page, self.clock);
            self.clock
        } else {
            got
        };
        self.main.insert(page, v);
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(300))]

    #[test]
    fn counts_add_up_sizes_hold_and_no_stale_page_is_returned(
        refs in trace(), kind in kind(), size in 1usize..12, ext in 0usize..12, ratio in 0.0f64..=1.0,
        kin in prop::option::of(1usize..10), kout in prop::option::of(0usize..10),
    ) {
        let ext = if kind.is_extended() { ext } else { 0 };
        let mut c = PolicyConfig::new(kind, size, ext);
        c.amout_ratio = ratio;
        if !matches!(kind, PolicyKind::Lru | PolicyKind::LruExt) {
            c.kin = kin;
        }
        if kind == PolicyKind::TwoQ {
            c.kout = kout;
        }
        let mut sim = BufferSim::new(&c).unwrap();
        let mut model = Model::default();
        for &(p, w) in &refs {
            model.step(&mut sim, p, w);
            sim.check();
            for (log, cap) in sim.logs().iter().zip(sim.policy().log_capacities()) {
                prop_assert!(log.len() <= *cap);
            }
        }
        let n = sim.counts();
        prop_assert_eq!(n.references, refs.len() as u64);
        prop_assert_eq!(n.hits + n.misses, n.references);
        prop_assert!(n.ext_hits <= n.misses);
        prop_assert_eq!(n.disk_reads + n.flash_reads, n.misses);
        prop_assert!(n.flash_writes <= n.misses);
    }

    #[test]
    fn one_pass_curve_equals_per_size_simulation(
        refs in trace(), size in 1usize..45, ext in 0usize..45,
    ) {
        let mut sd = StackDistances::new();
        for &(p, w) in &refs {
            sd.reference(p, w);
        }
        let curve = sd.curve();
        for (kind, ext) in [(PolicyKind::Lru, 0), (PolicyKind::LruExt, ext)] {
            let mut sim = BufferSim::new(&PolicyConfig::new(kind, size, ext)).unwrap();
            for &(p, w) in &refs {
                sim.reference(p, w);
            }
            prop_assert_eq!(curve.lru_ext(size, ext).counts, sim.counts(), "{:?} {} {}", kind, size, ext);
        }
    }
}
