//! The store's pages on the pager: sealing and writing runs with their data type's hint,
//! the cache's write-through rule per page type, and verified reads of sealed pages, index
//! nodes and documents.

use super::kids::Kids;
use super::*;
use crate::pager::{Keep, PageForm, PageWrite};
use blockdev::WriteHint;
use format::DocGather;

/// A decoded page in the pager's cache. The node is inline, not boxed: a lookup follows one
/// pointer per level (the `Rc`), where a box would add a dependent memory miss per level.
#[allow(clippy::large_enum_variant)]
pub(super) enum Cached {
    /// An index node, searched in place (its encoded length is what a pointer must say), and
    /// its handles to its children's cached nodes (`kids`; an inner node's).
    Node(NodeView, Kids),
    Raw {
        kind: PageKind,
        payload: Vec<u8>,
    },
}

/// An index node held by its cache entry (one `Rc`, the node inline: one pointer to follow
/// per level of a lookup).
#[derive(Clone)]
pub(super) struct NodeRef(pub(super) Rc<Cached>);

impl NodeRef {
    pub(super) fn new(view: NodeView) -> NodeRef {
        assert!(
            view.encoded_len() >= format::NODE_MIN_BYTES,
            "a node view is a whole node"
        );
        NodeRef(Rc::new(Cached::Node(view, Kids::default())))
    }

    /// An index node the cache holds (`c` must be one).
    pub(super) fn of(c: Rc<Cached>) -> NodeRef {
        assert!(
            matches!(*c, Cached::Node(..)),
            "a NodeRef holds an index node"
        );
        NodeRef(c)
    }

    /// The node's handles to its children's cached nodes.
    pub(super) fn kids(&self) -> &Kids {
        match &*self.0 {
            Cached::Node(_, k) => k,
            // Every NodeRef is made of a `Cached::Node` (`new`, `of`, `Store::node`).
            Cached::Raw { .. } => unreachable!("a NodeRef holds an index node"),
        }
    }
}

impl std::ops::Deref for NodeRef {
    type Target = NodeView;
    fn deref(&self) -> &NodeView {
        match &*self.0 {
            Cached::Node(v, _) => v,
            // Every NodeRef is made of a `Cached::Node` (`new`, `Store::node`).
            Cached::Raw { .. } => unreachable!("a NodeRef holds an index node"),
        }
    }
}

impl PageForm for Cached {
    fn kind(&self) -> PageKind {
        match self {
            Cached::Node(..) => PageKind::KvIndex,
            Cached::Raw { kind, .. } => *kind,
        }
    }
    fn from_payload(kind: PageKind, payload: &[u8]) -> Cached {
        Cached::Raw {
            kind,
            payload: payload.to_vec(),
        }
    }
    fn payload(&self) -> Option<&[u8]> {
        match self {
            Cached::Raw { payload, .. } => Some(payload),
            Cached::Node(..) => None,
        }
    }
}

impl Store {
    /// `e` with its place in the store: damage decoded from the payload of page `page` gets
    /// the page, its file offset and the store's name (and `what` was being read, where the
    /// damaged structure is another); damage already placed and refusals pass through.
    pub(super) fn kv_err(&self, page: u64, what: &str, e: impl Into<EngineError>) -> EngineError {
        match e.into() {
            // Not yet placed: a decoder's offset, relative to the payload.
            EngineError::Corrupt(c) if c.page.is_none() => {
                let base = page * self.pager.page_bytes() as u64 + HEADER_BYTES as u64;
                let mut c = c.rebase(base).on_page(page).in_file(&self.name);
                if c.meaning_of().is_none() && c.structure.to_string() != what {
                    c = c.meaning(format!("reading the {what}"));
                }
                assert_eq!(c.page, Some(page), "placed on its page");
                c.into()
            }
            other => other,
        }
    }

    /// The write hint of a data type's pages: the stream policy's stream, and the type's
    /// write life for real files (fcntl(F_SET_RW_HINT) on a change of type); the `none`
    /// policy gives no hints at all.
    pub(super) fn hint(&self, t: DataType) -> WriteHint {
        match self.opts.streams {
            // The class (file 0: a partition stamps its own) and the type's write life ride
            // along (fcntl(F_SET_RW_HINT) on a real file); the `none` policy gives no hints.
            NamedPolicy::NoStreams => WriteHint::NONE,
            p => WriteHint::classed(p.stream(t), policy::streams::WriteClass::new(0, t)),
        }
    }

