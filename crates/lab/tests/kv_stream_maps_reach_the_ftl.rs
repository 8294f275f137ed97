//! Several stores (DB files) on partitions of one simulated SSD: every page a store writes
//! arrives on the device stream its [`StreamMap`] names for (file, data type) — for every
//! named policy and for a map from a TOML file — and `auto` puts short-lived and long-lived
//! (file, type) classes on different streams.
//!
//! Checked three ways: the stream assignment's count of pages per (file, type, stream) against each
//! store's own count of pages written per type (the type arrives intact), against the map
//! (the stream is the map's), and the SSD's per-stream host page counters against the assignment's
//! (the stream reaches the FTL).

use blockdev::{BlockDevice, SharedDevice, SimDevice};
use engine::kv::{Options, Store};
use policy::streams::{ClassStreams, DataType, NamedPolicy, StreamMap};
use std::cell::RefCell;
use std::collections::BTreeMap;
use std::rc::Rc;

const FILES: u32 = 4;
const STREAMS: u16 = 8;

fn sim() -> SimDevice {
    let mut cfg = ssd::SsdConfig::preset("tlc-nvme-2024").unwrap();
    cfg.geometry.page_bytes = 4096;
    cfg.geometry.pages_per_block = 16;
    cfg.ftl.streams = STREAMS;
    SimDevice::new(cfg.with_logical_capacity(32 << 20).unwrap()).unwrap()
}

struct Setup {
    shared: SharedDevice<SimDevice>,
    router: Rc<RefCell<ClassStreams>>,
    stores: Vec<Store>,
}

fn setup(map: StreamMap) -> Setup {
    let dev = sim();
    let pages = dev.capacity_pages();
    let router = Rc::new(RefCell::new(ClassStreams::new(map, pages)));
    let mut shared = SharedDevice::with_streams(dev, Box::new(router.clone()));
    let opts = Options {
        streams: NamedPolicy::PerType,
        cache_pages: 16,
        compact_min_bytes: 16 << 10,
        ..Options::default()
    };
    let stores = (0..FILES)
        .map(|_| {
            let part = shared.partition(pages / FILES as u64).unwrap();
            Store::open(Box::new(part), opts).unwrap()
        })
        .collect();
    Setup {
        shared,
        router,
        stores,
    }
}

fn work(stores: &mut [Store], rounds: u32, keys: u32) {
    for round in 0..rounds {
        for (f, s) in stores.iter_mut().enumerate() {
            for k in 0..keys {
                let v = vec![(k + round) as u8; 300 + (k as usize % 7) * 100];
                s.put(format!("f{f}key{k:05}").as_bytes(), &v).unwrap();
                if k % 50 == 49 {
                    s.commit().unwrap();
                }
            }
        }
    }
}

fn pages_of(s: &Store, t: DataType) -> u64 {
    let p = s.stat().pages_written;
    match t {
        DataType::Superblock => p.superblock,
        DataType::Header => p.header,
        DataType::Index => p.index,
        DataType::Data => p.data,
    }
}

/// The three checks of the module docs; returns the pages per stream.
fn check_routing(st: &Setup, map: &StreamMap) -> Vec<u64> {
    let router = st.router.borrow();
    let routed = router.routed();
    for (f, s) in st.stores.iter().enumerate() {
        for t in DataType::ALL {
            let got: u64 = routed
                .iter()
                .filter(|((rf, rt, _), _)| *rf == f as u32 && *rt == t)
                .map(|(_, n)| n)
                .sum();
            assert!(got > 0, "{}: file {f} wrote no {t:?} page", map.name());
            assert_eq!(got, pages_of(s, t), "{}: file {f} {t:?}", map.name());
        }
    }
    if !map.is_auto() {
        for (f, t, stream) in routed.keys() {
            assert_eq!(
                *stream,
                map.stream(*f, *t),
                "{}: file {f} {t:?}",
                map.name()
            );
        }
    }
    let mut per_stream = vec![0u64; STREAMS as usize];
    for ((_, _, stream), n) in routed {
        per_stream[*stream as usize] += n;
    }
    let dev = st.shared.device();
    assert_eq!(
        dev.ssd().host_pages_written_by_stream(),
        &per_stream[..],
        "{}: the SSD's pages per stream",
        map.name()
    );
    dev.ssd().verify().unwrap();
    per_stream
}

