//! Job files for `flashlab sim --job FILE.toml`: a `[device]` table with the device, volume
//! and run options of `flashlab sim` (the flags' long names with `_` for `-`), and one or more
//! `[[flow]]` tables, each a workload with its pace ([`FlowSpec`]). Every error names the
//! file, the line and the key, and what to give instead; an unknown key gets the nearest
//! known one. Relative paths (`config`, `trace:PATH`) are read from the job file's folder.

use super::flow::{parse_seconds, Bound, FlowSpec};
use super::{from_options, SimSpec, SpecError};
use crate::sim::SimOptions;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use toml::{Spanned, Value};

/// Keys of a `[[flow]]` table.
pub const FLOW_KEYS: &[&str] = &[
    "name",
    "workload",
    "share",
    "rate",
    "stream",
    "request_size",
    "start",
    "stop",
    "seed",
    "trace_format",
    "trace_mapping",
    "offset",
    "size",
];

/// `sim` options that belong to a flow or to the command line, not to `[device]`.
const NOT_DEVICE_KEYS: &[&str] = &[
    "workload",
    "request_size",
    "trace_format",
    "trace_mapping",
    "trace_timing",
    "job",
    "log_interval",
];

/// A job file that cannot run.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum JobError {
    #[error("--job {file}: {source}")]
    Read {
        file: PathBuf,
        #[source]
        source: std::io::Error,
    },
    /// Not TOML, or a value of the wrong type.
    #[error("{file}:{line}: {reason}")]
    Syntax {
        file: PathBuf,
        line: usize,
        reason: String,
    },
    #[error("{file}:{line}: {table}: unknown key `{key}`{advice}")]
    UnknownKey {
        file: PathBuf,
        line: usize,
        table: String,
        key: String,
        /// ", did you mean `...`?" (when one is near), then the known keys.
        advice: String,
    },
    #[error("{file}:{line}: {table}: `{field}`: {reason}")]
    Field {
        file: PathBuf,
        line: usize,
        table: String,
        field: String,
        reason: String,
    },
    #[error("{file}: {reason}")]
    Job { file: PathBuf, reason: String },
}

type Table = BTreeMap<Spanned<String>, Spanned<Value>>;

#[derive(serde::Deserialize)]
struct RawJob {
    #[serde(default)]
    device: Option<Spanned<Table>>,
    #[serde(default)]
    flow: Vec<Spanned<Table>>,
}

/// The source and its name, for line numbers.
struct Source<'a> {
    file: &'a Path,
    text: &'a str,
}

impl Source<'_> {
    fn line(&self, offset: usize) -> usize {
        self.text[..offset.min(self.text.len())]
            .matches('\n')
            .count()
            + 1
    }

    fn field(&self, at: usize, table: &str, field: &str, reason: impl ToString) -> JobError {
        JobError::Field {
            file: self.file.to_path_buf(),
            line: self.line(at),
            table: table.into(),
            field: field.into(),
            reason: reason.to_string(),
        }
    }
}

/// Read and resolve a job file into the options the simulator runs.
pub fn load(path: &Path) -> anyhow::Result<SimOptions> {
    let text = std::fs::read_to_string(path).map_err(|source| JobError::Read {
        file: path.to_path_buf(),
        source,
    })?;
    let src = Source {
        file: path,
        text: &text,
    };
    parse(&src)
}

fn parse(src: &Source) -> anyhow::Result<SimOptions> {
    let raw = top_level(src)?;
    let (device_spec, device_table) = device(src, raw.device.as_ref())?;
    let mut opts = device_spec
        .resolve_device()
        .map_err(|e| attribute(src, device_table, "[device]", e))?;
    if raw.flow.is_empty() {
        return Err(JobError::Job {
            file: src.file.to_path_buf(),
            reason: "no [[flow]] table: give at least one, e.g.\n[[flow]]\nname = \"writer\"\nworkload = \"uniform-write\"".into(),
        }
        .into());
    }
    let mut names = BTreeMap::new();
    let mut by_rate = None;
    for (k, t) in raw.flow.iter().enumerate() {
        let label = format!("[[flow]] #{}", k + 1);
        let spec = flow(src, t, &label, k)?;
        if let Some(first) = names.insert(spec.name.clone(), k + 1) {
            return Err(src
                .field(
                    t.span().start,
                    &label,
                    "name",
                    format!(
                        "`{}` is also flow #{first}'s name; give each flow its own",
                        spec.name
                    ),
                )
                .into());
        }
        let rate = spec.rate_iops.is_some();
        if *by_rate.get_or_insert(rate) != rate {
            return Err(src.field(t.span().start, &label, if rate { "rate" } else { "share" }, "every flow of a job is paced the same way: give all flows a `rate` (open loop) or none (`share`, closed loop)").into());
        }
        let f = spec
            .resolve(&opts.config, k, opts.seed)
            .map_err(|e| attribute(src, Some(t), &label, e))?;
        opts.flows.push(f);
    }
    opts.job_path = Some(src.file.to_path_buf());
    Ok(opts)
}

