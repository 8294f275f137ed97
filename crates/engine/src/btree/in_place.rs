//! The classic B+-tree: node `i` lives at a fixed device page and is rewritten in place.
//!
//! Layout: pages 0 and 1 hold two alternating meta pages (epoch, root, next node id, journal
//! length); then `journal_pages` pages of redo journal; then node `i` at page
//! `2 + journal_pages + i`.
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
use super::{BTreeConfig, NodeCache, NodeStore};
use crate::error::EngineError;
use crate::page::{self, Header, PageKind, HEADER_BYTES};
use crate::tree::{IndexStats, OrderedIndex};
use blockdev::{BlockDevice, WriteHint};
use std::collections::BTreeMap;
use std::rc::Rc;

/// Default redo-journal size in pages for the crash-safe mode.
pub const DEFAULT_JOURNAL_PAGES: u64 = 1024;

pub struct InPlaceBTree {
    dev: Box<dyn BlockDevice>,
    cfg: BTreeConfig,
    journal_pages: u64,
    epoch: u64,
    root: u64,
    next_id: u64,
    dirty: BTreeMap<u64, Rc<Node>>,
    cache: NodeCache,
    buf: Vec<u8>,
    stats: IndexStats,
}

#[derive(Clone, Copy, Debug)]
struct Meta {
    epoch: u64,
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
        t.root = 0;
        t.next_id = 1;
        t.store(Rc::new(Node::empty_leaf(0)))?;
        t.commit()?;
        Ok(t)
    }

    /// Open a tree created with the same `journal_pages`, replaying its journal.
    pub fn open(
        dev: Box<dyn BlockDevice>,
        cfg: BTreeConfig,
        journal_pages: u64,
    ) -> Result<InPlaceBTree, EngineError> {
        let mut t = InPlaceBTree::with(dev, cfg, journal_pages)?;
        let meta = t.newest_meta()?;
        (t.epoch, t.root, t.next_id) = (meta.epoch, meta.root, meta.next_id);
        t.replay(meta)?;
        Ok(t)
    }

    fn with(
        dev: Box<dyn BlockDevice>,
        cfg: BTreeConfig,
        journal_pages: u64,
    ) -> Result<InPlaceBTree, EngineError> {
        cfg.validate(dev.page_bytes())?;
        let pb = dev.page_bytes();
        Ok(InPlaceBTree {
            dev,
            cfg,
            journal_pages,
            epoch: 0,
            root: 0,
            next_id: 0,
            dirty: BTreeMap::new(),
            cache: NodeCache::new(cfg.cache_nodes),
            buf: vec![0; pb],
            stats: IndexStats::default(),
        })
    }

    pub fn into_device(self) -> Box<dyn BlockDevice> {
        self.dev
    }

    fn node_page(&self, id: u64) -> Result<u64, EngineError> {
        let p = 2 + self.journal_pages + id;
        if p >= self.dev.capacity_pages() {
            return Err(EngineError::Full {
                what: "device",
                reason: format!(
                    "node {id} needs page {p}; the device has {}",
                    self.dev.capacity_pages()
                ),
            });
        }
        Ok(p)
    }

    fn timed_read(&mut self, page: u64) -> Result<(), EngineError> {
        let t0 = self.dev.now_ns();
        self.dev.read(page, &mut self.buf)?;
        self.stats.read_ns += self.dev.now_ns() - t0;
        self.stats.node_reads += 1;
        Ok(())
    }

    fn timed_write(&mut self, page: u64, bytes: &[u8]) -> Result<(), EngineError> {
        let t0 = self.dev.now_ns();
        self.dev.write(page, bytes, WriteHint::NONE)?;
        self.stats.write_ns += self.dev.now_ns() - t0;
        self.stats.node_writes += (bytes.len() / self.dev.page_bytes()) as u64;
        Ok(())
    }

    fn timed_flush(&mut self) -> Result<(), EngineError> {
        let t0 = self.dev.now_ns();
        self.dev.flush()?;
        self.stats.write_ns += self.dev.now_ns() - t0;
        Ok(())
    }

    fn write_node(&mut self, page: u64, node: &Node, version: u64) -> Result<(), EngineError> {
        let mut img = std::mem::take(&mut self.buf);
        node.encode(&mut img, version);
        let r = self.timed_write(page, &img);
        self.buf = img;
        r
    }

    fn write_meta(&mut self, m: Meta) -> Result<(), EngineError> {
        let mut img = vec![0u8; self.buf.len()];
        for (i, x) in [m.epoch, m.root, m.next_id, m.journal_len]
            .into_iter()
            .enumerate()
        {
            img[HEADER_BYTES + 8 * i..HEADER_BYTES + 8 * i + 8].copy_from_slice(&x.to_le_bytes());
        }
        page::seal(
            &mut img,
            &Header {
                kind: PageKind::Meta,
                flags: 0,
                id: 0,
                version: m.epoch,
                len: 32,
            },
        );
        self.timed_write(m.epoch % 2, &img)
    }

    fn read_meta(&mut self, slot: u64) -> Option<Meta> {
        self.timed_read(slot).ok()?;
        let h = page::open(&self.buf, slot).ok()?;
        let p = page::payload(&self.buf, &h);
        if h.kind != PageKind::Meta || p.len() != 32 {
            return None;
        }
        let w = |i: usize| u64::from_le_bytes(p[8 * i..8 * i + 8].try_into().expect("8 bytes"));
        Some(Meta {
            epoch: w(0),
            root: w(1),
            next_id: w(2),
            journal_len: w(3),
        })
    }

    fn newest_meta(&mut self) -> Result<Meta, EngineError> {
        let metas = [self.read_meta(0), self.read_meta(1)];
        metas
            .into_iter()
            .flatten()
            .max_by_key(|m| m.epoch)
            .ok_or(EngineError::Corrupt {
            page: 0,
            reason:
                "neither meta page (0, 1) is valid: not an in-place B-tree, or both were destroyed"
                    .into(),
        })
    }

    /// Redo the journal of `meta`'s epoch (images of other epochs belong to a later, unfinished
    /// commit whose predecessor had completed its in-place writes).
    fn replay(&mut self, meta: Meta) -> Result<(), EngineError> {
        for j in 0..meta.journal_len.min(self.journal_pages) {
            self.timed_read(2 + j)?;
            let Ok((node, version)) = Node::decode(&self.buf, 2 + j) else {
                continue;
            };
            if version == meta.epoch {
                let page = self.node_page(node.id)?;
                self.write_node(page, &node, version)?;
            }
        }
        self.timed_flush()
    }

    fn commit_journaled(&mut self) -> Result<(), EngineError> {
        let nodes: Vec<Rc<Node>> = std::mem::take(&mut self.dirty).into_values().collect();
        let epoch = self.epoch + 1;
        for (j, n) in nodes.iter().enumerate() {
            self.write_node(2 + j as u64, n, epoch)?;
        }
        self.timed_flush()?;
        self.write_meta(Meta {
            epoch,
            root: self.root,
            next_id: self.next_id,
            journal_len: nodes.len() as u64,
        })?;
        self.timed_flush()?;
        self.epoch = epoch;
        for n in &nodes {
            let page = self.node_page(n.id)?;
            self.write_node(page, n, epoch)?;
        }
        self.timed_flush()
    }
}

