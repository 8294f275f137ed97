//! Paired rounds on a real file: the sync and batched(50) scans at 20 % each followed at once
//! by fio on the same file at the matching depth (QD1 after sync, QD50 after batched), and
//! flashlab's own QD50 reads (`read_queued`) beside fio's, round after round (A B A B). A
//! shared machine's disk rate drifts by more than the effect measured, so each round's share
//! of fio's ratio is computed from figures taken seconds apart, and the report gives the
//! median and range over rounds instead of one pairing of a scan with a distant fio run.

use super::{fio, timed_scan, FILE_NAME, PAGE_BYTES, PAPER_BATCH};
use crate::devices::DeviceKind;
use crate::report::{fmt_f, Table};
use anyhow::{anyhow, Result};
use blockdev::BlockDevice;
use engine::heap::Database;
use engine::scan::ScanMode;
use engine::Pager;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use serde::Serialize;
use std::path::Path;
use std::time::Instant;

/// One round (all figures of this run, seconds apart).
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct FioPair {
    pub sync_seconds: f64,
    pub batched_seconds: f64,
    /// sync / batched seconds.
    pub speedup: f64,
    pub fio_iops_qd1: f64,
    pub fio_iops_qd50: f64,
    /// fio's QD50 / QD1 IOPS.
    pub fio_ratio: f64,
    /// `speedup` / `fio_ratio`.
    pub share_of_fio: f64,
    /// Pages each scan read per second, over fio's IOPS at the matching depth: where the share
    /// comes from (the sync scan's pace against fio's QD1, the batched one's against QD50).
    pub sync_over_fio_qd1: f64,
    pub batched_over_fio_qd50: f64,
    /// flashlab's random heap-page reads with 50 in flight (`read_queued`), right before fio's QD50.
    pub flashlab_iops_qd50: f64,
    /// `flashlab_iops_qd50` / `fio_iops_qd50`.
    pub flashlab_over_fio_qd50: f64,
    /// The machine's 1-minute load average as the round began (`/proc/loadavg`; NaN where
    /// there is none): a shared machine's timings are read beside it.
    pub load_avg_1min: f64,
}

/// The paired rounds' verdict on the real-file target: batched(50) at 20 % reaches at least
/// `target` of fio's QD50/QD1 ratio, judged on the median over rounds of each round's share
/// (a round's figures are seconds apart, so a drifting disk weighs on both sides of it).
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct FioShare {
    pub rounds: usize,
    pub share_median: f64,
    pub share_min: f64,
    pub share_max: f64,
    pub target: f64,
    /// `met` (median ≥ target), `missed`, or `not run` (no round).
    pub verdict: &'static str,
    pub load_avg_1min_min: f64,
    pub load_avg_1min_max: f64,
}

/// Share of fio's ratio the real-file target asks of batched(50) at 20 %.
pub const FIO_SHARE_TARGET: f64 = 0.90;

/// The verdict of `pairs` on [`FIO_SHARE_TARGET`].
pub fn fio_share(pairs: &[FioPair]) -> FioShare {
    let (share_median, share_min, share_max) = spread(pairs, |p| p.share_of_fio);
    let (_, load_min, load_max) = spread(pairs, |p| p.load_avg_1min);
    let verdict = match share_median {
        m if m.is_nan() => "not run",
        m if m >= FIO_SHARE_TARGET => "met",
        _ => "missed",
    };
    FioShare {
        rounds: pairs.len(),
        share_median,
        share_min,
        share_max,
        target: FIO_SHARE_TARGET,
        verdict,
        load_avg_1min_min: load_min,
        load_avg_1min_max: load_max,
    }
}

/// The 1-minute load average, NaN where `/proc/loadavg` cannot be read.
fn load_avg_1min() -> f64 {
    std::fs::read_to_string("/proc/loadavg")
        .ok()
        .and_then(|s| s.split_whitespace().next()?.parse().ok())
        .unwrap_or(f64::NAN)
}

/// fio's runtime for a phase that took `seconds`: as long, within 1..=10 s.
fn fio_seconds(seconds: f64) -> u32 {
    seconds.ceil().clamp(1.0, 10.0) as u32
}

