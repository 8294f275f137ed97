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

// The device registry of the experiments: kinds, the one opener, the temporary directory.
use blockdev::{BlockDevice, ClockKind, FileDevice, FileOptions, HddConfig, HddModel};
use std::path::Path;

/// The devices the engine experiments run on.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum DeviceKind {
    /// A real file: O_DIRECT, io_uring batches, wall-clock time.
    File,
    /// The simulated SSD (data-carrying), simulated time.
    Sim,
    /// The disk model, simulated time.
    Hdd,
}

impl DeviceKind {
    pub const ALL: [DeviceKind; 3] = [DeviceKind::File, DeviceKind::Sim, DeviceKind::Hdd];

    pub fn name(self) -> &'static str {
        match self {
            DeviceKind::File => "file",
            DeviceKind::Sim => "sim",
            DeviceKind::Hdd => "hdd",
        }
    }

    pub fn parse(s: &str) -> Option<DeviceKind> {
        DeviceKind::ALL.into_iter().find(|k| k.name() == s)
    }
}

impl std::fmt::Display for DeviceKind {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

/// `--device`: one device, or every device an experiment supports.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum DeviceChoice {
    One(DeviceKind),
    All,
}

impl DeviceChoice {
    pub fn parse(s: &str) -> Option<DeviceChoice> {
        match s {
            "all" => Some(DeviceChoice::All),
            _ => DeviceKind::parse(s).map(DeviceChoice::One),
        }
    }

    pub fn name(self) -> &'static str {
        match self {
            DeviceChoice::One(k) => k.name(),
            DeviceChoice::All => "all",
        }
    }

    /// The devices to run, refusing one the experiment does not support.
    pub fn resolve(self, experiment: &str, supported: &[DeviceKind]) -> Result<Vec<DeviceKind>> {
        match self {
            DeviceChoice::All => Ok(supported.to_vec()),
            DeviceChoice::One(k) if supported.contains(&k) => Ok(vec![k]),
            DeviceChoice::One(k) => {
                let names: Vec<&str> = supported.iter().map(|d| d.name()).collect();
                anyhow::bail!(
                    "--device {k}: {experiment} runs on {} or all",
                    names.join(", ")
                )
            }
        }
    }
}

/// What an experiment asks of a device; [`open`] makes it on any [`DeviceKind`].
#[derive(Clone, Debug)]
pub struct DeviceRequest<'a> {
    pub page_bytes: usize,
    pub pages: u64,
    /// Logical bytes the simulated SSD holds at least (it may hold more, see [`sim_device`]).
    pub sim_min_bytes: u64,
    pub sim_preset: &'a str,
    /// io_uring queue depth of a file device.
    pub queue_depth: u32,
    /// A file device's file name inside the experiment's directory.
    pub file_name: String,
}

/// The one device opener of the experiments.
pub fn open(kind: DeviceKind, req: &DeviceRequest<'_>, dir: &Path) -> Result<Box<dyn BlockDevice>> {
    Ok(match kind {
        DeviceKind::File => {
            let path = dir.join(&req.file_name);
            let o = FileOptions {
                buffered: false,
                queue_depth: req.queue_depth,
                ..FileOptions::default()
            };
            Box::new(
                FileDevice::create(&path, req.pages, req.page_bytes, o)
                    .with_context(|| format!("creating {}", path.display()))?,
            )
        }
        DeviceKind::Hdd => Box::new(HddModel::new(
            HddConfig::default(),
            req.pages,
            req.page_bytes,
        )?),
        DeviceKind::Sim => Box::new(sim_device(
            req.sim_preset,
            req.page_bytes,
            req.sim_min_bytes,
        )?),
    })
}

/// The temporary directory for an experiment's device files: inside `--dir`, or here; removed
/// when dropped.
pub fn temp_dir(dir: Option<&Path>) -> Result<tempfile::TempDir> {
    match dir {
        Some(d) => tempfile::tempdir_in(d).with_context(|| format!("--dir {}", d.display())),
        None => tempfile::tempdir_in(".")
            .context("creating a temporary directory here for the device files"),
    }
}

/// Seconds of a phase on the device's own clock: wall time on a real file, device time on a
/// simulated one (taken from [`BlockDevice::clock_kind`]).
pub fn phase_seconds(clock: ClockKind, wall_seconds: f64, device_ns: u64) -> f64 {
    match clock {
        ClockKind::Wall => wall_seconds,
        ClockKind::Simulated => device_ns as f64 / 1e9,
    }
}
