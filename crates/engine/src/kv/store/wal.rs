//! Write path `wal` (ForestDB's): a commit appends its documents (each one a WAL entry; a
//! delete a tombstone document), then a DB header carrying a [`WalRecord`] that lists the
//! data runs it appended, then the superblock slot. The index is not touched: an in-memory
//! WAL index (key -> newest document) answers reads of keys not yet in the tree. Once
//! `Options::wal_flush_docs` documents are in the WAL (and at close, and with every
//! compaction batch, whose freed pages the tree must stop reaching), the commit *flushes*:
//! the WAL entries are applied to the copy-on-write tree in one pass (changed nodes
//! appended) and the header says so. Recovery walks the headers back from the newest to the
//! last flushing one and replays the documents of the runs listed after it.
//!
//! Space: every page the chain of unflushed headers reaches (those headers, and every
//! document they list, superseded or not) stays counted until the flush, so nothing
//! recovery may read is reused before a flush is durable.

use super::*;
use crate::pager::Keep;
use format::WalRecord;

/// How a commit reaches the device (`Options::write_path`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum WritePath {
    /// Copy-on-write per commit: the index's changed root-to-leaf paths at every commit.
    /// Fits few, large commits, and stores read mostly at open (no WAL to replay).
    #[default]
    Cow,
    /// ForestDB's: documents and a header per commit, the index only at WAL flushes. Fits
    /// many small commits (index writes amortized over `wal_flush_docs` documents).
    Wal,
}

impl WritePath {
    pub const ALL: [WritePath; 2] = [WritePath::Cow, WritePath::Wal];

    pub fn name(self) -> &'static str {
        match self {
            WritePath::Cow => "cow",
            WritePath::Wal => "wal",
        }
    }

    /// The path named `s` (`cow`, `wal`).
    pub fn parse(s: &str) -> Option<WritePath> {
        WritePath::ALL.into_iter().find(|p| p.name() == s)
    }
}

/// ForestDB's WAL flush threshold, in documents.
pub const WAL_FLUSH_DOCS_DEFAULT: u64 = 4096;

/// One WAL entry: the key's newest document.
#[derive(Clone, Copy, Debug)]
pub(super) struct WalEntry {
    ptr: DocPtr,
    tombstone: bool,
}

/// The in-memory WAL index and what it holds on the device.
#[derive(Debug, Default)]
pub(super) struct Wal {
    entries: BTreeMap<Vec<u8>, WalEntry>,
    /// Documents replaced inside the WAL window: counted until the flush (recovery reads them).
    superseded: Vec<DocPtr>,
    /// Header pages of the commits since the last flush but the newest (recovery walks them).
    headers: Vec<u64>,
    /// Documents appended since the last flush.
    docs: u64,
    /// Bytes of the documents the WAL index points at (not yet in the tree's live bytes).
    bytes: u64,
    /// Data runs the commit being built appended: (first page, pages).
    runs: Vec<(u64, u32)>,
}

impl WalEntry {
    /// The key's document, None when the entry deletes it.
    pub(super) fn doc(&self) -> Option<DocPtr> {
        (!self.tombstone).then_some(self.ptr)
    }
}

impl Store {
    /// The WAL's index, lent out (to a scan that walks it beside the tree); put it back with
    /// [`Store::wal_put_entries`].
    pub(super) fn wal_take_entries(&mut self) -> BTreeMap<Vec<u8>, WalEntry> {
        std::mem::take(&mut self.wal.entries)
    }

    pub(super) fn wal_put_entries(&mut self, entries: BTreeMap<Vec<u8>, WalEntry>) {
        assert!(self.wal.entries.is_empty(), "the index was lent out");
        self.wal.entries = entries;
    }

    pub(super) fn wal_on(&self) -> bool {
        self.opts.write_path == WritePath::Wal
    }

    /// The WAL's answer for `key`: `Some(None)` deleted, `Some(Some(ptr))` its document,
    /// `None` not in the WAL (ask the tree).
    pub(super) fn wal_lookup(&self, key: &[u8]) -> Option<Option<DocPtr>> {
        self.wal
            .entries
            .get(key)
            .map(|e| (!e.tombstone).then_some(e.ptr))
    }

    /// Document bytes the WAL index points at (live, but not yet in the tree's stats).
    pub(super) fn wal_live_bytes(&self) -> u64 {
        self.wal.bytes
    }

    /// Entries in the WAL index.
    pub fn wal_entries(&self) -> u64 {
        self.wal.entries.len() as u64
    }

    /// Tombstones among the WAL index's entries (deletes not yet in the tree).
    pub(super) fn wal_tombstones(&self) -> u64 {
        self.wal.entries.values().filter(|e| e.tombstone).count() as u64
    }

