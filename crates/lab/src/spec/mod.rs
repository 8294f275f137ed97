//! Run specs: what a run of each tool takes, as one serde type per tool with `Default`,
//! documented units and defaults, and `validate()`. The command line's flags derive from them
//! (feature `clap`), the Python package passes a dict that deserializes into them
//! ([`from_options`]) and a sweep's TOML rows deserialize into them, so a run does not depend
//! on which of them started it.
//!
//! Field names are the command line's long flags with `_` for `-`; errors name the flag
//! (`--write-volume 0x: ...`), the text the command line prints.

pub mod bench_device;
pub mod buffer_sim;
pub mod command;
pub mod de;
pub mod flow;
pub mod job;
pub mod lifetime;
pub mod reproduce;
pub mod sim;

pub use bench_device::BenchDeviceSpec;
pub use buffer_sim::{BufferSimSpec, PageTraceSpec};
pub use command::Command;
pub use flow::FlowSpec;
pub use lifetime::LifetimeSpec;
pub use reproduce::ReproduceSpec;
pub use sim::SimSpec;

use anyhow::{anyhow, bail, Result};
use serde::{de::DeserializeOwned, Serialize};
use serde_json::{Map, Value};
use std::collections::BTreeMap;

/// A spec that cannot run: the field (as its command-line flag), the value and what to do.
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
pub enum SpecError {
    /// `field`'s value is not one the run takes; `expected` says what it takes.
    #[error("{field} {value}: {expected}")]
    Value {
        field: &'static str,
        value: String,
        expected: String,
    },
    /// `field` is given where it has no effect or lacks a companion; `rule` says which.
    #[error("{field} {rule}")]
    Rule { field: &'static str, rule: String },
    /// `field` is refused outright (or its text did not parse); `reason` says why.
    #[error("{field}: {reason}")]
    Refused { field: &'static str, reason: String },
    /// `field` is wrong as the whole `text` (which names the field) says.
    #[error("{text}")]
    Stated { field: &'static str, text: String },
}

impl SpecError {
    pub fn value(field: &'static str, value: impl ToString, expected: impl Into<String>) -> Self {
        SpecError::Value {
            field,
            value: value.to_string(),
            expected: expected.into(),
        }
    }

    pub fn rule(field: &'static str, rule: impl Into<String>) -> Self {
        SpecError::Rule {
            field,
            rule: rule.into(),
        }
    }

    pub fn stated(field: &'static str, text: impl ToString) -> Self {
        SpecError::Stated {
            field,
            text: text.to_string(),
        }
    }

    /// The field (as its command-line flag) the error is about.
    pub fn field(&self) -> &'static str {
        match self {
            SpecError::Value { field, .. }
            | SpecError::Rule { field, .. }
            | SpecError::Refused { field, .. }
            | SpecError::Stated { field, .. } => field,
        }
    }

    pub fn refused(field: &'static str, reason: impl Into<String>) -> Self {
        SpecError::Refused {
            field,
            reason: reason.into(),
        }
    }
}

/// A tool's run spec.
pub trait RunSpec: Serialize + DeserializeOwned + Default {
    /// Fields whose command-line value name is not the field's name upper-cased.
    const VALUE_NAMES: &'static [(&'static str, &'static str)] = &[];

    /// Every check that needs no file or device: the run refuses what this refuses.
    fn validate(&self) -> Result<(), SpecError>;
}

/// Options that only shape the command line's output; a caller of [`from_options`] gets the
/// result as a value and runs are quiet.
const CLI_ONLY: [&str; 3] = ["json", "output", "quiet"];

/// The spec's fields, named as its options, with their default values (null: none).
fn defaults<S: RunSpec>() -> Map<String, Value> {
    match serde_json::to_value(S::default()) {
        Ok(Value::Object(m)) => m,
        _ => unreachable!("a run spec serializes to a JSON object"),
    }
}

/// Refuse names that are not a spec field, with the message the command line gives for an
/// unknown flag.
fn check_names<S: RunSpec>(options: &Map<String, Value>) -> Result<()> {
    let fields = defaults::<S>();
    for name in options.keys() {
        let valid = name.starts_with(|c: char| c.is_ascii_lowercase())
            && name
                .chars()
                .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_');
        if !valid {
            bail!("option `{name}`: expected a name like the command line's long flags, with _ for - (e.g. write_volume for --write-volume)");
        }
        if CLI_ONLY.contains(&name.as_str()) {
            bail!("option {name}: --{name} shapes the command line's output; here the result is returned as a value and runs are quiet");
        }
        if !fields.contains_key(name) {
            bail!("unexpected argument '--{}' found", flag(name));
        }
    }
    Ok(())
}

fn flag(name: &str) -> String {
    name.replace('_', "-")
}

/// The spec these options (a Python dict, a sweep row) describe; options left out take their
/// defaults, a null value is left out. Not validated: the run validates.
pub fn from_options<S: RunSpec>(options: &Map<String, Value>) -> Result<S> {
    check_names::<S>(options)?;
    let given: Map<String, Value> = options
        .iter()
        .filter(|(_, v)| !v.is_null())
        .map(|(k, v)| (k.clone(), v.clone()))
        .collect();
    serde_path_to_error::deserialize(Value::Object(given.clone())).map_err(|e| {
        let field = e.path().iter().next().map(|s| s.to_string());
        let inner = e.inner().to_string();
        match field.as_deref().and_then(|f| given.get(f).map(|v| (f, v))) {
            Some((f, v)) => {
                let value_name = S::VALUE_NAMES
                    .iter()
                    .find(|(n, _)| *n == f)
                    .map_or(f.to_ascii_uppercase(), |(_, vn)| vn.to_string());
                anyhow!(
                    "invalid value '{}' for '--{} <{value_name}>': {inner}",
                    text_of(v),
                    flag(f)
                )
            }
            None => anyhow!("{inner}"),
        }
    })
}

/// An option's value as its command-line text.
fn text_of(v: &Value) -> String {
    match v {
        Value::String(s) => s.clone(),
        other => other.to_string(),
    }
}

/// Every option of the run — given or defaulted — without those with neither, keys sorted
/// (its JSON is canonical: a sweep hashes it). Values read as typed: `true`/`false` as
/// booleans, decimal numbers as numbers, the rest (`256MiB`, `1x`, `greedy`) as text, so
/// `op = 1` and `op = "1"` are one run.
pub fn effective_config<S: RunSpec>(
    options: &Map<String, Value>,
) -> Result<BTreeMap<String, Value>> {
    from_options::<S>(options)?;
    let mut config: BTreeMap<String, Value> = defaults::<S>()
        .into_iter()
        .filter(|(_, v)| !v.is_null())
        .map(|(k, v)| (k, typed(&default_text(&v))))
        .collect();
    for (k, v) in options {
        if !v.is_null() {
            config.insert(k.clone(), typed(&text_of(v)));
        }
    }
    Ok(config)
}

/// A default's text as the command line shows it (`225`, not `225.0`).
fn default_text(v: &Value) -> String {
    match v {
        Value::Number(n) if !(n.is_i64() || n.is_u64()) => {
            n.as_f64().map_or(n.to_string(), |f| f.to_string())
        }
        other => text_of(other),
    }
}

/// A value's text as JSON: a boolean, a number, or text.
fn typed(raw: &str) -> Value {
    match raw {
        "true" => return Value::Bool(true),
        "false" => return Value::Bool(false),
        _ => {}
    }
    let numeric = !raw.is_empty()
        && raw
            .chars()
            .all(|c| c.is_ascii_digit() || matches!(c, '.' | '-' | '+' | 'e' | 'E'))
        && raw.starts_with(|c: char| c.is_ascii_digit() || c == '-');
    if numeric {
        if let Ok(i) = raw.parse::<i64>() {
            return Value::from(i);
        }
        if let Ok(u) = raw.parse::<u64>() {
            return Value::from(u);
        }
        if let Some(n) = raw
            .parse::<f64>()
            .ok()
            .and_then(serde_json::Number::from_f64)
        {
            return Value::Number(n);
        }
    }
    Value::String(raw.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn map(v: Value) -> Map<String, Value> {
        v.as_object().cloned().unwrap()
    }

    #[test]
    fn output_flags_odd_and_unknown_names_are_refused() {
        for bad in ["json", "output", "quiet", "Op", "--op", "op-x", ""] {
            let e = from_options::<SimSpec>(&map(json!({ bad: "1" }))).unwrap_err();
            assert!(e.to_string().contains(bad), "{e}");
        }
        let e = from_options::<SimSpec>(&map(json!({"bogus_flag": 1}))).unwrap_err();
        assert_eq!(e.to_string(), "unexpected argument '--bogus-flag' found");
    }

    #[test]
    fn a_value_that_does_not_parse_names_its_flag() {
        let e = from_options::<SimSpec>(&map(json!({"op": "abc"}))).unwrap_err();
        assert_eq!(
            e.to_string(),
            "invalid value 'abc' for '--op <OP>': invalid float literal"
        );
        let e = from_options::<SimSpec>(&map(json!({"max_memory": [1]}))).unwrap_err();
        assert!(e.to_string().contains("'--max-memory <SIZE>'"), "{e}");
    }

    #[test]
    fn numbers_and_their_text_are_the_same_option() {
        let a: SimSpec =
            from_options(&map(json!({"op": "0.28", "seed": "3", "capacity": 65536}))).unwrap();
        let b: SimSpec =
            from_options(&map(json!({"op": 0.28, "seed": 3, "capacity": "65536"}))).unwrap();
        assert_eq!(a, b);
        assert_eq!(a.op, Some(0.28));
        assert_eq!(a.capacity.as_deref(), Some("65536"));
    }

    #[test]
    fn the_effective_config_holds_defaults_and_typed_values() {
        let c =
            effective_config::<SimSpec>(&map(json!({"op": 0.28, "capacity": "64MiB"}))).unwrap();
        assert_eq!(c["op"], json!(0.28));
        assert_eq!(c["capacity"], json!("64MiB"));
        assert_eq!(c["seed"], json!(1));
        assert_eq!(c["workload"], json!("uniform-write"));
        assert_eq!(c["payloads"], json!(false));
        assert!(!c.contains_key("quiet") && !c.contains_key("json"));
        assert!(!c.contains_key("ftl"), "no value and no default: left out");
    }

    /// The command line's defaults are the specs' `Default`s (a sweep's config hash and a
    /// Python run's defaults depend on it).
    #[cfg(feature = "clap")]
    #[test]
    fn every_spec_s_flag_defaults_are_its_default() {
        use clap::{Args, FromArgMatches};
        fn parsed<S: Args + FromArgMatches>(argv: &[&str]) -> S {
            let cmd = S::augment_args(clap::Command::new("t").no_binary_name(true));
            S::from_arg_matches(&cmd.get_matches_from(argv)).unwrap()
        }
        assert_eq!(parsed::<LifetimeSpec>(&[]), LifetimeSpec::default());
        assert_eq!(parsed::<BenchDeviceSpec>(&[]), BenchDeviceSpec::default());
        assert_eq!(
            parsed::<crate::harness::kv_bench::KvBenchSpec>(&[]),
            Default::default()
        );
        let trace = ["--trace", "t.txt", "--trace-format", "text"];
        let mut b = BufferSimSpec::default();
        b.trace.trace = Some("t.txt".into());
        b.trace.trace_format = Some("text".into());
        assert_eq!(parsed::<BufferSimSpec>(&trace), b);
    }

    #[test]
    fn typed_reads_numbers_booleans_and_text() {
        assert_eq!(typed("3"), json!(3));
        assert_eq!(typed("-2"), json!(-2));
        assert_eq!(typed("0.07"), json!(0.07));
        assert_eq!(typed("1e3"), json!(1000.0));
        assert_eq!(typed("true"), json!(true));
        for t in ["1x", "256MiB", "e5", "inf", "NaN", "full:2", "-", ""] {
            assert_eq!(typed(t), json!(t));
        }
    }
}
