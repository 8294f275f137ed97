//! A scan that lends each key and value to a visitor: no copy per key. The tree's leaves are
//! walked in place (keys borrowed from the cached leaf, values from the cached data page) and
//! merged with the WAL's index and the uncommitted batch, which are borrowed as they are.
//! Before the entries of a leaf are visited, a window of them — as many as the scan may still
//! lend, up to the leaf's end — is prepared: the data pages they point at and that are not
//! cached are read in one batch (`Pager::prefetch`), so a cold scan waits for one read per
//! window, not one per key; then the cache's frames, forms and the documents' first bytes are
//! brought into the CPU's cache together (`Pager::warm`), so a warm scan waits for one round
//! of overlapping memory misses per window, not several misses one after another per key.

use super::wal::WalEntry;
use super::*;

/// A position in the tree's leaves: the path from the root, each node with the index of the
/// next entry (inner nodes: the next child to descend into; the leaf: the current entry).
struct Cursor<'r> {
    stack: Vec<(NodeRef, usize)>,
    end: Bound<&'r [u8]>,
    /// The top leaf's entries below this index are prepared (their documents' pages read
    /// and warmed); 0 for a leaf just entered.
    ready: usize,
}

fn within(key: &[u8], end: Bound<&[u8]>) -> bool {
    match end {
        Bound::Included(e) => key <= e,
        Bound::Excluded(e) => key < e,
        Bound::Unbounded => true,
    }
}

/// Whether `range` holds no key at all (BTreeMap::range refuses such a range).
fn empty_range(range: (Bound<&[u8]>, Bound<&[u8]>)) -> bool {
    match range {
        (Bound::Included(s), Bound::Included(e)) => s > e,
        (Bound::Included(s) | Bound::Excluded(s), Bound::Excluded(e))
        | (Bound::Excluded(s), Bound::Included(e)) => s >= e,
        _ => false,
    }
}

impl<'r> Cursor<'r> {
    /// At the first leaf entry of `start` or after it (empty past `end`); `want`: how many
    /// entries the scan may lend at most (the window prepared).
    fn seek(
        store: &mut Store,
        start: Bound<&[u8]>,
        end: Bound<&'r [u8]>,
        want: usize,
    ) -> Result<Cursor<'r>, EngineError> {
        let mut c = Cursor {
            stack: Vec::new(),
            end,
            ready: 0,
        };
        let Some(mut ptr) = store.root else {
            return Ok(c);
        };
        let key: &[u8] = match start {
            Bound::Included(k) | Bound::Excluded(k) => k,
            Bound::Unbounded => &[],
        };
        let mut level = None;
        loop {
            let node = store.node_at(ptr, level)?;
            if node.level() == 0 {
                let i = match (node.search(key), start) {
                    (Ok(i), Bound::Excluded(_)) => i + 1,
                    (Ok(i), _) | (Err(i), _) => i,
                };
                c.stack.push((node, i));
                c.settle(store, want)?;
                return Ok(c);
            }
            let i = node.child_index(key);
            assert!(i < node.len(), "an inner node has a child for every key");
            ptr = node.child(i);
            level = Some(node.level() - 1);
            c.stack.push((node, i + 1));
        }
    }

    /// Move to the first leaf entry at or after the position, descending into the next
    /// children as leaves run out; the stack is emptied past the end bound. An entry outside
    /// the prepared window starts a new one of up to `want` entries.
    fn settle(&mut self, store: &mut Store, want: usize) -> Result<(), EngineError> {
        while let Some((node, i)) = self.stack.last_mut() {
            if *i >= node.len() {
                self.stack.pop();
                continue;
            }
            if node.level() == 0 {
                if !within(node.key(*i), self.end) {
                    self.stack.clear();
                } else if *i >= self.ready {
                    self.ready = store.prepare_docs(node, *i, want)?;
                    assert!(self.ready > *i, "the window holds the current entry");
                }
                return Ok(());
            }
            let (c, level) = (node.child(*i), node.level());
            *i += 1;
            let child = store.node_at(c, Some(level - 1))?;
            self.stack.push((child, 0));
            self.ready = 0;
            assert!(
                self.stack.len() <= format::NODE_LEVEL_MAX as usize + 1,
                "a path no deeper than the deepest level"
            );
        }
        Ok(())
    }

    /// The current leaf entry's key (None: the scan is past its end).
    fn key(&self) -> Option<&[u8]> {
        self.stack.last().map(|(n, i)| n.key(*i))
    }

    fn step(&mut self, store: &mut Store, want: usize) -> Result<(), EngineError> {
        if let Some((node, i)) = self.stack.last_mut() {
            assert!(
                node.level() == 0 && *i < node.len(),
                "a settled cursor is on a leaf entry"
            );
            *i += 1;
        }
        self.settle(store, want)
    }
}

