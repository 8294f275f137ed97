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

fn config(policy: GcPolicy, op: f64) -> SsdConfig {
    let mut cfg = SsdConfig::preset("mlc-sata-2010").unwrap();
    cfg.geometry.channels = 1;
    cfg.geometry.dies_per_channel = 1;
    cfg.geometry.planes_per_die = 1;
    cfg.geometry.blocks_per_plane = BLOCKS;
    cfg.geometry.pages_per_block = PPB;
    cfg.timing.enabled = false;
    cfg.ftl.op = op;
    cfg.ftl.gc_policy = policy;
    cfg.ftl.gc_free_blocks_min = 1;
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
