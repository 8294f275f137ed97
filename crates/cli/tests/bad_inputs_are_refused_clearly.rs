//! Bad inputs, one row each: the arguments (and an optional input file, `{FILE}` in the
//! arguments), the exit code, substrings the error must contain, and never a panic or a
//! backtrace. Every case runs in well under a second (tiny capacities).

use std::process::Command;

struct Case {
    args: &'static [&'static str],
    /// Content of `{FILE}` (a file in a fresh temp dir), if the args name one.
    file: Option<&'static [u8]>,
    code: i32,
    says: &'static [&'static str],
}

const fn case(args: &'static [&'static str], code: i32, says: &'static [&'static str]) -> Case {
    Case {
        args,
        file: None,
        code,
        says,
    }
}

const CASES: &[Case] = &[
    // Devices larger than the process may hold are refused before anything is allocated,
    // naming the limit's source (half the RAM at most, whatever the machine).
    case(
        &[
            "bench",
            "device",
            "--preset",
            "p1-ssd",
            "--capacity",
            "12TiB",
        ],
        2,
        &["--capacity", "memory limit", "needs about"],
    ),
    case(
        &["reproduce", "multistream", "--capacity", "12TiB", "--quiet"],
        2,
        &["--capacity", "memory limit", "needs about"],
    ),
    case(
        &[
            "sim",
            "--ftl",
            "dftl",
            "--cmt-entries",
            "1",
            "--capacity",
            "256MiB",
        ],
        2,
        &["cannot keep up", "1-entry CMT", "--cmt-entries"],
    ),
    case(
        &["sim", "--capacity", "64MiB", "--precondition", "full:1e30"],
        2,
        &["full:1e30", "at most 100"],
    ),
    case(
        &["sim", "--capacity", "256MiB", "--gc-free-blocks-min", "100"],
        2,
        &["--gc-free-blocks-min 100", "at most", "--op or --capacity"],
    ),
    case(
        &[
            "sim",
            "--ftl",
            "bast",
            "--capacity",
            "256MiB",
            "--log-blocks",
            "1000",
        ],
        2,
        &["--log-blocks 1000", "at most"],
    ),
    case(
        &["sim", "--capacity", "64MiB", "--write-volume", "1e-300x"],
        2,
        &["--write-volume 1e-300x", "too little to measure"],
    ),
    case(
        &["sim", "--capacity", "64MiB", "--write-volume", "1e30x"],
        2,
        &["--write-volume 1e30x", "at most"],
    ),
    case(
        &["bench", "device", "--device", "file", "--capacity", "1B"],
        2,
        &["--capacity 1 B", "at least 262144 B"],
    ),
    case(
        &["reproduce", "ext-buffer", "--trace", "/dev/null"],
        2,
        &["/dev/null", "trace is empty"],
    ),
    case(
        &[
            "sim",
            "--capacity",
            "64MiB",
            "--workload",
            "trace:/dev/zero",
            "--trace-format",
            "msr",
        ],
        2,
        &["/dev/zero", "character device"],
    ),
    // An endless device is refused as such; a regular file over the cap names the cap.
    case(
        &["sim", "--config", "/dev/zero"],
        2,
        &["/dev/zero", "character device"],
    ),
    Case {
        args: &["sim", "--config", "{FILE}"],
        file: Some(&[b'#'; (1 << 20) + 1]),
        code: 2,
        says: &["1048576-byte cap"],
    },
    Case {
        args: &[
            "sim",
            "--capacity",
            "64MiB",
            "--workload",
            "trace:{FILE}",
            "--trace-format",
            "msr",
        ],
        file: Some(&[b'1'; (1 << 20) + 1]),
        code: 2,
        says: &["line 1", "line-length cap of 1048576 bytes"],
    },
    Case {
        args: &["sweep", "{FILE}", "--out", "/dev/full", "--quiet"],
        file: Some(b"[base]\ncapacity = \"64MiB\"\nwrite_volume = \"0.1x\"\n[vary]\nseed = [1]\n"),
        code: 2,
        says: &["--out /dev/full", "not a regular file"],
    },
    Case {
        args: &["sweep", "{FILE}", "--out", "o.jsonl", "--quiet"],
        file: Some(b"\xff\xfe\x00binary"),
        code: 2,
        says: &["sweep spec", "UTF-8"],
    },
    case(
        &[
            "sweep",
            "spec.toml",
            "--out",
            "o.jsonl",
            "--ray",
            "127.0.0.1:1",
        ],
        2,
        &["--ray 127.0.0.1:1", "no Ray cluster answers"],
    ),
    case(&["sim", "--capacity", "NaN"], 2, &["--capacity", "NaN"]),
    case(&["sim", "--op", "nan"], 2, &["ftl.op", "NaN"]),
    case(
        &["kv", "get", "--path", "/nonexistent/kv.db", "k"],
        2,
        &["/nonexistent/kv.db", "no such store"],
    ),
    case(
        &["kv", "check", "--path", "/nonexistent/kv.db"],
        2,
        &["/nonexistent/kv.db", "no such store"],
    ),
    // The hostile set of 2026-11-24 (docs/results/2026-11-24-hostile-cases.md).
    case(
        &[
            "buffer-sim",
            "--trace",
            "/dev/zero",
            "--trace-format",
            "u32be",
        ],
        2,
        &["/dev/zero", "character device"],
    ),
    case(
        &["kv", "get", "--path", ".", "k"],
        2,
        &["a directory, not a store file"],
    ),
    case(
        &["kv", "put", "--path", "/dev/full", "k", "v"],
        2,
        &["/dev/full", "a character device, not a store file"],
    ),
    Case {
        args: &["kv", "check", "--path", "{FILE}"],
        file: Some(b""),
        code: 2,
        says: &["an empty file, not a store"],
    },
    // A store cut down to two pages: named as truncated, not only as a bad setting.
    Case {
        args: &["kv", "check", "--path", "{FILE}"],
        file: Some(&[0u8; 8192]),
        code: 2,
        says: &["2 pages", "truncated or is not a flashlab store"],
    },
    case(
        &["sim", "--capacity", "64MiB", "--op", "-0.1"],
        2,
        &["ftl.op", "-0.1"],
    ),
    case(&["sim", "--seed", "-1"], 2, &["--seed", "'-1'"]),
    case(
        &["kv", "load", "--path", "kv.db", "--compact-threshold", "-1"],
        2,
        &["compact_threshold", "-1"],
    ),
    case(
        &[
            "lifetime",
            "--workload",
            "uniform-write",
            "--page-size",
            "3",
            "--capacity",
            "64MiB",
        ],
        2,
        &["--page-size 3", "512-byte"],
    ),
    case(
        &[
            "lifetime",
            "--workload",
            "uniform-write",
            "--write-volume",
            "1e30x",
            "--capacity",
            "64MiB",
        ],
        2,
        &["--write-volume 1e30x", "at most"],
    ),
    Case {
        args: &["buffer-sim", "--trace", "{FILE}", "--trace-format", "text"],
        file: Some(b""),
        code: 2,
        says: &["no page reference"],
    },
    Case {
        args: &[
            "buffer-sim",
            "--trace",
            "{FILE}",
            "--trace-format",
            "text",
            "--kin",
            "2",
        ],
        file: Some(b"R 1\nW 2\n"),
        code: 2,
        says: &["--size", "0 pages"],
    },
    case(
        &["sim", "--capacity", "64MiB", "--output", "."],
        2,
        &["--output .", "a directory"],
    ),
    case(
        &[
            "reproduce",
            "multistream",
            "--output",
            "/nonexistent/x.json",
        ],
        2,
        &["--output", "/nonexistent", "does not exist"],
    ),
];

fn run(c: &Case) -> (Option<i32>, String) {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("input");
    if let Some(content) = c.file {
        std::fs::write(&file, content).unwrap();
    }
    let args: Vec<String> = c
        .args
        .iter()
        .map(|a| a.replace("{FILE}", &file.display().to_string()))
        .collect();
    let out = Command::new(env!("CARGO_BIN_EXE_flashlab"))
        .args(&args)
        .current_dir(dir.path())
        .env("RUST_BACKTRACE", "1")
        .output()
        .expect("run flashlab");
    (
        out.status.code(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

#[test]
fn every_bad_input_is_refused_with_a_clear_error() {
    let mut failures = Vec::new();
    for c in CASES {
        let (code, err) = run(c);
        let missing: Vec<_> = c.says.iter().filter(|s| !err.contains(*s)).collect();
        let panicked = err.contains("panicked") || err.contains("stack backtrace");
        if code != Some(c.code) || !missing.is_empty() || panicked {
            failures.push(format!(
                "{:?}: exit {code:?} (want {}), missing {missing:?}, panicked {panicked}:\n{err}",
                c.args, c.code
            ));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n\n"));
}
