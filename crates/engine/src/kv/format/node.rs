//! Nodes of the copy-on-write B+-tree.

use super::doc::DOC_PTR_RULE;
use super::*;

/// Where an index node lives: it starts page `page`'s payload and is `len` bytes long.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct NodePtr {
    pub page: u64,
    pub len: u32,
}

pub(super) const NODE_PTR_RULE: &str =
    "a page (not NO_PAGE) and a length of at least NODE_MIN_BYTES";

impl NodePtr {
    /// Why this pointer cannot point at a node (None: it can).
    pub fn invalid(&self) -> Option<String> {
        (self.page == NO_PAGE || (self.len as usize) < NODE_MIN_BYTES)
            .then(|| format!("page {} len {}", self.page, self.len))
    }

    /// Pages the node occupies, for index pages of `payload_bytes`.
    pub fn pages(&self, payload_bytes: usize) -> u64 {
        (self.len as u64)
            .div_ceil(payload_bytes.max(1) as u64)
            .max(1)
    }
}

/// A node of the copy-on-write B+-tree: a leaf maps keys to documents; an inner node of
/// `level >= 1` maps the least key under each child to the child.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Node {
    Leaf(Vec<(Vec<u8>, DocPtr)>),
    Inner {
        level: u8,
        children: Vec<(Vec<u8>, NodePtr)>,
    },
}

impl Node {
    pub fn level(&self) -> u8 {
        match self {
            Node::Leaf(_) => 0,
            Node::Inner { level, .. } => *level,
        }
    }

