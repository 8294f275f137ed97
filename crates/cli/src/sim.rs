//! `flashlab sim`: the flags of `lab::spec::SimSpec` plus output and progress; a summary or one
//! JSON object (`lab::sim::summary`).

use anyhow::{Context, Result};
use clap::Args;
use lab::sim::{planned_pages, SimResult};
use lab::spec::SimSpec;
use std::path::PathBuf;

#[derive(Args, Debug)]
pub struct SimArgs {
    #[command(flatten)]
    pub spec: SimSpec,
    /// Print exactly one JSON object on stdout.
    #[arg(long, conflicts_with_all = ["csv", "terse"])]
    json: bool,
    /// Print CSV: a row per flow, then a row `all` for the whole run.
    #[arg(long, conflicts_with = "terse")]
    csv: bool,
    /// Print one `;`-separated line (columns in docs/commands.md, `sim --terse`).
    #[arg(long)]
    terse: bool,
    /// Also write the per-flow log of --log-interval to FILE (CSV).
    #[arg(long, value_name = "FILE.csv", requires = "log_interval")]
    log: Option<PathBuf>,
    /// Write the output (summary or JSON) to FILE instead of stdout.
    #[arg(long, value_name = "FILE")]
    output: Option<PathBuf>,
    /// Also draw WAF and latency over the measured phase into FILE (SVG).
    #[arg(long, value_name = "FILE.svg")]
    plot: Option<PathBuf>,
    /// No progress on stderr (a bar on a terminal, else a line every few seconds).
    #[arg(long)]
    quiet: bool,
}

pub fn run(a: &SimArgs) -> Result<()> {
    crate::output::check_output(a.output.as_deref())?;
    // Open the plot file before the run, so a path that cannot be written fails at once
    // rather than after a long simulation.
    let create = |flag: &str, path: &Option<PathBuf>| -> Result<Option<std::fs::File>> {
        match path {
            Some(p) => Ok(Some(
                std::fs::File::create(p).with_context(|| format!("{flag} {}", p.display()))?,
            )),
            None => Ok(None),
        }
    };
    let plot = create("--plot", &a.plot)?;
    let log = create("--log", &a.log)?;
    let result = execute(a)?;
    use std::io::Write;
    if let (Some(mut file), Some(path)) = (plot, &a.plot) {
        file.write_all(lab::harness::sim_plot::svg(&result)?.as_bytes())
            .with_context(|| format!("--plot {}", path.display()))?;
    }
    if let (Some(mut file), Some(path)) = (log, &a.log) {
        let rows = lab::harness::sim_summary::log_rows(&result);
        file.write_all(crate::output::csv(&rows).as_bytes())
            .with_context(|| format!("--log {}", path.display()))?;
    }
    use lab::harness::sim_summary;
    let text = if a.json {
        format!("{}\n", serde_json::to_string(&result)?)
    } else if a.csv {
        crate::output::csv(&sim_summary::csv_rows(&result))
    } else if a.terse {
        sim_summary::terse(&result)
    } else {
        sim_summary::summary(&result)
    };
    crate::output::emit(a.output.as_deref(), &text)
}

/// The run the flags describe, with progress on stderr unless `--quiet`.
pub fn execute(a: &SimArgs) -> Result<SimResult> {
    let opts = a.spec.resolve()?;
    let mut progress = crate::progress::Progress::new(!a.quiet, planned_pages(&opts));
    let result = lab::sim::run(&opts, &mut |phase, pages| progress.update(phase, pages))?;
    progress.finish();
    Ok(result)
}
