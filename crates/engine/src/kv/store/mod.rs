//! The key-value store: `Store` on the engine's [`Pager`] (docs/kv-format.md draws the format).
//!
//! Model: puts and deletes collect in an in-memory batch (read-your-writes: `get` and `scan`
//! see it). `commit` makes the batch durable: its documents are appended as data pages, the
//! copy-on-write B+-tree is rewritten along the changed paths (bottom-up), a DB header is
//! written, the device flushed, then the superblock slot `commit % 2` is written and flushed.
//! Every page carries the engine page header (kind, page number, commit as version, crc32c)
//! and every write its data type's [`blockdev::WriteHint`]. Space: [`super::alloc`] counts
//! the objects on each page; pages the durable commit no longer reaches are reused after the
//! next commit. Compaction (`compaction`) is incremental: once stale bytes pass
//! `Options::compact_threshold`, each commit carries one batch that re-puts the live documents
//! of the next pages with waste, so nobody waits longer than one batch.

use super::alloc::{Alloc, FIRST_LOG_PAGE};
use super::format::{
    self, data_page_docs, gather_node, Cut, DataPages, DbHeader, DocPtr, Document, KvStats,
    NodeBuilder, NodeLayout, NodePtr, NodeView, Recovered, Superblock, NO_PAGE,
};
use super::{DataType, NamedPolicy};
use crate::error::{Corruption, EngineError, Fault, Structure};
use crate::page::{self, PageKind, HEADER_BYTES};
use crate::pager::{MetaSlots, Pager};
use blockdev::{BlockDevice, FileDevice, FileOptions, Lock};
use std::collections::BTreeMap;
use std::ops::Bound;
use std::path::Path;
use std::rc::Rc;

mod check;
mod commit;
mod compaction;
mod estimate;
mod held;
mod kids;
mod pages;
mod recover;
mod scan;
mod tree;
mod visit;
mod wal;
mod whole_file;

use commit::CommitKind;
pub use compaction::{Choice, CompactionPolicy, PageUse, Space, StaleShare};
pub use estimate::StaleEstimate;
pub use held::{RetiredHeaders, StalePages};
use pages::{Cached, NodeRef};
pub use scan::Scan;
pub use wal::{WritePath, WAL_FLUSH_DOCS_DEFAULT};
pub use whole_file::CompactionMode;

