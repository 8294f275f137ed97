//! [`SimSpec`]: a `flashlab sim` run as the user states it (preset, FTL overrides, workload,
//! volumes as text such as `256MiB` and `5x`). [`SimSpec::resolve`] reads the preset or config
//! file and the trace's span and gives the [`SimOptions`] the simulator runs.

use super::flow::{parse_seconds, FlowSpec};
use super::{de, RunSpec, SpecError};
use crate::sim::{FlashWrites, Precondition, SimOptions};
use crate::units::{parse_bytes, parse_multiple};
use anyhow::Result;
use policy::streams::LbaPolicySpec;
use serde::{Deserialize, Serialize};
use ssd::{FtlKind, GcPolicy, GcStreamMode, SsdConfig};
use std::path::PathBuf;

/// The preset a run starts from when it names neither a preset nor a config file.
pub const DEFAULT_PRESET: &str = "mlc-sata-2010";

/// `max_memory` when /proc/meminfo cannot be read.
const FALLBACK_MAX_MEMORY_BYTES: u64 = 4 << 30;

/// A `flashlab sim` run. Defaults: the `mlc-sata-2010` preset, uniform random single-page
/// writes, a full preconditioning, 1x the capacity measured, seed 1.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(default)]
#[cfg_attr(feature = "clap", derive(clap::Args))]
#[cfg_attr(feature = "clap", command(after_long_help = workload::SPEC_HELP))]
pub struct SimSpec {
    /// SSD preset (see `flashlab presets`) [default: mlc-sata-2010]. Options marked
    /// "[default: the preset's]" take the preset's (or --config's) value when not given.
    #[cfg_attr(feature = "clap", arg(long, conflicts_with = "config"))]
    #[serde(deserialize_with = "de::opt_string")]
    pub preset: Option<String>,
    /// An SSD config TOML file, instead of --preset (`flashlab presets --show NAME` prints one).
    #[cfg_attr(feature = "clap", arg(long))]
    #[serde(deserialize_with = "de::opt_parsed")]
    pub config: Option<PathBuf>,
    /// FTL scheme: page, block, bast, fast, dftl, ioa [default: the preset's].
    #[cfg_attr(feature = "clap", arg(long))]
    #[serde(deserialize_with = "de::opt_string")]
    pub ftl: Option<String>,
    /// GC victim policy: greedy, cost-benefit, fifo [default: the preset's].
    #[cfg_attr(feature = "clap", arg(long))]
    #[serde(deserialize_with = "de::opt_string")]
    pub gc: Option<String>,
    /// Over-provisioning, (physical - logical) / logical, e.g. 0.07 [default: the preset's].
    #[cfg_attr(feature = "clap", arg(long))]
    #[serde(deserialize_with = "de::opt_parsed")]
    pub op: Option<f64>,
    /// Logical capacity, e.g. 4GiB (resizes blocks per plane) [default: the preset's].
    #[cfg_attr(feature = "clap", arg(long))]
    #[serde(deserialize_with = "de::opt_string")]
    pub capacity: Option<String>,
    /// Write streams (1 = none) [default: the preset's].
    #[cfg_attr(feature = "clap", arg(long))]
    #[serde(deserialize_with = "de::opt_parsed")]
    pub streams: Option<u16>,
    /// Which device stream each host write goes to: none (all on stream 0), hot-cold (oracle:
    /// the hot set of a hotcold-write workload on stream 1), by-lba-range:N (N equal LBA
    /// ranges on streams 0..N), auto[:RANGES] (online lifetime grouping of RANGES LBA ranges,
    /// default 64, into the device's streams). Needs --streams to offer the streams it uses.
    #[cfg_attr(feature = "clap", arg(long, default_value = "none"))]
    #[serde(deserialize_with = "de::string")]
    pub stream_policy: String,
    /// Where GC copies go: separate (one GC stream shared by all host streams), victim (the
    /// victim block's own stream) or per-stream (a GC stream per host stream) [default: the
    /// preset's].
    #[cfg_attr(feature = "clap", arg(long))]
    #[serde(deserialize_with = "de::opt_string")]
    pub gc_stream: Option<String>,
    /// NVMe FDP: reclaim-unit size, e.g. 8MiB, a multiple of the erase block that divides a
    /// die (any --fdp-* option turns FDP on; the page FTL only) [default: the preset's, else
    /// one erase block].
    #[cfg_attr(feature = "clap", arg(long, value_name = "SIZE"))]
    #[serde(deserialize_with = "de::opt_string")]
    pub fdp_ru_size: Option<String>,
    /// NVMe FDP: reclaim-unit handles, one per placement ID (the device's streams)
    /// [default: --streams, or the preset's].
    #[cfg_attr(feature = "clap", arg(long))]
    #[serde(deserialize_with = "de::opt_parsed")]
    pub fdp_handles: Option<u16>,
    /// NVMe FDP handle type: initial (initially isolated: GC may mix handles' data) or
    /// persistent (persistently isolated: GC keeps each handle's data apart)
    /// [default: the preset's, else initial].
    #[cfg_attr(feature = "clap", arg(long))]
    #[serde(deserialize_with = "de::opt_string")]
    pub fdp_isolation: Option<String>,
    /// Foreground GC threshold: free blocks per die [default: the preset's].
    #[cfg_attr(feature = "clap", arg(long))]
    #[serde(deserialize_with = "de::opt_parsed")]
    pub gc_free_blocks_min: Option<u32>,
    /// Log blocks in the device (bast, fast, ioa) [default: the preset's].
    #[cfg_attr(feature = "clap", arg(long))]
    #[serde(deserialize_with = "de::opt_parsed")]
    pub log_blocks: Option<u32>,
    /// DFTL cached mapping table entries [default: the preset's].
    #[cfg_attr(feature = "clap", arg(long))]
    #[serde(deserialize_with = "de::opt_parsed")]
    pub cmt_entries: Option<u32>,
    /// Timing model: on or off (off: the pure FTL/GC path, for fast WAF studies)
    /// [default: the preset's].
    #[cfg_attr(feature = "clap", arg(long))]
    #[serde(deserialize_with = "de::opt_string")]
    pub timing: Option<String>,
    /// Host queue depth [default: the preset's].
    #[cfg_attr(feature = "clap", arg(long))]
    #[serde(deserialize_with = "de::opt_parsed")]
    pub queue_depth: Option<u32>,
    /// Largest memory the simulated device may take, e.g. 2GiB: a device whose estimate
    /// (mapping tables, page tags, block state, host queue; `memory_bytes_estimate` in --json)
    /// is larger is refused before anything is allocated [default: half of physical RAM, from
    /// /proc/meminfo; 4 GiB where that cannot be read].
    #[cfg_attr(feature = "clap", arg(long, value_name = "SIZE"))]
    #[serde(deserialize_with = "de::opt_string")]
    pub max_memory: Option<String>,
    /// Stop with an error once the device has programmed more flash pages than this (host
    /// writes plus GC and merge copies, preconditioning included): a count, e.g. 5000000, or a
    /// multiple of the logical capacity, e.g. 50x. A guard for sweeps over configs whose write
    /// amplification can explode (a block-mapped FTL copies a whole block per random
    /// overwrite) [default: no limit].
    #[cfg_attr(feature = "clap", arg(long, value_name = "COUNT|Nx"))]
    #[serde(deserialize_with = "de::opt_string")]
    pub max_flash_writes: Option<String>,
    /// Keep full page payloads instead of 64-bit tags. Refused here: `sim` writes no data, so
    /// payloads would change only memory use (the engine experiments use them).
    #[cfg_attr(feature = "clap", arg(long))]
    #[serde(deserialize_with = "de::flag")]
    pub payloads: bool,
    /// Run the FTL invariant verifier after every GC/merge (slow).
    #[cfg_attr(feature = "clap", arg(long))]
    #[serde(deserialize_with = "de::flag")]
    pub check_invariants: bool,
    /// Workload (see below), e.g. uniform-write, zipf-write:0.99, hotcold-write:0.8:0.2, trace:PATH.
    #[cfg_attr(feature = "clap", arg(long, default_value = "uniform-write"))]
    #[serde(deserialize_with = "de::string")]
    pub workload: String,
    /// Trace format for trace:PATH: msr, spc, disksim, systor, tencent, blkparse (required
    /// with a trace; refused without one).
    #[cfg_attr(feature = "clap", arg(long))]
    #[serde(deserialize_with = "de::opt_string")]
    pub trace_format: Option<String>,
    /// Trace address mapping onto the device: wrap (modulo capacity) or scale (span ->
    /// capacity; reads the trace twice, so it must be a file, not a pipe) [default: wrap].
    #[cfg_attr(feature = "clap", arg(long))]
    #[serde(deserialize_with = "de::opt_string")]
    pub trace_mapping: Option<String>,
    /// Issue trace requests no earlier than their timestamps (default: as fast as the queue
    /// allows; refused without a trace).
    #[cfg_attr(feature = "clap", arg(long))]
    #[serde(deserialize_with = "de::flag")]
    pub trace_timing: bool,
    /// Request size, e.g. 16KiB (a whole number of pages) [default: one page of the preset].
    #[cfg_attr(feature = "clap", arg(long))]
    #[serde(deserialize_with = "de::opt_string")]
    pub request_size: Option<String>,
    /// Host writes measured after preconditioning, in multiples of the logical capacity, e.g.
    /// 5x (more than 0) [default: a trace's end, or 1x].
    #[cfg_attr(feature = "clap", arg(long))]
    #[serde(deserialize_with = "de::opt_string")]
    pub write_volume: Option<String>,
    /// Preconditioning: none, fill (sequential fill), or full[:N] (fill + N x capacity random writes; N defaults to 1).
    #[cfg_attr(feature = "clap", arg(long, default_value = "full"))]
    #[serde(deserialize_with = "de::string")]
    pub precondition: String,
    /// How uniform draws turn random words into pages (uniform and hot/cold workloads, the
    /// preconditioning's random writes): lemire (Lemire's multiply with its exact rejection:
    /// one random word per draw for a power-of-two page count) or rand (rand 0.8's
    /// gen_range, about two words per draw: the sampler of every run before 2026-11-29, whose
    /// seeded figures it gives back; as uniform, but other pages at the same seed).
    #[cfg_attr(feature = "clap", arg(long, default_value = "lemire"))]
    #[serde(deserialize_with = "de::string")]
    pub sampler: String,
    #[cfg_attr(feature = "clap", arg(long, default_value_t = 1))]
    #[serde(deserialize_with = "de::parsed")]
    pub seed: u64,
    /// A job file (TOML): a `[device]` table with these options and one or more `[[flow]]`
    /// tables, each a workload with its share or rate (see docs/commands.md). Replaces the
    /// device and workload flags.
    #[cfg_attr(feature = "clap", arg(long, value_name = "FILE.toml"))]
    #[serde(deserialize_with = "de::opt_parsed")]
    pub job: Option<PathBuf>,
    /// Record IOPS, bandwidth and latency per flow every DURATION of simulated time (e.g.
    /// 10ms) into the result's `log` (and `--log FILE.csv`).
    #[cfg_attr(feature = "clap", arg(long, value_name = "DURATION"))]
    #[serde(deserialize_with = "de::opt_string")]
    pub log_interval: Option<String>,
}

