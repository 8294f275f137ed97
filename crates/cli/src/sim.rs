//! `flashlab sim`: flags for the SSD model, the FTL, the workload; a summary or one JSON object.

use anyhow::{bail, Context, Result};
use clap::Args;
use lab::sim::{planned_pages, Precondition, SimOptions, SimResult};
use lab::stream_policy::StreamPolicySpec;
use lab::units::{parse_bytes, parse_multiple};
use ssd::{FtlKind, GcPolicy, GcStreamMode, SsdConfig};
use std::path::PathBuf;
use workload::{LbaMapping, TraceFormat};

#[derive(Args, Debug)]
#[command(after_long_help = workload::SPEC_HELP)]
pub struct SimArgs {
    /// SSD preset (see `flashlab presets`) [default: mlc-sata-2010]. Options marked
    /// "[default: the preset's]" take the preset's (or --config's) value when not given.
    #[arg(long, conflicts_with = "config")]
    preset: Option<String>,
    /// An SSD config TOML file, instead of --preset (`flashlab presets --show NAME` prints one).
    #[arg(long)]
    config: Option<PathBuf>,
    /// FTL scheme: page, block, bast, fast, dftl, ioa [default: the preset's].
    #[arg(long)]
    ftl: Option<String>,
    /// GC victim policy: greedy, cost-benefit, fifo [default: the preset's].
    #[arg(long)]
    gc: Option<String>,
    /// Over-provisioning, (physical - logical) / logical, e.g. 0.07 [default: the preset's].
    #[arg(long)]
    op: Option<f64>,
    /// Logical capacity, e.g. 4GiB (resizes blocks per plane) [default: the preset's].
    #[arg(long)]
    capacity: Option<String>,
    /// Write streams (1 = none) [default: the preset's].
    #[arg(long)]
    streams: Option<u16>,
    /// Which device stream each host write goes to: none (all on stream 0), hot-cold (oracle:
    /// the hot set of a hotcold-write workload on stream 1), by-lba-range:N (N equal LBA
    /// ranges on streams 0..N), auto[:RANGES] (online lifetime grouping of RANGES LBA ranges,
    /// default 64, into the device's streams). Needs --streams to offer the streams it uses.
    #[arg(long, default_value = "none")]
    stream_policy: String,
    /// Where GC copies go: separate (one GC stream shared by all host streams), victim (the
    /// victim block's own stream) or per-stream (a GC stream per host stream) [default: the
    /// preset's].
    #[arg(long)]
    gc_stream: Option<String>,
    /// Foreground GC threshold: free blocks per die [default: the preset's].
    #[arg(long)]
    gc_free_blocks_min: Option<u32>,
    /// Log blocks in the device (bast, fast, ioa) [default: the preset's].
    #[arg(long)]
    log_blocks: Option<u32>,
    /// DFTL cached mapping table entries [default: the preset's].
    #[arg(long)]
    cmt_entries: Option<u32>,
    /// Timing model: on or off (off: the pure FTL/GC path, for fast WAF studies)
    /// [default: the preset's].
    #[arg(long)]
    timing: Option<String>,
    /// Host queue depth [default: the preset's].
    #[arg(long)]
    queue_depth: Option<u32>,
    /// Largest memory the simulated device may take, e.g. 2GiB: a device whose estimate
    /// (mapping tables, page tags, block state, host queue; `memory_bytes_estimate` in --json)
    /// is larger is refused before anything is allocated [default: half of physical RAM, from
    /// /proc/meminfo; 4 GiB where that cannot be read].
    #[arg(long, value_name = "SIZE")]
    max_memory: Option<String>,
    /// Keep full page payloads instead of 64-bit tags. Refused here: `sim` writes no data, so
    /// payloads would change only memory use (the engine experiments use them).
    #[arg(long)]
    payloads: bool,
    /// Run the FTL invariant verifier after every GC/merge (slow).
    #[arg(long)]
    check_invariants: bool,
    /// Workload (see below), e.g. uniform-write, zipf-write:0.99, hotcold-write:0.8:0.2, trace:PATH.
    #[arg(long, default_value = "uniform-write")]
    workload: String,
    /// Trace format for trace:PATH: msr, spc, disksim, systor, tencent, blkparse (required
    /// with a trace; refused without one).
    #[arg(long)]
    trace_format: Option<String>,
    /// Trace address mapping onto the device: wrap (modulo capacity) or scale (span ->
    /// capacity; reads the trace twice, so it must be a file, not a pipe) [default: wrap].
    #[arg(long)]
    trace_mapping: Option<String>,
    /// Issue trace requests no earlier than their timestamps (default: as fast as the queue
    /// allows; refused without a trace).
    #[arg(long)]
    trace_timing: bool,
    /// Request size, e.g. 16KiB (a whole number of pages) [default: one page of the preset].
    #[arg(long)]
    request_size: Option<String>,
    /// Host writes measured after preconditioning, in multiples of the logical capacity, e.g.
    /// 5x (more than 0) [default: a trace's end, or 1x].
    #[arg(long)]
    write_volume: Option<String>,
    /// Preconditioning: none, fill (sequential fill), or full[:N] (fill + N x capacity random writes; N defaults to 1).
    #[arg(long, default_value = "full")]
    precondition: String,
    #[arg(long, default_value_t = 1)]
    seed: u64,
    /// Print exactly one JSON object on stdout.
    #[arg(long)]
    json: bool,
    /// Write the output (summary or JSON) to FILE instead of stdout.
    #[arg(long, value_name = "FILE")]
    output: Option<PathBuf>,
    /// Also draw WAF and latency over the measured phase into FILE (SVG).
    #[arg(long, value_name = "FILE.svg")]
    plot: Option<PathBuf>,
    /// No progress on stderr (a bar on a terminal, else a line every few seconds).
    #[arg(long)]
    quiet: bool,
}

