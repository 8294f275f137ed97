//! The copy-on-write tree's node writer: entries encoded as they come, cut to pages.

use super::doc::DOC_PTR_RULE;
use super::node::{balanced_cut, NODE_PTR_RULE};
use super::packed::{self, NodeLayout};
use super::*;

/// Builds index nodes entry by entry, encoding as it goes (no allocation per key), then cuts
/// them to pages: the copy-on-write tree's writer.
#[derive(Clone, Debug, Default)]
pub struct NodeBuilder {
    level: u8,
    /// Encoded entries, back to back.
    body: Vec<u8>,
    /// Where each entry starts in `body`.
    offs: Vec<u32>,
    /// Where the last key starts and ends in `body` (to check that keys ascend).
    last_key: (usize, usize),
}

impl NodeBuilder {
    /// An empty node of `level` (0: a leaf).
    pub fn new(level: u8) -> NodeBuilder {
        NodeBuilder {
            level,
            ..NodeBuilder::default()
        }
    }

    pub fn level(&self) -> u8 {
        self.level
    }

    pub fn len(&self) -> usize {
        self.offs.len()
    }

    pub fn is_empty(&self) -> bool {
        self.offs.is_empty()
    }

    /// Bytes the entries would take as one node.
    pub fn encoded_len(&self) -> usize {
        NODE_HEAD_BYTES + self.body.len() + CRC_BYTES
    }

    fn bad(field: &'static str, expected: impl ToString, found: impl ToString) -> EngineError {
        invalid(field, expected, found)
    }

    /// Start an entry for `key`, which must be above the last one.
    fn push_key(&mut self, key: &[u8]) -> Result<(), EngineError> {
        if key.len() > KEY_BYTES_MAX {
            return Err(too_large("key", key.len(), KEY_BYTES_MAX));
        }
        if !self.offs.is_empty() && &self.body[self.last_key.0..self.last_key.1] >= key {
            return Err(NodeBuilder::bad(
                "keys",
                "strictly ascending",
                "a repeat or descent",
            ));
        }
        self.offs.push(self.body.len() as u32);
        self.body
            .extend_from_slice(&(key.len() as u16).to_le_bytes());
        let at = self.body.len();
        self.body.extend_from_slice(key);
        self.last_key = (at, self.body.len());
        assert!(
            self.body.len() <= u32::MAX as usize,
            "entry offsets fit u32"
        );
        Ok(())
    }

    /// Append a leaf entry.
    pub fn push_doc(&mut self, key: &[u8], doc: DocPtr) -> Result<(), EngineError> {
        if self.level != 0 {
            return Err(NodeBuilder::bad("level", "a leaf", self.level));
        }
        if let Some(found) = doc.invalid() {
            return Err(NodeBuilder::bad("pointer", DOC_PTR_RULE, found));
        }
        self.push_key(key)?;
        self.body.extend_from_slice(&doc.page.to_le_bytes());
        self.body.extend_from_slice(&doc.offset.to_le_bytes());
        self.body.extend_from_slice(&doc.len.to_le_bytes());
        assert_eq!(
            self.body.len() - self.last_key.1,
            DOC_PTR_BYTES,
            "a leaf entry ends in its pointer"
        );
        Ok(())
    }

    /// Append an inner entry: `child`, whose least key is `key`.
    pub fn push_child(&mut self, key: &[u8], child: NodePtr) -> Result<(), EngineError> {
        if self.level == 0 {
            return Err(NodeBuilder::bad("level", "an inner node", 0));
        }
        if let Some(found) = child.invalid() {
            return Err(NodeBuilder::bad("pointer", NODE_PTR_RULE, found));
        }
        self.push_key(key)?;
        self.body.extend_from_slice(&child.page.to_le_bytes());
        self.body.extend_from_slice(&child.len.to_le_bytes());
        assert_eq!(
            self.body.len() - self.last_key.1,
            NODE_PTR_BYTES,
            "an inner entry ends in its pointer"
        );
        Ok(())
    }

    /// Append entry `i` of `view`, a checked node of the same level, as it is encoded.
    pub fn push_entry(&mut self, view: &NodeView, i: usize) -> Result<(), EngineError> {
        if view.level() != self.level {
            return Err(NodeBuilder::bad("level", self.level, view.level()));
        }
        self.push_key(view.key(i))?;
        self.body.extend_from_slice(view.ptr_bytes(i));
        Ok(())
    }

