//! The summary: every experiment's claims (`Report::claims`, computed in `lab` by each paper's
//! folder), as one list in run order, and the counts per verdict. Nothing here knows an
//! experiment: a claim is plain data (texts, numbers, a verdict), rendered as it is.

use crate::results::{ExperimentResult, Status};
use lab::claim::{Claim, Spec, Verdict};
use lab::claim::{Rule, Tolerance};

/// One line of the summary: a claim and the experiment it belongs to.
#[derive(Clone, Debug, PartialEq)]
pub struct Line {
    pub experiment: String,
    pub claim: Claim,
}

/// The claims of one experiment (one `not run` line saying why when it failed).
pub fn lines(e: &ExperimentResult) -> Vec<Line> {
    let line = |claim: Claim| Line {
        experiment: e.name.clone(),
        claim,
    };
    match (&e.status, &e.report) {
        (Status::Ok, Some(r)) => r.claims.iter().cloned().map(line).collect(),
        _ => {
            let why = e.error.clone().unwrap_or_else(|| "no report".into());
            let spec = Spec {
                paper: &e.paper,
                claim: e.about.clone(),
                unit: "",
                rule: Rule::new(Tolerance::Direction, None),
                why_tolerance: "none: the experiment did not run",
            };
            vec![line(spec.judge(
                None::<f64>,
                None::<f64>,
                "",
                &format!("the experiment failed: {why}"),
            ))]
        }
    }
}

/// Every experiment's lines, in run order.
pub fn all_lines(experiments: &[ExperimentResult]) -> Vec<Line> {
    experiments.iter().flat_map(lines).collect()
}

/// `(verdict, count)` over `lines`, in [`Verdict::ALL`] order.
pub fn counts(lines: &[Line]) -> [(Verdict, usize); 4] {
    let claims: Vec<Claim> = lines.iter().map(|l| l.claim.clone()).collect();
    lab::claim::counts(&claims)
}

/// The CSS class of a verdict's cell.
pub fn verdict_class(v: Verdict) -> &'static str {
    match v {
        Verdict::Reproduced => "yes",
        Verdict::DirectionOnly => "partly",
        Verdict::NotReproduced => "no",
        Verdict::NotRun => "notrun",
    }
}
