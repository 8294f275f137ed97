//! Point gets on flashlab's store alone, for profiling the read path: loads `RECORDS` records
//! as `compare` does (1 KiB values, a commit every 1,000), names the keys of `OPS` YCSB C reads
//! up front (so key formatting stays out of the profile), then runs the reads `ROUNDS` times
//! and prints the process CPU µs per get.
//!
//! `cargo run --release -p compare --example point_gets -- RECORDS OPS ROUNDS [DIR [CTL]]`
//!
//! CTL: a FIFO a profiler reads commands from (`perf record -D -1 --control fifo:CTL`): the
//! example writes `enable` to it before the reads and `disable` after, so the profile holds
//! the reads alone.

use anyhow::{Context, Result};
use compare::process_cpu_ns;
use engine::kv::{Options, Store};
use lab::harness::kv_bench::driver;
use std::io::Write;
use std::path::PathBuf;
use workload::ycsb::{self, CoreWorkload, YcsbConfig, YcsbOp};

fn arg(n: usize, default: u64) -> Result<u64> {
    match std::env::args().nth(n) {
        Some(s) => s.parse().with_context(|| format!("argument {n}: {s:?}")),
        None => Ok(default),
    }
}

fn signal(ctl: &Option<PathBuf>, what: &str) -> Result<()> {
    if let Some(p) = ctl {
        let mut f = std::fs::OpenOptions::new().write(true).open(p)?;
        writeln!(f, "{what}")?;
    }
    Ok(())
}

fn main() -> Result<()> {
    let (records, ops, rounds) = (arg(1, 300_000)?, arg(2, 300_000)?, arg(3, 1)?);
    let dir = PathBuf::from(std::env::args().nth(4).unwrap_or_else(|| ".".into()));
    let ctl = std::env::args().nth(5).map(PathBuf::from);
    let base = YcsbConfig {
        records,
        operations: ops,
        value_bytes: 1024,
        seed: 1,
        ..YcsbConfig::default()
    };
    let need = (records + ops) * (1024 + 64) * 2;
    let path = dir.join("point-gets.db");
    let _ = std::fs::remove_file(&path);
    let opts = Options {
        file_pages: (need / 4096).max(Options::default().file_pages),
        cache_max_pages: usize::try_from(need / 4096)?,
        ..Options::default()
    };
    let mut s = Store::open_path(&path, opts)?;
    driver::drive(&mut s, "load", ycsb::load(&base)?, &base, 1000, &mut |_| {})?;
    let c = YcsbConfig {
        workload: CoreWorkload::C,
        ..base
    };
    let names: Vec<String> = ycsb::run(&c)?
        .filter_map(|op| match op {
            YcsbOp::Read { key } => Some(ycsb::key_name(key, c.key_bytes)),
            _ => None,
        })
        .collect();
    signal(&ctl, "enable")?;
    let cpu0 = process_cpu_ns();
    let mut found = 0u64;
    for _ in 0..rounds {
        for n in &names {
            found += u64::from(s.get_with(n.as_bytes(), <[u8]>::len)?.is_some());
        }
    }
    let cpu1 = process_cpu_ns();
    signal(&ctl, "disable")?;
    let gets = names.len() as u64 * rounds;
    assert_eq!(found, gets, "every loaded key is found");
    if let (Some(a), Some(b)) = (cpu0, cpu1) {
        println!(
            "{:.3} CPU µs/get ({gets} gets)",
            (b - a) as f64 / 1e3 / gets as f64
        );
    }
    drop(s);
    let _ = std::fs::remove_file(&path);
    Ok(())
}
