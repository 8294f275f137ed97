//! `flashlab sim`: flags for the SSD model, the FTL, the workload; a summary or one JSON object.

use anyhow::{bail, Context, Result};
use clap::Args;
use indicatif::{ProgressBar, ProgressStyle};
use lab::sim::{planned_pages, Precondition, SimOptions, SimResult};
use lab::units::{parse_bytes, parse_multiple};
use ssd::{DataMode, FtlKind, GcPolicy, GcStreamMode, SsdConfig};
use std::path::PathBuf;
use workload::{LbaMapping, TraceFormat};

#[derive(Args, Debug)]
#[command(after_long_help = workload::SPEC_HELP)]
pub struct SimArgs {
    /// SSD preset (see `flashlab presets`).
    #[arg(long, default_value = "mlc-sata-2010")]
    preset: String,
    /// An SSD config TOML file (instead of --preset; `flashlab presets --show NAME` prints one).
    #[arg(long)]
    config: Option<PathBuf>,
    /// FTL scheme: page, block, bast, fast, dftl, ioa.
    #[arg(long)]
    ftl: Option<String>,
    /// GC victim policy: greedy, cost-benefit, fifo.
    #[arg(long)]
    gc: Option<String>,
    /// Over-provisioning, (physical - logical) / logical, e.g. 0.07.
    #[arg(long)]
    op: Option<f64>,
    /// Logical capacity, e.g. 4GiB (resizes blocks per plane).
    #[arg(long)]
    capacity: Option<String>,
    /// Write streams (1 = none).
    #[arg(long)]
    streams: Option<u16>,
    /// Where GC copies go: separate (own stream) or victim (the victim block's stream).
    #[arg(long)]
    gc_stream: Option<String>,
    /// Foreground GC threshold: free blocks per die.
    #[arg(long)]
    gc_free_blocks_min: Option<u32>,
    /// Log blocks in the device (bast, fast, ioa).
    #[arg(long)]
    log_blocks: Option<u32>,
    /// DFTL cached mapping table entries.
    #[arg(long)]
    cmt_entries: Option<u32>,
    /// Timing model: on or off (off: the pure FTL/GC path, for fast WAF studies).
    #[arg(long)]
    timing: Option<String>,
    /// Host queue depth.
    #[arg(long)]
    queue_depth: Option<u32>,
    /// Keep full page payloads instead of 64-bit tags.
    #[arg(long)]
    payloads: bool,
    /// Run the FTL invariant verifier after every GC/merge (slow).
    #[arg(long)]
    check_invariants: bool,
    /// Workload (see below), e.g. uniform-write, zipf-write:0.99, hotcold-write:0.8:0.2, trace:PATH.
    #[arg(long, default_value = "uniform-write")]
    workload: String,
    /// Trace format for trace:PATH: msr, spc, disksim, systor, tencent, blkparse.
    #[arg(long)]
    trace_format: Option<String>,
    /// Trace address mapping onto the device: wrap (modulo capacity) or scale (span -> capacity).
    #[arg(long, default_value = "wrap")]
    trace_mapping: String,
    /// Issue trace requests no earlier than their timestamps (default: as fast as the queue allows).
    #[arg(long)]
    trace_timing: bool,
    /// Request size, e.g. 4KiB (a whole number of pages).
    #[arg(long, default_value = "4KiB")]
    request_size: String,
    /// Host writes measured after preconditioning, in multiples of the logical capacity (e.g. 5x).
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
    /// No progress bar.
    #[arg(long)]
    quiet: bool,
}

pub fn run(a: &SimArgs) -> Result<()> {
    let opts = options(a)?;
    let bar = progress_bar(a, &opts);
    let result = lab::sim::run(&opts, &mut |phase, pages| {
        if let Some(b) = &bar {
            b.set_message(phase.to_string());
            b.set_position(pages);
        }
    })?;
    if let Some(b) = bar {
        b.finish_and_clear();
    }
    if a.json {
        println!("{}", serde_json::to_string(&result)?);
    } else {
        print_summary(&result);
    }
    Ok(())
}