    pub fn len(&self) -> usize {
        match self {
            Node::Leaf(e) => e.len(),
            Node::Inner { children, .. } => children.len(),
        }
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Where `key` is among the node's keys: `Ok(i)` at entry i, `Err(i)` where it would go.
    pub fn search(&self, key: &[u8]) -> Result<usize, usize> {
        match self {
            Node::Leaf(e) => e.binary_search_by(|(k, _)| k.as_slice().cmp(key)),
            Node::Inner { children, .. } => {
                children.binary_search_by(|(k, _)| k.as_slice().cmp(key))
            }
        }
    }

    /// The entry to follow for `key` in an inner node: the last whose least key is ≤ `key`
    /// (the first child when `key` is below them all, e.g. after its least key was deleted).
    pub fn child_index(&self, key: &[u8]) -> usize {
        match self.search(key) {
            Ok(i) => i,
            Err(i) => i.saturating_sub(1),
        }
    }

    /// Split a node of two or more entries into two of about equal encoded bytes (each keeps
    /// at least one entry); `self` keeps the left half and the right half is returned — its
    /// first key is the separator the parent gets. A node of fewer than two entries cannot
    /// split: None.
    pub fn split_off_half(&mut self) -> Option<Node> {
        if self.len() < 2 {
            return None;
        }
        let sizes: Vec<usize> = match self {
            Node::Leaf(e) => e.iter().map(|(k, _)| 2 + k.len() + DOC_PTR_BYTES).collect(),
            Node::Inner { children, .. } => children
                .iter()
                .map(|(k, _)| 2 + k.len() + NODE_PTR_BYTES)
                .collect(),
        };
        let at = balanced_cut(&sizes);
        let right = match self {
            Node::Leaf(e) => Node::Leaf(e.split_off(at)),
            Node::Inner { level, children } => Node::Inner {
                level: *level,
                children: children.split_off(at),
            },
        };
        assert!(
            !self.is_empty() && !right.is_empty(),
            "each half keeps an entry"
        );
        assert_eq!(self.level(), right.level(), "halves of one level");
        Some(right)
    }

    /// Bytes of the encoded node (a split decision needs this before encoding).
    pub fn encoded_len(&self) -> usize {
        let entries: usize = match self {
            Node::Leaf(e) => e.iter().map(|(k, _)| 2 + k.len() + DOC_PTR_BYTES).sum(),
            Node::Inner { children, .. } => children
                .iter()
                .map(|(k, _)| 2 + k.len() + NODE_PTR_BYTES)
                .sum(),
        };
        NODE_HEAD_BYTES + entries + CRC_BYTES
    }

    /// Append the encoded node to `out`; returns its length. Keys must ascend strictly and
    /// fit [`KEY_BYTES_MAX`]; an inner node needs a child and a level in 1..=32.
    pub fn encode(&self, out: &mut Vec<u8>) -> Result<usize, EngineError> {
        self.check()?;
        let from = out.len();
        out.push(NODE_TAG);
        out.push(self.level());
        out.extend_from_slice(&(self.len() as u16).to_le_bytes());
        out.extend_from_slice(&(self.encoded_len() as u32).to_le_bytes());
        match self {
            Node::Leaf(entries) => {
                for (key, doc) in entries {
                    out.extend_from_slice(&(key.len() as u16).to_le_bytes());
                    out.extend_from_slice(key);
                    out.extend_from_slice(&doc.page.to_le_bytes());
                    out.extend_from_slice(&doc.offset.to_le_bytes());
                    out.extend_from_slice(&doc.len.to_le_bytes());
                }
            }
            Node::Inner { children, .. } => {
                for (key, child) in children {
                    out.extend_from_slice(&(key.len() as u16).to_le_bytes());
                    out.extend_from_slice(key);
                    out.extend_from_slice(&child.page.to_le_bytes());
                    out.extend_from_slice(&child.len.to_le_bytes());
                }
            }
        }
        push_crc(out, from);
        assert_eq!(
            out.len() - from,
            self.encoded_len(),
            "encoded as long as computed"
        );
        Ok(out.len() - from)
    }

    fn keys(&self) -> Vec<&[u8]> {
        match self {
            Node::Leaf(e) => e.iter().map(|(k, _)| k.as_slice()).collect(),
            Node::Inner { children, .. } => children.iter().map(|(k, _)| k.as_slice()).collect(),
        }
    }

    /// The rules `encode` enforces (a broken node is the caller's bug, reported as an error).
    fn check(&self) -> Result<(), EngineError> {
        let bad =
            |field: &'static str, expected: String, found: String| invalid(field, expected, found);
        if self.len() > u16::MAX as usize {
            return Err(bad(
                "count",
                format!("at most {}", u16::MAX),
                self.len().to_string(),
            ));
        }
        if let Node::Inner { level, children } = self {
            if !(1..=NODE_LEVEL_MAX).contains(level) || children.is_empty() {
                let found = format!("level {level}, {} children", children.len());
                return Err(bad("level", "level 1..=32 and a child".into(), found));
            }
        }
        let invalid = match self {
            Node::Leaf(e) => e
                .iter()
                .find_map(|(_, p)| p.invalid())
                .map(|f| (DOC_PTR_RULE, f)),
            Node::Inner { children, .. } => children
                .iter()
                .find_map(|(_, p)| p.invalid())
                .map(|f| (NODE_PTR_RULE, f)),
        };
        if let Some((rule, found)) = invalid {
            return Err(bad("pointer", rule.into(), found));
        }
        let keys = self.keys();
        if let Some(k) = keys.iter().find(|k| k.len() > KEY_BYTES_MAX) {
            return Err(too_large("key", k.len(), KEY_BYTES_MAX));
        }
        if keys.windows(2).any(|w| w[0] >= w[1]) {
            return Err(bad(
                "keys",
                "strictly ascending".into(),
                "a repeat or descent".into(),
            ));
        }
        if self.encoded_len() > u32::MAX as usize {
            return Err(too_large(
                "index node",
                self.encoded_len(),
                u32::MAX as usize,
            ));
        }
        Ok(())
    }

    /// Decode the node at the start of `buf` (which may hold more bytes after it).
    pub fn decode(buf: &[u8]) -> Result<Node, Corruption> {
        NodeView::decode(buf).map(|v| v.to_node())
    }
}

/// The cut `1..sizes.len()` that leaves the two sides' byte totals closest.
pub(super) fn balanced_cut(sizes: &[usize]) -> usize {
    assert!(
        sizes.len() >= 2,
        "a cut needs two entries, got {}",
        sizes.len()
    );
    let total: usize = sizes.iter().sum();
    let mut left = 0;
    let mut best = (usize::MAX, 1);
    for (i, s) in sizes.iter().enumerate().take(sizes.len() - 1) {
        left += s;
        let diff = left.abs_diff(total - left);
        if diff < best.0 {
            best = (diff, i + 1);
        }
    }
    assert!(
        (1..sizes.len()).contains(&best.1),
        "the cut leaves an entry on each side"
    );
    best.1
}

/// Read the node at `ptr` from its pages' payloads (`pages[0]` is `ptr.page`, then the
/// following pages, each a whole payload). The node must be exactly `ptr.len` bytes; a stale
/// page in the middle fails the node's crc.
pub fn gather_node(pages: &[&[u8]], ptr: NodePtr) -> Result<NodeView, Corruption> {
    let len = ptr.len as usize;
    let mut bytes = Vec::with_capacity(len.min(pages.iter().map(|p| p.len()).sum()));
    for page in pages {
        let n = page.len().min(len - bytes.len());
        bytes.extend_from_slice(&page[..n]);
        if bytes.len() == len {
            break;
        }
    }
    assert!(bytes.len() <= len, "gathered no more than the node");
    if bytes.len() < len {
        return Err(truncated(
            Structure::IndexNode,
            0,
            len as u64,
            bytes.len() as u64,
        ));
    }
    let node = NodeView::decode_vec(bytes)?;
    if node.encoded_len() != len {
        let found = node.encoded_len();
        return Err(field_at(Structure::NodePointer, "len", 0, found, len));
    }
    Ok(node)
}

/// The 8 bytes of `suffix` from its start, big-endian, zero-padded: ordered as the suffixes
/// are, except that suffixes equal in their first 8 bytes tie.
fn head(suffix: &[u8]) -> u64 {
    let mut b = [0u8; 8];
    let n = suffix.len().min(8);
    b[..n].copy_from_slice(&suffix[..n]);
    u64::from_be_bytes(b)
}

fn common_prefix(a: &[u8], b: &[u8]) -> usize {
    a.iter().zip(b).take_while(|(x, y)| x == y).count()
}

/// An index node as the cache holds it: the encoded node kept whole and searched in place
/// (no allocation per key). Search runs over `slots`, one per key: the 8 bytes after the
/// prefix every key of the node shares and where the entry lies, so a lookup touches one
/// small array and reads the encoded bytes only where two heads tie, to confirm a match and
/// to take the pointer. The prefix is kept inline when short (no pointer to follow for it).
#[derive(Clone, Debug)]
pub struct NodeView {
    level: u8,
    /// Bytes every key starts with (the first and last key's common prefix)...
    prefix: u32,
    /// ... and the first of them (all of them when `prefix <= PREFIX_INLINE`).
    prefix_bytes: [u8; PREFIX_INLINE],
    pub(super) slots: Box<[Slot]>,
    /// The heads of entries `fence_at(0..fences)`, inline: a search narrows to the slots
    /// between two fences before it reads the slot array (one small block of it).
    fence_heads: [u64; FENCES],
    /// Where the fence entries start in `bytes`: a search knows from the fences alone which
    /// bytes the entries between two of them take, and loads them while it reads their slots.
    fence_offs: [u32; FENCES],
    fences: u8,
    /// Where the entries end in `bytes` (the crc follows).
    end: u32,
    /// The node in the plain layout (searched in place).
    pub(super) bytes: Box<[u8]>,
    /// The node as its pages hold it when it is stored packed ([`super::packed`]); `None`:
    /// stored as `bytes`.
    stored: Option<Box<[u8]>>,
}

/// Prefix bytes a [`NodeView`] keeps inline.
const PREFIX_INLINE: usize = 16;
/// Heads a [`NodeView`] keeps inline as fences.
const FENCES: usize = 16;

/// One entry of a [`NodeView`]: its key's head and where the entry lies in the bytes.
#[derive(Clone, Copy, Debug)]
pub(super) struct Slot {
    head: u64,
    /// Where the entry starts (at its `key_len`).
    pub(super) off: u32,
    key_len: u32,
}

impl PartialEq for NodeView {
    fn eq(&self, other: &NodeView) -> bool {
        self.bytes == other.bytes && self.stored == other.stored
    }
}

impl Eq for NodeView {}

impl NodeView {
    /// Decode and check the node at the start of `buf` (which may hold more bytes after it):
    /// everything `Node::decode` checks (they are one decoder).
    pub fn decode(buf: &[u8]) -> Result<NodeView, Corruption> {
        let len = NodeView::check_len(buf)?;
        NodeView::decode_vec(buf[..len].to_vec())
    }

