//! A flash cache's device writes: CacheLib's two engines on one device.
//!
//! Model: the cache uses a fraction `utilisation` of the logical space from page 0; the rest
//! is trimmed by the first request (so a preconditioned device gets it back as spare) and
//! never written. The cache space is split:
//! - the **small-object engine** (BigHash) owns the first `small_space` of it, as 4 KiB
//!   buckets (one page, or the pages that hold 4 KiB); each of its writes rewrites one bucket
//!   chosen uniformly at random;
//! - the **large-object engine** (BlockCache) owns the rest, as regions of
//!   [`REGION_BYTES`] (fewer when the region space holds fewer than two); it writes one
//!   region after another, sequentially in requests of `request_pages` pages, and reuses
//!   them first in, first out (region 0 again after the last).
//!
//! A fraction `small_writes` of the written pages are the small engine's: each request goes
//! to the engine that is behind its share (so the two interleave as concurrent engines do).
//! Requests carry their engine's tag as their stream ([`SMALL_STREAM`], [`LARGE_STREAM`]), and
//! [`FlashCache::small_pages`] is the small region, which `--stream-policy hot-cold` places on
//! stream 1: the application's placement of each engine on its own handle.
//!
//! Deterministic for a seed; constant memory; every request lies in `0..logical_pages`.

use crate::{OpKind, Request, Target, WorkloadError, WorkloadOptions};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

/// BlockCache's region size (CacheLib's default, 16 MiB).
pub const REGION_BYTES: u64 = 16 << 20;
/// BigHash's bucket size.
pub const BUCKET_BYTES: u64 = 4 << 10;
/// The stream tag of the small-object engine's writes (the hot set of `hot-cold`).
pub const SMALL_STREAM: u16 = 1;
/// The stream tag of the large-object engine's writes.
pub const LARGE_STREAM: u16 = 0;

/// `flash-cache:U:S:W`: utilisation, small-object space share, small-object write share.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct FlashCacheSpec {
    /// Fraction of the logical space the cache uses, in (0, 1].
    pub utilisation: f64,
    /// Fraction of the cache space in the small-object region, in (0, 1).
    pub small_space: f64,
    /// Fraction of written pages that are small-object bucket writes, in [0, 1].
    pub small_writes: f64,
}

impl FlashCacheSpec {
    /// Check the ranges; `spec` is the text it came from (for the error).
    pub fn check(&self, spec: &str) -> Result<(), WorkloadError> {
        let bad = |reason: String| WorkloadError::Spec {
            spec: spec.to_string(),
            reason,
        };
        let (u, s, w) = (self.utilisation, self.small_space, self.small_writes);
        if !(u > 0.0 && u <= 1.0) {
            return Err(bad(format!("utilisation U {u} must be in (0, 1]")));
        }
        if !(s > 0.0 && s < 1.0) {
            return Err(bad(format!("small-object space S {s} must be in (0, 1)")));
        }
        if !(0.0..=1.0).contains(&w) {
            return Err(bad(format!(
                "small-object write share W {w} must be in [0, 1]"
            )));
        }
        Ok(())
    }
}

/// Where each engine's pages are on a device (pages).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Layout {
    pub bucket_pages: u64,
    /// Small region `0..small_pages` (whole buckets).
    pub small_pages: u64,
    pub region_pages: u64,
    pub regions: u64,
    /// Cache space in use: `small_pages + regions * region_pages` (the rest is trimmed).
    pub used_pages: u64,
}

impl Layout {
    pub fn new(spec: &FlashCacheSpec, target: Target) -> Result<Layout, WorkloadError> {
        let n = target.logical_pages;
        let page = target.page_bytes.max(1) as u64;
        let bucket_pages = BUCKET_BYTES.div_ceil(page);
        let cache = (spec.utilisation * n as f64).floor() as u64;
        let small_pages =
            ((spec.small_space * cache as f64) as u64 / bucket_pages).max(1) * bucket_pages;
        let large = cache.saturating_sub(small_pages);
        let region_pages = (REGION_BYTES / page).clamp(1, (large / 2).max(1));
        let regions = large / region_pages;
        if regions == 0 || small_pages + regions * region_pages > n {
            return Err(WorkloadError::TooSmall {
                request_pages: (bucket_pages + region_pages) as u32,
                logical_pages: n,
            });
        }
        Ok(Layout {
            bucket_pages,
            small_pages,
            region_pages,
            regions,
            used_pages: small_pages + regions * region_pages,
        })
    }
}

/// The request stream (infinite).
#[derive(Clone, Debug)]
pub struct FlashCache {
    layout: Layout,
    logical_pages: u64,
    small_writes: f64,
    chunk_pages: u64,
    /// The next large-object page: region `next / region_pages`, FIFO over the regions.
    next_large: u64,
    small_written: u64,
    written: u64,
    trimmed: bool,
    rng: ChaCha8Rng,
}

