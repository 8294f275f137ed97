//! A paper's headline figure beside ours, with an honest verdict.
//!
//! Every paper folder (`papers/pN_name/claims.rs`) turns its typed rows into [`Claim`]s; the
//! verdict comes from one function, [`judge`], of (ours, the paper's value, a [`Rule`]): a
//! tolerance kind (relative, absolute, threshold, direction, order) and the pivot that says
//! which side is "the paper's direction". A claim is `reproduced` only within its tolerance
//! (a threshold only when ours meets it); outside it, `direction only` when ours lies on the
//! paper's side of the pivot, else `not reproduced`; `not run` when the run measured nothing
//! for it (or measured NaN).
//!
//! `Claim` lives here (in `lab`), not in the rendering crate: claims are computed from the
//! papers' typed rows, which only `lab` knows. The renderer gets them as plain data (every
//! field a string, a number or null) inside the `Report` it already reads.

use crate::report::{fmt_f, Table};
use serde::{Deserialize, Serialize};
use serde_json::Value;
use std::fmt;

/// How a claim came out.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum Verdict {
    /// Within the stated tolerance (a threshold met; an order equal).
    #[serde(rename = "reproduced")]
    Reproduced,
    /// On the paper's side of the pivot, outside the tolerance.
    #[serde(rename = "direction only")]
    DirectionOnly,
    /// The other side of the pivot, or a different order, or no direction to compare.
    #[serde(rename = "not reproduced")]
    NotReproduced,
    /// The run measured nothing for it (or NaN).
    #[serde(rename = "not run")]
    NotRun,
}

impl Verdict {
    pub const ALL: [Verdict; 4] = [
        Verdict::Reproduced,
        Verdict::DirectionOnly,
        Verdict::NotReproduced,
        Verdict::NotRun,
    ];

    pub fn name(self) -> &'static str {
        match self {
            Verdict::Reproduced => "reproduced",
            Verdict::DirectionOnly => "direction only",
            Verdict::NotReproduced => "not reproduced",
            Verdict::NotRun => "not run",
        }
    }
}

impl fmt::Display for Verdict {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// How close ours must come to the paper's value.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Tolerance {
    /// `|ours − paper| ≤ share · |paper|`.
    Relative(f64),
    /// `|ours − paper| ≤ amount`, in the claim's unit (percentage points, a ratio step).
    Absolute(f64),
    /// `ours ≥ min`: the paper states a floor ("> 200 %", "≥ 5.7×").
    AtLeast(f64),
    /// `ours ≤ max`: the paper states a ceiling ("AS with 16 nodes beats B-tree with 48").
    AtMost(f64),
    /// Only the side of the pivot counts ("faster", "fewer").
    Direction,
    /// Text equal: a ranking (`a < b < c`) or a name (the best policy).
    Order,
}

/// A tolerance and the pivot that gives a claim its direction (0 for a signed change in %,
/// 1 for a ratio; `None`: the claim has no direction, e.g. "AS ≈ B-tree").
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Rule {
    pub tolerance: Tolerance,
    pub pivot: Option<f64>,
}

impl Rule {
    pub const fn new(tolerance: Tolerance, pivot: Option<f64>) -> Rule {
        Rule { tolerance, pivot }
    }
    pub const ORDER: Rule = Rule::new(Tolerance::Order, None);

    /// The tolerance as the report states it.
    pub fn describe(&self, unit: &str) -> String {
        let u = if unit.is_empty() {
            String::new()
        } else {
            format!(" {unit}")
        };
        match self.tolerance {
            Tolerance::Relative(s) => format!("±{} % of the paper's value", fmt_g(s * 100.0)),
            Tolerance::Absolute(a) => format!("±{}{u}", fmt_g(a)),
            Tolerance::AtLeast(m) => format!("≥ {}{u}", fmt_g(m)),
            Tolerance::AtMost(m) => format!("≤ {}{u}", fmt_g(m)),
            Tolerance::Direction => match self.pivot {
                Some(p) => format!("direction: same side of {}{u}", fmt_g(p)),
                None => "direction".into(),
            },
            Tolerance::Order => "same order".into(),
        }
    }
}

/// A value of a claim: a number, a text (an order, a name), or nothing measured.
#[derive(Clone, Debug, PartialEq)]
pub enum Measure {
    Number(f64),
    Text(String),
    /// The paper states only a side of the rule's pivot: `+1.0` above, `-1.0` below
    /// ("the gap grows"); judged by the side alone.
    Side(f64),
    Missing,
}

impl Measure {
    fn to_json(&self, pivot: Option<f64>) -> Value {
        let pivot = fmt_g(pivot.unwrap_or(0.0));
        match self {
            Measure::Number(x) if x.is_finite() => serde_json::json!(x),
            Measure::Text(s) => Value::String(s.clone()),
            Measure::Side(s) if *s > 0.0 => Value::String(format!("> {pivot}")),
            Measure::Side(_) => Value::String(format!("< {pivot}")),
            _ => Value::Null,
        }
    }
}

