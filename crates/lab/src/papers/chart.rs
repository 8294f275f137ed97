//! What the papers' figures share: reading a report's rows as a paper's typed rows, small
//! helpers over typed values, and the charts of measured curves (`Report::series`) that no
//! paper's `figures.rs` draws, so a new experiment's curves show up without code.

use crate::{Report, Row};
use render::plot::{Chart, Line, Plot};
use serde::de::DeserializeOwned;

pub use render::figures::{in_x_order, relative, relative_each, slug, Figure};

/// The most series one panel holds before it is split into small multiples.
pub const MAX_SERIES: usize = 6;

/// Every row of `rows` that reads as a `T` (a field renamed in `T` is a compile error where
/// it is used; a row of another shape is skipped, as a figure draws what it has).
pub fn typed<T: DeserializeOwned>(rows: &[Row]) -> Vec<T> {
    rows.iter()
        .filter_map(|r| serde_json::from_value(serde_json::Value::Object(r.clone())).ok())
        .collect()
}

/// The distinct values, in first-seen order.
pub fn distinct<T: PartialEq>(values: impl IntoIterator<Item = T>) -> Vec<T> {
    let mut out: Vec<T> = Vec::new();
    for v in values {
        if !out.contains(&v) {
            out.push(v);
        }
    }
    out
}

/// `(x, y)` points in x order.
pub fn xy(points: impl IntoIterator<Item = (f64, f64)>) -> Vec<(f64, f64)> {
    in_x_order(points.into_iter().collect())
}

/// A chart per `series` name not in `drawn`: one line per label.
pub fn series_figures(r: &Report, drawn: &[&str]) -> Vec<Figure> {
    let names = distinct(
        r.series
            .iter()
            .map(|s| s.name.as_str())
            .filter(|n| !drawn.contains(n)),
    );
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

/// A line chart with more than [`MAX_SERIES`] lines as small multiples: one figure per
/// `panel(line)` (in first-seen order), each with the chart's reference rules; the first
/// keeps the figure's id, the others add the panel's slug. Other figures pass unchanged.
pub fn small_multiples(f: Figure, panel: impl Fn(&Line) -> String) -> Vec<Figure> {
    let Plot::Lines(chart) = &f.plot else {
        return vec![f];
    };
    if chart.lines.len() <= MAX_SERIES {
        return vec![f];
    }
    let panels = distinct(chart.lines.iter().map(&panel));
    panels
        .iter()
        .enumerate()
        .map(|(i, name)| Figure {
            id: match i {
                0 => f.id.clone(),
                _ => format!("{}-{}", f.id, slug(name)),
            },
            title: format!("{} ({name})", f.title),
            caption: f.caption.clone(),
            plot: Plot::Lines(Chart {
                lines: chart
                    .lines
                    .iter()
                    .filter(|l| panel(l) == *name)
                    .cloned()
                    .collect(),
                ..chart.clone()
            }),
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn typed_rows_skip_other_shapes_and_distinct_keeps_order() {
        #[derive(serde::Deserialize)]
        struct R {
            a: f64,
        }
        let rows = vec![
            crate::report::row([("a", 1.into())]),
            crate::report::row([("a", "x".into())]),
        ];
        let t: Vec<R> = typed(&rows);
        assert_eq!(t.len(), 1);
        assert_eq!(t[0].a, 1.0);
        assert_eq!(distinct([3, 1, 3, 2]), vec![3, 1, 2]);
        assert_eq!(xy([(2.0, 0.0), (1.0, 1.0)]), vec![(1.0, 1.0), (2.0, 0.0)]);
    }

    #[test]
    fn more_than_six_series_become_small_multiples() {
        let line = |i: usize| Line::ours(format!("s{i}"), &format!("s{i}"), vec![(0.0, 1.0)]);
        let fig = |n: usize| Figure {
            id: "x".into(),
            title: "t".into(),
            caption: String::new(),
            plot: Plot::Lines(Chart {
                lines: (0..n).map(line).collect(),
                ..Chart::default()
            }),
        };
        let parity = |l: &Line| {
            if l.label.ends_with(['0', '2', '4', '6', '8']) {
                "even"
            } else {
                "odd"
            }
            .to_string()
        };
        assert_eq!(small_multiples(fig(6), parity).len(), 1);
        let split = small_multiples(fig(12), parity);
        let ids: Vec<&str> = split.iter().map(|f| f.id.as_str()).collect();
        assert_eq!(ids, ["x", "x-odd"]);
        for f in &split {
            let Plot::Lines(c) = &f.plot else { panic!() };
            assert_eq!(c.lines.len(), 6);
        }
    }
}
