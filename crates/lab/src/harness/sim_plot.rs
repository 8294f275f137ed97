//! `flashlab sim --plot FILE.svg`: one run's WAF and latency over the measured phase
//! (`SimResult::timeline`) as two charts, stacked by the renderer into one standalone SVG.
//! The latency chart shows the mean, p99, p99.9 and the maximum per interval on a log axis,
//! so a one-second stall stands out above microsecond means.

use crate::sim::{SimResult, TimelinePoint};
use render::plot::{Chart, Line, Marker, Plot, Source};
use render::ReportError;

/// The SVG text.
pub fn svg(r: &SimResult) -> Result<String, ReportError> {
    let x = |f: &dyn Fn(&TimelinePoint) -> Option<f64>| -> Vec<(f64, f64)> {
        r.timeline
            .iter()
            .filter_map(|p| Some((p.host_pages_x_capacity, f(p)?)))
            .collect()
    };
    let x_label = "host pages in the measured phase (× logical capacity)";
    let mut waf = Chart {
        x_label: x_label.into(),
        y_label: "WAF".into(),
        lines: vec![
            Line::ours(
                "WAF since the start",
                "waf cumulative",
                x(&|p| p.waf_cumulative),
            ),
            Line::ours(
                "WAF per interval",
                "waf per interval",
                x(&|p| p.waf_interval),
            ),
        ],
        ..Chart::default()
    };
    if let Some(m) = r.waf_model {
        waf.y_markers.push(Marker {
            label: format!("closed-form model {m:.3}"),
            value: m,
            source: Source::Ours,
            color_key: None,
        });
    }
    // Zero means no request completed in the interval: not drawn (and not on a log axis).
    let lat = |f: fn(&TimelinePoint) -> f64| x(&|p| Some(f(p)).filter(|v| *v > 0.0));
    let latency = Chart {
        x_label: x_label.into(),
        y_label: "latency per interval (µs, log)".into(),
        y_log: true,
        lines: vec![
            Line::ours("max", "max", lat(|p| p.latency_us_max)),
            Line::ours("p99.9", "p99.9", lat(|p| p.latency_us_p999)),
            Line::ours("p99", "p99", lat(|p| p.latency_us_p99)),
            Line::ours("mean", "mean", lat(|p| p.latency_us_mean)),
        ],
        ..Chart::default()
    };
    let title = format!(
        "flashlab sim: {} on {} ({} FTL, {} GC, seed {})",
        r.workload, r.preset, r.ftl, r.gc_policy, r.seed
    );
    render::sim_plot::svg(
        &title,
        &[
            ("sim-waf", Plot::Lines(waf)),
            ("sim-latency", Plot::Lines(latency)),
        ],
    )
}
