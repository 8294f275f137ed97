//! Incremental compaction: a pass walks the data pages in device order, a batch at a time,
//! and re-puts the live documents of every page that holds waste (dead documents, or room
//! left empty) with their current values. A batch rides on a commit (the user's pending
//! writes and the batch's copies go out as one commit), so readers and writers wait at most
//! one batch, and every state on the device is an ordinary commit: a crash mid-pass recovers
//! like any crash, and the pass starts over when the stale share next passes the threshold.
//!
//! A page a batch finished has no live document left that started on it, so it is released
//! with the commit and reused (and trimmed) once that commit is durable: the footprint grows
//! by at most one batch while a pass runs. Documents written after a pass began (its own
//! copies included) are left alone, so a pass ends even under endless updates.

use super::{CommitKind, PendingOp, StaleEstimate, Store};
use crate::error::EngineError;
use crate::kv::alloc::FIRST_LOG_PAGE;
use crate::kv::format::{self, data_page_docs, DocPtr};

/// What a compaction policy sees of the store when it chooses.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Space {
    /// Bytes of the documents the index points at.
    pub live_bytes: u64,
    /// Bytes of data pages in use that hold no live document (dead documents, empty room).
    pub stale_bytes: u64,
    /// Pages an allocation can take now.
    pub free_pages: u64,
    pub capacity_pages: u64,
}

/// One data page as the page choice sees it: documents that start on it, how many of them
/// the index still points at, and whether it has no room left for another document.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PageUse {
    pub docs: usize,
    pub live_docs: usize,
    pub full: bool,
}

/// A policy's answer at a commit with no pass under way.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Choice {
    DoNothing,
    /// Start a pass over the data pages (it goes on one batch per commit).
    Compact,
}

/// When to compact and which pages to clean: the policy. The mechanism (`Store`'s passes and
/// batches) applies whichever policy it holds and knows nothing of its rule.
pub trait CompactionPolicy {
    /// Whether a pass starts now.
    fn choose(&self, space: &Space) -> Choice;
    /// Whether a data page is worth cleaning (its live documents re-put, the page given back).
    fn clean(&self, page: &PageUse) -> bool;
}

/// The default policy: compact once stale bytes pass a share of all data bytes and a
/// minimum (`Options::compact_threshold`, `compact_min_bytes`); clean every page with waste
/// (a dead document, or room left empty).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct StaleShare {
    /// Stale / (live + stale) above which a pass starts (0..=1; 1: never).
    pub threshold: f64,
    pub min_bytes: u64,
}

impl StaleShare {
    pub fn new(threshold: f64, min_bytes: u64) -> StaleShare {
        assert!(
            (0.0..=1.0).contains(&threshold),
            "a share of stale bytes is 0..=1, got {threshold} (Store::open refuses it)"
        );
        StaleShare {
            threshold,
            min_bytes,
        }
    }
}

impl CompactionPolicy for StaleShare {
    fn choose(&self, space: &Space) -> Choice {
        let total = space.stale_bytes + space.live_bytes;
        let due = self.threshold < 1.0
            && space.stale_bytes >= self.min_bytes
            && (space.stale_bytes as f64) > self.threshold * total as f64;
        if due {
            Choice::Compact
        } else {
            Choice::DoNothing
        }
    }

    fn clean(&self, page: &PageUse) -> bool {
        page.live_docs < page.docs || !page.full
    }
}

/// A compaction pass under way.
#[derive(Clone, Copy, Debug)]
pub(super) struct Pass {
    /// The next data page to look at.
    next_page: u64,
    /// The pass ends here: the footprint when it began.
    end_page: u64,
    /// Documents with a higher sequence number were written during the pass: left alone.
    start_doc_seq: u64,
}

/// How a batch left its pass.
pub(super) enum BatchEnd {
    Continue(Pass),
    /// The pass looked at every page (generation + 1 with this commit).
    Done,
    /// Not even one page's documents fit the free space: the pass is given up.
    Abandoned,
}

