//! Every verifier of the on-device format fails on a damaged device, with a structured error
//! naming the page, what was expected and what was found: page checksums (torn writes, flipped
//! bits), the format version, the meta slots (newest valid slot wins, a torn one falls back),
//! a node page holding another node, an AS superblock naming segments beyond the device, a heap
//! record that is not the one the index promised.

use blockdev::{MemDevice, WriteHint};
use engine::btree::{AsBTree, AsConfig, BTreeConfig, InPlaceBTree, Node};
use engine::heap::{load, read_record};
use engine::page::{self, Header, PageKind, HEADER_BYTES};
use engine::scan::{range_scan, ScanMode};
use engine::{EngineError, Fault, MetaSlots, OrderedIndex, Pager, Structure};
use std::rc::Rc;

const PB: usize = 4096;

fn sealed(id: u64, fill: u8) -> Vec<u8> {
    let mut b = vec![0u8; PB];
    b[HEADER_BYTES..HEADER_BYTES + 100].fill(fill);
    page::seal(
        &mut b,
        &Header {
            kind: PageKind::Heap,
            flags: 0,
            id,
            version: 1,
            len: 100,
        },
    );
    b
}

fn open_through(pager: &mut Pager, page: u64) -> Result<Rc<Header>, EngineError> {
    pager.load(page, page, |b| page::open(b, page))
}

#[test]
fn a_torn_page_is_a_checksum_error_and_never_cached() {
    let mut pager = Pager::new(Box::new(MemDevice::new(PB, 16)), 4);
    let (a, b) = (sealed(3, 0xAA), sealed(3, 0xBB));
    let mut torn = a.clone();
    torn[PB / 2..].copy_from_slice(&b[PB / 2..]);
    torn[HEADER_BYTES..HEADER_BYTES + 100].copy_from_slice(&b[HEADER_BYTES..HEADER_BYTES + 100]);
    pager.write(3, &torn).unwrap();
    match open_through(&mut pager, 3).map_err(|e| e.damage().map(|(p, f)| (p, f.clone()))) {
        Err(Some((Some(3), Fault::Checksum { stored, computed }))) => assert_ne!(stored, computed),
        other => panic!("torn page must fail its checksum, got {other:?}"),
    }
    assert!(!pager.contains(3));
    pager.write(3, &a).unwrap();
    assert_eq!(open_through(&mut pager, 3).unwrap().id, 3);
}

#[test]
fn every_flipped_bit_of_a_page_is_detected() {
    let mut pager = Pager::new(Box::new(MemDevice::new(PB, 4)), 0);
    let good = sealed(1, 0x5A);
    for bit in (0..PB * 8).step_by(7) {
        let mut bad = good.clone();
        bad[bit / 8] ^= 1 << (bit % 8);
        pager.write(1, &bad).unwrap();
        let e = open_through(&mut pager, 1).expect_err("flip must be detected");
        assert!(
            e.page() == Some(1) && e.offset() == Some(PB as u64),
            "bit {bit}: {e}"
        );
    }
}

fn meta_pager() -> (Pager, MetaSlots) {
    (
        Pager::new(Box::new(MemDevice::new(PB, 8)), 0),
        MetaSlots::new(2, 7, "test root"),
    )
}

#[test]
fn meta_slots_pick_the_newest_valid_slot() {
    let (mut p, m) = meta_pager();
    for epoch in 1..=5u64 {
        m.publish(&mut p, epoch, &[epoch * 10, 1]).unwrap();
        let (e, w) = m.newest(&mut p, |w| Some(w.to_vec())).unwrap();
        assert_eq!((e, w), (epoch, vec![epoch * 10, 1]));
        assert_eq!(m.slot(epoch), 2 + epoch % 2);
    }
}

#[test]
fn meta_slots_fall_back_when_the_newest_is_torn_or_rejected() {
    let (mut p, m) = meta_pager();
    m.publish(&mut p, 1, &[10]).unwrap();
    m.publish(&mut p, 2, &[20]).unwrap();
    // A slot the structure's parser rejects does not win.
    assert_eq!(
        m.newest(&mut p, |w| (w[0] != 20).then_some(w[0])).unwrap(),
        (1, 10)
    );
    // Damage epoch 2's slot (a torn write).
    let mut img = p.read_uncached(m.slot(2)).unwrap().to_vec();
    img[10] ^= 0xFF;
    p.write(m.slot(2), &img).unwrap();
    let e = m.read(&mut p, m.slot(2)).unwrap_err();
    assert!(matches!(e.damage(), Some((_, Fault::Checksum { .. }))));
    assert_eq!(m.newest(&mut p, |w| Some(w[0])).unwrap(), (1, 10));
    // A structure reopened at epoch 1 publishes epoch 2 next: into the damaged slot, never
    // over epoch 1.
    m.publish(&mut p, 2, &[21]).unwrap();
    assert_eq!(m.read(&mut p, m.slot(1)).unwrap(), (1, vec![10]));
    assert_eq!(m.newest(&mut p, |w| Some(w[0])).unwrap(), (2, 21));
}

