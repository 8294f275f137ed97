//! `SsdConfig`: NAND geometry, timing and FTL settings (serde + TOML), validated once.
//!
//! Units are in the field names. Over-provisioning `op` is (physical − logical) / logical.

use crate::error::{ConfigError, SsdError};
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
    ("p1-ssd", include_str!("../presets/p1-ssd.toml")),
    ("x25m", include_str!("../presets/x25m.toml")),
    ("pm953", include_str!("../presets/pm953.toml")),
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
    /// The CMT size and logical pages the config was loaded with (see `FtlConfig::cmt_entries`).
    #[serde(skip)]
    pub(crate) loaded: Loaded,
}

/// What a config held when it was parsed; not part of its value (equal configs may differ here).
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct Loaded {
    cmt: Option<(u32, u64)>,
}

impl PartialEq for Loaded {
    fn eq(&self, _: &Loaded) -> bool {
        true
    }
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

/// Operation times and the bus. Valid ranges: `t_read_ns`, `t_prog_ns`, `t_erase_ns` at most
/// 10^10 (10 s); `channel_mb_per_s` from 0.1 to 10^6; `host_queue_depth` from 1 to 65536.
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
    /// The host link (SATA, PCIe) rate, MB/s; 0 (the default) models no link: requests reach
    /// the flash at once and complete when the flash is done. With a rate, the link carries
    /// each request's command and data one request at a time, busy `t_cmd_ns` plus its bytes
    /// at this rate (writes cross it before the flash, reads after).
    #[serde(default, skip_serializing_if = "is_zero_f64")]
    pub host_mb_per_s: f64,
    /// Link time of each request's command (frames, handshake), ns; only with `host_mb_per_s`.
    #[serde(default, skip_serializing_if = "is_zero_u64")]
    pub t_cmd_ns: u64,
    /// The controller's DRAM write cache, in pages: a write completes when its data is in the
    /// cache (a page's slot frees when its program ends); 0 (the default): when programmed.
    #[serde(default, skip_serializing_if = "is_zero_u32")]
    pub write_cache_pages: u32,
}

fn is_zero_f64(v: &f64) -> bool {
    *v == 0.0
}
fn is_zero_u64(v: &u64) -> bool {
    *v == 0
}
fn is_zero_u32(v: &u32) -> bool {
    *v == 0
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

/// Where GC copies go (page-mapped schemes).
///
/// Measured on a 90/10 hot/cold workload (`hotcold-write:0.9:0.1`) with oracle separation
/// (hot set on its own stream), `mlc-sata-2010` at 1 GiB, greedy GC, timing off, seed 1, 4x
/// capacity after a full precondition: one stream 8.81; two streams with `separate` 8.57
/// (−2.7 %), `victim` 7.61 (−13.6 %), `per_stream` 7.05 (−20.0 %). So `per_stream` is the
/// default (with one host stream it is exactly `separate`, so single-stream runs are unchanged).
/// On one large die (4096 blocks) `victim` and `per_stream` agree within 0.5 % (pages of a
/// uniformly written pool are memoryless, so mixing a pool's copies with its host writes is
/// harmless there); on small per-die pools keeping copies apart wins.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum GcStreamMode {
    /// One GC stream shared by every host stream (copies of all streams mix again).
    Separate,
    /// Back into the victim's own stream's open block, beside that stream's host writes.
    Victim,
    /// One GC stream per host stream: copies of stream `s`'s data go to GC open block
    /// `s` (and copies of a GC block's pages to that same GC block's stream), apart from host
    /// writes and from other streams — as NVMe FDP's persistently isolated reclaim unit
    /// handles do. With one host stream it is exactly `separate`.
    PerStream,
}

impl GcStreamMode {
    pub const ALL: [GcStreamMode; 3] = [
        GcStreamMode::Separate,
        GcStreamMode::Victim,
        GcStreamMode::PerStream,
    ];

    /// The CLI name (`separate`, `victim`, `per-stream`).
    pub fn name(self) -> &'static str {
        match self {
            GcStreamMode::Separate => "separate",
            GcStreamMode::Victim => "victim",
            GcStreamMode::PerStream => "per-stream",
        }
    }

    /// Parse a CLI name (the serde spelling `per_stream` is accepted too).
    pub fn parse(s: &str) -> Option<GcStreamMode> {
        match s {
            "per_stream" => Some(GcStreamMode::PerStream),
            _ => GcStreamMode::ALL.into_iter().find(|m| m.name() == s),
        }
    }
}

