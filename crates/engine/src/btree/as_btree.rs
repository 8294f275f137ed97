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
//! Durability: `commit()` writes the buffer, flushes, writes the next superblock (alternating
//! pages 0/1: commit sequence, root, next NodeID, live segments in order, tail position) and
//! flushes. Every node page carries its write sequence as its version. Opening rebuilds the
//! mapping table by scanning the live segments in order, later copies (higher versions)
//! winning, copies newer than the committed sequence ignored — so a crash at any I/O recovers
//! exactly the last committed tree (or a later consistent one: compaction commits too).
//! Torn or blank pages fail their checksum and are skipped.

use super::node::Node;
use super::{BTreeConfig, NodeCache, NodeStore};
use crate::error::EngineError;
use crate::page::{self, Header, PageKind, HEADER_BYTES};
use crate::tree::{IndexStats, OrderedIndex};
use blockdev::{BlockDevice, WriteHint};
use std::collections::{BTreeMap, VecDeque};
use std::rc::Rc;

const NO_LA: u64 = u64::MAX;

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

pub struct AsBTree {
    dev: Box<dyn BlockDevice>,
    cfg: AsConfig,
    seg_pages: u64,
    window: usize,
    map: Vec<u64>,
    buffer: BTreeMap<u64, Rc<Node>>,
    cache: NodeCache,
    root: u64,
    next_id: u64,
    /// Last node write sequence issued / committed.
    seq: u64,
    committed: u64,
    sb_epoch: u64,
    segs: VecDeque<u64>,
    free_segs: Vec<u64>,
    tail_off: u64,
    page_buf: Vec<u8>,
    run_buf: Vec<u8>,
    stats: IndexStats,
}

impl AsBTree {
    pub fn create(dev: Box<dyn BlockDevice>, cfg: AsConfig) -> Result<AsBTree, EngineError> {
        let mut t = AsBTree::with(dev, cfg)?;
        let first = t.free_segs.pop().expect("at least two segments");
        t.segs.push_back(first);
        t.next_id = 1;
        t.store(Rc::new(Node::empty_leaf(0)))?;
        t.commit()?;
        Ok(t)
    }

    /// Open an existing tree, rebuilding the mapping table from its segments.
    pub fn open(dev: Box<dyn BlockDevice>, cfg: AsConfig) -> Result<AsBTree, EngineError> {
        let mut t = AsBTree::with(dev, cfg)?;
        let sb = t.newest_superblock()?;
        t.recover(sb)?;
        Ok(t)
    }

