//! Errors of the engine: each names the page/file and what went wrong.

use blockdev::DevError;

#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum EngineError {
    #[error("device: {0}")]
    Dev(#[from] DevError),
    #[error("page {page} is corrupt: {reason} (the data on the device is damaged or torn; restore from a backup or re-create the structure)")]
    Corrupt { page: u64, reason: String },
    #[error("invalid engine setting `{field}` = {value}: {reason}")]
    Config {
        field: &'static str,
        value: String,
        reason: String,
    },
    #[error("{what} is full: {reason}")]
    Full { what: &'static str, reason: String },
    #[error("I/O on {path}: {source}")]
    Io {
        path: std::path::PathBuf,
        #[source]
        source: std::io::Error,
    },
}
