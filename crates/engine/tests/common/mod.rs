//! Helpers the KV store's integration tests share: small options, a memory device, keys,
//! values and the store's contents as a model.
#![allow(dead_code)]

use blockdev::{BlockDevice, MemDevice};
use engine::kv::format::{DbHeader, KvStats, NodePtr, PagesByType};
use engine::kv::{CompactionMode, NodeLayout, Options, StalePages, Store, WritePath};
use rand::Rng;
use rand_chacha::ChaCha8Rng;
use std::collections::BTreeMap;
use std::ops::Bound;

pub type Model = BTreeMap<Vec<u8>, Vec<u8>>;

pub fn small_opts() -> Options {
    Options {
        cache_pages: 16,
        cache_max_pages: 0,
        compact_min_bytes: 16 << 10,
        ..Options::default()
    }
}

/// `small_opts` in one of three shapes by `variant % 3`: write path `cow`; path `wal` with
/// incremental compaction and refilled leaf runs; path `wal` with whole-file compaction, next
/// fit, packed nodes and refilled leaf runs (ForestDB's mode) (a small WAL flush threshold,
/// so tests cross flushes). ForestDB's mode holds the pages a generation frees until its
/// compaction (`StalePages::Hold`) when `variant / 3` is odd.
pub fn variant_opts(variant: u64) -> Options {
    let (write_path, compaction_mode) = match variant % 3 {
        0 => (WritePath::Cow, CompactionMode::Incremental),
        1 => (WritePath::Wal, CompactionMode::Incremental),
        _ => (WritePath::Wal, CompactionMode::WholeFile),
    };
    Options {
        write_path,
        compaction_mode,
        next_fit: variant % 3 == 2,
        node_layout: match variant % 3 {
            2 => NodeLayout::Packed,
            _ => NodeLayout::Plain,
        },
        refill_leaves: !variant.is_multiple_of(3),
        stale_pages: match variant % 3 == 2 && (variant / 3) % 2 == 1 {
            true => StalePages::Hold,
            false => StalePages::Reuse,
        },
        wal_flush_docs: 24,
        ..small_opts()
    }
}

pub fn mem(pages: u64) -> Box<dyn BlockDevice> {
    Box::new(MemDevice::new(4096, pages))
}

pub fn all(store: &mut Store) -> Model {
    store
        .scan((Bound::Unbounded, Bound::Unbounded))
        .unwrap()
        .map(|r| r.unwrap())
        .collect()
}

pub fn key(i: u32) -> Vec<u8> {
    format!("key{i:05}").into_bytes()
}

pub fn value(rng: &mut ChaCha8Rng) -> Vec<u8> {
    let len = match rng.gen_range(0..10) {
        0 => rng.gen_range(3000..9000), // spans pages
        _ => rng.gen_range(0..300),
    };
    (0..len).map(|_| rng.gen()).collect()
}

/// A DB header with every field derived from `commit_seq` (codec and recovery tests).
pub fn header(commit_seq: u64) -> DbHeader {
    DbHeader {
        commit_seq,
        doc_seq: commit_seq * 10,
        root: Some(NodePtr {
            page: commit_seq * 100,
            len: 300,
        }),
        prev_header_page: commit_seq * 100 - 1,
        log_end_page: commit_seq * 100 + 2,
        generation: 1,
        stats: KvStats {
            live_keys: 5,
            live_bytes: 500,
            stale_bytes: 50,
            pages: PagesByType {
                superblock: 1,
                header: 2,
                index: 3,
                data: 4,
            },
        },
    }
}

/// A write the model tests apply to the store and to the model alike.
#[derive(Clone, Debug)]
pub enum Write {
    /// Put key, value length, byte.
    Put(u32, u16, u8),
    Delete(u32),
    Commit,
    FlushWal,
}

/// Apply `w` to `s` and to `m`.
pub fn apply(s: &mut Store, m: &mut Model, w: &Write) {
    match *w {
        Write::Put(k, len, b) => {
            let v = vec![b; len as usize];
            s.put(&key(k), &v).unwrap();
            m.insert(key(k), v);
        }
        Write::Delete(k) => {
            s.delete(&key(k)).unwrap();
            m.remove(&key(k));
        }
        Write::Commit => {
            s.commit().unwrap();
        }
        Write::FlushWal => s.flush_wal().unwrap(),
    }
}
