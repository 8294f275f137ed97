//! Page-reference decoders: arbitrary bytes give references or an error, never a panic;
//! encoded references decode back exactly; the shared real traces decode (`#[ignore]`d: it
//! needs `../shared/traces`; `.ci/run` runs it with `-- --ignored` when that exists).

use proptest::prelude::*;
use std::path::Path;
use workload::cache_trace::{decode_bytes, fuzz_decode, PageRef, PageRefs, PageTraceFormat};

proptest! {
    #![proptest_config(ProptestConfig::with_cases(2000))]

    #[test]
    fn arbitrary_bytes_never_panic(bytes in prop::collection::vec(any::<u8>(), 0..200), sel in 0usize..13) {
        let mut data = vec![sel as u8];
        data.extend(bytes);
        fuzz_decode(&data, 10_000);
    }

    #[test]
    fn text_like_lines_never_panic(lines in prop::collection::vec("[RWrw*# 0-9a-z,.-]{0,30}", 0..20), sel in 0usize..13) {
        let all = PageTraceFormat::DECODED;
        let text = lines.join("\n");
        let input = Box::new(std::io::Cursor::new(text.into_bytes()));
        for r in PageRefs::from_reader(Path::new("fuzz"), input, all[sel % all.len()], 512).take(10_000) {
            if r.is_err() {
                break;
            }
        }
    }

    #[test]
    fn encoded_references_decode_back(refs in prop::collection::vec((any::<u32>(), any::<bool>()), 0..100)) {
        let text: String = refs.iter().map(|&(p, w)| format!("{} {p}\n", if w { 'W' } else { 'R' })).collect();
        let want: Vec<PageRef> = refs.iter().map(|&(p, w)| PageRef { page: p as u64, write: w }).collect();
        prop_assert_eq!(decode_bytes(text.as_bytes(), PageTraceFormat::Text, 4096).unwrap(), want.clone());
        let reads: Vec<PageRef> = want.iter().map(|r| PageRef { write: false, ..*r }).collect();
        let be: Vec<u8> = refs.iter().flat_map(|&(p, _)| p.to_be_bytes()).collect();
        prop_assert_eq!(decode_bytes(&be, PageTraceFormat::U32Be, 4096).unwrap(), reads.clone());
        let le: Vec<u8> = refs.iter().flat_map(|&(p, _)| p.to_le_bytes()).collect();
        prop_assert_eq!(decode_bytes(&le, PageTraceFormat::U32Le, 4096).unwrap(), reads.clone());
        let lirs: String = refs.iter().map(|&(p, _)| format!("{p}\n*\n")).collect();
        prop_assert_eq!(decode_bytes(lirs.as_bytes(), PageTraceFormat::Lirs, 4096).unwrap(), reads);
    }
}

#[test]
#[ignore = "needs ../shared/traces"]
fn shared_real_traces_decode() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../../shared/traces");
    assert!(
        dir.is_dir(),
        "{} is absent (see the #[ignore])",
        dir.display()
    );
    let cases = [
        ("arc_OLTP.lis.zst", "arc", 100_000),
        ("cache2k_orm_busy.u32be.xz", "u32be", 100_000),
        ("cloudphysics_w106.u32be.xz", "u32le", 100_000),
        ("scarab_recs.u64be.xz", "u64be", 100_000),
        ("lirs_sprite.trace.gz", "lirs", 100_000),
        ("msr_hm0_first1000.csv", "block:msr", 100_000),
        ("tencent_cbs_sample.csv.bz2", "block:tencent", 10_000),
    ];
    for (file, fmt, n) in cases {
        let f = PageTraceFormat::parse(fmt).unwrap();
        let refs: Result<Vec<_>, _> = PageRefs::open(&dir.join(file), f, 4096)
            .unwrap()
            .take(n)
            .collect();
        let refs = refs.unwrap_or_else(|e| panic!("{file}: {e}"));
        assert!(!refs.is_empty(), "{file}: no references");
    }
}
