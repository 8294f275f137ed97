//! The measured reason behind each of P3's claims on this run's trace: every number here comes
//! from the run's rows (and their ledgers, `ledger.rs`) or from the trace's one-pass LRU curve
//! (reuse distances), never typed in. Each reason becomes a note of the report, and the note of
//! the claim it explains where that claim is not reproduced.
//!
//! - speed-up over disks alone: P3's cost model charges every dirty victim a disk write
//!   whatever the flash holds, so the write-backs' share `w` of disks-alone time caps any
//!   extended buffer's speed-up at `1/w - 1` (P3's > 200 % needs `w < 1/3`); and the same claim
//!   under the other write-back rule ([`WriteBack::AtFlashExit`]).
//! - extended hit ratio: first references (cold misses) are misses no flash can serve; the
//!   reuse distances say how much flash a log needs to reach P3's 60 %.
//! - best policy: 2Q's filter on this trace (2q vs lru without flash), and lru-ext vs 2q-flash
//!   at the largest flash, page move by page move, with each log's read-back rate.
//! - plateaus: how many main misses still have their reuse distance beyond each flash size.
//! - the same money on DRAM: the write-backs 2q-flash keeps (main stays 4 %) and DRAM removes.

use super::ledger::{LedgerKeys, WriteBack};
use super::{of_figure, ExtBufferRow, MAIN_PCT};
use crate::buffer_sim::CostModel;
use crate::claim::{Claim, Verdict};
use policy::LruCurve;

/// What the reasons are computed from.
pub(super) struct Inputs<'a> {
    pub rows: &'a [ExtBufferRow],
    pub curve: &'a LruCurve,
    pub db_pages: usize,
    pub main_pages: usize,
}

/// One reason per claim family (module docs).
pub(super) struct Reasons {
    pub speedup: String,
    pub ext_hit: String,
    pub best: String,
    pub plateau: String,
    pub dram: String,
    pub mechanisms: String,
}

impl Reasons {
    pub fn notes(&self) -> Vec<String> {
        [
            ("speed-up", &self.speedup),
            ("extended hit ratio", &self.ext_hit),
            ("best policy", &self.best),
            ("plateaus", &self.plateau),
            ("same money on DRAM", &self.dram),
            ("model mechanisms", &self.mechanisms),
        ]
        .iter()
        .map(|(k, v)| format!("why ({k}, measured): {v}"))
        .collect()
    }

    /// Append the measured reason to the note of each claim that is not reproduced.
    pub fn annotate(&self, claims: &mut [Claim]) {
        for c in claims
            .iter_mut()
            .filter(|c| c.verdict != Verdict::Reproduced)
        {
            let why = if c.claim.starts_with("every extended-buffer policy faster") {
                &self.speedup
            } else if c.claim.starts_with("extended-buffer hit ratio") {
                &self.ext_hit
            } else if c.claim.starts_with("best extended-buffer") {
                &self.best
            } else if c.claim.contains("stops improving") {
                &self.plateau
            } else if c.claim.starts_with("2Q-Flash vs the same money") {
                &self.dram
            } else {
                continue;
            };
            c.note = format!("{}; measured: {why}", c.note);
        }
    }
}

fn pct(a: f64, b: f64) -> f64 {
    100.0 * a / b.max(1e-12)
}

fn ext_rows<'a>(rows: &'a [ExtBufferRow], policy: &'a str) -> Vec<&'a ExtBufferRow> {
    of_figure(rows, "fig3-5")
        .filter(|r| r.counts.policy == policy && r.flash_pct > 0.0)
        .collect()
}

/// Elapsed time under `rule` (P3's counts with the flash-exit rule's disk writes instead).
pub(super) fn elapsed_ms(r: &ExtBufferRow, rule: WriteBack) -> f64 {
    let cost = CostModel::default();
    match (rule, &r.ledger) {
        (WriteBack::AtFlashExit, Some(k)) => {
            let saved = r.counts.disk_writes - k.disk_writes_at_flash_exit;
            r.counts.elapsed_ms - saved as f64 * cost.disk_op_ms()
        }
        _ => r.counts.elapsed_ms,
    }
}

pub(super) fn reasons(i: &Inputs<'_>) -> Option<Reasons> {
    let disks_alone = of_figure(i.rows, "fig3-5").find(|r| r.counts.policy == "lru")?;
    Some(Reasons {
        speedup: speedup(i, disks_alone),
        ext_hit: ext_hit(i),
        best: best(i),
        plateau: plateau(i),
        dram: dram(i),
        mechanisms: mechanisms(i),
    })
}

