//! Every shipped public trace parses completely in its format, with the record count its
//! provenance README states. Tests that need `../shared/traces` are `#[ignore]`d (reported as
//! ignored, not passed); `.ci/run` runs them with `-- --ignored` when it exists.

use std::path::PathBuf;
use workload::trace::Records;
use workload::{build, LbaMapping, OpKind, Target, TraceFormat, WorkloadOptions, WorkloadSpec};

fn traces() -> PathBuf {
    let p = PathBuf::from(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../../shared/traces"
    ));
    assert!(
        p.is_dir(),
        "{} not found: the shared traces are not part of the repository (tests that need them are #[ignore]d; .ci/run runs them when ../shared/traces exists)",
        p.display()
    );
    p
}

#[test]
#[ignore = "needs ../shared/traces"]
fn each_trace_parses_with_its_published_record_count() {
    let dir = traces();
    for (file, format, records) in [
        ("msr_hm0_first1000.csv", TraceFormat::Msr, 1000),
        ("mqsim_tpcc_small.trace", TraceFormat::Disksim, 6999),
        // The README says 24782; `wc -l` undercounts by the last line, which has no newline.
        ("mqsim_wsrch_small.trace", TraceFormat::Disksim, 24783),
        ("systor17_sample.csv.gz", TraceFormat::Systor, 999),
        (
            "systor17_additional_sample.csv.gz",
            TraceFormat::Systor,
            999,
        ),
        ("tencent_cbs_sample.csv.bz2", TraceFormat::Tencent, 50000),
        // 5008 dispatch events: 5003 writes, 4 reads, 1 discard.
        (
            "wiscsee_sqlite_wal_blkparse.txt",
            TraceFormat::Blkparse,
            5008,
        ),
    ] {
        let mut n = 0;
        for r in Records::open(&dir.join(file), format).unwrap() {
            r.unwrap_or_else(|e| panic!("{file}: {e}"));
            n += 1;
        }
        // Zero-size records are skipped; none of these traces has many.
        assert!(
            n <= records && n + 5 >= records,
            "{file}: {n} records, expected {records}"
        );
    }
}

#[test]
#[ignore = "needs ../shared/traces"]
fn a_trace_maps_inside_the_device_both_ways() {
    let dir = traces();
    let path = dir.join("tencent_cbs_sample.csv.bz2");
    let target = Target {
        logical_pages: 10_000,
        page_bytes: 4096,
    };
    let span = workload::scan_trace_span(&path, TraceFormat::Tencent).unwrap();
    for mapping in [LbaMapping::Wrap, LbaMapping::Scale { max_byte: span }] {
        let opts = WorkloadOptions {
            trace_format: Some(TraceFormat::Tencent),
            mapping,
            ..Default::default()
        };
        let spec = WorkloadSpec::parse(&format!("trace:{}", path.display())).unwrap();
        let mut writes = 0;
        for r in build(&spec, target, &opts).unwrap() {
            let r = r.unwrap();
            assert!(r.pages >= 1 && r.lpn + r.pages as u64 <= 10_000, "{r:?}");
            writes += (r.op == OpKind::Write) as u32;
        }
        assert!(writes > 0);
    }
}

#[test]
fn a_compressed_trace_with_a_bad_line_names_file_and_line() {
    use std::io::Write;
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("t.csv.gz");
    let mut gz = flate2::write::GzEncoder::new(
        std::fs::File::create(&path).unwrap(),
        flate2::Compression::fast(),
    );
    gz.write_all(b"1538323200,4247200,128,1,1058\n1538323200,42x7200,128,1,1058\n")
        .unwrap();
    gz.finish().unwrap();
    let errs: Vec<String> = Records::open(&path, TraceFormat::Tencent)
        .unwrap()
        .filter_map(|r| r.err().map(|e| e.to_string()))
        .collect();
    assert_eq!(errs.len(), 1);
    assert!(
        errs[0].contains("t.csv.gz:2") && errs[0].contains("offset"),
        "{}",
        errs[0]
    );
}
