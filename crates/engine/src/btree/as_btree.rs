//! P1's AS B-tree: an append-only B+-tree.
//!
//! Model: nodes are addressed by NodeID; a RAM mapping table gives each node's logical
//! address (device page). Modified nodes never overwrite their old copy: they go to a write
//! buffer of `write_buffer_nodes` (MS) nodes — a rewrite of a buffered node replaces it in the
//! buffer, reads look in the buffer first — and when it is full (checked between operations)
//! all buffered nodes are written at once, contiguously, at the tail of the log (P1's
//! sequential writer). The device past two superblock pages is cut into segment "files" of
//! `segment_bytes`, filled in order. Sliding-window compaction: when the log needs a segment
//! and the window of `max_segments` is full or free space runs low, the oldest segment's live
//! nodes (those the mapping table still points into it) are re-appended at the tail, the
//! state is committed, and only then is the old segment deleted (trimmed) and reused.
//!
//! Durability: `commit()` writes the buffer, flushes, writes the next superblock (the meta
//! slots, pages 0/1 — [`MetaSlots`]: commit sequence, root, next NodeID, tail position, live
//! segments in order) and flushes. Every node page carries its write sequence as its version. Opening rebuilds the
//! mapping table by scanning the live segments in order, later copies (higher versions)
//! winning, copies newer than the committed sequence ignored — so a crash at any I/O recovers
//! exactly the last committed tree (or a later consistent one: compaction commits too).
//! Torn or blank pages fail their checksum and are skipped. The pager caches nodes under their
//! NodeID (they move on every write), `cache_nodes` of them.

use super::node::Node;
use super::{decode_node, pager_stats, BTreeConfig, NodeStore, TreeState};
use crate::error::{EngineError, Fault, Structure};
use crate::pager::{MetaSlots, Pager, RunWriter};
use crate::tree::IndexStats;
use blockdev::BlockDevice;
use std::collections::{BTreeMap, VecDeque};
use std::rc::Rc;

const NO_LA: u64 = u64::MAX;

/// The meta slots' tag (page flags) of an AS B-tree superblock.
const SUPERBLOCK_TAG: u8 = 1;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct AsConfig {
    pub base: BTreeConfig,
    /// MS: nodes the write buffer holds before it is written out (P1: 1, 8, 16, 32).
    pub write_buffer_nodes: usize,
    /// Size of one segment file (P1: 128 MB).
    pub segment_bytes: u64,
    /// Most live segments (the sliding window); 0 = as many as the device holds.
    pub max_segments: usize,
}

impl Default for AsConfig {
    fn default() -> Self {
        AsConfig {
            base: BTreeConfig::default(),
            write_buffer_nodes: 32,
            segment_bytes: 128 << 20,
            max_segments: 0,
        }
    }
}

impl AsConfig {
    /// Check against a device of `pages` pages of `page_bytes`; returns the segments it holds.
    fn validate(&self, page_bytes: usize, pages: u64) -> Result<u64, EngineError> {
        self.base.validate(page_bytes)?;
        let seg_pages = self.segment_bytes / page_bytes as u64;
        let nseg = pages.saturating_sub(MetaSlots::PAGES) / seg_pages.max(1);
        let bad = |field: &'static str, value: String, reason: String| EngineError::Config {
            field,
            value,
            reason,
        };
        if seg_pages < 2 * self.write_buffer_nodes.max(1) as u64 || nseg < 3 {
            return Err(bad("segment_bytes", self.segment_bytes.to_string(), format!("need segments of at least 2 x write_buffer_nodes pages and at least 3 of them on the device ({pages} pages)")));
        }
        if self.write_buffer_nodes == 0 {
            return Err(bad(
                "write_buffer_nodes",
                "0".into(),
                "must be at least 1".into(),
            ));
        }
        if self.max_segments != 0 && self.max_segments.min(nseg as usize) < 3 {
            return Err(bad(
                "max_segments",
                self.max_segments.to_string(),
                "the window needs at least 3 segments".into(),
            ));
        }
        Ok(nseg)
    }
}

pub struct AsBTree {
    pager: Pager,
    cfg: AsConfig,
    seg_pages: u64,
    window: usize,
    map: Vec<u64>,
    buffer: BTreeMap<u64, Rc<Node>>,
    tree: TreeState,
    /// Last node write sequence issued / committed.
    seq: u64,
    committed: u64,
    superblock: MetaSlots,
    sb_epoch: u64,
    segs: VecDeque<u64>,
    free_segs: Vec<u64>,
    tail_off: u64,
    run: RunWriter,
    node_writes: u64,
    buffer_hits: u64,
    buffer_lookups: u64,
}

impl AsBTree {
    pub fn create(dev: Box<dyn BlockDevice>, cfg: AsConfig) -> Result<AsBTree, EngineError> {
        let mut t = AsBTree::with(dev, cfg)?;
        let first = t.free_segs.pop().expect("at least three segments");
        t.segs.push_back(first);
        t.store(Rc::new(Node::empty_leaf(0)))?;
        t.make_durable()?;
        Ok(t)
    }

