//! `flashlab kv`: the key-value store (`engine::kv`) from the command line.
//!
//! `load` and `run` drive YCSB (`workload::ycsb`) against a store in a file (`--path`) or on
//! the simulated SSD (`--device sim`, in memory for the run: `run` loads first) through the
//! YCSB driver `compare` uses too (`workload::driver`): every operation is timed (an
//! operation that closes a `--commit-every` group includes its commit) into an HDR histogram. `get`, `put`, `scan` look at a file store; `stat` reports its
//! figures; `check` verifies every checksum and the index without changing anything (exit 0
//! clean, 1 damaged, 2 when it could not run).

use anyhow::{bail, Context, Result};
use blockdev::BlockDevice;
use clap::{Args, Subcommand};
use engine::kv::{Options, Store};
use engine::EngineError;
use serde_json::{json, Value};
use std::ops::Bound;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use workload::driver::{self, Phase};
use workload::ycsb::{self, CoreWorkload, YcsbConfig, YcsbOp};

#[derive(Args)]
pub struct KvArgs {
    #[command(subcommand)]
    command: KvCommand,
}

#[derive(Subcommand)]
enum KvCommand {
    /// YCSB load phase: insert --records records.
    Load(Box<YcsbArgs>),
    /// YCSB run phase: --ops operations of --workload (a file store is loaded first if empty).
    Run(Box<YcsbArgs>),
    /// Print a key's value.
    Get {
        #[arg(long)]
        path: PathBuf,
        key: String,
    },
    /// Set a key to a value and commit.
    Put {
        #[arg(long)]
        path: PathBuf,
        key: String,
        value: String,
    },
    /// Print keys and values in order, from --from (inclusive) to --to (exclusive).
    Scan {
        #[arg(long)]
        path: PathBuf,
        #[arg(long)]
        from: Option<String>,
        #[arg(long)]
        to: Option<String>,
        /// At most this many records.
        #[arg(long, default_value_t = 100)]
        limit: usize,
    },
    /// The store's figures: keys, live and stale bytes, pages by type, commits.
    Stat {
        #[arg(long)]
        path: PathBuf,
        #[arg(long)]
        json: bool,
    },
    /// Verify every checksum and the index; changes nothing. Exit 0 clean, 1 damaged.
    Check {
        #[arg(long)]
        path: PathBuf,
        #[arg(long)]
        json: bool,
    },
}

#[derive(Args, Clone)]
struct YcsbArgs {
    /// The store's file (created if missing).
    #[arg(long, conflicts_with = "device")]
    path: Option<PathBuf>,
    /// `sim`: the simulated SSD (preset --preset), in memory.
    #[arg(long)]
    device: Option<String>,
    /// SSD preset of `--device sim`.
    #[arg(long, default_value = "tlc-nvme-2024")]
    preset: String,
    /// a|b|c|d|e|f|update.
    #[arg(long, default_value = "a")]
    workload: String,
    #[arg(long, default_value_t = 10_000)]
    records: u64,
    #[arg(long, default_value_t = 10_000)]
    ops: u64,
    #[arg(long, default_value_t = 1000)]
    value_bytes: u32,
    /// Commit (durably) after every K operations (when they wrote); 0: only at the end.
    #[arg(long, default_value_t = 1000)]
    commit_every: u64,
    #[arg(long, default_value_t = 1)]
    seed: u64,
    /// Size of a new store file, MiB (sparse).
    #[arg(long, default_value_t = 4096)]
    file_mib: u64,
    /// Compact when this share of the data bytes is stale (1: never).
    #[arg(long, default_value_t = 0.5)]
    compact_threshold: f64,
    /// Trim the pages compaction frees this many commits later, those still free (0: at
    /// once; a file punches holes, a simulated SSD gets TRIMs).
    #[arg(long, default_value_t = Options::default().trim_after_commits)]
    trim_after_commits: u64,
    /// Pages the store caches.
    #[arg(long, default_value_t = 8192)]
    cache_pages: usize,
    /// One JSON object on stdout.
    #[arg(long)]
    json: bool,
    /// No progress bar.
    #[arg(long)]
    quiet: bool,
}

