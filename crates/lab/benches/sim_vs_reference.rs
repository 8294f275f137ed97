//! `flashlab sim --timing off` against a minimal reference simulator, side by side in one
//! process (issue 14 §1).
//!
//! The REFERENCE (`reference::Sim` below) is a minimal page-mapped greedy-GC simulator written
//! for this benchmark only: one stream, one die, flat `u32` arrays (L2P, P2L, valid counts),
//! bucketed greedy victim lists (a doubly linked list per valid count), one write frontier that
//! host writes and GC copies share, a xorshift RNG. It has none of flashlab's features (dies,
//! streams, tags, TRIM, verify, timing, host queue) and is the speed to beat.
//!
//! flashlab runs through `lab::sim::run`, the engine of `flashlab sim`: preset `mlc-sata-2010`
//! (8 dies), page FTL, greedy GC, timing off, uniform 4 KiB writes, `--precondition full`
//! (sequential fill + 1x random), then `--write-volume` Nx measured. The reference gets the
//! same physical and logical blocks, pages per block and volumes, and is timed on the same
//! measured phase. Runs alternate (reference, flashlab, reference, ...) and the table gives
//! medians of host writes per wall second and their ratio (flashlab / reference); `flash ratio`
//! is that ratio per flash write (times flashlab's WAF over the reference's: flashlab's 8 dies
//! with a GC pool each write more pages for the same host volume, so this compares equal
//! flash work); `cpu ratio`
//! is the ratio of the whole runs' CPU time (reference / flashlab: fill, preconditioning and
//! measured writes, which both do), steadier than wall time on a loaded machine. Then, per
//! case, flashlab with timing ON (`timing on/off`: its rate over the timing-off rate, medians)
//! and `B/page`: flashlab's resident memory for the device per logical page (`sim`'s
//! `bytes_per_logical_page`: the growth of the process's anonymous resident memory, which
//! leaves out the ~1 MB of the program's code paged in as the run first executes it), from
//! one timing-off run in a child process of its own (the bench's own memory would hide it).
//!
//! Run: `cargo bench -p lab --bench sim_vs_reference` (env: `SIM_REF_GIB`, comma-separated
//! logical sizes, default `1,4,16`; `SIM_REF_OPS` default `0.07,0.28`; `SIM_REF_RUNS` runs of
//! each per case, default 3; `SIM_REF_VOLUME` measured volume in capacities, default 2;
//! `SIM_REF_SAMPLER` flashlab's `--sampler`, `lemire` (default) or `rand`).
//! `cargo test --benches` runs one tiny case. On a shared machine, count instructions instead
//! of time: `valgrind --tool=callgrind` on the bench binary with `--bench` and a small
//! `SIM_REF_GIB`, then compare the inclusive costs of `run_reference` and `run_flashlab`
//! (both do the same fill, preconditioning and measured writes).

use lab::sim::{Precondition, SimOptions};
use ssd::SsdConfig;
use std::time::Instant;

/// The minimal reference simulator.
mod reference {
    use std::collections::VecDeque;

    const NIL: u32 = u32::MAX;

    /// Page-mapped flash with greedy GC over valid-count buckets.
    pub struct Sim {
        ppb: u32,
        l2p: Vec<u32>,
        p2l: Vec<u32>,
        valid: Vec<u32>,
        /// Doubly linked lists of closed blocks, one per valid count (heads in `bucket`).
        next: Vec<u32>,
        prev: Vec<u32>,
        bucket: Vec<u32>,
        /// Free blocks, erased longest ago first.
        free: VecDeque<u32>,
        /// Free blocks kept back for GC (GC runs when the pool falls to this).
        reserve: usize,
        open: u32,
        wp: u32,
        pub host_writes: u64,
        pub flash_writes: u64,
        rng: u64,
    }

