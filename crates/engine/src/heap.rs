//! A heap file of fixed-size records with a secondary B+-tree index, built by a seeded loader.
//!
//! Model: records are `RECORD_BYTES` long: `key u64 | id u64 | filler` (the filler is derived
//! from the id, so a read can be checked). Record `id` lives in heap page `id / per_page`,
//! slot `id % per_page` — heap order is id order. Its secondary key is a bijective scramble of
//! the id (`(id ^ salt) * odd constant`, mod 2^64), so keys are distinct and spread uniformly
//! over u64 and a key range touches heap pages scattered over the whole file. Pages use the
//! shared page format (kind Heap; payload `count u16 | records`).
//! The index is bulk-loaded bottom-up in the shared node format (leaves: key -> record id
//! `page << 16 | slot`, linked left to right; inner nodes above), stored after the heap; a
//! node's id is its device page. Loading writes through the pager in runs of
//! `LOAD_CHUNK_PAGES` pages ([`RunWriter`]).

use crate::btree::node::{Node, NO_NODE};
use crate::error::{EngineError, Fault, Structure};
use crate::page::{self, Header, PageKind, HEADER_BYTES};
use crate::pager::{Pager, RunWriter};

pub const RECORD_BYTES: usize = 160;
const SCRAMBLE: u64 = 0x9E37_79B9_7F4A_7C15;

/// Where a record is.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub struct RecordId {
    pub page: u64,
    pub slot: u16,
}

impl RecordId {
    pub fn encode(self) -> u64 {
        self.page << 16 | self.slot as u64
    }
    pub fn decode(x: u64) -> RecordId {
        RecordId {
            page: x >> 16,
            slot: (x & 0xFFFF) as u16,
        }
    }
}

/// A loaded database: heap pages `0..heap_pages`, index pages after them.
#[derive(Clone, Debug)]
pub struct Database {
    pub records: u64,
    pub per_page: u64,
    pub heap_pages: u64,
    pub index_pages: u64,
    pub root: u64,
    pub salt: u64,
    pub leaf_keys: usize,
}

impl Database {
    /// The secondary key of record `id`.
    pub fn key_of(&self, id: u64) -> u64 {
        (id ^ self.salt).wrapping_mul(SCRAMBLE)
    }
    pub fn rid_of(&self, id: u64) -> RecordId {
        RecordId {
            page: id / self.per_page,
            slot: (id % self.per_page) as u16,
        }
    }
    pub fn total_pages(&self) -> u64 {
        self.heap_pages + self.index_pages
    }
}

/// Records that fit one heap page of `page_bytes`.
pub fn records_per_page(page_bytes: usize) -> u64 {
    ((page_bytes - HEADER_BYTES - 2) / RECORD_BYTES) as u64
}

fn fill_record(out: &mut [u8], key: u64, id: u64) {
    out[0..8].copy_from_slice(&key.to_le_bytes());
    out[8..16].copy_from_slice(&id.to_le_bytes());
    out[16..].fill(id as u8);
}

/// Parse record `slot` of a heap page read from `page_no`: (key, id).
pub fn read_record(buf: &[u8], page_no: u64, slot: u16) -> Result<(u64, u64), EngineError> {
    check_page(buf, page_no)?.record(buf, page_no, slot)
}

/// A heap page image whose seal (checksum, magic, version), kind and record count were
/// checked by [`check_page`]: its records are read without checking the page again, as long
/// as the image is unchanged (the pager keeps it beside the frame's image; see
/// [`crate::Pager::checked_form`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct CheckedHeapPage {
    count: u16,
}

/// Check a heap page read from `page_no`: seal, kind, and a payload that holds its records.
pub fn check_page(buf: &[u8], page_no: u64) -> Result<CheckedHeapPage, EngineError> {
    let h = page::open_kind(buf, page_no, PageKind::Heap, "heap")?;
    let bad = |what: Fault| EngineError::corrupt(Structure::HeapPage, page_no, what);
    let p = page::payload(buf, &h);
    let count = match p.get(0..2) {
        Some(c) => u16::from_le_bytes([c[0], c[1]]),
        None => {
            return Err(bad(Fault::Length {
                what: "heap page payload bytes (at least)",
                expected: 2,
                found: p.len() as u64,
            }))
        }
    };
    if p.len() < 2 + count as usize * RECORD_BYTES {
        return Err(bad(Fault::Length {
            what: "heap page payload bytes for its record count",
            expected: (2 + count as usize * RECORD_BYTES) as u64,
            found: p.len() as u64,
        }));
    }
    Ok(CheckedHeapPage { count })
}

impl CheckedHeapPage {
    /// Record `slot` of the image this check was made on (`buf`, read from `page_no`).
    pub fn record(&self, buf: &[u8], page_no: u64, slot: u16) -> Result<(u64, u64), EngineError> {
        if slot >= self.count {
            let fault = Fault::Slot {
                slot,
                count: self.count,
            };
            return Err(EngineError::corrupt(Structure::HeapPage, page_no, fault));
        }
        let at = HEADER_BYTES + 2 + slot as usize * RECORD_BYTES;
        let r = &buf[at..][..RECORD_BYTES];
        let w = |i: usize| u64::from_le_bytes(r[i..i + 8].try_into().expect("8 bytes"));
        Ok((w(0), w(8)))
    }
}

