//! The `flashlab sim` driver: precondition a simulated SSD, run a workload or trace through a
//! host queue of `host_queue_depth`, and report WAF, GC, merges, throughput and latency.
//!
//! Volume: `write_volume` counts host page writes after preconditioning, in multiples of the
//! logical capacity (for read-only workloads it counts request pages). A trace runs to its end
//! unless `write_volume` is given. Arrival times: synthetic workloads are closed-loop (a request
//! is issued as soon as a queue slot frees); traces are replayed closed-loop too unless
//! `replay_trace_timing` is set, in which case a request is issued no earlier than its
//! timestamp (relative to the first record).
//!
//! Streams: every host write (preconditioning included) goes to the stream its
//! [`LbaPolicySpec`] chooses (`--stream-policy`; `none` puts everything on stream 0).

use crate::host::HostDriver;
use crate::units::format_bytes;
use anyhow::{bail, Context, Result};
use policy::streams::{LbaPolicySpec, StreamAssignment};
use serde::Serialize;
use ssd::{SimTime, Ssd, SsdConfig, StreamId};
use std::path::PathBuf;
use std::time::Instant;
use workload::mix::{Pace, Window};
use workload::{LbaMapping, OpKind, Request, Target, TraceFormat, WorkloadOptions, WorkloadSpec};

/// How to bring the device to steady state before measuring.
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Precondition {
    /// Nothing: measure from a fresh device.
    None,
    /// One sequential fill of the logical space.
    Fill,
    /// A sequential fill, then `passes` x capacity of uniform random page writes.
    Full { passes: f64 },
}

/// One flow of a job: a workload, its pace and where it writes.
#[derive(Clone, Debug)]
pub struct FlowOptions {
    pub name: String,
    /// Workload spec, see `workload::SPEC_HELP`.
    pub workload: String,
    pub trace_format: Option<TraceFormat>,
    pub mapping: LbaMapping,
    pub request_pages: u32,
    pub pace: Pace,
    /// Requests of the job (share) or arrival nanoseconds (rate) the flow is active in.
    pub window: Window,
    /// The device stream of this flow's writes (None: the job's `stream_policy`).
    pub stream: Option<u16>,
    /// The workload's seed (already forked from the run's).
    pub seed: u64,
    /// The region the flow addresses: `size_pages` logical pages from `offset_pages`.
    pub offset_pages: u64,
    pub size_pages: u64,
}

impl FlowOptions {
    /// The workload generator's options for this flow (its request size, seed, trace format
    /// and mapping; clipped requests counted in `clipped`; uniform draws by `sampler`).
    pub fn workload_options(
        &self,
        clipped: &workload::ClipCount,
        sampler: workload::synth::Sampler,
    ) -> WorkloadOptions {
        WorkloadOptions {
            request_pages: self.request_pages,
            volume_pages: None,
            seed: self.seed,
            trace_format: self.trace_format,
            mapping: self.mapping,
            clipped: clipped.clone(),
            sampler,
        }
    }
}

#[derive(Clone, Debug)]
pub struct SimOptions {
    pub config: SsdConfig,
    /// The preset `config` started from (None: a config file).
    pub preset: Option<String>,
    /// The config file `config` was read from, if any.
    pub config_path: Option<PathBuf>,
    /// The job's flows (at least one); the single-workload flags make one.
    pub flows: Vec<FlowOptions>,
    /// The job file the flows came from (None: the flags).
    pub job_path: Option<PathBuf>,
    /// Record per-flow figures every this many simulated nanoseconds (`SimResult::log`).
    pub log_interval_ns: Option<u64>,
    /// Host page writes to measure, in multiples of the logical capacity (None: a trace's end,
    /// or 1x for synthetic workloads).
    pub write_volume: Option<f64>,
    pub precondition: Precondition,
    pub replay_trace_timing: bool,
    /// Which device stream each host write goes to.
    pub stream_policy: LbaPolicySpec,
    pub seed: u64,
    /// Refuse to build a device whose `SsdConfig::memory_bytes_estimate` exceeds this.
    pub max_memory_bytes: u64,
    /// Stop with an error once the device has programmed more flash pages than this
    /// (preconditioning included; None: no limit).
    pub max_flash_writes: Option<FlashWrites>,
    /// How uniform draws use the random words (`--sampler`): the workload's and the
    /// preconditioning's. The default is every seeded result's; another draws other pages.
    pub sampler: workload::synth::Sampler,
}

/// A number of flash page programs: a count, or a multiple of the logical capacity.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum FlashWrites {
    Pages(u64),
    Capacity(f64),
}

