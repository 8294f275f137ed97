//! `compare`: YCSB load, A, B, C and update-only against flashlab's store, redb, LMDB (heed)
//! and RocksDB side by side, on real files in `--dir` (default: the current directory).
//!
//! `cargo run --release -p compare --features compare,rocksdb -- --records 100000 --ops 100000`
//! (`rocksdb` links Debian's librocksdb: `scripts/setup-rocksdb` installs it).
//! Sizes default to issue 11's (1 M records × 1 KiB values, 1 M operations, a durable commit
//! every 1,000 operations); each flag also reads an environment variable (`COMPARE_RECORDS`…).

use anyhow::{bail, Context, Result};
use clap::Parser;
use compare::{measure, Measured};
use engine::kv::{Options, Store};
use lab::harness::kv_bench::driver::Engine;
use std::path::{Path, PathBuf};
use workload::ycsb::{self, CoreWorkload, YcsbConfig};

#[derive(Parser)]
#[command(about = "YCSB side by side: flashlab's kv store, redb, LMDB (heed), RocksDB")]
struct Args {
    /// Records of the load phase.
    #[arg(long, env = "COMPARE_RECORDS", default_value_t = 1_000_000)]
    records: u64,
    /// Operations of each run phase.
    #[arg(long, env = "COMPARE_OPS", default_value_t = 1_000_000)]
    ops: u64,
    /// Bytes of each value.
    #[arg(long, env = "COMPARE_VALUE_BYTES", default_value_t = 1024)]
    value_bytes: u32,
    /// A durable commit closes every this many operations (that wrote something).
    #[arg(long, env = "COMPARE_COMMIT_EVERY", default_value_t = 1000)]
    commit_every: u64,
    #[arg(long, env = "COMPARE_SEED", default_value_t = 1)]
    seed: u64,
    /// Engines, comma separated: flashlab, redb, lmdb (these two need --features compare),
    /// rocksdb (needs --features rocksdb). Default: every engine this build has.
    #[arg(long, env = "COMPARE_ENGINES", default_value = DEFAULT_ENGINES)]
    engines: String,
    /// Run phases after the load, comma separated (a, b, c, d, e, f, update).
    #[arg(long, env = "COMPARE_PHASES", default_value = "a,b,c,update")]
    phases: String,
    /// Directory for the database files (on the device under test).
    #[arg(long, env = "COMPARE_DIR", default_value = ".")]
    dir: PathBuf,
    /// Pages flashlab's store caches at first (4 KiB each; the others use the OS page cache).
    #[arg(long, env = "COMPARE_FLASHLAB_CACHE_PAGES", default_value_t = Options::default().cache_pages)]
    flashlab_cache_pages: usize,
    /// Pages flashlab's cache may grow to with the store (0: room for the whole file, as the
    /// OS page cache gives redb and LMDB).
    #[arg(long, env = "COMPARE_FLASHLAB_CACHE_MAX_PAGES", default_value_t = 0)]
    flashlab_cache_max_pages: usize,
    /// Open flashlab's file through the OS page cache instead of O_DIRECT.
    #[arg(long, env = "COMPARE_FLASHLAB_BUFFERED")]
    flashlab_buffered: bool,
    /// RocksDB's LRU block cache, MiB (0: room for the whole data set, as flashlab's cache and
    /// the OS page cache of redb and LMDB have).
    #[arg(long, env = "COMPARE_ROCKSDB_CACHE_MIB", default_value_t = 0)]
    rocksdb_cache_mib: u64,
    /// Keep the database files afterwards.
    #[arg(long)]
    keep: bool,
}

/// Every engine this build has.
const DEFAULT_ENGINES: &str = match (cfg!(feature = "compare"), cfg!(feature = "rocksdb")) {
    (true, true) => "flashlab,redb,lmdb,rocksdb",
    (true, false) => "flashlab,redb,lmdb",
    (false, true) => "flashlab,rocksdb",
    (false, false) => "flashlab",
};

