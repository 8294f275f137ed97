//! The KV store's decoders on arbitrary bytes: each returns an error or a value that
//! re-encodes to the bytes it came from; none panics. The first byte picks the page size
//! and pointer for the spanning-document reader.
#![no_main]
use engine::kv::format::{
    data_page_docs, gather_document, gather_node, DbHeader, DocPtr, Document, Node, NodePtr,
    NodeView, Superblock, DB_HEADER_BYTES, SUPERBLOCK_BYTES,
};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    if let Ok((doc, used)) = Document::decode(data) {
        let mut again = Vec::new();
        doc.encode(&mut again)
            .expect("a decoded document re-encodes");
        assert_eq!(again, &data[..used]);
    }
    if let Ok(node) = Node::decode(data) {
        let mut again = Vec::new();
        node.encode(&mut again).expect("a decoded node re-encodes");
        assert_eq!(&again[..], &data[..again.len()]);
    }
    if let Ok(view) = NodeView::decode(data) {
        // The in-place search finds every key of a decoded node at its own entry.
        assert_eq!(view.bytes(), &data[..view.encoded_len()]);
        for i in 0..view.len() {
            assert_eq!(view.search(view.key(i)), Ok(i));
        }
    }
    if let Ok(h) = DbHeader::decode(data) {
        assert_eq!(&h.encode()[..], &data[..DB_HEADER_BYTES]);
    }
    for slot in 0..2 {
        if let Ok(sb) = Superblock::decode(data, slot) {
            assert_eq!(&sb.encode()[..], &data[..SUPERBLOCK_BYTES]);
        }
    }
    let _ = data_page_docs(data);
    if let Some((&pick, rest)) = data.split_first() {
        let page_bytes = 24 + pick as usize * 4;
        let pages: Vec<&[u8]> = rest.chunks(page_bytes).collect();
        let ptr = DocPtr {
            page: 0,
            offset: 4 + u32::from(pick % 16),
            len: rest.len() as u32,
        };
        let _ = gather_document(&pages, ptr, &mut Vec::new());
        let _ = gather_node(
            &pages,
            NodePtr {
                page: 0,
                len: ptr.len,
            },
        );
    }
});
