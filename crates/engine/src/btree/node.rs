//! The B+-tree node format shared by every tree: one node per page, in the engine's page
//! format (header with kind, node id, version, crc32c).
//!
//! Payload (little-endian): `count u32 | next u64 | keys count x u64 | values`, where a leaf
//! has `count` values and a right-sibling link `next` (NO_NODE at the right end), and an inner
//! node has `count + 1` children (node ids) and `next` unused. Keys are strictly ascending.
//! Decoding checks all of this and returns [`EngineError::Corrupt`] otherwise — never panics.

use crate::error::{EngineError, Fault, Structure};
use crate::page::{self, Header, PageKind, HEADER_BYTES};

pub const NO_NODE: u64 = u64::MAX;

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Node {
    pub id: u64,
    pub leaf: bool,
    pub keys: Vec<u64>,
    /// Leaf: values; inner: child node ids (`keys.len() + 1`).
    pub vals: Vec<u64>,
    /// Leaf: right sibling (NO_NODE at the end).
    pub next: u64,
}

impl Node {
    pub fn empty_leaf(id: u64) -> Node {
        Node {
            id,
            leaf: true,
            keys: Vec::new(),
            vals: Vec::new(),
            next: NO_NODE,
        }
    }

    /// Bytes a node of `keys` keys needs in a page.
    pub fn bytes_for(keys: usize) -> usize {
        HEADER_BYTES + 4 + 8 + keys * 8 + (keys + 1) * 8
    }

    /// The child of an inner node to follow for `key`.
    pub fn child_index(&self, key: u64) -> usize {
        self.keys.partition_point(|&k| k <= key)
    }

    /// Encode into `buf` (one page) with `version`.
    pub fn encode(&self, buf: &mut [u8], version: u64) {
        let n = self.keys.len();
        assert!(
            Node::bytes_for(n) <= buf.len(),
            "node {} with {n} keys does not fit a page",
            self.id
        );
        let p = &mut buf[HEADER_BYTES..];
        p[0..4].copy_from_slice(&(n as u32).to_le_bytes());
        p[4..12].copy_from_slice(&self.next.to_le_bytes());
        let mut at = 12;
        for &x in self.keys.iter().chain(&self.vals) {
            p[at..at + 8].copy_from_slice(&x.to_le_bytes());
            at += 8;
        }
        let kind = if self.leaf {
            PageKind::BTreeLeaf
        } else {
            PageKind::BTreeInner
        };
        page::seal(
            buf,
            &Header {
                kind,
                flags: 0,
                id: self.id,
                version,
                len: at as u32,
            },
        );
    }

    /// Decode a page read from device page `page_no`; returns the node and its version.
    pub fn decode(buf: &[u8], page_no: u64) -> Result<(Node, u64), EngineError> {
        let h = page::open(buf, page_no)?;
        let bad = |what: Fault| EngineError::corrupt(Structure::BTreeNode, page_no, what);
        let leaf = match h.kind {
            PageKind::BTreeLeaf => true,
            PageKind::BTreeInner => false,
            found => {
                return Err(bad(Fault::Kind {
                    expected: "B-tree node",
                    found,
                }))
            }
        };
        let p = page::payload(buf, &h);
        if p.len() < 12 {
            return Err(bad(Fault::Length {
                what: "node payload bytes (at least)",
                expected: 12,
                found: p.len() as u64,
            }));
        }
        let n = u32::from_le_bytes(p[0..4].try_into().expect("4 bytes")) as usize;
        let nvals = if leaf { n } else { n + 1 };
        let want = 12 + (n as u64 + nvals as u64) * 8;
        if p.len() as u64 != want {
            return Err(bad(Fault::Length {
                what: "node payload bytes for its key count",
                expected: want,
                found: p.len() as u64,
            }));
        }
        let word =
            |i: usize| u64::from_le_bytes(p[12 + i * 8..20 + i * 8].try_into().expect("8 bytes"));
        let keys: Vec<u64> = (0..n).map(word).collect();
        if let Some(at) = keys.windows(2).position(|w| w[0] >= w[1]) {
            return Err(bad(Fault::KeyOrder {
                at: at + 1,
                previous: keys[at],
                found: keys[at + 1],
            }));
        }
        let node = Node {
            id: h.id,
            leaf,
            vals: (n..n + nvals).map(word).collect(),
            keys,
            next: u64::from_le_bytes(p[4..12].try_into().expect("8 bytes")),
        };
        Ok((node, h.version))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn leaf_and_inner_round_trip() {
        let mut buf = vec![0u8; 8192];
        let leaf = Node {
            id: 9,
            leaf: true,
            keys: vec![1, 5, 9],
            vals: vec![10, 50, 90],
            next: 12,
        };
        leaf.encode(&mut buf, 77);
        assert_eq!(Node::decode(&buf, 3).unwrap(), (leaf, 77));
        let inner = Node {
            id: 2,
            leaf: false,
            keys: vec![100],
            vals: vec![3, 4],
            next: NO_NODE,
        };
        inner.encode(&mut buf, 1);
        assert_eq!(Node::decode(&buf, 3).unwrap().0, inner);
    }

    #[test]
    fn unordered_keys_and_short_payloads_are_named() {
        let mut buf = vec![0u8; 4096];
        let bad = Node {
            id: 1,
            leaf: true,
            keys: vec![1, 9, 5],
            vals: vec![0, 0, 0],
            next: NO_NODE,
        };
        bad.encode(&mut buf, 1);
        assert!(matches!(
            Node::decode(&buf, 4).map_err(|e| e.damage().map(|(p, f)| (p, f.clone()))),
            Err(Some((
                Some(4),
                Fault::KeyOrder {
                    at: 2,
                    previous: 9,
                    found: 5
                }
            )))
        ));
        let mut inner = vec![0u8; 4096];
        let h = Header {
            kind: PageKind::BTreeInner,
            flags: 0,
            id: 2,
            version: 1,
            len: 12,
        };
        inner[HEADER_BYTES] = 1; // one key, but no room for it or its two children
        page::seal(&mut inner, &h);
        assert!(matches!(
            Node::decode(&inner, 5).map_err(|e| e.damage().map(|(p, f)| (p, f.clone()))),
            Err(Some((
                Some(5),
                Fault::Length {
                    expected: 36,
                    found: 12,
                    ..
                }
            )))
        ));
    }

    #[test]
    fn fanout_256_fits_an_8k_page() {
        assert!(Node::bytes_for(256) <= 8192);
        assert!(Node::bytes_for(64) <= 4096);
    }

    proptest! {
        #[test]
        fn decoding_random_bytes_never_panics(bytes in proptest::collection::vec(any::<u8>(), 0..600)) {
            let _ = Node::decode(&bytes, 0);
        }

        #[test]
        fn decoding_a_damaged_node_is_an_error_or_the_node(flip in 0usize..4096, bit in 0u8..8) {
            let mut buf = vec![0u8; 4096];
            Node { id: 1, leaf: true, keys: (0..50).collect(), vals: (0..50).collect(), next: 2 }.encode(&mut buf, 1);
            buf[flip] ^= 1 << bit;
            prop_assert!(Node::decode(&buf, 0).is_err());
        }
    }
}
