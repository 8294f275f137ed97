//! The summary table: each paper's headline, the paper's figure (from its `paper` rows or
//! claim), ours (from the run's `rows`), and whether the direction agrees. Magnitudes are
//! expected to differ (smaller runs, simulated devices); the direction is the test.

use crate::figures::{is, num, text};
use crate::results::{ExperimentResult, Status};
use lab::{Report, Row};

/// One line of the summary table.
#[derive(Clone, Debug, PartialEq)]
pub struct Headline {
    /// `P4`.
    pub paper: String,
    pub experiment: String,
    pub claim: String,
    pub paper_figure: String,
    pub ours: String,
    /// None: no direction to compare (a failed run, a missing row).
    pub agrees: Option<bool>,
}

/// The headlines of one experiment (one "failed" line when it failed).
pub fn headlines(e: &ExperimentResult) -> Vec<Headline> {
    let line = |claim: &str, paper: String, ours: String, agrees: Option<bool>| Headline {
        paper: e.paper.clone(),
        experiment: e.name.clone(),
        claim: claim.to_string(),
        paper_figure: paper,
        ours,
        agrees,
    };
    let report = match (&e.status, &e.report) {
        (Status::Ok, Some(r)) => r,
        _ => {
            let why = e.error.clone().unwrap_or_else(|| "no report".into());
            return vec![line(&e.about, "—".into(), format!("failed: {why}"), None)];
        }
    };
    let lines: Vec<(String, String, String, Option<bool>)> = match e.name.as_str() {
        "ioa-ftl" => ioa_ftl(report),
        "as-btree" => as_btree(report),
        "async-scan" => async_scan(report),
        "ext-buffer" => ext_buffer(report),
        "multistream" => multistream(report),
        _ => Vec::new(),
    };
    if lines.is_empty() {
        return vec![line(
            &e.about,
            "—".into(),
            "see the section below".into(),
            None,
        )];
    }
    lines
        .into_iter()
        .map(|(claim, paper, ours, agrees)| line(&claim, paper, ours, agrees))
        .collect()
}

type Lines = Vec<(String, String, String, Option<bool>)>;

/// `+12 %` / `−38 %` of a ratio's distance from 1.
pub fn pct(ratio: f64) -> String {
    let v = (ratio - 1.0) * 100.0;
    if v < 0.0 {
        format!("−{:.0} %", -v)
    } else {
        format!("+{v:.0} %")
    }
}

fn same_sign(a: f64, b: f64) -> bool {
    (a - 1.0).signum() == (b - 1.0).signum()
}

fn find<'a>(rows: &'a [Row], want: &[(&str, &str)], nums: &[(&str, f64)]) -> Option<&'a Row> {
    rows.iter().find(|r| {
        want.iter().all(|(k, v)| is(r, k, v)) && nums.iter().all(|(k, v)| num(r, k) == Some(*v))
    })
}

