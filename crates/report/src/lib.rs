//! # report — flashlab's renderer: SVG plots, tables and the HTML page
//!
//! A leaf crate: it knows charts ([`plot`]), figures ([`figures::Figure`]), tables, claims as
//! text and the page's layout ([`page::Page`]), but no experiment, paper or row type. `lab`
//! builds the views (each paper's folder its figures from its typed rows) and this crate draws
//! them: one self-contained `index.html` ([`html`]: inline SVG and CSS, no script, no network
//! fetch), and the standalone SVG of `flashlab sim --plot` ([`sim_plot`]).
//!
//! Invariant: a paper's figure is drawn only as a line, bar or marker labelled "paper", never
//! as ours.

pub mod error;
pub mod figures;
pub mod html;
pub mod page;
pub mod plot;
pub mod sim_plot;
pub mod summary;

pub use error::ReportError;
pub use figures::Figure;
pub use page::{Done, Page, RunView, Section, SectionBody, TableView};
pub use summary::{ClaimView, CountView, Mark};

use std::path::{Path, PathBuf};

/// Write `contents` as the file `name` of the report directory `dir`; returns its path. Every
/// file of a report directory (results.json, index.html, the CSVs) is written here.
pub fn write_file(dir: &Path, name: &str, contents: &[u8]) -> Result<PathBuf, ReportError> {
    let path = dir.join(name);
    std::fs::write(&path, contents).map_err(|source| ReportError::Write {
        path: path.clone(),
        source,
    })?;
    Ok(path)
}

/// Write `DIR/index.html` for `page`; returns its path.
pub fn write_page(page: &Page, dir: &Path) -> Result<PathBuf, ReportError> {
    write_file(dir, "index.html", html::page(page)?.as_bytes())
}
