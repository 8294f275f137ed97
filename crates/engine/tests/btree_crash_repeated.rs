//! Repeated crashes: a tree recovered from a power cut must itself be a sound starting point.
//! Each round reopens the durable image of the previous round on a fresh crash device, runs
//! random updates with periodic commits until a cut at a random I/O, and checks that the
//! recovered tree holds exactly a state at or after the round's last acknowledged commit
//! (starting from the state recovered in the previous round).

use blockdev::{BlockDevice, CrashDevice, DevError, MemDevice};
use engine::btree::{AsBTree, AsConfig, BTreeConfig, InPlaceBTree};
use engine::{EngineError, OrderedIndex};
use proptest::prelude::*;
use std::collections::BTreeMap;

type Snapshot = BTreeMap<u64, u64>;
type Op = (u64, u64, bool);

const JOURNAL: u64 = 32;
const BASE: BTreeConfig = BTreeConfig {
    keys_per_node: 5,
    cache_nodes: 2,
};
const AS_CFG: AsConfig = AsConfig {
    base: BASE,
    write_buffer_nodes: 3,
    segment_bytes: 16 * 4096,
    max_segments: 8,
};

#[derive(Clone, Copy, Debug)]
enum Kind {
    InPlace,
    As,
}

fn open(kind: Kind, dev: Box<dyn BlockDevice>, fresh: bool) -> Box<dyn OrderedIndex> {
    match (kind, fresh) {
        (Kind::InPlace, true) => Box::new(
            InPlaceBTree::create_with_journal(dev, BASE, JOURNAL).expect("create in-place"),
        ),
        (Kind::InPlace, false) => {
            Box::new(InPlaceBTree::open(dev, BASE, JOURNAL).expect("reopen in-place"))
        }
        (Kind::As, true) => Box::new(AsBTree::create(dev, AS_CFG).expect("create AS")),
        (Kind::As, false) => Box::new(AsBTree::open(dev, AS_CFG).expect("reopen AS")),
    }
}

fn is_power_cut(e: &EngineError) -> bool {
    matches!(e, EngineError::Dev(DevError::PowerCut))
}

fn apply(model: &mut Snapshot, &(k, v, del): &Op) {
    if del {
        model.remove(&k);
    } else {
        model.insert(k, v);
    }
}

/// Run `ops` from `model` until the cut; the states a recovery may legitimately show.
fn drive(tree: &mut dyn OrderedIndex, mut model: Snapshot, ops: &[Op]) -> Vec<Snapshot> {
    let mut allowed = vec![model.clone()];
    for (i, op) in ops.iter().enumerate() {
        let r = if op.2 {
            tree.delete(op.0).map(|_| ())
        } else {
            tree.insert(op.0, op.1)
        };
        apply(&mut model, op);
        allowed.push(model.clone());
        match r {
            Ok(()) => {}
            Err(e) if is_power_cut(&e) => return allowed,
            Err(e) => panic!("unexpected error: {e}"),
        }
        if i % 5 == 4 {
            match tree.commit() {
                Ok(()) => allowed = vec![model.clone()],
                Err(e) if is_power_cut(&e) => return allowed,
                Err(e) => panic!("unexpected error: {e}"),
            }
        }
    }
    allowed
}

fn rounds(kind: Kind, rounds: &[(Vec<Op>, u64, u64)]) -> Result<(), TestCaseError> {
    let mut image = MemDevice::new(4096, 1024);
    let mut model = Snapshot::new();
    for (r, (ops, cut_at, seed)) in rounds.iter().enumerate() {
        let (dev, handle) = CrashDevice::from_image(image, *seed);
        let mut tree = open(kind, Box::new(dev), r == 0);
        handle.cut_power_after(*cut_at);
        let allowed = drive(tree.as_mut(), model, ops);
        handle.cut_now();
        drop(tree);
        image = handle.durable_image();
        let mut recovered = open(kind, Box::new(image.clone()), false);
        let got: Snapshot = match recovered.range(0, u64::MAX) {
            Ok(rows) => rows.into_iter().collect(),
            Err(e) => return Err(TestCaseError::fail(format!("round {r}: {e}"))),
        };
        prop_assert!(
            allowed.contains(&got),
            "round {}: recovered {} keys, not a state at or after the last commit",
            r,
            got.len()
        );
        model = got;
    }
    Ok(())
}

fn round() -> impl Strategy<Value = (Vec<Op>, u64, u64)> {
    (
        proptest::collection::vec(
            (0u64..200, any::<u64>(), proptest::bool::weighted(0.2)),
            5..150,
        ),
        1u64..300,
        any::<u64>(),
    )
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(32))]

    #[test]
    fn in_place_survives_repeated_crashes(rs in proptest::collection::vec(round(), 2..5)) {
        rounds(Kind::InPlace, &rs)?;
    }

    #[test]
    fn as_btree_survives_repeated_crashes(rs in proptest::collection::vec(round(), 2..5)) {
        rounds(Kind::As, &rs)?;
    }
}

/// The same at any scale: `POWER_CUTS` cuts per tree (default 200 here), in chains of 4
/// rounds from seeded random rounds, e.g.
/// `POWER_CUTS=10000 cargo test --release -p engine --test btree_crash_repeated at_scale`.
#[test]
fn both_trees_survive_power_cuts_at_scale() {
    use rand::{Rng, SeedableRng};
    let n: u64 = std::env::var("POWER_CUTS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(200);
    for kind in [Kind::InPlace, Kind::As] {
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(7);
        let mut cuts = 0;
        while cuts < n {
            let chain: Vec<(Vec<Op>, u64, u64)> = (0..4)
                .map(|_| {
                    let ops = (0..rng.gen_range(5..150))
                        .map(|_| (rng.gen_range(0..200), rng.gen(), rng.gen_bool(0.2)))
                        .collect();
                    (ops, rng.gen_range(1..300), rng.gen())
                })
                .collect();
            rounds(kind, &chain).unwrap_or_else(|e| panic!("{kind:?} after {cuts} cuts: {e}"));
            cuts += 4;
        }
        eprintln!("{kind:?}: {cuts} power cuts, every recovered state allowed");
    }
}