/// Page-mapped schemes (page, DFTL): where free blocks are pooled, open blocks kept and GC run.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum GcPool {
    /// A free pool, a GC reserve and open blocks per die; writes stripe over the dies.
    #[default]
    PerDie,
    /// One free pool, GC reserve and set of open blocks for the whole device (writes fill one
    /// block at a time). [`SsdConfig::with_logical_capacity`] picks it when the spare blocks
    /// cannot hold a reserve and open blocks on every die (small capacities on many dies).
    Device,
}

impl GcPool {
    fn is_per_die(&self) -> bool {
        *self == GcPool::PerDie
    }
}

/// What the device keeps of each written page.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum DataMode {
    /// A 64-bit tag per page (enough to check every read returns the last write).
    Tags,
    /// Full page payloads (engines run on the device).
    Payloads,
    /// No data at all: for runs that never read data back (`flashlab sim`'s WAF, GC and
    /// timing studies), 8 bytes less per physical page. Reads that return data (`read_tags`,
    /// `read_data`) are refused; timing-only reads (`read`), TRIM and every invariant check
    /// still work (the flash keeps which pages are programmed).
    None,
}

impl DataMode {
    pub fn name(self) -> &'static str {
        match self {
            DataMode::Tags => "tags",
            DataMode::Payloads => "payloads",
            DataMode::None => "none",
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
    /// Foreground GC runs when a die's free blocks fall below this many (the GC reserve; of
    /// the whole device's free blocks under `gc_pool = "device"`).
    #[serde(default = "two")]
    pub gc_free_blocks_min: u32,
    /// Page-mapped schemes: free blocks and GC per die (default) or for the whole device.
    #[serde(default, skip_serializing_if = "GcPool::is_per_die")]
    pub gc_pool: GcPool,
    /// Host write streams (1 = no streams).
    #[serde(default = "one")]
    pub streams: u16,
    /// Where GC copies go (default `per_stream`: the best of the three on a 90/10 hot/cold
    /// workload with oracle separation, see `GcStreamMode`; with one stream it is `separate`).
    #[serde(default = "per_stream")]
    pub gc_stream: GcStreamMode,
    /// Log-block schemes (bast, fast, ioa): number of log blocks in the whole device.
    #[serde(default = "log_blocks_default")]
    pub log_blocks: u32,
    /// DFTL: cached mapping table size in entries (one entry maps one page). Scales with
    /// capacity: where [`SsdConfig::with_logical_capacity`] makes a device smaller than the
    /// size its TOML (or preset) was loaded at, a value left as loaded keeps the loaded ratio of
    /// entries to logical pages (at least 1, at most the logical pages); a value set after
    /// loading, or any value at a larger size, is kept (the CMT is bounded by controller RAM).
    #[serde(default = "cmt_default")]
    pub cmt_entries: u32,
    #[serde(default = "tags")]
    pub data: DataMode,
    /// Run the FTL's invariant verifier after every GC and merge (slow; for tests).
    #[serde(default)]
    pub check_invariants: bool,
}

impl FtlConfig {
    /// Open-block slots of a page-mapped scheme in every pool: one per host stream plus the
    /// GC stream(s) — one shared (`separate`; `victim` keeps it too), or one per host stream
    /// (`per_stream`).
    pub fn open_slots(&self) -> u64 {
        let streams = self.streams as u64;
        match self.gc_stream {
            GcStreamMode::Separate | GcStreamMode::Victim => streams + 1,
            GcStreamMode::PerStream => 2 * streams,
        }
    }
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
fn per_stream() -> GcStreamMode {
    GcStreamMode::PerStream
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
        let text = {
            use std::io::Read;
            let cap: u64 = 1 << 20;
            let mut text = String::new();
            std::fs::File::open(path)
                .and_then(|f| f.take(cap + 1).read_to_string(&mut text))
                .and_then(|n| match n as u64 > cap {
                    true => Err(std::io::Error::new(
                        std::io::ErrorKind::InvalidData,
                        format!("larger than the {cap}-byte cap for an SSD config"),
                    )),
                    false => Ok(text),
                })
        }
        .map_err(|source| ConfigError::Io {
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
        let reserve = self.ftl.gc_free_blocks_min as u64 * self.gc_pools();
        let logical_blocks = self.logical_pages() / self.geometry.pages_per_block as u64;
        self.total_blocks().saturating_sub(reserve) as f64 / logical_blocks as f64
    }

    /// Physical blocks beyond the logical ones.
    pub fn spare_blocks(&self) -> u64 {
        self.total_blocks() - self.logical_pages() / self.geometry.pages_per_block as u64
    }

    /// Free-block pools of a page-mapped scheme: one per die, or one (`gc_pool = "device"`).
    pub fn gc_pools(&self) -> u64 {
        match self.ftl.gc_pool {
            GcPool::PerDie => self.dies() as u64,
            GcPool::Device => 1,
        }
    }

    /// Spare blocks the FTL scheme needs to run: the page-mapped schemes their GC reserve
    /// plus the open blocks of its host and GC streams ([`FtlConfig::open_slots`]) in every
    /// pool (die, or the device), plus one (and, for DFTL with one pool, the blocks its translation pages fill); the log-block
    /// schemes their log blocks plus two; pure block mapping one block to copy into.
    ///
    /// Why GC never deadlocks with these: a pool's GC runs while the pool has at least one
    /// free block (the reserve is at least 1) and each victim takes at most one new block, so
    /// a copy always has room; a pool can fail to free a block only when its invalid pages and
    /// the room left in its GC block are under a block per missing free block, so it holds
    /// more than (its blocks − reserve − open slots) blocks of valid data. Every pool failing
    /// at once would need more valid pages than the logical space, given
    /// spare ≥ pools × (reserve + open slots) (+ translation blocks), which the count above holds.
    pub fn spare_blocks_needed(&self) -> u64 {
        let f = &self.ftl;
        let pools = self.gc_pools();
        match f.scheme {
            FtlKind::Bast | FtlKind::Fast | FtlKind::Ioa => f.log_blocks as u64 + 2,
            FtlKind::Block => 1,
            FtlKind::Page | FtlKind::Dftl => {
                let translation = match (f.scheme, f.gc_pool) {
                    (FtlKind::Dftl, GcPool::Device) => self.translation_blocks(),
                    _ => 0,
                };
                f.gc_free_blocks_min as u64 * pools + f.open_slots() * pools + 1 + translation
            }
        }
    }

    /// Blocks DFTL's translation pages fill (a 4-byte mapping per logical page).
    fn translation_blocks(&self) -> u64 {
        let per_tpage = (self.geometry.page_bytes / 4).max(1) as u64;
        self.logical_pages()
            .div_ceil(per_tpage)
            .div_ceil(self.geometry.pages_per_block as u64)
    }

    /// The smallest logical capacity, in bytes, at which this config (its geometry but
    /// `blocks_per_plane`, its op and FTL settings) holds the spare blocks its FTL needs.
    pub fn min_logical_bytes(&self) -> Result<u64, ConfigError> {
        self.validate_fields()?;
        self.min_logical_bytes_of_valid_fields()
    }

    fn min_logical_bytes_of_valid_fields(&self) -> Result<u64, ConfigError> {
        let op = self.ftl.op;
        // spare = total - floor(total / (1 + op)) >= total * op / (1 + op): this many physical
        // blocks always suffice; step down while the block below still does (bounded).
        let needed = self.spare_blocks_needed() as f64;
        let total = (needed * (1.0 + op) / op).ceil();
        let per_plane_unit = self.dies() as f64 * self.geometry.planes_per_die as f64;
        let mut cfg = self.clone();
        cfg.set_blocks_per_plane("capacity", (total / per_plane_unit).ceil())?;
        // Needs that grow with size (DFTL's translation blocks) may want a step or two more.
        for _ in 0..SIZE_SEARCH_STEPS {
            if cfg.spare_blocks() >= cfg.spare_blocks_needed() {
                break;
            }
            let next = cfg.geometry.blocks_per_plane as f64 + 1.0;
            cfg.set_blocks_per_plane("capacity", next)?;
        }
        for _ in 0..SIZE_SEARCH_STEPS {
            if cfg.geometry.blocks_per_plane <= 1 {
                break;
            }
            let mut smaller = cfg.clone();
            smaller.geometry.blocks_per_plane -= 1;
            if smaller.spare_blocks() < smaller.spare_blocks_needed() {
                break;
            }
            cfg = smaller;
        }
        Ok(cfg.logical_bytes())
    }

    /// Resize `blocks_per_plane` so the logical capacity is at least `bytes` at the current
    /// `op`, and fit the FTL settings that depend on size: where the log blocks or the GC
    /// reserve do not fit the new spare blocks, they are lowered to the most that fit (at
    /// least one), and where a page-mapped scheme cannot keep a reserve and open blocks on
    /// every die it pools them for the device (`gc_pool = "device"`); DFTL's CMT scales down
    /// with the size (see `FtlConfig::cmt_entries`). Settings that fit are kept as they are.
    pub fn with_logical_capacity(mut self, bytes: u64) -> Result<SsdConfig, ConfigError> {
        self.validate_fields()?;
        let g = &self.geometry;
        let block_bytes = g.pages_per_block as u64 * g.page_bytes as u64;
        let logical_blocks = bytes.div_ceil(block_bytes);
        let physical_blocks = (logical_blocks as f64 * (1.0 + self.ftl.op)).ceil();
        let per_plane = (physical_blocks / (self.dies() as f64 * g.planes_per_die as f64)).ceil();
        self.set_blocks_per_plane("capacity", per_plane.max(1.0))?;
        // Rounding can leave the logical size a block short: grow until it fits (a few steps).
        let mut steps = 0;
        while self.logical_bytes() < bytes {
            steps += 1;
            if steps > SIZE_SEARCH_STEPS {
                return Err(invalid(
                    "capacity",
                    bytes,
                    "no size of this geometry holds it",
                ));
            }
            let next = self.geometry.blocks_per_plane as f64 + 1.0;
            self.set_blocks_per_plane("capacity", next)?;
        }
        self.fit_to_spare_blocks();
        self.scale_cmt();
        match self.validate() {
            Err(ConfigError::TooSmall { .. }) => Err(ConfigError::TooSmall {
                field: "capacity",
                spare_blocks: self.spare_blocks(),
                needed_blocks: self.spare_blocks_needed(),
                min_logical_bytes: self.min_logical_bytes().unwrap_or(u64::MAX),
            }),
            r => r.map(|()| self),
        }
    }

    /// Lower the log blocks or the GC reserve to what the spare blocks hold (at least 1).
    fn fit_to_spare_blocks(&mut self) {
        let spare = self.spare_blocks();
        if spare >= self.spare_blocks_needed() {
            return;
        }
        let dies = self.dies() as u64;
        let f = &mut self.ftl;
        match f.scheme {
            FtlKind::Bast | FtlKind::Fast | FtlKind::Ioa => {
                f.log_blocks = spare.saturating_sub(2).clamp(1, f.log_blocks as u64) as u32;
            }
            FtlKind::Page | FtlKind::Dftl if f.gc_pool == GcPool::PerDie => {
                let open = f.open_slots() * dies;
                let per_die = spare.saturating_sub(open + 1) / dies;
                if per_die >= 1 {
                    f.gc_free_blocks_min = per_die.min(f.gc_free_blocks_min as u64) as u32;
                } else {
                    f.gc_pool = GcPool::Device;
                    self.fit_to_spare_blocks();
                }
            }
            FtlKind::Page | FtlKind::Dftl => {
                let wanted = std::mem::replace(&mut f.gc_free_blocks_min, 1) as u64;
                // What the needs leave beyond a reserve of one is room for a larger reserve.
                let room = spare.saturating_sub(self.spare_blocks_needed() - 1);
                self.ftl.gc_free_blocks_min = room.clamp(1, wanted) as u32;
            }
            FtlKind::Block => {}
        }
    }

    /// DFTL's CMT, left as loaded, keeps its loaded ratio to the logical pages on a smaller
    /// device (at least 1 entry, at most one per logical page).
    fn scale_cmt(&mut self) {
        let Some((cmt, loaded_pages)) = self.loaded.cmt else {
            return;
        };
        let pages = self.logical_pages();
        if self.ftl.scheme != FtlKind::Dftl || self.ftl.cmt_entries != cmt || pages >= loaded_pages
        {
            return;
        }
        let scaled = (cmt as f64 * pages as f64 / loaded_pages as f64).round() as u64;
        self.ftl.cmt_entries = scaled.clamp(1, pages) as u32;
    }

    /// Check every field; the error names the field, its value and what to do.
    pub fn validate(&self) -> Result<(), ConfigError> {
        self.validate_fields()?;
        let (spare, needed) = (self.spare_blocks(), self.spare_blocks_needed());
        if spare < needed {
            let field = match self.ftl.scheme {
                FtlKind::Bast | FtlKind::Fast | FtlKind::Ioa => "ftl.log_blocks",
                _ => "ftl.op",
            };
            return Err(ConfigError::TooSmall {
                field,
                spare_blocks: spare,
                needed_blocks: needed,
                min_logical_bytes: self.min_logical_bytes_of_valid_fields().unwrap_or(u64::MAX),
            });
        }
        Ok(())
    }

    /// Every field on its own (ranges, and the geometry's size), not whether the spare blocks
    /// hold the FTL's needs. Runs first everywhere, so no size computation sees a bad field.
    pub fn validate_fields(&self) -> Result<(), ConfigError> {
        let g = &self.geometry;
        positive("geometry.channels", g.channels as u64)?;
        positive("geometry.dies_per_channel", g.dies_per_channel as u64)?;
        positive("geometry.planes_per_die", g.planes_per_die as u64)?;
        positive("geometry.blocks_per_plane", g.blocks_per_plane as u64)?;
        positive("geometry.pages_per_block", g.pages_per_block as u64)?;
        if !(MIN_PAGE_BYTES..=MAX_PAGE_BYTES).contains(&g.page_bytes)
            || !g.page_bytes.is_power_of_two()
        {
            return Err(invalid(
                "geometry.page_bytes",
                g.page_bytes,
                "must be a power of two from 512 to 1048576",
            ));
        }
        if g.pages_per_block > 65_535 {
            return Err(invalid(
                "geometry.pages_per_block",
                g.pages_per_block,
                "at most 65535",
            ));
        }
        let dies = g.channels as u64 * g.dies_per_channel as u64;
        if dies > MAX_DIES {
            return Err(invalid(
                "geometry.dies_per_channel",
                dies,
                "at most 65536 dies (channels x dies_per_channel)",
            ));
        }
        let pages = self.physical_pages_wide();
        if pages >= u32::MAX as u128 {
            return Err(invalid(
                "geometry",
                pages,
                "more than 2^32-1 physical pages; use larger pages or fewer blocks",
            ));
        }
        self.validate_timing()?;
        self.validate_ftl()
    }

    /// Bytes of RAM a device of this config takes, estimated from its tables before any is
    /// allocated: flash (a tag per page, write pointer and erase count per block, payloads in
    /// payload mode), the FTL's maps (L2P/P2L, block maps, log-block page maps, DFTL's CMT,
    /// live-page bits, victim index), the device's trim bitmap and latency histogram, and the
    /// host queue. An estimate of the large tables, not an exact count of every allocation.
    pub fn memory_bytes_estimate(&self) -> u64 {
        let phys = self.physical_pages();
        let logical = self.logical_pages();
        let blocks = self.total_blocks();
        let ppb = self.geometry.pages_per_block as u64;
        let lbns = logical / ppb;
        // Per page a tag (8 B), or with data = "none" a bit for pages skipped unprogrammed.
        let mut bytes = blocks * 8
            + match self.ftl.data {
                DataMode::None => phys.div_ceil(64) * 8,
                DataMode::Tags | DataMode::Payloads => phys * 8,
            };
        if self.ftl.data == DataMode::Payloads {
            bytes += phys * (16 + self.geometry.page_bytes as u64);
        }
        bytes += logical.div_ceil(64) * 8 + crate::device::latency_histogram_bytes();
        bytes += (self.timing.host_queue_depth as u64 + 1) * 8;
        bytes += self.timing.write_cache_pages as u64 * 8;
        let live_bits = phys.div_ceil(64) * 8;
        let words = ppb.div_ceil(64) * 8;
        bytes += match self.ftl.scheme {
            FtlKind::Page | FtlKind::Dftl => {
                let tpages = match self.ftl.scheme {
                    FtlKind::Dftl => logical.div_ceil(self.geometry.page_bytes as u64 / 4),
                    _ => 0,
                };
                // L2P and P2L 4 B each; per block: state, owner, index record, victim stacks.
                let maps = (logical + tpages) * 4 + phys * 4 + blocks * 32;
                let cmt = match self.ftl.scheme {
                    FtlKind::Dftl => (self.ftl.cmt_entries as u64).min(logical) * CMT_ENTRY_BYTES,
                    _ => 0,
                };
                maps + cmt
            }
            FtlKind::Block => live_bits + lbns * 4,
            FtlKind::Bast | FtlKind::Ioa => {
                let logs = self.ftl.log_blocks as u64 * (ppb * 2 + words + 64);
                live_bits + lbns * (8 + words) + logs
            }
            FtlKind::Fast => {
                // Two hash maps (lpn -> page, page -> lpn) over every RW page.
                let rw_pages = self.ftl.log_blocks as u64 * ppb;
                live_bits + lbns * 4 + rw_pages * 2 * HASH_ENTRY_BYTES
            }
        };
        bytes
    }

    /// The memory estimate, or an error stating it and `limit_bytes` when it is larger.
    pub fn check_memory(&self, limit_bytes: u64) -> Result<u64, SsdError> {
        let estimate_bytes = self.memory_bytes_estimate();
        if estimate_bytes > limit_bytes {
            return Err(SsdError::MemoryLimit {
                estimate_bytes,
                limit_bytes,
            });
        }
        Ok(estimate_bytes)
    }

    /// The timing field with the longest time per page (named when simulated time overflows).
    pub fn slowest_timing_field(&self) -> &'static str {
        let t = &self.timing;
        let xfer_ns = self.geometry.page_bytes as f64 * 1e3 / t.channel_mb_per_s;
        [
            ("timing.t_read_ns", t.t_read_ns as f64),
            ("timing.t_prog_ns", t.t_prog_ns as f64),
            ("timing.t_erase_ns", t.t_erase_ns as f64),
            ("timing.channel_mb_per_s", xfer_ns),
        ]
        .into_iter()
        .fold(
            ("timing.t_prog_ns", -1.0),
            |a, b| if b.1 > a.1 { b } else { a },
        )
        .0
    }

    /// Physical pages without overflow, whatever the fields.
    fn physical_pages_wide(&self) -> u128 {
        let g = &self.geometry;
        [
            g.channels,
            g.dies_per_channel,
            g.planes_per_die,
            g.blocks_per_plane,
            g.pages_per_block,
        ]
        .iter()
        .map(|&v| v as u128)
        .product()
    }

    /// Set `blocks_per_plane`, refusing a size beyond 2^32-1 physical pages (named `field`).
    fn set_blocks_per_plane(&mut self, field: &'static str, v: f64) -> Result<(), ConfigError> {
        self.geometry.blocks_per_plane = bounded_u32(field, v)?;
        if self.physical_pages_wide() >= u32::MAX as u128 {
            return Err(invalid(
                field,
                v,
                "too large for this geometry (2^32-1 physical pages at most)",
            ));
        }
        Ok(())
    }

    /// Timing fields in their documented ranges (see [`Timing`]).
    fn validate_timing(&self) -> Result<(), ConfigError> {
        let t = &self.timing;
        for (field, ns) in [
            ("timing.t_read_ns", t.t_read_ns),
            ("timing.t_prog_ns", t.t_prog_ns),
            ("timing.t_erase_ns", t.t_erase_ns),
        ] {
            if ns > MAX_OP_NS {
                return Err(invalid(
                    field,
                    ns,
                    "at most 10000000000 (10 s per operation)",
                ));
            }
        }
        if !(MIN_CHANNEL_MB_PER_S..=MAX_CHANNEL_MB_PER_S).contains(&t.channel_mb_per_s) {
            return Err(invalid(
                "timing.channel_mb_per_s",
                Compact(t.channel_mb_per_s),
                "must be from 0.1 to 1000000 MB/s",
            ));
        }
        if t.host_mb_per_s != 0.0
            && !(MIN_CHANNEL_MB_PER_S..=MAX_CHANNEL_MB_PER_S).contains(&t.host_mb_per_s)
        {
            return Err(invalid(
                "timing.host_mb_per_s",
                Compact(t.host_mb_per_s),
                "must be 0 (no link) or from 0.1 to 1000000 MB/s",
            ));
        }
        if t.t_cmd_ns > MAX_OP_NS {
            return Err(invalid(
                "timing.t_cmd_ns",
                t.t_cmd_ns,
                "at most 10000000000 (10 s per command)",
            ));
        }
        if t.write_cache_pages > MAX_QUEUE_DEPTH * 16 {
            return Err(invalid(
                "timing.write_cache_pages",
                t.write_cache_pages,
                "at most 1048576 pages",
            ));
        }
        if !(1..=MAX_QUEUE_DEPTH).contains(&t.host_queue_depth) {
            return Err(invalid(
                "timing.host_queue_depth",
                t.host_queue_depth,
                "must be from 1 to 65536",
            ));
        }
        Ok(())
    }

    fn validate_ftl(&self) -> Result<(), ConfigError> {
        let f = &self.ftl;
        if !(f.op.is_finite() && f.op > 0.0 && f.op <= 10.0) {
            return Err(invalid(
                "ftl.op",
                Compact(f.op),
                "over-provisioning must be in (0, 10]",
            ));
        }
        positive("ftl.streams", f.streams as u64)?;
        if f.gc_stream == GcStreamMode::PerStream && f.streams > u16::MAX / 2 {
            return Err(invalid(
                "ftl.streams",
                f.streams,
                "at most 32767 with gc_stream = \"per_stream\" (a GC stream per host stream)",
            ));
        }
        positive("ftl.gc_free_blocks_min", f.gc_free_blocks_min as u64)?;
        if f.scheme == FtlKind::Dftl {
            positive("ftl.cmt_entries", f.cmt_entries as u64)?;
        }
        if matches!(f.scheme, FtlKind::Bast | FtlKind::Fast | FtlKind::Ioa) {
            positive("ftl.log_blocks", f.log_blocks as u64)?;
        }
        Ok(())
    }
}

/// Largest die count, page size and per-operation time a config may give (sane hardware
/// bounds that also keep every size and simulated-time computation far from overflow).
const MAX_DIES: u64 = 65_536;
const MIN_PAGE_BYTES: u32 = 512;
const MAX_PAGE_BYTES: u32 = 1 << 20;
const MAX_OP_NS: u64 = 10_000_000_000;
const MIN_CHANNEL_MB_PER_S: f64 = 0.1;
const MAX_CHANNEL_MB_PER_S: f64 = 1e6;
const MAX_QUEUE_DEPTH: u32 = 65_536;
/// RAM per cached DFTL mapping (LRU slab entry and hash index) and per hash-map entry.
const CMT_ENTRY_BYTES: u64 = 48;
const HASH_ENTRY_BYTES: u64 = 32;
/// Steps a size search may take after its closed-form start (it needs one or two).
const SIZE_SEARCH_STEPS: u32 = 64;

/// A size in blocks per plane as a `u32`, or an error naming `field`.
fn bounded_u32(field: &'static str, v: f64) -> Result<u32, ConfigError> {
    if v.is_finite() && (1.0..=u32::MAX as f64).contains(&v) {
        Ok(v as u32)
    } else {
        Err(invalid(field, Compact(v), "too large for this geometry"))
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

/// An `f64` shown compactly: scientific notation when very large or very small.
struct Compact(f64);

impl std::fmt::Display for Compact {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let a = self.0.abs();
        if a != 0.0 && a.is_finite() && !(1e-3..1e9).contains(&a) {
            write!(f, "{:e}", self.0)
        } else {
            write!(f, "{}", self.0)
        }
    }
}

fn invalid(
    field: &'static str,
    value: impl std::fmt::Display,
    reason: &'static str,
) -> ConfigError {
    ConfigError::Invalid {
        field,
        value: value.to_string(),
        reason,
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
