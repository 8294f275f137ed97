//! The closed-form WAF `flashlab sim` reports beside the measured one (`waf_model` keys).

use super::SimOptions;
use serde::Serialize;

/// The closed-form WAF for this run, with where it applies.
#[derive(Clone, Copy, Debug, Serialize, PartialEq)]
pub struct WafModel {
    /// The model's steady-state WAF at `alpha` (Eq. 12 for greedy, the fixed point for FIFO).
    pub waf: f64,
    /// The alpha the model is evaluated at: the config's, less the free pages the open blocks
    /// hold (`ssd::analytic::open_block_alpha`: `alpha - 0.6 x GC pools / logical blocks`).
    pub alpha: f64,
    /// The model at the config's alpha, without the open-block correction.
    pub waf_uncorrected: f64,
    /// Spare blocks per GC pool (die, or the device), `(alpha - 1) x logical blocks / pools`:
    /// what the finite-size residual depends on.
    pub spare_blocks_per_die: f64,
    /// Expected relative deviation of this device's WAF from `waf`
    /// (`ssd::analytic::finite_size_excess`).
    pub expected_excess: f64,
    /// Whether the device is large enough for the model (`expected_excess` about 1 % or less).
    pub applies: bool,
}

/// The closed-form WAF for uniform random single-page writes on page mapping with greedy or
/// FIFO GC and one stream (the cases `ssd::analytic` models), else `None`; `applies` says
/// whether the device has the spare blocks per GC pool for the model to hold within ~1 %.
pub fn waf_model(opts: &SimOptions) -> Option<WafModel> {
    let cfg = &opts.config;
    let [flow] = opts.flows.as_slice() else {
        return None;
    };
    let modelled = flow.workload == "uniform-write"
        && flow.request_pages == 1
        && flow.size_pages == cfg.logical_pages()
        && cfg.ftl.scheme == ssd::FtlKind::Page
        && cfg.ftl.streams == 1
        && cfg.alpha() > 1.0;
    if !modelled {
        return None;
    }
    let logical_blocks = cfg.logical_pages() as f64 / cfg.geometry.pages_per_block as f64;
    let pools = cfg.gc_pools();
    let alpha = ssd::analytic::open_block_alpha(cfg.alpha(), pools, logical_blocks);
    let model = |alpha: f64| match cfg.ftl.gc_policy {
        ssd::GcPolicy::Greedy => Some(ssd::analytic::greedy_waf(
            alpha,
            cfg.geometry.pages_per_block,
        )),
        ssd::GcPolicy::Fifo => Some(ssd::analytic::fifo_waf(alpha)),
        _ => None,
    };
    if alpha <= 1.0 {
        return None;
    }
    let spare = (cfg.alpha() - 1.0) * logical_blocks / pools as f64;
    Some(WafModel {
        waf: model(alpha)?,
        alpha,
        waf_uncorrected: model(cfg.alpha())?,
        spare_blocks_per_die: spare,
        expected_excess: ssd::analytic::finite_size_excess(spare),
        applies: spare >= ssd::analytic::MODEL_MIN_SPARE_BLOCKS_PER_DIE,
    })
}
