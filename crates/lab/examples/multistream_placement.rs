//! A measurement, not a check: `reproduce multistream` at quick scale with the
//! DB files on fixed partitions and placed as files of one file system, P5's policies and the
//! oracle, GC per stream. Prints each placement's WAF table.
//! Run: `cargo run --release -p lab --example multistream_placement` (a few minutes).

use lab::papers::p5_multistream::{run_with, MapSpec, MultistreamRow, Plan};
use lab::ReproduceOptions;
use policy::streams::NamedPolicy;

fn main() {
    let opts = ReproduceOptions::default();
    for chunk in [None, Some(16), Some(64)] {
        let mut plan = Plan::new(&opts);
        plan.gc_modes.truncate(1);
        plan.policies = [
            NamedPolicy::NoStreams,
            NamedPolicy::PerType,
            NamedPolicy::SimilarMerged,
            NamedPolicy::DifferentMerged,
            NamedPolicy::Oracle,
        ]
        .into_iter()
        .map(MapSpec::Policy)
        .collect();
        plan.fs_chunk_pages = chunk;
        let out = run_with(&opts, &plan).unwrap();
        let rows: Vec<MultistreamRow> = out.report.rows_as().unwrap();
        for r in rows {
            println!(
                "chunk {chunk:?} {:16} waf {:.3} vs none {:+.1} % flat {} x {:.1}",
                r.policy,
                r.waf,
                -r.waf_reduction_vs_none.unwrap_or(0.0),
                r.waf_flat,
                r.host_writes_x_capacity
            );
        }
        for n in &out.report.notes {
            if n.contains("oracle") {
                println!("  {n}");
            }
        }
    }
}
