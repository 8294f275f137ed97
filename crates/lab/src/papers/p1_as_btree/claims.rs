//! P1's headline figures (Tables 2–7 and the text) judged against our typed rows, one set per
//! device the run measured. Times are compared as the change against the in-place B-tree
//! at the largest fan-out F measured (the paper's F = 256), in percent.
//!
//! Tolerances: ±6 points on AS (largest buffer) vs the B-tree — the paper's own change varies by
//! about that much across F (AS buffer 32 vs B-tree: −17 % at F=64, −22 % at F=128 and 256);
//! AS with one buffered node at most −5 % (sequential placement alone must help); the AS gain
//! growing with the buffer (largest buffer's change minus buffer 1's at most 0); ±30 points on
//! BFTL's (its own spread across F is +69 … +84 %, and its cost rests on its list lengths, see
//! below); ±5 points where the paper says "≈" (no direction to keep); ±0.3 sectors on BFTL's
//! sectors per node (they depend on how full the reservation buffer runs, which the paper
//! does not state).

use super::BTreeRow;
use crate::claim::{Claim, Rule, Spec, Tolerance};
use crate::papers::p1;
use crate::Report;
use serde_json::json;

const POINTS: Rule = Rule::new(Tolerance::Absolute(5.0), Some(0.0));
const AS_POINTS: Rule = Rule::new(Tolerance::Absolute(6.0), Some(0.0));
const WHY_AS_POINTS: &str = "±6 points: the paper's own change varies by about 5 points across F (AS buffer 32 vs B-tree: −17 % at F=64, −22 % at F=128 and 256)";
const ABOUT: Rule = Rule::new(Tolerance::Absolute(5.0), None);
const WHY_POINTS: &str = "±5 points: the paper's own change varies by about 5 points across F (AS buffer 32 vs B-tree: −17 % at F=64, −22 % at F=128 and 256)";
const WHY_ABOUT: &str = "±5 points around the paper's ≈ (no direction to keep)";

/// Every P1 claim for `report` (read back as [`BTreeRow`]s).
pub fn claims(report: &Report) -> Vec<Claim> {
    let rows: Vec<BTreeRow> = report.rows_as().unwrap_or_default();
    let rows: Vec<BTreeRow> = rows
        .into_iter()
        .filter(|r| !r.reads_fifo_comparison && !r.bftl_compaction_comparison)
        .collect();
    crate::claim::per_device(&rows, |r| r.device.to_string(), of_device)
}

/// Change of `a` against `b` in percent.
fn change_pct(a: f64, b: f64) -> Option<f64> {
    (b > 0.0).then(|| (a / b - 1.0) * 100.0)
}

/// The paper's `key` for `tree` at F = 256 (`cache`: Tables 5–6).
fn paper(tree: &str, key: &str, cache: Option<u64>) -> Option<f64> {
    let mut want = vec![("tree", json!(tree))];
    match cache {
        Some(c) => want.push(("cache_nodes", json!(c))),
        None => want.push(("keys_per_node", json!(256))),
    }
    p1().figure(&want, key)
}

fn paper_change(a: &str, b: &str, key: &str, cache: Option<u64>) -> Option<f64> {
    change_pct(paper(a, key, cache)?, paper(b, key, cache)?)
}

struct Rows<'a> {
    rows: &'a [&'a BTreeRow],
    f: usize,
}

impl Rows<'_> {
    fn one(&self, tree: &str, ms: Option<usize>, cache: usize) -> Option<&BTreeRow> {
        self.rows.iter().copied().find(|r| {
            r.tree == tree
                && r.keys_per_node == self.f
                && r.cache_nodes == cache
                && ms.is_none_or(|m| r.write_buffer_nodes == m)
        })
    }
    fn change(
        &self,
        a: Option<&BTreeRow>,
        b: Option<&BTreeRow>,
        key: fn(&BTreeRow) -> f64,
    ) -> Option<f64> {
        change_pct(key(a?), key(b?))
    }
    fn largest_buffer(&self) -> Option<usize> {
        self.rows
            .iter()
            .filter(|r| r.tree == "as_btree" && r.cache_nodes == 0)
            .map(|r| r.write_buffer_nodes)
            .max()
    }
    /// The cache sizes measured (> 0), ascending.
    fn caches(&self) -> Vec<usize> {
        let mut c: Vec<usize> = self
            .rows
            .iter()
            .map(|r| r.cache_nodes)
            .filter(|c| *c > 0)
            .collect();
        c.sort_unstable();
        c.dedup();
        c
    }
}

