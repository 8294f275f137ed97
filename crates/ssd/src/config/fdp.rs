//! `[ftl.fdp]`: NVMe Flexible Data Placement settings and the reclaim-unit layout the flash
//! and the FTL are built from (the model is described in `crate::ftl::fdp`).

use super::{FtlKind, GcStreamMode, SsdConfig};
use crate::error::ConfigError;
use serde::{Deserialize, Serialize};

/// `[ftl.fdp]`: FDP on a page-mapped device (see the module docs).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct FdpConfig {
    /// Erase blocks per reclaim unit on each die it spans (default 1). Must divide the blocks
    /// per die. An RU holds `ru_blocks x ru_dies` erase blocks.
    #[serde(default = "one")]
    pub ru_blocks: u32,
    /// Dies a reclaim unit spans (default 1: the RU lies on one die). `ru_dies` = every die of
    /// the reclaim group with `ru_blocks = 1` is the superblock RU current FDP drives report
    /// (one erase block per die, written striped across the dies). Must divide the dies, and
    /// either divide the channels or be a multiple of them (an RU covers its channels evenly).
    #[serde(default = "one")]
    pub ru_dies: u32,
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
        ru_dies: 1,
        isolation,
    });
    c
}

/// `cfg` (with FDP) with reclaim units spanning `ru_dies` dies, `ru_blocks` erase blocks on
/// each. The caller validates the result.
pub fn spanning_dies(cfg: &SsdConfig, ru_dies: u32) -> SsdConfig {
    let mut c = cfg.clone();
    let f = c
        .ftl
        .fdp
        .as_mut()
        .expect("spanning_dies: a config with [ftl.fdp]");
    f.ru_dies = ru_dies;
    c
}

/// `cfg` without FDP: no `[ftl.fdp]`, one stream, the default GC destination (what the
/// schemes other than the page FTL run an FDP preset as).
pub fn without_fdp(cfg: &SsdConfig) -> SsdConfig {
    let mut c = cfg.clone();
    c.ftl.fdp = None;
    c.ftl.streams = 1;
    c.ftl.gc_stream = GcStreamMode::PerStream;
    c
}

fn invalid(field: &'static str, value: impl ToString, reason: &'static str) -> ConfigError {
    ConfigError::Invalid {
        field,
        value: value.to_string(),
        reason,
    }
}

/// FDP's own field rules (run by `SsdConfig::validate_fields`): the scheme, the handle type's
/// GC destination and the RU's shape, whatever the drive's size.
pub(crate) fn validate_fields(cfg: &SsdConfig) -> Result<(), ConfigError> {
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
    validate_shape(cfg, f)?;
    if cfg.ftl.gc_stream != f.isolation.gc_stream() {
        return Err(invalid(
            "ftl.gc_stream",
            cfg.ftl.gc_stream.name(),
            "with [ftl.fdp] the handle type decides where GC copies go: isolation = \"initial\" needs gc_stream = \"separate\", \"persistent\" needs \"per_stream\"",
        ));
    }
    Ok(())
}

/// FDP's rules on the drive's size (run by `SsdConfig::validate` after the fields): RUs of
/// whole blocks of each die, and spare RUs for the GC reserve and every handle's open RU.
pub(crate) fn validate_size(cfg: &SsdConfig) -> Result<(), ConfigError> {
    let Some(f) = cfg.ftl.fdp else {
        return Ok(());
    };
    if !cfg.blocks_per_die().is_multiple_of(f.ru_blocks) {
        return Err(invalid(
            "ftl.fdp.ru_blocks",
            f.ru_blocks,
            "a reclaim unit takes a whole number of erase blocks of each die it spans, dividing the blocks per die (planes_per_die x blocks_per_plane)",
        ));
    }
    let (spare_rus, needed) = spare_rus(cfg);
    if spare_rus < needed {
        return Err(invalid(
            "ftl.fdp.ru_blocks",
            format!("{} ({spare_rus} spare RUs, {needed} needed)", f.ru_blocks),
            "the spare space must hold the GC reserve and every handle's open RU in whole RUs: use smaller RUs, fewer handles, or raise ftl.op or the capacity",
        ));
    }
    Ok(())
}

