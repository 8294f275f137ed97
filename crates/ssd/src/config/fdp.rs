//! `[ftl.fdp]`: NVMe Flexible Data Placement settings and the reclaim-unit layout the flash
//! and the FTL are built from (the model is described in `crate::ftl::fdp`).

use super::{FtlKind, GcStreamMode, SsdConfig};
use crate::error::ConfigError;
use serde::{Deserialize, Serialize};

/// `[ftl.fdp]`: FDP on a page-mapped device (see the module docs).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct FdpConfig {
    /// Erase blocks per reclaim unit, all on one die (default 1: the RU is the erase block).
    /// Must divide the blocks per die.
    #[serde(default = "one")]
    pub ru_blocks: u32,
    /// Whether GC keeps each handle's data apart (`persistent`) or may mix it (`initial`).
    /// Must agree with `ftl.gc_stream` (`initial`: `separate`; `persistent`: `per_stream`).
    pub isolation: Isolation,
}

fn one() -> u32 {
    1
}

/// The reclaim-unit handle type.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Isolation {
    /// Initially isolated: host writes of each handle go to its own RUs; GC may move data of
    /// different handles into the same RU.
    Initial,
    /// Persistently isolated: GC copies stay within the handle's own RUs.
    Persistent,
}

impl Isolation {
    pub const ALL: [Isolation; 2] = [Isolation::Initial, Isolation::Persistent];

    /// The CLI name (`initial`, `persistent`).
    pub fn name(self) -> &'static str {
        match self {
            Isolation::Initial => "initial",
            Isolation::Persistent => "persistent",
        }
    }

    pub fn parse(s: &str) -> Option<Isolation> {
        Isolation::ALL.into_iter().find(|i| i.name() == s)
    }

    /// Where the page FTL sends GC copies for this handle type.
    pub fn gc_stream(self) -> GcStreamMode {
        match self {
            Isolation::Initial => GcStreamMode::Separate,
            Isolation::Persistent => GcStreamMode::PerStream,
        }
    }
}

/// `cfg` with FDP: its streams as handles, the handle type's GC destination, RUs of
/// `ru_blocks` erase blocks. The caller validates the result.
pub fn with_fdp(cfg: &SsdConfig, handles: u16, ru_blocks: u32, isolation: Isolation) -> SsdConfig {
    let mut c = cfg.clone();
    c.ftl.streams = handles;
    c.ftl.gc_stream = isolation.gc_stream();
    c.ftl.fdp = Some(FdpConfig {
        ru_blocks,
        isolation,
    });
    c
}

fn invalid(field: &'static str, value: impl ToString, reason: &'static str) -> ConfigError {
    ConfigError::Invalid {
        field,
        value: value.to_string(),
        reason,
    }
}

/// FDP's own rules (the rest of the config is checked by `SsdConfig::validate`).
pub(crate) fn validate(cfg: &SsdConfig) -> Result<(), ConfigError> {
    let Some(f) = cfg.ftl.fdp else {
        return Ok(());
    };
    if cfg.ftl.scheme != FtlKind::Page {
        return Err(invalid(
            "ftl.scheme",
            cfg.ftl.scheme.name(),
            "FDP ([ftl.fdp]) is modelled on the page FTL: use scheme = \"page\"",
        ));
    }
    let bpd = cfg.blocks_per_die();
    if f.ru_blocks == 0 || !bpd.is_multiple_of(f.ru_blocks) {
        return Err(invalid(
            "ftl.fdp.ru_blocks",
            f.ru_blocks,
            "a reclaim unit is a whole number of erase blocks that divides the blocks per die (planes_per_die x blocks_per_plane)",
        ));
    }
    if cfg.geometry.pages_per_block as u64 * f.ru_blocks as u64 > 65_535 {
        return Err(invalid(
            "ftl.fdp.ru_blocks",
            f.ru_blocks,
            "a reclaim unit holds at most 65535 pages: use fewer erase blocks per RU",
        ));
    }
    if cfg.ftl.gc_stream != f.isolation.gc_stream() {
        return Err(invalid(
            "ftl.gc_stream",
            cfg.ftl.gc_stream.name(),
            "with [ftl.fdp] the handle type decides where GC copies go: isolation = \"initial\" needs gc_stream = \"separate\", \"persistent\" needs \"per_stream\"",
        ));
    }
    let unit = flash_config(cfg);
    let ru_pages = unit.geometry.pages_per_block as u64;
    let spare_rus = (cfg.physical_pages() - cfg.logical_pages()) / ru_pages;
    let needed = unit.spare_blocks_needed();
    if spare_rus < needed {
        return Err(invalid(
            "ftl.fdp.ru_blocks",
            format!("{} ({spare_rus} spare RUs, {needed} needed)", f.ru_blocks),
            "the spare space must hold the GC reserve and every handle's open RU in whole RUs: use smaller RUs, fewer handles, or raise ftl.op or the capacity",
        ));
    }
    Ok(())
}

/// The config the flash and the FTL are built from: `cfg` itself without FDP or with one-block
/// RUs; else the RU layout (an RU as the erase unit: `ru_blocks` times the pages per block,
/// one plane of blocks per die divided by `ru_blocks`, and the erase time of `ru_blocks`
/// erases). The logical space stays `cfg`'s (the FTL is built with it).
pub fn flash_config(cfg: &SsdConfig) -> SsdConfig {
    let k = erase_blocks_per_unit(cfg);
    if k == 1 {
        return cfg.clone();
    }
    let mut c = cfg.clone();
    let g = &mut c.geometry;
    g.blocks_per_plane = cfg.blocks_per_die() / k;
    g.planes_per_die = 1;
    g.pages_per_block *= k;
    c.timing.t_erase_ns = cfg.timing.t_erase_ns.saturating_mul(k as u64);
    assert_eq!(c.physical_pages(), cfg.physical_pages(), "the RU layout");
    c
}

/// Erase blocks the FTL erases as one unit (1 without FDP).
pub fn erase_blocks_per_unit(cfg: &SsdConfig) -> u32 {
    cfg.ftl.fdp.map_or(1, |f| f.ru_blocks.max(1))
}
