//! `flashlab reproduce NAME` and `flashlab ftl-memory`.

use anyhow::{bail, Result};
use clap::Args;
use lab::{Output, ReproduceOptions, Scale};
use std::path::PathBuf;

/// The experiments, by name: (name, paper, what it runs).
const EXPERIMENTS: &[(&str, &str, &str)] = &[
    ("ioa-ftl", "P4", "increasing-order-aware log-block FTL vs BAST, FAST, DFTL, page mapping (simulated SSD)"),
    ("as-btree", "P1", "AS B-tree vs in-place B-tree vs BFTL: insert/search time, write buffer, LRU cache, file size"),
    ("async-scan", "P2", "range scans: synchronous vs batched asynchronous heap reads, selectivity and batch sweeps"),
];

#[derive(Args, Debug)]
pub struct ReproduceArgs {
    /// Experiment: ioa-ftl, as-btree, async-scan (omit to list them).
    name: Option<String>,
    /// quick (minutes; CI-sized) or paper (the paper's sizes where this machine allows).
    #[arg(long, default_value = "quick")]
    scale: String,
    #[arg(long, default_value_t = 1)]
    seed: u64,
    /// Device for engine experiments: file (O_DIRECT), sim (simulated SSD), hdd (model), all.
    #[arg(long, default_value = "sim")]
    device: String,
    /// Directory for the real files of --device file (default: a temporary directory here).
    #[arg(long)]
    dir: Option<PathBuf>,
    /// SSD preset for --device sim.
    #[arg(long, default_value = "mlc-sata-2010")]
    preset: String,
    /// Print exactly one JSON object on stdout.
    #[arg(long)]
    json: bool,
    /// No progress lines on stderr.
    #[arg(long)]
    quiet: bool,
}

pub fn run(a: &ReproduceArgs) -> Result<()> {
    let Some(name) = &a.name else {
        println!("experiments (flashlab reproduce NAME [--scale quick|paper] [--json]):");
        for (n, paper, what) in EXPERIMENTS {
            println!("  {n:12} {paper}  {what}");
        }
        return Ok(());
    };
    let Some(scale) = Scale::parse(&a.scale) else {
        bail!("--scale {}: expected quick or paper", a.scale);
    };
    if !["file", "sim", "hdd", "all"].contains(&a.device.as_str()) {
        bail!("--device {}: expected file, sim, hdd or all", a.device);
    }
    let opts = ReproduceOptions {
        scale,
        seed: a.seed,
        device: a.device.clone(),
        dir: a.dir.clone(),
        preset: a.preset.clone(),
        progress: !a.quiet,
    };
    let out: Output = match name.as_str() {
        "ioa-ftl" => lab::ioa_ftl::run(&opts)?,
        "as-btree" => lab::as_btree::run(&opts)?,
        "async-scan" => lab::async_scan::run(&opts)?,
        other => {
            let names: Vec<&str> = EXPERIMENTS.iter().map(|e| e.0).collect();
            bail!(
                "unknown experiment `{other}`; available: {}",
                names.join(", ")
            )
        }
    };
    if a.json {
        println!("{}", out.report.to_json());
    } else {
        print!("{out}");
    }
    Ok(())
}