    /// The documents only the WAL index reaches (key, document), in key order.
    pub(super) fn wal_documents(&self) -> Vec<(Vec<u8>, DocPtr)> {
        self.wal
            .entries
            .iter()
            .filter(|(_, e)| !e.tombstone)
            .map(|(k, e)| (k.clone(), e.ptr))
            .collect()
    }

    /// A data run the commit being built appended.
    pub(super) fn wal_note_run(&mut self, base: u64, pages: u64) {
        if self.wal_on() && pages > 0 {
            let pages = u32::try_from(pages).expect("a run of at most u32::MAX pages");
            self.wal.runs.push((base, pages));
        }
    }

    /// Apply the commit's documents (`tree_ops`, `tombstones` by index) to the index: to the
    /// WAL (path `wal`, flushing when due, or when `force`), or to the tree (path `cow`,
    /// with whatever a WAL replayed at open still holds). Returns whether the tree changed.
    pub(super) fn wal_apply(
        &mut self,
        tree_ops: &[(Vec<u8>, Option<DocPtr>)],
        tombstones: &[bool],
        force: bool,
    ) -> Result<bool, EngineError> {
        if !self.wal_on() {
            self.wal_flush(tree_ops)?;
            return Ok(true);
        }
        assert_eq!(tree_ops.len(), tombstones.len(), "a flag per operation");
        for ((k, p), &tombstone) in tree_ops.iter().zip(tombstones) {
            let ptr = p.expect("path wal writes a document for every operation");
            self.wal_insert(k.clone(), WalEntry { ptr, tombstone });
        }
        let record_bytes = format::DB_HEADER_BYTES
            + format::WAL_RECORD_MIN_BYTES
            + format::WAL_RUN_BYTES * self.wal.runs.len();
        let due = self.wal.docs >= self.opts.wal_flush_docs || record_bytes > self.payload;
        if due || force {
            self.wal_flush(&[])?;
            return Ok(true);
        }
        Ok(false)
    }

    fn wal_insert(&mut self, key: Vec<u8>, e: WalEntry) {
        self.wal.docs += 1;
        if !e.tombstone {
            self.wal.bytes += e.ptr.len as u64;
        }
        if let Some(old) = self.wal.entries.insert(key, e) {
            if !old.tombstone {
                self.wal.bytes -= old.ptr.len as u64;
            }
            self.wal.superseded.push(old.ptr);
        }
    }

    /// Apply every WAL entry, then `extra` (newer), to the tree; release what the WAL held.
    fn wal_flush(&mut self, extra: &[(Vec<u8>, Option<DocPtr>)]) -> Result<(), EngineError> {
        if self.wal.entries.is_empty() && self.wal.headers.is_empty() {
            return self.apply_tree(extra);
        }
        let wal = std::mem::take(&mut self.wal);
        let mut ops: BTreeMap<Vec<u8>, Option<DocPtr>> = BTreeMap::new();
        for (k, e) in wal.entries {
            if e.tombstone {
                self.alloc.drop_ref(e.ptr.page, e.ptr.pages(self.payload));
            }
            ops.insert(k, (!e.tombstone).then_some(e.ptr));
        }
        for (k, p) in extra {
            if let Some(Some(old)) = ops.insert(k.clone(), *p) {
                self.alloc.drop_ref(old.page, old.pages(self.payload));
            }
        }
        for d in wal.superseded {
            self.alloc.drop_ref(d.page, d.pages(self.payload));
        }
        for h in wal.headers {
            self.retire_header_page(h);
        }
        let ops: Vec<(Vec<u8>, Option<DocPtr>)> = ops.into_iter().collect();
        self.apply_tree(&ops)?;
        assert!(
            self.wal.entries.is_empty() && self.wal.docs == 0,
            "a flush empties the WAL"
        );
        self.wal.runs = wal.runs;
        Ok(())
    }

    /// The header page's payload: the header, and on path `wal` its WAL record.
    pub(super) fn wal_header_payload(&mut self, h: &DbHeader, flushed: bool) -> Vec<u8> {
        let mut out = h.encode().to_vec();
        let runs = std::mem::take(&mut self.wal.runs);
        if self.wal_on() {
            let rec = WalRecord {
                flushed,
                runs: if flushed { Vec::new() } else { runs },
            };
            rec.encode_into(&mut out);
        }
        assert!(
            out.len() <= self.payload,
            "a header and its record fit a page"
        );
        out
    }

    /// The previous commit's header page, once the new header is durable: released, or
    /// kept while the WAL chain still reaches it (path `wal`, no flush).
    pub(super) fn wal_retire_header(&mut self, old: u64, flushed: bool) {
        if old == NO_PAGE {
            return;
        }
        if self.wal_on() && !flushed {
            self.wal.headers.push(old);
        } else {
            self.retire_header_page(old);
        }
    }

