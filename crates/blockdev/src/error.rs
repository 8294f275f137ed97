//! Errors of block devices: each names the device (path) or the page and what to do.

use std::path::PathBuf;

#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum DevError {
    #[error("{op} on {path} failed: {source}")]
    Io {
        path: PathBuf,
        op: &'static str,
        #[source]
        source: std::io::Error,
    },
    #[error("{op} on {path} moved {got_bytes} of {expected_bytes} bytes (short transfer: is the file shorter than the device?)")]
    ShortTransfer {
        path: PathBuf,
        op: &'static str,
        got_bytes: usize,
        expected_bytes: usize,
    },
    #[error("{path}: the file system does not support O_DIRECT (e.g. tmpfs); put the file on a disk file system (ext4, xfs), or open it with `FileOptions::buffered` (timings then include the page cache)")]
    DirectIoUnsupported { path: PathBuf },
    #[error("I/O of {pages} pages at page {page} is beyond the device's {capacity_pages} pages")]
    OutOfRange {
        page: u64,
        pages: u64,
        capacity_pages: u64,
    },
    #[error("write of {pages} pages at page {page} needs {needed_chunks} free chunks of the file system, which has {free_chunks} (file system full: give the files less live data or more space)")]
    NoSpace {
        page: u64,
        pages: u64,
        needed_chunks: u64,
        free_chunks: u64,
    },
    #[error("buffer of {len} bytes is not a whole number of {page_bytes}-byte pages")]
    Misaligned { len: usize, page_bytes: usize },
    #[error("simulated SSD: {0}")]
    Ssd(#[from] ssd::SsdError),
    #[error("simulated SSD config: {0}")]
    SsdConfig(#[from] ssd::ConfigError),
    #[error("{path}: the device is unusable after an io_uring wave could not be drained ({reason}); I/Os may still be in flight, so it refuses every further operation: reopen the file")]
    Poisoned { path: PathBuf, reason: String },
    #[error("{path} is locked by {holder}: cannot take {wanted} lock (one writer at a time; wait for it to finish, or open read-only beside other readers)")]
    Locked {
        path: PathBuf,
        wanted: &'static str,
        holder: String,
    },
    #[error("{path} is open read-only: {op} refused")]
    ReadOnly { path: PathBuf, op: &'static str },
    #[error("the device lost power (crash test); reopen it from its durable image")]
    PowerCut,
    #[error("injected I/O error at page {page} (fault injection)")]
    Injected { page: u64 },
    #[error("invalid device setting `{field}` = {value}: {reason}")]
    Config {
        field: &'static str,
        value: String,
        reason: String,
    },
}
