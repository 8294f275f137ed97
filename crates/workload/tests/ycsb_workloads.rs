//! YCSB workloads: proportions, key skew, determinism, and the request-log reader.

use proptest::prelude::*;
use std::collections::{HashMap, HashSet};
use std::io::Write;
use std::path::Path;
use workload::ycsb::{
    self, fnv_hash64, key_name, parse_log_line, CoreWorkload, KeyDistribution, LogReader,
    YcsbConfig, YcsbOp, YcsbOpKind,
};
use workload::WorkloadError;

fn cfg(workload: CoreWorkload, records: u64, operations: u64) -> YcsbConfig {
    YcsbConfig {
        workload,
        records,
        operations,
        seed: 7,
        ..YcsbConfig::default()
    }
}

fn kind_counts(ops: &[YcsbOp]) -> HashMap<YcsbOpKind, usize> {
    let mut counts = HashMap::new();
    for op in ops {
        *counts.entry(op.kind()).or_insert(0) += 1;
    }
    counts
}

#[test]
fn every_workload_keeps_ycsb_proportions_within_one_percent() {
    let n = 50_000;
    for w in CoreWorkload::ALL {
        let ops: Vec<YcsbOp> = ycsb::run(&cfg(w, 2_000, n)).unwrap().collect();
        assert_eq!(ops.len() as u64, n);
        let counts = kind_counts(&ops);
        for kind in YcsbOpKind::ALL {
            let got = *counts.get(&kind).unwrap_or(&0) as f64 / n as f64;
            let want = w.mix().share(kind);
            assert!(
                (got - want).abs() < 0.01,
                "workload {}: {kind:?} share {got:.4}, YCSB {want}",
                w.name()
            );
        }
    }
}

#[test]
fn the_standard_mixes_are_ycsbs() {
    let a = CoreWorkload::A.mix();
    assert_eq!((a.read, a.update), (0.5, 0.5));
    let e = CoreWorkload::E.mix();
    assert_eq!((e.scan, e.insert), (0.95, 0.05));
    assert_eq!(CoreWorkload::D.distribution(), KeyDistribution::Latest);
    assert_eq!(
        CoreWorkload::UpdateOnly.mix().share(YcsbOpKind::Update),
        1.0
    );
    for w in CoreWorkload::ALL {
        assert_eq!(CoreWorkload::parse(w.name()), Some(w));
    }
}

/// Share of the most frequent key and of the ten most frequent keys among `ops`.
fn top_shares(ops: &[YcsbOp]) -> (f64, f64) {
    let mut counts: HashMap<u64, usize> = HashMap::new();
    for op in ops {
        *counts.entry(op.key()).or_insert(0) += 1;
    }
    let mut c: Vec<usize> = counts.into_values().collect();
    c.sort_unstable_by(|a, b| b.cmp(a));
    let n = ops.len() as f64;
    (c[0] as f64 / n, c.iter().take(10).sum::<usize>() as f64 / n)
}

#[test]
fn scrambled_zipfian_is_skewed_as_ycsbs_and_uniform_is_not() {
    let zipf: Vec<YcsbOp> = ycsb::run(&cfg(CoreWorkload::C, 1_000, 200_000))
        .unwrap()
        .collect();
    let (top1, top10) = top_shares(&zipf);
    // Rank 0 has 1 / zeta(10^10, 0.99) = 3.78 % of draws; ranks 0..10, 11 % (plus hash
    // collisions of the other ranks, about 0.1 % per key here).
    assert!((0.033..0.045).contains(&top1), "top key share {top1}");
    assert!((0.10..0.14).contains(&top10), "top 10 keys share {top10}");
    let uniform = YcsbConfig {
        distribution: Some(KeyDistribution::Uniform),
        ..cfg(CoreWorkload::C, 1_000, 200_000)
    };
    let (u1, _) = top_shares(&ycsb::run(&uniform).unwrap().collect::<Vec<_>>());
    assert!(u1 < 0.0015, "uniform top key share {u1}");
}

#[test]
fn zipfian_reads_only_keys_that_exist() {
    let c = cfg(CoreWorkload::E, 500, 20_000);
    let mut existing: HashSet<u64> = ycsb::load(&c).unwrap().map(|op| op.key()).collect();
    for op in ycsb::run(&c).unwrap() {
        match op {
            YcsbOp::Insert { key, .. } => assert!(existing.insert(key), "insert of {key} twice"),
            other => assert!(existing.contains(&other.key()), "{other} names no key"),
        }
    }
}

