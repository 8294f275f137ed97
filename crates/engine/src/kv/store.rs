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
    self, data_page_docs, gather_document, gather_node, DataPages, DbHeader, DocPtr, Document,
    FormatError, KvStats, NodeBuilder, NodePtr, NodeView, Recovered, Superblock, NO_PAGE,
};
use super::{DataType, StreamPolicy};
use crate::error::{Corruption, EngineError};
use crate::page::{self, Header, PageKind, HEADER_BYTES};
use crate::pager::Pager;
use blockdev::{BlockDevice, FileDevice, FileOptions, Lock};
use std::collections::BTreeMap;
use std::ops::Bound;
use std::path::Path;
use std::rc::Rc;

mod compaction;

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
    /// (as an OS page cache would hold a buffered file; each cached page costs about twice its
    /// size: the image and its payload). At most `cache_pages`: a fixed cache.
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
    pub streams: StreamPolicy,
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
            streams: StreamPolicy::PerType,
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
}

/// One problem `check` found.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Damage {
    /// Byte offset on the device.
    pub offset: u64,
    pub what: String,
}

/// A decoded page in the pager's cache.
enum Cached {
    /// An index node, searched in place (its encoded length is what a pointer must say).
    Node(NodeView),
    Raw {
        kind: PageKind,
        payload: Vec<u8>,
    },
}

/// An index node held by its cache entry (one `Rc`, the node inline: one pointer to follow
/// per level of a lookup).
#[derive(Clone)]
struct NodeRef(Rc<Cached>);

impl NodeRef {
    fn new(view: NodeView) -> NodeRef {
        NodeRef(Rc::new(Cached::Node(view)))
    }
}

