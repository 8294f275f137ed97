//! P4's headline figures — throughput against log block, erases against log block and DFTL,
//! DFTL's trend over host cache sizes, Table 1's merge and erase counts and Table 2's mapping
//! memory — judged against our typed rows (P4's configuration only: DFTL with the log space
//! as spare, the fio random-map workload). Our host caches are the paper's 64/128/256 MB
//! scaled with the file (quick: 16/32/64 MB); "smallest / middle / largest cache" name them.
//!
//! Tolerances: ±15 points on throughput changes (the paper reads them off a bar chart and our
//! board is a timing model), ±10 points on erases against log block and ±15 against DFTL (the
//! issue's targets), within 2x on Table 1's counts (P4 does not state its run's length or
//! which cache it counts: we sum our three caches), ±25 % on Table 2 (an accounting, stated).

use super::{table2_ours, IoaRow, TABLE2_CAPACITIES};
use crate::claim::{Claim, Measure, Rule, Spec, Tolerance};
use crate::papers::p4;
use crate::Report;
use serde_json::json;

const THROUGHPUT: Rule = Rule::new(Tolerance::Absolute(15.0), Some(0.0));
const WHY_THROUGHPUT: &str = "±15 points: the paper's figures are read off a bar chart, ours come from a timing model of the board";
/// P4's workload and DFTL setup (the rows the claims judge).
const P4_WORKLOAD: &str = "fio_randommap_1x";
/// BAST's and IOA's layout on P4's board (the other layout's rows are extra, not judged).
const P4_LOG_LAYOUT: &str = "one_die";
/// The earlier aging (extra rows, not judged).
const SEQUENTIAL_AGING: &str = "sequential";

fn spec(claim: &str, unit: &'static str, rule: Rule, why: &'static str) -> Spec<'static> {
    Spec {
        paper: "P4",
        claim: claim.to_string(),
        unit,
        rule,
        why_tolerance: why,
    }
}

/// The rows of P4's configuration (not the earlier variants' extra rows).
struct Rows(Vec<IoaRow>);

impl Rows {
    fn of(report: &Report) -> Rows {
        let all: Vec<IoaRow> = report.rows_as().unwrap_or_default();
        Rows(
            all.into_iter()
                .filter(|r| {
                    r.workload == P4_WORKLOAD
                        && (r.spare.is_empty() || r.spare == "log_space")
                        && (r.log_layout.is_empty() || r.log_layout == P4_LOG_LAYOUT)
                        && r.aging != SEQUENTIAL_AGING
                })
                .collect(),
        )
    }
    fn at(&self, scheme: &str, cache: u64) -> Option<&IoaRow> {
        self.0
            .iter()
            .find(|r| r.scheme == scheme && r.host_cache_mb == cache)
    }
    fn caches(&self) -> Vec<u64> {
        let mut c: Vec<u64> = self.0.iter().map(|r| r.host_cache_mb).collect();
        c.sort_unstable();
        c.dedup();
        c
    }
    /// `key` summed over the scheme's runs (the three caches).
    fn sum(&self, scheme: &str, key: fn(&IoaRow) -> u64) -> Option<f64> {
        let v: Vec<u64> = self
            .0
            .iter()
            .filter(|r| r.scheme == scheme)
            .map(key)
            .collect();
        (!v.is_empty()).then(|| v.iter().sum::<u64>() as f64)
    }
    /// `a`'s throughput over `b`'s at `cache`, as a change in percent.
    fn gain(&self, a: &str, b: &str, cache: u64) -> Option<f64> {
        let (x, y) = (self.at(a, cache)?, self.at(b, cache)?);
        (y.throughput_mb_s > 0.0).then(|| (x.throughput_mb_s / y.throughput_mb_s - 1.0) * 100.0)
    }
}

fn change_pct(a: Option<f64>, b: Option<f64>) -> Option<f64> {
    let (a, b) = (a?, b?);
    (b > 0.0).then(|| (a / b - 1.0) * 100.0)
}

/// Every P4 claim for `report` (read back as [`IoaRow`]s).
pub fn claims(report: &Report) -> Vec<Claim> {
    let r = Rows::of(report);
    let mut out = throughput(&r);
    out.extend(erases(&r));
    out.extend(table1(&r));
    out.extend(table2());
    out
}

