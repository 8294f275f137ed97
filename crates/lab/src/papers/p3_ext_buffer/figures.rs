//! P3 (flash SSD as an extended buffer), Figures 2–6: elapsed time, main and extended hit
//! ratio vs flash size per policy; the Amout:A1out sweep; the same-cost comparisons (DRAM,
//! RAID-0); the one-pass LRU curve. P3 prints no table of results, only findings: they are
//! drawn as the paper's reference lines.

use super::rows::ExtBufferRow;
use crate::papers::chart::{distinct, typed, xy, Figure};
use crate::Report;
use render::plot::{Chart, Line, Marker, Plot, Source};
use serde::Deserialize;

/// One of the paper's findings (`paper.toml`): what it names and the figures it states.
#[derive(Deserialize)]
struct Finding {
    finding: String,
    claim: Option<String>,
    speedup_pct_min: Option<f64>,
    ext_hit_ratio_min: Option<f64>,
    ext_hit_ratio_max: Option<f64>,
    amout_share: Option<f64>,
}

/// What the figures read of the run's configuration.
#[derive(Default, Deserialize)]
struct Config {
    price_model: Option<PriceModel>,
    main_pct: Option<f64>,
}

#[derive(Deserialize)]
struct PriceModel {
    dram_per_flash: Option<f64>,
}

fn finding<'a>(paper: &'a [Finding], name: &str) -> Option<&'a Finding> {
    paper.iter().find(|p| p.finding == name)
}

fn paper_marker(label: String, value: f64) -> Marker {
    Marker {
        label,
        value,
        source: Source::Paper,
        color_key: None,
    }
}

/// `(x, y)` of `rows`, in x order.
fn pts<'a>(
    rows: impl IntoIterator<Item = &'a ExtBufferRow>,
    x: fn(&ExtBufferRow) -> f64,
    y: fn(&ExtBufferRow) -> f64,
) -> Vec<(f64, f64)> {
    xy(rows.into_iter().map(|q| (x(q), y(q))))
}

pub fn figures(r: &Report) -> Vec<Figure> {
    let rows: Vec<ExtBufferRow> = typed(&r.rows);
    let paper: Vec<Finding> = typed(&r.paper);
    let fig =
        |name: &str| -> Vec<&ExtBufferRow> { rows.iter().filter(|q| q.figure == name).collect() };
    let sweep = fig("fig3-5");
    let mut out = Vec::new();
    let per_policy = |y: fn(&ExtBufferRow) -> f64, scale: f64| -> Vec<Line> {
        distinct(sweep.iter().map(|q| q.counts.policy.as_str()))
            .into_iter()
            .map(|policy| {
                let of = sweep.iter().copied().filter(|q| q.counts.policy == policy);
                let p = pts(of, |q| q.flash_pct, y);
                let p = p.into_iter().map(|(x, v)| (x, v * scale)).collect();
                Line::ours(format!("ours: {policy}"), policy, p)
            })
            .collect()
    };

    // Fig. 3: elapsed time; the paper's "> 200 % faster than disks alone" is a ceiling of
    // a third of our disks-alone (lru, no flash) time.
    let disks_alone = sweep
        .iter()
        .find(|q| q.counts.policy == "lru" && q.flash_pct == 0.0)
        .map(|q| q.counts.elapsed_ms);
    let mut markers = Vec::new();
    if let (Some(base), Some(pct)) = (
        disks_alone,
        finding(&paper, "speedup_vs_disks_alone").and_then(|p| p.speedup_pct_min),
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
            lines: per_policy(|q| q.counts.elapsed_ms, 1e-3),
            y_markers: markers,
            ..Chart::default()
        }),
    });
    out.push(Figure {
        id: "ext-buffer-main-hit-ratio".into(),
        title: "P3 Figure 4: main-buffer hit ratio vs flash size, per policy".into(),
        caption: "Share of references found in the DRAM main buffer (the axis is fitted to the data, not from zero).".into(),
        plot: Plot::Lines(Chart {
            x_label: "flash (% of the database)".into(),
            y_label: "main hit ratio".into(),
            lines: per_policy(|q| q.counts.hit_ratio, 1.0),
            // Five policies between 0.85 and 0.88: from zero they would be one line.
            y_fit: true,
            ..Chart::default()
        }),
    });
    let mut ext_markers = Vec::new();
    if let Some(p) = finding(&paper, "ext_hit_ratio") {
        for (v, what) in [
            (p.ext_hit_ratio_min, "above"),
            (p.ext_hit_ratio_max, "up to"),
        ] {
            if let Some(v) = v {
                ext_markers.push(paper_marker(format!("paper: {what} {v:.2}"), v));
            }
        }
    }
    let ext_lines: Vec<Line> = per_policy(|q| q.counts.ext_hit_ratio, 1.0)
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
    out.push(amout_sweep(&paper, &fig("fig2")));
    let config: Config = serde_json::from_value(r.config.clone()).unwrap_or_default();
    out.push(same_cost(
        &paper,
        &config,
        &sweep,
        &fig("fig6-dram"),
        &fig("fig6-raid0"),
    ));
    out.push(lru_curve(&sweep, &fig("fig6-dram")));
    out
}

fn amout_sweep(paper: &[Finding], rows: &[&ExtBufferRow]) -> Figure {
    let flash = rows.first().map(|q| q.flash_pct);
    let p = pts(
        rows.iter().copied(),
        |q| q.amout_ratio,
        |q| q.counts.elapsed_ms,
    );
    let p = p.into_iter().map(|(x, v)| (x * 10.0, v / 1000.0)).collect();
    let mut x_markers = Vec::new();
    if let Some(share) = finding(paper, "best_amout_ratio").and_then(|p| p.amout_share) {
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

fn same_cost(
    paper: &[Finding],
    config: &Config,
    sweep: &[&ExtBufferRow],
    dram: &[&ExtBufferRow],
    raid0: &[&ExtBufferRow],
) -> Figure {
    // The same money on DRAM: flash pct f buys f / dram_per_flash more DRAM.
    let ratio = config
        .price_model
        .as_ref()
        .and_then(|p| p.dram_per_flash)
        .unwrap_or(10.0);
    let base_main = config.main_pct.unwrap_or(4.0);
    let mut lines: Vec<Line> = ["2q-flash", "lru-ext"]
        .iter()
        .map(|policy| {
            let of = sweep.iter().copied().filter(|q| q.counts.policy == *policy);
            let p = pts(of, |q| q.flash_pct, |q| q.counts.elapsed_ms);
            Line::ours(
                format!("ours: {policy}"),
                policy,
                p.into_iter().map(|(x, v)| (x, v / 1000.0)).collect(),
            )
        })
        .collect();
    let p = pts(
        dram.iter().copied(),
        |q| q.main_pct,
        |q| q.counts.elapsed_ms,
    );
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
    if let Some(v) = raid0.first().map(|q| q.counts.elapsed_ms) {
        if lo.is_finite() {
            lines.push(Line::ours(
                "ours: lru on a RAID-0 pair, no flash",
                "raid0",
                vec![(lo, v / 1000.0), (hi, v / 1000.0)],
            ));
        }
    }
    let claim = finding(paper, "vs_same_cost_dram")
        .and_then(|p| p.claim.as_deref())
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

fn lru_curve(sweep: &[&ExtBufferRow], dram: &[&ExtBufferRow]) -> Figure {
    let rows = sweep
        .iter()
        .chain(dram)
        .copied()
        .filter(|q| q.counts.policy == "lru");
    let p = pts(rows, |q| q.main_pct, |q| q.counts.hit_ratio);
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
