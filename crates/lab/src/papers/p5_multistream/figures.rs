//! P5 (multi-stream SSD): WAF over time per stream policy (`series` `waf_over_time`, label =
//! policy), the final WAF per policy beside the paper's, and the lifetime histogram per data
//! type (`series` `lifetime_histogram`). Paper rows are read where they carry `policy` and
//! `waf`; the lifetime table itself is among the experiment's text tables.

use super::MultistreamRow;
use crate::papers::chart::{small_multiples, typed, Figure};
use crate::Report;
use render::plot::{BarGroup, Bars, Chart, Line, Marker, Plot, Source};
use serde::Deserialize;

/// A paper row that names a policy's final WAF (`paper.toml`).
#[derive(Deserialize)]
struct PaperWaf {
    policy: String,
    waf: f64,
}

/// The series this module draws (the generic series charts skip them).
pub const SERIES_DRAWN: &[&str] = &["waf_over_time", "lifetime_histogram"];

/// The paper's first final WAF for each policy it reports.
fn paper_waf(r: &Report) -> Vec<(String, f64)> {
    let mut out: Vec<(String, f64)> = Vec::new();
    for p in typed::<PaperWaf>(&r.paper) {
        if !out.iter().any(|(q, _)| *q == p.policy) {
            out.push((p.policy, p.waf));
        }
    }
    out
}

/// A series label's policy and GC mode: `per-type (gc separate)` -> (`per-type`, `gc separate`);
/// a label with no mode is the default, GC per stream.
fn policy_and_mode(label: &str) -> (&str, &str) {
    match label.split_once(" (") {
        Some((policy, mode)) => (policy, mode.trim_end_matches(')')),
        None => (label, "gc per stream"),
    }
}

fn series_chart(r: &Report, name: &str, markers: Vec<Marker>) -> Option<Chart> {
    let of: Vec<_> = r.series.iter().filter(|s| s.name == name).collect();
    let first = of.first()?;
    Some(Chart {
        x_label: first.x.replace('_', " "),
        y_label: first.y.replace('_', " "),
        lines: of
            .iter()
            .map(|s| {
                let (policy, mode) = policy_and_mode(&s.label);
                let label = match mode {
                    "gc per stream" => format!("ours: {policy}"),
                    mode => format!("ours: {policy} ({mode})"),
                };
                // Keyed by the policy: one look per policy in every panel.
                Line::ours(label, policy, s.points.clone())
            })
            .collect(),
        y_markers: markers,
        ..Chart::default()
    })
}

pub fn figures(r: &Report) -> Vec<Figure> {
    let paper = paper_waf(r);
    let mut out = Vec::new();
    let markers = paper
        .iter()
        .map(|(policy, waf)| Marker {
            label: format!("paper: {policy} {waf}"),
            value: *waf,
            source: Source::Paper,
            color_key: Some(policy.clone()),
        })
        .collect();
    if let Some(chart) = series_chart(r, "waf_over_time", markers) {
        let fig = Figure {
            id: "multistream-waf-over-time".into(),
            title: "P5: WAF over time, per stream policy".into(),
            caption: "Write amplification (flash page writes ÷ host page writes) as the updates go on, sampled every few % of the device written; one panel per GC mode; dashed, in the policy's colour: the paper's final WAF (PM953, SMART).".into(),
            plot: Plot::Lines(chart),
        };
        let mode = |l: &Line| {
            policy_and_mode(l.label.trim_start_matches("ours: "))
                .1
                .to_string()
        };
        out.extend(small_multiples(fig, mode));
    }
    let policies: Vec<MultistreamRow> = typed(&r.rows);
    if !policies.is_empty() {
        let cats: Vec<String> = policies.iter().map(|q| q.policy.clone()).collect();
        let mut groups = vec![BarGroup {
            label: "ours: final WAF".into(),
            values: policies.iter().map(|q| Some(q.waf)).collect(),
            source: Source::Ours,
        }];
        if !paper.is_empty() {
            groups.push(BarGroup {
                label: "paper: final WAF".into(),
                values: cats
                    .iter()
                    .map(|c| paper.iter().find(|(p, _)| p == c).map(|(_, w)| *w))
                    .collect(),
                source: Source::Paper,
            });
        }
        out.push(Figure {
            id: "multistream-final-waf".into(),
            title: "P5: final WAF per stream policy".into(),
            caption: "Final WAF of each policy; pale, outlined: the paper's where it names the same policy.".into(),
            plot: Plot::Bars(Bars {
                y_label: "WAF".into(),
                categories: cats,
                groups,
            }),
        });
    }
    if let Some(mut chart) = series_chart(r, "lifetime_histogram", Vec::new()) {
        // log₂ buckets on a log₂ axis; page counts span decades.
        chart.x_log = true;
        chart.y_log = true;
        out.push(Figure {
            id: "multistream-lifetime".into(),
            title: "P5 Table 1: lifetime of each data type".into(),
            caption: "Distribution of lifetimes (device writes between two writes of the same LBA) per data type, in log₂ buckets (x: the bucket's low end), pages on a log axis; the mean, median and share of writes are in the lifetime table below.".into(),
            plot: Plot::Lines(chart),
        });
    }
    out
}
