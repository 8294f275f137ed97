//! `data = "none"`: a device that keeps no page data runs every scheme through GC and merges
//! with the invariant verifier on (which tells programmed pages from the write pointers and a
//! bit per skipped page instead of tags), reaches the same counters as a device with tags,
//! and refuses reads that would return data.

use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use ssd::{DataMode, FtlKind, Lpn, ReadPage, SimTime, Ssd, SsdConfig, SsdError, StreamId};

mod common;

fn config(kind: FtlKind, data: DataMode) -> SsdConfig {
    let mut cfg = common::tiny(kind);
    cfg.ftl.data = data;
    cfg
}

/// Random writes, trims and reads; returns the device's counters.
fn churn(kind: FtlKind, data: DataMode) -> ssd::Stats {
    let mut ssd = Ssd::new(config(kind, data)).unwrap();
    let n = ssd.logical_pages();
    let mut rng = ChaCha8Rng::seed_from_u64(3);
    let mut now = SimTime::ZERO;
    for i in 0..6 * n {
        let l = rng.gen_range(0..n);
        let pages = rng.gen_range(1..4).min((n - l) as u32);
        now = match i % 7 {
            0 => ssd.trim(Lpn(l), pages, now).unwrap(),
            1 => ssd.read(Lpn(l), pages, now).unwrap(),
            _ => ssd.write(Lpn(l), pages, StreamId(0), now).unwrap(),
        };
    }
    ssd.verify().unwrap();
    ssd.stats()
}

#[test]
fn every_scheme_runs_without_data_and_counts_as_with_tags() {
    for kind in [
        FtlKind::Page,
        FtlKind::Dftl,
        FtlKind::Block,
        FtlKind::Bast,
        FtlKind::Fast,
        FtlKind::Ioa,
    ] {
        let none = churn(kind, DataMode::None);
        assert!(none.erases > 0, "{kind:?}: no GC or merge ran");
        assert_eq!(none, churn(kind, DataMode::Tags), "{kind:?}");
    }
}

#[test]
fn reads_of_data_are_refused() {
    let mut ssd = Ssd::new(config(FtlKind::Page, DataMode::None)).unwrap();
    ssd.write(Lpn(0), 1, StreamId(0), SimTime::ZERO).unwrap();
    let mut out = [ReadPage::Unwritten];
    let err = ssd.read_tags(Lpn(0), &mut out, SimTime::ZERO).unwrap_err();
    assert_eq!(err, SsdError::NoData { mode: "none" });
    assert!(err.to_string().contains("data = \"tags\""), "{err}");
    let mut buf = vec![0u8; 512];
    assert!(ssd
        .read_data(Lpn(0), &mut buf, None, SimTime::ZERO)
        .is_err());
}

#[test]
fn memory_estimate_drops_the_tags() {
    let tags = config(FtlKind::Page, DataMode::Tags);
    let none = config(FtlKind::Page, DataMode::None);
    let phys = tags.physical_pages();
    assert_eq!(
        tags.memory_bytes_estimate() - none.memory_bytes_estimate(),
        phys * 8 - phys.div_ceil(64) * 8
    );
}
