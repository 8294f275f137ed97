//! Charts as SVG text (plotters' SVG backend for axes and lines; marker shapes and the legend
//! as plain SVG, [`crate::legend`]): lines over a numeric x axis and grouped bars over
//! categories. Every series takes its colour and marker from its name ([`style_of`]), the same
//! in every figure. Our measured lines are solid with filled markers; the paper's are dashed
//! with hollow markers of the same shape (bars: outlined, pale) and every paper legend entry
//! starts with "paper:", so the two can never be confused, in colour or in print. A line that
//! a later one would cover is drawn wide and pale beneath it.

use crate::error::ReportError;
use crate::legend::{self, Entry, Sample};
use crate::style::{style_of, Style};
use plotters::prelude::*;

/// Who made a line's numbers.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Source {
    /// Measured by this run.
    Ours,
    /// The paper's figures (or claims), for comparison.
    Paper,
}

/// One line: `(x, y)` points in x order.
#[derive(Clone, Debug)]
pub struct Line {
    pub label: String,
    pub points: Vec<(f64, f64)>,
    pub source: Source,
    /// The name that picks the line's colour and marker ([`style_of`]): the policy, scheme
    /// or variant; ours and the paper's line of one scheme share it.
    pub color_key: String,
}

impl Line {
    pub fn ours(label: impl Into<String>, key: &str, points: Vec<(f64, f64)>) -> Line {
        Line {
            label: label.into(),
            points,
            source: Source::Ours,
            color_key: key.to_string(),
        }
    }
    pub fn paper(label: impl Into<String>, key: &str, points: Vec<(f64, f64)>) -> Line {
        Line {
            label: label.into(),
            points,
            source: Source::Paper,
            color_key: key.to_string(),
        }
    }
}

/// A reference value drawn across the chart (a paper's bound, a single measured baseline).
#[derive(Clone, Debug)]
pub struct Marker {
    pub label: String,
    pub value: f64,
    pub source: Source,
    /// Drawn in the colour of this name (e.g. the same policy), if any.
    pub color_key: Option<String>,
}

/// A line chart.
#[derive(Clone, Debug, Default)]
pub struct Chart {
    pub x_label: String,
    pub y_label: String,
    /// Plot x on a log2 axis (batch sizes 1..256).
    pub x_log: bool,
    /// Plot y on a log10 axis (series that span decades); values <= 0 are not drawn.
    pub y_log: bool,
    /// Fit the y axis to the data instead of starting it at zero (series that differ in
    /// the third digit, e.g. hit ratios between 0.85 and 0.88).
    pub y_fit: bool,
    pub lines: Vec<Line>,
    /// Horizontal reference lines.
    pub y_markers: Vec<Marker>,
    /// Vertical reference lines.
    pub x_markers: Vec<Marker>,
}

/// One group of bars: a value per category (None: no bar).
#[derive(Clone, Debug)]
pub struct BarGroup {
    pub label: String,
    pub values: Vec<Option<f64>>,
    pub source: Source,
}

/// Grouped bars over categories.
#[derive(Clone, Debug, Default)]
pub struct Bars {
    pub y_label: String,
    pub categories: Vec<String>,
    pub groups: Vec<BarGroup>,
}

/// What a figure draws.
#[derive(Clone, Debug)]
pub enum Plot {
    Lines(Chart),
    Bars(Bars),
}

/// Pixel size of every chart (the page scales it down to its column); a chart whose legend
/// needs more room is taller ([`Plot::height`]).
pub const WIDTH: u32 = 760;
pub const HEIGHT: u32 = 420;

const GREY: (u8, u8, u8) = (90, 90, 90);
const BLACK: (u8, u8, u8) = (0, 0, 0);

fn rgb(c: (u8, u8, u8)) -> RGBColor {
    RGBColor(c.0, c.1, c.2)
}