fn speedup(i: &Inputs<'_>, alone: &ExtBufferRow) -> String {
    let c = &alone.counts;
    let w = c.disk_writes as f64 / (c.disk_reads + c.disk_writes).max(1) as f64;
    let evictions = c.misses.saturating_sub(i.main_pages as u64);
    let base = alone.counts.elapsed_ms;
    let speed = |e: f64| (base / e.max(1e-9) - 1.0) * 100.0;
    let range = |rule| {
        let v: Vec<f64> = of_figure(i.rows, "fig3-5")
            .filter(|r| r.flash_pct > 0.0 && r.ledger.is_some())
            .map(|r| speed(elapsed_ms(r, rule)))
            .collect();
        let lo = v.iter().copied().fold(f64::INFINITY, f64::min);
        let hi = v.iter().copied().fold(f64::NEG_INFINITY, f64::max);
        format!("{lo:.1}–{hi:.1} %")
    };
    let two_q: Vec<f64> = of_figure(i.rows, "fig3-5")
        .filter(|r| r.flash_pct > 0.0 && r.counts.policy.starts_with("2q"))
        .map(|r| pct(r.counts.disk_writes as f64, c.disk_writes as f64))
        .collect();
    let lo = two_q.iter().copied().fold(f64::INFINITY, f64::min);
    let hi = two_q.iter().copied().fold(f64::NEG_INFINITY, f64::max);
    format!(
        "{:.1} % of references dirty a page; with lru on disks alone {:.1} % of main's victims are dirty, and their write-backs are {:.1} % of the disks-alone time; P3 charges each a disk write whatever the flash holds, so lru-ext (whose main buffer evicts as lru's) cannot be more than {:.0} % faster (1/w - 1, with free flash; the 2Q policies write back {lo:.0}–{hi:.0} % as many pages) and P3's > 200 % needs write-backs below 33.3 % of disks-alone time; every ext point here: {} faster with P3's rule (write-back at eviction), {} with write-back deferred to the page's exit from flash ({}, a switch measured in the same passes: keys disk_writes_at_flash_exit)",
        pct(i.curve.writes as f64, i.curve.references as f64),
        pct(c.disk_writes as f64, evictions as f64),
        100.0 * w,
        (1.0 / w.max(1e-12) - 1.0) * 100.0,
        range(WriteBack::AtEviction),
        range(WriteBack::AtFlashExit),
        WriteBack::AtFlashExit.name(),
    )
}

/// Ext hit ratio of a log that holds the last `ext` victims (slot refill: the most a log of
/// `ext` pages can hold), from the reuse distances.
fn full_log_ext_hit(i: &Inputs<'_>, ext: usize) -> f64 {
    let c = i.curve;
    let misses = c.references - c.hits(i.main_pages);
    (c.hits(i.main_pages + ext) - c.hits(i.main_pages)) as f64 / misses.max(1) as f64
}

fn pages(i: &Inputs<'_>, pct: f64) -> usize {
    (i.db_pages as f64 * pct / 100.0).round() as usize
}

fn ext_hit(i: &Inputs<'_>) -> String {
    let c = i.curve;
    let misses = c.references - c.hits(i.main_pages);
    let cold = c.distinct() as f64 / misses.max(1) as f64;
    let need = (1..=400)
        .map(|x| x as f64 * 0.5)
        .find(|&f| full_log_ext_hit(i, pages(i, f)) >= 0.6);
    let lru5 = ext_rows(i.rows, "lru-ext")
        .first()
        .map(|r| r.counts.ext_hit_ratio);
    format!(
        "main ({MAIN_PCT} %) misses {misses} times; {} of those are first references ({:.1} % of misses: no flash can serve them, so the ratio cannot pass {:.1} %); the trace touches {:.1} % of the database; by the reuse distances a log holding the last victims (no holes) would find {:.1} % of misses at 5 % flash and {:.1} % at 50 %, and reaches 60 % at {} (P3's circular log, with its holes, finds {:.1} % at 5 %)",
        c.distinct(),
        100.0 * cold,
        100.0 * (1.0 - cold),
        pct(c.distinct() as f64, i.db_pages as f64),
        100.0 * full_log_ext_hit(i, pages(i, 5.0)),
        100.0 * full_log_ext_hit(i, pages(i, 50.0)),
        need.map_or("no flash size up to 200 % of the database".into(), |f| {
            format!("{f:.1} % of the database")
        }),
        100.0 * lru5.unwrap_or(f64::NAN),
    )
}

