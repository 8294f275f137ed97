//! `flashlab kv` end to end: load/run JSON with the documented keys, get/put/scan, stat,
//! check (clean: 0; a flipped byte: 1 with its offset), the simulated device, and a load
//! killed with SIGKILL at a random moment leaving a clean store with every committed key.

use serde_json::Value;
use std::process::{Command, Stdio};

mod common;
use common::{flashlab, json, path_str as s, stderr};

#[test]
fn load_run_stat_check_get_put_scan_on_a_file() {
    let dir = tempfile::tempdir().unwrap();
    let db = s(&dir.path().join("kv.db"));
    let common = [
        "--path",
        &db,
        "--records",
        "2000",
        "--value-bytes",
        "200",
        "--commit-every",
        "100",
        "--file-mib",
        "32",
        "--json",
    ];
    let load = json(&flashlab(&[&["kv", "load"][..], &common].concat()));
    // --ops is a run's: a load refuses it rather than ignore it.
    let o = flashlab(&[&["kv", "load", "--ops", "5"][..], &common].concat());
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(
        stderr(&o).contains("--ops applies to `kv run`"),
        "{}",
        stderr(&o)
    );
    assert_eq!(load["ops"], 2000);
    assert!(load["device_bytes_written"].as_u64().unwrap() > 2000 * 200);
    assert_eq!(load["store"]["live_keys"], 2000);
    for w in ["a", "c", "e", "update"] {
        let run = json(&flashlab(
            &[
                &["kv", "run", "--workload", w, "--ops", "2000"][..],
                &common,
            ]
            .concat(),
        ));
        assert_eq!(run["phase"], "run");
        assert_eq!(run["ops"], 2000, "{w}");
        assert!(run["ops_per_second"].as_f64().unwrap() > 0.0);
        for q in ["p50", "p99", "p999"] {
            assert!(run["latency_us"][q].as_f64().is_some(), "{w} {q}");
        }
        assert!(run["device_bytes_written"].is_u64());
        if w == "c" {
            assert_eq!(run["reads_found"], 2000, "every read finds its record");
        }
    }
    let st = json(&flashlab(&["kv", "stat", "--path", &db, "--json"]));
    assert!(st["live_keys"].as_u64().unwrap() >= 2000);
    for k in ["live_bytes", "stale_bytes", "headers", "last_commit_seq"] {
        assert!(st[k].is_u64(), "{k}");
    }
    assert!(st["pages_in_use"]["data"].as_u64().unwrap() > 0);
    let ok = flashlab(&["kv", "check", "--path", &db]);
    assert_eq!(
        ok.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&ok.stdout)
    );

    let put = flashlab(&["kv", "put", "--path", &db, "hello", "world"]);
    assert!(put.status.success());
    let got = flashlab(&["kv", "get", "--path", &db, "hello"]);
    assert_eq!(String::from_utf8_lossy(&got.stdout).trim(), "world");
    let scan = flashlab(&[
        "kv", "scan", "--path", &db, "--from", "hello", "--limit", "1",
    ]);
    assert!(String::from_utf8_lossy(&scan.stdout).starts_with("hello\tworld"));
    let missing = flashlab(&["kv", "get", "--path", &db, "nope"]);
    assert_eq!(missing.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&missing.stderr).contains("not found"));
}

#[test]
fn check_reports_a_flipped_byte_with_its_offset_and_changes_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("kv.db");
    let out = flashlab(&[
        "kv",
        "load",
        "--path",
        &s(&db),
        "--records",
        "500",
        "--value-bytes",
        "100",
        "--file-mib",
        "8",
        "--json",
    ]);
    json(&out);
    let mut bytes = std::fs::read(&db).unwrap();
    // The first data page (kind byte 0x13 at offset 4 of its page).
    let page = (0..bytes.len() / 4096)
        .find(|p| bytes[p * 4096 + 4] == 0x13)
        .unwrap();
    bytes[page * 4096 + 500] ^= 0x20;
    std::fs::write(&db, &bytes).unwrap();
    let out = flashlab(&["kv", "check", "--path", &s(&db), "--json"]);
    assert_eq!(out.status.code(), Some(1));
    let j: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(j["clean"], false);
    let offsets: Vec<u64> = j["damage"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|d| d["offset"].as_u64())
        .collect();
    assert!(offsets.iter().any(|o| o / 4096 == page as u64), "{j}");
    assert_eq!(std::fs::read(&db).unwrap(), bytes, "check changed the file");
}

#[test]
fn run_on_the_simulated_ssd_and_bad_flags_are_named() {
    let out = flashlab(&[
        "kv",
        "run",
        "--device",
        "sim",
        "--records",
        "500",
        "--ops",
        "500",
        "--workload",
        "b",
        "--json",
    ]);
    let j = json(&out);
    assert_eq!(j["clock"], "simulated");
    assert_eq!(j["ops"], 500);
    assert_eq!(j["load"]["ops"], 500);
    let bad = flashlab(&["kv", "run", "--device", "sim", "--workload", "z"]);
    assert_eq!(bad.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&bad.stderr).contains("--workload z"));
}

#[test]
fn a_load_killed_with_sigkill_leaves_a_clean_store_with_every_committed_key() {
    let dir = tempfile::tempdir().unwrap();
    // Kill moments spread over the load (a fixed draw: the test replays).
    for (round, ms) in [170u64, 430, 880].into_iter().enumerate() {
        let db = dir.path().join(format!("kill{round}.db"));
        let mut child = Command::new(env!("CARGO_BIN_EXE_flashlab"))
            .args([
                "kv",
                "load",
                "--path",
                &s(&db),
                "--records",
                "200000",
                "--value-bytes",
                "300",
                "--commit-every",
                "500",
                "--file-mib",
                "256",
                "--quiet",
            ])
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        std::thread::sleep(std::time::Duration::from_millis(ms));
        // SAFETY: plain kill(2) of our own child.
        unsafe { libc::kill(child.id() as i32, libc::SIGKILL) };
        child.wait().unwrap();
        if !db.exists() {
            continue;
        }
        let check = flashlab(&["kv", "check", "--path", &s(&db)]);
        assert_eq!(
            check.status.code(),
            Some(0),
            "{}{}",
            String::from_utf8_lossy(&check.stdout),
            String::from_utf8_lossy(&check.stderr)
        );
        let st = json(&flashlab(&["kv", "stat", "--path", &s(&db), "--json"]));
        let live = st["live_keys"].as_u64().unwrap();
        assert!(
            live.is_multiple_of(500) || live == 200_000,
            "a commit is whole: {live}"
        );
        // Every key of the committed prefix is there.
        let cfg = workload::ycsb::YcsbConfig::default();
        for n in [0, live / 2, live.saturating_sub(1)] {
            if live == 0 {
                break;
            }
            let key = workload::ycsb::key_name(cfg.key_of(n), 0);
            let got = flashlab(&["kv", "get", "--path", &s(&db), &key]);
            assert!(got.status.success(), "key {n} of {live} missing");
        }
    }
}