fn ioa_ftl(r: &Report) -> Lines {
    let mut out = Lines::new();
    let caches: Vec<f64> = {
        let mut c: Vec<f64> = r
            .rows
            .iter()
            .filter_map(|q| num(q, "host_cache_mb"))
            .collect();
        c.sort_by(f64::total_cmp);
        c.dedup();
        c
    };
    let ratio = |a: &str, b: &str, key: &str, cache: f64| -> Option<f64> {
        let x = num(
            find(&r.rows, &[("scheme", a)], &[("host_cache_mb", cache)])?,
            key,
        )?;
        let y = num(
            find(&r.rows, &[("scheme", b)], &[("host_cache_mb", cache)])?,
            key,
        )?;
        (y > 0.0).then(|| x / y)
    };
    let ours = |a: &str, b: &str, key: &str, show: &dyn Fn(f64) -> String| -> (String, Vec<f64>) {
        let v: Vec<(f64, f64)> = caches
            .iter()
            .filter_map(|&c| Some((c, ratio(a, b, key, c)?)))
            .collect();
        let s = v
            .iter()
            .map(|(c, x)| format!("{} at {c} MB", show(*x)))
            .collect::<Vec<_>>()
            .join(", ");
        (s, v.into_iter().map(|p| p.1).collect())
    };
    let claim = r
        .paper
        .iter()
        .filter_map(|p| text(p, "claim"))
        .find(|c| c.contains("throughput"))
        .unwrap_or("ioa faster than bast")
        .to_string();
    let (s, v) = ours("ioa", "bast", "throughput_mb_s", &|x| format!("{x:.2}×"));
    if !v.is_empty() {
        out.push((
            "IOA vs BAST: throughput".into(),
            claim,
            s,
            Some(v.iter().all(|&x| x > 1.0)),
        ));
    }
    let table1 = |scheme: &str| {
        r.paper
            .iter()
            .find(|p| {
                text(p, "table").is_some_and(|t| t.starts_with("P4 Table 1"))
                    && is(p, "scheme", scheme)
            })
            .and_then(|p| num(p, "erases"))
    };
    for other in ["bast", "dftl"] {
        let (s, v) = ours("ioa", other, "erases", &|x| pct(x));
        let paper = table1("ioa").zip(table1(other)).map(|(a, b)| a / b);
        if let (Some(p), false) = (paper, v.is_empty()) {
            out.push((
                format!("IOA vs {}: block erases", other.to_uppercase()),
                format!("{} (Table 1)", pct(p)),
                s,
                Some(v.iter().all(|&x| same_sign(x, p))),
            ));
        }
    }
    out
}

fn as_btree(r: &Report) -> Lines {
    let mut out = Lines::new();
    let nocache: Vec<Row> = r
        .rows
        .iter()
        .filter(|q| num(q, "cache_nodes") == Some(0.0))
        .cloned()
        .collect();
    let Some(f) = nocache
        .iter()
        .filter_map(|q| num(q, "keys_per_node"))
        .max_by(f64::total_cmp)
    else {
        return out;
    };
    let ms = nocache
        .iter()
        .filter(|q| is(q, "tree", "as_btree"))
        .filter_map(|q| num(q, "write_buffer_nodes"))
        .max_by(f64::total_cmp);
    let paper = |tree: &str, key: &str, cache: Option<f64>| {
        r.paper
            .iter()
            .find(|p| {
                is(p, "tree", tree)
                    && match cache {
                        None => num(p, "keys_per_node") == Some(f) && num(p, key).is_some(),
                        Some(c) => num(p, "cache_nodes") == Some(c),
                    }
            })
            .and_then(|p| num(p, key))
    };
    for dev in crate::figures::devices(&r.rows) {
        let rows: Vec<Row> = crate::figures::on_device(&r.rows, &dev)
            .into_iter()
            .cloned()
            .collect();
        let dev_s = dev
            .as_deref()
            .map(|d| format!(" ({d})"))
            .unwrap_or_default();
        let ours = |tree: &str, ms: Option<f64>, cache: f64| {
            let mut n = vec![("keys_per_node", f), ("cache_nodes", cache)];
            if let Some(m) = ms {
                n.push(("write_buffer_nodes", m));
            }
            find(&rows, &[("tree", tree)], &n).and_then(|q| num(q, "insert_seconds"))
        };
        let base = ours("in_place", None, 0.0);
        let mut push = |claim: String, p: Option<f64>, o: Option<f64>, note: &str| {
            if let (Some(p), Some(o)) = (p, o) {
                out.push((
                    claim,
                    format!("{} ({note})", pct(p)),
                    pct(o),
                    Some(same_sign(p, o)),
                ));
            }
        };
        if let Some(m) = ms {
            push(
                format!("AS B-tree (buffer {m}) vs in-place B-tree: insert time, F={f}{dev_s}"),
                paper(&format!("AS buffer {m}"), "insert_seconds", None)
                    .zip(paper("B-tree", "insert_seconds", None))
                    .map(|(a, b)| a / b),
                ours("as_btree", Some(m), 0.0).zip(base).map(|(a, b)| a / b),
                "Table 2",
            );
        }
        push(
            format!("BFTL vs in-place B-tree: insert time, F={f}{dev_s}"),
            paper("BFTL", "insert_seconds", None)
                .zip(paper("B-tree", "insert_seconds", None))
                .map(|(a, b)| a / b),
            ours("bftl", None, 0.0).zip(base).map(|(a, b)| a / b),
            "Table 2",
        );
        let cache = rows
            .iter()
            .filter_map(|q| num(q, "cache_nodes"))
            .filter(|c| *c > 0.0)
            .min_by(f64::total_cmp);
        if let Some(c) = cache {
            let as_ms = rows
                .iter()
                .find(|q| is(q, "tree", "as_btree") && num(q, "cache_nodes") == Some(c))
                .and_then(|q| num(q, "write_buffer_nodes"));
            push(
                format!("AS vs in-place B-tree with an LRU cache of {c} nodes: insert time{dev_s}"),
                paper("AS", "insert_seconds", Some(c))
                    .zip(paper("B-tree", "insert_seconds", Some(c)))
                    .map(|(a, b)| a / b),
                ours("as_btree", as_ms, c)
                    .zip(ours("in_place", None, c))
                    .map(|(a, b)| a / b),
                "Table 5",
            );
        }
    }
    out
}

