//! The KV format of version 1 byte for byte: encoding the same structures must give the
//! committed fixture, and the fixture must decode to them. A change here is a format change:
//! bump `FORMAT_VERSION`, keep this directory for the old version and add a new one.

use engine::kv::format::{
    DbHeader, DocPtr, Document, KvStats, Node, NodePtr, PagesByType, Superblock, FORMAT_VERSION,
};

const FIXTURE: &str = include_str!("fixtures/kv-format-v1/structures.hex");

fn structures() -> Vec<(&'static str, Vec<u8>)> {
    let mut doc = Vec::new();
    Document {
        key: b"user42",
        value: Some(b"hello"),
        seq: 7,
    }
    .encode(&mut doc)
    .unwrap();
    let mut tombstone = Vec::new();
    Document {
        key: b"user42",
        value: None,
        seq: 8,
    }
    .encode(&mut tombstone)
    .unwrap();
    let mut leaf = Vec::new();
    Node::Leaf(vec![
        (
            b"a".to_vec(),
            DocPtr {
                page: 2,
                offset: 4,
                len: 31,
            },
        ),
        (
            b"b".to_vec(),
            DocPtr {
                page: 2,
                offset: 35,
                len: 26,
            },
        ),
    ])
    .encode(&mut leaf)
    .unwrap();
    let mut inner = Vec::new();
    Node::Inner {
        level: 1,
        children: vec![(Vec::new(), NodePtr { page: 3, len: 50 })],
    }
    .encode(&mut inner)
    .unwrap();
    let header = DbHeader {
        commit_seq: 1,
        doc_seq: 8,
        root: Some(NodePtr { page: 4, len: 23 }),
        prev_header_page: u64::MAX,
        log_end_page: 6,
        generation: 0,
        stats: KvStats {
            live_keys: 1,
            live_bytes: 31,
            stale_bytes: 26,
            pages: PagesByType {
                superblock: 1,
                header: 1,
                index: 2,
                data: 1,
            },
        },
    };
    let sb = Superblock {
        commit_seq: 1,
        header_page: 5,
        page_bytes: 4096,
    };
    vec![
        ("document", doc),
        ("tombstone", tombstone),
        ("leaf", leaf),
        ("inner", inner),
        ("header", header.encode().to_vec()),
        ("superblock", sb.encode().to_vec()),
    ]
}

fn hex(b: &[u8]) -> String {
    b.iter().map(|x| format!("{x:02x}")).collect()
}

#[test]
fn version_1_structures_encode_to_the_committed_bytes() {
    assert_eq!(FORMAT_VERSION, 1);
    let now: String = structures()
        .iter()
        .map(|(name, b)| format!("{name} {}\n", hex(b)))
        .collect();
    assert_eq!(
        now, FIXTURE,
        "the encoding changed; this is a format change (see this file's header)"
    );
}

#[test]
fn the_committed_bytes_decode() {
    for line in FIXTURE.lines() {
        let (name, h) = line.split_once(' ').unwrap();
        let b: Vec<u8> = (0..h.len())
            .step_by(2)
            .map(|i| u8::from_str_radix(&h[i..i + 2], 16).unwrap())
            .collect();
        let ok = match name {
            "document" | "tombstone" => Document::decode(&b).is_ok(),
            "leaf" | "inner" => Node::decode(&b).is_ok(),
            "header" => DbHeader::decode(&b).is_ok(),
            "superblock" => Superblock::decode(&b, 1).is_ok(),
            other => panic!("unknown fixture {other}"),
        };
        assert!(ok, "{name} does not decode");
    }
}
