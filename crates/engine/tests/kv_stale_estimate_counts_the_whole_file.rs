//! `Options::stale_estimate`: ForestDB's auto-compaction estimate (the file's pages written
//! since the generation began, less its active data) against ours (stale document bytes on
//! the data pages in use).

use engine::kv::{CompactionMode, Options, RetiredHeaders, StaleEstimate, Store, WritePath};

mod common;
use common::{key, mem, small_opts};

fn opts(stale_estimate: StaleEstimate) -> Options {
    Options {
        write_path: WritePath::Wal,
        compaction_mode: CompactionMode::WholeFile,
        next_fit: true,
        wal_flush_docs: 150,
        compact_threshold: 0.3,
        compact_min_bytes: 64 << 10,
        retired_headers: RetiredHeaders::Hold,
        stale_estimate,
        ..small_opts()
    }
}

/// 600 commits of 16 updates of 1,000 bytes over 150 keys; returns the generations reached
/// and, after each compaction's commit, the stale share the policy then saw.
fn run(o: Options) -> (u64, Vec<f64>) {
    let mut s = Store::open(mem(4096), o).unwrap();
    let mut after = Vec::new();
    for c in 0..600u32 {
        for i in 0..16 {
            s.put(&key((c * 37 + i * 11) % 150), &[c as u8; 1000])
                .unwrap();
        }
        let g = s.stat().generation;
        s.commit().unwrap();
        if s.stat().generation > g {
            let sp = s.space();
            after.push(sp.stale_bytes as f64 / (sp.stale_bytes + sp.live_bytes) as f64);
        }
    }
    assert!(s.check().unwrap().is_empty());
    (s.stat().generation, after)
}

#[test]
fn the_file_size_estimate_counts_headers_and_index_and_restarts_with_each_generation() {
    let (g_data, _) = run(opts(StaleEstimate::DataPages));
    let (g_file, after) = run(opts(StaleEstimate::FileSize));
    assert!(g_data >= 10, "compactions ran: {g_data}");
    // Held headers and stale index nodes count too: the file reaches the threshold sooner.
    assert!(
        g_file > g_data,
        "file-size {g_file} > data-pages {g_data} generations"
    );
    // Right after a compaction the new file is (nearly) all active: ForestDB's new file.
    assert_eq!(after.len() as u64, g_file);
    for share in after {
        assert!(
            share < 0.1,
            "stale share {share:.3} right after a compaction"
        );
    }
}

#[test]
fn the_estimate_names_round_trip() {
    for e in StaleEstimate::ALL {
        assert_eq!(StaleEstimate::parse(e.name()), Some(e));
    }
    assert_eq!(StaleEstimate::default(), StaleEstimate::DataPages);
}