impl FlashWrites {
    /// The count on a device of `logical_pages`.
    pub fn pages(self, logical_pages: u64) -> u64 {
        match self {
            FlashWrites::Pages(n) => n,
            FlashWrites::Capacity(x) => {
                assert!(x.is_finite() && x >= 0.0, "flash write multiple {x}");
                (x * logical_pages as f64).ceil() as u64
            }
        }
    }
}

#[derive(Clone, Copy, Debug, Serialize, PartialEq)]
pub struct Latency {
    pub p50: f64,
    pub p99: f64,
    pub p999: f64,
    pub mean: f64,
    pub max: f64,
}

#[derive(Clone, Copy, Debug, Serialize, PartialEq)]
pub struct Merges {
    pub full: u64,
    pub partial: u64,
    pub switch: u64,
}

/// How the run was driven (with `config`, everything that determines its figures).
#[derive(Clone, Debug, Serialize)]
pub struct Setup {
    pub workload: String,
    pub request_pages: u32,
    pub request_bytes: u64,
    /// Host page writes measured, in multiples of the logical capacity (null: a trace's end,
    /// or 1x of request pages for synthetic workloads).
    pub write_volume: Option<f64>,
    pub precondition: Precondition,
    pub trace_format: Option<String>,
    /// `wrap`, or `scale` with the trace's span in bytes.
    pub trace_mapping: String,
    pub replay_trace_timing: bool,
    /// `--stream-policy` (absent for `none`, so runs without streams keep their hash).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub stream_policy: Option<String>,
    /// `--sampler` (absent for `rand`, the sampler of every run before `lemire` became the
    /// default, so those runs keep their hash; a `lemire` run draws other pages at the same
    /// seed, so it gets its own).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub sampler: Option<String>,
    pub seed: u64,
    /// A job of several flows: each flow's setup (absent for one flow, whose setup is above).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub flows: Option<Vec<FlowSetup>>,
}

/// One flow of a job as it ran.
#[derive(Clone, Debug, Serialize)]
pub struct FlowSetup {
    pub name: String,
    pub workload: String,
    pub request_pages: u32,
    /// `share` weight or `rate` in requests per second of simulated time.
    pub share: Option<f64>,
    pub rate_iops: Option<f64>,
    /// Requests of the job (share) or arrival nanoseconds (rate).
    pub start: u64,
    pub stop: Option<u64>,
    pub stream: Option<u16>,
    pub seed: u64,
    pub offset_pages: u64,
    pub size_pages: u64,
}

