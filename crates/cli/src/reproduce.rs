//! `flashlab reproduce NAME` and `flashlab ftl-memory`.

use anyhow::{bail, Context, Result};
use clap::Args;
use lab::spec::ReproduceSpec;
use lab::{Output, ReproduceOptions, Scale};
use std::path::PathBuf;

#[derive(Args, Debug)]
pub struct ReproduceArgs {
    /// Experiment: ioa-ftl, as-btree, async-scan, ext-buffer, multistream (omit to list them; with --json, as
    /// JSON), or `all`: every experiment into a report directory (--out) with index.html.
    pub(crate) name: Option<String>,
    /// The experiment's options, shared with Python and sweeps (`lab::spec::ReproduceSpec`).
    #[command(flatten)]
    pub(crate) spec: ReproduceSpec,
    /// Print exactly one JSON object on stdout.
    #[arg(long)]
    pub(crate) json: bool,
    /// Print the measured rows as CSV (one header line, then one line per row).
    #[arg(long, conflicts_with = "json")]
    pub(crate) csv: bool,
    /// Write the output (tables, JSON or CSV) to FILE instead of stdout.
    #[arg(long, value_name = "FILE")]
    pub(crate) output: Option<PathBuf>,
    /// `reproduce all`: the report directory (results.json, one CSV per table, index.html)
    /// [default: flashlab-report].
    #[arg(long, value_name = "DIR")]
    pub(crate) out: Option<PathBuf>,
    /// No progress lines on stderr.
    #[arg(long)]
    pub(crate) quiet: bool,
}

pub fn run(a: &ReproduceArgs) -> Result<()> {
    crate::output::check_output(a.output.as_deref())?;
    let Some(name) = &a.name else {
        return list(a);
    };
    if name == "all" {
        return all(a);
    }
    if a.out.is_some() {
        bail!(
            "--out applies to `reproduce all` only (a single experiment writes to --output FILE)"
        );
    }
    let out = execute(name, a)?;
    let text = if a.json {
        format!("{}\n", out.report.to_json())
    } else if a.csv {
        crate::output::csv(&out.report.rows)
    } else {
        out.to_string()
    };
    crate::output::emit(a.output.as_deref(), &text)
}

/// The experiment `name` as the flags describe it (`lab::spec::ReproduceSpec`, the spec the
/// Python package fills too).
pub fn execute(name: &str, a: &ReproduceArgs) -> Result<Output> {
    let mut spec = spec(a);
    resolve_pg_tpcc(name, &mut spec, a.quiet)?;
    spec.execute(name, !a.quiet)
}

/// `ext-buffer --trace pg-tpcc`: the cached PostgreSQL capture of the scale and seed (captured
/// now on first use) under the user's cache directory ($XDG_CACHE_HOME or ~/.cache, /flashlab).
fn resolve_pg_tpcc(name: &str, spec: &mut ReproduceSpec, quiet: bool) -> Result<()> {
    use lab::papers::p3_ext_buffer::pg_tpcc;
    let named = spec.trace.as_deref() == Some(std::path::Path::new(pg_tpcc::NAME));
    if name != "ext-buffer" || !named || spec.trace.as_deref().is_some_and(|p| p.is_file()) {
        return Ok(());
    }
    let Some(scale) = Scale::parse(&spec.scale) else {
        bail!("--scale {}: expected quick or paper", spec.scale);
    };
    let cache = std::env::var_os("XDG_CACHE_HOME")
        .map(PathBuf::from)
        .or_else(|| std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".cache")))
        .context("no cache directory: set XDG_CACHE_HOME or HOME")?
        .join("flashlab");
    let mut log = |m: &str| {
        if !quiet {
            eprintln!("pg-tpcc: {m}");
        }
    };
    spec.trace = Some(pg_tpcc::cached_capture(scale, spec.seed, &cache, &mut log)?);
    spec.trace_format = Some("pg".into());
    Ok(())
}

/// The run spec of the flags.
fn spec(a: &ReproduceArgs) -> ReproduceSpec {
    a.spec.clone()
}

/// The options every experiment gets from the flags.
fn options(a: &ReproduceArgs, _scale: Scale) -> Result<ReproduceOptions> {
    Ok(spec(a).options(!a.quiet)?)
}

/// `flashlab reproduce all`: the flags that apply to every experiment, then the run.
fn all(a: &ReproduceArgs) -> Result<()> {
    let Some(scale) = Scale::parse(&a.spec.scale) else {
        bail!("--scale {}: expected quick or paper", a.spec.scale);
    };
    for (given, flag) in [
        (a.json, "--json"),
        (a.csv, "--csv"),
        (a.output.is_some(), "--output"),
    ] {
        if given {
            bail!("{flag} does not apply to `reproduce all`: it writes results.json, one CSV per table and index.html into --out DIR");
        }
    }
    for (given, flag) in [
        (a.spec.trace.is_some(), "--trace"),
        (a.spec.trace_format.is_some(), "--trace-format"),
        (a.spec.engine, "--engine"),
    ] {
        if given {
            bail!(
                "{flag} applies to ext-buffer only: run `flashlab reproduce ext-buffer {flag} ...`"
            );
        }
    }
    crate::reproduce_all::run(a, options(a, scale)?)
}

