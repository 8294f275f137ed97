//! The registry of `flashlab reproduce` experiments: adding an experiment is one entry here
//! (its module returns an [`Output`]). Each entry says which devices it runs on; an empty
//! list means it builds its own simulated SSD, so `--device`, `--preset` and `--dir` do not
//! apply to it (the CLI refuses them rather than ignore them).

use crate::devices::DeviceKind;
use crate::{Output, ReproduceOptions};
use anyhow::Result;
use serde::Serialize;

#[derive(Clone, Copy, Debug, Serialize)]
pub struct Experiment {
    pub name: &'static str,
    /// The paper it reproduces (PAPERS.md), e.g. `P4`.
    pub paper: &'static str,
    pub about: &'static str,
    /// Devices it runs on (`--device`); empty: its own simulated SSD only.
    pub devices: &'static [DeviceKind],
    #[serde(skip)]
    pub run: fn(&ReproduceOptions) -> Result<Output>,
}

impl Experiment {
    /// Whether `--device`, `--preset` and `--dir` apply.
    pub fn takes_devices(&self) -> bool {
        !self.devices.is_empty()
    }
}

pub const EXPERIMENTS: &[Experiment] = &[
    Experiment {
        name: "ioa-ftl",
        paper: "P4",
        about: "increasing-order-aware log-block FTL vs BAST, FAST, DFTL, page mapping (simulated SSD)",
        devices: &[],
        run: crate::ioa_ftl::run,
    },
    Experiment {
        name: "as-btree",
        paper: "P1",
        about: "AS B-tree vs in-place B-tree vs BFTL: insert/search time, write buffer, LRU cache, file size",
        devices: crate::as_btree::DEVICES,
        run: crate::as_btree::run,
    },
    Experiment {
        name: "async-scan",
        paper: "P2",
        about: "range scans: synchronous vs batched asynchronous heap reads, selectivity and batch sweeps",
        devices: crate::async_scan::DEVICES,
        run: crate::async_scan::run,
    },
    Experiment {
        name: "ext-buffer",
        paper: "P3",
        about: "flash SSD as an extended buffer: lru/2q vs lru-ext, 2q-ext, 2q-flash on a TPC-C-like trace (cost model; --engine: the engine's pool on devices)",
        devices: crate::ext_buffer::DEVICES,
        run: crate::ext_buffer::run,
    },
    Experiment {
        name: "multistream",
        paper: "P5",
        about: "32 key-value stores on one multi-stream SSD: stream policies by data type, file, lifetime (auto) x GC modes; WAF over time, lifetimes",
        devices: &[],
        run: crate::multistream::run,
    },
];

/// The experiment called `name`.
pub fn find(name: &str) -> Option<&'static Experiment> {
    EXPERIMENTS.iter().find(|e| e.name == name)
}

/// Every experiment's name, for error messages.
pub fn names() -> Vec<&'static str> {
    EXPERIMENTS.iter().map(|e| e.name).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_unique_and_found() {
        for e in EXPERIMENTS {
            assert_eq!(find(e.name).map(|f| f.name), Some(e.name));
        }
        let mut n = names();
        n.sort();
        n.dedup();
        assert_eq!(n.len(), EXPERIMENTS.len());
        assert!(find("no-such").is_none());
    }
}