impl Plot {
    /// The SVG text (`<svg ...>...</svg>`); `figure` names it in errors.
    pub fn svg(&self, figure: &str) -> Result<String, ReportError> {
        let mut out = String::new();
        let drawn = match self {
            Plot::Lines(c) => draw_lines(c, &mut out),
            Plot::Bars(b) => draw_bars(b, &mut out),
        };
        drawn.map_err(|message| ReportError::Plot {
            figure: figure.to_string(),
            message,
        })?;
        Ok(out)
    }

    /// Whether there is anything to draw.
    pub fn is_empty(&self) -> bool {
        match self {
            Plot::Lines(c) => c.lines.iter().all(|l| l.points.is_empty()),
            Plot::Bars(b) => b
                .groups
                .iter()
                .all(|g| g.values.iter().all(Option::is_none)),
        }
    }
}

/// The largest magnitude an axis spans: near f64::MAX, padding overflows to infinity and the
/// axis' tick loop never ends, so larger values are drawn at this edge.
const AXIS_ABS_MAX: f64 = 1e300;

/// The least and greatest finite values (within ±[`AXIS_ABS_MAX`]); None when there is none.
fn finite_bounds(values: impl Iterator<Item = f64>) -> Option<(f64, f64)> {
    let (mut lo, mut hi) = (f64::INFINITY, f64::NEG_INFINITY);
    for v in values.filter(|v| v.is_finite()) {
        let v = v.clamp(-AXIS_ABS_MAX, AXIS_ABS_MAX);
        lo = lo.min(v);
        hi = hi.max(v);
    }
    lo.is_finite().then_some((lo, hi))
}

/// `lo..hi` padded, including zero when every value is positive and close enough to it.
fn y_range(values: impl Iterator<Item = f64>) -> (f64, f64) {
    let Some((mut lo, mut hi)) = finite_bounds(values) else {
        return (0.0, 1.0);
    };
    if lo >= 0.0 {
        lo = 0.0;
    }
    if hi <= lo {
        hi = lo + 1.0;
    }
    let pad = (hi - lo) * 0.08;
    (if lo < 0.0 { lo - pad } else { lo }, hi + pad)
}

/// `lo..hi` padded; never below zero when no value is (one point at x = 0.1 must not draw
/// an axis from -0.9).
fn x_range(values: impl Iterator<Item = f64>) -> (f64, f64) {
    let Some((lo, hi)) = finite_bounds(values) else {
        return (0.0, 1.0);
    };
    let (lo_p, hi_p) = if hi <= lo {
        (lo - lo.abs().max(1.0) * 0.5, hi + hi.abs().max(1.0) * 0.5)
    } else {
        let pad = (hi - lo) * 0.04;
        (lo - pad, hi + pad)
    };
    // Positive data starts at zero at the lowest; data at zero keeps a sliver of pad so its
    // markers are not cut by the axis, too small for a negative tick.
    let lo_p = match lo {
        lo if lo > 0.0 => lo_p.max(0.0),
        lo if lo == 0.0 => -0.02 * (hi_p - lo),
        _ => lo_p,
    };
    (lo_p, hi_p)
}

fn err(e: impl std::fmt::Display) -> String {
    e.to_string()
}

/// x as plotted (log2 on a log axis; non-positive x cannot be drawn there and is dropped).
fn fx(log: bool, x: f64) -> Option<f64> {
    match (log, x > 0.0) {
        (false, _) => Some(x),
        (true, true) => Some(x.log2()),
        (true, false) => None,
    }
}

fn tick(v: f64) -> String {
    let a = v.abs();
    if a == 0.0 {
        "0".into()
    } else if a >= 1e10 {
        format!("{:.0}G", v / 1e9)
    } else if a >= 1e7 {
        format!("{:.0}M", v / 1e6)
    } else if a >= 10_000.0 {
        format!("{:.0}k", v / 1000.0)
    } else if a >= 100.0 {
        format!("{v:.0}")
    } else if a >= 1.0 {
        let s = format!("{v:.2}");
        s.trim_end_matches('0').trim_end_matches('.').to_string()
    } else {
        let s = format!("{v:.3}");
        s.trim_end_matches('0').trim_end_matches('.').to_string()
    }
}

