//! A run watched from Python: progress reported to a Python callable and Ctrl-C (SIGINT, or
//! Jupyter's "interrupt kernel") honoured while the run is in Rust with the GIL released.
//!
//! The run's progress hook takes the GIL for a moment (it is called every 65 536 requests),
//! lets Python run its signal handlers (`Python::check_signals`) and calls the callable. When
//! either raises, the run is stopped by unwinding out of it with `resume_unwind` (which runs
//! no panic hook and prints nothing): everything the run built (device, workload, driver) is
//! owned by it and dropped on the way out, and the exception (KeyboardInterrupt, or the
//! callable's own) is raised to the caller. A panic of the run itself is passed on as one.

use pyo3::prelude::*;
use std::panic::{catch_unwind, resume_unwind, AssertUnwindSafe};

/// The unwinding payload of a run stopped from its progress hook.
struct Stopped;

/// What a run reports: `(phase, pages_done, pages_total)`; None: not known.
pub type Report<'a> = &'a mut dyn FnMut(&str, u64, Option<u64>);

/// Run `work` with the GIL released, its progress going to `callback(phase, done, total)`
/// when given; Ctrl-C stops it with KeyboardInterrupt.
pub fn run<T: Send>(
    py: Python<'_>,
    callback: Option<Py<PyAny>>,
    work: impl FnOnce(Report<'_>) -> anyhow::Result<T> + Send,
) -> PyResult<T> {
    let mut raised: Option<PyErr> = None;
    let outcome = py.detach(|| {
        let mut hook = |phase: &str, done: u64, total: Option<u64>| {
            let polled = Python::attach(|py| -> PyResult<()> {
                py.check_signals()?;
                if let Some(cb) = &callback {
                    cb.call1(py, (phase, done, total))?;
                }
                Ok(())
            });
            if let Err(e) = polled {
                raised = Some(e);
                resume_unwind(Box::new(Stopped));
            }
        };
        catch_unwind(AssertUnwindSafe(|| work(&mut hook)))
    });
    match outcome {
        Ok(result) => result.map_err(crate::err),
        Err(payload) if payload.is::<Stopped>() => Err(raised
            .take()
            .expect("a run stops from its hook only after recording why")),
        Err(payload) => resume_unwind(payload),
    }
}