impl From<Option<f64>> for Measure {
    fn from(v: Option<f64>) -> Measure {
        v.map_or(Measure::Missing, Measure::Number)
    }
}

impl From<f64> for Measure {
    fn from(v: f64) -> Measure {
        Measure::Number(v)
    }
}

impl From<Option<String>> for Measure {
    fn from(v: Option<String>) -> Measure {
        v.map_or(Measure::Missing, Measure::Text)
    }
}

impl From<&str> for Measure {
    fn from(v: &str) -> Measure {
        Measure::Text(v.to_string())
    }
}

/// The one verdict function. NaN, infinities and missing values are `not run`.
pub fn judge(ours: &Measure, paper: &Measure, rule: Rule) -> Verdict {
    match (ours, paper) {
        (Measure::Text(o), Measure::Text(p)) => match o == p {
            true => Verdict::Reproduced,
            false => Verdict::NotReproduced,
        },
        (Measure::Number(o), Measure::Number(p)) if o.is_finite() && p.is_finite() => {
            judge_number(*o, *p, rule)
        }
        (Measure::Number(o), Measure::Side(s)) if o.is_finite() => {
            match rule.pivot.is_some_and(|p| same_side(*o, p + s, Some(p))) {
                true => Verdict::Reproduced,
                false => Verdict::NotReproduced,
            }
        }
        _ => Verdict::NotRun,
    }
}

fn judge_number(ours: f64, paper: f64, rule: Rule) -> Verdict {
    // A relative epsilon so that a value printed as the boundary counts as on it.
    let eps = 1e-9 * paper.abs().max(1.0);
    let within = match rule.tolerance {
        Tolerance::Relative(s) => (ours - paper).abs() <= s * paper.abs() + eps,
        Tolerance::Absolute(a) => (ours - paper).abs() <= a + eps,
        Tolerance::AtLeast(m) => ours >= m - eps,
        Tolerance::AtMost(m) => ours <= m + eps,
        Tolerance::Direction => same_side(ours, paper, rule.pivot),
        Tolerance::Order => false,
    };
    if within {
        Verdict::Reproduced
    } else if same_side(ours, paper, rule.pivot) {
        Verdict::DirectionOnly
    } else {
        Verdict::NotReproduced
    }
}

/// Whether ours lies strictly on the paper's side of `pivot` (never, without a pivot).
fn same_side(ours: f64, paper: f64, pivot: Option<f64>) -> bool {
    match pivot {
        Some(p) => ours != p && paper != p && (ours > p) == (paper > p),
        None => false,
    }
}

/// One headline figure of a paper beside ours. JSON keys are an interface (ARCHITECTURE.md).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Claim {
    /// `P1` … `P5`.
    pub paper: String,
    pub claim: String,
    /// The paper's figure (number or text; null when it states none).
    pub paper_value: Value,
    /// Ours, measured by this run (null: not run).
    pub ours: Value,
    pub unit: String,
    /// ours ÷ paper where both are numbers (and the paper's is not 0).
    pub ratio: Option<f64>,
    pub tolerance: String,
    pub verdict: Verdict,
    /// Why ours differs where it does, what was not run, and why the tolerance is what it is.
    pub note: String,
}

/// What a paper folder states about one claim before it is judged.
#[derive(Clone, Debug)]
pub struct Spec<'a> {
    pub paper: &'a str,
    pub claim: String,
    pub unit: &'a str,
    pub rule: Rule,
    /// Why this tolerance (always printed).
    pub why_tolerance: &'a str,
}

impl Spec<'_> {
    /// Judge `ours` against `paper_value`; `differs` explains a miss (used when not
    /// reproduced), `not_run` what would measure it (used when ours is missing).
    pub fn judge(
        &self,
        paper_value: impl Into<Measure>,
        ours: impl Into<Measure>,
        differs: &str,
        not_run: &str,
    ) -> Claim {
        let (paper_value, ours) = (paper_value.into(), ours.into());
        let verdict = judge(&ours, &paper_value, self.rule);
        let ratio = match (&ours, &paper_value) {
            (Measure::Number(o), Measure::Number(p)) if *p != 0.0 => {
                Some(o / p).filter(|r| r.is_finite())
            }
            _ => None,
        };
        let reason = match verdict {
            Verdict::Reproduced => String::new(),
            Verdict::NotRun => format!("not run: {not_run}; "),
            _ => format!("{differs}; "),
        };
        Claim {
            paper: self.paper.to_string(),
            claim: self.claim.clone(),
            paper_value: paper_value.to_json(self.rule.pivot),
            ours: ours.to_json(self.rule.pivot),
            unit: self.unit.to_string(),
            ratio,
            tolerance: self.rule.describe(self.unit),
            verdict,
            note: format!("{reason}tolerance: {}", self.why_tolerance),
        }
    }
}