type Area<'b> = DrawingArea<SVGBackend<'b>, plotters::coord::Shift>;

/// The canvas, `height` tall, split into the plot and the legend column (drawn by [`legend`]).
fn canvas(out: &mut String, height: u32) -> Result<Area<'_>, String> {
    let root = SVGBackend::with_string(out, (WIDTH, height)).into_drawing_area();
    root.fill(&WHITE).map_err(err)?;
    Ok(root.split_horizontally(WIDTH - legend::WIDTH_PX).0)
}

/// The chart's height: [`HEIGHT`], or taller when the legend needs it.
fn canvas_height(entries: &[Entry]) -> u32 {
    HEIGHT.max(legend::height(entries) + 12)
}

/// Add what plotters does not draw (marker shapes, the plot-area box, the legend) to the SVG.
fn finish(out: &mut String, overlay: &str) -> Result<(), String> {
    let at = out
        .rfind("</svg>")
        .ok_or("the SVG backend wrote no closing tag")?;
    out.insert_str(at, overlay);
    Ok(())
}

/// The plot area as an invisible box, for the browser check.
fn plot_area_svg(x: std::ops::Range<i32>, y: std::ops::Range<i32>) -> String {
    format!(
        "<rect class=\"plot-area\" x=\"{}\" y=\"{}\" width=\"{}\" height=\"{}\" fill=\"none\" stroke=\"none\"/>",
        x.start,
        y.start,
        x.end - x.start,
        y.end - y.start
    )
}

/// One line ready to draw: its points on the axes' scale and its look.
struct Prepared<'a> {
    line: &'a Line,
    points: Vec<(f64, f64)>,
    style: Style,
}

