//! The simulator against closed-form steady-state WAF of uniform random writes
//! (see `ssd::analytic`): FIFO's fixed point, Desnoyers' greedy model, and greedy < FIFO.
//!
//! Tolerance: 1 % relative (measured errors are 0.03-0.3 %). The models are mean-field limits for an infinite device; a finite
//! one (here 4096 blocks) differs by a few tenths of a percent, the measurement window adds
//! sampling noise of about the same size, and the model ignores the partially written open
//! block (one block of 4096 here).

use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use ssd::analytic::{fifo_waf, greedy_waf};
use ssd::{GcPolicy, GcStreamMode, Lpn, SimTime, Ssd, SsdConfig, StreamId};

const BLOCKS: u32 = 4096;
const PPB: u32 = 64;

mod common;

fn config(policy: GcPolicy, op: f64) -> SsdConfig {
    let mut cfg = common::one_die(BLOCKS, PPB, op, policy);
    cfg.ftl.gc_stream = GcStreamMode::Victim;
    cfg
}

/// Measured steady-state WAF: sequential fill, 3x capacity of random writes to reach steady
/// state, then WAF over 3x capacity more.
fn measured_waf(cfg: SsdConfig, seed: u64) -> f64 {
    let mut ssd = Ssd::new(cfg).unwrap();
    let n = ssd.logical_pages();
    for l in 0..n {
        ssd.write(Lpn(l), 1, StreamId(0), SimTime::ZERO).unwrap();
    }
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    for _ in 0..3 * n {
        ssd.write(Lpn(rng.gen_range(0..n)), 1, StreamId(0), SimTime::ZERO)
            .unwrap();
    }
    let before = ssd.stats();
    for _ in 0..3 * n {
        ssd.write(Lpn(rng.gen_range(0..n)), 1, StreamId(0), SimTime::ZERO)
            .unwrap();
    }
    ssd.verify().unwrap();
    ssd.stats().since(&before).waf()
}

fn check(policy: GcPolicy, op: f64) -> (f64, f64) {
    let cfg = config(policy, op);
    let alpha = cfg.alpha();
    let model = match policy {
        GcPolicy::Fifo => fifo_waf(alpha),
        GcPolicy::Greedy => greedy_waf(alpha, PPB),
        GcPolicy::CostBenefit => unreachable!("no closed form"),
    };
    let waf = measured_waf(cfg, 7);
    let err = (waf - model).abs() / model;
    println!(
        "{policy:?} op {op}: alpha {alpha:.4} measured {waf:.4} model {model:.4} error {:.2} %",
        err * 100.0
    );
    assert!(
        err < 0.01,
        "{policy:?} op {op}: measured {waf} vs model {model}"
    );
    (waf, model)
}

#[test]
fn fifo_matches_the_fixed_point_model() {
    for op in [0.07, 0.15, 0.28] {
        check(GcPolicy::Fifo, op);
    }
}

#[test]
fn greedy_matches_desnoyers_model_and_beats_fifo() {
    for op in [0.07, 0.15, 0.28] {
        let (greedy, _) = check(GcPolicy::Greedy, op);
        let fifo = measured_waf(config(GcPolicy::Fifo, op), 7);
        assert!(greedy < fifo, "op {op}: greedy {greedy} vs fifo {fifo}");
    }
}

/// `mlc-sata-2010` as shipped (8 dies, 128-page blocks, GC reserve 2 per die, GC copies to
/// their own stream) at 1 GiB: each die keeps a host and a GC block open, whose free pages
/// hold no data. Eq. 12 at the config's alpha misses the measured WAF by several percent at
/// OP 7 %; at `open_block_alpha` (alpha - 0.6 x 8 / logical blocks) it is within 1 %.
#[test]
fn multi_die_preset_matches_eq12_once_the_open_blocks_are_counted() {
    for (op, min_uncorrected_error) in [(0.07, 0.02), (0.28, 0.0)] {
        let mut cfg = SsdConfig::preset("mlc-sata-2010").unwrap();
        cfg.timing.enabled = false;
        cfg.ftl.op = op;
        let cfg = cfg.with_logical_capacity(1 << 30).unwrap();
        let (ppb, pools) = (cfg.geometry.pages_per_block, cfg.gc_pools());
        assert_eq!(pools, 8, "one GC pool per die");
        let logical_blocks = (cfg.logical_pages() / ppb as u64) as f64;
        let alpha = ssd::analytic::open_block_alpha(cfg.alpha(), pools, logical_blocks);
        assert!(
            (cfg.alpha() - alpha - 0.6 * 8.0 / logical_blocks).abs() < 1e-12,
            "the correction is 0.6 block per pool"
        );
        let (eq12, corrected) = (greedy_waf(cfg.alpha(), ppb), greedy_waf(alpha, ppb));
        let waf = measured_waf(cfg, 7);
        let err = |m: f64| (waf - m).abs() / m;
        println!(
            "mlc-sata-2010 1 GiB op {op}: measured {waf:.4}, Eq. 12 {eq12:.4} ({:+.2} %), with open blocks {corrected:.4} ({:+.2} %)",
            (waf / eq12 - 1.0) * 100.0,
            (waf / corrected - 1.0) * 100.0
        );
        assert!(err(corrected) < 0.01, "op {op}: {waf} vs {corrected}");
        assert!(
            err(eq12) >= min_uncorrected_error,
            "op {op}: {waf} vs {eq12}"
        );
    }
}
