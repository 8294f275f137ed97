//! Issue 9's CLI items, one regression test each: what a researcher expects of the command
//! line (quiet broken pipes, refused no-op options, defaults from the preset, the whole config
//! in the JSON, progress off a terminal, Ctrl-C cleanup, JSON/CSV/--output), and inputs that
//! used to print misleading figures with exit status 0.

use serde_json::Value;
use std::io::Write;
use std::process::{Command, Stdio};

mod common;
use common::{flashlab, stderr};
use std::time::{Duration, Instant};

/// The run fails with exit status 2, an error mentioning every `needle`, and no panic.
fn refused(args: &[&str], needles: &[&str]) -> String {
    let o = flashlab(args);
    let err = stderr(&o);
    assert_eq!(
        o.status.code(),
        Some(2),
        "{args:?} should be refused: {err}"
    );
    for n in needles {
        assert!(
            err.contains(n),
            "{args:?}: error should mention `{n}`: {err}"
        );
    }
    assert!(!err.contains("panicked"), "{err}");
    err
}

/// A small, fast `sim --json` run (timing off, fill only) plus `extra`.
fn sim_json(extra: &[&str]) -> Value {
    let mut args = vec![
        "sim",
        "--capacity",
        "256MiB",
        "--op",
        "0.25",
        "--timing",
        "off",
        "--precondition",
        "fill",
        "--json",
        "--quiet",
    ];
    args.extend_from_slice(extra);
    let o = flashlab(&args);
    assert!(o.status.success(), "{args:?}: {}", stderr(&o));
    serde_json::from_slice(&o.stdout).expect("one JSON object")
}

#[test]
fn a_closed_pipe_ends_every_subcommand_quietly() {
    use std::os::unix::process::ExitStatusExt;
    for args in [
        vec!["presets"],
        vec!["presets", "--show", "mlc-sata-2010"],
        vec!["reproduce"],
        vec!["ftl-memory"],
        vec!["sim", "--help"],
    ] {
        let mut child = Command::new(env!("CARGO_BIN_EXE_flashlab"))
            .args(&args)
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        drop(child.stdout.take()); // the reader goes away before the first line (`| head -0`)
        let o = child.wait_with_output().unwrap();
        let err = stderr(&o);
        assert!(
            !err.contains("panicked") && !err.contains("Broken pipe"),
            "{args:?}: {err}"
        );
        assert!(
            // Killed by SIGPIPE, or (after removing its temporary files) exit 128 + SIGPIPE.
            o.status.success()
                || o.status.signal() == Some(libc::SIGPIPE)
                || o.status.code() == Some(128 + libc::SIGPIPE),
            "{args:?}: {:?}",
            o.status
        );
    }
}

#[test]
fn a_zero_write_volume_is_refused() {
    refused(
        &["sim", "--write-volume", "0x"],
        &["--write-volume", "zero"],
    );
    refused(&["sim", "--write-volume", "0"], &["--write-volume"]);
}

#[test]
fn waf_is_null_with_a_note_when_no_host_page_was_written() {
    let v = sim_json(&["--workload", "uniform-read", "--write-volume", "0.05x"]);
    assert_eq!(v["host_pages_written"], 0);
    assert!(v["waf"].is_null(), "{}", v["waf"]);
    let notes = v["notes"].as_array().unwrap();
    assert!(
        notes.iter().any(|n| n.as_str().unwrap().contains("WAF")),
        "{notes:?}"
    );
    let w = sim_json(&["--write-volume", "0.05x"]);
    assert!(w["waf"].as_f64().unwrap() >= 1.0);
}

#[test]
fn a_trace_on_a_pipe_is_refused_for_scale_mapping() {
    let mut child = Command::new(env!("CARGO_BIN_EXE_flashlab"))
        .args([
            "sim",
            "--capacity",
            "256MiB",
            "--op",
            "0.25",
            "--workload",
            "trace:/dev/stdin",
            "--trace-format",
            "spc",
            "--trace-mapping",
            "scale",
            "--quiet",
        ])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    let _ = stdin.write_all(b"0,0,4096,W,0.1\n0,8192,4096,W,0.2\n");
    drop(stdin);
    let o = child.wait_with_output().unwrap();
    let err = stderr(&o);
    assert_eq!(o.status.code(), Some(2), "{err}");
    assert!(
        err.contains("not a regular file") && err.contains("wrap"),
        "{err}"
    );
}

