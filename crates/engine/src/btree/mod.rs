//! B+-trees over the shared node format ([`node`]): the algorithms are written once against
//! [`NodeStore`], and each tree supplies where nodes live:
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
pub use bftl::{Bftl, BftlConfig};
pub use in_place::InPlaceBTree;
pub use node::{Node, NO_NODE};

use crate::error::EngineError;
use std::rc::Rc;

/// Settings every tree shares.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct BTreeConfig {
    /// F: keys per node (P1 uses 64, 128, 256).
    pub keys_per_node: usize,
    /// Decoded nodes kept in an LRU cache (0 = none; P1 varies 0..80).
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

/// Where a tree's nodes live.
pub(crate) trait NodeStore {
    /// A node, shared with the store's cache/buffer (clone it to modify: `Rc::unwrap_or_clone`).
    fn load(&mut self, id: u64) -> Result<Rc<Node>, EngineError>;
    /// Record a modified (or new) node.
    fn store(&mut self, node: Rc<Node>) -> Result<(), EngineError>;
    fn alloc_id(&mut self) -> u64;
    fn root(&self) -> u64;
    fn set_root(&mut self, id: u64);
    fn fanout(&self) -> usize;
}

/// Descend from the root to the leaf for `key`; returns the path of (inner node, child index).
#[allow(clippy::type_complexity)]
fn descend<S: NodeStore>(
    s: &mut S,
    key: u64,
) -> Result<(Vec<(Rc<Node>, usize)>, Rc<Node>), EngineError> {
    let mut path = Vec::new();
    let mut node = s.load(s.root())?;
    while !node.leaf {
        let i = node.child_index(key);
        let child = node.vals[i];
        path.push((node, i));
        node = s.load(child)?;
    }
    Ok((path, node))
}

pub(crate) fn get<S: NodeStore>(s: &mut S, key: u64) -> Result<Option<u64>, EngineError> {
    let (_, leaf) = descend(s, key)?;
    Ok(leaf.keys.binary_search(&key).ok().map(|i| leaf.vals[i]))
}

pub(crate) fn insert<S: NodeStore>(s: &mut S, key: u64, value: u64) -> Result<(), EngineError> {
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
    let f = s.fanout();
    if leaf.keys.len() <= f {
        return s.store(Rc::new(leaf));
    }
    // Split the leaf; the right half gets a new id and takes over the sibling link.
    let half = leaf.keys.len() / 2;
    let mut right = Node {
        id: s.alloc_id(),
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
            id: s.alloc_id(),
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
    let root = Node {
        id: s.alloc_id(),
        leaf: false,
        keys: vec![sep],
        vals: vec![s.root(), right_id],
        next: NO_NODE,
    };
    s.set_root(root.id);
    s.store(Rc::new(root))
}

pub(crate) fn delete<S: NodeStore>(s: &mut S, key: u64) -> Result<bool, EngineError> {
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

pub(crate) fn range<S: NodeStore>(
    s: &mut S,
    lo: u64,
    hi: u64,
) -> Result<Vec<(u64, u64)>, EngineError> {
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

/// An LRU cache of decoded nodes (clean copies), `capacity` 0 = off.
#[derive(Debug, Default)]
pub(crate) struct NodeCache {
    capacity: usize,
    map: std::collections::HashMap<u64, (Rc<Node>, u64)>,
    order: std::collections::BTreeMap<u64, u64>,
    clock: u64,
    pub hits: u64,
    pub lookups: u64,
}

impl NodeCache {
    pub fn new(capacity: usize) -> NodeCache {
        NodeCache {
            capacity,
            ..Default::default()
        }
    }
    pub fn get(&mut self, id: u64) -> Option<Rc<Node>> {
        if self.capacity == 0 {
            return None;
        }
        self.lookups += 1;
        self.clock += 1;
        let stamp = self.clock;
        let (node, old) = self.map.get_mut(&id)?;
        self.order.remove(old);
        *old = stamp;
        self.order.insert(stamp, id);
        self.hits += 1;
        Some(Rc::clone(node))
    }
    pub fn put(&mut self, node: &Rc<Node>) {
        if self.capacity == 0 {
            return;
        }
        self.clock += 1;
        if let Some((_, old)) = self.map.insert(node.id, (Rc::clone(node), self.clock)) {
            self.order.remove(&old);
        }
        self.order.insert(self.clock, node.id);
        while self.map.len() > self.capacity {
            let (_, victim) = self.order.pop_first().expect("non-empty");
            self.map.remove(&victim);
        }
    }
}
