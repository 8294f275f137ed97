//! Paper-scale probes of `reproduce multistream` (ignored: minutes of CPU): where the SSD
//! pools its free and open blocks, per die or for the device, with P5's four policies.
//! Run: `cargo test --release -p lab --test multistream_probe -- --ignored --nocapture`.

use lab::papers::p5_multistream::{run_with, MapSpec, MultistreamRow, Plan};
use lab::report::Scale;
use lab::ReproduceOptions;
use policy::streams::NamedPolicy;

#[test]
#[ignore]
fn gc_pool_per_die_against_one_pool_at_paper_scale() {
    let opts = ReproduceOptions {
        scale: Scale::Paper,
        ..Default::default()
    };
    // PerDie is what the sizing picks at 1 GiB (the default run).
    for pool in [ssd::GcPool::Device] {
        let mut plan = Plan::new(&opts);
        plan.gc_modes = vec![ssd::GcStreamMode::PerStream];
        plan.policies = [
            NamedPolicy::NoStreams,
            NamedPolicy::PerType,
            NamedPolicy::SimilarMerged,
            NamedPolicy::DifferentMerged,
        ]
        .into_iter()
        .map(MapSpec::Policy)
        .collect();
        plan.gc_pool = Some(pool);
        let out = run_with(&opts, &plan).unwrap();
        let rows: Vec<MultistreamRow> = out.report.rows_as().unwrap();
        for r in rows {
            println!(
                "probe pool {pool:?}: {} WAF {:.3} ({:+.1} % vs none)",
                r.policy,
                r.waf,
                -r.waf_reduction_vs_none.unwrap_or(0.0)
            );
        }
    }
}

/// File-system chunks per DB file: at paper scale (1 GiB) a file spans ~104 chunks of 64
/// pages and its next generation mostly reuses its own freed chunks; at quick scale (128 MiB)
/// ~13, mostly reused by other files. 8-page chunks give quick scale paper scale's ~104
/// chunks per file (and 4-page chunks ~208).
#[test]
#[ignore]
fn chunks_per_file_at_quick_scale() {
    let opts = ReproduceOptions::default();
    for chunk in [4u64, 8, 64] {
        let mut plan = Plan::new(&opts);
        plan.gc_modes = vec![ssd::GcStreamMode::PerStream];
        plan.policies = [
            NamedPolicy::NoStreams,
            NamedPolicy::PerType,
            NamedPolicy::SimilarMerged,
            NamedPolicy::DifferentMerged,
        ]
        .into_iter()
        .map(MapSpec::Policy)
        .collect();
        plan.fs_chunk_pages = Some(chunk);
        let out = run_with(&opts, &plan).unwrap();
        let rows: Vec<MultistreamRow> = out.report.rows_as().unwrap();
        for r in rows {
            println!(
                "probe chunk {chunk} pages: {} WAF {:.3} ({:+.1} % vs none)",
                r.policy,
                r.waf,
                -r.waf_reduction_vs_none.unwrap_or(0.0)
            );
        }
        println!(
            "probe chunk {chunk} pages: {}",
            out.report.notes.last().unwrap()
        );
    }
}