    fn with(dev: Box<dyn BlockDevice>, cfg: AsConfig) -> Result<AsBTree, EngineError> {
        let pb = dev.page_bytes();
        cfg.base.validate(pb)?;
        let seg_pages = cfg.segment_bytes / pb as u64;
        let nseg = dev.capacity_pages().saturating_sub(2) / seg_pages.max(1);
        let bad = |field: &'static str, value: String, reason: String| EngineError::Config {
            field,
            value,
            reason,
        };
        if seg_pages < 2 * cfg.write_buffer_nodes.max(1) as u64 || nseg < 3 {
            return Err(bad("segment_bytes", cfg.segment_bytes.to_string(), format!("need segments of at least 2 x write_buffer_nodes pages and at least 3 of them on the device ({} pages)", dev.capacity_pages())));
        }
        if cfg.write_buffer_nodes == 0 {
            return Err(bad(
                "write_buffer_nodes",
                "0".into(),
                "must be at least 1".into(),
            ));
        }
        let window = if cfg.max_segments == 0 {
            nseg as usize
        } else {
            cfg.max_segments.min(nseg as usize)
        };
        if window < 3 {
            return Err(bad(
                "max_segments",
                cfg.max_segments.to_string(),
                "the window needs at least 3 segments".into(),
            ));
        }
        Ok(AsBTree {
            dev,
            cfg,
            seg_pages,
            window,
            map: Vec::new(),
            buffer: BTreeMap::new(),
            cache: NodeCache::new(cfg.base.cache_nodes),
            root: 0,
            next_id: 0,
            seq: 0,
            committed: 0,
            sb_epoch: 0,
            segs: VecDeque::new(),
            free_segs: (0..nseg).rev().collect(),
            tail_off: 0,
            page_buf: vec![0; pb],
            run_buf: Vec::new(),
            stats: IndexStats::default(),
        })
    }

    pub fn into_device(self) -> Box<dyn BlockDevice> {
        self.dev
    }

    /// Live segments (each is one "file" of `segment_bytes`).
    pub fn segments(&self) -> usize {
        self.segs.len()
    }

    fn seg_start(&self, seg: u64) -> u64 {
        2 + seg * self.seg_pages
    }

    fn timed<T>(
        &mut self,
        write: bool,
        f: impl FnOnce(&mut dyn BlockDevice) -> Result<T, blockdev::DevError>,
    ) -> Result<T, EngineError> {
        let t0 = self.dev.now_ns();
        let r = f(self.dev.as_mut())?;
        let dt = self.dev.now_ns() - t0;
        if write {
            self.stats.write_ns += dt;
        } else {
            self.stats.read_ns += dt;
        }
        Ok(r)
    }

    /// Pages that can still be appended without compaction.
    fn room(&self) -> u64 {
        let usable_free = self.free_segs.len().min(self.window - self.segs.len());
        self.seg_pages - self.tail_off + usable_free as u64 * self.seg_pages
    }

    /// Write the whole buffer contiguously at the tail (segment by segment).
    fn write_buffer(&mut self) -> Result<(), EngineError> {
        let nodes: Vec<Rc<Node>> = std::mem::take(&mut self.buffer).into_values().collect();
        let pb = self.page_buf.len();
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
            // One reused staging buffer (a fresh one per flush costs page faults).
            let mut run = std::mem::take(&mut self.run_buf);
            run.resize(n * pb, 0);
            for (j, node) in nodes[i..i + n].iter().enumerate() {
                self.seq += 1;
                node.encode(&mut run[j * pb..(j + 1) * pb], self.seq);
                self.set_map(node.id, start + j as u64);
            }
            let r = self.timed(true, |d| d.write(start, &run[..n * pb], WriteHint::NONE));
            self.run_buf = run;
            r?;
            self.stats.node_writes += n as u64;
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
                let node = self.read_node(id)?;
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
        self.timed(true, |d| d.trim(lo, hi - lo))?;
        self.free_segs.push(victim);
        Ok(())
    }

    fn read_node(&mut self, id: u64) -> Result<Node, EngineError> {
        let la = self.map.get(id as usize).copied().unwrap_or(NO_LA);
        if la == NO_LA {
            return Err(EngineError::Corrupt {
                page: 0,
                reason: format!("node {id} is not in the mapping table"),
            });
        }
        let mut buf = std::mem::take(&mut self.page_buf);
        let r = self.timed(false, |d| d.read(la, &mut buf));
        self.page_buf = buf;
        r?;
        self.stats.node_reads += 1;
        let (node, _) = Node::decode(&self.page_buf, la)?;
        if node.id != id {
            return Err(EngineError::Corrupt {
                page: la,
                reason: format!("mapping table says node {id}, page holds node {}", node.id),
            });
        }
        Ok(node)
    }

    /// Flush data, write the next superblock, flush again.
    fn write_superblock(&mut self) -> Result<(), EngineError> {
        self.timed(true, |d| d.flush())?;
        self.sb_epoch += 1;
        let mut words = vec![
            self.seq,
            self.root,
            self.next_id,
            self.tail_off,
            self.segs.len() as u64,
        ];
        words.extend(self.segs.iter().copied());
        let pb = self.page_buf.len();
        if HEADER_BYTES + words.len() * 8 > pb {
            return Err(EngineError::Full {
                what: "superblock",
                reason: format!(
                    "{} segments do not fit one page; use bigger segments",
                    self.segs.len()
                ),
            });
        }
        let mut img = vec![0u8; pb];
        for (i, w) in words.iter().enumerate() {
            img[HEADER_BYTES + 8 * i..HEADER_BYTES + 8 * i + 8].copy_from_slice(&w.to_le_bytes());
        }
        page::seal(
            &mut img,
            &Header {
                kind: PageKind::Meta,
                flags: 1,
                id: 0,
                version: self.sb_epoch,
                len: (words.len() * 8) as u32,
            },
        );
        let slot = self.sb_epoch % 2;
        self.timed(true, |d| d.write(slot, &img, WriteHint::NONE))?;
        self.timed(true, |d| d.flush())?;
        self.committed = self.seq;
        Ok(())
    }

    fn read_superblock(&mut self, slot: u64) -> Option<(u64, Vec<u64>)> {
        let mut buf = vec![0u8; self.page_buf.len()];
        self.dev.read(slot, &mut buf).ok()?;
        let h = page::open(&buf, slot).ok()?;
        if h.kind != PageKind::Meta || h.flags != 1 || h.len % 8 != 0 {
            return None;
        }
        let p = page::payload(&buf, &h);
        let words: Vec<u64> = p
            .chunks_exact(8)
            .map(|c| u64::from_le_bytes(c.try_into().expect("8 bytes")))
            .collect();
        (words.len() >= 5 && words.len() == 5 + words[4] as usize).then_some((h.version, words))
    }

    fn newest_superblock(&mut self) -> Result<(u64, Vec<u64>), EngineError> {
        let sbs = [self.read_superblock(0), self.read_superblock(1)];
        sbs.into_iter()
            .flatten()
            .max_by_key(|s| s.0)
            .ok_or(EngineError::Corrupt {
                page: 0,
                reason:
                    "no valid superblock in pages 0 and 1: not an AS B-tree, or both were destroyed"
                        .into(),
            })
    }

    /// Rebuild state from a superblock: scan live segments in order, later copies winning.
    fn recover(&mut self, (epoch, w): (u64, Vec<u64>)) -> Result<(), EngineError> {
        (
            self.sb_epoch,
            self.seq,
            self.committed,
            self.root,
            self.next_id,
            self.tail_off,
        ) = (epoch, w[0], w[0], w[1], w[2], w[3]);
        self.segs = w[5..].iter().copied().collect();
        let nseg = self.free_segs.len() as u64;
        if self.segs.iter().any(|&s| s >= nseg) || self.tail_off > self.seg_pages {
            return Err(EngineError::Corrupt {
                page: 0,
                reason: "superblock names segments beyond the device".into(),
            });
        }
        self.free_segs.retain(|s| !self.segs.contains(s));
        let mut version = Vec::new();
        let mut buf = vec![0u8; self.page_buf.len()];
        for &seg in self.segs.clone().iter() {
            for p in self.seg_start(seg)..self.seg_start(seg) + self.seg_pages {
                self.dev.read(p, &mut buf)?;
                let Ok((node, v)) = Node::decode(&buf, p) else {
                    continue;
                };
                if v > self.committed || node.id >= self.next_id {
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
    fn load(&mut self, id: u64) -> Result<Rc<Node>, EngineError> {
        self.stats.buffer_lookups += 1;
        if let Some(n) = self.buffer.get(&id) {
            self.stats.buffer_hits += 1;
            return Ok(Rc::clone(n));
        }
        if let Some(n) = self.cache.get(id) {
            return Ok(n);
        }
        let node = Rc::new(self.read_node(id)?);
        self.cache.put(&node);
        Ok(node)
    }
    fn store(&mut self, node: Rc<Node>) -> Result<(), EngineError> {
        self.cache.put(&node);
        self.buffer.insert(node.id, node);
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
        self.cfg.base.keys_per_node
    }
}

impl AsBTree {
    fn after_op(&mut self) -> Result<(), EngineError> {
        if self.buffer.len() >= self.cfg.write_buffer_nodes {
            self.flush_buffer()?;
        }
        Ok(())
    }
}

impl OrderedIndex for AsBTree {
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
        self.flush_buffer()?;
        self.write_superblock()
    }
    fn stats(&self) -> IndexStats {
        IndexStats {
            cache_hits: self.cache.hits,
            cache_lookups: self.cache.lookups,
            file_bytes: self.segs.len() as u64 * self.cfg.segment_bytes,
            ..self.stats
        }
    }
    fn name(&self) -> &'static str {
        "as_btree"
    }
}
