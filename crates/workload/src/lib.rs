//! # workload — what the host asks of a device
//!
//! Model: a workload is a stream of [`Request`]s (read, write or trim of `pages` contiguous
//! logical pages from `lpn`, on a write stream, optionally with an arrival time). Synthetic
//! generators ([`synth`]) are infinite, streaming and constant-memory, deterministic for a
//! seed: sequential, uniform, zipfian(theta), hot/cold, read/write mixes, any request size, and a flash cache's two engines
//! ([`flash_cache`]: random bucket rewrites beside FIFO region writes).
//! Trace readers ([`trace`]) stream real block traces (MSR Cambridge, SPC/UMass, DiskSim ASCII,
//! SNIA SYSTOR'17, Tencent CBS, blkparse text; optionally compressed) and map their byte
//! addresses onto the device by wrapping or scaling ([`LbaMapping`]). Every malformed line is
//! a [`WorkloadError::Parse`] naming the file, line and field. [`page_cache`] models a host
//! write-back page cache that turns random writes into ascending runs.
//!
//! Invariant: every request a generator or reader yields lies inside `0..logical_pages`.

pub mod cache_trace;
pub mod flash_cache;
pub mod lines;
pub mod mix;
pub mod page_cache;
pub mod pg_trace;
pub mod spec;
pub mod synth;
pub mod tpcc;
pub mod trace;
pub mod ycsb;
pub mod zipf;

pub use spec::{WorkloadSpec, SPEC_HELP};
pub use trace::{scan_trace_span, TraceFormat};

use std::path::PathBuf;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum OpKind {
    Read,
    Write,
    Trim,
}

/// One host request: `pages` logical pages from `lpn`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Request {
    pub op: OpKind,
    pub lpn: u64,
    pub pages: u32,
    pub stream: u16,
    /// Arrival time from a trace (ns, relative to the trace's own origin); None for synthetic.
    pub arrival_ns: Option<u64>,
}

/// The device a workload runs against.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Target {
    pub logical_pages: u64,
    pub page_bytes: u32,
}

/// How a trace's byte addresses land on the device.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum LbaMapping {
    /// Page number modulo the device's logical pages (a request crossing the end is clipped).
    Wrap,
    /// Addresses in `0..max_byte` scaled proportionally onto the device.
    Scale { max_byte: u64 },
}

#[derive(Clone, Debug)]
pub struct WorkloadOptions {
    /// Pages per synthetic request (requests are aligned to it).
    pub request_pages: u32,
    /// Stop after this many request pages (None: synthetic workloads are infinite).
    pub volume_pages: Option<u64>,
    pub seed: u64,
    /// Format of `trace:PATH` workloads.
    pub trace_format: Option<TraceFormat>,
    pub mapping: LbaMapping,
    /// Counts trace requests clipped at the device's end (read it after the run).
    pub clipped: ClipCount,
    /// How uniform draws use the random words (synthetic uniform and hot/cold workloads).
    pub sampler: synth::Sampler,
}

/// How many trace requests were clipped at the device's end (a request running past the last
/// logical page is cut there). Clones share one count, so a caller keeps a clone and reads it
/// after the reader has run.
#[derive(Clone, Debug, Default)]
pub struct ClipCount(Arc<AtomicU64>);

impl ClipCount {
    pub fn get(&self) -> u64 {
        self.0.load(Ordering::Relaxed)
    }

    pub fn add_one(&self) {
        self.0.fetch_add(1, Ordering::Relaxed);
    }
}

impl Default for WorkloadOptions {
    fn default() -> Self {
        WorkloadOptions {
            request_pages: 1,
            volume_pages: None,
            seed: 1,
            trace_format: None,
            mapping: LbaMapping::Wrap,
            clipped: ClipCount::default(),
            sampler: synth::Sampler::Lemire,
        }
    }
}

#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum WorkloadError {
    #[error("cannot read trace {path}: {source}")]
    Io {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error("{path}:{line}: {reason}")]
    Parse {
        path: PathBuf,
        line: u64,
        reason: String,
    },
    #[error("workload `{spec}`: {reason}")]
    Spec { spec: String, reason: String },
    #[error("the device has no room for a request of {request_pages} pages ({logical_pages} logical pages)")]
    TooSmall {
        request_pages: u32,
        logical_pages: u64,
    },
}

/// A stream of requests (a trace read may fail mid-way).
pub type Requests = Box<dyn Iterator<Item = Result<Request, WorkloadError>> + Send>;

/// Build the request stream of `spec` on `target`.
pub fn build(
    spec: &WorkloadSpec,
    target: Target,
    opts: &WorkloadOptions,
) -> Result<Requests, WorkloadError> {
    let reqs: Requests = match spec {
        WorkloadSpec::Trace { path } => {
            let format = opts.trace_format.ok_or_else(|| WorkloadError::Spec {
                spec: format!("trace:{}", path.display()),
                reason: "no trace format given; pass --trace-format (msr, spc, disksim, systor, tencent, blkparse)".into(),
            })?;
            Box::new(trace::TraceReader::open(
                path,
                format,
                target,
                opts.mapping,
                opts.clipped.clone(),
            )?)
        }
        WorkloadSpec::FlashCache(fc) => {
            Box::new(flash_cache::FlashCache::new(fc, target, opts)?.map(Ok))
        }
        synthetic => Box::new(synth::Synthetic::new(synthetic, target, opts)?.map(Ok)),
    };
    Ok(match opts.volume_pages {
        None => reqs,
        Some(limit) => Box::new(limit_pages(reqs, limit)),
    })
}

fn limit_pages(reqs: Requests, limit: u64) -> impl Iterator<Item = Result<Request, WorkloadError>> {
    let mut done = 0u64;
    reqs.take_while(move |r| {
        let go = done < limit;
        if let Ok(r) = r {
            done += r.pages as u64;
        }
        go
    })
}

/// Preconditioning: one sequential fill of every logical page (single-page writes in order),
/// then `passes` x capacity uniform random single-page writes (drawn from `seed` forked as
/// `"precondition"`).
pub fn precondition(
    target: Target,
    passes: f64,
    seed: u64,
) -> impl Iterator<Item = Result<Request, WorkloadError>> {
    precondition_by(target, passes, seed, synth::Sampler::Rand08)
}

/// [`precondition`] with its random pages drawn by `sampler`.
pub fn precondition_by(
    target: Target,
    passes: f64,
    seed: u64,
    sampler: synth::Sampler,
) -> impl Iterator<Item = Result<Request, WorkloadError>> {
    precondition_pages(target, passes, seed, sampler)
        .map(|lpn| Request {
            op: OpKind::Write,
            lpn,
            pages: 1,
            stream: 0,
            arrival_ns: None,
        })
        .map(Ok)
}

/// The logical pages [`precondition_by`]'s one-page writes go to, in order: for a host that
/// issues them without a [`Request`] each.
pub fn precondition_pages(
    target: Target,
    passes: f64,
    seed: u64,
    sampler: synth::Sampler,
) -> impl Iterator<Item = u64> {
    let n = target.logical_pages;
    let random_writes = (passes.max(0.0) * n as f64) as u64;
    let seed = seed::Seed(seed).fork("precondition").value();
    let random = synth::UniformPages::with_sampler(n, seed, sampler).take(random_writes as usize);
    (0..n).chain(random)
}
