//! `flashlab buffer-sim` and `flashlab trace-info` (the logic is in `lab::buffer_sim` and
//! `lab::trace_info`).

use anyhow::{anyhow, bail, Result};
use cache::PolicyKind;
use clap::Args;
use lab::buffer_sim::{self, BufferSimOptions, CostModel, PriceModel, Size, TraceSpec};
use serde_json::{json, Value};
use std::path::PathBuf;
use workload::cache_trace::PageTraceFormat;

#[derive(Args, Debug)]
pub struct TraceArgs {
    /// Page-reference trace (plain, .gz, .bz2, .xz or .zst).
    #[arg(long)]
    trace: PathBuf,
    /// text (R|W page), arc (.lis), lirs, u32be, u32le, u64be, block:FORMAT (msr, spc, disksim,
    /// systor, tencent, blkparse).
    #[arg(long)]
    trace_format: String,
    /// Page size, bytes: pages of block:FORMAT traces, and prices.
    #[arg(long, default_value_t = 4096)]
    page_bytes: u32,
    /// Stop after this many references.
    #[arg(long)]
    limit: Option<u64>,
}

impl TraceArgs {
    fn spec(&self) -> Result<TraceSpec> {
        let format = PageTraceFormat::parse(&self.trace_format).ok_or_else(|| {
            anyhow!(
                "--trace-format {}: expected {}",
                self.trace_format,
                PageTraceFormat::HELP
            )
        })?;
        if self.page_bytes == 0 {
            bail!("--page-bytes must be at least 1");
        }
        Ok(TraceSpec {
            path: self.trace.clone(),
            format,
            page_bytes: self.page_bytes,
        })
    }
}

#[derive(Args, Debug)]
pub struct BufferSimArgs {
    #[command(flatten)]
    trace: TraceArgs,
    /// lru, 2q, lru-ext, 2q-ext, 2q-flash.
    #[arg(long, default_value = "lru")]
    policy: String,
    /// Main (DRAM) buffer: pages, or a percentage of the trace's distinct pages (e.g. 4%);
    /// the default is P3's main buffer, 4 % (with --curve, the grid's main size).
    #[arg(long, default_value = "4%")]
    size: String,
    /// Flash extension: pages or a percentage (extended policies only).
    #[arg(long, default_value = "0")]
    ext_size: String,
    /// 2Q's Kin, pages (default 25 % of --size, at least 1).
    #[arg(long)]
    kin: Option<usize>,
    /// 2Q's Kout (ghost ids), pages (default 50 % of --size; plain 2q only).
    #[arg(long)]
    kout: Option<usize>,
    /// 2q-flash: share of the flash given to Amout (Amout:A1out = r : 1-r).
    #[arg(long, default_value_t = 0.6)]
    amout_ratio: f64,
    /// Cost model, ms per page: flash random read.
    #[arg(long, default_value_t = 0.03)]
    flash_read_ms: f64,
    /// Cost model: flash sequential write.
    #[arg(long, default_value_t = 0.33)]
    flash_write_ms: f64,
    /// Cost model: one disk, random read or write.
    #[arg(long, default_value_t = 2.6)]
    disk_ms: f64,
    /// Cost model: two disks in RAID-0.
    #[arg(long, default_value_t = 1.6)]
    raid0_ms: f64,
    /// The database is on a RAID-0 pair (time and price).
    #[arg(long)]
    raid0: bool,
    /// Price model: flash SSD price and capacity (decimal GB).
    #[arg(long, default_value_t = 225.0)]
    flash_usd: f64,
    #[arg(long, default_value_t = 80.0)]
    flash_gb: f64,
    /// Price model: one disk.
    #[arg(long, default_value_t = 350.0)]
    disk_usd: f64,
    /// Price model: DRAM per GB as a multiple of flash per GB.
    #[arg(long, default_value_t = 10.0)]
    dram_per_flash: f64,
    /// One pass for every LRU size (stack distances) and the lru-ext grid from it.
    #[arg(long)]
    curve: bool,
    /// --curve: write the whole curve (every size where the hit count grows) as CSV (.csv) or JSON.
    #[arg(long)]
    curve_out: Option<PathBuf>,
    /// --curve: main sizes of the grid, comma-separated (default: --size).
    #[arg(long)]
    grid_main: Option<String>,
    /// --curve: flash sizes of the grid (default 5%,10%,...,50%).
    #[arg(long)]
    grid_flash: Option<String>,
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

fn sizes(list: &str, flag: &str) -> Result<Vec<Size>> {
    list.split(',')
        .map(|s| Size::parse(s).map_err(|e| anyhow!("{flag}: {e}")))
        .collect()
}

fn options(a: &BufferSimArgs) -> Result<BufferSimOptions> {
    let policy = PolicyKind::parse(&a.policy).ok_or_else(|| {
        anyhow!(
            "--policy {}: expected lru, 2q, lru-ext, 2q-ext or 2q-flash",
            a.policy
        )
    })?;
    let size = Size::parse(&a.size).map_err(|e| anyhow!("--size {e}"))?;
    let mut o = BufferSimOptions::new(a.trace.spec()?, policy, size);
    o.ext = Size::parse(&a.ext_size).map_err(|e| anyhow!("--ext-size {e}"))?;
    (o.kin, o.kout, o.amout_ratio) = (a.kin, a.kout, a.amout_ratio);
    o.cost = CostModel {
        flash_read_ms: a.flash_read_ms,
        flash_write_ms: a.flash_write_ms,
        disk_ms: a.disk_ms,
        raid0_ms: a.raid0_ms,
        raid0: a.raid0,
    };
    o.price = PriceModel {
        flash_usd: a.flash_usd,
        flash_gb: a.flash_gb,
        disk_usd: a.disk_usd,
        dram_per_flash: a.dram_per_flash,
    };
    for (name, x) in [
        ("--flash-read-ms", a.flash_read_ms),
        ("--flash-write-ms", a.flash_write_ms),
        ("--disk-ms", a.disk_ms),
        ("--raid0-ms", a.raid0_ms),
        ("--flash-usd", a.flash_usd),
        ("--disk-usd", a.disk_usd),
        ("--dram-per-flash", a.dram_per_flash),
    ] {
        if !(x.is_finite() && x >= 0.0) {
            bail!("{name} {x}: expected a non-negative number");
        }
    }
    if !(a.flash_gb.is_finite() && a.flash_gb > 0.0) {
        bail!("--flash-gb {}: expected a positive number", a.flash_gb);
    }
    o.limit = a.trace.limit;
    o.progress = !a.quiet;
    buffer_sim::validate(&o)?;
    Ok(o)
}

/// What `buffer-sim` computed: one policy and size, or (`--curve`) the LRU curve and its grid.
pub enum Outcome {
    Single(buffer_sim::SimOutcome),
    Curve(buffer_sim::CurveOutcome),
}

impl Outcome {
    /// The object `buffer-sim --json` prints.
    pub fn to_json(&self) -> Value {
        match self {
            Outcome::Single(out) => Value::Object(out.row.clone()),
            Outcome::Curve(out) => {
                let mut obj = out.summary.clone();
                obj.insert("grid".into(), json!(out.grid));
                Value::Object(obj)
            }
        }
    }

