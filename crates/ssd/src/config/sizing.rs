//! Sizes derived from a config (dies, blocks, logical pages, spare blocks an FTL needs) and
//! resizing to a logical capacity, fitting the size-dependent FTL settings.

use super::validate::{invalid, Compact};
use super::{FtlKind, GcPool, SsdConfig};
use crate::error::ConfigError;

/// Steps a size search may take after its closed-form start (it needs one or two).
const SIZE_SEARCH_STEPS: u32 = 64;

impl SsdConfig {
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
    /// plus the open blocks of its host and GC streams ([`super::FtlConfig::open_slots`]) in every
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
            FtlKind::Bast | FtlKind::Ioa if f.log_stripe_dies => {
                f.log_blocks as u64 + 2 * self.dies() as u64
            }
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

    pub(super) fn min_logical_bytes_of_valid_fields(&self) -> Result<u64, ConfigError> {
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
        super::fdp::grow_to_fit(&mut self)?;
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

    /// Physical pages without overflow, whatever the fields.
    pub(super) fn physical_pages_wide(&self) -> u128 {
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
}

/// A size in blocks per plane as a `u32`, or an error naming `field`.
fn bounded_u32(field: &'static str, v: f64) -> Result<u32, ConfigError> {
    if v.is_finite() && (1.0..=u32::MAX as f64).contains(&v) {
        Ok(v as u32)
    } else {
        Err(invalid(field, Compact(v), "too large for this geometry"))
    }
}
