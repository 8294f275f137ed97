//! Random CLI values and random SSD configs — fields drawn inside, at and beyond their bounds,
//! NaN, ±inf, 0, u32/u64 max — never hang, panic or abort `flashlab sim`: the process ends
//! within a bounded amount of work (a CPU-time limit set on the child; hitting it, or the
//! harness's backstop timeout, is a failure), exits 0 or 2 (never 101 = panic or 134 = abort,
//! never a signal), and either refuses with an error naming a field it was given or prints
//! one JSON object whose figures are finite.
//!
//! Work stays small: `--max-memory 16MiB` caps the device (the default limit, half of RAM,
//! is pinned by `cli_surface`), write volumes and preconditioning passes are drawn at most 1x,
//! and `--max-flash-writes` stops a run after [`FLASH_WRITES`] page programs unless a drawn
//! value replaces it. The memory cap alone does not bound the work: a block-mapped FTL keeps
//! a few bytes per block, so `pages_per_block = 65535` passes it with a 60 GiB device whose
//! every random overwrite copies a whole block (hours of work for a 1x volume).

use proptest::prelude::*;
use serde_json::Value;
use std::io::Read;
use std::os::unix::process::CommandExt;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

mod common;

/// CPU seconds the child may use: far above any case here (each takes well under one).
const CPU_LIMIT_SECONDS: u64 = 60;
/// Flash page programs a run may make (`--max-flash-writes`): a few seconds of work, and
/// thousands of times the tiny device, so runs on it are not cut.
const FLASH_WRITES: &str = "100000000";
/// The harness gives up on a child after this (a hang), and fails.
const BACKSTOP: Duration = Duration::from_secs(180);

const U32: &[&str] = &[
    "0",
    "1",
    "2",
    "3",
    "7",
    "64",
    "1000",
    "65535",
    "65536",
    "4294967295",
    "4294967296",
    "-1",
];
const U64: &[&str] = &[
    "0",
    "1",
    "50000",
    "9000000000000000000",
    "18446744073709551615",
    "-1",
];
const F64: &[&str] = &[
    "nan", "inf", "-inf", "0.0", "-2.0", "1e-300", "0.07", "0.28", "1.0", "1e300",
];
const U32_FIELDS: &[&str] = &[
    "channels",
    "dies_per_channel",
    "planes_per_die",
    "blocks_per_plane",
    "pages_per_block",
    "page_bytes",
    "host_queue_depth",
    "gc_free_blocks_min",
    "streams",
    "log_blocks",
    "cmt_entries",
];
const U64_FIELDS: &[&str] = &["t_read_ns", "t_prog_ns", "t_erase_ns"];
const F64_FIELDS: &[&str] = &["op", "channel_mb_per_s"];

/// One config field set to a drawn value.
fn field() -> impl Strategy<Value = (String, String)> {
    let pick = |names: &'static [&'static str], values: &'static [&'static str]| {
        (prop::sample::select(names), prop::sample::select(values))
            .prop_map(|(n, v)| (n.to_string(), v.to_string()))
    };
    prop_oneof![
        pick(U32_FIELDS, U32),
        pick(U64_FIELDS, U64),
        pick(F64_FIELDS, F64),
        pick(
            &["scheme"],
            &[
                "\"page\"",
                "\"dftl\"",
                "\"bast\"",
                "\"fast\"",
                "\"ioa\"",
                "\"block\"",
                "\"bogus\""
            ]
        ),
        pick(
            &["gc_policy"],
            &["\"greedy\"", "\"fifo\"", "\"cost-benefit\"", "\"bogus\""]
        ),
    ]
}

