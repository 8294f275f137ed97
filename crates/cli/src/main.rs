//! `flashlab`: the command line of the flash SSD laboratory.
//!
//! Subcommands: `sim` (run a workload or trace on a simulated SSD), `reproduce NAME` (a paper's
//! experiment, our figures beside the paper's; `reproduce all` every one, into an HTML report),
//! `report DIR` (re-render that report), `ftl-memory` (mapping-table memory by scheme),
//! `presets` (list or show the shipped SSD presets), `bench device` (a preset's or a file's
//! MB/s and IOPS).

mod kv;

// The subcommands live in the library (src/lib.rs), which the Python package shares.
use flashlab::{
    bench, buffer_sim, capture, error_chain, lifetime, reproduce, reproduce_all, signals, sim,
    sweep,
};

use clap::{Parser, Subcommand};
use std::process::ExitCode;

#[derive(Parser)]
#[command(
    name = "flashlab",
    version,
    about = "A laboratory for flash SSDs: simulate, replay, reproduce."
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Run a synthetic workload or a block trace on a simulated SSD and report WAF, GC and latency.
    Sim(Box<sim::SimArgs>),
    /// Reproduce a paper's experiment (our measured figures beside the paper's, labelled).
    Reproduce(reproduce::ReproduceArgs),
    /// Re-render DIR/index.html from DIR/results.json (written by `reproduce all`), no re-run.
    Report(reproduce_all::ReportArgs),
    /// Mapping-table memory of each FTL scheme for a given capacity (analytic estimate).
    FtlMemory(reproduce::FtlMemoryArgs),
    /// A page-reference trace through a DRAM buffer and a flash extension (P3's policies).
    BufferSim(Box<buffer_sim::BufferSimArgs>),
    /// Page-popularity summary of a page-reference trace.
    TraceInfo(buffer_sim::TraceInfoArgs),
    /// The key-value store: YCSB load/run, get/put/scan, stat, check.
    Kv(kv::KvArgs),
    /// Lifetime of written pages per class (P5's Table 1) over a block trace or a workload.
    Lifetime(Box<lifetime::LifetimeArgs>),
    /// Run a grid of `sim` runs from a spec (TOML or JSON) into a JSON-lines file, locally or on Ray.
    Sweep(sweep::SweepArgs),
    /// Capture a trace: `capture pg-tpcc` (TPC-C on PostgreSQL, every buffer reference).
    #[command(subcommand)]
    Capture(capture::CaptureCommand),
    /// Benchmarks: `bench device` (MB/s and IOPS of a preset or a real file, as P1's Table 1).
    #[command(subcommand)]
    Bench(bench::BenchCommand),
    /// List the shipped SSD presets, or print one as TOML (a starting point for --config).
    Presets {
        /// Print this preset's TOML.
        #[arg(long)]
        show: Option<String>,
    },
}

fn main() -> ExitCode {
    signals::install();
    let cli = parse();
    let result = match cli.command {
        Command::Sim(args) => sim::run(&args),
        Command::Reproduce(args) => reproduce::run(&args),
        Command::Report(args) => reproduce_all::report(&args),
        Command::FtlMemory(args) => reproduce::ftl_memory(&args),
        Command::BufferSim(args) => buffer_sim::run(&args),
        Command::TraceInfo(args) => buffer_sim::trace_info(&args),
        Command::Presets { show } => presets(show.as_deref()),
        Command::Bench(c) => bench::run(&c),
        Command::Capture(c) => capture::run(&c),
        Command::Kv(args) => return kv::main(&args),
        Command::Lifetime(args) => lifetime::run(&args),
        Command::Sweep(args) => sweep::main(&args),
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("error: {}", error_chain(&e));
            ExitCode::from(2)
        }
    }
}

/// The command line, where a value may be a negative number (`--op -0.1`, `--seed -1`): it
/// then reaches the value's own check and is refused with what the flag accepts, instead of
/// clap's "unexpected argument '-0'".
fn parse() -> Cli {
    fn negatives(cmd: clap::Command) -> clap::Command {
        let subs: Vec<String> = cmd
            .get_subcommands()
            .map(|s| s.get_name().to_string())
            .collect();
        #[allow(deprecated)] // the per-command switch: every value-taking flag of `cmd`
        let mut cmd = cmd.allow_negative_numbers(true);
        for name in subs {
            cmd = cmd.mut_subcommand(name, negatives);
        }
        cmd
    }
    let matches = negatives(<Cli as clap::CommandFactory>::command()).get_matches();
    <Cli as clap::FromArgMatches>::from_arg_matches(&matches).unwrap_or_else(|e| e.exit())
}

fn presets(show: Option<&str>) -> anyhow::Result<()> {
    match show {
        Some(name) => {
            let cfg = ssd::SsdConfig::preset(name)?;
            flashlab::output::emit(None, &cfg.to_toml())?;
        }
        None => {
            for name in ssd::config::preset_names() {
                let cfg = ssd::SsdConfig::preset(name)?;
                flashlab::outln!(
                    "{name:16} {}ch x {}die, {} KiB pages, {} pages/block, {:.1} GiB logical, op {:.2}",
                    cfg.geometry.channels,
                    cfg.geometry.dies_per_channel,
                    cfg.geometry.page_bytes / 1024,
                    cfg.geometry.pages_per_block,
                    cfg.logical_bytes() as f64 / (1u64 << 30) as f64,
                    cfg.ftl.op
                )?;
                flashlab::outln!("{:16} {}", "", cfg.description)?;
            }
        }
    }
    Ok(())
}
