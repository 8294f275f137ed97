//! Simulator speed: simulated host page writes per wall second for uniform random 4 KiB
//! writes on the page-mapping FTL with greedy GC, at OP 7 % and 28 %, with and without the
//! timing model (one core). A plain harness (not criterion): one steady-state run per case is
//! the measurement, and it prints WAF beside the speed so a faster-but-wrong change shows.
//!
//! Run: `cargo bench -p ssd --bench sim_speed` (env `SIM_SPEED_GIB` sets the logical size,
//! default 4; `SIM_SPEED_PASSES` the measured volume in device capacities, default 4).

use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use ssd::{GcPolicy, Lpn, SimTime, Ssd, SsdConfig, StreamId};
use std::time::Instant;

fn env_or(name: &str, default: f64) -> f64 {
    std::env::var(name)
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

fn run(op: f64, timing: bool, gib: f64, passes: f64) {
    let mut cfg = SsdConfig::preset("mlc-sata-2010").expect("preset");
    cfg.ftl.op = op;
    cfg.ftl.gc_policy = GcPolicy::Greedy;
    cfg.timing.enabled = timing;
    let cfg = cfg
        .with_logical_capacity((gib * (1u64 << 30) as f64) as u64)
        .expect("capacity");
    let mut ssd = Ssd::new(cfg).expect("device");
    let n = ssd.logical_pages();
    let mut rng = ChaCha8Rng::seed_from_u64(1);
    let mut t = SimTime::ZERO;
    // Precondition: sequential fill, then one capacity of random writes.
    for l in 0..n {
        t = ssd.write(Lpn(l), 1, StreamId(0), t).expect("write");
    }
    for _ in 0..n {
        t = ssd
            .write(Lpn(rng.gen_range(0..n)), 1, StreamId(0), t)
            .expect("write");
    }
    let before = ssd.stats();
    let writes = (passes * n as f64) as u64;
    let wall = Instant::now();
    for _ in 0..writes {
        t = ssd
            .write(Lpn(rng.gen_range(0..n)), 1, StreamId(0), t)
            .expect("write");
    }
    let secs = wall.elapsed().as_secs_f64();
    let s = ssd.stats().since(&before);
    println!(
        "page/greedy op {:>4.0} % timing {:>3}: {:>6.2} M host writes/s  ({writes} writes in {secs:.2} s, WAF {:.3}, {:.1} GiB logical)",
        op * 100.0,
        if timing { "on" } else { "off" },
        writes as f64 / secs / 1e6,
        s.waf(),
        gib
    );
}

fn main() {
    // `cargo test --benches` runs benches with --bench absent: keep that cheap.
    let quick = !std::env::args().any(|a| a == "--bench");
    let gib = if quick {
        0.5
    } else {
        env_or("SIM_SPEED_GIB", 4.0)
    };
    let passes = if quick {
        0.1
    } else {
        env_or("SIM_SPEED_PASSES", 4.0)
    };
    for op in [0.07, 0.28] {
        for timing in [false, true] {
            run(op, timing, gib, passes);
        }
    }
}
