//! The cost-model points of Figures 3-5, 2 and 6, and the comparison of the two flash-log
//! orders: which to measure, in the rows' order, and measuring them (the LRU ones without
//! flash, and lru-ext with a slot-refill log, from the one-pass curve; the others by a
//! simulator pass each, side by side under `--jobs`).
//!
//! Why lru-ext with P3's circular log needs a pass: a slot-refill log keeps the pages main
//! evicted last, as many as it holds, so main + log is one LRU list of `main + ext` pages and
//! the stack distances give it exactly; a circular log leaves a hole where a page was read
//! back until the head comes round, so it holds fewer and the curve would overstate it.

use super::{Ctx, Point, AMOUT, COMPARISON_FLASH_PCTS, LOG_ORDER, RATIO_SWEEP_FLASH_PCT};
use crate::buffer_sim::PriceModel;
use crate::parallel;
use crate::report::Steps;
use anyhow::Result;
use policy::{LogOrder, LruCurve, PolicyKind};

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
        log_order: LogOrder::SlotRefill,
        counts: curve.lru_ext(m, f).counts,
        device_waf: None,
        ledger: None,
    };
    parallel::try_map(jobs, planned_points(ctx, main), |planned| match planned {
        Planned::Lru {
            figure,
            main,
            ext,
            raid0,
        } => Ok(lru_point(figure, main, ext, raid0)),
        // With slot refill the curve gives lru-ext's counts exactly (module docs); one pass
        // gives its flash writes' WAF.
        Planned::Sim {
            step,
            figure,
            kind: PolicyKind::LruExt,
            ext,
            order: LogOrder::SlotRefill,
            ..
        } => {
            let _step = steps.step(step);
            let order = LogOrder::SlotRefill;
            let pass = ctx.simulate(PolicyKind::LruExt, main, ext, AMOUT, order, None)?;
            Ok(Point {
                device_waf: pass.device_waf,
                ledger: Some(pass.ledger),
                ..lru_point(figure, main, ext, false)
            })
        }
        Planned::Sim {
            step,
            figure,
            kind,
            ext,
            amout,
            order,
        } => {
            let _step = steps.step(step);
            sim_point(ctx, figure, (kind, order), main, ext, amout)
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
    /// A simulator pass (lru-ext with slot refill: the counts from the curve, the device WAF
    /// of its flash writes from the pass).
    Sim {
        step: String,
        figure: &'static str,
        kind: PolicyKind,
        ext: usize,
        amout: f64,
        order: LogOrder,
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
        order: LOG_ORDER,
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
        for kind in EXT_POLICIES {
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
    v.extend(comparison_points(ctx));
    v
}

const EXT_POLICIES: [PolicyKind; 3] = [
    PolicyKind::LruExt,
    PolicyKind::TwoQExt,
    PolicyKind::TwoQFlash,
];

/// The other log order than the figures' (slot refill), at a few flash sizes, every ext policy.
fn comparison_points(ctx: &Ctx) -> Vec<Planned> {
    let order = LogOrder::SlotRefill;
    assert_ne!(order, LOG_ORDER, "the comparison is with the other order");
    let mut v = Vec::new();
    for &f in &COMPARISON_FLASH_PCTS {
        for kind in EXT_POLICIES {
            v.push(Planned::Sim {
                step: format!("{} with flash {f} %, {} log", kind.name(), order.name()),
                figure: COMPARISON_FIGURE,
                kind,
                ext: ctx.pages(f),
                amout: AMOUT,
                order,
            });
        }
    }
    v
}

/// The figure name of the comparison rows.
pub(super) const COMPARISON_FIGURE: &str = "fig3-5-slot-refill";

fn sim_point(
    ctx: &Ctx,
    figure: &'static str,
    (kind, log_order): (PolicyKind, LogOrder),
    main: usize,
    ext: usize,
    amout: f64,
) -> Result<Point> {
    let pass = ctx.simulate(kind, main, ext, amout, log_order, None)?;
    Ok(Point {
        figure,
        kind,
        main_pages: main,
        ext_pages: ext,
        amout_ratio: amout,
        raid0: false,
        log_order,
        counts: pass.counts,
        device_waf: pass.device_waf,
        ledger: Some(pass.ledger),
    })
}