    /// Header pages the WAL chain reaches (the commits since the last flush but the newest).
    pub(super) fn wal_headers(&self) -> &[u64] {
        &self.wal.headers
    }

    /// Commit what is pending and flush the WAL into the index in the same commit (ForestDB's
    /// manual WAL flush; `close` does it).
    pub fn flush_wal(&mut self) -> Result<(), EngineError> {
        self.refuse()?;
        self.commit()?;
        self.wal_flush_commit()
    }

    /// Flush what the WAL holds into the tree in one more commit (at close).
    pub(super) fn wal_flush_commit(&mut self) -> Result<(), EngineError> {
        if self.wal.entries.is_empty() && self.wal.superseded.is_empty() {
            return Ok(());
        }
        self.wal_force = true;
        let r = self.commit_with_batch();
        self.wal_force = false;
        r.map(|_| ())
    }

    /// Replay the WAL at open: the documents of every commit after the last flushing one,
    /// oldest first, into the WAL index; every page the chain reaches counted.
    pub(super) fn wal_replay(&mut self) -> Result<(), EngineError> {
        let mut chain: Vec<Vec<(u64, u32)>> = Vec::new();
        let mut page = self.header_page;
        while page != NO_PAGE {
            let payload = self
                .pager
                .read_verified(page, PageKind::KvHeader, "DB header")?;
            let h = DbHeader::decode(&payload).map_err(|e| self.kv_err(page, "DB header", e))?;
            let rest = payload.get(format::DB_HEADER_BYTES..).unwrap_or(&[]);
            let rec = WalRecord::decode(rest).map_err(|e| self.kv_err(page, "WAL record", e))?;
            if page != self.header_page {
                self.alloc.add_ref(page, 1, false);
                self.wal.headers.push(page);
            }
            match rec {
                Some(r) if !r.flushed => chain.push(r.runs),
                _ => break,
            }
            page = h.prev_header_page;
        }
        for runs in chain.into_iter().rev() {
            for (first, n) in runs {
                for p in first..first + n as u64 {
                    self.wal_replay_page(p)?;
                }
            }
        }
        Ok(())
    }

    fn wal_replay_page(&mut self, page: u64) -> Result<(), EngineError> {
        let c = self.raw(page, PageKind::KvData, "data")?;
        let starts = match &*c {
            Cached::Raw { payload, .. } => {
                data_page_docs(payload).map_err(|e| self.kv_err(page, "data page", e))?
            }
            Cached::Node(..) => Vec::new(),
        };
        drop(c);
        for d in starts {
            let ptr = DocPtr {
                page,
                offset: d.offset,
                len: d.head.encoded_len() as u32,
            };
            let key = self.with_doc(ptr, |doc| doc.key.to_vec())?;
            self.alloc.add_ref(ptr.page, ptr.pages(self.payload), true);
            self.wal_insert(
                key,
                WalEntry {
                    ptr,
                    tombstone: d.head.tombstone,
                },
            );
        }
        Ok(())
    }

    /// The writes a scan of `range` sees over the tree: the WAL's entries (values read),
    /// overlaid by the pending batch; sorted by key.
    pub(super) fn scan_overlay(
        &mut self,
        range: (Bound<Vec<u8>>, Bound<Vec<u8>>),
    ) -> Result<Vec<PendingOp>, EngineError> {
        let wal: Vec<(Vec<u8>, WalEntry)> = self
            .wal
            .entries
            .range::<Vec<u8>, _>(range.clone())
            .map(|(k, e)| (k.clone(), *e))
            .collect();
        let mut out: BTreeMap<Vec<u8>, Option<Vec<u8>>> = BTreeMap::new();
        for (k, e) in wal {
            let v = match e.tombstone {
                true => None,
                false => Some(self.doc_value(&k, e.ptr)?),
            };
            out.insert(k, v);
        }
        for (k, v) in self.pending.range::<Vec<u8>, _>(range) {
            out.insert(k.clone(), v.clone());
        }
        Ok(out.into_iter().collect())
    }

    /// Write the commit's header page (with its WAL record on path `wal`).
    pub(super) fn write_header_page(
        &mut self,
        page: u64,
        h: &DbHeader,
        flushed: bool,
    ) -> Result<(), EngineError> {
        let payload = self.wal_header_payload(h, flushed);
        self.write_typed(&[(page, &payload)], DataType::Header, Keep::Resident)
    }
}

impl Store {
    /// With `Options::next_fit`, allocate next fit from after the newest header (ForestDB's
    /// append-only file, wrapping to the lowest free pages at the device's end).
    pub(super) fn wal_next_fit(&mut self) {
        if self.opts.next_fit {
            let from = match self.header_page {
                NO_PAGE => FIRST_LOG_PAGE,
                p => p + 1,
            };
            self.alloc.set_next_fit(from);
        }
    }
}
