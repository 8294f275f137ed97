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
pub mod legend;
pub mod page;
pub mod plot;
pub mod sim_plot;
pub mod style;
pub mod summary;

pub use error::ReportError;
pub use figures::Figure;
pub use page::{csv_field, Done, Page, RunView, Section, SectionBody, TableView};
pub use style::{style_of, Shape, Style};
pub use summary::{ClaimView, CountView, Mark};

use std::path::{Path, PathBuf};

/// Write `contents` as the file `name` of the report directory `dir`, safely: into a temp
/// file in `dir`, then renamed over `name` — a reader never sees half a file, and a symlink
/// at `dir/name` is replaced, never followed out of the directory; on an error the temp file
/// is removed. Every file of a report directory (results.json, index.html, the CSVs) is
/// written here. Returns its path.
pub fn write_file(dir: &Path, name: &str, contents: &[u8]) -> Result<PathBuf, ReportError> {
    use std::io::Write;
    let path = dir.join(name);
    let err = |source| ReportError::Write {
        path: path.clone(),
        source,
    };
    let mut tmp = tempfile::NamedTempFile::new_in(dir).map_err(err)?;
    tmp.write_all(contents).map_err(err)?;
    // A temp file is private (0600); the page and results are for reading (0644, less umask).
    let mode = std::os::unix::fs::PermissionsExt::from_mode(0o644);
    tmp.as_file().set_permissions(mode).map_err(err)?;
    tmp.as_file().sync_all().map_err(err)?;
    tmp.persist(&path).map_err(|e| err(e.error))?;
    Ok(path)
}

/// Write `DIR/index.html` for `page`; returns its path.
pub fn write_page(page: &Page, dir: &Path) -> Result<PathBuf, ReportError> {
    write_file(dir, "index.html", html::page(page)?.as_bytes())
}
