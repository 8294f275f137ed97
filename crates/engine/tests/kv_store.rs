//! The KV store against a `BTreeMap` model, across commits, reopens, compactions and power
//! cuts; limits; corruption of each page type detected; hints reaching the simulated SSD.

use blockdev::{BlockDevice, CrashDevice, DevError, MemDevice};
use engine::kv::{Options, Store, WriteBatch};
use engine::EngineError;
use proptest::prelude::*;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use std::ops::Bound;

mod common;
use common::{all, key, mem, small_opts, value, variant_opts, Model};

#[test]
fn put_get_delete_scan_commit_reopen() {
    let mut s = Store::open(mem(512), small_opts()).unwrap();
    assert_eq!(s.get(b"a").unwrap(), None);
    s.put(b"a", b"1").unwrap();
    s.put(b"b", b"2").unwrap();
    assert_eq!(s.get(b"a").unwrap().as_deref(), Some(&b"1"[..]));
    assert_eq!(s.commit().unwrap(), 1);
    s.delete(b"a").unwrap();
    let mut wb = WriteBatch::new();
    wb.put(b"c", b"3").delete(b"b");
    s.write(wb).unwrap();
    let got = all(&mut s);
    assert_eq!(got.len(), 1);
    s.commit().unwrap();
    let dev = s.close().unwrap();
    let mut s = Store::open(dev, small_opts()).unwrap();
    assert_eq!(s.get(b"a").unwrap(), None);
    assert_eq!(s.get(b"b").unwrap(), None);
    assert_eq!(s.get(b"c").unwrap().as_deref(), Some(&b"3"[..]));
    assert_eq!(s.stat().live_keys, 1);
    assert!(s.check().unwrap().is_empty());
}

#[test]
fn a_blank_device_is_not_a_store_unless_asked_to_create_one() {
    let opts = Options {
        create: false,
        ..small_opts()
    };
    let e = Store::open(mem(64), opts).err().unwrap().to_string();
    assert!(e.contains("not a store"), "{e}");
}

#[test]
fn oversized_keys_and_values_are_refused_with_the_limit() {
    let mut s = Store::open(mem(64), small_opts()).unwrap();
    let e = s.put(&vec![b'k'; 4097], b"v").unwrap_err().to_string();
    assert!(e.contains("key of 4097 bytes") && e.contains("4096"), "{e}");
    let e = s
        .put(b"k", &vec![0; (1 << 20) + 1])
        .unwrap_err()
        .to_string();
    assert!(e.contains("value of 1048577 bytes"), "{e}");
    s.put(&vec![b'k'; 4096], &vec![7; 1 << 20]).unwrap();
    let e = s.commit().unwrap_err().to_string(); // 64 pages: too small
    assert!(e.contains("full"), "{e}");
    let mut s = Store::open(mem(1024), small_opts()).unwrap();
    s.put(&vec![b'k'; 4096], &vec![7; 1 << 20]).unwrap();
    s.put(&vec![b'j'; 4096], b"x").unwrap();
    s.commit().unwrap();
    assert_eq!(s.get(&vec![b'k'; 4096]).unwrap().unwrap().len(), 1 << 20);
    assert!(s.check().unwrap().is_empty());
}

#[test]
fn several_stores_open_at_once_stay_apart() {
    let mut stores: Vec<Store> = (0..3)
        .map(|_| Store::open(mem(256), small_opts()).unwrap())
        .collect();
    for (i, s) in stores.iter_mut().enumerate() {
        for k in 0..50u32 {
            s.put(&key(k), format!("{i}-{k}").as_bytes()).unwrap();
        }
        s.commit().unwrap();
    }
    for (i, s) in stores.iter_mut().enumerate() {
        assert_eq!(
            s.get(&key(7)).unwrap().unwrap(),
            format!("{i}-7").into_bytes()
        );
    }
}

#[derive(Clone, Debug)]
enum Op {
    Put(u32, u16, u8, bool),
    Delete(u32),
    Scan(u32, u32),
    Commit,
    Reopen,
    Compact,
}