    /// Append entries `from..to` of `view` (checked, same level), as they are encoded.
    pub fn push_entries(
        &mut self,
        view: &NodeView,
        from: usize,
        to: usize,
    ) -> Result<(), EngineError> {
        if from >= to {
            return Ok(());
        }
        assert!(
            to <= view.len(),
            "entries {from}..{to} of a node of {}",
            view.len()
        );
        let before = self.len();
        self.push_entry(view, from)?;
        if to > from + 1 {
            // The view's keys ascend (it was checked): the rest go in as one copy.
            let (a, b) = (view.off(from + 1), view.off(to));
            let base = self.body.len() as u32;
            self.offs.extend(
                view.slots[from + 1..to]
                    .iter()
                    .map(|s| s.off - a as u32 + base),
            );
            self.body.extend_from_slice(&view.bytes[a..b]);
            let last = *self.offs.last().unwrap_or(&0) as usize;
            let n = u16::from_le_bytes([self.body[last], self.body[last + 1]]) as usize;
            self.last_key = (last + 2, last + 2 + n);
        }
        assert_eq!(self.len(), before + (to - from), "every entry copied once");
        Ok(())
    }

    /// Per entry: (key length, packed pointer bytes).
    fn packed_sizes(&self) -> Vec<(usize, usize)> {
        let ptr_bytes = if self.level == 0 {
            DOC_PTR_BYTES
        } else {
            NODE_PTR_BYTES
        };
        (0..self.len())
            .map(|i| {
                let k = self.key(i).len();
                let at = self.offs[i] as usize + 2 + k;
                let ptr = &self.body[at..at + ptr_bytes];
                (k, packed::packed_ptr_len(self.level, ptr))
            })
            .collect()
    }

    /// Packed bytes of entries `a..b` as one node (their shared prefix: the first and last
    /// keys', as [`NodeView`] takes it).
    fn packed_len(&self, sizes: &[(usize, usize)], a: usize, b: usize) -> usize {
        let (first, last) = (self.key(a), self.key(b - 1));
        let prefix = first.iter().zip(last).take_while(|(x, y)| x == y).count();
        let entries: usize = sizes[a..b]
            .iter()
            .map(|&(k, p)| packed::packed_entry_len(prefix, k, p))
            .sum();
        packed::packed_node_len(prefix, entries)
    }

    /// The first key of entry `i`.
    fn key(&self, i: usize) -> &[u8] {
        let at = self.offs[i] as usize;
        let n = u16::from_le_bytes([self.body[at], self.body[at + 1]]) as usize;
        &self.body[at + 2..at + 2 + n]
    }

    /// Cut the entries into nodes that fit `payload` bytes where they can — halves of about
    /// equal bytes, halved again until each fits (a leaf needs two entries to split, an inner
    /// node four, so an inner node keeps at least two children; a node that cannot split spans
    /// pages) — and encode each: (least key, encoded node, its view), in key order.
    pub fn finish(self, payload: usize) -> Result<Vec<(Vec<u8>, NodeView)>, EngineError> {
        self.finish_as(payload, NodeLayout::Plain, Cut::Halves)
    }