/// Everything `flashlab sim --json` prints. Wall-clock keys: `wall_seconds`,
/// `host_ios_per_wall_second`, `host_pages_per_wall_second`, `precondition_wall_seconds`;
/// memory of the process (not a function of the seed either): `peak_rss_bytes`,
/// `bytes_per_logical_page`, `process_bytes_per_logical_page`.
#[derive(Clone, Debug, Serialize)]
pub struct SimResult {
    /// The preset used, or `custom` when the config differs from it (flags, --capacity, a file).
    pub preset: String,
    /// The preset the config started from (null: a config file).
    pub base_preset: Option<String>,
    pub config_path: Option<String>,
    /// The whole effective SSD configuration.
    pub config: SsdConfig,
    pub setup: Setup,
    /// FNV-1a 64 (hex) of the JSON of `config` and `setup`: equal hashes, equal runs.
    pub config_hash: String,
    pub ftl: String,
    pub gc_policy: String,
    pub op: f64,
    pub workload: String,
    pub seed: u64,
    pub timing: bool,
    pub logical_bytes: u64,
    pub page_bytes: u32,
    pub pages_per_block: u32,
    pub alpha: f64,
    /// Flash page writes per host page write; null where no host page was written.
    pub waf: Option<f64>,
    /// Closed-form steady-state WAF for the modelled case (uniform random single-page writes,
    /// page mapping, greedy or FIFO GC, one stream; else null): Desnoyers' Eq. 12 (greedy) or
    /// the FIFO fixed point at `waf_model_alpha`, which counts the open blocks.
    pub waf_model: Option<f64>,
    /// The alpha `waf_model` is evaluated at: `alpha` less the free pages the open blocks hold,
    /// `alpha - 0.6 x GC pools / logical blocks` (`ssd::analytic::open_block_alpha`).
    pub waf_model_alpha: Option<f64>,
    /// The same model at `alpha` (Desnoyers' Eq. 12 without the open-block correction).
    pub waf_model_uncorrected: Option<f64>,
    /// Whether this device is large enough for `waf_model` (spare blocks per die at least
    /// `ssd::analytic::MODEL_MIN_SPARE_BLOCKS_PER_DIE`); null where no model exists.
    pub waf_model_applies: Option<bool>,
    /// Expected relative deviation of the measured WAF from `waf_model` on this finite device.
    pub waf_model_expected_excess: Option<f64>,
    pub host_ios: u64,
    pub host_pages_written: u64,
    /// Host pages written in the measured phase per device stream (`ftl.streams` entries).
    pub host_pages_written_by_stream: Vec<u64>,
    /// `auto` stream policy: its final `(LBA range, stream)` table (absent otherwise).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub stream_mapping: Option<Vec<(u32, u16)>>,
    /// FDP: the measured phase's counters per reclaim-unit handle (absent without FDP).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub fdp_handles: Vec<ssd::HandleStats>,
    pub host_pages_read: u64,
    pub host_pages_trimmed: u64,
    pub flash_pages_written: u64,
    pub flash_pages_read: u64,
    pub gc_pages_copied: u64,
    pub gc_invocations: u64,
    pub erases: u64,
    pub erase_count_max: u32,
    pub erase_count_mean: f64,
    pub merges: Merges,
    pub translation_reads: u64,
    pub translation_writes: u64,
    pub mapping_bytes: u64,
    /// RAM the device was estimated to need before it was built
    /// (`SsdConfig::memory_bytes_estimate`, checked against `--max-memory`).
    pub memory_bytes_estimate: u64,
    /// Peak resident memory of the process while the device existed (Linux `VmHWM`, reset
    /// before the device was built); null where unavailable.
    pub peak_rss_bytes: Option<u64>,
    /// The device's resident memory per logical page: the largest growth of the process's
    /// anonymous resident memory (Linux `RssAnon`: heap and mapped tables, so the device's
    /// maps, block records, workload and host queue, and the allocator's overhead; not the
    /// pages of the program's code, which `peak_rss_bytes` counts) over what it held before
    /// the device was built, sampled after preconditioning and at the end of the run; null
    /// where unavailable.
    pub bytes_per_logical_page: Option<f64>,
    /// The whole process's peak resident memory (`peak_rss_bytes`) beyond what it held before
    /// the device was built, per logical page: `bytes_per_logical_page` plus the program's
    /// code paged in as the run first executes it (about 1 MB, so small devices show far
    /// more); null where unavailable.
    pub process_bytes_per_logical_page: Option<f64>,
    pub sim_seconds: f64,
    pub throughput_mb_per_sim_second: f64,
    pub iops_per_sim_second: f64,
    pub latency_us: Latency,
    pub wall_seconds: f64,
    pub precondition_wall_seconds: f64,
    pub host_ios_per_wall_second: f64,
    pub host_pages_per_wall_second: f64,
    /// Whether the measured phase reached `--write-volume` (null when none was given); false:
    /// the workload (a trace) ended first.
    pub volume_reached: Option<bool>,
    /// Trace requests cut at the device's last logical page (they asked for pages beyond it).
    pub requests_clipped: u64,
    /// The measured phase over time: about [`TIMELINE_POINTS`] samples (for `sim --plot`).
    pub timeline: Vec<TimelinePoint>,
    /// The job file the flows came from (absent: the flags, a one-flow job).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub job: Option<String>,
    /// Per-flow figures of the measured phase, in the job's order (see [`FlowResult`]).
    pub flows: Vec<FlowResult>,
    /// GC copies of data no flow wrote in the measured phase (the preconditioning's), in a
    /// job of several flows (0 for one flow: the flow owns every page).
    pub gc_pages_copied_unattributed: u64,
    /// Per-flow figures every `--log-interval` of simulated time (empty without it).
    pub log: Vec<LogRow>,
    /// What the figures above do not say by themselves (undefined WAF, volume not reached,
    /// clipped requests, a WAF model outside its regime).
    pub notes: Vec<String>,
}

/// Samples of the measured phase in `SimResult::timeline` (a trace of unknown length gets a
/// sample every tenth of the capacity, thinned to at most twice this many).
pub const TIMELINE_POINTS: u64 = 50;

/// One sample of the measured phase, at the end of an interval of host pages.
#[derive(Clone, Copy, Debug, Serialize, PartialEq)]
pub struct TimelinePoint {
    /// Pages counted so far in the measured phase (written pages for write volumes), in
    /// multiples of the logical capacity.
    pub host_pages_x_capacity: f64,
    /// Simulated seconds since the measured phase began.
    pub sim_seconds: f64,
    /// WAF of this interval (null: no host page written in it).
    pub waf_interval: Option<f64>,
    /// WAF since the measured phase began (null: no host page written yet).
    pub waf_cumulative: Option<f64>,
    /// Latency of the requests completed in this interval, microseconds (0: none).
    pub latency_us_mean: f64,
    pub latency_us_p99: f64,
    pub latency_us_p999: f64,
    pub latency_us_max: f64,
}