/// A page's documents that the index still points at: (key, value, where).
type LiveDocs = Vec<(Vec<u8>, Vec<u8>, DocPtr)>;

impl Store {
    /// The store's space as a policy sees it.
    pub fn space(&self) -> Space {
        assert!(
            self.alloc.free_pages() <= self.alloc.capacity(),
            "free pages are pages"
        );
        let (live_bytes, stale_bytes) = match self.opts.stale_estimate {
            StaleEstimate::DataPages => (self.stats.live_bytes, self.stale_bytes()),
            StaleEstimate::FileSize => self.file_size_estimate(),
        };
        Space {
            live_bytes,
            stale_bytes,
            free_pages: self.alloc.free_pages(),
            capacity_pages: self.alloc.capacity(),
        }
    }

    /// Whether the policy starts a pass now.
    pub(super) fn should_compact(&self) -> bool {
        self.policy.choose(&self.space()) == Choice::Compact
    }

    /// Compact by `policy` from now on (the default: [`StaleShare`] from the options).
    pub fn set_compaction_policy(&mut self, policy: Box<dyn CompactionPolicy>) {
        self.policy = policy;
    }

    pub(super) fn start_compaction(&mut self) {
        assert!(self.compaction.is_none(), "one pass at a time");
        self.compaction = Some(Pass {
            next_page: FIRST_LOG_PAGE,
            end_page: self.alloc.end(),
            start_doc_seq: self.doc_seq,
        });
    }

    /// Run one compaction batch now (starting a pass if none is under way), in one commit
    /// with whatever is pending. Returns whether the pass goes on.
    pub fn compact_step(&mut self) -> Result<bool, EngineError> {
        self.refuse()?;
        if self.compaction.is_none() {
            self.start_compaction();
        }
        self.commit_with_batch()?;
        Ok(self.compaction.is_some())
    }

    /// A whole compaction pass, batch after batch (each one commit): every page with waste
    /// has its live documents copied into fresh space and is given back.
    pub fn compact(&mut self) -> Result<(), EngineError> {
        while self.compact_step()? {}
        assert!(self.compaction.is_none(), "a whole pass ends its pass");
        Ok(())
    }

    /// Add the next batch's copies to `ops` (sorted, keys of `ops` left to their new value):
    /// the live documents of the pages from the pass's cursor on, page by page, until
    /// `compact_batch_bytes` (or twice what `ops` write) are moved.
    pub(super) fn compaction_batch(
        &mut self,
        mut pass: Pass,
        ops: &mut Vec<PendingOp>,
    ) -> Result<(BatchEnd, CommitKind), EngineError> {
        let own: u64 = ops
            .iter()
            .map(|(k, v)| (format::DOC_MIN_BYTES + k.len() + v.as_ref().map_or(0, Vec::len)) as u64)
            .sum();
        let pb = self.pager.page_bytes() as u64;
        // A batch is at most a sixteenth of the store: on a small one a fixed MiB would be the
        // whole store in one commit (and one wait).
        let budget = self
            .opts
            .compact_batch_bytes
            .min(self.alloc.capacity() * pb / 16)
            .max(2 * own)
            .max(1);
        // Pages only read count too: a long clean stretch is not read in one batch.
        let look_max = (budget / pb).max(16) * 4;
        let room = (self.payload - format::DATA_PAGE_HEAD_BYTES - format::DOC_HEAD_BYTES) as u64;
        let pages_for = |bytes: u64| bytes / room + bytes / room / 8 + 2;
        assert!(
            budget >= 1 && look_max >= 16,
            "a batch may move and look at something"
        );
        let (mut moved, mut looked, mut stuck) = (0u64, 0u64, false);
        let mut copies: Vec<PendingOp> = Vec::new();
        let end = pass.end_page.min(self.alloc.end());
        while pass.next_page < end && moved < budget && looked < look_max {
            let p = pass.next_page;
            if !self.alloc.is_data(p) {
                pass.next_page += 1;
                continue;
            }
            looked += 1;
            let live = match self.page_to_clean(p, pass.start_doc_seq)? {
                Some(live) => live,
                None => {
                    pass.next_page += 1;
                    continue;
                }
            };
            let bytes: u64 = live.iter().map(|(_, _, d)| d.len as u64).sum();
            // Index nodes and the header come on top: a margin of 64 pages.
            if pages_for(own + moved + bytes) + 64 > self.alloc.free_pages() {
                stuck = moved == 0;
                break;
            }
            for (k, v, d) in live {
                if ops
                    .binary_search_by(|(ok, _)| ok.as_slice().cmp(&k))
                    .is_err()
                {
                    moved += d.len as u64;
                    copies.push((k, Some(v)));
                }
            }
            pass.next_page += 1;
        }
        assert!(
            looked <= look_max,
            "a batch looks at {looked} pages, at most {look_max}"
        );
        let end = if pass.next_page >= end {
            BatchEnd::Done
        } else if stuck {
            BatchEnd::Abandoned
        } else {
            BatchEnd::Continue(pass)
        };
        let kind = CommitKind {
            trim: true,
            pass_done: matches!(end, BatchEnd::Done),
        };
        assert!(
            copies.iter().all(|(_, v)| v.is_some()),
            "compaction copies live documents, never deletes"
        );
        ops.extend(copies);
        ops.sort_by(|a, b| a.0.cmp(&b.0));
        Ok((end, kind))
    }

