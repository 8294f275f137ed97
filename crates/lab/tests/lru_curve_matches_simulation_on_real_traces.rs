//! The one-pass LRU curve (and the lru-ext grid it gives) equals per-size simulation exactly
//! on prefixes of real traces; skipped with a message when `../shared` is absent.

use cache::{BufferSim, PolicyConfig, PolicyKind, StackDistances};
use lab::buffer_sim::TraceSpec;
use std::path::Path;
use workload::cache_trace::PageTraceFormat;

#[test]
fn curve_equals_per_size_simulation_on_real_trace_prefixes() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../../shared/traces");
    if !dir.exists() {
        eprintln!("skipped: {} is absent", dir.display());
        return;
    }
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
