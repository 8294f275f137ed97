//! What the page shows, as plain data: the run, the claims table, a section per experiment
//! (figures, tables, notes, the command that re-runs it). `lab` builds a [`Page`] from a
//! results file; [`crate::html`] renders it without knowing any experiment.

use crate::figures::Figure;
use crate::summary::{ClaimView, CountView};

/// The whole page.
#[derive(Clone, Debug)]
pub struct Page {
    pub run: RunView,
    /// Every claim, in run order.
    pub claims: Vec<ClaimView>,
    /// Claims per verdict, in verdict order.
    pub counts: Vec<CountView>,
    pub sections: Vec<Section>,
    /// The run's metadata table (`command line`, `git commit`, `CPU`, ...), in order.
    pub meta: Vec<(String, String)>,
}

/// The run as the page's header names it.
#[derive(Clone, Debug)]
pub struct RunView {
    pub scale: String,
    pub seed: u64,
    pub device: String,
    pub started_at: String,
    pub flashlab_version: String,
    pub git_commit: String,
}

/// One experiment's section.
#[derive(Clone, Debug)]
pub struct Section {
    /// Its name (the section's id is `exp-` + its slug).
    pub name: String,
    pub paper: String,
    pub about: String,
    /// The exact command that re-runs it alone.
    pub rerun_command: String,
    pub body: SectionBody,
}

/// What a section holds: what the run made, or why it made nothing.
#[derive(Clone, Debug)]
pub enum SectionBody {
    Failed { elapsed_seconds: f64, error: String },
    Done(Done),
}

/// A section whose experiment ran.
#[derive(Clone, Debug)]
pub struct Done {
    pub scale: String,
    pub seed: u64,
    pub elapsed_seconds: f64,
    pub figures: Vec<Figure>,
    pub tables: Vec<TableView>,
    pub notes: Vec<String>,
    /// The run's configuration, pretty-printed JSON.
    pub config_json: String,
}

/// A text table: cells as printed.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct TableView {
    pub title: String,
    pub headers: Vec<String>,
    pub rows: Vec<Vec<String>>,
    pub legend: Vec<String>,
}

/// The table as plain text: the title, the headers, a rule, the rows (the first column
/// left-aligned, the others right-aligned, each as wide as its widest cell) and the legend.
impl std::fmt::Display for TableView {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let mut widths: Vec<usize> = self.headers.iter().map(|h| h.len()).collect();
        for r in &self.rows {
            for (w, c) in widths.iter_mut().zip(r) {
                *w = (*w).max(c.len());
            }
        }
        assert!(widths.len() == self.headers.len(), "a width per column");
        writeln!(f, "{}", self.title)?;
        let line = |f: &mut std::fmt::Formatter<'_>, cells: &[String]| -> std::fmt::Result {
            let parts: Vec<String> = cells
                .iter()
                .zip(&widths)
                .enumerate()
                .map(|(i, (c, w))| {
                    if i == 0 {
                        format!("{c:<w$}")
                    } else {
                        format!("{c:>w$}")
                    }
                })
                .collect();
            writeln!(f, "  {}", parts.join("  "))
        };
        line(f, &self.headers)?;
        let total: usize = widths.iter().sum::<usize>() + 2 * widths.len().saturating_sub(1);
        writeln!(f, "  {}", "-".repeat(total))?;
        for r in &self.rows {
            line(f, r)?;
        }
        for l in &self.legend {
            writeln!(f, "  {l}")?;
        }
        Ok(())
    }
}

impl TableView {
    /// The table as CSV: its headers, then its rows (RFC 4180 quoting).
    pub fn csv(&self) -> String {
        let mut out = String::new();
        for cells in std::iter::once(&self.headers).chain(&self.rows) {
            let line: Vec<String> = cells.iter().map(|c| csv_field(c)).collect();
            out.push_str(&line.join(","));
            out.push('\n');
        }
        out
    }
}

/// One CSV field, quoted when it holds a comma, quote or line break (RFC 4180): every CSV
/// flashlab writes (tables, result rows) quotes through here.
pub fn csv_field(s: &str) -> String {
    if s.contains([',', '"', '\n', '\r']) {
        format!("\"{}\"", s.replace('"', "\"\""))
    } else {
        s.to_string()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn csv_quotes_what_needs_it() {
        let t = TableView {
            headers: vec!["a".into(), "b".into()],
            rows: vec![vec!["x,y".into(), "say \"hi\"".into()]],
            ..TableView::default()
        };
        assert_eq!(t.csv(), "a,b\n\"x,y\",\"say \"\"hi\"\"\"\n");
    }

    #[test]
    fn text_aligns_columns_under_a_rule_and_keeps_the_legend() {
        let t = TableView {
            title: "T".into(),
            headers: vec!["name".into(), "n".into()],
            rows: vec![
                vec!["a".into(), "100".into()],
                vec!["bb".into(), "7".into()],
            ],
            legend: vec!["n: a count".into()],
        };
        let want = "T\n  name    n\n  ---------\n  a     100\n  bb      7\n  n: a count\n";
        assert_eq!(t.to_string(), want);
    }
}
