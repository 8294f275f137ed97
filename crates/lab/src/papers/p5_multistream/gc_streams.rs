//! Where GC's copies come from: per device stream, the host pages written and the valid pages
//! GC copied out of that stream's blocks over the update phase (the SSD's per-stream
//! counters), and which data types each stream holds under the run's policy. This tells which
//! type's blocks hold the copies that a policy leaves (`config.gc_by_stream`, and a note).

use super::{gc_name, MapSpec, Plan, Run};
use policy::streams::DataType;
use serde_json::json;

/// One device stream's counters over a run's update phase.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct StreamGc {
    pub host_pages: u64,
    pub gc_pages_copied: u64,
}

impl StreamGc {
    /// GC copies per host page of this stream (None without host pages).
    pub fn copies_per_host_page(&self) -> Option<f64> {
        (self.host_pages > 0).then(|| self.gc_pages_copied as f64 / self.host_pages as f64)
    }
}

/// The device's per-stream counters now (host pages, GC copies), one entry per stream.
pub(super) fn snapshot(ssd: &ssd::Ssd) -> Vec<StreamGc> {
    let host = ssd.host_pages_written_by_stream();
    let copied = ssd.gc_pages_copied_by_stream();
    assert_eq!(host.len(), copied.len(), "one GC count per stream");
    host.iter()
        .zip(&copied)
        .map(|(&host_pages, &gc_pages_copied)| StreamGc {
            host_pages,
            gc_pages_copied,
        })
        .collect()
}

/// `after − before`, per stream.
pub(super) fn since(after: &[StreamGc], before: &[StreamGc]) -> Vec<StreamGc> {
    assert_eq!(after.len(), before.len(), "the same device's streams");
    after
        .iter()
        .zip(before)
        .map(|(a, b)| StreamGc {
            host_pages: a.host_pages - b.host_pages,
            gc_pages_copied: a.gc_pages_copied - b.gc_pages_copied,
        })
        .collect()
}

/// The types `policy` sends to `stream` in any file ("any" for maps decided online).
fn stream_types(plan: &Plan, policy: &MapSpec, stream: u16) -> String {
    let Ok(map) = policy.build(plan.files, plan.device_streams) else {
        return "?".into();
    };
    if map.is_auto() || map.is_oracle() {
        return "any".into();
    }
    let types: Vec<&str> = DataType::ALL
        .iter()
        .filter(|&&t| (0..plan.files).any(|f| map.stream(f, t) == stream))
        .map(|t| t.name())
        .collect();
    if types.is_empty() {
        "-".into()
    } else {
        types.join("+")
    }
}

/// `config.gc_by_stream`: every run's streams that were written or copied from.
pub(super) fn config(plan: &Plan, runs: &[Run]) -> serde_json::Value {
    runs.iter()
        .flat_map(|r| {
            r.gc_by_stream
                .iter()
                .enumerate()
                .filter(|(_, s)| s.host_pages > 0 || s.gc_pages_copied > 0)
                .map(|(i, s)| {
                    json!({
                        "policy": r.policy.name(),
                        "gc_mode": gc_name(r.gc),
                        "stream": i,
                        "types": stream_types(plan, &r.policy, i as u16),
                        "host_pages": s.host_pages,
                        "gc_pages_copied": s.gc_pages_copied,
                    })
                })
                .collect::<Vec<_>>()
        })
        .collect()
}

/// The note: per policy of the plan's first GC mode, each written stream's types, share of
/// the host pages and GC copies per host page of its own.
pub(super) fn note(plan: &Plan, runs: &[Run]) -> Option<String> {
    let gc0 = plan.gc_modes[0];
    let parts: Vec<String> = runs
        .iter()
        .filter(|r| r.gc == gc0 && !r.gc_by_stream.is_empty())
        .map(|r| {
            let host: u64 = r.gc_by_stream.iter().map(|s| s.host_pages).sum();
            let copied: u64 = r.gc_by_stream.iter().map(|s| s.gc_pages_copied).sum();
            let streams: Vec<String> = r
                .gc_by_stream
                .iter()
                .enumerate()
                .filter(|(_, s)| s.host_pages > 0)
                .map(|(i, s)| {
                    format!(
                        "{} {:.1} % of host, {:.3} ({:.0} % of copies)",
                        stream_types(plan, &r.policy, i as u16),
                        s.host_pages as f64 * 100.0 / host.max(1) as f64,
                        s.copies_per_host_page().unwrap_or(0.0),
                        s.gc_pages_copied as f64 * 100.0 / copied.max(1) as f64
                    )
                })
                .collect();
            format!(
                "{}: {:.3} overall; {}",
                r.policy.name(),
                copied as f64 / host.max(1) as f64,
                streams.join("; ")
            )
        })
        .collect();
    (!parts.is_empty()).then(|| {
        format!(
            "GC copies per host page, by device stream (gc {}, update phase; a stream's copies are the valid pages GC moved out of its blocks, per host page it was sent; `config.gc_by_stream` has every GC mode): {}",
            gc_name(gc0),
            parts.join(" | ")
        )
    })
}

/// For the claims' notes: from a report's `config.gc_by_stream`, GC copies per host page of
/// each written stream of P5's four policies under per-stream GC ("none 0.97; per-type:
/// superblock 0.42, header 0.71, ..."); None without the key (results written before it).
pub fn claim_note(config: &serde_json::Value) -> Option<String> {
    let streams = config.get("gc_by_stream")?.as_array()?;
    let parts: Vec<String> = ["none", "per-type", "merge-similar", "merge-different"]
        .iter()
        .filter_map(|&p| {
            let of: Vec<String> = streams
                .iter()
                .filter(|s| s["policy"] == p && s["gc_mode"] == "per-stream")
                .filter_map(|s| {
                    let host = s["host_pages"].as_u64().filter(|&h| h > 0)?;
                    let copied = s["gc_pages_copied"].as_u64()?;
                    Some(format!(
                        "{} {:.2}",
                        s["types"].as_str()?,
                        copied as f64 / host as f64
                    ))
                })
                .collect();
            (!of.is_empty()).then(|| format!("{p}: {}", of.join(", ")))
        })
        .collect();
    (!parts.is_empty()).then(|| {
        format!(
            "GC copies per host page by stream (gc per-stream): {}",
            parts.join("; ")
        )
    })
}
