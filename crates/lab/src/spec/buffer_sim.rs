//! [`BufferSimSpec`] (`flashlab buffer-sim`) and [`PageTraceSpec`], the page-reference trace
//! it and `flashlab trace-info` read.

use super::{de, RunSpec, SpecError};
use crate::buffer_sim::{BufferSimOptions, CostModel, PriceModel, Size, TraceSpec};
use policy::PolicyKind;
use serde::{Deserialize, Serialize};
use std::path::PathBuf;
use workload::cache_trace::PageTraceFormat;

/// A page-reference trace: its file, format and page size.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(default)]
#[cfg_attr(feature = "clap", derive(clap::Args))]
pub struct PageTraceSpec {
    /// Page-reference trace (plain, .gz, .bz2, .xz or .zst).
    #[cfg_attr(feature = "clap", arg(long, required = true))]
    #[serde(deserialize_with = "de::opt_parsed")]
    pub trace: Option<PathBuf>,
    /// text (R|W page), arc (.lis), lirs, u32be, u32le, u64be, block:FORMAT (msr, spc, disksim,
    /// systor, tencent, blkparse).
    #[cfg_attr(feature = "clap", arg(long, required = true))]
    #[serde(deserialize_with = "de::opt_string")]
    pub trace_format: Option<String>,
    /// Page size, bytes: pages of block:FORMAT traces, and prices.
    #[cfg_attr(feature = "clap", arg(long, default_value_t = 4096))]
    #[serde(deserialize_with = "de::parsed")]
    pub page_bytes: u32,
    /// Stop after this many references.
    #[cfg_attr(feature = "clap", arg(long))]
    #[serde(deserialize_with = "de::opt_parsed")]
    pub limit: Option<u64>,
}

impl Default for PageTraceSpec {
    fn default() -> Self {
        PageTraceSpec {
            trace: None,
            trace_format: None,
            page_bytes: 4096,
            limit: None,
        }
    }
}

impl PageTraceSpec {
    /// The trace to open. Refused: no trace or format, an unknown format, 0-byte pages.
    pub fn resolve(&self) -> Result<TraceSpec, SpecError> {
        let path = self
            .trace
            .clone()
            .ok_or_else(|| SpecError::rule("--trace", "is required (a page-reference trace)"))?;
        let Some(f) = &self.trace_format else {
            return Err(SpecError::rule(
                "--trace-format",
                format!("is required: {}", PageTraceFormat::HELP),
            ));
        };
        let format = PageTraceFormat::parse(f).ok_or_else(|| {
            SpecError::value(
                "--trace-format",
                f,
                format!("expected {}", PageTraceFormat::HELP),
            )
        })?;
        if self.page_bytes == 0 {
            return Err(SpecError::refused("--page-bytes", "must be at least 1"));
        }
        Ok(TraceSpec {
            path,
            format,
            page_bytes: self.page_bytes,
        })
    }
}