const DEFAULT_PRESET: &str = "mlc-sata-2010";

/// `--max-memory` when /proc/meminfo cannot be read.
const FALLBACK_MAX_MEMORY_BYTES: u64 = 4 << 30;

/// `--max-memory`, or half of physical RAM: a device larger than that would push the machine
/// into swap or the allocator into an abort.
fn max_memory_bytes(a: &SimArgs) -> Result<u64> {
    match &a.max_memory {
        Some(m) => parse_bytes(m)
            .map_err(anyhow::Error::msg)
            .context("--max-memory"),
        None => {
            let (bytes, _from) = crate::memory_limit::memory_limit();
            if bytes == u64::MAX {
                return Ok(FALLBACK_MAX_MEMORY_BYTES);
            }
            Ok(bytes)
        }
    }
}

pub fn run(a: &SimArgs) -> Result<()> {
    // Open the plot file before the run, so a path that cannot be written fails at once
    // rather than after a long simulation.
    let plot = match &a.plot {
        Some(path) => Some(
            std::fs::File::create(path).with_context(|| format!("--plot {}", path.display()))?,
        ),
        None => None,
    };
    let result = execute(a)?;
    if let (Some(mut file), Some(path)) = (plot, &a.plot) {
        use std::io::Write;
        file.write_all(report::sim_plot::svg(&result)?.as_bytes())
            .with_context(|| format!("--plot {}", path.display()))?;
    }
    let text = if a.json {
        format!("{}\n", serde_json::to_string(&result)?)
    } else {
        summary(&result)
    };
    crate::output::emit(a.output.as_deref(), &text)
}

/// The run the flags describe (progress on stderr unless `--quiet`): the one path from flags to
/// a result, for the command line, the Python package and `flashlab sweep` alike.
pub fn execute(a: &SimArgs) -> Result<SimResult> {
    let opts = options(a)?;
    let mut progress = crate::progress::Progress::new(!a.quiet, planned_pages(&opts));
    let result = lab::sim::run(&opts, &mut |phase, pages| progress.update(phase, pages))?;
    progress.finish();
    Ok(result)
}

