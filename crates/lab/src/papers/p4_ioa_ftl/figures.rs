//! P4 (increasing-order-aware log-block FTL), Figure 4 and Table 1: throughput, merges and
//! erases vs the host page-cache size, one line per FTL scheme and variant (DFTL's spare, the
//! workload), on log axes (the schemes span decades); and Table 1's whole-run counts beside
//! ours, each relative to BAST's (P4's volume and cache size are not stated).

use super::IoaRow;
use crate::papers::chart::{distinct, small_multiples, typed, xy, Figure};
use crate::Report;
use render::plot::{BarGroup, Bars, Chart, Line, Plot, Source};
use serde::Deserialize;

/// A row of the paper's Table 1 (`paper.toml`).
#[derive(Deserialize)]
struct PaperRow {
    table: String,
    scheme: String,
    erases: Option<f64>,
}

/// P4's workload (its rows carry no suffix in the series names).
const P4_WORKLOAD: &str = "fio_randommap_1x";

/// One series per scheme and variant: `ioa`, `dftl, spare = preset`, `bast [uniform_4x]`.
fn series(q: &IoaRow) -> String {
    let mut s = q.scheme.clone();
    if !q.spare.is_empty() {
        // `log_space_one_pool` drawn as `one pool`: its own look (report::style's test).
        let spare = match q.spare.as_str() {
            "log_space_one_pool" => "one pool",
            other => other,
        };
        s = format!("{s}, spare = {spare}");
    }
    if q.log_layout == "striped" {
        s = format!("{s} [striped]");
    }
    if !q.workload.is_empty() && q.workload != P4_WORKLOAD {
        s = format!("{s} [{}]", q.workload);
    }
    if q.aging == "sequential" {
        s = format!("{s} [sequential aging]");
    }
    s
}

pub fn figures(r: &Report) -> Vec<Figure> {
    let rows: Vec<IoaRow> = typed(&r.rows);
    let names = distinct(rows.iter().map(series));
    let per_series = |y: fn(&IoaRow) -> f64| -> Vec<Line> {
        names
            .iter()
            .map(|s| {
                let of = rows.iter().filter(|q| series(q) == *s);
                let p = xy(of.map(|q| (q.host_cache_mb as f64, y(q))));
                Line::ours(format!("ours: {s}"), s, p)
            })
            .collect()
    };
    let chart = |y_label: &str, y: fn(&IoaRow) -> f64| {
        Plot::Lines(Chart {
            x_label: "host page cache (MB)".into(),
            y_label: y_label.into(),
            lines: per_series(y),
            y_log: true,
            ..Chart::default()
        })
    };
    let counts = vec![
        Figure {
            id: "ioa-ftl-throughput".into(),
            title: "P4 Figure 4: throughput vs host cache size, per FTL scheme".into(),
            caption: "Host MB per simulated second of random page writes through the host page cache (the paper's sizes ÷ 4). Paper: IOA ~30 % above BAST; DFTL 40 % better at the smallest cache, equal at the middle, log schemes better at the largest.".into(),
            plot: chart("throughput (MB/s, simulated)", |q| q.throughput_mb_s),
        },
        Figure {
            id: "ioa-ftl-full-merges".into(),
            title: "P4: full merges vs host cache size".into(),
            caption: "Log-block full merges (the expensive kind) per run; log axis, so runs with none draw no point.".into(),
            plot: chart("full merges", |q| q.merges_full as f64),
        },
        Figure {
            id: "ioa-ftl-switch-merges".into(),
            title: "P4: switch merges vs host cache size".into(),
            caption: "Switch merges (IOA's bitmap merges are counted as switch merges, as P4 counts them).".into(),
            plot: chart("switch merges", |q| q.merges_switch as f64),
        },
        Figure {
            id: "ioa-ftl-erases".into(),
            title: "P4: block erases vs host cache size".into(),
            caption: "Block erases per run.".into(),
            plot: chart("erases", |q| q.erases as f64),
        },
    ];
    // One panel per workload when the schemes and variants are more than a panel holds.
    let workload = |l: &Line| match l.label.split_once(" [") {
        Some((_, w)) => w.trim_end_matches(']').to_string(),
        None => P4_WORKLOAD.to_string(),
    };
    let mut out: Vec<Figure> = counts
        .into_iter()
        .flat_map(|f| small_multiples(f, workload))
        .collect();
    out.push(table1(r, &rows));
    out
}

/// `v ÷ base` where both are known and the base is positive.
fn rel(v: Option<f64>, base: Option<f64>) -> Option<f64> {
    match (v, base) {
        (Some(v), Some(b)) if b > 0.0 => Some(v / b),
        _ => None,
    }
}

/// P4 Table 1 (erases per scheme) beside ours at each cache size, each ÷ BAST's.
fn table1(r: &Report, rows: &[IoaRow]) -> Figure {
    let paper: Vec<PaperRow> = typed::<PaperRow>(&r.paper)
        .into_iter()
        .filter(|p| p.table.starts_with("P4 Table 1"))
        .collect();
    let cats: Vec<String> = paper.iter().map(|p| p.scheme.clone()).collect();
    let paper_erases = |s: &str| paper.iter().find(|p| p.scheme == s).and_then(|p| p.erases);
    let pbase = paper_erases("bast");
    let mut groups = vec![BarGroup {
        label: "paper: Table 1 (whole run)".into(),
        values: cats.iter().map(|c| rel(paper_erases(c), pbase)).collect(),
        source: Source::Paper,
    }];
    for cache in distinct(rows.iter().map(|q| q.host_cache_mb)) {
        let at: Vec<&IoaRow> = rows
            .iter()
            .filter(|q| {
                q.host_cache_mb == cache && q.workload == P4_WORKLOAD && q.spare != "preset"
            })
            .collect();
        let erases = |s: &str| at.iter().find(|q| q.scheme == s).map(|q| q.erases as f64);
        let base = erases("bast");
        groups.push(BarGroup {
            label: format!("ours: cache {cache} MB"),
            values: cats.iter().map(|c| rel(erases(c), base)).collect(),
            source: Source::Ours,
        });
    }
    Figure {
        id: "ioa-ftl-table1-erases".into(),
        title: "P4 Table 1: block erases relative to BAST, paper vs ours".into(),
        caption: "Erases of each scheme ÷ BAST's (1 = as many as BAST). Pale, outlined: the paper's whole run (cache size not stated); solid: ours at each host cache size.".into(),
        plot: Plot::Bars(Bars {
            y_label: "erases ÷ BAST's".into(),
            categories: cats,
            groups,
        }),
    }
}
