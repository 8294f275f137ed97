//! Recovery at open: the newest intact superblock slot, its header (damage there is an
//! error, not a rollback: docs/kv-format.md, "Torn or corrupt"), the reference counts.

use super::*;

impl Store {
    pub(super) fn recover(&mut self) -> Result<(), EngineError> {
        let pb = self.pager.page_bytes() as u64;
        let [s0, s1] = self.slots.read_both(&mut self.pager)?;
        let sb_bytes = HEADER_BYTES..HEADER_BYTES + format::SUPERBLOCK_BYTES;
        let (s0, s1) = (&s0[sb_bytes.clone()], &s1[sb_bytes]);
        let offs = self.slots.pages().map(|p| p * pb + HEADER_BYTES as u64);
        let cap = self.alloc.capacity();
        // Why the header page's own seal failed, if it did (its bytes then read as nothing).
        let mut seal: Option<Fault> = None;
        let rec = format::recover([s0, s1], offs, |page| {
            if page >= cap {
                return Ok((vec![], page * pb));
            }
            let at = page * pb + HEADER_BYTES as u64;
            match self
                .pager
                .read_verified(page, PageKind::KvHeader, "DB header")
            {
                Ok(payload) => Ok((payload, at)),
                Err(EngineError::Corrupt(c)) => {
                    seal = Some(c.fault.clone());
                    Ok((vec![], at))
                }
                Err(e) => Err(e),
            }
        })?;
        match rec {
            Recovered::Corrupt { superblock, error } => {
                Err(self.durable_damage(superblock, error, seal))
            }
            Recovered::Blank if !self.opts.create => {
                Err(Corruption::new(Structure::Superblock, Fault::Blank)
                    .at(0)
                    .on_page(0)
                    .in_file(&self.name)
                    .meaning("not a store")
                    .into())
            }
            Recovered::Blank => {
                // Commit 0: the empty store.
                assert_eq!(
                    (self.commit_seq, self.root, self.header_page),
                    (0, None, NO_PAGE),
                    "a new store starts empty at commit 0"
                );
                self.publish_superblock(0, NO_PAGE)?;
                self.pager.flush()?;
                Ok(())
            }
            Recovered::Damaged { errors } => {
                let why = format!(
                    "neither superblock slot checks out (this is not a store, or both slots are damaged; {} problems)",
                    errors.len()
                );
                let first = errors
                    .into_iter()
                    .next()
                    .unwrap_or(Corruption::new(Structure::Superblock, Fault::Blank).at(0));
                Err(first.in_file(&self.name).meaning(why).into())
            }
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
                // Every page the commit reaches was written by it or before it.
                self.pager.limit_versions(self.commit_seq);
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
                    self.wal_replay()?;
                    self.hold_generation_headers()?;
                    self.alloc.rebuild_free();
                    assert!(
                        self.alloc.refs(self.header_page) >= 1,
                        "the header holds its page"
                    );
                    assert_eq!(
                        h.commit_seq, self.commit_seq,
                        "the header is the slot's commit"
                    );
                }
                Ok(())
            }
        }
    }

    /// The error for a newest commit whose superblock checks out and whose header does not:
    /// damage to a durable commit (never rolled back silently; docs/kv-format.md, "Torn or
    /// corrupt"). `seal` says why the header page's seal failed, if it did.
    pub(super) fn durable_damage(
        &self,
        sb: Superblock,
        error: Corruption,
        seal: Option<Fault>,
    ) -> EngineError {
        let pb = self.pager.page_bytes() as u64;
        let page = sb.header_page;
        assert_ne!(
            page, NO_PAGE,
            "only a commit with a header can have a damaged one"
        );
        let error = match seal {
            // The page's seal failed: the pager's finding, at the page's first byte.
            Some(fault) => {
                Corruption::new(Structure::CommitHeader, fault).at(page.saturating_mul(pb))
            }
            None => error,
        };
        let why = format!(
            "the DB header of commit {} at page {page} (byte {}) is damaged, and the superblock in slot {} that points at it is intact: a durable commit is corrupt, not a torn write (restore from a backup)",
            sb.commit_seq,
            page.saturating_mul(pb),
            sb.slot()
        );
        error.on_page(page).in_file(&self.name).meaning(why).into()
    }
}
