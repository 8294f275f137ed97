//! `flashlab sim --plot FILE.svg`: charts stacked under a title in one standalone SVG (`lab`
//! builds the run's WAF and latency charts; this draws them).

use crate::error::ReportError;
use crate::html::esc;
use crate::plot::{Plot, WIDTH};

/// Height of the title band above the charts.
const TITLE_HEIGHT: u32 = 34;

/// The SVG text: `title`, then each `(id, plot)` below the last.
pub fn svg(title: &str, plots: &[(&str, Plot)]) -> Result<String, ReportError> {
    let place = |svg: &str, y: u32| svg.replacen("<svg", &format!("<svg x=\"0\" y=\"{y}\""), 1);
    let mut body = Vec::with_capacity(plots.len());
    let mut total = TITLE_HEIGHT;
    for (id, plot) in plots {
        let svg = plot.svg(id)?;
        body.push(place(&svg, total));
        total += height_of(&svg);
    }
    Ok(format!(
        "<svg width=\"{WIDTH}\" height=\"{total}\" viewBox=\"0 0 {WIDTH} {total}\" xmlns=\"http://www.w3.org/2000/svg\">\n<rect width=\"100%\" height=\"100%\" fill=\"white\"/>\n<text x=\"12\" y=\"22\" font-family=\"sans-serif\" font-size=\"15\" font-weight=\"bold\">{}</text>\n{}\n</svg>\n",
        esc(title),
        body.join("\n")
    ))
}

/// The `height` of an SVG's root element (a chart grows to hold its legend).
fn height_of(svg: &str) -> u32 {
    let tag = &svg[..svg.find('>').unwrap_or(svg.len())];
    let value = tag.split("height=\"").nth(1).unwrap_or("");
    let value = &value[..value.find('"').unwrap_or(0)];
    value.parse().unwrap_or(crate::plot::HEIGHT)
}