fn options(a: &SimArgs) -> Result<SimOptions> {
    check_ignored(a)?;
    let preset = match &a.config {
        Some(_) => None,
        None => Some(a.preset.clone().unwrap_or_else(|| DEFAULT_PRESET.into())),
    };
    let mut cfg = match (&a.config, &preset) {
        (Some(p), _) => SsdConfig::from_file(p)?,
        (None, Some(name)) => SsdConfig::preset(name)?,
        (None, None) => unreachable!("a preset is chosen when no config is given"),
    };
    apply_ftl_flags(a, &mut cfg)?;
    if let Some(c) = &a.capacity {
        let bytes = parse_bytes(c)
            .map_err(anyhow::Error::msg)
            .context("--capacity")?;
        cfg = cfg.with_logical_capacity(bytes)?;
        check_honoured(a, &cfg, c)?;
    }
    cfg.validate()?;
    if let Some(v) = &a.write_volume {
        check_measurable(v, parse_volume(v)?, &cfg)?;
    }
    let page = cfg.geometry.page_bytes as u64;
    let req = match &a.request_size {
        Some(r) => parse_bytes(r)
            .map_err(anyhow::Error::msg)
            .context("--request-size")?,
        None => page,
    };
    if req % page != 0 || req / page > u32::MAX as u64 {
        bail!(
            "--request-size {}: not a whole number of {page}-byte pages (at most 2^32 - 1 pages)",
            a.request_size.as_deref().unwrap_or_default()
        );
    }
    let trace_format = match &a.trace_format {
        Some(f) => Some(parse_trace_format(f)?),
        None => None,
    };
    Ok(SimOptions {
        config: cfg,
        preset,
        config_path: a.config.clone(),
        workload: a.workload.clone(),
        trace_format,
        mapping: parse_mapping(a, trace_format)?,
        request_pages: (req / page) as u32,
        write_volume: match &a.write_volume {
            Some(v) => Some(parse_volume(v)?),
            None => None,
        },
        precondition: parse_precondition(&a.precondition)?,
        replay_trace_timing: a.trace_timing,
        stream_policy: StreamPolicySpec::parse(&a.stream_policy)?,
        seed: a.seed,
        max_memory_bytes: max_memory_bytes(a)?,
    })
}

/// Options that would be accepted and then have no effect are refused, with the reason.
fn check_ignored(a: &SimArgs) -> Result<()> {
    let trace = a.workload.starts_with("trace:");
    if trace && a.trace_format.is_none() {
        bail!(
            "--workload trace:PATH needs --trace-format ({})",
            trace_formats()
        );
    }
    for (given, flag) in [
        (a.trace_format.is_some(), "--trace-format"),
        (a.trace_timing, "--trace-timing"),
        (a.trace_mapping.is_some(), "--trace-mapping"),
    ] {
        if given && !trace {
            bail!(
                "{flag} applies only to --workload trace:PATH (the workload is `{}`)",
                a.workload
            );
        }
    }
    if a.payloads {
        bail!("--payloads: `flashlab sim` moves no data (pages carry 64-bit tags), so payloads would only cost memory; they matter to the engine experiments (`flashlab reproduce as-btree`), which turn them on themselves");
    }
    Ok(())
}

fn trace_formats() -> String {
    TraceFormat::ALL
        .iter()
        .map(|f| f.name())
        .collect::<Vec<_>>()
        .join(", ")
}

fn parse_trace_format(f: &str) -> Result<TraceFormat> {
    TraceFormat::parse(f)
        .with_context(|| format!("--trace-format {f}: expected one of {}", trace_formats()))
}

fn parse_volume(v: &str) -> Result<f64> {
    let x = parse_multiple(v)
        .map_err(anyhow::Error::msg)
        .context("--write-volume")?;
    if x <= 0.0 {
        bail!("--write-volume {v}: a zero volume measures nothing; give a positive multiple of the capacity, e.g. 0.5x or 5x");
    }
    Ok(x)
}

/// A flag `--capacity` would lower to fit the spare blocks is refused, never clamped.
fn check_honoured(a: &SimArgs, cfg: &SsdConfig, capacity: &str) -> Result<()> {
    let f = &cfg.ftl;
    for (flag, given, kept) in [
        (
            "--gc-free-blocks-min",
            a.gc_free_blocks_min,
            f.gc_free_blocks_min,
        ),
        ("--log-blocks", a.log_blocks, f.log_blocks),
    ] {
        if let Some(v) = given.filter(|&v| v != kept) {
            bail!("{flag} {v}: a {capacity} device's spare blocks hold at most {kept} (beside the open blocks and the GC reserve); give at most {kept}, or raise --op or --capacity");
        }
    }
    Ok(())
}