fn top_level(src: &Source) -> Result<RawJob, JobError> {
    let syntax = |e: toml::de::Error| JobError::Syntax {
        file: src.file.to_path_buf(),
        line: e.span().map_or(1, |s| src.line(s.start)),
        reason: e.message().trim().to_string(),
    };
    let top: BTreeMap<Spanned<String>, Spanned<Value>> =
        toml::from_str(src.text).map_err(syntax)?;
    for key in top.keys() {
        check_key(src, key, "the job file", &["device", "flow"])?;
    }
    toml::from_str(src.text).map_err(syntax)
}

/// `key` is one of `known`, or an error naming the nearest.
fn check_key(
    src: &Source,
    key: &Spanned<String>,
    table: &str,
    known: &[&str],
) -> Result<(), JobError> {
    if known.contains(&key.get_ref().as_str()) {
        return Ok(());
    }
    let nearest = known
        .iter()
        .map(|k| (edit_distance(k, key.get_ref()), *k))
        .min()
        .filter(|(d, k)| *d <= 2.max(k.len() / 3));
    Err(JobError::UnknownKey {
        file: src.file.to_path_buf(),
        line: src.line(key.span().start),
        table: table.into(),
        key: key.get_ref().clone(),
        advice: format!(
            "{}; known keys: {}",
            nearest.map_or(String::new(), |(_, k)| format!(", did you mean `{k}`?")),
            known.join(", ")
        ),
    })
}

/// Levenshtein distance (insertions, deletions, substitutions) between two keys.
fn edit_distance(a: &str, b: &str) -> usize {
    let b: Vec<char> = b.chars().collect();
    let mut row: Vec<usize> = (0..=b.len()).collect();
    for (i, ca) in a.chars().enumerate() {
        let mut prev = row[0];
        row[0] = i + 1;
        for (j, &cb) in b.iter().enumerate() {
            let next = (prev + usize::from(ca != cb))
                .min(row[j] + 1)
                .min(row[j + 1] + 1);
            prev = row[j + 1];
            row[j + 1] = next;
        }
    }
    row[b.len()]
}

/// The `[device]` table as a `SimSpec` (with the file's folder for a relative `config`).
fn device<'a>(
    src: &Source,
    table: Option<&'a Spanned<Table>>,
) -> anyhow::Result<(SimSpec, Option<&'a Spanned<Table>>)> {
    let Some(t) = table else {
        return Ok((SimSpec::default(), None));
    };
    let known: Vec<&str> = device_keys();
    let mut options = serde_json::Map::new();
    for (key, value) in t.get_ref() {
        check_key(src, key, "[device]", &known)?;
        let mut v = json_of(src, value, "[device]", key.get_ref())?;
        if key.get_ref() == "config" {
            if let serde_json::Value::String(p) = &v {
                v = serde_json::Value::String(beside(src.file, p));
            }
        }
        // One key at a time first, so a bad value is reported at its own line.
        let one = serde_json::Map::from_iter([(key.get_ref().clone(), v.clone())]);
        from_options::<SimSpec>(&one)
            .map_err(|e| src.field(value.span().start, "[device]", key.get_ref(), e))?;
        options.insert(key.get_ref().clone(), v);
    }
    let spec = from_options::<SimSpec>(&options)?;
    Ok((spec, Some(t)))
}

