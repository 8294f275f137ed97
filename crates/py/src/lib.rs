//! `flashlab._native`: the flashlab engine for Python, through `lab`'s run specs
//! (`lab::spec`) and sweeps (`lab::harness::sweep`). Keyword arguments are a dict that
//! deserializes into the same spec the CLI's flags fill; results are the JSON text the CLI
//! prints (the pure-Python layer, `python/flashlab`, turns it into dicts); errors raise
//! `FlashlabError` with the message the CLI prints after `error: `. Runs release the GIL; `sim`,
//! `buffer_sim`, `reproduce` and a local sweep report progress to a Python callable and stop
//! on Ctrl-C ([`watch`]).
//! [`options`] describes each tool's options for the generated Python signatures.

mod options;
mod watch;

use lab::harness::error_chain;
use lab::harness::sweep::{self, spec::Spec, Plan};
use lab::sim::{Precondition, SimOptions};
use lab::spec::{from_options, BufferSimSpec, ReproduceSpec, SimSpec};
use lab::ReproduceOptions;
use pyo3::exceptions::{PyException, PyTypeError};
use pyo3::prelude::*;
use pyo3::types::{PyBool, PyDict, PyFloat, PyInt, PyString};
use serde_json::{json, Map, Value};
use std::path::Path;

pyo3::create_exception!(
    flashlab,
    FlashlabError,
    PyException,
    "A run or sweep was refused or failed; the message is the one the flashlab CLI prints."
);

pub(crate) fn err(e: anyhow::Error) -> PyErr {
    FlashlabError::new_err(error_chain(&e))
}

/// Keyword arguments as a spec's options: booleans, strings, integers and floats as JSON
/// values; `None` leaves the option out.
fn options(kwargs: Option<&Bound<'_, PyDict>>) -> PyResult<Map<String, Value>> {
    let mut out = Map::new();
    let Some(kwargs) = kwargs else {
        return Ok(out);
    };
    for (k, v) in kwargs.iter() {
        let name: String = k.extract()?;
        let value = if v.is_none() {
            continue;
        } else if v.is_instance_of::<PyBool>() {
            Value::Bool(v.extract::<bool>()?)
        } else if v.is_instance_of::<PyString>() {
            Value::String(v.extract::<String>()?)
        } else if v.is_instance_of::<PyInt>() {
            int_value(v.extract::<i128>()?)
        } else if v.is_instance_of::<PyFloat>() {
            let x = v.extract::<f64>()?;
            serde_json::Number::from_f64(x).map_or(Value::String(x.to_string()), Value::Number)
        } else {
            return Err(PyTypeError::new_err(format!(
                "option {name}: expected a string, a number or a boolean, got {}",
                v.get_type().name()?
            )));
        };
        out.insert(name, value);
    }
    Ok(out)
}

/// An integer as JSON: a number where it fits 64 bits, else its decimal text (which the
/// spec's field then refuses with the CLI's message).
fn int_value(i: i128) -> Value {
    if let Ok(x) = i64::try_from(i) {
        Value::from(x)
    } else if let Ok(x) = u64::try_from(i) {
        Value::from(x)
    } else {
        Value::String(i.to_string())
    }
}

/// `flashlab sim --json` for these options, as JSON text. `progress(phase, pages_done,
/// pages_total)` is called now and then (phase `precondition` or `measure`; total None where
/// a trace's length is not known); Ctrl-C stops the run with KeyboardInterrupt.
#[pyfunction]
#[pyo3(signature = (progress=None, **kwargs))]
fn sim(
    py: Python<'_>,
    progress: Option<Py<PyAny>>,
    kwargs: Option<&Bound<'_, PyDict>>,
) -> PyResult<String> {
    let opts = options(kwargs)?;
    watch::run(py, progress, move |watch| {
        let spec = from_options::<SimSpec>(&opts)?.resolve()?;
        let totals = PhaseTotals::of(&spec);
        let r = lab::sim::run(&spec, &mut |phase, done| {
            watch.report(phase, done, totals.total(phase));
            watch.stop_if_cancelled();
        })?;
        Ok(serde_json::to_value(r)?.to_string())
    })
}

