//! # lab — flashlab's experiments
//!
//! One folder per paper under [`papers`] (`p1_as_btree`, `p2_async_scan`, ...: run, typed
//! rows, figures, claims, paper data) and its registry; the run specs every front end shares
//! ([`spec`]: CLI, Python, sweeps); the [`harness`] (kv bench, sweep, `reproduce all`,
//! results.json, the page's views); and the tools (`sim` with its [`host`] adapter,
//! `buffer_sim`, `bench_device`, `lifetime`). Each experiment composes the lower crates,
//! measures, and returns an [`Output`]: a [`Report`] (the results format of ARCHITECTURE.md:
//! `rows` hold only what the run measured, `paper` the paper's figures, `claims` the verdicts)
//! and human-readable tables.
//! Nothing here hard-codes a result: every number in `rows` comes from the run that made it.

pub mod bench_device;
pub mod buffer_sim;
pub mod capture;
pub mod child;
pub mod claim;
pub mod devices;
pub mod experiments;
pub mod harness;
pub mod host;
pub mod lifetime;
pub mod oracle;
pub mod papers;
pub mod parallel;
pub mod report;
pub mod sim;
pub mod spec;
pub mod trace_info;
pub mod units;
pub mod watch;

/// The renderer (`crates/report`), for the front ends that print what lab builds.
pub use render;

pub use claim::{Claim, Verdict};
pub use devices::{DeviceChoice, DeviceKind};
pub use experiments::{Experiment, EXPERIMENTS};
pub use report::{Output, Report, ReproduceOptions, Row, Scale, Series, Table};
pub use watch::{Cancel, Interrupted, Watch};