fn erases(r: &Rows) -> Vec<Claim> {
    let t1 = |scheme: &str| p4().figure(&[("scheme", json!(scheme))], "erases");
    [("bast", "log block", 10.0), ("dftl", "DFTL", 15.0)]
        .into_iter()
        .map(|(other, label, points)| {
            spec(&format!("Table 1: IOA vs {label}: block erases (sum over the host caches)"), "%", Rule::new(Tolerance::Absolute(points), Some(0.0)), "±10 points against log block, ±15 against DFTL: erases are counted exactly, but P4's run length and cache are not stated").judge(
                change_pct(t1("ioa"), t1(other)),
                change_pct(r.sum("ioa", |x| x.erases), r.sum(other, |x| x.erases)),
                &format!("ours: ioa {:.0}, {other} {:.0} erases; host pages per erase: ioa {:.0}, {other} {:.0}", r.sum("ioa", |x| x.erases).unwrap_or(0.0), r.sum(other, |x| x.erases).unwrap_or(0.0), pages_per_erase(r, "ioa"), pages_per_erase(r, other)),
                "ioa and the other scheme's rows",
            )
        })
        .collect()
}

/// Our count of Table 1's `kind` for `scheme`, summed over the caches: DFTL's full merges are
/// its GC runs (P4: DFTL "does only full merges"); the log block's switch merges include our
/// partial merges (P4's switch merge copies the remaining pages into the log block).
fn ours_table1(r: &Rows, scheme: &str, kind: &str) -> Option<f64> {
    match (scheme, kind) {
        ("dftl", "merges_full") => r.sum(scheme, |x| x.gc_invocations),
        (_, "merges_full") => r.sum(scheme, |x| x.merges_full),
        (_, "merges_switch") => r.sum(scheme, |x| x.merges_switch + x.merges_partial),
        _ => r.sum(scheme, |x| x.erases),
    }
}

fn table1(r: &Rows) -> Vec<Claim> {
    let mut out = Vec::new();
    for scheme in ["dftl", "bast", "ioa"] {
        for kind in ["merges_full", "merges_switch", "erases"] {
            let paper = p4().figure(&[("scheme", json!(scheme))], kind);
            let ours = ours_table1(r, scheme, kind);
            let claim =
                format!("Table 1: {scheme} {kind}, ours ÷ P4's as log2 (sum over the host caches)");
            let c = match paper {
                // DFTL's switch merges: none in P4, none possible in ours.
                Some(p) if p == 0.0 => spec(&format!("Table 1: {scheme} {kind} (sum over the host caches)"), "merges", Rule::new(Tolerance::Absolute(0.0), None), "exact: P4 counts none").judge(p, ours, "ours counts some", "the scheme's rows"),
                // A count of 0 is taken as 0.5 (log2 of 0 has no value), so it misses.
                _ => spec(&claim, "log2", Rule::new(Tolerance::Absolute(1.0), None), "within 2x (|log2| <= 1): P4 does not state its run's length or which cache it counts; a count of 0 is taken as 0.5").judge(
                    0.0,
                    ours.zip(paper).filter(|(_, p)| *p > 0.0).map(|(o, p)| (o.max(0.5) / p).log2()),
                    &format!("ours {:.0} against P4's {:.0}{}", ours.unwrap_or(0.0), paper.unwrap_or(0.0), table1_reason(r, scheme, kind)),
                    "the scheme's rows",
                ),
            };
            out.push(c);
        }
    }
    out
}

/// Host pages written per erase, summed over the caches (what an erase bought).
fn pages_per_erase(r: &Rows, scheme: &str) -> f64 {
    let pages = r.sum(scheme, |x| x.device_pages_written).unwrap_or(0.0);
    pages / r.sum(scheme, |x| x.erases).unwrap_or(0.0).max(1.0)
}

