//! Paired rounds on a real file: the sync and batched(50) scans at 20 % each bracketed by fio
//! on the same file at the matching depth (fio QD1, sync, fio QD1; fio QD50, batched,
//! flashlab's own QD50 reads (`read_queued`), fio QD50), round after round. A shared machine's
//! disk rate drifts by more than the effect measured, so each scan is set against the mean of
//! the two fio runs around it (a drift that is linear over the phase cancels), each round's
//! share of fio's ratio is computed from figures taken seconds apart, and the report gives the
//! median and range over rounds instead of one pairing of a scan with a distant fio run. How
//! far the two fio runs around a scan differ is the noise floor of any one comparison; the
//! report gives it. Right after flashlab's own QD50 reads, the same number of random heap pages
//! is read 50 deep twice more through the device's read stream (the scan's read path): into 100
//! page buffers used in turn (about as fio and `read_queued` reuse 50 at once), then into as
//! many as the pool holds, used in turn (where the scan's reads land), so the round shows how
//! much of the scan's pace the destination memory alone costs on this disk. Where the kernel
//! has free hugetlb pages, each round ends with fio at QD1 and QD50 once more, its buffers on
//! huge pages (`--iomem=shmhuge`), the counterpart of flashlab's page images on huge pages
//! (`--huge-pages on`): fio at its defaults reads into 4 KiB pages, which costs it pace on a
//! virtual disk (docs/results/2026-11-29-p2-file-10.md), so the share against it is also given.

use super::{fio, timed_scan, FILE_NAME, PAGE_BYTES, PAPER_BATCH};
use crate::devices::DeviceKind;
use crate::report::{fmt_f, Table};
use anyhow::{anyhow, Result};
use blockdev::{BlockDevice, PageBuf};
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
    /// fio's QD1 IOPS: the mean of the runs right before and right after the sync scan.
    pub fio_iops_qd1: f64,
    /// fio's QD50 IOPS: the mean of the runs right before the batched scan and right after
    /// flashlab's own QD50 reads.
    pub fio_iops_qd50: f64,
    /// The bracketing runs (before / after): their quotient is the drift over the phase.
    pub fio_iops_qd1_before: f64,
    pub fio_iops_qd1_after: f64,
    pub fio_iops_qd50_before: f64,
    pub fio_iops_qd50_after: f64,
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
    /// As many random heap-page reads with 50 in flight through the device's read stream into
    /// 100 page buffers used in turn (the scan's read path, fio's few hot buffers), right
    /// after `flashlab_iops_qd50`.
    pub flashlab_stream_iops_qd50: f64,
    /// `flashlab_stream_iops_qd50` / `fio_iops_qd50`.
    pub flashlab_stream_over_fio_qd50: f64,
    /// The same through the read stream into as many page buffers as the pool holds, used in
    /// turn (the scan's destination memory), right after `flashlab_stream_iops_qd50`.
    pub flashlab_pool_iops_qd50: f64,
    /// `flashlab_pool_iops_qd50` / `fio_iops_qd50`.
    pub flashlab_pool_over_fio_qd50: f64,
    /// fio at QD1 and QD50 with its buffers on huge pages (`--iomem=shmhuge`), one run each
    /// as long as the round's sync and batched scans, after the round's other runs; absent
    /// where the kernel has too few free hugetlb pages (see [`FioShare::fio_huge`]).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub fio_huge_iops_qd1: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub fio_huge_iops_qd50: Option<f64>,
    /// `speedup` / (`fio_huge_iops_qd50` / `fio_huge_iops_qd1`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub share_of_fio_huge: Option<f64>,
    /// The batched scan's pages per second / `fio_huge_iops_qd50`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub batched_over_fio_huge_qd50: Option<f64>,
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
    /// Median over rounds and phases of |after / before − 1| of the two fio runs around a
    /// scan: how much the same fio run moves within seconds on this machine (the noise floor
    /// of one round's comparison).
    pub fio_drift_median: f64,
    /// `measured` when each round also ran fio with its buffers on huge pages, else why not.
    pub fio_huge: String,
    /// The median over rounds of `share_of_fio_huge` (absent when not measured).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub share_huge_median: Option<f64>,
}

/// Share of fio's ratio the real-file target asks of batched(50) at 20 %.
pub const FIO_SHARE_TARGET: f64 = 0.90;

