//! FDP: device WAF against utilisation, one line per placement, RU size and handle type, with
//! LMCache's two figures at 89 % as the paper's points.

use super::{placement_label, FdpRow, PAPER_UTILISATION};
use crate::papers::chart::{distinct, typed, xy, Figure};
use crate::Report;
use render::plot::{Chart, Line, Plot};

pub fn figures(r: &Report) -> Vec<Figure> {
    let rows: Vec<FdpRow> = typed(&r.rows);
    if rows.is_empty() {
        return Vec::new();
    }
    let keys = distinct(
        rows.iter()
            .map(|q| (q.placement.clone(), q.ru.clone(), q.isolation.clone())),
    );
    let mut lines: Vec<Line> = keys
        .iter()
        .map(|(p, ru, iso)| {
            let label = format!("{}, {ru} RUs, {iso}", placement_label(p));
            let points = xy(rows
                .iter()
                .filter(|q| (&q.placement, &q.ru, &q.isolation) == (p, ru, iso))
                .map(|q| (q.utilisation * 100.0, q.waf)));
            Line::ours(format!("ours: {label}"), &label, points)
        })
        .collect();
    let p6 = crate::papers::p6();
    for (key, label) in [
        ("lmcache_none_waf", "paper (LMCache): no placement"),
        (
            "lmcache_placed_waf",
            "paper (LMCache): placement, 16 GiB RUs, initially isolated",
        ),
    ] {
        if let Some(w) = p6.stated(key) {
            lines.push(Line::paper(
                label,
                label,
                vec![(PAPER_UTILISATION * 100.0, w)],
            ));
        }
    }
    vec![Figure {
        id: "fdp-waf-by-utilisation".into(),
        title: "FDP: device WAF by utilisation, placement, RU size and handle type".into(),
        caption: "Steady-state device WAF of a flash cache (BigHash buckets + BlockCache regions) on a simulated FDP SSD; small RUs are one erase block, large ones 1/64 of the device; the paper's points: LMCache on a 960 GB FDP drive at 89 %.".into(),
        plot: Plot::Lines(Chart {
            x_label: "utilisation (%)".into(),
            y_label: "WAF".into(),
            lines,
            ..Chart::default()
        }),
    }]
}
