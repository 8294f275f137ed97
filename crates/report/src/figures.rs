//! One chart of the page: an id, a title, a caption and what to draw ([`Plot`]). Who builds it
//! (each paper's folder in `lab`, from its typed rows) is not this crate's concern.

use crate::plot::Plot;

/// One chart of the page.
#[derive(Clone, Debug)]
pub struct Figure {
    /// Unique on the page: `SECTION-what` (the browser check finds plots by it).
    pub id: String,
    pub title: String,
    /// What is drawn, how it was normalised, what the paper's marks are.
    pub caption: String,
    pub plot: Plot,
}

/// `[a-z0-9-]` only, for ids and file names.
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

/// Points divided by `base` (none when the base is missing or zero).
pub fn relative(p: Vec<(f64, f64)>, base: Option<f64>) -> Vec<(f64, f64)> {
    match base {
        Some(b) if b != 0.0 && b.is_finite() => p.into_iter().map(|(x, y)| (x, y / b)).collect(),
        _ => Vec::new(),
    }
}

/// Points whose y is divided by the base at the same x (`base(x)`); points without a base drop.
pub fn relative_each(p: Vec<(f64, f64)>, base: impl Fn(f64) -> Option<f64>) -> Vec<(f64, f64)> {
    p.into_iter()
        .filter_map(|(x, y)| {
            let b = base(x).filter(|b| *b != 0.0 && b.is_finite())?;
            Some((x, y / b))
        })
        .collect()
}

/// Points sorted by x (a chart's lines are drawn in x order).
pub fn in_x_order(mut p: Vec<(f64, f64)>) -> Vec<(f64, f64)> {
    p.sort_by(|a, b| a.0.total_cmp(&b.0));
    p
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
        assert_eq!(
            in_x_order(vec![(2.0, 1.0), (1.0, 2.0)]),
            vec![(1.0, 2.0), (2.0, 1.0)]
        );
    }
}
