//! `flashlab bench device`: the device benchmark (`lab::bench_device`) from the command line:
//! the flags of `lab::spec::BenchDeviceSpec` plus output and progress.

use anyhow::Result;
use clap::{Args, Subcommand};
use lab::bench_device;
use lab::spec::BenchDeviceSpec;
use std::path::PathBuf;

#[derive(Subcommand, Debug)]
pub enum BenchCommand {
    /// Sequential/random reads and writes of 4-32 KiB at QD1 and QD32 (MB/s, IOPS), as P1's
    /// Table 1, on a simulated SSD preset or a real file.
    Device(DeviceArgs),
}

#[derive(Args, Debug)]
pub struct DeviceArgs {
    #[command(flatten)]
    spec: BenchDeviceSpec,
    /// Print exactly one JSON object on stdout.
    #[arg(long)]
    json: bool,
    /// Write the output to FILE instead of stdout.
    #[arg(long, value_name = "FILE")]
    output: Option<PathBuf>,
    /// No progress lines on stderr.
    #[arg(long)]
    quiet: bool,
}

pub fn run(c: &BenchCommand) -> Result<()> {
    match c {
        BenchCommand::Device(a) => device(a),
    }
}

fn device(a: &DeviceArgs) -> Result<()> {
    crate::output::check_output(a.output.as_deref())?;
    let o = a.spec.options(!a.quiet)?;
    let out = bench_device::run(&o)?;
    let text = if a.json {
        format!("{}\n", out.report.to_json())
    } else {
        out.to_string()
    };
    crate::output::emit(a.output.as_deref(), &text)
}
