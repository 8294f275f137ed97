//! `SsdConfig`: NAND geometry, timing and FTL settings (serde + TOML), validated once.
//!
//! Units are in the field names. Over-provisioning `op` is (physical − logical) / logical.
//! `types` holds the fields, `presets` the shipped configs and loading, `sizing` the derived
//! sizes and resizing, `validate` the checks, `memory` the RAM estimate.

pub mod fdp;
mod memory;
mod presets;
mod sizing;
mod types;
mod validate;

pub use fdp::{FdpConfig, Isolation};
pub use presets::{preset_names, PRESETS};
pub use types::*;

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
