//! `flashlab._native`: the flashlab engine for Python, through the CLI's own library
//! (`flashlab::api`, `flashlab::sweep`). Keyword arguments become the CLI's long flags and are
//! parsed by the same clap definitions; results are the JSON text the CLI prints (the
//! pure-Python layer, `python/flashlab`, turns it into dicts); errors raise `FlashlabError`
//! with the message the CLI prints after `error: `. Runs release the GIL.

use flashlab::api::{self, Command, OptionValue};
use flashlab::sweep::{self, spec::Spec, Plan};
use pyo3::exceptions::{PyException, PyTypeError};
use pyo3::prelude::*;
use pyo3::types::{PyBool, PyDict, PyFloat, PyInt, PyString};
use serde_json::{json, Value};
use std::path::Path;

pyo3::create_exception!(
    flashlab,
    FlashlabError,
    PyException,
    "A run or sweep was refused or failed; the message is the one the flashlab CLI prints."
);

fn err(e: anyhow::Error) -> PyErr {
    FlashlabError::new_err(flashlab::error_chain(&e))
}

/// Keyword arguments as options: `True`/`False` as flags, strings as they are, integers and
/// floats as their shortest decimal text (the text that reads back as the same number); `None`
/// leaves the option out.
fn options(kwargs: Option<&Bound<'_, PyDict>>) -> PyResult<Vec<(String, OptionValue)>> {
    let mut out = Vec::new();
    let Some(kwargs) = kwargs else {
        return Ok(out);
    };
    for (k, v) in kwargs.iter() {
        let name: String = k.extract()?;
        let value = if v.is_none() {
            continue;
        } else if v.is_instance_of::<PyBool>() {
            OptionValue::Flag(v.extract::<bool>()?)
        } else if v.is_instance_of::<PyString>() {
            OptionValue::Text(v.extract::<String>()?)
        } else if v.is_instance_of::<PyInt>() {
            OptionValue::Text(v.extract::<i128>()?.to_string())
        } else if v.is_instance_of::<PyFloat>() {
            OptionValue::Text(v.extract::<f64>()?.to_string())
        } else {
            return Err(PyTypeError::new_err(format!(
                "option {name}: expected a string, a number or a boolean, got {}",
                v.get_type().name()?
            )));
        };
        out.push((name, value));
    }
    Ok(out)
}

/// `flashlab sim --json` for these options, as JSON text.
#[pyfunction]
#[pyo3(signature = (**kwargs))]
fn sim(py: Python<'_>, kwargs: Option<&Bound<'_, PyDict>>) -> PyResult<String> {
    let opts = options(kwargs)?;
    py.detach(|| api::run_json(Command::Sim, &opts))
        .map_err(err)
}

/// `flashlab buffer-sim --json` for these options, as JSON text.
#[pyfunction]
#[pyo3(signature = (**kwargs))]
fn buffer_sim(py: Python<'_>, kwargs: Option<&Bound<'_, PyDict>>) -> PyResult<String> {
    let opts = options(kwargs)?;
    py.detach(|| api::run_json(Command::BufferSim, &opts))
        .map_err(err)
}

/// `flashlab reproduce NAME --json` for these options, as JSON text.
#[pyfunction]
#[pyo3(signature = (name, **kwargs))]
fn reproduce(py: Python<'_>, name: String, kwargs: Option<&Bound<'_, PyDict>>) -> PyResult<String> {
    let opts = options(kwargs)?;
    py.detach(|| api::reproduce_json(&name, &opts)).map_err(err)
}

/// Every shipped preset's SSD configuration by name, as JSON text.
#[pyfunction]
fn presets() -> PyResult<String> {
    api::presets_json().map_err(err)
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
#[pyfunction]
#[pyo3(signature = (spec, is_json, out, jobs=1, retry_failed=false, progress=true))]
fn sweep_local(
    py: Python<'_>,
    spec: String,
    is_json: bool,
    out: String,
    jobs: usize,
    retry_failed: bool,
    progress: bool,
) -> PyResult<String> {
    py.detach(|| -> anyhow::Result<String> {
        if jobs == 0 {
            anyhow::bail!("jobs 0: give at least one worker");
        }
        let out = Path::new(&out);
        let plan = Plan::new(load_spec(&spec, is_json)?, out, retry_failed)?;
        if progress {
            eprintln!("{}", plan.headline(out));
        }
        sweep::run_local(&plan, out, jobs, progress)?;
        let finished = sweep::results::read(out)?;
        Ok(sweep::summary(&plan.spec, &plan.runs, &finished, out))
    })
    .map_err(err)
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
