//! The KV store's on-device codecs: round trips, limits, damage detection with offsets, and
//! decoders that never panic on arbitrary bytes.

mod common;
use common::header;
use engine::kv::format::{
    data_page_docs, document_in_verified_page, gather_document, gather_node, Corruption, DataPages,
    DbHeader, DocPtr, Document, Fault, KvStats, Node, NodeBuilder, NodePtr, NodeView, PagesByType,
    Superblock, DB_HEADER_BYTES, DOC_HEAD_BYTES, KEY_BYTES_MAX, NO_PAGE, SUPERBLOCK_BYTES,
    VALUE_BYTES_MAX,
};
use engine::EngineError;
use proptest::prelude::*;
use std::collections::BTreeMap;

/// The damaged field and its offset, when `e` is damage to a field.
fn field_of(e: &Corruption) -> Option<(&'static str, u64)> {
    match (&e.fault, e.offset) {
        (Fault::Field { field, .. }, Some(offset)) => Some((*field, offset)),
        _ => None,
    }
}

fn encode_doc(d: &Document<'_>) -> Vec<u8> {
    let mut out = Vec::new();
    d.encode(&mut out).unwrap();
    out
}

#[test]
fn documents_at_the_limits_encode_and_larger_ones_are_rejected() {
    let key = vec![7u8; KEY_BYTES_MAX];
    let value = vec![9u8; VALUE_BYTES_MAX];
    let doc = Document {
        key: &key,
        value: Some(&value),
        seq: 3,
    };
    let bytes = encode_doc(&doc);
    assert_eq!(Document::decode(&bytes).unwrap(), (doc, bytes.len()));
    let long_key = vec![0u8; KEY_BYTES_MAX + 1];
    let e = Document {
        key: &long_key,
        value: None,
        seq: 1,
    }
    .encode(&mut Vec::new())
    .unwrap_err();
    assert!(
        matches!(
            e,
            EngineError::TooLarge {
                what: "key",
                len_bytes: 4097,
                max_bytes: 4096
            }
        ),
        "{e}"
    );
    let big = vec![0u8; VALUE_BYTES_MAX + 1];
    let e = Document {
        key: b"k",
        value: Some(&big),
        seq: 1,
    }
    .encode(&mut Vec::new())
    .unwrap_err();
    assert!(
        matches!(e, EngineError::TooLarge { what: "value", .. }),
        "{e}"
    );
    assert!(e.to_string().contains("1048577"), "{e}");
}

#[test]
fn a_tombstone_has_no_value_and_round_trips() {
    let doc = Document {
        key: b"gone",
        value: None,
        seq: 42,
    };
    let mut bytes = encode_doc(&doc);
    assert_eq!(Document::decode(&bytes).unwrap().0, doc);
    // A tombstone claiming a value is malformed, named by field and offset.
    bytes[4] = 1;
    let e = Document::decode(&bytes).unwrap_err();
    assert_eq!(field_of(&e), Some(("value_len", 4)), "{e}");
}

#[test]
fn every_flipped_byte_of_a_document_node_header_and_superblock_is_detected() {
    let doc = encode_doc(&Document {
        key: b"key",
        value: Some(b"value"),
        seq: 5,
    });
    let mut node = Vec::new();
    Node::Leaf(vec![(b"a".to_vec(), ptr(1)), (b"b".to_vec(), ptr(2))])
        .encode(&mut node)
        .unwrap();
    let header = header(9).encode().to_vec();
    let sb = Superblock {
        commit_seq: 9,
        header_page: 77,
        page_bytes: 4096,
    }
    .encode()
    .to_vec();
    type Decode = fn(&[u8]) -> bool;
    let cases: [(&str, Vec<u8>, Decode); 4] = [
        ("document", doc, |b| Document::decode(b).is_ok()),
        ("node", node, |b| Node::decode(b).is_ok()),
        ("header", header, |b| DbHeader::decode(b).is_ok()),
        ("superblock", sb, |b| Superblock::decode(b, 1).is_ok()),
    ];
    for (name, bytes, ok) in cases {
        assert!(ok(&bytes), "{name} decodes");
        for i in 0..bytes.len() {
            for bit in [0x01u8, 0x80] {
                let mut c = bytes.clone();
                c[i] ^= bit;
                assert!(!ok(&c), "{name}: flip {bit:#x} at byte {i} not detected");
            }
        }
    }
}