/// `rounds` paired rounds on the file device under `pool` (scans over `range`; `frames` is
/// the pool's size, kept when the pool is rebuilt around its device); returns the pool.
pub fn run(
    mut pool: Pager,
    frames: usize,
    db: &Database,
    dir: &Path,
    range: (u64, u64),
    rounds: usize,
    seed: u64,
) -> Result<(Pager, Vec<FioPair>)> {
    let file = dir.join(FILE_NAME);
    let span = db.heap_pages * PAGE_BYTES as u64;
    let fio_at = |qd: usize, seconds: f64| {
        fio::iops(&file, PAGE_BYTES, span, qd, fio_seconds(seconds)).map_err(|o| match o {
            fio::FioOutcome::NotInstalled => anyhow!("fio is not installed"),
            fio::FioOutcome::Failed(why) => anyhow!("fio failed: {why}"),
            fio::FioOutcome::Measured(_) => anyhow!("fio: unexpected outcome"),
        })
    };
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let mut out = Vec::with_capacity(rounds);
    for _ in 0..rounds {
        let load_avg_1min = load_avg_1min();
        let f = DeviceKind::File;
        let sync = timed_scan(&mut pool, db, f, range, ScanMode::Sync, 0.20)?;
        let fio_iops_qd1 = fio_at(1, sync.seconds)?;
        let batched = timed_scan(
            &mut pool,
            db,
            f,
            range,
            ScanMode::Batched(PAPER_BATCH),
            0.20,
        )?;
        let mut dev = pool.into_device();
        let ios = batched.pages_read;
        let flashlab_iops_qd50 = queued_iops(dev.as_mut(), db.heap_pages, ios, &mut rng)?;
        pool = Pager::new(dev, frames);
        let fio_iops_qd50 = fio_at(PAPER_BATCH, batched.seconds)?;
        let speedup = sync.seconds / batched.seconds.max(1e-12);
        let fio_ratio = fio_iops_qd50 / fio_iops_qd1.max(1e-12);
        out.push(FioPair {
            sync_seconds: sync.seconds,
            batched_seconds: batched.seconds,
            speedup,
            fio_iops_qd1,
            fio_iops_qd50,
            fio_ratio,
            share_of_fio: speedup / fio_ratio.max(1e-12),
            sync_over_fio_qd1: sync.pages_read as f64
                / sync.seconds.max(1e-12)
                / fio_iops_qd1.max(1e-12),
            batched_over_fio_qd50: ios as f64
                / batched.seconds.max(1e-12)
                / fio_iops_qd50.max(1e-12),
            flashlab_iops_qd50,
            flashlab_over_fio_qd50: flashlab_iops_qd50 / fio_iops_qd50.max(1e-12),
            load_avg_1min,
        });
    }
    Ok((pool, out))
}

/// IOPS of `ios` random heap-page reads kept 50 in flight on `dev`.
fn queued_iops(
    dev: &mut dyn BlockDevice,
    heap_pages: u64,
    ios: u64,
    rng: &mut ChaCha8Rng,
) -> Result<f64> {
    let span = heap_pages.clamp(1, dev.capacity_pages());
    let pages: Vec<u64> = (0..ios.max(PAPER_BATCH as u64))
        .map(|_| rng.gen_range(0..span))
        .collect();
    let wall = Instant::now();
    let done = dev.read_queued(&mut pages.into_iter(), PAPER_BATCH)?;
    Ok(done as f64 / wall.elapsed().as_secs_f64().max(1e-12))
}

/// (median, min, max) of `f` over `pairs`.
pub fn spread(pairs: &[FioPair], f: impl Fn(&FioPair) -> f64) -> (f64, f64, f64) {
    let mut v: Vec<f64> = pairs.iter().map(f).collect();
    v.sort_by(f64::total_cmp);
    let n = v.len();
    if n == 0 {
        return (f64::NAN, f64::NAN, f64::NAN);
    }
    let median = if n % 2 == 1 {
        v[n / 2]
    } else {
        (v[n / 2 - 1] + v[n / 2]) / 2.0
    };
    (median, v[0], v[n - 1])
}