/// Run a `kv` subcommand; its own exit code (check: 1 when damaged).
pub fn main(args: &KvArgs) -> ExitCode {
    let r = match &args.command {
        KvCommand::Load(a) => ycsb_phase(a, false),
        KvCommand::Run(a) => ycsb_phase(a, true),
        KvCommand::Get { path, key } => get(path, key),
        KvCommand::Put { path, key, value } => put(path, key, value),
        KvCommand::Scan {
            path,
            from,
            to,
            limit,
        } => scan(path, from.as_deref(), to.as_deref(), *limit),
        KvCommand::Stat { path, json } => stat(path, *json),
        KvCommand::Check { path, json } => return check(path, *json),
    };
    match r {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("error: {}", crate::error_chain(&e));
            ExitCode::from(2)
        }
    }
}

fn existing(path: &Path) -> Result<Store> {
    if !path.exists() {
        bail!(
            "{}: no such store (create one with `flashlab kv load --path {}` or `kv put`)",
            path.display(),
            path.display()
        );
    }
    Store::open_read_only(path, Options::default())
        .with_context(|| format!("opening {} read-only", path.display()))
}

fn get(path: &Path, key: &str) -> Result<()> {
    let mut s = existing(path)?;
    match s.get(key.as_bytes())? {
        Some(v) => println!("{}", String::from_utf8_lossy(&v)),
        None => bail!("{key}: not found in {}", path.display()),
    }
    Ok(())
}

fn put(path: &Path, key: &str, value: &str) -> Result<()> {
    let mut s = Store::open_path(path, Options::default())
        .with_context(|| format!("opening {}", path.display()))?;
    s.put(key.as_bytes(), value.as_bytes())?;
    let seq = s.commit()?;
    eprintln!("committed as commit {seq}");
    Ok(())
}

fn scan(path: &Path, from: Option<&str>, to: Option<&str>, limit: usize) -> Result<()> {
    let mut s = existing(path)?;
    let lo = from.map_or(Bound::Unbounded, |k| Bound::Included(k.as_bytes()));
    let hi = to.map_or(Bound::Unbounded, |k| Bound::Excluded(k.as_bytes()));
    for kv in s.scan((lo, hi))?.take(limit) {
        let (k, v) = kv?;
        println!(
            "{}\t{}",
            String::from_utf8_lossy(&k),
            String::from_utf8_lossy(&v)
        );
    }
    Ok(())
}

fn stat_json(s: &Store) -> Value {
    let st = s.stat();
    let pages = |p: engine::kv::format::PagesByType| json!({"superblock": p.superblock, "header": p.header, "index": p.index, "data": p.data});
    json!({
        "live_keys": st.live_keys,
        "live_bytes": st.live_bytes,
        "stale_bytes": st.stale_bytes,
        "pages_in_use": pages(st.pages_in_use),
        "pages_written": pages(st.pages_written),
        "headers": st.headers,
        "last_commit_seq": st.commit_seq,
        "generation": st.generation,
        "footprint_bytes": st.footprint_pages * st.page_bytes as u64,
        "capacity_bytes": st.capacity_pages * st.page_bytes as u64,
        "page_bytes": st.page_bytes,
    })
}

fn stat(path: &Path, as_json: bool) -> Result<()> {
    let s = existing(path)?;
    let j = stat_json(&s);
    if as_json {
        println!("{j}");
        return Ok(());
    }
    let st = s.stat();
    println!("store            {}", path.display());
    println!("live keys        {}", st.live_keys);
    println!("live bytes       {}", st.live_bytes);
    println!("stale bytes      {}", st.stale_bytes);
    let p = st.pages_in_use;
    println!(
        "pages in use     superblock {}, header {}, index {}, data {}",
        p.superblock, p.header, p.index, p.data
    );
    let w = st.pages_written;
    println!(
        "pages written    superblock {}, header {}, index {}, data {}",
        w.superblock, w.header, w.index, w.data
    );
    println!("headers written  {}", st.headers);
    println!("last commit      {}", st.commit_seq);
    println!("compactions      {}", st.generation);
    println!(
        "footprint        {:.1} MiB of {:.1} MiB",
        (st.footprint_pages * st.page_bytes as u64) as f64 / 1048576.0,
        (st.capacity_pages * st.page_bytes as u64) as f64 / 1048576.0
    );
    Ok(())
}