    /// [`NodeBuilder::finish`] with the nodes stored in `layout` (cut to fit `payload` as
    /// stored) and cut as `cut` says.
    pub fn finish_as(
        self,
        payload: usize,
        layout: NodeLayout,
        cut: Cut,
    ) -> Result<Vec<(Vec<u8>, NodeView)>, EngineError> {
        let n = self.len();
        if n == 0 {
            return Ok(vec![]);
        }
        let end = |i: usize| {
            if i == n {
                self.body.len()
            } else {
                self.offs[i] as usize
            }
        };
        let plain_of = |a: usize, b: usize| NODE_HEAD_BYTES + end(b) - end(a) + CRC_BYTES;
        let packed = (layout == NodeLayout::Packed).then(|| self.packed_sizes());
        let bytes_of = |a: usize, b: usize| match &packed {
            None => plain_of(a, b),
            Some(sizes) => self.packed_len(sizes, a, b),
        };
        let min = if self.level == 0 { 2 } else { 4 };
        let done = match cut {
            Cut::Halves => halves(n, min, payload, &bytes_of, &end),
            Cut::Full => full(n, min, payload, &bytes_of, &end),
        };
        // The pieces tile the entries in key order (`todo` pops the left half first).
        assert!(done.windows(2).all(|w| w[0].1 == w[1].0), "pieces in order");
        assert_eq!(
            (done[0].0, done[done.len() - 1].1),
            (0, n),
            "pieces cover the entries"
        );
        let mut out = Vec::with_capacity(done.len());
        for (a, b) in done {
            let count = b - a;
            assert!(count >= 1, "every piece holds an entry");
            if count > u16::MAX as usize {
                return Err(NodeBuilder::bad(
                    "count",
                    format!("at most {}", u16::MAX),
                    count,
                ));
            }
            let len = plain_of(a, b);
            if len > u32::MAX as usize {
                return Err(too_large("index node", len, u32::MAX as usize));
            }
            let mut bytes = Vec::with_capacity(len);
            bytes.push(NODE_TAG);
            bytes.push(self.level);
            bytes.extend_from_slice(&(count as u16).to_le_bytes());
            bytes.extend_from_slice(&(len as u32).to_le_bytes());
            bytes.extend_from_slice(&self.body[end(a)..end(b)]);
            push_crc(&mut bytes, 0);
            let base = end(a) as u32;
            let mut offs: Vec<u32> = Vec::with_capacity(count + 1);
            offs.extend(
                self.offs[a..b]
                    .iter()
                    .map(|&o| o - base + NODE_HEAD_BYTES as u32),
            );
            offs.push((NODE_HEAD_BYTES + end(b) - end(a)) as u32);
            let key = self.key(a).to_vec();
            let mut view = NodeView::index(self.level, offs, bytes.into_boxed_slice());
            if packed.is_some() {
                let entries = &self.body[end(a)..end(b)];
                let p = packed::pack(self.level, count, view.prefix_len(), entries);
                assert_eq!(p.len(), bytes_of(a, b), "packed as long as measured");
                view = view.stored_as(p);
            }
            out.push((key, view));
        }
        // Tree order at the split: each piece's least key is above the previous piece's.
        assert!(
            out.windows(2).all(|w| w[0].0 < w[1].0),
            "pieces' keys ascend"
        );
        Ok(out)
    }
}

/// How [`NodeBuilder::finish_as`] cuts entries that do not fit one node.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Cut {
    /// Halves of about equal bytes, halved again until each fits (a split node: each half
    /// has room for the inserts to come).
    Halves,
    /// Nodes filled in key order, the last two balanced (a run of rewritten nodes: on an
    /// append-only index a node costs a page write whether full or not, so fill it).
    Full,
}

/// The pieces `Cut::Halves` makes of entries `0..n`.
fn halves(
    n: usize,
    min: usize,
    payload: usize,
    bytes_of: &dyn Fn(usize, usize) -> usize,
    end: &dyn Fn(usize) -> usize,
) -> Vec<(usize, usize)> {
    let mut todo = vec![(0usize, n)];
    let mut done = Vec::new();
    while let Some((a, b)) = todo.pop() {
        if bytes_of(a, b) > payload && b - a >= min {
            let sizes: Vec<usize> = (a..b).map(|i| end(i + 1) - end(i)).collect();
            let at = a + balanced_cut(&sizes);
            todo.push((at, b));
            todo.push((a, at));
            continue;
        }
        done.push((a, b));
    }
    done
}

/// The pieces `Cut::Full` makes of entries `0..n`: each as many entries as fit `payload`
/// (at least `min / 2`, so an inner node keeps two children), the last two cut in halves of
/// about equal bytes when the last is under half full.
fn full(
    n: usize,
    min: usize,
    payload: usize,
    bytes_of: &dyn Fn(usize, usize) -> usize,
    end: &dyn Fn(usize) -> usize,
) -> Vec<(usize, usize)> {
    let least = (min / 2).max(1);
    let mut done: Vec<(usize, usize)> = Vec::new();
    let mut a = 0;
    while a < n {
        // The last `b` that fits (bytes grow with `b`: an entry more adds its bytes, and a
        // shorter shared prefix adds to every entry more than it saves once).
        let mut b = (a + least).min(n);
        let mut step = 1;
        while b + step <= n && bytes_of(a, b + step) <= payload {
            b += step;
            step *= 2;
        }
        let mut over = (b + step).min(n + 1);
        while over - b > 1 {
            let mid = b + (over - b) / 2;
            if bytes_of(a, mid) <= payload {
                b = mid;
            } else {
                over = mid;
            }
        }
        done.push((a, b));
        a = b;
    }
    let k = done.len();
    if k >= 2 && bytes_of(done[k - 1].0, done[k - 1].1) * 2 < payload {
        let (a, b) = (done[k - 2].0, done[k - 1].1);
        done.truncate(k - 2);
        done.extend(
            halves(b - a, min, payload, &|x, y| bytes_of(a + x, a + y), &|x| {
                end(a + x)
            })
            .into_iter()
            .map(|(x, y)| (a + x, a + y)),
        );
    }
    done
}