fn spec(claim: String, unit: &'static str, rule: Rule, why: &'static str) -> Spec<'static> {
    Spec {
        paper: "P1",
        claim,
        unit,
        rule,
        why_tolerance: why,
    }
}

fn of_device(rows: &[&BTreeRow], dev: &str) -> Vec<Claim> {
    let f = rows.iter().map(|r| r.keys_per_node).max().unwrap_or(256);
    let r = Rows { rows, f };
    let ms = r.largest_buffer();
    let base = r.one("in_place", None, 0);
    let insert = |x: &BTreeRow| x.insert_seconds;
    let mut out = table2(&r, dev, ms, base);
    let as_ms = ms.and_then(|m| r.one("as_btree", Some(m), 0));
    out.push(
        spec(
            format!("Table 3: AS search time ≈ B-tree, F={f}{dev}"),
            "%",
            ABOUT,
            WHY_ABOUT,
        )
        .judge(
            paper_change("AS", "B-tree", "search_seconds", Some(0)),
            r.change(as_ms, base, |x| x.search_seconds),
            "our AS search differs from the in-place tree's",
            "an as_btree and an in_place row without cache",
        ),
    );
    let t4 = |key: &str| {
        p1().figure(
            &[
                ("tree", json!("AS")),
                ("table", json!("P1 Table 4 (F=256, buffer 32)")),
            ],
            key,
        )
    };
    let t4b = |key: &str| {
        p1().figure(
            &[
                ("tree", json!("B-tree")),
                ("table", json!("P1 Table 4 (F=256, buffer 32)")),
            ],
            key,
        )
    };
    for (what, key, get, rule, why) in [
        ("reads", "insert_read_seconds", (|x: &BTreeRow| x.insert_read_seconds) as fn(&BTreeRow) -> f64, POINTS, WHY_POINTS),
        ("writes", "insert_write_seconds", |x: &BTreeRow| x.insert_write_seconds, Rule::new(Tolerance::Absolute(15.0), Some(0.0)), "±15 points: the paper's write times are 5 s and 10 s, rounded to the second (±10 % each)"),
    ] {
        out.push(spec(format!("Table 4: AS vs B-tree insert {what} time, F={f}, buffer {}{dev}", ms.unwrap_or(32)), "%", rule, why).judge(
            t4(key).zip(t4b(key)).and_then(|(a, b)| change_pct(a, b)),
            r.change(as_ms, base, get),
            &format!("our AS {what} time changes by a different share than the paper's"),
            "as_btree and in_place rows without cache",
        ));
    }
    out.push(
        spec(format!("BFTL reads sectors per node{dev}"), "sectors", Rule::new(Tolerance::Absolute(0.3), Some(1.0)), "±0.3 sectors: BFTL's sectors per node depend on how full its reservation buffer runs, which the paper does not state")
            .judge(
                p1().stated("bftl_sectors_per_node"),
                r.one("bftl", None, 0).map(|x| x.bftl_sectors_per_node),
                "our BFTL node lists are longer or shorter than the paper's (compaction at C = 3)",
                "a bftl row without cache",
            ),
    );
    out.extend(tables5_to_7(&r, dev, ms, insert));
    out
}