/// Pages each phase of a `sim` run writes, where known: what a progress bar counts to.
struct PhaseTotals {
    precondition: u64,
    measure: Option<u64>,
}

impl PhaseTotals {
    fn of(spec: &SimOptions) -> PhaseTotals {
        let logical = spec.config.logical_pages();
        let precondition = match spec.precondition {
            Precondition::None => 0,
            Precondition::Fill => logical,
            Precondition::Full { passes } => logical + (passes * logical as f64).ceil() as u64,
        };
        PhaseTotals {
            precondition,
            measure: lab::sim::planned_pages(spec),
        }
    }

    fn total(&self, phase: &str) -> Option<u64> {
        match phase {
            "precondition" => Some(self.precondition),
            "measure" => self.measure,
            _ => None,
        }
    }
}

/// `flashlab buffer-sim --json` for these options, as JSON text. `progress(pass,
/// references_done, references_total)` is called now and then (pass `count`, `simulate` or
/// `curve`; total None where the trace's length is not known); Ctrl-C stops the run with
/// KeyboardInterrupt.
#[pyfunction]
#[pyo3(signature = (progress=None, **kwargs))]
fn buffer_sim(
    py: Python<'_>,
    progress: Option<Py<PyAny>>,
    kwargs: Option<&Bound<'_, PyDict>>,
) -> PyResult<String> {
    let opts = options(kwargs)?;
    watch::run(py, progress, move |watch| {
        let spec = from_options::<BufferSimSpec>(&opts)?;
        let hook = lab::Watch {
            lines: false,
            counts: Some(watch.counts()),
            cancel: watch.cancel.clone(),
        };
        Ok(lab::buffer_sim::run(&spec, &hook)?.to_json().to_string())
    })
}

/// `flashlab reproduce NAME --json` for these options, as JSON text. `progress("steps",
/// steps_done, steps_total)` is called as the experiment's steps start and finish; Ctrl-C
/// stops it at its next step (or between two of its parallel runs) with KeyboardInterrupt.
#[pyfunction]
#[pyo3(signature = (name, progress=None, **kwargs))]
fn reproduce(
    py: Python<'_>,
    name: String,
    progress: Option<Py<PyAny>>,
    kwargs: Option<&Bound<'_, PyDict>>,
) -> PyResult<String> {
    let opts = options(kwargs)?;
    watch::run(py, progress, move |watch| {
        let spec = from_options::<ReproduceSpec>(&opts)?;
        let counts = watch.counts();
        let run = spec.execute_with(&name, |o| ReproduceOptions {
            progress_counts: Some(counts),
            ..o.with_cancel(watch.cancel.clone())
        })?;
        Ok(run.report.to_json())
    })
}

/// The options of `tool` (`sim`, `buffer_sim`, `reproduce`) as JSON text: `fields` (every
/// option a dict may hold) and `options` (name, type, default, help, value_name, required).
#[pyfunction]
fn spec_options(tool: &str) -> PyResult<String> {
    options::of(tool).map(|v| v.to_string()).ok_or_else(|| {
        FlashlabError::new_err(format!(
            "no tool {tool}: expected sim, buffer_sim or reproduce"
        ))
    })
}

/// Every shipped preset's SSD configuration by name, as JSON text.
#[pyfunction]
fn presets() -> PyResult<String> {
    Ok(lab::spec::command::presets().map_err(err)?.to_string())
}

/// A spec: a file's path, or (`is_json`) the spec itself as JSON text.
fn load_spec(spec: &str, is_json: bool) -> anyhow::Result<Spec> {
    if is_json {
        let v: Value = serde_json::from_str(spec)?;
        Spec::from_value(&v, "sweep")
    } else {
        Spec::from_file(Path::new(spec))
    }
}

/// The sweep's plan against its results file: headline, counts and one ticket per pending run.
#[pyfunction]
fn sweep_plan(
    py: Python<'_>,
    spec: String,
    is_json: bool,
    out: String,
    retry_failed: bool,
) -> PyResult<String> {
    py.detach(|| -> anyhow::Result<String> {
        let plan = Plan::new(load_spec(&spec, is_json)?, Path::new(&out), retry_failed)?;
        let tickets: Vec<Value> = plan.pending.iter().map(|&i| plan.ticket(i)).collect();
        Ok(json!({
            "name": plan.spec.name,
            "headline": plan.headline(Path::new(&out)),
            "runs": plan.runs.len(),
            "hashes": plan.runs.iter().map(|r| r.config_hash.as_str()).collect::<Vec<_>>(),
            "tickets": tickets,
        })
        .to_string())
    })
    .map_err(err)
}

