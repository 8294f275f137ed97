//! Commit: documents as runs of data pages, the index along the changed paths, the DB
//! header, flush, the superblock slot, flush; then deferred trims and the cache's size.

use super::*;

/// What a commit also does.
#[derive(Clone, Copy, Default)]
pub(super) struct CommitKind {
    /// Trim the pages it frees (a compaction batch frees whole pages).
    pub(super) trim: bool,
    /// It ends a compaction pass (generation + 1).
    pub(super) pass_done: bool,
}

impl Store {
    /// Commit what is pending, with the next compaction batch (if a pass is under way).
    pub(super) fn commit_with_batch(&mut self) -> Result<u64, EngineError> {
        let ops: Vec<PendingOp> = std::mem::take(&mut self.pending).into_iter().collect();
        let before = self.commit_seq;
        self.commit_start_pages = self.log_pages_written();
        let r = self.commit_ops_and_batch(ops);
        if r.is_err() {
            self.broken = true;
        }
        // Commit sequence numbers grow by one per commit, and only a commit moves them.
        if let Ok(seq) = &r {
            assert_eq!(*seq, before + 1, "commit {seq} after commit {before}");
        }
        r
    }

    pub(super) fn commit_ops_and_batch(
        &mut self,
        mut ops: Vec<PendingOp>,
    ) -> Result<u64, EngineError> {
        let (end, kind) = match self.compaction.take() {
            Some(pass) => {
                let (end, kind) = self.compaction_batch(pass, &mut ops)?;
                (Some(end), kind)
            }
            None => (None, CommitKind::default()),
        };
        assert!(
            ops.windows(2).all(|w| w[0].0 < w[1].0),
            "a commit's operations are sorted by key, each key once"
        );
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

    pub(super) fn commit_ops(
        &mut self,
        ops: Vec<PendingOp>,
        kind: CommitKind,
    ) -> Result<u64, EngineError> {
        // 1. documents, as runs of data pages: one run while the free space has room for it
        // in one piece, else cut to the longest free runs (on a small store the free space is
        // fragmented by the pages compaction gave back; a document never straddles two runs).
        let room = (self.payload - format::DATA_PAGE_HEAD_BYTES) as u64;
        let mut dp = DataPages::new(self.payload).map_err(|e| self.kv_err(0, "data page", e))?;
        let mut tree_ops: Vec<(Vec<u8>, Option<DocPtr>)> = Vec::with_capacity(ops.len());
        // Path `wal` writes a tombstone document for a delete (recovery replays it).
        let tombstones: Vec<bool> = match self.wal_on() {
            true => ops.iter().map(|(_, v)| v.is_none()).collect(),
            false => Vec::new(),
        };
        let mut run_from = 0;
        let mut target = self.alloc.largest_run();
        for (k, v) in ops {
            let ptr = match v.is_some() || self.wal_on() {
                true => {
                    let bytes =
                        (format::DOC_MIN_BYTES + k.len() + v.as_ref().map_or(0, Vec::len)) as u64;
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
                        value: v.as_deref(),
                        seq: self.doc_seq,
                    };
                    Some(dp.push(&d).map_err(|e| self.kv_err(0, "document", e))?)
                }
                false => None,
            };
            tree_ops.push((k, ptr));
        }
        self.place_run(dp, &mut tree_ops[run_from..])?;
        assert!(
            tree_ops
                .iter()
                .flat_map(|(_, p)| p)
                .all(|p| p.page < self.alloc.end()),
            "every document placed inside the log"
        );
        self.finish_commit(&tree_ops, &tombstones, kind)
    }

