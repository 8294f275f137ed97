//! The packed index-node layout: the node's shared key prefix stored once and its pointers as
//! variable-length integers, so an index entry takes ~20 bytes instead of ~40 (ForestDB's
//! HB+-trie nodes hold 16-byte entries for the same reason: the fewer bytes an entry takes,
//! the fewer nodes a WAL flush of random keys rewrites).
//!
//! ```text
//! tag 0xB8 | level u8 | count u16 | len u32 | prefix_len varint | prefix
//! | count × (suffix_len varint | suffix | pointer varints) | crc32c
//! ```
//! A leaf's pointer is (page, offset, len) of its document, an inner node's (page, len) of its
//! child; varints are LEB128 (7 bits a byte, low first, at most 10 bytes). The crc covers
//! every byte before it. In memory a packed node is kept in the plain layout
//! ([`super::NodeView`] searches it in place); `unpack` rebuilds that layout, and the view
//! keeps the packed bytes as what its pointer and its pages hold.
//!
//! Invariant: `unpack(pack(plain)) == plain` for every plain node (a test checks it).

use super::*;

pub const NODE_TAG_PACKED: u8 = 0xB8;

/// How index nodes are laid out on their pages ([`crate::kv::Options::node_layout`]).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum NodeLayout {
    /// Whole keys and fixed-width pointers (16 bytes to a document, 12 to a child).
    #[default]
    Plain,
    /// The node's shared prefix once, key suffixes, variable-length pointers.
    Packed,
}

impl NodeLayout {
    pub fn name(self) -> &'static str {
        match self {
            NodeLayout::Plain => "plain",
            NodeLayout::Packed => "packed",
        }
    }

    pub fn parse(s: &str) -> Option<NodeLayout> {
        match s {
            "plain" => Some(NodeLayout::Plain),
            "packed" => Some(NodeLayout::Packed),
            _ => None,
        }
    }
}

pub(crate) fn varint_len(mut x: u64) -> usize {
    let mut n = 1;
    while x >= 0x80 {
        x >>= 7;
        n += 1;
    }
    n
}

fn push_varint(out: &mut Vec<u8>, mut x: u64) {
    while x >= 0x80 {
        out.push((x as u8) | 0x80);
        x >>= 7;
    }
    out.push(x as u8);
}

fn read_varint(r: &mut Reader<'_>, field: &'static str) -> Result<u64, Corruption> {
    let from = r.at;
    let mut x: u64 = 0;
    for i in 0..10 {
        let b = r.u8()?;
        x |= u64::from(b & 0x7f) << (7 * i);
        if b & 0x80 == 0 {
            return Ok(x);
        }
    }
    Err(r.field(
        field,
        r.at - from,
        "a varint of at most 10 bytes",
        "a longer one",
    ))
}

/// The fixed-width pointer fields of a plain entry of `level` (little-endian in the plain
/// layout): (page u64, offset u32, len u32) in a leaf, (page u64, len u32) in an inner node.
fn ptr_fields(level: u8, ptr: &[u8]) -> [u64; 3] {
    let u64_at = |o: usize| u64::from_le_bytes(ptr[o..o + 8].try_into().unwrap_or([0; 8]));
    let u32_at = |o: usize| {
        u64::from(u32::from_le_bytes(
            ptr[o..o + 4].try_into().unwrap_or([0; 4]),
        ))
    };
    match level {
        0 => [u64_at(0), u32_at(8), u32_at(12)],
        _ => [u64_at(0), u32_at(8), 0],
    }
}

fn ptr_count(level: u8) -> usize {
    if level == 0 {
        3
    } else {
        2
    }
}

/// Packed bytes of one entry's pointer.
pub(crate) fn packed_ptr_len(level: u8, ptr: &[u8]) -> usize {
    let f = ptr_fields(level, ptr);
    f[..ptr_count(level)].iter().map(|&x| varint_len(x)).sum()
}

/// Packed bytes of a node whose keys share `prefix` bytes, with `entries` bytes of entries.
pub(crate) fn packed_node_len(prefix: usize, entries: usize) -> usize {
    NODE_HEAD_BYTES + varint_len(prefix as u64) + prefix + entries + CRC_BYTES
}

/// Packed bytes of one entry (its key `key_len` long) under a shared prefix of `prefix`.
pub(crate) fn packed_entry_len(prefix: usize, key_len: usize, ptr_len: usize) -> usize {
    varint_len((key_len - prefix) as u64) + key_len - prefix + ptr_len
}

