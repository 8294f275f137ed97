//! `flashlab capture pg-tpcc`: a PostgreSQL TPC-C page-reference trace, captured as P3 did
//! (references in the buffer manager, WAL insertions), in the format of
//! [`workload::pg_trace`] (docs/pg-trace.md).
//!
//! Steps: a private cluster ([`cluster`]), the TPC-C database loaded at full specification
//! row counts for `warehouses` (`tpcc_schema.sql`), the five transactions as functions
//! (`tpcc_procs.sql`), a checkpoint, then probes ([`probe`]) attached while `terminals`
//! terminals ([`driver`]) run the standard mix for `minutes`. The trace is zstd-compressed,
//! streamed while the run goes; its header (written as a first zstd frame once the counts are
//! known) records the PostgreSQL version, scale, duration, method, seed and database size.

pub mod cluster;
pub mod driver;
pub mod probe;

use std::io::Write;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

const SCHEMA_SQL: &str = include_str!("tpcc_schema.sql");
const PROCS_SQL: &str = include_str!("tpcc_procs.sql");

pub use probe::ProbeMethod;

#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum CaptureError {
    #[error(
        "cannot run {program}: {source} (is PostgreSQL installed? scripts/setup-pg installs it)"
    )]
    Spawn {
        program: String,
        #[source]
        source: std::io::Error,
    },
    #[error("{program} failed ({status}): {stderr}")]
    Failed {
        program: String,
        status: String,
        stderr: String,
    },
    #[error("{what}: {source}")]
    Io {
        what: String,
        #[source]
        source: std::io::Error,
    },
    #[error("PostgreSQL cluster: {0}")]
    Cluster(String),
    #[error("probes: {0}")]
    Probe(String),
    #[error("bad option {field}: {reason}")]
    Option { field: &'static str, reason: String },
}

/// What to capture.
#[derive(Clone, Debug)]
pub struct CaptureOptions {
    pub warehouses: u32,
    /// Length of the measured run, in minutes (fractions allowed).
    pub minutes: f64,
    pub terminals: u32,
    pub seed: u64,
    pub shared_buffers_mib: u32,
    /// Where the trace goes (`.zst`); `None`: run without probes (the overhead baseline).
    pub out: Option<PathBuf>,
    /// PostgreSQL's bin directory; `None`: `pg_config --bindir`.
    pub pg_bin: Option<PathBuf>,
    /// The user PostgreSQL runs as when flashlab runs as root.
    pub pg_user: String,
    pub port: u16,
    /// How read references are probed; `None`: `usdt` where the binary has the static probe,
    /// else `uretprobe` (both record the same references: probe.rs).
    pub probe_method: Option<ProbeMethod>,
}

impl CaptureOptions {
    pub fn validate(&self) -> Result<(), CaptureError> {
        let bad = |field, reason: &str| {
            Err(CaptureError::Option {
                field,
                reason: reason.into(),
            })
        };
        if !(1..=1000).contains(&self.warehouses) {
            return bad("warehouses", "must be 1..=1000");
        }
        if !(self.minutes > 0.0 && self.minutes <= 24.0 * 60.0) {
            return bad("minutes", "must be above 0 and at most a day");
        }
        if !(1..=48).contains(&self.terminals) {
            return bad("terminals", "must be 1..=48 (max_connections is 64)");
        }
        if self.shared_buffers_mib < 1 {
            return bad("shared-buffers", "must be at least 1 MiB");
        }
        Ok(())
    }
}

/// What a capture measured.
#[derive(Clone, Debug, Default, serde::Serialize)]
pub struct CaptureSummary {
    pub postgres_version: String,
    pub database_bytes: u64,
    pub load_s: f64,
    pub run_s: f64,
    pub transactions: u64,
    pub new_orders: u64,
    pub rollbacks: u64,
    pub errors: u64,
    pub tx_per_s: f64,
    pub references: u64,
    pub dirty_references: u64,
    pub wal_inserts: u64,
    pub lost_events: u64,
    pub references_per_s: f64,
    pub trace_bytes: u64,
    /// How read references were probed (`usdt` or `uretprobe`; empty without probes).
    pub probe_method: String,
}

