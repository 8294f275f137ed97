//! CPU per page read of the batched scan on a real file against the device's own 50-deep
//! reads: `cargo run --release -p engine --example scan_cpu -- DIR [ROUNDS] [all|scans|pace] [fixed|plain] [FACTOR] [RING] [inline|thread]`. Loads P2's quick
//! database (17.5 MB of 8 KiB pages, a 5 MB cache) into DIR/scan.dev, then alternates a
//! batched(50) scan at 20 % and as many random 50-deep page reads, printing each one's wall
//! and CPU (user + system) microseconds per page, and the share of the scan's wall time spent
//! inside the pager's reads (the rest: CPU between windows, the queue empty).
//!
//! `pace` adds, after each scan, the scan's own page sequence (the heap pages of the range's
//! records in key order, less those an LRU pool of the scan's size still holds) read by the
//! bare 50-deep queue, and by the device's read stream alone (windows of 50 awaited in order,
//! up to 320 pages started ahead, as the scan does, with no work on the pages): where the
//! scan's pace parts from the queue's, if not in its pages or in the stream.

use blockdev::{BlockDevice, FileDevice, FileOptions, PageBuf};
use engine::heap::{load, records_per_page, RECORD_BYTES};
use engine::scan::{range_scan, ScanMode};
use engine::Pager;
use std::collections::VecDeque;
use std::time::Instant;

const PB: usize = 8192;

/// This thread's CPU time so far (the kernel's scheduler accounting), in microseconds.
fn cpu_us() -> f64 {
    let s = std::fs::read_to_string("/proc/thread-self/schedstat").unwrap_or_default();
    s.split_whitespace()
        .next()
        .and_then(|t| t.parse::<f64>().ok())
        .unwrap_or(0.0)
        / 1e3
}

/// Reads completed and milliseconds spent reading, summed over the machine's disks
/// (`/proc/diskstats`; zeros where there is none): their quotient is the mean time a read spent
/// in the device's queue and service, which grows with the reads in flight there.
fn disk_reads() -> (f64, f64) {
    let s = std::fs::read_to_string("/proc/diskstats").unwrap_or_default();
    s.lines()
        .filter_map(|l| {
            let f: Vec<&str> = l.split_whitespace().collect();
            let whole =
                f.get(2)?.starts_with("vd") && !f[2].ends_with(|c: char| c.is_ascii_digit());
            whole.then(|| {
                Some((
                    f.get(3)?.parse::<f64>().ok()?,
                    f.get(6)?.parse::<f64>().ok()?,
                ))
            })?
        })
        .fold((0.0, 0.0), |a, b| (a.0 + b.0, a.1 + b.1))
}

/// The heap pages a scan of `lo..=hi` misses in an LRU pool of `frames` pages, in order.
fn scan_sequence(db: &engine::heap::Database, lo: u64, hi: u64, frames: usize) -> Vec<u64> {
    let mut keyed: Vec<(u64, u64)> = (0..db.records)
        .map(|id| (db.key_of(id), db.rid_of(id).page))
        .filter(|&(k, _)| (lo..=hi).contains(&k))
        .collect();
    keyed.sort_unstable();
    let (mut lru, mut seq) = (VecDeque::new(), Vec::new());
    for (_, p) in keyed {
        if let Some(i) = lru.iter().position(|&q| q == p) {
            lru.remove(i);
        } else {
            seq.push(p);
        }
        lru.push_back(p);
        if lru.len() > frames {
            lru.pop_front();
        }
    }
    seq
}

/// One line: `what` over `pages` pages from wall `w0` and disk counters `d0`.
fn pace_line(what: &str, pages: usize, w0: Instant, d0: (f64, f64)) {
    let wall = w0.elapsed().as_secs_f64() * 1e6;
    let d1 = disk_reads();
    let (dr, dms) = (d1.0 - d0.0, d1.1 - d0.1);
    println!(
        "{what:6} {pages:6} pages  wall {:5.1} us/page  disk {:.3} ms/read  in flight {:.1}",
        wall / pages as f64,
        dms / dr.max(1.0),
        dms * 1e3 / wall
    );
}

