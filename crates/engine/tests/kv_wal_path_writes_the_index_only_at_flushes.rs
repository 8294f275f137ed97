//! Write path `wal` (ForestDB's): documents and a header per commit, index nodes only when the
//! WAL is flushed (every `wal_flush_docs` documents, and at close); reads of unflushed keys
//! answered from the WAL index; a reopen replays the WAL after the last flushing header.

use engine::kv::{Options, Store, WritePath};

mod common;
use common::{all, key, mem, small_opts, Model};

fn wal_opts(flush_docs: u64) -> Options {
    Options {
        write_path: WritePath::Wal,
        wal_flush_docs: flush_docs,
        ..small_opts()
    }
}

/// `commits` commits of 16 puts (keys cycling over 200) and one delete each.
fn write(s: &mut Store, m: &mut Model, commits: u32) {
    for c in 0..commits {
        for i in 0..16u32 {
            let k = key((c * 16 + i) % 200);
            let v = vec![(c % 251) as u8; 300];
            s.put(&k, &v).unwrap();
            m.insert(k, v);
        }
        s.delete(&key(c * 7 % 200)).unwrap();
        m.remove(&key(c * 7 % 200));
        s.commit().unwrap();
    }
}

#[test]
fn index_pages_are_written_only_when_the_wal_is_flushed() {
    // No compaction: a compaction batch flushes the WAL (its freed pages leave the tree).
    let opts = Options {
        compact_threshold: 1.0,
        ..wal_opts(1000)
    };
    let mut s = Store::open(mem(4096), opts).unwrap();
    let mut m = Model::new();
    // 50 commits of 17 documents: 850 < 1000, no flush yet.
    write(&mut s, &mut m, 50);
    let st = s.stat();
    assert_eq!(st.pages_written.index, 0, "no index page before a flush");
    assert_eq!(st.headers, 50, "a header per commit");
    assert_eq!(
        st.pages_written.superblock, 51,
        "a superblock per commit (and commit 0)"
    );
    assert!(s.wal_entries() > 0);
    assert_eq!(
        all(&mut s),
        m,
        "the WAL index answers reads of unflushed keys"
    );
    // 10 more commits cross 1000 documents: one flush.
    write(&mut s, &mut m, 10);
    assert!(
        s.stat().pages_written.index > 0,
        "the flush wrote the index"
    );
    assert!(s.wal_entries() < 200);
    assert_eq!(all(&mut s), m);
    assert!(s.check().unwrap().is_empty());
}

#[test]
fn a_reopen_replays_the_wal_after_the_last_flush() {
    for path in [WritePath::Wal, WritePath::Cow] {
        let mut s = Store::open(mem(4096), wal_opts(300)).unwrap();
        let mut m = Model::new();
        write(&mut s, &mut m, 40);
        assert!(s.wal_entries() > 0, "some documents wait in the WAL");
        // A crash: the device as it is, nothing closed.
        let dev = s.into_device();
        let opts = Options {
            write_path: path,
            ..wal_opts(300)
        };
        let mut r = Store::open(dev, opts).unwrap();
        assert_eq!(all(&mut r), m, "replayed on path {}", path.name());
        write(&mut r, &mut m, 30);
        assert_eq!(all(&mut r), m);
        assert!(r.check().unwrap().is_empty());
        let dev = r.close().unwrap();
        let mut r = Store::open(dev, opts).unwrap();
        assert_eq!(r.wal_entries(), 0, "close flushed the WAL");
        assert_eq!(all(&mut r), m);
        assert_eq!(r.stat().live_keys, m.len() as u64);
    }
}

#[test]
fn endless_small_commits_on_path_wal_keep_the_footprint_bounded() {
    let opts = Options {
        compact_threshold: 0.3,
        compact_min_bytes: 64 << 10,
        ..wal_opts(256)
    };
    let mut s = Store::open(mem(1024), opts).unwrap();
    let mut m = Model::new();
    write(&mut s, &mut m, 2000);
    assert!(s.stat().footprint_pages <= 1024);
    assert_eq!(all(&mut s), m);
    let dev = s.into_device();
    let mut r = Store::open(dev, opts).unwrap();
    assert_eq!(all(&mut r), m);
    assert!(r.check().unwrap().is_empty());
}

#[test]
fn whole_file_compaction_rewrites_the_live_data_at_once_and_keeps_the_footprint_bounded() {
    let opts = Options {
        compact_threshold: 0.3,
        compact_min_bytes: 64 << 10,
        compaction_mode: engine::kv::CompactionMode::WholeFile,
        next_fit: true,
        ..wal_opts(256)
    };
    let mut s = Store::open(mem(1024), opts).unwrap();
    let mut m = Model::new();
    write(&mut s, &mut m, 2000);
    let st = s.stat();
    assert!(st.generation >= 3, "{} whole-file passes", st.generation);
    assert_eq!(st.compaction_batches, 0, "no incremental batch");
    assert_eq!(all(&mut s), m);
    let dev = s.into_device();
    let mut r = Store::open(dev, opts).unwrap();
    assert_eq!(all(&mut r), m);
    assert!(r.check().unwrap().is_empty());
}

/// Documents only the WAL index reaches (committed, not yet flushed) are counted by `stat` and
/// verified by `check`: a flipped byte in one of them is damage naming its page.
#[test]
fn stat_and_check_cover_documents_still_only_in_the_wal() {
    use blockdev::{BlockDevice, MemDevice, SharedDevice, WriteHint};
    let opts = Options {
        compact_threshold: 1.0,
        cache_pages: 4,
        ..wal_opts(100_000)
    };
    let mut shared = SharedDevice::new(MemDevice::new(4096, 1024));
    let part = shared.partition(1024).unwrap();
    let mut s = Store::open(Box::new(part), opts).unwrap();
    let mut m = Model::new();
    write(&mut s, &mut m, 20);
    let st = s.stat();
    assert_eq!(st.pages_written.index, 0, "nothing flushed");
    assert_eq!(st.live_keys, 0, "the tree holds nothing yet");
    assert_eq!(st.wal_entries, s.wal_entries());
    assert!(st.wal_tombstones > 0, "the deletes wait in the WAL too");
    assert_eq!(
        st.wal_entries - st.wal_tombstones,
        m.len() as u64,
        "every live key is in the WAL"
    );
    assert!(st.wal_live_bytes >= 300 * m.len() as u64);
    assert!(s.check().unwrap().is_empty());
    // Flip a byte in every data page under the open store: damage only the WAL reaches.
    let mut img = vec![0u8; 1024 * 4096];
    shared.device_mut().read(0, &mut img).unwrap();
    let data: Vec<usize> = (0..1024).filter(|&p| img[p * 4096 + 4] == 0x13).collect();
    assert!(!data.is_empty());
    for &p in &data {
        let page = &mut img[p * 4096..(p + 1) * 4096];
        page[200] ^= 4;
        shared
            .device_mut()
            .write(p as u64, page, WriteHint::NONE)
            .unwrap();
    }
    let damage = s.check().unwrap();
    assert!(
        damage
            .iter()
            .any(|d| data.contains(&((d.offset / 4096) as usize))),
        "{damage:?}"
    );
    assert!(
        damage.iter().any(|d| d.what.starts_with("WAL")),
        "{damage:?}"
    );
}