/// Whether most of line `i`'s points lie on a line drawn after it (it would be hidden).
fn hidden_by_later(lines: &[Prepared<'_>], i: usize, y_span: f64) -> bool {
    let near = |a: &(f64, f64), b: &(f64, f64)| {
        (a.0 - b.0).abs() <= 1e-9 * a.0.abs().max(1.0) && (a.1 - b.1).abs() <= 0.006 * y_span
    };
    let mine = &lines[i].points;
    lines[i + 1..].iter().any(|later| {
        let shared = mine
            .iter()
            .filter(|p| later.points.iter().any(|q| near(p, q)))
            .count();
        shared > 0 && shared * 2 >= mine.len()
    })
}

fn line_entry(p: &Prepared<'_>) -> Entry {
    let sample = match p.line.source {
        Source::Ours => Sample::OursLine,
        Source::Paper => Sample::PaperLine,
    };
    Entry {
        label: p.line.label.clone(),
        style: p.style,
        sample,
    }
}

/// A reference rule's look: the colour of the series it names, else black (paper) or grey.
fn rule_style(m: &Marker) -> Style {
    let color = match (&m.color_key, m.source) {
        (Some(k), _) => style_of(k).color,
        (None, Source::Paper) => BLACK,
        (None, Source::Ours) => GREY,
    };
    Style {
        color,
        shape: crate::style::Shape::Circle,
    }
}

/// Axis labels on a log axis: whole powers only (a fraction of a power would read as noise).
fn log_tick(v: f64, base: f64) -> String {
    if (v - v.round()).abs() < 1e-6 {
        tick(base.powf(v.round()))
    } else {
        String::new()
    }
}

fn draw_lines(c: &Chart, out: &mut String) -> Result<(), String> {
    let (x_log, y_log) = (c.x_log, c.y_log);
    let fy = |y: f64| match (y_log, y > 0.0) {
        (false, _) => Some(y),
        (true, true) => Some(y.log10()),
        (true, false) => None,
    };
    let lines: Vec<Prepared<'_>> = c
        .lines
        .iter()
        .map(|l| Prepared {
            line: l,
            points: l
                .points
                .iter()
                .filter(|(x, y)| x.is_finite() && y.is_finite())
                .filter_map(|&(x, y)| Some((fx(x_log, x)?, fy(y)?)))
                .collect(),
            style: style_of(&l.color_key),
        })
        .filter(|p| !p.points.is_empty())
        .collect();
    let xs = lines
        .iter()
        .flat_map(|p| p.points.iter().map(|q| q.0))
        .chain(c.x_markers.iter().filter_map(|m| fx(x_log, m.value)));
    let (x0, x1) = x_range(xs);
    let ys = lines
        .iter()
        .flat_map(|p| p.points.iter().map(|q| q.1))
        .chain(c.y_markers.iter().filter_map(|m| fy(m.value)));
    let (y0, y1) = match (y_log, c.y_fit) {
        // Whole decades around the data, not clamped to 0 (= 1 on the axis).
        (true, _) => finite_bounds(ys).map_or((0.0, 1.0), |(lo, hi)| {
            (lo.floor(), hi.ceil().max(lo.floor() + 1.0))
        }),
        (false, true) => x_range(ys),
        (false, false) => y_range(ys),
    };
    let rules: Vec<(&Marker, [(f64, f64); 2])> = c
        .y_markers
        .iter()
        .filter_map(|m| fy(m.value).map(|y| (m, [(x0, y), (x1, y)])))
        .chain(
            c.x_markers
                .iter()
                .filter_map(|m| fx(x_log, m.value).map(|x| (m, [(x, y0), (x, y1)]))),
        )
        .collect();
    let mut entries: Vec<Entry> = lines.iter().map(line_entry).collect();
    entries.extend(rules.iter().map(|(m, _)| Entry {
        label: m.label.clone(),
        style: rule_style(m),
        sample: Sample::Rule,
    }));
    let mut overlay = String::new();
    {
        let plot = canvas(out, canvas_height(&entries))?;
        let mut chart = ChartBuilder::on(&plot)
            .margin(12)
            .x_label_area_size(48)
            .y_label_area_size(70)
            .build_cartesian_2d(x0..x1, y0..y1)
            .map_err(err)?;
        let x_labels = if x_log {
            (x1 - x0).ceil() as usize + 2
        } else {
            7
        };
        let y_labels = if y_log {
            (y1 - y0).ceil() as usize + 2
        } else {
            8
        };
        chart
            .configure_mesh()
            .x_desc(c.x_label.as_str())
            .y_desc(c.y_label.as_str())
            .x_labels(x_labels)
            .y_labels(y_labels)
            .x_label_formatter(&|v| if x_log { log_tick(*v, 2.0) } else { tick(*v) })
            .y_label_formatter(&|v| if y_log { log_tick(*v, 10.0) } else { tick(*v) })
            .light_line_style(RGBColor(246, 246, 246))
            .label_style(("sans-serif", 14))
            .axis_desc_style(("sans-serif", 15))
            .draw()
            .map_err(err)?;
        let y_span = y1 - y0;
        for (i, p) in lines.iter().enumerate() {
            let halo = p.line.source == Source::Ours && hidden_by_later(&lines, i, y_span);
            draw_one_line(&mut chart, p, halo)?;
            let (r, filled) = match p.line.source {
                Source::Ours => (if halo { 5.5 } else { 4.0 }, true),
                Source::Paper => (5.0, false),
            };
            for q in &p.points {
                let (px, py) = chart.backend_coord(q);
                overlay.push_str(&legend::shape_svg(
                    p.style.shape,
                    px as f64,
                    py as f64,
                    r,
                    p.style.color,
                    filled,
                ));
            }
        }
        for (m, seg) in &rules {
            let color = rgb(rule_style(m).color);
            chart
                .draw_series(DashedLineSeries::new(*seg, 4, 4, color.stroke_width(1)))
                .map_err(err)?;
        }
        let (px, py) = chart.plotting_area().get_pixel_range();
        overlay.push_str(&plot_area_svg(px, py));
        plot.present().map_err(err)?;
    }
    overlay.push_str(&legend::svg(&entries, WIDTH - legend::WIDTH_PX));
    finish(out, &overlay)
}

type Cartesian<'a, 'b> = ChartContext<
    'a,
    SVGBackend<'b>,
    Cartesian2d<plotters::coord::types::RangedCoordf64, plotters::coord::types::RangedCoordf64>,
>;

/// The line itself (markers are drawn over it by the caller); a line a later one would hide
/// is drawn wide and pale beneath, so both stay visible.
fn draw_one_line<'a, 'b: 'a>(
    chart: &mut Cartesian<'a, 'b>,
    p: &Prepared<'_>,
    halo: bool,
) -> Result<(), String> {
    let color = rgb(p.style.color);
    let pts = p.points.iter().copied();
    match p.line.source {
        Source::Ours if halo => chart
            .draw_series(LineSeries::new(pts, color.mix(0.4).stroke_width(7)))
            .map(|_| ()),
        Source::Ours => chart
            .draw_series(LineSeries::new(pts, color.stroke_width(2)))
            .map(|_| ()),
        Source::Paper => chart
            .draw_series(DashedLineSeries::new(pts, 6, 4, color.stroke_width(2)))
            .map(|_| ()),
    }
    .map_err(err)
}

