//! The `Ftl` trait: one implementation per mapping scheme, all on the same [`Flash`] mechanism.
//!
//! An FTL owns its mapping structures and decides where each page goes, when to collect
//! garbage and how to merge; [`Flash`] carries out the programs, reads, copies and erases and
//! keeps the data and the counters.

use crate::config::{FtlKind, SsdConfig};
use crate::error::{ConfigError, InvariantError, SsdError};
use crate::flash::Flash;
use crate::types::{Lpn, PageWrite, Ppn, SimTime, StreamId};

pub mod bast;
pub mod block;
pub mod dftl;
pub mod fast;
pub mod gc;
pub mod live;
pub mod logblock;
pub mod memory;
pub mod page;

pub trait Ftl: Send {
    fn kind(&self) -> FtlKind;
    /// Logical pages the host may address (`0..logical_pages`).
    fn logical_pages(&self) -> u64;
    /// Write one logical page; may run GC/merges first. Returns the completion time.
    fn write(
        &mut self,
        flash: &mut Flash,
        lpn: Lpn,
        stream: StreamId,
        data: PageWrite,
        now: SimTime,
    ) -> Result<SimTime, SsdError>;
    /// Read one logical page: completion time and where its data is (`None`: not mapped).
    fn read(
        &mut self,
        flash: &mut Flash,
        lpn: Lpn,
        now: SimTime,
    ) -> Result<(SimTime, Option<Ppn>), SsdError>;
    /// Drop a logical page's mapping (TRIM).
    fn trim(&mut self, flash: &mut Flash, lpn: Lpn, now: SimTime) -> Result<SimTime, SsdError>;
    /// Bytes of RAM the scheme's mapping structures take for this device (from its real
    /// data structures: entries x entry size).
    fn mapping_bytes(&self) -> u64;
    /// Check every invariant of the scheme against the flash state.
    fn verify(&self, flash: &Flash) -> Result<(), InvariantError>;
}

/// Build the FTL named by `cfg.ftl.scheme`.
pub fn build(cfg: &SsdConfig, flash: &Flash) -> Result<Box<dyn Ftl>, ConfigError> {
    match cfg.ftl.scheme {
        FtlKind::Page => Ok(Box::new(page::PageFtl::new(cfg, flash))),
        FtlKind::Block => Ok(Box::new(block::BlockFtl::new(cfg, flash))),
        FtlKind::Bast | FtlKind::Ioa => Ok(Box::new(logblock::LogBlockFtl::new(
            cfg,
            flash,
            cfg.ftl.scheme,
        ))),
        FtlKind::Dftl => Ok(Box::new(dftl::Dftl::new(cfg, flash))),
        FtlKind::Fast => Ok(Box::new(fast::FastFtl::new(cfg, flash))),
    }
}
