//! P3's headline figures — > 200 % faster than disks alone, extended-buffer hit ratio > 60 %,
//! 2Q-Flash best and 2Q-ext worst, the plateaus near 35 / 20 / 40 % flash, the best
//! Amout:A1out split 6:4, up to 40 % better than the same money on DRAM, and a RAID-0 gap that
//! grows with flash — judged against the sweep's rows, read as [`ExtBufferRow`]s.
//!
//! Tolerances: the two "greater than" figures are floors (reproduced only if every point of
//! our sweep meets them); plateaus ±5 points (one step of the 5 % flash grid); the Amout
//! share ±0.1 (one step of its grid); the DRAM gain ±10 points (the paper reads it off a
//! chart and prices DRAM at 10× flash, as we do); the rankings and the RAID-0 trend exactly.

use super::ExtBufferRow;
use crate::claim::{Claim, Measure, Rule, Spec, Tolerance};
use crate::papers::p3;
use crate::Report;
use serde_json::json;

const EXT_POLICIES: [&str; 3] = ["lru-ext", "2q-ext", "2q-flash"];

fn spec(claim: &str, unit: &'static str, rule: Rule, why: &'static str) -> Spec<'static> {
    Spec {
        paper: "P3",
        claim: claim.to_string(),
        unit,
        rule,
        why_tolerance: why,
    }
}

/// The paper's `key` of its finding `name`.
fn finding(name: &str, key: &str) -> Option<f64> {
    p3().figure(&[("finding", json!(name))], key)
}

fn finding_text(name: &str, key: &str) -> Option<String> {
    p3().find(&[("finding", json!(name))])?
        .get(key)?
        .as_str()
        .map(str::to_string)
}

struct Sweep(Vec<ExtBufferRow>);

impl Sweep {
    /// The extended-buffer rows of Figures 3–5 (flash > 0).
    fn ext(&self) -> impl Iterator<Item = &ExtBufferRow> {
        self.0.iter().filter(|r| {
            r.figure == "fig3-5"
                && r.flash_pct > 0.0
                && EXT_POLICIES.contains(&r.counts.policy.as_str())
        })
    }
    fn of(&self, figure: &'static str) -> impl Iterator<Item = &ExtBufferRow> {
        self.0.iter().filter(move |r| r.figure == figure)
    }
    fn largest_flash(&self) -> Option<f64> {
        self.ext().map(|r| r.flash_pct).max_by(f64::total_cmp)
    }
    /// The policies at `flash` % from fastest to slowest.
    fn ranking(&self, flash: f64) -> Vec<&str> {
        let mut v: Vec<&ExtBufferRow> = self
            .ext()
            .filter(|r| (r.flash_pct - flash).abs() < 1e-6)
            .collect();
        v.sort_by(|a, b| a.counts.elapsed_ms.total_cmp(&b.counts.elapsed_ms));
        v.iter().map(|r| r.counts.policy.as_str()).collect()
    }
    /// The flash % after which `policy` improves by less than 1 % per step.
    fn plateau(&self, policy: &str) -> Option<f64> {
        let pts: Vec<(f64, f64)> = self
            .ext()
            .filter(|r| r.counts.policy == policy)
            .map(|r| (r.flash_pct, r.counts.elapsed_ms))
            .collect();
        let last = pts.last()?.0;
        let at = pts
            .windows(2)
            .find(|w| (w[0].1 - w[1].1) / w[0].1 < 0.01)
            .map_or(last, |w| w[0].0);
        // The sweep's flash sizes are whole percents of the database, cut to whole pages:
        // a size reads 14.9998 % where the grid point is 15 %. The plateau is a grid point,
        // so it is reported at the grid's resolution (0.01 %), far above one page's share.
        Some((at * 100.0).round() / 100.0)
    }
}

