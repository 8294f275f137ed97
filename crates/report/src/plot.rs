//! Charts as SVG text (plotters' SVG backend): lines over a numeric x axis and grouped bars
//! over categories. Our measured lines are solid with filled dots; the paper's figures are
//! dashed with hollow triangles (bars: outlined, pale) and every paper legend entry starts
//! with "paper:", so the two can never be confused, in colour or in print.

use crate::error::ReportError;
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
    /// Lines with the same key share a colour (ours and the paper's of one scheme).
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
    /// Drawn in the colour of the line with this key (e.g. the same policy), if any.
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

/// Pixel size of every chart (the page scales it down to its column).
pub const WIDTH: u32 = 720;
pub const HEIGHT: u32 = 420;

const PALETTE: [RGBColor; 8] = [
    RGBColor(31, 119, 180),
    RGBColor(214, 39, 40),
    RGBColor(44, 160, 44),
    RGBColor(255, 127, 14),
    RGBColor(148, 103, 189),
    RGBColor(140, 86, 75),
    RGBColor(227, 119, 194),
    RGBColor(23, 190, 207),
];
const GREY: RGBColor = RGBColor(90, 90, 90);

/// A colour per distinct key, in first-seen order.
fn colors<'a>(keys: impl Iterator<Item = &'a str>) -> Vec<(String, RGBColor)> {
    let mut out: Vec<(String, RGBColor)> = Vec::new();
    for k in keys {
        if !out.iter().any(|(seen, _)| seen == k) {
            let c = PALETTE[out.len() % PALETTE.len()];
            out.push((k.to_string(), c));
        }
    }
    out
}