    /// The length field of the node at the start of `buf`, checked against `buf`.
    fn check_len(buf: &[u8]) -> Result<usize, Corruption> {
        let mut r = Reader::new(buf, Structure::IndexNode);
        let tag = r.u8()?;
        if tag != NODE_TAG && tag != NODE_TAG_PACKED {
            let expected = format!("{NODE_TAG:#04x} or {NODE_TAG_PACKED:#04x}");
            return Err(r.field("tag", 1, expected, format!("{tag:#04x}")));
        }
        let level = r.u8()?;
        if level > NODE_LEVEL_MAX {
            return Err(r.field("level", 1, format!("at most {NODE_LEVEL_MAX}"), level));
        }
        let count = r.u16()? as usize;
        if level > 0 && count == 0 {
            return Err(r.field("count", 2, "at least 1 in an inner node", 0));
        }
        let len = r.u32()? as usize;
        if len < NODE_MIN_BYTES || len > buf.len() {
            let expected = format!("{NODE_MIN_BYTES}..={}", buf.len());
            return Err(r.field("len", 4, expected, len));
        }
        Ok(len)
    }

    /// Decode and check the node at the start of `bytes`, keeping the buffer (cut to the node).
    pub fn decode_vec(mut bytes: Vec<u8>) -> Result<NodeView, Corruption> {
        let len = NodeView::check_len(&bytes)?;
        bytes.truncate(len);
        if bytes[0] == NODE_TAG_PACKED {
            let plain = super::packed::unpack(&bytes)?;
            let mut view = NodeView::decode_vec(plain)?;
            assert_eq!(
                view.bytes[0], NODE_TAG,
                "a packed node unpacks to a plain one"
            );
            view.stored = Some(bytes.into_boxed_slice());
            return Ok(view);
        }
        let level = bytes[1];
        let count = u16::from_le_bytes([bytes[2], bytes[3]]) as usize;
        let mut r = Reader::new(&bytes, Structure::IndexNode);
        r.at = NODE_HEAD_BYTES;
        let mut offs: Vec<u32> = Vec::with_capacity(count.min(len / 14) + 1);
        let mut prev: Option<&[u8]> = None;
        for _ in 0..count {
            offs.push(r.at as u32);
            let key_len = r.u16()? as usize;
            if key_len > KEY_BYTES_MAX {
                return Err(r.field("key_len", 2, format!("at most {KEY_BYTES_MAX}"), key_len));
            }
            let key = r.bytes(key_len)?;
            if prev.is_some_and(|p| p >= key) {
                return Err(r.field(
                    "key",
                    key_len,
                    "a key above the previous one",
                    "a repeat or descent",
                ));
            }
            prev = Some(key);
            if level == 0 {
                let p = DocPtr {
                    page: r.u64()?,
                    offset: r.u32()?,
                    len: r.u32()?,
                };
                if let Some(found) = p.invalid() {
                    return Err(r.field("doc pointer", DOC_PTR_BYTES, DOC_PTR_RULE, found));
                }
            } else {
                let p = NodePtr {
                    page: r.u64()?,
                    len: r.u32()?,
                };
                if let Some(found) = p.invalid() {
                    return Err(r.field("child pointer", NODE_PTR_BYTES, NODE_PTR_RULE, found));
                }
            }
        }
        offs.push(r.at as u32);
        assert_eq!(offs.len(), count + 1, "an offset per entry and the end");
        r.crc()?;
        if r.at != len {
            return Err(field_at(Structure::IndexNode, "len", 4, r.at, len));
        }
        Ok(NodeView::index(level, offs, bytes.into_boxed_slice()))
    }