fn device_keys() -> Vec<&'static str> {
    const ALL: &[&str] = &[
        "preset",
        "config",
        "ftl",
        "gc",
        "op",
        "capacity",
        "streams",
        "stream_policy",
        "gc_stream",
        "gc_free_blocks_min",
        "log_blocks",
        "cmt_entries",
        "timing",
        "queue_depth",
        "max_memory",
        "max_flash_writes",
        "payloads",
        "check_invariants",
        "workload",
        "trace_format",
        "trace_mapping",
        "trace_timing",
        "request_size",
        "write_volume",
        "precondition",
        "sampler",
        "seed",
        "job",
        "log_interval",
    ];
    ALL.iter()
        .copied()
        .filter(|k| !NOT_DEVICE_KEYS.contains(k))
        .collect()
}

/// A path as the job file means it: relative to the file's folder.
fn beside(file: &Path, p: &str) -> String {
    let path = Path::new(p);
    match (path.is_relative(), file.parent()) {
        (true, Some(dir)) if !dir.as_os_str().is_empty() => dir.join(path).display().to_string(),
        _ => p.to_string(),
    }
}

fn json_of(
    src: &Source,
    v: &Spanned<Value>,
    table: &str,
    key: &str,
) -> Result<serde_json::Value, JobError> {
    Ok(match v.get_ref() {
        Value::String(s) => s.clone().into(),
        Value::Integer(i) => (*i).into(),
        Value::Float(f) => {
            serde_json::Number::from_f64(*f).map_or(serde_json::Value::Null, Into::into)
        }
        Value::Boolean(b) => (*b).into(),
        other => {
            return Err(src.field(
                v.span().start,
                table,
                key,
                format!(
                    "expected a string, a number or a boolean, got {}",
                    other.type_str()
                ),
            ))
        }
    })
}

/// One `[[flow]]` table as a [`FlowSpec`] (typed, not yet resolved against the device).
fn flow(src: &Source, t: &Spanned<Table>, label: &str, index: usize) -> Result<FlowSpec, JobError> {
    let mut spec = FlowSpec {
        name: format!("flow{}", index + 1),
        ..FlowSpec::default()
    };
    for (key, value) in t.get_ref() {
        check_key(src, key, label, FLOW_KEYS)?;
        set_flow_key(src, &mut spec, key.get_ref(), value, label)?;
    }
    if !t.get_ref().keys().any(|k| k.get_ref() == "workload") {
        return Err(src.field(t.span().start, label, "workload", "missing: give the flow's workload in a --workload form, e.g. workload = \"uniform-write\""));
    }
    if let Some(path) = spec.workload.strip_prefix("trace:") {
        spec.workload = format!("trace:{}", beside(src.file, path));
    }
    Ok(spec)
}

fn set_flow_key(
    src: &Source,
    spec: &mut FlowSpec,
    key: &str,
    v: &Spanned<Value>,
    label: &str,
) -> Result<(), JobError> {
    let bad = |reason: &str| src.field(v.span().start, label, key, reason);
    let text = || match v.get_ref() {
        Value::String(s) => Ok(s.clone()),
        Value::Integer(i) => Ok(i.to_string()),
        _ => Err(bad("expected a string, e.g. \"16KiB\"")),
    };
    let number = || match v.get_ref() {
        Value::Integer(i) => Ok(*i as f64),
        Value::Float(f) => Ok(*f),
        _ => Err(bad("expected a number")),
    };
    let count = |most: u64| match v.get_ref() {
        Value::Integer(i) if *i >= 0 && (*i as u64) <= most => Ok(*i as u64),
        _ => Err(bad(&format!("expected a whole number from 0 to {most}"))),
    };
    match key {
        "name" => spec.name = text()?,
        "workload" => spec.workload = text()?,
        "share" => spec.share = Some(number()?),
        "rate" => spec.rate_iops = Some(number()?),
        "stream" => spec.stream = Some(count(u16::MAX as u64)? as u16),
        "request_size" => spec.request_size = Some(text()?),
        "start" | "stop" => {
            let b =
                match v.get_ref() {
                    Value::Integer(_) => Bound::Requests(count(u64::MAX >> 1)?),
                    Value::String(s) => Bound::Seconds(parse_seconds(s).map_err(|e| bad(&e))?),
                    _ => return Err(bad(
                        "expected a request count (e.g. 100000) or a simulated time (e.g. \"2s\")",
                    )),
                };
            *if key == "start" {
                &mut spec.start
            } else {
                &mut spec.stop
            } = Some(b);
        }
        "seed" => spec.seed = Some(count(u64::MAX >> 1)?),
        "trace_format" => spec.trace_format = Some(text()?),
        "trace_mapping" => spec.trace_mapping = Some(text()?),
        "offset" => spec.offset = Some(text()?),
        "size" => spec.size = Some(text()?),
        _ => unreachable!("keys are checked against FLOW_KEYS"),
    }
    Ok(())
}