fn color_of(table: &[(String, RGBColor)], key: &str) -> RGBColor {
    table
        .iter()
        .find(|(k, _)| k == key)
        .map(|(_, c)| *c)
        .unwrap_or(GREY)
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

fn x_range(values: impl Iterator<Item = f64>) -> (f64, f64) {
    let Some((lo, hi)) = finite_bounds(values) else {
        return (0.0, 1.0);
    };
    if hi <= lo {
        return (lo - 1.0, hi + 1.0);
    }
    let pad = (hi - lo) * 0.04;
    (lo - pad, hi + pad)
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

/// Width of the legend column right of the plot.
const LEGEND_WIDTH: u32 = 210;
/// Characters per legend line before it wraps.
const LEGEND_CHARS: usize = 30;

/// How a legend entry's sample is drawn.
#[derive(Clone, Copy)]
enum Sample {
    OursLine,
    PaperLine,
    Rule,
    OursBar,
    PaperBar,
}

struct Entry {
    label: String,
    color: RGBColor,
    sample: Sample,
}

type Area<'b> = DrawingArea<SVGBackend<'b>, plotters::coord::Shift>;

/// Split the canvas into the plot and the legend column.
fn canvas<'b>(out: &'b mut String) -> Result<(Area<'b>, Area<'b>), String> {
    let root = SVGBackend::with_string(out, (WIDTH, HEIGHT)).into_drawing_area();
    root.fill(&WHITE).map_err(err)?;
    Ok(root.split_horizontally(WIDTH - LEGEND_WIDTH))
}

/// Words of `s` in lines of at most `width` characters.
fn wrap(s: &str, width: usize) -> Vec<String> {
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

fn draw_legend(area: &Area<'_>, entries: &[Entry]) -> Result<(), String> {
    let font = ("sans-serif", 12).into_font().color(&RGBColor(40, 40, 40));
    let mut y = 18i32;
    for e in entries {
        let c = e.color;
        let mid = y + 6;
        match e.sample {
            Sample::OursLine => {
                area.draw(&PathElement::new([(4, mid), (26, mid)], c.stroke_width(2)))
                    .map_err(err)?;
                area.draw(&Circle::new((15, mid), 3, c.filled()))
                    .map_err(err)?;
            }
            Sample::PaperLine => {
                area.draw(&PathElement::new([(4, mid), (10, mid)], c.stroke_width(1)))
                    .map_err(err)?;
                area.draw(&PathElement::new([(20, mid), (26, mid)], c.stroke_width(1)))
                    .map_err(err)?;
                area.draw(&TriangleMarker::new((15, mid), 5, c.stroke_width(1)))
                    .map_err(err)?;
            }
            Sample::Rule => {
                for x in [4, 12, 20] {
                    area.draw(&PathElement::new(
                        [(x, mid), (x + 5, mid)],
                        c.stroke_width(1),
                    ))
                    .map_err(err)?;
                }
            }
            Sample::OursBar => {
                area.draw(&Rectangle::new([(6, mid - 5), (24, mid + 5)], c.filled()))
                    .map_err(err)?;
            }
            Sample::PaperBar => {
                area.draw(&Rectangle::new(
                    [(6, mid - 5), (24, mid + 5)],
                    c.mix(0.25).filled(),
                ))
                .map_err(err)?;
                area.draw(&Rectangle::new(
                    [(6, mid - 5), (24, mid + 5)],
                    c.stroke_width(1),
                ))
                .map_err(err)?;
            }
        }
        for line in wrap(&e.label, LEGEND_CHARS) {
            area.draw(&Text::new(line, (32, y), font.clone()))
                .map_err(err)?;
            y += 15;
        }
        y += 6;
    }
    Ok(())
}

fn draw_lines(c: &Chart, out: &mut String) -> Result<(), String> {
    let log = c.x_log;
    let y_log = c.y_log;
    let fy = |y: f64| match (y_log, y > 0.0) {
        (false, _) => Some(y),
        (true, true) => Some(y.log10()),
        (true, false) => None,
    };
    let pts = |l: &Line| -> Vec<(f64, f64)> {
        l.points
            .iter()
            .filter(|(x, y)| x.is_finite() && y.is_finite())
            .filter_map(|&(x, y)| Some((fx(log, x)?, fy(y)?)))
            .collect()
    };
    let lines: Vec<(&Line, Vec<(f64, f64)>)> = c
        .lines
        .iter()
        .map(|l| (l, pts(l)))
        .filter(|(_, p)| !p.is_empty())
        .collect();
    let xs = lines
        .iter()
        .flat_map(|(_, p)| p.iter().map(|q| q.0))
        .chain(c.x_markers.iter().filter_map(|m| fx(log, m.value)));
    let (x0, x1) = x_range(xs);
    let ys = lines
        .iter()
        .flat_map(|(_, p)| p.iter().map(|q| q.1))
        .chain(c.y_markers.iter().filter_map(|m| fy(m.value)));
    let (y0, y1) = match y_log {
        // Whole decades around the data, not clamped to 0 (= 1 on the axis).
        true => finite_bounds(ys).map_or((0.0, 1.0), |(lo, hi)| {
            (lo.floor(), hi.ceil().max(lo.floor() + 1.0))
        }),
        false => y_range(ys),
    };
    let palette = colors(lines.iter().map(|(l, _)| l.color_key.as_str()));

    let (plot, legend_area) = canvas(out)?;
    let mut chart = ChartBuilder::on(&plot)
        .margin(12)
        .x_label_area_size(44)
        .y_label_area_size(64)
        .build_cartesian_2d(x0..x1, y0..y1)
        .map_err(err)?;
    let x_fmt = |v: &f64| if log { tick(2f64.powf(*v)) } else { tick(*v) };
    chart
        .configure_mesh()
        .x_desc(c.x_label.as_str())
        .y_desc(c.y_label.as_str())
        .x_label_formatter(&x_fmt)
        .y_label_formatter(&|v| {
            if y_log {
                tick(10f64.powf(*v))
            } else {
                tick(*v)
            }
        })
        .light_line_style(RGBColor(246, 246, 246))
        .label_style(("sans-serif", 13))
        .axis_desc_style(("sans-serif", 14))
        .draw()
        .map_err(err)?;
    let mut entries = Vec::new();
    for (l, p) in &lines {
        let color = color_of(&palette, &l.color_key);
        draw_one_line(&mut chart, l, p, color)?;
        let sample = match l.source {
            Source::Ours => Sample::OursLine,
            Source::Paper => Sample::PaperLine,
        };
        entries.push(Entry {
            label: l.label.clone(),
            color,
            sample,
        });
    }
    let marker_color = |m: &Marker| match &m.color_key {
        Some(k) if palette.iter().any(|(p, _)| p == k) => color_of(&palette, k),
        _ => marker_color(m.source),
    };
    // Each marker is a dashed rule across the plot: horizontal at a y value, vertical at an x.
    let y_rules = c
        .y_markers
        .iter()
        .filter_map(|m| fy(m.value).map(|y| (m, [(x0, y), (x1, y)])));
    let x_rules = c
        .x_markers
        .iter()
        .filter_map(|m| fx(log, m.value).map(|x| (m, [(x, y0), (x, y1)])));
    for (m, seg) in y_rules.chain(x_rules) {
        let color = marker_color(m);
        chart
            .draw_series(DashedLineSeries::new(seg, 4, 4, color.stroke_width(1)))
            .map_err(err)?;
        entries.push(Entry {
            label: m.label.clone(),
            color,
            sample: Sample::Rule,
        });
    }
    draw_legend(&legend_area, &entries)?;
    plot.present().map_err(err)?;
    Ok(())
}

fn marker_color(source: Source) -> RGBColor {
    match source {
        Source::Paper => RGBColor(0, 0, 0),
        Source::Ours => GREY,
    }
}

type Cartesian<'a, 'b> = ChartContext<
    'a,
    SVGBackend<'b>,
    Cartesian2d<plotters::coord::types::RangedCoordf64, plotters::coord::types::RangedCoordf64>,
>;

fn draw_one_line<'a, 'b: 'a>(
    chart: &mut Cartesian<'a, 'b>,
    l: &Line,
    p: &[(f64, f64)],
    color: RGBColor,
) -> Result<(), String> {
    match l.source {
        Source::Ours => {
            chart
                .draw_series(LineSeries::new(p.iter().copied(), color.stroke_width(2)))
                .map_err(err)?;
            chart
                .draw_series(p.iter().map(|&q| Circle::new(q, 3, color.filled())))
                .map_err(err)?;
        }
        Source::Paper => {
            chart
                .draw_series(DashedLineSeries::new(
                    p.iter().copied(),
                    6,
                    4,
                    color.stroke_width(1),
                ))
                .map_err(err)?;
            chart
                .draw_series(
                    p.iter()
                        .map(|&q| TriangleMarker::new(q, 5, color.stroke_width(1))),
                )
                .map_err(err)?;
        }
    }
    Ok(())
}

fn draw_bars(b: &Bars, out: &mut String) -> Result<(), String> {
    let n = b.categories.len().max(1);
    let groups = b.groups.len().max(1);
    let (y0, y1) = y_range(
        b.groups
            .iter()
            .flat_map(|g| g.values.iter().flatten().copied()),
    );
    let palette = colors(b.groups.iter().map(|g| g.label.as_str()));
    let (plot, legend_area) = canvas(out)?;
    let mut chart = ChartBuilder::on(&plot)
        .margin(12)
        .x_label_area_size(44)
        .y_label_area_size(64)
        .build_cartesian_2d(-0.5..(n as f64 - 0.5), y0..y1)
        .map_err(err)?;
    let cats = b.categories.clone();
    let x_fmt = move |v: &f64| {
        let i = v.round();
        if (v - i).abs() < 1e-6 && i >= 0.0 {
            cats.get(i as usize).cloned().unwrap_or_default()
        } else {
            String::new()
        }
    };
    chart
        .configure_mesh()
        .disable_x_mesh()
        .x_labels(n + 1)
        .x_label_formatter(&x_fmt)
        .y_desc(b.y_label.as_str())
        .y_label_formatter(&|v| tick(*v))
        .light_line_style(RGBColor(246, 246, 246))
        .label_style(("sans-serif", 13))
        .axis_desc_style(("sans-serif", 14))
        .draw()
        .map_err(err)?;
    let width = 0.8 / groups as f64;
    let mut entries = Vec::new();
    for (gi, g) in b.groups.iter().enumerate() {
        let color = color_of(&palette, &g.label);
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
        let (fill, sample) = match g.source {
            Source::Ours => (color.filled(), Sample::OursBar),
            Source::Paper => (color.mix(0.25).filled(), Sample::PaperBar),
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
        entries.push(Entry {
            label: g.label.clone(),
            color,
            sample,
        });
    }
    draw_legend(&legend_area, &entries)?;
    plot.present().map_err(err)?;
    Ok(())
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

    #[test]
    fn legend_labels_wrap_at_word_boundaries() {
        assert_eq!(
            wrap("paper: > 200 % faster than disks alone (below)", 30),
            vec!["paper: > 200 % faster than", "disks alone (below)"]
        );
        assert!(wrap("", 30).is_empty());
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
    fn ticks_are_short() {
        assert_eq!(tick(0.0), "0");
        assert_eq!(tick(1.5), "1.5");
        assert_eq!(tick(250.0), "250");
        assert_eq!(tick(25000.0), "25k");
        assert_eq!(tick(0.125), "0.125");
    }
}