/// Capture (or, without `out`, just run) TPC-C on a private cluster; progress on `log`.
pub fn run(o: &CaptureOptions, log: &mut dyn FnMut(&str)) -> Result<CaptureSummary, CaptureError> {
    o.validate()?;
    let bin = match &o.pg_bin {
        Some(b) => b.clone(),
        None => pg_bindir()?,
    };
    // SAFETY: geteuid has no preconditions.
    let user = (unsafe { libc::geteuid() } == 0).then(|| o.pg_user.clone());
    if o.out.is_some() && user.is_none() {
        return Err(CaptureError::Probe(
            "the probes need root (bpftrace attaches uprobes); run as root, or pass --no-probes"
                .into(),
        ));
    }
    log("starting a private PostgreSQL cluster");
    let pg = cluster::Cluster::start(&bin, user, o.port, o.shared_buffers_mib)?;
    let mut s = CaptureSummary {
        postgres_version: pg.sql("postgres", "SELECT version()", &[])?,
        ..Default::default()
    };
    let t0 = Instant::now();
    log(&format!("loading TPC-C, {} warehouse(s)", o.warehouses));
    load(&pg, o)?;
    s.load_s = t0.elapsed().as_secs_f64();
    s.database_bytes = pg
        .sql("tpcc", "SELECT pg_database_size('tpcc')", &[])?
        .parse()
        .unwrap_or(0);
    let body_path = o.out.as_ref().map(|p| p.with_extension("body.tmp"));
    let _body_guard = body_path.clone().map(RemoveOnDrop);
    let probe = match &body_path {
        Some(p) => {
            let (probe, method) = start_probe(&pg, &bin, p, o.probe_method)?;
            s.probe_method = method.name().into();
            Some((probe, method))
        }
        None => None,
    };
    log(&format!(
        "running {} terminal(s) for {} min{}",
        o.terminals,
        o.minutes,
        if probe.is_some() {
            " under the probes"
        } else {
            " (no probes)"
        }
    ));
    let t1 = Instant::now();
    let counts = run_terminals(&pg, o)?;
    s.run_s = t1.elapsed().as_secs_f64();
    for c in &counts {
        s.transactions += c.transactions;
        s.new_orders += c.new_orders;
        s.rollbacks += c.rollbacks;
        s.errors += c.errors;
    }
    s.tx_per_s = s.transactions as f64 / s.run_s;
    if let (Some((probe, method)), Some(body), Some(out)) = (probe, body_path, &o.out) {
        let p = probe.stop()?;
        s.references = p.reads + p.dirties;
        s.dirty_references = p.dirties;
        s.wal_inserts = p.wal_inserts;
        s.lost_events = p.lost_events;
        s.references_per_s = s.references as f64 / s.run_s;
        s.trace_bytes = finish_trace(out, &body, &header(o, &s, &bin, method))?;
    }
    drop(pg);
    Ok(s)
}

/// The trace body's temporary file, removed however the capture ends.
struct RemoveOnDrop(PathBuf);

impl Drop for RemoveOnDrop {
    fn drop(&mut self) {
        let _ = std::fs::remove_file(&self.0);
    }
}

fn pg_bindir() -> Result<PathBuf, CaptureError> {
    let out = cluster::checked(
        "pg_config",
        std::process::Command::new("pg_config")
            .arg("--bindir")
            .output(),
    )?;
    Ok(PathBuf::from(String::from_utf8_lossy(&out.stdout).trim()))
}

fn load(pg: &cluster::Cluster, o: &CaptureOptions) -> Result<(), CaptureError> {
    pg.sql("postgres", "CREATE DATABASE tpcc", &[])?;
    let vars = [
        ("W", o.warehouses.to_string()),
        ("seed", (o.seed % (1 << 31)).to_string()),
    ];
    pg.sql_file("tpcc", SCHEMA_SQL, &vars)?;
    pg.sql_file("tpcc", PROCS_SQL, &[])?;
    pg.sql("tpcc", "VACUUM ANALYZE", &[])?;
    pg.sql("tpcc", "CHECKPOINT", &[])?;
    Ok(())
}

