//! Errors of the SSD layer: operating errors only; broken invariants are assertions.

use std::path::PathBuf;

/// A configuration that cannot be used, naming the field and what to do.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ConfigError {
    #[error("invalid SSD config: `{field}` = {value}: {reason}")]
    Invalid {
        field: &'static str,
        value: String,
        reason: String,
    },
    #[error("unknown SSD preset `{name}`; available presets: {available}")]
    UnknownPreset { name: String, available: String },
    #[error("cannot read SSD config {path}: {source}")]
    Io {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("cannot parse SSD config {origin}: {message}")]
    Parse { origin: String, message: String },
}

/// An operation the device refuses.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum SsdError {
    #[error("logical page {lpn} is beyond the device's {logical_pages} logical pages")]
    OutOfRange { lpn: u64, logical_pages: u64 },
    #[error("no free block left on die {die} and no block can be reclaimed (device full)")]
    DeviceFull { die: u32 },
    #[error("payload of {got} bytes does not match the page size of {expected} bytes")]
    PayloadSize { expected: usize, got: usize },
    #[error("the device was created without payloads (data mode `{mode}`); enable `data = \"payloads\"`")]
    NoPayloads { mode: &'static str },
    #[error("stream {stream} does not exist: the device has {streams} streams")]
    NoSuchStream { stream: u16, streams: u16 },
}

/// A broken FTL invariant found by a verifier (tests and `check_invariants` runs).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("FTL invariant broken: {0}")]
pub struct InvariantError(pub String);