    /// How pages of data type `t` are sealed and placed (versioned with the commit being
    /// built) and what the cache keeps of them.
    pub(super) fn page_write(&self, t: DataType, keep: Keep) -> PageWrite {
        assert!(
            !self.broken,
            "no write after a failed one (the store refuses until reopened)"
        );
        PageWrite {
            kind: page_kind(t),
            version: self.commit_seq + 1,
            hint: self.hint(t),
            keep,
        }
    }

    /// Seal and write `items` (first page, payload) as pages of data type `t` through the
    /// pager, which caches them by `keep`.
    pub(super) fn write_typed(
        &mut self,
        items: &[(u64, &[u8])],
        t: DataType,
        keep: Keep,
    ) -> Result<(), EngineError> {
        let (cap, slot_ok) = (self.alloc.capacity(), t == DataType::Superblock);
        assert!(
            items.iter().all(|&(p, b)| {
                (slot_ok || p >= FIRST_LOG_PAGE)
                    && p + (b.len().div_ceil(self.payload) as u64) <= cap
            }),
            "{t:?} pages inside the log"
        );
        let w = self.page_write(t, keep);
        let r = self
            .pager
            .write_pages::<Cached>(&mut self.page_buf, items, w);
        let pages: u64 = items
            .iter()
            .map(|(_, b)| b.len().div_ceil(self.payload) as u64)
            .sum();
        self.wrote(r, pages, t)
    }

    /// After a write of `pages` pages of type `t`: a failure breaks the store (its memory is
    /// ahead of the device); success counts them. The staging buffer is kept for the next
    /// commit unless one huge batch made it large.
    fn wrote(
        &mut self,
        r: Result<(), EngineError>,
        pages: u64,
        t: DataType,
    ) -> Result<(), EngineError> {
        if self.page_buf.capacity() > PAGE_BUF_KEEP_BYTES {
            self.page_buf = Vec::new();
        }
        if r.is_err() {
            self.broken = true;
        }
        r?;
        match t {
            DataType::Superblock => self.stats.pages.superblock += pages,
            DataType::Header => self.stats.pages.header += pages,
            DataType::Index => self.stats.pages.index += pages,
            DataType::Data => self.stats.pages.data += pages,
        }
        Ok(())
    }

    /// Publish the superblock of commit `seq` in its slot by the pager's slot protocol
    /// (flush, slot `seq % 2`, flush); commit 0, a new store's first root, without the
    /// first flush.
    pub(super) fn publish_superblock(
        &mut self,
        seq: u64,
        header_page: u64,
    ) -> Result<(), EngineError> {
        let sb = Superblock {
            commit_seq: seq,
            header_page,
            page_bytes: self.pager.page_bytes() as u32,
        };
        assert_eq!(
            self.slots.slot(seq),
            sb.slot() as u64,
            "slot protocol and format agree"
        );
        let w = self.page_write(DataType::Superblock, Keep::Resident);
        let (slots, pager, buf) = (self.slots, &mut self.pager, &mut self.page_buf);
        let r = match seq {
            0 => slots.write_page::<Cached>(pager, buf, seq, &sb.encode(), w),
            _ => slots.publish_page::<Cached>(pager, buf, seq, &sb.encode(), w),
        };
        self.wrote(r, 1, DataType::Superblock)
    }

    /// A sealed page of `kind` (verified and cached by the pager).
    pub(super) fn raw(
        &mut self,
        page: u64,
        kind: PageKind,
        what: &'static str,
    ) -> Result<Rc<Cached>, EngineError> {
        if page >= self.alloc.capacity() {
            return Err(EngineError::corrupt(
                Structure::of_kind(kind),
                page,
                Fault::OutOfRange {
                    what: "page of a pointer",
                    limit: self.alloc.capacity(),
                    found: page,
                },
            ));
        }
        self.pager.read_page::<Cached>(page, kind, what)
    }

    /// The node at `ptr`, which must be at `level` (a child is one level below its parent:
    /// a damaged pointer can neither loop nor skip levels).
    pub(super) fn node_at(
        &mut self,
        ptr: NodePtr,
        level: Option<u8>,
    ) -> Result<NodeRef, EngineError> {
        let node = self.node(ptr)?;
        match level {
            Some(l) if node.level() != l => Err(self.kv_err(
                ptr.page,
                "index node",
                format::field_at(
                    Structure::IndexNode,
                    "level",
                    1,
                    format!("{l} (one below its parent)"),
                    node.level().to_string(),
                ),
            )),
            _ => Ok(node),
        }
    }