    /// Allocate and write one run of data pages; turn its documents' pointers (`tree_ops`,
    /// page indexes in the run) into page numbers and count them.
    pub(super) fn place_run(
        &mut self,
        dp: DataPages,
        tree_ops: &mut [(Vec<u8>, Option<DocPtr>)],
    ) -> Result<(), EngineError> {
        let pages = dp.into_pages();
        assert!(
            pages.is_empty() || tree_ops.iter().any(|(_, p)| p.is_some()),
            "a run of data pages holds a document"
        );
        let base = if pages.is_empty() {
            0
        } else {
            self.alloc.alloc(pages.len() as u64)?
        };
        self.write_data_run(base, &pages)?;
        let run_pages = pages.len() as u64;
        self.wal_note_run(base, run_pages);
        drop(pages);
        for (_, p) in tree_ops.iter_mut() {
            if let Some(p) = p {
                assert!(
                    p.page < run_pages,
                    "document on page {} of a run of {run_pages}",
                    p.page
                );
                p.page += base;
                self.alloc.add_ref(p.page, p.pages(self.payload), true);
            }
        }
        Ok(())
    }

    /// Commit documents already written: the index (`tree_ops` applied), header, superblock.
    pub(super) fn finish_commit(
        &mut self,
        tree_ops: &[(Vec<u8>, Option<DocPtr>)],
        tombstones: &[bool],
        kind: CommitKind,
    ) -> Result<u64, EngineError> {
        // 2. the index along the changed paths (path `wal`: the WAL index, the tree at a flush).
        let kind = self.whole_file_kind(kind);
        let force = kind.trim || self.wal_force;
        let flushed = self.wal_apply(tree_ops, tombstones, force)?;
        self.write_staged()?;
        // 3. header, flush, superblock, flush.
        let seq = self.commit_seq + 1;
        if kind.pass_done {
            self.generation += 1;
        }
        let hp = self.alloc.alloc(1)?;
        assert!(
            hp >= FIRST_LOG_PAGE && hp != self.header_page,
            "a fresh header page"
        );
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
        self.write_header_page(hp, &h, flushed)?;
        self.publish_superblock(seq, hp)?;
        self.wal_retire_header(self.header_page, flushed);
        if kind.pass_done {
            // The new generation's header is durable: the old one's held headers die with it.
            self.release_held_headers();
            // ... and so do the pages its commits freed (`StalePages::Hold`).
            self.alloc.end_generation();
            // The new generation's file holds what this commit wrote.
            self.generation_start_pages = self.commit_start_pages;
        }
        self.header_page = hp;
        self.commit_seq = seq;
        let freed = self.alloc.commit_done();
        assert_eq!(self.alloc.refs(hp), 1, "the durable header holds its page");
        if kind.trim && !freed.is_empty() {
            assert!(
                self.trims.back().is_none_or(|(s, _)| *s < seq),
                "trims queue by commit"
            );
            self.trims.push_back((seq, freed));
        }
        self.trim_due(seq.saturating_sub(self.opts.trim_after_commits))?;
        self.fit_cache();
        Ok(seq)
    }

    /// Trim what commits up to `upto` freed and is free still.
    pub(super) fn trim_due(&mut self, upto: u64) -> Result<(), EngineError> {
        while self.trims.front().is_some_and(|(seq, _)| *seq <= upto) {
            let Some((_, extents)) = self.trims.pop_front() else {
                break;
            };
            for (s, n) in extents {
                for (s, n) in self.alloc.free_parts(s, n) {
                    assert!(
                        s >= FIRST_LOG_PAGE,
                        "a trim never reaches the superblock slots"
                    );
                    self.pager.trim(s, n)?;
                }
            }
        }
        Ok(())
    }

    /// Grow the cache to the footprint, within `cache_pages..=cache_max_pages`.
    pub(super) fn fit_cache(&mut self) {
        let max = self.opts.cache_max_pages.max(self.opts.cache_pages);
        let want = usize::try_from(self.alloc.end()).unwrap_or(usize::MAX);
        let want = want.clamp(self.opts.cache_pages, max);
        assert!(
            want >= self.opts.cache_pages,
            "the cache never shrinks below its floor"
        );
        if want > self.pager.cache_pages() {
            self.pager.set_cache_pages(want);
        }
    }

    pub(super) fn stale_bytes(&self) -> u64 {
        (self.alloc.data_pages() * (self.payload - format::DATA_PAGE_HEAD_BYTES) as u64)
            .saturating_sub(self.stats.live_bytes + self.wal_live_bytes())
    }
}
