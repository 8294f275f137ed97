//! The RAM a device of a config takes, estimated before anything is allocated.

use super::{DataMode, FtlKind, SsdConfig};
use crate::error::SsdError;

/// RAM per cached DFTL mapping (LRU slab entry and hash index) and per hash-map entry.
const CMT_ENTRY_BYTES: u64 = 48;
const HASH_ENTRY_BYTES: u64 = 32;

impl SsdConfig {
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
        bytes += logical.div_ceil(64) * 8 + crate::stats::latency_histogram_bytes();
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
                // L2P and P2L, 3 or 4 B each (`PageMap`: 3 below 2^24 pages); per block:
                // state, owner, index record, victim stacks.
                let entry = |values: u64| crate::ftl::pagemap::entry_bytes(values) as u64;
                let maps =
                    (logical + tpages) * entry(phys) + phys * entry(logical + tpages) + blocks * 32;
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
}