/// `flashlab reproduce` without a name: the experiments, as text or (`--json`) JSON.
fn list(a: &ReproduceArgs) -> Result<()> {
    let text = if a.json {
        format!(
            "{}\n",
            serde_json::json!({ "experiments": lab::EXPERIMENTS })
        )
    } else {
        let mut t =
            String::from("experiments (flashlab reproduce NAME [--scale quick|paper] [--json]):\n");
        for e in lab::EXPERIMENTS {
            t.push_str(&format!("  {:12} {}  {}\n", e.name, e.paper, e.about));
        }
        t.push_str("  all              every experiment above into --out DIR (index.html, results.json, CSVs)\n");
        t
    };
    crate::output::emit(a.output.as_deref(), &text)
}

#[derive(Args, Debug)]
pub struct FtlMemoryArgs {
    /// Device capacity, e.g. 4GiB, 64GiB, 16TiB.
    #[arg(long, default_value = "16TiB")]
    capacity: String,
    /// Flash page size (at least 512 bytes).
    #[arg(long, default_value = "4KiB")]
    page_size: String,
    /// Pages per erase block (at least 1).
    #[arg(long, default_value_t = 256)]
    pages_per_block: u32,
    /// Log space as a fraction of capacity (log-block schemes).
    #[arg(long, default_value_t = 0.01)]
    log_space: f64,
    #[arg(long)]
    json: bool,
    /// Print the rows as CSV (scheme, mapping_bytes).
    #[arg(long, conflicts_with = "json")]
    csv: bool,
    /// Write the output to FILE instead of stdout.
    #[arg(long, value_name = "FILE")]
    output: Option<PathBuf>,
}

pub fn ftl_memory(a: &FtlMemoryArgs) -> Result<()> {
    let cap = lab::units::parse_bytes(&a.capacity)
        .map_err(anyhow::Error::msg)
        .context("--capacity")?;
    let page = lab::units::parse_bytes(&a.page_size)
        .map_err(anyhow::Error::msg)
        .context("--page-size")?;
    if page < 512 {
        bail!(
            "--page-size {}: a flash page is at least 512 bytes",
            a.page_size
        );
    }
    if a.pages_per_block == 0 {
        bail!("--pages-per-block 0: a block holds at least one page");
    }
    let block_bytes = page.saturating_mul(a.pages_per_block as u64);
    if cap < block_bytes {
        bail!(
            "--capacity {}: smaller than one block ({block_bytes} bytes = --page-size x --pages-per-block)",
            a.capacity
        );
    }
    if !(a.log_space > 0.0 && a.log_space < 1.0) {
        bail!("--log-space {}: expected a fraction in (0, 1)", a.log_space);
    }
    let rows = ssd::ftl::memory::estimate(cap, page, a.pages_per_block as u64, a.log_space);
    let json_rows: Vec<serde_json::Map<String, serde_json::Value>> = rows
        .iter()
        .map(|(scheme, bytes)| {
            let mut m = serde_json::Map::new();
            m.insert("scheme".into(), scheme.clone().into());
            m.insert("mapping_bytes".into(), (*bytes).into());
            m
        })
        .collect();
    let text = if a.json {
        format!(
            "{}\n",
            serde_json::json!({"capacity_bytes": cap, "page_bytes": page, "pages_per_block": a.pages_per_block, "log_space": a.log_space, "rows": json_rows})
        )
    } else if a.csv {
        crate::output::csv(&json_rows)
    } else {
        let mut t = format!(
            "mapping-table memory for a {} device ({} B pages, {} pages/block, log space {:.1} %):\n",
            a.capacity,
            page,
            a.pages_per_block,
            a.log_space * 100.0
        );
        for (scheme, bytes) in rows {
            t.push_str(&format!(
                "  {scheme:24} {:>14} bytes  ({})\n",
                bytes,
                human(bytes as f64)
            ));
        }
        t
    };
    crate::output::emit(a.output.as_deref(), &text)
}

fn human(b: f64) -> String {
    const U: [&str; 5] = ["B", "KiB", "MiB", "GiB", "TiB"];
    let mut x = b;
    let mut i = 0;
    while x >= 1024.0 && i < U.len() - 1 {
        x /= 1024.0;
        i += 1;
    }
    format!("{x:.1} {}", U[i])
}