fn async_scan(r: &Report) -> Lines {
    let Some(paper) = r.paper.iter().find(|p| num(p, "speedup_vs_sync").is_some()) else {
        return Vec::new();
    };
    let (Some(sel), Some(v)) = (num(paper, "selectivity"), num(paper, "speedup_vs_sync")) else {
        return Vec::new();
    };
    crate::figures::devices(&r.rows)
        .into_iter()
        .filter_map(|dev| {
            let rows = crate::figures::on_device(&r.rows, &dev);
            let ours = rows
                .iter()
                .find(|q| {
                    is(q, "sweep", "selectivity")
                        && is(q, "mode", "batched")
                        && num(q, "selectivity") == Some(sel)
                })
                .and_then(|q| num(q, "speedup_vs_sync"))?;
            let dev_s = dev
                .as_deref()
                .map(|d| format!(" ({d})"))
                .unwrap_or_default();
            Some((
                format!(
                    "Batched asynchronous scan vs synchronous, {:.0} % selectivity{dev_s}",
                    sel * 100.0
                ),
                format!("{v}× faster"),
                format!("{ours:.2}× faster"),
                Some(ours > 1.0 && v > 1.0),
            ))
        })
        .collect()
}

fn ext_buffer(r: &Report) -> Lines {
    let mut out = Lines::new();
    let finding = |name: &str| r.paper.iter().find(|p| is(p, "finding", name));
    let sweep: Vec<&Row> = r
        .rows
        .iter()
        .filter(|q| is(q, "figure", "fig3-5") && num(q, "flash_pct").unwrap_or(0.0) > 0.0)
        .collect();
    let speedups: Vec<f64> = sweep
        .iter()
        .filter_map(|q| num(q, "speedup_vs_disks_alone_pct"))
        .collect();
    if let (Some(p), false) = (finding("speedup_vs_disks_alone"), speedups.is_empty()) {
        let (lo, hi) = speedups
            .iter()
            .fold((f64::INFINITY, f64::NEG_INFINITY), |(a, b), &x| {
                (a.min(x), b.max(x))
            });
        out.push((
            "Flash extended buffer vs disks alone".into(),
            format!("> {} % faster", num(p, "speedup_pct_min").unwrap_or(200.0)),
            format!("{lo:.0} % .. {hi:.0} % faster"),
            Some(lo > 0.0),
        ));
    }
    let largest = sweep
        .iter()
        .filter_map(|q| num(q, "flash_pct"))
        .max_by(f64::total_cmp);
    if let (Some(p), Some(f)) = (finding("best_policy"), largest) {
        let best = sweep
            .iter()
            .filter(|q| num(q, "flash_pct") == Some(f))
            .filter_map(|q| Some((text(q, "policy")?, num(q, "elapsed_ms")?)))
            .min_by(|a, b| a.1.total_cmp(&b.1));
        if let (Some(want), Some((got, _))) = (text(p, "best"), best) {
            out.push((
                format!("Best policy (least time at {f:.0} % flash)"),
                want.to_string(),
                got.to_string(),
                Some(want == got),
            ));
        }
    }
    if let Some(p) = finding("best_amout_ratio") {
        let best = r
            .rows
            .iter()
            .filter(|q| is(q, "figure", "fig2"))
            .filter_map(|q| Some((num(q, "amout_ratio")?, num(q, "elapsed_ms")?)))
            .min_by(|a, b| a.1.total_cmp(&b.1));
        if let (Some(want), Some((got, _))) = (num(p, "amout_share"), best) {
            let split = |s: f64| format!("{:.0}:{:.0}", s * 10.0, 10.0 - s * 10.0);
            out.push((
                "Best Amout:A1out split (2Q-Flash)".into(),
                split(want),
                split(got),
                Some((want - got).abs() < 1e-9),
            ));
        }
    }
    out
}