impl std::ops::Deref for NodeRef {
    type Target = NodeView;
    fn deref(&self) -> &NodeView {
        match &*self.0 {
            Cached::Node(v) => v,
            // Every NodeRef is made of a `Cached::Node` (`new`, `Store::node`).
            Cached::Raw { .. } => unreachable!("a NodeRef holds an index node"),
        }
    }
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
        let pb = dev.page_bytes();
        let payload = page::payload_capacity(pb.max(HEADER_BYTES));
        if pb < 512 || dev.capacity_pages() < FIRST_LOG_PAGE + 4 {
            return Err(EngineError::Config {
                field: "device",
                value: format!("{} pages of {pb} bytes", dev.capacity_pages()),
                reason: "a store needs pages of at least 512 bytes and at least 6 pages".into(),
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
        };
        s.recover()?;
        s.fit_cache();
        Ok(s)
    }

    fn kv_err(&self, page: u64, what: &str, e: FormatError) -> EngineError {
        let base = page * self.pager.page_bytes() as u64 + HEADER_BYTES as u64;
        EngineError::Kv {
            place: format!("{}: {what} at page {page}", self.name),
            error: e.rebase(base),
        }
    }

    fn recover(&mut self) -> Result<(), EngineError> {
        let pb = self.pager.page_bytes() as u64;
        let slot_bytes = |s: &mut Store, p: u64| -> Result<Vec<u8>, EngineError> {
            let b = s.pager.read_uncached(p)?;
            Ok(b[HEADER_BYTES..HEADER_BYTES + format::SUPERBLOCK_BYTES].to_vec())
        };
        let s0 = slot_bytes(self, 0)?;
        let s1 = slot_bytes(self, 1)?;
        let offs = [HEADER_BYTES as u64, pb + HEADER_BYTES as u64];
        let cap = self.alloc.capacity();
        let rec = format::recover([&s0, &s1], offs, |page| {
            if page >= cap {
                return Ok((vec![], page * pb));
            }
            let b = self.pager.read_uncached(page)?;
            let at = page * pb + HEADER_BYTES as u64;
            // A header page whose own seal fails reads as nothing (recovery falls back).
            match page::open_kind(b, page, PageKind::KvHeader, "DB header") {
                Ok(h) if h.id == page => Ok::<_, EngineError>((
                    b[HEADER_BYTES..HEADER_BYTES + format::DB_HEADER_BYTES].to_vec(),
                    at,
                )),
                _ => Ok((vec![], at)),
            }
        })?;
        match rec {
            Recovered::Blank if !self.opts.create => Err(EngineError::Kv {
                place: format!("{}: not a store", self.name),
                error: FormatError::Blank {
                    structure: "superblock",
                    offset: 0,
                },
            }),
            Recovered::Blank => {
                // Commit 0: the empty store.
                self.write_superblock(0, NO_PAGE)?;
                self.pager.flush()?;
                Ok(())
            }
            Recovered::Damaged { errors } => Err(EngineError::Kv {
                place: format!(
                    "{}: no valid superblock and header (this is not a store, or both commits are damaged; {} problems)",
                    self.name,
                    errors.len()
                ),
                error: errors.into_iter().next().unwrap_or(FormatError::Blank {
                    structure: "superblock",
                    offset: 0,
                }),
            }),
            Recovered::Committed {
                superblock, header, ..
            } => {
                if superblock.page_bytes as u64 != pb {
                    return Err(EngineError::Config {
                        field: "page_bytes",
                        value: pb.to_string(),
                        reason: format!(
                            "{} was made with pages of {} bytes: open it with that page size",
                            self.name, superblock.page_bytes
                        ),
                    });
                }
                self.commit_seq = superblock.commit_seq;
                if let Some(h) = header {
                    self.header_page = superblock.header_page;
                    self.doc_seq = h.doc_seq;
                    self.root = h.root;
                    self.generation = h.generation;
                    self.stats = h.stats;
                    self.alloc = Alloc::new(cap, h.log_end_page);
                    self.alloc.add_ref(self.header_page, 1, false);
                    if let Some(r) = self.root {
                        self.ref_tree(r, None)?;
                    }
                    self.alloc.rebuild_free();
                }
                Ok(())
            }
        }
    }

    /// Count every page the tree under `ptr` reaches.
    fn ref_tree(&mut self, ptr: NodePtr, level: Option<u8>) -> Result<(), EngineError> {
        let node = self.node_at(ptr, level)?;
        self.alloc.add_ref(ptr.page, ptr.pages(self.payload), false);
        for i in 0..node.len() {
            if node.level() == 0 {
                let d = node.doc(i);
                self.alloc.add_ref(d.page, d.pages(self.payload), true);
            } else {
                self.ref_tree(node.child(i), Some(node.level() - 1))?;
            }
        }
        Ok(())
    }

    // ---- page I/O ----

    fn seal(&self, buf: &mut [u8], kind: PageKind, page: u64, body: &[u8]) {
        buf[HEADER_BYTES..HEADER_BYTES + body.len()].copy_from_slice(body);
        page::seal(
            buf,
            &Header {
                kind,
                flags: 0,
                id: page,
                version: self.commit_seq + 1,
                len: body.len() as u32,
            },
        );
    }

    /// Write whole page images from `first` on with the type's hint (see `write_runs`).
    fn write_pages(&mut self, first: u64, images: &[u8], t: DataType) -> Result<(), EngineError> {
        self.write_runs(&[(first, images)], t)
    }

    /// Write runs of whole page images, (first page, images), all in flight at once, with the
    /// type's hint; no cached copy is left stale. The callers of data and index pages cache
    /// the new forms themselves (a commit's pages are the ones read next): `write_data_run`
    /// keeps every data page it writes, so those are left alone; `write_staged` keeps
    /// single-page nodes only, so an index page's old form is discarded (rebuilding it from
    /// the image would cost a crc and a copy, and be replaced at once). Other pages (header,
    /// superblock) get their cached copy rebuilt from the image.
    fn write_runs(&mut self, runs: &[(u64, &[u8])], t: DataType) -> Result<(), EngineError> {
        // The type's write life rides along for real files (fcntl(F_SET_RW_HINT) on a change
        // of type); the `none` policy gives no hints at all.
        let hint = match self.opts.streams {
            StreamPolicy::NoStreams => self.opts.streams.hint(t),
            p => p.hint(t).with_life(t.write_life()),
        };
        let pb = self.pager.page_bytes();
        let r = self.pager.write_runs_hinted(runs, hint);
        if r.is_err() {
            self.broken = true;
        }
        r?;
        let n: u64 = runs.iter().map(|(_, b)| (b.len() / pb) as u64).sum();
        match t {
            DataType::Superblock => self.stats.pages.superblock += n,
            DataType::Header => self.stats.pages.header += n,
            DataType::Index => self.stats.pages.index += n,
            DataType::Data => self.stats.pages.data += n,
        }
        for &(first, images) in runs {
            for (i, img) in images.chunks(pb).enumerate() {
                let p = first + i as u64;
                if t == DataType::Data {
                    continue;
                }
                if t == DataType::Index {
                    self.pager.discard(p);
                    continue;
                }
                if self.pager.contains(p) {
                    let h = page::open(img, p)?;
                    let c = Cached::Raw {
                        kind: h.kind,
                        payload: page::payload(img, &h).to_vec(),
                    };
                    self.pager.keep(p, Rc::new(c))?;
                }
            }
        }
        Ok(())
    }

    fn write_superblock(&mut self, seq: u64, header_page: u64) -> Result<(), EngineError> {
        let sb = Superblock {
            commit_seq: seq,
            header_page,
            page_bytes: self.pager.page_bytes() as u32,
        };
        let mut img = vec![0u8; self.pager.page_bytes()];
        let slot = sb.slot() as u64;
        self.seal(&mut img, PageKind::KvSuperblock, slot, &sb.encode());
        self.write_pages(slot, &img, DataType::Superblock)
    }

    /// A sealed page of `kind` (cached).
    fn raw(
        &mut self,
        page: u64,
        kind: PageKind,
        what: &'static str,
    ) -> Result<Rc<Cached>, EngineError> {
        if page >= self.alloc.capacity() {
            return Err(EngineError::corrupt(
                page,
                Corruption::OutOfRange {
                    what: "page of a pointer",
                    limit: self.alloc.capacity(),
                    found: page,
                },
            ));
        }
        let c: Rc<Cached> = self.pager.load(page, page, |img| {
            let h = page::open_kind(img, page, kind, what)?;
            if h.id != page {
                return Err(EngineError::corrupt(
                    page,
                    Corruption::Id {
                        what: "page number in the page header",
                        expected: page,
                        found: h.id,
                    },
                ));
            }
            Ok(Cached::Raw {
                kind,
                payload: page::payload(img, &h).to_vec(),
            })
        })?;
        let ok = match &*c {
            Cached::Raw { kind: k, .. } => *k == kind,
            Cached::Node(..) => kind == PageKind::KvIndex,
        };
        if !ok {
            return Err(EngineError::corrupt(
                page,
                Corruption::Kind {
                    expected: what,
                    found: match &*c {
                        Cached::Raw { kind, .. } => *kind,
                        Cached::Node(..) => PageKind::KvIndex,
                    },
                },
            ));
        }
        Ok(c)
    }

    /// The node at `ptr`, which must be at `level` (a child is one level below its parent:
    /// a damaged pointer can neither loop nor skip levels).
    fn node_at(&mut self, ptr: NodePtr, level: Option<u8>) -> Result<NodeRef, EngineError> {
        let node = self.node(ptr)?;
        match level {
            Some(l) if node.level() != l => Err(self.kv_err(
                ptr.page,
                "index node",
                FormatError::Field {
                    structure: "index node",
                    field: "level",
                    offset: 1,
                    expected: format!("{l} (one below its parent)"),
                    found: node.level().to_string(),
                },
            )),
            _ => Ok(node),
        }
    }

    fn node(&mut self, ptr: NodePtr) -> Result<NodeRef, EngineError> {
        let n = ptr.pages(self.payload);
        if n == 1 {
            let c = self.raw(ptr.page, PageKind::KvIndex, "index node")?;
            let node = match &*c {
                Cached::Node(_) => NodeRef(c),
                Cached::Raw { payload, .. } => {
                    let view = gather_node(&[payload], ptr)
                        .map_err(|e| self.kv_err(ptr.page, "index node", e))?;
                    let node = NodeRef::new(view);
                    self.pager.keep(ptr.page, node.0.clone())?;
                    node
                }
            };
            if node.encoded_len() != ptr.len as usize {
                return Err(self.kv_err(
                    ptr.page,
                    "index node",
                    FormatError::Field {
                        structure: "node pointer",
                        field: "len",
                        offset: 0,
                        expected: node.encoded_len().to_string(),
                        found: ptr.len.to_string(),
                    },
                ));
            }
            return Ok(node);
        }
        let mut pages = Vec::new();
        for p in ptr.page..ptr.page + n {
            match &*self.raw(p, PageKind::KvIndex, "index node")? {
                Cached::Raw { payload, .. } => pages.push(payload.clone()),
                Cached::Node(node) => pages.push(node.bytes().to_vec()),
            }
        }
        let slices: Vec<&[u8]> = pages.iter().map(|p| p.as_slice()).collect();
        let view = gather_node(&slices, ptr).map_err(|e| self.kv_err(ptr.page, "index node", e))?;
        Ok(NodeRef::new(view))
    }

    /// The document at `ptr`, handed to `f` (borrowed from the cached pages where it lies in
    /// one; checked: page seals, continuation lengths, the document's crc).
    fn with_doc<R>(
        &mut self,
        ptr: DocPtr,
        f: impl FnOnce(&Document<'_>) -> R,
    ) -> Result<R, EngineError> {
        let n = ptr.pages(self.payload);
        if n == 1 {
            // The common case: no allocation, the document borrowed from the cached page,
            // whose seal was checked when it was read or written.
            let c = self.raw(ptr.page, PageKind::KvData, "data")?;
            let payload: &[u8] = match &*c {
                Cached::Raw { payload, .. } => payload,
                Cached::Node(..) => &[],
            };
            let doc = format::document_in_verified_page(payload, ptr)
                .map_err(|e| self.kv_err(ptr.page, "document", e))?;
            return Ok(f(&doc));
        }
        let mut pages = Vec::with_capacity(n as usize);
        for p in ptr.page..ptr.page.saturating_add(n) {
            pages.push(self.raw(p, PageKind::KvData, "data")?);
        }
        let slices: Vec<&[u8]> = pages
            .iter()
            .map(|c| match &**c {
                Cached::Raw { payload, .. } => payload.as_slice(),
                Cached::Node(..) => &[],
            })
            .collect();
        let mut scratch = Vec::new();
        let doc = gather_document(&slices, ptr, &mut scratch)
            .map_err(|e| self.kv_err(ptr.page, "document", e))?;
        Ok(f(&doc))
    }

    /// The document at `ptr`, checked to carry `key`: its value.
    fn doc_value(&mut self, key: &[u8], ptr: DocPtr) -> Result<Vec<u8>, EngineError> {
        self.doc_value_with(key, ptr, <[u8]>::to_vec)
    }

    /// The document at `ptr`, checked to carry `key`: its value handed to `f`.
    fn doc_value_with<R>(
        &mut self,
        key: &[u8],
        ptr: DocPtr,
        f: impl FnOnce(&[u8]) -> R,
    ) -> Result<R, EngineError> {
        let got = self.with_doc(ptr, |doc| {
            if doc.key != key {
                return Err(("key", String::from_utf8_lossy(doc.key).into_owned()));
            }
            doc.value.map(f).ok_or(("flags", String::new()))
        })?;
        let (field, found) = match got {
            Ok(v) => return Ok(v),
            Err(e) => e,
        };
        let (expected, found) = if field == "key" {
            (
                format!("{:?} (the index's key)", String::from_utf8_lossy(key)),
                format!("{found:?}"),
            )
        } else {
            (
                "a value (the index points at it)".into(),
                "a tombstone".into(),
            )
        };
        let e = FormatError::Field {
            structure: "document",
            field,
            offset: ptr.offset as u64,
            expected,
            found,
        };
        Err(self.kv_err(ptr.page, "document", e))
    }

    // ---- reads ----

    fn check_key(key: &[u8]) -> Result<(), EngineError> {
        if key.len() > format::KEY_BYTES_MAX {
            return Err(EngineError::Kv {
                place: "key-value store: key refused".into(),
                error: FormatError::TooLarge {
                    what: "key",
                    len_bytes: key.len() as u64,
                    max_bytes: format::KEY_BYTES_MAX as u64,
                },
            });
        }
        Ok(())
    }

    fn lookup(&mut self, key: &[u8]) -> Result<Option<DocPtr>, EngineError> {
        let Some(mut ptr) = self.root else {
            return Ok(None);
        };
        let mut level = None;
        loop {
            let node = self.node_at(ptr, level)?;
            if node.level() == 0 {
                return Ok(node.search(key).ok().map(|i| node.doc(i)));
            }
            ptr = node.child(node.child_index(key));
            level = Some(node.level() - 1);
        }
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
        let pending: Vec<(Vec<u8>, Option<Vec<u8>>)> = self
            .pending
            .range::<Vec<u8>, _>((start.clone(), end.clone()))
            .map(|(k, v)| (k.clone(), v.clone()))
            .collect();
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

    // ---- writes ----

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
        Document { key, value, seq: 0 }
            .check_limits()
            .map_err(|error| EngineError::Kv {
                place: "key-value store: write refused".into(),
                error,
            })
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
        if self.compaction.is_none() && self.should_compact() {
            self.start_compaction();
        }
        self.commit_with_batch()
    }

    /// Commit what is pending, with the next compaction batch (if a pass is under way).
    fn commit_with_batch(&mut self) -> Result<u64, EngineError> {
        let ops: Vec<PendingOp> = std::mem::take(&mut self.pending).into_iter().collect();
        let r = self.commit_ops_and_batch(ops);
        if r.is_err() {
            self.broken = true;
        }
        r
    }

    fn commit_ops_and_batch(&mut self, mut ops: Vec<PendingOp>) -> Result<u64, EngineError> {
        let (end, kind) = match self.compaction.take() {
            Some(pass) => {
                let (end, kind) = self.compaction_batch(pass, &mut ops)?;
                (Some(end), kind)
            }
            None => (None, CommitKind::default()),
        };
        let seq = self.commit_ops(ops, kind)?;
        match end {
            Some(compaction::BatchEnd::Continue(pass)) => {
                self.compaction_batches += 1;
                self.compaction = Some(pass);
            }
            Some(compaction::BatchEnd::Done) => self.compaction_batches += 1,
            Some(compaction::BatchEnd::Abandoned) | None => {}
        }
        Ok(seq)
    }

    fn commit_ops(&mut self, ops: Vec<PendingOp>, kind: CommitKind) -> Result<u64, EngineError> {
        // 1. documents, as runs of data pages: one run while the free space has room for it
        // in one piece, else cut to the longest free runs (on a small store the free space is
        // fragmented by the pages compaction gave back; a document never straddles two runs).
        let room = (self.payload - format::DATA_PAGE_HEAD_BYTES) as u64;
        let mut dp = DataPages::new(self.payload).map_err(|e| self.kv_err(0, "data page", e))?;
        let mut tree_ops: Vec<(Vec<u8>, Option<DocPtr>)> = Vec::with_capacity(ops.len());
        let mut run_from = 0;
        let mut target = self.alloc.largest_run();
        for (k, v) in ops {
            let ptr = match &v {
                Some(v) => {
                    let bytes = (format::DOC_MIN_BYTES + k.len() + v.len()) as u64;
                    let open = dp.pages().len() as u64;
                    if open > 0 && open + bytes / room + 1 > target {
                        let full = std::mem::replace(
                            &mut dp,
                            DataPages::new(self.payload)
                                .map_err(|e| self.kv_err(0, "data page", e))?,
                        );
                        self.place_run(full, &mut tree_ops[run_from..])?;
                        run_from = tree_ops.len();
                        target = self.alloc.largest_run();
                    }
                    self.doc_seq += 1;
                    let d = Document {
                        key: &k,
                        value: Some(v),
                        seq: self.doc_seq,
                    };
                    Some(dp.push(&d).map_err(|e| self.kv_err(0, "document", e))?)
                }
                None => None,
            };
            tree_ops.push((k, ptr));
        }
        self.place_run(dp, &mut tree_ops[run_from..])?;
        self.finish_commit(&tree_ops, kind)
    }

    /// Allocate and write one run of data pages; turn its documents' pointers (`tree_ops`,
    /// page indexes in the run) into page numbers and count them.
    fn place_run(
        &mut self,
        dp: DataPages,
        tree_ops: &mut [(Vec<u8>, Option<DocPtr>)],
    ) -> Result<(), EngineError> {
        let pages = dp.into_pages();
        let base = if pages.is_empty() {
            0
        } else {
            self.alloc.alloc(pages.len() as u64)?
        };
        self.write_data_run(base, &pages)?;
        drop(pages);
        for (_, p) in tree_ops.iter_mut() {
            if let Some(p) = p {
                p.page += base;
                self.alloc.add_ref(p.page, p.pages(self.payload), true);
            }
        }
        Ok(())
    }

    /// Commit documents already written: the index (`tree_ops` applied), header, superblock.
    fn finish_commit(
        &mut self,
        tree_ops: &[(Vec<u8>, Option<DocPtr>)],
        kind: CommitKind,
    ) -> Result<u64, EngineError> {
        // 2. the index along the changed paths.
        self.apply_tree(tree_ops)?;
        self.write_staged()?;
        // 3. header, flush, superblock, flush.
        let seq = self.commit_seq + 1;
        if kind.pass_done {
            self.generation += 1;
        }
        let hp = self.alloc.alloc(1)?;
        self.alloc.add_ref(hp, 1, false);
        self.stats.pages.header += 1;
        self.stats.pages.superblock += 1;
        self.stats.stale_bytes = self.stale_bytes();
        let h = DbHeader {
            commit_seq: seq,
            doc_seq: self.doc_seq,
            root: self.root,
            prev_header_page: self.header_page,
            log_end_page: self.alloc.end(),
            generation: self.generation,
            stats: self.stats,
        };
        self.stats.pages.header -= 1;
        self.stats.pages.superblock -= 1;
        let mut img = vec![0u8; self.pager.page_bytes()];
        self.seal(&mut img, PageKind::KvHeader, hp, &h.encode());
        self.write_pages(hp, &img, DataType::Header)?;
        self.pager.flush()?;
        self.write_superblock(seq, hp)?;
        self.pager.flush()?;
        if self.header_page != NO_PAGE {
            self.alloc.drop_ref(self.header_page, 1);
        }
        self.header_page = hp;
        self.commit_seq = seq;
        let freed = self.alloc.commit_done();
        if kind.trim && !freed.is_empty() {
            self.trims.push_back((seq, freed));
        }
        self.trim_due(seq.saturating_sub(self.opts.trim_after_commits))?;
        self.fit_cache();
        Ok(seq)
    }

    /// Trim what commits up to `upto` freed and is free still.
    fn trim_due(&mut self, upto: u64) -> Result<(), EngineError> {
        while self.trims.front().is_some_and(|(seq, _)| *seq <= upto) {
            let Some((_, extents)) = self.trims.pop_front() else {
                break;
            };
            for (s, n) in extents {
                for (s, n) in self.alloc.free_parts(s, n) {
                    self.pager.trim(s, n)?;
                }
            }
        }
        Ok(())
    }

    /// Grow the cache to the footprint, within `cache_pages..=cache_max_pages`.
    fn fit_cache(&mut self) {
        let max = self.opts.cache_max_pages.max(self.opts.cache_pages);
        let want = usize::try_from(self.alloc.end()).unwrap_or(usize::MAX);
        let want = want.clamp(self.opts.cache_pages, max);
        if want > self.pager.cache_pages() {
            self.pager.set_cache_pages(want);
        }
    }

    fn stale_bytes(&self) -> u64 {
        (self.alloc.data_pages() * (self.payload - format::DATA_PAGE_HEAD_BYTES) as u64)
            .saturating_sub(self.stats.live_bytes)
    }

    /// Seal and write data-page payloads to pages `base..`, then cache every one of them
    /// (`write_runs` relies on that: it leaves data pages' cached forms to this function).
    fn write_data_run(&mut self, base: u64, pages: &[Vec<u8>]) -> Result<(), EngineError> {
        // In I/Os of up to 1 MiB, all in flight at once.
        const CHUNK: usize = 256;
        if pages.is_empty() {
            return Ok(());
        }
        let pb = self.pager.page_bytes();
        let bytes = pb * pages.len();
        // The staging buffer lives in the store: a fresh megabyte per commit would be a fresh
        // mapping, paid again in page faults and kernel zeroing. Sealing overwrites every
        // byte of each page (header, payload, zeroed tail), so old contents never leak.
        let mut buf = std::mem::take(&mut self.page_buf);
        if buf.len() < bytes {
            buf.resize(bytes, 0);
        }
        for (i, (p, img)) in pages.iter().zip(buf.chunks_mut(pb)).enumerate() {
            self.seal(img, PageKind::KvData, base + i as u64, p);
        }
        let runs: Vec<(u64, &[u8])> = buf[..bytes]
            .chunks(CHUNK * pb)
            .enumerate()
            .map(|(c, b)| (base + (c * CHUNK) as u64, b))
            .collect();
        let r = self.write_runs(&runs, DataType::Data);
        drop(runs);
        // Kept for the next commit unless one huge batch made it large.
        if buf.capacity() <= PAGE_BUF_KEEP_BYTES {
            self.page_buf = buf;
        }
        r?;
        // Write-through: the payloads just sealed are what a read of these pages would find.
        // Copied, not moved: the cached copies are allocated together and the builder's pages
        // freed together, which glibc's malloc serves much faster than long-lived pages
        // allocated in between a commit's short-lived buffers (measured: moving them cost
        // ~20 % more CPU in the update phase).
        for (i, payload) in pages.iter().enumerate() {
            let c = Cached::Raw {
                kind: PageKind::KvData,
                payload: payload.clone(),
            };
            self.pager.keep(base + i as u64, Rc::new(c))?;
        }
        Ok(())
    }

    fn apply_tree(&mut self, ops: &[(Vec<u8>, Option<DocPtr>)]) -> Result<(), EngineError> {
        if ops.is_empty() {
            return Ok(());
        }
        let (mut pieces, mut level) = match self.root {
            None => {
                let mut b = NodeBuilder::new(0);
                for (k, p) in ops {
                    if let Some(p) = p {
                        self.stats.live_keys += 1;
                        self.stats.live_bytes += p.len as u64;
                        b.push_doc(k, *p).map_err(|e| self.encode_err(e))?;
                    }
                }
                (self.write_split(b)?, 0)
            }
            Some(r) => {
                let level = self.node(r)?.level();
                (self.apply_node(r, None, ops)?, level)
            }
        };
        while pieces.len() > 1 {
            level += 1;
            let mut b = NodeBuilder::new(level);
            for (k, p) in &pieces {
                b.push_child(k, *p).map_err(|e| self.encode_err(e))?;
            }
            pieces = self.write_split(b)?;
        }
        self.root = pieces.first().map(|p| p.1);
        // A root with one child is no root: its child is.
        while let Some(r) = self.root {
            let node = self.staged_or_read(r)?;
            if node.level() > 0 && node.len() == 1 {
                self.alloc.drop_ref(r.page, r.pages(self.payload));
                self.staged.retain(|(p, _)| *p != r.page);
                self.root = Some(node.child(0));
            } else {
                break;
            }
        }
        Ok(())
    }

    fn encode_err(&self, e: FormatError) -> EngineError {
        self.kv_err(0, "index node (encoding)", e)
    }

    fn staged_or_read(&mut self, ptr: NodePtr) -> Result<NodeRef, EngineError> {
        if let Some((_, n)) = self.staged.iter().find(|(p, _)| *p == ptr.page) {
            return Ok(n.clone());
        }
        self.node(ptr)
    }

    /// Merge sorted `ops` into the subtree at `ptr`; its replacement as (least key, node)s.
    /// Entries the ops leave alone are copied as they are encoded.
    fn apply_node(
        &mut self,
        ptr: NodePtr,
        level: Option<u8>,
        ops: &[(Vec<u8>, Option<DocPtr>)],
    ) -> Result<Vec<(Vec<u8>, NodePtr)>, EngineError> {
        let node = self.node_at(ptr, level)?;
        self.alloc.drop_ref(ptr.page, ptr.pages(self.payload));
        let mut b = NodeBuilder::new(node.level());
        if node.level() == 0 {
            let mut i = 0;
            for (k, p) in ops {
                let at = match node.search(k) {
                    Ok(j) | Err(j) => j.max(i),
                };
                b.push_entries(&node, i, at)
                    .map_err(|e| self.encode_err(e))?;
                i = at;
                if i < node.len() && node.key(i) == k.as_slice() {
                    let o = node.doc(i);
                    i += 1;
                    self.alloc.drop_ref(o.page, o.pages(self.payload));
                    self.stats.live_keys -= 1;
                    self.stats.live_bytes -= o.len as u64;
                }
                if let Some(p) = p {
                    self.stats.live_keys += 1;
                    self.stats.live_bytes += p.len as u64;
                    b.push_doc(k, *p).map_err(|e| self.encode_err(e))?;
                }
            }
            b.push_entries(&node, i, node.len())
                .map_err(|e| self.encode_err(e))?;
        } else {
            let mut at = 0;
            for ci in 0..node.len() {
                let mut to = at;
                while to < ops.len()
                    && (ci + 1 == node.len() || ops[to].0.as_slice() < node.key(ci + 1))
                {
                    to += 1;
                }
                if to == at {
                    b.push_entry(&node, ci).map_err(|e| self.encode_err(e))?;
                } else {
                    let pieces =
                        self.apply_node(node.child(ci), Some(node.level() - 1), &ops[at..to])?;
                    for (k, p) in &pieces {
                        b.push_child(k, *p).map_err(|e| self.encode_err(e))?;
                    }
                }
                at = to;
            }
        }
        self.write_split(b)
    }

    /// Stage the nodes `b` makes (cut to pages) for writing: their (least key, pointer)s.
    fn write_split(&mut self, b: NodeBuilder) -> Result<Vec<(Vec<u8>, NodePtr)>, EngineError> {
        let pieces = b.finish(self.payload).map_err(|e| self.encode_err(e))?;
        let mut out = Vec::with_capacity(pieces.len());
        for (key, view) in pieces {
            let len = view.encoded_len() as u32;
            let pages = NodePtr { page: 0, len }.pages(self.payload);
            let page = self.alloc.alloc(pages)?;
            self.alloc.add_ref(page, pages, false);
            self.staged.push((page, NodeRef::new(view)));
            out.push((key, NodePtr { page, len }));
        }
        Ok(out)
    }

    fn write_staged(&mut self) -> Result<(), EngineError> {
        let mut staged = std::mem::take(&mut self.staged);
        staged.sort_by_key(|s| s.0);
        let pb = self.pager.page_bytes();
        // Consecutive nodes go out as one I/O (of up to 256 pages), every I/O at once, from the
        // store's staging buffer (as the data pages: no fresh mapping per commit).
        let mut buf = std::mem::take(&mut self.page_buf);
        buf.clear();
        let mut runs: Vec<(u64, usize, usize)> = Vec::new(); // (first page, from, to) in buf
        for (page, node) in &staged {
            let at = buf.len();
            let follows = runs.last().is_some_and(|&(first, from, to)| {
                first + ((to - from) / pb) as u64 == *page && to - from < 256 * pb
            });
            for (i, chunk) in node.bytes().chunks(self.payload).enumerate() {
                let at = buf.len();
                buf.resize(at + pb, 0);
                self.seal(&mut buf[at..], PageKind::KvIndex, page + i as u64, chunk);
            }
            match runs.last_mut() {
                Some(r) if follows => r.2 = buf.len(),
                _ => runs.push((*page, at, buf.len())),
            }
        }
        let ios: Vec<(u64, &[u8])> = runs.iter().map(|&(p, f, t)| (p, &buf[f..t])).collect();
        let r = match ios.is_empty() {
            true => Ok(()),
            false => self.write_runs(&ios, DataType::Index),
        };
        drop(ios);
        if buf.capacity() <= PAGE_BUF_KEEP_BYTES {
            self.page_buf = buf;
        }
        r?;
        // Write-through: the nodes just written are the ones the next commit walks.
        for (page, node) in staged {
            if node.encoded_len() <= self.payload {
                self.pager.keep(page, node.0)?;
            }
        }
        Ok(())
    }

    /// Commit what is pending and give the device back.
    pub fn close(mut self) -> Result<Box<dyn BlockDevice>, EngineError> {
        self.commit()?;
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
            in_use.header = 1;
            in_use.index = in_use.index.saturating_sub(1);
        }
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
        }
    }

