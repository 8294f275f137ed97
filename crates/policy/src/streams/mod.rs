//! Stream assignment and lifetime tracking: which device stream each page write goes to.
//!
//! Model: a write may carry a typed [`WriteClass`] (a key-value store's page: its DB file and
//! [`DataType`]); a policy is a type behind [`StreamAssignment`] that maps a page write
//! (logical page, class) to a stream, and the mechanism that applies it (a shared device's
//! partitions, `flashlab sim`'s request loop) does not know which policy it holds. The policies:
//! - by class ([`ClassStreams`]): a table from (file, data type) to stream — P5's named policies
//!   and ours ([`NamedPolicy`]) or a user's TOML file ([`StreamMap`]) — or the online `auto`
//!   grouping of classes by measured lifetime ([`AutoStreams`]), or the `oracle` that knows
//!   each write's death time from a first pass over the same writes ([`OracleStreams`]);
//! - by address ([`LbaPolicySpec`]): `none`, the `hot-cold` oracle, `by-lba-range:N`,
//!   `auto` over LBA ranges, SepBIT's invalidation-time inference `sepbit`, and the
//!   death-time `oracle`.
//!
//! [`lifetime`] measures per-class page lifetimes (P5's Table 1) with the per-page last-write
//! bookkeeping [`AutoStreams`] shares. Stream 0 is the default stream: a write without a class
//! goes there under every class policy.
//!
//! Everything here is deterministic: a function of the sequence of writes.

pub mod auto;
pub mod lba;
pub mod lifetime;
pub mod map;
pub mod named;
pub mod oracle;
pub mod sepbit;

pub use auto::AutoStreams;
pub use lba::{LbaPolicySpec, AUTO_RANGES_DEFAULT};
pub use lifetime::{ClassLifetime, LifetimeReport, LifetimeTracker};
pub use map::{ClassStreams, Routed, StreamMap, StreamMapError};
pub use named::{DataType, NamedPolicy};
pub use oracle::{DeathRecorder, OracleStreams};
pub use sepbit::SepBit;

use std::cell::RefCell;
use std::rc::Rc;

/// What a page write is, as far as stream placement may know besides its address: the DB file
/// it belongs to (a shared device's partition; 0 for a store alone on its device) and its data
/// type.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct WriteClass {
    pub file: u32,
    pub data_type: DataType,
}

impl WriteClass {
    /// Files a class key can name (`key` is a `u32`).
    pub const FILES_MAX: u32 = u32::MAX / DataType::ALL.len() as u32;

    pub fn new(file: u32, data_type: DataType) -> WriteClass {
        WriteClass { file, data_type }
    }

    /// This class in DB file `file` (a partition stamps its index on the writes through it).
    pub fn in_file(self, file: u32) -> WriteClass {
        WriteClass { file, ..self }
    }

    /// A dense numeric key, `file * 4 + type index` (the class ids of [`AutoStreams`]).
    pub fn key(self) -> u32 {
        assert!(
            self.file <= Self::FILES_MAX,
            "DB file {} has no class key",
            self.file
        );
        self.file * DataType::ALL.len() as u32 + self.data_type.index() as u32
    }

    /// The class of key `key` (inverse of [`WriteClass::key`]).
    pub fn from_key(key: u32) -> WriteClass {
        let n = DataType::ALL.len() as u32;
        WriteClass::new(key / n, DataType::ALL[(key % n) as usize])
    }
}

/// Chooses the device stream of each page write. Policies are types behind this trait; the
/// mechanism calls it once per page in write order (learning policies see every page).
pub trait StreamAssignment {
    /// The stream of a page write at logical page `lpn` of class `class` (`None`: the writer
    /// gave no class).
    fn stream(&mut self, lpn: u64, class: Option<WriteClass>) -> u16;

    /// The stream of a write of `pages` pages from `lpn`, all of one class: its first page's
    /// (every page is still seen, in order).
    fn stream_of_run(&mut self, lpn: u64, pages: u32, class: Option<WriteClass>) -> u16 {
        let first = self.stream(lpn, class);
        for p in lpn + 1..lpn + pages as u64 {
            self.stream(p, class);
        }
        first
    }

    /// The current `(class key, stream)` table where the policy learns one (`auto`), in
    /// ascending key order; `None` for a fixed policy.
    fn mapping(&self) -> Option<Vec<(u32, u16)>> {
        None
    }
}

/// A policy the caller keeps a handle to (to read what it measured after the run).
impl<A: StreamAssignment> StreamAssignment for Rc<RefCell<A>> {
    fn stream(&mut self, lpn: u64, class: Option<WriteClass>) -> u16 {
        self.borrow_mut().stream(lpn, class)
    }
    fn stream_of_run(&mut self, lpn: u64, pages: u32, class: Option<WriteClass>) -> u16 {
        self.borrow_mut().stream_of_run(lpn, pages, class)
    }
    fn mapping(&self) -> Option<Vec<(u32, u16)>> {
        self.borrow().mapping()
    }
}

#[cfg(test)]
mod tests;