#[test]
fn every_policys_map_reaches_the_ftl_per_file_and_type() {
    for p in NamedPolicy::EVERY {
        if matches!(p, NamedPolicy::Auto | NamedPolicy::Oracle) {
            // auto: its own test below; oracle: placed from a recorded first pass
            // (tests/oracle_placement_beats_no_streams.rs, multistream_quick.rs).
            continue;
        }
        let map = StreamMap::policy(p, FILES, STREAMS).unwrap();
        let mut st = setup(map.clone());
        work(&mut st.stores, 3, 300);
        st.stores[1].compact().unwrap();
        st.stores[1].commit().unwrap();
        let per_stream = check_routing(&st, &map);
        let used = per_stream.iter().filter(|&&n| n > 0).count();
        let expected = match p {
            NamedPolicy::NoStreams => 1,
            NamedPolicy::PerType | NamedPolicy::PerFile => 4,
            _ => 3,
        };
        assert_eq!(used, expected, "{}: streams used {per_stream:?}", p.name());
    }
}

#[test]
fn a_map_from_a_toml_file_reaches_the_ftl() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("streams.toml");
    std::fs::write(
        &path,
        "default = 1\n[types]\nsuperblock = 2\n[files.0]\ndata = 3\n[files.3]\nindex = 7\nheader = 7\n",
    )
    .unwrap();
    let map = StreamMap::load(&path, FILES, STREAMS).unwrap();
    assert_eq!(map.stream(0, DataType::Data), 3);
    assert_eq!(map.stream(3, DataType::Header), 7);
    assert_eq!(map.stream(2, DataType::Index), 1);
    let mut st = setup(map.clone());
    work(&mut st.stores, 2, 200);
    let per_stream = check_routing(&st, &map);
    let used: Vec<usize> = (0..STREAMS as usize)
        .filter(|&s| per_stream[s] > 0)
        .collect();
    assert_eq!(used, [1, 2, 3, 7]);
    // The same file through `StreamMap::named`.
    let named = StreamMap::named(path.to_str().unwrap(), FILES, STREAMS).unwrap();
    assert_eq!(named, map);
}

#[test]
fn auto_puts_short_and_long_lived_classes_on_different_streams() {
    let map = StreamMap::policy(NamedPolicy::Auto, FILES, STREAMS).unwrap();
    let mut st = setup(map.clone());
    // Every file is loaded once (long-lived data), then file 0 is updated in small commits:
    // its superblock and headers die within a few writes, the other files' data never.
    work(&mut st.stores, 1, 400);
    for round in 0..2000u32 {
        let s = &mut st.stores[0];
        for k in 0..5u32 {
            s.put(
                format!("f0key{:05}", (round * 5 + k) % 400).as_bytes(),
                &[round as u8; 200],
            )
            .unwrap();
        }
        s.commit().unwrap();
    }
    let per_stream = check_routing(&st, &map);
    assert!(
        per_stream.iter().filter(|&&n| n > 0).count() >= 2,
        "auto used one stream only: {per_stream:?} {:?} {:?}",
        st.router.borrow().auto_mapping(),
        st.router
            .borrow()
            .auto()
            .map(|a| (a.decisions(), a.estimates()))
    );
    let mapping: BTreeMap<(u32, DataType), u16> = st
        .router
        .borrow()
        .auto_mapping()
        .into_iter()
        .map(|(f, t, s)| ((f, t), s))
        .collect();
    let hot = mapping[&(0, DataType::Superblock)];
    let cold = mapping[&(2, DataType::Data)];
    assert_ne!(
        hot, cold,
        "file 0's superblock and file 2's data share a stream ({mapping:?})"
    );
}
