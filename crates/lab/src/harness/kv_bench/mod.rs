//! The YCSB key-value bench: the [`driver`] (one driver loop and the [`driver::Engine`] trait,
//! shared with the `compare` benchmark) and `flashlab kv load/run`'s phases and result rows.

pub mod driver;

use crate::spec::{de, RunSpec, SpecError};
use anyhow::{bail, Context, Result};
use blockdev::BlockDevice;
use driver::Phase;
use engine::kv::{NodeLayout, Options, Store, WritePath};
use serde::{Deserialize, Serialize};
use serde_json::{json, Value};
use std::path::PathBuf;
use workload::ycsb::{self, CoreWorkload, YcsbConfig, YcsbOp};

/// A YCSB phase (`flashlab kv load` / `kv run`) against flashlab's key-value store, in a file
/// or on a simulated SSD. Defaults: workload a, 10,000 records and operations of 1,000-byte
/// values, a commit every 1,000 operations, on the `tlc-nvme-2024` preset.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(default)]
#[cfg_attr(feature = "clap", derive(clap::Args))]
pub struct KvBenchSpec {
    /// The store's file (created if missing).
    #[cfg_attr(feature = "clap", arg(long, conflicts_with = "device"))]
    #[serde(deserialize_with = "de::opt_parsed")]
    pub path: Option<PathBuf>,
    /// `sim`: the simulated SSD (preset --preset), in memory.
    #[cfg_attr(feature = "clap", arg(long))]
    #[serde(deserialize_with = "de::opt_string")]
    pub device: Option<String>,
    /// SSD preset of `--device sim`.
    #[cfg_attr(feature = "clap", arg(long, default_value = "tlc-nvme-2024"))]
    #[serde(deserialize_with = "de::string")]
    pub preset: String,
    /// YCSB workload of the run phase: a|b|c|d|e|f|update.
    #[cfg_attr(feature = "clap", arg(long, default_value = "a"))]
    #[serde(deserialize_with = "de::string")]
    pub workload: String,
    /// Records the load phase inserts (keys 0..records).
    #[cfg_attr(feature = "clap", arg(long, default_value_t = 10_000))]
    #[serde(deserialize_with = "de::parsed")]
    pub records: u64,
    /// Operations the run phase performs.
    #[cfg_attr(feature = "clap", arg(long, default_value_t = 10_000))]
    #[serde(deserialize_with = "de::parsed")]
    pub ops: u64,
    /// Bytes of each value.
    #[cfg_attr(feature = "clap", arg(long, default_value_t = 1000))]
    #[serde(deserialize_with = "de::parsed")]
    pub value_bytes: u32,
    /// Commit (durably) after every K operations (when they wrote); 0: only at the end.
    #[cfg_attr(feature = "clap", arg(long, default_value_t = 1000))]
    #[serde(deserialize_with = "de::parsed")]
    pub commit_every: u64,
    /// Seed of the key choice and the values (same seed, same operations).
    #[cfg_attr(feature = "clap", arg(long, default_value_t = 1))]
    #[serde(deserialize_with = "de::parsed")]
    pub seed: u64,
    /// Size of a new store file, MiB (sparse).
    #[cfg_attr(feature = "clap", arg(long, default_value_t = 4096))]
    #[serde(deserialize_with = "de::parsed")]
    pub file_mib: u64,
    /// Compact when this share of the data bytes is stale (1: never).
    #[cfg_attr(feature = "clap", arg(long, default_value_t = 0.5))]
    #[serde(deserialize_with = "de::parsed")]
    pub compact_threshold: f64,
    /// Trim the pages compaction frees this many commits later, those still free (0: at
    /// once; a file punches holes, a simulated SSD gets TRIMs).
    #[cfg_attr(feature = "clap", arg(long, default_value_t = Options::default().trim_after_commits))]
    #[serde(deserialize_with = "de::parsed")]
    pub trim_after_commits: u64,
    /// Pages the store caches.
    #[cfg_attr(feature = "clap", arg(long, default_value_t = 8192))]
    #[serde(deserialize_with = "de::parsed")]
    pub cache_pages: usize,
    /// How commits reach the store: `cow` (index paths rewritten at every commit) or `wal`
    /// (ForestDB's: documents and a header per commit, the index at WAL flushes).
    #[cfg_attr(feature = "clap", arg(long, default_value = "cow"))]
    #[serde(deserialize_with = "de::string")]
    pub write_path: String,
    /// `--write-path wal`: documents in the WAL before it is flushed into the index.
    #[cfg_attr(feature = "clap", arg(long, default_value_t = engine::kv::WAL_FLUSH_DOCS_DEFAULT))]
    #[serde(deserialize_with = "de::parsed")]
    pub wal_flush_docs: u64,
    /// Index nodes on their pages: `plain`, `packed` (shared prefix once, varint pointers),
    /// or `auto` (packed with `--write-path wal`, ForestDB's compact nodes; plain with `cow`).
    #[cfg_attr(feature = "clap", arg(long, default_value = "auto"))]
    #[serde(default = "auto", deserialize_with = "de::string")]
    pub node_layout: String,
    /// Cut the leaves a flush rewrites side by side again as one run, filled: `yes`, `no`, or
    /// `auto` (yes with `--write-path wal`, no with `cow`).
    #[cfg_attr(feature = "clap", arg(long, default_value = "auto"))]
    #[serde(default = "auto", deserialize_with = "de::string")]
    pub refill_leaves: String,
}