#[test]
fn meta_slots_of_another_structure_or_none_at_all_are_named() {
    let (mut p, m) = meta_pager();
    let e = m.newest(&mut p, |w| Some(w.len())).unwrap_err();
    assert!(
        matches!(
            e.damage(),
            Some((
                Some(2),
                Fault::NoMeta {
                    what: "test root",
                    first: 2,
                    second: 3,
                }
            ))
        ),
        "blank slots: {e:?}"
    );
    assert_eq!(
        e.corruption().map(|c| c.structure),
        Some(Structure::MetaSlot)
    );
    let other = MetaSlots::new(2, 8, "another root");
    other.publish(&mut p, 1, &[1]).unwrap();
    assert!(matches!(
        m.read(&mut p, 3).unwrap_err().damage(),
        Some((
            Some(3),
            Fault::Id {
                what: "meta page tag",
                expected: 7,
                found: 8
            }
        ))
    ));
    assert!(m.newest(&mut p, |w| Some(w.len())).is_err());
}

#[test]
fn a_meta_page_too_big_for_a_slot_is_refused() {
    let (mut p, m) = meta_pager();
    let words = vec![0u64; MetaSlots::capacity_words(PB) + 1];
    assert!(matches!(
        m.publish(&mut p, 1, &words),
        Err(EngineError::Full { .. })
    ));
}

const CFG: BTreeConfig = BTreeConfig {
    keys_per_node: 8,
    cache_nodes: 0,
};

#[test]
fn a_node_page_holding_another_node_is_named() {
    let mut t = InPlaceBTree::create_with_journal(Box::new(MemDevice::new(PB, 256)), CFG, 0)
        .expect("create");
    for k in 0..100 {
        t.insert(k, k).unwrap();
    }
    t.commit().unwrap();
    let mut dev = Box::new(t).into_device();
    // Node 0 lives at page 2 (no journal); put node 5's image there.
    let mut img = vec![0u8; PB];
    Node::empty_leaf(5).encode(&mut img, 1);
    dev.write(2, &img, WriteHint::NONE).unwrap();
    let mut t = InPlaceBTree::open(dev, CFG, 0).expect("open");
    let e = t
        .range(0, u64::MAX)
        .expect_err("the leaf chain reaches node 0");
    assert!(
        matches!(
            e.damage(),
            Some((
                Some(2),
                Fault::Id {
                    what: "node id",
                    expected: 0,
                    found: 5
                }
            ))
        ),
        "{e}"
    );
}

#[test]
fn an_in_place_tree_on_a_blank_device_has_no_meta_page() {
    let e = InPlaceBTree::open(Box::new(MemDevice::new(PB, 64)), CFG, 0)
        .err()
        .expect("blank device");
    assert!(matches!(e.damage(), Some((_, Fault::NoMeta { .. }))));
}

#[test]
fn an_as_superblock_naming_segments_beyond_the_device_is_named() {
    let cfg = AsConfig {
        base: CFG,
        write_buffer_nodes: 2,
        segment_bytes: 8 * PB as u64,
        max_segments: 0,
    };
    let t = AsBTree::create(Box::new(MemDevice::new(PB, 2 + 4 * 8)), cfg).expect("create");
    let dev = Box::new(t).into_device();
    // Publish epoch 9 (newer than the tree's) naming segment 40 of 4.
    let mut p = Pager::new(dev, 0);
    let sb = MetaSlots::new(0, 1, "AS B-tree superblock");
    sb.publish(&mut p, 9, &[1, 0, 1, 0, 1, 40]).unwrap();
    let e = AsBTree::open(p.into_device(), cfg)
        .err()
        .expect("bad segment");
    assert!(
        matches!(
            e.damage(),
            Some((
                Some(1),
                Fault::OutOfRange {
                    limit: 3,
                    found: 40,
                    ..
                }
            ))
        ),
        "{e}"
    );
}

#[test]
fn a_heap_record_the_index_did_not_promise_is_named() {
    let mut pool = Pager::new(Box::new(MemDevice::new(8192, 512)), 8);
    let db = load(&mut pool, 2000, 32, 5).unwrap();
    // Change record 0's key in its heap page (and reseal, so the page itself checks out).
    let rid = db.rid_of(0);
    let f = pool.fetch(rid.page).unwrap();
    let h = page::open(pool.data(f), rid.page).unwrap();
    let at = HEADER_BYTES + 2 + rid.slot as usize * engine::heap::RECORD_BYTES;
    let buf = pool.data_mut(f);
    buf[at] ^= 1;
    page::seal(buf, &h);
    let e = read_record(pool.data(f), rid.page, 999).unwrap_err();
    assert!(matches!(
        e.damage(),
        Some((_, Fault::Slot { slot: 999, .. }))
    ));
    pool.unpin(f);
    let k = db.key_of(0);
    for mode in [ScanMode::Sync, ScanMode::Batched(8)] {
        match range_scan(&mut pool, &db, k, k, mode)
            .map_err(|e| e.damage().map(|(p, f)| (p, f.clone())))
        {
            Err(Some((
                Some(page),
                Fault::Id {
                    expected, found, ..
                },
            ))) => assert_eq!((page, expected, found), (rid.page, k, k ^ 1)),
            other => panic!("{mode:?}: {other:?}"),
        }
        assert_eq!(pool.pinned_count(), 0);
    }
}