fn op() -> impl Strategy<Value = Op> {
    prop_oneof![
        8 => (0..300u32, 0..2000u16, any::<u8>(), prop::bool::weighted(0.05))
            .prop_map(|(k, l, b, big)| Op::Put(k, l, b, big)),
        3 => (0..300u32).prop_map(Op::Delete),
        1 => (0..300u32, 0..300u32).prop_map(|(a, b)| Op::Scan(a, b)),
        2 => Just(Op::Commit),
        1 => Just(Op::Reopen),
        1 => Just(Op::Compact),
    ]
}

/// The keys after `k` (a range BTreeMap takes).
fn open_after(k: &[u8]) -> (Bound<Vec<u8>>, Bound<Vec<u8>>) {
    (Bound::Excluded(k.to_vec()), Bound::Unbounded)
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 64, ..ProptestConfig::default() })]
    #[test]
    fn the_store_behaves_like_a_btreemap(
        ops in prop::collection::vec((0..2usize, op()), 1..300),
        variant in 0..6u64,
    ) {
        // Two stores at once, each with its own model; both in one shape (`variant_opts`).
        let opts = variant_opts(variant);
        let mut stores: Vec<Option<Store>> =
            (0..2).map(|_| Some(Store::open(mem(2048), opts).unwrap())).collect();
        let mut models = [Model::new(), Model::new()];
        let mut committed = [Model::new(), Model::new()];
        for (which, op) in ops {
            let s = stores[which].as_mut().unwrap();
            let m = &mut models[which];
            match op {
                Op::Put(k, len, b, big) => {
                    // Some keys near the 4-KiB limit: nodes then span pages.
                    let mut kk = key(k);
                    if big {
                        kk.resize(4000 + (k as usize % 96), b'x');
                    }
                    let v = vec![b; len as usize];
                    s.put(&kk, &v).unwrap();
                    m.insert(kk, v);
                }
                Op::Delete(k) => {
                    s.delete(&key(k)).unwrap();
                    m.remove(&key(k));
                }
                Op::Scan(a, b) => {
                    let (lo, hi) = (key(a.min(b)), key(a.max(b)));
                    let got: Vec<_> = s
                        .scan((Bound::Included(&lo[..]), Bound::Excluded(&hi[..])))
                        .unwrap()
                        .map(|r| r.unwrap())
                        .collect();
                    let want: Vec<_> = m.range(lo.clone()..hi.clone()).map(|(k, v)| (k.clone(), v.clone())).collect();
                    prop_assert_eq!(&got, &want);
                    // The lending scan sees the same, within the range and up to its limit.
                    let mut lent = Vec::new();
                    let range = (Bound::Included(&lo[..]), Bound::Excluded(&hi[..]));
                    let n = s.scan_each(range, usize::MAX, |k, v| lent.push((k.to_vec(), v.to_vec()))).unwrap();
                    prop_assert_eq!(n, lent.len());
                    prop_assert_eq!(&lent, &want);
                    let limit = (b % 40) as usize;
                    lent.clear();
                    let open = (Bound::Excluded(&lo[..]), Bound::Unbounded);
                    s.scan_each(open, limit, |k, v| lent.push((k.to_vec(), v.to_vec()))).unwrap();
                    let want: Vec<_> = m
                        .range::<Vec<u8>, _>(open_after(&lo))
                        .take(limit)
                        .map(|(k, v)| (k.clone(), v.clone()))
                        .collect();
                    prop_assert_eq!(lent, want);
                }
                Op::Commit => {
                    s.commit().unwrap();
                    committed[which] = m.clone();
                }
                Op::Compact => {
                    s.compact().unwrap();
                    committed[which] = m.clone();
                }
                Op::Reopen => {
                    let dev = stores[which].take().unwrap().into_device();
                    stores[which] = Some(Store::open(dev, opts).unwrap());
                    *m = committed[which].clone();
                }
            }
            let s = stores[which].as_mut().unwrap();
            if let Some((k, v)) = models[which].iter().next() {
                let got = s.get(k).unwrap();
                prop_assert_eq!(got.as_ref(), Some(v));
            }
        }
        for (s, m) in stores.iter_mut().zip(&models) {
            let s = s.as_mut().unwrap();
            prop_assert_eq!(&all(s), m);
            s.flush_wal().unwrap();
            prop_assert_eq!(s.wal_entries(), 0);
            prop_assert!(s.check().unwrap().is_empty());
            prop_assert_eq!(s.stat().live_keys, m.len() as u64);
        }
    }
}