impl Default for SimSpec {
    fn default() -> Self {
        SimSpec {
            preset: None,
            config: None,
            ftl: None,
            gc: None,
            op: None,
            capacity: None,
            streams: None,
            stream_policy: "none".into(),
            gc_stream: None,
            fdp_ru_size: None,
            fdp_handles: None,
            fdp_isolation: None,
            gc_free_blocks_min: None,
            log_blocks: None,
            cmt_entries: None,
            timing: None,
            queue_depth: None,
            max_memory: None,
            max_flash_writes: None,
            payloads: false,
            check_invariants: false,
            workload: "uniform-write".into(),
            trace_format: None,
            trace_mapping: None,
            trace_timing: false,
            request_size: None,
            write_volume: None,
            precondition: "full".into(),
            sampler: "lemire".into(),
            seed: 1,
            job: None,
            log_interval: None,
        }
    }
}

impl RunSpec for SimSpec {
    const VALUE_NAMES: &'static [(&'static str, &'static str)] =
        &[("max_memory", "SIZE"), ("max_flash_writes", "COUNT|Nx")];

    /// Refused: options that would be ignored (trace options without a trace, payloads),
    /// names and sizes that do not parse, a zero write volume.
    fn validate(&self) -> Result<(), SpecError> {
        self.check_ignored()?;
        self.check_names()?;
        if let Some(c) = &self.capacity {
            parse_bytes(c).map_err(|e| SpecError::refused("--capacity", e))?;
        }
        if let Some(m) = &self.max_memory {
            parse_bytes(m).map_err(|e| SpecError::refused("--max-memory", e))?;
        }
        self.max_flash_writes()?;
        self.log_interval_ns()?;
        if self.job.is_none() {
            self.flag_flow().validate()?;
        }
        if let Some(v) = &self.write_volume {
            parse_volume(v)?;
        }
        parse_precondition(&self.precondition)?;
        parse_sampler(&self.sampler)?;
        LbaPolicySpec::parse(&self.stream_policy)
            .map_err(|e| SpecError::stated("--stream-policy", e))?;
        Ok(())
    }
}

