//! P3 (flash SSD as an extended buffer), Figures 2–6: elapsed time, main and extended hit
//! ratio vs flash size per policy; the Amout:A1out sweep; the same-cost comparisons (DRAM,
//! RAID-0); the one-pass LRU curve. P3 prints no table of results, only findings: they are
//! drawn as the paper's reference lines.

use crate::papers::chart::{distinct, is, num, points, text, Figure};
use crate::{Report, Row};
use render::plot::{Chart, Line, Marker, Plot, Source};

fn finding<'a>(r: &'a Report, name: &str) -> Option<&'a Row> {
    r.paper.iter().find(|p| is(p, "finding", name))
}

fn paper_marker(label: String, value: f64) -> Marker {
    Marker {
        label,
        value,
        source: Source::Paper,
        color_key: None,
    }
}

pub fn figures(r: &Report) -> Vec<Figure> {
    let fig =
        |name: &str| -> Vec<&Row> { r.rows.iter().filter(|q| is(q, "figure", name)).collect() };
    let sweep = fig("fig3-5");
    let mut out = Vec::new();
    let per_policy = |y: &str, scale: f64| -> Vec<Line> {
        distinct(&sweep, "policy")
            .into_iter()
            .filter_map(|p| p.as_str().map(str::to_string))
            .map(|policy| {
                let p = points(
                    sweep.iter().copied().filter(|q| is(q, "policy", &policy)),
                    "flash_pct",
                    y,
                );
                let p = p.into_iter().map(|(x, v)| (x, v * scale)).collect();
                Line::ours(format!("ours: {policy}"), &policy, p)
            })
            .collect()
    };

    // Fig. 3: elapsed time; the paper's "> 200 % faster than disks alone" is a ceiling of
    // a third of our disks-alone (lru, no flash) time.
    let disks_alone = sweep
        .iter()
        .find(|q| is(q, "policy", "lru") && num(q, "flash_pct") == Some(0.0))
        .and_then(|q| num(q, "elapsed_ms"));
    let mut markers = Vec::new();
    if let (Some(base), Some(pct)) = (
        disks_alone,
        finding(r, "speedup_vs_disks_alone").and_then(|p| num(p, "speedup_pct_min")),
    ) {
        markers.push(paper_marker(
            format!("paper: > {pct:.0} % faster than disks alone (below)"),
            base / 1000.0 / (1.0 + pct / 100.0),
        ));
    }
    out.push(Figure {
        id: "ext-buffer-elapsed".into(),
        title: "P3 Figure 3: elapsed time vs flash size, per policy".into(),
        caption: "P3's cost model (page moves × device time) over the TPC-C-like trace; main buffer 4 % of the database. lru and 2q: no flash (disks alone). Dashed: the paper's claim applied to our disks-alone time.".into(),
        plot: Plot::Lines(Chart {
            x_label: "flash (% of the database)".into(),
            y_label: "elapsed (s, cost model)".into(),
            lines: per_policy("elapsed_ms", 1e-3),
            y_markers: markers,
            ..Chart::default()
        }),
    });
    out.push(Figure {
        id: "ext-buffer-main-hit-ratio".into(),
        title: "P3 Figure 4: main-buffer hit ratio vs flash size, per policy".into(),
        caption: "Share of references found in the DRAM main buffer.".into(),
        plot: Plot::Lines(Chart {
            x_label: "flash (% of the database)".into(),
            y_label: "main hit ratio".into(),
            lines: per_policy("hit_ratio", 1.0),
            ..Chart::default()
        }),
    });
    let mut ext_markers = Vec::new();
    if let Some(p) = finding(r, "ext_hit_ratio") {
        for (k, what) in [
            ("ext_hit_ratio_min", "above"),
            ("ext_hit_ratio_max", "up to"),
        ] {
            if let Some(v) = num(p, k) {
                ext_markers.push(paper_marker(format!("paper: {what} {v:.2}"), v));
            }
        }
    }
    let ext_lines: Vec<Line> = per_policy("ext_hit_ratio", 1.0)
        .into_iter()
        .filter(|l| l.points.iter().any(|p| p.1 > 0.0))
        .collect();
    out.push(Figure {
        id: "ext-buffer-ext-hit-ratio".into(),
        title: "P3 Figure 5: extended-buffer hit ratio vs flash size, per policy".into(),
        caption: "Share of main-buffer misses found on flash; dashed: the paper's range.".into(),
        plot: Plot::Lines(Chart {
            x_label: "flash (% of the database)".into(),
            y_label: "extended hit ratio".into(),
            lines: ext_lines,
            y_markers: ext_markers,
            ..Chart::default()
        }),
    });
    out.push(amout_sweep(r, &fig("fig2")));
    out.push(same_cost(r, &sweep, &fig("fig6-dram"), &fig("fig6-raid0")));
    out.push(lru_curve(&sweep, &fig("fig6-dram")));
    out
}

