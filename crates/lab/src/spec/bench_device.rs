//! [`BenchDeviceSpec`]: a `flashlab bench device` run (P1's Table 1 cells on a simulated SSD
//! preset or a real file).

use super::{de, RunSpec, SpecError};
use crate::bench_device::BenchOptions;
use crate::units::parse_bytes;
use crate::DeviceKind;
use serde::{Deserialize, Serialize};
use std::path::PathBuf;

/// The device benchmark. Defaults: the simulated SSD with P1's preset at its own size, 16 MiB
/// per cell, 2 device-fulls of random writes before the random writes, seed 1.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(default)]
#[cfg_attr(feature = "clap", derive(clap::Args))]
pub struct BenchDeviceSpec {
    /// sim (a preset) or file (a real file, O_DIRECT + io_uring, in --dir).
    #[cfg_attr(feature = "clap", arg(long, default_value = "sim"))]
    #[serde(deserialize_with = "de::string")]
    pub device: String,
    /// The simulated SSD's preset (`flashlab presets` lists them) [default: p1-ssd].
    #[cfg_attr(feature = "clap", arg(long))]
    #[serde(deserialize_with = "de::opt_string")]
    pub preset: Option<String>,
    /// A simulated SSD config file (TOML, as `flashlab presets --show NAME`) instead of a preset.
    #[cfg_attr(
        feature = "clap",
        arg(long, value_name = "PATH", conflicts_with = "preset")
    )]
    #[serde(deserialize_with = "de::opt_parsed")]
    pub config: Option<PathBuf>,
    /// Directory of the file for --device file (a disk file system) [default: here].
    #[cfg_attr(feature = "clap", arg(long))]
    #[serde(deserialize_with = "de::opt_parsed")]
    pub dir: Option<PathBuf>,
    /// Size of the device [default: the preset's own (at least the size that keeps its GC
    /// pools per die); a file: 1GiB].
    #[cfg_attr(feature = "clap", arg(long))]
    #[serde(deserialize_with = "de::opt_string")]
    pub capacity: Option<String>,
    /// Bytes each cell (pattern, size, queue depth) moves.
    #[cfg_attr(feature = "clap", arg(long, default_value = "16MiB"))]
    #[serde(deserialize_with = "de::string")]
    pub cell: String,
    /// Simulated SSD: device-fulls of random 4 KiB writes before the random writes.
    #[cfg_attr(feature = "clap", arg(long, default_value_t = 2.0))]
    #[serde(deserialize_with = "de::parsed")]
    pub precondition: f64,
    #[cfg_attr(feature = "clap", arg(long, default_value_t = 1))]
    #[serde(deserialize_with = "de::parsed")]
    pub seed: u64,
    /// Run on a RAM file system (tmpfs) anyway (its timings are RAM speed).
    #[cfg_attr(feature = "clap", arg(long))]
    #[serde(deserialize_with = "de::flag")]
    pub allow_memory_fs: bool,
}

impl Default for BenchDeviceSpec {
    fn default() -> Self {
        BenchDeviceSpec {
            device: "sim".into(),
            preset: None,
            config: None,
            dir: None,
            capacity: None,
            cell: "16MiB".into(),
            precondition: 2.0,
            seed: 1,
            allow_memory_fs: false,
        }
    }
}

impl RunSpec for BenchDeviceSpec {
    const VALUE_NAMES: &'static [(&'static str, &'static str)] = &[("config", "PATH")];

    /// Refused: a device other than sim or file, a preset or config with a file, a directory
    /// with the simulated SSD, sizes that do not parse, a preconditioning outside 0-100.
    fn validate(&self) -> Result<(), SpecError> {
        let device = self.device()?;
        if self.preset.is_some() && self.config.is_some() {
            return Err(SpecError::rule("--config", "cannot be used with --preset"));
        }
        if device == DeviceKind::File && (self.preset.is_some() || self.config.is_some()) {
            return Err(SpecError::stated(
                "--preset",
                "--preset and --config apply to --device sim only",
            ));
        }
        if device == DeviceKind::Sim && self.dir.is_some() {
            return Err(SpecError::rule("--dir", "applies to --device file only"));
        }
        if !(self.precondition.is_finite() && (0.0..=100.0).contains(&self.precondition)) {
            return Err(SpecError::value(
                "--precondition",
                self.precondition,
                "expected 0 to 100 device-fulls",
            ));
        }
        if let Some(c) = &self.capacity {
            bytes(c, "--capacity")?;
        }
        bytes(&self.cell, "--cell").map(|_| ())
    }
}

impl BenchDeviceSpec {
    fn device(&self) -> Result<DeviceKind, SpecError> {
        match self.device.as_str() {
            "sim" => Ok(DeviceKind::Sim),
            "file" => Ok(DeviceKind::File),
            d => Err(SpecError::value("--device", d, "expected sim or file")),
        }
    }

    /// The options `lab::bench_device::run` takes (the config file read; progress lines on
    /// stderr when `progress`).
    pub fn options(&self, progress: bool) -> anyhow::Result<BenchOptions> {
        self.validate()?;
        let config = match &self.config {
            Some(p) => Some(ssd::SsdConfig::from_file(p)?),
            None => None,
        };
        Ok(BenchOptions {
            device: self.device()?,
            preset: match (&config, &self.preset) {
                (Some(c), _) => c.name.clone(),
                (None, Some(p)) => p.clone(),
                (None, None) => crate::papers::p1_as_btree::DEFAULT_PRESET.into(),
            },
            config,
            dir: self.dir.clone(),
            allow_memory_fs: self.allow_memory_fs,
            capacity_bytes: self
                .capacity
                .as_deref()
                .map(|c| bytes(c, "--capacity"))
                .transpose()?,
            cell_bytes: bytes(&self.cell, "--cell")?,
            precondition_x: self.precondition,
            seed: self.seed,
            progress,
        })
    }
}

/// A size; the error reads `FLAG VALUE: why`.
fn bytes(s: &str, flag: &'static str) -> Result<u64, SpecError> {
    parse_bytes(s).map_err(|e| SpecError::value(flag, s, e))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn device_rules_refuse_with_their_flag() {
        assert_eq!(BenchDeviceSpec::default().validate(), Ok(()));
        let field = |f: fn(&mut BenchDeviceSpec)| {
            let mut s = BenchDeviceSpec::default();
            f(&mut s);
            s.validate().unwrap_err().field()
        };
        assert_eq!(field(|s| s.device = "hdd".into()), "--device");
        assert_eq!(field(|s| s.dir = Some("/tmp".into())), "--dir");
        assert_eq!(field(|s| s.precondition = -1.0), "--precondition");
        assert_eq!(field(|s| s.cell = "lots".into()), "--cell");
        assert_eq!(
            field(|s| {
                s.device = "file".into();
                s.preset = Some("p1-ssd".into());
            }),
            "--preset"
        );
    }
}