/// Pack plain `entries` (`key_len u16 | key | pointer`, back to back, `count` of them, keys
/// ascending and sharing their first `prefix` bytes) of a node of `level`.
pub(crate) fn pack(level: u8, count: usize, prefix: usize, entries: &[u8]) -> Vec<u8> {
    let ptr_bytes = if level == 0 {
        DOC_PTR_BYTES
    } else {
        NODE_PTR_BYTES
    };
    let mut out = Vec::with_capacity(entries.len());
    out.push(NODE_TAG_PACKED);
    out.push(level);
    out.extend_from_slice(&(count as u16).to_le_bytes());
    out.extend_from_slice(&0u32.to_le_bytes());
    push_varint(&mut out, prefix as u64);
    let mut at = 0;
    for i in 0..count {
        let n = u16::from_le_bytes([entries[at], entries[at + 1]]) as usize;
        let key = &entries[at + 2..at + 2 + n];
        assert!(n >= prefix, "every key of the node holds the prefix");
        if i == 0 {
            out.extend_from_slice(&key[..prefix]);
        }
        push_varint(&mut out, (n - prefix) as u64);
        out.extend_from_slice(&key[prefix..]);
        let ptr = &entries[at + 2 + n..at + 2 + n + ptr_bytes];
        for &x in &ptr_fields(level, ptr)[..ptr_count(level)] {
            push_varint(&mut out, x);
        }
        at += 2 + n + ptr_bytes;
    }
    assert_eq!(at, entries.len(), "every entry packed");
    let len = (out.len() + CRC_BYTES) as u32;
    out[4..8].copy_from_slice(&len.to_le_bytes());
    push_crc(&mut out, 0);
    out
}

/// The plain node (head, entries, crc) of the packed node `bytes` (checked: tag, length,
/// crc, every field in bounds; the plain decoder then checks keys and pointers).
pub(crate) fn unpack(bytes: &[u8]) -> Result<Vec<u8>, Corruption> {
    let mut r = Reader::new(bytes, Structure::IndexNode);
    let tag = r.u8()?;
    if tag != NODE_TAG_PACKED {
        let expected = format!("{NODE_TAG_PACKED:#04x}");
        return Err(r.field("tag", 1, expected, format!("{tag:#04x}")));
    }
    let level = r.u8()?;
    let count = r.u16()? as usize;
    let len = r.u32()? as usize;
    if len != bytes.len() || len < NODE_HEAD_BYTES + 1 + CRC_BYTES {
        return Err(r.field("len", 4, bytes.len().to_string(), len));
    }
    // The crc first: a torn node is reported as such, not as a bad field inside it.
    let mut c = Reader::new(bytes, Structure::IndexNode);
    c.at = len - CRC_BYTES;
    c.crc()?;
    let body = Reader::new(&bytes[..len - CRC_BYTES], Structure::IndexNode);
    let mut r = Reader { at: r.at, ..body };
    let prefix_len = read_varint(&mut r, "prefix_len")? as usize;
    if prefix_len > KEY_BYTES_MAX {
        return Err(r.field(
            "prefix_len",
            1,
            format!("at most {KEY_BYTES_MAX}"),
            prefix_len,
        ));
    }
    let prefix = r.bytes(prefix_len)?;
    let mut out = Vec::with_capacity(len * 2 + count * prefix_len);
    out.push(NODE_TAG);
    out.push(level);
    out.extend_from_slice(&(count as u16).to_le_bytes());
    out.extend_from_slice(&0u32.to_le_bytes());
    for _ in 0..count {
        let n = read_varint(&mut r, "suffix_len")? as usize;
        if prefix_len + n > KEY_BYTES_MAX {
            let expected = format!("a key of at most {KEY_BYTES_MAX} bytes");
            return Err(r.field("suffix_len", 1, expected, prefix_len + n));
        }
        let suffix = r.bytes(n)?;
        out.extend_from_slice(&((prefix_len + n) as u16).to_le_bytes());
        out.extend_from_slice(prefix);
        out.extend_from_slice(suffix);
        let mut f = [0u64; 3];
        for x in f.iter_mut().take(ptr_count(level)) {
            *x = read_varint(&mut r, "pointer")?;
        }
        out.extend_from_slice(&f[0].to_le_bytes());
        let narrow = |x: u64| u32::try_from(x).map_err(|_| ());
        let (a, b) = match (narrow(f[1]), narrow(f[2])) {
            (Ok(a), Ok(b)) => (a, b),
            _ => return Err(r.field("pointer", 1, "a field below 2^32", "a larger one")),
        };
        out.extend_from_slice(&a.to_le_bytes());
        if level == 0 {
            out.extend_from_slice(&b.to_le_bytes());
        }
    }
    if r.at != len - CRC_BYTES {
        return Err(r.field("count", 2, "entries filling the node", count));
    }
    let plain_len = (out.len() + CRC_BYTES) as u32;
    out[4..8].copy_from_slice(&plain_len.to_le_bytes());
    push_crc(&mut out, 0);
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn varints_round_trip_at_their_edges() {
        for x in [0u64, 1, 127, 128, 16_383, 16_384, u32::MAX as u64, u64::MAX] {
            let mut out = Vec::new();
            push_varint(&mut out, x);
            assert_eq!(out.len(), varint_len(x));
            let mut r = Reader::new(&out, Structure::IndexNode);
            assert_eq!(read_varint(&mut r, "x").unwrap(), x);
        }
    }
}