    impl Sim {
        pub fn new(physical_blocks: u32, logical_pages: u64, ppb: u32, seed: u64) -> Sim {
            let mut free: VecDeque<u32> = (0..physical_blocks).collect();
            let open = free.pop_front().expect("at least one block");
            Sim {
                ppb,
                l2p: vec![NIL; logical_pages as usize],
                p2l: vec![NIL; physical_blocks as usize * ppb as usize],
                valid: vec![0; physical_blocks as usize],
                next: vec![NIL; physical_blocks as usize],
                prev: vec![NIL; physical_blocks as usize],
                bucket: vec![NIL; ppb as usize + 1],
                free,
                reserve: 2,
                open,
                wp: 0,
                host_writes: 0,
                flash_writes: 0,
                rng: seed.max(1),
            }
        }

        pub fn logical_pages(&self) -> u64 {
            self.l2p.len() as u64
        }

        /// xorshift64*, then a multiply-shift into `0..n`.
        #[inline]
        pub fn random(&mut self, n: u64) -> u64 {
            self.rng ^= self.rng >> 12;
            self.rng ^= self.rng << 25;
            self.rng ^= self.rng >> 27;
            let r = self.rng.wrapping_mul(0x2545_f491_4f6c_dd1d);
            ((r as u128 * n as u128) >> 64) as u64
        }

        #[inline]
        fn unlink(&mut self, b: u32) {
            let (p, n) = (self.prev[b as usize], self.next[b as usize]);
            if p == NIL {
                self.bucket[self.valid[b as usize] as usize] = n;
            } else {
                self.next[p as usize] = n;
            }
            if n != NIL {
                self.prev[n as usize] = p;
            }
        }

        #[inline]
        fn link(&mut self, b: u32) {
            let v = self.valid[b as usize] as usize;
            let h = self.bucket[v];
            self.prev[b as usize] = NIL;
            self.next[b as usize] = h;
            if h != NIL {
                self.prev[h as usize] = b;
            }
            self.bucket[v] = b;
        }

        /// Program one page at the frontier; close and replace the open block when full.
        #[inline]
        fn program(&mut self, lpn: u32) {
            let ppn = self.open * self.ppb + self.wp;
            self.l2p[lpn as usize] = ppn;
            self.p2l[ppn as usize] = lpn;
            self.valid[self.open as usize] += 1;
            self.flash_writes += 1;
            self.wp += 1;
            if self.wp == self.ppb {
                self.link(self.open);
                self.open = self.free.pop_front().expect("GC keeps a reserve");
                self.wp = 0;
            }
        }

        pub fn write(&mut self, lpn: u64) {
            while self.free.len() <= self.reserve {
                self.collect();
            }
            let old = self.l2p[lpn as usize];
            if old != NIL {
                self.p2l[old as usize] = NIL;
                let b = old / self.ppb;
                if b == self.open {
                    self.valid[b as usize] -= 1;
                } else {
                    self.unlink(b);
                    self.valid[b as usize] -= 1;
                    self.link(b);
                }
            }
            self.host_writes += 1;
            self.program(lpn as u32);
        }

        /// Greedy: the closed block with fewest valid pages; copy them to the frontier, free it.
        fn collect(&mut self) {
            let v = (0..self.bucket.len())
                .find(|&v| self.bucket[v] != NIL)
                .expect("a closed block");
            let victim = self.bucket[v];
            self.unlink(victim);
            let first = (victim * self.ppb) as usize;
            for i in first..first + self.ppb as usize {
                let lpn = self.p2l[i];
                if lpn != NIL {
                    self.p2l[i] = NIL;
                    self.program(lpn);
                }
            }
            self.valid[victim as usize] = 0;
            self.free.push_back(victim);
        }
    }
}

fn env_list(name: &str, default: &[f64]) -> Vec<f64> {
    match std::env::var(name) {
        Ok(v) => v
            .split(',')
            .map(|x| x.trim().parse().expect("a number"))
            .collect(),
        Err(_) => default.to_vec(),
    }
}

