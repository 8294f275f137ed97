//! Crash tests: run random updates with periodic commits on a device that loses power at a
//! random I/O (unflushed writes dropped, kept or torn), reopen from the durable image, and
//! check that the tree opens without corruption and holds exactly the state after some
//! operation at or after the last acknowledged commit (never less: committed keys survive;
//! never a half-applied operation). Both trees may commit by themselves (journal overflow,
//! compaction), which is why later states are allowed.

use blockdev::{BlockDevice, CrashDevice, DevError};
use engine::btree::{AsBTree, AsConfig, BTreeConfig, InPlaceBTree};
use engine::{EngineError, OrderedIndex};
use proptest::prelude::*;
use std::collections::BTreeMap;

const JOURNAL: u64 = 32;

fn base() -> BTreeConfig {
    BTreeConfig {
        keys_per_node: 6,
        cache_nodes: 3,
    }
}
fn as_cfg() -> AsConfig {
    AsConfig {
        base: base(),
        write_buffer_nodes: 4,
        segment_bytes: 16 * 4096,
        max_segments: 8,
    }
}

fn is_power_cut(e: &EngineError) -> bool {
    matches!(e, EngineError::Dev(DevError::PowerCut))
}

type Snapshot = BTreeMap<u64, u64>;

/// Apply ops until the power cut; returns the states that may legitimately be recovered.
fn drive(tree: &mut dyn OrderedIndex, ops: &[(u64, u64, bool)]) -> Vec<Snapshot> {
    let mut model = Snapshot::new();
    let mut allowed = vec![model.clone()];
    for (i, &(k, v, del)) in ops.iter().enumerate() {
        let r = if del {
            tree.delete(k).map(|_| ())
        } else {
            tree.insert(k, v)
        };
        match r {
            Ok(()) => {}
            Err(e) if is_power_cut(&e) => {
                // The interrupted op may or may not have reached a commit point.
                let mut after = model.clone();
                if del {
                    after.remove(&k);
                } else {
                    after.insert(k, v);
                }
                allowed.push(after);
                return allowed;
            }
            Err(e) => panic!("unexpected error: {e}"),
        }
        if del {
            model.remove(&k);
        } else {
            model.insert(k, v);
        }
        allowed.push(model.clone());
        if i % 7 == 6 {
            match tree.commit() {
                Ok(()) => allowed = vec![model.clone()],
                Err(e) if is_power_cut(&e) => return allowed,
                Err(e) => panic!("unexpected error: {e}"),
            }
        }
    }
    allowed
}

fn check(recovered: &mut dyn OrderedIndex, allowed: &[Snapshot]) -> Result<(), TestCaseError> {
    let got: Snapshot = recovered.range(0, u64::MAX).unwrap().into_iter().collect();
    prop_assert!(
        allowed.contains(&got),
        "recovered {} keys; not a state at or after the last commit",
        got.len()
    );
    Ok(())
}

fn ops() -> impl Strategy<Value = Vec<(u64, u64, bool)>> {
    proptest::collection::vec(
        (0u64..300, any::<u64>(), proptest::bool::weighted(0.15)),
        10..300,
    )
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    #[test]
    fn in_place_recovers_the_last_commit_after_a_cut_at_any_io(ops in ops(), cut_at in 0u64..400, seed in any::<u64>()) {
        let (dev, handle) = CrashDevice::new(blockdev::MemDevice::new(4096, 1024), seed);
        let mut tree = InPlaceBTree::create_with_journal(Box::new(dev), base(), JOURNAL).unwrap();
        handle.cut_power_after(cut_at);
        let allowed = drive(&mut tree, &ops);
        handle.cut_now();
        let image: Box<dyn BlockDevice> = Box::new(handle.durable_image());
        let mut recovered = InPlaceBTree::open(image, base(), JOURNAL).unwrap();
        check(&mut recovered, &allowed)?;
    }

    #[test]
    fn as_btree_recovers_the_last_commit_after_a_cut_at_any_io(ops in ops(), cut_at in 0u64..400, seed in any::<u64>()) {
        let (dev, handle) = CrashDevice::new(blockdev::MemDevice::new(4096, 1024), seed);
        let mut tree = AsBTree::create(Box::new(dev), as_cfg()).unwrap();
        handle.cut_power_after(cut_at);
        let allowed = drive(&mut tree, &ops);
        handle.cut_now();
        let image: Box<dyn BlockDevice> = Box::new(handle.durable_image());
        let mut recovered = AsBTree::open(image, as_cfg()).unwrap();
        check(&mut recovered, &allowed)?;
    }
}

#[test]
fn a_torn_node_is_reported_not_returned() {
    // Write-through in-place tree: tear a node page on the durable image and read it.
    let (dev, handle) = CrashDevice::new(blockdev::MemDevice::new(4096, 256), 3);
    let mut tree = InPlaceBTree::create_with_journal(Box::new(dev), base(), 0).unwrap();
    for k in 0..50 {
        tree.insert(k, k).unwrap();
    }
    tree.commit().unwrap();
    drop(tree);
    let mut img = handle.durable_image();
    let mut page = vec![0u8; 4096];
    img.read(3, &mut page).unwrap();
    page[2048..].fill(0xEE);
    img.write(3, &page, blockdev::WriteHint::NONE).unwrap();
    let mut t = InPlaceBTree::open(Box::new(img), base(), 0).unwrap();
    let err = t.range(0, u64::MAX).unwrap_err();
    assert!(matches!(err, EngineError::Corrupt { .. }), "{err}");
}