impl SimSpec {
    /// Options that would be accepted and then have no effect are refused, with the reason.
    fn check_ignored(&self) -> Result<(), SpecError> {
        if self.preset.is_some() && self.config.is_some() {
            return Err(SpecError::rule("--preset", "cannot be used with --config"));
        }
        if self.job.is_none() {
            self.flag_flow().validate()?;
            if self.trace_timing && !self.workload.starts_with("trace:") {
                return Err(SpecError::rule(
                    "--trace-timing",
                    format!(
                        "applies only to --workload trace:PATH (the workload is `{}`)",
                        self.workload
                    ),
                ));
            }
        }
        if self.payloads {
            return Err(SpecError::refused("--payloads", "`flashlab sim` moves no data (pages carry 64-bit tags), so payloads would only cost memory; they matter to the engine experiments (`flashlab reproduce as-btree`), which turn them on themselves"));
        }
        Ok(())
    }

    /// The FTL, GC and timing names parse.
    fn check_names(&self) -> Result<(), SpecError> {
        if let Some(s) = &self.ftl {
            parse_ftl(s)?;
        }
        if let Some(s) = &self.gc {
            parse_gc(s)?;
        }
        if let Some(s) = &self.gc_stream {
            parse_gc_stream(s)?;
        }
        if let Some(t) = &self.timing {
            parse_timing(t)?;
        }
        if let Some(i) = &self.fdp_isolation {
            parse_isolation(i)?;
        }
        if let Some(s) = &self.fdp_ru_size {
            parse_bytes(s).map_err(|e| SpecError::refused("--fdp-ru-size", e))?;
        }
        Ok(())
    }

