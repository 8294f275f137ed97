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
    reasons_are_measured(&out.report);
}

/// The notes say why each claim differs, from this run's numbers: the write-back bound holds
/// for every point, the ledger's keys add up, and every claim that is not reproduced among
/// those with a reason carries it.
fn reasons_are_measured(r: &lab::Report) {
    let note = |p: &str| r.notes.iter().find(|n| n.starts_with(p)).cloned();
    for family in [
        "speed-up",
        "extended hit ratio",
        "best policy",
        "plateaus",
        "same money on DRAM",
        "model mechanisms",
        "WAL",
    ] {
        assert!(
            note(&format!("why ({family}, measured)")).is_some(),
            "no reason for {family}: {:?}",
            r.notes
        );
    }
    let rows: Vec<&serde_json::Map<String, serde_json::Value>> =
        r.rows.iter().filter(|x| x["figure"] == "fig3-5").collect();
    let num = |x: &serde_json::Map<String, serde_json::Value>, k: &str| x[k].as_f64().unwrap();
    let alone = rows.iter().find(|x| x["policy"] == "lru").unwrap();
    let w = num(alone, "disk_writes") / (num(alone, "disk_reads") + num(alone, "disk_writes"));
    let mut with_ledger = 0;
    for x in rows.iter().filter(|x| num(x, "flash_pct") > 0.0) {
        // Its own write-backs bound each point (lru-ext's are lru's: the bound 1/w - 1).
        let bound_pct = (num(alone, "elapsed_ms") / (num(x, "disk_writes") * 2.6) - 1.0) * 100.0;
        assert!(
            num(x, "speedup_vs_disks_alone_pct") <= bound_pct + 1e-6,
            "{x:?} beats its write-back bound {bound_pct}"
        );
        if x["policy"] == "lru-ext" {
            assert_eq!(num(x, "disk_writes"), num(alone, "disk_writes"));
        }
        if x.contains_key("disk_writes_at_flash_exit") {
            with_ledger += 1;
            assert!(num(x, "disk_writes_at_flash_exit") <= num(x, "disk_writes"));
            assert_eq!(
                num(x, "ext_hits_a1out") + num(x, "ext_hits_amout"),
                num(x, "ext_hits")
            );
            if x["policy"] != "2q-flash" {
                assert_eq!(num(x, "ext_hits_amout"), 0.0, "{x:?}");
            }
        }
    }
    assert_eq!(
        with_ledger, 30,
        "every ext point of Figures 3-5 is a simulator pass with a ledger"
    );
    let speed = note("why (speed-up, measured)").unwrap();
    assert!(
        speed.contains(&format!("{:.1} % of the disks-alone time", 100.0 * w)),
        "{speed}"
    );
    for c in r
        .claims
        .iter()
        .filter(|c| c.verdict != lab::claim::Verdict::Reproduced)
    {
        let has_reason = c.claim.starts_with("every extended-buffer")
            || c.claim.starts_with("extended-buffer hit ratio")
            || c.claim.starts_with("best extended-buffer")
            || c.claim.contains("stops improving")
            || c.claim.starts_with("2Q-Flash vs the same money");
        if has_reason {
            assert!(c.note.contains("; measured: "), "{c:?}");
        }
    }
}