/// How a store is opened.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Options {
    /// Page size of a file store (`open_path`); a device brings its own.
    pub page_bytes: usize,
    /// Pages of a new file store (the file is sparse; default 1 GiB of 4-KiB pages).
    pub file_pages: u64,
    /// Open files through the OS page cache instead of O_DIRECT.
    pub buffered: bool,
    /// Pages the pager caches (at first; see `cache_max_pages`).
    pub cache_pages: usize,
    /// The cache grows with the store, to hold every page in use, up to this many pages
    /// (as an OS page cache would hold a buffered file; a cached data page costs its image, an
    /// index node its bytes and 16 bytes per key). At most `cache_pages`: a fixed cache.
    pub cache_max_pages: usize,
    /// Compact when stale / (live + stale) data bytes pass this (0..1; 1 = never).
    pub compact_threshold: f64,
    /// ... and at least this many bytes are stale.
    pub compact_min_bytes: u64,
    /// Document bytes one compaction batch moves (at least; at most a sixteenth of the
    /// store's capacity, and at least twice what the commit it rides on writes, so a pass
    /// outruns the updates). Readers and writers wait at
    /// most one batch: a pass is cut into batches, one per commit.
    pub compact_batch_bytes: u64,
    /// Pages compaction frees are trimmed this many commits later — those still free then
    /// (0: at once). Pages reused sooner cost no trim: on a file a trim is a punched hole (a
    /// synchronous discard where ext4 mounts with `discard`, and a block allocation when the
    /// page is written again); on a simulated SSD it is a TRIM command.
    pub trim_after_commits: u64,
    /// How data types map to write streams.
    pub streams: NamedPolicy,
    /// How commits reach the device: copy-on-write index per commit, or ForestDB's WAL
    /// (docs/kv-format.md, "Write paths").
    pub write_path: WritePath,
    /// Path `wal`: documents in the WAL before a commit applies them to the index
    /// (ForestDB's default 4,096).
    pub wal_flush_docs: u64,
    /// Incremental batches (one per commit) or ForestDB's whole-file compaction (all live
    /// documents and a new index in one commit, the old pages released whole).
    pub compaction_mode: CompactionMode,
    /// Allocate next fit (an append-only log that wraps around the device, as ForestDB appends
    /// to its file) instead of first fit (the lowest free pages first, as a file system
    /// reuses freed blocks).
    pub next_fit: bool,
    /// How index nodes are laid out on their pages: plain (whole keys, fixed-width pointers)
    /// or packed (the shared prefix once, varint pointers: about half the bytes, so a WAL
    /// flush rewrites fewer nodes; ForestDB's mode uses it). A store reads both.
    pub node_layout: NodeLayout,
    /// When the index is applied, cut the leaves one inner node rewrites side by side again
    /// as one run, filled (the last two balanced), instead of each on its own: on an
    /// append-only index a rewritten leaf costs a page write whether full or half full, and
    /// fuller leaves mean fewer of them for the next flush of random keys to rewrite.
    /// ForestDB's mode uses it.
    pub refill_leaves: bool,
    /// What happens to a retired DB header page: held in the file until the compaction pass
    /// that ends its generation, then trimmed with it (ForestDB's: headers are appended and
    /// die with their file), or reused by the allocator at the next commit. Default `auto`:
    /// held on path `wal`, reused on `cow`.
    pub retired_headers: RetiredHeaders,
    /// What happens to any page freed within a generation (an index node a WAL flush
    /// rewrote, a data page gone stale): free for the allocator once the commit is durable
    /// (`reuse`, the default), or held until the compaction pass that ends the generation,
    /// so new pages go to the file's end (`hold`, ForestDB's; `StalePages` cites the source).
    pub stale_pages: StalePages,
    /// How the stale share `compact_threshold` is compared with is estimated: document bytes
    /// on the data pages in use (ours, the default), or ForestDB's file size less its active
    /// data (every page written since the generation began counts; `estimate.rs` cites the
    /// source).
    pub stale_estimate: StaleEstimate,
    /// Make an empty store on a blank device (false: a blank device is an error, and opening
    /// writes nothing — for `check`, `stat`).
    pub create: bool,
}

impl Default for Options {
    fn default() -> Self {
        Options {
            page_bytes: 4096,
            file_pages: 1 << 18,
            buffered: false,
            cache_pages: 8192,
            cache_max_pages: 1 << 18,
            compact_threshold: 0.5,
            compact_min_bytes: 4 << 20,
            compact_batch_bytes: 1 << 20,
            trim_after_commits: 8,
            streams: NamedPolicy::PerType,
            write_path: WritePath::Cow,
            wal_flush_docs: WAL_FLUSH_DOCS_DEFAULT,
            compaction_mode: CompactionMode::Incremental,
            next_fit: false,
            node_layout: NodeLayout::Plain,
            refill_leaves: false,
            retired_headers: RetiredHeaders::Auto,
            stale_pages: StalePages::Reuse,
            stale_estimate: StaleEstimate::DataPages,
            create: true,
        }
    }
}

/// Operations applied together by [`Store::write`].
#[derive(Clone, Debug, Default)]
pub struct WriteBatch {
    ops: Vec<(Vec<u8>, Option<Vec<u8>>)>,
}

impl WriteBatch {
    pub fn new() -> WriteBatch {
        WriteBatch::default()
    }
    pub fn put(&mut self, key: &[u8], value: &[u8]) -> &mut WriteBatch {
        self.ops.push((key.to_vec(), Some(value.to_vec())));
        self
    }
    pub fn delete(&mut self, key: &[u8]) -> &mut WriteBatch {
        self.ops.push((key.to_vec(), None));
        self
    }
    pub fn len(&self) -> usize {
        self.ops.len()
    }
    pub fn is_empty(&self) -> bool {
        self.ops.is_empty()
    }
}

