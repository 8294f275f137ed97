//! One `Stats` for the SSD layer: every counter the device and its FTL keep.

use hdrhistogram::Histogram;
use serde::{Deserialize, Serialize};

/// Counters of the SSD layer. `flash_pages_written` counts every page program (host data,
/// GC copies, merge copies, translation pages); WAF = flash_pages_written / host_pages_written.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Stats {
    pub host_ios: u64,
    pub host_pages_written: u64,
    pub host_pages_read: u64,
    pub host_pages_trimmed: u64,
    pub flash_pages_written: u64,
    pub flash_pages_read: u64,
    /// Valid pages copied by garbage collection or by merges (included in flash_pages_written).
    pub gc_pages_copied: u64,
    pub erases: u64,
    pub gc_invocations: u64,
    pub merges_full: u64,
    pub merges_partial: u64,
    pub merges_switch: u64,
    /// DFTL: translation pages read from / written to flash.
    pub translation_reads: u64,
    pub translation_writes: u64,
}

impl Stats {
    /// Write amplification factor: flash page programs per host page written (0 when none written).
    pub fn waf(&self) -> f64 {
        if self.host_pages_written == 0 {
            0.0
        } else {
            self.flash_pages_written as f64 / self.host_pages_written as f64
        }
    }

    /// Counters accumulated since `earlier` (a snapshot of the same device).
    pub fn since(&self, earlier: &Stats) -> Stats {
        Stats {
            host_ios: self.host_ios - earlier.host_ios,
            host_pages_written: self.host_pages_written - earlier.host_pages_written,
            host_pages_read: self.host_pages_read - earlier.host_pages_read,
            host_pages_trimmed: self.host_pages_trimmed - earlier.host_pages_trimmed,
            flash_pages_written: self.flash_pages_written - earlier.flash_pages_written,
            flash_pages_read: self.flash_pages_read - earlier.flash_pages_read,
            gc_pages_copied: self.gc_pages_copied - earlier.gc_pages_copied,
            erases: self.erases - earlier.erases,
            gc_invocations: self.gc_invocations - earlier.gc_invocations,
            merges_full: self.merges_full - earlier.merges_full,
            merges_partial: self.merges_partial - earlier.merges_partial,
            merges_switch: self.merges_switch - earlier.merges_switch,
            translation_reads: self.translation_reads - earlier.translation_reads,
            translation_writes: self.translation_writes - earlier.translation_writes,
        }
    }
}

/// The highest latency the histogram tracks: an hour.
pub(crate) const LATENCY_HIGHEST_NS: u64 = 3_600_000_000_000;
/// Significant decimal digits of the latency histogram.
pub(crate) const LATENCY_SIGFIG: u8 = 3;

/// Per-request latencies from 1 ns to an hour, 3 significant digits (the device counts them
/// in these buckets itself: `crate::latency`).
pub(crate) fn latency_histogram() -> Histogram<u64> {
    Histogram::new_with_bounds(1, LATENCY_HIGHEST_NS, LATENCY_SIGFIG)
        .expect("static histogram bounds are valid")
}

/// Bytes the latency histogram's counters take.
pub(crate) fn latency_histogram_bytes() -> u64 {
    crate::latency::COUNTS_LEN as u64 * 8
}
