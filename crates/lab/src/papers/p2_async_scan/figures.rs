//! P2 (asynchronous plural-I/O scan): speedup over the synchronous scan vs selectivity, one
//! line per device and scan mode, and vs the batch size. The paper gives 6.5× at 20 %
//! selectivity (batch 50) and "at least 5.7×" at every other selectivity.

use crate::papers::chart::{distinct, is, num, paper_table, points, text, Figure};
use crate::{Report, Row};
use render::plot::{Chart, Line, Marker, Plot, Source};

pub fn figures(r: &Report) -> Vec<Figure> {
    let rows: Vec<&Row> = r.rows.iter().collect();
    let paper = paper_table(r, "P2");
    // The paper's exact point(s) and its lower bound, from its rows.
    let exact: Vec<(f64, f64, f64)> = paper
        .iter()
        .filter_map(|p| {
            Some((
                num(p, "selectivity")?,
                num(p, "speedup_vs_sync")?,
                num(p, "batch")?,
            ))
        })
        .collect();
    let at_least: Vec<Marker> = paper
        .iter()
        .filter_map(|p| {
            let v = num(p, "speedup_vs_sync_at_least")?;
            let what = text(p, "selectivity").unwrap_or("other selectivities");
            Some(Marker {
                label: format!("paper: at least {v}× ({what})"),
                value: v,
                source: Source::Paper,
                color_key: None,
            })
        })
        .collect();

    let sel_rows: Vec<&Row> = rows
        .iter()
        .copied()
        .filter(|q| is(q, "sweep", "selectivity"))
        .collect();
    let mut lines = Vec::new();
    for dev in distinct(&sel_rows, "device") {
        let dev = dev.as_str().unwrap_or("?").to_string();
        for mode in distinct(&sel_rows, "mode") {
            let Some(mode) = mode.as_str() else { continue };
            if mode == "sync" {
                continue;
            }
            let p = points(
                sel_rows
                    .iter()
                    .copied()
                    .filter(|q| is(q, "device", &dev) && is(q, "mode", mode)),
                "selectivity",
                "speedup_vs_sync",
            );
            let p = p.into_iter().map(|(x, y)| (x * 100.0, y)).collect();
            lines.push(Line::ours(
                format!("ours: {dev}, {mode}"),
                &format!("{dev}-{mode}"),
                p,
            ));
        }
    }
    if !exact.is_empty() {
        let p = exact.iter().map(|&(s, v, _)| (s * 100.0, v)).collect();
        lines.push(Line::paper(
            "paper: batched (Linux AIO, batch 50)",
            "paper",
            p,
        ));
    }
    let mut out = vec![Figure {
        id: "async-scan-speedup-vs-selectivity".into(),
        title: "P2: speedup of the batched scan vs selectivity, per device".into(),
        caption: "Scan time of the synchronous scan ÷ each mode's (higher is better); triangles and the dashed line: the paper's 6.5× at 20 % and its lower bound at the other selectivities.".into(),
        plot: Plot::Lines(Chart {
            x_label: "selectivity (%)".into(),
            y_label: "speedup over the synchronous scan (×)".into(),
            lines,
            y_markers: at_least,
            ..Chart::default()
        }),
    }];

    let batch_rows: Vec<&Row> = rows
        .iter()
        .copied()
        .filter(|q| is(q, "sweep", "batch") && is(q, "mode", "batched"))
        .collect();
    let sel = batch_rows.first().and_then(|q| num(q, "selectivity"));
    let mut lines = Vec::new();
    for dev in distinct(&batch_rows, "device") {
        let dev = dev.as_str().unwrap_or("?").to_string();
        let p = points(
            batch_rows.iter().copied().filter(|q| is(q, "device", &dev)),
            "batch",
            "speedup_vs_sync",
        );
        lines.push(Line::ours(format!("ours: {dev}, batched"), &dev, p));
    }
    let p: Vec<(f64, f64)> = exact
        .iter()
        .filter(|&&(s, _, _)| Some(s) == sel)
        .map(|&(_, v, b)| (b, v))
        .collect();
    if !p.is_empty() {
        lines.push(Line::paper("paper: batch 50", "paper", p));
    }
    out.push(Figure {
        id: "async-scan-speedup-vs-batch".into(),
        title: "P2: speedup vs batch size".into(),
        caption: format!(
            "Batched scan at {} selectivity, batch size swept (log₂ axis); triangle: the paper's batch of 50.",
            sel.map(|s| format!("{:.0} %", s * 100.0)).unwrap_or_else(|| "one".into())
        ),
        plot: Plot::Lines(Chart {
            x_label: "batch size (heap reads in flight)".into(),
            y_label: "speedup over the synchronous scan (×)".into(),
            x_log: true,
            lines,
            ..Chart::default()
        }),
    });
    out
}
