//! `flashlab sim --plot FILE.svg`: charts stacked under a title in one standalone SVG (`lab`
//! builds the run's WAF and latency charts; this draws them).

use crate::error::ReportError;
use crate::html::esc;
use crate::plot::{Plot, HEIGHT, WIDTH};

/// Height of the title band above the charts.
const TITLE_HEIGHT: u32 = 34;

/// The SVG text: `title`, then each `(id, plot)` below the last.
pub fn svg(title: &str, plots: &[(&str, Plot)]) -> Result<String, ReportError> {
    let place = |svg: &str, y: u32| svg.replacen("<svg", &format!("<svg x=\"0\" y=\"{y}\""), 1);
    let mut body = Vec::with_capacity(plots.len());
    for (i, (id, plot)) in plots.iter().enumerate() {
        let y = TITLE_HEIGHT + i as u32 * HEIGHT;
        body.push(place(&plot.svg(id)?, y));
    }
    let total = TITLE_HEIGHT + plots.len() as u32 * HEIGHT;
    Ok(format!(
        "<svg width=\"{WIDTH}\" height=\"{total}\" viewBox=\"0 0 {WIDTH} {total}\" xmlns=\"http://www.w3.org/2000/svg\">\n<rect width=\"100%\" height=\"100%\" fill=\"white\"/>\n<text x=\"12\" y=\"22\" font-family=\"sans-serif\" font-size=\"15\" font-weight=\"bold\">{}</text>\n{}\n</svg>\n",
        esc(title),
        body.join("\n")
    ))
}
