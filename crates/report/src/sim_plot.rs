//! `flashlab sim --plot FILE.svg`: one run's WAF and latency over the measured phase
//! (`SimResult::timeline`), two charts stacked in one standalone SVG.

use crate::html::esc;
use crate::plot::{Chart, Line, Marker, Plot, Source, HEIGHT, WIDTH};
use crate::results::ReportError;
use lab::sim::SimResult;

/// Height of the title band above the charts.
const TITLE_HEIGHT: u32 = 34;

/// The SVG text.
pub fn svg(r: &SimResult) -> Result<String, ReportError> {
    let x = |f: &dyn Fn(&lab::sim::TimelinePoint) -> Option<f64>| -> Vec<(f64, f64)> {
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
            Line::ours("WAF since the start", "cum", x(&|p| p.waf_cumulative)),
            Line::ours("WAF per interval", "int", x(&|p| p.waf_interval)),
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
    let latency = Chart {
        x_label: x_label.into(),
        y_label: "latency (µs)".into(),
        lines: vec![
            Line::ours("mean per interval", "mean", x(&|p| Some(p.latency_us_mean))),
            Line::ours("p99 per interval", "p99", x(&|p| Some(p.latency_us_p99))),
        ],
        ..Chart::default()
    };
    let top = Plot::Lines(waf).svg("sim-waf")?;
    let bottom = Plot::Lines(latency).svg("sim-latency")?;
    let title = format!(
        "flashlab sim: {} on {} ({} FTL, {} GC, seed {})",
        r.workload, r.preset, r.ftl, r.gc_policy, r.seed
    );
    let place = |svg: &str, y: u32| svg.replacen("<svg", &format!("<svg x=\"0\" y=\"{y}\""), 1);
    let total = TITLE_HEIGHT + 2 * HEIGHT;
    Ok(format!(
        "<svg width=\"{WIDTH}\" height=\"{total}\" viewBox=\"0 0 {WIDTH} {total}\" xmlns=\"http://www.w3.org/2000/svg\">\n<rect width=\"100%\" height=\"100%\" fill=\"white\"/>\n<text x=\"12\" y=\"22\" font-family=\"sans-serif\" font-size=\"15\" font-weight=\"bold\">{}</text>\n{}\n{}\n</svg>\n",
        esc(&title),
        place(&top, TITLE_HEIGHT),
        place(&bottom, TITLE_HEIGHT + HEIGHT)
    ))
}