fn options(a: &SimArgs) -> Result<SimOptions> {
    let mut cfg = match &a.config {
        Some(p) => SsdConfig::from_file(p)?,
        None => SsdConfig::preset(&a.preset)?,
    };
    apply_ftl_flags(a, &mut cfg)?;
    if let Some(c) = &a.capacity {
        let bytes = parse_bytes(c)
            .map_err(anyhow::Error::msg)
            .context("--capacity")?;
        cfg = cfg.with_logical_capacity(bytes)?;
    }
    cfg.validate()?;
    let page = cfg.geometry.page_bytes as u64;
    let req = parse_bytes(&a.request_size)
        .map_err(anyhow::Error::msg)
        .context("--request-size")?;
    if req % page != 0 {
        bail!(
            "--request-size {} is not a whole number of {page}-byte pages",
            a.request_size
        );
    }
    let trace_format = match &a.trace_format {
        Some(f) => Some(TraceFormat::parse(f).with_context(|| format!("--trace-format {f}"))?),
        None => None,
    };
    if a.workload.starts_with("trace:") && trace_format.is_none() {
        bail!("--workload trace:PATH needs --trace-format (msr, spc, disksim, systor, tencent, blkparse)");
    }
    Ok(SimOptions {
        config: cfg,
        workload: a.workload.clone(),
        trace_format,
        mapping: parse_mapping(a)?,
        request_pages: (req / page) as u32,
        write_volume: match &a.write_volume {
            Some(v) => Some(
                parse_multiple(v)
                    .map_err(anyhow::Error::msg)
                    .context("--write-volume")?,
            ),
            None => None,
        },
        precondition: parse_precondition(&a.precondition)?,
        replay_trace_timing: a.trace_timing,
        seed: a.seed,
    })
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
        f.gc_stream = match s.as_str() {
            "separate" => GcStreamMode::Separate,
            "victim" => GcStreamMode::Victim,
            _ => bail!("--gc-stream {s}: expected separate or victim"),
        };
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
    if a.payloads {
        f.data = DataMode::Payloads;
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

fn parse_mapping(a: &SimArgs) -> Result<LbaMapping> {
    match a.trace_mapping.as_str() {
        "wrap" => Ok(LbaMapping::Wrap),
        "scale" => match (&a.workload.strip_prefix("trace:"), &a.trace_format) {
            (Some(path), Some(f)) => {
                let format =
                    TraceFormat::parse(f).with_context(|| format!("--trace-format {f}"))?;
                let max_byte = workload::scan_trace_span(std::path::Path::new(path), format)?;
                Ok(LbaMapping::Scale { max_byte })
            }
            _ => Ok(LbaMapping::Wrap),
        },
        m => bail!("--trace-mapping {m}: expected wrap or scale"),
    }
}

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
            Ok(Precondition::Full { passes })
        }
        _ => bail!("--precondition {s}: expected none, fill, full or full:N"),
    }
}

fn progress_bar(a: &SimArgs, opts: &SimOptions) -> Option<ProgressBar> {
    if a.quiet {
        return None;
    }
    let bar = match planned_pages(opts) {
        Some(n) => ProgressBar::new(n),
        None => ProgressBar::new_spinner(),
    };
    bar.set_style(
        ProgressStyle::with_template("{msg:>12} [{elapsed_precise}] {wide_bar} {pos}/{len} pages")
            .unwrap_or_else(|_| ProgressStyle::default_bar()),
    );
    Some(bar)
}

fn print_summary(r: &SimResult) {
    println!(
        "flashlab sim: {} on {} ({} FTL, {} GC, op {:.3}, timing {})",
        r.workload,
        r.preset,
        r.ftl,
        r.gc_policy,
        r.op,
        if r.timing { "on" } else { "off" }
    );
    println!(
        "  device            {:.2} GiB logical, {} B pages, {} pages/block, alpha {:.4}",
        r.logical_bytes as f64 / (1u64 << 30) as f64,
        r.page_bytes,
        r.pages_per_block,
        r.alpha
    );
    match r.waf_model {
        Some(m) => println!(
            "  WAF               {:.4} (closed-form steady-state model: {m:.4})",
            r.waf
        ),
        None => println!("  WAF               {:.4}", r.waf),
    }
    println!(
        "  host pages        {} written, {} read, {} trimmed ({} I/Os)",
        r.host_pages_written, r.host_pages_read, r.host_pages_trimmed, r.host_ios
    );
    println!(
        "  flash pages       {} written, {} read; GC copied {} in {} GC runs",
        r.flash_pages_written, r.flash_pages_read, r.gc_pages_copied, r.gc_invocations
    );
    println!(
        "  erases            {} (per block: max {}, mean {:.2})",
        r.erases, r.erase_count_max, r.erase_count_mean
    );
    println!(
        "  merges            full {}, partial {}, switch {}",
        r.merges.full, r.merges.partial, r.merges.switch
    );
    if r.translation_reads + r.translation_writes > 0 {
        println!(
            "  translation pages {} read, {} written",
            r.translation_reads, r.translation_writes
        );
    }
    println!("  mapping table     {} bytes", r.mapping_bytes);
    if r.timing {
        println!(
            "  simulated time    {:.3} s: {:.1} MB/s, {:.0} IOPS",
            r.sim_seconds, r.throughput_mb_per_sim_second, r.iops_per_sim_second
        );
        println!(
            "  latency (us)      p50 {:.1}, p99 {:.1}, p99.9 {:.1}, mean {:.1}, max {:.1}",
            r.latency_us.p50,
            r.latency_us.p99,
            r.latency_us.p999,
            r.latency_us.mean,
            r.latency_us.max
        );
    }
    println!("  simulator speed   {:.0} host I/Os per wall second ({:.2} s measured, {:.2} s preconditioning)", r.host_ios_per_wall_second, r.wall_seconds, r.precondition_wall_seconds);
}
