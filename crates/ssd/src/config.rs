//! `SsdConfig`: NAND geometry, timing and FTL settings (serde + TOML), validated once.
//!
//! Units are in the field names. Over-provisioning `op` is (physical − logical) / logical.

use crate::error::ConfigError;
use serde::{Deserialize, Serialize};
use std::path::Path;

/// The shipped presets: (name, TOML text). Selectable by name with [`SsdConfig::preset`].
pub const PRESETS: &[(&str, &str)] = &[
    (
        "mlc-sata-2010",
        include_str!("../presets/mlc-sata-2010.toml"),
    ),
    (
        "tlc-nvme-2024",
        include_str!("../presets/tlc-nvme-2024.toml"),
    ),
    (
        "jasmine-openssd",
        include_str!("../presets/jasmine-openssd.toml"),
    ),
];

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SsdConfig {
    /// Free-form name, e.g. the preset's.
    #[serde(default)]
    pub name: String,
    pub geometry: Geometry,
    pub timing: Timing,
    pub ftl: FtlConfig,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Geometry {
    pub channels: u32,
    pub dies_per_channel: u32,
    pub planes_per_die: u32,
    pub blocks_per_plane: u32,
    pub pages_per_block: u32,
    pub page_bytes: u32,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Timing {
    /// Off: the pure FTL/GC path (every operation completes at the time it is issued).
    #[serde(default = "yes")]
    pub enabled: bool,
    pub t_read_ns: u64,
    pub t_prog_ns: u64,
    pub t_erase_ns: u64,
    /// Channel (bus) transfer rate, MB/s (10^6 bytes per second).
    pub channel_mb_per_s: f64,
    /// Host requests in flight at once (1 = synchronous).
    #[serde(default = "one")]
    pub host_queue_depth: u32,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum FtlKind {
    Page,
    Block,
    Bast,
    Fast,
    Dftl,
    Ioa,
}

impl FtlKind {
    pub const ALL: [FtlKind; 6] = [
        FtlKind::Page,
        FtlKind::Block,
        FtlKind::Bast,
        FtlKind::Fast,
        FtlKind::Dftl,
        FtlKind::Ioa,
    ];
    pub fn name(self) -> &'static str {
        match self {
            FtlKind::Page => "page",
            FtlKind::Block => "block",
            FtlKind::Bast => "bast",
            FtlKind::Fast => "fast",
            FtlKind::Dftl => "dftl",
            FtlKind::Ioa => "ioa",
        }
    }
    pub fn parse(s: &str) -> Option<FtlKind> {
        FtlKind::ALL.into_iter().find(|k| k.name() == s)
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum GcPolicy {
    Greedy,
    CostBenefit,
    Fifo,
}

impl GcPolicy {
    pub fn parse(s: &str) -> Option<GcPolicy> {
        match s {
            "greedy" => Some(GcPolicy::Greedy),
            "cost-benefit" | "cost_benefit" | "cb" => Some(GcPolicy::CostBenefit),
            "fifo" => Some(GcPolicy::Fifo),
            _ => None,
        }
    }
}

/// Where GC copies go: their own stream's blocks (`victim`) or a separate GC stream (`separate`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum GcStreamMode {
    Separate,
    Victim,
}

/// What the device keeps of each written page.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum DataMode {
    /// A 64-bit tag per page (enough to check every read returns the last write).
    Tags,
    /// Full page payloads (engines run on the device).
    Payloads,
}

impl DataMode {
    pub fn name(self) -> &'static str {
        match self {
            DataMode::Tags => "tags",
            DataMode::Payloads => "payloads",
        }
    }
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct FtlConfig {
    #[serde(default = "page_kind")]
    pub scheme: FtlKind,
    /// Over-provisioning, (physical − logical) / logical.
    pub op: f64,
    #[serde(default = "greedy")]
    pub gc_policy: GcPolicy,
    /// Foreground GC runs when a die's free blocks fall below this many (the GC reserve).
    #[serde(default = "two")]
    pub gc_free_blocks_min: u32,
    /// Host write streams (1 = no streams).
    #[serde(default = "one")]
    pub streams: u16,
    #[serde(default = "separate")]
    pub gc_stream: GcStreamMode,
    /// Log-block schemes (bast, fast, ioa): number of log blocks in the whole device.
    #[serde(default = "log_blocks_default")]
    pub log_blocks: u32,
    /// DFTL: cached mapping table size in entries (one entry maps one page).
    #[serde(default = "cmt_default")]
    pub cmt_entries: u32,
    #[serde(default = "tags")]
    pub data: DataMode,
    /// Run the FTL's invariant verifier after every GC and merge (slow; for tests).
    #[serde(default)]
    pub check_invariants: bool,
}

fn yes() -> bool {
    true
}
fn one<T: From<u8>>() -> T {
    T::from(1)
}
fn two() -> u32 {
    2
}
fn page_kind() -> FtlKind {
    FtlKind::Page
}
fn greedy() -> GcPolicy {
    GcPolicy::Greedy
}
fn separate() -> GcStreamMode {
    GcStreamMode::Separate
}
fn log_blocks_default() -> u32 {
    64
}
fn cmt_default() -> u32 {
    16384
}
fn tags() -> DataMode {
    DataMode::Tags
}

impl SsdConfig {
    /// A shipped preset by name.
    pub fn preset(name: &str) -> Result<SsdConfig, ConfigError> {
        let text = PRESETS
            .iter()
            .find(|(n, _)| *n == name)
            .map(|(_, t)| *t)
            .ok_or_else(|| ConfigError::UnknownPreset {
                name: name.to_string(),
                available: preset_names().join(", "),
            })?;
        SsdConfig::from_toml(text, &format!("preset `{name}`"))
    }

    /// Parse and validate TOML text; `origin` names it in errors.
    pub fn from_toml(text: &str, origin: &str) -> Result<SsdConfig, ConfigError> {
        let cfg: SsdConfig = toml::from_str(text).map_err(|e| ConfigError::Parse {
            origin: origin.to_string(),
            message: e.to_string(),
        })?;
        cfg.validate()?;
        Ok(cfg)
    }

    /// Read, parse and validate a TOML file.
    pub fn from_file(path: &Path) -> Result<SsdConfig, ConfigError> {
        let text = std::fs::read_to_string(path).map_err(|source| ConfigError::Io {
            path: path.to_path_buf(),
            source,
        })?;
        SsdConfig::from_toml(&text, &path.display().to_string())
    }

    pub fn to_toml(&self) -> String {
        toml::to_string_pretty(self).expect("SsdConfig always serializes")
    }

    pub fn dies(&self) -> u32 {
        self.geometry.channels * self.geometry.dies_per_channel
    }
    pub fn blocks_per_die(&self) -> u32 {
        self.geometry.planes_per_die * self.geometry.blocks_per_plane
    }
    pub fn total_blocks(&self) -> u64 {
        self.dies() as u64 * self.blocks_per_die() as u64
    }
    pub fn physical_pages(&self) -> u64 {
        self.total_blocks() * self.geometry.pages_per_block as u64
    }
    /// Logical pages the host sees: physical / (1 + op), rounded down to whole blocks.
    pub fn logical_pages(&self) -> u64 {
        let ppb = self.geometry.pages_per_block as u64;
        let blocks = (self.total_blocks() as f64 / (1.0 + self.ftl.op)).floor() as u64;
        blocks * ppb
    }
    pub fn logical_bytes(&self) -> u64 {
        self.logical_pages() * self.geometry.page_bytes as u64
    }
    /// Desnoyers' alpha: physical blocks that can hold data (the GC free-block reserve
    /// excluded) over logical blocks.
    pub fn alpha(&self) -> f64 {
        let reserve = self.ftl.gc_free_blocks_min as u64 * self.dies() as u64;
        let logical_blocks = self.logical_pages() / self.geometry.pages_per_block as u64;
        (self.total_blocks() - reserve) as f64 / logical_blocks as f64
    }

    /// Resize `blocks_per_plane` so the logical capacity is at least `bytes` at the current `op`.
    pub fn with_logical_capacity(mut self, bytes: u64) -> Result<SsdConfig, ConfigError> {
        let g = &self.geometry;
        let block_bytes = g.pages_per_block as u64 * g.page_bytes as u64;
        let logical_blocks = bytes.div_ceil(block_bytes);
        let physical_blocks = (logical_blocks as f64 * (1.0 + self.ftl.op)).ceil() as u64;
        let per_plane = physical_blocks.div_ceil(self.dies() as u64 * g.planes_per_die as u64);
        self.geometry.blocks_per_plane =
            u32::try_from(per_plane.max(1)).map_err(|_| ConfigError::Invalid {
                field: "capacity",
                value: bytes.to_string(),
                reason: "too large for this geometry".into(),
            })?;
        // Rounding can leave the logical size a block short: grow until it fits.
        while self.logical_bytes() < bytes {
            self.geometry.blocks_per_plane += 1;
        }
        self.validate()?;
        Ok(self)
    }

    /// Check every field; the error names the field, its value and what to do.
    pub fn validate(&self) -> Result<(), ConfigError> {
        let g = &self.geometry;
        positive("geometry.channels", g.channels as u64)?;
        positive("geometry.dies_per_channel", g.dies_per_channel as u64)?;
        positive("geometry.planes_per_die", g.planes_per_die as u64)?;
        positive("geometry.blocks_per_plane", g.blocks_per_plane as u64)?;
        positive("geometry.pages_per_block", g.pages_per_block as u64)?;
        if g.page_bytes < 512 || !g.page_bytes.is_power_of_two() {
            return Err(invalid(
                "geometry.page_bytes",
                g.page_bytes,
                "must be a power of two of at least 512",
            ));
        }
        if g.pages_per_block > 65_535 {
            return Err(invalid(
                "geometry.pages_per_block",
                g.pages_per_block,
                "at most 65535",
            ));
        }
        if self.physical_pages() >= u32::MAX as u64 {
            return Err(invalid(
                "geometry",
                self.physical_pages(),
                "more than 2^32-1 physical pages; use larger pages or fewer blocks",
            ));
        }
        let t = &self.timing;
        if !(t.channel_mb_per_s.is_finite() && t.channel_mb_per_s > 0.0) {
            return Err(invalid(
                "timing.channel_mb_per_s",
                t.channel_mb_per_s,
                "must be > 0",
            ));
        }
        positive("timing.host_queue_depth", t.host_queue_depth as u64)?;
        self.validate_ftl()
    }

    fn validate_ftl(&self) -> Result<(), ConfigError> {
        let f = &self.ftl;
        if !(f.op.is_finite() && f.op > 0.0 && f.op <= 10.0) {
            return Err(invalid(
                "ftl.op",
                f.op,
                "over-provisioning must be in (0, 10]",
            ));
        }
        positive("ftl.streams", f.streams as u64)?;
        positive("ftl.gc_free_blocks_min", f.gc_free_blocks_min as u64)?;
        if f.scheme == FtlKind::Dftl {
            positive("ftl.cmt_entries", f.cmt_entries as u64)?;
        }
        let spare =
            self.total_blocks() - self.logical_pages() / self.geometry.pages_per_block as u64;
        let reserve = f.gc_free_blocks_min as u64 * self.dies() as u64;
        let open = (f.streams as u64 + 1) * self.dies() as u64; // host streams + the GC stream, per die
        if matches!(f.scheme, FtlKind::Bast | FtlKind::Fast | FtlKind::Ioa) {
            positive("ftl.log_blocks", f.log_blocks as u64)?;
            if f.log_blocks as u64 + 2 > spare {
                return Err(invalid(
                    "ftl.log_blocks",
                    f.log_blocks,
                    &format!(
                        "only {spare} spare blocks at this op; raise ftl.op or lower log_blocks"
                    ),
                ));
            }
        } else if reserve + open >= spare {
            return Err(invalid(
                "ftl.op",
                f.op,
                &format!(
                    "{spare} spare blocks cannot hold the GC reserve ({reserve}) and open blocks ({open}); raise ftl.op or the capacity"
                ),
            ));
        }
        Ok(())
    }
}

/// Names of the shipped presets.
pub fn preset_names() -> Vec<&'static str> {
    PRESETS.iter().map(|(n, _)| *n).collect()
}

fn positive(field: &'static str, v: u64) -> Result<(), ConfigError> {
    if v == 0 {
        Err(invalid(field, v, "must be at least 1"))
    } else {
        Ok(())
    }
}

fn invalid(field: &'static str, value: impl std::fmt::Display, reason: &str) -> ConfigError {
    ConfigError::Invalid {
        field,
        value: value.to_string(),
        reason: reason.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_preset_parses_and_validates() {
        for name in preset_names() {
            let cfg = SsdConfig::preset(name).unwrap();
            assert!(cfg.logical_pages() > 0, "{name}");
            assert!(cfg.alpha() > 1.0, "{name}");
        }
    }

    #[test]
    fn unknown_preset_lists_the_available_ones() {
        let e = SsdConfig::preset("nope").unwrap_err().to_string();
        assert!(e.contains("mlc-sata-2010"), "{e}");
    }

    #[test]
    fn capacity_override_gives_at_least_the_requested_logical_bytes() {
        let cfg = SsdConfig::preset("mlc-sata-2010")
            .unwrap()
            .with_logical_capacity(1 << 30)
            .unwrap();
        assert!(cfg.logical_bytes() >= 1 << 30);
        assert!(cfg.logical_bytes() < (1 << 30) + (1 << 26));
    }

    #[test]
    fn bad_fields_are_named() {
        let mut cfg = SsdConfig::preset("mlc-sata-2010").unwrap();
        cfg.geometry.page_bytes = 1000;
        let e = cfg.validate().unwrap_err().to_string();
        assert!(e.contains("geometry.page_bytes"), "{e}");
        let bad = SsdConfig::from_toml("[geometry]\nchannels = 1", "inline").unwrap_err();
        assert!(bad.to_string().contains("inline"));
    }
}