    /// `--fdp-*`: FDP on `cfg` (after any resize: the RU must divide the final die).
    fn apply_fdp(&self, cfg: &mut SsdConfig) -> Result<(), SpecError> {
        if self.fdp_ru_size.is_none() && self.fdp_handles.is_none() && self.fdp_isolation.is_none()
        {
            return Ok(());
        }
        let was = cfg.ftl.fdp;
        let isolation = match &self.fdp_isolation {
            Some(i) => parse_isolation(i)?,
            None => was.map_or(ssd::Isolation::Initial, |f| f.isolation),
        };
        let ru_blocks = match &self.fdp_ru_size {
            Some(s) => {
                let bytes = parse_bytes(s).map_err(|e| SpecError::refused("--fdp-ru-size", e))?;
                let g = &cfg.geometry;
                // An RU spanning dies (`ru_dies`, from the preset or config) takes its blocks
                // from each of them: the size is of the whole RU.
                let dies = was.map_or(1, |f| f.ru_dies.max(1)) as u64;
                let block = g.pages_per_block as u64 * g.page_bytes as u64 * dies;
                if bytes == 0 || bytes % block != 0 || bytes / block > u32::MAX as u64 {
                    return Err(SpecError::value(
                        "--fdp-ru-size",
                        s,
                        format!("not a whole number of {block}-byte erase blocks"),
                    ));
                }
                (bytes / block) as u32
            }
            None => was.map_or(1, |f| f.ru_blocks),
        };
        if let Some(g) = self.gc_stream.as_deref().map(parse_gc_stream).transpose()? {
            if g != isolation.gc_stream() {
                return Err(SpecError::rule("--gc-stream", format!("with FDP the handle type decides where GC copies go (--fdp-isolation {} is --gc-stream {}): drop --gc-stream", isolation.name(), isolation.gc_stream().name())));
            }
        }
        if self.fdp_handles == Some(0) {
            return Err(SpecError::value(
                "--fdp-handles",
                "0",
                "an FDP device has at least one reclaim-unit handle",
            ));
        }
        let handles = self.fdp_handles.unwrap_or(cfg.ftl.streams);
        *cfg = ssd::config::fdp::with_fdp(cfg, handles, ru_blocks, isolation);
        if let Some(f) = was {
            *cfg = ssd::config::fdp::spanning_dies(cfg, f.ru_dies);
        }
        Ok(())
    }

