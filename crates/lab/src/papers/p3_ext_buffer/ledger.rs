//! What each page move of one simulator pass was, beyond [`policy::Counts`]: which flash log
//! served each extended hit (2Q's `A1out` or `Amout`), which victims went to flash dirty and
//! which of those came back, flash writes of pages read back from flash unchanged, and the
//! disk writes of the other write-back rule ([`WriteBack`]). It follows the pass's
//! [`Access`]es, so it changes nothing the pass decides: these are added keys of the same row.
//!
//! Invariants (asserted in [`Ledger::finish`]): per-log hits sum to the pass's extended hits,
//! per-log writes to its flash writes, and the flash-exit rule never writes more pages to disk
//! than P3's rule (it only defers and merges write-backs).

use policy::{Access, Counts, LogId, Outcome, Placement};
use rustc_hash::{FxHashMap, FxHashSet};
use serde::{Deserialize, Serialize};

/// When a dirty main-buffer victim that goes to flash is written to the database disk.
///
/// - `AtEviction` (P3, §2.2: "a page updated in the main buffer must be reflected to the
///   disk"): on its way out of main, before it is written to flash; the flash copy is clean.
/// - `AtFlashExit` (lazy cleaning): the flash SSD is non-volatile, so the dirty page is as
///   durable there as on disk; it is written to disk only when it leaves flash (displaced by
///   the log's head). A page read back from flash and dirtied again before it leaves merges
///   two write-backs into one, and a dirty page read back from flash is still owed to disk.
///   Not P3's design: measured beside it to show how much of P3's claims turns on this rule.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum WriteBack {
    AtEviction,
    AtFlashExit,
}

impl WriteBack {
    pub fn name(self) -> &'static str {
        match self {
            WriteBack::AtEviction => "at-eviction",
            WriteBack::AtFlashExit => "at-flash-exit",
        }
    }
}

/// The added keys of one pass's row (see the module docs).
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct LedgerKeys {
    /// Extended hits served by the first log (`lru-ext`'s, 2Q's `A1out`) and by `Amout`.
    pub ext_hits_a1out: u64,
    pub ext_hits_amout: u64,
    /// Flash writes to the first log and to `Amout`.
    pub flash_writes_a1out: u64,
    pub flash_writes_amout: u64,
    /// Flash writes of victims that were dirty (written to disk too, under P3's rule).
    pub flash_writes_dirty: u64,
    /// Extended hits on pages that were dirty when they went to flash.
    pub ext_hits_dirty: u64,
    /// Flash writes of a clean victim that had been read back from flash and not modified
    /// since: the most a directory that kept the read-back copy valid could save.
    pub flash_rewrites_unchanged: u64,
    /// Disk writes under [`WriteBack::AtFlashExit`] (P3's rule: `disk_writes`).
    pub disk_writes_at_flash_exit: u64,
}

/// One flash copy: was the victim dirty, and is its newest version still owed to disk
/// (flash-exit rule)?
#[derive(Clone, Copy)]
struct FlashCopy {
    dirty: bool,
    owed: bool,
}

/// Follows a pass's accesses; see the module docs.
#[derive(Default)]
pub struct Ledger {
    keys: LedgerKeys,
    on_flash: FxHashMap<u64, FlashCopy>,
    /// Pages in main whose disk copy is stale under the flash-exit rule (read back owed).
    owed_in_main: FxHashSet<u64>,
    /// Pages in main read back from flash (for `flash_rewrites_unchanged`).
    from_flash: FxHashSet<u64>,
}

impl Ledger {
    /// Record reference `page`'s access `a`.
    pub fn record(&mut self, page: u64, a: &Access) {
        if let Outcome::ExtHit { log, .. } = a.outcome {
            self.read_back(page, log);
        }
        let Some(e) = a.eviction else { return };
        let owed = e.dirty || self.owed_in_main.remove(&e.page);
        let unchanged = self.from_flash.remove(&e.page) && !e.dirty;
        let k = &mut self.keys;
        match e.to {
            Placement::Out => k.disk_writes_at_flash_exit += owed as u64,
            Placement::Log(log) => {
                if log == LogId::AMOUT {
                    k.flash_writes_amout += 1;
                } else {
                    k.flash_writes_a1out += 1;
                }
                k.flash_writes_dirty += e.dirty as u64;
                k.flash_rewrites_unchanged += unchanged as u64;
                let copy = FlashCopy {
                    dirty: e.dirty,
                    owed,
                };
                self.on_flash.insert(e.page, copy);
            }
        }
        if let Some(d) = e.displaced {
            let gone = self
                .on_flash
                .remove(&d)
                .expect("a displaced page was on flash");
            self.keys.disk_writes_at_flash_exit += gone.owed as u64;
        }
    }

