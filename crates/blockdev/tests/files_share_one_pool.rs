//! DB files of one shared file system (`SharedDevice::file`): each file's address space is
//! larger than the space it brought, so files may grow past their share while others are
//! smaller. Checked against a model (a `BTreeMap` of live pages per file), with random writes
//! and trims that sometimes ask for more than the pool holds:
//! - every page reads back what was last written to it (trimmed or never written: zeros);
//! - the pool is never over-committed: placed pages never exceed the pages the files brought,
//!   and a write that needs more chunks than are free fails with `NoSpace` and changes nothing;
//! - placed pages are exactly the chunks holding a live page (a chunk none of whose pages is
//!   live goes back to the pool).
//!
//! Run with the default placement and with the ext4-mballoc-like one (whose preallocations
//! reserve chunks: a full pool must give them back before it refuses a write).

use blockdev::{BlockDevice, ChunkGoal, DevError, Extents, MemDevice, SharedDevice, WriteHint};
use proptest::prelude::*;
use std::collections::{BTreeMap, BTreeSet};

const PAGE_BYTES: usize = 512;
const FILES: usize = 3;

#[derive(Clone, Debug)]
enum Op {
    /// File, first page, pages, fill byte.
    Write(usize, u64, u64, u8),
    Trim(usize, u64, u64),
}

/// Pages and counts are taken modulo the file's space when applied.
fn op() -> impl Strategy<Value = Op> {
    prop_oneof![
        3 => (0..FILES, 0..1024u64, 1u64..6, any::<u8>()).prop_map(|(f, p, n, b)| Op::Write(f, p, n, b)),
        2 => (0..FILES, 0..1024u64, 1u64..12).prop_map(|(f, p, n)| Op::Trim(f, p, n)),
    ]
}

/// `(page, pages)` brought inside a space of `space` pages.
fn inside(page: u64, pages: u64, space: u64) -> (u64, u64) {
    let page = page % space;
    (page, pages.min(space - page))
}

/// Chunks with a live page, per file, in the model.
fn live_chunks(model: &[BTreeMap<u64, u8>], chunk_pages: u64) -> u64 {
    model
        .iter()
        .map(|m| {
            m.keys()
                .map(|p| p / chunk_pages)
                .collect::<BTreeSet<_>>()
                .len() as u64
        })
        .sum()
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]
    #[test]
    fn files_share_one_pool_and_keep_their_pages(
        chunk_pages in prop::sample::select(vec![1u64, 2, 4]),
        goal in prop::sample::select(vec![ChunkGoal::OwnShare, ChunkGoal::Mballoc]),
        share_pages in 4u64..12,
        space_x in 2u64..4,
        ops in prop::collection::vec(op(), 1..120),
    ) {
        let share = share_pages * chunk_pages;
        let space = share * space_x;
        let dev = MemDevice::new(PAGE_BYTES, share * FILES as u64);
        let mut shared = SharedDevice::new(dev).with_placement(Extents::new(chunk_pages).with_goal(goal));
        let mut files: Vec<_> = (0..FILES).map(|_| shared.file(space, share).unwrap()).collect();
        let pool_pages = share * FILES as u64;
        let mut model: Vec<BTreeMap<u64, u8>> = vec![BTreeMap::new(); FILES];
        for op in ops {
            match op {
                Op::Write(f, page, pages, byte) => {
                    let (page, pages) = inside(page, pages, space);
                    let before = shared.placed_pages().unwrap();
                    let r = files[f].write(page, &vec![byte; pages as usize * PAGE_BYTES], WriteHint::NONE);
                    match r {
                        Ok(()) => {
                            for p in page..page + pages {
                                model[f].insert(p, byte);
                            }
                        }
                        Err(DevError::NoSpace { needed_chunks, free_chunks, .. }) => {
                            prop_assert!(needed_chunks > free_chunks);
                            prop_assert_eq!(shared.placed_pages().unwrap(), before, "a refused write placed nothing");
                        }
                        Err(e) => prop_assert!(false, "unexpected error {e}"),
                    }
                }
                Op::Trim(f, page, pages) => {
                    let (page, pages) = inside(page, pages, space);
                    files[f].trim(page, pages).unwrap();
                    for p in page..page + pages {
                        model[f].remove(&p);
                    }
                }
            }
            let placed = shared.placed_pages().unwrap();
            prop_assert!(placed <= pool_pages, "placed {placed} of a pool of {pool_pages}");
            prop_assert_eq!(placed, live_chunks(&model, chunk_pages) * chunk_pages);
        }
        let mut buf = vec![0u8; PAGE_BYTES];
        for (f, m) in model.iter().enumerate() {
            for p in 0..space {
                files[f].read(p, &mut buf).unwrap();
                let want = m.get(&p).copied().unwrap_or(0);
                prop_assert!(buf.iter().all(|&b| b == want), "file {f} page {p}: want {want}");
            }
        }
    }
}

#[test]
fn a_file_grows_past_its_share_while_another_is_small() {
    let mut shared = SharedDevice::new(MemDevice::new(PAGE_BYTES, 8)).with_extents(1);
    let mut a = shared.file(16, 4).unwrap();
    let mut b = shared.file(16, 4).unwrap();
    a.write(0, &[1u8; 6 * PAGE_BYTES], WriteHint::NONE).unwrap();
    b.write(0, &[2u8; 2 * PAGE_BYTES], WriteHint::NONE).unwrap();
    assert!(matches!(
        b.write(2, &[3u8; PAGE_BYTES], WriteHint::NONE),
        Err(DevError::NoSpace { .. })
    ));
    a.trim(0, 3).unwrap();
    b.write(2, &[3u8; 3 * PAGE_BYTES], WriteHint::NONE).unwrap();
    assert_eq!(shared.placed_pages(), Some(8));
}

#[test]
fn a_file_needs_placement() {
    let mut shared = SharedDevice::new(MemDevice::new(PAGE_BYTES, 8));
    assert!(matches!(shared.file(16, 4), Err(DevError::Config { .. })));
}