fn ptr(page: u64) -> DocPtr {
    DocPtr {
        page,
        offset: 4,
        len: 40,
    }
}

#[test]
fn documents_span_pages_and_a_stale_continuation_page_is_caught() {
    let mut pages = DataPages::new(64).unwrap();
    let value = vec![b'v'; 150];
    let small = pages
        .push(&Document {
            key: b"a",
            value: Some(b"x"),
            seq: 1,
        })
        .unwrap();
    let big = pages
        .push(&Document {
            key: b"b",
            value: Some(&value),
            seq: 2,
        })
        .unwrap();
    let payloads = pages.into_pages();
    assert!(big.pages(64) >= 3, "{big:?} spans pages");
    assert_eq!(small.pages(64), 1);
    let span: Vec<&[u8]> = payloads[big.page as usize..]
        .iter()
        .map(Vec::as_slice)
        .collect();
    let mut scratch = Vec::new();
    let doc = gather_document(&span, big, &mut scratch).unwrap();
    assert_eq!(
        (doc.key, doc.value, doc.seq),
        (&b"b"[..], Some(&value[..]), 2)
    );
    // The second page replaced by another (e.g. reused) page: its cont_bytes disagree.
    let mut other = DataPages::new(64).unwrap();
    other
        .push(&Document {
            key: b"zz",
            value: Some(b"0123456789"),
            seq: 9,
        })
        .unwrap();
    let stale = other.into_pages().remove(0);
    let mut torn = span.clone();
    torn[1] = &stale;
    let e = gather_document(&torn, big, &mut scratch).unwrap_err();
    assert!(field_of(&e) == Some(("cont_bytes", 64)), "{e}");
    // Too few pages given: truncated, not a panic.
    let e = gather_document(&span[..1], big, &mut scratch).unwrap_err();
    assert!(matches!(e.fault, Fault::Truncated { .. }), "{e}");
}

#[test]
fn a_damaged_document_in_a_page_scan_is_reported_at_its_offset() {
    let mut pages = DataPages::new(256).unwrap();
    pages
        .push(&Document {
            key: b"k1",
            value: Some(b"v1"),
            seq: 1,
        })
        .unwrap();
    let second = pages
        .push(&Document {
            key: b"k2",
            value: Some(b"v2"),
            seq: 2,
        })
        .unwrap();
    let mut page = pages.into_pages().remove(0);
    assert_eq!(data_page_docs(&page).unwrap().len(), 2);
    let at = second.offset as usize + DOC_HEAD_BYTES; // first key byte of the second doc
    page[at] ^= 0xFF;
    let e = data_page_docs(&page).unwrap_err();
    assert!(matches!(e.fault, Fault::Checksum { .. }), "{e}");
    assert_eq!(e.offset, Some((second.offset + second.len - 4) as u64));
    // Garbage in the zero padding after the last document.
    let mut page = DataPages::new(256).unwrap();
    page.push(&Document {
        key: b"k",
        value: None,
        seq: 1,
    })
    .unwrap();
    let mut page = page.into_pages().remove(0);
    page[250] = 1;
    let e = data_page_docs(&page).unwrap_err();
    assert_eq!(field_of(&e), Some(("padding", 250)), "{e}");
}