    /// Open an existing tree, rebuilding the mapping table from its segments.
    pub fn open(dev: Box<dyn BlockDevice>, cfg: AsConfig) -> Result<AsBTree, EngineError> {
        let mut t = AsBTree::with(dev, cfg)?;
        let sb = t.superblock.newest(&mut t.pager, |w| {
            (w.len() >= 5 && w.len() == 5 + w[4] as usize).then(|| w.to_vec())
        })?;
        t.recover(sb)?;
        Ok(t)
    }

    fn with(dev: Box<dyn BlockDevice>, cfg: AsConfig) -> Result<AsBTree, EngineError> {
        let pb = dev.page_bytes();
        let nseg = cfg.validate(pb, dev.capacity_pages())?;
        let window = match cfg.max_segments {
            0 => nseg as usize,
            m => m.min(nseg as usize),
        };
        Ok(AsBTree {
            pager: Pager::new(dev, cfg.base.cache_nodes),
            cfg,
            seg_pages: cfg.segment_bytes / pb as u64,
            window,
            map: Vec::new(),
            buffer: BTreeMap::new(),
            tree: TreeState::new(cfg.base.keys_per_node),
            seq: 0,
            committed: 0,
            superblock: MetaSlots::new(0, SUPERBLOCK_TAG, "AS B-tree superblock"),
            sb_epoch: 0,
            segs: VecDeque::new(),
            free_segs: (0..nseg).rev().collect(),
            tail_off: 0,
            run: RunWriter::new(pb, usize::MAX),
            node_writes: 0,
            buffer_hits: 0,
            buffer_lookups: 0,
        })
    }

    fn seg_start(&self, seg: u64) -> u64 {
        MetaSlots::PAGES + seg * self.seg_pages
    }

    /// Pages that can still be appended without compaction.
    fn room(&self) -> u64 {
        let usable_free = self.free_segs.len().min(self.window - self.segs.len());
        self.seg_pages - self.tail_off + usable_free as u64 * self.seg_pages
    }

    /// Write the whole buffer contiguously at the tail (one run per segment it touches).
    fn write_buffer(&mut self) -> Result<(), EngineError> {
        let nodes: Vec<Rc<Node>> = std::mem::take(&mut self.buffer).into_values().collect();
        let mut i = 0;
        while i < nodes.len() {
            if self.tail_off == self.seg_pages {
                let seg = self
                    .free_segs
                    .pop()
                    .expect("room() promised a free segment");
                self.segs.push_back(seg);
                self.tail_off = 0;
            }
            let n = ((self.seg_pages - self.tail_off) as usize).min(nodes.len() - i);
            let start = self.seg_start(*self.segs.back().expect("a tail segment")) + self.tail_off;
            self.run.start_at(start);
            for node in &nodes[i..i + n] {
                self.seq += 1;
                let la = self.run.next_page();
                node.encode(self.run.page_mut(&mut self.pager)?, self.seq);
                self.set_map(node.id, la);
            }
            self.run.write_out(&mut self.pager)?;
            self.node_writes += n as u64;
            self.tail_off += n as u64;
            i += n;
        }
        Ok(())
    }

    fn set_map(&mut self, id: u64, la: u64) {
        if self.map.len() <= id as usize {
            self.map.resize(id as usize + 1, NO_LA);
        }
        self.map[id as usize] = la;
    }

    /// Node `id`'s logical address (device page).
    fn la(&self, id: u64) -> Result<u64, EngineError> {
        match self.map.get(id as usize).copied().unwrap_or(NO_LA) {
            NO_LA => Err(EngineError::corrupt(
                Structure::MappingTable,
                MetaSlots::PAGES,
                Fault::Unmapped { node: id },
            )),
            la => Ok(la),
        }
    }

    /// Write the buffer, compacting first while space is short. Called between operations.
    fn flush_buffer(&mut self) -> Result<(), EngineError> {
        let mut rounds = 0;
        while self.room() < (self.buffer.len() as u64 + self.seg_pages) {
            if rounds > self.window {
                return Err(EngineError::Full { what: "AS B-tree log", reason: "compaction cannot free a segment: the live nodes fill the window; use a bigger device or window".into() });
            }
            self.compact_oldest()?;
            rounds += 1;
        }
        self.write_buffer()
    }

