//! `--jobs` decides how many runs work at once, never what they measure: an experiment's
//! report at several jobs is the one it gives one run at a time (as-btree checks the same
//! in its own tests, on a plan smaller than any scale). Wall-clock keys aside.

use lab::buffer_sim::TraceSpec;
use lab::papers::p3_ext_buffer::{run_with, ExtBufferOptions};
use lab::parallel::Jobs;
use lab::ReproduceOptions;
use std::path::PathBuf;
use workload::cache_trace::PageTraceFormat;

#[test]
fn ext_buffer_reports_the_same_at_one_and_three_jobs() {
    let ext = ExtBufferOptions {
        trace: Some(TraceSpec {
            path: PathBuf::from("warehouses=1,transactions=800,seed=5"),
            format: PageTraceFormat::Tpcc,
            page_bytes: 4096,
        }),
        // The engine's runs on the simulated devices go side by side too.
        engine: true,
    };
    let report = |jobs| {
        let opts = ReproduceOptions {
            jobs: Jobs::new(jobs),
            ..ReproduceOptions::default()
        };
        let mut out = run_with(&opts, &ext).unwrap();
        // The one key that is not a function of the inputs: the engine runs' wall time.
        for row in &mut out.report.rows {
            row.remove("wall_seconds");
        }
        (out.report.to_json(), out.tables)
    };
    let (serial, serial_tables) = report(1);
    assert!(serial.contains("2q-flash") && serial.contains("fig6-raid0"));
    let (parallel, parallel_tables) = report(3);
    assert_eq!(serial, parallel);
    assert_eq!(serial_tables, parallel_tables);
}