#[test]
fn nodes_reject_unsorted_keys_and_empty_inner_nodes() {
    let unsorted = Node::Leaf(vec![(b"b".to_vec(), ptr(1)), (b"a".to_vec(), ptr(2))]);
    assert!(unsorted.encode(&mut Vec::new()).is_err());
    let empty_inner = Node::Inner {
        level: 1,
        children: vec![],
    };
    assert!(empty_inner.encode(&mut Vec::new()).is_err());
    let long = Node::Leaf(vec![(vec![0u8; KEY_BYTES_MAX + 1], ptr(1))]);
    assert!(matches!(
        long.encode(&mut Vec::new()),
        Err(EngineError::TooLarge { what: "key", .. })
    ));
    let dangling = Node::Leaf(vec![(
        b"a".to_vec(),
        DocPtr {
            page: NO_PAGE,
            offset: 4,
            len: 40,
        },
    )]);
    assert!(matches!(
        dangling.encode(&mut Vec::new()),
        Err(EngineError::Invalid {
            field: "pointer",
            ..
        })
    ));
    let before_head = Node::Leaf(vec![(
        b"a".to_vec(),
        DocPtr {
            offset: 0,
            ..ptr(1)
        },
    )]);
    assert!(before_head.encode(&mut Vec::new()).is_err());
    // An encoded node edited to repeat a key fails its checks (the crc or the order).
    let mut bytes = Vec::new();
    Node::Leaf(vec![(b"a".to_vec(), ptr(1)), (b"b".to_vec(), ptr(2))])
        .encode(&mut bytes)
        .unwrap();
    let second_key = 8 + 2 + 1 + 16 + 2;
    bytes[second_key] = b'a';
    assert!(Node::decode(&bytes).is_err());
}

#[test]
fn a_node_of_long_keys_spans_pages_and_a_stale_page_is_caught() {
    let node = Node::Leaf(
        (0u8..3)
            .map(|i| (vec![b'a' + i; KEY_BYTES_MAX], ptr(u64::from(i) + 1)))
            .collect(),
    );
    let mut bytes = Vec::new();
    let len = node.encode(&mut bytes).unwrap() as u32;
    let payload = 4064;
    let np = NodePtr { page: 9, len };
    assert_eq!(np.pages(payload), 4);
    let mut pages: Vec<Vec<u8>> = bytes.chunks(payload).map(<[u8]>::to_vec).collect();
    pages.last_mut().unwrap().resize(payload, 0);
    let refs: Vec<&[u8]> = pages.iter().map(Vec::as_slice).collect();
    assert_eq!(gather_node(&refs, np).unwrap().to_node(), node);
    assert!(matches!(
        gather_node(&refs[..2], np).map_err(|e| e.fault),
        Err(Fault::Truncated { .. })
    ));
    let stale = vec![0x5Au8; payload];
    let mut torn = refs.clone();
    torn[1] = &stale;
    assert!(gather_node(&torn, np).is_err());
    assert!(gather_node(&refs, NodePtr { len: len - 1, ..np }).is_err());
}

#[test]
fn blank_header_and_superblock_are_blank_not_corrupt() {
    assert!(matches!(
        DbHeader::decode(&[0u8; DB_HEADER_BYTES]).map_err(|e| e.fault),
        Err(Fault::Blank)
    ));
    assert!(matches!(
        Superblock::decode(&[0u8; SUPERBLOCK_BYTES], 0).map_err(|e| e.fault),
        Err(Fault::Blank)
    ));
    // A superblock in the wrong slot is caught.
    let sb = Superblock {
        commit_seq: 4,
        header_page: 9,
        page_bytes: 4096,
    };
    let e = Superblock::decode(&sb.encode(), 1).unwrap_err();
    assert_eq!(field_of(&e), Some(("commit_seq", 8)), "{e}");
}

/// Keys that share long prefixes and differ late, in zero bytes or in length: the cases an
/// 8-byte head cannot tell apart.
fn tricky_key() -> impl Strategy<Value = Vec<u8>> {
    let byte = prop_oneof![Just(0u8), Just(1u8), Just(b'u'), Just(255u8)];
    (0usize..3, proptest::collection::vec(byte, 0..14)).prop_map(|(p, tail)| {
        let mut k = [&b"user"[..], &b"user00000000"[..], &b""[..]][p].to_vec();
        k.extend(tail);
        k
    })
}