/// Claims judged per device: `of(rows on the device, " (device)")` for each device the rows
/// name (in first-seen order; no suffix when there is one), or `of(&[], "")` for no rows, so
/// an empty run still lists its claims as `not run`.
pub fn per_device<T>(
    rows: &[T],
    device: impl Fn(&T) -> String,
    of: impl Fn(&[&T], &str) -> Vec<Claim>,
) -> Vec<Claim> {
    let mut devices: Vec<String> = Vec::new();
    for r in rows {
        let d = device(r);
        if !devices.contains(&d) {
            devices.push(d);
        }
    }
    if devices.is_empty() {
        return of(&[], "");
    }
    let many = devices.len() > 1;
    devices
        .iter()
        .flat_map(|d| {
            let on: Vec<&T> = rows.iter().filter(|r| device(r) == *d).collect();
            of(
                &on,
                &if many {
                    format!(" ({d})")
                } else {
                    String::new()
                },
            )
        })
        .collect()
}

/// How many claims have each verdict, in [`Verdict::ALL`] order.
pub fn counts(claims: &[Claim]) -> [(Verdict, usize); 4] {
    Verdict::ALL.map(|v| (v, claims.iter().filter(|c| c.verdict == v).count()))
}

/// `12 reproduced, 3 direction only, 9 not reproduced, 1 not run`.
pub fn counts_line(claims: &[Claim]) -> String {
    counts(claims)
        .iter()
        .map(|(v, n)| format!("{n} {v}"))
        .collect::<Vec<_>>()
        .join(", ")
}

/// A claim's value as a table cell (`—` for null).
pub fn cell(v: &Value) -> String {
    match v {
        Value::Null => "—".into(),
        Value::String(s) => s.clone(),
        Value::Number(n) => n.as_f64().map_or_else(|| n.to_string(), fmt_g),
        other => other.to_string(),
    }
}

/// A number with about three significant digits.
pub fn fmt_g(x: f64) -> String {
    let a = x.abs();
    let digits = if a >= 100.0 || a == 0.0 || x.fract() == 0.0 {
        0
    } else if a >= 10.0 {
        1
    } else if a >= 1.0 {
        2
    } else {
        3
    };
    fmt_f(x, digits)
}

/// The columns of a claims table (the note goes under it, numbered).
pub const HEADERS: [&str; 8] = [
    "claim",
    "paper",
    "paper value",
    "ours",
    "unit",
    "ratio",
    "tolerance",
    "verdict",
];

/// A claim's cells under [`HEADERS`].
pub fn cells(c: &Claim) -> Vec<String> {
    vec![
        c.claim.clone(),
        c.paper.clone(),
        cell(&c.paper_value),
        cell(&c.ours),
        c.unit.clone(),
        c.ratio.map_or_else(|| "—".into(), |r| format!("{r:.2}")),
        c.tolerance.clone(),
        c.verdict.to_string(),
    ]
}

/// The claims as a text table: every JSON field, the notes numbered under it, and the
/// counts per verdict on its last line. `first` adds a column (header, one cell
/// per claim, placed after the claim), e.g. the experiment of each claim.
pub fn table_with(title: &str, claims: &[Claim], first: Option<(&str, &[String])>) -> Table {
    // The claim's text first (the one left-aligned column), then the extra column.
    let mut headers: Vec<&str> = vec![HEADERS[0]];
    headers.extend(first.iter().map(|f| f.0));
    headers.extend(&HEADERS[1..]);
    let mut t = Table::new(title, &headers);
    for (i, c) in claims.iter().enumerate() {
        let mut row = cells(c);
        if let Some(f) = first {
            row.insert(1, f.1.get(i).cloned().unwrap_or_default());
        }
        t.push(row);
    }
    for (i, c) in claims.iter().enumerate() {
        t.define(format!("[{}] {}: {}", i + 1, c.paper, c.note));
    }
    t.define(format!("verdicts: {}", counts_line(claims)));
    t
}

/// [`table_with`] without the extra column.
pub fn table(title: &str, claims: &[Claim]) -> Table {
    table_with(title, claims, None)
}

#[cfg(test)]
mod tests {
    use super::*;

    const REL: Rule = Rule::new(Tolerance::Relative(0.25), Some(1.0));
    const PTS: Rule = Rule::new(Tolerance::Absolute(10.0), Some(0.0));

    fn v(o: f64, p: f64, r: Rule) -> Verdict {
        judge(&Measure::Number(o), &Measure::Number(p), r)
    }