fn check(path: &Path, as_json: bool) -> ExitCode {
    if !path.exists() {
        eprintln!("error: {}: no such store", path.display());
        return ExitCode::from(2);
    }
    let opts = Options {
        create: false,
        ..Options::default()
    };
    let damage: Vec<(Option<u64>, String)> = match Store::open_read_only(path, opts) {
        Ok(mut s) => match s.check() {
            Ok(d) => d.into_iter().map(|d| (Some(d.offset), d.what)).collect(),
            Err(e) => vec![(None, e.to_string())],
        },
        Err(e @ (EngineError::Kv { .. } | EngineError::Corrupt { .. })) => {
            vec![(None, e.to_string())]
        }
        Err(e) => {
            eprintln!("error: opening {}: {e}", path.display());
            return ExitCode::from(2);
        }
    };
    if as_json {
        let items: Vec<Value> = damage
            .iter()
            .map(|(o, w)| json!({"offset": o, "what": w}))
            .collect();
        println!("{}", json!({"clean": damage.is_empty(), "damage": items}));
    } else if damage.is_empty() {
        println!("{}: clean", path.display());
    } else {
        for (o, w) in &damage {
            match o {
                Some(o) => println!("damaged at byte {o}: {w}"),
                None => println!("damaged: {w}"),
            }
        }
    }
    if damage.is_empty() {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(1)
    }
}

fn open_store(a: &YcsbArgs) -> Result<(Store, String)> {
    let opts = Options {
        file_pages: a.file_mib * 256,
        compact_threshold: a.compact_threshold,
        trim_after_commits: a.trim_after_commits,
        cache_pages: a.cache_pages,
        ..Options::default()
    };
    match (&a.path, a.device.as_deref()) {
        (Some(p), None) => Ok((
            Store::open_path(p, opts).with_context(|| format!("opening {}", p.display()))?,
            "file".into(),
        )),
        (None, Some("sim")) => {
            let need = (a.records + a.ops) * (a.value_bytes as u64 + 64) * 3 + (64 << 20);
            // One stream per data type (P5's policy 2): the preset's FTL gets the streams.
            let mut cfg = ssd::SsdConfig::preset(&a.preset)?;
            cfg.geometry.page_bytes = 4096;
            cfg.ftl.streams = opts.streams.streams();
            let bytes = need.max(cfg.min_logical_bytes()?);
            let cfg = cfg
                .with_logical_capacity(bytes)
                .with_context(|| format!("preset {} with {bytes} bytes", a.preset))?;
            let (limit, what) = flashlab::memory_limit::memory_limit();
            // The device keeps every page's payload (as `SimDevice` opens it).
            let mut payloads = cfg.clone();
            payloads.ftl.data = ssd::DataMode::Payloads;
            payloads
                .check_memory(limit)
                .with_context(|| format!("--device sim with --records {} (the limit is from {what}); lower --records or --ops", a.records))?;
            let dev: Box<dyn BlockDevice> = Box::new(blockdev::SimDevice::new(cfg)?);
            Ok((Store::open(dev, opts)?, "sim".into()))
        }
        (None, Some(other)) => bail!("--device {other}: only `sim` (or --path FILE for a file)"),
        _ => bail!("give --path FILE or --device sim"),
    }
}

fn progress(quiet: bool, total: u64, phase: &str) -> Option<indicatif::ProgressBar> {
    use std::io::IsTerminal;
    if quiet || !std::io::stderr().is_terminal() {
        return None;
    }
    let b = indicatif::ProgressBar::new(total);
    b.set_style(
        indicatif::ProgressStyle::with_template(
            "{msg:>6} [{elapsed_precise}] {wide_bar} {pos}/{len} ops (ETA {eta})",
        )
        .unwrap_or_else(|_| indicatif::ProgressStyle::default_bar()),
    );
    b.set_message(phase.to_string());
    Some(b)
}