/// The verdict of `pairs` on [`FIO_SHARE_TARGET`].
pub fn fio_share(pairs: &[FioPair], fio_huge: &Result<(), String>) -> FioShare {
    let (share_median, share_min, share_max) = spread(pairs, |p| p.share_of_fio);
    let huge: Vec<f64> = pairs.iter().filter_map(|p| p.share_of_fio_huge).collect();
    let share_huge_median = (!huge.is_empty()).then(|| median(huge));
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
        fio_drift_median: fio_drift_median(pairs),
        fio_huge: match fio_huge {
            Ok(()) => "measured".into(),
            Err(why) => format!("not measured: {why}"),
        },
        share_huge_median,
    }
}

/// The 1-minute load average, NaN where `/proc/loadavg` cannot be read.
fn load_avg_1min() -> f64 {
    std::fs::read_to_string("/proc/loadavg")
        .ok()
        .and_then(|s| s.split_whitespace().next()?.parse().ok())
        .unwrap_or(f64::NAN)
}

/// fio's runtime in milliseconds for a phase that took `seconds`: as long, within 0.5-10 s.
fn fio_ms(seconds: f64) -> u32 {
    (seconds * 1000.0).round().clamp(500.0, 10_000.0) as u32
}

/// |after / before − 1| of both phases' bracketing fio runs, over every round: the median.
fn fio_drift_median(pairs: &[FioPair]) -> f64 {
    let v: Vec<f64> = pairs
        .iter()
        .flat_map(|p| {
            [
                (p.fio_iops_qd1_after, p.fio_iops_qd1_before),
                (p.fio_iops_qd50_after, p.fio_iops_qd50_before),
            ]
        })
        .map(|(a, b)| (a / b.max(1e-12) - 1.0).abs())
        .collect();
    median(v)
}

/// The median of `v` (NaN when empty).
fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    match v.len() {
        0 => f64::NAN,
        n if n % 2 == 1 => v[n / 2],
        n => (v[n / 2 - 1] + v[n / 2]) / 2.0,
    }
}

/// The file device's pool and what a round needs beside it.
struct Rig<'a> {
    frames: usize,
    db: &'a Database,
    file: std::path::PathBuf,
    range: (u64, u64),
    rng: ChaCha8Rng,
    /// Whether fio can also read into huge pages here, or why not.
    fio_huge: Result<(), String>,
}

impl Rig<'_> {
    /// fio's IOPS at `qd` for as long as a phase of `seconds`.
    fn fio(&self, qd: usize, seconds: f64) -> Result<f64> {
        self.fio_into(qd, seconds, fio::Iomem::Malloc)
    }

    /// fio's IOPS at `qd` for `seconds`, its buffers where `iomem` says.
    fn fio_into(&self, qd: usize, seconds: f64, iomem: fio::Iomem) -> Result<f64> {
        let span = self.db.heap_pages * PAGE_BYTES as u64;
        let ms = fio_ms(seconds);
        fio::iops(&self.file, PAGE_BYTES, span, qd, ms, iomem).map_err(|o| match o {
            fio::FioOutcome::NotInstalled => anyhow!("fio is not installed"),
            fio::FioOutcome::Failed(why) => anyhow!("fio failed: {why}"),
            fio::FioOutcome::Measured(_) => anyhow!("fio: unexpected outcome"),
        })
    }

    /// The scan in `mode` at 20 % on a cold pool.
    fn scan(&self, pool: &mut Pager, mode: ScanMode) -> Result<super::Query> {
        timed_scan(pool, self.db, DeviceKind::File, self.range, mode, 0.20)
    }
}

/// `rounds` paired rounds on the file device under `pool` (scans over `range`; `frames` is
/// the pool's size, kept when the pool is rebuilt around its device); returns the pool, the
/// rounds, and whether fio also read into huge pages (or why not).
pub fn run(
    mut pool: Pager,
    frames: usize,
    db: &Database,
    dir: &Path,
    range: (u64, u64),
    rounds: usize,
    seed: u64,
) -> Result<(Pager, Vec<FioPair>, Result<(), String>)> {
    let mut rig = Rig {
        frames,
        db,
        file: dir.join(FILE_NAME),
        range,
        rng: ChaCha8Rng::seed_from_u64(seed),
        fio_huge: fio::huge_buffers_fit(PAPER_BATCH, PAGE_BYTES),
    };
    let mut out: Vec<FioPair> = Vec::with_capacity(rounds);
    for _ in 0..rounds {
        // The first fio run of a phase lasts as long as that phase took the round before.
        let (sync_s, batched_s) = out
            .last()
            .map_or((1.0, 1.0), |p| (p.sync_seconds, p.batched_seconds));
        let (next, pair) = round(pool, &mut rig, sync_s, batched_s)?;
        pool = next;
        out.push(pair);
    }
    Ok((pool, out, rig.fio_huge))
}