fn amout_sweep(r: &Report, rows: &[&Row]) -> Figure {
    let flash = rows.first().and_then(|q| num(q, "flash_pct"));
    let p = points(rows.iter().copied(), "amout_ratio", "elapsed_ms");
    let p = p.into_iter().map(|(x, v)| (x * 10.0, v / 1000.0)).collect();
    let mut x_markers = Vec::new();
    if let Some(share) = finding(r, "best_amout_ratio").and_then(|p| num(p, "amout_share")) {
        x_markers.push(paper_marker(
            format!(
                "paper: best at {:.0}:{:.0}",
                share * 10.0,
                10.0 - share * 10.0
            ),
            share * 10.0,
        ));
    }
    Figure {
        id: "ext-buffer-amout-sweep".into(),
        title: "P3 Figure 2: 2Q-Flash elapsed time vs the Amout:A1out split".into(),
        caption: format!(
            "2q-flash with flash {} of the database; x = Amout's tenths of the flash (6 = 6:4); dashed: the paper's best split.",
            flash.map(|f| format!("{f:.0} %")).unwrap_or_else(|| "a fixed share".into())
        ),
        plot: Plot::Lines(Chart {
            x_label: "Amout share (tenths of the flash)".into(),
            y_label: "elapsed (s, cost model)".into(),
            lines: vec![Line::ours("ours: 2q-flash", "2q-flash", p)],
            x_markers,
            ..Chart::default()
        }),
    }
}

fn same_cost(r: &Report, sweep: &[&Row], dram: &[&Row], raid0: &[&Row]) -> Figure {
    // The same money on DRAM: flash pct f buys f / dram_per_flash more DRAM.
    let ratio = r
        .config
        .pointer("/price_model/dram_per_flash")
        .and_then(|v| v.as_f64())
        .unwrap_or(10.0);
    let base_main = r
        .config
        .pointer("/main_pct")
        .and_then(|v| v.as_f64())
        .unwrap_or(4.0);
    let mut lines: Vec<Line> = ["2q-flash", "lru-ext"]
        .iter()
        .map(|policy| {
            let p = points(
                sweep.iter().copied().filter(|q| is(q, "policy", policy)),
                "flash_pct",
                "elapsed_ms",
            );
            Line::ours(
                format!("ours: {policy}"),
                policy,
                p.into_iter().map(|(x, v)| (x, v / 1000.0)).collect(),
            )
        })
        .collect();
    let p = points(dram.iter().copied(), "main_pct", "elapsed_ms");
    let p = p
        .into_iter()
        .map(|(m, v)| (((m - base_main) * ratio).round(), v / 1000.0))
        .collect();
    lines.push(Line::ours("ours: lru, the same money on DRAM", "dram", p));
    let xs: Vec<f64> = lines
        .iter()
        .flat_map(|l| l.points.iter().map(|p| p.0))
        .collect();
    let (lo, hi) = xs
        .iter()
        .fold((f64::INFINITY, f64::NEG_INFINITY), |(a, b), &x| {
            (a.min(x), b.max(x))
        });
    if let Some(v) = raid0.first().and_then(|q| num(q, "elapsed_ms")) {
        if lo.is_finite() {
            lines.push(Line::ours(
                "ours: lru on a RAID-0 pair, no flash",
                "raid0",
                vec![(lo, v / 1000.0), (hi, v / 1000.0)],
            ));
        }
    }
    let claim = finding(r, "vs_same_cost_dram")
        .and_then(|p| text(p, "claim"))
        .unwrap_or("");
    Figure {
        id: "ext-buffer-same-cost".into(),
        title: "P3 Figure 6: flash vs the same money on DRAM, and vs a second disk (RAID-0)".into(),
        caption: format!("Elapsed time at each flash size beside lru with the DRAM that flash's price buys ({ratio}× flash's price per GB) and lru on a RAID-0 pair. Paper: {claim}."),
        plot: Plot::Lines(Chart {
            x_label: "flash (% of the database), or its price in DRAM".into(),
            y_label: "elapsed (s, cost model)".into(),
            lines,
            ..Chart::default()
        }),
    }
}

fn lru_curve(sweep: &[&Row], dram: &[&Row]) -> Figure {
    let rows = sweep
        .iter()
        .copied()
        .filter(|q| is(q, "policy", "lru"))
        .chain(dram.iter().copied().filter(|q| is(q, "policy", "lru")));
    let p = points(rows, "main_pct", "hit_ratio");
    Figure {
        id: "ext-buffer-lru-curve".into(),
        title: "P3: LRU hit ratio vs DRAM size (one stack-distance pass)".into(),
        caption: "Main-buffer hit ratio of LRU at each DRAM size, every point from one pass over the trace (exact stack distances).".into(),
        plot: Plot::Lines(Chart {
            x_label: "DRAM main buffer (% of the database)".into(),
            y_label: "hit ratio".into(),
            lines: vec![Line::ours("ours: lru", "lru", p)],
            ..Chart::default()
        }),
    }
}