mod flows;
pub use flows::{FlowResult, LogRow};

/// Total pages the measured phase will run (for a progress bar), if known.
pub fn planned_pages(opts: &SimOptions) -> Option<u64> {
    let logical = opts.config.logical_pages() as f64;
    let trace = opts.flows.iter().any(|f| f.workload.starts_with("trace:"));
    match (opts.write_volume, trace) {
        (Some(v), _) => Some((v * logical).ceil() as u64),
        (None, true) => None,
        (None, false) => Some(logical as u64),
    }
}

/// Run a simulation. `progress(phase, pages_done)` is called now and then.
pub fn run(opts: &SimOptions, progress: &mut dyn FnMut(&str, u64)) -> Result<SimResult> {
    if opts.flows.is_empty() {
        bail!("a run needs at least one flow (a workload)");
    }
    let specs = opts
        .flows
        .iter()
        .map(|f| {
            WorkloadSpec::parse(&f.workload).with_context(|| format!("--workload {}", f.workload))
        })
        .collect::<Result<Vec<_>>>()?;
    if opts.flows.iter().any(|f| f.request_pages == 0) {
        bail!("--request-size must be at least one page");
    }
    if let Some(v) = opts.write_volume {
        if !(v.is_finite() && v > 0.0) {
            bail!("--write-volume {v}x: expected a positive multiple of the capacity, e.g. 0.5x or 5x");
        }
    }
    let several = opts.flows.len() > 1;
    let mut config = device_config(&opts.config);
    if several {
        // GC copies are told apart by the flow class of the tags they move.
        config.ftl.data = ssd::DataMode::Tags;
    }
    check_memory(&config, opts.max_memory_bytes)?;
    let rss_before = memory::reset_peak_rss();
    let anon_before = memory::anon_rss_bytes();
    let ssd = Ssd::new(config)?;
    let target = Target {
        logical_pages: ssd.logical_pages(),
        page_bytes: ssd.page_bytes() as u32,
    };
    let first = &opts.flows[0];
    let hot_pages = (first.offset_pages == 0 && first.size_pages == target.logical_pages)
        .then(|| workload::synth::hot_pages(&specs[0], target, first.request_pages))
        .flatten();
    let mut policy: Box<dyn StreamAssignment> = match opts.stream_policy {
        LbaPolicySpec::Oracle if several => {
            anyhow::bail!("--stream-policy oracle runs one flow (its first pass replays that flow); give a job with one [[flow]]")
        }
        LbaPolicySpec::Oracle => Box::new(crate::oracle::sim_placement(opts, &specs[0], target)?),
        p => p.build(hot_pages, target.logical_pages, opts.config.ftl.streams)?,
    };
    let mut d = HostDriver::new(ssd, opts.config.timing.host_queue_depth);
    d.flash_write_limit = opts.max_flash_writes.map(|l| l.pages(target.logical_pages));
    let wall = Instant::now();
    precondition(&mut d, opts, target, policy.as_mut(), progress)?;
    let pre_wall = wall.elapsed().as_secs_f64();
    let anon_preconditioned = memory::anon_rss_bytes();

    let (before, t0) = d.begin_measurement();
    if several {
        d.port
            .ssd_mut()
            .count_copies_by_tag_class(opts.flows.len() + 1);
    }
    let by_stream_before = d.ssd().host_pages_written_by_stream().to_vec();
    let handles_before = d.ssd().handle_stats();
    d.port.replay_arrivals(opts.replay_trace_timing);
    if matches!(first.pace, Pace::RateIops(_)) {
        // The mix's arrivals count from the measured phase's start (`MixRun` adds `t0`).
        d.port.replay_absolute_arrivals();
    }
    let clipped = workload::ClipCount::default();
    let limit = planned_pages(opts);
    let writes_only = specs.iter().all(|s| s.is_write_only())
        || opts.write_volume.is_some() && specs.iter().any(|s| s.writes());
    let measured_wall = Instant::now();
    let sampled = (before, t0);
    let one_flow = !several && opts.log_interval_ns.is_none();
    let (count, timeline, mut mixed) = if one_flow {
        let (c, t) = run_one_flow(
            &mut d,
            opts,
            &specs[0],
            target,
            &clipped,
            policy.as_mut(),
            (limit, writes_only, sampled),
            progress,
        )?;
        (c, t, None)
    } else {
        let mix = flows::mix_of(opts, target, &clipped)?;
        let mut m = flows::MixRun::new(mix, opts, policy.as_mut(), t0.0, target.page_bytes as u64);
        let mut step = |d: &mut HostDriver, pages: u64, p: &mut dyn FnMut(u64)| {
            m.step(d, pages, writes_only, p)
        };
        let (c, t) = run_sampled(&mut d, &mut step, limit, sampled, progress)?;
        let rows = m.log_rows();
        (c, t, Some((std::mem::take(&mut m.tallies), rows)))
    };
    let wall_s = measured_wall.elapsed().as_secs_f64();
    let mut r = summarize(opts, &d, before, t0, wall_s, pre_wall);
    r.host_pages_written_by_stream = d
        .ssd()
        .host_pages_written_by_stream()
        .iter()
        .zip(&by_stream_before)
        .map(|(now, before)| now - before)
        .collect();
    r.stream_mapping = policy.mapping();
    r.fdp_handles = (d.ssd().handle_stats().iter().zip(&handles_before))
        .map(|(now, before)| now.since(before))
        .collect();
    r.timeline = timeline;
    flow_results(&mut r, opts, &d, mixed.take());
    r.peak_rss_bytes = memory::peak_rss_bytes();
    let per_page = |before: Option<u64>, peak: Option<u64>| {
        let pages = d.ssd().logical_pages().max(1) as f64;
        before
            .zip(peak)
            .map(|(b, p)| p.saturating_sub(b) as f64 / pages)
    };
    let anon_peak = anon_preconditioned.max(memory::anon_rss_bytes());
    r.bytes_per_logical_page = per_page(anon_before, anon_peak);
    r.process_bytes_per_logical_page = per_page(rss_before, r.peak_rss_bytes);
    r.requests_clipped = clipped.get();
    add_notes(&mut r, opts, count, limit);
    Ok(r)
}