/// The measured reason beside a Table 1 miss.
fn table1_reason(r: &Rows, scheme: &str, kind: &str) -> String {
    match (scheme, kind) {
        ("dftl", _) => format!(
            ": one erase per {:.0} host pages (IOA: one per {:.0}); the drive is aged by a random rewrite of the file, so DFTL's GC victims hold the file's scattered old copies",
            pages_per_erase(r, "dftl"),
            pages_per_erase(r, "ioa")
        ),
        ("ioa", "merges_full") => ": ours come only from logs the aging's random rewrite left open with a decreasing offset (4 per run at every cache and workload); every measured flusher sweep ascends within a log's lifetime".into(),
        _ => String::new(),
    }
}

fn throughput(r: &Rows) -> Vec<Claim> {
    let caches = r.caches();
    let gains: Vec<f64> = caches
        .iter()
        .filter_map(|c| r.gain("ioa", "bast", *c))
        .collect();
    // The geometric mean of the ratios, as a change in percent.
    let mean = (!gains.is_empty()).then(|| {
        let log: f64 =
            gains.iter().map(|g| (1.0 + g / 100.0).ln()).sum::<f64>() / gains.len() as f64;
        (log.exp() - 1.0) * 100.0
    });
    let listed = caches
        .iter()
        .zip(&gains)
        .map(|(c, g)| format!("{g:+.0} % at {c} MB"))
        .collect::<Vec<_>>()
        .join(", ");
    let stated = |k: &str| p4().stated(k);
    let mut out = vec![spec(
        "IOA vs log block (BAST): throughput (geometric mean over host caches)",
        "%",
        THROUGHPUT,
        WHY_THROUGHPUT,
    )
    .judge(
        stated("ioa_throughput_gain_vs_bast_pct"),
        mean,
        &format!("ours {listed}"),
        "ioa and bast rows",
    )];
    let pick = |i: usize| (caches.len() == 3).then(|| caches[i]);
    let vs_ioa = |c: Option<u64>| c.and_then(|c| r.gain("dftl", "ioa", c));
    let vs_bast = |c: Option<u64>| {
        c.and_then(|c| r.gain("dftl", "bast", c))
            .map_or("-".to_string(), |g| format!("{g:+.0} %"))
    };
    out.push(
        spec(
            "DFTL vs IOA: throughput at the smallest host cache (P4: +40 %; at least +20 %)",
            "%",
            Rule::new(Tolerance::AtLeast(20.0), Some(0.0)),
            "DFTL / IOA at least 1.2 (the issue's target for P4's +40 %, read off a bar chart)",
        )
        .judge(
            stated("dftl_throughput_gain_vs_ioa_smallest_cache_pct"),
            vs_ioa(pick(0)),
            &format!(
                "{QUOTE_SMALLEST}; ours: DFTL vs BAST {}; {}",
                vs_bast(pick(0)),
                work(r, pick(0))
            ),
            "dftl and ioa rows at three host caches",
        ),
    );
    out.push(
        spec(
            "DFTL vs IOA: throughput at the middle host cache (equal)",
            "%",
            Rule::new(Tolerance::Absolute(15.0), None),
            "±15 points around the paper's \"equal\"",
        )
        .judge(
            stated("dftl_throughput_gain_vs_ioa_middle_cache_pct"),
            vs_ioa(pick(1)),
            &format!(
                "{QUOTE_MIDDLE}; ours: DFTL vs BAST {}; {}",
                vs_bast(pick(1)),
                work(r, pick(1))
            ),
            "dftl and ioa rows at three host caches",
        ),
    );
    out.push(
        spec(
            "DFTL vs IOA: throughput at the largest host cache (log schemes ahead)",
            "%",
            Rule::new(Tolerance::Direction, Some(0.0)),
            "a side: at the largest cache IOA must be faster than DFTL (the paper gives no figure)",
        )
        .judge(
            Measure::Side(-1.0),
            vs_ioa(pick(2)),
            &format!("DFTL vs BAST {}; {}", vs_bast(pick(2)), work(r, pick(2))),
            "dftl and ioa rows at three host caches",
        ),
    );
    out
}

