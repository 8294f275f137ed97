//! B+-trees over the shared node format ([`node`]): the algorithms are written once against
//! `NodeStore`, and each tree supplies where nodes live:
//! - [`InPlaceBTree`]: node `i` at a fixed device page, rewritten in place;
//! - [`AsBTree`]: P1's append-only tree — nodes addressed by id through a RAM mapping table,
//!   written to the tail of a log through a write buffer, old segments compacted;
//! - [`Bftl`]: nodes kept as index units in sectors, a node translation table in RAM.
//!
//! Tree model: u64 keys and values; leaves hold up to `keys_per_node` (F) keys and link to
//! their right sibling; inner nodes hold up to F keys and F + 1 children, child `i` holding
//! keys in `[keys[i-1], keys[i])`. Inserts split full nodes bottom-up (a new root when the
//! root splits). Deletes are lazy: the key leaves its leaf, nodes are never merged (P1 measures
//! insert-heavy workloads; an underfull node costs space, never correctness).

pub mod as_btree;
pub mod bftl;
pub mod in_place;
pub mod node;

pub use as_btree::{AsBTree, AsConfig};
pub use bftl::{Bftl, BftlConfig, CommitDescent, Compaction, Packing, UnitLayout};
pub use in_place::InPlaceBTree;
pub use node::{Node, NO_NODE};

use crate::error::{EngineError, Fault, Structure};
use crate::pager::{Pager, PagerStats};
use crate::tree::{IndexStats, OrderedIndex};
use blockdev::BlockDevice;
use std::rc::Rc;

/// Settings every tree shares.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct BTreeConfig {
    /// F: keys per node (P1 uses 64, 128, 256).
    pub keys_per_node: usize,
    /// Nodes the pager's cache keeps (its size in pages, one node per page; 0 = none; P1
    /// varies 0..80).
    pub cache_nodes: usize,
}

impl Default for BTreeConfig {
    fn default() -> Self {
        BTreeConfig {
            keys_per_node: 256,
            cache_nodes: 0,
        }
    }
}

impl BTreeConfig {
    pub fn validate(&self, page_bytes: usize) -> Result<(), EngineError> {
        if self.keys_per_node < 3 || Node::bytes_for(self.keys_per_node) > page_bytes {
            return Err(EngineError::Config {
                field: "keys_per_node",
                value: self.keys_per_node.to_string(),
                reason: format!(
                    "must be at least 3 and fit a {page_bytes}-byte page (at most {})",
                    (page_bytes.saturating_sub(Node::bytes_for(0))) / 16
                ),
            });
        }
        Ok(())
    }
}

/// What every tree keeps besides its nodes.
#[derive(Clone, Copy, Debug)]
pub(crate) struct TreeState {
    pub root: u64,
    pub next_id: u64,
    /// F: keys per node.
    pub fanout: usize,
}

impl TreeState {
    pub fn new(fanout: usize) -> TreeState {
        TreeState {
            root: 0,
            next_id: 1,
            fanout,
        }
    }
    pub fn alloc_id(&mut self) -> u64 {
        self.next_id += 1;
        self.next_id - 1
    }
}

/// Where a tree's nodes live, and what its scheme does at the ends of operations.
pub(crate) trait NodeStore {
    /// Scheme name: `in_place`, `as_btree`, `bftl`.
    const NAME: &'static str;
    /// A node, shared with the store's cache/buffer (clone it to modify: `Rc::unwrap_or_clone`).
    fn load(&mut self, id: u64) -> Result<Rc<Node>, EngineError>;
    /// Record a modified (or new) node.
    fn store(&mut self, node: Rc<Node>) -> Result<(), EngineError>;
    fn tree(&mut self) -> &mut TreeState;
    /// Called before every operation.
    fn begin_op(&mut self) {}
    /// Called after every successful insert or delete, with its key, before `end_write`
    /// (BFTL's commit may descend again for the records it buffered).
    fn note_record(&mut self, _key: u64) {}
    /// Called after every successful insert or delete (write-buffer flush, journal overflow).
    fn end_write(&mut self) -> Result<(), EngineError>;
    /// [`OrderedIndex::commit`].
    fn make_durable(&mut self) -> Result<(), EngineError>;
    /// [`OrderedIndex::stats`].
    fn index_stats(&self) -> IndexStats;
    /// The pager back (and through it the device).
    fn into_pager(self) -> Pager;
}

/// Decode the node at device page `page`, which must be node `id`.
pub(crate) fn decode_node(buf: &[u8], page: u64, id: u64) -> Result<Node, EngineError> {
    let (node, _) = Node::decode(buf, page)?;
    if node.id != id {
        return Err(EngineError::corrupt(
            Structure::BTreeNode,
            page,
            Fault::Id {
                what: "node id",
                expected: id,
                found: node.id,
            },
        ));
    }
    Ok(node)
}

/// The index counters a tree's pager keeps: device pages and time, cache hits and lookups.
pub(crate) fn pager_stats(p: PagerStats) -> IndexStats {
    IndexStats {
        node_reads: p.pages_read,
        node_writes: p.pages_written,
        read_ns: p.read_ns,
        write_ns: p.write_ns,
        cache_hits: p.hits,
        cache_lookups: p.hits + p.misses,
        ..IndexStats::default()
    }
}