    #[test]
    fn relative_tolerance_at_the_boundary() {
        assert_eq!(v(8.0, 6.5, REL), Verdict::Reproduced, "just inside (+23 %)");
        assert_eq!(v(8.125, 6.5, REL), Verdict::Reproduced, "on the boundary");
        assert_eq!(v(8.2, 6.5, REL), Verdict::DirectionOnly, "just outside");
        assert_eq!(v(3.6, 6.5, REL), Verdict::DirectionOnly, "faster, far off");
        assert_eq!(v(0.9, 6.5, REL), Verdict::NotReproduced, "wrong direction");
    }

    #[test]
    fn absolute_points_at_the_boundary() {
        assert_eq!(v(-12.0, -21.0, PTS), Verdict::Reproduced, "9 points off");
        assert_eq!(
            v(-10.9, -21.0, PTS),
            Verdict::DirectionOnly,
            "10.1 points off"
        );
        assert_eq!(
            v(4.0, -21.0, PTS),
            Verdict::NotReproduced,
            "slower, not faster"
        );
        let flat = Rule::new(Tolerance::Absolute(5.0), None);
        assert_eq!(v(4.9, 0.0, flat), Verdict::Reproduced);
        assert_eq!(
            v(5.1, 0.0, flat),
            Verdict::NotReproduced,
            "no direction to keep"
        );
    }

    #[test]
    fn thresholds_are_reproduced_only_when_met() {
        let floor = Rule::new(Tolerance::AtLeast(200.0), Some(0.0));
        assert_eq!(v(200.0, 200.0, floor), Verdict::Reproduced);
        assert_eq!(
            v(172.0, 200.0, floor),
            Verdict::DirectionOnly,
            "faster, below the floor"
        );
        assert_eq!(v(-3.0, 200.0, floor), Verdict::NotReproduced);
        let ceiling = Rule::new(Tolerance::AtMost(0.0), Some(0.0));
        assert_eq!(v(-22.0, -22.0, ceiling), Verdict::Reproduced);
        assert_eq!(v(3.0, -22.0, ceiling), Verdict::NotReproduced);
    }

    #[test]
    fn direction_and_order() {
        let dir = Rule::new(Tolerance::Direction, Some(0.0));
        assert_eq!(v(3.0, 40.0, dir), Verdict::Reproduced);
        assert_eq!(v(-3.0, 40.0, dir), Verdict::NotReproduced);
        assert_eq!(
            v(0.0, 40.0, dir),
            Verdict::NotReproduced,
            "on the pivot is no side"
        );
        let grows = |o: f64| judge(&Measure::Number(o), &Measure::Side(1.0), dir);
        assert_eq!(grows(0.5), Verdict::Reproduced);
        assert_eq!(grows(0.0), Verdict::NotReproduced);
        assert_eq!(grows(-0.5), Verdict::NotReproduced);
        let t = |o: &str, p: &str| judge(&o.into(), &p.into(), Rule::ORDER);
        assert_eq!(t("a < b < c", "a < b < c"), Verdict::Reproduced);
        assert_eq!(t("b < a < c", "a < b < c"), Verdict::NotReproduced);
    }

    #[test]
    fn nan_and_missing_are_not_run() {
        assert_eq!(v(f64::NAN, 6.5, REL), Verdict::NotRun);
        assert_eq!(v(f64::INFINITY, 6.5, REL), Verdict::NotRun);
        assert_eq!(judge(&Measure::Missing, &6.5.into(), REL), Verdict::NotRun);
        assert_eq!(
            judge(&Measure::Missing, &"a".into(), Rule::ORDER),
            Verdict::NotRun
        );
    }

    #[test]
    fn a_spec_fills_every_field_and_counts_add_up() {
        let spec = Spec {
            paper: "P2",
            claim: "x".into(),
            unit: "×",
            rule: REL,
            why_tolerance: "because",
        };
        let c = spec.judge(6.5, Some(3.25), "slower device", "a run");
        assert_eq!(c.ratio, Some(0.5));
        assert_eq!(c.verdict, Verdict::DirectionOnly);
        assert!(c.note.starts_with("slower device") && c.note.contains("because"));
        let n = spec.judge(6.5, None::<f64>, "d", "the selectivity sweep");
        assert_eq!(
            (n.verdict, n.ours.clone(), n.ratio),
            (Verdict::NotRun, Value::Null, None)
        );
        assert!(n.note.contains("the selectivity sweep"));
        let json = serde_json::to_value(&c).unwrap();
        for k in [
            "paper",
            "claim",
            "paper_value",
            "ours",
            "unit",
            "ratio",
            "tolerance",
            "verdict",
            "note",
        ] {
            assert!(json.get(k).is_some(), "{k}");
        }
        assert_eq!(json["verdict"], "direction only");
        assert_eq!(
            counts_line(&[c, n]),
            "0 reproduced, 1 direction only, 0 not reproduced, 1 not run"
        );
    }
}
