//! Where the compaction policy's stale share comes from (`Options::stale_estimate`).
//!
//! ForestDB's auto-compaction (couchbase/forestdb, `src/compactor.cc`,
//! `FileCompactionEntry::isCompactionThresholdSatisfied` and `estimateActiveSpace`) compacts
//! a file when `file size − active > threshold × file size` (default threshold 30 %,
//! `FDB_DEFAULT_COMPACTION_THRESHOLD` in `option/option.h`), where the file size is every
//! byte appended since compaction wrote the file (documents, WAL entries, index nodes and DB
//! headers, stale or not) and `active = datasize + nlivenodes × blocksize + the WAL's data
//! size`: the live documents the index reaches (updated at a WAL flush), the live index
//! nodes, and the newest document of each key in the WAL. Our default counts data pages
//! only: the stale share is the document bytes on data pages in use that nothing reaches, so
//! stale index nodes and retired headers never count, and superseded documents count only
//! once a WAL flush releases them.

use super::*;

/// How the stale share that triggers compaction is estimated.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum StaleEstimate {
    /// Stale / (live + stale) document bytes on the data pages in use (ours).
    #[default]
    DataPages,
    /// ForestDB's: (pages written since the generation began − active) / pages written since
    /// it began, active = live documents (the index's and the WAL's) + live index pages.
    FileSize,
}

impl StaleEstimate {
    pub const ALL: [StaleEstimate; 2] = [StaleEstimate::DataPages, StaleEstimate::FileSize];

    pub fn name(self) -> &'static str {
        match self {
            StaleEstimate::DataPages => "data-pages",
            StaleEstimate::FileSize => "file-size",
        }
    }

    /// The estimate named `s` (`data-pages`, `file-size`).
    pub fn parse(s: &str) -> Option<StaleEstimate> {
        StaleEstimate::ALL.into_iter().find(|e| e.name() == s)
    }
}

impl Store {
    /// Header, index and data pages written over the store's life (the superblock slots are
    /// fixed pages, not appended).
    pub(super) fn log_pages_written(&self) -> u64 {
        let p = self.stats.pages;
        p.header + p.index + p.data
    }

    /// Pages written since the generation began: ForestDB's file size, in pages.
    pub(super) fn generation_pages_written(&self) -> u64 {
        self.log_pages_written()
            .saturating_sub(self.generation_start_pages)
    }

    /// At open: the generation's file taken as the pages in use now (what it wrote before is
    /// not recorded).
    pub(super) fn start_generation_at_open(&mut self) {
        self.generation_start_pages = self
            .log_pages_written()
            .saturating_sub(self.alloc.pages_in_use());
    }

    /// (active, stale) bytes as ForestDB's auto-compaction counts them (module comment).
    pub(super) fn file_size_estimate(&self) -> (u64, u64) {
        let pb = self.pager.page_bytes() as u64;
        let file_bytes = self.generation_pages_written() * pb;
        let headers = u64::from(self.header_page != NO_PAGE)
            + self.wal_headers().len() as u64
            + self.held_header_pages();
        let index_pages = self
            .alloc
            .pages_in_use()
            .saturating_sub(self.alloc.data_pages() + headers);
        let active = self.stats.live_bytes + self.wal_live_bytes() + index_pages * pb;
        assert!(
            index_pages <= self.alloc.pages_in_use(),
            "index pages are pages in use"
        );
        (active.min(file_bytes), file_bytes.saturating_sub(active))
    }
}
