//! Errors of the engine: each names the page/file and what went wrong.
//!
//! Corruption is structured: [`EngineError::Corrupt`] names the device page and a
//! [`Corruption`] saying what was expected there and what was found, so a caller (or a test)
//! can tell a torn write from a foreign page without parsing a message.

use crate::page::PageKind;
use blockdev::DevError;

#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum EngineError {
    #[error("device: {0}")]
    Dev(#[from] DevError),
    #[error("page {page} is corrupt: {what} (the data on the device is damaged or torn; restore from a backup or re-create the structure)")]
    Corrupt { page: u64, what: Corruption },
    #[error("invalid engine setting `{field}` = {value}: {reason}")]
    Config {
        field: &'static str,
        value: String,
        reason: String,
    },
    #[error("{what} is full: {reason}")]
    Full { what: &'static str, reason: String },
    /// A key-value store structure that does not decode (or a key/value over its limit):
    /// `place` names the file and byte offset (or the call), `error` what was expected.
    #[error("{place}: {error}")]
    Kv {
        place: String,
        #[source]
        error: crate::kv::FormatError,
    },
    #[error("I/O on {path}: {source}")]
    Io {
        path: std::path::PathBuf,
        #[source]
        source: std::io::Error,
    },
}

impl EngineError {
    /// Where damage on the device was found, as a byte offset, when this error is damage
    /// and names one (a KV structure's field or seal; a page's start for page damage needs the
    /// page size: see [`EngineError::page`]).
    pub fn offset(&self) -> Option<u64> {
        match self {
            EngineError::Kv { error, .. } => error.offset(),
            _ => None,
        }
    }

    /// The device page damage was found on, when this error is page damage.
    pub fn page(&self) -> Option<u64> {
        match self {
            EngineError::Corrupt { page, .. } => Some(*page),
            _ => None,
        }
    }

    /// A corruption found at device page `page`.
    pub fn corrupt(page: u64, what: Corruption) -> EngineError {
        EngineError::Corrupt { page, what }
    }
}

/// What was wrong with a page: what was expected, what was found.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum Corruption {
    #[error("the page is blank (never written or trimmed), expected a sealed page")]
    Blank,
    #[error("expected a page of at least {expected} bytes, found {found}")]
    TooSmall { expected: usize, found: usize },
    #[error("expected magic {expected:#010x}, found {found:#010x}")]
    Magic { expected: u32, found: u32 },
    #[error("expected format version {expected}, found {found}")]
    FormatVersion { expected: u8, found: u8 },
    #[error("checksum mismatch: stored {stored:#010x}, computed {computed:#010x} (torn or corrupt write)")]
    Checksum { stored: u32, computed: u32 },
    #[error("unknown page kind {found}")]
    UnknownKind { found: u8 },
    #[error("expected a {expected} page, found a {found:?} page")]
    Kind {
        expected: &'static str,
        found: PageKind,
    },
    #[error("{what}: expected {expected}, found {found}")]
    Length {
        what: &'static str,
        expected: u64,
        found: u64,
    },
    #[error("{what}: expected {expected}, found {found}")]
    Id {
        what: &'static str,
        expected: u64,
        found: u64,
    },
    #[error("node keys are not strictly ascending (key {at} is {found}, after {previous})")]
    KeyOrder {
        at: usize,
        previous: u64,
        found: u64,
    },
    #[error("unknown index-unit op {found} (expected 0..=4)")]
    UnitOp { found: u8 },
    #[error("slot {slot} of a heap page holding {count} records")]
    Slot { slot: u16, count: u16 },
    #[error("node {node} is not in the mapping table")]
    Unmapped { node: u64 },
    #[error("neither meta slot ({first} or {second}) holds a valid {what}")]
    NoMeta {
        what: &'static str,
        first: u64,
        second: u64,
    },
    #[error("{what}: expected at most {limit}, found {found}")]
    OutOfRange {
        what: &'static str,
        limit: u64,
        found: u64,
    },
}
