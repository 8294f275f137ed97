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
    let budget = 1024 * 2 * 128;
    // Work done at each of the last 1024 writes (the FTL's window is 1024 accesses).
    let mut recent = std::collections::VecDeque::new();
    let mut accepted = 0u64;
    let err = loop {
        recent.push_back(work(&ssd));
        if recent.len() > 1024 {
            recent.pop_front();
        }
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
    // Refused at the first access after a window's work passed 1024 x 2 x 128 units, not
    // after a whole window of runaway accesses (issue 22: ~43 s): before the refused access,
    // the last 1024 writes did at most two windows' budgets (they overlap two of the FTL's
    // windows) plus the one access that crossed it.
    let before = recent.back().copied().unwrap_or(0);
    let span = before - recent.front().copied().unwrap_or(0);
    let crossing = before - recent.iter().rev().nth(1).copied().unwrap_or(0);
    assert!(
        span <= 2 * budget + crossing,
        "{span} units in the last 1024 writes"
    );
    assert!(work(&ssd) > budget, "the refusal came from the budget");
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