fn is_cut(e: &EngineError) -> bool {
    matches!(e, EngineError::Dev(DevError::PowerCut))
}

/// Run random writes with commits on a device that loses power at the `cut`-th I/O; returns
/// the last acknowledged state and the state the interrupted commit would have made.
fn drive(store: &mut Store, rng: &mut ChaCha8Rng, steps: usize) -> (Model, Model, bool) {
    let mut model = Model::new();
    let mut committed = Model::new();
    for _ in 0..steps {
        let k = key(rng.gen_range(0..60));
        if rng.gen_bool(0.2) {
            model.remove(&k);
            if let Err(e) = store.delete(&k) {
                assert!(is_cut(&e) || store_is_broken(&e), "{e}");
                return (committed, model, true);
            }
        } else {
            let v = value(rng);
            model.insert(k.clone(), v.clone());
            if let Err(e) = store.put(&k, &v) {
                assert!(is_cut(&e) || store_is_broken(&e), "{e}");
                return (committed, model, true);
            }
        }
        if rng.gen_bool(0.15) {
            match store.commit() {
                Ok(_) => committed = model.clone(),
                Err(e) => {
                    assert!(is_cut(&e), "{e}");
                    return (committed, model, true);
                }
            }
        }
    }
    (committed.clone(), committed, false)
}

fn store_is_broken(e: &EngineError) -> bool {
    e.to_string().contains("an earlier write failed")
}

#[test]
fn power_cuts_at_a_thousand_points_lose_no_commit_and_show_nothing_uncommitted() {
    power_cuts(1000);
}

