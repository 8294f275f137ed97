//! The KV store's on-device format as pure codecs (no I/O). docs/kv-format.md draws it.
//!
//! Every structure is little-endian, starts with a tag or magic and ends with a crc32c of
//! everything before it, so it checks itself even when it spans several pages:
//! - **document** `tag 0xDD | flags u8 | key_len u16 | value_len u32 | seq u64 | key | value |
//!   crc32c` — keys ≤ [`KEY_BYTES_MAX`], values ≤ [`VALUE_BYTES_MAX`]; a tombstone (flag bit 0)
//!   has no value. Documents are packed into **data pages** ([`DataPages`]): a payload starts
//!   with `cont_bytes u32` (bytes continuing a document begun on an earlier page), then
//!   documents, then zeros. A document starts on a page only if its 16-byte head fits; the
//!   rest continues on the next pages (consecutive on the device). It is addressed by a
//!   [`DocPtr`] (first page, offset in its payload, encoded length).
//! - **index node** of a copy-on-write B+-tree: `tag 0xB7 | level u8 | count u16 | len u32 |
//!   entries | crc32c`; a leaf entry is `key_len u16 | key | DocPtr (16 bytes)`, an inner entry
//!   `key_len u16 | key | NodePtr (12 bytes)` whose key is the least key under that child.
//!   Keys strictly ascend. A node starts a page and may span the next consecutive pages.
//! - **DB header** ([`DbHeader`], [`DB_HEADER_BYTES`] fixed): one per commit.
//! - **superblock slot** ([`Superblock`], [`SUPERBLOCK_BYTES`] fixed): two, alternating.
//!
//! Decoders never panic on any input: every failure is a [`Corruption`] naming the
//! structure, the byte offset (relative to the buffer given; [`Corruption::rebase`] makes it
//! absolute) and the [`Fault`]: the field, what was expected and found. Encoders refuse a
//! key or value over its limit ([`EngineError::TooLarge`]) or a malformed node
//! ([`EngineError::Invalid`]).

mod builder;
mod doc;
mod meta;
mod node;
mod packed;
mod wal;

pub use builder::{Cut, NodeBuilder};
pub use doc::{
    data_page_cont, data_page_docs, document_in_verified_page, gather_document, DataPages,
    DocGather, DocHead, DocPtr, DocStart, Document,
};
pub use meta::{recover, DbHeader, KvStats, PagesByType, Recovered, Superblock};
pub use node::{gather_node, Node, NodePtr, NodeView};
pub use packed::{NodeLayout, NODE_TAG_PACKED};
pub use wal::{WalRecord, WAL_RECORD_MIN_BYTES, WAL_RUN_BYTES};

/// Longest key, in bytes.
pub const KEY_BYTES_MAX: usize = 4096;
/// Longest value, in bytes.
pub const VALUE_BYTES_MAX: usize = 1 << 20;
/// Format version written in every DB header and superblock.
pub const FORMAT_VERSION: u16 = 1;
/// "No page": an empty tree's root, the first header's predecessor.
pub const NO_PAGE: u64 = u64::MAX;

pub const DOC_TAG: u8 = 0xDD;
pub const DOC_HEAD_BYTES: usize = 16;
pub const DOC_TOMBSTONE: u8 = 0x01;
/// Bytes of the smallest document (empty key, no value).
pub const DOC_MIN_BYTES: usize = DOC_HEAD_BYTES + CRC_BYTES;
/// Bytes of the largest document.
pub const DOC_MAX_BYTES: usize = DOC_HEAD_BYTES + KEY_BYTES_MAX + VALUE_BYTES_MAX + CRC_BYTES;
/// Bytes of a data page's own header (`cont_bytes u32`).
pub const DATA_PAGE_HEAD_BYTES: usize = 4;
/// Smallest data-page payload [`DataPages`] accepts.
pub const DATA_PAYLOAD_MIN_BYTES: usize = DATA_PAGE_HEAD_BYTES + DOC_MIN_BYTES;

pub const NODE_TAG: u8 = 0xB7;
pub const NODE_HEAD_BYTES: usize = 8;
/// Deepest level a node may claim (a tree of 2-way nodes this deep holds 2^32 keys).
pub const NODE_LEVEL_MAX: u8 = 32;
pub const NODE_MIN_BYTES: usize = NODE_HEAD_BYTES + CRC_BYTES;
pub(crate) const DOC_PTR_BYTES: usize = 16;
pub(crate) const NODE_PTR_BYTES: usize = 12;

pub const DB_HEADER_MAGIC: u32 = u32::from_le_bytes(*b"FKVH");
pub const DB_HEADER_BYTES: usize = 128;
pub const SUPERBLOCK_MAGIC: u32 = u32::from_le_bytes(*b"FKVS");
pub const SUPERBLOCK_BYTES: usize = 64;
pub(crate) const CRC_BYTES: usize = 4;

use crate::error::EngineError;
pub use crate::error::{Corruption, Fault, Structure};