/// The RU's shape: at least one block, on dies that cover their channels evenly, at most
/// 65535 pages.
fn validate_shape(cfg: &SsdConfig, f: FdpConfig) -> Result<(), ConfigError> {
    if f.ru_blocks == 0 {
        return Err(invalid(
            "ftl.fdp.ru_blocks",
            f.ru_blocks,
            "a reclaim unit holds at least one erase block of each die it spans",
        ));
    }
    let (dies, channels) = (cfg.dies(), cfg.geometry.channels);
    let even = f.ru_dies > 0
        && (channels.is_multiple_of(f.ru_dies)
            || (f.ru_dies.is_multiple_of(channels)
                && cfg
                    .geometry
                    .dies_per_channel
                    .is_multiple_of(f.ru_dies / channels)));
    if !even || !dies.is_multiple_of(f.ru_dies) {
        return Err(invalid(
            "ftl.fdp.ru_dies",
            f.ru_dies,
            "a reclaim unit spans a number of dies that divides the dies and either divides the channels or is a multiple of them (e.g. every die: one superblock)",
        ));
    }
    let ru_pages = cfg.geometry.pages_per_block as u64 * f.ru_blocks as u64 * f.ru_dies as u64;
    if ru_pages > 65_535 {
        return Err(invalid(
            "ftl.fdp.ru_blocks",
            f.ru_blocks,
            "a reclaim unit holds at most 65535 pages (pages_per_block x ru_blocks x ru_dies): use fewer erase blocks or dies per RU",
        ));
    }
    Ok(())
}

/// `(spare RUs, RUs the FTL needs spare)` of a config with a valid RU shape.
fn spare_rus(cfg: &SsdConfig) -> (u64, u64) {
    let unit = flash_config(cfg);
    let ru_pages = unit.geometry.pages_per_block as u64;
    let spare_rus = (cfg.physical_pages() - cfg.logical_pages()) / ru_pages;
    (spare_rus, unit.spare_blocks_needed())
}

/// Grow `cfg` (resized to a capacity) until its RUs fit: the blocks per die a multiple of
/// `ru_blocks`, and spare RUs for the GC reserve and every handle's open RU. A no-op without
/// FDP or where they fit; the RU's shape is kept, so a small capacity can give a larger drive.
pub(crate) fn grow_to_fit(cfg: &mut SsdConfig) -> Result<(), ConfigError> {
    let Some(f) = cfg.ftl.fdp else {
        return Ok(());
    };
    if validate_shape(cfg, f).is_err() {
        return Ok(()); // a shape no size mends: `validate_fields` names it
    }
    // Blocks per plane step by the least amount that keeps the blocks per die a multiple of
    // `ru_blocks`.
    let step = f.ru_blocks / gcd(f.ru_blocks, cfg.geometry.planes_per_die.max(1));
    let bpp = cfg.geometry.blocks_per_plane.max(1);
    cfg.geometry.blocks_per_plane = bpp.div_ceil(step).saturating_mul(step);
    // Spare RUs grow with the size, so the search ends (bounded all the same).
    for _ in 0..GROW_STEPS_MAX {
        let (spare, needed) = spare_rus(cfg);
        if spare >= needed {
            return Ok(());
        }
        let now = cfg.geometry.blocks_per_plane as u64;
        let next = (now * 5 / 4)
            .div_ceil(step as u64)
            .max(now / step as u64 + 1)
            * step as u64;
        let too_large = || {
            invalid(
                "capacity",
                next,
                "too large for this geometry with these reclaim units",
            )
        };
        cfg.geometry.blocks_per_plane = u32::try_from(next).map_err(|_| too_large())?;
        if cfg.physical_pages_wide() >= u32::MAX as u128 {
            return Err(too_large());
        }
    }
    Ok(())
}

/// Steps `grow_to_fit` may take (each grows the drive by a quarter).
const GROW_STEPS_MAX: u32 = 64;

fn gcd(a: u32, b: u32) -> u32 {
    if b == 0 {
        a
    } else {
        gcd(b, a % b)
    }
}