impl NodeStore for InPlaceBTree {
    fn load(&mut self, id: u64) -> Result<Rc<Node>, EngineError> {
        if let Some(n) = self.dirty.get(&id) {
            return Ok(Rc::clone(n));
        }
        if let Some(n) = self.cache.get(id) {
            return Ok(n);
        }
        let page = self.node_page(id)?;
        self.timed_read(page)?;
        let (node, _) = Node::decode(&self.buf, page)?;
        if node.id != id {
            return Err(EngineError::Corrupt {
                page,
                reason: format!("expected node {id}, found node {}", node.id),
            });
        }
        let node = Rc::new(node);
        self.cache.put(&node);
        Ok(node)
    }

    fn store(&mut self, node: Rc<Node>) -> Result<(), EngineError> {
        self.cache.put(&node);
        if self.journal_pages == 0 {
            let page = self.node_page(node.id)?;
            return self.write_node(page, &node, self.epoch + 1);
        }
        self.node_page(node.id)?;
        self.dirty.insert(node.id, node);
        Ok(())
    }

    fn alloc_id(&mut self) -> u64 {
        self.next_id += 1;
        self.next_id - 1
    }
    fn root(&self) -> u64 {
        self.root
    }
    fn set_root(&mut self, id: u64) {
        self.root = id;
    }
    fn fanout(&self) -> usize {
        self.cfg.keys_per_node
    }
}

impl InPlaceBTree {
    /// Commit by itself when the dirty set would overflow the journal.
    fn after_op(&mut self) -> Result<(), EngineError> {
        if self.journal_pages > 0 && self.dirty.len() as u64 + 8 > self.journal_pages {
            self.commit_journaled()?;
        }
        Ok(())
    }
}

impl OrderedIndex for InPlaceBTree {
    fn insert(&mut self, key: u64, value: u64) -> Result<(), EngineError> {
        super::insert(self, key, value)?;
        self.after_op()
    }
    fn delete(&mut self, key: u64) -> Result<bool, EngineError> {
        let found = super::delete(self, key)?;
        self.after_op()?;
        Ok(found)
    }
    fn get(&mut self, key: u64) -> Result<Option<u64>, EngineError> {
        super::get(self, key)
    }
    fn range(&mut self, lo: u64, hi: u64) -> Result<Vec<(u64, u64)>, EngineError> {
        super::range(self, lo, hi)
    }
    fn commit(&mut self) -> Result<(), EngineError> {
        if self.journal_pages > 0 {
            return self.commit_journaled();
        }
        self.epoch += 1;
        let m = Meta {
            epoch: self.epoch,
            root: self.root,
            next_id: self.next_id,
            journal_len: 0,
        };
        self.timed_flush()?;
        self.write_meta(m)?;
        self.timed_flush()
    }
    fn stats(&self) -> IndexStats {
        IndexStats {
            cache_hits: self.cache.hits,
            cache_lookups: self.cache.lookups,
            file_bytes: (2 + self.journal_pages + self.next_id) * self.buf.len() as u64,
            ..self.stats
        }
    }
    fn name(&self) -> &'static str {
        "in_place"
    }
}