/// Category labels under the bars, in two staggered rows when one row would collide.
fn category_labels(cats: &[String], x: std::ops::Range<i32>, y_px: i32) -> String {
    let slot = (x.end - x.start) as f64 / cats.len().max(1) as f64;
    let widest = cats.iter().map(|c| c.chars().count()).max().unwrap_or(0) as f64 * 14.0 * 0.6;
    let stagger = widest > slot - 6.0;
    let mut h = String::from("<g class=\"chart-categories\" font-family=\"sans-serif\" font-size=\"14\" fill=\"#282828\" text-anchor=\"middle\">");
    for (i, c) in cats.iter().enumerate() {
        let cx = x.start as f64 + slot * (i as f64 + 0.5);
        let row = if stagger && i % 2 == 1 { 17 } else { 0 };
        h.push_str(&format!(
            "<text x=\"{cx:.1}\" y=\"{}\">{}</text>",
            y_px + 18 + row,
            crate::html::esc(c)
        ));
    }
    h.push_str("</g>");
    h
}

/// A look per bar group: its name's ([`style_of`]), unless an earlier group of another name
/// has that colour (bar groups are runs or sources, not series names seen elsewhere): then
/// the next free colour. Ours and the paper's group of one name (`ours: final WAF`, `paper:
/// final WAF`) keep one colour, told apart by fill.
fn bar_styles(groups: &[BarGroup]) -> Vec<Style> {
    let name = |g: &BarGroup| crate::style::normalize(&g.label);
    let mut out: Vec<Style> = Vec::new();
    for (i, g) in groups.iter().enumerate() {
        let mut style = style_of(&g.label);
        let taken =
            |c: (u8, u8, u8)| (0..i).any(|j| out[j].color == c && name(&groups[j]) != name(g));
        if taken(style.color) {
            if let Some(c) = crate::style::COLORS.iter().find(|c| !taken(**c)) {
                style.color = *c;
            }
        }
        out.push(style);
    }
    out
}

