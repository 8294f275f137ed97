//! `check`: verify every page the newest commit reaches — through the tree and through the
//! WAL index (documents committed but not yet flushed to the tree) — changing nothing.

use super::*;

impl Store {
    /// Verify every page the newest commit reaches: page seals, node order and key bounds,
    /// every document's checksum and key (the tree's and the WAL index's), every data page's
    /// layout; nothing is changed.
    pub fn check(&mut self) -> Result<Vec<Damage>, EngineError> {
        let (seq, ops) = (self.commit_seq, self.pending.len());
        let mut damage = Vec::new();
        let pb = self.pager.page_bytes() as u64;
        for slot in self.slots.pages() {
            let r = match self
                .pager
                .read_verified(slot, PageKind::KvSuperblock, "superblock")
            {
                Err(EngineError::Corrupt(c)) if c.fault == Fault::Blank => continue,
                r => r.and_then(|payload| {
                    Superblock::decode(&payload, slot as u8)
                        .map_err(|e| self.kv_err(slot, "superblock", e))
                }),
            };
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
        self.check_wal(&mut damage, &mut data_pages);
        self.check_held(&mut damage)?;
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
        assert_eq!(
            (seq, ops),
            (self.commit_seq, self.pending.len()),
            "check changes nothing"
        );
        Ok(damage)
    }

    /// Documents only the WAL index reaches: each one's checksum and key, its pages noted.
    fn check_wal(
        &mut self,
        damage: &mut Vec<Damage>,
        data_pages: &mut std::collections::BTreeSet<u64>,
    ) {
        let pb = self.pager.page_bytes() as u64;
        for (k, d) in self.wal_documents() {
            if let Err(err) = self.doc_value(&k, d) {
                damage.push(Damage {
                    offset: d.page * pb + HEADER_BYTES as u64 + d.offset as u64,
                    what: format!("WAL: {err}"),
                });
            }
            for p in d.page..d.page + d.pages(self.payload) {
                data_pages.insert(p);
            }
        }
    }

    pub(super) fn check_node(
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
        assert!(
            node.level() == 0 || !node.is_empty(),
            "a decoded inner node has a child"
        );
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
}