#[test]
fn a_write_volume_beyond_the_trace_says_it_was_not_reached() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("short.spc");
    std::fs::write(&path, "0,0,4096,W,0.1\n0,8192,4096,W,0.2\n").unwrap();
    let w = format!("trace:{}", path.display());
    let v = sim_json(&[
        "--workload",
        &w,
        "--trace-format",
        "spc",
        "--write-volume",
        "0.5x",
    ]);
    assert_eq!(v["volume_reached"], false, "{v}");
    assert!(v["notes"].to_string().contains("not reached"));
    let v = sim_json(&["--write-volume", "0.05x"]);
    assert_eq!(v["volume_reached"], true);
    assert!(sim_json(&[])["volume_reached"].is_null());
}

#[test]
fn file_timings_on_a_ram_file_system_are_refused_unless_allowed() {
    let shm = std::path::Path::new("/dev/shm");
    if lab::devices::file_system(shm).map_or(true, |fs| !lab::devices::is_memory_fs(&fs)) {
        eprintln!("skipping: /dev/shm is not a RAM file system here");
        return;
    }
    let err = refused(
        &[
            "reproduce",
            "as-btree",
            "--device",
            "file",
            "--dir",
            "/dev/shm",
            "--quiet",
        ],
        &["tmpfs", "--allow-memory-fs"],
    );
    assert!(!err.contains("panicked"));
}

#[test]
fn options_that_would_be_ignored_are_refused() {
    for flag in [
        ["--device", "sim"],
        ["--preset", "mlc-sata-2010"],
        ["--dir", "."],
    ] {
        refused(
            &["reproduce", "ioa-ftl", flag[0], flag[1]],
            &[flag[0], "ioa-ftl"],
        );
    }
    refused(
        &["sim", "--config", "x.toml", "--preset", "mlc-sata-2010"],
        &["--preset"],
    );
    refused(
        &["sim", "--trace-format", "msr"],
        &["--trace-format", "trace:PATH"],
    );
    refused(&["sim", "--trace-timing"], &["--trace-timing"]);
    refused(&["sim", "--trace-mapping", "scale"], &["--trace-mapping"]);
    refused(&["sim", "--payloads"], &["--payloads"]);
}

#[test]
fn ftl_memory_refuses_impossible_geometry() {
    refused(
        &["ftl-memory", "--pages-per-block", "0"],
        &["--pages-per-block"],
    );
    refused(&["ftl-memory", "--page-size", "100"], &["--page-size"]);
    refused(&["ftl-memory", "--capacity", "1KiB"], &["--capacity"]);
}

