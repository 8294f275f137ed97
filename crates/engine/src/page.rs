//! The page format shared by every on-device structure of the engine.
//!
//! Layout (little-endian), `HEADER_BYTES` = 32:
//! `magic u32 | kind u8 | flags u8 | format u8 | reserved u8 | id u64 | version u64 | len u32 |
//! crc32c u32`. `format` is [`FORMAT_VERSION`]; a page of another format is refused, not
//! guessed at. `crc32c` covers the whole page with the crc field taken as zero. `len` is the
//! payload length that follows the header. A page of all zeros is "blank" (never written or
//! trimmed). Anything else that fails the checks is corrupt or torn and is reported as
//! [`EngineError::Corrupt`] with a structured [`Corruption`]. `docs/format.md` draws it.

use crate::error::{Corruption, EngineError, Fault, Structure};

pub const MAGIC: u32 = 0x464C_5047; // "FLPG"
pub const HEADER_BYTES: usize = 32;
/// The on-device format this build writes and reads (byte 6 of every page).
pub const FORMAT_VERSION: u8 = 1;
const FORMAT_AT: usize = 6;
/// Where a page header's kind byte and version (the commit that wrote it) lie.
pub const KIND_AT: usize = 4;
pub const ID_AT: usize = 8;
pub const VERSION_AT: usize = 16;
const CRC_AT: usize = 28;

/// What a page holds.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(u8)]
pub enum PageKind {
    Meta = 1,
    BTreeLeaf = 2,
    BTreeInner = 3,
    Heap = 4,
    IndexUnits = 5,
    /// Key-value store pages (`engine::kv`): superblock slot, DB header, index node, data.
    KvSuperblock = 0x10,
    KvHeader = 0x11,
    KvIndex = 0x12,
    KvData = 0x13,
}

impl PageKind {
    fn from_u8(b: u8) -> Option<PageKind> {
        Some(match b {
            1 => PageKind::Meta,
            2 => PageKind::BTreeLeaf,
            3 => PageKind::BTreeInner,
            4 => PageKind::Heap,
            5 => PageKind::IndexUnits,
            0x10 => PageKind::KvSuperblock,
            0x11 => PageKind::KvHeader,
            0x12 => PageKind::KvIndex,
            0x13 => PageKind::KvData,
            _ => return None,
        })
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Header {
    pub kind: PageKind,
    pub flags: u8,
    pub id: u64,
    pub version: u64,
    pub len: u32,
}

/// Bytes of payload a page of `page_bytes` can hold.
pub fn payload_capacity(page_bytes: usize) -> usize {
    page_bytes - HEADER_BYTES
}

/// Write the header and checksum over `buf`, whose payload (`buf[HEADER_BYTES..][..len]`) is
/// already in place. Bytes after the payload are zeroed.
pub fn seal(buf: &mut [u8], h: &Header) {
    let len = h.len as usize;
    assert!(HEADER_BYTES + len <= buf.len(), "payload larger than page");
    buf[HEADER_BYTES + len..].fill(0);
    buf[0..4].copy_from_slice(&MAGIC.to_le_bytes());
    buf[KIND_AT] = h.kind as u8;
    buf[5] = h.flags;
    buf[FORMAT_AT] = FORMAT_VERSION;
    buf[FORMAT_AT + 1] = 0;
    buf[ID_AT..ID_AT + 8].copy_from_slice(&h.id.to_le_bytes());
    buf[VERSION_AT..VERSION_AT + 8].copy_from_slice(&h.version.to_le_bytes());
    buf[24..28].copy_from_slice(&h.len.to_le_bytes());
    buf[CRC_AT..CRC_AT + 4].fill(0);
    let crc = crc32c::crc32c(buf);
    buf[CRC_AT..CRC_AT + 4].copy_from_slice(&crc.to_le_bytes());
}

/// True if the page was never written (all zeros).
pub fn is_blank(buf: &[u8]) -> bool {
    buf.iter().all(|&b| b == 0)
}

fn u32_at(b: &[u8], at: usize) -> u32 {
    u32::from_le_bytes(b[at..at + 4].try_into().expect("4 bytes"))
}
fn u64_at(b: &[u8], at: usize) -> u64 {
    u64::from_le_bytes(b[at..at + 8].try_into().expect("8 bytes"))
}

/// Check a page read from device page `page_no` and return its header; the payload is
/// `&buf[HEADER_BYTES..][..len]`. Blank pages are an error too (the caller expected data).
pub fn open(buf: &[u8], page_no: u64) -> Result<Header, EngineError> {
    // The damage names the page and its first byte (`buf` is one whole page).
    let start = page_no.saturating_mul(buf.len() as u64);
    let bad = |what: Fault| {
        EngineError::from(
            Corruption::new(Structure::Page, what)
                .on_page(page_no)
                .at(start),
        )
    };
    if buf.len() < HEADER_BYTES {
        return Err(bad(Fault::TooSmall {
            expected: HEADER_BYTES,
            found: buf.len(),
        }));
    }
    if is_blank(buf) {
        return Err(bad(Fault::Blank));
    }
    let magic = u32_at(buf, 0);
    if magic != MAGIC {
        return Err(bad(Fault::Magic {
            expected: MAGIC,
            found: magic,
        }));
    }
    let stored = u32_at(buf, CRC_AT);
    let mut crc = crc32c::crc32c(&buf[..CRC_AT]);
    crc = crc32c::crc32c_append(crc, &[0u8; 4]);
    crc = crc32c::crc32c_append(crc, &buf[CRC_AT + 4..]);
    if crc != stored {
        return Err(bad(Fault::Checksum {
            stored,
            computed: crc,
        }));
    }
    if buf[FORMAT_AT] != FORMAT_VERSION {
        return Err(bad(Fault::FormatVersion {
            expected: FORMAT_VERSION,
            found: buf[FORMAT_AT],
        }));
    }
    let found = buf[KIND_AT];
    let kind = PageKind::from_u8(found).ok_or(bad(Fault::UnknownKind { found }))?;
    let len = u32_at(buf, 24);
    if HEADER_BYTES + len as usize > buf.len() {
        return Err(bad(Fault::Length {
            what: "payload bytes",
            expected: payload_capacity(buf.len()) as u64,
            found: len as u64,
        }));
    }
    Ok(Header {
        kind,
        flags: buf[5],
        id: u64_at(buf, ID_AT),
        version: u64_at(buf, VERSION_AT),
        len,
    })
}

/// Open a page that must be of `kind` (`expected` names it in the error).
pub fn open_kind(
    buf: &[u8],
    page_no: u64,
    kind: PageKind,
    expected: &'static str,
) -> Result<Header, EngineError> {
    // Damage to a page of `kind` is damage to the structure such a page holds.
    let structure = Structure::of_kind(kind);
    let h = open(buf, page_no).map_err(|e| match e {
        EngineError::Corrupt(mut c) => {
            c.structure = structure;
            EngineError::Corrupt(c)
        }
        e => e,
    })?;
    if h.kind != kind {
        let at = page_no.saturating_mul(buf.len() as u64) + KIND_AT as u64;
        let fault = Fault::Kind {
            expected,
            found: h.kind,
        };
        let c = Corruption::new(structure, fault).on_page(page_no).at(at);
        return Err(c.into());
    }
    assert_eq!(h.kind, kind, "a page of the kind expected");
    Ok(h)
}

/// The payload of a page whose header `open` returned.
pub fn payload<'a>(buf: &'a [u8], h: &Header) -> &'a [u8] {
    &buf[HEADER_BYTES..HEADER_BYTES + h.len as usize]
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sealed() -> Vec<u8> {
        let mut b = vec![0u8; 512];
        b[HEADER_BYTES..HEADER_BYTES + 5].copy_from_slice(b"hello");
        let h = Header {
            kind: PageKind::Heap,
            flags: 0,
            id: 7,
            version: 9,
            len: 5,
        };
        seal(&mut b, &h);
        b
    }

