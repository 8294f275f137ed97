//! # lab — flashlab's experiments
//!
//! One module per paper's experiment (`ioa_ftl`, `as_btree`, `async_scan`, ...) plus the `sim`
//! driver behind `flashlab sim`. Each experiment composes the lower crates, measures, and returns
//! an [`Output`]: a [`Report`] (the results format of ARCHITECTURE.md: `rows` hold only what the
//! run measured, `paper` the paper's figures for comparison) and human-readable tables.
//! Nothing here hard-codes a result: every number in `rows` comes from the run that made it.

pub mod as_btree;
pub mod async_scan;
pub mod bench_device;
pub mod buffer_sim;
pub mod devices;
pub mod experiments;
pub mod ext_buffer;
pub mod host;
pub mod ioa_ftl;
pub mod lifetime;
pub mod multistream;
pub mod papers;
pub mod report;
pub mod sim;
pub mod trace_info;
pub mod units;

pub use devices::{DeviceChoice, DeviceKind};
pub use experiments::{Experiment, EXPERIMENTS};
pub use report::{Output, Report, ReproduceOptions, Row, Scale, Series, Table};
