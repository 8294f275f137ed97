//! # ssd — a simulated NAND flash SSD
//!
//! Model: a NAND array ([`flash::Flash`]) of `channels x dies_per_channel` dies, each with
//! `planes x blocks_per_plane` blocks of `pages_per_block` pages; pages are programmed in order
//! and erased a block at a time. An FTL (the `ftl` module: page mapping, block mapping, BAST,
//! FAST, DFTL, IOA) maps logical pages to physical pages, collects garbage and merges. Operations run
//! on a virtual clock with per-die and per-channel busy timelines; the device really keeps what
//! is written (a 64-bit tag per page, or full payloads) so engines run on it and every read can
//! be checked against the last write.
//!
//! Invariants (checked by each FTL's `verify`, run after every GC/merge with `check_invariants`):
//! valid counts match the maps; no physical page is mapped twice; free + valid + invalid pages =
//! total pages, each counted from its own source.
//!
//! Configs are validated before anything is sized or allocated ([`SsdConfig::validate`]); the
//! smallest capacity that holds an FTL's reserves is [`SsdConfig::min_logical_bytes`]; the RAM
//! a device needs is [`SsdConfig::memory_bytes_estimate`] (refuse with
//! [`SsdConfig::check_memory`]). Simulated time saturates rather than wraps and surfaces as
//! [`SsdError::TimeOverflow`].
//! A simulated run is a pure function of (config, workload, seed).
//!
//! Hosts drive the device through one port, [`host::HostPort`] (queue depth, batches that
//! overlap on the dies, trace arrival replay, the device's clock). Modules import downward
//! only: `types`, `error`, `stats`, `live`, `queue`, `die_queue`, `config` → `flash` → `ftl` → `link`
//! (host link and write cache timing) → `device` ([`Ssd`]) → `host` ([`HostPort`]).

pub mod analytic;
pub mod config;
pub mod device;
mod die_queue;
pub mod error;
pub mod flash;
pub mod ftl;
pub mod host;
pub mod hugevec;
mod latency;
mod link;
mod live;
mod queue;
pub mod stats;
pub mod types;

pub use config::{
    DataMode, FdpConfig, FtlKind, GcPolicy, GcPool, GcStreamMode, GcVictimScope, Isolation,
    SsdConfig,
};
pub use device::{ReadPage, Ssd, WritePrefetch};
pub use error::{ConfigError, InvariantError, SsdError};
pub use ftl::fdp::HandleStats;
pub use host::{Command, HostPort};
pub use latency::LatencySample;
pub use stats::Stats;
pub use types::{BlockId, DieId, Lpn, PageWrite, Ppn, SimTime, StreamId};
