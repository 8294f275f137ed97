//! The copy-on-write B+-tree over the keys: lookup, applying a commit's sorted operations
//! along the changed paths (split into pages bottom-up), and the reference walk at open.

use super::*;

impl Store {
    /// Count every page the tree under `ptr` reaches.
    pub(super) fn ref_tree(&mut self, ptr: NodePtr, level: Option<u8>) -> Result<(), EngineError> {
        let node = self.node_at(ptr, level)?;
        assert!(
            node.level() == 0 || !node.is_empty(),
            "a decoded inner node has a child"
        );
        self.alloc.add_ref(ptr.page, ptr.pages(self.payload), false);
        for i in 0..node.len() {
            if node.level() == 0 {
                let d = node.doc(i);
                self.alloc.add_ref(d.page, d.pages(self.payload), true);
            } else {
                self.ref_tree(node.child(i), Some(node.level() - 1))?;
            }
        }
        Ok(())
    }

    /// The document `key` maps to, in the WAL's index or the tree. The root comes from the
    /// pager; each level below from its parent's handle to the child's cached node where it
    /// holds one (`kids`: no key-to-frame lookup on the way down), else from the pager
    /// (`node_at`: read and checked if not cached), and the parent then takes a handle to it.
    /// The pages reached through handles are touched in the pager at the end, in the order
    /// they were reached (before any read, so the policy sees what it saw without handles):
    /// their cache misses overlap the search instead of lying on its path.
    pub(super) fn lookup(&mut self, key: &[u8]) -> Result<Option<DocPtr>, EngineError> {
        if let Some(p) = self.wal_lookup(key) {
            return Ok(p);
        }
        let Some(root) = self.root else {
            return Ok(None);
        };
        let mut node = self.node_at(root, None)?;
        let mut touches = Touches::default();
        for _ in 0..=format::NODE_LEVEL_MAX {
            let level = node.level();
            if level == 0 {
                let doc = node.search(key).ok().map(|i| node.doc(i));
                touches.apply(&mut self.pager);
                return Ok(doc);
            }
            let i = node.child_index(key);
            let ptr = node.child(i);
            node = match node.kids().get(i) {
                Some(c) if is_node_at(&c, ptr, level - 1) => {
                    touches.push(ptr.page);
                    NodeRef::of(c)
                }
                _ => {
                    touches.apply(&mut self.pager);
                    let child = self.node_at(ptr, Some(level - 1))?;
                    // A node of several pages is gathered anew at every read (not cached).
                    if ptr.pages(self.payload) == 1 {
                        node.kids().set(i, node.len(), &child.0);
                    }
                    child
                }
            };
        }
        unreachable!("node_at refuses a level that does not descend by one")
    }

    pub(super) fn apply_tree(
        &mut self,
        ops: &[(Vec<u8>, Option<DocPtr>)],
    ) -> Result<(), EngineError> {
        if ops.is_empty() {
            return Ok(());
        }
        let (mut pieces, mut level) = match self.root {
            None => {
                let mut b = NodeBuilder::new(0);
                for (k, p) in ops {
                    if let Some(p) = p {
                        self.stats.live_keys += 1;
                        self.stats.live_bytes += p.len as u64;
                        b.push_doc(k, *p).map_err(|e| self.encode_err(e))?;
                    }
                }
                (self.write_split(b, Cut::Halves)?, 0)
            }
            Some(r) => {
                let level = self.node(r)?.level();
                (self.apply_node(r, None, ops)?, level)
            }
        };
        while pieces.len() > 1 {
            level += 1;
            let mut b = NodeBuilder::new(level);
            for (k, p) in &pieces {
                b.push_child(k, *p).map_err(|e| self.encode_err(e))?;
            }
            pieces = self.write_split(b, Cut::Halves)?;
        }
        assert!(pieces.len() <= 1, "the tree grows until one root holds it");
        self.root = pieces.first().map(|p| p.1);
        // A root with one child is no root: its child is.
        while let Some(r) = self.root {
            let node = self.staged_or_read(r)?;
            if node.level() > 0 && node.len() == 1 {
                self.alloc.drop_ref(r.page, r.pages(self.payload));
                self.staged.retain(|(p, _)| *p != r.page);
                self.root = Some(node.child(0));
            } else {
                break;
            }
        }
        Ok(())
    }

    pub(super) fn encode_err(&self, e: EngineError) -> EngineError {
        self.kv_err(0, "index node (encoding)", e)
    }

    pub(super) fn staged_or_read(&mut self, ptr: NodePtr) -> Result<NodeRef, EngineError> {
        if let Some((_, n)) = self.staged.iter().find(|(p, _)| *p == ptr.page) {
            assert_eq!(
                n.encoded_len(),
                ptr.len as usize,
                "a staged node is as its pointer says"
            );
            return Ok(n.clone());
        }
        self.node(ptr)
    }

