//! P4 (increasing-order-aware log-block FTL), Figure 4 and Table 1: throughput, merges and
//! erases vs the host page-cache size, one line per FTL scheme; and Table 1's whole-run
//! counts beside ours, each relative to BAST's (P4's volume and cache size are not stated).

use crate::papers::chart::{distinct, is, num, paper_table, points, text, Figure};
use crate::{Report, Row};
use render::plot::{BarGroup, Bars, Chart, Line, Plot, Source};

pub fn figures(r: &Report) -> Vec<Figure> {
    let rows: Vec<&Row> = r.rows.iter().collect();
    let schemes: Vec<String> = distinct(&rows, "scheme")
        .into_iter()
        .filter_map(|s| s.as_str().map(str::to_string))
        .collect();
    let per_scheme = |y: &str| -> Vec<Line> {
        schemes
            .iter()
            .map(|s| {
                let p = points(
                    rows.iter().copied().filter(|q| is(q, "scheme", s)),
                    "host_cache_mb",
                    y,
                );
                Line::ours(format!("ours: {s}"), s, p)
            })
            .collect()
    };
    let chart = |y_label: &str, y: &str| {
        Plot::Lines(Chart {
            x_label: "host page cache (MB)".into(),
            y_label: y_label.into(),
            lines: per_scheme(y),
            ..Chart::default()
        })
    };
    vec![
        Figure {
            id: "ioa-ftl-throughput".into(),
            title: "P4 Figure 4: throughput vs host cache size, per FTL scheme".into(),
            caption: "Host MB per simulated second of random page writes through the host page cache (the paper's sizes ÷ 4). Paper: IOA ~30 % above BAST; DFTL 40 % better at the smallest cache, equal at the middle, log schemes better at the largest.".into(),
            plot: chart("throughput (MB/s, simulated)", "throughput_mb_s"),
        },
        Figure {
            id: "ioa-ftl-full-merges".into(),
            title: "P4: full merges vs host cache size".into(),
            caption: "Log-block full merges (the expensive kind) per run.".into(),
            plot: chart("full merges", "merges_full"),
        },
        Figure {
            id: "ioa-ftl-switch-merges".into(),
            title: "P4: switch merges vs host cache size".into(),
            caption: "Switch merges (IOA's bitmap merges are counted as switch merges, as P4 counts them).".into(),
            plot: chart("switch merges", "merges_switch"),
        },
        Figure {
            id: "ioa-ftl-erases".into(),
            title: "P4: block erases vs host cache size".into(),
            caption: "Block erases per run.".into(),
            plot: chart("erases", "erases"),
        },
        table1(r, &rows),
    ]
}

/// P4 Table 1 (erases per scheme) beside ours at each cache size, each ÷ BAST's.
fn table1(r: &Report, rows: &[&Row]) -> Figure {
    let paper = paper_table(r, "P4 Table 1");
    let cats: Vec<String> = paper
        .iter()
        .filter_map(|p| text(p, "scheme").map(str::to_string))
        .collect();
    let rel = |v: Option<f64>, base: Option<f64>| match (v, base) {
        (Some(v), Some(b)) if b > 0.0 => Some(v / b),
        _ => None,
    };
    let pbase = paper
        .iter()
        .find(|p| is(p, "scheme", "bast"))
        .and_then(|p| num(p, "erases"));
    let mut groups = vec![BarGroup {
        label: "paper: Table 1 (whole run)".into(),
        values: cats
            .iter()
            .map(|c| {
                rel(
                    paper
                        .iter()
                        .find(|p| is(p, "scheme", c))
                        .and_then(|p| num(p, "erases")),
                    pbase,
                )
            })
            .collect(),
        source: Source::Paper,
    }];
    for cache in distinct(rows, "host_cache_mb") {
        let Some(cache) = cache.as_f64() else {
            continue;
        };
        let at: Vec<&Row> = rows
            .iter()
            .copied()
            .filter(|q| num(q, "host_cache_mb") == Some(cache))
            .collect();
        let base = at
            .iter()
            .find(|q| is(q, "scheme", "bast"))
            .and_then(|q| num(q, "erases"));
        groups.push(BarGroup {
            label: format!("ours: cache {cache} MB"),
            values: cats
                .iter()
                .map(|c| {
                    rel(
                        at.iter()
                            .find(|q| is(q, "scheme", c))
                            .and_then(|q| num(q, "erases")),
                        base,
                    )
                })
                .collect(),
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