    /// A view of encoded, checked bytes with their entries' offsets (`offs`: one per entry
    /// and the end of the entries).
    pub(super) fn index(level: u8, offs: Vec<u32>, bytes: Box<[u8]>) -> NodeView {
        let key = |i: usize| {
            let at = offs[i] as usize;
            let n = u16::from_le_bytes([bytes[at], bytes[at + 1]]) as usize;
            &bytes[at + 2..at + 2 + n]
        };
        let count = offs.len() - 1;
        let prefix = match count {
            0 => 0,
            n => common_prefix(key(0), key(n - 1)),
        };
        let mut prefix_bytes = [0u8; PREFIX_INLINE];
        if count > 0 {
            let n = prefix.min(PREFIX_INLINE);
            prefix_bytes[..n].copy_from_slice(&key(0)[..n]);
        }
        let slots: Box<[Slot]> = (0..count)
            .map(|i| {
                let k = key(i);
                Slot {
                    head: head(&k[prefix..]),
                    off: offs[i],
                    key_len: k.len() as u32,
                }
            })
            .collect();
        let fences = count.min(FENCES);
        assert!(
            count == 0 || prefix <= key(0).len(),
            "the prefix is a key's"
        );
        assert_eq!(
            offs[count] as usize + CRC_BYTES,
            bytes.len(),
            "the crc follows the entries"
        );
        let (mut fence_heads, mut fence_offs) = ([0u64; FENCES], [0u32; FENCES]);
        for j in 0..fences {
            fence_heads[j] = slots[j * count / fences].head;
            fence_offs[j] = offs[j * count / fences];
        }
        NodeView {
            level,
            prefix: prefix as u32,
            prefix_bytes,
            slots,
            fence_heads,
            fence_offs,
            fences: fences as u8,
            end: offs[count],
            bytes,
            stored: None,
        }
    }