/// `pages` through the device's read stream, 50 in flight, windows of 50 handed back in
/// order with up to 320 started ahead, nothing done with the pages.
fn stream_alone(
    dev: &mut dyn BlockDevice,
    pages: &[u64],
) -> Result<(), Box<dyn std::error::Error>> {
    let mut bufs: Vec<PageBuf> = (0..640).map(|_| PageBuf::zeroed(PB)).collect();
    let (w0, d0) = (Instant::now(), disk_reads());
    let s = dev.read_stream().ok_or("the device has no read stream")?;
    let (mut out, mut next, mut done, mut first) = (Vec::new(), 0, 0, None);
    while done < pages.len() {
        while next < pages.len() && next - done < 320 {
            let t = s.read_start(pages[next], bufs.pop().expect("a buffer"), 50);
            first.get_or_insert(t);
            next += 1;
        }
        let until = first.expect("a read started") + (done + 50).min(pages.len()) as u64;
        s.read_finish(until, &mut out)?;
        done += out.len();
        bufs.extend(out.drain(..).map(|(_, b)| b));
    }
    pace_line("stream", pages.len(), w0, d0);
    Ok(())
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let mut args = std::env::args().skip(1);
    let dir = std::path::PathBuf::from(args.next().ok_or("usage: scan_cpu DIR [ROUNDS]")?);
    let rounds: usize = args.next().map_or(Ok(3), |r| r.parse())?;
    let what = args.next();
    let scans_only = what.as_deref() == Some("scans");
    let pace = what.as_deref() == Some("pace");
    // `plain`: no io_uring fixed buffers nor fixed file (the baseline of those switches).
    let fixed = args.next().as_deref() != Some("plain");
    // P2's database divided by this (64: quick scale, 1: paper scale).
    let factor: u64 = args.next().map_or(Ok(64), |f| f.parse())?;
    // The ring's setup (`blockdev::RingSetup`'s names; default plain).
    let ring = args.next().unwrap_or_else(|| "plain".into());
    let ring_setup =
        blockdev::RingSetup::parse(&ring).ok_or("RING: plain, coop, defer or sqpoll")?;
    // `thread`: the read stream served by a reader thread (`FileOptions::read_thread`).
    let read_thread = args.next().as_deref() == Some("thread");
    let records = 1_120_000_000 / factor / RECORD_BYTES as u64;
    let heap = records.div_ceil(records_per_page(PB));
    let o = FileOptions {
        queue_depth: 64,
        fixed_buffers: fixed,
        fixed_file: fixed,
        ring_setup,
        read_thread,
        ..FileOptions::default()
    };
    let dev = FileDevice::create(&dir.join("scan.dev"), heap * 2 + 64, PB, o)?;
    let frames = 320_000_000 / factor as usize / PB;
    let mut pool = Pager::new(Box::new(dev), frames);
    let db = load(&mut pool, records, 256, 1)?;
    let (lo, hi) = (u64::MAX / 10 * 3, u64::MAX / 10 * 5);
    let seq = if pace {
        scan_sequence(&db, lo, hi, frames)
    } else {
        Vec::new()
    };
    for _ in 0..rounds {
        pool.clear()?;
        let (m0, r0, c0, w0) = (
            pool.stats().misses,
            pool.stats().read_ns,
            cpu_us(),
            Instant::now(),
        );
        let d0 = disk_reads();
        range_scan(&mut pool, &db, lo, hi, ScanMode::Batched(50))?;
        let d1 = disk_reads();
        let (dr, dms) = (d1.0 - d0.0, d1.1 - d0.1);
        let pages = (pool.stats().misses - m0) as f64;
        let (cpu, wall) = (cpu_us() - c0, w0.elapsed().as_secs_f64() * 1e6);
        let in_reads_us = (pool.stats().read_ns - r0) as f64 / 1e3;
        println!(
            "scan  {pages:6} pages  wall {:5.1} us/page  cpu {:5.2} us/page  in reads {:4.1} % of wall  disk {:.3} ms/read  in flight {:.1}",
            wall / pages,
            cpu / pages,
            100.0 * in_reads_us / wall,
            dms / dr.max(1.0),
            dms * 1e3 / wall
        );
        if scans_only {
            continue;
        }
        let mut dev = pool.into_device();
        let mut x = 12345u64;
        let mut it = (0..pages as u64).map(|_| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x % heap
        });
        let (c0, w0) = (cpu_us(), Instant::now());
        let d0 = disk_reads();
        dev.read_queued(&mut it, 50)?;
        let d1 = disk_reads();
        let (dr, dms) = (d1.0 - d0.0, d1.1 - d0.1);
        let (cpu, wall) = (cpu_us() - c0, w0.elapsed().as_secs_f64() * 1e6);
        println!(
            "queue {pages:6} pages  wall {:5.1} us/page  cpu {:5.2} us/page                      disk {:.3} ms/read  in flight {:.1}",
            wall / pages,
            cpu / pages,
            dms / dr.max(1.0),
            dms * 1e3 / wall
        );
        if pace {
            let (w0, d0) = (Instant::now(), disk_reads());
            dev.read_queued(&mut seq.iter().copied(), 50)?;
            pace_line("seq", seq.len(), w0, d0);
            stream_alone(dev.as_mut(), &seq)?;
        }
        pool = Pager::new(dev, frames);
    }
    Ok(())
}