    /// The options the simulator runs: the spec validated, the preset or config file read
    /// and overridden, the trace's span scanned for `trace_mapping = scale`. With `job`, the
    /// job file's device and flows (see [`super::job`]); else one flow from the flags.
    pub fn resolve(&self) -> Result<SimOptions> {
        if let Some(path) = &self.job {
            self.check_job_alone()?;
            let mut opts = super::job::load(path)?;
            opts.log_interval_ns = self.log_interval_ns()?;
            if let Some(m) = &self.max_memory {
                opts.max_memory_bytes =
                    parse_bytes(m).map_err(|e| SpecError::refused("--max-memory", e))?;
            }
            if self.max_flash_writes.is_some() {
                opts.max_flash_writes = self.max_flash_writes()?;
            }
            return Ok(opts);
        }
        let mut opts = self.resolve_device()?;
        opts.flows = vec![self.flag_flow().resolve(&opts.config, 0, self.seed)?];
        Ok(opts)
    }

    /// The one flow the single-workload flags describe (a one-flow job).
    pub fn flag_flow(&self) -> FlowSpec {
        FlowSpec {
            name: self.workload.clone(),
            workload: self.workload.clone(),
            request_size: self.request_size.clone(),
            trace_format: self.trace_format.clone(),
            trace_mapping: self.trace_mapping.clone(),
            ..FlowSpec::default()
        }
    }

    /// With `--job`, the device and workload flags are refused (the job file gives them).
    fn check_job_alone(&self) -> Result<(), SpecError> {
        let given = SimSpec {
            job: None,
            log_interval: None,
            max_memory: None,
            max_flash_writes: None,
            ..self.clone()
        };
        let fields = |s: &SimSpec| match serde_json::to_value(s) {
            Ok(serde_json::Value::Object(m)) => m,
            _ => unreachable!("a run spec serializes to a JSON object"),
        };
        let (given, default) = (fields(&given), fields(&SimSpec::default()));
        match given.iter().find(|(k, v)| default.get(*k) != Some(*v)) {
            None => Ok(()),
            Some((k, _)) => Err(SpecError::Stated {
                field: "--job",
                text: format!("--{} cannot be given with --job: set `{k}` in the job file's [device] table (or in a [[flow]] table for a workload option)", k.replace('_', "-")),
            }),
        }
    }

