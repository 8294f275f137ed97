//! `flashlab lifetime`: P5's Table 1 — per class of writes, its share of the page writes and the
//! mean and median lifetime (page writes between two writes of the same logical page), plus a
//! log2 histogram — over a block trace (any format `flashlab sim` reads) or a synthetic
//! workload. The accounting is [`policy::streams::LifetimeTracker`] (definitions and precision there).
//!
//! Addresses: a trace's byte offsets become pages of `page_bytes`; with a capacity they wrap
//! onto it as `flashlab sim --trace-mapping wrap` does, else the trace's own span is the space
//! (read once first, so the trace must be a file). Only writes count; reads and trims are
//! skipped (P5 counts writes). Classes: the stream a [`LbaPolicySpec`] gives each write
//! (`stream`; `none` puts every write on stream 0), or N equal LBA ranges (`lba-range:N`).
//!
//! A page-reference trace (`pg` from `flashlab capture pg-tpcc`, the `tpcc` generator, or any
//! `buffer-sim` format) counts its write (dirtying) references: its pages are numbered densely
//! in order of first write (a first pass), and `--class relation` groups them by relation
//! (PostgreSQL's relfilenode; the generator's table or index).

use crate::report::{fmt_f, Table};
use anyhow::{bail, Context, Result};
use policy::streams::{DeathRecorder, LbaPolicySpec, StreamAssignment};
use policy::streams::{LifetimeReport, LifetimeTracker};
use serde::Serialize;
use std::path::PathBuf;
use workload::cache_trace::{open_refs, PageTraceFormat};
use workload::{LbaMapping, OpKind, Target, TraceFormat, WorkloadOptions, WorkloadSpec};

/// Largest address space tracked without a capacity (12 bytes of RAM per page: 3 GiB).
pub const MAX_PAGES: u64 = 1 << 28;

/// How writes are grouped into classes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ClassBy {
    /// The stream the stream policy chooses.
    Stream,
    /// `n` equal ranges of the logical space.
    LbaRange(u32),
    /// A page trace's relation (`pg`: relfilenode; `tpcc`: table or index).
    Relation,
}

impl ClassBy {
    pub fn parse(s: &str) -> Result<ClassBy> {
        match s.split_once(':') {
            None if s == "stream" => Ok(ClassBy::Stream),
            None if s == "relation" => Ok(ClassBy::Relation),
            Some(("lba-range", n)) => match n.parse::<u32>() {
                Ok(n) if n >= 1 => Ok(ClassBy::LbaRange(n)),
                _ => bail!(
                    "--class {s}: the number of ranges `{n}` must be a whole number from 1 to {}",
                    u32::MAX
                ),
            },
            _ => {
                bail!("--class {s}: expected stream, lba-range:N or relation (pg and tpcc traces)")
            }
        }
    }

    pub fn name(&self) -> String {
        match self {
            ClassBy::Stream => "stream".into(),
            ClassBy::LbaRange(n) => format!("lba-range:{n}"),
            ClassBy::Relation => "relation".into(),
        }
    }
}

/// Where the writes come from.
#[derive(Clone, Debug)]
pub enum Source {
    Trace {
        path: PathBuf,
        format: TraceFormat,
    },
    /// A page-reference trace (`buffer-sim`'s formats): its write references.
    PageTrace {
        path: PathBuf,
        format: PageTraceFormat,
    },
    /// A synthetic workload spec (`workload::SPEC_HELP`), `volume` x capacity page writes.
    Synthetic {
        spec: String,
        volume: f64,
        seed: u64,
    },
}

#[derive(Clone, Debug)]
pub struct LifetimeOptions {
    pub source: Source,
    pub class_by: ClassBy,
    pub stream_policy: LbaPolicySpec,
    /// Streams the policy may use (None: what it needs; `auto` 4).
    pub streams: Option<u16>,
    pub page_bytes: u32,
    /// Logical capacity in bytes (None: a trace's span; 1 GiB for synthetic workloads).
    pub capacity_bytes: Option<u64>,
}

