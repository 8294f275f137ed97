//! Nodes of the copy-on-write B+-tree.

use super::doc::DOC_PTR_RULE;
use super::*;

/// Where an index node lives: it starts page `page`'s payload and is `len` bytes long.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct NodePtr {
    pub page: u64,
    pub len: u32,
}

const NODE_PTR_RULE: &str = "a page (not NO_PAGE) and a length of at least NODE_MIN_BYTES";

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
        Some(match self {
            Node::Leaf(e) => Node::Leaf(e.split_off(at)),
            Node::Inner { level, children } => Node::Inner {
                level: *level,
                children: children.split_off(at),
            },
        })
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
    pub fn encode(&self, out: &mut Vec<u8>) -> Result<usize, FormatError> {
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
        Ok(out.len() - from)
    }

    fn keys(&self) -> Vec<&[u8]> {
        match self {
            Node::Leaf(e) => e.iter().map(|(k, _)| k.as_slice()).collect(),
            Node::Inner { children, .. } => children.iter().map(|(k, _)| k.as_slice()).collect(),
        }
    }

    /// The rules `encode` enforces (a broken node is the caller's bug, reported as an error).
    fn check(&self) -> Result<(), FormatError> {
        let bad = |field: &'static str, expected: String, found: String| FormatError::Field {
            structure: "index node (encoding)",
            field,
            offset: 0,
            expected,
            found,
        };
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
    pub fn decode(buf: &[u8]) -> Result<Node, FormatError> {
        let mut r = Reader::new(buf, "index node");
        let tag = r.u8()?;
        if tag != NODE_TAG {
            return Err(r.field("tag", 1, format!("{NODE_TAG:#04x}"), format!("{tag:#04x}")));
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
        let mut r = Reader {
            buf: &buf[..len],
            ..r
        };
        let node = if level == 0 {
            Node::Leaf(decode_entries(&mut r, count, |r| {
                let p = DocPtr {
                    page: r.u64()?,
                    offset: r.u32()?,
                    len: r.u32()?,
                };
                match p.invalid() {
                    None => Ok(p),
                    Some(found) => Err(r.field("doc pointer", DOC_PTR_BYTES, DOC_PTR_RULE, found)),
                }
            })?)
        } else {
            let children = decode_entries(&mut r, count, |r| {
                let p = NodePtr {
                    page: r.u64()?,
                    len: r.u32()?,
                };
                match p.invalid() {
                    None => Ok(p),
                    Some(found) => {
                        Err(r.field("child pointer", NODE_PTR_BYTES, NODE_PTR_RULE, found))
                    }
                }
            })?;
            Node::Inner { level, children }
        };
        r.crc()?;
        if r.at != len {
            return Err(field_at("index node", "len", 4, r.at, len));
        }
        Ok(node)
    }
}

/// The cut `1..sizes.len()` that leaves the two sides' byte totals closest.
fn balanced_cut(sizes: &[usize]) -> usize {
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
    best.1
}

fn decode_entries<P>(
    r: &mut Reader<'_>,
    count: usize,
    ptr: impl Fn(&mut Reader<'_>) -> Result<P, FormatError>,
) -> Result<Vec<(Vec<u8>, P)>, FormatError> {
    let mut entries: Vec<(Vec<u8>, P)> = Vec::with_capacity(count.min(r.buf.len() / 14));
    for _ in 0..count {
        let key_len = r.u16()? as usize;
        if key_len > KEY_BYTES_MAX {
            return Err(r.field("key_len", 2, format!("at most {KEY_BYTES_MAX}"), key_len));
        }
        let key = r.bytes(key_len)?;
        if entries
            .last()
            .is_some_and(|(prev, _)| prev.as_slice() >= key)
        {
            return Err(r.field(
                "key",
                key_len,
                "a key above the previous one",
                "a repeat or descent",
            ));
        }
        let p = ptr(r)?;
        entries.push((key.to_vec(), p));
    }
    Ok(entries)
}

/// Read the node at `ptr` from its pages' payloads (`pages[0]` is `ptr.page`, then the
/// following pages, each a whole payload). The node must be exactly `ptr.len` bytes; a stale
/// page in the middle fails the node's crc.
pub fn gather_node(pages: &[&[u8]], ptr: NodePtr) -> Result<Node, FormatError> {
    let len = ptr.len as usize;
    let mut bytes = Vec::with_capacity(len.min(pages.iter().map(|p| p.len()).sum()));
    for page in pages {
        let n = page.len().min(len - bytes.len());
        bytes.extend_from_slice(&page[..n]);
        if bytes.len() == len {
            break;
        }
    }
    if bytes.len() < len {
        return Err(FormatError::Truncated {
            structure: "index node",
            offset: 0,
            needed_bytes: len as u64,
            available_bytes: bytes.len() as u64,
        });
    }
    let node = Node::decode(&bytes)?;
    if node.encoded_len() != len {
        let found = node.encoded_len();
        return Err(field_at("node pointer", "len", 0, found, len));
    }
    Ok(node)
}