/// One CLI flag with a drawn value; the names an error about it may use.
fn flag() -> impl Strategy<Value = (String, String)> {
    let pick = |names: &'static [&'static str], values: &'static [&'static str]| {
        (prop::sample::select(names), prop::sample::select(values))
            .prop_map(|(n, v)| (n.to_string(), v.to_string()))
    };
    prop_oneof![
        pick(
            &["--capacity"],
            &[
                "0",
                "1",
                "4KiB",
                "1MiB",
                "8MiB",
                "16MiB",
                "64MiB",
                "1TiB",
                "18446744073709551615",
                "-1",
                "NaN"
            ]
        ),
        pick(&["--op"], F64),
        pick(
            &[
                "--queue-depth",
                "--gc-free-blocks-min",
                "--log-blocks",
                "--cmt-entries"
            ],
            U32
        ),
        pick(&["--streams"], &["0", "1", "4", "65535", "65536"]),
        pick(
            &["--request-size"],
            &["0", "1", "4KiB", "8KiB", "1MiB", "18446744073709551615"]
        ),
        pick(
            &["--write-volume"],
            &["0", "-1", "nan", "inf", "0.01x", "0.5x", "1x"]
        ),
        pick(
            &["--precondition"],
            &["none", "fill", "full:0.1", "full:nan", "full:inf", "full:-1", "bogus"]
        ),
        pick(&["--timing"], &["on", "off", "maybe"]),
        pick(&["--sampler"], &["rand", "lemire", "xorshift"]),
        pick(
            &["--max-flash-writes"],
            &["0", "-1", "1", "1000", "nan", "nanx", "0x", "-1x", "1x", "3x", "bogus"]
        ),
        pick(
            &["--workload"],
            &[
                "uniform-write",
                "zipf-write:0.99",
                "zipf-write:nan",
                "hotcold-write:0.8:0.2",
                "hotcold-write:2:-1",
                "uniform-mix:0.5"
            ]
        ),
        pick(
            &["--ftl"],
            &["page", "dftl", "bast", "fast", "ioa", "block"]
        ),
        pick(&["--gc"], &["greedy", "fifo", "cost-benefit"]),
    ]
}

/// Fields and flags that decide whether the spare blocks hold what the FTL needs, and whether
/// DFTL's GC keeps up with the translation pages its moves dirty; the errors for those name
/// the constraint ("spare blocks cannot hold ... GC reserve and open blocks, or log blocks";
/// "garbage collection cannot keep up", with what to raise) rather than each field.
const SPARE_BUDGET: &[&str] = &[
    "capacity",
    "op",
    "streams",
    "gc_free_blocks_min",
    "gc-free-blocks-min",
    "log_blocks",
    "log-blocks",
    "ftl",
    "scheme",
    "channels",
    "dies_per_channel",
    "planes_per_die",
    "blocks_per_plane",
    "pages_per_block",
    "page_bytes",
];

/// Words an error about `name` may use: the flag, the config field, its section path.
fn aliases(name: &str) -> Vec<String> {
    let bare = name.trim_start_matches("--");
    let mut out = vec![bare.to_string(), bare.replace('-', "_")];
    if SPARE_BUDGET.contains(&bare) {
        out.push("spare blocks cannot hold".into());
        out.push("garbage collection cannot keep up".into());
    }
    let extra: &[&str] = match bare {
        "queue-depth" => &["host_queue_depth"],
        "gc" => &["gc_policy"],
        "ftl" => &["scheme"],
        "channels" | "dies_per_channel" | "planes_per_die" | "blocks_per_plane"
        | "pages_per_block" | "page_bytes" => &["geometry"],
        "request-size" => &["request"],
        _ => &[],
    };
    out.extend(extra.iter().map(|s| s.to_string()));
    out
}

struct Outcome {
    code: Option<i32>,
    stdout: String,
    stderr: String,
}

