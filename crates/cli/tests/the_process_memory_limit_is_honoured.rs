//! The memory guard takes its limit from the process, not only from the machine's RAM: under
//! a lowered `RLIMIT_AS` or `RLIMIT_DATA` (set in the child before exec), every command that
//! builds a device too large for that limit is refused with exit 2 and an error naming the
//! limit, before allocating: never an allocator abort or a backtrace.

use std::os::unix::process::CommandExt;
use std::process::Command;

/// Low enough that a 1 TiB device never fits, high enough for flashlab itself to start.
const LIMIT_BYTES: u64 = 600 << 20;

fn under_limit(resource: libc::__rlimit_resource_t, args: &[&str]) -> (Option<i32>, String) {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_flashlab"));
    cmd.args(args).env("RUST_BACKTRACE", "1");
    // SAFETY: setrlimit is async-signal-safe; the closure allocates nothing.
    unsafe {
        cmd.pre_exec(move || {
            let r = libc::rlimit {
                rlim_cur: LIMIT_BYTES,
                rlim_max: LIMIT_BYTES,
            };
            if libc::setrlimit(resource, &r) != 0 {
                return Err(std::io::Error::last_os_error());
            }
            Ok(())
        });
    }
    let out = cmd.output().expect("run flashlab");
    (
        out.status.code(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

#[test]
fn a_device_beyond_the_rlimit_is_refused_naming_the_limit() {
    let commands: [&[&str]; 3] = [
        &["sim", "--capacity", "1TiB", "--quiet"],
        &[
            "bench",
            "device",
            "--preset",
            "p1-ssd",
            "--capacity",
            "1TiB",
        ],
        &[
            "kv",
            "load",
            "--device",
            "sim",
            "--records",
            "50000000",
            "--quiet",
        ],
    ];
    let mut failures = Vec::new();
    for (resource, name) in [
        (libc::RLIMIT_AS, "RLIMIT_AS"),
        (libc::RLIMIT_DATA, "RLIMIT_DATA"),
    ] {
        for args in commands {
            let (code, err) = under_limit(resource, args);
            let clear = err.contains(name) && err.contains("memory limit");
            let panicked = err.contains("panicked") || err.contains("memory allocation");
            if code != Some(2) || !clear || panicked {
                failures.push(format!("{name} {args:?}: exit {code:?}\n{err}"));
            }
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n\n"));
}
