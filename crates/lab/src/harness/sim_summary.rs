//! What `flashlab sim` prints of a [`SimResult`]: the human-readable summary, the rows of
//! `--csv` (one per flow and one for the whole run), the one line of `--terse`
//! ([`TERSE_COLUMNS`]) and the rows of the `--log` file.

use crate::sim::{FlowResult, SimResult};
use serde_json::{Map, Value};

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
    if r.flows.len() > 1 {
        flows_summary(&mut o, r);
    }
    if !r.fdp_handles.is_empty() {
        fdp_summary(&mut o, r);
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

/// One line per flow: requests, pages and latency.
fn flows_summary(o: &mut String, r: &SimResult) {
    line!(
        o,
        "  flows             {} (GC copies of each flow's data in its flash pages)",
        r.flows.len()
    );
    for f in &r.flows {
        line!(
            o,
            "    {:<15} {:.0} IOPS, {:.1} MB/s; host {} written, {} read; flash {} written ({} GC); latency (us) p50 {:.1}, p99 {:.1}, p99.9 {:.1}, max {:.1}",
            f.name,
            f.iops_per_sim_second,
            f.throughput_mb_per_sim_second,
            f.host_pages_written,
            f.host_pages_read,
            f.flash_pages_written,
            f.gc_pages_copied,
            f.latency_us.p50,
            f.latency_us.p99,
            f.latency_us.p999,
            f.latency_us.max
        );
    }
}

/// One line per FDP reclaim-unit handle (and the shared GC RUs of initially isolated
/// handles): host and flash pages, its WAF, RU switches and GC copies out of its RUs.
fn fdp_summary(o: &mut String, r: &SimResult) {
    line!(
        o,
        "  FDP handles       {} (flash pages programmed into each handle's RUs; GC copies out of them)",
        r.fdp_handles.iter().filter(|h| h.handle.is_some()).count()
    );
    for h in &r.fdp_handles {
        let name = h
            .handle
            .map_or("shared GC RUs".to_string(), |n| format!("handle {n}"));
        let waf = h.waf().map_or("-".to_string(), |w| format!("{w:.3}"));
        line!(
            o,
            "    {name:<15} host {} written; flash {} written (WAF {waf}); {} RU switches; {} GC copies out",
            h.host_pages_written,
            h.flash_pages_written,
            h.ru_switches,
            h.gc_pages_copied
        );
    }
}

/// The row of one flow (or, with `flow = "all"`, the whole run) in `sim --csv`.
fn csv_row(flow: &str, f: &FlowResult, r: &SimResult) -> Map<String, Value> {
    let mut m = Map::new();
    let mut put = |k: &str, v: Value| {
        m.insert(k.to_string(), v);
    };
    put("flow", flow.into());
    put("workload", f.workload.clone().into());
    put("host_ios", f.host_ios.into());
    put("iops_per_sim_second", f.iops_per_sim_second.into());
    put(
        "throughput_mb_per_sim_second",
        f.throughput_mb_per_sim_second.into(),
    );
    put("latency_us_p50", f.latency_us.p50.into());
    put("latency_us_p99", f.latency_us.p99.into());
    put("latency_us_p999", f.latency_us.p999.into());
    put("latency_us_max", f.latency_us.max.into());
    put("latency_us_mean", f.latency_us.mean.into());
    put("host_pages_written", f.host_pages_written.into());
    put("host_pages_read", f.host_pages_read.into());
    put("flash_pages_written", f.flash_pages_written.into());
    put("gc_pages_copied", f.gc_pages_copied.into());
    put("sim_seconds", r.sim_seconds.into());
    put("waf", r.waf.map_or(Value::Null, Value::from));
    put("config_hash", r.config_hash.clone().into());
    m
}

/// `sim --csv`: a row per flow in the job's order, then a row `all` for the whole run
/// (whose `flash_pages_written` counts every flash program, translation pages included).
pub fn csv_rows(r: &SimResult) -> Vec<Map<String, Value>> {
    let mut rows: Vec<_> = r.flows.iter().map(|f| csv_row(&f.name, f, r)).collect();
    let all = FlowResult {
        name: "all".into(),
        workload: r.workload.clone(),
        host_ios: r.host_ios,
        host_pages_written: r.host_pages_written,
        host_pages_read: r.host_pages_read,
        host_pages_trimmed: r.host_pages_trimmed,
        flash_pages_written: r.flash_pages_written,
        gc_pages_copied: r.gc_pages_copied,
        iops_per_sim_second: r.iops_per_sim_second,
        throughput_mb_per_sim_second: r.throughput_mb_per_sim_second,
        latency_us: r.latency_us,
    };
    rows.push(csv_row("all", &all, r));
    rows
}

/// The columns of `sim --terse`, `;`-separated on one line: the run's, then
/// [`TERSE_FLOW_COLUMNS`] once per flow in the job's order.
pub const TERSE_COLUMNS: &[&str] = &[
    "terse_version",
    "preset",
    "ftl",
    "workload",
    "seed",
    "waf",
    "host_pages_written",
    "host_pages_read",
    "flash_pages_written",
    "gc_pages_copied",
    "erases",
    "sim_seconds",
    "iops_per_sim_second",
    "throughput_mb_per_sim_second",
    "latency_us_p50",
    "latency_us_p99",
    "latency_us_p999",
    "latency_us_max",
    "flows",
];

/// The columns of each flow in `sim --terse`.
pub const TERSE_FLOW_COLUMNS: &[&str] = &[
    "name",
    "iops_per_sim_second",
    "throughput_mb_per_sim_second",
    "latency_us_p50",
    "latency_us_p99",
    "latency_us_p999",
    "latency_us_max",
    "host_pages_written",
    "host_pages_read",
    "flash_pages_written",
];

/// The version in the first column of `sim --terse`: raised when columns change.
pub const TERSE_VERSION: u32 = 1;

/// `sim --terse`: one line, the fields of [`TERSE_COLUMNS`] then of each flow.
pub fn terse(r: &SimResult) -> String {
    let clean = |s: &str| s.replace([';', '\n'], " ");
    let mut fields = vec![
        TERSE_VERSION.to_string(),
        clean(&r.preset),
        r.ftl.clone(),
        clean(&r.workload),
        r.seed.to_string(),
        r.waf.map_or(String::new(), |w| format!("{w:.6}")),
        r.host_pages_written.to_string(),
        r.host_pages_read.to_string(),
        r.flash_pages_written.to_string(),
        r.gc_pages_copied.to_string(),
        r.erases.to_string(),
        format!("{:.6}", r.sim_seconds),
        format!("{:.1}", r.iops_per_sim_second),
        format!("{:.3}", r.throughput_mb_per_sim_second),
        format!("{:.1}", r.latency_us.p50),
        format!("{:.1}", r.latency_us.p99),
        format!("{:.1}", r.latency_us.p999),
        format!("{:.1}", r.latency_us.max),
        r.flows.len().to_string(),
    ];
    assert_eq!(
        fields.len(),
        TERSE_COLUMNS.len(),
        "one field per terse column"
    );
    for f in &r.flows {
        let flow = [
            clean(&f.name),
            format!("{:.1}", f.iops_per_sim_second),
            format!("{:.3}", f.throughput_mb_per_sim_second),
            format!("{:.1}", f.latency_us.p50),
            format!("{:.1}", f.latency_us.p99),
            format!("{:.1}", f.latency_us.p999),
            format!("{:.1}", f.latency_us.max),
            f.host_pages_written.to_string(),
            f.host_pages_read.to_string(),
            f.flash_pages_written.to_string(),
        ];
        assert_eq!(
            flow.len(),
            TERSE_FLOW_COLUMNS.len(),
            "one field per terse flow column"
        );
        fields.extend(flow);
    }
    format!("{}\n", fields.join(";"))
}

/// The rows of the `--log` CSV file: one per flow per interval (`SimResult::log`).
pub fn log_rows(r: &SimResult) -> Vec<Map<String, Value>> {
    r.log
        .iter()
        .filter_map(|row| match serde_json::to_value(row) {
            Ok(Value::Object(m)) => Some(m),
            _ => None,
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_text_summary_has_a_row_per_fdp_handle_and_the_shared_gc_rus() {
        let spec = crate::spec::SimSpec {
            fdp_handles: Some(2),
            stream_policy: "hot-cold".into(),
            workload: "hotcold-write:0.8:0.2".into(),
            capacity: Some("64MiB".into()),
            write_volume: Some("2x".into()),
            ..Default::default()
        };
        let r = crate::sim::run(&spec.resolve().unwrap(), &mut |_, _| {}).unwrap();
        assert_eq!(r.fdp_handles.len(), 3);
        let text = summary(&r);
        for row in [
            "FDP handles       2",
            "handle 0 ",
            "handle 1 ",
            "shared GC RUs ",
        ] {
            assert!(text.contains(row), "{row}: {text}");
        }
        let plain = crate::spec::SimSpec {
            fdp_handles: None,
            streams: Some(2),
            ..spec
        };
        let r = crate::sim::run(&plain.resolve().unwrap(), &mut |_, _| {}).unwrap();
        assert!(!summary(&r).contains("FDP handles"));
    }
}
