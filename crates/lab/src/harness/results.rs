//! `results.json` (moved here from the renderer, which knows no experiment): what `flashlab reproduce all` writes and `flashlab report` reads back —
//! every experiment's [`Report`] exactly as `reproduce NAME --json` prints it, its text tables
//! (so the page and the CSVs can be re-rendered without a re-run), and the run's metadata.
//!
//! Loading checks more than the syntax: a malformed or partial file gives an error naming the
//! key path (`experiments[1].report.rows`), the line and column, and what to do.

use crate::{Report, Table};
use render::ReportError;
use serde::{Deserialize, Serialize};
use std::path::{Path, PathBuf};

/// The file's name in a report directory.
pub const FILE_NAME: &str = "results.json";

/// The `format` value this version writes and reads.
pub const FORMAT: &str = "flashlab-results/1";

/// The whole file.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct Results {
    /// Always [`FORMAT`].
    pub format: String,
    pub run: RunMeta,
    /// In run order (the registry's order).
    pub experiments: Vec<ExperimentResult>,
}

/// How, where and when the run was made.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct RunMeta {
    pub flashlab_version: String,
    /// `git rev-parse HEAD` of the source (with `-dirty` for uncommitted changes), or `unknown`.
    pub git_commit: String,
    /// The command line that made the run, shell-quoted.
    pub command_line: String,
    pub seed: u64,
    pub scale: String,
    /// `--device` as given (`sim` when absent).
    pub device: String,
    /// RFC 3339, UTC.
    pub started_at: String,
    pub finished_at: String,
    pub elapsed_seconds: f64,
    pub machine: Machine,
}

/// The machine the run was made on.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct Machine {
    pub cpu_model: String,
    pub cores: u32,
    /// Physical memory, or null where unknown.
    pub memory_bytes: Option<u64>,
    pub kernel: String,
    /// The directory real device files go to (`--dir`, or the working directory).
    pub device_dir: String,
    /// Its file system (`ext4`, `tmpfs`, ...), or `unknown`.
    pub device_dir_file_system: String,
}

/// Whether an experiment produced a report.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Status {
    Ok,
    Failed,
}

/// One experiment of the run.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct ExperimentResult {
    /// The registry's name (`ioa-ftl`).
    pub name: String,
    /// The paper it reproduces (`P4`).
    pub paper: String,
    pub about: String,
    /// The exact command that re-runs this experiment alone.
    pub command: String,
    pub status: Status,
    /// Why it failed (`status: failed`).
    #[serde(default)]
    pub error: Option<String>,
    pub elapsed_seconds: f64,
    /// The experiment's report, as `reproduce NAME --json` prints it (`status: ok`).
    #[serde(default)]
    pub report: Option<Report>,
    /// Its human-readable tables, in print order.
    #[serde(default)]
    pub tables: Vec<Table>,
}

impl Results {
    /// Read and check `path`.
    pub fn load(path: &Path) -> Result<Results, ReportError> {
        let text = bounded::read_text(path, 1 << 30, "a results file").map_err(|source| {
            ReportError::Read {
                path: path.to_path_buf(),
                source,
            }
        })?;
        Results::parse(&text, path)
    }

    /// Parse and check `text` (`path` names it in errors).
    pub fn parse(text: &str, path: &Path) -> Result<Results, ReportError> {
        let de = &mut serde_json::Deserializer::from_str(text);
        let results: Results = serde_path_to_error::deserialize(de).map_err(|e| {
            let key_path = e.path().to_string();
            let inner = e.into_inner();
            ReportError::Parse {
                path: path.to_path_buf(),
                key_path,
                line: inner.line(),
                column: inner.column(),
                message: without_position(&inner.to_string()),
            }
        })?;
        results.check(path)?;
        Ok(results)
    }

    /// What serde cannot check: the format tag, and that each experiment's status, error
    /// and report agree.
    fn check(&self, path: &Path) -> Result<(), ReportError> {
        let invalid = |key_path: String, message: String| ReportError::Invalid {
            path: path.to_path_buf(),
            key_path,
            message,
        };
        if self.format != FORMAT {
            return Err(invalid(
                "format".into(),
                format!(
                    "`{}` is not a format this flashlab reads (expected `{FORMAT}`); re-run `flashlab reproduce all` with this version",
                    self.format
                ),
            ));
        }
        for (i, e) in self.experiments.iter().enumerate() {
            let at = |key: &str| format!("experiments[{i}].{key}");
            match (e.status, &e.report, &e.error) {
                (Status::Ok, None, _) => {
                    return Err(invalid(
                        at("report"),
                        format!("missing for `{}`, whose status is ok", e.name),
                    ))
                }
                (Status::Failed, _, None) => {
                    return Err(invalid(
                        at("error"),
                        format!("missing for `{}`, whose status is failed", e.name),
                    ))
                }
                _ => {}
            }
            if let Some(r) = &e.report {
                if r.experiment != e.name {
                    return Err(invalid(
                        at("report.experiment"),
                        format!("`{}` but the entry is `{}`", r.experiment, e.name),
                    ));
                }
            }
        }
        Ok(())
    }

    /// Write the file (pretty-printed JSON) as `DIR/results.json`; returns its path.
    pub fn save(&self, dir: &Path) -> Result<PathBuf, ReportError> {
        let text = serde_json::to_string_pretty(self).expect("results always serialize");
        render::write_file(dir, FILE_NAME, (text + "\n").as_bytes())
    }
}

/// serde_json's message without its " at line L column C" (the error says it apart).
fn without_position(message: &str) -> String {
    match message.rfind(" at line ") {
        Some(i) => message[..i].to_string(),
        None => message.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_position_is_cut_from_the_message() {
        assert_eq!(
            without_position("missing field `rows` at line 3 column 1"),
            "missing field `rows`"
        );
        assert_eq!(without_position("EOF"), "EOF");
    }
}
