//! The timing model's behaviour, from first principles of the configured latencies: single-page
//! costs, striping over dies and channels, read/write interference on a die emerging from the
//! die's timeline (reads in arrival order, with read priority, or suspending programs), GC time
//! landing on host requests, and queue depth buying throughput.

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

// --- The drive behaviours P1's effect rests on: a bounded write cache that destages at the
// flash's pace, a drive aged to steady state, reads queued behind programs on their die.

use ssd::config::Aging;
use ssd::host::{Command, HostPort};

/// A small drive (4 dies, 64 blocks of 32 pages each) aged by one fill and `x` device-fulls of
/// random writes.
fn aged(x: f64, cache_pages: u32) -> SsdConfig {
    let mut c = SsdConfig::preset("mlc-sata-2010").unwrap();
    (c.geometry.channels, c.geometry.dies_per_channel) = (2, 2);
    (c.geometry.blocks_per_plane, c.geometry.pages_per_block) = (64, 32);
    c.ftl.op = 0.15;
    c.timing.write_cache_pages = cache_pages;
    c.aging = Aging {
        fill: x >= 0.0,
        random_writes_x: x.max(0.0),
        seed: 7,
    };
    c
}

fn xorshift(x: &mut u64) -> u64 {
    *x ^= *x << 13;
    *x ^= *x >> 7;
    *x ^= *x << 17;
    *x
}

/// Random one-page writes per simulated second over `ios` writes at queue depth `qd`.
fn random_write_iops(cfg: SsdConfig, qd: u32, ios: u64) -> f64 {
    let mut port = HostPort::new(Ssd::new(cfg).unwrap(), qd);
    let n = port.ssd().logical_pages();
    let (_, t0) = port.begin_measurement();
    let mut x = 4242u64;
    for _ in 0..ios {
        let lpn = Lpn(xorshift(&mut x) % n);
        let w = Command::Write {
            lpn,
            pages: 1,
            stream: StreamId(0),
        };
        port.submit(w, None).unwrap();
    }
    ios as f64 / ((port.last_done().0 - t0.0) as f64 / 1e9)
}

#[test]
fn a_full_write_cache_destages_at_the_flash_pace() {
    // With C cache pages, a QD1 stream keeps C pages programming at once, as a host queue of C
    // would without the cache: the sustained rate is the flash's destage rate (GC included),
    // not the cache's (which acknowledges at once here: the preset has no host link).
    let ios = 20_000;
    let cached_qd1 = random_write_iops(aged(2.0, 16), 1, ios);
    let uncached_qd16 = random_write_iops(aged(2.0, 0), 16, ios);
    let uncached_qd1 = random_write_iops(aged(2.0, 0), 1, ios);
    let ratio = cached_qd1 / uncached_qd16;
    assert!(
        (0.95..=1.05).contains(&ratio),
        "QD1 with a 16-page cache {cached_qd1:.0} IOPS vs QD16 without {uncached_qd16:.0} IOPS"
    );
    assert!(
        cached_qd1 > 2.0 * uncached_qd1,
        "the cache overlaps programs: {cached_qd1:.0} vs {uncached_qd1:.0} IOPS"
    );
}

#[test]
fn aging_brings_the_drive_to_gc_steady_state_before_the_first_host_write() {
    let fresh = aged(-1.0, 0);
    assert!(fresh.aging.is_fresh());
    let mut ssd = Ssd::new(aged(2.0, 0)).unwrap();
    assert_eq!(ssd.stats().host_pages_written, 0, "aging is not counted");
    assert_eq!(ssd.stats().erases, 0);
    let n = ssd.logical_pages();
    let mut x = 99u64;
    for _ in 0..n / 4 {
        ssd.write(Lpn(xorshift(&mut x) % n), 1, StreamId(0), SimTime::ZERO)
            .unwrap();
    }
    let s = ssd.stats();
    let copies_per_write = s.gc_pages_copied as f64 / s.host_pages_written as f64;
    assert!(
        copies_per_write > 1.0,
        "aged: {copies_per_write:.2} copies per write"
    );
    let fresh_rate = random_write_iops(fresh, 4, 5_000);
    let aged_rate = random_write_iops(aged(2.0, 0), 4, 5_000);
    assert!(
        aged_rate < 0.6 * fresh_rate,
        "aged {aged_rate:.0} IOPS vs fresh {fresh_rate:.0} IOPS"
    );
}

