//! `flashlab reproduce all`: the run itself (every experiment, results.json, CSVs, index.html,
//! provenance) is `lab::harness::reproduce_all`; here are its flags, its progress display and
//! what it prints. Also `flashlab report DIR` (re-render the page from `results.json` alone).

use crate::reproduce::ReproduceArgs;
use anyhow::{bail, Result};
use clap::Args;
use indicatif::{ProgressBar, ProgressStyle};
use lab::harness::reproduce_all::{self as all, AllSpec, Progress};
use lab::harness::results::{ExperimentResult, Status};
use lab::report::ProgressSink;
use lab::ReproduceOptions;
use std::io::IsTerminal;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Instant;

pub use all::DEFAULT_OUT;

/// Run every experiment with `base` options (scale, seed, device) and write the report.
pub fn run(a: &ReproduceArgs, base: ReproduceOptions) -> Result<()> {
    let spec = AllSpec {
        out: a.out.clone().unwrap_or_else(|| PathBuf::from(DEFAULT_OUT)),
        device: a.spec.device.clone(),
        preset: a.spec.preset.clone(),
        dir: a.spec.dir.clone(),
        allow_memory_fs: a.spec.allow_memory_fs,
        command_line: std::env::args()
            .map(|s| all::shell_quote(&s))
            .collect::<Vec<_>>()
            .join(" "),
    };
    let base = ReproduceOptions {
        progress: !a.quiet,
        ..base
    };
    base.apply_memory();
    let display = Display::new(!a.quiet, lab::EXPERIMENTS.len());
    let done = all::run(&spec, &base, &display)?;
    display.finish();
    let (results, page) = (&done.results, &done.page);
    crate::output::emit(None, &all::summary_table(results))?;
    crate::outln!(
        "\nreport: {} (open it in a browser; `flashlab report {}` re-renders it from results.json)",
        page.display(),
        spec.out.display()
    )?;
    let failed: Vec<&str> = results
        .experiments
        .iter()
        .filter(|e| e.status == Status::Failed)
        .map(|e| e.name.as_str())
        .collect();
    if !failed.is_empty() {
        bail!(
            "{} of {} experiments failed ({}); their errors are in {}",
            failed.len(),
            results.experiments.len(),
            failed.join(", "),
            page.display()
        );
    }
    Ok(())
}

/// One progress display for the whole run: a bar on a terminal, lines otherwise.
struct Display {
    bar: Option<ProgressBar>,
    lines: bool,
    total: usize,
    start: Instant,
}

impl Display {
    fn new(enabled: bool, total: usize) -> Display {
        let terminal = std::io::stderr().is_terminal();
        let bar = (enabled && terminal).then(|| {
            let b = ProgressBar::new(total as u64);
            b.set_style(
                ProgressStyle::with_template(
                    "[{elapsed_precise}] {bar:20} {pos}/{len} experiments (ETA {eta}) {prefix}: {wide_msg}",
                )
                .unwrap_or_else(|_| ProgressStyle::default_bar()),
            );
            b.enable_steady_tick(std::time::Duration::from_millis(500));
            b
        });
        Display {
            bar,
            lines: enabled && !terminal,
            total,
            start: Instant::now(),
        }
    }

    fn line(&self, msg: &str) {
        eprintln!("[{:7.1}s] {msg}", self.start.elapsed().as_secs_f64());
    }

    fn finish(&self) {
        if let Some(b) = &self.bar {
            b.finish_and_clear();
        }
    }
}

impl Progress for Display {
    /// Experiments may run side by side (`--jobs`): the bar counts the finished ones and
    /// names the last one started.
    fn start(&self, i: usize, name: &str) {
        if let Some(b) = &self.bar {
            b.set_prefix(name.to_string());
            b.set_message("starting");
        } else if self.lines {
            self.line(&format!("experiment {}/{}: {name}", i + 1, self.total));
        }
    }

    /// Where an experiment's own step lines go.
    fn sink(&self, name: &'static str) -> ProgressSink {
        match &self.bar {
            Some(b) => {
                let b = b.clone();
                ProgressSink(Arc::new(move |msg: &str| b.set_message(msg.to_string())))
            }
            None => {
                let start = self.start;
                ProgressSink(Arc::new(move |msg: &str| {
                    eprintln!("[{:7.1}s] {name}: {msg}", start.elapsed().as_secs_f64())
                }))
            }
        }
    }

    fn done(&self, name: &str, e: &ExperimentResult) {
        let what = match (&e.status, &e.error) {
            (Status::Failed, Some(err)) => {
                format!("{name} FAILED after {:.1} s: {err}", e.elapsed_seconds)
            }
            _ => format!("{name} done in {:.1} s", e.elapsed_seconds),
        };
        match &self.bar {
            Some(b) => {
                b.inc(1);
                b.println(what)
            }
            None if self.lines => self.line(&what),
            None => {}
        }
    }
}

#[derive(Args, Debug)]
pub struct ReportArgs {
    /// A directory written by `flashlab reproduce all` (it holds results.json).
    #[arg(default_value = DEFAULT_OUT)]
    dir: PathBuf,
}

/// `flashlab report DIR`: re-render DIR/index.html from DIR/results.json.
pub fn report(a: &ReportArgs) -> Result<()> {
    let done = all::render_dir(&a.dir)?;
    crate::output::emit(None, &all::summary_table(&done.results))?;
    crate::outln!("\nreport: {}", done.page.display())?;
    Ok(())
}
