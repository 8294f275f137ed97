//! P2 (asynchronous plural-I/O scan): speedup over the synchronous scan vs selectivity, one
//! line per device and scan mode, and vs the batch size. The paper gives 6.5× at 20 %
//! selectivity (batch 50) and "at least 5.7×" at every other selectivity.

use super::ScanRow;
use crate::papers::chart::{distinct, typed, xy, Figure};
use crate::Report;
use render::plot::{Chart, Line, Marker, Plot, Source};
use serde::Deserialize;

/// A row of the paper's result (`paper.toml`): an exact point, or a lower bound over a
/// range of selectivities named in words.
#[derive(Deserialize)]
struct PaperRow {
    table: String,
    selectivity: Option<Selectivity>,
    speedup_vs_sync: Option<f64>,
    speedup_vs_sync_at_least: Option<f64>,
    batch: Option<f64>,
}

#[derive(Deserialize)]
#[serde(untagged)]
enum Selectivity {
    Share(f64),
    Words(String),
}

impl PaperRow {
    fn share(&self) -> Option<f64> {
        match self.selectivity {
            Some(Selectivity::Share(s)) => Some(s),
            _ => None,
        }
    }
    fn words(&self) -> Option<&str> {
        match &self.selectivity {
            Some(Selectivity::Words(w)) => Some(w),
            _ => None,
        }
    }
}

pub fn figures(r: &Report) -> Vec<Figure> {
    let rows: Vec<ScanRow> = typed(&r.rows);
    let paper: Vec<PaperRow> = typed::<PaperRow>(&r.paper)
        .into_iter()
        .filter(|p| p.table.starts_with("P2"))
        .collect();
    // The paper's exact point(s) and its lower bound, from its rows.
    let exact: Vec<(f64, f64, f64)> = paper
        .iter()
        .filter_map(|p| Some((p.share()?, p.speedup_vs_sync?, p.batch?)))
        .collect();
    let at_least: Vec<Marker> = paper
        .iter()
        .filter_map(|p| {
            let v = p.speedup_vs_sync_at_least?;
            let what = p.words().unwrap_or("other selectivities");
            Some(Marker {
                label: format!("paper: at least {v}× ({what})"),
                value: v,
                source: Source::Paper,
                color_key: None,
            })
        })
        .collect();
    let mut out = vec![vs_selectivity(&rows, &exact, at_least)];
    out.push(vs_batch(&rows, &exact));
    out
}

fn vs_selectivity(rows: &[ScanRow], exact: &[(f64, f64, f64)], at_least: Vec<Marker>) -> Figure {
    let sel_rows: Vec<&ScanRow> = rows.iter().filter(|q| q.sweep == "selectivity").collect();
    let mut lines = Vec::new();
    let devices = distinct(sel_rows.iter().map(|q| q.device));
    let one_device = devices.len() == 1;
    for dev in devices {
        for mode in distinct(sel_rows.iter().map(|q| q.mode.as_str())) {
            if mode == "sync" {
                continue;
            }
            let of = sel_rows
                .iter()
                .filter(|q| q.device == dev && q.mode == mode);
            let p = xy(of.map(|q| (q.selectivity * 100.0, q.speedup_vs_sync)));
            // One look per mode; a second device is a variant of it.
            let key = match one_device {
                true => mode.to_string(),
                false => format!("{mode}, {dev}"),
            };
            lines.push(Line::ours(format!("ours: {dev}, {mode}"), &key, p));
        }
    }
    if !exact.is_empty() {
        let p = exact.iter().map(|&(s, v, _)| (s * 100.0, v)).collect();
        lines.push(Line::paper(
            "paper: batched (Linux AIO, batch 50)",
            "batched",
            p,
        ));
    }
    Figure {
        id: "async-scan-speedup-vs-selectivity".into(),
        title: "P2: speedup of the batched scan vs selectivity, per device".into(),
        caption: "Scan time of the synchronous scan ÷ each mode's (higher is better); hollow markers: the paper's 6.5× at 20 % and its lower bound at the other selectivities.".into(),
        plot: Plot::Lines(Chart {
            x_label: "selectivity (%)".into(),
            y_label: "speedup over the synchronous scan (×)".into(),
            lines,
            y_markers: at_least,
            ..Chart::default()
        }),
    }
}

fn vs_batch(rows: &[ScanRow], exact: &[(f64, f64, f64)]) -> Figure {
    let batch_rows: Vec<&ScanRow> = rows
        .iter()
        .filter(|q| q.sweep == "batch" && q.mode == "batched")
        .collect();
    let sel = batch_rows.first().map(|q| q.selectivity);
    let mut lines = Vec::new();
    let devices = distinct(batch_rows.iter().map(|q| q.device));
    let one_device = devices.len() == 1;
    for dev in devices {
        let of = batch_rows.iter().filter(|q| q.device == dev);
        let p = xy(of.map(|q| (q.batch as f64, q.speedup_vs_sync)));
        let key = match one_device {
            true => "batched".to_string(),
            false => format!("batched, {dev}"),
        };
        lines.push(Line::ours(format!("ours: {dev}, batched"), &key, p));
    }
    let p: Vec<(f64, f64)> = exact
        .iter()
        .filter(|&&(s, _, _)| Some(s) == sel)
        .map(|&(_, v, b)| (b, v))
        .collect();
    if !p.is_empty() {
        lines.push(Line::paper("paper: batch 50", "batched", p));
    }
    Figure {
        id: "async-scan-speedup-vs-batch".into(),
        title: "P2: speedup vs batch size".into(),
        caption: format!(
            "Batched scan at {} selectivity, batch size swept (log₂ axis); hollow marker: the paper's batch of 50.",
            sel.map(|s| format!("{:.0} %", s * 100.0)).unwrap_or_else(|| "one".into())
        ),
        plot: Plot::Lines(Chart {
            x_label: "batch size (heap reads in flight)".into(),
            y_label: "speedup over the synchronous scan (×)".into(),
            x_log: true,
            lines,
            ..Chart::default()
        }),
    }
}
