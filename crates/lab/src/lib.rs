//! # lab — flashlab's experiments
//!
//! One folder per paper under [`papers`] (`p1_as_btree`, `p2_async_scan`, ...: run, typed
//! rows, tables, claims, paper data) plus the `sim` driver behind `flashlab sim`. Each experiment composes the lower crates, measures, and returns
//! an [`Output`]: a [`Report`] (the results format of ARCHITECTURE.md: `rows` hold only what the
//! run measured, `paper` the paper's figures for comparison) and human-readable tables.
//! Nothing here hard-codes a result: every number in `rows` comes from the run that made it.

pub mod bench_device;
pub mod buffer_sim;
pub mod claim;
pub mod devices;
pub mod experiments;
pub mod harness;
pub mod host;
pub mod lifetime;
pub mod papers;
pub mod report;
pub mod sim;
pub mod spec;
pub mod trace_info;
pub mod units;

// The papers' modules under the names they had before they moved into `papers/`.
pub use papers::p1_as_btree as as_btree;
pub use papers::p2_async_scan as async_scan;
pub use papers::p3_ext_buffer as ext_buffer;
pub use papers::p4_ioa_ftl as ioa_ftl;
pub use papers::p5_multistream as multistream;

pub use claim::{Claim, Verdict};
pub use devices::{DeviceChoice, DeviceKind};
pub use experiments::{Experiment, EXPERIMENTS};
pub use report::{Output, Report, ReproduceOptions, Row, Scale, Series, Table};
