//! What the papers' figures share: the charts of measured curves (`Report::series`) that no
//! paper's `figures.rs` draws, so a new experiment's curves show up without code.

use crate::{Report, Row};
pub use render::figures::{relative_each, slug, Figure};
use render::plot::{Chart, Line, Plot};
use serde_json::Value;

/// A chart per `series` name not in `drawn`: one line per label.
pub fn series_figures(r: &Report, drawn: &[&str]) -> Vec<Figure> {
    let mut names: Vec<&str> = Vec::new();
    for s in &r.series {
        if !names.contains(&s.name.as_str()) && !drawn.contains(&s.name.as_str()) {
            names.push(&s.name);
        }
    }
    names
        .into_iter()
        .map(|name| {
            let of_name: Vec<_> = r.series.iter().filter(|s| s.name == name).collect();
            let lines = of_name
                .iter()
                .map(|s| Line::ours(format!("ours: {}", s.label), &s.label, s.points.clone()))
                .collect();
            Figure {
                id: format!("{}-{}", r.experiment, slug(name)),
                title: format!("{name} (measured curve)"),
                caption: format!("{} of this run, one line per label.", name),
                plot: Plot::Lines(Chart {
                    x_label: of_name[0].x.clone(),
                    y_label: of_name[0].y.clone(),
                    lines,
                    ..Chart::default()
                }),
            }
        })
        .collect()
}

/// A number under `key` (integers and floats).
pub fn num(r: &Row, key: &str) -> Option<f64> {
    r.get(key).and_then(Value::as_f64)
}

/// A string under `key`.
pub fn text<'a>(r: &'a Row, key: &str) -> Option<&'a str> {
    r.get(key).and_then(Value::as_str)
}

/// Whether `r[key]` is the string `value`.
pub fn is(r: &Row, key: &str, value: &str) -> bool {
    text(r, key) == Some(value)
}

/// The distinct values under `key` (strings, or numbers printed), in first-seen order.
pub fn distinct(rows: &[&Row], key: &str) -> Vec<Value> {
    let mut out: Vec<Value> = Vec::new();
    for r in rows {
        if let Some(v) = r.get(key) {
            if !out.contains(v) {
                out.push(v.clone());
            }
        }
    }
    out
}

/// `(x, y)` of the rows that have both, in x order.
pub fn points<'a>(rows: impl IntoIterator<Item = &'a Row>, x: &str, y: &str) -> Vec<(f64, f64)> {
    let mut p: Vec<(f64, f64)> = rows
        .into_iter()
        .filter_map(|r| Some((num(r, x)?, num(r, y)?)))
        .collect();
    p.sort_by(|a, b| a.0.total_cmp(&b.0));
    p
}

/// Paper rows whose `table` starts with `prefix`.
pub fn paper_table<'a>(r: &'a Report, prefix: &str) -> Vec<&'a Row> {
    r.paper
        .iter()
        .filter(|p| text(p, "table").is_some_and(|t| t.starts_with(prefix)))
        .collect()
}

/// The devices rows ran on (`device` key), or one unnamed device.
pub fn devices(rows: &[Row]) -> Vec<Option<String>> {
    let refs: Vec<&Row> = rows.iter().collect();
    let d: Vec<Option<String>> = distinct(&refs, "device")
        .into_iter()
        .map(|v| v.as_str().map(str::to_string))
        .collect();
    if d.is_empty() {
        vec![None]
    } else {
        d
    }
}

/// Rows on `device` (all rows when None).
pub fn on_device<'a>(rows: &'a [Row], device: &Option<String>) -> Vec<&'a Row> {
    rows.iter()
        .filter(|r| match device {
            Some(d) => is(r, "device", d),
            None => true,
        })
        .collect()
}

/// " (device sim)" for titles, when the rows name devices.
pub fn device_suffix(device: &Option<String>) -> String {
    device
        .as_deref()
        .map(|d| format!(" — device {d}"))
        .unwrap_or_default()
}