/// What `stat` reports.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct StoreStat {
    pub commit_seq: u64,
    pub generation: u64,
    pub live_keys: u64,
    pub live_bytes: u64,
    pub stale_bytes: u64,
    /// Pages written, by type, over the store's life.
    pub pages_written: format::PagesByType,
    /// Pages in use now, by type (superblock: the two slots).
    pub pages_in_use: format::PagesByType,
    /// Headers written (one per commit).
    pub headers: u64,
    /// The high-water mark: pages from 0 up to here may hold data.
    pub footprint_pages: u64,
    pub capacity_pages: u64,
    pub page_bytes: usize,
    /// Documents and index bytes waiting for `commit`.
    pub uncommitted_ops: u64,
    /// Compaction batches run since the store was opened (one per commit at most).
    pub compaction_batches: u64,
    /// Whether a compaction pass is under way (it goes on with the next commits).
    pub compacting: bool,
    /// Path `wal`: entries of the WAL index (keys whose newest document is not yet in the
    /// tree; `live_keys` and `live_bytes` count the tree only), the tombstones among them,
    /// and the bytes of the documents they point at.
    pub wal_entries: u64,
    pub wal_tombstones: u64,
    pub wal_live_bytes: u64,
    /// Retired header pages held until their generation's compaction
    /// (`Options::retired_headers`).
    pub held_header_pages: u64,
    /// Other pages freed in this generation and held until its compaction
    /// (`Options::stale_pages`).
    pub held_stale_pages: u64,
}

/// One problem `check` found.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Damage {
    /// Byte offset on the device.
    pub offset: u64,
    pub what: String,
}

pub struct Store {
    pager: Pager,
    name: String,
    payload: usize,
    opts: Options,
    commit_seq: u64,
    doc_seq: u64,
    root: Option<NodePtr>,
    header_page: u64,
    generation: u64,
    stats: KvStats,
    alloc: Alloc,
    pending: BTreeMap<Vec<u8>, Option<Vec<u8>>>,
    /// Whether a failed write left the in-memory state ahead of the device.
    broken: bool,
    /// Staged index nodes of the commit being built: (page, node).
    staged: Vec<(u64, NodeRef)>,
    /// The compaction pass under way (in memory: a pass cut by a crash starts over).
    compaction: Option<compaction::Pass>,
    compaction_batches: u64,
    /// Extents compaction freed, by the commit that freed them, not yet trimmed.
    trims: std::collections::VecDeque<(u64, Vec<(u64, u64)>)>,
    /// Staging buffer of a commit's page images (data pages, then index pages), kept from
    /// commit to commit.
    page_buf: Vec<u8>,
    /// The buffer a spanning document is gathered into on a get, kept from get to get.
    doc_buf: Vec<u8>,
    /// When to compact and which pages to clean.
    policy: Box<dyn CompactionPolicy>,
    /// The superblock's two slots (pages 0 and 1), by the pager's slot protocol.
    slots: MetaSlots,
    /// The WAL index (path `wal`; after a replay at open on path `cow` too, until a commit).
    wal: wal::Wal,
    /// The next commit flushes the WAL (close).
    wal_force: bool,
    /// The next commit is a whole-file compaction (every live document rewritten).
    whole_file_pass: bool,
    /// Retired header pages held until the compaction pass that ends their generation
    /// (`Options::retired_headers`; each holds one reference).
    held_headers: Vec<u64>,
    /// Header, index and data pages written before the current generation began
    /// (`Options::stale_estimate = FileSize`: the generation's file size is what was written
    /// since).
    generation_start_pages: u64,
    /// The same count when the commit being built began.
    commit_start_pages: u64,
}