/// The flash work of DFTL and IOA at `cache`: pages copied, erases, translation writes.
fn work(r: &Rows, cache: Option<u64>) -> String {
    let (Some(d), Some(i)) = (
        cache.and_then(|c| r.at("dftl", c)),
        cache.and_then(|c| r.at("ioa", c)),
    ) else {
        return "no dftl and ioa rows".into();
    };
    format!(
        "DFTL's GC copies {} pages with {} erases and {} translation writes, IOA's merges copy {} with {} erases; dies busy {:.0} % of DFTL's run, {:.0} % of IOA's (at full die overlap DFTL's flash work allows {:.1} MB/s, IOA's {:.1})",
        d.pages_copied, d.erases, d.translation_writes, i.pages_copied, i.erases,
        d.die_busy_fraction * 100.0, i.die_busy_fraction * 100.0,
        d.throughput_mb_s / d.die_busy_fraction.max(1e-9), i.throughput_mb_s / i.die_busy_fraction.max(1e-9)
    )
}

/// P4's own words for the DFTL comparison (§3.3): DemandPage against *its* scheme.
const QUOTE_SMALLEST: &str = "P4 §3.3: \"요구 기반 페이지 매핑 (DemandPage)은 호스트 캐시 64MB에서 제안 방식 (OurScheme)에 비해 40% 더 나은 성능을 보인다\" (DemandPage performs 40 % better than OurScheme at a 64 MB host cache): judged against IOA";
const QUOTE_MIDDLE: &str = "P4 §3.3: \"특히 제안 방식이 적용된 경우 병합 비용이 많이 낮아져 throughput은 요구 기반과 동일한 수준을 유지한다\" (with the new scheme the merge cost drops so far that its throughput stays at DemandPage's level): \"equal\" is DFTL against IOA, not against LogBlock; by P4's own figures (IOA +30 % over LogBlock) DFTL / LogBlock at 128 MB is about 1.3";

/// P4 Table 2's figure for `scheme` at `capacity` (its label), in bytes (K = KiB, MB = MiB,
/// GB = GiB: its 16 TB page map is 16 GiB exactly).
fn table2_paper(capacity: &str, scheme: &str) -> Option<f64> {
    let row = p4().find(&[("capacity", json!(capacity))])?;
    let cell = row.get(scheme)?.as_str()?;
    let mut words = cell.split_whitespace();
    let v: f64 = words.next()?.parse().ok()?;
    let unit = match words.next()? {
        "K" => 1u64 << 10,
        "MB" => 1 << 20,
        "GB" => 1 << 30,
        _ => return None,
    };
    Some(v * unit as f64)
}

/// Why a Table 2 figure differs, measured with the same accounting at P4's implied sizes.
fn table2_reason(capacity: &str) -> String {
    match capacity {
        "4 GB" => {
            // P4's page map (1068 K at 4 B per page) and its bitmap (46 K - 12.4 K = 33.6 K at
            // 1 bit per page) both imply 1068 blocks of 256 pages, not a 4 GiB device's 4096.
            let pages = 1068 * 256;
            let m = ssd::ftl::memory::p4_table2(
                pages,
                256,
                ssd::ftl::memory::log_blocks_of(pages, 256, 0.01),
            );
            format!("P4's 4 GB row counts 1068 blocks of 256 pages (its page map ÷ 4 B and its bitmap × 8 agree), not 4096: at that size ours is page {:.0} K, bast {:.1} K, ioa {:.1} K", m.page as f64 / 1024.0, m.bast as f64 / 1024.0, m.ioa as f64 / 1024.0)
        }
        "64 GB" => {
            let pages = (64u64 << 30) / 4096;
            let m = ssd::ftl::memory::p4_table2(
                pages,
                256,
                ssd::ftl::memory::log_blocks_of(pages, 256, 0.10),
            );
            format!("P4's 64 GB log-block figures fit a 10 % log space, not the 1 % its caption states: at 10 % ours is bast {:.1} MiB, ioa {:.1} MiB (P4: 7 and 9 MB)", m.bast as f64 / (1u64 << 20) as f64, m.ioa as f64 / (1u64 << 20) as f64)
        }
        _ => String::new(),
    }
}

