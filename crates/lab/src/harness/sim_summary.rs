//! The human-readable summary `flashlab sim` prints of a [`SimResult`].

use crate::sim::SimResult;

/// `writeln!` into a String (which cannot fail).
macro_rules! line {
    ($o:expr, $($t:tt)*) => {{
        use std::fmt::Write as _;
        let _ = writeln!($o, $($t)*);
    }};
}

/// The human-readable summary of a run.
pub fn summary(r: &SimResult) -> String {
    let mut o = String::new();
    line!(
        o,
        "flashlab sim: {} on {} ({} FTL, {} GC, op {:.3}, timing {})",
        r.workload,
        r.preset,
        r.ftl,
        r.gc_policy,
        r.op,
        if r.timing { "on" } else { "off" }
    );
    line!(
        o,
        "  device            {:.2} GiB logical, {} B pages, {} pages/block, alpha {:.4}",
        r.logical_bytes as f64 / (1u64 << 30) as f64,
        r.page_bytes,
        r.pages_per_block,
        r.alpha
    );
    match (r.waf, r.waf_model, r.waf_model_expected_excess) {
        (None, _, _) => line!(o, "  WAF               n/a (no host page was written)"),
        (Some(w), Some(m), _) if r.waf_model_applies == Some(true) => line!(
            o,
            "  WAF               {w:.4} (closed-form steady-state model: {m:.4})"
        ),
        (Some(w), Some(m), Some(x)) => line!(
            o,
            "  WAF               {w:.4} (closed-form model {m:.4} is for a larger device: expect it within about {:.1} % here, see note)",
            x * 100.0
        ),
        (Some(w), _, _) => line!(o, "  WAF               {w:.4}"),
    }
    line!(
        o,
        "  host pages        {} written, {} read, {} trimmed ({} I/Os)",
        r.host_pages_written,
        r.host_pages_read,
        r.host_pages_trimmed,
        r.host_ios
    );
    if r.host_pages_written_by_stream.len() > 1 {
        line!(
            o,
            "  streams           {} ({}, GC {}); host pages written per stream: {:?}",
            r.host_pages_written_by_stream.len(),
            r.setup.stream_policy.as_deref().unwrap_or("none"),
            r.config.ftl.gc_stream.name(),
            r.host_pages_written_by_stream
        );
    }
    line!(
        o,
        "  flash pages       {} written, {} read; GC copied {} in {} GC runs",
        r.flash_pages_written,
        r.flash_pages_read,
        r.gc_pages_copied,
        r.gc_invocations
    );
    line!(
        o,
        "  erases            {} (per block: max {}, mean {:.2})",
        r.erases,
        r.erase_count_max,
        r.erase_count_mean
    );
    line!(
        o,
        "  merges            full {}, partial {}, switch {}",
        r.merges.full,
        r.merges.partial,
        r.merges.switch
    );
    if r.translation_reads + r.translation_writes > 0 {
        line!(
            o,
            "  translation pages {} read, {} written",
            r.translation_reads,
            r.translation_writes
        );
    }
    line!(o, "  mapping table     {} bytes", r.mapping_bytes);
    if r.timing {
        line!(
            o,
            "  simulated time    {:.3} s: {:.1} MB/s, {:.0} IOPS",
            r.sim_seconds,
            r.throughput_mb_per_sim_second,
            r.iops_per_sim_second
        );
        line!(
            o,
            "  latency (us)      p50 {:.1}, p99 {:.1}, p99.9 {:.1}, mean {:.1}, max {:.1}",
            r.latency_us.p50,
            r.latency_us.p99,
            r.latency_us.p999,
            r.latency_us.mean,
            r.latency_us.max
        );
    }
    line!(o, "  simulator speed   {:.0} host I/Os per wall second ({:.2} s measured, {:.2} s preconditioning)", r.host_ios_per_wall_second, r.wall_seconds, r.precondition_wall_seconds);
    if let Some(reached) = r.volume_reached {
        line!(
            o,
            "  write volume      {}",
            if reached {
                "reached"
            } else {
                "NOT reached (the workload ended first)"
            }
        );
    }
    if r.workload.starts_with("trace:") || r.requests_clipped > 0 {
        line!(
            o,
            "  clipped requests  {} (ran past the device's end; cut there)",
            r.requests_clipped
        );
    }
    line!(
        o,
        "  config            preset {}, hash {}",
        r.preset,
        r.config_hash
    );
    for n in &r.notes {
        line!(o, "  note: {n}");
    }
    o
}