/// What `flashlab lifetime --json` prints.
#[derive(Clone, Debug, Serialize)]
pub struct LifetimeResult {
    pub command: &'static str,
    pub source: String,
    pub class_by: String,
    pub stream_policy: String,
    pub logical_pages: u64,
    pub page_bytes: u32,
    /// Page writes, and one row per class (ascending).
    pub total_writes: u64,
    pub rows: Vec<policy::streams::ClassLifetime>,
    pub notes: Vec<String>,
}

/// Default capacity of a synthetic workload.
const SYNTHETIC_CAPACITY_BYTES: u64 = 1 << 30;
/// Streams `auto` groups into when none are given.
const AUTO_STREAMS_DEFAULT: u16 = 4;

pub fn run(opts: &LifetimeOptions, progress: &mut dyn FnMut(u64)) -> Result<LifetimeResult> {
    if opts.page_bytes == 0 {
        bail!("--page-size must be at least one byte");
    }
    if let Source::PageTrace { path, format } = &opts.source {
        return run_page_trace(opts, path, *format, progress);
    }
    if opts.class_by == ClassBy::Relation {
        bail!("--class relation: only page traces have relations (--format pg or tpcc)");
    }
    let pb = opts.page_bytes as u64;
    let logical_pages = logical_pages(opts)?;
    let target = Target {
        logical_pages,
        page_bytes: opts.page_bytes,
    };
    let (spec, wopts, source) = workload_of(opts, target)?;
    let streams = streams_of(opts);
    let hot_pages = workload::synth::hot_pages(&spec, target, 1);
    let mut policy: Box<dyn StreamAssignment> = match opts.stream_policy {
        LbaPolicySpec::Oracle => {
            // A first pass over the same requests (its clipped requests counted apart).
            let mut rec = DeathRecorder::new(logical_pages);
            let first = WorkloadOptions {
                clipped: workload::ClipCount::default(),
                ..wopts.clone()
            };
            crate::oracle::record(&mut rec, workload::build(&spec, target, &first)?, None)?;
            Box::new(rec.into_streams(streams.max(1)))
        }
        p => p.build(hot_pages, logical_pages, streams)?,
    };
    let mut tracker = LifetimeTracker::new(logical_pages);
    let (mut skipped, mut requests) = (0u64, 0u64);
    for r in workload::build(&spec, target, &wopts)? {
        let r = r?;
        requests += 1;
        if requests % 65_536 == 0 {
            progress(tracker.total_writes());
        }
        if r.op != OpKind::Write {
            skipped += 1;
            continue;
        }
        let stream = policy.stream_of_run(r.lpn, r.pages, None);
        for p in r.lpn..r.lpn + r.pages as u64 {
            let class = match opts.class_by {
                ClassBy::Stream => stream as u32,
                ClassBy::LbaRange(n) => lba_range(p, n, logical_pages),
                ClassBy::Relation => unreachable!("refused above"),
            };
            tracker.record(p, class);
        }
    }
    progress(tracker.total_writes());
    let report: LifetimeReport = tracker.report();
    let mut notes = Vec::new();
    if skipped > 0 {
        notes.push(format!(
            "{skipped} read or trim requests skipped (only writes have lifetimes)"
        ));
    }
    if wopts.clipped.get() > 0 {
        notes.push(format!(
            "{} requests ran past the end of the {} B space and were cut there",
            wopts.clipped.get(),
            logical_pages * pb
        ));
    }
    finish(opts, source, logical_pages, report, notes)
}

/// Streams the policy may use: `--streams`, else what it needs (`auto`: 4).
fn streams_of(opts: &LifetimeOptions) -> u16 {
    opts.streams.unwrap_or(match opts.stream_policy {
        LbaPolicySpec::None => 1,
        LbaPolicySpec::HotCold | LbaPolicySpec::SepBit => 2,
        LbaPolicySpec::ByLbaRange { ranges } => ranges.min(u16::MAX as u32) as u16,
        LbaPolicySpec::Auto { .. } | LbaPolicySpec::Oracle => AUTO_STREAMS_DEFAULT,
    })
}

