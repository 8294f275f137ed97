//! The key-value store's groundwork: an append-only store in the spirit of ForestDB (P5).
//!
//! Model: one file is a log of pages of four data types ([`DataType`]): data pages holding
//! documents (key, value or tombstone, sequence number), index pages holding the nodes of a
//! copy-on-write B+-tree over the keys, one DB header per commit (index root, sequence
//! numbers, stats) and two superblock slots at fixed pages, rewritten alternately, pointing at
//! the newest header. [`mod@format`] holds the codecs (pure, no I/O; docs/kv-format.md draws the
//! layout); every decoder reports damage as a [`crate::Corruption`] and never panics.
//! [`Store`] is the store itself, on the engine's pager. Every write carries its class (data
//! type) and the stream of the store's [`NamedPolicy`]; stream assignment for stores sharing
//! one device lives in `policy::streams`.

mod alloc;
pub mod format;
mod store;

pub use format::NodeLayout;
pub use policy::streams::{DataType, NamedPolicy};
pub use store::{
    Choice, CompactionMode, CompactionPolicy, Damage, Options, PageUse, RetiredHeaders, Scan,
    Space, StaleEstimate, StalePages, StaleShare, Store, StoreStat, WriteBatch, WritePath,
    WAL_FLUSH_DOCS_DEFAULT,
};
