//! A DFTL whose GC cannot keep up — the translation-page rewrites of the pages GC moves
//! trigger more GC than it frees (a 1-entry CMT on a 256 MiB device) — reports
//! `GcCannotKeepUp` within a few thousand writes instead of livelocking; a healthy DFTL
//! (the same device at 64 MiB) writes its capacity twice over without it.

use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use ssd::{FtlKind, Lpn, SimTime, Ssd, SsdConfig, SsdError, StreamId};

fn dftl(capacity_bytes: u64, cmt_entries: u32) -> Ssd {
    let mut cfg = SsdConfig::preset("mlc-sata-2010").unwrap();
    cfg.ftl.scheme = FtlKind::Dftl;
    let mut cfg = cfg.with_logical_capacity(capacity_bytes).unwrap();
    cfg.ftl.cmt_entries = cmt_entries;
    Ssd::new(cfg).unwrap()
}

/// Fill, then random writes: the first error, if any, within `volume` x capacity.
fn run(ssd: &mut Ssd, volume: u64) -> Result<(), SsdError> {
    let n = ssd.logical_pages();
    let mut rng = ChaCha8Rng::seed_from_u64(1);
    for i in 0..volume * n {
        let lpn = if i < n { i } else { rng.gen_range(0..n) };
        ssd.write(Lpn(lpn), 1, StreamId(0), SimTime::ZERO)?;
    }
    Ok(())
}

#[test]
fn a_gc_livelock_is_an_error_naming_the_cmt() {
    let mut ssd = dftl(256 << 20, 1);
    match run(&mut ssd, 2) {
        Err(e @ SsdError::GcCannotKeepUp { .. }) => {
            let msg = e.to_string();
            assert!(
                msg.contains("1-entry CMT") && msg.contains("--cmt-entries"),
                "{msg}"
            );
        }
        other => panic!("expected GcCannotKeepUp, got {other:?}"),
    }
}

#[test]
fn a_healthy_dftl_never_reports_a_livelock() {
    let mut ssd = dftl(64 << 20, 64);
    run(&mut ssd, 2).expect("a 64 MiB DFTL keeps up");
    ssd.verify().unwrap();
}