/// One row per round, then the medians.
pub fn table(pairs: &[FioPair]) -> Table {
    let mut t = Table::new(
        format!("Real file, paired rounds: batched({PAPER_BATCH}) vs sync at 20 % beside fio's QD{PAPER_BATCH}/QD1, each taken right after its scan"),
        &["round", "load", "sync s", "batched s", "speedup", "fio QD1", "fio QD50", "fio ratio", "share of fio", "sync / fio QD1", "batched / fio QD50", "flashlab QD50", "flashlab / fio QD50"],
    );
    for (i, p) in pairs.iter().enumerate() {
        t.push(vec![
            (i + 1).to_string(),
            fmt_f(p.load_avg_1min, 1),
            fmt_f(p.sync_seconds, 3),
            fmt_f(p.batched_seconds, 3),
            format!("{:.2}x", p.speedup),
            fmt_f(p.fio_iops_qd1, 0),
            fmt_f(p.fio_iops_qd50, 0),
            format!("{:.2}x", p.fio_ratio),
            format!("{:.0} %", 100.0 * p.share_of_fio),
            format!("{:.0} %", 100.0 * p.sync_over_fio_qd1),
            format!("{:.0} %", 100.0 * p.batched_over_fio_qd50),
            fmt_f(p.flashlab_iops_qd50, 0),
            format!("{:.0} %", 100.0 * p.flashlab_over_fio_qd50),
        ]);
    }
    let (share, lo, hi) = spread(pairs, |p| p.share_of_fio);
    let (own, own_lo, own_hi) = spread(pairs, |p| p.flashlab_over_fio_qd50);
    t.push(vec![
        "median".into(),
        String::new(),
        String::new(),
        String::new(),
        format!("{:.2}x", spread(pairs, |p| p.speedup).0),
        String::new(),
        String::new(),
        format!("{:.2}x", spread(pairs, |p| p.fio_ratio).0),
        format!(
            "{:.0} % ({:.0}-{:.0})",
            100.0 * share,
            100.0 * lo,
            100.0 * hi
        ),
        format!("{:.0} %", 100.0 * spread(pairs, |p| p.sync_over_fio_qd1).0),
        format!(
            "{:.0} %",
            100.0 * spread(pairs, |p| p.batched_over_fio_qd50).0
        ),
        String::new(),
        format!(
            "{:.0} % ({:.0}-{:.0})",
            100.0 * own,
            100.0 * own_lo,
            100.0 * own_hi
        ),
    ]);
    t.define("load = the machine's 1-minute load average as the round began (2 cores: timings under load stretch with it)");
    t.define("each round: the sync scan at 20 % (cold pool), fio at QD1 for as long (1-10 s), the batched(50) scan (cold pool), flashlab's own 50-deep random reads (as many as the scan read), fio at QD50 for as long as the scan; fio = io_uring, O_DIRECT, randread over the heap's pages of the same file");
    t.define("speedup = sync s / batched s; fio ratio = fio QD50 / fio QD1 IOPS; share of fio = speedup / fio ratio = (batched / fio QD50) / (sync / fio QD1), sync and batched being the pages each scan read per second (above 100 % when the sync scan ran slower than fio's QD1 reads); flashlab / fio QD50 = flashlab's 50-deep IOPS over fio's taken right after; median row: median (min-max) over rounds");
    t
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn spread_gives_median_and_range_and_fio_runs_as_long_as_the_scan() {
        let p = |s: f64| FioPair {
            sync_seconds: 1.0,
            batched_seconds: 1.0,
            speedup: 1.0,
            fio_iops_qd1: 1.0,
            fio_iops_qd50: 1.0,
            fio_ratio: 1.0,
            share_of_fio: s,
            sync_over_fio_qd1: 1.0,
            batched_over_fio_qd50: 1.0,
            flashlab_iops_qd50: 1.0,
            flashlab_over_fio_qd50: 1.0,
            load_avg_1min: 2.0 * s,
        };
        let pairs = [p(0.9), p(0.7), p(0.8)];
        assert_eq!(spread(&pairs, |p| p.share_of_fio), (0.8, 0.7, 0.9));
        assert_eq!(spread(&pairs[..2], |p| p.share_of_fio).0, 0.8);
        assert!(spread(&[], |p| p.share_of_fio).0.is_nan());
        assert_eq!(
            (fio_seconds(0.2), fio_seconds(2.3), fio_seconds(99.0)),
            (1, 3, 10)
        );
        let t = table(&pairs).to_string();
        assert!(t.contains("80 % (70-90)"), "{t}");
        let v = fio_share(&pairs);
        assert_eq!((v.verdict, v.rounds, v.share_median), ("missed", 3, 0.8));
        assert_eq!((v.load_avg_1min_min, v.load_avg_1min_max), (1.4, 1.8));
        assert_eq!(fio_share(&[p(0.95), p(0.5), p(0.9)]).verdict, "met");
        assert_eq!(fio_share(&[p(0.95), p(0.5), p(0.89)]).verdict, "missed");
        assert_eq!(fio_share(&[]).verdict, "not run");
    }
}