    /// The device part of the run (no flows yet): preset or config file with the overrides,
    /// volume, preconditioning, streams, seed and memory limit.
    pub(crate) fn resolve_device(&self) -> Result<SimOptions> {
        self.check_ignored()?;
        let preset = match &self.config {
            Some(_) => None,
            None => Some(self.preset.clone().unwrap_or_else(|| DEFAULT_PRESET.into())),
        };
        let mut cfg = match (&self.config, &preset) {
            (Some(p), _) => SsdConfig::from_file(p)?,
            (None, Some(name)) => SsdConfig::preset(name)?,
            (None, None) => unreachable!("a preset is chosen when no config is given"),
        };
        self.validate()?;
        self.apply_ftl(&mut cfg)?;
        if let Some(c) = &self.capacity {
            let bytes = parse_bytes(c).map_err(|e| SpecError::refused("--capacity", e))?;
            cfg = cfg.with_logical_capacity(bytes)?;
            self.check_honoured(&cfg, c)?;
        }
        self.apply_fdp(&mut cfg)?;
        cfg.validate()?;
        if let Some(v) = &self.write_volume {
            check_measurable(v, parse_volume(v)?, &cfg)?;
        }
        Ok(SimOptions {
            config: cfg,
            preset,
            config_path: self.config.clone(),
            flows: Vec::new(),
            job_path: None,
            write_volume: self.write_volume.as_deref().map(parse_volume).transpose()?,
            precondition: parse_precondition(&self.precondition)?,
            sampler: parse_sampler(&self.sampler)?,
            replay_trace_timing: self.trace_timing,
            stream_policy: LbaPolicySpec::parse(&self.stream_policy)?,
            seed: self.seed,
            max_memory_bytes: self.max_memory_bytes()?,
            max_flash_writes: self.max_flash_writes()?,
            log_interval_ns: self.log_interval_ns()?,
        })
    }

    /// `max_flash_writes`: a count of pages, or `Nx` of the logical capacity.
    fn max_flash_writes(&self) -> Result<Option<FlashWrites>, SpecError> {
        let Some(v) = &self.max_flash_writes else {
            return Ok(None);
        };
        let how = "expected a count of flash pages, e.g. 5000000, or a multiple of the capacity, e.g. 50x";
        let t = v.trim();
        if t.ends_with(['x', 'X']) {
            let x = parse_multiple(t).map_err(|e| SpecError::refused("--max-flash-writes", e))?;
            if !(x.is_finite() && x > 0.0) {
                return Err(SpecError::value("--max-flash-writes", v, how));
            }
            return Ok(Some(FlashWrites::Capacity(x)));
        }
        match t.parse::<u64>() {
            Ok(n) if n > 0 => Ok(Some(FlashWrites::Pages(n))),
            _ => Err(SpecError::value("--max-flash-writes", v, how)),
        }
    }

    fn log_interval_ns(&self) -> Result<Option<u64>, SpecError> {
        let Some(t) = &self.log_interval else {
            return Ok(None);
        };
        let s = parse_seconds(t).map_err(|e| SpecError::refused("--log-interval", e))?;
        if s <= 0.0 {
            return Err(SpecError::value(
                "--log-interval",
                t,
                "expected a positive time, e.g. 10ms",
            ));
        }
        Ok(Some(((s * 1e9).round() as u64).max(1)))
    }

    /// `max_memory`, or the process's real limit (the least of half the RAM, RLIMIT_AS,
    /// RLIMIT_DATA and the cgroup's memory.max): a device larger than that would push the
    /// machine into swap or the allocator into an abort.
    fn max_memory_bytes(&self) -> Result<u64, SpecError> {
        match &self.max_memory {
            Some(m) => parse_bytes(m).map_err(|e| SpecError::refused("--max-memory", e)),
            None => match crate::harness::memory_limit::memory_limit() {
                (u64::MAX, _) => Ok(FALLBACK_MAX_MEMORY_BYTES),
                (bytes, _from) => Ok(bytes),
            },
        }
    }

