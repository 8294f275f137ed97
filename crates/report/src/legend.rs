//! A chart's legend and marker shapes as plain SVG: the legend sits in a column right of the
//! plot area (never over the data), its text large enough to read in print (the page prints
//! one chart per line, so [`FONT_PX`] of [`crate::plot::WIDTH`] is ≥ 9 pt on A4), long labels
//! wrapped, and the chart grows taller rather than cut an entry off. Each legend is one
//! `<g class="chart-legend">` and the plot area one `<rect class="plot-area">`, so the browser check
//! can prove no legend text leaves its chart or covers the plot.

use crate::html::esc;
use crate::style::{Shape, Style};
use std::fmt::Write;

/// Legend text size (px of the chart's own coordinates).
pub const FONT_PX: u32 = 14;
/// Height of one legend text line.
pub const LINE_PX: u32 = 18;
/// Space between two entries.
const GAP_PX: u32 = 6;
/// Top margin of the legend column.
const TOP_PX: u32 = 18;
/// Width of the legend column right of the plot.
pub const WIDTH_PX: u32 = 240;
/// Where the text starts, right of the sample.
const TEXT_X: u32 = 34;
/// Characters per legend line before it wraps: the column less the sample, at a generous
/// 0.6 em per character of a sans-serif face (the browser check measures the real width).
pub const CHARS: usize = ((WIDTH_PX - TEXT_X - 8) as f64 / (FONT_PX as f64 * 0.6)) as usize;
const _: () = assert!(
    CHARS >= 20,
    "a legend column too narrow for a policy's name"
);

/// How a legend entry's sample is drawn.
#[derive(Clone, Copy, Debug)]
pub enum Sample {
    /// Ours: a solid line with a filled marker.
    OursLine,
    /// The paper's: a dashed line with a hollow marker.
    PaperLine,
    /// A reference value: a dashed rule.
    Rule,
    OursBar,
    PaperBar,
}

pub struct Entry {
    pub label: String,
    pub style: Style,
    pub sample: Sample,
}

/// Words of `s` in lines of at most `width` characters (a longer word stands alone).
pub fn wrap(s: &str, width: usize) -> Vec<String> {
    let mut lines: Vec<String> = Vec::new();
    let mut cur = String::new();
    for w in s.split_whitespace() {
        if !cur.is_empty() && cur.chars().count() + 1 + w.chars().count() > width {
            lines.push(std::mem::take(&mut cur));
        }
        if !cur.is_empty() {
            cur.push(' ');
        }
        cur.push_str(w);
    }
    if !cur.is_empty() {
        lines.push(cur);
    }
    lines
}

/// Height the legend needs.
pub fn height(entries: &[Entry]) -> u32 {
    let lines: usize = entries
        .iter()
        .map(|e| wrap(&e.label, CHARS).len().max(1))
        .sum();
    TOP_PX + lines as u32 * LINE_PX + entries.len() as u32 * GAP_PX
}

pub fn rgb((r, g, b): (u8, u8, u8)) -> String {
    format!("#{r:02x}{g:02x}{b:02x}")
}

