//! Hand-made traces through `BufferSim`, with the exact state and counts each policy's rules
//! give (worked out by hand in the comments).

use policy::{BufferSim, Counts, LogId, PolicyConfig, PolicyKind};

fn sim(kind: PolicyKind, size: usize, ext: usize) -> BufferSim {
    let mut c = PolicyConfig::new(kind, size, ext);
    if !matches!(kind, PolicyKind::Lru | PolicyKind::LruExt) {
        c.kin = Some(1);
    }
    BufferSim::new(&c).expect("valid config")
}

fn run(s: &mut BufferSim, refs: &[(u64, bool)]) {
    for &(p, w) in refs {
        s.reference(p, w);
        s.check();
    }
}

fn reads(pages: &[u64]) -> Vec<(u64, bool)> {
    pages.iter().map(|&p| (p, false)).collect()
}

fn log(s: &BufferSim, id: LogId) -> Vec<(u64, u32)> {
    s.logs()[id.0 as usize].iter().collect()
}

#[test]
fn lru_hit_moves_to_mru_and_a_dirty_victim_is_written_back() {
    let mut s = sim(PolicyKind::Lru, 2, 0);
    // R1 W2 R1: [2, 1]; R3 evicts 2 (dirty: a disk write); R2 evicts 1 (clean).
    run(
        &mut s,
        &[(1, false), (2, true), (1, false), (3, false), (2, false)],
    );
    let order: Vec<u64> = s.policy().lru().unwrap().keys().collect();
    assert_eq!(order, vec![3, 2]);
    let c = s.counts();
    assert_eq!(
        (c.references, c.hits, c.misses, c.disk_reads, c.disk_writes),
        (5, 1, 4, 4, 1)
    );
    assert_eq!((c.ext_hits, c.flash_writes), (0, 0));
}

#[test]
fn lru_ext_victims_go_to_the_fifo_and_a_read_back_leaves_it() {
    let mut s = sim(PolicyKind::LruExt, 2, 2);
    // 3 evicts 1 -> flash [1@0]; 4 evicts 2 -> [1@0, 2@1]; 5 evicts 3, flash full: 1 leaves,
    // 3 takes slot 0 -> [2@1, 3@0]. 2 is an extended hit (flash -> [3@0]), evicts 4 -> [3@0,
    // 4@1]. 1 comes from disk, evicts 5, flash full: 3 leaves -> [4@1, 5@0].
    run(&mut s, &reads(&[1, 2, 3, 4, 5, 2, 1]));
    let order: Vec<u64> = s.policy().lru().unwrap().keys().collect();
    assert_eq!(order, vec![2, 1]);
    assert_eq!(log(&s, LogId::FIRST), vec![(4, 1), (5, 0)]);
    let want = Counts {
        references: 7,
        writes: 0,
        hits: 0,
        misses: 7,
        ext_hits: 1,
        disk_reads: 6,
        disk_writes: 0,
        flash_reads: 1,
        flash_writes: 5,
        flash_displaced: 2,
    };
    assert_eq!(s.counts(), want);
}

#[test]
fn lru_ext_writes_dirty_victims_to_disk_and_keeps_only_clean_copies() {
    let mut s = sim(PolicyKind::LruExt, 1, 1);
    // W1; R2 evicts dirty 1 (disk write) to flash; R1 reads it back (clean) and evicts 2;
    // R2 reads 2 back and evicts clean 1: no second disk write.
    run(&mut s, &[(1, true), (2, false), (1, false), (2, false)]);
    let c = s.counts();
    assert_eq!(
        (c.disk_writes, c.flash_writes, c.ext_hits, c.disk_reads),
        (1, 3, 2, 2)
    );
    assert_eq!(s.resident(2), Some(false));
}

#[test]
fn two_q_ext_keeps_a1out_on_flash_and_am_victims_leave() {
    let mut s = sim(PolicyKind::TwoQExt, 3, 2);
    // 1 2 3 -> A1in; 4 and 5 evict 1 and 2 to flash (A1out). 1: extended hit (-> Am), evicts 3
    // to flash [2, 3]. 6 evicts 4, flash full: 2 leaves -> [3, 4]. 3: extended hit (-> Am),
    // evicts 5 -> [4, 5]. 7: |A1in| = 1 = Kin, so Am's LRU (1) leaves, not to flash.
    run(&mut s, &reads(&[1, 2, 3, 4, 5, 1, 6, 3, 7]));
    let q = s.policy().two_q().unwrap();
    assert_eq!(q.a1in().collect::<Vec<_>>(), vec![6, 7]);
    assert_eq!(q.am().collect::<Vec<_>>(), vec![3]);
    assert_eq!(q.a1out().count(), 0, "no ghost queue: A1out is on flash");
    let flash: Vec<u64> = log(&s, LogId::FIRST).iter().map(|e| e.0).collect();
    assert_eq!(flash, vec![4, 5]);
    let c = s.counts();
    assert_eq!(
        (
            c.misses,
            c.ext_hits,
            c.disk_reads,
            c.flash_writes,
            c.flash_displaced
        ),
        (9, 2, 7, 5, 1)
    );
}

#[test]
fn two_q_flash_sends_a1in_victims_to_a1out_and_am_victims_to_amout() {
    let mut s = sim(PolicyKind::TwoQFlash, 3, 5);
    assert_eq!(
        s.policy().log_capacities(),
        &[2, 3],
        "A1out : Amout = 4 : 6"
    );
    // As in the 2q-ext trace up to 7, whose Am victim (1) now goes to Amout; then 1 is an
    // extended hit from Amout (-> Am) and evicts A1in's 6 to A1out, where 4 leaves.
    run(&mut s, &reads(&[1, 2, 3, 4, 5, 1, 6, 3, 7, 1]));
    let q = s.policy().two_q().unwrap();
    assert_eq!(q.a1in().collect::<Vec<_>>(), vec![7]);
    assert_eq!(q.am().collect::<Vec<_>>(), vec![3, 1]);
    let a1out: Vec<u64> = log(&s, LogId::FIRST).iter().map(|e| e.0).collect();
    assert_eq!(a1out, vec![5, 6]);
    assert!(log(&s, LogId::AMOUT).is_empty());
    let c = s.counts();
    assert_eq!(
        (
            c.misses,
            c.ext_hits,
            c.disk_reads,
            c.flash_writes,
            c.flash_displaced
        ),
        (10, 3, 7, 7, 2)
    );
}

#[test]
fn extension_sizes_are_checked() {
    let c = PolicyConfig::new(PolicyKind::Lru, 10, 5);
    assert!(c.validate().unwrap_err().reason.contains("lru-ext"));
    let c = PolicyConfig::new(PolicyKind::LruExt, 0, 5);
    assert!(BufferSim::new(&c).is_err());
    let c = PolicyConfig::new(PolicyKind::TwoQFlash, 3, 10);
    assert_eq!(c.log_capacities(), vec![4, 6]);
    let mut c = PolicyConfig::new(PolicyKind::TwoQExt, 3, 10);
    c.kout = Some(2);
    assert!(c.validate().unwrap_err().reason.contains("Kout"));
    let mut c = PolicyConfig::new(PolicyKind::LruExt, 3, 10);
    c.kin = Some(2);
    assert!(c.validate().unwrap_err().reason.contains("Kin"));
}
