//! Packed index nodes (`NodeLayout::Packed`) and filled cuts (`Cut::Full`): every cut piece
//! decodes to the entries it was given, fits its page where it can, and damage to a packed
//! node is an error, never a panic or wrong entries.

use engine::kv::format::{
    Cut, DocPtr, Node, NodeBuilder, NodeLayout, NodePtr, NodeView, NODE_TAG, NODE_TAG_PACKED,
};
use proptest::prelude::*;

/// Keys with long shared prefixes (as real keys have), some short, some empty.
fn keys() -> impl Strategy<Value = std::collections::BTreeSet<Vec<u8>>> {
    let key = prop_oneof![
        4 => (0u64..1 << 40).prop_map(|k| format!("user{k:020}").into_bytes()),
        1 => proptest::collection::vec(any::<u8>(), 0..40),
    ];
    proptest::collection::btree_set(key, 1..400)
}

fn builder(keys: &[Vec<u8>], level: u8, big: u64) -> NodeBuilder {
    let mut b = NodeBuilder::new(level);
    for (i, k) in keys.iter().enumerate() {
        let i = i as u64;
        match level {
            0 => {
                let p = DocPtr {
                    page: big ^ i,
                    offset: 4 + (i as u32 % 4000),
                    len: 20 + i as u32,
                };
                b.push_doc(k, p).unwrap()
            }
            _ => b
                .push_child(
                    k,
                    NodePtr {
                        page: big ^ i,
                        len: 12 + i as u32,
                    },
                )
                .unwrap(),
        }
    }
    b
}

fn entries(n: &Node) -> Vec<(Vec<u8>, String)> {
    match n {
        Node::Leaf(e) => e
            .iter()
            .map(|(k, p)| (k.clone(), format!("{p:?}")))
            .collect(),
        Node::Inner { children, .. } => children
            .iter()
            .map(|(k, p)| (k.clone(), format!("{p:?}")))
            .collect(),
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    #[test]
    fn cut_pieces_decode_to_their_entries(
        keys in keys(),
        level in 0u8..=2,
        big in prop_oneof![Just(0u64), Just(1u64 << 20), Just(u64::MAX / 3)],
        packed in any::<bool>(),
        full in any::<bool>(),
        payload in prop_oneof![Just(4088usize), Just(1000usize), Just(300usize)],
    ) {
        let keys: Vec<Vec<u8>> = keys.into_iter().collect();
        let layout = if packed { NodeLayout::Packed } else { NodeLayout::Plain };
        let cut = if full { Cut::Full } else { Cut::Halves };
        let mut whole = Vec::new();
        let reference = builder(&keys, level, big).finish(usize::MAX).unwrap();
        prop_assert_eq!(reference.len(), 1);
        for (_, v) in &reference {
            whole.extend(entries(&v.to_node()));
        }
        let pieces = builder(&keys, level, big).finish_as(payload, layout, cut).unwrap();
        let mut got = Vec::new();
        for (least, v) in &pieces {
            let tag = if packed { NODE_TAG_PACKED } else { NODE_TAG };
            prop_assert_eq!(v.bytes()[0], tag);
            prop_assert_eq!(least.as_slice(), v.key(0));
            let again = NodeView::decode(v.bytes()).unwrap();
            prop_assert_eq!(&again, v);
            prop_assert_eq!(again.encoded_len(), v.bytes().len());
            if v.len() >= 4 {
                prop_assert!(v.encoded_len() <= payload, "a node of 4+ entries fits its page");
            }
            for (i, k) in keys.iter().enumerate().filter(|(_, k)| *k == least) {
                prop_assert_eq!(again.search(k), Ok(0), "entry {} found", i);
            }
            got.extend(entries(&again.to_node()));
        }
        prop_assert_eq!(got, whole);
        if full && pieces.len() >= 3 {
            // Filled: no two neighbours (but the last two, balanced) would fit one page.
            let halves = builder(&keys, level, big).finish_as(payload, layout, Cut::Halves).unwrap();
            prop_assert!(pieces.len() <= halves.len() + 1);
        }
    }

    #[test]
    fn damage_to_a_packed_node_is_an_error(
        keys in keys(),
        at in any::<prop::sample::Index>(),
        flip in 1u8..=255,
    ) {
        let keys: Vec<Vec<u8>> = keys.into_iter().collect();
        let pieces = builder(&keys, 0, 77).finish_as(usize::MAX, NodeLayout::Packed, Cut::Halves).unwrap();
        let mut bytes = pieces[0].1.bytes().to_vec();
        let i = at.index(bytes.len());
        bytes[i] ^= flip;
        prop_assert!(NodeView::decode(&bytes).is_err(), "byte {} flipped by {:#x}", i, flip);
    }

    #[test]
    fn arbitrary_bytes_after_the_packed_tag_never_panic(
        mut bytes in proptest::collection::vec(any::<u8>(), 8..600),
        len_ok in any::<bool>(),
    ) {
        bytes[0] = NODE_TAG_PACKED;
        if len_ok {
            let n = bytes.len() as u32;
            bytes[4..8].copy_from_slice(&n.to_le_bytes());
        }
        let _ = NodeView::decode(&bytes);
    }
}

#[test]
fn a_packed_leaf_of_user_keys_takes_about_half_the_plain_bytes() {
    let keys: Vec<Vec<u8>> = (0..150u64)
        .map(|i| {
            format!(
                "user{:019}",
                6_000_000_000_000_000_000u64 + i * 7_919_000_000
            )
            .into_bytes()
        })
        .collect();
    let plain = builder(&keys, 0, 1 << 20).finish(usize::MAX).unwrap();
    let packed = builder(&keys, 0, 1 << 20)
        .finish_as(usize::MAX, NodeLayout::Packed, Cut::Halves)
        .unwrap();
    let (p, q) = (plain[0].1.encoded_len(), packed[0].1.encoded_len());
    assert!(q * 10 < p * 6, "packed {q} bytes against plain {p}");
}
