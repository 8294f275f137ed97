//! Every device agrees with the RAM reference on the same random mix of single I/Os,
//! batches (bigger than an io_uring wave), trims and flushes: a read returns the last write,
//! zeros where never written or trimmed. Also: O_DIRECT on tmpfs is refused with a clear
//! error naming the path and the fix.

use blockdev::{
    BlockDevice, FileDevice, FileOptions, HddConfig, HddModel, Io, MemDevice, SimDevice, WriteHint,
};
use proptest::prelude::*;

const PB: usize = 4096;
const PAGES: u64 = 256;

#[derive(Clone, Debug)]
enum Op {
    Write(u64, u8, u8),
    Read(u64, u8),
    Batch(Vec<(u64, bool, u8)>),
    Trim(u64, u8),
    Flush,
}

fn ops() -> impl Strategy<Value = Vec<Op>> {
    let page = 0..PAGES;
    proptest::collection::vec(
        prop_oneof![
            4 => (page.clone(), 1u8..4, any::<u8>()).prop_map(|(p, n, v)| Op::Write(p, n, v)),
            3 => (page.clone(), 1u8..4).prop_map(|(p, n)| Op::Read(p, n)),
            2 => proptest::collection::vec((page.clone(), any::<bool>(), any::<u8>()), 1..80).prop_map(Op::Batch),
            1 => (page, 1u8..3).prop_map(|(p, n)| Op::Trim(p, n)),
            1 => Just(Op::Flush),
        ],
        1..60,
    )
}

fn sim() -> SimDevice {
    let mut cfg = ssd::SsdConfig::preset("mlc-sata-2010").unwrap();
    cfg.geometry.channels = 2;
    cfg.geometry.dies_per_channel = 1;
    cfg.geometry.blocks_per_plane = 12;
    cfg.geometry.pages_per_block = 16;
    cfg.ftl.gc_free_blocks_min = 1;
    cfg.ftl.op = 0.5;
    cfg.ftl.check_invariants = true;
    SimDevice::new(cfg).unwrap()
}

fn file(dir: &std::path::Path) -> FileDevice {
    let opts = FileOptions {
        buffered: false,
        queue_depth: 16,
    };
    FileDevice::create(&dir.join("dev"), PAGES, PB, opts).unwrap()
}

/// Run `ops` on `dev` and the reference; every read must match.
fn check(dev: &mut dyn BlockDevice, ops: &[Op]) -> Result<(), TestCaseError> {
    let cap = dev.capacity_pages().min(PAGES);
    let mut reference = MemDevice::new(PB, cap);
    let clip = |p: u64, n: u8| (p % cap, (n as u64).min(cap - p % cap) as usize);
    for op in ops {
        match op {
            Op::Write(p, n, v) => {
                let (p, n) = clip(*p, *n);
                let buf = vec![*v; n * PB];
                dev.write(p, &buf, WriteHint::NONE).unwrap();
                reference.write(p, &buf, WriteHint::NONE).unwrap();
            }
            Op::Read(p, n) => {
                let (p, n) = clip(*p, *n);
                let (mut a, mut b) = (vec![0u8; n * PB], vec![0u8; n * PB]);
                dev.read(p, &mut a).unwrap();
                reference.read(p, &mut b).unwrap();
                prop_assert!(a == b, "read of {} pages at {}", n, p);
            }
            Op::Batch(ios) => {
                // Writes first (distinct pages), then reads of every page touched.
                let mut pages: Vec<u64> = ios.iter().map(|(p, _, _)| p % cap).collect();
                pages.sort_unstable();
                pages.dedup();
                let bufs: Vec<Vec<u8>> =
                    pages.iter().map(|&p| vec![(p as u8) ^ 0x5a; PB]).collect();
                let mut batch: Vec<Io> = pages
                    .iter()
                    .zip(&bufs)
                    .map(|(&page, buf)| Io::Write {
                        page,
                        buf,
                        hint: WriteHint::NONE,
                    })
                    .collect();
                dev.submit(&mut batch).unwrap();
                for (&p, b) in pages.iter().zip(&bufs) {
                    reference.write(p, b, WriteHint::NONE).unwrap();
                }
                let mut outs: Vec<Vec<u8>> = pages.iter().map(|_| vec![0u8; PB]).collect();
                let mut reads: Vec<Io> = pages
                    .iter()
                    .zip(outs.iter_mut())
                    .map(|(&page, buf)| Io::Read { page, buf })
                    .collect();
                dev.submit(&mut reads).unwrap();
                for (&p, got) in pages.iter().zip(&outs) {
                    let mut want = vec![0u8; PB];
                    reference.read(p, &mut want).unwrap();
                    prop_assert!(*got == want, "batched read of page {}", p);
                }
            }
            Op::Trim(p, n) => {
                let (p, n) = clip(*p, *n);
                dev.trim(p, n as u64).unwrap();
                reference.trim(p, n as u64).unwrap();
            }
            Op::Flush => dev.flush().unwrap(),
        }
    }
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(24))]

    #[test]
    fn sim_device_matches_the_reference(ops in ops()) {
        check(&mut sim(), &ops)?;
    }

    #[test]
    fn hdd_model_matches_the_reference(ops in ops()) {
        check(&mut HddModel::new(HddConfig::default(), PAGES, PB).unwrap(), &ops)?;
    }

    #[test]
    fn file_device_matches_the_reference(ops in ops()) {
        let dir = tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR")).unwrap();
        check(&mut file(dir.path()), &ops)?;
    }
}

#[test]
fn a_file_device_reopens_with_its_data() {
    let dir = tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR")).unwrap();
    let mut d = file(dir.path());
    d.write(7, &vec![9u8; 2 * PB], WriteHint::NONE).unwrap();
    d.flush().unwrap();
    drop(d);
    let mut d = FileDevice::open(&dir.path().join("dev"), PB, FileOptions::default()).unwrap();
    assert_eq!(d.capacity_pages(), PAGES);
    let mut buf = vec![0u8; PB];
    d.read(8, &mut buf).unwrap();
    assert!(buf.iter().all(|&b| b == 9));
    assert!(d.read(PAGES, &mut buf).is_err(), "out of range");
}

#[test]
fn o_direct_on_tmpfs_is_refused_with_the_fix() {
    let shm = std::path::Path::new("/dev/shm");
    if !shm.is_dir() {
        eprintln!("skipping: /dev/shm does not exist");
        return;
    }
    let path = shm.join(format!("flashlab-odirect-{}", std::process::id()));
    let r = FileDevice::create(&path, 16, PB, FileOptions::default());
    let _ = std::fs::remove_file(&path);
    match r {
        Err(e) => {
            let msg = e.to_string();
            assert!(
                msg.contains("flashlab-odirect") && msg.contains("buffered"),
                "{msg}"
            );
        }
        Ok(_) => eprintln!("note: this kernel's tmpfs accepts O_DIRECT; nothing to check"),
    }
    // The explicit opt-in works there.
    let mut d = FileDevice::create(
        &path,
        16,
        PB,
        FileOptions {
            buffered: true,
            queue_depth: 8,
        },
    )
    .unwrap();
    d.write(1, &vec![1u8; PB], WriteHint::NONE).unwrap();
    let _ = std::fs::remove_file(&path);
}
