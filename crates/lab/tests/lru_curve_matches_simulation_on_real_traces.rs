//! The one-pass LRU curve (and the lru-ext grid it gives) equals per-size simulation exactly
//! on prefixes of real traces. Needs `../shared/traces`: `#[ignore]`d (reported as ignored, not
//! passed); `.ci/run` runs them with `-- --ignored` when it exists.

use lab::buffer_sim::TraceSpec;
use policy::{BufferSim, PolicyConfig, PolicyKind, StackDistances};
use std::path::Path;
use workload::cache_trace::PageTraceFormat;

#[test]
#[ignore = "needs ../shared/traces"]
fn curve_equals_per_size_simulation_on_real_trace_prefixes() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../../shared/traces");
    assert!(
        dir.is_dir(),
        "{} is absent (see the #[ignore])",
        dir.display()
    );
    let cases = [
        ("arc_OLTP.lis.zst", "arc"),
        ("cache2k_orm_busy.u32be.xz", "u32be"),
        ("msr_hm0_first1000.csv", "block:msr"),
    ];
    for (file, fmt) in cases {
        let spec = TraceSpec {
            path: dir.join(file),
            format: PageTraceFormat::parse(fmt).unwrap(),
            page_bytes: 4096,
        };
        let refs: Vec<_> = spec
            .open()
            .unwrap()
            .take(200_000)
            .map(|r| r.unwrap())
            .collect();
        let mut sd = StackDistances::new();
        refs.iter().for_each(|r| {
            sd.reference(r.page, r.write);
        });
        let curve = sd.curve();
        let n = curve.distinct();
        for (main, ext) in [(1, 0), (n / 50 + 1, n / 10), (n / 25 + 1, n / 4), (n, 7)] {
            for (kind, ext) in [(PolicyKind::Lru, 0), (PolicyKind::LruExt, ext)] {
                let mut sim = BufferSim::new(&PolicyConfig::new(kind, main, ext)).unwrap();
                refs.iter().for_each(|r| {
                    sim.reference(r.page, r.write);
                });
                assert_eq!(
                    curve.lru_ext(main, ext).counts,
                    sim.counts(),
                    "{file}: {} main {main} flash {ext}",
                    kind.name()
                );
            }
        }
    }
}

/// Megiddo & Modha, "ARC: A Self-Tuning, Low Overhead Replacement Cache" (FAST 2003), Table
/// VII: LRU hit ratios (%) on the OLTP trace by cache size in 512-byte pages. Published figures,
/// checked against our measurement (two decimals, as printed in the paper).
const ARC_PAPER_OLTP_LRU: [(usize, f64); 5] = [
    (1000, 32.83),
    (2000, 42.47),
    (5000, 53.65),
    (10000, 60.70),
    (15000, 64.63),
];

#[test]
#[ignore = "needs ../shared/traces"]
fn lru_hit_ratios_match_the_arc_paper_on_oltp() {
    let path =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../../../shared/traces/arc_OLTP.lis.zst");
    assert!(
        path.exists(),
        "{} is absent (see the #[ignore])",
        path.display()
    );
    let spec = TraceSpec {
        path,
        format: PageTraceFormat::Arc,
        page_bytes: 512,
    };
    let mut sd = StackDistances::new();
    for r in spec.open().unwrap() {
        let r = r.unwrap();
        sd.reference(r.page, r.write);
    }
    let curve = sd.curve();
    for (size, paper_pct) in ARC_PAPER_OLTP_LRU {
        let ours = 100.0 * curve.hits(size) as f64 / curve.references as f64;
        assert!(
            (ours - paper_pct).abs() < 0.005,
            "size {size}: ours {ours:.3} %, the ARC paper's {paper_pct} %"
        );
    }
}