fn lba_range(p: u64, n: u32, logical_pages: u64) -> u32 {
    let class = (p as u128 * n as u128 / logical_pages as u128).min(n as u128 - 1) as u32;
    assert!(class < n, "class {class} of {n} ranges");
    class
}

/// The notes every source shares, and the result.
fn finish(
    opts: &LifetimeOptions,
    source: String,
    logical_pages: u64,
    report: LifetimeReport,
    mut notes: Vec<String>,
) -> Result<LifetimeResult> {
    for c in &report.classes {
        if c.overwritten * 2 < c.writes {
            notes.push(format!(
                "class {}: only {:.1} % of its page writes were overwritten in this run, so its mean and median are of the lifetimes short enough to be seen (longer ones are cut off by the run's end): underestimates",
                c.class,
                c.overwritten as f64 * 100.0 / c.writes as f64
            ));
        }
    }
    if report.total_writes == 0 {
        notes.push("no page was written: no lifetimes".into());
    }
    Ok(LifetimeResult {
        command: "lifetime",
        source,
        class_by: opts.class_by.name(),
        stream_policy: opts.stream_policy.name(),
        logical_pages,
        page_bytes: opts.page_bytes,
        total_writes: report.total_writes,
        rows: report.classes,
        notes,
    })
}

/// Bits below a page id's relation: `pg` ids are `rel << 32 | ..`, the generator's
/// `object << 40 | ..` (index levels at `<< 36`, kept inside the relation).
fn relation_shift(format: PageTraceFormat) -> Option<u32> {
    match format {
        PageTraceFormat::Pg => Some(32),
        PageTraceFormat::Tpcc => Some(40),
        _ => None,
    }
}

/// A page trace's write references: pass 1 numbers the written pages densely, pass 2 records.
fn run_page_trace(
    opts: &LifetimeOptions,
    path: &std::path::Path,
    format: PageTraceFormat,
    progress: &mut dyn FnMut(u64),
) -> Result<LifetimeResult> {
    let shift = relation_shift(format);
    if opts.class_by == ClassBy::Relation && shift.is_none() {
        bail!(
            "--class relation: a {} trace has no relations (pg and tpcc traces have)",
            format.name()
        );
    }
    if opts.capacity_bytes.is_some() {
        bail!("--capacity applies to block traces and workloads; a page trace's space is its written pages");
    }
    let open =
        || open_refs(path, format, opts.page_bytes).with_context(|| path.display().to_string());
    let mut dense: rustc_hash::FxHashMap<u64, u64> = Default::default();
    for r in open()? {
        let r = r?;
        if r.write {
            let next = dense.len() as u64;
            dense.entry(r.page).or_insert(next);
        }
        if dense.len() as u64 > MAX_PAGES {
            bail!(
                "{}: more than {MAX_PAGES} distinct written pages",
                path.display()
            );
        }
    }
    let logical_pages = (dense.len() as u64).max(1);
    let mut policy = opts
        .stream_policy
        .build(None, logical_pages, streams_of(opts))?;
    let mut tracker = LifetimeTracker::new(logical_pages);
    let (mut reads, mut refs) = (0u64, 0u64);
    for r in open()? {
        let r = r?;
        refs += 1;
        if refs % 65_536 == 0 {
            progress(tracker.total_writes());
        }
        if !r.write {
            reads += 1;
            continue;
        }
        let p = dense[&r.page];
        let class = match opts.class_by {
            ClassBy::Stream => policy.stream_of_run(p, 1, None) as u32,
            ClassBy::LbaRange(n) => lba_range(p, n, logical_pages),
            ClassBy::Relation => (r.page >> shift.unwrap_or(0)) as u32,
        };
        tracker.record(p, class);
    }
    progress(tracker.total_writes());
    let report = tracker.report();
    assert_eq!(
        report.total_writes,
        refs - reads,
        "every write reference recorded once"
    );
    let notes = vec![format!(
        "{reads} read references skipped (only writes have lifetimes); a page trace's writes are dirtying references (P3's MarkBufferDirty), not device writes; its {logical_pages} written pages are numbered in order of first write"
    )];
    let source = format!("page trace:{} ({})", path.display(), format.name());
    finish(opts, source, logical_pages, report, notes)
}

