//! BFTL's mechanisms, observed through its public API on a RAM device: units wait in the
//! reservation buffer (no device write until it fills or the tree commits); a node never
//! spans more than C sectors when read (compaction past C), nor more than C - 1 when the
//! commit does the compaction (P1's 1.5 sectors per node at C = 3); sectors are appended and never
//! reclaimed (the file only grows); node reads count sectors; a damaged sector is reported
//! as corruption, never returned as data.

use blockdev::{BlockDevice, ClockKind, DevError, DevStats, Io, MemDevice, PageNo, WriteHint};
use engine::btree::{
    BTreeConfig, Bftl, BftlConfig, CommitDescent, Compaction, Packing, UnitLayout,
};
use engine::{EngineError, OrderedIndex};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use std::cell::Cell;
use std::rc::Rc;

const PAGE: usize = 4096;

fn cfg(f: usize, cache: usize, reservation: usize, c: usize) -> BftlConfig {
    BftlConfig {
        base: BTreeConfig {
            keys_per_node: f,
            cache_nodes: cache,
        },
        reservation_units: reservation,
        compact_threshold: c,
        ..BftlConfig::default()
    }
}

fn tree(c: BftlConfig) -> Bftl {
    Bftl::create(Box::new(MemDevice::new(PAGE, 1 << 16)), c).expect("valid BFTL config")
}

fn keys(n: usize, seed: u64) -> Vec<u64> {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    (0..n).map(|_| rng.gen_range(0..1_000_000)).collect()
}

#[test]
fn units_wait_in_the_reservation_buffer_until_it_fills_or_the_tree_commits() {
    let mut t = tree(cfg(16, 0, 1_000_000, 3));
    for (i, k) in keys(300, 1).into_iter().enumerate() {
        t.insert(k, i as u64).expect("insert");
    }
    assert_eq!(
        t.stats().node_writes,
        0,
        "nothing may be written before the buffer fills"
    );
    assert_eq!(t.stats().file_bytes, 0);
    for (i, k) in keys(300, 1).into_iter().enumerate().rev().take(20) {
        assert!(
            t.get(k).expect("get").is_some(),
            "key {k} (#{i}) from the buffer"
        );
    }
    t.commit().expect("commit");
    let s = t.stats();
    assert!(s.node_writes > 0, "commit writes the buffered units");
    assert_eq!(s.file_bytes, s.node_writes * PAGE as u64);
}

#[test]
fn a_small_reservation_buffer_writes_sectors_as_it_fills() {
    let mut t = tree(cfg(16, 0, 8, 3));
    for k in keys(200, 2) {
        t.insert(k, k).expect("insert");
    }
    assert!(t.stats().node_writes > 0);
}

/// Searches after a commit read at most C sectors per node (the compaction that runs right
/// after each buffer write reads the C + 1 or more sectors of the lists it shortens; those
/// reads are counted apart, so the whole-run figure obeys C as well).
#[test]
fn a_node_read_never_spans_more_than_c_sectors() {
    for c in 1..=4 {
        let mut t = tree(cfg(32, 0, 16, c));
        let ks = keys(3_000, 3);
        for &k in &ks {
            t.insert(k, k ^ 7).expect("insert");
        }
        t.commit().expect("commit");
        let before = t.stats();
        for &k in ks.iter().step_by(10) {
            assert_eq!(t.get(k).expect("get"), Some(k ^ 7));
        }
        let after = t.stats();
        let loads = after.nodes_loaded - before.nodes_loaded;
        let reads = after.node_reads - before.node_reads;
        assert!(loads >= 300, "every search loads nodes ({loads})");
        assert!(
            reads >= loads && reads <= c as u64 * loads,
            "C = {c}: {reads} sectors for {loads} node reads"
        );
        // The whole-run figure leaves compaction reads out, so it obeys C too.
        let whole = t.sectors_per_node_read();
        let lookups = after.node_reads - after.compaction_reads;
        assert_eq!(whole, lookups as f64 / after.nodes_loaded as f64);
        assert!(whole >= 1.0 && whole <= c as f64, "C = {c}: {whole}");
    }
}