/// Run flashlab with a CPU-time limit; a child still running after `BACKSTOP` is a failure.
fn run(args: &[String]) -> Outcome {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_flashlab"));
    cmd.args(args).stdout(Stdio::piped()).stderr(Stdio::piped());
    // SAFETY: setrlimit is async-signal-safe; the closure touches nothing else.
    unsafe {
        cmd.pre_exec(|| {
            let lim = libc::rlimit {
                rlim_cur: CPU_LIMIT_SECONDS,
                rlim_max: CPU_LIMIT_SECONDS,
            };
            if libc::setrlimit(libc::RLIMIT_CPU, &lim) != 0 {
                return Err(std::io::Error::last_os_error());
            }
            Ok(())
        });
    }
    let mut child = cmd.spawn().expect("run flashlab");
    let (mut out, mut err) = (child.stdout.take().unwrap(), child.stderr.take().unwrap());
    let reader = std::thread::spawn(move || {
        let mut s = String::new();
        let _ = out.read_to_string(&mut s);
        s
    });
    let err_reader = std::thread::spawn(move || {
        let mut s = String::new();
        let _ = err.read_to_string(&mut s);
        s
    });
    let start = Instant::now();
    let status = loop {
        if let Some(st) = child.try_wait().unwrap() {
            break st;
        }
        if start.elapsed() > BACKSTOP {
            let _ = child.kill();
            panic!("{args:?}: still running after {BACKSTOP:?} (a hang)");
        }
        std::thread::sleep(Duration::from_millis(20));
    };
    Outcome {
        code: status.code(),
        stdout: reader.join().unwrap(),
        stderr: err_reader.join().unwrap(),
    }
}

/// Every number in the JSON is finite (serde writes NaN and inf as null: only keys that may
/// be null are allowed to be; a timeline interval with no host writes, e.g. one 1 MiB read of
/// a mixed workload, has no WAF).
fn assert_finite(v: &Value, path: &str) {
    const NULLABLE: &[&str] = &[
        "waf",
        "waf_interval",
        "waf_cumulative",
        "waf_model",
        "waf_model_applies",
        "waf_model_expected_excess",
        "waf_model_alpha",
        "waf_model_uncorrected",
        "peak_rss_bytes",
        "bytes_per_logical_page",
        "process_bytes_per_logical_page",
        "volume_reached",
        "base_preset",
        "config_path",
        "write_volume",
        "trace_format",
    ];
    match v {
        Value::Null => {
            let key = path.rsplit('.').next().unwrap();
            assert!(NULLABLE.contains(&key), "`{path}` is null (NaN or inf?)");
        }
        Value::Number(n) => assert!(n.as_f64().is_some_and(f64::is_finite), "`{path}` = {n}"),
        Value::Object(m) => m
            .iter()
            .for_each(|(k, x)| assert_finite(x, &format!("{path}.{k}"))),
        Value::Array(a) => a.iter().for_each(|x| assert_finite(x, path)),
        _ => {}
    }
}

/// `toml` with `name = value` lines replaced.
fn set_fields(toml: &str, fields: &[(String, String)]) -> String {
    let mut toml = toml.to_string();
    for (name, value) in fields {
        let prefix = format!("{name} = ");
        assert!(toml.lines().any(|l| l.starts_with(&prefix)), "{name}");
        toml = toml
            .lines()
            .map(|l| match l.starts_with(&prefix) {
                true => format!("{prefix}{value}"),
                false => l.to_string(),
            })
            .collect::<Vec<_>>()
            .join("\n");
    }
    toml
}

/// A tiny device to mutate: `mlc-sata-2010` on one channel of two dies, 128 blocks of 32
/// pages per die (8192 pages, 32 MiB).
fn tiny_toml() -> String {
    let o = common::flashlab(&["presets", "--show", "mlc-sata-2010"]);
    let preset = String::from_utf8(o.stdout).unwrap();
    let tiny = [
        ("channels", "1"),
        ("blocks_per_plane", "128"),
        ("pages_per_block", "32"),
    ];
    let tiny: Vec<(String, String)> = tiny
        .iter()
        .map(|(n, v)| (n.to_string(), v.to_string()))
        .collect();
    set_fields(&preset, &tiny)
}