fn main() -> Result<()> {
    let a = Args::parse();
    let base = YcsbConfig {
        records: a.records,
        operations: a.ops,
        value_bytes: a.value_bytes,
        seed: a.seed,
        ..YcsbConfig::default()
    };
    let phases: Vec<CoreWorkload> = a
        .phases
        .split(',')
        .map(|p| {
            CoreWorkload::parse(p.trim()).with_context(|| {
                format!("--phases: unknown workload `{p}` (a, b, c, d, e, f, update)")
            })
        })
        .collect::<Result<_>>()?;
    // Room for the load, every update as a new version, and compaction's copy.
    let need = (a.records + a.ops * phases.len() as u64) * (u64::from(a.value_bytes) + 64) * 2;
    let mut results: Vec<Measured> = Vec::new();
    for name in a.engines.split(',').map(str::trim) {
        let (mut e, files) = open(name, &a, need)?;
        eprintln!("{name}: load {} records", a.records);
        results.push(measure(
            e.as_mut(),
            &files,
            "load",
            ycsb::load(&base)?,
            &base,
            a.commit_every,
        )?);
        for &w in &phases {
            let cfg = YcsbConfig {
                workload: w,
                ..base
            };
            eprintln!("{name}: run {} ({} ops)", w.name(), a.ops);
            results.push(measure(
                e.as_mut(),
                &files,
                w.name(),
                ycsb::run(&cfg)?,
                &cfg,
                a.commit_every,
            )?);
        }
        drop(e);
        if !a.keep {
            for f in files {
                let _ = std::fs::remove_dir_all(&f).or_else(|_| std::fs::remove_file(&f));
            }
        }
    }
    println!(
        "records {} × {} B values, {} ops per run phase, commit every {} ops, seed {}; \
         host B/op = bytes handed to the kernel (flashlab: pages its pager wrote, via io_uring; \
         others: /proc/self/io wchar); block B/op = /proc/self/io write_bytes (exact for \
         O_DIRECT, whole page-cache folios for buffered writes); read B/op = bytes the engine read \
         from its device by its own count (flashlab's pager; n/a: the OS page cache serves the \
         others); CPU µs/op = the process's CPU time over the phase per operation (every \
         thread; free of the time spent waiting for a CPU on a loaded machine)",
        a.records, a.value_bytes, a.ops, a.commit_every, a.seed
    );
    if a.engines.split(',').any(|e| e.trim() == "rocksdb") {
        println!(
            "rocksdb: WAL on, one write batch per commit written with sync, no compression, \
             block cache {} MiB, other options at RocksDB's defaults",
            match a.rocksdb_cache_mib {
                0 => need >> 20,
                mib => mib,
            }
        );
    }
    println!(
        "| engine   | phase  |      ops/s | mean µs | p50 µs | p99 µs | p99.9 µs | host B/op | block B/op | read B/op | commits | found/reads | disk MiB | CPU µs/op |"
    );
    println!(
        "|----------|--------|-----------:|--------:|-------:|-------:|---------:|----------:|-----------:|----------:|--------:|------------:|---------:|----------:|"
    );
    for m in &results {
        let p = &m.run;
        println!(
            "| {:<8} | {:<6} | {:>10.0} | {:>7.1} | {:>6.1} | {:>6.1} | {:>8.0} | {:>9} | {:>10} | {:>9} | {:>7} | {:>11} | {:>8.1} | {:>9} |",
            p.engine,
            p.phase,
            p.ops_per_second(),
            p.hist.mean() / 1e3,
            p.quantile_us(0.5),
            p.quantile_us(0.99),
            p.quantile_us(0.999),
            per_op(m.host_bytes_per_op()),
            per_op(m.block_bytes_per_op()),
            per_op(p.bytes_read.map(|b| b as f64 / p.ops.max(1) as f64)),
            p.commits,
            format!("{}/{}", p.reads_found, p.reads),
            m.disk_bytes as f64 / (1 << 20) as f64,
            m.cpu_us_per_op()
                .map_or("n/a".to_string(), |us| format!("{us:.2}")),
        );
    }
    Ok(())
}

fn per_op(b: Option<f64>) -> String {
    b.map_or("n/a".to_string(), |b| format!("{b:.0}"))
}

/// Open a fresh `name` engine in `a.dir`; also the paths to remove afterwards.
fn open(name: &str, a: &Args, need: u64) -> Result<(Box<dyn Engine>, Vec<PathBuf>)> {
    let fresh = |p: &Path| {
        let _ = std::fs::remove_dir_all(p).or_else(|_| std::fs::remove_file(p));
        p.to_path_buf()
    };
    match name {
        "flashlab" => {
            let p = fresh(&a.dir.join("compare-flashlab.db"));
            let opts = Options {
                file_pages: (need / 4096).max(Options::default().file_pages),
                cache_pages: a.flashlab_cache_pages,
                cache_max_pages: match a.flashlab_cache_max_pages {
                    0 => usize::try_from(need / 4096).unwrap_or(usize::MAX),
                    n => n,
                },
                buffered: a.flashlab_buffered,
                ..Options::default()
            };
            let store =
                Store::open_path(&p, opts).with_context(|| format!("opening {}", p.display()))?;
            Ok((Box::new(store), vec![p]))
        }
        #[cfg(feature = "compare")]
        "redb" => {
            let p = fresh(&a.dir.join("compare-redb.redb"));
            Ok((Box::new(compare::Redb::create(&p)?), vec![p]))
        }
        #[cfg(feature = "compare")]
        "lmdb" => {
            let p = fresh(&a.dir.join("compare-lmdb"));
            let map = usize::try_from(need.max(1 << 30))
                .context("LMDB map size does not fit in usize")?;
            let lmdb = compare::Lmdb::create(&p, map)?;
            Ok((Box::new(lmdb), vec![p]))
        }
        #[cfg(feature = "rocksdb")]
        "rocksdb" => {
            let p = fresh(&a.dir.join("compare-rocksdb"));
            let cache = match a.rocksdb_cache_mib {
                0 => need,
                mib => mib << 20,
            };
            let cfg = compare::RocksConfig {
                block_cache_bytes: usize::try_from(cache).unwrap_or(usize::MAX),
            };
            let rocks = compare::Rocks::create(&p, cfg)
                .with_context(|| format!("opening RocksDB {}", p.display()))?;
            Ok((Box::new(rocks), vec![p]))
        }
        #[cfg(not(feature = "compare"))]
        "redb" | "lmdb" => bail!(
            "--engines {name}: built without the comparison engines; \
             rebuild with `--features compare` or pass --engines flashlab"
        ),
        #[cfg(not(feature = "rocksdb"))]
        "rocksdb" => bail!(
            "--engines rocksdb: built without RocksDB; install librocksdb-dev \
             (scripts/setup-rocksdb) and rebuild with `--features rocksdb`"
        ),
        other => bail!("--engines: unknown engine `{other}` (flashlab, redb, lmdb, rocksdb)"),
    }
}
