//! A run watched from Python: progress reported to a Python callable and Ctrl-C (SIGINT, or
//! Jupyter's "interrupt kernel") honoured while the run is in Rust with the GIL released.
//!
//! The run works on a thread of its own; the caller's thread (Python's main thread, the only
//! one that runs Python's signal handlers) waits for it and, every [`POLL`] and once at the
//! end, takes the GIL for a moment: it lets Python run its signal handlers
//! (`Python::check_signals`) and hands the progress reported since (from any of the run's
//! threads, in order) to the callable. When either raises, the run's [`lab::Cancel`] token is
//! set and the exception (KeyboardInterrupt, or the callable's own) is raised once the run has
//! stopped: runs that take the token (experiments, `buffer_sim`) return `Interrupted` at their
//! next check; runs with only a progress hook (`sim`, sweeps) are unwound from it
//! ([`Watch::stop_if_cancelled`], with `resume_unwind`, which prints nothing), dropping what
//! they built. A panic of the run itself is passed on as one.

use lab::report::ProgressCounts;
use lab::Cancel;
use pyo3::prelude::*;
use std::panic::{resume_unwind, AssertUnwindSafe};
use std::sync::{Arc, Condvar, Mutex};
use std::time::Duration;

/// How often the caller's thread looks for Ctrl-C and new progress while the run works.
const POLL: Duration = Duration::from_millis(100);

/// The unwinding payload of a run stopped from its progress hook.
struct Stopped;

/// One progress report: `(phase, done, total)`; total None: not known.
type Event = (String, u64, Option<u64>);

/// What the run and the watching thread share.
#[derive(Default)]
struct Shared {
    events: Vec<Event>,
    finished: bool,
}

/// The run's side: report progress, see the stop flag.
#[derive(Clone, Default)]
pub struct Watch {
    shared: Arc<(Mutex<Shared>, Condvar)>,
    pub cancel: Cancel,
}

impl Watch {
    /// Queue `(phase, done, total)` for the callable (any thread; never blocks on Python).
    pub fn report(&self, phase: &str, done: u64, total: Option<u64>) {
        let mut s = self.shared.0.lock().unwrap_or_else(|e| e.into_inner());
        s.events.push((phase.to_string(), done, total));
    }

    /// For runs without a token: unwind out of the run once it is cancelled (call only from
    /// the run's own progress hook, never from a destructor).
    pub fn stop_if_cancelled(&self) {
        if self.cancel.is_cancelled() {
            resume_unwind(Box::new(Stopped));
        }
    }

    /// [`Self::report`] as the experiments' progress counts.
    pub fn counts(&self) -> ProgressCounts {
        let w = self.clone();
        ProgressCounts(Arc::new(move |p: &str, d: u64, t: Option<u64>| {
            w.report(p, d, t)
        }))
    }

    fn finish(&self) {
        let (lock, cv) = &*self.shared;
        lock.lock().unwrap_or_else(|e| e.into_inner()).finished = true;
        cv.notify_all();
    }

    /// Wait up to [`POLL`] for the run to finish; the reports queued since, and whether it has.
    fn wait(&self) -> (Vec<Event>, bool) {
        let (lock, cv) = &*self.shared;
        let mut s = lock.lock().unwrap_or_else(|e| e.into_inner());
        if !s.finished {
            s = cv
                .wait_timeout(s, POLL)
                .unwrap_or_else(|e| e.into_inner())
                .0;
        }
        (std::mem::take(&mut s.events), s.finished)
    }
}

/// Marks the run finished however its thread ends (a result or a panic).
struct FinishOnDrop<'a>(&'a Watch);

impl Drop for FinishOnDrop<'_> {
    fn drop(&mut self) {
        self.0.finish();
    }
}

/// Run `work` with the GIL released, its progress going to `callback(phase, done, total)`
/// when given; Ctrl-C (or the callable raising) stops it and raises that exception.
pub fn run<T: Send>(
    py: Python<'_>,
    callback: Option<Py<PyAny>>,
    work: impl FnOnce(&Watch) -> anyhow::Result<T> + Send,
) -> PyResult<T> {
    let watch = Watch::default();
    let mut raised: Option<PyErr> = None;
    let outcome = py.detach(|| {
        std::thread::scope(|s| {
            let worker = s.spawn(|| {
                let _finish = FinishOnDrop(&watch);
                std::panic::catch_unwind(AssertUnwindSafe(|| work(&watch)))
            });
            loop {
                let (events, finished) = watch.wait();
                poll(&callback, &events, &mut raised);
                if raised.is_some() {
                    watch.cancel.cancel();
                }
                if finished {
                    break;
                }
            }
            worker.join()
        })
    });
    if let Some(e) = raised {
        return Err(e);
    }
    match outcome {
        Ok(Ok(result)) => result.map_err(crate::err),
        Ok(Err(payload)) | Err(payload) => {
            assert!(
                !payload.is::<Stopped>(),
                "a run stops from its hook only when cancelled, and is cancelled only after recording why"
            );
            resume_unwind(payload)
        }
    }
}

/// On the caller's thread: Python's signal handlers, then the reports to the callable; the
/// first exception is kept (no call after it).
fn poll(callback: &Option<Py<PyAny>>, events: &[Event], raised: &mut Option<PyErr>) {
    if raised.is_some() {
        return;
    }
    let polled = Python::attach(|py| -> PyResult<()> {
        py.check_signals()?;
        if let Some(cb) = callback {
            for (phase, done, total) in events {
                cb.call1(py, (phase.as_str(), *done, *total))?;
            }
        }
        Ok(())
    });
    if let Err(e) = polled {
        *raised = Some(e);
    }
}