impl FlashCache {
    pub fn new(
        spec: &FlashCacheSpec,
        target: Target,
        opts: &WorkloadOptions,
    ) -> Result<FlashCache, WorkloadError> {
        let layout = Layout::new(spec, target)?;
        Ok(FlashCache {
            layout,
            logical_pages: target.logical_pages,
            small_writes: spec.small_writes,
            chunk_pages: (opts.request_pages.max(1) as u64).min(layout.region_pages),
            next_large: 0,
            small_written: 0,
            written: 0,
            trimmed: false,
            rng: ChaCha8Rng::seed_from_u64(opts.seed),
        })
    }

    pub fn layout(&self) -> Layout {
        self.layout
    }

    /// The small-object region's pages (`0..small_pages`).
    pub fn small_pages(&self) -> u64 {
        self.layout.small_pages
    }

    fn small(&mut self) -> Request {
        let l = &self.layout;
        let bucket = self.rng.gen_range(0..l.small_pages / l.bucket_pages);
        write(bucket * l.bucket_pages, l.bucket_pages, SMALL_STREAM)
    }

    fn large(&mut self) -> Request {
        let l = &self.layout;
        let space = l.regions * l.region_pages;
        let in_region = self.next_large % l.region_pages;
        let pages = self.chunk_pages.min(l.region_pages - in_region);
        let lpn = l.small_pages + self.next_large;
        self.next_large = (self.next_large + pages) % space;
        write(lpn, pages, LARGE_STREAM)
    }
}

fn write(lpn: u64, pages: u64, stream: u16) -> Request {
    Request {
        op: OpKind::Write,
        lpn,
        pages: pages as u32,
        stream,
        arrival_ns: None,
    }
}

impl Iterator for FlashCache {
    type Item = Request;

    fn next(&mut self) -> Option<Request> {
        let used = self.layout.used_pages;
        if !self.trimmed {
            self.trimmed = true;
            if used < self.logical_pages {
                return Some(Request {
                    op: OpKind::Trim,
                    lpn: used,
                    pages: (self.logical_pages - used).min(u32::MAX as u64) as u32,
                    stream: 0,
                    arrival_ns: None,
                });
            }
        }
        let behind = (self.small_written as f64) < self.small_writes * self.written as f64;
        let r = if self.small_writes >= 1.0 || (behind && self.small_writes > 0.0) {
            self.small()
        } else {
            self.large()
        };
        if r.stream == SMALL_STREAM {
            self.small_written += r.pages as u64;
        }
        self.written += r.pages as u64;
        assert!(
            r.lpn + r.pages as u64 <= used,
            "request past the cache space"
        );
        Some(r)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn gen(u: f64, s: f64, w: f64, pages: u64, req: u32) -> FlashCache {
        let spec = FlashCacheSpec {
            utilisation: u,
            small_space: s,
            small_writes: w,
        };
        let target = Target {
            logical_pages: pages,
            page_bytes: 4096,
        };
        let opts = WorkloadOptions {
            request_pages: req,
            ..WorkloadOptions::default()
        };
        FlashCache::new(&spec, target, &opts).unwrap()
    }

    #[test]
    fn the_unused_space_is_trimmed_first_and_never_written() {
        let mut g = gen(0.5, 0.1, 0.3, 100_000, 16);
        let first = g.next().unwrap();
        assert_eq!(first.op, OpKind::Trim);
        let used = g.layout().used_pages;
        assert_eq!((first.lpn, first.lpn + first.pages as u64), (used, 100_000));
        // Whole regions: at most one region short of half the space.
        let region = g.layout().region_pages;
        assert!(used <= 50_000 && used > 50_000 - region, "{used}");
        for r in g.take(100_000) {
            assert_eq!(r.op, OpKind::Write);
            assert!(r.lpn + r.pages as u64 <= used);
        }
    }

    #[test]
    fn engines_keep_their_write_share_and_regions_go_round_in_order() {
        let g = gen(0.9, 0.05, 0.4, 200_000, 8);
        let l = g.layout();
        let (mut small, mut total, mut next) = (0u64, 0u64, l.small_pages);
        for r in g.skip(1).take(50_000) {
            total += r.pages as u64;
            if r.stream == SMALL_STREAM {
                small += r.pages as u64;
                assert!(r.lpn < l.small_pages && r.pages as u64 == l.bucket_pages);
            } else {
                assert_eq!(r.lpn, next, "sequential, FIFO over the regions");
                next = r.lpn + r.pages as u64;
                if next == l.used_pages {
                    next = l.small_pages;
                }
            }
        }
        let share = small as f64 / total as f64;
        assert!((share - 0.4).abs() < 0.001, "{share}");
        assert_eq!(l.region_pages, REGION_BYTES / 4096);
    }

    #[test]
    fn out_of_range_parameters_are_refused() {
        for (u, s, w) in [
            (0.0, 0.1, 0.5),
            (1.2, 0.1, 0.5),
            (0.5, 1.0, 0.5),
            (0.5, 0.1, -0.1),
        ] {
            let spec = FlashCacheSpec {
                utilisation: u,
                small_space: s,
                small_writes: w,
            };
            assert!(spec.check("x").is_err(), "{u} {s} {w}");
        }
    }
}