/// Read-back rate of each log: extended hits / flash writes.
fn readback(k: &LedgerKeys) -> (f64, f64) {
    (
        pct(k.ext_hits_a1out as f64, k.flash_writes_a1out as f64),
        pct(k.ext_hits_amout as f64, k.flash_writes_amout as f64),
    )
}

fn best(i: &Inputs<'_>) -> String {
    let main_hr = |p: &str| {
        of_figure(i.rows, "fig3-5")
            .find(|r| r.counts.policy == p && r.flash_pct == 0.0)
            .map_or(f64::NAN, |r| 100.0 * r.counts.hit_ratio)
    };
    let (l, q) = (ext_rows(i.rows, "lru-ext"), ext_rows(i.rows, "2q-flash"));
    let (Some(l), Some(q)) = (l.last(), q.last()) else {
        return "no lru-ext and 2q-flash rows".into();
    };
    let cost = CostModel::default();
    let (lc, qc) = (&l.counts, &q.counts);
    let d = |a: u64, b: u64| b as f64 - a as f64;
    let dt_reads = d(lc.disk_reads, qc.disk_reads) * cost.disk_ms / 1e3;
    let dt_writes = d(lc.disk_writes, qc.disk_writes) * cost.disk_ms / 1e3;
    let dt_flash = (d(lc.flash_writes, qc.flash_writes) * cost.flash_write_ms
        + d(lc.flash_reads, qc.flash_reads) * cost.flash_read_ms)
        / 1e3;
    let k = q.ledger.unwrap_or_default();
    let (a1, am) = readback(&k);
    let rank = |rule| {
        let mut v: Vec<(&str, f64)> = ["lru-ext", "2q-ext", "2q-flash"]
            .iter()
            .filter_map(|p| {
                ext_rows(i.rows, p)
                    .last()
                    .map(|r| (*p, elapsed_ms(r, rule)))
            })
            .collect();
        v.sort_by(|a, b| a.1.total_cmp(&b.1));
        v.iter().map(|x| x.0).collect::<Vec<_>>().join(" < ")
    };
    format!(
        "without flash 2q's main hit ratio is {:.2} % against lru's {:.2} % (2Q's A1 filter {} on this trace); at {:.0} % flash 2q-flash's main hits {:.2} % vs lru-ext's {:.2} %, and against lru-ext it does {:+} disk reads ({:+.0} s), {:+} disk writes ({:+.0} s) and {:+.0} s of flash moves: {:+.0} s in all; of 2q-flash's flash hits {} come from A1out and {} from Amout; A1out gets back {:.1} % of the pages written to it and Amout {:.1} % (lru-ext's log {:.1} %): {}; ranking at the largest flash with P3's write-back {}, deferred to flash exit {}",
        main_hr("2q"),
        main_hr("lru"),
        if main_hr("2q") > main_hr("lru") { "helps" } else { "does not help" },
        l.flash_pct,
        100.0 * qc.hit_ratio,
        100.0 * lc.hit_ratio,
        d(lc.disk_reads, qc.disk_reads) as i64,
        dt_reads,
        d(lc.disk_writes, qc.disk_writes) as i64,
        dt_writes,
        dt_flash,
        dt_reads + dt_writes + dt_flash,
        k.ext_hits_a1out,
        k.ext_hits_amout,
        a1,
        am,
        l.ledger.map_or(f64::NAN, |k| readback(&k).0),
        if a1 >= am {
            "A1's victims are re-read at least as often as Am's, so a split that gives Amout more of the flash cannot gain over one log"
        } else {
            "A1's victims are re-read less often than Am's, as 2Q assumes, yet the split loses to one log by the moves above"
        },
        rank(WriteBack::AtEviction),
        rank(WriteBack::AtFlashExit),
    )
}

fn plateau(i: &Inputs<'_>) -> String {
    let misses = i.curve.references - i.curve.hits(i.main_pages);
    let beyond = |f: f64| {
        let within = i.curve.hits(i.main_pages + pages(i, f)) - i.curve.hits(i.main_pages);
        100.0 * (misses - within) as f64 / misses.max(1) as f64
    };
    let step = |f: f64| full_log_ext_hit(i, pages(i, f)) - full_log_ext_hit(i, pages(i, f - 5.0));
    let steps: Vec<String> = [20.0, 35.0, 40.0, 50.0]
        .iter()
        .map(|&f| format!("{:.0}→{f:.0} % +{:.1}", f - 5.0, 100.0 * step(f)))
        .collect();
    format!(
        "main misses whose reuse distance lies beyond main + flash (a log of that size cannot keep them): {:.1} % at 20 %, {:.1} % at 35 %, {:.1} % at 50 % flash, of which first references {:.1} %; a log without holes would still gain, in points of ext hit ratio per 5 % step: {}; the curve keeps rising while the trace's reuse distances spread beyond the flash (the trace touches {:.1} % of the database)",
        beyond(20.0),
        beyond(35.0),
        beyond(50.0),
        pct(i.curve.distinct() as f64, misses as f64),
        steps.join(", "),
        pct(i.curve.distinct() as f64, i.db_pages as f64),
    )
}