fn auto() -> String {
    "auto".into()
}

impl Default for KvBenchSpec {
    fn default() -> Self {
        KvBenchSpec {
            path: None,
            device: None,
            preset: "tlc-nvme-2024".into(),
            workload: "a".into(),
            records: 10_000,
            ops: 10_000,
            value_bytes: 1000,
            commit_every: 1000,
            seed: 1,
            file_mib: 4096,
            compact_threshold: 0.5,
            trim_after_commits: Options::default().trim_after_commits,
            cache_pages: 8192,
            write_path: WritePath::Cow.name().into(),
            wal_flush_docs: engine::kv::WAL_FLUSH_DOCS_DEFAULT,
            node_layout: auto(),
            refill_leaves: auto(),
        }
    }
}

impl RunSpec for KvBenchSpec {
    /// Refused: an unknown workload, both or neither of a file and a device, a device other
    /// than `sim`. (The store refuses its own options: sizes, thresholds.)
    fn validate(&self) -> Result<(), SpecError> {
        self.workload()?;
        self.write_path()?;
        self.node_layout()?;
        self.refill_leaves()?;
        match (&self.path, self.device.as_deref()) {
            (Some(_), None) | (None, Some("sim")) => Ok(()),
            (Some(_), Some(_)) => Err(SpecError::rule("--path", "cannot be used with --device")),
            (None, Some(other)) => Err(SpecError::value(
                "--device",
                other,
                "only `sim` (or --path FILE for a file)",
            )),
            (None, None) => Err(SpecError::stated(
                "--path",
                "give --path FILE or --device sim",
            )),
        }
    }
}

impl KvBenchSpec {
    fn workload(&self) -> Result<CoreWorkload, SpecError> {
        CoreWorkload::parse(&self.workload).ok_or_else(|| {
            SpecError::stated(
                "--workload",
                format!(
                    "--workload {}: one of a, b, c, d, e, f, update",
                    self.workload
                ),
            )
        })
    }

    fn write_path(&self) -> Result<WritePath, SpecError> {
        WritePath::parse(&self.write_path)
            .ok_or_else(|| SpecError::value("--write-path", &self.write_path, "cow or wal"))
    }

    /// The layout `--node-layout` names (`auto`: packed on the `wal` path, plain on `cow`).
    fn node_layout(&self) -> Result<NodeLayout, SpecError> {
        match self.node_layout.as_str() {
            "auto" => Ok(match self.write_path()? {
                WritePath::Wal => NodeLayout::Packed,
                WritePath::Cow => NodeLayout::Plain,
            }),
            other => NodeLayout::parse(other)
                .ok_or_else(|| SpecError::value("--node-layout", other, "plain, packed or auto")),
        }
    }

    /// Whether `--refill-leaves` is on (`auto`: on the `wal` path).
    fn refill_leaves(&self) -> Result<bool, SpecError> {
        match self.refill_leaves.as_str() {
            "auto" => Ok(self.write_path()? == WritePath::Wal),
            "yes" => Ok(true),
            "no" => Ok(false),
            other => Err(SpecError::value(
                "--refill-leaves",
                other,
                "yes, no or auto",
            )),
        }
    }

    /// The store the phases run against, and its device's name (`file`, `sim`).
    fn open_store(&self) -> Result<(Store, String)> {
        let opts = Options {
            write_path: self.write_path()?,
            wal_flush_docs: self.wal_flush_docs,
            node_layout: self.node_layout()?,
            refill_leaves: self.refill_leaves()?,
            file_pages: self.file_mib * 256,
            compact_threshold: self.compact_threshold,
            trim_after_commits: self.trim_after_commits,
            cache_pages: self.cache_pages,
            ..Options::default()
        };
        match (&self.path, self.device.as_deref()) {
            (Some(p), None) => Ok((
                Store::open_path(p, opts).with_context(|| format!("opening {}", p.display()))?,
                "file".into(),
            )),
            (None, Some("sim")) => {
                let need =
                    (self.records + self.ops) * (self.value_bytes as u64 + 64) * 3 + (64 << 20);
                // One stream per data type (P5's policy 2): the preset's FTL gets the streams.
                let mut cfg = ssd::SsdConfig::preset(&self.preset)?;
                cfg.geometry.page_bytes = 4096;
                cfg.ftl.streams = opts.streams.streams();
                let bytes = need.max(cfg.min_logical_bytes()?);
                let cfg = cfg
                    .with_logical_capacity(bytes)
                    .with_context(|| format!("preset {} with {bytes} bytes", self.preset))?;
                let dev: Box<dyn BlockDevice> = Box::new(crate::devices::sim_device_checked(
                    cfg,
                    "--records or --ops",
                )?);
                Ok((Store::open(dev, opts)?, "sim".into()))
            }
            _ => bail!("give --path FILE or --device sim"),
        }
    }
}