/// The one flow of a job without a log, by the workload's concrete type (a synthetic
/// workload's request loop is compiled around it: no boxed iterator per request). The same
/// requests, and so the same figures, as the mixed path of one flow.
#[allow(clippy::too_many_arguments)]
fn run_one_flow(
    d: &mut HostDriver,
    opts: &SimOptions,
    spec: &WorkloadSpec,
    target: Target,
    clipped: &workload::ClipCount,
    policy: &mut dyn StreamAssignment,
    (limit, writes_only, sampled): (Option<u64>, bool, (ssd::Stats, SimTime)),
    progress: &mut dyn FnMut(&str, u64),
) -> Result<(crate::host::RunCount, Vec<TimelinePoint>)> {
    let f = &opts.flows[0];
    assert!(
        f.offset_pages == 0 && f.size_pages == target.logical_pages,
        "the one-flow path runs on the whole device"
    );
    let wopts = f.workload_options(clipped, opts.sampler);
    fn sampled_run<I: Iterator<Item = Result<Request, workload::WorkloadError>>>(
        d: &mut HostDriver,
        reqs: I,
        limit: Option<u64>,
        writes_only: bool,
        sampled: (ssd::Stats, SimTime),
        progress: &mut dyn FnMut(&str, u64),
    ) -> Result<(crate::host::RunCount, Vec<TimelinePoint>)> {
        let mut reqs = reqs;
        let mut step = |d: &mut HostDriver, pages: u64, p: &mut dyn FnMut(u64)| {
            d.run_ahead(&mut reqs, Some(pages), writes_only, p)
        };
        run_sampled(d, &mut step, limit, sampled, progress)
    }
    match spec {
        WorkloadSpec::Synthetic { .. } => {
            let synthetic = workload::synth::Synthetic::new(spec, target, &wopts)?;
            let synthetic = match single_stream(opts) {
                // One-page writes on one stream: pages straight from the generator.
                Some(stream) => match synthetic.page_writes() {
                    Ok(mut pages) => {
                        let mut step = |d: &mut HostDriver, n: u64, p: &mut dyn FnMut(u64)| {
                            d.run_page_writes(&mut pages, stream, Some(n), p)
                        };
                        return run_sampled(d, &mut step, limit, sampled, progress);
                    }
                    Err(synthetic) => synthetic,
                },
                None => synthetic,
            };
            let reqs = synthetic.map(Ok);
            sampled_run(
                d,
                with_streams(reqs, policy),
                limit,
                writes_only,
                sampled,
                progress,
            )
        }
        WorkloadSpec::Trace { .. } | WorkloadSpec::FlashCache(_) => {
            let reqs = with_streams(workload::build(spec, target, &wopts)?, policy);
            sampled_run(d, reqs, limit, writes_only, sampled, progress)
        }
    }
}