fn draw_bars(b: &Bars, out: &mut String) -> Result<(), String> {
    let n = b.categories.len().max(1);
    let groups = b.groups.len().max(1);
    let (y0, y1) = y_range(
        b.groups
            .iter()
            .flat_map(|g| g.values.iter().flatten().copied()),
    );
    let styles = bar_styles(&b.groups);
    let entries: Vec<Entry> = b
        .groups
        .iter()
        .zip(styles)
        .map(|(g, style)| Entry {
            label: g.label.clone(),
            style,
            sample: match g.source {
                Source::Ours => Sample::OursBar,
                Source::Paper => Sample::PaperBar,
            },
        })
        .collect();
    let mut overlay = String::new();
    {
        let plot = canvas(out, canvas_height(&entries))?;
        let mut chart = ChartBuilder::on(&plot)
            .margin(12)
            .x_label_area_size(48)
            .y_label_area_size(70)
            .build_cartesian_2d(-0.5..(n as f64 - 0.5), y0..y1)
            .map_err(err)?;
        chart
            .configure_mesh()
            .disable_x_mesh()
            .x_labels(2)
            .x_label_formatter(&|_| String::new())
            .y_desc(b.y_label.as_str())
            .y_label_formatter(&|v| tick(*v))
            .light_line_style(RGBColor(246, 246, 246))
            .label_style(("sans-serif", 14))
            .axis_desc_style(("sans-serif", 15))
            .draw()
            .map_err(err)?;
        let width = 0.8 / groups as f64;
        for (gi, (g, e)) in b.groups.iter().zip(&entries).enumerate() {
            let color = rgb(e.style.color);
            let bars: Vec<((f64, f64), (f64, f64))> = g
                .values
                .iter()
                .enumerate()
                .filter_map(|(ci, v)| {
                    let v = (*v).filter(|v| v.is_finite())?;
                    let left = ci as f64 - 0.4 + gi as f64 * width;
                    Some(((left, 0f64.max(y0)), (left + width * 0.9, v)))
                })
                .collect();
            let fill = match g.source {
                Source::Ours => color.filled(),
                Source::Paper => color.mix(0.25).filled(),
            };
            chart
                .draw_series(bars.iter().map(|&(a, z)| Rectangle::new([a, z], fill)))
                .map_err(err)?;
            if g.source == Source::Paper {
                chart
                    .draw_series(
                        bars.iter()
                            .map(|&(a, z)| Rectangle::new([a, z], color.stroke_width(1))),
                    )
                    .map_err(err)?;
            }
        }
        let (px, py) = chart.plotting_area().get_pixel_range();
        overlay.push_str(&category_labels(&b.categories, px.clone(), py.end));
        overlay.push_str(&plot_area_svg(px, py));
        plot.present().map_err(err)?;
    }
    overlay.push_str(&legend::svg(&entries, WIDTH - legend::WIDTH_PX));
    finish(out, &overlay)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_chart_renders_to_svg_with_both_kinds_of_line() {
        let chart = Chart {
            x_label: "x".into(),
            y_label: "y".into(),
            lines: vec![
                Line::ours("ours: a", "a", vec![(1.0, 2.0), (2.0, 3.0)]),
                Line::paper("paper: a", "a", vec![(1.0, 2.5), (2.0, 3.5)]),
            ],
            y_markers: vec![Marker {
                label: "paper: at least 2".into(),
                value: 2.0,
                source: Source::Paper,
                color_key: Some("a".into()),
            }],
            ..Chart::default()
        };
        let svg = Plot::Lines(chart).svg("t").unwrap();
        assert!(svg.starts_with("<svg"), "{}", &svg[..40.min(svg.len())]);
        assert!(svg.contains("paper: a") && svg.contains("ours: a"));
    }

    #[test]
    fn bars_render_and_an_empty_chart_still_draws() {
        let bars = Bars {
            y_label: "erases".into(),
            categories: vec!["dftl".into(), "bast".into()],
            groups: vec![BarGroup {
                label: "paper".into(),
                values: vec![Some(1.0), None],
                source: Source::Paper,
            }],
        };
        assert!(Plot::Bars(bars).svg("b").unwrap().contains("dftl"));
        let empty = Plot::Lines(Chart::default());
        assert!(empty.is_empty());
        assert!(empty.svg("e").unwrap().starts_with("<svg"));
    }

    /// The number of `<g class="chart-legend">` text lines and the SVG's height.
    fn legend_and_height(svg: &str) -> (usize, u32) {
        let legend = &svg[svg.find("<g class=\"chart-legend\"").unwrap()..];
        let texts = legend.matches("<text").count();
        let h = svg.split("height=\"").nth(1).unwrap();
        (texts, h[..h.find('"').unwrap()].parse().unwrap())
    }

    #[test]
    fn the_legend_stays_right_of_the_plot_and_the_chart_grows_to_hold_it() {
        let lines = |n: usize| Chart {
            lines: (0..n)
                .map(|i| {
                    Line::ours(
                        format!("ours: series number {i} with a long name"),
                        &format!("s{i}"),
                        vec![(1.0, i as f64)],
                    )
                })
                .collect(),
            ..Chart::default()
        };
        let few = Plot::Lines(lines(2)).svg("few").unwrap();
        let (texts, h) = legend_and_height(&few);
        assert_eq!((texts, h), (4, HEIGHT));
        assert!(few.contains(&format!("translate({},0)", WIDTH - legend::WIDTH_PX)));
        assert!(few.contains("class=\"plot-area\""));
        let many = Plot::Lines(lines(14)).svg("many").unwrap();
        let (texts, h) = legend_and_height(&many);
        assert_eq!(texts, 28);
        assert!(h >= legend::height(&[]) + 28 * legend::LINE_PX, "{h}");
    }

    #[test]
    fn a_line_under_an_identical_one_is_drawn_as_a_halo() {
        let same = vec![(1.0, 0.5), (2.0, 0.6)];
        let c = Chart {
            lines: vec![
                Line::ours("ours: batched", "batched", same.clone()),
                Line::ours("ours: sorted", "sorted", same),
            ],
            ..Chart::default()
        };
        let svg = Plot::Lines(c).svg("h").unwrap();
        assert!(svg.contains("stroke-width=\"7\""), "no halo");
        let apart = Chart {
            lines: vec![
                Line::ours("a", "batched", vec![(1.0, 0.0)]),
                Line::ours("b", "sorted", vec![(1.0, 1.0)]),
            ],
            ..Chart::default()
        };
        assert!(!Plot::Lines(apart)
            .svg("a")
            .unwrap()
            .contains("stroke-width=\"7\""));
    }

    /// Values near f64::MAX once made the axis range infinite and the tick loop endless.
    #[test]
    fn huge_values_still_draw() {
        let huge = vec![(1.0, 1.7e308), (2.0, -1.7e308), (1.7e308, 1.0)];
        let chart = Chart {
            lines: vec![Line::ours("ours: a", "a", huge)],
            ..Chart::default()
        };
        assert!(Plot::Lines(chart).svg("h").unwrap().starts_with("<svg"));
        let bars = Bars {
            y_label: "y".into(),
            categories: vec!["a".into()],
            groups: vec![BarGroup {
                label: "ours".into(),
                values: vec![Some(1.7e308)],
                source: Source::Ours,
            }],
        };
        assert!(Plot::Bars(bars).svg("b").unwrap().starts_with("<svg"));
    }

    #[test]
    fn one_point_never_draws_a_negative_axis() {
        assert_eq!(x_range([0.1].into_iter()), (0.0, 0.6));
        let (lo, hi) = x_range([0.0, 10.0].into_iter());
        assert!(lo < 0.0 && lo > -0.05 * hi, "{lo}");
        assert!(x_range([-1.0].into_iter()).0 < -1.0);
        assert_eq!(y_range([3.0].into_iter()).0, 0.0);
    }

    #[test]
    fn ticks_are_short() {
        assert_eq!(tick(0.0), "0");
        assert_eq!(tick(1.5), "1.5");
        assert_eq!(tick(250.0), "250");
        assert_eq!(tick(25000.0), "25k");
        assert_eq!(tick(1e7), "10M");
        assert_eq!(tick(3e10), "30G");
        assert_eq!(tick(0.125), "0.125");
    }
}
