//! The buffer pool's flash extension (P3): pages evicted from the main buffer kept on a second
//! [`BlockDevice`] (a file on another path, or a simulated SSD), as circular logs with a DRAM
//! directory.
//!
//! Model: the policy ([`policy::BufferPolicy`]: `lru-ext`, `2q-ext`, `2q-flash`) says which log a
//! victim goes to ([`policy::Placement`]); this module is the mechanism: each log is a
//! [`policy::FlashLog`] (the same directory the trace simulator uses) over its own range of the
//! flash device — log `i` owns flash pages `bases[i] .. bases[i] + capacity_i`, and slot `s` of
//! it is flash page `bases[i] + s`. An appended page is written to its slot; a page read back
//! into main leaves the log (its slot is free for the next append).
//!
//! The flash copy is only a cache of a page whose current version is on the database device
//! (dirty pages are written there at eviction, before the append), so losing it loses nothing:
//! - every copy is verified on read-back against a crc32c kept in DRAM per slot, computed over
//!   the page number and the bytes (a torn, corrupt or misplaced copy fails it); a copy that
//!   fails, or a flash read error, is dropped and counted, and the pool reads the database
//!   device instead;
//! - a failed flash write drops the directory entry (counted);
//! - a page written past the cache, trimmed or rewritten in main loses its copy
//!   ([`FlashExt::invalidate`]), so a stale copy is never returned;
//! - the directory lives in DRAM only: after a restart the extension starts empty.
//!
//! Invariants (`check`): each log's directory holds (`FlashLog::check`), no page is in two
//! logs, and every live slot lies inside its log's range of the flash device.

use crate::error::EngineError;
use blockdev::{BlockDevice, WriteHint};
use policy::{FlashLog, LogId, LogOrder};

/// What the flash extension did (device times on the flash device's clock).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct FlashExtStats {
    /// Main-buffer misses served from a verified flash copy.
    pub ext_hits: u64,
    /// Flash pages read (verified or not) and written.
    pub flash_reads: u64,
    pub flash_writes: u64,
    pub read_ns: u64,
    pub write_ns: u64,
    /// Pages that left a full log to make room (no I/O: their slot is overwritten).
    pub displaced: u64,
    /// Copies dropped because the page was written past the cache, trimmed or rewritten.
    pub invalidated: u64,
    /// Copies that failed their checksum: the page was read from the database device.
    pub fallback_corrupt: u64,
    /// Flash reads that failed: the page was read from the database device.
    pub fallback_read_errors: u64,
    /// Flash writes that failed: the copy was dropped.
    pub write_errors: u64,
}

impl FlashExtStats {
    /// Every event where the flash copy was lost and the database device served the page.
    pub fn fallbacks(&self) -> u64 {
        self.fallback_corrupt + self.fallback_read_errors
    }
}

pub(super) struct FlashExt {
    dev: Box<dyn BlockDevice>,
    logs: Vec<FlashLog<u64>>,
    /// First flash page of each log.
    bases: Vec<u64>,
    /// crc32c of (page number, bytes) of each log's slots, as written.
    crcs: Vec<Vec<u32>>,
    stats: FlashExtStats,
}

/// The checksum a flash copy of `page` holding `data` must match.
fn copy_crc(page: u64, data: &[u8]) -> u32 {
    crc32c::crc32c_append(crc32c::crc32c(&page.to_le_bytes()), data)
}

impl FlashExt {
    /// Logs of `capacities` pages laid out one after the other on `dev`.
    pub(super) fn new(
        dev: Box<dyn BlockDevice>,
        capacities: &[usize],
        log_order: LogOrder,
        page_bytes: usize,
    ) -> Result<FlashExt, EngineError> {
        let total: u64 = capacities.iter().map(|&c| c as u64).sum();
        let bad = |value: String, reason: String| EngineError::Config {
            field: "flash extension device",
            value,
            reason,
        };
        if dev.page_bytes() != page_bytes {
            return Err(bad(
                format!("{} B pages", dev.page_bytes()),
                format!("the database device has {page_bytes} B pages; give the flash device the same page size"),
            ));
        }
        if dev.capacity_pages() < total {
            return Err(bad(
                format!("{} pages", dev.capacity_pages()),
                format!("the extension needs {total} pages; give a larger flash device or a smaller extension"),
            ));
        }
        let mut bases = Vec::with_capacity(capacities.len());
        let mut next = 0u64;
        for &c in capacities {
            bases.push(next);
            next += c as u64;
        }
        assert_eq!(next, total, "the logs tile the extension");
        assert!(capacities.len() <= u8::MAX as usize, "a log id fits its u8");
        Ok(FlashExt {
            dev,
            logs: capacities
                .iter()
                .map(|&c| FlashLog::with_order(c, log_order))
                .collect(),
            bases,
            crcs: capacities.iter().map(|&c| vec![0; c]).collect(),
            stats: FlashExtStats::default(),
        })
    }

