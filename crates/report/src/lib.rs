//! # report — flashlab's results file, plots and HTML page
//!
//! `flashlab reproduce all` runs every experiment and hands this crate a [`Results`]: each
//! experiment's `lab::Report` (rows measured by the run, the paper's rows apart), its text
//! tables and the run's metadata. From that alone (so `flashlab report DIR` can re-render a
//! saved `results.json`) it draws one SVG chart per paper figure ([`figures`]), lists every
//! claim the reports carry with its verdict and the counts per verdict ([`summary`]: plain
//! data judged in `lab`, rendered here without knowing any experiment) and writes one self-contained
//! `index.html` ([`html`]): inline SVG and CSS, no script, no network fetch.
//!
//! Invariant: every number drawn or printed comes from the results file; a paper's figure is
//! drawn only as a line, bar or marker labelled "paper", never as ours.

pub mod figures;
pub mod html;
pub mod plot;
pub mod results;
pub mod sim_plot;
pub mod summary;

pub use results::{ExperimentResult, Machine, ReportError, Results, RunMeta, Status, FORMAT};

use std::path::{Path, PathBuf};

/// Re-render `DIR/index.html` from `DIR/results.json`; returns the page's path.
pub fn render_dir(dir: &Path) -> Result<PathBuf, ReportError> {
    let results = Results::load(&dir.join("results.json"))?;
    write_page(&results, dir)
}

/// Write `DIR/index.html` for `results`; returns its path.
pub fn write_page(results: &Results, dir: &Path) -> Result<PathBuf, ReportError> {
    let page = html::page(results)?;
    let path = dir.join("index.html");
    std::fs::write(&path, page).map_err(|source| ReportError::Write {
        path: path.clone(),
        source,
    })?;
    Ok(path)
}
