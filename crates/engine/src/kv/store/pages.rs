//! The store's pages on the pager: sealing and writing runs with their data type's hint,
//! the cache's write-through rule per page type, and verified reads of sealed pages, index
//! nodes and documents.

use super::*;

/// A decoded page in the pager's cache.
pub(super) enum Cached {
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
pub(super) struct NodeRef(pub(super) Rc<Cached>);

impl NodeRef {
    pub(super) fn new(view: NodeView) -> NodeRef {
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

impl Store {
    pub(super) fn kv_err(&self, page: u64, what: &str, e: FormatError) -> EngineError {
        let base = page * self.pager.page_bytes() as u64 + HEADER_BYTES as u64;
        EngineError::Kv {
            place: format!("{}: {what} at page {page}", self.name),
            error: e.rebase(base),
        }
    }

    pub(super) fn seal(&self, buf: &mut [u8], kind: PageKind, page: u64, body: &[u8]) {
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
    pub(super) fn write_pages(
        &mut self,
        first: u64,
        images: &[u8],
        t: DataType,
    ) -> Result<(), EngineError> {
        self.write_runs(&[(first, images)], t)
    }

    /// Write runs of whole page images, (first page, images), all in flight at once, with the
    /// type's hint; no cached copy is left stale. The callers of data and index pages cache
    /// the new forms themselves (a commit's pages are the ones read next): `write_data_run`
    /// keeps every data page it writes, so those are left alone; `write_staged` keeps
    /// single-page nodes only, so an index page's old form is discarded (rebuilding it from
    /// the image would cost a crc and a copy, and be replaced at once). Other pages (header,
    /// superblock) get their cached copy rebuilt from the image.
    pub(super) fn write_runs(
        &mut self,
        runs: &[(u64, &[u8])],
        t: DataType,
    ) -> Result<(), EngineError> {
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

    pub(super) fn write_superblock(
        &mut self,
        seq: u64,
        header_page: u64,
    ) -> Result<(), EngineError> {
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
    pub(super) fn raw(
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

    pub(super) fn node(&mut self, ptr: NodePtr) -> Result<NodeRef, EngineError> {
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
    pub(super) fn with_doc<R>(
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
        let e = FormatError::Field {
            structure: "document",
            field,
            offset: ptr.offset as u64,
            expected,
            found,
        };
        Err(self.kv_err(ptr.page, "document", e))
    }

    /// Seal and write data-page payloads to pages `base..`, then cache every one of them
    /// (`write_runs` relies on that: it leaves data pages' cached forms to this function).
    pub(super) fn write_data_run(
        &mut self,
        base: u64,
        pages: &[Vec<u8>],
    ) -> Result<(), EngineError> {
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

    pub(super) fn write_staged(&mut self) -> Result<(), EngineError> {
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
}
