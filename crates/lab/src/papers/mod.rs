//! One home per paper: `pN_name/` holds that paper's run, typed rows, tables, claims
//! (`claims.rs`), its charts (`figures.rs`: the renderer's figures from the typed rows) and
//! the paper's own figures as data (`paper.toml`). [`REGISTRY`] lists them; adding a
//! paper is one folder and one line here. Each entry says which devices it runs on; an empty
//! list means it builds its own simulated SSD, so `--device`, `--preset` and `--dir` do not
//! apply to it (the CLI refuses them rather than ignore them).

mod chart;
pub mod p1_as_btree;
pub mod p2_async_scan;
pub mod p3_ext_buffer;
pub mod p4_ioa_ftl;
pub mod p5_multistream;
pub mod p6_fdp;
mod paper;

pub use paper::{cell, p1, p2, p3, p4, p5, p6, Paper};

use crate::claim::Claim;
use crate::devices::DeviceKind;
use crate::{Output, Report, ReproduceOptions};
use anyhow::Result;
use serde::Serialize;

/// One paper's experiment.
#[derive(Clone, Copy, Debug, Serialize)]
pub struct Experiment {
    pub name: &'static str,
    /// The paper it reproduces (PAPERS.md), e.g. `P4`.
    pub paper: &'static str,
    pub about: &'static str,
    /// Devices it runs on (`--device`); empty: its own simulated SSD only.
    pub devices: &'static [DeviceKind],
    /// Measure; the report it returns already carries its `claims`.
    #[serde(skip)]
    pub run: fn(&ReproduceOptions) -> Result<Output>,
    /// The paper's headline figures judged against a report's rows (read back as the
    /// paper's typed rows), so a saved `results.json` is judged by the same code as a run.
    #[serde(skip)]
    pub claims: fn(&Report) -> Vec<Claim>,
    /// The paper's figures drawn from a report's rows (read back as the paper's typed rows).
    #[serde(skip)]
    pub figures: fn(&Report) -> Vec<render::Figure>,
    /// The names of `Report::series` its `figures` draw (every other series gets a chart of
    /// its own).
    #[serde(skip)]
    pub series_drawn: &'static [&'static str],
}

impl Experiment {
    /// Whether `--device`, `--preset` and `--dir` apply.
    pub fn takes_devices(&self) -> bool {
        !self.devices.is_empty()
    }
}

pub const REGISTRY: &[Experiment] = &[
    Experiment {
        name: "ioa-ftl",
        paper: "P4",
        about: "increasing-order-aware log-block FTL vs BAST, FAST, DFTL, page mapping (simulated SSD)",
        devices: &[],
        run: p4_ioa_ftl::run,
        claims: p4_ioa_ftl::claims::claims,
        figures: p4_ioa_ftl::figures::figures,
        series_drawn: &[],
    },
    Experiment {
        name: "as-btree",
        paper: "P1",
        about: "AS B-tree vs in-place B-tree vs BFTL: insert/search time, write buffer, LRU cache, file size",
        devices: p1_as_btree::DEVICES,
        run: p1_as_btree::run,
        claims: p1_as_btree::claims::claims,
        figures: p1_as_btree::figures::figures,
        series_drawn: &[],
    },
    Experiment {
        name: "async-scan",
        paper: "P2",
        about: "range scans: synchronous vs batched asynchronous heap reads, selectivity and batch sweeps",
        devices: p2_async_scan::DEVICES,
        run: p2_async_scan::run,
        claims: p2_async_scan::claims::claims,
        figures: p2_async_scan::figures::figures,
        series_drawn: &[],
    },
    Experiment {
        name: "ext-buffer",
        paper: "P3",
        about: "flash SSD as an extended buffer: lru/2q vs lru-ext, 2q-ext, 2q-flash on a TPC-C-like trace (cost model; --engine: the engine's pool on devices)",
        devices: p3_ext_buffer::DEVICES,
        run: p3_ext_buffer::run,
        claims: p3_ext_buffer::claims::claims,
        figures: p3_ext_buffer::figures::figures,
        series_drawn: &[],
    },
    Experiment {
        name: "multistream",
        paper: "P5",
        about: "32 key-value stores on one multi-stream SSD: stream policies by data type, file, lifetime (auto) x GC modes; WAF over time, lifetimes",
        devices: &[],
        run: p5_multistream::run,
        claims: p5_multistream::claims::claims,
        figures: p5_multistream::figures::figures,
        series_drawn: p5_multistream::figures::SERIES_DRAWN,
    },
    Experiment {
        name: "fdp",
        paper: "P6",
        about: "NVMe FDP on a flash cache (CacheLib's two engines): WAF without and with placement, small vs large reclaim units, initially vs persistently isolated handles, utilisation 50-95 % (simulated SSD)",
        devices: &[],
        run: p6_fdp::run,
        claims: p6_fdp::claims::claims,
        figures: p6_fdp::figures::figures,
        series_drawn: &[],
    },
];

/// The experiment called `name`.
pub fn find(name: &str) -> Option<&'static Experiment> {
    REGISTRY.iter().find(|e| e.name == name)
}

/// Every experiment's name, for error messages.
pub fn names() -> Vec<&'static str> {
    REGISTRY.iter().map(|e| e.name).collect()
}

/// The claims of a report by its experiment's entry (none for an unknown name).
pub fn claims_of(report: &Report) -> Vec<Claim> {
    find(&report.experiment).map_or_else(Vec::new, |e| (e.claims)(report))
}

/// The figures of a report by its experiment's entry, then a chart per measured series the
/// entry does not draw; empty charts left out.
pub fn figures_of(report: &Report) -> Vec<render::Figure> {
    let entry = find(&report.experiment);
    let mut figs = entry.map_or_else(Vec::new, |e| (e.figures)(report));
    let drawn = entry.map_or(&[][..], |e| e.series_drawn);
    figs.extend(chart::series_figures(report, drawn));
    figs.retain(|f| !f.plot.is_empty());
    figs
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_unique_and_found() {
        for e in REGISTRY {
            assert_eq!(find(e.name).map(|f| f.name), Some(e.name));
        }
        let mut n = names();
        n.sort();
        n.dedup();
        assert_eq!(n.len(), REGISTRY.len());
        assert!(find("no-such").is_none());
    }
}