/// The logical space in pages: the capacity's, a trace's span, or the synthetic default.
fn logical_pages(opts: &LifetimeOptions) -> Result<u64> {
    let pb = opts.page_bytes as u64;
    let bytes = match (&opts.source, opts.capacity_bytes) {
        (_, Some(c)) => c,
        (Source::Synthetic { .. }, None) => SYNTHETIC_CAPACITY_BYTES,
        (Source::PageTrace { .. }, None) => unreachable!("page traces number their own pages"),
        (Source::Trace { path, format }, None) => {
            let meta = std::fs::metadata(path).with_context(|| path.display().to_string())?;
            if !meta.is_file() {
                bail!("{} is not a regular file: without --capacity the trace is read twice (its span, then its writes); save it to a file or give --capacity", path.display());
            }
            workload::scan_trace_span(path, *format)?
        }
    };
    let pages = bytes.div_ceil(pb);
    if pages == 0 {
        bail!("the address space is empty (capacity or trace span of 0 bytes)");
    }
    if pages > MAX_PAGES {
        bail!(
            "the address space is {pages} pages of {pb} B, more than the {MAX_PAGES} this command tracks (12 B of memory each): give --capacity to wrap addresses onto a smaller space"
        );
    }
    Ok(pages)
}

fn workload_of(
    opts: &LifetimeOptions,
    target: Target,
) -> Result<(WorkloadSpec, WorkloadOptions, String)> {
    let mut w = WorkloadOptions {
        request_pages: 1,
        volume_pages: None,
        seed: 0,
        trace_format: None,
        mapping: LbaMapping::Wrap,
        clipped: workload::ClipCount::default(),
        sampler: Default::default(),
    };
    Ok(match &opts.source {
        Source::Trace { path, format } => {
            w.trace_format = Some(*format);
            let spec = WorkloadSpec::Trace { path: path.clone() };
            (
                spec,
                w,
                format!("trace:{} ({})", path.display(), format.name()),
            )
        }
        Source::PageTrace { .. } => unreachable!("page traces take run_page_trace"),
        Source::Synthetic { spec, volume, seed } => {
            let parsed = WorkloadSpec::parse(spec).with_context(|| format!("--workload {spec}"))?;
            if matches!(parsed, WorkloadSpec::Trace { .. }) {
                bail!("--workload {spec}: give a trace as the TRACE argument with --format");
            }
            if !(volume.is_finite() && *volume > 0.0) {
                bail!("--write-volume {volume}x: expected a positive multiple of the capacity");
            }
            w.seed = seed::Seed(*seed).fork("workload").value();
            w.volume_pages = Some((volume * target.logical_pages as f64).ceil() as u64);
            (parsed, w, spec.clone())
        }
    })
}