/// A `flashlab buffer-sim` run: one policy and size, or (`curve`) the LRU curve and the
/// lru-ext grid. Sizes are pages or a percentage of the trace's distinct pages; times in ms
/// per page; prices in USD and decimal GB. Defaults: P3's cost and price model.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(default)]
#[cfg_attr(feature = "clap", derive(clap::Args))]
pub struct BufferSimSpec {
    #[cfg_attr(feature = "clap", command(flatten))]
    #[serde(flatten)]
    pub trace: PageTraceSpec,
    /// lru, 2q, lru-ext, 2q-ext, 2q-flash.
    #[cfg_attr(feature = "clap", arg(long, default_value = "lru"))]
    #[serde(deserialize_with = "de::string")]
    pub policy: String,
    /// Main (DRAM) buffer: pages, or a percentage of the trace's distinct pages (e.g. 4%);
    /// the default is P3's main buffer, 4 % (with --curve, the grid's main size).
    #[cfg_attr(feature = "clap", arg(long, default_value = "4%"))]
    #[serde(deserialize_with = "de::string")]
    pub size: String,
    /// Flash extension: pages or a percentage (extended policies only).
    #[cfg_attr(feature = "clap", arg(long, default_value = "0"))]
    #[serde(deserialize_with = "de::string")]
    pub ext_size: String,
    /// 2Q's Kin, pages (default 25 % of --size, at least 1).
    #[cfg_attr(feature = "clap", arg(long))]
    #[serde(deserialize_with = "de::opt_parsed")]
    pub kin: Option<usize>,
    /// 2Q's Kout (ghost ids), pages (default 50 % of --size; plain 2q only).
    #[cfg_attr(feature = "clap", arg(long))]
    #[serde(deserialize_with = "de::opt_parsed")]
    pub kout: Option<usize>,
    /// 2q-flash: share of the flash given to Amout (Amout:A1out = r : 1-r).
    #[cfg_attr(feature = "clap", arg(long, default_value_t = 0.6))]
    #[serde(deserialize_with = "de::parsed")]
    pub amout_ratio: f64,
    /// Cost model, ms per page: flash random read.
    #[cfg_attr(feature = "clap", arg(long, default_value_t = 0.03))]
    #[serde(deserialize_with = "de::parsed")]
    pub flash_read_ms: f64,
    /// Cost model: flash sequential write.
    #[cfg_attr(feature = "clap", arg(long, default_value_t = 0.33))]
    #[serde(deserialize_with = "de::parsed")]
    pub flash_write_ms: f64,
    /// Cost model: one disk, random read or write.
    #[cfg_attr(feature = "clap", arg(long, default_value_t = 2.6))]
    #[serde(deserialize_with = "de::parsed")]
    pub disk_ms: f64,
    /// Cost model: two disks in RAID-0.
    #[cfg_attr(feature = "clap", arg(long, default_value_t = 1.6))]
    #[serde(deserialize_with = "de::parsed")]
    pub raid0_ms: f64,
    /// The database is on a RAID-0 pair (time and price).
    #[cfg_attr(feature = "clap", arg(long))]
    #[serde(deserialize_with = "de::flag")]
    pub raid0: bool,
    /// Price model: flash SSD price and capacity (decimal GB).
    #[cfg_attr(feature = "clap", arg(long, default_value_t = 225.0))]
    #[serde(deserialize_with = "de::parsed")]
    pub flash_usd: f64,
    #[cfg_attr(feature = "clap", arg(long, default_value_t = 80.0))]
    #[serde(deserialize_with = "de::parsed")]
    pub flash_gb: f64,
    /// Price model: one disk.
    #[cfg_attr(feature = "clap", arg(long, default_value_t = 350.0))]
    #[serde(deserialize_with = "de::parsed")]
    pub disk_usd: f64,
    /// Price model: DRAM per GB as a multiple of flash per GB.
    #[cfg_attr(feature = "clap", arg(long, default_value_t = 10.0))]
    #[serde(deserialize_with = "de::parsed")]
    pub dram_per_flash: f64,
    /// One pass for every LRU size (stack distances) and the lru-ext grid from it.
    #[cfg_attr(feature = "clap", arg(long))]
    #[serde(deserialize_with = "de::flag")]
    pub curve: bool,
    /// --curve: write the whole curve (every size where the hit count grows) as CSV (.csv) or JSON.
    #[cfg_attr(feature = "clap", arg(long))]
    #[serde(deserialize_with = "de::opt_parsed")]
    pub curve_out: Option<PathBuf>,
    /// --curve: main sizes of the grid, comma-separated (default: --size).
    #[cfg_attr(feature = "clap", arg(long))]
    #[serde(deserialize_with = "de::opt_string")]
    pub grid_main: Option<String>,
    /// --curve: flash sizes of the grid (default 5%,10%,...,50%).
    #[cfg_attr(feature = "clap", arg(long))]
    #[serde(deserialize_with = "de::opt_string")]
    pub grid_flash: Option<String>,
}

impl Default for BufferSimSpec {
    fn default() -> Self {
        let cost = CostModel::default();
        let price = PriceModel::default();
        BufferSimSpec {
            trace: PageTraceSpec::default(),
            policy: "lru".into(),
            size: "4%".into(),
            ext_size: "0".into(),
            kin: None,
            kout: None,
            amout_ratio: policy::PolicyConfig::AMOUT_RATIO_DEFAULT,
            flash_read_ms: cost.flash_read_ms,
            flash_write_ms: cost.flash_write_ms,
            disk_ms: cost.disk_ms,
            raid0_ms: cost.raid0_ms,
            raid0: cost.raid0,
            flash_usd: price.flash_usd,
            flash_gb: price.flash_gb,
            disk_usd: price.disk_usd,
            dram_per_flash: price.dram_per_flash,
            curve: false,
            curve_out: None,
            grid_main: None,
            grid_flash: None,
        }
    }
}