impl Store {
    /// Open the store on `dev`, creating an empty one on a blank device.
    pub fn open(dev: Box<dyn BlockDevice>, opts: Options) -> Result<Store, EngineError> {
        Store::open_named(dev, opts, "device".to_string())
    }

    /// Open (or create, `opts.file_pages` large) the store in file `path`.
    pub fn open_path(path: &Path, opts: Options) -> Result<Store, EngineError> {
        let fo = FileOptions {
            buffered: opts.buffered,
            page_bytes: opts.page_bytes,
            // A commit writes about a thousand scattered index pages (the free space is
            // fragmented into single pages): in waves of the default 64 the device idles
            // between waves. 256 (the block queue's depth here) cut the update phase's wall
            // time by about a sixth at 1 M records; 1024 was no better.
            queue_depth: 256,
            lock: Lock::Exclusive,
            ..FileOptions::default()
        };
        let dev = if path.exists() {
            FileDevice::open(path, fo)?
        } else {
            FileDevice::create(path, opts.file_pages, opts.page_bytes, fo)?
        };
        Store::open_named(Box::new(dev), opts, path.display().to_string())
    }

    /// Open the existing store in file `path` read-only: `O_RDONLY` under a shared lock
    /// (beside other readers, never beside a writer); works on read-only media and never
    /// writes (a write, commit or trim fails with the device's read-only error).
    pub fn open_read_only(path: &Path, opts: Options) -> Result<Store, EngineError> {
        let fo = FileOptions {
            buffered: opts.buffered,
            page_bytes: opts.page_bytes,
            lock: Lock::Shared,
            ..FileOptions::default()
        };
        let dev = FileDevice::open(path, fo)?;
        let opts = Options {
            create: false,
            ..opts
        };
        Store::open_named(Box::new(dev), opts, path.display().to_string())
    }

    fn open_named(
        dev: Box<dyn BlockDevice>,
        opts: Options,
        name: String,
    ) -> Result<Store, EngineError> {
        if !(0.0..=1.0).contains(&opts.compact_threshold) {
            return Err(EngineError::Config {
                field: "compact_threshold",
                value: opts.compact_threshold.to_string(),
                reason: "a share of stale bytes, 0..=1 (1: never compact)".into(),
            });
        }
        if opts.wal_flush_docs == 0 {
            return Err(EngineError::Config {
                field: "wal_flush_docs",
                value: "0".into(),
                reason: "documents per WAL flush: at least 1 (ForestDB: 4096)".into(),
            });
        }
        let pb = dev.page_bytes();
        let payload = page::payload_capacity(pb.max(HEADER_BYTES));
        if pb < 512 || dev.capacity_pages() < FIRST_LOG_PAGE + 4 {
            return Err(EngineError::Config {
                field: "device",
                value: format!("{} pages of {pb} bytes", dev.capacity_pages()),
                reason: "a store needs pages of at least 512 bytes and at least 6 pages; \
                         an existing store this small was truncated or is not a flashlab \
                         store (restore it from a backup)"
                    .into(),
            });
        }
        let capacity = dev.capacity_pages();
        let mut s = Store {
            pager: Pager::new(dev, opts.cache_pages),
            name,
            payload,
            opts,
            commit_seq: 0,
            doc_seq: 0,
            root: None,
            header_page: NO_PAGE,
            generation: 0,
            stats: KvStats::default(),
            alloc: Alloc::new(capacity, FIRST_LOG_PAGE),
            pending: BTreeMap::new(),
            broken: false,
            staged: Vec::new(),
            compaction: None,
            compaction_batches: 0,
            trims: std::collections::VecDeque::new(),
            page_buf: Vec::new(),
            doc_buf: Vec::new(),
            slots: MetaSlots::new(0, 0, "KV superblock"),
            wal: wal::Wal::default(),
            wal_force: false,
            whole_file_pass: false,
            held_headers: Vec::new(),
            generation_start_pages: 0,
            commit_start_pages: 0,
            policy: Box::new(StaleShare::new(
                opts.compact_threshold,
                opts.compact_min_bytes,
            )),
        };
        s.recover()?;
        s.alloc
            .set_hold_released(s.opts.stale_pages == StalePages::Hold);
        s.start_generation_at_open();
        s.wal_next_fit();
        s.fit_cache();
        assert!(s.alloc.end() <= capacity, "the log ends inside the device");
        assert!(s.pending.is_empty() && !s.broken, "a store opens clean");
        Ok(s)
    }

