//! Validation: every field in its documented range, then whether the spare blocks hold what
//! the FTL needs. Runs before anything is sized or allocated.

use super::{FtlKind, GcStreamMode, GcVictimScope, SsdConfig};
use crate::error::ConfigError;

impl SsdConfig {
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
        super::fdp::validate_size(self)
    }

    /// Every field on its own (ranges, and the geometry's size), not whether the spare blocks
    /// hold the FTL's needs. Runs first everywhere, so no size computation sees a bad field.
    pub fn validate_fields(&self) -> Result<(), ConfigError> {
        self.published.iter().try_for_each(validate_published)?;
        validate_aging(&self.aging)?;
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
        if t.t_write_ack_ns > MAX_OP_NS {
            return Err(invalid(
                "timing.t_write_ack_ns",
                t.t_write_ack_ns,
                "at most 10000000000 (10 s per write)",
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
        if f.gc_victim == GcVictimScope::Stream
            && f.gc_stream == GcStreamMode::Separate
            && f.streams > 1
        {
            return Err(invalid(
                "ftl.gc_victim",
                "stream",
                "needs gc_stream = \"per_stream\" or \"victim\" (a shared GC stream's blocks \
                 hold every stream's copies and belong to no stream)",
            ));
        }
        positive("ftl.gc_free_blocks_min", f.gc_free_blocks_min as u64)?;
        if f.scheme == FtlKind::Dftl {
            positive("ftl.cmt_entries", f.cmt_entries as u64)?;
        }
        if matches!(f.scheme, FtlKind::Bast | FtlKind::Fast | FtlKind::Ioa) {
            positive("ftl.log_blocks", f.log_blocks as u64)?;
        }
        if f.log_stripe_dies {
            self.validate_log_stripes()?;
        }
        super::fdp::validate_fields(self)
    }
}

impl SsdConfig {
    /// `ftl.log_stripe_dies`: a log-block scheme (bast, ioa) with a log block on every die,
    /// and room on each die for its share of the data blocks, its logs and a merge's block.
    fn validate_log_stripes(&self) -> Result<(), ConfigError> {
        let f = &self.ftl;
        let dies = self.dies() as u64;
        if !matches!(f.scheme, FtlKind::Bast | FtlKind::Ioa) {
            return Err(invalid(
                "ftl.log_stripe_dies",
                f.scheme.name(),
                "only the bast and ioa schemes stripe their logs over the dies",
            ));
        }
        if (f.log_blocks as u64) < dies {
            return Err(invalid(
                "ftl.log_blocks",
                f.log_blocks,
                "with log_stripe_dies, at least one log block per die",
            ));
        }
        let ppb = self.geometry.pages_per_block as u64;
        let data_per_die = self.logical_pages().div_ceil(ppb * dies);
        let needed = data_per_die + (f.log_blocks as u64).div_ceil(dies) + 2;
        if (self.blocks_per_die() as u64) < needed {
            return Err(invalid(
                "ftl.log_stripe_dies",
                needed,
                "blocks needed on each die (its data blocks, its logs and 2 for merges) exceed \
                 the die's blocks: lower the logical capacity or ftl.log_blocks",
            ));
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

/// Most device-fulls of random writes `[aging]` runs (steady state comes within a few).
const MAX_AGING_X: f64 = 16.0;

fn validate_aging(a: &super::Aging) -> Result<(), ConfigError> {
    if !(a.random_writes_x.is_finite() && (0.0..=MAX_AGING_X).contains(&a.random_writes_x)) {
        return Err(invalid(
            "aging.random_writes_x",
            a.random_writes_x,
            "device-fulls of random writes, from 0 to 16",
        ));
    }
    Ok(())
}

/// A `[[published]]` row: a known pattern, a request size and queue depth, one positive rate.
fn validate_published(p: &super::PublishedFigure) -> Result<(), ConfigError> {
    const PATTERNS: [&str; 4] = [
        "random read",
        "random write",
        "sequential read",
        "sequential write",
    ];
    if !PATTERNS.contains(&p.what.as_str()) {
        return Err(invalid(
            "published.what",
            &p.what,
            "one of \"random read\", \"random write\", \"sequential read\", \"sequential write\"",
        ));
    }
    positive("published.request_kib", p.request_kib as u64)?;
    positive("published.queue_depth", p.queue_depth as u64)?;
    let rate = match (p.mb_per_s, p.iops) {
        (Some(r), None) | (None, Some(r)) => r,
        _ => {
            return Err(invalid(
                "published.mb_per_s",
                format!("{:?} / iops {:?}", p.mb_per_s, p.iops),
                "give exactly one of mb_per_s and iops",
            ))
        }
    };
    if !(rate.is_finite() && rate > 0.0) {
        return Err(invalid(
            "published.mb_per_s",
            rate,
            "a positive finite rate",
        ));
    }
    Ok(())
}

fn positive(field: &'static str, v: u64) -> Result<(), ConfigError> {
    if v == 0 {
        Err(invalid(field, v, "must be at least 1"))
    } else {
        Ok(())
    }
}

/// An `f64` shown compactly: scientific notation when very large or very small.
pub(super) struct Compact(pub(super) f64);

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

pub(super) fn invalid(
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