    /// A flag `--capacity` would lower to fit the spare blocks is refused, never clamped.
    fn check_honoured(&self, cfg: &SsdConfig, capacity: &str) -> Result<(), SpecError> {
        let f = &cfg.ftl;
        for (flag, given, kept) in [
            (
                "--gc-free-blocks-min",
                self.gc_free_blocks_min,
                f.gc_free_blocks_min,
            ),
            ("--log-blocks", self.log_blocks, f.log_blocks),
        ] {
            if let Some(v) = given.filter(|&v| v != kept) {
                return Err(SpecError::stated(flag, format!("{flag} {v}: a {capacity} device's spare blocks hold at most {kept} (beside the open blocks and the GC reserve); give at most {kept}, or raise --op or --capacity")));
            }
        }
        Ok(())
    }

    fn apply_ftl(&self, cfg: &mut SsdConfig) -> Result<(), SpecError> {
        let f = &mut cfg.ftl;
        if let Some(s) = &self.ftl {
            f.scheme = parse_ftl(s)?;
        }
        if let Some(s) = &self.gc {
            f.gc_policy = parse_gc(s)?;
        }
        if let Some(s) = &self.gc_stream {
            f.gc_stream = parse_gc_stream(s)?;
        }
        f.op = self.op.unwrap_or(f.op);
        f.streams = self.streams.unwrap_or(f.streams);
        f.gc_free_blocks_min = self.gc_free_blocks_min.unwrap_or(f.gc_free_blocks_min);
        f.log_blocks = self.log_blocks.unwrap_or(f.log_blocks);
        f.cmt_entries = self.cmt_entries.unwrap_or(f.cmt_entries);
        f.check_invariants |= self.check_invariants;
        if let Some(t) = &self.timing {
            cfg.timing.enabled = parse_timing(t)?;
        }
        if let Some(q) = self.queue_depth {
            cfg.timing.host_queue_depth = q;
        }
        Ok(())
    }
}

/// The most random-write passes `--precondition full:N` runs (steady state comes within a
/// few); ten times it bounds `--write-volume`.
const PRECONDITION_PASSES_MAX: f64 = 100.0;

/// The largest `--write-volume` (sim, lifetime): more would run for days.
pub(crate) const WRITE_VOLUME_MAX: f64 = PRECONDITION_PASSES_MAX * 10.0;

/// Fewer measured pages than one block cannot show any GC: refused; so is a volume that would
/// run for days.
fn check_measurable(v: &str, volume: f64, cfg: &SsdConfig) -> Result<(), SpecError> {
    let pages = volume * cfg.logical_pages() as f64;
    let ppb = cfg.geometry.pages_per_block;
    if pages < ppb as f64 {
        return Err(SpecError::value("--write-volume", v, format!("measures {pages:.3e} pages, fewer than one block ({ppb} pages), too little to measure a write amplification; give e.g. 0.5x or 5x")));
    }
    let most = WRITE_VOLUME_MAX;
    if volume > most {
        return Err(SpecError::value(
            "--write-volume",
            v,
            format!("more than {most} x the capacity would run for days; give at most that"),
        ));
    }
    Ok(())
}

fn parse_ftl(s: &str) -> Result<FtlKind, SpecError> {
    FtlKind::parse(s).ok_or_else(|| {
        SpecError::value("--ftl", s, "expected page, block, bast, fast, dftl or ioa")
    })
}

fn parse_gc(s: &str) -> Result<GcPolicy, SpecError> {
    GcPolicy::parse(s)
        .ok_or_else(|| SpecError::value("--gc", s, "expected greedy, cost-benefit or fifo"))
}

fn parse_gc_stream(s: &str) -> Result<GcStreamMode, SpecError> {
    GcStreamMode::parse(s).ok_or_else(|| {
        SpecError::value("--gc-stream", s, "expected separate, victim or per-stream")
    })
}

