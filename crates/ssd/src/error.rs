//! Errors of the SSD layer: operating errors only; broken invariants are assertions.

use std::path::PathBuf;

/// A configuration that cannot be used, naming the field and what to do.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ConfigError {
    #[error("invalid SSD config: `{field}` = {value}: {reason}")]
    Invalid {
        field: &'static str,
        /// The value as given.
        value: String,
        /// The rule it breaks and what to do.
        reason: &'static str,
    },
    #[error("invalid SSD config: `{field}`: {spare_blocks} spare blocks cannot hold the {needed_blocks} the FTL needs (GC reserve and open blocks, or log blocks); raise ftl.op or the capacity to at least {min_logical_bytes} logical bytes")]
    TooSmall {
        field: &'static str,
        spare_blocks: u64,
        needed_blocks: u64,
        min_logical_bytes: u64,
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
    #[error("the device keeps no page data (data mode `{mode}`), so reads cannot return it; use `data = \"tags\"` or `\"payloads\"`")]
    NoData { mode: &'static str },
    #[error("this run needs about {estimate_bytes} bytes of memory (estimate) but the limit is {limit_bytes} bytes; shrink the device or raise the limit (flashlab: --max-memory)")]
    MemoryLimit {
        estimate_bytes: u64,
        limit_bytes: u64,
    },
    #[error("simulated time overflows 2^64 ns for a request issued at {at_ns} ns; the slowest timing field is `{field}`: lower it or shorten the run")]
    TimeOverflow { at_ns: u64, field: &'static str },
    #[error("DFTL garbage collection cannot keep up (a livelock): the translation-page updates of the pages GC moves trigger more GC than it frees (the {cmt_entries}-entry CMT caches too few of the mappings GC moves, each update of an uncached one rewrites one of {translation_pages} translation pages); raise --cmt-entries or `ftl.cmt_entries` in the config (the cached moves need no rewrite), or the over-provisioning")]
    GcCannotKeepUp {
        cmt_entries: usize,
        translation_pages: u64,
    },
    #[error("stream {stream} does not exist: the device has {streams} streams")]
    NoSuchStream { stream: u16, streams: u16 },
}

/// A broken FTL invariant found by a verifier (tests and `check_invariants` runs): which
/// block, page or count, what was expected and what was found.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum InvariantError {
    #[error("FTL invariant broken: block {block} has inconsistent roles ({roles})")]
    BlockRoles { block: u32, roles: &'static str },
    #[error(
        "FTL invariant broken: free block {block} is not erased (write pointer {write_pointer})"
    )]
    FreeBlockNotErased { block: u32, write_pointer: u32 },
    #[error(
        "FTL invariant broken: block {block} in state {state} has write pointer {write_pointer}"
    )]
    BlockState {
        block: u32,
        state: &'static str,
        write_pointer: u32,
    },
    #[error(
        "FTL invariant broken: lpn {lpn} maps to page {ppn}, which is not a live programmed page"
    )]
    MappedToDeadPage { lpn: u64, ppn: u64 },
    #[error("FTL invariant broken: p2l[{ppn}] = {lpn} but l2p[{lpn}] = {l2p}")]
    MapsDisagree { ppn: u64, lpn: u64, l2p: u64 },
    #[error(
        "FTL invariant broken: block {block} has valid count {counted} but {mapped} pages mapped"
    )]
    ValidCount {
        block: u32,
        counted: u32,
        mapped: u32,
    },
    #[error(
        "FTL invariant broken: closed block {block} ({valid} valid) cannot be chosen as a victim"
    )]
    VictimUnfindable { block: u32, valid: u32 },
    #[error("FTL invariant broken: {what}: expected {expected}, found {found}")]
    Count {
        what: &'static str,
        expected: u64,
        found: u64,
    },
    #[error("FTL invariant broken: free {free} + valid {valid} + invalid {invalid} pages != total {total}")]
    PageAccounting {
        free: u64,
        valid: u64,
        invalid: u64,
        total: u64,
    },
}