fn config(gib: f64, op: f64) -> SsdConfig {
    let mut cfg = SsdConfig::preset("mlc-sata-2010").expect("shipped preset");
    cfg.ftl.op = op;
    cfg.timing.enabled = false;
    cfg.with_logical_capacity((gib * (1u64 << 30) as f64) as u64)
        .expect("capacity")
}

/// CPU seconds this thread has used.
fn cpu_seconds() -> f64 {
    let mut t = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: `t` is a valid timespec the call fills; the clock id is a constant.
    let rc = unsafe { libc::clock_gettime(libc::CLOCK_THREAD_CPUTIME_ID, &mut t) };
    assert_eq!(rc, 0, "clock_gettime(CLOCK_THREAD_CPUTIME_ID)");
    t.tv_sec as f64 + t.tv_nsec as f64 * 1e-9
}

/// One run's figures.
struct Run {
    /// Host writes per wall second of the measured phase.
    rate: f64,
    waf: f64,
    /// CPU seconds of the whole run (fill, preconditioning, measured writes).
    cpu_s: f64,
    /// flashlab only: peak memory for the device per logical page.
    bytes_per_page: f64,
}

/// One flashlab run.
#[inline(never)]
fn run_flashlab(cfg: &SsdConfig, volume: f64, seed: u64) -> Run {
    let cpu0 = cpu_seconds();
    let opts = SimOptions {
        config: cfg.clone(),
        preset: Some("mlc-sata-2010".into()),
        config_path: None,
        flows: vec![lab::spec::FlowSpec::default()
            .resolve(cfg, 0, seed)
            .expect("the default flow")],
        job_path: None,
        log_interval_ns: None,
        write_volume: Some(volume),
        precondition: Precondition::Full { passes: 1.0 },
        replay_trace_timing: false,
        seed,
        max_memory_bytes: u64::MAX,
        max_flash_writes: None,
        sampler: sampler(),
        stream_policy: policy::streams::LbaPolicySpec::None,
    };
    let r = lab::sim::run(&opts, &mut |_, _| {}).expect("flashlab sim");
    Run {
        rate: r.host_pages_per_wall_second,
        waf: r.waf.unwrap_or(0.0),
        cpu_s: cpu_seconds() - cpu0,
        bytes_per_page: r.bytes_per_logical_page.unwrap_or(f64::NAN),
    }
}

/// flashlab's sampler: `SIM_REF_SAMPLER` (`lemire`, the default, or `rand`).
fn sampler() -> workload::synth::Sampler {
    match std::env::var("SIM_REF_SAMPLER") {
        Ok(s) => workload::synth::Sampler::parse(&s)
            .unwrap_or_else(|| panic!("SIM_REF_SAMPLER={s}: expected rand or lemire")),
        Err(_) => Default::default(),
    }
}

/// One reference run on the same geometry and volumes.
#[inline(never)]
fn run_reference(cfg: &SsdConfig, volume: f64, seed: u64) -> Run {
    let cpu0 = cpu_seconds();
    let ppb = cfg.geometry.pages_per_block;
    let mut sim = reference::Sim::new(cfg.total_blocks() as u32, cfg.logical_pages(), ppb, seed);
    let n = sim.logical_pages();
    for l in 0..n {
        sim.write(l);
    }
    for _ in 0..n {
        let l = sim.random(n);
        sim.write(l);
    }
    let (h0, f0) = (sim.host_writes, sim.flash_writes);
    let writes = (volume * n as f64).ceil() as u64;
    let wall = Instant::now();
    for _ in 0..writes {
        let l = sim.random(n);
        sim.write(l);
    }
    let secs = wall.elapsed().as_secs_f64();
    let waf = (sim.flash_writes - f0) as f64 / (sim.host_writes - h0) as f64;
    Run {
        rate: writes as f64 / secs,
        waf,
        cpu_s: cpu_seconds() - cpu0,
        bytes_per_page: f64::NAN,
    }
}

fn median(v: &mut [f64]) -> f64 {
    v.sort_by(f64::total_cmp);
    let n = v.len();
    if n % 2 == 1 {
        v[n / 2]
    } else {
        0.5 * (v[n / 2 - 1] + v[n / 2])
    }
}

