//! Retired DB headers held in the file until their generation ends (ForestDB's): a commit's
//! header page, once a newer header is durable and no WAL chain reaches it, is *held* — its
//! reference kept, so the allocator cannot hand it out — until the compaction pass that ends
//! its generation is durable; then every held page is released with the old generation and
//! trimmed with it (ForestDB appends headers and never overwrites one: they die when
//! compaction deletes the old file). The old behaviour (`RetiredHeaders::Reuse`) gives a
//! retired header back to the allocator at the next commit, untrimmed, so an append-only file
//! writes the same page again one lap later.
//!
//! Invariants: every held page is a DB header of the current generation on the chain of
//! `prev_header_page` links from the newest header, and holds one reference; after a
//! compaction pass's commit nothing is held. At open the held set is rebuilt by walking that
//! chain; `check` walks it and reports a chain page that is free (released too early) and a
//! held page off the chain (leaked).

use super::*;

/// What happens to a DB header page a newer durable commit retired (`Options::retired_headers`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum RetiredHeaders {
    /// `Hold` on write path `wal` (ForestDB's), `Reuse` on `cow`.
    #[default]
    Auto,
    /// Back to the allocator at the next commit, untrimmed (the file reuses the page).
    Reuse,
    /// Kept in the file until the compaction pass that ends its generation, then trimmed with
    /// the old generation.
    Hold,
}

impl RetiredHeaders {
    pub const ALL: [RetiredHeaders; 3] = [
        RetiredHeaders::Auto,
        RetiredHeaders::Reuse,
        RetiredHeaders::Hold,
    ];

    pub fn name(self) -> &'static str {
        match self {
            RetiredHeaders::Auto => "auto",
            RetiredHeaders::Reuse => "reuse",
            RetiredHeaders::Hold => "hold",
        }
    }

    /// The mode named `s` (`auto`, `reuse`, `hold`).
    pub fn parse(s: &str) -> Option<RetiredHeaders> {
        RetiredHeaders::ALL.into_iter().find(|m| m.name() == s)
    }
}

/// What happens to any page a commit frees within a generation — an index node a WAL flush
/// rewrote, a data page whose documents are all stale, a retired header
/// (`Options::stale_pages`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum StalePages {
    /// Free once the commit that freed it is durable: the allocator may write it again in
    /// the same generation (ours; the default).
    #[default]
    Reuse,
    /// Held, neither referenced nor free, until the compaction pass that ends its generation
    /// is durable, then freed (and trimmed) with the old generation: new index nodes go to
    /// the file's end. ForestDB's: couchbase/forestdb reuses a stale block in place only above
    /// 65 % stale (`Superblock::checkBlockReuse`), and its auto-compaction deletes the file at
    /// 30 % first (`FileCompactionEntry::isCompactionThresholdSatisfied`), so every block
    /// stays in its file until `Compaction::commitAndRemovePending` removes the file. The held
    /// set lives in memory: a reopened store frees the pages its generation had held (as
    /// `start_generation_at_open` forgets what the generation wrote before).
    Hold,
}

impl StalePages {
    pub const ALL: [StalePages; 2] = [StalePages::Reuse, StalePages::Hold];

    pub fn name(self) -> &'static str {
        match self {
            StalePages::Reuse => "reuse",
            StalePages::Hold => "hold",
        }
    }

    /// The mode named `s` (`reuse`, `hold`).
    pub fn parse(s: &str) -> Option<StalePages> {
        StalePages::ALL.into_iter().find(|m| m.name() == s)
    }
}

impl Store {
    /// Whether `page` holds an object of the newest commit or the commit being made (held
    /// pages do not).
    pub fn page_in_use(&self, page: u64) -> bool {
        self.alloc.refs(page) > 0
    }

    /// Pages freed in this generation and held until its compaction (`StalePages::Hold`).
    pub fn held_stale_pages(&self) -> u64 {
        self.alloc.held_pages()
    }

    /// Whether retired header pages are held until their generation's compaction.
    pub(super) fn holds_headers(&self) -> bool {
        match self.opts.retired_headers {
            RetiredHeaders::Auto => self.wal_on(),
            RetiredHeaders::Reuse => false,
            RetiredHeaders::Hold => true,
        }
    }

    /// A header page no commit needs any more (a newer header is durable and no WAL chain
    /// reaches it): held, or released now.
    pub(super) fn retire_header_page(&mut self, page: u64) {
        assert!(
            page >= FIRST_LOG_PAGE && self.alloc.refs(page) >= 1,
            "a retired header page {page} holds its reference"
        );
        match self.holds_headers() {
            true => self.held_headers.push(page),
            false => self.alloc.drop_ref(page, 1),
        }
    }

    /// The commit ending a compaction pass is durable: release every held header page (the
    /// commit's `commit_done` frees them, and its trim list takes them with the old pages).
    pub(super) fn release_held_headers(&mut self) {
        for p in std::mem::take(&mut self.held_headers) {
            assert_eq!(
                self.alloc.refs(p),
                1,
                "held header page {p} has one reference"
            );
            self.alloc.drop_ref(p, 1);
        }
    }

    /// Header pages held now (retired, waiting for their generation's compaction).
    pub fn held_header_pages(&self) -> u64 {
        self.held_headers.len() as u64
    }

