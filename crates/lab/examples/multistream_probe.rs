//! Probes of `reproduce multistream` (minutes of CPU; a measurement, not a test): where the
//! SSD pools its free and open blocks, per die or for the device, with P5's four policies at
//! paper scale (`pool`), and file-system chunks per DB file at quick scale (`chunks`).
//! Run: `cargo run --release -p lab --example multistream_probe -- [pool|chunks]` (both if none).

use lab::papers::p5_multistream::{run_with, MapSpec, MultistreamRow, Plan};
use lab::report::Scale;
use lab::ReproduceOptions;
use policy::streams::NamedPolicy;

fn main() {
    let which = std::env::args().nth(1);
    match which.as_deref() {
        Some("pool") => gc_pool_per_die_against_one_pool_at_paper_scale(),
        Some("chunks") => chunks_per_file_at_quick_scale(),
        None => {
            gc_pool_per_die_against_one_pool_at_paper_scale();
            chunks_per_file_at_quick_scale();
        }
        Some(other) => {
            eprintln!("multistream_probe: unknown probe {other:?}; use `pool` or `chunks`");
            std::process::exit(2);
        }
    }
}

fn gc_pool_per_die_against_one_pool_at_paper_scale() {
    let opts = ReproduceOptions {
        scale: Scale::Paper,
        ..Default::default()
    };
    // PerDie is what the sizing picks at 1 GiB (the default run).
    for pool in [ssd::GcPool::Device] {
        let mut plan = four_policies(&opts);
        plan.gc_pool = Some(pool);
        let out = run_with(&opts, &plan).expect("multistream run");
        let rows: Vec<MultistreamRow> = out.report.rows_as().expect("multistream rows");
        for r in rows {
            print_row(&format!("pool {pool:?}"), &r);
        }
    }
}

/// File-system chunks per DB file: at paper scale (1 GiB) a file spans ~104 chunks of 64
/// pages and its next generation mostly reuses its own freed chunks; at quick scale (128 MiB)
/// ~13, mostly reused by other files. 8-page chunks give quick scale paper scale's ~104
/// chunks per file (and 4-page chunks ~208).
fn chunks_per_file_at_quick_scale() {
    let opts = ReproduceOptions::default();
    for chunk in [4u64, 8, 64] {
        let mut plan = four_policies(&opts);
        plan.fs_chunk_pages = Some(chunk);
        let out = run_with(&opts, &plan).expect("multistream run");
        let rows: Vec<MultistreamRow> = out.report.rows_as().expect("multistream rows");
        for r in rows {
            print_row(&format!("chunk {chunk} pages"), &r);
        }
        println!(
            "probe chunk {chunk} pages: {}",
            out.report.notes.last().map_or("", String::as_str)
        );
    }
}

/// P5's four policies under per-stream GC, the plan both probes vary.
fn four_policies(opts: &ReproduceOptions) -> Plan {
    let mut plan = Plan::new(opts);
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
    plan
}

fn print_row(probe: &str, r: &MultistreamRow) {
    println!(
        "probe {probe}: {} WAF {:.3} ({:+.1} % vs none)",
        r.policy,
        r.waf,
        -r.waf_reduction_vs_none.unwrap_or(0.0)
    );
}