/// Every P3 claim for `report`.
pub fn claims(report: &Report) -> Vec<Claim> {
    // Engine rows (`--engine`) have other keys and do not parse as sweep rows.
    let s = Sweep(
        report
            .rows
            .iter()
            .filter_map(|r| serde_json::from_value(serde_json::Value::Object(r.clone())).ok())
            .collect(),
    );
    let min_of = |f: fn(&ExtBufferRow) -> f64| s.ext().map(f).min_by(f64::total_cmp);
    let mut out = vec![
        spec("every extended-buffer policy faster than disks alone (5–50 % flash)", "%", Rule::new(Tolerance::AtLeast(finding("speedup_vs_disks_alone", "speedup_pct_min").unwrap_or(f64::NAN)), Some(0.0)), "a floor: our slowest point of the sweep must reach it").judge(
            finding("speedup_vs_disks_alone", "speedup_pct_min"),
            min_of(|r| r.speedup_vs_disks_alone_pct),
            "at small flash sizes our trace (the TPC-C-like generator, or a PostgreSQL capture) re-references fewer evicted pages than the paper's trace",
            "the Figure 3–5 sweep",
        ),
        spec("extended-buffer hit ratio (share of main-buffer misses found on flash)", "%", Rule::new(Tolerance::AtLeast(finding("ext_hit_ratio", "ext_hit_ratio_min").map_or(f64::NAN, |x| x * 100.0)), None), "a floor: every point of our sweep must reach it").judge(
            finding("ext_hit_ratio", "ext_hit_ratio_min").map(|x| x * 100.0),
            min_of(|r| r.counts.ext_hit_ratio * 100.0),
            "our lru-ext at small flash sizes finds fewer misses on flash",
            "the Figure 3–5 sweep",
        ),
    ];
    let ranking = s.largest_flash().map(|f| s.ranking(f));
    for (what, key, pick) in [("best", "best", 0usize), ("worst", "worst", 2)] {
        out.push(
            spec(
                &format!("{what} extended-buffer policy (least/most time at the largest flash)"),
                "",
                Rule::ORDER,
                "the name itself",
            )
            .judge(
                finding_text("best_policy", key).as_deref().unwrap_or(""),
                ranking
                    .as_ref()
                    .and_then(|r| (r.len() == 3).then(|| r[pick].to_string())),
                &format!(
                    "ours, fastest first: {}",
                    ranking.as_ref().map(|r| r.join(" < ")).unwrap_or_default()
                ),
                "the three policies at the largest flash size",
            ),
        );
    }
    for (policy, key) in [
        ("lru-ext", "lru_ext_pct"),
        ("2q-ext", "two_q_ext_pct"),
        ("2q-flash", "two_q_flash_pct"),
    ] {
        out.push(
            spec(
                &format!("{policy} stops improving (< 1 % per 5 % step) at this flash size"),
                "% of DB",
                Rule::new(Tolerance::Absolute(5.0), None),
                "±5 points: one step of the 5 % flash grid",
            )
            .judge(
                finding("saturation", key),
                s.plateau(policy),
                &format!("our {policy} curve flattens at another size on our trace"),
                "the Figure 3–5 sweep",
            ),
        );
    }
    out.extend(money(&s));
    out
}

