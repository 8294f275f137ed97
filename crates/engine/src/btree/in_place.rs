//! The classic B+-tree: node `i` lives at a fixed device page and is rewritten in place.
//!
//! Layout: pages 0 and 1 hold the meta slots ([`MetaSlots`]: epoch, root, next node id,
//! journal length); then `journal_pages` pages of redo journal; then node `i` at page
//! `2 + journal_pages + i`. The pager caches nodes under their page (`cache_nodes` pages).
//!
//! Durability, two modes:
//! - journaled (default, crash-safe): modified nodes stay in RAM until `commit()`, which
//!   (1) writes their images to the journal and flushes, (2) writes the meta page of the next
//!   epoch (naming the journal length) and flushes, (3) writes the nodes in place and flushes.
//!   Opening replays the journal of the newest valid meta page (images of that epoch only), so
//!   a crash at any I/O leaves the last committed tree. More dirty nodes than the journal holds
//!   trigger a commit by themselves.
//! - write-through (`journal_pages = 0`, P1's in-place B-tree): every modified node is written
//!   in place at once; `commit()` writes the meta page and flushes. Not crash-atomic: a torn
//!   node is detected by its checksum at the next read, not repaired.

use super::node::Node;
use super::{decode_node, pager_stats, BTreeConfig, NodeStore, TreeState};
use crate::error::EngineError;
use crate::pager::{MetaSlots, Pager};
use crate::tree::IndexStats;
use blockdev::BlockDevice;
use std::collections::BTreeMap;
use std::rc::Rc;

/// Default redo-journal size in pages for the crash-safe mode.
pub const DEFAULT_JOURNAL_PAGES: u64 = 1024;

/// The meta slots' tag (page flags) of an in-place tree.
const META_TAG: u8 = 0;

pub struct InPlaceBTree {
    pager: Pager,
    meta: MetaSlots,
    journal_pages: u64,
    epoch: u64,
    tree: TreeState,
    dirty: BTreeMap<u64, Rc<Node>>,
}

#[derive(Clone, Copy, Debug)]
struct Meta {
    root: u64,
    next_id: u64,
    journal_len: u64,
}

impl InPlaceBTree {
    /// A new, empty crash-safe tree (journaled) over `dev`.
    pub fn create(
        dev: Box<dyn BlockDevice>,
        cfg: BTreeConfig,
    ) -> Result<InPlaceBTree, EngineError> {
        InPlaceBTree::create_with_journal(dev, cfg, DEFAULT_JOURNAL_PAGES)
    }

    /// A new tree; `journal_pages = 0` selects write-through (P1's in-place B-tree).
    pub fn create_with_journal(
        dev: Box<dyn BlockDevice>,
        cfg: BTreeConfig,
        journal_pages: u64,
    ) -> Result<InPlaceBTree, EngineError> {
        let mut t = InPlaceBTree::with(dev, cfg, journal_pages)?;
        t.store(Rc::new(Node::empty_leaf(0)))?;
        t.make_durable()?;
        Ok(t)
    }

    /// Open a tree created with the same `journal_pages`, replaying its journal.
    pub fn open(
        dev: Box<dyn BlockDevice>,
        cfg: BTreeConfig,
        journal_pages: u64,
    ) -> Result<InPlaceBTree, EngineError> {
        let mut t = InPlaceBTree::with(dev, cfg, journal_pages)?;
        let (epoch, meta) = t.meta.newest(&mut t.pager, |w| {
            (w.len() == 3).then_some(Meta {
                root: w[0],
                next_id: w[1],
                journal_len: w[2],
            })
        })?;
        (t.epoch, t.tree.root, t.tree.next_id) = (epoch, meta.root, meta.next_id);
        t.replay(meta)?;
        Ok(t)
    }

    fn with(
        dev: Box<dyn BlockDevice>,
        cfg: BTreeConfig,
        journal_pages: u64,
    ) -> Result<InPlaceBTree, EngineError> {
        cfg.validate(dev.page_bytes())?;
        Ok(InPlaceBTree {
            pager: Pager::new(dev, cfg.cache_nodes),
            meta: MetaSlots::new(0, META_TAG, "in-place B-tree meta page"),
            journal_pages,
            epoch: 0,
            tree: TreeState::new(cfg.keys_per_node),
            dirty: BTreeMap::new(),
        })
    }

