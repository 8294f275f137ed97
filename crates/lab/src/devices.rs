//! Simulated devices for the engine experiments: a preset with the experiment's page size,
//! grown until it holds `min_bytes` and its GC reserve and open blocks fit (small capacities
//! on presets with many dies would otherwise be refused).

use anyhow::{Context, Result};
use blockdev::SimDevice;
use ssd::SsdConfig;

pub fn sim_device(preset: &str, page_bytes: usize, min_bytes: u64) -> Result<SimDevice> {
    let mut cfg = SsdConfig::preset(preset)?;
    cfg.geometry.page_bytes = page_bytes as u32;
    let mut bytes = min_bytes.max(1 << 20);
    let mut last_err = None;
    for _ in 0..12 {
        match cfg.clone().with_logical_capacity(bytes) {
            Ok(c) => return Ok(SimDevice::new(c)?),
            Err(e) => last_err = Some(e),
        }
        bytes *= 2;
    }
    Err(last_err.expect("tried at least once"))
        .with_context(|| format!("preset {preset} with {page_bytes}-byte pages"))
}
