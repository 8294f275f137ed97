//! An ordered, lazy scan: the tree's leaves merged with the pending batch.

use super::*;

/// An ordered, lazy scan (see [`Store::scan`]).
pub struct Scan<'a> {
    pub(super) store: &'a mut Store,
    /// Path from the root: node and the index of the next entry to visit.
    pub(super) stack: Vec<(NodeRef, usize)>,
    pub(super) end: Bound<Vec<u8>>,
    pub(super) pending: std::iter::Peekable<std::vec::IntoIter<PendingOp>>,
    pub(super) tree_next: Option<(Vec<u8>, DocPtr)>,
    pub(super) done: bool,
}

impl Scan<'_> {
    pub(super) fn seek(&mut self, start: &Bound<Vec<u8>>) -> Result<(), EngineError> {
        let Some(mut ptr) = self.store.root else {
            return Ok(());
        };
        let key: &[u8] = match start {
            Bound::Included(k) | Bound::Excluded(k) => k,
            Bound::Unbounded => &[],
        };
        let mut level = None;
        loop {
            let node = self.store.node_at(ptr, level)?;
            if node.level() == 0 {
                let i = match (node.search(key), start) {
                    (Ok(i), Bound::Excluded(_)) => i + 1,
                    (Ok(i), _) | (Err(i), _) => i,
                };
                self.stack.push((node, i));
                return self.advance();
            }
            let i = node.child_index(key);
            assert!(i < node.len(), "an inner node has a child for every key");
            ptr = node.child(i);
            level = Some(node.level() - 1);
            self.stack.push((node, i + 1));
        }
    }

    /// Put the next tree entry (if any, within the end bound) in `tree_next`.
    fn advance(&mut self) -> Result<(), EngineError> {
        self.tree_next = None;
        while let Some((node, i)) = self.stack.last_mut() {
            if *i >= node.len() {
                self.stack.pop();
                continue;
            }
            if node.level() == 0 {
                let (k, p) = (node.key(*i).to_vec(), node.doc(*i));
                *i += 1;
                let within = match &self.end {
                    Bound::Included(end) => k <= *end,
                    Bound::Excluded(end) => k < *end,
                    Bound::Unbounded => true,
                };
                if within {
                    self.tree_next = Some((k, p));
                } else {
                    self.stack.clear();
                }
                return Ok(());
            }
            let (c, level) = (node.child(*i), node.level());
            *i += 1;
            assert!(*i <= node.len(), "the cursor stays inside its node");
            let child = self.store.node_at(c, Some(level - 1))?;
            self.stack.push((child, 0));
            assert!(
                self.stack.len() <= format::NODE_LEVEL_MAX as usize + 1,
                "a path no deeper than the deepest level"
            );
        }
        Ok(())
    }

    fn step(&mut self) -> Result<Option<KeyValue>, EngineError> {
        loop {
            let take_pending = match (self.pending.peek(), &self.tree_next) {
                (None, None) => return Ok(None),
                (Some(_), None) => true,
                (None, Some(_)) => false,
                (Some((pk, _)), Some((tk, _))) => pk <= tk,
            };
            if take_pending {
                let (k, v) = self.pending.next().expect("peeked");
                if self.tree_next.as_ref().is_some_and(|(tk, _)| *tk == k) {
                    self.advance()?;
                }
                match v {
                    Some(v) => return Ok(Some((k, v))),
                    None => continue,
                }
            }
            let (k, p) = self.tree_next.take().expect("checked");
            assert!(
                self.pending.peek().is_none_or(|(pk, _)| *pk > k),
                "merge order"
            );
            let v = self.store.doc_value(&k, p)?;
            self.advance()?;
            return Ok(Some((k, v)));
        }
    }
}

impl Iterator for Scan<'_> {
    type Item = Result<(Vec<u8>, Vec<u8>), EngineError>;

    fn next(&mut self) -> Option<Self::Item> {
        if self.done {
            return None;
        }
        match self.step() {
            Ok(Some(kv)) => Some(Ok(kv)),
            Ok(None) => {
                self.done = true;
                None
            }
            Err(e) => {
                self.done = true;
                Some(Err(e))
            }
        }
    }
}
