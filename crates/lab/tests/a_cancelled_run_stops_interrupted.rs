//! A run whose stop flag is set (Ctrl-C from Python or the CLI) stops at its next progress
//! point with `Interrupted`: every experiment once its first step is announced, `reproduce
//! all` with nothing recorded past the stop, and `buffer-sim` within one report of references.

use lab::report::{ProgressCounts, STEPS_PHASE};
use lab::spec::{from_options, BufferSimSpec};
use lab::watch::is_interrupted;
use lab::{Cancel, ReproduceOptions, Watch};
use serde_json::json;
use std::sync::{Arc, Mutex};

/// Counts reported to a list, the token set at the first one.
fn stop_at_first_count(cancel: &Cancel, seen: &Arc<Mutex<Vec<(String, u64)>>>) -> ProgressCounts {
    let (cancel, seen) = (cancel.clone(), seen.clone());
    ProgressCounts(Arc::new(
        move |phase: &str, done: u64, _total: Option<u64>| {
            seen.lock().unwrap().push((phase.to_string(), done));
            cancel.cancel();
        },
    ))
}

#[test]
fn every_experiment_stops_at_its_first_step_once_cancelled() {
    for e in lab::EXPERIMENTS {
        let cancel = Cancel::new();
        let seen = Arc::new(Mutex::new(Vec::new()));
        let opts = ReproduceOptions {
            progress_counts: Some(stop_at_first_count(&cancel, &seen)),
            jobs: lab::parallel::Jobs::new(2),
            ..ReproduceOptions::default()
        }
        .with_cancel(cancel);
        let err = match (e.run)(&opts) {
            Ok(_) => panic!("{}: ran to the end with its stop flag set", e.name),
            Err(err) => err,
        };
        assert!(is_interrupted(&err), "{}: {err:#}", e.name);
        let seen = seen.lock().unwrap();
        assert!(
            seen.iter().all(|(phase, _)| phase == STEPS_PHASE),
            "{}: {seen:?}",
            e.name
        );
        // The steps in flight when the flag was set (at most one per job) finish; none start.
        let started = seen.iter().filter(|(_, done)| *done == 0).count();
        assert!((1..=2).contains(&started), "{}: {seen:?}", e.name);
    }
}

#[test]
fn a_cancelled_reproduce_all_records_no_experiment_as_failed() {
    use lab::harness::reproduce_all::{self, AllSpec, Progress};
    use lab::harness::results::ExperimentResult;
    struct Quiet;
    impl Progress for Quiet {
        fn start(&self, _: usize, _: &str) {}
        fn sink(&self, _: &'static str) -> lab::report::ProgressSink {
            lab::report::ProgressSink(Arc::new(|_: &str| {}))
        }
        fn done(&self, name: &str, e: &ExperimentResult) {
            assert!(e.error.is_none(), "{name} recorded as {:?}", e.error);
        }
    }
    let dir = tempfile::tempdir().unwrap();
    let cancel = Cancel::new();
    let seen = Arc::new(Mutex::new(Vec::new()));
    let base = ReproduceOptions {
        progress_counts: Some(stop_at_first_count(&cancel, &seen)),
        jobs: lab::parallel::Jobs::new(1),
        ..ReproduceOptions::default()
    }
    .with_cancel(cancel);
    let spec = AllSpec {
        out: dir.path().to_path_buf(),
        ..AllSpec::default()
    };
    let err = reproduce_all::run(&spec, &base, &Quiet).expect_err("stopped");
    assert!(is_interrupted(&err), "{err:#}");
    assert!(
        !dir.path().join("index.html").exists(),
        "no page for a stopped run"
    );
}

#[test]
fn buffer_sim_stops_within_one_report_of_references() {
    let dir = tempfile::tempdir().unwrap();
    let trace = dir.path().join("refs.txt");
    let refs = 5 * lab::buffer_sim::REPORT_EVERY_REFS;
    let text: String = (0..refs).map(|i| format!("R {}\n", i % 5000)).collect();
    std::fs::write(&trace, text).unwrap();
    for curve in [false, true] {
        let options = json!({"trace": trace, "trace_format": "text", "curve": curve});
        let spec: BufferSimSpec = from_options(options.as_object().unwrap()).unwrap();
        let cancel = Cancel::new();
        let seen = Arc::new(Mutex::new(Vec::new()));
        let watch = Watch {
            lines: false,
            counts: Some(stop_at_first_count(&cancel, &seen)),
            cancel,
        };
        let err = match lab::buffer_sim::run(&spec, &watch) {
            Ok(_) => panic!("curve {curve}: ran to the end with its stop flag set"),
            Err(e) => e,
        };
        assert!(is_interrupted(&err), "{err:#}");
        let pass = if curve { "curve" } else { "count" };
        let first = (pass.to_string(), lab::buffer_sim::REPORT_EVERY_REFS);
        assert_eq!(*seen.lock().unwrap(), vec![first]);
        // The same run, not stopped, reports each pass to its end.
        let seen = Arc::new(Mutex::new(Vec::new()));
        let s = seen.clone();
        let counts = ProgressCounts(Arc::new(move |p: &str, d: u64, t: Option<u64>| {
            s.lock().unwrap().push((p.to_string(), d, t))
        }));
        let watch = Watch {
            counts: Some(counts),
            ..Watch::default()
        };
        lab::buffer_sim::run(&spec, &watch).unwrap();
        let seen = seen.lock().unwrap();
        assert_eq!(
            seen.last(),
            Some(&(
                if curve { "curve" } else { "simulate" }.to_string(),
                refs,
                Some(refs)
            ))
        );
    }
}