    /// This view, stored as the packed node `packed` (the same entries).
    pub(super) fn stored_as(mut self, packed: Vec<u8>) -> NodeView {
        assert_eq!(packed[0], NODE_TAG_PACKED, "stored packed");
        self.stored = Some(packed.into_boxed_slice());
        self
    }

    /// The shared key prefix's length (of the first and last keys).
    pub(super) fn prefix_len(&self) -> usize {
        self.prefix as usize
    }

    /// Where entry `i` starts (`len`: where the entries end).
    pub(super) fn off(&self, i: usize) -> usize {
        match self.slots.get(i) {
            Some(s) => s.off as usize,
            None => self.end as usize,
        }
    }

    pub fn level(&self) -> u8 {
        self.level
    }

    pub fn len(&self) -> usize {
        self.slots.len()
    }

    pub fn is_empty(&self) -> bool {
        self.slots.is_empty()
    }

    /// Bytes of the encoded node as stored (what its pointer's `len` says).
    pub fn encoded_len(&self) -> usize {
        self.bytes().len()
    }

    /// The encoded node as its pages hold it (packed or plain).
    pub fn bytes(&self) -> &[u8] {
        self.stored.as_deref().unwrap_or(&self.bytes)
    }

    /// Key `i` (< `len`).
    pub fn key(&self, i: usize) -> &[u8] {
        let s = self.slots[i];
        let at = s.off as usize + 2;
        &self.bytes[at..at + s.key_len as usize]
    }

    /// The pointer bytes of entry `i` (after its key).
    pub(super) fn ptr_bytes(&self, i: usize) -> &[u8] {
        let s = self.slots[i];
        let at = s.off as usize + 2 + s.key_len as usize;
        &self.bytes[at..self.off(i + 1)]
    }

    /// Entry `i`'s encoded bytes (`key_len | key | pointer`), as a builder of the same
    /// level takes them.
    pub fn entry(&self, i: usize) -> &[u8] {
        &self.bytes[self.off(i)..self.off(i + 1)]
    }

    /// The document of entry `i` of a leaf (an inner node's entry reads as garbage: callers
    /// check `level`).
    pub fn doc(&self, i: usize) -> DocPtr {
        assert_eq!(self.level, 0, "a document pointer is a leaf's");
        let b = self.ptr_bytes(i);
        let u64_at = |o: usize| u64::from_le_bytes(b[o..o + 8].try_into().unwrap_or([0; 8]));
        let u32_at = |o: usize| u32::from_le_bytes(b[o..o + 4].try_into().unwrap_or([0; 4]));
        if b.len() < DOC_PTR_BYTES {
            return DocPtr {
                page: NO_PAGE,
                offset: 0,
                len: 0,
            };
        }
        DocPtr {
            page: u64_at(0),
            offset: u32_at(8),
            len: u32_at(12),
        }
    }

