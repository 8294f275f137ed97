//! The page rendered from a fixed `results.json` (tests/fixtures: the four experiments of a real
//! quick run plus a hand-made `multistream` entry in the contract its experiment will follow):
//! its structure — sections, tables, plot count per experiment, summary lines — not its pixels.

use lab::harness::page::{claim_lines, claims_of};
use lab::harness::results::{Results, Status};
use std::path::Path;

const FIXTURE: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures/results.json");

fn fixture() -> Results {
    Results::load(Path::new(FIXTURE)).expect("the fixture loads")
}

/// The page of `r` as the renderer writes it.
fn html(r: &Results) -> String {
    render::html::page(&lab::harness::page::page(r)).unwrap()
}

fn count(hay: &str, needle: &str) -> usize {
    hay.matches(needle).count()
}

/// The HTML of the section with id `id`.
fn section<'a>(page: &'a str, id: &str) -> &'a str {
    let start = page
        .find(&format!("id=\"{id}\""))
        .unwrap_or_else(|| panic!("no section {id}"));
    let rest = &page[start..];
    let end = rest.find("</section>").unwrap_or(rest.len());
    &rest[..end]
}

#[test]
fn the_page_has_the_summary_a_section_per_experiment_and_the_run() {
    let r = fixture();
    let page = html(&r);
    assert!(page.starts_with("<!DOCTYPE html>"));
    let summary = page.find("id=\"summary\"").unwrap();
    let first = page.find("class=\"experiment\"").unwrap();
    let run = page.find("id=\"run\"").unwrap();
    assert!(
        summary < first && first < run,
        "summary first, run metadata last"
    );
    for name in [
        "ioa-ftl",
        "as-btree",
        "async-scan",
        "ext-buffer",
        "multistream",
    ] {
        let s = section(&page, &format!("exp-{name}"));
        assert!(s.contains("reproduce "), "{name}: the command to re-run it");
        assert!(s.contains("<h3>Notes</h3>"), "{name}: its notes");
    }
    assert_eq!(count(&page, "class=\"experiment\""), r.experiments.len());
    let tables: usize = r.experiments.iter().map(|e| e.tables.len()).sum();
    assert_eq!(count(&page, "<table class=\"data\">"), tables);
    for key in [
        "git commit",
        "CPU",
        "memory",
        "kernel",
        "device directory",
        "command line",
    ] {
        assert!(
            section(&page, "run").contains(&format!("<th>{key}</th>")),
            "{key}"
        );
    }
}

#[test]
fn each_paper_figure_has_its_plot() {
    let page = html(&fixture());
    let plots = |name: &str| {
        count(
            section(&page, &format!("exp-{name}")),
            "<figure class=\"plot\"",
        )
    };
    // P4: throughput, full merges, switch merges, erases (each a panel for P4's workload and
    // one for the uniform one: more schemes and variants than one panel holds), Table 1 bars.
    assert_eq!(plots("ioa-ftl"), 9);
    // P1 (one device): insert and search vs F, write buffer, insert and search vs cache.
    assert_eq!(plots("as-btree"), 5);
    // P2: vs selectivity, vs batch size.
    assert_eq!(plots("async-scan"), 2);
    // P3: elapsed, main and extended hit ratio, Amout sweep, same cost, LRU curve.
    assert_eq!(plots("ext-buffer"), 6);
    // P5: WAF over time, final WAF, lifetime.
    assert_eq!(plots("multistream"), 3);
    assert_eq!(
        count(&page, "<figure class=\"plot\""),
        count(&page, "<svg class=\"chart\"")
    );
    for id in [
        "multistream-waf-over-time",
        "multistream-final-waf",
        "multistream-lifetime",
    ] {
        assert!(page.contains(&format!("id=\"fig-{id}\"")), "{id}");
    }
}