/// Fewer measured pages than one block cannot show any GC: refused.
fn check_measurable(v: &str, volume: f64, cfg: &SsdConfig) -> Result<()> {
    let pages = volume * cfg.logical_pages() as f64;
    let ppb = cfg.geometry.pages_per_block;
    if pages < ppb as f64 {
        bail!("--write-volume {v}: measures {pages:.3e} pages, fewer than one block ({ppb} pages), too little to measure a write amplification; give e.g. 0.5x or 5x");
    }
    if volume > PRECONDITION_PASSES_MAX * 10.0 {
        bail!(
            "--write-volume {v}: more than {} x the capacity would run for days; give at most that",
            PRECONDITION_PASSES_MAX * 10.0
        );
    }
    Ok(())
}

fn apply_ftl_flags(a: &SimArgs, cfg: &mut SsdConfig) -> Result<()> {
    let f = &mut cfg.ftl;
    if let Some(s) = &a.ftl {
        f.scheme = FtlKind::parse(s)
            .with_context(|| format!("--ftl {s}: expected page, block, bast, fast, dftl or ioa"))?;
    }
    if let Some(s) = &a.gc {
        f.gc_policy = GcPolicy::parse(s)
            .with_context(|| format!("--gc {s}: expected greedy, cost-benefit or fifo"))?;
    }
    if let Some(s) = &a.gc_stream {
        f.gc_stream = GcStreamMode::parse(s)
            .with_context(|| format!("--gc-stream {s}: expected separate, victim or per-stream"))?;
    }
    if let Some(v) = a.op {
        f.op = v;
    }
    if let Some(v) = a.streams {
        f.streams = v;
    }
    if let Some(v) = a.gc_free_blocks_min {
        f.gc_free_blocks_min = v;
    }
    if let Some(v) = a.log_blocks {
        f.log_blocks = v;
    }
    if let Some(v) = a.cmt_entries {
        f.cmt_entries = v;
    }
    f.check_invariants |= a.check_invariants;
    if let Some(t) = &a.timing {
        cfg.timing.enabled = match t.as_str() {
            "on" => true,
            "off" => false,
            _ => bail!("--timing {t}: expected on or off"),
        };
    }
    if let Some(q) = a.queue_depth {
        cfg.timing.host_queue_depth = q;
    }
    Ok(())
}

fn parse_mapping(a: &SimArgs, format: Option<TraceFormat>) -> Result<LbaMapping> {
    match a.trace_mapping.as_deref().unwrap_or("wrap") {
        "wrap" => Ok(LbaMapping::Wrap),
        "scale" => match (a.workload.strip_prefix("trace:"), format) {
            (Some(path), Some(format)) => {
                let path = std::path::Path::new(path);
                // The span pass reads the whole trace before the replay reads it again: a
                // pipe (or /dev/stdin) would be empty the second time.
                let meta = std::fs::metadata(path)
                    .with_context(|| format!("--workload trace:{}", path.display()))?;
                if !meta.is_file() {
                    bail!("--trace-mapping scale reads the trace twice (its span, then the replay), but {} is not a regular file (a pipe or /dev/stdin can be read only once): save it to a file, or use --trace-mapping wrap", path.display());
                }
                let max_byte = workload::scan_trace_span(path, format)?;
                Ok(LbaMapping::Scale { max_byte })
            }
            _ => bail!("--trace-mapping applies only to --workload trace:PATH"),
        },
        m => bail!("--trace-mapping {m}: expected wrap or scale"),
    }
}

/// The most random-write passes `--precondition full:N` runs.
const PRECONDITION_PASSES_MAX: f64 = 100.0;

fn parse_precondition(s: &str) -> Result<Precondition> {
    let (kind, arg) = s.split_once(':').map_or((s, None), |(k, v)| (k, Some(v)));
    match (kind, arg) {
        ("none", None) => Ok(Precondition::None),
        ("fill", None) => Ok(Precondition::Fill),
        ("full", None) => Ok(Precondition::Full { passes: 1.0 }),
        ("full", Some(n)) => {
            let passes = parse_multiple(n)
                .map_err(anyhow::Error::msg)
                .context("--precondition full:N")?;
            if passes > PRECONDITION_PASSES_MAX {
                bail!("--precondition full:{n}: at most {PRECONDITION_PASSES_MAX} x the capacity of random writes (steady state comes within a few)");
            }
            Ok(Precondition::Full { passes })
        }
        _ => bail!("--precondition {s}: expected none, fill, full or full:N"),
    }
}