/// A marker of `shape` centred at `(x, y)` with half-size `r`: filled, or hollow (white inside).
pub fn shape_svg(
    shape: Shape,
    x: f64,
    y: f64,
    r: f64,
    color: (u8, u8, u8),
    filled: bool,
) -> String {
    let c = rgb(color);
    let paint = if filled {
        format!("fill=\"{c}\" stroke=\"{c}\" stroke-width=\"1\"")
    } else {
        format!("fill=\"white\" stroke=\"{c}\" stroke-width=\"1.5\"")
    };
    let poly = |pts: &[(f64, f64)]| {
        let p: Vec<String> = pts
            .iter()
            .map(|(dx, dy)| format!("{:.1},{:.1}", x + dx, y + dy))
            .collect();
        format!("<polygon points=\"{}\" {paint}/>", p.join(" "))
    };
    let bar = |w: f64| format!("stroke=\"{c}\" stroke-width=\"{w}\"");
    match shape {
        Shape::Circle => format!("<circle cx=\"{x:.1}\" cy=\"{y:.1}\" r=\"{r:.1}\" {paint}/>"),
        Shape::Square => poly(&[(-r, -r), (r, -r), (r, r), (-r, r)]),
        Shape::TriangleUp => poly(&[(0.0, -r * 1.2), (r * 1.1, r * 0.8), (-r * 1.1, r * 0.8)]),
        Shape::TriangleDown => poly(&[(0.0, r * 1.2), (r * 1.1, -r * 0.8), (-r * 1.1, -r * 0.8)]),
        Shape::Diamond => poly(&[
            (0.0, -r * 1.3),
            (r * 1.1, 0.0),
            (0.0, r * 1.3),
            (-r * 1.1, 0.0),
        ]),
        Shape::Cross | Shape::Plus => {
            let (a, b) = if matches!(shape, Shape::Cross) {
                (r, r)
            } else {
                (r * 1.2, 0.0)
            };
            let w = if filled { 2.5 } else { 1.5 };
            format!(
                "<path d=\"M{:.1},{:.1}L{:.1},{:.1}M{:.1},{:.1}L{:.1},{:.1}\" {} fill=\"none\"/>",
                x - a,
                y - b,
                x + a,
                y + b,
                x - b,
                y + a,
                x + b,
                y - a,
                bar(w)
            )
        }
    }
}

fn sample_svg(e: &Entry, mid: f64) -> String {
    let c = rgb(e.style.color);
    let line = |dash: &str, w: f64| {
        format!("<line x1=\"4\" y1=\"{mid}\" x2=\"28\" y2=\"{mid}\" stroke=\"{c}\" stroke-width=\"{w}\"{dash}/>")
    };
    let rect = |fill: &str| {
        format!(
            "<rect x=\"7\" y=\"{}\" width=\"18\" height=\"11\" fill=\"{fill}\" stroke=\"{c}\"/>",
            mid - 5.5
        )
    };
    match e.sample {
        Sample::OursLine => {
            line("", 2.0) + &shape_svg(e.style.shape, 16.0, mid, 4.0, e.style.color, true)
        }
        Sample::PaperLine => {
            line(" stroke-dasharray=\"5 3\"", 1.5)
                + &shape_svg(e.style.shape, 16.0, mid, 4.5, e.style.color, false)
        }
        Sample::Rule => line(" stroke-dasharray=\"4 4\"", 1.5),
        Sample::OursBar => rect(&c),
        Sample::PaperBar => rect(&format!("{c}40")),
    }
}

/// The legend column starting at x = `left`: one `<g class="chart-legend">`.
pub fn svg(entries: &[Entry], left: u32) -> String {
    let mut h = format!("<g class=\"chart-legend\" transform=\"translate({left},0)\" font-family=\"sans-serif\" font-size=\"{FONT_PX}\" fill=\"#282828\">");
    let mut y = TOP_PX;
    for e in entries {
        let lines = wrap(&e.label, CHARS);
        let mid = y as f64 + LINE_PX as f64 / 2.0 - 3.0;
        h.push_str(&sample_svg(e, mid));
        for (i, line) in lines.iter().enumerate() {
            let base = y + i as u32 * LINE_PX + FONT_PX - 4;
            let _ = write!(h, "<text x=\"{TEXT_X}\" y=\"{base}\">{}</text>", esc(line));
        }
        y += lines.len().max(1) as u32 * LINE_PX + GAP_PX;
    }
    h.push_str("</g>");
    h
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::style::style_of;

    #[test]
    fn labels_wrap_at_word_boundaries_within_the_column() {
        let w = wrap("paper: > 200 % faster than disks alone (below)", 24);
        assert_eq!(w, vec!["paper: > 200 % faster", "than disks alone (below)"]);
        assert!(wrap("", 30).is_empty());
    }

    #[test]
    fn every_entry_has_room() {
        let e = |l: &str| Entry {
            label: l.into(),
            style: style_of(l),
            sample: Sample::OursLine,
        };
        let one = height(&[e("a")]);
        let two = height(&[e("a"), e("a longer label that wraps in two")]);
        assert_eq!(two - one, 2 * LINE_PX + GAP_PX);
        let svg = svg(&[e("x < y")], 500);
        assert!(svg.contains("x &lt; y") && svg.starts_with("<g class=\"chart-legend\""));
    }
}
