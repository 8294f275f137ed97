//! The `oracle` stream policy of `flashlab sim`: a first pass over the same requests records
//! each page write's death time ([`policy::streams::DeathRecorder`]), the measured pass places
//! each write by it ([`policy::streams::OracleStreams`]).
//!
//! The first pass walks the requests `sim::run` issues — the preconditioning, then the
//! measured workload with the same options — without a device: every page written is one
//! write of the recording, a trim ends the lifetimes of the pages it covers. It stops after as
//! many written pages as the measured phase may run (or at the workload's end), so the
//! recording covers every write the measured pass places.

use crate::sim::{planned_pages, Precondition, SimOptions};
use anyhow::Result;
use policy::streams::{DeathRecorder, OracleStreams};
use workload::{OpKind, Request, Target, WorkloadSpec};

/// The oracle's placement for `sim::run(opts)` on a device of `target`'s size.
pub fn sim_placement(
    opts: &SimOptions,
    spec: &WorkloadSpec,
    target: Target,
) -> Result<OracleStreams> {
    let mut rec = DeathRecorder::new(target.logical_pages);
    let passes = match opts.precondition {
        Precondition::None => None,
        Precondition::Fill => Some(0.0),
        Precondition::Full { passes } => Some(passes),
    };
    if let Some(passes) = passes {
        record(
            &mut rec,
            workload::precondition_by(target, passes, opts.seed, opts.sampler),
            None,
        )?;
    }
    // The run's one flow: the same requests the second pass replays.
    let flow = &opts.flows[0];
    let wopts = flow.workload_options(&workload::ClipCount::default(), opts.sampler);
    let limit = planned_pages(opts);
    record(&mut rec, workload::build(spec, target, &wopts)?, limit)?;
    Ok(rec.into_streams(opts.config.ftl.streams.max(1)))
}

/// Record `reqs` until `limit_pages` pages were written (None: to their end).
pub fn record<E>(
    rec: &mut DeathRecorder,
    reqs: impl Iterator<Item = Result<Request, E>>,
    limit_pages: Option<u64>,
) -> Result<()>
where
    anyhow::Error: From<E>,
{
    let mut written = 0u64;
    for r in reqs {
        if limit_pages.is_some_and(|l| written >= l) {
            break;
        }
        let r = r?;
        match r.op {
            OpKind::Write => {
                for p in r.lpn..r.lpn + r.pages as u64 {
                    rec.write(p);
                }
                written += r.pages as u64;
            }
            OpKind::Trim => rec.trim(r.lpn, r.pages as u64),
            OpKind::Read => {}
        }
    }
    Ok(())
}