    pub(super) fn stats(&self) -> FlashExtStats {
        self.stats
    }

    pub(super) fn device(&self) -> &dyn BlockDevice {
        self.dev.as_ref()
    }

    pub(super) fn device_mut(&mut self) -> &mut dyn BlockDevice {
        self.dev.as_mut()
    }

    pub(super) fn into_device(self) -> Box<dyn BlockDevice> {
        self.dev
    }

    /// Pages held on flash now.
    pub(super) fn len(&self) -> usize {
        self.logs.iter().map(FlashLog::len).sum()
    }

    /// The flash page holding `page`'s copy, if any.
    pub(super) fn flash_page_of(&self, page: u64) -> Option<u64> {
        self.logs
            .iter()
            .zip(&self.bases)
            .find_map(|(log, base)| log.slot_of(&page).map(|s| base + s as u64))
    }

    /// If `page` has a copy on flash, take it out of the directory and read it into `buf`:
    /// the log it came from when the copy checks out, None otherwise (no copy, or one lost to
    /// a read error or a bad checksum — counted; the caller reads the database device).
    pub(super) fn take(&mut self, page: u64, buf: &mut [u8]) -> Option<LogId> {
        let (i, slot) = self
            .logs
            .iter_mut()
            .enumerate()
            .find_map(|(i, log)| log.remove(&page).map(|s| (i, s)))?;
        assert!(
            (slot as usize) < self.logs[i].capacity(),
            "slot {slot} inside log {i}"
        );
        let t0 = self.dev.now_ns();
        let r = self.dev.read(self.bases[i] + slot as u64, buf);
        self.stats.read_ns += self.dev.now_ns().saturating_sub(t0);
        self.stats.flash_reads += 1;
        if r.is_err() {
            self.stats.fallback_read_errors += 1;
            return None;
        }
        if copy_crc(page, buf) != self.crcs[i][slot as usize] {
            self.stats.fallback_corrupt += 1;
            return None;
        }
        self.stats.ext_hits += 1;
        Some(LogId(i as u8))
    }

    /// Append `page` (its current version is `data`, already on the database device) to log
    /// `log` and write it to its slot. A failed write drops the copy (counted).
    pub(super) fn put(&mut self, log: LogId, page: u64, data: &[u8]) {
        // A page has at most one copy: an older one (in any log) goes first.
        self.drop_copy(page);
        let i = log.0 as usize;
        let a = self.logs[i].append(page);
        assert!(
            (a.slot as usize) < self.logs[i].capacity(),
            "an append lands inside its log"
        );
        self.stats.displaced += a.displaced.is_some() as u64;
        self.crcs[i][a.slot as usize] = copy_crc(page, data);
        let t0 = self.dev.now_ns();
        let r = self
            .dev
            .write(self.bases[i] + a.slot as u64, data, WriteHint::NONE);
        self.stats.write_ns += self.dev.now_ns().saturating_sub(t0);
        self.stats.flash_writes += 1;
        if r.is_err() {
            self.stats.write_errors += 1;
            self.logs[i].remove(&page);
        }
        assert!(
            self.logs.iter().filter(|l| l.contains(&page)).count() <= 1,
            "one copy a page"
        );
    }

    fn drop_copy(&mut self, page: u64) -> bool {
        self.logs.iter_mut().any(|log| log.remove(&page).is_some())
    }

    /// Pages `first .. first + pages` have a newer version than any flash copy: drop them.
    pub(super) fn invalidate(&mut self, first: u64, pages: u64) {
        let end = first.saturating_add(pages);
        let dropped = if pages as usize > self.len() {
            let stale: Vec<u64> = self
                .logs
                .iter()
                .flat_map(|log| log.iter().map(|(p, _)| p))
                .filter(|p| (first..end).contains(p))
                .collect();
            stale.into_iter().filter(|&p| self.drop_copy(p)).count()
        } else {
            (first..end).filter(|&p| self.drop_copy(p)).count()
        };
        assert!(
            dropped as u64 <= pages,
            "dropped {dropped} copies of {pages} pages"
        );
        self.stats.invalidated += dropped as u64;
    }

    /// Check the invariants (module docs); panics with what is broken.
    pub(super) fn check(&self) {
        for (i, log) in self.logs.iter().enumerate() {
            log.check();
            for (page, slot) in log.iter() {
                assert!((slot as usize) < log.capacity(), "slot outside its log");
                for other in &self.logs[i + 1..] {
                    assert!(!other.contains(&page), "page {page} in two flash logs");
                }
            }
        }
    }
}
