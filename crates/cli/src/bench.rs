//! `flashlab bench device`: the device benchmark (lab::bench_device) from the command line.

use anyhow::{bail, Context, Result};
use clap::{Args, Subcommand};
use lab::bench_device::{self, BenchOptions};
use lab::DeviceKind;
use std::path::PathBuf;

#[derive(Subcommand, Debug)]
pub enum BenchCommand {
    /// Sequential/random reads and writes of 4-32 KiB at QD1 and QD32 (MB/s, IOPS), as P1's
    /// Table 1, on a simulated SSD preset or a real file.
    Device(DeviceArgs),
}

#[derive(Args, Debug)]
pub struct DeviceArgs {
    /// sim (a preset) or file (a real file, O_DIRECT + io_uring, in --dir).
    #[arg(long, default_value = "sim")]
    device: String,
    /// The simulated SSD's preset (`flashlab presets` lists them) [default: p1-ssd].
    #[arg(long)]
    preset: Option<String>,
    /// A simulated SSD config file (TOML, as `flashlab presets --show NAME`) instead of a preset.
    #[arg(long, value_name = "PATH", conflicts_with = "preset")]
    config: Option<PathBuf>,
    /// Directory of the file for --device file (a disk file system) [default: here].
    #[arg(long)]
    dir: Option<PathBuf>,
    /// Size of the device [default: the preset's own (at least the size that keeps its GC
    /// pools per die); a file: 1GiB].
    #[arg(long)]
    capacity: Option<String>,
    /// Bytes each cell (pattern, size, queue depth) moves.
    #[arg(long, default_value = "16MiB")]
    cell: String,
    /// Simulated SSD: device-fulls of random 4 KiB writes before the random writes.
    #[arg(long, default_value_t = 2.0)]
    precondition: f64,
    #[arg(long, default_value_t = 1)]
    seed: u64,
    /// Run on a RAM file system (tmpfs) anyway (its timings are RAM speed).
    #[arg(long)]
    allow_memory_fs: bool,
    /// Print exactly one JSON object on stdout.
    #[arg(long)]
    json: bool,
    /// Write the output to FILE instead of stdout.
    #[arg(long, value_name = "FILE")]
    output: Option<PathBuf>,
    /// No progress lines on stderr.
    #[arg(long)]
    quiet: bool,
}

pub fn run(c: &BenchCommand) -> Result<()> {
    match c {
        BenchCommand::Device(a) => device(a),
    }
}

fn device(a: &DeviceArgs) -> Result<()> {
    let device = match a.device.as_str() {
        "sim" => DeviceKind::Sim,
        "file" => DeviceKind::File,
        d => bail!("--device {d}: expected sim or file"),
    };
    if device == DeviceKind::File && (a.preset.is_some() || a.config.is_some()) {
        bail!("--preset and --config apply to --device sim only");
    }
    let config = match &a.config {
        Some(p) => Some(ssd::SsdConfig::from_file(p)?),
        None => None,
    };
    if device == DeviceKind::Sim && a.dir.is_some() {
        bail!("--dir applies to --device file only");
    }
    let bytes = |s: &str, flag: &str| {
        lab::units::parse_bytes(s)
            .map_err(anyhow::Error::msg)
            .with_context(|| format!("{flag} {s}"))
    };
    if !(a.precondition.is_finite() && (0.0..=100.0).contains(&a.precondition)) {
        bail!(
            "--precondition {}: expected 0 to 100 device-fulls",
            a.precondition
        );
    }
    let o = BenchOptions {
        device,
        preset: match (&config, &a.preset) {
            (Some(c), _) => c.name.clone(),
            (None, Some(p)) => p.clone(),
            (None, None) => lab::as_btree::DEFAULT_PRESET.into(),
        },
        config,
        dir: a.dir.clone(),
        allow_memory_fs: a.allow_memory_fs,
        capacity_bytes: a
            .capacity
            .as_deref()
            .map(|c| bytes(c, "--capacity"))
            .transpose()?,
        cell_bytes: bytes(&a.cell, "--cell")?,
        precondition_x: a.precondition,
        seed: a.seed,
        progress: !a.quiet,
    };
    let out = bench_device::run(&o)?;
    let text = if a.json {
        format!("{}\n", out.report.to_json())
    } else {
        out.to_string()
    };
    crate::output::emit(a.output.as_deref(), &text)
}
