//! `flashlab capture pg-tpcc` end to end on a tiny run (one warehouse, 6 s of TPC-C): the
//! trace it writes reads back through the workload reader with the counts of its header and
//! every kind of record present. Needs root, PostgreSQL, bpftrace, kernel uprobes and the user
//! `flashlab` (scripts/setup-pg); where one is missing it prints why and passes as skipped.

use lab::capture::{self, CaptureOptions};
use std::path::Path;
use workload::cache_trace::{PageRefs, PageTraceFormat};
use workload::pg_trace::read_header;

fn missing() -> Option<String> {
    let found = |c: &str| {
        std::process::Command::new("sh")
            .args(["-c", &format!("command -v {c}")])
            .output()
            .is_ok_and(|o| o.status.success())
    };
    // SAFETY: geteuid has no preconditions.
    if unsafe { libc::geteuid() } != 0 {
        return Some("not root (the probes need root)".into());
    }
    for tool in ["pg_config", "bpftrace", "runuser"] {
        if !found(tool) {
            return Some(format!("{tool} is not installed (scripts/setup-pg)"));
        }
    }
    let user = std::process::Command::new("id")
        .args(["-u", "flashlab"])
        .output();
    if !user.is_ok_and(|o| o.status.success()) {
        return Some("no user flashlab (scripts/setup-pg)".into());
    }
    if !Path::new("/sys/kernel/btf").exists() && !Path::new("/proc/kallsyms").exists() {
        return Some("no kernel tracing support".into());
    }
    None
}

#[test]
fn a_tiny_capture_reads_back_with_its_header_counts() {
    if let Some(why) = missing() {
        eprintln!("SKIPPED a_tiny_capture_reads_back_with_its_header_counts: {why}");
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("t.zst");
    let o = CaptureOptions {
        warehouses: 1,
        minutes: 0.1,
        terminals: 2,
        seed: 7,
        shared_buffers_mib: 32,
        out: Some(out.clone()),
        pg_bin: None,
        pg_user: "flashlab".into(),
        port: 54377,
        probe_method: None,
    };
    let s = capture::run(&o, &mut |m| eprintln!("{m}")).unwrap();
    assert!(
        s.transactions > 0 && s.references > 0 && s.wal_inserts > 0,
        "{s:?}"
    );
    let h = read_header(&out).unwrap();
    assert_eq!(h.get("warehouses"), Some("1"));
    assert_eq!(h.get("references"), Some(s.references.to_string().as_str()));
    let (mut refs, mut dirty) = (0u64, 0u64);
    for r in PageRefs::open(&out, PageTraceFormat::Pg, 8192).unwrap() {
        let r = r.unwrap();
        refs += 1;
        dirty += r.write as u64;
    }
    assert_eq!((refs, dirty), (s.references, s.dirty_references));
    assert!(dirty > 0 && dirty < refs);
}