/// The same at any scale: `POWER_CUTS` cuts (default 100 here), e.g.
/// `POWER_CUTS=10000 cargo test --release -p engine --test kv_store power_cuts_at_scale`.
#[test]
fn power_cuts_at_scale_lose_no_commit() {
    let n = std::env::var("POWER_CUTS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(100);
    power_cuts(n);
}

/// `n` power cuts at random I/Os of random writes, commits and compactions, each dropping
/// (every 4th seed) or tearing the unflushed writes; the reopened store holds exactly the
/// last acknowledged commit or the interrupted one (a prefix of the commit order). Seeds cycle
/// through write path `cow`, `wal` with incremental and `wal` with whole-file compaction.
fn power_cuts(n: u32) {
    let mut cuts = 0;
    let mut seed = 0u64;
    while cuts < n {
        seed += 1;
        let mut rng = ChaCha8Rng::seed_from_u64(seed);
        // Start from a store with some committed history (so pages get reused).
        let (dev, h) = CrashDevice::new(MemDevice::new(4096, 1024), seed);
        h.set_tearing(!seed.is_multiple_of(4));
        let opts = Options {
            compact_min_bytes: 8 << 10,
            compact_threshold: 0.4,
            ..variant_opts(seed)
        };
        let mut s = Store::open(Box::new(dev), opts).unwrap();
        h.cut_power_after(rng.gen_range(1..400));
        let (committed, interrupted, was_cut) = drive(&mut s, &mut rng, 150);
        if !was_cut {
            continue;
        }
        cuts += 1;
        drop(s);
        let image = h.durable_image();
        let mut r =
            Store::open(Box::new(image), opts).unwrap_or_else(|e| panic!("seed {seed}: {e}"));
        let got = all(&mut r);
        assert!(
            got == committed || got == interrupted,
            "seed {seed}: recovered {} keys, committed {}, interrupted commit {}",
            got.len(),
            committed.len(),
            interrupted.len()
        );
        if cuts % 10 == 0 {
            let d = r.check().unwrap();
            assert!(d.is_empty(), "seed {seed}: {d:?}");
            // The recovered store takes writes and commits again.
            r.put(b"after", b"crash").unwrap();
            r.commit().unwrap();
            assert!(r.check().unwrap().is_empty(), "seed {seed}");
        }
    }
}

#[test]
fn endless_overwrites_keep_the_footprint_bounded_and_compaction_trims() {
    let opts = Options {
        compact_min_bytes: 32 << 10,
        compact_threshold: 0.25,
        ..small_opts()
    };
    let mut s = Store::open(mem(4096), opts).unwrap();
    for k in 0..200u32 {
        s.put(&key(k), &[1u8; 1000]).unwrap();
    }
    s.commit().unwrap();
    let loaded = s.stat().footprint_pages;
    // Overwrite the odd keys 20 times: the even ones pin the first pages, so only
    // compaction gives that space back.
    for round in 0..20u32 {
        for k in (1..200u32).step_by(2) {
            s.put(&key(k), &[round as u8; 1000]).unwrap();
            if k % 50 == 49 {
                s.commit().unwrap();
            }
        }
        s.commit().unwrap();
        let st = s.stat();
        assert!(
            st.footprint_pages <= loaded * 3 + 32,
            "round {round}: {st:?}"
        );
    }
    let st = s.stat();
    assert!(st.generation > 0, "compaction ran: {st:?}");
    let got = all(&mut s);
    assert_eq!(got.len(), 200);
    assert_eq!(got[&key(3)], vec![19u8; 1000]);
    assert_eq!(got[&key(4)], vec![1u8; 1000]);
    assert!(s.check().unwrap().is_empty());
    // Reopened, the compacted store holds the same.
    let mut s = Store::open(s.into_device(), opts).unwrap();
    assert_eq!(all(&mut s), got);
}

/// Compaction's freed pages are trimmed later, only those still free: with a delay no live
/// page is ever trimmed (the device zeroes trimmed pages, so `check` and every read would
/// see it), fewer pages are trimmed than at once, and `close` trims what is still waiting.
#[test]
fn deferred_trims_skip_reused_pages_and_never_hit_live_ones() {
    let run = |delay: u64| {
        let opts = Options {
            compact_min_bytes: 32 << 10,
            compact_threshold: 0.25,
            trim_after_commits: delay,
            ..small_opts()
        };
        let pages = std::rc::Rc::new(std::cell::Cell::new(0));
        let dev = Recorder {
            inner: mem(4096),
            seen: Default::default(),
            trimmed: pages.clone(),
        };
        let mut s = Store::open(Box::new(dev), opts).unwrap();
        let mut model = Model::new();
        for round in 0..12u32 {
            for k in 0..200u32 {
                if round == 0 || k % 2 == 1 {
                    let v = vec![round as u8; 900 + (k as usize % 7) * 30];
                    s.put(&key(k), &v).unwrap();
                    model.insert(key(k), v);
                }
                if k % 40 == 39 {
                    s.commit().unwrap();
                    assert!(s.check().unwrap().is_empty(), "delay {delay} round {round}");
                }
            }
        }
        assert_eq!(all(&mut s), model);
        let before_close = pages.get();
        let dev = s.close().unwrap();
        let after_close = pages.get();
        let mut s = Store::open(dev, opts).unwrap();
        assert_eq!(all(&mut s), model, "delay {delay}");
        assert!(s.check().unwrap().is_empty());
        (before_close, after_close)
    };
    let (now, _) = run(0);
    let (later, later_closed) = run(8);
    let (never, never_closed) = run(1_000_000);
    assert!(now > 0, "compaction trimmed: {now}");
    assert!(later < now, "a delay skips reused pages: {later} vs {now}");
    assert!(later_closed >= later);
    assert_eq!(never, 0, "nothing is due before close");
    assert!(never_closed > 0, "close trims what waits and is still free");
}

/// Records the hint of every write by the page kind it carries, and counts the pages
/// trimmed, then passes each call on.
struct Recorder {
    inner: Box<dyn BlockDevice>,
    seen: std::rc::Rc<std::cell::RefCell<Vec<(u8, u16)>>>,
    trimmed: std::rc::Rc<std::cell::Cell<u64>>,
}

impl BlockDevice for Recorder {
    fn page_bytes(&self) -> usize {
        self.inner.page_bytes()
    }
    fn capacity_pages(&self) -> u64 {
        self.inner.capacity_pages()
    }
    fn read(&mut self, page: u64, buf: &mut [u8]) -> Result<(), DevError> {
        self.inner.read(page, buf)
    }
    fn write(&mut self, page: u64, buf: &[u8], hint: blockdev::WriteHint) -> Result<(), DevError> {
        for p in buf.chunks(self.inner.page_bytes()) {
            self.seen.borrow_mut().push((p[4], hint.stream));
        }
        self.inner.write(page, buf, hint)
    }
    fn submit(&mut self, batch: &mut [blockdev::Io<'_>]) -> Result<(), DevError> {
        for io in batch.iter() {
            if let blockdev::Io::Write { buf, hint, .. } = io {
                for p in buf.chunks(self.inner.page_bytes()) {
                    self.seen.borrow_mut().push((p[4], hint.stream));
                }
            }
        }
        self.inner.submit(batch)
    }
    fn trim(&mut self, page: u64, pages: u64) -> Result<(), DevError> {
        self.trimmed.set(self.trimmed.get() + pages);
        self.inner.trim(page, pages)
    }
    fn flush(&mut self) -> Result<(), DevError> {
        self.inner.flush()
    }
    fn now_ns(&self) -> u64 {
        self.inner.now_ns()
    }
    fn clock_kind(&self) -> blockdev::ClockKind {
        self.inner.clock_kind()
    }
    fn stats(&self) -> blockdev::DevStats {
        self.inner.stats()
    }
}

#[test]
fn every_write_carries_its_data_types_stream() {
    use engine::kv::{DataType, NamedPolicy};
    for policy in NamedPolicy::ALL {
        let seen = std::rc::Rc::new(std::cell::RefCell::new(Vec::new()));
        let dev = Recorder {
            inner: Box::new(MemDevice::new(4096, 16 << 10)),
            seen: seen.clone(),
            trimmed: Default::default(),
        };
        let opts = Options {
            streams: policy,
            ..small_opts()
        };
        let mut s = Store::open(Box::new(dev), opts).unwrap();
        for k in 0..500u32 {
            s.put(&key(k), &[3; 700]).unwrap();
            if k % 100 == 99 {
                s.commit().unwrap();
            }
        }
        let host_pages = s.into_device().stats().pages_written;
        let seen = seen.borrow();
        assert_eq!(seen.len() as u64, host_pages);
        let kinds = [
            (0x10, DataType::Superblock),
            (0x11, DataType::Header),
            (0x12, DataType::Index),
            (0x13, DataType::Data),
        ];
        for (kind, t) in kinds {
            let streams: std::collections::BTreeSet<u16> =
                seen.iter().filter(|w| w.0 == kind).map(|w| w.1).collect();
            assert_eq!(
                streams.into_iter().collect::<Vec<_>>(),
                vec![policy.stream(t)],
                "{policy:?} {t:?}"
            );
        }
    }
}

#[test]
fn a_power_cut_anywhere_in_a_compaction_loses_nothing() {
    let mut cuts = 0;
    for seed in 0..300u64 {
        let opts = variant_opts(seed);
        let (dev, h) = CrashDevice::new(MemDevice::new(4096, 1024), seed);
        let mut s = Store::open(Box::new(dev), opts).unwrap();
        let mut rng = ChaCha8Rng::seed_from_u64(seed);
        let mut model = Model::new();
        for round in 0..4 {
            for k in 0..80u32 {
                if k % 4 == round || round == 0 {
                    let v = value(&mut rng);
                    s.put(&key(k), &v).unwrap();
                    model.insert(key(k), v);
                }
            }
            s.commit().unwrap();
        }
        h.cut_power_after(rng.gen_range(1..16));
        match s.compact() {
            Ok(()) => continue,
            Err(e) => assert!(is_cut(&e), "{e}"),
        }
        cuts += 1;
        drop(s);
        let mut r = Store::open(Box::new(h.durable_image()), opts)
            .unwrap_or_else(|e| panic!("seed {seed}: {e}"));
        assert_eq!(all(&mut r), model, "seed {seed}");
        assert!(r.check().unwrap().is_empty(), "seed {seed}");
    }
    assert!(cuts > 200, "{cuts} cuts fell inside a compaction");
}

fn pass_opts() -> Options {
    Options {
        compact_min_bytes: 8 << 10,
        compact_threshold: 0.3,
        compact_batch_bytes: 6 << 10,
        ..small_opts()
    }
}

/// A store of 120 keys whose first half was overwritten (so half the data bytes are stale).
fn stale_store(dev: Box<dyn BlockDevice>, rng: &mut ChaCha8Rng) -> (Store, Model) {
    let mut s = Store::open(
        dev,
        Options {
            compact_threshold: 1.0,
            ..pass_opts()
        },
    )
    .unwrap();
    let mut model = Model::new();
    for round in 0..3 {
        for k in 0..120u32 {
            if round == 0 || k % 2 == 0 {
                let v = vec![rng.gen(); rng.gen_range(100..600)];
                s.put(&key(k), &v).unwrap();
                model.insert(key(k), v);
            }
        }
        s.commit().unwrap();
    }
    (Store::open(s.into_device(), pass_opts()).unwrap(), model)
}

/// Compaction is cut into batches that ride on commits: between two reads at most one batch
/// runs (counted in batches and in data pages written, never in time), every read in between
/// sees the right value, and a pass spans several commits yet ends.
#[test]
fn a_reader_interleaved_with_compaction_waits_at_most_one_batch() {
    let mut rng = ChaCha8Rng::seed_from_u64(7);
    let (mut s, mut model) = stale_store(mem(2048), &mut rng);
    let room = 4096 - 32 - 4 - 16; // data page payload less its head and a document head
    let (mut passes, mut batches_in_pass, mut longest_pass) = (0, 0, 0);
    for i in 0..400u32 {
        let before = s.stat();
        let k = key(rng.gen_range(0..120));
        let v = vec![i as u8; rng.gen_range(100..600)];
        s.put(&k, &v).unwrap();
        model.insert(k, v);
        s.commit().unwrap();
        let after = s.stat();
        let batches = after.compaction_batches - before.compaction_batches;
        assert!(batches <= 1, "commit {i} ran {batches} batches");
        // One batch: at most compact_batch_bytes (plus the page it stops in) of copies, and
        // the commit's own document.
        let data_pages = after.pages_written.data - before.pages_written.data;
        let bound = (pass_opts().compact_batch_bytes as usize + 2 * room + 700) / room + 2;
        assert!(
            data_pages as usize <= bound,
            "commit {i}: {data_pages} data pages"
        );
        batches_in_pass += batches;
        if after.generation > before.generation {
            passes += 1;
            longest_pass = longest_pass.max(batches_in_pass);
            batches_in_pass = 0;
        }
        // The reader between two commits.
        for _ in 0..5 {
            let k = key(rng.gen_range(0..120));
            assert_eq!(
                s.get(&k).unwrap().as_ref(),
                model.get(&k),
                "after commit {i}"
            );
        }
    }
    assert!(passes >= 1, "a pass ended");
    assert!(longest_pass >= 3, "a pass spanned {longest_pass} batches");
    assert_eq!(all(&mut s), model);
    assert!(s.check().unwrap().is_empty());
    // compact_step: one batch per call, reads in between.
    let mut steps = 0;
    while {
        let b = s.stat().compaction_batches;
        let more = s.compact_step().unwrap();
        assert_eq!(s.stat().compaction_batches - b, 1);
        steps += 1;
        assert_eq!(all(&mut s), model);
        more
    } {}
    assert!(steps >= 1);
}

/// Power cut at random I/Os while a compaction pass is under way, its batches interleaved
/// with the user's commits and explicit steps (drop, keep or tear of unsynced pages): the
/// store recovers to the last commit or the interrupted one, `check` is clean, and it takes
/// writes and finishes compacting afterwards.
#[test]
fn power_cuts_during_an_incremental_compaction_lose_no_commit() {
    let mut cuts = 0;
    let mut seed = 0u64;
    while cuts < 1000 {
        seed += 1;
        assert!(seed < 20_000, "only {cuts} cuts fell inside a pass");
        let mut rng = ChaCha8Rng::seed_from_u64(seed);
        let (dev, h) = CrashDevice::new(MemDevice::new(4096, 1024), seed);
        h.set_tearing(!seed.is_multiple_of(3));
        let (mut s, mut model) = stale_store(Box::new(dev), &mut rng);
        assert!(
            s.compact_step().unwrap(),
            "seed {seed}: the pass takes several batches"
        );
        let mut committed = model.clone();
        h.cut_power_after(rng.gen_range(1..80));
        let mut in_pass = false;
        let mut r = Ok(());
        for i in 0..200u32 {
            in_pass = s.stat().compacting;
            let k = key(rng.gen_range(0..120));
            let v = vec![i as u8; rng.gen_range(50..900)];
            s.put(&k, &v).unwrap();
            model.insert(k, v);
            let step = match rng.gen_range(0..3) {
                0 => s.compact_step().map(|_| ()),
                1 => s.commit().map(|_| ()),
                _ => Ok(()),
            };
            if step.is_err() {
                r = step;
                break;
            }
            if s.stat().uncommitted_ops == 0 {
                committed = model.clone();
            }
        }
        let Err(e) = r else { continue };
        assert!(is_cut(&e), "seed {seed}: {e}");
        if !in_pass {
            continue;
        }
        cuts += 1;
        drop(s);
        let mut r = Store::open(Box::new(h.durable_image()), pass_opts())
            .unwrap_or_else(|e| panic!("seed {seed}: {e}"));
        let got = all(&mut r);
        assert!(got == committed || got == model, "seed {seed}");
        if cuts % 20 == 0 {
            assert!(r.check().unwrap().is_empty(), "seed {seed}");
            r.put(b"after", b"crash").unwrap();
            r.compact().unwrap();
            assert!(r.check().unwrap().is_empty(), "seed {seed}");
        }
    }
}

/// A device too full for even one page's copies: the pass is given up, `compact` returns,
/// nothing is lost, and the store keeps taking writes.
#[test]
fn a_compaction_without_room_gives_up_and_loses_nothing() {
    let mut s = Store::open(mem(80), pass_opts()).unwrap();
    let mut model = Model::new();
    for round in 0..2u8 {
        for k in 0..20u32 {
            if round == 0 || k % 2 == 0 {
                let v = vec![round; 1500];
                s.put(&key(k), &v).unwrap();
                model.insert(key(k), v);
            }
        }
        s.commit().unwrap();
    }
    let generation = s.stat().generation;
    s.compact().unwrap();
    assert_eq!(s.stat().generation, generation, "no pass ended");
    assert!(!s.stat().compacting);
    assert_eq!(all(&mut s), model);
    s.put(b"more", b"x").unwrap();
    s.commit().unwrap();
    assert!(s.check().unwrap().is_empty());
}

/// A store on a small device (about 500 pages, as one of `reproduce multistream`'s 32
/// partitions at 64 MiB) with a quarter of it live, under endless random updates with a commit
/// every 16: compaction keeps up (issue 11: bounded under endless updates), batch sized to the
/// store rather than a fixed MiB that would be half the device.
#[test]
fn a_small_store_a_quarter_live_takes_endless_random_updates() {
    const PAGES: u64 = 498;
    let opts = Options {
        cache_pages: 256,
        compact_threshold: 0.3,
        compact_min_bytes: PAGES * 4096 / 20,
        ..Options::default()
    };
    // Seeds that ran out of space (fragmented free pages) before commits could cut their data
    // into several runs.
    for seed in [1u64, 3, 5] {
        endless_random_updates(PAGES, opts, seed);
    }
}

fn endless_random_updates(pages: u64, opts: Options, seed: u64) {
    const VALUE: usize = 1024;
    let mut s = Store::open(mem(pages), opts).unwrap();
    let keys = (pages * 4096 / 4 / (VALUE as u64 + 16 + 32)) as u32;
    let mut model = Model::new();
    for k in 0..keys {
        s.put(&key(k), &[0u8; VALUE]).unwrap();
        model.insert(key(k), vec![0u8; VALUE]);
        if k % 16 == 15 {
            s.commit().unwrap();
        }
    }
    s.commit().unwrap();
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    // 20 device-fulls of updated documents.
    let updates = 20 * pages * 4096 / VALUE as u64;
    for i in 0..updates {
        let k = key(rng.gen_range(0..keys));
        let v = vec![i as u8; VALUE];
        s.put(&k, &v).unwrap();
        model.insert(k, v);
        if i % 16 == 15 {
            if let Err(e) = s.commit() {
                panic!("seed {seed}, update {i} of {updates}: {e}; {:?}", s.stat());
            }
        }
    }
    s.commit().unwrap();
    let st = s.stat();
    assert!(st.generation > 10, "compaction passes ran: {st:?}");
    // Live data is a quarter of the device; with 30 % stale allowed, data in use stays near a
    // third of it.
    assert!(st.pages_in_use.data <= pages / 2, "{st:?}");
    assert_eq!(all(&mut s), model);
    assert!(s.check().unwrap().is_empty());
    let mut s = Store::open(s.into_device(), opts).unwrap();
    assert_eq!(all(&mut s), model);
}