fn table2(r: &Rows<'_>, dev: &str, ms: Option<usize>, base: Option<&BTreeRow>) -> Vec<Claim> {
    let f = r.f;
    let insert = |x: &BTreeRow| x.insert_seconds;
    let m = ms.unwrap_or(32);
    vec![
        spec(format!("Table 2: AS (buffer {m}) vs B-tree insert time, F={f}{dev}"), "%", AS_POINTS, WHY_AS_POINTS).judge(
            paper_change(&format!("AS buffer {m}"), "B-tree", "insert_seconds", None),
            r.change(ms.and_then(|m| r.one("as_btree", Some(m), 0)), base, insert),
            "our B-tree's node reads while inserting wait behind its destaged writes and their GC on the same die longer than P1's did (the notes give each tree's time per node read inserting against searching; P1: B-tree +21 %, AS 0 %), while its writes are acknowledged by the write cache sooner (P1: ~100 us per node)",
            "an as_btree row with the largest buffer and an in_place row, no cache",
        ),
        spec(format!("Table 2: AS (buffer 1) vs B-tree insert time, F={f}{dev}"), "%", Rule::new(Tolerance::AtMost(-5.0), Some(0.0)), "at most −5 %: sequential placement alone must save time (the paper: −13 %)").judge(
            paper_change("AS buffer 1", "B-tree", "insert_seconds", None),
            r.change(r.one("as_btree", Some(1), 0), base, insert),
            "with one buffered node our AS saves less than 5 %",
            "an as_btree row with write_buffer_nodes = 1 (quick and paper scales run it)",
        ),
        spec(format!("Table 2: AS gain grows with the buffer (buffer {m} minus buffer 1, change vs B-tree), F={f}{dev}"), "points", Rule::new(Tolerance::AtMost(0.0), Some(0.0)), "a threshold: the largest buffer's change against the B-tree at most buffer 1's").judge(
            paper_change(&format!("AS buffer {m}"), "B-tree", "insert_seconds", None)
                .zip(paper_change("AS buffer 1", "B-tree", "insert_seconds", None))
                .map(|(a, b)| a - b),
            r.change(ms.and_then(|m| r.one("as_btree", Some(m), 0)), base, insert)
                .zip(r.change(r.one("as_btree", Some(1), 0), base, insert))
                .map(|(a, b)| a - b),
            "our AS gains no more with the large buffer than with one node",
            "as_btree rows with buffers 1 and the largest, and an in_place row, no cache",
        ),
        spec(format!("Table 2: BFTL vs B-tree insert time, F={f}{dev}"), "%", Rule::new(Tolerance::Absolute(30.0), Some(0.0)), "±30 points: the paper's own BFTL change spreads over 15 points across F (+69 … +84 %), and BFTL's cost rests on its node lists' lengths").judge(
            paper_change("BFTL", "B-tree", "insert_seconds", None),
            r.change(r.one("bftl", None, 0), base, insert),
            "our BFTL's insert-time reads (its lookups, the commit's descent once per node, the compactions) and our B-tree's insert differ from the paper's; the BFTL notes give each (2026-11-29, paper scale: 6.56 sector reads per insert against the 7.26 at most that P1's 143 s holds at its search's 197 us per sector; B-tree 86 s against 78). BFTL's own 49-byte unit (engine::btree::UnitLayout::Wide) makes quick scale +88 % but its file outgrows P1's Table 7 twice over at paper scale, so P1's unit is not that wide",
            "a bftl and an in_place row without cache",
        ),
    ]
}