/// Sectors read per node loaded by `searches` after `n` random inserts (F = 64, a buffer of
/// 256 units, C = 3) under `packing`.
fn sectors_per_node(packing: Packing, n: usize) -> f64 {
    let mut t = tree(BftlConfig {
        packing,
        ..cfg(64, 0, 256, 3)
    });
    let ks = keys(n, 8);
    for &k in &ks {
        t.insert(k, k).expect("insert");
    }
    let before = t.stats();
    for &k in ks.iter().step_by(7) {
        assert_eq!(t.get(k).expect("get"), Some(k));
    }
    let after = t.stats();
    (after.node_reads - before.node_reads) as f64
        / (after.nodes_loaded - before.nodes_loaded) as f64
}

/// BFTL's commit policy keeps a node's units in one sector, so a node straddles no sector end
/// and its list is shorter than when units are cut into sectors in node order.
#[test]
fn packing_by_node_reads_fewer_sectors_per_node_than_cutting_in_node_order() {
    let by_node = sectors_per_node(Packing::ByNode, 20_000);
    let sequential = sectors_per_node(Packing::Sequential, 20_000);
    assert!(
        by_node + 0.1 < sequential,
        "by node {by_node:.2}, in node order {sequential:.2}"
    );
    assert!((1.0..=3.0).contains(&by_node), "{by_node}");
}

#[test]
fn sectors_are_never_reclaimed_so_the_file_only_grows() {
    let mut t = tree(cfg(16, 0, 4, 3));
    let ks = keys(1_000, 4);
    let mut last = 0;
    for (i, &k) in ks.iter().enumerate() {
        t.insert(k, 1).expect("insert");
        if i % 3 == 0 {
            t.delete(ks[i / 2]).expect("delete");
        }
        let s = t.stats();
        assert!(
            s.file_bytes >= last,
            "file shrank from {last} to {}",
            s.file_bytes
        );
        assert_eq!(s.file_bytes, s.node_writes * PAGE as u64);
        last = s.file_bytes;
    }
}

#[test]
fn without_a_cache_every_search_reads_at_least_one_sector_per_level() {
    let mut t = tree(cfg(8, 0, 32, 3));
    let ks = keys(2_000, 5);
    for &k in &ks {
        t.insert(k, k).expect("insert");
    }
    t.commit().expect("commit");
    let before = t.stats().node_reads;
    assert_eq!(t.get(ks[0]).expect("get"), Some(ks[0]));
    // 2,000 keys with F = 8: at least three levels.
    assert!(t.stats().node_reads - before >= 3);
}

#[test]
fn an_lru_cache_serves_repeated_searches_without_device_reads() {
    let mut t = tree(cfg(8, 64, 32, 3));
    let ks = keys(500, 6);
    for &k in &ks {
        t.insert(k, k).expect("insert");
    }
    t.commit().expect("commit");
    t.get(ks[1]).expect("warm");
    let before = t.stats().node_reads;
    for _ in 0..10 {
        assert_eq!(t.get(ks[1]).expect("get"), Some(ks[1]));
    }
    assert_eq!(t.stats().node_reads, before);
    assert!(t.stats().cache_hits > 0);
}

#[test]
fn zero_sized_settings_are_rejected_with_the_field_named() {
    for c in [cfg(16, 0, 0, 3), cfg(16, 0, 8, 0), cfg(1, 0, 8, 3)] {
        match Bftl::create(Box::new(MemDevice::new(PAGE, 64)), c) {
            Err(EngineError::Config { field, .. }) => assert!(!field.is_empty()),
            Err(e) => panic!("expected a config error, got {e}"),
            Ok(_) => panic!("{c:?} must be rejected"),
        }
    }
}

/// A MemDevice whose reads flip one payload byte while `damage` is set.
struct Flipper {
    inner: MemDevice,
    damage: Rc<Cell<bool>>,
}