fn any_key() -> impl Strategy<Value = Vec<u8>> {
    prop_oneof![
        8 => proptest::collection::vec(any::<u8>(), 0..24),
        1 => proptest::collection::vec(any::<u8>(), 0..=KEY_BYTES_MAX),
    ]
}

fn any_doc() -> impl Strategy<Value = (Vec<u8>, Option<Vec<u8>>, u64)> {
    let value = prop_oneof![
        1 => Just(None),
        4 => proptest::collection::vec(any::<u8>(), 0..300).prop_map(Some),
        1 => proptest::collection::vec(any::<u8>(), 0..5000).prop_map(Some),
    ];
    (any_key(), value, any::<u64>())
}

fn any_header() -> impl Strategy<Value = DbHeader> {
    (
        1..u64::MAX,
        any::<u64>(),
        proptest::option::of((0..NO_PAGE, 12u32..)),
        proptest::array::uniform12(any::<u64>()),
    )
        .prop_map(|(commit_seq, doc_seq, root, x)| DbHeader {
            commit_seq,
            doc_seq,
            root: root.map(|(page, len)| NodePtr { page, len }),
            prev_header_page: x[0],
            log_end_page: x[1],
            generation: x[2],
            stats: KvStats {
                live_keys: x[3],
                live_bytes: x[4],
                stale_bytes: x[5],
                pages: PagesByType {
                    superblock: x[6],
                    header: x[7],
                    index: x[8],
                    data: x[9],
                },
            },
        })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(200))]

    #[test]
    fn documents_round_trip((key, value, seq) in any_doc()) {
        let doc = Document { key: &key, value: value.as_deref(), seq };
        let bytes = encode_doc(&doc);
        prop_assert_eq!(bytes.len(), doc.encoded_len());
        prop_assert_eq!(Document::decode(&bytes).unwrap(), (doc, bytes.len()));
    }

    #[test]
    fn packed_documents_read_back_from_their_pages(
        docs in proptest::collection::vec((any_doc(), any::<bool>()), 1..20),
        payload_bytes in 24usize..700,
    ) {
        let mut pages = DataPages::new(payload_bytes).unwrap();
        let mut payloads = Vec::new();
        let ptrs: Vec<DocPtr> = docs.iter().map(|((k, v, s), take)| {
            let p = pages.push(&Document { key: k, value: v.as_deref(), seq: *s }).unwrap();
            if *take {
                payloads.extend(pages.take_full());
            }
            p
        }).collect();
        payloads.extend(pages.into_pages());
        let docs: Vec<_> = docs.into_iter().map(|(d, _)| d).collect();
        let mut starts = 0;
        for p in &payloads {
            prop_assert_eq!(p.len(), payload_bytes);
            starts += data_page_docs(p).unwrap().len();
        }
        prop_assert_eq!(starts, docs.len());
        let mut scratch = Vec::new();
        for ((k, v, s), ptr) in docs.iter().zip(&ptrs) {
            let first = ptr.page as usize;
            let n = ptr.pages(payload_bytes) as usize;
            prop_assert!(first + n <= payloads.len());
            let span: Vec<&[u8]> = payloads[first..first + n].iter().map(Vec::as_slice).collect();
            let d = gather_document(&span, *ptr, &mut scratch).unwrap();
            prop_assert_eq!(d.key, &k[..]);
            prop_assert_eq!(d.value, v.as_deref());
            prop_assert_eq!(d.seq, *s);
            // Inside one (verified) page, the crc-free decoder reads the same document.
            if n == 1 {
                prop_assert_eq!(document_in_verified_page(span[0], *ptr).unwrap(), d);
            }
        }
    }

    /// The decoder for verified pages never panics: any pointer into any bytes is a document
    /// or an error; a pointer off its document (a shifted offset or length) is an error.
    #[test]
    fn verified_page_decoding_never_panics_and_checks_the_pointer(
        bytes in proptest::collection::vec(any::<u8>(), 0..300),
        offset in 0u32..400,
        len in 0u32..400,
    ) {
        let _ = document_in_verified_page(&bytes, DocPtr { page: 0, offset, len });
        let mut pages = DataPages::new(200).unwrap();
        let p = pages.push(&Document { key: b"k", value: Some(b"value"), seq: 9 }).unwrap();
        let page = &pages.pages()[0];
        prop_assert!(document_in_verified_page(page, p).is_ok());
        if (offset, len) != (p.offset, p.len) {
            let off = DocPtr { offset, len, ..p };
            prop_assert!(document_in_verified_page(page, off).is_err(), "{:?}", off);
        }
    }

    /// Any flipped byte inside a document that spans pages — its own bytes, or the
    /// `cont_bytes` of a page it continues on — makes reading it fail.
    #[test]
    fn any_damage_to_a_spanning_document_is_caught(
        value_len in 60usize..400,
        payload_bytes in 24usize..80,
        pick in any::<prop::sample::Index>(),
        bit in 0u8..8,
    ) {
        let value = vec![0x42u8; value_len];
        let mut pages = DataPages::new(payload_bytes).unwrap();
        let doc = Document { key: b"key", value: Some(&value), seq: 3 };
        let p = pages.push(&doc).unwrap();
        let mut payloads = pages.into_pages();
        let n = p.pages(payload_bytes) as usize;
        prop_assert!(n >= 2);
        // The bytes that belong to the document: its range on the first page, then each
        // continuation page's head and continued bytes.
        let mut owned = Vec::new();
        let mut left = p.len as usize;
        for (i, page) in payloads.iter().enumerate().take(n) {
            let from = if i == 0 { p.offset as usize } else { 0 };
            let body = if i == 0 { from } else { 4 };
            let k = left.min(page.len() - body);
            owned.extend((from..body + k).map(|b| (i, b)));
            left -= k;
        }
        let (i, b) = owned[pick.index(owned.len())];
        payloads[i][b] ^= 1 << bit;
        let span: Vec<&[u8]> = payloads[..n].iter().map(Vec::as_slice).collect();
        prop_assert!(gather_document(&span, p, &mut Vec::new()).is_err(), "flip at page {} byte {}", i, b);
    }

    /// Search and child choice against a BTreeMap model; a split keeps every entry, in
    /// order, both halves non-empty and their bytes within one entry of each other.
    #[test]
    fn node_search_and_split_agree_with_a_model(
        keys in proptest::collection::btree_set(any_key(), 1..40),
        probes in proptest::collection::vec(any_key(), 1..20),
    ) {
        let entries: Vec<(Vec<u8>, DocPtr)> = keys.iter().cloned().enumerate()
            .map(|(i, k)| (k, ptr(i as u64 + 1))).collect();
        let model: BTreeMap<Vec<u8>, usize> = keys.iter().cloned().enumerate().map(|(i, k)| (k, i)).collect();
        let leaf = Node::Leaf(entries.clone());
        let inner = Node::Inner {
            level: 1,
            children: entries.iter().map(|(k, _)| (k.clone(), NodePtr { page: 1, len: 12 })).collect(),
        };
        for p in probes.iter().chain(keys.iter()) {
            match leaf.search(p) {
                Ok(i) => prop_assert_eq!(model.get(p), Some(&i)),
                Err(i) => {
                    prop_assert!(!model.contains_key(p));
                    prop_assert_eq!(i, model.range(..p.clone()).count());
                }
            }
            let below = model.range(..=p.clone()).next_back().map_or(0, |(_, &i)| i);
            prop_assert_eq!(inner.child_index(p), below);
        }
        let mut left = leaf.clone();
        match left.split_off_half() {
            None => prop_assert_eq!(entries.len(), 1),
            Some(right) => {
                prop_assert!(!left.is_empty() && !right.is_empty());
                let (Node::Leaf(l), Node::Leaf(r)) = (&left, &right) else { unreachable!() };
                prop_assert_eq!(&[l.clone(), r.clone()].concat(), &entries);
                let biggest = entries.iter().map(|(k, _)| 2 + k.len() + 16).max().unwrap();
                prop_assert!(left.encoded_len().abs_diff(right.encoded_len()) <= biggest);
                let mut bytes = Vec::new();
                right.encode(&mut bytes).unwrap();
            }
        }
    }

    /// The in-place search of a decoded node (prefix, 8-byte heads, ties broken by the keys)
    /// agrees with a BTreeMap model, on keys that share long prefixes, hold zero bytes and
    /// tie in their heads.
    #[test]
    fn node_view_search_agrees_with_a_model(
        keys in proptest::collection::btree_set(tricky_key(), 1..60),
        probes in proptest::collection::vec(tricky_key(), 1..30),
    ) {
        let model: BTreeMap<Vec<u8>, usize> = keys.iter().cloned().enumerate().map(|(i, k)| (k, i)).collect();
        let leaf = Node::Leaf(keys.iter().cloned().enumerate().map(|(i, k)| (k, ptr(i as u64 + 1))).collect());
        let inner = Node::Inner {
            level: 1,
            children: keys.iter().map(|k| (k.clone(), NodePtr { page: 1, len: 12 })).collect(),
        };
        for node in [&leaf, &inner] {
            let mut bytes = Vec::new();
            node.encode(&mut bytes).unwrap();
            let view = NodeView::decode(&bytes).unwrap();
            prop_assert_eq!(&view.to_node(), node);
            for (i, k) in keys.iter().enumerate() {
                prop_assert_eq!(view.key(i), k.as_slice());
            }
            for p in probes.iter().chain(keys.iter()) {
                match view.search(p) {
                    Ok(i) => prop_assert_eq!(model.get(p), Some(&i)),
                    Err(i) => {
                        prop_assert!(!model.contains_key(p));
                        prop_assert_eq!(i, model.range(..p.clone()).count());
                    }
                }
                let below = model.range(..=p.clone()).next_back().map_or(0, |(_, &i)| i);
                prop_assert_eq!(view.child_index(p), below);
            }
        }
    }

    /// The builder's nodes are byte for byte what `Node::encode` makes of the same entries
    /// split as `split_off_half` splits them (halves until each fits), whether entries come
    /// one by one or copied in runs from a decoded node; its checks refuse what `encode`
    /// refuses.
    #[test]
    fn node_builder_matches_encode_and_split(
        keys in proptest::collection::btree_set(tricky_key(), 1..120),
        payload in 40usize..600,
        cut in any::<prop::sample::Index>(),
        level in 0u8..3,
    ) {
        let node = if level == 0 {
            Node::Leaf(keys.iter().cloned().enumerate().map(|(i, k)| (k, ptr(i as u64 + 1))).collect())
        } else {
            Node::Inner {
                level,
                children: keys.iter().cloned().enumerate().map(|(i, k)| (k, NodePtr { page: i as u64, len: 12 })).collect(),
            }
        };
        // The reference: the store's old cut, on owned nodes.
        let min = if level == 0 { 2 } else { 4 };
        let (mut todo, mut want) = (vec![node.clone()], Vec::new());
        while let Some(mut n) = todo.pop() {
            if n.encoded_len() > payload && n.len() >= min {
                if let Some(right) = n.split_off_half() {
                    todo.push(right);
                    todo.push(n);
                    continue;
                }
            }
            let mut b = Vec::new();
            n.encode(&mut b).unwrap();
            want.push(b);
        }
        let mut one = NodeBuilder::new(level);
        let mut runs = NodeBuilder::new(level);
        let mut whole = Vec::new();
        node.encode(&mut whole).unwrap();
        let view = NodeView::decode(&whole).unwrap();
        let at = cut.index(keys.len() + 1);
        runs.push_entries(&view, 0, at).unwrap();
        runs.push_entries(&view, at, keys.len()).unwrap();
        for (i, k) in keys.iter().enumerate() {
            match level {
                0 => one.push_doc(k, ptr(i as u64 + 1)).unwrap(),
                _ => one.push_child(k, NodePtr { page: i as u64, len: 12 }).unwrap(),
            }
        }
        for b in [one, runs] {
            prop_assert_eq!(b.encoded_len(), node.encoded_len());
            let got = b.finish(payload).unwrap();
            let bytes: Vec<Vec<u8>> = got.iter().map(|(_, v)| v.bytes().to_vec()).collect();
            prop_assert_eq!(&bytes, &want);
            for (k, v) in &got {
                prop_assert_eq!(k.as_slice(), v.key(0));
                prop_assert_eq!(&NodeView::decode(v.bytes()).unwrap(), v);
            }
        }
        // Out of order and duplicate keys are refused.
        let mut b = NodeBuilder::new(level);
        let last = keys.iter().next_back().unwrap();
        let first = keys.iter().next().unwrap();
        let push = |b: &mut NodeBuilder, k: &[u8]| match level {
            0 => b.push_doc(k, ptr(1)),
            _ => b.push_child(k, NodePtr { page: 1, len: 12 }),
        };
        push(&mut b, last).unwrap();
        prop_assert!(push(&mut b, first).is_err());
    }

    #[test]
    fn nodes_round_trip(
        keys in proptest::collection::btree_set(any_key(), 0..40),
        level in 0u8..=32,
        page in 0..u64::MAX / 2,
    ) {
        let node = if level == 0 {
            Node::Leaf(keys.into_iter().enumerate().map(|(i, k)| {
                (k, DocPtr { page: page ^ i as u64, offset: 4 + i as u32, len: 20 })
            }).collect())
        } else {
            let mut children: Vec<_> = keys.into_iter().enumerate().map(|(i, k)| {
                (k, NodePtr { page: page ^ i as u64, len: 12 })
            }).collect();
            if children.is_empty() {
                children.push((Vec::new(), NodePtr { page, len: 12 }));
            }
            Node::Inner { level, children }
        };
        let mut bytes = Vec::new();
        let n = node.encode(&mut bytes).unwrap();
        prop_assert_eq!(n, node.encoded_len());
        bytes.extend_from_slice(b"trailing bytes of the page");
        prop_assert_eq!(Node::decode(&bytes).unwrap(), node);
    }

    #[test]
    fn headers_and_superblocks_round_trip(h in any_header(), commit_seq in 1..u64::MAX, page in 0..NO_PAGE, pb in any::<u32>()) {
        prop_assert_eq!(DbHeader::decode(&h.encode()).unwrap(), h);
        let sb = Superblock { commit_seq, header_page: page, page_bytes: pb };
        prop_assert_eq!(Superblock::decode(&sb.encode(), sb.slot()).unwrap(), sb);
    }

    /// Arbitrary bytes: every decoder returns an error or a value that re-encodes to the
    /// same bytes; none panics.
    #[test]
    fn decoders_never_panic_on_arbitrary_bytes(
        bytes in proptest::collection::vec(any::<u8>(), 0..600),
        offset in any::<u32>(),
        len in any::<u32>(),
        split in 1usize..300,
    ) {
        if let Ok((doc, used)) = Document::decode(&bytes) {
            prop_assert_eq!(encode_doc(&doc), &bytes[..used]);
        }
        if let Ok(node) = Node::decode(&bytes) {
            let mut again = Vec::new();
            node.encode(&mut again).unwrap();
            prop_assert_eq!(&again[..], &bytes[..again.len()]);
        }
        if let Ok(h) = DbHeader::decode(&bytes) {
            prop_assert_eq!(&h.encode()[..], &bytes[..DB_HEADER_BYTES]);
        }
        for slot in 0..2 {
            if let Ok(sb) = Superblock::decode(&bytes, slot) {
                prop_assert_eq!(&sb.encode()[..], &bytes[..SUPERBLOCK_BYTES]);
            }
        }
        let _ = data_page_docs(&bytes);
        let pages: Vec<&[u8]> = bytes.chunks(split).collect();
        let _ = gather_document(&pages, DocPtr { page: 0, offset, len }, &mut Vec::new());
        let _ = gather_node(&pages, NodePtr { page: 0, len });
    }
}