/// Which sources hold the smallest key next: (batch, WAL, tree).
type Heads = (bool, bool, bool);

fn heads(p: Option<&[u8]>, w: Option<&[u8]>, t: Option<&[u8]>) -> Option<Heads> {
    let min = [p, w, t].into_iter().flatten().min()?;
    Some((p == Some(min), w == Some(min), t == Some(min)))
}

impl Store {
    /// Up to `limit` keys and values of `range` in key order, each lent to `f` (borrowed from
    /// the cache or the uncommitted batch: no copy); how many `f` saw. Sees uncommitted writes,
    /// as [`Store::scan`] does.
    pub fn scan_each(
        &mut self,
        range: (Bound<&[u8]>, Bound<&[u8]>),
        limit: usize,
        mut f: impl FnMut(&[u8], &[u8]),
    ) -> Result<usize, EngineError> {
        if limit == 0 || empty_range(range) {
            return Ok(0);
        }
        // Lent out for the scan (the tree walk needs the store mutably), put back after.
        let pending = std::mem::take(&mut self.pending);
        let wal = self.wal_take_entries();
        let r = self.visit(&pending, &wal, range, limit, &mut f);
        self.pending = pending;
        self.wal_put_entries(wal);
        r
    }

    fn visit(
        &mut self,
        pending: &BTreeMap<Vec<u8>, Option<Vec<u8>>>,
        wal: &BTreeMap<Vec<u8>, WalEntry>,
        range: (Bound<&[u8]>, Bound<&[u8]>),
        limit: usize,
        f: &mut dyn FnMut(&[u8], &[u8]),
    ) -> Result<usize, EngineError> {
        let mut pend = pending.range::<[u8], _>(range).peekable();
        let mut wals = wal.range::<[u8], _>(range).peekable();
        let mut tree = Cursor::seek(self, range.0, range.1, limit)?;
        let mut seen = 0;
        while seen < limit {
            let pk = pend.peek().map(|(k, _)| k.as_slice());
            let wk = wals.peek().map(|(k, _)| k.as_slice());
            let Some((p, w, t)) = heads(pk, wk, tree.key()) else {
                break;
            };
            // What the tree may still lend (the window its next leaf entry prepares).
            let want = limit - seen;
            // The newest source wins: the batch, then the WAL, then the tree.
            if p {
                let (k, v) = pend.next().expect("peeked");
                skip(&mut wals, w);
                if t {
                    tree.step(self, want)?;
                }
                if let Some(v) = v {
                    f(k, v);
                    seen += 1;
                }
            } else if w {
                let (k, e) = wals.next().expect("peeked");
                if t {
                    tree.step(self, want)?;
                }
                if let Some(ptr) = e.doc() {
                    self.doc_value_with(k, ptr, |v| f(k, v))?;
                    seen += 1;
                }
            } else {
                let (leaf, i) = tree.stack.last().expect("the tree holds the head");
                let leaf = leaf.clone();
                let (k, ptr) = (leaf.key(*i), leaf.doc(*i));
                self.doc_value_with(k, ptr, |v| f(k, v))?;
                seen += 1;
                tree.step(self, want)?;
            }
        }
        Ok(seen)
    }

    /// Prepare the window of leaf `node`'s entries from `from` on, up to `want` of them (at
    /// least one): the data pages of their documents read in one batch where not cached, then
    /// warmed (frames, forms and each document's first byte brought into the CPU's cache
    /// together). Returns the index past the window.
    fn prepare_docs(
        &mut self,
        node: &NodeRef,
        from: usize,
        want: usize,
    ) -> Result<usize, EngineError> {
        let to = node.len().min(from.saturating_add(want.max(1)));
        assert!(from < to, "a window of at least one entry");
        let mut pages: Vec<u64> = Vec::with_capacity(to - from);
        let mut spots: Vec<(u64, usize)> = Vec::with_capacity(to - from);
        for i in from..to {
            let d = node.doc(i);
            let last = d.page.saturating_add(d.pages(self.payload));
            for p in d.page..last {
                if pages.last() != Some(&p) {
                    pages.push(p);
                }
            }
            spots.push((d.page, d.offset as usize));
        }
        self.pager.prefetch(&pages)?;
        self.pager.warm::<Cached>(&spots);
        Ok(to)
    }
}

fn skip<'a, I: Iterator<Item = (&'a Vec<u8>, &'a WalEntry)>>(
    it: &mut std::iter::Peekable<I>,
    yes: bool,
) {
    if yes {
        it.next();
    }
}
