//! The shipped presets and loading a config from TOML text or a file.

use super::SsdConfig;
use crate::error::ConfigError;
use std::path::Path;

/// The shipped presets: (name, TOML text). Selectable by name with [`SsdConfig::preset`].
pub const PRESETS: &[(&str, &str)] = &[
    (
        "mlc-sata-2010",
        include_str!("../../presets/mlc-sata-2010.toml"),
    ),
    (
        "tlc-nvme-2024",
        include_str!("../../presets/tlc-nvme-2024.toml"),
    ),
    (
        "jasmine-openssd",
        include_str!("../../presets/jasmine-openssd.toml"),
    ),
    ("p1-ssd", include_str!("../../presets/p1-ssd.toml")),
    ("p2-ssd", include_str!("../../presets/p2-ssd.toml")),
    ("x25m", include_str!("../../presets/x25m.toml")),
    ("pm953", include_str!("../../presets/pm953.toml")),
    (
        "fdp-dc-2025",
        include_str!("../../presets/fdp-dc-2025.toml"),
    ),
];

/// Names of the shipped presets.
pub fn preset_names() -> Vec<&'static str> {
    PRESETS.iter().map(|(n, _)| *n).collect()
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
        let mut cfg: SsdConfig = toml::from_str(text).map_err(|e| ConfigError::Parse {
            origin: origin.to_string(),
            message: e.to_string(),
        })?;
        cfg.validate()?;
        cfg.loaded.cmt = Some((cfg.ftl.cmt_entries, cfg.logical_pages()));
        Ok(cfg)
    }

    /// Read, parse and validate a TOML file.
    pub fn from_file(path: &Path) -> Result<SsdConfig, ConfigError> {
        let text = bounded::read_text(path, bounded::CONFIG_BYTES_MAX, "an SSD config").map_err(
            |source| ConfigError::Io {
                path: path.to_path_buf(),
                source,
            },
        )?;
        SsdConfig::from_toml(&text, &path.display().to_string())
    }

    pub fn to_toml(&self) -> String {
        toml::to_string_pretty(self).expect("SsdConfig always serializes")
    }
}
