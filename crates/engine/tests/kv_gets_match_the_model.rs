//! Point gets (`Store::get`, `Store::get_with`) against a `BTreeMap` model: keys in the
//! uncommitted batch, in the WAL (not yet flushed into the tree) and in the tree, deletes of
//! each, values inside one data page and spanning pages, a cache so small that every level of
//! a lookup is evicted and read again, and a cold reopen.

use engine::kv::{Options, Store};
use proptest::prelude::*;

mod common;
use common::{apply, key, mem, small_opts, variant_opts, Model, Write};

#[derive(Clone, Debug)]
enum Op {
    Write(Write),
    Get(u32),
}

fn op() -> impl Strategy<Value = Op> {
    let len = prop_oneof![8 => 0..1300u16, 1 => 1300..9000u16];
    prop_oneof![
        10 => (0..600u32, len, any::<u8>()).prop_map(|(k, l, b)| Op::Write(Write::Put(k, l, b))),
        3 => (0..600u32).prop_map(|k| Op::Write(Write::Delete(k))),
        8 => (0..700u32).prop_map(Op::Get),
        2 => Just(Op::Write(Write::Commit)),
        1 => Just(Op::Write(Write::FlushWal)),
    ]
}

/// `get` and `get_with` of `k` both give the model's value.
fn check_get(s: &mut Store, m: &Model, k: &[u8]) -> Result<(), TestCaseError> {
    let want = m.get(k);
    let got = s.get(k).unwrap();
    prop_assert_eq!(got.as_ref(), want);
    let lent = s.get_with(k, |v| (v.len(), v.first().copied())).unwrap();
    prop_assert_eq!(lent, want.map(|v| (v.len(), v.first().copied())));
    Ok(())
}

fn check_all(s: &mut Store, m: &Model) -> Result<(), TestCaseError> {
    for i in 0..700 {
        check_get(s, m, &key(i))?;
    }
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 40, ..ProptestConfig::default() })]
    #[test]
    fn every_get_returns_the_models_value(
        ops in prop::collection::vec(op(), 1..400),
        variant in 0..6u64,
        cache_pages in prop_oneof![Just(3usize), Just(24), Just(512)],
    ) {
        // A fixed cache (no growth): at 3 pages a lookup's levels evict one another.
        let opts = Options { cache_pages, cache_max_pages: 0, ..variant_opts(variant) };
        let mut s = Store::open(mem(8192), opts).unwrap();
        let mut m = Model::new();
        for op in ops {
            match op {
                Op::Write(w) => apply(&mut s, &mut m, &w),
                Op::Get(k) => check_get(&mut s, &m, &key(k))?,
            }
        }
        check_all(&mut s, &m)?;
        // Cold: every lookup read from the device, then again from the cache.
        s.commit().unwrap();
        let mut s = Store::open(s.into_device(), opts).unwrap();
        check_all(&mut s, &m)?;
        check_all(&mut s, &m)?;
    }
}

/// Lookups and page reads of `get(k)`, and its value's length.
fn counted_get(s: &mut Store, k: &[u8]) -> (u64, u64, Option<usize>) {
    let before = s.pager().stats();
    let got = s.get(k).unwrap().map(|v| v.len());
    let after = s.pager().stats();
    let lookups = (after.hits + after.misses) - (before.hits + before.misses);
    (lookups, after.pages_read - before.pages_read, got)
}