    fn read_back(&mut self, page: u64, log: LogId) {
        let copy = self
            .on_flash
            .remove(&page)
            .expect("an extended hit was on flash");
        let k = &mut self.keys;
        if log == LogId::AMOUT {
            k.ext_hits_amout += 1;
        } else {
            k.ext_hits_a1out += 1;
        }
        k.ext_hits_dirty += copy.dirty as u64;
        if copy.owed {
            self.owed_in_main.insert(page);
        }
        self.from_flash.insert(page);
    }

    /// The keys, checked against the pass's counts.
    pub fn finish(self, c: &Counts) -> LedgerKeys {
        let k = self.keys;
        assert_eq!(
            k.ext_hits_a1out + k.ext_hits_amout,
            c.ext_hits,
            "ext hits by log"
        );
        assert_eq!(
            k.flash_writes_a1out + k.flash_writes_amout,
            c.flash_writes,
            "flash writes by log"
        );
        assert!(k.flash_writes_dirty <= c.disk_writes, "dirty flash writes");
        assert!(
            k.disk_writes_at_flash_exit <= c.disk_writes,
            "the flash-exit rule writes {} pages to disk, P3's {}",
            k.disk_writes_at_flash_exit,
            c.disk_writes
        );
        k
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use policy::{BufferSim, LogOrder, PolicyConfig, PolicyKind};

    fn run(kind: PolicyKind, refs: &[(u64, bool)]) -> (Counts, LedgerKeys) {
        run_sized(kind, (2, 2), refs)
    }

    fn run_sized(
        kind: PolicyKind,
        (main, ext): (usize, usize),
        refs: &[(u64, bool)],
    ) -> (Counts, LedgerKeys) {
        let mut cfg = PolicyConfig::new(kind, main, ext);
        cfg.log_order = LogOrder::Circular;
        let mut sim = BufferSim::new(&cfg).expect("sizes");
        let mut l = Ledger::default();
        for &(p, w) in refs {
            let a = sim.reference(p, w);
            l.record(p, &a);
        }
        let c = sim.counts();
        (c, l.finish(&c))
    }

    #[test]
    fn a_dirty_page_read_back_and_redirtied_is_written_to_disk_once_at_flash_exit() {
        // Main 2, flash 2 (lru-ext). Page 1 dirty, evicted to flash, read back, dirtied again,
        // evicted again: P3 writes it to disk twice; the flash-exit rule once, when it leaves
        // flash at the end of the stream of cold pages.
        let refs = [
            (1, true),
            (2, false),
            (3, false), // 1 -> flash (dirty)
            (1, true),  // read back from flash, dirtied again; 2 -> flash
            (4, false), // 3 -> flash
            (5, false), // 1 -> flash (dirty again)
            (6, false),
            (7, false),
            (8, false), // the log's head passes 1's slot: 1 leaves flash
        ];
        let (c, k) = run(PolicyKind::LruExt, &refs);
        assert_eq!(c.disk_writes, 2);
        assert_eq!(k.disk_writes_at_flash_exit, 1);
        assert_eq!(k.ext_hits_dirty, 1);
        assert_eq!(k.flash_writes_dirty, 2);
        assert_eq!(k.ext_hits_a1out, c.ext_hits);
    }

    #[test]
    fn a_clean_page_read_back_and_evicted_again_is_an_unchanged_rewrite() {
        let refs = [
            (1, false),
            (2, false),
            (3, false),
            (1, false),
            (4, false),
            (5, false),
        ];
        let (c, k) = run(PolicyKind::LruExt, &refs);
        assert_eq!(c.ext_hits, 1);
        assert_eq!(k.flash_rewrites_unchanged, 1);
        assert_eq!(k.disk_writes_at_flash_exit, 0);
    }

    #[test]
    fn two_q_flash_hits_are_split_by_log() {
        // Five hot pages between 40 cold ones; main 4 (A1in 1, Am 3), A1out 16, Amout 24: a
        // hot page's second reference (9 victims later) finds it in A1out; then the five
        // cycle through Am and Amout. Cold pages come back only after 80 references.
        let refs: Vec<(u64, bool)> = (0..2000u64)
            .map(|i| {
                if i % 2 == 0 {
                    ((i / 2) % 5, i % 3 == 0)
                } else {
                    (100 + (i * 13) % 40, false)
                }
            })
            .collect();
        let (c, k) = run_sized(PolicyKind::TwoQFlash, (4, 40), &refs);
        assert!(k.ext_hits_amout > 0 && k.ext_hits_a1out > 0, "{k:?}");
        assert_eq!(k.ext_hits_amout + k.ext_hits_a1out, c.ext_hits);
    }
}