    /// Verify every page the newest commit reaches: page seals, node order and key bounds,
    /// every document's checksum and key, every data page's layout; nothing is changed.
    pub fn check(&mut self) -> Result<Vec<Damage>, EngineError> {
        let mut damage = Vec::new();
        let pb = self.pager.page_bytes() as u64;
        for slot in 0..2u64 {
            let b = self.pager.read_uncached(slot)?.to_vec();
            let b = b.as_slice();
            if page::is_blank(b) {
                continue;
            }
            let r = page::open_kind(b, slot, PageKind::KvSuperblock, "superblock").and_then(|h| {
                Superblock::decode(page::payload(b, &h), slot as u8)
                    .map_err(|e| self.kv_err(slot, "superblock", e))
            });
            if let Err(e) = r {
                damage.push(Damage {
                    offset: slot * pb,
                    what: e.to_string(),
                });
            }
        }
        if self.header_page != NO_PAGE {
            if let Err(e) = self.raw(self.header_page, PageKind::KvHeader, "DB header") {
                damage.push(Damage {
                    offset: self.header_page * pb,
                    what: e.to_string(),
                });
            }
        }
        let mut keys = 0u64;
        let mut data_pages = std::collections::BTreeSet::new();
        if let Some(r) = self.root {
            self.check_node(r, None, None, &mut damage, &mut keys, &mut data_pages)?;
        }
        for p in data_pages {
            match self.raw(p, PageKind::KvData, "data") {
                Ok(c) => {
                    if let Cached::Raw { payload, .. } = &*c {
                        if let Err(e) = data_page_docs(payload) {
                            let e = self.kv_err(p, "data page", e);
                            damage.push(Damage {
                                offset: p * pb,
                                what: e.to_string(),
                            });
                        }
                    }
                }
                Err(e) => damage.push(Damage {
                    offset: p * pb,
                    what: e.to_string(),
                }),
            }
        }
        if self.root.is_some() && keys != self.stats.live_keys {
            damage.push(Damage {
                offset: self.header_page * pb,
                what: format!(
                    "DB header: live_keys is {}, the index holds {keys}",
                    self.stats.live_keys
                ),
            });
        }
        Ok(damage)
    }

