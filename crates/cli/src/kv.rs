//! `flashlab kv`: the key-value store (`engine::kv`) from the command line.
//!
//! `load` and `run` are `lab::harness::kv_bench` (YCSB against a store in a file, `--path`, or
//! on the simulated SSD, `--device sim`, in memory for the run: `run` loads first), through
//! the YCSB driver `compare` uses too: every operation is timed (an operation that closes a
//! `--commit-every` group includes its commit) into an HDR histogram; this module adds the
//! progress bar and the one-line summary. `get`, `put`, `scan` look at a file store; `stat` reports its
//! figures; `check` verifies every checksum and the index without changing anything (exit 0
//! clean, 1 damaged, 2 when it could not run).

use anyhow::{bail, Context, Result};
use clap::{Args, Subcommand};
use engine::kv::{Options, Store};
use engine::EngineError;
use lab::harness::kv_bench::{self, stat_json, KvBenchSpec, Phases};
use serde_json::{json, Value};
use std::ops::Bound;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

#[derive(Args)]
pub struct KvArgs {
    #[command(subcommand)]
    command: KvCommand,
}

#[derive(Subcommand)]
enum KvCommand {
    /// YCSB load phase: insert --records records (--workload and --ops belong to `kv run`).
    #[command(mut_arg("workload", |a| a.hide(true)), mut_arg("ops", |a| a.hide(true)))]
    Load(Box<YcsbArgs>),
    /// YCSB run phase: --ops operations of --workload (a file store is loaded first if empty).
    Run(Box<YcsbArgs>),
    /// Print a key's value.
    Get {
        /// The store's file.
        #[arg(long)]
        path: PathBuf,
        /// The key (its bytes as given).
        key: String,
    },
    /// Set a key to a value and commit.
    Put {
        /// The store's file (created if missing).
        #[arg(long)]
        path: PathBuf,
        /// The key (its bytes as given).
        key: String,
        /// The value (its bytes as given).
        value: String,
    },
    /// Print keys and values in order, from --from (inclusive) to --to (exclusive).
    Scan {
        /// The store's file.
        #[arg(long)]
        path: PathBuf,
        /// The first key (inclusive) [default: the smallest].
        #[arg(long)]
        from: Option<String>,
        /// The key to stop before (exclusive) [default: past the largest].
        #[arg(long)]
        to: Option<String>,
        /// At most this many records.
        #[arg(long, default_value_t = 100)]
        limit: usize,
    },
    /// The store's figures: keys, live and stale bytes, pages by type, commits.
    Stat {
        /// The store's file.
        #[arg(long)]
        path: PathBuf,
        /// One JSON object on stdout.
        #[arg(long)]
        json: bool,
    },
    /// Verify every checksum and the index; changes nothing. Exit 0 clean, 1 damaged.
    Check {
        /// The store's file.
        #[arg(long)]
        path: PathBuf,
        /// One JSON object on stdout (the damage found, if any).
        #[arg(long)]
        json: bool,
    },
}

#[derive(Args, Clone)]
struct YcsbArgs {
    #[command(flatten)]
    spec: KvBenchSpec,
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
        KvCommand::Load(a) => ycsb_phase(a, Phases::Load),
        KvCommand::Run(a) => ycsb_phase(a, Phases::Run),
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
    existing_store_file(path)?;
    Store::open_read_only(path, Options::default())
        .with_context(|| format!("opening {} read-only", path.display()))
}

fn get(path: &Path, key: &str) -> Result<()> {
    let mut s = existing(path)?;
    match s.get(key.as_bytes())? {
        Some(v) => flashlab::outln!("{}", String::from_utf8_lossy(&v))?,
        None => bail!("{key}: not found in {}", path.display()),
    }
    Ok(())
}

fn put(path: &Path, key: &str, value: &str) -> Result<()> {
    store_file(path)?;
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
        flashlab::outln!(
            "{}\t{}",
            String::from_utf8_lossy(&k),
            String::from_utf8_lossy(&v)
        )?;
    }
    Ok(())
}

