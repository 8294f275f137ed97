//! FDP: device WAF against utilisation, one panel per RU size and handle type with one line per
//! placement (so a placement keeps one look in every panel), and LMCache's two figures at 89 %
//! as the paper's points in the panel of its setup (large, initially isolated RUs).

use super::{placement_label, FdpRow, PAPER_UTILISATION};
use crate::papers::chart::{distinct, typed, xy, Figure};
use crate::Report;
use render::plot::{Chart, Line, Plot};

pub fn figures(r: &Report) -> Vec<Figure> {
    let rows: Vec<FdpRow> = typed(&r.rows);
    let panels = distinct(rows.iter().map(|q| (q.ru.clone(), q.isolation.clone())));
    panels
        .iter()
        .enumerate()
        .map(|(i, (ru, iso))| panel(&rows, ru, iso, i == 0))
        .collect()
}

/// The panel of `ru` RUs with `iso` handles (the first keeps the figure's id).
fn panel(rows: &[FdpRow], ru: &str, iso: &str, first: bool) -> Figure {
    let here: Vec<&FdpRow> = rows
        .iter()
        .filter(|q| q.ru == ru && q.isolation == iso)
        .collect();
    let mut lines: Vec<Line> = distinct(here.iter().map(|q| q.placement.clone()))
        .iter()
        .map(|p| {
            let label = placement_label(p);
            let points = xy(here
                .iter()
                .filter(|q| &q.placement == p)
                .map(|q| (q.utilisation * 100.0, q.waf)));
            Line::ours(format!("ours: {label}"), label, points)
        })
        .collect();
    if ru == "large" && iso == "initial" {
        let p6 = crate::papers::p6();
        for (key, label, look) in [
            ("lmcache_none_waf", "paper (LMCache): no placement", "none"),
            (
                "lmcache_placed_waf",
                "paper (LMCache): placement, 16 GiB RUs, initially isolated",
                "hot-cold",
            ),
        ] {
            if let Some(w) = p6.stated(key) {
                let look = placement_label(look);
                lines.push(Line::paper(
                    label,
                    look,
                    vec![(PAPER_UTILISATION * 100.0, w)],
                ));
            }
        }
    }
    let base = "fdp-waf-by-utilisation";
    Figure {
        id: match first {
            true => base.into(),
            false => format!("{base}-{}", render::figures::slug(&format!("{ru} {iso}"))),
        },
        title: format!("FDP: device WAF by utilisation and placement ({ru} RUs, {iso} isolation)"),
        caption: "Steady-state device WAF of a flash cache (BigHash buckets + BlockCache regions) on a simulated FDP SSD; small RUs are one erase block, large ones 1/64 of the device; the paper's points (large, initially isolated RUs): LMCache on a 960 GB FDP drive at 89 %.".into(),
        plot: Plot::Lines(Chart {
            x_label: "utilisation (%)".into(),
            y_label: "WAF".into(),
            lines,
            ..Chart::default()
        }),
    }
}