/// Per-flow results: from the mixed run's tallies, or (one flow without a log) the totals.
fn flow_results(
    r: &mut SimResult,
    opts: &SimOptions,
    d: &HostDriver,
    mixed: Option<(Vec<flows::Tally>, Vec<LogRow>)>,
) {
    let page_bytes = r.page_bytes as u64;
    let Some((tallies, rows)) = mixed else {
        r.flows = vec![FlowResult {
            name: opts.flows[0].name.clone(),
            workload: opts.flows[0].workload.clone(),
            host_ios: r.host_ios,
            host_pages_written: r.host_pages_written,
            host_pages_read: r.host_pages_read,
            host_pages_trimmed: r.host_pages_trimmed,
            flash_pages_written: r.host_pages_written + r.gc_pages_copied,
            gc_pages_copied: r.gc_pages_copied,
            iops_per_sim_second: r.iops_per_sim_second,
            throughput_mb_per_sim_second: r.throughput_mb_per_sim_second,
            latency_us: r.latency_us,
        }];
        return;
    };
    let copies = d.ssd().flash().copies_by_tag_class();
    let several = opts.flows.len() > 1;
    r.flows = tallies
        .iter()
        .zip(&opts.flows)
        .enumerate()
        .map(|(k, (t, f))| {
            let copied = if several {
                copies[k + 1]
            } else {
                r.gc_pages_copied
            };
            t.result(f, copied, page_bytes, r.sim_seconds)
        })
        .collect();
    if several {
        let attributed: u64 = copies[1..].iter().sum();
        r.gc_pages_copied_unattributed = r.gc_pages_copied.saturating_sub(attributed);
    }
    r.log = rows;
}

fn add_notes(
    r: &mut SimResult,
    opts: &SimOptions,
    count: crate::host::RunCount,
    limit: Option<u64>,
) {
    if r.requests_clipped > 0 {
        r.notes.push(format!(
            "{} trace requests ran past the device's end and were clipped there (fewer pages than the trace asked for)",
            r.requests_clipped
        ));
    }
    if opts.write_volume.is_some() {
        r.volume_reached = Some(count.limit_reached);
        if !count.limit_reached {
            r.notes.push(format!(
                "--write-volume not reached: the workload ended after {} of {} pages",
                count.pages,
                limit.unwrap_or(0)
            ));
        }
    }
    if let Some(m) = waf_model(opts).filter(|m| !m.applies) {
        r.notes.push(format!(
            "waf_model ({:.4}) holds within about 1 % from {} spare blocks per GC pool; this device has {:.1}, so expect its WAF about {:.1} % off the model",
            m.waf,
            ssd::analytic::MODEL_MIN_SPARE_BLOCKS_PER_DIE,
            m.spare_blocks_per_die,
            m.expected_excess * 100.0
        ));
    }
    if r.waf.is_none() {
        r.notes
            .push("WAF is undefined (null): no host page was written in the measured phase".into());
    } else if r.host_pages_written < u64::from(r.pages_per_block) {
        r.notes.push(format!(
            "WAF over {} host pages, fewer than one block ({} pages): too few to mean anything (the flash writes are mostly GC the preconditioning left due); give a longer trace or workload",
            r.host_pages_written, r.pages_per_block
        ));
    } else if r.host_pages_written < opts.config.logical_pages()
        && opts.precondition != Precondition::None
    {
        r.notes.push(format!(
            "WAF covers the measured phase only ({} host pages, {:.3}x the logical capacity) on a drive preconditioned first: it counts GC the preconditioning left due, and nears the drive's steady-state WAF only after about 1x capacity",
            r.host_pages_written,
            r.host_pages_written as f64 / opts.config.logical_pages().max(1) as f64
        ));
    }
    if r.gc_pages_copied_unattributed > 0 {
        r.notes.push(format!(
            "{} GC copies moved data written before the measured phase (the preconditioning's): they count in gc_pages_copied but in no flow's flash_pages_written",
            r.gc_pages_copied_unattributed
        ));
    }
}

mod timeline;
use timeline::run_sampled;

/// The device `flashlab sim` builds: the config as given, except that a device asked to keep
/// tags keeps no data (`data = "none"`): sim reads nothing back, so the 8-byte tag per
/// physical page would cost memory and time for nothing (invariant checks do not need it).
pub fn device_config(cfg: &SsdConfig) -> SsdConfig {
    let mut c = cfg.clone();
    if c.ftl.data == ssd::DataMode::Tags {
        c.ftl.data = ssd::DataMode::None;
    }
    c
}

mod memory;

/// Refuse, before allocating, a device whose estimated memory exceeds `limit_bytes`.
fn check_memory(cfg: &SsdConfig, limit_bytes: u64) -> Result<()> {
    match cfg.check_memory(limit_bytes) {
        Ok(_) => Ok(()),
        Err(ssd::SsdError::MemoryLimit { estimate_bytes, .. }) => bail!(
            "this device needs about {} of memory ({estimate_bytes} B, estimate of its maps, page tags and host queue) but the memory limit is {} ({limit_bytes} B, from {}): shrink it (--capacity, --queue-depth, or blocks_per_plane / host_queue_depth in the config), or raise the limit (--max-memory up to the process's own limit)",
            format_bytes(estimate_bytes),
            format_bytes(limit_bytes),
            crate::harness::memory_limit::source_of(limit_bytes)
        ),
        Err(e) => Err(e.into()),
    }
}