/// A document spanning pages is looked up once per page whether its pages are cached, read,
/// or some of each (a get that found only some pages cached and started over would count
/// them twice), and a warm get reads nothing.
#[test]
fn a_spanning_get_looks_up_each_page_once() {
    let opts = Options {
        cache_pages: 512,
        cache_max_pages: 0,
        ..small_opts()
    };
    let mut s = Store::open(mem(8192), opts).unwrap();
    s.put(b"big", &[2; 9000]).unwrap();
    s.put(b"small", &[1; 100]).unwrap();
    s.commit().unwrap();
    let mut s = Store::open(s.into_device(), opts).unwrap();
    // The small document shares a page with the big one: the big one's get is then part
    // hit, part miss.
    assert_eq!(counted_get(&mut s, b"small").2, Some(100));
    let (cold_lookups, cold_reads, got) = counted_get(&mut s, b"big");
    assert_eq!(got, Some(9000));
    assert!(cold_reads >= 2, "the big document's other pages read");
    let (warm_lookups, warm_reads, got) = counted_get(&mut s, b"big");
    assert_eq!(got, Some(9000));
    assert_eq!(warm_reads, 0, "a warm get reads nothing");
    assert_eq!(cold_lookups, warm_lookups, "each page looked up once");
    assert!(warm_lookups >= 4, "three data pages and the index");
}

/// A key long enough that a few thousand of them make an index of three levels or more (a
/// lookup then follows handles from the root and from inner nodes to their children's cached
/// nodes, `kv/store/kids.rs`).
fn long_key(i: u32) -> Vec<u8> {
    format!("{i:05}{}", "k".repeat(190)).into_bytes()
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 12, ..ProptestConfig::default() })]
    /// Gets through child handles give the model's value while commits rewrite root-to-leaf
    /// paths and reuse the pages they released (a handle taken before must never serve the
    /// node a page held earlier), and with a cache small enough to evict the nodes handles
    /// lead to (they are read again through the pager).
    #[test]
    fn gets_through_child_handles_match_the_model(
        ops in prop::collection::vec((0..2500u32, 0..8u8, any::<u8>()), 1..1200),
        variant in 0..6u64,
        cache_pages in prop_oneof![Just(6usize), Just(64), Just(4096)],
    ) {
        let opts = Options { cache_pages, cache_max_pages: 0, ..variant_opts(variant) };
        let mut s = Store::open(mem(16384), opts).unwrap();
        let mut m = Model::new();
        for i in 0..2500 {
            s.put(&long_key(i), &[i as u8; 20]).unwrap();
            m.insert(long_key(i), vec![i as u8; 20]);
        }
        s.commit().unwrap();
        for (k, what, b) in ops {
            let key = long_key(k);
            match what {
                0 => {
                    s.put(&key, &[b; 40]).unwrap();
                    m.insert(key, vec![b; 40]);
                }
                1 => {
                    s.delete(&key).unwrap();
                    m.remove(&key);
                }
                2 => {
                    s.commit().unwrap();
                }
                _ => check_get(&mut s, &m, &key)?,
            }
        }
        s.commit().unwrap();
        for i in (0..2500).step_by(7) {
            check_get(&mut s, &m, &long_key(i))?;
        }
    }
}

/// A get through child handles looks up (and the pager counts) the same pages as the get that
/// took them, cold or warm: the replacement policy sees the same hits.
#[test]
fn gets_through_child_handles_count_every_level() {
    let opts = Options {
        cache_pages: 4096,
        cache_max_pages: 0,
        ..small_opts()
    };
    let mut s = Store::open(mem(16384), opts).unwrap();
    for i in 0..3000 {
        s.put(&long_key(i), &[7; 20]).unwrap();
    }
    s.commit().unwrap();
    let mut s = Store::open(s.into_device(), opts).unwrap();
    let k = long_key(1234);
    let (cold_lookups, cold_reads, got) = counted_get(&mut s, &k);
    assert_eq!(got, Some(20));
    // Opening walked the index (its nodes are cached, no handle taken yet): the data page read.
    assert!(cold_reads >= 1, "the data page read");
    let (taken, warm_reads, _) = counted_get(&mut s, &k);
    let (through, _, got) = counted_get(&mut s, &k);
    assert_eq!(got, Some(20));
    assert_eq!(warm_reads, 0, "a warm get reads nothing");
    assert_eq!(cold_lookups, taken, "each page looked up once");
    assert_eq!(taken, through, "a handle's hit is counted");
    assert!(through >= 4, "three index levels and the data page");
}
