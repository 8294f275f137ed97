//! The results file: one JSON object per line, appended as runs finish, so that a sweep killed
//! at any point resumes from what the file holds. A run is finished when a row with its
//! `config_hash` is in the file, whether it succeeded (`"status": "ok"`) or failed
//! (`"status": "error"` and its `error`); failed runs run again only with `--retry-failed`.
//!
//! A row: `sweep`, `index`, `command`, `config_hash`, `vary` (this run's varied values),
//! `config` (every option, given or defaulted), `status`, `result` (the object `flashlab
//! COMMAND --json` prints) or `error`, `wall_seconds`, `host`, `pid` (the process that ran it).

use super::spec::{Run, Spec};
use anyhow::{bail, Context, Result};
use serde_json::{json, Map, Value};
use std::collections::HashMap;
use std::fs::{File, OpenOptions};
use std::io::{Read, Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};
use std::time::Instant;

/// A run's row: its identity, then its result or its error.
pub fn row(spec: &Spec, run: &Run, outcome: Result<Value, String>, wall_seconds: f64) -> Value {
    let mut row = json!({
        "sweep": spec.name,
        "index": run.index,
        "command": spec.command.name(),
        "config_hash": run.config_hash,
        "vary": run.vary,
        "config": run.config,
    });
    let obj = row.as_object_mut().expect("a json! object");
    match outcome {
        Ok(result) => {
            obj.insert("status".into(), "ok".into());
            obj.insert("result".into(), result);
        }
        Err(error) => {
            obj.insert("status".into(), "error".into());
            obj.insert("error".into(), error.into());
        }
    }
    obj.insert("wall_seconds".into(), json!(wall_seconds));
    obj.insert("host".into(), hostname().into());
    obj.insert("pid".into(), std::process::id().into());
    row
}

/// Run one planned run and make its row. A run that fails, or panics, gives a row with its
/// error: the sweep goes on.
pub fn execute(spec: &Spec, run: &Run) -> Value {
    let t0 = Instant::now();
    let outcome = std::panic::catch_unwind(|| -> Result<Value> { spec.command.run(&run.options) });
    let outcome = match outcome {
        Ok(Ok(v)) => Ok(v),
        Ok(Err(e)) => Err(crate::harness::error_chain(&e)),
        Err(panic) => Err(format!("panicked: {}", panic_message(&panic))),
    };
    row(spec, run, outcome, t0.elapsed().as_secs_f64())
}

fn panic_message(p: &Box<dyn std::any::Any + Send>) -> String {
    p.downcast_ref::<&str>()
        .map(|s| s.to_string())
        .or_else(|| p.downcast_ref::<String>().cloned())
        .unwrap_or_else(|| "(no message)".into())
}

fn hostname() -> String {
    std::fs::read_to_string("/proc/sys/kernel/hostname")
        .map(|h| h.trim().to_string())
        .unwrap_or_else(|_| "unknown".into())
}

/// The rows of a results file, by `config_hash` (the last row of a hash wins).
pub struct Finished {
    pub rows: HashMap<String, Value>,
}

impl Finished {
    /// Whether `run` needs no (re)run.
    pub fn done(&self, run: &Run, retry_failed: bool) -> bool {
        match self.rows.get(&run.config_hash) {
            None => false,
            Some(r) => !(retry_failed && r["status"] != "ok"),
        }
    }
}

/// Read the rows of `path` (none if it does not exist). A last line without its newline — a
/// row cut by a kill — is dropped from the file, with a note on stderr; any other line that is
/// not a JSON object is an error naming it.
pub fn read(path: &Path) -> Result<Finished> {
    let mut rows = HashMap::new();
    let mut file = match OpenOptions::new().read(true).write(true).open(path) {
        Ok(f) => f,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Finished { rows }),
        Err(e) => return Err(e).with_context(|| format!("--out {}", path.display())),
    };
    let meta = file
        .metadata()
        .with_context(|| format!("--out {}", path.display()))?;
    if !meta.is_file() {
        anyhow::bail!(
            "--out {}: not a regular file (the sweep reads its finished rows back from it and appends new ones); give a file path",
            path.display()
        );
    }
    let mut text = String::new();
    file.read_to_string(&mut text)
        .with_context(|| format!("--out {}: not UTF-8 text", path.display()))?;
    let complete = text.rfind('\n').map_or(0, |i| i + 1);
    if complete < text.len() {
        eprintln!(
            "sweep: {}: dropped a cut last line ({} bytes; a run killed while its row was written — it runs again)",
            path.display(),
            text.len() - complete
        );
        file.set_len(complete as u64)
            .and_then(|()| file.seek(SeekFrom::End(0)).map(|_| ()))
            .with_context(|| format!("--out {}", path.display()))?;
    }
    for (i, line) in text[..complete].lines().enumerate() {
        if line.trim().is_empty() {
            continue;
        }
        let row: Map<String, Value> = serde_json::from_str(line).with_context(|| {
            format!("--out {} line {}: not a JSON object (a sweep's results file holds one row per line; move the file away or fix the line)", path.display(), i + 1)
        })?;
        let Some(Value::String(hash)) = row.get("config_hash") else {
            bail!(
                "--out {} line {}: a row without config_hash (is this a sweep's results file?)",
                path.display(),
                i + 1
            );
        };
        rows.insert(hash.clone(), Value::Object(row));
    }
    Ok(Finished { rows })
}

/// Appends rows, one whole line per write, flushed at once.
pub struct Appender {
    file: File,
    path: PathBuf,
}

impl Appender {
    pub fn open(path: &Path) -> Result<Appender> {
        let file = OpenOptions::new()
            .create(true)
            .append(true)
            .open(path)
            .with_context(|| format!("--out {}", path.display()))?;
        Ok(Appender {
            file,
            path: path.to_path_buf(),
        })
    }

    pub fn append(&mut self, row: &Value) -> Result<()> {
        let mut line = row.to_string();
        line.push('\n');
        self.file
            .write_all(line.as_bytes())
            .and_then(|()| self.file.flush())
            .with_context(|| format!("--out {}", self.path.display()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_cut_last_line_is_dropped_and_a_bad_line_is_named() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("r.jsonl");
        std::fs::write(
            &p,
            "{\"config_hash\":\"a\",\"status\":\"ok\"}\n{\"config_ha",
        )
        .unwrap();
        let f = read(&p).unwrap();
        assert_eq!(f.rows.len(), 1);
        assert!(std::fs::read_to_string(&p).unwrap().ends_with("}\n"));
        std::fs::write(&p, "{\"config_hash\":\"a\"}\nnot json\n").unwrap();
        let e = format!("{:#}", read(&p).err().unwrap());
        assert!(e.contains("line 2"), "{e}");
        std::fs::write(&p, "{\"x\":1}\n").unwrap();
        assert!(read(&p).is_err());
    }
}
