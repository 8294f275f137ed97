//! Running out of device space is an operating error (`EngineError::Full` or a device
//! out-of-range error), never a panic, and the last commit stays readable after it.

use blockdev::{BlockDevice, MemDevice};
use engine::btree::{AsBTree, AsConfig, BTreeConfig, InPlaceBTree};
use engine::{EngineError, OrderedIndex};

const BASE: BTreeConfig = BTreeConfig {
    keys_per_node: 4,
    cache_nodes: 0,
};

/// Insert ascending keys, committing every 10, until an error; returns the error and the
/// number of keys committed before it.
fn fill(t: &mut dyn OrderedIndex) -> (EngineError, u64) {
    let mut committed = 0;
    for k in 0..1_000_000u64 {
        if let Err(e) = t.insert(k, k + 1) {
            return (e, committed);
        }
        if k % 10 == 9 {
            if let Err(e) = t.commit() {
                return (e, committed);
            }
            committed = k + 1;
        }
    }
    panic!("a device of a few pages held a million keys");
}

fn is_space_error(e: &EngineError) -> bool {
    matches!(
        e,
        EngineError::Full { .. } | EngineError::Dev(blockdev::DevError::OutOfRange { .. })
    )
}

fn check_committed(t: &mut dyn OrderedIndex, committed: u64) {
    for k in 0..committed {
        assert_eq!(
            t.get(k).expect("committed key readable"),
            Some(k + 1),
            "key {k}"
        );
    }
}

#[test]
fn in_place_reports_a_full_device_and_keeps_its_last_commit() {
    let dev = Box::new(MemDevice::new(4096, 64));
    let mut t = InPlaceBTree::create_with_journal(dev, BASE, 8).expect("create");
    let (e, committed) = fill(&mut t);
    assert!(is_space_error(&e), "unexpected error: {e}");
    println!("space error after {committed} committed keys: {e}");
    assert!(committed > 0, "nothing fit");
    let dev: Box<dyn BlockDevice> = Box::new(t).into_device();
    let mut reopened = InPlaceBTree::open(dev, BASE, 8).expect("reopen");
    check_committed(&mut reopened, committed);
}

#[test]
fn as_btree_reports_a_full_device_and_keeps_its_last_commit() {
    let cfg = AsConfig {
        base: BASE,
        write_buffer_nodes: 2,
        segment_bytes: 8 * 4096,
        max_segments: 0,
    };
    let dev = Box::new(MemDevice::new(4096, 2 + 6 * 8));
    let mut t = AsBTree::create(dev, cfg).expect("create");
    let (e, committed) = fill(&mut t);
    assert!(is_space_error(&e), "unexpected error: {e}");
    println!("space error after {committed} committed keys: {e}");
    assert!(committed > 0, "nothing fit");
    let dev: Box<dyn BlockDevice> = Box::new(t).into_device();
    let mut reopened = AsBTree::open(dev, cfg).expect("reopen");
    check_committed(&mut reopened, committed);
}
