//! Every figure of every experiment, built from the fixed `results.json` (a real quick run's
//! rows; multistream's WAF series also as the quick run labels them, with its three GC
//! modes): a series a reader sees under one name has one colour and marker everywhere, no two
//! series of one chart look alike, no chart holds more than six of our series, and the
//! paper's line of a scheme looks like ours of it (hollow and dashed apart).

use lab::harness::results::Results;
use lab::render::plot::{Line, Plot, Source};
use lab::render::{style_of, Figure, Style};
use lab::{Report, Series};
use std::collections::BTreeMap;
use std::path::Path;

const FIXTURE: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures/results.json");

/// Multistream's series as a quick run writes them: each policy in three GC modes.
fn with_gc_modes(mut r: Report) -> Report {
    let waf: Vec<Series> = r
        .series
        .iter()
        .filter(|s| s.name == "waf_over_time")
        .cloned()
        .collect();
    for mode in ["gc separate", "gc victim"] {
        r.series.extend(waf.iter().map(|s| Series {
            label: format!("{} ({mode})", s.label),
            ..s.clone()
        }));
    }
    r
}

fn figures() -> Vec<(String, Figure)> {
    let results = Results::load(Path::new(FIXTURE)).expect("the fixture loads");
    let mut out = Vec::new();
    for e in results.experiments {
        let Some(r) = e.report else { continue };
        let r = if r.experiment == "multistream" {
            with_gc_modes(r)
        } else {
            r
        };
        for f in lab::papers::figures_of(&r) {
            out.push((r.experiment.clone(), f));
        }
    }
    assert!(out.len() >= 20, "{} figures", out.len());
    out
}

fn lines(f: &Figure) -> &[Line] {
    match &f.plot {
        Plot::Lines(c) => &c.lines,
        Plot::Bars(_) => &[],
    }
}

/// What a reader reads as the series' name: the label without `ours: ` / `paper: `.
fn name(l: &Line) -> String {
    let s = l
        .label
        .trim_start_matches("ours: ")
        .trim_start_matches("paper: ");
    s.to_lowercase()
}

#[test]
fn one_name_has_one_look_in_every_figure_of_every_experiment() {
    let mut seen: BTreeMap<String, (Style, String)> = BTreeMap::new();
    for (exp, f) in figures() {
        for l in lines(&f).iter().filter(|l| l.source == Source::Ours) {
            let look = style_of(&l.color_key);
            let here = format!("{exp}/{}", f.id);
            if let Some((before, there)) = seen.insert(name(l), (look, here.clone())) {
                assert_eq!(
                    before,
                    look,
                    "{:?} looks different in {there} and {here}",
                    name(l)
                );
            }
        }
    }
    assert!(
        seen.contains_key("lru") && seen.contains_key("sim, batched"),
        "{:?}",
        seen.keys()
    );
}

#[test]
fn no_two_series_of_one_chart_look_alike_and_no_chart_holds_more_than_six() {
    for (exp, f) in figures() {
        for source in [Source::Ours, Source::Paper] {
            let of: Vec<&Line> = lines(&f).iter().filter(|l| l.source == source).collect();
            if source == Source::Ours {
                assert!(
                    of.len() <= 6,
                    "{exp}/{}: {} series in one panel",
                    f.id,
                    of.len()
                );
            }
            for (i, a) in of.iter().enumerate() {
                for b in &of[i + 1..] {
                    assert!(
                        style_of(&a.color_key) != style_of(&b.color_key),
                        "{exp}/{}: {:?} and {:?} look alike",
                        f.id,
                        a.label,
                        b.label
                    );
                }
            }
        }
    }
}

#[test]
fn the_papers_line_of_a_scheme_looks_like_ours_of_it() {
    let mut checked = 0;
    for (exp, f) in figures() {
        for p in lines(&f).iter().filter(|l| l.source == Source::Paper) {
            let ours = lines(&f)
                .iter()
                .find(|l| l.source == Source::Ours && name(l).ends_with(&name(p)));
            if let Some(o) = ours {
                assert_eq!(
                    style_of(&o.color_key),
                    style_of(&p.color_key),
                    "{exp}/{}: {:?}",
                    f.id,
                    p.label
                );
                checked += 1;
            }
        }
    }
    assert!(checked > 0, "no paper line names one of ours");
}