/// Run `sim` on the tiny config with `fields` changed (or, with `preset`, on `mlc-sata-2010` at
/// 256 MiB unless a flag says otherwise) with `flags`, and check the outcome.
fn check(
    preset: bool,
    fields: Vec<(String, String)>,
    mut flags: Vec<(String, String)>,
    dir: &std::path::Path,
) {
    let mut args: Vec<String> = ["sim", "--json", "--quiet", "--max-memory", "16MiB"]
        .iter()
        .map(|s| s.to_string())
        .collect();
    let mut touched: Vec<String> = vec!["--max-memory".into()];
    if preset && fields.is_empty() {
        flags.push(("--capacity".into(), "256MiB".into()));
    } else {
        let path = dir.join("random.toml");
        std::fs::write(&path, set_fields(&tiny_toml(), &fields)).unwrap();
        args.extend(["--config".into(), path.display().to_string()]);
        touched.extend(fields.iter().map(|(n, _)| n.clone()));
    }
    let mut given = std::collections::BTreeSet::new();
    for (name, value) in flags {
        if given.insert(name.clone()) {
            args.push(format!("{name}={value}"));
            touched.push(name);
        }
    }
    let o = run(&args);
    if std::env::var_os("FLASHLAB_SHOW_CASES").is_some() {
        eprintln!(
            "{:?} {args:?} {}",
            o.code,
            o.stderr.lines().next().unwrap_or("")
        );
    }
    match o.code {
        Some(0) => {
            let v: Value = serde_json::from_str(&o.stdout)
                .unwrap_or_else(|e| panic!("{args:?}: not one JSON object ({e}): {}", o.stdout));
            assert_finite(&v, "");
            if !v["waf"].is_number() {
                assert!(v["notes"].to_string().contains("WAF"), "{args:?}: {v}");
            }
        }
        Some(2) => {
            let err = o.stderr;
            assert!(err.starts_with("error: "), "{args:?}: {err}");
            assert!(!err.contains("panicked"), "{args:?}: {err}");
            let named = touched.iter().flat_map(|t| aliases(t)).any(|a| err.contains(&a));
            assert!(named, "{args:?}: the error names none of {touched:?}: {err}");
        }
        other => panic!(
            "{args:?}: exit {other:?} (101 = panic, 134 = abort, None = a signal, e.g. the CPU limit)\n{}",
            o.stderr
        ),
    }
}

proptest! {
    // Few cases: each starts a process (tiny devices, so each takes milliseconds).
    #![proptest_config(ProptestConfig { cases: 48, failure_persistence: None, ..ProptestConfig::default() })]

    #[test]
    fn random_configs_and_flags_end_cleanly(
        fields in prop::collection::vec(field(), 0..3),
        flags in prop::collection::vec(flag(), 0..4),
        timing_off in any::<bool>(),
        preset in any::<bool>(),
    ) {
        let dir = tempfile::tempdir().unwrap();
        let mut flags = flags;
        // Defaults after the drawn flags (the first of a name wins): fill only, timing off
        // half the time.
        if timing_off {
            flags.push(("--timing".into(), "off".into()));
        }
        flags.push(("--precondition".into(), "fill".into()));
        flags.push(("--max-flash-writes".into(), FLASH_WRITES.into()));
        check(preset, fields, flags, dir.path());
    }
}

/// The case that once ran for hours: a block-mapped FTL with 65,535 pages per block fits the
/// memory cap and copies a whole block per random overwrite. The flash-write limit ends it
/// with an error naming the limit, the programs made and the write amplification so far.
#[test]
fn a_block_mapped_device_with_huge_blocks_stops_at_the_flash_write_limit() {
    let dir = tempfile::tempdir().unwrap();
    let fields = vec![
        ("scheme".to_string(), "\"block\"".to_string()),
        ("pages_per_block".to_string(), "65535".to_string()),
    ];
    let path = dir.path().join("huge-blocks.toml");
    std::fs::write(&path, set_fields(&tiny_toml(), &fields)).unwrap();
    let args: Vec<String> = [
        "sim",
        "--json",
        "--quiet",
        "--max-memory",
        "16MiB",
        "--config",
        &path.display().to_string(),
        "--precondition",
        "fill",
        "--timing",
        "off",
        "--max-flash-writes",
        "20000000",
    ]
    .iter()
    .map(|s| s.to_string())
    .collect();
    let o = run(&args);
    assert_eq!(o.code, Some(2), "{}", o.stderr);
    assert!(
        o.stderr
            .starts_with("error: --max-flash-writes: the device has programmed"),
        "{}",
        o.stderr
    );
    assert!(
        o.stderr.contains("more than the limit of 20000000"),
        "{}",
        o.stderr
    );
    assert!(
        o.stderr.contains("write amplification so far"),
        "{}",
        o.stderr
    );
}