/// One round: fio QD1, sync, fio QD1; fio QD50, batched, flashlab QD50, fio QD50.
fn round(
    mut pool: Pager,
    rig: &mut Rig<'_>,
    sync_s: f64,
    batched_s: f64,
) -> Result<(Pager, FioPair)> {
    let load_avg_1min = load_avg_1min();
    let qd1_before = rig.fio(1, sync_s)?;
    let sync = rig.scan(&mut pool, ScanMode::Sync)?;
    let qd1_after = rig.fio(1, sync.seconds)?;
    let qd50_before = rig.fio(PAPER_BATCH, batched_s)?;
    let batched = rig.scan(&mut pool, ScanMode::Batched(PAPER_BATCH))?;
    let mut dev = pool.into_device();
    let (heap, ios) = (rig.db.heap_pages, batched.pages_read);
    let flashlab_iops_qd50 = queued_iops(dev.as_mut(), heap, ios, &mut rig.rng)?;
    let hot = 2 * PAPER_BATCH;
    let hot_iops = stream_iops(dev.as_mut(), heap, ios, hot, &mut rig.rng)?;
    let pool_iops = stream_iops(dev.as_mut(), heap, ios, rig.frames, &mut rig.rng)?;
    let pool = Pager::new(dev, rig.frames);
    let qd50_after = rig.fio(PAPER_BATCH, batched.seconds)?;
    let huge = match rig.fio_huge {
        Ok(()) => Some((
            rig.fio_into(1, sync.seconds, fio::Iomem::ShmHuge)?,
            rig.fio_into(PAPER_BATCH, batched.seconds, fio::Iomem::ShmHuge)?,
        )),
        Err(_) => None,
    };
    let fio = Bracketed {
        qd1: (qd1_before, qd1_after),
        qd50: (qd50_before, qd50_after),
        huge,
    };
    let own = [flashlab_iops_qd50, hot_iops, pool_iops];
    let pair = FioPair::of(&sync, &batched, fio, own, load_avg_1min);
    Ok((pool, pair))
}

/// fio's IOPS (before, after) around each phase of a round.
#[derive(Clone, Copy, Debug)]
struct Bracketed {
    qd1: (f64, f64),
    qd50: (f64, f64),
    /// fio on huge pages, (QD1, QD50), one run each, where measured.
    huge: Option<(f64, f64)>,
}

impl FioPair {
    /// A round's figures: each scan set against the mean of the fio runs around it.
    fn of(
        sync: &super::Query,
        batched: &super::Query,
        fio: Bracketed,
        [flashlab_iops_qd50, flashlab_stream_iops_qd50, flashlab_pool_iops_qd50]: [f64; 3],
        load_avg_1min: f64,
    ) -> FioPair {
        let fio_iops_qd1 = (fio.qd1.0 + fio.qd1.1) / 2.0;
        let fio_iops_qd50 = (fio.qd50.0 + fio.qd50.1) / 2.0;
        let speedup = sync.seconds / batched.seconds.max(1e-12);
        let fio_ratio = fio_iops_qd50 / fio_iops_qd1.max(1e-12);
        let pages_per_s = |q: &super::Query| q.pages_read as f64 / q.seconds.max(1e-12);
        FioPair {
            sync_seconds: sync.seconds,
            batched_seconds: batched.seconds,
            speedup,
            fio_iops_qd1,
            fio_iops_qd50,
            fio_iops_qd1_before: fio.qd1.0,
            fio_iops_qd1_after: fio.qd1.1,
            fio_iops_qd50_before: fio.qd50.0,
            fio_iops_qd50_after: fio.qd50.1,
            fio_ratio,
            share_of_fio: speedup / fio_ratio.max(1e-12),
            sync_over_fio_qd1: pages_per_s(sync) / fio_iops_qd1.max(1e-12),
            batched_over_fio_qd50: pages_per_s(batched) / fio_iops_qd50.max(1e-12),
            flashlab_iops_qd50,
            flashlab_over_fio_qd50: flashlab_iops_qd50 / fio_iops_qd50.max(1e-12),
            flashlab_stream_iops_qd50,
            flashlab_stream_over_fio_qd50: flashlab_stream_iops_qd50 / fio_iops_qd50.max(1e-12),
            flashlab_pool_iops_qd50,
            flashlab_pool_over_fio_qd50: flashlab_pool_iops_qd50 / fio_iops_qd50.max(1e-12),
            fio_huge_iops_qd1: fio.huge.map(|h| h.0),
            fio_huge_iops_qd50: fio.huge.map(|h| h.1),
            share_of_fio_huge: fio
                .huge
                .map(|(q1, q50)| speedup / (q50 / q1.max(1e-12)).max(1e-12)),
            batched_over_fio_huge_qd50: fio
                .huge
                .map(|(_, q50)| pages_per_s(batched) / q50.max(1e-12)),
            load_avg_1min,
        }
    }
}

