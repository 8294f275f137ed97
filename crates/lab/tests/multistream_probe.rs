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
    for pool in [ssd::GcPool::Device, ssd::GcPool::PerDie] {
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