/// The config the flash and the FTL are built from: `cfg` itself without FDP or with RUs of
/// one erase block; else the *RU layout*, where an RU is the erase unit:
/// - its pages: `pages_per_block x ru_blocks x ru_dies`;
/// - its dies: each group of `ru_dies` consecutive dies (consecutive dies sit on different
///   channels) is one die of the layout, holding `blocks_per_die / ru_blocks` RUs;
/// - its timing, throughput-equivalent: a layout die programs and senses `ru_dies` pages at
///   once (program and read times divided by `ru_dies`), a layout channel carries the
///   channels it covers (their bandwidth summed), and an RU's erase takes `ru_blocks` erase
///   times (its dies erase in parallel). A single page's latency is therefore understated
///   `ru_dies`-fold; throughput, the GC's work and the WAF are the striped superblock's.
///
/// The logical space stays `cfg`'s (the FTL is built with it). Where each page of the layout
/// lies on the real dies is [`physical_page`].
pub fn flash_config(cfg: &SsdConfig) -> SsdConfig {
    let (k, n) = ru_shape(cfg);
    if k == 1 && n == 1 {
        return cfg.clone();
    }
    let mut c = cfg.clone();
    let g = &mut c.geometry;
    let (channels, dpc) = (g.channels, g.dies_per_channel);
    let unit_channels = if channels.is_multiple_of(n) {
        channels / n
    } else {
        1
    };
    g.channels = unit_channels;
    g.dies_per_channel = channels * dpc / n / unit_channels;
    g.blocks_per_plane = cfg.blocks_per_die() / k;
    g.planes_per_die = 1;
    g.pages_per_block *= k * n;
    let t = &mut c.timing;
    t.t_erase_ns = cfg.timing.t_erase_ns.saturating_mul(k as u64);
    t.t_prog_ns = cfg.timing.t_prog_ns / n as u64;
    t.t_read_ns = cfg.timing.t_read_ns / n as u64;
    t.channel_mb_per_s = cfg.timing.channel_mb_per_s * (channels / unit_channels) as f64;
    assert_eq!(c.physical_pages(), cfg.physical_pages(), "the RU layout");
    c
}

/// `(ru_blocks, ru_dies)`: (1, 1) without FDP.
fn ru_shape(cfg: &SsdConfig) -> (u32, u32) {
    cfg.ftl
        .fdp
        .map_or((1, 1), |f| (f.ru_blocks.max(1), f.ru_dies.max(1)))
}

/// Erase blocks the FTL erases as one unit (1 without FDP): `ru_blocks x ru_dies`.
pub fn erase_blocks_per_unit(cfg: &SsdConfig) -> u32 {
    let (k, n) = ru_shape(cfg);
    k * n
}

/// Where one page of the flash lies on the real dies.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub struct PhysicalPage {
    pub die: u32,
    /// The erase block's index within its die.
    pub block_in_die: u32,
    pub page: u32,
}

/// The real place of page `page` of RU `ru` (a block of [`flash_config`]'s layout): RU `ru`
/// takes erase blocks `ru_blocks x (ru mod RUs per group)`.. of each die of its group of
/// `ru_dies` dies, and its pages are striped across those dies as the page FTL stripes
/// writes (page `p` on die `p mod ru_dies` of the group; its `p / ru_dies`th page there,
/// filling the die's blocks in order).
pub fn physical_page(cfg: &SsdConfig, ru: u32, page: u32) -> PhysicalPage {
    let (k, n) = ru_shape(cfg);
    let ppb = cfg.geometry.pages_per_block;
    assert!(
        page < ppb * k * n,
        "page {page} of an RU of {} pages",
        ppb * k * n
    );
    let rus_per_group = cfg.blocks_per_die() / k;
    let (group, ru_in_group) = (ru / rus_per_group, ru % rus_per_group);
    let on_die = page / n;
    PhysicalPage {
        die: group * n + page % n,
        block_in_die: ru_in_group * k + on_die / ppb,
        page: on_die % ppb,
    }
}
