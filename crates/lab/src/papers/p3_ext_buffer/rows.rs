//! The typed rows of `reproduce ext-buffer`: the simulator's counters of one point
//! ([`Counters`], the keys `buffer-sim` prints) and what this experiment adds — which figure,
//! sizes in % of the database, the speed-up over disks alone ([`ExtBufferRow`]) or, for
//! `--engine`, the devices the engine's pool ran on ([`EngineRow`]).

use crate::buffer_sim::BufferSimOptions;
use policy::Counts;
use serde::{Deserialize, Serialize};

/// One run's counters, under the keys of `buffer-sim --json`.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Counters {
    /// `lru`, `2q`, `lru-ext`, `2q-ext` or `2q-flash`.
    pub policy: String,
    /// Main buffer pages.
    pub size_pages: u64,
    /// Flash area pages.
    pub ext_pages: u64,
    pub references: u64,
    pub writes: u64,
    pub hits: u64,
    pub hit_ratio: f64,
    pub misses: u64,
    pub ext_hits: u64,
    /// Share of main-buffer misses found on flash.
    pub ext_hit_ratio: f64,
    pub disk_reads: u64,
    pub disk_writes: u64,
    pub flash_reads: u64,
    pub flash_writes: u64,
    pub flash_displaced: u64,
    /// Cost model: page moves × device time.
    pub elapsed_ms: f64,
    pub price_usd: f64,
}

impl Counters {
    pub fn new(o: &BufferSimOptions, c: &Counts, size_pages: usize, ext_pages: usize) -> Counters {
        Counters {
            policy: o.policy.name().into(),
            size_pages: size_pages as u64,
            ext_pages: ext_pages as u64,
            references: c.references,
            writes: c.writes,
            hits: c.hits,
            hit_ratio: c.hit_ratio(),
            misses: c.misses,
            ext_hits: c.ext_hits,
            ext_hit_ratio: c.ext_hit_ratio(),
            disk_reads: c.disk_reads,
            disk_writes: c.disk_writes,
            flash_reads: c.flash_reads,
            flash_writes: c.flash_writes,
            flash_displaced: c.flash_displaced,
            elapsed_ms: o.cost.elapsed_ms(c),
            price_usd: o
                .price
                .price_usd(size_pages, ext_pages, o.trace.page_bytes, o.disks()),
        }
    }
}

/// One point of the cost-model sweep, as `reproduce ext-buffer --json` prints it. Every key
/// is required when read back: an engine row does not parse as one (readers skip it), and
/// a renamed key makes the claims `not run` rather than read a default.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct ExtBufferRow {
    /// `fig3-5`, `fig2`, `fig6-dram`, `fig6-raid0` or `fig3-5-slot-refill` (`engine` for an
    /// [`EngineRow`]).
    pub figure: String,
    /// Main buffer and flash area, in % of the database.
    pub main_pct: f64,
    pub flash_pct: f64,
    /// 2Q-Flash: Amout's share of the flash area.
    pub amout_ratio: f64,
    /// `one` or `raid0-pair`.
    pub disks: String,
    /// Elapsed time of disks alone (lru, main buffer only) over this point's, minus 1, in %.
    pub speedup_vs_disks_alone_pct: f64,
    /// The device WAF of this point's flash writes on a simulated SSD holding the flash area
    /// (`flash_area.rs`; null without flash, or where the area is too small for the preset's
    /// geometry). Optional when read back: reports written before it have none.
    #[serde(default)]
    pub flash_device_waf: Option<f64>,
    /// How the flash logs wrote their slots: `circular` (P3's, the figures' rows) or
    /// `slot-refill` (the comparison rows, figure `fig3-5-slot-refill`); `none` without flash.
    /// Optional when read back: reports written before it used slot refill throughout.
    #[serde(default)]
    pub flash_log: String,
    /// What the pass's page moves were (`ledger.rs`): absent for points from the one-pass
    /// LRU curve (lru, lru-ext with slot refill, same-cost DRAM) and in older reports.
    #[serde(flatten, default, skip_serializing_if = "Option::is_none")]
    pub ledger: Option<super::ledger::LedgerKeys>,
    #[serde(flatten)]
    pub counts: Counters,
}

/// One run of the engine's buffer pool on devices (`--engine`), `figure: engine`.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct EngineRow {
    pub figure: String,
    pub main_pct: f64,
    pub flash_pct: f64,
    /// `file+file` or `hdd-model+sim-ssd`.
    pub device: String,
    /// Device time of the run (wall time on files).
    pub device_ms: f64,
    pub db_device_ms: f64,
    pub flash_device_ms: f64,
    /// Flash reads that fell back to the database (corrupt or failed).
    pub flash_fallbacks: u64,
    /// Whether hits, misses and moves equal the simulator's on the same references.
    pub counts_match_simulator: bool,
    pub wall_seconds: f64,
    /// The file system of `--dir` (`--device file` only).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub file_system: Option<String>,
    #[serde(flatten)]
    pub counts: Counters,
}
