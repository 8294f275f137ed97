//! The cost-model points of Figures 3-5, 2 and 6: which to measure, in the rows' order, and
//! measuring them (the LRU ones from the one-pass curve, the others by a simulator pass each,
//! side by side under `--jobs`).

use super::{Ctx, Point, AMOUT, RATIO_SWEEP_FLASH_PCT};
use crate::buffer_sim::PriceModel;
use crate::parallel;
use crate::report::Steps;
use anyhow::Result;
use policy::{LruCurve, PolicyKind};

/// Every cost-model point: Figures 3-5, 2 and 6 (the LRU ones from `curve`); the simulator
/// passes side by side (`--jobs`), each over the whole trace on its own, in the figures' order.
pub(super) fn measure(
    ctx: &Ctx,
    curve: &LruCurve,
    main: usize,
    steps: &Steps<'_>,
    jobs: &parallel::Jobs,
) -> Result<Vec<Point>> {
    let lru_point = |figure, m: usize, f: usize, raid0| Point {
        figure,
        kind: if f == 0 {
            PolicyKind::Lru
        } else {
            PolicyKind::LruExt
        },
        main_pages: m,
        ext_pages: f,
        amout_ratio: AMOUT,
        raid0,
        counts: curve.lru_ext(m, f).counts,
        device_waf: None,
    };
    parallel::try_map(jobs, planned_points(ctx, main), |planned| match planned {
        Planned::Lru {
            figure,
            main,
            ext,
            raid0,
        } => Ok(lru_point(figure, main, ext, raid0)),
        // The curve gives lru-ext's counts exactly; one pass gives its flash writes' WAF.
        Planned::LruExt { step, figure, ext } => {
            let _step = steps.step(step);
            let (_, waf) = ctx.simulate(PolicyKind::LruExt, main, ext, AMOUT, None)?;
            Ok(Point {
                device_waf: waf,
                ..lru_point(figure, main, ext, false)
            })
        }
        Planned::Sim {
            step,
            figure,
            kind,
            ext,
            amout,
        } => {
            let _step = steps.step(step);
            sim_point(ctx, figure, kind, main, ext, amout)
        }
    })
}

/// A point to measure: from the one-pass LRU curve, or a simulator pass (a progress step).
enum Planned {
    Lru {
        figure: &'static str,
        main: usize,
        ext: usize,
        raid0: bool,
    },
    /// lru-ext: counts from the curve, the device WAF of its flash writes from a pass.
    LruExt {
        step: String,
        figure: &'static str,
        ext: usize,
    },
    Sim {
        step: String,
        figure: &'static str,
        kind: PolicyKind,
        ext: usize,
        amout: f64,
    },
}

/// The points of Figures 3-5, 2 and 6 in the rows' order.
fn planned_points(ctx: &Ctx, main: usize) -> Vec<Planned> {
    let flash_pcts: Vec<f64> = (1..=10).map(|i| 5.0 * i as f64).collect();
    let ratios: Vec<f64> = (1..=9).map(|i| i as f64 / 10.0).collect();
    let lru = |figure, main, ext, raid0| Planned::Lru {
        figure,
        main,
        ext,
        raid0,
    };
    let sim = |step: String, figure, kind, ext, amout| Planned::Sim {
        step,
        figure,
        kind,
        ext,
        amout,
    };
    let mut v = vec![lru("fig3-5", main, 0, false)];
    v.push(sim(
        "2q without flash".into(),
        "fig3-5",
        PolicyKind::TwoQ,
        0,
        AMOUT,
    ));
    for &f in &flash_pcts {
        let fp = ctx.pages(f);
        v.push(Planned::LruExt {
            step: format!("lru-ext with flash {f} % on the flash area's SSD"),
            figure: "fig3-5",
            ext: fp,
        });
        for kind in [PolicyKind::TwoQExt, PolicyKind::TwoQFlash] {
            let step = format!("{} with flash {f} %", kind.name());
            v.push(sim(step, "fig3-5", kind, fp, AMOUT));
        }
    }
    for &r in &ratios {
        let fp = ctx.pages(RATIO_SWEEP_FLASH_PCT);
        let step = format!("2q-flash, Amout share {r}");
        v.push(sim(step, "fig2", PolicyKind::TwoQFlash, fp, r));
    }
    // Figure 6: the money of each flash size spent on DRAM instead; disks alone on RAID-0.
    let price = PriceModel::default();
    for &f in &flash_pcts {
        let dram_extra = (ctx.pages(f) as f64 / price.dram_per_flash).round() as usize;
        v.push(lru("fig6-dram", main + dram_extra, 0, false));
    }
    v.push(lru("fig6-raid0", main, 0, true));
    v
}

fn sim_point(
    ctx: &Ctx,
    figure: &'static str,
    kind: PolicyKind,
    main: usize,
    ext: usize,
    amout: f64,
) -> Result<Point> {
    let (counts, device_waf) = ctx.simulate(kind, main, ext, amout, None)?;
    Ok(Point {
        figure,
        kind,
        main_pages: main,
        ext_pages: ext,
        amout_ratio: amout,
        raid0: false,
        counts,
        device_waf,
    })
}
