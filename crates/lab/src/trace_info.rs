//! `flashlab trace-info`: a page-popularity summary of any page-reference trace.

use crate::report::{fmt_f, row, Row, Table};
use anyhow::Result;
use rustc_hash::FxHashMap;
use serde_json::json;
use workload::cache_trace::PageRef;

/// The summary as a flat row (JSON) and tables.
#[derive(Clone, Debug)]
pub struct TraceInfo {
    pub row: Row,
    pub tables: Vec<Table>,
}

/// Shares of the hottest pages reported.
const HOT_PCTS: [f64; 6] = [1.0, 5.0, 10.0, 20.0, 50.0, 100.0];

/// Count references per page (memory: one counter per distinct page) and summarize.
pub fn summarize(refs: impl Iterator<Item = Result<PageRef>>) -> Result<TraceInfo> {
    let mut per_page: FxHashMap<u64, (u64, u64)> = FxHashMap::default();
    let (mut references, mut writes) = (0u64, 0u64);
    for r in refs {
        let r = r?;
        references += 1;
        writes += r.write as u64;
        let e = per_page.entry(r.page).or_default();
        e.0 += 1;
        e.1 += r.write as u64;
    }
    let distinct = per_page.len();
    let (min_page, max_page) = per_page
        .keys()
        .fold((u64::MAX, 0), |(lo, hi), &p| (lo.min(p), hi.max(p)));
    let mut counts: Vec<u64> = per_page.values().map(|e| e.0).collect();
    counts.sort_unstable_by(|a, b| b.cmp(a));
    let once = counts.iter().filter(|&&c| c == 1).count();
    let written = per_page.values().filter(|e| e.1 > 0).count();
    let mut row = row([
        ("references", json!(references)),
        ("writes", json!(writes)),
        ("write_ratio", json!(share(writes, references))),
        ("distinct_pages", json!(distinct)),
        ("written_pages", json!(written)),
        ("pages_referenced_once", json!(once)),
        ("min_page", json!(if distinct == 0 { 0 } else { min_page })),
        ("max_page", json!(max_page)),
        (
            "max_refs_per_page",
            json!(counts.first().copied().unwrap_or(0)),
        ),
        (
            "mean_refs_per_page",
            json!(share(references, distinct as u64)),
        ),
    ]);
    let mut t = Table::new(
        "page popularity: share of references to the hottest pages",
        &["hottest_pct", "pages", "ref_share"],
    );
    let mut prefix = 0u64;
    let mut taken = 0usize;
    for p in HOT_PCTS {
        let n = ((distinct as f64 * p / 100.0).ceil() as usize).min(distinct);
        prefix += counts[taken..n].iter().sum::<u64>();
        taken = n;
        let s = share(prefix, references);
        row.insert(format!("ref_share_hottest_{p}pct"), json!(s));
        t.push(vec![fmt_f(p, 0), n.to_string(), fmt_f(s, 4)]);
    }
    let mut summary = Table::new("trace summary", &["key", "value"]);
    for (k, v) in &row {
        if !k.starts_with("ref_share") {
            summary.push(vec![k.clone(), v.to_string()]);
        }
    }
    Ok(TraceInfo {
        row,
        tables: vec![summary, t],
    })
}

fn share(a: u64, b: u64) -> f64 {
    if b == 0 {
        0.0
    } else {
        a as f64 / b as f64
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shares_of_a_hand_made_trace() {
        // Page 1: 6 refs, pages 2..=5: 1 ref each (one written).
        let refs = [1, 1, 2, 1, 3, 1, 4, 1, 5, 1].into_iter().map(|p| {
            Ok(PageRef {
                page: p,
                write: p == 3,
            })
        });
        let info = summarize(refs).unwrap();
        let r = &info.row;
        assert_eq!(r["distinct_pages"], json!(5));
        assert_eq!(r["pages_referenced_once"], json!(4));
        assert_eq!(r["written_pages"], json!(1));
        // The hottest 1 % of 5 pages rounds up to 1 page: 6 of 10 references.
        assert_eq!(r["ref_share_hottest_1pct"], json!(0.6));
        assert_eq!(r["ref_share_hottest_100pct"], json!(1.0));
    }
}
