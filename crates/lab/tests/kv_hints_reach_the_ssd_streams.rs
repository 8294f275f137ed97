//! Each data type's writes arrive on its own FTL stream of the simulated SSD: the store runs on
//! `blockdev::SimDevice`, a pass-through wrapper counts the pages of each type (by the page
//! kind byte every store page carries), and the SSD's per-stream host page counters
//! (`ssd::Ssd::host_pages_written_by_stream`) must equal the pages of the types the policy maps
//! to each stream — for every policy, through commits, overwrites and a compaction.

use blockdev::{BlockDevice, ClockKind, DevError, DevStats, Io, SimDevice, WriteHint};
use engine::kv::{Options, Store};
use policy::streams::{DataType, NamedPolicy};
use std::cell::RefCell;
use std::rc::Rc;

/// Byte 4 of every store page: its kind (superblock, header, index node, document page).
const KINDS: [(u8, DataType); 4] = [
    (0x10, DataType::Superblock),
    (0x11, DataType::Header),
    (0x12, DataType::Index),
    (0x13, DataType::Data),
];

/// The simulated SSD behind a shared handle, counting written pages per kind byte.
struct Counting {
    dev: Rc<RefCell<SimDevice>>,
    pages_by_kind: Rc<RefCell<[u64; 256]>>,
}

impl Counting {
    fn count(&self, buf: &[u8]) {
        let pb = self.dev.borrow().page_bytes();
        let mut by_kind = self.pages_by_kind.borrow_mut();
        for p in buf.chunks(pb) {
            by_kind[p[4] as usize] += 1;
        }
    }
}

impl BlockDevice for Counting {
    fn page_bytes(&self) -> usize {
        self.dev.borrow().page_bytes()
    }
    fn capacity_pages(&self) -> u64 {
        self.dev.borrow().capacity_pages()
    }
    fn read(&mut self, page: u64, buf: &mut [u8]) -> Result<(), DevError> {
        self.dev.borrow_mut().read(page, buf)
    }
    fn write(&mut self, page: u64, buf: &[u8], hint: WriteHint) -> Result<(), DevError> {
        self.count(buf);
        self.dev.borrow_mut().write(page, buf, hint)
    }
    fn submit(&mut self, batch: &mut [Io<'_>]) -> Result<(), DevError> {
        for io in batch.iter() {
            if let Io::Write { buf, .. } = io {
                self.count(buf);
            }
        }
        self.dev.borrow_mut().submit(batch)
    }
    fn trim(&mut self, page: u64, pages: u64) -> Result<(), DevError> {
        self.dev.borrow_mut().trim(page, pages)
    }
    fn flush(&mut self) -> Result<(), DevError> {
        self.dev.borrow_mut().flush()
    }
    fn now_ns(&self) -> u64 {
        self.dev.borrow().now_ns()
    }
    fn clock_kind(&self) -> ClockKind {
        self.dev.borrow().clock_kind()
    }
    fn stats(&self) -> DevStats {
        self.dev.borrow().stats()
    }
}

fn sim(streams: u16) -> SimDevice {
    let mut cfg = ssd::SsdConfig::preset("tlc-nvme-2024").unwrap();
    cfg.geometry.page_bytes = 4096;
    cfg.ftl.streams = streams;
    let bytes = cfg.min_logical_bytes().unwrap().max(64 << 20);
    SimDevice::new(cfg.with_logical_capacity(bytes).unwrap()).unwrap()
}

#[test]
fn each_data_types_writes_arrive_on_its_own_ftl_stream() {
    for policy in NamedPolicy::ALL {
        let dev = Rc::new(RefCell::new(sim(policy.streams())));
        let pages_by_kind = Rc::new(RefCell::new([0u64; 256]));
        let counting = Counting {
            dev: dev.clone(),
            pages_by_kind: pages_by_kind.clone(),
        };
        let opts = Options {
            streams: policy,
            cache_pages: 16,
            compact_min_bytes: 16 << 10,
            ..Options::default()
        };
        let mut s = Store::open(Box::new(counting), opts).unwrap();
        for round in 0..3u32 {
            for k in 0..400u32 {
                let v = vec![(k + round) as u8; 300 + (k as usize % 7) * 100];
                s.put(format!("key{k:05}").as_bytes(), &v).unwrap();
                if k % 50 == 49 {
                    s.commit().unwrap();
                }
            }
        }
        s.compact().unwrap();
        s.commit().unwrap();
        drop(s.close().unwrap());

        let by_kind = *pages_by_kind.borrow();
        let dev = dev.borrow();
        let by_stream = dev.ssd().host_pages_written_by_stream();
        assert_eq!(by_stream.len(), policy.streams() as usize, "{policy:?}");
        let mut expected = vec![0u64; by_stream.len()];
        for (kind, t) in KINDS {
            assert!(
                by_kind[kind as usize] > 0,
                "{policy:?}: no {t:?} page written"
            );
            expected[policy.stream(t) as usize] += by_kind[kind as usize];
        }
        let typed: u64 = KINDS.iter().map(|&(k, _)| by_kind[k as usize]).sum();
        assert_eq!(
            typed,
            by_kind.iter().sum::<u64>(),
            "{policy:?}: a page of unknown kind was written"
        );
        assert_eq!(by_stream, &expected[..], "{policy:?}: pages per stream");
        assert_eq!(
            by_stream.iter().sum::<u64>(),
            dev.ssd().stats().host_pages_written,
            "{policy:?}"
        );
        if policy == NamedPolicy::PerType {
            // One stream per type, nothing on the default stream.
            assert_eq!(by_stream[0], 0);
            for (kind, t) in KINDS {
                assert_eq!(
                    by_stream[NamedPolicy::PerType.stream(t) as usize],
                    by_kind[kind as usize],
                    "{t:?}"
                );
            }
        }
    }
}

/// On a real file the store's typed writes carry their write life: after a commit the file
/// (inode) holds the life of one of the four types, read back through a second handle — or
/// the kernel refused write-life hints, which the device reports cleanly.
#[test]
fn on_a_real_file_typed_writes_carry_their_write_life() {
    use blockdev::{FileDevice, FileOptions, WriteLife};
    let dir = tempfile::tempdir_in(".").expect("temp dir in the current directory");
    let path = dir.path().join("kv.img");
    let fopts = FileOptions {
        buffered: true,
        ..FileOptions::default()
    };
    let dev = FileDevice::create(&path, 4096, 4096, fopts).unwrap();
    let probe_opts = FileOptions {
        lock: blockdev::Lock::Unlocked,
        ..fopts
    };
    let probe = FileDevice::open(&path, probe_opts).unwrap();
    let opts = Options {
        cache_pages: 16,
        ..Options::default()
    };
    let mut s = Store::open(Box::new(dev), opts).unwrap();
    for k in 0..100u32 {
        s.put(format!("key{k:05}").as_bytes(), &[5; 500]).unwrap();
    }
    s.commit().unwrap();
    match probe.write_life() {
        Ok(life) => {
            let lives: Vec<WriteLife> = DataType::ALL
                .iter()
                .map(|&t| blockdev::write_life(t))
                .collect();
            // A kernel without hints reads back NotSet; with them, a type's life.
            assert!(
                lives.contains(&life) || probe.set_write_life(WriteLife::Short).is_err(),
                "{life:?}"
            );
        }
        Err(e) => assert!(e.to_string().contains("F_GET_RW_HINT"), "{e}"),
    }
    drop(s.close().unwrap());
}
