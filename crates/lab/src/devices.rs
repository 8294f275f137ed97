//! Simulated devices for the engine experiments: a preset with the experiment's page size, at
//! least `min_bytes` large and never smaller than the preset's smallest capacity that holds its
//! GC reserve and open blocks (`SsdConfig::min_logical_bytes`; small capacities on presets with
//! many dies would otherwise be refused).

use anyhow::{Context, Result};
use blockdev::SimDevice;
use ssd::SsdConfig;

pub fn sim_device(preset: &str, page_bytes: usize, min_bytes: u64) -> Result<SimDevice> {
    let mut cfg = SsdConfig::preset(preset)?;
    cfg.geometry.page_bytes = page_bytes as u32;
    let context = || format!("preset {preset} with {page_bytes}-byte pages");
    let bytes = min_bytes
        .max(1 << 20)
        .max(cfg.min_logical_bytes().with_context(context)?);
    let cfg = cfg.with_logical_capacity(bytes).with_context(context)?;
    Ok(SimDevice::new(cfg)?)
}