impl BlockDevice for Flipper {
    fn page_bytes(&self) -> usize {
        self.inner.page_bytes()
    }
    fn capacity_pages(&self) -> u64 {
        self.inner.capacity_pages()
    }
    fn read(&mut self, page: PageNo, buf: &mut [u8]) -> Result<(), DevError> {
        self.inner.read(page, buf)?;
        if self.damage.get() {
            buf[100] ^= 0x40;
        }
        Ok(())
    }
    fn write(&mut self, page: PageNo, buf: &[u8], hint: WriteHint) -> Result<(), DevError> {
        self.inner.write(page, buf, hint)
    }
    fn submit(&mut self, batch: &mut [Io<'_>]) -> Result<(), DevError> {
        self.inner.submit(batch)
    }
    fn trim(&mut self, page: PageNo, pages: u64) -> Result<(), DevError> {
        self.inner.trim(page, pages)
    }
    fn flush(&mut self) -> Result<(), DevError> {
        self.inner.flush()
    }
    fn now_ns(&self) -> u64 {
        self.inner.now_ns()
    }
    fn clock_kind(&self) -> ClockKind {
        self.inner.clock_kind()
    }
    fn stats(&self) -> DevStats {
        self.inner.stats()
    }
}

#[test]
fn a_damaged_sector_is_reported_as_corrupt() {
    let damage = Rc::new(Cell::new(false));
    let dev = Flipper {
        inner: MemDevice::new(PAGE, 1 << 12),
        damage: Rc::clone(&damage),
    };
    let mut t = Bftl::create(Box::new(dev), cfg(16, 0, 16, 3)).expect("create");
    let ks = keys(300, 7);
    for &k in &ks {
        t.insert(k, k).expect("insert");
    }
    t.commit().expect("commit");
    damage.set(true);
    match t.get(ks[0]) {
        Err(EngineError::Corrupt { .. }) => {}
        other => panic!("a flipped byte must be detected, got {other:?}"),
    }
    damage.set(false);
    assert_eq!(t.get(ks[0]).expect("get"), Some(ks[0]));
}

#[test]
fn lookups_are_counted_by_level_and_list_length_and_sum_to_the_sectors_read() {
    let mut t = tree(cfg(16, 0, 64, 3));
    for (i, k) in keys(3000, 5).into_iter().enumerate() {
        t.insert(k, i as u64).expect("insert");
    }
    t.commit().expect("commit");
    for k in keys(3000, 5).into_iter().take(500) {
        assert!(t.get(k).expect("get").is_some());
    }
    let s = t.stats();
    let h = s.loads_by_level_list_len;
    let loads: u64 = h.iter().flat_map(|l| l[1..].iter()).sum();
    let sectors: u64 = h
        .iter()
        .flat_map(|l| l.iter().enumerate().map(|(n, c)| n as u64 * c))
        .sum();
    assert_eq!(loads, s.nodes_loaded, "every lookup with sectors is binned");
    assert_eq!(
        sectors,
        s.node_reads - s.compaction_reads,
        "bins times lengths are the reads"
    );
    assert!(
        h.iter().all(|l| l[4] == 0),
        "no list is read past C = 3: {h:?}"
    );
    assert!(
        h.iter().all(|l| l[1..].iter().sum::<u64>() > 0),
        "root, inner and leaf: {h:?}"
    );
}

/// The longest sector list any lookup read (0 when none read a sector), from the lookups'
/// histogram by level and list length; lists of 4 or more share the last bin.
fn longest_list_read(t: &Bftl) -> usize {
    let h = t.stats().loads_by_level_list_len;
    (1..h[0].len())
        .rev()
        .find(|&n| h.iter().any(|level| level[n] > 0))
        .unwrap_or(0)
}

/// P1's experiment in small (F = 64, a reservation buffer of F units, random inserts then
/// searches of inserted keys) under `compaction` with C = `c`; returns the tree.
fn p1_like(compaction: Compaction, c: usize, n: usize) -> Bftl {
    let mut t = tree(BftlConfig {
        compaction,
        ..cfg(64, 0, 64, c)
    });
    let ks = keys(n, 9);
    for &k in &ks {
        t.insert(k, k).expect("insert");
    }
    t.commit().expect("commit");
    for &k in ks.iter().step_by(5) {
        assert_eq!(t.get(k).expect("get"), Some(k));
    }
    t
}

/// With the compaction in the commit, C counts the sector the commit writes: no lookup, while
/// inserting or searching, reads a list of C sectors, and the mean is near C / 2 (P1: C = 3,
/// 1.49). The same check run on the compaction after the commit must fail — it is the check
/// broken on purpose: that mode leaves lists of C sectors at rest, which lookups read.
#[test]
fn compaction_in_the_commit_keeps_every_list_read_below_c() {
    for c in 2..=4 {
        let t = p1_like(Compaction::InCommit, c, 20_000);
        let longest = longest_list_read(&t);
        assert!(
            (1..c).contains(&longest),
            "C = {c}: a lookup read {longest} sectors"
        );
        let mean = t.sectors_per_node_read();
        assert!(
            mean <= (c - 1) as f64,
            "C = {c}: {mean:.2} sectors per node"
        );
        let after = p1_like(Compaction::AfterCommit, c, 20_000);
        assert_eq!(
            longest_list_read(&after),
            c,
            "C = {c}: the check must catch lists of C sectors after the commit"
        );
        assert!(after.sectors_per_node_read() > mean, "C = {c}");
    }
    let p1 = p1_like(Compaction::InCommit, 3, 20_000).sectors_per_node_read();
    assert!((1.2..=1.8).contains(&p1), "C = 3: {p1:.2} (P1: 1.49)");
}

/// The compaction in the commit writes each compacted node whole in the commit's own sectors:
/// nothing is left in the reservation buffer for a later commit, so right after a commit a
/// search reads only sectors (the buffer is empty), and the file still only grows.
#[test]
fn compaction_in_the_commit_leaves_the_buffer_empty_and_the_contents_whole() {
    let mut t = tree(BftlConfig {
        compaction: Compaction::InCommit,
        ..cfg(16, 0, 16, 2)
    });
    let ks = keys(3_000, 10);
    for (i, &k) in ks.iter().enumerate() {
        t.insert(k, i as u64).expect("insert");
    }
    t.commit().expect("commit");
    let writes = t.stats().node_writes;
    let mut want = std::collections::BTreeMap::new();
    for (i, &k) in ks.iter().enumerate() {
        want.insert(k, i as u64);
    }
    let all: Vec<(u64, u64)> = want.into_iter().collect();
    assert_eq!(t.range(0, u64::MAX).expect("range"), all);
    t.commit().expect("commit");
    assert_eq!(
        t.stats().node_writes,
        writes,
        "nothing waited in the buffer"
    );
}

/// The unit's width decides how many sectors a node's whole content takes: 202 units (a
/// leaf's reset, next link and 200 records) fit one 8 KiB sector of 25-byte units (326 a
/// sector) but need two of 49-byte units (166 a sector). So with C = 3 in the commit the
/// wide node's list starts at two sectors, every lookup reads both, and the next commit that
/// touches it compacts it again (its two sectors read, its content rewritten whole) where
/// the narrow node's list just grows to two.
#[test]
fn a_node_wider_than_a_sector_starts_its_list_at_two_sectors_and_compacts_on_every_touch() {
    const PAGE8K: usize = 8192;
    for (unit, sectors) in [(UnitLayout::Narrow, 1), (UnitLayout::Wide, 2)] {
        let mut t = Bftl::create(
            Box::new(MemDevice::new(PAGE8K, 1 << 10)),
            BftlConfig {
                compaction: Compaction::InCommit,
                unit,
                ..cfg(256, 0, 256, 3)
            },
        )
        .expect("valid BFTL config");
        for k in 0..200u64 {
            t.insert(k, k).expect("insert");
        }
        t.commit().expect("commit");
        let s = t.stats();
        assert_eq!(s.node_writes, sectors, "{unit:?}: sectors of 202 units");
        assert_eq!(s.file_bytes, sectors * PAGE8K as u64, "{unit:?}");
        assert_eq!(t.get(7).expect("get"), Some(7));
        assert_eq!(t.sectors_per_node_read(), sectors as f64, "{unit:?}");
        t.insert(1_000, 1).expect("insert");
        t.commit().expect("commit");
        let (reads, writes) = (
            t.stats().compaction_reads,
            t.stats().node_writes - s.node_writes,
        );
        match unit {
            UnitLayout::Narrow => assert_eq!((reads, writes), (0, 1), "{unit:?}"),
            UnitLayout::Wide => assert_eq!((reads, writes), (2, 2), "{unit:?}"),
        }
        assert_eq!(t.get(1_000).expect("get"), Some(1));
    }
}

/// 5,000 ascending keys (0, 1000, 2000, ...) at F = 64, committed: leaves of 32 keys (each
/// split leaves 32 behind), a tree of three levels whose every node lies on sectors. Then
/// 20 keys into one leaf's gap (no split: 52 <= 64), buffered until the commit.
fn one_leaf_batch(
    commit_descent: CommitDescent,
) -> (engine::tree::IndexStats, engine::tree::IndexStats) {
    let mut t = tree(BftlConfig {
        commit_descent,
        ..cfg(64, 0, 1_000_000, 3)
    });
    for i in 0..5_000u64 {
        t.insert(i * 1000, i).expect("preload");
    }
    t.commit().expect("commit");
    let before = t.stats();
    for k in 1..=20u64 {
        t.insert(2_500_000 + k, k).expect("insert");
    }
    let lookups = t.stats();
    t.commit().expect("commit");
    let after = t.stats();
    for k in 1..=20u64 {
        assert_eq!(t.get(2_500_000 + k).expect("get"), Some(k));
    }
    let d = |a: engine::tree::IndexStats, b: engine::tree::IndexStats| engine::tree::IndexStats {
        node_reads: b.node_reads - a.node_reads,
        nodes_loaded: b.nodes_loaded - a.nodes_loaded,
        compaction_reads: b.compaction_reads - a.compaction_reads,
        commit_reads: b.commit_reads - a.commit_reads,
        commit_loads: b.commit_loads - a.commit_loads,
        node_writes: b.node_writes - a.node_writes,
        file_bytes: b.file_bytes,
        ..engine::tree::IndexStats::default()
    };
    (d(before, lookups), d(lookups, after))
}

#[test]
fn a_commit_descends_again_for_each_buffered_record_per_record_and_once_per_node_per_node() {
    let (none_inserts, none_commit) = one_leaf_batch(CommitDescent::None);
    // Each insert read its path: root, inner, leaf, every one from its sectors.
    assert_eq!(none_inserts.nodes_loaded, 20 * 3, "{none_inserts:?}");
    assert_eq!(
        none_inserts.node_writes, 0,
        "the inserts wait in the buffer"
    );
    assert_eq!((none_commit.commit_loads, none_commit.commit_reads), (0, 0));
    for (descent, loads) in [
        (CommitDescent::PerRecord, 20 * 3),
        (CommitDescent::PerNode, 3),
    ] {
        let (inserts, commit) = one_leaf_batch(descent);
        assert_eq!(
            inserts, none_inserts,
            "{descent:?}: the inserts read as before"
        );
        assert_eq!(
            commit.commit_loads, loads,
            "{descent:?}: nodes the commit's descents rebuilt"
        );
        // The lists have not changed since the inserts read them, so the descents read what
        // the inserts' lookups read, node for node (per record) or once per node (per node).
        let per_load = none_inserts.node_reads as f64 / none_inserts.nodes_loaded as f64;
        assert_eq!(
            commit.commit_reads as f64,
            per_load * loads as f64,
            "{descent:?}"
        );
        assert_eq!(commit.commit_loads, commit.nodes_loaded, "{descent:?}");
        // A read-only pass: the commit writes, compacts and grows the file as before.
        assert_eq!(
            (
                commit.node_writes,
                commit.compaction_reads,
                commit.file_bytes
            ),
            (
                none_commit.node_writes,
                none_commit.compaction_reads,
                none_commit.file_bytes
            ),
            "{descent:?}"
        );
        assert_eq!(
            commit.node_reads,
            none_commit.node_reads + commit.commit_reads,
            "{descent:?}"
        );
    }
}
