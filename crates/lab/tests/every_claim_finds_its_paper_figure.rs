//! Every claim finds its paper's figure: judged on the fixed `results.json` (a real quick run
//! of every experiment), no claim has a null `paper_value`. The claims read the papers' figures
//! from each folder's `paper.toml` by table and key, so a key renamed or dropped there fails
//! here instead of turning a verdict into `not run` unnoticed.

use lab::harness::results::Results;
use lab::papers::claims_of;
use std::path::Path;

const FIXTURE: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures/results.json");

#[test]
fn no_claim_misses_its_paper_value() {
    let results = Results::load(Path::new(FIXTURE)).expect("the fixture loads");
    let mut judged = 0;
    for e in &results.experiments {
        let Some(report) = &e.report else { continue };
        for c in claims_of(report) {
            judged += 1;
            assert!(
                !c.paper_value.is_null(),
                "{}: `{}` finds no paper figure (check the keys its claims.rs reads in paper.toml)",
                e.name,
                c.claim
            );
        }
    }
    assert!(
        judged >= 29,
        "only {judged} claims judged: every paper's claims must run"
    );
}