/// Requests with the stream `policy` chooses for each write.
fn with_streams<'a, E>(
    reqs: impl Iterator<Item = Result<Request, E>> + 'a,
    policy: &'a mut dyn StreamAssignment,
) -> impl Iterator<Item = Result<Request, E>> + 'a {
    reqs.map(move |r| {
        r.map(|mut r| {
            if r.op == OpKind::Write {
                r.stream = policy.stream_of_run(r.lpn, r.pages, None);
            }
            r
        })
    })
}

fn precondition(
    d: &mut HostDriver,
    opts: &SimOptions,
    target: Target,
    policy: &mut dyn StreamAssignment,
    progress: &mut dyn FnMut(&str, u64),
) -> Result<()> {
    let passes = match opts.precondition {
        Precondition::None => return Ok(()),
        Precondition::Fill => 0.0,
        Precondition::Full { passes } => passes,
    };
    let progress = &mut |p| progress("precondition", p);
    if let Some(stream) = single_stream(opts) {
        let mut pages = workload::precondition_pages(target, passes, opts.seed, opts.sampler);
        d.run_page_writes(&mut pages, stream, None, progress)?;
        return Ok(());
    }
    let pre = workload::precondition_by(target, passes, opts.seed, opts.sampler);
    let reqs = with_streams(pre, policy);
    d.run(reqs, None, false, progress)?;
    Ok(())
}

/// The stream every host write goes to when the stream policy is the single stream
/// (`--stream-policy none`, whose choice is stream 0 for every write: the drivers need not
/// ask it per write); None for any other policy.
fn single_stream(opts: &SimOptions) -> Option<StreamId> {
    (opts.stream_policy == LbaPolicySpec::None).then_some(StreamId(0))
}

fn summarize(
    opts: &SimOptions,
    d: &HostDriver,
    before: ssd::Stats,
    t0: SimTime,
    wall_s: f64,
    pre_wall: f64,
) -> SimResult {
    let s = d.ssd().stats().since(&before);
    let cfg = d.ssd().config();
    let sim_s = d.last_done().0.saturating_sub(t0.0) as f64 / 1e9;
    // Built only where a latency was recorded (an untimed run's would be ~270 KiB of zeros
    // counted in its memory).
    let h = (!d.ssd().latency_is_empty()).then(|| d.ssd().latency_ns());
    let us = |q: f64| {
        h.as_ref()
            .map_or(0.0, |h| h.value_at_quantile(q) as f64 / 1e3)
    };
    let erase_counts = d.ssd().flash().erase_counts();
    let per_s = |x: f64, t: f64| if t > 0.0 { x / t } else { 0.0 };
    let bytes_moved =
        (s.host_pages_written + s.host_pages_read) as f64 * cfg.geometry.page_bytes as f64;
    let setup = setup(opts);
    let model = waf_model(opts);
    SimResult {
        preset: preset_label(opts),
        base_preset: opts.preset.clone(),
        config_path: opts.config_path.as_ref().map(|p| p.display().to_string()),
        config_hash: config_hash(cfg, &setup),
        config: cfg.clone(),
        setup,
        ftl: cfg.ftl.scheme.name().to_string(),
        gc_policy: format!("{:?}", cfg.ftl.gc_policy).to_lowercase(),
        op: cfg.ftl.op,
        workload: workload_label(opts),
        seed: opts.seed,
        timing: cfg.timing.enabled,
        logical_bytes: cfg.logical_bytes(),
        page_bytes: cfg.geometry.page_bytes,
        pages_per_block: cfg.geometry.pages_per_block,
        alpha: cfg.alpha(),
        waf: (s.host_pages_written > 0).then(|| s.waf()),
        waf_model: model.map(|m| m.waf),
        waf_model_alpha: model.map(|m| m.alpha),
        waf_model_uncorrected: model.map(|m| m.waf_uncorrected),
        waf_model_applies: model.map(|m| m.applies),
        waf_model_expected_excess: model.map(|m| m.expected_excess),
        host_ios: s.host_ios,
        host_pages_written: s.host_pages_written,
        host_pages_written_by_stream: Vec::new(),
        stream_mapping: None,
        fdp_handles: Vec::new(),
        host_pages_read: s.host_pages_read,
        host_pages_trimmed: s.host_pages_trimmed,
        flash_pages_written: s.flash_pages_written,
        flash_pages_read: s.flash_pages_read,
        gc_pages_copied: s.gc_pages_copied,
        gc_invocations: s.gc_invocations,
        erases: s.erases,
        erase_count_max: erase_counts.iter().copied().max().unwrap_or(0),
        erase_count_mean: erase_counts.iter().map(|&e| e as f64).sum::<f64>()
            / erase_counts.len().max(1) as f64,
        merges: Merges {
            full: s.merges_full,
            partial: s.merges_partial,
            switch: s.merges_switch,
        },
        translation_reads: s.translation_reads,
        translation_writes: s.translation_writes,
        mapping_bytes: d.ssd().mapping_bytes(),
        memory_bytes_estimate: cfg.memory_bytes_estimate(),
        peak_rss_bytes: None,
        bytes_per_logical_page: None,
        process_bytes_per_logical_page: None,
        sim_seconds: sim_s,
        throughput_mb_per_sim_second: per_s(bytes_moved / 1e6, sim_s),
        iops_per_sim_second: per_s(s.host_ios as f64, sim_s),
        latency_us: Latency {
            p50: us(0.5),
            p99: us(0.99),
            p999: us(0.999),
            mean: h.as_ref().map_or(0.0, |h| h.mean() / 1e3),
            max: h.as_ref().map_or(0.0, |h| h.max() as f64 / 1e3),
        },
        wall_seconds: wall_s,
        precondition_wall_seconds: pre_wall,
        host_ios_per_wall_second: per_s(s.host_ios as f64, wall_s),
        host_pages_per_wall_second: per_s(
            (s.host_pages_written + s.host_pages_read) as f64,
            wall_s,
        ),
        volume_reached: None,
        requests_clipped: 0,
        timeline: Vec::new(),
        job: opts.job_path.as_ref().map(|p| p.display().to_string()),
        flows: Vec::new(),
        gc_pages_copied_unattributed: 0,
        log: Vec::new(),
        notes: Vec::new(),
    }
}