impl RunSpec for BufferSimSpec {
    /// Refused: a missing trace or format, an unknown policy, sizes that do not parse,
    /// negative or non-finite times and prices, a capacity of 0 GB, `curve` with a policy
    /// other than lru / lru-ext.
    fn validate(&self) -> Result<(), SpecError> {
        self.trace.resolve()?;
        self.policy()?;
        size(&self.size, "--size")?;
        size(&self.ext_size, "--ext-size")?;
        for (name, x) in [
            ("--flash-read-ms", self.flash_read_ms),
            ("--flash-write-ms", self.flash_write_ms),
            ("--disk-ms", self.disk_ms),
            ("--raid0-ms", self.raid0_ms),
            ("--flash-usd", self.flash_usd),
            ("--disk-usd", self.disk_usd),
            ("--dram-per-flash", self.dram_per_flash),
        ] {
            if !(x.is_finite() && x >= 0.0) {
                return Err(SpecError::value(name, x, "expected a non-negative number"));
            }
        }
        if !(self.flash_gb.is_finite() && self.flash_gb > 0.0) {
            return Err(SpecError::value(
                "--flash-gb",
                self.flash_gb,
                "expected a positive number",
            ));
        }
        if let Some(l) = &self.grid_main {
            sizes(l, "--grid-main")?;
        }
        if let Some(l) = &self.grid_flash {
            sizes(l, "--grid-flash")?;
        }
        Ok(())
    }
}

impl BufferSimSpec {
    fn policy(&self) -> Result<PolicyKind, SpecError> {
        PolicyKind::parse(&self.policy).ok_or_else(|| {
            SpecError::value(
                "--policy",
                &self.policy,
                "expected lru, 2q, lru-ext, 2q-ext or 2q-flash",
            )
        })
    }

    /// The options of one simulation, followed and stopped through `watch`.
    pub fn resolve(&self, watch: &crate::Watch) -> anyhow::Result<BufferSimOptions> {
        self.validate()?;
        let mut o = BufferSimOptions::new(
            self.trace.resolve()?,
            self.policy()?,
            size(&self.size, "--size")?,
        );
        o.ext = size(&self.ext_size, "--ext-size")?;
        (o.kin, o.kout, o.amout_ratio) = (self.kin, self.kout, self.amout_ratio);
        o.cost = CostModel {
            flash_read_ms: self.flash_read_ms,
            flash_write_ms: self.flash_write_ms,
            disk_ms: self.disk_ms,
            raid0_ms: self.raid0_ms,
            raid0: self.raid0,
        };
        o.price = PriceModel {
            flash_usd: self.flash_usd,
            flash_gb: self.flash_gb,
            disk_usd: self.disk_usd,
            dram_per_flash: self.dram_per_flash,
        };
        o.limit = self.trace.limit;
        o.watch = watch.clone();
        crate::buffer_sim::validate(&o)?;
        Ok(o)
    }

    /// `curve`'s grid: main sizes (default: `size`) and flash sizes (default: P3's).
    pub fn grid(&self, o: &BufferSimOptions) -> Result<(Vec<Size>, Vec<Size>), SpecError> {
        let main = match &self.grid_main {
            Some(l) => sizes(l, "--grid-main")?,
            None => vec![o.size],
        };
        let flash = match &self.grid_flash {
            Some(l) => sizes(l, "--grid-flash")?,
            None => crate::buffer_sim::p3_flash_sizes(),
        };
        Ok((main, flash))
    }
}

fn size(s: &str, flag: &'static str) -> Result<Size, SpecError> {
    Size::parse(s).map_err(|e| SpecError::stated(flag, format!("{flag} {e}")))
}

fn sizes(list: &str, flag: &'static str) -> Result<Vec<Size>, SpecError> {
    list.split(',')
        .map(|s| Size::parse(s).map_err(|e| SpecError::refused(flag, e)))
        .collect()
}
