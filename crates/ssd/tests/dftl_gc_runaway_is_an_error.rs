//! A DFTL whose GC cannot keep up — the translation-page rewrites of the pages GC moves
//! trigger more GC than it frees (a 1- or 2-entry CMT on a 256 MiB device) — reports
//! `GcCannotKeepUp` as soon as a window of 1024 host accesses has done more flash work than
//! the geometry allows a healthy one (2 x pages per block per access), not at the window's
//! end; a healthy DFTL (the same device at 64 MiB, or at 256 MiB with a 32-entry CMT) writes
//! its capacity over without it.

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

/// Flash work beyond the host's pages: GC copies + translation-page writes.
fn work(ssd: &Ssd) -> u64 {
    let s = ssd.stats();
    s.gc_pages_copied + s.translation_writes
}

#[test]
fn a_runaway_is_refused_early_in_the_random_phase() {
    let mut ssd = dftl(256 << 20, 2);
    run(&mut ssd, 1).expect("the sequential fill needs no GC");
    let n = ssd.logical_pages();
    let mut rng = ChaCha8Rng::seed_from_u64(1);
    let mut accepted = 0u64;
    let err = loop {
        match ssd.write(Lpn(rng.gen_range(0..n)), 1, StreamId(0), SimTime::ZERO) {
            Ok(_) => accepted += 1,
            Err(e) => break e,
        }
        assert!(
            accepted < n,
            "a 2-entry CMT wrote the capacity over without a refusal"
        );
    };
    assert!(matches!(err, SsdError::GcCannotKeepUp { .. }), "{err}");
    // Refused as soon as one window's work passes 1024 x 2 x 128 units: within the first
    // tenth of the capacity (issue 22: only after ~43 s with the check at windows' ends).
    assert!(
        accepted < n / 10,
        "refused after {accepted} of {n} random writes"
    );
    // Before the runaway the work per window stayed under the budget on average.
    assert!(work(&ssd) > 1024 * 2 * 128, "{}", work(&ssd));
}

#[test]
fn a_slow_but_healthy_dftl_is_not_refused() {
    // 32 entries for 65 translation pages: a write amplification above 20, no runaway.
    let mut ssd = dftl(256 << 20, 32);
    run(&mut ssd, 2).expect("a 32-entry CMT on 256 MiB keeps up");
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