/// The child that measures memory: env `SIM_REF_MEMORY_OF` = `GIB,OP,VOLUME`.
const MEMORY_CHILD: &str = "SIM_REF_MEMORY_OF";

/// flashlab's bytes per logical page at `gib`, `op`, measured in a fresh process.
fn bytes_per_page(gib: f64, op: f64, volume: f64) -> f64 {
    let exe = std::env::current_exe().expect("the bench's own path");
    let out = std::process::Command::new(exe)
        .arg("--bench")
        .env(MEMORY_CHILD, format!("{gib},{op},{volume}"))
        .output()
        .expect("the memory child runs");
    String::from_utf8_lossy(&out.stdout)
        .trim()
        .parse()
        .unwrap_or(f64::NAN)
}

fn main() {
    if let Ok(v) = std::env::var(MEMORY_CHILD) {
        let x: Vec<f64> = v.split(',').map(|x| x.parse().expect("a number")).collect();
        println!(
            "{}",
            run_flashlab(&config(x[0], x[1]), x[2], 1).bytes_per_page
        );
        return;
    }
    let quick = !std::env::args().any(|a| a == "--bench");
    let (sizes, ops, runs, volume) = if quick {
        (vec![0.0625], vec![0.07], 1, 0.2)
    } else {
        (
            env_list("SIM_REF_GIB", &[1.0, 4.0, 16.0]),
            env_list("SIM_REF_OPS", &[0.07, 0.28]),
            env_list("SIM_REF_RUNS", &[3.0])[0] as usize,
            env_list("SIM_REF_VOLUME", &[2.0])[0],
        )
    };
    println!("uniform 4 KiB writes, timing off, mlc-sata-2010 geometry (flashlab: 8 dies; reference: 1), seed 1..{runs}, medians of {runs} alternated runs, measured volume {volume}x, flashlab's sampler {}", sampler().name());
    println!(
        "{:>6} {:>5} {:>10} {:>10} {:>7} {:>11} {:>9} {:>8} {:>8} {:>14} {:>7}",
        "GiB",
        "OP",
        "ref M w/s",
        "fl M w/s",
        "ratio",
        "flash ratio",
        "cpu ratio",
        "ref WAF",
        "fl WAF",
        "timing on/off",
        "B/page"
    );
    for &gib in &sizes {
        for &op in &ops {
            let cfg = config(gib, op);
            let mut timed = cfg.clone();
            timed.timing.enabled = true;
            let (mut r, mut f, mut t) = (Vec::new(), Vec::new(), Vec::new());
            for i in 0..runs {
                let seed = 1 + i as u64;
                r.push(run_reference(&cfg, volume, seed));
                f.push(run_flashlab(&cfg, volume, seed));
                t.push(run_flashlab(&timed, volume, seed));
            }
            let med =
                |v: &[Run], x: fn(&Run) -> f64| median(&mut v.iter().map(x).collect::<Vec<_>>());
            let (rm, fm, tm) = (
                med(&r, |x| x.rate),
                med(&f, |x| x.rate),
                med(&t, |x| x.rate),
            );
            let cpu = med(&r, |x| x.cpu_s) / med(&f, |x| x.cpu_s);
            let flash = (fm * med(&f, |x| x.waf)) / (rm * med(&r, |x| x.waf));
            let (last_r, last_f) = (&r[runs - 1], &f[runs - 1]);
            let bytes = bytes_per_page(gib, op, volume);
            println!(
                "{gib:>6} {:>4.0}% {:>10.2} {:>10.2} {:>7.2} {flash:>11.2} {cpu:>9.2} {:>8.3} {:>8.3} {:>14.2} {:>7.2}",
                op * 100.0,
                rm / 1e6,
                fm / 1e6,
                fm / rm,
                last_r.waf,
                last_f.waf,
                tm / fm,
                bytes
            );
        }
    }
}