fn start_probe(
    pg: &cluster::Cluster,
    bin: &Path,
    body: &Path,
    method: Option<ProbeMethod>,
) -> Result<(probe::Probe, ProbeMethod), CaptureError> {
    let binary = bin.join("postgres");
    let method = match method {
        Some(m) => m,
        None if probe::has_usdt_read(&binary)? => ProbeMethod::Usdt,
        None => ProbeMethod::Uretprobe,
    };
    let pid: u32 = pg
        .sql(
            "tpcc",
            "SELECT pid FROM pg_stat_activity WHERE backend_type = 'checkpointer'",
            &[],
        )?
        .parse()
        .map_err(|_| {
            CaptureError::Probe("no checkpointer process to read the load address of".into())
        })?;
    let target = probe::ProbeTarget {
        descriptors_addr: probe::load_address(pid, &binary)?
            + probe::symbol_offset(&binary, "BufferDescriptors")?,
        uid: cluster::uid_of(pg.user.as_deref())?,
        binary,
    };
    let file = std::fs::File::create(body).map_err(|source| CaptureError::Io {
        what: format!("create {}", body.display()),
        source,
    })?;
    let enc = zstd::stream::write::Encoder::new(std::io::BufWriter::new(file), 3)
        .map_err(|source| CaptureError::Io {
            what: "zstd".into(),
            source,
        })?
        .auto_finish();
    Ok((probe::Probe::start(&target, method, Box::new(enc))?, method))
}

fn run_terminals(
    pg: &cluster::Cluster,
    o: &CaptureOptions,
) -> Result<Vec<driver::TerminalCounts>, CaptureError> {
    let duration = Duration::from_secs_f64(o.minutes * 60.0);
    let handles: Vec<_> = (0..o.terminals)
        .map(|t| {
            let psql = pg.psql("tpcc");
            let seed = seed::Seed(o.seed).fork(&format!("terminal{t}")).value();
            let (w, warehouses) = (t % o.warehouses + 1, o.warehouses);
            std::thread::spawn(move || driver::run_terminal(psql, seed, w, warehouses, duration))
        })
        .collect();
    handles
        .into_iter()
        .map(|h| {
            h.join()
                .map_err(|_| CaptureError::Cluster("a terminal thread panicked".into()))?
        })
        .collect()
}

/// The header's `key: value` fields.
fn header(
    o: &CaptureOptions,
    s: &CaptureSummary,
    bin: &Path,
    method: ProbeMethod,
) -> workload::pg_trace::PgTraceHeader {
    let f = |k: &str, v: String| (k.to_string(), v.replace('\n', " "));
    workload::pg_trace::PgTraceHeader {
        fields: vec![
            f("postgres", s.postgres_version.clone()),
            f(
                "postgres_binary",
                bin.join("postgres").display().to_string(),
            ),
            f(
                "workload",
                "TPC-C 5.11 (flashlab loader and driver), standard mix, no think time".into(),
            ),
            f("warehouses", o.warehouses.to_string()),
            f("terminals", o.terminals.to_string()),
            f("minutes", o.minutes.to_string()),
            f("seed", o.seed.to_string()),
            f("shared_buffers_mib", o.shared_buffers_mib.to_string()),
            f("page_bytes", "8192".into()),
            f("database_bytes", s.database_bytes.to_string()),
            f("method", method.describe().into()),
            f("run_s", format!("{:.1}", s.run_s)),
            f("transactions", s.transactions.to_string()),
            f("new_orders", s.new_orders.to_string()),
            f("references", s.references.to_string()),
            f("dirty_references", s.dirty_references.to_string()),
            f("wal_inserts", s.wal_inserts.to_string()),
            f("lost_events", s.lost_events.to_string()),
        ],
    }
}

/// Write `out`: the header as one zstd frame, then the body's frames; remove the body.
fn finish_trace(
    out: &Path,
    body: &Path,
    header: &workload::pg_trace::PgTraceHeader,
) -> Result<u64, CaptureError> {
    let io = |what: &str, source| CaptureError::Io {
        what: format!("{what} {}", out.display()),
        source,
    };
    let mut file = std::fs::File::create(out).map_err(|e| io("create", e))?;
    let head = zstd::encode_all(header.to_text().as_bytes(), 3).map_err(|e| io("compress", e))?;
    file.write_all(&head).map_err(|e| io("write", e))?;
    let mut b = std::fs::File::open(body).map_err(|e| io("open body of", e))?;
    std::io::copy(&mut b, &mut file).map_err(|e| io("write", e))?;
    file.sync_all().map_err(|e| io("sync", e))?;
    let _ = std::fs::remove_file(body);
    Ok(file.metadata().map(|m| m.len()).unwrap_or(0))
}