/// Every tree is an [`OrderedIndex`] through the shared algorithms.
impl<S: NodeStore> OrderedIndex for S {
    fn insert(&mut self, key: u64, value: u64) -> Result<(), EngineError> {
        self.begin_op();
        insert(self, key, value)?;
        self.note_record(key);
        self.end_write()
    }
    fn delete(&mut self, key: u64) -> Result<bool, EngineError> {
        self.begin_op();
        let found = delete(self, key)?;
        self.note_record(key);
        self.end_write()?;
        Ok(found)
    }
    fn get(&mut self, key: u64) -> Result<Option<u64>, EngineError> {
        self.begin_op();
        get(self, key)
    }
    fn range(&mut self, lo: u64, hi: u64) -> Result<Vec<(u64, u64)>, EngineError> {
        self.begin_op();
        range(self, lo, hi)
    }
    fn commit(&mut self) -> Result<(), EngineError> {
        self.make_durable()
    }
    fn stats(&self) -> IndexStats {
        self.index_stats()
    }
    fn name(&self) -> &'static str {
        S::NAME
    }
    fn into_device(self: Box<Self>) -> Box<dyn BlockDevice> {
        self.into_pager().into_device()
    }
}

/// Descend from the root to the leaf for `key`; returns the path of (inner node, child index).
#[allow(clippy::type_complexity)]
fn descend<S: NodeStore>(
    s: &mut S,
    key: u64,
) -> Result<(Vec<(Rc<Node>, usize)>, Rc<Node>), EngineError> {
    let mut path = Vec::new();
    let root = s.tree().root;
    let mut node = s.load(root)?;
    while !node.leaf {
        let i = node.child_index(key);
        let child = node.vals[i];
        path.push((node, i));
        node = s.load(child)?;
    }
    Ok((path, node))
}

fn get<S: NodeStore>(s: &mut S, key: u64) -> Result<Option<u64>, EngineError> {
    let (_, leaf) = descend(s, key)?;
    Ok(leaf.keys.binary_search(&key).ok().map(|i| leaf.vals[i]))
}

fn insert<S: NodeStore>(s: &mut S, key: u64, value: u64) -> Result<(), EngineError> {
    let (mut path, leaf) = descend(s, key)?;
    let mut leaf = Rc::unwrap_or_clone(leaf);
    match leaf.keys.binary_search(&key) {
        Ok(i) => {
            leaf.vals[i] = value;
            return s.store(Rc::new(leaf));
        }
        Err(i) => {
            leaf.keys.insert(i, key);
            leaf.vals.insert(i, value);
        }
    }
    let f = s.tree().fanout;
    if leaf.keys.len() <= f {
        return s.store(Rc::new(leaf));
    }
    // Split the leaf; the right half gets a new id and takes over the sibling link.
    let half = leaf.keys.len() / 2;
    let mut right = Node {
        id: s.tree().alloc_id(),
        leaf: true,
        keys: leaf.keys.split_off(half),
        vals: leaf.vals.split_off(half),
        next: leaf.next,
    };
    leaf.next = right.id;
    let (mut sep, mut right_id) = (right.keys[0], right.id);
    s.store(Rc::new(leaf))?;
    s.store(Rc::new(std::mem::replace(&mut right, Node::empty_leaf(0))))?;
    while let Some((parent, i)) = path.pop() {
        let mut parent = Rc::unwrap_or_clone(parent);
        parent.keys.insert(i, sep);
        parent.vals.insert(i + 1, right_id);
        if parent.keys.len() <= f {
            return s.store(Rc::new(parent));
        }
        let mid = parent.keys.len() / 2;
        let up = parent.keys[mid];
        let r = Node {
            id: s.tree().alloc_id(),
            leaf: false,
            keys: parent.keys.split_off(mid + 1),
            vals: parent.vals.split_off(mid + 1),
            next: NO_NODE,
        };
        parent.keys.truncate(mid);
        (sep, right_id) = (up, r.id);
        s.store(Rc::new(parent))?;
        s.store(Rc::new(r))?;
    }
    let t = s.tree();
    let root = Node {
        id: t.alloc_id(),
        leaf: false,
        keys: vec![sep],
        vals: vec![t.root, right_id],
        next: NO_NODE,
    };
    t.root = root.id;
    s.store(Rc::new(root))
}

fn delete<S: NodeStore>(s: &mut S, key: u64) -> Result<bool, EngineError> {
    let (_, leaf) = descend(s, key)?;
    match leaf.keys.binary_search(&key) {
        Ok(i) => {
            let mut leaf = Rc::unwrap_or_clone(leaf);
            leaf.keys.remove(i);
            leaf.vals.remove(i);
            s.store(Rc::new(leaf))?;
            Ok(true)
        }
        Err(_) => Ok(false),
    }
}

fn range<S: NodeStore>(s: &mut S, lo: u64, hi: u64) -> Result<Vec<(u64, u64)>, EngineError> {
    let mut out = Vec::new();
    if lo > hi {
        return Ok(out);
    }
    let (_, mut leaf) = descend(s, lo)?;
    loop {
        for (&k, &v) in leaf.keys.iter().zip(&leaf.vals) {
            if k > hi {
                return Ok(out);
            }
            if k >= lo {
                out.push((k, v));
            }
        }
        if leaf.next == NO_NODE {
            return Ok(out);
        }
        leaf = s.load(leaf.next)?;
    }
}