fn tables5_to_7(
    r: &Rows<'_>,
    dev: &str,
    ms: Option<usize>,
    insert: fn(&BTreeRow) -> f64,
) -> Vec<Claim> {
    let caches = r.caches();
    let small = caches.first().copied();
    // The paper: AS with 16 cached nodes beats B-tree with 48; ours: the smallest cache
    // measured against the first cache ≥ 48 (a larger cache only helps the B-tree).
    let big = caches.iter().copied().find(|c| *c >= 48);
    let as_at = |c: usize| {
        r.rows
            .iter()
            .copied()
            .find(|x| x.tree == "as_btree" && x.keys_per_node == r.f && x.cache_nodes == c)
    };
    let mut out = vec![spec(format!("Table 5: AS with cache {} nodes beats B-tree with cache {} (insert time){dev}", small.unwrap_or(16), big.unwrap_or(48)), "%", Rule::new(Tolerance::AtMost(0.0), Some(0.0)), "a threshold: AS with the small cache must take less time than the B-tree with the large one").judge(
        paper("AS", "insert_seconds", Some(16)).zip(paper("B-tree", "insert_seconds", Some(48))).and_then(|(a, b)| change_pct(a, b)),
        small.zip(big).and_then(|(s, b)| r.change(as_at(s), r.one("in_place", None, b), insert)),
        "our AS with the small cache is slower than the B-tree with the large one",
        "cache sizes 16 and ≥ 48 nodes (both scales run 16 and 48)",
    )];
    out.push(
        spec(
            format!(
                "Table 6: AS search time ≈ B-tree with cache {} nodes{dev}",
                small.unwrap_or(16)
            ),
            "%",
            ABOUT,
            WHY_ABOUT,
        )
        .judge(
            paper("AS", "search_seconds", Some(16))
                .zip(paper("B-tree", "search_seconds", Some(16)))
                .and_then(|(a, b)| change_pct(a, b)),
            small
                .and_then(|s| r.change(as_at(s), r.one("in_place", None, s), |x| x.search_seconds)),
            "our AS search with a cache differs from the in-place tree's",
            "cache rows of as_btree and in_place",
        ),
    );
    let _ = ms;
    let order = |sizes: Vec<(&str, f64)>| -> Option<String> {
        let mut v: Vec<(&str, f64)> = sizes.into_iter().filter(|p| p.1.is_finite()).collect();
        (v.len() == 3).then(|| {
            v.sort_by(|a, b| a.1.total_cmp(&b.1));
            v.iter().map(|p| p.0).collect::<Vec<_>>().join(" < ")
        })
    };
    let t7 = |tree: &str| {
        p1().figure(
            &[
                ("tree", json!(tree)),
                ("table", json!("P1 Table 7: file size MB (F=256)")),
            ],
            "file_mb",
        )
    };
    let paper_order = t7("B-tree")
        .zip(t7("AS"))
        .zip(t7("BFTL"))
        .and_then(|((b, a), f)| order(vec![("B-tree", b), ("AS", a), ("BFTL", f)]));
    let size = |tree: &str| {
        r.rows
            .iter()
            .find(|x| x.tree == tree && x.keys_per_node == r.f && x.cache_nodes == 0)
            .map_or(f64::NAN, |x| x.file_bytes as f64)
    };
    let ours = order(vec![
        ("B-tree", size("in_place")),
        ("AS", size("as_btree")),
        ("BFTL", size("bftl")),
    ]);
    out.push(spec(format!("Table 7: file size order, F={}{dev}", r.f), "", Rule::ORDER, "the order of the three sizes (their magnitudes scale with the number of keys)").judge(
        paper_order.unwrap_or_default().as_str(),
        ours,
        "our AS file is its window of log segments (its size set by the segment size, not by the keys; quick scale keeps P1's 128 MB per 500,000 keys), while our BFTL file grows with the keys inserted (1.5 KB per key at quick scale, 2.7 at paper scale; P1: 3.2 KB)",
        "in_place, as_btree and bftl rows without cache",
    ));
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::claim::Verdict;
    use crate::DeviceKind;

    fn row(tree: &str, ms: usize, cache: usize, insert: f64, search: f64) -> BTreeRow {
        BTreeRow {
            device: DeviceKind::Sim,
            tree: tree.into(),
            keys_per_node: 256,
            write_buffer_nodes: ms,
            cache_nodes: cache,
            insert_seconds: insert,
            search_seconds: search,
            insert_read_seconds: insert * 0.9,
            insert_write_seconds: insert * 0.1,
            file_bytes: 1 << 20,
            inserts_per_second: 0.0,
            searches_per_second: 0.0,
            insert_node_reads: 0,
            insert_node_writes: 0,
            write_buffer_hit_ratio: 0.0,
            bftl_sectors_per_node: if tree == "bftl" { 1.5 } else { 0.0 },
            cache_hit_ratio: 0.0,
            read_scheduling: "priority".into(),
            reads_fifo_comparison: false,
            bftl_compaction: if tree == "bftl" {
                "in_commit".into()
            } else {
                String::new()
            },
            bftl_compaction_comparison: false,
            bftl_commit_descent: if tree == "bftl" {
                "none".into()
            } else {
                String::new()
            },
            insert_lookup_reads: 0,
            insert_commit_reads: 0,
            insert_compaction_reads: 0,
            insert_waf: 1.0,
            insert_gc_pages_copied: 0,
            insert_erases: 0,
            search_node_reads: 0,
        }
    }

    /// The read-scheduling comparison rows (the same trees with FIFO reads) are not judged.
    #[test]
    fn fifo_comparison_rows_do_not_change_the_claims() {
        let base = vec![
            row("in_place", 0, 0, 78.0, 56.0),
            row("as_btree", 32, 0, 61.0, 56.0),
        ];
        let mut with = base.clone();
        for (tree, ms) in [("in_place", 0), ("as_btree", 32)] {
            let mut r = row(tree, ms, 0, if ms == 0 { 1.0 } else { 500.0 }, 1.0);
            (r.read_scheduling, r.reads_fifo_comparison) = ("fifo".into(), true);
            with.insert(0, r);
        }
        let judged = |rows: &[BTreeRow]| serde_json::to_string(&claims(&report(rows))).unwrap();
        assert_eq!(judged(&base), judged(&with));
    }

    /// BFTL's compaction comparison row (the mode P1 did not run) is not judged either.
    #[test]
    fn bftl_compaction_comparison_rows_do_not_change_the_claims() {
        let base = vec![
            row("in_place", 0, 0, 78.0, 56.0),
            row("bftl", 0, 0, 143.0, 88.0),
        ];
        let mut with = base.clone();
        let mut r = row("bftl", 0, 0, 900.0, 900.0);
        r.bftl_sectors_per_node = 2.35;
        (r.bftl_compaction, r.bftl_compaction_comparison) = ("after_commit".into(), true);
        with.insert(0, r);
        let judged = |rows: &[BTreeRow]| serde_json::to_string(&claims(&report(rows))).unwrap();
        assert_eq!(judged(&base), judged(&with));
    }

    fn report(rows: &[BTreeRow]) -> Report {
        let mut r = Report::new("as-btree", &crate::ReproduceOptions::default(), json!({}));
        r.set_rows(rows);
        r
    }

    #[test]
    fn at_least_eight_claims_and_an_empty_run_is_not_run() {
        let c = claims(&report(&[]));
        assert!(c.len() >= 8, "{}", c.len());
        assert!(c.iter().all(|c| c.verdict == Verdict::NotRun), "{c:#?}");
    }

    #[test]
    fn rows_that_miss_are_never_reproduced() {
        // AS slower than the B-tree, BFTL faster: every timing claim misses.
        let rows = [
            row("in_place", 0, 0, 10.0, 10.0),
            row("as_btree", 32, 0, 13.0, 14.0),
            row("as_btree", 1, 0, 12.0, 14.0),
            row("bftl", 0, 0, 9.0, 9.0),
            row("in_place", 0, 48, 5.0, 5.0),
            row("as_btree", 32, 16, 8.0, 8.0),
            row("in_place", 0, 16, 6.0, 6.0),
        ];
        let c = claims(&report(&rows));
        let time_claims: Vec<&Claim> = c
            .iter()
            .filter(|c| c.claim.starts_with("Table 2") || c.claim.starts_with("Table 5"))
            .collect();
        assert_eq!(time_claims.len(), 5);
        for t in time_claims {
            assert_eq!(t.verdict, Verdict::NotReproduced, "{t:#?}");
        }
    }

    #[test]
    fn the_papers_own_figures_are_reproduced() {
        // Rows that copy Table 2's F = 256 times: the insert claims are reproduced.
        let rows = [
            row("in_place", 0, 0, 78.0, 56.0),
            row("as_btree", 32, 0, 61.0, 56.0),
            row("as_btree", 1, 0, 68.0, 56.0),
            row("bftl", 0, 0, 143.0, 88.0),
        ];
        let c = claims(&report(&rows));
        for t in c.iter().filter(|c| c.claim.starts_with("Table 2")) {
            assert_eq!(t.verdict, Verdict::Reproduced, "{t:#?}");
        }
    }
}