    /// Merge sorted `ops` into the subtree at `ptr`; its replacement as (least key, node)s.
    /// Entries the ops leave alone are copied as they are encoded.
    pub(super) fn apply_node(
        &mut self,
        ptr: NodePtr,
        level: Option<u8>,
        ops: &[(Vec<u8>, Option<DocPtr>)],
    ) -> Result<Vec<(Vec<u8>, NodePtr)>, EngineError> {
        let node = self.node_at(ptr, level)?;
        self.alloc.drop_ref(ptr.page, ptr.pages(self.payload));
        let mut b = NodeBuilder::new(node.level());
        if node.level() == 0 {
            self.merge_leaf(&node, ops, &mut b)?;
            return self.write_split(b, Cut::Halves);
        }
        // With `refill_leaves`, the leaves one inner node has rewritten side by side are cut
        // again as one run (`Cut::Full`).
        let refill = self.opts.refill_leaves && node.level() == 1;
        let mut run: Option<NodeBuilder> = None;
        let mut at = 0;
        for ci in 0..node.len() {
            let mut to = at;
            while to < ops.len()
                && (ci + 1 == node.len() || ops[to].0.as_slice() < node.key(ci + 1))
            {
                to += 1;
            }
            if to == at {
                if let Some(r) = run.take() {
                    self.push_pieces(&mut b, r)?;
                }
                b.push_entry(&node, ci).map_err(|e| self.encode_err(e))?;
            } else if refill {
                let child = node.child(ci);
                let leaf = self.node_at(child, Some(0))?;
                self.alloc.drop_ref(child.page, child.pages(self.payload));
                let r = run.get_or_insert_with(|| NodeBuilder::new(0));
                self.merge_leaf(&leaf, &ops[at..to], r)?;
            } else {
                let pieces =
                    self.apply_node(node.child(ci), Some(node.level() - 1), &ops[at..to])?;
                for (k, p) in &pieces {
                    b.push_child(k, *p).map_err(|e| self.encode_err(e))?;
                }
            }
            at = to;
        }
        if let Some(r) = run.take() {
            self.push_pieces(&mut b, r)?;
        }
        assert_eq!(at, ops.len(), "every operation routed to one child");
        self.write_split(b, Cut::Halves)
    }

    /// Write the leaves of the run `r` (filled) and add them to their parent `b`.
    fn push_pieces(&mut self, b: &mut NodeBuilder, r: NodeBuilder) -> Result<(), EngineError> {
        for (k, p) in &self.write_split(r, Cut::Full)? {
            b.push_child(k, *p).map_err(|e| self.encode_err(e))?;
        }
        Ok(())
    }

    /// Merge sorted `ops` into leaf `node`, its entries and the new ones pushed onto `b`.
    fn merge_leaf(
        &mut self,
        node: &NodeView,
        ops: &[(Vec<u8>, Option<DocPtr>)],
        b: &mut NodeBuilder,
    ) -> Result<(), EngineError> {
        assert_eq!(node.level(), 0, "a leaf merges documents");
        let mut i = 0;
        for (k, p) in ops {
            let at = match node.search(k) {
                Ok(j) | Err(j) => j.max(i),
            };
            b.push_entries(node, i, at)
                .map_err(|e| self.encode_err(e))?;
            i = at;
            if i < node.len() && node.key(i) == k.as_slice() {
                let o = node.doc(i);
                i += 1;
                self.alloc.drop_ref(o.page, o.pages(self.payload));
                self.stats.live_keys -= 1;
                self.stats.live_bytes -= o.len as u64;
            }
            if let Some(p) = p {
                self.stats.live_keys += 1;
                self.stats.live_bytes += p.len as u64;
                b.push_doc(k, *p).map_err(|e| self.encode_err(e))?;
            }
        }
        assert!(i <= node.len(), "the merge stays inside the leaf");
        b.push_entries(node, i, node.len())
            .map_err(|e| self.encode_err(e))
    }

    /// Stage the nodes `b` makes (cut to pages) for writing: their (least key, pointer)s.
    pub(super) fn write_split(
        &mut self,
        b: NodeBuilder,
        cut: Cut,
    ) -> Result<Vec<(Vec<u8>, NodePtr)>, EngineError> {
        let pieces = b
            .finish_as(self.payload, self.opts.node_layout, cut)
            .map_err(|e| self.encode_err(e))?;
        let mut out = Vec::with_capacity(pieces.len());
        for (key, view) in pieces {
            let len = view.encoded_len() as u32;
            let pages = NodePtr { page: 0, len }.pages(self.payload);
            let page = self.alloc.alloc(pages)?;
            assert!(
                page >= FIRST_LOG_PAGE,
                "a node is never staged over a superblock slot"
            );
            self.alloc.add_ref(page, pages, false);
            self.staged.push((page, NodeRef::new(view)));
            out.push((key, NodePtr { page, len }));
        }
        Ok(out)
    }
}

/// Whether the cached node `c`, taken through a handle, is the node `ptr` names at `level`
/// (the checks `node_at` makes of a cached node: its length and its level).
fn is_node_at(c: &Cached, ptr: NodePtr, level: u8) -> bool {
    match c {
        Cached::Node(v, _) => v.encoded_len() == ptr.len as usize && v.level() == level,
        Cached::Raw { .. } => false,
    }
}

/// Pages a lookup reached through handles, to touch in the pager in that order.
struct Touches {
    pages: [u64; format::NODE_LEVEL_MAX as usize + 1],
    len: usize,
}

impl Default for Touches {
    fn default() -> Touches {
        Touches {
            pages: [0; format::NODE_LEVEL_MAX as usize + 1],
            len: 0,
        }
    }
}

impl Touches {
    fn push(&mut self, page: u64) {
        assert!(
            self.len < self.pages.len(),
            "a lookup descends at most every level"
        );
        self.pages[self.len] = page;
        self.len += 1;
    }

    /// Touch every page pushed, in order, and forget them.
    fn apply(&mut self, pager: &mut Pager) {
        for &p in &self.pages[..self.len] {
            pager.touch(p);
        }
        self.len = 0;
    }
}