#[test]
fn latest_prefers_the_newest_keys() {
    let c = YcsbConfig {
        ordered_inserts: true,
        ..cfg(CoreWorkload::D, 1_000, 40_000)
    };
    let (mut keys, mut reads, mut recent) = (c.records, 0u64, 0u64);
    for op in ycsb::run(&c).unwrap() {
        match op {
            YcsbOp::Insert { key, .. } => {
                assert_eq!(key, keys, "ordered inserts extend the key range");
                keys += 1;
            }
            YcsbOp::Read { key } => {
                assert!(key < keys);
                reads += 1;
                recent += u64::from(key + 10 >= keys);
            }
            other => panic!("workload D has no {other}"),
        }
    }
    // The ten newest of >= 1,000 keys get 1/zeta(n) + ... ~ 30 % of reads (uniform: 1 %).
    let share = recent as f64 / reads as f64;
    assert!(share > 0.25, "reads of the 10 newest keys: {share}");
}

#[test]
fn the_same_seed_gives_the_same_operations_and_another_seed_does_not() {
    for w in CoreWorkload::ALL {
        let c = cfg(w, 300, 2_000);
        let a: Vec<YcsbOp> = ycsb::run(&c).unwrap().collect();
        let b: Vec<YcsbOp> = ycsb::run(&c).unwrap().collect();
        assert_eq!(a, b, "workload {}", w.name());
        let other: Vec<YcsbOp> = ycsb::run(&YcsbConfig { seed: 8, ..c }).unwrap().collect();
        assert_ne!(a, other, "workload {}", w.name());
    }
}

#[test]
fn load_inserts_every_record_once_under_its_hashed_name() {
    let c = cfg(CoreWorkload::A, 10_000, 0);
    let keys: Vec<u64> = ycsb::load(&c).unwrap().map(|op| op.key()).collect();
    assert_eq!(keys.len(), 10_000);
    assert_eq!(keys.iter().collect::<HashSet<_>>().len(), 10_000);
    assert_eq!(keys[5], fnv_hash64(5));
    assert!(ycsb::run(&c).unwrap().next().is_none(), "zero operations");
}

#[test]
fn fnv_hash_and_key_names_match_ycsb() {
    // FNV-1a of 8 zero bytes; YCSB takes Math.abs of the signed value.
    let mut h: u64 = 0xCBF2_9CE4_8422_2325;
    for _ in 0..8 {
        h = h.wrapping_mul(1_099_511_628_211);
    }
    assert_eq!(fnv_hash64(0), (h as i64).unsigned_abs());
    assert!(fnv_hash64(12345) < 1 << 63);
    assert_eq!(key_name(42, 0), "user42");
    assert_eq!(key_name(42, 10), "user000042");
    assert_eq!(key_name(123_456, 5), "user123456");
}

#[test]
fn bad_configs_are_errors_naming_the_field() {
    for bad in [
        YcsbConfig {
            records: 0,
            ..YcsbConfig::default()
        },
        YcsbConfig {
            key_bytes: 3,
            ..YcsbConfig::default()
        },
        YcsbConfig {
            max_scan_length: 0,
            ..YcsbConfig::default()
        },
    ] {
        let e = ycsb::run(&bad).err().expect("rejected");
        assert!(matches!(e, WorkloadError::Spec { .. }), "{e}");
    }
}

fn read_log(text: &str, value_bytes: u32) -> Vec<Result<YcsbOp, WorkloadError>> {
    let input = Box::new(std::io::Cursor::new(text.as_bytes().to_vec()));
    LogReader::new(Path::new("requests.log"), input, value_bytes).collect()
}

#[test]
fn log_lines_as_basicdb_prints_them_are_read() {
    let text = "READ usertable user6284781860667377211 [ <all fields>]\n\
                \n# a comment\n[OVERALL], RunTime(ms), 10\n\
                UPDATE usertable user1 [ field0=abc ]\n\
                SCAN usertable user2 17 [ <all fields>]\n\
                INSERT usertable user3 [ field0=x field1=y ]\n\
                READMODIFYWRITE usertable user4\n";
    let ops: Vec<YcsbOp> = read_log(text, 100)
        .into_iter()
        .map(Result::unwrap)
        .collect();
    assert_eq!(
        ops,
        [
            YcsbOp::Read {
                key: 6284781860667377211
            },
            YcsbOp::Update {
                key: 1,
                value_bytes: 100
            },
            YcsbOp::Scan {
                key: 2,
                records: 17
            },
            YcsbOp::Insert {
                key: 3,
                value_bytes: 100
            },
            YcsbOp::ReadModifyWrite {
                key: 4,
                value_bytes: 100
            },
        ]
    );
}

