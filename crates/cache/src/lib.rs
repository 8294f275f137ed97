//! Replacement primitives shared by every cache in flashlab.
//!
//! Model: [`Lru`] is an ordered map from keys to values in recency order (least recent first),
//! stored as an intrusive doubly linked list inside a slab of entries plus a hash index, so that
//! every operation (`get`, `insert`, `remove`, `pop_lru`, `touch`) is O(1) and no entry is ever
//! allocated on its own. It has no capacity: the cache that owns it decides when to evict (a
//! buffer pool evicts only unpinned frames; the DFTL's CMT evicts at a fixed entry count). A FIFO
//! is an `Lru` whose owner never calls `get`/`touch` (use `peek`).
//!
//! Policies are types behind [`Replacement`]: the policy decides which resident key leaves, the
//! mechanism (a buffer pool, a trace-driven simulator) applies the decision and does the I/O.
//!
//! Invariants (checked by `Lru::check` in tests): the list visits every live entry exactly once
//! in both directions, the index maps each key to its own slot, and free slots are unreachable.

mod lru;
mod policy;

pub use lru::Lru;
pub use policy::{LruPolicy, Replacement};