    fn check_key(key: &[u8]) -> Result<(), EngineError> {
        if key.len() > format::KEY_BYTES_MAX {
            return Err(EngineError::TooLarge {
                what: "key",
                len_bytes: key.len() as u64,
                max_bytes: format::KEY_BYTES_MAX as u64,
            });
        }
        Ok(())
    }

    /// The value of `key` (uncommitted writes included).
    pub fn get(&mut self, key: &[u8]) -> Result<Option<Vec<u8>>, EngineError> {
        self.get_with(key, <[u8]>::to_vec)
    }

    /// `key`'s value handed to `f` without a copy (borrowed from the cache), or None when
    /// absent (uncommitted writes included).
    pub fn get_with<R>(
        &mut self,
        key: &[u8],
        f: impl FnOnce(&[u8]) -> R,
    ) -> Result<Option<R>, EngineError> {
        Store::check_key(key)?;
        if let Some(v) = self.pending.get(key) {
            return Ok(v.as_deref().map(f));
        }
        match self.lookup(key)? {
            Some(p) => self.doc_value_with(key, p, f).map(Some),
            None => Ok(None),
        }
    }

    /// Keys and values in `range`, in key order, read as the iterator advances.
    pub fn scan(&mut self, range: (Bound<&[u8]>, Bound<&[u8]>)) -> Result<Scan<'_>, EngineError> {
        let own = |b: Bound<&[u8]>| match b {
            Bound::Included(k) => Bound::Included(k.to_vec()),
            Bound::Excluded(k) => Bound::Excluded(k.to_vec()),
            Bound::Unbounded => Bound::Unbounded,
        };
        let (start, end) = (own(range.0), own(range.1));
        let pending = self.scan_overlay((start.clone(), end.clone()))?;
        assert!(
            pending.windows(2).all(|w| w[0].0 < w[1].0),
            "pending keys ascend, once each"
        );
        let mut scan = Scan {
            store: self,
            stack: Vec::new(),
            end,
            pending: pending.into_iter().peekable(),
            tree_next: None,
            done: false,
        };
        scan.seek(&start)?;
        Ok(scan)
    }

    fn refuse(&self) -> Result<(), EngineError> {
        if self.broken {
            return Err(EngineError::Config {
                field: "store",
                value: self.name.clone(),
                reason: "an earlier write failed; close and reopen the store (it recovers to the last commit)".into(),
            });
        }
        Ok(())
    }

    fn check_doc(key: &[u8], value: Option<&[u8]>) -> Result<(), EngineError> {
        Document { key, value, seq: 0 }.check_limits()
    }

    /// Set `key` to `value` (durable at the next `commit`).
    pub fn put(&mut self, key: &[u8], value: &[u8]) -> Result<(), EngineError> {
        self.refuse()?;
        Store::check_doc(key, Some(value))?;
        self.pending.insert(key.to_vec(), Some(value.to_vec()));
        Ok(())
    }

    /// Remove `key` (durable at the next `commit`).
    pub fn delete(&mut self, key: &[u8]) -> Result<(), EngineError> {
        self.refuse()?;
        Store::check_doc(key, None)?;
        self.pending.insert(key.to_vec(), None);
        Ok(())
    }

    /// Apply every operation of `batch` or (if one is refused) none.
    pub fn write(&mut self, batch: WriteBatch) -> Result<(), EngineError> {
        self.refuse()?;
        for (k, v) in &batch.ops {
            Store::check_doc(k, v.as_deref())?;
        }
        for (k, v) in batch.ops {
            self.pending.insert(k, v);
        }
        Ok(())
    }

    /// Make every write so far durable; returns the commit's sequence number.
    pub fn commit(&mut self) -> Result<u64, EngineError> {
        self.refuse()?;
        if self.pending.is_empty() {
            return Ok(self.commit_seq);
        }
        let whole = self.opts.compaction_mode == CompactionMode::WholeFile;
        if self.compaction.is_none() && self.should_compact() {
            match whole {
                true => self.compact_whole_file()?,
                false => self.start_compaction(),
            }
        }
        let r = self.commit_with_batch();
        self.whole_file_pass = false;
        assert!(
            self.pending.is_empty(),
            "a commit takes every pending operation"
        );
        r
    }

    /// Commit what is pending and give the device back.
    pub fn close(mut self) -> Result<Box<dyn BlockDevice>, EngineError> {
        self.commit()?;
        self.wal_flush_commit()?;
        assert!(self.pending.is_empty(), "a commit leaves nothing pending");
        self.trim_due(u64::MAX)?;
        Ok(self.pager.into_device())
    }

    /// The device as it is, without committing (pending writes are lost, as in a crash).
    pub fn into_device(self) -> Box<dyn BlockDevice> {
        self.pager.into_device()
    }

    pub fn pager(&self) -> &Pager {
        &self.pager
    }

    /// Compaction passes finished so far, as the newest DB header records them (each
    /// whole-file compaction, or each incremental pass, ends one generation). O(1), unlike
    /// [`Store::stat`], so a caller may read it after every commit.
    pub fn generation(&self) -> u64 {
        self.generation
    }

    pub fn stat(&self) -> StoreStat {
        let mut in_use = format::PagesByType {
            superblock: 2,
            ..Default::default()
        };
        for p in FIRST_LOG_PAGE..self.alloc.end() {
            if self.alloc.refs(p) > 0 {
                in_use.index += 1;
            }
        }
        in_use.data = self.alloc.data_pages();
        in_use.index = in_use.index.saturating_sub(in_use.data);
        if self.header_page != NO_PAGE {
            // The newest header, the WAL chain's and the held ones.
            in_use.header = 1 + self.wal_headers().len() as u64 + self.held_header_pages();
            in_use.index = in_use.index.saturating_sub(in_use.header);
        }
        assert!(
            in_use.data + in_use.index + in_use.header <= self.alloc.end(),
            "pages in use lie below the footprint"
        );
        StoreStat {
            commit_seq: self.commit_seq,
            generation: self.generation,
            live_keys: self.stats.live_keys,
            live_bytes: self.stats.live_bytes,
            stale_bytes: self.stale_bytes(),
            pages_written: self.stats.pages,
            pages_in_use: in_use,
            headers: self.stats.pages.header,
            footprint_pages: self.alloc.end(),
            capacity_pages: self.alloc.capacity(),
            page_bytes: self.pager.page_bytes(),
            uncommitted_ops: self.pending.len() as u64,
            compaction_batches: self.compaction_batches,
            compacting: self.compaction.is_some(),
            wal_entries: self.wal_entries(),
            wal_tombstones: self.wal_tombstones(),
            wal_live_bytes: self.wal_live_bytes(),
            held_header_pages: self.held_header_pages(),
            held_stale_pages: self.held_stale_pages(),
        }
    }

    pub fn name(&self) -> &str {
        &self.name
    }
}

/// The data-page staging buffer is kept between commits up to this size (a commit of the
/// usual thousand 1-KiB documents stages about 1 MiB).
const PAGE_BUF_KEEP_BYTES: usize = 16 << 20;

/// The document buffer is kept between gets up to this capacity (a huge document's is freed).
const DOC_BUF_KEEP_BYTES: usize = 64 << 10;

/// A key and its value.
pub type KeyValue = (Vec<u8>, Vec<u8>);
/// A key and its new value (`None`: deleted).
type PendingOp = (Vec<u8>, Option<Vec<u8>>);