fn stat(path: &Path, as_json: bool) -> Result<()> {
    let s = existing(path)?;
    let j = stat_json(&s);
    if as_json {
        flashlab::outln!("{j}")?;
        return Ok(());
    }
    let st = s.stat();
    flashlab::outln!("store            {}", path.display())?;
    flashlab::outln!("live keys        {}", st.live_keys)?;
    flashlab::outln!("live bytes       {}", st.live_bytes)?;
    flashlab::outln!("stale bytes      {}", st.stale_bytes)?;
    flashlab::outln!(
        "WAL only         {} keys ({} deletes), {} bytes (not yet in the index or the counts above)",
        st.wal_entries - st.wal_tombstones,
        st.wal_tombstones,
        st.wal_live_bytes
    )?;
    let p = st.pages_in_use;
    flashlab::outln!(
        "pages in use     superblock {}, header {}, index {}, data {}",
        p.superblock,
        p.header,
        p.index,
        p.data
    )?;
    let w = st.pages_written;
    flashlab::outln!(
        "pages written    superblock {}, header {}, index {}, data {}",
        w.superblock,
        w.header,
        w.index,
        w.data
    )?;
    flashlab::outln!("headers written  {}", st.headers)?;
    flashlab::outln!("last commit      {}", st.commit_seq)?;
    flashlab::outln!("compactions      {}", st.generation)?;
    flashlab::outln!(
        "footprint        {:.1} MiB of {:.1} MiB",
        (st.footprint_pages * st.page_bytes as u64) as f64 / 1048576.0,
        (st.capacity_pages * st.page_bytes as u64) as f64 / 1048576.0
    )?;
    Ok(())
}

fn check(path: &Path, as_json: bool) -> ExitCode {
    if !path.exists() {
        eprintln!("error: {}: no such store", path.display());
        return ExitCode::from(2);
    }
    let damage = match existing_store_file(path).and_then(|()| damage_of(path)) {
        Ok(d) => d,
        Err(e) => {
            eprintln!("error: {}", crate::error_chain(&e));
            return ExitCode::from(2);
        }
    };
    match print_damage(path, &damage, as_json) {
        Err(e) => {
            eprintln!("error: {}", crate::error_chain(&e));
            ExitCode::from(2)
        }
        Ok(()) if damage.is_empty() => ExitCode::SUCCESS,
        Ok(()) => ExitCode::from(1),
    }
}

/// The store's damage (byte offset where known, what): none when clean; an error when the
/// file cannot be opened at all.
fn damage_of(path: &Path) -> Result<Vec<(Option<u64>, String)>> {
    let opts = Options {
        create: false,
        ..Options::default()
    };
    Ok(match Store::open_read_only(path, opts) {
        Ok(mut s) => match s.check() {
            Ok(d) => d.into_iter().map(|d| (Some(d.offset), d.what)).collect(),
            Err(e) => vec![(None, e.to_string())],
        },
        Err(e @ EngineError::Corrupt(_)) => {
            vec![(e.offset(), e.to_string())]
        }
        Err(e) => return Err(e).with_context(|| format!("opening {}", path.display())),
    })
}

fn print_damage(path: &Path, damage: &[(Option<u64>, String)], as_json: bool) -> Result<()> {
    if as_json {
        let items: Vec<Value> = damage
            .iter()
            .map(|(o, w)| json!({"offset": o, "what": w}))
            .collect();
        flashlab::outln!("{}", json!({"clean": damage.is_empty(), "damage": items}))?;
    } else if damage.is_empty() {
        flashlab::outln!("{}: clean", path.display())?;
    } else {
        for (o, w) in damage {
            match o {
                Some(o) => flashlab::outln!("damaged at byte {o}: {w}")?,
                None => flashlab::outln!("damaged: {w}")?,
            }
        }
    }
    Ok(())
}

