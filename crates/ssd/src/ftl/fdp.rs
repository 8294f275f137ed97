//! NVMe Flexible Data Placement (FDP) on the page FTL's stream machinery.
//!
//! Model (NVMe TP4146 vocabulary):
//! - a **reclaim group** is a GC pool of the page FTL: each die (`gc_pool = "per_die"`) or the
//!   whole device (`gc_pool = "device"`);
//! - a **reclaim unit** (RU) is `ru_blocks` erase blocks on each of `ru_dies` dies (one die
//!   by default; every die of the group with one block each is the *superblock* RU current
//!   FDP drives report), written in order, its pages striped across its dies, and erased
//!   together; GC reclaims a whole RU. The page FTL runs unchanged over the *RU layout*
//!   ([`flash_config`]): its "block" is an RU of `ru_blocks x ru_dies x pages_per_block`
//!   pages, its "die" a group of `ru_dies` dies, and the device reports
//!   `ru_blocks x ru_dies` erases per RU. The mapping, the GC and the WAF are those of a
//!   device whose erase unit is the RU; where an RU's pages lie on the real dies is
//!   [`physical_page`];
//! - a **reclaim-unit handle** (RUH) is a host write stream: a write's placement ID is its
//!   `StreamId`, placement ID `h` goes to handle `h` (`ftl.streams` handles), and each handle
//!   keeps its own open RU per reclaim group;
//! - the handle type: **initially isolated** handles share one GC destination (GC copies of
//!   every handle's data mix in it: `gc_stream = "separate"`); **persistently isolated**
//!   handles keep a GC destination each (`gc_stream = "per_stream"`), so no RU ever holds two
//!   handles' data.
//!
//! The configuration (`[ftl.fdp]`, the RU layout) is `crate::config::fdp`'s.
//!
//! [`flash_config`]: crate::config::fdp::flash_config
//! [`physical_page`]: crate::config::fdp::physical_page
//!
//! Per-handle statistics ([`HandleStats`]) come from two counters per open-block slot, kept
//! off the per-page path: RUs a slot opened and pages GC copied out of a slot's RUs.

use super::blocks::NIL;
use crate::config::GcStreamMode;
use crate::flash::Flash;
use crate::types::BlockId;
use serde::{Deserialize, Serialize};

/// Per open-block slot (host stream `s`, or a GC stream): RUs opened and pages GC copied out
/// of its RUs. Kept by the page FTL at block open and at reclaim only.
#[derive(Clone, Debug, Default)]
pub(crate) struct SlotStats {
    opened: Vec<u64>,
    gc_copied: Vec<u64>,
}

impl SlotStats {
    pub fn new(slots: usize) -> SlotStats {
        SlotStats {
            opened: vec![0; slots],
            gc_copied: vec![0; slots],
        }
    }

    /// `slot` opened an RU.
    #[inline]
    pub fn opened(&mut self, slot: u16) {
        self.opened[slot as usize] += 1;
    }

    /// GC copied `pages` valid pages out of an RU `slot` had written.
    #[inline]
    pub fn copied(&mut self, slot: u16, pages: u32) {
        self.gc_copied[slot as usize] += pages as u64;
    }
}

/// One reclaim-unit handle's counters (or, `handle: null`, the shared GC RUs of initially
/// isolated handles, which hold every handle's copies).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct HandleStats {
    /// The handle (= placement ID = stream); null: the shared GC destination.
    pub handle: Option<u16>,
    /// Host pages written with this placement ID.
    pub host_pages_written: u64,
    /// Pages programmed into this handle's RUs: its host pages and, persistently isolated,
    /// its own GC copies.
    pub flash_pages_written: u64,
    /// RUs this handle opened (an RU switch each time one filled).
    pub ru_switches: u64,
    /// Valid pages GC copied out of this handle's RUs.
    pub gc_pages_copied: u64,
}

impl HandleStats {
    /// Counters accumulated since `earlier` (the same handle of the same device).
    pub fn since(&self, earlier: &HandleStats) -> HandleStats {
        assert_eq!(self.handle, earlier.handle, "one handle's counters");
        HandleStats {
            handle: self.handle,
            host_pages_written: self.host_pages_written - earlier.host_pages_written,
            flash_pages_written: self.flash_pages_written - earlier.flash_pages_written,
            ru_switches: self.ru_switches - earlier.ru_switches,
            gc_pages_copied: self.gc_pages_copied - earlier.gc_pages_copied,
        }
    }

    /// This handle's WAF: its flash pages per host page (None without host pages).
    pub fn waf(&self) -> Option<f64> {
        (self.host_pages_written > 0)
            .then(|| self.flash_pages_written as f64 / self.host_pages_written as f64)
    }
}

/// The handle an open-block slot writes for: host stream `s` is handle `s`; GC slot
/// `streams + s` is handle `s` under `per_stream`; the one shared GC slot is none.
fn handle_of(slot: usize, streams: usize, mode: GcStreamMode) -> Option<u16> {
    match mode {
        _ if slot < streams => Some(slot as u16),
        GcStreamMode::PerStream => Some((slot - streams) as u16),
        GcStreamMode::Separate | GcStreamMode::Victim => None,
    }
}

/// Per-handle counters of a page FTL with `streams` host streams: slot counters folded per
/// handle, pages programmed per slot = RUs opened x RU pages − room left in its open RUs.
pub(crate) fn handle_stats(
    slots: &SlotStats,
    open_blocks: &[u32],
    flash: &Flash,
    streams: u16,
    mode: GcStreamMode,
) -> Vec<HandleStats> {
    let (n, ppb) = (streams as usize, flash.layout.ppb as u64);
    let mut rows: Vec<HandleStats> = (0..streams)
        .map(|h| HandleStats {
            handle: Some(h),
            ..HandleStats::default()
        })
        .collect();
    if mode != GcStreamMode::PerStream {
        rows.push(HandleStats::default());
    }
    let per_slot = open_blocks.len() / slots.opened.len().max(1);
    for (slot, (&opened, &copied)) in slots.opened.iter().zip(&slots.gc_copied).enumerate() {
        let room: u64 = open_blocks[slot * per_slot..(slot + 1) * per_slot]
            .iter()
            .filter(|&&b| b != NIL)
            .map(|&b| ppb - flash.write_pointer(BlockId(b)) as u64)
            .sum();
        let programmed = opened * ppb - room;
        let row = &mut rows[handle_of(slot, n, mode).map_or(n, |h| h as usize)];
        // Host slots take only host writes (FDP's GC never writes into them).
        if slot < n {
            row.host_pages_written += programmed;
        }
        row.flash_pages_written += programmed;
        row.ru_switches += opened;
        row.gc_pages_copied += copied;
    }
    rows
}