/// P5-Table-1-style rows and a log2 histogram per class.
pub fn tables(r: &LifetimeResult) -> Vec<Table> {
    let mut t = Table::new(
        format!(
            "lifetime by {} ({}; {} page writes; lifetime = page writes until the page is overwritten)",
            r.class_by, r.source, r.total_writes
        ),
        &["class", "writes", "share_pct", "overwritten", "mean", "median"],
    );
    let opt = |x: Option<f64>| x.map_or("-".into(), |v| fmt_f(v, 1));
    for c in &r.rows {
        t.push(vec![
            c.class.to_string(),
            c.writes.to_string(),
            fmt_f(c.share * 100.0, 2),
            c.overwritten.to_string(),
            opt(c.mean),
            c.median.map_or("-".into(), |m| m.to_string()),
        ]);
    }
    let mut h = Table::new(
        "lifetime histogram (log2 buckets: [from, 2 x from) page writes; share of the class's lifetimes)",
        &["class", "from", "count", "share_pct"],
    );
    for c in &r.rows {
        for &(from, n) in &c.histogram {
            h.push(vec![
                c.class.to_string(),
                from.to_string(),
                n.to_string(),
                fmt_f(n as f64 * 100.0 / c.overwritten.max(1) as f64, 2),
            ]);
        }
    }
    vec![t, h]
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Write;

    fn trace(lines: &str) -> tempfile::NamedTempFile {
        let mut f = tempfile::NamedTempFile::new().unwrap();
        f.write_all(lines.as_bytes()).unwrap();
        f
    }

    fn opts(path: PathBuf, class_by: ClassBy) -> LifetimeOptions {
        LifetimeOptions {
            source: Source::Trace {
                path,
                format: TraceFormat::Msr,
            },
            class_by,
            stream_policy: LbaPolicySpec::None,
            streams: None,
            page_bytes: 4096,
            capacity_bytes: None,
        }
    }

    #[test]
    fn a_hand_made_trace_gives_exact_lifetimes() {
        // MSR: timestamp,host,disk,type,offset,size,latency. Pages 0 1 0 2 (2 pages: 2 3) 0.
        let f = trace(
            "1,h,0,Write,0,4096,0\n\
             2,h,0,Write,4096,4096,0\n\
             3,h,0,Read,0,4096,0\n\
             4,h,0,Write,0,4096,0\n\
             5,h,0,Write,8192,8192,0\n\
             6,h,0,Write,0,4096,0\n",
        );
        // Writes: t0 p0, t1 p1, t2 p0 (p0 lived 2), t3 p2, t4 p3, t5 p0 (lived 3).
        let r = run(&opts(f.path().into(), ClassBy::LbaRange(2)), &mut |_| {}).unwrap();
        assert_eq!(r.logical_pages, 4);
        assert_eq!(r.total_writes, 6);
        let low = &r.rows[0]; // pages 0-1
        assert_eq!((low.class, low.writes, low.overwritten), (0, 4, 2));
        assert_eq!(low.mean, Some(2.5));
        assert_eq!(low.median, Some(2));
        assert_eq!(low.histogram, vec![(2, 2)]);
        let high = &r.rows[1];
        assert_eq!(
            (high.class, high.writes, high.overwritten, high.mean),
            (1, 2, 0, None)
        );
        assert!(r.notes[0].contains("1 read or trim"), "{:?}", r.notes);
        let one = run(&opts(f.path().into(), ClassBy::Stream), &mut |_| {}).unwrap();
        assert_eq!(one.rows.len(), 1);
        assert_eq!(one.rows[0].share, 1.0);
    }

    #[test]
    fn a_bad_line_is_named() {
        let f = trace("1,h,0,Write,0,4096,0\n2,h,0,Write,zero,4096,0\n");
        let e = run(&opts(f.path().into(), ClassBy::Stream), &mut |_| {}).unwrap_err();
        let msg = format!("{e:#}");
        assert!(msg.contains(":2:"), "{msg}");
    }

    #[test]
    fn classes_parse() {
        assert_eq!(ClassBy::parse("stream").unwrap(), ClassBy::Stream);
        assert_eq!(ClassBy::parse("lba-range:8").unwrap(), ClassBy::LbaRange(8));
        assert_eq!(ClassBy::parse("relation").unwrap(), ClassBy::Relation);
        for bad in ["lba-range:0", "lba-range", "type", "stream:2"] {
            assert!(ClassBy::parse(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn a_synthetic_hot_cold_workload_separates_by_stream() {
        let o = LifetimeOptions {
            source: Source::Synthetic {
                spec: "hotcold-write:0.9:0.1".into(),
                volume: 4.0,
                seed: 1,
            },
            class_by: ClassBy::Stream,
            stream_policy: LbaPolicySpec::HotCold,
            streams: None,
            page_bytes: 4096,
            capacity_bytes: Some(40 << 20), // 10240 pages
        };
        let r = run(&o, &mut |_| {}).unwrap();
        let (cold, hot) = (&r.rows[0], &r.rows[1]);
        assert!((hot.share - 0.9).abs() < 0.01, "{}", hot.share);
        // Uniform within each set: mean lifetime = pages / share of writes.
        let want_hot = 1024.0 / 0.9;
        assert!(
            (hot.mean.unwrap() / want_hot - 1.0).abs() < 0.05,
            "{:?}",
            hot.mean
        );
        assert!(cold.mean.unwrap() > 10.0 * hot.mean.unwrap());
    }

    fn page_opts(path: PathBuf, format: PageTraceFormat, class_by: ClassBy) -> LifetimeOptions {
        LifetimeOptions {
            source: Source::PageTrace { path, format },
            ..opts(PathBuf::new(), class_by)
        }
    }

    #[test]
    fn a_page_trace_counts_its_write_references() {
        // text: R|W page. Writes: 7 9 7 (7 lived 2) 5 9 (9 lived 3).
        let f = trace("W 7\nR 7\nW 9\nW 7\nR 9\nW 5\nW 9\n");
        let o = page_opts(f.path().into(), PageTraceFormat::Text, ClassBy::Stream);
        let r = run(&o, &mut |_| {}).unwrap();
        assert_eq!((r.logical_pages, r.total_writes), (3, 5));
        assert_eq!((r.rows[0].overwritten, r.rows[0].mean), (2, Some(2.5)));
        assert!(r.notes[0].contains("2 read references"), "{:?}", r.notes);
        // A text trace has no relations; block traces and workloads neither.
        let rel = page_opts(f.path().into(), PageTraceFormat::Text, ClassBy::Relation);
        assert!(format!("{:#}", run(&rel, &mut |_| {}).unwrap_err()).contains("no relations"));
        let block = opts(f.path().into(), ClassBy::Relation);
        assert!(run(&block, &mut |_| {}).is_err());
    }

    #[test]
    fn generator_and_pg_traces_class_by_relation() {
        let spec = "warehouses=1,transactions=300,seed=2";
        let writes = workload::tpcc::Tpcc::new(workload::tpcc::TpccConfig::parse(spec).unwrap())
            .filter(|r| r.write)
            .count() as u64;
        let o = page_opts(spec.into(), PageTraceFormat::Tpcc, ClassBy::Relation);
        let r = run(&o, &mut |_| {}).unwrap();
        assert_eq!(r.total_writes, writes);
        // Written relations: DISTRICT, WAREHOUSE, CUSTOMER, STOCK, ORDER-LINE heaps and some
        // index leaves; each is a class, and the classes' writes add up.
        assert!(
            r.rows.len() >= 6,
            "{:?}",
            r.rows.iter().map(|c| c.class).collect::<Vec<_>>()
        );
        assert_eq!(r.rows.iter().map(|c| c.writes).sum::<u64>(), writes);
        assert!(r.rows.iter().any(|c| c.class == 11), "STOCK is written");
        let fixture = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
            .join("../workload/tests/fixtures/pg-tpcc-w1-30s.zst");
        let pg = page_opts(fixture, PageTraceFormat::Pg, ClassBy::Relation);
        let r = run(&pg, &mut |_| {}).unwrap();
        assert!(
            r.total_writes > 1000 && r.rows.len() >= 5,
            "{} writes",
            r.total_writes
        );
        assert_eq!(r.rows.iter().map(|c| c.writes).sum::<u64>(), r.total_writes);
    }
}
