//! The interface every index in the engine offers (in-place B+-tree, AS B-tree, BFTL), so the
//! experiments and the model-based tests treat them alike. Keys and values are u64.

use crate::error::EngineError;
use blockdev::BlockDevice;

/// Counters an index keeps (for experiments); fields a scheme does not have stay zero.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct IndexStats {
    /// Node (or sector) reads that went to the device.
    pub node_reads: u64,
    /// Nodes rebuilt from the device for lookups (BFTL: `(node_reads - compaction_reads) /
    /// nodes_loaded` = sectors per node).
    pub nodes_loaded: u64,
    /// BFTL: sector reads made to compact a node (included in `node_reads`).
    pub compaction_reads: u64,
    /// BFTL: sector reads of the commits' descents (`CommitDescent`; included in
    /// `node_reads`, and as lookups in the sectors per node).
    pub commit_reads: u64,
    /// BFTL: nodes the commits' descents rebuilt from sectors (included in `nodes_loaded`).
    pub commit_loads: u64,
    /// Node (or sector) writes that went to the device.
    pub node_writes: u64,
    /// Device read/write time spent by the index, in the device clock's nanoseconds.
    pub read_ns: u64,
    pub write_ns: u64,
    /// Lookups served by a write buffer / node cache.
    pub buffer_hits: u64,
    pub buffer_lookups: u64,
    pub cache_hits: u64,
    pub cache_lookups: u64,
    /// Bytes the structure occupies on the device (files/segments/pages allocated).
    pub file_bytes: u64,
    /// BFTL: nodes rebuilt for lookups, by tree level (`[root, inner, leaf]`) and by the
    /// length of their sector list when read (`[0, 1, 2, 3, 4 or more]` sectors).
    pub loads_by_level_list_len: [[u64; LIST_LEN_BINS]; 3],
}

/// Bins of [`IndexStats::loads_by_level_list_len`]: lists of 0 to 3 sectors, and longer.
pub const LIST_LEN_BINS: usize = 5;

pub trait OrderedIndex {
    /// Insert or overwrite `key`.
    fn insert(&mut self, key: u64, value: u64) -> Result<(), EngineError>;
    /// Remove `key`; returns whether it was present.
    fn delete(&mut self, key: u64) -> Result<bool, EngineError>;
    fn get(&mut self, key: u64) -> Result<Option<u64>, EngineError>;
    /// Every (key, value) with `lo <= key <= hi`, in key order.
    fn range(&mut self, lo: u64, hi: u64) -> Result<Vec<(u64, u64)>, EngineError>;
    /// Make everything before this call durable (survives a crash).
    fn commit(&mut self) -> Result<(), EngineError>;
    fn stats(&self) -> IndexStats;
    /// Scheme name: `in_place`, `as_btree`, `bftl`.
    fn name(&self) -> &'static str;
    /// The device back (to reopen the index from it, or inspect it); nothing is written, so
    /// commit first to keep what was done since the last commit.
    fn into_device(self: Box<Self>) -> Box<dyn BlockDevice>;
}