#[test]
fn request_size_defaults_to_the_presets_page() {
    let o = flashlab(&[
        "sim",
        "--preset",
        "tlc-nvme-2024",
        "--timing",
        "off",
        "--precondition",
        "none",
        "--write-volume",
        "0.001x",
        "--json",
        "--quiet",
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let v: Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(v["setup"]["request_bytes"], v["page_bytes"]);
    assert_eq!(v["page_bytes"], 16384);
}

#[test]
fn help_shows_every_default() {
    let o = flashlab(&["sim", "--help"]);
    let help = String::from_utf8(o.stdout).unwrap();
    // Each option's paragraph, from its `--name` line to the next option.
    let mut missing = Vec::new();
    for block in help.split("\n  -").skip(1) {
        let first = block.lines().next().unwrap_or_default();
        let takes_value = first.contains('<');
        let name = first
            .split_whitespace()
            .find(|w| w.starts_with("-"))
            .unwrap_or(first);
        let exempt = [
            "--config",
            "--output",
            "--trace-format",
            "--help",
            "--version",
        ]
        .iter()
        .any(|e| first.contains(e));
        if takes_value && !exempt && !block.contains("[default") {
            missing.push(name.to_string());
        }
    }
    assert!(
        missing.is_empty(),
        "options without a shown default: {missing:?}\n{help}"
    );
}

#[test]
fn the_sim_json_records_its_whole_configuration_and_hash() {
    let a = sim_json(&["--write-volume", "0.05x"]);
    for k in ["config", "setup", "config_hash", "base_preset"] {
        assert!(!a[k].is_null(), "{k} missing: {a}");
    }
    assert_eq!(a["preset"], "custom", "--capacity and --op edit the preset");
    assert_eq!(a["base_preset"], "mlc-sata-2010");
    assert_eq!(a["config"]["ftl"]["op"], 0.25);
    assert_eq!(a["setup"]["precondition"], "fill");
    let b = sim_json(&["--write-volume", "0.05x"]);
    assert_eq!(a["config_hash"], b["config_hash"]);
    let c = sim_json(&["--write-volume", "0.05x", "--seed", "2"]);
    assert_ne!(a["config_hash"], c["config_hash"]);
    // An unedited preset keeps its name.
    let o = flashlab(&[
        "sim",
        "--preset",
        "jasmine-openssd",
        "--precondition",
        "none",
        "--write-volume",
        "0.0005x",
        "--json",
        "--quiet",
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let v: Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(v["preset"], "jasmine-openssd");
}

#[test]
fn progress_is_printed_when_stderr_is_not_a_terminal() {
    let o = flashlab(&[
        "sim",
        "--capacity",
        "256MiB",
        "--op",
        "0.25",
        "--timing",
        "off",
        "--precondition",
        "fill",
        "--write-volume",
        "0.5x",
    ]);
    assert!(o.status.success());
    let err = stderr(&o);
    assert!(
        err.contains("precondition:") && err.contains("measure:"),
        "{err}"
    );
    assert!(err.contains("ETA"), "{err}");
}

#[test]
fn ctrl_c_removes_the_temporary_device_files() {
    let dir = tempfile::tempdir_in(env!("CARGO_MANIFEST_DIR")).unwrap();
    let child = Command::new(env!("CARGO_BIN_EXE_flashlab"))
        .args([
            "reproduce",
            "as-btree",
            "--device",
            "file",
            "--quiet",
            "--dir",
        ])
        .arg(dir.path())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    // Wait for the run's temporary directory and its first device file.
    let start = Instant::now();
    let has_device_file = || {
        std::fs::read_dir(dir.path())
            .unwrap()
            .flatten()
            .any(|d| std::fs::read_dir(d.path()).is_ok_and(|mut files| files.next().is_some()))
    };
    while !has_device_file() {
        assert!(
            start.elapsed() < Duration::from_secs(20),
            "no device file appeared"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
    // SAFETY: plain kill(2) of our own child.
    unsafe { libc::kill(child.id() as i32, libc::SIGINT) };
    let o = child.wait_with_output().unwrap();
    assert_eq!(o.status.code(), Some(130), "{}", stderr(&o));
    let left: Vec<_> = std::fs::read_dir(dir.path()).unwrap().flatten().collect();
    assert!(left.is_empty(), "left behind: {left:?}");
}

#[test]
fn reproduce_lists_experiments_as_json() {
    let o = flashlab(&["reproduce", "--json"]);
    let v: Value = serde_json::from_slice(&o.stdout).expect("JSON");
    let names: Vec<&str> = v["experiments"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e["name"].as_str().unwrap())
        .collect();
    assert!(
        names.contains(&"ioa-ftl") && names.contains(&"as-btree"),
        "{names:?}"
    );
    assert_eq!(v["experiments"][0]["devices"], serde_json::json!([]));
}

#[test]
fn tables_go_to_a_file_and_to_csv() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("mem.csv");
    let o = Command::new(env!("CARGO_BIN_EXE_flashlab"))
        .args(["ftl-memory", "--capacity", "4GiB", "--csv", "--output"])
        .arg(&out)
        .output()
        .unwrap();
    assert!(o.status.success() && o.stdout.is_empty(), "{}", stderr(&o));
    let csv = std::fs::read_to_string(&out).unwrap();
    let mut lines = csv.lines();
    assert_eq!(lines.next(), Some("mapping_bytes,scheme"));
    assert_eq!(lines.count(), 6, "{csv}");
    let listing = dir.path().join("list.txt");
    let o = Command::new(env!("CARGO_BIN_EXE_flashlab"))
        .args(["reproduce", "--output"])
        .arg(&listing)
        .output()
        .unwrap();
    assert!(o.status.success());
    assert!(std::fs::read_to_string(&listing)
        .unwrap()
        .contains("as-btree"));
}

#[test]
fn an_unknown_trace_format_lists_the_valid_ones() {
    refused(
        &["sim", "--workload", "trace:x", "--trace-format", "foo"],
        &["foo", "msr", "spc", "blkparse"],
    );
}

#[test]
fn the_os_error_is_printed_once() {
    let err = refused(
        &["sim", "--config", "/nonexistent/ssd.toml"],
        &["/nonexistent/ssd.toml"],
    );
    assert_eq!(err.matches("No such file or directory").count(), 1, "{err}");
}

/// A `--config` file: `mlc-sata-2010`'s TOML with `field = value` replaced.
fn config_with(dir: &std::path::Path, field: &str, value: &str) -> String {
    let o = flashlab(&["presets", "--show", "mlc-sata-2010"]);
    let toml = String::from_utf8(o.stdout).unwrap();
    let prefix = format!("{field} = ");
    assert!(toml.lines().any(|l| l.starts_with(&prefix)), "{field}");
    let edited: Vec<String> = toml
        .lines()
        .map(|l| match l.starts_with(&prefix) {
            true => format!("{prefix}{value}"),
            false => l.to_string(),
        })
        .collect();
    let path = dir.join(format!("{field}.toml"));
    std::fs::write(&path, edited.join("\n")).unwrap();
    path.display().to_string()
}

#[test]
fn a_device_larger_than_the_memory_limit_is_refused_before_allocating() {
    let dir = tempfile::tempdir().unwrap();
    // 4 000 000 blocks per plane: about 62 GiB of tables, above any default limit here.
    let big = config_with(dir.path(), "blocks_per_plane", "4000000");
    let err = refused(
        &["sim", "--config", &big, "--quiet"],
        &["--max-memory", "GiB", "blocks_per_plane"],
    );
    assert!(err.contains("needs about"), "{err}");
    // Under an explicit limit, an ordinary device is refused too, with both figures.
    refused(
        &[
            "sim",
            "--capacity",
            "256MiB",
            "--max-memory",
            "512KiB",
            "--quiet",
        ],
        // sim keeps no page tags (data = "none"): maps, block records and bitmaps only.
        &[
            "needs about 702.4 KiB",
            "limit is 512.0 KiB",
            "from --max-memory",
        ],
    );
    refused(&["sim", "--max-memory", "0", "--quiet"], &["--max-memory"]);
    // Queue depths of 2^32 - 1 (34 GB of queue) are refused by name, from a file or a flag.
    let deep = config_with(dir.path(), "host_queue_depth", "4294967295");
    refused(
        &["sim", "--config", &deep, "--quiet"],
        &["host_queue_depth", "4294967295"],
    );
    refused(
        &["sim", "--queue-depth", "4294967295", "--quiet"],
        &["host_queue_depth", "4294967295"],
    );
}

#[test]
fn the_memory_estimate_is_in_the_json_and_the_limit_in_help() {
    let v = sim_json(&[]);
    let estimate = v["memory_bytes_estimate"].as_u64().unwrap();
    // 256 MiB of 4 KiB pages: at least 3 B of L2P (packed below 2^24 pages) and 8 B of tag
    // per page.
    assert!(estimate > 65_536 * 11 && estimate < 64 << 20, "{estimate}");
    let help = String::from_utf8(flashlab(&["sim", "--help"]).stdout).unwrap();
    assert!(help.contains("--max-memory") && help.contains("half of physical RAM"));
}

#[test]
fn trace_requests_past_the_device_end_are_counted_as_clipped() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("huge.spc");
    // SPC: asu, lba (512 B sectors), size (bytes), op, time; 10^15 bytes from sector 0.
    std::fs::write(
        &path,
        "0,0,1000000000000000,W,0.1\n0,8,4096,W,0.2\n0,16,1000000000000000,W,0.3\n",
    )
    .unwrap();
    let w = format!("trace:{}", path.display());
    let args = ["--workload", &w, "--trace-format", "spc"];
    let v = sim_json(&args);
    assert_eq!(v["requests_clipped"], 2, "{v}");
    assert!(v["notes"].to_string().contains("clipped"), "{v}");
    let mut text = vec![
        "sim",
        "--capacity",
        "256MiB",
        "--op",
        "0.25",
        "--timing",
        "off",
    ];
    text.extend(["--precondition", "fill", "--quiet"]);
    text.extend(args);
    let o = flashlab(&text);
    let out = String::from_utf8_lossy(&o.stdout);
    assert!(out.contains("clipped requests  2"), "{out}");
    assert_eq!(sim_json(&[])["requests_clipped"], 0);
}

fn json_of(args: &[&str]) -> Value {
    let o = flashlab(args);
    assert!(o.status.success(), "{args:?}: {}", stderr(&o));
    serde_json::from_slice(&o.stdout).expect("one JSON object")
}

#[test]
fn the_waf_model_says_where_it_applies() {
    // mlc-sata-2010 at 256 MiB: 8 dies of 2.6 spare blocks each, below where the model holds
    // within 1 % even with the open blocks counted (measured WAF is about +5 % above it, +30 %
    // above Eq. 12 without the correction).
    let mut args = vec!["sim", "--capacity", "256MiB", "--timing", "off"];
    args.extend(["--write-volume", "1x", "--json", "--quiet"]);
    let small = json_of(&args);
    let (waf, model) = (
        small["waf"].as_f64().unwrap(),
        small["waf_model"].as_f64().unwrap(),
    );
    let excess = small["waf_model_expected_excess"].as_f64().unwrap();
    assert_eq!(small["waf_model_applies"], false, "{small}");
    assert!(small["notes"]
        .to_string()
        .contains("spare blocks per GC pool"));
    assert!(
        waf > model * 1.02,
        "the gap is real: waf {waf}, model {model}"
    );
    let eq12 = small["waf_model_uncorrected"].as_f64().unwrap();
    assert!(waf > eq12 * 1.2, "waf {waf}, Eq. 12 {eq12}");
    let measured = waf / model - 1.0;
    assert!(
        excess > measured / 2.0 && excess < measured * 2.0,
        "expected excess {excess} vs measured {measured}"
    );
    // One die of 1024 blocks at op 0.28: about 220 spare blocks, the model's regime.
    let dir = tempfile::tempdir().unwrap();
    let one_die = config_with(dir.path(), "channels", "1");
    let toml = std::fs::read_to_string(&one_die)
        .unwrap()
        .replace("dies_per_channel = 2", "dies_per_channel = 1")
        .replace("blocks_per_plane = 2048", "blocks_per_plane = 1024")
        .replace("pages_per_block = 128", "pages_per_block = 64");
    std::fs::write(&one_die, toml).unwrap();
    let mut args = vec![
        "sim", "--config", &one_die, "--op", "0.28", "--timing", "off",
    ];
    args.extend([
        "--write-volume",
        "2x",
        "--precondition",
        "full:2",
        "--json",
        "--quiet",
    ]);
    let big = json_of(&args);
    let (waf, model) = (
        big["waf"].as_f64().unwrap(),
        big["waf_model"].as_f64().unwrap(),
    );
    assert_eq!(big["waf_model_applies"], true, "{big}");
    assert!(
        (waf - model).abs() / model < 0.02,
        "waf {waf}, model {model}"
    );
    // No model for a workload it does not describe.
    let zipf = sim_json(&["--workload", "zipf-write:0.99"]);
    assert!(zipf["waf_model"].is_null() && zipf["waf_model_applies"].is_null());
}