    /// Re-append the oldest segment's live nodes, commit, then delete (trim) the segment.
    fn compact_oldest(&mut self) -> Result<(), EngineError> {
        let victim = *self.segs.front().expect("segments");
        let (lo, hi) = (
            self.seg_start(victim),
            self.seg_start(victim) + self.seg_pages,
        );
        let live: Vec<u64> = (0..self.map.len() as u64)
            .filter(|&id| (lo..hi).contains(&self.map[id as usize]))
            .collect();
        for id in live {
            if !self.buffer.contains_key(&id) {
                let la = self.la(id)?;
                let node = decode_node(self.pager.read_uncached(la)?, la, id)?;
                self.buffer.insert(id, Rc::new(node));
            }
        }
        if self.room() < self.buffer.len() as u64 {
            return Err(EngineError::Full {
                what: "AS B-tree log",
                reason: format!(
                    "no room to re-append the oldest segment's live nodes ({} nodes to write, {} pages free in the window of {} segments); use a bigger device or window",
                    self.buffer.len(),
                    self.room(),
                    self.window
                ),
            });
        }
        self.write_buffer()?;
        self.segs.pop_front();
        self.write_superblock()?;
        self.pager.trim(lo, hi - lo)?;
        self.free_segs.push(victim);
        Ok(())
    }

    /// Flush data, write the next superblock, flush again.
    fn write_superblock(&mut self) -> Result<(), EngineError> {
        self.sb_epoch += 1;
        let mut words = vec![
            self.seq,
            self.tree.root,
            self.tree.next_id,
            self.tail_off,
            self.segs.len() as u64,
        ];
        words.extend(self.segs.iter().copied());
        let w = words.len();
        self.superblock
            .publish(&mut self.pager, self.sb_epoch, &words)
            .map_err(|e| match e {
                EngineError::Full { .. } => EngineError::Full {
                    what: "superblock",
                    reason: format!(
                        "{} segments ({w} words) do not fit one page; use bigger segments",
                        self.segs.len()
                    ),
                },
                e => e,
            })?;
        self.committed = self.seq;
        Ok(())
    }

    /// Rebuild state from a superblock: scan live segments in order, later copies winning.
    fn recover(&mut self, (epoch, w): (u64, Vec<u64>)) -> Result<(), EngineError> {
        (self.sb_epoch, self.seq, self.committed) = (epoch, w[0], w[0]);
        (self.tree.root, self.tree.next_id, self.tail_off) = (w[1], w[2], w[3]);
        self.segs = w[5..].iter().copied().collect();
        let nseg = self.free_segs.len() as u64;
        let slot = self.superblock.slot(epoch);
        if let Some(&s) = self.segs.iter().find(|&&s| s >= nseg) {
            return Err(EngineError::corrupt(
                Structure::MappingTable,
                slot,
                Fault::OutOfRange {
                    what: "superblock segment number",
                    limit: nseg - 1,
                    found: s,
                },
            ));
        }
        if self.tail_off > self.seg_pages {
            return Err(EngineError::corrupt(
                Structure::MappingTable,
                slot,
                Fault::OutOfRange {
                    what: "superblock tail offset (pages)",
                    limit: self.seg_pages,
                    found: self.tail_off,
                },
            ));
        }
        self.free_segs.retain(|s| !self.segs.contains(s));
        let mut version = Vec::new();
        for &seg in self.segs.clone().iter() {
            for p in self.seg_start(seg)..self.seg_start(seg) + self.seg_pages {
                let Ok((node, v)) = Node::decode(self.pager.read_uncached(p)?, p) else {
                    continue;
                };
                if v > self.committed || node.id >= self.tree.next_id {
                    continue;
                }
                if version.len() <= node.id as usize {
                    version.resize(node.id as usize + 1, 0);
                }
                if v > version[node.id as usize] {
                    version[node.id as usize] = v;
                    self.set_map(node.id, p);
                }
            }
        }
        Ok(())
    }
}

impl NodeStore for AsBTree {
    const NAME: &'static str = "as_btree";

    fn load(&mut self, id: u64) -> Result<Rc<Node>, EngineError> {
        self.buffer_lookups += 1;
        if let Some(n) = self.buffer.get(&id) {
            self.buffer_hits += 1;
            return Ok(Rc::clone(n));
        }
        // A node out of the buffer has been written, so it is mapped (cached or not).
        let la = self.la(id)?;
        self.pager.load(id, la, |b| decode_node(b, la, id))
    }
    fn store(&mut self, node: Rc<Node>) -> Result<(), EngineError> {
        self.pager.keep(node.id, Rc::clone(&node))?;
        self.buffer.insert(node.id, node);
        Ok(())
    }
    fn tree(&mut self) -> &mut TreeState {
        &mut self.tree
    }
    fn end_write(&mut self) -> Result<(), EngineError> {
        if self.buffer.len() >= self.cfg.write_buffer_nodes {
            self.flush_buffer()?;
        }
        Ok(())
    }

    fn make_durable(&mut self) -> Result<(), EngineError> {
        self.flush_buffer()?;
        self.write_superblock()
    }
    fn index_stats(&self) -> IndexStats {
        IndexStats {
            node_writes: self.node_writes,
            buffer_hits: self.buffer_hits,
            buffer_lookups: self.buffer_lookups,
            file_bytes: self.segs.len() as u64 * self.cfg.segment_bytes,
            ..pager_stats(self.pager.stats())
        }
    }
    fn into_pager(self) -> Pager {
        self.pager
    }
}
