//! `reproduce ext-buffer` on the committed PostgreSQL capture (format `pg`): the percentages
//! refer to the database size its header states, the claims are judged on it, and a table sets
//! them beside the same claims on the TPC-C-like generator, claim by claim.

use lab::buffer_sim::TraceSpec;
use lab::papers::p3_ext_buffer::{run_with, ExtBufferOptions};
use lab::ReproduceOptions;
use std::path::Path;
use workload::cache_trace::PageTraceFormat;

#[test]
fn claims_on_the_pg_capture_stand_beside_the_generators() {
    let fixture =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../workload/tests/fixtures/pg-tpcc-w1-30s.zst");
    let ext = ExtBufferOptions {
        trace: Some(TraceSpec {
            path: fixture,
            format: PageTraceFormat::Pg,
            page_bytes: 4096,
        }),
        engine: false,
    };
    let out = run_with(&ReproduceOptions::default(), &ext).unwrap();
    let cfg = &out.report.config;
    assert_eq!(cfg["database_pages"], 129_596_775u64.div_ceil(8192));
    assert!(cfg["database_is"].as_str().unwrap().contains("PostgreSQL"));
    assert_eq!(cfg["references"], 933_021);
    let both = out
        .tables
        .iter()
        .find(|t| t.title.contains("both traces"))
        .expect("the table of both traces");
    assert_eq!(both.rows.len(), out.report.claims.len());
    assert!(out.report.claims.len() >= 10);
    for (row, claim) in both.rows.iter().zip(&out.report.claims) {
        assert_eq!(row[0], claim.claim);
        assert_ne!(row[2], "-", "the generator judged {}", claim.claim);
    }
    assert!(out.report.notes.iter().any(|n| n.contains("0 events lost")));
    // The same side by side in the JSON: one row per claim, both verdicts.
    let json_rows: Vec<_> = out
        .report
        .rows
        .iter()
        .filter(|r| r["figure"] == "claims-both-traces")
        .collect();
    assert_eq!(json_rows.len(), out.report.claims.len());
    for r in json_rows {
        assert!(r["generator_verdict"].is_string(), "{r:?}");
        assert!(r["postgresql_verdict"].is_string(), "{r:?}");
    }
}