/// A store is a regular file (or a block device): a directory, FIFO, character device or
/// socket is refused by name, before an open that would fail obscurely (a directory:
/// "O_DIRECT unsupported") or wait forever (a FIFO). An empty file is no store either.
fn store_file(path: &Path) -> Result<()> {
    use std::os::unix::fs::FileTypeExt;
    let Ok(meta) = std::fs::metadata(path) else {
        return Ok(()); // missing: the open says so (or creates it)
    };
    let t = meta.file_type();
    let what = if t.is_dir() {
        "a directory"
    } else if t.is_fifo() {
        "a FIFO"
    } else if t.is_char_device() {
        "a character device"
    } else if t.is_socket() {
        "a socket"
    } else {
        return Ok(());
    };
    bail!(
        "{}: {what}, not a store file; give the path of a store file (`kv load` or `kv put` creates one)",
        path.display()
    )
}

/// [`store_file`], and not empty: for the commands that read an existing store.
fn existing_store_file(path: &Path) -> Result<()> {
    store_file(path)?;
    if std::fs::metadata(path).is_ok_and(|m| m.is_file() && m.len() == 0) {
        bail!(
            "{}: an empty file, not a store (`kv load` or `kv put` on a new path creates one)",
            path.display()
        );
    }
    Ok(())
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

/// `kv load` inserts --records records: --workload and --ops (hidden from its help) mean
/// nothing there, so a value other than their default is refused rather than ignored.
fn refuse_run_flags_on_a_load(spec: &KvBenchSpec, phases: &Phases) -> Result<()> {
    let default = KvBenchSpec::default();
    let given = [
        ("--workload", spec.workload != default.workload),
        ("--ops", spec.ops != default.ops),
    ];
    match given.iter().find(|(_, set)| *set) {
        Some((flag, _)) if matches!(phases, Phases::Load) => bail!(
            "{flag} applies to `kv run`: `kv load` inserts --records records (then `kv run --workload W --ops N` runs the operations)"
        ),
        _ => Ok(()),
    }
}

fn ycsb_phase(a: &YcsbArgs, phases: Phases) -> Result<()> {
    refuse_run_flags_on_a_load(&a.spec, &phases)?;
    if let Some(path) = &a.spec.path {
        store_file(path)?;
    }
    let mut bar: Option<(String, indicatif::ProgressBar)> = None;
    let out = kv_bench::run(&a.spec, phases, &mut |phase, done, total| {
        if !matches!(&bar, Some((p, _)) if p == phase) {
            if let Some((_, b)) = bar.take() {
                b.finish_and_clear();
            }
            bar = progress(a.quiet, total, phase).map(|b| (phase.to_string(), b));
        }
        if let Some((_, b)) = &bar {
            b.set_position(done);
        }
    });
    if let Some((_, b)) = bar {
        b.finish_and_clear();
    }
    let out = out?;
    if a.json {
        flashlab::outln!("{out}")?;
    } else {
        let l = &out["latency_us"];
        flashlab::outln!(
            "{} {} on {}: {} ops in {:.2} s = {:.0} ops/s; latency p50 {:.1} us, p99 {:.1} us, p99.9 {:.1} us; {:.1} MiB written ({:.0} B/op), {} commits",
            out["phase"].as_str().unwrap_or(""),
            out["workload"].as_str().unwrap_or(""),
            out["device"].as_str().unwrap_or(""),
            out["ops"],
            out["seconds"].as_f64().unwrap_or(0.0),
            out["ops_per_second"].as_f64().unwrap_or(0.0),
            l["p50"].as_f64().unwrap_or(0.0),
            l["p99"].as_f64().unwrap_or(0.0),
            l["p999"].as_f64().unwrap_or(0.0),
            out["device_bytes_written"].as_f64().unwrap_or(0.0) / 1048576.0,
            out["bytes_written_per_op"].as_f64().unwrap_or(0.0),
            out["commits"],
        )?;
    }
    Ok(())
}
