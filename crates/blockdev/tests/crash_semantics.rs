//! Crash semantics of `CrashDevice` over random workloads: flushed data always survive a cut;
//! each unflushed page survives whole, vanishes (old bytes), or is torn at a sector boundary
//! (a prefix of the new bytes over the old); reads before the cut see every write; the
//! wrapper passes timing through to the device it wraps (here the simulated SSD).

use blockdev::{BlockDevice, CrashDevice, DevError, MemDevice, SimDevice, WriteHint};
use proptest::prelude::*;

const PB: usize = 4096;
const PAGES: u64 = 32;

#[derive(Clone, Debug)]
enum Op {
    Write(u64, u8),
    Trim(u64),
    Flush,
}

fn ops() -> impl Strategy<Value = Vec<Op>> {
    proptest::collection::vec(
        prop_oneof![
            6 => (0..PAGES, 1u8..=255).prop_map(|(p, v)| Op::Write(p, v)),
            1 => (0..PAGES).prop_map(Op::Trim),
            2 => Just(Op::Flush),
        ],
        1..80,
    )
}

/// Whether `got` is `old` with a whole-sector prefix (possibly empty or all) of `new`.
fn is_prefix_of_new_over_old(got: &[u8], old: &[u8], new: &[u8]) -> bool {
    (0..=PB / 512).any(|s| got[..s * 512] == new[..s * 512] && got[s * 512..] == old[s * 512..])
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    #[test]
    fn flushed_data_survive_and_unflushed_pages_are_old_new_or_torn(
        ops in ops(), cut_at in 1u64..100, seed in any::<u64>(),
    ) {
        let (mut dev, h) = CrashDevice::new(MemDevice::new(PB, PAGES), seed);
        // Model: durable bytes (as of the last flush) and the volatile bytes.
        let mut durable = vec![vec![0u8; PB]; PAGES as usize];
        let mut volatile = durable.clone();
        h.cut_power_after(cut_at);
        for op in &ops {
            let r = match op {
                Op::Write(p, v) => dev.write(*p, &vec![*v; PB], WriteHint::NONE),
                Op::Trim(p) => dev.trim(*p, 1),
                Op::Flush => dev.flush(),
            };
            match r {
                Err(DevError::PowerCut) => break,
                Err(e) => return Err(TestCaseError::fail(e.to_string())),
                Ok(()) => {}
            }
            match op {
                Op::Write(p, v) => volatile[*p as usize] = vec![*v; PB],
                Op::Trim(p) => volatile[*p as usize] = vec![0; PB],
                Op::Flush => durable = volatile.clone(),
            }
            let mut buf = vec![0u8; PB];
            let p = match op { Op::Write(p, _) | Op::Trim(p) => *p, Op::Flush => 0 };
            if !h.is_cut() && dev.read(p, &mut buf).is_ok() {
                prop_assert!(buf == volatile[p as usize], "read sees the last write");
            }
        }
        let cut_happened = h.is_cut();
        let mut img = dev.into_durable();
        let mut got = vec![0u8; PB];
        for p in 0..PAGES as usize {
            img.read(p as u64, &mut got).unwrap();
            if durable[p] == volatile[p] {
                prop_assert!(got == durable[p], "page {} was flushed (cut: {})", p, cut_happened);
            } else {
                prop_assert!(
                    is_prefix_of_new_over_old(&got, &durable[p], &volatile[p]),
                    "page {} is old, new or torn", p
                );
            }
        }
    }
}

#[test]
fn the_wrapper_runs_on_the_simulated_ssd_with_its_clock() {
    let mut cfg = ssd::SsdConfig::preset("mlc-sata-2010").expect("preset");
    cfg.geometry.channels = 2;
    cfg.geometry.dies_per_channel = 1;
    cfg.geometry.blocks_per_plane = 24;
    cfg.geometry.pages_per_block = 16;
    cfg.ftl.gc_free_blocks_min = 1;
    cfg.ftl.op = 0.5;
    let sim = SimDevice::new(cfg).expect("small SSD");
    let (mut dev, h) = CrashDevice::new(sim, 9);
    assert_eq!(dev.clock_kind(), blockdev::ClockKind::Simulated);
    let t0 = dev.now_ns();
    dev.write(3, &vec![1u8; PB], WriteHint::NONE).unwrap();
    dev.flush().unwrap();
    dev.write(4, &vec![2u8; PB], WriteHint::NONE).unwrap();
    assert!(dev.now_ns() > t0, "writes take simulated time");
    assert_eq!(h.pending_pages(), 1);
    h.cut_power_after(1);
    let mut buf = vec![0u8; PB];
    assert!(matches!(dev.read(3, &mut buf), Err(DevError::PowerCut)));
    let mut img = dev.into_durable();
    img.read(3, &mut buf).unwrap();
    assert!(buf.iter().all(|&b| b == 1), "flushed page survives");
    // Recover and crash again from the durable image.
    let (mut again, _h) = CrashDevice::from_image(img, 10);
    again.read(3, &mut buf).unwrap();
    assert!(buf.iter().all(|&b| b == 1));
}
