//! The timing model's behaviour, from first principles of the configured latencies: single-page
//! costs, striping over dies and channels, read/write interference on a die emerging from the
//! die's timeline, GC time landing on host requests, and queue depth buying throughput.

use ssd::host::HostQueue;
use ssd::{Lpn, SimTime, Ssd, SsdConfig, StreamId};

fn cfg() -> SsdConfig {
    let mut c = SsdConfig::preset("mlc-sata-2010").unwrap();
    c.geometry.blocks_per_plane = 256;
    c
}

fn xfer_ns(c: &SsdConfig) -> u64 {
    (c.geometry.page_bytes as f64 * 1e3 / c.timing.channel_mb_per_s).round() as u64
}

#[test]
fn a_single_page_costs_transfer_plus_array_time() {
    let c = cfg();
    let (x, tp, tr) = (xfer_ns(&c), c.timing.t_prog_ns, c.timing.t_read_ns);
    let mut ssd = Ssd::new(c).unwrap();
    let done = ssd.write(Lpn(0), 1, StreamId(0), SimTime::ZERO).unwrap();
    assert_eq!(done.0, x + tp);
    let t0 = SimTime(10_000_000);
    let done = ssd.read(Lpn(0), 1, t0).unwrap();
    assert_eq!(done.0 - t0.0, tr + x);
}

#[test]
fn a_multi_page_request_stripes_over_dies_and_ends_with_its_last_page() {
    let c = cfg();
    let dies = c.dies();
    let channels = c.geometry.channels as u64;
    let (x, tp) = (xfer_ns(&c), c.timing.t_prog_ns);
    let mut ssd = Ssd::new(c).unwrap();
    // One page per die: each channel carries dies/channels transfers back to back, then programs overlap.
    let done = ssd.write(Lpn(0), dies, StreamId(0), SimTime::ZERO).unwrap();
    let per_channel = dies as u64 / channels;
    assert_eq!(done.0, per_channel * x + tp);
    // Twice as many pages: the second round waits for the dies.
    let mut ssd2 = Ssd::new(cfg()).unwrap();
    let done2 = ssd2
        .write(Lpn(0), 2 * dies, StreamId(0), SimTime::ZERO)
        .unwrap();
    assert!(done2.0 >= 2 * tp, "{} vs {}", done2.0, 2 * tp);
}

#[test]
fn a_read_waits_behind_a_program_on_the_same_die() {
    let c = cfg();
    let dies = c.dies() as u64;
    let (x, tp, tr) = (xfer_ns(&c), c.timing.t_prog_ns, c.timing.t_read_ns);
    let mut ssd = Ssd::new(c).unwrap();
    // Page 0 goes to die 0; a later write of page `dies` lands on die 0 again.
    ssd.write(Lpn(0), dies as u32, StreamId(0), SimTime::ZERO)
        .unwrap();
    let t = SimTime(100_000_000);
    let idle = ssd.read(Lpn(0), 1, t).unwrap().0 - t.0;
    assert_eq!(idle, tr + x);
    let t2 = SimTime(200_000_000);
    ssd.write(Lpn(dies), 1, StreamId(0), t2).unwrap(); // die 0 busy programming
    let busy = ssd.read(Lpn(0), 1, t2).unwrap().0 - t2.0;
    assert!(busy >= x + tp + tr, "read behind a program took {busy} ns");
}

#[test]
fn gc_time_lands_on_host_writes() {
    let mut c = cfg();
    c.ftl.op = 0.1;
    let mut ssd = Ssd::new(c).unwrap();
    let n = ssd.logical_pages();
    let mut t = SimTime::ZERO;
    let mut q = HostQueue::new(1);
    let mut write = |ssd: &mut Ssd, l: u64| {
        let at = q.issue_time(SimTime::ZERO);
        let done = ssd.write(Lpn(l), 1, StreamId(0), at).unwrap();
        q.complete(done);
        t = done;
    };
    for l in 0..n {
        write(&mut ssd, l);
    }
    let fresh = ssd.latency_ns().mean();
    ssd.reset_latency();
    let mut x = 12345u64;
    for _ in 0..2 * n {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        write(&mut ssd, x % n);
    }
    assert!(ssd.stats().erases > 0);
    let steady = ssd.latency_ns().mean();
    assert!(
        steady > 1.5 * fresh,
        "GC should slow writes: fresh {fresh} ns, steady {steady} ns"
    );
    assert!(
        ssd.latency_ns().max() as f64 > 3.0 * fresh,
        "some write waits for an erase"
    );
    assert!(t.0 > 0);
}

#[test]
fn queue_depth_buys_random_read_throughput() {
    let run = |qd: u32| {
        let mut ssd = Ssd::new(cfg()).unwrap();
        let n = ssd.logical_pages();
        let filled = ssd
            .write(Lpn(0), n as u32, StreamId(0), SimTime::ZERO)
            .unwrap();
        let start = SimTime(filled.0 + 1_000_000_000);
        let mut q = HostQueue::starting_at(qd, start);
        let mut last = start;
        let mut x = 99u64;
        for _ in 0..4000 {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            let at = q.issue_time(start);
            let done = ssd.read(Lpn(x % n), 1, at).unwrap();
            q.complete(done);
            last = last.max(done);
        }
        4000.0 / ((last.0 - start.0) as f64 / 1e9)
    };
    let (qd1, qd8) = (run(1), run(8));
    assert!(qd8 > 3.0 * qd1, "QD8 {qd8:.0} IOPS vs QD1 {qd1:.0} IOPS");
}