    fn check_node(
        &mut self,
        ptr: NodePtr,
        lo: Option<&[u8]>,
        hi: Option<&[u8]>,
        damage: &mut Vec<Damage>,
        keys: &mut u64,
        data_pages: &mut std::collections::BTreeSet<u64>,
    ) -> Result<(), EngineError> {
        let pb = self.pager.page_bytes() as u64;
        let node = match self.node(ptr) {
            Ok(n) => n,
            Err(e) => {
                damage.push(Damage {
                    offset: ptr.page * pb,
                    what: e.to_string(),
                });
                return Ok(());
            }
        };
        let first = (!node.is_empty()).then(|| node.key(0));
        let last = node.len().checked_sub(1).map(|i| node.key(i));
        let out_of_bounds =
            first.zip(lo).is_some_and(|(f, l)| f < l) || last.zip(hi).is_some_and(|(l, h)| l >= h);
        if out_of_bounds {
            damage.push(Damage {
                offset: ptr.page * pb,
                what: format!(
                    "{}: index node at page {} holds keys outside its parent's range",
                    self.name, ptr.page
                ),
            });
        }
        if node.level() == 0 {
            for i in 0..node.len() {
                let (k, d) = (node.key(i), node.doc(i));
                *keys += 1;
                if let Err(err) = self.doc_value(k, d) {
                    damage.push(Damage {
                        offset: d.page * pb + HEADER_BYTES as u64 + d.offset as u64,
                        what: err.to_string(),
                    });
                }
                for p in d.page..d.page + d.pages(self.payload) {
                    data_pages.insert(p);
                }
            }
            return Ok(());
        }
        let level = node.level();
        for i in 0..node.len() {
            let c = node.child(i);
            let next_hi = (i + 1 < node.len()).then(|| node.key(i + 1)).or(hi);
            let child_lo = if i == 0 { lo } else { Some(node.key(i)) };
            let child_level = self.node(c).map(|n| n.level()).ok();
            if child_level.is_some_and(|l| l + 1 != level) {
                damage.push(Damage {
                    offset: c.page * pb,
                    what: format!(
                        "{}: index node at page {} has level {:?}, expected {}",
                        self.name,
                        c.page,
                        child_level,
                        level - 1
                    ),
                });
                continue;
            }
            self.check_node(c, child_lo, next_hi, damage, keys, data_pages)?;
        }
        Ok(())
    }