fn parse_isolation(s: &str) -> Result<ssd::Isolation, SpecError> {
    ssd::Isolation::parse(s)
        .ok_or_else(|| SpecError::value("--fdp-isolation", s, "expected initial or persistent"))
}

fn parse_timing(t: &str) -> Result<bool, SpecError> {
    match t {
        "on" => Ok(true),
        "off" => Ok(false),
        _ => Err(SpecError::value("--timing", t, "expected on or off")),
    }
}

fn parse_volume(v: &str) -> Result<f64, SpecError> {
    let x = parse_multiple(v).map_err(|e| SpecError::refused("--write-volume", e))?;
    if x <= 0.0 {
        return Err(SpecError::value("--write-volume", v, "a zero volume measures nothing; give a positive multiple of the capacity, e.g. 0.5x or 5x"));
    }
    Ok(x)
}

fn parse_sampler(s: &str) -> Result<workload::synth::Sampler, SpecError> {
    workload::synth::Sampler::parse(s)
        .ok_or_else(|| SpecError::value("--sampler", s, "expected rand or lemire"))
}

fn parse_precondition(s: &str) -> Result<Precondition, SpecError> {
    let (kind, arg) = s.split_once(':').map_or((s, None), |(k, v)| (k, Some(v)));
    match (kind, arg) {
        ("none", None) => Ok(Precondition::None),
        ("fill", None) => Ok(Precondition::Fill),
        ("full", None) => Ok(Precondition::Full { passes: 1.0 }),
        ("full", Some(n)) => {
            let passes =
                parse_multiple(n).map_err(|e| SpecError::refused("--precondition full:N", e))?;
            if passes > PRECONDITION_PASSES_MAX {
                return Err(SpecError::value("--precondition", s, format!("at most {PRECONDITION_PASSES_MAX} x the capacity of random writes (steady state comes within a few)")));
            }
            Ok(Precondition::Full { passes })
        }
        _ => Err(SpecError::value(
            "--precondition",
            s,
            "expected none, fill, full or full:N",
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_default_spec_is_valid_and_each_rule_refuses() {
        assert_eq!(SimSpec::default().validate(), Ok(()));
        let bad = |f: fn(&mut SimSpec)| {
            let mut s = SimSpec::default();
            f(&mut s);
            s.validate().unwrap_err()
        };
        assert_eq!(
            bad(|s| s.write_volume = Some("0x".into())).field(),
            "--write-volume"
        );
        assert_eq!(
            bad(|s| s.gc = Some("bogus".into())).to_string(),
            "--gc bogus: expected greedy, cost-benefit or fifo"
        );
        assert_eq!(bad(|s| s.trace_timing = true).field(), "--trace-timing");
        assert_eq!(bad(|s| s.payloads = true).field(), "--payloads");
        assert_eq!(
            bad(|s| s.capacity = Some("12 parsecs".into())).field(),
            "--capacity"
        );
        assert_eq!(
            bad(|s| s.precondition = "half".into()).field(),
            "--precondition"
        );
        assert_eq!(
            bad(|s| s.sampler = "xorshift".into()).to_string(),
            "--sampler xorshift: expected rand or lemire"
        );
        assert_eq!(
            bad(|s| s.stream_policy = "auto:0".into()).field(),
            "--stream-policy"
        );
        assert_eq!(bad(|s| s.timing = Some("maybe".into())).field(), "--timing");
        assert_eq!(
            bad(|s| s.workload = "trace:x.csv".into()).field(),
            "--workload trace:PATH"
        );
    }

    #[cfg(feature = "clap")]
    #[test]
    fn the_flags_defaults_are_the_spec_s_defaults() {
        use clap::{FromArgMatches, Parser};
        #[derive(Parser)]
        struct Cmd {
            #[command(flatten)]
            spec: SimSpec,
        }
        let m = <Cmd as clap::CommandFactory>::command().get_matches_from(["sim"]);
        assert_eq!(Cmd::from_arg_matches(&m).unwrap().spec, SimSpec::default());
    }
}
