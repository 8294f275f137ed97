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
    write_file(&path, page.as_bytes())?;
    Ok(path)
}

/// Write `bytes` to `path` safely: into a temp file in its directory, then renamed over it —
/// a reader never sees half a file, and a symlink at `path` is replaced, never followed out
/// of the directory. On an error the temp file is removed.
pub fn write_file(path: &Path, bytes: &[u8]) -> Result<(), ReportError> {
    use std::io::Write;
    let err = |source| ReportError::Write {
        path: path.to_path_buf(),
        source,
    };
    let dir = match path.parent() {
        Some(d) if !d.as_os_str().is_empty() => d,
        _ => Path::new("."),
    };
    let mut tmp = tempfile::NamedTempFile::new_in(dir).map_err(err)?;
    tmp.write_all(bytes).map_err(err)?;
    // A temp file is private (0600); the page and results are for reading (0644, less umask).
    let mode = std::os::unix::fs::PermissionsExt::from_mode(0o644);
    tmp.as_file().set_permissions(mode).map_err(err)?;
    tmp.as_file().sync_all().map_err(err)?;
    tmp.persist(path).map_err(|e| err(e.error))?;
    Ok(())
}
