//! # engine — flashlab's storage engine
//!
//! Model: everything is stored in fixed-size pages on a [`blockdev::BlockDevice`]. Each page
//! carries a header ([`page`]: kind, id, version/LSN, crc32c) so a corrupt or torn page is
//! detected and reported, never returned as data. Every structure reaches the device through a
//! [`Pager`] ([`pager`]): timed I/O, the one page cache (pins, batched misses, a replacement
//! policy as a type), contiguous runs and double-buffered meta slots. On top: B+-trees over one
//! node format — `in_place` (nodes rewritten at fixed
//! addresses), `as_btree` (append-only, NodeID -> address mapping table, write buffer, segment
//! compaction) and `bftl` (index units + node translation table) — all behind
//! [`tree::OrderedIndex`], and a heap file with index range scans (`heap`, `scan`).

pub mod btree;
pub mod error;
pub mod heap;
pub mod kv;
pub mod page;
pub mod pager;
pub mod scan;
pub mod tree;

pub use error::{Context, Corruption, EngineError, Fault, Structure};
pub use pager::{MetaSlots, Pager, PagerStats};
pub use tree::OrderedIndex;