    fn to_text(&self) -> String {
        match self {
            Outcome::Single(out) => out.table.to_string(),
            Outcome::Curve(out) => {
                let mut text = String::new();
                for (k, v) in out.summary.iter().filter(|(k, _)| *k != "curve_sample") {
                    text.push_str(&format!("{k}: {v}\n"));
                }
                for t in &out.tables {
                    text.push_str(&format!("\n{t}"));
                }
                text
            }
        }
    }
}

/// The run the flags describe: the one path from flags to a result, for the command line,
/// the Python package and `flashlab sweep` alike.
pub fn execute(a: &BufferSimArgs) -> Result<Outcome> {
    let o = options(a)?;
    if !a.curve {
        return Ok(Outcome::Single(buffer_sim::simulate(&o)?));
    }
    if o.policy != PolicyKind::Lru && o.policy != PolicyKind::LruExt {
        bail!("--curve gives lru and lru-ext; drop --policy or use lru / lru-ext");
    }
    let main = match &a.grid_main {
        Some(l) => sizes(l, "--grid-main")?,
        None => vec![o.size],
    };
    let flash = match &a.grid_flash {
        Some(l) => sizes(l, "--grid-flash")?,
        None => buffer_sim::p3_flash_sizes(),
    };
    let out = buffer_sim::curve(&o, &main, &flash)?;
    if let Some(p) = &a.curve_out {
        buffer_sim::export_curve(&out.curve, p)?;
    }
    Ok(Outcome::Curve(out))
}

pub fn run(a: &BufferSimArgs) -> Result<()> {
    let out = execute(a)?;
    if a.json {
        return emit(&format!("{}\n", out.to_json()));
    }
    emit(&out.to_text())
}

#[derive(Args, Debug)]
pub struct TraceInfoArgs {
    #[command(flatten)]
    trace: TraceArgs,
    /// Print exactly one JSON object on stdout.
    #[arg(long)]
    json: bool,
}

pub fn trace_info(a: &TraceInfoArgs) -> Result<()> {
    let spec = a.trace.spec()?;
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