/// GC copies per host write of repeated passes over the first half of an aged drive: in place
/// at random, or as a log (each pass trims the half, then writes it in order).
fn half_drive_copies_per_write(log: bool) -> f64 {
    let mut ssd = Ssd::new(aged(2.0, 0)).unwrap();
    let half = ssd.logical_pages() / 2;
    let mut x = 5u64;
    let mut pass = |ssd: &mut Ssd| {
        if log {
            ssd.trim(Lpn(0), half as u32, SimTime::ZERO).unwrap();
        }
        for i in 0..half {
            let lpn = if log { i } else { xorshift(&mut x) % half };
            ssd.write(Lpn(lpn), 1, StreamId(0), SimTime::ZERO).unwrap();
        }
    };
    (0..3).for_each(|_| pass(&mut ssd)); // past the aging's own layout
    let before = ssd.stats();
    (0..3).for_each(|_| pass(&mut ssd));
    let s = ssd.stats();
    (s.gc_pages_copied - before.gc_pages_copied) as f64
        / (s.host_pages_written - before.host_pages_written) as f64
}

#[test]
fn on_an_aged_drive_random_overwrites_pay_gc_and_a_trimmed_log_does_not() {
    let in_place = half_drive_copies_per_write(false);
    let log = half_drive_copies_per_write(true);
    assert!(
        log < 0.05,
        "a trimmed sequential log copies {log:.3} pages per write"
    );
    assert!(
        in_place > 0.3,
        "random overwrites of half an aged drive copy {in_place:.3} pages per write"
    );
}

#[test]
fn a_read_queues_behind_a_program_unless_reads_suspend_programs() {
    let behind = |suspend: bool| {
        let mut c = cfg();
        c.timing.reads_suspend_programs = suspend;
        let (x, tp, tr) = (xfer_ns(&c), c.timing.t_prog_ns, c.timing.t_read_ns);
        let dies = c.dies();
        let mut ssd = Ssd::new(c).unwrap();
        ssd.write(Lpn(0), dies, StreamId(0), SimTime::ZERO).unwrap();
        let t = SimTime(100_000_000);
        // Page `dies` lands on die 0 again: die 0 programs while lpn 0 (on die 0) is read.
        let programmed = ssd.write(Lpn(dies as u64), 1, StreamId(0), t).unwrap();
        let read = ssd.read(Lpn(0), 1, t).unwrap().0 - t.0;
        (read, programmed.0 - t.0, x, tp, tr)
    };
    let (queued, _, x, tp, tr) = behind(false);
    assert_eq!(
        queued,
        x + tp + tr + x,
        "transfer in, program, sense, transfer out"
    );
    let (suspended, ..) = behind(true);
    // The sense starts at once; its transfer waits for the channel (busy with the write's data).
    assert_eq!(suspended, tr.max(x) + x, "the read suspends the program");
}

/// Die 0 runs one program and has two more queued (a 2 x dies + 1 page write: pages 0, dies
/// and 2 x dies of it land on die 0) when two reads of a page on die 0 arrive together, after
/// the write's transfers: (first read's latency, second's, transfer, program, sense).
fn reads_behind_three_programs(priority: bool, suspend: bool) -> (u64, u64, u64, u64, u64) {
    let mut c = cfg();
    (c.timing.read_priority, c.timing.reads_suspend_programs) = (priority, suspend);
    let (x, tp, tr) = (xfer_ns(&c), c.timing.t_prog_ns, c.timing.t_read_ns);
    let (dies, channels) = (c.dies(), c.geometry.channels);
    let mut ssd = Ssd::new(c).unwrap();
    ssd.write(Lpn(0), dies, StreamId(0), SimTime::ZERO).unwrap();
    let t = SimTime(100_000_000);
    ssd.write(Lpn(dies as u64), 2 * dies + 1, StreamId(0), t)
        .unwrap();
    // Channel 0 carries the transfers of its dies' pages: (2 x dies + 1) / channels + 1 of them.
    let transfers = ((2 * dies + 1) / channels + 1) as u64;
    let r = SimTime(t.0 + (transfers + 1) * x);
    assert!(
        r.0 < t.0 + x + tp,
        "the reads arrive while the first program runs"
    );
    let first = ssd.read(Lpn(0), 1, r).unwrap().0 - r.0;
    let second = ssd.read(Lpn(0), 1, r).unwrap().0 - r.0;
    // Both latencies from the start of the first program (t + x).
    let from_program = r.0 - t.0 - x;
    (first + from_program, second + from_program, x, tp, tr)
}

#[test]
fn with_read_priority_a_read_waits_for_the_running_program_only() {
    let (fifo, _, x, tp, tr) = reads_behind_three_programs(false, false);
    assert_eq!(fifo, 3 * tp + tr + x, "FIFO: behind all three programs");
    let (first, second, ..) = reads_behind_three_programs(true, false);
    assert_eq!(
        first,
        tp + tr + x,
        "priority: behind the running program only"
    );
    // The second read senses after the first and its transfer follows the first's.
    assert_eq!(
        second,
        tp + tr + x + tr.max(x),
        "the second read follows the first"
    );
    // Suspend goes further (and takes precedence): no wait for the running program.
    let (suspended, ..) = reads_behind_three_programs(true, true);
    let from_program = suspended - tr - x;
    assert!(from_program < tp, "suspend: {suspended} ns");
}
