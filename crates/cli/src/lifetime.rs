//! `flashlab lifetime`: P5's Table 1 (share of writes, mean and median lifetime, log2
//! histogram per class) over a block trace or a synthetic workload; the flags of
//! `lab::spec::LifetimeSpec` plus output and progress.

use anyhow::Result;
use clap::Args;
use lab::spec::LifetimeSpec;

#[derive(Args, Debug)]
pub struct LifetimeArgs {
    #[command(flatten)]
    spec: LifetimeSpec,
    /// Print exactly one JSON object on stdout (`rows`: one per class).
    #[arg(long)]
    json: bool,
    /// No progress on stderr.
    #[arg(long)]
    quiet: bool,
}

pub fn run(a: &LifetimeArgs) -> Result<()> {
    let opts = a.spec.options()?;
    let mut progress = crate::progress::Progress::new(!a.quiet, None);
    let r = lab::lifetime::run(&opts, &mut |p| progress.update("lifetime", p))?;
    progress.finish();
    let text = if a.json {
        format!("{}\n", serde_json::to_string(&r)?)
    } else {
        let mut t: Vec<String> = lab::lifetime::tables(&r)
            .iter()
            .map(|t| t.to_string())
            .collect();
        t.extend(r.notes.iter().map(|n| format!("note: {n}\n")));
        t.join("\n")
    };
    crate::output::emit(None, &text)
}