    pub(super) fn node(&mut self, ptr: NodePtr) -> Result<NodeRef, EngineError> {
        let n = ptr.pages(self.payload);
        if n == 1 {
            let c = self.raw(ptr.page, PageKind::KvIndex, "index node")?;
            let node = match &*c {
                Cached::Node(..) => NodeRef(c),
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
                    format::field_at(
                        Structure::NodePointer,
                        "len",
                        0,
                        node.encoded_len().to_string(),
                        ptr.len.to_string(),
                    ),
                ));
            }
            return Ok(node);
        }
        let mut pages = Vec::new();
        for p in ptr.page..ptr.page + n {
            match &*self.raw(p, PageKind::KvIndex, "index node")? {
                Cached::Raw { payload, .. } => pages.push(payload.clone()),
                Cached::Node(node, _) => pages.push(node.bytes().to_vec()),
            }
        }
        assert_eq!(pages.len() as u64, n, "every page of the node read");
        let slices: Vec<&[u8]> = pages.iter().map(|p| p.as_slice()).collect();
        let view = gather_node(&slices, ptr).map_err(|e| self.kv_err(ptr.page, "index node", e))?;
        Ok(NodeRef::new(view))
    }

    /// Data page `page`'s payload lent to `f` where the cache holds it (its checked image as
    /// it lies, or a decoded copy; see [`Pager::lend_payload`]): a hit when `f` accepts it.
    fn lend_data<R>(&mut self, page: u64, f: impl FnOnce(&[u8]) -> Option<R>) -> Option<R> {
        if page >= self.alloc.capacity() {
            return None;
        }
        self.pager
            .lend_payload::<Cached, R>(page, PageKind::KvData, f)
    }

    /// Data page `page`'s payload handed to `f`: lent from the cache, or read, verified and
    /// cached as its image alone (no decoded copy). A page past the device is an error.
    pub(super) fn read_data<R>(
        &mut self,
        page: u64,
        f: impl FnOnce(&[u8]) -> R,
    ) -> Result<R, EngineError> {
        if page >= self.alloc.capacity() {
            return Err(EngineError::corrupt(
                Structure::of_kind(PageKind::KvData),
                page,
                Fault::OutOfRange {
                    what: "page of a pointer",
                    limit: self.alloc.capacity(),
                    found: page,
                },
            ));
        }
        self.pager
            .read_payload::<Cached, R>(page, PageKind::KvData, "data", f)
    }

    /// The document at `ptr`, handed to `f` (borrowed from the cached pages where it lies in
    /// one; checked: page seals, continuation lengths, the document's crc).
    pub(super) fn with_doc<R>(
        &mut self,
        ptr: DocPtr,
        f: impl FnOnce(&Document<'_>) -> R,
    ) -> Result<R, EngineError> {
        let n = ptr.pages(self.payload);
        if n == 1 {
            // The common case: no allocation, the document borrowed from the cached page
            // image, whose seal was checked when it was read or written — on a hit without
            // even a reference count or a decoded copy to go through; a miss, or a document
            // that fails its checks, goes the long way (which reads, and reports the damage).
            let mut f = Some(f);
            let hit = self.lend_data(ptr.page, |payload| {
                let doc = format::document_in_verified_page(payload, ptr).ok()?;
                f.take().map(|f| f(&doc))
            });
            if let Some(r) = hit {
                return Ok(r);
            }
            let f = f.expect("f is taken only by a hit");
            let doc = self.read_data(ptr.page, |payload| {
                format::document_in_verified_page(payload, ptr).map(|doc| f(&doc))
            })?;
            return doc.map_err(|e| self.kv_err(ptr.page, "document", e));
        }
        // A spanning document: gathered into the store's buffer (kept from get to get), one
        // page at a time, each page's bytes copied from its cached frame in place.
        let mut buf = std::mem::take(&mut self.doc_buf);
        let r = self.gather_doc(ptr, n, &mut buf).map(|doc| f(&doc));
        if buf.capacity() <= DOC_BUF_KEEP_BYTES {
            self.doc_buf = buf;
        }
        r
    }

    /// The document at `ptr`, which spans `n` pages, gathered into `buf`: each page lent by
    /// the cache where it holds it (no reference count, no list of pages), else read (verified,
    /// cached; one pager lookup a page either way). Checked as `format::gather_document`
    /// checks: continuation lengths, the document's decoding and length (the seals were
    /// checked when the pages were read or written).
    fn gather_doc<'b>(
        &mut self,
        ptr: DocPtr,
        n: u64,
        buf: &'b mut Vec<u8>,
    ) -> Result<Document<'b>, EngineError> {
        assert!(n > 1, "a spanning document touches pages after its first");
        let mut g: Option<DocGather> = None;
        for p in ptr.page..ptr.page.saturating_add(n) {
            if g.is_some_and(|g| g.done(buf)) {
                break;
            }
            let lent = self.lend_data(p, |payload| Some(gather_step(g, payload, ptr, buf)));
            let stepped = match lent {
                Some(r) => r,
                None => self.read_data(p, |payload| gather_step(g, payload, ptr, buf))?,
            };
            g = Some(stepped.map_err(|e| self.kv_err(ptr.page, "document", e))?);
        }
        let g = g.expect("a document's first page is taken");
        g.document(buf, false)
            .map_err(|e| self.kv_err(ptr.page, "document", e))
    }

    /// The document at `ptr`, checked to carry `key`: its value.
    pub(super) fn doc_value(&mut self, key: &[u8], ptr: DocPtr) -> Result<Vec<u8>, EngineError> {
        self.doc_value_with(key, ptr, <[u8]>::to_vec)
    }

    /// The document at `ptr`, checked to carry `key`: its value handed to `f`.
    pub(super) fn doc_value_with<R>(
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
        let e = format::field_at(
            Structure::Document,
            field,
            ptr.offset as u64,
            expected,
            found,
        );
        Err(self.kv_err(ptr.page, "document", e))
    }

    /// Write data-page payloads to pages `base..`; the pager caches every one of them (the
    /// pages read next) as its sealed image, checked as written, which gets serve as it lies.
    /// Copies into the frames' page buffers, not the builder's pages: the frames' buffers are
    /// reused from frame to frame, and the builder's pages are freed together, which glibc's
    /// malloc serves much faster than long-lived pages allocated in between a commit's
    /// short-lived buffers (measured: keeping the builder's pages cost ~20 % more CPU in the
    /// update phase).
    pub(super) fn write_data_run(
        &mut self,
        base: u64,
        pages: &[Vec<u8>],
    ) -> Result<(), EngineError> {
        if pages.is_empty() {
            return Ok(());
        }
        let items: Vec<(u64, &[u8])> = (base..)
            .zip(pages)
            .map(|(p, b)| (p, b.as_slice()))
            .collect();
        self.write_typed(&items, DataType::Data, Keep::Images)
    }

    /// Write the commit's staged index nodes (consecutive ones as one I/O); the nodes of one
    /// page are cached decoded (the ones the next commit walks), other copies dropped.
    pub(super) fn write_staged(&mut self) -> Result<(), EngineError> {
        let mut staged = std::mem::take(&mut self.staged);
        staged.sort_by_key(|s| s.0);
        let items: Vec<(u64, &[u8])> = staged.iter().map(|(p, n)| (*p, n.bytes())).collect();
        if !items.is_empty() {
            self.write_typed(&items, DataType::Index, Keep::Nothing)?;
        }
        drop(items);
        for (page, node) in staged {
            if node.encoded_len() <= self.payload {
                self.pager.keep(page, node.0)?;
            }
        }
        Ok(())
    }
}

/// A spanning document's gathering after the payload of its next page (`g` None: its first).
fn gather_step(
    g: Option<DocGather>,
    payload: &[u8],
    ptr: DocPtr,
    buf: &mut Vec<u8>,
) -> Result<DocGather, Corruption> {
    match g {
        None => DocGather::start(payload, ptr, buf),
        Some(mut g) => g.take(payload, buf).map(|()| g),
    }
}

/// The page kind of a data type's pages.
fn page_kind(t: DataType) -> PageKind {
    match t {
        DataType::Superblock => PageKind::KvSuperblock,
        DataType::Header => PageKind::KvHeader,
        DataType::Index => PageKind::KvIndex,
        DataType::Data => PageKind::KvData,
    }
}