/// Pages written per device call while loading.
const LOAD_CHUNK_PAGES: usize = 64;

/// Load `records` records and their index through `pager` (from device page 0), keys salted
/// by `seed` (the caller's seed for this database).
pub fn load(
    pager: &mut Pager,
    records: u64,
    leaf_keys: usize,
    seed: u64,
) -> Result<Database, EngineError> {
    let pb = pager.page_bytes();
    let per_page = records_per_page(pb);
    let mut db = Database {
        records,
        per_page,
        heap_pages: records.div_ceil(per_page),
        index_pages: 0,
        root: 0,
        salt: seed.wrapping_mul(0xD1B5_4A32_D192_ED03),
        leaf_keys,
    };
    if leaf_keys < 2 || Node::bytes_for(leaf_keys) > pb {
        return Err(EngineError::Config {
            field: "leaf_keys",
            value: leaf_keys.to_string(),
            reason: format!("must be at least 2 and fit a {pb}-byte page"),
        });
    }
    let needed = db.heap_pages + 2 * records.div_ceil(leaf_keys as u64) + 2;
    if needed > pager.capacity_pages() {
        return Err(EngineError::Full {
            what: "device",
            reason: format!(
                "{records} records need about {needed} pages; the device has {}",
                pager.capacity_pages()
            ),
        });
    }
    let mut w = RunWriter::new(pb, LOAD_CHUNK_PAGES);
    w.start_at(0);
    for hp in 0..db.heap_pages {
        let first = hp * per_page;
        let n = per_page.min(records - first) as usize;
        let page = w.page_mut(pager)?;
        page.fill(0);
        page[HEADER_BYTES..HEADER_BYTES + 2].copy_from_slice(&(n as u16).to_le_bytes());
        for s in 0..n {
            let at = HEADER_BYTES + 2 + s * RECORD_BYTES;
            fill_record(
                &mut page[at..at + RECORD_BYTES],
                db.key_of(first + s as u64),
                first + s as u64,
            );
        }
        page::seal(
            page,
            &Header {
                kind: PageKind::Heap,
                flags: 0,
                id: hp,
                version: 1,
                len: (2 + n * RECORD_BYTES) as u32,
            },
        );
    }
    let mut entries: Vec<(u64, u64)> = (0..records)
        .map(|id| (db.key_of(id), db.rid_of(id).encode()))
        .collect();
    entries.sort_unstable();
    db.root = build_index(pager, &mut w, &entries, leaf_keys)?;
    db.index_pages = w.next_page() - db.heap_pages;
    w.write_out(pager)?;
    pager.flush()?;
    Ok(db)
}

/// Bulk-load the index bottom-up; returns the root's page.
fn build_index(
    pager: &mut Pager,
    w: &mut RunWriter,
    entries: &[(u64, u64)],
    f: usize,
) -> Result<u64, EngineError> {
    let mut next_page = w.next_page();
    // Level 0: leaves, each linked to the next.
    let mut level: Vec<(u64, u64)> = Vec::new(); // (first key, page)
    let chunks: Vec<&[(u64, u64)]> = if entries.is_empty() {
        vec![&[]]
    } else {
        entries.chunks(f).collect()
    };
    for (i, c) in chunks.iter().enumerate() {
        let id = next_page + i as u64;
        let next = if i + 1 < chunks.len() {
            id + 1
        } else {
            NO_NODE
        };
        let node = Node {
            id,
            leaf: true,
            keys: c.iter().map(|e| e.0).collect(),
            vals: c.iter().map(|e| e.1).collect(),
            next,
        };
        node.encode(w.page_mut(pager)?, 1);
        level.push((c.first().map_or(0, |e| e.0), id));
    }
    next_page += chunks.len() as u64;
    while level.len() > 1 {
        let mut up = Vec::new();
        for (i, c) in level.chunks(f + 1).enumerate() {
            let id = next_page + i as u64;
            let node = Node {
                id,
                leaf: false,
                keys: c[1..].iter().map(|e| e.0).collect(),
                vals: c.iter().map(|e| e.1).collect(),
                next: NO_NODE,
            };
            node.encode(w.page_mut(pager)?, 1);
            up.push((c[0].0, id));
        }
        next_page += up.len() as u64;
        level = up;
    }
    Ok(level[0].1)
}

#[cfg(test)]
mod tests {
    use super::*;
    use blockdev::MemDevice;

    #[test]
    fn keys_are_distinct_and_records_read_back() {
        let mut pager = Pager::new(Box::new(MemDevice::new(8192, 4096)), 0);
        let db = load(&mut pager, 5000, 64, 7).unwrap();
        let mut keys: Vec<u64> = (0..5000).map(|i| db.key_of(i)).collect();
        keys.sort_unstable();
        keys.dedup();
        assert_eq!(keys.len(), 5000);
        let rid = db.rid_of(4321);
        let buf = pager.read_uncached(rid.page).unwrap();
        assert_eq!(
            read_record(buf, rid.page, rid.slot).unwrap(),
            (db.key_of(4321), 4321)
        );
        assert!(db.index_pages >= 5000 / 64);
    }
}
