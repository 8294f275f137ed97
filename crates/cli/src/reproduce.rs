//! `flashlab reproduce NAME` and `flashlab ftl-memory`.

use anyhow::{bail, Result};
use clap::Args;
use lab::{DeviceChoice, Output, ReproduceOptions, Scale};
use std::path::PathBuf;

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
        for e in lab::EXPERIMENTS {
            println!("  {:12} {}  {}", e.name, e.paper, e.about);
        }
        return Ok(());
    };
    let Some(experiment) = lab::experiments::find(name) else {
        bail!(
            "unknown experiment `{name}`; available: {}",
            lab::experiments::names().join(", ")
        )
    };
    let Some(scale) = Scale::parse(&a.scale) else {
        bail!("--scale {}: expected quick or paper", a.scale);
    };
    let Some(device) = DeviceChoice::parse(&a.device) else {
        bail!("--device {}: expected file, sim, hdd or all", a.device);
    };
    let opts = ReproduceOptions {
        scale,
        seed: a.seed,
        device,
        dir: a.dir.clone(),
        preset: a.preset.clone(),
        progress: !a.quiet,
    };
    let out: Output = (experiment.run)(&opts)?;
    if a.json {
        println!("{}", out.report.to_json());
    } else {
        print!("{out}");
    }
    Ok(())
}

#[derive(Args, Debug)]
pub struct FtlMemoryArgs {
    /// Device capacity, e.g. 4GiB, 64GiB, 16TiB.
    #[arg(long, default_value = "16TiB")]
    capacity: String,
    #[arg(long, default_value = "4KiB")]
    page_size: String,
    #[arg(long, default_value_t = 256)]
    pages_per_block: u32,
    /// Log space as a fraction of capacity (log-block schemes).
    #[arg(long, default_value_t = 0.01)]
    log_space: f64,
    #[arg(long)]
    json: bool,
}

pub fn ftl_memory(a: &FtlMemoryArgs) -> Result<()> {
    let cap = lab::units::parse_bytes(&a.capacity).map_err(anyhow::Error::msg)?;
    let page = lab::units::parse_bytes(&a.page_size).map_err(anyhow::Error::msg)?;
    if !(a.log_space > 0.0 && a.log_space < 1.0) {
        bail!("--log-space {}: expected a fraction in (0, 1)", a.log_space);
    }
    let rows = ssd::ftl::memory::estimate(cap, page, a.pages_per_block as u64, a.log_space);
    if a.json {
        let v: Vec<serde_json::Value> = rows
            .iter()
            .map(|(scheme, bytes)| serde_json::json!({"scheme": scheme, "mapping_bytes": bytes}))
            .collect();
        println!(
            "{}",
            serde_json::json!({"capacity_bytes": cap, "page_bytes": page, "pages_per_block": a.pages_per_block, "log_space": a.log_space, "rows": v})
        );
    } else {
        println!(
            "mapping-table memory for a {} device ({} B pages, {} pages/block, log space {:.1} %):",
            a.capacity,
            page,
            a.pages_per_block,
            a.log_space * 100.0
        );
        for (scheme, bytes) in rows {
            println!(
                "  {scheme:24} {:>14} bytes  ({})",
                bytes,
                human(bytes as f64)
            );
        }
    }
    Ok(())
}

fn human(b: f64) -> String {
    const U: [&str; 5] = ["B", "KiB", "MiB", "GiB", "TiB"];
    let mut x = b;
    let mut i = 0;
    while x >= 1024.0 && i < U.len() - 1 {
        x /= 1024.0;
        i += 1;
    }
    format!("{x:.1} {}", U[i])
}
