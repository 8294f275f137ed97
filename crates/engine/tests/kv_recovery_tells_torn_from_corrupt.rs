//! Recovery (`format::recover`) against a file model: the newest intact superblock slot wins,
//! a lost (torn) slot write rolls back one commit, and a damaged header behind an intact
//! newest slot is corruption of a durable commit, never a rollback (docs/kv-format.md, "Torn or
//! corrupt").

mod common;
use common::header;
use engine::kv::format::{recover, Fault, Recovered, Superblock, NO_PAGE, SUPERBLOCK_BYTES};
use proptest::prelude::*;
use std::collections::BTreeMap;

/// A file model for recovery: superblock slots and headers by page.
struct File {
    slots: [Vec<u8>; 2],
    headers: BTreeMap<u64, Vec<u8>>,
}

const SLOT_OFFSETS: [u64; 2] = [0, 4096];
const PAGE_BYTES: u64 = 4096;

impl File {
    /// Commits 1..=n, commit c's header at page 10 * c.
    fn committed(n: u64) -> File {
        let mut f = File {
            slots: [vec![0u8; SUPERBLOCK_BYTES], vec![0u8; SUPERBLOCK_BYTES]],
            headers: BTreeMap::new(),
        };
        f.slots[0] = Superblock {
            commit_seq: 0,
            header_page: NO_PAGE,
            page_bytes: 4096,
        }
        .encode()
        .to_vec();
        for c in 1..=n {
            f.headers.insert(10 * c, header(c).encode().to_vec());
            let sb = Superblock {
                commit_seq: c,
                header_page: 10 * c,
                page_bytes: 4096,
            };
            f.slots[sb.slot() as usize] = sb.encode().to_vec();
        }
        f
    }

    fn recover(&self) -> Recovered {
        let read = |page: u64| -> Result<(Vec<u8>, u64), std::convert::Infallible> {
            let bytes = self.headers.get(&page).cloned().unwrap_or_default();
            Ok((bytes, page * PAGE_BYTES))
        };
        recover([&self.slots[0], &self.slots[1]], SLOT_OFFSETS, read).unwrap()
    }
}

fn committed_seq(r: &Recovered) -> Option<u64> {
    match r {
        Recovered::Committed { superblock, .. } => Some(superblock.commit_seq),
        _ => None,
    }
}

#[test]
fn recovery_opens_the_newest_commit_and_falls_back_only_past_a_lost_slot() {
    assert_eq!(committed_seq(&File::committed(5).recover()), Some(5));
    match File::committed(0).recover() {
        Recovered::Committed { header: None, .. } => {}
        r => panic!("{r:?}"),
    }
    // Newest slot torn (lost): commit 4; the error names the slot's file offset.
    let mut f = File::committed(5);
    f.slots[1][30] ^= 1;
    match f.recover() {
        Recovered::Committed {
            superblock,
            skipped,
            ..
        } => {
            assert_eq!(superblock.commit_seq, 4);
            assert!(
                matches!(&skipped[..], [c] if c.offset == Some(4156) && matches!(c.fault, Fault::Checksum { .. })),
                "{skipped:?}"
            );
        }
        r => panic!("{r:?}"),
    }
    // Both slots damaged: every failure reported; a blank file is blank.
    let mut f = File::committed(5);
    f.slots[0][30] ^= 1;
    f.slots[1][30] ^= 1;
    match f.recover() {
        Recovered::Damaged { errors } => assert_eq!(errors.len(), 2),
        r => panic!("{r:?}"),
    }
    let blank = File {
        slots: [vec![0u8; 64], vec![0u8; 64]],
        headers: BTreeMap::new(),
    };
    assert_eq!(blank.recover(), Recovered::Blank);
}

/// The header an intact newest slot points at was durable before the slot was written: its
/// damage is corruption of a durable commit, reported with its offset, never a rollback.
#[test]
fn a_damaged_header_behind_an_intact_newest_slot_is_corrupt_not_torn() {
    let corrupt_at = |f: &File| match f.recover() {
        Recovered::Corrupt { superblock, error } => {
            assert_eq!(superblock.commit_seq, 5);
            match (&error.fault, error.offset) {
                (Fault::Field { .. } | Fault::Checksum { .. } | Fault::Blank, Some(offset)) => {
                    offset
                }
                _ => panic!("{error:?}"),
            }
        }
        r => panic!("{r:?}"),
    };
    // One flipped byte (second half from an older write, too).
    let mut f = File::committed(5);
    f.headers.get_mut(&50).unwrap()[20] ^= 1;
    assert!(corrupt_at(&f) >= 50 * PAGE_BYTES);
    let mut f = File::committed(5);
    f.headers.get_mut(&50).unwrap()[64..].fill(0xAA);
    assert!(corrupt_at(&f) >= 50 * PAGE_BYTES);
    // A slot pointing at a page that now holds another commit's header.
    let mut f = File::committed(5);
    let old = f.headers[&40].clone();
    f.headers.insert(50, old);
    assert_eq!(corrupt_at(&f), 50 * PAGE_BYTES + 8);
    // The header gone (trimmed or never written).
    let mut f = File::committed(5);
    f.headers.clear();
    assert_eq!(corrupt_at(&f), 50 * PAGE_BYTES);
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(200))]

    /// Recovery against a model: commits 1..=n, then any of the two slots and two newest
    /// headers damaged; recovery lands on the newest commit whose slot and header are intact.
    #[test]
    fn recovery_lands_on_the_newest_intact_slot_or_names_its_damaged_header(n in 2u64..8, damage in proptest::array::uniform4(any::<bool>()), at in 0usize..64) {
        let mut f = File::committed(n);
        let newest_slot = (n % 2) as usize;
        let [slot_new, slot_old, head_new, head_old] = damage;
        if slot_new { f.slots[newest_slot][at] ^= 0x10; }
        if slot_old { f.slots[1 - newest_slot][at] ^= 0x10; }
        if head_new { f.headers.get_mut(&(10 * n)).unwrap()[at] ^= 0x10; }
        if head_old { f.headers.get_mut(&(10 * (n - 1))).unwrap()[at] ^= 0x10; }
        // The newest slot that checks out decides; a damaged header behind it is corrupt.
        let newest = if !slot_new { Some((n, head_new)) } else if !slot_old { Some((n - 1, head_old)) } else { None };
        let got = f.recover();
        match (newest, &got) {
            (Some((seq, false)), Recovered::Committed { superblock, .. }) => prop_assert_eq!(superblock.commit_seq, seq),
            (Some((seq, true)), Recovered::Corrupt { superblock, .. }) => prop_assert_eq!(superblock.commit_seq, seq),
            (None, Recovered::Damaged { errors }) => prop_assert_eq!(errors.len(), 2),
            _ => prop_assert!(false, "{:?} for {:?}", got, newest),
        }
    }
}