fn dram(i: &Inputs<'_>) -> String {
    let qs = ext_rows(i.rows, "2q-flash");
    let best = qs
        .iter()
        .zip(of_figure(i.rows, "fig6-dram"))
        .max_by(|a, b| {
            let g = |(q, d): &(&&ExtBufferRow, &ExtBufferRow)| {
                (d.counts.elapsed_ms - q.counts.elapsed_ms) / d.counts.elapsed_ms
            };
            g(a).total_cmp(&g(b))
        });
    let Some((q, d)) = best else {
        return "no 2q-flash and DRAM rows".into();
    };
    let cost = CostModel::default();
    let wb = |r: &ExtBufferRow, writes: u64| {
        pct(
            writes as f64 * cost.disk_ms,
            elapsed_ms(r, WriteBack::AtEviction),
        )
    };
    let gain = |rule| {
        qs.iter()
            .zip(of_figure(i.rows, "fig6-dram"))
            .map(|(q, d)| {
                pct(
                    d.counts.elapsed_ms - elapsed_ms(q, rule),
                    d.counts.elapsed_ms,
                )
            })
            .fold(f64::NEG_INFINITY, f64::max)
    };
    format!(
        "at {:.0} % flash (its price buys {:.2} % of the database in DRAM) 2q-flash reads {} pages from disk against DRAM's {}, but writes {} dirty victims back against DRAM's {} (main stays {MAIN_PCT} %): write-backs are {:.1} % of 2q-flash's time and {:.1} % of DRAM's; the largest gain is {:.1} % with P3's write-back and {:.1} % with write-back deferred to flash exit",
        q.flash_pct,
        d.main_pct - MAIN_PCT,
        q.counts.disk_reads,
        d.counts.disk_reads,
        q.counts.disk_writes,
        d.counts.disk_writes,
        wb(q, q.counts.disk_writes),
        wb(d, d.counts.disk_writes),
        gain(WriteBack::AtEviction),
        gain(WriteBack::AtFlashExit),
    )
}

fn mechanisms(i: &Inputs<'_>) -> String {
    let Some(l) = ext_rows(i.rows, "lru-ext").last().copied() else {
        return "no lru-ext rows".into();
    };
    let Some(k) = l.ledger else {
        return "no ledger".into();
    };
    let (c, cost) = (&l.counts, CostModel::default());
    let clean_w = c.flash_writes - k.flash_writes_dirty;
    let clean_h = c.ext_hits - k.ext_hits_dirty;
    format!(
        "lru-ext at {:.0} % flash: P3's break-even is a flash copy re-read with probability > ~10 %; clean victims written to flash are read back {:.1} % of the time ({} of {}), dirty ones {:.1} % ({} of {}), so writing clean victims to flash (P3's choice) {} on this trace; {:.1} % of flash writes rewrite a page read back from flash and not modified since (a directory that kept that copy valid would save them: {:.0} s of the {:.0} s); a flash hit costs a 0.03 ms read against a 2.6 ms disk read, so the flash's own moves are {:.1} % of the time",
        l.flash_pct,
        pct(clean_h as f64, clean_w as f64),
        clean_h,
        clean_w,
        pct(k.ext_hits_dirty as f64, k.flash_writes_dirty as f64),
        k.ext_hits_dirty,
        k.flash_writes_dirty,
        if pct(clean_h as f64, clean_w as f64) > 10.0 { "pays" } else { "does not pay" },
        pct(k.flash_rewrites_unchanged as f64, c.flash_writes as f64),
        k.flash_rewrites_unchanged as f64 * cost.flash_write_ms / 1e3,
        c.elapsed_ms / 1e3,
        pct(
            c.flash_writes as f64 * cost.flash_write_ms + c.flash_reads as f64 * cost.flash_read_ms,
            c.elapsed_ms
        ),
    )
}