/// Run one ticket here and return its row as JSON text (a failed run gives a row with its
/// error; only a malformed ticket raises).
#[pyfunction]
fn sweep_run(py: Python<'_>, ticket: String) -> PyResult<String> {
    py.detach(|| -> anyhow::Result<String> {
        let t: Value = serde_json::from_str(&ticket)?;
        Ok(sweep::run_ticket(&t)?.to_string())
    })
    .map_err(err)
}

/// The row of a ticket whose run could not finish at all (e.g. its Ray task failed past its
/// retries), recording `error`.
#[pyfunction]
fn sweep_error_row(ticket: String, error: String) -> PyResult<String> {
    let t: Value = serde_json::from_str(&ticket).map_err(|e| err(e.into()))?;
    Ok(sweep::ticket_error_row(&t, error).map_err(err)?.to_string())
}

/// A whole local sweep on `jobs` threads (as `flashlab sweep`); returns the summary table.
/// `progress` prints the plan's headline on stderr; `callback("sweep", runs_done, runs_to_run)`
/// is called as runs finish. Ctrl-C stops the sweep once the runs in flight have finished and
/// been written (the file stays whole and the sweep resumes from it), with KeyboardInterrupt.
#[pyfunction]
#[pyo3(signature = (spec, is_json, out, jobs=1, retry_failed=false, progress=true, callback=None))]
#[allow(clippy::too_many_arguments)] // the Python function's keyword arguments
fn sweep_local(
    py: Python<'_>,
    spec: String,
    is_json: bool,
    out: String,
    jobs: usize,
    retry_failed: bool,
    progress: bool,
    callback: Option<Py<PyAny>>,
) -> PyResult<String> {
    watch::run(py, callback, move |watch| {
        if jobs == 0 {
            anyhow::bail!("jobs 0: give at least one worker");
        }
        let out = Path::new(&out);
        let plan = Plan::new(load_spec(&spec, is_json)?, out, retry_failed)?;
        if progress {
            eprintln!("{}", plan.headline(out));
        }
        let pending = plan.pending.len() as u64;
        sweep::run_local(&plan, out, jobs, &mut |done| {
            watch.report("sweep", done, Some(pending));
            watch.stop_if_cancelled();
        })?;
        let finished = sweep::results::read(out)?;
        Ok(sweep::summary(&plan.spec, &plan.runs, &finished, out))
    })
}

/// The summary table of a sweep's results file.
#[pyfunction]
fn sweep_summary(py: Python<'_>, spec: String, is_json: bool, out: String) -> PyResult<String> {
    py.detach(|| -> anyhow::Result<String> {
        let spec = load_spec(&spec, is_json)?;
        let runs = spec.plan()?;
        let out = Path::new(&out);
        Ok(sweep::summary(
            &spec,
            &runs,
            &sweep::results::read(out)?,
            out,
        ))
    })
    .map_err(err)
}

#[pymodule]
fn _native(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add("FlashlabError", m.py().get_type::<FlashlabError>())?;
    m.add("__version__", env!("CARGO_PKG_VERSION"))?;
    m.add_function(wrap_pyfunction!(spec_options, m)?)?;
    m.add_function(wrap_pyfunction!(sim, m)?)?;
    m.add_function(wrap_pyfunction!(buffer_sim, m)?)?;
    m.add_function(wrap_pyfunction!(reproduce, m)?)?;
    m.add_function(wrap_pyfunction!(presets, m)?)?;
    m.add_function(wrap_pyfunction!(sweep_plan, m)?)?;
    m.add_function(wrap_pyfunction!(sweep_run, m)?)?;
    m.add_function(wrap_pyfunction!(sweep_error_row, m)?)?;
    m.add_function(wrap_pyfunction!(sweep_local, m)?)?;
    m.add_function(wrap_pyfunction!(sweep_summary, m)?)?;
    Ok(())
}