    /// The live documents that start on data page `p`, when the page holds waste and was
    /// written before the pass began (None: leave the page where it is). A dead document's
    /// later pages may already hold something else: only live documents are read whole.
    fn page_to_clean(
        &mut self,
        p: u64,
        start_doc_seq: u64,
    ) -> Result<Option<LiveDocs>, EngineError> {
        // The page's payload lent (from its checked image: no decoded copy is made).
        let read = self.read_data(p, |payload| {
            let docs = data_page_docs(payload)?;
            let Some(last) = docs.last() else {
                return Ok(None); // only the rest of a document begun earlier
            };
            if docs[0].head.seq > start_doc_seq {
                return Ok(None);
            }
            let used = last.offset as usize + last.head.encoded_len();
            let full = !last.complete || used + format::DOC_HEAD_BYTES > payload.len();
            // (where, its key when the key lies on this page)
            let found: Vec<(DocPtr, Option<Vec<u8>>)> = docs
                .iter()
                .filter(|d| !d.head.tombstone)
                .map(|d| {
                    let at = d.offset as usize + format::DOC_HEAD_BYTES;
                    let key = payload.get(at..at + d.head.key_len).map(<[u8]>::to_vec);
                    let ptr = DocPtr {
                        page: p,
                        offset: d.offset,
                        len: d.head.encoded_len() as u32,
                    };
                    (ptr, key)
                })
                .collect();
            Ok(Some((docs.len(), full, found)))
        })?;
        let Some((docs, full, found)) =
            read.map_err(|e: crate::error::Corruption| self.kv_err(p, "data page", e))?
        else {
            return Ok(None);
        };
        let found_docs = found.len();
        let mut live = Vec::with_capacity(found.len());
        for (ptr, key) in found {
            let key = match key {
                Some(k) => k,
                // A key running onto the next page: unreadable there means a dead document
                // (a live one left where it is is never lost; `check` reports damage).
                None => match self.with_doc(ptr, |doc| doc.key.to_vec()) {
                    Ok(k) => k,
                    Err(_) => continue,
                },
            };
            if self.lookup(&key)? == Some(ptr) {
                let v = self.doc_value(&key, ptr)?;
                live.push((key, v, ptr));
            }
        }
        assert!(
            live.len() <= found_docs,
            "live documents are among those found"
        );
        let page_use = PageUse {
            docs,
            live_docs: live.len(),
            full,
        };
        assert!(
            page_use.live_docs <= page_use.docs,
            "{page_use:?} on page {p}"
        );
        Ok(self.policy.clean(&page_use).then_some(live))
    }
}