    pub fn name(&self) -> &str {
        &self.name
    }
}

/// The data-page staging buffer is kept between commits up to this size (a commit of the
/// usual thousand 1-KiB documents stages about 1 MiB).
const PAGE_BUF_KEEP_BYTES: usize = 16 << 20;

/// A key and its value.
pub type KeyValue = (Vec<u8>, Vec<u8>);
/// A key and its new value (`None`: deleted).
type PendingOp = (Vec<u8>, Option<Vec<u8>>);

/// What a commit also does.
#[derive(Clone, Copy, Default)]
struct CommitKind {
    /// Trim the pages it frees (a compaction batch frees whole pages).
    trim: bool,
    /// It ends a compaction pass (generation + 1).
    pass_done: bool,
}

/// An ordered, lazy scan (see [`Store::scan`]).
pub struct Scan<'a> {
    store: &'a mut Store,
    /// Path from the root: node and the index of the next entry to visit.
    stack: Vec<(NodeRef, usize)>,
    end: Bound<Vec<u8>>,
    pending: std::iter::Peekable<std::vec::IntoIter<PendingOp>>,
    tree_next: Option<(Vec<u8>, DocPtr)>,
    done: bool,
}

impl Scan<'_> {
    fn seek(&mut self, start: &Bound<Vec<u8>>) -> Result<(), EngineError> {
        let Some(mut ptr) = self.store.root else {
            return Ok(());
        };
        let key: &[u8] = match start {
            Bound::Included(k) | Bound::Excluded(k) => k,
            Bound::Unbounded => &[],
        };
        let mut level = None;
        loop {
            let node = self.store.node_at(ptr, level)?;
            if node.level() == 0 {
                let i = match (node.search(key), start) {
                    (Ok(i), Bound::Excluded(_)) => i + 1,
                    (Ok(i), _) | (Err(i), _) => i,
                };
                self.stack.push((node, i));
                return self.advance();
            }
            let i = node.child_index(key);
            ptr = node.child(i);
            level = Some(node.level() - 1);
            self.stack.push((node, i + 1));
        }
    }

    /// Put the next tree entry (if any, within the end bound) in `tree_next`.
    fn advance(&mut self) -> Result<(), EngineError> {
        self.tree_next = None;
        while let Some((node, i)) = self.stack.last_mut() {
            if *i >= node.len() {
                self.stack.pop();
                continue;
            }
            if node.level() == 0 {
                let (k, p) = (node.key(*i).to_vec(), node.doc(*i));
                *i += 1;
                let within = match &self.end {
                    Bound::Included(end) => k <= *end,
                    Bound::Excluded(end) => k < *end,
                    Bound::Unbounded => true,
                };
                if within {
                    self.tree_next = Some((k, p));
                } else {
                    self.stack.clear();
                }
                return Ok(());
            }
            let (c, level) = (node.child(*i), node.level());
            *i += 1;
            let child = self.store.node_at(c, Some(level - 1))?;
            self.stack.push((child, 0));
        }
        Ok(())
    }

    fn step(&mut self) -> Result<Option<KeyValue>, EngineError> {
        loop {
            let take_pending = match (self.pending.peek(), &self.tree_next) {
                (None, None) => return Ok(None),
                (Some(_), None) => true,
                (None, Some(_)) => false,
                (Some((pk, _)), Some((tk, _))) => pk <= tk,
            };
            if take_pending {
                let (k, v) = self.pending.next().expect("peeked");
                if self.tree_next.as_ref().is_some_and(|(tk, _)| *tk == k) {
                    self.advance()?;
                }
                match v {
                    Some(v) => return Ok(Some((k, v))),
                    None => continue,
                }
            }
            let (k, p) = self.tree_next.take().expect("checked");
            let v = self.store.doc_value(&k, p)?;
            self.advance()?;
            return Ok(Some((k, v)));
        }
    }
}

impl Iterator for Scan<'_> {
    type Item = Result<(Vec<u8>, Vec<u8>), EngineError>;

    fn next(&mut self) -> Option<Self::Item> {
        if self.done {
            return None;
        }
        match self.step() {
            Ok(Some(kv)) => Some(Ok(kv)),
            Ok(None) => {
                self.done = true;
                None
            }
            Err(e) => {
                self.done = true;
                Some(Err(e))
            }
        }
    }
}
