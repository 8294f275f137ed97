//! `flashlab lifetime`: P5's Table 1 (share of writes, mean and median lifetime, log2
//! histogram per class) over a block trace or a synthetic workload.

use anyhow::{bail, Context, Result};
use cache::streams::LbaPolicySpec;
use clap::Args;
use lab::lifetime::{ClassBy, LifetimeOptions, Source};
use lab::units::{parse_bytes, parse_multiple};
use std::path::PathBuf;
use workload::TraceFormat;

#[derive(Args, Debug)]
pub struct LifetimeArgs {
    /// A block trace (plain or .gz/.bz2/.xz/.zst); needs --format. Without it, --workload.
    trace: Option<PathBuf>,
    /// Trace format: msr, spc, disksim, systor, tencent, blkparse (as `flashlab sim`).
    #[arg(long)]
    format: Option<String>,
    /// A synthetic workload instead of a trace (`flashlab sim --help` lists them), e.g.
    /// hotcold-write:0.9:0.1.
    #[arg(long, conflicts_with = "trace")]
    workload: Option<String>,
    /// Synthetic workloads: page writes, in multiples of the capacity.
    #[arg(long, default_value = "4x")]
    write_volume: String,
    /// How writes are grouped: stream (the stream --stream-policy gives each write) or
    /// lba-range:N (N equal ranges of the space).
    #[arg(long, default_value = "stream")]
    class: String,
    /// Stream policy for --class stream: none, hot-cold, by-lba-range:N, auto[:RANGES]
    /// (as `flashlab sim`).
    #[arg(long, default_value = "none")]
    stream_policy: String,
    /// Streams the policy may use [default: what it needs; auto: 4].
    #[arg(long)]
    streams: Option<u16>,
    /// Logical space, e.g. 4GiB: trace addresses wrap onto it [default: a trace's span; 1GiB
    /// for a synthetic workload].
    #[arg(long)]
    capacity: Option<String>,
    /// Page size, e.g. 4KiB.
    #[arg(long, default_value = "4KiB")]
    page_size: String,
    #[arg(long, default_value_t = 1)]
    seed: u64,
    /// Print exactly one JSON object on stdout (`rows`: one per class).
    #[arg(long)]
    json: bool,
    /// No progress on stderr.
    #[arg(long)]
    quiet: bool,
}

pub fn run(a: &LifetimeArgs) -> Result<()> {
    let opts = options(a)?;
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

fn options(a: &LifetimeArgs) -> Result<LifetimeOptions> {
    let source = match (&a.trace, &a.workload) {
        (Some(path), None) => {
            let Some(f) = &a.format else {
                bail!("a trace needs --format ({})", formats());
            };
            let format = TraceFormat::parse(f)
                .with_context(|| format!("--format {f}: expected one of {}", formats()))?;
            Source::Trace {
                path: path.clone(),
                format,
            }
        }
        (None, Some(spec)) => {
            if a.format.is_some() {
                bail!("--format applies only to a TRACE argument");
            }
            Source::Synthetic {
                spec: spec.clone(),
                volume: parse_multiple(&a.write_volume)
                    .map_err(anyhow::Error::msg)
                    .context("--write-volume")?,
                seed: a.seed,
            }
        }
        _ => bail!("give a TRACE (with --format) or --workload SPEC"),
    };
    let bytes = |s: &str, flag: &str| {
        parse_bytes(s)
            .map_err(anyhow::Error::msg)
            .with_context(|| flag.to_string())
    };
    let page_bytes = bytes(&a.page_size, "--page-size")?;
    if page_bytes == 0 || page_bytes > u32::MAX as u64 {
        bail!("--page-size {}: expected 1 B to 4 GiB", a.page_size);
    }
    Ok(LifetimeOptions {
        source,
        class_by: ClassBy::parse(&a.class)?,
        stream_policy: LbaPolicySpec::parse(&a.stream_policy)?,
        streams: a.streams,
        page_bytes: page_bytes as u32,
        capacity_bytes: a
            .capacity
            .as_deref()
            .map(|c| bytes(c, "--capacity"))
            .transpose()?,
    })
}

fn formats() -> String {
    TraceFormat::ALL
        .iter()
        .map(|f| f.name())
        .collect::<Vec<_>>()
        .join(", ")
}