fn table2() -> Vec<Claim> {
    let mut out = Vec::new();
    for (name, cap, paper_cap) in TABLE2_CAPACITIES {
        let m = table2_ours(cap);
        for (scheme, ours) in [("page", m.page), ("bast", m.bast), ("ioa", m.ioa)] {
            out.push(spec(&format!("Table 2: {scheme} mapping memory at {name}"), "B", Rule::new(Tolerance::Relative(0.25), None), "±25 %: P4's accounting (4 B per page, per block and per log page, 1 bit per page), its figures rounded").judge(
                table2_paper(paper_cap, scheme),
                ours as f64,
                &table2_reason(paper_cap),
                "the analytic accounting",
            ));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::claim::Verdict;

    fn row(scheme: &str, cache: u64, mb_s: f64, erases: u64, full: u64, switch: u64) -> IoaRow {
        IoaRow {
            scheme: scheme.into(),
            spare: if scheme == "dftl" {
                "log_space".into()
            } else {
                String::new()
            },
            log_layout: if scheme == "dftl" {
                String::new()
            } else {
                P4_LOG_LAYOUT.into()
            },
            workload: P4_WORKLOAD.into(),
            aging: "file_random".into(),
            cmt_entries: 0,
            host_cache_mb: cache,
            throughput_mb_s: mb_s,
            merges_full: full,
            merges_partial: 0,
            merges_switch: switch,
            erases,
            pages_copied: 0,
            gc_invocations: full,
            translation_reads: 0,
            translation_writes: 0,
            app_pages_written: 0,
            device_pages_written: 0,
            flash_pages_written: 0,
            waf: 1.0,
            sim_seconds: 1.0,
            die_busy_fraction: 0.5,
            mapping_bytes: 100,
        }
    }

    fn verdict(c: &[Claim], starts: &str) -> Verdict {
        c.iter()
            .find(|c| c.claim.starts_with(starts))
            .unwrap_or_else(|| panic!("{starts}"))
            .verdict
    }

    #[test]
    fn the_claims_compute_from_the_rows_of_p4s_configuration() {
        let opts = crate::ReproduceOptions::default();
        let empty = Report::new("ioa-ftl", &opts, json!({}));
        let c = claims(&empty);
        // Table 2 is analytic; every other claim needs rows.
        assert!(
            c.iter()
                .filter(|c| !c.claim.starts_with("Table 2"))
                .all(|c| c.verdict == Verdict::NotRun),
            "{c:#?}"
        );
        let mut r = Report::new("ioa-ftl", &opts, json!({}));
        // P4's Table 1 exactly, at one cache: every Table 1 claim is reproduced; IOA 30 %
        // faster than BAST and DFTL 40 % faster than IOA.
        let mut rows = vec![
            row("ioa", 16, 1.3, 1490, 24, 1442),
            row("bast", 16, 1.0, 2420, 995, 430),
            row("dftl", 16, 1.82, 1737, 1725, 0),
        ];
        // An earlier variant's row must not count.
        let mut preset = row("dftl", 16, 100.0, 1, 1, 0);
        preset.spare = "preset".into();
        rows.push(preset);
        // Nor a row of the drive aged by the sequential fill only.
        let mut sequential = row("dftl", 16, 100.0, 100_000, 100_000, 0);
        sequential.aging = SEQUENTIAL_AGING.into();
        rows.push(sequential);
        r.set_rows(&rows);
        let c = claims(&r);
        for c in c.iter().filter(|c| c.claim.starts_with("Table 1")) {
            assert_eq!(c.verdict, Verdict::Reproduced, "{c:#?}");
        }
        assert_eq!(verdict(&c, "IOA vs log block"), Verdict::Reproduced);
        assert_eq!(
            verdict(&c, "DFTL vs IOA: throughput at the smallest"),
            Verdict::NotRun
        );
        // Twice P4's BAST full merges is at the edge; three times is a miss.
        rows[1].merges_full = 3 * 995;
        r.set_rows(&rows);
        assert_ne!(
            verdict(&claims(&r), "Table 1: bast merges_full"),
            Verdict::Reproduced
        );
    }

    #[test]
    fn table2_is_exact_at_16_tb_and_states_the_other_rows_accounting() {
        let c = table2();
        assert_eq!(c.len(), 9);
        for c in c.iter().filter(|c| c.claim.ends_with("16 TiB")) {
            assert_eq!(c.verdict, Verdict::Reproduced, "{c:#?}");
        }
        assert_eq!(table2_paper("4 GB", "bast"), Some(12.4 * 1024.0));
        assert!(table2_reason("64 GB").contains("10 %"));
    }
}