fn multistream(r: &Report) -> Lines {
    // The first row of `policy` that has a `waf` (P5's paper rows also hold Table 4's WAFs
    // under other keys, for the same policies).
    let waf = |rows: &[Row], policy: &str| {
        rows.iter()
            .filter(|q| is(q, "policy", policy))
            .find_map(|q| num(q, "waf"))
    };
    let mut out = Lines::new();
    for policy in ["per-type", "merge-similar", "merge-different"] {
        let paper = waf(&r.paper, policy)
            .zip(waf(&r.paper, "none"))
            .map(|(a, b)| a / b);
        let ours = waf(&r.rows, policy)
            .zip(waf(&r.rows, "none"))
            .map(|(a, b)| a / b);
        if let Some(o) = ours {
            out.push((
                format!("{policy} streams vs none: WAF"),
                paper.map(pct).unwrap_or_else(|| "—".into()),
                pct(o),
                paper.map(|p| same_sign(p, o)),
            ));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn percentages_are_signed() {
        assert_eq!(pct(0.62), "−38 %");
        assert_eq!(pct(1.3), "+30 %");
        assert!(same_sign(0.9, 0.5) && !same_sign(0.9, 1.2));
    }

    #[test]
    fn p5s_paper_wafs_are_found_past_rows_of_the_same_policy_without_one() {
        let row = |v: serde_json::Value| v.as_object().unwrap().clone();
        let mut r: Report = serde_json::from_value(serde_json::json!({
            "experiment": "multistream", "scale": "quick", "seed": 1, "config": {},
            "rows": [], "paper": [], "notes": []
        }))
        .unwrap();
        r.paper = vec![
            row(serde_json::json!({"table": "Table 4", "policy": "none", "waf_same_time": 2.4})),
            row(serde_json::json!({"table": "6.5 h", "policy": "none", "waf": 2.0})),
            row(serde_json::json!({"table": "6.5 h", "policy": "per-type", "waf": 1.5})),
        ];
        r.rows = vec![
            row(serde_json::json!({"policy": "none", "waf": 4.0})),
            row(serde_json::json!({"policy": "per-type", "waf": 3.0})),
        ];
        let lines = multistream(&r);
        assert_eq!(lines.len(), 1);
        assert_eq!(lines[0].1, "−25 %");
        assert_eq!(lines[0].2, "−25 %");
        assert_eq!(lines[0].3, Some(true));
    }
}