    #[test]
    fn sealed_page_opens_with_its_header_and_payload() {
        let b = sealed();
        let h = open(&b, 3).unwrap();
        assert_eq!((h.kind, h.id, h.version, h.len), (PageKind::Heap, 7, 9, 5));
        assert_eq!(payload(&b, &h), b"hello");
    }

    #[test]
    fn any_flipped_byte_is_detected() {
        let b = sealed();
        for i in 0..b.len() {
            let mut c = b.clone();
            c[i] ^= 0x40;
            assert!(open(&c, 3).is_err(), "flip at byte {i} not detected");
        }
    }

    #[test]
    fn blank_and_torn_pages_are_errors() {
        assert!(matches!(
            open(&[0u8; 512], 1).map_err(|e| e.damage().map(|(p, f)| (p, f.clone()))),
            Err(Some((Some(1), Fault::Blank)))
        ));
        let mut b = sealed();
        b[256..].fill(0xAA); // second half from another write
        assert!(matches!(
            open(&b, 1).map_err(|e| e.damage().map(|(p, f)| (p, f.clone()))),
            Err(Some((Some(1), Fault::Checksum { .. })))
        ));
    }

    #[test]
    fn a_page_of_another_format_version_is_refused() {
        let mut b = sealed();
        b[FORMAT_AT] = FORMAT_VERSION + 1;
        // Re-seal the checksum by hand so only the version is wrong.
        b[CRC_AT..CRC_AT + 4].fill(0);
        let crc = crc32c::crc32c(&b);
        b[CRC_AT..CRC_AT + 4].copy_from_slice(&crc.to_le_bytes());
        assert!(matches!(
open(&b, 2).map_err(|e| e.damage().map(|(p, f)| (p, f.clone()))),
Err(Some((Some(2), Fault::FormatVersion { expected: FORMAT_VERSION, found }))) if found == FORMAT_VERSION + 1));
    }

    #[test]
    fn a_page_of_the_wrong_kind_is_named() {
        let b = sealed();
        assert!(matches!(
            open_kind(&b, 4, PageKind::Meta, "meta")
                .map_err(|e| e.damage().map(|(p, f)| (p, f.clone()))),
            Err(Some((
                Some(4),
                Fault::Kind {
                    expected: "meta",
                    found: PageKind::Heap
                }
            )))
        ));
    }
}