    /// The child of entry `i` of an inner node.
    pub fn child(&self, i: usize) -> NodePtr {
        assert!(self.level > 0, "a child pointer is an inner node's");
        let b = self.ptr_bytes(i);
        if b.len() < NODE_PTR_BYTES {
            return NodePtr {
                page: NO_PAGE,
                len: 0,
            };
        }
        NodePtr {
            page: u64::from_le_bytes(b[0..8].try_into().unwrap_or([0; 8])),
            len: u32::from_le_bytes(b[8..12].try_into().unwrap_or([0; 4])),
        }
    }

    /// Where `key` is among the node's keys: `Ok(i)` at entry i, `Err(i)` where it would go.
    pub fn search(&self, key: &[u8]) -> Result<usize, usize> {
        let n = self.len();
        if n == 0 {
            return Err(0);
        }
        let p = self.prefix as usize;
        if p > 0 {
            // Every key starts with the prefix: below it, `key` goes first; above, last.
            let shared = match p <= PREFIX_INLINE {
                true => &self.prefix_bytes[..p],
                false => &self.key(0)[..p],
            };
            match key[..p.min(key.len())].cmp(shared) {
                std::cmp::Ordering::Less => return Err(0),
                std::cmp::Ordering::Greater => return Err(n),
                std::cmp::Ordering::Equal if key.len() < p => return Err(0),
                std::cmp::Ordering::Equal => {}
            }
        }
        let suffix = &key[p..];
        let h = head(suffix);
        // Heads ascend: the entries at or before the last fence below `h` are below `key`,
        // those from the first fence above `h` on are above it.
        let nf = self.fences as usize;
        let fences = &self.fence_heads[..nf];
        let below = fences.iter().take_while(|&&f| f < h).count();
        let not_above = below + fences[below..].iter().take_while(|&&f| f == h).count();
        let fence_at = |j: usize| j * n / nf;
        let mut lo = match below {
            0 => 0,
            j => fence_at(j - 1) + 1,
        };
        let mut hi = if not_above < nf {
            fence_at(not_above)
        } else {
            n
        };
        self.warm_entries(below, not_above);
        while lo < hi {
            let mid = lo + (hi - lo) / 2;
            let ord = match self.slots[mid].head.cmp(&h) {
                std::cmp::Ordering::Equal => self.key(mid)[p..].cmp(suffix),
                o => o,
            };
            match ord {
                std::cmp::Ordering::Less => lo = mid + 1,
                std::cmp::Ordering::Greater => hi = mid,
                std::cmp::Ordering::Equal => return Ok(mid),
            }
        }
        Err(lo)
    }

    /// Load the bytes of the entries a search narrowed to — from fence `below - 1` (the node's
    /// first entry for 0) to fence `not_above` (the entries' end past the last) — into the
    /// CPU's cache, at most `WARM_LINES` lines of 64 bytes: loads independent of the slot
    /// search that follows, so the entry's miss overlaps the slots' instead of following it.
    /// A hint: changes nothing.
    fn warm_entries(&self, below: usize, not_above: usize) {
        const WARM_LINES: usize = 8;
        let nf = self.fences as usize;
        let from = match below {
            0 => self.off(0),
            j => self.fence_offs[j - 1] as usize,
        };
        let to = match self.fence_offs.get(not_above) {
            Some(&o) if not_above < nf => o as usize,
            _ => self.end as usize,
        };
        let mut sum = 0u8;
        for at in (from..to).step_by(64).take(WARM_LINES) {
            sum ^= self.bytes.get(at).copied().unwrap_or(0);
        }
        std::hint::black_box(sum);
    }

    /// The entry to follow for `key` in an inner node: the last whose least key is ≤ `key`
    /// (the first child when `key` is below them all, e.g. after its least key was deleted).
    pub fn child_index(&self, key: &[u8]) -> usize {
        match self.search(key) {
            Ok(i) => i,
            Err(i) => i.saturating_sub(1),
        }
    }

    /// The node as owned entries.
    pub fn to_node(&self) -> Node {
        if self.level == 0 {
            Node::Leaf(
                (0..self.len())
                    .map(|i| (self.key(i).to_vec(), self.doc(i)))
                    .collect(),
            )
        } else {
            Node::Inner {
                level: self.level,
                children: (0..self.len())
                    .map(|i| (self.key(i).to_vec(), self.child(i)))
                    .collect(),
            }
        }
    }
}
