//! The report page as the renderer's views ([`render::Page`]), from a results file alone: each
//! experiment's figures by its paper's registry entry (from its typed rows), its tables, its
//! claims (one `not run` line saying why when it failed) and the run's provenance.

use super::results::{ExperimentResult, Results, Status};
use crate::claim::{Claim, Rule, Spec, Tolerance, Verdict};
use crate::Table;
use render::{ClaimView, CountView, Done, Mark, Page, RunView, Section, SectionBody, TableView};

/// The whole page.
pub fn page(results: &Results) -> Page {
    let run = &results.run;
    let lines = claim_lines(&results.experiments);
    let claims: Vec<Claim> = lines.iter().map(|(_, c)| c.clone()).collect();
    Page {
        run: RunView {
            scale: run.scale.clone(),
            seed: run.seed,
            device: run.device.clone(),
            started_at: run.started_at.clone(),
            flashlab_version: run.flashlab_version.clone(),
            git_commit: run.git_commit.clone(),
        },
        claims: lines.iter().map(|(e, c)| claim_view(e, c)).collect(),
        counts: crate::claim::counts(&claims)
            .iter()
            .map(|(v, n)| CountView {
                verdict: v.name().to_string(),
                mark: mark(*v),
                count: *n,
            })
            .collect(),
        sections: results.experiments.iter().map(section).collect(),
        meta: meta_rows(results),
    }
}

/// The claims of one experiment with its name (one `not run` line saying why when it failed).
pub fn claims_of(e: &ExperimentResult) -> Vec<(String, Claim)> {
    let line = |claim: Claim| (e.name.clone(), claim);
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

/// Every experiment's claims, in run order.
pub fn claim_lines(experiments: &[ExperimentResult]) -> Vec<(String, Claim)> {
    experiments.iter().flat_map(claims_of).collect()
}

/// How the page marks a verdict.
pub fn mark(v: Verdict) -> Mark {
    match v {
        Verdict::Reproduced => Mark::Yes,
        Verdict::DirectionOnly => Mark::Partly,
        Verdict::NotReproduced => Mark::No,
        Verdict::NotRun => Mark::NotRun,
    }
}

fn claim_view(experiment: &str, c: &Claim) -> ClaimView {
    ClaimView {
        experiment: experiment.to_string(),
        paper: c.paper.clone(),
        claim: c.claim.clone(),
        paper_value: crate::claim::cell(&c.paper_value),
        ours: crate::claim::cell(&c.ours),
        unit: c.unit.clone(),
        ratio: c.ratio,
        tolerance: c.tolerance.clone(),
        verdict: c.verdict.name().to_string(),
        mark: mark(c.verdict),
        note: c.note.clone(),
    }
}

/// A text table as the renderer shows it.
pub fn table_view(t: &Table) -> TableView {
    TableView {
        title: t.title.clone(),
        headers: t.headers.clone(),
        rows: t.rows.clone(),
        legend: t.legend.clone(),
    }
}

fn section(e: &ExperimentResult) -> Section {
    let body = match (&e.status, &e.report) {
        (Status::Ok, Some(r)) => SectionBody::Done(Done {
            scale: r.scale.clone(),
            seed: r.seed,
            elapsed_seconds: e.elapsed_seconds,
            figures: crate::papers::figures_of(r),
            tables: e.tables.iter().map(table_view).collect(),
            notes: r.notes.clone(),
            config_json: serde_json::to_string_pretty(&r.config).unwrap_or_default(),
        }),
        _ => SectionBody::Failed {
            elapsed_seconds: e.elapsed_seconds,
            error: e.error.clone().unwrap_or_else(|| "no report".into()),
        },
    };
    Section {
        name: e.name.clone(),
        paper: e.paper.clone(),
        about: e.about.clone(),
        rerun_command: e.command.clone(),
        body,
    }
}

fn meta_rows(results: &Results) -> Vec<(String, String)> {
    let run = &results.run;
    let m = &run.machine;
    let memory = m
        .memory_bytes
        .map(|b| format!("{:.1} GiB", b as f64 / (1u64 << 30) as f64))
        .unwrap_or_else(|| "unknown".into());
    let rows: Vec<(&str, String)> = vec![
        ("command line", run.command_line.clone()),
        ("flashlab version", run.flashlab_version.clone()),
        ("git commit", run.git_commit.clone()),
        ("scale", run.scale.clone()),
        ("seed", run.seed.to_string()),
        ("device", run.device.clone()),
        ("started", run.started_at.clone()),
        ("finished", run.finished_at.clone()),
        ("elapsed", format!("{:.1} s", run.elapsed_seconds)),
        ("CPU", m.cpu_model.clone()),
        ("cores", m.cores.to_string()),
        ("memory", memory),
        ("kernel", m.kernel.clone()),
        (
            "device directory",
            format!("{} ({})", m.device_dir, m.device_dir_file_system),
        ),
    ];
    rows.into_iter().map(|(k, v)| (k.to_string(), v)).collect()
}