/// An error of resolving a table, at the line of the key it names (else the table's).
fn attribute(
    src: &Source,
    table: Option<&Spanned<Table>>,
    label: &str,
    e: anyhow::Error,
) -> anyhow::Error {
    let field = e.downcast_ref::<SpecError>().map(|s| {
        let f = s.field();
        let f = f.split_whitespace().next().unwrap_or(f);
        f.trim_start_matches("--").replace('-', "_")
    });
    let at = table.map_or(0, |t| {
        let key = field
            .as_deref()
            .and_then(|f| t.get_ref().iter().find(|(k, _)| k.get_ref() == f));
        key.map_or(t.span().start, |(_, v)| v.span().start)
    });
    let field = field.unwrap_or_else(|| label.trim_matches(['[', ']']).to_string());
    src.field(at, label, &field, format!("{e:#}")).into()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn err(text: &str) -> String {
        let src = Source {
            file: Path::new("job.toml"),
            text,
        };
        parse(&src).map(|_| ()).unwrap_err().to_string()
    }

    const HEAD: &str = "[device]\ncapacity = \"64MiB\"\nop = 0.28\n\n";

    #[test]
    fn an_unknown_key_names_its_line_and_the_nearest_key() {
        let e = err(&format!(
            "{HEAD}[[flow]]\nworkload = \"uniform-write\"\nshrae = 2\n"
        ));
        assert!(
            e.starts_with("job.toml:7: [[flow]] #1: unknown key `shrae`, did you mean `share`?"),
            "{e}"
        );
        let e = err("[device]\ncapacty = \"64MiB\"\n");
        assert!(
            e.starts_with("job.toml:2: [device]: unknown key `capacty`, did you mean `capacity`?"),
            "{e}"
        );
        let e = err("[devise]\n");
        assert!(e.contains("did you mean `device`?"), "{e}");
    }

    #[test]
    fn a_bad_value_names_its_line_and_field() {
        let e = err(&format!("{HEAD}[[flow]]\nworkload = \"uniform-write\"\n\n[[flow]]\nname = \"b\"\nworkload = \"zipf-write:x\"\n"));
        assert!(
            e.starts_with("job.toml:10: [[flow]] #2: `workload`:"),
            "{e}"
        );
        let e = err(&format!(
            "{HEAD}[[flow]]\nworkload = \"uniform-write\"\nrequest_size = \"5000\"\n"
        ));
        assert!(
            e.starts_with("job.toml:7: [[flow]] #1: `request_size`:"),
            "{e}"
        );
        let e = err("[device]\nop = \"lots\"\n[[flow]]\nworkload = \"uniform-write\"\n");
        assert!(e.starts_with("job.toml:2: [device]: `op`:"), "{e}");
        let e = err(&format!(
            "{HEAD}[[flow]]\nworkload = \"uniform-write\"\nstart = \"2s\"\n"
        ));
        assert!(
            e.starts_with("job.toml:7: [[flow]] #1: `start`: start in seconds needs rate"),
            "{e}"
        );
    }

    #[test]
    fn a_job_needs_flows_with_workloads_and_one_pace() {
        assert!(err(HEAD).contains("no [[flow]] table"));
        let e = err(&format!("{HEAD}[[flow]]\nname = \"a\"\n"));
        assert!(
            e.starts_with("job.toml:5: [[flow]] #1: `workload`: missing"),
            "{e}"
        );
        let e = err(&format!("{HEAD}[[flow]]\nworkload = \"uniform-write\"\nrate = 100\n[[flow]]\nworkload = \"uniform-write\"\n"));
        assert!(e.contains("paced the same way"), "{e}");
        let e = err(&format!(
            "{HEAD}[[flow]]\nworkload = \"uniform-write\"\nop = 3\n"
        ));
        assert!(e.contains("unknown key `op`"), "{e}");
        let e = err("[device]\ncapacity = \n");
        assert!(e.starts_with("job.toml:2:"), "{e}");
    }
}
