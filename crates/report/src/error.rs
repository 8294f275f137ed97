//! Errors of reading, checking and writing a report directory (the results file is read and
//! checked by its owner, `lab`; the error kinds are one list here so the page and the file
//! name their failures the same way).

use std::path::PathBuf;

/// Errors of reading, checking and writing a report directory.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ReportError {
    #[error("{}: cannot read it ({source}); run `flashlab reproduce all --out DIR` to make one", path.display())]
    Read {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("{}: line {line}, column {column}, at `{key_path}`: {message}; this file is written by `flashlab reproduce all`: re-run it or repair the file", path.display())]
    Parse {
        path: PathBuf,
        key_path: String,
        line: usize,
        column: usize,
        message: String,
    },
    #[error("{}: at `{key_path}`: {message}", path.display())]
    Invalid {
        path: PathBuf,
        key_path: String,
        message: String,
    },
    #[error("{}: cannot write it: {source}", path.display())]
    Write {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("figure `{figure}`: cannot draw it: {message}")]
    Plot { figure: String, message: String },
}