#[test]
fn the_papers_figures_are_labelled_as_the_papers() {
    let page = html(&fixture());
    // Legends: the paper's points and lines always carry "paper:".
    assert!(section(&page, "exp-as-btree").contains("paper: B-tree"));
    assert!(section(&page, "exp-async-scan").contains("paper: at least 5.7"));
    assert!(section(&page, "exp-multistream").contains("paper: per-type 1.508"));
    assert!(section(&page, "exp-ioa-ftl").contains("paper: Table 1"));
}

#[test]
fn the_summary_lists_every_claim_with_its_verdict_and_the_counts() {
    let r = fixture();
    let lines = claim_lines(&r.experiments);
    for (p, at_least) in [("P1", 8), ("P2", 2), ("P3", 7), ("P4", 6), ("P5", 6)] {
        let n = lines.iter().filter(|l| l.1.paper == p).count();
        assert!(n >= at_least, "{p}: {n} claims");
    }
    let ms = lines
        .iter()
        .find(|l| l.1.claim.starts_with("per-type streams vs none"))
        .unwrap();
    assert_eq!(
        ms.1.verdict,
        lab::Verdict::Reproduced,
        "−23 % vs −25 %, ±5 points"
    );
    let page = html(&r);
    let s = section(&page, "summary");
    assert_eq!(count(s, "<tr><td>"), lines.len());
    for h in [
        "Paper value",
        "Ours",
        "Unit",
        "Ratio",
        "Tolerance",
        "Verdict",
        "Note",
    ] {
        assert!(s.contains(&format!("<th>{h}</th>")), "{h}");
    }
    assert!(
        !s.contains("agrees"),
        "the old direction-only column is gone"
    );
    let claims: Vec<lab::Claim> = lines.iter().map(|l| l.1.clone()).collect();
    let counted: usize = lab::claim::counts(&claims).iter().map(|c| c.1).sum();
    assert_eq!(counted, lines.len());
    assert!(s.contains("Verdicts: ") && s.contains(" reproduced</span>"));
}

#[test]
fn the_page_is_self_contained() {
    let page = html(&fixture());
    assert!(!page.contains("<script"), "no script");
    assert!(!page.contains(" src="), "nothing loaded from elsewhere");
    assert!(
        !page.contains("href=\"http"),
        "no links out that a reader needs"
    );
    assert!(
        !page.contains("@import") && !page.contains("url("),
        "no fetched CSS"
    );
    assert!(page.contains("@media print"), "print CSS");
}

#[test]
fn a_failed_experiment_is_shown_with_its_error() {
    let mut r = fixture();
    let e = &mut r.experiments[1];
    e.status = Status::Failed;
    e.error = Some("--device file: O_DIRECT is not supported on tmpfs".into());
    e.report = None;
    e.tables.clear();
    let name = e.name.clone();
    let page = html(&r);
    let s = section(&page, &format!("exp-{name}"));
    assert!(
        s.contains("This experiment failed") && s.contains("O_DIRECT is not supported on tmpfs")
    );
    assert!(!s.contains("<figure"));
    let lines = claims_of(&r.experiments[1]);
    assert_eq!(lines.len(), 1);
    assert_eq!(lines[0].1.verdict, lab::Verdict::NotRun);
    assert!(lines[0]
        .1
        .note
        .contains("O_DIRECT is not supported on tmpfs"));
}

#[test]
fn report_dir_rerenders_index_html_from_results_json_alone() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::copy(FIXTURE, dir.path().join("results.json")).unwrap();
    let page = lab::harness::reproduce_all::render_dir(dir.path())
        .unwrap()
        .page;
    assert_eq!(page, dir.path().join("index.html"));
    let written = std::fs::read_to_string(page).unwrap();
    // `render_dir` judges the saved rows with today's claims code (as a run would); the page is
    // the renderer's page of those results, byte for byte.
    let mut judged = fixture();
    for r in judged
        .experiments
        .iter_mut()
        .filter_map(|e| e.report.as_mut())
    {
        r.claims = lab::papers::claims_of(r);
    }
    assert_eq!(written, html(&judged), "deterministic");
}