#[test]
fn malformed_log_lines_name_file_line_and_field() {
    for (line, field) in [
        ("DELETE usertable user1", "field 1 (operation)"),
        ("READ", "field 2 (table)"),
        ("READ usertable", "field 3 (key)"),
        ("READ usertable bob", "field 3 (key) `bob`"),
        ("READ usertable user", "field 3 (key)"),
        ("READ usertable user-1", "field 3 (key)"),
        ("READ usertable user99999999999999999999", "field 3 (key)"),
        ("SCAN usertable user1", "field 4 (scan record count)"),
        ("SCAN usertable user1 0", "field 4 (scan record count) `0`"),
        ("SCAN usertable user1 x", "field 4 (scan record count) `x`"),
    ] {
        let text = format!("READ usertable user1\n{line}\nREAD usertable user2\n");
        let got = read_log(&text, 8);
        assert_eq!(got.len(), 2, "stops at the first error: {line}");
        match &got[1] {
            Err(
                e @ WorkloadError::Parse {
                    path,
                    line: 2,
                    reason,
                },
            ) => {
                assert_eq!(path, Path::new("requests.log"));
                assert!(reason.starts_with(field), "{line}: {reason}");
                assert!(e.to_string().starts_with("requests.log:2: "), "{e}");
            }
            other => panic!("{line}: {other:?}"),
        }
    }
}

#[test]
fn a_log_file_on_disk_is_streamed_and_non_utf8_is_an_error() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("ycsb.log");
    let mut f = std::fs::File::create(&path).unwrap();
    f.write_all(b"READ usertable user1\nUPDATE usertable user\xff\n")
        .unwrap();
    drop(f);
    let got: Vec<_> = LogReader::open(&path, 10).unwrap().collect();
    assert!(matches!(got[0], Ok(YcsbOp::Read { key: 1 })));
    assert!(matches!(&got[1], Err(WorkloadError::Parse { line: 2, .. })));
    assert!(LogReader::open(&dir.path().join("missing.log"), 10).is_err());
}

fn any_op() -> impl Strategy<Value = YcsbOp> {
    let key = any::<u64>();
    prop_oneof![
        key.prop_map(|key| YcsbOp::Read { key }),
        key.prop_map(|key| YcsbOp::Update {
            key,
            value_bytes: 33
        }),
        key.prop_map(|key| YcsbOp::Insert {
            key,
            value_bytes: 33
        }),
        key.prop_map(|key| YcsbOp::ReadModifyWrite {
            key,
            value_bytes: 33
        }),
        (key, 1u32..).prop_map(|(key, records)| YcsbOp::Scan { key, records }),
    ]
}

proptest! {
    #[test]
    fn written_logs_read_back_as_the_same_operations(ops in proptest::collection::vec(any_op(), 0..50)) {
        let text: String = ops.iter().map(|op| format!("{op}\n")).collect();
        let back: Vec<YcsbOp> = read_log(&text, 33).into_iter().map(Result::unwrap).collect();
        prop_assert_eq!(back, ops);
    }

    #[test]
    fn arbitrary_text_is_read_or_rejected_never_a_panic(text in "(?s).{0,400}") {
        let lines = text.split('\n').count() as u64;
        for r in read_log(&text, 1) {
            if let Err(WorkloadError::Parse { line, reason, .. }) = r {
                prop_assert!(line >= 1 && line <= lines);
                prop_assert!(reason.starts_with("field "), "{}", reason);
            }
        }
        for line in text.lines() {
            let _ = parse_log_line(line, 1);
        }
    }

    #[test]
    fn arbitrary_operation_like_lines_never_panic(
        word in "(READ|UPDATE|INSERT|SCAN|READMODIFYWRITE|X)",
        rest in "[ a-z0-9\\-\\[\\]=]{0,40}",
    ) {
        let _ = parse_log_line(&format!("{word} {rest}"), 1);
    }
}
