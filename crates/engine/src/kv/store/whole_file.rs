//! Whole-file compaction (ForestDB's): once the compaction policy chooses to compact, one
//! commit rewrites every live document and flushes the WAL, so the index is rebuilt from the
//! new copies (every node rewritten). The documents, index and header of that commit are
//! appended together (next fit on path `wal`: one new run, ForestDB's new file) and every
//! page of the old generation is released at once when the commit is durable, then trimmed
//! (`Options::trim_after_commits` later; ForestDB deletes the old file). A crash before the
//! commit's superblock keeps the old generation whole.

use super::*;

/// How compaction runs (`Options::compaction_mode`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum CompactionMode {
    /// Batches riding on the commits (readers and writers wait one batch at most).
    #[default]
    Incremental,
    /// ForestDB's: every live document and a new index in one commit, the old pages
    /// released whole.
    WholeFile,
}

impl CompactionMode {
    pub fn name(self) -> &'static str {
        match self {
            CompactionMode::Incremental => "incremental",
            CompactionMode::WholeFile => "whole-file",
        }
    }
}

impl Store {
    /// Add every live document not already pending to the pending batch, and mark the next
    /// commit a whole-file compaction.
    pub(super) fn compact_whole_file(&mut self) -> Result<(), EngineError> {
        let live: Vec<KeyValue> = self
            .scan((Bound::Unbounded, Bound::Unbounded))?
            .collect::<Result<_, _>>()?;
        for (k, v) in live {
            self.pending.entry(k).or_insert(Some(v));
        }
        self.whole_file_pass = true;
        Ok(())
    }

    /// The commit's kind: a whole-file compaction trims what it frees and ends a pass.
    pub(super) fn whole_file_kind(&self, kind: CommitKind) -> CommitKind {
        match self.whole_file_pass {
            true => CommitKind {
                trim: true,
                pass_done: true,
            },
            false => kind,
        }
    }
}