    fn node_page(&self, id: u64) -> Result<u64, EngineError> {
        let p = MetaSlots::PAGES + self.journal_pages + id;
        if p >= self.pager.capacity_pages() {
            return Err(EngineError::Full {
                what: "device",
                reason: format!(
                    "node {id} needs page {p}; the device has {}",
                    self.pager.capacity_pages()
                ),
            });
        }
        Ok(p)
    }

    fn write_node(&mut self, page: u64, node: &Node, version: u64) -> Result<(), EngineError> {
        self.pager.write_with(page, |img| node.encode(img, version))
    }

    /// Publish the meta page of `epoch` (flush, write the slot, flush).
    fn publish(&mut self, epoch: u64, journal_len: u64) -> Result<(), EngineError> {
        let words = [self.tree.root, self.tree.next_id, journal_len];
        self.meta.publish(&mut self.pager, epoch, &words)?;
        self.epoch = epoch;
        Ok(())
    }

    /// Redo the journal of the open epoch (images of other epochs belong to a later, unfinished
    /// commit whose predecessor had completed its in-place writes).
    fn replay(&mut self, meta: Meta) -> Result<(), EngineError> {
        for j in 0..meta.journal_len.min(self.journal_pages) {
            let page = MetaSlots::PAGES + j;
            let Ok((node, version)) = Node::decode(self.pager.read_uncached(page)?, page) else {
                continue;
            };
            if version == self.epoch {
                let page = self.node_page(node.id)?;
                self.write_node(page, &node, version)?;
            }
        }
        self.pager.flush()
    }

    fn commit_journaled(&mut self) -> Result<(), EngineError> {
        let nodes: Vec<Rc<Node>> = std::mem::take(&mut self.dirty).into_values().collect();
        let epoch = self.epoch + 1;
        for (j, n) in nodes.iter().enumerate() {
            self.write_node(MetaSlots::PAGES + j as u64, n, epoch)?;
        }
        self.publish(epoch, nodes.len() as u64)?;
        for n in &nodes {
            let page = self.node_page(n.id)?;
            self.write_node(page, n, epoch)?;
        }
        self.pager.flush()
    }
}

impl NodeStore for InPlaceBTree {
    const NAME: &'static str = "in_place";

    fn load(&mut self, id: u64) -> Result<Rc<Node>, EngineError> {
        if let Some(n) = self.dirty.get(&id) {
            return Ok(Rc::clone(n));
        }
        let page = self.node_page(id)?;
        self.pager.load(page, page, |b| decode_node(b, page, id))
    }

    fn store(&mut self, node: Rc<Node>) -> Result<(), EngineError> {
        let page = self.node_page(node.id)?;
        self.pager.keep(page, Rc::clone(&node))?;
        if self.journal_pages == 0 {
            return self.write_node(page, &node, self.epoch + 1);
        }
        self.dirty.insert(node.id, node);
        Ok(())
    }

    fn tree(&mut self) -> &mut TreeState {
        &mut self.tree
    }

    /// Commit by itself when the dirty set would overflow the journal.
    fn end_write(&mut self) -> Result<(), EngineError> {
        if self.journal_pages > 0 && self.dirty.len() as u64 + 8 > self.journal_pages {
            self.commit_journaled()?;
        }
        Ok(())
    }

    fn make_durable(&mut self) -> Result<(), EngineError> {
        if self.journal_pages > 0 {
            return self.commit_journaled();
        }
        self.publish(self.epoch + 1, 0)
    }
    fn index_stats(&self) -> IndexStats {
        IndexStats {
            file_bytes: (MetaSlots::PAGES + self.journal_pages + self.tree.next_id)
                * self.pager.page_bytes() as u64,
            ..pager_stats(self.pager.stats())
        }
    }
    fn into_pager(self) -> Pager {
        self.pager
    }
}