/// Which phases a bench runs.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Phases {
    /// Insert `records` records.
    Load,
    /// `ops` operations of the workload (a store that is empty is loaded first).
    Run,
}

/// Progress of a phase: its name, operations done, operations in the phase.
pub type Progress<'a> = &'a mut dyn FnMut(&str, u64, u64);

/// The object `flashlab kv load|run --json` prints: the setup, the main phase's figures
/// (`ops`, `seconds`, `ops_per_second`, `latency_us`, `commits`, ...), `load` (a run that
/// loaded first) and `store` (the store's figures after the phase).
pub fn run(spec: &KvBenchSpec, phases: Phases, progress: Progress) -> Result<Value> {
    spec.validate()?;
    let workload = spec.workload()?;
    let cfg = YcsbConfig {
        workload,
        records: spec.records,
        operations: spec.ops,
        value_bytes: spec.value_bytes,
        seed: spec.seed,
        ..YcsbConfig::default()
    };
    let (mut s, device) = spec.open_store()?;
    let mut out = json!({
        "device": device,
        "workload": workload.name(),
        "records": spec.records,
        "value_bytes": spec.value_bytes,
        "commit_every": spec.commit_every,
        "seed": spec.seed,
        "write_path": spec.write_path,
        "wal_flush_docs": spec.wal_flush_docs,
        "node_layout": spec.node_layout().map(|l| l.name()).unwrap_or("?"),
        "refill_leaves": spec.refill_leaves().unwrap_or(false),
        "clock": s.pager().device().clock_kind().name(),
    });
    let run = phases == Phases::Run;
    let mut loaded = None;
    if !run || s.stat().live_keys == 0 {
        let m = phase(
            &mut s,
            ycsb::load(&cfg)?,
            spec.records,
            &cfg,
            spec.commit_every,
            "load",
            progress,
        )?;
        loaded = Some(report(&m));
    }
    let main = if run {
        let m = phase(
            &mut s,
            ycsb::run(&cfg)?,
            spec.ops,
            &cfg,
            spec.commit_every,
            "run",
            progress,
        )?;
        if let Some(l) = loaded {
            out["load"] = l;
        }
        report(&m)
    } else {
        loaded.unwrap_or(Value::Null)
    };
    out["phase"] = json!(if run { "run" } else { "load" });
    if let (Value::Object(o), Value::Object(m)) = (&mut out, main) {
        o.extend(m);
    }
    out["store"] = stat_json(&s);
    s.close()?;
    Ok(out)
}

/// One phase through the shared YCSB driver.
fn phase(
    s: &mut Store,
    ops: impl Iterator<Item = YcsbOp>,
    total: u64,
    cfg: &YcsbConfig,
    commit_every: u64,
    name: &str,
    progress: Progress,
) -> Result<Phase> {
    let m = driver::drive(s, name, ops, cfg, commit_every, &mut |n| {
        progress(name, n, total)
    })?;
    progress(name, total, total);
    Ok(m)
}

/// A phase's figures, as `kv load|run --json` prints them.
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

/// The store's figures (`kv stat --json`, and `store` of a bench).
pub fn stat_json(s: &Store) -> Value {
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
        "wal_entries": s.wal_entries(),
        "wal_tombstones": st.wal_tombstones,
        "wal_live_bytes": st.wal_live_bytes,
        "footprint_bytes": st.footprint_pages * st.page_bytes as u64,
        "capacity_bytes": st.capacity_pages * st.page_bytes as u64,
        "page_bytes": st.page_bytes,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_bench_spec_refuses_what_cannot_run() {
        let sim = KvBenchSpec {
            device: Some("sim".into()),
            ..KvBenchSpec::default()
        };
        assert_eq!(sim.validate(), Ok(()));
        assert_eq!(
            KvBenchSpec::default().validate().unwrap_err().field(),
            "--path"
        );
        let bad = KvBenchSpec {
            workload: "z".into(),
            ..sim.clone()
        };
        assert_eq!(bad.validate().unwrap_err().field(), "--workload");
        let hdd = KvBenchSpec {
            device: Some("hdd".into()),
            ..KvBenchSpec::default()
        };
        assert_eq!(hdd.validate().unwrap_err().field(), "--device");
    }
}
