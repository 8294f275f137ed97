//! # policy — policies as types: buffer replacement and stream placement
//!
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
//! [`LruPolicy`] and [`TwoQ`] are plain policies; [`BufferPolicy`] adds P3's flash extension
//! (`lru-ext`, `2q-ext`, `2q-flash`): it also says where a victim goes ([`Placement`]: out or
//! to which [`FlashLog`]) and where an admitted page came from ([`Source`]). [`BufferSim`] is the
//! trace-driven mechanism that counts page moves; [`StackDistances`] gives every LRU size's hit
//! ratio (and the whole `lru-ext` grid) in one pass.
//!
//! Stream assignment ([`streams`]) is the other policy family here: which device stream a page
//! write goes to, by its typed [`streams::WriteClass`] or its address, behind
//! [`streams::StreamAssignment`], with the lifetime tracking it learns from.
//!
//! Invariants (checked by `Lru::check` in tests): the list visits every live entry exactly once
//! in both directions, the index maps each key to its own slot, and free slots are unreachable.

mod buffer_policy;
mod buffer_sim;
mod flash_log;
mod lru;
mod policy;
mod stack_distance;
pub mod streams;
mod two_q;

pub use buffer_policy::BufferPolicy;
pub use buffer_policy::{LogId, Placement, PolicyConfig, PolicyError, PolicyKind, Source};
pub use buffer_sim::{Access, BufferSim, Counts, Eviction, Outcome};
pub use flash_log::{Appended, FlashLog, LogOrder};
pub use lru::Lru;
pub use policy::{LruPolicy, Replacement};
pub use stack_distance::{LruCurve, LruExtPoint, StackDistances};
pub use two_q::{Queue, TwoQ, TwoQConfig};