fn money(s: &Sweep) -> Vec<Claim> {
    let best = s
        .of("fig2")
        .min_by(|a, b| a.counts.elapsed_ms.total_cmp(&b.counts.elapsed_ms))
        .map(|r| r.amout_ratio);
    let q: Vec<&ExtBufferRow> =
        s.0.iter()
            .filter(|r| r.figure == "fig3-5" && r.counts.policy == "2q-flash")
            .collect();
    let dram_gain = q
        .iter()
        .zip(s.of("fig6-dram"))
        .map(|(q, d)| (d.counts.elapsed_ms - q.counts.elapsed_ms) / d.counts.elapsed_ms * 100.0)
        .max_by(f64::total_cmp);
    let raid0 = s.of("fig6-raid0").next().map(|r| r.counts.elapsed_ms);
    let gap = |r: Option<&&ExtBufferRow>| Some((raid0? - r?.counts.elapsed_ms) / raid0? * 100.0);
    let growth = gap(q.last())
        .zip(gap(q.first()))
        .filter(|_| q.len() > 1)
        .map(|(l, f)| l - f);
    vec![
        spec("best Amout share of 2Q-Flash's flash (Amout:A1out = 6:4)", "share", Rule::new(Tolerance::Absolute(0.1), None), "±0.1: one step of the swept shares").judge(
            finding("best_amout_ratio", "amout_share"),
            best,
            "on our trace a larger Amout keeps more re-referenced hot pages",
            "the Figure 2 sweep",
        ),
        spec("2Q-Flash vs the same money spent on DRAM: most time saved", "%", Rule::new(Tolerance::Absolute(10.0), Some(0.0)), "±10 points: read off the paper's chart; DRAM priced at 10× flash as in the paper").judge(
            finding("vs_same_cost_dram", "gain_pct_max"),
            dram_gain,
            "on our trace DRAM of the same price removes a different share of disk reads",
            "the Figure 6 DRAM rows beside 2q-flash",
        ),
        spec("2Q-Flash vs a RAID-0 pair: the gap grows with flash (largest − smallest flash, points)", "points", Rule::new(Tolerance::Direction, Some(0.0)), "a side: the paper states the trend, not a figure").judge(
            Measure::Side(1.0),
            growth,
            "our gap shrinks as flash grows",
            "the Figure 6 RAID-0 row and 2q-flash at two flash sizes",
        ),
    ]
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::claim::Verdict;

    #[test]
    fn at_least_seven_claims_and_misses_are_never_reproduced() {
        let empty = Report::new("ext-buffer", &crate::ReproduceOptions::default(), json!({}));
        let c = claims(&empty);
        assert!(c.len() >= 7, "{}", c.len());
        assert!(c.iter().all(|c| c.verdict == Verdict::NotRun), "{c:#?}");
        // A sweep at 150 % faster with a 50 % hit ratio: both floors missed.
        let row = |f: f64| ExtBufferRow {
            figure: "fig3-5".into(),
            flash_pct: f,
            speedup_vs_disks_alone_pct: 150.0,
            counts: super::super::Counters {
                policy: "2q-flash".into(),
                elapsed_ms: 100.0 - f,
                ext_hit_ratio: 0.5,
                ..Default::default()
            },
            ..Default::default()
        };
        let mut r = empty.clone();
        r.set_rows(&[row(10.0), row(20.0)]);
        // A row missing a key (here `disks`) is not read: every claim of it is `not run`.
        let mut broken = r.clone();
        for row in &mut broken.rows {
            row.remove("disks");
        }
        assert!(claims(&broken).iter().all(|c| c.verdict == Verdict::NotRun));
        let c = claims(&r);
        assert_eq!(c[0].verdict, Verdict::DirectionOnly, "{:#?}", c[0]);
        assert_eq!(c[1].verdict, Verdict::NotReproduced, "{:#?}", c[1]);
    }

    #[test]
    fn a_plateau_is_read_at_the_grid_point_its_whole_pages_stand_for() {
        // Elapsed times that flatten after the second size, with the sizes cut to whole
        // pages: 9.9998 % and 14.9998 % stand for the grid's 10 % and 15 %.
        let row = |f: f64, ms: f64| ExtBufferRow {
            figure: "fig3-5".into(),
            flash_pct: f,
            counts: super::super::Counters {
                policy: "2q-ext".into(),
                elapsed_ms: ms,
                ..Default::default()
            },
            ..Default::default()
        };
        let s = Sweep(vec![
            row(4.9998, 100.0),
            row(9.9998, 80.0),
            row(14.9998, 79.9),
            row(19.9998, 79.8),
        ]);
        assert_eq!(s.plateau("2q-ext"), Some(10.0));
        let s = Sweep(vec![
            row(5.0, 100.0),
            row(10.0, 80.0),
            row(15.0, 70.0),
            row(20.0, 69.9),
        ]);
        assert_eq!(s.plateau("2q-ext"), Some(15.0));
    }
}