fn report(m: &Phase) -> Value {
    let written = m.bytes_written.unwrap_or(0);
    json!({
        "ops": m.ops,
        "seconds": m.seconds,
        "ops_per_second": m.ops_per_second(),
        "latency_us": {"p50": m.quantile_us(0.5), "p99": m.quantile_us(0.99), "p999": m.quantile_us(0.999), "max": m.hist.max() as f64 / 1000.0},
        "commits": m.commits,
        "reads_found": m.reads_found,
        "device_bytes_written": written,
        "device_bytes_read": m.bytes_read.unwrap_or(0),
        "bytes_written_per_op": m.bytes_written_per_op().unwrap_or(0.0),
    })
}

/// One phase through the shared YCSB driver (`workload::driver`), with a progress bar.
fn drive(
    s: &mut Store,
    ops: impl Iterator<Item = YcsbOp>,
    total: u64,
    cfg: &YcsbConfig,
    commit_every: u64,
    phase: &str,
    quiet: bool,
) -> Result<Phase> {
    let bar = progress(quiet, total, phase);
    let m = driver::drive(s, phase, ops, cfg, commit_every, &mut |n| {
        if let Some(b) = &bar {
            b.set_position(n);
        }
    })?;
    if let Some(b) = bar {
        b.finish_and_clear();
    }
    Ok(m)
}

fn ycsb_phase(a: &YcsbArgs, run: bool) -> Result<()> {
    let workload = CoreWorkload::parse(&a.workload)
        .with_context(|| format!("--workload {}: one of a, b, c, d, e, f, update", a.workload))?;
    let cfg = YcsbConfig {
        workload,
        records: a.records,
        operations: a.ops,
        value_bytes: a.value_bytes,
        seed: a.seed,
        ..YcsbConfig::default()
    };
    let (mut s, device) = open_store(a)?;
    let mut out = json!({
        "device": device,
        "workload": workload.name(),
        "records": a.records,
        "value_bytes": a.value_bytes,
        "commit_every": a.commit_every,
        "seed": a.seed,
        "clock": s.pager().device().clock_kind().name(),
    });
    let mut loaded = None;
    if !run || s.stat().live_keys == 0 {
        let m = drive(
            &mut s,
            ycsb::load(&cfg)?,
            a.records,
            &cfg,
            a.commit_every,
            "load",
            a.quiet,
        )?;
        loaded = Some(report(&m));
    }
    let main = if run {
        let m = drive(
            &mut s,
            ycsb::run(&cfg)?,
            a.ops,
            &cfg,
            a.commit_every,
            "run",
            a.quiet,
        )?;
        let r = report(&m);
        if let Some(l) = loaded {
            out["load"] = l;
        }
        r
    } else {
        loaded.unwrap_or(Value::Null)
    };
    out["phase"] = json!(if run { "run" } else { "load" });
    if let (Value::Object(o), Value::Object(m)) = (&mut out, main) {
        o.extend(m);
    }
    out["store"] = stat_json(&s);
    if a.json {
        println!("{out}");
    } else {
        let l = &out["latency_us"];
        println!(
            "{} {} on {}: {} ops in {:.2} s = {:.0} ops/s; latency p50 {:.1} us, p99 {:.1} us, p99.9 {:.1} us; {:.1} MiB written ({:.0} B/op), {} commits",
            out["phase"].as_str().unwrap_or(""),
            workload.name(),
            device,
            out["ops"],
            out["seconds"].as_f64().unwrap_or(0.0),
            out["ops_per_second"].as_f64().unwrap_or(0.0),
            l["p50"].as_f64().unwrap_or(0.0),
            l["p99"].as_f64().unwrap_or(0.0),
            l["p999"].as_f64().unwrap_or(0.0),
            out["device_bytes_written"].as_f64().unwrap_or(0.0) / 1048576.0,
            out["bytes_written_per_op"].as_f64().unwrap_or(0.0),
            out["commits"],
        );
    }
    s.close()?;
    Ok(())
}