    /// The current generation's header pages, newest first: the newest header, then its
    /// `prev_header_page` links while each page reads as a DB header of this generation with
    /// a smaller commit number (a page that does not — trimmed, reused, or of the previous
    /// generation — ends the chain).
    pub(super) fn generation_header_chain(&mut self) -> Result<Vec<u64>, EngineError> {
        let mut chain = Vec::new();
        let (mut page, mut below) = (self.header_page, u64::MAX);
        while page != NO_PAGE && (FIRST_LOG_PAGE..self.alloc.end()).contains(&page) {
            let payload = match self
                .pager
                .read_verified(page, PageKind::KvHeader, "DB header")
            {
                Ok(p) => p,
                Err(EngineError::Corrupt(_)) => break,
                Err(e) => return Err(e),
            };
            let Ok(h) = DbHeader::decode(&payload) else {
                break;
            };
            if h.generation != self.generation || h.commit_seq >= below {
                break;
            }
            chain.push(page);
            (page, below) = (h.prev_header_page, h.commit_seq);
        }
        assert!(
            chain.len() as u64 <= self.alloc.end(),
            "a chain of distinct pages"
        );
        Ok(chain)
    }

    /// At open: hold again every header page of the current generation nothing else
    /// references (after the WAL replay counted the chain it reaches).
    pub(super) fn hold_generation_headers(&mut self) -> Result<(), EngineError> {
        if !self.holds_headers() || self.header_page == NO_PAGE {
            return Ok(());
        }
        let chain = self.generation_header_chain()?;
        for &p in chain.iter().skip(1) {
            if self.alloc.refs(p) == 0 {
                self.alloc.add_ref(p, 1, false);
                self.held_headers.push(p);
            }
        }
        Ok(())
    }

    /// `check`: every header page of the current generation is referenced (not released
    /// before its compaction), and every held page is one of them (none leaked).
    pub(super) fn check_held(&mut self, damage: &mut Vec<Damage>) -> Result<(), EngineError> {
        if !self.holds_headers() || self.header_page == NO_PAGE {
            return Ok(());
        }
        let pb = self.pager.page_bytes() as u64;
        let chain = self.generation_header_chain()?;
        for &p in chain.iter().skip(1) {
            if self.alloc.refs(p) == 0 {
                damage.push(Damage {
                    offset: p * pb,
                    what: format!(
                        "{}: DB header page {p} of generation {} is free: a retired header \
                         was released before the compaction that ends its generation",
                        self.name, self.generation
                    ),
                });
            }
        }
        let on_chain: std::collections::BTreeSet<u64> = chain.into_iter().collect();
        let held: Vec<u64> = self
            .held_headers
            .iter()
            .chain(self.wal_headers())
            .copied()
            .collect();
        for p in held {
            if !on_chain.contains(&p) {
                damage.push(Damage {
                    offset: p * pb,
                    what: format!(
                        "{}: page {p} is held as a retired DB header but is not on generation \
                         {}'s header chain (its space is leaked)",
                        self.name, self.generation
                    ),
                });
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use blockdev::MemDevice;

    fn store(retired_headers: RetiredHeaders) -> Store {
        let opts = Options {
            write_path: WritePath::Wal,
            wal_flush_docs: 8,
            compact_threshold: 1.0,
            retired_headers,
            ..Options::default()
        };
        let mut s = Store::open(Box::new(MemDevice::new(4096, 512)), opts).unwrap();
        for c in 0..12u32 {
            for i in 0..4u32 {
                s.put(format!("k{}", (c * 4 + i) % 10).as_bytes(), &[c as u8; 300])
                    .unwrap();
            }
            s.commit().unwrap();
        }
        s
    }

    fn says(damage: &[Damage], what: &str) -> bool {
        damage.iter().any(|d| d.what.contains(what))
    }

    #[test]
    fn check_flags_a_held_header_released_early_and_one_leaked() {
        let mut s = store(RetiredHeaders::Hold);
        assert!(s.held_headers.len() >= 3, "{:?}", s.held_headers);
        assert_eq!(s.check().unwrap(), Vec::new());
        // A held page wrongly given back to the allocator (and freed by a commit).
        let p = s.held_headers.remove(1);
        s.alloc.drop_ref(p, 1);
        s.alloc.commit_done();
        let damage = s.check().unwrap();
        assert!(
            says(&damage, "released before the compaction"),
            "{damage:?}"
        );
        assert_eq!(damage.len(), 1, "{damage:?}");
        // A page held that is no header of the generation: leaked.
        let mut s = store(RetiredHeaders::Hold);
        let q = s.alloc.alloc(1).unwrap();
        s.alloc.add_ref(q, 1, false);
        s.held_headers.push(q);
        let damage = s.check().unwrap();
        assert!(says(&damage, "leaked"), "{damage:?}");
    }

    #[test]
    fn reuse_holds_nothing_and_auto_follows_the_write_path() {
        let s = store(RetiredHeaders::Reuse);
        assert!(s.held_headers.is_empty());
        assert!(store(RetiredHeaders::Auto).held_header_pages() >= 3);
        for m in RetiredHeaders::ALL {
            assert_eq!(RetiredHeaders::parse(m.name()), Some(m));
        }
    }
}