/// `writeln!` into a String (which cannot fail).
macro_rules! line {
    ($o:expr, $($t:tt)*) => {{
        use std::fmt::Write as _;
        let _ = writeln!($o, $($t)*);
    }};
}

/// The human-readable summary of a run.
fn summary(r: &SimResult) -> String {
    let mut o = String::new();
    line!(
        o,
        "flashlab sim: {} on {} ({} FTL, {} GC, op {:.3}, timing {})",
        r.workload,
        r.preset,
        r.ftl,
        r.gc_policy,
        r.op,
        if r.timing { "on" } else { "off" }
    );
    line!(
        o,
        "  device            {:.2} GiB logical, {} B pages, {} pages/block, alpha {:.4}",
        r.logical_bytes as f64 / (1u64 << 30) as f64,
        r.page_bytes,
        r.pages_per_block,
        r.alpha
    );
    match (r.waf, r.waf_model, r.waf_model_expected_excess) {
        (None, _, _) => line!(o, "  WAF               n/a (no host page was written)"),
        (Some(w), Some(m), _) if r.waf_model_applies == Some(true) => line!(
            o,
            "  WAF               {w:.4} (closed-form steady-state model: {m:.4})"
        ),
        (Some(w), Some(m), Some(x)) => line!(
            o,
            "  WAF               {w:.4} (closed-form model {m:.4} is for a larger device: expect it within about {:.1} % here, see note)",
            x * 100.0
        ),
        (Some(w), _, _) => line!(o, "  WAF               {w:.4}"),
    }
    line!(
        o,
        "  host pages        {} written, {} read, {} trimmed ({} I/Os)",
        r.host_pages_written,
        r.host_pages_read,
        r.host_pages_trimmed,
        r.host_ios
    );
    if r.host_pages_written_by_stream.len() > 1 {
        line!(
            o,
            "  streams           {} ({}, GC {}); host pages written per stream: {:?}",
            r.host_pages_written_by_stream.len(),
            r.setup.stream_policy.as_deref().unwrap_or("none"),
            r.config.ftl.gc_stream.name(),
            r.host_pages_written_by_stream
        );
    }
    line!(
        o,
        "  flash pages       {} written, {} read; GC copied {} in {} GC runs",
        r.flash_pages_written,
        r.flash_pages_read,
        r.gc_pages_copied,
        r.gc_invocations
    );
    line!(
        o,
        "  erases            {} (per block: max {}, mean {:.2})",
        r.erases,
        r.erase_count_max,
        r.erase_count_mean
    );
    line!(
        o,
        "  merges            full {}, partial {}, switch {}",
        r.merges.full,
        r.merges.partial,
        r.merges.switch
    );
    if r.translation_reads + r.translation_writes > 0 {
        line!(
            o,
            "  translation pages {} read, {} written",
            r.translation_reads,
            r.translation_writes
        );
    }
    line!(o, "  mapping table     {} bytes", r.mapping_bytes);
    if r.timing {
        line!(
            o,
            "  simulated time    {:.3} s: {:.1} MB/s, {:.0} IOPS",
            r.sim_seconds,
            r.throughput_mb_per_sim_second,
            r.iops_per_sim_second
        );
        line!(
            o,
            "  latency (us)      p50 {:.1}, p99 {:.1}, p99.9 {:.1}, mean {:.1}, max {:.1}",
            r.latency_us.p50,
            r.latency_us.p99,
            r.latency_us.p999,
            r.latency_us.mean,
            r.latency_us.max
        );
    }
    line!(o, "  simulator speed   {:.0} host I/Os per wall second ({:.2} s measured, {:.2} s preconditioning)", r.host_ios_per_wall_second, r.wall_seconds, r.precondition_wall_seconds);
    if let Some(reached) = r.volume_reached {
        line!(
            o,
            "  write volume      {}",
            if reached {
                "reached"
            } else {
                "NOT reached (the workload ended first)"
            }
        );
    }
    if r.workload.starts_with("trace:") || r.requests_clipped > 0 {
        line!(
            o,
            "  clipped requests  {} (ran past the device's end; cut there)",
            r.requests_clipped
        );
    }
    line!(
        o,
        "  config            preset {}, hash {}",
        r.preset,
        r.config_hash
    );
    for n in &r.notes {
        line!(o, "  note: {n}");
    }
    o
}
