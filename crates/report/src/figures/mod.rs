//! One chart per paper figure, built from an experiment's `Report` alone. Each experiment has
//! its module (the mapping from its rows to the paper's figures); measured curves in
//! `Report::series` that no module draws get a chart each, so a new experiment's curves show
//! up without code here.

mod as_btree;
mod async_scan;
mod ext_buffer;
mod ioa_ftl;
mod multistream;

use crate::plot::{Chart, Line, Plot};
use lab::{Report, Row};
use serde_json::Value;

/// One chart of the page.
#[derive(Clone, Debug)]
pub struct Figure {
    /// Unique on the page: `EXPERIMENT-what` (the browser check finds plots by it).
    pub id: String,
    pub title: String,
    /// What is drawn, how it was normalised, what the paper's marks are.
    pub caption: String,
    pub plot: Plot,
}

/// The figures of one experiment's report, empty charts left out.
pub fn for_report(r: &Report) -> Vec<Figure> {
    let mut figs = match r.experiment.as_str() {
        "as-btree" => as_btree::figures(r),
        "async-scan" => async_scan::figures(r),
        "ext-buffer" => ext_buffer::figures(r),
        "ioa-ftl" => ioa_ftl::figures(r),
        "multistream" => multistream::figures(r),
        _ => Vec::new(),
    };
    let drawn: &[&str] = match r.experiment.as_str() {
        "multistream" => multistream::SERIES_DRAWN,
        _ => &[],
    };
    figs.extend(series_figures(r, drawn));
    figs.retain(|f| !f.plot.is_empty());
    figs
}

/// A chart per `series` name not in `drawn`: one line per label.
fn series_figures(r: &Report, drawn: &[&str]) -> Vec<Figure> {
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

/// `[a-z0-9-]` only, for ids.
pub fn slug(s: &str) -> String {
    let mut out = String::new();
    for c in s.chars() {
        if c.is_ascii_alphanumeric() {
            out.push(c.to_ascii_lowercase());
        } else if !out.ends_with('-') {
            out.push('-');
        }
    }
    out.trim_matches('-').to_string()
}

/// A number under `key` (integers and floats).
pub(crate) fn num(r: &Row, key: &str) -> Option<f64> {
    r.get(key).and_then(Value::as_f64)
}

/// A string under `key`.
pub(crate) fn text<'a>(r: &'a Row, key: &str) -> Option<&'a str> {
    r.get(key).and_then(Value::as_str)
}

/// Whether `r[key]` is the string `value`.
pub(crate) fn is(r: &Row, key: &str, value: &str) -> bool {
    text(r, key) == Some(value)
}

/// The distinct values under `key` (strings, or numbers printed), in first-seen order.
pub(crate) fn distinct(rows: &[&Row], key: &str) -> Vec<Value> {
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
pub(crate) fn points<'a>(
    rows: impl IntoIterator<Item = &'a Row>,
    x: &str,
    y: &str,
) -> Vec<(f64, f64)> {
    let mut p: Vec<(f64, f64)> = rows
        .into_iter()
        .filter_map(|r| Some((num(r, x)?, num(r, y)?)))
        .collect();
    p.sort_by(|a, b| a.0.total_cmp(&b.0));
    p
}

/// Points divided by `base` (none when the base is missing or zero).
pub(crate) fn relative(p: Vec<(f64, f64)>, base: Option<f64>) -> Vec<(f64, f64)> {
    match base {
        Some(b) if b != 0.0 && b.is_finite() => p.into_iter().map(|(x, y)| (x, y / b)).collect(),
        _ => Vec::new(),
    }
}

/// Points whose y is divided by the base at the same x (`base(x)`); points without a base drop.
pub(crate) fn relative_each(
    p: Vec<(f64, f64)>,
    base: impl Fn(f64) -> Option<f64>,
) -> Vec<(f64, f64)> {
    p.into_iter()
        .filter_map(|(x, y)| {
            let b = base(x).filter(|b| *b != 0.0 && b.is_finite())?;
            Some((x, y / b))
        })
        .collect()
}

/// Paper rows whose `table` starts with `prefix`.
pub(crate) fn paper_table<'a>(r: &'a Report, prefix: &str) -> Vec<&'a Row> {
    r.paper
        .iter()
        .filter(|p| text(p, "table").is_some_and(|t| t.starts_with(prefix)))
        .collect()
}

/// The devices rows ran on (`device` key), or one unnamed device.
pub(crate) fn devices(rows: &[Row]) -> Vec<Option<String>> {
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
pub(crate) fn on_device<'a>(rows: &'a [Row], device: &Option<String>) -> Vec<&'a Row> {
    rows.iter()
        .filter(|r| match device {
            Some(d) => is(r, "device", d),
            None => true,
        })
        .collect()
}

/// " (device sim)" for titles, when the rows name devices.
pub(crate) fn device_suffix(device: &Option<String>) -> String {
    device
        .as_deref()
        .map(|d| format!(" — device {d}"))
        .unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn slugs_and_relative_points() {
        assert_eq!(slug("WAF over time (P5)"), "waf-over-time-p5");
        assert_eq!(relative(vec![(1.0, 4.0)], Some(2.0)), vec![(1.0, 2.0)]);
        assert!(relative(vec![(1.0, 4.0)], Some(0.0)).is_empty());
        let r = relative_each(vec![(1.0, 4.0), (2.0, 3.0)], |x| (x == 1.0).then_some(4.0));
        assert_eq!(r, vec![(1.0, 1.0)]);
    }
}