/// Reads fields from a buffer, bounds-checked; errors name `structure`.
#[derive(Clone, Copy)]
pub(crate) struct Reader<'a> {
    pub(crate) buf: &'a [u8],
    pub(crate) at: usize,
    pub(crate) structure: Structure,
}

impl<'a> Reader<'a> {
    pub(crate) fn new(buf: &'a [u8], structure: Structure) -> Reader<'a> {
        Reader {
            buf,
            at: 0,
            structure,
        }
    }

    pub(crate) fn bytes(&mut self, n: usize) -> Result<&'a [u8], Corruption> {
        let end = self.at.checked_add(n).filter(|&e| e <= self.buf.len());
        let Some(end) = end else {
            let available = (self.buf.len() - self.at) as u64;
            return Err(truncated(
                self.structure,
                self.at as u64,
                n as u64,
                available,
            ));
        };
        let b = &self.buf[self.at..end];
        self.at = end;
        assert!(
            self.at <= self.buf.len(),
            "a reader stays inside its buffer"
        );
        Ok(b)
    }

    pub(crate) fn array<const N: usize>(&mut self) -> Result<[u8; N], Corruption> {
        let mut a = [0u8; N];
        let b = self.bytes(N)?;
        assert_eq!(b.len(), N, "a field of its width");
        a.copy_from_slice(b);
        Ok(a)
    }
    pub(crate) fn u8(&mut self) -> Result<u8, Corruption> {
        Ok(self.array::<1>()?[0])
    }
    pub(crate) fn u16(&mut self) -> Result<u16, Corruption> {
        Ok(u16::from_le_bytes(self.array()?))
    }
    pub(crate) fn u32(&mut self) -> Result<u32, Corruption> {
        Ok(u32::from_le_bytes(self.array()?))
    }
    pub(crate) fn u64(&mut self) -> Result<u64, Corruption> {
        Ok(u64::from_le_bytes(self.array()?))
    }

    /// An error about the field that ends at the current position and is `width` bytes wide.
    pub(crate) fn field(
        &self,
        field: &'static str,
        width: usize,
        expected: impl ToString,
        found: impl ToString,
    ) -> Corruption {
        assert!(
            width <= self.at,
            "field `{field}` of {width} bytes ends at {}",
            self.at
        );
        field_at(
            self.structure,
            field,
            (self.at - width) as u64,
            expected,
            found,
        )
    }

    /// Check the crc32c stored next against everything read so far.
    pub(crate) fn crc(&mut self) -> Result<(), Corruption> {
        let computed = crc32c::crc32c(&self.buf[..self.at]);
        let offset = self.at as u64;
        let stored = self.u32()?;
        assert_eq!(
            self.at as u64,
            offset + CRC_BYTES as u64,
            "a crc is 4 bytes"
        );
        if stored != computed {
            let fault = Fault::Checksum { stored, computed };
            return Err(Corruption::new(self.structure, fault).at(offset));
        }
        Ok(())
    }
}

/// Damage to `field` of `structure` at byte `offset` of the decoded buffer.
pub(crate) fn field_at(
    structure: Structure,
    field: &'static str,
    offset: u64,
    expected: impl ToString,
    found: impl ToString,
) -> Corruption {
    let fault = Fault::Field {
        field,
        expected: expected.to_string(),
        found: found.to_string(),
    };
    Corruption::new(structure, fault).at(offset)
}

/// `structure` at byte `offset` needs `needed_bytes`, only `available_bytes` are there.
pub(crate) fn truncated(
    structure: Structure,
    offset: u64,
    needed_bytes: u64,
    available_bytes: u64,
) -> Corruption {
    let fault = Fault::Truncated {
        needed_bytes,
        available_bytes,
    };
    Corruption::new(structure, fault).at(offset)
}

/// `structure` at byte `offset` is blank (never written, or trimmed).
pub(crate) fn blank(structure: Structure, offset: u64) -> Corruption {
    Corruption::new(structure, Fault::Blank).at(offset)
}

/// A node refused before it is encoded (the caller's bug, reported as an error).
pub(crate) fn invalid(
    field: &'static str,
    expected: impl ToString,
    found: impl ToString,
) -> EngineError {
    EngineError::Invalid {
        structure: Structure::IndexNode,
        field,
        expected: expected.to_string(),
        found: found.to_string(),
    }
}

pub(crate) fn push_crc(out: &mut Vec<u8>, from: usize) {
    assert!(
        from <= out.len(),
        "a crc over bytes {from}.. of {}",
        out.len()
    );
    let crc = crc32c::crc32c(&out[from..]);
    out.extend_from_slice(&crc.to_le_bytes());
}

pub(crate) fn too_large(what: &'static str, len: usize, max: usize) -> EngineError {
    assert!(
        len > max,
        "{what} of {len} bytes is within its limit of {max}"
    );
    EngineError::TooLarge {
        what,
        len_bytes: len as u64,
        max_bytes: max as u64,
    }
}
