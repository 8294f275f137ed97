//! The one trait gives, for every named policy and every (file, data type), the streams the
//! policies gave before they moved here: a store alone on its device tagged type `t` with
//! `StreamPolicy::hint(t).stream`, and a shared device's router sent (file, type) to the
//! `StreamMap` row built from it (reference tables below, as they were written then).

use super::*;
use proptest::prelude::*;

/// The store's own tag before: P5's table, per-type labels `1 + index` otherwise.
fn old_hint(p: NamedPolicy, t: DataType) -> u16 {
    use DataType::*;
    match (p, t) {
        (NamedPolicy::NoStreams, _) => 0,
        (
            NamedPolicy::PerType | NamedPolicy::PerFile | NamedPolicy::Auto | NamedPolicy::Oracle,
            t,
        ) => DataType::ALL.iter().position(|&x| x == t).unwrap() as u16 + 1,
        (NamedPolicy::SimilarMerged, Header | Index) => 1,
        (NamedPolicy::SimilarMerged, Data) => 2,
        (NamedPolicy::SimilarMerged, Superblock) => 3,
        (NamedPolicy::DifferentMerged, Data | Superblock) => 1,
        (NamedPolicy::DifferentMerged, Header) => 2,
        (NamedPolicy::DifferentMerged, Index) => 3,
    }
}

/// The shared device's stream of (file, type) before (a static policy).
fn old_row(p: NamedPolicy, file: u32, t: DataType, device_streams: u16) -> u16 {
    let device_streams = device_streams.max(1);
    match p {
        NamedPolicy::PerFile if device_streams > 1 => {
            1 + (file % (device_streams as u32 - 1)) as u16
        }
        NamedPolicy::PerFile | NamedPolicy::Auto | NamedPolicy::Oracle => 0,
        p => old_hint(p, t),
    }
}

proptest! {
    #[test]
    fn named_policies_give_the_streams_they_gave_before(
        files in 1u32..40,
        device_streams in 1u16..12,
        lpns in proptest::collection::vec(0u64..1000, 1..8),
    ) {
        for p in NamedPolicy::EVERY {
            for t in DataType::ALL {
                prop_assert_eq!(p.stream(t), old_hint(p, t), "{:?} {:?}", p, t);
            }
            let Ok(map) = StreamMap::policy(p, files, device_streams) else {
                // Refused: the old table needed more streams than the device has.
                let needed = 1 + DataType::ALL.iter().map(|&t| old_hint(p, t)).max().unwrap();
                prop_assert!(p == NamedPolicy::PerType || p == NamedPolicy::SimilarMerged
                    || p == NamedPolicy::DifferentMerged);
                prop_assert!(needed > device_streams.max(1));
                continue;
            };
            let mut a = ClassStreams::new(map, 1000);
            for file in 0..files {
                for t in DataType::ALL {
                    for &lpn in &lpns {
                        let got = a.stream(lpn, Some(WriteClass::new(file, t)));
                        if p == NamedPolicy::Auto {
                            // Before the first decision every class is on stream 0.
                            prop_assert_eq!(got, 0);
                        } else {
                            prop_assert_eq!(got, old_row(p, file, t, device_streams),
                                "{:?} file {} {:?}", p, file, t);
                        }
                    }
                }
            }
            prop_assert_eq!(a.stream(lpns[0], None), 0, "no class: the default stream");
        }
    }

    #[test]
    fn class_keys_round_trip(file in 0u32..WriteClass::FILES_MAX, i in 0usize..4) {
        let c = WriteClass::new(file, DataType::ALL[i]);
        prop_assert_eq!(c.key(), file * 4 + i as u32);
        prop_assert_eq!(WriteClass::from_key(c.key()), c);
    }

    #[test]
    fn lba_policies_give_the_streams_they_gave_before(
        logical_pages in 1u64..5000,
        ranges in 1u32..16,
        lpn_share in 0.0f64..1.0,
        pages in 1u32..8,
    ) {
        let lpn = ((logical_pages as f64 * lpn_share) as u64).min(logical_pages - 1);
        let ranges = ranges.min(logical_pages as u32);
        let mut none = LbaPolicySpec::None.build(None, logical_pages, 1).unwrap();
        prop_assert_eq!(none.stream_of_run(lpn, pages, None), 0);
        let hot = logical_pages / 10;
        let mut hc = LbaPolicySpec::HotCold.build(Some(hot), logical_pages, 2).unwrap();
        prop_assert_eq!(hc.stream_of_run(lpn, pages, None), (lpn < hot) as u16);
        let mut r = LbaPolicySpec::ByLbaRange { ranges }
            .build(None, logical_pages, ranges as u16)
            .unwrap();
        let old = (lpn as u128 * ranges as u128 / logical_pages as u128).min(ranges as u128 - 1);
        prop_assert_eq!(r.stream_of_run(lpn, pages, None) as u128, old);
    }
}
