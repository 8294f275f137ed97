//! The lending scan (`Store::scan_each`) against the owned scan and a `BTreeMap` model: every
//! bound shape, limits that end inside a leaf or a prepared window, keys in the uncommitted
//! batch and in the WAL (not yet flushed into the tree), deletes of each, and a cache small
//! enough that a window's prefetched pages are evicted before the scan reaches them.

use engine::kv::{Options, Store};
use proptest::prelude::*;
use std::ops::Bound;

mod common;
use common::{apply, key, mem, variant_opts, Model, Write};

#[derive(Clone, Debug)]
enum Op {
    Write(Write),
    /// Start (shape, key), end (shape, key), limit; shapes: 0 included, 1 excluded, 2 none.
    Scan((u8, u32), (u8, u32), usize),
}

fn op() -> impl Strategy<Value = Op> {
    let bound = || (0..3u8, 0..1500u32);
    prop_oneof![
        10 => (0..1500u32, 0..1200u16, any::<u8>())
            .prop_map(|(k, l, b)| Op::Write(Write::Put(k, l, b))),
        3 => (0..1500u32).prop_map(|k| Op::Write(Write::Delete(k))),
        4 => (bound(), bound(), 0..260usize).prop_map(|(s, e, n)| Op::Scan(s, e, n)),
        2 => Just(Op::Write(Write::Commit)),
        1 => Just(Op::Write(Write::FlushWal)),
    ]
}

fn bound(shape: u8, k: &[u8]) -> Bound<&[u8]> {
    match shape {
        0 => Bound::Included(k),
        1 => Bound::Excluded(k),
        _ => Bound::Unbounded,
    }
}

fn owned(b: Bound<&[u8]>) -> Bound<Vec<u8>> {
    b.map(<[u8]>::to_vec)
}

/// Whether a BTreeMap accepts the range (it panics on a start past the end).
fn valid(start: Bound<&[u8]>, end: Bound<&[u8]>) -> bool {
    match (start, end) {
        (Bound::Included(s), Bound::Included(e)) => s <= e,
        (Bound::Excluded(s), Bound::Excluded(e)) if s == e => false,
        (Bound::Included(s) | Bound::Excluded(s), Bound::Included(e) | Bound::Excluded(e)) => {
            s <= e
        }
        _ => true,
    }
}

/// Scan `s` both ways and check each against the model.
fn check_scan(
    s: &mut Store,
    m: &Model,
    range: (Bound<&[u8]>, Bound<&[u8]>),
    limit: usize,
) -> Result<(), TestCaseError> {
    let want: Vec<(Vec<u8>, Vec<u8>)> = if valid(range.0, range.1) {
        m.range((owned(range.0), owned(range.1)))
            .take(limit)
            .map(|(k, v)| (k.clone(), v.clone()))
            .collect()
    } else {
        Vec::new()
    };
    let mut lent = Vec::new();
    let n = s
        .scan_each(range, limit, |k, v| lent.push((k.to_vec(), v.to_vec())))
        .unwrap();
    prop_assert_eq!(n, lent.len());
    prop_assert_eq!(&lent, &want);
    if valid(range.0, range.1) {
        let got: Vec<_> = s
            .scan(range)
            .unwrap()
            .take(limit)
            .map(|r| r.unwrap())
            .collect();
        prop_assert_eq!(&got, &want);
    }
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 48, ..ProptestConfig::default() })]
    #[test]
    fn the_lending_scan_returns_what_the_owned_scan_and_the_model_hold(
        ops in prop::collection::vec(op(), 1..400),
        variant in 0..6u64,
        cache_pages in prop_oneof![Just(4usize), Just(24), Just(512)],
    ) {
        // A fixed cache (no growth): at 4 pages a window's prefetch (a quarter of the cache)
        // is cut short and its pages evicted before they are read.
        let opts = Options { cache_pages, cache_max_pages: 0, ..variant_opts(variant) };
        let mut s = Store::open(mem(8192), opts).unwrap();
        let mut m = Model::new();
        for op in ops {
            match op {
                Op::Write(w) => apply(&mut s, &mut m, &w),
                Op::Scan((ss, sk), (es, ek), limit) => {
                    let (lo, hi) = (key(sk), key(ek));
                    check_scan(&mut s, &m, (bound(ss, &lo), bound(es, &hi)), limit)?;
                }
            }
        }
        check_scan(&mut s, &m, (Bound::Unbounded, Bound::Unbounded), usize::MAX)?;
        // Cold: every window read from the device.
        s.commit().unwrap();
        let mut s = Store::open(s.into_device(), opts).unwrap();
        check_scan(&mut s, &m, (Bound::Unbounded, Bound::Unbounded), usize::MAX)?;
        check_scan(&mut s, &m, (Bound::Included(&key(700)[..]), Bound::Unbounded), 150)?;
    }
}
