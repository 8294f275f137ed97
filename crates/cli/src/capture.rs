//! `flashlab capture pg-tpcc`: a PostgreSQL TPC-C page-reference trace (lab::capture).

use anyhow::Result;
use clap::{Args, Subcommand};
use std::path::PathBuf;

#[derive(Subcommand, Debug)]
pub enum CaptureCommand {
    /// TPC-C on a private PostgreSQL cluster, every buffer reference and WAL insertion recorded
    /// by uprobes (needs root, bpftrace and PostgreSQL: scripts/setup-pg). Format: docs/pg-trace.md.
    PgTpcc(PgTpccArgs),
}

#[derive(Args, Debug)]
pub struct PgTpccArgs {
    /// Warehouses (TPC-C scale; about 100 MB of database each; P3's 1.5 GB is about 15).
    #[arg(long, default_value_t = 1)]
    warehouses: u32,
    /// Length of the traced run in minutes (fractions allowed); the load is not traced.
    #[arg(long, default_value_t = 1.0)]
    minutes: f64,
    /// Concurrent terminals (one psql connection each), spread over the warehouses.
    #[arg(long, default_value_t = 4)]
    terminals: u32,
    /// Seed of the population and of every terminal's transaction inputs.
    #[arg(long, default_value_t = 1)]
    seed: u64,
    /// PostgreSQL's shared_buffers in MiB (the trace is of logical references, above it).
    #[arg(long, default_value_t = 128)]
    shared_buffers: u32,
    /// The trace file to write (zstd; name it .zst).
    #[arg(long, required_unless_present = "no_probes")]
    out: Option<PathBuf>,
    /// Run without probes and write no trace (the baseline of the capture's overhead).
    #[arg(long)]
    no_probes: bool,
    /// PostgreSQL's bin directory (default: `pg_config --bindir`).
    #[arg(long)]
    pg_bin: Option<PathBuf>,
    /// The unprivileged user PostgreSQL runs as when flashlab runs as root.
    #[arg(long, default_value = "flashlab")]
    pg_user: String,
    /// The cluster's port (its socket is in a private directory; no TCP listener).
    #[arg(long, default_value_t = 54329)]
    port: u16,
    /// How read references are probed: `usdt` (PostgreSQL's static probe buffer__read__done,
    /// one trap per reference) or `uretprobe` (return of ReadBufferExtended, two traps); both
    /// record the same references. Default: usdt where the binary has it.
    #[arg(long, value_parser = ["usdt", "uretprobe"])]
    probe_method: Option<String>,
    /// Print the summary as one JSON object.
    #[arg(long)]
    json: bool,
}

pub fn run(c: &CaptureCommand) -> Result<()> {
    let CaptureCommand::PgTpcc(a) = c;
    let opts = lab::capture::CaptureOptions {
        warehouses: a.warehouses,
        minutes: a.minutes,
        terminals: a.terminals,
        seed: a.seed,
        shared_buffers_mib: a.shared_buffers,
        out: if a.no_probes { None } else { a.out.clone() },
        pg_bin: a.pg_bin.clone(),
        pg_user: a.pg_user.clone(),
        port: a.port,
        probe_method: a
            .probe_method
            .as_deref()
            .and_then(lab::capture::ProbeMethod::parse),
    };
    let s = lab::capture::run(&opts, &mut |m| eprintln!("capture: {m}"))?;
    if a.json {
        println!("{}", serde_json::to_string(&s)?);
    } else {
        println!("{s:#?}");
    }
    Ok(())
}