/// The workload as `workload` and `setup.workload` show it: the one flow's, or
/// `name=workload` of every flow joined by ` + `.
fn workload_label(opts: &SimOptions) -> String {
    match opts.flows.as_slice() {
        [one] => one.workload.clone(),
        flows => flows
            .iter()
            .map(|f| format!("{}={}", f.name, f.workload))
            .collect::<Vec<_>>()
            .join(" + "),
    }
}

fn setup(opts: &SimOptions) -> Setup {
    let first = &opts.flows[0];
    Setup {
        workload: workload_label(opts),
        request_pages: first.request_pages,
        request_bytes: first.request_pages as u64 * opts.config.geometry.page_bytes as u64,
        write_volume: opts.write_volume,
        precondition: opts.precondition,
        trace_format: first.trace_format.map(|f| f.name().to_string()),
        trace_mapping: match first.mapping {
            LbaMapping::Wrap => "wrap".into(),
            LbaMapping::Scale { max_byte } => format!("scale (span {max_byte} bytes)"),
        },
        replay_trace_timing: opts.replay_trace_timing,
        stream_policy: (opts.stream_policy != LbaPolicySpec::None)
            .then(|| opts.stream_policy.name()),
        sampler: (opts.sampler != workload::synth::Sampler::Rand08)
            .then(|| opts.sampler.name().to_string()),
        seed: opts.seed,
        flows: (opts.flows.len() > 1).then(|| opts.flows.iter().map(flow_setup).collect()),
    }
}

fn flow_setup(f: &FlowOptions) -> FlowSetup {
    let (share, rate_iops) = match f.pace {
        Pace::Share(w) => (Some(w), None),
        Pace::RateIops(r) => (None, Some(r)),
    };
    FlowSetup {
        name: f.name.clone(),
        workload: f.workload.clone(),
        request_pages: f.request_pages,
        share,
        rate_iops,
        start: f.window.start,
        stop: f.window.stop,
        stream: f.stream,
        seed: f.seed,
        offset_pages: f.offset_pages,
        size_pages: f.size_pages,
    }
}

/// The preset's name if the config is exactly that preset, else `custom`.
fn preset_label(opts: &SimOptions) -> String {
    match &opts.preset {
        Some(name) if SsdConfig::preset(name).is_ok_and(|p| p == opts.config) => name.clone(),
        _ => "custom".into(),
    }
}

fn config_hash(cfg: &SsdConfig, setup: &Setup) -> String {
    let json = serde_json::json!({ "config": cfg, "setup": setup }).to_string();
    format!("{:016x}", seed::stable_hash(json.as_bytes()))
}

mod waf_model;
pub use waf_model::{waf_model, WafModel};
