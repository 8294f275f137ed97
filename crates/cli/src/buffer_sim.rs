//! `flashlab buffer-sim` and `flashlab trace-info`: the flags of `lab::spec::BufferSimSpec` and
//! `lab::spec::PageTraceSpec` plus output (the logic is in `lab::buffer_sim` and
//! `lab::trace_info`).

use anyhow::Result;
use clap::Args;
use lab::spec::{BufferSimSpec, PageTraceSpec};
use serde_json::Value;

#[derive(Args, Debug)]
pub struct BufferSimArgs {
    #[command(flatten)]
    pub spec: BufferSimSpec,
    /// Print exactly one JSON object on stdout.
    #[arg(long)]
    json: bool,
    /// No progress lines on stderr.
    #[arg(long)]
    quiet: bool,
}

/// Write to stdout; a closed pipe (`| head`) ends the output quietly instead of panicking.
fn emit(text: &str) -> Result<()> {
    use std::io::Write;
    let mut out = std::io::stdout().lock();
    match out.write_all(text.as_bytes()).and_then(|()| out.flush()) {
        Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => Ok(()),
        r => Ok(r?),
    }
}

pub fn run(a: &BufferSimArgs) -> Result<()> {
    let out = lab::buffer_sim::run(&a.spec, &lab::Watch::lines(!a.quiet))?;
    if a.json {
        return emit(&format!("{}\n", out.to_json()));
    }
    emit(&out.to_text())
}

#[derive(Args, Debug)]
pub struct TraceInfoArgs {
    #[command(flatten)]
    trace: PageTraceSpec,
    /// Print exactly one JSON object on stdout.
    #[arg(long)]
    json: bool,
}

pub fn trace_info(a: &TraceInfoArgs) -> Result<()> {
    let spec = a.trace.resolve()?;
    let limit = a.trace.limit.unwrap_or(u64::MAX) as usize;
    let refs = spec
        .open()?
        .take(limit)
        .map(|r| r.map_err(anyhow::Error::from));
    let info = lab::trace_info::summarize(refs)?;
    if a.json {
        return emit(&format!("{}\n", Value::Object(info.row)));
    }
    let text: Vec<String> = info.tables.iter().map(|t| t.to_string()).collect();
    emit(&text.join("\n"))
}