/// `ios` (at least one batch) pages drawn at random from the heap's first `heap_pages`.
fn random_heap_pages(
    dev: &dyn BlockDevice,
    heap_pages: u64,
    ios: u64,
    rng: &mut ChaCha8Rng,
) -> Vec<u64> {
    let span = heap_pages.clamp(1, dev.capacity_pages());
    (0..ios.max(PAPER_BATCH as u64))
        .map(|_| rng.gen_range(0..span))
        .collect()
}

/// IOPS of `ios` random heap-page reads kept 50 in flight on `dev`.
fn queued_iops(
    dev: &mut dyn BlockDevice,
    heap_pages: u64,
    ios: u64,
    rng: &mut ChaCha8Rng,
) -> Result<f64> {
    let pages = random_heap_pages(dev, heap_pages, ios, rng);
    let wall = Instant::now();
    let done = dev.read_queued(&mut pages.into_iter(), PAPER_BATCH)?;
    Ok(done as f64 / wall.elapsed().as_secs_f64().max(1e-12))
}

/// IOPS of `ios` random heap-page reads kept 50 in flight through `dev`'s read stream into
/// `frames` page buffers (at least two batches') used in turn, oldest first: with the pool's
/// frame count, as the scan's reads land in its frames (each buffer read into again only after
/// all the others); with 100, about as `read_queued` and fio reuse 50 at once. Windows of 50 are handed back in order, up
/// to `frames` reads started. NaN on a device without a stream.
fn stream_iops(
    dev: &mut dyn BlockDevice,
    heap_pages: u64,
    ios: u64,
    frames: usize,
    rng: &mut ChaCha8Rng,
) -> Result<f64> {
    let page_bytes = dev.page_bytes();
    let pages = random_heap_pages(dev, heap_pages, ios, rng);
    let Some(stream) = dev.read_stream() else {
        return Ok(f64::NAN);
    };
    let mut bufs: std::collections::VecDeque<PageBuf> = (0..frames.max(2 * PAPER_BATCH))
        .map(|_| PageBuf::zeroed(page_bytes))
        .collect();
    let (mut out, mut next, mut done, mut first) = (Vec::new(), 0, 0, None);
    let wall = Instant::now();
    while done < pages.len() {
        while next < pages.len() {
            let Some(buf) = bufs.pop_front() else { break };
            let t = stream.read_start(pages[next], buf, PAPER_BATCH);
            first.get_or_insert(t);
            next += 1;
        }
        let first = first.expect("a read started");
        stream.read_finish(
            first + (done + PAPER_BATCH).min(pages.len()) as u64,
            &mut out,
        )?;
        assert!(!out.is_empty(), "a window of reads handed back");
        done += out.len();
        bufs.extend(out.drain(..).map(|(_, b)| b));
    }
    assert_eq!(done, pages.len(), "every read handed back once");
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
        format!("Real file, paired rounds: batched({PAPER_BATCH}) vs sync at 20 % beside fio's QD{PAPER_BATCH}/QD1, each the mean of fio runs right before and right after its scan"),
        &["round", "load", "sync s", "batched s", "speedup", "fio QD1", "fio QD50", "fio ratio", "share of fio", "sync / fio QD1", "batched / fio QD50", "flashlab QD50", "flashlab / fio QD50", "stream, 100 buffers / fio QD50", "stream, pool's memory / fio QD50", "share of fio on huge pages"],
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
            format!("{:.0} %", 100.0 * p.flashlab_stream_over_fio_qd50),
            format!("{:.0} %", 100.0 * p.flashlab_pool_over_fio_qd50),
            p.share_of_fio_huge
                .map_or_else(|| "-".into(), |s| format!("{:.0} %", 100.0 * s)),
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
        format!(
            "{:.0} %",
            100.0 * spread(pairs, |p| p.flashlab_stream_over_fio_qd50).0
        ),
        format!(
            "{:.0} %",
            100.0 * spread(pairs, |p| p.flashlab_pool_over_fio_qd50).0
        ),
        {
            let huge: Vec<f64> = pairs.iter().filter_map(|p| p.share_of_fio_huge).collect();
            if huge.is_empty() {
                "-".into()
            } else {
                format!("{:.0} %", 100.0 * median(huge))
            }
        },
    ]);
    t.push(vec![
        "fio drift".into(),
        String::new(),
        String::new(),
        String::new(),
        String::new(),
        String::new(),
        String::new(),
        format!("{:.0} %", 100.0 * fio_drift_median(pairs)),
        String::new(),
        String::new(),
        String::new(),
        String::new(),
        String::new(),
        String::new(),
        String::new(),
        String::new(),
    ]);
    t.define("load = the machine's 1-minute load average as the round began (2 cores: timings under load stretch with it)");
    t.define("each round: fio at QD1, the sync scan at 20 % (cold pool), fio at QD1 again; fio at QD50, the batched(50) scan (cold pool), flashlab's own 50-deep random reads (as many as the scan read), fio at QD50 again; each fio run as long as its phase took (0.5-10 s; the first run of a phase: as long as the round before, 1 s in round 1); fio QD1 / QD50 = the mean of the two runs around the scan; fio = io_uring, O_DIRECT, randread over the heap's pages of the same file");
    t.define("share of fio on huge pages = speedup / (fio QD50 / fio QD1), both fio runs with their buffers on the kernel's reserved huge pages (--iomem=shmhuge, one run each after the round's others), as flashlab's page images are with --huge-pages on; - where the kernel has too few free hugetlb pages (vm.nr_hugepages)");
    t.define("fio drift = |after / before - 1| of the two fio runs around a scan (both phases, median over rounds): how far one fio run moves within seconds here, the noise floor of one round's comparison");
    t.define("speedup = sync s / batched s; fio ratio = fio QD50 / fio QD1 IOPS; share of fio = speedup / fio ratio = (batched / fio QD50) / (sync / fio QD1), sync and batched being the pages each scan read per second (above 100 % when the sync scan ran slower than fio's QD1 reads); flashlab / fio QD50 = flashlab's 50-deep IOPS over fio's taken right after; median row: median (min-max) over rounds");
    t
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Each scan is set against the mean of the fio runs before and after it; the share is
    /// the speedup over fio's ratio of those means.
    #[test]
    fn a_round_sets_each_scan_against_the_mean_of_the_fio_runs_around_it() {
        let q = |mode, seconds, pages_read| super::super::Query {
            device: DeviceKind::File,
            mode,
            selectivity: 0.2,
            seconds,
            rows: 0,
            pages_read,
        };
        let sync = q(ScanMode::Sync, 2.0, 20_000);
        let batched = q(ScanMode::Batched(PAPER_BATCH), 0.5, 20_000);
        let fio = Bracketed {
            qd1: (8_000.0, 12_000.0),
            qd50: (30_000.0, 50_000.0),
            huge: None,
        };
        let p = FioPair::of(&sync, &batched, fio, [44_000.0, 42_000.0, 36_000.0], 3.0);
        assert_eq!((p.fio_iops_qd1, p.fio_iops_qd50), (10_000.0, 40_000.0));
        assert_eq!((p.speedup, p.fio_ratio, p.share_of_fio), (4.0, 4.0, 1.0));
        assert_eq!((p.sync_over_fio_qd1, p.batched_over_fio_qd50), (1.0, 1.0));
        assert_eq!(p.flashlab_over_fio_qd50, 1.1);
        assert_eq!(p.flashlab_pool_over_fio_qd50, 0.9);
        assert_eq!(p.flashlab_stream_over_fio_qd50, 1.05);
        assert_eq!(
            (p.fio_iops_qd1_before, p.fio_iops_qd50_after),
            (8_000.0, 50_000.0)
        );
        assert_eq!(
            (p.share_of_fio_huge, p.batched_over_fio_huge_qd50),
            (None, None)
        );
        let json = serde_json::to_value(&p).unwrap();
        assert!(json.get("fio_huge_iops_qd50").is_none(), "absent, not null");
        // fio on huge pages: 10,000 at QD1 and 50,000 at QD50, a ratio of 5.
        let huge = Bracketed {
            huge: Some((10_000.0, 50_000.0)),
            ..fio
        };
        let h = FioPair::of(&sync, &batched, huge, [44_000.0, 42_000.0, 36_000.0], 3.0);
        assert_eq!(h.share_of_fio_huge, Some(0.8));
        assert_eq!(h.batched_over_fio_huge_qd50, Some(0.8));
        assert_eq!(
            h.share_of_fio, 1.0,
            "the default share is fio's at its defaults"
        );
        let v = fio_share(&[h.clone(), p.clone(), h], &Ok(()));
        assert_eq!(
            (v.fio_huge.as_str(), v.share_huge_median),
            ("measured", Some(0.8))
        );
        let v = fio_share(&[p], &Err("0 free hugetlb pages".into()));
        assert_eq!(v.share_huge_median, None);
        assert_eq!(v.fio_huge, "not measured: 0 free hugetlb pages");
    }

    #[test]
    fn spread_gives_median_and_range_and_fio_runs_as_long_as_the_scan() {
        let p = |s: f64| FioPair {
            sync_seconds: 1.0,
            batched_seconds: 1.0,
            speedup: 1.0,
            fio_iops_qd1: 1.0,
            fio_iops_qd50: 1.0,
            fio_iops_qd1_before: 1.0,
            fio_iops_qd1_after: 1.0 + s,
            fio_iops_qd50_before: 2.0,
            fio_iops_qd50_after: 2.0,
            fio_ratio: 1.0,
            share_of_fio: s,
            sync_over_fio_qd1: 1.0,
            batched_over_fio_qd50: 1.0,
            flashlab_iops_qd50: 1.0,
            flashlab_over_fio_qd50: 1.0,
            flashlab_stream_iops_qd50: 1.0,
            flashlab_stream_over_fio_qd50: 1.0,
            flashlab_pool_iops_qd50: 1.0,
            flashlab_pool_over_fio_qd50: 0.5 + s,
            fio_huge_iops_qd1: None,
            fio_huge_iops_qd50: None,
            share_of_fio_huge: None,
            batched_over_fio_huge_qd50: None,
            load_avg_1min: 2.0 * s,
        };
        let pairs = [p(0.9), p(0.7), p(0.8)];
        assert_eq!(spread(&pairs, |p| p.share_of_fio), (0.8, 0.7, 0.9));
        assert_eq!(spread(&pairs[..2], |p| p.share_of_fio).0, 0.8);
        assert!(spread(&[], |p| p.share_of_fio).0.is_nan());
        assert_eq!(
            (fio_ms(0.2), fio_ms(2.3456), fio_ms(99.0)),
            (500, 2346, 10_000)
        );
        // Drifts: QD1 0.9, 0.7, 0.8 and QD50 0, 0, 0: the median of six.
        assert!((fio_drift_median(&pairs) - 0.35).abs() < 1e-12);
        assert!((fio_share(&pairs, &Ok(())).fio_drift_median - 0.35).abs() < 1e-12);
        assert!(fio_drift_median(&[]).is_nan());
        let t = table(&pairs).to_string();
        assert!(t.contains("80 % (70-90)"), "{t}");
        assert!(t.contains("fio drift") && t.contains("35 %"), "{t}");
        assert!(t.contains("pool's memory") && t.contains("130 %"), "{t}");
        let v = fio_share(&pairs, &Ok(()));
        assert_eq!((v.verdict, v.rounds, v.share_median), ("missed", 3, 0.8));
        assert_eq!((v.load_avg_1min_min, v.load_avg_1min_max), (1.4, 1.8));
        assert_eq!(
            fio_share(&[p(0.95), p(0.5), p(0.9)], &Ok(())).verdict,
            "met"
        );
        assert_eq!(
            fio_share(&[p(0.95), p(0.5), p(0.89)], &Ok(())).verdict,
            "missed"
        );
        assert_eq!(fio_share(&[], &Ok(())).verdict, "not run");
    }
}
